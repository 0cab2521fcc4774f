/* Typed wrappers for the array ops (include/tfc/ops/array.h): build index tensors and attrs, call
 * tfc_execute. */
#include <string.h>

#include "tfc/ops/array.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */
#define MAX_VALUES 63           /* tfc_execute takes at most 64 inputs */

/* Runs a one-output op, releasing the index tensors the wrapper made (aux, may hold NULLs). */
static tfc_tensor *run1(tfc_ctx *ctx, const char *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                        tfc_tensor **aux, int n_aux, tfc_status *st) {
    bool ready = true;
    for (int i = 0; i < n_in; i++) ready &= in[i] != NULL;
    tfc_tensor *r = ready ? tfc_emit(ctx, op, in, n_in, attrs, n_attrs, st) : NULL;
    for (int i = 0; i < n_aux; i++) tfc_tensor_unref(aux[i]);
    return r;
}

static tfc_tensor *vec(const int64_t *v, int64_t n, tfc_status *st) {
    if (n < 0 || (n > 0 && !v)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "array op: %lld values given", (long long)n);
        return NULL;
    }
    return tfc_vec_i64(v, n, st);
}

static int rank_of(const tfc_tensor *x) { return tfc_tensor_rank(x); }

tfc_tensor *tfc_reshape(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *s = vec(dims, rank, st);
    return run1(ctx, "Reshape", (tfc_tensor *[]){T(x), s}, 2, NULL, 0, &s, 1, st);
}

tfc_tensor *tfc_transpose(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *perm, tfc_status *st) {
    int r = rank_of(x);
    int64_t rev[TFC_MAX_RANK];
    for (int i = 0; i < r; i++) rev[i] = r - 1 - i;
    tfc_tensor *p = vec(perm ? perm : rev, r, st);
    return run1(ctx, "Transpose", (tfc_tensor *[]){T(x), p}, 2, NULL, 0, &p, 1, st);
}

tfc_tensor *tfc_expand_dims(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_status *st) {
    tfc_tensor *a = tfc_scalar_i64(axis, st);
    return run1(ctx, "ExpandDims", (tfc_tensor *[]){T(x), a}, 2, NULL, 0, &a, 1, st);
}

tfc_tensor *tfc_squeeze(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n, tfc_status *st) {
    tfc_attr a = TFC_ATTR_INTS("squeeze_dims", axes, n);
    return run1(ctx, "Squeeze", (tfc_tensor *[]){T(x)}, 1, &a, 1, NULL, 0, st);
}

tfc_tensor *tfc_broadcast_to(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    tfc_tensor *s = vec(dims, rank, st);
    return run1(ctx, "BroadcastTo", (tfc_tensor *[]){T(x), s}, 2, NULL, 0, &s, 1, st);
}

tfc_tensor *tfc_shape_of(tfc_ctx *ctx, const tfc_tensor *x, tfc_dtype out_type, tfc_status *st) {
    tfc_attr a = TFC_ATTR_T("out_type", out_type);
    return run1(ctx, "Shape", (tfc_tensor *[]){T(x)}, 1, &a, 1, NULL, 0, st);
}

tfc_tensor *tfc_size_of(tfc_ctx *ctx, const tfc_tensor *x, tfc_dtype out_type, tfc_status *st) {
    tfc_attr a = TFC_ATTR_T("out_type", out_type);
    return run1(ctx, "Size", (tfc_tensor *[]){T(x)}, 1, &a, 1, NULL, 0, st);
}

tfc_tensor *tfc_rank_of(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st) {
    return run1(ctx, "Rank", (tfc_tensor *[]){T(x)}, 1, NULL, 0, NULL, 0, st);
}

tfc_tensor *tfc_fill(tfc_ctx *ctx, const int64_t *dims, int rank, const tfc_tensor *value, tfc_status *st) {
    tfc_tensor *d = vec(dims, rank, st);
    return run1(ctx, "Fill", (tfc_tensor *[]){d, T(value)}, 2, NULL, 0, &d, 1, st);
}

static tfc_tensor *fill_with(tfc_ctx *ctx, tfc_dtype dt, const int64_t *dims, int rank, double v, tfc_status *st) {
    if (dt == TFC_STRING && v != 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "ones: not defined for dtype string");
        return NULL;
    }
    tfc_tensor *s = tfc_dtype_is_valid(dt) && dt != TFC_RESOURCE ? tfc_scalar(dt, v, st) : NULL;
    if (!s && st->code == TFC_OK)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "zeros/ones: invalid dtype %s", tfc_dtype_name(dt));
    tfc_tensor *r = s ? tfc_fill(ctx, dims, rank, s, st) : NULL;
    tfc_tensor_unref(s);
    return r;
}

tfc_tensor *tfc_zeros(tfc_ctx *ctx, tfc_dtype dt, const int64_t *dims, int rank, tfc_status *st) {
    return fill_with(ctx, dt, dims, rank, 0.0, st);
}
tfc_tensor *tfc_ones(tfc_ctx *ctx, tfc_dtype dt, const int64_t *dims, int rank, tfc_status *st) {
    return fill_with(ctx, dt, dims, rank, 1.0, st);
}
tfc_tensor *tfc_zeros_like(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st) {
    return run1(ctx, "ZerosLike", (tfc_tensor *[]){T(x)}, 1, NULL, 0, NULL, 0, st);
}
tfc_tensor *tfc_ones_like(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st) {
    return run1(ctx, "OnesLike", (tfc_tensor *[]){T(x)}, 1, NULL, 0, NULL, 0, st);
}
tfc_tensor *tfc_identity(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st) {
    return run1(ctx, "Identity", (tfc_tensor *[]){T(x)}, 1, NULL, 0, NULL, 0, st);
}
tfc_tensor *tfc_stop_gradient(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st) {
    return run1(ctx, "StopGradient", (tfc_tensor *[]){T(x)}, 1, NULL, 0, NULL, 0, st);
}

tfc_tensor *tfc_slice(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *begin, const int64_t *size, tfc_status *st) {
    int r = rank_of(x);
    tfc_tensor *aux[2] = {vec(begin, r, st), NULL};
    if (aux[0]) aux[1] = vec(size, r, st);
    return run1(ctx, "Slice", (tfc_tensor *[]){T(x), aux[0], aux[1]}, 3, NULL, 0, aux, 2, st);
}

tfc_tensor *tfc_strided_slice(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *begin, const int64_t *end,
                              const int64_t *strides, int n, const tfc_strided_slice_attrs *masks, tfc_status *st) {
    static const tfc_strided_slice_attrs none;
    if (!masks) masks = &none;
    int64_t ones[32];
    if (n < 0 || n >= 32) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "StridedSlice: %d slice entries (at most 31)", n);
        return NULL;
    }
    if (!strides) {
        for (int i = 0; i < n; i++) ones[i] = 1;
        strides = ones;
    }
    tfc_tensor *aux[3] = {vec(begin, n, st), NULL, NULL};
    if (aux[0]) aux[1] = vec(end, n, st);
    if (aux[1]) aux[2] = vec(strides, n, st);
    tfc_attr a[5] = {TFC_ATTR_I("begin_mask", masks->begin_mask), TFC_ATTR_I("end_mask", masks->end_mask),
                     TFC_ATTR_I("ellipsis_mask", masks->ellipsis_mask), TFC_ATTR_I("new_axis_mask", masks->new_axis_mask),
                     TFC_ATTR_I("shrink_axis_mask", masks->shrink_axis_mask)};
    return run1(ctx, "StridedSlice", (tfc_tensor *[]){T(x), aux[0], aux[1], aux[2]}, 4, a, 5, aux, 3, st);
}

/* values[0..n) followed by one extra input (ConcatV2's axis). */
static bool gather_inputs(const tfc_tensor *const *values, int n, tfc_tensor **in, const char *op, tfc_status *st) {
    if (n < 1 || n > MAX_VALUES || !values)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %d values given (1 to %d supported)", op, n,
                              MAX_VALUES);
    for (int i = 0; i < n; i++) in[i] = T(values[i]);
    return true;
}

tfc_tensor *tfc_concat(tfc_ctx *ctx, const tfc_tensor *const *values, int n, int64_t axis, tfc_status *st) {
    tfc_tensor *in[MAX_VALUES + 1];
    if (!gather_inputs(values, n, in, "ConcatV2", st)) return NULL;
    if (n == 1) return tfc_identity(ctx, values[0], st);
    tfc_tensor *a = tfc_scalar_i64(axis, st);
    in[n] = a;
    return run1(ctx, "ConcatV2", in, n + 1, NULL, 0, &a, 1, st);
}

tfc_tensor *tfc_stack(tfc_ctx *ctx, const tfc_tensor *const *values, int n, int64_t axis, tfc_status *st) {
    tfc_tensor *in[MAX_VALUES + 1];
    if (!gather_inputs(values, n, in, "Pack", st)) return NULL;
    tfc_attr a = TFC_ATTR_I("axis", axis);
    return run1(ctx, "Pack", in, n, &a, 1, NULL, 0, st);
}

int tfc_unstack(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_tensor **out, int max_out, tfc_status *st) {
    int r = rank_of(x);
    int64_t num = axis >= -r && axis < r ? tfc_tensor_dim(x, (int)axis) : 0;
    if (num > max_out) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unpack: %lld outputs but room for %d", (long long)num, max_out);
        return -1;
    }
    tfc_attr a[2] = {TFC_ATTR_I("num", num), TFC_ATTR_I("axis", axis)};
    tfc_tensor *in = T(x);
    return tfc_execute(ctx, "Unpack", &in, 1, a, 2, out, max_out, st);
}

bool tfc_split(tfc_ctx *ctx, const tfc_tensor *x, int num_split, int64_t axis, tfc_tensor **out, tfc_status *st) {
    if (axis < INT32_MIN || axis > INT32_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Split: axis %lld does not fit int32", (long long)axis);
    tfc_tensor *a = tfc_scalar_i32((int32_t)axis, st);
    if (!a) return false;
    tfc_attr at = TFC_ATTR_I("num_split", num_split);
    int n = tfc_execute(ctx, "Split", (tfc_tensor *[]){a, T(x)}, 2, &at, 1, out, num_split > 0 ? num_split : 0, st);
    tfc_tensor_unref(a);
    return n >= 0;
}

bool tfc_split_v(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *sizes, int n, int64_t axis, tfc_tensor **out,
                 tfc_status *st) {
    if (axis < INT32_MIN || axis > INT32_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "SplitV: axis %lld does not fit int32", (long long)axis);
    tfc_tensor *s = vec(sizes, n, st), *a = s ? tfc_scalar_i32((int32_t)axis, st) : NULL;
    tfc_attr at = TFC_ATTR_I("num_split", n);
    int got = a ? tfc_execute(ctx, "SplitV", (tfc_tensor *[]){T(x), s, a}, 3, &at, 1, out, n > 0 ? n : 0, st) : -1;
    tfc_tensor_unref(s);
    tfc_tensor_unref(a);
    return got >= 0;
}

tfc_tensor *tfc_tile(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *multiples, tfc_status *st) {
    tfc_tensor *m = vec(multiples, rank_of(x), st);
    return run1(ctx, "Tile", (tfc_tensor *[]){T(x), m}, 2, NULL, 0, &m, 1, st);
}

tfc_tensor *tfc_pad(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *paddings, const char *mode,
                    double constant_values, tfc_status *st) {
    int r = rank_of(x);
    int64_t dims[2] = {r, 2};
    if (r > 0 && !paddings) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Pad: paddings is NULL");
        return NULL;
    }
    tfc_tensor *aux[2] = {tfc_tensor_from_data(TFC_INT64, dims, 2, paddings, (size_t)r * 16, st), NULL};
    if (!mode || !strcmp(mode, "CONSTANT") || !strcmp(mode, "constant")) {
        if (constant_values == 0)
            return run1(ctx, "Pad", (tfc_tensor *[]){T(x), aux[0]}, 2, NULL, 0, aux, 1, st);
        if (aux[0]) aux[1] = tfc_scalar(tfc_tensor_dtype(x), constant_values, st);
        return run1(ctx, "PadV2", (tfc_tensor *[]){T(x), aux[0], aux[1]}, 3, NULL, 0, aux, 2, st);
    }
    const char *m = !strcmp(mode, "reflect") ? "REFLECT" : !strcmp(mode, "symmetric") ? "SYMMETRIC" : mode;
    tfc_attr a = TFC_ATTR_S("mode", m);
    return run1(ctx, "MirrorPad", (tfc_tensor *[]){T(x), aux[0]}, 2, &a, 1, aux, 1, st);
}
