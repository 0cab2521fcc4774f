/* Keras model files: save_weights('x.weights.h5') in Keras 3's tree (its structure, round trips, layout
 * detection on load), model.save / load_model for .keras archives and legacy .h5 models (bit-exact weights,
 * equal predictions, the optimizer's next step after a round trip), ModelCheckpoint saving whole models, and
 * damaged files: missing and oversized members, a deflate bomb, truncated archives, configs of the wrong types,
 * weights of the wrong shapes (DATA_LOSS / INVALID_ARGUMENT naming file and member, no crash: run under ASan
 * too). */
#include <dirent.h>
#include <hdf5.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <cjson/cJSON.h>

#include "keras/keras_internal.h" /* struct tfc_layer, to define a layer class */
#include "tfc/keras.h"
#include "keras_files_util.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

/* Input(4) -> Dense(3, relu) -> Dropout -> BatchNormalization -> Dense(2, softmax), weights set to distinct
 * values derived from seed. */
static tfc_model *sequential(float seed) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 3, .activation = "relu", .input_shape = {4}),
                                                       tfc_layers_dropout(.rate = 0.5), tfc_layers_batch_normalization(),
                                                       tfc_layers_dense(.units = 2, .activation = "softmax"), NULL});
    REQUIRE(m);
    tfc_shape in = {.rank = 2, .dims = {-1, 4}};
    CHECK(tfc_model_build(m, &in, &st));
    tfc_tensor *w[16];
    int n = tfc_model_get_weights(m, w, 16, &st);
    REQUIRE(n > 0 && n <= 16);
    for (int i = 0; i < n; i++) {
        tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, tfc_tensor_shape(w[i])->dims, tfc_tensor_rank(w[i]), &st);
        float *p = tfc_tensor_mutable_data(t);
        for (int64_t j = 0; j < tfc_tensor_num_elements(t); j++) p[j] = seed * 0.01f * (float)(j + 1) + 0.1f * (float)i + 0.5f;
        tfc_tensor_unref(w[i]);
        w[i] = t;
    }
    CHECK(tfc_model_set_weights(m, w, n, &st));
    CHECK_OK(&st);
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
    return m;
}

/* Functional: a, b (4) -> shared Dense(3) on each -> Concatenate -> Dense(2). */
static tfc_model *functional(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ktensor *a = tfc_input(.shape = {4}, .name = "a"), *b = tfc_input(.shape = {4}, .name = "b");
    tfc_layer *shared = tfc_layers_dense(.units = 3, .activation = "tanh", .name = "shared");
    tfc_ktensor *sa = tfc_layer_apply(shared, &a, 1, &st), *sb = tfc_layer_apply(shared, &b, 1, &st);
    tfc_ktensor *cat = tfc_layer_apply(tfc_layers_concatenate(), (tfc_ktensor *[]){sa, sb}, 2, &st);
    tfc_ktensor *out = tfc_layer_apply(tfc_layers_dense(.units = 2), &cat, 1, &st);
    CHECK_OK(&st);
    tfc_model *m = tfc_model_new(ctx, (tfc_ktensor *[]){a, b}, 2, &out, 1, "two_inputs", &st);
    CHECK_OK(&st);
    REQUIRE(m);
    return m;
}

/* Weights within tol of each other (float32 models). */
static bool close_weights(tfc_model *a, tfc_model *b, float tol) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *wa[16], *wb[16];
    int na = tfc_model_get_weights(a, wa, 16, &st), nb = tfc_model_get_weights(b, wb, 16, &st);
    bool close = na == nb && na > 0;
    for (int i = 0; close && i < na; i++) {
        close = tfc_shape_equal(tfc_tensor_shape(wa[i]), tfc_tensor_shape(wb[i]));
        const float *pa = tfc_tensor_data(wa[i]), *pb = tfc_tensor_data(wb[i]);
        for (int64_t j = 0; close && j < tfc_tensor_num_elements(wa[i]); j++) close = fabsf(pa[j] - pb[j]) <= tol;
    }
    for (int i = 0; i < na && i < 16; i++) tfc_tensor_unref(wa[i]);
    for (int i = 0; i < nb && i < 16; i++) tfc_tensor_unref(wb[i]);
    return close;
}

static tfc_tensor *input(int64_t n, float k) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 4}, 2, &st);
    float *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < n * 4; i++) p[i] = k * (0.25f * (float)(i % 9) - 1.0f);
    return t;
}

static bool same_predictions(tfc_model *a, tfc_model *b) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = input(3, 1.0f);
    tfc_tensor *ya = tfc_model_call(a, x, false, &st), *yb = tfc_model_call(b, x, false, &st);
    CHECK_OK(&st);
    bool same = ya && yb && tfc_tensor_byte_size(ya) == tfc_tensor_byte_size(yb) &&
                !memcmp(tfc_tensor_data(ya), tfc_tensor_data(yb), tfc_tensor_byte_size(ya));
    tfc_tensor_unref(x);
    tfc_tensor_unref(ya);
    tfc_tensor_unref(yb);
    return same;
}

static void test_weights_layout(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = sequential(1.0f), *other = sequential(2.0f);
    const char *path = tmp_path("x.weights.h5");
    CHECK(tfc_model_save_weights(m, path, &st));
    CHECK_OK(&st);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    REQUIRE(f >= 0);
    CHECK(H5Aexists(f, "layer_names") == 0);
    CHECK(H5Lexists(f, "vars", H5P_DEFAULT) > 0);
    static const char *const present[] = {"layers/dense/vars/0", "layers/dense/vars/1", "layers/dropout/vars",
                                          "layers/batch_normalization/vars/3", "layers/dense_1/vars/1"};
    for (size_t i = 0; i < sizeof present / sizeof *present; i++) {
        /* H5Lexists on a path needs every parent to exist: check them in order */
        char p[128];
        snprintf(p, sizeof p, "%s", present[i]);
        bool ok = true;
        for (char *s = p; ok && (s = strchr(s + 1, '/')); ) {
            *s = 0;
            ok = H5Lexists(f, p, H5P_DEFAULT) > 0;
            *s = '/';
        }
        CHECK(ok && H5Lexists(f, p, H5P_DEFAULT) > 0);
    }
    hid_t d = H5Dopen2(f, "layers/dense/vars/0", H5P_DEFAULT), sp = H5Dget_space(d);
    hsize_t dims[2];
    CHECK(H5Sget_simple_extent_ndims(sp) == 2 && H5Sget_simple_extent_dims(sp, dims, NULL) == 2 && dims[0] == 4 &&
          dims[1] == 3);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    CHECK(!same_weights(m, other));
    CHECK(tfc_model_load_weights(other, path, &st));
    CHECK_OK(&st);
    CHECK(same_weights(m, other));
    /* the legacy name keeps the legacy layout, and load_weights detects it */
    tfc_model *third = sequential(3.0f);
    CHECK(tfc_model_save_weights(third, tmp_path("w.h5"), &st));
    f = H5Fopen(tmp_path("w.h5"), H5F_ACC_RDONLY, H5P_DEFAULT);
    CHECK(f >= 0 && H5Aexists(f, "layer_names") > 0);
    H5Fclose(f);
    CHECK(tfc_model_load_weights(other, tmp_path("w.h5"), &st));
    CHECK(same_weights(third, other));
    /* a Keras 3 file for a model with other shapes: INVALID_ARGUMENT, the model unchanged */
    tfc_model *wide = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 5, .input_shape = {4}), NULL});
    tfc_shape in = {.rank = 2, .dims = {-1, 4}};
    CHECK(tfc_model_build(wide, &in, &st));
    CHECK(!tfc_model_load_weights(wide, path, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "x.weights.h5") != NULL);
    remove(path);
    remove(tmp_path("w.h5"));
    tfc_model_free(wide);
    tfc_model_free(third);
    tfc_model_free(other);
    tfc_model_free(m);
}

static void round_trip(tfc_model *m, const char *name, bool two_inputs) {
    tfc_status st = TFC_STATUS_INIT;
    const char *path = tmp_path(name);
    CHECK(tfc_model_save(m, path, &st));
    CHECK_OK(&st);
    tfc_model *back = tfc_keras_load_model(ctx, path, &st);
    CHECK_OK(&st);
    REQUIRE(back);
    CHECK(same_weights(m, back));
    if (!two_inputs) CHECK(same_predictions(m, back));
    DIR *dir = opendir(tmpdir);
    int entries = 0;
    for (struct dirent *e; (e = readdir(dir));) entries += e->d_name[0] != '.';
    closedir(dir);
    CHECK(entries == 1); /* no temporary file left */
    remove(path);
    tfc_model_free(back);
}

static void test_model_round_trips(void) {
    tfc_model *m = sequential(1.5f), *f = functional();
    round_trip(m, "m.keras", false);
    round_trip(m, "m.h5", false);
    round_trip(f, "f.keras", true);
    round_trip(f, "f.h5", true);
    tfc_status st = TFC_STATUS_INIT;
    CHECK(!tfc_model_save(m, tmp_path("m.txt"), &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Invalid filepath extension") != NULL);
    CHECK(!tfc_model_save(m, tmp_path("no/such/dir/m.keras"), &st));
    CHECK(st.code != TFC_OK);
    CHECK(!tfc_keras_load_model(ctx, tmp_path("missing.keras"), &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    FILE *junk = fopen(tmp_path("junk.keras"), "wb"); /* neither a zip nor HDF5: the message says both */
    REQUIRE(junk && fputs("not a model\n", junk) >= 0 && fclose(junk) == 0);
    CHECK(!tfc_keras_load_model(ctx, tmp_path("junk.keras"), &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "junk.keras") && strstr(st.msg, "neither a .keras archive (zip) nor an HDF5 model"));
    tfc_model_free(f);
    tfc_model_free(m);
}

static void train(tfc_model *m, int steps, int first) {
    tfc_status st = TFC_STATUS_INIT;
    for (int s = first; s < first + steps; s++) {
        tfc_tensor *x = input(8, 1.0f + 0.1f * (float)s);
        int64_t labels[8];
        for (int i = 0; i < 8; i++) labels[i] = (i + s) % 2;
        tfc_tensor *y = tfc_tensor_from_data(TFC_INT64, (int64_t[]){8}, 1, labels, sizeof labels, &st);
        double r[4];
        CHECK(tfc_model_train_on_batch(m, x, y, NULL, true, r, 4, &st) >= 0);
        CHECK_OK(&st);
        tfc_tensor_unref(x);
        tfc_tensor_unref(y);
    }
}

/* A model without Dropout, so that steps are deterministic. */
static tfc_model *trainable(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 3, .activation = "tanh", .input_shape = {4}),
                                                       tfc_layers_dense(.units = 2, .activation = "softmax"), NULL});
    tfc_shape in = {.rank = 2, .dims = {-1, 4}};
    CHECK(tfc_model_build(m, &in, &st));
    return m;
}

static void test_optimizer_state(const char *name, const char *opt) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = trainable();
    CHECK(tfc_compile(m, &st, .optimizer_name = opt, .loss_name = "sparse_categorical_crossentropy",
                      .metrics = {"accuracy"}));
    train(m, 3, 0);
    const char *path = tmp_path(name);
    CHECK(tfc_model_save(m, path, &st));
    CHECK_OK(&st);
    tfc_model *back = tfc_keras_load_model(ctx, path, &st);
    CHECK_OK(&st);
    REQUIRE(back);
    train(m, 1, 3);
    train(back, 1, 3);
    /* the optimizer's state came back: the step is the same (the loaded optimizer is the new family, whose ops
     * may round differently from the legacy one's fused kernels) */
    if (!close_weights(m, back, 1e-6f)) fprintf(stderr, "%s: the step after loading differs\n", name);
    CHECK(close_weights(m, back, 1e-6f));
    remove(path);
    tfc_model_free(back);
    tfc_model_free(m);
}

static void test_checkpoint_full_model(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = trainable();
    CHECK(tfc_compile(m, &st, .optimizer_name = "adam", .loss_name = "sparse_categorical_crossentropy"));
    tfc_tensor *x = input(16, 1.0f);
    int64_t labels[16];
    for (int i = 0; i < 16; i++) labels[i] = i % 2;
    tfc_tensor *y = tfc_tensor_from_data(TFC_INT64, (int64_t[]){16}, 1, labels, sizeof labels, &st);
    char pattern[300];
    snprintf(pattern, sizeof pattern, "%s/ck.{epoch:02d}.keras", tmpdir);
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.epochs = 2, .verbose = TFC_VERBOSE_SILENT,
                                        .callbacks = {tfc_callbacks_model_checkpoint(.filepath = pattern)}},
                        NULL, &st));
    CHECK_OK(&st);
    tfc_model *back = tfc_keras_load_model(ctx, tmp_path("ck.02.keras"), &st);
    CHECK_OK(&st);
    CHECK(back && same_weights(m, back));
    CHECK(access(tmp_path("ck.01.keras"), F_OK) == 0);
    remove(tmp_path("ck.01.keras"));
    remove(tmp_path("ck.02.keras"));
    tfc_model_free(back);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static void expect_load_error(const char *path, tfc_code code, const char *needle) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_keras_load_model(ctx, path, &st);
    CHECK(m == NULL);
    CHECK_CODE(&st, code);
    if (needle && !strstr(st.msg, needle)) fprintf(stderr, "message without \"%s\": %s\n", needle, st.msg);
    CHECK(needle == NULL || strstr(st.msg, needle) != NULL);
    tfc_model_free(m);
}

/* ---- a custom layer: y = factor * alpha * x, alpha a weight per feature ---- */
typedef struct {
    tfc_layer base;
    double factor;
} scale_layer;

static bool scale_build(tfc_layer *l, tfc_ctx *c, const tfc_shape *in, int n_in, tfc_status *st) {
    tfc_shape s = {.rank = 1, .dims = {in[0].dims[in[0].rank - 1]}};
    return tfc_layer_add_weight(l, c, "alpha", &s, TFC_FLOAT, tfc_initializer_of(.name = "random_uniform"), NULL,
                                true, st) != NULL;
}
static bool scale_shape(tfc_layer *l, const tfc_shape *in, int n_in, tfc_shape *out, int *n_out, tfc_status *st) {
    out[0] = in[0];
    *n_out = 1;
    return true;
}
static bool scale_call(tfc_layer *l, tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       bool training, tfc_status *st) {
    tfc_variable *w[1];
    tfc_layer_weights(l, w, 1);
    tfc_tensor *f = tfc_scalar(TFC_FLOAT, ((scale_layer *)l)->factor, st);
    tfc_tensor *a = f ? tfc_emit(c, "Mul", (tfc_tensor *[]){(tfc_tensor *)tfc_variable_value(w[0]), f}, 2, NULL, 0, st)
                      : NULL;
    out[0] = a ? tfc_emit(c, "Mul", (tfc_tensor *[]){in[0], a}, 2, NULL, 0, st) : NULL;
    tfc_tensor_unref(f);
    return out[0] != NULL;
}
static bool scale_get_config(const tfc_layer *l, void *cfg, tfc_status *st) {
    return cJSON_AddNumberToObject(cfg, "factor", ((const scale_layer *)l)->factor) != NULL;
}
static const tfc_layer_class scale_class = {.class_name = "Scale", .size = sizeof(scale_layer), .build = scale_build,
                                            .compute_output_shape = scale_shape, .call = scale_call,
                                            .get_config = scale_get_config};

static tfc_layer *scale_from_config(const char *config_json, void *user, tfc_status *st) {
    CHECK(user == &scale_class);
    cJSON *c = cJSON_Parse(config_json);
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(c, "name"), *f = cJSON_GetObjectItemCaseSensitive(c, "factor");
    scale_layer *l = (scale_layer *)tfc_layer_alloc(&scale_class, cJSON_IsString(name) ? name->valuestring : NULL);
    if (l) l->factor = cJSON_IsNumber(f) ? f->valuedouble : 1.0;
    cJSON_Delete(c);
    return &l->base;
}

static void test_custom_layer(void) {
    tfc_status st = TFC_STATUS_INIT;
    scale_layer *sc = (scale_layer *)tfc_layer_alloc(&scale_class, NULL);
    REQUIRE(sc);
    sc->factor = 2.5;
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 3, .input_shape = {4}), &sc->base, NULL});
    tfc_shape in = {.rank = 2, .dims = {-1, 4}};
    CHECK(tfc_model_build(m, &in, &st));
    const char *path = tmp_path("custom.keras");
    CHECK(tfc_model_save(m, path, &st));
    CHECK_OK(&st);
    expect_load_error(path, TFC_INVALID_ARGUMENT, "Unknown layer: 'Scale'");
    CHECK(tfc_keras_register_layer("Scale", scale_from_config, (void *)&scale_class, &st));
    tfc_model *back = tfc_keras_load_model(ctx, path, &st);
    CHECK_OK(&st);
    REQUIRE(back);
    CHECK(same_weights(m, back) && same_predictions(m, back));
    CHECK(tfc_model_save(m, tmp_path("custom.h5"), &st));
    tfc_model *back_h5 = tfc_keras_load_model(ctx, tmp_path("custom.h5"), &st);
    CHECK_OK(&st);
    CHECK(back_h5 && same_predictions(m, back_h5));
    CHECK(tfc_keras_register_layer("Scale", NULL, NULL, &st)); /* unregistered again */
    expect_load_error(path, TFC_INVALID_ARGUMENT, "Unknown layer: 'Scale'");
    remove(path);
    remove(tmp_path("custom.h5"));
    tfc_model_free(back_h5);
    tfc_model_free(back);
    tfc_model_free(m);
}

/* ---- damaged archives ---- */

/* Rewrites good.keras into path: member `drop` left out, member `name` replaced by data (stored, or deflated
 * when deflate). */
static void rewrite(const char *good, const char *path, const char *drop, const char *name, const void *data,
                    size_t size, bool deflate) {
    int err = 0;
    zip_t *in = zip_open(good, ZIP_RDONLY, &err), *out = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
    REQUIRE(in && out);
    static char keep[3][1 << 16];
    for (zip_int64_t i = 0; i < zip_get_num_entries(in, 0) && i < 3; i++) {
        const char *n = zip_get_name(in, (zip_uint64_t)i, 0);
        if (drop && !strcmp(n, drop)) continue;
        zip_source_t *src;
        if (name && !strcmp(n, name)) {
            src = zip_source_buffer(out, data, size, 0);
        } else {
            zip_file_t *zf = zip_fopen_index(in, (zip_uint64_t)i, 0);
            zip_int64_t got = zip_fread(zf, keep[i], sizeof keep[i]);
            zip_fclose(zf);
            REQUIRE(got >= 0 && got < (zip_int64_t)sizeof keep[i]);
            src = zip_source_buffer(out, keep[i], (zip_uint64_t)got, 0);
        }
        zip_int64_t idx = zip_file_add(out, n, src, ZIP_FL_OVERWRITE);
        REQUIRE(idx >= 0);
        zip_set_file_compression(out, (zip_uint64_t)idx, deflate && name && !strcmp(n, name) ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
    }
    REQUIRE(zip_close(out) == 0);
    zip_discard(in);
}

static void test_damaged_archives(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = sequential(1.0f);
    char good[256], bad[256];
    snprintf(good, sizeof good, "%s", tmp_path("good.keras"));
    snprintf(bad, sizeof bad, "%s", tmp_path("bad.keras"));
    CHECK(tfc_model_save(m, good, &st));
    CHECK_OK(&st);
    rewrite(good, bad, "config.json", NULL, NULL, 0, false);
    expect_load_error(bad, TFC_DATA_LOSS, "config.json");
    rewrite(good, bad, "model.weights.h5", NULL, NULL, 0, false);
    expect_load_error(bad, TFC_DATA_LOSS, "model.weights.h5");
    static const char wrong_types[] = "{\"class_name\": \"Sequential\", \"config\": {\"layers\": 7}}";
    rewrite(good, bad, NULL, "config.json", wrong_types, strlen(wrong_types), false);
    expect_load_error(bad, TFC_INVALID_ARGUMENT, "bad.keras");
    static const char not_json[] = "{\"class_name\": ";
    rewrite(good, bad, NULL, "config.json", not_json, strlen(not_json), false);
    expect_load_error(bad, TFC_DATA_LOSS, "config.json");
    static const char unknown[] = "{\"class_name\": \"Sequential\", \"config\": {\"name\": \"s\", \"layers\": "
                                  "[{\"class_name\": \"QDense\", \"config\": {\"units\": 2}}]}}";
    rewrite(good, bad, NULL, "config.json", unknown, strlen(unknown), false);
    expect_load_error(bad, TFC_INVALID_ARGUMENT, "Unknown layer");
    /* the weights of another model: shapes differ */
    tfc_model *wide = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 3, .input_shape = {5}),
                                                          tfc_layers_dropout(.rate = 0.5), tfc_layers_batch_normalization(),
                                                          tfc_layers_dense(.units = 2), NULL});
    tfc_shape in = {.rank = 2, .dims = {-1, 5}};
    CHECK(tfc_model_build(wide, &in, &st));
    CHECK(tfc_model_save(wide, tmp_path("wide.keras"), &st));
    int err = 0;
    zip_t *z = zip_open(tmp_path("wide.keras"), ZIP_RDONLY, &err);
    REQUIRE(z);
    zip_stat_t zs;
    zip_stat(z, "model.weights.h5", 0, &zs);
    char *w = malloc(zs.size);
    zip_file_t *zf = zip_fopen(z, "model.weights.h5", 0);
    CHECK(zip_fread(zf, w, zs.size) == (zip_int64_t)zs.size);
    zip_fclose(zf);
    zip_discard(z);
    rewrite(good, bad, NULL, "model.weights.h5", w, zs.size, false);
    expect_load_error(bad, TFC_INVALID_ARGUMENT, "model.weights.h5");
    /* HDF5 that is not HDF5 */
    rewrite(good, bad, NULL, "model.weights.h5", "garbage!", 8, false);
    expect_load_error(bad, TFC_DATA_LOSS, "model.weights.h5");
    /* a deflate bomb: 80 MiB of zeros in a few kilobytes claims more than config.json may hold */
    size_t big = (size_t)80 << 20;
    char *zeros = calloc(big, 1);
    rewrite(good, bad, NULL, "config.json", zeros, big, true);
    free(zeros);
    struct stat sb;
    CHECK(stat(bad, &sb) == 0 && sb.st_size < (1 << 20));
    expect_load_error(bad, TFC_INVALID_ARGUMENT, "config.json");
    /* truncated archives, and a member whose stored size lies */
    FILE *fp = fopen(good, "rb");
    fseek(fp, 0, SEEK_END);
    long n = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *data = malloc((size_t)n);
    CHECK(fread(data, 1, (size_t)n, fp) == (size_t)n);
    fclose(fp);
    for (long cut = 10; cut < n; cut += n / 7) {
        fp = fopen(bad, "wb");
        fwrite(data, 1, (size_t)cut, fp);
        fclose(fp);
        expect_load_error(bad, TFC_DATA_LOSS, "bad.keras");
    }
    /* every byte of the local header of the first member flipped in turn: an error or a model, never a crash */
    for (int i = 0; i < 64 && i < n; i++) {
        data[i] ^= 0x5a;
        fp = fopen(bad, "wb");
        fwrite(data, 1, (size_t)n, fp);
        fclose(fp);
        tfc_model *x = tfc_keras_load_model(ctx, bad, &st);
        CHECK(x != NULL || st.code != TFC_OK);
        tfc_model_free(x);
        data[i] ^= 0x5a;
    }
    free(data);
    free(w);
    remove(good);
    remove(bad);
    remove(tmp_path("wide.keras"));
    tfc_model_free(wide);
    tfc_model_free(m);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tfc_test_files_XXXXXX");
    REQUIRE(mkdtemp(tmpdir));
    test_weights_layout();
    test_model_round_trips();
    test_optimizer_state("adam.keras", "adam");
    test_optimizer_state("sgd.keras", "sgd");
    test_optimizer_state("adam.h5", "adam");
    test_optimizer_state("rmsprop.h5", "rmsprop");
    test_checkpoint_full_model();
    test_custom_layer();
    test_damaged_archives();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
