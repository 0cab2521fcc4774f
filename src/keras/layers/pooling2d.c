/* The shared part of the 2-D pooling layers: Keras's Pooling2D (MaxPool / AvgPool windows over [batch, h, w, c]
 * or [batch, c, h, w]) and GlobalPooling2D (Mean / Max over the spatial axes). */
#include <string.h>

#include "keras/layers/pooling2d.h"
#include "tfc/ops/conv.h"

/* ---- Pooling2D ---- */

tfc_layer *tfc_pooling2d_new(const tfc_layer_class *cls, const char *op, const tfc_pooling2d_opts *o) {
    tfc_pooling2d *p = TFC_LAYER_NEW(tfc_pooling2d, cls, o);
    if (!p) return NULL;
    p->base.keeps_input_dtype = true;
    p->op = op;
    tfc_kconv_pair(p->pool_size, o->pool_size, 2);
    /* strides=None means pool_size */
    if (o->strides[0] || o->strides[1]) tfc_kconv_pair(p->strides, o->strides, 1);
    else memcpy(p->strides, p->pool_size, sizeof p->strides);
    tfc_kconv_lower(p->padding, sizeof p->padding, o->padding, "valid");
    tfc_kconv_lower(p->data_format, sizeof p->data_format, o->data_format, "channels_last");
    return &p->base;
}

bool tfc_pooling2d_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                tfc_status *st) {
    tfc_pooling2d *p = (tfc_pooling2d *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !tfc_kconv_check_pair(l, "pool_size", p->pool_size, 1, st) ||
        !tfc_kconv_check_pair(l, "strides", p->strides, 1, st) || !tfc_kconv_check_padding(l, p->padding, st) ||
        !tfc_kconv_check_data_format(l, p->data_format, st))
        return false;
    const tfc_shape *s = &in[0];
    *n_out = 1;
    if (s->rank < 0) {
        out[0] = (tfc_shape){.rank = 4, .dims = {-1, -1, -1, -1}};
        return true;
    }
    if (!tfc_kconv_check_rank(l, s, 4, false, st)) return false;
    int h = !strcmp(p->data_format, "channels_first") ? 2 : 1;
    static const int64_t one[2] = {1, 1};
    int64_t hw[2];
    if (!tfc_kconv_spatial(l, s, h, p->pool_size, p->strides, one, !strcmp(p->padding, "same"), hw, st)) return false;
    out[0] = *s;
    out[0].dims[h] = hw[0];
    out[0].dims[h + 1] = hw[1];
    return true;
}

bool tfc_pooling2d_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = 4}; /* InputSpec(ndim=4) */
    l->has_input_spec = true;
    return true;
}

bool tfc_pooling2d_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                        bool training, tfc_status *st) {
    tfc_pooling2d *p = (tfc_pooling2d *)l;
    tfc_shape os;
    int no;
    if (!tfc_pooling2d_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &no, st)) return false;
    bool cf = !strcmp(p->data_format, "channels_first");
    int h = cf ? 2 : 1;
    tfc_pool_attrs a = {.ksize = {1, 1, 1, 1}, .strides = {1, 1, 1, 1},
                        .padding = !strcmp(p->padding, "same") ? "SAME" : "VALID", .data_format = cf ? "NCHW" : "NHWC"};
    a.ksize[h] = p->pool_size[0], a.ksize[h + 1] = p->pool_size[1];
    a.strides[h] = p->strides[0], a.strides[h + 1] = p->strides[1];
    out[0] = !strcmp(p->op, "MaxPool") ? tfc_max_pool(ctx, in[0], &a, st) : tfc_avg_pool(ctx, in[0], &a, st);
    return out[0] != NULL;
}

bool tfc_pooling2d_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const tfc_pooling2d *p = (const tfc_pooling2d *)l;
    cJSON *cfg = vcfg;
    cJSON *ps = tfc_json_int_array(p->pool_size, 2), *ss = tfc_json_int_array(p->strides, 2);
    bool ok = ps && cJSON_AddItemToObject(cfg, "pool_size", ps);
    if (!ok) cJSON_Delete(ps);
    ok = ok && cJSON_AddStringToObject(cfg, "padding", p->padding) && ss && cJSON_AddItemToObject(cfg, "strides", ss);
    if (!ok) cJSON_Delete(ss);
    return ok && cJSON_AddStringToObject(cfg, "data_format", p->data_format);
}

tfc_layer *tfc_pooling2d_from_config(const cJSON *cfg, tfc_layer *(*ctor)(const tfc_pooling2d_opts *),
                                     const char *class_name, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_pooling2d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    bool has_pool, has_strides;
    if (!tfc_kconv_json_pair(cfg, "pool_size", o.pool_size, &has_pool, st) ||
        !tfc_kconv_json_pair(cfg, "strides", o.strides, &has_strides, st) ||
        !tfc_kconv_json_padding(cfg, &o.padding, st) || !tfc_kconv_json_data_format(cfg, &o.data_format, st))
        return NULL;
    if ((has_pool && (o.pool_size[0] <= 0 || o.pool_size[1] <= 0)) ||
        (has_strides && (o.strides[0] <= 0 || o.strides[1] <= 0))) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "%s: pool_size and strides must be positive (pool_size=(%lld, %lld), strides=(%lld, %lld))",
                       class_name, (long long)o.pool_size[0], (long long)o.pool_size[1], (long long)o.strides[0],
                       (long long)o.strides[1]);
        return NULL;
    }
    tfc_layer *l = ctor(&o);
    if (!l) tfc_status_oom(st, class_name, sizeof(tfc_pooling2d));
    return l;
}

/* ---- GlobalPooling2D ---- */

tfc_layer *tfc_global_pooling2d_new(const tfc_layer_class *cls, const char *op, const tfc_global_pooling2d_opts *o) {
    tfc_global_pooling2d *p = TFC_LAYER_NEW(tfc_global_pooling2d, cls, o);
    if (!p) return NULL;
    p->base.keeps_input_dtype = true;
    p->op = op;
    p->keepdims = o->keepdims;
    tfc_kconv_lower(p->data_format, sizeof p->data_format, o->data_format, "channels_last");
    return &p->base;
}

bool tfc_global_pooling2d_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                                       tfc_status *st) {
    tfc_global_pooling2d *p = (tfc_global_pooling2d *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !tfc_kconv_check_data_format(l, p->data_format, st)) return false;
    const tfc_shape *s = &in[0];
    *n_out = 1;
    bool cf = !strcmp(p->data_format, "channels_first");
    if (s->rank < 0) {
        out[0] = p->keepdims ? (tfc_shape){.rank = 4, .dims = {-1, cf ? -1 : 1, 1, cf ? 1 : -1}}
                             : (tfc_shape){.rank = 2, .dims = {-1, -1}};
        return true;
    }
    if (!tfc_kconv_check_rank(l, s, 4, false, st)) return false;
    int h = cf ? 2 : 1, c = cf ? 1 : 3;
    for (int a = h; a < h + 2; a++)
        if (s->dims[a] == 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "Incorrect input shape %s with dimension 0 at reduction axis %d. (layer \"%s\")",
                                  TFC_KSHP(s), a, l->name);
    if (p->keepdims) {
        out[0] = *s;
        out[0].dims[h] = out[0].dims[h + 1] = 1;
    } else {
        out[0] = (tfc_shape){.rank = 2, .dims = {s->dims[0], s->dims[c]}};
    }
    return true;
}

bool tfc_global_pooling2d_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = 4};
    l->has_input_spec = true;
    return true;
}

bool tfc_global_pooling2d_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                               int n_out, bool training, tfc_status *st) {
    tfc_global_pooling2d *p = (tfc_global_pooling2d *)l;
    tfc_shape os;
    int no;
    if (!tfc_global_pooling2d_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &no, st)) return false;
    int32_t axes[2] = {1, 2};
    if (!strcmp(p->data_format, "channels_first")) axes[0] = 2, axes[1] = 3;
    tfc_tensor *ax = tfc_vec_i32(axes, 2, st);
    if (!ax) return false;
    tfc_attr keep = TFC_ATTR_B("keep_dims", p->keepdims);
    out[0] = tfc_emit(ctx, p->op, (tfc_tensor *[]){in[0], ax}, 2, &keep, 1, st);
    tfc_tensor_unref(ax);
    return out[0] != NULL;
}

bool tfc_global_pooling2d_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    const tfc_global_pooling2d *p = (const tfc_global_pooling2d *)l;
    return cJSON_AddStringToObject(cfg, "data_format", p->data_format) &&
           cJSON_AddBoolToObject(cfg, "keepdims", p->keepdims);
}

tfc_layer *tfc_global_pooling2d_from_config(const cJSON *cfg, tfc_layer *(*ctor)(const tfc_global_pooling2d_opts *),
                                            const char *class_name, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_global_pooling2d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    if (!tfc_kconv_json_data_format(cfg, &o.data_format, st) ||
        !tfc_json_get_bool(cfg, "keepdims", &o.keepdims, NULL, st))
        return NULL;
    tfc_layer *l = ctor(&o);
    if (!l) tfc_status_oom(st, class_name, sizeof(tfc_global_pooling2d));
    return l;
}
