/* tf.keras.losses (tf_keras/losses.py, backend.py, utils/losses_utils.py): every loss is built from ops, so it
 * is differentiable with respect to y_pred on tapes (and again, to higher order). A loss call runs Keras's
 * LossFunctionWrapper.call (squeeze_or_expand_dimensions of y_pred and y_true, then the loss function, which
 * gives per-sample losses) and compute_weighted_loss (sample_weight squeezed or expanded by one dim to match,
 * multiplied in with broadcasting, then the reduction: "none", "sum", or "sum_over_batch_size" = sum of the
 * weighted losses / their number of elements, 0 when there are none; "auto" means the latter).
 *
 * Numerics follow Keras: probabilities are clipped to [epsilon, 1 - epsilon] (epsilon 1e-7) before logs;
 * from_logits cross-entropies use the fused softmax kernels and TensorFlow's sigmoid form
 * max(x, 0) - x * z + log1p(exp(-|x|)), finite for any logits. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eager/context_internal.h"
#include "keras/keras_internal.h"
#include "tfc/ops/array.h"
#include "tfc/ops/reduction.h"

#define EPS 1e-7 /* backend.epsilon() */

typedef enum {
    L_MSE, L_MAE, L_MAPE, L_MSLE, L_HUBER, L_BCE, L_CCE, L_SCCE, L_KLD, L_POISSON, L_LOGCOSH, L_HINGE,
    L_SQUARED_HINGE, L_CATEGORICAL_HINGE, L_COSINE, L_COUNT
} loss_kind;

/* Keras's class name, default name (= the function's name), function aliases accepted by losses.get. */
static const struct {
    const char *class_name, *fn, *aliases[4];
} kinds[L_COUNT] = {
    [L_MSE] = {"MeanSquaredError", "mean_squared_error", {"mse", "MSE"}},
    [L_MAE] = {"MeanAbsoluteError", "mean_absolute_error", {"mae", "MAE"}},
    [L_MAPE] = {"MeanAbsolutePercentageError", "mean_absolute_percentage_error", {"mape", "MAPE"}},
    [L_MSLE] = {"MeanSquaredLogarithmicError", "mean_squared_logarithmic_error", {"msle", "MSLE"}},
    [L_HUBER] = {"Huber", "huber_loss", {"huber"}},
    [L_BCE] = {"BinaryCrossentropy", "binary_crossentropy", {"bce", "BCE"}},
    [L_CCE] = {"CategoricalCrossentropy", "categorical_crossentropy", {0}},
    [L_SCCE] = {"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy", {0}},
    [L_KLD] = {"KLDivergence", "kl_divergence", {"kld", "KLD", "kullback_leibler_divergence"}},
    [L_POISSON] = {"Poisson", "poisson", {0}},
    [L_LOGCOSH] = {"LogCosh", "log_cosh", {"logcosh"}},
    [L_HINGE] = {"Hinge", "hinge", {0}},
    [L_SQUARED_HINGE] = {"SquaredHinge", "squared_hinge", {0}},
    [L_CATEGORICAL_HINGE] = {"CategoricalHinge", "categorical_hinge", {0}},
    [L_COSINE] = {"CosineSimilarity", "cosine_similarity", {0}},
};
/* Keras's get_config "fn" entry: the registered function name (Huber's is "huber"). */
static const char *fn_key(loss_kind k) { return k == L_HUBER ? "huber" : kinds[k].fn; }

struct tfc_loss {
    loss_kind kind;
    char *name;
    char reduction[24];
    bool from_logits;
    double label_smoothing;
    double delta;
    int64_t axis;
};

static tfc_loss *loss_new(loss_kind k, const tfc_loss_opts *o) {
    tfc_loss *l = tfc_calloc(1, sizeof *l);
    const char *name = o && o->name ? o->name : kinds[k].fn;
    if (!l || !(l->name = tfc_strdup(name))) {
        tfc_free(l);
        return NULL;
    }
    l->kind = k;
    snprintf(l->reduction, sizeof l->reduction, "%s", o && o->reduction ? o->reduction : "auto");
    l->from_logits = o && o->from_logits;
    l->label_smoothing = o ? o->label_smoothing : 0;
    l->delta = o && o->delta != 0 ? o->delta : 1.0;
    l->axis = -1;
    return l;
}

tfc_loss *tfc_losses_mean_squared_error_new(const tfc_loss_opts *o) { return loss_new(L_MSE, o); }
tfc_loss *tfc_losses_mean_absolute_error_new(const tfc_loss_opts *o) { return loss_new(L_MAE, o); }
tfc_loss *tfc_losses_mean_absolute_percentage_error_new(const tfc_loss_opts *o) { return loss_new(L_MAPE, o); }
tfc_loss *tfc_losses_mean_squared_logarithmic_error_new(const tfc_loss_opts *o) { return loss_new(L_MSLE, o); }
tfc_loss *tfc_losses_huber_new(const tfc_loss_opts *o) { return loss_new(L_HUBER, o); }
tfc_loss *tfc_losses_binary_crossentropy_new(const tfc_loss_opts *o) { return loss_new(L_BCE, o); }
tfc_loss *tfc_losses_categorical_crossentropy_new(const tfc_loss_opts *o) { return loss_new(L_CCE, o); }
tfc_loss *tfc_losses_sparse_categorical_crossentropy_new(const tfc_loss_opts *o) { return loss_new(L_SCCE, o); }
tfc_loss *tfc_losses_kl_divergence_new(const tfc_loss_opts *o) { return loss_new(L_KLD, o); }
tfc_loss *tfc_losses_poisson_new(const tfc_loss_opts *o) { return loss_new(L_POISSON, o); }
tfc_loss *tfc_losses_log_cosh_new(const tfc_loss_opts *o) { return loss_new(L_LOGCOSH, o); }
tfc_loss *tfc_losses_hinge_new(const tfc_loss_opts *o) { return loss_new(L_HINGE, o); }
tfc_loss *tfc_losses_squared_hinge_new(const tfc_loss_opts *o) { return loss_new(L_SQUARED_HINGE, o); }
tfc_loss *tfc_losses_categorical_hinge_new(const tfc_loss_opts *o) { return loss_new(L_CATEGORICAL_HINGE, o); }
tfc_loss *tfc_losses_cosine_similarity_new(const tfc_loss_opts *o) { return loss_new(L_COSINE, o); }

void tfc_loss_free(tfc_loss *l) {
    if (!l) return;
    tfc_free(l->name);
    tfc_free(l);
}

const char *tfc_loss_name(const tfc_loss *l) { return l->name; }

/* ---- op helpers (NULL-propagating: a NULL input returns NULL with st already set) -------------------------- */

static tfc_tensor *op1(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_status *st) {
    return a ? tfc_emit(ctx, op, &a, 1, NULL, 0, st) : NULL;
}
static tfc_tensor *op2(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return a && b ? tfc_emit(ctx, op, (tfc_tensor *[]){a, b}, 2, NULL, 0, st) : NULL;
}
/* A scalar constant of dtype dt owned by the current scope. */
static tfc_tensor *kc(tfc_ctx *ctx, tfc_dtype dt, double v, tfc_status *st) {
    tfc_tensor *t = tfc_scalar(dt, v, st);
    return t && tfc_scope_track(ctx, t, st) ? t : NULL;
}
static tfc_tensor *cast(tfc_ctx *ctx, tfc_tensor *x, tfc_dtype dt, tfc_status *st) {
    if (!x || tfc_tensor_dtype(x) == dt) return x;
    tfc_attr a = TFC_ATTR_T("DstT", dt);
    return tfc_emit(ctx, "Cast", &x, 1, &a, 1, st);
}
static tfc_tensor *reduce(tfc_ctx *ctx, const char *op, tfc_tensor *x, int64_t axis, bool keepdims, tfc_status *st) {
    if (!x) return NULL;
    tfc_tensor *ax = tfc_scalar_i64(axis, st);
    if (!ax || !tfc_scope_track(ctx, ax, st)) return NULL;
    tfc_attr a = TFC_ATTR_B("keep_dims", keepdims);
    return tfc_emit(ctx, op, (tfc_tensor *[]){x, ax}, 2, &a, 1, st);
}
static tfc_tensor *mean_last(tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) { return reduce(ctx, "Mean", x, -1, false, st); }
static tfc_tensor *clip(tfc_ctx *ctx, tfc_tensor *x, double lo, double hi, tfc_status *st) {
    if (!x) return NULL;
    tfc_dtype dt = tfc_tensor_dtype(x);
    tfc_tensor *a = kc(ctx, dt, lo, st), *b = kc(ctx, dt, hi, st);
    return a && b ? tfc_emit(ctx, "ClipByValue", (tfc_tensor *[]){x, a, b}, 3, NULL, 0, st) : NULL;
}
/* Reshape, or x itself when the result would have x's shape (the cross-entropies flatten labels and logits
 * that are usually flat already): the same values and gradient without a Reshape op (and its Shape + Reshape
 * on the tape). A -1 stands for x's own dim when every other dim matches x's and x is not empty (an empty x
 * leaves the -1 to Reshape, which rejects it). */
static tfc_tensor *reshape(tfc_ctx *ctx, tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st) {
    if (!x) return NULL;
    bool same = rank == tfc_tensor_rank(x);
    int unknown = 0;
    for (int i = 0; same && i < rank; i++) {
        if (dims[i] == -1) unknown++;
        else same = dims[i] == tfc_tensor_dim(x, i);
    }
    if (same && (unknown == 0 || (unknown == 1 && tfc_tensor_num_elements(x) > 0))) return x;
    return tfc_reshape(ctx, x, dims, rank, st);
}
static tfc_tensor *squeeze_last(tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    int64_t ax = -1;
    return tfc_squeeze(ctx, x, &ax, 1, st);
}

#define OP1(op, a) op1(ctx, op, a, st)
#define OP2(op, a, b) op2(ctx, op, a, b, st)
#define K(v) kc(ctx, dt, (v), st)

static bool fail(const tfc_loss *l, tfc_status *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(const tfc_loss *l, tfc_status *st, const char *fmt, ...) {
    char msg[220];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s", l->name, msg);
}

/* ---- the loss functions: per-sample losses ------------------------------------------------------------- */

/* TensorFlow's sigmoid_cross_entropy_with_logits: relu(x) - x * z + log1p(exp(-|x|)), with the selects of
 * nn_impl.py (so the gradient at x = 0 is TensorFlow's). */
static tfc_tensor *sigmoid_ce(tfc_ctx *ctx, tfc_tensor *z, tfc_tensor *x, tfc_status *st) {
    if (!x) return NULL;
    tfc_tensor *zeros = OP1("ZerosLike", x);
    tfc_tensor *cond = OP2("GreaterEqual", x, zeros);
    tfc_tensor *relu = cond ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){cond, x, zeros}, 3, NULL, 0, st) : NULL;
    tfc_tensor *neg = OP1("Neg", x);
    tfc_tensor *neg_abs = cond && neg ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){cond, neg, x}, 3, NULL, 0, st) : NULL;
    return OP2("AddV2", OP2("Sub", relu, OP2("Mul", x, z)), OP1("Log1p", OP1("Exp", neg_abs)));
}

/* softmax_cross_entropy_with_logits over the last axis for any rank: flattened to [rows, classes]. */
static tfc_tensor *softmax_ce(tfc_ctx *ctx, tfc_tensor *labels, tfc_tensor *logits, tfc_status *st) {
    if (!labels || !logits) return NULL;
    const tfc_shape *s = tfc_tensor_shape(logits);
    int r = s->rank;
    int64_t c = s->dims[r - 1];
    int64_t flat[2] = {-1, c};
    tfc_tensor *l2 = reshape(ctx, logits, flat, 2, st), *y2 = reshape(ctx, labels, flat, 2, st);
    if (!l2 || !y2) return NULL;
    tfc_tensor *out[2];
    if (tfc_execute(ctx, "SoftmaxCrossEntropyWithLogits", (tfc_tensor *[]){l2, y2}, 2, NULL, 0, out, 2, st) < 0)
        return NULL;
    return reshape(ctx, out[0], s->dims, r - 1, st);
}

/* Keras's _maybe_convert_labels: labels all in {0, 1} become {-1, 1} (read on the host: eager only). */
static tfc_tensor *hinge_labels(tfc_ctx *ctx, tfc_tensor *yt, tfc_status *st) {
    if (!yt) return NULL;
    tfc_dtype dt = tfc_tensor_dtype(yt);
    for (int64_t i = 0; i < tfc_tensor_num_elements(yt); i++) {
        double v = tfc_tensor_get_f64(yt, i);
        if (v != 0 && v != 1) return yt;
    }
    return OP2("Sub", OP2("Mul", K(2.0), yt), K(1.0));
}

static tfc_tensor *l2_normalize(tfc_ctx *ctx, tfc_tensor *x, tfc_status *st) {
    if (!x) return NULL;
    tfc_dtype dt = tfc_tensor_dtype(x);
    tfc_tensor *ss = reduce(ctx, "Sum", OP1("Square", x), -1, true, st);
    return OP2("Mul", x, OP1("Rsqrt", OP2("Maximum", ss, K(1e-12))));
}

static tfc_tensor *sparse_ce(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *yt, tfc_tensor *yp, tfc_status *st) {
    const tfc_shape *ps = tfc_tensor_shape(yp);
    if (ps->rank < 1) {
        fail(l, st, "y_pred must have a class axis, got shape %s", TFC_KSHP(ps));
        return NULL;
    }
    int64_t classes = ps->dims[ps->rank - 1];
    /* Keras casts the labels to int64; int32 labels go to the op as they are (it takes both, same values) */
    tfc_tensor *labels = tfc_tensor_dtype(yt) == TFC_INT32 ? yt : cast(ctx, yt, TFC_INT64, st);
    if (!labels) return NULL;
    int64_t rows = classes > 0 ? tfc_tensor_num_elements(yp) / classes : 0;
    if (tfc_tensor_num_elements(labels) != rows) {
        fail(l, st, "labels of shape %s do not match logits of shape %s (expected %lld labels)",
             TFC_KSHP(tfc_tensor_shape(yt)), TFC_KSHP(ps), (long long)rows);
        return NULL;
    }
    const void *lp = tfc_tensor_data(labels);
    const bool i32 = tfc_tensor_dtype(labels) == TFC_INT32;
    for (int64_t i = 0; lp && i < rows; i++) {
        const int64_t lv = i32 ? ((const int32_t *)lp)[i] : ((const int64_t *)lp)[i];
        if (lv < 0 || lv >= classes) {
            fail(l, st, "Received a label value of %lld which is outside the valid range of [0, %lld). Label values: %s",
                 (long long)lv, (long long)classes,
                 tfc_tensor_str(labels, (char[96]){0}, 96, 12));
            return NULL;
        }
    }
    tfc_tensor *logits = yp;
    if (!l->from_logits) logits = OP1("Log", clip(ctx, yp, EPS, 1.0 - EPS, st));
    int64_t flat = -1, flat2[2] = {-1, classes};
    tfc_tensor *out[2];
    tfc_tensor *lab1 = reshape(ctx, labels, &flat, 1, st), *log2 = reshape(ctx, logits, flat2, 2, st);
    if (!lab1 || !log2) return NULL;
    if (tfc_execute(ctx, "SparseSoftmaxCrossEntropyWithLogits", (tfc_tensor *[]){log2, lab1}, 2, NULL, 0, out, 2, st) < 0)
        return NULL;
    return reshape(ctx, out[0], ps->dims, ps->rank - 1, st);
}

static tfc_tensor *per_sample(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *yt, tfc_tensor *yp, tfc_status *st) {
    if (l->kind == L_SCCE) return sparse_ce(l, ctx, yt, yp, st);
    tfc_dtype dt = tfc_tensor_dtype(yp);
    if (l->kind == L_HUBER) { /* Keras casts both to floatx (float32) */
        dt = TFC_FLOAT;
        yp = cast(ctx, yp, dt, st);
    }
    yt = cast(ctx, yt, dt, st);
    if (!yt || !yp) return NULL;
    switch (l->kind) {
    case L_MSE: return mean_last(ctx, OP2("SquaredDifference", yp, yt), st);
    case L_MAE: return mean_last(ctx, OP1("Abs", OP2("Sub", yp, yt)), st);
    case L_MAPE: {
        tfc_tensor *d = OP1("Abs", OP2("RealDiv", OP2("Sub", yt, yp), OP2("Maximum", OP1("Abs", yt), K(EPS))));
        return OP2("Mul", K(100.0), mean_last(ctx, d, st));
    }
    case L_MSLE: {
        tfc_tensor *a = OP1("Log", OP2("AddV2", OP2("Maximum", yp, K(EPS)), K(1.0)));
        tfc_tensor *b = OP1("Log", OP2("AddV2", OP2("Maximum", yt, K(EPS)), K(1.0)));
        return mean_last(ctx, OP2("SquaredDifference", a, b), st);
    }
    case L_HUBER: {
        tfc_tensor *err = OP2("Sub", yp, yt), *abs_err = OP1("Abs", err), *half = K(0.5), *delta = K(l->delta);
        tfc_tensor *quad = OP2("Mul", half, OP1("Square", err));
        tfc_tensor *lin = OP2("Sub", OP2("Mul", delta, abs_err), OP2("Mul", half, OP1("Square", delta)));
        tfc_tensor *cond = OP2("LessEqual", abs_err, delta);
        tfc_tensor *sel = cond && quad && lin ? tfc_emit(ctx, "SelectV2", (tfc_tensor *[]){cond, quad, lin}, 3, NULL, 0, st) : NULL;
        return mean_last(ctx, sel, st);
    }
    case L_BCE: {
        if (l->label_smoothing != 0) { /* y * (1 - ls) + 0.5 * ls, in y_pred's dtype */
            tfc_tensor *ls = K(l->label_smoothing);
            yt = OP2("AddV2", OP2("Mul", yt, OP2("Sub", K(1.0), ls)), OP2("Mul", K(0.5), ls));
        }
        tfc_tensor *ce;
        if (l->from_logits) {
            ce = sigmoid_ce(ctx, yt, yp, st);
        } else {
            tfc_tensor *p = clip(ctx, yp, EPS, 1.0 - EPS, st), *eps = K(EPS), *one = K(1.0);
            tfc_tensor *b = OP2("Mul", yt, OP1("Log", OP2("AddV2", p, eps)));
            b = OP2("AddV2", b, OP2("Mul", OP2("Sub", one, yt), OP1("Log", OP2("AddV2", OP2("Sub", one, p), eps))));
            ce = OP1("Neg", b);
        }
        return mean_last(ctx, ce, st);
    }
    case L_CCE: {
        if (!tfc_shape_equal(tfc_tensor_shape(yt), tfc_tensor_shape(yp))) {
            fail(l, st, "Shapes %s and %s are incompatible", TFC_KSHP(tfc_tensor_shape(yt)), TFC_KSHP(tfc_tensor_shape(yp)));
            return NULL;
        }
        if (tfc_tensor_rank(yp) < 1) {
            fail(l, st, "y_pred must have a class axis, got shape %s", TFC_KSHP(tfc_tensor_shape(yp)));
            return NULL;
        }
        if (l->label_smoothing != 0) {
            tfc_tensor *ls = K(l->label_smoothing);
            yt = OP2("AddV2", OP2("Mul", yt, OP2("Sub", K(1.0), ls)), OP2("RealDiv", ls, K((double)tfc_tensor_dim(yp, -1))));
        }
        if (l->from_logits) return softmax_ce(ctx, yt, yp, st);
        tfc_tensor *p = OP2("RealDiv", yp, reduce(ctx, "Sum", yp, -1, true, st));
        p = clip(ctx, p, EPS, 1.0 - EPS, st);
        return OP1("Neg", reduce(ctx, "Sum", OP2("Mul", yt, OP1("Log", p)), -1, false, st));
    }
    case L_KLD: {
        tfc_tensor *t = clip(ctx, yt, EPS, 1.0, st), *p = clip(ctx, yp, EPS, 1.0, st);
        return reduce(ctx, "Sum", OP2("Mul", t, OP1("Log", OP2("RealDiv", t, p))), -1, false, st);
    }
    case L_POISSON:
        return mean_last(ctx, OP2("Sub", yp, OP2("Mul", yt, OP1("Log", OP2("AddV2", yp, K(EPS))))), st);
    case L_LOGCOSH: {
        tfc_tensor *x = OP2("Sub", yp, yt);
        tfc_tensor *v = OP2("Sub", OP2("AddV2", x, OP1("Softplus", OP2("Mul", K(-2.0), x))), K(log(2.0)));
        return mean_last(ctx, v, st);
    }
    case L_HINGE:
    case L_SQUARED_HINGE: {
        tfc_tensor *h = OP2("Maximum", OP2("Sub", K(1.0), OP2("Mul", hinge_labels(ctx, yt, st), yp)), K(0.0));
        return mean_last(ctx, l->kind == L_HINGE ? h : OP1("Square", h), st);
    }
    case L_CATEGORICAL_HINGE: {
        tfc_tensor *pos = reduce(ctx, "Sum", OP2("Mul", yt, yp), -1, false, st);
        tfc_tensor *neg = reduce(ctx, "Max", OP2("Mul", OP2("Sub", K(1.0), yt), yp), -1, false, st);
        return OP2("Maximum", OP2("AddV2", OP2("Sub", neg, pos), K(1.0)), K(0.0));
    }
    case L_COSINE:
        return OP1("Neg", reduce(ctx, "Sum", OP2("Mul", l2_normalize(ctx, yt, st), l2_normalize(ctx, yp, st)), -1, false, st));
    default: break;
    }
    tfc_status_set(st, TFC_INTERNAL, "%s: unknown loss kind", l->name);
    return NULL;
}

/* ---- the call: squeeze/expand, per-sample losses, weighting, reduction ------------------------------------ */

/* losses_utils.squeeze_or_expand_dimensions(y_pred, y_true): drops a trailing size-1 dim that makes the ranks
 * differ by one (unless y_pred has exactly one more dim than y_true that is not 1, the sparse case). */
static bool squeeze_pair(tfc_ctx *ctx, tfc_tensor **yp, tfc_tensor **yt, tfc_status *st) {
    int rp = tfc_tensor_rank(*yp), rt = tfc_tensor_rank(*yt);
    if (rp - rt == 1 && tfc_tensor_dim(*yp, -1) != 1) return true;
    if (rp - rt == 1 && tfc_tensor_dim(*yp, -1) == 1) return (*yp = squeeze_last(ctx, *yp, st)) != NULL;
    if (rp - rt == -1 && tfc_tensor_dim(*yt, -1) == 1) return (*yt = squeeze_last(ctx, *yt, st)) != NULL;
    return true;
}

static bool valid_reduction(const char *r) {
    return !strcmp(r, "auto") || !strcmp(r, "none") || !strcmp(r, "sum") || !strcmp(r, "sum_over_batch_size");
}

static tfc_tensor *call_in_scope(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *yt, tfc_tensor *yp, tfc_tensor *sw,
                                 tfc_status *st) {
    if (!valid_reduction(l->reduction)) {
        fail(l, st, "Invalid Reduction Key: %s. Expected keys are \"('auto', 'none', 'sum', 'sum_over_batch_size')\"",
             l->reduction);
        return NULL;
    }
    if (!tfc_dtype_is_floating(tfc_tensor_dtype(yp))) yp = cast(ctx, yp, TFC_FLOAT, st);
    if (!yp || !squeeze_pair(ctx, &yp, &yt, st)) return NULL;
    tfc_tensor *losses = per_sample(l, ctx, yt, yp, st);
    if (!losses) return NULL;
    tfc_dtype dt = tfc_tensor_dtype(losses);
    tfc_tensor *weighted = losses;
    if (sw) {
        sw = cast(ctx, sw, dt, st);
        if (!sw) return NULL;
        int rw = tfc_tensor_rank(sw), rl = tfc_tensor_rank(losses);
        if (rw > 0 && rw - rl == 1) {
            if (tfc_tensor_dim(sw, -1) != 1) {
                fail(l, st, "sample_weight of shape %s does not match the per-sample losses of shape %s",
                     TFC_KSHP(tfc_tensor_shape(sw)), TFC_KSHP(tfc_tensor_shape(losses)));
                return NULL;
            }
            sw = squeeze_last(ctx, sw, st);
        } else if (rw > 0 && rl - rw == 1) {
            sw = tfc_expand_dims(ctx, sw, -1, st);
        }
        tfc_shape out;
        tfc_status probe = TFC_STATUS_INIT;
        if (sw && !tfc_broadcast_shapes(tfc_tensor_shape(losses), tfc_tensor_shape(sw), &out, l->name, &probe)) {
            fail(l, st, "sample_weight of shape %s cannot be broadcast to the per-sample losses of shape %s",
                 TFC_KSHP(tfc_tensor_shape(sw)), TFC_KSHP(tfc_tensor_shape(losses)));
            return NULL;
        }
        weighted = OP2("Mul", losses, sw);
    }
    if (!weighted || !strcmp(l->reduction, "none")) return weighted;
    tfc_tensor *sum = tfc_reduce_sum(ctx, weighted, NULL, 0, false, st);
    if (!strcmp(l->reduction, "sum")) return sum;
    return OP2("DivNoNan", sum, K((double)tfc_tensor_num_elements(weighted)));
}

tfc_tensor *tfc_loss_call(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                          tfc_tensor *sample_weight, tfc_status *st) {
    if (!l || !ctx || !y_true || !y_pred) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: y_true and y_pred are required", l ? l->name : "loss");
        return NULL;
    }
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tfc_tensor *r = call_in_scope(l, ctx, y_true, y_pred, sample_weight, st);
    if (!r && st->code == TFC_OK) tfc_status_set(st, TFC_INTERNAL, "%s: loss failed", l->name);
    if (r && st->code != TFC_OK) r = NULL;
    if (!r && !strstr(st->msg, l->name)) { /* name the loss in op errors */
        char m[sizeof st->msg];
        memcpy(m, st->msg, sizeof m);
        tfc_status_set(st, st->code, "%s: %s", l->name, m);
    }
    bool ok = r && tfc_scope_end_keep(ctx, &r, 1, st);
    if (!r) tfc_scope_end(ctx);
    return ok ? r : NULL;
}

tfc_tensor *tfc_loss_call_logits(const tfc_loss *l, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                                 tfc_tensor *logits, tfc_tensor *sample_weight, tfc_status *st) {
    if (!logits || l->from_logits || (l->kind != L_BCE && l->kind != L_CCE && l->kind != L_SCCE))
        return tfc_loss_call(l, ctx, y_true, y_pred, sample_weight, st);
    /* backend._get_logits: the activation's input replaces the output, as from_logits=True */
    tfc_loss copy = *l;
    copy.from_logits = true;
    return tfc_loss_call(&copy, ctx, y_true, logits, sample_weight, st);
}

/* ---- configs ------------------------------------------------------------------------------------------- */

char *tfc_loss_get_config(const tfc_loss *l, tfc_status *st) {
    cJSON *c = cJSON_CreateObject();
    bool ok = c && cJSON_AddStringToObject(c, "reduction", l->reduction) && cJSON_AddStringToObject(c, "name", l->name);
    switch (l->kind) {
    case L_BCE:
    case L_CCE:
        ok = ok && cJSON_AddBoolToObject(c, "from_logits", l->from_logits) &&
             cJSON_AddNumberToObject(c, "label_smoothing", l->label_smoothing) &&
             cJSON_AddNumberToObject(c, "axis", (double)l->axis);
        break;
    case L_SCCE:
        ok = ok && cJSON_AddBoolToObject(c, "from_logits", l->from_logits) && cJSON_AddNullToObject(c, "ignore_class");
        break;
    case L_HUBER: ok = ok && cJSON_AddNumberToObject(c, "delta", l->delta); break;
    case L_COSINE: ok = ok && cJSON_AddNumberToObject(c, "axis", (double)l->axis); break;
    default: break;
    }
    ok = ok && cJSON_AddStringToObject(c, "fn", fn_key(l->kind));
    char *s = ok ? tfc_json_print(c) : NULL;
    cJSON_Delete(c);
    if (!s) tfc_status_oom(st, "get_config", 0);
    return s;
}

/* The kind a name or class name denotes; *is_fn when it is a function name (then the loss is named after the
 * function and takes its defaults, as Keras's compile wraps a loss function). */
static int find_kind(const char *name, bool *is_fn) {
    for (int k = 0; k < L_COUNT; k++) {
        if (!strcmp(name, kinds[k].class_name)) return *is_fn = false, k;
        if (!strcmp(name, kinds[k].fn) || (k == L_HUBER && !strcmp(name, "huber"))) return *is_fn = true, k;
        for (int a = 0; a < 4 && kinds[k].aliases[a]; a++)
            if (!strcmp(name, kinds[k].aliases[a])) return *is_fn = true, k;
    }
    return -1;
}

tfc_loss *tfc_loss_from_config(const char *name, const char *config_json, tfc_status *st) {
    cJSON *root = NULL;
    const cJSON *cfg = NULL;
    if (config_json && *config_json) {
        if (!(root = cJSON_Parse(config_json)) || !cJSON_IsObject(root)) {
            cJSON_Delete(root);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "loss config is not a JSON object: %.120s", config_json);
            return NULL;
        }
        cfg = root;
        const cJSON *cn = cJSON_GetObjectItemCaseSensitive(root, "class_name");
        const cJSON *inner = cJSON_GetObjectItemCaseSensitive(root, "config");
        if (cJSON_IsString(cn) && (!inner || cJSON_IsObject(inner))) {
            if (!name) name = cn->valuestring;
            cfg = inner;
        }
    }
    bool is_fn = false;
    int k = name ? find_kind(name, &is_fn) : -1;
    if (k < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown loss function: %s", name ? name : "(null)");
        cJSON_Delete(root);
        return NULL;
    }
    tfc_loss *l = loss_new((loss_kind)k, NULL);
    if (!l) {
        cJSON_Delete(root);
        tfc_status_oom(st, "loss", sizeof *l);
        return NULL;
    }
    const char *cname = NULL, *red = NULL;
    bool ignore_present = false;
    int64_t ignore = 0;
    bool ok = tfc_json_get_str(cfg, "name", &cname, NULL, st) && tfc_json_get_str(cfg, "reduction", &red, NULL, st) &&
              tfc_json_get_bool(cfg, "from_logits", &l->from_logits, NULL, st) &&
              tfc_json_get_f64(cfg, "label_smoothing", &l->label_smoothing, NULL, st) &&
              tfc_json_get_f64(cfg, "delta", &l->delta, NULL, st) && tfc_json_get_i64(cfg, "axis", &l->axis, NULL, st) &&
              tfc_json_get_i64(cfg, "ignore_class", &ignore, &ignore_present, st);
    if (ok && red) {
        if (!valid_reduction(red))
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "Invalid Reduction Key: %s. Expected keys are \"('auto', 'none', 'sum', "
                                "'sum_over_batch_size')\"",
                                red);
        else snprintf(l->reduction, sizeof l->reduction, "%s", red);
    }
    if (ok && ignore_present)
        ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: ignore_class is not supported", kinds[k].class_name);
    if (ok && l->axis != -1 && (k == L_BCE || k == L_CCE || k == L_COSINE))
        ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: only axis=-1 is supported, got %lld", kinds[k].class_name,
                            (long long)l->axis);
    if (ok && cname) {
        char *n = tfc_strdup(cname);
        if (!n) ok = tfc_status_oom(st, "loss name", strlen(cname));
        else {
            tfc_free(l->name);
            l->name = n;
        }
    }
    cJSON_Delete(root);
    if (!ok) {
        tfc_loss_free(l);
        return NULL;
    }
    (void)is_fn;
    tfc_status_clear(st);
    return l;
}
