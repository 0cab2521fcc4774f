/* Lookup table ops run eagerly: HashTableV2 filled by InitializeTableV2 and by InitializeTableFromTextFileV2 (whole
 * line / line number / delimited columns, vocab_size, offset), MutableHashTableV2 inserts, imports, size and
 * export, string <-> int64 in both directions; and the errors: lookups before initialization, keys of the wrong
 * dtype, conflicting values, a missing vocabulary file and bad vocabulary lines (naming op, file and line). */
#define _POSIX_C_SOURCE 200809L
#include <sys/stat.h>
#include <unistd.h>

#include "tfc_test.h"

static tfc_ctx *ctx;
static char dir[256];

static tfc_tensor *strs(const char *const *s, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_from_strings(s, NULL, &n, 1, &st);
    REQUIRE(t);
    return t;
}

static tfc_tensor *i64s(const int64_t *v, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_from_data(TFC_INT64, &n, 1, v, (size_t)n * 8, &st);
    REQUIRE(t);
    return t;
}

static tfc_tensor *table(const char *op, tfc_dtype k, tfc_dtype v) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_attr a[] = {TFC_ATTR_T("key_dtype", k), TFC_ATTR_T("value_dtype", v), TFC_ATTR_S("shared_name", "t")};
    tfc_tensor *h = tfc_emit(ctx, op, NULL, 0, a, 3, &st);
    CHECK_OK(&st);
    REQUIRE(h);
    return h;
}

static tfc_tensor *find(tfc_tensor *h, tfc_tensor *keys, tfc_tensor *dflt, tfc_status *st) {
    tfc_tensor *r = tfc_emit(ctx, "LookupTableFindV2", (tfc_tensor *[]){h, keys, dflt}, 3, NULL, 0, st);
    tfc_tensor_unref(dflt);
    return r;
}

static bool run(const char *op, tfc_tensor *const *in, int n, const tfc_attr *a, int na, tfc_status *st) {
    return tfc_execute(ctx, op, in, n, a, na, NULL, 0, st) >= 0;
}

static const char *str_at(const tfc_tensor *t, int64_t i, size_t *n) {
    const tfc_tstring *s = (const tfc_tstring *)tfc_tensor_data(t) + i;
    *n = tfc_tstring_size(s);
    return tfc_tstring_data(s);
}

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fputs(text, f);
    fclose(f);
}

static void test_static_table(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *h = table("HashTableV2", TFC_STRING, TFC_INT64);
    tfc_tensor *q = strs((const char *[]){"b", "zz", "a"}, 3);
    tfc_tensor *r = find(h, q, tfc_scalar_i64(-1, &st), &st);
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION); /* not initialized */
    CHECK(!r && strstr(st.msg, "not initialized"));
    tfc_tensor *k = strs((const char *[]){"a", "b", "c"}, 3), *v = i64s((int64_t[]){10, 20, 30}, 3);
    tfc_status_clear(&st);
    CHECK(run("InitializeTableV2", (tfc_tensor *[]){h, k, v}, 3, NULL, 0, &st));
    CHECK_OK(&st);
    CHECK(run("InitializeTableV2", (tfc_tensor *[]){h, k, v}, 3, NULL, 0, &st)); /* the same entries again: fine */
    r = find(h, q, tfc_scalar_i64(-1, &st), &st);
    REQUIRE(r);
    const int64_t *d = tfc_tensor_data(r);
    CHECK(d[0] == 20 && d[1] == -1 && d[2] == 10);
    tfc_tensor_unref(r);
    tfc_tensor *sz = tfc_emit(ctx, "LookupTableSizeV2", &h, 1, NULL, 0, &st);
    REQUIRE(sz);
    CHECK(*(const int64_t *)tfc_tensor_data(sz) == 3);
    tfc_tensor_unref(sz);
    /* a conflicting value for a key */
    tfc_tensor *v2 = i64s((int64_t[]){10, 21, 30}, 3);
    CHECK(!run("InitializeTableV2", (tfc_tensor *[]){h, k, v2}, 3, NULL, 0, &st));
    CHECK(strstr(st.msg, "different value for same key") && strstr(st.msg, "'b'"));
    /* keys of the wrong dtype */
    tfc_tensor *iq = i64s((int64_t[]){1}, 1);
    tfc_status_clear(&st);
    CHECK(!find(h, iq, tfc_scalar_i64(0, &st), &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "LookupTableFindV2") && strstr(st.msg, "string keys, got int64"));
    /* a static table takes no inserts */
    CHECK(!run("LookupTableInsertV2", (tfc_tensor *[]){h, k, v}, 3, NULL, 0, &st));
    /* a variable op on a table handle, a table op on a float */
    tfc_tensor *f = tfc_scalar_f32(1, &st);
    CHECK(!run("LookupTableSizeV2", &f, 1, NULL, 0, &st));
    tfc_tensor_unref(f);
    tfc_tensor *x[] = {h, k, v, v2, iq, q};
    for (int i = 0; i < 6; i++) tfc_tensor_unref(x[i]);
}

static void test_mutable_table(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *h = table("MutableHashTableV2", TFC_INT64, TFC_STRING);
    enum { N = 300 }; /* past several growths */
    int64_t keys[N];
    char buf[N][16];
    const char *vals[N];
    for (int i = 0; i < N; i++) keys[i] = (int64_t)i * 7919 - 1000, snprintf(buf[i], 16, "v%d", i), vals[i] = buf[i];
    tfc_tensor *k = i64s(keys, N), *v = strs(vals, N);
    CHECK(run("LookupTableInsertV2", (tfc_tensor *[]){h, k, v}, 3, NULL, 0, &st));
    CHECK_OK(&st);
    tfc_tensor *k1 = i64s((int64_t[]){keys[5]}, 1), *v1 = strs((const char *[]){"changed"}, 1);
    CHECK(run("LookupTableInsertV2", (tfc_tensor *[]){h, k1, v1}, 3, NULL, 0, &st)); /* overwrites */
    tfc_tensor *q = i64s((int64_t[]){keys[5], 3, keys[N - 1]}, 3);
    tfc_tensor *r = find(h, q, tfc_tensor_from_strings((const char *[]){"UNK"}, NULL, NULL, 0, &st), &st);
    REQUIRE(r);
    size_t n;
    const char *s = str_at(r, 0, &n);
    CHECK(n == 7 && !memcmp(s, "changed", 7));
    s = str_at(r, 1, &n);
    CHECK(n == 3 && !memcmp(s, "UNK", 3));
    char want[16];
    snprintf(want, sizeof want, "v%d", N - 1);
    s = str_at(r, 2, &n);
    CHECK(n == strlen(want) && !memcmp(s, want, n));
    tfc_tensor_unref(r);
    /* export: every entry once */
    tfc_tensor *out[2] = {0};
    tfc_attr ea[] = {TFC_ATTR_T("Tkeys", TFC_INT64), TFC_ATTR_T("Tvalues", TFC_STRING)};
    CHECK(tfc_execute(ctx, "LookupTableExportV2", &h, 1, ea, 2, out, 2, &st) == 2);
    CHECK_OK(&st);
    REQUIRE(out[0] && out[1]);
    CHECK(tfc_tensor_num_elements(out[0]) == N && tfc_tensor_num_elements(out[1]) == N);
    int64_t sum = 0, want_sum = 0;
    for (int i = 0; i < N; i++) sum += ((const int64_t *)tfc_tensor_data(out[0]))[i], want_sum += keys[i];
    CHECK(sum == want_sum);
    /* import replaces the contents */
    tfc_tensor *k2 = i64s((int64_t[]){42}, 1), *v2 = strs((const char *[]){"only"}, 1);
    CHECK(run("LookupTableImportV2", (tfc_tensor *[]){h, k2, v2}, 3, NULL, 0, &st));
    tfc_tensor *sz = tfc_emit(ctx, "LookupTableSizeV2", &h, 1, NULL, 0, &st);
    REQUIRE(sz);
    CHECK(*(const int64_t *)tfc_tensor_data(sz) == 1);
    tfc_tensor *x[] = {h, k, v, k1, v1, q, out[0], out[1], k2, v2, sz};
    for (int i = 0; i < 11; i++) tfc_tensor_unref(x[i]);
}

/* InitializeTableFromTextFileV2 on `text` with these attrs; returns the status code, msg in st. */
static tfc_tensor *text_table(const char *text, tfc_dtype kd, tfc_dtype vd, int64_t ki, int64_t vi, int64_t vocab,
                              int64_t offset, tfc_status *st) {
    char path[300];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    if (text) write_file(path, text);
    else unlink(path);
    tfc_tensor *h = table("HashTableV2", kd, vd);
    tfc_tensor *fn = tfc_tensor_from_strings((const char *[]){path}, NULL, NULL, 0, st);
    tfc_attr a[] = {TFC_ATTR_I("key_index", ki), TFC_ATTR_I("value_index", vi), TFC_ATTR_I("vocab_size", vocab),
                    TFC_ATTR_I("offset", offset), TFC_ATTR_S("delimiter", ",")};
    bool ok = run("InitializeTableFromTextFileV2", (tfc_tensor *[]){h, fn}, 2, a, 5, st);
    tfc_tensor_unref(fn);
    if (!ok) tfc_tensor_unref(h);
    return ok ? h : NULL;
}

static void test_text_file(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* whole line -> line number (+ offset), with a CRLF line and no final newline */
    tfc_tensor *h = text_table("the\r\ncat\nsat", TFC_STRING, TFC_INT64, -2, -1, -1, 5, &st);
    CHECK_OK(&st);
    REQUIRE(h);
    tfc_tensor *words = strs((const char *[]){"sat", "the", "cat", "dog"}, 4);
    tfc_tensor *r = find(h, words, tfc_scalar_i64(-1, &st), &st);
    REQUIRE(r);
    const int64_t *d = tfc_tensor_data(r);
    CHECK(d[0] == 7 && d[1] == 5 && d[2] == 6 && d[3] == -1);
    tfc_tensor_unref(r);
    tfc_tensor_unref(words);
    tfc_tensor_unref(h);
    /* column 1 (int64) -> column 0 (string), the first 2 lines only */
    h = text_table("a,10\nb,20\nc,30\n", TFC_INT64, TFC_STRING, 1, 0, 2, 0, &st);
    CHECK_OK(&st);
    REQUIRE(h);
    tfc_tensor *q = i64s((int64_t[]){20, 30, 10}, 3);
    r = find(h, q, tfc_tensor_from_strings((const char *[]){"?"}, NULL, NULL, 0, &st), &st);
    REQUIRE(r);
    size_t n;
    CHECK(*str_at(r, 0, &n) == 'b' && n == 1);
    CHECK(*str_at(r, 1, &n) == '?' && n == 1);
    CHECK(*str_at(r, 2, &n) == 'a' && n == 1);
    tfc_tensor_unref(r);
    tfc_tensor_unref(q);
    tfc_tensor_unref(h);
    /* bad lines, a short file, a missing file */
    CHECK(!text_table("a,10\nb,x20\n", TFC_STRING, TFC_INT64, 0, 1, -1, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "InitializeTableFromTextFileV2") && strstr(st.msg, "vocab.txt line 2") && strstr(st.msg, "x20"));
    CHECK(!text_table("a,10\nb\n", TFC_STRING, TFC_INT64, 0, 1, -1, 0, &st));
    CHECK(strstr(st.msg, "columns") && strstr(st.msg, "vocab.txt line 2"));
    CHECK(!text_table("a,10\n", TFC_STRING, TFC_INT64, 0, 1, 3, 0, &st));
    CHECK(strstr(st.msg, "vocab_size"));
    CHECK(!text_table(NULL, TFC_STRING, TFC_INT64, -2, -1, -1, 0, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "vocab.txt") && strstr(st.msg, "InitializeTableFromTextFileV2"));
    CHECK(!text_table("a\n", TFC_STRING, TFC_STRING, -2, -1, -1, 0, &st)); /* line numbers are int64 */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tfc_test_lookup_%ld", tmp && tmp[0] ? tmp : "/tmp", (long)getpid());
    REQUIRE(mkdir(dir, 0700) == 0);
    test_static_table();
    test_mutable_table();
    test_text_file();
    char path[300];
    snprintf(path, sizeof path, "%s/vocab.txt", dir);
    unlink(path);
    rmdir(dir);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
