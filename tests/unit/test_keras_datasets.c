/* tf.keras.datasets: the real Fashion-MNIST files (Debian's dataset-fashion-mnist) and IDX files this test
 * writes itself, corrupt in every way we can think of: each must give DATA_LOSS naming the file, never a
 * crash (run under the ASan build too). */
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "tfc/keras.h"
#include "tfc_test.h"

#define FASHION_DIR "/usr/share/datasets/fashion-mnist"

static char tmpdir[64];

static char *tmp_path(const char *name) {
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", tmpdir, name);
    return p;
}

static void write_raw(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(data, 1, n, f) == n);
    fclose(f);
}

static void write_gz(const char *path, const void *data, size_t n) {
    gzFile g = gzopen(path, "wb");
    REQUIRE(g);
    REQUIRE(gzwrite(g, data, (unsigned)n) == (int)n);
    gzclose(g);
}

static size_t read_all(const char *path, unsigned char **out) {
    FILE *f = fopen(path, "rb");
    REQUIRE(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    *out = malloc((size_t)n);
    REQUIRE(*out && fread(*out, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    return (size_t)n;
}

/* An IDX image: magic 00 00 08 <rank>, big-endian dims, then count bytes of i % 251. Returns the size. */
static size_t make_idx(unsigned char *buf, int rank, const uint32_t *dims, size_t count) {
    size_t k = 0;
    buf[k++] = 0, buf[k++] = 0, buf[k++] = 8, buf[k++] = (unsigned char)rank;
    for (int i = 0; i < rank; i++) {
        buf[k++] = (unsigned char)(dims[i] >> 24), buf[k++] = (unsigned char)(dims[i] >> 16);
        buf[k++] = (unsigned char)(dims[i] >> 8), buf[k++] = (unsigned char)dims[i];
    }
    for (size_t i = 0; i < count; i++) buf[k++] = (unsigned char)(i % 251);
    return k;
}

/* Expects tfc_idx_read(path) to fail with `code` and a message naming the file and containing `what`. */
static void expect_error(const char *path, tfc_code code, const char *what) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_idx_read(path, &st);
    CHECK(t == NULL);
    CHECK_CODE(&st, code);
    CHECK(strstr(st.msg, path) != NULL);
    if (what && !strstr(st.msg, what)) {
        CHECK(!"message lacks the expected text");
        fprintf(stderr, "  %s: expected \"%s\" in \"%s\"\n", path, what, st.msg);
    }
    tfc_tensor_unref(t);
}

static void test_real_fashion_mnist(void) {
    struct stat sb;
    if (stat(FASHION_DIR, &sb) != 0) {
        printf("skipping the real Fashion-MNIST checks: %s is missing (apt-get install dataset-fashion-mnist)\n",
               FASHION_DIR);
        return;
    }
    unsetenv("TFC_DATASETS_DIR");
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset_arrays d;
    REQUIRE(tfc_datasets_fashion_mnist_load(NULL, &d, &st));
    CHECK_OK(&st);
    const tfc_tensor *ts[4] = {d.x_train, d.y_train, d.x_test, d.y_test};
    const int64_t n[4] = {60000, 60000, 10000, 10000};
    for (int i = 0; i < 4; i++) {
        CHECK(tfc_tensor_dtype(ts[i]) == TFC_UINT8);
        CHECK(tfc_tensor_rank(ts[i]) == (i % 2 ? 1 : 3));
        CHECK(tfc_tensor_dim(ts[i], 0) == n[i]);
        if (i % 2 == 0) CHECK(tfc_tensor_dim(ts[i], 1) == 28 && tfc_tensor_dim(ts[i], 2) == 28);
    }
    /* Every class has 6000 training and 1000 test images. */
    for (int part = 1; part < 4; part += 2) {
        int64_t counts[10] = {0};
        const uint8_t *y = tfc_tensor_data(ts[part]);
        for (int64_t i = 0; i < n[part]; i++) counts[y[i] < 10 ? y[i] : 0]++;
        for (int c = 0; c < 10; c++) CHECK(counts[c] == n[part] / 10);
    }
    /* Values checked against numpy on the same files. */
    const uint8_t *ytr = tfc_tensor_data(d.y_train), *yte = tfc_tensor_data(d.y_test);
    const uint8_t want_tr[10] = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5}, want_te[10] = {9, 2, 1, 1, 6, 1, 4, 6, 5, 7};
    CHECK(!memcmp(ytr, want_tr, 10));
    CHECK(!memcmp(yte, want_te, 10));
    const uint8_t *x = tfc_tensor_data(d.x_train);
    int64_t sum0 = 0, sum_all = 0;
    for (int i = 0; i < 784; i++) sum0 += x[i];
    for (int64_t i = 0; i < 60000 * 784; i++) sum_all += x[i];
    CHECK(sum0 == 76247);
    CHECK(sum_all == 3431114169LL);
    const uint8_t row[8] = {0, 0, 1, 4, 6, 7, 2, 0};
    CHECK(!memcmp(x + 14 * 28, row, 8));
    const uint8_t *xt = tfc_tensor_data(d.x_test);
    int64_t sum_t = 0;
    for (int64_t i = 0; i < 10000 * 784; i++) sum_t += xt[i];
    CHECK(sum_t == 573469082LL);
    const char *const *names = tfc_datasets_fashion_mnist_class_names();
    CHECK(!strcmp(names[0], "T-shirt/top") && !strcmp(names[9], "Ankle boot") && !strcmp(names[5], "Sandal"));
    tfc_datasets_free(&d);
    CHECK(d.x_train == NULL && d.y_test == NULL);
    tfc_datasets_free(&d); /* twice is fine */
    tfc_datasets_free(NULL);

    /* The same files through an explicit dir and through TFC_DATASETS_DIR (joined with "fashion-mnist"). */
    REQUIRE(tfc_datasets_fashion_mnist_load(FASHION_DIR, &d, &st));
    CHECK(tfc_tensor_dim(d.x_test, 0) == 10000);
    tfc_datasets_free(&d);
    setenv("TFC_DATASETS_DIR", "/usr/share/datasets", 1);
    CHECK(tfc_datasets_fashion_mnist_load(NULL, &d, &st));
    CHECK_OK(&st);
    tfc_datasets_free(&d);
    unsetenv("TFC_DATASETS_DIR");
}

static void test_good_small_files(void) {
    unsigned char buf[4096];
    tfc_status st = TFC_STATUS_INIT;
    /* Raw and gzip copies of the same rank-3 file read the same. */
    size_t n = make_idx(buf, 3, (const uint32_t[]){3, 4, 5}, 60);
    write_raw(tmp_path("a.idx"), buf, n);
    write_gz(tmp_path("a.idx.gz"), buf, n);
    for (int k = 0; k < 2; k++) {
        tfc_tensor *t = tfc_idx_read(tmp_path(k ? "a.idx.gz" : "a.idx"), &st);
        CHECK_OK(&st);
        REQUIRE(t);
        CHECK(tfc_tensor_dtype(t) == TFC_UINT8 && tfc_tensor_rank(t) == 3);
        CHECK(tfc_tensor_dim(t, 0) == 3 && tfc_tensor_dim(t, 1) == 4 && tfc_tensor_dim(t, 2) == 5);
        CHECK(!memcmp(tfc_tensor_data(t), buf + 16, 60));
        tfc_tensor_unref(t);
    }
    /* Rank 1 and rank 4; a zero-sized dim is a valid, empty array. */
    n = make_idx(buf, 1, (const uint32_t[]){7}, 7);
    write_raw(tmp_path("r1.idx"), buf, n);
    tfc_tensor *t = tfc_idx_read(tmp_path("r1.idx"), &st);
    REQUIRE(t);
    CHECK(tfc_tensor_rank(t) == 1 && tfc_tensor_dim(t, 0) == 7 && ((const uint8_t *)tfc_tensor_data(t))[6] == 6);
    tfc_tensor_unref(t);
    n = make_idx(buf, 4, (const uint32_t[]){2, 1, 3, 2}, 12);
    write_gz(tmp_path("r4.idx.gz"), buf, n);
    t = tfc_idx_read(tmp_path("r4.idx.gz"), &st);
    REQUIRE(t);
    CHECK(tfc_tensor_rank(t) == 4 && tfc_tensor_num_elements(t) == 12);
    tfc_tensor_unref(t);
    n = make_idx(buf, 2, (const uint32_t[]){0, 28}, 0);
    write_gz(tmp_path("empty.idx.gz"), buf, n);
    t = tfc_idx_read(tmp_path("empty.idx.gz"), &st);
    CHECK_OK(&st);
    REQUIRE(t);
    CHECK(tfc_tensor_num_elements(t) == 0 && tfc_tensor_dim(t, 1) == 28);
    tfc_tensor_unref(t);
}

static void test_corrupt_files(void) {
    static unsigned char buf[1 << 16];
    size_t n;
    /* Missing file. */
    expect_error(tmp_path("no-such-file.gz"), TFC_NOT_FOUND, "No such file");
    /* Empty file, a file shorter than the magic. */
    write_raw(tmp_path("empty"), buf, 0);
    expect_error(tmp_path("empty"), TFC_DATA_LOSS, "magic");
    write_raw(tmp_path("short"), "\0\0", 2);
    expect_error(tmp_path("short"), TFC_DATA_LOSS, "magic");
    /* Bad magic: a PNG header, a 0x0801 magic shifted, a float32 (0x0D) data type, ranks 0 and 5. */
    write_raw(tmp_path("png"), "\x89PNG\r\n\x1a\n0123456789", 18);
    expect_error(tmp_path("png"), TFC_DATA_LOSS, "bad magic 89 50 4e 47");
    n = make_idx(buf, 1, (const uint32_t[]){4}, 4);
    buf[1] = 8;
    write_raw(tmp_path("magic2"), buf, n);
    expect_error(tmp_path("magic2"), TFC_DATA_LOSS, "bad magic");
    n = make_idx(buf, 1, (const uint32_t[]){4}, 16);
    buf[2] = 0x0d;
    write_gz(tmp_path("float.gz"), buf, n);
    expect_error(tmp_path("float.gz"), TFC_DATA_LOSS, "0x0d");
    n = make_idx(buf, 0, NULL, 4);
    write_raw(tmp_path("rank0"), buf, n);
    expect_error(tmp_path("rank0"), TFC_DATA_LOSS, "rank 0");
    n = make_idx(buf, 5, (const uint32_t[]){1, 1, 1, 1, 1}, 1);
    write_gz(tmp_path("rank5.gz"), buf, n);
    expect_error(tmp_path("rank5.gz"), TFC_DATA_LOSS, "rank 5");
    /* Header cut inside the dims. */
    n = make_idx(buf, 3, (const uint32_t[]){2, 2, 2}, 8);
    write_raw(tmp_path("cutdims"), buf, 10);
    expect_error(tmp_path("cutdims"), TFC_DATA_LOSS, "dims");
    write_gz(tmp_path("cutdims.gz"), buf, 10);
    expect_error(tmp_path("cutdims.gz"), TFC_DATA_LOSS, "dims");
    /* Truncated raw data, trailing bytes in a raw file and inside a gzip stream. */
    n = make_idx(buf, 3, (const uint32_t[]){10, 28, 28}, 10 * 784);
    write_raw(tmp_path("trunc.idx"), buf, n - 1);
    expect_error(tmp_path("trunc.idx"), TFC_DATA_LOSS, "truncated");
    write_raw(tmp_path("trail.idx"), buf, n + 3);
    expect_error(tmp_path("trail.idx"), TFC_DATA_LOSS, "trailing");
    write_gz(tmp_path("trail.idx.gz"), buf, n + 3);
    expect_error(tmp_path("trail.idx.gz"), TFC_DATA_LOSS, "trailing");
    /* Wrong dims: the header promises more images than the (gzip) data holds. */
    n = make_idx(buf, 3, (const uint32_t[]){11, 28, 28}, 10 * 784);
    write_gz(tmp_path("dims.gz"), buf, n);
    expect_error(tmp_path("dims.gz"), TFC_DATA_LOSS, "7840 of 8624 data bytes");
    /* Absurd dims: an overflowing product and one far beyond any data set, raw and compressed. */
    n = make_idx(buf, 4, (const uint32_t[]){0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 64);
    write_raw(tmp_path("huge"), buf, n);
    expect_error(tmp_path("huge"), TFC_DATA_LOSS, "4294967295");
    n = make_idx(buf, 3, (const uint32_t[]){60000, 60000, 60000}, 64);
    write_gz(tmp_path("huge.gz"), buf, n);
    expect_error(tmp_path("huge.gz"), TFC_DATA_LOSS, "60000,60000,60000");
    /* Large but under the bound: a header claiming 1 GB over 64 bytes must not allocate 1 GB up front
     * (ASan's allocator would report it) and reports the shortfall. */
    n = make_idx(buf, 3, (const uint32_t[]){1000000, 1000, 1}, 64);
    write_gz(tmp_path("big.gz"), buf, n);
    expect_error(tmp_path("big.gz"), TFC_DATA_LOSS, "64 of 1000000000 data bytes");

    /* A gzip file cut at several points, and one with corrupted compressed bytes. */
    n = make_idx(buf, 3, (const uint32_t[]){50, 28, 28}, 50 * 784);
    for (size_t i = 0; i < n; i++) buf[16 + i % (n - 16)] ^= (unsigned char)(i * 2654435761u >> 13);
    write_gz(tmp_path("full.gz"), buf, n);
    unsigned char *gz;
    size_t gzn = read_all(tmp_path("full.gz"), &gz);
    REQUIRE(gzn > 200);
    const size_t cuts[] = {1, 2, 9, 12, 30, gzn / 2, gzn - 9, gzn - 4, gzn - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof *cuts; i++) {
        char name[32];
        snprintf(name, sizeof name, "cut%zu.gz", cuts[i]);
        write_raw(tmp_path(name), gz, cuts[i]);
        expect_error(tmp_path(name), TFC_DATA_LOSS, NULL);
    }
    for (size_t pos = 20; pos < gzn - 8; pos += gzn / 7) {
        unsigned char *c = malloc(gzn);
        REQUIRE(c);
        memcpy(c, gz, gzn);
        c[pos] ^= 0x5a;
        c[pos + 1] ^= 0xa5;
        write_raw(tmp_path("flip.gz"), c, gzn);
        expect_error(tmp_path("flip.gz"), TFC_DATA_LOSS, NULL);
        free(c);
    }
    free(gz);
}

/* Writes one data set folder of raw or gzip IDX files: n_train/n_test images with labels label(i). */
static void write_dataset(const char *dir, int n_train, int n_test, int n_train_labels, bool gzip, int bad_label) {
    static unsigned char buf[100 * 784 + 64];
    mkdir(dir, 0700);
    const char *names[4] = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                            "t10k-labels-idx1-ubyte"};
    const int counts[4] = {n_train, n_train_labels, n_test, n_test};
    for (int i = 0; i < 4; i++) {
        size_t n;
        if (i % 2 == 0) {
            n = make_idx(buf, 3, (const uint32_t[]){(uint32_t)counts[i], 28, 28}, (size_t)counts[i] * 784);
        } else {
            n = make_idx(buf, 1, (const uint32_t[]){(uint32_t)counts[i]}, 0);
            for (int j = 0; j < counts[i]; j++) buf[n++] = (unsigned char)(j % 10);
            if (i == 3 && bad_label >= 0) buf[n - 1] = (unsigned char)bad_label;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s%s", dir, names[i], gzip ? ".gz" : "");
        if (gzip)
            write_gz(path, buf, n);
        else
            write_raw(path, buf, n);
    }
}

static void test_loader(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset_arrays d = {0};
    /* Raw (uncompressed) files under TFC_DATASETS_DIR/mnist. */
    char dir[300];
    snprintf(dir, sizeof dir, "%s/mnist", tmpdir);
    write_dataset(dir, 20, 10, 20, false, -1);
    setenv("TFC_DATASETS_DIR", tmpdir, 1);
    CHECK(tfc_datasets_mnist_load(NULL, &d, &st));
    CHECK_OK(&st);
    if (d.x_train) {
        CHECK(tfc_tensor_dim(d.x_train, 0) == 20 && tfc_tensor_dim(d.y_test, 0) == 10);
        CHECK(((const uint8_t *)tfc_tensor_data(d.y_train))[13] == 3);
    }
    tfc_datasets_free(&d);
    /* Fashion-MNIST is looked up in its own subfolder: missing here. */
    CHECK(!tfc_datasets_fashion_mnist_load(NULL, &d, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "fashion-mnist/train-images-idx3-ubyte") != NULL);
    CHECK(d.x_train == NULL && d.y_train == NULL);
    unsetenv("TFC_DATASETS_DIR");
    /* Image and label counts that differ; a label outside 0..9; a labels file where images belong. */
    snprintf(dir, sizeof dir, "%s/mismatch", tmpdir);
    write_dataset(dir, 20, 10, 19, true, -1);
    CHECK(!tfc_datasets_fashion_mnist_load(dir, &d, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "20 images") && strstr(st.msg, "19 labels"));
    snprintf(dir, sizeof dir, "%s/badlabel", tmpdir);
    write_dataset(dir, 20, 10, 20, true, 10);
    CHECK(!tfc_datasets_fashion_mnist_load(dir, &d, &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "t10k-labels-idx1-ubyte.gz") && strstr(st.msg, "label 10 at index 9"));
    /* A labels file where the test images belong. */
    snprintf(dir, sizeof dir, "%s/swapped", tmpdir);
    write_dataset(dir, 20, 10, 20, true, -1);
    unsigned char lab[32];
    size_t n = make_idx(lab, 1, (const uint32_t[]){10}, 10);
    char path[600];
    snprintf(path, sizeof path, "%s/t10k-images-idx3-ubyte.gz", dir);
    write_gz(path, lab, n);
    CHECK(!tfc_datasets_fashion_mnist_load(dir, &d, &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "t10k-images-idx3-ubyte.gz: rank 1, expected 3") != NULL);
    CHECK(d.x_train == NULL && d.y_train == NULL);
    CHECK(!tfc_datasets_fashion_mnist_load(tmpdir, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

static void rm_rf(const char *dir) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tfc_test_datasets_XXXXXX");
    REQUIRE(mkdtemp(tmpdir));
    test_good_small_files();
    test_corrupt_files();
    test_loader();
    test_real_fashion_mnist();
    rm_rf(tmpdir);
    TEST_MAIN_END();
}
