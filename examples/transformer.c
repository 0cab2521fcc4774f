/* A small Transformer encoder block trained end to end: Fashion-MNIST images as sequences of 28 row tokens
 * (28 features each), as Keras's "Text classification with Transformer" example builds its block:
 *
 *   inputs = keras.Input(shape=(28, 28))
 *   x = layers.Dense(64)(inputs)                                           # token embedding
 *   attn = layers.MultiHeadAttention(num_heads=4, key_dim=16)(x, x)
 *   x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, layers.Dropout(0.1)(attn)]))
 *   ff = layers.Dense(64)(layers.Dense(128, activation="relu")(x))
 *   x = layers.LayerNormalization(epsilon=1e-6)(layers.Add()([x, layers.Dropout(0.1)(ff)]))
 *   outputs = layers.Dense(10, activation="softmax")(layers.Flatten()(x))
 *   model.compile(loss="sparse_categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
 *   model.fit(x_train[:n], y_train[:n], batch_size=128, epochs=epochs); model.evaluate(x_test, y_test)
 *
 * Usage: transformer [epochs [train_samples]]   (defaults 5 and 60000; data from TFC_DATASETS_DIR or
 * /usr/share/datasets/fashion-mnist). The last line printed is test_accuracy=<4 decimals>.
 *
 * Measured (seed 42): 1 epoch on 6000 images (the test's size) gives test accuracy 0.7874. */
#include <stdio.h>
#include <stdlib.h>

#include "tfc/keras.h"
#include "tfc/ops/array.h"
#include "tfc/ops/math.h"
#include "tfc/tfc.h"

/* uint8 [n, 28, 28] -> float32 in [0, 1] of the first `keep` items (caller-owned). */
static tfc_tensor *scaled_head(tfc_ctx *ctx, const tfc_tensor *t, int64_t keep, bool scale, tfc_status *st) {
    tfc_tensor *x = NULL, *k = NULL;
    if (!tfc_scope_begin(ctx, st)) return NULL;
    int64_t begin[3] = {0, 0, 0}, size[3] = {keep < tfc_tensor_dim(t, 0) ? keep : -1, -1, -1};
    x = tfc_slice(ctx, t, begin, size, st);
    if (x && scale && (x = tfc_cast(ctx, x, TFC_FLOAT, st)) && (k = tfc_scalar_f32(1.0f / 255.0f, st)))
        x = tfc_mul(ctx, x, k, st);
    if (x) tfc_keep(ctx, x);
    tfc_tensor_unref(k);
    tfc_scope_end(ctx);
    return x;
}

static tfc_ktensor *apply1(tfc_layer *l, tfc_ktensor *x, tfc_status *st) { return x ? tfc_apply(l, st, x) : NULL; }

int main(int argc, char **argv) {
    int epochs = argc > 1 ? atoi(argv[1]) : 5;
    int64_t n = argc > 2 ? atoll(argv[2]) : 60000;
    if (epochs < 1 || n < 1) return fprintf(stderr, "usage: %s [epochs >= 1 [train_samples >= 1]]\n", argv[0]), 2;
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
    if (!(x_train = scaled_head(ctx, d.x_train, n, true, &st)) ||
        !(y_train = scaled_head(ctx, d.y_train, n, false, &st)) ||
        !(x_test = scaled_head(ctx, d.x_test, tfc_tensor_dim(d.x_test, 0), true, &st)))
        goto done;
    printf("%lld training sequences of 28 tokens x 28 features, %lld test sequences\n",
           (long long)tfc_tensor_dim(x_train, 0), (long long)tfc_tensor_dim(x_test, 0));

    tfc_ktensor *in = tfc_input(.shape = {28, 28});
    tfc_ktensor *x = apply1(tfc_layers_dense(.units = 64), in, &st);
    tfc_ktensor *attn = x ? tfc_apply(tfc_layers_multi_head_attention(.num_heads = 4, .key_dim = 16), &st, x, x) : NULL;
    attn = apply1(tfc_layers_dropout(.rate = 0.1), attn, &st);
    tfc_ktensor *sum1 = attn ? tfc_apply(tfc_layers_add(), &st, x, attn) : NULL;
    tfc_ktensor *x1 = apply1(tfc_layers_layer_normalization(.epsilon = 1e-6), sum1, &st);
    tfc_ktensor *ff = apply1(tfc_layers_dense(.units = 128, .activation = "relu"), x1, &st);
    ff = apply1(tfc_layers_dropout(.rate = 0.1), apply1(tfc_layers_dense(.units = 64), ff, &st), &st);
    tfc_ktensor *sum2 = ff ? tfc_apply(tfc_layers_add(), &st, x1, ff) : NULL;
    tfc_ktensor *x2 = apply1(tfc_layers_layer_normalization(.epsilon = 1e-6), sum2, &st);
    tfc_ktensor *out = apply1(tfc_layers_dense(.units = 10, .activation = "softmax"),
                              apply1(tfc_layers_flatten(), x2, &st), &st);
    if (!out || !(model = tfc_model_new(ctx, &in, 1, &out, 1, "transformer", &st))) goto done;
    if (!tfc_model_summary(model, stdout, &st)) goto done;
    if (!tfc_compile(model, &st, .optimizer = tfc_optimizers_adam(), .loss_name = "sparse_categorical_crossentropy",
                     .metrics = {"accuracy"}))
        goto done;
    tfc_fit_opts fit = {.batch_size = 128, .epochs = epochs};
    if (!tfc_model_fit(model, x_train, y_train, &fit, &history, &st)) goto done;
    if (tfc_model_evaluate(model, x_test, d.y_test, &(tfc_eval_opts){.batch_size = 256}, test, 2, &st) < 0) goto done;
    printf("Test loss: %.4f\ntest_accuracy=%.4f\n", test[0], test[1]);
    rc = 0;
done:
    if (rc) fprintf(stderr, "error: %s: %s\n", tfc_code_name(st.code), st.msg);
    tfc_history_free(history);
    tfc_model_free(model);
    tfc_tensor_unref(x_train);
    tfc_tensor_unref(y_train);
    tfc_tensor_unref(x_test);
    tfc_datasets_free(&d);
    tfc_ctx_free(ctx);
    return rc;
}
