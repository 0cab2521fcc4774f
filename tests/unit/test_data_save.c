/* Dataset.save / Dataset.load / Dataset.snapshot (include/tfc/data_save.h): round trips of tuple and dict
 * elements with strings, GZIP, shard_func and reader_func; the on-disk layout; snapshot's write-then-read (the
 * input is not run again) and an interrupted write that is not read; corrupt, truncated and future-version files
 * and a wrong element_spec giving DATA_LOSS / INVALID_ARGUMENT naming the file and field. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "data_test_util.h"
#include "proto/snapshot.pb-c.h"
#include "tfc/data_more.h"
#include "tfc/data_save.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

/* (int64 i, {"s": string "e<i*7>", "v": float32 [i, -i]}) for i in [0, n) */
static tfc_dataset *sample(int n) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t *iv = malloc(sizeof *iv * (size_t)(n ? n : 1));
    float *fv = malloc(sizeof *fv * (size_t)(n ? 2 * n : 1));
    char **sv = malloc(sizeof *sv * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) {
        iv[i] = i;
        fv[2 * i] = (float)i;
        fv[2 * i + 1] = -(float)i;
        sv[i] = malloc(16);
        snprintf(sv[i], 16, "e%d", i * 7);
    }
    int64_t d1 = n, d2[2] = {n, 2};
    tfc_tensor *t[3] = {tfc_tensor_from_data(TFC_INT64, &d1, 1, iv, (size_t)n * 8, &st),
                        tfc_tensor_from_strings((const char *const *)sv, NULL, &d1, 1, &st),
                        tfc_tensor_from_data(TFC_FLOAT, d2, 2, fv, (size_t)n * 8, &st)};
    tfc_dataset *ds = tfc_dataset_from_tensor_slices(t, 3, "(.,{s:.,v:.})", &st);
    CHECK_OK(&st);
    for (int i = 0; i < 3; i++) tfc_tensor_unref(t[i]);
    for (int i = 0; i < n; i++) free(sv[i]);
    free(sv);
    free(iv);
    free(fv);
    return ds;
}

/* Reads every element, checking each one is sample's element i for the i it carries; returns the count, or -1
 * with st set. seen[i] counts element i. */
static int64_t read_sample(tfc_dataset *ds, int *seen, int n, tfc_status *st) {
    tfc_iterator *it = tfc_iterator_new(ds, st);
    if (!it) return -1;
    tfc_tensor *out[3];
    int64_t k = 0;
    while (tfc_iterator_next(it, out, 3, st)) {
        int64_t i = ((const int64_t *)tfc_tensor_data(out[0]))[0];
        CHECK(i >= 0 && i < n);
        if (i >= 0 && i < n) seen[i]++;
        char want[16];
        snprintf(want, sizeof want, "e%d", (int)i * 7);
        size_t len = 0;
        const char *s = tfc_tensor_string(out[1], 0, &len);
        CHECK(len == strlen(want) && !memcmp(s, want, len));
        const float *f = tfc_tensor_data(out[2]);
        CHECK(tfc_tensor_num_elements(out[2]) == 2 && f[0] == (float)i && f[1] == -(float)i);
        for (int c = 0; c < 3; c++) tfc_tensor_unref(out[c]);
        k++;
    }
    tfc_iterator_free(it);
    if (st->code != TFC_OUT_OF_RANGE) return -1;
    tfc_status_clear(st);
    return k;
}

static bool shard_mod3(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       tfc_status *st) {
    int64_t i = ((const int64_t *)tfc_tensor_data(in[0]))[0];
    out[0] = tfc_scalar_i64(i % 3, st);
    return out[0] != NULL;
}

static bool shard_bad(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      tfc_status *st) {
    out[0] = tfc_scalar_i32(1, st);
    return out[0] != NULL;
}

static int reader_calls;
/* The shards one after the other (concatenate), in reverse. */
static tfc_dataset *reader_concat(void *user, tfc_dataset *const *shards, int n, tfc_status *st) {
    reader_calls++;
    tfc_dataset *ds = tfc_dataset_ref(shards[n - 1]);
    for (int i = n - 2; i >= 0; i--) ds = tfc_dataset_concatenate(ds, tfc_dataset_ref(shards[i]), st);
    return ds;
}

static int count_entries(const char *path, const char *suffix) {
    DIR *d = opendir(path);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        size_t l = strlen(e->d_name), s = strlen(suffix);
        if (l > s && !strcmp(e->d_name + l - s, suffix)) n++;
    }
    closedir(d);
    return n;
}

/* The run directory named by <p>/snapshot.metadata, through the C message. */
static void read_meta(const char *p, char *run_id, size_t size, bool *finalized, int64_t *num) {
    char file[600];
    snprintf(file, sizeof file, "%s/snapshot.metadata", p);
    FILE *f = fopen(file, "rb");
    REQUIRE(f);
    static uint8_t buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    Tensorflow__Data__Experimental__SnapshotMetadataRecord *m =
        tensorflow__data__experimental__snapshot_metadata_record__unpack(NULL, n, buf);
    REQUIRE(m);
    snprintf(run_id, size, "%s", m->run_id);
    *finalized = m->finalized;
    *num = m->num_elements;
    CHECK(m->version == 2);
    tensorflow__data__experimental__snapshot_metadata_record__free_unpacked(m, NULL);
}

static void write_meta(const char *p, const char *run_id, int64_t version, bool finalized, int64_t num,
                       const Tensorflow__DataType *dts, size_t n_dt) {
    Tensorflow__Data__Experimental__SnapshotMetadataRecord m = TENSORFLOW__DATA__EXPERIMENTAL__SNAPSHOT_METADATA_RECORD__INIT;
    m.run_id = (char *)run_id;
    m.version = version;
    m.finalized = finalized;
    m.num_elements = num;
    m.dtype = (Tensorflow__DataType *)dts;
    m.n_dtype = n_dt;
    static uint8_t buf[4096];
    size_t n = tensorflow__data__experimental__snapshot_metadata_record__pack(&m, buf);
    char file[600];
    snprintf(file, sizeof file, "%s/snapshot.metadata", p);
    FILE *f = fopen(file, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(buf, 1, n, f) == n);
    fclose(f);
}

static void test_round_trip(void) {
    const char *comps[] = {NULL, "GZIP"};
    for (int c = 0; c < 2; c++) {
        tfc_status st = TFC_STATUS_INIT;
        const char *p = path_of(c ? "rt_gzip" : "rt_none");
        tfc_dataset *src = sample(25);
        CHECK(tfc_dataset_save(src, p, &(tfc_save_opts){.compression = comps[c]}, &st));
        CHECK_OK(&st);
        tfc_dataset_unref(src);
        char run_id[64], path[700];
        bool fin = false;
        int64_t num = 0;
        read_meta(p, run_id, sizeof run_id, &fin, &num);
        CHECK(fin && num == 25);
        snprintf(path, sizeof path, "%s/%s", p, run_id);
        CHECK(count_entries(path, ".shard") == 1); /* no shard_func: everything in shard 0 */
        snprintf(path, sizeof path, "%s/%s/00000000.shard/00000000.snapshot", p, run_id);
        struct stat sb;
        CHECK(stat(path, &sb) == 0);
        snprintf(path, sizeof path, "%s/dataset_spec.pb", p);
        CHECK(stat(path, &sb) == 0);
        /* load with the stored element_spec: same order, structure and spec */
        tfc_dataset *ds = tfc_dataset_load(p, &(tfc_load_opts){.compression = comps[c]}, &st);
        CHECK_OK(&st);
        REQUIRE(ds);
        CHECK(!strcmp(tfc_dataset_structure(ds), "(.,{s:.,v:.})"));
        CHECK(tfc_dataset_cardinality(ds) == 25);
        tfc_tensor_spec v = tfc_dataset_component_spec(ds, 2);
        CHECK(v.dtype == TFC_FLOAT && v.shape.rank == 1 && v.shape.dims[0] == 2);
        int64_t got[32];
        CHECK(drain_i64(ds, 0, got, 32, &st) == 25);
        for (int i = 0; i < 25; i++) CHECK(got[i] == i);
        int seen[25] = {0};
        CHECK(read_sample(ds, seen, 25, &st) == 25);
        tfc_dataset_unref(ds);
        /* the wrong compression: DATA_LOSS naming the chunk file */
        ds = tfc_dataset_load(p, &(tfc_load_opts){.compression = c ? NULL : "GZIP"}, &st);
        CHECK_OK(&st);
        tfc_status e = TFC_STATUS_INIT;
        CHECK(read_sample(ds, seen, 25, &e) == -1);
        CHECK_CODE(&e, TFC_DATA_LOSS);
        CHECK(strstr(e.msg, "00000000.snapshot") != NULL);
        tfc_dataset_unref(ds);
    }
}

static void test_shards_and_reader(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = path_of("sharded");
    tfc_dataset *src = sample(20);
    CHECK(tfc_dataset_save(src, p, &(tfc_save_opts){.shard_func = shard_mod3}, &st));
    CHECK_OK(&st);
    char run_id[64], path[700];
    bool fin;
    int64_t num;
    read_meta(p, run_id, sizeof run_id, &fin, &num);
    snprintf(path, sizeof path, "%s/%s", p, run_id);
    CHECK(count_entries(path, ".shard") == 3);
    /* default reader: round robin over the shards 0, 1, 2 */
    tfc_dataset *ds = tfc_dataset_load(p, NULL, &st);
    CHECK_OK(&st);
    int64_t got[32];
    CHECK(drain_i64(ds, 0, got, 32, &st) == 20);
    int64_t want[20] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19};
    CHECK(same_i64(got, want, 20));
    tfc_dataset_unref(ds);
    /* a reader_func: shard 2, then 1, then 0 */
    reader_calls = 0;
    ds = tfc_dataset_load(p, &(tfc_load_opts){.reader_func = reader_concat}, &st);
    CHECK_OK(&st);
    CHECK(reader_calls == 1);
    CHECK(drain_i64(ds, 0, got, 32, &st) == 20);
    CHECK(got[0] == 2 && got[1] == 5 && got[6] == 1 && got[19] == 18);
    tfc_dataset_unref(ds);
    /* a shard_func that does not return an int64 scalar */
    CHECK(!tfc_dataset_save(src, path_of("badshard"), &(tfc_save_opts){.shard_func = shard_bad}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "scalar int64") != NULL);
    tfc_status_clear(&st);
    CHECK(!tfc_dataset_save(src, path_of("snappy"), &(tfc_save_opts){.compression = "SNAPPY"}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_dataset_unref(src);
    /* an empty dataset */
    src = sample(0);
    CHECK(tfc_dataset_save(src, path_of("empty"), NULL, &st));
    CHECK_OK(&st);
    tfc_dataset_unref(src);
    ds = tfc_dataset_load(path_of("empty"), NULL, &st);
    CHECK_OK(&st);
    CHECK(tfc_dataset_cardinality(ds) == 0);
    CHECK(drain_i64(ds, 0, got, 32, &st) == 0);
    tfc_dataset_unref(ds);
}

static void corrupt_byte(const char *file, long off) {
    FILE *f = fopen(file, "r+b");
    REQUIRE(f);
    fseek(f, off, off < 0 ? SEEK_END : SEEK_SET);
    int c = fgetc(f);
    fseek(f, -1, SEEK_CUR);
    fputc(c ^ 0x55, f);
    fclose(f);
}

static void test_bad_input(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = path_of("bad");
    tfc_dataset *src = sample(10);
    CHECK(tfc_dataset_save(src, p, NULL, &st));
    tfc_dataset_unref(src);
    char run_id[64], chunk[700];
    bool fin;
    int64_t num;
    read_meta(p, run_id, sizeof run_id, &fin, &num);
    snprintf(chunk, sizeof chunk, "%s/%s/00000000.shard/00000000.snapshot", p, run_id);
    int seen[10] = {0};
    /* a flipped data byte: DATA_LOSS naming the chunk file */
    corrupt_byte(chunk, 20);
    tfc_dataset *ds = tfc_dataset_load(p, NULL, &st);
    CHECK_OK(&st);
    CHECK(read_sample(ds, seen, 10, &st) == -1);
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, chunk) != NULL);
    tfc_status_clear(&st);
    tfc_dataset_unref(ds);
    corrupt_byte(chunk, 20);
    /* truncated inside a record, then at a record boundary inside an element, then at an element boundary */
    struct stat sb;
    REQUIRE(stat(chunk, &sb) == 0);
    REQUIRE(truncate(chunk, sb.st_size - 5) == 0);
    ds = tfc_dataset_load(p, NULL, &st);
    CHECK(read_sample(ds, seen, 10, &st) == -1);
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, chunk) && strstr(st.msg, "truncated"));
    tfc_status_clear(&st);
    tfc_dataset_unref(ds);
    /* the file holds the first 9 elements exactly (3 records each): the count check notices */
    src = sample(9);
    char p9[600];
    snprintf(p9, sizeof p9, "%s", path_of("nine"));
    CHECK(tfc_dataset_save(src, p9, NULL, &st));
    tfc_dataset_unref(src);
    char run9[64], chunk9[700];
    read_meta(p9, run9, sizeof run9, &fin, &num);
    snprintf(chunk9, sizeof chunk9, "%s/%s/00000000.shard/00000000.snapshot", p9, run9);
    char cmd[2000];
    snprintf(cmd, sizeof cmd, "cp %s %s", chunk9, chunk);
    REQUIRE(system(cmd) == 0);
    ds = tfc_dataset_load(p, NULL, &st);
    CHECK(read_sample(ds, seen, 10, &st) == -1);
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "num_elements") != NULL);
    tfc_status_clear(&st);
    tfc_dataset_unref(ds);
    /* a wrong element_spec: dtypes that differ from the metadata's */
    tfc_tensor_spec wrong[3] = {{TFC_INT32, {0, {0}}}, {TFC_STRING, {0, {0}}}, {TFC_FLOAT, {1, {2}}}};
    ds = tfc_dataset_load(p9, &(tfc_load_opts){.structure = "(.,{s:.,v:.})", .element_spec = wrong}, &st);
    CHECK(!ds);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "snapshot.metadata") && strstr(st.msg, "dtype"));
    tfc_status_clear(&st);
    ds = tfc_dataset_load(p9, &(tfc_load_opts){.structure = "(.,.)"}, &st);
    CHECK(!ds);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    /* the right dtypes with a wrong shape: the element is refused */
    tfc_tensor_spec shape3[3] = {{TFC_INT64, {0, {0}}}, {TFC_STRING, {0, {0}}}, {TFC_FLOAT, {1, {3}}}};
    ds = tfc_dataset_load(p9, &(tfc_load_opts){.structure = "(.,{s:.,v:.})", .element_spec = shape3}, &st);
    CHECK_OK(&st);
    CHECK(read_sample(ds, seen, 10, &st) == -1);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_dataset_unref(ds);
    /* a metadata file from a future version, one that is not finalized, a bad run_id, garbage, none */
    const Tensorflow__DataType dts[3] = {TENSORFLOW__DATA_TYPE__DT_INT64, TENSORFLOW__DATA_TYPE__DT_STRING,
                                         TENSORFLOW__DATA_TYPE__DT_FLOAT};
    write_meta(p9, run9, 3, true, 9, dts, 3);
    CHECK(!tfc_dataset_load(p9, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "snapshot.metadata") && strstr(st.msg, "version 3"));
    tfc_status_clear(&st);
    write_meta(p9, run9, 2, false, 9, dts, 3);
    CHECK(!tfc_dataset_load(p9, NULL, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, "finalized") != NULL);
    tfc_status_clear(&st);
    write_meta(p9, "../x", 2, true, 9, dts, 3);
    CHECK(!tfc_dataset_load(p9, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "run_id") != NULL);
    tfc_status_clear(&st);
    char file[700];
    snprintf(file, sizeof file, "%s/snapshot.metadata", p9);
    FILE *f = fopen(file, "wb");
    REQUIRE(f);
    fputs("\xff\xff\xff", f);
    fclose(f);
    CHECK(!tfc_dataset_load(p9, NULL, &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "snapshot.metadata") != NULL);
    tfc_status_clear(&st);
    CHECK(!tfc_dataset_load(path_of("nothing_here"), NULL, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    tfc_status_clear(&st);
}

static int upstream_calls;
static bool count_calls(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                        tfc_status *st) {
    __atomic_add_fetch(&upstream_calls, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < n_in; i++) out[i] = tfc_tensor_ref(in[i]);
    return true;
}

static tfc_dataset *counted(int n, const char *path, const char *comp, tfc_status *st) {
    tfc_tensor_spec specs[3] = {{TFC_INT64, {0, {0}}}, {TFC_STRING, {0, {0}}}, {TFC_FLOAT, {1, {2}}}};
    tfc_dataset *ds = tfc_dataset_map(sample(n), count_calls, NULL,
                                      &(tfc_map_opts){.output_structure = "(.,{s:.,v:.})", .output_spec = specs}, st);
    return tfc_dataset_snapshot(ds, path, &(tfc_snapshot_opts){.compression = comp}, st);
}

static void test_snapshot(void) {
    const char *comps[] = {NULL, "GZIP"};
    for (int c = 0; c < 2; c++) {
        tfc_status st = TFC_STATUS_INIT;
        const char *p = path_of(c ? "snap_gzip" : "snap_auto");
        int seen[30] = {0};
        /* an interrupted first pass: nothing is finalized, and the next pass writes again */
        tfc_dataset *ds = counted(30, p, comps[c], &st);
        CHECK_OK(&st);
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        tfc_tensor *out[3];
        for (int i = 0; i < 5; i++) {
            CHECK(tfc_iterator_next(it, out, 3, &st));
            for (int k = 0; k < 3; k++) tfc_tensor_unref(out[k]);
        }
        tfc_iterator_free(it);
        CHECK(count_entries(p, "") >= 1);
        upstream_calls = 0;
        memset(seen, 0, sizeof seen);
        CHECK(read_sample(ds, seen, 30, &st) == 30);
        CHECK(upstream_calls == 30);
        /* the fingerprint directory holds a finalized metadata file now */
        DIR *d = opendir(p);
        REQUIRE(d);
        struct dirent *e;
        char hash_dir[700] = {0};
        while ((e = readdir(d)))
            if (e->d_name[0] != '.') snprintf(hash_dir, sizeof hash_dir, "%s/%s", p, e->d_name);
        closedir(d);
        char run_id[64];
        bool fin = false;
        int64_t num = 0;
        read_meta(hash_dir, run_id, sizeof run_id, &fin, &num);
        CHECK(fin && num == 30);
        CHECK(count_entries(hash_dir, "") == 3); /* snapshot.metadata and two run directories */
        tfc_dataset_unref(ds);
        /* a second pass, through a new dataset of the same pipeline: read from the files */
        ds = counted(30, p, comps[c], &st);
        upstream_calls = 0;
        memset(seen, 0, sizeof seen);
        CHECK(read_sample(ds, seen, 30, &st) == 30);
        CHECK(upstream_calls == 0);
        for (int i = 0; i < 30; i++) CHECK(seen[i] == 1);
        tfc_dataset_unref(ds);
        /* a different pipeline (29 elements) gets its own fingerprint */
        ds = counted(29, p, comps[c], &st);
        upstream_calls = 0;
        CHECK(read_sample(ds, seen, 30, &st) == 29);
        CHECK(upstream_calls == 29);
        tfc_dataset_unref(ds);
    }
    tfc_status st = TFC_STATUS_INIT;
    CHECK(!tfc_dataset_snapshot(sample(3), path_of("x"), &(tfc_snapshot_opts){.compression = "LZ4"}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tfc_test_data_save_%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    REQUIRE(mkdir(dir, 0700) == 0);
    int64_t live0 = tfc_tensor_live_count();
    test_round_trip();
    test_shards_and_reader();
    test_bad_input();
    test_snapshot();
    CHECK(tfc_tensor_live_count() == live0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
