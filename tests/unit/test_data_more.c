/* include/tfc/data_more.h from C: scan / reduce / take_while with C callbacks, unique on strings, rebatch across
 * input batches, group_by_window with a C reduce function, choose_from_datasets errors, counter, and bad input:
 * CSV rows that are short, long, unparsable, missing a required field or end inside a quote (INVALID_ARGUMENT
 * naming the file and record, the next record still read), fixed-length files of the wrong size (plain:
 * INVALID_ARGUMENT, GZIP: DATA_LOSS, naming the file), constructor argument errors; no tensor leaks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data_test_util.h"
#include "tfc/data_more.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void write_text(const char *path, const void *s, size_t n) {
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(s, 1, n, f) == n);
    fclose(f);
}

static void unref2(tfc_tensor **t) {
    tfc_tensor_unref(t[0]);
    tfc_tensor_unref(t[1]);
    t[0] = t[1] = NULL;
}

static tfc_dataset *names1(const char *path, tfc_status *st) { return tfc_dataset_from_strings(&path, 1, st); }

/* scan: state s, element x -> (s + x, s * 10) */
static bool scan_fn(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    tfc_status *st) {
    (void)ctx, (void)user, (void)n_in, (void)n_out;
    int64_t s = (int64_t)tfc_tensor_get_f64(in[0], 0), x = (int64_t)tfc_tensor_get_f64(in[1], 0);
    out[0] = tfc_scalar_i64(s + x, st);
    out[1] = tfc_scalar_i64(s * 10, st);
    return out[0] && out[1];
}

static bool sum_fn(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                   tfc_status *st) {
    (void)ctx, (void)user, (void)n_in, (void)n_out;
    out[0] = tfc_scalar_i64((int64_t)tfc_tensor_get_f64(in[0], 0) + (int64_t)tfc_tensor_get_f64(in[1], 0), st);
    return out[0] != NULL;
}

static bool below5(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, bool *keep, tfc_status *st) {
    (void)ctx, (void)user, (void)n_in, (void)st;
    *keep = tfc_tensor_get_f64(in[0], 0) < 5;
    return true;
}

static bool mod3(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                 tfc_status *st) {
    (void)ctx, (void)user, (void)n_in, (void)n_out;
    out[0] = tfc_scalar_i64((int64_t)tfc_tensor_get_f64(in[0], 0) % 3, st);
    return out[0] != NULL;
}

static tfc_dataset *batch_all(tfc_ctx *ctx, void *user, tfc_tensor *key, tfc_dataset *window, tfc_status *st) {
    (void)ctx, (void)user, (void)key;
    return tfc_dataset_batch(tfc_dataset_ref(window), 100, NULL, st);
}

static void test_stateful(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t v[16];
    tfc_tensor *zero = tfc_scalar_i64(0, &st);
    tfc_tensor_spec os = {TFC_INT64, {0, {0}}};
    tfc_scan_opts so = {.output_spec = &os};
    tfc_dataset *ds = tfc_dataset_scan(tfc_dataset_range(1, 6, 1, 0, &st), &zero, 1, scan_fn, NULL, &so, &st);
    CHECK_OK(&st);
    CHECK(tfc_dataset_cardinality(ds) == 5);
    CHECK(drain_i64(ds, 0, v, 16, &st) == 5);
    CHECK(same_i64(v, (int64_t[]){0, 10, 30, 60, 100}, 5));
    tfc_dataset_unref(ds);

    tfc_tensor *out = NULL;
    ds = tfc_dataset_range(0, 101, 1, 0, &st);
    CHECK(tfc_dataset_reduce(ds, &zero, 1, sum_fn, NULL, &out, &st));
    CHECK(out && tfc_tensor_get_f64(out, 0) == 5050);
    tfc_tensor_unref(out);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_repeat(tfc_dataset_range(0, 2, 1, 0, &st), -1, &st);
    CHECK(!tfc_dataset_reduce(ds, &zero, 1, sum_fn, NULL, &out, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_dataset_unref(ds);
    tfc_tensor_unref(zero);

    ds = tfc_dataset_take_while(tfc_dataset_range(0, 100, 1, 0, &st), below5, NULL, NULL, &st);
    CHECK(drain_i64(ds, 0, v, 16, &st) == 5 && v[4] == 4);
    tfc_dataset_unref(ds);

    const char *words[] = {"b", "a", "b", "", "a", "c", ""};
    ds = tfc_dataset_unique(tfc_dataset_from_strings(words, 7, &st), &st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    const char *want[] = {"b", "a", "", "c"};
    int k = 0;
    tfc_tensor *e = NULL;
    while (tfc_iterator_next(it, &e, 1, &st)) {
        size_t len = 0;
        const char *s = tfc_tensor_string(e, 0, &len);
        CHECK(k < 4 && len == strlen(want[k]) && !memcmp(s, want[k], len));
        k++;
        tfc_tensor_unref(e);
    }
    CHECK(k == 4 && st.code == TFC_OUT_OF_RANGE);
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);

    /* rebatch 3 over batches of 4 of 0..9: [0 1 2] [3 4 5] [6 7 8] [9] */
    ds = tfc_dataset_rebatch(tfc_dataset_batch(tfc_dataset_range(0, 10, 1, 0, &st), 4, NULL, &st), (int64_t[]){3}, 1,
                             false, &st);
    CHECK_OK(&st);
    it = tfc_iterator_new(ds, &st);
    int64_t rows[4] = {0};
    k = 0;
    while (tfc_iterator_next(it, &e, 1, &st)) {
        rows[k++ & 3] = tfc_tensor_shape(e)->dims[0];
        tfc_tensor_unref(e);
    }
    CHECK(k == 4 && same_i64(rows, (int64_t[]){3, 3, 3, 1}, 4));
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    CHECK(!tfc_dataset_rebatch(tfc_dataset_range(0, 3, 1, 0, &st), (int64_t[]){2}, 1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT); /* scalars are not batches */
    tfc_status_clear(&st);

    ds = tfc_dataset_counter(7, -2, TFC_INT32, &st);
    CHECK(tfc_dataset_cardinality(ds) == TFC_INFINITE_CARDINALITY);
    tfc_dataset *head = tfc_dataset_take(ds, 3, &st);
    CHECK(drain_i64(head, 0, v, 16, &st) == 3);
    CHECK(same_i64(v, (int64_t[]){7, 5, 3}, 3));
    tfc_dataset_unref(head);
}

static void test_grouping(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t v[32];
    tfc_tensor_spec s = {TFC_INT64, {1, {-1}}};
    tfc_group_by_window_opts go = {.output_spec = &s};
    tfc_dataset *ds = tfc_dataset_group_by_window(tfc_dataset_range(0, 10, 1, 0, &st), mod3, batch_all, NULL, 2, &go,
                                                  &st);
    CHECK_OK(&st);
    tfc_dataset *flat = tfc_dataset_unbatch(ds, &st);
    CHECK(drain_i64(flat, 0, v, 32, &st) == 10);
    CHECK(same_i64(v, (int64_t[]){0, 3, 1, 4, 2, 5, 6, 9, 7, 8}, 10));
    tfc_dataset_unref(flat);
    CHECK(!tfc_dataset_group_by_window(tfc_dataset_range(0, 3, 1, 0, &st), mod3, batch_all, NULL, 0, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);

    tfc_dataset *ins[2] = {tfc_dataset_range(0, 3, 1, 0, &st), tfc_dataset_range(10, 12, 1, 0, &st)};
    int64_t choice[] = {1, 0, 2};
    tfc_tensor *ct = vec64(choice, 3);
    tfc_dataset *sel = tfc_dataset_from_tensor_slices(&ct, 1, NULL, &st);
    tfc_tensor_unref(ct);
    ds = tfc_dataset_choose_from_datasets(ins, 2, sel, true, &st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *e = NULL;
    CHECK(tfc_iterator_next(it, &e, 1, &st) && tfc_tensor_get_f64(e, 0) == 10);
    tfc_tensor_unref(e);
    CHECK(tfc_iterator_next(it, &e, 1, &st) && tfc_tensor_get_f64(e, 0) == 0);
    tfc_tensor_unref(e);
    CHECK(!tfc_iterator_next(it, &e, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Selector index out of range") != NULL);
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);

    /* mismatched inputs */
    tfc_dataset *bad[2] = {tfc_dataset_range(0, 3, 1, 0, &st), tfc_dataset_range(0, 3, 1, TFC_INT32, &st)};
    CHECK(!tfc_dataset_sample_from_datasets(bad, 2, NULL, 1, true, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_dataset *two[2] = {tfc_dataset_range(0, 3, 1, 0, &st), tfc_dataset_range(0, 3, 1, 0, &st)};
    CHECK(!tfc_dataset_sample_from_datasets(two, 2, (double[]){0, 0}, 1, true, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
}

/* Drains a CSV dataset of one int64 column and one string column: values of column 0, -1 per error; errors'
 * messages must name the file. */
static int drain_csv(tfc_dataset *ds, int64_t *vals, int max, const char *file, tfc_status *st) {
    tfc_iterator *it = tfc_iterator_new(ds, st);
    int k = 0;
    for (int guard = 0; it && guard < 100; guard++) {
        tfc_tensor *e[2] = {0};
        if (tfc_iterator_next(it, e, 2, st)) {
            if (k < max) vals[k] = (int64_t)tfc_tensor_get_f64(e[0], 0);
            k++;
            unref2(e);
            continue;
        }
        if (st->code == TFC_OUT_OF_RANGE) break;
        CHECK(st->code == TFC_INVALID_ARGUMENT);
        CHECK(strstr(st->msg, file) != NULL);
        if (k < max) vals[k] = -1;
        k++;
    }
    tfc_iterator_free(it);
    tfc_status_clear(st);
    return k;
}

static void test_csv_bad_input(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = path_of("bad.csv");
    const char text[] = "1,a\n"          /* ok */
                        "2\n"            /* short */
                        "3,b,extra\n"    /* long */
                        "x4,c\n"         /* not an int64 */
                        ",d\n"           /* required field missing */
                        "5,\"q\"\"\"\n"  /* ok: q" */
                        "6,\"ab\"c\n"    /* text after the closing quote */
                        "7,e\r\n"        /* ok */
                        "8,\"open";      /* unterminated quote at the end */
    write_text(p, text, sizeof text - 1);
    int64_t zero = 0;
    tfc_tensor *defs[2] = {tfc_tensor_from_data(TFC_INT64, (int64_t[]){0}, 1, &zero, 0, &st), NULL};
    const char *dflt = "dflt";
    defs[1] = tfc_tensor_from_strings(&dflt, NULL, (int64_t[]){1}, 1, &st);
    tfc_dataset *ds = tfc_dataset_csv(names1(p, &st), defs, 2, NULL, &st);
    CHECK_OK(&st);
    CHECK(!strcmp(tfc_dataset_structure(ds), "(.,.)"));
    int64_t v[16];
    int n = drain_csv(ds, v, 16, "bad.csv", &st);
    CHECK(n == 9);
    CHECK(same_i64(v, (int64_t[]){1, -1, -1, -1, -1, 5, -1, 7, -1}, 9));
    tfc_dataset_unref(ds);

    /* a truncated last row, and the same file through GZIP */
    const char trunc[] = "1,a\n2,b\n3";
    const char *g = path_of("trunc.csv.gz");
    gzFile gz = gzopen(g, "wb");
    REQUIRE(gz);
    REQUIRE(gzwrite(gz, trunc, sizeof trunc - 1) == (int)(sizeof trunc - 1));
    gzclose(gz);
    ds = tfc_dataset_csv(names1(g, &st), defs, 2, &(tfc_csv_opts){.compression_type = "GZIP"}, &st);
    CHECK(drain_csv(ds, v, 16, "trunc.csv.gz", &st) == 3 && same_i64(v, (int64_t[]){1, 2, -1}, 3));
    tfc_dataset_unref(ds);

    /* constructor errors */
    CHECK(!tfc_dataset_csv(names1(p, &st), defs, 2, &(tfc_csv_opts){.select_cols = (int64_t[]){1, 0}, .n_select = 2},
                           &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_tensor *bad = tfc_scalar(TFC_BOOL, 1, &st);
    CHECK(!tfc_dataset_csv(names1(p, &st), &bad, 1, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_tensor_unref(bad);
    ds = tfc_dataset_csv(names1(path_of("missing.csv"), &st), defs, 2, NULL, &st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *e[2];
    CHECK(!tfc_iterator_next(it, e, 2, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "missing.csv") != NULL);
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    unref2(defs);
}

static void test_fixed_length_bad_input(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = path_of("rec.bin");
    write_text(p, "HHabcdefgFF", 11); /* body 7 bytes: not a multiple of 3 */
    const char *ok = path_of("ok.bin");
    write_text(ok, "HHabcdefFF", 10);
    const char *files[2] = {p, ok};
    tfc_dataset *ds = tfc_dataset_fixed_length_record(tfc_dataset_from_strings(files, 2, &st), 3, 2, 2, NULL, &st);
    CHECK_OK(&st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *e = NULL;
    CHECK(!tfc_iterator_next(it, &e, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "rec.bin") && strstr(st.msg, "body length 7 bytes"));
    tfc_status_clear(&st);
    size_t len = 0;
    CHECK(tfc_iterator_next(it, &e, 1, &st)); /* the next file is read */
    CHECK(!memcmp(tfc_tensor_string(e, 0, &len), "abc", 3) && len == 3);
    tfc_tensor_unref(e);
    CHECK(tfc_iterator_next(it, &e, 1, &st));
    tfc_tensor_unref(e);
    CHECK(!tfc_iterator_next(it, &e, 1, &st));
    CHECK_CODE(&st, TFC_OUT_OF_RANGE);
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);

    const char *g = path_of("rec.bin.gz");
    gzFile gz = gzopen(g, "wb");
    REQUIRE(gz);
    REQUIRE(gzwrite(gz, "HHabcdefgFF", 11) == 11);
    gzclose(gz);
    ds = tfc_dataset_fixed_length_record(names1(g, &st), 3, 2, 2, &(tfc_reader_opts){.compression_type = "GZIP"},
                                         &st);
    it = tfc_iterator_new(ds, &st);
    for (int i = 0; i < 2; i++) {
        CHECK(tfc_iterator_next(it, &e, 1, &st));
        tfc_tensor_unref(e);
    }
    CHECK(!tfc_iterator_next(it, &e, 1, &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "rec.bin.gz") != NULL);
    tfc_status_clear(&st);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    CHECK(!tfc_dataset_fixed_length_record(names1(p, &st), 0, 0, 0, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tfc_test_data_more_%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    REQUIRE(mkdir(dir, 0700) == 0);
    int64_t live0 = tfc_tensor_live_count();
    test_stateful();
    test_grouping();
    test_csv_bad_input();
    test_fixed_length_bad_input();
    CHECK(tfc_tensor_live_count() == live0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
