/* tf.keras.metrics (tf_keras/metrics/, tf_keras/utils/metrics_utils.py): stateful metrics accumulated on the host
 * in float64 (Keras keeps float32 variables; the values entering the sums are the float32 values Keras
 * computes, so results agree to float32 rounding of the sums).
 *
 * - Mean and the MeanMetricWrapper metrics (accuracies, loss functions as metrics) follow Reduce.update_state:
 *   y_true and y_pred cast to float32, squeeze_or_expand_dimensions, the per-sample values, then sample_weight
 *   squeezed/expanded by one dim and broadcast to the values (when it cannot be, the values are first averaged
 *   over the dims the weight lacks); total += sum(values * weight), count += sum(weight) (or the number of
 *   values without weights); result = total / count (0 when count is 0).
 * - Precision, Recall and AUC follow update_confusion_matrix_variables: a prediction is positive when it is
 *   greater than the threshold; AUC's evenly spaced thresholds use Keras's bucket form
 *   (bucket = ceil(p * (T - 1)) - 1 on predictions clipped to [0, 1]) so boundary values fall as in Keras; the
 *   result is Keras's Riemann sum with summation_method "interpolation" (ROC) or the interpolated PR-AUC
 *   (Davis & Goadrich), or "minoring"/"majoring".
 * Loss-function metrics compute their per-sample values with the loss ops; the rest runs on host copies. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/size_check.h"
#include "keras/keras_internal.h"
#include "tfc/ops/math.h"

typedef enum {
    M_MEAN, M_ACCURACY, M_BINARY_ACCURACY, M_CATEGORICAL_ACCURACY, M_SPARSE_CATEGORICAL_ACCURACY, M_TOP_K,
    M_SPARSE_TOP_K, M_LOSS_FN, M_PRECISION, M_RECALL, M_AUC
} metric_kind;

typedef enum { SUM_INTERPOLATION, SUM_MINORING, SUM_MAJORING } sum_method;

struct tfc_metric {
    metric_kind kind;
    char *name;
    char class_name[40];
    double total, count;
    double threshold; /* BinaryAccuracy */
    int64_t k;        /* top-k accuracies */
    /* confusion-matrix metrics */
    int n_thr;
    double *thr;      /* float32 values */
    double thr_init;  /* Precision/Recall: the threshold as given (for get_config) */
    bool thr_given, evenly, with_epsilon;
    double *tp, *fp, *tn, *fn;
    int64_t top_k, class_id;
    bool has_top_k, has_class_id;
    bool curve_pr, from_logits;
    sum_method summation;
    /* loss functions as metrics (MeanMetricWrapper(fn)) */
    tfc_loss *loss;
};

/* ---- construction ---------------------------------------------------------------------------------------- */

static const char *const default_names[] = {
    [M_MEAN] = "mean", [M_ACCURACY] = "accuracy", [M_BINARY_ACCURACY] = "binary_accuracy",
    [M_CATEGORICAL_ACCURACY] = "categorical_accuracy", [M_SPARSE_CATEGORICAL_ACCURACY] = "sparse_categorical_accuracy",
    [M_TOP_K] = "top_k_categorical_accuracy", [M_SPARSE_TOP_K] = "sparse_top_k_categorical_accuracy",
    [M_LOSS_FN] = "mean_squared_error", [M_PRECISION] = "precision", [M_RECALL] = "recall", [M_AUC] = "auc",
};
static const char *const class_names[] = {
    [M_MEAN] = "Mean", [M_ACCURACY] = "Accuracy", [M_BINARY_ACCURACY] = "BinaryAccuracy",
    [M_CATEGORICAL_ACCURACY] = "CategoricalAccuracy", [M_SPARSE_CATEGORICAL_ACCURACY] = "SparseCategoricalAccuracy",
    [M_TOP_K] = "TopKCategoricalAccuracy", [M_SPARSE_TOP_K] = "SparseTopKCategoricalAccuracy",
    [M_LOSS_FN] = "MeanSquaredError", [M_PRECISION] = "Precision", [M_RECALL] = "Recall", [M_AUC] = "AUC",
};

static tfc_metric *metric_new(metric_kind k, const char *name) {
    tfc_metric *m = tfc_calloc(1, sizeof *m);
    if (!m || !(m->name = tfc_strdup(name ? name : default_names[k]))) {
        tfc_free(m);
        return NULL;
    }
    m->kind = k;
    snprintf(m->class_name, sizeof m->class_name, "%s", class_names[k]);
    m->threshold = 0.5;
    m->k = 5;
    return m;
}

/* Allocates the confusion-matrix accumulators for n thresholds (values thr, float32-rounded). */
static bool set_thresholds(tfc_metric *m, const double *thr, int n) {
    tfc_free(m->thr);
    tfc_free(m->tp);
    m->thr = tfc_malloc((size_t)n * sizeof *m->thr);
    m->tp = tfc_calloc((size_t)n * 4, sizeof *m->tp);
    if (!m->thr || !m->tp) return false;
    m->fp = m->tp + n, m->tn = m->tp + 2 * n, m->fn = m->tp + 3 * n;
    m->n_thr = n;
    for (int i = 0; i < n; i++) m->thr[i] = (float)thr[i];
    return true;
}

/* metrics_utils.is_evenly_distributed_thresholds */
static bool evenly(const double *t, int n) {
    if (n < 3) return false;
    for (int i = 0; i < n; i++)
        if (fabs(t[i] - (double)((float)i / (float)(n - 1))) > 1e-7 + 1e-5 * fabs((float)i / (float)(n - 1))) return false;
    return true;
}

/* AUC's thresholds: [-eps, 1/(T-1), ..., (T-2)/(T-1), 1 + eps], or [-eps, sorted given..., 1 + eps]. */
static bool auc_thresholds(tfc_metric *m, int64_t num, const double *given, int n_given) {
    int n = given ? n_given + 2 : (int)num;
    double *t = tfc_malloc((size_t)n * sizeof *t);
    if (!t) return false;
    t[0] = 0.0 - 1e-7;
    t[n - 1] = 1.0 + 1e-7;
    if (given) {
        for (int i = 0; i < n_given; i++) t[i + 1] = given[i];
        for (int i = 1; i < n - 1; i++) /* sorted(thresholds) */
            for (int j = i; j > 1 && t[j] < t[j - 1]; j--) {
                double x = t[j];
                t[j] = t[j - 1];
                t[j - 1] = x;
            }
        double *chk = tfc_malloc((size_t)n * sizeof *chk);
        if (!chk) {
            tfc_free(t);
            return false;
        }
        memcpy(chk, t, (size_t)n * sizeof *chk);
        chk[0] = 0.0, chk[n - 1] = 1.0;
        m->evenly = evenly(chk, n);
        tfc_free(chk);
    } else {
        for (int i = 0; i < n - 2; i++) t[i + 1] = (i + 1) * 1.0 / (double)(num - 1);
        m->evenly = true;
    }
    m->with_epsilon = true;
    m->thr_given = given != NULL;
    bool ok = set_thresholds(m, t, n);
    tfc_free(t);
    return ok;
}

static tfc_metric *simple(metric_kind k, const tfc_metric_opts *o) {
    tfc_metric *m = metric_new(k, o ? o->name : NULL);
    if (!m) return NULL;
    if (o && o->has_threshold) m->threshold = o->threshold;
    if (o && o->k > 0) m->k = o->k;
    return m;
}

tfc_metric *tfc_metrics_mean_new(const tfc_metric_opts *o) { return simple(M_MEAN, o); }
tfc_metric *tfc_metrics_accuracy_new(const tfc_metric_opts *o) { return simple(M_ACCURACY, o); }
tfc_metric *tfc_metrics_binary_accuracy_new(const tfc_metric_opts *o) { return simple(M_BINARY_ACCURACY, o); }
tfc_metric *tfc_metrics_categorical_accuracy_new(const tfc_metric_opts *o) { return simple(M_CATEGORICAL_ACCURACY, o); }
tfc_metric *tfc_metrics_sparse_categorical_accuracy_new(const tfc_metric_opts *o) {
    return simple(M_SPARSE_CATEGORICAL_ACCURACY, o);
}
tfc_metric *tfc_metrics_top_k_categorical_accuracy_new(const tfc_metric_opts *o) { return simple(M_TOP_K, o); }
tfc_metric *tfc_metrics_sparse_top_k_categorical_accuracy_new(const tfc_metric_opts *o) {
    return simple(M_SPARSE_TOP_K, o);
}

/* A loss function as a metric: per-sample values from the loss ops (reduction "none"). */
static tfc_metric *loss_metric(const char *loss_fn, const char *class_name, const char *name, const char *cfg) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_metric *m = metric_new(M_LOSS_FN, name ? name : loss_fn);
    if (!m) return NULL;
    snprintf(m->class_name, sizeof m->class_name, "%s", class_name);
    char json[300];
    snprintf(json, sizeof json, "{\"reduction\": \"none\"%s%s}", cfg ? ", " : "", cfg ? cfg : "");
    if (!(m->loss = tfc_loss_from_config(loss_fn, json, &st))) {
        tfc_metric_free(m);
        return NULL;
    }
    return m;
}

tfc_metric *tfc_metrics_mean_squared_error_new(const tfc_metric_opts *o) {
    return loss_metric("mean_squared_error", "MeanSquaredError", o ? o->name : NULL, NULL);
}

static tfc_metric *confusion(metric_kind k, const tfc_metric_opts *o) {
    tfc_metric *m = metric_new(k, o ? o->name : NULL);
    if (!m) return NULL;
    double t = o && o->has_threshold ? o->threshold : 0.5;
    if (!set_thresholds(m, &t, 1)) {
        tfc_metric_free(m);
        return NULL;
    }
    m->thr_given = o && o->has_threshold;
    m->thr_init = t;
    return m;
}

tfc_metric *tfc_metrics_precision_new(const tfc_metric_opts *o) { return confusion(M_PRECISION, o); }
tfc_metric *tfc_metrics_recall_new(const tfc_metric_opts *o) { return confusion(M_RECALL, o); }

tfc_metric *tfc_metrics_auc_new(const tfc_metric_opts *o) {
    tfc_metric *m = metric_new(M_AUC, o ? o->name : NULL);
    if (!m) return NULL;
    int64_t n = o && o->num_thresholds > 0 ? o->num_thresholds : 200;
    m->curve_pr = o && o->curve && (!strcmp(o->curve, "PR") || !strcmp(o->curve, "pr"));
    if (n < 2) n = 2; /* Keras raises for num_thresholds <= 1; update_state reports it */
    if (!auc_thresholds(m, n, NULL, 0)) {
        tfc_metric_free(m);
        return NULL;
    }
    return m;
}

void tfc_metric_free(tfc_metric *m) {
    if (!m) return;
    tfc_loss_free(m->loss);
    tfc_free(m->thr);
    tfc_free(m->tp);
    tfc_free(m->name);
    tfc_free(m);
}

const char *tfc_metric_name(const tfc_metric *m) { return m->name; }

void tfc_metric_reset_state(tfc_metric *m) {
    m->total = m->count = 0;
    if (m->tp) memset(m->tp, 0, (size_t)m->n_thr * 4 * sizeof *m->tp);
}

/* The state is (total, count, then the confusion counts): every Keras metric variable is SUM-aggregated, so the
 * state summed over replicas gives the metric of all their data. */
int tfc_metric_state_size(const tfc_metric *m) { return 2 + (m->tp ? m->n_thr * 4 : 0); }
void tfc_metric_state_get(const tfc_metric *m, double *out) {
    out[0] = m->total;
    out[1] = m->count;
    if (m->tp) memcpy(out + 2, m->tp, (size_t)m->n_thr * 4 * sizeof *m->tp);
}
void tfc_metric_state_set(tfc_metric *m, const double *in) {
    m->total = in[0];
    m->count = in[1];
    if (m->tp) memcpy(m->tp, in + 2, (size_t)m->n_thr * 4 * sizeof *m->tp);
}

/* ---- host arrays ----------------------------------------------------------------------------------------- */

typedef struct {
    double *v;       /* values as float32 (Keras casts to the metric dtype) */
    tfc_shape shape;
    int64_t n;
} host;

static bool fail(const tfc_metric *m, tfc_status *st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static bool fail(const tfc_metric *m, tfc_status *st, const char *fmt, ...) {
    char msg[220];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s", m->name, msg);
}

static bool to_host(const tfc_metric *m, const tfc_tensor *t, host *h, tfc_status *st) {
    h->shape = *tfc_tensor_shape(t);
    h->n = tfc_tensor_num_elements(t);
    if (!tfc_tensor_data(t)) return fail(m, st, "needs tensors with values (got a symbolic tensor)");
    tfc_dtype dt = tfc_tensor_dtype(t);
    if (dt == TFC_STRING || dt == TFC_RESOURCE) return fail(m, st, "cannot use a %s tensor", tfc_dtype_name(dt));
    h->v = tfc_malloc((size_t)(h->n > 0 ? h->n : 1) * sizeof *h->v);
    if (!h->v) return tfc_status_oom(st, m->name, (size_t)h->n * sizeof *h->v);
    const void *d = tfc_tensor_data(t);
    if (dt == TFC_FLOAT)
        for (int64_t i = 0; i < h->n; i++) h->v[i] = ((const float *)d)[i];
    else
        for (int64_t i = 0; i < h->n; i++) h->v[i] = (float)tfc_dtype_get_f64(dt, d, i);
    return true;
}

static void drop_last(tfc_shape *s) { s->rank--; }
static int64_t last(const tfc_shape *s) { return s->rank > 0 ? s->dims[s->rank - 1] : -1; }

/* losses_utils.squeeze_or_expand_dimensions(y_pred, y_true) on shapes. */
static void squeeze_pair(tfc_shape *yp, tfc_shape *yt) {
    int d = yp->rank - yt->rank;
    if (d == 1 && last(yp) != 1) return;
    if (d == 1 && last(yp) == 1) drop_last(yp);
    else if (d == -1 && last(yt) == 1) drop_last(yt);
}

/* Numpy broadcasting of weights (shape ws) to values (shape vs), when ws has vs's rank (or is a scalar) and
 * each dim is 1 or equal (TensorFlow's broadcast_weights). out gets vs's element count. */
static bool broadcast_to(const double *w, const tfc_shape *ws, const tfc_shape *vs, double *out, int64_t n) {
    if (ws->rank == 0) {
        for (int64_t i = 0; i < n; i++) out[i] = w[0];
        return true;
    }
    if (ws->rank != vs->rank) return false;
    for (int i = 0; i < vs->rank; i++)
        if (ws->dims[i] != 1 && ws->dims[i] != vs->dims[i]) return false;
    for (int64_t i = 0; i < n; i++) {
        int64_t rem = i, wi = 0, stride = 1;
        for (int d = vs->rank - 1; d >= 0; d--) {
            int64_t c = rem % vs->dims[d];
            rem /= vs->dims[d];
            if (ws->dims[d] != 1) wi += c * stride;
            stride *= ws->dims[d]; /* size-ok: a stride of the weights, which exist */
        }
        out[i] = w[wi];
    }
    return true;
}

/* Reduce.update_state (WEIGHTED_MEAN) on host values. */
static bool reduce_update(tfc_metric *m, host *vals, const tfc_tensor *sample_weight, tfc_status *st) {
    if (!sample_weight) {
        double s = 0;
        for (int64_t i = 0; i < vals->n; i++) s += vals->v[i];
        m->total += s;
        m->count += (double)vals->n;
        return true;
    }
    host w = {0};
    if (!to_host(m, sample_weight, &w, st)) return false;
    /* squeeze_or_expand_dimensions(values, sample_weight=w) */
    if (w.shape.rank > 0) {
        if (w.shape.rank - vals->shape.rank == 1) {
            if (last(&w.shape) != 1) {
                tfc_free(w.v);
                return fail(m, st, "sample_weight of shape %s does not match values of shape %s", TFC_KSHP(&w.shape),
                            TFC_KSHP(&vals->shape));
            }
            drop_last(&w.shape);
        } else if (vals->shape.rank - w.shape.rank == 1) {
            w.shape.dims[w.shape.rank++] = 1;
        }
    }
    double *bw = tfc_malloc((size_t)(vals->n > 0 ? vals->n : 1) * sizeof *bw);
    if (!bw) {
        tfc_free(w.v);
        return tfc_status_oom(st, m->name, (size_t)vals->n * sizeof *bw);
    }
    bool ok = true;
    double s = 0, c = 0;
    if (broadcast_to(w.v, &w.shape, &vals->shape, bw, vals->n)) {
        for (int64_t i = 0; i < vals->n; i++) s += vals->v[i] * bw[i], c += bw[i];
    } else if (w.shape.rank <= vals->shape.rank) {
        /* values averaged over the trailing dims the weights lack, then weighted */
        int64_t inner = tfc_dims_product(vals->shape.dims, w.shape.rank, vals->shape.rank),
                outer = tfc_dims_product(vals->shape.dims, 0, w.shape.rank);
        bool same = w.n == outer;
        for (int i = 0; same && i < w.shape.rank; i++) same = w.shape.dims[i] == vals->shape.dims[i];
        if (!same) {
            ok = fail(m, st, "sample_weight of shape %s cannot be broadcast to values of shape %s", TFC_KSHP(&w.shape),
                      TFC_KSHP(&vals->shape));
        } else {
            for (int64_t o = 0; o < outer; o++) {
                double mean = 0;
                for (int64_t i = 0; i < inner; i++) mean += vals->v[o * inner + i];
                mean = inner > 0 ? (float)(mean / (double)inner) : NAN;
                s += mean * w.v[o];
                c += w.v[o];
            }
        }
    } else {
        ok = fail(m, st, "sample_weight of shape %s cannot be broadcast to values of shape %s", TFC_KSHP(&w.shape),
                  TFC_KSHP(&vals->shape));
    }
    if (ok) m->total += s, m->count += c;
    tfc_free(bw);
    tfc_free(w.v);
    return ok;
}

/* argmax over the last axis (first index on ties, NaN skipped as TensorFlow's ArgMax). */
static double argmax_row(const double *row, int64_t c) {
    int64_t best = 0;
    for (int64_t j = 1; j < c; j++)
        if (row[j] > row[best] || (row[best] != row[best] && row[j] == row[j])) best = j;
    return (double)best;
}

/* tf.math.in_top_k: fewer than k predictions beat the target's; false for a bad target or non-finite row. */
static double in_top_k(const double *row, int64_t c, double target, int64_t k) {
    if (!(target >= 0 && target < (double)c) || target != floor(target)) return 0;
    double p = row[(int64_t)target];
    int64_t more = 0;
    for (int64_t j = 0; j < c; j++) {
        if (!isfinite(row[j])) return 0;
        if (row[j] > p) more++;
    }
    return more < k ? 1 : 0;
}

/* The MeanMetricWrapper "matches" of the accuracy metrics, written into vals (shape set). */
static bool matches(tfc_metric *m, host *yt, host *yp, host *vals, tfc_status *st) {
    squeeze_pair(&yp->shape, &yt->shape);
    switch (m->kind) {
    case M_ACCURACY:
    case M_BINARY_ACCURACY: {
        if (!tfc_shape_equal(&yt->shape, &yp->shape))
            return fail(m, st, "Shapes %s and %s are incompatible", TFC_KSHP(&yt->shape), TFC_KSHP(&yp->shape));
        vals->shape = yp->shape;
        vals->n = yp->n;
        float thr = (float)m->threshold;
        for (int64_t i = 0; i < yp->n; i++) {
            double p = m->kind == M_ACCURACY ? yp->v[i] : (yp->v[i] > thr ? 1.0 : 0.0);
            vals->v[i] = yt->v[i] == p ? 1.0 : 0.0;
        }
        return true;
    }
    case M_CATEGORICAL_ACCURACY:
    case M_SPARSE_CATEGORICAL_ACCURACY:
    case M_TOP_K:
    case M_SPARSE_TOP_K: {
        bool sparse = m->kind == M_SPARSE_CATEGORICAL_ACCURACY || m->kind == M_SPARSE_TOP_K;
        if (yp->shape.rank < 1) return fail(m, st, "y_pred must have a class axis, got shape %s", TFC_KSHP(&yp->shape));
        int64_t c = last(&yp->shape), rows = c > 0 ? yp->n / c : 0;
        /* labels: the sparse metrics take y_true (its last dim squeezed when ranks are equal); the categorical
         * ones argmax it */
        tfc_shape ls = yt->shape;
        if (sparse) {
            if (m->kind == M_SPARSE_CATEGORICAL_ACCURACY && ls.rank == yp->shape.rank) {
                if (last(&ls) != 1)
                    return fail(m, st, "Can not squeeze dim[%d], expected a dimension of 1, got %lld (y_true %s)",
                                ls.rank - 1, (long long)last(&ls), TFC_KSHP(&yt->shape));
            }
            if (yt->n != rows)
                return fail(m, st, "y_true of shape %s does not match y_pred of shape %s", TFC_KSHP(&yt->shape),
                            TFC_KSHP(&yp->shape));
        } else {
            if (!tfc_shape_equal(&yt->shape, &yp->shape))
                return fail(m, st, "Shapes %s and %s are incompatible", TFC_KSHP(&yt->shape), TFC_KSHP(&yp->shape));
            drop_last(&ls);
        }
        for (int64_t r = 0; r < rows; r++) {
            double label = sparse ? yt->v[r] : argmax_row(yt->v + r * c, c);
            const double *row = yp->v + r * c;
            if (m->kind == M_TOP_K || m->kind == M_SPARSE_TOP_K) vals->v[r] = in_top_k(row, c, label, m->k);
            else vals->v[r] = (float)label == (float)argmax_row(row, c) ? 1.0 : 0.0;
        }
        vals->n = rows;
        /* matches keep y_true's shape (sparse) or y_true without its class axis (categorical) */
        vals->shape = ls;
        if (sparse && m->kind == M_SPARSE_CATEGORICAL_ACCURACY && ls.rank == yp->shape.rank) vals->shape = yt->shape;
        return true;
    }
    default: break;
    }
    return tfc_status_set(st, TFC_INTERNAL, "%s: not an accuracy metric", m->name);
}

/* ---- confusion-matrix metrics ------------------------------------------------------------------------------ */

static bool confusion_update(tfc_metric *m, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                             tfc_tensor *sample_weight, tfc_status *st) {
    host yt = {0}, yp = {0}, w = {0};
    double *bw = NULL;
    bool ok = to_host(m, y_true, &yt, st) && to_host(m, y_pred, &yp, st) &&
              (!sample_weight || to_host(m, sample_weight, &w, st));
    if (ok && m->kind == M_AUC && m->from_logits)
        for (int64_t i = 0; i < yp.n; i++) yp.v[i] = (float)(1.0 / (1.0 + exp(-yp.v[i])));
    if (ok) {
        squeeze_pair(&yp.shape, &yt.shape);
        if (sample_weight && w.shape.rank > 0) {
            if (w.shape.rank - yp.shape.rank == 1 && last(&w.shape) == 1) drop_last(&w.shape);
            else if (yp.shape.rank - w.shape.rank == 1) w.shape.dims[w.shape.rank++] = 1;
        }
        if (!tfc_shape_equal(&yt.shape, &yp.shape))
            ok = fail(m, st, "Shapes %s and %s are incompatible", TFC_KSHP(&yt.shape), TFC_KSHP(&yp.shape));
    }
    if (ok && sample_weight) {
        if (!(bw = tfc_malloc((size_t)(yp.n > 0 ? yp.n : 1) * sizeof *bw))) ok = tfc_status_oom(st, m->name, 0);
        else if (!broadcast_to(w.v, &w.shape, &yp.shape, bw, yp.n))
            ok = fail(m, st, "sample_weight of shape %s cannot be broadcast to y_pred of shape %s", TFC_KSHP(&w.shape),
                      TFC_KSHP(&yp.shape));
    }
    int64_t c = last(&yp.shape);
    if (ok && m->has_top_k) { /* _filter_top_k: all but the k largest of each row become -1e10 */
        if (c <= 0) ok = fail(m, st, "top_k needs a class axis, got shape %s", TFC_KSHP(&yp.shape));
        bool *drop = ok ? tfc_malloc((size_t)c * sizeof *drop) : NULL;
        if (ok && !drop) ok = tfc_status_oom(st, m->name, (size_t)c);
        for (int64_t r = 0; ok && r < yp.n / c; r++) {
            double *row = yp.v + r * c;
            for (int64_t j = 0; j < c; j++) { /* tf.math.top_k keeps the lower index among equal values */
                int64_t better = 0;
                for (int64_t i = 0; i < c; i++)
                    if (row[i] > row[j] || (row[i] == row[j] && i < j)) better++;
                drop[j] = better >= m->top_k;
            }
            for (int64_t j = 0; j < c; j++)
                if (drop[j]) row[j] = -1e10;
        }
        tfc_free(drop);
    }
    int64_t stride = 1, offset = 0, n = yp.n;
    if (ok && m->has_class_id) { /* y[..., class_id] */
        if (c <= 0 || m->class_id < 0 || m->class_id >= c)
            ok = fail(m, st, "class_id %lld is out of range for y_pred of shape %s", (long long)m->class_id,
                      TFC_KSHP(&yp.shape));
        stride = c, offset = m->class_id, n = c > 0 ? yp.n / c : 0;
    }
    if (ok) {
        int T = m->n_thr;
        if (m->evenly && !m->has_top_k) {
            /* _update_confusion_matrix_variables_optimized: per-bucket sums, then reversed cumulative sums */
            double *tb = tfc_calloc((size_t)T * 2, sizeof *tb);
            if (!tb) ok = tfc_status_oom(st, m->name, (size_t)T * 16);
            for (int64_t e = 0; ok && e < n; e++) {
                int64_t i = offset + e * stride;
                float p = (float)fmin(fmax(yp.v[i], 0.0), 1.0);
                float b = ceilf(p * (float)(T - 1)) - 1.0f;
                if (m->with_epsilon && b < 0) b = 0;
                if (!(b >= 0 && b < T)) continue;
                double wt = bw ? bw[i] : 1.0;
                double lab = yt.v[i] != 0 ? 1.0 : 0.0;
                tb[(int)b] += lab * wt;
                tb[T + (int)b] += (1.0 - lab) * wt;
            }
            if (ok) {
                double tp_sum = 0, fp_sum = 0, tot_t = 0, tot_f = 0;
                for (int i = 0; i < T; i++) tot_t += tb[i], tot_f += tb[T + i];
                for (int i = T - 1; i >= 0; i--) {
                    tp_sum += tb[i], fp_sum += tb[T + i];
                    m->tp[i] += tp_sum;
                    m->fp[i] += fp_sum;
                    m->fn[i] += tot_t - tp_sum;
                    m->tn[i] += tot_f - fp_sum;
                }
            }
            tfc_free(tb);
        } else {
            for (int64_t e = 0; e < n; e++) {
                int64_t i = offset + e * stride;
                double wt = bw ? bw[i] : 1.0;
                bool lab = yt.v[i] != 0;
                for (int t = 0; t < T; t++) {
                    bool pos = (float)yp.v[i] > (float)m->thr[t];
                    if (lab && pos) m->tp[t] += wt;
                    else if (lab) m->fn[t] += wt;
                    else if (pos) m->fp[t] += wt;
                    else m->tn[t] += wt;
                }
            }
        }
    }
    (void)ctx;
    tfc_free(bw);
    tfc_free(yt.v);
    tfc_free(yp.v);
    tfc_free(w.v);
    return ok;
}

static double div_no_nan(double a, double b) { return b == 0 ? 0.0 : a / b; }

static double auc_result(const tfc_metric *m) {
    int T = m->n_thr;
    const double *tp = m->tp, *fp = m->fp, *tn = m->tn, *fn = m->fn;
    double s = 0;
    if (m->curve_pr && m->summation == SUM_INTERPOLATION) { /* interpolate_pr_auc */
        for (int i = 0; i + 1 < T; i++) {
            double dtp = tp[i] - tp[i + 1];
            double p0 = tp[i] + fp[i], p1 = tp[i + 1] + fp[i + 1];
            double dp = p0 - p1;
            double slope = div_no_nan(dtp, fmax(dp, 0));
            double intercept = tp[i + 1] - slope * p1;
            double ratio = p0 > 0 && p1 > 0 ? div_no_nan(p0, fmax(p1, 0)) : 1.0;
            s += div_no_nan(slope * (dtp + intercept * log(ratio)), fmax(tp[i + 1] + fn[i + 1], 0));
        }
        return s;
    }
    for (int i = 0; i + 1 < T; i++) {
        double x0, x1, y0, y1;
        double r0 = div_no_nan(tp[i], tp[i] + fn[i]), r1 = div_no_nan(tp[i + 1], tp[i + 1] + fn[i + 1]);
        if (m->curve_pr) {
            x0 = r0, x1 = r1;
            y0 = div_no_nan(tp[i], tp[i] + fp[i]), y1 = div_no_nan(tp[i + 1], tp[i + 1] + fp[i + 1]);
        } else {
            x0 = div_no_nan(fp[i], fp[i] + tn[i]), x1 = div_no_nan(fp[i + 1], fp[i + 1] + tn[i + 1]);
            y0 = r0, y1 = r1;
        }
        double h = m->summation == SUM_INTERPOLATION ? (y0 + y1) / 2.0 : m->summation == SUM_MINORING ? fmin(y0, y1) : fmax(y0, y1);
        s += (x0 - x1) * h;
    }
    return s;
}

double tfc_metric_result(const tfc_metric *m) {
    switch (m->kind) {
    case M_PRECISION: return div_no_nan(m->tp[0], m->tp[0] + m->fp[0]);
    case M_RECALL: return div_no_nan(m->tp[0], m->tp[0] + m->fn[0]);
    case M_AUC: return auc_result(m);
    default: return div_no_nan(m->total, m->count);
    }
}

/* ---- update_state ---------------------------------------------------------------------------------------- */

static bool update(tfc_metric *m, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred, tfc_tensor *sw,
                   tfc_status *st) {
    if (!y_pred || (m->kind != M_MEAN && !y_true))
        return fail(m, st, "update_state needs %s", y_pred ? "y_true" : "y_pred");
    if (m->kind == M_PRECISION || m->kind == M_RECALL || m->kind == M_AUC)
        return confusion_update(m, ctx, y_true, y_pred, sw, st);
    if (m->kind == M_LOSS_FN) {
        tfc_tensor *yt = tfc_cast(ctx, y_true, TFC_FLOAT, st), *yp = yt ? tfc_cast(ctx, y_pred, TFC_FLOAT, st) : NULL;
        tfc_tensor *v = yp ? tfc_loss_call(m->loss, ctx, yt, yp, NULL, st) : NULL;
        host h = {0};
        bool ok = v && to_host(m, v, &h, st) && reduce_update(m, &h, sw, st);
        tfc_free(h.v);
        return ok;
    }
    host vals = {0};
    if (m->kind == M_MEAN) {
        bool ok = to_host(m, y_pred, &vals, st) && reduce_update(m, &vals, sw, st);
        tfc_free(vals.v);
        return ok;
    }
    host yt = {0}, yp = {0};
    bool ok = to_host(m, y_true, &yt, st) && to_host(m, y_pred, &yp, st);
    if (ok && !(vals.v = tfc_malloc((size_t)(yp.n > 0 ? yp.n : 1) * sizeof *vals.v)))
        ok = tfc_status_oom(st, m->name, (size_t)yp.n * sizeof *vals.v);
    ok = ok && matches(m, &yt, &yp, &vals, st) && reduce_update(m, &vals, sw, st);
    tfc_free(yt.v);
    tfc_free(yp.v);
    tfc_free(vals.v);
    return ok;
}

bool tfc_metric_update_state(tfc_metric *m, tfc_ctx *ctx, tfc_tensor *y_true, tfc_tensor *y_pred,
                             tfc_tensor *sample_weight, tfc_status *st) {
    if (!m || !ctx) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "update_state: no metric or context");
    /* a failed update leaves the state as it was */
    double total = m->total, count = m->count;
    double *saved = NULL;
    if (m->tp && !(saved = tfc_malloc((size_t)m->n_thr * 4 * sizeof *saved)))
        return tfc_status_oom(st, m->name, (size_t)m->n_thr * 32);
    if (saved) memcpy(saved, m->tp, (size_t)m->n_thr * 4 * sizeof *saved);
    bool ok = tfc_scope_begin(ctx, st);
    if (ok) {
        tfc_ctx_stop_recording(ctx);
        ok = update(m, ctx, y_true, y_pred, sample_weight, st);
        tfc_ctx_start_recording(ctx);
        tfc_scope_end(ctx);
    }
    if (!ok) {
        m->total = total, m->count = count;
        if (saved) memcpy(m->tp, saved, (size_t)m->n_thr * 4 * sizeof *saved);
    } else {
        tfc_status_clear(st);
    }
    tfc_free(saved);
    return ok;
}

/* ---- configs --------------------------------------------------------------------------------------------- */

char *tfc_metric_get_config(const tfc_metric *m, tfc_status *st) {
    cJSON *c = cJSON_CreateObject();
    bool ok = c && cJSON_AddStringToObject(c, "name", m->name) && cJSON_AddStringToObject(c, "dtype", "float32");
    switch (m->kind) {
    case M_BINARY_ACCURACY: ok = ok && cJSON_AddNumberToObject(c, "threshold", m->threshold); break;
    case M_TOP_K:
    case M_SPARSE_TOP_K: ok = ok && cJSON_AddNumberToObject(c, "k", (double)m->k); break;
    case M_PRECISION:
    case M_RECALL:
        ok = ok && (m->thr_given ? cJSON_AddNumberToObject(c, "thresholds", m->thr_init) != NULL
                                 : cJSON_AddNullToObject(c, "thresholds") != NULL) &&
             (m->has_top_k ? cJSON_AddNumberToObject(c, "top_k", (double)m->top_k) != NULL
                           : cJSON_AddNullToObject(c, "top_k") != NULL) &&
             (m->has_class_id ? cJSON_AddNumberToObject(c, "class_id", (double)m->class_id) != NULL
                              : cJSON_AddNullToObject(c, "class_id") != NULL);
        break;
    case M_AUC: {
        static const char *const sums[] = {"interpolation", "minoring", "majoring"};
        ok = ok && cJSON_AddNumberToObject(c, "num_thresholds", m->n_thr) &&
             cJSON_AddStringToObject(c, "curve", m->curve_pr ? "PR" : "ROC") &&
             cJSON_AddStringToObject(c, "summation_method", sums[m->summation]) &&
             cJSON_AddFalseToObject(c, "multi_label") && cJSON_AddNullToObject(c, "num_labels") &&
             cJSON_AddNullToObject(c, "label_weights") && cJSON_AddBoolToObject(c, "from_logits", m->from_logits);
        if (ok && m->thr_given) {
            cJSON *a = cJSON_CreateArray();
            for (int i = 1; a && i + 1 < m->n_thr; i++) {
                cJSON *e = cJSON_CreateNumber(m->thr[i]);
                if (!e || !cJSON_AddItemToArray(a, e)) cJSON_Delete(e), ok = false;
            }
            if (!a || !cJSON_AddItemToObject(c, "thresholds", a)) cJSON_Delete(a), ok = false;
        }
        break;
    }
    case M_LOSS_FN: { /* the cross-entropy metrics keep their function's keyword arguments */
        bool bce = !strcmp(m->class_name, "BinaryCrossentropy"), cce = !strcmp(m->class_name, "CategoricalCrossentropy"),
             scce = !strcmp(m->class_name, "SparseCategoricalCrossentropy");
        if (!bce && !cce && !scce) break;
        char *lc = tfc_loss_get_config(m->loss, st);
        cJSON *lj = lc ? cJSON_Parse(lc) : NULL;
        tfc_free(lc);
        const char *keys[3] = {"from_logits", scce ? "ignore_class" : "label_smoothing", bce ? NULL : "axis"};
        for (int i = 0; ok && lj && i < 3 && keys[i]; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(lj, keys[i]);
            cJSON *d = v ? cJSON_Duplicate(v, true) : cJSON_CreateNull();
            if (!d || !cJSON_AddItemToObject(c, keys[i], d)) cJSON_Delete(d), ok = false;
        }
        cJSON_Delete(lj);
        break;
    }
    default: break;
    }
    char *s = ok ? tfc_json_print(c) : NULL;
    cJSON_Delete(c);
    if (!s) tfc_status_oom(st, "get_config", 0);
    return s;
}

const char *tfc_metric_class_name(const tfc_metric *m) { return m->class_name; }

/* Loss functions Keras also resolves as metrics (metrics.get): metric names and class -> loss function, and the
 * metric class's default name. */
static const struct {
    const char *names[5];
    const char *loss_fn, *class_name, *default_name;
} loss_metrics[] = {
    {{"mse", "MSE", "mean_squared_error"}, "mean_squared_error", "MeanSquaredError", "mean_squared_error"},
    {{"mae", "MAE", "mean_absolute_error"}, "mean_absolute_error", "MeanAbsoluteError", "mean_absolute_error"},
    {{"mape", "MAPE", "mean_absolute_percentage_error"}, "mean_absolute_percentage_error",
     "MeanAbsolutePercentageError", "mean_absolute_percentage_error"},
    {{"msle", "MSLE", "mean_squared_logarithmic_error"}, "mean_squared_logarithmic_error",
     "MeanSquaredLogarithmicError", "mean_squared_logarithmic_error"},
    {{"binary_crossentropy", "bce"}, "binary_crossentropy", "BinaryCrossentropy", "binary_crossentropy"},
    {{"categorical_crossentropy"}, "categorical_crossentropy", "CategoricalCrossentropy", "categorical_crossentropy"},
    {{"sparse_categorical_crossentropy"}, "sparse_categorical_crossentropy", "SparseCategoricalCrossentropy",
     "sparse_categorical_crossentropy"},
    {{"kld", "KLD", "kl_divergence", "kullback_leibler_divergence"}, "kl_divergence", "KLDivergence",
     "kullback_leibler_divergence"},
    {{"poisson"}, "poisson", "Poisson", "poisson"},
    {{"logcosh", "log_cosh"}, "log_cosh", "LogCoshError", "logcosh"},
    {{"hinge"}, "hinge", "Hinge", "hinge"},
    {{"squared_hinge"}, "squared_hinge", "SquaredHinge", "squared_hinge"},
    {{"categorical_hinge"}, "categorical_hinge", "CategoricalHinge", "categorical_hinge"},
};

static const struct {
    const char *names[4];
    metric_kind kind;
} simple_names[] = {
    {{"Mean", "mean"}, M_MEAN},
    {{"Accuracy", "accuracy", "acc"}, M_ACCURACY},
    {{"BinaryAccuracy", "binary_accuracy"}, M_BINARY_ACCURACY},
    {{"CategoricalAccuracy", "categorical_accuracy"}, M_CATEGORICAL_ACCURACY},
    {{"SparseCategoricalAccuracy", "sparse_categorical_accuracy"}, M_SPARSE_CATEGORICAL_ACCURACY},
    {{"TopKCategoricalAccuracy", "top_k_categorical_accuracy"}, M_TOP_K},
    {{"SparseTopKCategoricalAccuracy", "sparse_top_k_categorical_accuracy"}, M_SPARSE_TOP_K},
    {{"Precision", "precision"}, M_PRECISION},
    {{"Recall", "recall"}, M_RECALL},
    {{"AUC", "auc"}, M_AUC},
};

static bool is_name(const char *const *names, int n, const char *s) {
    for (int i = 0; i < n && names[i]; i++)
        if (!strcmp(names[i], s)) return true;
    return false;
}

/* Reads Precision/Recall "thresholds" (a number or a one-element list). */
static bool get_threshold(tfc_metric *m, const cJSON *cfg, tfc_status *st) {
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(cfg, "thresholds");
    if (!t || cJSON_IsNull(t)) return true;
    if (cJSON_IsArray(t)) {
        if (cJSON_GetArraySize(t) != 1)
            return tfc_status_set(st, TFC_UNIMPLEMENTED,
                                  "%s: several thresholds give a vector result, which tfc_metric_result cannot return",
                                  m->name);
        t = cJSON_GetArrayItem(t, 0);
    }
    if (!cJSON_IsNumber(t)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: thresholds must be numbers", m->name);
    double v = t->valuedouble;
    if (!set_thresholds(m, &v, 1)) return tfc_status_oom(st, m->name, 32);
    m->thr_given = true;
    m->thr_init = v;
    return true;
}

static bool auc_from_config(tfc_metric *m, const cJSON *cfg, tfc_status *st) {
    int64_t num = 200;
    const char *curve = NULL, *sum = NULL;
    bool multi = false, present = false;
    if (!tfc_json_get_i64(cfg, "num_thresholds", &num, NULL, st) || !tfc_json_get_str(cfg, "curve", &curve, NULL, st) ||
        !tfc_json_get_str(cfg, "summation_method", &sum, NULL, st) || !tfc_json_get_bool(cfg, "multi_label", &multi, NULL, st) ||
        !tfc_json_get_bool(cfg, "from_logits", &m->from_logits, NULL, st))
        return false;
    if (multi) return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: multi_label=True is not supported", m->name);
    const cJSON *lw = cJSON_GetObjectItemCaseSensitive(cfg, "label_weights");
    if (lw && !cJSON_IsNull(lw)) return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: label_weights are not supported", m->name);
    if (curve) {
        if (!strcmp(curve, "ROC") || !strcmp(curve, "roc")) m->curve_pr = false;
        else if (!strcmp(curve, "PR") || !strcmp(curve, "pr")) m->curve_pr = true;
        else return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Invalid AUC curve value: \"%s\".", m->name, curve);
    }
    if (sum) {
        if (!strcmp(sum, "interpolation")) m->summation = SUM_INTERPOLATION;
        else if (!strcmp(sum, "minoring")) m->summation = SUM_MINORING;
        else if (!strcmp(sum, "majoring")) m->summation = SUM_MAJORING;
        else
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Invalid AUC summation method value: \"%s\".", m->name, sum);
    }
    const cJSON *thr = cJSON_GetObjectItemCaseSensitive(cfg, "thresholds");
    present = thr && !cJSON_IsNull(thr);
    if (present) {
        if (!cJSON_IsArray(thr)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: thresholds must be a list", m->name);
        int n = cJSON_GetArraySize(thr);
        double *v = tfc_malloc((size_t)(n > 0 ? n : 1) * sizeof *v);
        if (!v) return tfc_status_oom(st, m->name, (size_t)n * 8);
        for (int i = 0; i < n; i++) {
            const cJSON *e = cJSON_GetArrayItem(thr, i);
            v[i] = cJSON_IsNumber(e) ? e->valuedouble : 0;
        }
        bool ok = auc_thresholds(m, 0, v, n);
        tfc_free(v);
        return ok || tfc_status_oom(st, m->name, 0);
    }
    if (num <= 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: Argument `num_thresholds` must be an integer > 1. Received: num_thresholds=%lld",
                              m->name, (long long)num);
    return auc_thresholds(m, num, NULL, 0) || tfc_status_oom(st, m->name, 0);
}

tfc_metric *tfc_metric_from_config(const char *name, const char *config_json, tfc_status *st) {
    cJSON *root = NULL;
    const cJSON *cfg = NULL;
    if (config_json && *config_json) {
        if (!(root = cJSON_Parse(config_json)) || !cJSON_IsObject(root)) {
            cJSON_Delete(root);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "metric config is not a JSON object: %.120s", config_json);
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
    const char *cname = NULL, *dtype = NULL;
    tfc_metric *m = NULL;
    bool ok = name && tfc_json_get_str(cfg, "name", &cname, NULL, st) && tfc_json_get_str(cfg, "dtype", &dtype, NULL, st);
    /* functions resolved by name keep that name, as compile names a metric after the string it was given */
    const char *mname = cname ? cname : name;
    for (size_t i = 0; ok && !m && i < sizeof simple_names / sizeof *simple_names; i++)
        if (is_name(simple_names[i].names, 4, name)) {
            metric_kind k = simple_names[i].kind;
            bool is_class = !strcmp(name, simple_names[i].names[0]);
            m = metric_new(k, cname ? cname : is_class ? NULL : mname);
            if (!m) {
                ok = tfc_status_oom(st, name, 0);
                break;
            }
            if (k == M_PRECISION || k == M_RECALL || k == M_AUC) {
                double half = 0.5;
                ok = k == M_AUC ? auc_from_config(m, cfg, st) : set_thresholds(m, &half, 1) || tfc_status_oom(st, name, 0);
                if (ok && k != M_AUC) {
                    ok = get_threshold(m, cfg, st) && tfc_json_get_i64(cfg, "top_k", &m->top_k, &m->has_top_k, st) &&
                         tfc_json_get_i64(cfg, "class_id", &m->class_id, &m->has_class_id, st);
                    if (ok && m->has_top_k && !m->thr_given) { /* default threshold with top_k is NEG_INF */
                        double ninf = -1e10;
                        ok = set_thresholds(m, &ninf, 1) || tfc_status_oom(st, name, 0);
                    }
                    if (ok && m->has_top_k && m->top_k < 1)
                        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: top_k must be >= 1", m->name);
                }
            } else {
                ok = tfc_json_get_f64(cfg, "threshold", &m->threshold, NULL, st) &&
                     tfc_json_get_i64(cfg, "k", &m->k, NULL, st);
            }
        }
    for (size_t i = 0; ok && !m && i < sizeof loss_metrics / sizeof *loss_metrics; i++)
        if (is_name(loss_metrics[i].names, 5, name) || !strcmp(name, loss_metrics[i].class_name)) {
            bool is_class = !strcmp(name, loss_metrics[i].class_name);
            char extra[160] = "";
            bool fl = false, has_fl = false;
            double ls = 0;
            bool has_ls = false;
            ok = tfc_json_get_bool(cfg, "from_logits", &fl, &has_fl, st) &&
                 tfc_json_get_f64(cfg, "label_smoothing", &ls, &has_ls, st);
            if (ok)
                snprintf(extra, sizeof extra, "\"from_logits\": %s, \"label_smoothing\": %.17g", fl ? "true" : "false", ls);
            if (ok) {
                m = loss_metric(loss_metrics[i].loss_fn, loss_metrics[i].class_name,
                                cname ? cname : is_class ? loss_metrics[i].default_name : mname, extra);
                if (!m) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: bad metric config", name);
            }
        }
    if (ok && !m)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown metric function: %s", name ? name : "(null)");
    else if (!ok && st->code == TFC_OK)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown metric function: %s", name ? name : "(null)");
    if (ok && m && dtype && strcmp(dtype, "float32") != 0)
        tfc_log(TFC_LOG_WARNING, "metric %s: dtype %s accumulates in float64 like every tfc metric", m->name, dtype);
    cJSON_Delete(root);
    if (!ok || !m) {
        tfc_metric_free(m);
        return NULL;
    }
    tfc_status_clear(st);
    return m;
}

/* compile_utils.get_metric_function: "accuracy"/"acc" and "crossentropy"/"ce" depend on the shapes. */
tfc_metric *tfc_metric_resolve(const char *name, const tfc_shape *y_true, const tfc_shape *y_pred, tfc_status *st) {
    if (!name) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown metric function: (null)");
        return NULL;
    }
    bool acc = !strcmp(name, "accuracy") || !strcmp(name, "acc");
    bool ce = !strcmp(name, "crossentropy") || !strcmp(name, "ce");
    if (!acc && !ce) return tfc_metric_from_config(name, NULL, st);
    int rt = y_true ? y_true->rank : 0, rp = y_pred ? y_pred->rank : 0;
    int64_t lt = y_true && rt > 0 ? y_true->dims[rt - 1] : -1, lp = y_pred && rp > 0 ? y_pred->dims[rp - 1] : -1;
    bool binary = lp == 1;
    bool sparse = rt < rp || (lt == 1 && lp > 1);
    const char *fn = acc ? (binary ? "binary_accuracy" : sparse ? "sparse_categorical_accuracy" : "categorical_accuracy")
                         : (binary ? "binary_crossentropy" : sparse ? "sparse_categorical_crossentropy"
                                                                    : "categorical_crossentropy");
    char cfg[96];
    snprintf(cfg, sizeof cfg, "{\"name\": \"%s\"}", name);
    return tfc_metric_from_config(fn, cfg, st);
}
