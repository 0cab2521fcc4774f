/* Elementwise math ops (tensorflow/core/ops/math_ops.cc): broadcasting binary arithmetic, unary functions,
 * comparisons and logical ops, SelectV2, Cast, ClipByValue, AddN and the *Grad helper ops. Gradients
 * mirror tensorflow/python/ops/math_grad.py (and clip_ops.py for ClipByValue); they emit ops, so they are
 * differentiable again. */
#include "ops/op_util.h"

/* ---- shape functions ------------------------------------------------------------------------------------ */

/* NumPy broadcasting of x and y, with the output element count checked for overflow. */
static bool bcast_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!tfc_shape_broadcast_binary(c, st)) return false;
    return c->out_shapes[0].rank < 0 || tfc_check_out_shape(c, &c->out_shapes[0], st);
}

/* Equal/NotEqual: with incompatible_shape_error = false, shapes that do not broadcast give a scalar. */
static bool equality_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_shape out;
    tfc_status probe = TFC_STATUS_INIT;
    if (!tfc_attrs_bool(c->attrs, "incompatible_shape_error", true) &&
        !tfc_broadcast_shapes(&c->in_shapes[0], &c->in_shapes[1], &out, c->op->name, &probe)) {
        c->out_shapes[0].rank = 0;
        return true;
    }
    return bcast_shape(c, st);
}

/* a and b can be the same shape (unknown dims and ranks match anything); *out gets the merged shape. */
static bool merge_shapes(const tfc_shape *a, const tfc_shape *b, tfc_shape *out) {
    if (a->rank < 0 || b->rank < 0) {
        *out = a->rank < 0 ? *b : *a;
        return true;
    }
    if (a->rank != b->rank) return false;
    tfc_shape m = *a; /* out may alias a or b */
    for (int i = 0; i < a->rank; i++) {
        if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) return false;
        if (a->dims[i] < 0) m.dims[i] = b->dims[i];
    }
    *out = m;
    return true;
}

/* SqrtGrad and friends: y and dy have one shape. */
static bool grad_helper_shape(tfc_shape_ctx *c, tfc_status *st) {
    if (!merge_shapes(&c->in_shapes[0], &c->in_shapes[1], &c->out_shapes[0]))
        return TFC_OP_ERR(c, st, "y and dy must have the same shape, got %s and %s", SHP(&c->in_shapes[0]),
                          SHP(&c->in_shapes[1]));
    return true;
}

static bool select_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_shape te, out;
    tfc_status probe = TFC_STATUS_INIT;
    if (!tfc_broadcast_shapes(&c->in_shapes[1], &c->in_shapes[2], &te, c->op->name, &probe) ||
        !tfc_broadcast_shapes(&c->in_shapes[0], &te, &out, c->op->name, &probe))
        return TFC_OP_ERR(c, st, "condition %s, then %s, and else %s must be broadcastable", SHP(&c->in_shapes[0]),
                          SHP(&c->in_shapes[1]), SHP(&c->in_shapes[2]));
    tfc_set_out(c, 0, &out);
    return out.rank < 0 || tfc_check_out_shape(c, &out, st);
}

/* clip_value_min and clip_value_max are scalars or have t's shape (TensorFlow's kernel does not broadcast). */
static bool clip_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *t = &c->in_shapes[0];
    tfc_shape m;
    for (int i = 1; i < 3; i++) {
        const tfc_shape *s = &c->in_shapes[i];
        if (s->rank != 0 && !merge_shapes(s, t, &m))
            return TFC_OP_ERR(c, st,
                              "clip_value_min and clip_value_max must be either of the same shape as input, or a "
                              "scalar. input shape: %s clip_value_min shape: %s clip_value_max shape: %s",
                              SHP(t), SHP(&c->in_shapes[1]), SHP(&c->in_shapes[2]));
    }
    tfc_set_out(c, 0, t);
    return true;
}

static bool add_n_shape(tfc_shape_ctx *c, tfc_status *st) {
    tfc_shape cur = c->in_shapes[c->n_in - 1];
    for (int i = c->n_in - 2; i >= 0; i--)
        if (!merge_shapes(&c->in_shapes[i], &cur, &cur))
            return TFC_OP_ERR(c, st,
                              "Inputs to operation AddN of type AddN must have the same size and shape.  Input %d: "
                              "%s != input %d: %s",
                              i, SHP(&c->in_shapes[i]), i + 1, SHP(&c->in_shapes[i + 1]));
    tfc_set_out(c, 0, &cur);
    return true;
}

/* ---- gradient helpers -------------------------------------------------------------------------------------
 * Each returns NULL when an argument is NULL (a failure earlier in a chain, st already set), so
 * expressions nest: mul(g, dy, op1(g, "Cos", x, st), st). */
/* The arguments of one call are evaluated in any order, and a successful emit clears st: so a helper does nothing
 * once st holds an error, or a later success would hide an earlier failure (a NULL gradient with st OK). The tape
 * clears st before calling a gradient function. */
static tfc_tensor *op1(tfc_grad_ctx *g, const char *op, tfc_tensor *a, tfc_status *st) {
    return a && st->code == TFC_OK ? tfc_emit(g->ctx, op, &a, 1, NULL, 0, st) : NULL;
}
static tfc_tensor *op2(tfc_grad_ctx *g, const char *op, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    tfc_tensor *in[2] = {a, b};
    return a && b && st->code == TFC_OK ? tfc_emit(g->ctx, op, in, 2, NULL, 0, st) : NULL;
}
static tfc_tensor *mul(tfc_grad_ctx *g, tfc_tensor *a, tfc_tensor *b, tfc_status *st) { return op2(g, "Mul", a, b, st); }
/* op(a, v) with a scalar constant v of a's dtype (op(v, a) when const_first). */
static tfc_tensor *opc(tfc_grad_ctx *g, const char *op, tfc_tensor *a, double v, bool const_first, tfc_status *st) {
    if (!a || st->code != TFC_OK) return NULL;
    tfc_tensor *k = tfc_scalar(tfc_tensor_dtype(a), v, st);
    if (!k) return NULL;
    tfc_tensor *r = const_first ? op2(g, op, k, a, st) : op2(g, op, a, k, st);
    tfc_tensor_unref(k);
    return r;
}
/* SelectV2(c, x, v) with a scalar constant v of x's dtype (SelectV2(c, v, x) when const_first). */
static tfc_tensor *select_c(tfc_grad_ctx *g, tfc_tensor *c, tfc_tensor *x, double v, bool const_first, tfc_status *st) {
    if (!c || !x || st->code != TFC_OK) return NULL;
    tfc_tensor *k = tfc_scalar(tfc_tensor_dtype(x), v, st);
    if (!k) return NULL;
    tfc_tensor *in[3] = {c, const_first ? k : x, const_first ? x : k};
    tfc_tensor *r = tfc_emit(g->ctx, "SelectV2", in, 3, NULL, 0, st);
    tfc_tensor_unref(k);
    return r;
}
static tfc_tensor *select0(tfc_grad_ctx *g, tfc_tensor *c, tfc_tensor *x, bool zero_first, tfc_status *st) {
    return select_c(g, c, x, 0, zero_first, st);
}
/* dx[i] = grad summed down to input i's shape (undoes broadcasting). */
static bool set_dx(tfc_grad_ctx *g, int i, tfc_tensor *grad, tfc_status *st) {
    if (!grad) return false;
    return (g->dx[i] = tfc_grad_unbroadcast(g->ctx, grad, g->in[i], st)) != NULL;
}
#define X (g->in[0])
#define Y (g->in[1])
#define Z (g->out[0])
#define DY (g->dy[0])

/* ---- gradients: binary ----------------------------------------------------------------------------------
 * An input whose gradient nobody needs (need_dx false: a constant, a label, a loss's denominator) gets none:
 * its chain of ops is not emitted (TensorFlow's skip_input_indices). */
#define NEED(i) TFC_GRAD_NEEDS(g, i)
static bool add_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (!NEED(0) || set_dx(g, 0, DY, st)) && (!NEED(1) || set_dx(g, 1, DY, st));
}
static bool sub_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (!NEED(0) || set_dx(g, 0, DY, st)) && (!NEED(1) || set_dx(g, 1, op1(g, "Neg", DY, st), st));
}
static bool mul_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (!NEED(0) || set_dx(g, 0, mul(g, DY, Y, st), st)) && (!NEED(1) || set_dx(g, 1, mul(g, X, DY, st), st));
}
/* d(x/y) = dy / y, dy * ((-x / y) / y). */
static bool real_div_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (!NEED(0) || set_dx(g, 0, op2(g, "RealDiv", DY, Y, st), st)) &&
           (!NEED(1) ||
            set_dx(g, 1, mul(g, DY, op2(g, "RealDiv", op2(g, "RealDiv", op1(g, "Neg", X, st), Y, st), Y, st), st), st));
}
static bool div_no_nan_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (!NEED(0) || set_dx(g, 0, op2(g, "DivNoNan", DY, Y, st), st)) &&
           (!NEED(1) ||
            set_dx(g, 1, mul(g, DY, op2(g, "DivNoNan", op2(g, "DivNoNan", op1(g, "Neg", X, st), Y, st), Y, st), st),
                   st));
}
/* FloorDiv, Floor, Ceil, Round: TensorFlow registers gradients that return None. */
static bool none_grad(tfc_grad_ctx *g, tfc_status *st) { return true; }
/* d floormod(x, y) = (dy, dy * -floor_div(x, y)). */
static bool floor_mod_grad(tfc_grad_ctx *g, tfc_status *st) {
    return set_dx(g, 0, DY, st) && set_dx(g, 1, mul(g, DY, op1(g, "Neg", op2(g, "FloorDiv", X, Y, st), st), st), st);
}
/* d x^y = (dy * y * x^(y-1), dy * z * log(x) where x > 0 else 0). */
static bool pow_grad(tfc_grad_ctx *g, tfc_status *st) {
    if (!set_dx(g, 0, mul(g, mul(g, DY, Y, st), op2(g, "Pow", X, opc(g, "Sub", Y, 1, false, st), st), st), st))
        return false;
    /* The masked-out x become 1 before the log, so that no -inf reaches the product. */
    tfc_tensor *mask = opc(g, "Greater", X, 0, false, st);
    tfc_tensor *log_x = select0(g, mask, op1(g, "Log", select_c(g, mask, X, 1, false, st), st), false, st);
    return set_dx(g, 1, mul(g, mul(g, DY, Z, st), log_x, st), st);
}
/* Maximum: dx where x >= y, dy elsewhere (Minimum: x <= y). */
static bool max_min_grad(tfc_grad_ctx *g, const char *selector, tfc_status *st) {
    tfc_tensor *xmask = op2(g, selector, X, Y, st);
    return set_dx(g, 0, select0(g, xmask, DY, false, st), st) && set_dx(g, 1, select0(g, xmask, DY, true, st), st);
}
static bool maximum_grad(tfc_grad_ctx *g, tfc_status *st) { return max_min_grad(g, "GreaterEqual", st); }
static bool minimum_grad(tfc_grad_ctx *g, tfc_status *st) { return max_min_grad(g, "LessEqual", st); }
static bool squared_difference_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *xg = mul(g, opc(g, "Mul", DY, 2, true, st), op2(g, "Sub", X, Y, st), st);
    return set_dx(g, 0, xg, st) && set_dx(g, 1, op1(g, "Neg", xg, st), st);
}

/* ---- gradients: unary ------------------------------------------------------------------------------------ */
static bool set0(tfc_grad_ctx *g, tfc_tensor *t) { return (g->dx[0] = t) != NULL; }
static bool neg_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, op1(g, "Neg", DY, st)); }
static bool abs_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, mul(g, DY, op1(g, "Sign", X, st), st)); }
static bool sign_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, op1(g, "ZerosLike", X, st)); }
static bool square_grad(tfc_grad_ctx *g, tfc_status *st) {
    return set0(g, mul(g, DY, opc(g, "Mul", X, 2, false, st), st));
}
static bool sqrt_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, op2(g, "SqrtGrad", Z, DY, st)); }
static bool rsqrt_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, op2(g, "RsqrtGrad", Z, DY, st)); }
static bool reciprocal_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, op2(g, "ReciprocalGrad", Z, DY, st)); }
static bool exp_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, mul(g, DY, Z, st)); }
static bool expm1_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, mul(g, DY, op1(g, "Exp", X, st), st)); }
static bool log_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, mul(g, DY, op1(g, "Reciprocal", X, st), st)); }
static bool log1p_grad(tfc_grad_ctx *g, tfc_status *st) {
    return set0(g, mul(g, DY, op1(g, "Reciprocal", opc(g, "AddV2", X, 1, true, st), st), st));
}
static bool sin_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, mul(g, DY, op1(g, "Cos", X, st), st)); }
static bool cos_grad(tfc_grad_ctx *g, tfc_status *st) {
    return set0(g, mul(g, op1(g, "Neg", DY, st), op1(g, "Sin", X, st), st));
}
static bool tanh_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, op2(g, "TanhGrad", Z, DY, st)); }
static bool sigmoid_grad(tfc_grad_ctx *g, tfc_status *st) { return set0(g, op2(g, "SigmoidGrad", Z, DY, st)); }
/* d erf(x) = dy * 2/sqrt(pi) * exp(-x^2). */
static bool erf_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *e = op1(g, "Exp", op1(g, "Neg", op1(g, "Square", X, st), st), st);
    return set0(g, mul(g, opc(g, "Mul", DY, 1.1283791670955126, false, st), e, st));
}

/* ---- gradients of the *Grad helpers (for second derivatives). a = y, b = dy, grad = upstream. ---------- */
/* SqrtGrad: z = 0.5 * b / a  ->  (-grad / a * z, 0.5 * grad / a). */
static bool sqrt_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *ga = op2(g, "RealDiv", DY, X, st);
    return set_dx(g, 0, mul(g, op1(g, "Neg", ga, st), Z, st), st) && set_dx(g, 1, opc(g, "Mul", ga, 0.5, true, st), st);
}
/* RsqrtGrad: z = -0.5 * b * a^3  ->  (-1.5 * grad * b * a^2, RsqrtGrad(a, grad)). */
static bool rsqrt_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *ga = mul(g, mul(g, opc(g, "Mul", DY, -1.5, true, st), Y, st), op1(g, "Square", X, st), st);
    return set_dx(g, 0, ga, st) && set_dx(g, 1, op2(g, "RsqrtGrad", X, DY, st), st);
}
/* ReciprocalGrad: z = -b * a^2  ->  (grad * -2 * b * a, ReciprocalGrad(a, grad)). */
static bool reciprocal_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *ga = mul(g, mul(g, opc(g, "Mul", DY, -2, false, st), Y, st), X, st);
    return set_dx(g, 0, ga, st) && set_dx(g, 1, op2(g, "ReciprocalGrad", X, DY, st), st);
}
/* TanhGrad: z = b * (1 - a^2)  ->  (grad * -2 * b * a, TanhGrad(a, grad)). */
static bool tanh_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *ga = mul(g, mul(g, opc(g, "Mul", DY, -2, false, st), Y, st), X, st);
    return set_dx(g, 0, ga, st) && set_dx(g, 1, op2(g, "TanhGrad", X, DY, st), st);
}
/* SigmoidGrad: z = b * a * (1 - a)  ->  (grad * b - 2 * grad * b * a, SigmoidGrad(a, grad)). */
static bool sigmoid_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *gb = mul(g, DY, Y, st);
    tfc_tensor *ga = op2(g, "Sub", gb, mul(g, opc(g, "Mul", gb, 2, true, st), X, st), st);
    return set_dx(g, 0, ga, st) && set_dx(g, 1, op2(g, "SigmoidGrad", X, DY, st), st);
}

/* ---- gradients: the rest ---------------------------------------------------------------------------------- */
/* SelectV2: dy goes to t where condition holds and to e elsewhere, each summed to its input's shape. */
static bool select_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *c = g->in[0];
    tfc_tensor *gt = select0(g, c, DY, false, st);
    tfc_tensor *ge = gt ? select0(g, c, DY, true, st) : NULL;
    return set_dx(g, 1, gt, st) && set_dx(g, 2, ge, st);
}
/* Cast: the gradient is cast back when both types are floating; integer casts have none. */
static bool cast_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_dtype src = tfc_tensor_dtype(X), dst = tfc_tensor_dtype(Z);
    if (!tfc_dtype_is_floating(src) || !tfc_dtype_is_floating(dst) || !DY) return true;
    tfc_attr a = TFC_ATTR_T("DstT", src);
    return set0(g, tfc_emit(g->ctx, "Cast", &g->dy[0], 1, &a, 1, st));
}
/* ClipByValue: dy where lo <= t <= hi goes to t; where t < lo to lo, where t > hi to hi (clip_ops.py). */
static bool clip_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_tensor *lo_mask = op2(g, "Less", X, g->in[1], st);
    tfc_tensor *hi_mask = op2(g, "Greater", X, g->in[2], st);
    tfc_tensor *either = op2(g, "LogicalOr", lo_mask, hi_mask, st);
    return set_dx(g, 0, select0(g, either, DY, true, st), st) &&
           set_dx(g, 1, select0(g, lo_mask, DY, false, st), st) && set_dx(g, 2, select0(g, hi_mask, DY, false, st), st);
}
static bool add_n_grad(tfc_grad_ctx *g, tfc_status *st) {
    for (int i = 0; i < g->n_in; i++) g->dx[i] = DY;
    return true;
}

#undef X
#undef Y
#undef Z
#undef DY

/* ---- op definitions ---------------------------------------------------------------------------------------- */
#define T_SIGNED_REAL TFC_T_FLOATS ", int8, int16, int32, int64"

#define BINARY(var, nm, types, gradfn)                                                               \
    static const tfc_op_def var = {.name = nm, .inputs = "x: T, y: T", .outputs = "z: T",            \
                                   .attrs = "T: {" types "}", .shape = bcast_shape, .grad = gradfn};
BINARY(def_add_v2, "AddV2", TFC_T_REAL, add_grad)
BINARY(def_add, "Add", TFC_T_REAL, add_grad) /* TensorFlow 1 graphs' Add: AddV2's math (string concatenation aside) */
BINARY(def_sub, "Sub", TFC_T_REAL, sub_grad)
BINARY(def_mul, "Mul", TFC_T_REAL, mul_grad)
BINARY(def_real_div, "RealDiv", TFC_T_REAL, real_div_grad)
BINARY(def_div_no_nan, "DivNoNan", TFC_T_FLOATS, div_no_nan_grad)
BINARY(def_floor_div, "FloorDiv", TFC_T_REAL, none_grad)
BINARY(def_floor_mod, "FloorMod", TFC_T_REAL, floor_mod_grad)
BINARY(def_pow, "Pow", T_SIGNED_REAL, pow_grad)
BINARY(def_maximum, "Maximum", TFC_T_REAL, maximum_grad)
BINARY(def_minimum, "Minimum", TFC_T_REAL, minimum_grad)
BINARY(def_squared_difference, "SquaredDifference", TFC_T_FLOATS ", int32, int64", squared_difference_grad)

#define UNARY(var, nm, types, gradfn)                                                                \
    static const tfc_op_def var = {.name = nm, .inputs = "x: T", .outputs = "y: T", .attrs = "T: {" types "}", \
                                   .shape = tfc_shape_same_as_input0, .grad = gradfn};
UNARY(def_neg, "Neg", T_SIGNED_REAL, neg_grad)
UNARY(def_abs, "Abs", T_SIGNED_REAL, abs_grad)
UNARY(def_sign, "Sign", T_SIGNED_REAL, sign_grad)
UNARY(def_square, "Square", TFC_T_REAL, square_grad)
UNARY(def_sqrt, "Sqrt", TFC_T_FLOATS, sqrt_grad)
UNARY(def_rsqrt, "Rsqrt", TFC_T_FLOATS, rsqrt_grad)
UNARY(def_reciprocal, "Reciprocal", T_SIGNED_REAL, reciprocal_grad)
UNARY(def_exp, "Exp", TFC_T_FLOATS, exp_grad)
UNARY(def_expm1, "Expm1", TFC_T_FLOATS, expm1_grad)
UNARY(def_log, "Log", TFC_T_FLOATS, log_grad)
UNARY(def_log1p, "Log1p", TFC_T_FLOATS, log1p_grad)
UNARY(def_sin, "Sin", TFC_T_FLOATS, sin_grad)
UNARY(def_cos, "Cos", TFC_T_FLOATS, cos_grad)
UNARY(def_tanh, "Tanh", TFC_T_FLOATS, tanh_grad)
UNARY(def_sigmoid, "Sigmoid", TFC_T_FLOATS, sigmoid_grad)
UNARY(def_erf, "Erf", TFC_T_FLOATS, erf_grad)
UNARY(def_floor, "Floor", TFC_T_FLOATS, none_grad)
UNARY(def_ceil, "Ceil", TFC_T_FLOATS, none_grad)
UNARY(def_round, "Round", T_SIGNED_REAL, none_grad)

#define GRAD_HELPER(var, nm, gradfn)                                                                 \
    static const tfc_op_def var = {.name = nm, .inputs = "y: T, dy: T", .outputs = "z: T",           \
                                   .attrs = "T: {" TFC_T_FLOATS "}", .shape = grad_helper_shape, .grad = gradfn};
GRAD_HELPER(def_sqrt_grad, "SqrtGrad", sqrt_grad_grad)
GRAD_HELPER(def_rsqrt_grad, "RsqrtGrad", rsqrt_grad_grad)
GRAD_HELPER(def_reciprocal_grad, "ReciprocalGrad", reciprocal_grad_grad)
GRAD_HELPER(def_tanh_grad, "TanhGrad", tanh_grad_grad)
GRAD_HELPER(def_sigmoid_grad, "SigmoidGrad", sigmoid_grad_grad)

#define COMPARE(var, nm)                                                                             \
    static const tfc_op_def var = {.name = nm, .inputs = "x: T, y: T", .outputs = "z: bool",         \
                                   .attrs = "T: {" TFC_T_REAL "}", .shape = bcast_shape, .not_differentiable = true};
COMPARE(def_less, "Less")
COMPARE(def_less_equal, "LessEqual")
COMPARE(def_greater, "Greater")
COMPARE(def_greater_equal, "GreaterEqual")
static const tfc_op_def def_equal = {
    .name = "Equal", .inputs = "x: T, y: T", .outputs = "z: bool",
    .attrs = "T: type, incompatible_shape_error: bool = true", .shape = equality_shape, .not_differentiable = true,
};
static const tfc_op_def def_not_equal = {
    .name = "NotEqual", .inputs = "x: T, y: T", .outputs = "z: bool",
    .attrs = "T: type, incompatible_shape_error: bool = true", .shape = equality_shape, .not_differentiable = true,
};
static const tfc_op_def def_logical_and = {
    .name = "LogicalAnd", .inputs = "x: bool, y: bool", .outputs = "z: bool", .attrs = "",
    .shape = bcast_shape, .not_differentiable = true,
};
static const tfc_op_def def_logical_or = {
    .name = "LogicalOr", .inputs = "x: bool, y: bool", .outputs = "z: bool", .attrs = "",
    .shape = bcast_shape, .not_differentiable = true,
};
static const tfc_op_def def_logical_not = {
    .name = "LogicalNot", .inputs = "x: bool", .outputs = "y: bool", .attrs = "",
    .shape = tfc_shape_same_as_input0, .not_differentiable = true,
};

static const tfc_op_def def_select_v2 = {
    .name = "SelectV2", .inputs = "condition: bool, t: T, e: T", .outputs = "output: T", .attrs = "T: type",
    .shape = select_shape, .grad = select_grad,
};
static const tfc_op_def def_cast = {
    .name = "Cast", .inputs = "x: SrcT", .outputs = "y: DstT",
    .attrs = "SrcT: type, DstT: type, Truncate: bool = false", .shape = tfc_shape_same_as_input0, .grad = cast_grad,
};
static const tfc_op_def def_clip_by_value = {
    .name = "ClipByValue", .inputs = "t: T, clip_value_min: T, clip_value_max: T", .outputs = "output: T",
    .attrs = "T: {" TFC_T_REAL "}", .shape = clip_shape, .grad = clip_grad,
};
static const tfc_op_def def_add_n = {
    .name = "AddN", .inputs = "inputs: N * T", .outputs = "sum: T", .attrs = "N: int >= 1, T: {" TFC_T_REAL "}",
    .shape = add_n_shape, .grad = add_n_grad,
};

const tfc_op_def *const tfc_ops_math[] = {
    &def_add_v2, &def_add, &def_sub, &def_mul, &def_real_div, &def_div_no_nan, &def_floor_div, &def_floor_mod, &def_pow,
    &def_maximum, &def_minimum, &def_squared_difference,
    &def_neg, &def_abs, &def_sign, &def_square, &def_sqrt, &def_rsqrt, &def_reciprocal, &def_exp, &def_expm1,
    &def_log, &def_log1p, &def_sin, &def_cos, &def_tanh, &def_sigmoid, &def_erf, &def_floor, &def_ceil, &def_round,
    &def_sqrt_grad, &def_rsqrt_grad, &def_reciprocal_grad, &def_tanh_grad, &def_sigmoid_grad,
    &def_equal, &def_not_equal, &def_less, &def_less_equal, &def_greater, &def_greater_equal,
    &def_logical_and, &def_logical_or, &def_logical_not,
    &def_select_v2, &def_cast, &def_clip_by_value, &def_add_n, NULL,
};
