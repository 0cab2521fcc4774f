/* Op test cases: MatMul and BatchMatMulV2. */
#include "op_test.h"

/* Table rows leave trailing fields to their zero defaults. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#define X(r, ...) {.rank = (r), .dims = {__VA_ARGS__}}
#define TA(a, b) 2, {TFC_ATTR_B("transpose_a", a), TFC_ATTR_B("transpose_b", b)}
#define ADJ(a, b) 2, {TFC_ATTR_B("adj_x", a), TFC_ATTR_B("adj_y", b)}

/* Integer products of the default [-9, 9] inputs stay within int8 only for tiny k: those use k <= 1. */
static const tfc_dtype WIDE[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT32, TFC_INT64, 0};

const op_case op_cases_linalg[] = {
    {"MatMul", "plain", 2, {X(2, 3, 4), X(2, 4, 5)}, .grad = true, .dtypes = WIDE},
    {"MatMul", "transpose_a", 2, {X(2, 4, 3), X(2, 4, 5)}, TA(true, false), .grad = true, .dtypes = WIDE},
    {"MatMul", "transpose_b", 2, {X(2, 3, 4), X(2, 5, 4)}, TA(false, true), .grad = true, .dtypes = WIDE},
    {"MatMul", "transpose both", 2, {X(2, 4, 3), X(2, 5, 4)}, TA(true, true), .grad = true, .dtypes = WIDE},
    {"MatMul", "k = 1 (all int types)", 2, {X(2, 3, 1), X(2, 1, 4)}},
    {"MatMul", "vector products", 2, {X(2, 1, 6), X(2, 6, 1)}, .grad = true, .dtypes = WIDE},
    {"MatMul", "k = 0", 2, {X(2, 3, 0), X(2, 0, 4)}},
    {"MatMul", "m = 0", 2, {X(2, 0, 3), X(2, 3, 4)}},
    {"MatMul", "large", 2, {X(2, 70, 130), X(2, 130, 90)}, .dtypes = WIDE, .tol = 4},
    {"MatMul", "large transposed", 2, {X(2, 130, 70), X(2, 90, 130)}, TA(true, true), .dtypes = WIDE, .tol = 4},

    {"BatchMatMulV2", "batch", 2, {X(3, 2, 3, 4), X(3, 2, 4, 5)}, .grad = true, .dtypes = WIDE},
    {"BatchMatMulV2", "adj_x", 2, {X(3, 2, 4, 3), X(3, 2, 4, 5)}, ADJ(true, false), .grad = true, .dtypes = WIDE},
    {"BatchMatMulV2", "adj_y", 2, {X(3, 2, 3, 4), X(3, 2, 5, 4)}, ADJ(false, true), .grad = true, .dtypes = WIDE},
    {"BatchMatMulV2", "adj both", 2, {X(3, 2, 4, 3), X(3, 2, 5, 4)}, ADJ(true, true), .grad = true, .dtypes = WIDE},
    {"BatchMatMulV2", "rank 2", 2, {X(2, 3, 4), X(2, 4, 2)}, .grad = true, .dtypes = WIDE},
    {"BatchMatMulV2", "broadcast y", 2, {X(3, 3, 2, 4), X(2, 4, 3)}, .grad = true, .dtypes = WIDE},
    {"BatchMatMulV2", "broadcast x", 2, {X(2, 2, 4), X(4, 2, 3, 4, 3)}, .grad = true, .dtypes = WIDE},
    {"BatchMatMulV2", "broadcast both", 2, {X(4, 3, 1, 2, 4), X(4, 1, 2, 4, 3)}, ADJ(false, false), .grad = true,
     .dtypes = WIDE},
    {"BatchMatMulV2", "k = 1 (all int types)", 2, {X(3, 2, 3, 1), X(3, 2, 1, 4)}},
    {"BatchMatMulV2", "size 0 batch", 2, {X(3, 0, 2, 3), X(3, 1, 3, 4)}},
    {"BatchMatMulV2", "k = 0", 2, {X(3, 2, 2, 0), X(3, 2, 0, 3)}},
    {"BatchMatMulV2", "many small", 2, {X(3, 500, 8, 8), X(3, 500, 8, 8)}, .dtypes = WIDE},
    {"BatchMatMulV2", "large", 2, {X(3, 2, 70, 130), X(3, 2, 130, 70)}, ADJ(true, true), .dtypes = WIDE, .tol = 4},
    {0},
};

const bad_case bad_cases_linalg[] = {
    {"MatMul", "rank 3 a", 2, {X(3, 2, 3, 3), X(2, 3, 3)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"MatMul", "In[0] is not a matrix", "[2,3,3]"}},
    {"MatMul", "vector b", 2, {X(2, 3, 3), X(1, 3)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"MatMul", "In[1] is not a matrix", "[3]"}},
    {"MatMul", "inner dims", 2, {X(2, 2, 3), X(2, 4, 3)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"MatMul", "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,3]"}},
    {"MatMul", "inner dims transposed", 2, {X(2, 2, 3), X(2, 2, 3)}, TA(true, true), .code = TFC_INVALID_ARGUMENT,
     .expect = {"MatMul", "Matrix size-incompatible", "transpose_a=true"}},
    {"MatMul", "bool", 2, {X(2, 2, 2), X(2, 2, 2)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,
     .expect = {"MatMul", "bool", "not in the list of allowed values"}},
    {"MatMul", "mixed dtypes", 2, {X(2, 2, 2), {.dtype = TFC_DOUBLE, .rank = 2, .dims = {2, 2}}},
     .code = TFC_INVALID_ARGUMENT, .expect = {"MatMul", "float32", "float64"}},
    {"MatMul", "string transpose_a", 2, {X(2, 2, 2), X(2, 2, 2)}, 1, {TFC_ATTR_S("transpose_a", "yes")},
     .code = TFC_INVALID_ARGUMENT, .expect = {"MatMul", "transpose_a"}},
    {"BatchMatMulV2", "rank 1", 2, {X(1, 3), X(2, 3, 4)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"BatchMatMulV2", "In[0] ndims must be >= 2: 1"}},
    {"BatchMatMulV2", "rank 0 y", 2, {X(2, 3, 4), X(0, 0)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"BatchMatMulV2", "In[1] ndims must be >= 2: 0"}},
    {"BatchMatMulV2", "batch dims", 2, {X(3, 2, 2, 3), X(3, 3, 3, 4)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"BatchMatMulV2", "compatible batch dimensions", "[2,2,3] vs. [3,3,4]"}},
    {"BatchMatMulV2", "inner dims", 2, {X(2, 2, 3), X(2, 4, 4)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"BatchMatMulV2", "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,4]"}},
    {"BatchMatMulV2", "inner dims adjoint", 2, {X(3, 1, 2, 3), X(3, 1, 3, 2)}, ADJ(false, true),
     .code = TFC_INVALID_ARGUMENT, .expect = {"BatchMatMulV2", "Matrix size-incompatible", "adj_y=true"}},
    {"BatchMatMulV2", "bool", 2, {X(2, 2, 2), X(2, 2, 2)}, .dtype = TFC_BOOL, .code = TFC_INVALID_ARGUMENT,
     .expect = {"BatchMatMulV2", "bool"}},
    /* Broadcast batch dims whose product overflows int64 (the inputs are empty: k = 0). */
    {"BatchMatMulV2", "output overflows", 2, {X(4, 3037000500, 1, 1, 0), X(4, 1, 3037000500, 0, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"BatchMatMulV2", "too many elements"}},
    {0},
};
