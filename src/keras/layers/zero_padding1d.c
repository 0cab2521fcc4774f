/* tf.keras.layers.ZeroPadding1D: zeros before and after the steps, [batch, n, c] -> [batch, l + n + r, c], with
 * the Pad op (backend.temporal_padding). */
#include <stdint.h>
#include <string.h>

#include "keras/layers/conv_utils.h"
#include "tfc/keras/reshaping.h"
#include "tfc/ops/array.h"

typedef struct {
    tfc_layer base;
    int64_t padding[2];
} zero_padding1d;

static bool zp_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    zero_padding1d *z = (zero_padding1d *)l;
    if (!tfc_keras_expect_inputs(l, n_in, 1, st)) return false;
    if (z->padding[0] < 0 || z->padding[1] < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "The `padding` argument must be a tuple of 2 integers. Received: (%lld, %lld) including "
                              "%lld that does not satisfy the requirement `>= 0`. (layer \"%s\")",
                              (long long)z->padding[0], (long long)z->padding[1],
                              (long long)(z->padding[0] < 0 ? z->padding[0] : z->padding[1]), l->name);
    const tfc_shape *s = &in[0];
    if (!tfc_kconv_check_rank(l, s, 3, false, st)) return false;
    out[0] = *s;
    int64_t d = s->dims[1];
    if (d >= 0) {
        if (z->padding[0] > INT64_MAX - d || z->padding[1] > INT64_MAX - d - z->padding[0])
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Layer \"%s\": padded length of %s overflows", l->name,
                                  TFC_KSHP(s));
        out[0].dims[1] = d + z->padding[0] + z->padding[1];
    }
    *n_out = 1;
    return true;
}

static bool zp_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = 3};
    l->has_input_spec = true;
    return true;
}

static bool zp_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    bool training, tfc_status *st) {
    zero_padding1d *z = (zero_padding1d *)l;
    tfc_shape os;
    if (!zp_output_shape(l, tfc_tensor_shape(in[0]), 1, &os, &(int){0}, st)) return false;
    int64_t pads[6] = {0, 0, z->padding[0], z->padding[1], 0, 0};
    return (out[0] = tfc_pad(ctx, in[0], pads, NULL, 0, st)) != NULL;
}

static bool zp_get_config(const tfc_layer *l, void *vcfg, tfc_status *st) {
    const zero_padding1d *z = (const zero_padding1d *)l;
    cJSON *p = tfc_json_int_array(z->padding, 2);
    if (!p || !cJSON_AddItemToObject((cJSON *)vcfg, "padding", p)) {
        cJSON_Delete(p);
        return false;
    }
    return true;
}

static const tfc_layer_class zero_padding1d_class = {
    .class_name = "ZeroPadding1D",
    .size = sizeof(zero_padding1d),
    .build = zp_build,
    .compute_output_shape = zp_output_shape,
    .call = zp_call,
    .get_config = zp_get_config,
};

tfc_layer *tfc_layers_zero_padding1d_new(const tfc_zero_padding1d_opts *o) {
    zero_padding1d *z = TFC_LAYER_NEW(zero_padding1d, &zero_padding1d_class, o);
    if (!z) return NULL;
    z->base.keeps_input_dtype = true;
    z->padding[0] = o->has_padding ? o->padding[0] : 1;
    z->padding[1] = o->has_padding ? o->padding[1] : 1;
    return &z->base;
}

tfc_layer *tfc_keras_from_config_zero_padding1d(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg cm;
    if (!tfc_json_get_common(cfg, &cm, st)) return NULL;
    tfc_zero_padding1d_opts o = {0};
    TFC_COMMON_TO_OPTS(cm, o);
    int64_t v[TFC_MAX_RANK];
    int n = 0;
    if (!tfc_json_get_i64_list(cfg, "padding", v, TFC_MAX_RANK, &n, &o.has_padding, st)) return NULL;
    if (o.has_padding) {
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(cfg, "padding"))) {
            o.padding[0] = o.padding[1] = v[0];
        } else if (n == 2) {
            o.padding[0] = v[0], o.padding[1] = v[1];
        } else {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "ZeroPadding1D: the `padding` argument must be a tuple of 2 integers; received %d values", n);
            return NULL;
        }
    }
    tfc_layer *l = tfc_layers_zero_padding1d_new(&o);
    if (!l) tfc_status_oom(st, "ZeroPadding1D", sizeof(zero_padding1d));
    return l;
}
