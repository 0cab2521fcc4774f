/* Refcounted tensors over refcounted buffers. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "core/tensor_internal.h"
#include "platform/free_lists.h"

static _Atomic uint64_t next_id = 1;
uint64_t tfc_tensor_next_id(void) { return atomic_fetch_add(&next_id, 1); }

static _Atomic int64_t live_tensors; /* for leak checks in tests */
int64_t tfc_tensor_live_count(void) { return atomic_load(&live_tensors); }

static _Atomic uint64_t next_buffer_uid = 1;
static _Atomic int64_t bytes_in_use, bytes_peak, n_allocs; /* owned data buffers: the host allocator's stats */
int64_t tfc_tensor_bytes_in_use(void) { return atomic_load(&bytes_in_use); }
int64_t tfc_tensor_bytes_peak(void) { return atomic_load(&bytes_peak); }
int64_t tfc_tensor_alloc_count(void) { return atomic_load(&n_allocs); }
void tfc_tensor_bytes_reset_peak(void) { atomic_store(&bytes_peak, atomic_load(&bytes_in_use)); }

static void bytes_add(int64_t n) {
    int64_t now = atomic_fetch_add_explicit(&bytes_in_use, n, memory_order_relaxed) + n;
    int64_t peak = atomic_load_explicit(&bytes_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak_explicit(&bytes_peak, &peak, now, memory_order_relaxed,
                                                                memory_order_relaxed)) {
    }
}

static void buffer_unref(tfc_buffer *b) {
    if (!b || atomic_fetch_sub(&b->refcount, 1) != 1) return;
    if (b->owned) atomic_fetch_sub_explicit(&bytes_in_use, (int64_t)b->size, memory_order_relaxed);
    if (b->strings) {
        tfc_tstring *s = b->data;
        for (int64_t i = 0; i < b->n_strings; i++) tfc_tstring_dealloc(&s[i]);
    }
    if (b->owned)
        tfc_aligned_free(b->data);
    else if (b->dealloc)
        b->dealloc(b->data, b->size, b->arg);
    tfc_fl_free(b, sizeof *b);
}

void tfc_buffer_ref(tfc_buffer *b) { atomic_fetch_add(&b->refcount, 1); }
void tfc_buffer_unref(tfc_buffer *b) { buffer_unref(b); }

static tfc_tensor *tensor_shell(tfc_dtype dt, const tfc_shape *shape, int64_t n, tfc_status *st) {
    tfc_tensor *t = tfc_fl_alloc(sizeof *t); /* headers and buffer records: free_lists.h */
    if (!t) {
        tfc_status_oom(st, "tensor", sizeof *t);
        return NULL;
    }
    atomic_init(&t->refcount, 1);
    atomic_fetch_add(&live_tensors, 1);
    t->dtype = dt;
    t->shape = *shape;
    t->num_elements = n;
    t->buf = NULL;
    t->data = NULL;
    t->id = tfc_tensor_next_id();
    t->resource = NULL;
    t->resource_release = NULL;
    t->node = NULL;
    t->node_output = 0;
    t->device = NULL;
    return t;
}

tfc_tensor *tfc_tensor_symbolic(tfc_dtype dt, const tfc_shape *shape, tfc_status *st) {
    int64_t n = 1; /* -1: unknown (an unknown dim, or known dims whose product overflows) */
    for (int i = 0; i < shape->rank && n >= 0; i++)
        if (!tfc_size_mul(n, shape->dims[i], &n)) n = -1;
    return tensor_shell(dt, shape, shape->rank < 0 ? -1 : n, st);
}

static bool check_bytes(tfc_dtype dt, const tfc_shape *shape, int64_t *n, size_t *bytes, tfc_status *st) {
    if (!tfc_dtype_is_valid(dt)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "invalid dtype %d", (int)dt);
    if (!tfc_shape_num_elements(shape, n, "tensor", st)) return false;
    int64_t b;
    if (!tfc_mul_overflow_i64(*n, (int64_t)tfc_dtype_size(dt), &b) || (uint64_t)b > (uint64_t)SIZE_MAX / 2) {
        char s[TFC_SHAPE_STR];
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tensor of shape %s and dtype %s is too large",
                              tfc_shape_str(shape, s, sizeof s), tfc_dtype_name(dt));
    }
    *bytes = (size_t)b;
    return true;
}

tfc_tensor *tfc_tensor_alloc(tfc_dtype dt, const tfc_shape *shape, tfc_status *st) {
    int64_t n;
    size_t bytes = 0;
    if (!check_bytes(dt, shape, &n, &bytes, st)) return NULL;
    tfc_tensor *t = tensor_shell(dt, shape, n, st);
    if (!t) return NULL;
    tfc_buffer *b = tfc_fl_alloc(sizeof *b);
    void *data = b ? tfc_aligned_alloc(bytes) : NULL;
    if (!data) {
        tfc_fl_free(b, sizeof *b);
        tfc_tensor_unref(t); /* a shell without buffer */
        tfc_status_oom(st, "tensor", bytes);
        return NULL;
    }
    atomic_init(&b->refcount, 1);
    b->data = data;
    b->size = bytes;
    b->dealloc = NULL;
    b->arg = NULL;
    b->owned = true;
    b->uid = atomic_fetch_add_explicit(&next_buffer_uid, 1, memory_order_relaxed);
    atomic_init(&b->version, 0);
    atomic_fetch_add_explicit(&n_allocs, 1, memory_order_relaxed);
    bytes_add((int64_t)bytes);
    b->strings = dt == TFC_STRING;
    b->n_strings = n;
    if (dt == TFC_STRING) memset(data, 0, bytes);
    t->buf = b;
    t->data = data;
    return t;
}

tfc_tensor *tfc_tensor_share(tfc_tensor *src, const tfc_shape *shape, tfc_status *st) {
    tfc_tensor *t = tensor_shell(src->dtype, shape, src->num_elements, st);
    if (!t) return NULL;
    if (src->buf) atomic_fetch_add(&src->buf->refcount, 1);
    t->buf = src->buf;
    t->data = src->data;
    t->device = src->device;
    return t;
}

tfc_tensor *tfc_tensor_resource(void *res, void (*acquire)(void *), void (*release)(void *), tfc_status *st) {
    tfc_shape s = {0};
    tfc_tensor *t = tfc_tensor_alloc(TFC_RESOURCE, &s, st);
    if (!t) return NULL;
    if (acquire) acquire(res);
    t->resource = res;
    t->resource_release = release;
    memcpy(t->data, &res, sizeof res);
    return t;
}

tfc_tensor *tfc_tensor_new(tfc_dtype dt, const int64_t *dims, int rank, tfc_status *st) {
    tfc_shape s;
    if (!tfc_shape_make(&s, dims, rank, st)) return NULL;
    for (int i = 0; i < rank; i++)
        if (s.dims[i] < 0) return (void *)(uintptr_t)tfc_status_set(st, TFC_INVALID_ARGUMENT, "tensor: negative dimension %lld", (long long)s.dims[i]);
    tfc_tensor *t = tfc_tensor_alloc(dt, &s, st);
    if (t) memset(t->data, 0, t->buf->size);
    return t;
}

tfc_tensor *tfc_tensor_from_data(tfc_dtype dt, const int64_t *dims, int rank, const void *data, size_t nbytes,
                                 tfc_status *st) {
    if (dt == TFC_STRING) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tensor_from_data: use tfc_tensor_from_strings for strings");
        return NULL;
    }
    tfc_tensor *t = tfc_tensor_new(dt, dims, rank, st);
    if (!t) return NULL;
    if (nbytes != t->buf->size) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tensor_from_data: %zu bytes given, %zu expected for %s %s", nbytes,
                       t->buf->size, tfc_dtype_name(dt), tfc_shape_str(&t->shape, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR));
        tfc_tensor_unref(t);
        return NULL;
    }
    if (nbytes) memcpy(t->data, data, nbytes);
    return t;
}

tfc_tensor *tfc_tensor_wrap(tfc_dtype dt, const int64_t *dims, int rank, void *data, size_t nbytes,
                            void (*dealloc)(void *, size_t, void *), void *arg, tfc_status *st) {
    tfc_shape s;
    int64_t n;
    size_t bytes = 0;
    if (!tfc_shape_make(&s, dims, rank, st) || !check_bytes(dt, &s, &n, &bytes, st)) return NULL;
    if (dt == TFC_STRING || bytes != nbytes) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "tensor_wrap: %zu bytes given, %zu expected", nbytes, bytes);
        return NULL;
    }
    tfc_tensor *t = tensor_shell(dt, &s, n, st);
    tfc_buffer *b = t ? tfc_fl_alloc(sizeof *b) : NULL;
    if (!b) {
        tfc_tensor_unref(t);
        tfc_status_oom(st, "tensor", sizeof *b);
        return NULL;
    }
    atomic_init(&b->refcount, 1);
    b->data = data;
    b->size = nbytes;
    b->dealloc = dealloc;
    b->arg = arg;
    b->owned = false;
    b->uid = atomic_fetch_add_explicit(&next_buffer_uid, 1, memory_order_relaxed);
    atomic_init(&b->version, 0);
    b->strings = false;
    b->n_strings = 0;
    t->buf = b;
    t->data = data;
    return t;
}

tfc_tensor *tfc_tensor_from_strings(const char *const *strs, const size_t *lens, const int64_t *dims, int rank,
                                    tfc_status *st) {
    tfc_tensor *t = tfc_tensor_new(TFC_STRING, dims, rank, st);
    if (!t) return NULL;
    tfc_tstring *s = t->data;
    for (int64_t i = 0; i < t->num_elements; i++) {
        size_t n = lens ? lens[i] : strlen(strs[i]);
        if (!tfc_tstring_copy(&s[i], strs[i], n, st)) {
            tfc_tensor_unref(t);
            return NULL;
        }
    }
    return t;
}

tfc_tensor *tfc_scalar(tfc_dtype dt, double v, tfc_status *st) {
    tfc_tensor *t = tfc_tensor_new(dt, NULL, 0, st);
    if (t) tfc_dtype_set_f64(dt, t->data, 0, v);
    return t;
}
tfc_tensor *tfc_scalar_f32(float v, tfc_status *st) { return tfc_scalar(TFC_FLOAT, v, st); }
tfc_tensor *tfc_scalar_f64(double v, tfc_status *st) { return tfc_scalar(TFC_DOUBLE, v, st); }
tfc_tensor *tfc_scalar_i32(int32_t v, tfc_status *st) { return tfc_scalar(TFC_INT32, v, st); }
tfc_tensor *tfc_scalar_bool(bool v, tfc_status *st) { return tfc_scalar(TFC_BOOL, v, st); }
tfc_tensor *tfc_scalar_i64(int64_t v, tfc_status *st) {
    tfc_tensor *t = tfc_tensor_new(TFC_INT64, NULL, 0, st);
    if (t) *(int64_t *)t->data = v;
    return t;
}
tfc_tensor *tfc_vec_i32(const int32_t *v, int64_t n, tfc_status *st) {
    return tfc_tensor_from_data(TFC_INT32, &n, 1, v, (size_t)n * 4, st);
}
tfc_tensor *tfc_vec_i64(const int64_t *v, int64_t n, tfc_status *st) {
    return tfc_tensor_from_data(TFC_INT64, &n, 1, v, (size_t)n * 8, st);
}
tfc_tensor *tfc_vec_f32(const float *v, int64_t n, tfc_status *st) {
    return tfc_tensor_from_data(TFC_FLOAT, &n, 1, v, (size_t)n * 4, st);
}

tfc_tensor *tfc_tensor_ref(tfc_tensor *t) {
    if (t) atomic_fetch_add(&t->refcount, 1);
    return t;
}

void tfc_tensor_unref(tfc_tensor *t) {
    if (!t || atomic_fetch_sub(&t->refcount, 1) != 1) return;
    if (t->resource_release) t->resource_release(t->resource);
    buffer_unref(t->buf);
    atomic_fetch_sub(&live_tensors, 1);
    tfc_fl_free(t, sizeof *t);
}

tfc_dtype tfc_tensor_dtype(const tfc_tensor *t) { return t->dtype; }
const tfc_shape *tfc_tensor_shape(const tfc_tensor *t) { return &t->shape; }
int tfc_tensor_rank(const tfc_tensor *t) { return t->shape.rank; }
int64_t tfc_tensor_dim(const tfc_tensor *t, int i) {
    if (i < 0) i += t->shape.rank;
    return i >= 0 && i < t->shape.rank ? t->shape.dims[i] : -1;
}
int64_t tfc_tensor_num_elements(const tfc_tensor *t) { return t->num_elements; }
size_t tfc_tensor_byte_size(const tfc_tensor *t) { return (size_t)t->num_elements * tfc_dtype_size(t->dtype); }
const void *tfc_tensor_data(const tfc_tensor *t) { return t->data; }
void *tfc_tensor_mutable_data(tfc_tensor *t) {
    if (!t->buf || atomic_load(&t->refcount) != 1 || atomic_load(&t->buf->refcount) != 1) return NULL;
    tfc_buffer_written(t->buf); /* the caller may write: values derived from the old contents are stale */
    return t->data;
}
bool tfc_tensor_is_symbolic(const tfc_tensor *t) { return t->buf == NULL || t->node != NULL; }

const char *tfc_tensor_string(const tfc_tensor *t, int64_t i, size_t *len) {
    if (t->dtype != TFC_STRING || !t->data || i < 0 || i >= t->num_elements) return NULL;
    const tfc_tstring *s = (const tfc_tstring *)t->data + i;
    if (len) *len = tfc_tstring_size(s);
    return tfc_tstring_data(s);
}

double tfc_tensor_get_f64(const tfc_tensor *t, int64_t i) {
    if (!t->data || i < 0 || i >= t->num_elements) return 0.0;
    return tfc_dtype_get_f64(t->dtype, t->data, i);
}

tfc_tensor *tfc_tensor_copy(const tfc_tensor *t, tfc_status *st) {
    tfc_tensor *c = tfc_tensor_alloc(t->dtype, &t->shape, st);
    if (!c) return NULL;
    if (t->dtype == TFC_STRING) {
        const tfc_tstring *s = t->data;
        tfc_tstring *d = c->data;
        for (int64_t i = 0; i < t->num_elements; i++)
            if (!tfc_tstring_copy(&d[i], tfc_tstring_data(&s[i]), tfc_tstring_size(&s[i]), st)) {
                tfc_tensor_unref(c);
                return NULL;
            }
    } else if (t->data) {
        memcpy(c->data, t->data, tfc_tensor_byte_size(t));
    }
    return c;
}

tfc_tensor *tfc_tensor_reshaped(tfc_tensor *t, const int64_t *dims, int rank, tfc_status *st) {
    tfc_shape s;
    int64_t n;
    if (!tfc_shape_make(&s, dims, rank, st) || !tfc_shape_num_elements(&s, &n, "reshape", st)) return NULL;
    if (n != t->num_elements) {
        char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "reshape: cannot reshape %s (%lld elements) to %s",
                       tfc_shape_str(&t->shape, a, sizeof a), (long long)t->num_elements, tfc_shape_str(&s, b, sizeof b));
        return NULL;
    }
    return tfc_tensor_share(t, &s, st);
}

/* Python's rendering of a TensorShape: (), (3,), (2, None). */
static void shape_tuple(const tfc_shape *s, char *buf, size_t size) {
    size_t k = 0;
    if (s->rank < 0) {
        snprintf(buf, size, "<unknown>");
        return;
    }
    k += (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < s->rank && k < size; i++) {
        if (s->dims[i] < 0) k += (size_t)snprintf(buf + k, size - k, "%sNone", i ? ", " : "");
        else k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    }
    if (k < size) snprintf(buf + k, size - k, "%s)", s->rank == 1 ? "," : "");
}

/* TensorFlow's repr on one line: scalars bare, nested brackets per dimension, elided past max_elements. */
char *tfc_tensor_str(const tfc_tensor *t, char *buf, size_t size, int64_t max_elements) {
    size_t k = 0;
    char s[TFC_SHAPE_STR];
    int r = t->shape.rank;
    int64_t blk[TFC_MAX_RANK + 1]; /* blk[d]: elements in one block of dimension d */
#define PUT(...) do { if (k < size) k += (size_t)snprintf(buf + k, size - k, __VA_ARGS__); } while (0)
    PUT("tf.Tensor(");
    if (!t->data) {
        PUT("<symbolic>");
    } else if (t->num_elements == 0) {
        PUT("[]");
    } else {
        blk[r > 0 ? r : 0] = 1;
        for (int d = r - 1; d >= 0; d--) blk[d] = blk[d + 1] * t->shape.dims[d]; /* size-ok: a non-empty tensor */
        for (int64_t i = 0; i < t->num_elements; i++) {
            int opens = r;
            if (i > 0) {
                opens = 0;
                for (int d = 1; d < r; d++) opens += i % blk[d] == 0;
                for (int d = 0; d < opens; d++) PUT("]");
                PUT(" ");
            }
            for (int d = 0; d < opens; d++) PUT("[");
            if (i >= max_elements) {
                PUT("...");
                break;
            }
            if (t->dtype == TFC_STRING) {
                size_t n;
                const char *p = tfc_tensor_string(t, i, &n);
                PUT("b'%.*s'", (int)n, p);
            } else if (t->dtype == TFC_BOOL) {
                PUT("%s", ((const uint8_t *)t->data)[i] ? "True" : "False");
            } else if (tfc_dtype_is_floating(t->dtype)) {
                PUT("%g", tfc_tensor_get_f64(t, i));
            } else if (t->dtype == TFC_RESOURCE) {
                PUT("<resource>");
            } else if (t->dtype == TFC_INT64) {
                PUT("%" PRId64, ((const int64_t *)t->data)[i]); /* exact beyond 2^53 */
            } else {
                PUT("%" PRId64, (int64_t)tfc_tensor_get_f64(t, i));
            }
        }
        for (int d = 0; d < r; d++) PUT("]");
    }
    shape_tuple(&t->shape, s, sizeof s);
    PUT(", shape=%s, dtype=%s)", s, tfc_dtype_name(t->dtype));
#undef PUT
    if (size) buf[size - 1 < k ? size - 1 : k] = 0;
    return buf;
}
