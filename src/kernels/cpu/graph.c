/* CPU kernels of the graph ops: Const gives its value (sharing the buffer), NoOp does nothing. */
#include "core/tensor_internal.h"
#include "kernels/cpu/kernels.h"

static bool const_k(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_attr *v = tfc_attrs_find(k->attrs, "value");
    tfc_tensor *val = (tfc_tensor *)v->v.tensor;
    tfc_tensor *t = tfc_tensor_share(val, &val->shape, st);
    if (!t) return false;
    tfc_tensor_unref(k->out[0]);
    k->out[0] = t;
    return true;
}

static bool no_op(tfc_kernel_ctx *k, tfc_status *st) { return true; }

const tfc_kernel_reg tfc_cpu_kernels_graph[] = {{"Const", const_k}, {"NoOp", no_op}, {NULL, NULL}};
