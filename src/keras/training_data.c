/* fit / evaluate / predict on a tf.data dataset (Keras's DataHandler for dataset inputs), built on the public
 * training API (train_on_batch / test_on_batch / predict_on_batch) and fit's callback list (user callbacks,
 * History, progress bar).
 *
 * Each element is one batch: (x, y) or (x, y, sample_weight) for fit and evaluate, x (or the first component)
 * for predict. An epoch is one pass over the dataset (a fresh iterator), or, with steps_per_epoch, the next
 * steps_per_epoch batches of one iterator kept across epochs; when it runs out training stops with Keras's
 * warning. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "keras/model_internal.h"
#include "tfc/data.h"
#include "tfc/data_checkpoint.h"
#include "tfc/ops/array.h"

#define RESULTS_MAX TFC_LOGS_MAX

typedef struct elem {
    tfc_tensor *t[3];
    int n;
} elem;

static void elem_clear(elem *e) {
    for (int i = 0; i < 3; i++) {
        tfc_tensor_unref(e->t[i]);
        e->t[i] = NULL;
    }
}

/* Elements must be (x, y) or (x, y, sample_weight) of single tensors; x's spec must fit the model's input. */
static bool check_dataset(tfc_model *m, tfc_dataset *ds, const char *what, bool need_y, tfc_status *st) {
    if (!m || !ds) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: NULL model or dataset", what);
    const char *s = tfc_dataset_structure(ds);
    bool ok = !strcmp(s, "(.,.)") || !strcmp(s, "(.,.,.)") || (!need_y && !strcmp(s, "."));
    if (!ok)
        return tfc_status_set(st, strchr(s + 1, '(') || strchr(s, '{') ? TFC_UNIMPLEMENTED : TFC_INVALID_ARGUMENT,
                              "%s: dataset elements must be (x, y) or (x, y, sample_weight) batches of single tensors%s"
                              ", got elements %s",
                              what, need_y ? "" : " (or x alone)", s);
    int n_in = tfc_model_num_inputs(m), n_out = tfc_model_num_outputs(m);
    if (n_in != 1 || n_out != 1)
        return tfc_status_set(st, TFC_UNIMPLEMENTED,
                              "%s: datasets feed models of one input and one output (model \"%s\" has %d and %d)", what,
                              m->base.name, n_in, n_out);
    if (m->n_inputs == 1 && m->inputs && m->inputs[0]) {
        const tfc_shape *want = &m->inputs[0]->shape;
        tfc_tensor_spec got = tfc_dataset_component_spec(ds, 0);
        bool match = got.shape.rank < 0 || got.shape.rank == want->rank;
        for (int d = 1; match && got.shape.rank > 0 && d < want->rank; d++)
            match = want->dims[d] < 0 || got.shape.dims[d] < 0 || want->dims[d] == got.shape.dims[d];
        if (!match) {
            tfc_shape g = got.shape;
            if (g.rank > 0) g.dims[0] = -1;
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: dataset elements x have shape %s but model \"%s\" expects input shape %s", what,
                                  TFC_KSHP(&g), m->base.name, TFC_KSHP(want));
        }
    }
    return true;
}

/* Next batch of it into e; *end at the end. Element errors fail the call. */
static bool next_batch(tfc_iterator *it, elem *e, bool *end, tfc_status *st) {
    *end = false;
    e->n = tfc_dataset_num_components(tfc_iterator_dataset(it));
    if (tfc_iterator_next(it, e->t, 3, st)) return true;
    if (st->code == TFC_OUT_OF_RANGE) {
        *end = true;
        tfc_status_clear(st);
        return true;
    }
    return false;
}

/* Keras's class_weight: per-sample weights from the class of each label (argmax of one-hot rows), times the
 * element's sample weights. A new tensor, or NULL with st set. */
static tfc_tensor *class_weights(const tfc_tensor *y, const tfc_tensor *sw, const double *cw, int n_cw,
                                 tfc_status *st) {
    int rank = tfc_tensor_rank(y);
    if (rank < 1 || rank > 2) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "`class_weight` not supported for targets of shape %s",
                       TFC_KSHP(tfc_tensor_shape(y)));
        return NULL;
    }
    int64_t n = tfc_tensor_dim(y, 0), cols = rank == 2 ? tfc_tensor_dim(y, 1) : 1;
    tfc_tensor *w = tfc_tensor_new(TFC_FLOAT, &n, 1, st);
    if (!w) return NULL;
    float *wd = tfc_tensor_mutable_data(w);
    for (int64_t i = 0; i < n; i++) {
        int64_t cls = 0;
        if (cols > 1) {
            double best = -INFINITY;
            for (int64_t c = 0; c < cols; c++) {
                double v = tfc_tensor_get_f64(y, i * cols + c);
                if (v > best) best = v, cls = c;
            }
        } else {
            cls = (int64_t)tfc_tensor_get_f64(y, i);
        }
        if (cls < 0 || cls >= n_cw) {
            tfc_tensor_unref(w);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "class_weight: a sample has class %lld, outside the %d classes given",
                           (long long)cls, n_cw);
            return NULL;
        }
        wd[i] = (float)cw[cls] * (sw ? (float)tfc_tensor_get_f64(sw, i) : 1.0f);
    }
    return w;
}

/* One train or test step on element e; *logs gets the metrics so far (names, results). */
static bool step(tfc_model *m, elem *e, bool train, const double *cw, int n_cw, const char *const *names,
                 tfc_logs *logs, tfc_status *st) {
    tfc_tensor *sw = e->n > 2 ? e->t[2] : NULL, *cwt = NULL;
    if (cw && !(sw = cwt = class_weights(e->t[1], sw, cw, n_cw, st))) return false;
    double res[RESULTS_MAX];
    int n = train ? tfc_model_train_on_batch(m, e->t[0], e->t[1], sw, false, res, RESULTS_MAX, st)
                  : tfc_model_test_on_batch(m, e->t[0], e->t[1], sw, false, res, RESULTS_MAX, st);
    tfc_tensor_unref(cwt);
    if (n < 0) return false;
    *logs = (tfc_logs){0};
    for (int i = 0; i < n && i < RESULTS_MAX; i++) tfc_logs_set(logs, names[i], res[i]);
    return true;
}

/* evaluate's loop (also fit's validation): resets the metrics, runs up to `steps` batches (0: all). */
static bool run_test(tfc_model *m, tfc_dataset *ds, int64_t steps, tfc_callback *const *cbs, int n_cbs,
                     tfc_callback *bar, const char *const *names, tfc_logs *logs, tfc_status *st) {
    tfc_model_reset_metrics(m);
    if (!tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TEST_BEGIN, m, 0, NULL, st)) return false;
    tfc_iterator *it = tfc_iterator_new(ds, st);
    if (!it) return false;
    elem e = {{0}, 0};
    bool ok = true, end = false;
    int64_t b = 0;
    *logs = (tfc_logs){0};
    for (; (steps <= 0 || b < steps) && ok; b++) {
        if (!(ok = next_batch(it, &e, &end, st)) || end) break;
        ok = step(m, &e, false, NULL, 0, names, logs, st);
        elem_clear(&e);
        if (ok && bar) tfc_progbar_test_batch(bar, b, logs);
    }
    tfc_iterator_free(it);
    if (ok && b == 0) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "evaluate: the dataset produced no batches");
    return ok && tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TEST_END, m, 0, logs, st);
}

bool tfc_model_fit_dataset(tfc_model *m, tfc_dataset *ds, const tfc_fit_opts *opts, tfc_dataset *validation_data,
                           tfc_history **history, tfc_status *st) {
    tfc_fit_opts o = opts ? *opts : (tfc_fit_opts){0};
    int n_user = 0;
    while (n_user < 16 && o.callbacks[n_user]) n_user++;
    bool ok = true;
    tfc_history *hist = NULL;
    tfc_callback *cbs[18] = {0}, *hist_cb = NULL, *bar = NULL;
    tfc_iterator *it = NULL;
    char **val_names = NULL;
    int n_names = 0;
    elem e = {{0}, 0};
    FILE *out = o.out ? o.out : stdout;
    tfc_fit_state fs = {.out = out, .dataset = true, .initial_step = -1};
    if (history) *history = NULL;

    if (!(ok = check_dataset(m, ds, "fit", true, st))) goto done;
    if (validation_data && !(ok = check_dataset(m, validation_data, "fit (validation_data)", true, st))) goto done;
    if (!m->compiled) {
        ok = tfc_status_set(st, TFC_FAILED_PRECONDITION,
                            "You must compile your model before training/testing. Use `model.compile(optimizer, "
                            "loss)`. (model \"%s\")",
                            m->base.name);
        goto done;
    }
    if (o.batch_size || o.validation_split != 0 || o.sample_weight || o.validation_x || o.validation_y) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "fit: with a dataset, batch_size, validation_split, sample_weight and validation_x/y must "
                            "not be given (the dataset yields batches with their sample weights; pass "
                            "validation_data as a dataset)");
        goto done;
    }
    int64_t card = tfc_dataset_cardinality(ds);
    if (card == TFC_INFINITE_CARDINALITY && o.steps_per_epoch <= 0) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "fit: When providing an infinite dataset, you must specify the number of steps to run "
                            "(steps_per_epoch)");
        goto done;
    }
    if (o.class_weight && o.n_class_weight <= 0) o.class_weight = NULL;
    int epochs = o.epochs > 0 ? o.epochs : 1;
    int64_t steps = o.steps_per_epoch > 0 ? o.steps_per_epoch : card > 0 ? card : 0;
    int verbose = tfc_verbose_resolve(o.verbose, out);
    int freq = o.validation_freq > 0 ? o.validation_freq : 1;

    if (!(val_names = tfc_fit_val_names(m, &n_names, st))) {
        ok = false;
        goto done;
    }
    const char *names[TFC_LOGS_MAX];
    tfc_model_metrics_names(m, names, TFC_LOGS_MAX);
    hist = tfc_history_new();
    hist_cb = hist ? tfc_callback_history_new(hist) : NULL;
    if (verbose) bar = tfc_progbar_new(out, verbose, epochs, steps, true);
    if (!hist || !hist_cb || (verbose && !bar)) {
        ok = tfc_status_oom(st, "fit", 0);
        goto done;
    }
    int n_cbs = 0;
    for (int i = 0; i < n_user; i++) cbs[n_cbs++] = o.callbacks[i];
    cbs[n_cbs++] = hist_cb;
    if (bar) cbs[n_cbs++] = bar;

    m->stop_training = false;
    tfc_logs epoch_logs = {0};
    fs.initial_epoch = o.initial_epoch;
    TFC_IMPL(m)->fit = &fs;
    if (!(ok = tfc_model_dist_sync(m, st)) || !(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_BEGIN, m, 0, NULL, st)))
        goto done;
    bool ran_out = false;
    for (int epoch = fs.initial_epoch; epoch < epochs && ok && !ran_out; epoch++) {
        tfc_model_reset_metrics(m);
        if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_EPOCH_BEGIN, m, epoch, NULL, st))) break;
        int64_t b = 0;
        if (!it || o.steps_per_epoch <= 0) {
            fs.iter = NULL;
            tfc_iterator_free(it);
            if (!(ok = (it = tfc_iterator_new(ds, st)) != NULL)) break;
        }
        if (fs.iter_state) { /* resumed by BackupAndRestore: the saved iterator's position (and shuffle epochs) */
            ok = tfc_iterator_restore_state(it, fs.iter_state, st);
            tfc_tensor_unref(fs.iter_state);
            fs.iter_state = NULL;
            if (!ok) break;
            if (fs.initial_step >= 0) b = fs.initial_step; /* mid-epoch */
            else if (o.steps_per_epoch <= 0) {             /* the saved epoch was complete: a new pass */
                tfc_iterator_free(it);
                if (!(ok = (it = tfc_iterator_new(ds, st)) != NULL)) break;
            }
        }
        fs.iter = it;
        tfc_logs bl = {0};
        for (; o.steps_per_epoch <= 0 || b < o.steps_per_epoch; b++) {
            bool end = false;
            if (!(ok = next_batch(it, &e, &end, st))) break;
            if (end) {
                if (o.steps_per_epoch > 0) {
                    tfc_log(TFC_LOG_WARNING,
                            "Your input ran out of data; interrupting training. Make sure that your dataset or "
                            "generator can generate at least `steps_per_epoch * epochs` batches (in this case, "
                            "%lld batches).",
                            (long long)o.steps_per_epoch * epochs);
                    ran_out = true;
                }
                break;
            }
            if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_BATCH_BEGIN, m, b, NULL, st))) break;
            ok = step(m, &e, true, o.class_weight, o.n_class_weight, names, &bl, st);
            elem_clear(&e);
            if (!ok || !(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_BATCH_END, m, b, &bl, st))) break;
            if (m->stop_training) break;
        }
        if (!ok) break;
        if (b == 0) {
            if (ran_out) break;
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "fit: the dataset produced no batches");
            break;
        }
        epoch_logs = bl;
        if (validation_data && (epoch + 1) % freq == 0) {
            tfc_logs vl;
            if (!(ok = run_test(m, validation_data, o.validation_steps, cbs, n_cbs, NULL, names, &vl, st))) break;
            for (int i = 0; i < vl.n && i < n_names; i++) tfc_logs_set(&epoch_logs, val_names[i], vl.values[i]);
        }
        if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_EPOCH_END, m, epoch, &epoch_logs, st))) break;
        if (m->stop_training) break;
    }
    if (ok) ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_END, m, 0, &epoch_logs, st);

done:
    elem_clear(&e);
    if (m && TFC_IMPL(m)->fit == &fs) TFC_IMPL(m)->fit = NULL;
    tfc_tensor_unref(fs.iter_state);
    tfc_iterator_free(it);
    tfc_fit_val_names_free(val_names, n_names);
    tfc_callback_free(bar);
    tfc_callback_free(hist_cb);
    for (int i = 0; i < n_user; i++) tfc_callback_free(o.callbacks[i]);
    if (ok && history) *history = hist;
    else tfc_history_free(hist);
    if (ok) tfc_status_clear(st);
    return ok;
}

int tfc_model_evaluate_dataset(tfc_model *m, tfc_dataset *ds, const tfc_eval_opts *opts, double *results, int max,
                               tfc_status *st) {
    tfc_eval_opts o = opts ? *opts : (tfc_eval_opts){0};
    int n_cbs = 0, ret = -1;
    while (n_cbs < 16 && o.callbacks[n_cbs]) n_cbs++;
    tfc_callback *bar = NULL;
    if (!check_dataset(m, ds, "evaluate", true, st)) goto done;
    if (!m->compiled) {
        tfc_status_set(st, TFC_FAILED_PRECONDITION, "You must compile your model before training/testing. (model \"%s\")",
                       m->base.name);
        goto done;
    }
    if (o.batch_size || o.sample_weight) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "evaluate: with a dataset, batch_size and sample_weight must not be "
                                                 "given (the dataset yields batches with their sample weights)");
        goto done;
    }
    FILE *out = o.out ? o.out : stdout;
    int verbose = tfc_verbose_resolve(o.verbose, out);
    int64_t card = tfc_dataset_cardinality(ds);
    if (card == TFC_INFINITE_CARDINALITY && o.steps <= 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "evaluate: an infinite dataset needs `steps`");
        goto done;
    }
    int64_t steps = o.steps > 0 ? o.steps : card > 0 ? card : 0;
    if (verbose && !(bar = tfc_progbar_new(out, verbose, 1, steps, false))) {
        tfc_status_oom(st, "evaluate", 0);
        goto done;
    }
    const char *names[TFC_LOGS_MAX];
    tfc_model_metrics_names(m, names, TFC_LOGS_MAX);
    tfc_logs logs;
    if (!run_test(m, ds, o.steps, o.callbacks, n_cbs, bar, names, &logs, st)) goto done;
    if (bar) tfc_progbar_test_end(bar, &logs);
    for (int i = 0; i < logs.n && i < max && results; i++) results[i] = logs.values[i];
    ret = logs.n;
    tfc_status_clear(st);
done:
    tfc_callback_free(bar);
    for (int i = 0; i < n_cbs; i++) tfc_callback_free(o.callbacks[i]);
    return ret;
}

tfc_tensor *tfc_model_predict_dataset(tfc_model *m, tfc_dataset *ds, const tfc_eval_opts *opts, tfc_status *st) {
    tfc_eval_opts o = opts ? *opts : (tfc_eval_opts){0};
    if (!check_dataset(m, ds, "predict", false, st)) return NULL;
    if (o.batch_size) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "predict: with a dataset, batch_size must not be given");
        return NULL;
    }
    int64_t card = tfc_dataset_cardinality(ds);
    if (card == TFC_INFINITE_CARDINALITY && o.steps <= 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "predict: an infinite dataset needs `steps`");
        return NULL;
    }
    FILE *out = o.out ? o.out : stdout;
    int verbose = tfc_verbose_resolve(o.verbose, out);
    tfc_callback *bar = verbose ? tfc_progbar_new(out, verbose, 1, o.steps > 0 ? o.steps : card > 0 ? card : 0, false)
                                : NULL;
    tfc_iterator *it = tfc_iterator_new(ds, st);
    tfc_tensor **parts = NULL, *result = NULL;
    int64_t n = 0, cap = 0;
    elem e = {{0}, 0};
    bool ok = it && (!verbose || bar);
    if (it && !ok) tfc_status_oom(st, "predict", 0);
    for (int64_t b = 0; ok && (o.steps <= 0 || b < o.steps); b++) {
        bool end = false;
        if (!(ok = next_batch(it, &e, &end, st)) || end) break;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            tfc_tensor **p = tfc_realloc(parts, (size_t)cap * sizeof *p);
            if (!(ok = p != NULL)) {
                tfc_status_oom(st, "predict", (size_t)cap * sizeof *p);
                break;
            }
            parts = p;
        }
        ok = (parts[n] = tfc_model_predict_on_batch(m, e.t[0], st)) != NULL;
        elem_clear(&e);
        if (ok) n++;
        if (ok && bar) tfc_progbar_test_batch(bar, b, NULL);
    }
    if (ok && n == 0) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "predict: the dataset produced no batches");
    if (ok && n > INT32_MAX) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "predict: too many batches (%lld)", (long long)n);
    if (ok && (ok = tfc_scope_begin(m->ctx, st))) {
        result = tfc_concat(m->ctx, (const tfc_tensor *const *)parts, (int)n, 0, st);
        if (result) tfc_keep(m->ctx, result);
        tfc_scope_end(m->ctx);
        ok = result != NULL;
    }
    if (ok && bar) tfc_progbar_test_end(bar, NULL);
    elem_clear(&e);
    for (int64_t i = 0; i < n; i++) tfc_tensor_unref(parts[i]);
    tfc_free(parts);
    tfc_iterator_free(it);
    tfc_callback_free(bar);
    if (ok) tfc_status_clear(st);
    return ok ? result : NULL;
}
