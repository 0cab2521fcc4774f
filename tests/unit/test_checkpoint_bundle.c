/* Tensor bundles: the table format (round trip across many blocks, Snappy blocks), the bundle writer and reader
 * (values of every dtype family back equal), and bad files (bit flips, truncation, entries out of range), which
 * must fail with DATA_LOSS / INVALID_ARGUMENT naming the file, never crash. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "platform/file_io.h"
#include "proto/proto_internal.h"
#include "proto/tensor_bundle.pb-c.h"
#include "saved_model/bundle.h"
#include "saved_model/table.h"
#include "tfc_test.h"

static char dir[256];

static void test_crc(void) {
    CHECK(tfc_crc32c("123456789", 9) == 0xE3069283u);
    CHECK(tfc_crc32c_unmask(tfc_crc32c_mask(0x12345678u)) == 0x12345678u);
}

static void test_table_round_trip(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_table_builder *b = tfc_table_builder_new(64, &st); /* tiny blocks: many data blocks and restarts */
    REQUIRE(b);
    char key[64], val[64];
    for (int i = 0; i < 300; i++) {
        snprintf(key, sizeof key, "layer_%04d/kernel", i);
        snprintf(val, sizeof val, "value-%d", i * 7);
        REQUIRE(tfc_table_builder_add(b, key, strlen(key), val, strlen(val), &st));
    }
    CHECK(!tfc_table_builder_add(b, "a", 1, "x", 1, &st) && st.code == TFC_INVALID_ARGUMENT);
    uint8_t *file;
    size_t size;
    REQUIRE(tfc_table_builder_finish(b, &file, &size, &st));
    tfc_table_builder_free(b);
    tfc_table t;
    REQUIRE(tfc_table_parse(file, size, "t", &t, &st));
    CHECK(t.n == 300);
    for (size_t i = 0; i < t.n; i++) {
        snprintf(key, sizeof key, "layer_%04d/kernel", (int)i);
        snprintf(val, sizeof val, "value-%d", (int)i * 7);
        CHECK(strcmp(t.entries[i].key, key) == 0);
        CHECK(t.entries[i].value_len == strlen(val) && memcmp(t.entries[i].value, val, strlen(val)) == 0);
    }
    const tfc_table_entry *e = tfc_table_find(&t, "layer_0123/kernel", 17);
    CHECK(e && memcmp(e->value, "value-861", 9) == 0);
    CHECK(!tfc_table_find(&t, "layer_0123/kerne", 16));
    tfc_table_free(&t);
    /* every single-byte corruption is refused or decodes without crashing; a flip inside a block fails its CRC */
    int refused = 0;
    for (size_t i = 0; i < size; i++) {
        file[i] ^= 0x40;
        tfc_status s2 = TFC_STATUS_INIT;
        if (!tfc_table_parse(file, size, "t", &t, &s2)) {
            refused++;
            CHECK(s2.code == TFC_DATA_LOSS && strncmp(s2.msg, "t: ", 3) == 0);
        } else {
            tfc_table_free(&t);
        }
        file[i] ^= 0x40;
    }
    CHECK(refused >= (int)size - 40); /* only padding bytes of the footer may go unnoticed */
    for (size_t n = 0; n < size; n += 7) {
        tfc_status s2 = TFC_STATUS_INIT;
        CHECK(!tfc_table_parse(file, n, "t", &t, &s2) && s2.code == TFC_DATA_LOSS);
    }
    tfc_free(file);
}

static void test_snappy(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* 12 bytes: a 3-byte literal "abc", then a copy of 9 bytes from 3 back (overlapping) */
    const uint8_t z[] = {12, 0x08, 'a', 'b', 'c', 0x15, 3};
    uint8_t *out;
    size_t n;
    REQUIRE(tfc_snappy_uncompress(z, sizeof z, 1 << 20, "s", &out, &n, &st));
    CHECK(n == 12 && memcmp(out, "abcabcabcabc", 12) == 0);
    tfc_free(out);
    const uint8_t far[] = {12, 0x08, 'a', 'b', 'c', 0x15, 4}; /* offset beyond the output */
    CHECK(!tfc_snappy_uncompress(far, sizeof far, 1 << 20, "s", &out, &n, &st) && st.code == TFC_DATA_LOSS);
    const uint8_t big[] = {0xff, 0xff, 0xff, 0xff, 0x0f};
    CHECK(!tfc_snappy_uncompress(big, sizeof big, 1 << 20, "s", &out, &n, &st) && st.code == TFC_DATA_LOSS);
    const uint8_t shortlit[] = {12, 0x2c, 'a'};
    CHECK(!tfc_snappy_uncompress(shortlit, sizeof shortlit, 1 << 20, "s", &out, &n, &st) && st.code == TFC_DATA_LOSS);
}

static void path_of(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void test_bundle_round_trip(void) {
    tfc_status st = TFC_STATUS_INIT;
    char prefix[512];
    path_of(prefix, sizeof prefix, "sub/ckpt-1");
    float f[6] = {1.5f, -2.25f, 3e-8f, 0, 1e30f, -7};
    int64_t i64[3] = {INT64_MIN, 0, INT64_MAX};
    const char *strs[3] = {"", "hello", "a\0b"};
    size_t lens[3] = {0, 5, 3};
    uint8_t bools[2] = {1, 0};
    tfc_tensor *tf = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, f, sizeof f, &st);
    tfc_tensor *ti = tfc_tensor_from_data(TFC_INT64, (int64_t[]){3}, 1, i64, sizeof i64, &st);
    tfc_tensor *ts = tfc_tensor_from_strings(strs, lens, (int64_t[]){3}, 1, &st);
    tfc_tensor *tb = tfc_tensor_from_data(TFC_BOOL, (int64_t[]){2}, 1, bools, 2, &st);
    tfc_tensor *te = tfc_tensor_new(TFC_HALF, (int64_t[]){0, 4}, 2, &st);
    tfc_tensor *sc = tfc_scalar_i64(42, &st);
    REQUIRE(tf && ti && ts && tb && te && sc);
    tfc_bundle_writer *w = tfc_bundle_writer_new(prefix, &st);
    REQUIRE(w);
    CHECK_OK(&st);
    REQUIRE(tfc_bundle_writer_add(w, "z/kernel", tf, &st));
    REQUIRE(tfc_bundle_writer_add(w, "a/ints", ti, &st));
    REQUIRE(tfc_bundle_writer_add(w, TFC_BUNDLE_OBJECT_GRAPH_KEY, ts, &st));
    REQUIRE(tfc_bundle_writer_add(w, "m/bools", tb, &st));
    REQUIRE(tfc_bundle_writer_add(w, "m/empty", te, &st));
    REQUIRE(tfc_bundle_writer_add(w, "save_counter", sc, &st));
    CHECK(!tfc_bundle_writer_add(w, "a/ints", ti, &st) && st.code == TFC_INVALID_ARGUMENT);
    char index[600];
    snprintf(index, sizeof index, "%s.index", prefix);
    CHECK(access(index, F_OK) != 0); /* nothing under the final names before finish */
    REQUIRE(tfc_bundle_writer_finish(w, &st));
    tfc_bundle_writer_free(w);

    tfc_checkpoint_reader *r = tfc_checkpoint_reader_new(prefix, &st);
    REQUIRE(r);
    CHECK(tfc_checkpoint_reader_size(r) == 6);
    CHECK(strcmp(tfc_checkpoint_reader_name(r, 0), TFC_BUNDLE_OBJECT_GRAPH_KEY) == 0);
    CHECK(strcmp(tfc_checkpoint_reader_name(r, 5), "z/kernel") == 0);
    CHECK(tfc_checkpoint_reader_name(r, 6) == NULL);
    int dt;
    tfc_shape sh;
    REQUIRE(tfc_checkpoint_reader_info(r, "z/kernel", &dt, &sh, &st));
    CHECK(dt == TFC_FLOAT && sh.rank == 2 && sh.dims[0] == 2 && sh.dims[1] == 3);
    CHECK(!tfc_checkpoint_reader_info(r, "nope", &dt, &sh, &st) && st.code == TFC_NOT_FOUND);
    tfc_tensor *g = tfc_checkpoint_reader_get_tensor(r, "z/kernel", &st);
    CHECK(g && tfc_tensor_byte_size(g) == sizeof f && memcmp(tfc_tensor_data(g), f, sizeof f) == 0);
    tfc_tensor_unref(g);
    g = tfc_checkpoint_reader_get_tensor(r, "a/ints", &st);
    CHECK(g && memcmp(tfc_tensor_data(g), i64, sizeof i64) == 0);
    tfc_tensor_unref(g);
    g = tfc_checkpoint_reader_get_tensor(r, TFC_BUNDLE_OBJECT_GRAPH_KEY, &st);
    REQUIRE(g);
    for (int i = 0; i < 3; i++) {
        size_t len;
        const char *s = tfc_tensor_string(g, i, &len);
        CHECK(len == lens[i] && memcmp(s, strs[i], len) == 0);
    }
    tfc_tensor_unref(g);
    g = tfc_checkpoint_reader_get_tensor(r, "m/bools", &st);
    CHECK(g && tfc_tensor_dtype(g) == TFC_BOOL && memcmp(tfc_tensor_data(g), bools, 2) == 0);
    tfc_tensor_unref(g);
    g = tfc_checkpoint_reader_get_tensor(r, "m/empty", &st);
    CHECK(g && tfc_tensor_dtype(g) == TFC_HALF && tfc_tensor_num_elements(g) == 0 && tfc_tensor_dim(g, 1) == 4);
    tfc_tensor_unref(g);
    g = tfc_checkpoint_reader_get_tensor(r, "save_counter", &st);
    CHECK(g && tfc_tensor_rank(g) == 0 && *(const int64_t *)tfc_tensor_data(g) == 42);
    tfc_tensor_unref(g);
    CHECK(!tfc_checkpoint_reader_get_tensor(r, "missing", &st) && st.code == TFC_NOT_FOUND);
    tfc_checkpoint_reader_free(r);

    /* a flipped byte in the data file: that tensor fails its CRC, the others still read */
    char data[600];
    tfc_bundle_shard_name(prefix, 0, 1, data, sizeof data);
    void *bytes;
    size_t size;
    REQUIRE(tfc_file_read_all(data, 0, &bytes, &size, &st));
    ((uint8_t *)bytes)[0] ^= 1; /* z/kernel was added first: offset 0 */
    REQUIRE(tfc_file_write_atomic(data, bytes, size, &st));
    r = tfc_checkpoint_reader_new(prefix, &st);
    REQUIRE(r);
    CHECK(!tfc_checkpoint_reader_get_tensor(r, "z/kernel", &st) && st.code == TFC_DATA_LOSS &&
          strstr(st.msg, "z/kernel") && strstr(st.msg, "checksum"));
    g = tfc_checkpoint_reader_get_tensor(r, "a/ints", &st);
    CHECK(g != NULL);
    tfc_tensor_unref(g);
    tfc_checkpoint_reader_free(r);
    /* a truncated data file: DATA_LOSS naming the shard */
    REQUIRE(tfc_file_write_atomic(data, bytes, 30, &st));
    r = tfc_checkpoint_reader_new(prefix, &st);
    REQUIRE(r);
    CHECK(!tfc_checkpoint_reader_get_tensor(r, "save_counter", &st) && st.code == TFC_DATA_LOSS &&
          strstr(st.msg, "past the end"));
    tfc_checkpoint_reader_free(r);
    tfc_free(bytes);
    /* a flipped byte in the index */
    REQUIRE(tfc_file_read_all(index, 0, &bytes, &size, &st));
    ((uint8_t *)bytes)[10] ^= 0x20;
    REQUIRE(tfc_file_write_atomic(index, bytes, size, &st));
    CHECK(!tfc_checkpoint_reader_new(prefix, &st) && st.code == TFC_DATA_LOSS && strstr(st.msg, ".index"));
    tfc_free(bytes);
    CHECK(!tfc_checkpoint_reader_new("/nonexistent/ckpt", &st) && st.code == TFC_NOT_FOUND);
    tfc_tensor_unref(tf);
    tfc_tensor_unref(ti);
    tfc_tensor_unref(ts);
    tfc_tensor_unref(tb);
    tfc_tensor_unref(te);
    tfc_tensor_unref(sc);
}

/* Writes an index whose one entry is e (header num_shards 1) and opens it. */
static tfc_bundle_reader *open_with_entry(const char *name, Tensorflow__BundleEntryProto *e, tfc_status *st) {
    char prefix[512], index[600];
    path_of(prefix, sizeof prefix, name);
    snprintf(index, sizeof index, "%s.index", prefix);
    Tensorflow__BundleHeaderProto h = TENSORFLOW__BUNDLE_HEADER_PROTO__INIT;
    h.num_shards = 1;
    uint8_t *hb, *eb, *file;
    size_t hl, el, fl;
    tfc_status s = TFC_STATUS_INIT;
    tfc_table_builder *b = tfc_table_builder_new(0, &s);
    REQUIRE(tfc_pb_pack(&h.base, &hb, &hl, "h", &s) && tfc_pb_pack(&e->base, &eb, &el, "e", &s));
    REQUIRE(tfc_table_builder_add(b, "", 0, hb, hl, &s) && tfc_table_builder_add(b, "v", 1, eb, el, &s));
    REQUIRE(tfc_table_builder_finish(b, &file, &fl, &s));
    REQUIRE(tfc_file_write_atomic(index, file, fl, &s));
    tfc_table_builder_free(b);
    tfc_free(hb);
    tfc_free(eb);
    tfc_free(file);
    char data[600];
    tfc_bundle_shard_name(prefix, 0, 1, data, sizeof data);
    REQUIRE(tfc_file_write_atomic(data, "0123456789abcdef", 16, &s));
    return tfc_bundle_open(prefix, st);
}

static void test_bad_entries(void) {
    tfc_status st = TFC_STATUS_INIT;
    Tensorflow__TensorShapeProto__Dim d = TENSORFLOW__TENSOR_SHAPE_PROTO__DIM__INIT, *dp = &d;
    Tensorflow__TensorShapeProto shape = TENSORFLOW__TENSOR_SHAPE_PROTO__INIT;
    shape.n_dim = 1;
    shape.dim = &dp;
    Tensorflow__BundleEntryProto e = TENSORFLOW__BUNDLE_ENTRY_PROTO__INIT;
    e.shape = &shape;
    e.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    d.size = 4;
    e.size = 16;
    e.crc32c = tfc_crc32c_mask(tfc_crc32c("0123456789abcdef", 16));
    tfc_bundle_reader *r = open_with_entry("ok", &e, &st);
    REQUIRE(r);
    tfc_tensor *t = tfc_bundle_read(r, "v", &st);
    CHECK(t && memcmp(tfc_tensor_data(t), "0123456789abcdef", 16) == 0);
    tfc_tensor_unref(t);
    tfc_bundle_close(r);

    e.dtype = 99;
    CHECK(!open_with_entry("dtype", &e, &st) && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "dtype") &&
          strstr(st.msg, "'v'"));
    e.dtype = TENSORFLOW__DATA_TYPE__DT_FLOAT;
    e.size = 12;
    CHECK(!open_with_entry("size", &e, &st) && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "size 12"));
    e.size = 16;
    e.shard_id = 1;
    CHECK(!open_with_entry("shard", &e, &st) && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "shard_id"));
    e.shard_id = 0;
    d.size = INT64_MAX / 2;
    Tensorflow__TensorShapeProto__Dim d2 = d, *dps[2] = {&d, &d2};
    shape.dim = dps;
    shape.n_dim = 2;
    CHECK(!open_with_entry("huge", &e, &st) && st.code == TFC_INVALID_ARGUMENT);
    shape.n_dim = 1;
    shape.dim = &dp;
    d.size = -1;
    CHECK(!open_with_entry("unknown", &e, &st) && st.code == TFC_INVALID_ARGUMENT);
    d.size = 4;
    e.offset = 8; /* 8 + 16 > 16 bytes in the shard */
    r = open_with_entry("offset", &e, &st);
    REQUIRE(r);
    CHECK(!tfc_bundle_read(r, "v", &st) && st.code == TFC_DATA_LOSS && strstr(st.msg, "offset 8"));
    tfc_bundle_close(r);
    e.offset = 0;
    e.crc32c ^= 1;
    r = open_with_entry("crc", &e, &st);
    REQUIRE(r);
    CHECK(!tfc_bundle_read(r, "v", &st) && st.code == TFC_DATA_LOSS);
    tfc_bundle_close(r);
    /* a string tensor claiming more elements than bytes */
    e.dtype = TENSORFLOW__DATA_TYPE__DT_STRING;
    d.size = 1000000;
    r = open_with_entry("strings", &e, &st);
    REQUIRE(r);
    CHECK(!tfc_bundle_read(r, "v", &st) && st.code == TFC_DATA_LOSS);
    tfc_bundle_close(r);
    e.dtype = TENSORFLOW__DATA_TYPE__DT_COMPLEX64;
    d.size = 2;
    r = open_with_entry("complex", &e, &st);
    REQUIRE(r);
    CHECK(tfc_bundle_find(r, "v")->dtype == 8);
    CHECK(!tfc_bundle_read(r, "v", &st) && st.code == TFC_UNIMPLEMENTED);
    tfc_bundle_close(r);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/tfc_ckpt_bundle_XXXXXX");
    REQUIRE(mkdtemp(dir));
    test_crc();
    test_table_round_trip();
    test_snappy();
    test_bundle_round_trip();
    test_bad_entries();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
