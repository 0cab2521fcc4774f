/* tf.keras.layers.Conv1DTranspose / Conv2DTranspose: activation(conv_transpose(x, kernel) + bias), computed as
 * TensorFlow does: Conv2DBackpropInput with the layer's input as out_backprop and the output shape from Keras's
 * deconv_output_length (1-D runs over [batch, 1, steps, channels] as tf.nn.conv1d_transpose). channels_first
 * inputs are transposed to channels_last and back. */
#include <stdio.h>
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/keras/conv_transpose.h"
#include "tfc/ops/array.h"
#include "tfc/ops/conv.h"

typedef struct {
    tfc_layer base;
    int rank; /* spatial dims: 1 or 2 */
    int64_t filters, ksize[2], strides[2], dilation[2], out_pad[2];
    bool has_out_pad;
    char padding[TFC_KCONV_STR], data_format[TFC_KCONV_STR];
    char activation[32];
    bool use_bias;
    tfc_kinit kernel_init, bias_init;
    tfc_regularizer kernel_reg, bias_reg;
    bool has_kernel_reg, has_bias_reg;
    tfc_variable *kernel, *bias;
} convt;

static bool cfirst(const convt *c) { return !strcmp(c->data_format, "channels_first"); }

static const char *tuple(const convt *c, const int64_t *v) {
    static _Thread_local char buf[4][64];
    static _Thread_local int k;
    k = (k + 1) % 4;
    return tfc_kconv_tuple_str(v, c->rank, buf[k], sizeof buf[k]);
}

static bool convt_validate(const convt *c, tfc_status *st) {
    const tfc_layer *l = &c->base;
    int64_t k[2] = {c->ksize[0], c->ksize[1]}, s[2] = {c->strides[0], c->strides[1]},
            d[2] = {c->dilation[0], c->dilation[1]};
    if (!tfc_kconv_check_pair(l, "kernel_size", k, 1, st) || !tfc_kconv_check_pair(l, "strides", s, 1, st) ||
        !tfc_kconv_check_pair(l, "dilation_rate", d, 1, st) || !tfc_kconv_check_padding(l, c->padding, st) ||
        !tfc_kconv_check_data_format(l, c->data_format, st) ||
        !tfc_layer_check_activation(l, c->activation, st) ||
        !tfc_kconv_check_conv_args(l, c->filters, 1, s, d, c->rank, st))
        return false;
    if (c->has_out_pad)
        for (int i = 0; i < c->rank; i++) {
            if (c->out_pad[i] < 0)
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "The `output_padding` argument must be a tuple of %d integers. Received: %s "
                                      "including %lld that does not satisfy the requirement `>= 0`. (layer \"%s\")",
                                      c->rank, tuple(c, c->out_pad), (long long)c->out_pad[i], l->name);
            if (c->out_pad[i] >= c->strides[i])
                return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                      "Strides must be greater than output padding. Received strides=%s, "
                                      "output_padding=%s. (layer \"%s\")",
                                      tuple(c, c->strides), tuple(c, c->out_pad), l->name);
        }
    if (c->rank == 2 && c->dilation[0] != c->dilation[1])
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Expected the 2 dimensions of the `dilation_rate` argument to be equal to each other. "
                              "Received: dilation_rate=%s (layer \"%s\")",
                              tuple(c, c->dilation), l->name);
    return true;
}

/* conv_utils.deconv_output_length; false when it overflows int64. -1 for an unknown input length. */
static bool deconv_length(const convt *c, int i, int64_t in, int64_t *out) {
    if (in < 0) return *out = -1, true;
    __int128 k = (__int128)(c->ksize[i] - 1) * c->dilation[i] + 1, s = c->strides[i], len;
    bool same = !strcmp(c->padding, "same");
    if (!c->has_out_pad)
        len = same ? (__int128)in * s : (__int128)in * s + (k > s ? k - s : 0);
    else
        len = (__int128)(in - 1) * s + k - 2 * (same ? k / 2 : 0) + c->out_pad[i];
    if (len > INT64_MAX) return false;
    *out = (int64_t)len;
    return true;
}

static bool convt_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                               tfc_status *st) {
    convt *c = (convt *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !convt_validate(c, st)) return false;
    const tfc_shape *s = &in[0];
    int r = c->rank + 2;
    if (s->rank != r)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Inputs should have rank %d. Received input_shape=%s. (layer "
                              "\"%s\")", r, TFC_KSHP(s), l->name);
    bool cf = cfirst(c);
    int ch = cf ? 1 : r - 1, t0 = cf ? 2 : 1;
    if (s->dims[ch] < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The channel dimension of the inputs to `%s` should be defined. The input_shape received "
                              "is %s, where axis %d (0-based) is the channel dimension, which found to be `None`.",
                              l->cls->class_name, TFC_KSHP(s), ch);
    out[0] = *s;
    out[0].dims[ch] = c->filters;
    for (int i = 0; i < c->rank; i++) {
        int64_t len;
        if (!deconv_length(c, i, s->dims[t0 + i], &len))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": the output length of input shape %s "
                                  "overflows", l->name, TFC_KSHP(s));
        if (s->dims[t0 + i] >= 0 && len <= 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": input shape %s gives a non-positive output length %lld in spatial "
                                  "dimension %d (kernel_size=%s, strides=%s, padding=%s, output_padding=%s)",
                                  l->name, TFC_KSHP(s), (long long)len, i, tuple(c, c->ksize), tuple(c, c->strides),
                                  c->padding, c->has_out_pad ? tuple(c, c->out_pad) : "None");
        /* Conv2DBackpropInput needs the forward convolution of the output length to give back the input's */
        int64_t n = s->dims[t0 + i], keff = (c->ksize[i] - 1) * c->dilation[i] + 1, st_ = c->strides[i];
        int64_t back = !strcmp(c->padding, "same") ? len / st_ + (len % st_ != 0)
                                                   : (len >= keff ? (len - keff) / st_ + 1 : 0);
        if (n >= 0 && back != n)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Layer \"%s\": output_padding=%s gives output length %lld in spatial dimension %d, "
                                  "whose %s convolution (kernel_size=%s, strides=%s, dilation_rate=%s) has length "
                                  "%lld, not the input's %lld (input shape %s); TensorFlow's Conv2DBackpropInput "
                                  "rejects it",
                                  l->name, c->has_out_pad ? tuple(c, c->out_pad) : "None", (long long)len, i,
                                  c->padding, tuple(c, c->ksize), tuple(c, c->strides), tuple(c, c->dilation),
                                  (long long)back, (long long)n, TFC_KSHP(s));
        out[0].dims[t0 + i] = len;
    }
    *n_out = 1;
    return true;
}

static bool convt_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    convt *c = (convt *)l;
    int r = c->rank + 2;
    int64_t in_ch = in[0].dims[cfirst(c) ? 1 : r - 1];
    tfc_shape ks = {.rank = c->rank + 2};
    for (int i = 0; i < c->rank; i++) ks.dims[i] = c->ksize[i];
    ks.dims[c->rank] = c->filters;
    ks.dims[c->rank + 1] = in_ch;
    tfc_shape bs = {.rank = 1, .dims = {c->filters}};
    if (!(c->kernel = tfc_layer_add_weight(l, ctx, "kernel", &ks, l->dtype, &c->kernel_init.init,
                                           c->has_kernel_reg ? &c->kernel_reg : NULL, true, st)))
        return false;
    if (c->use_bias && !(c->bias = tfc_layer_add_weight(l, ctx, "bias", &bs, l->dtype, &c->bias_init.init,
                                                        c->has_bias_reg ? &c->bias_reg : NULL, true, st)))
        return false;
    l->input_spec[0] = (tfc_input_spec){.ndim = r, .n_axes = 1, .axes = {cfirst(c) ? 1 : -1}, .values = {in_ch}};
    l->has_input_spec = true;
    return true;
}

/* Conv2DBackpropInput's input_sizes [batch, oh, ow, filters]: a constant when the batch is known, else
 * concat(shape(x)[:1], [oh, ow, filters]) (a traced graph with an unknown batch). */
static tfc_tensor *output_sizes(tfc_ctx *ctx, tfc_tensor *x, const int64_t o[3], tfc_status *st) {
    int32_t v[4];
    for (int i = 0; i < 3; i++) {
        if (o[i] > INT32_MAX) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "conv_transpose: output dimension %lld does not fit int32",
                           (long long)o[i]);
            return NULL;
        }
        v[i + 1] = (int32_t)o[i];
    }
    int64_t b = tfc_tensor_dim(x, 0);
    if (b >= 0 && b <= INT32_MAX) {
        v[0] = (int32_t)b;
        return tfc_vec_i32(v, 4, st);
    }
    tfc_attr ot = TFC_ATTR_T("out_type", TFC_INT32);
    tfc_tensor *shp = tfc_emit(ctx, "Shape", &x, 1, &ot, 1, st);
    tfc_tensor *rest = shp ? tfc_vec_i32(v + 1, 3, st) : NULL;
    tfc_tensor *begin = rest ? tfc_vec_i32((int32_t[]){0}, 1, st) : NULL;
    tfc_tensor *size = begin ? tfc_vec_i32((int32_t[]){1}, 1, st) : NULL;
    tfc_tensor *axis = size ? tfc_scalar_i32(0, st) : NULL;
    tfc_tensor *head = axis ? tfc_emit(ctx, "Slice", (tfc_tensor *[]){shp, begin, size}, 3, NULL, 0, st) : NULL;
    tfc_attr n = TFC_ATTR_I("N", 2);
    tfc_tensor *r = head ? tfc_emit(ctx, "ConcatV2", (tfc_tensor *[]){head, rest, axis}, 3, &n, 1, st) : NULL;
    tfc_tensor_unref(rest);
    tfc_tensor_unref(begin);
    tfc_tensor_unref(size);
    tfc_tensor_unref(axis);
    return r;
}

static tfc_tensor *transpose(tfc_ctx *ctx, tfc_tensor *x, const int64_t *perm, tfc_status *st) {
    return x ? tfc_transpose(ctx, x, perm, st) : NULL;
}

static tfc_tensor *reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    return x ? tfc_reshape(ctx, x, dims, rank, st) : NULL;
}

static bool convt_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       bool training, tfc_status *st) {
    convt *c = (convt *)l;
    tfc_shape os;
    if (!convt_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &(int){0}, st)) return false;
    bool cf = cfirst(c), one = c->rank == 1;
    static const int64_t to_last1[] = {0, 2, 1}, to_last2[] = {0, 2, 3, 1}, to_first2[] = {0, 3, 1, 2};
    tfc_tensor *x = cf ? transpose(ctx, in[0], one ? to_last1 : to_last2, st) : in[0];
    if (!x) return false;
    int64_t o[3]; /* oh, ow, filters of the 4-D view */
    if (one) {
        o[0] = 1, o[1] = os.dims[cf ? 2 : 1];
        x = reshape(ctx, x, (int64_t[]){-1, 1, tfc_tensor_dim(x, 1), tfc_tensor_dim(x, 2)}, 4, st);
    } else {
        o[0] = os.dims[cf ? 2 : 1], o[1] = os.dims[cf ? 3 : 2];
    }
    o[2] = c->filters;
    tfc_tensor *k = tfc_layer_read_var(l, ctx, c->kernel, st);
    if (one) k = reshape(ctx, k, (int64_t[]){1, c->ksize[0], c->filters, tfc_tensor_dim(x ? x : in[0], 3)}, 4, st);
    tfc_tensor *sizes = x && k ? output_sizes(ctx, x, o, st) : NULL;
    if (!sizes) return false;
    tfc_attr a[4] = {
        TFC_ATTR_INTS("strides", ((int64_t[]){1, one ? 1 : c->strides[0], c->strides[one ? 0 : 1], 1}), 4),
        TFC_ATTR_S("padding", !strcmp(c->padding, "same") ? "SAME" : "VALID"),
        TFC_ATTR_INTS("dilations", ((int64_t[]){1, one ? 1 : c->dilation[0], c->dilation[one ? 0 : 1], 1}), 4),
        TFC_ATTR_S("data_format", "NHWC"),
    };
    tfc_tensor *y = tfc_emit(ctx, "Conv2DBackpropInput", (tfc_tensor *[]){sizes, k, x}, 3, a, 4, st);
    tfc_tensor_unref(sizes);
    if (y && c->use_bias) {
        tfc_tensor *bias = tfc_layer_read_var(l, ctx, c->bias, st);
        y = bias ? tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, bias}, 2, NULL, 0, st) : NULL;
    }
    if (one) y = reshape(ctx, y, (int64_t[]){-1, o[1], c->filters}, 3, st);
    y = y ? tfc_activation_apply(ctx, c->activation, y, st) : NULL;
    if (y && cf) y = transpose(ctx, y, one ? to_last1 : to_first2, st);
    return (out[0] = y) != NULL;
}

static bool convt_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const convt *c = (const convt *)l;
    cJSON *cfg = vcfg;
    tfc_kinit ki = c->kernel_init, bi = c->bias_init;
    cJSON *op = c->has_out_pad ? tfc_json_int_array(c->out_pad, c->rank) : cJSON_CreateNull();
    bool ok = cJSON_AddNumberToObject(cfg, "filters", (double)c->filters) &&
              cJSON_AddItemToObject(cfg, "kernel_size", tfc_json_int_array(c->ksize, c->rank)) &&
              cJSON_AddItemToObject(cfg, "strides", tfc_json_int_array(c->strides, c->rank)) &&
              cJSON_AddStringToObject(cfg, "padding", c->padding) &&
              cJSON_AddStringToObject(cfg, "data_format", c->data_format) &&
              cJSON_AddItemToObject(cfg, "dilation_rate", tfc_json_int_array(c->dilation, c->rank)) &&
              cJSON_AddNumberToObject(cfg, "groups", 1) &&
              tfc_json_add_kernel_bias_tail(cfg, l, c->activation, c->use_bias, &ki, &bi, &c->kernel_reg,
                                            c->has_kernel_reg, &c->bias_reg, c->has_bias_reg);
    if (!ok || !op || !cJSON_AddItemToObject(cfg, "output_padding", op)) {
        cJSON_Delete(op);
        return false;
    }
    return true;
}

static const tfc_layer_class conv1d_transpose_class = {
    .class_name = "Conv1DTranspose",
    .size = sizeof(convt),
    .build = convt_build,
    .compute_output_shape = convt_output_shape,
    .call = convt_call,
    .get_config = convt_get_config,
};

static const tfc_layer_class conv2d_transpose_class = {
    .class_name = "Conv2DTranspose",
    .size = sizeof(convt),
    .build = convt_build,
    .compute_output_shape = convt_output_shape,
    .call = convt_call,
    .get_config = convt_get_config,
};

static tfc_layer *convt_new(const tfc_layer_class *cls, int rank, const tfc_conv_transpose_layer_opts *o) {
    convt *c = TFC_LAYER_NEW(convt, cls, o);
    if (!c) return NULL;
    c->rank = rank;
    c->filters = o->filters;
    if (rank == 1) {
        c->ksize[0] = o->kernel_size[0], c->strides[0] = o->strides[0] ? o->strides[0] : 1;
        c->dilation[0] = o->dilation_rate[0] ? o->dilation_rate[0] : 1, c->out_pad[0] = o->output_padding[0];
        c->ksize[1] = c->strides[1] = c->dilation[1] = 1;
    } else {
        tfc_kconv_pair(c->ksize, o->kernel_size, 0);
        tfc_kconv_pair(c->strides, o->strides, 1);
        tfc_kconv_pair(c->dilation, o->dilation_rate, 1);
        c->out_pad[0] = o->output_padding[0];
        c->out_pad[1] = o->output_padding[1];
    }
    c->has_out_pad = o->has_output_padding;
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

tfc_layer *tfc_layers_conv1d_transpose_new(const tfc_conv_transpose_layer_opts *o) {
    return convt_new(&conv1d_transpose_class, 1, o);
}

tfc_layer *tfc_layers_conv2d_transpose_new(const tfc_conv_transpose_layer_opts *o) {
    return convt_new(&conv2d_transpose_class, 2, o);
}

static tfc_layer *convt_from_config(const cJSON *cfg, int rank, const char *cls, tfc_status *st) {
    tfc_layer_common_cfg cc;
    if (!tfc_json_get_common(cfg, &cc, st)) return NULL;
    tfc_conv_transpose_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(cc, o);
    bool has_f, has_k, use_bias = true, hk, hb, ha;
    char kn[32], bn[32];
    tfc_initializer ki = {0}, bi = {0};
    tfc_regularizer kr, br, ar;
    int64_t groups = 1;
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(cfg, "output_padding");
    if (!tfc_json_get_i64(cfg, "filters", &o.filters, &has_f, st) ||
        !tfc_kconv_json_tuple(cfg, "kernel_size", rank, o.kernel_size, &has_k, st) ||
        !tfc_kconv_json_tuple(cfg, "strides", rank, o.strides, NULL, st) ||
        !tfc_kconv_json_tuple(cfg, "dilation_rate", rank, o.dilation_rate, NULL, st) ||
        (op && !cJSON_IsNull(op) &&
         !tfc_kconv_json_tuple(cfg, "output_padding", rank, o.output_padding, &o.has_output_padding, st)) ||
        !tfc_json_get_i64(cfg, "groups", &groups, NULL, st) ||
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
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the config needs \"filters\" and \"kernel_size\"", cls);
        return NULL;
    }
    if (groups != 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: groups must be 1 (transposed convolutions are not grouped); "
                       "received groups=%lld", cls, (long long)groups);
        return NULL;
    }
    o.use_bias = use_bias ? TFC_YES : TFC_NO;
    if (ki.name) o.kernel_initializer = &ki;
    if (bi.name) o.bias_initializer = &bi;
    if (hk) o.kernel_regularizer = &kr;
    if (hb) o.bias_regularizer = &br;
    if (ha) o.activity_regularizer = &ar;
    tfc_layer *l = rank == 1 ? tfc_layers_conv1d_transpose_new(&o) : tfc_layers_conv2d_transpose_new(&o);
    if (!l) tfc_status_oom(st, cls, sizeof(convt));
    return l;
}

tfc_layer *tfc_keras_from_config_conv1d_transpose(const cJSON *cfg, tfc_status *st) {
    return convt_from_config(cfg, 1, "Conv1DTranspose", st);
}

tfc_layer *tfc_keras_from_config_conv2d_transpose(const cJSON *cfg, tfc_status *st) {
    return convt_from_config(cfg, 2, "Conv2DTranspose", st);
}
