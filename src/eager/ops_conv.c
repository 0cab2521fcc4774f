/* Typed wrappers for the conv/pool ops (include/tfc/ops/conv.h): build attrs, call tfc_execute. */
#include <limits.h>

#include "tfc/ops/conv.h"

static const int64_t ones4[4] = {1, 1, 1, 1};

static bool all_zero(const int64_t *v, int n) {
    for (int i = 0; i < n; i++)
        if (v[i]) return false;
    return true;
}

/* Fills attrs for the conv ops; returns the count. */
static int conv_attrs(const tfc_conv2d_attrs *a, tfc_attr *out) {
    static const tfc_conv2d_attrs dflt;
    if (!a) a = &dflt;
    int n = 0;
    const char *padding = a->padding ? a->padding : "VALID";
    out[n++] = TFC_ATTR_INTS("strides", all_zero(a->strides, 4) ? ones4 : a->strides, 4);
    out[n++] = TFC_ATTR_S("padding", padding);
    if (padding[0] == 'E') out[n++] = TFC_ATTR_INTS("explicit_paddings", a->explicit_paddings, 8);
    out[n++] = TFC_ATTR_S("data_format", a->data_format ? a->data_format : "NHWC");
    out[n++] = TFC_ATTR_INTS("dilations", all_zero(a->dilations, 4) ? ones4 : a->dilations, 4);
    return n;
}

static int pool_attrs(const tfc_pool_attrs *a, tfc_attr *out, bool explicit_ok) {
    int n = 0;
    const char *padding = a->padding ? a->padding : "VALID";
    out[n++] = TFC_ATTR_INTS("ksize", a->ksize, 4);
    out[n++] = TFC_ATTR_INTS("strides", all_zero(a->strides, 4) ? a->ksize : a->strides, 4);
    out[n++] = TFC_ATTR_S("padding", padding);
    if (explicit_ok && padding[0] == 'E') out[n++] = TFC_ATTR_INTS("explicit_paddings", a->explicit_paddings, 8);
    out[n++] = TFC_ATTR_S("data_format", a->data_format ? a->data_format : "NHWC");
    return n;
}

static tfc_tensor *sizes_vec(const char *op, const int64_t v[4], tfc_status *st) {
    int32_t d[4];
    for (int i = 0; i < 4; i++) {
        if (v[i] < INT_MIN || v[i] > INT_MAX) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: size %lld does not fit int32", op, (long long)v[i]);
            return NULL;
        }
        d[i] = (int32_t)v[i];
    }
    return tfc_vec_i32(d, 4, st);
}

static tfc_tensor *run(tfc_ctx *ctx, const char *op, const tfc_tensor *a, const tfc_tensor *b, const tfc_tensor *c,
                       const tfc_attr *attrs, int n_attrs, tfc_status *st) {
    tfc_tensor *in[3] = {(tfc_tensor *)a, (tfc_tensor *)b, (tfc_tensor *)c};
    int n_in = c ? 3 : b ? 2 : 1;
    for (int i = 0; i < n_in; i++)
        if (!in[i]) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input %d is NULL", op, i);
            return NULL;
        }
    return tfc_emit(ctx, op, in, n_in, attrs, n_attrs, st);
}

/* op(sizes, a, b) or op(a, sizes, b) with a temporary int32 sizes vector. */
static tfc_tensor *run_sizes(tfc_ctx *ctx, const char *op, bool first, const int64_t sizes[4], const tfc_tensor *a,
                             const tfc_tensor *b, const tfc_conv2d_attrs *attrs, tfc_status *st) {
    if (!sizes) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: sizes are NULL", op);
        return NULL;
    }
    tfc_attr at[8];
    int na = conv_attrs(attrs, at);
    tfc_tensor *s = sizes_vec(op, sizes, st);
    if (!s) return NULL;
    tfc_tensor *r = first ? run(ctx, op, s, a, b, at, na, st) : run(ctx, op, a, s, b, at, na, st);
    tfc_tensor_unref(s);
    return r;
}

tfc_tensor *tfc_conv2d(tfc_ctx *ctx, const tfc_tensor *input, const tfc_tensor *filter, const tfc_conv2d_attrs *attrs,
                       tfc_status *st) {
    tfc_attr at[8];
    int na = conv_attrs(attrs, at);
    return run(ctx, "Conv2D", input, filter, NULL, at, na, st);
}

tfc_tensor *tfc_conv2d_backprop_input(tfc_ctx *ctx, const int64_t input_sizes[4], const tfc_tensor *filter,
                                      const tfc_tensor *out_backprop, const tfc_conv2d_attrs *attrs, tfc_status *st) {
    return run_sizes(ctx, "Conv2DBackpropInput", true, input_sizes, filter, out_backprop, attrs, st);
}

tfc_tensor *tfc_conv2d_backprop_filter(tfc_ctx *ctx, const tfc_tensor *input, const int64_t filter_sizes[4],
                                       const tfc_tensor *out_backprop, const tfc_conv2d_attrs *attrs, tfc_status *st) {
    return run_sizes(ctx, "Conv2DBackpropFilter", false, filter_sizes, input, out_backprop, attrs, st);
}

tfc_tensor *tfc_depthwise_conv2d(tfc_ctx *ctx, const tfc_tensor *input, const tfc_tensor *filter,
                                 const tfc_conv2d_attrs *attrs, tfc_status *st) {
    tfc_attr at[8];
    int na = conv_attrs(attrs, at);
    return run(ctx, "DepthwiseConv2dNative", input, filter, NULL, at, na, st);
}

tfc_tensor *tfc_depthwise_conv2d_backprop_input(tfc_ctx *ctx, const int64_t input_sizes[4], const tfc_tensor *filter,
                                                const tfc_tensor *out_backprop, const tfc_conv2d_attrs *attrs,
                                                tfc_status *st) {
    return run_sizes(ctx, "DepthwiseConv2dNativeBackpropInput", true, input_sizes, filter, out_backprop, attrs, st);
}

tfc_tensor *tfc_depthwise_conv2d_backprop_filter(tfc_ctx *ctx, const tfc_tensor *input, const int64_t filter_sizes[4],
                                                 const tfc_tensor *out_backprop, const tfc_conv2d_attrs *attrs,
                                                 tfc_status *st) {
    return run_sizes(ctx, "DepthwiseConv2dNativeBackpropFilter", false, filter_sizes, input, out_backprop, attrs, st);
}

static bool pool_check(const char *op, const tfc_pool_attrs *attrs, tfc_status *st) {
    if (!attrs) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: attrs (ksize) are required", op);
    return true;
}

tfc_tensor *tfc_max_pool(tfc_ctx *ctx, const tfc_tensor *input, const tfc_pool_attrs *attrs, tfc_status *st) {
    if (!pool_check("MaxPool", attrs, st)) return NULL;
    tfc_attr at[8];
    int na = pool_attrs(attrs, at, true);
    return run(ctx, "MaxPool", input, NULL, NULL, at, na, st);
}

tfc_tensor *tfc_avg_pool(tfc_ctx *ctx, const tfc_tensor *value, const tfc_pool_attrs *attrs, tfc_status *st) {
    if (!pool_check("AvgPool", attrs, st)) return NULL;
    tfc_attr at[8];
    int na = pool_attrs(attrs, at, false);
    return run(ctx, "AvgPool", value, NULL, NULL, at, na, st);
}

tfc_tensor *tfc_max_pool_grad(tfc_ctx *ctx, const tfc_tensor *orig_input, const tfc_tensor *orig_output,
                              const tfc_tensor *grad, const tfc_pool_attrs *attrs, tfc_status *st) {
    if (!pool_check("MaxPoolGrad", attrs, st)) return NULL;
    tfc_attr at[8];
    int na = pool_attrs(attrs, at, true);
    return run(ctx, "MaxPoolGrad", orig_input, orig_output, grad, at, na, st);
}

tfc_tensor *tfc_avg_pool_grad(tfc_ctx *ctx, const int64_t orig_input_shape[4], const tfc_tensor *grad,
                              const tfc_pool_attrs *attrs, tfc_status *st) {
    if (!pool_check("AvgPoolGrad", attrs, st)) return NULL;
    if (!orig_input_shape) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "AvgPoolGrad: orig_input_shape is NULL");
        return NULL;
    }
    tfc_attr at[8];
    int na = pool_attrs(attrs, at, false);
    tfc_tensor *s = sizes_vec("AvgPoolGrad", orig_input_shape, st);
    if (!s) return NULL;
    tfc_tensor *r = run(ctx, "AvgPoolGrad", s, grad, NULL, at, na, st);
    tfc_tensor_unref(s);
    return r;
}
