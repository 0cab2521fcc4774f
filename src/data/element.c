/* Element helpers: slicing, stacking and padding components, calling user functions in private eager
 * contexts, element (de)serialisation for cache files, clocks and seeds. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data/data_internal.h"
#include "eager/context_internal.h"

void data_unref_n(tfc_tensor **t, int n) {
    for (int i = 0; i < n; i++) {
        tfc_tensor_unref(t[i]);
        t[i] = NULL;
    }
}

void data_ref_n(tfc_tensor *const *src, tfc_tensor **dst, int n) {
    for (int i = 0; i < n; i++) dst[i] = tfc_tensor_ref(src[i]);
}

bool data_copy_elems(tfc_dtype dt, void *dst, int64_t di, const void *src, int64_t si, int64_t count, tfc_status *st) {
    if (count <= 0) return true;
    if (dt != TFC_STRING) {
        size_t es = tfc_dtype_size(dt);
        memcpy((char *)dst + (size_t)di * es, (const char *)src + (size_t)si * es, (size_t)count * es);
        return true;
    }
    /* Owned copies: a VIEW would point into a tensor the consumer may release first. */
    tfc_tstring *d = (tfc_tstring *)dst + di;
    const tfc_tstring *s = (const tfc_tstring *)src + si;
    for (int64_t i = 0; i < count; i++)
        if (!tfc_tstring_copy(&d[i], tfc_tstring_data(&s[i]), tfc_tstring_size(&s[i]), st)) return false;
    return true;
}

tfc_tensor *data_slice_row(const tfc_tensor *t, int64_t i, tfc_status *st) {
    tfc_shape s = t->shape;
    int64_t row = s.dims[0] ? t->num_elements / s.dims[0] : 0;
    for (int d = 1; d < s.rank; d++) s.dims[d - 1] = s.dims[d];
    s.rank--;
    tfc_tensor *r = tfc_tensor_alloc(t->dtype, &s, st);
    if (!r) return NULL;
    if (!data_copy_elems(t->dtype, r->data, 0, t->data, i * row, row, st)) {
        tfc_tensor_unref(r);
        return NULL;
    }
    return r;
}

static bool same_shape(const tfc_shape *a, const tfc_shape *b) {
    if (a->rank != b->rank) return false;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) return false;
    return true;
}

tfc_tensor *data_stack(tfc_tensor *const *elems, int64_t n, int stride, int c, tfc_status *st) {
    const tfc_tensor *first = elems[c];
    for (int64_t k = 1; k < n; k++) {
        const tfc_tensor *e = elems[k * stride + c];
        if (e->dtype != first->dtype) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "Cannot batch tensors with different dtypes in component %d. First element had dtype %s "
                           "and element %lld had dtype %s.",
                           c, tfc_dtype_name(first->dtype), (long long)k, tfc_dtype_name(e->dtype));
            return NULL;
        }
        if (!same_shape(&e->shape, &first->shape)) {
            char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "Cannot batch tensors with different shapes in component %d. First element had shape %s "
                           "and element %lld had shape %s.",
                           c, tfc_shape_str(&first->shape, a, sizeof a), (long long)k,
                           tfc_shape_str(&e->shape, b, sizeof b));
            return NULL;
        }
    }
    if (first->shape.rank >= TFC_MAX_RANK) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "batch: component %d has rank %d; batching needs rank < %d", c,
                       first->shape.rank, TFC_MAX_RANK);
        return NULL;
    }
    tfc_shape s;
    s.rank = first->shape.rank + 1;
    s.dims[0] = n;
    for (int d = 0; d < first->shape.rank; d++) s.dims[d + 1] = first->shape.dims[d];
    int64_t total;
    if (!tfc_shape_num_elements(&s, &total, "batch", st)) return NULL;
    tfc_tensor *out = tfc_tensor_alloc(first->dtype, &s, st);
    if (!out) return NULL;
    int64_t row = first->num_elements;
    for (int64_t k = 0; k < n; k++)
        if (!data_copy_elems(first->dtype, out->data, k * row, elems[k * stride + c]->data, 0, row, st)) {
            tfc_tensor_unref(out);
            return NULL;
        }
    return out;
}

/* Fills count elements at dst with the scalar value (NULL: zeros / empty strings, already there for strings). */
static bool fill_value(tfc_dtype dt, void *dst, int64_t count, const tfc_tensor *value, tfc_status *st) {
    if (dt == TFC_STRING) {
        if (!value) return true;
        const tfc_tstring *v = value->data;
        for (int64_t i = 0; i < count; i++)
            if (!tfc_tstring_copy((tfc_tstring *)dst + i, tfc_tstring_data(v), tfc_tstring_size(v), st)) return false;
        return true;
    }
    size_t es = tfc_dtype_size(dt);
    bool zero = true;
    if (value)
        for (size_t b = 0; b < es; b++) zero = zero && ((const uint8_t *)value->data)[b] == 0;
    if (zero) {
        memset(dst, 0, (size_t)count * es);
        return true;
    }
    for (int64_t i = 0; i < count; i++) memcpy((char *)dst + (size_t)i * es, value->data, es);
    return true;
}

tfc_tensor *data_pad_stack(tfc_tensor *const *elems, int64_t n, int stride, int c, const tfc_shape *pad,
                           const tfc_tensor *value, tfc_status *st) {
    const tfc_tensor *first = elems[c];
    int rank = first->shape.rank;
    if (pad && pad->rank >= 0 && pad->rank != rank) {
        char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "padded_batch: The padded shape %s is not compatible with the shape %s of component %d",
                       tfc_shape_str(pad, a, sizeof a), tfc_shape_str(&first->shape, b, sizeof b), c);
        return NULL;
    }
    tfc_shape ps; /* padded element shape */
    ps.rank = rank;
    for (int d = 0; d < rank; d++) ps.dims[d] = pad && pad->rank >= 0 ? pad->dims[d] : -1;
    for (int64_t k = 0; k < n; k++) {
        const tfc_tensor *e = elems[k * stride + c];
        if (e->dtype != first->dtype || e->shape.rank != rank) {
            char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "padded_batch: component %d: element %lld is %s %s but element 0 is %s %s", c, (long long)k,
                           tfc_dtype_name(e->dtype), tfc_shape_str(&e->shape, a, sizeof a),
                           tfc_dtype_name(first->dtype), tfc_shape_str(&first->shape, b, sizeof b));
            return NULL;
        }
    }
    for (int d = 0; d < rank; d++) {
        bool fixed = pad && pad->rank >= 0 && pad->dims[d] >= 0;
        int64_t m = fixed ? pad->dims[d] : 0;
        for (int64_t k = 0; k < n; k++) {
            int64_t ed = elems[k * stride + c]->shape.dims[d];
            if (fixed && ed > m) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "Attempted to pad to a smaller size than the input element. (component %d, dim %d: "
                               "element size %lld, padded size %lld)",
                               c, d, (long long)ed, (long long)m);
                return NULL;
            }
            if (!fixed && ed > m) m = ed;
        }
        ps.dims[d] = m;
    }
    if (rank >= TFC_MAX_RANK) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "padded_batch: component %d has rank %d; batching needs rank < %d",
                       c, rank, TFC_MAX_RANK);
        return NULL;
    }
    tfc_shape os;
    os.rank = rank + 1;
    os.dims[0] = n;
    for (int d = 0; d < rank; d++) os.dims[d + 1] = ps.dims[d];
    int64_t total, per;
    if (!tfc_shape_num_elements(&os, &total, "padded_batch", st)) return NULL;
    /* the padded shape is the output's size, as TensorFlow's: too large a one is this batch's error, naming it */
    tfc_tensor *out = tfc_tensor_alloc(first->dtype, &os, st);
    if (!out) {
        char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
        if (st->code == TFC_RESOURCE_EXHAUSTED)
            tfc_status_set(st, TFC_RESOURCE_EXHAUSTED,
                           "padded_batch: OOM when allocating the batch of %lld elements of component %d padded to "
                           "%s: a %s tensor of shape %s",
                           (long long)n, c, pad && pad->rank >= 0 ? tfc_shape_str(pad, a, sizeof a) : "the longest",
                           tfc_dtype_name(first->dtype), tfc_shape_str(&os, b, sizeof b));
        return NULL;
    }
    if (!fill_value(first->dtype, out->data, total, value, st)) goto fail;
    per = n ? total / n : 0;
    for (int64_t k = 0; k < n; k++) {
        const tfc_tensor *e = elems[k * stride + c];
        if (e->num_elements == 0) continue;
        if (rank == 0) {
            if (!data_copy_elems(e->dtype, out->data, k * per, e->data, 0, 1, st)) goto fail;
            continue;
        }
        /* Copy runs along the last dim; idx walks the element's outer dims. */
        int64_t run = e->shape.dims[rank - 1], runs = e->num_elements / run;
        int64_t idx[TFC_MAX_RANK] = {0};
        for (int64_t r = 0; r < runs; r++) {
            int64_t off = 0;
            /* size-ok (both): an offset inside the padded batch, which exists (its size was checked) */
            for (int d = 0; d < rank - 1; d++) off = off * ps.dims[d] + idx[d]; /* size-ok: see above */
            off *= ps.dims[rank - 1];                                           /* size-ok: see above */
            if (!data_copy_elems(e->dtype, out->data, k * per + off, e->data, r * run, run, st)) goto fail;
            for (int d = rank - 2; d >= 0; d--) {
                if (++idx[d] < e->shape.dims[d]) break;
                idx[d] = 0;
            }
        }
    }
    return out;
fail:
    tfc_tensor_unref(out);
    return NULL;
}

/* ---- user functions ------------------------------------------------------------------------------------------
 * Each iterator (and each worker thread) runs callbacks on a context of its own: contexts are single-threaded and
 * a user's tape or scopes must not see pipeline ops. Contexts start with no thread pool of their own; sequential
 * stages borrow one process-wide pool (thread pools serialise concurrent parallel_for calls, so sharing is safe). */
static pthread_once_t pool_once = PTHREAD_ONCE_INIT;
static tfc_threadpool *shared_pool;

static void make_shared_pool(void) { shared_pool = tfc_threadpool_new(0); }

tfc_ctx *data_ctx_new(const data_ictx *ictx, bool pooled, tfc_status *st) {
    tfc_ctx_opts o = {.intra_op_threads = 1};
    tfc_ctx *ctx = tfc_ctx_new(&o, st);
    if (!ctx) return NULL;
    if (pooled && (!ictx || ictx->opts.max_intra_op_parallelism != 1)) {
        pthread_once(&pool_once, make_shared_pool);
        if (shared_pool) {
            tfc_threadpool_free(ctx->pool);
            ctx->pool = shared_pool;
        }
    }
    return ctx;
}

void data_ctx_free(tfc_ctx *ctx) {
    if (!ctx) return;
    if (ctx->pool == shared_pool) ctx->pool = NULL; /* not ours to free */
    tfc_ctx_free(ctx);
}

void data_fix_callback_status(tfc_status *st, const char *what) {
    if (st->code == TFC_OK) {
        tfc_status_set(st, TFC_UNKNOWN, "%s: the function failed without setting a status", what);
    } else if (st->code == TFC_OUT_OF_RANGE) {
        char msg[sizeof st->msg];
        memcpy(msg, st->msg, sizeof msg);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Function invocation produced OutOfRangeError: %s", msg);
    }
}

bool data_call_map(tfc_ctx *ctx, tfc_data_map_fn fn, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                   const data_spec *out_spec, const char *what, tfc_status *st) {
    int n_out = out_spec->n;
    for (int i = 0; i < n_out; i++) out[i] = NULL;
    if (!tfc_scope_begin(ctx, st)) return false;
    tfc_status_clear(st);
    bool ok = fn(ctx, user, in, n_in, out, n_out, st);
    for (int i = 0; i < n_out; i++) tfc_keep(ctx, out[i]);
    tfc_scope_end(ctx);
    if (!ok) {
        data_fix_callback_status(st, what);
        data_unref_n(out, n_out);
        return false;
    }
    tfc_status_clear(st);
    for (int i = 0; i < n_out; i++)
        if (!out[i]) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the function set no tensor for output %d of %d", what, i,
                           n_out);
            data_unref_n(out, n_out);
            return false;
        }
    if (!data_spec_check(out_spec, out, what, st)) {
        data_unref_n(out, n_out);
        return false;
    }
    return true;
}

bool data_call_predicate(tfc_ctx *ctx, tfc_data_predicate_fn fn, void *user, tfc_tensor *const *in, int n_in,
                         bool *keep, tfc_status *st) {
    if (!tfc_scope_begin(ctx, st)) return false;
    tfc_status_clear(st);
    *keep = false;
    bool ok = fn(ctx, user, in, n_in, keep, st);
    tfc_scope_end(ctx);
    if (!ok) data_fix_callback_status(st, "filter");
    else tfc_status_clear(st);
    return ok;
}

tfc_dataset *data_call_dataset_fn(tfc_ctx *ctx, tfc_data_dataset_fn fn, void *user, tfc_tensor *const *in, int n_in,
                                  const data_spec *out_spec, const char *what, tfc_status *st) {
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tfc_status_clear(st);
    tfc_dataset *ds = fn(ctx, user, in, n_in, st);
    tfc_scope_end(ctx);
    if (!ds) {
        data_fix_callback_status(st, what);
        return NULL;
    }
    tfc_status_clear(st);
    if (strcmp(ds->spec.structure, out_spec->structure) != 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "%s: the function returned a dataset of elements \"%s\", expected \"%s\" (output_structure)",
                       what, ds->spec.structure, out_spec->structure);
        tfc_dataset_unref(ds);
        return NULL;
    }
    return ds;
}

/* ---- element serialisation -------------------------------------------------------------------------------------
 * Per component: dtype (u8), rank (u8), dims (i64 LE each), then the data: numbers as raw little-endian bytes;
 * strings as (u64 length, bytes) each. The whole element is one TFRecord, so its CRC guards it. */
bool data_bytes_put(data_bytes *b, const void *src, size_t n, tfc_status *st) {
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *p = tfc_realloc(b->p, cap);
        if (!p) return tfc_status_oom(st, "element buffer", cap);
        b->p = p;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->len, src, n);
    b->len += n;
    return true;
}

bool data_encode_element(data_bytes *b, tfc_tensor *const *t, int n, tfc_status *st) {
    for (int i = 0; i < n; i++) {
        uint8_t h[2] = {(uint8_t)t[i]->dtype, (uint8_t)t[i]->shape.rank};
        if (!data_bytes_put(b, h, 2, st)) return false;
        for (int d = 0; d < t[i]->shape.rank; d++)
            if (!data_bytes_put(b, &t[i]->shape.dims[d], 8, st)) return false;
        if (t[i]->dtype == TFC_STRING) {
            const tfc_tstring *s = t[i]->data;
            for (int64_t k = 0; k < t[i]->num_elements; k++) {
                uint64_t len = tfc_tstring_size(&s[k]);
                if (!data_bytes_put(b, &len, 8, st) || !data_bytes_put(b, tfc_tstring_data(&s[k]), len, st))
                    return false;
            }
        } else if (!data_bytes_put(b, t[i]->data, tfc_tensor_byte_size(t[i]), st)) {
            return false;
        }
    }
    return true;
}

bool data_decode_element(const uint8_t *p, size_t len, tfc_tensor **t, int n, const char *what, tfc_status *st) {
    size_t off = 0;
    for (int i = 0; i < n; i++) t[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (off + 2 > len) goto corrupt;
        tfc_dtype dt = p[off];
        int rank = p[off + 1];
        off += 2;
        if (!tfc_dtype_is_valid(dt) || dt == TFC_RESOURCE || rank > TFC_MAX_RANK || off + (size_t)rank * 8 > len)
            goto corrupt;
        tfc_shape s = {rank, {0}};
        memcpy(s.dims, p + off, (size_t)rank * 8);
        off += (size_t)rank * 8;
        int64_t ne;
        tfc_status tmp = TFC_STATUS_INIT;
        for (int d = 0; d < rank; d++)
            if (s.dims[d] < 0) goto corrupt;
        if (!tfc_shape_num_elements(&s, &ne, what, &tmp)) goto corrupt;
        if (dt != TFC_STRING && (uint64_t)ne * tfc_dtype_size(dt) > len - off) goto corrupt;
        if (dt == TFC_STRING && (uint64_t)ne > (len - off) / 8) goto corrupt;
        t[i] = tfc_tensor_alloc(dt, &s, st);
        if (!t[i]) goto fail;
        if (dt == TFC_STRING) {
            tfc_tstring *ss = t[i]->data;
            for (int64_t k = 0; k < ne; k++) {
                uint64_t l;
                if (off + 8 > len) goto corrupt;
                memcpy(&l, p + off, 8);
                off += 8;
                if (l > len - off) goto corrupt;
                if (!tfc_tstring_copy(&ss[k], (const char *)p + off, (size_t)l, st)) goto fail;
                off += (size_t)l;
            }
        } else {
            size_t nb = tfc_tensor_byte_size(t[i]);
            memcpy(t[i]->data, p + off, nb);
            off += nb;
        }
    }
    if (off == len) return true;
corrupt:
    tfc_status_set(st, TFC_DATA_LOSS, "%s: corrupt element encoding", what);
fail:
    data_unref_n(t, n);
    return false;
}

/* ---- clocks and seeds ---------------------------------------------------------------------------------------- */
double data_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int64_t data_random_seed(void) {
    static _Atomic uint64_t counter;
    uint64_t v = 0;
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (read(fd, &v, sizeof v) != (ssize_t)sizeof v) v = 0;
        close(fd);
    }
    if (!v) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        v = ((uint64_t)ts.tv_sec * 1000000007ull) ^ (uint64_t)ts.tv_nsec ^ (atomic_fetch_add(&counter, 1) << 40);
    }
    return (int64_t)(v & 0x7fffffffffffffffull);
}
