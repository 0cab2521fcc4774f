/* Op test cases: reductions (Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin). */
#include "op_test.h"

/* Table rows leave trailing fields to their zero defaults. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* Long sums and products of narrow integers wrap in tfc (as TensorFlow) but saturate in the float64
 * reference: those cases run in the types that cannot overflow there. */
static const tfc_dtype WIDE[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT32, TFC_INT64, 0};
static const tfc_dtype IDX32[] = {TFC_INT32, 0};
/* Max/Min of nothing is the type's extreme; the float64 reference's +-inf saturates short of INT64_MAX. */
static const tfc_dtype NO_I64[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_UINT8, TFC_INT16,
                                   TFC_INT32, 0};

#define KEEP {TFC_ATTR_B("keep_dims", true)}
#define AXES_NONE {.dtype = TFC_INT32, .rank = 1, .dims = {0}, .no_grad = true}
#define X(r, ...) {.rank = (r), .dims = {__VA_ARGS__}}
#define XR(r, lo_, hi_, ...) {.rank = (r), .dims = {__VA_ARGS__}, .lo = (lo_), .hi = (hi_)}

/* Shapes and axis patterns every reduction runs (G: check gradients). */
#define REDUCE_CASES(OP, G, lo, hi)                                                                               \
    {OP, "inner", 2, {XR(2, lo, hi, 3, 4), IN_I32(1, 1, 1)}, .grad = G},                                          \
    {OP, "outer", 2, {XR(2, lo, hi, 4, 3), IN_I32(1, 1, 0)}, .grad = G},                                          \
    {OP, "all dims", 2, {XR(3, lo, hi, 2, 3, 2), IN_I32(1, 3, 0, 1, 2)}, .grad = G},                              \
    {OP, "middle", 2, {XR(3, lo, hi, 2, 3, 4), IN_I32(1, 1, 1)}, .grad = G},                                      \
    {OP, "alternating keep_dims", 2, {XR(4, lo, hi, 2, 3, 2, 3), IN_I32(1, 2, 0, 2)}, 1, KEEP, .grad = G},        \
    {OP, "alternating 5-d", 2, {XR(5, lo, hi, 2, 3, 2, 2, 2), IN_I32(1, 3, 4, 0, 2)}, .grad = G},                 \
    {OP, "negative axis", 2, {XR(2, lo, hi, 3, 4), IN_I32(1, 1, -1)}, .grad = G},                                 \
    {OP, "scalar axis", 2, {XR(2, lo, hi, 3, 4), IN_SCALAR_I32(0)}, .grad = G},                                   \
    {OP, "int64 axes", 2, {XR(2, lo, hi, 3, 4), IN_I64(1, 2, -2, 1)}, .grad = G},                                 \
    {OP, "keep_dims", 2, {XR(2, lo, hi, 3, 4), IN_I32(1, 1, 1)}, 1, KEEP, .grad = G},                             \
    {OP, "size-1 dims", 2, {XR(4, lo, hi, 1, 3, 1, 2), IN_I32(1, 2, 0, 3)}, .grad = G},                           \
    {OP, "empty axes", 2, {XR(2, lo, hi, 3, 4), AXES_NONE}, .grad = G},                                           \
    {OP, "rank 0", 2, {XR(0, lo, hi, 0), AXES_NONE}, .grad = G},                                                  \
    {OP, "size 0 reduced", 2, {XR(3, lo, hi, 2, 0, 3), IN_I32(1, 1, 1)}, .dtypes = NO_I64},                       \
    {OP, "size 0 reduced all", 2, {XR(2, lo, hi, 0, 3), IN_I32(1, 2, 0, 1)}, .dtypes = NO_I64},                   \
    {OP, "size 0 kept", 2, {XR(2, lo, hi, 0, 3), IN_I32(1, 1, 1)}}

#define LARGE_CASES(OP, lo, hi, DT)                                                                               \
    {OP, "parallel inner", 2, {XR(2, lo, hi, 2, 30000), IN_I32(1, 1, 1)}, .dtypes = DT},                          \
    {OP, "parallel rows", 2, {XR(2, lo, hi, 200, 257), IN_I32(1, 1, -1)}, .dtypes = DT},                          \
    {OP, "parallel outer narrow", 2, {XR(2, lo, hi, 20000, 3), IN_I32(1, 1, 0)}, .dtypes = DT},                   \
    {OP, "parallel outer wide", 2, {XR(2, lo, hi, 50, 1100), IN_I32(1, 1, 0)}, .dtypes = DT},                    \
    {OP, "parallel middle", 2, {XR(3, lo, hi, 3, 1000, 20), IN_I32(1, 1, 1)}, .dtypes = DT},                      \
    {OP, "parallel all", 2, {XR(1, lo, hi, 65000), IN_I32(1, 1, 0)}, .dtypes = DT}

const op_case op_cases_reduction[] = {
    REDUCE_CASES("Sum", true, -1, 1),
    LARGE_CASES("Sum", -1, 1, WIDE),
    REDUCE_CASES("Mean", true, -1, 1),
    LARGE_CASES("Mean", -1, 1, NULL),
    REDUCE_CASES("Max", true, -1, 1),
    LARGE_CASES("Max", -1, 1, NULL),
    REDUCE_CASES("Min", true, -1, 1),
    LARGE_CASES("Min", -1, 1, NULL),
    /* Products: values near 1 keep long products finite; [-2, 2] keeps short integer products in range. */
    REDUCE_CASES("Prod", true, -2, 2),
    LARGE_CASES("Prod", 0.999, 1.001, ((const tfc_dtype[]){TFC_FLOAT, TFC_DOUBLE, 0})),
    {"Prod", "zeros", 2, {{.rank = 2, .dims = {2, 3}, .n_vals = 6, .vals = {0, 2, 3, 0, 0, 5}}, IN_I32(1, 1, 1)},
     .grad = true},

    /* All/Any: bool inputs (values are checked in tests/unit/test_reduction.c; float64 has no bool reference). */
    {"All", "inner", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {3, 4}}, IN_I32(1, 1, 1)}, .dtypes = IDX32},
    {"All", "keep_dims all", 2, {{.dtype = TFC_BOOL, .rank = 3, .dims = {2, 3, 4}}, IN_I32(1, 3, 0, 1, 2)}, 1, KEEP,
     .dtypes = IDX32},
    {"All", "size 0", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {0, 4}}, IN_I32(1, 1, 0)}, .dtypes = IDX32},
    {"All", "parallel", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {2, 30000}}, IN_I32(1, 1, 1)}, .dtypes = IDX32},
    {"Any", "outer", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {3, 4}}, IN_I32(1, 1, 0)}, .dtypes = IDX32},
    {"Any", "rank 0", 2, {{.dtype = TFC_BOOL, .rank = 0}, AXES_NONE}, .dtypes = IDX32},
    {"Any", "size 0", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {3, 0}}, IN_I32(1, 1, 1)}, .dtypes = IDX32},
    {"Any", "parallel", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {30000, 2}}, IN_I32(1, 1, 0)}, .dtypes = IDX32},

    {"ArgMax", "rows", 2, {X(2, 3, 5), IN_SCALAR_I32(1)}},
    {"ArgMax", "columns", 2, {X(2, 5, 3), IN_SCALAR_I32(0)}},
    {"ArgMax", "middle", 2, {X(3, 2, 5, 3), IN_SCALAR_I32(-2)}},
    {"ArgMax", "vector", 2, {X(1, 7), IN_SCALAR_I32(0)}},
    {"ArgMax", "int32 output", 2, {X(2, 3, 5), IN_SCALAR_I32(1)}, 1, {TFC_ATTR_T("output_type", TFC_INT32)}},
    {"ArgMax", "int16 output", 2, {X(2, 3, 5), IN_SCALAR_I32(1)}, 1, {TFC_ATTR_T("output_type", TFC_INT16)}},
    {"ArgMax", "int64 dimension", 2, {X(2, 3, 5), {.dtype = TFC_INT64, .rank = 0, .n_vals = 1, .vals = {1}, .no_grad = true}}},
    {"ArgMax", "size 0 outer", 2, {X(2, 0, 5), IN_SCALAR_I32(1)}},
    {"ArgMax", "parallel", 2, {X(2, 200, 300), IN_SCALAR_I32(1)}},
    {"ArgMax", "parallel columns", 2, {X(2, 300, 200), IN_SCALAR_I32(0)}},
    {"ArgMin", "rows", 2, {X(2, 3, 5), IN_SCALAR_I32(1)}},
    {"ArgMin", "columns", 2, {X(2, 5, 3), IN_SCALAR_I32(0)}},
    {"ArgMin", "middle", 2, {X(3, 2, 5, 3), IN_SCALAR_I32(1)}},
    {"ArgMin", "int32 output", 2, {X(2, 3, 5), IN_SCALAR_I32(-1)}, 1, {TFC_ATTR_T("output_type", TFC_INT32)}},
    {"ArgMin", "parallel", 2, {X(2, 200, 300), IN_SCALAR_I32(1)}},
    {0},
};

#define BAD(OP, LABEL, N, INS, CODE, ...) {OP, LABEL, N, INS, .code = CODE, .expect = {__VA_ARGS__}}
#define F_AXES(v) {.dtype = TFC_FLOAT, .rank = 1, .dims = {1}, .n_vals = 1, .vals = {v}}
#define BAD_REDUCE(OP)                                                                                            \
    {OP, "axis out of range", 2, {X(2, 2, 3), IN_I32(1, 1, 2)}, .code = TFC_INVALID_ARGUMENT,                     \
     .expect = {OP, "Invalid reduction dimension (2 for input with 2 dimension(s)", "[2,3]"}},                    \
    {OP, "negative axis out of range", 2, {X(2, 2, 3), IN_I32(1, 1, -3)}, .code = TFC_INVALID_ARGUMENT,          \
     .expect = {OP, "Invalid reduction dimension (-3"}},                                                           \
    {OP, "duplicate axes", 2, {X(2, 2, 3), IN_I32(1, 2, 0, -2)}, .code = TFC_INVALID_ARGUMENT,                    \
     .expect = {OP, "Axes contains duplicate dimension: 0 (axes entry -2 as given)"}},                             \
    {OP, "axis of a scalar", 2, {X(0, 0), IN_I32(1, 1, 0)}, .code = TFC_INVALID_ARGUMENT,                         \
     .expect = {OP, "Invalid reduction dimension (0 for input with 0 dimension(s)"}},                            \
    {OP, "float axes", 2, {X(2, 2, 3), F_AXES(0)}, .code = TFC_INVALID_ARGUMENT, .expect = {OP, "Tidx", "float32"}}, \
    {OP, "bool input", 2, {X(2, 2, 3), IN_I32(1, 1, 0)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,       \
     .expect = {OP, "bool", "not in the list of allowed values"}},                                                 \
    {OP, "one input", 1, {X(2, 2, 3)}, .code = TFC_INVALID_ARGUMENT, .expect = {OP}}

const bad_case bad_cases_reduction[] = {
    BAD_REDUCE("Sum"), BAD_REDUCE("Mean"), BAD_REDUCE("Prod"), BAD_REDUCE("Max"), BAD_REDUCE("Min"),
    {"All", "float input", 2, {X(2, 2, 3), IN_I32(1, 1, 0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"All", "bool", "float32"}},
    {"All", "axis out of range", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {2, 3}}, IN_I32(1, 1, 5)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"All", "Invalid reduction dimension (5 for input with 2 dimension(s)"}},
    {"Any", "duplicate axes", 2, {{.dtype = TFC_BOOL, .rank = 2, .dims = {2, 3}}, IN_I32(1, 2, 1, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Any", "duplicate dimension: 1"}},
    {"Any", "int64 input", 2, {X(2, 2, 3), IN_I32(1, 1, 0)}, .dtype = TFC_INT64, .code = TFC_INVALID_ARGUMENT,
     .expect = {"Any", "bool", "int64"}},
    {"ArgMax", "dimension out of range", 2, {X(2, 2, 3), IN_SCALAR_I32(2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ArgMax", "Expected dimension in the range [-2, 2), but got 2"}},
    {"ArgMax", "vector dimension", 2, {X(2, 2, 3), IN_I32(1, 1, 1)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ArgMax", "dim must be a scalar", "[1]"}},
    {"ArgMax", "empty reduced axis", 2, {X(2, 2, 0), IN_SCALAR_I32(1)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ArgMax", "Reduction axis 1 is empty in shape [2,0]"}},
    {"ArgMax", "scalar input", 2, {X(0, 0), IN_SCALAR_I32(0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ArgMax", "range [0, 0), but got 0"}},
    {"ArgMax", "float output_type", 2, {X(2, 2, 3), IN_SCALAR_I32(0)}, 1, {TFC_ATTR_T("output_type", TFC_FLOAT)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ArgMax", "output_type", "float32"}},
    {"ArgMin", "dimension out of range", 2, {X(3, 2, 3, 4), IN_SCALAR_I32(-4)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ArgMin", "Expected dimension in the range [-3, 3), but got -4"}},
    {"ArgMin", "empty reduced axis", 2, {X(2, 0, 3), IN_SCALAR_I32(0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"ArgMin", "Reduction axis 0 is empty in shape [0,3]"}},
    {"ArgMin", "int16 dimension", 2, {X(2, 2, 3), {.dtype = TFC_INT16, .rank = 0, .n_vals = 1, .vals = {0}}},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ArgMin", "Tidx", "int16"}},
    {0},
};
