/* Array ops (tensorflow/core/ops/array_ops.cc). */
#include "ops/op_util.h"

static bool identity_grad(tfc_grad_ctx *g, tfc_status *st) {
    g->dx[0] = g->dy[0];
    return true;
}

const tfc_op_def tfc_op_def_identity = {
    .name = "Identity", .inputs = "input: T", .outputs = "output: T", .attrs = "T: type",
    .shape = tfc_shape_same_as_input0, .grad = identity_grad,
};
const tfc_op_def tfc_op_def_zeros_like = {
    .name = "ZerosLike", .inputs = "x: T", .outputs = "y: T", .attrs = "T: {" TFC_T_REAL ", bool}",
    .shape = tfc_shape_same_as_input0, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_ones_like = {
    .name = "OnesLike", .inputs = "x: T", .outputs = "y: T", .attrs = "T: {" TFC_T_REAL ", bool}",
    .shape = tfc_shape_same_as_input0, .not_differentiable = true,
};

const tfc_op_def *const tfc_ops_array[] = {
    &tfc_op_def_identity, &tfc_op_def_zeros_like, &tfc_op_def_ones_like, NULL,
};
