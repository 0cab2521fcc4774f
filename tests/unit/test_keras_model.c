/* Keras models: Sequential, Functional, subclassed and nested construction, shapes, weights, calls, summary
 * text (expected strings are tf-keras 2.21's model.summary() output for the same models) and errors. */
#include <unistd.h>

#include "tfc/keras.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static const char *SUMMARY_SEQ =
    "Model: \"sequential\"\n"
    "_________________________________________________________________\n"
    " Layer (type)                Output Shape              Param #   \n"
    "=================================================================\n"
    " dense (Dense)               (None, 64)                1344      \n"
    "                                                                 \n"
    " dropout (Dropout)           (None, 64)                0         \n"
    "                                                                 \n"
    " dense_1 (Dense)             (None, 10)                650       \n"
    "                                                                 \n"
    "=================================================================\n"
    "Total params: 1994 (7.79 KB)\n"
    "Trainable params: 1994 (7.79 KB)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "_________________________________________________________________\n"
    ;
static const char *SUMMARY_SEQ2 =
    "Model: \"mnist_mlp\"\n"
    "_________________________________________________________________\n"
    " Layer (type)                Output Shape              Param #   \n"
    "=================================================================\n"
    " flatten (Flatten)           (None, 784)               0         \n"
    "                                                                 \n"
    " dense (Dense)               (None, 128)               100480    \n"
    "                                                                 \n"
    " a_rather_long_output_layer  (None, 10)                1290      \n"
    " _name (Dense)                                                   \n"
    "                                                                 \n"
    " activation (Activation)     (None, 10)                0         \n"
    "                                                                 \n"
    "=================================================================\n"
    "Total params: 101770 (397.54 KB)\n"
    "Trainable params: 101770 (397.54 KB)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "_________________________________________________________________\n"
    ;
static const char *SUMMARY_FUNC =
    "Model: \"model\"\n"
    "__________________________________________________________________________________________________\n"
    " Layer (type)                Output Shape                 Param #   Connected to                  \n"
    "==================================================================================================\n"
    " a (InputLayer)              [(None, 16)]                 0         []                            \n"
    "                                                                                                  \n"
    " dense (Dense)               (None, 8)                    136       ['a[0][0]']                   \n"
    "                                                                                                  \n"
    " b (InputLayer)              [(None, 8)]                  0         []                            \n"
    "                                                                                                  \n"
    " add (Add)                   (None, 8)                    0         ['dense[0][0]',               \n"
    "                                                                     'b[0][0]']                   \n"
    "                                                                                                  \n"
    " dense_1 (Dense)             (None, 3)                    27        ['add[0][0]',                 \n"
    "                                                                     'b[0][0]']                   \n"
    "                                                                                                  \n"
    "==================================================================================================\n"
    "Total params: 163 (652.00 Byte)\n"
    "Trainable params: 163 (652.00 Byte)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "__________________________________________________________________________________________________\n"
    ;
static const char *SUMMARY_NESTED =
    "Model: \"model\"\n"
    "_________________________________________________________________\n"
    " Layer (type)                Output Shape              Param #   \n"
    "=================================================================\n"
    " input_1 (InputLayer)        [(None, 3)]               0         \n"
    "                                                                 \n"
    " inner (Sequential)          (None, 4)                 16        \n"
    "                                                                 \n"
    " dense_1 (Dense)             (None, 2)                 10        \n"
    "                                                                 \n"
    "=================================================================\n"
    "Total params: 26 (104.00 Byte)\n"
    "Trainable params: 26 (104.00 Byte)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "_________________________________________________________________\n"
    ;
static const char *SUMMARY_SUB =
    "Model: \"m\"\n"
    "_________________________________________________________________\n"
    " Layer (type)                Output Shape              Param #   \n"
    "=================================================================\n"
    " dense (Dense)               multiple                  16        \n"
    "                                                                 \n"
    " dense_1 (Dense)             multiple                  10        \n"
    "                                                                 \n"
    " dense_2 (Dense)             multiple                  0 (unused)\n"
    "                                                                 \n"
    "=================================================================\n"
    "Total params: 26 (104.00 Byte)\n"
    "Trainable params: 26 (104.00 Byte)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "_________________________________________________________________\n"
    ;
static const char *SUMMARY_FUNC2 =
    "Model: \"two_branches\"\n"
    "__________________________________________________________________________________________________\n"
    " Layer (type)                Output Shape                 Param #   Connected to                  \n"
    "==================================================================================================\n"
    " tokens (InputLayer)         [(None, 10)]                 0         []                            \n"
    "                                                                                                  \n"
    " branch_a (Dense)            (None, 32)                   352       ['tokens[0][0]']              \n"
    "                                                                                                  \n"
    " branch_b (Dense)            (None, 32)                   352       ['tokens[0][0]']              \n"
    "                                                                                                  \n"
    " concatenate (Concatenate)   (None, 74)                   0         ['branch_a[0][0]',            \n"
    "                                                                     'branch_b[0][0]',            \n"
    "                                                                     'tokens[0][0]']              \n"
    "                                                                                                  \n"
    " out (Dense)                 (None, 1)                    75        ['concatenate[0][0]']         \n"
    "                                                                                                  \n"
    "==================================================================================================\n"
    "Total params: 779 (3.04 KB)\n"
    "Trainable params: 779 (3.04 KB)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "__________________________________________________________________________________________________\n"
    ;
static const char *SUMMARY_DEFERRED =
    "Model: \"sequential\"\n"
    "_________________________________________________________________\n"
    " Layer (type)                Output Shape              Param #   \n"
    "=================================================================\n"
    " dense (Dense)               (5, 4)                    16        \n"
    "                                                                 \n"
    " dense_1 (Dense)             (5, 2)                    10        \n"
    "                                                                 \n"
    "=================================================================\n"
    "Total params: 26 (104.00 Byte)\n"
    "Trainable params: 26 (104.00 Byte)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "_________________________________________________________________\n"
    ;
static const char *SUMMARY_CNN =
    "Model: \"sequential\"\n"
    "_________________________________________________________________\n"
    " Layer (type)                Output Shape              Param #   \n"
    "=================================================================\n"
    " conv2d (Conv2D)             (None, 26, 26, 32)        320       \n"
    "                                                                 \n"
    " max_pooling2d (MaxPooling2  (None, 13, 13, 32)        0         \n"
    " D)                                                              \n"
    "                                                                 \n"
    " conv2d_1 (Conv2D)           (None, 11, 11, 64)        18496     \n"
    "                                                                 \n"
    " max_pooling2d_1 (MaxPoolin  (None, 5, 5, 64)          0         \n"
    " g2D)                                                            \n"
    "                                                                 \n"
    " flatten (Flatten)           (None, 1600)              0         \n"
    "                                                                 \n"
    " dropout (Dropout)           (None, 1600)              0         \n"
    "                                                                 \n"
    " dense (Dense)               (None, 10)                16010     \n"
    "                                                                 \n"
    "=================================================================\n"
    "Total params: 34826 (136.04 KB)\n"
    "Trainable params: 34826 (136.04 KB)\n"
    "Non-trainable params: 0 (0.00 Byte)\n"
    "_________________________________________________________________\n"
    ;
static const char *SUMMARY_BN =
    "Model: \"sequential\"\n"
    "_________________________________________________________________\n"
    " Layer (type)                Output Shape              Param #   \n"
    "=================================================================\n"
    " dense (Dense)               (None, 4)                 16        \n"
    "                                                                 \n"
    " batch_normalization (Batch  (None, 4)                 16        \n"
    " Normalization)                                                  \n"
    "                                                                 \n"
    "=================================================================\n"
    "Total params: 32 (128.00 Byte)\n"
    "Trainable params: 24 (96.00 Byte)\n"
    "Non-trainable params: 8 (32.00 Byte)\n"
    "_________________________________________________________________\n"
    ;

/* model.summary() into a string (caller frees). */
static char *summary_text(tfc_model *m, tfc_status *st) {
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    bool ok = tfc_model_summary(m, f, st);
    fclose(f);
    if (!ok) {
        free(buf);
        return NULL;
    }
    return buf;
}

static void check_summary(tfc_model *m, const char *expected) {
    tfc_status st = TFC_STATUS_INIT;
    char *s = summary_text(m, &st);
    CHECK_OK(&st);
    REQUIRE(s);
    if (strcmp(s, expected) != 0) {
        tfc_test_failures++;
        fprintf(stderr, "summary mismatch:\n--- got ---\n%s--- expected ---\n%s", s, expected);
    }
    tfc_test_checks++;
    free(s);
}

static tfc_tensor *make(const float *v, int64_t rows, int64_t cols) {
    tfc_status st = TFC_STATUS_INIT;
    return tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){rows, cols}, 2, v, (size_t)(rows * cols) * sizeof(float), &st);
}

/* x @ kernel + bias of a Dense layer, computed on the host. */
static void dense_ref(tfc_layer *d, const float *x, int64_t rows, int64_t in, int64_t units, float *y) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *w[2];
    REQUIRE(tfc_layer_get_weights(d, w, 2, &st) == 2);
    const float *k = tfc_tensor_data(w[0]), *b = tfc_tensor_data(w[1]);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t u = 0; u < units; u++) {
            double s = b[u];
            for (int64_t i = 0; i < in; i++) s += (double)x[r * in + i] * k[i * units + u];
            y[r * units + u] = (float)s;
        }
    tfc_tensor_unref(w[0]);
    tfc_tensor_unref(w[1]);
}

static void test_sequential(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){
        tfc_layers_dense(.units = 64, .activation = "relu", .input_shape = {20}),
        tfc_layers_dropout(.rate = 0.5),
        tfc_layers_dense(.units = 10),
        NULL});
    REQUIRE(m);
    CHECK(!strcmp(tfc_layer_name(tfc_model_as_layer(m)), "sequential"));
    CHECK(!strcmp(tfc_layer_class_name(tfc_model_as_layer(m)), "Sequential"));
    tfc_layer *layers[8];
    CHECK(tfc_model_layers(m, layers, 8) == 3); /* the InputLayer is not listed */
    CHECK(!strcmp(tfc_layer_name(layers[0]), "dense") && !strcmp(tfc_layer_name(layers[2]), "dense_1"));
    CHECK(tfc_model_get_layer(m, "dropout") == layers[1]);
    CHECK(tfc_model_get_layer(m, "nope") == NULL);
    CHECK(tfc_layer_built(layers[0]) && tfc_layer_built(layers[2])); /* built when added */
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 1994);
    check_summary(m, SUMMARY_SEQ);
    /* weights in Keras order: kernel, bias of each Dense */
    tfc_tensor *w[8];
    CHECK(tfc_model_get_weights(m, w, 8, &st) == 4);
    CHECK(tfc_tensor_dim(w[0], 0) == 20 && tfc_tensor_dim(w[0], 1) == 64 && tfc_tensor_dim(w[1], 0) == 64);
    CHECK(tfc_tensor_dim(w[2], 0) == 64 && tfc_tensor_dim(w[3], 0) == 10);
    /* set_weights round trip with changed values */
    float *k0 = tfc_tensor_mutable_data(w[3]);
    for (int i = 0; i < 10; i++) k0[i] = (float)i;
    CHECK(tfc_model_set_weights(m, w, 4, &st));
    CHECK_OK(&st);
    tfc_tensor *w2[8];
    CHECK(tfc_model_get_weights(m, w2, 8, &st) == 4);
    CHECK_NEAR(tfc_tensor_get_f64(w2[3], 7), 7.0, 0);
    CHECK(!tfc_model_set_weights(m, w, 3, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    for (int i = 0; i < 4; i++) tfc_tensor_unref(w[i]), tfc_tensor_unref(w2[i]);
    /* a call: training=false makes Dropout the identity */
    float xv[2 * 20];
    for (int i = 0; i < 40; i++) xv[i] = (float)(i % 7) * 0.1f - 0.3f;
    tfc_tensor *x = make(xv, 2, 20);
    tfc_tensor *y = tfc_model_call(m, x, false, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(tfc_tensor_dim(y, 0) == 2 && tfc_tensor_dim(y, 1) == 10);
    float h[2 * 64], ref[2 * 10];
    dense_ref(layers[0], xv, 2, 20, 64, h);
    for (int i = 0; i < 128; i++) h[i] = h[i] > 0 ? h[i] : 0;
    dense_ref(layers[2], h, 2, 64, 10, ref);
    for (int i = 0; i < 20; i++) CHECK_NEAR(tfc_tensor_get_f64(y, i), ref[i], 1e-5);
    tfc_tensor_unref(y);
    /* wrong input shape: error naming the model and shapes */
    tfc_tensor *bad = make(xv, 4, 10);
    CHECK(!tfc_model_call(m, bad, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "sequential") && strstr(st.msg, "(4, 10)"));
    tfc_tensor_unref(bad);
    tfc_tensor_unref(x);
    /* config: the InputLayer first, then the layers */
    char *cfg = tfc_layer_get_config(tfc_model_as_layer(m), &st);
    REQUIRE(cfg);
    CHECK(!strncmp(cfg, "{\"name\":\"sequential\",\"layers\":[{\"class_name\":\"InputLayer\",\"config\":{\"batch_input_shape\":[null,20]", 94));
    CHECK(strstr(cfg, "\"name\":\"dense_input\"") != NULL);
    tfc_free(cfg);
    tfc_model_free(m);

    /* Flatten, a long name that wraps, a named model */
    tfc_keras_clear_session();
    m = tfc_sequential_named(ctx, (tfc_layer *[]){
        tfc_layers_flatten(.input_shape = {28, 28}),
        tfc_layers_dense(.units = 128, .activation = "relu"),
        tfc_layers_dense(.units = 10, .name = "a_rather_long_output_layer_name"),
        tfc_layers_activation(.activation = "softmax"),
        NULL}, "mnist_mlp");
    REQUIRE(m);
    check_summary(m, SUMMARY_SEQ2);
    tfc_model_free(m);
}

/* Keras's MNIST convnet example (34,826 parameters) and BatchNormalization's non-trainable weights */
static void test_cnn_summary(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){
        tfc_layers_conv2d(.filters = 32, .kernel_size = {3, 3}, .activation = "relu", .input_shape = {28, 28, 1}),
        tfc_layers_max_pooling2d(),
        tfc_layers_conv2d(.filters = 64, .kernel_size = {3, 3}, .activation = "relu"),
        tfc_layers_max_pooling2d(),
        tfc_layers_flatten(),
        tfc_layers_dropout(.rate = 0.5),
        tfc_layers_dense(.units = 10, .activation = "softmax"),
        NULL});
    REQUIRE(m);
    check_summary(m, SUMMARY_CNN);
    float img[2 * 28 * 28];
    for (int i = 0; i < 2 * 28 * 28; i++) img[i] = (float)(i % 29) / 29.0f;
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 28, 28, 1}, 4, img, sizeof img, &st);
    tfc_tensor *y = tfc_model_call(m, x, false, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(tfc_tensor_dim(y, 0) == 2 && tfc_tensor_dim(y, 1) == 10);
    CHECK_NEAR(tfc_tensor_get_f64(y, 0) + tfc_tensor_get_f64(y, 1) + tfc_tensor_get_f64(y, 2) + tfc_tensor_get_f64(y, 3) +
                   tfc_tensor_get_f64(y, 4) + tfc_tensor_get_f64(y, 5) + tfc_tensor_get_f64(y, 6) +
                   tfc_tensor_get_f64(y, 7) + tfc_tensor_get_f64(y, 8) + tfc_tensor_get_f64(y, 9),
               1.0, 1e-5);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_model_free(m);
    tfc_keras_clear_session();
    m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 4, .input_shape = {3}),
                                            tfc_layers_batch_normalization(), NULL});
    REQUIRE(m);
    check_summary(m, SUMMARY_BN);
    tfc_model_free(m);
}

static void test_sequential_add_and_deferred(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    /* no input shape: built on the first call, with that call's batch size in the shapes (as tf-keras) */
    tfc_model *m = tfc_sequential(ctx, NULL);
    REQUIRE(m);
    CHECK(tfc_model_add(m, tfc_layers_dense(.units = 4), &st));
    CHECK(tfc_model_add(m, tfc_layers_dense(.units = 2), &st));
    CHECK(!tfc_model_summary(m, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "has not yet been built") != NULL);
    float xv[15] = {0};
    tfc_tensor *x = make(xv, 5, 3);
    tfc_tensor *y = tfc_model_call(m, x, false, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(tfc_tensor_dim(y, 1) == 2);
    tfc_tensor_unref(y);
    check_summary(m, SUMMARY_DEFERRED);
    /* another batch size is fine, another feature size is not */
    float xv2[21] = {0};
    tfc_tensor *x7 = make(xv2, 7, 3);
    CHECK((y = tfc_model_call(m, x7, false, &st)) != NULL);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x7);
    tfc_tensor *x4 = make(xv2, 3, 7);
    CHECK(!tfc_model_call(m, x4, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(x4);
    tfc_tensor_unref(x);
    /* once built, add shape-checks the new layer against the model's output */
    CHECK(tfc_model_add(m, tfc_layers_dense(.units = 3), &st));
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 16 + 10 + 9);
    CHECK(!tfc_model_add(m, tfc_layers_dense(.units = 3, .name = "dense"), &st)); /* duplicate name */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "unique names") != NULL);
    tfc_model_free(m);

    /* build(): explicit input shape */
    m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 4), NULL});
    CHECK(tfc_model_build(m, &(tfc_shape){.rank = 2, .dims = {-1, 6}}, &st));
    CHECK_OK(&st);
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 28);
    tfc_model_free(m);

    /* an InputLayer first */
    m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_input_layer(.input_shape = {6}, .name = "features"),
                                            tfc_layers_dense(.units = 2), NULL});
    tfc_layer *layers[4];
    CHECK(tfc_model_layers(m, layers, 4) == 1);
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 14);
    tfc_model_free(m);

    /* an incompatible layer in the list: every later call reports it */
    m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_flatten(.input_shape = {4, 4}),
                                            tfc_layers_reshape(.target_shape = {5, 5}), /* 16 != 25 */
                                            tfc_layers_dense(.units = 2), NULL});
    REQUIRE(m);
    CHECK(!tfc_model_summary(m, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_compile(m, &st, .optimizer_name = "sgd", .loss_name = "mse"));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_model_free(m);
}

static void test_functional(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_ktensor *a = tfc_input(.shape = {16}, .name = "a"), *b = tfc_input(.shape = {8}, .name = "b");
    tfc_ktensor *x = tfc_apply(tfc_layers_dense(.units = 8), &st, a);
    tfc_ktensor *s = tfc_apply(tfc_layers_add(), &st, x, b);
    tfc_layer *shared = tfc_layers_dense(.units = 3);
    tfc_ktensor *o1 = tfc_apply(shared, &st, s), *o2 = tfc_apply(shared, &st, b);
    CHECK_OK(&st);
    tfc_model *m = tfc_model_new(ctx, (tfc_ktensor *[]){a, b}, 2, (tfc_ktensor *[]){o1, o2}, 2, NULL, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    CHECK(!strcmp(tfc_layer_name(tfc_model_as_layer(m)), "model"));
    CHECK(!strcmp(tfc_layer_class_name(tfc_model_as_layer(m)), "Functional"));
    tfc_layer *layers[8];
    CHECK(tfc_model_layers(m, layers, 8) == 5);
    const char *order[] = {"a", "dense", "b", "add", "dense_1"};
    for (int i = 0; i < 5; i++) CHECK(!strcmp(tfc_layer_name(layers[i]), order[i]));
    check_summary(m, SUMMARY_FUNC);
    /* a shared layer: one set of weights, two results */
    float av[2 * 16], bv[2 * 8];
    for (int i = 0; i < 32; i++) av[i] = (float)i / 32.0f - 0.4f;
    for (int i = 0; i < 16; i++) bv[i] = (float)(i % 5) * 0.2f;
    tfc_tensor *ta = make(av, 2, 16), *tb = make(bv, 2, 8), *y[2];
    CHECK(tfc_model_call_n(m, (tfc_tensor *[]){ta, tb}, 2, y, 2, false, &st));
    CHECK_OK(&st);
    float h[16], sum[16], r1[6], r2[6];
    dense_ref(layers[1], av, 2, 16, 8, h);
    for (int i = 0; i < 16; i++) sum[i] = h[i] + bv[i];
    dense_ref(layers[4], sum, 2, 8, 3, r1);
    dense_ref(layers[4], bv, 2, 8, 3, r2);
    for (int i = 0; i < 6; i++) {
        CHECK_NEAR(tfc_tensor_get_f64(y[0], i), r1[i], 1e-5);
        CHECK_NEAR(tfc_tensor_get_f64(y[1], i), r2[i], 1e-5);
    }
    tfc_tensor_unref(y[0]);
    tfc_tensor_unref(y[1]);
    /* predict on both outputs */
    tfc_tensor *p[2];
    CHECK(tfc_model_predict_n(m, (tfc_tensor *[]){ta, tb}, 2, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, p, 2, &st));
    CHECK_OK(&st);
    CHECK_NEAR(tfc_tensor_get_f64(p[1], 5), r2[5], 1e-5);
    tfc_tensor_unref(p[0]);
    tfc_tensor_unref(p[1]);
    /* one input missing */
    CHECK(!tfc_model_call_n(m, &ta, 1, y, 2, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* config: shared layer with two inbound nodes; renumbered node indices */
    char *cfg = tfc_layer_get_config(tfc_model_as_layer(m), &st);
    REQUIRE(cfg);
    CHECK(strstr(cfg, "\"inbound_nodes\":[[[\"add\",0,0,{}]],[[\"b\",0,0,{}]]]") != NULL);
    CHECK(strstr(cfg, "\"input_layers\":[[\"a\",0,0],[\"b\",0,0]],\"output_layers\":[[\"dense_1\",0,0],[\"dense_1\",1,0]]") != NULL);
    tfc_free(cfg);
    tfc_tensor_unref(ta);
    tfc_tensor_unref(tb);
    tfc_model_free(m);

    /* branches and a Concatenate */
    tfc_keras_clear_session();
    tfc_ktensor *i = tfc_input(.shape = {10}, .name = "tokens");
    tfc_ktensor *ba = tfc_apply(tfc_layers_dense(.units = 32, .activation = "relu", .name = "branch_a"), &st, i);
    tfc_ktensor *bb = tfc_apply(tfc_layers_dense(.units = 32, .activation = "relu", .name = "branch_b"), &st, i);
    tfc_ktensor *c = tfc_apply(tfc_layers_concatenate(), &st, ba, bb, i);
    tfc_ktensor *o = tfc_apply(tfc_layers_dense(.units = 1, .activation = "sigmoid", .name = "out"), &st, c);
    m = tfc_model_new(ctx, &i, 1, &o, 1, "two_branches", &st);
    REQUIRE(m);
    check_summary(m, SUMMARY_FUNC2);
    tfc_model_free(m);
}

static void test_functional_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    /* an output that needs an input the model is not given */
    tfc_ktensor *a = tfc_input(.shape = {4}, .name = "a"), *b = tfc_input(.shape = {4}, .name = "b");
    tfc_ktensor *s = tfc_apply(tfc_layers_add(), &st, a, b);
    tfc_ktensor *o = tfc_apply(tfc_layers_dense(.units = 2), &st, s);
    CHECK(!tfc_model_new(ctx, &a, 1, &o, 1, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Graph disconnected") && strstr(st.msg, "\"add\"") && strstr(st.msg, "'b'"));
    /* (the failed construction released the graph's layers: ASan checks there is no leak) */

    /* inputs must be Input tensors */
    tfc_ktensor *i = tfc_input(.shape = {4});
    tfc_ktensor *h = tfc_apply(tfc_layers_dense(.units = 3), &st, i);
    tfc_ktensor *o2 = tfc_apply(tfc_layers_dense(.units = 2), &st, h);
    CHECK(!tfc_model_new(ctx, &h, 1, &o2, 1, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "tf.keras.Input") != NULL);

    /* duplicate layer names */
    i = tfc_input(.shape = {4});
    h = tfc_apply(tfc_layers_dense(.units = 3, .name = "twin"), &st, i);
    o2 = tfc_apply(tfc_layers_dense(.units = 2, .name = "twin"), &st, h);
    CHECK(!tfc_model_new(ctx, &i, 1, &o2, 1, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "\"twin\" is used 2 times") != NULL);

    /* incompatible shapes are caught when the layer is applied */
    i = tfc_input(.shape = {4});
    tfc_ktensor *j = tfc_input(.shape = {5});
    tfc_layer *add = tfc_layers_add();
    CHECK(!tfc_apply(add, &st, i, j));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_layer_unref(add); /* never taken by a model */
    tfc_layer_unref(tfc_ktensor_layer(i));
    tfc_layer_unref(tfc_ktensor_layer(j));
}

static void test_nested(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_model *inner = tfc_sequential_named(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 4, .input_shape = {3}), NULL},
                                            "inner");
    tfc_ktensor *i = tfc_input(.shape = {3});
    tfc_ktensor *h = tfc_apply(tfc_model_as_layer(inner), &st, i);
    CHECK_OK(&st);
    REQUIRE(h);
    CHECK(tfc_ktensor_shape(h)->dims[1] == 4);
    tfc_ktensor *o = tfc_apply(tfc_layers_dense(.units = 2), &st, h);
    tfc_model *m = tfc_model_new(ctx, &i, 1, &o, 1, NULL, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    check_summary(m, SUMMARY_NESTED);
    /* the nested model's weights come first, in its own order */
    tfc_variable *v[8];
    CHECK(tfc_layer_weights(tfc_model_as_layer(m), v, 8) == 4);
    CHECK(!strcmp(tfc_variable_name(v[0]), "dense/kernel:0"));
    CHECK(!strcmp(tfc_variable_name(v[2]), "dense_1/kernel:0"));
    /* calling the outer model runs the inner one */
    float xv[6] = {1, 2, 3, -1, 0.5f, 0};
    tfc_tensor *x = make(xv, 2, 3);
    tfc_tensor *y = tfc_model_call(m, x, false, &st);
    REQUIRE(y);
    tfc_tensor *hi = tfc_model_call(inner, x, false, &st);
    REQUIRE(hi);
    float hv[8], ref[4];
    for (int k = 0; k < 8; k++) hv[k] = (float)tfc_tensor_get_f64(hi, k);
    tfc_layer *ls[4];
    tfc_model_layers(m, ls, 4);
    dense_ref(ls[2], hv, 2, 4, 2, ref);
    for (int k = 0; k < 4; k++) CHECK_NEAR(tfc_tensor_get_f64(y, k), ref[k], 1e-5);
    tfc_tensor_unref(y);
    tfc_tensor_unref(hi);
    tfc_tensor_unref(x);
    /* the inner model is shared: freeing the creator's reference first is fine */
    tfc_model_free(inner);
    tfc_model_free(m);

    /* a Sequential without an input shape nested in a Functional model is built by the symbolic call, and a
     * model called twice in one graph is two nodes with shared weights */
    tfc_keras_clear_session();
    inner = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 4), NULL});
    tfc_ktensor *in1 = tfc_input(.shape = {3}), *in2 = tfc_input(.shape = {3});
    tfc_ktensor *e1 = tfc_apply(tfc_model_as_layer(inner), &st, in1);
    tfc_ktensor *e2 = tfc_apply(tfc_model_as_layer(inner), &st, in2);
    CHECK_OK(&st);
    tfc_ktensor *sum = tfc_apply(tfc_layers_add(), &st, e1, e2);
    m = tfc_model_new(ctx, (tfc_ktensor *[]){in1, in2}, 2, &sum, 1, "siamese", &st);
    CHECK_OK(&st);
    REQUIRE(m);
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 16);
    float u[3] = {1, 0, 0}, u2[3] = {0, 1, 0};
    tfc_tensor *tu = make(u, 1, 3), *tv = make(u2, 1, 3), *out = NULL;
    CHECK(tfc_model_call_n(m, (tfc_tensor *[]){tu, tv}, 2, &out, 1, false, &st));
    REQUIRE(out);
    tfc_tensor *w[2];
    REQUIRE(tfc_model_get_weights(inner, w, 2, &st) == 2);
    for (int k = 0; k < 4; k++) /* kernel rows 0 and 1 plus twice the bias */
        CHECK_NEAR(tfc_tensor_get_f64(out, k),
                   tfc_tensor_get_f64(w[0], k) + tfc_tensor_get_f64(w[0], 4 + k) + 2 * tfc_tensor_get_f64(w[1], k), 1e-6);
    tfc_tensor_unref(w[0]);
    tfc_tensor_unref(w[1]);
    tfc_tensor_unref(out);
    tfc_tensor_unref(tu);
    tfc_tensor_unref(tv);
    tfc_model_free(m);
    tfc_model_free(inner);

    /* a Sequential inside a Sequential */
    inner = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 5, .input_shape = {2}), NULL});
    m = tfc_sequential(ctx, (tfc_layer *[]){tfc_model_as_layer(inner), tfc_layers_dense(.units = 1), NULL});
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 15 + 6);
    float xs[4] = {1, 2, 3, 4};
    x = make(xs, 2, 2);
    y = tfc_model_call(m, x, false, &st);
    CHECK_OK(&st);
    CHECK(y && tfc_tensor_dim(y, 1) == 1);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_model_free(m);
    tfc_model_free(inner);
}

/* A subclassed model: two tracked Dense layers and an unused one. */
typedef struct {
    tfc_layer *d1, *d2, *unused;
} sub_data;

static bool sub_call(tfc_layer *l, tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     bool training, tfc_status *st) {
    sub_data *d = tfc_model_subclass_data(tfc_layer_as_model(l));
    tfc_tensor *h = tfc_layer_call1(d->d1, c, in[0], training, st);
    return h && (out[0] = tfc_layer_call1(d->d2, c, h, training, st)) != NULL;
}

static const tfc_layer_class sub_class = {.class_name = "M", .size = sizeof(sub_data), .call = sub_call};

static void test_subclassed(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_model *m = tfc_model_subclass_new(ctx, &sub_class, NULL);
    REQUIRE(m);
    CHECK(!strcmp(tfc_layer_name(tfc_model_as_layer(m)), "m"));
    sub_data *d = tfc_model_subclass_data(m);
    REQUIRE(d);
    d->d1 = tfc_model_track(m, tfc_layers_dense(.units = 4));
    d->d2 = tfc_model_track(m, tfc_layers_dense(.units = 2));
    d->unused = tfc_model_track(m, tfc_layers_dense(.units = 7));
    CHECK(!tfc_model_summary(m, NULL, &st)); /* not built yet */
    float xv[15] = {0};
    tfc_tensor *x = make(xv, 5, 3);
    tfc_tensor *y = tfc_model_call(m, x, false, &st);
    CHECK_OK(&st);
    CHECK(y && tfc_tensor_dim(y, 0) == 5 && tfc_tensor_dim(y, 1) == 2);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    check_summary(m, SUMMARY_SUB);
    CHECK(tfc_model_get_weights(m, NULL, 0, &st) == 4);
    tfc_model_free(m);
}

/* Sequential and Functional models do not autocast (Keras: autocast=False): float64 data through float64 layers
 * keeps its float64 precision, with an Input of float64, with a deferred Sequential (its Input takes the data's
 * dtype) and in a Functional model; the gradient with respect to the input is float64-exact too. */
static void test_float64_models(void) {
    tfc_status st = TFC_STATUS_INIT;
    const double xv[2] = {1.0 + 1e-12, 3.0}, kv[2] = {1.0 + 1e-12, 0.5};
    tfc_tensor *x = tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){1, 2}, 2, xv, sizeof xv, &st);
    tfc_tensor *kt = tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){2, 1}, 2, kv, sizeof kv, &st);
    REQUIRE(x && kt);
    const double want = xv[0] * kv[0] + xv[1] * kv[1];
    for (int variant = 0; variant < 3; variant++) {
        tfc_layer *d = tfc_layers_dense(.units = 1, .dtype = TFC_DOUBLE, .use_bias = TFC_NO);
        tfc_model *m = NULL;
        if (variant == 0) {
            m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_input_layer(.input_shape = {2}, .dtype = TFC_DOUBLE), d,
                                                    NULL});
        } else if (variant == 1) {
            m = tfc_sequential(ctx, (tfc_layer *[]){d, NULL});
        } else {
            tfc_ktensor *in = tfc_input(.shape = {2}, .dtype = TFC_DOUBLE);
            tfc_ktensor *o = tfc_layer_apply(d, &in, 1, &st);
            m = tfc_model_new(ctx, &in, 1, &o, 1, NULL, &st);
        }
        REQUIRE(m);
        tfc_tensor *y = tfc_model_call(m, x, false, &st); /* builds */
        CHECK_OK(&st);
        tfc_tensor_unref(y);
        tfc_variable *k = NULL;
        REQUIRE(tfc_layer_weights(d, &k, 1) == 1);
        CHECK(tfc_variable_assign(ctx, k, kt, &st));
        tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
        REQUIRE(tape);
        tfc_tape_watch(tape, x);
        y = tfc_model_call(m, x, false, &st);
        REQUIRE(y);
        tfc_tensor *g = NULL;
        CHECK(tfc_tape_gradient(tape, y, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
        tfc_tape_free(tape);
        CHECK(tfc_tensor_dtype(y) == TFC_DOUBLE && tfc_tensor_get_f64(y, 0) == want);
        CHECK(g && tfc_tensor_get_f64(g, 0) == kv[0] && tfc_tensor_get_f64(g, 1) == kv[1]);
        if (tfc_tensor_get_f64(y, 0) != want) fprintf(stderr, "  variant %d: %.17g, want %.17g\n", variant, tfc_tensor_get_f64(y, 0), want);
        tfc_tensor_unref(y), tfc_tensor_unref(g);
        tfc_model_free(m);
    }
    tfc_tensor_unref(x), tfc_tensor_unref(kt);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 1, .has_seed = true}, &st);
    REQUIRE(ctx);
    test_sequential();
    test_cnn_summary();
    test_sequential_add_and_deferred();
    test_functional();
    test_functional_errors();
    test_nested();
    test_subclassed();
    test_float64_models();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
