/* Matrix products (tensorflow/core/ops/math_ops.cc): MatMul and BatchMatMulV2, gradients as
 * tensorflow/python/ops/math_grad.py. */
#include "core/tensor_internal.h"
#include "ops/op_util.h"

#define MATMUL_T "bfloat16, half, float, double, int32, int64, uint8, int8"

bool tfc_matmul_out_shape(tfc_shape_ctx *c, tfc_shape *out, tfc_status *st) {
    const tfc_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
    if (a->rank >= 0 && a->rank != 2) return TFC_OP_ERR(c, st, "In[0] is not a matrix. Instead it has shape %s", SHP(a));
    if (b->rank >= 0 && b->rank != 2) return TFC_OP_ERR(c, st, "In[1] is not a matrix. Instead it has shape %s", SHP(b));
    bool ta = tfc_attrs_bool(c->attrs, "transpose_a", false), tb = tfc_attrs_bool(c->attrs, "transpose_b", false);
    *out = (tfc_shape){.rank = 2, .dims = {-1, -1}};
    int64_t ka = -1, kb = -1;
    if (a->rank == 2) {
        out->dims[0] = a->dims[ta ? 1 : 0];
        ka = a->dims[ta ? 0 : 1];
    }
    if (b->rank == 2) {
        out->dims[1] = b->dims[tb ? 0 : 1];
        kb = b->dims[tb ? 1 : 0];
    }
    if (ka >= 0 && kb >= 0 && ka != kb)
        return TFC_OP_ERR(c, st, "Matrix size-incompatible: In[0]: %s, In[1]: %s (transpose_a=%s, transpose_b=%s)", SHP(a),
                          SHP(b), ta ? "true" : "false", tb ? "true" : "false");
    return true;
}

static bool matmul_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_shape out;
    if (!tfc_matmul_out_shape(c, &out, st)) return false;
    tfc_set_out(c, 0, &out);
    return true;
}

static bool batch_matmul_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[0], *y = &c->in_shapes[1];
    if (x->rank >= 0 && x->rank < 2) return TFC_OP_ERR(c, st, "In[0] ndims must be >= 2: %d (shape %s)", x->rank, SHP(x));
    if (y->rank >= 0 && y->rank < 2) return TFC_OP_ERR(c, st, "In[1] ndims must be >= 2: %d (shape %s)", y->rank, SHP(y));
    tfc_shape out = {.rank = -1};
    if (x->rank < 0 || y->rank < 0) {
        tfc_set_out(c, 0, &out);
        return true;
    }
    bool ax = tfc_attrs_bool(c->attrs, "adj_x", false), ay = tfc_attrs_bool(c->attrs, "adj_y", false);
    int64_t m = x->dims[x->rank - (ax ? 1 : 2)], kx = x->dims[x->rank - (ax ? 2 : 1)];
    int64_t ky = y->dims[y->rank - (ay ? 1 : 2)], n = y->dims[y->rank - (ay ? 2 : 1)];
    if (kx >= 0 && ky >= 0 && kx != ky)
        return TFC_OP_ERR(c, st, "Matrix size-incompatible: In[0]: %s, In[1]: %s (adj_x=%s, adj_y=%s)", SHP(x), SHP(y),
                          ax ? "true" : "false", ay ? "true" : "false");
    tfc_shape bx = {.rank = x->rank - 2}, by = {.rank = y->rank - 2};
    for (int i = 0; i < bx.rank; i++) bx.dims[i] = x->dims[i];
    for (int i = 0; i < by.rank; i++) by.dims[i] = y->dims[i];
    tfc_status bst = TFC_STATUS_INIT;
    if (!tfc_broadcast_shapes(&bx, &by, &out, c->op->name, &bst))
        return TFC_OP_ERR(c, st, "In[0] and In[1] must have compatible batch dimensions: %s vs. %s", SHP(x), SHP(y));
    out.dims[out.rank++] = m;
    out.dims[out.rank++] = n;
    if (!tfc_check_out_shape(c, &out, st)) return false;
    tfc_set_out(c, 0, &out);
    return true;
}

/* _MatMulGrad: for C = op(A) op(B), dA and dB are products of dC with the other operand, transposed so
 * that each has its input's layout. */
static bool matmul_grad(tfc_grad_ctx *g, tfc_status *st) {
    bool ta = tfc_attrs_bool(g->attrs, "transpose_a", false), tb = tfc_attrs_bool(g->attrs, "transpose_b", false);
    tfc_tensor *a = g->in[0], *b = g->in[1], *d = g->dy[0];
    tfc_tensor *ga_in[2], *gb_in[2];
    bool ga_t[2], gb_t[2];
    if (!ta && !tb) {
        ga_in[0] = d, ga_in[1] = b, ga_t[0] = false, ga_t[1] = true;
        gb_in[0] = a, gb_in[1] = d, gb_t[0] = true, gb_t[1] = false;
    } else if (!ta && tb) {
        ga_in[0] = d, ga_in[1] = b, ga_t[0] = false, ga_t[1] = false;
        gb_in[0] = d, gb_in[1] = a, gb_t[0] = true, gb_t[1] = false;
    } else if (ta && !tb) {
        ga_in[0] = b, ga_in[1] = d, ga_t[0] = false, ga_t[1] = true;
        gb_in[0] = a, gb_in[1] = d, gb_t[0] = false, gb_t[1] = false;
    } else {
        ga_in[0] = b, ga_in[1] = d, ga_t[0] = true, ga_t[1] = true;
        gb_in[0] = d, gb_in[1] = a, gb_t[0] = true, gb_t[1] = true;
    }
    tfc_attr aa[2] = {TFC_ATTR_B("transpose_a", ga_t[0]), TFC_ATTR_B("transpose_b", ga_t[1])};
    tfc_attr ab[2] = {TFC_ATTR_B("transpose_a", gb_t[0]), TFC_ATTR_B("transpose_b", gb_t[1])};
    if (TFC_GRAD_NEEDS(g, 0) && !(g->dx[0] = tfc_emit(g->ctx, "MatMul", ga_in, 2, aa, 2, st))) return false;
    return !TFC_GRAD_NEEDS(g, 1) || (g->dx[1] = tfc_emit(g->ctx, "MatMul", gb_in, 2, ab, 2, st));
}

/* _BatchMatMulV2Grad: as MatMul per batch, then the broadcast batch dims are summed away. */
static bool batch_matmul_grad(tfc_grad_ctx *g, tfc_status *st) {
    bool ax = tfc_attrs_bool(g->attrs, "adj_x", false), ay = tfc_attrs_bool(g->attrs, "adj_y", false);
    tfc_tensor *x = g->in[0], *y = g->in[1], *d = g->dy[0];
    tfc_tensor *gx_in[2], *gy_in[2];
    bool gx_a[2], gy_a[2];
    if (!ax && !ay) {
        gx_in[0] = d, gx_in[1] = y, gx_a[0] = false, gx_a[1] = true;
        gy_in[0] = x, gy_in[1] = d, gy_a[0] = true, gy_a[1] = false;
    } else if (!ax && ay) {
        gx_in[0] = d, gx_in[1] = y, gx_a[0] = false, gx_a[1] = false;
        gy_in[0] = d, gy_in[1] = x, gy_a[0] = true, gy_a[1] = false;
    } else if (ax && !ay) {
        gx_in[0] = y, gx_in[1] = d, gx_a[0] = false, gx_a[1] = true;
        gy_in[0] = x, gy_in[1] = d, gy_a[0] = false, gy_a[1] = false;
    } else {
        gx_in[0] = y, gx_in[1] = d, gx_a[0] = true, gx_a[1] = true;
        gy_in[0] = d, gy_in[1] = x, gy_a[0] = true, gy_a[1] = true;
    }
    tfc_attr a1[2] = {TFC_ATTR_B("adj_x", gx_a[0]), TFC_ATTR_B("adj_y", gx_a[1])};
    tfc_attr a2[2] = {TFC_ATTR_B("adj_x", gy_a[0]), TFC_ATTR_B("adj_y", gy_a[1])};
    tfc_tensor *gx = tfc_emit(g->ctx, "BatchMatMulV2", gx_in, 2, a1, 2, st);
    tfc_tensor *gy = gx ? tfc_emit(g->ctx, "BatchMatMulV2", gy_in, 2, a2, 2, st) : NULL;
    return gy && (g->dx[0] = tfc_grad_unbroadcast(g->ctx, gx, x, st)) &&
           (g->dx[1] = tfc_grad_unbroadcast(g->ctx, gy, y, st));
}

const tfc_op_def tfc_op_def_mat_mul = {
    .name = "MatMul", .inputs = "a: T, b: T", .outputs = "product: T",
    .attrs = "transpose_a: bool = false, transpose_b: bool = false, T: {" MATMUL_T "}, "
             "grad_a: bool = false, grad_b: bool = false",
    .shape = matmul_shape, .grad = matmul_grad,
};
const tfc_op_def tfc_op_def_batch_mat_mul_v2 = {
    .name = "BatchMatMulV2", .inputs = "x: T, y: T", .outputs = "output: T",
    .attrs = "T: {" MATMUL_T ", int16}, adj_x: bool = false, adj_y: bool = false, "
             "grad_x: bool = false, grad_y: bool = false",
    .shape = batch_matmul_shape, .grad = batch_matmul_grad,
};

const tfc_op_def *const tfc_ops_linalg[] = {&tfc_op_def_mat_mul, &tfc_op_def_batch_mat_mul_v2, NULL};
