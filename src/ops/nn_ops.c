/* NN ops (tensorflow/core/ops/nn_ops.cc): activations and their *Grad helpers, BiasAdd, Softmax,
 * LogSoftmax, the cross-entropy losses, FusedBatchNormV3 and L2Loss. Gradients mirror
 * tensorflow/python/ops/nn_grad.py and nn_fused_batch_norm_grad.py and emit ops only, so they are
 * differentiable again. Conv2D, depthwise convolution and pooling live in conv_ops.c. */
#include <math.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "ops/op_util.h"

#define NN_FLOATS "half, bfloat16, float, double"

/* ---- shape functions ------------------------------------------------------------------------------ */

static bool dims_compatible(const tfc_shape *a, const tfc_shape *b) {
    if (a->rank < 0 || b->rank < 0) return true;
    if (a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] >= 0 && b->dims[i] >= 0 && a->dims[i] != b->dims[i]) return false;
    return true;
}

/* The *Grad helpers of elementwise activations: (gradients, features-or-outputs) of one shape. */
static bool same_shape_binary(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *a = &c->in_shapes[0], *b = &c->in_shapes[1];
    if (!dims_compatible(a, b))
        return TFC_OP_ERR(c, st,
                          "Inputs to operation %s of type %s must have the same size and shape.  Input 0: %s != input 1: %s",
                          c->op->name, c->op->name, SHP(a), SHP(b));
    c->out_shapes[0] = a->rank >= 0 ? *a : *b;
    return true;
}

/* BiasAdd and BiasAddGrad: the channel dimension is the last (NHWC) or dimension 1 (NCHW). */
static int bias_channel_dim(tfc_shape_ctx *c, int rank) {
    return strcmp(tfc_attrs_string(c->attrs, "data_format", "NHWC"), "NCHW") ? rank - 1 : 1;
}

static bool bias_add_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *v = &c->in_shapes[0], *b = &c->in_shapes[1];
    if (v->rank >= 0 && v->rank < 2) return TFC_OP_ERR(c, st, "Input tensor must be at least 2D: %s", SHP(v));
    if (b->rank >= 0 && b->rank != 1) return TFC_OP_ERR(c, st, "Biases must be 1D: %s", SHP(b));
    c->out_shapes[0] = *v;
    if (v->rank < 0 || b->rank < 0) return true;
    int cd = bias_channel_dim(c, v->rank);
    if (v->dims[cd] >= 0 && b->dims[0] >= 0 && v->dims[cd] != b->dims[0])
        return TFC_OP_ERR(c, st, "Must provide as many biases as the last dimension of the input tensor: %s vs. %s",
                          SHP(b), SHP(v));
    if (v->dims[cd] < 0) c->out_shapes[0].dims[cd] = b->dims[0];
    return true;
}

static bool bias_add_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *v = &c->in_shapes[0];
    if (v->rank >= 0 && v->rank < 2) return TFC_OP_ERR(c, st, "Input tensor must be at least 2D: %s", SHP(v));
    c->out_shapes[0].rank = 1;
    c->out_shapes[0].dims[0] = v->rank < 0 ? -1 : v->dims[bias_channel_dim(c, v->rank)];
    return true;
}

static bool softmax_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[0];
    if (x->rank == 0) return TFC_OP_ERR(c, st, "logits must have >= 1 dimension, got %s", SHP(x));
    c->out_shapes[0] = *x;
    return true;
}

/* SoftmaxCrossEntropyWithLogits: features and labels are [batch, classes], or broadcast to it. */
static bool xent_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *f = &c->in_shapes[0], *l = &c->in_shapes[1];
    tfc_shape b;
    if (!tfc_broadcast_shapes(f, l, &b, c->op->name, st))
        return TFC_OP_ERR(c, st, "logits and labels must be broadcastable: logits_size=%s labels_size=%s", SHP(f),
                          SHP(l));
    if (b.rank >= 0 && b.rank != 2)
        return TFC_OP_ERR(c, st,
                          "logits and labels must be either 2-dimensional, or broadcasted to be 2-dimensional "
                          "(logits %s, labels %s)",
                          SHP(f), SHP(l));
    c->out_shapes[0].rank = 1;
    c->out_shapes[0].dims[0] = b.rank < 0 ? -1 : b.dims[0];
    c->out_shapes[1] = b;
    return true;
}

/* SparseSoftmaxCrossEntropyWithLogits: features [batch, classes], labels [batch] in [0, classes). The label
 * range is data: the kernel checks it. */
static bool sparse_xent_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *f = &c->in_shapes[0], *l = &c->in_shapes[1];
    if (f->rank >= 0 && f->rank != 2) return TFC_OP_ERR(c, st, "logits must be 2-D, but got shape %s", SHP(f));
    if (l->rank >= 0 && l->rank != 1) return TFC_OP_ERR(c, st, "labels must be 1-D, but got shape %s", SHP(l));
    int64_t batch = f->rank == 2 ? f->dims[0] : -1;
    if (l->rank == 1) {
        if (batch >= 0 && l->dims[0] >= 0 && batch != l->dims[0])
            return TFC_OP_ERR(c, st,
                              "logits and labels must have the same first dimension, got logits shape %s and labels "
                              "shape %s",
                              SHP(f), SHP(l));
        if (batch < 0) batch = l->dims[0];
    }
    if (f->rank == 2 && f->dims[1] == 0)
        return TFC_OP_ERR(c, st, "Must have at least one class, but got logits shape %s", SHP(f));
    c->out_shapes[0].rank = 1;
    c->out_shapes[0].dims[0] = batch;
    c->out_shapes[1].rank = 2;
    c->out_shapes[1].dims[0] = batch;
    c->out_shapes[1].dims[1] = f->rank == 2 ? f->dims[1] : -1;
    return true;
}

/* FusedBatchNormV3 / FusedBatchNormGradV3: x is 4-D or 5-D; channels last (NHWC, NDHWC) or at dimension 1
 * (NCHW, NCDHW), whatever the rank (as TensorFlow's CPU kernels). */
static int bn_channel_dim(const tfc_shape_ctx *c, int rank) {
    const char *df = tfc_attrs_string(c->attrs, "data_format", "NHWC");
    return (!strcmp(df, "NCHW") || !strcmp(df, "NCDHW")) ? 1 : rank - 1;
}

static bool bn_check_x(tfc_shape_ctx *c, int i, const char *what, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[i];
    if (x->rank >= 0 && x->rank != 4 && x->rank != 5)
        return TFC_OP_ERR(c, st, "%s must be 4 or 5-dimensional, got shape %s", what, SHP(x));
    return true;
}

/* Checks input i is a vector; when need_channels, that its size equals the channel count *ch (which an
 * unknown *ch takes from it). prefix starts the size message ("When is_training=false, ") or is "". */
static bool bn_check_vec(tfc_shape_ctx *c, int i, const char *what, bool need_channels, const char *prefix,
                         int64_t *ch, tfc_status *st) {
    const tfc_shape *v = &c->in_shapes[i];
    if (v->rank < 0) return true;
    if (v->rank != 1) return TFC_OP_ERR(c, st, "%s must be 1-dimensional, got shape %s", what, SHP(v));
    if (!need_channels || v->dims[0] < 0) return true;
    if (*ch < 0) *ch = v->dims[0];
    else if (v->dims[0] != *ch)
        return TFC_OP_ERR(c, st, "%s%s must have the same number of elements as the channels of x, got %lld and %lld",
                          prefix, what, (long long)v->dims[0], (long long)*ch);
    return true;
}

static bool fused_batch_norm_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *x = &c->in_shapes[0];
    if (!bn_check_x(c, 0, "input", st)) return false;
    int64_t ch = x->rank >= 0 ? x->dims[bn_channel_dim(c, x->rank)] : -1;
    bool training = tfc_attrs_bool(c->attrs, "is_training", true);
    double f = tfc_attrs_float(c->attrs, "exponential_avg_factor", 1.0);
    bool need_stats = !training || f != 1.0;
    const char *prefix = training ? "When exponential_avg_factor != 1, " : "When is_training=false, ";
    if (!bn_check_vec(c, 1, "scale", true, "", &ch, st) || !bn_check_vec(c, 2, "offset", true, "", &ch, st) ||
        !bn_check_vec(c, 3, "mean", need_stats, prefix, &ch, st) ||
        !bn_check_vec(c, 4, "variance", need_stats, prefix, &ch, st))
        return false;
    c->out_shapes[0] = *x;
    if (x->rank >= 0) c->out_shapes[0].dims[bn_channel_dim(c, x->rank)] = ch;
    for (int i = 1; i <= 4; i++) {
        c->out_shapes[i].rank = 1;
        c->out_shapes[i].dims[0] = ch;
    }
    c->out_shapes[5].rank = 0; /* reserve_space_3: unused on CPU, a scalar as in TensorFlow's CPU kernel */
    return true;
}

static bool fused_batch_norm_grad_shape(tfc_shape_ctx *c, tfc_status *st) {
    const tfc_shape *dy = &c->in_shapes[0], *x = &c->in_shapes[1];
    if (!bn_check_x(c, 0, "y_backprop", st) || !bn_check_x(c, 1, "x", st)) return false;
    if (!dims_compatible(x, dy))
        return TFC_OP_ERR(c, st, "x and y_backprop must have same shape, but x has shape %s and y_backprop has shape %s",
                          SHP(x), SHP(dy));
    const tfc_shape *s = x->rank >= 0 ? x : dy;
    int64_t ch = s->rank >= 0 ? s->dims[bn_channel_dim(c, s->rank)] : -1;
    if (!bn_check_vec(c, 2, "scale", true, "", &ch, st) || !bn_check_vec(c, 3, "reserve_space_1", true, "", &ch, st) ||
        !bn_check_vec(c, 4, "reserve_space_2", true, "", &ch, st))
        return false;
    c->out_shapes[0] = *s;
    if (s->rank >= 0) c->out_shapes[0].dims[bn_channel_dim(c, s->rank)] = ch;
    for (int i = 1; i <= 2; i++) {
        c->out_shapes[i].rank = 1;
        c->out_shapes[i].dims[0] = ch;
    }
    for (int i = 3; i <= 4; i++) { /* reserve_space_4/5: empty vectors, as TensorFlow */
        c->out_shapes[i].rank = 1;
        c->out_shapes[i].dims[0] = 0;
    }
    return true;
}

/* ---- gradient helpers ------------------------------------------------------------------------------
 * An emitter chains op emissions: after the first failure every call returns NULL without running
 * anything, so expressions may nest regardless of C's argument evaluation order. Constants it creates are
 * released by em_end (ops do not keep their inputs alive beyond what tapes reference themselves). */
typedef struct emitter {
    tfc_ctx *ctx;
    tfc_status *st;
    bool failed;
    int n_consts;
    tfc_tensor *consts[8];
} emitter;

static emitter em_begin(tfc_grad_ctx *g, tfc_status *st) { return (emitter){.ctx = g->ctx, .st = st}; }

static bool em_end(emitter *e) {
    for (int i = 0; i < e->n_consts; i++) tfc_tensor_unref(e->consts[i]);
    e->n_consts = 0;
    return !e->failed;
}

static tfc_tensor *em_track(emitter *e, tfc_tensor *t) {
    if (!t || e->n_consts == (int)(sizeof e->consts / sizeof e->consts[0])) {
        if (t) tfc_tensor_unref(t);
        if (!e->failed && t) tfc_status_set(e->st, TFC_INTERNAL, "nn gradient: too many constants");
        e->failed = true;
        return NULL;
    }
    return e->consts[e->n_consts++] = t;
}

/* Scalar constant of dtype dt. */
static tfc_tensor *em_scalar(emitter *e, tfc_dtype dt, double v) {
    return e->failed ? NULL : em_track(e, tfc_scalar(dt, v, e->st));
}

/* Runs a one- or two-input op (b NULL: one input); a NULL input means an earlier step failed. */
static tfc_tensor *em_op(emitter *e, const char *op, tfc_tensor *a, tfc_tensor *b, bool two, const tfc_attr *attrs,
                         int n_attrs) {
    if (e->failed || !a || (two && !b)) {
        if (!e->failed) tfc_status_set(e->st, TFC_INTERNAL, "%s gradient: an input of %s is missing", "nn", op);
        e->failed = true;
        return NULL;
    }
    tfc_tensor *in[2] = {a, b};
    tfc_tensor *r = tfc_emit(e->ctx, op, in, two ? 2 : 1, attrs, n_attrs, e->st);
    if (!r) e->failed = true;
    return r;
}

static tfc_tensor *em1(emitter *e, const char *op, tfc_tensor *a) { return em_op(e, op, a, NULL, false, NULL, 0); }
static tfc_tensor *em2(emitter *e, const char *op, tfc_tensor *a, tfc_tensor *b) {
    return em_op(e, op, a, b, true, NULL, 0);
}

/* Sum over the last axis, keeping it (reduce_sum(x, -1, keepdims=True)). */
static tfc_tensor *em_sum_last_keep(emitter *e, tfc_tensor *x) {
    tfc_tensor *axis = e->failed ? NULL : em_track(e, tfc_scalar_i32(-1, e->st));
    tfc_attr keep = TFC_ATTR_B("keep_dims", true);
    return em_op(e, "Sum", x, axis, true, &keep, 1);
}

/* vec [D0] * mat [D0, D1]: expand_dims(vec, -1) * mat (nn_grad.py's _BroadcastMul). */
static tfc_tensor *em_broadcast_mul(emitter *e, tfc_tensor *vec, tfc_tensor *mat) {
    tfc_tensor *axis = e->failed ? NULL : em_track(e, tfc_scalar_i32(-1, e->st));
    return em2(e, "Mul", em2(e, "ExpandDims", vec, axis), mat);
}

/* True when t certainly holds only zeros: the tape passes zeros for unused outputs, and the cross-entropy
 * gradients skip their second-order term then, as TensorFlow skips it for its zeros tensors. */
static bool all_zeros(const tfc_tensor *t) {
    if (!t || !t->data) return false;
    switch (t->dtype) {
    case TFC_FLOAT:
        for (int64_t i = 0; i < t->num_elements; i++)
            if (((const float *)t->data)[i] != 0.0f) return false;
        return true;
    case TFC_DOUBLE:
        for (int64_t i = 0; i < t->num_elements; i++)
            if (((const double *)t->data)[i] != 0.0) return false;
        return true;
    default:
        for (int64_t i = 0; i < t->num_elements; i++)
            if (tfc_dtype_get_f64(t->dtype, t->data, i) != 0.0) return false;
        return true;
    }
}

/* ---- gradients ------------------------------------------------------------------------------------ */

/* Activation gradients: <Op>Grad(dy, x or y); which of input 0 / output 0 feeds it is per op. */
static bool act_grad(tfc_grad_ctx *g, const char *grad_op, tfc_tensor *feat, tfc_status *st) {
    const tfc_attr *alpha = tfc_attrs_find(g->attrs, "alpha");
    tfc_attr a[1];
    int na = 0;
    if (alpha) a[na++] = TFC_ATTR_F("alpha", alpha->v.f);
    g->dx[0] = tfc_emit(g->ctx, grad_op, (tfc_tensor *[]){g->dy[0], feat}, 2, a, na, st);
    return g->dx[0] != NULL;
}

static bool relu_grad(tfc_grad_ctx *g, tfc_status *st) { return act_grad(g, "ReluGrad", g->out[0], st); }
static bool relu6_grad(tfc_grad_ctx *g, tfc_status *st) { return act_grad(g, "Relu6Grad", g->out[0], st); }
static bool leaky_relu_grad(tfc_grad_ctx *g, tfc_status *st) { return act_grad(g, "LeakyReluGrad", g->in[0], st); }
static bool elu_grad(tfc_grad_ctx *g, tfc_status *st) { return act_grad(g, "EluGrad", g->out[0], st); }
static bool selu_grad(tfc_grad_ctx *g, tfc_status *st) { return act_grad(g, "SeluGrad", g->out[0], st); }
/* nn_grad.py writes grad * sigmoid(x); SoftplusGrad computes exactly that in one kernel. */
static bool softplus_grad(tfc_grad_ctx *g, tfc_status *st) { return act_grad(g, "SoftplusGrad", g->in[0], st); }
static bool softsign_grad(tfc_grad_ctx *g, tfc_status *st) { return act_grad(g, "SoftsignGrad", g->in[0], st); }

/* ReluGrad, Relu6Grad, LeakyReluGrad are linear in the gradient and piecewise constant in the features:
 * (<Op>Grad(ddx, features), zeros). */
static bool piecewise_linear_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    if (!act_grad(g, g->op->name, g->in[1], st)) return false;
    return (g->dx[1] = tfc_emit(g->ctx, "ZerosLike", &g->in[1], 1, NULL, 0, st)) != NULL;
}

/* EluGrad(dy, y) = dy * (y < 0 ? y + 1 : 1) and SeluGrad(dy, y) = dy * (y < 0 ? y + scale*alpha : scale):
 * d/d(dy) is the op itself, d/dy is dy where y < 0. */
static bool elu_selu_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    emitter e = em_begin(g, st);
    tfc_tensor *y = g->in[1];
    g->dx[0] = em2(&e, g->op->name, g->dy[0], y);
    tfc_tensor *neg = em2(&e, "Less", y, em_scalar(&e, y->dtype, 0.0));
    tfc_tensor *prod = em2(&e, "Mul", g->dy[0], g->in[0]);
    tfc_tensor *zeros = em1(&e, "ZerosLike", y);
    tfc_tensor *in3[3] = {neg, prod, zeros};
    if (!e.failed && !(g->dx[1] = tfc_emit(g->ctx, "SelectV2", in3, 3, NULL, 0, st))) e.failed = true;
    return em_end(&e);
}

/* SoftplusGrad(dy, x) = dy * sigmoid(x): d/d(dy) = SoftplusGrad(ddx, x), d/dx = ddx * dy * sigmoid'(x) with
 * sigmoid'(x) = 1 / (exp(-x) + 2 + exp(x)). */
static bool softplus_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    emitter e = em_begin(g, st);
    tfc_tensor *dy = g->in[0], *x = g->in[1], *ddx = g->dy[0];
    g->dx[0] = em2(&e, "SoftplusGrad", ddx, x);
    tfc_tensor *den = em2(&e, "AddV2", em2(&e, "AddV2", em1(&e, "Exp", em1(&e, "Neg", x)), em_scalar(&e, x->dtype, 2.0)),
                          em1(&e, "Exp", x));
    g->dx[1] = em2(&e, "RealDiv", em2(&e, "Mul", ddx, dy), den);
    return em_end(&e);
}

/* SoftsignGrad(dy, x) = dy / (1 + |x|)^2. TensorFlow registers no gradient for it; this one makes Softsign
 * twice differentiable: d/d(dy) = SoftsignGrad(ddx, x), d/dx = -2 sign(x) ddx dy / (1 + |x|)^3. */
static bool softsign_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    emitter e = em_begin(g, st);
    tfc_tensor *dy = g->in[0], *x = g->in[1], *ddx = g->dy[0];
    tfc_tensor *t = em2(&e, "SoftsignGrad", ddx, x); /* ddx / (1 + |x|)^2 */
    g->dx[0] = t;
    tfc_tensor *den = em2(&e, "AddV2", em1(&e, "Abs", x), em_scalar(&e, x->dtype, 1.0));
    tfc_tensor *num = em2(&e, "Mul", em2(&e, "Mul", t, dy), em2(&e, "Mul", em1(&e, "Sign", x), em_scalar(&e, x->dtype, -2.0)));
    g->dx[1] = em2(&e, "RealDiv", num, den);
    return em_end(&e);
}

static bool bias_add_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr df = TFC_ATTR_S("data_format", tfc_attrs_string(g->attrs, "data_format", "NHWC"));
    g->dx[0] = g->dy[0];
    return (g->dx[1] = tfc_emit(g->ctx, "BiasAddGrad", &g->dy[0], 1, &df, 1, st)) != NULL;
}

/* BiasAddGrad's gradient broadcasts the bias-shaped gradient back over the input's shape; nn_grad.py
 * reshapes and tiles, BiasAdd(zeros_like(out_backprop), grad) is the same in one kernel (and is
 * differentiable in turn). */
static bool bias_add_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_attr df = TFC_ATTR_S("data_format", tfc_attrs_string(g->attrs, "data_format", "NHWC"));
    tfc_tensor *z = tfc_emit(g->ctx, "ZerosLike", &g->in[0], 1, NULL, 0, st);
    return z && (g->dx[0] = tfc_emit(g->ctx, "BiasAdd", (tfc_tensor *[]){z, g->dy[0]}, 2, &df, 1, st)) != NULL;
}

/* (dy - sum(dy * softmax, -1, keepdims)) * softmax */
static bool softmax_grad(tfc_grad_ctx *g, tfc_status *st) {
    emitter e = em_begin(g, st);
    tfc_tensor *sm = g->out[0];
    tfc_tensor *s = em_sum_last_keep(&e, em2(&e, "Mul", g->dy[0], sm));
    g->dx[0] = em2(&e, "Mul", em2(&e, "Sub", g->dy[0], s), sm);
    return em_end(&e);
}

/* dy - sum(dy, -1, keepdims) * exp(logsoftmax) */
static bool log_softmax_grad(tfc_grad_ctx *g, tfc_status *st) {
    emitter e = em_begin(g, st);
    tfc_tensor *sm = em1(&e, "Exp", g->out[0]);
    g->dx[0] = em2(&e, "Sub", g->dy[0], em2(&e, "Mul", em_sum_last_keep(&e, g->dy[0]), sm));
    return em_end(&e);
}

/* Shared by both cross-entropy ops: d loss / d features = grad_loss[:, None] * backprop, plus, when the
 * backprop output itself receives a gradient gg, the softmax Jacobian applied to it:
 * (gg - sum(gg * softmax, -1, keepdims)) * softmax. */
static tfc_tensor *xent_features_grad(emitter *e, tfc_grad_ctx *g) {
    tfc_tensor *grad = em_broadcast_mul(e, g->dy[0], g->out[1]);
    tfc_tensor *gg = g->dy[1];
    if (gg && !all_zeros(gg)) {
        tfc_tensor *sm = em1(e, "Softmax", g->in[0]);
        tfc_tensor *s = em_sum_last_keep(e, em2(e, "Mul", gg, sm));
        grad = em2(e, "AddV2", grad, em2(e, "Mul", em2(e, "Sub", gg, s), sm));
    }
    return grad;
}

static bool xent_grad(tfc_grad_ctx *g, tfc_status *st) {
    emitter e = em_begin(g, st);
    tfc_tensor *df = xent_features_grad(&e, g);
    tfc_tensor *dl = em_broadcast_mul(&e, g->dy[0], em1(&e, "Neg", em1(&e, "LogSoftmax", g->in[0])));
    /* With broadcast inputs ([1, C] against [B, C]) both are [B, C]: reduce to each input's shape. */
    if (!e.failed && !(g->dx[0] = tfc_grad_unbroadcast(g->ctx, df, g->in[0], st))) e.failed = true;
    if (!e.failed && !(g->dx[1] = tfc_grad_unbroadcast(g->ctx, dl, g->in[1], st))) e.failed = true;
    return em_end(&e);
}

static bool sparse_xent_grad(tfc_grad_ctx *g, tfc_status *st) {
    emitter e = em_begin(g, st);
    g->dx[0] = xent_features_grad(&e, g);
    return em_end(&e);
}

static bool l2_loss_grad(tfc_grad_ctx *g, tfc_status *st) {
    return (g->dx[0] = tfc_emit(g->ctx, "Mul", (tfc_tensor *[]){g->in[0], g->dy[0]}, 2, NULL, 0, st)) != NULL;
}

static void bn_attrs(const tfc_attrs *a, tfc_attr out[3], bool training) {
    out[0] = TFC_ATTR_F("epsilon", tfc_attrs_float(a, "epsilon", 1e-4));
    out[1] = TFC_ATTR_S("data_format", tfc_attrs_string(a, "data_format", "NHWC"));
    out[2] = TFC_ATTR_B("is_training", training);
}

/* FusedBatchNormV3: FusedBatchNormGradV3 with the saved batch statistics (training) or the population
 * statistics (inference). The gradients of the statistics outputs are ignored, as in TensorFlow. */
static bool fused_batch_norm_grad_fn(tfc_grad_ctx *g, tfc_status *st) {
    bool training = tfc_attrs_bool(g->attrs, "is_training", true);
    tfc_attr a[3];
    bn_attrs(g->attrs, a, training);
    tfc_tensor *in[6] = {g->dy[0], g->in[0], g->in[1], training ? g->out[3] : g->in[3],
                         training ? g->out[4] : g->in[4], g->out[5]};
    tfc_tensor *out[5] = {0};
    if (tfc_execute(g->ctx, "FusedBatchNormGradV3", in, 6, a, 3, out, 5, st) < 0) return false;
    g->dx[0] = out[0];
    g->dx[1] = out[1];
    g->dx[2] = out[2];
    return true;
}

/* The composite form of FusedBatchNormGradV3 (nn_fused_batch_norm_grad.py's _BatchNormGrad), recorded on
 * a nested tape to differentiate it: in training mode it recomputes the batch statistics from x so that
 * their dependence on x is part of the second derivative. Writes grad_x, grad_scale, grad_offset. */
static bool bn_grad_composite(emitter *e, tfc_tensor *dy, tfc_tensor *x, tfc_tensor *scale, tfc_tensor *pop_mean,
                              tfc_tensor *pop_var, double eps, bool nchw, bool training, tfc_tensor **gx,
                              tfc_tensor **gs, tfc_tensor **go) {
    int rank = x->shape.rank, cd = nchw ? 1 : rank - 1;
    int64_t ch = x->shape.dims[cd];
    tfc_dtype xdt = x->dtype, u = scale->dtype;
    if (xdt != u) { /* half / bfloat16: compute in float as TensorFlow does */
        tfc_attr to = TFC_ATTR_T("DstT", u);
        x = em_op(e, "Cast", x, NULL, false, &to, 1);
        dy = em_op(e, "Cast", dy, NULL, false, &to, 1);
    }
    int64_t axes[TFC_MAX_RANK], bshape[TFC_MAX_RANK];
    int na = 0;
    for (int i = 0; i < rank; i++) {
        bshape[i] = i == cd ? ch : 1;
        if (i != cd) axes[na++] = i;
    }
    tfc_tensor *ax = e->failed ? NULL : em_track(e, tfc_vec_i64(axes, na, e->st));
    tfc_tensor *bs = e->failed ? NULL : em_track(e, tfc_vec_i64(bshape, rank, e->st));
    if (!ax || !bs) return false;
    tfc_attr keep = TFC_ATTR_B("keep_dims", true);
    /* Statistics keep their reduced dims so they broadcast against x in either layout. */
    tfc_tensor *sc = em_op(e, "Reshape", scale, bs, true, NULL, 0);
    tfc_tensor *eps_t = em_scalar(e, u, eps);
    tfc_tensor *mean_x, *var_x;
    if (training) {
        mean_x = em_op(e, "Mean", x, ax, true, &keep, 1);
        tfc_tensor *sq = em2(e, "SquaredDifference", x, em1(e, "StopGradient", mean_x));
        var_x = em_op(e, "Mean", sq, ax, true, &keep, 1);
    } else {
        mean_x = em_op(e, "Reshape", pop_mean, bs, true, NULL, 0);
        var_x = em_op(e, "Reshape", pop_var, bs, true, NULL, 0);
    }
    tfc_tensor *x_off = em2(e, "Sub", x, mean_x);
    tfc_tensor *rs = em1(e, "Rsqrt", em2(e, "AddV2", var_x, eps_t));
    tfc_tensor *dyx_sum = em_op(e, "Sum", em2(e, "Mul", dy, x_off), ax, true, &keep, 1);
    tfc_tensor *gxt;
    if (training) {
        tfc_tensor *dy_off = em2(e, "Sub", dy, em_op(e, "Mean", dy, ax, true, &keep, 1));
        tfc_tensor *m = em_op(e, "Mean", em2(e, "Mul", dy, x_off), ax, true, &keep, 1);
        tfc_tensor *r = em1(e, "Reciprocal", em2(e, "AddV2", var_x, eps_t));
        gxt = em2(e, "Mul", em2(e, "Mul", sc, rs), em2(e, "Sub", dy_off, em2(e, "Mul", em2(e, "Mul", r, m), x_off)));
    } else {
        gxt = em2(e, "Mul", em2(e, "Mul", dy, sc), rs);
    }
    tfc_tensor *cshape = e->failed ? NULL : em_track(e, tfc_vec_i64(&ch, 1, e->st));
    if (!cshape) return false;
    *gs = em_op(e, "Reshape", em2(e, "Mul", rs, dyx_sum), cshape, true, NULL, 0);
    *go = em_op(e, "Sum", dy, ax, true, NULL, 0);
    if (xdt != u) {
        tfc_attr to = TFC_ATTR_T("DstT", xdt);
        gxt = em_op(e, "Cast", gxt, NULL, false, &to, 1);
    }
    *gx = gxt;
    return !e->failed;
}

/* FusedBatchNormGradV3's gradient (nn_fused_batch_norm_grad.py): differentiate the composite form on a
 * nested tape with the incoming gradients as output gradients. Returns (d y_backprop, d x, d scale). */
static bool fused_batch_norm_grad_grad(tfc_grad_ctx *g, tfc_status *st) {
    const char *df = tfc_attrs_string(g->attrs, "data_format", "NHWC");
    bool nchw = !strcmp(df, "NCHW") || !strcmp(df, "NCDHW");
    bool training = tfc_attrs_bool(g->attrs, "is_training", true);
    double eps = (float)tfc_attrs_float(g->attrs, "epsilon", 1e-4); /* a float32 attr */
    tfc_tensor *dy = g->in[0], *x = g->in[1], *scale = g->in[2];
    tfc_tape *tape = tfc_tape_new(g->ctx, false, false, st);
    if (!tape) return false;
    tfc_tape_watch(tape, dy);
    tfc_tape_watch(tape, x);
    tfc_tape_watch(tape, scale);
    emitter e = em_begin(g, st);
    tfc_tensor *gx = NULL, *gs = NULL, *go = NULL;
    bool ok = bn_grad_composite(&e, dy, x, scale, g->in[3], g->in[4], eps, nchw, training, &gx, &gs, &go);
    tfc_tape_stop_recording(tape);
    if (ok) {
        tfc_tensor *targets[3] = {gx, gs, go}, *src[3] = {dy, x, scale}, *res[3] = {0};
        ok = tfc_tape_gradient_n(tape, targets, 3, g->dy, src, 3, NULL, 0, TFC_UNCONNECTED_ZERO, res, st);
        if (ok) {
            g->dx[0] = res[0];
            g->dx[1] = res[1];
            g->dx[2] = res[2];
        }
    }
    tfc_tape_free(tape);
    return em_end(&e) && ok;
}

/* ---- op definitions ---------------------------------------------------------------------------------- */

#define ACT(var, op, types, gradfn)                                                                         \
    const tfc_op_def tfc_op_def_##var = {                                                                   \
        .name = op, .inputs = "features: T", .outputs = "activations: T", .attrs = types,                   \
        .shape = tfc_shape_same_as_input0, .grad = gradfn,                                                  \
    }
#define ACT_GRAD(var, op, second, types, gradfn)                                                            \
    const tfc_op_def tfc_op_def_##var = {                                                                   \
        .name = op, .inputs = "gradients: T, " second ": T", .outputs = "backprops: T", .attrs = types,     \
        .shape = same_shape_binary, .grad = gradfn,                                                         \
    }

ACT(relu, "Relu", "T: {" TFC_T_REAL "}", relu_grad);
ACT_GRAD(relu_grad, "ReluGrad", "features", "T: {" TFC_T_REAL "}", piecewise_linear_grad_grad);
ACT(relu6, "Relu6", "T: {" TFC_T_REAL "}", relu6_grad);
ACT_GRAD(relu6_grad, "Relu6Grad", "features", "T: {" TFC_T_REAL "}", piecewise_linear_grad_grad);
ACT(leaky_relu, "LeakyRelu", "alpha: float = 0.2, T: {" NN_FLOATS "} = float", leaky_relu_grad);
ACT_GRAD(leaky_relu_grad, "LeakyReluGrad", "features", "alpha: float = 0.2, T: {" NN_FLOATS "} = float",
         piecewise_linear_grad_grad);
ACT(elu, "Elu", "T: {" NN_FLOATS "}", elu_grad);
ACT_GRAD(elu_grad, "EluGrad", "outputs", "T: {" NN_FLOATS "}", elu_selu_grad_grad);
ACT(selu, "Selu", "T: {" NN_FLOATS "}", selu_grad);
ACT_GRAD(selu_grad, "SeluGrad", "outputs", "T: {" NN_FLOATS "}", elu_selu_grad_grad);
ACT(softplus, "Softplus", "T: {" NN_FLOATS "}", softplus_grad);
ACT_GRAD(softplus_grad, "SoftplusGrad", "features", "T: {" NN_FLOATS "}", softplus_grad_grad);
ACT(softsign, "Softsign", "T: {" NN_FLOATS "}", softsign_grad);
ACT_GRAD(softsign_grad, "SoftsignGrad", "features", "T: {" NN_FLOATS "}", softsign_grad_grad);

const tfc_op_def tfc_op_def_bias_add = {
    .name = "BiasAdd", .inputs = "value: T, bias: T", .outputs = "output: T",
    .attrs = "T: {" TFC_T_REAL "}, data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    .shape = bias_add_shape, .grad = bias_add_grad_fn,
};
const tfc_op_def tfc_op_def_bias_add_grad = {
    .name = "BiasAddGrad", .inputs = "out_backprop: T", .outputs = "output: T",
    .attrs = "T: {" TFC_T_REAL "}, data_format: {'NHWC', 'NCHW'} = 'NHWC'",
    .shape = bias_add_grad_shape, .grad = bias_add_grad_grad,
};
const tfc_op_def tfc_op_def_softmax = {
    .name = "Softmax", .inputs = "logits: T", .outputs = "softmax: T", .attrs = "T: {" NN_FLOATS "}",
    .shape = softmax_shape, .grad = softmax_grad,
};
const tfc_op_def tfc_op_def_log_softmax = {
    .name = "LogSoftmax", .inputs = "logits: T", .outputs = "logsoftmax: T", .attrs = "T: {" NN_FLOATS "}",
    .shape = softmax_shape, .grad = log_softmax_grad,
};
const tfc_op_def tfc_op_def_softmax_cross_entropy_with_logits = {
    .name = "SoftmaxCrossEntropyWithLogits", .inputs = "features: T, labels: T", .outputs = "loss: T, backprop: T",
    .attrs = "T: {" NN_FLOATS "}", .shape = xent_shape, .grad = xent_grad, .grad_null_dy = 1u << 1,
};
const tfc_op_def tfc_op_def_sparse_softmax_cross_entropy_with_logits = {
    .name = "SparseSoftmaxCrossEntropyWithLogits", .inputs = "features: T, labels: Tlabels",
    .outputs = "loss: T, backprop: T", .attrs = "T: {" NN_FLOATS "}, Tlabels: {int32, int64} = int64",
    .shape = sparse_xent_shape, .grad = sparse_xent_grad, .grad_null_dy = 1u << 1, /* backprop: xent_features_grad */
};
const tfc_op_def tfc_op_def_l2_loss = {
    .name = "L2Loss", .inputs = "t: T", .outputs = "output: T", .attrs = "T: {" NN_FLOATS "}",
    .shape = tfc_shape_scalar, .grad = l2_loss_grad,
};
/* TensorFlow allows T {half, bfloat16, float} and U {bfloat16, float} (U float in its kernels); double is
 * accepted in addition so that float64 references and finite-difference checks can run. */
const tfc_op_def tfc_op_def_fused_batch_norm_v3 = {
    .name = "FusedBatchNormV3", .inputs = "x: T, scale: U, offset: U, mean: U, variance: U",
    .outputs = "y: T, batch_mean: U, batch_variance: U, reserve_space_1: U, reserve_space_2: U, reserve_space_3: U",
    .attrs = "T: {half, bfloat16, float, double}, U: {bfloat16, float, double}, epsilon: float = 0.0001, "
             "exponential_avg_factor: float = 1.0, data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC', "
             "is_training: bool = true",
    .shape = fused_batch_norm_shape, .grad = fused_batch_norm_grad_fn,
};
/* TensorFlow's scale input is float (= U, which it restricts to float); it is U here so double works. */
const tfc_op_def tfc_op_def_fused_batch_norm_grad_v3 = {
    .name = "FusedBatchNormGradV3",
    .inputs = "y_backprop: T, x: T, scale: U, reserve_space_1: U, reserve_space_2: U, reserve_space_3: U",
    .outputs = "x_backprop: T, scale_backprop: U, offset_backprop: U, reserve_space_4: U, reserve_space_5: U",
    .attrs = "T: {half, bfloat16, float, double}, U: {float, double}, epsilon: float = 0.0001, "
             "data_format: {'NHWC', 'NCHW', 'NDHWC', 'NCDHW'} = 'NHWC', is_training: bool = true",
    .shape = fused_batch_norm_grad_shape, .grad = fused_batch_norm_grad_grad,
};

const tfc_op_def *const tfc_ops_nn[] = {
    &tfc_op_def_relu, &tfc_op_def_relu_grad, &tfc_op_def_relu6, &tfc_op_def_relu6_grad,
    &tfc_op_def_leaky_relu, &tfc_op_def_leaky_relu_grad, &tfc_op_def_elu, &tfc_op_def_elu_grad,
    &tfc_op_def_selu, &tfc_op_def_selu_grad, &tfc_op_def_softplus, &tfc_op_def_softplus_grad,
    &tfc_op_def_softsign, &tfc_op_def_softsign_grad, &tfc_op_def_bias_add, &tfc_op_def_bias_add_grad,
    &tfc_op_def_softmax, &tfc_op_def_log_softmax, &tfc_op_def_softmax_cross_entropy_with_logits,
    &tfc_op_def_sparse_softmax_cross_entropy_with_logits, &tfc_op_def_l2_loss, &tfc_op_def_fused_batch_norm_v3,
    &tfc_op_def_fused_batch_norm_grad_v3, NULL,
};
