/* tf.data file sources: CRC32C, the TFRecord writer (exact bytes) and reader, TFRecordDataset (compression, CRC
 * errors and truncation naming the file and record, parallel reads), TextLineDataset, list_files, cache files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data_test_util.h"

static char dir[256];

static const char *path_of(const char *name) {
    static char buf[4][512];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static size_t read_file(const char *path, unsigned char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    return n;
}

static void write_bytes(const char *path, const unsigned char *buf, size_t n) {
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(buf, 1, n, f) == n);
    fclose(f);
}

static bool write_records(const char *path, const char *comp, int n, tfc_status *st) {
    tfc_tfrecord_writer *w = tfc_tfrecord_writer_new(path, comp, -1, st);
    if (!w) return false;
    for (int i = 0; i < n; i++) {
        char rec[64];
        int len = snprintf(rec, sizeof rec, "record-%d-%s", i, i % 3 ? "x" : "a longer payload of bytes");
        if (!tfc_tfrecord_writer_write(w, rec, (size_t)len, st)) return false;
    }
    return tfc_tfrecord_writer_close(w, st);
}

/* Reads a TFRecordDataset and checks record i == "record-i-..."; returns the count or -1 (st set). */
static int check_records(tfc_dataset *ds, int *first_bad) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t;
    int n = 0;
    *first_bad = -1;
    while (tfc_iterator_next(it, &t, 1, &st)) {
        size_t len;
        const char *s = tfc_tensor_string(t, 0, &len);
        char want[64];
        int wl = snprintf(want, sizeof want, "record-%d-%s", n, n % 3 ? "x" : "a longer payload of bytes");
        if (*first_bad < 0 && (len != (size_t)wl || memcmp(s, want, len))) *first_bad = n;
        tfc_tensor_unref(t);
        n++;
    }
    tfc_iterator_free(it);
    return st.code == TFC_OUT_OF_RANGE ? n : -1;
}

static void test_crc(void) {
    CHECK(tfc_crc32c("123456789", 9) == 0xE3069283u);
    CHECK(tfc_crc32c("a", 1) == 0xc1d04330u);
    CHECK(tfc_crc32c_mask(tfc_crc32c("a", 1)) == 0x28e46e78u);
    CHECK(tfc_crc32c_unmask(tfc_crc32c_mask(0xdeadbeefu)) == 0xdeadbeefu);
    /* unaligned starts and lengths agree with a byte-at-a-time extension */
    unsigned char buf[300];
    for (int i = 0; i < 300; i++) buf[i] = (unsigned char)(i * 37 + 11);
    for (int off = 0; off < 9; off++) {
        uint32_t c = 0;
        for (int i = off; i < 300; i++) c = tfc_crc32c_extend(c, buf + i, 1);
        CHECK(c == tfc_crc32c(buf + off, 300 - (size_t)off));
    }
}

static void test_writer_bytes(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = path_of("hello.tfrecord");
    tfc_tfrecord_writer *w = tfc_tfrecord_writer_new(p, NULL, -1, &st);
    REQUIRE(w);
    CHECK(tfc_tfrecord_writer_write(w, "hello", 5, &st));
    CHECK(tfc_tfrecord_writer_close(w, &st));
    unsigned char got[64];
    const unsigned char want[] = {5, 0, 0, 0, 0, 0, 0, 0, 0xea, 0xb2, 0x04, 0x3e, 'h', 'e', 'l', 'l', 'o',
                                  0xbb, 0x1f, 0x1c, 0x19};
    CHECK(read_file(p, got, sizeof got) == sizeof want && !memcmp(got, want, sizeof want));
    p = path_of("two.tfrecord");
    w = tfc_tfrecord_writer_new(p, "", -1, &st);
    CHECK(tfc_tfrecord_writer_write(w, "first", 5, &st) && tfc_tfrecord_writer_write(w, "second", 6, &st));
    CHECK(tfc_tfrecord_writer_flush(w, &st) && tfc_tfrecord_writer_close(w, &st));
    const unsigned char want2[] = {5, 0, 0, 0, 0, 0, 0, 0, 0xea, 0xb2, 0x04, 0x3e, 'f', 'i', 'r', 's', 't', 0x55, 0xff,
                                   0x23, 0xe5, 6, 0, 0, 0, 0, 0, 0, 0, 0x73, 0x69, 0xd5, 0x37, 's', 'e', 'c', 'o', 'n',
                                   'd', 0xd3, 0xe0, 0xd3, 0xca};
    CHECK(read_file(p, got, sizeof got) == sizeof want2 && !memcmp(got, want2, sizeof want2));
    /* the public reader */
    tfc_tfrecord_reader *r = tfc_tfrecord_reader_new(p, NULL, 0, &st);
    const char *data;
    size_t len;
    CHECK(tfc_tfrecord_reader_next(r, &data, &len, &st) && len == 5 && !memcmp(data, "first", 5));
    CHECK(tfc_tfrecord_reader_next(r, &data, &len, &st) && len == 6 && !memcmp(data, "second", 6));
    CHECK(!tfc_tfrecord_reader_next(r, &data, &len, &st) && st.code == TFC_OUT_OF_RANGE);
    tfc_tfrecord_reader_free(r);
    /* errors */
    CHECK(!tfc_tfrecord_writer_new(path_of("x"), "LZ4", -1, &st) && st.code == TFC_INVALID_ARGUMENT);
    CHECK(!tfc_tfrecord_writer_new(path_of("no/such/dir/x"), NULL, -1, &st) && st.code == TFC_NOT_FOUND);
    CHECK(!tfc_tfrecord_reader_new(path_of("missing.tfrecord"), NULL, 0, &st) && st.code == TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "missing.tfrecord"));
}

static void test_dataset_compression(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *comps[] = {"", "GZIP", "ZLIB"};
    for (int c = 0; c < 3; c++) {
        char name[64];
        snprintf(name, sizeof name, "data-%d.tfrecord", c);
        const char *p = path_of(name);
        REQUIRE(write_records(p, comps[c], 1000, &st));
        /* a small buffer exercises refills of the compressed stream */
        tfc_dataset *ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(&p, 1, &st),
                                               &(tfc_reader_opts){.compression_type = comps[c], .buffer_size = 100},
                                               &st);
        CHECK_OK(&st);
        int bad;
        CHECK(check_records(ds, &bad) == 1000 && bad == -1);
        tfc_dataset_unref(ds);
    }
    /* a GZIP file of two concatenated members reads as one stream */
    unsigned char a[100000], b[100000];
    REQUIRE(write_records(path_of("m1"), "GZIP", 3, &st) && write_records(path_of("m2"), "GZIP", 3, &st));
    size_t na = read_file(path_of("m1"), a, sizeof a), nb = read_file(path_of("m2"), b, sizeof b);
    memcpy(a + na, b, nb);
    write_bytes(path_of("members.gz"), a, na + nb);
    const char *p = path_of("members.gz");
    tfc_dataset *ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(&p, 1, &st),
                                           &(tfc_reader_opts){.compression_type = "GZIP"}, &st);
    int64_t dummy[1];
    CHECK(drain_i64(ds, 0, dummy, 0, &st) == 6);
    tfc_dataset_unref(ds);
    /* a truncated GZIP stream is DATA_LOSS */
    write_bytes(path_of("trunc.gz"), a, na - 10);
    p = path_of("trunc.gz");
    ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(&p, 1, &st), &(tfc_reader_opts){.compression_type = "GZIP"},
                              &st);
    CHECK(drain_i64(ds, 0, dummy, 0, &st) == -1 && st.code == TFC_DATA_LOSS && strstr(st.msg, "trunc.gz"));
    tfc_dataset_unref(ds);
}

static void test_corruption(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *p = path_of("good.tfrecord");
    REQUIRE(write_records(p, NULL, 10, &st));
    unsigned char buf[4096];
    size_t n = read_file(p, buf, sizeof buf);
    /* record offsets */
    size_t off[11] = {0};
    for (int i = 0; i < 10; i++) {
        uint64_t len;
        memcpy(&len, buf + off[i], 8);
        off[i + 1] = off[i] + 16 + (size_t)len;
    }
    REQUIRE(off[10] == n);
    int bad;
    tfc_tensor *t;
    struct {
        const char *name;
        size_t flip;     /* byte to flip, or SIZE_MAX */
        size_t cut;      /* new length, or 0 */
        int good_before; /* records read before the error */
        const char *msg;
    } cases[] = {
        {"datacrc.tfrecord", off[4] + 14, 0, 4, "record 4: data CRC mismatch"},
        {"lencrc.tfrecord", off[6] + 1, 0, 6, "record 6: corrupted record (length CRC mismatch)"},
        {"trunchdr.tfrecord", SIZE_MAX, off[7] + 5, 7, "record 7: truncated record header"},
        {"truncdata.tfrecord", SIZE_MAX, off[9] + 20, 9, "record 9: truncated record"},
    };
    for (int c = 0; c < 4; c++) {
        unsigned char m[4096];
        memcpy(m, buf, n);
        if (cases[c].flip != SIZE_MAX) m[cases[c].flip] ^= 0x40;
        size_t mn = cases[c].cut ? cases[c].cut : n;
        const char *cp = path_of(cases[c].name);
        write_bytes(cp, m, mn);
        tfc_dataset *ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(&cp, 1, &st), NULL, &st);
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        int good = 0;
        while (tfc_iterator_next(it, &t, 1, &st)) {
            tfc_tensor_unref(t);
            good++;
        }
        CHECK(good == cases[c].good_before);
        CHECK_CODE(&st, TFC_DATA_LOSS);
        CHECK(strstr(st.msg, cases[c].name) && strstr(st.msg, cases[c].msg));
        if (!strstr(st.msg, cases[c].msg)) fprintf(stderr, "  got: %s\n", st.msg);
        /* after a data CRC error the next records follow; after lost framing the file ends */
        int after = 0;
        while (tfc_iterator_next(it, &t, 1, &st)) {
            tfc_tensor_unref(t);
            after++;
        }
        CHECK(st.code == TFC_OUT_OF_RANGE && after == (c == 0 ? 5 : 0));
        tfc_iterator_free(it);
        /* ignore_errors skips the bad record */
        ds = tfc_dataset_ignore_errors(ds, &st);
        int64_t dummy[1];
        CHECK(drain_i64(ds, 0, dummy, 0, &st) == (c == 0 ? 9 : cases[c].good_before));
        tfc_dataset_unref(ds);
    }
    /* truncation exactly at a record boundary reads cleanly */
    write_bytes(path_of("cut.tfrecord"), buf, off[5]);
    const char *cp = path_of("cut.tfrecord");
    tfc_dataset *ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(&cp, 1, &st), NULL, &st);
    CHECK(check_records(ds, &bad) == 5 && bad == -1);
    tfc_dataset_unref(ds);
    /* a missing file names itself; the next file is still read */
    const char *files[] = {path_of("missing.tfrecord"), path_of("good.tfrecord")};
    ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(files, 2, &st), NULL, &st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    CHECK(!tfc_iterator_next(it, &t, 1, &st) && st.code == TFC_NOT_FOUND && strstr(st.msg, "missing.tfrecord"));
    CHECK(tfc_iterator_next(it, &t, 1, &st));
    tfc_tensor_unref(t);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
}

static void test_parallel_reads(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *files[3];
    char names[3][32];
    for (int f = 0; f < 3; f++) {
        snprintf(names[f], sizeof names[f], "shard-%d.tfrecord", f);
        files[f] = path_of(names[f]);
        tfc_tfrecord_writer *w = tfc_tfrecord_writer_new(files[f], NULL, -1, &st);
        for (int i = 0; i < 2 + f; i++) {
            char rec[8] = {(char)('a' + f), (char)('0' + i)};
            tfc_tfrecord_writer_write(w, rec, 2, &st);
        }
        REQUIRE(tfc_tfrecord_writer_close(w, &st));
    }
    /* TensorFlow interleaves the files one record each: a0 b0 c0 a1 b1 c1 b2 c2 c3 */
    const char *want[] = {"a0", "b0", "c0", "a1", "b1", "c1", "b2", "c2", "c3"};
    for (int npr = 0; npr < 2; npr++) {
        tfc_dataset *ds = tfc_dataset_tfrecord(tfc_dataset_from_strings(files, 3, &st),
                                               &(tfc_reader_opts){.num_parallel_reads = npr ? 3 : 0}, &st);
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        tfc_tensor *t;
        int k = 0;
        while (tfc_iterator_next(it, &t, 1, &st)) {
            size_t len;
            const char *s = tfc_tensor_string(t, 0, &len);
            if (npr) CHECK(k < 9 && len == 2 && !memcmp(s, want[k], 2));
            else CHECK(len == 2 && s[0] == (k < 2 ? 'a' : k < 5 ? 'b' : 'c'));
            tfc_tensor_unref(t);
            k++;
        }
        CHECK(k == 9 && st.code == TFC_OUT_OF_RANGE);
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
    }
}

static void test_text_and_list_files(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *txt = "alpha\r\n\nbeta\ngamma";
    write_bytes(path_of("a.txt"), (const unsigned char *)txt, strlen(txt));
    write_bytes(path_of("b.txt"), (const unsigned char *)"one\n", 4);
    write_bytes(path_of("c.txt"), (const unsigned char *)"", 0);
    const char *pat = path_of("*.txt");
    tfc_dataset *files = tfc_dataset_list_files(&pat, 1, &(tfc_list_files_opts){.shuffle = TFC_NO}, &st);
    CHECK_OK(&st);
    CHECK(tfc_dataset_cardinality(files) == 3);
    tfc_dataset *ds = tfc_dataset_text_line(files, &(tfc_reader_opts){.buffer_size = 3}, &st);
    const char *want[] = {"alpha", "", "beta", "gamma", "one"};
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t;
    int k = 0;
    while (tfc_iterator_next(it, &t, 1, &st)) {
        size_t len;
        const char *s = tfc_tensor_string(t, 0, &len);
        CHECK(k < 5 && len == strlen(want[k]) && !memcmp(s, want[k], len));
        tfc_tensor_unref(t);
        k++;
    }
    CHECK(k == 5 && st.code == TFC_OUT_OF_RANGE);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    /* shuffled listings are permutations of the sorted one */
    files = tfc_dataset_list_files(&pat, 1, &(tfc_list_files_opts){.seed = 3, .has_seed = true}, &st);
    it = tfc_iterator_new(files, &st);
    int seen = 0;
    while (tfc_iterator_next(it, &t, 1, &st)) {
        size_t len;
        const char *s = tfc_tensor_string(t, 0, &len);
        seen |= 1 << (s[len - 5] - 'a');
        tfc_tensor_unref(t);
    }
    CHECK(seen == 7);
    tfc_iterator_free(it);
    tfc_dataset_unref(files);
    const char *none = path_of("*.nothing");
    CHECK(!tfc_dataset_list_files(&none, 1, NULL, &st) && st.code == TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "No files matched pattern") && strstr(st.msg, "*.nothing"));
    /* gzip text */
    gzFile g = gzopen(path_of("z.txt.gz"), "wb");
    gzputs(g, "x\ny\n");
    gzclose(g);
    const char *zp = path_of("z.txt.gz");
    ds = tfc_dataset_text_line(tfc_dataset_from_strings(&zp, 1, &st), &(tfc_reader_opts){.compression_type = "GZIP"},
                               &st);
    int64_t dummy[1];
    CHECK(drain_i64(ds, 0, dummy, 0, &st) == 2);
    tfc_dataset_unref(ds);
}

/* counts how often the input of a cache is really produced */
static int produced;
static bool count_map(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      tfc_status *st) {
    produced++;
    out[0] = tfc_tensor_ref(in[0]);
    const char *s = "payload";
    out[1] = tfc_tensor_from_strings(&s, NULL, NULL, 0, st);
    return out[1] != NULL;
}

static void test_cache(void) {
    tfc_status st = TFC_STATUS_INIT;
    for (int file = 0; file < 2; file++) {
        produced = 0;
        const char *fn = file ? path_of("cache") : NULL;
        tfc_dataset *ds = tfc_dataset_cache(
            tfc_dataset_map(tfc_dataset_range(0, 20, 1, 0, &st), count_map, NULL,
                            &(tfc_map_opts){.output_structure = "(.,.)"}, &st),
            fn, &st);
        CHECK_OK(&st);
        /* an epoch cut short caches nothing */
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        tfc_tensor *out[2];
        for (int i = 0; i < 5; i++) {
            REQUIRE(tfc_iterator_next(it, out, 2, &st));
            tfc_tensor_unref(out[0]);
            tfc_tensor_unref(out[1]);
        }
        tfc_iterator_free(it);
        struct stat sb;
        if (file) CHECK(stat(path_of("cache.tfcache"), &sb) != 0);
        /* a full epoch fills it; the file appears only at the end */
        it = tfc_iterator_new(ds, &st);
        int k = 0;
        while (tfc_iterator_next(it, out, 2, &st)) {
            CHECK(tfc_tensor_get_f64(out[0], 0) == k);
            if (file && k == 19) CHECK(stat(path_of("cache.tfcache"), &sb) != 0);
            tfc_tensor_unref(out[0]);
            tfc_tensor_unref(out[1]);
            k++;
        }
        CHECK(k == 20 && produced == 25);
        tfc_iterator_free(it);
        if (file) CHECK(stat(path_of("cache.tfcache"), &sb) == 0);
        /* later epochs replay it without producing */
        int64_t v[32];
        CHECK(drain_i64(ds, 0, v, 32, &st) == 20 && v[7] == 7 && produced == 25);
        tfc_dataset *rep = tfc_dataset_repeat(tfc_dataset_ref(ds), 3, &st);
        CHECK(drain_i64(rep, 0, v, 32, &st) == 60 && produced == 25);
        tfc_dataset_unref(rep);
        tfc_dataset_unref(ds);
    }
    /* a new pipeline reads the cache file of an earlier one (the strings come back) */
    tfc_dataset *ds = tfc_dataset_cache(tfc_dataset_map(tfc_dataset_range(0, 20, 1, 0, &st), count_map, NULL,
                                                        &(tfc_map_opts){.output_structure = "(.,.)"}, &st),
                                        path_of("cache"), &st);
    produced = 0;
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2];
    REQUIRE(tfc_iterator_next(it, out, 2, &st));
    size_t len;
    const char *s = tfc_tensor_string(out[1], 0, &len);
    CHECK(produced == 0 && len == 7 && !memcmp(s, "payload", 7));
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    /* a corrupt cache file is DATA_LOSS naming it */
    unsigned char buf[8192];
    size_t n = read_file(path_of("cache.tfcache"), buf, sizeof buf);
    buf[n / 2] ^= 1;
    write_bytes(path_of("cache.tfcache"), buf, n);
    ds = tfc_dataset_cache(tfc_dataset_map(tfc_dataset_range(0, 20, 1, 0, &st), count_map, NULL,
                                           &(tfc_map_opts){.output_structure = "(.,.)"}, &st),
                           path_of("cache"), &st);
    int64_t v[32];
    CHECK(drain_i64(ds, 0, v, 32, &st) == -1 && st.code == TFC_DATA_LOSS && strstr(st.msg, "cache.tfcache"));
    tfc_dataset_unref(ds);
    /* a cache file of another structure is refused */
    ds = tfc_dataset_cache(tfc_dataset_range(0, 3, 1, 0, &st), path_of("cache"), &st);
    CHECK(drain_i64(ds, 0, v, 32, &st) == -1 && st.code == TFC_DATA_LOSS);
    tfc_dataset_unref(ds);
}

/* Malformed files: random byte flips, insertions and truncations of plain and compressed TFRecord files read
 * to the end through ignore_errors. Nothing may crash or hang; every record that comes back is intact (the
 * CRCs hold), so at most the records written come back. */
static void test_fuzz(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *comps[] = {"", "GZIP", "ZLIB"};
    uint64_t r = 99;
    for (int c = 0; c < 3; c++) {
        const char *orig = path_of("fuzz-orig");
        REQUIRE(write_records(orig, comps[c], 30, &st));
        static unsigned char buf[1 << 16], m[1 << 16];
        size_t n = read_file(orig, buf, sizeof buf);
        for (int round = 0; round < 150; round++) {
            memcpy(m, buf, n);
            size_t mn = n;
            int edits = 1 + round % 4;
            for (int e = 0; e < edits; e++) {
                r = r * 6364136223846793005ull + 1442695040888963407ull;
                size_t pos = (size_t)(r >> 33) % mn;
                switch ((r >> 20) % 3) {
                case 0: m[pos] ^= (unsigned char)(1 + (r >> 8) % 255); break;
                case 1: mn = pos + 1; break;
                default:
                    if (mn < sizeof m) {
                        memmove(m + pos + 1, m + pos, mn - pos);
                        m[pos] = (unsigned char)(r >> 12);
                        mn++;
                    }
                }
            }
            const char *p = path_of("fuzz.tfrecord");
            write_bytes(p, m, mn);
            tfc_dataset *ds = tfc_dataset_ignore_errors(
                tfc_dataset_tfrecord(tfc_dataset_from_strings(&p, 1, &st),
                                     &(tfc_reader_opts){.compression_type = comps[c], .buffer_size = 64}, &st),
                &st);
            int64_t dummy[1];
            int64_t got = drain_i64(ds, 0, dummy, 0, &st);
            CHECK(got >= 0 && got <= 30);
            tfc_dataset_unref(ds);
        }
    }
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tfc_test_data_files_%d", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    REQUIRE(mkdir(dir, 0700) == 0);
    int64_t live0 = tfc_tensor_live_count();
    test_crc();
    test_writer_bytes();
    test_dataset_compression();
    test_corruption();
    test_parallel_reads();
    test_text_and_list_files();
    test_cache();
    test_fuzz();
    CHECK(tfc_tensor_live_count() == live0);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
