/* tf.keras.layers.DepthwiseConv2D: activation(depthwise_conv2d(x, depthwise_kernel) + bias) on 4-D inputs,
 * channels_last or channels_first (the op's NCHW). Output channel c * depth_multiplier + m is input channel c
 * convolved with depthwise_kernel[:, :, c, m]. depthwise_kernel [kh, kw, in, depth_multiplier],
 * bias [in * depth_multiplier]. */
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/ops/conv.h"

typedef struct {
    tfc_layer base;
    int64_t depth_multiplier;
    int64_t kernel_size[2], strides[2], dilation_rate[2];
    char padding[TFC_KCONV_STR], data_format[TFC_KCONV_STR];
    char *activation;
    bool use_bias;
    tfc_kinit depthwise_init, bias_init;
    tfc_regularizer depthwise_reg, bias_reg;
    bool has_depthwise_reg, has_bias_reg;
    tfc_variable *kernel, *bias; /* owned by base.weights */
} dwconv;

static bool channels_first(const dwconv *c) { return !strcmp(c->data_format, "channels_first"); }

static bool dwconv_validate_args(const dwconv *c, tfc_status *st) {
    const tfc_layer *l = &c->base;
    if (c->depth_multiplier <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Invalid value for argument `depth_multiplier`. Expected a strictly positive value. "
                              "Received depth_multiplier=%lld. (layer \"%s\")",
                              (long long)c->depth_multiplier, l->name);
    if (!tfc_kconv_check_pair(l, "kernel_size", c->kernel_size, 1, st) ||
        !tfc_kconv_check_pair(l, "strides", c->strides, 1, st) ||
        !tfc_kconv_check_pair(l, "dilation_rate", c->dilation_rate, 1, st) ||
        !tfc_kconv_check_padding(l, c->padding, st) || !tfc_kconv_check_data_format(l, c->data_format, st) ||
        !tfc_layer_check_activation(l, c->activation, st))
        return false;
    if ((c->strides[0] > 1 || c->strides[1] > 1) && (c->dilation_rate[0] > 1 || c->dilation_rate[1] > 1))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                              "strides=(%lld, %lld) and dilation_rate=(%lld, %lld) (layer \"%s\")",
                              (long long)c->strides[0], (long long)c->strides[1], (long long)c->dilation_rate[0],
                              (long long)c->dilation_rate[1], l->name);
    return true;
}

static bool dwconv_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                tfc_status *st) {
    dwconv *c = (dwconv *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !dwconv_validate_args(c, st)) return false;
    const tfc_shape *s = &in[0];
    *n_out = 1;
    if (s->rank < 0) {
        out[0] = *s;
        return true;
    }
    if (s->rank != 4)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Inputs to `DepthwiseConv` should have rank 4. Received input_shape=%s. (layer \"%s\")",
                              TFC_KSHP(s), l->name);
    bool cf = channels_first(c);
    int ch = cf ? 1 : 3, h = cf ? 2 : 1;
    if (s->dims[ch] < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The channel dimension of the inputs to `DepthwiseConv` should be defined. The "
                              "input_shape received is %s, where axis %d (0-based) is the channel dimension, which "
                              "found to be `None`. (layer \"%s\")",
                              TFC_KSHP(s), cf ? -3 : -1, l->name);
    int64_t hw[2], oc;
    if (!tfc_kconv_spatial(l, s, h, c->kernel_size, c->strides, c->dilation_rate, !strcmp(c->padding, "same"), hw,
                           st))
        return false;
    if (!tfc_mul_overflow_i64(s->dims[ch], c->depth_multiplier, &oc))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": output channels of %s overflow", l->name,
                              TFC_KSHP(s));
    out[0] = *s;
    out[0].dims[h] = hw[0];
    out[0].dims[h + 1] = hw[1];
    out[0].dims[ch] = oc;
    return true;
}

static bool dwconv_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    dwconv *c = (dwconv *)l;
    bool cf = channels_first(c);
    int64_t in_ch = in[0].dims[cf ? 1 : 3];
    tfc_shape ks = {.rank = 4, .dims = {c->kernel_size[0], c->kernel_size[1], in_ch, c->depth_multiplier}};
    tfc_shape bs = {.rank = 1, .dims = {in_ch * c->depth_multiplier}};
    c->kernel = tfc_layer_add_weight(l, ctx, "depthwise_kernel", &ks, l->dtype, &c->depthwise_init.init,
                                     c->has_depthwise_reg ? &c->depthwise_reg : NULL, true, st);
    if (!c->kernel) return false;
    if (c->use_bias) {
        c->bias = tfc_layer_add_weight(l, ctx, "bias", &bs, l->dtype, &c->bias_init.init,
                                       c->has_bias_reg ? &c->bias_reg : NULL, true, st);
        if (!c->bias) return false;
    }
    /* InputSpec(min_ndim=4, axes={channel_axis: in_ch}); other ranks fail in compute_output_shape */
    l->input_spec[0] =
        (tfc_input_spec){.ndim = -1, .min_ndim = 4, .n_axes = 1, .axes = {cf ? -3 : -1}, .values = {in_ch}};
    l->has_input_spec = true;
    return true;
}

static bool dwconv_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                        bool training, tfc_status *st) {
    dwconv *c = (dwconv *)l;
    tfc_shape os;
    int no;
    if (!dwconv_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &no, st)) return false;
    bool cf = channels_first(c);
    tfc_tensor *k = tfc_layer_read_var(l, ctx, c->kernel, st);
    if (!k) return false;
    tfc_conv2d_attrs a = {.padding = !strcmp(c->padding, "same") ? "SAME" : "VALID",
                          .data_format = cf ? "NCHW" : "NHWC"};
    int hd = cf ? 2 : 1;
    for (int i = 0; i < 4; i++) a.strides[i] = a.dilations[i] = 1;
    a.strides[hd] = c->strides[0], a.strides[hd + 1] = c->strides[1];
    a.dilations[hd] = c->dilation_rate[0], a.dilations[hd + 1] = c->dilation_rate[1];
    tfc_tensor *y = tfc_depthwise_conv2d(ctx, in[0], k, &a, st);
    if (!y) return false;
    if (c->use_bias) {
        tfc_tensor *b = tfc_layer_read_var(l, ctx, c->bias, st);
        tfc_attr df = TFC_ATTR_S("data_format", cf ? "NCHW" : "NHWC");
        if (!b || !(y = tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, b}, 2, &df, 1, st))) return false;
    }
    return (out[0] = tfc_activation_apply(ctx, c->activation, y, st)) != NULL;
}

/* Conv's config without filters and the kernel_* keys, then the depthwise_* keys (as DepthwiseConv.get_config). */
static bool dwconv_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const dwconv *c = (const dwconv *)l;
    cJSON *cfg = vcfg;
    cJSON *ks = tfc_json_int_array(c->kernel_size, 2), *ss = tfc_json_int_array(c->strides, 2),
          *dr = tfc_json_int_array(c->dilation_rate, 2);
    bool ok = ks && cJSON_AddItemToObject(cfg, "kernel_size", ks);
    if (!ok) cJSON_Delete(ks);
    ok = ok && ss && cJSON_AddItemToObject(cfg, "strides", ss);
    if (!ok) cJSON_Delete(ss);
    ok = ok && cJSON_AddStringToObject(cfg, "padding", c->padding) &&
         cJSON_AddStringToObject(cfg, "data_format", c->data_format) && dr &&
         cJSON_AddItemToObject(cfg, "dilation_rate", dr);
    if (!ok) cJSON_Delete(dr);
    return ok && cJSON_AddNumberToObject(cfg, "groups", 1) &&
           cJSON_AddStringToObject(cfg, "activation", tfc_activation_config_name(c->activation)) &&
           cJSON_AddBoolToObject(cfg, "use_bias", c->use_bias) &&
           tfc_json_add_initializer(cfg, "bias_initializer", &c->bias_init.init) &&
           tfc_json_add_regularizer(cfg, "bias_regularizer", &c->bias_reg, c->has_bias_reg) &&
           tfc_json_add_regularizer(cfg, "activity_regularizer", &l->activity_reg, l->has_activity_reg) &&
           cJSON_AddNullToObject(cfg, "bias_constraint") &&
           cJSON_AddNumberToObject(cfg, "depth_multiplier", (double)c->depth_multiplier) &&
           tfc_json_add_initializer(cfg, "depthwise_initializer", &c->depthwise_init.init) &&
           tfc_json_add_regularizer(cfg, "depthwise_regularizer", &c->depthwise_reg, c->has_depthwise_reg) &&
           cJSON_AddNullToObject(cfg, "depthwise_constraint");
}

static void dwconv_destroy(tfc_layer *l) { tfc_free(((dwconv *)l)->activation); }

static const tfc_layer_class dwconv_class = {
    .class_name = "DepthwiseConv2D",
    .size = sizeof(dwconv),
    .build = dwconv_build,
    .compute_output_shape = dwconv_output_shape,
    .call = dwconv_call,
    .get_config = dwconv_get_config,
    .destroy = dwconv_destroy,
};

tfc_layer *tfc_layers_depthwise_conv2d_new(const tfc_depthwise_conv2d_layer_opts *o) {
    dwconv *c = TFC_LAYER_NEW(dwconv, &dwconv_class, o);
    if (!c) return NULL;
    c->depth_multiplier = o->depth_multiplier ? o->depth_multiplier : 1;
    tfc_kconv_pair(c->kernel_size, o->kernel_size, 0);
    tfc_kconv_pair(c->strides, o->strides, 1);
    tfc_kconv_pair(c->dilation_rate, o->dilation_rate, 1);
    tfc_kconv_lower(c->padding, sizeof c->padding, o->padding, "valid");
    tfc_kconv_lower(c->data_format, sizeof c->data_format, o->data_format, "channels_last");
    c->activation = tfc_strdup(o->activation && *o->activation ? o->activation : "linear");
    if (!c->activation) {
        tfc_layer_unref(&c->base);
        return NULL;
    }
    c->use_bias = TFC_FLAG(o->use_bias, true);
    tfc_kinit_set(&c->depthwise_init, o->depthwise_initializer, "glorot_uniform");
    tfc_kinit_set(&c->bias_init, o->bias_initializer, "zeros");
    if ((c->has_depthwise_reg = o->depthwise_regularizer)) c->depthwise_reg = *o->depthwise_regularizer;
    if ((c->has_bias_reg = o->bias_regularizer)) c->bias_reg = *o->bias_regularizer;
    if ((c->base.has_activity_reg = o->activity_regularizer)) c->base.activity_reg = *o->activity_regularizer;
    return &c->base;
}

tfc_layer *tfc_keras_from_config_depthwise_conv2d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_depthwise_conv2d_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    bool has_kernel = false, has_strides, has_dilation, has_mult, use_bias = true, hk, hb, ha;
    int64_t groups = 1;
    char kn[32], bn[32];
    tfc_initializer ki = {0}, bi = {0};
    tfc_regularizer kr, br, ar;
    if (!tfc_kconv_json_pair(cfg, "kernel_size", o.kernel_size, &has_kernel, st) ||
        !tfc_kconv_json_pair(cfg, "strides", o.strides, &has_strides, st) ||
        !tfc_kconv_json_pair(cfg, "dilation_rate", o.dilation_rate, &has_dilation, st) ||
        !tfc_kconv_json_padding(cfg, &o.padding, st) || !tfc_kconv_json_data_format(cfg, &o.data_format, st) ||
        !tfc_json_get_i64(cfg, "depth_multiplier", &o.depth_multiplier, &has_mult, st) ||
        !tfc_json_get_i64(cfg, "groups", &groups, NULL, st) ||
        !tfc_json_get_str(cfg, "activation", &o.activation, NULL, st) ||
        !tfc_json_get_bool(cfg, "use_bias", &use_bias, NULL, st) ||
        !tfc_json_get_initializer(cfg, "depthwise_initializer", &ki, kn, sizeof kn, st) ||
        !tfc_json_get_initializer(cfg, "bias_initializer", &bi, bn, sizeof bn, st) ||
        !tfc_json_get_regularizer(cfg, "depthwise_regularizer", &kr, &hk, st) ||
        !tfc_json_get_regularizer(cfg, "bias_regularizer", &br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "activity_regularizer", &ar, &ha, st))
        return NULL;
    if (!has_kernel) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "DepthwiseConv2D: the config has no \"kernel_size\"");
        return NULL;
    }
    if (o.kernel_size[0] <= 0 || o.kernel_size[1] <= 0 || (has_strides && (o.strides[0] <= 0 || o.strides[1] <= 0)) ||
        (has_dilation && (o.dilation_rate[0] <= 0 || o.dilation_rate[1] <= 0)) ||
        (has_mult && o.depth_multiplier <= 0) || groups != 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "DepthwiseConv2D: kernel_size, strides, dilation_rate and depth_multiplier must be positive and "
                       "groups 1 (kernel_size=(%lld, %lld), strides=(%lld, %lld), dilation_rate=(%lld, %lld), "
                       "depth_multiplier=%lld, groups=%lld)",
                       (long long)o.kernel_size[0], (long long)o.kernel_size[1], (long long)o.strides[0],
                       (long long)o.strides[1], (long long)o.dilation_rate[0], (long long)o.dilation_rate[1],
                       (long long)o.depth_multiplier, (long long)groups);
        return NULL;
    }
    o.use_bias = use_bias ? TFC_YES : TFC_NO;
    if (ki.name) o.depthwise_initializer = &ki;
    if (bi.name) o.bias_initializer = &bi;
    if (hk) o.depthwise_regularizer = &kr;
    if (hb) o.bias_regularizer = &br;
    if (ha) o.activity_regularizer = &ar;
    tfc_layer *l = tfc_layers_depthwise_conv2d_new(&o);
    if (!l) tfc_status_oom(st, "DepthwiseConv2D", sizeof(dwconv));
    return l;
}
