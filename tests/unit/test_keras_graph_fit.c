/* Compiled Keras steps (run_eagerly = TFC_NO): fit / evaluate / predict / *_on_batch through traced
 * train/test/predict functions give the same per-step losses, weights and outputs as the eager steps; a function
 * is traced once per input signature; steps_per_execution runs N steps per execution with Keras's batch-hook
 * semantics; a learning-rate change retraces. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>

#include "keras/model_internal.h"
#include "tfc/keras.h"
#include "tfc/ops/array.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

#define CHECK_EQ_INT(a, b)                                                                     \
    do {                                                                                       \
        long long a_ = (a), b_ = (b);                                                          \
        if (a_ != b_) fprintf(stderr, "%s:%d: %s = %lld, expected %lld\n", __FILE__, __LINE__, #a, a_, b_); \
        CHECK(a_ == b_);                                                                       \
    } while (0)

/* rows [0, n) of t (caller-owned) */
static tfc_tensor *first_rows(tfc_tensor *t, int64_t n, tfc_status *st) {
    int64_t begin[4] = {0}, size[4] = {n, -1, -1, -1};
    return tfc_keep(ctx, tfc_slice(ctx, t, begin, size, st));
}

static uint64_t lcg;
static float urand(void) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((lcg >> 40) & 0xFFFFFF) / (float)0x1000000 * 2.0f - 1.0f;
}

/* x [n, 6, 6, 2] (CNN) or [n, 8] (MLP), y sparse labels of 3 classes depending on x */
static void make_data(bool cnn, int64_t n, tfc_tensor **x, tfc_tensor **y) {
    tfc_status st = TFC_STATUS_INIT;
    lcg = 777;
    int64_t per = cnn ? 72 : 8;
    *x = cnn ? tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 6, 6, 2}, 4, &st) : tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 8}, 2, &st);
    *y = tfc_tensor_new(TFC_INT32, (int64_t[]){n}, 1, &st);
    float *xd = tfc_tensor_mutable_data(*x);
    int32_t *yd = tfc_tensor_mutable_data(*y);
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t k = 0; k < per; k++) s += (xd[i * per + k] = urand()) * (double)(k % 3 - 1);
        yd[i] = s > 0.5 ? 2 : s > -0.5 ? 1 : 0;
    }
}

/* cnn: Conv2D + MaxPooling2D (the layers' conv+pool path); conv_only: Conv2D + Flatten (Conv2D's own gradient ops,
 * whose filter gradient has a shape the trace cannot infer) */
static tfc_model *make_model(bool cnn) {
    tfc_keras_clear_session();
    if (cnn && getenv("CONV_ONLY"))
        return tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_conv2d(.filters = 4, .kernel_size = {3}, .activation = "relu",
                                                                     .input_shape = {6, 6, 2}),
                                                   tfc_layers_flatten(), tfc_layers_dense(.units = 3, .activation = "softmax"),
                                                   NULL});
    tfc_model *m =
        cnn ? tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_conv2d(.filters = 4, .kernel_size = {3}, .activation = "relu",
                                                                    .input_shape = {6, 6, 2}),
                                                  tfc_layers_max_pooling2d(.pool_size = {2}), tfc_layers_flatten(),
                                                  tfc_layers_dense(.units = 3, .activation = "softmax"), NULL})
            : tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 16, .activation = "relu", .input_shape = {8}),
                                                  tfc_layers_dense(.units = 3, .activation = "softmax"), NULL});
    REQUIRE(m);
    return m;
}

/* the same weights in b as in a */
static void copy_weights(tfc_model *a, tfc_model *b) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *w[16];
    int n = tfc_model_get_weights(a, w, 16, &st);
    REQUIRE(n > 0);
    CHECK(tfc_model_set_weights(b, w, n, &st));
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
}

static double max_rel_weight_diff(tfc_model *a, tfc_model *b) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *wa[16], *wb[16];
    int n = tfc_model_get_weights(a, wa, 16, &st);
    REQUIRE(tfc_model_get_weights(b, wb, 16, &st) == n);
    double worst = 0;
    for (int i = 0; i < n; i++) {
        const float *p = tfc_tensor_data(wa[i]), *q = tfc_tensor_data(wb[i]);
        for (int64_t j = 0; j < tfc_tensor_num_elements(wa[i]); j++) {
            double d = fabs((double)p[j] - q[j]) / fmax(fabs((double)q[j]), 1e-3);
            if (d > worst) worst = d;
        }
        tfc_tensor_unref(wa[i]);
        tfc_tensor_unref(wb[i]);
    }
    return worst;
}

/* ---- a callback recording what the batch hooks see ---- */
typedef struct {
    int64_t begins[256], ends[256];
    double loss[256];
    int n_begin, n_end;
} rec_t;

static bool rec_begin(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    (void)m, (void)logs, (void)st;
    rec_t *r = tfc_callback_user(cb);
    if (r->n_begin < 256) r->begins[r->n_begin++] = batch;
    return true;
}
static bool rec_end(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    (void)m, (void)st;
    rec_t *r = tfc_callback_user(cb);
    if (r->n_end < 256) {
        r->ends[r->n_end] = batch;
        r->loss[r->n_end++] = tfc_logs_get(logs, "loss");
    }
    return true;
}
static const tfc_callback_fns rec_fns = {.on_train_batch_begin = rec_begin, .on_train_batch_end = rec_end};

static void fit_recording(tfc_model *m, tfc_tensor *x, tfc_tensor *y, int64_t bs, int epochs, rec_t *r) {
    tfc_status st = TFC_STATUS_INIT;
    *r = (rec_t){0};
    tfc_history *h = NULL;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.batch_size = bs, .epochs = epochs, .shuffle = TFC_NO,
                                        .verbose = TFC_VERBOSE_SILENT, .callbacks = {tfc_callback_new(&rec_fns, r)}},
                        &h, &st));
    CHECK_OK(&st);
    tfc_history_free(h);
}

static tfc_optimizer *make_opt(int which) {
    switch (which) {
    case 0: return tfc_optimizers_adam(.learning_rate = 0.01);
    case 1: return tfc_optimizers_sgd(.learning_rate = 0.05, .momentum = 0.9);
    default: return tfc_optimizers_rmsprop(.learning_rate = 0.01);
    }
}

/* fit eager vs compiled: the same per-step losses (float32 rounding), weights, evaluate and predict */
static void test_graph_matches_eager(bool cnn, int opt) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(cnn, 100, &x, &y); /* batches of 16: a partial last batch (a second signature) */
    tfc_model *a = make_model(cnn), *b = make_model(cnn);
    copy_weights(a, b);
    REQUIRE(tfc_compile(a, &st, .optimizer = make_opt(opt), .loss_name = "sparse_categorical_crossentropy",
                        .metrics = {"accuracy"}, .run_eagerly = TFC_YES));
    REQUIRE(tfc_compile(b, &st, .optimizer = make_opt(opt), .loss_name = "sparse_categorical_crossentropy",
                        .metrics = {"accuracy"}, .run_eagerly = TFC_NO));
    CHECK(!tfc_model_graph_mode(a, true) && tfc_model_graph_mode(b, true));
    rec_t ra, rb;
    fit_recording(a, x, y, 16, 3, &ra);
    fit_recording(b, x, y, 16, 3, &rb);
    CHECK(ra.n_end == 21 && rb.n_end == 21);
    for (int i = 0; i < ra.n_end; i++) CHECK_NEAR(rb.loss[i], ra.loss[i], 1e-5);
    CHECK(max_rel_weight_diff(a, b) < 1e-4);
    /* traced once per signature: full and partial batch */
    CHECK_EQ_INT(tfc_model_fn_tracing_count(b), 2);
    CHECK_EQ_INT(tfc_model_fn_tracing_count(a), 0);

    double ea[4], eb[4];
    CHECK_EQ_INT(tfc_model_evaluate(a, x, y, &(tfc_eval_opts){.batch_size = 32, .verbose = TFC_VERBOSE_SILENT}, ea, 4, &st), 2);
    CHECK_EQ_INT(tfc_model_evaluate(b, x, y, &(tfc_eval_opts){.batch_size = 32, .verbose = TFC_VERBOSE_SILENT}, eb, 4, &st), 2);
    CHECK_OK(&st);
    for (int i = 0; i < 2; i++) CHECK_NEAR(eb[i], ea[i], 1e-5);
    tfc_tensor *pa = tfc_model_predict(a, x, &(tfc_eval_opts){.batch_size = 32, .verbose = TFC_VERBOSE_SILENT}, &st);
    tfc_tensor *pb = tfc_model_predict(b, x, &(tfc_eval_opts){.batch_size = 32, .verbose = TFC_VERBOSE_SILENT}, &st);
    REQUIRE(pa && pb);
    CHECK(tfc_tensor_num_elements(pa) == 300 && tfc_tensor_num_elements(pb) == 300);
    const float *qa = tfc_tensor_data(pa), *qb = tfc_tensor_data(pb);
    for (int i = 0; i < 300; i++) CHECK_NEAR(qb[i], qa[i], 1e-5);
    tfc_tensor_unref(pa);
    tfc_tensor_unref(pb);
    int traces = tfc_model_fn_tracing_count(b);
    CHECK(traces >= 4); /* + test (2 signatures) + predict (2) */

    /* *_on_batch: the same results, and the traced functions are reused for a seen signature */
    double ta[4], tb[4];
    tfc_tensor *x16 = first_rows(x, 16, &st), *y16 = first_rows(y, 16, &st);
    REQUIRE(x16 && y16);
    CHECK_EQ_INT(tfc_model_train_on_batch(a, x16, y16, NULL, true, ta, 4, &st), 2);
    CHECK_EQ_INT(tfc_model_train_on_batch(b, x16, y16, NULL, true, tb, 4, &st), 2);
    CHECK_NEAR(tb[0], ta[0], 1e-5);
    CHECK_EQ_INT(tfc_model_fn_tracing_count(b), traces);
    tfc_tensor_unref(x16);
    tfc_tensor_unref(y16);
    tfc_model_free(a);
    tfc_model_free(b);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* steps_per_execution: batch hooks at every N-th step (begin: first step, end: last, the epoch's tail
 * shorter), the same losses at those steps as N = 1, in eager and in graph mode */
static void test_steps_per_execution(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(false, 100, &x, &y); /* 13 steps of 8 per epoch: executions 0-7, 8-12 */
    rec_t r1, r8g, r8e;
    tfc_model *m1 = make_model(false), *mg = make_model(false), *me = make_model(false);
    copy_weights(m1, mg);
    copy_weights(m1, me);
    REQUIRE(tfc_compile(m1, &st, .optimizer = make_opt(0), .loss_name = "sparse_categorical_crossentropy",
                        .run_eagerly = TFC_NO, .steps_per_execution = 1));
    REQUIRE(tfc_compile(mg, &st, .optimizer = make_opt(0), .loss_name = "sparse_categorical_crossentropy",
                        .run_eagerly = TFC_NO, .steps_per_execution = 8));
    REQUIRE(tfc_compile(me, &st, .optimizer = make_opt(0), .loss_name = "sparse_categorical_crossentropy",
                        .run_eagerly = TFC_YES, .steps_per_execution = 8));
    fit_recording(m1, x, y, 8, 2, &r1);
    fit_recording(mg, x, y, 8, 2, &r8g);
    fit_recording(me, x, y, 8, 2, &r8e);
    CHECK_EQ_INT(r1.n_end, 26);
    CHECK_EQ_INT(r8g.n_begin, 4);
    CHECK_EQ_INT(r8g.n_end, 4);
    CHECK_EQ_INT(r8e.n_end, 4);
    const int64_t begins[4] = {0, 8, 0, 8}, ends[4] = {7, 12, 7, 12};
    for (int i = 0; i < 4 && r8g.n_end == 4; i++) {
        CHECK(r8g.begins[i] == begins[i] && r8g.ends[i] == ends[i]);
        CHECK(r8e.begins[i] == begins[i] && r8e.ends[i] == ends[i]);
        int k = (int)(i / 2 * 13 + ends[i]); /* the same step with N = 1 */
        CHECK_NEAR(r8g.loss[i], r1.loss[k], 1e-5);
        CHECK_NEAR(r8e.loss[i], r1.loss[k], 1e-5);
    }
    CHECK(max_rel_weight_diff(m1, mg) < 1e-4);
    /* N = 8: the 8-step execution and the 5-step tail (a 4-row last batch) */
    CHECK_EQ_INT(tfc_model_fn_tracing_count(mg), 2);
    tfc_status bad = TFC_STATUS_INIT;
    CHECK(!tfc_compile(me, &bad, .optimizer_name = "sgd", .loss_name = "mse", .steps_per_execution = 1000));
    CHECK(bad.code == TFC_INVALID_ARGUMENT);
    tfc_model_free(m1);
    tfc_model_free(mg);
    tfc_model_free(me);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* a learning rate changed between fits retraces (the traced constant would be stale) and the compiled steps
 * follow it as the eager ones do */
static void test_learning_rate_change_retraces(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(false, 64, &x, &y);
    tfc_model *a = make_model(false), *b = make_model(false);
    copy_weights(a, b);
    REQUIRE(tfc_compile(a, &st, .optimizer = make_opt(1), .loss_name = "sparse_categorical_crossentropy", .run_eagerly = TFC_YES));
    REQUIRE(tfc_compile(b, &st, .optimizer = make_opt(1), .loss_name = "sparse_categorical_crossentropy", .run_eagerly = TFC_NO));
    rec_t ra, rb;
    fit_recording(a, x, y, 16, 1, &ra);
    fit_recording(b, x, y, 16, 1, &rb);
    CHECK_EQ_INT(tfc_model_fn_tracing_count(b), 1);
    tfc_optimizer_set_learning_rate(tfc_model_optimizer(a), 0.2);
    tfc_optimizer_set_learning_rate(tfc_model_optimizer(b), 0.2);
    fit_recording(a, x, y, 16, 1, &ra);
    fit_recording(b, x, y, 16, 1, &rb);
    CHECK_EQ_INT(tfc_model_fn_tracing_count(b), 2);
    for (int i = 0; i < ra.n_end; i++) CHECK_NEAR(rb.loss[i], ra.loss[i], 1e-5);
    CHECK(max_rel_weight_diff(a, b) < 1e-4);
    tfc_model_free(a);
    tfc_model_free(b);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

/* two inputs, two outputs, BatchNormalization (moving statistics updated inside the step), an L2 kernel
 * regularizer and sample weights: the same history, moving statistics and predictions in both modes */
static tfc_model *two_by_two(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_ktensor *a = tfc_input(.shape = {8}, .name = "in_a"), *b = tfc_input(.shape = {8}, .name = "in_b");
    tfc_ktensor *c = tfc_apply(tfc_layers_concatenate(.axis = -1), &st, a, b);
    tfc_ktensor *h = tfc_apply(tfc_layers_dense(.units = 12, .activation = "tanh", .kernel_regularizer = tfc_l2(0.01)),
                               &st, c);
    h = tfc_apply(tfc_layers_batch_normalization(.momentum = 0.9), &st, h);
    tfc_ktensor *o1 = tfc_apply(tfc_layers_dense(.units = 3, .activation = "softmax", .name = "cls"), &st, h);
    tfc_ktensor *o2 = tfc_apply(tfc_layers_dense(.units = 1, .name = "reg"), &st, h);
    tfc_model *m = tfc_model_new(ctx, (tfc_ktensor *[]){a, b}, 2, (tfc_ktensor *[]){o1, o2}, 2, NULL, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    return m;
}

static void test_multi_io_batch_norm_sample_weights(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *xa, *xb, *ya, *yb;
    make_data(false, 72, &xa, &ya);
    make_data(false, 72, &xb, &yb); /* (the same draws: in_b = in_a) */
    tfc_tensor *y2 = tfc_tensor_new(TFC_FLOAT, (int64_t[]){72, 1}, 2, &st), *sw = tfc_tensor_new(TFC_FLOAT, (int64_t[]){72}, 1, &st);
    float *p = tfc_tensor_mutable_data(y2), *w = tfc_tensor_mutable_data(sw);
    for (int i = 0; i < 72; i++) p[i] = urand(), w[i] = 0.5f + (float)(i % 3);
    tfc_model *e = two_by_two(), *g = two_by_two();
    copy_weights(e, g);
    REQUIRE(tfc_compile(e, &st, .optimizer = make_opt(0), .loss_name = "mse", .metrics = {"mae"}, .run_eagerly = TFC_YES));
    REQUIRE(tfc_compile(g, &st, .optimizer = make_opt(0), .loss_name = "mse", .metrics = {"mae"}, .run_eagerly = TFC_NO,
                        .steps_per_execution = 4));
    tfc_tensor *ycls = tfc_tensor_new(TFC_FLOAT, (int64_t[]){72, 3}, 2, &st);
    float *q = tfc_tensor_mutable_data(ycls);
    const int32_t *lab = tfc_tensor_data(ya);
    for (int i = 0; i < 72; i++)
        for (int k = 0; k < 3; k++) q[i * 3 + k] = lab[i] == k;
    tfc_history *he = NULL, *hg = NULL;
    tfc_fit_opts fo = {.batch_size = 16, .epochs = 2, .shuffle = TFC_NO, .verbose = TFC_VERBOSE_SILENT, .sample_weight = sw};
    CHECK(tfc_model_fit_n(e, (tfc_tensor *[]){xa, xb}, 2, (tfc_tensor *[]){ycls, y2}, 2, &fo, &he, &st));
    CHECK_OK(&st);
    CHECK(tfc_model_fit_n(g, (tfc_tensor *[]){xa, xb}, 2, (tfc_tensor *[]){ycls, y2}, 2, &fo, &hg, &st));
    CHECK_OK(&st);
    const char *keys[16];
    int nk = tfc_history_keys(he, keys, 16);
    CHECK_EQ_INT(nk, 5);
    CHECK_EQ_INT(tfc_history_keys(hg, (const char *[16]){0}, 16), nk);
    for (int k = 0; k < nk; k++) {
        const double *ve = tfc_history_get(he, keys[k], NULL), *vg = tfc_history_get(hg, keys[k], NULL);
        REQUIRE(ve && vg);
        for (int ep = 0; ep < 2; ep++) CHECK_NEAR(vg[ep], ve[ep], 1e-5);
    }
    CHECK(max_rel_weight_diff(e, g) < 1e-4); /* the moving mean and variance included */
    CHECK_EQ_INT(tfc_model_fn_tracing_count(g), 2); /* 4 full steps, then a tail of 1 step with a partial batch */
    tfc_tensor *pe[2], *pg[2];
    REQUIRE(tfc_model_predict_n(e, (tfc_tensor *[]){xa, xb}, 2, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, pe, 2, &st));
    REQUIRE(tfc_model_predict_n(g, (tfc_tensor *[]){xa, xb}, 2, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, pg, 2, &st));
    for (int o = 0; o < 2; o++) {
        CHECK(tfc_tensor_num_elements(pe[o]) == tfc_tensor_num_elements(pg[o]));
        const float *u = tfc_tensor_data(pe[o]), *v = tfc_tensor_data(pg[o]);
        for (int64_t i = 0; i < tfc_tensor_num_elements(pe[o]); i++) CHECK_NEAR(v[i], u[i], 1e-5);
        tfc_tensor_unref(pe[o]);
        tfc_tensor_unref(pg[o]);
    }
    tfc_history_free(he);
    tfc_history_free(hg);
    tfc_model_free(e);
    tfc_model_free(g);
    tfc_tensor *all[] = {xa, xb, ya, yb, y2, sw, ycls};
    for (int i = 0; i < 7; i++) tfc_tensor_unref(all[i]);
}

/* Dropout under a global seed: its masks come from the model's seed generator, a captured resource of
 * train_function, so one trace serves every epoch (fit resets the generator per epoch) and the traced steps give
 * the eager steps' losses and metrics; another seed gives other masks */
static tfc_model *mlp_dropout(void) {
    tfc_keras_clear_session();
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 16, .activation = "relu", .input_shape = {8}),
                                                       tfc_layers_dropout(.rate = 0.3),
                                                       tfc_layers_dense(.units = 3, .activation = "softmax"), NULL});
    REQUIRE(m);
    return m;
}

static void fit_seeded(tfc_model *m, int64_t seed, tfc_tensor *x, tfc_tensor *y, rec_t *r, double acc[3]) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx_set_seed(ctx, seed);
    *r = (rec_t){0};
    tfc_history *h = NULL;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.batch_size = 16, .epochs = 3, .shuffle = TFC_YES,
                                        .verbose = TFC_VERBOSE_SILENT, .callbacks = {tfc_callback_new(&rec_fns, r)}},
                        &h, &st));
    CHECK_OK(&st);
    int n = 0;
    const double *a = h ? tfc_history_get(h, "accuracy", &n) : NULL;
    CHECK(a && n == 3);
    for (int i = 0; i < 3 && a && n == 3; i++) acc[i] = a[i];
    tfc_history_free(h);
}

static void test_dropout_seed_generator(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y;
    make_data(false, 96, &x, &y); /* 6 full batches of 16: one signature */
    tfc_model *e = mlp_dropout(), *g = mlp_dropout(), *g2 = mlp_dropout();
    copy_weights(e, g);
    copy_weights(e, g2);
    REQUIRE(tfc_compile(e, &st, .optimizer = make_opt(0), .loss_name = "sparse_categorical_crossentropy",
                        .metrics = {"accuracy"}, .run_eagerly = TFC_YES));
    REQUIRE(tfc_compile(g, &st, .optimizer = make_opt(0), .loss_name = "sparse_categorical_crossentropy",
                        .metrics = {"accuracy"}, .run_eagerly = TFC_NO));
    REQUIRE(tfc_compile(g2, &st, .optimizer = make_opt(0), .loss_name = "sparse_categorical_crossentropy",
                        .metrics = {"accuracy"}, .run_eagerly = TFC_NO));
    rec_t re, rg, rg2;
    double ae[3], ag[3], ag2[3];
    fit_seeded(e, 1234, x, y, &re, ae);
    fit_seeded(g, 1234, x, y, &rg, ag);
    fit_seeded(g2, 99, x, y, &rg2, ag2);
    CHECK_EQ_INT(re.n_end, 18);
    CHECK_EQ_INT(rg.n_end, 18);
    CHECK_EQ_INT(tfc_model_fn_tracing_count(g), 1); /* one trace for 3 epochs */
    CHECK_EQ_INT(tfc_model_fn_tracing_count(e), 0);
    double most = 0;
    for (int i = 0; i < 18 && re.n_end == 18 && rg.n_end == 18; i++) {
        CHECK_NEAR(rg.loss[i], re.loss[i], 1e-5 * fmax(1, fabs(re.loss[i])));
        most = fmax(most, fabs(rg2.loss[i] - rg.loss[i]));
    }
    for (int i = 0; i < 3; i++) CHECK_NEAR(ag[i], ae[i], 1e-6);
    CHECK(max_rel_weight_diff(e, g) < 1e-4);
    CHECK(most > 1e-4); /* another seed: other masks, other losses */
    /* a second fit reuses the trace */
    fit_seeded(g, 1234, x, y, &rg, ag);
    CHECK_EQ_INT(tfc_model_fn_tracing_count(g), 1);
    tfc_model_free(e);
    tfc_model_free(g);
    tfc_model_free(g2);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_ctx_free(ctx);
    ctx = tfc_ctx_new(NULL, &st); /* unseeded again */
    REQUIRE(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* unseeded (test_dropout_seed_generator seeds it) */
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    for (int opt = 0; opt < 3; opt++) test_graph_matches_eager(false, opt);
    test_graph_matches_eager(true, 0);
    test_graph_matches_eager(true, 1);
    setenv("CONV_ONLY", "1", 1);
    test_graph_matches_eager(true, 1);
    unsetenv("CONV_ONLY");
    test_steps_per_execution();
    test_learning_rate_change_retraces();
    test_multi_io_batch_norm_sample_weights();
    test_dropout_seed_generator();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
