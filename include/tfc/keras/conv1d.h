/* tfc — Keras 1-D convolution (tf.keras.layers.Conv1D). */
#ifndef TFC_KERAS_CONV1D_H
#define TFC_KERAS_CONV1D_H

#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t filters, kernel_size;
    int64_t strides;           /* 0 = 1 */
    const char *padding;       /* NULL = "valid"; "same", "causal" (left padding of (kernel_size - 1) * dilation) */
    const char *data_format;   /* NULL = "channels_last" ([batch, steps, channels]); "channels_first" */
    int64_t dilation_rate;     /* 0 = 1 */
    int64_t groups;            /* 0 = 1 */
    const char *activation;
    tfc_flag use_bias;
    const tfc_initializer *kernel_initializer, *bias_initializer; /* NULL = glorot_uniform, zeros */
    const tfc_regularizer *kernel_regularizer, *bias_regularizer, *activity_regularizer;
} tfc_conv1d_layer_opts;

/* tf.keras.layers.Conv1D(filters, kernel_size, strides, padding, data_format, dilation_rate, groups, activation,
 * use_bias, ...): [batch, steps, in] -> [batch, new_steps, filters] (channels_last), computed as Conv2D over
 * [batch, 1, steps, in] as TensorFlow's conv1d. kernel "<layer>/kernel:0" [kernel_size, in / groups, filters], bias
 * [filters]. Float dtypes. A new floating layer (release with tfc_layer_unref unless a model takes it), NULL only
 * when out of memory. INVALID_ARGUMENT at build: filters, kernel_size, strides, dilation_rate or groups <= 0, groups
 * not dividing the channels or filters, strides > 1 with dilation_rate > 1, a bad padding or data_format, an input
 * that is not rank 3 or too short for the kernel, an unknown activation. */
TFC_API tfc_layer *tfc_layers_conv1d_new(const tfc_conv1d_layer_opts *o);
#define tfc_layers_conv1d(...) tfc_layers_conv1d_new(&(tfc_conv1d_layer_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
