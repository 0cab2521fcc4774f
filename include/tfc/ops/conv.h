/* tfc — typed wrappers for the convolution and pooling ops (TensorFlow's Conv2D, Conv2DBackpropInput,
 * Conv2DBackpropFilter, DepthwiseConv2dNative and its backprops, MaxPool, MaxPoolGrad, AvgPool,
 * AvgPoolGrad). Each wrapper runs the op through tfc_execute, so it is recorded on active tapes and
 * differentiable (to any order).
 *
 * Common contract:
 *   - Data tensors are 4-D, [batch, height, width, channels] ("NHWC", the default) or
 *     [batch, channels, height, width] ("NCHW"); filters are always [filter_height, filter_width,
 *     in_channels, out_channels] (depthwise: [.., in_channels, channel_multiplier]).
 *   - dtypes: float32, float64, float16, bfloat16 (Conv2D and Conv2DBackpropInput also int32; MaxPool also
 *     int8, uint8, int16, int32, int64). All inputs share one dtype except the int32 size vectors.
 *   - Returns a new tensor owned by the caller (or by the current scope), or NULL with st set:
 *       INVALID_ARGUMENT  ranks, channel counts, strides/dilations/ksize, paddings or sizes are inconsistent
 *                         (message names the op and the offending values); output size overflow
 *       UNIMPLEMENTED     strides/dilations/windows in the batch or depth dimension; no kernel for the dtype
 *       RESOURCE_EXHAUSTED out of memory
 *   - Inputs are borrowed (never released by the wrapper). */
#ifndef TFC_OPS_CONV_H
#define TFC_OPS_CONV_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Attributes of the convolution ops. Zero-initialised fields take TensorFlow's defaults, so
 * `&(tfc_conv2d_attrs){.strides = {1, 2, 2, 1}, .padding = "SAME"}` is a complete description; a NULL
 * attrs pointer means strides 1 and "VALID". */
typedef struct tfc_conv2d_attrs {
    int64_t strides[4];           /* per data_format dimension; all zero = {1, 1, 1, 1} */
    const char *padding;          /* "SAME", "VALID" or "EXPLICIT"; NULL = "VALID" */
    int64_t explicit_paddings[8]; /* (before, after) per dimension, used with "EXPLICIT" */
    const char *data_format;      /* "NHWC" or "NCHW"; NULL = "NHWC" */
    int64_t dilations[4];         /* all zero = {1, 1, 1, 1} */
} tfc_conv2d_attrs;

/* Computes 2-D convolution, as TensorFlow's Conv2D op (tf.nn.conv2d).
 * input:  [batch, in_height, in_width, in_channels] (NHWC) or [batch, in_channels, in_height, in_width] (NCHW)
 * filter: [filter_height, filter_width, in_channels / groups, out_channels]; in_channels may be a multiple
 *         of the filter's (grouped convolution).
 * Output: [batch, out_height, out_width, out_channels] in the input's layout, with
 *         out = ceil(in / stride) for "SAME" and ceil((in - (filter - 1) * dilation) / stride) for "VALID". */
TFC_API tfc_tensor *tfc_conv2d(tfc_ctx *ctx, const tfc_tensor *input, const tfc_tensor *filter,
                               const tfc_conv2d_attrs *attrs, tfc_status *st);
/* Gradient of Conv2D with respect to its input (Conv2DBackpropInput): input_sizes is the 4-D input shape in
 * data_format order; out_backprop has Conv2D's output shape. Returns a tensor of input_sizes. */
TFC_API tfc_tensor *tfc_conv2d_backprop_input(tfc_ctx *ctx, const int64_t input_sizes[4], const tfc_tensor *filter,
                                              const tfc_tensor *out_backprop, const tfc_conv2d_attrs *attrs,
                                              tfc_status *st);
/* Gradient of Conv2D with respect to its filter (Conv2DBackpropFilter). Returns a tensor of filter_sizes. */
TFC_API tfc_tensor *tfc_conv2d_backprop_filter(tfc_ctx *ctx, const tfc_tensor *input, const int64_t filter_sizes[4],
                                               const tfc_tensor *out_backprop, const tfc_conv2d_attrs *attrs,
                                               tfc_status *st);

/* Depthwise 2-D convolution, as DepthwiseConv2dNative (tf.nn.depthwise_conv2d without the pointwise step).
 * filter: [filter_height, filter_width, in_channels, channel_multiplier]; output channel c * multiplier + m is
 * input channel c convolved with filter[:, :, c, m]. tfc also accepts dilations and unequal strides, which
 * TensorFlow's CPU kernel rejects. */
TFC_API tfc_tensor *tfc_depthwise_conv2d(tfc_ctx *ctx, const tfc_tensor *input, const tfc_tensor *filter,
                                         const tfc_conv2d_attrs *attrs, tfc_status *st);
TFC_API tfc_tensor *tfc_depthwise_conv2d_backprop_input(tfc_ctx *ctx, const int64_t input_sizes[4],
                                                        const tfc_tensor *filter, const tfc_tensor *out_backprop,
                                                        const tfc_conv2d_attrs *attrs, tfc_status *st);
TFC_API tfc_tensor *tfc_depthwise_conv2d_backprop_filter(tfc_ctx *ctx, const tfc_tensor *input,
                                                         const int64_t filter_sizes[4], const tfc_tensor *out_backprop,
                                                         const tfc_conv2d_attrs *attrs, tfc_status *st);

/* Attributes of the pooling ops; zero fields take defaults as for tfc_conv2d_attrs. NULL attrs is invalid
 * (ksize has no default). */
typedef struct tfc_pool_attrs {
    int64_t ksize[4];             /* window per data_format dimension, e.g. {1, 2, 2, 1}; required */
    int64_t strides[4];           /* all zero = ksize */
    const char *padding;          /* "SAME" or "VALID" ("EXPLICIT" for max pooling); NULL = "VALID" */
    int64_t explicit_paddings[8]; /* max pooling with "EXPLICIT" only */
    const char *data_format;      /* NULL = "NHWC" */
} tfc_pool_attrs;

/* Max pooling (MaxPool): each output is the maximum of its window; padding cells never win. */
TFC_API tfc_tensor *tfc_max_pool(tfc_ctx *ctx, const tfc_tensor *input, const tfc_pool_attrs *attrs, tfc_status *st);
/* Average pooling (AvgPool): each output is the mean of the window's real (non-padding) cells. */
TFC_API tfc_tensor *tfc_avg_pool(tfc_ctx *ctx, const tfc_tensor *value, const tfc_pool_attrs *attrs, tfc_status *st);
/* MaxPoolGrad: routes grad (shaped like MaxPool's output) to the first maximum of each window of orig_input;
 * returns a tensor shaped like orig_input. orig_output must have MaxPool's output shape. */
TFC_API tfc_tensor *tfc_max_pool_grad(tfc_ctx *ctx, const tfc_tensor *orig_input, const tfc_tensor *orig_output,
                                      const tfc_tensor *grad, const tfc_pool_attrs *attrs, tfc_status *st);
/* AvgPoolGrad: spreads grad evenly over each window's real cells; returns a tensor of orig_input_shape. */
TFC_API tfc_tensor *tfc_avg_pool_grad(tfc_ctx *ctx, const int64_t orig_input_shape[4], const tfc_tensor *grad,
                                      const tfc_pool_attrs *attrs, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
