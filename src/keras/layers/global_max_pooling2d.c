/* tf.keras.layers.GlobalMaxPooling2D: the maximum over height and width, [batch, h, w, c] -> [batch, c]
 * (keepdims: [batch, 1, 1, c]; channels_first: [batch, c] / [batch, c, 1, 1]). */
#include "keras/layers/pooling2d.h"

static const tfc_layer_class global_max_pooling2d_class = {
    .class_name = "GlobalMaxPooling2D",
    .size = sizeof(tfc_global_pooling2d),
    .build = tfc_global_pooling2d_build,
    .compute_output_shape = tfc_global_pooling2d_output_shape,
    .call = tfc_global_pooling2d_call,
    .get_config = tfc_global_pooling2d_get_config,
};

tfc_layer *tfc_layers_global_max_pooling2d_new(const tfc_global_pooling2d_opts *o) {
    return tfc_global_pooling2d_new(&global_max_pooling2d_class, "Max", o);
}

tfc_layer *tfc_keras_from_config_global_max_pooling2d(const cJSON *cfg, tfc_status *st) {
    return tfc_global_pooling2d_from_config(cfg, tfc_layers_global_max_pooling2d_new, "GlobalMaxPooling2D", st);
}
