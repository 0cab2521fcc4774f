/* tfc_model_from_config (src/keras/model_config.c): Sequential and Functional models from Keras 2 and Keras 3
 * JSON, round trips through get_config, errors naming what is wrong, and clean failure at every allocation
 * (run under the ASan build for leaks). */
#include <cjson/cJSON.h>

#include "tfc/keras.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

#define DENSE(name, units, extra) \
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"" name "\", \"units\": " #units extra "}}"

static const char *SEQ_K2 =
    "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"seq\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 3], \"dtype\": \"float32\", "
    "\"sparse\": false, \"ragged\": false, \"name\": \"in\"}},"
    DENSE("fc1", 4, ", \"activation\": \"relu\"") "," DENSE("fc2", 2, "") "]},"
    "\"keras_version\": \"2.4.0\", \"backend\": \"tensorflow\"}";

/* Keras 2.0-era: the config is a bare list, the first layer carries batch_input_shape */
static const char *SEQ_BARE = "{\"class_name\": \"Sequential\", \"config\": ["
    "{\"class_name\": \"Dense\", \"config\": {\"name\": \"a\", \"units\": 4, \"batch_input_shape\": [null, 3]}},"
    DENSE("b", 2, "") "]}";

/* a shared layer called twice, two inputs, two outputs */
static const char *FUNC_K2 =
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"f\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"name\": \"x1\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": "
    "\"x1\"}, \"inbound_nodes\": []},"
    "{\"class_name\": \"InputLayer\", \"name\": \"x2\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": "
    "\"x2\"}, \"inbound_nodes\": []},"
    "{\"class_name\": \"Dense\", \"name\": \"shared\", \"config\": {\"name\": \"shared\", \"units\": 4}, "
    "\"inbound_nodes\": [[[\"x1\", 0, 0, {}]], [[\"x2\", 0, 0, {}]]]},"
    "{\"class_name\": \"Add\", \"name\": \"add\", \"config\": {\"name\": \"add\"}, "
    "\"inbound_nodes\": [[[\"shared\", 0, 0, {}], [\"shared\", 1, 0, {}]]]},"
    "{\"class_name\": \"Dense\", \"name\": \"head\", \"config\": {\"name\": \"head\", \"units\": 2}, "
    "\"inbound_nodes\": [[[\"add\", 0, 0, {}]]]}],"
    "\"input_layers\": [[\"x1\", 0, 0], [\"x2\", 0, 0]], \"output_layers\": [[\"head\", 0, 0], [\"shared\", 1, 0]]}}";

/* Keras 2: a nested Sequential built on its own input is node 1 in the outer graph */
static const char *NESTED_K2 =
    "{\"class_name\": \"Functional\", \"config\": {\"name\": \"outer\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"name\": \"i\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": "
    "\"i\"}, \"inbound_nodes\": []},"
    "{\"class_name\": \"Sequential\", \"name\": \"inner\", \"config\": {\"name\": \"inner\", \"layers\": ["
    "{\"class_name\": \"InputLayer\", \"config\": {\"batch_input_shape\": [null, 4], \"name\": \"ii\"}},"
    DENSE("d1", 5, "") "," DENSE("d2", 4, "") "]}, \"inbound_nodes\": [[[\"i\", 0, 0, {}]]]},"
    "{\"class_name\": \"Add\", \"name\": \"add\", \"config\": {\"name\": \"add\"}, "
    "\"inbound_nodes\": [[[\"inner\", 1, 0, {}], [\"i\", 0, 0, {}]]]}],"
    "\"input_layers\": [[\"i\", 0, 0]], \"output_layers\": [[\"add\", 0, 0]]}}";

#define KT(name) \
    "{\"class_name\": \"__keras_tensor__\", \"config\": {\"shape\": [null, 4], \"dtype\": \"float32\", " \
    "\"keras_history\": [\"" name "\", 0, 0]}}"
/* Keras 3: args/kwargs nodes, DTypePolicy dtypes, batch_shape, bare refs for single inputs/outputs */
static const char *FUNC_K3 =
    "{\"module\": \"keras\", \"class_name\": \"Functional\", \"registered_name\": null, \"config\": {\"name\": "
    "\"k3\", \"trainable\": true, \"layers\": ["
    "{\"module\": \"keras.layers\", \"class_name\": \"InputLayer\", \"config\": {\"batch_shape\": [null, 4], "
    "\"dtype\": \"float32\", \"sparse\": false, \"name\": \"inp\"}, \"registered_name\": null, \"name\": \"inp\", "
    "\"inbound_nodes\": []},"
    "{\"module\": \"keras.layers\", \"class_name\": \"Dense\", \"config\": {\"name\": \"d\", \"trainable\": true, "
    "\"dtype\": {\"module\": \"keras\", \"class_name\": \"DTypePolicy\", \"config\": {\"name\": \"float32\"}, "
    "\"registered_name\": null}, \"units\": 4, \"activation\": \"tanh\"}, \"registered_name\": null, "
    "\"build_config\": {\"input_shape\": [null, 4]}, \"name\": \"d\", "
    "\"inbound_nodes\": [{\"args\": [" KT("inp") "], \"kwargs\": {}}]},"
    "{\"module\": \"keras.layers\", \"class_name\": \"Concatenate\", \"config\": {\"name\": \"cat\", \"axis\": -1}, "
    "\"name\": \"cat\", \"inbound_nodes\": [{\"args\": [[" KT("d") ", " KT("inp") "]], \"kwargs\": {}}]}],"
    "\"input_layers\": [\"inp\", 0, 0], \"output_layers\": [\"cat\", 0, 0]}}";

static tfc_tensor *ones(int64_t rows, int64_t cols) {
    tfc_status st = TFC_STATUS_INIT;
    float *v = tfc_malloc((size_t)(rows * cols) * sizeof(float));
    REQUIRE(v);
    for (int64_t i = 0; i < rows * cols; i++) v[i] = 0.1f * (float)(i % 7) - 0.2f;
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){rows, cols}, 2, v, (size_t)(rows * cols) * 4, &st);
    tfc_free(v);
    REQUIRE(t);
    return t;
}

static char *config_of(tfc_model *m) {
    tfc_status st = TFC_STATUS_INIT;
    char *s = tfc_layer_get_config(tfc_model_as_layer(m), &st);
    CHECK_OK(&st);
    return s;
}

/* get_config -> from_config -> get_config gives the same JSON (wrapped as {"class_name", "config"}). */
static void check_round_trip(tfc_model *m, const char *class_name) {
    tfc_status st = TFC_STATUS_INIT;
    char *c1 = config_of(m);
    REQUIRE(c1);
    size_t n = strlen(c1) + 64;
    char *wrapped = tfc_malloc(n);
    REQUIRE(wrapped);
    snprintf(wrapped, n, "{\"class_name\": \"%s\", \"config\": %s}", class_name, c1);
    tfc_model *m2 = tfc_model_from_config(ctx, wrapped, &st);
    CHECK_OK(&st);
    if (m2) {
        char *c2 = config_of(m2);
        CHECK(c2 && !strcmp(c1, c2));
        if (c2 && strcmp(c1, c2)) fprintf(stderr, "round trip:\n%s\n%s\n", c1, c2);
        tfc_free(c2);
        tfc_model_free(m2);
    }
    tfc_free(wrapped);
    tfc_free(c1);
}

static void test_sequential(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_model *m = tfc_model_from_config(ctx, SEQ_K2, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    CHECK(!strcmp(tfc_layer_name(tfc_model_as_layer(m)), "seq"));
    tfc_layer *layers[4];
    CHECK(tfc_model_layers(m, layers, 4) == 2);
    CHECK(!strcmp(tfc_layer_name(layers[0]), "fc1") && !strcmp(tfc_layer_name(layers[1]), "fc2"));
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 3 * 4 + 4 + 4 * 2 + 2);
    tfc_tensor *x = ones(5, 3);
    tfc_tensor *y = tfc_model_call(m, x, false, &st);
    CHECK_OK(&st);
    CHECK(y && tfc_tensor_dim(y, 0) == 5 && tfc_tensor_dim(y, 1) == 2);
    tfc_tensor_unref(y);
    check_round_trip(m, "Sequential");
    tfc_model_free(m);

    m = tfc_model_from_config(ctx, SEQ_BARE, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 3 * 4 + 4 + 4 * 2 + 2);
    y = tfc_model_call(m, x, false, &st);
    CHECK(y && tfc_tensor_dim(y, 1) == 2);
    tfc_tensor_unref(y);
    tfc_model_free(m);

    /* a .h5 model_config wrapper */
    char wrapped[4096];
    snprintf(wrapped, sizeof wrapped, "{\"model_config\": %s, \"keras_version\": \"2.4.0\"}", SEQ_BARE);
    m = tfc_model_from_config(ctx, wrapped, &st);
    CHECK_OK(&st);
    tfc_model_free(m);
    tfc_tensor_unref(x);
}

static void test_functional(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_keras_clear_session();
    tfc_model *m = tfc_model_from_config(ctx, FUNC_K2, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    /* the shared Dense has one set of weights */
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 4 * 4 + 4 + 4 * 2 + 2);
    tfc_tensor *x1 = ones(3, 4), *x2 = ones(3, 4), *y[2] = {0};
    CHECK(tfc_model_call_n(m, (tfc_tensor *[]){x1, x2}, 2, y, 2, false, &st));
    CHECK_OK(&st);
    CHECK(y[0] && tfc_tensor_dim(y[0], 1) == 2 && y[1] && tfc_tensor_dim(y[1], 1) == 4);
    tfc_tensor_unref(y[0]);
    tfc_tensor_unref(y[1]);
    check_round_trip(m, "Functional");
    tfc_model_free(m);

    m = tfc_model_from_config(ctx, NESTED_K2, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    CHECK(tfc_layer_count_params(tfc_model_as_layer(m)) == 4 * 5 + 5 + 5 * 4 + 4);
    tfc_tensor *out = tfc_model_call(m, x1, false, &st);
    CHECK_OK(&st);
    CHECK(out && tfc_tensor_dim(out, 1) == 4);
    tfc_tensor_unref(out);
    tfc_model_free(m);

    m = tfc_model_from_config(ctx, FUNC_K3, &st);
    CHECK_OK(&st);
    REQUIRE(m);
    out = tfc_model_call(m, x1, false, &st);
    CHECK_OK(&st);
    CHECK(out && tfc_tensor_dim(out, 1) == 8);
    tfc_tensor_unref(out);
    tfc_model_free(m);
    tfc_tensor_unref(x1);
    tfc_tensor_unref(x2);
}

/* Replaces the first occurrence of `from` in src by `to` (static buffer). */
static const char *edit(const char *src, const char *from, const char *to) {
    static char buf[8192];
    const char *p = strstr(src, from);
    REQUIRE(p);
    snprintf(buf, sizeof buf, "%.*s%s%s", (int)(p - src), src, to, p + strlen(from));
    return buf;
}

static void expect_error(const char *json, tfc_code code, const char *needle) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_model_from_config(ctx, json, &st);
    CHECK(!m);
    CHECK_CODE(&st, code);
    CHECK(strstr(st.msg, needle) != NULL);
    if (!strstr(st.msg, needle)) fprintf(stderr, "message \"%s\" lacks \"%s\"\n", st.msg, needle);
    tfc_model_free(m);
}

static void test_errors(void) {
    expect_error("{not json", TFC_INVALID_ARGUMENT, "not a JSON object");
    expect_error("{\"class_name\": \"Tree\", \"config\": {}}", TFC_INVALID_ARGUMENT, "Tree");
    expect_error("{\"config\": {}}", TFC_INVALID_ARGUMENT, "class_name");
    expect_error(edit(SEQ_K2, "\"Dense\", \"config\": {\"name\": \"fc2\"", "\"Densest\", \"config\": {\"name\": \"fc2\""),
                 TFC_INVALID_ARGUMENT, "Densest");
    expect_error(edit(SEQ_K2, "\"units\": 2", "\"units\": \"two\""), TFC_INVALID_ARGUMENT, "units");
    /* incompatible shapes: a Reshape that cannot hold 4 values */
    expect_error(edit(SEQ_K2, DENSE("fc2", 2, ""),
                      "{\"class_name\": \"Reshape\", \"config\": {\"name\": \"rs\", \"target_shape\": [3]}}"),
                 TFC_INVALID_ARGUMENT, "rs");
    expect_error(edit(FUNC_K2, "[\"shared\", 1, 0, {}]]]}", "[\"nobody\", 0, 0, {}]]]}"), TFC_INVALID_ARGUMENT,
                 "nobody");
    expect_error(edit(FUNC_K2, "[\"shared\", 1, 0, {}]]]}", "[\"shared\", 5, 0, {}]]]}"), TFC_INVALID_ARGUMENT,
                 "shared");
    expect_error(edit(FUNC_K2, "[\"head\", 0, 0]", "[\"head\", 0, 3]"), TFC_INVALID_ARGUMENT, "head");
    /* an input of a node that never exists: waits forever, reported at the outputs */
    expect_error(edit(FUNC_K2, "[[[\"add\", 0, 0, {}]]]", "[[[\"head\", 0, 0, {}]]]"), TFC_INVALID_ARGUMENT,
                 "output_layers");
    expect_error(edit(FUNC_K2, "\"name\": \"x2\"}, \"inbound_nodes\"", "\"name\": \"x2\", \"sparse\": true}, "
                      "\"inbound_nodes\""), TFC_UNIMPLEMENTED, "x2");
    expect_error(edit(FUNC_K2, "\"name\": \"head\", \"config\"", "\"name\": \"x1\", \"config\""),
                 TFC_INVALID_ARGUMENT, "x1");
}

/* Every allocation failing in turn: a status or a model, never a crash or a leak. */
static void test_faults(void) {
    const char *cases[] = {SEQ_K2, FUNC_K2, NESTED_K2, FUNC_K3};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        int64_t n = 0;
        for (;; n++) {
            tfc_status st = TFC_STATUS_INIT;
            tfc_alloc_fail_after(n);
            tfc_model *m = tfc_model_from_config(ctx, cases[c], &st);
            int64_t failures = tfc_alloc_failures();
            tfc_alloc_fail_after(-1);
            if (m) {
                tfc_model_free(m);
                if (failures == 0) break;
            } else {
                CHECK(st.code != TFC_OK);
            }
            if (n > 20000) {
                CHECK(!"no success within 20000 allocations");
                break;
            }
        }
    }
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 1, .has_seed = true}, &st);
    REQUIRE(ctx);
    test_sequential();
    test_functional();
    test_errors();
    test_faults();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
