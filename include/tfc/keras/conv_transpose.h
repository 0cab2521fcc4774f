/* tfc — Keras transposed convolutions (tf.keras.layers.Conv1DTranspose, Conv2DTranspose). */
#ifndef TFC_KERAS_CONV_TRANSPOSE_H
#define TFC_KERAS_CONV_TRANSPOSE_H

#include "tfc/keras/layers.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Arguments of both layers; pairs hold one value for Conv1DTranspose ({k} for Conv2DTranspose means {k, k}). */
typedef struct {
    TFC_LAYER_COMMON_OPTS;
    int64_t filters;
    int64_t kernel_size[2];
    int64_t strides[2];          /* 0 = 1 */
    const char *padding;         /* NULL = "valid"; "same" */
    int64_t output_padding[2];   /* used when has_output_padding (Keras's output_padding=None otherwise) */
    bool has_output_padding;
    const char *data_format;     /* NULL = "channels_last"; "channels_first" */
    int64_t dilation_rate[2];    /* 0 = 1 */
    const char *activation;      /* NULL = "linear" */
    tfc_flag use_bias;           /* default yes */
    const tfc_initializer *kernel_initializer, *bias_initializer; /* NULL = glorot_uniform, zeros */
    const tfc_regularizer *kernel_regularizer, *bias_regularizer, *activity_regularizer;
} tfc_conv_transpose_layer_opts;

/* tf.keras.layers.Conv2DTranspose(filters, kernel_size, strides, padding, output_padding, data_format,
 * dilation_rate, activation, use_bias, ...): [batch, h, w, in] -> [batch, out_h, out_w, filters] (channels_last),
 * activation(conv2d_transpose(x, kernel) + bias), computed as TensorFlow does with Conv2DBackpropInput (the gradient
 * of Conv2D with respect to its input). Each output length is Keras's deconv_output_length:
 *   no output_padding: valid: in * stride + max(k_eff - stride, 0); same: in * stride
 *   output_padding p:  (in - 1) * stride + k_eff - 2 * pad + p, pad = 0 (valid) or k_eff / 2 (same)
 * with k_eff = (k - 1) * dilation + 1. kernel "<layer>/kernel:0" [kh, kw, filters, in], bias [filters]. Float dtypes.
 * A new floating layer (release with tfc_layer_unref unless a model takes it), NULL only when out of memory.
 * INVALID_ARGUMENT at build: filters, kernel_size, strides or dilation_rate <= 0, strides > 1 with dilation_rate > 1,
 * unequal dilation rates, an output_padding < 0 or >= its stride ("Strides must be greater than output padding"),
 * a bad padding or data_format, an input that is not rank 4 or has an unknown channel dim, an unknown activation,
 * an output length that overflows or is not positive. */
TFC_API tfc_layer *tfc_layers_conv2d_transpose_new(const tfc_conv_transpose_layer_opts *o);
#define tfc_layers_conv2d_transpose(...) tfc_layers_conv2d_transpose_new(&(tfc_conv_transpose_layer_opts){__VA_ARGS__})

/* tf.keras.layers.Conv1DTranspose: as Conv2DTranspose over [batch, steps, in] -> [batch, new_steps, filters]
 * (channels_last), run as tf.nn.conv1d_transpose (Conv2DBackpropInput over [batch, 1, steps, in]); kernel
 * [kernel_size, filters, in]. Only the first entry of each pair is used. Errors as Conv2DTranspose, for rank 3. */
TFC_API tfc_layer *tfc_layers_conv1d_transpose_new(const tfc_conv_transpose_layer_opts *o);
#define tfc_layers_conv1d_transpose(...) tfc_layers_conv1d_transpose_new(&(tfc_conv_transpose_layer_opts){__VA_ARGS__})

#ifdef __cplusplus
}
#endif
#endif
