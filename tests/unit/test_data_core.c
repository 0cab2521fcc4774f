/* tf.data core: sources, structures and specs, cardinality, batch/padded_batch/unbatch, shuffle, repeat/take/skip,
 * shard, enumerate, zip, concatenate, map/filter, interleave/flat_map, generators, ignore_errors, options. */
#include <string.h>

#include "data_test_util.h"

/* ---- callbacks ------------------------------------------------------------------------------------------------ */
static bool square(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                   tfc_status *st) {
    out[0] = tfc_emit(ctx, "Mul", (tfc_tensor *[]){in[0], in[0]}, 2, NULL, 0, st);
    return out[0] != NULL;
}

/* x -> int64 vector [x] of length x filled with x (ragged lengths) */
static bool ragged(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                   tfc_status *st) {
    int64_t x = (int64_t)tfc_tensor_get_f64(in[0], 0);
    out[0] = tfc_tensor_new(TFC_INT64, &x, 1, st);
    if (!out[0]) return false;
    int64_t *d = tfc_tensor_mutable_data(out[0]);
    for (int64_t i = 0; i < x; i++) d[i] = x;
    return true;
}

static bool fail_on_3(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                      tfc_status *st) {
    int64_t x = (int64_t)tfc_tensor_get_f64(in[0], 0);
    if (x == 3) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "three is not allowed");
    if (x == 5) return tfc_status_set(st, TFC_OUT_OF_RANGE, "five ends nothing");
    out[0] = tfc_tensor_ref(in[0]);
    return true;
}

static bool is_even(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, bool *keep, tfc_status *st) {
    *keep = (int64_t)tfc_tensor_get_f64(in[0], 0) % 2 == 0;
    return true;
}

static tfc_dataset *repeat6(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    return tfc_dataset_repeat(tfc_dataset_from_tensors(in, 1, NULL, st), 6, st);
}

/* x -> range(10 * x, 10 * x + x) */
static tfc_dataset *range_x(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_status *st) {
    int64_t x = (int64_t)tfc_tensor_get_f64(in[0], 0);
    return tfc_dataset_range(10 * x, 10 * x + x, 1, TFC_INT64, st);
}

static int user_frees;
static void count_free(void *user) { user_frees++; }

/* ---- tests ------------------------------------------------------------------------------------------------------ */
static void test_range_and_spec(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset *ds = tfc_dataset_range(3, 11, 3, 0, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    CHECK(tfc_dataset_cardinality(ds) == 3);
    CHECK(!strcmp(tfc_dataset_structure(ds), "."));
    char buf[256];
    CHECK(!strcmp(tfc_dataset_element_spec_str(ds, buf, sizeof buf), "TensorSpec(shape=(), dtype=tf.int64, name=None)"));
    int64_t v[8];
    CHECK(drain_i64(ds, 0, v, 8, &st) == 3 && v[0] == 3 && v[1] == 6 && v[2] == 9);
    /* the end is sticky; the dataset can be iterated again */
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t = NULL;
    for (int i = 0; i < 3; i++) {
        CHECK(tfc_iterator_next(it, &t, 1, &st));
        tfc_tensor_unref(t);
    }
    CHECK(!tfc_iterator_next(it, &t, 1, &st) && st.code == TFC_OUT_OF_RANGE && !t);
    CHECK(!tfc_iterator_next(it, &t, 1, &st) && st.code == TFC_OUT_OF_RANGE);
    tfc_iterator_free(it);
    CHECK(drain_i64(ds, 0, v, 8, &st) == 3);
    tfc_dataset_unref(ds);

    ds = tfc_dataset_range(5, 0, -2, TFC_FLOAT, &st);
    CHECK(tfc_dataset_cardinality(ds) == 3 && tfc_dataset_component_spec(ds, 0).dtype == TFC_FLOAT);
    CHECK(drain_i64(ds, 0, v, 8, &st) == 3 && v[0] == 5 && v[1] == 3 && v[2] == 1);
    tfc_dataset_unref(ds);
    CHECK(!tfc_dataset_range(0, 5, 0, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "step must be a non-zero integer"));
    ds = tfc_dataset_range(0, 0, 1, 0, &st);
    CHECK(tfc_dataset_cardinality(ds) == 0 && drain_i64(ds, 0, v, 8, &st) == 0);
    tfc_dataset_unref(ds);
}

static void test_slices_and_structures(void) {
    tfc_status st = TFC_STATUS_INIT;
    float xf[6] = {1, 2, 3, 4, 5, 6};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){3, 2}, 2, xf, sizeof xf, &st);
    tfc_tensor *y = vec64((int64_t[]){7, 8, 9}, 3);
    const char *names[] = {"a", "bb", "ccc"};
    tfc_tensor *s = tfc_tensor_from_strings(names, NULL, (int64_t[]){3}, 1, &st);
    /* dict components follow the sorted keys: image, label, name */
    tfc_dataset *ds = tfc_dataset_from_tensor_slices((tfc_tensor *[]){x, y, s}, 3, "{ label : . , image:., name:.}",
                                                     &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    CHECK(!strcmp(tfc_dataset_structure(ds), "{image:.,label:.,name:.}"));
    char buf[512];
    tfc_dataset_element_spec_str(ds, buf, sizeof buf);
    CHECK(!strcmp(buf, "{'image': TensorSpec(shape=(2,), dtype=tf.float32, name=None), 'label': "
                       "TensorSpec(shape=(), dtype=tf.int64, name=None), 'name': TensorSpec(shape=(), "
                       "dtype=tf.string, name=None)}"));
    CHECK(tfc_dataset_cardinality(ds) == 3);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[3];
    for (int i = 0; i < 3; i++) {
        REQUIRE(tfc_iterator_next(it, out, 3, &st));
        const float *d = tfc_tensor_data(out[0]);
        CHECK(tfc_tensor_rank(out[0]) == 1 && d[0] == xf[2 * i] && d[1] == xf[2 * i + 1]);
        CHECK(tfc_tensor_get_f64(out[1], 0) == 7 + i);
        size_t len = 0;
        const char *str = tfc_tensor_string(out[2], 0, &len);
        CHECK(len == strlen(names[i]) && !memcmp(str, names[i], len));
        for (int k = 0; k < 3; k++) tfc_tensor_unref(out[k]);
    }
    CHECK(!tfc_iterator_next(it, out, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT); /* too little room */
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);

    /* from_tensors: one element; 1-tuples and nesting */
    ds = tfc_dataset_from_tensors((tfc_tensor *[]){x, y}, 2, "((.),{k:.})", &st);
    CHECK(ds && !strcmp(tfc_dataset_structure(ds), "((.,),{k:.})") && tfc_dataset_cardinality(ds) == 1);
    tfc_dataset_element_spec_str(ds, buf, sizeof buf);
    CHECK(!strcmp(buf, "((TensorSpec(shape=(3, 2), dtype=tf.float32, name=None),), {'k': TensorSpec(shape=(3,), "
                       "dtype=tf.int64, name=None)})"));
    tfc_dataset_unref(ds);

    /* errors */
    tfc_tensor *sc = tfc_scalar_i64(1, &st);
    CHECK(!tfc_dataset_from_tensor_slices(&sc, 1, NULL, &st) && st.code == TFC_INVALID_ARGUMENT);
    tfc_tensor *y4 = vec64((int64_t[]){1, 2, 3, 4}, 4);
    CHECK(!tfc_dataset_from_tensor_slices((tfc_tensor *[]){y, y4}, 2, NULL, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "Dimensions 3 and 4 are not compatible"));
    CHECK(!tfc_dataset_from_tensors((tfc_tensor *[]){x, y}, 2, "(.,.,.)", &st) && st.code == TFC_INVALID_ARGUMENT);
    CHECK(!tfc_dataset_from_tensors(&x, 1, "{a:.,a:.}", &st) && strstr(st.msg, "duplicate"));
    CHECK(!tfc_dataset_from_tensors(&x, 1, "(.", &st) && st.code == TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(sc);
    tfc_tensor_unref(y4);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_tensor_unref(s);
}

static void test_batch(void) {
    tfc_status st = TFC_STATUS_INIT;
    for (int drop = 0; drop < 2; drop++) {
        tfc_dataset *ds = tfc_dataset_batch(tfc_dataset_range(0, 10, 1, 0, &st), 3,
                                            &(tfc_batch_opts){.drop_remainder = drop}, &st);
        CHECK_OK(&st);
        CHECK(tfc_dataset_cardinality(ds) == (drop ? 3 : 4));
        tfc_tensor_spec sp = tfc_dataset_component_spec(ds, 0);
        CHECK(sp.shape.rank == 1 && sp.shape.dims[0] == (drop ? 3 : -1));
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        tfc_tensor *t;
        int64_t next = 0, batches = 0;
        while (tfc_iterator_next(it, &t, 1, &st)) {
            int64_t n = tfc_tensor_dim(t, 0);
            CHECK(n == (batches < 3 ? 3 : 1));
            for (int64_t i = 0; i < n; i++) CHECK(((const int64_t *)tfc_tensor_data(t))[i] == next++);
            batches++;
            tfc_tensor_unref(t);
        }
        CHECK(st.code == TFC_OUT_OF_RANGE && batches == (drop ? 3 : 4));
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
    }
    CHECK(!tfc_dataset_batch(tfc_dataset_range(0, 10, 1, 0, &st), 0, NULL, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "Batch size must be greater than zero"));
    /* elements of different shapes */
    tfc_dataset *ds = tfc_dataset_batch(tfc_dataset_map(tfc_dataset_range(1, 4, 1, 0, &st), ragged, NULL, NULL, &st),
                                        2, NULL, &st);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t = NULL;
    CHECK(!tfc_iterator_next(it, &t, 1, &st) && st.code == TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Cannot batch tensors with different shapes in component 0. First element had shape [1] "
                         "and element 1 had shape [2]."));
    CHECK(tfc_iterator_next(it, &t, 1, &st) && tfc_tensor_dim(t, 0) == 1); /* [3] alone */
    tfc_tensor_unref(t);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
}

static void test_padded_batch_unbatch(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* lengths 1,3,2 | 4 : padded to the batch maximum with -1 */
    int64_t lens[] = {1, 3, 2, 4};
    tfc_tensor *lt = vec64(lens, 4);
    tfc_tensor *pad = tfc_scalar_i64(-1, &st);
    tfc_dataset *ds = tfc_dataset_padded_batch(
        tfc_dataset_map(tfc_dataset_from_tensor_slices(&lt, 1, NULL, &st), ragged, NULL,
                        &(tfc_map_opts){.output_spec = &(tfc_tensor_spec){TFC_INT64, {1, {-1}}}}, &st),
        3, &(tfc_padded_batch_opts){.padding_values = &pad}, &st);
    CHECK_OK(&st);
    REQUIRE(ds);
    tfc_tensor_spec sp = tfc_dataset_component_spec(ds, 0);
    CHECK(sp.shape.rank == 2 && sp.shape.dims[0] == -1 && sp.shape.dims[1] == -1);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t;
    REQUIRE(tfc_iterator_next(it, &t, 1, &st));
    int64_t want1[] = {1, -1, -1, 3, 3, 3, 2, 2, -1};
    CHECK(tfc_tensor_dim(t, 0) == 3 && tfc_tensor_dim(t, 1) == 3 && same_i64(tfc_tensor_data(t), want1, 9));
    tfc_tensor_unref(t);
    REQUIRE(tfc_iterator_next(it, &t, 1, &st));
    CHECK(tfc_tensor_dim(t, 0) == 1 && tfc_tensor_dim(t, 1) == 4);
    tfc_tensor_unref(t);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);

    /* fixed padded shape, default padding 0, drop_remainder; too small a shape fails at next */
    tfc_shape ps = {1, {5}};
    ds = tfc_dataset_padded_batch(tfc_dataset_map(tfc_dataset_from_tensor_slices(&lt, 1, NULL, &st), ragged, NULL,
                                                  NULL, &st),
                                  2, &(tfc_padded_batch_opts){.padded_shapes = &ps, .drop_remainder = true}, &st);
    CHECK(tfc_dataset_cardinality(ds) == 2);
    it = tfc_iterator_new(ds, &st);
    REQUIRE(tfc_iterator_next(it, &t, 1, &st));
    int64_t want2[] = {1, 0, 0, 0, 0, 3, 3, 3, 0, 0};
    CHECK(tfc_tensor_dim(t, 1) == 5 && same_i64(tfc_tensor_data(t), want2, 10));
    tfc_tensor_unref(t);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    ps.dims[0] = 2;
    ds = tfc_dataset_padded_batch(tfc_dataset_map(tfc_dataset_from_tensor_slices(&lt, 1, NULL, &st), ragged, NULL,
                                                  NULL, &st),
                                  2, &(tfc_padded_batch_opts){.padded_shapes = &ps}, &st);
    it = tfc_iterator_new(ds, &st);
    CHECK(!tfc_iterator_next(it, &t, 1, &st) && strstr(st.msg, "Attempted to pad to a smaller size"));
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    /* a padding value of the wrong dtype */
    tfc_tensor *fpad = tfc_scalar_f32(1, &st);
    CHECK(!tfc_dataset_padded_batch(tfc_dataset_from_tensor_slices(&lt, 1, NULL, &st), 2,
                                    &(tfc_padded_batch_opts){.padding_values = &fpad}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(fpad);

    /* unbatch inverts batch, including the short last batch */
    ds = tfc_dataset_unbatch(tfc_dataset_batch(tfc_dataset_range(0, 7, 1, 0, &st), 3, NULL, &st), &st);
    int64_t v[16];
    CHECK(drain_i64(ds, 0, v, 16, &st) == 7);
    for (int i = 0; i < 7; i++) CHECK(v[i] == i);
    CHECK(tfc_dataset_cardinality(ds) == TFC_UNKNOWN_CARDINALITY);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_unbatch(tfc_dataset_batch(tfc_dataset_range(0, 9, 1, 0, &st), 3,
                                               &(tfc_batch_opts){.drop_remainder = true}, &st),
                             &st);
    CHECK(tfc_dataset_cardinality(ds) == 9);
    tfc_dataset_unref(ds);
    CHECK(!tfc_dataset_unbatch(tfc_dataset_range(0, 3, 1, 0, &st), &st) && strstr(st.msg, "scalar"));
    tfc_tensor_unref(lt);
    tfc_tensor_unref(pad);
}

static void test_shuffle(void) {
    tfc_status st = TFC_STATUS_INIT;
    enum { N = 200, B = 10 };
    tfc_dataset *ds = tfc_dataset_shuffle(tfc_dataset_range(0, N, 1, 0, &st), B,
                                          &(tfc_shuffle_opts){.seed = 42, .has_seed = true}, &st);
    int64_t a[N], b[N], c[N];
    CHECK(drain_i64(ds, 0, a, N, &st) == N);
    CHECK(drain_i64(ds, 0, b, N, &st) == N);
    bool seen[N] = {false}, in_order = true;
    for (int i = 0; i < N; i++) {
        CHECK(a[i] >= 0 && a[i] < N && !seen[a[i]]);
        seen[a[i]] = true;
        CHECK(a[i] < i + B); /* output i comes from the first i + buffer_size inputs */
        in_order = in_order && a[i] == i;
    }
    CHECK(!in_order);
    CHECK(!same_i64(a, b, N)); /* reshuffled each iteration */
    tfc_dataset_unref(ds);
    /* the same seed gives the same epochs */
    ds = tfc_dataset_shuffle(tfc_dataset_range(0, N, 1, 0, &st), B, &(tfc_shuffle_opts){.seed = 42, .has_seed = true},
                             &st);
    CHECK(drain_i64(ds, 0, c, N, &st) == N && same_i64(a, c, N));
    CHECK(drain_i64(ds, 0, c, N, &st) == N && same_i64(b, c, N));
    tfc_dataset_unref(ds);
    /* without reshuffling every epoch is the same */
    ds = tfc_dataset_shuffle(tfc_dataset_range(0, N, 1, 0, &st), B,
                             &(tfc_shuffle_opts){.reshuffle_each_iteration = TFC_NO}, &st);
    CHECK(drain_i64(ds, 0, a, N, &st) == N && drain_i64(ds, 0, b, N, &st) == N && same_i64(a, b, N));
    tfc_dataset_unref(ds);
    /* shuffle then repeat: each repetition a new order, all elements each time */
    ds = tfc_dataset_repeat(tfc_dataset_shuffle(tfc_dataset_range(0, 20, 1, 0, &st), 100,
                                                &(tfc_shuffle_opts){.seed = 7, .has_seed = true}, &st),
                            2, &st);
    int64_t r[40];
    CHECK(drain_i64(ds, 0, r, 40, &st) == 40 && !same_i64(r, r + 20, 20));
    int64_t sum0 = 0, sum1 = 0;
    for (int i = 0; i < 20; i++) sum0 += r[i], sum1 += r[20 + i];
    CHECK(sum0 == 190 && sum1 == 190);
    tfc_dataset_unref(ds);
    CHECK(!tfc_dataset_shuffle(tfc_dataset_range(0, 3, 1, 0, &st), 0, NULL, &st) && st.code == TFC_INVALID_ARGUMENT);
}

static void test_counting(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t v[64];
    /* repeat after take */
    tfc_dataset *ds = tfc_dataset_repeat(tfc_dataset_take(tfc_dataset_range(0, 10, 1, 0, &st), 3, &st), 2, &st);
    int64_t w1[] = {0, 1, 2, 0, 1, 2};
    CHECK(tfc_dataset_cardinality(ds) == 6 && drain_i64(ds, 0, v, 64, &st) == 6 && same_i64(v, w1, 6));
    tfc_dataset_unref(ds);
    /* skip, take -1, repeat -1 then take */
    ds = tfc_dataset_take(tfc_dataset_repeat(tfc_dataset_skip(tfc_dataset_range(0, 5, 1, 0, &st), 3, &st), -1, &st),
                          5, &st);
    int64_t w2[] = {3, 4, 3, 4, 3};
    CHECK(tfc_dataset_cardinality(ds) == 5 && drain_i64(ds, 0, v, 64, &st) == 5 && same_i64(v, w2, 5));
    tfc_dataset_unref(ds);
    ds = tfc_dataset_repeat(tfc_dataset_range(0, 0, 1, 0, &st), -1, &st); /* an empty forever ends */
    CHECK(tfc_dataset_cardinality(ds) == 0 && drain_i64(ds, 0, v, 64, &st) == 0);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_repeat(tfc_dataset_range(0, 2, 1, 0, &st), -1, &st);
    CHECK(tfc_dataset_cardinality(ds) == TFC_INFINITE_CARDINALITY);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_skip(tfc_dataset_range(0, 5, 1, 0, &st), -1, &st);
    CHECK(tfc_dataset_cardinality(ds) == 0 && drain_i64(ds, 0, v, 64, &st) == 0);
    tfc_dataset_unref(ds);
    /* any negative count acts as -1, as tf.data: take(-2) all, skip(-3) everything, repeat(-2) forever */
    ds = tfc_dataset_take(tfc_dataset_range(0, 5, 1, 0, &st), -2, &st);
    int64_t wall[] = {0, 1, 2, 3, 4};
    CHECK(tfc_ok(&st) && drain_i64(ds, 0, v, 64, &st) == 5 && same_i64(v, wall, 5));
    tfc_dataset_unref(ds);
    ds = tfc_dataset_skip(tfc_dataset_range(0, 5, 1, 0, &st), -3, &st);
    CHECK(tfc_ok(&st) && tfc_dataset_cardinality(ds) == 0 && drain_i64(ds, 0, v, 64, &st) == 0);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_repeat(tfc_dataset_range(0, 2, 1, 0, &st), -2, &st);
    CHECK(tfc_ok(&st) && tfc_dataset_cardinality(ds) == TFC_INFINITE_CARDINALITY);
    tfc_dataset_unref(ds);
    /* an element must not be empty */
    CHECK(!tfc_dataset_from_tensor_slices(NULL, 0, NULL, &st) && st.code == TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    CHECK(!tfc_dataset_from_tensors(NULL, 0, NULL, &st) && st.code == TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    /* shard then batch */
    ds = tfc_dataset_batch(tfc_dataset_shard(tfc_dataset_range(0, 11, 1, 0, &st), 3, 1, &st), 2, NULL, &st);
    CHECK(tfc_dataset_cardinality(ds) == 2);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t;
    REQUIRE(tfc_iterator_next(it, &t, 1, &st));
    CHECK(same_i64(tfc_tensor_data(t), (int64_t[]){1, 4}, 2));
    tfc_tensor_unref(t);
    REQUIRE(tfc_iterator_next(it, &t, 1, &st));
    CHECK(same_i64(tfc_tensor_data(t), (int64_t[]){7, 10}, 2));
    tfc_tensor_unref(t);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
    CHECK(!tfc_dataset_shard(tfc_dataset_range(0, 3, 1, 0, &st), 2, 2, &st) && st.code == TFC_INVALID_ARGUMENT);
    /* enumerate, zip, concatenate */
    ds = tfc_dataset_enumerate(tfc_dataset_range(5, 8, 1, 0, &st), 10, &st);
    CHECK(!strcmp(tfc_dataset_structure(ds), "(.,.)") && tfc_dataset_cardinality(ds) == 3);
    CHECK(drain_i64(ds, 0, v, 64, &st) == 3 && v[0] == 10 && v[2] == 12);
    CHECK(drain_i64(ds, 1, v, 64, &st) == 3 && v[0] == 5 && v[2] == 7);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_zip((tfc_dataset *[]){tfc_dataset_range(0, 5, 1, 0, &st),
                                           tfc_dataset_enumerate(tfc_dataset_range(100, 103, 1, 0, &st), 0, &st)},
                         2, &st);
    CHECK(!strcmp(tfc_dataset_structure(ds), "(.,(.,.))") && tfc_dataset_cardinality(ds) == 3);
    CHECK(drain_i64(ds, 2, v, 64, &st) == 3 && v[0] == 100 && v[2] == 102);
    tfc_dataset_unref(ds);
    ds = tfc_dataset_concatenate(tfc_dataset_range(0, 2, 1, 0, &st), tfc_dataset_range(7, 9, 1, 0, &st), &st);
    int64_t w3[] = {0, 1, 7, 8};
    CHECK(tfc_dataset_cardinality(ds) == 4 && drain_i64(ds, 0, v, 64, &st) == 4 && same_i64(v, w3, 4));
    tfc_dataset_unref(ds);
    CHECK(!tfc_dataset_concatenate(tfc_dataset_range(0, 2, 1, 0, &st), tfc_dataset_range(0, 2, 1, TFC_INT32, &st),
                                   &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "Incompatible dataset elements"));
    /* a NULL in a chain propagates the first error */
    tfc_status_clear(&st);
    ds = tfc_dataset_batch(tfc_dataset_take(tfc_dataset_range(0, 1, 0, 0, &st), 2, &st), 2, NULL, &st);
    CHECK(!ds && strstr(st.msg, "step must be"));
}

static void test_map_filter(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t v[64];
    tfc_dataset *ds = tfc_dataset_filter(tfc_dataset_map(tfc_dataset_range(0, 10, 1, 0, &st), square, NULL, NULL, &st),
                                         is_even, NULL, NULL, &st);
    CHECK(tfc_dataset_cardinality(ds) == TFC_UNKNOWN_CARDINALITY);
    int64_t w[] = {0, 4, 16, 36, 64};
    CHECK(drain_i64(ds, 0, v, 64, &st) == 5 && same_i64(v, w, 5));
    tfc_dataset_unref(ds);
    /* parallel map keeps the order */
    for (int npc = 1; npc <= 4; npc++) {
        int64_t p = npc == 4 ? TFC_AUTOTUNE : npc;
        ds = tfc_dataset_map(tfc_dataset_range(0, 50, 1, 0, &st), square, NULL, &(tfc_map_opts){.num_parallel_calls = p},
                             &st);
        int64_t got[50];
        CHECK(drain_i64(ds, 0, got, 50, &st) == 50);
        for (int i = 0; i < 50; i++) CHECK(got[i] == (int64_t)i * i);
        tfc_dataset_unref(ds);
    }
    /* errors surface per element and the iterator goes on; OUT_OF_RANGE from a function is INVALID_ARGUMENT */
    for (int par = 0; par < 2; par++) {
        ds = tfc_dataset_map(tfc_dataset_range(0, 7, 1, 0, &st), fail_on_3, NULL,
                             &(tfc_map_opts){.num_parallel_calls = par ? 3 : 0}, &st);
        tfc_iterator *it = tfc_iterator_new(ds, &st);
        tfc_tensor *t;
        int64_t seen = 0, errs = 0;
        for (int i = 0; i < 7; i++) {
            if (tfc_iterator_next(it, &t, 1, &st)) {
                seen += (int64_t)tfc_tensor_get_f64(t, 0);
                tfc_tensor_unref(t);
            } else {
                errs++;
                CHECK(st.code == TFC_INVALID_ARGUMENT);
                CHECK(i == 3 ? strstr(st.msg, "three") != NULL : strstr(st.msg, "OutOfRangeError") != NULL);
            }
        }
        CHECK(errs == 2 && seen == 0 + 1 + 2 + 4 + 6);
        CHECK(!tfc_iterator_next(it, &t, 1, &st) && st.code == TFC_OUT_OF_RANGE);
        tfc_iterator_free(it);
        tfc_dataset_unref(ds);
        /* ignore_errors skips them */
        ds = tfc_dataset_ignore_errors(tfc_dataset_map(tfc_dataset_range(0, 7, 1, 0, &st), fail_on_3, NULL,
                                                       &(tfc_map_opts){.num_parallel_calls = par ? 2 : 0}, &st),
                                       &st);
        int64_t w2[] = {0, 1, 2, 4, 6};
        CHECK(drain_i64(ds, 0, v, 64, &st) == 5 && same_i64(v, w2, 5));
        tfc_dataset_unref(ds);
    }
    /* declared output spec is checked */
    ds = tfc_dataset_map(tfc_dataset_range(0, 3, 1, 0, &st), square, NULL,
                         &(tfc_map_opts){.output_spec = &(tfc_tensor_spec){TFC_FLOAT, {0, {0}}}}, &st);
    CHECK(drain_i64(ds, 0, v, 64, &st) == -1 && st.code == TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "map: component 0: expected float32 [], got int64 []"));
    tfc_dataset_unref(ds);
    /* user_free runs when the dataset goes, and at once on a failed construction */
    user_frees = 0;
    ds = tfc_dataset_map(tfc_dataset_range(0, 3, 1, 0, &st), square, NULL, &(tfc_map_opts){.user_free = count_free}, &st);
    CHECK(user_frees == 0);
    tfc_dataset_unref(ds);
    CHECK(user_frees == 1);
    CHECK(!tfc_dataset_map(NULL, square, NULL, &(tfc_map_opts){.user_free = count_free}, &st) && user_frees == 2);
}

static void test_interleave(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* TensorFlow's documented example */
    int64_t want[] = {1, 1, 1, 1, 2, 2, 2, 2, 1, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 3, 3, 4, 4, 5, 5, 5, 5, 5, 5};
    int64_t v[64];
    for (int par = 0; par < 3; par++) {
        tfc_interleave_opts o = {.cycle_length = 2, .block_length = 4,
                                 .num_parallel_calls = par == 0 ? 0 : par == 1 ? 2 : TFC_AUTOTUNE};
        tfc_dataset *ds = tfc_dataset_interleave(tfc_dataset_range(1, 6, 1, 0, &st), repeat6, NULL, &o, &st);
        CHECK_OK(&st);
        CHECK(drain_i64(ds, 0, v, 64, &st) == 30 && same_i64(v, want, 30));
        tfc_dataset_unref(ds);
    }
    /* inner datasets of different lengths, block 1: ends move the cycle on */
    int64_t want2[] = {10, 20, 30, 21, 31, 40, 32, 41, 42, 43};
    for (int par = 0; par < 2; par++) {
        tfc_interleave_opts o = {.cycle_length = 3, .block_length = 1, .num_parallel_calls = par ? 3 : 0};
        tfc_dataset *ds = tfc_dataset_interleave(tfc_dataset_range(1, 5, 1, 0, &st), range_x, NULL, &o, &st);
        CHECK(drain_i64(ds, 0, v, 64, &st) == 10 && same_i64(v, want2, 10));
        tfc_dataset_unref(ds);
    }
    /* flat_map */
    tfc_dataset *ds = tfc_dataset_flat_map(tfc_dataset_range(1, 4, 1, 0, &st), range_x, NULL, NULL, &st);
    int64_t want3[] = {10, 20, 21, 30, 31, 32};
    CHECK(drain_i64(ds, 0, v, 64, &st) == 6 && same_i64(v, want3, 6));
    tfc_dataset_unref(ds);
    /* a function returning another structure */
    ds = tfc_dataset_flat_map(tfc_dataset_range(1, 4, 1, 0, &st), range_x, NULL,
                              &(tfc_flat_map_opts){.output_structure = "(.,.)"}, &st);
    CHECK(drain_i64(ds, 0, v, 64, &st) == -1 && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "(.,.)"));
    tfc_dataset_unref(ds);
    /* nondeterministic parallel interleave yields the same multiset */
    tfc_interleave_opts o = {.cycle_length = 3, .block_length = 2, .num_parallel_calls = 3, .deterministic = TFC_NO};
    ds = tfc_dataset_interleave(tfc_dataset_range(1, 8, 1, 0, &st), range_x, NULL, &o, &st);
    int64_t n = drain_i64(ds, 0, v, 64, &st), sum = 0;
    for (int64_t i = 0; i < n; i++) sum += v[i];
    int64_t want_sum = 0;
    for (int x = 1; x < 8; x++)
        for (int k = 0; k < x; k++) want_sum += 10 * x + k;
    CHECK(n == 28 && sum == want_sum);
    tfc_dataset_unref(ds);
}

/* A generator of 0..limit-1 that fails once at `fail_at` (state: the next value). */
typedef struct gen_user {
    int64_t limit, fail_at;
    int inits, finals;
} gen_user;

static void *gen_init(void *user, tfc_status *st) {
    gen_user *g = user;
    g->inits++;
    int64_t *state = tfc_malloc(sizeof *state);
    *state = 0;
    return state;
}

static bool gen_next(tfc_ctx *ctx, void *user, void *state, tfc_tensor **out, int n, bool *end, tfc_status *st) {
    gen_user *g = user;
    int64_t *i = state;
    if (*i >= g->limit) {
        *end = true;
        return true;
    }
    int64_t v = (*i)++;
    if (v == g->fail_at) return tfc_status_set(st, TFC_DATA_LOSS, "generator broke at %lld", (long long)v);
    out[0] = tfc_scalar_i64(v, st);
    out[1] = tfc_scalar_f32((float)v / 2, st);
    return true;
}

static void gen_final(void *user, void *state) {
    ((gen_user *)user)->finals++;
    tfc_free(state);
}

static void test_generator(void) {
    tfc_status st = TFC_STATUS_INIT;
    gen_user g = {6, 2, 0, 0};
    tfc_tensor_spec sig[2] = {{TFC_INT64, {0, {0}}}, {TFC_FLOAT, {0, {0}}}};
    tfc_generator gen = {gen_init, gen_next, gen_final, &g, NULL};
    tfc_dataset *ds = tfc_dataset_from_generator(&gen, "(.,.)", sig, &st);
    CHECK_OK(&st);
    CHECK(tfc_dataset_cardinality(ds) == TFC_UNKNOWN_CARDINALITY);
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *out[2];
    int64_t got = 0;
    int errors = 0;
    for (;;) {
        if (tfc_iterator_next(it, out, 2, &st)) {
            CHECK(tfc_tensor_get_f64(out[1], 0) == tfc_tensor_get_f64(out[0], 0) / 2);
            got += (int64_t)tfc_tensor_get_f64(out[0], 0);
            tfc_tensor_unref(out[0]);
            tfc_tensor_unref(out[1]);
            continue;
        }
        if (st.code == TFC_OUT_OF_RANGE) break;
        errors++;
        CHECK(st.code == TFC_DATA_LOSS && strstr(st.msg, "generator broke at 2"));
        CHECK(!out[0] && !out[1]);
    }
    CHECK(errors == 1 && got == 0 + 1 + 3 + 4 + 5);
    tfc_iterator_free(it);
    CHECK(g.inits == 1 && g.finals == 1);
    /* a wrong signature */
    sig[1].dtype = TFC_DOUBLE;
    tfc_dataset *bad = tfc_dataset_from_generator(&gen, "(.,.)", sig, &st);
    int64_t v[8];
    CHECK(drain_i64(bad, 0, v, 8, &st) == -1 && st.code == TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "from_generator: component 1: expected float64 [], got float32 []"));
    tfc_dataset_unref(bad);
    tfc_dataset_unref(ds);
    CHECK(g.inits == 2 && g.finals == 2);
}

static void test_options_and_graph(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dataset *ds = tfc_dataset_with_options(
        tfc_dataset_map(tfc_dataset_range(0, 8, 1, 0, &st), square, NULL, &(tfc_map_opts){.num_parallel_calls = 2},
                        &st),
        &(tfc_data_options){.deterministic = TFC_NO, .private_threadpool_size = 2}, &st);
    ds = tfc_dataset_batch(ds, 4, NULL, &st);
    tfc_data_options o = tfc_dataset_options(ds);
    CHECK(o.deterministic == TFC_NO && o.private_threadpool_size == 2);
    ds = tfc_dataset_with_options(ds, &(tfc_data_options){.deterministic = TFC_YES}, &st);
    CHECK(tfc_dataset_options(ds).deterministic == TFC_YES && tfc_dataset_options(ds).private_threadpool_size == 2);
    char buf[1024];
    tfc_dataset_graph_str(ds, buf, sizeof buf);
    CHECK(strstr(buf, "OptionsDataset(") == buf);
    CHECK(strstr(buf, "\n  BatchDatasetV2(batch_size=4, drop_remainder=false)"));
    CHECK(strstr(buf, "\n      ParallelMapDatasetV2(f=") && strstr(buf, "num_parallel_calls=2"));
    CHECK(strstr(buf, "\n        RangeDataset(start=0, stop=8, step=1, output_type=int64) -> .\n"));
    int64_t v[4];
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t;
    REQUIRE(tfc_iterator_next(it, &t, 1, &st));
    CHECK(same_i64(tfc_tensor_data(t), (int64_t[]){0, 1, 4, 9}, 4));
    tfc_tensor_unref(t);
    tfc_iterator_free(it);
    (void)v;
    tfc_dataset_unref(ds);
}

int main(void) {
    int64_t live0 = tfc_tensor_live_count();
    test_range_and_spec();
    test_slices_and_structures();
    test_batch();
    test_padded_batch_unbatch();
    test_shuffle();
    test_counting();
    test_map_filter();
    test_interleave();
    test_generator();
    test_options_and_graph();
    CHECK(tfc_tensor_live_count() == live0);
    TEST_MAIN_END();
}
