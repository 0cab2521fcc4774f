/* Ops that exist for graphs (TensorFlow's Const, Placeholder, NoOp and the function-call ops). Their
 * definitions serve the graph IR (src/graph) and GraphDef import/export; Const also runs eagerly. */
#include "core/tensor_internal.h"
#include "ops/op_util.h"

static bool const_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_attr *v = tfc_attrs_find(c->attrs, "value");
    if (!v || v->kind != TFC_ATTR_TENSOR || !v->v.tensor) return TFC_OP_ERR(c, st, "attr 'value' is missing");
    if (v->v.tensor->dtype != tfc_attrs_type(c->attrs, "dtype", TFC_INVALID_DTYPE))
        return TFC_OP_ERR(c, st, "attr 'value' has dtype %s but attr 'dtype' is %s",
                          tfc_dtype_name(v->v.tensor->dtype),
                          tfc_dtype_name(tfc_attrs_type(c->attrs, "dtype", TFC_INVALID_DTYPE)));
    tfc_set_out(c, 0, &v->v.tensor->shape);
    return true;
}

static bool placeholder_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_attr *a = tfc_attrs_find(c->attrs, "shape");
    tfc_shape s = {.rank = -1};
    if (a && a->kind == TFC_ATTR_SHAPE && a->n >= 0 && !tfc_shape_make(&s, a->v.ints, a->n, st)) return false;
    tfc_set_out(c, 0, &s);
    return true;
}

/* Results of a call are as the called function's (set by whoever adds the node); unknown here. */
static bool call_shape(tfc_shape_ctx *c, tfc_status *st) {
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i].rank = -1;
    return true;
}

const tfc_op_def tfc_op_def_const = {
    .name = "Const", .inputs = "", .outputs = "output: dtype", .attrs = "value: tensor, dtype: type",
    .shape = const_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_placeholder = {
    .name = "Placeholder", .inputs = "", .outputs = "output: dtype", .attrs = "dtype: type, shape: shape = []",
    .shape = placeholder_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_no_op = {.name = "NoOp", .inputs = "", .outputs = "", .attrs = "", .not_differentiable = true};

#define CALL_ATTRS "Tin: list(type) >= 0, Tout: list(type) >= 0, f: func, config: string = '', " \
                   "config_proto: string = '', executor_type: string = ''"
const tfc_op_def tfc_op_def_partitioned_call = {
    .name = "PartitionedCall", .inputs = "args: Tin", .outputs = "output: Tout", .attrs = CALL_ATTRS,
    .shape = call_shape,
};
const tfc_op_def tfc_op_def_stateful_partitioned_call = {
    .name = "StatefulPartitionedCall", .inputs = "args: Tin", .outputs = "output: Tout", .attrs = CALL_ATTRS,
    .shape = call_shape, .stateful = true,
};

const tfc_op_def *const tfc_ops_graph[] = {
    &tfc_op_def_const, &tfc_op_def_placeholder, &tfc_op_def_no_op, &tfc_op_def_partitioned_call,
    &tfc_op_def_stateful_partitioned_call, NULL,
};
