/* The profiler's cost on the demo CNN (examples/fashion_mnist.c's model and data): training epochs of
 * `steps` batches of 128 alternate between no profiler and a profiler at host_tracer_level 2 (every op
 * recorded, the trace saved and discarded); prints the median step time of each and the overhead.
 *
 * Usage: profiler_overhead [steps [rounds]]   (default 60 steps, 3 rounds) */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c11 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "tfc/keras.h"
#include "tfc/ops/array.h"
#include "tfc/ops/math.h"
#include "tfc/tfc.h"

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int steps = argc > 1 ? atoi(argv[1]) : 60, rounds = argc > 2 ? atoi(argv[2]) : 3;
    if (steps < 1 || rounds < 1 || rounds > 32) return fprintf(stderr, "usage: %s [steps [rounds]]\n", argv[0]), 2;
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 42, .has_seed = true}, &st);
    if (!ctx) return fprintf(stderr, "%s\n", st.msg), 1;
    tfc_dataset_arrays d = {0};
    tfc_model *model = NULL;
    tfc_tensor *x = NULL, *y = NULL;
    double off[32], on[32];
    int64_t n = (int64_t)steps * 128;
    if (!tfc_datasets_fashion_mnist_load(NULL, &d, &st)) goto fail;
    if (n > tfc_tensor_dim(d.x_train, 0)) n = tfc_tensor_dim(d.x_train, 0) / 128 * 128;
    if (!tfc_scope_begin(ctx, &st)) goto fail;
    {
        tfc_tensor *xs = tfc_slice(ctx, d.x_train, (int64_t[]){0, 0, 0}, (int64_t[]){n, 28, 28}, &st);
        tfc_tensor *xf = xs ? tfc_cast(ctx, xs, TFC_FLOAT, &st) : NULL;
        tfc_tensor *k = tfc_scalar_f32(1.0f / 255.0f, &st);
        tfc_tensor *xm = xf && k ? tfc_mul(ctx, xf, k, &st) : NULL;
        x = xm ? tfc_reshape(ctx, xm, (int64_t[]){n, 28, 28, 1}, 4, &st) : NULL;
        y = x ? tfc_slice(ctx, d.y_train, (int64_t[]){0}, (int64_t[]){n}, &st) : NULL;
        if (x) tfc_keep(ctx, x);
        if (y) tfc_keep(ctx, y);
        tfc_tensor_unref(k);
    }
    tfc_scope_end(ctx);
    if (!x || !y) goto fail;
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
    if (!model || !tfc_compile(model, &st, .optimizer = tfc_optimizers_adam(),
                               .loss_name = "sparse_categorical_crossentropy", .metrics = {"accuracy"}))
        goto fail;
    tfc_fit_opts fo = {.batch_size = 128, .epochs = 1, .verbose = TFC_VERBOSE_SILENT};
    if (!tfc_model_fit(model, x, y, &fo, NULL, &st)) goto fail; /* warm-up */
    for (int r = 0; r < rounds; r++) {
        double t0 = now_s();
        if (!tfc_model_fit(model, x, y, &fo, NULL, &st)) goto fail;
        off[r] = (now_s() - t0) / steps;
        if (!tfc_profiler_start("profiler_overhead_logs", &(tfc_profiler_options){.host_tracer_level = 2}, &st))
            goto fail;
        t0 = now_s();
        bool ok = tfc_model_fit(model, x, y, &fo, NULL, &st);
        on[r] = (now_s() - t0) / steps;
        tfc_status st2 = TFC_STATUS_INIT;
        tfc_profiler_stop(false, &st2);
        if (!ok) goto fail;
    }
    qsort(off, (size_t)rounds, sizeof *off, cmp_d);
    qsort(on, (size_t)rounds, sizeof *on, cmp_d);
    printf("steps=%d rounds=%d profiler_off_ms_per_step=%.3f profiler_on_ms_per_step=%.3f overhead=%.2f%%\n", steps,
           rounds, off[rounds / 2] * 1e3, on[rounds / 2] * 1e3, (on[rounds / 2] / off[rounds / 2] - 1) * 100);
    tfc_model_free(model);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_datasets_free(&d);
    tfc_ctx_free(ctx);
    return 0;
fail:
    fprintf(stderr, "error: %s\n", st.msg);
    return 1;
}
