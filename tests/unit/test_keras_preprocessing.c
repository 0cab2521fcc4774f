/* Keras preprocessing layers: hand-computed values for each layer, adapt (tensors, batches, datasets), vocabulary
 * order and ties, the errors of bad input, config round trips, use inside a model, dataset.map with a layer, and
 * allocation failures (run under the ASan build for leaks). */
#include <math.h>
#include <string.h>

#include "tfc/keras.h"
#include "tfc/keras/preprocessing.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *strs(const char *const *s, int64_t n) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_from_strings(s, NULL, &n, 1, &st);
    REQUIRE(t);
    return t;
}
#define STRS(...) strs((const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static tfc_tensor *i64s(const int64_t *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    tfc_tensor *t = tfc_tensor_from_data(TFC_INT64, dims, rank, v, (size_t)n * sizeof *v, &st);
    REQUIRE(t);
    return t;
}
#define I64S(dims, ...) i64s((const int64_t[]){__VA_ARGS__}, (const int64_t[])dims, sizeof((const int64_t[])dims) / sizeof(int64_t))
#define D(...) {__VA_ARGS__}

static tfc_tensor *f32s(const float *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, rank, v, (size_t)n * sizeof *v, &st);
    REQUIRE(t);
    return t;
}
#define F32S(dims, ...) f32s((const float[]){__VA_ARGS__}, (const int64_t[])dims, sizeof((const int64_t[])dims) / sizeof(int64_t))

static bool i64_is(const tfc_tensor *t, const int64_t *want, int64_t n) {
    if (!t || tfc_tensor_dtype(t) != TFC_INT64 || tfc_tensor_num_elements(t) != n) return false;
    return !memcmp(tfc_tensor_data(t), want, (size_t)n * sizeof *want);
}
#define I64_IS(t, ...) i64_is((t), (const int64_t[]){__VA_ARGS__}, sizeof((const int64_t[]){__VA_ARGS__}) / sizeof(int64_t))

static bool f32_is(const tfc_tensor *t, const float *want, int64_t n, float tol) {
    if (!t || tfc_tensor_dtype(t) != TFC_FLOAT || tfc_tensor_num_elements(t) != n) return false;
    for (int64_t i = 0; i < n; i++)
        if (fabsf(((const float *)tfc_tensor_data(t))[i] - want[i]) > tol) return false;
    return true;
}
#define F32_IS(t, tol, ...) f32_is((t), (const float[]){__VA_ARGS__}, sizeof((const float[]){__VA_ARGS__}) / sizeof(float), (tol))

static bool strs_are(const tfc_tensor *t, const char *const *want, int64_t n) {
    if (!t || tfc_tensor_dtype(t) != TFC_STRING || tfc_tensor_num_elements(t) != n) return false;
    for (int64_t i = 0; i < n; i++) {
        size_t len;
        const char *s = tfc_tensor_string(t, i, &len);
        if (len != strlen(want[i]) || memcmp(s, want[i], len)) return false;
    }
    return true;
}
#define STRS_ARE(t, ...) strs_are((t), (const char *const[]){__VA_ARGS__}, sizeof((const char *const[]){__VA_ARGS__}) / sizeof(char *))

static tfc_tensor *call(tfc_layer *l, tfc_tensor *x, tfc_status *st) { return tfc_layer_call1(l, ctx, x, false, st); }

static void test_string_lookup(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_layer *l = tfc_layers_string_lookup();
    tfc_tensor *data = STRS("b", "a", "a", "c", "b", "d");
    CHECK(tfc_layer_adapt(l, ctx, data, 4, 0, &st)); /* two batches: counts stream across them */
    CHECK_OK(&st);
    tfc_tensor *v = tfc_lookup_get_vocabulary(l, true, &st);
    CHECK(STRS_ARE(v, "[UNK]", "b", "a", "d", "c")); /* frequency, ties by descending token */
    CHECK(tfc_lookup_vocabulary_size(l) == 5);
    tfc_tensor *x = STRS("a", "zz", "c", "");
    tfc_tensor *y = call(l, x, &st);
    CHECK(I64_IS(y, 2, 0, 4, 0));
    tfc_tensor_unref(y);
    tfc_tensor_unref(v);
    /* adapt on a layer with a vocabulary is refused; set_vocabulary with duplicates names them */
    tfc_tensor *dup = STRS("x", "y", "x");
    CHECK(!tfc_lookup_set_vocabulary(l, dup, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "repeated") && strstr(st.msg, "'x'"));
    tfc_tensor *ok = STRS("[UNK]", "x", "y");
    CHECK(tfc_lookup_set_vocabulary(l, ok, NULL, &st)); /* the leading OOV token is recognised */
    CHECK(tfc_lookup_vocabulary_size(l) == 3);
    CHECK(!tfc_layer_adapt(l, ctx, data, 0, 0, &st));
    CHECK(strstr(st.msg, "Cannot adapt") != NULL);
    tfc_layer_unref(l);
    /* mask token, several OOV buckets, multi_hot and invert */
    tfc_tensor *voc = STRS("p", "q");
    l = tfc_layers_string_lookup(.vocabulary = voc, .mask_token = "", .num_oov_indices = 2, .has_num_oov_indices = true);
    tfc_tensor *x2 = STRS("", "q", "p");
    CHECK(I64_IS(y = call(l, x2, &st), 0, 4, 3));
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_string_lookup(.vocabulary = voc, .output_mode = "multi_hot");
    tfc_tensor *x3 = STRS("q", "zz", "q");
    CHECK(F32_IS(y = call(l, x3, &st), 0, 1, 0, 1)); /* rank 1: one row of depth 3 */
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_string_lookup(.vocabulary = voc, .invert = true);
    tfc_tensor *ids = I64S(D(4), 0, 1, 2, 9);
    CHECK(STRS_ARE(y = call(l, ids, &st), "[UNK]", "p", "q", "[UNK]"));
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    /* a bad constructor vocabulary surfaces at the first call */
    tfc_tensor *withmask = STRS("a", "", "b");
    l = tfc_layers_string_lookup(.vocabulary = withmask, .mask_token = "");
    CHECK(l && !call(l, x, &st));
    CHECK(strstr(st.msg, "mask token") != NULL);
    tfc_layer_unref(l);
    /* num_oov_indices 0: unknown tokens are an error naming them */
    l = tfc_layers_string_lookup(.vocabulary = voc, .num_oov_indices = 0, .has_num_oov_indices = true);
    CHECK(!call(l, x3, &st) && strstr(st.msg, "[zz]"));
    tfc_layer_unref(l);
    tfc_tensor *objs[] = {data, x, dup, ok, voc, x2, x3, ids, withmask};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) tfc_tensor_unref(objs[i]);
}

static void test_integer_lookup_and_encoding(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_layer *l = tfc_layers_integer_lookup(.max_tokens = 3);
    tfc_tensor *data = I64S(D(2, 3), 3, 3, 1, 2, 2, 7), *y;
    CHECK(tfc_layer_adapt(l, ctx, data, 0, 0, &st));
    tfc_tensor *v = tfc_lookup_get_vocabulary(l, true, &st);
    CHECK(I64_IS(v, -1, 3, 2)); /* max_tokens 3 keeps the two most frequent (ties: larger first) */
    tfc_tensor *x = I64S(D(3), 2, 7, 3);
    CHECK(I64_IS(y = call(l, x, &st), 2, 0, 1));
    tfc_tensor_unref(y);
    tfc_tensor_unref(v);
    tfc_layer_unref(l);
    /* CategoryEncoding count, and its range check */
    l = tfc_layers_category_encoding(.num_tokens = 3, .output_mode = "count");
    tfc_tensor *ids = I64S(D(2, 2), 0, 2, 2, 2);
    CHECK(F32_IS(y = call(l, ids, &st), 0, 1, 0, 1, 0, 0, 2));
    tfc_tensor_unref(y);
    tfc_tensor *bad = I64S(D(2), 0, 3);
    CHECK(!call(l, bad, &st) && strstr(st.msg, "num_tokens=3"));
    tfc_layer_unref(l);
    /* Hashing: the FarmHash buckets of TensorFlow (tf.strings.to_hash_bucket_fast(["a", "abc"], 1000)), a mask */
    l = tfc_layers_hashing(.num_bins = 1000);
    tfc_tensor *s = STRS("", "a", "abc");
    y = call(l, s, &st);
    CHECK_OK(&st);
    tfc_layer *m = tfc_layers_hashing(.num_bins = 1001, .mask_value = "");
    tfc_tensor *ym = call(m, s, &st);
    CHECK(ym && ((const int64_t *)tfc_tensor_data(ym))[0] == 0);
    tfc_tensor_unref(ym);
    tfc_tensor_unref(y);
    tfc_layer_unref(m);
    tfc_layer_unref(l);
    l = tfc_layers_hashing(.num_bins = 0);
    CHECK(!call(l, s, &st) && strstr(st.msg, "num_bins"));
    tfc_layer_unref(l);
    tfc_tensor_unref(s);
    tfc_tensor_unref(bad);
    tfc_tensor_unref(ids);
    tfc_tensor_unref(x);
    tfc_tensor_unref(data);
}

static void test_normalization_discretization(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_layer *l = tfc_layers_normalization();
    tfc_tensor *x = F32S(D(4, 2), 1, 10, 2, 20, 3, 30, 4, 40), *y;
    CHECK(tfc_layer_adapt(l, ctx, x, 3, 0, &st)); /* batches of 3 and 1 */
    tfc_tensor *w[3] = {NULL};
    CHECK(tfc_layer_get_weights(l, w, 3, &st) == 3);
    CHECK(F32_IS(w[0], 1e-5f, 2.5f, 25.0f) && F32_IS(w[1], 1e-4f, 1.25f, 125.0f));
    CHECK(w[2] && ((const int64_t *)tfc_tensor_data(w[2]))[0] == 4);
    y = call(l, x, &st);
    float a = 1.5f / sqrtf(1.25f);
    CHECK(F32_IS(y, 1e-5f, -a, -a, -a / 3, -a / 3, a / 3, a / 3, a, a));
    for (int i = 0; i < 3; i++) tfc_tensor_unref(w[i]);
    tfc_tensor_unref(y);
    tfc_tensor *empty = F32S(D(0, 2), 0);
    CHECK(!tfc_layer_adapt(l, ctx, empty, 0, 0, &st) && strstr(st.msg, "no data"));
    tfc_layer_unref(l);
    l = tfc_layers_normalization(.mean = (const double[]){1}, .variance = (const double[]){4}, .n_mean = 1,
                                 .invert = true, .axis_none = true);
    CHECK(F32_IS(y = call(l, x, &st), 1e-5f, 3, 21, 5, 41, 7, 61, 9, 81));
    tfc_tensor_unref(y);
    CHECK(!tfc_layer_adapt(l, ctx, x, 0, 0, &st));
    tfc_layer_unref(l);
    /* Discretization with boundaries, and adapted to 2 bins on 0..9 */
    l = tfc_layers_discretization(.bin_boundaries = (const double[]){2, 25}, .n_bin_boundaries = 2);
    CHECK(I64_IS(y = call(l, x, &st), 0, 1, 1, 1, 1, 2, 1, 2));
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_discretization(.num_bins = 2);
    tfc_tensor *r = F32S(D(10), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    CHECK(tfc_layer_adapt(l, ctx, r, 0, 0, &st));
    CHECK(I64_IS(y = call(l, r, &st), 0, 0, 0, 0, 1, 1, 1, 1, 1, 1)); /* boundary 4, as tf_keras */
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    tfc_tensor_unref(r);
    tfc_tensor_unref(empty);
    tfc_tensor_unref(x);
}

static void test_image_layers(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *img = F32S(D(1, 4, 4, 1), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), *y;
    tfc_layer *l = tfc_layers_center_crop(.height = 2, .width = 2);
    CHECK(F32_IS(y = call(l, img, &st), 0, 5, 6, 9, 10));
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_resizing(.height = 2, .width = 2);
    CHECK(F32_IS(y = call(l, img, &st), 1e-5f, 2.5f, 4.5f, 10.5f, 12.5f));
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_rescaling(.scale = 0.5, .offset = -1);
    CHECK(F32_IS(y = call(l, img, &st), 1e-6f, -1, -0.5f, 0, 0.5f, 1, 1.5f, 2, 2.5f, 3, 3.5f, 4, 4.5f, 5, 5.5f, 6, 6.5f));
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_resizing(.height = 2, .width = 2, .interpolation = "cubic-ish");
    CHECK(!call(l, img, &st) && strstr(st.msg, "interpolation"));
    tfc_layer_unref(l);
    tfc_tensor_unref(img);
}

static void test_text_vectorization(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_layer *l = tfc_layers_text_vectorization(.output_sequence_length = 4);
    tfc_tensor *data = STRS("The cat, sat!", "a cat\ta dog", "");
    CHECK(tfc_layer_adapt(l, ctx, data, 2, 0, &st));
    tfc_tensor *v = tfc_lookup_get_vocabulary(l, true, &st);
    CHECK(STRS_ARE(v, "", "[UNK]", "cat", "a", "the", "sat", "dog"));
    tfc_tensor *x = STRS("CAT dog zz cat sat", "");
    tfc_tensor *y = call(l, x, &st);
    CHECK(I64_IS(y, 2, 6, 1, 2, 0, 0, 0, 0)); /* truncated / padded to 4 */
    tfc_tensor_unref(y);
    tfc_tensor_unref(v);
    tfc_layer_unref(l);
    /* bigrams counted per row; the mask is dropped outside int mode */
    l = tfc_layers_text_vectorization(.ngrams = {2}, .n_ngrams = 1, .output_mode = "count", .split = "whitespace");
    tfc_tensor *voc = STRS("a b", "b c");
    CHECK(tfc_lookup_set_vocabulary(l, voc, NULL, &st));
    tfc_tensor *x2 = STRS("a b c a b", "x");
    CHECK(F32_IS(y = call(l, x2, &st), 0, 1, 2, 1, 0, 0, 0)); /* [UNK]: "c a" */
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    /* characters, and inputs it refuses */
    l = tfc_layers_text_vectorization(.split = "character", .standardize_none = true);
    tfc_tensor *x3 = STRS("h\xc3\xa9\xff");
    CHECK(tfc_layer_adapt(l, ctx, x3, 0, 0, &st));
    CHECK(STRS_ARE(v = tfc_lookup_get_vocabulary(l, false, &st), "\xef\xbf\xbd", "\xc3\xa9", "h"));
    tfc_tensor_unref(v);
    tfc_tensor *nums = I64S(D(2), 1, 2);
    CHECK(!call(l, nums, &st) && strstr(st.msg, "string"));
    tfc_layer_unref(l);
    l = tfc_layers_text_vectorization(.output_mode = "count", .output_sequence_length = 3);
    CHECK(!call(l, x, &st) && strstr(st.msg, "output_sequence_length"));
    tfc_layer_unref(l);
    tfc_tensor *objs[] = {data, x, voc, x2, x3, nums};
    for (size_t i = 0; i < sizeof objs / sizeof *objs; i++) tfc_tensor_unref(objs[i]);
}

static void test_augmentation(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *img = F32S(D(2, 1, 2, 1), 10, 20, 30, 40), *y;
    tfc_layer *l = tfc_layers_random_flip(.mode = "horizontal", .seed = 3, .has_seed = true);
    CHECK(F32_IS(y = call(l, img, &st), 0, 10, 20, 30, 40)); /* inference: identity */
    tfc_tensor_unref(y);
    y = tfc_layer_call1(l, ctx, img, true, &st);
    REQUIRE(y);
    const float *o = tfc_tensor_data(y);
    for (int i = 0; i < 2; i++) CHECK((o[2 * i] == 10 + 20 * i && o[2 * i + 1] == 20 + 20 * i) ||
                                      (o[2 * i] == 20 + 20 * i && o[2 * i + 1] == 10 + 20 * i));
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_random_contrast(.factor = {0.5});
    y = tfc_layer_call1(l, ctx, img, true, &st);
    REQUIRE(y);
    o = tfc_tensor_data(y);
    float f = (o[1] - o[0]) / 10.0f; /* one factor for the call, each image about its own mean */
    CHECK(f >= 0.5f - 1e-5f && f <= 1.5f + 1e-5f && fabsf((o[3] - o[2]) / 10.0f - f) < 1e-5f);
    CHECK(fabsf(o[0] + o[1] - 30) < 1e-4f);
    tfc_tensor_unref(y);
    tfc_layer_unref(l);
    l = tfc_layers_random_flip(.mode = "diagonal");
    CHECK(!tfc_layer_call1(l, ctx, img, true, &st) && strstr(st.msg, "unknown mode"));
    tfc_layer_unref(l);
    tfc_tensor_unref(img);
}

static void test_config_round_trip(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *voc = STRS("x", "y");
    tfc_layer *ls[] = {tfc_layers_string_lookup(.vocabulary = voc, .mask_token = "", .output_mode = "count"),
                       tfc_layers_hashing(.num_bins = 7, .salt = {3, 3}, .has_salt = true),
                       tfc_layers_normalization(.axis = {1, 2}, .n_axis = 2),
                       tfc_layers_discretization(.bin_boundaries = (const double[]){0.5}, .n_bin_boundaries = 1),
                       tfc_layers_resizing(.height = 3, .width = 4, .crop_to_aspect_ratio = true),
                       tfc_layers_category_encoding(.num_tokens = 4),
                       tfc_layers_text_vectorization(.vocabulary = voc, .ngrams_int = 2, .output_sequence_length = 3),
                       tfc_layers_random_contrast(.factor = {0.1, 0.2}, .factor_pair = true)};
    for (size_t i = 0; i < sizeof ls / sizeof *ls; i++) {
        char *c1 = tfc_layer_get_config(ls[i], &st);
        REQUIRE(c1);
        tfc_layer *b = tfc_layer_from_config(tfc_layer_class_name(ls[i]), c1, &st);
        CHECK_OK(&st);
        char *c2 = b ? tfc_layer_get_config(b, &st) : NULL;
        CHECK(c2 && !strcmp(c1, c2));
        tfc_free(c1);
        tfc_free(c2);
        tfc_layer_unref(b);
        tfc_layer_unref(ls[i]);
    }
    tfc_tensor_unref(voc);
}

/* StringLookup -> CategoryEncoding-like multi_hot -> Dense in a Sequential model, and dataset.map / adapt. */
static void test_model_and_dataset(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *voc = STRS("good", "bad", "ok");
    tfc_layer *lk = tfc_layers_string_lookup(.vocabulary = voc, .output_mode = "multi_hot");
    tfc_layer *dense = tfc_layers_dense(.units = 1);
    tfc_ktensor *in = tfc_input(.shape = {3}, .dtype = TFC_STRING);
    tfc_ktensor *h = tfc_apply(lk, &st, in);
    tfc_ktensor *out = h ? tfc_apply(dense, &st, h) : NULL;
    CHECK_OK(&st);
    tfc_model *m = out ? tfc_model_new(ctx, &in, 1, &out, 1, NULL, &st) : NULL;
    CHECK_OK(&st);
    tfc_tensor *x = strs((const char *const[]){"good", "bad", "zz", "ok", "ok", "good"}, 6);
    tfc_tensor *x2 = x ? tfc_tensor_reshaped(x, (int64_t[]){2, 3}, 2, &st) : NULL;
    tfc_tensor *y = m && x2 ? tfc_layer_call1((tfc_layer *)m, ctx, x2, false, &st) : NULL;
    CHECK_OK(&st);
    CHECK(y && tfc_tensor_num_elements(y) == 2);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x2);
    if (m) tfc_model_free(m);
    tfc_tensor_unref(voc);
    /* adapt from a batched dataset, then map the layer over it */
    tfc_layer *l = tfc_layers_string_lookup();
    tfc_dataset *ds = tfc_dataset_batch(tfc_dataset_from_tensor_slices(&x, 1, NULL, &st), 4, NULL, &st);
    CHECK(ds && tfc_layer_adapt_dataset(l, ctx, ds, 0, &st));
    tfc_tensor *v = tfc_lookup_get_vocabulary(l, false, &st);
    CHECK(STRS_ARE(v, "ok", "good", "zz", "bad"));
    tfc_tensor_unref(v);
    tfc_dataset *mapped = tfc_dataset_map_layer(tfc_dataset_ref(ds), l, &st);
    tfc_iterator *it = mapped ? tfc_iterator_new(mapped, &st) : NULL;
    tfc_tensor *e = NULL;
    CHECK(it && tfc_iterator_next(it, &e, 1, &st));
    CHECK(I64_IS(e, 2, 4, 3, 1));
    tfc_tensor_unref(e);
    tfc_iterator_free(it);
    tfc_dataset_unref(mapped);
    tfc_dataset_unref(ds);
    tfc_layer_unref(l);
    tfc_tensor_unref(x);
}

static void test_alloc_failures(void) {
    for (int n = 0; n < 600; n++) {
        tfc_status st = TFC_STATUS_INIT;
        tfc_tensor *data = STRS("b", "a", "a", "c", "b", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n", "o");
        tfc_tensor *nums = F32S(D(6), 1, 2, 3, 4, 5, 6);
        tfc_alloc_fail_after(n);
        tfc_layer *l = tfc_layers_string_lookup(.output_mode = "tf_idf");
        bool ok = l && tfc_layer_adapt(l, ctx, data, 5, 0, &st);
        tfc_tensor *y = ok ? call(l, data, &st) : NULL;
        tfc_layer *d = tfc_layers_discretization(.num_bins = 3, .epsilon = 0.2);
        bool ok2 = d && tfc_layer_adapt(d, ctx, nums, 2, 0, &st);
        tfc_layer *tv = tfc_layers_text_vectorization(.ngrams_int = 2);
        bool ok3 = tv && tfc_layer_adapt(tv, ctx, data, 4, 0, &st);
        tfc_tensor *y3 = ok3 ? call(tv, data, &st) : NULL;
        bool failed = tfc_alloc_failures() > 0;
        tfc_alloc_fail_after(-1);
        if (!failed) CHECK(ok && y && ok2 && y3);
        if (l && !ok) CHECK(st.code != TFC_OK);
        tfc_tensor_unref(y);
        tfc_layer_unref(l);
        tfc_layer_unref(d);
        tfc_tensor_unref(y3);
        tfc_layer_unref(tv);
        tfc_tensor_unref(data);
        tfc_tensor_unref(nums);
        if (!failed) break;
    }
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_string_lookup();
    test_integer_lookup_and_encoding();
    test_normalization_discretization();
    test_image_layers();
    test_text_vectorization();
    test_augmentation();
    test_config_round_trip();
    test_model_and_dataset();
    test_alloc_failures();
    tfc_ctx_free(ctx);
    tfc_keras_clear_session();
    TEST_MAIN_END();
}
