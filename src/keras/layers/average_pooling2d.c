/* tf.keras.layers.AveragePooling2D: the mean over pool_size windows (AvgPool); with "same" padding a window
 * averages only its real (non-padding) cells. */
#include "keras/layers/pooling2d.h"

static const tfc_layer_class average_pooling2d_class = {
    .class_name = "AveragePooling2D",
    .size = sizeof(tfc_pooling2d),
    .build = tfc_pooling2d_build,
    .compute_output_shape = tfc_pooling2d_output_shape,
    .call = tfc_pooling2d_call,
    .get_config = tfc_pooling2d_get_config,
};

tfc_layer *tfc_layers_average_pooling2d_new(const tfc_pooling2d_opts *o) {
    return tfc_pooling2d_new(&average_pooling2d_class, "AvgPool", o);
}

tfc_layer *tfc_keras_from_config_average_pooling2d(const cJSON *cfg, tfc_status *st) {
    return tfc_pooling2d_from_config(cfg, tfc_layers_average_pooling2d_new, "AveragePooling2D", st);
}
