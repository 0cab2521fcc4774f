/* tf.keras.layers.LeakyReLU: x for x >= 0, alpha * x otherwise (alpha 0.3 by default, Keras's). */
#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    double alpha; /* float32, as Keras's cast_to_floatx */
} leaky_relu;

static bool lrelu_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static bool lrelu_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       bool training, tfc_status *st) {
    tfc_attr a = TFC_ATTR_F("alpha", ((leaky_relu *)l)->alpha);
    return (out[0] = tfc_emit(ctx, "LeakyRelu", &in[0], 1, &a, 1, st)) != NULL;
}

static bool lrelu_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    return tfc_json_add_f32(cfg, "alpha", ((const leaky_relu *)l)->alpha);
}

static const tfc_layer_class leaky_relu_class = {
    .class_name = "LeakyReLU",
    .size = sizeof(leaky_relu),
    .build = lrelu_build,
    .compute_output_shape = tfc_keras_same_shape,
    .call = lrelu_call,
    .get_config = lrelu_get_config,
};

tfc_layer *tfc_layers_leaky_relu_new(const tfc_leaky_relu_layer_opts *o) {
    leaky_relu *r = TFC_LAYER_NEW(leaky_relu, &leaky_relu_class, o);
    if (!r) return NULL;
    r->alpha = (float)(o->has_alpha || o->alpha != 0 ? o->alpha : 0.3);
    return &r->base;
}

tfc_layer *tfc_keras_from_config_leaky_relu(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_leaky_relu_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    /* Keras 3 calls it negative_slope */
    if (!tfc_json_get_f64(cfg, "negative_slope", &o.alpha, &o.has_alpha, st)) return NULL;
    bool has = false;
    if (!tfc_json_get_f64(cfg, "alpha", &o.alpha, &has, st)) return NULL;
    o.has_alpha |= has;
    tfc_layer *l = tfc_layers_leaky_relu_new(&o);
    if (!l) tfc_status_oom(st, "LeakyReLU", sizeof(leaky_relu));
    return l;
}
