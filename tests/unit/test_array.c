/* Array ops through their typed wrappers (include/tfc/ops/array.h): exact values against naive loops,
 * strings (deep copies of LARGE strings), buffer sharing, gradients through the tape. */
#include "tfc/ops/array.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *iota_f32(const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, dims, rank, &st);
    float *p = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) p[i] = (float)i;
    return t;
}

static bool same_shape(const tfc_tensor *t, const int64_t *dims, int rank) {
    if (tfc_tensor_rank(t) != rank) return false;
    for (int i = 0; i < rank; i++)
        if (tfc_tensor_dim(t, i) != dims[i]) return false;
    return true;
}

static void test_reshape_shares(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = iota_f32((int64_t[]){2, 3, 4}, 3);
    tfc_tensor *y = tfc_reshape(ctx, x, (int64_t[]){4, -1}, 2, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(same_shape(y, (int64_t[]){4, 6}, 2));
    CHECK(tfc_tensor_data(y) == tfc_tensor_data(x)); /* no copy */
    tfc_tensor *e = tfc_expand_dims(ctx, y, -1, &st), *s = e ? tfc_squeeze(ctx, e, NULL, 0, &st) : NULL;
    REQUIRE(s);
    CHECK(same_shape(e, (int64_t[]){4, 6, 1}, 3) && same_shape(s, (int64_t[]){4, 6}, 2));
    CHECK(tfc_tensor_data(s) == tfc_tensor_data(x));
    tfc_tensor *id = tfc_identity(ctx, x, &st);
    CHECK(id && tfc_tensor_data(id) == tfc_tensor_data(x));
    CHECK(!tfc_reshape(ctx, x, (int64_t[]){5, 5}, 2, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Input to reshape is a tensor with 24 values, but the requested shape has 25") != NULL);
    tfc_tensor *sh = tfc_shape_of(ctx, x, TFC_INT64, &st), *sz = tfc_size_of(ctx, x, TFC_INT32, &st);
    tfc_tensor *rk = tfc_rank_of(ctx, x, &st);
    REQUIRE(sh && sz && rk);
    CHECK(tfc_tensor_get_f64(sh, 0) == 2 && tfc_tensor_get_f64(sh, 2) == 4 && tfc_tensor_dtype(sh) == TFC_INT64);
    CHECK(tfc_tensor_get_f64(sz, 0) == 24 && tfc_tensor_get_f64(rk, 0) == 3);
    tfc_tensor *objs[] = {y, e, s, id, sh, sz, rk, x};
    for (int i = 0; i < 8; i++) tfc_tensor_unref(objs[i]);
}

/* Transpose of every permutation of a rank-4 tensor and large 2-D/batched cases against a naive loop. */
static void check_transpose(const int64_t *dims, int r, const int64_t *perm) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = iota_f32(dims, r);
    tfc_tensor *y = tfc_transpose(ctx, x, perm, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    int64_t xs[8], od[8], idx[8] = {0};
    xs[r - 1] = 1;
    for (int i = r - 2; i >= 0; i--) xs[i] = xs[i + 1] * dims[i + 1];
    for (int i = 0; i < r; i++) od[i] = dims[perm[i]];
    CHECK(same_shape(y, od, r));
    const float *yd = tfc_tensor_data(y);
    int64_t n = tfc_tensor_num_elements(y), bad = 0;
    for (int64_t k = 0; k < n; k++) {
        int64_t src = 0;
        for (int i = 0; i < r; i++) src += idx[i] * xs[perm[i]];
        bad += yd[k] != (float)src;
        for (int i = r - 1; i >= 0 && ++idx[i] == od[i]; i--) idx[i] = 0;
    }
    CHECK(bad == 0);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
}

static void test_transpose(void) {
    int64_t p[4] = {0, 1, 2, 3};
    /* all 24 permutations (Heap's algorithm would be shorter to read as nested loops) */
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int c = 0; c < 4; c++)
                for (int d = 0; d < 4; d++)
                    if (a != b && a != c && a != d && b != c && b != d && c != d) {
                        p[0] = a, p[1] = b, p[2] = c, p[3] = d;
                        check_transpose((int64_t[]){2, 3, 5, 7}, 4, p);
                    }
    check_transpose((int64_t[]){257, 131}, 2, (int64_t[]){1, 0});
    check_transpose((int64_t[]){3, 33, 65}, 3, (int64_t[]){0, 2, 1});
    check_transpose((int64_t[]){2, 9, 11, 40}, 4, (int64_t[]){0, 3, 1, 2});
    check_transpose((int64_t[]){2, 40, 9, 11}, 4, (int64_t[]){0, 2, 3, 1});
    check_transpose((int64_t[]){600, 700}, 2, (int64_t[]){1, 0}); /* parallel */
}

static void test_strings(void) {
    tfc_status st = TFC_STATUS_INIT;
    const char *strs[] = {"a", "a string longer than twenty-two bytes (LARGE)", "", "bc", "another long string, heap allocated",
                          "f"};
    tfc_tensor *x = tfc_tensor_from_strings(strs, NULL, (int64_t[]){2, 3}, 2, &st);
    REQUIRE(x);
    tfc_tensor *t = tfc_transpose(ctx, x, NULL, &st);
    REQUIRE(t);
    size_t n;
    const char *s = tfc_tensor_string(t, 1, &n); /* t[0][1] = x[1][0] */
    CHECK(n == strlen(strs[3]) && !memcmp(s, strs[3], n));
    s = tfc_tensor_string(t, 2, &n); /* t[1][0] = x[0][1] */
    CHECK(n == strlen(strs[1]) && !memcmp(s, strs[1], n));
    const char *orig = tfc_tensor_string(x, 1, NULL);
    CHECK(s != orig); /* deep copy, not a shared pointer */
    tfc_tensor *tiled = tfc_tile(ctx, x, (int64_t[]){2, 1}, &st);
    REQUIRE(tiled);
    s = tfc_tensor_string(tiled, 10, &n);
    CHECK(n == strlen(strs[4]) && !memcmp(s, strs[4], n));
    tfc_tensor *padded = tfc_pad(ctx, x, (int64_t[]){1, 0, 0, 1}, "REFLECT", 0, &st);
    REQUIRE(padded);
    CHECK(same_shape(padded, (int64_t[]){3, 4}, 2));
    s = tfc_tensor_string(padded, 1, &n); /* padded[0] = x[1] */
    CHECK(n == strlen(strs[4]) && !memcmp(s, strs[4], n));
    tfc_tensor *parts[3];
    CHECK(tfc_unstack(ctx, x, 1, parts, 3, &st) == 3);
    tfc_tensor *back = tfc_stack(ctx, (const tfc_tensor *const *)parts, 3, 1, &st);
    REQUIRE(back);
    for (int64_t i = 0; i < 6; i++) {
        s = tfc_tensor_string(back, i, &n);
        CHECK(n == strlen(strs[i]) && !memcmp(s, strs[i], n));
    }
    tfc_tensor *value = tfc_tensor_from_strings((const char *[]){"fill value that is rather long, LARGE"}, NULL, NULL, 0, &st);
    tfc_tensor *f = tfc_fill(ctx, (int64_t[]){3}, 1, value, &st);
    REQUIRE(f);
    s = tfc_tensor_string(f, 2, &n);
    CHECK(n == 37 && !memcmp(s, "fill value", 10));
    tfc_tensor *z = tfc_zeros_like(ctx, x, &st), *zz = tfc_zeros(ctx, TFC_STRING, (int64_t[]){2}, 1, &st);
    REQUIRE(z && zz);
    CHECK(tfc_tensor_string(z, 5, &n) && n == 0 && tfc_tensor_string(zz, 1, &n) && n == 0);
    CHECK(!tfc_ones_like(ctx, x, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    for (int i = 0; i < 3; i++) tfc_tensor_unref(parts[i]);
    tfc_tensor *objs[] = {x, t, tiled, padded, back, value, f, z, zz};
    for (int i = 0; i < 9; i++) tfc_tensor_unref(objs[i]);
}

static void test_slicing(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = iota_f32((int64_t[]){4, 5}, 2);
    /* x[::-2, 1:4] */
    tfc_tensor *y = tfc_strided_slice(ctx, x, (int64_t[]){0, 1}, (int64_t[]){0, 4}, (int64_t[]){-2, 1}, 2,
                                      &(tfc_strided_slice_attrs){.begin_mask = 1, .end_mask = 1}, &st);
    CHECK_OK(&st);
    REQUIRE(y);
    CHECK(same_shape(y, (int64_t[]){2, 3}, 2));
    const float want[] = {16, 17, 18, 6, 7, 8};
    for (int i = 0; i < 6; i++) CHECK_NEAR(tfc_tensor_get_f64(y, i), want[i], 0);
    /* x[..., tf.newaxis, -1] -> [4, 1] */
    tfc_tensor *z = tfc_strided_slice(ctx, x, (int64_t[]){0, 0, -1}, (int64_t[]){0, 0, 0}, NULL, 3,
                                      &(tfc_strided_slice_attrs){.ellipsis_mask = 1, .new_axis_mask = 2,
                                                                  .shrink_axis_mask = 4}, &st);
    REQUIRE(z);
    CHECK(same_shape(z, (int64_t[]){4, 1}, 2));
    CHECK_NEAR(tfc_tensor_get_f64(z, 3), 19, 0);
    tfc_tensor *s = tfc_slice(ctx, x, (int64_t[]){1, 2}, (int64_t[]){-1, 2}, &st);
    REQUIRE(s);
    CHECK(same_shape(s, (int64_t[]){3, 2}, 2) && tfc_tensor_get_f64(s, 5) == 18);
    tfc_tensor *parts[3];
    REQUIRE(tfc_split_v(ctx, x, (int64_t[]){2, -1, 1}, 3, -1, parts, &st));
    CHECK(same_shape(parts[1], (int64_t[]){4, 2}, 2) && tfc_tensor_get_f64(parts[1], 3) == 8);
    tfc_tensor *cat = tfc_concat(ctx, (const tfc_tensor *const *)parts, 3, 1, &st);
    REQUIRE(cat);
    for (int i = 0; i < 20; i++) CHECK(tfc_tensor_get_f64(cat, i) == i);
    CHECK(!tfc_split(ctx, x, 3, 0, parts + 0, &st)); /* 4 rows do not split 3 ways */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Split") && strstr(st.msg, "num_split 3"));
    CHECK(!tfc_strided_slice(ctx, x, (int64_t[]){0}, (int64_t[]){1}, (int64_t[]){0}, 1, NULL, &st));
    CHECK(strstr(st.msg, "strides[0] must be non-zero") != NULL);
    for (int i = 0; i < 3; i++) tfc_tensor_unref(parts[i]);
    tfc_tensor *objs[] = {x, y, z, s, cat};
    for (int i = 0; i < 5; i++) tfc_tensor_unref(objs[i]);
}

/* Row slices of aligned tensors are views into the input's buffer; they must survive the input. */
static void test_views(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = iota_f32((int64_t[]){64, 32}, 2);
    tfc_tensor *parts[4];
    REQUIRE(tfc_split(ctx, x, 4, 0, parts, &st));
    CHECK((const char *)tfc_tensor_data(parts[1]) == (const char *)tfc_tensor_data(x) + 16 * 32 * 4);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_num_elements(parts[3]) == 16 * 32 && tfc_tensor_get_f64(parts[3], 0) == 48 * 32);
    tfc_tensor *c = tfc_concat(ctx, (const tfc_tensor *const *)parts, 4, 0, &st);
    REQUIRE(c);
    for (int64_t i = 0; i < 64 * 32; i += 97) CHECK(tfc_tensor_get_f64(c, i) == i);
    for (int i = 0; i < 4; i++) tfc_tensor_unref(parts[i]);
    tfc_tensor_unref(c);
}

static void test_pad_tile_broadcast(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x = iota_f32((int64_t[]){2, 3}, 2);
    tfc_tensor *p = tfc_pad(ctx, x, (int64_t[]){1, 0, 0, 2}, NULL, 7.5, &st);
    REQUIRE(p);
    CHECK(same_shape(p, (int64_t[]){3, 5}, 2));
    const float want[] = {7.5, 7.5, 7.5, 7.5, 7.5, 0, 1, 2, 7.5, 7.5, 3, 4, 5, 7.5, 7.5};
    for (int i = 0; i < 15; i++) CHECK_NEAR(tfc_tensor_get_f64(p, i), want[i], 0);
    tfc_tensor *m = tfc_pad(ctx, x, (int64_t[]){0, 0, 2, 2}, "SYMMETRIC", 0, &st);
    REQUIRE(m);
    const float wm[] = {1, 0, 0, 1, 2, 2, 1};
    for (int i = 0; i < 7; i++) CHECK_NEAR(tfc_tensor_get_f64(m, i), wm[i], 0);
    tfc_tensor *t = tfc_tile(ctx, x, (int64_t[]){2, 2}, &st);
    REQUIRE(t);
    CHECK(same_shape(t, (int64_t[]){4, 6}, 2) && tfc_tensor_get_f64(t, 6 * 3 + 4) == 4);
    tfc_tensor *b = tfc_broadcast_to(ctx, x, (int64_t[]){2, 2, 3}, 3, &st);
    REQUIRE(b);
    CHECK(tfc_tensor_get_f64(b, 11) == 5);
    CHECK(!tfc_tile(ctx, x, (int64_t[]){1ll << 40, 1ll << 40}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_broadcast_to(ctx, x, (int64_t[]){4, 3}, 2, &st));
    CHECK(strstr(st.msg, "Incompatible shapes: [2,3] vs. [4,3]") != NULL);
    tfc_tensor *o = tfc_ones(ctx, TFC_BFLOAT16, (int64_t[]){3}, 1, &st);
    REQUIRE(o);
    CHECK(tfc_tensor_get_f64(o, 2) == 1.0);
    tfc_tensor *objs[] = {x, p, m, t, b, o};
    for (int i = 0; i < 6; i++) tfc_tensor_unref(objs[i]);
}

/* d/dx sum(w * tile(pad(x)[1:, ::-1])) through the tape, against the hand-derived gradient. */
static void test_gradients(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x = tfc_tensor_from_data(TFC_DOUBLE, (int64_t[]){2, 2}, 2, (double[]){1, 2, 3, 4}, 32, &st);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    tfc_tensor *p = tfc_pad(ctx, x, (int64_t[]){1, 0, 0, 1}, NULL, 0, &st);          /* [3, 3] */
    tfc_tensor *s = tfc_strided_slice(ctx, p, (int64_t[]){1, 0}, (int64_t[]){0, 0}, (int64_t[]){1, -1}, 2,
                                      &(tfc_strided_slice_attrs){.end_mask = 3, .begin_mask = 2}, &st); /* [2, 3] */
    tfc_tensor *t = tfc_tile(ctx, s, (int64_t[]){2, 1}, &st);                           /* [4, 3] */
    tfc_tensor *stop = tfc_stop_gradient(ctx, t, &st);
    REQUIRE(t && stop);
    tfc_tensor *g[1];
    REQUIRE(tfc_tape_gradient(tape, t, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, g, &st));
    CHECK_OK(&st);
    REQUIRE(g[0]);
    /* every x element appears once in s, and s twice in t */
    for (int i = 0; i < 4; i++) CHECK_NEAR(tfc_tensor_get_f64(g[0], i), 2.0, 0);
    tfc_tape_free(tape);
    tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    stop = tfc_stop_gradient(ctx, x, &st);
    REQUIRE(tfc_tape_gradient(tape, stop, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, g, &st));
    CHECK(g[0] == NULL);
    tfc_tape_free(tape);
    tfc_tensor_unref(x);
    tfc_scope_end(ctx);
}

/* Identity of a resource handle is a handle to the same variable, holding its own reference. */
static void test_resource_identity(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *init = tfc_scalar_f32(3.0f, &st);
    tfc_variable *v = tfc_variable_new(ctx, init, true, "v", &st);
    REQUIRE(v);
    tfc_tensor *h = tfc_identity(ctx, tfc_variable_handle(v), &st);
    CHECK_OK(&st);
    REQUIRE(h);
    tfc_variable_free(v);
    CHECK(tfc_variable_from_handle(h) == v); /* still alive through h */
    tfc_tensor_unref(h);
    tfc_tensor_unref(init);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_reshape_shares();
    test_transpose();
    test_strings();
    test_slicing();
    test_views();
    test_pad_tile_broadcast();
    test_gradients();
    test_resource_identity();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
