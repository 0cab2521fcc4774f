/* Typed wrappers for the reductions (include/tfc/ops/reduction.h). */
#include "core/tensor_internal.h"
#include "tfc/ops/reduction.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */

/* Runs a reduction op with axes given as an int32 vector (TensorFlow converts Python lists to int32);
 * axes == NULL reduces every dim. */
static tfc_tensor *reduce(tfc_ctx *ctx, const char *op, const tfc_tensor *x, const int64_t *axes, int n_axes,
                          bool keepdims, tfc_status *st) {
    if (!x) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input is NULL", op);
        return NULL;
    }
    if (n_axes < 0 || n_axes > 64) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %d axes is outside [0, 64]", op, n_axes);
        return NULL;
    }
    int32_t ax[64];
    int n = 0;
    if (!axes) {
        for (int i = 0; i < x->shape.rank; i++) ax[n++] = i;
    } else {
        for (int i = 0; i < n_axes; i++) {
            if (axes[i] < INT32_MIN || axes[i] > INT32_MAX) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Invalid reduction dimension (%lld for input with %d "
                               "dimension(s)", op, (long long)axes[i], x->shape.rank);
                return NULL;
            }
            ax[n++] = (int32_t)axes[i];
        }
    }
    tfc_tensor *at = tfc_vec_i32(ax, n, st);
    if (!at) return NULL;
    tfc_attr a = TFC_ATTR_B("keep_dims", keepdims);
    tfc_tensor *r = tfc_emit(ctx, op, (tfc_tensor *[]){T(x), at}, 2, &a, 1, st);
    tfc_tensor_unref(at);
    return r;
}

#define REDUCE(fn, op)                                                                                      \
    tfc_tensor *fn(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,       \
                   tfc_status *st) {                                                                        \
        return reduce(ctx, op, x, axes, n_axes, keepdims, st);                                              \
    }

REDUCE(tfc_reduce_sum, "Sum")
REDUCE(tfc_reduce_mean, "Mean")
REDUCE(tfc_reduce_max, "Max")
REDUCE(tfc_reduce_min, "Min")
REDUCE(tfc_reduce_prod, "Prod")
REDUCE(tfc_reduce_all, "All")
REDUCE(tfc_reduce_any, "Any")

static tfc_tensor *arg_reduce(tfc_ctx *ctx, const char *op, const tfc_tensor *x, int64_t axis, tfc_dtype output_type,
                              tfc_status *st) {
    tfc_tensor *d = tfc_scalar_i64(axis, st);
    if (!d) return NULL;
    tfc_attr a = TFC_ATTR_T("output_type", output_type ? output_type : TFC_INT64);
    tfc_tensor *r = tfc_emit(ctx, op, (tfc_tensor *[]){T(x), d}, 2, &a, 1, st);
    tfc_tensor_unref(d);
    return r;
}

tfc_tensor *tfc_argmax(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_dtype output_type, tfc_status *st) {
    return arg_reduce(ctx, "ArgMax", x, axis, output_type, st);
}

tfc_tensor *tfc_argmin(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_dtype output_type, tfc_status *st) {
    return arg_reduce(ctx, "ArgMin", x, axis, output_type, st);
}
