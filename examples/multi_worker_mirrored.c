/* Multi-worker training of the demo CNN on Fashion-MNIST (TensorFlow's "Multi-worker training with Keras"
 * tutorial, in C): every worker runs this same program; MultiWorkerMirroredStrategy finds the others through
 * mpirun or TF_CONFIG, the model is built and compiled inside strategy.scope(), and fit splits every global batch
 * of 128 images between the workers, all-reducing the gradients each step. Only the chief keeps the saved
 * weights; the other workers write theirs to a temporary file that they remove (Keras's multi-worker rule).
 *
 *   mpirun -np 2 ./multi_worker_mirrored [steps_per_epoch [epochs]]
 *   TF_CONFIG='{"cluster":{"worker":["localhost:12345","localhost:23456"]},"task":{"type":"worker","index":0}}' \
 *       ./multi_worker_mirrored &
 *   TF_CONFIG='{"cluster":{"worker":["localhost:12345","localhost:23456"]},"task":{"type":"worker","index":1}}' \
 *       ./multi_worker_mirrored
 * (as root, Open MPI also wants OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tfc/ops/array.h"
#include "tfc/ops/math.h"
#include "tfc/tfc.h"

#define GLOBAL_BATCH 128

static tfc_tensor *preprocess(tfc_ctx *ctx, const tfc_tensor *images, tfc_status *st) {
    tfc_tensor *x = NULL, *scaled = NULL, *k = NULL;
    if (!tfc_scope_begin(ctx, st)) return NULL;
    if ((x = tfc_cast(ctx, images, TFC_FLOAT, st)) && (k = tfc_scalar_f32(1.0f / 255.0f, st)) &&
        (scaled = tfc_mul(ctx, x, k, st)))
        x = tfc_reshape(ctx, scaled, (int64_t[]){tfc_tensor_dim(images, 0), 28, 28, 1}, 4, st);
    else
        x = NULL;
    if (x) tfc_keep(ctx, x);
    tfc_tensor_unref(k);
    tfc_scope_end(ctx);
    return x;
}

int main(int argc, char **argv) {
    int64_t steps = argc > 1 ? atoll(argv[1]) : 0; /* 0: whole epochs */
    int epochs = argc > 2 ? atoi(argv[2]) : 3;
    if (steps < 0 || epochs < 1) return fprintf(stderr, "usage: %s [steps_per_epoch [epochs]]\n", argv[0]), 2;

    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1, .seed = 42, .has_seed = true}, &st);
    if (!ctx) return fprintf(stderr, "%s\n", st.msg), 1;
    tfc_strategy *strategy = NULL;
    tfc_dataset_arrays d = {0};
    tfc_tensor *x_train = NULL, *x_test = NULL;
    tfc_model *model = NULL;
    double test[2] = {0, 0};

    /* the cluster: mpirun's ranks or TF_CONFIG; blocks until every worker has joined */
    if (!(strategy = tfc_multi_worker_mirrored_strategy_new(ctx, &(tfc_communication_options){.timeout_seconds = 120}, &st)))
        goto fail;
    int worker = tfc_strategy_worker_id(strategy), workers = tfc_strategy_num_workers(strategy);
    bool chief = tfc_strategy_is_chief(strategy);
    printf("worker %d of %d%s: %d replicas in sync, per-replica batch %d\n", worker, workers, chief ? " (chief)" : "",
           tfc_strategy_num_replicas_in_sync(strategy), GLOBAL_BATCH / tfc_strategy_num_replicas_in_sync(strategy));

    if (!tfc_datasets_fashion_mnist_load(NULL, &d, &st)) goto fail;
    if (!(x_train = preprocess(ctx, d.x_train, &st)) || !(x_test = preprocess(ctx, d.x_test, &st))) goto fail;

    /* variables and the compiled model belong to the strategy */
    if (!tfc_strategy_scope(strategy, &st)) goto fail;
    model = tfc_sequential(ctx, (tfc_layer *[]){
        tfc_layers_input_layer(.input_shape = {28, 28, 1}),
        tfc_layers_conv2d(.filters = 32, .kernel_size = {3, 3}, .activation = "relu"),
        tfc_layers_max_pooling2d(.pool_size = {2, 2}),
        tfc_layers_conv2d(.filters = 64, .kernel_size = {3, 3}, .activation = "relu"),
        tfc_layers_max_pooling2d(.pool_size = {2, 2}),
        tfc_layers_flatten(),
        tfc_layers_dropout(.rate = 0.5),
        tfc_layers_dense(.units = 10, .activation = "softmax"),
        NULL});
    bool compiled = model && tfc_compile(model, &st, .optimizer = tfc_optimizers_adam(),
                                         .loss_name = "sparse_categorical_crossentropy", .metrics = {"accuracy"});
    tfc_strategy_scope_end(strategy);
    if (!compiled) goto fail;

    /* batch_size is the GLOBAL batch: each worker trains on its share of every batch */
    tfc_fit_opts fit = {.batch_size = GLOBAL_BATCH, .epochs = epochs, .steps_per_epoch = steps,
                        .verbose = TFC_VERBOSE_EPOCH};
    tfc_collective *group = tfc_strategy_collective(strategy); /* NULL with one worker */
    double comm0 = 0, comm1 = 0;
    struct timespec t0, t1;
    if (group) tfc_collective_stats(group, NULL, &comm0);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (!tfc_model_fit(model, x_train, d.y_train, &fit, NULL, &st)) goto fail;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (group) tfc_collective_stats(group, NULL, &comm1);
    /* the share of training spent in collectives (waiting for the slower worker included) */
    double fit_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    int64_t steps_run = (int64_t)epochs * (steps ? steps : (tfc_tensor_dim(x_train, 0) + GLOBAL_BATCH - 1) / GLOBAL_BATCH);
    printf("worker %d: %.1f ms/step, of which communication %.1f ms (%.0f%%)\n", worker, fit_s * 1e3 / (double)steps_run,
           (comm1 - comm0) * 1e3 / (double)steps_run, fit_s > 0 ? 100 * (comm1 - comm0) / fit_s : 0.0);
    tfc_eval_opts eo = {.batch_size = GLOBAL_BATCH, .verbose = TFC_VERBOSE_SILENT, .steps = steps ? steps : 0};
    if (tfc_model_evaluate(model, x_test, d.y_test, &eo, test, 2, &st) < 0) goto fail;
    printf("worker %d: test loss %.4f, test accuracy %.4f\n", worker, test[0], test[1]);

    /* every worker saves (saving may involve collectives in general); only the chief's file stays */
    char path[64];
    if (chief) snprintf(path, sizeof path, "multi_worker_mirrored.weights.h5");
    else snprintf(path, sizeof path, "multi_worker_mirrored.worker%d.tmp.h5", worker);
    if (!tfc_model_save_weights(model, path, &st)) goto fail;
    if (!chief) unlink(path);
    else printf("Saved weights to %s\n", path);
    printf("worker %d done: test_accuracy=%.4f\n", worker, test[1]);

fail:
    if (st.code != TFC_OK) fprintf(stderr, "error: %s: %s\n", tfc_code_name(st.code), st.msg);
    tfc_model_free(model);
    tfc_tensor_unref(x_train);
    tfc_tensor_unref(x_test);
    tfc_datasets_free(&d);
    tfc_strategy_free(strategy);
    tfc_ctx_free(ctx);
    return st.code == TFC_OK ? 0 : 1;
}
