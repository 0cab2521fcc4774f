/* Internal: a Conv2D layer followed by a MaxPooling2D layer as one op: _TfcFusedConv2DMaxPool for inference
 * (model calls with training=false, no tape), _TfcFusedConv2DMaxPoolTrain under a training step's tape
 * (src/ops/fused_pool_ops.h, src/keras/model.c). */
#ifndef TFC_KERAS_LAYERS_CONV2D_POOL_H
#define TFC_KERAS_LAYERS_CONV2D_POOL_H

#include "keras/keras_internal.h"

/* pool(conv(x)) in one op when that gives the layers' result: conv a built Conv2D (channels_last, one group,
 * with a bias, an activation _FusedConv2D has), pool a built MaxPooling2D (channels_last), neither with an
 * activity regularizer, x float32 of rank 4 that passes both layers' input checks. Then *y is the output
 * (owned by the caller's scope, as tfc_layer_call's). Otherwise *y is NULL and nothing ran: the caller calls
 * the layers one by one (which also reports any bad input). False only on an error of the fused op. The
 * caller makes sure no tape records (the op has no gradient) and that nothing else reads conv's output. */
bool tfc_conv2d_max_pool_infer(tfc_layer *conv, tfc_layer *pool, tfc_ctx *ctx, tfc_tensor *x, tfc_tensor **y,
                               tfc_status *st);

/* The same pair while one non-persistent tape records (a training step, tfc_tape_single_plain), conv's
 * activation a ReLU: the convolution runs as _FusedConv2D without being recorded, then
 * _TfcFusedConv2DMaxPoolTrain (src/ops/fused_pool_ops.h) pools its output and is recorded, so that the
 * backward pass is one _TfcMaxPoolReluBiasGrad then the convolution's backprops (MaxPoolGrad's mostly-zero
 * output of the conv output's size is never written); where x needs no gradient (a first layer), one
 * _TfcFusedConv2DMaxPoolFilterGrad gives the filter's and bias's. A first layer under a 2x2 pool of stride 2
 * instead runs as _TfcFusedConv2DMaxPoolArgmax, recorded: the convolution in cache-sized slices, the pooled
 * output and one routing byte per window and channel, the conv output never written; its gradient reads those
 * bytes (_TfcFusedConv2DMaxPoolArgmaxFilterGrad). Results and the gradients equal the layer-by-layer ones bit
 * for bit, except a first layer's bias gradient (summed in another order: float32 rounding). As above, *y NULL means the pair does not qualify, and the caller makes sure nothing
 * else reads conv's output (the op gives that output no gradient of its own). */
bool tfc_conv2d_max_pool_train(tfc_layer *conv, tfc_layer *pool, tfc_ctx *ctx, tfc_tensor *x, tfc_tensor **y,
                               tfc_status *st);

#endif
