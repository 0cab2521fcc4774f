/* .npy reading and writing: every dtype round trip, NumPy's own header spellings, and every rejection. */
#include "tfc_test.h"

static tfc_tensor *parse_str(const char *header, const void *body, size_t body_len, tfc_status *st) {
    uint8_t buf[512];
    size_t h = strlen(header);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (uint8_t)h;
    buf[9] = 0;
    memcpy(buf + 10, header, h);
    memcpy(buf + 10 + h, body, body_len);
    return tfc_npy_parse(buf, 10 + h + body_len, 0, st);
}

static void test_roundtrip(void) {
    tfc_status st = TFC_STATUS_INIT;
    const tfc_dtype dts[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_INT32, TFC_INT64, TFC_INT16,
                             TFC_INT8,  TFC_UINT8,  TFC_UINT16, TFC_BOOL};
    const int64_t dims[3] = {2, 1, 3};
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int rank = 0; rank <= 3; rank++) {
            tfc_tensor *t = tfc_tensor_new(dts[d], dims, rank, &st);
            REQUIRE(t);
            void *p = tfc_tensor_mutable_data(t);
            for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++)
                tfc_dtype_set_f64(dts[d], p, i, dts[d] == TFC_BOOL ? (double)(i & 1) : (double)(i * 3 % 7));
            void *bytes;
            size_t n;
            REQUIRE(tfc_npy_serialize(t, &bytes, &n, &st));
            CHECK((n - tfc_tensor_byte_size(t)) % 64 == 0); /* header padded to 64 bytes, as NumPy */
            tfc_tensor *u = tfc_npy_parse(bytes, n, 0, &st);
            CHECK_OK(&st);
            CHECK(u && tfc_tensor_dtype(u) == dts[d] && tfc_shape_equal(tfc_tensor_shape(u), tfc_tensor_shape(t)) &&
                  !memcmp(tfc_tensor_data(u), tfc_tensor_data(t), tfc_tensor_byte_size(t)));
            tfc_tensor_unref(u);
            tfc_free(bytes);
            tfc_tensor_unref(t);
        }
    const char *strs[3] = {"ab", "", "longer one"};
    tfc_tensor *s = tfc_tensor_from_strings(strs, NULL, (const int64_t[]){3}, 1, &st);
    REQUIRE(s);
    CHECK(tfc_npy_write(s, "test_npy_strings.npy", &st));
    tfc_tensor *u = tfc_npy_read("test_npy_strings.npy", &st);
    REQUIRE(u);
    size_t len;
    CHECK(tfc_tensor_dtype(u) == TFC_STRING && !strcmp(tfc_tensor_string(u, 2, &len), "longer one") && len == 10);
    CHECK(tfc_tensor_string(u, 1, &len) && len == 0);
    remove("test_npy_strings.npy");
    tfc_tensor_unref(u);
    tfc_tensor_unref(s);
    tfc_tensor *bf = tfc_tensor_new(TFC_BFLOAT16, NULL, 0, &st);
    void *bytes;
    size_t n;
    CHECK(!tfc_npy_serialize(bf, &bytes, &n, &st) && strstr(st.msg, "bfloat16 tensors have no .npy dtype"));
    tfc_tensor_unref(bf);
    CHECK(!tfc_npy_read("no/such.npy", &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
}

static void test_headers(void) {
    tfc_status st = TFC_STATUS_INIT;
    const float f2[2] = {1.5f, -2.0f};
    /* spellings NumPy and older writers use: double quotes, no trailing comma, Python 2 longs, key order */
    tfc_tensor *t = parse_str("{\"shape\": (2L,), \"fortran_order\": False, \"descr\": \"<f4\"}\n", f2, 8, &st);
    CHECK(t && tfc_tensor_rank(t) == 1 && tfc_tensor_get_f64(t, 1) == -2.0);
    tfc_tensor_unref(t);
    /* unicode: two elements of '<U2' -> UTF-8 ("é" is U+00E9; trailing NULs stripped) */
    const uint32_t u[4] = {0xe9, 0x41, 0x7a, 0};
    t = parse_str("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", u, sizeof u, &st);
    size_t len;
    CHECK(t && !strcmp(tfc_tensor_string(t, 0, &len), "\xc3\xa9" "A") && len == 3);
    CHECK(t && !strcmp(tfc_tensor_string(t, 1, &len), "z") && len == 1);
    tfc_tensor_unref(t);
    const struct { const char *header; size_t body; tfc_code code; const char *needle; } bad[] = {
        {"{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8, TFC_INVALID_ARGUMENT, "big-endian"},
        {"{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 16, TFC_INVALID_ARGUMENT, "not supported"},
        {"{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16, TFC_INVALID_ARGUMENT, "not supported"},
        {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, TFC_INVALID_ARGUMENT, "fortran_order"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-2,), }", 0, TFC_INVALID_ARGUMENT, "non-negative"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4, TFC_INVALID_ARGUMENT, "rank"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 0, TFC_INVALID_ARGUMENT, "overflow"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", 0, TFC_INVALID_ARGUMENT, "exceed the limit"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8, TFC_DATA_LOSS, "8 data bytes, but shape"},
        {"{'descr': '<f4', 'fortran_order': False, }", 8, TFC_INVALID_ARGUMENT, "lacks"},
        {"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", 8, TFC_INVALID_ARGUMENT, "repeated"},
        {"{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", 8, TFC_INVALID_ARGUMENT, "malformed"},
        {"{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", 8, TFC_INVALID_ARGUMENT, "True or False"},
        {"['descr']", 8, TFC_INVALID_ARGUMENT, "not a dict"},
        {"{'descr': '<U99999999999', 'fortran_order': False, 'shape': (1,)}", 0, TFC_INVALID_ARGUMENT, "item size"},
    };
    const uint8_t zeros[64] = {0};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        t = parse_str(bad[i].header, zeros, bad[i].body, &st);
        tfc_test_checks++;
        if (t || st.code != bad[i].code || !strstr(st.msg, bad[i].needle)) {
            tfc_test_failures++;
            fprintf(stderr, "bad header %zu: got %s: %s\n", i, tfc_code_name(st.code), st.msg);
        }
        tfc_tensor_unref(t);
    }
    const uint32_t surrogate[1] = {0xd800};
    CHECK(!parse_str("{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", surrogate, 4, &st) &&
          strstr(st.msg, "invalid code point 0xd800"));
    CHECK(!tfc_npy_parse("\x93NUMPX\x01\x00\x00\x00", 10, 0, &st) && strstr(st.msg, "bad magic"));
    CHECK(!tfc_npy_parse("\x93NUMPY\x04\x00\x00\x00", 10, 0, &st) && strstr(st.msg, "version 4.0"));
    CHECK(!tfc_npy_parse("\x93NUMPY\x01\x00\xff\x00", 10, 0, &st) && strstr(st.msg, "does not fit"));
    CHECK(!tfc_npy_parse(NULL, 0, 0, &st));
}

int main(void) {
    test_roundtrip();
    test_headers();
    TEST_MAIN_END();
}
