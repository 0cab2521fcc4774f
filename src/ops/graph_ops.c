/* Ops that exist for graphs (TensorFlow's Const, Placeholder and NoOp; the function-call ops are in src/graph). Their
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

const tfc_op_def tfc_op_def_const = {
    .name = "Const", .inputs = "", .outputs = "output: dtype", .attrs = "value: tensor, dtype: type",
    .shape = const_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_placeholder = {
    .name = "Placeholder", .inputs = "", .outputs = "output: dtype", .attrs = "dtype: type, shape: shape = unknown",
    .shape = placeholder_shape, .not_differentiable = true,
};
const tfc_op_def tfc_op_def_no_op = {.name = "NoOp", .inputs = "", .outputs = "", .attrs = "", .not_differentiable = true};

/* BroadcastGradientArgs: two shape vectors -> the reduction indices of each input's gradient (dims the input lacks
 * or has as 1 where the broadcast result does not). Lengths depend on the values: unknown here. */
static bool bga_shape(tfc_shape_ctx *c, tfc_status *st) {
    for (int i = 0; i < 2; i++)
        if (c->in_shapes[i].rank >= 0 && c->in_shapes[i].rank != 1)
            return TFC_OP_ERR(c, st, "s%d must be a vector, got shape %s", i, SHP(&c->in_shapes[i]));
    tfc_shape v = {.rank = 1, .dims = {-1}};
    tfc_set_out(c, 0, &v);
    tfc_set_out(c, 1, &v);
    return true;
}
const tfc_op_def tfc_op_def_broadcast_gradient_args = {
    .name = "BroadcastGradientArgs", .inputs = "s0: T, s1: T", .outputs = "r0: T, r1: T",
    .attrs = "T: {int32, int64} = int32", .shape = bga_shape, .not_differentiable = true,
};

const tfc_op_def *const tfc_ops_graph[] = {
    &tfc_op_def_const, &tfc_op_def_placeholder, &tfc_op_def_no_op, &tfc_op_def_broadcast_gradient_args, NULL,
};
