/* Indexing ops: gather/scatter (tensorflow/core/ops/array_ops.cc), UnsortedSegmentSum, Range, Cumsum
 * (math_ops.cc), OneHot, Where, ReverseV2 (array_ops.cc), TopKV2 (nn_ops.cc).
 *
 * Shape functions validate everything that does not need a full scan of index data; out-of-range indices
 * are found by the kernels (they read every index anyway), with TensorFlow's CPU messages.
 *
 * Gradients mirror tensorflow/python/ops/array_grad.py, math_grad.py and nn_grad.py. TensorFlow's GatherV2
 * gradient is an IndexedSlices; tfc has none, so it is made dense with UnsortedSegmentSum: the segment id of
 * each gathered slice is its flat row in params viewed as [batch * outer * gather_dim, inner], which replaces
 * TensorFlow's transposes around the axis by one broadcast add of row offsets. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "core/tensor_internal.h"
#include "ops/op_util.h"

#define T_INDEX "{int16, int32, int64}"
#define T_NUMERIC "{float, double, int32, uint8, int16, int8, int64, bfloat16, half}"

/* ---- small helpers ------------------------------------------------------------------------------------ */

/* The value of input i when known (eager, or a graph constant), else NULL. */
static const tfc_tensor *in_value(const tfc_shape_ctx *c, int i) {
    const tfc_tensor *t = c->in_values ? c->in_values[i] : NULL;
    return t && t->data ? t : NULL;
}

static int64_t int_at(const tfc_tensor *t, int64_t i) {
    switch (t->dtype) {
    case TFC_INT8: return ((const int8_t *)t->data)[i];
    case TFC_UINT8: return ((const uint8_t *)t->data)[i];
    case TFC_INT16: return ((const int16_t *)t->data)[i];
    case TFC_INT32: return ((const int32_t *)t->data)[i];
    case TFC_INT64: return ((const int64_t *)t->data)[i];
    default: return (int64_t)tfc_dtype_get_f64(t->dtype, t->data, i);
    }
}

static int64_t prod(const int64_t *d, int lo, int hi) { return tfc_dims_product(d, lo, hi); }

/* Checked product of dims[lo, hi); false on overflow. */
static bool prod_checked(const int64_t *d, int lo, int hi, int64_t *out) {
    int64_t p = 1;
    for (int i = lo; i < hi; i++)
        if (d[i] < 0 || !tfc_mul_overflow_i64(p, d[i], &p)) return false;
    *out = p;
    return true;
}

static bool check_out_rank(tfc_shape_ctx *c, int rank, tfc_status *st) {
    if (rank > TFC_MAX_RANK) return TFC_OP_ERR(c, st, "output rank %d exceeds the maximum rank %d", rank, TFC_MAX_RANK);
    return true;
}

/* "[1,3]" style text of index position `flat` within a shape of rank r (TensorFlow prints indices[i,j]). */
static void pos_str(const int64_t *dims, int rank, int64_t flat, char *buf, size_t size) {
    int64_t idx[TFC_MAX_RANK];
    for (int i = rank - 1; i >= 0; i--) {
        idx[i] = dims[i] ? flat % dims[i] : 0;
        flat = dims[i] ? flat / dims[i] : 0;
    }
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < rank && k < size; i++)
        k += (size_t)snprintf(buf + k, size - k, "%s%lld", i ? "," : "", (long long)idx[i]);
}

/* ---- emitting helpers for gradients -------------------------------------------------------------------- */

static tfc_tensor *emit_reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    tfc_shape s;
    if (!tfc_shape_make(&s, dims, rank, st)) return NULL;
    if (tfc_shape_equal(&s, &x->shape)) return x;
    tfc_tensor *shape = tfc_vec_i64(dims, rank, st);
    if (!shape) return NULL;
    tfc_tensor *r = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, shape}, 2, NULL, 0, st);
    tfc_tensor_unref(shape);
    return r;
}

/* Range(start, limit, delta) in dtype dt (an integer dtype). */
static tfc_tensor *emit_range(tfc_ctx *ctx, tfc_dtype dt, int64_t start, int64_t limit, int64_t delta, tfc_status *st) {
    tfc_tensor *a = tfc_scalar(dt, (double)start, st);
    tfc_tensor *b = a ? tfc_scalar(dt, (double)limit, st) : NULL;
    tfc_tensor *d = b ? tfc_scalar(dt, (double)delta, st) : NULL;
    tfc_tensor *r = d ? tfc_emit(ctx, "Range", (tfc_tensor *[]){a, b, d}, 3, NULL, 0, st) : NULL;
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    tfc_tensor_unref(d);
    return r;
}

static tfc_tensor *emit_cast(tfc_ctx *ctx, tfc_tensor *x, tfc_dtype dt, tfc_status *st) {
    if (x->dtype == dt) return x;
    tfc_attr a = TFC_ATTR_T("DstT", dt);
    return tfc_emit(ctx, "Cast", &x, 1, &a, 1, st);
}

static int64_t index_dtype_max(tfc_dtype dt) {
    return dt == TFC_INT16 ? INT16_MAX : dt == TFC_INT32 ? INT32_MAX : INT64_MAX;
}

static tfc_tensor *emit_zeros_like(tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    return tfc_emit(ctx, "ZerosLike", &x, 1, NULL, 0, st);
}

/* ================================================================================================
 * GatherV2
 * ================================================================================================ */

typedef struct gather_geom {
    int axis, batch_dims;
} gather_geom;

/* Validates GatherV2 and resolves axis (needs its value) and batch_dims. Returns false with st set, or true
 * with *known = false when the axis value is not available (graph placeholders). */
static bool gather_resolve(tfc_shape_ctx *c, gather_geom *g, bool *known, tfc_status *st) {
    const tfc_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1], *ax = &c->in_shapes[2];
    *known = false;
    if (p->rank == 0) return TFC_OP_ERR(c, st, "params must be at least 1 dimensional (params shape %s)", SHP(p));
    if (ax->rank > 0) return TFC_OP_ERR(c, st, "axis must be scalar, got shape %s", SHP(ax));
    if (p->rank < 0 || ix->rank < 0) return true;
    int64_t bd = tfc_attrs_int(c->attrs, "batch_dims", 0);
    if (bd < -ix->rank || bd > ix->rank)
        return TFC_OP_ERR(c, st, "Expected batch_dims in the range [%d, %d], but got %lld", -ix->rank, ix->rank,
                          (long long)bd);
    const int64_t bd_given = bd;
    if (bd < 0) bd += ix->rank;
    const tfc_tensor *av = in_value(c, 2);
    if (!av) return true;
    int64_t axis = int_at(av, 0), a;
    if (!tfc_check_axis(c->op->name, axis, p->rank, &a, st)) return false;
    /* TensorFlow's words (counted from 0), and the values as given */
    char note[96];
    snprintf(note, sizeof note, "%s%s", tfc_given_note("batch_dims", bd_given, bd), tfc_given_note("axis", axis, a));
    if (bd > a)
        return TFC_OP_ERR(c, st, "batch_dims (%lld) must be less than or equal to axis (%lld).%s", (long long)bd,
                          (long long)a, note);
    if (bd >= p->rank)
        return TFC_OP_ERR(c, st, "batch_dims (%lld) must be less than rank(params) (%d).%s", (long long)bd, p->rank, note);
    for (int i = 0; i < bd; i++)
        if (p->dims[i] >= 0 && ix->dims[i] >= 0 && p->dims[i] != ix->dims[i])
            return TFC_OP_ERR(c, st, "params.shape[%d]: %lld should be equal to indices.shape[%d]: %lld", i,
                              (long long)p->dims[i], i, (long long)ix->dims[i]);
    g->axis = (int)a;
    g->batch_dims = (int)bd;
    *known = true;
    return true;
}

static bool gather_v2_shape(tfc_shape_ctx *c, tfc_status *st) {
    gather_geom g;
    bool known;
    if (!gather_resolve(c, &g, &known, st)) return false;
    if (!known) {
        c->out_shapes[0].rank = -1;
        return true;
    }
    const tfc_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1];
    int r = p->rank - 1 + ix->rank - g.batch_dims;
    if (!check_out_rank(c, r, st)) return false;
    tfc_shape o = {.rank = r};
    int k = 0;
    for (int i = 0; i < g.axis; i++) o.dims[k++] = p->dims[i];
    for (int i = g.batch_dims; i < ix->rank; i++) o.dims[k++] = ix->dims[i];
    for (int i = g.axis + 1; i < p->rank; i++) o.dims[k++] = p->dims[i];
    if (!tfc_check_out_shape(c, &o, st)) return false;
    tfc_set_out(c, 0, &o);
    return true;
}

/* Dense gradient of GatherV2 (see the file comment): dy [P[:a], I[b:], P[a+1:]] is summed into rows
 * (batch*outer + o) * P[a] + index of params viewed as [B*O*P[a], P[a+1:]]. */
static bool gather_v2_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    tfc_tensor *params = g->in[0], *indices = g->in[1], *dy = g->dy[0];
    const tfc_shape *P = &params->shape, *I = &indices->shape;
    int64_t axis = int_at(g->in[2], 0), bd = tfc_attrs_int(g->attrs, "batch_dims", 0);
    if (axis < 0) axis += P->rank;
    if (bd < 0) bd += I->rank;
    int a = (int)axis, b = (int)bd;
    int64_t B = prod(P->dims, 0, b), O = prod(P->dims, b, a), G = P->dims[a];
    int64_t rows = B * O * G;
    if (params->num_elements == 0 || rows == 0) return (g->dx[0] = emit_zeros_like(ctx, params, st)) != NULL;
    tfc_tensor *ids = indices, *num;
    if (a > 0) {
        tfc_dtype dt = indices->dtype;
        if (rows > index_dtype_max(dt)) {
            dt = TFC_INT64;
            if (!(ids = emit_cast(ctx, ids, dt, st))) return false;
        }
        int64_t d[2 * TFC_MAX_RANK];
        int n = 0;
        for (int i = 0; i < b; i++) d[n++] = I->dims[i];
        for (int i = b; i < a; i++) d[n++] = 1;
        for (int i = b; i < I->rank; i++) d[n++] = I->dims[i];
        if (n > TFC_MAX_RANK) return tfc_status_set(st, TFC_UNIMPLEMENTED, "GatherV2 gradient: rank %d exceeds %d", n, TFC_MAX_RANK);
        if (!(ids = emit_reshape(ctx, ids, d, n, st))) return false;
        tfc_tensor *offs = emit_range(ctx, dt, 0, rows, G, st);
        n = 0;
        for (int i = 0; i < a; i++) d[n++] = P->dims[i];
        for (int i = b; i < I->rank; i++) d[n++] = 1;
        if (!offs || !(offs = emit_reshape(ctx, offs, d, n, st))) return false;
        if (!(ids = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){ids, offs}, 2, NULL, 0, st))) return false;
    }
    if (!(num = tfc_scalar_i64(rows, st))) return false;
    tfc_tensor *sum = tfc_emit(ctx, "UnsortedSegmentSum", (tfc_tensor *[]){dy, ids, num}, 3, NULL, 0, st);
    tfc_tensor_unref(num);
    if (!sum) return false;
    return (g->dx[0] = emit_reshape(ctx, sum, P->dims, P->rank, st)) != NULL;
}

static const tfc_op_def op_gather_v2 = {
    .name = "GatherV2", .inputs = "params: Tparams, indices: Tindices, axis: Taxis", .outputs = "output: Tparams",
    .attrs = "batch_dims: int = 0, Tparams: type, Tindices: " T_INDEX ", Taxis: {int32, int64}",
    .shape = gather_v2_shape, .grad = gather_v2_grad,
};

/* ================================================================================================
 * GatherNd / ScatterNd
 * ================================================================================================ */

#define BAD_INDICES_POLICY "bad_indices_policy: {'', 'DEFAULT', 'ERROR', 'IGNORE'} = ''"

static bool gather_nd_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *p = &c->in_shapes[0], *ix = &c->in_shapes[1];
    if (p->rank == 0) return TFC_OP_ERR(c, st, "params must be at least a vector (params shape %s)", SHP(p));
    if (ix->rank == 0) return TFC_OP_ERR(c, st, "indices must be at least a vector (indices shape %s)", SHP(ix));
    if (p->rank < 0 || ix->rank < 0 || ix->dims[ix->rank - 1] < 0) {
        c->out_shapes[0].rank = -1;
        return true;
    }
    int64_t depth = ix->dims[ix->rank - 1];
    if (depth > p->rank)
        return TFC_OP_ERR(c, st, "index innermost dimension length must be <= params rank; saw: %lld vs. %d (params %s, indices %s)",
                          (long long)depth, p->rank, SHP(p), SHP(ix));
    int r = ix->rank - 1 + p->rank - (int)depth;
    if (!check_out_rank(c, r, st)) return false;
    tfc_shape o = {.rank = r};
    int k = 0;
    for (int i = 0; i < ix->rank - 1; i++) o.dims[k++] = ix->dims[i];
    for (int i = (int)depth; i < p->rank; i++) o.dims[k++] = p->dims[i];
    int64_t n_idx, n_params;
    if (tfc_shape_is_fully_defined(p) && tfc_shape_is_fully_defined(ix) && prod_checked(ix->dims, 0, ix->rank - 1, &n_idx) &&
        prod_checked(p->dims, 0, p->rank, &n_params) && n_idx > 0 && n_params == 0)
        return TFC_OP_ERR(c, st, "Requested more than 0 entries, but params is empty.  Params shape: %s", SHP(p));
    if (!tfc_check_out_shape(c, &o, st)) return false;
    tfc_set_out(c, 0, &o);
    return true;
}

/* ScatterNd's shape input as a tfc_shape (TensorFlow's checks and messages). *known = false when the value
 * is not available. */
static bool scatter_nd_out_shape(tfc_shape_ctx *c, tfc_shape *o, bool *known, tfc_status *st) {
    const tfc_shape *sh = &c->in_shapes[2];
    *known = false;
    if (sh->rank >= 0 && sh->rank != 1) return TFC_OP_ERR(c, st, "Shape must be a vector, got shape %s", SHP(sh));
    const tfc_tensor *sv = in_value(c, 2);
    if (!sv) {
        o->rank = sh->rank == 1 && sh->dims[0] >= 0 && sh->dims[0] <= TFC_MAX_RANK ? (int)sh->dims[0] : -1;
        for (int i = 0; i < TFC_MAX_RANK; i++) o->dims[i] = -1;
        return true;
    }
    if (sv->num_elements > TFC_MAX_RANK)
        return TFC_OP_ERR(c, st, "shape has %lld dimensions, more than the maximum rank %d", (long long)sv->num_elements,
                          TFC_MAX_RANK);
    o->rank = (int)sv->num_elements;
    int64_t n = 1;
    for (int i = 0; i < o->rank; i++) {
        o->dims[i] = int_at(sv, i);
        if (o->dims[i] < 0) return TFC_OP_ERR(c, st, "Dimension %lld must be >= 0 (shape %s)", (long long)o->dims[i], SHP(o));
    }
    for (int i = 0; i < o->rank; i++)
        if (!tfc_mul_overflow_i64(n, o->dims[i], &n))
            return TFC_OP_ERR(c, st, "Shape %s would have more than 2**63 - 1 elements", SHP(o));
    *known = true;
    return true;
}

static bool scatter_nd_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *ix = &c->in_shapes[0], *up = &c->in_shapes[1];
    if (ix->rank == 0) return TFC_OP_ERR(c, st, "Indices shape must have rank at least one. Found:%s", SHP(ix));
    if (up->rank == 0) return TFC_OP_ERR(c, st, "Updates shape must have rank at least one. Found:%s", SHP(up));
    tfc_shape o;
    bool known;
    if (!scatter_nd_out_shape(c, &o, &known, st)) return false;
    tfc_set_out(c, 0, &o);
    if (!known || ix->rank < 0 || up->rank < 0 || !tfc_shape_is_fully_defined(ix) || !tfc_shape_is_fully_defined(up))
        return true;
    int64_t n_ix, n_up, n_out;
    if (!prod_checked(ix->dims, 0, ix->rank, &n_ix) || !prod_checked(up->dims, 0, up->rank, &n_up))
        return TFC_OP_ERR(c, st, "indices %s or updates %s have too many elements", SHP(ix), SHP(up));
    n_out = prod(o.dims, 0, o.rank);
    if ((n_ix > 0 || n_up > 0) && (n_out == 0 || n_ix == 0 || n_up == 0))
        return TFC_OP_ERR(c, st, "Indices and updates specified for empty output shape (indices %s, updates %s, shape %s)",
                          SHP(ix), SHP(up), SHP(&o));
    int outer = ix->rank - 1;
    for (int i = 0; i < outer; i++)
        if (i >= up->rank || ix->dims[i] != up->dims[i])
            return TFC_OP_ERR(c, st, "Dimensions [0,%d) of indices[shape=%s] must match dimensions [0,%d) of updates[shape=%s]",
                              outer, SHP(ix), outer, SHP(up));
    int64_t depth = ix->dims[outer];
    bool ok = up->rank - outer == o.rank - depth;
    for (int i = 0; ok && i < up->rank - outer; i++) ok = up->dims[outer + i] == o.dims[depth + i];
    if (!ok)
        return TFC_OP_ERR(c, st, "Dimensions [%lld,%d) of input[shape=%s] must match dimensions [%d,%d) of updates[shape=%s]",
                          (long long)depth, o.rank, SHP(&o), outer, up->rank, SHP(up));
    /* TensorFlow's kernel reads 1-D indices as a batch of depth-1 indices, against its shape function's single
     * index of depth indices.shape[0]: no 1-D indices satisfy both, so TensorFlow rejects them all. */
    if (ix->rank == 1 && n_ix > 0) {
        if (up->dims[0] != ix->dims[0])
            return TFC_OP_ERR(c, st, "Dimensions [0,1) of indices[shape=%s] = %lld must match dimensions [0,1) of updates[shape=%s] = %lld",
                              SHP(ix), (long long)ix->dims[0], SHP(up), (long long)up->dims[0]);
        return TFC_OP_ERR(c, st, "Must have updates.shape = indices.shape[:batch_dim] + params_shape[slice_dim:], got "
                          "updates.shape: %s, indices.shape: %s, params_shape: %s, slice_dim: 1, and batch_dim: 1",
                          SHP(up), SHP(ix), SHP(&o));
    }
    return true;
}

static bool gather_nd_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    tfc_tensor *params = g->in[0], *indices = g->in[1];
    if (params->num_elements == 0) return (g->dx[0] = emit_zeros_like(ctx, params, st)) != NULL;
    const tfc_shape *P = &params->shape;
    tfc_dtype dt = indices->dtype;
    for (int i = 0; i < P->rank; i++)
        if (P->dims[i] > index_dtype_max(dt)) dt = TFC_INT64;
    tfc_tensor *ids = emit_cast(ctx, indices, dt, st);
    if (!ids) return false;
    tfc_tensor *shape = tfc_tensor_new(dt, (int64_t[]){P->rank}, 1, st);
    if (!shape) return false;
    for (int i = 0; i < P->rank; i++) tfc_dtype_set_f64(dt, tfc_tensor_mutable_data(shape), i, (double)P->dims[i]);
    if (dt == TFC_INT64) memcpy(tfc_tensor_mutable_data(shape), P->dims, (size_t)P->rank * 8);
    tfc_attr pol = TFC_ATTR_S("bad_indices_policy", tfc_attrs_string(g->attrs, "bad_indices_policy", ""));
    g->dx[0] = tfc_emit(ctx, "ScatterNd", (tfc_tensor *[]){ids, g->dy[0], shape}, 3, &pol, 1, st);
    tfc_tensor_unref(shape);
    return g->dx[0] != NULL;
}

static bool scatter_nd_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr pol = TFC_ATTR_S("bad_indices_policy", tfc_attrs_string(g->attrs, "bad_indices_policy", ""));
    g->dx[1] = tfc_emit(g->ctx, "GatherNd", (tfc_tensor *[]){g->dy[0], g->in[0]}, 2, &pol, 1, st);
    return g->dx[1] != NULL;
}

static const tfc_op_def op_gather_nd = {
    .name = "GatherNd", .inputs = "params: Tparams, indices: Tindices", .outputs = "output: Tparams",
    .attrs = "Tparams: type, Tindices: " T_INDEX ", " BAD_INDICES_POLICY,
    .shape = gather_nd_shape, .grad = gather_nd_grad,
};

static const tfc_op_def op_scatter_nd = {
    .name = "ScatterNd", .inputs = "indices: Tindices, updates: T, shape: Tindices", .outputs = "output: T",
    .attrs = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, half, bool, string}, Tindices: " T_INDEX
             ", " BAD_INDICES_POLICY,
    .shape = scatter_nd_shape, .grad = scatter_nd_grad,
};

/* ================================================================================================
 * UnsortedSegmentSum
 * ================================================================================================ */

static bool unsorted_segment_sum_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *d = &c->in_shapes[0], *ids = &c->in_shapes[1], *ns = &c->in_shapes[2];
    if (ns->rank > 0) return TFC_OP_ERR(c, st, "num_segments should be a scalar, not shape %s", SHP(ns));
    if (d->rank < 0 || ids->rank < 0) {
        c->out_shapes[0].rank = -1;
        return true;
    }
    bool prefix = ids->rank <= d->rank;
    for (int i = 0; prefix && i < ids->rank; i++)
        prefix = ids->dims[i] < 0 || d->dims[i] < 0 || ids->dims[i] == d->dims[i];
    if (!prefix) return TFC_OP_ERR(c, st, "data.shape = %s does not start with segment_ids.shape = %s", SHP(d), SHP(ids));
    const tfc_tensor *nv = in_value(c, 2);
    int64_t num = nv ? int_at(nv, 0) : -1;
    if (nv && num < 0) return TFC_OP_ERR(c, st, "Input num_segments == %lld must not be negative.", (long long)num);
    if (1 + d->rank - ids->rank > TFC_MAX_RANK) /* scalar ids on rank-8 data: one dim more than a shape holds */
        return TFC_OP_ERR(c, st, "output rank %d (num_segments + data.shape %s after segment_ids.shape %s) exceeds the "
                                 "maximum rank %d", 1 + d->rank - ids->rank, SHP(d), SHP(ids), TFC_MAX_RANK);
    tfc_shape o = {.rank = 1 + d->rank - ids->rank};
    o.dims[0] = num;
    for (int i = ids->rank; i < d->rank; i++) o.dims[1 + i - ids->rank] = d->dims[i];
    if (!tfc_check_out_shape(c, &o, st)) return false;
    tfc_set_out(c, 0, &o);
    return true;
}

/* TensorFlow's _GatherDropNegatives: rows of negative ids get zeros. */
static bool unsorted_segment_sum_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    tfc_tensor *data = g->in[0], *ids = g->in[1], *dy = g->dy[0];
    if (dy->num_elements == 0 || data->num_elements == 0 || dy->shape.dims[0] == 0)
        return (g->dx[0] = emit_zeros_like(ctx, data, st)) != NULL;
    bool negatives = !ids->data;
    for (int64_t i = 0; !negatives && i < ids->num_elements; i++) negatives = int_at(ids, i) < 0;
    tfc_tensor *axis = tfc_scalar_i32(0, st);
    if (!axis) return false;
    if (!negatives) {
        g->dx[0] = tfc_emit(ctx, "GatherV2", (tfc_tensor *[]){dy, ids, axis}, 3, NULL, 0, st);
        tfc_tensor_unref(axis);
        return g->dx[0] != NULL;
    }
    tfc_tensor *zero = tfc_scalar(ids->dtype, 0, st);
    tfc_tensor *clipped = zero ? tfc_emit(ctx, "Maximum", (tfc_tensor *[]){ids, zero}, 2, NULL, 0, st) : NULL;
    tfc_tensor *gathered = clipped ? tfc_emit(ctx, "GatherV2", (tfc_tensor *[]){dy, clipped, axis}, 3, NULL, 0, st) : NULL;
    tfc_tensor *pos = gathered ? tfc_emit(ctx, "GreaterEqual", (tfc_tensor *[]){ids, zero}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(zero);
    tfc_tensor_unref(axis);
    if (!pos) return false;
    int64_t d[TFC_MAX_RANK];
    for (int i = 0; i < data->shape.rank; i++) d[i] = i < ids->shape.rank ? ids->shape.dims[i] : 1;
    tfc_tensor *mask = emit_reshape(ctx, pos, d, data->shape.rank, st);
    tfc_tensor *zeros = mask ? emit_zeros_like(ctx, gathered, st) : NULL;
    g->dx[0] = zeros ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){mask, gathered, zeros}, 3, NULL, 0, st) : NULL;
    return g->dx[0] != NULL;
}

static const tfc_op_def op_unsorted_segment_sum = {
    .name = "UnsortedSegmentSum", .inputs = "data: T, segment_ids: Tindices, num_segments: Tnumsegments",
    .outputs = "output: T",
    .attrs = "T: " T_NUMERIC ", Tindices: " T_INDEX ", Tnumsegments: {int32, int64} = int32",
    .shape = unsorted_segment_sum_shape, .grad = unsorted_segment_sum_grad,
};

/* ================================================================================================
 * OneHot
 * ================================================================================================ */

static bool one_hot_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *ix = &c->in_shapes[0];
    int64_t axis = tfc_attrs_int(c->attrs, "axis", -1);
    const char *names[3] = {"depth", "on_value", "off_value"};
    for (int i = 1; i <= 3; i++)
        if (c->in_shapes[i].rank > 0)
            return TFC_OP_ERR(c, st, "%s must be a scalar, but got: %s", names[i - 1], SHP(&c->in_shapes[i]));
    if (ix->rank < 0) {
        c->out_shapes[0].rank = -1;
        return true;
    }
    if (axis < -1 || axis > ix->rank)
        return TFC_OP_ERR(c, st, "Expected axis to be -1 or between [0, %d).  But received: %lld", ix->rank + 1, (long long)axis);
    if (!check_out_rank(c, ix->rank + 1, st)) return false;
    const tfc_tensor *dv = in_value(c, 1);
    int64_t depth = dv ? int_at(dv, 0) : -1;
    if (dv && depth < 0) return TFC_OP_ERR(c, st, "depth must be non-negative, got: %lld", (long long)depth);
    int a = axis < 0 ? ix->rank : (int)axis;
    tfc_shape o = {.rank = ix->rank + 1};
    for (int i = 0, k = 0; i <= ix->rank; i++) o.dims[i] = i == a ? depth : ix->dims[k++];
    if (!tfc_check_out_shape(c, &o, st)) return false;
    tfc_set_out(c, 0, &o);
    return true;
}

static const tfc_op_def op_one_hot = {
    .name = "OneHot", .inputs = "indices: TI, depth: int32, on_value: T, off_value: T", .outputs = "output: T",
    .attrs = "axis: int = -1, T: type, TI: {uint8, int8, int32, int64} = int64",
    .shape = one_hot_shape, .not_differentiable = true,
};

/* ================================================================================================
 * Range
 * ================================================================================================ */

static double round_to(tfc_dtype dt, double v) {
    switch (dt) {
    case TFC_FLOAT: return (float)v;
    case TFC_HALF: return tfc_half_to_float(tfc_half_from_float((float)v));
    case TFC_BFLOAT16: return tfc_bfloat16_to_float(tfc_bfloat16_from_float((float)v));
    default: return v;
    }
}

/* Number of elements of Range(start, limit, delta) in dtype dt, with TensorFlow's checks and messages.
 * Shared with the CPU kernel (which needs it when the shape function could not see the values). */
bool tfc_range_size(const char *op, tfc_dtype dt, const tfc_tensor *start, const tfc_tensor *limit,
                    const tfc_tensor *delta, int64_t *size, tfc_status *st);
bool tfc_range_size(const char *op, tfc_dtype dt, const tfc_tensor *start, const tfc_tensor *limit,
                    const tfc_tensor *delta, int64_t *size, tfc_status *st) {
    if (tfc_dtype_is_integer(dt)) {
        int64_t s = int_at(start, 0), l = int_at(limit, 0), d = int_at(delta, 0);
        if (d == 0) return tfc_op_error(op, st, "Requires delta != 0: %lld", (long long)d);
        if (d > 0 && s > l)
            return tfc_op_error(op, st, "Requires start <= limit when delta > 0: %lld/%lld", (long long)s, (long long)l);
        if (d < 0 && s < l)
            return tfc_op_error(op, st, "Requires start >= limit when delta < 0: %lld/%lld", (long long)s, (long long)l);
        unsigned __int128 span = d > 0 ? (unsigned __int128)((__int128)l - s) : (unsigned __int128)((__int128)s - l);
        unsigned __int128 ad = d > 0 ? (unsigned __int128)d : (unsigned __int128)(-(__int128)d);
        unsigned __int128 n = (span + ad - 1) / ad;
        if (n > (unsigned __int128)INT64_MAX)
            return tfc_op_error(op, st, "Requires ((limit - start) / delta) <= 9223372036854775807 (start %lld, limit %lld, delta %lld)",
                                (long long)s, (long long)l, (long long)d);
        *size = (int64_t)n;
        return true;
    }
    double s = tfc_dtype_get_f64(dt, start->data, 0), l = tfc_dtype_get_f64(dt, limit->data, 0),
           d = tfc_dtype_get_f64(dt, delta->data, 0);
    if (d == 0) return tfc_op_error(op, st, "Requires delta != 0: %g", d);
    if (d > 0 && !(s <= l)) return tfc_op_error(op, st, "Requires start <= limit when delta > 0: %g/%g", s, l);
    if (!(d > 0) && !(s >= l)) return tfc_op_error(op, st, "Requires start >= limit when delta < 0: %g/%g", s, l);
    /* TensorFlow computes ceil(|(limit - start) / delta|) in the dtype itself. */
    double n = ceil(fabs(round_to(dt, round_to(dt, l - s) / d)));
    if (!(n < 9223372036854775808.0))
        return tfc_op_error(op, st, "Requires ((limit - start) / delta) <= 9223372036854775807 (start %g, limit %g, delta %g)",
                            s, l, d);
    *size = (int64_t)n;
    return true;
}

static bool range_shape(tfc_shape_ctx *c, tfc_status *st) {
    const char *names[3] = {"start", "limit", "delta"};
    for (int i = 0; i < 3; i++) {
        const tfc_shape *s = &c->in_shapes[i];
        if (s->rank > 1 || (s->rank == 1 && s->dims[0] >= 0 && s->dims[0] != 1))
            return TFC_OP_ERR(c, st, "%s must be a scalar, not shape %s", names[i], SHP(s));
    }
    c->out_shapes[0].rank = 1;
    c->out_shapes[0].dims[0] = -1;
    const tfc_tensor *a = in_value(c, 0), *b = in_value(c, 1), *d = in_value(c, 2);
    if (!a || !b || !d) return true;
    return tfc_range_size(c->op->name, c->in_dtypes[0], a, b, d, &c->out_shapes[0].dims[0], st);
}

static const tfc_op_def op_range = {
    .name = "Range", .inputs = "start: Tidx, limit: Tidx, delta: Tidx", .outputs = "output: Tidx",
    .attrs = "Tidx: {bfloat16, half, float, double, int8, int16, int32, int64} = int32",
    .shape = range_shape, .not_differentiable = true,
};

/* ================================================================================================
 * Where
 * ================================================================================================ */

static bool where_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *s = &c->in_shapes[0];
    if (s->rank == 0) return TFC_OP_ERR(c, st, "WhereOp : Unhandled input dimensions: 0 (input shape %s)", SHP(s));
    c->out_shapes[0] = (tfc_shape){.rank = 2, .dims = {-1, s->rank}};
    return true;
}

static const tfc_op_def op_where = {
    .name = "Where", .inputs = "input: T", .outputs = "index: int64",
    .attrs = "T: {float, double, int32, uint8, int16, int8, int64, bfloat16, half, bool} = bool",
    .shape = where_shape, .not_differentiable = true,
};

/* ================================================================================================
 * ReverseV2
 * ================================================================================================ */

static bool reverse_v2_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[0], *ax = &c->in_shapes[1];
    if (ax->rank >= 0 && ax->rank != 1)
        return TFC_OP_ERR(c, st, "'dims' must be 1-dimension, not %d (axis shape %s)", ax->rank, SHP(ax));
    c->out_shapes[0] = *x;
    const tfc_tensor *av = in_value(c, 1);
    if (!av || x->rank <= 0) return true; /* a scalar is returned as is, whatever the axes */
    bool seen[TFC_MAX_RANK] = {0};
    for (int64_t i = 0; i < av->num_elements; i++) {
        int64_t a = int_at(av, i);
        if (a < -x->rank || a >= x->rank)
            return TFC_OP_ERR(c, st, "'axis'[%lld] = %lld is out of valid range [%d, %d) for input of rank %d",
                              (long long)i, (long long)a, -x->rank, x->rank, x->rank);
        const int64_t given = a;
        if (a < 0) a += x->rank;
        if (seen[a])
            return TFC_OP_ERR(c, st, "axis %lld specified more than once.%s", (long long)a,
                              tfc_given_note("axis entry", given, a));
        seen[a] = true;
    }
    return true;
}

static bool reverse_v2_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (g->dx[0] = tfc_emit(g->ctx, "ReverseV2", (tfc_tensor *[]){g->dy[0], g->in[1]}, 2, NULL, 0, st)) != NULL;
}

static const tfc_op_def op_reverse_v2 = {
    .name = "ReverseV2", .inputs = "tensor: T, axis: Tidx", .outputs = "output: T",
    .attrs = "Tidx: {int32, int64} = int32, T: {uint8, int8, int16, int32, int64, bool, bfloat16, half, float, double, string}",
    .shape = reverse_v2_shape, .grad = reverse_v2_grad,
};

/* ================================================================================================
 * Cumsum
 * ================================================================================================ */

static bool cumsum_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[0], *ax = &c->in_shapes[1];
    if (ax->rank > 0) return TFC_OP_ERR(c, st, "ScanOp: axis must be a scalar, not %s", SHP(ax));
    c->out_shapes[0] = *x;
    const tfc_tensor *av = in_value(c, 1);
    if (!av || x->rank < 0) return true;
    int64_t a = int_at(av, 0);
    if (a < -x->rank || a >= x->rank)
        return TFC_OP_ERR(c, st, "ScanOp: Expected scan axis in the range [%d, %d), but got %lld (input shape %s)", -x->rank,
                          x->rank, (long long)a, SHP(x));
    return true;
}

static bool cumsum_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr a[2] = {TFC_ATTR_B("exclusive", tfc_attrs_bool(g->attrs, "exclusive", false)),
                     TFC_ATTR_B("reverse", !tfc_attrs_bool(g->attrs, "reverse", false))};
    return (g->dx[0] = tfc_emit(g->ctx, "Cumsum", (tfc_tensor *[]){g->dy[0], g->in[1]}, 2, a, 2, st)) != NULL;
}

static const tfc_op_def op_cumsum = {
    .name = "Cumsum", .inputs = "x: T, axis: Tidx", .outputs = "out: T",
    .attrs = "exclusive: bool = false, reverse: bool = false, T: " T_NUMERIC ", Tidx: {int32, int64} = int32",
    .shape = cumsum_shape, .grad = cumsum_grad,
};

/* ================================================================================================
 * TopKV2
 * ================================================================================================ */

static bool top_k_v2_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[0], *ks = &c->in_shapes[1];
    if (x->rank == 0) return TFC_OP_ERR(c, st, "input must be >= 1-D, got shape %s", SHP(x));
    if (ks->rank > 0) return TFC_OP_ERR(c, st, "k must be scalar, got shape %s", SHP(ks));
    tfc_shape o = *x;
    if (x->rank < 0) {
        c->out_shapes[0] = c->out_shapes[1] = o;
        return true;
    }
    const tfc_tensor *kv = in_value(c, 1);
    int64_t k = kv ? int_at(kv, 0) : -1, n = x->dims[x->rank - 1];
    if (kv && k < 0) return TFC_OP_ERR(c, st, "Need k >= 0, got %lld", (long long)k);
    if (kv && n >= 0 && n < k)
        return TFC_OP_ERR(c, st, "input must have at least k columns. Had %lld, needed %lld", (long long)n, (long long)k);
    tfc_dtype it = tfc_attrs_type(c->attrs, "index_type", TFC_INT32);
    if (n > index_dtype_max(it))
        return TFC_OP_ERR(c, st, "input has %lld columns, more than index_type %s can index", (long long)n, tfc_dtype_name(it));
    o.dims[x->rank - 1] = k;
    c->out_shapes[0] = c->out_shapes[1] = o;
    return true;
}

/* TensorFlow's _TopKGrad: scatter dy into the flattened input at row * n + index. */
static bool top_k_v2_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    tfc_tensor *x = g->in[0], *idx = g->out[1];
    const tfc_shape *X = &x->shape;
    int64_t n = X->dims[X->rank - 1], k = idx->shape.dims[X->rank - 1];
    if (x->num_elements == 0 || k == 0) return (g->dx[0] = emit_zeros_like(ctx, x, st)) != NULL;
    int64_t outer = x->num_elements / n, total = x->num_elements;
    tfc_dtype dt = total > index_dtype_max(idx->dtype) ? TFC_INT64 : idx->dtype;
    tfc_tensor *ids = emit_cast(ctx, idx, dt, st);
    if (!ids || !(ids = emit_reshape(ctx, ids, (int64_t[]){outer, k}, 2, st))) return false;
    tfc_tensor *offs = emit_range(ctx, dt, 0, total, n, st);
    if (!offs || !(offs = emit_reshape(ctx, offs, (int64_t[]){outer, 1}, 2, st))) return false;
    if (!(ids = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){ids, offs}, 2, NULL, 0, st))) return false;
    if (!(ids = emit_reshape(ctx, ids, (int64_t[]){outer, k, 1}, 3, st))) return false;
    tfc_tensor *upd = emit_reshape(ctx, g->dy[0], (int64_t[]){outer, k}, 2, st);
    if (!upd) return false;
    tfc_tensor *shape = tfc_tensor_new(dt, (int64_t[]){1}, 1, st);
    if (!shape) return false;
    tfc_dtype_set_f64(dt, tfc_tensor_mutable_data(shape), 0, (double)total);
    if (dt == TFC_INT64) ((int64_t *)tfc_tensor_mutable_data(shape))[0] = total;
    tfc_tensor *flat = tfc_emit(ctx, "ScatterNd", (tfc_tensor *[]){ids, upd, shape}, 3, NULL, 0, st);
    tfc_tensor_unref(shape);
    return flat && (g->dx[0] = emit_reshape(ctx, flat, X->dims, X->rank, st)) != NULL;
}

static const tfc_op_def op_top_k_v2 = {
    .name = "TopKV2", .inputs = "input: T, k: Tk", .outputs = "values: T, indices: index_type",
    .attrs = "sorted: bool = true, T: " T_NUMERIC ", Tk: {int16, int32, int64} = int32, "
             "index_type: {int16, int32, int64} = int32",
    .shape = top_k_v2_shape, .grad = top_k_v2_grad,
};

/* The error helpers below are used by the kernels for TensorFlow's index messages. */
void tfc_index_pos_str(const int64_t *dims, int rank, int64_t flat, char *buf, size_t size);
void tfc_index_pos_str(const int64_t *dims, int rank, int64_t flat, char *buf, size_t size) {
    pos_str(dims, rank, flat, buf, size);
}

const tfc_op_def *const tfc_ops_indexing[] = {
    &op_gather_v2, &op_gather_nd, &op_scatter_nd, &op_unsorted_segment_sum, &op_one_hot, &op_range,
    &op_where, &op_reverse_v2, &op_cumsum, &op_top_k_v2, NULL,
};
