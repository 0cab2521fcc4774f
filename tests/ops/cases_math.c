/* Op test cases: math (elementwise). */
#include "op_test.h"

/* Table rows leave trailing fields to their zero defaults. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const tfc_dtype FLOATS[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, 0};
static const tfc_dtype SIGNED_INTS[] = {TFC_INT8, TFC_INT16, TFC_INT32, TFC_INT64, 0};
static const tfc_dtype SIGNED[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_INT16, TFC_INT32, TFC_INT64, 0};
static const tfc_dtype NO_UINT8[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_INT16, TFC_INT32, TFC_INT64, 0};
static const tfc_dtype NO_LOWP[] = {TFC_FLOAT, TFC_DOUBLE, TFC_INT8, TFC_UINT8, TFC_INT16, TFC_INT32, TFC_INT64, 0};
static const tfc_dtype SIGNED_NO_LOWP[] = {TFC_FLOAT, TFC_DOUBLE, TFC_INT8, TFC_INT16, TFC_INT32, TFC_INT64, 0};
static const tfc_dtype CAST_DST[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_INT16,
                                     TFC_INT32, TFC_INT64, TFC_BOOL, 0};

#define R(lo, hi) .lo = (lo), .hi = (hi)
#define IN_R(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}
#define IN_V(r, n, ...) {.rank = (r), .dims = {n}, .n_vals = (n), .vals = {__VA_ARGS__}}
#define IN_BOOL(r, ...) {.dtype = TFC_BOOL, .rank = (r), .dims = {__VA_ARGS__}}
#define IN_F32(r, lo_, hi_, ...) {.dtype = TFC_FLOAT, .rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}

/* Shapes every broadcasting binary op runs on: x and y from [lx, hx] and [ly, hy]. */
#define BINARY_CASES(OP, G, lx, hx, ly, hy, DT)                                                                 \
    {OP, "same shape", 2, {IN_R(2, lx, hx, 2, 3), IN_R(2, ly, hy, 2, 3)}, .grad = G, .dtypes = DT},              \
    {OP, "row broadcast", 2, {IN_R(2, lx, hx, 2, 3), IN_R(1, ly, hy, 3)}, .grad = G, .dtypes = DT},              \
    {OP, "scalar x", 2, {IN_R(0, lx, hx, 0), IN_R(1, ly, hy, 4)}, .grad = G, .dtypes = DT},                      \
    {OP, "scalar y", 2, {IN_R(2, lx, hx, 3, 2), IN_R(0, ly, hy, 0)}, .grad = G, .dtypes = DT},                   \
    {OP, "rank 0", 2, {IN_R(0, lx, hx, 0), IN_R(0, ly, hy, 0)}, .grad = G, .dtypes = DT},                        \
    {OP, "outer", 2, {IN_R(2, lx, hx, 3, 1), IN_R(2, ly, hy, 1, 4)}, .grad = G, .dtypes = DT},                   \
    {OP, "3-d broadcast", 2, {IN_R(3, lx, hx, 2, 1, 4), IN_R(2, ly, hy, 3, 1)}, .grad = G, .dtypes = DT},        \
    {OP, "size 0", 2, {IN_R(2, lx, hx, 0, 3), IN_R(1, ly, hy, 3)}, .dtypes = DT},                                \
    {OP, "parallel", 2, {IN_R(2, lx, hx, 64, 1000), IN_R(1, ly, hy, 1000)}, .dtypes = DT},                       \
    {OP, "parallel same", 2, {IN_R(1, lx, hx, 60000), IN_R(1, ly, hy, 60000)}, .dtypes = DT},                    \
    {OP, "parallel small rows", 2, {IN_R(2, lx, hx, 30000, 2), IN_R(2, ly, hy, 30000, 1)}, .dtypes = DT}

#define UNARY_CASES(OP, G, lo, hi, DT)                                                                          \
    {OP, "matrix", 1, {IN_R(2, lo, hi, 3, 4)}, .grad = G, .dtypes = DT},                                         \
    {OP, "rank 0", 1, {IN_R(0, lo, hi, 0)}, .grad = G, .dtypes = DT},                                            \
    {OP, "size 0", 1, {IN_R(3, lo, hi, 2, 0, 3)}, .dtypes = DT},                                                 \
    {OP, "parallel", 1, {IN_R(2, lo, hi, 256, 256)}, .dtypes = DT}

#define GRAD_HELPER_CASES(OP, lo, hi)                                                                           \
    {OP, "matrix", 2, {IN_R(2, lo, hi, 3, 4), IN_R(2, -1, 1, 3, 4)}, .grad = true},                              \
    {OP, "rank 0", 2, {IN_R(0, lo, hi, 0), IN_R(0, -1, 1, 0)}, .grad = true},                                    \
    {OP, "size 0", 2, {IN_R(1, lo, hi, 0), IN_R(1, -1, 1, 0)}},                                                  \
    {OP, "parallel", 2, {IN_R(1, lo, hi, 60000), IN_R(1, -1, 1, 60000)}}

#define COMPARE_CASES(OP)                                                                                       \
    {OP, "same shape", 2, {IN_R(2, -3, 3, 3, 4), IN_R(2, -3, 3, 3, 4)}},                                         \
    {OP, "broadcast", 2, {IN_R(2, -3, 3, 3, 1), IN_R(1, -3, 3, 4)}},                                             \
    {OP, "ties", 2, {IN_V(1, 6, -1, 0, 1, 2, 0.5, -2), IN_V(1, 6, -1, 1, 0, 2, 0.5, 2)}},                        \
    {OP, "rank 0", 2, {IN_R(0, -3, 3, 0), IN_R(0, -3, 3, 0)}},                                                   \
    {OP, "size 0", 2, {IN_R(2, -3, 3, 0, 4), IN_R(1, -3, 3, 4)}},                                                \
    {OP, "parallel", 2, {IN_R(2, -3, 3, 100, 600), IN_R(1, -3, 3, 600)}}

const op_case op_cases_math[] = {
    BINARY_CASES("AddV2", true, -5, 5, -5, 5, NULL),
    BINARY_CASES("Add", true, -5, 5, -5, 5, NULL), /* TensorFlow 1 graphs' Add */
    /* uint8 differences that wrap are checked by the conformance tests; the float64 reference cannot. */
    BINARY_CASES("Sub", true, -5, 5, -5, 5, NO_UINT8),
    {"Sub", "uint8", 2, {IN_R(2, 5, 9, 3, 4), IN_R(1, 0, 4, 4)}, .dtypes = (const tfc_dtype[]){TFC_UINT8, 0}},
    BINARY_CASES("Mul", true, -5, 5, -5, 5, NULL),
    BINARY_CASES("Maximum", true, -5, 5, -5, 5, NULL),
    BINARY_CASES("Minimum", true, -5, 5, -5, 5, NULL),
    {"Maximum", "ties", 2, {IN_V(1, 4, 1, -2, 0, 3), IN_V(1, 4, 1, 2, 0, -3)}},
    {"Minimum", "ties", 2, {IN_V(1, 4, 1, -2, 0, 3), IN_V(1, 4, 1, 2, 0, -3)}},
    BINARY_CASES("SquaredDifference", true, -5, 5, -5, 5, NULL),
    /* Divisions: divisors kept away from zero (uint8 draws fall back to [0, 9], so negative divisors
     * exclude it). */
    BINARY_CASES("RealDiv", true, -5, 5, 0.5, 4, NULL),
    {"RealDiv", "negative divisor", 2, {IN_R(2, -9, 9, 3, 4), IN_R(1, -4, -0.5, 4)}, .grad = true, .dtypes = SIGNED},
    BINARY_CASES("DivNoNan", true, -5, 5, 0.5, 4, NULL),
    {"DivNoNan", "zero divisor", 2, {IN_R(2, -5, 5, 2, 4), IN_V(1, 4, 0, 1.5, 0, -2)}},
    /* half/bfloat16 FloorDiv floors the quotient rounded to the dtype (as TensorFlow), which the float64
     * reference does not: exact quotients only (the conformance tests compare random ones with TensorFlow). */
    /* floor() of a float32 quotient legitimately differs from the float64 reference when the exact quotient
     * lies within float32 rounding of an integer: the broadcast and parallel cases use integer values, whose
     * quotients are exact or at least 1/4 away from an integer; gradients are checked on real values below. */
#undef IN_R
#define IN_R(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_), .integer = true}
    BINARY_CASES("FloorDiv", false, -9, 9, 1, 4, NO_LOWP),
    BINARY_CASES("FloorMod", false, -9, 9, 1, 4, NULL),
#undef IN_R
#define IN_R(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}
    {"FloorDiv", "positive divisor", 2, {IN_R(2, -9, 9, 3, 4), IN_R(1, 0.5, 4, 4)}, .grad = true, .dtypes = SIGNED_NO_LOWP},
    {"FloorMod", "positive divisor", 2, {IN_R(2, -9, 9, 3, 4), IN_R(1, 0.5, 4, 4)}, .grad = true, .dtypes = SIGNED},
    {"FloorDiv", "half and bfloat16", 2, {IN_V(1, 8, 7, -7, 7, -7, 6, -6, 0.5, 1), IN_V(1, 8, 2, 2, -2, -2, 3, 3, 4, -1)},
     .dtypes = (const tfc_dtype[]){TFC_HALF, TFC_BFLOAT16, 0}},
    {"FloorDiv", "negative divisor", 2, {IN_R(2, -9, 9, 3, 4), IN_R(1, -4, -0.5, 4)}, .grad = true, .dtypes = SIGNED_NO_LOWP},
    {"FloorDiv", "exact", 2, {IN_V(1, 8, 7, -7, 7, -7, 6, -6, 0, 1), IN_V(1, 8, 2, 2, -2, -2, 3, 3, 5, -1)}, .dtypes = SIGNED},
    {"FloorMod", "negative divisor", 2, {IN_R(2, -9, 9, 3, 4), IN_R(1, -4, -0.5, 4)}, .grad = true, .dtypes = SIGNED},
    {"FloorMod", "exact", 2, {IN_V(1, 8, 7, -7, 7, -7, 6, -6, 0, 1), IN_V(1, 8, 2, 2, -2, -2, 3, 3, 5, -1)}, .dtypes = SIGNED},
    /* Pow: real exponents on positive bases for floats, small non-negative exponents for integers. */
    BINARY_CASES("Pow", true, 0.5, 2, -2, 2, FLOATS),
    {"Pow", "integers", 2, {IN_R(2, -3, 3, 3, 4), IN_R(1, 0, 4, 4)}, .dtypes = SIGNED_INTS},
    {"Pow", "integral exponent, negative base", 2, {IN_R(2, -2, -0.5, 3, 4), {.rank = 1, .dims = {4}, .n_vals = 4, .vals = {2, 3, -1, 0}, .no_grad = true}}, .grad = true, .dtypes = FLOATS},

    UNARY_CASES("Neg", true, -5, 5, NULL),
    UNARY_CASES("Abs", true, -5, 5, NULL),
    UNARY_CASES("Sign", true, -5, 5, NULL),
    {"Sign", "zeros", 1, {IN_V(1, 3, 0, -1, 2)}},
    UNARY_CASES("Square", true, -5, 5, NULL),
    UNARY_CASES("Sqrt", true, 0.25, 4, NULL),
    UNARY_CASES("Rsqrt", true, 0.25, 4, NULL),
    UNARY_CASES("Reciprocal", true, 0.5, 4, NULL),
    {"Reciprocal", "negative", 1, {IN_R(2, -4, -0.5, 3, 4)}, .grad = true},
    UNARY_CASES("Exp", true, -3, 3, NULL),
    UNARY_CASES("Expm1", true, -3, 3, NULL),
    {"Expm1", "tiny", 1, {IN_R(1, -1e-6, 1e-6, 8)}, .dtypes = (const tfc_dtype[]){TFC_FLOAT, TFC_DOUBLE, 0}},
    UNARY_CASES("Log", true, 0.25, 4, NULL),
    UNARY_CASES("Log1p", true, -0.5, 3, NULL),
    UNARY_CASES("Sin", true, -4, 4, NULL),
    UNARY_CASES("Cos", true, -4, 4, NULL),
    UNARY_CASES("Tanh", true, -4, 4, NULL),
    UNARY_CASES("Sigmoid", true, -8, 8, NULL),
    {"Sigmoid", "saturated", 1, {IN_V(1, 6, -100, -30, 0, 30, 100, -1000)}, .dtypes = (const tfc_dtype[]){TFC_FLOAT, TFC_DOUBLE, 0}},
    UNARY_CASES("Erf", true, -3, 3, NULL),
    UNARY_CASES("Floor", true, -5, 5, NULL),
    UNARY_CASES("Ceil", true, -5, 5, NULL),
    UNARY_CASES("Round", true, -5, 5, NULL),
    {"Round", "halves", 1, {IN_V(1, 10, 0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.25, 0.75, 3.5, -3.5)}},

    GRAD_HELPER_CASES("SqrtGrad", 0.5, 2),
    GRAD_HELPER_CASES("RsqrtGrad", 0.5, 2),
    GRAD_HELPER_CASES("ReciprocalGrad", 0.5, 2),
    GRAD_HELPER_CASES("TanhGrad", -1, 1),
    GRAD_HELPER_CASES("SigmoidGrad", 0, 1),

    COMPARE_CASES("Equal"),
    COMPARE_CASES("NotEqual"),
    COMPARE_CASES("Less"),
    COMPARE_CASES("LessEqual"),
    COMPARE_CASES("Greater"),
    COMPARE_CASES("GreaterEqual"),
    {"Equal", "incompatible shapes without error", 2, {IN_R(1, -3, 3, 2), IN_R(1, -3, 3, 3)}, 1,
     {TFC_ATTR_B("incompatible_shape_error", false)}},
    {"NotEqual", "incompatible shapes without error", 2, {IN_R(1, -3, 3, 2), IN_R(1, -3, 3, 3)}, 1,
     {TFC_ATTR_B("incompatible_shape_error", false)}},
    {"Equal", "compatible shapes without error", 2, {IN_R(2, -3, 3, 2, 1), IN_R(1, -3, 3, 3)}, 1,
     {TFC_ATTR_B("incompatible_shape_error", false)}},
    {"LogicalAnd", "broadcast", 2, {IN_BOOL(2, 3, 1), IN_BOOL(1, 4)}},
    {"LogicalAnd", "rank 0", 2, {IN_BOOL(0, 0), IN_BOOL(0, 0)}},
    {"LogicalOr", "broadcast", 2, {IN_BOOL(2, 3, 1), IN_BOOL(1, 4)}},
    {"LogicalOr", "size 0", 2, {IN_BOOL(2, 0, 4), IN_BOOL(1, 4)}},
    {"LogicalNot", "matrix", 1, {IN_BOOL(2, 3, 4)}},
    {"LogicalNot", "rank 0", 1, {IN_BOOL(0, 0)}},

    {"SelectV2", "same shape", 3, {IN_BOOL(2, 3, 4), IN_T(2, 3, 4), IN_T(2, 3, 4)}, .grad = true},
    {"SelectV2", "scalar else", 3, {IN_BOOL(2, 3, 4), IN_T(2, 3, 4), IN_T(0, 0)}, .grad = true},
    {"SelectV2", "scalar then", 3, {IN_BOOL(2, 3, 4), IN_T(0, 0), IN_T(2, 3, 4)}, .grad = true},
    {"SelectV2", "3-way broadcast", 3, {IN_BOOL(2, 2, 1), IN_T(1, 3), IN_T(0, 0)}, .grad = true},
    {"SelectV2", "condition broadcast", 3, {IN_BOOL(1, 4), IN_T(3, 2, 3, 4), IN_T(2, 3, 1)}, .grad = true},
    {"SelectV2", "rank 0", 3, {IN_BOOL(0, 0), IN_T(0, 0), IN_T(0, 0)}, .grad = true},
    {"SelectV2", "size 0", 3, {IN_BOOL(1, 0), IN_T(2, 3, 0), IN_T(0, 0)}},
    {"SelectV2", "parallel", 3, {IN_BOOL(2, 200, 300), IN_T(2, 200, 300), IN_T(1, 300)}},

    /* Cast: float32 to every dtype under test (DstT), every dtype to float32 and float64. */
    {"Cast", "from float32", 1, {IN_F32(2, -9, 9, 3, 4)}, .dtype_attr = "DstT", .dtypes = CAST_DST},
    {"Cast", "from float32 to uint8", 1, {IN_F32(2, 0, 200, 3, 4)}, .dtype_attr = "DstT",
     .dtypes = (const tfc_dtype[]){TFC_UINT8, 0}},
    {"Cast", "to float32", 1, {IN_R(2, -9, 9, 3, 4)}, 1, {TFC_ATTR_T("DstT", TFC_FLOAT)}},
    {"Cast", "to float64", 1, {IN_R(2, -9, 9, 3, 4)}, 1, {TFC_ATTR_T("DstT", TFC_DOUBLE)}, .grad = true},
    {"Cast", "to int32", 1, {IN_R(2, -9, 9, 3, 4)}, 1, {TFC_ATTR_T("DstT", TFC_INT32)}},
    {"Cast", "to bool", 1, {IN_V(1, 5, 0, 1, -2, 0.5, 0)}, 1, {TFC_ATTR_T("DstT", TFC_BOOL)}},
    {"Cast", "truncate", 1, {IN_F32(2, -9, 9, 3, 4)}, 1, {TFC_ATTR_B("Truncate", true)}, .dtype_attr = "DstT",
     .dtypes = FLOATS},
    {"Cast", "rank 0", 1, {IN_F32(0, -9, 9, 0)}, .dtype_attr = "DstT", .dtypes = CAST_DST},
    {"Cast", "size 0", 1, {IN_F32(1, -9, 9, 0)}, .dtype_attr = "DstT", .dtypes = CAST_DST},
    {"Cast", "parallel", 1, {IN_F32(2, -9, 9, 256, 256)}, .dtype_attr = "DstT", .dtypes = CAST_DST},

    {"ClipByValue", "scalar bounds", 3, {IN_R(2, -3, 3, 3, 4), IN_R(0, -2, -0.5, 0), IN_R(0, 0.5, 2, 0)}, .grad = true},
    {"ClipByValue", "tensor bounds", 3, {IN_R(2, -3, 3, 3, 4), IN_R(2, -2, -0.5, 3, 4), IN_R(2, 0.5, 2, 3, 4)}, .grad = true},
    {"ClipByValue", "mixed bounds", 3, {IN_R(2, -3, 3, 3, 4), IN_R(0, -2, -0.5, 0), IN_R(2, 0.5, 2, 3, 4)}, .grad = true},
    {"ClipByValue", "min above max", 3, {IN_R(1, -3, 3, 6), IN_V(0, 1, 1), IN_V(0, 1, -1)}},
    {"ClipByValue", "rank 0", 3, {IN_R(0, -3, 3, 0), IN_R(0, -2, -0.5, 0), IN_R(0, 0.5, 2, 0)}, .grad = true},
    {"ClipByValue", "size 0", 3, {IN_R(2, -3, 3, 0, 4), IN_R(0, -2, -0.5, 0), IN_R(0, 0.5, 2, 0)}},
    {"ClipByValue", "parallel", 3, {IN_R(2, -3, 3, 256, 256), IN_R(0, -2, -0.5, 0), IN_R(0, 0.5, 2, 0)}},

    {"AddN", "three", 3, {IN_R(2, -5, 5, 3, 4), IN_R(2, -5, 5, 3, 4), IN_R(2, -5, 5, 3, 4)}, .grad = true},
    {"AddN", "one", 1, {IN_R(2, -5, 5, 3, 4)}, .grad = true},
    {"AddN", "rank 0", 2, {IN_R(0, -5, 5, 0), IN_R(0, -5, 5, 0)}, .grad = true},
    {"AddN", "size 0", 2, {IN_R(2, -5, 5, 0, 4), IN_R(2, -5, 5, 0, 4)}},
    {"AddN", "parallel", 5, {IN_R(1, -2, 2, 20000), IN_R(1, -2, 2, 20000), IN_R(1, -2, 2, 20000), IN_R(1, -2, 2, 20000),
                             IN_R(1, -2, 2, 20000)}},
    {0},
};

#define BIG (1ll << 40)
#define IN_I32V(r, n, ...) {.dtype = TFC_INT32, .rank = (r), .dims = {n}, .n_vals = (n), .vals = {__VA_ARGS__}}
#define BAD_BINARY(OP)                                                                                           \
    {OP, "incompatible shapes", 2, {IN_T(1, 2), IN_T(1, 3)}, .code = TFC_INVALID_ARGUMENT,                       \
     .expect = {OP, "Incompatible shapes", "[2]", "[3]"}},                                                       \
    {OP, "incompatible inner dims", 2, {IN_T(2, 4, 3), IN_T(2, 4, 2)}, .code = TFC_INVALID_ARGUMENT,             \
     .expect = {OP, "[4,3]", "[4,2]"}},                                                                          \
    {OP, "mixed dtypes", 2, {IN_T(1, 2), {.dtype = TFC_INT32, .rank = 1, .dims = {2}}},                         \
     .code = TFC_INVALID_ARGUMENT, .expect = {OP, "float32", "int32"}},                                          \
    {OP, "bool", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,                   \
     .expect = {OP, "bool", "not in the list of allowed values"}},                                               \
    {OP, "one input", 1, {IN_T(1, 2)}, .code = TFC_INVALID_ARGUMENT, .expect = {OP, "inputs"}},                  \
    {OP, "output too large", 2, {IN_T(3, BIG, 1, 0), IN_T(3, 1, BIG, 0)}, .code = TFC_INVALID_ARGUMENT,          \
     .expect = {OP, "overflow"}}
#define BAD_UNARY(OP, DT, DTNAME)                                                                                \
    {OP, "wrong dtype", 1, {IN_T(1, 2)}, .dtype = DT, .code = TFC_INVALID_ARGUMENT,                              \
     .expect = {OP, DTNAME, "not in the list of allowed values"}},                                               \
    {OP, "two inputs", 2, {IN_T(1, 2), IN_T(1, 2)}, .code = TFC_INVALID_ARGUMENT, .expect = {OP, "inputs"}}
#define BAD_GRAD_HELPER(OP)                                                                                      \
    {OP, "shape mismatch", 2, {IN_T(1, 2), IN_T(1, 3)}, .code = TFC_INVALID_ARGUMENT,                            \
     .expect = {OP, "same shape", "[2]", "[3]"}},                                                                \
    {OP, "no broadcasting", 2, {IN_T(2, 2, 3), IN_T(1, 3)}, .code = TFC_INVALID_ARGUMENT,                        \
     .expect = {OP, "[2,3]", "[3]"}},                                                                            \
    {OP, "integer", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_INT32, .code = TFC_INVALID_ARGUMENT,               \
     .expect = {OP, "int32", "not in the list of allowed values"}}
#define BAD_COMPARE(OP)                                                                                          \
    {OP, "incompatible shapes", 2, {IN_T(2, 2, 3), IN_T(1, 2)}, .code = TFC_INVALID_ARGUMENT,                    \
     .expect = {OP, "Incompatible shapes", "[2,3]", "[2]"}},                                                     \
    {OP, "mixed dtypes", 2, {IN_T(1, 2), {.dtype = TFC_DOUBLE, .rank = 1, .dims = {2}}},                        \
     .code = TFC_INVALID_ARGUMENT, .expect = {OP, "float32", "float64"}},                                        \
    {OP, "output too large", 2, {IN_T(3, BIG, 1, 0), IN_T(3, 1, BIG, 0)}, .code = TFC_INVALID_ARGUMENT,          \
     .expect = {OP, "overflow"}}

const bad_case bad_cases_math[] = {
    BAD_BINARY("AddV2"), BAD_BINARY("Add"), BAD_BINARY("Sub"), BAD_BINARY("Mul"), BAD_BINARY("RealDiv"), BAD_BINARY("DivNoNan"),
    BAD_BINARY("FloorDiv"), BAD_BINARY("FloorMod"), BAD_BINARY("Pow"), BAD_BINARY("Maximum"), BAD_BINARY("Minimum"),
    BAD_BINARY("SquaredDifference"),
    {"DivNoNan", "integer", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_INT32, .code = TFC_INVALID_ARGUMENT,
     .expect = {"DivNoNan", "int32", "not in the list of allowed values"}},
    {"SquaredDifference", "uint8", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT,
     .expect = {"SquaredDifference", "uint8", "not in the list of allowed values"}},
    {"Pow", "uint8", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_UINT8, .code = TFC_INVALID_ARGUMENT,
     .expect = {"Pow", "uint8"}},
    /* Integer division by zero and negative integer powers are kernel errors, as TensorFlow's. */
    {"FloorDiv", "integer division by zero", 2, {IN_I32V(1, 3, 1, 2, 3), IN_I32V(1, 3, 1, 0, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"FloorDiv", "Integer division by zero"}},
    {"FloorMod", "integer division by zero", 2, {IN_I32V(1, 2, 7, 8), IN_I32V(0, 1, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"FloorMod", "Integer division by zero"}},
    {"FloorDiv", "uint8 division by zero", 2, {IN_T(1, 2), IN_V(1, 2, 0, 0)}, .dtype = TFC_UINT8,
     .code = TFC_INVALID_ARGUMENT, .expect = {"FloorDiv", "Integer division by zero"}},
    {"RealDiv", "integer division by zero", 2, {IN_T(1, 2), IN_V(1, 2, 3, 0)}, .dtype = TFC_INT64,
     .code = TFC_INVALID_ARGUMENT, .expect = {"RealDiv", "Integer division by zero"}},
    {"Reciprocal", "integer division by zero", 1, {IN_V(1, 3, 1, 0, 2)}, .dtype = TFC_INT32,
     .code = TFC_INVALID_ARGUMENT, .expect = {"Reciprocal", "Integer division by zero"}},
    {"Pow", "negative integer power", 2, {IN_I32V(1, 2, 2, 3), IN_I32V(1, 2, 2, -1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Pow", "Integers to negative integer powers are not allowed"}},

    BAD_UNARY("Neg", TFC_UINT8, "uint8"), BAD_UNARY("Abs", TFC_BOOL, "bool"), BAD_UNARY("Sign", TFC_UINT8, "uint8"),
    BAD_UNARY("Square", TFC_BOOL, "bool"), BAD_UNARY("Sqrt", TFC_INT32, "int32"),
    BAD_UNARY("Rsqrt", TFC_INT64, "int64"), BAD_UNARY("Reciprocal", TFC_UINT8, "uint8"),
    BAD_UNARY("Exp", TFC_INT32, "int32"), BAD_UNARY("Expm1", TFC_INT8, "int8"), BAD_UNARY("Log", TFC_INT32, "int32"),
    BAD_UNARY("Log1p", TFC_INT16, "int16"), BAD_UNARY("Sin", TFC_INT32, "int32"), BAD_UNARY("Cos", TFC_BOOL, "bool"),
    BAD_UNARY("Tanh", TFC_INT32, "int32"), BAD_UNARY("Sigmoid", TFC_INT64, "int64"),
    BAD_UNARY("Erf", TFC_INT32, "int32"), BAD_UNARY("Floor", TFC_INT32, "int32"), BAD_UNARY("Ceil", TFC_INT32, "int32"),
    BAD_UNARY("Round", TFC_UINT8, "uint8"),

    BAD_GRAD_HELPER("SqrtGrad"), BAD_GRAD_HELPER("RsqrtGrad"), BAD_GRAD_HELPER("ReciprocalGrad"),
    BAD_GRAD_HELPER("TanhGrad"), BAD_GRAD_HELPER("SigmoidGrad"),

    BAD_COMPARE("Equal"), BAD_COMPARE("NotEqual"), BAD_COMPARE("Less"), BAD_COMPARE("LessEqual"),
    BAD_COMPARE("Greater"), BAD_COMPARE("GreaterEqual"),
    {"Less", "bool", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,
     .expect = {"Less", "bool", "not in the list of allowed values"}},
    {"GreaterEqual", "bool", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,
     .expect = {"GreaterEqual", "bool", "not in the list of allowed values"}},
    {"LogicalAnd", "float", 2, {IN_T(1, 2), IN_BOOL(1, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"LogicalAnd", "bool", "float32"}},
    {"LogicalAnd", "incompatible shapes", 2, {IN_BOOL(1, 2), IN_BOOL(1, 3)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"LogicalAnd", "Incompatible shapes", "[2]", "[3]"}},
    {"LogicalOr", "float", 2, {IN_BOOL(1, 2), IN_T(1, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"LogicalOr", "bool", "float32"}},
    {"LogicalOr", "output too large", 2, {IN_BOOL(3, BIG, 1, 0), IN_BOOL(3, 1, BIG, 0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"LogicalOr", "overflow"}},
    {"LogicalNot", "float", 1, {IN_T(1, 2)}, .code = TFC_INVALID_ARGUMENT, .expect = {"LogicalNot", "bool", "float32"}},

    {"SelectV2", "not broadcastable", 3, {IN_BOOL(1, 2), IN_T(1, 3), IN_T(0, 0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"SelectV2", "condition [2], then [3], and else [] must be broadcastable"}},
    {"SelectV2", "then and else", 3, {IN_BOOL(0, 0), IN_T(1, 3), IN_T(1, 4)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"SelectV2", "[3]", "[4]", "broadcastable"}},
    {"SelectV2", "float condition", 3, {IN_T(1, 2), IN_T(1, 2), IN_T(1, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"SelectV2", "bool", "float32"}},
    {"SelectV2", "mixed dtypes", 3, {IN_BOOL(1, 2), IN_T(1, 2), {.dtype = TFC_INT32, .rank = 1, .dims = {2}}},
     .code = TFC_INVALID_ARGUMENT, .expect = {"SelectV2", "float32", "int32"}},
    {"SelectV2", "output too large", 3, {IN_BOOL(3, BIG, 1, 0), IN_T(3, 1, BIG, 0), IN_T(0, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"SelectV2", "overflow"}},

    {"Cast", "missing DstT", 1, {IN_T(1, 2)}, .code = TFC_INVALID_ARGUMENT, .expect = {"Cast", "DstT"}},
    {"Cast", "to string", 1, {IN_T(1, 2)}, 1, {TFC_ATTR_T("DstT", TFC_STRING)}, .code = TFC_UNIMPLEMENTED,
     .expect = {"Cast", "float32", "string", "not supported"}},
    {"Cast", "DstT not a type", 1, {IN_T(1, 2)}, 1, {TFC_ATTR_I("DstT", 1)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"Cast", "DstT"}},

    {"ClipByValue", "vector min for matrix", 3, {IN_T(2, 2, 2), IN_T(1, 2), IN_T(0, 0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ClipByValue", "same shape as input, or a scalar", "[2,2]", "[2]"}},
    {"ClipByValue", "larger max", 3, {IN_T(1, 2), IN_T(0, 0), IN_T(2, 2, 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ClipByValue", "clip_value_max shape: [2,2]"}},
    {"ClipByValue", "mixed dtypes", 3, {IN_T(1, 2), {.dtype = TFC_INT32, .rank = 0}, IN_T(0, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ClipByValue", "float32", "int32"}},
    {"ClipByValue", "bool", 3, {IN_T(1, 2), IN_T(0, 0), IN_T(0, 0)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ClipByValue", "bool", "not in the list of allowed values"}},

    {"AddN", "shape mismatch", 2, {IN_T(1, 2), IN_T(1, 3)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"AddN", "must have the same size and shape", "Input 0: [2] != input 1: [3]"}},
    {"AddN", "no broadcasting", 3, {IN_T(1, 2), IN_T(1, 2), IN_T(0, 0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"AddN", "Input 1: [2] != input 2: []"}},
    {"AddN", "no inputs", 0, .code = TFC_INVALID_ARGUMENT, .expect = {"AddN"}},
    {"AddN", "mixed dtypes", 2, {IN_T(1, 2), {.dtype = TFC_INT32, .rank = 1, .dims = {2}}},
     .code = TFC_INVALID_ARGUMENT, .expect = {"AddN", "float32", "int32"}},
    {"AddN", "bool", 2, {IN_T(1, 2), IN_T(1, 2)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,
     .expect = {"AddN", "bool", "not in the list of allowed values"}},
    {0},
};
