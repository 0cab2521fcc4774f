/* Reduction ops (tensorflow/core/ops/math_ops.cc): Sum, Mean, Max, Min, Prod, All, Any, ArgMax, ArgMin;
 * gradients as tensorflow/python/ops/math_grad.py. */
#include <string.h>

#include "core/size_check.h"
#include "core/tensor_internal.h"
#include "ops/op_util.h"

/* ---- axes ----------------------------------------------------------------------------------------------- */

/* Reads the reduction axes (any rank, int32/int64) of a call into a mask over the input dims. Returns
 * false with TensorFlow's messages for out-of-range or duplicate axes. */
static bool read_reduction_mask(const char *op, const tfc_tensor *axes, int rank, const tfc_shape *in_shape,
                                bool mask[TFC_MAX_RANK], tfc_status *st) {
    for (int i = 0; i < TFC_MAX_RANK; i++) mask[i] = false;
    for (int64_t i = 0; i < axes->num_elements; i++) {
        int64_t a = axes->dtype == TFC_INT32 ? ((const int32_t *)axes->data)[i] : ((const int64_t *)axes->data)[i];
        if (a < -rank || a >= rank)
            return tfc_op_error(op, st, "Invalid reduction dimension (%lld for input with %d dimension(s)), input shape %s",
                                (long long)a, rank, SHP(in_shape));
        int d = (int)(a < 0 ? a + rank : a);
        if (mask[d]) /* TensorFlow's words (counted from 0), and the entry as given */
            return tfc_op_error(op, st, "Invalid reduction arguments: Axes contains duplicate dimension: %d%s", d,
                                tfc_given_note("axes entry", a, d));
        mask[d] = true;
    }
    return true;
}

static bool reduction_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0];
    bool keep = tfc_attrs_bool(c->attrs, "keep_dims", false);
    const tfc_tensor *axes = c->in_values[1];
    tfc_shape out = {.rank = -1};
    if (!axes || !axes->data || in->rank < 0) {
        /* Axes unknown (graph): only keep_dims preserves the rank. */
        if (keep && in->rank >= 0) {
            out.rank = in->rank;
            for (int i = 0; i < in->rank; i++) out.dims[i] = -1;
        }
        tfc_set_out(c, 0, &out);
        return true;
    }
    bool mask[TFC_MAX_RANK];
    if (!read_reduction_mask(c->op->name, axes, in->rank, in, mask, st)) return false;
    out.rank = 0;
    for (int i = 0; i < in->rank; i++) {
        if (!mask[i]) out.dims[out.rank++] = in->dims[i];
        else if (keep) out.dims[out.rank++] = 1;
    }
    tfc_set_out(c, 0, &out);
    return true;
}

static bool arg_reduction_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *in = &c->in_shapes[0], *ds = &c->in_shapes[1];
    if (ds->rank > 0) return TFC_OP_ERR(c, st, "dim must be a scalar, but received tensor of shape: %s", SHP(ds));
    const tfc_tensor *dv = c->in_values[1];
    tfc_shape out = {.rank = -1};
    if (!dv || !dv->data || in->rank < 0) {
        if (in->rank > 0) {
            out.rank = in->rank - 1;
            for (int i = 0; i < out.rank; i++) out.dims[i] = -1;
        }
        tfc_set_out(c, 0, &out);
        return true;
    }
    int64_t a = dv->dtype == TFC_INT32 ? *(const int32_t *)dv->data
                : dv->dtype == TFC_INT16 ? *(const int16_t *)dv->data : *(const int64_t *)dv->data;
    int r = in->rank;
    if (a < -r || a >= r)
        return TFC_OP_ERR(c, st, "Expected dimension in the range [%d, %d), but got %lld (input shape %s)", -r, r,
                          (long long)a, SHP(in));
    int axis = (int)(a < 0 ? a + r : a);
    if (in->dims[axis] == 0) return TFC_OP_ERR(c, st, "Reduction axis %lld is empty in shape %s", (long long)a, SHP(in));
    out.rank = 0;
    for (int i = 0; i < r; i++)
        if (i != axis) out.dims[out.rank++] = in->dims[i];
    tfc_set_out(c, 0, &out);
    return true;
}

/* ---- gradient helpers ----------------------------------------------------------------------------------- */

/* The reduction's output shape with reduced dims kept as 1 (math_ops.reduced_shape). */
static bool kept_dims_shape(tfc_grad_ctx *g, tfc_shape *kept, tfc_status *st) {
    const tfc_shape *in = &g->in[0]->shape;
    bool mask[TFC_MAX_RANK];
    if (!g->in[1]->data || in->rank < 0)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s gradient: the reduction axes and the input's rank must be known",
                              g->op->name);
    if (!read_reduction_mask(g->op->name, g->in[1], in->rank, in, mask, st)) return false;
    *kept = *in;
    for (int i = 0; i < in->rank; i++)
        if (mask[i]) kept->dims[i] = 1;
    return true;
}

static tfc_tensor *reshape_to(tfc_ctx *ctx, tfc_tensor *x, const tfc_shape *s, tfc_status *st) {
    if (tfc_shape_equal(&x->shape, s)) return x;
    tfc_tensor *shape = tfc_vec_i64(s->dims, s->rank, st);
    if (!shape) return NULL;
    tfc_tensor *r = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, shape}, 2, NULL, 0, st);
    tfc_tensor_unref(shape);
    return r;
}

/* Broadcasts x (already with kept dims) to shape s: BroadcastTo as TensorFlow, else Tile. */
static tfc_tensor *broadcast_to(tfc_ctx *ctx, tfc_tensor *x, const tfc_shape *s, tfc_status *st) {
    if (tfc_shape_equal(&x->shape, s)) return x;
    tfc_tensor *r = NULL, *arg = NULL;
    if (tfc_op_lookup("BroadcastTo")) {
        if ((arg = tfc_vec_i64(s->dims, s->rank, st))) r = tfc_emit(ctx, "BroadcastTo", (tfc_tensor *[]){x, arg}, 2, NULL, 0, st);
    } else {
        int64_t mult[TFC_MAX_RANK];
        for (int i = 0; i < s->rank; i++) mult[i] = x->shape.dims[i] == s->dims[i] ? 1 : s->dims[i];
        if ((arg = tfc_vec_i64(mult, s->rank, st))) r = tfc_emit(ctx, "Tile", (tfc_tensor *[]){x, arg}, 2, NULL, 0, st);
    }
    tfc_tensor_unref(arg);
    return r;
}

/* The sum gradient when the axes are symbolic or the input's shape has unknown dims (graphs): the kept-dims
 * shape is that of Sum(x, axes, keep_dims=True), and dy is broadcast to Shape(x). */
static tfc_tensor *sum_grad_symbolic(tfc_grad_ctx *g, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    tfc_attr i64 = TFC_ATTR_T("out_type", TFC_INT64), keep = TFC_ATTR_B("keep_dims", true);
    tfc_tensor *sx = tfc_emit(ctx, "Shape", (tfc_tensor *[]){g->in[0]}, 1, &i64, 1, st);
    tfc_tensor *kx = sx ? tfc_emit(ctx, "Sum", (tfc_tensor *[]){g->in[0], g->in[1]}, 2, &keep, 1, st) : NULL;
    tfc_tensor *ks = kx ? tfc_emit(ctx, "Shape", &kx, 1, &i64, 1, st) : NULL;
    tfc_tensor *r = ks ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){g->dy[0], ks}, 2, NULL, 0, st) : NULL;
    return r ? tfc_emit(ctx, "BroadcastTo", (tfc_tensor *[]){r, sx}, 2, NULL, 0, st) : NULL;
}

/* _SumGrad: reshape dy to the kept-dims shape and broadcast it over the input. */
static tfc_tensor *sum_grad_value(tfc_grad_ctx *g, tfc_status *st) {
    tfc_shape kept;
    if (!g->in[1]->data || !tfc_shape_is_fully_defined(&g->in[0]->shape)) return sum_grad_symbolic(g, st);
    if (!kept_dims_shape(g, &kept, st)) return NULL;
    tfc_tensor *r = reshape_to(g->ctx, g->dy[0], &kept, st);
    return r ? broadcast_to(g->ctx, r, &g->in[0]->shape, st) : NULL;
}

static bool sum_grad(tfc_grad_ctx *g, tfc_status *st) { return (g->dx[0] = sum_grad_value(g, st)) != NULL; }

/* _MeanGrad: the sum gradient divided by the number of elements averaged into each output. */
static bool mean_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *s = sum_grad_value(g, st);
    if (!s) return false;
    if (!tfc_shape_is_fully_defined(&g->in[0]->shape) || !tfc_shape_is_fully_defined(&g->out[0]->shape)) {
        /* factor = Size(x) / max(Size(y), 1), computed by ops */
        tfc_attr i64 = TFC_ATTR_T("out_type", TFC_INT64), to = TFC_ATTR_T("DstT", s->dtype);
        tfc_tensor *one = tfc_scalar_i64(1, st);
        tfc_tensor *ni = tfc_emit(g->ctx, "Size", (tfc_tensor *[]){g->in[0]}, 1, &i64, 1, st);
        tfc_tensor *no = ni ? tfc_emit(g->ctx, "Size", (tfc_tensor *[]){g->out[0]}, 1, &i64, 1, st) : NULL;
        tfc_tensor *nm = no && one ? tfc_emit(g->ctx, "Maximum", (tfc_tensor *[]){no, one}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(one);
        tfc_tensor *q = nm ? tfc_emit(g->ctx, "FloorDiv", (tfc_tensor *[]){ni, nm}, 2, NULL, 0, st) : NULL;
        tfc_tensor *fq = q ? tfc_emit(g->ctx, "Cast", &q, 1, &to, 1, st) : NULL;
        return fq && (g->dx[0] = tfc_emit(g->ctx, "RealDiv", (tfc_tensor *[]){s, fq}, 2, NULL, 0, st)) != NULL;
    }
    int64_t in_n = g->in[0]->num_elements, out_n = g->out[0]->num_elements;
    int64_t factor = in_n / (out_n > 1 ? out_n : 1);
    tfc_tensor *f = tfc_scalar(s->dtype, (double)factor, st);
    if (!f) return false;
    g->dx[0] = tfc_emit(g->ctx, "RealDiv", (tfc_tensor *[]){s, f}, 2, NULL, 0, st);
    tfc_tensor_unref(f);
    return g->dx[0] != NULL;
}

/* _MinOrMaxGrad: dy flows to every element equal to the result, split evenly between ties. */
static bool min_max_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_shape kept;
    if (!kept_dims_shape(g, &kept, st)) return false;
    tfc_tensor *y = reshape_to(g->ctx, g->out[0], &kept, st);
    tfc_tensor *dy = y ? reshape_to(g->ctx, g->dy[0], &kept, st) : NULL;
    tfc_tensor *eq = dy ? tfc_emit(g->ctx, "Equal", (tfc_tensor *[]){y, g->in[0]}, 2, NULL, 0, st) : NULL;
    tfc_attr cast_attr = TFC_ATTR_T("DstT", dy ? dy->dtype : TFC_FLOAT);
    tfc_tensor *ind = eq ? tfc_emit(g->ctx, "Cast", &eq, 1, &cast_attr, 1, st) : NULL;
    tfc_tensor *cnt = ind ? tfc_emit(g->ctx, "Sum", (tfc_tensor *[]){ind, g->in[1]}, 2, NULL, 0, st) : NULL;
    tfc_tensor *num = cnt ? reshape_to(g->ctx, cnt, &kept, st) : NULL;
    tfc_tensor *frac = num ? tfc_emit(g->ctx, "RealDiv", (tfc_tensor *[]){ind, num}, 2, NULL, 0, st) : NULL;
    g->dx[0] = frac ? tfc_emit(g->ctx, "Mul", (tfc_tensor *[]){frac, dy}, 2, NULL, 0, st) : NULL;
    return g->dx[0] != NULL;
}

/* Without a Cumprod op: the product of the other elements from the product p of the group's nonzero
 * elements and its zero count: p / x where the group has no zero, p at the group's only zero, else 0. */
static tfc_tensor *prod_grad_by_zero_count(tfc_grad_ctx *g, tfc_tensor *dyb, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    tfc_tensor *x = g->in[0], *axes = g->in[1];
    tfc_tensor *zero = tfc_scalar(x->dtype, 0.0, st), *one = zero ? tfc_scalar(x->dtype, 1.0, st) : NULL;
    tfc_tensor *res = NULL;
    if (one) {
        tfc_attr keep = TFC_ATTR_B("keep_dims", true), cast = TFC_ATTR_T("DstT", x->dtype);
        tfc_tensor *is0 = tfc_emit(ctx, "Equal", (tfc_tensor *[]){x, zero}, 2, NULL, 0, st);
        tfc_tensor *z = is0 ? tfc_emit(ctx, "Cast", &is0, 1, &cast, 1, st) : NULL;
        tfc_tensor *nz = z ? tfc_emit(ctx, "Sum", (tfc_tensor *[]){z, axes}, 2, &keep, 1, st) : NULL;
        tfc_tensor *xs = nz ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){is0, one, x}, 3, NULL, 0, st) : NULL;
        tfc_tensor *p = xs ? tfc_emit(ctx, "Prod", (tfc_tensor *[]){xs, axes}, 2, &keep, 1, st) : NULL;
        tfc_tensor *none = p ? tfc_emit(ctx, "Equal", (tfc_tensor *[]){nz, zero}, 2, NULL, 0, st) : NULL;
        tfc_tensor *single = none ? tfc_emit(ctx, "Equal", (tfc_tensor *[]){nz, one}, 2, NULL, 0, st) : NULL;
        tfc_tensor *at0 = single ? tfc_emit(ctx, "LogicalAnd", (tfc_tensor *[]){single, is0}, 2, NULL, 0, st) : NULL;
        tfc_tensor *use = at0 ? tfc_emit(ctx, "LogicalOr", (tfc_tensor *[]){none, at0}, 2, NULL, 0, st) : NULL;
        tfc_tensor *others = use ? tfc_emit(ctx, "RealDiv", (tfc_tensor *[]){p, xs}, 2, NULL, 0, st) : NULL;
        tfc_tensor *zl = others ? tfc_emit(ctx, "ZerosLike", &others, 1, NULL, 0, st) : NULL;
        tfc_tensor *y = zl ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){use, others, zl}, 3, NULL, 0, st) : NULL;
        res = y ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){dyb, y}, 2, NULL, 0, st) : NULL;
    }
    tfc_tensor_unref(zero);
    tfc_tensor_unref(one);
    return res;
}

/* _ProdGrad: the product of all other elements of each reduced group, from exclusive cumulative products
 * from both ends (exact with zeros, unlike y / x). The reduced dims are moved to the front and flattened.
 * Uses prod_grad_by_zero_count when no Cumprod op is registered. */
static bool prod_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_ctx *ctx = g->ctx;
    const tfc_shape *in = &g->in[0]->shape;
    int r = in->rank;
    bool mask[TFC_MAX_RANK];
    if (!read_reduction_mask(g->op->name, g->in[1], r, in, mask, st)) return false;
    tfc_shape kept = *in;
    int64_t perm[TFC_MAX_RANK], inv[TFC_MAX_RANK], reduced_num = 1, other_num = 1;
    int np = 0;
    for (int i = 0; i < r; i++)
        if (mask[i]) {
            kept.dims[i] = 1;
            perm[np++] = i;
            reduced_num = tfc_dims_product((int64_t[]){reduced_num, in->dims[i]}, 0, 2);
        }
    for (int i = 0; i < r; i++)
        if (!mask[i]) {
            perm[np++] = i;
            other_num = tfc_dims_product((int64_t[]){other_num, in->dims[i]}, 0, 2);
        }
    for (int i = 0; i < r; i++) inv[perm[i]] = i;
    tfc_shape permuted = {.rank = r}, flat = {.rank = 2, .dims = {reduced_num, other_num}};
    for (int i = 0; i < r; i++) permuted.dims[i] = in->dims[perm[i]];

    tfc_tensor *dy = reshape_to(ctx, g->dy[0], &kept, st);
    tfc_tensor *dyb = dy ? broadcast_to(ctx, dy, in, st) : NULL;
    if (!dyb) return false;
    if (!tfc_op_lookup("Cumprod")) return (g->dx[0] = prod_grad_by_zero_count(g, dyb, st)) != NULL;
    tfc_tensor *pv = tfc_vec_i64(perm, r, st), *iv = tfc_vec_i64(inv, r, st);
    tfc_tensor *axis0 = tfc_scalar_i32(0, st);
    tfc_tensor *res = NULL;
    if (pv && iv && axis0) {
        tfc_tensor *t = tfc_emit(ctx, "Transpose", (tfc_tensor *[]){g->in[0], pv}, 2, NULL, 0, st);
        tfc_tensor *x2 = t ? reshape_to(ctx, t, &flat, st) : NULL;
        tfc_attr left_attrs[2] = {TFC_ATTR_B("exclusive", true), TFC_ATTR_B("reverse", false)};
        tfc_attr right_attrs[2] = {TFC_ATTR_B("exclusive", true), TFC_ATTR_B("reverse", true)};
        tfc_tensor *left = x2 ? tfc_emit(ctx, "Cumprod", (tfc_tensor *[]){x2, axis0}, 2, left_attrs, 2, st) : NULL;
        tfc_tensor *right = left ? tfc_emit(ctx, "Cumprod", (tfc_tensor *[]){x2, axis0}, 2, right_attrs, 2, st) : NULL;
        tfc_tensor *lr = right ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){left, right}, 2, NULL, 0, st) : NULL;
        tfc_tensor *y = lr ? reshape_to(ctx, lr, &permuted, st) : NULL;
        tfc_tensor *yt = y ? tfc_emit(ctx, "Transpose", (tfc_tensor *[]){y, iv}, 2, NULL, 0, st) : NULL;
        res = yt ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){dyb, yt}, 2, NULL, 0, st) : NULL;
    }
    tfc_tensor_unref(pv);
    tfc_tensor_unref(iv);
    tfc_tensor_unref(axis0);
    g->dx[0] = res;
    return res != NULL;
}

/* ---- op definitions ------------------------------------------------------------------------------------- */
#define REDUCE_T "T: {" TFC_T_REAL "}"
#define REDUCE_ATTRS(types) "keep_dims: bool = false, " types ", Tidx: {int32, int64} = int32"

const tfc_op_def tfc_op_def_sum = {
    .name = "Sum", .inputs = "input: T, reduction_indices: Tidx", .outputs = "output: T",
    .attrs = REDUCE_ATTRS(REDUCE_T), .shape = reduction_shape, .grad = sum_grad,
};
const tfc_op_def tfc_op_def_mean = {
    .name = "Mean", .inputs = "input: T, reduction_indices: Tidx", .outputs = "output: T",
    .attrs = REDUCE_ATTRS(REDUCE_T), .shape = reduction_shape, .grad = mean_grad,
};
const tfc_op_def tfc_op_def_prod = {
    .name = "Prod", .inputs = "input: T, reduction_indices: Tidx", .outputs = "output: T",
    .attrs = REDUCE_ATTRS(REDUCE_T), .shape = reduction_shape, .grad = prod_grad,
};
const tfc_op_def tfc_op_def_max = {
    .name = "Max", .inputs = "input: T, reduction_indices: Tidx", .outputs = "output: T",
    .attrs = REDUCE_ATTRS(REDUCE_T), .shape = reduction_shape, .grad = min_max_grad,
};
const tfc_op_def tfc_op_def_min = {
    .name = "Min", .inputs = "input: T, reduction_indices: Tidx", .outputs = "output: T",
    .attrs = REDUCE_ATTRS(REDUCE_T), .shape = reduction_shape, .grad = min_max_grad,
};
const tfc_op_def tfc_op_def_all = {
    .name = "All", .inputs = "input: bool, reduction_indices: Tidx", .outputs = "output: bool",
    .attrs = "keep_dims: bool = false, Tidx: {int32, int64} = int32", .shape = reduction_shape,
    .not_differentiable = true,
};
const tfc_op_def tfc_op_def_any = {
    .name = "Any", .inputs = "input: bool, reduction_indices: Tidx", .outputs = "output: bool",
    .attrs = "keep_dims: bool = false, Tidx: {int32, int64} = int32", .shape = reduction_shape,
    .not_differentiable = true,
};
/* TensorFlow also allows uint16 for ArgMax's output_type; tfc has no uint16 dtype. */
const tfc_op_def tfc_op_def_arg_max = {
    .name = "ArgMax", .inputs = "input: T, dimension: Tidx", .outputs = "output: output_type",
    .attrs = "T: {" TFC_T_REAL ", bool}, Tidx: {int16, int32, int64} = int32, "
             "output_type: {int16, int32, int64} = int64",
    .shape = arg_reduction_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_arg_min = {
    .name = "ArgMin", .inputs = "input: T, dimension: Tidx", .outputs = "output: output_type",
    .attrs = "T: {" TFC_T_REAL ", bool}, Tidx: {int32, int64} = int32, output_type: {int32, int64} = int64",
    .shape = arg_reduction_shape, .not_differentiable = true,
};

const tfc_op_def *const tfc_ops_reduction[] = {
    &tfc_op_def_sum, &tfc_op_def_mean, &tfc_op_def_prod, &tfc_op_def_max, &tfc_op_def_min,
    &tfc_op_def_all, &tfc_op_def_any, &tfc_op_def_arg_max, &tfc_op_def_arg_min, NULL,
};
