/* tf.keras.layers.MaxPooling1D / AveragePooling1D (Keras's Pooling1D: MaxPool / AvgPool over the input with a unit
 * dim added after the steps) and GlobalAveragePooling1D / GlobalMaxPooling1D (Mean / Max over the steps). */
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/keras/pooling1d.h"
#include "tfc/ops/array.h"
#include "tfc/ops/conv.h"

/* ---- Pooling1D ---- */

typedef struct {
    tfc_layer base;
    bool max;
    int64_t pool_size, strides;
    char padding[TFC_KCONV_STR], data_format[TFC_KCONV_STR];
} pooling1d;

static bool cfirst(const char *data_format) { return !strcmp(data_format, "channels_first"); }

static bool p1_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                            tfc_status *st) {
    pooling1d *p = (pooling1d *)l;
    int64_t k[2] = {p->pool_size, 1}, s[2] = {p->strides, 1};
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !tfc_kconv_check_pair(l, "pool_size", k, 1, st) ||
        !tfc_kconv_check_pair(l, "strides", s, 1, st) || !tfc_kconv_check_padding(l, p->padding, st) ||
        !tfc_kconv_check_data_format(l, p->data_format, st))
        return false;
    const tfc_shape *sh = &in[0];
    if (!tfc_kconv_check_rank(l, sh, 3, false, st)) return false;
    int t = cfirst(p->data_format) ? 2 : 1;
    /* the 2-D view [batch, steps, 1, c] / [batch, c, steps, 1] shares the 2-D layers' checks and messages */
    tfc_shape v = {.rank = 4, .dims = {sh->dims[0], sh->dims[1], sh->dims[2], 1}};
    if (t == 1) v.dims[2] = 1, v.dims[3] = sh->dims[2];
    int64_t hw[2];
    if (!tfc_kconv_spatial(l, &v, t, k, s, (int64_t[]){1, 1}, !strcmp(p->padding, "same"), hw, st)) return false;
    out[0] = *sh;
    out[0].dims[t] = hw[0];
    *n_out = 1;
    return true;
}

static bool p1_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = 3};
    l->has_input_spec = true;
    return true;
}

static bool p1_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    pooling1d *p = (pooling1d *)l;
    tfc_shape os;
    if (!p1_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &(int){0}, st)) return false;
    bool cf = cfirst(p->data_format);
    int pad_axis = cf ? 3 : 2, t = cf ? 2 : 1;
    tfc_tensor *x = tfc_expand_dims(ctx, in[0], pad_axis, st);
    if (!x) return false;
    tfc_pool_attrs a = {.ksize = {1, 1, 1, 1}, .strides = {1, 1, 1, 1},
                        .padding = !strcmp(p->padding, "same") ? "SAME" : "VALID", .data_format = cf ? "NCHW" : "NHWC"};
    a.ksize[t] = p->pool_size;
    a.strides[t] = p->strides;
    tfc_tensor *y = p->max ? tfc_max_pool(ctx, x, &a, st) : tfc_avg_pool(ctx, x, &a, st);
    if (y) y = tfc_squeeze(ctx, y, (int64_t[]){pad_axis}, 1, st);
    return (out[0] = y) != NULL;
}

static bool p1_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const pooling1d *p = (const pooling1d *)l;
    cJSON *cfg = vcfg;
    cJSON *ss = tfc_json_int_array(&p->strides, 1), *ps = ss ? tfc_json_int_array(&p->pool_size, 1) : NULL;
    bool ok = ps && cJSON_AddItemToObject(cfg, "strides", ss);
    if (!ok) cJSON_Delete(ss);
    ok = ok && cJSON_AddItemToObject(cfg, "pool_size", ps);
    if (!ok) cJSON_Delete(ps);
    return ok && cJSON_AddStringToObject(cfg, "padding", p->padding) &&
           cJSON_AddStringToObject(cfg, "data_format", p->data_format);
}

static const tfc_layer_class max_pooling1d_class = {
    .class_name = "MaxPooling1D",
    .size = sizeof(pooling1d),
    .build = p1_build,
    .compute_output_shape = p1_output_shape,
    .call = p1_call,
    .get_config = p1_get_config,
};

static const tfc_layer_class average_pooling1d_class = {
    .class_name = "AveragePooling1D",
    .size = sizeof(pooling1d),
    .build = p1_build,
    .compute_output_shape = p1_output_shape,
    .call = p1_call,
    .get_config = p1_get_config,
};

static tfc_layer *p1_new(const tfc_layer_class *cls, bool max, const tfc_pooling1d_opts *o) {
    pooling1d *p = TFC_LAYER_NEW(pooling1d, cls, o);
    if (!p) return NULL;
    p->base.keeps_input_dtype = true;
    p->max = max;
    p->pool_size = o->pool_size ? o->pool_size : 2;
    p->strides = o->strides ? o->strides : p->pool_size;
    tfc_kconv_lower(p->padding, sizeof p->padding, o->padding, "valid");
    tfc_kconv_lower(p->data_format, sizeof p->data_format, o->data_format, "channels_last");
    return &p->base;
}

tfc_layer *tfc_layers_max_pooling1d_new(const tfc_pooling1d_opts *o) { return p1_new(&max_pooling1d_class, true, o); }
tfc_layer *tfc_layers_average_pooling1d_new(const tfc_pooling1d_opts *o) {
    return p1_new(&average_pooling1d_class, false, o);
}

/* An int, a one-element list, or null (strides=None). */
static bool get_one(const cJSON *cfg, const char *cls, const char *key, int64_t *out, tfc_status *st) {
    const cJSON *item = cJSON_GetObjectItemCaseSensitive(cfg, key);
    if (!item || cJSON_IsNull(item)) return true;
    int64_t v[TFC_MAX_RANK];
    int n = 0;
    if (!tfc_json_get_i64_list(cfg, key, v, TFC_MAX_RANK, &n, NULL, st)) return false;
    if (n != 1 || v[0] <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: the `%s` argument must be a positive integer or a tuple of 1 positive integer "
                              "(config key \"%s\")", cls, key, key);
    *out = v[0];
    return true;
}

static tfc_layer *p1_from_config(const cJSON *cfg, bool max, const char *cls, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_pooling1d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    if (!get_one(cfg, cls, "pool_size", &o.pool_size, st) || !get_one(cfg, cls, "strides", &o.strides, st) ||
        !tfc_kconv_json_padding(cfg, &o.padding, st) || !tfc_kconv_json_data_format(cfg, &o.data_format, st))
        return NULL;
    tfc_layer *l = max ? tfc_layers_max_pooling1d_new(&o) : tfc_layers_average_pooling1d_new(&o);
    if (!l) tfc_status_oom(st, cls, sizeof(pooling1d));
    return l;
}

tfc_layer *tfc_keras_from_config_max_pooling1d(const cJSON *cfg, tfc_status *st) {
    return p1_from_config(cfg, true, "MaxPooling1D", st);
}

tfc_layer *tfc_keras_from_config_average_pooling1d(const cJSON *cfg, tfc_status *st) {
    return p1_from_config(cfg, false, "AveragePooling1D", st);
}

/* ---- GlobalPooling1D ---- */

typedef struct {
    tfc_layer base;
    const char *op; /* "Mean" or "Max" */
    char data_format[TFC_KCONV_STR];
    bool keepdims;
} global_pooling1d;

static bool g1_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                            tfc_status *st) {
    global_pooling1d *p = (global_pooling1d *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !tfc_kconv_check_data_format(l, p->data_format, st)) return false;
    const tfc_shape *s = &in[0];
    if (!tfc_kconv_check_rank(l, s, 3, false, st)) return false;
    bool cf = cfirst(p->data_format);
    int t = cf ? 2 : 1;
    if (s->dims[t] == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "Incorrect input shape %s with dimension 0 at reduction axis %d. (layer \"%s\")",
                              TFC_KSHP(s), t, l->name);
    if (p->keepdims) {
        out[0] = *s;
        out[0].dims[t] = 1;
    } else {
        out[0] = (tfc_shape){.rank = 2, .dims = {s->dims[0], s->dims[cf ? 1 : 2]}};
    }
    *n_out = 1;
    return true;
}

static bool g1_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    global_pooling1d *p = (global_pooling1d *)l;
    tfc_shape os;
    if (!g1_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &(int){0}, st)) return false;
    tfc_tensor *ax = tfc_vec_i32((int32_t[]){cfirst(p->data_format) ? 2 : 1}, 1, st);
    if (!ax) return false;
    tfc_attr keep = TFC_ATTR_B("keep_dims", p->keepdims);
    out[0] = tfc_emit(ctx, p->op, (tfc_tensor *[]){in[0], ax}, 2, &keep, 1, st);
    tfc_tensor_unref(ax);
    return out[0] != NULL;
}

static bool g1_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    const global_pooling1d *p = (const global_pooling1d *)l;
    return cJSON_AddStringToObject(cfg, "data_format", p->data_format) &&
           cJSON_AddBoolToObject(cfg, "keepdims", p->keepdims);
}

static const tfc_layer_class global_average_pooling1d_class = {
    .class_name = "GlobalAveragePooling1D",
    .size = sizeof(global_pooling1d),
    .build = p1_build,
    .compute_output_shape = g1_output_shape,
    .call = g1_call,
    .get_config = g1_get_config,
};

static const tfc_layer_class global_max_pooling1d_class = {
    .class_name = "GlobalMaxPooling1D",
    .size = sizeof(global_pooling1d),
    .build = p1_build,
    .compute_output_shape = g1_output_shape,
    .call = g1_call,
    .get_config = g1_get_config,
};

static tfc_layer *g1_new(const tfc_layer_class *cls, const char *op, const tfc_global_pooling1d_opts *o) {
    global_pooling1d *p = TFC_LAYER_NEW(global_pooling1d, cls, o);
    if (!p) return NULL;
    p->base.keeps_input_dtype = true;
    p->op = op;
    p->keepdims = o->keepdims;
    tfc_kconv_lower(p->data_format, sizeof p->data_format, o->data_format, "channels_last");
    return &p->base;
}

tfc_layer *tfc_layers_global_average_pooling1d_new(const tfc_global_pooling1d_opts *o) {
    return g1_new(&global_average_pooling1d_class, "Mean", o);
}

tfc_layer *tfc_layers_global_max_pooling1d_new(const tfc_global_pooling1d_opts *o) {
    return g1_new(&global_max_pooling1d_class, "Max", o);
}

static tfc_layer *g1_from_config(const cJSON *cfg, bool max, const char *cls, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_global_pooling1d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    if (!tfc_kconv_json_data_format(cfg, &o.data_format, st) ||
        !tfc_json_get_bool(cfg, "keepdims", &o.keepdims, NULL, st))
        return NULL;
    tfc_layer *l = max ? tfc_layers_global_max_pooling1d_new(&o) : tfc_layers_global_average_pooling1d_new(&o);
    if (!l) tfc_status_oom(st, cls, sizeof(global_pooling1d));
    return l;
}

tfc_layer *tfc_keras_from_config_global_average_pooling1d(const cJSON *cfg, tfc_status *st) {
    return g1_from_config(cfg, false, "GlobalAveragePooling1D", st);
}

tfc_layer *tfc_keras_from_config_global_max_pooling1d(const cJSON *cfg, tfc_status *st) {
    return g1_from_config(cfg, true, "GlobalMaxPooling1D", st);
}
