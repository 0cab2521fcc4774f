/* Array kernels: pure data movement, so every dtype is handled by element size (strings are deep-copied),
 * through the strided copy engine of array_copy.c. Shapes and attrs were validated by the op layer. */
#include <string.h>

#include "core/size_check.h"
#include "core/variable.h"
#include "kernels/cpu/array_copy.h"
#include "ops/array_ops.h"

static int64_t int_at(const tfc_tensor *t, int64_t i) {
    switch (t->dtype) {
    case TFC_INT8: return ((const int8_t *)t->data)[i];
    case TFC_INT16: return ((const int16_t *)t->data)[i];
    case TFC_INT32: return ((const int32_t *)t->data)[i];
    case TFC_INT64: return ((const int64_t *)t->data)[i];
    default: return 0;
    }
}

static bool movable(const tfc_kernel_ctx *k, tfc_dtype dt, tfc_status *st) {
    return dt != TFC_RESOURCE && tfc_dtype_size(dt) ? true : tfc_kernel_unimplemented(k, dt, st);
}

/* An empty output needs no copy; its shape may be one whose strides and offsets overflow ([0, 2^62, 2^62]), so
 * the kernels below stop before computing them. */
static bool empty(const tfc_tensor *o) { return o && o->num_elements == 0; }

/* Output o becomes a view of `in` starting at element `off` when the block (dims walked with strides ss) is one
 * contiguous run of the input: no copy. Only when the view stays 64-byte aligned, as kernels may assume
 * aligned data. *done tells whether it happened. */
static bool try_share(tfc_kernel_ctx *k, int o, tfc_tensor *in, int64_t off, const int64_t *dims, const int64_t *ss,
                      int rank, bool *done, tfc_status *st) {
    *done = false;
    int64_t expect = 1, n = tfc_dims_product(dims, 0, rank);
    for (int i = rank - 1; i >= 0 && n > 0; i--) {
        if (dims[i] == 1) continue;
        if (ss[i] != expect) return true;
        expect *= dims[i]; /* size-ok: a suffix product of a non-empty block */
    }
    const char *p = (const char *)in->data + off * (int64_t)tfc_dtype_size(in->dtype);
    if (n == 0 || ((uintptr_t)p & 63u) != 0) return true;
    tfc_shape s = k->out[o]->shape;
    tfc_tensor *t = tfc_tensor_share(in, &s, st);
    if (!t) return false;
    t->num_elements = n;
    t->data = (void *)p;
    tfc_tensor_unref(k->out[o]);
    k->out[o] = t;
    *done = true;
    return true;
}

/* ---- forwarding and metadata ----------------------------------------------------------------------------- */
static bool forward(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0];
    tfc_shape s = k->out[0] ? k->out[0]->shape : x->shape;
    if (x->dtype == TFC_RESOURCE && x->resource) {
        /* A handle must hold its own reference to the resource (variables are the only resources). */
        if (x->resource_release != tfc_var_release) return tfc_kernel_unimplemented(k, x->dtype, st);
        tfc_tensor *h = tfc_tensor_resource(x->resource, tfc_var_acquire, tfc_var_release, st);
        if (!h) return false;
        h->shape = s;
        tfc_tensor_unref(k->out[0]);
        k->out[0] = h;
        return true;
    }
    return tfc_kernel_forward_input(k, 0, 0, &s, st);
}

static bool shape_k(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_shape *s = &k->in[0]->shape;
    tfc_tensor *o = k->out[0];
    for (int i = 0; i < s->rank; i++) {
        if (o->dtype == TFC_INT32) TFC_DATA(int32_t, o)[i] = (int32_t)s->dims[i];
        else TFC_DATA(int64_t, o)[i] = s->dims[i];
    }
    return true;
}

static bool size_k(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *o = k->out[0];
    if (o->dtype == TFC_INT32) *TFC_DATA(int32_t, o) = (int32_t)k->in[0]->num_elements;
    else *TFC_DATA(int64_t, o) = k->in[0]->num_elements;
    return true;
}

static bool rank_k(tfc_kernel_ctx *k, tfc_status *st) {
    *TFC_DATA(int32_t, k->out[0]) = k->in[0]->shape.rank;
    return true;
}

static bool invert_permutation(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    tfc_tensor *y = k->out[0];
    for (int64_t i = 0; i < x->num_elements; i++) {
        int64_t d = int_at(x, i);
        if (y->dtype == TFC_INT32) TFC_DATA(int32_t, y)[d] = (int32_t)i;
        else TFC_DATA(int64_t, y)[d] = i;
    }
    return true;
}

/* ---- filling ----------------------------------------------------------------------------------------------- */
static bool zeros_like(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *o = k->out[0];
    if (!movable(k, o->dtype, st)) return false;
    if (o->dtype != TFC_STRING) memset(o->data, 0, (size_t)o->num_elements * tfc_dtype_size(o->dtype));
    return true; /* strings were allocated empty */
}

static bool ones_like(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *o = k->out[0];
    unsigned char one[8];
    tfc_dtype_set_f64(o->dtype, one, 0, 1.0);
    return tfc_array_fill(k->pool, o->dtype, o->data, o->num_elements, one, st);
}

static bool fill(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *o = k->out[0];
    return movable(k, o->dtype, st) && tfc_array_fill(k->pool, o->dtype, o->data, o->num_elements, k->in[1]->data, st);
}

/* ---- BroadcastTo, Tile, Transpose -------------------------------------------------------------------------- */
static bool broadcast_to(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    if (!movable(k, x->dtype, st)) return false;
    if (tfc_shape_equal(&x->shape, &o->shape)) return forward(k, st);
    if (empty(o)) return true;
    int r = o->shape.rank, off = r - x->shape.rank;
    int64_t xs[TFC_MAX_RANK], ss[TFC_MAX_RANK], ds[TFC_MAX_RANK];
    tfc_array_strides(&x->shape, xs);
    tfc_array_strides(&o->shape, ds);
    for (int i = 0; i < r; i++) ss[i] = i < off || x->shape.dims[i - off] == 1 ? 0 : xs[i - off];
    return tfc_array_copy(k->pool, x->dtype, x->data, 0, ss, o->data, 0, ds, o->shape.dims, r, st);
}

static bool tile(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    if (!movable(k, x->dtype, st)) return false;
    if (empty(o)) return true;
    int r = x->shape.rank;
    int64_t xs[TFC_MAX_RANK], os[TFC_MAX_RANK];
    int64_t dims[TFC_COPY_MAX_RANK], ss[TFC_COPY_MAX_RANK], ds[TFC_COPY_MAX_RANK];
    tfc_array_strides(&x->shape, xs);
    tfc_array_strides(&o->shape, os);
    /* The output as [m0, d0, m1, d1, ...]: each multiple axis reads the input again (stride 0). */
    for (int i = 0; i < r; i++) {
        dims[2 * i] = int_at(k->in[1], i);
        dims[2 * i + 1] = x->shape.dims[i];
        ss[2 * i] = 0;
        ss[2 * i + 1] = xs[i];
        ds[2 * i] = x->shape.dims[i] * os[i]; /* size-ok: <= the (non-empty) output's count */
        ds[2 * i + 1] = os[i];
    }
    return tfc_array_copy(k->pool, x->dtype, x->data, 0, ss, o->data, 0, ds, dims, 2 * r, st);
}

static bool transpose(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    if (!movable(k, x->dtype, st)) return false;
    if (empty(o)) return true;
    int r = x->shape.rank;
    int64_t xs[TFC_MAX_RANK], ss[TFC_MAX_RANK], ds[TFC_MAX_RANK];
    bool ident = true;
    int64_t last = -1;
    tfc_array_strides(&x->shape, xs);
    tfc_array_strides(&o->shape, ds);
    for (int i = 0; i < r; i++) {
        int64_t p = int_at(k->in[1], i);
        if (p < 0) p += r;
        ss[i] = xs[p];
        if (x->shape.dims[p] == 1) continue;
        ident &= p > last;
        last = p;
    }
    if (ident) return forward(k, st); /* only unit dims move: the memory order is unchanged */
    return tfc_array_copy(k->pool, x->dtype, x->data, 0, ss, o->data, 0, ds, o->shape.dims, r, st);
}

/* ---- Slice, StridedSlice, StridedSliceGrad ---------------------------------------------------------------- */
static bool slice(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    if (!movable(k, x->dtype, st)) return false;
    if (empty(o) && !tfc_shape_equal(&x->shape, &o->shape)) return true;
    int r = x->shape.rank;
    int64_t xs[TFC_MAX_RANK], ds[TFC_MAX_RANK], off = 0;
    tfc_array_strides(&x->shape, xs);
    tfc_array_strides(&o->shape, ds);
    if (tfc_shape_equal(&x->shape, &o->shape)) return forward(k, st);
    for (int i = 0; i < r; i++) off += int_at(k->in[1], i) * xs[i];
    bool done;
    if (!try_share(k, 0, x, off, o->shape.dims, xs, r, &done, st)) return false;
    return done || tfc_array_copy(k->pool, x->dtype, x->data, off, xs, o->data, 0, ds, o->shape.dims, r, st);
}

/* Rebuilds the dense spec of a StridedSlice(Grad) whose index inputs start at `b`, for input shape `in`. */
static bool ss_spec(tfc_kernel_ctx *k, int b, const tfc_shape *in, tfc_strided_slice_spec *sp, tfc_status *st) {
    int64_t bb[32], ee[32], ss[32];
    int n = (int)k->in[b]->num_elements;
    for (int i = 0; i < n; i++) {
        bb[i] = int_at(k->in[b], i);
        ee[i] = int_at(k->in[b + 1], i);
        ss[i] = int_at(k->in[b + 2], i);
    }
    const tfc_attrs *a = k->attrs;
    return tfc_strided_slice_spec_make(k->op->name, in, bb, ee, ss, n, tfc_attrs_int(a, "begin_mask", 0),
                                       tfc_attrs_int(a, "end_mask", 0), tfc_attrs_int(a, "ellipsis_mask", 0),
                                       tfc_attrs_int(a, "new_axis_mask", 0), tfc_attrs_int(a, "shrink_axis_mask", 0),
                                       sp, st);
}

/* Source offset and strides of the block a dense spec selects from a tensor of shape `in`. */
static int64_t ss_block(const tfc_strided_slice_spec *sp, const tfc_shape *in, int64_t *strides) {
    int64_t xs[TFC_MAX_RANK], off = 0;
    tfc_array_strides(in, xs);
    for (int i = 0; i < sp->rank; i++) {
        strides[i] = xs[i] * sp->strides[i];
        if (sp->processing.dims[i] > 0) off += sp->begin[i] * xs[i];
    }
    return off;
}

static bool strided_slice(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    if (!movable(k, x->dtype, st)) return false;
    tfc_strided_slice_spec sp;
    if (!ss_spec(k, 1, &x->shape, &sp, st)) return false;
    if (sp.is_identity) return forward(k, st);
    if (empty(o)) return true;
    int64_t ss[TFC_MAX_RANK], ds[TFC_MAX_RANK];
    int64_t off = ss_block(&sp, &x->shape, ss);
    tfc_array_strides(&sp.processing, ds);
    bool done;
    if (!try_share(k, 0, x, off, sp.processing.dims, ss, sp.rank, &done, st)) return false;
    return done || tfc_array_copy(k->pool, x->dtype, x->data, off, ss, o->data, 0, ds, sp.processing.dims, sp.rank, st);
}

static bool strided_slice_grad(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *dy = k->in[4], *o = k->out[0];
    if (!movable(k, dy->dtype, st)) return false;
    tfc_strided_slice_spec sp;
    if (!ss_spec(k, 1, &o->shape, &sp, st)) return false;
    if (empty(o)) return true;
    if (o->dtype != TFC_STRING) memset(o->data, 0, (size_t)o->num_elements * tfc_dtype_size(o->dtype));
    int64_t ds[TFC_MAX_RANK], ss[TFC_MAX_RANK];
    int64_t off = ss_block(&sp, &o->shape, ds);
    tfc_array_strides(&sp.processing, ss);
    return tfc_array_copy(k->pool, dy->dtype, dy->data, 0, ss, o->data, off, ds, sp.processing.dims, sp.rank, st);
}

/* ---- Concat, Pack, Split, SplitV, Unpack -------------------------------------------------------------------
 * All view tensors as [pre, axis, post]: joining copies each part's [pre, c_i * post] block into the
 * output at column offset off_i; splitting is the reverse. */
typedef struct {
    tfc_tensor *const *parts; /* the n pieces (inputs when joining, outputs when splitting) */
    int n;
    tfc_tensor *whole;
    int64_t pre, row;        /* rows and row length (in elements) of the whole */
    int64_t cols[TFC_MAX_IO], offs[TFC_MAX_IO];
    bool join;
    size_t es;
} join_job;

static void join_rows(void *arg, int64_t begin, int64_t end) {
    const join_job *j = arg;
    char *w = j->whole->data;
    for (int64_t r = begin; r < end; r++)
        for (int i = 0; i < j->n; i++) {
            char *wp = w + (r * j->row + j->offs[i]) * (int64_t)j->es;
            char *pp = (char *)j->parts[i]->data + r * j->cols[i] * (int64_t)j->es;
            size_t bytes = (size_t)j->cols[i] * j->es;
            if (j->join) memcpy(wp, pp, bytes);
            else memcpy(pp, wp, bytes);
        }
}

static bool join_split(tfc_kernel_ctx *k, tfc_tensor *const *parts, int n, tfc_tensor *whole, int axis, bool join,
                       bool stacked, tfc_status *st) {
    join_job j = {.parts = parts, .n = n, .whole = whole, .pre = 1, .join = join, .es = tfc_dtype_size(whole->dtype)};
    if (!movable(k, whole->dtype, st)) return false;
    if (whole->num_elements == 0) return true;
    const tfc_shape *ws = &whole->shape;
    j.pre = tfc_dims_product(ws->dims, 0, axis);
    int64_t post = tfc_dims_product(ws->dims, axis + 1, ws->rank);
    j.row = tfc_dims_product(ws->dims, axis, ws->rank);
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        j.cols[i] = (stacked ? 1 : parts[i]->shape.dims[axis]) * post; /* size-ok: <= j.row */
        j.offs[i] = off;
        off += j.cols[i];
    }
    int threads = tfc_threadpool_size(k->pool);
    if (whole->dtype != TFC_STRING && j.pre >= 4 * threads) {
        tfc_parallel_for(k->pool, j.pre, j.row * (int64_t)j.es / 8 + 8, join_rows, &j);
        return true;
    }
    /* Few rows: one strided copy per part, each parallel over its own rows (or a no-copy view). */
    for (int i = 0; i < n; i++) {
        int64_t dims[2] = {j.pre, j.cols[i]}, ws_[2] = {j.row, 1}, ps[2] = {j.cols[i], 1};
        if (join) {
            if (!tfc_array_copy(k->pool, whole->dtype, parts[i]->data, 0, ps, whole->data, j.offs[i], ws_, dims, 2, st))
                return false;
        } else {
            bool done;
            if (!try_share(k, i, whole, j.offs[i], dims, ws_, 2, &done, st)) return false;
            if (!done && !tfc_array_copy(k->pool, whole->dtype, whole->data, j.offs[i], ws_, k->out[i]->data, 0, ps, dims,
                                         2, st))
                return false;
        }
    }
    return true;
}

static int64_t norm_axis(int64_t a, int rank) { return a < 0 ? a + rank : a; }

static bool concat_v2(tfc_kernel_ctx *k, tfc_status *st) {
    int n = k->n_in - 1;
    int axis = (int)norm_axis(int_at(k->in[n], 0), k->out[0]->shape.rank);
    return join_split(k, k->in, n, k->out[0], axis, true, false, st);
}

static bool pack(tfc_kernel_ctx *k, tfc_status *st) {
    int axis = (int)norm_axis(tfc_attrs_int(k->attrs, "axis", 0), k->out[0]->shape.rank);
    if (k->n_in == 1) return forward(k, st);
    return join_split(k, k->in, k->n_in, k->out[0], axis, true, true, st);
}

static bool split(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[1];
    int axis = (int)norm_axis(int_at(k->in[0], 0), x->shape.rank);
    if (k->n_out == 1) return tfc_kernel_forward_input(k, 1, 0, &x->shape, st);
    return join_split(k, k->out, k->n_out, x, axis, false, false, st);
}

static bool split_v(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0];
    int axis = (int)norm_axis(int_at(k->in[2], 0), x->shape.rank);
    if (k->n_out == 1) return tfc_kernel_forward_input(k, 0, 0, &x->shape, st);
    return join_split(k, k->out, k->n_out, x, axis, false, false, st);
}

static bool unpack(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0];
    if (k->n_out == 0) return true;
    int axis = (int)norm_axis(tfc_attrs_int(k->attrs, "axis", 0), x->shape.rank);
    return join_split(k, k->out, k->n_out, x, axis, false, true, st);
}

/* ---- Pad, PadV2, MirrorPad, MirrorPadGrad ------------------------------------------------------------------ */
static bool pad_common(tfc_kernel_ctx *k, const void *constant, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    if (!movable(k, x->dtype, st)) return false;
    if (empty(o) && !tfc_shape_equal(&x->shape, &o->shape)) return true;
    int r = x->shape.rank;
    int64_t xs[TFC_MAX_RANK], os[TFC_MAX_RANK], off = 0;
    tfc_array_strides(&x->shape, xs);
    tfc_array_strides(&o->shape, os);
    if (tfc_shape_equal(&x->shape, &o->shape)) return forward(k, st);
    for (int i = 0; i < r; i++) off += int_at(k->in[1], 2 * i) * os[i];
    /* Fill only the border, each dim's before/after slab once (inside the earlier dims' interior), so every
     * output element is written once. Pad's zero strings are already there. */
    static const unsigned char zero[sizeof(tfc_tstring)];
    if (constant || x->dtype != TFC_STRING) {
        const void *v = constant ? constant : zero;
        int64_t ss[TFC_MAX_RANK] = {0}, dims[TFC_MAX_RANK], base = 0;
        for (int d = 0; d < r; d++) {
            int64_t before = int_at(k->in[1], 2 * d), after = int_at(k->in[1], 2 * d + 1);
            for (int i = 0; i < r; i++) dims[i] = i < d ? x->shape.dims[i] : o->shape.dims[i];
            dims[d] = before;
            if (!tfc_array_copy(k->pool, x->dtype, v, 0, ss, o->data, base, os, dims, r, st)) return false;
            dims[d] = after;
            if (!tfc_array_copy(k->pool, x->dtype, v, 0, ss, o->data, base + (before + x->shape.dims[d]) * os[d], os, dims,
                                r, st))
                return false;
            base += before * os[d];
        }
    }
    return tfc_array_copy(k->pool, x->dtype, x->data, 0, xs, o->data, off, os, x->shape.dims, r, st);
}

static bool pad(tfc_kernel_ctx *k, tfc_status *st) { return pad_common(k, NULL, st); }
static bool pad_v2(tfc_kernel_ctx *k, tfc_status *st) { return pad_common(k, k->in[2]->data, st); }

/* Index of the source element that padded position o (in [0, d + before + after)) mirrors. */
static int64_t mirror_index(int64_t o, int64_t before, int64_t d, bool reflect) {
    int64_t i = o - before;
    if (i < 0) return reflect ? -i : -i - 1;
    if (i >= d) return reflect ? 2 * (d - 1) - i : 2 * d - 1 - i;
    return i;
}

typedef struct {
    int rank;
    int64_t big[TFC_MAX_RANK];   /* padded dims */
    int64_t small_strides[TFC_MAX_RANK];
    int64_t *map[TFC_MAX_RANK];  /* padded index -> unpadded index, per dim */
} mirror_plan;

static bool mirror_plan_make(mirror_plan *m, const tfc_shape *big, const tfc_shape *small, const tfc_tensor *pads,
                             bool reflect, int64_t *storage) {
    m->rank = big->rank;
    tfc_array_strides(small, m->small_strides);
    for (int i = 0; i < big->rank; i++) {
        m->big[i] = big->dims[i];
        m->map[i] = storage;
        for (int64_t o = 0; o < big->dims[i]; o++)
            storage[o] = mirror_index(o, int_at(pads, 2 * i), small->dims[i], reflect);
        storage += big->dims[i];
    }
    return true;
}

static int64_t *mirror_storage(const tfc_shape *big, tfc_status *st) {
    int64_t n = 1;
    for (int i = 0; i < big->rank; i++) n += big->dims[i];
    int64_t *p = tfc_malloc((size_t)n * sizeof(int64_t));
    if (!p) tfc_status_oom(st, "MirrorPad", (size_t)n * sizeof(int64_t));
    return p;
}

/* Source offset of padded row `row` (all dims but the last). */
static int64_t mirror_row_offset(const mirror_plan *m, int64_t row) {
    int64_t off = 0;
    for (int i = m->rank - 2; i >= 0; i--) {
        int64_t o = row % m->big[i];
        row /= m->big[i];
        off += m->map[i][o] * m->small_strides[i];
    }
    return off;
}

typedef struct {
    mirror_plan m;
    const char *src;
    char *dst;
    size_t es;
    int64_t before, inner; /* the last dim's leading padding and unpadded size */
} mirror_job;

/* Padded positions [lo, hi) of a row gather through the mirror map. */
#define GATHER_LOOP(T, lo, hi)                                                               \
    do {                                                                                     \
        const T *s = (const T *)src;                                                         \
        T *d = (T *)dst;                                                                     \
        for (int64_t x = (lo); x < (hi); x++) d[x] = s[map[x]];                              \
    } while (0)

static void gather(size_t es, const char *src, char *dst, const int64_t *map, int64_t lo, int64_t hi) {
    switch (es) {
    case 1: GATHER_LOOP(uint8_t, lo, hi); break;
    case 2: GATHER_LOOP(uint16_t, lo, hi); break;
    case 4: GATHER_LOOP(uint32_t, lo, hi); break;
    default: GATHER_LOOP(uint64_t, lo, hi); break;
    }
}

static void mirror_rows(void *arg, int64_t begin, int64_t end) {
    const mirror_job *j = arg;
    int last = j->m.rank - 1;
    int64_t n = j->m.big[last];
    const int64_t *map = j->m.map[last];
    for (int64_t r = begin; r < end; r++) {
        const char *src = j->src + mirror_row_offset(&j->m, r) * (int64_t)j->es;
        char *dst = j->dst + r * n * (int64_t)j->es;
        gather(j->es, src, dst, map, 0, j->before);
        memcpy(dst + j->before * (int64_t)j->es, src, (size_t)j->inner * j->es); /* the unpadded middle */
        gather(j->es, src, dst, map, j->before + j->inner, n);
    }
}

static bool mirror_pad(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    if (!movable(k, x->dtype, st)) return false;
    bool reflect = !strcmp(tfc_attrs_string(k->attrs, "mode", "REFLECT"), "REFLECT");
    if (tfc_shape_equal(&x->shape, &o->shape)) return forward(k, st);
    if (o->num_elements == 0) return true;
    int64_t *storage = mirror_storage(&o->shape, st);
    if (!storage) return false;
    int last = o->shape.rank - 1;
    mirror_job j = {.src = x->data, .dst = o->data, .es = tfc_dtype_size(x->dtype),
                    .before = int_at(k->in[1], 2 * last), .inner = x->shape.dims[last]};
    mirror_plan_make(&j.m, &o->shape, &x->shape, k->in[1], reflect, storage);
    int64_t n = o->shape.dims[o->shape.rank - 1], rows = o->num_elements / n;
    bool ok = true;
    if (x->dtype == TFC_STRING) {
        const tfc_tstring *s = x->data;
        tfc_tstring *d = o->data;
        const int64_t *map = j.m.map[o->shape.rank - 1];
        for (int64_t r = 0; r < rows && ok; r++) {
            int64_t so = mirror_row_offset(&j.m, r);
            for (int64_t c = 0; c < n && ok; c++) ok = tfc_tstring_assign(&d[r * n + c], &s[so + map[c]], st);
        }
    } else {
        tfc_parallel_for(k->pool, rows, n * 2 + 8, mirror_rows, &j);
    }
    tfc_free(storage);
    return ok;
}

/* MirrorPadGrad: every element of the padded gradient adds into the element it mirrors. */
#define MIRROR_ACC(T, ACC, LOAD, STORE)                                                     \
    do {                                                                                     \
        const T *g = (const T *)x->data;                                                     \
        T *out = (T *)o->data;                                                               \
        ACC *acc = tfc_calloc((size_t)(o->num_elements ? o->num_elements : 1), sizeof(ACC)); \
        if (!acc) {                                                                          \
            ok = tfc_status_oom(st, "MirrorPadGrad", (size_t)o->num_elements * sizeof(ACC)); \
            break;                                                                           \
        }                                                                                    \
        for (int64_t r = 0; r < rows; r++) {                                                 \
            int64_t so = mirror_row_offset(&m, r);                                           \
            const T *gr = g + r * n;                                                         \
            for (int64_t c = 0; c < n; c++) acc[so + map[c]] += LOAD(gr[c]);                 \
        }                                                                                    \
        for (int64_t i = 0; i < o->num_elements; i++) out[i] = STORE(acc[i]);                \
        tfc_free(acc);                                                                       \
    } while (0)

#define ID(v) (v)
#define U64(v) ((uint64_t)(v))
#define HALF_IN(v) tfc_half_to_float(v)
#define HALF_OUT(v) tfc_half_from_float(v)
#define BF_IN(v) tfc_bfloat16_to_float(v)
#define BF_OUT(v) tfc_bfloat16_from_float(v)

static bool mirror_pad_grad(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_tensor *x = k->in[0], *o = k->out[0];
    bool reflect = !strcmp(tfc_attrs_string(k->attrs, "mode", "REFLECT"), "REFLECT");
    if (x->dtype == TFC_BOOL || x->dtype == TFC_STRING || x->dtype == TFC_RESOURCE)
        return tfc_kernel_unimplemented(k, x->dtype, st);
    if (tfc_shape_equal(&x->shape, &o->shape)) return forward(k, st);
    if (x->num_elements == 0) {
        memset(o->data, 0, (size_t)o->num_elements * tfc_dtype_size(o->dtype));
        return true;
    }
    int64_t *storage = mirror_storage(&x->shape, st);
    if (!storage) return false;
    mirror_plan m;
    mirror_plan_make(&m, &x->shape, &o->shape, k->in[1], reflect, storage);
    int64_t n = x->shape.dims[x->shape.rank - 1], rows = x->num_elements / n;
    const int64_t *map = m.map[x->shape.rank - 1];
    bool ok = true;
    switch (x->dtype) {
    case TFC_FLOAT: MIRROR_ACC(float, float, ID, ID); break;
    case TFC_DOUBLE: MIRROR_ACC(double, double, ID, ID); break;
    case TFC_HALF: MIRROR_ACC(tfc_half, float, HALF_IN, HALF_OUT); break;
    case TFC_BFLOAT16: MIRROR_ACC(tfc_bfloat16, float, BF_IN, BF_OUT); break;
    /* integers wrap on overflow, as TensorFlow's: accumulate unsigned */
    case TFC_INT8: MIRROR_ACC(int8_t, uint64_t, U64, (int8_t)); break;
    case TFC_UINT8: MIRROR_ACC(uint8_t, uint64_t, U64, (uint8_t)); break;
    case TFC_INT16: MIRROR_ACC(int16_t, uint64_t, U64, (int16_t)); break;
    case TFC_INT32: MIRROR_ACC(int32_t, uint64_t, U64, (int32_t)); break;
    case TFC_INT64: MIRROR_ACC(int64_t, uint64_t, U64, (int64_t)); break;
    default: break;
    }
    tfc_free(storage);
    return ok;
}

const tfc_kernel_reg tfc_cpu_kernels_array[] = {
    {"Identity", forward}, {"StopGradient", forward}, {"Reshape", forward}, {"ExpandDims", forward},
    {"Squeeze", forward}, {"Shape", shape_k}, {"Size", size_k}, {"Rank", rank_k},
    {"InvertPermutation", invert_permutation}, {"ZerosLike", zeros_like}, {"OnesLike", ones_like}, {"Fill", fill},
    {"BroadcastTo", broadcast_to}, {"Tile", tile}, {"Transpose", transpose}, {"Slice", slice},
    {"StridedSlice", strided_slice}, {"StridedSliceGrad", strided_slice_grad}, {"ConcatV2", concat_v2},
    {"Pack", pack}, {"Split", split}, {"SplitV", split_v}, {"Unpack", unpack}, {"Pad", pad}, {"PadV2", pad_v2},
    {"MirrorPad", mirror_pad}, {"MirrorPadGrad", mirror_pad_grad}, {NULL, NULL},
};
