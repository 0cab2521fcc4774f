/* Resource variable ops (tensorflow/core/ops/resource_variable_ops.cc). */
#include <string.h>

#include "ops/op_util.h"

static bool var_handle_shape(tfc_shape_ctx *c, tfc_status *st) {
    c->out_shapes[0].rank = 0;
    return true;
}

/* The value written must have the variable's dtype (checked by the kernel against the resource). */
static bool assign_shape(tfc_shape_ctx *c, tfc_status *st) {
    return tfc_check_rank(c, 0, 0, "resource handle", st);
}

static bool read_variable_shape(tfc_shape_ctx *c, tfc_status *st) {
    c->out_shapes[0].rank = -1; /* known from the resource only: the kernel allocates */
    return tfc_check_rank(c, 0, 0, "resource handle", st);
}

/* The gradient of a read flows to the variable (the tape keys the handle by the variable's id). */
static bool read_variable_grad(tfc_grad_ctx *g, tfc_status *st) {
    g->dx[0] = g->dy[0];
    return true;
}

const tfc_op_def tfc_op_def_var_handle_op = {
    .name = "VarHandleOp", .inputs = "", .outputs = "resource: resource",
    .attrs = "container: string = '', shared_name: string = '', dtype: type, shape: shape",
    .shape = var_handle_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_read_variable_op = {
    .name = "ReadVariableOp", .inputs = "resource: resource", .outputs = "value: dtype", .attrs = "dtype: type",
    .shape = read_variable_shape, .grad = read_variable_grad, .stateful = true,
};
const tfc_op_def tfc_op_def_assign_variable_op = {
    .name = "AssignVariableOp", .inputs = "resource: resource, value: dtype", .outputs = "", .attrs = "dtype: type",
    .shape = assign_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_assign_add_variable_op = {
    .name = "AssignAddVariableOp", .inputs = "resource: resource, value: dtype", .outputs = "", .attrs = "dtype: type",
    .shape = assign_shape, .not_differentiable = true, .stateful = true,
};
const tfc_op_def tfc_op_def_assign_sub_variable_op = {
    .name = "AssignSubVariableOp", .inputs = "resource: resource, value: dtype", .outputs = "", .attrs = "dtype: type",
    .shape = assign_shape, .not_differentiable = true, .stateful = true,
};

const tfc_op_def *const tfc_ops_resource[] = {
    &tfc_op_def_var_handle_op, &tfc_op_def_read_variable_op, &tfc_op_def_assign_variable_op,
    &tfc_op_def_assign_add_variable_op, &tfc_op_def_assign_sub_variable_op, NULL,
};
