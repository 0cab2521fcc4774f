/* tf.keras.layers.Multiply: elementwise product of its inputs (broadcasting as Keras's merge layers). */
#include "keras/layers/merge.h"

static bool multiply_call(tfc_layer *l, tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    return tfc_merge_elementwise_call(l, ctx, "Mul", in, n_in, out, st);
}

static const tfc_layer_class multiply_class = {
    .class_name = "Multiply",
    .size = sizeof(tfc_merge),
    .build = tfc_merge_build,
    .compute_output_shape = tfc_merge_elementwise_shape,
    .call = multiply_call,
};

tfc_layer *tfc_layers_multiply_new(const tfc_merge_opts *o) {
    tfc_merge *m = TFC_LAYER_NEW(tfc_merge, &multiply_class, o);
    if (!m) return NULL;
    m->base.keeps_input_dtype = true;
    return &m->base;
}

tfc_layer *tfc_keras_from_config_multiply(const cJSON *cfg, tfc_status *st) {
    tfc_merge_opts o;
    if (!tfc_merge_opts_from_config(cfg, &o, st)) return NULL;
    tfc_layer *l = tfc_layers_multiply_new(&o);
    if (!l) tfc_status_oom(st, "Multiply", sizeof(tfc_merge));
    return l;
}
