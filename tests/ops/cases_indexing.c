/* Op test cases: indexing (GatherV2, GatherNd, ScatterNd, UnsortedSegmentSum, OneHot, Range, Where, ReverseV2,
 * Cumsum, TopKV2). Index inputs are fixed values; data inputs are random in the dtype under test. */
#include "op_test.h"

/* Fixed-value index inputs of any rank: I32N(rank, D(dims...), n, values...). */
#define IDX(dt, r, dimlist, n, ...) \
    {.dtype = (dt), .rank = (r), .dims = {dimlist}, .n_vals = (n), .vals = {__VA_ARGS__}, .no_grad = true}
#define D(...) __VA_ARGS__
#define I32N(r, dl, n, ...) IDX(TFC_INT32, r, D(dl), n, __VA_ARGS__)
#define I64N(r, dl, n, ...) IDX(TFC_INT64, r, D(dl), n, __VA_ARGS__)
#define SCALAR(dt, v) {.dtype = (dt), .rank = 0, .n_vals = 1, .vals = {v}, .no_grad = true}
#define EMPTY_IDX(dt, r, dl) {.dtype = (dt), .rank = (r), .dims = {dl}, .no_grad = true}
/* A T-typed input with fixed values (Range bounds, one-hot values, top-k rows). */
#define TVALS(r, dl, n, ...) {.rank = (r), .dims = {dl}, .n_vals = (n), .vals = {__VA_ARGS__}, .no_grad = true}
#define TVALS_G(r, dl, n, ...) {.rank = (r), .dims = {dl}, .n_vals = (n), .vals = {__VA_ARGS__}}

static const tfc_dtype scatter_dtypes[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_UINT8,
                                           TFC_INT16, TFC_INT32, TFC_INT64, TFC_BOOL, 0};
static const tfc_dtype one_hot_dtypes[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT8, TFC_UINT8,
                                           TFC_INT16, TFC_INT32, TFC_INT64, TFC_BOOL, 0};
static const tfc_dtype float_dtypes[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, 0};

const op_case op_cases_indexing[] = {
    /* ---- GatherV2 ---- */
    {"GatherV2", "axis 0", 3, {IN_T(2, 5, 3), I32N(1, 4, 4, 1, 2, 0, 4), IN_SCALAR_I32(0)}, .grad = true},
    {"GatherV2", "axis 1, 2-D int64 indices", 3,
     {IN_T(3, 3, 4, 2), I64N(2, D(2, 3), 6, 3, 0, 1, 1, 2, 3), SCALAR(TFC_INT64, 1)}, .grad = true},
    {"GatherV2", "batch_dims 1", 3, {IN_T(3, 2, 3, 4), I32N(2, D(2, 2), 4, 0, 3, 1, 2), IN_SCALAR_I32(2)},
     1, {TFC_ATTR_I("batch_dims", 1)}, .grad = true},
    {"GatherV2", "batch_dims -1, axis -1", 3, {IN_T(3, 2, 3, 4), I32N(2, D(2, 3), 6, 0, 3, 1, 2, 2, 0), IN_SCALAR_I32(-1)},
     1, {TFC_ATTR_I("batch_dims", -1)}, .grad = true},
    {"GatherV2", "batch_dims == axis", 3, {IN_T(3, 2, 3, 4), I32N(2, D(2, 2), 4, 2, 0, 1, 1), IN_SCALAR_I32(1)},
     1, {TFC_ATTR_I("batch_dims", 1)}, .grad = true},
    {"GatherV2", "scalar index", 3, {IN_T(2, 4, 3), SCALAR(TFC_INT32, 2), IN_SCALAR_I32(1)}, .grad = true},
    {"GatherV2", "duplicate indices", 3, {IN_T(2, 3, 2), I32N(1, 5, 5, 0, 2, 0, 0, 2), IN_SCALAR_I32(0)}, .grad = true},
    {"GatherV2", "int16 indices, middle axis", 3,
     {IN_T(4, 2, 3, 2, 2), IDX(TFC_INT16, 1, 3, 3, 2, 0, 2), IN_SCALAR_I32(1)}, .grad = true},
    {"GatherV2", "empty indices", 3, {IN_T(2, 4, 3), EMPTY_IDX(TFC_INT32, 1, 0), IN_SCALAR_I32(0)}, .grad = true},
    {"GatherV2", "size-0 inner dim", 3, {IN_T(2, 4, 0), I32N(1, 2, 2, 3, 1), IN_SCALAR_I32(0)}, .grad = false},
    {"GatherV2", "1-D params", 3, {IN_T(1, 6), I32N(2, D(2, 2), 4, 5, 0, 3, 3), IN_SCALAR_I32(0)}, .grad = true},

    /* ---- GatherNd ---- */
    {"GatherNd", "full-depth index", 2, {IN_T(2, 3, 4), I32N(2, D(2, 2), 4, 0, 1, 2, 3)}, .grad = true},
    {"GatherNd", "slices", 2, {IN_T(3, 3, 4, 2), I32N(2, D(2, 1), 2, 2, 0)}, .grad = true},
    {"GatherNd", "batched, duplicates, int64", 2, {IN_T(2, 4, 3), I64N(3, D(2, 2, 1), 4, 3, 0, 3, 1)}, .grad = true},
    {"GatherNd", "depth 2 of 3", 2, {IN_T(3, 2, 3, 2), I32N(2, D(3, 2), 6, 1, 2, 0, 0, 1, 1)}, .grad = true},
    {"GatherNd", "depth 0", 2, {IN_T(2, 2, 3), EMPTY_IDX(TFC_INT32, 2, D(2, 0))}, .grad = false},
    {"GatherNd", "no index tuples", 2, {IN_T(2, 2, 3), EMPTY_IDX(TFC_INT32, 2, D(0, 2))}, .grad = false},

    /* ---- ScatterNd ---- */
    {"ScatterNd", "vector", 3, {I32N(2, D(4, 1), 4, 4, 3, 1, 7), IN_T(1, 4), I32N(1, 1, 1, 8)},
     .dtypes = scatter_dtypes, .grad = true},
    {"ScatterNd", "duplicates sum", 3, {I32N(2, D(3, 1), 3, 1, 1, 0), IN_RANGE(2, 0, 4, 3, 2), I32N(1, 2, 2, 3, 2)},
     .dtypes = scatter_dtypes, .grad = true},
    {"ScatterNd", "full depth", 3, {I32N(2, D(3, 2), 6, 0, 1, 2, 0, 0, 1), IN_T(1, 3), I32N(1, 2, 2, 3, 2)},
     .dtypes = scatter_dtypes, .grad = true},
    {"ScatterNd", "batched, int64", 3, {I64N(3, D(2, 2, 1), 4, 3, 0, 0, 2), IN_T(3, 2, 2, 3), I64N(1, 2, 2, 4, 3)},
     .dtypes = scatter_dtypes, .grad = true},
    {"ScatterNd", "no updates", 3, {EMPTY_IDX(TFC_INT32, 2, D(0, 1)), IN_T(1, 0), I32N(1, 1, 1, 3)},
     .dtypes = scatter_dtypes},
    {"ScatterNd", "wide slices", 3, {I32N(2, D(3, 1), 3, 1, 0, 1), IN_T(2, 3, 100), I32N(1, 2, 2, 2, 100)},
     .dtypes = scatter_dtypes, .grad = true},

    /* ---- UnsortedSegmentSum ---- */
    {"UnsortedSegmentSum", "rows", 3, {IN_T(2, 4, 3), I32N(1, 4, 4, 0, 2, 0, 1), IN_SCALAR_I32(3)}, .grad = true},
    {"UnsortedSegmentSum", "2-D ids, int64 num_segments", 3,
     {IN_T(3, 2, 2, 3), I64N(2, D(2, 2), 4, 3, 0, 0, 1), SCALAR(TFC_INT64, 4)}, .grad = true},
    {"UnsortedSegmentSum", "negative ids dropped", 3, {IN_T(2, 4, 3), I32N(1, 4, 4, 1, -1, 1, -3), IN_SCALAR_I32(2)},
     .grad = true},
    {"UnsortedSegmentSum", "ids cover data", 3, {IN_T(2, 2, 3), I32N(2, D(2, 3), 6, 1, 0, 1, 1, 4, 0), IN_SCALAR_I32(5)},
     .grad = true},
    {"UnsortedSegmentSum", "no segments", 3, {IN_T(2, 0, 3), EMPTY_IDX(TFC_INT32, 1, 0), IN_SCALAR_I32(0)}, .grad = false},

    /* ---- OneHot ---- */
    {"OneHot", "last axis, out of range rows", 4,
     {I32N(1, 4, 4, 0, 2, -1, 5), SCALAR(TFC_INT32, 3), TVALS(0, 0, 1, 5), TVALS(0, 0, 1, -2)},
     .dtypes = one_hot_dtypes},
    {"OneHot", "axis 0, int64", 4,
     {I64N(2, D(2, 3), 6, 1, 0, 3, 2, 2, 0), SCALAR(TFC_INT32, 4), TVALS(0, 0, 1, 1), TVALS(0, 0, 1, 0)},
     1, {TFC_ATTR_I("axis", 0)}, .dtypes = one_hot_dtypes},
    {"OneHot", "axis 1, uint8", 4,
     {IDX(TFC_UINT8, 2, D(2, 2), 4, 1, 0, 2, 1), SCALAR(TFC_INT32, 3), TVALS(0, 0, 1, 7), TVALS(0, 0, 1, 3)},
     1, {TFC_ATTR_I("axis", 1)}, .dtypes = one_hot_dtypes},
    {"OneHot", "scalar index", 4, {SCALAR(TFC_INT8, 2), SCALAR(TFC_INT32, 4), TVALS(0, 0, 1, 1), TVALS(0, 0, 1, 0)},
     .dtypes = one_hot_dtypes},
    {"OneHot", "depth 0", 4, {I32N(1, 3, 3, 0, 1, 2), SCALAR(TFC_INT32, 0), TVALS(0, 0, 1, 1), TVALS(0, 0, 1, 0)},
     .dtypes = one_hot_dtypes},

    /* ---- Range ---- */
    {"Range", "ascending", 3, {TVALS(0, 0, 1, 0), TVALS(0, 0, 1, 10), TVALS(0, 0, 1, 3)}, .grad = false},
    {"Range", "descending", 3, {TVALS(0, 0, 1, 10), TVALS(0, 0, 1, -3), TVALS(0, 0, 1, -2)}, .grad = false},
    {"Range", "empty", 3, {TVALS(0, 0, 1, 3), TVALS(0, 0, 1, 3), TVALS(0, 0, 1, 1)}, .grad = false},
    {"Range", "fractional", 3, {TVALS(0, 0, 1, 0.5), TVALS(0, 0, 1, 2), TVALS(0, 0, 1, 0.25)}, .dtypes = float_dtypes},
    {"Range", "1-element vectors", 3, {TVALS(1, 1, 1, 1), TVALS(1, 1, 1, 7), TVALS(1, 1, 1, 2)}, .grad = false},

    /* ---- Where ---- */
    {"Where", "rank 2", 1, {{.rank = 2, .dims = {3, 4}, .lo = -1, .hi = 1, .integer = true}}, .grad = false},
    {"Where", "rank 1", 1, {{.rank = 1, .dims = {9}, .lo = -1, .hi = 1, .integer = true}}, .grad = false},
    {"Where", "rank 4", 1, {{.rank = 4, .dims = {2, 3, 2, 2}, .lo = -1, .hi = 1, .integer = true}}, .grad = false},
    {"Where", "size 0", 1, {IN_T(3, 2, 0, 3)}, .grad = false},
    {"Where", "all set", 1, {IN_RANGE(2, 2, 3, 3, 2)}, .grad = false},

    /* ---- ReverseV2 ---- */
    {"ReverseV2", "last axis", 2, {IN_T(2, 2, 3), I32N(1, 1, 1, 1)}, .grad = true},
    {"ReverseV2", "first and last, int64 axis", 2, {IN_T(3, 2, 3, 4), I64N(1, 2, 2, 0, -1)}, .grad = true},
    {"ReverseV2", "middle axis", 2, {IN_T(3, 2, 3, 4), I32N(1, 1, 1, 1)}, .grad = true},
    {"ReverseV2", "no axes", 2, {IN_T(2, 2, 3), EMPTY_IDX(TFC_INT32, 1, 0)}, .grad = true},
    {"ReverseV2", "size-1 dims merged", 2, {IN_T(4, 4, 1, 3, 2), I32N(1, 3, 3, 1, 2, 3)}, .grad = true},
    {"ReverseV2", "all axes", 2, {IN_T(3, 3, 2, 2), I32N(1, 3, 3, 2, 0, 1)}, .grad = true},
    {"ReverseV2", "scalar", 2, {IN_T(0, 0), EMPTY_IDX(TFC_INT32, 1, 0)}, .grad = true},
    {"ReverseV2", "size 0", 2, {IN_T(2, 0, 3), I32N(1, 1, 1, 1)}, .grad = false},

    /* ---- Cumsum ---- */
    {"Cumsum", "last axis", 2, {IN_T(2, 2, 3), SCALAR(TFC_INT32, 1)}, .grad = true},
    {"Cumsum", "first axis, exclusive", 2, {IN_T(2, 3, 4), SCALAR(TFC_INT32, 0)}, 1, {TFC_ATTR_B("exclusive", true)},
     .grad = true},
    {"Cumsum", "middle axis, reverse, int64 axis", 2, {IN_T(3, 2, 3, 4), SCALAR(TFC_INT64, -2)}, 1,
     {TFC_ATTR_B("reverse", true)}, .grad = true},
    {"Cumsum", "exclusive reverse", 2, {IN_T(2, 3, 5), SCALAR(TFC_INT32, 1)}, 2,
     {TFC_ATTR_B("exclusive", true), TFC_ATTR_B("reverse", true)}, .grad = true},
    {"Cumsum", "wide inner blocks", 2, {IN_T(2, 3, 1100), SCALAR(TFC_INT32, 0)}, .grad = true},
    {"Cumsum", "rank 1", 2, {IN_T(1, 7), SCALAR(TFC_INT32, 0)}, .grad = true},
    {"Cumsum", "size 0", 2, {IN_T(2, 0, 3), SCALAR(TFC_INT32, 1)}, .grad = false},

    /* ---- TopKV2 ---- */
    {"TopKV2", "k 3 of 10, sorted", 2, {TVALS_G(2, D(2, 5), 10, 7, 2, 9, 4, 0, 5, 1, 8, 3, 6), SCALAR(TFC_INT32, 3)},
     .grad = true},
    {"TopKV2", "unsorted", 2, {TVALS_G(2, D(2, 5), 10, 7, 2, 9, 4, 0, 5, 1, 8, 3, 6), SCALAR(TFC_INT32, 2)},
     1, {TFC_ATTR_B("sorted", false)}, .grad = true},
    {"TopKV2", "ties keep index order", 2, {TVALS(1, 6, 6, 3, 5, 3, 5, 1, 5), SCALAR(TFC_INT32, 4)}, .grad = false},
    /* Gradient cases use distinct values: random ones within the finite-difference step of each other would
     * swap places under the perturbation (a kink the central difference averages over). */
    {"TopKV2", "k = n", 2, {TVALS_G(2, D(3, 4), 12, 3, -7, 11, 0, 5, -2, 9, -11, 1, 6, -4, 8), SCALAR(TFC_INT32, 4)}, .grad = true},
    {"TopKV2", "k = 1", 2, {TVALS_G(3, D(2, 2, 4), 16, 3, -7, 11, 0, 5, -2, 9, -11, 1, 6, -4, 8, 2, -9, 12, 4), SCALAR(TFC_INT32, 1)}, .grad = true},
    {"TopKV2", "random values", 2, {IN_T(2, 3, 4), SCALAR(TFC_INT32, 4)}, .grad = false},
    {"TopKV2", "k = 0", 2, {IN_T(2, 2, 3), SCALAR(TFC_INT32, 0)}, .grad = false},
    {"TopKV2", "long rows, int64 k and indices", 2, {IN_T(2, 3, 300), SCALAR(TFC_INT64, 20)}, 1,
     {TFC_ATTR_T("index_type", TFC_INT64)}, .grad = true},
    {"TopKV2", "long rows unsorted, int16 indices", 2, {IN_T(2, 2, 200), SCALAR(TFC_INT16, 50)}, 2,
     {TFC_ATTR_T("index_type", TFC_INT16), TFC_ATTR_B("sorted", false)}, .grad = true},
    {"TopKV2", "no rows", 2, {IN_T(2, 0, 4), SCALAR(TFC_INT32, 2)}, .grad = false},
    {0},
};

const bad_case bad_cases_indexing[] = {
    /* ---- GatherV2 ---- */
    {"GatherV2", "index out of range", 3, {IN_T(2, 5, 3), I32N(1, 4, 4, 1, 2, 0, 7), IN_SCALAR_I32(0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherV2", "indices[3] = 7 is not in [0, 5)"}},
    {"GatherV2", "negative index, 2-D indices", 3, {IN_T(2, 5, 3), I32N(2, D(2, 2), 4, 1, 2, 0, -1), IN_SCALAR_I32(1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherV2", "indices[1,1] = -1 is not in [0, 3)"}},
    {"GatherV2", "axis out of range", 3, {IN_T(2, 5, 3), I32N(1, 1, 1, 0), IN_SCALAR_I32(2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherV2", "axis 2", "[-2, 2)"}},
    {"GatherV2", "axis not scalar", 3, {IN_T(2, 5, 3), I32N(1, 1, 1, 0), I32N(1, 1, 1, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherV2", "axis must be scalar"}},
    {"GatherV2", "scalar params", 3, {IN_T(0, 0), I32N(1, 1, 1, 0), IN_SCALAR_I32(0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherV2", "params must be at least 1 dimensional"}},
    {"GatherV2", "float indices", 3, {IN_T(2, 5, 3), IN_T(1, 2), IN_SCALAR_I32(0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherV2", "Tindices", "float32"}},
    {"GatherV2", "batch_dims > axis", 3, {IN_T(2, 5, 3), I32N(2, D(5, 1), 5, 0, 0, 0, 0, 0), IN_SCALAR_I32(0)},
     1, {TFC_ATTR_I("batch_dims", 1)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"GatherV2", "batch_dims (1) must be less than or equal to axis (0)"}},
    {"GatherV2", "batch_dims beyond indices rank", 3, {IN_T(2, 5, 3), I32N(1, 5, 5, 0, 0, 0, 0, 0), IN_SCALAR_I32(1)},
     1, {TFC_ATTR_I("batch_dims", 2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"GatherV2", "Expected batch_dims in the range [-1, 1], but got 2"}},
    {"GatherV2", "batch dims differ", 3, {IN_T(2, 5, 3), I32N(2, D(4, 1), 4, 0, 0, 0, 0), IN_SCALAR_I32(1)},
     1, {TFC_ATTR_I("batch_dims", 1)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"GatherV2", "params.shape[0]: 5 should be equal to indices.shape[0]: 4"}},
    {"GatherV2", "output rank above 8", 3, {IN_T(5, 2, 2, 2, 2, 2), I32N(5, D(1, 1, 1, 1, 1), 1, 0), IN_SCALAR_I32(0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherV2", "rank"}},

    /* ---- GatherNd ---- */
    {"GatherNd", "index out of range", 2, {IN_T(2, 5, 3), I32N(2, D(2, 2), 4, 1, 2, 5, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherNd", "indices[1] = [5, 0] does not index into param shape [5,3]"}},
    {"GatherNd", "index depth above params rank", 2, {IN_T(2, 5, 3), I32N(2, D(1, 3), 3, 1, 2, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherNd", "saw: 3 vs. 2"}},
    {"GatherNd", "scalar indices", 2, {IN_T(2, 5, 3), SCALAR(TFC_INT32, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherNd", "indices must be at least a vector"}},
    {"GatherNd", "scalar params", 2, {IN_T(0, 0), EMPTY_IDX(TFC_INT32, 2, D(2, 0))},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherNd", "params must be at least a vector"}},
    {"GatherNd", "empty params", 2, {IN_T(2, 0, 3), I32N(2, D(1, 1), 1, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"GatherNd", "params is empty", "[0,3]"}},
    {"GatherNd", "bad policy", 2, {IN_T(2, 5, 3), I32N(2, D(1, 2), 2, 1, 2)}, 1,
     {TFC_ATTR_S("bad_indices_policy", "FOO")}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"GatherNd", "bad_indices_policy", "FOO"}},

    /* ---- ScatterNd ---- */
    {"ScatterNd", "index out of range", 3, {I32N(2, D(2, 1), 2, 1, 3), IN_T(1, 2), I32N(1, 1, 1, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "indices[1] = [3] does not index into shape [3]"}},
    {"ScatterNd", "negative index", 3, {I32N(2, D(2, 2), 4, 1, 0, -1, 2), IN_T(1, 2), I32N(1, 2, 2, 3, 4)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "indices[1] = [-1, 2] does not index into shape [3,4]"}},
    {"ScatterNd", "updates outer dims differ", 3, {I32N(2, D(2, 1), 2, 1, 2), IN_T(1, 3), I32N(1, 1, 1, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "Dimensions [0,1) of indices[shape=[2,1]]", "updates[shape=[3]]"}},
    {"ScatterNd", "updates inner dims differ", 3, {I32N(2, D(2, 1), 2, 1, 2), IN_T(2, 2, 2), I32N(1, 2, 2, 3, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "Dimensions [1,2) of input[shape=[3,3]]", "[2,2]"}},
    {"ScatterNd", "index depth above shape rank", 3, {I32N(2, D(1, 3), 3, 1, 1, 1), IN_T(1, 1), I32N(1, 2, 2, 3, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "Dimensions [3,2) of input[shape=[3,3]]"}},
    {"ScatterNd", "negative shape", 3, {I32N(2, D(1, 1), 1, 1), IN_T(1, 1), I32N(1, 1, 1, -3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "Dimension -3 must be >= 0"}},
    {"ScatterNd", "shape overflows int64", 3, {I64N(2, D(1, 1), 1, 1), IN_T(2, 1, 1), I64N(1, 2, 2, 1099511627776.0, 1099511627776.0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "would have more than 2**63 - 1 elements"}},
    {"ScatterNd", "empty output", 3, {I32N(2, D(1, 1), 1, 1), IN_T(2, 1, 0), I32N(1, 2, 2, 3, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "Indices and updates specified for empty output shape"}},
    {"ScatterNd", "shape not a vector", 3, {I32N(2, D(1, 1), 1, 1), IN_T(1, 1), I32N(2, D(1, 1), 1, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "Shape must be a vector"}},
    {"ScatterNd", "scalar updates", 3, {I32N(2, D(1, 1), 1, 1), IN_T(0, 0), I32N(1, 1, 1, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "Updates shape must have rank at least one"}},
    {"ScatterNd", "shape dtype differs from indices", 3, {I32N(2, D(1, 1), 1, 1), IN_T(1, 1), I64N(1, 1, 1, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ScatterNd", "int64"}},

    /* ---- UnsortedSegmentSum ---- */
    {"UnsortedSegmentSum", "id out of range", 3, {IN_T(2, 3, 2), I32N(1, 3, 3, 1, 3, 1), IN_SCALAR_I32(3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"UnsortedSegmentSum", "segment_ids[1] = 3 is out of range [0, 3)"}},
    {"UnsortedSegmentSum", "ids not a prefix", 3, {IN_T(2, 3, 2), I32N(1, 2, 2, 1, 2), IN_SCALAR_I32(3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"UnsortedSegmentSum", "data.shape = [3,2] does not start with segment_ids.shape = [2]"}},
    {"UnsortedSegmentSum", "negative num_segments", 3, {IN_T(2, 1, 2), I32N(1, 1, 1, 0), IN_SCALAR_I32(-1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"UnsortedSegmentSum", "num_segments == -1 must not be negative"}},
    {"UnsortedSegmentSum", "num_segments not scalar", 3, {IN_T(2, 1, 2), I32N(1, 1, 1, 0), I32N(1, 1, 1, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"UnsortedSegmentSum", "num_segments should be a scalar, not shape [1]"}},
    {"UnsortedSegmentSum", "output overflows", 3, {IN_T(2, 1, 4096), I32N(1, 1, 1, 0), SCALAR(TFC_INT64, 4611686018427387904.0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"UnsortedSegmentSum", "overflows"}},
    {"UnsortedSegmentSum", "bool data", 3, {IN_T(1, 2), I32N(1, 2, 2, 0, 1), IN_SCALAR_I32(2)}, .dtype = TFC_BOOL,
     .code = TFC_INVALID_ARGUMENT, .expect = {"UnsortedSegmentSum", "bool"}},

    /* ---- OneHot ---- */
    {"OneHot", "axis below -1", 4, {I32N(1, 2, 2, 0, 2), SCALAR(TFC_INT32, 3), IN_T(0, 0), IN_T(0, 0)}, 1,
     {TFC_ATTR_I("axis", -2)}, .code = TFC_INVALID_ARGUMENT,
     .expect = {"OneHot", "Expected axis to be -1 or between [0, 2).  But received: -2"}},
    {"OneHot", "axis too large", 4, {I32N(1, 2, 2, 0, 2), SCALAR(TFC_INT32, 3), IN_T(0, 0), IN_T(0, 0)}, 1,
     {TFC_ATTR_I("axis", 2)}, .code = TFC_INVALID_ARGUMENT, .expect = {"OneHot", "But received: 2"}},
    {"OneHot", "negative depth", 4, {I32N(1, 2, 2, 0, 2), SCALAR(TFC_INT32, -1), IN_T(0, 0), IN_T(0, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"OneHot", "depth must be non-negative, got: -1"}},
    {"OneHot", "depth not scalar", 4, {I32N(1, 2, 2, 0, 2), I32N(1, 1, 1, 3), IN_T(0, 0), IN_T(0, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"OneHot", "depth must be a scalar, but got: [1]"}},
    {"OneHot", "on_value not scalar", 4, {I32N(1, 2, 2, 0, 2), SCALAR(TFC_INT32, 3), IN_T(1, 1), IN_T(0, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"OneHot", "on_value must be a scalar, but got: [1]"}},
    {"OneHot", "int16 indices", 4, {IDX(TFC_INT16, 1, 2, 2, 0, 1), SCALAR(TFC_INT32, 3), IN_T(0, 0), IN_T(0, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"OneHot", "TI", "int16"}},
    {"OneHot", "on and off dtypes differ", 4, {I32N(1, 2, 2, 0, 2), SCALAR(TFC_INT32, 3), IN_T(0, 0), SCALAR(TFC_INT32, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"OneHot", "int32"}},

    /* ---- Range ---- */
    {"Range", "zero delta", 3, {SCALAR(TFC_INT32, 0), SCALAR(TFC_INT32, 10), SCALAR(TFC_INT32, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "Requires delta != 0: 0"}},
    {"Range", "negative delta, start < limit", 3, {SCALAR(TFC_INT32, 0), SCALAR(TFC_INT32, 10), SCALAR(TFC_INT32, -1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "Requires start >= limit when delta < 0: 0/10"}},
    {"Range", "positive delta, start > limit", 3, {SCALAR(TFC_INT32, 10), SCALAR(TFC_INT32, 0), SCALAR(TFC_INT32, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "Requires start <= limit when delta > 0: 10/0"}},
    {"Range", "size beyond int64", 3, {SCALAR(TFC_FLOAT, 0), SCALAR(TFC_FLOAT, 1e30), SCALAR(TFC_FLOAT, 1e-10)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "Requires ((limit - start) / delta) <= 9223372036854775807"}},
    {"Range", "int64 span beyond int64", 3, {SCALAR(TFC_INT64, -9.2e18), SCALAR(TFC_INT64, 9.2e18), SCALAR(TFC_INT64, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "Requires ((limit - start) / delta) <= 9223372036854775807"}},
    {"Range", "huge output", 3, {SCALAR(TFC_INT64, 0), SCALAR(TFC_INT64, 4.6e18), SCALAR(TFC_INT64, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "too large"}},
    {"Range", "vector start", 3, {I32N(1, 2, 2, 0, 1), SCALAR(TFC_INT32, 10), SCALAR(TFC_INT32, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "start must be a scalar, not shape [2]"}},
    {"Range", "mixed dtypes", 3, {SCALAR(TFC_INT32, 0), SCALAR(TFC_INT64, 10), SCALAR(TFC_INT32, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "int64"}},
    {"Range", "bool", 3, {SCALAR(TFC_BOOL, 0), SCALAR(TFC_BOOL, 1), SCALAR(TFC_BOOL, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Range", "Tidx", "bool"}},

    /* ---- Where ---- */
    {"Where", "scalar", 1, {IN_T(0, 0)}, .code = TFC_INVALID_ARGUMENT, .expect = {"Where", "Unhandled input dimensions: 0"}},

    /* ---- ReverseV2 ---- */
    {"ReverseV2", "axis out of range", 2, {IN_T(2, 2, 3), I32N(1, 1, 1, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ReverseV2", "'axis'[0] = 2 is out of valid range"}},
    {"ReverseV2", "negative axis out of range", 2, {IN_T(2, 2, 3), I32N(1, 2, 2, 0, -3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ReverseV2", "'axis'[1] = -3 is out of valid range"}},
    {"ReverseV2", "duplicate axis", 2, {IN_T(2, 2, 3), I32N(1, 2, 2, 1, -1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ReverseV2", "axis 1 specified more than once. (axis entry -1 as given)"}},
    {"ReverseV2", "scalar axis", 2, {IN_T(2, 2, 3), SCALAR(TFC_INT32, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ReverseV2", "'dims' must be 1-dimension, not 0"}},
    {"ReverseV2", "float axis", 2, {IN_T(2, 2, 3), IN_T(1, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"ReverseV2", "Tidx", "float32"}},

    /* ---- Cumsum ---- */
    {"Cumsum", "axis out of range", 2, {IN_T(2, 2, 3), SCALAR(TFC_INT32, 2)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Cumsum", "Expected scan axis in the range [-2, 2), but got 2"}},
    {"Cumsum", "scalar input", 2, {IN_T(0, 0), SCALAR(TFC_INT32, 0)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Cumsum", "Expected scan axis in the range [0, 0), but got 0"}},
    {"Cumsum", "axis not scalar", 2, {IN_T(2, 2, 3), I32N(1, 1, 1, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"Cumsum", "axis must be a scalar, not [1]"}},
    {"Cumsum", "bool input", 2, {IN_T(1, 3), SCALAR(TFC_INT32, 0)}, .dtype = TFC_BOOL,
     .code = TFC_INVALID_ARGUMENT, .expect = {"Cumsum", "bool"}},

    /* ---- TopKV2 ---- */
    {"TopKV2", "k above last dim", 2, {IN_T(2, 1, 2), SCALAR(TFC_INT32, 3)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"TopKV2", "input must have at least k columns. Had 2, needed 3"}},
    {"TopKV2", "negative k", 2, {IN_T(2, 1, 2), SCALAR(TFC_INT32, -1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"TopKV2", "Need k >= 0, got -1"}},
    {"TopKV2", "scalar input", 2, {IN_T(0, 0), SCALAR(TFC_INT32, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"TopKV2", "input must be >= 1-D, got shape []"}},
    {"TopKV2", "k not scalar", 2, {IN_T(1, 3), I32N(1, 1, 1, 1)},
     .code = TFC_INVALID_ARGUMENT, .expect = {"TopKV2", "k must be scalar, got shape [1]"}},
    {"TopKV2", "bool input", 2, {IN_T(1, 3), SCALAR(TFC_INT32, 1)}, .dtype = TFC_BOOL,
     .code = TFC_INVALID_ARGUMENT, .expect = {"TopKV2", "bool"}},
    {"TopKV2", "int16 indices too narrow", 2, {IN_T(1, 40000), SCALAR(TFC_INT32, 1)}, 1,
     {TFC_ATTR_T("index_type", TFC_INT16)}, .code = TFC_INVALID_ARGUMENT, .expect = {"TopKV2", "40000", "int16"}},
    {0},
};
