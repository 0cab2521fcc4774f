/* Typed wrappers for the elementwise math ops (include/tfc/ops/math.h): each builds its attrs and calls
 * tfc_emit. */
#include "tfc/ops/math.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */

#define UNARY(fn, op)                                                                                \
    tfc_tensor *fn(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st) {                              \
        tfc_tensor *in[1] = {T(x)};                                                                  \
        return tfc_emit(ctx, op, in, 1, NULL, 0, st);                                                \
    }
#define BINARY(fn, op)                                                                               \
    tfc_tensor *fn(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *y, tfc_status *st) {         \
        tfc_tensor *in[2] = {T(x), T(y)};                                                            \
        return tfc_emit(ctx, op, in, 2, NULL, 0, st);                                                \
    }

BINARY(tfc_add, "AddV2")
BINARY(tfc_sub, "Sub")
BINARY(tfc_mul, "Mul")
BINARY(tfc_div, "RealDiv")
BINARY(tfc_div_no_nan, "DivNoNan")
BINARY(tfc_floordiv, "FloorDiv")
BINARY(tfc_floormod, "FloorMod")
BINARY(tfc_pow, "Pow")
BINARY(tfc_maximum, "Maximum")
BINARY(tfc_minimum, "Minimum")
BINARY(tfc_squared_difference, "SquaredDifference")

UNARY(tfc_neg, "Neg")
UNARY(tfc_abs, "Abs")
UNARY(tfc_sign, "Sign")
UNARY(tfc_square, "Square")
UNARY(tfc_sqrt, "Sqrt")
UNARY(tfc_rsqrt, "Rsqrt")
UNARY(tfc_reciprocal, "Reciprocal")
UNARY(tfc_exp, "Exp")
UNARY(tfc_expm1, "Expm1")
UNARY(tfc_math_log, "Log")
UNARY(tfc_log1p, "Log1p")
UNARY(tfc_sin, "Sin")
UNARY(tfc_cos, "Cos")
UNARY(tfc_tanh, "Tanh")
UNARY(tfc_sigmoid, "Sigmoid")
UNARY(tfc_erf, "Erf")
UNARY(tfc_floor, "Floor")
UNARY(tfc_ceil, "Ceil")
UNARY(tfc_round, "Round")

BINARY(tfc_equal, "Equal")
BINARY(tfc_not_equal, "NotEqual")
BINARY(tfc_less, "Less")
BINARY(tfc_less_equal, "LessEqual")
BINARY(tfc_greater, "Greater")
BINARY(tfc_greater_equal, "GreaterEqual")
BINARY(tfc_logical_and, "LogicalAnd")
BINARY(tfc_logical_or, "LogicalOr")
UNARY(tfc_logical_not, "LogicalNot")

tfc_tensor *tfc_select(tfc_ctx *ctx, const tfc_tensor *condition, const tfc_tensor *t, const tfc_tensor *e,
                       tfc_status *st) {
    tfc_tensor *in[3] = {T(condition), T(t), T(e)};
    return tfc_emit(ctx, "SelectV2", in, 3, NULL, 0, st);
}

tfc_tensor *tfc_cast(tfc_ctx *ctx, const tfc_tensor *x, tfc_dtype dt, tfc_status *st) {
    tfc_tensor *in[1] = {T(x)};
    tfc_attr a = TFC_ATTR_T("DstT", dt);
    return tfc_emit(ctx, "Cast", in, 1, &a, 1, st);
}

tfc_tensor *tfc_clip_by_value(tfc_ctx *ctx, const tfc_tensor *t, const tfc_tensor *clip_value_min,
                              const tfc_tensor *clip_value_max, tfc_status *st) {
    tfc_tensor *in[3] = {T(t), T(clip_value_min), T(clip_value_max)};
    return tfc_emit(ctx, "ClipByValue", in, 3, NULL, 0, st);
}

tfc_tensor *tfc_add_n(tfc_ctx *ctx, const tfc_tensor *const *inputs, int n, tfc_status *st) {
    if (n < 1 || n > 64 || !inputs) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "AddN: %d inputs is outside [1, 64]", n);
        return NULL;
    }
    tfc_tensor *in[64];
    for (int i = 0; i < n; i++) in[i] = T(inputs[i]);
    return tfc_emit(ctx, "AddN", in, n, NULL, 0, st);
}
