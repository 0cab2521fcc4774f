/* Keras layer base and core layers: names, configs, weights, calls against hand-computed values, errors,
 * symbolic shapes and ownership (run under the ASan build for leaks). */
#include <cjson/cJSON.h>

#include "keras/keras_internal.h"
#include "tfc/keras.h"
#include "tfc_test.h"
#include "tfc/ops/random.h"

static tfc_ctx *ctx;

static tfc_tensor *tensor_f32(const float *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, rank, v, (size_t)n * sizeof(float), &st);
    REQUIRE(t);
    return t;
}
#define T32(dims, ...) tensor_f32((const float[]){__VA_ARGS__}, (const int64_t[])dims, sizeof((const int64_t[])dims) / sizeof(int64_t))
#define DIMS(...) {__VA_ARGS__}

static float at(const tfc_tensor *t, int64_t i) { return ((const float *)tfc_tensor_data(t))[i]; }

static bool shape_is(const tfc_shape *s, int rank, const int64_t *dims) {
    if (s->rank != rank) return false;
    for (int i = 0; i < rank; i++)
        if (s->dims[i] != dims[i]) return false;
    return true;
}
#define SHAPE_IS(s, ...) shape_is((s), sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t), (const int64_t[]){__VA_ARGS__})

static cJSON *config_of(tfc_layer *l) {
    tfc_status st = TFC_STATUS_INIT;
    char *s = tfc_layer_get_config(l, &st);
    CHECK_OK(&st);
    REQUIRE(s);
    cJSON *c = cJSON_Parse(s);
    tfc_free(s);
    REQUIRE(c);
    return c;
}

static double jnum(const cJSON *c, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}
static const char *jstr(const cJSON *c, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(c, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}
static bool jnull(const cJSON *c, const char *k) { return cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(c, k)); }
static bool jtrue(const cJSON *c, const char *k) { return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, k)); }
static bool jfalse(const cJSON *c, const char *k) { return cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, k)); }

/* Sets the layer's weights from float arrays (in tfc_layer_weights order). */
static void set_weights(tfc_layer *l, int n, tfc_tensor **w) {
    tfc_status st = TFC_STATUS_INIT;
    CHECK(tfc_layer_set_weights(l, ctx, w, n, &st));
    CHECK_OK(&st);
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
}

/* ---- names ---- */
static void test_names(void) {
    char buf[64];
    const char *cases[][2] = {{"Dense", "dense"},
                              {"Conv2D", "conv2d"},
                              {"MaxPooling2D", "max_pooling2d"},
                              {"BatchNormalization", "batch_normalization"},
                              {"ReLU", "re_lu"},
                              {"LeakyReLU", "leaky_re_lu"},
                              {"GlobalAveragePooling2D", "global_average_pooling2d"},
                              {"QDense", "q_dense"},
                              {"LSTM", "lstm"},
                              {"_Private", "private__private"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tfc_keras_snake_case(cases[i][0], buf, sizeof buf);
        CHECK(!strcmp(buf, cases[i][1]));
        if (strcmp(buf, cases[i][1])) fprintf(stderr, "  snake_case(%s) = %s\n", cases[i][0], buf);
    }
    tfc_keras_clear_session();
    tfc_layer *a = tfc_layers_dense(.units = 1), *b = tfc_layers_dense(.units = 1),
              *c = tfc_layers_dense(.units = 1, .name = "mine"), *d = tfc_layers_dense(.units = 1);
    tfc_layer *r = tfc_layers_relu(), *lr = tfc_layers_leaky_relu(), *i1 = tfc_layers_input_layer(.input_shape = {3}),
              *i2 = tfc_layers_input_layer(.input_shape = {3});
    CHECK(!strcmp(tfc_layer_name(a), "dense"));
    CHECK(!strcmp(tfc_layer_name(b), "dense_1"));
    CHECK(!strcmp(tfc_layer_name(c), "mine"));
    CHECK(!strcmp(tfc_layer_name(d), "dense_2"));
    CHECK(!strcmp(tfc_layer_name(r), "re_lu"));
    CHECK(!strcmp(tfc_layer_name(lr), "leaky_re_lu"));
    CHECK(!strcmp(tfc_layer_name(i1), "input_1"));
    CHECK(!strcmp(tfc_layer_name(i2), "input_2"));
    CHECK(!strcmp(tfc_layer_class_name(lr), "LeakyReLU"));
    tfc_layer *all[] = {a, b, c, d, r, lr, i1, i2};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfc_layer_unref(all[i]);
    tfc_keras_clear_session();
    a = tfc_layers_dense(.units = 1);
    CHECK(!strcmp(tfc_layer_name(a), "dense"));
    tfc_layer_unref(a);
    /* Keras-style shape text */
    tfc_shape s = {.rank = 4, .dims = {-1, 28, 28, 1}}, v = {.rank = 1, .dims = {3}}, z = {.rank = 0};
    CHECK(!strcmp(TFC_KSHP(&s), "(None, 28, 28, 1)"));
    CHECK(!strcmp(TFC_KSHP(&v), "(3,)"));
    CHECK(!strcmp(TFC_KSHP(&z), "()"));
}

/* ---- configs ---- */
static void test_configs(void) {
    tfc_keras_clear_session();
    tfc_layer *d = tfc_layers_dense(.units = 4);
    cJSON *c = config_of(d);
    CHECK(!strcmp(jstr(c, "name"), "dense"));
    CHECK(jtrue(c, "trainable"));
    CHECK(!strcmp(jstr(c, "dtype"), "float32"));
    CHECK(!cJSON_GetObjectItem(c, "batch_input_shape"));
    CHECK(jnum(c, "units") == 4);
    CHECK(!strcmp(jstr(c, "activation"), "linear"));
    CHECK(jtrue(c, "use_bias"));
    const cJSON *ki = cJSON_GetObjectItem(c, "kernel_initializer");
    CHECK(!strcmp(jstr(ki, "class_name"), "GlorotUniform"));
    CHECK(jnull(cJSON_GetObjectItem(ki, "config"), "seed"));
    const cJSON *bi = cJSON_GetObjectItem(c, "bias_initializer");
    CHECK(!strcmp(jstr(bi, "class_name"), "Zeros"));
    CHECK(cJSON_GetArraySize(cJSON_GetObjectItem(bi, "config")) == 0);
    CHECK(jnull(c, "kernel_regularizer") && jnull(c, "bias_regularizer") && jnull(c, "activity_regularizer"));
    CHECK(jnull(c, "kernel_constraint") && jnull(c, "bias_constraint"));
    /* key order as tf_keras: name, trainable, dtype, then the class keys */
    CHECK(!strcmp(c->child->string, "name") && !strcmp(c->child->next->string, "trainable") &&
          !strcmp(c->child->next->next->string, "dtype") && !strcmp(c->child->next->next->next->string, "units"));
    cJSON_Delete(c);
    tfc_layer_unref(d);

    d = tfc_layers_dense(.units = 4, .input_shape = {3}, .activation = "relu", .kernel_regularizer = tfc_l2(0.01),
                         .activity_regularizer = tfc_l1(0.01),
                         .kernel_initializer = tfc_initializer_of(.name = "he_normal", .seed = 7, .has_seed = true),
                         .use_bias = TFC_NO, .trainable = TFC_NO);
    c = config_of(d);
    CHECK(jfalse(c, "trainable"));
    const cJSON *bis = cJSON_GetObjectItem(c, "batch_input_shape");
    CHECK(cJSON_GetArraySize(bis) == 2 && cJSON_IsNull(cJSON_GetArrayItem(bis, 0)) &&
          cJSON_GetArrayItem(bis, 1)->valuedouble == 3);
    CHECK(!strcmp(jstr(c, "activation"), "relu"));
    CHECK(jfalse(c, "use_bias"));
    const cJSON *kr = cJSON_GetObjectItem(c, "kernel_regularizer");
    CHECK(!strcmp(jstr(kr, "class_name"), "L2"));
    CHECK(jnum(cJSON_GetObjectItem(kr, "config"), "l2") == (double)0.01f); /* float32, as Keras */
    CHECK(!cJSON_GetObjectItem(cJSON_GetObjectItem(kr, "config"), "l1"));
    CHECK(!strcmp(jstr(cJSON_GetObjectItem(c, "activity_regularizer"), "class_name"), "L1"));
    ki = cJSON_GetObjectItem(c, "kernel_initializer");
    CHECK(!strcmp(jstr(ki, "class_name"), "HeNormal"));
    CHECK(jnum(cJSON_GetObjectItem(ki, "config"), "seed") == 7);
    cJSON_Delete(c);
    tfc_layer_unref(d);

    struct {
        tfc_layer *l;
        const char *expect; /* the class keys, in order, as tf_keras writes them */
    } cases[] = {
        {tfc_layers_flatten(), "{\"data_format\":\"channels_last\"}"},
        {tfc_layers_reshape(.target_shape = {2, -1}), "{\"target_shape\":[2,-1]}"},
        {tfc_layers_dropout(.rate = 0.5), "{\"rate\":0.5,\"noise_shape\":null,\"seed\":null}"},
        {tfc_layers_activation(.activation = "relu"), "{\"activation\":\"relu\"}"},
        {tfc_layers_relu(), "{\"max_value\":null,\"negative_slope\":0,\"threshold\":0}"},
        {tfc_layers_leaky_relu(), "{\"alpha\":0.30000001192092896}"},
        {tfc_layers_softmax(), "{\"axis\":-1}"},
        {tfc_layers_embedding(.input_dim = 10, .output_dim = 3),
         "{\"batch_input_shape\":[null,null],\"input_dim\":10,\"output_dim\":3,\"embeddings_initializer\":{\"class_name\":"
         "\"RandomUniform\",\"config\":{\"minval\":-0.05,\"maxval\":0.05,\"seed\":null}},\"embeddings_regularizer\":null,"
         "\"activity_regularizer\":null,\"embeddings_constraint\":null,\"mask_zero\":false,\"input_length\":null}"},
        {tfc_layers_add(), "{}"},
        {tfc_layers_multiply(), "{}"},
        {tfc_layers_concatenate(), "{\"axis\":-1}"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        c = config_of(cases[i].l);
        cJSON *want = cJSON_Parse(cases[i].expect);
        REQUIRE(want);
        /* the expected keys follow name/trainable/dtype with the same values */
        cJSON *got = c->child->next->next->next;
        cJSON *w = want->child;
        bool same = true;
        for (; w && got; w = w->next, got = got->next)
            same &= !strcmp(w->string, got->string) && cJSON_Compare(w, got, true);
        same &= !w && !got;
        CHECK(same);
        if (!same) {
            char *s = cJSON_PrintUnformatted(c);
            fprintf(stderr, "  %s config: %s\n", tfc_layer_class_name(cases[i].l), s);
            cJSON_free(s);
        }
        cJSON_Delete(want);
        cJSON_Delete(c);
    }
    /* InputLayer has its own keys (Keras 2): no "trainable" */
    tfc_layer *in = tfc_layers_input_layer(.input_shape = {28, 28, 1}, .name = "img");
    c = config_of(in);
    cJSON *want = cJSON_Parse("{\"batch_input_shape\":[null,28,28,1],\"dtype\":\"float32\",\"sparse\":false,"
                              "\"ragged\":false,\"name\":\"img\"}");
    CHECK(cJSON_Compare(c, want, true));
    cJSON_Delete(want);
    cJSON_Delete(c);
    tfc_layer_unref(in);

    /* round trips through from_config give the same config */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tfc_status st = TFC_STATUS_INIT;
        char *s = tfc_layer_get_config(cases[i].l, &st);
        tfc_layer *l2 = tfc_layer_from_config(tfc_layer_class_name(cases[i].l), s, &st);
        CHECK_OK(&st);
        REQUIRE(l2);
        char *s2 = tfc_layer_get_config(l2, &st);
        CHECK(!strcmp(s, s2));
        if (strcmp(s, s2)) fprintf(stderr, "  round trip:\n  %s\n  %s\n", s, s2);
        tfc_free(s);
        tfc_free(s2);
        tfc_layer_unref(l2);
        tfc_layer_unref(cases[i].l);
    }
}

static void test_from_config(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_layer *d = tfc_layer_from_config("Dense", "{\"units\": 4}", &st);
    CHECK_OK(&st);
    REQUIRE(d);
    CHECK(!strcmp(tfc_layer_name(d), "dense"));
    cJSON *c = config_of(d);
    CHECK(jnum(c, "units") == 4 && !strcmp(jstr(c, "activation"), "linear") && jtrue(c, "use_bias"));
    cJSON_Delete(c);
    tfc_layer_unref(d);
    /* a full tf_keras config, Keras 3 extras included (module, registered_name, DTypePolicy) */
    const char *k3 = "{\"name\": \"fc1\", \"trainable\": false, \"dtype\": {\"module\": \"keras\", \"class_name\": "
                     "\"DTypePolicy\", \"config\": {\"name\": \"float64\"}}, \"batch_input_shape\": [8, 16], \"units\": 3, "
                     "\"activation\": \"tanh\", \"use_bias\": false, \"kernel_initializer\": {\"module\": "
                     "\"keras.initializers\", \"class_name\": \"VarianceScaling\", \"config\": {\"scale\": 2.0, \"mode\": "
                     "\"fan_out\", \"distribution\": \"uniform\", \"seed\": 3}, \"registered_name\": null}, "
                     "\"kernel_regularizer\": {\"class_name\": \"L1L2\", \"config\": {\"l1\": 0.5, \"l2\": 0.25}}, "
                     "\"quantization_config\": null}";
    d = tfc_layer_from_config("Dense", k3, &st);
    CHECK_OK(&st);
    REQUIRE(d);
    c = config_of(d);
    CHECK(!strcmp(jstr(c, "name"), "fc1") && jfalse(c, "trainable") && !strcmp(jstr(c, "dtype"), "float64"));
    const cJSON *bis = cJSON_GetObjectItem(c, "batch_input_shape");
    CHECK(cJSON_GetArrayItem(bis, 0)->valuedouble == 8 && cJSON_GetArrayItem(bis, 1)->valuedouble == 16);
    const cJSON *ki = cJSON_GetObjectItem(cJSON_GetObjectItem(c, "kernel_initializer"), "config");
    CHECK(jnum(ki, "scale") == 2 && !strcmp(jstr(ki, "mode"), "fan_out") && !strcmp(jstr(ki, "distribution"), "uniform") &&
          jnum(ki, "seed") == 3);
    const cJSON *kr = cJSON_GetObjectItem(c, "kernel_regularizer");
    CHECK(!strcmp(jstr(kr, "class_name"), "L1L2") && jnum(cJSON_GetObjectItem(kr, "config"), "l1") == 0.5 &&
          jnum(cJSON_GetObjectItem(kr, "config"), "l2") == 0.25);
    cJSON_Delete(c);
    tfc_layer_unref(d);
    /* identifiers as strings */
    d = tfc_layer_from_config("Dense", "{\"units\": 2, \"kernel_initializer\": \"orthogonal\", \"kernel_regularizer\": \"l2\"}", &st);
    CHECK_OK(&st);
    REQUIRE(d);
    c = config_of(d);
    CHECK(!strcmp(jstr(cJSON_GetObjectItem(c, "kernel_initializer"), "class_name"), "Orthogonal"));
    CHECK(jnum(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "kernel_regularizer"), "config"), "l2") == (double)0.01f);
    cJSON_Delete(c);
    tfc_layer_unref(d);
    /* errors */
    CHECK(!tfc_layer_from_config("NoSuchLayer", "{}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Unknown layer") && strstr(st.msg, "NoSuchLayer"));
    CHECK(!tfc_layer_from_config("Dense", "{\"units\": \"four\"}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "units"));
    CHECK(!tfc_layer_from_config("Dense", "{}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_layer_from_config("Dense", "[1, 2]", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_layer_from_config("Dense", "{\"units\": 2, \"kernel_initializer\": \"nope\"}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "nope"));
    CHECK(!tfc_layer_from_config("Dense", "{\"units\": 2, \"dtype\": \"float17\"}", &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_layer *il = tfc_layer_from_config("InputLayer", "{\"batch_input_shape\": [null, 5], \"dtype\": \"int32\", \"name\": \"ids\"}", &st);
    CHECK_OK(&st);
    REQUIRE(il);
    CHECK(!strcmp(tfc_layer_name(il), "ids"));
    c = config_of(il);
    CHECK(!strcmp(jstr(c, "dtype"), "int32"));
    cJSON_Delete(c);
    tfc_layer_unref(il);
}

/* ---- Dense: weights, values, gradients, errors ---- */
static void test_dense(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_layer *d = tfc_layers_dense(.units = 2, .activation = "relu");
    CHECK(!tfc_layer_built(d));
    CHECK(tfc_layer_count_params(d) == 0);
    tfc_tensor *x = T32(DIMS(2, 3), 1, 2, 3, -1, -2, -3);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *y = tfc_layer_call1(d, ctx, x, false, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    tfc_scope_end(ctx);
    CHECK(tfc_layer_built(d));
    tfc_variable *w[4];
    CHECK(tfc_layer_weights(d, w, 4) == 2);
    CHECK(!strcmp(tfc_variable_name(w[0]), "dense/kernel:0"));
    CHECK(!strcmp(tfc_variable_name(w[1]), "dense/bias:0"));
    CHECK(SHAPE_IS(tfc_variable_shape(w[0]), 3, 2));
    CHECK(SHAPE_IS(tfc_variable_shape(w[1]), 2));
    CHECK(tfc_layer_count_params(d) == 8);
    /* glorot_uniform: |k| <= sqrt(6 / (3 + 2)); bias zeros */
    const tfc_tensor *kv = tfc_variable_value(w[0]);
    for (int i = 0; i < 6; i++) CHECK(fabs(at(kv, i)) <= sqrt(6.0 / 5.0));
    for (int i = 0; i < 2; i++) CHECK(at(tfc_variable_value(w[1]), i) == 0);
    /* known weights -> known outputs: relu(x @ k + b) */
    set_weights(d, 2, (tfc_tensor *[]){T32(DIMS(3, 2), 1, -1, 0, 2, 1, 0.5f), T32(DIMS(2), 0.5f, -4)});
    y = tfc_layer_call1(d, ctx, x, false, &st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 2));
    /* row0: [1+0+3, -1+4+1.5] + b = [4.5, 0.5]; row1: [-4, -4.5] + b -> relu 0 */
    CHECK_NEAR(at(y, 0), 4.5, 1e-6);
    CHECK_NEAR(at(y, 1), 0.5, 1e-6);
    CHECK_NEAR(at(y, 2), 0, 0);
    CHECK_NEAR(at(y, 3), 0, 0);
    tfc_tensor_unref(y);
    /* rank 3: the last axis */
    tfc_tensor *x3 = T32(DIMS(2, 1, 3), 1, 2, 3, -1, -2, -3);
    y = tfc_layer_call1(d, ctx, x3, false, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 1, 2));
    CHECK_NEAR(at(y, 0), 4.5, 1e-6);
    CHECK_NEAR(at(y, 1), 0.5, 1e-6);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x3);
    /* get_weights copies */
    tfc_tensor *gw[2];
    CHECK(tfc_layer_get_weights(d, gw, 2, &st) == 2);
    CHECK(at(gw[0], 3) == 2 && at(gw[1], 1) == -4);
    tfc_tensor_unref(gw[0]);
    tfc_tensor_unref(gw[1]);
    /* set_weights validation */
    tfc_tensor *bad = T32(DIMS(2, 2), 0, 0, 0, 0), *b2 = T32(DIMS(2), 0, 0);
    CHECK(!tfc_layer_set_weights(d, ctx, (tfc_tensor *[]){bad}, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "dense") && strstr(st.msg, "length 1") && strstr(st.msg, "2 weights"));
    CHECK(!tfc_layer_set_weights(d, ctx, (tfc_tensor *[]){bad, b2}, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "dense") && strstr(st.msg, "(3, 2)") && strstr(st.msg, "(2, 2)") && strstr(st.msg, "kernel"));
    tfc_tensor_unref(bad);
    tfc_tensor_unref(b2);
    /* incompatible input: names the layer and both shapes */
    tfc_tensor *x4 = T32(DIMS(2, 4), 1, 2, 3, 4, 5, 6, 7, 8);
    CHECK(!tfc_layer_call1(d, ctx, x4, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "\"dense\"") && strstr(st.msg, "(2, 4)") && strstr(st.msg, "(2, 3)") && strstr(st.msg, "axis -1"));
    tfc_tensor *x1 = T32(DIMS(3), 1, 2, 3);
    CHECK(!tfc_layer_call1(d, ctx, x1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "min_ndim=2") && strstr(st.msg, "(3,)"));
    /* an unbuilt Dense rejects rank-1 inputs before creating weights */
    tfc_layer *d2 = tfc_layers_dense(.units = 3);
    CHECK(!tfc_layer_call1(d2, ctx, x1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_layer_built(d2) && tfc_layer_weights(d2, NULL, 0) == 0);
    tfc_layer_unref(d2);
    tfc_tensor_unref(x1);
    tfc_tensor_unref(x4);
    /* gradient through the layer: d sum(x @ k + b) / dk = x^T 1, / db = batch */
    tfc_layer *lin = tfc_layers_dense(.units = 2, .kernel_initializer = tfc_initializer_of(.name = "ones"));
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    y = tfc_layer_call1(lin, ctx, x, true, &st);
    REQUIRE(y);
    tfc_variable *lw[2];
    REQUIRE(tfc_layer_trainable_weights(lin, lw, 2) == 2);
    tfc_tensor *g[2];
    REQUIRE(tfc_tape_gradient(tape, y, NULL, 0, lw, 2, TFC_UNCONNECTED_NONE, g, &st));
    CHECK_OK(&st);
    REQUIRE(g[0] && g[1]);
    for (int i = 0; i < 3; i++) CHECK_NEAR(at(g[0], i * 2), 0, 1e-6); /* rows: 1 + -1, 2 + -2, 3 + -3 */
    CHECK_NEAR(at(g[1], 0), 2, 1e-6);
    tfc_tape_free(tape);
    tfc_scope_end(ctx);
    tfc_layer_unref(lin);
    /* unknown activation: INVALID_ARGUMENT at call naming it and the layer */
    tfc_layer *bad_act = tfc_layers_dense(.units = 2, .activation = "relux");
    CHECK(!tfc_layer_call1(bad_act, ctx, x, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Unknown activation function") && strstr(st.msg, "relux") && strstr(st.msg, "dense"));
    tfc_layer_unref(bad_act);
    tfc_layer *zero_units = tfc_layers_dense();
    CHECK(!tfc_layer_call1(zero_units, ctx, x, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "units"));
    tfc_layer_unref(zero_units);
    /* float64 layer: autocast of float32 inputs */
    tfc_layer *d64 = tfc_layers_dense(.units = 1, .dtype = TFC_DOUBLE, .kernel_initializer = tfc_initializer_of(.name = "ones"));
    y = tfc_layer_call1(d64, ctx, x, false, &st);
    REQUIRE(y);
    CHECK(tfc_tensor_dtype(y) == TFC_DOUBLE && tfc_tensor_get_f64(y, 0) == 6);
    tfc_tensor_unref(y);
    tfc_layer_unref(d64);
    tfc_tensor_unref(x);
    tfc_layer_unref(d);
}

/* ---- regularization losses ---- */
static void test_regularization(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_layer *d = tfc_layers_dense(.units = 2, .kernel_regularizer = tfc_l1_l2(0.5, 0.25),
                                    .bias_initializer = tfc_initializer_of(.name = "constant", .value = 1),
                                    .bias_regularizer = tfc_l2(1), .activity_regularizer = tfc_l1(0.1));
    tfc_layer *plain = tfc_layers_dense(.units = 2);
    tfc_tensor *x = T32(DIMS(2, 2), 1, 2, -3, 4);
    tfc_tensor *y = tfc_layer_call1(plain, ctx, x, false, &st);
    tfc_tensor_unref(y);
    CHECK(!tfc_layer_regularization_loss(plain, ctx, &st));
    CHECK_OK(&st);
    tfc_layer_unref(plain);
    y = tfc_layer_call1(d, ctx, x, false, &st);
    REQUIRE(y);
    set_weights(d, 2, (tfc_tensor *[]){T32(DIMS(2, 2), 1, -2, 0, 3), T32(DIMS(2), 1, 1)});
    tfc_tensor_unref(y);
    y = tfc_layer_call1(d, ctx, x, false, &st); /* y = [[2, 5], [-2, 19]] */
    REQUIRE(y);
    tfc_tensor *loss = tfc_layer_regularization_loss(d, ctx, &st);
    CHECK_OK(&st);
    REQUIRE(loss);
    /* kernel: 0.5 * 6 + 0.25 * 14; bias: 1 * 2; activity: 0.1 * 28 / 2 */
    CHECK_NEAR(tfc_tensor_get_f64(loss, 0), 3 + 3.5 + 2 + 1.4, 1e-5);
    CHECK(tfc_tensor_dtype(loss) == TFC_FLOAT && tfc_tensor_rank(loss) == 0);
    tfc_tensor_unref(loss);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_layer_unref(d);
}

/* ---- a container layer: weight order and trainability ---- */
typedef struct {
    tfc_layer base;
    tfc_layer *a, *b;
} pair_layer;

static bool pair_build(tfc_layer *l, tfc_ctx *c, const tfc_shape *in, int n_in, tfc_status *st) {
    tfc_shape s = {.rank = 1, .dims = {1}};
    return tfc_layer_add_weight(l, c, "counter", &s, TFC_FLOAT, NULL, NULL, false, st) &&
           tfc_layer_add_weight(l, c, "scale", &s, TFC_FLOAT, tfc_initializer_of(.name = "ones"), NULL, true, st);
}
static bool pair_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    out[0] = in[0];
    out[0].dims[out[0].rank - 1] = 2;
    *n_out = 1;
    return true;
}
static bool pair_call(tfc_layer *l, tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      bool training, tfc_status *st) {
    pair_layer *p = (pair_layer *)l;
    tfc_tensor *h = tfc_layer_call1(p->a, c, in[0], training, st);
    return h && (out[0] = tfc_layer_call1(p->b, c, h, training, st)) != NULL;
}
static const tfc_layer_class pair_class = {
    .class_name = "PairLayer", .size = sizeof(pair_layer), .build = pair_build,
    .compute_output_shape = pair_shape, .call = pair_call};

static void test_sublayers(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    pair_layer *p = (pair_layer *)tfc_layer_alloc(&pair_class, NULL);
    REQUIRE(p);
    CHECK(!strcmp(tfc_layer_name(&p->base), "pair_layer"));
    p->a = tfc_layers_dense(.units = 3);
    p->b = tfc_layers_dense(.units = 2, .use_bias = TFC_NO);
    REQUIRE(tfc_layer_track(&p->base, p->a, &st) && tfc_layer_track(&p->base, p->b, &st));
    tfc_tensor *x = T32(DIMS(1, 2), 1, 2);
    tfc_tensor *y = tfc_layer_call1(&p->base, ctx, x, false, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 1, 2));
    tfc_tensor_unref(y);
    tfc_variable *w[8];
    const char *want_all[] = {"pair_layer/scale:0", "dense/kernel:0", "dense/bias:0", "dense_1/kernel:0", "pair_layer/counter:0"};
    int n = tfc_layer_weights(&p->base, w, 8);
    CHECK(n == 5);
    for (int i = 0; i < n && i < 5; i++) CHECK(!strcmp(tfc_variable_name(w[i]), want_all[i]));
    CHECK(tfc_layer_trainable_weights(&p->base, NULL, 0) == 4);
    CHECK(tfc_layer_non_trainable_weights(&p->base, NULL, 0) == 1);
    CHECK(tfc_layer_count_params(&p->base) == 1 + 1 + 6 + 3 + 6);
    /* freezing a sublayer moves its weights to non-trainable (after the parent's own) */
    tfc_layer_set_trainable(p->a, false);
    CHECK(tfc_layer_trainable_weights(&p->base, w, 8) == 2);
    CHECK(!strcmp(tfc_variable_name(w[0]), "pair_layer/scale:0") && !strcmp(tfc_variable_name(w[1]), "dense_1/kernel:0"));
    CHECK(tfc_layer_non_trainable_weights(&p->base, w, 8) == 3);
    CHECK(!strcmp(tfc_variable_name(w[0]), "pair_layer/counter:0") && !strcmp(tfc_variable_name(w[1]), "dense/kernel:0"));
    /* freezing the parent freezes everything (recursively) */
    tfc_layer_set_trainable(&p->base, false);
    CHECK(tfc_layer_trainable_weights(&p->base, NULL, 0) == 0);
    CHECK(!tfc_layer_trainable(p->b));
    n = tfc_layer_non_trainable_weights(&p->base, w, 8);
    CHECK(n == 5 && !strcmp(tfc_variable_name(w[0]), "pair_layer/scale:0") &&
          !strcmp(tfc_variable_name(w[1]), "pair_layer/counter:0"));
    tfc_layer_set_trainable(&p->base, true);
    /* a shared sublayer is listed once */
    REQUIRE(tfc_layer_track(&p->base, p->a, &st));
    CHECK(tfc_layer_weights(&p->base, NULL, 0) == 5);
    CHECK(tfc_layer_weights(&p->base, w, 2) == 5); /* a short buffer still gets the count */
    /* add_weight errors */
    tfc_shape s = {.rank = 1, .dims = {2}};
    CHECK(!tfc_layer_add_weight(&p->base, ctx, "scale", &s, TFC_FLOAT, NULL, NULL, true, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_layer_add_weight(&p->base, ctx, "r", &s, TFC_FLOAT, tfc_initializer_of(.name = "bogus"), NULL, true, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "bogus") && strstr(st.msg, "pair_layer"));
    /* refcounts: the container holds the sublayers; an extra reference outlives the container */
    tfc_layer *keep = tfc_layer_ref(p->b);
    tfc_layer_unref(&p->base);
    CHECK(!strcmp(tfc_layer_name(keep), "dense_1") && tfc_layer_weights(keep, NULL, 0) == 1);
    tfc_layer_unref(keep);
    /* tfc_layer_take sinks the floating reference once */
    tfc_layer *f = tfc_layers_flatten();
    CHECK(tfc_layer_take(f) == f);
    CHECK(tfc_layer_take(f) == f); /* second owner: a new reference */
    tfc_layer_unref(f);
    tfc_layer_unref(f);
    tfc_tensor_unref(x);
}

/* ---- activations ---- */
static void test_activations(void) {
    tfc_status st = TFC_STATUS_INIT;
    const float xs[] = {-3, -1, -0.5f, 0, 0.5f, 1, 2, 7};
    tfc_tensor *x = T32(DIMS(8), -3, -1, -0.5f, 0, 0.5f, 1, 2, 7);
    const char *names[] = {"linear", "relu", "sigmoid", "tanh", "elu", "selu", "gelu", "swish", "silu", "softplus",
                           "softsign", "relu6", "exponential", "hard_sigmoid", "mish", NULL};
    for (int k = 0; k < 16; k++) {
        tfc_tensor *y = tfc_activation_apply(ctx, names[k], x, &st);
        CHECK_OK(&st);
        REQUIRE(y);
        for (int i = 0; i < 8; i++) {
            double v = xs[i], e;
            const char *n = names[k] ? names[k] : "linear";
            if (!strcmp(n, "linear")) e = v;
            else if (!strcmp(n, "relu")) e = v > 0 ? v : 0;
            else if (!strcmp(n, "sigmoid")) e = 1 / (1 + exp(-v));
            else if (!strcmp(n, "tanh")) e = tanh(v);
            else if (!strcmp(n, "elu")) e = v > 0 ? v : exp(v) - 1;
            else if (!strcmp(n, "selu")) e = 1.0507009873554805 * (v > 0 ? v : 1.6732632423543772 * (exp(v) - 1));
            else if (!strcmp(n, "gelu")) e = 0.5 * v * (1 + erf(v / sqrt(2)));
            else if (!strcmp(n, "swish") || !strcmp(n, "silu")) e = v / (1 + exp(-v));
            else if (!strcmp(n, "softplus")) e = log1p(exp(v));
            else if (!strcmp(n, "softsign")) e = v / (1 + fabs(v));
            else if (!strcmp(n, "relu6")) e = v < 0 ? 0 : v > 6 ? 6 : v;
            else if (!strcmp(n, "exponential")) e = exp(v);
            else if (!strcmp(n, "hard_sigmoid")) e = fmin(1, fmax(0, 0.2 * v + 0.5));
            else e = v * tanh(log1p(exp(v))); /* mish */
            CHECK_NEAR(at(y, i), e, 2e-6);
            if (fabs(at(y, i) - e) > 2e-6 * (1 + fabs(e))) fprintf(stderr, "  activation %s(%g)\n", n, v);
        }
        tfc_tensor_unref(y);
    }
    /* softmax on the last axis */
    tfc_tensor *m = T32(DIMS(2, 3), 1, 2, 3, 0, 0, 0);
    tfc_tensor *s = tfc_activation_apply(ctx, "softmax", m, &st);
    REQUIRE(s);
    double z = exp(1) + exp(2) + exp(3);
    CHECK_NEAR(at(s, 0), exp(1) / z, 1e-6);
    CHECK_NEAR(at(s, 2), exp(3) / z, 1e-6);
    CHECK_NEAR(at(s, 4), 1.0 / 3, 1e-6);
    tfc_tensor_unref(s);
    tfc_tensor_unref(m);
    CHECK(!tfc_activation_apply(ctx, "softmax", x, &st)); /* 1-D, as Keras */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_activation_apply(ctx, "swishy", x, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Unknown activation function: swishy"));
    CHECK(tfc_activation_valid("gelu") && tfc_activation_valid(NULL) && !tfc_activation_valid("Relu"));
    /* differentiable: d gelu / dx at 0 is 0.5 */
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x0 = tfc_scalar_f32(0, &st);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x0);
    tfc_tensor *g = NULL, *y = tfc_activation_apply(ctx, "gelu", x0, &st);
    REQUIRE(y && tfc_tape_gradient(tape, y, &x0, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
    REQUIRE(g);
    CHECK_NEAR(tfc_tensor_get_f64(g, 0), 0.5, 1e-6);
    tfc_tape_free(tape);
    tfc_tensor_unref(x0);
    tfc_scope_end(ctx);
    tfc_tensor_unref(x);
}

/* ---- initializers ---- */
static double mean_of(const tfc_tensor *t) {
    double s = 0;
    int64_t n = tfc_tensor_num_elements(t);
    for (int64_t i = 0; i < n; i++) s += tfc_tensor_get_f64(t, i);
    return s / (double)n;
}
static double std_of(const tfc_tensor *t) {
    double m = mean_of(t), s = 0;
    int64_t n = tfc_tensor_num_elements(t);
    for (int64_t i = 0; i < n; i++) s += (tfc_tensor_get_f64(t, i) - m) * (tfc_tensor_get_f64(t, i) - m);
    return sqrt(s / (double)n);
}

static void test_initializers(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_shape s = {.rank = 2, .dims = {200, 100}};
    tfc_tensor *t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "constant", .value = 2.5), &s, TFC_FLOAT, &st);
    REQUIRE(t);
    CHECK(at(t, 0) == 2.5f && at(t, 19999) == 2.5f);
    tfc_tensor_unref(t);
    t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "ones"), &s, TFC_INT32, &st);
    REQUIRE(t);
    CHECK(tfc_tensor_get_f64(t, 7) == 1);
    tfc_tensor_unref(t);
    tfc_shape sq = {.rank = 2, .dims = {3, 4}};
    t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "identity", .gain = 2), &sq, TFC_FLOAT, &st);
    REQUIRE(t);
    for (int i = 0; i < 12; i++) CHECK(at(t, i) == (i % 5 == 0 ? 2 : 0));
    tfc_tensor_unref(t);
    /* glorot_uniform: U(-l, l), l = sqrt(6 / (fan_in + fan_out)) */
    double lim = sqrt(6.0 / 300);
    t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "glorot_uniform"), &s, TFC_FLOAT, &st);
    REQUIRE(t);
    double mx = 0;
    for (int i = 0; i < 20000; i++) mx = fmax(mx, fabs(at(t, i)));
    CHECK(mx <= lim && mx > 0.95 * lim);
    CHECK_NEAR(std_of(t), lim / sqrt(3), 0.03);
    tfc_tensor_unref(t);
    /* he_normal: truncated normal with stddev sqrt(2 / fan_in) overall (|x| <= 2 sigma_raw) */
    t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "he_normal"), &s, TFC_FLOAT, &st);
    REQUIRE(t);
    double sd = sqrt(2.0 / 200), raw = sd / .87962566103423978;
    mx = 0;
    for (int i = 0; i < 20000; i++) mx = fmax(mx, fabs(at(t, i)));
    CHECK(mx <= 2 * raw * 1.0001);
    CHECK_NEAR(std_of(t), sd, 0.03);
    CHECK(fabs(mean_of(t)) < 0.01 * sd * 10);
    tfc_tensor_unref(t);
    /* conv kernels: fans include the receptive field (3x3x16 -> 32): lecun_uniform limit sqrt(3 / 144) */
    tfc_shape k4 = {.rank = 4, .dims = {3, 3, 16, 32}};
    t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "lecun_uniform"), &k4, TFC_FLOAT, &st);
    REQUIRE(t);
    mx = 0;
    for (int i = 0; i < 3 * 3 * 16 * 32; i++) mx = fmax(mx, fabs(at(t, i)));
    CHECK(mx <= sqrt(3.0 / 144) && mx > 0.9 * sqrt(3.0 / 144));
    tfc_tensor_unref(t);
    /* random_normal / random_uniform defaults */
    t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "random_normal"), &s, TFC_DOUBLE, &st);
    REQUIRE(t);
    CHECK(tfc_tensor_dtype(t) == TFC_DOUBLE);
    CHECK_NEAR(std_of(t), 0.05, 0.03);
    tfc_tensor_unref(t);
    t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "random_uniform", .minval = 2, .maxval = 3), &s, TFC_FLOAT, &st);
    REQUIRE(t);
    double mn = 10;
    mx = 0;
    for (int i = 0; i < 20000; i++) mn = fmin(mn, at(t, i)), mx = fmax(mx, at(t, i));
    /* (maxval itself can come out, as in TensorFlow: the largest uniform draw 1 - 2^-23, times 1, plus 2, rounds
     * to 3 in float32; about once in 2^23 draws) */
    CHECK(mn >= 2 && mx <= 3 && mn < 2.01 && mx > 2.99);
    tfc_tensor_unref(t);
    /* orthogonal: Q^T Q = I for tall, Q Q^T = I for wide (gain 1) */
    for (int wide = 0; wide < 2; wide++) {
        tfc_shape os = {.rank = 2, .dims = {wide ? 4 : 7, wide ? 7 : 4}};
        t = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "orthogonal", .seed = 5, .has_seed = true), &os,
                                   TFC_FLOAT, &st);
        REQUIRE(t);
        int64_t r = os.dims[0], c = os.dims[1];
        double worst = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                double dot = 0;
                for (int k = 0; k < 7; k++)
                    dot += wide ? at(t, i * c + k) * at(t, j * c + k) : at(t, k * c + i) * at(t, k * c + j);
                worst = fmax(worst, fabs(dot - (i == j)));
            }
        CHECK(worst < 1e-5);
        (void)r;
        tfc_tensor_unref(t);
    }
    /* seeds: a global seed makes runs repeat */
    tfc_tensor *a, *b;
    tfc_ctx_set_seed(ctx, 1234);
    a = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "glorot_normal"), &sq, TFC_FLOAT, &st);
    tfc_ctx_set_seed(ctx, 1234);
    b = tfc_initializer_sample(ctx, tfc_initializer_of(.name = "glorot_normal"), &sq, TFC_FLOAT, &st);
    REQUIRE(a && b);
    bool same = true;
    for (int i = 0; i < 12; i++) same &= at(a, i) == at(b, i);
    CHECK(same);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    /* errors */
    CHECK(!tfc_initializer_sample(ctx, tfc_initializer_of(.name = "glorot_unifrom"), &sq, TFC_FLOAT, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "glorot_unifrom"));
    CHECK(!tfc_initializer_sample(ctx, tfc_initializer_of(.name = "variance_scaling", .mode = "fan_sum"), &sq, TFC_FLOAT, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "fan_sum"));
    CHECK(!tfc_initializer_sample(ctx, tfc_initializer_of(.name = "variance_scaling", .scale = -1), &sq, TFC_FLOAT, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_shape v = {.rank = 1, .dims = {3}};
    CHECK(!tfc_initializer_sample(ctx, tfc_initializer_of(.name = "orthogonal"), &v, TFC_FLOAT, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_initializer_sample(ctx, tfc_initializer_of(.name = "identity"), &v, TFC_FLOAT, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_initializer_sample(ctx, tfc_initializer_of(.name = "he_uniform"), &sq, TFC_INT32, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_shape unk = {.rank = 2, .dims = {-1, 3}};
    CHECK(!tfc_initializer_sample(ctx, tfc_initializer_of(.name = "zeros"), &unk, TFC_FLOAT, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

/* ---- shape layers ---- */
static void test_flatten_reshape(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = T32(DIMS(2, 2, 3), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
    tfc_layer *f = tfc_layers_flatten();
    tfc_tensor *y = tfc_layer_call1(f, ctx, x, false, &st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 6) && at(y, 7) == 7);
    tfc_tensor_unref(y);
    tfc_tensor *x1 = T32(DIMS(3), 1, 2, 3);
    y = tfc_layer_call1(f, ctx, x1, false, &st); /* rank 1 -> (3, 1) */
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 3, 1));
    tfc_tensor_unref(y);
    tfc_layer_unref(f);
    /* channels_first: [b, c, w] -> channels last first: element order c fastest */
    f = tfc_layers_flatten(.data_format = "channels_first");
    y = tfc_layer_call1(f, ctx, x, false, &st);
    REQUIRE(y);
    /* x[0] = [[0,1,2],[3,4,5]] (c=2, w=3) -> transposed [[0,3],[1,4],[2,5]] */
    CHECK(at(y, 0) == 0 && at(y, 1) == 3 && at(y, 2) == 1 && at(y, 5) == 5);
    tfc_tensor_unref(y);
    tfc_layer_unref(f);
    tfc_layer *r = tfc_layers_reshape(.target_shape = {3, -1});
    y = tfc_layer_call1(r, ctx, x, false, &st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 3, 2));
    tfc_tensor_unref(y);
    tfc_tensor *x8 = T32(DIMS(2, 4), 0, 1, 2, 3, 4, 5, 6, 7);
    CHECK(!tfc_layer_call1(r, ctx, x8, false, &st)); /* 4 is not a multiple of 3 */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "reshape") && strstr(st.msg, "(4,)") && strstr(st.msg, "(3, None)"));
    tfc_layer_unref(r);
    r = tfc_layers_reshape(.target_shape = {-1, -1});
    CHECK(!tfc_layer_call1(r, ctx, x, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "at most one unknown"));
    tfc_layer_unref(r);
    r = tfc_layers_reshape(.target_shape = {5});
    CHECK(!tfc_layer_call1(r, ctx, x, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "total size"));
    tfc_layer_unref(r);
    tfc_tensor_unref(x8);
    tfc_tensor_unref(x1);
    tfc_tensor_unref(x);
}

static void test_dropout(void) {
    tfc_status st = TFC_STATUS_INIT;
    enum { N = 4000 };
    static float v[N];
    for (int i = 0; i < N; i++) v[i] = 1 + (float)(i % 7);
    tfc_tensor *x = tensor_f32(v, (int64_t[]){4, N / 4}, 2);
    tfc_layer *d = tfc_layers_dropout(.rate = 0.25, .seed = 3, .has_seed = true);
    tfc_tensor *y = tfc_layer_call1(d, ctx, x, false, &st); /* inference: identity */
    REQUIRE(y);
    for (int i = 0; i < N; i++) CHECK(at(y, i) == v[i]);
    tfc_tensor_unref(y);
    y = tfc_layer_call1(d, ctx, x, true, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    int dropped = 0, bad = 0;
    for (int i = 0; i < N; i++) {
        if (at(y, i) == 0) dropped++;
        else if (fabs(at(y, i) - v[i] / 0.75) > 1e-5) bad++;
    }
    CHECK(bad == 0);
    CHECK(dropped > N * 0.2 && dropped < N * 0.3);
    tfc_tensor_unref(y);
    tfc_layer_unref(d);
    /* noise_shape [4, 1]: whole rows kept or dropped */
    d = tfc_layers_dropout(.rate = 0.5, .noise_shape = {-1, 1}, .noise_rank = 2);
    y = tfc_layer_call1(d, ctx, x, true, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    for (int r = 0; r < 4; r++) {
        bool zero = at(y, r * (N / 4)) == 0;
        for (int i = 0; i < N / 4; i++) CHECK((at(y, r * (N / 4) + i) == 0) == zero);
    }
    tfc_tensor_unref(y);
    tfc_layer_unref(d);
    /* training under a global seed (no op seed, then an op seed; noise_shape None, then x's own shape): the
     * layer's one fused op gives, bit for bit, what tf.nn.dropout's ops give on a context in the same state */
    for (int k = 0; k < 2; k++) {
        tfc_ctx *c1 = tfc_ctx_new(&(tfc_ctx_opts){.has_seed = true, .seed = 42}, &st);
        tfc_ctx *c2 = tfc_ctx_new(&(tfc_ctx_opts){.has_seed = true, .seed = 42}, &st);
        REQUIRE(c1 && c2);
        d = k ? tfc_layers_dropout(.rate = 0.3, .seed = 9, .has_seed = true, .noise_shape = {4, N / 4}, .noise_rank = 2)
              : tfc_layers_dropout(.rate = 0.3);
        for (int call = 0; call < 2; call++) {
            y = tfc_layer_call1(d, c1, x, true, &st);
            CHECK_OK(&st);
            tfc_tensor *u = tfc_random_uniform(c2, (int64_t[]){4, N / 4}, 2, TFC_FLOAT, 0, 1,
                                               k ? 9 : TFC_RANDOM_NO_SEED, &st);
            tfc_tensor *r = tfc_scalar(TFC_FLOAT, 0.3, &st), *sc = tfc_scalar(TFC_FLOAT, 1.0 / 0.7, &st);
            tfc_tensor *keep = tfc_emit(c2, "GreaterEqual", (tfc_tensor *[]){u, r}, 2, NULL, 0, &st);
            tfc_tensor *m = tfc_emit(c2, "Cast", &keep, 1, &TFC_ATTR_T("DstT", TFC_FLOAT), 1, &st);
            tfc_tensor *xs = tfc_emit(c2, "Mul", (tfc_tensor *[]){x, sc}, 2, NULL, 0, &st);
            tfc_tensor *want = tfc_emit(c2, "Mul", (tfc_tensor *[]){xs, m}, 2, NULL, 0, &st);
            CHECK_OK(&st);
            REQUIRE(y && want);
            CHECK(!memcmp(tfc_tensor_data(y), tfc_tensor_data(want), N * sizeof(float)));
            tfc_tensor *all[] = {y, u, r, sc, keep, m, xs, want};
            for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tfc_tensor_unref(all[i]);
        }
        tfc_layer_unref(d);
        tfc_ctx_free(c1);
        tfc_ctx_free(c2);
    }
    /* rate 0 is a no-op in training; rate outside [0, 1] is an error */
    d = tfc_layers_dropout();
    y = tfc_layer_call1(d, ctx, x, true, &st);
    REQUIRE(y);
    CHECK(at(y, 5) == v[5]);
    tfc_tensor_unref(y);
    tfc_layer_unref(d);
    d = tfc_layers_dropout(.rate = 1.5);
    CHECK(!tfc_layer_call1(d, ctx, x, true, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "rate") && strstr(st.msg, "dropout"));
    tfc_layer_unref(d);
    tfc_tensor_unref(x);
}

static void test_activation_layers(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = T32(DIMS(1, 6), -2, -0.5f, 0.5f, 1.5f, 3, 8);
    const float xv[] = {-2, -0.5f, 0.5f, 1.5f, 3, 8};
    tfc_layer *a = tfc_layers_activation(.activation = "tanh");
    tfc_tensor *y = tfc_layer_call1(a, ctx, x, false, &st);
    REQUIRE(y);
    for (int i = 0; i < 6; i++) CHECK_NEAR(at(y, i), tanh(xv[i]), 1e-6);
    tfc_tensor_unref(y);
    tfc_layer_unref(a);
    a = tfc_layers_activation(.activation = "nope");
    CHECK(!tfc_layer_call1(a, ctx, x, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "nope") && strstr(st.msg, "activation"));
    tfc_layer_unref(a);
    struct {
        tfc_layer *l;
        double max_value, slope, threshold;
        bool has_max;
    } relus[] = {
        {tfc_layers_relu(), 0, 0, 0, false},
        {tfc_layers_relu(.max_value = 6, .has_max_value = true), 6, 0, 0, true},
        {tfc_layers_relu(.max_value = 2, .has_max_value = true, .negative_slope = 0.1), 2, 0.1, 0, true},
        {tfc_layers_relu(.threshold = 1, .negative_slope = 0.5), 0, 0.5, 1, false},
        {tfc_layers_relu(.negative_slope = 0.2), 0, 0.2, 0, false},
    };
    for (size_t k = 0; k < sizeof relus / sizeof *relus; k++) {
        y = tfc_layer_call1(relus[k].l, ctx, x, false, &st);
        CHECK_OK(&st);
        REQUIRE(y);
        for (int i = 0; i < 6; i++) {
            double v = xv[i], s = (float)relus[k].slope, th = relus[k].threshold;
            double e = v >= th ? v : s * (v - th);
            if (relus[k].has_max && v >= relus[k].max_value) e = relus[k].max_value;
            CHECK_NEAR(at(y, i), e, 1e-6);
            if (fabs(at(y, i) - e) > 1e-6 * (1 + fabs(e))) fprintf(stderr, "  relu case %zu x=%g\n", k, v);
        }
        tfc_tensor_unref(y);
        tfc_layer_unref(relus[k].l);
    }
    a = tfc_layers_relu(.max_value = -1, .has_max_value = true);
    CHECK(!tfc_layer_call1(a, ctx, x, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "max_value"));
    tfc_layer_unref(a);
    a = tfc_layers_leaky_relu();
    y = tfc_layer_call1(a, ctx, x, false, &st);
    REQUIRE(y);
    CHECK_NEAR(at(y, 0), -2 * 0.3, 1e-6);
    CHECK_NEAR(at(y, 3), 1.5, 1e-6);
    tfc_tensor_unref(y);
    tfc_layer_unref(a);
    a = tfc_layers_leaky_relu(.alpha = 0, .has_alpha = true);
    y = tfc_layer_call1(a, ctx, x, false, &st);
    REQUIRE(y);
    CHECK(at(y, 0) == 0);
    tfc_tensor_unref(y);
    tfc_layer_unref(a);
    /* Softmax over the last axis and over axis 0 */
    tfc_tensor *m = T32(DIMS(2, 2), 0, 1, 2, 5);
    a = tfc_layers_softmax();
    y = tfc_layer_call1(a, ctx, m, false, &st);
    REQUIRE(y);
    CHECK_NEAR(at(y, 1), exp(1) / (1 + exp(1)), 1e-6);
    tfc_tensor_unref(y);
    tfc_layer_unref(a);
    a = tfc_layers_softmax(.axis = 0, .has_axis = true);
    y = tfc_layer_call1(a, ctx, m, false, &st);
    REQUIRE(y);
    CHECK_NEAR(at(y, 0), 1 / (1 + exp(2)), 1e-6);
    CHECK_NEAR(at(y, 3), exp(5) / (exp(1) + exp(5)), 1e-6);
    tfc_tensor_unref(y);
    tfc_layer_unref(a);
    a = tfc_layers_softmax(.axis = 2);
    CHECK(!tfc_layer_call1(a, ctx, m, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_layer_unref(a);
    tfc_tensor_unref(m);
    tfc_tensor_unref(x);
}

static void test_embedding(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_layer *e = tfc_layers_embedding(.input_dim = 5, .output_dim = 2);
    int32_t ids[] = {4, 0, 2, 2};
    tfc_tensor *x = tfc_tensor_from_data(TFC_INT32, (int64_t[]){2, 2}, 2, ids, sizeof ids, &st);
    tfc_tensor *y = tfc_layer_call1(e, ctx, x, false, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 2, 2));
    tfc_tensor_unref(y);
    set_weights(e, 1, (tfc_tensor *[]){T32(DIMS(5, 2), 0, 1, 10, 11, 20, 21, 30, 31, 40, 41)});
    y = tfc_layer_call1(e, ctx, x, false, &st);
    REQUIRE(y);
    const float want[] = {40, 41, 0, 1, 20, 21, 20, 21};
    for (int i = 0; i < 8; i++) CHECK(at(y, i) == want[i]);
    tfc_tensor_unref(y);
    /* int64 and float indices */
    int64_t ids64[] = {1, 3};
    tfc_tensor *x64 = tfc_tensor_from_data(TFC_INT64, (int64_t[]){2}, 1, ids64, sizeof ids64, &st);
    y = tfc_layer_call1(e, ctx, x64, false, &st);
    REQUIRE(y);
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 2) && at(y, 2) == 30);
    tfc_tensor_unref(y);
    tfc_tensor *xf = T32(DIMS(1, 1), 2);
    y = tfc_layer_call1(e, ctx, xf, false, &st);
    REQUIRE(y);
    CHECK(at(y, 1) == 21);
    tfc_tensor_unref(y);
    /* out of range: the layer and the index */
    int32_t badids[] = {1, 5};
    tfc_tensor *xb = tfc_tensor_from_data(TFC_INT32, (int64_t[]){1, 2}, 2, badids, sizeof badids, &st);
    CHECK(!tfc_layer_call1(e, ctx, xb, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "embedding") && strstr(st.msg, "indices[0,1] = 5 is not in [0, 5)"));
    badids[1] = -1;
    tfc_tensor_unref(xb);
    xb = tfc_tensor_from_data(TFC_INT32, (int64_t[]){1, 2}, 2, badids, sizeof badids, &st);
    CHECK(!tfc_layer_call1(e, ctx, xb, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(xb);
    tfc_tensor_unref(xf);
    tfc_tensor_unref(x64);
    tfc_tensor_unref(x);
    tfc_layer_unref(e);
    e = tfc_layers_embedding(.input_dim = 0, .output_dim = 2);
    int32_t one = 0;
    x = tfc_tensor_from_data(TFC_INT32, (int64_t[]){1}, 1, &one, sizeof one, &st);
    CHECK(!tfc_layer_call1(e, ctx, x, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "input_dim"));
    tfc_tensor_unref(x);
    tfc_layer_unref(e);
}

static void test_merge(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *a = T32(DIMS(2, 3), 1, 2, 3, 4, 5, 6), *b = T32(DIMS(2, 3), 10, 20, 30, 40, 50, 60),
               *c = T32(DIMS(2, 1), 100, 200), *r3 = T32(DIMS(2, 2, 3), 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2);
    tfc_layer *add = tfc_layers_add();
    tfc_tensor *y = NULL;
    REQUIRE(tfc_layer_call(add, ctx, (tfc_tensor *[]){a, b, c}, 3, &y, 1, false, &st));
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 3));
    CHECK(at(y, 0) == 111 && at(y, 5) == 266);
    tfc_tensor_unref(y);
    tfc_layer_unref(add);
    /* lower ranks expand after the batch dim: [2, 3] with [2, 2, 3] -> [2, 1, 3] */
    tfc_layer *mul = tfc_layers_multiply();
    REQUIRE(tfc_layer_call(mul, ctx, (tfc_tensor *[]){a, r3}, 2, &y, 1, false, &st));
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 2, 3));
    CHECK(at(y, 4) == 2 && at(y, 6) == 8 && at(y, 11) == 12);
    tfc_tensor_unref(y);
    tfc_layer_unref(mul);
    add = tfc_layers_add();
    tfc_tensor *w = T32(DIMS(2, 4), 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK(!tfc_layer_call(add, ctx, (tfc_tensor *[]){a, w}, 2, &y, 1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "incompatible shapes") && strstr(st.msg, "(3,)") && strstr(st.msg, "(4,)") && strstr(st.msg, "add"));
    tfc_tensor *b3 = T32(DIMS(3, 3), 0, 0, 0, 0, 0, 0, 0, 0, 0);
    CHECK(!tfc_layer_call(add, ctx, (tfc_tensor *[]){a, b3}, 2, &y, 1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "batch sizes") && strstr(st.msg, "[(2, 3), (3, 3)]"));
    tfc_layer_unref(add);
    tfc_layer *cat = tfc_layers_concatenate();
    REQUIRE(tfc_layer_call(cat, ctx, (tfc_tensor *[]){a, c}, 2, &y, 1, false, &st));
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 2, 4));
    CHECK(at(y, 3) == 100 && at(y, 4) == 4 && at(y, 7) == 200);
    tfc_tensor_unref(y);
    CHECK(!tfc_layer_call(cat, ctx, (tfc_tensor *[]){a, b3}, 2, &y, 1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Concatenate") && strstr(st.msg, "(2, 3), (3, 3)"));
    tfc_layer_unref(cat);
    cat = tfc_layers_concatenate(.axis = 0, .has_axis = true);
    REQUIRE(tfc_layer_call(cat, ctx, (tfc_tensor *[]){a, b3}, 2, &y, 1, false, &st));
    CHECK(SHAPE_IS(tfc_tensor_shape(y), 5, 3));
    tfc_tensor_unref(y);
    tfc_layer_unref(cat);
    cat = tfc_layers_concatenate(.axis = 1);
    CHECK(!tfc_layer_call(cat, ctx, (tfc_tensor *[]){a, r3}, 2, &y, 1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_layer_unref(cat);
    tfc_tensor_unref(b3);
    tfc_tensor_unref(w);
    tfc_tensor_unref(r3);
    tfc_tensor_unref(c);
    tfc_tensor_unref(b);
    tfc_tensor_unref(a);
}

/* ---- symbolic Keras tensors ---- */
static void test_symbolic(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_ktensor *in = tfc_input(.shape = {28, 28, 1});
    REQUIRE(in);
    CHECK(SHAPE_IS(tfc_ktensor_shape(in), -1, 28, 28, 1));
    CHECK(tfc_ktensor_dtype(in) == TFC_FLOAT);
    tfc_layer *il = tfc_ktensor_layer(in);
    CHECK(!strcmp(tfc_layer_name(il), "input_1") && !strcmp(tfc_layer_class_name(il), "InputLayer"));
    tfc_layer *flat = tfc_layers_flatten(), *d1 = tfc_layers_dense(.units = 16, .activation = "relu"),
              *d2 = tfc_layers_dense(.units = 4), *d3 = tfc_layers_dense(.units = 4), *cat = tfc_layers_concatenate(),
              *addl = tfc_layers_add(), *rs = tfc_layers_reshape(.target_shape = {2, -1});
    tfc_ktensor *h = tfc_apply(flat, &st, in);
    CHECK(h && SHAPE_IS(tfc_ktensor_shape(h), -1, 784));
    h = tfc_apply(d1, &st, h);
    CHECK(h && SHAPE_IS(tfc_ktensor_shape(h), -1, 16));
    CHECK(!tfc_layer_built(d1)); /* weights are created by the model (which has the context) */
    tfc_ktensor *a = tfc_apply(d2, &st, h), *b = tfc_apply(d3, &st, h);
    tfc_ktensor *c = tfc_apply(cat, &st, a, b);
    CHECK(c && SHAPE_IS(tfc_ktensor_shape(c), -1, 8));
    tfc_ktensor *s = tfc_apply(addl, &st, a, b);
    CHECK(s && SHAPE_IS(tfc_ktensor_shape(s), -1, 4));
    tfc_ktensor *r = tfc_apply(rs, &st, c);
    CHECK(r && SHAPE_IS(tfc_ktensor_shape(r), -1, 2, 4));
    tfc_ktensor *sib[4];
    CHECK(tfc_ktensor_siblings(r, sib, 4) == 1 && sib[0] == r);
    /* incompatible: names the layer and the shapes */
    tfc_ktensor *v = tfc_input(.shape = {5}, .batch_size = 3, .dtype = TFC_DOUBLE, .name = "v");
    CHECK(SHAPE_IS(tfc_ktensor_shape(v), 3, 5) && tfc_ktensor_dtype(v) == TFC_DOUBLE);
    CHECK(!tfc_apply(addl, &st, a, v));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "add") && strstr(st.msg, "(4,)") && strstr(st.msg, "(5,)"));
    CHECK(!tfc_apply(cat, &st, a, in));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_layer *bad = tfc_layers_dense(.units = 2, .activation = "nah");
    CHECK(!tfc_apply(bad, &st, h));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "nah"));
    /* a built layer checks its input spec on apply */
    tfc_tensor *x = T32(DIMS(1, 5), 1, 2, 3, 4, 5);
    tfc_layer *built = tfc_layers_dense(.units = 3);
    tfc_tensor *y = tfc_layer_call1(built, ctx, x, false, &st);
    tfc_tensor_unref(y);
    CHECK(!tfc_apply(built, &st, h));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "dense") && strstr(st.msg, "(None, 16)") && strstr(st.msg, "(1, 5)"));
    tfc_ktensor *ok = tfc_apply(built, &st, v);
    CHECK(ok && SHAPE_IS(tfc_ktensor_shape(ok), 3, 3));
    /* tfc_layer_build validates and creates weights */
    tfc_shape bs = {.rank = 2, .dims = {-1, 16}};
    CHECK(tfc_layer_build(d1, ctx, (tfc_shape[]){{.rank = 2, .dims = {-1, 784}}}, 1, &st));
    CHECK(tfc_layer_built(d1) && tfc_layer_count_params(d1) == 784 * 16 + 16);
    CHECK(!tfc_layer_build(d1, ctx, &bs, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(x);
    /* dtypes: shape layers keep integer dtypes; Dense and Embedding produce their float dtype */
    tfc_ktensor *ids = tfc_input(.shape = {6}, .dtype = TFC_INT32);
    tfc_layer *rs2 = tfc_layers_reshape(.target_shape = {2, 3}), *emb = tfc_layers_embedding(.input_dim = 9, .output_dim = 4);
    tfc_ktensor *ri = tfc_apply(rs2, &st, ids), *ei = tfc_apply(emb, &st, ids);
    CHECK(ri && tfc_ktensor_dtype(ri) == TFC_INT32 && SHAPE_IS(tfc_ktensor_shape(ri), -1, 2, 3));
    CHECK(ei && tfc_ktensor_dtype(ei) == TFC_FLOAT && SHAPE_IS(tfc_ktensor_shape(ei), -1, 6, 4));
    tfc_ktensor *sc = tfc_input(.rank = 0);
    CHECK(sc && SHAPE_IS(tfc_ktensor_shape(sc), -1));
    tfc_layer *all[] = {il, flat, d1, d2, d3, cat, addl, rs, tfc_ktensor_layer(v), bad, built,
                        tfc_ktensor_layer(ids), rs2, emb, tfc_ktensor_layer(sc)};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfc_layer_unref(all[i]);
}

/* Every allocation failure while building and calling a layer is reported, never a crash or a leak. */
static void test_alloc_failures(void) {
    for (int n = 0; n < 400; n++) {
        tfc_status st = TFC_STATUS_INIT;
        tfc_tensor *x = T32(DIMS(2, 3), 1, 2, 3, 4, 5, 6);
        tfc_alloc_fail_after(n);
        tfc_layer *d = tfc_layers_dense(.units = 2, .activation = "gelu", .kernel_regularizer = tfc_l2(0.1));
        tfc_tensor *y = d ? tfc_layer_call1(d, ctx, x, true, &st) : NULL;
        tfc_tensor *l = y ? tfc_layer_regularization_loss(d, ctx, &st) : NULL;
        char *cfg = y ? tfc_layer_get_config(d, &st) : NULL;
        bool failed = tfc_alloc_failures() > 0;
        tfc_alloc_fail_after(-1);
        if (d && !failed) CHECK(y && l && cfg);
        if (d && y == NULL) CHECK(st.code != TFC_OK);
        tfc_free(cfg);
        tfc_tensor_unref(l);
        tfc_tensor_unref(y);
        tfc_layer_unref(d);
        tfc_tensor_unref(x);
        if (!failed) break;
    }
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_names();
    test_configs();
    test_from_config();
    test_dense();
    test_regularization();
    test_sublayers();
    test_activations();
    test_initializers();
    test_flatten_reshape();
    test_dropout();
    test_activation_layers();
    test_embedding();
    test_merge();
    test_symbolic();
    test_alloc_failures();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
