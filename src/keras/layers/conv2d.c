/* tf.keras.layers.Conv2D: activation(conv2d(x, kernel) + bias) over [batch, h, w, c] (channels_last) or
 * [batch, c, h, w] (channels_first, run as the op's NCHW). Inputs of rank > 4 carry extra leading batch dims
 * (Keras's squeeze_batch_dims). kernel [kh, kw, in / groups, filters], bias [filters]. */
#include <string.h>

#include "eager/context_internal.h"
#include "keras/layers/conv2d_pool.h"
#include "keras/layers/conv_utils.h"
#include "keras/layers/pooling2d.h"
#include "tfc/ops/conv.h"

typedef struct {
    tfc_layer base;
    int64_t filters, groups;
    int64_t kernel_size[2], strides[2], dilation_rate[2];
    char padding[TFC_KCONV_STR], data_format[TFC_KCONV_STR];
    char *activation;
    bool use_bias;
    tfc_kinit kernel_init, bias_init;
    tfc_regularizer kernel_reg, bias_reg;
    bool has_kernel_reg, has_bias_reg;
    tfc_variable *kernel, *bias; /* owned by base.weights */
} conv2d;

static bool channels_first(const conv2d *c) { return !strcmp(c->data_format, "channels_first"); }

/* The checks Keras makes in Conv.__init__ / _validate_init, here at build/apply (constructors cannot fail). */
static bool conv2d_validate_args(const conv2d *c, tfc_status *st) {
    const tfc_layer *l = &c->base;
    return tfc_kconv_check_pair(l, "kernel_size", c->kernel_size, 1, st) &&
           tfc_kconv_check_pair(l, "strides", c->strides, 1, st) &&
           tfc_kconv_check_pair(l, "dilation_rate", c->dilation_rate, 1, st) &&
           tfc_kconv_check_padding(l, c->padding, st) && tfc_kconv_check_data_format(l, c->data_format, st) &&
           tfc_layer_check_activation(l, c->activation, st) &&
           tfc_kconv_check_conv_args(l, c->filters, c->groups, c->strides, c->dilation_rate, 2, st);
}

static bool conv2d_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                tfc_status *st) {
    conv2d *c = (conv2d *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !conv2d_validate_args(c, st)) return false;
    const tfc_shape *s = &in[0];
    *n_out = 1;
    if (s->rank < 0) {
        out[0] = *s;
        return true;
    }
    if (!tfc_kconv_check_rank(l, s, 4, true, st)) return false;
    bool cf = channels_first(c);
    int r = s->rank, ch = cf ? r - 3 : r - 1, h = cf ? r - 2 : r - 3;
    int64_t in_ch = s->dims[ch];
    if (in_ch < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The channel dimension of the inputs should be defined. The input_shape received is %s, "
                              "where axis %d (0-based) is the channel dimension, which found to be `None`. (layer "
                              "\"%s\")",
                              TFC_KSHP(s), cf ? -3 : -1, l->name);
    if (in_ch % c->groups != 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The number of input channels must be evenly divisible by the number of groups. Received "
                              "groups=%lld, but the input has %lld channels (full input shape is %s). (layer \"%s\")",
                              (long long)c->groups, (long long)in_ch, TFC_KSHP(s), l->name);
    int64_t hw[2];
    if (!tfc_kconv_spatial(l, s, h, c->kernel_size, c->strides, c->dilation_rate, !strcmp(c->padding, "same"), hw,
                           st))
        return false;
    out[0] = *s;
    out[0].dims[h] = hw[0];
    out[0].dims[h + 1] = hw[1];
    out[0].dims[ch] = c->filters;
    return true;
}

static bool conv2d_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    conv2d *c = (conv2d *)l;
    bool cf = channels_first(c);
    int r = in[0].rank;
    int64_t in_ch = in[0].dims[cf ? r - 3 : r - 1];
    tfc_shape ks = {.rank = 4, .dims = {c->kernel_size[0], c->kernel_size[1], in_ch / c->groups, c->filters}};
    tfc_shape bs = {.rank = 1, .dims = {c->filters}};
    c->kernel = tfc_layer_add_weight(l, ctx, "kernel", &ks, l->dtype, &c->kernel_init.init,
                                     c->has_kernel_reg ? &c->kernel_reg : NULL, true, st);
    if (!c->kernel) return false;
    if (c->use_bias) {
        c->bias = tfc_layer_add_weight(l, ctx, "bias", &bs, l->dtype, &c->bias_init.init,
                                       c->has_bias_reg ? &c->bias_reg : NULL, true, st);
        if (!c->bias) return false;
    }
    /* InputSpec(min_ndim=4, axes={channel_axis: in_ch}) */
    l->input_spec[0] =
        (tfc_input_spec){.ndim = -1, .min_ndim = 4, .n_axes = 1, .axes = {cf ? -3 : -1}, .values = {in_ch}};
    l->has_input_spec = true;
    return true;
}

static bool conv2d_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                        bool training, tfc_status *st) {
    conv2d *c = (conv2d *)l;
    tfc_shape os;
    int no;
    /* Later calls may change the spatial size: check it here too, so errors name the layer. */
    if (!conv2d_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &no, st)) return false;
    bool cf = channels_first(c);
    tfc_tensor *x = in[0];
    int rank = tfc_tensor_rank(x);
    if (rank > 4) { /* fold the extra batch dims into one */
        int64_t d4[4] = {-1, tfc_tensor_dim(x, -3), tfc_tensor_dim(x, -2), tfc_tensor_dim(x, -1)};
        d4[0] = 1;
        for (int i = 0; i < rank - 3; i++) d4[0] *= tfc_tensor_dim(x, i);
        tfc_tensor *s = tfc_vec_i64(d4, 4, st);
        if (!s) return false;
        x = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, s}, 2, NULL, 0, st);
        tfc_tensor_unref(s);
        if (!x) return false;
    }
    tfc_tensor *k = tfc_layer_read_var(l, ctx, c->kernel, st);
    if (!k) return false;
    tfc_conv2d_attrs a = {.padding = !strcmp(c->padding, "same") ? "SAME" : "VALID",
                          .data_format = cf ? "NCHW" : "NHWC"};
    int hd = cf ? 2 : 1;
    for (int i = 0; i < 4; i++) a.strides[i] = a.dilations[i] = 1;
    a.strides[hd] = c->strides[0], a.strides[hd + 1] = c->strides[1];
    a.dilations[hd] = c->dilation_rate[0], a.dilations[hd + 1] = c->dilation_rate[1];
    /* float32 channels_last with a bias and an activation the fused op has: one _FusedConv2D, which adds the
     * bias and applies the activation as the convolution stores each output tile, instead of a BiasAdd and
     * an activation pass over the whole output (and their two gradient passes) */
    const char *fused = c->use_bias && !cf && tfc_tensor_dtype(x) == TFC_FLOAT && tfc_tensor_dtype(k) == TFC_FLOAT
                            ? tfc_activation_fused_op(c->activation)
                            : NULL;
    tfc_tensor *y;
    if (fused) {
        tfc_tensor *b = tfc_layer_read_var(l, ctx, c->bias, st);
        if (!b) return false;
        tfc_attr at[8];
        const char *ops[2];
        int na = 0;
        at[na++] = TFC_ATTR_INTS("strides", a.strides, 4);
        at[na++] = TFC_ATTR_S("padding", a.padding);
        at[na++] = TFC_ATTR_S("data_format", "NHWC");
        at[na++] = TFC_ATTR_INTS("dilations", a.dilations, 4);
        na = tfc_activation_fused_attrs(fused, ops, at, na);
        if (!(y = tfc_emit(ctx, "_FusedConv2D", (tfc_tensor *[]){x, k, b}, 3, at, na, st))) return false;
    } else {
        if (!(y = tfc_conv2d(ctx, x, k, &a, st))) return false;
        if (c->use_bias) {
            tfc_tensor *b = tfc_layer_read_var(l, ctx, c->bias, st);
            tfc_attr df = TFC_ATTR_S("data_format", cf ? "NCHW" : "NHWC");
            if (!b || !(y = tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, b}, 2, &df, 1, st))) return false;
        }
    }
    if (rank > 4) {
        tfc_tensor *s = tfc_vec_i64(os.dims, rank, st);
        if (!s) return false;
        y = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){y, s}, 2, NULL, 0, st);
        tfc_tensor_unref(s);
        if (!y) return false;
    }
    if (fused) return (out[0] = y) != NULL;
    return (out[0] = tfc_activation_apply(ctx, c->activation, y, st)) != NULL;
}

static bool conv2d_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const conv2d *c = (const conv2d *)l;
    cJSON *cfg = vcfg;
    cJSON *ks = tfc_json_int_array(c->kernel_size, 2), *ss = tfc_json_int_array(c->strides, 2),
          *dr = tfc_json_int_array(c->dilation_rate, 2);
    bool ok = cJSON_AddNumberToObject(cfg, "filters", (double)c->filters) && ks &&
              cJSON_AddItemToObject(cfg, "kernel_size", ks);
    if (!ok) cJSON_Delete(ks);
    ok = ok && ss && cJSON_AddItemToObject(cfg, "strides", ss);
    if (!ok) cJSON_Delete(ss);
    ok = ok && cJSON_AddStringToObject(cfg, "padding", c->padding) &&
         cJSON_AddStringToObject(cfg, "data_format", c->data_format) && dr &&
         cJSON_AddItemToObject(cfg, "dilation_rate", dr);
    if (!ok) cJSON_Delete(dr);
    return ok && cJSON_AddNumberToObject(cfg, "groups", (double)c->groups) &&
           tfc_json_add_kernel_bias_tail(cfg, l, c->activation, c->use_bias, &c->kernel_init, &c->bias_init,
                                         &c->kernel_reg, c->has_kernel_reg, &c->bias_reg, c->has_bias_reg);
}

static void conv2d_destroy(tfc_layer *l) { tfc_free(((conv2d *)l)->activation); }

static const tfc_layer_class conv2d_class = {
    .class_name = "Conv2D",
    .size = sizeof(conv2d),
    .build = conv2d_build,
    .compute_output_shape = conv2d_output_shape,
    .call = conv2d_call,
    .get_config = conv2d_get_config,
    .destroy = conv2d_destroy,
};

tfc_layer *tfc_layers_conv2d_new(const tfc_conv2d_layer_opts *o) {
    conv2d *c = TFC_LAYER_NEW(conv2d, &conv2d_class, o);
    if (!c) return NULL;
    c->filters = o->filters;
    c->groups = o->groups ? o->groups : 1;
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
    tfc_kinit_set(&c->kernel_init, o->kernel_initializer, "glorot_uniform");
    tfc_kinit_set(&c->bias_init, o->bias_initializer, "zeros");
    if ((c->has_kernel_reg = o->kernel_regularizer)) c->kernel_reg = *o->kernel_regularizer;
    if ((c->has_bias_reg = o->bias_regularizer)) c->bias_reg = *o->bias_regularizer;
    if ((c->base.has_activity_reg = o->activity_regularizer)) c->base.activity_reg = *o->activity_regularizer;
    return &c->base;
}

tfc_layer *tfc_keras_from_config_conv2d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_conv2d_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    bool has_filters = false, has_kernel = false, has_groups = false, has_strides, has_dilation, use_bias = true, hk,
         hb, ha;
    char kn[32], bn[32];
    tfc_initializer ki = {0}, bi = {0};
    tfc_regularizer kr, br, ar;
    if (!tfc_json_get_i64(cfg, "filters", &o.filters, &has_filters, st) ||
        !tfc_kconv_json_pair(cfg, "kernel_size", o.kernel_size, &has_kernel, st) ||
        !tfc_kconv_json_pair(cfg, "strides", o.strides, &has_strides, st) ||
        !tfc_kconv_json_pair(cfg, "dilation_rate", o.dilation_rate, &has_dilation, st) ||
        !tfc_kconv_json_padding(cfg, &o.padding, st) || !tfc_kconv_json_data_format(cfg, &o.data_format, st) ||
        !tfc_json_get_i64(cfg, "groups", &o.groups, &has_groups, st) ||
        !tfc_json_get_str(cfg, "activation", &o.activation, NULL, st) ||
        !tfc_json_get_bool(cfg, "use_bias", &use_bias, NULL, st) ||
        !tfc_json_get_initializer(cfg, "kernel_initializer", &ki, kn, sizeof kn, st) ||
        !tfc_json_get_initializer(cfg, "bias_initializer", &bi, bn, sizeof bn, st) ||
        !tfc_json_get_regularizer(cfg, "kernel_regularizer", &kr, &hk, st) ||
        !tfc_json_get_regularizer(cfg, "bias_regularizer", &br, &hb, st) ||
        !tfc_json_get_regularizer(cfg, "activity_regularizer", &ar, &ha, st))
        return NULL;
    if (!has_filters || !has_kernel) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Conv2D: the config has no \"%s\"",
                       has_filters ? "kernel_size" : "filters");
        return NULL;
    }
    /* Zero means "default" in the options but is an error in a config. */
    if (o.filters <= 0 || o.kernel_size[0] <= 0 || o.kernel_size[1] <= 0 ||
        (has_strides && (o.strides[0] <= 0 || o.strides[1] <= 0)) ||
        (has_dilation && (o.dilation_rate[0] <= 0 || o.dilation_rate[1] <= 0)) || (has_groups && o.groups <= 0)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "Conv2D: filters, kernel_size, strides, dilation_rate and groups must be positive "
                       "(filters=%lld, kernel_size=(%lld, %lld), strides=(%lld, %lld), dilation_rate=(%lld, %lld), "
                       "groups=%lld)",
                       (long long)o.filters, (long long)o.kernel_size[0], (long long)o.kernel_size[1],
                       (long long)o.strides[0], (long long)o.strides[1], (long long)o.dilation_rate[0],
                       (long long)o.dilation_rate[1], (long long)o.groups);
        return NULL;
    }
    o.use_bias = use_bias ? TFC_YES : TFC_NO;
    if (ki.name) o.kernel_initializer = &ki;
    if (bi.name) o.bias_initializer = &bi;
    if (hk) o.kernel_regularizer = &kr;
    if (hb) o.bias_regularizer = &br;
    if (ha) o.activity_regularizer = &ar;
    tfc_layer *l = tfc_layers_conv2d_new(&o);
    if (!l) tfc_status_oom(st, "Conv2D", sizeof(conv2d));
    return l;
}

/* ---- a Conv2D fused with a following MaxPooling2D (conv2d_pool.h) ---- */

/* The ops' attrs: the convolution's (with _FusedConv2D's fused_ops for activation op `act`), then the pool's
 * as ksize, pool_strides and pool_padding. Returns the count. */
static int conv_pool_attrs(const conv2d *c, const tfc_pooling2d *p, const char *act, int64_t strides[4],
                           int64_t dil[4], int64_t ks[4], int64_t pst[4], const char *ops[2], tfc_attr at[12]) {
    for (int i = 0; i < 4; i++) strides[i] = dil[i] = ks[i] = pst[i] = 1;
    strides[1] = c->strides[0], strides[2] = c->strides[1], dil[1] = c->dilation_rate[0], dil[2] = c->dilation_rate[1];
    ks[1] = p->pool_size[0], ks[2] = p->pool_size[1], pst[1] = p->strides[0], pst[2] = p->strides[1];
    int na = 0;
    at[na++] = TFC_ATTR_INTS("strides", strides, 4);
    at[na++] = TFC_ATTR_S("padding", !strcmp(c->padding, "same") ? "SAME" : "VALID");
    at[na++] = TFC_ATTR_INTS("dilations", dil, 4);
    na = tfc_activation_fused_attrs(act, ops, at, na);
    at[na++] = TFC_ATTR_INTS("ksize", ks, 4);
    at[na++] = TFC_ATTR_INTS("pool_strides", pst, 4);
    at[na++] = TFC_ATTR_S("pool_padding", !strcmp(p->padding, "same") ? "SAME" : "VALID");
    return na;
}

/* The fused op's activation for the pair (l, pl) on x, or NULL when the pair does not qualify (see
 * conv2d_pool.h; `train` also requires a ReLU). */
static const char *conv_pool_act(tfc_layer *l, tfc_layer *pl, tfc_tensor *x, bool train) {
    if (l->cls != &conv2d_class || !pl->cls || strcmp(pl->cls->class_name, "MaxPooling2D")) return NULL;
    conv2d *c = (conv2d *)l;
    const tfc_pooling2d *p = (const tfc_pooling2d *)pl;
    if (!l->built || !pl->built || l->has_activity_reg || pl->has_activity_reg || channels_first(c) || !c->use_bias ||
        c->groups != 1 || strcmp(p->op, "MaxPool") || strcmp(p->data_format, "channels_last") || l->compute_dtype != TFC_FLOAT ||
        tfc_tensor_dtype(x) != TFC_FLOAT || tfc_tensor_rank(x) != 4)
        return NULL;
    const char *act = tfc_activation_fused_op(c->activation);
    if (!act || (train && strcmp(act, "Relu"))) return NULL;
    /* the checks the layer calls make; any failure takes the layer-by-layer path, which reports it */
    tfc_status probe = TFC_STATUS_INIT;
    tfc_shape xs = *tfc_tensor_shape(x), cs, ps;
    int no = 1, no2 = 1;
    if (!tfc_layer_check_inputs(l, &xs, 1, &probe) || !conv2d_output_shape(l, &xs, 1, &cs, &no, &probe) ||
        !tfc_layer_check_inputs(pl, &cs, 1, &probe) || !tfc_pooling2d_output_shape(pl, &cs, 1, &ps, &no2, &probe))
        return NULL;
    return act;
}

/* The pair (l, pl) on x as one op: _TfcFusedConv2DMaxPool for inference, whose weight reads are not taped;
 * under a training step's tape _FusedConv2D unrecorded, then _TfcFusedConv2DMaxPoolTrain, whose gradient stands
 * for both (taped reads: the tape maps the variables to these tensors), or, for a first layer under a 2x2 pool
 * of stride 2, _TfcFusedConv2DMaxPoolArgmax (see conv2d_pool.h). *y stays NULL when the pair does not
 * qualify. */
static bool conv_pool_call(tfc_layer *l, tfc_layer *pl, tfc_ctx *ctx, tfc_tensor *x, bool train, tfc_tensor **y,
                           tfc_status *st) {
    *y = NULL;
    const char *act = conv_pool_act(l, pl, x, train);
    if (!act) return true;
    conv2d *c = (conv2d *)l;
    if (!tfc_scope_begin(ctx, st)) return false;
    tfc_tensor *(*read)(tfc_ctx *, tfc_variable *, tfc_status *) = train ? tfc_variable_read : tfc_variable_read_untaped;
    tfc_tensor *k = read(ctx, c->kernel, st), *b = k ? read(ctx, c->bias, st) : NULL;
    tfc_tensor *out = NULL;
    if (b) {
        int64_t strides[4], dil[4], ks[4], pst[4];
        tfc_attr at[12];
        const char *ops[2];
        int na = conv_pool_attrs(c, (const tfc_pooling2d *)pl, act, strides, dil, ks, pst, ops, at);
        if (!train) {
            out = tfc_emit(ctx, "_TfcFusedConv2DMaxPool", (tfc_tensor *[]){x, k, b}, 3, at, na, st);
        } else if (ks[1] == 2 && ks[2] == 2 && pst[1] == 2 && pst[2] == 2 && !tfc_tape_should_record(ctx, &x, 1)) {
            /* a first layer (no gradient for x) under a 2x2 pool of stride 2: the pool's output and its windows'
             * routing bytes in one op, recorded, whose gradient needs only those (not the conv output, 4x the
             * pool's output in floats, which is never written) */
            tfc_tensor *o2[2] = {0};
            if (tfc_execute(ctx, "_TfcFusedConv2DMaxPoolArgmax", (tfc_tensor *[]){x, k, b}, 3, at, na, o2, 2, st) == 2)
                out = o2[0];
        } else {
            /* the convolution's output, as the layer's call computes it (_FusedConv2D, data_format left at its
             * NHWC default), not recorded: _TfcFusedConv2DMaxPoolTrain's gradient stands for it */
            tfc_ctx_stop_recording(ctx);
            tfc_tensor *conv = tfc_emit(ctx, "_FusedConv2D", (tfc_tensor *[]){x, k, b}, 3, at, na - 3, st);
            tfc_ctx_start_recording(ctx);
            if (conv)
                out = tfc_emit(ctx, "_TfcFusedConv2DMaxPoolTrain", (tfc_tensor *[]){x, k, b, conv}, 4, at, na, st);
        }
    }
    if (!out) {
        tfc_scope_end(ctx);
        return false;
    }
    if (!tfc_scope_end_keep(ctx, &out, 1, st)) return false;
    *y = out;
    return true;
}

bool tfc_conv2d_max_pool_infer(tfc_layer *l, tfc_layer *pl, tfc_ctx *ctx, tfc_tensor *x, tfc_tensor **y,
                               tfc_status *st) {
    return conv_pool_call(l, pl, ctx, x, false, y, st);
}

bool tfc_conv2d_max_pool_train(tfc_layer *l, tfc_layer *pl, tfc_ctx *ctx, tfc_tensor *x, tfc_tensor **y,
                               tfc_status *st) {
    return conv_pool_call(l, pl, ctx, x, true, y, st);
}
