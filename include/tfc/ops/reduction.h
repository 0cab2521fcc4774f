/* tfc — typed wrappers for the reductions: tf.reduce_sum, tf.reduce_mean, tf.reduce_max, tf.reduce_min,
 * tf.reduce_prod, tf.reduce_all, tf.reduce_any (TensorFlow's Sum, Mean, Max, Min, Prod, All, Any ops) and
 * tf.argmax / tf.argmin (ArgMax, ArgMin). Each wrapper runs its op through tfc_execute, so it is recorded
 * on active tapes and is differentiable like the op (Sum, Mean, Max, Min, Prod; to any order).
 *
 * Common contract:
 *   - axes: n_axes dims to reduce, each in [-rank, rank) (negative counts from the end), no dim twice;
 *     axes == NULL reduces every dim (tf.reduce_*(x) with axis=None); n_axes == 0 with a non-NULL axes
 *     reduces nothing (a copy). keepdims keeps each reduced dim with size 1.
 *   - dtypes: Sum, Mean, Max, Min, Prod take float32, float64, float16, bfloat16, int8, uint8, int16, int32,
 *     int64; All and Any take bool. The output has the input's dtype.
 *   - Numerics (as TensorFlow): float32 sums are accumulated so that the error stays near one ulp of the
 *     result; half and bfloat16 accumulate in float32; integer sums and products wrap around; an integer
 *     Mean truncates toward zero. Max and Min propagate NaN. Reducing an empty dim gives the identity:
 *     Sum 0, Prod 1, Max the dtype's lowest value (-inf for floats), Min its highest, All true, Any false,
 *     Mean NaN for floats and 0 for integers.
 *   - Returns a new tensor owned by the caller (or by the current scope), or NULL with st set:
 *       INVALID_ARGUMENT   an axis is out of range ("Invalid reduction dimension (2 for input with 2
 *                          dimension(s)") or repeated ("Axes contains duplicate dimension: 0"), or the dtype
 *                          is not allowed
 *       RESOURCE_EXHAUSTED out of memory
 *   - Inputs are borrowed (never released by the wrapper). */
#ifndef TFC_OPS_REDUCTION_H
#define TFC_OPS_REDUCTION_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.reduce_sum(x, axis=axes, keepdims) (Sum): x of any shape -> x's shape without the reduced dims (kept as 1 with
 * keepdims); dtypes and errors as the common contract above. */
TFC_API tfc_tensor *tfc_reduce_sum(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,
                                   tfc_status *st);
/* tf.reduce_mean(x, axis=axes, keepdims) (Mean): x of any shape -> x's shape without the reduced dims (kept as 1
 * with keepdims); dtypes and errors as the common contract above. */
TFC_API tfc_tensor *tfc_reduce_mean(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,
                                    tfc_status *st);
/* tf.reduce_max(x, axis=axes, keepdims) (Max): x of any shape -> x's shape without the reduced dims (kept as 1 with
 * keepdims); dtypes and errors as the common contract above. */
TFC_API tfc_tensor *tfc_reduce_max(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,
                                   tfc_status *st);
/* tf.reduce_min(x, axis=axes, keepdims) (Min): x of any shape -> x's shape without the reduced dims (kept as 1 with
 * keepdims); dtypes and errors as the common contract above. */
TFC_API tfc_tensor *tfc_reduce_min(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,
                                   tfc_status *st);
/* tf.reduce_prod(x, axis=axes, keepdims) (Prod): x of any shape -> x's shape without the reduced dims (kept as 1
 * with keepdims); dtypes and errors as the common contract above. */
TFC_API tfc_tensor *tfc_reduce_prod(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,
                                    tfc_status *st);
/* tf.reduce_all(x, axis=axes, keepdims) (All): x of any shape -> x's shape without the reduced dims (kept as 1 with
 * keepdims); dtypes and errors as the common contract above. */
TFC_API tfc_tensor *tfc_reduce_all(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,
                                   tfc_status *st);
/* tf.reduce_any(x, axis=axes, keepdims) (Any): x of any shape -> x's shape without the reduced dims (kept as 1 with
 * keepdims); dtypes and errors as the common contract above. */
TFC_API tfc_tensor *tfc_reduce_any(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n_axes, bool keepdims,
                                   tfc_status *st);

/* tf.math.argmax / tf.math.argmin (ArgMax, ArgMin): the index along `axis` (in [-rank, rank)) of the largest
 * (smallest) element; ties give the first index and NaNs are skipped. The output drops `axis`; its dtype is
 * output_type: TFC_INT32 or TFC_INT64 (0 means TFC_INT64, TensorFlow's default; ArgMax also takes TFC_INT16).
 * x: any real dtype or bool. INVALID_ARGUMENT also when x is a scalar or the dim at `axis` is 0
 * ("Reduction axis 1 is empty in shape [2,0]"). Not differentiable. */
TFC_API tfc_tensor *tfc_argmax(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_dtype output_type, tfc_status *st);
TFC_API tfc_tensor *tfc_argmin(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_dtype output_type, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
