/* tf.keras.layers.Activation: applies a named activation (see tfc_activation_apply). */
#include "keras/keras_internal.h"

typedef struct {
    tfc_layer base;
    char *activation;
} activation;

static bool act_output_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out,
                             tfc_status *st) {
    return tfc_layer_check_activation(l, ((activation *)l)->activation, st) &&
           tfc_keras_same_shape(l, in, n_in, out, n_out, st);
}

static bool act_build(tfc_layer *l, tfc_ctx *ctx, const tfc_shape *in, int n_in, tfc_status *st) {
    l->input_spec[0] = (tfc_input_spec){.ndim = -1};
    l->has_input_spec = true;
    return true;
}

static bool act_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    return (out[0] = tfc_activation_apply(ctx, ((activation *)l)->activation, in[0], st)) != NULL;
}

static bool act_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    return cJSON_AddStringToObject(cfg, "activation", tfc_activation_config_name(((const activation *)l)->activation)) != NULL;
}

static void act_destroy(tfc_layer *l) { tfc_free(((activation *)l)->activation); }

static const tfc_layer_class activation_class = {
    .class_name = "Activation",
    .size = sizeof(activation),
    .build = act_build,
    .compute_output_shape = act_output_shape,
    .call = act_call,
    .get_config = act_get_config,
    .destroy = act_destroy,
};

tfc_layer *tfc_layers_activation_new(const tfc_activation_layer_opts *o) {
    activation *a = TFC_LAYER_NEW(activation, &activation_class, o);
    if (!a) return NULL;
    if (!(a->activation = tfc_strdup(o->activation && *o->activation ? o->activation : "linear"))) {
        tfc_layer_unref(&a->base);
        return NULL;
    }
    return &a->base;
}

tfc_layer *tfc_keras_from_config_activation(const cJSON *cfg, tfc_status *st) {
    tfc_layer_common_cfg c;
    if (!tfc_json_get_common(cfg, &c, st)) return NULL;
    tfc_activation_layer_opts o = {0};
    TFC_COMMON_TO_OPTS(c, o);
    if (!tfc_json_get_str(cfg, "activation", &o.activation, NULL, st)) return NULL;
    tfc_layer *l = tfc_layers_activation_new(&o);
    if (!l) tfc_status_oom(st, "Activation", sizeof(activation));
    return l;
}
