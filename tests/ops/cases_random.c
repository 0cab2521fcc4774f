/* Op test cases: random ops. Their values have no float64 reference (the streams differ per dtype), so the
 * cases only run them; tests/unit/test_random.c checks TensorFlow's exact values, moments and seeding. */
#include "op_test.h"

/* Table rows leave trailing fields to their zero defaults. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const tfc_dtype FLOATS[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, 0};
static const tfc_dtype INTS[] = {TFC_INT32, TFC_INT64, 0};

#define SEEDS 2, {TFC_ATTR_I("seed", 7), TFC_ATTR_I("seed2", 11)}
#define SHAPE0 {.dtype = TFC_INT32, .rank = 1, .dims = {0}, .no_grad = true}
#define SCALAR_T(v) {.rank = 0, .n_vals = 1, .vals = {v}, .no_grad = true}

#define RANDOM_CASES(OP)                                                                                      \
    {OP, "matrix", 1, {IN_I32(1, 2, 3, 4)}, SEEDS, .dtypes = FLOATS, .no_reference = true, .dtype_attr = "dtype"}, \
    {OP, "unseeded", 1, {IN_I32(1, 3, 2, 1, 5)}, .dtypes = FLOATS, .no_reference = true, .dtype_attr = "dtype"},    \
    {OP, "int64 shape", 1, {IN_I64(1, 1, 9)}, SEEDS, .dtypes = FLOATS, .no_reference = true,                      \
     .dtype_attr = "dtype"},                                                                                      \
    {OP, "scalar", 1, {SHAPE0}, SEEDS, .dtypes = FLOATS, .no_reference = true, .dtype_attr = "dtype"},            \
    {OP, "size 0", 1, {IN_I32(1, 2, 4, 0)}, SEEDS, .dtypes = FLOATS, .no_reference = true, .dtype_attr = "dtype"}, \
    {OP, "parallel", 1, {IN_I32(1, 2, 300, 301)}, SEEDS, .dtypes = FLOATS, .no_reference = true,                  \
     .dtype_attr = "dtype"}

const op_case op_cases_random[] = {
    RANDOM_CASES("RandomUniform"),
    RANDOM_CASES("RandomStandardNormal"),
    RANDOM_CASES("TruncatedNormal"),
    {"RandomUniformInt", "matrix", 3, {IN_I32(1, 2, 3, 4), SCALAR_T(-3), SCALAR_T(7)}, SEEDS, .dtypes = INTS,
     .no_reference = true},
    {"RandomUniformInt", "unseeded", 3, {IN_I32(1, 1, 5), SCALAR_T(0), SCALAR_T(2)}, .dtypes = INTS,
     .no_reference = true},
    {"RandomUniformInt", "size 0 with empty range", 3, {IN_I32(1, 1, 0), SCALAR_T(5), SCALAR_T(5)}, .dtypes = INTS,
     .no_reference = true},
    {"RandomUniformInt", "parallel", 3, {IN_I64(1, 2, 500, 200), SCALAR_T(-100), SCALAR_T(100)}, SEEDS,
     .dtypes = INTS, .no_reference = true},
    /* _TfcDropout (tfc-internal): rate 0 keeps everything (x * 1 * 1), comparable with float64 and
     * differentiable by finite differences; other rates only run here (tests/unit/test_random.c compares them
     * with the unfused ops bit for bit) */
    {"_TfcDropout", "rate 0", 1, {IN_T(2, 3, 5)}, 1, {TFC_ATTR_F("rate", 0.0)}, .grad = true},
    {"_TfcDropout", "rate 0.5, seeded, parallel", 1, {IN_T(2, 60, 301)}, 3,
     {TFC_ATTR_F("rate", 0.5), TFC_ATTR_I("seed", 7), TFC_ATTR_I("seed2", 11)}, .no_reference = true},
    {"_TfcDropout", "unseeded, odd size", 1, {IN_T(3, 3, 1, 7)}, 1, {TFC_ATTR_F("rate", 0.25)}, .no_reference = true},
    {"_TfcDropout", "scalar", 1, {IN_T(0)}, 1, {TFC_ATTR_F("rate", 0.5)}, .no_reference = true},
    {"_TfcDropout", "size 0", 1, {IN_T(2, 4, 0)}, 1, {TFC_ATTR_F("rate", 0.5)}, .no_reference = true},
    {"_TfcDropoutGrad", "rate 0.3", 2, {IN_T(2, 4, 5), {.dtype = TFC_BOOL, .rank = 2, .dims = {4, 5}, .no_grad = true}},
     1, {TFC_ATTR_F("rate", 0.3)}, .grad = true},
    {"_TfcDropoutGrad", "parallel, fixed mask", 2, {IN_T(1, 1000), {.dtype = TFC_BOOL, .rank = 1, .dims = {1000},
     .no_grad = true}}, 1, {TFC_ATTR_F("rate", 0.6)}, .grad = true},
    /* _TfcDropoutSeeded (tfc-internal): _TfcDropout with its seed pair as an input (test_random.c compares them) */
    {"_TfcDropoutSeeded", "rate 0", 2, {IN_T(2, 3, 5), IN_I64(1, 2, 7, 11)}, 1, {TFC_ATTR_F("rate", 0.0)}, .grad = true},
    {"_TfcDropoutSeeded", "rate 0.5, salted, parallel", 2, {IN_T(2, 60, 301), IN_I64(1, 2, 7, 11)}, 2,
     {TFC_ATTR_F("rate", 0.5), TFC_ATTR_I("salt", 3)}, .no_reference = true},
    {"_TfcDropoutSeeded", "size 0", 2, {IN_T(2, 4, 0), IN_I64(1, 2, 1, 2)}, 1, {TFC_ATTR_F("rate", 0.5)},
     .no_reference = true},
    {0},
};

#define SHAPE_F(v) {.dtype = TFC_INT32, .rank = 1, .dims = {1}, .n_vals = 1, .vals = {v}}
#define DT(t) TFC_ATTR_T("dtype", t)
#define BAD_RANDOM(OP)                                                                                            \
    {OP, "matrix shape", 1, {{.dtype = TFC_INT32, .rank = 2, .dims = {1, 2}, .n_vals = 2, .vals = {2, 3}}}, 1,    \
     {DT(TFC_FLOAT)}, .code = TFC_INVALID_ARGUMENT, .expect = {OP, "shape must be a vector of {int32,int64}", "[1,2]"}}, \
    {OP, "scalar shape", 1, {IN_SCALAR_I32(3)}, 1, {DT(TFC_FLOAT)}, .code = TFC_INVALID_ARGUMENT,                 \
     .expect = {OP, "shape must be a vector"}},                                                                    \
    {OP, "negative dim", 1, {IN_I32(1, 2, 3, -2)}, 1, {DT(TFC_FLOAT)}, .code = TFC_INVALID_ARGUMENT,             \
     .expect = {OP, "Dimension -2 must be >= 0"}},                                                                 \
    {OP, "int32 dtype", 1, {IN_I32(1, 1, 3)}, 1, {DT(TFC_INT32)}, .code = TFC_INVALID_ARGUMENT,                   \
     .expect = {OP, "dtype", "int32", "not in the list of allowed values"}},                                       \
    {OP, "missing dtype", 1, {IN_I32(1, 1, 3)}, .code = TFC_INVALID_ARGUMENT, .expect = {OP, "missing attr 'dtype'"}}, \
    {OP, "float shape", 1, {{.dtype = TFC_FLOAT, .rank = 1, .dims = {1}, .n_vals = 1, .vals = {3}}}, 1,           \
     {DT(TFC_FLOAT)}, .code = TFC_INVALID_ARGUMENT, .expect = {OP, "'T'", "float32"}},                             \
    {OP, "size overflows", 1, {IN_I64(1, 3, 1099511627776, 1099511627776, 1099511627776)}, 1, {DT(TFC_FLOAT)},   \
     .code = TFC_INVALID_ARGUMENT, .expect = {OP, "too many elements"}},                                           \
    {OP, "too many dims", 1, {IN_I32(1, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1)}, 1, {DT(TFC_FLOAT)},                        \
     .code = TFC_INVALID_ARGUMENT, .expect = {OP, "9 dimensions"}}

const bad_case bad_cases_random[] = {
    BAD_RANDOM("RandomUniform"),
    BAD_RANDOM("RandomStandardNormal"),
    BAD_RANDOM("TruncatedNormal"),
    {"RandomUniformInt", "empty range", 3, {IN_I32(1, 1, 3), SCALAR_T(5), SCALAR_T(5)}, .dtype = TFC_INT32,
     .code = TFC_INVALID_ARGUMENT, .expect = {"RandomUniformInt", "Need minval < maxval, got 5 >= 5"}},
    {"RandomUniformInt", "vector minval", 3, {IN_I32(1, 1, 3), {.rank = 1, .dims = {1}, .n_vals = 1, .vals = {0}},
     SCALAR_T(5)}, .dtype = TFC_INT64, .code = TFC_INVALID_ARGUMENT,
     .expect = {"RandomUniformInt", "minval must be 0-D, got shape [1]"}},
    {"RandomUniformInt", "matrix maxval", 3, {IN_I32(1, 1, 3), SCALAR_T(0), {.rank = 2, .dims = {1, 1}, .n_vals = 1,
     .vals = {4}}}, .dtype = TFC_INT32, .code = TFC_INVALID_ARGUMENT,
     .expect = {"RandomUniformInt", "maxval must be 0-D, got shape [1,1]"}},
    {"RandomUniformInt", "float bounds", 3, {IN_I32(1, 1, 3), SCALAR_T(0), SCALAR_T(1)}, .dtype = TFC_FLOAT,
     .code = TFC_INVALID_ARGUMENT, .expect = {"RandomUniformInt", "Tout", "float32"}},
    {"RandomUniformInt", "mixed bounds", 3, {IN_I32(1, 1, 3), SCALAR_T(0), {.dtype = TFC_INT64, .rank = 0,
     .n_vals = 1, .vals = {4}}}, .dtype = TFC_INT32, .code = TFC_INVALID_ARGUMENT,
     .expect = {"RandomUniformInt", "int32", "int64"}},
    {"RandomUniformInt", "negative dim", 3, {IN_I32(1, 2, -1, 3), SCALAR_T(0), SCALAR_T(4)}, .dtype = TFC_INT32,
     .code = TFC_INVALID_ARGUMENT, .expect = {"RandomUniformInt", "Dimension -1 must be >= 0"}},
    {"_TfcDropoutSeeded", "3 seeds", 2, {IN_T(1, 3), IN_I64(1, 3, 1, 2, 3)}, 1, {TFC_ATTR_F("rate", 0.5)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"_TfcDropoutSeeded", "seed must be a vector of 2 elements", "[3]"}},
    {"_TfcDropout", "rate 1", 1, {IN_T(1, 3)}, 1, {TFC_ATTR_F("rate", 1.0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"_TfcDropout", "rate must be in [0, 1), got 1"}},
    {"_TfcDropout", "negative rate", 1, {IN_T(1, 3)}, 1, {TFC_ATTR_F("rate", -0.5)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"_TfcDropout", "rate must be in [0, 1), got -0.5"}},
    {"_TfcDropout", "int32 x", 1, {IN_T(1, 3)}, 1, {TFC_ATTR_F("rate", 0.5)}, .dtype = TFC_INT32,
     .code = TFC_INVALID_ARGUMENT, .expect = {"_TfcDropout", "int32"}},
    {"_TfcDropout", "missing rate", 1, {IN_T(1, 3)}, .code = TFC_INVALID_ARGUMENT, .expect = {"_TfcDropout", "rate"}},
    {"_TfcDropoutGrad", "mask shape", 2, {IN_T(2, 2, 3), {.dtype = TFC_BOOL, .rank = 2, .dims = {3, 2}}}, 1,
     {TFC_ATTR_F("rate", 0.5)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"_TfcDropoutGrad", "dy [2,3] and mask [3,2] must have the same shape"}},
    {"_TfcDropoutGrad", "float mask", 2, {IN_T(1, 3), IN_T(1, 3)}, 1, {TFC_ATTR_F("rate", 0.5)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"_TfcDropoutGrad", "input #1", "bool", "float32"}},
    {"_TfcDropoutGrad", "rate 1.5", 2, {IN_T(1, 3), {.dtype = TFC_BOOL, .rank = 1, .dims = {3}}}, 1,
     {TFC_ATTR_F("rate", 1.5)}, .code = TFC_INVALID_ARGUMENT, .expect = {"_TfcDropoutGrad", "rate must be in [0, 1)"}},
    {0},
};
