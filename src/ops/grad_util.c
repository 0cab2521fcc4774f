/* Helpers shared by gradient functions. */
#include "core/tensor_internal.h"
#include "ops/op_util.h"

/* Shapes not fully known (a graph traced with unknown dims): TensorFlow's symbolic form,
 * Reshape(Sum(grad, BroadcastGradientArgs(Shape(x), Shape(grad))[0]), Shape(x)). */
static tfc_tensor *unbroadcast_symbolic(tfc_ctx *ctx, tfc_tensor *grad, const tfc_tensor *x, tfc_status *st) {
    tfc_attr i64 = TFC_ATTR_T("out_type", TFC_INT64);
    tfc_tensor *sx = tfc_emit(ctx, "Shape", (tfc_tensor *[]){(tfc_tensor *)x}, 1, &i64, 1, st), *r[2];
    tfc_tensor *sg = sx ? tfc_emit(ctx, "Shape", &grad, 1, &i64, 1, st) : NULL;
    if (!sg || tfc_execute(ctx, "BroadcastGradientArgs", (tfc_tensor *[]){sx, sg}, 2, NULL, 0, r, 2, st) != 2)
        return NULL;
    tfc_tensor *sum = tfc_emit(ctx, "Sum", (tfc_tensor *[]){grad, r[0]}, 2, NULL, 0, st);
    return sum ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){sum, sx}, 2, NULL, 0, st) : NULL;
}

tfc_tensor *tfc_grad_unbroadcast(tfc_ctx *ctx, tfc_tensor *grad, const tfc_tensor *x, tfc_status *st) {
    const tfc_shape *gs = &grad->shape, *xs = &x->shape;
    if (!tfc_shape_is_fully_defined(gs) || !tfc_shape_is_fully_defined(xs)) {
        return unbroadcast_symbolic(ctx, grad, x, st);
    }
    if (tfc_shape_equal(gs, xs)) return grad;
    int64_t axes[TFC_MAX_RANK];
    int n = 0, off = gs->rank - xs->rank;
    for (int i = 0; i < gs->rank; i++)
        if (i < off || (xs->dims[i - off] == 1 && gs->dims[i] != 1)) axes[n++] = i;
    tfc_tensor *ax = tfc_vec_i64(axes, n, st);
    if (!ax) return NULL;
    tfc_tensor *sum = tfc_emit(ctx, "Sum", (tfc_tensor *[]){grad, ax}, 2, NULL, 0, st);
    tfc_tensor_unref(ax);
    if (!sum) return NULL;
    tfc_tensor *shape = tfc_vec_i64(xs->dims, xs->rank, st);
    if (!shape) return NULL;
    tfc_tensor *r = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){sum, shape}, 2, NULL, 0, st);
    tfc_tensor_unref(shape);
    return r;
}
