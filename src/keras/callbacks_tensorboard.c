/* Keras's TensorBoard callback (tf-keras 2.x): train/ and validation/ event files under log_dir with the
 * summaries tf-keras writes (epoch_<metric> per epoch, evaluation_<metric>_vs_iterations at each test end,
 * epoch_learning_rate under a schedule, epoch_steps_per_second, <weight>/histogram and <weight>/image). */
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "keras/model_internal.h"
#include "keras/optimizer_internal.h"
#include "tfc/profiler.h"
#include "tfc/summary.h"

#define TB_MAX_KEY 160
#define TB_KERAS_VERSION "2.4.0" /* the Keras 2 dialect of tfc's configs (as saving_hdf5.c) */

typedef struct {
    char *log_dir, *train_dir, *val_dir;
    int histogram_freq;
    bool write_images, write_steps_per_second, write_graph;
    int64_t update_n; /* 0: "epoch" */
    int64_t profile_start, profile_stop;
    tfc_summary_writer *train, *val;
    bool failed; /* a writer error was reported: the callback stays quiet, training goes on */
    /* the thread's default writer/step/record state while fit runs with update_freq "batch" / N */
    tfc_summary_writer *prev_writer;
    int64_t prev_step;
    bool prev_record, pushed;
    int64_t epoch_start_iter;
    double epoch_start_time;
    int64_t global_batch;
    bool tracing;
} tensorboard;

static double now_s(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* A summary error is reported once (tfc_log ERROR) and turns the callback off; fit continues. */
static bool tb_error(tensorboard *tb, const tfc_status *err) {
    if (!tb->failed) tfc_log(TFC_LOG_ERROR, "TensorBoard callback: %s; no more summaries are written", err->msg);
    tb->failed = true;
    return true;
}

static tfc_summary_writer *writer(tensorboard *tb, bool val) {
    tfc_summary_writer **w = val ? &tb->val : &tb->train;
    if (!*w && !tb->failed) {
        tfc_status st = {0};
        if (!(*w = tfc_summary_create_file_writer(val ? tb->val_dir : tb->train_dir, 0, 0, NULL, &st)))
            tb_error(tb, &st);
    }
    return tb->failed ? NULL : *w;
}

static int64_t iterations(tfc_model *m) {
    tfc_optimizer *o = tfc_model_optimizer(m);
    return o ? tfc_optimizer_iterations(o) : 0;
}

static bool scalar(tensorboard *tb, bool val, const char *prefix, const char *name, const char *suffix, double v,
                   int64_t step) {
    tfc_summary_writer *w = writer(tb, val);
    if (!w) return true;
    char tag[TB_MAX_KEY];
    snprintf(tag, sizeof tag, "%s%s%s", prefix, name, suffix);
    tfc_status st = {0};
    return tfc_summary_write_scalar(w, tag, v, step, NULL, &st) || tb_error(tb, &st);
}

static void stop_trace(tensorboard *tb);

/* write_graph: tf-keras's keras_model_summary("keras", model, step=0): model.to_json() as a string scalar
 * with plugin "graph_keras_model" (content "1"), the conceptual graph TensorBoard draws */
static void write_model_json(tensorboard *tb, tfc_model *m, tfc_summary_writer *w) {
    tfc_status st = {0};
    tfc_layer *l = tfc_model_as_layer(m);
    char *cfg = tfc_layer_get_config(l, &st);
    if (!cfg) return; /* a model without a config (subclassed) has no conceptual graph, as in Keras */
    const char *cls = tfc_layer_class_name(l);
    size_t n = strlen(cfg) + strlen(cls) + 96;
    char *json = tfc_malloc(n);
    tfc_tensor *t = NULL;
    if (json) {
        snprintf(json, n, "{\"class_name\": \"%s\", \"config\": %s, \"keras_version\": \"%s\", \"backend\": "
                 "\"tensorflow\"}", cls, cfg, TB_KERAS_VERSION);
        t = tfc_tensor_from_strings((const char *const[]){json}, NULL, NULL, 0, &st);
    }
    if (t && !tfc_summary_write_tensor(w, "keras", t, 0, "graph_keras_model", "1", 1, NULL, &st)) tb_error(tb, &st);
    tfc_tensor_unref(t);
    tfc_free(json);
    tfc_free(cfg);
}

static bool tb_train_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    tensorboard *tb = tfc_callback_user(cb);
    tb->global_batch = 0;
    tfc_summary_writer *w = writer(tb, false);
    if (w && tb->write_graph) write_model_json(tb, m, w);
    if (tb->update_n > 0 && w) { /* the train writer as default for the user's batch-level summaries */
        tb->prev_writer = tfc_summary_set_default_writer(w);
        tb->prev_step = tfc_summary_get_step();
        tb->prev_record = tfc_summary_record_if(true);
        tb->pushed = true;
    }
    return true;
}

static void pop_writer(tensorboard *tb) {
    if (!tb->pushed) return;
    tfc_summary_set_default_writer(tb->prev_writer);
    tfc_summary_set_step(tb->prev_step);
    tfc_summary_record_if(tb->prev_record);
    tb->pushed = false;
}

static bool tb_train_end(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    tensorboard *tb = tfc_callback_user(cb);
    pop_writer(tb);
    if (tb->tracing) stop_trace(tb);
    tfc_status e = {0};
    if (tb->train && !tfc_summary_writer_close(tb->train, &e)) tb_error(tb, &e);
    if (tb->val && !tfc_summary_writer_close(tb->val, &e)) tb_error(tb, &e);
    tfc_summary_writer_free(tb->train);
    tfc_summary_writer_free(tb->val);
    tb->train = tb->val = NULL;
    return true;
}

/* profile_batch: the profiler runs from the start batch's begin to the stop batch's end (tf-keras's
 * _start_trace / _stop_trace); a profiler that cannot start is logged and training goes on */
static void start_trace(tensorboard *tb) {
    tfc_status e = {0};
    if (tfc_profiler_start(tb->log_dir, NULL, &e)) tb->tracing = true;
    else tfc_log(TFC_LOG_ERROR, "TensorBoard callback: Failed to start profiler: %s", e.msg);
}

static void stop_trace(tensorboard *tb) {
    tfc_status e = {0};
    tb->tracing = false;
    if (!tfc_profiler_stop(true, &e)) tfc_log(TFC_LOG_ERROR, "TensorBoard callback: Failed to stop profiler: %s", e.msg);
}

static bool tb_batch_end(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    tensorboard *tb = tfc_callback_user(cb);
    if (tb->tracing && tb->global_batch >= tb->profile_stop) stop_trace(tb);
    return true;
}

static bool tb_batch_begin(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    tensorboard *tb = tfc_callback_user(cb);
    tb->global_batch++;
    if (tb->profile_start > 0 && tb->global_batch == tb->profile_start) start_trace(tb);
    if (tb->pushed) {
        int64_t it = iterations(m);
        tfc_summary_set_step(it);
        tfc_summary_record_if(it % tb->update_n == 0);
    }
    return true;
}

static bool tb_test_end(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    tensorboard *tb = tfc_callback_user(cb);
    if (!tfc_model_optimizer(m)) return true;
    int64_t it = iterations(m);
    for (int i = 0; i < logs->n; i++)
        scalar(tb, true, "evaluation_", logs->keys[i], "_vs_iterations", logs->values[i], it);
    return true;
}

static bool tb_epoch_begin(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *logs, tfc_status *st) {
    tensorboard *tb = tfc_callback_user(cb);
    tb->epoch_start_iter = iterations(m);
    tb->epoch_start_time = now_s();
    return true;
}

/* <layer>/<weight>_0: the weight's name with ':' replaced, as tf-keras. */
static void weight_tag(char *tag, size_t size, const char *vname, const char *suffix) {
    snprintf(tag, size, "%s%s", vname, suffix);
    for (char *p = tag; *p; p++)
        if (*p == ':') *p = '_';
}

/* tf-keras's _log_weight_as_image: squeeze; a vector becomes [1, n, 1, 1]; a matrix [1, r, c, 1] with r <= c
 * (transposed otherwise); a rank-3 (conv) weight [c, h, w, 1] from its channels-last layout; a rank-4 one with
 * 3 or 4 channels last as it is; others none. */
static bool weight_image(tensorboard *tb, tfc_model *m, tfc_summary_writer *w, const char *tag,
                         const tfc_tensor *v, int epoch) {
    const tfc_shape *sh = tfc_tensor_shape(v);
    int64_t d[TFC_MAX_RANK];
    int r = 0;
    for (int i = 0; i < sh->rank; i++)
        if (sh->dims[i] != 1) d[r++] = sh->dims[i];
    int64_t n = tfc_tensor_num_elements(v), img[4];
    if (r == 1) img[0] = 1, img[1] = d[0], img[2] = 1, img[3] = 1;
    else if (r == 2) img[0] = 1, img[1] = d[0] > d[1] ? d[1] : d[0], img[2] = d[0] > d[1] ? d[0] : d[1], img[3] = 1;
    else if (r == 3) img[0] = d[2], img[1] = d[0], img[2] = d[1], img[3] = 1;
    else if (r == 4 && (d[3] == 3 || d[3] == 4)) img[0] = d[0], img[1] = d[1], img[2] = d[2], img[3] = d[3];
    else return true;
    float *px = tfc_malloc((size_t)(n ? n : 1) * sizeof *px);
    if (!px) return true;
    for (int64_t i = 0; i < n; i++) {
        int64_t src = i;
        if (r == 2 && d[0] > d[1]) src = (i % d[0]) * d[1] + i / d[0];             /* transpose */
        else if (r == 3) src = (i % (d[0] * d[1])) * d[2] + i / (d[0] * d[1]); /* [h, w, c] -> [c, h, w] */
        px[i] = (float)tfc_tensor_get_f64(v, src);
    }
    tfc_status st = {0};
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, img, 4, px, (size_t)n * sizeof *px, &st);
    bool ok = t && tfc_summary_write_image(w, m->ctx, tag, t, epoch, 3, NULL, &st);
    tfc_tensor_unref(t);
    tfc_free(px);
    return ok || tb_error(tb, &st);
}

static void log_weights(tensorboard *tb, tfc_model *m, int epoch) {
    tfc_summary_writer *w = writer(tb, false);
    if (!w) return;
    int nl = tfc_model_layers(m, NULL, 0);
    tfc_layer **layers = tfc_calloc(nl ? (size_t)nl : 1, sizeof *layers);
    if (!layers) return;
    tfc_model_layers(m, layers, nl);
    for (int i = 0; i < nl && !tb->failed; i++) {
        int nw = tfc_layer_weights(layers[i], NULL, 0);
        tfc_variable **vs = tfc_calloc(nw ? (size_t)nw : 1, sizeof *vs);
        if (!vs) break;
        tfc_layer_weights(layers[i], vs, nw);
        for (int j = 0; j < nw && !tb->failed; j++) {
            char tag[TB_MAX_KEY];
            const tfc_tensor *v = tfc_variable_value(vs[j]);
            tfc_status st = {0};
            weight_tag(tag, sizeof tag, tfc_variable_name(vs[j]), "/histogram");
            if (!tfc_summary_write_histogram(w, tag, v, epoch, 0, NULL, &st)) tb_error(tb, &st);
            if (tb->write_images && !tb->failed) {
                weight_tag(tag, sizeof tag, tfc_variable_name(vs[j]), "/image");
                weight_image(tb, m, w, tag, v, epoch);
            }
        }
        tfc_free(vs);
    }
    tfc_free(layers);
    tfc_status st = {0};
    if (!tb->failed && !tfc_summary_writer_flush(w, &st)) tb_error(tb, &st);
}

static bool tb_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    tensorboard *tb = tfc_callback_user(cb);
    bool any_val = false;
    for (int i = 0; i < logs->n; i++) {
        if (!strncmp(logs->keys[i], "val_", 4)) {
            any_val = true;
            continue;
        }
        scalar(tb, false, "epoch_", logs->keys[i], "", logs->values[i], epoch);
    }
    tfc_optimizer *o = tfc_model_optimizer(m);
    if (o && o->schedule) scalar(tb, false, "epoch_", "learning_rate", "", tfc_lr_schedule_value(o->schedule,
                                 tfc_optimizer_iterations(o)), epoch);
    if (tb->write_steps_per_second) {
        double dt = now_s() - tb->epoch_start_time;
        scalar(tb, false, "epoch_", "steps_per_second", "",
               dt > 0 ? (double)(iterations(m) - tb->epoch_start_iter) / dt : 0, epoch);
    }
    for (int i = 0; any_val && i < logs->n; i++)
        if (!strncmp(logs->keys[i], "val_", 4)) scalar(tb, true, "epoch_", logs->keys[i] + 4, "", logs->values[i], epoch);
    if (tb->histogram_freq > 0 && epoch % tb->histogram_freq == 0) log_weights(tb, m, epoch);
    return true;
}

static void tb_free(tensorboard *tb) {
    pop_writer(tb);
    if (tb->tracing) stop_trace(tb);
    tfc_summary_writer_free(tb->train);
    tfc_summary_writer_free(tb->val);
    tfc_free(tb->log_dir);
    tfc_free(tb->train_dir);
    tfc_free(tb->val_dir);
    tfc_free(tb);
}

static void tb_destroy(tfc_callback *cb) { tb_free(tfc_callback_user(cb)); }

static const tfc_callback_fns tensorboard_fns = {
    .on_train_begin = tb_train_begin,
    .on_train_end = tb_train_end,
    .on_epoch_begin = tb_epoch_begin,
    .on_epoch_end = tb_epoch_end,
    .on_train_batch_begin = tb_batch_begin,
    .on_train_batch_end = tb_batch_end,
    .on_test_end = tb_test_end,
    .destroy = tb_destroy,
};

static char *join(const char *dir, const char *name) {
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = tfc_malloc(n);
    if (p) snprintf(p, n, "%s/%s", dir, name);
    return p;
}

tfc_callback *tfc_callbacks_tensorboard_new(const tfc_tensorboard_opts *o, tfc_status *st) {
    static const tfc_tensorboard_opts none;
    if (!o) o = &none;
    const char *uf = o->update_freq ? o->update_freq : "epoch";
    int64_t n = 0;
    if (!strcmp(uf, "batch")) n = 1;
    else if (strcmp(uf, "epoch")) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "TensorBoard: update_freq must be \"epoch\", \"batch\" or a "
                       "positive integer, got \"%s\"", uf);
        return NULL;
    }
    if (o->update_freq_steps < 0 || o->histogram_freq < 0 || o->profile_batch_start < 0 ||
        o->profile_batch_stop < o->profile_batch_start) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "TensorBoard: histogram_freq (%d) and update_freq (%lld) must be >= "
                       "0; profile_batch must be a non-negative integer or a pair of positive integers "
                       "(start %lld, stop %lld)", o->histogram_freq, (long long)o->update_freq_steps,
                       (long long)o->profile_batch_start, (long long)o->profile_batch_stop);
        return NULL;
    }
    if (o->update_freq_steps > 0) n = o->update_freq_steps;
    tensorboard *tb = tfc_calloc(1, sizeof *tb);
    const char *dir = o->log_dir && *o->log_dir ? o->log_dir : "logs";
    if (!tb || !(tb->log_dir = tfc_strdup(dir)) || !(tb->train_dir = join(dir, "train")) ||
        !(tb->val_dir = join(dir, "validation"))) {
        if (tb) tb_free(tb);
        tfc_status_oom(st, "TensorBoard", sizeof *tb);
        return NULL;
    }
    tb->histogram_freq = o->histogram_freq;
    tb->write_images = o->write_images;
    tb->write_graph = TFC_FLAG(o->write_graph, true);
    tb->write_steps_per_second = o->write_steps_per_second;
    tb->update_n = n;
    tb->profile_start = o->profile_batch_start;
    tb->profile_stop = o->profile_batch_stop;
    tfc_callback *cb = tfc_callback_new(&tensorboard_fns, tb);
    if (!cb) {
        tb_free(tb);
        tfc_status_oom(st, "TensorBoard", 0);
        return NULL;
    }
    tfc_status_clear(st);
    return cb;
}
