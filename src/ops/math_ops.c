/* Math ops (tensorflow/core/ops/math_ops.cc): elementwise, matmul, reductions. */
#include "ops/op_util.h"

/* d(x+y) = dy, unbroadcast to each input's shape. */
static bool add_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (g->dx[0] = tfc_grad_unbroadcast(g->ctx, g->dy[0], g->in[0], st)) &&
           (g->dx[1] = tfc_grad_unbroadcast(g->ctx, g->dy[0], g->in[1], st));
}

static bool mul_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *a = tfc_emit(g->ctx, "Mul", (tfc_tensor *[]){g->dy[0], g->in[1]}, 2, NULL, 0, st);
    tfc_tensor *b = a ? tfc_emit(g->ctx, "Mul", (tfc_tensor *[]){g->in[0], g->dy[0]}, 2, NULL, 0, st) : NULL;
    return b && (g->dx[0] = tfc_grad_unbroadcast(g->ctx, a, g->in[0], st)) &&
           (g->dx[1] = tfc_grad_unbroadcast(g->ctx, b, g->in[1], st));
}

const tfc_op_def tfc_op_def_add_v2 = {
    .name = "AddV2", .inputs = "x: T, y: T", .outputs = "z: T", .attrs = "T: {" TFC_T_REAL "}",
    .shape = tfc_shape_broadcast_binary, .grad = add_grad,
};
const tfc_op_def tfc_op_def_mul = {
    .name = "Mul", .inputs = "x: T, y: T", .outputs = "z: T", .attrs = "T: {" TFC_T_REAL "}",
    .shape = tfc_shape_broadcast_binary, .grad = mul_grad,
};

const tfc_op_def *const tfc_ops_math[] = {
    &tfc_op_def_add_v2, &tfc_op_def_mul, NULL,
};
