/* Keras's dataset utilities (image_dataset_from_directory, text_dataset_from_directory) on a directory tree this
 * test writes (PNGs from a small zlib PNG writer): numpy's MT19937 and shuffle against values numpy printed, Keras's
 * file order (sorted class folders, roots sorted as strings, files by bytes, extensions case-insensitive, hidden
 * and non-image files skipped), labels in every label_mode, shapes and pixel values, color modes, nearest and
 * crop_to_aspect_ratio, the seeded shuffle and validation split, the printed messages, errors (Keras's argument
 * errors, an undecodable file named by the iterator, a missing directory) and links (followed, loops skipped). */
#define _GNU_SOURCE /* nftw */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "data_test_util.h"
#include "keras/dataset_utils_internal.h"
#include "tfc/keras.h"

static char root[256];

/* ---- files ------------------------------------------------------------------------------------------------- */

static void path_of(char *buf, size_t size, const char *rel) {
    int n = snprintf(buf, size, "%s/%s", root, rel);
    REQUIRE(n > 0 && (size_t)n < size);
}

static void mkdirs(const char *rel) {
    char p[512];
    path_of(p, sizeof p, rel);
    for (char *s = p + strlen(root) + 1; *s; s++)
        if (*s == '/') {
            *s = 0;
            mkdir(p, 0755);
            *s = '/';
        }
    mkdir(p, 0755);
}

static void write_bytes(const char *rel, const void *data, size_t n) {
    char p[512];
    path_of(p, sizeof p, rel);
    char dir[512];
    snprintf(dir, sizeof dir, "%s", rel);
    char *slash = strrchr(dir, '/');
    if (slash) {
        *slash = 0;
        mkdirs(dir);
    }
    FILE *f = fopen(p, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(data, 1, n, f) == n);
    fclose(f);
}

static void put32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Appends a PNG chunk (length, type, data, CRC) at out + *n. */
static void chunk(uint8_t *out, size_t *n, const char *type, const uint8_t *data, uint32_t len) {
    put32(out + *n, len);
    memcpy(out + *n + 4, type, 4);
    if (len) memcpy(out + *n + 8, data, len);
    uLong crc = crc32(0, out + *n + 4, len + 4);
    put32(out + *n + 8 + len, (uint32_t)crc);
    *n += 12 + len;
}

/* An 8-bit PNG (color type 0 gray, 2 RGB, 6 RGBA for c = 1, 3, 4) of pixels px [h, w, c]. */
static void write_png(const char *rel, int h, int w, int c, const uint8_t *px) {
    size_t raw_n = (size_t)h * (1 + (size_t)w * c);
    uint8_t *raw = malloc(raw_n);
    for (int y = 0; y < h; y++) {
        raw[y * (1 + w * c)] = 0; /* filter: none */
        memcpy(raw + y * (1 + w * c) + 1, px + (size_t)y * w * c, (size_t)w * c);
    }
    uLongf zn = compressBound(raw_n);
    uint8_t *z = malloc(zn);
    REQUIRE(compress2(z, &zn, raw, raw_n, 6) == Z_OK);
    uint8_t *out = malloc(zn + 128);
    size_t n = 0;
    memcpy(out, "\x89PNG\r\n\x1a\n", 8);
    n = 8;
    uint8_t ihdr[13];
    put32(ihdr, (uint32_t)w);
    put32(ihdr + 4, (uint32_t)h);
    ihdr[8] = 8;
    ihdr[9] = c == 1 ? 0 : c == 3 ? 2 : 6;
    ihdr[10] = ihdr[11] = ihdr[12] = 0;
    chunk(out, &n, "IHDR", ihdr, 13);
    chunk(out, &n, "IDAT", z, (uint32_t)zn);
    chunk(out, &n, "IEND", NULL, 0);
    write_bytes(rel, out, n);
    free(out);
    free(z);
    free(raw);
}

/* An RGB PNG of h x w filled with (v, v, v). */
static void write_flat_png(const char *rel, int h, int w, uint8_t v) {
    uint8_t *px = malloc((size_t)h * w * 3);
    memset(px, v, (size_t)h * w * 3);
    write_png(rel, h, w, 3, px);
    free(px);
}

static void write_text(const char *rel, const char *s) { write_bytes(rel, s, strlen(s)); }

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(p);
}

/* ---- iteration ------------------------------------------------------------------------------------------------ */

/* All elements of ds (unbatched or batched), each component concatenated along dim 0 as float64 values per
 * element row: for images the first pixel's first channel, for labels the int label or the one-hot/binary row. */
typedef struct drained {
    int64_t n;          /* rows */
    double first[64];   /* component 0: first value of each row */
    double label[64][4];/* component 1: row values (up to 4) */
    int64_t label_width;
    tfc_shape shape0, shape1; /* shape of the first element's components */
    tfc_dtype dtype0, dtype1;
    int64_t elements;
} drained;

static bool drain(tfc_dataset *ds, drained *d, bool batched, tfc_status *st) {
    memset(d, 0, sizeof *d);
    tfc_iterator *it = tfc_iterator_new(ds, st);
    if (!it) return false;
    int nc = tfc_dataset_num_components(ds);
    tfc_tensor *out[2];
    while (tfc_iterator_next(it, out, 2, st)) {
        if (!d->elements) {
            d->shape0 = *tfc_tensor_shape(out[0]);
            d->dtype0 = tfc_tensor_dtype(out[0]);
            if (nc > 1) {
                d->shape1 = *tfc_tensor_shape(out[1]);
                d->dtype1 = tfc_tensor_dtype(out[1]);
            }
        }
        d->elements++;
        int64_t rows = batched ? tfc_tensor_dim(out[0], 0) : 1;
        int64_t per0 = tfc_tensor_num_elements(out[0]) / (rows ? rows : 1);
        for (int64_t r = 0; r < rows && d->n + r < 64; r++) {
            d->first[d->n + r] = tfc_tensor_get_f64(out[0], r * per0);
            if (nc > 1) {
                int64_t per1 = tfc_tensor_num_elements(out[1]) / rows;
                d->label_width = per1;
                for (int64_t k = 0; k < per1 && k < 4; k++)
                    d->label[d->n + r][k] = tfc_tensor_get_f64(out[1], r * per1 + k);
            }
        }
        d->n += rows;
        for (int i = 0; i < nc; i++) tfc_tensor_unref(out[i]);
    }
    tfc_iterator_free(it);
    if (st->code != TFC_OUT_OF_RANGE) return false;
    tfc_status_clear(st);
    return true;
}

/* ---- the tree ---------------------------------------------------------------------------------------------------- */

/* Files of the main tree with their pixel values; order = Keras's unshuffled order with labels inferred. */
static const char *const tree_inferred[] = {
    "cat/Img_1.PNG", "cat/img_10.png", "cat/img_2.png", "cat/x.jpeg", /* root "": bytes order, 'I' < 'i' */
    "cat/a/1.png",   "cat/a-b/2.png",  "cat/a/z/3.png",               /* roots "a" < "a-b" < "a/z" */
    "dog/1.png",     "dog/B2.png",
};
static const int tree_labels[] = {0, 0, 0, 0, 0, 0, 0, 1, 1};
#define TREE_N 9
/* labels=None: the whole tree, hidden folders and top-level files included. */
static const char *const tree_flat[] = {
    "top.png", ".hidden/h.png", "cat/Img_1.PNG", "cat/img_10.png", "cat/img_2.png", "cat/x.jpeg",
    "cat/a/1.png", "cat/a-b/2.png", "cat/a/z/3.png", "dog/1.png", "dog/B2.png",
};
#define FLAT_N 11

static uint8_t value_of(const char *rel) {
    for (int i = 0; i < FLAT_N; i++)
        if (!strcmp(tree_flat[i], rel)) return (uint8_t)(20 + 10 * i);
    return 0;
}

static void make_tree(void) {
    mkdirs("img");
    for (int i = 0; i < FLAT_N; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "img/%s", tree_flat[i]);
        write_flat_png(rel, 3 + i % 3, 4 + i % 2, value_of(tree_flat[i]));
    }
    write_text("img/cat/notes.txt", "not an image");
    write_text("img/dog/readme.md", "not an image either");
    mkdirs("img/emu"); /* an empty class */
}

static void expect_paths(const tfc_directory_dataset_info *info, const char *dir, const char *const *rels, int n) {
    CHECK(info->num_files == n);
    for (int i = 0; i < n && i < info->num_files; i++) {
        char want[512];
        snprintf(want, sizeof want, "%s/%s", dir, rels[i]);
        if (strcmp(info->file_paths[i], want)) {
            fprintf(stderr, "file %d: got %s, want %s\n", i, info->file_paths[i], want);
            CHECK(false);
        }
    }
}

/* ---- tests ------------------------------------------------------------------------------------------------------ */

static void test_numpy_rng(void) {
    np_mt19937 s;
    np_mt19937_seed(&s, 5489); /* the reference implementation's default seed */
    CHECK(np_mt19937_next32(&s) == 3499211612u);
    /* np.random.RandomState(1234).randint(0, 2**32, size=5, dtype=np.uint64) */
    static const uint32_t r1234[5] = {822569775u, 2137449171u, 2671936806u, 3512589365u, 1880026316u};
    np_mt19937_seed(&s, 1234);
    for (int i = 0; i < 5; i++) CHECK(np_mt19937_next32(&s) == r1234[i]);
    /* l = list(range(20)); np.random.RandomState(0).shuffle(l) */
    static const int64_t p0[20] = {18, 1, 19, 8, 10, 17, 6, 13, 4, 2, 5, 14, 9, 7, 16, 11, 3, 0, 15, 12};
    int64_t perm[1000];
    np_shuffle_permutation(0, perm, 20);
    CHECK(same_i64(perm, p0, 20));
    /* a = np.arange(7, dtype=np.int32); np.random.RandomState(42).shuffle(a) */
    static const int64_t p42[7] = {0, 1, 5, 2, 4, 3, 6};
    np_shuffle_permutation(42, perm, 7);
    CHECK(same_i64(perm, p42, 7));
    /* RandomState(2**32 - 1).shuffle(list(range(1000))): first 10 and last 5 */
    static const int64_t head[10] = {94, 405, 819, 632, 217, 169, 449, 275, 165, 828};
    static const int64_t tail[5] = {948, 71, 12, 290, 419};
    np_shuffle_permutation(4294967295u, perm, 1000);
    CHECK(same_i64(perm, head, 10));
    CHECK(same_i64(perm + 995, tail, 5));
}

static void test_order_and_labels(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[300];
    path_of(dir, sizeof dir, "img");
    tfc_directory_dataset_info info;
    tfc_dataset *ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.shuffle = TFC_NO, .batch_size = 4, .image_size = {5, 6}, .verbose = TFC_NO},
        &info, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    CHECK(info.num_classes == 3);
    CHECK(info.num_classes == 3 && !strcmp(info.class_names[0], "cat") && !strcmp(info.class_names[1], "dog") &&
          !strcmp(info.class_names[2], "emu"));
    expect_paths(&info, dir, tree_inferred, TREE_N);
    for (int i = 0; i < TREE_N && i < info.num_files; i++) CHECK(info.labels[i] == tree_labels[i]);
    CHECK(tfc_dataset_cardinality(ds) == 3);
    CHECK(!strcmp(tfc_dataset_structure(ds), "(.,.)"));
    tfc_tensor_spec s0 = tfc_dataset_component_spec(ds, 0), s1 = tfc_dataset_component_spec(ds, 1);
    CHECK(s0.dtype == TFC_FLOAT && s0.shape.rank == 4 && s0.shape.dims[1] == 5 && s0.shape.dims[2] == 6 &&
          s0.shape.dims[3] == 3);
    CHECK(s1.dtype == TFC_INT32 && s1.shape.rank == 1);
    drained d;
    CHECK(drain(ds, &d, true, &st));
    CHECK_OK(&st);
    CHECK(d.n == TREE_N && d.elements == 3);
    CHECK(d.dtype0 == TFC_FLOAT && d.shape0.rank == 4 && d.shape0.dims[0] == 4 && d.shape0.dims[1] == 5 &&
          d.shape0.dims[2] == 6 && d.shape0.dims[3] == 3);
    CHECK(d.dtype1 == TFC_INT32 && d.shape1.rank == 1 && d.shape1.dims[0] == 4);
    for (int i = 0; i < TREE_N; i++) {
        CHECK(d.first[i] == value_of(tree_inferred[i])); /* a flat image resizes to itself */
        CHECK(d.label[i][0] == tree_labels[i]);
    }
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);

    /* labels=None: the whole tree, one unnamed class; elements are the images alone */
    ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.labels = "none", .shuffle = TFC_NO, .batch_size = TFC_UNBATCHED,
                                       .image_size = {2, 2}, .verbose = TFC_NO},
        &info, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    CHECK(info.num_classes == 1 && !strcmp(info.class_names[0], ""));
    expect_paths(&info, dir, tree_flat, FLAT_N);
    CHECK(!strcmp(tfc_dataset_structure(ds), "."));
    CHECK(drain(ds, &d, false, &st));
    CHECK(d.n == FLAT_N && d.shape0.rank == 3 && d.shape0.dims[0] == 2 && d.shape0.dims[2] == 3);
    for (int i = 0; i < FLAT_N; i++) CHECK(d.first[i] == value_of(tree_flat[i]));
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);

    /* label_mode none with labels inferred is labels=None too (Keras sets both to None) */
    ds = tfc_image_dataset_from_directory(dir, &(tfc_image_dataset_opts){.label_mode = "none", .shuffle = TFC_NO,
                                                                         .verbose = TFC_NO, .image_size = {2, 2}},
                                          &info, &st);
    CHECK_OK(&st);
    CHECK(info.num_files == FLAT_N);
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);

    /* a trailing "/" is not doubled */
    char dir_slash[310];
    snprintf(dir_slash, sizeof dir_slash, "%s/", dir);
    ds = tfc_image_dataset_from_directory(dir_slash, &(tfc_image_dataset_opts){.shuffle = TFC_NO, .verbose = TFC_NO},
                                          &info, &st);
    CHECK_OK(&st);
    expect_paths(&info, dir, tree_inferred, TREE_N);
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);
}

static void test_label_modes(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[300];
    path_of(dir, sizeof dir, "img");
    drained d;
    /* categorical with an explicit class order: labels follow class_names, files still follow sorted folders */
    const char *names[] = {"emu", "dog", "cat"};
    tfc_directory_dataset_info info;
    tfc_dataset *ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.class_names = names, .num_class_names = 3, .label_mode = "categorical",
                                       .shuffle = TFC_NO, .batch_size = 5, .image_size = {3, 3}, .verbose = TFC_NO},
        &info, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    expect_paths(&info, dir, tree_inferred, TREE_N);
    CHECK(!strcmp(info.class_names[0], "emu") && !strcmp(info.class_names[2], "cat"));
    tfc_tensor_spec s1 = tfc_dataset_component_spec(ds, 1);
    CHECK(s1.dtype == TFC_FLOAT && s1.shape.rank == 2 && s1.shape.dims[1] == 3);
    CHECK(drain(ds, &d, true, &st));
    CHECK(d.n == TREE_N && d.label_width == 3);
    for (int i = 0; i < TREE_N; i++) {
        int want = tree_labels[i] == 0 ? 2 : 1; /* cat -> 2, dog -> 1 */
        for (int k = 0; k < 3; k++) CHECK(d.label[i][k] == (k == want ? 1.0 : 0.0));
    }
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);

    /* binary needs exactly two classes */
    ds = tfc_image_dataset_from_directory(dir, &(tfc_image_dataset_opts){.label_mode = "binary", .verbose = TFC_NO},
                                          NULL, &st);
    CHECK(!ds);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "exactly 2 class_names") && strstr(st.msg, "['cat', 'dog', 'emu']"));
    char emu[320];
    snprintf(emu, sizeof emu, "%s/emu", dir);
    rmdir(emu);
    ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.label_mode = "binary", .shuffle = TFC_NO, .batch_size = TFC_UNBATCHED,
                                       .image_size = {3, 3}, .verbose = TFC_NO},
        NULL, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    CHECK(drain(ds, &d, false, &st));
    CHECK(d.n == TREE_N && d.dtype1 == TFC_FLOAT && d.shape1.rank == 1 && d.shape1.dims[0] == 1);
    for (int i = 0; i < TREE_N; i++) CHECK(d.label[i][0] == (double)tree_labels[i]);
    tfc_dataset_unref(ds);
    mkdirs("img/emu");

    /* explicit labels: one per file in the unshuffled flat order; class_names = sorted distinct values */
    int32_t lv[FLAT_N] = {5, 0, 2, 2, 5, 0, 0, 2, 5, 9, 0};
    ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.label_values = lv, .num_label_values = FLAT_N, .label_mode = "categorical",
                                       .shuffle = TFC_NO, .image_size = {2, 2}, .verbose = TFC_NO},
        &info, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    CHECK(info.num_classes == 4 && !strcmp(info.class_names[0], "0") && !strcmp(info.class_names[3], "9"));
    CHECK(drain(ds, &d, true, &st));
    CHECK(d.n == FLAT_N && d.label_width == 4);
    /* tf.one_hot(label, 4): labels 5 and 9 are outside [0, 4) and give zero rows */
    for (int i = 0; i < FLAT_N; i++)
        for (int k = 0; k < 4; k++) CHECK(d.label[i][k] == (lv[i] == k ? 1.0 : 0.0));
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);
    ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.label_values = lv, .num_label_values = 3, .verbose = TFC_NO}, NULL, &st);
    CHECK(!ds);
    CHECK(strstr(st.msg, "len(labels) is 3 while we found 11 files"));
}

static void test_pixels(void) {
    tfc_status st = TFC_STATUS_INIT;
    drained d;
    /* a 4 x 8 RGB image whose column x holds 10 * x + channel */
    uint8_t px[4 * 8 * 3];
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 8; x++)
            for (int c = 0; c < 3; c++) px[(y * 8 + x) * 3 + c] = (uint8_t)(10 * x + c);
    write_png("pix/only/wide.png", 4, 8, 3, px);
    char dir[300];
    path_of(dir, sizeof dir, "pix");
    /* crop_to_aspect_ratio to 4 x 4: the centre columns 2..5, then a same-size resize (identity) */
    tfc_dataset *ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.crop_to_aspect_ratio = TFC_YES, .image_size = {4, 4}, .verbose = TFC_NO},
        NULL, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2] = {0};
    REQUIRE(tfc_iterator_next(it, out, 2, &st));
    const float *f = tfc_tensor_data(out[0]);
    CHECK(tfc_tensor_num_elements(out[0]) == 4 * 4 * 3);
    for (int y = 0; y < 4; y++)
        for (int x = 0; x < 4; x++)
            for (int c = 0; c < 3; c++) CHECK(f[(y * 4 + x) * 3 + c] == (float)(10 * (x + 2) + c));
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);

    /* bilinear 8 -> 4 columns with half-pixel centres averages column pairs; nearest keeps uint8 */
    for (int nearest = 0; nearest < 2; nearest++) {
        ds = tfc_image_dataset_from_directory(
            dir, &(tfc_image_dataset_opts){.interpolation = nearest ? "Nearest" : "bilinear", .image_size = {4, 4},
                                           .batch_size = TFC_UNBATCHED, .verbose = TFC_NO},
            NULL, &st);
        CHECK_OK(&st);
        REQUIRE(ds);
        it = tfc_iterator_new(ds, &st);
        REQUIRE(tfc_iterator_next(it, out, 2, &st));
        CHECK(tfc_tensor_dtype(out[0]) == (nearest ? TFC_UINT8 : TFC_FLOAT));
        for (int x = 0; x < 4; x++) {
            /* output column x samples input at 2x + 0.5: bilinear (2x and 2x+1 averaged), nearest floor -> 2x+1 */
            double want = nearest ? 10.0 * (2 * x + 1) : 10.0 * (2 * x) + 5.0;
            CHECK_NEAR(tfc_tensor_get_f64(out[0], x * 3), want, 1e-6);
        }
        tfc_tensor_unref(out[0]);
        tfc_tensor_unref(out[1]);
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
    }

    /* color modes: grayscale 1 channel, rgba 4 (opaque alpha) */
    int chans[2] = {1, 4};
    const char *modes[2] = {"grayscale", "rgba"};
    for (int m = 0; m < 2; m++) {
        ds = tfc_image_dataset_from_directory(
            dir, &(tfc_image_dataset_opts){.color_mode = modes[m], .image_size = {4, 8}, .verbose = TFC_NO}, NULL, &st);
        CHECK_OK(&st);
        REQUIRE(ds);
        CHECK(drain(ds, &d, true, &st));
        CHECK(d.shape0.rank == 4 && d.shape0.dims[3] == chans[m]);
        tfc_dataset_unref(ds);
    }
    ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.color_mode = "rgba", .image_size = {4, 8}, .verbose = TFC_NO}, NULL, &st);
    it = tfc_iterator_new(ds, &st);
    REQUIRE(tfc_iterator_next(it, out, 2, &st));
    CHECK(tfc_tensor_get_f64(out[0], 3) == 255.0 && tfc_tensor_get_f64(out[0], 4 + 2) == 12.0);
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
}

static bool contains(char *const *v, int64_t n, const char *s) {
    for (int64_t i = 0; i < n; i++)
        if (!strcmp(v[i], s)) return true;
    return false;
}

static void test_shuffle_and_split(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[300];
    path_of(dir, sizeof dir, "img");
    drained d;
    /* shuffled: file_paths is the unshuffled list permuted by numpy's RandomState(seed).shuffle */
    tfc_directory_dataset_info info;
    tfc_dataset *ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.seed = 1337, .has_seed = true, .image_size = {2, 2}, .verbose = TFC_NO},
        &info, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    int64_t perm[TREE_N];
    np_shuffle_permutation(1337, perm, TREE_N);
    CHECK(info.num_files == TREE_N);
    for (int i = 0; i < TREE_N; i++) {
        char want[512];
        snprintf(want, sizeof want, "%s/%s", dir, tree_inferred[perm[i]]);
        CHECK(!strcmp(info.file_paths[i], want));
        CHECK(info.labels[i] == tree_labels[perm[i]]);
    }
    /* the dataset yields every (image, label) pair once, in some order */
    CHECK(drain(ds, &d, true, &st));
    CHECK(d.n == TREE_N);
    int seen[TREE_N] = {0};
    for (int i = 0; i < TREE_N; i++)
        for (int j = 0; j < TREE_N; j++)
            if (d.first[i] == value_of(tree_inferred[j])) {
                seen[j]++;
                CHECK(d.label[i][0] == tree_labels[j]);
            }
    for (int j = 0; j < TREE_N; j++) CHECK(seen[j] == 1);
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);

    /* validation_split 0.34 of 9 files: int(3.06) = 3 last files for validation, the first 6 for training */
    tfc_directory_dataset_info tr, va, both;
    tfc_image_dataset_opts o = {.seed = 7, .has_seed = true, .validation_split = 0.34, .subset = "training",
                                .image_size = {2, 2}, .verbose = TFC_NO};
    ds = tfc_image_dataset_from_directory(dir, &o, &tr, &st);
    CHECK_OK(&st);
    tfc_dataset_unref(ds);
    o.subset = "validation";
    ds = tfc_image_dataset_from_directory(dir, &o, &va, &st);
    CHECK_OK(&st);
    CHECK(drain(ds, &d, true, &st) && d.n == 3);
    tfc_dataset_unref(ds);
    o.subset = "both";
    ds = tfc_image_dataset_from_directory(dir, &o, &both, &st);
    CHECK_OK(&st);
    CHECK(tr.num_files == 6 && va.num_files == 3);
    np_shuffle_permutation(7, perm, TREE_N);
    for (int i = 0; i < TREE_N; i++) {
        char want[512];
        snprintf(want, sizeof want, "%s/%s", dir, tree_inferred[perm[i]]);
        CHECK(i < 6 ? !strcmp(tr.file_paths[i], want) : !strcmp(va.file_paths[i - 6], want));
        CHECK(!contains(tr.file_paths, tr.num_files, want) != !contains(va.file_paths, va.num_files, want));
    }
    CHECK(both.num_files == 6 && both.num_validation_files == 3 && both.validation);
    for (int i = 0; i < 6; i++) CHECK(!strcmp(both.file_paths[i], tr.file_paths[i]));
    for (int i = 0; i < 3; i++) CHECK(!strcmp(both.validation_file_paths[i], va.file_paths[i]));
    CHECK(drain(ds, &d, true, &st) && d.n == 6);
    CHECK(drain(both.validation, &d, true, &st) && d.n == 3);
    /* the validation dataset is not shuffled: its order is validation_file_paths' */
    for (int i = 0; i < 3; i++) {
        const char *rel = both.validation_file_paths[i] + strlen(dir) + 1;
        CHECK(d.first[i] == value_of(rel));
    }
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&tr);
    tfc_directory_dataset_info_free(&va);
    tfc_directory_dataset_info_free(&both);

    /* a split too small for one validation file: Keras's samples[:-0] leaves training empty */
    o.validation_split = 0.1;
    o.subset = "training";
    ds = tfc_image_dataset_from_directory(dir, &o, NULL, &st);
    CHECK(!ds);
    CHECK(strstr(st.msg, "No images found in directory"));
    o.subset = "validation";
    ds = tfc_image_dataset_from_directory(dir, &o, &va, &st);
    CHECK_OK(&st);
    CHECK(va.num_files == TREE_N);
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&va);
}

/* Runs fn with stdout sent to a file; returns what it printed (static buffer). */
static const char *capture_stdout(void (*fn)(void)) {
    static char buf[1024];
    char p[300];
    path_of(p, sizeof p, "stdout.txt");
    fflush(stdout);
    int saved = dup(1);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    close(fd);
    fn();
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    FILE *f = fopen(p, "rb");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f) fclose(f);
    buf[n] = 0;
    return buf;
}

static void verbose_split(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[300];
    path_of(dir, sizeof dir, "img");
    tfc_directory_dataset_info info;
    tfc_dataset *ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.seed = 1, .has_seed = true, .validation_split = 0.5, .subset = "both"}, &info,
        &st);
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);
    ds = tfc_text_dataset_from_directory(dir, &(tfc_text_dataset_opts){.labels = "none"}, NULL, &st);
    tfc_dataset_unref(ds);
}

static void test_messages(void) {
    const char *out = capture_stdout(verbose_split);
    CHECK(!strcmp(out, "Found 9 files belonging to 3 classes.\nUsing 5 files for training.\n"
                       "Using 4 files for validation.\nFound 1 files belonging to 1 classes.\n"));
}

static void test_text(void) {
    tfc_status st = TFC_STATUS_INIT;
    write_text("txt/neg/b.txt", "bad movie");
    write_text("txt/neg/A.TXT", "awful");
    write_text("txt/neg/sub/c.txt", "");
    write_text("txt/pos/z.txt", "a great film, really");
    write_text("txt/pos/image.png", "ignored");
    char dir[300];
    path_of(dir, sizeof dir, "txt");
    tfc_directory_dataset_info info;
    tfc_dataset *ds = tfc_text_dataset_from_directory(
        dir, &(tfc_text_dataset_opts){.shuffle = TFC_NO, .batch_size = 3, .max_length = 7, .verbose = TFC_NO}, &info,
        &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    static const char *const rels[] = {"neg/A.TXT", "neg/b.txt", "neg/sub/c.txt", "pos/z.txt"};
    static const char *const texts[] = {"awful", "bad mov", "", "a great"};
    expect_paths(&info, dir, rels, 4);
    CHECK(info.num_classes == 2 && !strcmp(info.class_names[1], "pos"));
    tfc_tensor_spec s0 = tfc_dataset_component_spec(ds, 0);
    CHECK(s0.dtype == TFC_STRING && s0.shape.rank == 1);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2];
    int row = 0;
    while (tfc_iterator_next(it, out, 2, &st)) {
        for (int64_t i = 0; i < tfc_tensor_dim(out[0], 0); i++, row++) {
            size_t len = 0;
            const char *s = tfc_tensor_string(out[0], i, &len);
            CHECK(row < 4 && len == strlen(texts[row]) && !memcmp(s, texts[row], len));
            CHECK(tfc_tensor_get_f64(out[1], i) == (row < 3 ? 0 : 1));
        }
        tfc_tensor_unref(out[0]);
        tfc_tensor_unref(out[1]);
    }
    CHECK_CODE(&st, TFC_OUT_OF_RANGE);
    CHECK(row == 4);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);

    /* unbatched, no labels, shuffled: string scalars, every text once */
    ds = tfc_text_dataset_from_directory(
        dir, &(tfc_text_dataset_opts){.labels = "none", .batch_size = TFC_UNBATCHED, .seed = 3, .has_seed = true,
                                      .verbose = TFC_NO},
        NULL, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    CHECK(!strcmp(tfc_dataset_structure(ds), "."));
    it = tfc_iterator_new(ds, &st);
    int n = 0, found = 0;
    while (tfc_iterator_next(it, out, 1, &st)) {
        size_t len = 0;
        const char *s = tfc_tensor_string(out[0], 0, &len);
        CHECK(tfc_tensor_rank(out[0]) == 0);
        found += len == 20 && !memcmp(s, "a great film, really", 20);
        n++;
        tfc_tensor_unref(out[0]);
    }
    CHECK(n == 4 && found == 1);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    ds = tfc_text_dataset_from_directory(dir, &(tfc_text_dataset_opts){.max_length = -1}, NULL, &st);
    CHECK(!ds);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

static void test_bad_files(void) {
    tfc_status st = TFC_STATUS_INIT;
    write_flat_png("bad/c1/good.png", 2, 2, 77);
    write_text("bad/c1/broken.png", "this is no PNG at all");
    write_flat_png("bad/c2/ok.png", 2, 2, 99);
    char dir[300];
    path_of(dir, sizeof dir, "bad");
    tfc_dataset *ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.shuffle = TFC_NO, .batch_size = TFC_UNBATCHED, .image_size = {2, 2},
                                       .verbose = TFC_NO},
        NULL, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2] = {0};
    /* the broken file fails naming it; the iterator then goes on */
    CHECK(!tfc_iterator_next(it, out, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Cannot decode image") && strstr(st.msg, "bad/c1/broken.png"));
    CHECK(tfc_iterator_next(it, out, 2, &st));
    CHECK(out[0] && tfc_tensor_get_f64(out[0], 0) == 77.0 && tfc_tensor_get_f64(out[1], 0) == 0.0);
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    CHECK(tfc_iterator_next(it, out, 2, &st));
    CHECK(out[0] && tfc_tensor_get_f64(out[0], 0) == 99.0 && tfc_tensor_get_f64(out[1], 0) == 1.0);
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    CHECK(!tfc_iterator_next(it, out, 2, &st));
    CHECK_CODE(&st, TFC_OUT_OF_RANGE);
    tfc_iterator_free(it);
    /* ignore_errors skips it */
    drained d;
    ds = tfc_dataset_ignore_errors(ds, &st);
    CHECK(drain(ds, &d, false, &st));
    CHECK(d.n == 2);
    tfc_dataset_unref(ds);

    /* a file deleted after listing: NOT_FOUND naming it */
    char victim[400];
    path_of(victim, sizeof victim, "bad/c2/ok.png");
    ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.shuffle = TFC_NO, .batch_size = TFC_UNBATCHED, .verbose = TFC_NO}, NULL, &st);
    REQUIRE(ds);
    remove(victim);
    it = tfc_iterator_new(ds, &st);
    CHECK(!tfc_iterator_next(it, out, 2, &st)); /* broken.png */
    CHECK(tfc_iterator_next(it, out, 2, &st));  /* good.png */
    tfc_tensor_unref(out[0]);
    tfc_tensor_unref(out[1]);
    CHECK(!tfc_iterator_next(it, out, 2, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "bad/c2/ok.png; No such file or directory"));
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
}

static void test_links(void) {
    tfc_status st = TFC_STATUS_INIT;
    write_flat_png("lnk/real/r.png", 2, 2, 1);
    write_flat_png("lnk/k/own.png", 2, 2, 2);
    char target[400], link[400];
    path_of(target, sizeof target, "lnk/real");
    path_of(link, sizeof link, "lnk/k/via");
    CHECK(symlink(target, link) == 0);
    path_of(target, sizeof target, "lnk/k");
    path_of(link, sizeof link, "lnk/k/loop"); /* a link back to the class folder */
    CHECK(symlink(target, link) == 0);
    char dir[300];
    path_of(dir, sizeof dir, "lnk");
    tfc_directory_dataset_info info;
    tfc_dataset *ds = tfc_image_dataset_from_directory(
        dir, &(tfc_image_dataset_opts){.shuffle = TFC_NO, .verbose = TFC_NO}, &info, &st);
    CHECK_OK(&st);
    /* classes "k" and "real"; the link "via" is followed (as tf.io.gfile.walk), "loop" skipped */
    static const char *const rels[] = {"k/own.png", "k/via/r.png", "real/r.png"};
    expect_paths(&info, dir, rels, 3);
    tfc_dataset_unref(ds);
    tfc_directory_dataset_info_free(&info);
}

static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[300], missing[320];
    path_of(dir, sizeof dir, "img");
    snprintf(missing, sizeof missing, "%s/nope", root);
    struct {
        tfc_image_dataset_opts o;
        const char *dir;
        tfc_code code;
        const char *msg;
    } cases[] = {
        {{.verbose = TFC_NO}, missing, TFC_NOT_FOUND, "Could not find directory"},
        {{.labels = "folders"}, dir, TFC_INVALID_ARGUMENT, "`labels` argument should be"},
        {{.label_mode = "sparse"}, dir, TFC_INVALID_ARGUMENT, "`label_mode` argument must be one of"},
        {{.color_mode = "cmyk"}, dir, TFC_INVALID_ARGUMENT, "`color_mode` must be one of"},
        {{.interpolation = "bicubic"}, dir, TFC_UNIMPLEMENTED, "bicubic"},
        {{.interpolation = "cubic"}, dir, TFC_INVALID_ARGUMENT, "Value not recognized for `interpolation`: cubic"},
        {{.validation_split = 1.5, .subset = "training"}, dir, TFC_INVALID_ARGUMENT,
         "`validation_split` must be between 0 and 1, received: 1.5"},
        {{.validation_split = 0.2}, dir, TFC_INVALID_ARGUMENT, "If `subset` is set"},
        {{.subset = "training"}, dir, TFC_INVALID_ARGUMENT, "If `subset` is set"},
        {{.validation_split = 0.2, .subset = "test", .seed = 1, .has_seed = true}, dir, TFC_INVALID_ARGUMENT,
         "`subset` must be either"},
        {{.validation_split = 0.2, .subset = "training"}, dir, TFC_INVALID_ARGUMENT, "you must provide a `seed`"},
        {{.class_names = (const char *[]){"cat", "dog"}, .num_class_names = 2, .verbose = TFC_NO}, dir,
         TFC_INVALID_ARGUMENT, "Expected: ['cat', 'dog', 'emu'], but received: ['cat', 'dog']"},
        {{.labels = "none", .label_values = (int32_t[]){1}, .num_label_values = 1,
          .class_names = (const char *[]){"a"}, .num_class_names = 1},
         dir, TFC_INVALID_ARGUMENT, "You can only pass `class_names` if `labels=\"inferred\"`. Received: labels=[1]"},
        {{.batch_size = -5}, dir, TFC_INVALID_ARGUMENT, "batch_size"},
        {{.image_size = {-1, 4}}, dir, TFC_INVALID_ARGUMENT, "image_size"},
        {{.seed = -1, .has_seed = true, .verbose = TFC_NO}, dir, TFC_INVALID_ARGUMENT, "Seed must be between"},
        {{.subset = "both", .validation_split = 0.5, .seed = 1, .has_seed = true}, dir, TFC_INVALID_ARGUMENT,
         "info"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tfc_dataset *ds = tfc_image_dataset_from_directory(cases[i].dir, &cases[i].o, NULL, &st);
        CHECK(!ds);
        CHECK_CODE(&st, cases[i].code);
        if (!strstr(st.msg, cases[i].msg)) {
            fprintf(stderr, "case %zu: message \"%s\" lacks \"%s\"\n", i, st.msg, cases[i].msg);
            CHECK(false);
        }
        tfc_dataset_unref(ds);
    }
    /* no images at all */
    mkdirs("empty/a");
    write_text("empty/a/x.txt", "text only");
    char empty[300];
    path_of(empty, sizeof empty, "empty");
    CHECK(!tfc_image_dataset_from_directory(empty, &(tfc_image_dataset_opts){.verbose = TFC_NO}, NULL, &st));
    CHECK(strstr(st.msg, "No images found in directory") &&
          strstr(st.msg, "Allowed formats: ('.bmp', '.gif', '.jpeg', '.jpg', '.png')"));
    /* NULL directory */
    CHECK(!tfc_image_dataset_from_directory(NULL, NULL, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

/* Every allocation failing in turn: each call fails cleanly or succeeds (ASan checks for leaks). */
static void test_alloc_failures(void) {
    char dir[300];
    path_of(dir, sizeof dir, "img");
    bool succeeded = false;
    int64_t n = 0;
    for (; n < 2000 && !succeeded; n++) {
        tfc_status st = TFC_STATUS_INIT;
        tfc_directory_dataset_info info;
        tfc_alloc_fail_after(n);
        tfc_dataset *ds = tfc_image_dataset_from_directory(
            dir, &(tfc_image_dataset_opts){.seed = 2, .has_seed = true, .validation_split = 0.5, .subset = "both",
                                           .verbose = TFC_NO},
            &info, &st);
        tfc_alloc_fail_after(-1);
        if (ds) {
            CHECK(info.num_files == 5 && info.validation);
            tfc_dataset_unref(ds);
            tfc_directory_dataset_info_free(&info);
            succeeded = true;
            continue;
        }
        CHECK(st.code == TFC_RESOURCE_EXHAUSTED);
        CHECK(!info.file_paths && !info.validation);
    }
    CHECK(succeeded && n > 20); /* it took many allocations, each of which failed once */
}

int main(void) {
    const char *tmp = getenv("TMPDIR");
    snprintf(root, sizeof root, "%s/tfc_keras_dsu_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    REQUIRE(mkdtemp(root));
    make_tree();
    test_numpy_rng();
    test_order_and_labels();
    test_label_modes();
    test_pixels();
    test_shuffle_and_split();
    test_messages();
    test_text();
    test_bad_files();
    test_links();
    test_errors();
    test_alloc_failures();
    nftw(root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    TEST_MAIN_END();
}
