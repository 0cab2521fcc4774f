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
 *     Differentiable in grad (MaxPoolGradGrad of ReluGrad), like MaxPoolGrad. T float or double. */
#ifndef TFC_OPS_FUSED_POOL_OPS_H
#define TFC_OPS_FUSED_POOL_OPS_H

#include "ops/conv_geom.h"

/* The convolution's geometry (`conv`, as _FusedConv2D's) and the pool's over the convolution's output
 * (`pool`: in_* the conv output, out_* the op's output, k_* the window, pads resolved), validated as the
 * Conv2D and MaxPool ops validate them. in_dims, f_dims: input and filter dims (NHWC, HWIO). */
bool tfc_conv_pool_geom(const char *op, const tfc_attrs *attrs, const int64_t in_dims[4], const int64_t f_dims[4],
                        tfc_conv_geom *conv, tfc_conv_geom *pool, tfc_status *st);

#endif
