/* tf.train.Example: the builder's bytes equal TensorFlow's serialization; parse_example with every feature
 * kind on a batch and on one example; unpacked and repeated encodings; errors naming key and example; and a
 * fuzz loop over damaged protos (never a crash: run under ASan). */
#include "tfc_test.h"
#include "tfc/ops/parsing.h"

static tfc_ctx *ctx;

/* {a: float [1.5, 2.5], c: bytes ["x", "yz"], b: int64 [3, -4, 5]}: tf.train.Example.SerializeToString. */
static const unsigned char tf_bytes[60] = {
    0x0a, 0x3a, 0x0a, 0x11, 0x0a, 0x01, 0x61, 0x12, 0x0c, 0x12, 0x0a, 0x0a, 0x08, 0x00, 0x00, 0xc0, 0x3f, 0x00, 0x00, 0x20,
    0x40, 0x0a, 0x0e, 0x0a, 0x01, 0x63, 0x12, 0x09, 0x0a, 0x07, 0x0a, 0x01, 0x78, 0x0a, 0x02, 0x79, 0x7a, 0x0a, 0x15, 0x0a,
    0x01, 0x62, 0x12, 0x10, 0x1a, 0x0e, 0x0a, 0x0c, 0x03, 0xfc, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x05};

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t next_rand(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (uint32_t)rng;
}

static bool str_is(const tfc_tensor *t, int64_t i, const char *want) {
    size_t n;
    const char *s = tfc_tensor_string(t, i, &n);
    return s && n == strlen(want) && !memcmp(s, want, n);
}

static tfc_example *sample(float a0, int n_b, bool with_c) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_example *ex = tfc_example_new(&st);
    REQUIRE(ex);
    const float a[2] = {a0, a0 + 1};
    const int64_t b[3] = {3, -4, INT64_MIN};
    REQUIRE(tfc_example_set_floats(ex, "a", a, 2, &st));
    if (with_c) REQUIRE(tfc_example_set_bytes(ex, "c", (const char *const[]){"x", "yz"}, NULL, 2, &st));
    REQUIRE(tfc_example_set_int64s(ex, "b", b, n_b, &st));
    return ex;
}

static void test_builder_bytes(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_example *ex = tfc_example_new(&st);
    REQUIRE(ex);
    REQUIRE(tfc_example_set_floats(ex, "a", (const float[]){1.5f, 2.5f}, 2, &st));
    REQUIRE(tfc_example_set_bytes(ex, "c", (const char *const[]){"x", "yz"}, NULL, 2, &st));
    REQUIRE(tfc_example_set_int64s(ex, "b", (const int64_t[]){7}, 1, &st));
    REQUIRE(tfc_example_set_int64s(ex, "b", (const int64_t[]){3, -4, 5}, 3, &st)); /* replaces */
    CHECK(tfc_example_num_features(ex) == 3);
    size_t n;
    char *s = tfc_example_serialize(ex, &n, &st);
    REQUIRE(s);
    CHECK(n == sizeof tf_bytes && !memcmp(s, tf_bytes, n));
    tfc_free(s);
    CHECK(tfc_example_remove(ex, "c") && !tfc_example_remove(ex, "c") && tfc_example_num_features(ex) == 2);
    CHECK(!tfc_example_set_floats(ex, NULL, NULL, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_example_free(ex);
    tfc_example_free(NULL);
}

static tfc_tensor *batch_of(tfc_example **ex, int n) {
    tfc_status st = TFC_STATUS_INIT;
    char *s[8];
    size_t len[8];
    for (int i = 0; i < n; i++) REQUIRE((s[i] = tfc_example_serialize(ex[i], &len[i], &st)));
    tfc_tensor *t = tfc_tensor_from_strings((const char *const *)s, len, (const int64_t[]){n}, 1, &st);
    for (int i = 0; i < n; i++) tfc_free(s[i]);
    REQUIRE(t);
    return t;
}

static void test_parse_batch(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_example *ex[3] = {sample(1, 3, true), sample(10, 1, false), sample(20, 0, true)};
    REQUIRE(tfc_example_set_empty(ex[2], "a", &st)); /* no kind: missing */
    tfc_tensor *ser = batch_of(ex, 3);
    const float dflt[2] = {-1, -2};
    tfc_tensor *def = tfc_tensor_from_data(TFC_FLOAT, (const int64_t[]){2}, 1, dflt, sizeof dflt, &st);
    REQUIRE(def);
    tfc_feature_spec f[5] = {
        {.key = "a", .kind = TFC_FIXED_LEN, .dtype = TFC_FLOAT, .rank = 1, .dims = {2}, .default_value = def},
        {.key = "b", .kind = TFC_VAR_LEN, .dtype = TFC_INT64},
        {.key = "c", .kind = TFC_RAGGED, .dtype = TFC_STRING, .row_splits_dtype = TFC_INT32},
        {.key = "b", .kind = TFC_FIXED_LEN_SEQUENCE, .dtype = TFC_INT64},
        {.key = "zz", .kind = TFC_FIXED_LEN_SEQUENCE, .dtype = TFC_FLOAT, .rank = 1, .dims = {3}},
    };
    tfc_parsed_feature out[5];
    REQUIRE(tfc_parse_example(ctx, ser, NULL, f, 5, out, &st));
    const float *a = tfc_tensor_data(out[0].values);
    CHECK(tfc_tensor_dim(out[0].values, 0) == 3 && a[0] == 1 && a[1] == 2 && a[2] == 10 && a[4] == -1 && a[5] == -2);
    const int64_t *bi = tfc_tensor_data(out[1].indices), *bv = tfc_tensor_data(out[1].values), *bs = tfc_tensor_data(out[1].dense_shape);
    CHECK(tfc_tensor_dim(out[1].values, 0) == 4 && bv[2] == INT64_MIN && bv[3] == 3);
    CHECK(bi[0] == 0 && bi[1] == 0 && bi[4] == 0 && bi[5] == 2 && bi[6] == 1 && bi[7] == 0 && bs[0] == 3 && bs[1] == 3);
    const int32_t *rs = tfc_tensor_data(out[2].row_splits);
    CHECK(tfc_tensor_dim(out[2].values, 0) == 4 && str_is(out[2].values, 3, "yz") && rs[0] == 0 && rs[1] == 2 &&
          rs[2] == 2 && rs[3] == 4);
    const int64_t *seq = tfc_tensor_data(out[3].values);
    CHECK(tfc_tensor_rank(out[3].values) == 2 && tfc_tensor_dim(out[3].values, 1) == 3 && seq[3] == 3 && seq[4] == 0 &&
          seq[8] == 0);
    CHECK(tfc_tensor_rank(out[4].values) == 3 && tfc_tensor_dim(out[4].values, 1) == 0 && tfc_tensor_dim(out[4].values, 2) == 3);
    for (int i = 0; i < 5; i++) {
        tfc_tensor_unref(out[i].values), tfc_tensor_unref(out[i].indices);
        tfc_tensor_unref(out[i].dense_shape), tfc_tensor_unref(out[i].row_splits);
    }
    /* errors name the key and the example */
    f[0].default_value = NULL;
    CHECK(!tfc_parse_example(ctx, ser, NULL, f, 1, out, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "ParseExampleV2") && strstr(st.msg, "Feature: a (data type: float) is required") &&
          strstr(st.msg, "Index: 2"));
    tfc_feature_spec wrong = {.key = "b", .kind = TFC_VAR_LEN, .dtype = TFC_FLOAT};
    CHECK(!tfc_parse_example(ctx, ser, NULL, &wrong, 1, out, &st));
    CHECK(strstr(st.msg, "Key: b, Index: 0.  Data types don't match. Expected type: float, Actual type: int64") != NULL);
    tfc_feature_spec three = {.key = "a", .kind = TFC_FIXED_LEN, .dtype = TFC_FLOAT, .rank = 1, .dims = {3}};
    CHECK(!tfc_parse_example(ctx, ser, NULL, &three, 1, out, &st));
    CHECK(strstr(st.msg, "Number of float values != expected.  Values size: 2 but output shape: [3]") != NULL);
    for (int i = 0; i < 3; i++) tfc_example_free(ex[i]);
    tfc_tensor_unref(ser);
    tfc_tensor_unref(def);
}

static void test_parse_single(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = (const char *)tf_bytes;
    size_t n = sizeof tf_bytes;
    tfc_tensor *ser = tfc_tensor_from_strings(&p, &n, NULL, 0, &st);
    REQUIRE(ser);
    tfc_feature_spec f[3] = {
        {.key = "c", .kind = TFC_FIXED_LEN, .dtype = TFC_STRING, .rank = 1, .dims = {2}},
        {.key = "b", .kind = TFC_VAR_LEN, .dtype = TFC_INT64},
        {.key = "a", .kind = TFC_RAGGED, .dtype = TFC_FLOAT},
    };
    tfc_parsed_feature out[3];
    REQUIRE(tfc_parse_single_example(ctx, ser, f, 3, out, &st));
    CHECK(str_is(out[0].values, 0, "x") && str_is(out[0].values, 1, "yz"));
    CHECK(tfc_tensor_dim(out[1].indices, 1) == 1 && tfc_tensor_get_f64(out[1].dense_shape, 0) == 3 &&
          tfc_tensor_get_f64(out[1].values, 1) == -4);
    CHECK(!out[2].row_splits && tfc_tensor_get_f64(out[2].values, 1) == 2.5);
    for (int i = 0; i < 3; i++) {
        tfc_tensor_unref(out[i].values), tfc_tensor_unref(out[i].indices);
        tfc_tensor_unref(out[i].dense_shape), tfc_tensor_unref(out[i].row_splits);
    }
    tfc_tensor_unref(ser);
}

/* Unpacked floats and int64s, lists split over several fields, features repeated (the last wins), unknown
 * fields: the encodings other writers produce. */
static void test_other_encodings(void) {
    tfc_status st = TFC_STATUS_INIT;
    static const unsigned char m[] = {
        0x0a, 0x3b,                                                              /* Example.features (59) */
        0x0a, 0x0c, 0x0a, 0x01, 'f', 0x12, 0x07, 0x12, 0x05, 0x0d, 0x00, 0x00, 0x80, 0x3f, /* f: float 1, unpacked */
        0x0a, 0x0f, 0x0a, 0x01, 'i', 0x12, 0x0a, 0x1a, 0x08, 0x08, 0x07, 0x0a, 0x02, 0x08, 0x09, 0x08, 0x05, /* i: 7, [8, 9], 5 */
        0x0a, 0x0c, 0x0a, 0x01, 'f', 0x12, 0x07, 0x12, 0x05, 0x0d, 0x00, 0x00, 0x00, 0x40, /* f again: 2 (wins) */
        0x0a, 0x0a, 0x12, 0x06, 0x0a, 0x04, 0x0a, 0x02, 'o', 'k', 0x0a, 0x00,    /* value before key, empty key */
        0x10, 0x01,                                                              /* an unknown varint field */
    };
    const char *p = (const char *)m;
    size_t n = sizeof m;
    tfc_tensor *ser = tfc_tensor_from_strings(&p, &n, (const int64_t[]){1}, 1, &st);
    REQUIRE(ser);
    tfc_feature_spec f[3] = {
        {.key = "f", .kind = TFC_VAR_LEN, .dtype = TFC_FLOAT},
        {.key = "i", .kind = TFC_VAR_LEN, .dtype = TFC_INT64},
        {.key = "", .kind = TFC_VAR_LEN, .dtype = TFC_STRING},
    };
    tfc_parsed_feature out[3];
    REQUIRE(tfc_parse_example(ctx, ser, NULL, f, 3, out, &st));
    CHECK(tfc_tensor_dim(out[0].values, 0) == 1 && tfc_tensor_get_f64(out[0].values, 0) == 2);
    const int64_t *iv = tfc_tensor_data(out[1].values);
    CHECK(tfc_tensor_dim(out[1].values, 0) == 4 && iv[0] == 7 && iv[1] == 8 && iv[2] == 9 && iv[3] == 5);
    CHECK(tfc_tensor_dim(out[2].values, 0) == 1 && str_is(out[2].values, 0, "ok"));
    for (int i = 0; i < 3; i++) {
        tfc_tensor_unref(out[i].values), tfc_tensor_unref(out[i].indices);
        tfc_tensor_unref(out[i].dense_shape), tfc_tensor_unref(out[i].row_splits);
    }
    tfc_tensor_unref(ser);
}

/* Damaged protos: truncations and random bytes. Each parse succeeds or fails with INVALID_ARGUMENT naming
 * the example; ASan checks that nothing is read out of bounds. */
static void test_fuzz(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_feature_spec f[4] = {
        {.key = "a", .kind = TFC_VAR_LEN, .dtype = TFC_FLOAT},
        {.key = "b", .kind = TFC_FIXED_LEN_SEQUENCE, .dtype = TFC_INT64},
        {.key = "c", .kind = TFC_RAGGED, .dtype = TFC_STRING},
        {.key = "a", .kind = TFC_FIXED_LEN, .dtype = TFC_FLOAT, .rank = 1, .dims = {2}},
    };
    unsigned char buf[sizeof tf_bytes];
    int ok = 0, bad = 0, other = 0;
    for (int it = 0; it < 3000; it++) {
        memcpy(buf, tf_bytes, sizeof buf);
        size_t len = sizeof buf;
        if (it % 3 == 0) len = next_rand() % sizeof buf;
        for (int k = 0; k < (int)(next_rand() % 3); k++) buf[next_rand() % sizeof buf] = (unsigned char)next_rand();
        const char *s[2] = {(const char *)tf_bytes, (const char *)buf};
        const size_t l[2] = {sizeof tf_bytes, len};
        tfc_tensor *ser = tfc_tensor_from_strings(s, l, (const int64_t[]){2}, 1, &st);
        REQUIRE(ser);
        tfc_parsed_feature out[4];
        if (tfc_parse_example(ctx, ser, NULL, f, 4, out, &st)) {
            ok++;
            for (int i = 0; i < 4; i++) {
                tfc_tensor_unref(out[i].values), tfc_tensor_unref(out[i].indices);
                tfc_tensor_unref(out[i].dense_shape), tfc_tensor_unref(out[i].row_splits);
            }
        } else if (st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "Index: 1")) {
            bad++;
        } else {
            other++;
            fprintf(stderr, "unexpected: %s: %s\n", tfc_code_name(st.code), st.msg);
        }
        tfc_tensor_unref(ser);
    }
    CHECK(other == 0 && bad > 0 && ok > 0);
    printf("damaged examples: %d parsed, %d rejected\n", ok, bad);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_builder_bytes();
    test_parse_batch();
    test_parse_single();
    test_other_encodings();
    test_fuzz();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
