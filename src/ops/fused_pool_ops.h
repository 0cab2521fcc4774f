/* Internal: _TfcFusedConv2DMaxPool (src/ops/fused_pool_ops.c), tfc's inference fusion of a convolution (with
 * _FusedConv2D's bias and activation) and the MaxPool of its output:
 *   output = MaxPool(act(Conv2D(input, filter) + bias), ksize, pool_strides, pool_padding)
 * NHWC only; T float or double. Keras model calls with training=false run Conv2D -> MaxPooling2D layer pairs
 * as this op (src/keras/model.c), so the convolution's output never makes a round trip through memory: the
 * kernel (src/kernels/cpu/fused_pool.c) computes it a few images at a time into cache-sized scratch and
 * pools from there. No gradient (the op is only emitted when no tape records).
 *
 * Training (tfc-only ops, not TensorFlow's):
 *   _TfcFusedConv2DMaxPoolTrain(input, filter, bias, conv_output) -> output = MaxPool(conv_output)
 *     with the same attrs (fused_ops must be [BiasAdd, Relu]); conv_output must be _FusedConv2D(input,
 *     filter, bias) with those attrs, computed by the caller (and kept by the tape as this op's input). Its
 *     gradient is one _TfcMaxPoolReluBiasGrad then Conv2DBackpropInput/Filter of dz, instead of MaxPoolGrad,
 *     _FusedBiasAddGrad and the same backprops: the mostly-zero MaxPoolGrad output (the size of conv_output)
 *     is never written or read back. conv_output itself gets no gradient (it stands for the other inputs'
 *     function): Keras (src/keras/model.c) emits the op only when nothing else reads it.
 *   _TfcMaxPoolReluBiasGrad(orig_input y, orig_output, grad; ksize, strides, padding, data_format NHWC)
 *     -> backprops dz = ReluGrad(MaxPoolGrad(y, orig_output, grad), y) [shape of y], bias_backprop =
 *     BiasAddGrad(dz) [channels of y]: one pass over y and dz; the same routing as MaxPoolGrad (the first
 *     maximum of each window in row-major order, recomputed from y; overlapping windows add in (oh, ow)
 *     order) and the same bias sums as _FusedBiasAddGrad, so results equal the three-op form bit for bit.
 *     Differentiable in grad (MaxPoolGradGrad of ReluGrad), like MaxPoolGrad. T float or double.
 *   _TfcFusedConv2DMaxPoolFilterGrad(input, filter, conv_output, orig_output, grad; the train op's attrs)
 *     -> filter_backprop = Conv2DBackpropFilter(input, shape(filter), dz), bias_backprop = db, with dz, db =
 *     _TfcMaxPoolReluBiasGrad(conv_output, orig_output, grad): the train op's gradient where the input needs
 *     none (a first layer) and no tape records the gradient's ops (the op has no gradient). Small-channel 3x3
 *     convolutions under 2x2 pools of stride 2 form dz per Winograd tile without writing it
 *     (src/kernels/cpu/conv_wgrad_small.c): the same filter_backprop bits, bias_backprop summed in another
 *     order. T float or double.
 *   _TfcFusedConv2DMaxPoolArgmax(input, filter, bias; the train op's attrs, ksize and pool_strides 2x2)
 *     -> output = _TfcFusedConv2DMaxPool's, argmax (uint8, output's shape): per window and channel, the cell
 *     (row-major 0-3; bits 0-1) that _TfcMaxPoolReluBiasGrad's comparisons route the gradient to, and bit 2
 *     set where that cell's conv output is > 0. Keras emits it (recorded) for a first layer's pair in training
 *     instead of _FusedConv2D + _TfcFusedConv2DMaxPoolTrain: the conv output is never written. Its gradient
 *     gives the filter and bias only (UNIMPLEMENTED for the input):
 *   _TfcFusedConv2DMaxPoolArgmaxFilterGrad(input, filter, argmax, grad) -> (filter_backprop, bias_backprop) as
 *     _TfcFusedConv2DMaxPoolFilterGrad computes them from the conv output (dz: (0 + grad) times the ReLU bit at
 *     each window's cell, +0 elsewhere; cells past the conv output ignored). Not differentiable. T float or
 *     double. */
#ifndef TFC_OPS_FUSED_POOL_OPS_H
#define TFC_OPS_FUSED_POOL_OPS_H

#include "ops/conv_geom.h"

/* The convolution's geometry (`conv`, as _FusedConv2D's) and the pool's over the convolution's output
 * (`pool`: in_* the conv output, out_* the op's output, k_* the window, pads resolved), validated as the
 * Conv2D and MaxPool ops validate them. in_dims, f_dims: input and filter dims (NHWC, HWIO). */
bool tfc_conv_pool_geom(const char *op, const tfc_attrs *attrs, const int64_t in_dims[4], const int64_t f_dims[4],
                        tfc_conv_geom *conv, tfc_conv_geom *pool, tfc_status *st);

#endif
