/* The Keras training loop: compile, fit, evaluate, predict, train_on_batch / test_on_batch /
 * predict_on_batch (tf.keras.Model's training.py, run eagerly).
 *
 * A train step runs in its own scope: forward pass (training=true) under a GradientTape, the compiled loss of
 * each output plus the regularization losses, gradients of the trainable weights, the optimizer update, then
 * the metrics. Batches are rows gathered (GatherV2) by a seeded Fisher-Yates permutation of the samples, or
 * slices when not shuffled; fit copies the next batch's rows on a background thread while a step runs
 * (training_prefetch.h). Every epoch's randomness derives from (seed base, epoch): the permutation, Dropout's
 * masks (the model's seed generator, training_rng.c) and, under a global seed, the op seeds of other random
 * layers run eagerly, so that BackupAndRestore can resume a run and end with the weights of an uninterrupted
 * one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tfc/keras/mixed_precision.h"
#include "keras/model_internal.h"
#include "keras/optimizer_internal.h"
#include "keras/training_prefetch.h"
#include "platform/trace.h"
#include "tfc/ops/array.h"
#include "tfc/ops/indexing.h"
#include "tfc/distribute.h"

FILE *tfc_model_fit_out(tfc_model *m) {
    tfc_model_impl *impl = m ? TFC_IMPL(m) : NULL;
    return impl && impl->fit && impl->fit->out ? impl->fit->out : stdout;
}

void tfc_model_fit_set_initial_epoch(tfc_model *m, int epoch) {
    if (m && TFC_IMPL(m)->fit) TFC_IMPL(m)->fit->initial_epoch = epoch;
}

uint64_t tfc_model_fit_seed_base(tfc_model *m) { return m && TFC_IMPL(m)->fit ? TFC_IMPL(m)->fit->seed_base : 0; }

void tfc_model_fit_set_seed_base(tfc_model *m, uint64_t seed) {
    if (m && TFC_IMPL(m)->fit) TFC_IMPL(m)->fit->seed_base = seed;
}

void tfc_model_stop_training(tfc_model *m) {
    if (m) m->stop_training = true;
}

tfc_optimizer *tfc_model_optimizer(tfc_model *m) { return m ? m->optimizer : NULL; }

/* ---- Python's float repr (Keras prints logs as Python floats) ------------------------------------------ */

static char *py_repr(double v, bool f32, char *buf, size_t size) {
    if (isnan(v)) {
        snprintf(buf, size, "nan");
        return buf;
    }
    if (isinf(v)) {
        snprintf(buf, size, v < 0 ? "-inf" : "inf");
        return buf;
    }
    if (v == 0) {
        snprintf(buf, size, signbit(v) ? "-0.0" : "0.0");
        return buf;
    }
    /* the shortest digits that read back as the same value */
    char e[64];
    int p = 1;
    for (; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        double back = strtod(e, NULL);
        if (f32 ? (float)back == (float)v : back == v) break;
    }
    /* e = [-]d.ddde±XX */
    bool neg = e[0] == '-';
    const char *s = e + neg;
    char digits[32];
    int nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.') digits[nd++] = *s;
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = 0;
    int exp10 = atoi(s + 1), decpt = exp10 + 1;
    size_t k = 0;
    if (neg) k += (size_t)snprintf(buf + k, size - k, "-");
    if (decpt < -3 || decpt > 16) { /* repr switches to exponent notation outside 1e-4 .. 1e16 */
        k += (size_t)snprintf(buf + k, size - k, "%c", digits[0]);
        if (nd > 1 && k < size) k += (size_t)snprintf(buf + k, size - k, ".%s", digits + 1);
        if (k < size) snprintf(buf + k, size - k, "e%c%02d", exp10 < 0 ? '-' : '+', abs(exp10));
    } else if (decpt <= 0) {
        k += (size_t)snprintf(buf + k, size - k, "0.");
        for (int i = 0; i < -decpt && k < size; i++) k += (size_t)snprintf(buf + k, size - k, "0");
        if (k < size) snprintf(buf + k, size - k, "%s", digits);
    } else if (decpt >= nd) {
        k += (size_t)snprintf(buf + k, size - k, "%s", digits);
        for (int i = nd; i < decpt && k < size; i++) k += (size_t)snprintf(buf + k, size - k, "0");
        if (k < size) snprintf(buf + k, size - k, ".0");
    } else {
        k += (size_t)snprintf(buf + k, size - k, "%.*s.%s", decpt, digits, digits + decpt);
    }
    return buf;
}

char *tfc_py_repr_f64(double v, char *buf, size_t size) { return py_repr(v, false, buf, size); }
char *tfc_py_repr_f32(float v, char *buf, size_t size) { return py_repr(v, true, buf, size); }

/* ---- compile ------------------------------------------------------------------------------------------- */

void tfc_model_compile_free(tfc_model *m) {
    tfc_model_impl *impl = TFC_IMPL(m);
    tfc_model_fns_free(m);
    tfc_model_rng_free(m);
    tfc_optimizer_free(m->optimizer);
    tfc_loss_free(m->loss);
    m->optimizer = NULL;
    m->loss = NULL;
    for (int i = 0; i < impl->n_slot; i++) {
        tfc_free(impl->slots[i].name);
        tfc_free(impl->slots[i].spec);
        tfc_metric_free(impl->slots[i].obj);
    }
    tfc_free(impl->slots);
    impl->slots = NULL;
    impl->n_slot = 0;
    for (int i = 0; i < impl->n_out; i++) tfc_free(impl->out_names ? impl->out_names[i] : NULL);
    tfc_free(impl->out_names);
    tfc_free(impl->out_loss_sum);
    impl->out_names = NULL;
    impl->out_loss_sum = NULL;
    impl->n_out = 0;
    tfc_free(impl->loss_name);
    tfc_free(impl->optimizer_name);
    impl->loss_name = impl->optimizer_name = NULL;
    for (int i = 0; i < 8; i++) m->metrics[i] = NULL;
    m->n_metrics = 0;
    m->loss_tracker = NULL;
    m->compiled = false;
}

static bool is_resolved_later(const char *name) {
    return !strcmp(name, "accuracy") || !strcmp(name, "acc") || !strcmp(name, "crossentropy") || !strcmp(name, "ce");
}

static void sync_public_metrics(tfc_model_impl *impl) {
    tfc_model *m = &impl->m;
    m->n_metrics = impl->n_slot < 8 ? impl->n_slot : 8;
    for (int i = 0; i < m->n_metrics; i++) m->metrics[i] = impl->slots[i].obj;
}

bool tfc_model_compile(tfc_model *m, const tfc_compile_opts *opts, tfc_status *st) {
    tfc_compile_opts o = opts ? *opts : (tfc_compile_opts){0};
    int n_objs = 0;
    while (n_objs < 8 && o.metric_objs[n_objs]) n_objs++;
    /* compile takes the objects it is given, also when it fails */
#define RELEASE_GIVEN()                                                        \
    do {                                                                       \
        tfc_optimizer_free(o.optimizer);                                       \
        tfc_loss_free(o.loss);                                                 \
        for (int i_ = 0; i_ < n_objs; i_++) tfc_metric_free(o.metric_objs[i_]); \
    } while (0)
    if (!m) {
        RELEASE_GIVEN();
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "compile: NULL model");
    }
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->deferred.code != TFC_OK) {
        RELEASE_GIVEN();
        return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    }
    if (o.steps_per_execution < 0 || o.steps_per_execution > TFC_MAX_STEPS_PER_EXECUTION) {
        RELEASE_GIVEN();
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "compile: steps_per_execution must be in [1, %d], got %d",
                              TFC_MAX_STEPS_PER_EXECUTION, o.steps_per_execution);
    }
    tfc_optimizer *opt = o.optimizer;
    tfc_loss *loss = o.loss;
    if (!opt) opt = tfc_optimizer_from_config(o.optimizer_name ? o.optimizer_name : "rmsprop", NULL, st);
    if (opt && !loss && o.loss_name) loss = tfc_loss_from_config(o.loss_name, NULL, st);
    bool ok = opt && (loss || !o.loss_name);
    for (int i = 0; ok && i < 8 && o.metrics[i]; i++) {
        if (is_resolved_later(o.metrics[i])) continue;
        tfc_metric *probe = tfc_metric_from_config(o.metrics[i], NULL, st);
        ok = probe != NULL;
        tfc_metric_free(probe);
    }
    if (!ok) {
        if (opt != o.optimizer) tfc_optimizer_free(opt);
        if (loss != o.loss) tfc_loss_free(loss);
        RELEASE_GIVEN();
        if (st->code == TFC_OK) tfc_status_oom(st, "compile", 0);
        return false;
    }
#undef RELEASE_GIVEN
    /* Keras wraps the optimizer of a mixed_float16 model in a (dynamic) LossScaleOptimizer */
    if (!strcmp(tfc_layer_dtype_policy(&m->base).name, "mixed_float16") && !tfc_optimizer_is_loss_scale(opt)) {
        tfc_optimizer *w = tfc_mixed_precision_loss_scale_optimizer_new(opt, NULL);
        if (!w) {
            if (loss != o.loss) tfc_loss_free(loss);
            return tfc_status_oom(st, "compile", 0);
        }
        opt = w;
    }
    tfc_model_compile_free(m);
    m->optimizer = opt;
    m->loss = loss;
    m->run_eagerly = o.run_eagerly;
    impl->steps_per_execution = o.steps_per_execution > 0 ? o.steps_per_execution : 1;
    impl->loss_name = tfc_strdup(o.loss_name ? o.loss_name : loss ? tfc_loss_name(loss) : "");
    impl->optimizer_name = tfc_strdup(o.optimizer_name ? o.optimizer_name : o.optimizer ? "" : "rmsprop");
    int n_out = tfc_model_num_outputs(m);
    if (n_out < 1) n_out = 1;
    int n_names = 0;
    while (n_names < 8 && o.metrics[n_names]) n_names++;
    int n_slot = n_names * n_out + n_objs;
    impl->slots = tfc_calloc((size_t)(n_slot ? n_slot : 1), sizeof *impl->slots);
    impl->out_loss_sum = tfc_calloc((size_t)n_out, sizeof *impl->out_loss_sum);
    impl->out_names = tfc_calloc((size_t)n_out, sizeof *impl->out_names);
    ok = impl->slots && impl->out_loss_sum && impl->out_names && impl->loss_name && impl->optimizer_name;
    impl->n_out = n_out;
    for (int out = 0; ok && out < n_out; out++) {
        char buf[300];
        const char *oname = tfc_model_output_name(m, out);
        snprintf(buf, sizeof buf, "%s_loss", oname);
        ok = (impl->out_names[out] = tfc_strdup(buf)) != NULL;
        for (int j = 0; ok && j < n_names; j++) {
            tfc_metric_slot *s = &impl->slots[impl->n_slot++];
            s->output = out;
            if (n_out > 1) snprintf(buf, sizeof buf, "%s_%s", oname, o.metrics[j]);
            else snprintf(buf, sizeof buf, "%s", o.metrics[j]);
            s->name = tfc_strdup(buf);
            s->spec = tfc_strdup(o.metrics[j]);
            ok = s->name && s->spec;
            if (ok && !is_resolved_later(o.metrics[j])) ok = (s->obj = tfc_metric_from_config(o.metrics[j], NULL, st)) != NULL;
        }
    }
    /* Metric objects are not copied per output: each measures the first output. */
    for (int j = 0; j < n_objs; j++) {
        if (!ok) {
            tfc_metric_free(o.metric_objs[j]);
            continue;
        }
        tfc_metric_slot *s = &impl->slots[impl->n_slot++];
        char buf[300];
        const char *mn = tfc_metric_name(o.metric_objs[j]);
        if (n_out > 1) snprintf(buf, sizeof buf, "%s_%s", tfc_model_output_name(m, 0), mn ? mn : "metric");
        else snprintf(buf, sizeof buf, "%s", mn ? mn : "metric");
        s->obj = o.metric_objs[j];
        s->name = tfc_strdup(buf);
        ok = s->name != NULL;
    }
    if (!ok) {
        tfc_model_compile_free(m);
        if (st->code == TFC_OK) tfc_status_oom(st, "compile", 0);
        return false;
    }
    sync_public_metrics(impl);
    m->compiled = true;
    impl->strategy = tfc_distribute_get_strategy();
    tfc_status_clear(st);
    return true;
}

int tfc_model_metrics_names(const tfc_model *m, const char **out, int max) {
    if (!m) return 0;
    const tfc_model_impl *impl = (const tfc_model_impl *)m;
    int n = 0;
#define PUT(s)                           \
    do {                                 \
        if (out && n < max) out[n] = (s); \
        n++;                             \
    } while (0)
    PUT("loss");
    if (impl->n_out > 1)
        for (int i = 0; i < impl->n_out; i++) PUT(impl->out_names[i]);
    for (int i = 0; i < impl->n_slot; i++) PUT(impl->slots[i].name);
#undef PUT
    return n;
}

/* ---- metrics and logs ---------------------------------------------------------------------------------- */

void tfc_model_reset_metrics(tfc_model *m) {
    if (!m) return;
    tfc_model_impl *impl = TFC_IMPL(m);
    impl->loss_sum = impl->loss_count = 0;
    for (int i = 0; i < impl->n_out && impl->out_loss_sum; i++) impl->out_loss_sum[i] = 0;
    for (int i = 0; i < impl->n_slot; i++)
        if (impl->slots[i].obj) tfc_metric_reset_state(impl->slots[i].obj);
}

/* Keras's MetricsContainer: "accuracy" / "crossentropy" become binary, sparse or categorical by the shapes of
 * the first batch (y_pred's last dim 1: binary; y_true of lower rank or last dim 1: sparse). */
static bool resolve_slot(tfc_metric_slot *s, const tfc_tensor *y_true, const tfc_tensor *y_pred, tfc_status *st) {
    if (s->obj) return true;
    int rt = tfc_tensor_rank(y_true), rp = tfc_tensor_rank(y_pred);
    int64_t lt = rt > 0 ? tfc_tensor_dim(y_true, -1) : 1, lp = rp > 0 ? tfc_tensor_dim(y_pred, -1) : 1;
    bool binary = lp == 1, sparse = rt < rp || (lt == 1 && lp > 1);
    bool acc = !strcmp(s->spec, "accuracy") || !strcmp(s->spec, "acc");
    tfc_metric_opts mo = {.name = s->name};
    if (acc) {
        s->obj = binary ? tfc_metrics_binary_accuracy_new(&mo)
                 : sparse ? tfc_metrics_sparse_categorical_accuracy_new(&mo)
                          : tfc_metrics_categorical_accuracy_new(&mo);
        if (!s->obj) return tfc_status_oom(st, "metric", 0);
    } else {
        const char *name = binary ? "binary_crossentropy" : sparse ? "sparse_categorical_crossentropy" : "categorical_crossentropy";
        if (!(s->obj = tfc_metric_from_config(name, NULL, st))) return false;
    }
    return true;
}

static bool update_metrics(tfc_model_impl *impl, tfc_tensor *const *y, tfc_tensor *const *pred, double total,
                           const double *out_vals, int64_t batch, tfc_status *st) {
    impl->loss_sum += total * (double)batch;
    impl->loss_count += (double)batch;
    for (int i = 0; i < impl->n_out && impl->n_out > 1; i++) impl->out_loss_sum[i] += out_vals[i] * (double)batch;
    bool resolved = false;
    for (int i = 0; i < impl->n_slot; i++) {
        tfc_metric_slot *s = &impl->slots[i];
        if (!s->obj) {
            if (!resolve_slot(s, y[s->output], pred[s->output], st)) return false;
            resolved = true;
        }
        /* compile's `metrics` are not weighted by sample_weight / class_weight (Keras weights only its
         * `weighted_metrics`) */
        if (!tfc_metric_update_state(s->obj, impl->m.ctx, y[s->output], pred[s->output], NULL, st)) return false;
    }
    if (resolved) sync_public_metrics(impl);
    return true;
}

/* logs = {"loss", per-output losses, metrics} as float32 values (Keras's metrics are float32 variables);
 * keys are prefixed (val_) from `names` when given. */
static void local_logs(tfc_model_impl *impl, tfc_logs *logs, const char *const *names) {
    int k = 0;
    double loss = impl->loss_count > 0 ? impl->loss_sum / impl->loss_count : 0;
    tfc_logs_set(logs, names ? names[k] : "loss", (double)(float)loss);
    k++;
    if (impl->n_out > 1)
        for (int i = 0; i < impl->n_out; i++, k++)
            tfc_logs_set(logs, names ? names[k] : impl->out_names[i],
                         (double)(float)(impl->loss_count > 0 ? impl->out_loss_sum[i] / impl->loss_count : 0));
    for (int i = 0; i < impl->n_slot; i++, k++)
        tfc_logs_set(logs, names ? names[k] : impl->slots[i].name,
                     impl->slots[i].obj ? (double)(float)tfc_metric_result(impl->slots[i].obj) : 0.0);
}

/* Under a multi-worker strategy the logs come from the loss trackers' and metrics' states summed over the
 * workers (Keras's metric variables are SUM-aggregated): the states are all-reduced (float64), the logs read,
 * and the local states put back. A failed all-reduce leaves the local logs (the step's error surfaces from the
 * next collective of the training loop). */
static void current_logs(tfc_model_impl *impl, tfc_logs *logs, const char *const *names) {
    tfc_collective *c = impl->strategy ? tfc_strategy_collective(impl->strategy) : NULL;
    if (!c) {
        local_logs(impl, logs, names);
        return;
    }
    int n = 2 + (impl->n_out > 1 ? impl->n_out : 0);
    for (int i = 0; i < impl->n_slot; i++) n += impl->slots[i].obj ? tfc_metric_state_size(impl->slots[i].obj) : 0;
    double *buf = tfc_malloc((size_t)n * 2 * sizeof *buf), *keep = buf + n;
    tfc_status st = TFC_STATUS_INIT;
    int64_t dim = n;
    tfc_tensor *t = buf ? tfc_tensor_new(TFC_DOUBLE, &dim, 1, &st) : NULL, *r = NULL;
    if (t) {
        double *v = tfc_tensor_mutable_data(t);
        int k = 0;
        v[k++] = impl->loss_sum;
        v[k++] = impl->loss_count;
        for (int i = 0; impl->n_out > 1 && i < impl->n_out; i++) v[k++] = impl->out_loss_sum[i];
        for (int i = 0; i < impl->n_slot; i++)
            if (impl->slots[i].obj) {
                tfc_metric_state_get(impl->slots[i].obj, v + k);
                k += tfc_metric_state_size(impl->slots[i].obj);
            }
        memcpy(keep, v, (size_t)n * sizeof *v);
        r = tfc_collective_all_reduce(c, t, TFC_REDUCE_SUM, &st);
    }
    if (r) { /* read the summed state, then put the local one back */
        const double *v = tfc_tensor_data(r);
        for (int pass = 0; pass < 2; pass++, v = keep) {
            int k = 0;
            impl->loss_sum = v[k++];
            impl->loss_count = v[k++];
            for (int i = 0; impl->n_out > 1 && i < impl->n_out; i++) impl->out_loss_sum[i] = v[k++];
            for (int i = 0; i < impl->n_slot; i++)
                if (impl->slots[i].obj) {
                    tfc_metric_state_set(impl->slots[i].obj, v + k);
                    k += tfc_metric_state_size(impl->slots[i].obj);
                }
            if (pass == 0) local_logs(impl, logs, names);
        }
    } else {
        local_logs(impl, logs, names);
    }
    tfc_tensor_unref(r);
    tfc_tensor_unref(t);
    tfc_free(buf);
}

/* ---- steps --------------------------------------------------------------------------------------------- */

/* Keras's _keras_logits: keras.activations.softmax / sigmoid tag their output with their input, and the
 * cross-entropies then compute from those logits (numerically stable, and what tf-keras trains on). During a
 * step the activations report (output, input) pairs here; references keep the pointers unique until the
 * step's loss is computed. */
typedef struct {
    tfc_tensor *y, *x;
} logit_pair;
static _Thread_local struct {
    logit_pair *v;
    int n, cap;
    bool on;
} logits_reg;

void tfc_keras_note_logits(tfc_tensor *y, tfc_tensor *x) {
    if (!logits_reg.on || !y || !x) return;
    if (logits_reg.n == logits_reg.cap) {
        int cap = logits_reg.cap ? logits_reg.cap * 2 : 8;
        logit_pair *v = tfc_realloc(logits_reg.v, (size_t)cap * sizeof *v);
        if (!v) return; /* the loss then uses the probabilities */
        logits_reg.v = v;
        logits_reg.cap = cap;
    }
    logits_reg.v[logits_reg.n++] = (logit_pair){tfc_tensor_ref(y), tfc_tensor_ref(x)};
}

static void logits_begin(void) { logits_reg.on = true; }

static void logits_end(void) {
    for (int i = 0; i < logits_reg.n; i++) {
        tfc_tensor_unref(logits_reg.v[i].y);
        tfc_tensor_unref(logits_reg.v[i].x);
    }
    tfc_free(logits_reg.v);
    logits_reg.v = NULL;
    logits_reg.n = logits_reg.cap = 0;
    logits_reg.on = false;
}

static tfc_tensor *logits_of(const tfc_tensor *y) {
    for (int i = logits_reg.n - 1; i >= 0; i--)
        if (logits_reg.v[i].y == y) return logits_reg.v[i].x;
    return NULL;
}

static tfc_tensor *reduce_to_scalar(tfc_ctx *ctx, tfc_tensor *t, tfc_status *st) {
    int rank = tfc_tensor_rank(t);
    if (rank == 0) return t;
    int32_t axes[TFC_MAX_RANK];
    for (int i = 0; i < rank; i++) axes[i] = i;
    tfc_tensor *ax = tfc_vec_i32(axes, rank, st);
    if (!ax) return NULL;
    tfc_tensor *r = tfc_emit(ctx, "Mean", (tfc_tensor *[]){t, ax}, 2, NULL, 0, st);
    tfc_tensor_unref(ax);
    return r;
}

/* The compiled loss of each output (scalar float32 tensors in out_l) plus the model's regularization losses. */
static bool compute_loss(tfc_model_impl *impl, tfc_tensor *const *y, tfc_tensor *const *pred, tfc_tensor *sw,
                         tfc_tensor **total, tfc_tensor **out_l, tfc_status *st) {
    tfc_model *m = &impl->m;
    tfc_ctx *ctx = m->ctx;
    *total = NULL;
    if (!m->loss)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "No loss found. You may have forgotten to provide a `loss` argument in the `compile()` "
                              "method. (model \"%s\")",
                              m->base.name);
    tfc_tensor *sum = NULL;
    for (int o = 0; o < impl->n_out; o++) {
        tfc_tensor *l = tfc_loss_call_logits(m->loss, ctx, y[o], pred[o], logits_of(pred[o]), sw, st);
        if (l && tfc_tensor_dtype(l) != TFC_FLOAT) {
            tfc_attr a = TFC_ATTR_T("DstT", TFC_FLOAT);
            l = tfc_emit(ctx, "Cast", &l, 1, &a, 1, st);
        }
        if (l) l = reduce_to_scalar(ctx, l, st);
        if (!l) {
            const char *ln = impl->loss_name && *impl->loss_name ? impl->loss_name : tfc_loss_name(m->loss);
            if (st->code != TFC_OK && ln && !strstr(st->msg, ln)) {
                char msg[sizeof st->msg];
                snprintf(msg, sizeof msg, "%s", st->msg);
                tfc_status_set(st, st->code, "loss \"%s\" of output \"%s\": %s", ln, tfc_model_output_name(m, o), msg);
            }
            return false;
        }
        out_l[o] = l;
        sum = sum ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){sum, l}, 2, NULL, 0, st) : l;
        if (!sum) return false;
    }
    tfc_tensor *reg = tfc_layer_regularization_loss(&m->base, ctx, st);
    if (!reg && st->code != TFC_OK) return false;
    if (reg && !(sum = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){sum, reg}, 2, NULL, 0, st))) return false;
    *total = sum;
    return true;
}

bool tfc_model_step_ops(tfc_model *m, bool train, tfc_tensor *const *x, int n_x, tfc_tensor *const *y,
                        tfc_tensor *sw, tfc_step_out *out, tfc_status *st) {
    tfc_model_impl *impl = TFC_IMPL(m);
    tfc_ctx *ctx = m->ctx;
    *out = (tfc_step_out){0};
    if (train && !tfc_model_rng_ready(m, st)) return false;
    tfc_tape *tape = train ? tfc_tape_new(ctx, false, true, st) : NULL;
    if (train && !tape) return false;
    logits_begin();
    if (train) tfc_model_rng_begin(m);
    bool ok = tfc_model_forward(m, x, n_x, out->pred, impl->n_out, train, st) &&
              compute_loss(impl, y, out->pred, sw, &out->total, out->out_loss, st);
    tfc_model_rng_end();
    logits_end();
    int nv = ok && train ? tfc_layer_trainable_weights(&m->base, NULL, 0) : 0;
    tfc_variable **vars = NULL;
    tfc_tensor **grads = NULL;
    if (ok && nv > 0) {
        vars = tfc_calloc((size_t)nv, sizeof *vars);
        grads = tfc_calloc((size_t)nv, sizeof *grads);
        if (!vars || !grads) ok = tfc_status_oom(st, "train step", 0);
        if (ok) {
            tfc_layer_trainable_weights(&m->base, vars, nv);
            /* a LossScaleOptimizer: the gradients of the scaled loss, unscaled (Keras's _compute_gradients) */
            const bool scaled = tfc_optimizer_is_loss_scale(m->optimizer);
            tfc_tensor *target = scaled ? tfc_loss_scale_optimizer_get_scaled_loss(m->optimizer, ctx, out->total, st)
                                        : out->total;
            ok = target && tfc_tape_gradient(tape, target, NULL, 0, vars, nv, TFC_UNCONNECTED_NONE, grads, st);
            if (ok && scaled) ok = tfc_loss_scale_optimizer_get_unscaled_gradients(m->optimizer, ctx, grads, nv, grads, st);
        }
    }
    tfc_tape_free(tape);
    if (ok && nv > 0) {
        bool any = false;
        for (int i = 0; i < nv; i++) any = any || grads[i];
        if (!any)
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "No gradients provided for any variable of model \"%s\" (%d trainable weights, first "
                                "\"%s\")",
                                m->base.name, nv, tfc_variable_name(vars[0]));
    }
    if (ok && nv > 0) ok = tfc_optimizer_apply_gradients(m->optimizer, ctx, grads, vars, nv, st);
    tfc_free(vars);
    tfc_free(grads);
    return ok;
}

/* The loss tracker and metrics after one step (its results read from the tensors it gave). */
static bool step_metrics(tfc_model_impl *impl, tfc_tensor *const *y, const tfc_step_out *o, int64_t batch,
                         tfc_status *st) {
    double out_vals[TFC_KERAS_MAX_IO] = {0};
    for (int i = 0; i < impl->n_out && impl->n_out > 1; i++) out_vals[i] = tfc_tensor_get_f64(o->out_loss[i], 0);
    return update_metrics(impl, y, o->pred, tfc_tensor_get_f64(o->total, 0), out_vals, batch, st);
}

/* n steps of one execution (Keras's train_function / test_function with steps_per_execution = n): in holds
 * each step's x..., y... and (has_sw) its sample weights; the metrics are updated after every step. Graph
 * mode runs them as one call of the traced function (training_function.c), eager mode one by one. */
static bool run_steps(tfc_model_impl *impl, bool train, int n, tfc_tensor *const *in, int n_x, bool has_sw,
                      tfc_status *st) {
    tfc_model *m = &impl->m;
    int n_y = impl->n_out, per = n_x + n_y + (has_sw ? 1 : 0);
    tfc_step_out outs[TFC_MAX_STEPS_PER_EXECUTION];
    bool graph = tfc_model_graph_mode(m, train);
    if (graph && !tfc_model_fn_run(m, train ? TFC_FN_TRAIN : TFC_FN_TEST, n, in, n_x, has_sw, outs, st)) return false;
    for (int s = 0; s < n; s++) {
        tfc_tensor *const *x = in + s * per, *const *y = x + n_x, *sw = has_sw ? y[n_y] : NULL;
        if (!graph && !tfc_model_step_ops(m, train, x, n_x, y, sw, &outs[s], st)) return false;
        if (!step_metrics(impl, y, &outs[s], tfc_tensor_dim(x[0], 0), st)) return false;
    }
    return true;
}

/* One step (an execution of one) on a batch. */
static bool one_step(tfc_model_impl *impl, bool train, tfc_tensor *const *x, int n_x, tfc_tensor *const *y,
                     tfc_tensor *sw, tfc_status *st) {
    tfc_tensor *in[2 * TFC_KERAS_MAX_IO + 1];
    int k = 0;
    for (int i = 0; i < n_x; i++) in[k++] = x[i];
    for (int i = 0; i < impl->n_out; i++) in[k++] = y[i];
    if (sw) in[k++] = sw;
    return run_steps(impl, train, 1, in, n_x, sw != NULL, st);
}

static bool train_step(tfc_model_impl *impl, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, tfc_tensor *sw,
                       tfc_status *st) {
    return one_step(impl, true, x, n_x, y, sw, st);
}

static tfc_tensor *rows(tfc_ctx *ctx, tfc_tensor *t, int64_t begin, int64_t len, tfc_status *st);

/* Local replica l's piece of the global batch (rows of x, y and sw, in the current scope); *n = 0 when the
 * batch is too small to give it rows. */
static bool replica_piece(tfc_model_impl *impl, int l, tfc_tensor *const *x, int n_x, tfc_tensor *const *y,
                          tfc_tensor *sw, tfc_tensor **px, tfc_tensor **py, tfc_tensor **psw, int64_t *n,
                          tfc_status *st) {
    tfc_strategy *s = impl->strategy;
    tfc_ctx *ctx = impl->m.ctx;
    int L = tfc_strategy_num_local_replicas(s);
    int64_t b0;
    tfc_distribute_split_batch(tfc_tensor_dim(x[0], 0), tfc_strategy_num_replicas_in_sync(s),
                               tfc_strategy_worker_id(s) * L + l, &b0, n);
    if (*n == 0) return true;
    bool ok = true;
    for (int i = 0; i < n_x && ok; i++) ok = (px[i] = rows(ctx, x[i], b0, *n, st)) != NULL;
    for (int i = 0; i < impl->n_out && ok; i++) ok = (py[i] = rows(ctx, y[i], b0, *n, st)) != NULL;
    if (ok && sw) ok = (*psw = rows(ctx, sw, b0, *n, st)) != NULL;
    return ok;
}

/* A train step under a strategy (tf.distribute's Keras train step): the global batch is split into
 * num_replicas_in_sync pieces (tfc_distribute_split_batch); this worker's replicas each take theirs, one after
 * another on this thread (local replicas share the CPU and the variables); each replica's loss is scaled by its share of
 * the global batch (compute_average_loss with the global batch size; regularization losses are split the same
 * way), the local gradients are summed, then all-reduced across workers in packs of
 * communication_options.bytes_per_pack, in the order of the trainable weights, and applied once. Metrics and the
 * loss tracker take each replica's piece; the logs aggregate them across workers (current_logs). */
static bool dist_train_step(tfc_model_impl *impl, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, tfc_tensor *sw,
                            tfc_status *st) {
    tfc_model *m = &impl->m;
    tfc_ctx *ctx = m->ctx;
    tfc_strategy *s = impl->strategy;
    int L = tfc_strategy_num_local_replicas(s);
    int64_t B = tfc_tensor_dim(x[0], 0);
    int nv = tfc_layer_trainable_weights(&m->base, NULL, 0);
    tfc_variable **vars = tfc_calloc((size_t)(nv ? nv : 1), sizeof *vars);
    tfc_tensor **gsum = tfc_calloc((size_t)(nv ? nv : 1) * 2, sizeof *gsum), **grads = gsum + (nv ? nv : 1);
    bool ok = vars && gsum ? true : tfc_status_oom(st, "train step", 0);
    if (ok) tfc_layer_trainable_weights(&m->base, vars, nv);
    for (int l = 0; l < L && ok; l++) {
        tfc_tensor *px[TFC_KERAS_MAX_IO], *py[TFC_KERAS_MAX_IO], *psw = NULL;
        int64_t n = 0;
        if (!(ok = replica_piece(impl, l, x, n_x, y, sw, px, py, &psw, &n, st))) break;
        if (n == 0) continue;
        tfc_tape *tape = tfc_tape_new(ctx, false, true, st);
        if (!tape) {
            ok = false;
            break;
        }
        tfc_tensor *pred[TFC_KERAS_MAX_IO] = {0}, *out_l[TFC_KERAS_MAX_IO] = {0}, *total = NULL, *scaled = NULL, *w = NULL;
        logits_begin();
        ok = tfc_model_forward(m, px, n_x, pred, impl->n_out, true, st) &&
             compute_loss(impl, py, pred, psw, &total, out_l, st) && (w = tfc_scalar_f32((float)n / (float)B, st)) &&
             (scaled = tfc_emit(ctx, "Mul", (tfc_tensor *[]){total, w}, 2, NULL, 0, st));
        logits_end();
        tfc_tensor_unref(w);
        if (ok && nv > 0) ok = tfc_tape_gradient(tape, scaled, NULL, 0, vars, nv, TFC_UNCONNECTED_NONE, grads, st);
        tfc_tape_free(tape);
        for (int i = 0; i < nv && ok; i++)
            if (grads[i]) gsum[i] = gsum[i] ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){gsum[i], grads[i]}, 2, NULL, 0, st) : grads[i];
        for (int i = 0; i < nv && ok; i++) ok = !grads[i] || gsum[i];
        if (ok) {
            tfc_step_out so = {.total = total};
            memcpy(so.out_loss, out_l, sizeof out_l);
            memcpy(so.pred, pred, sizeof pred);
            ok = step_metrics(impl, py, &so, n, st);
        }
    }
    /* a worker whose pieces were all empty still takes part with zeros */
    for (int i = 0; i < nv && ok; i++)
        if (!gsum[i]) {
            tfc_tensor *v = tfc_variable_read(ctx, vars[i], st);
            ok = v && (gsum[i] = tfc_emit(ctx, "ZerosLike", &v, 1, NULL, 0, st)) != NULL;
        }
    tfc_collective *c = tfc_strategy_collective(s);
    if (ok && c && nv > 0) {
        for (int i = 0; i < nv; i++) tfc_tensor_ref(gsum[i]); /* all_reduce_n releases what it replaces */
        ok = tfc_collective_all_reduce_n(c, gsum, nv, TFC_REDUCE_SUM,
                                         tfc_strategy_communication_options(s)->bytes_per_pack, st);
        /* the packs' tensors are new references outside the scope: hand them to it */
        for (int i = 0; i < nv; i++) {
            tfc_tensor *g = gsum[i];
            gsum[i] = ok ? tfc_emit(ctx, "Identity", &g, 1, NULL, 0, st) : NULL;
            ok = ok && gsum[i];
            tfc_tensor_unref(g);
        }
    }
    if (ok && nv > 0) ok = tfc_optimizer_apply_gradients(m->optimizer, ctx, gsum, vars, nv, st);
    tfc_free(vars);
    tfc_free(gsum);
    return ok;
}

/* evaluate's step under a strategy: this worker's replicas evaluate their pieces of the global batch. */
static bool test_step(tfc_model_impl *impl, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, tfc_tensor *sw,
                      tfc_status *st);
static bool dist_test_step(tfc_model_impl *impl, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, tfc_tensor *sw,
                           tfc_status *st) {
    bool ok = true;
    for (int l = 0; l < tfc_strategy_num_local_replicas(impl->strategy) && ok; l++) {
        tfc_tensor *px[TFC_KERAS_MAX_IO], *py[TFC_KERAS_MAX_IO], *psw = NULL;
        int64_t n = 0;
        ok = replica_piece(impl, l, x, n_x, y, sw, px, py, &psw, &n, st) && (n == 0 || test_step(impl, px, n_x, py, psw, st));
    }
    return ok;
}

static bool test_step(tfc_model_impl *impl, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, tfc_tensor *sw,
                      tfc_status *st) {
    return one_step(impl, false, x, n_x, y, sw, st);
}

bool tfc_model_build_optimizer(tfc_model *m, tfc_status *st) {
    if (!m->optimizer) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "model \"%s\" is not compiled", m->base.name);
    if (tfc_optimizer_iterations(m->optimizer) > 0) return true;
    int nv = tfc_layer_trainable_weights(&m->base, NULL, 0);
    if (nv == 0) return true;
    tfc_variable **vars = tfc_calloc((size_t)nv, sizeof *vars);
    if (!vars) return tfc_status_oom(st, "optimizer state", (size_t)nv * sizeof *vars);
    tfc_layer_trainable_weights(&m->base, vars, nv);
    bool ok = tfc_optimizer_build(m->optimizer, m->ctx, vars, nv, st);
    tfc_free(vars);
    return ok;
}

/* ---- data ---------------------------------------------------------------------------------------------- */

typedef struct {
    tfc_tensor *x[TFC_KERAS_MAX_IO], *y[TFC_KERAS_MAX_IO], *sw;
    int n_x, n_y;
    int64_t n;
} data;

/* Tensors fit creates (splits, class weights); released when it returns. */
typedef struct {
    tfc_tensor *t[3 * TFC_KERAS_MAX_IO + 8];
    int n;
} owned;

static tfc_tensor *own(owned *o, tfc_ctx *ctx, tfc_tensor *t) {
    if (!t) return NULL;
    t = tfc_keep(ctx, t);
    o->t[o->n++] = t;
    return t;
}

static void owned_free(owned *o) {
    for (int i = 0; i < o->n; i++) tfc_tensor_unref(o->t[i]);
    o->n = 0;
}

static bool check_cardinality(const char *what, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, int n_y,
                              tfc_tensor *sw, int64_t *n, tfc_status *st) {
    char xs[128] = "", ys[128] = "";
    size_t kx = 0, ky = 0;
    bool same = true;
    int64_t n0 = -1;
    for (int i = 0; i < n_x; i++) {
        if (!x[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: x[%d] is NULL", what, i);
        if (tfc_tensor_rank(x[i]) < 1)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: x[%d] is a scalar; inputs are [samples, ...]", what, i);
        int64_t d = tfc_tensor_dim(x[i], 0);
        if (n0 < 0) n0 = d;
        same = same && d == n0;
        if (kx < sizeof xs) kx += (size_t)snprintf(xs + kx, sizeof xs - kx, "%s%lld", i ? ", " : "", (long long)d);
    }
    for (int i = 0; i < n_y; i++) {
        if (!y[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: y[%d] is NULL", what, i);
        if (tfc_tensor_rank(y[i]) < 1)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: y[%d] is a scalar; targets are [samples, ...]", what, i);
        int64_t d = tfc_tensor_dim(y[i], 0);
        if (n0 < 0) n0 = d;
        same = same && d == n0;
        if (ky < sizeof ys) ky += (size_t)snprintf(ys + ky, sizeof ys - ky, "%s%lld", i ? ", " : "", (long long)d);
    }
    if (!same)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: Data cardinality is ambiguous:\n  x sizes: %s\n  y sizes: %s\nMake sure all arrays "
                              "contain the same number of samples.",
                              what, xs, ys);
    if (sw && (tfc_tensor_rank(sw) < 1 || tfc_tensor_dim(sw, 0) != n0))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "%s: sample_weight has shape %s but the data have %lld samples", what,
                              TFC_KSHP(tfc_tensor_shape(sw)), (long long)n0);
    *n = n0 < 0 ? 0 : n0;
    return true;
}

/* Rows [begin, begin + len) of t (a new tensor owned by the current scope). */
static tfc_tensor *rows(tfc_ctx *ctx, tfc_tensor *t, int64_t begin, int64_t len, tfc_status *st) {
    int64_t b[TFC_MAX_RANK] = {0}, s[TFC_MAX_RANK];
    int rank = tfc_tensor_rank(t);
    for (int i = 0; i < rank; i++) s[i] = -1;
    b[0] = begin;
    s[0] = len;
    return tfc_slice(ctx, t, b, s, st);
}

/* A batch: the rows perm[start .. start + len) (or start .. start + len when perm is NULL) of every array. */
static bool make_batch(tfc_ctx *ctx, const data *d, const int64_t *perm, int64_t start, int64_t len, tfc_tensor **x,
                       tfc_tensor **y, tfc_tensor **sw, tfc_status *st) {
    tfc_tensor *idx = NULL;
    if (perm && !(idx = tfc_tensor_from_data(TFC_INT64, &len, 1, perm + start, (size_t)len * sizeof(int64_t), st)))
        return false;
    bool ok = true;
#define TAKE(t) (perm ? tfc_gather(ctx, (t), idx, 0, 0, st) : rows(ctx, (t), start, len, st))
    for (int i = 0; i < d->n_x && ok; i++) ok = (x[i] = TAKE(d->x[i])) != NULL;
    for (int i = 0; i < d->n_y && ok; i++) ok = (y[i] = TAKE(d->y[i])) != NULL;
    if (ok && sw) *sw = d->sw ? TAKE(d->sw) : NULL, ok = !d->sw || *sw;
#undef TAKE
    tfc_tensor_unref(idx);
    return ok;
}

static uint64_t mix64(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Fisher-Yates with a splitmix64 stream; bounded draws by rejection (no modulo bias). */
static void permutation(int64_t *perm, int64_t n, uint64_t seed) {
    uint64_t state = seed;
    for (int64_t i = 0; i < n; i++) perm[i] = i;
    for (int64_t i = n - 1; i > 0; i--) {
        uint64_t bound = (uint64_t)i + 1, limit = UINT64_MAX - UINT64_MAX % bound, r;
        do r = mix64(state++);
        while (r >= limit);
        int64_t j = (int64_t)(r % bound), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

uint64_t tfc_model_fresh_seed(void) {
    static _Atomic uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 32) ^ ((uint64_t)getpid() << 16) ^
                 mix64(atomic_fetch_add(&counter, 1)));
}

/* The per-epoch seeding: under a global seed, each epoch runs with global seed f(base, epoch) and a fresh op
 * seed counter, so random layers draw the same numbers in an epoch whatever ran before it. */
static void seed_epoch(tfc_ctx *ctx, uint64_t base, int epoch) {
    if (!tfc_ctx_seed_save(ctx).has_seed) return;
    int64_t s = (int64_t)(mix64(base ^ mix64((uint64_t)epoch + 0x45504F43ull)) % 2147483647ull);
    tfc_ctx_seed_restore(ctx, &(tfc_ctx_seed_state){.has_seed = true, .seed = s ? s : 1});
}

static uint64_t shuffle_seed(uint64_t base, int64_t data_epoch) { return mix64(base ^ mix64((uint64_t)data_epoch ^ 0x5348554646ull)); }

/* Keras's class_weight: per-sample weights from the class of each label (argmax of one-hot rows). */
static tfc_tensor *class_weights(const data *d, const double *cw, int n_cw, tfc_status *st) {
    if (d->n_y != 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "`class_weight` is only supported for Models with a single output.");
        return NULL;
    }
    tfc_tensor *y = d->y[0];
    int rank = tfc_tensor_rank(y);
    if (rank > 2) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "`class_weight` not supported for 3+ dimensional targets (y %s).",
                       TFC_KSHP(tfc_tensor_shape(y)));
        return NULL;
    }
    int64_t n = d->n, cols = rank == 2 ? tfc_tensor_dim(y, 1) : 1;
    tfc_tensor *w = tfc_tensor_new(TFC_FLOAT, &n, 1, st);
    if (!w) return NULL;
    float *wd = tfc_tensor_mutable_data(w);
    tfc_dtype dt = tfc_tensor_dtype(y);
    const void *yd = tfc_tensor_data(y);
    for (int64_t i = 0; i < n; i++) {
        int64_t cls = 0;
        if (cols > 1) {
            double best = -INFINITY;
            for (int64_t c = 0; c < cols; c++) {
                double v = tfc_dtype_get_f64(dt, yd, i * cols + c);
                if (v > best) best = v, cls = c;
            }
        } else {
            cls = (int64_t)tfc_dtype_get_f64(dt, yd, i);
        }
        if (cls < 0 || cls >= n_cw) {
            tfc_tensor_unref(w);
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "class_weight: sample %lld has class %lld, outside the %d classes given [0, %d)", (long long)i,
                           (long long)cls, n_cw, n_cw);
            return NULL;
        }
        wd[i] = (float)cw[cls] * (d->sw ? (float)tfc_tensor_get_f64(d->sw, i) : 1.0f);
    }
    return w;
}

/* ---- report_throughput: steps/s and the share of the epoch spent waiting for batches ------------------- */

typedef struct {
    uint64_t t0, wait_ns; /* t0 0: not measuring */
    int64_t steps;
} throughput;

static void report_throughput(FILE *out, int epoch, const throughput *tp) {
    double secs = (double)(tfc_trace_now() - tp->t0) / 1e9;
    fprintf(out, "Epoch %d: %.1f steps/s, input pipeline wait %.1f%% of the epoch (%.3f ms of %.3f ms)\n", epoch + 1,
            secs > 0 ? (double)tp->steps / secs : 0.0, secs > 0 ? 100.0 * (double)tp->wait_ns / 1e9 / secs : 0.0,
            (double)tp->wait_ns / 1e6, secs * 1e3);
    fflush(out);
}

/* ---- evaluate (also fit's validation) ------------------------------------------------------------------- */

static bool run_test(tfc_model_impl *impl, const data *d, int64_t batch_size, int64_t steps, tfc_callback *const *cbs,
                     int n_cbs, tfc_callback *bar, tfc_logs *logs, tfc_status *st) {
    tfc_model *m = &impl->m;
    tfc_model_reset_metrics(m);
    if (!tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TEST_BEGIN, m, 0, NULL, st)) return false;
    int64_t n_batches = (d->n + batch_size - 1) / batch_size;
    if (steps > 0 && steps < n_batches) n_batches = steps;
    for (int64_t b = 0; b < n_batches; b++) {
        if (!tfc_scope_begin(m->ctx, st)) return false;
        tfc_tensor *x[TFC_KERAS_MAX_IO], *y[TFC_KERAS_MAX_IO], *sw = NULL;
        int64_t start = b * batch_size, len = d->n - start < batch_size ? d->n - start : batch_size;
        bool ok = make_batch(m->ctx, d, NULL, start, len, x, y, &sw, st) &&
                  (impl->strategy ? dist_test_step(impl, x, d->n_x, y, sw, st) : test_step(impl, x, d->n_x, y, sw, st));
        tfc_scope_end(m->ctx);
        if (!ok) return false;
        if (bar) {
            tfc_logs bl = {0};
            current_logs(impl, &bl, NULL);
            tfc_progbar_test_batch(bar, b, &bl);
        }
    }
    *logs = (tfc_logs){0};
    current_logs(impl, logs, NULL);
    return tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TEST_END, m, 0, logs, st);
}

static bool ready_to_run(tfc_model *m, int n_y, tfc_status *st) {
    if (!m) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "NULL model");
    tfc_model_impl *impl = TFC_IMPL(m);
    if (impl->deferred.code != TFC_OK) return tfc_status_set(st, impl->deferred.code, "%s", impl->deferred.msg);
    if (!m->compiled)
        return tfc_status_set(st, TFC_FAILED_PRECONDITION,
                              "You must compile your model before training/testing. Use `model.compile(optimizer, "
                              "loss)`. (model \"%s\")",
                              m->base.name);
    if (n_y != impl->n_out)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Model \"%s\" has %d output(s) but %d target array(s) were given",
                              m->base.name, impl->n_out, n_y);
    return true;
}

int tfc_model_evaluate_n(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, int n_y,
                         const tfc_eval_opts *opts, double *results, int max, tfc_status *st) {
    tfc_eval_opts o = opts ? *opts : (tfc_eval_opts){0};
    int n_cbs = 0;
    while (n_cbs < 16 && o.callbacks[n_cbs]) n_cbs++;
    int ret = -1;
    tfc_callback *bar = NULL;
    tfc_callback *cbs[18];
    data d = {.n_x = n_x, .n_y = n_y, .sw = o.sample_weight};
    if (!x || !y || n_x < 1 || n_y < 1 || n_x > TFC_KERAS_MAX_IO || n_y > TFC_KERAS_MAX_IO) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "evaluate: x and y must hold 1 to %d arrays", TFC_KERAS_MAX_IO);
        goto done;
    }
    for (int i = 0; i < n_x; i++) d.x[i] = x[i];
    for (int i = 0; i < n_y; i++) d.y[i] = y[i];
    if (!ready_to_run(m, n_y, st) || !check_cardinality("evaluate", x, n_x, y, n_y, o.sample_weight, &d.n, st) ||
        !tfc_model_prepare_inputs(m, x, n_x, st))
        goto done;
    int64_t bs = o.batch_size > 0 ? o.batch_size : 32;
    int64_t steps = (d.n + bs - 1) / bs;
    if (o.steps > 0 && o.steps < steps) steps = o.steps;
    FILE *out = o.out ? o.out : stdout;
    int verbose = tfc_verbose_resolve(o.verbose, out);
    for (int i = 0; i < n_cbs; i++) cbs[i] = o.callbacks[i];
    if (verbose && !(bar = tfc_progbar_new(out, verbose, 1, steps, false))) {
        tfc_status_oom(st, "evaluate", 0);
        goto done;
    }
    if (bar) cbs[n_cbs] = bar;
    tfc_logs logs;
    if (!run_test(TFC_IMPL(m), &d, bs, steps, cbs, n_cbs + (bar != NULL), bar, &logs, st)) goto done;
    for (int i = 0; i < logs.n && i < max && results; i++) results[i] = logs.values[i];
    ret = logs.n;
    tfc_status_clear(st);
done:
    tfc_callback_free(bar);
    for (int i = 0; i < n_cbs; i++) tfc_callback_free(o.callbacks[i]);
    return ret;
}

int tfc_model_evaluate(tfc_model *m, tfc_tensor *x, tfc_tensor *y, const tfc_eval_opts *opts, double *results, int max,
                       tfc_status *st) {
    return tfc_model_evaluate_n(m, &x, 1, &y, 1, opts, results, max, st);
}

/* ---- fit ----------------------------------------------------------------------------------------------- */

char **tfc_fit_val_names(tfc_model *m, int *n_names, tfc_status *st) {
    int n = tfc_model_metrics_names(m, NULL, 0);
    *n_names = n;
    if (2 * n + 1 > TFC_LOGS_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "fit: %d metrics are more than the logs can hold (%d)", n,
                              (TFC_LOGS_MAX - 1) / 2),
               NULL;
    const char *names[TFC_LOGS_MAX];
    tfc_model_metrics_names(m, names, TFC_LOGS_MAX);
    char **v = tfc_calloc((size_t)(n ? n : 1), sizeof *v);
    if (!v) return tfc_status_oom(st, "fit", (size_t)(n ? n : 1) * sizeof *v), NULL;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(names[i]) + 5;
        if (!(v[i] = tfc_malloc(len))) {
            tfc_fit_val_names_free(v, n);
            return tfc_status_oom(st, "fit", len), NULL;
        }
        snprintf(v[i], len, "val_%s", names[i]);
    }
    return v;
}

void tfc_fit_val_names_free(char **names, int n) {
    for (int i = 0; names && i < n; i++) tfc_free(names[i]);
    tfc_free(names);
}

/* MultiWorkerMirroredStrategy's initial-value broadcast: every worker starts fit from worker 0's weights. */
bool tfc_model_dist_sync(tfc_model *m, tfc_status *st) {
    if (!TFC_IMPL(m)->strategy) return true;
    int n = tfc_layer_weights(&m->base, NULL, 0);
    tfc_variable **v = tfc_calloc((size_t)(n ? n : 1), sizeof *v);
    if (!v) return tfc_status_oom(st, "fit", 0);
    tfc_layer_weights(&m->base, v, n);
    bool ok = tfc_strategy_broadcast_variables(TFC_IMPL(m)->strategy, v, n, st);
    if (ok) TFC_IMPL(m)->dist_synced = n;
    tfc_free(v);
    return ok;
}

bool tfc_model_fit_n(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor *const *y, int n_y,
                     const tfc_fit_opts *opts, tfc_history **history, tfc_status *st) {
    tfc_fit_opts o = opts ? *opts : (tfc_fit_opts){0};
    int n_user = 0;
    while (n_user < 16 && o.callbacks[n_user]) n_user++;
    if (history) *history = NULL;
    tfc_model_impl *impl = m ? TFC_IMPL(m) : NULL;
    tfc_ctx *ctx = m ? m->ctx : NULL;
    bool ok = true;
    owned own_t = {0};
    data train = {.n_x = n_x, .n_y = n_y, .sw = o.sample_weight}, val = {.n_x = n_x, .n_y = n_y};
    bool has_val = false;
    tfc_history *hist = NULL;
    tfc_callback *cbs[18] = {0}, *hist_cb = NULL, *bar = NULL;
    int64_t *perm = NULL, *perm_next = NULL;
    tfc_fit_prefetch *pf = NULL;
    struct tfc_fit_state fs = {.out = o.out ? o.out : stdout};
    char **val_names = NULL;
    int n_names = 0;
    const tfc_ctx_seed_state saved_seed = tfc_ctx_seed_save(ctx);

    if (!x || !y || n_x < 1 || n_y < 1 || n_x > TFC_KERAS_MAX_IO || n_y > TFC_KERAS_MAX_IO) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "fit: x and y must hold 1 to %d arrays", TFC_KERAS_MAX_IO);
        goto done;
    }
    if (!(ok = ready_to_run(m, n_y, st))) goto done;
    if (impl->fit) {
        ok = tfc_status_set(st, TFC_FAILED_PRECONDITION, "fit: model \"%s\" is already training", m->base.name);
        goto done;
    }
    int64_t n = 0;
    if (!(ok = check_cardinality("fit", x, n_x, y, n_y, o.sample_weight, &n, st))) goto done;
    int64_t bs = o.batch_size > 0 ? o.batch_size : 32;
    int epochs = o.epochs > 0 ? o.epochs : 1;
    if (!(o.validation_split >= 0 && o.validation_split < 1)) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "fit: validation_split must be in [0, 1), got %g", o.validation_split);
        goto done;
    }
    for (int i = 0; i < n_x; i++) train.x[i] = x[i];
    for (int i = 0; i < n_y; i++) train.y[i] = y[i];
    train.n = n;
    /* validation_data, else the last validation_split of the samples (taken before shuffling, as Keras) */
    if (o.validation_x || o.validation_y) {
        if (!o.validation_x || !o.validation_y || n_x != 1 || n_y != 1) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "fit: validation_data needs both validation_x and validation_y (single-input, "
                                "single-output models)");
            goto done;
        }
        val.x[0] = o.validation_x;
        val.y[0] = o.validation_y;
        if (!(ok = check_cardinality("fit (validation_data)", val.x, 1, val.y, 1, NULL, &val.n, st))) goto done;
        has_val = true;
    } else if (o.validation_split > 0) {
        int64_t split_at = (int64_t)floor((double)n * (1.0 - o.validation_split));
        if (split_at == 0 || split_at == n) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                "Training data contains %lld samples, which is not sufficient to split it into a "
                                "validation and training set as specified by `validation_split=%g`. Either provide "
                                "more data, or a different value for the `validation_split` argument.",
                                (long long)n, o.validation_split);
            goto done;
        }
        if (!(ok = tfc_scope_begin(ctx, st))) goto done;
        for (int i = 0; i < n_x && ok; i++)
            ok = (train.x[i] = own(&own_t, ctx, rows(ctx, x[i], 0, split_at, st))) &&
                 (val.x[i] = own(&own_t, ctx, rows(ctx, x[i], split_at, n - split_at, st)));
        for (int i = 0; i < n_y && ok; i++)
            ok = (train.y[i] = own(&own_t, ctx, rows(ctx, y[i], 0, split_at, st))) &&
                 (val.y[i] = own(&own_t, ctx, rows(ctx, y[i], split_at, n - split_at, st)));
        if (ok && o.sample_weight) {
            ok = (train.sw = own(&own_t, ctx, rows(ctx, o.sample_weight, 0, split_at, st))) &&
                 (val.sw = own(&own_t, ctx, rows(ctx, o.sample_weight, split_at, n - split_at, st)));
        }
        tfc_scope_end(ctx);
        if (!ok) goto done;
        train.n = split_at;
        val.n = n - split_at;
        has_val = true;
    }
    if (o.class_weight && o.n_class_weight > 0) {
        tfc_tensor *w = class_weights(&train, o.class_weight, o.n_class_weight, st);
        if (!(ok = w != NULL)) goto done;
        own_t.t[own_t.n++] = w;
        train.sw = w;
    }
    if (train.n == 0) {
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "fit: there are no training samples");
        goto done;
    }
    if (!(ok = tfc_model_prepare_inputs(m, train.x, n_x, st))) goto done;
    if (m->kind == TFC_MODEL_SUBCLASSED && !m->base.built) {
        /* build the layers (BackupAndRestore restores weights before the first step) */
        tfc_tensor *bx[TFC_KERAS_MAX_IO], *by[TFC_KERAS_MAX_IO], *pred[TFC_KERAS_MAX_IO];
        if (!(ok = tfc_scope_begin(ctx, st))) goto done;
        int64_t len = train.n < bs ? train.n : bs;
        ok = make_batch(ctx, &train, NULL, 0, len, bx, by, NULL, st) &&
             tfc_model_forward(m, bx, n_x, pred, impl->n_out, false, st);
        tfc_scope_end(ctx);
        if (!ok) goto done;
    }
    int64_t per_pass = (train.n + bs - 1) / bs;
    int64_t steps = o.steps_per_epoch > 0 ? o.steps_per_epoch : per_pass;
    int verbose = tfc_verbose_resolve(o.verbose, fs.out);
    int freq = o.validation_freq > 0 ? o.validation_freq : 1;
    int64_t val_bs = o.validation_batch_size > 0 ? o.validation_batch_size : bs;

    /* logs keys of validation: "val_" + each name */
    if (!(val_names = tfc_fit_val_names(m, &n_names, st))) {
        ok = false;
        goto done;
    }

    /* callbacks: the user's, History, then the progress bar (Keras's order) */
    hist = tfc_history_new();
    hist_cb = hist ? tfc_callback_history_new(hist) : NULL;
    if (verbose) bar = tfc_progbar_new(fs.out, verbose, epochs, steps, true);
    perm = tfc_malloc((size_t)train.n * sizeof *perm);
    if (!hist || !hist_cb || (verbose && !bar) || !perm) {
        ok = tfc_status_oom(st, "fit", 0);
        goto done;
    }
    int n_cbs = 0;
    for (int i = 0; i < n_user; i++) cbs[n_cbs++] = o.callbacks[i];
    cbs[n_cbs++] = hist_cb;
    if (bar) cbs[n_cbs++] = bar;

    if (saved_seed.has_seed) {
        fs.seed_base = mix64((uint64_t)saved_seed.seed * 0x100000001B3ull ^ mix64((uint64_t)saved_seed.op_seed_counter));
    } else {
        fs.seed_base = tfc_model_fresh_seed();
    }
    if (impl->strategy && tfc_strategy_collective(impl->strategy)) { /* one shuffling order for all workers */
        int64_t sb = (int64_t)fs.seed_base;
        tfc_tensor *t = tfc_tensor_from_data(TFC_INT64, NULL, 0, &sb, sizeof sb, st), *b = NULL;
        ok = t && (b = tfc_collective_broadcast(tfc_strategy_collective(impl->strategy), t, 0, st));
        if (ok) fs.seed_base = (uint64_t)*(const int64_t *)tfc_tensor_data(b);
        tfc_tensor_unref(t);
        tfc_tensor_unref(b);
        if (!ok) goto done;
    }
    fs.initial_epoch = o.initial_epoch;
    impl->fit = &fs;
    m->stop_training = false;
    bool shuffle = TFC_FLAG(o.shuffle, true);
    /* the permutations of passes p and p + 1 (perms[p & 1]; perm_pass says which pass each holds): the queued
     * batches ahead may reach into the next pass while this one's batches are taken */
    int64_t *perms[2] = {perm, NULL}, perm_pass[2] = {-1, -1};
    tfc_logs epoch_logs = {0};
    throughput tp = {0};
    /* the arrays a batch takes rows of, in make_batch's order: x..., y..., sample weights */
    tfc_tensor *srcs[2 * TFC_KERAS_MAX_IO + 1];
    int n_src = 0;
    for (int i = 0; i < n_x; i++) srcs[n_src++] = train.x[i];
    for (int i = 0; i < n_y; i++) srcs[n_src++] = train.y[i];
    if (train.sw) srcs[n_src++] = train.sw;
    if (!(ok = tfc_model_dist_sync(m, st))) goto done;
    if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_BEGIN, m, 0, NULL, st))) goto done;
    /* Keras feeds fit from a tf.data pipeline that prefetches the batches ahead in its own threads; the
     * prefetcher does that here (training_prefetch.h). Started after on_train_begin, which may move the
     * initial epoch and seed (BackupAndRestore); without it (no thread) batches are gathered in the loop. */
    const tfc_runtime_config *cfg = tfc_ctx_config(ctx);
    if (cfg->fit_prefetch && tfc_fit_prefetch_wanted(srcs, n_src) &&
        (!shuffle || (perm_next = tfc_malloc((size_t)train.n * sizeof *perm)))) {
        tfc_status pst = {0};
        pf = tfc_fit_prefetch_new(srcs, n_src, bs, cfg->fit_prefetch_depth, &pst);
        perms[1] = perm_next;
    }
    /* positions of the batch stream: the last one to train on, and the last one queued in the prefetcher */
    const int64_t end_pos = (int64_t)epochs * steps;
    int64_t queued_to = -1;
    const int spe = impl->steps_per_execution > 0 ? impl->steps_per_execution : 1;
    const int per_step = n_x + n_y + (train.sw ? 1 : 0); /* x..., y..., sample weights */
    tfc_tensor *exec_in[TFC_MAX_STEPS_PER_EXECUTION * (2 * TFC_KERAS_MAX_IO + 1)];
    tfc_tensor *held[TFC_MAX_STEPS_PER_EXECUTION * (2 * TFC_KERAS_MAX_IO + 1)] = {0}; /* prefetched batches */
    for (int epoch = fs.initial_epoch; epoch < epochs && ok; epoch++) {
        seed_epoch(ctx, fs.seed_base, epoch);
        /* Dropout's masks of an epoch: from the model's seed generator set to (f(base, epoch), 0), a captured
         * resource of train_function (no new trace) */
        if (!(ok = tfc_model_rng_reset(m, mix64(fs.seed_base ^ mix64((uint64_t)epoch ^ 0x44524F50ull)), st))) break;
        tfc_model_reset_metrics(m);
        if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_EPOCH_BEGIN, m, epoch, NULL, st))) break;
        tp = (throughput){.t0 = o.report_throughput ? tfc_trace_now() : 0};
        /* executions of steps_per_execution steps (Keras's train_function): batch hooks see the first step of
         * an execution (begin) and its last (end); the last execution of an epoch may be shorter */
        bool open = false;
        int n_exec = 0;
        uint64_t exec_t0 = 0;
        for (int64_t step = 0; step < steps && ok; step++) {
            if (step % spe == 0) {
                if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_BATCH_BEGIN, m, step, NULL, st))) break;
                if (!(ok = tfc_scope_begin(ctx, st))) break;
                open = true;
                n_exec = 0;
                exec_t0 = tfc_trace_level ? tfc_trace_now() : 0;
            }
            /* batches form one stream over data passes (steps_per_epoch may span passes, as Keras) */
            int64_t pos = (int64_t)epoch * steps + step, pass = pos / per_pass, b = pos % per_pass;
            int64_t *pp = NULL;
            if (shuffle) {
                int w = pf ? (int)(pass & 1) : 0;
                if (perm_pass[w] != pass) {
                    permutation(perms[w], train.n, shuffle_seed(fs.seed_base, pass));
                    perm_pass[w] = pass;
                }
                pp = perms[w];
            }
            int64_t start = b * bs, len = train.n - start < bs ? train.n - start : bs;
            /* the profiler's step events, and the input wait of report_throughput */
            uint64_t trace_t0 = tfc_trace_level || o.report_throughput ? tfc_trace_now() : 0, wait_t1 = 0;
            tfc_tensor **bx = exec_in + n_exec * per_step, **by = bx + n_x, *bsw = NULL;
            tfc_tensor **pre = held + n_exec * per_step;
            int got = tfc_fit_prefetch_take(pf, pp, start, len, pre, st);
            if (got > 0) {
                int k = 0;
                for (int i = 0; i < n_x; i++) bx[i] = pre[k++];
                for (int i = 0; i < n_y; i++) by[i] = pre[k++];
                if (train.sw) bsw = pre[k++];
            } else {
                queued_to = pos; /* a miss empties the queue */
                ok = got == 0 && make_batch(ctx, &train, pp, start, len, bx, by, &bsw, st);
            }
            if (train.sw) by[n_y] = bsw;
            n_exec++;
            if (trace_t0) {
                wait_t1 = tfc_trace_now();
                tp.wait_ns += wait_t1 - trace_t0;
                tfc_trace_record(1, "data", "Iterator::GetNext", NULL, trace_t0, wait_t1, -1);
            }
            /* the batches ahead (the next positions of the stream, up to the next pass), gathered while the
             * steps run; the thread is woken when half the queue waits (training_prefetch.h) */
            while (ok && pf && queued_to + 1 < end_pos && queued_to + 1 <= pos + tfc_fit_prefetch_depth(pf)) {
                int64_t npos = queued_to + 1, npass = npos / per_pass, nstart = npos % per_pass * bs;
                if (npass > pass + 1) break;
                int64_t *np = NULL;
                if (shuffle) {
                    int w = (int)(npass & 1);
                    if (perm_pass[w] != npass) {
                        permutation(perms[w], train.n, shuffle_seed(fs.seed_base, npass));
                        perm_pass[w] = npass;
                    }
                    np = perms[w];
                }
                if (!tfc_fit_prefetch_post(pf, np, nstart, train.n - nstart < bs ? train.n - nstart : bs)) break;
                queued_to = npos;
            }
            if (!ok || ((step + 1) % spe != 0 && step + 1 != steps)) continue;
            if (impl->strategy)
                for (int e = 0; e < n_exec && ok; e++) {
                    tfc_tensor **ex = exec_in + e * per_step;
                    ok = dist_train_step(impl, ex, n_x, ex + n_x, train.sw ? ex[n_x + n_y] : NULL, st);
                }
            else
                ok = run_steps(impl, true, n_exec, exec_in, n_x, train.sw != NULL, st);
            if (exec_t0) tfc_trace_record(1, "step", "train", NULL, exec_t0, tfc_trace_now(), step);
            tfc_scope_end(ctx);
            open = false;
            for (int i = 0; i < n_exec * per_step; i++) tfc_tensor_unref(held[i]), held[i] = NULL;
            if (!ok) break;
            tfc_logs bl = {0};
            current_logs(impl, &bl, NULL);
            tp.steps += n_exec;
            if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_BATCH_END, m, step, &bl, st))) break;
            if (m->stop_training) break;
        }
        if (open) {
            tfc_scope_end(ctx);
            for (int i = 0; i < n_exec * per_step; i++) tfc_tensor_unref(held[i]), held[i] = NULL;
        }
        if (!ok) break;
        if (tp.t0) report_throughput(fs.out, epoch, &tp);
        epoch_logs = (tfc_logs){0};
        current_logs(impl, &epoch_logs, NULL);
        if (has_val && (epoch + 1) % freq == 0) {
            tfc_logs vl;
            if (!(ok = run_test(impl, &val, val_bs, o.validation_steps, cbs, n_cbs, NULL, &vl, st))) break;
            for (int i = 0; i < vl.n && i < n_names; i++) tfc_logs_set(&epoch_logs, val_names[i], vl.values[i]);
        }
        if (!(ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_EPOCH_END, m, epoch, &epoch_logs, st))) break;
        if (m->stop_training) break;
    }
    if (ok) ok = tfc_callbacks_run(cbs, n_cbs, TFC_HOOK_TRAIN_END, m, 0, &epoch_logs, st);

done:
    if (saved_seed.has_seed) { /* the next fit starts from a new base */
        tfc_ctx_seed_state next = saved_seed;
        next.op_seed_counter++;
        tfc_ctx_seed_restore(ctx, &next);
    }
    if (impl && impl->fit == &fs) impl->fit = NULL;
    tfc_fit_prefetch_free(pf);
    tfc_free(perm);
    tfc_free(perm_next);
    owned_free(&own_t);
    tfc_fit_val_names_free(val_names, n_names);
    tfc_callback_free(bar);
    tfc_callback_free(hist_cb);
    for (int i = 0; i < n_user; i++) tfc_callback_free(o.callbacks[i]);
    if (ok && history) *history = hist;
    else tfc_history_free(hist);
    if (ok) tfc_status_clear(st);
    return ok;
}

bool tfc_model_fit(tfc_model *m, tfc_tensor *x, tfc_tensor *y, const tfc_fit_opts *opts, tfc_history **history,
                   tfc_status *st) {
    return tfc_model_fit_n(m, &x, 1, &y, 1, opts, history, st);
}

/* ---- predict ------------------------------------------------------------------------------------------- */

/* One batch's forward pass: predict_function in graph mode. */
static bool predict_step(tfc_model *m, tfc_tensor *const *x, int n_x, tfc_tensor **pred, int n_out, tfc_status *st) {
    if (!tfc_model_graph_mode(m, false) || n_out != tfc_model_num_outputs(m))
        return tfc_model_forward(m, x, n_x, pred, n_out, false, st);
    tfc_step_out o;
    if (!tfc_model_fn_run(m, TFC_FN_PREDICT, 1, x, n_x, false, &o, st)) return false;
    for (int i = 0; i < n_out; i++) pred[i] = o.pred[i];
    return true;
}

bool tfc_model_predict_n(tfc_model *m, tfc_tensor *const *x, int n_x, const tfc_eval_opts *opts, tfc_tensor **out,
                         int n_out, tfc_status *st) {
    tfc_eval_opts o = opts ? *opts : (tfc_eval_opts){0};
    for (int i = 0; out && i < n_out; i++) out[i] = NULL;
    if (!m || !x || !out || n_x < 1 || n_out < 1 || n_x > TFC_KERAS_MAX_IO || n_out > TFC_KERAS_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "predict: NULL model or bad input/output counts");
    int64_t n = 0;
    if (!check_cardinality("predict", x, n_x, NULL, 0, NULL, &n, st) || !tfc_model_prepare_inputs(m, x, n_x, st))
        return false;
    if (n == 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "predict: the input has no samples");
    tfc_ctx *ctx = m->ctx;
    int64_t bs = o.batch_size > 0 ? o.batch_size : 32, nb = (n + bs - 1) / bs;
    if (o.steps > 0 && o.steps < nb) nb = o.steps;
    FILE *outf = o.out ? o.out : stdout;
    int verbose = tfc_verbose_resolve(o.verbose, outf);
    tfc_callback *bar = verbose ? tfc_progbar_new(outf, verbose, 1, nb, false) : NULL;
    tfc_tensor **parts = tfc_calloc((size_t)(nb * n_out), sizeof *parts);
    bool ok = parts && (!verbose || bar);
    if (!ok) tfc_status_oom(st, "predict", 0);
    data d = {.n_x = n_x, .n = n};
    for (int i = 0; i < n_x; i++) d.x[i] = x[i];
    for (int64_t b = 0; b < nb && ok; b++) {
        if (!(ok = tfc_scope_begin(ctx, st))) break;
        tfc_tensor *bx[TFC_KERAS_MAX_IO], *pred[TFC_KERAS_MAX_IO];
        int64_t start = b * bs, len = n - start < bs ? n - start : bs;
        ok = make_batch(ctx, &d, NULL, start, len, bx, NULL, NULL, st) && predict_step(m, bx, n_x, pred, n_out, st);
        for (int i = 0; i < n_out && ok; i++) parts[i * nb + b] = tfc_keep(ctx, pred[i]);
        tfc_scope_end(ctx);
        if (ok && bar) tfc_progbar_test_batch(bar, b, NULL);
    }
    for (int i = 0; i < n_out && ok; i++) {
        tfc_tensor *r = tfc_concat(ctx, (const tfc_tensor *const *)&parts[i * nb], (int)nb, 0, st);
        ok = r != NULL;
        if (ok) out[i] = tfc_keep(ctx, r);
    }
    if (ok && bar) tfc_progbar_test_end(bar, NULL);
    for (int64_t i = 0; parts && i < nb * n_out; i++) tfc_tensor_unref(parts[i]);
    tfc_free(parts);
    tfc_callback_free(bar);
    if (!ok)
        for (int i = 0; i < n_out; i++) tfc_tensor_unref(out[i]), out[i] = NULL;
    else
        tfc_status_clear(st);
    return ok;
}

tfc_tensor *tfc_model_predict(tfc_model *m, tfc_tensor *x, const tfc_eval_opts *opts, tfc_status *st) {
    tfc_tensor *y = NULL;
    return tfc_model_predict_n(m, &x, 1, opts, &y, 1, st) ? y : NULL;
}

/* ---- single batches ------------------------------------------------------------------------------------ */

static int on_batch(tfc_model *m, tfc_tensor *x, tfc_tensor *y, tfc_tensor *sw, bool reset, bool train, double *results,
                    int max, tfc_status *st) {
    if (!ready_to_run(m, 1, st)) return -1;
    int64_t n = 0;
    if (!x || !y) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: NULL x or y", train ? "train_on_batch" : "test_on_batch");
        return -1;
    }
    if (!check_cardinality(train ? "train_on_batch" : "test_on_batch", &x, 1, &y, 1, sw, &n, st) ||
        !tfc_model_prepare_inputs(m, &x, 1, st))
        return -1;
    tfc_model_impl *impl = TFC_IMPL(m);
    /* weights created since the last broadcast (a model built by this batch, as fit on a dataset builds it) */
    if (impl->strategy && tfc_layer_weights(&m->base, NULL, 0) != impl->dist_synced && !tfc_model_dist_sync(m, st)) return -1;
    if (!tfc_scope_begin(m->ctx, st)) return -1;
    bool ok = impl->strategy ? (train ? dist_train_step(impl, &x, 1, &y, sw, st) : dist_test_step(impl, &x, 1, &y, sw, st))
                             : (train ? train_step(impl, &x, 1, &y, sw, st) : test_step(impl, &x, 1, &y, sw, st));
    tfc_scope_end(m->ctx);
    if (!ok) return -1;
    tfc_logs logs = {0};
    current_logs(impl, &logs, NULL);
    if (reset) tfc_model_reset_metrics(m);
    for (int i = 0; i < logs.n && i < max && results; i++) results[i] = logs.values[i];
    tfc_status_clear(st);
    return logs.n;
}

int tfc_model_train_on_batch(tfc_model *m, tfc_tensor *x, tfc_tensor *y, tfc_tensor *sample_weight, bool reset_metrics,
                             double *results, int max, tfc_status *st) {
    return on_batch(m, x, y, sample_weight, reset_metrics, true, results, max, st);
}

int tfc_model_test_on_batch(tfc_model *m, tfc_tensor *x, tfc_tensor *y, tfc_tensor *sample_weight, bool reset_metrics,
                            double *results, int max, tfc_status *st) {
    return on_batch(m, x, y, sample_weight, reset_metrics, false, results, max, st);
}

tfc_tensor *tfc_model_predict_on_batch(tfc_model *m, tfc_tensor *x, tfc_status *st) {
    if (!m || !x) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "predict_on_batch: NULL argument");
        return NULL;
    }
    if (!tfc_model_prepare_inputs(m, &x, 1, st) || !tfc_scope_begin(m->ctx, st)) return NULL;
    tfc_tensor *y = NULL;
    bool ok = predict_step(m, &x, 1, &y, 1, st);
    if (ok) y = tfc_keep(m->ctx, y);
    tfc_scope_end(m->ctx);
    return ok ? tfc_keep(m->ctx, y) : NULL;
}
