/* tf.keras.layers.MaxPooling2D: the maximum over pool_size windows (MaxPool), [batch, h, w, c] ->
 * [batch, out_h, out_w, c] (channels_first: [batch, c, h, w]); padding cells never win. */
#include "keras/layers/pooling2d.h"

static const tfc_layer_class max_pooling2d_class = {
    .class_name = "MaxPooling2D",
    .size = sizeof(tfc_pooling2d),
    .build = tfc_pooling2d_build,
    .compute_output_shape = tfc_pooling2d_output_shape,
    .call = tfc_pooling2d_call,
    .get_config = tfc_pooling2d_get_config,
};

tfc_layer *tfc_layers_max_pooling2d_new(const tfc_pooling2d_opts *o) {
    return tfc_pooling2d_new(&max_pooling2d_class, "MaxPool", o);
}

tfc_layer *tfc_keras_from_config_max_pooling2d(const cJSON *cfg, tfc_status *st) {
    return tfc_pooling2d_from_config(cfg, tfc_layers_max_pooling2d_new, "MaxPooling2D", st);
}
