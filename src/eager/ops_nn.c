/* Typed wrappers for the NN ops (include/tfc/ops/nn.h): build attrs, call tfc_execute. */
#include "tfc/ops/nn.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */

static tfc_tensor *unary(tfc_ctx *ctx, const char *op, const tfc_tensor *x, const tfc_attr *attrs, int n_attrs,
                         tfc_status *st) {
    if (!x) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input is NULL", op);
        return NULL;
    }
    return tfc_emit(ctx, op, (tfc_tensor *[]){T(x)}, 1, attrs, n_attrs, st);
}

tfc_tensor *tfc_relu(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st) {
    return unary(ctx, "Relu", features, NULL, 0, st);
}
tfc_tensor *tfc_relu6(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st) {
    return unary(ctx, "Relu6", features, NULL, 0, st);
}
tfc_tensor *tfc_leaky_relu(tfc_ctx *ctx, const tfc_tensor *features, double alpha, tfc_status *st) {
    tfc_attr a = TFC_ATTR_F("alpha", alpha);
    return unary(ctx, "LeakyRelu", features, &a, 1, st);
}
tfc_tensor *tfc_elu(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st) {
    return unary(ctx, "Elu", features, NULL, 0, st);
}
tfc_tensor *tfc_selu(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st) {
    return unary(ctx, "Selu", features, NULL, 0, st);
}
tfc_tensor *tfc_softplus(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st) {
    return unary(ctx, "Softplus", features, NULL, 0, st);
}
tfc_tensor *tfc_softsign(tfc_ctx *ctx, const tfc_tensor *features, tfc_status *st) {
    return unary(ctx, "Softsign", features, NULL, 0, st);
}
tfc_tensor *tfc_softmax(tfc_ctx *ctx, const tfc_tensor *logits, tfc_status *st) {
    return unary(ctx, "Softmax", logits, NULL, 0, st);
}
tfc_tensor *tfc_log_softmax(tfc_ctx *ctx, const tfc_tensor *logits, tfc_status *st) {
    return unary(ctx, "LogSoftmax", logits, NULL, 0, st);
}
tfc_tensor *tfc_l2_loss(tfc_ctx *ctx, const tfc_tensor *t, tfc_status *st) { return unary(ctx, "L2Loss", t, NULL, 0, st); }

tfc_tensor *tfc_bias_add(tfc_ctx *ctx, const tfc_tensor *value, const tfc_tensor *bias, const char *data_format,
                         tfc_status *st) {
    if (!value || !bias) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "BiasAdd: input is NULL");
        return NULL;
    }
    tfc_attr a = TFC_ATTR_S("data_format", data_format ? data_format : "NHWC");
    return tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){T(value), T(bias)}, 2, &a, 1, st);
}

/* Drops an output the caller did not ask for: owned by the current scope, or by us without one. */
static void discard(tfc_ctx *ctx, tfc_tensor *t) { tfc_tensor_unref(tfc_keep(ctx, t)); }

/* Runs a two-output loss op: returns loss, hands backprop to *backprop or drops it. */
static tfc_tensor *loss2(tfc_ctx *ctx, const char *op, const tfc_tensor *logits, const tfc_tensor *labels,
                         tfc_tensor **backprop, tfc_status *st) {
    if (backprop) *backprop = NULL;
    if (!logits || !labels) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input is NULL", op);
        return NULL;
    }
    tfc_tensor *out[2] = {0};
    if (tfc_execute(ctx, op, (tfc_tensor *[]){T(logits), T(labels)}, 2, NULL, 0, out, 2, st) < 0) return NULL;
    if (backprop) *backprop = out[1];
    else discard(ctx, out[1]);
    return out[0];
}

tfc_tensor *tfc_softmax_cross_entropy_with_logits(tfc_ctx *ctx, const tfc_tensor *labels, const tfc_tensor *logits,
                                                  tfc_tensor **backprop, tfc_status *st) {
    return loss2(ctx, "SoftmaxCrossEntropyWithLogits", logits, labels, backprop, st);
}

tfc_tensor *tfc_sparse_softmax_cross_entropy_with_logits(tfc_ctx *ctx, const tfc_tensor *labels,
                                                         const tfc_tensor *logits, tfc_tensor **backprop,
                                                         tfc_status *st) {
    return loss2(ctx, "SparseSoftmaxCrossEntropyWithLogits", logits, labels, backprop, st);
}

tfc_tensor *tfc_fused_batch_norm(tfc_ctx *ctx, const tfc_tensor *x, const tfc_tensor *scale, const tfc_tensor *offset,
                                 const tfc_tensor *mean, const tfc_tensor *variance, double epsilon,
                                 double exponential_avg_factor, const char *data_format, bool is_training,
                                 tfc_tensor **batch_mean, tfc_tensor **batch_variance, tfc_status *st) {
    if (batch_mean) *batch_mean = NULL;
    if (batch_variance) *batch_variance = NULL;
    if (!x || !scale || !offset) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "FusedBatchNormV3: input is NULL");
        return NULL;
    }
    /* Missing statistics are empty vectors, as tf.compat.v1.nn.fused_batch_norm passes in training. */
    tfc_tensor *empty = NULL;
    if ((!mean || !variance) && !(empty = tfc_tensor_new(tfc_tensor_dtype(scale), (int64_t[]){0}, 1, st))) return NULL;
    tfc_attr a[4] = {TFC_ATTR_F("epsilon", epsilon), TFC_ATTR_F("exponential_avg_factor", exponential_avg_factor),
                     TFC_ATTR_S("data_format", data_format ? data_format : "NHWC"), TFC_ATTR_B("is_training", is_training)};
    tfc_tensor *in[5] = {T(x), T(scale), T(offset), mean ? T(mean) : empty, variance ? T(variance) : empty};
    tfc_tensor *out[6] = {0};
    int n = tfc_execute(ctx, "FusedBatchNormV3", in, 5, a, 4, out, 6, st);
    tfc_tensor_unref(empty);
    if (n < 0) return NULL;
    if (batch_mean) *batch_mean = out[1];
    else discard(ctx, out[1]);
    if (batch_variance) *batch_variance = out[2];
    else discard(ctx, out[2]);
    for (int i = 3; i < 6; i++) discard(ctx, out[i]);
    return out[0];
}
