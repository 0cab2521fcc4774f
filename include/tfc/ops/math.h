/* tfc — typed wrappers for the elementwise math ops (TensorFlow's tf.math): arithmetic with NumPy
 * broadcasting, unary functions, comparisons, logical ops, tf.where (SelectV2), tf.cast, tf.clip_by_value
 * and tf.add_n. Each wrapper runs its op through tfc_execute, so it is recorded on active tapes and is
 * differentiable like the op (to any order).
 *
 * Common contract:
 *   - Binary ops take x and y of one dtype and broadcast them as NumPy (shapes are right-aligned; a dim
 *     of 1 stretches); the output has the broadcast shape. Unary ops keep x's shape and dtype.
 *   - dtypes: "floats" are float32, float64, float16 (half) and bfloat16; "signed" adds int8, int16, int32,
 *     int64; "real" adds uint8 to those. half and bfloat16 compute in float32 and round once.
 *     Integer arithmetic wraps around (two's complement), as TensorFlow's.
 *   - Returns a new tensor owned by the caller (or by the current scope), or NULL with st set:
 *       INVALID_ARGUMENT   shapes do not broadcast ("AddV2: Incompatible shapes: [2,3] vs. [4]"), dtypes
 *                          differ or are not allowed for the op, the output would have more than 2^63 - 1
 *                          elements, or an integer division by zero / negative integer power
 *       UNIMPLEMENTED      no kernel for the dtype (Cast to or from strings)
 *       RESOURCE_EXHAUSTED out of memory
 *   - Inputs are borrowed (never released by the wrapper). */
#ifndef TFC_OPS_MATH_H
#define TFC_OPS_MATH_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- binary arithmetic (broadcasting) ------------------------------------------------------------------ */

/* x + y (AddV2), x - y (Sub), x * y (Mul). Real dtypes. */
TFC_API tfc_tensor *tfc_add(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_sub(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_mul(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* x / y (RealDiv, tf.math.divide for floats). Real dtypes; integers divide truncating toward zero and a zero
 * divisor is INVALID_ARGUMENT "Integer division by zero". */
TFC_API tfc_tensor *tfc_div(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* tf.math.divide_no_nan (DivNoNan): x / y, and 0 wherever y == 0 (even for x NaN). Floats. */
TFC_API tfc_tensor *tfc_div_no_nan(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* tf.math.floordiv (FloorDiv): floor(x / y). tf.math.floormod (FloorMod): x - floor(x / y) * y, whose sign
 * follows y. Real dtypes; integer division by zero is INVALID_ARGUMENT. FloorDiv has no gradient. */
TFC_API tfc_tensor *tfc_floordiv(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_floormod(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* tf.pow (Pow): x^y. Signed dtypes; a negative integer exponent is INVALID_ARGUMENT ("Integers to negative
 * integer powers are not allowed"). */
TFC_API tfc_tensor *tfc_pow(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* tf.maximum / tf.minimum (Maximum, Minimum): a NaN in either input gives NaN. Real dtypes. The gradient goes
 * to x where x >= y (x <= y for minimum), else to y. */
TFC_API tfc_tensor *tfc_maximum(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_minimum(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* tf.math.squared_difference (SquaredDifference): (x - y)^2. Floats, int32, int64. */
TFC_API tfc_tensor *tfc_squared_difference(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);

/* ---- unary ---------------------------------------------------------------------------------------------- */

/* -x (Neg), |x| (Abs), sign(x) in {-1, 0, 1} (Sign; NaN stays NaN). Signed dtypes. */
TFC_API tfc_tensor *tfc_neg(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_abs(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_sign(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
/* x * x (Square). Real dtypes. */
TFC_API tfc_tensor *tfc_square(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
/* sqrt(x) (Sqrt), 1 / sqrt(x) (Rsqrt). Floats. */
TFC_API tfc_tensor *tfc_sqrt(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_rsqrt(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
/* 1 / x (Reciprocal). Signed dtypes (integer 1 / 0 is INVALID_ARGUMENT). */
TFC_API tfc_tensor *tfc_reciprocal(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
/* e^x (Exp), e^x - 1 (Expm1), ln x (Log; named tfc_math_log because tfc_log is the logger), ln(1 + x)
 * (Log1p), sin, cos, tanh, the logistic function 1 / (1 + e^-x) (Sigmoid, without overflow for any x), the
 * error function (Erf). Floats. */
TFC_API tfc_tensor *tfc_exp(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_expm1(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_math_log(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_log1p(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_sin(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_cos(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_tanh(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_sigmoid(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_erf(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
/* Floor, Ceil (floats) and Round (half to even, as tf.round; signed dtypes, integers unchanged). No
 * gradient (TensorFlow returns None). */
TFC_API tfc_tensor *tfc_floor(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_ceil(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_round(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);

/* ---- comparisons and logic (bool outputs, broadcasting, not differentiable) ------------------------------ */

/* x == y (Equal), x != y (NotEqual): every dtype including bool and string. With broadcasting shapes that
 * are incompatible this is INVALID_ARGUMENT (TensorFlow's incompatible_shape_error = true). */
TFC_API tfc_tensor *tfc_equal(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_not_equal(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* x < y (Less), x <= y (LessEqual), x > y (Greater), x >= y (GreaterEqual). Real dtypes. */
TFC_API tfc_tensor *tfc_less(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_less_equal(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_greater(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_greater_equal(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
/* LogicalAnd, LogicalOr (broadcasting) and LogicalNot on bool tensors. */
TFC_API tfc_tensor *tfc_logical_and(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_logical_or(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st);
TFC_API tfc_tensor *tfc_logical_not(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);

/* ---- selecting, casting, clipping, summing ---------------------------------------------------------------- */

/* tf.where(condition, t, e) (SelectV2): t where the bool condition holds, else e; the three shapes broadcast
 * together. t and e share a dtype (any, strings included). The gradient flows to t and e (not condition). */
TFC_API tfc_tensor *tfc_select(tfc_ctx *ctx, const tfc_tensor *condition, const tfc_tensor *t, const tfc_tensor *e,
                               tfc_status *st);
/* tf.cast (Cast) of x to dtype dt, between floats, integers and bool. Floating to integer truncates toward
 * zero; NaN and out-of-range values give the type's minimum for int32/int64 (as TensorFlow on x86) and
 * saturate for int8/uint8/int16 (NaN: the minimum); integer to integer keeps the low bits; anything to bool
 * is x != 0. Casting to the same dtype shares x's buffer. Between floating types the gradient is cast
 * back; other casts have none. UNIMPLEMENTED for strings. */
TFC_API tfc_tensor *tfc_cast(tfc_ctx *ctx, const tfc_tensor *x, tfc_dtype dt, tfc_status *st);
/* ClipByValue: min(max(t, clip_value_min), clip_value_max) computed as TensorFlow's kernel
 * (max(min(t, hi), lo), so lo wins when lo > hi). The bounds are scalars or have t's shape (the op does not
 * broadcast further). Real dtypes. */
TFC_API tfc_tensor *tfc_clip_by_value(tfc_ctx *ctx, const tfc_tensor *t, const tfc_tensor *clip_value_min,
                                      const tfc_tensor *clip_value_max, tfc_status *st);
/* tf.add_n (AddN): the elementwise sum of n >= 1 tensors of one shape and dtype (no broadcasting; at most 64
 * inputs). Real dtypes. */
TFC_API tfc_tensor *tfc_add_n(tfc_ctx *ctx, const tfc_tensor *const *inputs, int n, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
