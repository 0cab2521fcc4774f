/* Typed wrappers for the indexing ops (include/tfc/ops/indexing.h): build scalar/shape tensors and attrs,
 * call tfc_execute. */
#include <math.h>

#include "tfc/ops/indexing.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */

/* Runs a one-output op and releases the helper tensors the wrapper made (aux, may hold NULLs; a NULL input
 * means building it failed and st is already set). */
static tfc_tensor *run1(tfc_ctx *ctx, const char *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs,
                        int n_attrs, tfc_tensor **aux, int n_aux, tfc_status *st) {
    bool ready = true;
    for (int i = 0; i < n_in; i++) ready &= in[i] != NULL;
    tfc_tensor *r = ready ? tfc_emit(ctx, op, in, n_in, attrs, n_attrs, st) : NULL;
    for (int i = 0; i < n_aux; i++) tfc_tensor_unref(aux[i]);
    return r;
}

tfc_tensor *tfc_gather(tfc_ctx *ctx, const tfc_tensor *params, const tfc_tensor *indices, int64_t axis,
                       int64_t batch_dims, tfc_status *st) {
    tfc_tensor *a = tfc_scalar_i64(axis, st);
    tfc_attr bd = TFC_ATTR_I("batch_dims", batch_dims);
    return run1(ctx, "GatherV2", (tfc_tensor *[]){T(params), T(indices), a}, 3, &bd, 1, &a, 1, st);
}

tfc_tensor *tfc_gather_nd(tfc_ctx *ctx, const tfc_tensor *params, const tfc_tensor *indices, tfc_status *st) {
    return run1(ctx, "GatherNd", (tfc_tensor *[]){T(params), T(indices)}, 2, NULL, 0, NULL, 0, st);
}

tfc_tensor *tfc_scatter_nd(tfc_ctx *ctx, const tfc_tensor *indices, const tfc_tensor *updates, const int64_t *dims,
                           int rank, tfc_status *st) {
    if (!indices || rank < 0 || rank > TFC_MAX_RANK || (rank > 0 && !dims)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "ScatterNd: shape of rank %d (or indices) missing or invalid", rank);
        return NULL;
    }
    tfc_dtype dt = tfc_tensor_dtype(indices);
    if (dt != TFC_INT16 && dt != TFC_INT32 && dt != TFC_INT64) dt = TFC_INT64; /* the op reports the bad dtype */
    int64_t max = dt == TFC_INT16 ? INT16_MAX : dt == TFC_INT32 ? INT32_MAX : INT64_MAX;
    int64_t min = dt == TFC_INT16 ? INT16_MIN : dt == TFC_INT32 ? INT32_MIN : INT64_MIN;
    for (int i = 0; i < rank; i++)
        if (dims[i] > max || dims[i] < min) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "ScatterNd: shape dimension %lld does not fit the %s indices",
                           (long long)dims[i], tfc_dtype_name(dt));
            return NULL;
        }
    tfc_tensor *s = tfc_tensor_new(dt, (int64_t[]){rank}, 1, st);
    if (s) {
        void *d = tfc_tensor_mutable_data(s);
        for (int i = 0; i < rank; i++) {
            if (dt == TFC_INT64) ((int64_t *)d)[i] = dims[i];
            else if (dt == TFC_INT32) ((int32_t *)d)[i] = (int32_t)dims[i];
            else ((int16_t *)d)[i] = (int16_t)dims[i];
        }
    }
    return run1(ctx, "ScatterNd", (tfc_tensor *[]){T(indices), T(updates), s}, 3, NULL, 0, &s, 1, st);
}

tfc_tensor *tfc_unsorted_segment_sum(tfc_ctx *ctx, const tfc_tensor *data, const tfc_tensor *segment_ids,
                                     int64_t num_segments, tfc_status *st) {
    tfc_tensor *n = tfc_scalar_i64(num_segments, st);
    return run1(ctx, "UnsortedSegmentSum", (tfc_tensor *[]){T(data), T(segment_ids), n}, 3, NULL, 0, &n, 1, st);
}

tfc_tensor *tfc_one_hot(tfc_ctx *ctx, const tfc_tensor *indices, int32_t depth, double on_value, double off_value,
                        int64_t axis, tfc_dtype dtype, tfc_status *st) {
    if (!dtype) dtype = TFC_FLOAT;
    if (dtype == TFC_STRING || !tfc_dtype_is_valid(dtype) || dtype == TFC_RESOURCE) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "OneHot: tfc_one_hot takes numeric or bool dtypes, got %s",
                       tfc_dtype_name(dtype));
        return NULL;
    }
    tfc_tensor *aux[3] = {tfc_scalar_i32(depth, st), NULL, NULL};
    if (aux[0]) aux[1] = tfc_scalar(dtype, on_value, st);
    if (aux[1]) aux[2] = tfc_scalar(dtype, off_value, st);
    tfc_attr a = TFC_ATTR_I("axis", axis);
    return run1(ctx, "OneHot", (tfc_tensor *[]){T(indices), aux[0], aux[1], aux[2]}, 4, &a, 1, aux, 3, st);
}

static tfc_tensor *range_scalar(tfc_dtype dt, double v, tfc_status *st) {
    if (dt == TFC_INT64) {
        if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Range: %g does not fit int64", v);
            return NULL;
        }
        return tfc_scalar_i64((int64_t)v, st);
    }
    return tfc_scalar(dt, v, st);
}

tfc_tensor *tfc_range(tfc_ctx *ctx, double start, double limit, double delta, tfc_dtype dtype, tfc_status *st) {
    if (!dtype) {
        bool whole = start == floor(start) && limit == floor(limit) && delta == floor(delta) && fabs(start) < 2147483648.0 &&
                     fabs(limit) < 2147483648.0 && fabs(delta) < 2147483648.0;
        dtype = whole ? TFC_INT32 : TFC_FLOAT;
    }
    tfc_tensor *aux[3] = {range_scalar(dtype, start, st), NULL, NULL};
    if (aux[0]) aux[1] = range_scalar(dtype, limit, st);
    if (aux[1]) aux[2] = range_scalar(dtype, delta, st);
    return run1(ctx, "Range", aux, 3, NULL, 0, aux, 3, st);
}

tfc_tensor *tfc_where(tfc_ctx *ctx, const tfc_tensor *condition, tfc_status *st) {
    return run1(ctx, "Where", (tfc_tensor *[]){T(condition)}, 1, NULL, 0, NULL, 0, st);
}

tfc_tensor *tfc_reverse(tfc_ctx *ctx, const tfc_tensor *tensor, const int64_t *axes, int n, tfc_status *st) {
    if (n < 0 || (n > 0 && !axes)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "ReverseV2: %d axes given", n);
        return NULL;
    }
    tfc_tensor *a = tfc_vec_i64(axes, n, st);
    return run1(ctx, "ReverseV2", (tfc_tensor *[]){T(tensor), a}, 2, NULL, 0, &a, 1, st);
}

tfc_tensor *tfc_cumsum(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, bool exclusive, bool reverse, tfc_status *st) {
    tfc_tensor *a = tfc_scalar_i64(axis, st);
    tfc_attr at[2] = {TFC_ATTR_B("exclusive", exclusive), TFC_ATTR_B("reverse", reverse)};
    return run1(ctx, "Cumsum", (tfc_tensor *[]){T(x), a}, 2, at, 2, &a, 1, st);
}

bool tfc_top_k(tfc_ctx *ctx, const tfc_tensor *input, int64_t k, bool sorted, tfc_tensor **values,
               tfc_tensor **indices, tfc_status *st) {
    *values = *indices = NULL;
    if (k < INT32_MIN || k > INT32_MAX) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "TopKV2: k = %lld does not fit int32", (long long)k);
        return false;
    }
    tfc_tensor *kt = tfc_scalar_i32((int32_t)k, st);
    if (!kt) return false;
    tfc_attr a = TFC_ATTR_B("sorted", sorted);
    tfc_tensor *out[2] = {NULL, NULL};
    int n = tfc_execute(ctx, "TopKV2", (tfc_tensor *[]){T(input), kt}, 2, &a, 1, out, 2, st);
    tfc_tensor_unref(kt);
    if (n != 2) return false;
    *values = out[0];
    *indices = out[1];
    return true;
}
