/* model.save_weights / load_weights in Keras 2's HDF5 layout: the file's structure as h5py writes it, round
 * trips (bit-exact weights, equal predictions), positional matching and its errors, string attributes in
 * both forms and chunked, corrupt and truncated files (DATA_LOSS, no crash: run under ASan too), and a failed
 * save that leaves the old file intact. With TFC_FIXTURES_DIR set, also a weights file written by Keras 2.0. */
#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tfc/keras.h"
#include "keras_files_util.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

/* Input (4) -> Dense(3) -> Dropout -> BatchNormalization -> Dense(2, softmax): weights in three layers, one
 * weightless layer between, non-trainable BN statistics. names: NULL for automatic names. */
static tfc_model *make_model(const char *const *names, int64_t units) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){
        tfc_layers_dense(.units = units, .activation = "relu", .input_shape = {4}, .name = names ? names[0] : NULL),
        tfc_layers_dropout(.rate = 0.5, .name = names ? names[1] : NULL),
        tfc_layers_batch_normalization(.name = names ? names[2] : NULL),
        tfc_layers_dense(.units = 2, .activation = "softmax", .name = names ? names[3] : NULL),
        NULL});
    REQUIRE(m);
    tfc_shape in = {.rank = 2, .dims = {-1, 4}};
    CHECK(tfc_model_build(m, &in, &st));
    CHECK_OK(&st);
    return m;
}

/* Sets every weight of m to distinct values derived from seed (so a wrong pairing shows). */
static void fill_weights(tfc_model *m, float seed) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *w[16];
    int n = tfc_model_get_weights(m, w, 16, &st);
    REQUIRE(n > 0 && n <= 16);
    for (int i = 0; i < n; i++) {
        tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, tfc_tensor_shape(w[i])->dims, tfc_tensor_rank(w[i]), &st);
        REQUIRE(t);
        float *p = tfc_tensor_mutable_data(t);
        for (int64_t j = 0; j < tfc_tensor_num_elements(t); j++)
            p[j] = seed * 0.01f * (float)(j + 1) + 0.1f * (float)i + (i == 7 ? 1.0f : 0.0f); /* variance > 0 */
        tfc_tensor_unref(w[i]);
        w[i] = t;
    }
    CHECK(tfc_model_set_weights(m, w, n, &st));
    CHECK_OK(&st);
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
}

static tfc_tensor *predict(tfc_model *m) {
    tfc_status st = TFC_STATUS_INIT;
    float x[3 * 4];
    for (int i = 0; i < 12; i++) x[i] = 0.25f * (float)i - 1.0f;
    tfc_tensor *in = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){3, 4}, 2, x, sizeof x, &st);
    tfc_tensor *y = tfc_model_call(m, in, false, &st);
    CHECK_OK(&st);
    tfc_tensor_unref(in);
    REQUIRE(y);
    return y;
}

static bool file_equals(const char *path, const unsigned char *data, size_t n) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    unsigned char *buf = malloc(n + 1);
    size_t got = fread(buf, 1, n + 1, f);
    fclose(f);
    bool eq = got == n && !memcmp(buf, data, n);
    free(buf);
    return eq;
}

static size_t read_file(const char *path, unsigned char **out) {
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

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* ---- HDF5 helpers for inspecting and rewriting files ---- */

/* Reads a string-array attribute (fixed or variable length) into out (strings malloc'd); returns the count,
 * and *fixed tells which form it had; -1 when absent or not strings. */
static int attr_strings(hid_t obj, const char *name, char **out, int max, bool *fixed, H5T_class_t *cls) {
    if (H5Aexists(obj, name) <= 0) return -1;
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = H5Aget_type(a), s = H5Aget_space(a);
    int n = (int)H5Sget_simple_extent_npoints(s);
    *cls = H5Tget_class(t);
    *fixed = *cls == H5T_STRING && !H5Tis_variable_str(t);
    if (*cls == H5T_STRING && n <= max) {
        if (*fixed) {
            size_t size = H5Tget_size(t);
            char *buf = calloc((size_t)n, size);
            H5Aread(a, t, buf);
            for (int i = 0; i < n; i++) out[i] = strndup(buf + (size_t)i * size, size);
            free(buf);
        } else {
            char **p = calloc((size_t)n, sizeof *p);
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Aread(a, mt, p);
            for (int i = 0; i < n; i++) out[i] = strdup(p[i]);
            H5Dvlen_reclaim(mt, s, H5P_DEFAULT, p);
            H5Tclose(mt);
            free(p);
        }
    }
    H5Sclose(s);
    H5Tclose(t);
    H5Aclose(a);
    return n;
}

static void free_strs(char **s, int n) {
    for (int i = 0; i < n; i++) free(s[i]);
}

/* Replaces attribute `name` of obj with variable-length strings, split into `chunks` numbered parts when
 * chunks > 0 (name0, name1, ...), as newer h5py and Keras's chunking write them. */
static void rewrite_vlen(hid_t obj, const char *name, char **strs, int n, int chunks) {
    H5Adelete(obj, name);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    int parts = chunks > 0 ? chunks : 1;
    for (int c = 0, from = 0; c < parts; c++) {
        int k = n / parts + (c < n % parts);
        hsize_t dims[1] = {(hsize_t)k};
        hid_t s = H5Screate_simple(1, dims, NULL);
        char an[64];
        if (chunks > 0)
            snprintf(an, sizeof an, "%s%d", name, c);
        else
            snprintf(an, sizeof an, "%s", name);
        hid_t a = H5Acreate2(obj, an, t, s, H5P_DEFAULT, H5P_DEFAULT);
        REQUIRE(a >= 0);
        REQUIRE(H5Awrite(a, t, strs + from) >= 0);
        H5Aclose(a);
        H5Sclose(s);
        from += k;
    }
    H5Tclose(t);
}

/* ---- tests ---- */

static const char *const names_a[] = {"d1", "drop", "bn", "out"};

static void test_layout(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = make_model(names_a, 3);
    fill_weights(m, 1.0f);
    REQUIRE(tfc_model_save_weights(m, tmp_path("a.h5"), &st));
    CHECK_OK(&st);
    CHECK(access(tmp_path("a.h5.tmp"), F_OK) != 0);

    hid_t f = H5Fopen(tmp_path("a.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    char *s[8];
    bool fixed;
    H5T_class_t cls;
    int n = attr_strings(f, "layer_names", s, 8, &fixed, &cls);
    CHECK(n == 4 && fixed);
    if (n == 4) CHECK(!strcmp(s[0], "d1") && !strcmp(s[1], "drop") && !strcmp(s[2], "bn") && !strcmp(s[3], "out"));
    free_strs(s, n);
    /* Scalar strings are variable-length, as h5py writes a str. */
    const char *keys[2] = {"backend", "keras_version"}, *want[2] = {"tensorflow", "2.4.0"};
    for (int i = 0; i < 2; i++) {
        hid_t a = H5Aopen(f, keys[i], H5P_DEFAULT), t = H5Aget_type(a), sp = H5Aget_space(a);
        CHECK(H5Sget_simple_extent_type(sp) == H5S_SCALAR && H5Tis_variable_str(t) > 0);
        char *v = NULL;
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, H5T_VARIABLE);
        CHECK(H5Aread(a, mt, &v) >= 0 && v && !strcmp(v, want[i]));
        H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, &v);
        H5Tclose(mt), H5Sclose(sp), H5Tclose(t), H5Aclose(a);
    }
    /* One group per layer; weight names are variable names; an empty list is an empty float64 array. */
    hid_t g = H5Gopen2(f, "d1", H5P_DEFAULT);
    n = attr_strings(g, "weight_names", s, 8, &fixed, &cls);
    CHECK(n == 2 && fixed);
    if (n == 2) CHECK(!strcmp(s[0], "d1/kernel:0") && !strcmp(s[1], "d1/bias:0"));
    free_strs(s, n);
    H5Gclose(g);
    g = H5Gopen2(f, "drop", H5P_DEFAULT);
    CHECK(attr_strings(g, "weight_names", s, 8, &fixed, &cls) == 0 && cls == H5T_FLOAT);
    H5Gclose(g);
    g = H5Gopen2(f, "bn", H5P_DEFAULT);
    n = attr_strings(g, "weight_names", s, 8, &fixed, &cls);
    CHECK(n == 4);
    if (n == 4)
        CHECK(!strcmp(s[0], "bn/gamma:0") && !strcmp(s[1], "bn/beta:0") && !strcmp(s[2], "bn/moving_mean:0") &&
              !strcmp(s[3], "bn/moving_variance:0"));
    free_strs(s, n);
    H5Gclose(g);
    /* Datasets live at <layer>/<weight name>: /d1/d1/kernel:0, float32 [4, 3], values as set. */
    hid_t d = H5Dopen2(f, "d1/d1/kernel:0", H5P_DEFAULT);
    REQUIRE(d >= 0);
    hid_t sp = H5Dget_space(d), t = H5Dget_type(d);
    hsize_t dims[4];
    CHECK(H5Sget_simple_extent_ndims(sp) == 2 && H5Sget_simple_extent_dims(sp, dims, NULL) == 2 && dims[0] == 4 &&
          dims[1] == 3);
    CHECK(H5Tequal(t, H5T_IEEE_F32LE) > 0);
    float k[12];
    CHECK(H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, k) >= 0);
    CHECK(k[0] == 0.01f && k[11] == 0.12f);
    H5Tclose(t), H5Sclose(sp), H5Dclose(d);
    CHECK(H5Lexists(f, "out", H5P_DEFAULT) > 0 && H5Lexists(f, "bn/bn/moving_variance:0", H5P_DEFAULT) > 0);
    H5Fclose(f);
    tfc_model_free(m);
}

static void test_round_trip(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *a = make_model(names_a, 3);
    fill_weights(a, 1.0f);
    REQUIRE(tfc_model_save_weights(a, tmp_path("rt.h5"), &st));
    /* Automatic names: matching is positional, as Keras. */
    tfc_model *b = make_model(NULL, 3);
    fill_weights(b, -2.0f);
    CHECK(!same_weights(a, b));
    CHECK(tfc_model_load_weights(b, tmp_path("rt.h5"), &st));
    CHECK_OK(&st);
    CHECK(same_weights(a, b));
    tfc_tensor *ya = predict(a), *yb = predict(b);
    CHECK(!memcmp(tfc_tensor_data(ya), tfc_tensor_data(yb), tfc_tensor_byte_size(ya)));
    tfc_tensor_unref(ya);
    tfc_tensor_unref(yb);
    /* No timestamps: the same weights give the same bytes. */
    unsigned char *first, *second;
    size_t n1 = read_file(tmp_path("rt.h5"), &first);
    sleep(1);
    REQUIRE(tfc_model_save_weights(a, tmp_path("rt2.h5"), &st));
    size_t n2 = read_file(tmp_path("rt2.h5"), &second);
    CHECK(n1 == n2 && !memcmp(first, second, n1));
    free(first);
    free(second);
    /* Saving over an existing file replaces it. */
    fill_weights(b, 3.0f);
    CHECK(tfc_model_save_weights(b, tmp_path("rt.h5"), &st));
    CHECK(tfc_model_load_weights(a, tmp_path("rt.h5"), &st));
    CHECK(same_weights(a, b));
    tfc_model_free(a);
    tfc_model_free(b);
}

static void test_mismatch(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *a = make_model(names_a, 3);
    fill_weights(a, 1.0f);
    REQUIRE(tfc_model_save_weights(a, tmp_path("mm.h5"), &st));
    /* Different units: shapes differ; the message names the layer, the weight and both shapes, and nothing is
     * assigned (the model keeps its weights). */
    tfc_model *b = make_model(NULL, 5);
    fill_weights(b, 2.0f);
    tfc_model *b0 = make_model(NULL, 5);
    fill_weights(b0, 2.0f);
    CHECK(!tfc_model_load_weights(b, tmp_path("mm.h5"), &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "kernel:0") && strstr(st.msg, "(4, 3)") && strstr(st.msg, "(4, 5)") &&
          strstr(st.msg, tfc_layer_name(tfc_model_as_layer(b)) ? "Layer #0" : ""));
    CHECK(same_weights(b, b0));
    tfc_model_free(b);
    tfc_model_free(b0);
    /* Fewer layers with weights. */
    tfc_model *c = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 3, .input_shape = {4}), NULL});
    tfc_shape in = {.rank = 2, .dims = {-1, 4}};
    CHECK(tfc_model_build(c, &in, &st));
    CHECK(!tfc_model_load_weights(c, tmp_path("mm.h5"), &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "containing 3 layers into a model with 1 layers") != NULL);
    tfc_model_free(c);
    /* Same layer count, but a Dense without bias where the file has two weights. */
    tfc_model *d = tfc_sequential(ctx, (tfc_layer *[]){
        tfc_layers_dense(.units = 3, .use_bias = TFC_NO, .input_shape = {4}), tfc_layers_dropout(.rate = 0.5),
        tfc_layers_batch_normalization(), tfc_layers_dense(.units = 2), NULL});
    CHECK(tfc_model_build(d, &in, &st));
    CHECK(!tfc_model_load_weights(d, tmp_path("mm.h5"), &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "expects 1 weights, but the saved weights have 2 elements") != NULL);
    tfc_model_free(d);
    tfc_model_free(a);
}

/* The same file with variable-length string attributes (newer h5py), layer_names chunked in three parts and
 * a full-model layout (weights under /model_weights) loads the same. */
static void test_string_forms(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *a = make_model(names_a, 3);
    fill_weights(a, 1.5f);
    REQUIRE(tfc_model_save_weights(a, tmp_path("v.h5"), &st));
    hid_t f = H5Fopen(tmp_path("v.h5"), H5F_ACC_RDWR, H5P_DEFAULT);
    REQUIRE(f >= 0);
    char *s[8];
    bool fixed;
    H5T_class_t cls;
    int n = attr_strings(f, "layer_names", s, 8, &fixed, &cls);
    REQUIRE(n == 4);
    rewrite_vlen(f, "layer_names", s, n, 3);
    for (int i = 0; i < n; i++) {
        if (!strcmp(s[i], "drop")) continue;
        hid_t g = H5Gopen2(f, s[i], H5P_DEFAULT);
        char *w[8];
        int nw = attr_strings(g, "weight_names", w, 8, &fixed, &cls);
        REQUIRE(nw > 0);
        rewrite_vlen(g, "weight_names", w, nw, 0);
        free_strs(w, nw);
        H5Gclose(g);
    }
    free_strs(s, n);
    H5Fclose(f);
    f = H5Fopen(tmp_path("v.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(H5Aexists(f, "layer_names") == 0 && H5Aexists(f, "layer_names2") > 0);
    H5Fclose(f);
    tfc_model *b = make_model(NULL, 3);
    CHECK(tfc_model_load_weights(b, tmp_path("v.h5"), &st));
    CHECK_OK(&st);
    CHECK(same_weights(a, b));
    tfc_model_free(b);

    /* Full-model layout: move everything into /model_weights. */
    hid_t src = H5Fopen(tmp_path("v.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t dst = H5Fcreate(tmp_path("full.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    REQUIRE(src >= 0 && dst >= 0);
    CHECK(H5Ocopy(src, "/", dst, "model_weights", H5P_DEFAULT, H5P_DEFAULT) >= 0);
    H5Fclose(src);
    H5Fclose(dst);
    b = make_model(NULL, 3);
    CHECK(tfc_model_load_weights(b, tmp_path("full.h5"), &st));
    CHECK_OK(&st);
    CHECK(same_weights(a, b));
    tfc_model_free(b);
    tfc_model_free(a);
}

/* A model whose layer names exceed HDF5's 64 KiB object-header limit is written with chunked layer_names
 * (layer_names0, layer_names1, ...) and reads back. */
static void test_chunked_write(void) {
    tfc_status st = TFC_STATUS_INIT;
    enum { N = 1500 }; /* 1500 names of 46 bytes: 69000 > 64512 */
    tfc_layer **layers = calloc(N + 2, sizeof *layers);
    char name[64];
    layers[0] = tfc_layers_dense(.units = 2, .input_shape = {3}, .name = "first");
    for (int i = 1; i <= N; i++) {
        snprintf(name, sizeof name, "activation_layer_with_a_rather_long_name_%05d", i); /* 46 bytes */
        layers[i] = tfc_layers_activation(.activation = "linear", .name = name);
    }
    tfc_model *m = tfc_sequential(ctx, layers);
    REQUIRE(m);
    tfc_shape in = {.rank = 2, .dims = {-1, 3}};
    CHECK(tfc_model_build(m, &in, &st));
    CHECK_OK(&st);
    CHECK(tfc_model_save_weights(m, tmp_path("chunk.h5"), &st));
    CHECK_OK(&st);
    hid_t f = H5Fopen(tmp_path("chunk.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    CHECK(H5Aexists(f, "layer_names") == 0 && H5Aexists(f, "layer_names0") > 0 && H5Aexists(f, "layer_names1") > 0);
    H5Fclose(f);
    CHECK(tfc_model_load_weights(m, tmp_path("chunk.h5"), &st));
    CHECK_OK(&st);
    tfc_model_free(m);
    free(layers);
}

static void test_bad_files(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = make_model(names_a, 3);
    fill_weights(m, 1.0f);
    tfc_model *ref = make_model(NULL, 3);
    fill_weights(ref, 1.0f);
    /* Missing file, a text file, an empty file. */
    CHECK(!tfc_model_load_weights(m, tmp_path("missing.h5"), &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "missing.h5") != NULL);
    write_file(tmp_path("text.h5"), "not an hdf5 file\n", 17);
    CHECK(!tfc_model_load_weights(m, tmp_path("text.h5"), &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "text.h5") && strstr(st.msg, "not an HDF5 file"));
    write_file(tmp_path("empty.h5"), "", 0);
    CHECK(!tfc_model_load_weights(m, tmp_path("empty.h5"), &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    /* An HDF5 file that is not a Keras weights file. */
    hid_t f = H5Fcreate(tmp_path("other.h5"), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    CHECK(!tfc_model_load_weights(m, tmp_path("other.h5"), &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "other.h5") && strstr(st.msg, "layer_names"));

    /* Truncated at many points: DATA_LOSS naming the file (never a crash, never a partial load). */
    REQUIRE(tfc_model_save_weights(m, tmp_path("good.h5"), &st));
    unsigned char *data;
    size_t n = read_file(tmp_path("good.h5"), &data);
    fill_weights(m, 5.0f);
    tfc_model *m0 = make_model(NULL, 3);
    fill_weights(m0, 5.0f);
    int failures = 0, cuts = 0;
    for (size_t cut = 0; cut < n; cut += cut < 64 ? 7 : n / 37 + 1) {
        write_file(tmp_path("cut.h5"), data, cut);
        cuts++;
        if (tfc_model_load_weights(m, tmp_path("cut.h5"), &st)) continue;
        failures++;
        CHECK(st.code == TFC_DATA_LOSS);
        if (st.code != TFC_DATA_LOSS) fprintf(stderr, "  cut at %zu: %s: %s\n", cut, tfc_code_name(st.code), st.msg);
        CHECK(strstr(st.msg, "cut.h5") != NULL);
        CHECK(same_weights(m, m0));
    }
    CHECK(failures == cuts); /* HDF5 records the end of file: every truncation is detected */
    /* Garbage written over parts of the file: an error or a load, never a crash. */
    for (size_t pos = 0; pos + 16 < n; pos += n / 23 + 1) {
        unsigned char *c = malloc(n);
        memcpy(c, data, n);
        for (int i = 0; i < 16; i++) c[pos + (size_t)i] ^= (unsigned char)(0x9e + 37 * i);
        write_file(tmp_path("flip.h5"), c, n);
        free(c);
        if (!tfc_model_load_weights(m, tmp_path("flip.h5"), &st)) {
            CHECK(st.code == TFC_DATA_LOSS || st.code == TFC_INVALID_ARGUMENT);
            if (st.code != TFC_DATA_LOSS && st.code != TFC_INVALID_ARGUMENT)
                fprintf(stderr, "  garbage at %zu: %s: %s\n", pos, tfc_code_name(st.code), st.msg);
            CHECK(strstr(st.msg, "flip.h5") != NULL || strstr(st.msg, "Layer #") != NULL);
        }
    }
    free(data);
    tfc_model_free(m0);
    tfc_model_free(ref);
    tfc_model_free(m);
}

/* A save that fails leaves an existing file untouched and no temporary file behind. */
static void test_failed_save(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *a = make_model(names_a, 3);
    fill_weights(a, 1.0f);
    REQUIRE(tfc_model_save_weights(a, tmp_path("keep.h5"), &st));
    unsigned char *old;
    size_t n = read_file(tmp_path("keep.h5"), &old);
    fill_weights(a, 7.0f);
    /* The temporary file cannot be created (a directory holds its name; this works even as root, where
     * permission bits do not stop writes). */
    char tmpname[300];
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", tmp_path("keep.h5"), (long)getpid());
    REQUIRE(mkdir(tmpname, 0700) == 0);
    CHECK(!tfc_model_save_weights(a, tmp_path("keep.h5"), &st));
    CHECK(st.code != TFC_OK);
    CHECK(strstr(st.msg, "keep.h5") != NULL);
    CHECK(file_equals(tmp_path("keep.h5"), old, n));
    rmdir(tmpname);
    /* An unwritable directory (when not root) and a missing one. */
    char ro[300];
    snprintf(ro, sizeof ro, "%s/ro", tmpdir);
    mkdir(ro, 0700);
    char ro_file[400];
    snprintf(ro_file, sizeof ro_file, "%s/w.h5", ro);
    REQUIRE(tfc_model_save_weights(a, ro_file, &st));
    unsigned char *old2;
    size_t n2 = read_file(ro_file, &old2);
    chmod(ro, 0500);
    fill_weights(a, 8.0f);
    if (geteuid() != 0) {
        CHECK(!tfc_model_save_weights(a, ro_file, &st));
        CHECK_CODE(&st, TFC_PERMISSION_DENIED);
        CHECK(file_equals(ro_file, old2, n2));
    }
    chmod(ro, 0700);
    CHECK(!tfc_model_save_weights(a, tmp_path("no/such/dir/w.h5"), &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "no/such/dir/w.h5") != NULL);
    free(old);
    free(old2);
    tfc_model_free(a);
}

/* Every allocation of load_weights and save_weights failing in turn (SQLite's transient faults): each call
 * either succeeds completely or reports the failure with the model unchanged, the old file intact and no
 * temporary file left (run under ASan for leaks). */
static void test_alloc_faults(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *a = make_model(names_a, 3), *b = make_model(NULL, 3), *b0 = make_model(NULL, 3);
    fill_weights(a, 1.0f);
    fill_weights(b0, -2.0f);
    REQUIRE(tfc_model_save_weights(a, tmp_path("fault.h5"), &st));
    bool done = false;
    for (int64_t n = 0; n < 5000 && !done; n++) {
        fill_weights(b, -2.0f);
        tfc_alloc_fail_once_after(n);
        bool ok = tfc_model_load_weights(b, tmp_path("fault.h5"), &st);
        int64_t failed = tfc_alloc_failures();
        tfc_alloc_fail_once_after(-1);
        if (ok) {
            CHECK(same_weights(a, b));
            done = failed == 0;
        } else {
            CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
            CHECK(same_weights(b, b0));
        }
    }
    CHECK(done);
    unsigned char *old;
    size_t n_old = read_file(tmp_path("fault.h5"), &old);
    char tmpname[300];
    snprintf(tmpname, sizeof tmpname, "%s.tmp.%ld", tmp_path("fault.h5"), (long)getpid());
    done = false;
    for (int64_t n = 0; n < 5000 && !done; n++) {
        tfc_alloc_fail_once_after(n);
        bool ok = tfc_model_save_weights(b0, tmp_path("fault.h5"), &st);
        int64_t failed = tfc_alloc_failures();
        tfc_alloc_fail_once_after(-1);
        CHECK(access(tmpname, F_OK) != 0);
        if (ok) {
            done = failed == 0;
            CHECK(tfc_model_load_weights(b, tmp_path("fault.h5"), &st));
            CHECK(same_weights(b, b0));
            REQUIRE(tfc_model_save_weights(a, tmp_path("fault.h5"), &st)); /* back to the old content */
        } else {
            CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
            CHECK(file_equals(tmp_path("fault.h5"), old, n_old));
        }
    }
    CHECK(done);
    free(old);
    tfc_model_free(a);
    tfc_model_free(b);
    tfc_model_free(b0);
}

/* KERAS_3layer_weights.h5 (Keras 2.0: |S14 layer_names, vlen scalars, an empty float64 weight_names) into the
 * Functional model of keras_formats.md's fixture test 4: input 0.1 * i gives the spec's outputs. */
static void test_keras2_fixture(void) {
    const char *dir = getenv("TFC_FIXTURES_DIR");
    if (!dir || !*dir) {
        printf("TFC_FIXTURES_DIR unset: skipping the Keras 2.0 fixture\n");
        return;
    }
    tfc_status st = TFC_STATUS_INIT;
    char path[512];
    snprintf(path, sizeof path, "%s/keras_h5_hls4ml/KERAS_3layer_weights.h5", dir);
    tfc_ktensor *x = tfc_input(.shape = {16}, .name = "input_1");
    tfc_ktensor *h = tfc_apply(tfc_layers_dense(.units = 64, .activation = "relu", .name = "fc1_relu"), &st, x);
    h = tfc_apply(tfc_layers_dense(.units = 32, .activation = "relu", .name = "fc2_relu"), &st, h);
    h = tfc_apply(tfc_layers_dense(.units = 32, .activation = "relu", .name = "fc3_relu"), &st, h);
    h = tfc_apply(tfc_layers_dense(.units = 5, .activation = "softmax", .name = "output_softmax"), &st, h);
    REQUIRE(h);
    tfc_model *m = tfc_model_new(ctx, &x, 1, &h, 1, "model", &st);
    REQUIRE(m);
    CHECK(tfc_model_load_weights(m, path, &st));
    CHECK_OK(&st);
    float in[16];
    for (int i = 0; i < 16; i++) in[i] = 0.1f * (float)i;
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){1, 16}, 2, in, sizeof in, &st);
    tfc_tensor *y = tfc_model_call(m, t, false, &st);
    REQUIRE(y);
    const float want[5] = {9.2483e-06f, 0.2320828f, 0.0075296f, 0.0046414f, 0.7557370f};
    for (int i = 0; i < 5; i++) CHECK(fabs(((const float *)tfc_tensor_data(y))[i] - want[i]) < 1e-5);
    tfc_tensor_unref(y);
    tfc_tensor_unref(t);
    tfc_model_free(m);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tfc_test_saving_XXXXXX");
    REQUIRE(mkdtemp(tmpdir));
    test_layout();
    test_round_trip();
    test_mismatch();
    test_string_forms();
    test_chunked_write();
    test_bad_files();
    test_failed_save();
    test_alloc_faults();
    test_keras2_fixture();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
