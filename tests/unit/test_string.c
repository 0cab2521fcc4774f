/* String ops through their typed wrappers: split (whitespace and separator, maxsplit), join, length,
 * substr, to_number and as_string (formats, errors), decode_csv (quotes, defaults, na_value, select_cols). */
#include "tfc_test.h"
#include "tfc/ops/string.h"

static tfc_ctx *ctx;

static tfc_tensor *strs(const char *const *s, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_from_strings(s, NULL, &n, 1, &st);
    REQUIRE(t);
    return t;
}

static bool str_is(const tfc_tensor *t, int64_t i, const char *want) {
    size_t n;
    const char *s = tfc_tensor_string(t, i, &n);
    return s && n == strlen(want) && !memcmp(s, want, n);
}

static void test_split(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *in = strs((const char *[]){"  a b\tc ", "", "x,,y"}, 3), *idx, *val, *shape;
    REQUIRE(tfc_string_split(ctx, in, NULL, -1, &idx, &val, &shape, &st));
    const int64_t *ix = tfc_tensor_data(idx), *sh = tfc_tensor_data(shape);
    CHECK(tfc_tensor_dim(val, 0) == 4 && str_is(val, 0, "a") && str_is(val, 2, "c") && str_is(val, 3, "x,,y"));
    CHECK(ix[0] == 0 && ix[1] == 0 && ix[4] == 0 && ix[5] == 2 && ix[6] == 2 && ix[7] == 0 && sh[0] == 3 && sh[1] == 3);
    tfc_tensor_unref(idx), tfc_tensor_unref(val), tfc_tensor_unref(shape);
    REQUIRE(tfc_string_split(ctx, in, ",", 1, &idx, &val, &shape, &st));
    CHECK(tfc_tensor_dim(val, 0) == 4 && str_is(val, 0, "  a b\tc ") && str_is(val, 1, "") && str_is(val, 2, "x") &&
          str_is(val, 3, ",y"));
    tfc_tensor_unref(idx), tfc_tensor_unref(val), tfc_tensor_unref(shape);
    /* TensorFlow's maxsplit quirk: after the last allowed split the (empty) rest is a token */
    tfc_tensor *one = strs((const char *[]){"a b"}, 1);
    REQUIRE(tfc_string_split(ctx, one, "", 2, &idx, &val, &shape, &st));
    CHECK(tfc_tensor_dim(val, 0) == 3 && str_is(val, 2, ""));
    tfc_tensor_unref(idx), tfc_tensor_unref(val), tfc_tensor_unref(shape);
    REQUIRE(tfc_string_split(ctx, one, "", 1, &idx, &val, &shape, &st));
    CHECK(tfc_tensor_dim(val, 0) == 2 && str_is(val, 1, "b"));
    tfc_tensor_unref(idx), tfc_tensor_unref(val), tfc_tensor_unref(shape);
    tfc_tensor_unref(one);
    tfc_tensor_unref(in);
}

static void test_join_length_substr(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *a = strs((const char *[]){"ab", "h\xc3\xa9llo"}, 2);
    const char *x = "-x-";
    tfc_tensor *s = tfc_tensor_from_strings(&x, NULL, NULL, 0, &st);
    tfc_tensor *j = tfc_string_join(ctx, (const tfc_tensor *const[]){a, s, a}, 3, "|", &st);
    tfc_tensor *lb = tfc_string_length(ctx, a, false, &st), *lu = tfc_string_length(ctx, a, true, &st);
    tfc_tensor *sub = tfc_substr(ctx, a, -2, 1, false, &st), *su = tfc_substr(ctx, a, 1, 2, true, &st);
    CHECK_OK(&st);
    REQUIRE(j && lb && lu && sub && su);
    CHECK(str_is(j, 0, "ab|-x-|ab") && str_is(j, 1, "h\xc3\xa9llo|-x-|h\xc3\xa9llo"));
    CHECK(tfc_tensor_get_f64(lb, 1) == 6 && tfc_tensor_get_f64(lu, 1) == 5);
    CHECK(str_is(sub, 0, "a") && str_is(sub, 1, "l") && str_is(su, 0, "b") && str_is(su, 1, "\xc3\xa9l"));
    CHECK(!tfc_substr(ctx, a, 3, 1, false, &st));
    CHECK(strstr(st.msg, "Substr: pos 3 out of range for string b'ab' at index 0") != NULL);
    tfc_tensor *z = tfc_string_join(ctx, NULL, 0, NULL, &st);
    REQUIRE(z);
    CHECK(tfc_tensor_rank(z) == 0 && str_is(z, 0, ""));
    tfc_tensor *ts[] = {a, s, j, lb, lu, sub, su, z};
    for (size_t i = 0; i < 8; i++) tfc_tensor_unref(ts[i]);
}

static void test_numbers(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *in = strs((const char *[]){" 1.5", "-2e3 ", "0x10", "inf", "-7"}, 5);
    tfc_tensor *f = tfc_string_to_number(ctx, in, TFC_FLOAT, &st), *d = tfc_string_to_number(ctx, in, TFC_DOUBLE, &st);
    REQUIRE(f && d);
    CHECK(tfc_tensor_get_f64(f, 0) == 1.5 && tfc_tensor_get_f64(d, 1) == -2000 && tfc_tensor_get_f64(d, 2) == 16 &&
          isinf(tfc_tensor_get_f64(f, 3)) && tfc_tensor_get_f64(f, 4) == -7);
    CHECK(!tfc_string_to_number(ctx, in, TFC_INT32, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!strcmp(st.msg, "StringToNumberOp could not correctly convert string:  1.5"));
    tfc_tensor *ints = strs((const char *[]){"+12", " -9223372036854775808 ", "007"}, 3);
    tfc_tensor *i64 = tfc_string_to_number(ctx, ints, TFC_INT64, &st);
    REQUIRE(i64);
    const int64_t *iv = tfc_tensor_data(i64);
    CHECK(iv[0] == 12 && iv[1] == INT64_MIN && iv[2] == 7);
    CHECK(!tfc_string_to_number(ctx, ints, TFC_INT32, &st));
    /* as_string */
    const float fv[3] = {1.5f, -0.25f, 1e20f};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (const int64_t[]){3}, 1, fv, sizeof fv, &st);
    tfc_tensor *s1 = tfc_as_string(ctx, x, -1, false, false, -1, NULL, &st);
    tfc_tensor *s2 = tfc_as_string(ctx, x, 2, true, false, 12, "0", &st);
    tfc_tensor *s3 = tfc_as_string(ctx, x, -1, false, true, 8, "-", &st);
    REQUIRE(s1 && s2 && s3);
    CHECK(str_is(s1, 0, "1.500000") && str_is(s1, 2, "100000002004087734272.000000"));
    CHECK(str_is(s2, 1, "-0002.50e-01") && str_is(s3, 0, "1.5     ") && str_is(s3, 2, "1e+20   "));
    const int32_t nv[2] = {7, -7};
    tfc_tensor *n = tfc_tensor_from_data(TFC_INT32, (const int64_t[]){2}, 1, nv, sizeof nv, &st);
    tfc_tensor *ns = tfc_as_string(ctx, n, -1, false, false, 4, "+", &st);
    REQUIRE(ns);
    CHECK(str_is(ns, 0, "  +7") && str_is(ns, 1, "  -7"));
    CHECK(!tfc_as_string(ctx, n, 2, false, false, -1, NULL, &st));
    CHECK(strstr(st.msg, "precision not supported for datatype int32") != NULL);
    CHECK(!tfc_as_string(ctx, x, -1, true, true, -1, NULL, &st));
    CHECK(!tfc_as_string(ctx, x, -1, false, false, -1, "x", &st));
    CHECK(strstr(st.msg, "Fill argument not supported: \"x\"") != NULL);
    tfc_tensor *ts[] = {in, f, d, ints, i64, x, s1, s2, s3, n, ns};
    for (size_t i = 0; i < 11; i++) tfc_tensor_unref(ts[i]);
}

static void test_csv(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *rec = strs((const char *[]){"1,\"a,\"\"b\"\"\",2.5,9", ",,NA,", "3,x, 4 ,"}, 3);
    const int32_t d0 = -1;
    const char *ds = "dflt";
    const double d2 = 0.5;
    tfc_tensor *def[4];
    def[0] = tfc_tensor_from_data(TFC_INT32, (const int64_t[]){1}, 1, &d0, 4, &st);
    def[1] = tfc_tensor_from_strings(&ds, NULL, (const int64_t[]){1}, 1, &st);
    def[2] = tfc_tensor_from_data(TFC_DOUBLE, NULL, 0, &d2, 8, &st);
    def[3] = tfc_tensor_new(TFC_INT64, (const int64_t[]){1}, 1, &st);
    REQUIRE(def[0] && def[1] && def[2] && def[3]);
    tfc_tensor *out[4] = {0};
    REQUIRE(tfc_decode_csv(ctx, rec, (const tfc_tensor *const *)def, 4, &(tfc_decode_csv_attrs){.na_value = "NA"}, out, &st));
    CHECK(tfc_tensor_get_f64(out[0], 0) == 1 && tfc_tensor_get_f64(out[0], 1) == -1 && tfc_tensor_get_f64(out[0], 2) == 3);
    CHECK(str_is(out[1], 0, "a,\"b\"") && str_is(out[1], 1, "dflt") && str_is(out[1], 2, "x"));
    CHECK(tfc_tensor_get_f64(out[2], 0) == 2.5 && tfc_tensor_get_f64(out[2], 1) == 0.5 && tfc_tensor_get_f64(out[2], 2) == 4);
    CHECK(tfc_tensor_get_f64(out[3], 0) == 9 && tfc_tensor_get_f64(out[3], 2) == 0);
    for (int i = 0; i < 4; i++) tfc_tensor_unref(out[i]);
    /* select_cols and errors */
    REQUIRE(tfc_decode_csv(ctx, rec, (const tfc_tensor *const *)def, 1,
                           &(tfc_decode_csv_attrs){.select_cols = (const int64_t[]){0}, .n_select_cols = 1}, out, &st));
    CHECK(tfc_tensor_get_f64(out[0], 2) == 3);
    tfc_tensor_unref(out[0]);
    CHECK(!tfc_decode_csv(ctx, rec, (const tfc_tensor *const *)def, 3, NULL, out, &st));
    CHECK(strstr(st.msg, "DecodeCSV: Expect 3 fields but have 4 in record 0") != NULL);
    tfc_tensor *empty = tfc_tensor_new(TFC_INT32, (const int64_t[]){0}, 1, &st);
    const tfc_tensor *req[4] = {empty, def[1], def[2], def[3]};
    CHECK(!tfc_decode_csv(ctx, rec, req, 4, NULL, out, &st));
    CHECK(strstr(st.msg, "Field 0 is required but missing in record 1!") != NULL);
    tfc_tensor_unref(empty);
    for (int i = 0; i < 4; i++) tfc_tensor_unref(def[i]);
    tfc_tensor_unref(rec);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_split();
    test_join_length_substr();
    test_numbers();
    test_csv();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
