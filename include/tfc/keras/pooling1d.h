/* tfc — Keras 1-D pooling layers: MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D, GlobalMaxPooling1D. */
#ifndef TFC_KERAS_POOLING1D_H
#define TFC_KERAS_POOLING1D_H

#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t pool_size;       /* 0 = 2 */
    int64_t strides;         /* 0 = pool_size (Keras's strides=None) */
    const char *padding;     /* NULL = "valid"; "same" */
    const char *data_format; /* NULL = "channels_last" ([batch, steps, c]); "channels_first" ([batch, c, steps]) */
} tfc_pooling1d_opts;
/* tf.keras.layers.MaxPooling1D / AveragePooling1D(pool_size, strides, padding, data_format): [batch, steps, c] ->
 * [batch, new_steps, c], computed as Keras does: MaxPool / AvgPool with a (pool_size, 1) window over the input with
 * a unit dim added after the steps. Float dtypes. A new floating layer (release with tfc_layer_unref unless a model
 * takes it), NULL only when out of memory. INVALID_ARGUMENT at build: pool_size or strides <= 0, a bad padding or
 * data_format, an input that is not rank 3, an input too short for a "valid" window. */
TFC_API tfc_layer *tfc_layers_max_pooling1d_new(const tfc_pooling1d_opts *o);
TFC_API tfc_layer *tfc_layers_average_pooling1d_new(const tfc_pooling1d_opts *o);
#define tfc_layers_max_pooling1d(...) tfc_layers_max_pooling1d_new(&(tfc_pooling1d_opts){__VA_ARGS__})
#define tfc_layers_average_pooling1d(...) tfc_layers_average_pooling1d_new(&(tfc_pooling1d_opts){__VA_ARGS__})

typedef struct { TFC_LAYER_COMMON_OPTS; const char *data_format; bool keepdims; } tfc_global_pooling1d_opts;
/* tf.keras.layers.GlobalAveragePooling1D / GlobalMaxPooling1D(data_format, keepdims): the mean / maximum over the
 * steps, [batch, steps, c] -> [batch, c] (keepdims: [batch, 1, c]; channels_first: [batch, c] / [batch, c, 1]).
 * A new floating layer, NULL only when out of memory. INVALID_ARGUMENT at build: an input that is not rank 3, a bad
 * data_format, zero steps ("Incorrect input shape"). */
TFC_API tfc_layer *tfc_layers_global_average_pooling1d_new(const tfc_global_pooling1d_opts *o);
TFC_API tfc_layer *tfc_layers_global_max_pooling1d_new(const tfc_global_pooling1d_opts *o);
#define tfc_layers_global_average_pooling1d(...) tfc_layers_global_average_pooling1d_new(&(tfc_global_pooling1d_opts){__VA_ARGS__})
#define tfc_layers_global_max_pooling1d(...) tfc_layers_global_max_pooling1d_new(&(tfc_global_pooling1d_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
