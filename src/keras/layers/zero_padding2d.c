/* tf.keras.layers.ZeroPadding2D: zeros around the spatial dims, [batch, h, w, c] ->
 * [batch, top + h + bottom, left + w + right, c] (channels_first: [batch, c, h', w']), with the Pad op. */
#include <stdint.h>
#include <string.h>

#include "keras/layers/conv_utils.h"

typedef struct {
    tfc_layer base;
    int64_t padding[2][2]; /* ((top, bottom), (left, right)) */
    char data_format[TFC_KCONV_STR];
} zero_padding2d;

static bool zp_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    zero_padding2d *z = (zero_padding2d *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st) || !tfc_kconv_check_data_format(l, z->data_format, st) ||
        !tfc_kconv_check_pair(l, "1st entry of padding", z->padding[0], 0, st) ||
        !tfc_kconv_check_pair(l, "2nd entry of padding", z->padding[1], 0, st))
        return false;
    const tfc_shape *s = &in[0];
    *n_out = 1;
    if (s->rank < 0) {
        out[0] = (tfc_shape){.rank = 4, .dims = {-1, -1, -1, -1}};
        return true;
    }
    if (!tfc_kconv_check_rank(l, s, 4, false, st)) return false;
    int h = !strcmp(z->data_format, "channels_first") ? 2 : 1;
    out[0] = *s;
    for (int i = 0; i < 2; i++) {
        int64_t d = s->dims[h + i];
        if (d >= 0 && (z->padding[i][0] > INT64_MAX - d || z->padding[i][1] > INT64_MAX - d - z->padding[i][0]))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": padded size of %s overflows", l->name,
                                  TFC_KSHP(s));
        out[0].dims[h + i] = d < 0 ? -1 : d + z->padding[i][0] + z->padding[i][1];
    }
    return true;
}

static bool zp_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = 4};
    l->has_input_spec = true;
    return true;
}

static bool zp_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    zero_padding2d *z = (zero_padding2d *)l;
    tfc_shape os;
    int no;
    if (!zp_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &no, st)) return false;
    int h = !strcmp(z->data_format, "channels_first") ? 2 : 1;
    int64_t pads[8] = {0};
    for (int i = 0; i < 2; i++) pads[2 * (h + i)] = z->padding[i][0], pads[2 * (h + i) + 1] = z->padding[i][1];
    tfc_tensor *p = tfc_tensor_from_data(TFC_INT64, (const int64_t[]){4, 2}, 2, pads, sizeof pads, st);
    if (!p) return false;
    out[0] = tfc_emit(ctx, "Pad", (tfc_tensor *[]){in[0], p}, 2, NULL, 0, st);
    tfc_tensor_unref(p);
    return out[0] != NULL;
}

static bool zp_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const zero_padding2d *z = (const zero_padding2d *)l;
    cJSON *cfg = vcfg, *pad = cJSON_CreateArray();
    for (int i = 0; pad && i < 2; i++) {
        cJSON *pair = tfc_json_int_array(z->padding[i], 2);
        if (!pair || !cJSON_AddItemToArray(pad, pair)) {
            cJSON_Delete(pair);
            cJSON_Delete(pad);
            pad = NULL;
        }
    }
    if (!pad || !cJSON_AddItemToObject(cfg, "padding", pad)) {
        cJSON_Delete(pad);
        return false;
    }
    return cJSON_AddStringToObject(cfg, "data_format", z->data_format) != NULL;
}

static const tfc_layer_class zero_padding2d_class = {
    .class_name = "ZeroPadding2D",
    .size = sizeof(zero_padding2d),
    .build = zp_build,
    .compute_output_shape = zp_output_shape,
    .call = zp_call,
    .get_config = zp_get_config,
};

tfc_layer *tfc_layers_zero_padding2d_new(const tfc_zero_padding2d_opts *o) {
    zero_padding2d *z = TFC_LAYER_NEW(zero_padding2d, &zero_padding2d_class, o);
    if (!z) return NULL;
    z->base.keeps_input_dtype = true;
    bool given = o->has_padding;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) given |= o->padding[i][j] != 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) z->padding[i][j] = given ? o->padding[i][j] : 1;
    tfc_kconv_lower(z->data_format, sizeof z->data_format, o->data_format, "channels_last");
    return &z->base;
}

/* One entry of Keras's padding argument: an int (symmetric) or a pair. */
static bool pad_entry(const cJSON *e, int64_t out[2], tfc_status *st) {
    if (cJSON_IsNumber(e) && e->valuedouble == (double)(int64_t)e->valuedouble) {
        out[0] = out[1] = (int64_t)e->valuedouble;
        return true;
    }
    if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 2) {
        for (int i = 0; i < 2; i++) {
            const cJSON *v = cJSON_GetArrayItem(e, i);
            if (!cJSON_IsNumber(v) || v->valuedouble != (double)(int64_t)v->valuedouble) goto bad;
            out[i] = (int64_t)v->valuedouble;
        }
        return true;
    }
bad:
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "`padding` should be either an int, a tuple of 2 ints (symmetric_height_pad, "
                          "symmetric_width_pad), or a tuple of 2 tuples of 2 ints ((top_pad, bottom_pad), (left_pad, "
                          "right_pad)). (config key \"padding\")");
}

tfc_layer *tfc_keras_from_config_zero_padding2d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_zero_padding2d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    if (!tfc_kconv_json_data_format(cfg, &o.data_format, st)) return NULL;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(cfg, "padding");
    if (p && !cJSON_IsNull(p)) {
        o.has_padding = true;
        if (cJSON_IsNumber(p)) {
            if (!pad_entry(p, o.padding[0], st)) return NULL;
            o.padding[1][0] = o.padding[1][1] = o.padding[0][0];
        } else if (cJSON_IsArray(p) && cJSON_GetArraySize(p) == 2) {
            if (!pad_entry(cJSON_GetArrayItem(p, 0), o.padding[0], st) ||
                !pad_entry(cJSON_GetArrayItem(p, 1), o.padding[1], st))
                return NULL;
        } else {
            pad_entry(NULL, NULL, st);
            return NULL;
        }
        for (int i = 0; i < 4; i++)
            if (o.padding[i / 2][i % 2] < 0) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "ZeroPadding2D: padding must be non-negative. Received: ((%lld, %lld), (%lld, %lld))",
                               (long long)o.padding[0][0], (long long)o.padding[0][1], (long long)o.padding[1][0],
                               (long long)o.padding[1][1]);
                return NULL;
            }
    }
    tfc_layer *l = tfc_layers_zero_padding2d_new(&o);
    if (!l) tfc_status_oom(st, "ZeroPadding2D", sizeof(zero_padding2d));
    return l;
}
