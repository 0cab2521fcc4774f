/* SavedModel: tfc_saved_model_save of a traced function with variables and a captured tensor, loaded back by
 * tfc_saved_model_load (values equal eager execution); saving over an existing model; bad calls, wrong tags,
 * missing files; and saved_model.pb truncated at every length and with random byte edits: a clear error naming
 * the file, or a model that still loads, never a crash. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "eager/context_internal.h"
#include "tfc_test.h"

static tfc_ctx *ctx;
static char dir[256];

typedef struct {
    tfc_variable *w, *b;
    tfc_tensor *big; /* over the inlining size: a captured input, saved as a Const */
} model;

/* y = relu(x @ w + b) * 2 + sum(big) (without big when NULL); z = reduce_sum(x, 1) */
static int fn_model(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    model *m = user;
    tfc_tensor *w = tfc_variable_read(c, m->w, st), *b = w ? tfc_variable_read(c, m->b, st) : NULL;
    tfc_tensor *two = b ? tfc_scalar_f32(2.0f, st) : NULL, *ax1 = two ? tfc_scalar_i32(1, st) : NULL;
    tfc_tensor *ax0 = ax1 ? tfc_scalar_i32(0, st) : NULL;
    if (!ax0 || !tfc_scope_track(c, two, st) || !tfc_scope_track(c, ax1, st) || !tfc_scope_track(c, ax0, st))
        return -1;
    tfc_tensor *h, *r, *y, *s = NULL, *y2 = NULL, *z;
    if (!(h = tfc_emit(c, "MatMul", (tfc_tensor *[]){in[0], w}, 2, NULL, 0, st)) ||
        !(h = tfc_emit(c, "AddV2", (tfc_tensor *[]){h, b}, 2, NULL, 0, st)) ||
        !(r = tfc_emit(c, "Relu", &h, 1, NULL, 0, st)) || !(y = tfc_emit(c, "Mul", (tfc_tensor *[]){r, two}, 2, NULL, 0, st)) ||
        (m->big && !(s = tfc_emit(c, "Sum", (tfc_tensor *[]){m->big, ax0}, 2, NULL, 0, st))) ||
        (m->big && !(y2 = tfc_emit(c, "AddV2", (tfc_tensor *[]){y, s}, 2, NULL, 0, st))) ||
        !(z = tfc_emit(c, "Sum", (tfc_tensor *[]){in[0], ax1}, 2, NULL, 0, st)))
        return -1;
    out[0] = m->big ? y2 : y;
    out[1] = z;
    return 2;
}

static tfc_tensor *filled(int64_t r, int64_t c, float base) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){r, c}, c ? 2 : 1, &st);
    REQUIRE(t);
    float *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) d[i] = base + 0.37f * (float)(i % 5) - 0.21f * (float)(i % 3);
    return t;
}

static float at(const tfc_tensor *t, int64_t i) { return (float)tfc_tensor_get_f64(t, i); }

static void save_model(model *m, tfc_function **fout) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_function *f = tfc_function_new(ctx, fn_model, m, &(tfc_function_opts){.name = "serve_fn"}, &st);
    REQUIRE(f);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, (tfc_tensor_spec[]){{TFC_FLOAT, {2, {-1, 3}}}}, 1, &st);
    CHECK_OK(&st);
    REQUIRE(cf);
    CHECK(tfc_concrete_function_num_captures(cf) == (m->big ? 3 : 2));
    tfc_saved_model_signature_spec spec = {.key = "serving_default", .function = cf, .input_keys = (const char *[]){"x"},
                                           .output_keys = (const char *[]){"y", "z"}};
    CHECK(tfc_saved_model_save(ctx, dir, &spec, 1, &st));
    CHECK_OK(&st);
    *fout = f;
}

static void check_loaded(model *m, tfc_function *f) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_saved_model *sm = tfc_saved_model_load(ctx, dir, (const char *[]){"serve"}, 1, &st);
    CHECK_OK(&st);
    REQUIRE(sm);
    CHECK(tfc_saved_model_num_signatures(sm) == 1);
    CHECK(tfc_saved_model_num_variables(sm) == 2);
    tfc_saved_model_signature *s = tfc_saved_model_signature_find(sm, "serving_default");
    REQUIRE(s);
    CHECK(!strcmp(tfc_saved_model_signature_method(s), "tensorflow/serving/predict"));
    CHECK(tfc_saved_model_signature_num_inputs(s) == 1 && tfc_saved_model_signature_num_outputs(s) == 2);
    const tfc_saved_model_tensor_info *in = tfc_saved_model_signature_input(s, 0);
    CHECK(!strcmp(in->key, "x") && !strcmp(in->name, "serving_default_x:0") && in->dtype == TFC_FLOAT);
    CHECK(in->shape.rank == 2 && in->shape.dims[0] == -1 && in->shape.dims[1] == 3);
    CHECK(!strcmp(tfc_saved_model_signature_output(s, 0)->key, "y"));
    for (int rows = 1; rows <= 4; rows += 3) {
        tfc_tensor *x = filled(rows, 3, -0.4f * (float)rows), *out[2] = {0}, *ref[2] = {0};
        CHECK(tfc_saved_model_signature_call(s, &x, 1, out, 2, &st));
        CHECK_OK(&st);
        REQUIRE(tfc_function_call(f, &x, 1, ref, 2, &st) == 2);
        for (int o = 0; o < 2; o++) {
            REQUIRE(out[o]);
            CHECK(tfc_shape_equal(tfc_tensor_shape(out[o]), tfc_tensor_shape(ref[o])));
            for (int64_t i = 0; i < tfc_tensor_num_elements(ref[o]); i++) CHECK_NEAR(at(out[o], i), at(ref[o], i), 1e-5);
            tfc_tensor_unref(out[o]);
        }
        tfc_tensor_unref(x);
    }
    /* a wrong dtype or dim is refused naming the key */
    tfc_tensor *bad = filled(2, 4, 0), *out[2];
    CHECK(!tfc_saved_model_signature_call(s, &bad, 1, out, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "'x'") != NULL);
    CHECK(!tfc_saved_model_signature_call(s, &bad, 0, out, 2, &st));
    tfc_tensor_unref(bad);
    /* the restored variables hold the saved values */
    tfc_variable *w = NULL;
    for (int i = 0; i < tfc_saved_model_num_variables(sm); i++)
        if (!strcmp(tfc_variable_name(tfc_saved_model_variable(sm, i)), "w")) w = tfc_saved_model_variable(sm, i);
    REQUIRE(w);
    for (int i = 0; i < 6; i++) CHECK(at(tfc_variable_value(w), i) == at(tfc_variable_value(m->w), i));
    tfc_saved_model_free(sm);
}

static void test_save_and_load(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    model m;
    tfc_tensor *w0 = filled(3, 2, 0.3f), *b0 = filled(2, 0, -0.2f);
    m.w = tfc_variable_new(ctx, w0, true, "w", &st);
    m.b = tfc_variable_new(ctx, b0, true, "b", &st);
    m.big = filled(100, 2, 0.01f);
    REQUIRE(m.w && m.b);
    tfc_function *f;
    save_model(&m, &f);
    check_loaded(&m, f);
    /* saving again replaces the model (new variable values are seen) */
    tfc_tensor *w1 = filled(3, 2, -1.5f);
    REQUIRE(tfc_variable_assign(ctx, m.w, w1, &st));
    tfc_function_free(f);
    save_model(&m, &f);
    check_loaded(&m, f);
    tfc_function_free(f);
    /* without the captured tensor the model also gets a SavedObjectGraph and an object-based checkpoint, which
     * loading follows (bound_inputs -> object -> VARIABLE_VALUE key) */
    tfc_tensor *big = m.big;
    m.big = NULL;
    save_model(&m, &f);
    check_loaded(&m, f);
    char keyed[400];
    snprintf(keyed, sizeof keyed, "%s/variables/variables.index", dir);
    unsigned char *idx = NULL;
    size_t n_idx = 0;
    FILE *fi = fopen(keyed, "rb");
    REQUIRE(fi);
    fseek(fi, 0, SEEK_END);
    n_idx = (size_t)ftell(fi);
    fseek(fi, 0, SEEK_SET);
    REQUIRE((idx = malloc(n_idx + 1)) && fread(idx, 1, n_idx, fi) == n_idx);
    fclose(fi);
    idx[n_idx] = 0;
    bool has_key = false;
    for (size_t i = 0; i + 27 < n_idx && !has_key; i++) has_key = !memcmp(idx + i, "/.ATTRIBUTES/VARIABLE_VALUE", 27);
    CHECK(has_key);
    free(idx);
    m.big = big;
    tfc_function_free(f);
    tfc_variable_free(m.w);
    tfc_variable_free(m.b);
    tfc_tensor_unref(w0);
    tfc_tensor_unref(w1);
    tfc_tensor_unref(b0);
    tfc_tensor_unref(m.big);
    tfc_scope_end(ctx);
}

static void test_bad_requests(void) {
    tfc_status st = TFC_STATUS_INIT;
    CHECK(!tfc_saved_model_load(ctx, dir, (const char *[]){"train"}, 1, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "serve") != NULL);
    CHECK(!tfc_saved_model_load(ctx, "/nonexistent/model", NULL, 0, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(!tfc_saved_model_save(ctx, dir, NULL, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    /* variables/ missing: NOT_FOUND naming it */
    char p[400], q[400];
    snprintf(p, sizeof p, "%s/variables/variables.index", dir);
    snprintf(q, sizeof q, "%s/variables/moved.index", dir);
    REQUIRE(rename(p, q) == 0);
    CHECK(!tfc_saved_model_load(ctx, dir, NULL, 0, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(strstr(st.msg, "variables") != NULL);
    REQUIRE(rename(q, p) == 0);
}

static bool read_file(const char *path, unsigned char **data, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    *data = malloc(*size + 1);
    bool ok = *data && fread(*data, 1, *size, f) == *size;
    fclose(f);
    return ok;
}

static void write_file(const char *path, const unsigned char *data, size_t size) {
    FILE *f = fopen(path, "wb");
    REQUIRE(f);
    REQUIRE(fwrite(data, 1, size, f) == size);
    fclose(f);
}

static void test_tampered_pb(void) {
    char path[400];
    snprintf(path, sizeof path, "%s/saved_model.pb", dir);
    unsigned char *orig, *buf;
    size_t size;
    REQUIRE(read_file(path, &orig, &size));
    REQUIRE((buf = malloc(size)));
    int errors = 0, loaded = 0;
    /* every truncation (a step that visits each region) */
    for (size_t n = 0; n < size; n += 1 + size / 400) {
        write_file(path, orig, n);
        tfc_status st = TFC_STATUS_INIT;
        tfc_saved_model *m = tfc_saved_model_load(ctx, dir, NULL, 0, &st);
        if (m) loaded++;
        else {
            errors++;
            CHECK(st.code == TFC_DATA_LOSS || st.code == TFC_INVALID_ARGUMENT || st.code == TFC_NOT_FOUND);
            CHECK(strstr(st.msg, "saved_model.pb") != NULL || strstr(st.msg, dir) != NULL);
        }
        tfc_saved_model_free(m);
    }
    CHECK(errors > 0);
    /* random byte edits */
    srand(12345);
    for (int rep = 0; rep < 300; rep++) {
        memcpy(buf, orig, size);
        for (int k = 0, nk = 1 + rand() % 4; k < nk; k++) buf[(size_t)rand() % size] = (unsigned char)rand();
        write_file(path, buf, size);
        tfc_status st = TFC_STATUS_INIT;
        tfc_saved_model *m = tfc_saved_model_load(ctx, dir, NULL, 0, &st);
        if (!m) CHECK(st.code != TFC_OK && st.msg[0]);
        tfc_saved_model_free(m);
    }
    write_file(path, orig, size);
    tfc_status st = TFC_STATUS_INIT;
    tfc_saved_model *m = tfc_saved_model_load(ctx, dir, NULL, 0, &st);
    CHECK(m != NULL);
    tfc_saved_model_free(m);
    free(orig);
    free(buf);
    (void)loaded;
}

static void remove_model(void) {
    const char *files[] = {"variables/variables.index", "variables/variables.data-00000-of-00001", "saved_model.pb",
                           "fingerprint.pb"};
    char p[400];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    snprintf(p, sizeof p, "%s/variables", dir);
    rmdir(p);
    rmdir(dir);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/tfc_test_saved_model_%ld", tmp && tmp[0] ? tmp : "/tmp", (long)getpid());
    test_save_and_load();
    test_bad_requests();
    test_tampered_pb();
    remove_model();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
