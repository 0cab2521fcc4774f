/* Fashion-MNIST as sequences: each image's 28 rows are 28 time steps of 28 features, classified by an LSTM, as
 * Keras's recurrent-network tutorials do with MNIST:
 *
 *   (x_train, y_train), (x_test, y_test) = keras.datasets.fashion_mnist.load_data()
 *   x_train = x_train.astype("float32") / 255                                # [60000, 28, 28]
 *   model = keras.Sequential([keras.Input(shape=(28, 28)), layers.LSTM(128), layers.Dense(10, activation="softmax")])
 *   model.compile(loss="sparse_categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
 *   model.fit(x_train[:n], y_train[:n], batch_size=128, epochs=epochs)
 *   model.evaluate(x_test, y_test)
 *
 * Usage: sequence_lstm [epochs [train_samples [test_samples]]]   (defaults 8, 60000 and 10000; data from TFC_DATASETS_DIR or
 * /usr/share/datasets/fashion-mnist). The last line printed is test_accuracy=<4 decimals>.
 *
 * Measured (seed 42, 2 shared CPU cores, 66-140 s per epoch): 8 epochs on all 60000 images give test accuracy
 * 0.8749 (training accuracy 0.8876); 3 epochs on 6000 images give 0.7717, 2 epochs on 3000 tested on
 * the first 2000 test images (the test's size) 0.66. */
#include <stdio.h>
#include <stdlib.h>

#include "tfc/keras.h"
#include "tfc/ops/array.h"
#include "tfc/ops/math.h"
#include "tfc/tfc.h"

/* uint8 images [n, 28, 28] -> float32 in [0, 1] of the first `keep` images. */
static tfc_tensor *preprocess(tfc_ctx *ctx, const tfc_tensor *images, int64_t keep, tfc_status *st) {
    tfc_tensor *x = NULL, *k = NULL;
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tfc_tensor *f = tfc_cast(ctx, images, TFC_FLOAT, st);
    if (f && (k = tfc_scalar_f32(1.0f / 255.0f, st)) && (x = tfc_mul(ctx, f, k, st)) &&
        keep < tfc_tensor_dim(images, 0))
        x = tfc_slice(ctx, x, (int64_t[]){0, 0, 0}, (int64_t[]){keep, 28, 28}, st);
    if (x) tfc_keep(ctx, x);
    tfc_tensor_unref(k);
    tfc_scope_end(ctx);
    return x;
}

static tfc_tensor *first_labels(tfc_ctx *ctx, const tfc_tensor *y, int64_t keep, tfc_status *st) {
    if (keep >= tfc_tensor_dim(y, 0)) return tfc_tensor_ref((tfc_tensor *)y);
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tfc_tensor *s = tfc_slice(ctx, y, (int64_t[]){0}, (int64_t[]){keep}, st);
    if (s) tfc_keep(ctx, s);
    tfc_scope_end(ctx);
    return s;
}

int main(int argc, char **argv) {
    int epochs = argc > 1 ? atoi(argv[1]) : 8;
    int64_t n = argc > 2 ? atoll(argv[2]) : 60000, n_test = argc > 3 ? atoll(argv[3]) : 10000;
    if (epochs < 1 || n < 1 || n_test < 1)
        return fprintf(stderr, "usage: %s [epochs >= 1 [train_samples >= 1 [test_samples >= 1]]]\n", argv[0]), 2;
    tfc_tensor *y_test = NULL;
    tfc_status st = TFC_STATUS_INIT;
    int rc = 1;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 42, .has_seed = true}, &st);
    if (!ctx) return fprintf(stderr, "%s\n", st.msg), 1;
    tfc_dataset_arrays d = {0};
    tfc_tensor *x_train = NULL, *y_train = NULL, *x_test = NULL;
    tfc_model *model = NULL;
    tfc_history *history = NULL;
    double test[2] = {0, 0};
    if (!tfc_datasets_fashion_mnist_load(NULL, &d, &st)) goto done;
    if (!(x_train = preprocess(ctx, d.x_train, n, &st)) || !(y_train = first_labels(ctx, d.y_train, n, &st)) ||
        !(x_test = preprocess(ctx, d.x_test, n_test, &st)) || !(y_test = first_labels(ctx, d.y_test, n_test, &st)))
        goto done;
    printf("%lld training sequences of 28 steps x 28 features, %lld test sequences\n",
           (long long)tfc_tensor_dim(x_train, 0), (long long)tfc_tensor_dim(x_test, 0));
    model = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_input_layer(.input_shape = {28, 28}),
                                                tfc_layers_lstm(.units = 128),
                                                tfc_layers_dense(.units = 10, .activation = "softmax"), NULL});
    if (!model || !tfc_model_summary(model, stdout, &st)) goto done;
    if (!tfc_compile(model, &st, .optimizer = tfc_optimizers_adam(), .loss_name = "sparse_categorical_crossentropy",
                     .metrics = {"accuracy"}))
        goto done;
    tfc_fit_opts fit = {.batch_size = 128, .epochs = epochs};
    if (!tfc_model_fit(model, x_train, y_train, &fit, &history, &st)) goto done;
    if (tfc_model_evaluate(model, x_test, y_test, &(tfc_eval_opts){.batch_size = 256}, test, 2, &st) < 0) goto done;
    printf("Test loss: %.4f\ntest_accuracy=%.4f\n", test[0], test[1]);
    rc = 0;
done:
    if (rc) fprintf(stderr, "error: %s: %s\n", tfc_code_name(st.code), st.msg);
    tfc_history_free(history);
    tfc_model_free(model);
    tfc_tensor_unref(x_train);
    tfc_tensor_unref(y_train);
    tfc_tensor_unref(x_test);
    tfc_tensor_unref(y_test);
    tfc_datasets_free(&d);
    tfc_ctx_free(ctx);
    return rc;
}
