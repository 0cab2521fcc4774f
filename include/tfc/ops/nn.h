/* tfc — typed wrappers for the neural-network ops: activations, bias addition, softmax, the softmax
 * cross-entropy losses, fused batch normalisation and L2 loss (TensorFlow's Relu, Relu6, LeakyRelu, Elu, Selu,
 * Softplus, Softsign, BiasAdd, Softmax, LogSoftmax, SoftmaxCrossEntropyWithLogits,
 * SparseSoftmaxCrossEntropyWithLogits, FusedBatchNormV3, L2Loss). Each wrapper runs its op through
 * tfc_execute, so it is recorded on active tapes and differentiable like the op (gradients as TensorFlow's
 * nn_grad.py; the *Grad helper ops they emit are differentiable again, so second derivatives work).
 *
 * Common contract:
 *   - dtypes: float32, float64, float16, bfloat16 (computed through float32); Relu, Relu6 and BiasAdd also take
 *     int8, uint8, int16, int32, int64. Outputs have the input's dtype.
 *   - Inputs are borrowed (never released by the wrapper).
 *   - Returns a new tensor owned by the caller (or by the current scope), or NULL with st set:
 *       INVALID_ARGUMENT   ranks, sizes or attrs are inconsistent (the message names the op and the values),
 *                          a dtype outside the op's set, or a sparse label outside [0, classes)
 *       RESOURCE_EXHAUSTED out of memory
 *   - Extra outputs returned through pointers (backprop, batch statistics) follow the same ownership; pass
 *     NULL to discard them. */
#ifndef TFC_OPS_NN_H
#define TFC_OPS_NN_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- activations: elementwise, any shape (rank 0 included) ------------------------------------------------ */

/* tf.nn.relu (Relu): max(features, 0). NaN stays NaN. Integer dtypes allowed. */
TFC_API tfc_tensor *tfc_relu(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st);
/* tf.nn.relu6 (Relu6): min(max(features, 0), 6). Integer dtypes allowed. */
TFC_API tfc_tensor *tfc_relu6(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st);
/* tf.nn.leaky_relu (LeakyRelu): features > 0 ? features : alpha * features (TensorFlow's default alpha is 0.2).
 * Floating dtypes only. */
TFC_API tfc_tensor *tfc_leaky_relu(tfc_ctx *ctx, const tfc_tensor *features, double alpha, tfc_status *st);
/* tf.nn.elu (Elu): features < 0 ? exp(features) - 1 : features. */
TFC_API tfc_tensor *tfc_elu(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st);
/* tf.nn.selu (Selu): scale * (features < 0 ? alpha * (exp(features) - 1) : features) with
 * alpha = 1.6732632423543772, scale = 1.0507009873554805. */
TFC_API tfc_tensor *tfc_selu(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st);
/* tf.nn.softplus (Softplus): log(exp(features) + 1), computed without overflow for any magnitude. */
TFC_API tfc_tensor *tfc_softplus(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st);
/* tf.nn.softsign (Softsign): features / (abs(features) + 1). */
TFC_API tfc_tensor *tfc_softsign(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st);

/* ---- bias ----------------------------------------------------------------------------------------------- */

/* tf.nn.bias_add (BiasAdd): value + bias along the channel dimension.
 * value: rank >= 2; channels last ("NHWC", also for rank 2 or 5) or at dimension 1 ("NCHW").
 * bias:  [channels]. data_format: "NHWC" or "NCHW"; NULL means "NHWC".
 * INVALID_ARGUMENT: value of rank < 2, bias not 1-D, bias size != channels, other data_format. */
TFC_API tfc_tensor *tfc_bias_add(tfc_ctx *ctx, const tfc_tensor *value, const tfc_tensor *bias, const char *data_format,
                                 tfc_status *st);

/* ---- softmax --------------------------------------------------------------------------------------------- */

/* tf.nn.softmax (Softmax) over the last axis of logits (rank >= 1): exp(x - max) / sum(exp(x - max)), finite
 * for logits of any magnitude. */
TFC_API tfc_tensor *tfc_softmax(tfc_ctx *ctx, const tfc_tensor *logits, tfc_status *st);
/* tf.nn.log_softmax (LogSoftmax) over the last axis: (x - max) - log(sum(exp(x - max))). */
TFC_API tfc_tensor *tfc_log_softmax(tfc_ctx *ctx, const tfc_tensor *logits, tfc_status *st);

/* ---- losses ---------------------------------------------------------------------------------------------- */

/* SoftmaxCrossEntropyWithLogits (the op behind tf.nn.softmax_cross_entropy_with_logits, whose argument order
 * labels, logits this follows): per-row loss -sum(labels * log_softmax(logits)).
 * logits, labels: [batch, classes], or shapes that broadcast to it (e.g. labels [1, classes]); same dtype.
 * Returns loss [batch]; *backprop (if not NULL) receives softmax(logits) - labels, [batch, classes].
 * INVALID_ARGUMENT: the shapes do not broadcast, or not to a 2-D shape. */
TFC_API tfc_tensor *tfc_softmax_cross_entropy_with_logits(tfc_ctx *ctx, const tfc_tensor *labels,
                                                          const tfc_tensor *logits, tfc_tensor **backprop,
                                                          tfc_status *st);
/* SparseSoftmaxCrossEntropyWithLogits (tf.nn.sparse_softmax_cross_entropy_with_logits for 2-D logits):
 * loss[b] = -log_softmax(logits)[b, labels[b]].
 * labels: [batch] int32 or int64 with values in [0, classes); logits: [batch, classes], classes >= 1.
 * Returns loss [batch]; *backprop (if not NULL) receives softmax(logits) - one_hot(labels).
 * INVALID_ARGUMENT: ranks, batch mismatch, no classes, or a label out of range ("Received a label value of 12
 * which is outside the valid range of [0, 10).  Label values: ..."). Labels get no gradient. */
TFC_API tfc_tensor *tfc_sparse_softmax_cross_entropy_with_logits(tfc_ctx *ctx, const tfc_tensor *labels,
                                                                 const tfc_tensor *logits, tfc_tensor **backprop,
                                                                 tfc_status *st);
/* tf.nn.l2_loss (L2Loss): sum(t ** 2) / 2 as a scalar, for t of any shape. Floating dtypes only. */
TFC_API tfc_tensor *tfc_l2_loss(tfc_ctx *ctx, const tfc_tensor *t, tfc_status *st);

/* ---- batch normalisation ---------------------------------------------------------------------------------- */

/* tf.compat.v1.nn.fused_batch_norm (FusedBatchNormV3).
 * x:      4-D or 5-D, channels last ("NHWC", "NDHWC") or at dimension 1 ("NCHW", "NCDHW"); data_format NULL
 *         means "NHWC". float32, float16, bfloat16 (statistics in float32) or float64.
 * scale, offset: [channels], float32 (float64 with float64 x).
 * mean, variance: [channels] population statistics; used in inference (is_training false) and, in training,
 *         blended into the returned running statistics when exponential_avg_factor != 1. They may be NULL
 *         otherwise (training with factor 1).
 * epsilon: added to the variance (tf.compat.v1.nn.fused_batch_norm's default is 0.001).
 * exponential_avg_factor: 1 keeps only the batch statistics (TensorFlow's default).
 * Returns y shaped like x. In training, y uses the batch mean and (biased) variance and *batch_mean /
 * *batch_variance (if not NULL) receive the running statistics to store: the batch mean and the unbiased
 * batch variance, blended as (1 - f) * mean + f * batch_mean when f = exponential_avg_factor != 1. In
 * inference they receive mean and variance unchanged.
 * INVALID_ARGUMENT: rank not 4 or 5, parameter sizes != channels, mean/variance missing when needed. */
TFC_API tfc_tensor *tfc_fused_batch_norm(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *scale,
                                         const tfc_tensor *offset, const tfc_tensor *mean, const tfc_tensor *variance,
                                         double epsilon, double exponential_avg_factor, const char *data_format,
                                         bool is_training, tfc_tensor **batch_mean, tfc_tensor **batch_variance,
                                         tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
