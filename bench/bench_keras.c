/* Keras workloads on Fashion-MNIST: training throughput with fit (train_mlp, train_cnn, and train_cnn_mixed_bfloat16
 * / _float16: the CNN under that Keras mixed precision policy, its last Dense in float32), inference of the demo
 * CNN (infer_cnn_b1, infer_cnn_b256), and the CNN training run whose peak memory peak-mem mode measures.
 *
 *   MLP: Flatten(28x28) -> Dense(128, relu) -> Dense(10, softmax)
 *   CNN (the demo's, the Keras example's): Conv2D(32, 3x3, relu) -> MaxPooling2D -> Conv2D(64, 3x3, relu) ->
 *        MaxPooling2D -> Flatten -> Dropout(0.5) -> Dense(10, softmax)
 *   Both compiled with Adam and sparse_categorical_crossentropy, trained with batch 128.
 *
 * The Keras model API may not be in libtfc yet while it is written: its functions are referenced weakly, and a
 * workload whose functions are missing reports "not available" instead of failing to link. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "tfc/keras.h"

#pragma weak tfc_sequential
#pragma weak tfc_mixed_precision_set_global_policy
#pragma weak tfc_model_compile
#pragma weak tfc_model_fit
#pragma weak tfc_model_call
#pragma weak tfc_model_set_weights
#pragma weak tfc_model_free
#pragma weak tfc_layers_conv2d_new
#pragma weak tfc_layers_max_pooling2d_new
#pragma weak tfc_layers_flatten_new
#pragma weak tfc_layers_dropout_new
#pragma weak tfc_layers_dense_new
#pragma weak tfc_datasets_fashion_mnist_load
#pragma weak tfc_datasets_free
#pragma weak tfc_callback_new
#pragma weak tfc_callback_user

#define BATCH 128

static bool keras_available(tfc_status *st) {
    if (tfc_sequential && tfc_model_compile && tfc_model_fit && tfc_model_call && tfc_model_set_weights &&
        tfc_model_free && tfc_layers_conv2d_new && tfc_layers_max_pooling2d_new && tfc_layers_flatten_new &&
        tfc_layers_dropout_new && tfc_layers_dense_new && tfc_datasets_fashion_mnist_load && tfc_datasets_free &&
        tfc_callback_new && tfc_callback_user)
        return true;
    return tfc_status_set(st, TFC_UNIMPLEMENTED, "the Keras model API (tfc_sequential/compile/fit) is not in libtfc yet");
}

/* Fashion-MNIST as float32 in [0, 1]: x [count, 28, 28, 1] (the MLP flattens it), y int32 [count]. */
typedef struct {
    tfc_tensor *x, *y;
} fmnist;

static bool fmnist_load(const bench_cfg *cfg, bool test, int64_t count, fmnist *out, tfc_status *st) {
    tfc_dataset_arrays d = {0};
    if (!tfc_datasets_fashion_mnist_load(cfg->data_dir, &d, st)) return false;
    tfc_tensor *xs = test ? d.x_test : d.x_train, *ys = test ? d.y_test : d.y_train;
    int64_t avail = tfc_tensor_dim(xs, 0);
    if (count <= 0 || count > avail) count = avail;
    int64_t xd[4] = {count, 28, 28, 1};
    out->x = tfc_tensor_new(TFC_FLOAT, xd, 4, st);
    out->y = out->x ? tfc_tensor_new(TFC_INT32, xd, 1, st) : NULL;
    if (out->y) {
        const uint8_t *px = tfc_tensor_data(xs), *py = tfc_tensor_data(ys);
        float *fx = tfc_tensor_mutable_data(out->x);
        int32_t *iy = tfc_tensor_mutable_data(out->y);
        for (int64_t i = 0; i < count * 784; i++) fx[i] = (float)px[i] / 255.0f;
        for (int64_t i = 0; i < count; i++) iy[i] = py[i];
    }
    tfc_datasets_free(&d);
    if (!out->y) {
        tfc_tensor_unref(out->x);
        out->x = NULL;
        return false;
    }
    return true;
}

static void fmnist_free(fmnist *f) {
    tfc_tensor_unref(f->x);
    tfc_tensor_unref(f->y);
    f->x = f->y = NULL;
}

/* policy: a Keras mixed precision policy the model is built under (the last Dense in float32, as Keras
 * recommends), or NULL. */
static tfc_model *build_model_policy(tfc_ctx *ctx, bool cnn, const char *policy, tfc_status *st) {
    tfc_model *m;
    if (policy && (!tfc_mixed_precision_set_global_policy || !tfc_mixed_precision_set_global_policy(policy, st)))
        return policy && !tfc_mixed_precision_set_global_policy
                   ? (tfc_status_set(st, TFC_UNIMPLEMENTED, "not in libtfc: tfc_mixed_precision_set_global_policy"), NULL)
                   : NULL;
    if (cnn) {
        tfc_layer *layers[] = {
            tfc_layers_conv2d(.filters = 32, .kernel_size = {3, 3}, .activation = "relu", .input_shape = {28, 28, 1}),
            tfc_layers_max_pooling2d(.pool_size = {2, 2}),
            tfc_layers_conv2d(.filters = 64, .kernel_size = {3, 3}, .activation = "relu"),
            tfc_layers_max_pooling2d(.pool_size = {2, 2}),
            tfc_layers_flatten(.name = NULL),
            tfc_layers_dropout(.rate = 0.5),
            tfc_layers_dense(.units = 10, .activation = "softmax", .dtype_policy = policy ? "float32" : NULL),
            NULL};
        m = tfc_sequential(ctx, layers);
    } else {
        tfc_layer *layers[] = {tfc_layers_flatten(.input_shape = {28, 28, 1}),
                               tfc_layers_dense(.units = 128, .activation = "relu"),
                               tfc_layers_dense(.units = 10, .activation = "softmax"), NULL};
        m = tfc_sequential(ctx, layers);
    }
    if (policy) tfc_mixed_precision_set_global_policy(NULL, st); /* the layers have theirs */
    if (!m) return tfc_status_oom(st, "model", 0), NULL;
    if (!tfc_compile(m, st, .optimizer_name = "adam", .loss_name = "sparse_categorical_crossentropy")) {
        tfc_model_free(m);
        return NULL;
    }
    return m;
}

static tfc_model *build_model(tfc_ctx *ctx, bool cnn, tfc_status *st) { return build_model_policy(ctx, cnn, NULL, st); }

/* The CNN's weights written by bench.py: raw float32 in Keras's get_weights() order. */
static bool load_cnn_weights(tfc_model *m, const char *path, tfc_status *st) {
    static const int64_t shapes[6][4] = {{3, 3, 1, 32}, {32}, {3, 3, 32, 64}, {64}, {1600, 10}, {10}};
    static const int ranks[6] = {4, 1, 4, 1, 2, 1};
    tfc_tensor *w[6] = {0};
    bool ok = true;
    FILE *f = fopen(path, "rb");
    if (!f) return tfc_status_set(st, TFC_NOT_FOUND, "%s: cannot open", path);
    for (int i = 0; i < 6 && ok; i++) {
        ok = (w[i] = tfc_tensor_new(TFC_FLOAT, shapes[i], ranks[i], st)) != NULL;
        if (ok && fread(tfc_tensor_mutable_data(w[i]), 1, tfc_tensor_byte_size(w[i]), f) != tfc_tensor_byte_size(w[i]))
            ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: truncated weights file", path);
    }
    fclose(f);
    ok = ok && tfc_model_set_weights(m, w, 6, st);
    for (int i = 0; i < 6; i++) tfc_tensor_unref(w[i]);
    return ok;
}

/* sum over rows i and classes j of p[i,j] * (j + 1) * (i % 7 + 1): equal across frameworks when they compute
 * the same probabilities (bench.py compares it). */
static double probs_checksum(const tfc_tensor *p) {
    const float *v = tfc_tensor_data(p);
    int64_t rows = tfc_tensor_dim(p, 0), cols = tfc_tensor_dim(p, 1);
    double s = 0;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) s += (double)v[i * cols + j] * (double)(j + 1) * (double)(i % 7 + 1);
    return s;
}

/* ---- training: one iteration = one fit call of two epochs over train_steps (CNN) or mlp_steps (MLP) batches,
 * timed over its second epoch only (an epoch-end callback, as on the peers' side). A fit call has a fixed cost
 * (tf.keras: converting the arrays to a dataset, 0.1-0.7 s here) that a user pays once per training run, not
 * per epoch; timing a whole short fit call would charge it to every sample. ---- */
typedef struct {
    bench_case base;
    tfc_ctx *ctx;
    tfc_model *m;
    fmnist data;
    double epoch_t0, epoch_s;
} train_case;

static bool epoch_begin(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *logs, tfc_status *st) {
    (void)m, (void)epoch, (void)logs, (void)st;
    ((train_case *)tfc_callback_user(cb))->epoch_t0 = bench_now();
    return true;
}

static bool epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    (void)m, (void)epoch, (void)logs, (void)st;
    train_case *t = tfc_callback_user(cb);
    t->epoch_s = bench_now() - t->epoch_t0; /* the last epoch's duration once fit returns */
    return true;
}

static bool train_run(bench_case *bc, int64_t iters, tfc_status *st) {
    train_case *t = (train_case *)bc;
    double total = 0;
    for (int64_t i = 0; i < iters; i++) {
        tfc_callback *cb = tfc_callback_new(&(tfc_callback_fns){.on_epoch_begin = epoch_begin, .on_epoch_end = epoch_end}, t);
        if (!cb) return tfc_status_oom(st, "callback", 0);
        t->epoch_s = -1;
        if (!tfc_model_fit(t->m, t->data.x, t->data.y,
                           &(tfc_fit_opts){.batch_size = BATCH, .epochs = 2, .verbose = TFC_VERBOSE_SILENT,
                                           .callbacks = {cb, NULL}},
                           NULL, st))
            return false;
        if (t->epoch_s < 0) return tfc_status_set(st, TFC_INTERNAL, "fit called no epoch callback");
        total += t->epoch_s;
    }
    bc->measured = total;
    return true;
}

static void train_free(bench_case *bc) {
    train_case *t = (train_case *)bc;
    if (t->m) tfc_model_free(t->m);
    fmnist_free(&t->data);
    tfc_free(t);
}

static bench_case *train_prep(tfc_ctx *ctx, const bench_cfg *cfg, bool cnn, const char *policy, tfc_status *st) {
    if (!keras_available(st)) return NULL;
    int64_t steps = cnn ? cfg->train_steps : cfg->mlp_steps;
    train_case *t = tfc_calloc(1, sizeof *t);
    if (!t) return tfc_status_oom(st, "train", sizeof *t), NULL;
    *t = (train_case){.base = {train_run, train_free, (double)(steps * BATCH), NAN}, .ctx = ctx};
    if (!fmnist_load(cfg, false, steps * BATCH, &t->data, st) || !(t->m = build_model_policy(ctx, cnn, policy, st))) {
        train_free(&t->base);
        return NULL;
    }
    return &t->base;
}

/* ---- inference of the CNN: one iteration = one forward pass (training = false) of one batch ---- */
typedef struct {
    bench_case base;
    tfc_ctx *ctx;
    tfc_model *m;
    fmnist data;
} infer_case;

static bool infer_run(bench_case *bc, int64_t iters, tfc_status *st) {
    infer_case *c = (infer_case *)bc;
    for (int64_t i = 0; i < iters; i++) {
        tfc_tensor *y = tfc_model_call(c->m, c->data.x, false, st);
        if (!y) return false;
        tfc_tensor_unref(y);
    }
    return true;
}

static void infer_free(bench_case *bc) {
    infer_case *c = (infer_case *)bc;
    if (c->m) tfc_model_free(c->m);
    fmnist_free(&c->data);
    tfc_free(c);
}

static bench_case *infer_prep(tfc_ctx *ctx, const bench_cfg *cfg, int64_t batch, tfc_status *st) {
    if (!keras_available(st)) return NULL;
    infer_case *c = tfc_calloc(1, sizeof *c);
    if (!c) return tfc_status_oom(st, "infer", sizeof *c), NULL;
    *c = (infer_case){.base = {infer_run, infer_free, (double)batch, NAN}, .ctx = ctx};
    /* The first 256 test images give the checksum; the timed batch is their first `batch`. */
    tfc_tensor *p = NULL;
    bool ok = fmnist_load(cfg, true, 256, &c->data, st) && (c->m = build_model(ctx, true, st)) &&
              (p = tfc_model_call(c->m, c->data.x, false, st)); /* builds the model */
    tfc_tensor_unref(p);
    p = NULL;
    if (ok && cfg->weights) {
        ok = load_cnn_weights(c->m, cfg->weights, st) && (p = tfc_model_call(c->m, c->data.x, false, st));
        if (ok) c->base.check = probs_checksum(p);
        tfc_tensor_unref(p);
    }
    if (ok && batch < 256) {
        int64_t d[4] = {batch, 28, 28, 1};
        tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, d, 4, tfc_tensor_data(c->data.x),
                                             (size_t)batch * 784 * sizeof(float), st);
        ok = x != NULL;
        tfc_tensor_unref(c->data.x);
        c->data.x = x;
    }
    if (!ok) {
        infer_free(&c->base);
        return NULL;
    }
    return &c->base;
}

bench_case *bench_prep_keras(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                             tfc_status *st) {
    bool known = !strcmp(workload, "train_mlp") || !strcmp(workload, "train_cnn") ||
                 !strcmp(workload, "infer_cnn_b1") || !strcmp(workload, "infer_cnn_b256") ||
                 !strncmp(workload, "train_cnn_mixed_", 16);
    if (!known) return NULL;
    /* train_cnn_mixed_<dtype>: impl tfc trains under the mixed_<dtype> policy, its peer tfc_f32 in float32 */
    if (!strncmp(workload, "train_cnn_mixed_", 16) && !strcmp(impl, "tfc_f32")) return train_prep(ctx, cfg, true, NULL, st);
    if (strcmp(impl, "tfc")) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: unknown impl '%s'", workload, impl), NULL;
    if (!strncmp(workload, "train_cnn_mixed_", 16)) return train_prep(ctx, cfg, true, workload + 10, st);
    if (!strcmp(workload, "train_mlp")) return train_prep(ctx, cfg, false, NULL, st);
    if (!strcmp(workload, "train_cnn")) return train_prep(ctx, cfg, true, NULL, st);
    return infer_prep(ctx, cfg, !strcmp(workload, "infer_cnn_b1") ? 1 : 256, st);
}

/* The demo's training run, as a user writes it: the whole training set in memory as float32, fit with batch
 * 128 (for train_steps steps, to bound the time). The caller reads the peak RSS afterwards. */
bool bench_peak_mem_train_cnn(tfc_ctx *ctx, const bench_cfg *cfg, tfc_status *st) {
    if (!keras_available(st)) return false;
    fmnist data = {0};
    tfc_model *m = NULL;
    bool ok = fmnist_load(cfg, false, 0, &data, st) && (m = build_model(ctx, true, st)) &&
              tfc_model_fit(m, data.x, data.y,
                            &(tfc_fit_opts){.batch_size = BATCH,
                                            .epochs = 1,
                                            .steps_per_epoch = cfg->train_steps,
                                            .verbose = TFC_VERBOSE_SILENT},
                            NULL, st);
    if (m) tfc_model_free(m);
    fmnist_free(&data);
    return ok;
}
