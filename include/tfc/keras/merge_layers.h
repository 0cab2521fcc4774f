/* tfc — Keras elementwise merge layers beyond Add and Multiply (layers.h): Subtract, Maximum, Minimum, Average. */
#ifndef TFC_KERAS_MERGE_LAYERS_H
#define TFC_KERAS_MERGE_LAYERS_H

#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.keras.layers.Subtract / Maximum / Minimum / Average: inputs[0] - inputs[1] (Subtract, exactly 2 inputs), the
 * elementwise maximum / minimum, or the mean (sum / count) of 2 or more inputs of one dtype, broadcasting as Add
 * (layers.h; tfc_merge_opts' axis is unused). A new floating layer (release with tfc_layer_unref unless a model
 * takes it), NULL only when out of memory. INVALID_ARGUMENT at build as Add; Subtract also for a count other than
 * 2 ("A `Subtract` layer should be called on exactly 2 inputs"). */
TFC_API tfc_layer *tfc_layers_subtract_new(const tfc_merge_opts *o);
TFC_API tfc_layer *tfc_layers_maximum_new(const tfc_merge_opts *o);
TFC_API tfc_layer *tfc_layers_minimum_new(const tfc_merge_opts *o);
TFC_API tfc_layer *tfc_layers_average_new(const tfc_merge_opts *o);
#define tfc_layers_subtract(...) tfc_layers_subtract_new(&(tfc_merge_opts){__VA_ARGS__})
#define tfc_layers_maximum(...) tfc_layers_maximum_new(&(tfc_merge_opts){__VA_ARGS__})
#define tfc_layers_minimum(...) tfc_layers_minimum_new(&(tfc_merge_opts){__VA_ARGS__})
#define tfc_layers_average(...) tfc_layers_average_new(&(tfc_merge_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
