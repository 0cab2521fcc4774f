/* tf.keras.layers.Conv1D: activation(conv1d(x, kernel) + bias) over [batch, steps, channels], run as TensorFlow's
 * conv1d does: Conv2D over [batch, 1, steps, channels] with the kernel viewed as [1, k, in / groups, filters];
 * "causal" padding is explicit left padding of (k - 1) * dilation steps. channels_first inputs are transposed. */
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/keras/conv1d.h"
#include "tfc/ops/array.h"
#include "tfc/ops/conv.h"

typedef struct {
    tfc_layer base;
    int64_t filters, kernel_size, strides, dilation_rate, groups;
    char padding[TFC_KCONV_STR], data_format[TFC_KCONV_STR];
    char activation[32];
    bool use_bias;
    tfc_kinit kernel_init, bias_init;
    tfc_regularizer kernel_reg, bias_reg;
    bool has_kernel_reg, has_bias_reg;
    tfc_variable *kernel, *bias;
} conv1d;

static bool cfirst(const conv1d *c) { return !strcmp(c->data_format, "channels_first"); }

static bool conv1d_validate(const conv1d *c, tfc_status *st) {
    const tfc_layer *l = &c->base;
    int64_t k[2] = {c->kernel_size, 1}, s[2] = {c->strides, 1}, d[2] = {c->dilation_rate, 1};
    return tfc_kconv_check_pair(l, "kernel_size", k, 1, st) && tfc_kconv_check_pair(l, "strides", s, 1, st) &&
           tfc_kconv_check_pair(l, "dilation_rate", d, 1, st) &&
           (!strcmp(c->padding, "causal") || tfc_kconv_check_padding(l, c->padding, st)) &&
           tfc_kconv_check_data_format(l, c->data_format, st) && tfc_layer_check_activation(l, c->activation, st) &&
           tfc_kconv_check_conv_args(l, c->filters, c->groups, s, d, 1, st);
}

static bool conv1d_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                tfc_status *st) {
    conv1d *c = (conv1d *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !conv1d_validate(c, st)) return false;
    const tfc_shape *s = &in[0];
    if (!tfc_kconv_check_rank(l, s, 3, false, st)) return false;
    bool cf = cfirst(c);
    int ch = cf ? 1 : 2, t = cf ? 2 : 1;
    if (s->dims[ch] < 0 || s->dims[ch] % c->groups != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The number of input channels must be defined and evenly divisible by the number of "
                              "groups. Received groups=%lld, but the input has shape %s. (layer \"%s\")",
                              (long long)c->groups, TFC_KSHP(s), l->name);
    int64_t len = tfc_kconv_output_length(s->dims[t], c->kernel_size, strcmp(c->padding, "valid") != 0, c->strides,
                                          c->dilation_rate);
    if (s->dims[t] >= 0 && len <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "One of the dimensions in the output is <= 0 due to downsampling in %s. Consider "
                              "increasing the input size. Received input shape %s which would produce output shape "
                              "with a zero or negative value in a dimension.",
                              l->name, TFC_KSHP(s));
    out[0] = *s;
    out[0].dims[t] = len;
    out[0].dims[ch] = c->filters;
    *n_out = 1;
    return true;
}

static bool conv1d_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    conv1d *c = (conv1d *)l;
    int64_t in_ch = in[0].dims[cfirst(c) ? 1 : 2];
    tfc_shape ks = {.rank = 3, .dims = {c->kernel_size, in_ch / c->groups, c->filters}};
    tfc_shape bs = {.rank = 1, .dims = {c->filters}};
    if (!(c->kernel = tfc_layer_add_weight(l, ctx, "kernel", &ks, l->dtype, &c->kernel_init.init,
                                           c->has_kernel_reg ? &c->kernel_reg : NULL, true, st)))
        return false;
    if (c->use_bias && !(c->bias = tfc_layer_add_weight(l, ctx, "bias", &bs, l->dtype, &c->bias_init.init,
                                                        c->has_bias_reg ? &c->bias_reg : NULL, true, st)))
        return false;
    l->input_spec[0] = (tfc_input_spec){.ndim = 3, .n_axes = 1, .axes = {cfirst(c) ? 1 : -1}, .values = {in_ch}};
    l->has_input_spec = true;
    return true;
}

static tfc_tensor *swap12(tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    return x ? tfc_transpose(ctx, x, (int64_t[]){0, 2, 1}, st) : NULL;
}

static tfc_tensor *reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    return x ? tfc_reshape(ctx, x, dims, rank, st) : NULL;
}

static bool conv1d_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                        bool training, tfc_status *st) {
    conv1d *c = (conv1d *)l;
    tfc_shape os;
    if (!conv1d_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &(int){0}, st)) return false;
    bool cf = cfirst(c);
    tfc_tensor *x = cf ? swap12(ctx, in[0], st) : in[0];
    if (!x) return false;
    int64_t b = tfc_tensor_dim(x, 0), n = tfc_tensor_dim(x, 1), ch = tfc_tensor_dim(x, 2);
    tfc_tensor *k = tfc_layer_read_var(l, ctx, c->kernel, st);
    k = reshape(ctx, k, (int64_t[]){1, c->kernel_size, ch / c->groups, c->filters}, 4, st);
    x = reshape(ctx, x, (int64_t[]){b, 1, n, ch}, 4, st);
    if (!k || !x) return false;
    tfc_conv2d_attrs a = {.strides = {1, 1, c->strides, 1}, .dilations = {1, 1, c->dilation_rate, 1},
                          .padding = !strcmp(c->padding, "same") ? "SAME" : "VALID"};
    if (!strcmp(c->padding, "causal")) {
        a.padding = "EXPLICIT";
        a.explicit_paddings[4] = (c->kernel_size - 1) * c->dilation_rate;
    }
    tfc_tensor *y = tfc_conv2d(ctx, x, k, &a, st);
    if (y && c->use_bias) {
        tfc_tensor *bias = tfc_layer_read_var(l, ctx, c->bias, st);
        y = bias ? tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, bias}, 2, NULL, 0, st) : NULL;
    }
    y = reshape(ctx, y, (int64_t[]){b, tfc_tensor_dim(y ? y : x, 2), c->filters}, 3, st);
    y = y ? tfc_activation_apply(ctx, c->activation, y, st) : NULL;
    if (y && cf) y = swap12(ctx, y, st);
    return (out[0] = y) != NULL;
}

static bool conv1d_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const conv1d *c = (const conv1d *)l;
    cJSON *cfg = vcfg;
    tfc_kinit ki = c->kernel_init, bi = c->bias_init;
    return cJSON_AddNumberToObject(cfg, "filters", (double)c->filters) &&
           cJSON_AddItemToObject(cfg, "kernel_size", tfc_json_int_array(&c->kernel_size, 1)) &&
           cJSON_AddItemToObject(cfg, "strides", tfc_json_int_array(&c->strides, 1)) &&
           cJSON_AddStringToObject(cfg, "padding", c->padding) &&
           cJSON_AddStringToObject(cfg, "data_format", c->data_format) &&
           cJSON_AddItemToObject(cfg, "dilation_rate", tfc_json_int_array(&c->dilation_rate, 1)) &&
           cJSON_AddNumberToObject(cfg, "groups", (double)c->groups) &&
           tfc_json_add_kernel_bias_tail(cfg, l, c->activation, c->use_bias, &ki, &bi, &c->kernel_reg,
                                         c->has_kernel_reg, &c->bias_reg, c->has_bias_reg);
}

static const tfc_layer_class conv1d_class = {
    .class_name = "Conv1D",
    .size = sizeof(conv1d),
    .build = conv1d_build,
    .compute_output_shape = conv1d_output_shape,
    .call = conv1d_call,
    .get_config = conv1d_get_config,
};

tfc_layer *tfc_layers_conv1d_new(const tfc_conv1d_layer_opts *o) {
    conv1d *c = TFC_LAYER_NEW(conv1d, &conv1d_class, o);
    if (!c) return NULL;
    c->filters = o->filters;
    c->kernel_size = o->kernel_size;
    c->strides = o->strides ? o->strides : 1;
    c->dilation_rate = o->dilation_rate ? o->dilation_rate : 1;
    c->groups = o->groups ? o->groups : 1;
    tfc_kconv_lower(c->padding, sizeof c->padding, o->padding, "valid");
    tfc_kconv_lower(c->data_format, sizeof c->data_format, o->data_format, "channels_last");
    snprintf(c->activation, sizeof c->activation, "%s", o->activation && *o->activation ? o->activation : "linear");
    c->use_bias = TFC_FLAG(o->use_bias, true);
    tfc_kinit_set(&c->kernel_init, o->kernel_initializer, "glorot_uniform");
    tfc_kinit_set(&c->bias_init, o->bias_initializer, "zeros");
    if ((c->has_kernel_reg = o->kernel_regularizer)) c->kernel_reg = *o->kernel_regularizer;
    if ((c->has_bias_reg = o->bias_regularizer)) c->bias_reg = *o->bias_regularizer;
    if ((c->base.has_activity_reg = o->activity_regularizer)) c->base.activity_reg = *o->activity_regularizer;
    return &c->base;
}

/* An int or a one-element list (Keras's normalize_tuple for n = 1). */
static bool get_one(const cJSON *cfg, const char *key, int64_t *out, bool *has, tfc_status *st) {
    int64_t v[TFC_MAX_RANK];
    int n = 0;
    bool present = false;
    if (!tfc_json_get_i64_list(cfg, key, v, TFC_MAX_RANK, &n, &present, st)) return false;
    if (has) *has = present;
    if (!present) return true;
    if (n != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Conv1D: the `%s` argument must be a tuple of 1 integers; received %d values", key, n);
    *out = v[0];
    return true;
}

tfc_layer *tfc_keras_from_config_conv1d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cc;
    if (!tfc_json_get_common(cfg, &cc, st)) return NULL;
    tfc_conv1d_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(cc, o);
    bool has_f, has_k, use_bias = true, hk, hb, ha;
    char kn[32], bn[32];
    tfc_initializer ki = {0}, bi = {0};
    tfc_regularizer kr, br, ar;
    if (!tfc_json_get_i64(cfg, "filters", &o.filters, &has_f, st) ||
        !get_one(cfg, "kernel_size", &o.kernel_size, &has_k, st) || !get_one(cfg, "strides", &o.strides, NULL, st) ||
        !get_one(cfg, "dilation_rate", &o.dilation_rate, NULL, st) ||
        !tfc_json_get_i64(cfg, "groups", &o.groups, NULL, st) ||
        !tfc_json_get_str(cfg, "padding", &o.padding, NULL, st) ||
        !tfc_json_get_str(cfg, "data_format", &o.data_format, NULL, st) ||
        !tfc_json_get_str(cfg, "activation", &o.activation, NULL, st) ||
        !tfc_json_get_bool(cfg, "use_bias", &use_bias, NULL, st) ||
        !tfc_json_get_initializer(cfg, "kernel_initializer", &ki, kn, sizeof kn, st) ||
        !tfc_json_get_initializer(cfg, "bias_initializer", &bi, bn, sizeof bn, st) ||
        !tfc_json_get_regularizer(cfg, "kernel_regularizer", &kr, &hk, st) ||
        !tfc_json_get_regularizer(cfg, "bias_regularizer", &br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "activity_regularizer", &ar, &ha, st))
        return NULL;
    if (!has_f || !has_k) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Conv1D: the config needs \"filters\" and \"kernel_size\"");
        return NULL;
    }
    o.use_bias = use_bias ? TFC_YES : TFC_NO;
    if (ki.name) o.kernel_initializer = &ki;
    if (bi.name) o.bias_initializer = &bi;
    if (hk) o.kernel_regularizer = &kr;
    if (hb) o.bias_regularizer = &br;
    if (ha) o.activity_regularizer = &ar;
    tfc_layer *l = tfc_layers_conv1d_new(&o);
    if (!l) tfc_status_oom(st, "Conv1D", sizeof(conv1d));
    return l;
}
