/* The Keras training loop: compile, fit (batching, shuffling, validation, weights), evaluate, predict,
 * *_on_batch, the progress output, History and the built-in callbacks (EarlyStopping, CSVLogger,
 * ReduceLROnPlateau, LearningRateScheduler, TerminateOnNaN, ModelCheckpoint, BackupAndRestore, including a
 * fit killed mid-run and resumed), and the errors fit reports. */
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tfc/keras.h"
#include "tfc/ops/array.h"
#include "tfc_test.h"

static tfc_ctx *ctx;
static char tmpdir[256];

/* ---- data: two classes split by a line, x uniform in [-1, 1]^4 ---- */
static uint64_t lcg = 12345;
static float urand(void) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((lcg >> 40) & 0xFFFFFF) / (float)0x1000000 * 2.0f - 1.0f;
}

static void make_data(int64_t n, tfc_tensor **x, tfc_tensor **y) {
    tfc_status st = TFC_STATUS_INIT;
    lcg = 12345;
    *x = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 4}, 2, &st);
    *y = tfc_tensor_new(TFC_INT32, (int64_t[]){n}, 1, &st);
    float *xd = tfc_tensor_mutable_data(*x);
    int32_t *yd = tfc_tensor_mutable_data(*y);
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) xd[i * 4 + k] = urand();
        yd[i] = xd[i * 4] + 0.5f * xd[i * 4 + 1] > 0.1f ? 1 : 0;
    }
}

static tfc_model *mlp(tfc_ctx *c, bool dropout) {
    tfc_keras_clear_session();
    tfc_model *m = tfc_sequential(c, (tfc_layer *[]){
        tfc_layers_dense(.units = 16, .activation = "relu", .input_shape = {4}),
        dropout ? tfc_layers_dropout(.rate = 0.2) : tfc_layers_activation(.activation = "linear"),
        tfc_layers_dense(.units = 2, .activation = "softmax"),
        NULL});
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(m);
    REQUIRE(tfc_compile(m, &st, .optimizer = tfc_optimizers_adam(.learning_rate = 0.01),
                        .loss_name = "sparse_categorical_crossentropy", .metrics = {"accuracy"}));
    return m;
}

static char *read_all(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    s[n] = 0;
    fclose(f);
    return s;
}

/* ---- a scripted callback: sets logs[key] per epoch, counts hooks, may fail or stop ---- */
typedef struct {
    const char *key;
    const double *values;
    int n_values;
    int train_begin, train_end, epoch_begin, epoch_end, batch_begin, batch_end, test_begin, test_end;
    int fail_at_epoch;       /* -1: never */
    tfc_tensor *snap[8];     /* weights at the end of epoch snap_epoch */
    int snap_epoch, n_snap;
} script;

static bool s_train_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *l, tfc_status *st) {
    ((script *)tfc_callback_user(cb))->train_begin++;
    return true;
}
static bool s_train_end(tfc_callback *cb, tfc_model *m, const tfc_logs *l, tfc_status *st) {
    ((script *)tfc_callback_user(cb))->train_end++;
    return true;
}
static bool s_epoch_begin(tfc_callback *cb, tfc_model *m, int e, const tfc_logs *l, tfc_status *st) {
    ((script *)tfc_callback_user(cb))->epoch_begin++;
    return true;
}
static bool s_epoch_end(tfc_callback *cb, tfc_model *m, int e, tfc_logs *l, tfc_status *st) {
    script *s = tfc_callback_user(cb);
    s->epoch_end++;
    if (s->key && e < s->n_values) tfc_logs_set(l, s->key, s->values[e]);
    if (e == s->snap_epoch) s->n_snap = tfc_model_get_weights(m, s->snap, 8, st);
    if (e == s->fail_at_epoch) return tfc_status_set(st, TFC_ABORTED, "scripted failure at epoch %d", e);
    return true;
}
static bool s_batch_begin(tfc_callback *cb, tfc_model *m, int64_t b, const tfc_logs *l, tfc_status *st) {
    ((script *)tfc_callback_user(cb))->batch_begin++;
    return true;
}
static bool s_batch_end(tfc_callback *cb, tfc_model *m, int64_t b, const tfc_logs *l, tfc_status *st) {
    ((script *)tfc_callback_user(cb))->batch_end++;
    return true;
}
static bool s_test_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *l, tfc_status *st) {
    ((script *)tfc_callback_user(cb))->test_begin++;
    return true;
}
static bool s_test_end(tfc_callback *cb, tfc_model *m, const tfc_logs *l, tfc_status *st) {
    ((script *)tfc_callback_user(cb))->test_end++;
    return true;
}
static const tfc_callback_fns script_fns = {
    .on_train_begin = s_train_begin, .on_train_end = s_train_end, .on_epoch_begin = s_epoch_begin,
    .on_epoch_end = s_epoch_end, .on_train_batch_begin = s_batch_begin, .on_train_batch_end = s_batch_end,
    .on_test_begin = s_test_begin, .on_test_end = s_test_end};

static script new_script(void) { return (script){.fail_at_epoch = -1, .snap_epoch = -1}; }
static void script_free(script *s) {
    for (int i = 0; i < s->n_snap; i++) tfc_tensor_unref(s->snap[i]);
}

/* ---- tests ---- */

static void test_fit_mlp(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(512, &x, &y);
    tfc_model *m = mlp(ctx, false);
    const char *names[4];
    CHECK(tfc_model_metrics_names(m, names, 4) == 2);
    CHECK(!strcmp(names[0], "loss") && !strcmp(names[1], "accuracy"));
    script s = new_script();
    tfc_history *h = NULL;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 12, .batch_size = 32, .verbose = TFC_VERBOSE_SILENT,
                                        .validation_split = 0.25, .callbacks = {tfc_callback_new(&script_fns, &s)}},
                        &h, &st));
    CHECK_OK(&st);
    REQUIRE(h);
    CHECK(tfc_history_epochs(h) == 12);
    const char *keys[8];
    CHECK(tfc_history_keys(h, keys, 8) == 4);
    CHECK(!strcmp(keys[0], "loss") && !strcmp(keys[1], "accuracy") && !strcmp(keys[2], "val_loss") &&
          !strcmp(keys[3], "val_accuracy"));
    int n;
    const double *loss = tfc_history_get(h, "loss", &n), *acc = tfc_history_get(h, "accuracy", NULL);
    const double *vloss = tfc_history_get(h, "val_loss", NULL), *vacc = tfc_history_get(h, "val_accuracy", NULL);
    REQUIRE(loss && acc && vloss && vacc && n == 12);
    CHECK(loss[11] < loss[0] * 0.5);
    CHECK(acc[11] > 0.9);
    CHECK(vacc[11] > 0.9);
    /* hooks: 384 training samples = 12 batches per epoch, validation once per epoch */
    CHECK(s.train_begin == 1 && s.train_end == 1 && s.epoch_begin == 12 && s.epoch_end == 12);
    CHECK(s.batch_begin == 12 * 12 && s.batch_end == 12 * 12);
    CHECK(s.test_begin == 12 && s.test_end == 12);
    /* the validation set is the last quarter, before shuffling: evaluate on it gives the last val_loss */
    tfc_tensor *xv = NULL, *yv = NULL;
    REQUIRE(tfc_scope_begin(ctx, &st));
    xv = tfc_keep(ctx, tfc_slice(ctx, x, (int64_t[]){384, 0}, (int64_t[]){128, -1}, &st));
    yv = tfc_keep(ctx, tfc_slice(ctx, y, (int64_t[]){384}, (int64_t[]){128}, &st));
    tfc_scope_end(ctx);
    double r[4];
    CHECK(tfc_model_evaluate(m, xv, yv, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, r, 4, &st) == 2);
    CHECK_OK(&st);
    CHECK_NEAR(r[0], vloss[11], 1e-6);
    CHECK_NEAR(r[1], vacc[11], 1e-6);
    /* evaluate with another batch size gives the same mean */
    double r2[4];
    CHECK(tfc_model_evaluate(m, xv, yv, &(tfc_eval_opts){.batch_size = 7, .verbose = TFC_VERBOSE_SILENT}, r2, 4, &st) == 2);
    CHECK_NEAR(r2[0], r[0], 1e-5);
    CHECK_NEAR(r2[1], r[1], 1e-6);
    /* predict: [n, 2] probabilities equal to a direct call, concatenated over batches */
    tfc_tensor *p = tfc_model_predict(m, xv, &(tfc_eval_opts){.batch_size = 50, .verbose = TFC_VERBOSE_SILENT}, &st);
    CHECK_OK(&st);
    REQUIRE(p);
    CHECK(tfc_tensor_rank(p) == 2 && tfc_tensor_dim(p, 0) == 128 && tfc_tensor_dim(p, 1) == 2);
    tfc_tensor *direct = tfc_model_call(m, xv, false, &st);
    REQUIRE(direct);
    for (int64_t i = 0; i < 256; i++) CHECK_NEAR(tfc_tensor_get_f64(p, i), tfc_tensor_get_f64(direct, i), 1e-6);
    for (int64_t i = 0; i < 128; i++) CHECK_NEAR(tfc_tensor_get_f64(p, 2 * i) + tfc_tensor_get_f64(p, 2 * i + 1), 1.0, 1e-5);
    tfc_tensor *pb = tfc_model_predict_on_batch(m, xv, &st);
    REQUIRE(pb);
    CHECK_NEAR(tfc_tensor_get_f64(pb, 77), tfc_tensor_get_f64(direct, 77), 1e-6);
    tfc_tensor_unref(pb);
    tfc_tensor_unref(direct);
    tfc_tensor_unref(p);
    tfc_tensor_unref(xv);
    tfc_tensor_unref(yv);
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static void test_on_batch_and_weights(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    tfc_model *m = mlp(ctx, false);
    double r[4], r2[4];
    CHECK(tfc_model_test_on_batch(m, x, y, NULL, true, r, 4, &st) == 2);
    CHECK_OK(&st);
    /* sample weights scale the loss (sum over batch size) */
    tfc_tensor *w2 = tfc_tensor_new(TFC_FLOAT, (int64_t[]){64}, 1, &st);
    float *wd = tfc_tensor_mutable_data(w2);
    for (int i = 0; i < 64; i++) wd[i] = 2.0f;
    CHECK(tfc_model_test_on_batch(m, x, y, w2, true, r2, 4, &st) == 2);
    CHECK_NEAR(r2[0], 2 * r[0], 1e-5);
    CHECK_NEAR(r2[1], r[1], 1e-6);
    tfc_tensor_unref(w2);
    /* metrics accumulate across calls until reset */
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *xa = tfc_keep(ctx, tfc_slice(ctx, x, (int64_t[]){0, 0}, (int64_t[]){32, -1}, &st));
    tfc_tensor *ya = tfc_keep(ctx, tfc_slice(ctx, y, (int64_t[]){0}, (int64_t[]){32}, &st));
    tfc_tensor *xb = tfc_keep(ctx, tfc_slice(ctx, x, (int64_t[]){32, 0}, (int64_t[]){32, -1}, &st));
    tfc_tensor *yb = tfc_keep(ctx, tfc_slice(ctx, y, (int64_t[]){32}, (int64_t[]){32}, &st));
    tfc_scope_end(ctx);
    double a1[2], a2[2], both[2];
    CHECK(tfc_model_test_on_batch(m, xa, ya, NULL, true, a1, 2, &st) == 2);
    CHECK(tfc_model_test_on_batch(m, xb, yb, NULL, false, a2, 2, &st) == 2);
    CHECK(tfc_model_test_on_batch(m, xb, yb, NULL, true, both, 2, &st) == 2); /* includes the previous call */
    CHECK_NEAR(both[1], (a1[1] + (2 * a2[1] - a2[1])) / 2, 1e-6);
    tfc_model_reset_metrics(m);
    /* train_on_batch moves the loss down on the same batch */
    double before[2], after[2];
    CHECK(tfc_model_test_on_batch(m, x, y, NULL, true, before, 2, &st) == 2);
    for (int i = 0; i < 30; i++) CHECK(tfc_model_train_on_batch(m, x, y, NULL, true, r, 4, &st) == 2);
    CHECK_OK(&st);
    CHECK(tfc_model_test_on_batch(m, x, y, NULL, true, after, 2, &st) == 2);
    CHECK(after[0] < before[0]);
    CHECK(tfc_optimizer_iterations(tfc_model_optimizer(m)) == 30);
    tfc_tensor_unref(xa);
    tfc_tensor_unref(ya);
    tfc_tensor_unref(xb);
    tfc_tensor_unref(yb);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* class_weight equals the corresponding sample weights; initial_epoch and steps_per_epoch count right */
static void test_class_weight_and_epochs(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(100, &x, &y);
    const double cw[2] = {1.0, 3.0};
    tfc_tensor *sw = tfc_tensor_new(TFC_FLOAT, (int64_t[]){100}, 1, &st);
    float *swd = tfc_tensor_mutable_data(sw);
    for (int i = 0; i < 100; i++) swd[i] = (float)cw[((const int32_t *)tfc_tensor_data(y))[i]];
    tfc_tensor *wa[8], *wb[8];
    int na = 0, nb = 0;
    for (int run = 0; run < 2; run++) {
        tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.seed = 7, .has_seed = true}, &st);
        tfc_model *m = mlp(c, true);
        tfc_fit_opts o = {.epochs = 2, .batch_size = 16, .verbose = TFC_VERBOSE_SILENT};
        if (run == 0) o.class_weight = cw, o.n_class_weight = 2;
        else o.sample_weight = sw;
        CHECK(tfc_model_fit(m, x, y, &o, NULL, &st));
        CHECK_OK(&st);
        if (run == 0) na = tfc_model_get_weights(m, wa, 8, &st);
        else nb = tfc_model_get_weights(m, wb, 8, &st);
        tfc_model_free(m);
        tfc_ctx_free(c);
    }
    CHECK(na == 4 && nb == 4);
    for (int i = 0; i < na && i < nb; i++) {
        int64_t ne = tfc_tensor_num_elements(wa[i]);
        for (int64_t k = 0; k < ne; k++) CHECK_NEAR(tfc_tensor_get_f64(wa[i], k), tfc_tensor_get_f64(wb[i], k), 1e-6);
        tfc_tensor_unref(wa[i]);
        tfc_tensor_unref(wb[i]);
    }
    tfc_tensor_unref(sw);
    /* initial_epoch 2 of 3: one epoch runs; steps_per_epoch 5: five batches each */
    tfc_model *m = mlp(ctx, false);
    script s = new_script();
    tfc_history *h = NULL;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 3, .initial_epoch = 2, .steps_per_epoch = 5, .batch_size = 8,
                                        .verbose = TFC_VERBOSE_SILENT, .callbacks = {tfc_callback_new(&script_fns, &s)}},
                        &h, &st));
    CHECK(tfc_history_epochs(h) == 1 && s.epoch_begin == 1 && s.batch_end == 5);
    tfc_history_free(h);
    /* a class outside class_weight */
    CHECK(!tfc_model_fit(m, x, y, &(tfc_fit_opts){.class_weight = cw, .n_class_weight = 1, .verbose = TFC_VERBOSE_SILENT},
                         NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "class_weight") != NULL);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static bool matches_digits(const char *s, const char *pattern) {
    /* '#' matches one or more digits, '?' any run of characters up to the next pattern char */
    while (*pattern) {
        if (*pattern == '#') {
            if (!(*s >= '0' && *s <= '9')) return false;
            while (*s >= '0' && *s <= '9') s++;
            pattern++;
        } else if (*pattern == '?') {
            pattern++;
            while (*s && *s != *pattern) s++;
        } else if (*s++ != *pattern++) {
            return false;
        }
    }
    return *s == 0;
}

static void test_progress_output(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(100, &x, &y);
    tfc_model *m = mlp(ctx, false);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(tfc_model_fit(m, x, y, &(tfc_fit_opts){.epochs = 2, .verbose = TFC_VERBOSE_EPOCH, .validation_split = 0.2, .out = f},
                        NULL, &st));
    fclose(f);
    /* Epoch 1/2\n3/3 - 0s - loss: 0.7729 - accuracy: 0.5375 - val_loss: 0.7554 - val_accuracy: 0.5500 - 2s/epoch - 528ms/step\n */
    char *line2 = strchr(buf, '\n');
    REQUIRE(line2);
    *line2++ = 0;
    CHECK(!strcmp(buf, "Epoch 1/2"));
    char *end = strchr(line2, '\n');
    REQUIRE(end);
    *end = 0;
    CHECK(matches_digits(line2, "3/3 - #s - loss: #.# - accuracy: #.# - val_loss: #.# - val_accuracy: #.# - #?/epoch - #?/step"));
    CHECK(!strncmp(end + 1, "Epoch 2/2\n3/3 - ", 16));
    free(buf);
    /* verbose 1: a bar redrawn with \b and \r; the last state is the full bar with the step time */
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK(tfc_model_fit(m, x, y, &(tfc_fit_opts){.epochs = 1, .verbose = TFC_VERBOSE_PROGRESS, .out = f}, NULL, &st));
    fclose(f);
    CHECK(!strncmp(buf, "\r1/4 [======>.......................] - ETA: ", 45)); /* epochs 1: no "Epoch" line */
    char *last = strrchr(buf, '\r');
    REQUIRE(last);
    CHECK(matches_digits(last, "\r4/4 [==============================] - #s #?/step - loss: #.# - accuracy: #.#\n"));
    free(buf);
    /* evaluate, verbose 2 */
    buf = NULL;
    f = open_memstream(&buf, &len);
    double r[2];
    CHECK(tfc_model_evaluate(m, x, y, &(tfc_eval_opts){.verbose = TFC_VERBOSE_EPOCH, .out = f}, r, 2, &st) == 2);
    fclose(f);
    CHECK(matches_digits(buf, "4/4 - #s - loss: #.# - accuracy: #.# - #?/epoch - #?/step\n"));
    free(buf);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static void test_early_stopping(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    tfc_model *m = mlp(ctx, false);
    /* val_loss improves at epochs 0, 1, then not for 2 epochs: stop at epoch 3 (patience 2) */
    static const double score[] = {1.0, 0.8, 0.9, 0.85, 0.5, 0.4};
    script s = new_script();
    s.key = "val_loss";
    s.values = score;
    s.n_values = 6;
    s.snap_epoch = 1;
    tfc_history *h = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 6, .verbose = TFC_VERBOSE_SILENT, .out = f,
                                        .callbacks = {tfc_callback_new(&script_fns, &s),
                                                      tfc_callbacks_early_stopping(.patience = 2, .verbose = 1,
                                                                                   .restore_best_weights = true)}},
                        &h, &st));
    fclose(f);
    CHECK_OK(&st);
    CHECK(tfc_history_epochs(h) == 4);
    CHECK(!strcmp(buf, "Epoch 4: early stopping\nRestoring model weights from the end of the best epoch: 2.\n"));
    free(buf);
    /* the weights are those of the end of epoch 1 */
    tfc_tensor *w[8];
    int n = tfc_model_get_weights(m, w, 8, &st);
    CHECK(n == 4 && s.n_snap == 4);
    for (int i = 0; i < n && i < s.n_snap; i++) {
        for (int64_t k = 0; k < tfc_tensor_num_elements(w[i]); k++)
            CHECK_NEAR(tfc_tensor_get_f64(w[i], k), tfc_tensor_get_f64(s.snap[i], k), 0);
        tfc_tensor_unref(w[i]);
    }
    script_free(&s);
    tfc_history_free(h);
    /* a baseline that is never beaten keeps `wait` running from the first epoch (tf-keras): with patience 2 the
     * run stops at epoch 1, where without a baseline it would stop at epoch 2; mode max for accuracy names */
    static const double acc[] = {0.5, 0.5, 0.5, 0.5};
    s = new_script();
    s.key = "val_accuracy";
    s.values = acc;
    s.n_values = 4;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 4, .verbose = TFC_VERBOSE_SILENT,
                                        .callbacks = {tfc_callback_new(&script_fns, &s),
                                                      tfc_callbacks_early_stopping(.monitor = "val_accuracy", .patience = 2,
                                                                                   .baseline = 0.9, .has_baseline = true)}},
                        &h, &st));
    CHECK(tfc_history_epochs(h) == 2);
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static void test_csv_logger(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    tfc_model *m = mlp(ctx, false);
    char path[400];
    snprintf(path, sizeof path, "%s/log.csv", tmpdir);
    static const double custom[] = {0.5375f, 1e-05, 100.0};
    script s = new_script();
    s.key = "custom";
    s.values = custom;
    s.n_values = 3;
    tfc_history *h = NULL;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 3, .verbose = TFC_VERBOSE_SILENT, .validation_split = 0.25,
                                        .callbacks = {tfc_callback_new(&script_fns, &s),
                                                      tfc_callbacks_csv_logger(path, NULL, false)}},
                        &h, &st));
    CHECK_OK(&st);
    char *text = read_all(path);
    REQUIRE(text);
    if (strncmp(text, "epoch,accuracy,custom,loss,val_accuracy,val_loss\r\n", 50)) fprintf(stderr, "%s", text);
    CHECK(!strncmp(text, "epoch,accuracy,custom,loss,val_accuracy,val_loss\r\n", 50));
    /* Python's repr of the float32 values, one row per epoch */
    char *row = strstr(text, "\r\n") + 2;
    CHECK(!strncmp(row, "0,", 2));
    char *c1 = strchr(row + 2, ',') + 1;
    CHECK(!strncmp(c1, "0.5375000238418579,", 19));
    char *row2 = strstr(row, "\r\n") + 2;
    CHECK(strstr(row2, ",1e-05,") != NULL && !strncmp(row2, "1,", 2));
    char *row3 = strstr(row2, "\r\n") + 2;
    CHECK(strstr(row3, ",100.0,") != NULL);
    /* the loss column equals the history as Python prints it */
    const double *loss = tfc_history_get(h, "loss", NULL);
    char want[64];
    snprintf(want, sizeof want, ",%.17g,", loss[0]);
    int commas = 0;
    for (char *p = row; *p && *p != '\r'; p++) commas += *p == ',';
    CHECK(commas == 5);
    free(text);
    tfc_history_free(h);
    /* append: no second header */
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 1, .verbose = TFC_VERBOSE_SILENT,
                                        .callbacks = {tfc_callbacks_csv_logger(path, ";", true)}},
                        NULL, &st));
    text = read_all(path);
    REQUIRE(text);
    int headers = 0;
    for (char *p = text; (p = strstr(p, "epoch")); p++) headers++;
    CHECK(headers == 1);
    CHECK(strstr(text, "\r\n0;") != NULL);
    free(text);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static double halve_after_first(int epoch, double lr, void *user) {
    (*(int *)user)++;
    return epoch == 0 ? lr : lr * 0.5;
}

static void test_learning_rate_callbacks(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    tfc_model *m = mlp(ctx, false); /* Adam, learning rate 0.01 */
    static const double score[] = {1, 1, 1, 0.5, 0.5};
    script s = new_script();
    s.key = "score";
    s.values = score;
    s.n_values = 5;
    tfc_history *h = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 5, .verbose = TFC_VERBOSE_SILENT, .out = f,
                                        .callbacks = {tfc_callback_new(&script_fns, &s),
                                                      tfc_callbacks_reduce_lr_on_plateau(.monitor = "score", .factor = 0.5,
                                                                                         .patience = 1, .verbose = 1)}},
                        &h, &st));
    fclose(f);
    CHECK_OK(&st);
    int n;
    const double *lr = tfc_history_get(h, "lr", &n);
    REQUIRE(lr && n == 5);
    const float base = 0.01f;
    CHECK_NEAR(lr[0], base, 1e-9);
    CHECK_NEAR(lr[1], base, 1e-9);       /* logged before this epoch's reduction */
    CHECK_NEAR(lr[2], base / 2, 1e-9);
    CHECK_NEAR(lr[3], base / 4, 1e-9);   /* improved at epoch 3 */
    CHECK_NEAR(lr[4], base / 4, 1e-9);
    CHECK_NEAR(tfc_optimizer_learning_rate(tfc_model_optimizer(m)), base / 8, 1e-8);
    CHECK(!strncmp(buf, "\nEpoch 2: ReduceLROnPlateau reducing learning rate to 0.005.\n"
                        "\nEpoch 3: ReduceLROnPlateau reducing learning rate to 0.0025.\n", 122));
    free(buf);
    tfc_history_free(h);
    /* LearningRateScheduler: the schedule sees the current rate at every epoch begin; "lr" is logged */
    int calls = 0;
    tfc_optimizer_set_learning_rate(tfc_model_optimizer(m), 0.008);
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 3, .verbose = TFC_VERBOSE_SILENT,
                                        .callbacks = {tfc_callbacks_learning_rate_scheduler(halve_after_first, &calls)}},
                        &h, &st));
    lr = tfc_history_get(h, "lr", &n);
    REQUIRE(lr && n == 3);
    CHECK(calls == 3);
    CHECK_NEAR(lr[0], 0.008f, 1e-9);
    CHECK_NEAR(lr[1], 0.004f, 1e-9);
    CHECK_NEAR(lr[2], 0.002f, 1e-9);
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static void test_terminate_on_nan(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    ((float *)tfc_tensor_mutable_data(x))[3] = NAN;
    tfc_model *m = mlp(ctx, false);
    script s = new_script();
    tfc_history *h = NULL;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 3, .shuffle = TFC_NO, .verbose = TFC_VERBOSE_SILENT, .out = f,
                                        .callbacks = {tfc_callbacks_terminate_on_nan(), tfc_callback_new(&script_fns, &s)}},
                        &h, &st));
    fclose(f);
    CHECK_OK(&st);
    CHECK(!strcmp(buf, "Batch 0: Invalid loss, terminating training\n"));
    CHECK(s.batch_end == 1 && s.epoch_end == 1 && tfc_history_epochs(h) == 1);
    free(buf);
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* The saving module may not be linked into this test (a static link pulls it only when something needs it). */
extern bool tfc_model_save_weights(tfc_model *m, const char *path, tfc_status *st) __attribute__((weak));

static void test_model_checkpoint(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    tfc_model *m = mlp(ctx, false);
    if (!tfc_model_save_weights) {
        char pat[400];
        snprintf(pat, sizeof pat, "%s/ckpt0/w.h5", tmpdir);
        CHECK(!tfc_model_fit(m, x, y,
                             &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT,
                                             .callbacks = {tfc_callbacks_model_checkpoint(.filepath = pat)}},
                             NULL, &st));
        CHECK_CODE(&st, TFC_UNIMPLEMENTED);
        fprintf(stderr, "note: model.save_weights is not linked; ModelCheckpoint's saving is not tested\n");
        tfc_model_free(m);
        tfc_tensor_unref(x);
        tfc_tensor_unref(y);
        return;
    }
    static const double score[] = {0.5, 0.7, 0.25};
    script s = new_script();
    s.key = "val_loss";
    s.values = score;
    s.n_values = 3;
    char pattern[400], p1[400], p2[400], p3[400];
    snprintf(pattern, sizeof pattern, "%s/ckpt/w.{epoch:02d}-{val_loss:.2f}.h5", tmpdir);
    snprintf(p1, sizeof p1, "%s/ckpt/w.01-0.50.h5", tmpdir);
    snprintf(p2, sizeof p2, "%s/ckpt/w.02-0.70.h5", tmpdir);
    snprintf(p3, sizeof p3, "%s/ckpt/w.03-0.25.h5", tmpdir);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 3, .verbose = TFC_VERBOSE_SILENT, .out = f,
                                        .callbacks = {tfc_callback_new(&script_fns, &s),
                                                      tfc_callbacks_model_checkpoint(.filepath = pattern, .save_best_only = true,
                                                                                     .save_weights_only = true, .verbose = 1)}},
                        NULL, &st));
    fclose(f);
    CHECK_OK(&st);
    CHECK(access(p1, F_OK) == 0 && access(p2, F_OK) != 0 && access(p3, F_OK) == 0);
    char want[1600];
    snprintf(want, sizeof want,
             "\nEpoch 1: val_loss improved from inf to 0.50000, saving model to %s\n"
             "\nEpoch 2: val_loss did not improve from 0.50000\n"
             "\nEpoch 3: val_loss improved from 0.50000 to 0.25000, saving model to %s\n",
             p1, p3);
    CHECK(!strcmp(buf, want));
    free(buf);
    /* an unknown key in the pattern */
    snprintf(pattern, sizeof pattern, "%s/ckpt/w.{nope}.h5", tmpdir);
    CHECK(!tfc_model_fit(m, x, y,
                         &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT,
                                         .callbacks = {tfc_callbacks_model_checkpoint(.filepath = pattern)}},
                         NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Failed to format this callback filepath") != NULL);
    remove(p1);
    remove(p3);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* ---- BackupAndRestore: a fit interrupted after epoch 2 and resumed ends as an uninterrupted one ---- */

static bool kill_at(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *l, tfc_status *st) {
    if (epoch == *(int *)tfc_callback_user(cb)) raise(SIGKILL);
    return true;
}
static const tfc_callback_fns kill_fns = {.on_epoch_end = kill_at};

/* Trains a fresh model (same seed, same construction) for 5 epochs with the given callbacks; returns its
 * weights (n written to *n) and the number of epochs the History saw. */
static int run_backup_fit(tfc_callback *cb1, tfc_callback *cb2, tfc_tensor **w, int *n, bool *ok_out, tfc_status *st) {
    tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.seed = 42, .has_seed = true}, st);
    tfc_tensor *x, *y;
    make_data(200, &x, &y);
    tfc_model *m = mlp(c, true);
    tfc_history *h = NULL;
    *ok_out = tfc_model_fit(m, x, y,
                            &(tfc_fit_opts){.epochs = 5, .batch_size = 16, .verbose = TFC_VERBOSE_SILENT,
                                            .validation_split = 0.1, .callbacks = {cb1, cb2}},
                            &h, st);
    int epochs = tfc_history_epochs(h);
    *n = w ? tfc_model_get_weights(m, w, 8, st) : 0;
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_ctx_free(c);
    return epochs;
}

static void compare_weights(tfc_tensor **a, int na, tfc_tensor **b, int nb) {
    CHECK(na == 4 && na == nb);
    double maxdiff = 0;
    for (int i = 0; i < na && i < nb; i++)
        for (int64_t k = 0; k < tfc_tensor_num_elements(a[i]); k++) {
            double d = fabs(tfc_tensor_get_f64(a[i], k) - tfc_tensor_get_f64(b[i], k));
            if (d > maxdiff) maxdiff = d;
        }
    CHECK(maxdiff == 0);
    if (maxdiff != 0) fprintf(stderr, "resumed weights differ by %g\n", maxdiff);
}

static void test_backup_and_restore(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[400], file[440];
    snprintf(dir, sizeof dir, "%s/backup", tmpdir);
    snprintf(file, sizeof file, "%s/backup.tfcb", dir);
    bool ok;
    tfc_tensor *ref[8], *w[8];
    int nref, nw;
    /* uninterrupted */
    CHECK(run_backup_fit(NULL, NULL, ref, &nref, &ok, &st) == 5);
    CHECK(ok);
    /* killed (SIGKILL) at the end of epoch 2 (index 1), after its backup was written */
    fflush(NULL);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        int at = 1;
        tfc_status cst = TFC_STATUS_INIT;
        run_backup_fit(tfc_callbacks_backup_and_restore(dir), tfc_callback_new(&kill_fns, &at), NULL, &nw, &ok, &cst);
        _exit(3); /* not reached */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(access(file, F_OK) == 0);
    /* resumed: epochs 3..5 run, the backup is deleted at the end */
    CHECK(run_backup_fit(tfc_callbacks_backup_and_restore(dir), NULL, w, &nw, &ok, &st) == 3);
    CHECK(ok);
    CHECK_OK(&st);
    compare_weights(ref, nref, w, nw);
    CHECK(access(file, F_OK) != 0);
    for (int i = 0; i < nw; i++) tfc_tensor_unref(w[i]);
    /* stopped by a callback error at epoch 4 (index 3): the error is returned, the backup stays */
    script s = new_script();
    s.fail_at_epoch = 3;
    run_backup_fit(tfc_callbacks_backup_and_restore(dir), tfc_callback_new(&script_fns, &s), NULL, &nw, &ok, &st);
    CHECK(!ok);
    CHECK_CODE(&st, TFC_ABORTED);
    CHECK(access(file, F_OK) == 0);
    CHECK(run_backup_fit(tfc_callbacks_backup_and_restore(dir), NULL, w, &nw, &ok, &st) == 1);
    CHECK(ok);
    compare_weights(ref, nref, w, nw);
    for (int i = 0; i < nw; i++) tfc_tensor_unref(w[i]);
    /* a corrupt backup is reported, not loaded */
    mkdir(dir, 0777);
    FILE *f = fopen(file, "wb");
    REQUIRE(f);
    fputs("TFCBKUP1 garbage", f);
    fclose(f);
    run_backup_fit(tfc_callbacks_backup_and_restore(dir), NULL, NULL, &nw, &ok, &st);
    CHECK(!ok);
    CHECK_CODE(&st, TFC_DATA_LOSS);
    remove(file);
    rmdir(dir);
    for (int i = 0; i < nref; i++) tfc_tensor_unref(ref[i]);
}

static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y, *y_short, *x_wide;
    make_data(32, &x, &y);
    tfc_model *m = mlp(ctx, false);
    /* mismatched sample counts */
    REQUIRE(tfc_scope_begin(ctx, &st));
    y_short = tfc_keep(ctx, tfc_slice(ctx, y, (int64_t[]){0}, (int64_t[]){30}, &st));
    x_wide = tfc_keep(ctx, tfc_concat(ctx, (const tfc_tensor *[]){x, x}, 2, 1, &st));
    tfc_scope_end(ctx);
    CHECK(!tfc_model_fit(m, x, y_short, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Data cardinality is ambiguous") && strstr(st.msg, "x sizes: 32") && strstr(st.msg, "y sizes: 30"));
    /* wrong input shape */
    CHECK(!tfc_model_fit(m, x_wide, y, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "sequential") && strstr(st.msg, "(None, 4)") && strstr(st.msg, "(None, 8)"));
    /* labels out of range */
    tfc_tensor *bad = tfc_tensor_copy(y, &st);
    ((int32_t *)tfc_tensor_mutable_data(bad))[5] = 7;
    CHECK(!tfc_model_fit(m, x, bad, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "7") != NULL);
    tfc_tensor_unref(bad);
    /* validation_split leaving no training or validation data */
    CHECK(!tfc_model_fit(m, x, y, &(tfc_fit_opts){.validation_split = 0.99, .verbose = TFC_VERBOSE_SILENT}, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "validation_split") != NULL);
    /* two target arrays for one output */
    CHECK(!tfc_model_fit_n(m, &x, 1, (tfc_tensor *[]){y, y}, 2, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* the model still trains after the errors */
    CHECK(tfc_model_fit(m, x, y, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, &st));
    CHECK_OK(&st);
    tfc_model_free(m);
    /* not compiled; unknown names at compile */
    m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 2, .input_shape = {4}), NULL});
    CHECK(!tfc_model_fit(m, x, y, NULL, NULL, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, "compile") != NULL);
    CHECK(!tfc_compile(m, &st, .optimizer_name = "adam", .loss_name = "no_such_loss"));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "no_such_loss") != NULL);
    CHECK(!tfc_compile(m, &st, .optimizer_name = "no_such_optimizer", .loss_name = "mse"));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_compile(m, &st, .optimizer_name = "sgd", .loss_name = "mse", .metrics = {"no_such_metric"}));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* no loss */
    CHECK(tfc_compile(m, &st, .optimizer_name = "sgd"));
    CHECK(!tfc_model_fit(m, x, y, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "No loss found") != NULL);
    tfc_model_free(m);
    tfc_tensor_unref(x_wide);
    tfc_tensor_unref(y_short);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* Multi-output Functional models: a loss per output summed, logs named after the output layers (tf-keras's
 * 'loss', 'out_a_loss', 'out_b_loss', 'out_a_mae', 'out_b_mae'); regularization losses join the total. */
static void test_multi_output_and_regularization(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    tfc_keras_clear_session();
    tfc_ktensor *in = tfc_input(.shape = {4});
    tfc_ktensor *a = tfc_apply(tfc_layers_dense(.units = 2, .name = "out_a"), &st, in);
    tfc_ktensor *b = tfc_apply(tfc_layers_dense(.units = 3, .activation = "softmax", .name = "out_b"), &st, in);
    tfc_model *m = tfc_model_new(ctx, &in, 1, (tfc_ktensor *[]){a, b}, 2, NULL, &st);
    REQUIRE(m);
    CHECK(tfc_compile(m, &st, .optimizer_name = "sgd", .loss_name = "mse", .metrics = {"mae"}));
    const char *names[8];
    CHECK(tfc_model_metrics_names(m, names, 8) == 5);
    static const char *const want[] = {"loss", "out_a_loss", "out_b_loss", "out_a_mae", "out_b_mae"};
    for (int i = 0; i < 5; i++) CHECK(!strcmp(names[i], want[i]));
    tfc_tensor *ya = tfc_tensor_new(TFC_FLOAT, (int64_t[]){64, 2}, 2, &st), *yb = tfc_tensor_new(TFC_FLOAT, (int64_t[]){64, 3}, 2, &st);
    memset(tfc_tensor_mutable_data(ya), 0, tfc_tensor_byte_size(ya));
    memset(tfc_tensor_mutable_data(yb), 0, tfc_tensor_byte_size(yb));
    tfc_history *h = NULL;
    CHECK(tfc_model_fit_n(m, &x, 1, (tfc_tensor *[]){ya, yb}, 2, &(tfc_fit_opts){.epochs = 2, .verbose = TFC_VERBOSE_SILENT},
                          &h, &st));
    CHECK_OK(&st);
    const char *keys[8];
    CHECK(tfc_history_keys(h, keys, 8) == 5);
    for (int i = 0; i < 5; i++) CHECK(!strcmp(keys[i], want[i]));
    const double *l = tfc_history_get(h, "loss", NULL), *la = tfc_history_get(h, "out_a_loss", NULL),
                 *lb = tfc_history_get(h, "out_b_loss", NULL);
    CHECK_NEAR(l[1], la[1] + lb[1], 1e-6);
    double r[8];
    CHECK(tfc_model_evaluate_n(m, &x, 1, (tfc_tensor *[]){ya, yb}, 2, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, r, 8,
                               &st) == 5);
    CHECK_NEAR(r[0], r[1] + r[2], 1e-6);
    tfc_history_free(h);
    tfc_tensor_unref(ya);
    tfc_tensor_unref(yb);
    tfc_model_free(m);

    /* an L2 kernel regularizer adds 0.1 * sum(kernel^2) to the loss */
    double plain[2], reg[2];
    for (int k = 0; k < 2; k++) {
        tfc_keras_clear_session();
        tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.seed = 3, .has_seed = true}, &st);
        m = tfc_sequential(c, (tfc_layer *[]){
            tfc_layers_dense(.units = 2, .activation = "softmax", .input_shape = {4}, .kernel_regularizer = k ? tfc_l2(0.1) : NULL),
            NULL});
        CHECK(tfc_compile(m, &st, .optimizer_name = "sgd", .loss_name = "sparse_categorical_crossentropy"));
        CHECK(tfc_model_test_on_batch(m, x, y, NULL, true, k ? reg : plain, 2, &st) == 1);
        if (k) {
            tfc_tensor *w[2];
            REQUIRE(tfc_model_get_weights(m, w, 2, &st) == 2);
            double ss = 0;
            for (int i = 0; i < 8; i++) ss += tfc_tensor_get_f64(w[0], i) * tfc_tensor_get_f64(w[0], i);
            CHECK_NEAR(reg[0], plain[0] + 0.1 * ss, 1e-5);
            CHECK(reg[0] > plain[0]);
            tfc_tensor_unref(w[0]);
            tfc_tensor_unref(w[1]);
        }
        tfc_model_free(m);
        tfc_ctx_free(c);
    }
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* A deferred Sequential model trained by fit builds for the data, with an unknown batch. */
static void test_deferred_fit(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(64, &x, &y);
    tfc_keras_clear_session();
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 8, .activation = "relu"),
                                                       tfc_layers_dense(.units = 2, .activation = "softmax"), NULL});
    CHECK(tfc_compile(m, &st, .optimizer_name = "adam", .loss_name = "sparse_categorical_crossentropy",
                      .metrics = {"acc"}));
    tfc_history *h = NULL;
    CHECK(tfc_model_fit(m, x, y, &(tfc_fit_opts){.epochs = 2, .verbose = TFC_VERBOSE_SILENT}, &h, &st));
    CHECK_OK(&st);
    CHECK(tfc_history_get(h, "acc", NULL) != NULL);
    tfc_history_free(h);
    tfc_layer *l[4];
    tfc_model_layers(m, l, 4);
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 4 * 8 + 8 + 8 * 2 + 2);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tfc_keras_training_XXXXXX");
    REQUIRE(mkdtemp(tmpdir));
    test_backup_and_restore(); /* forks: before this process starts long-lived contexts */
    ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 1, .has_seed = true}, &st);
    REQUIRE(ctx);
    test_fit_mlp();
    test_on_batch_and_weights();
    test_class_weight_and_epochs();
    test_progress_output();
    test_early_stopping();
    test_csv_logger();
    test_learning_rate_callbacks();
    test_terminate_on_nan();
    test_model_checkpoint();
    test_errors();
    test_deferred_fit();
    test_multi_output_and_regularization();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    TEST_MAIN_END();
}
