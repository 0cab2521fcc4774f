/* Reductions: values the registry-driven tests cannot check against their float64 reference (All/Any, NaN
 * propagation, integer wrap-around, half-precision Mean, long float32 sums), the typed wrappers and
 * gradients through the tape. */
#include "tfc_test.h"
#include "tfc/ops/reduction.h"

static tfc_ctx *ctx;

static tfc_tensor *f32(const float *v, const int64_t *dims, int rank) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, rank, v, (size_t)n * 4, &st);
    REQUIRE(t);
    return t;
}

static void test_all_any(void) {
    tfc_status st = TFC_STATUS_INIT;
    const bool v[6] = {true, false, true, true, true, true};
    int64_t dims[2] = {2, 3};
    tfc_tensor *x = tfc_tensor_from_data(TFC_BOOL, dims, 2, v, 6, &st);
    REQUIRE(x);
    int64_t ax1 = 1, ax0 = 0;
    tfc_tensor *all1 = tfc_reduce_all(ctx, x, &ax1, 1, false, &st);
    tfc_tensor *any0 = tfc_reduce_any(ctx, x, &ax0, 1, true, &st);
    tfc_tensor *all = tfc_reduce_all(ctx, x, NULL, 0, false, &st);
    CHECK_OK(&st);
    REQUIRE(all1 && any0 && all);
    const bool *a1 = tfc_tensor_data(all1), *y0 = tfc_tensor_data(any0), *aa = tfc_tensor_data(all);
    CHECK(!a1[0] && a1[1]);
    CHECK(tfc_tensor_rank(any0) == 2 && tfc_tensor_dim(any0, 0) == 1 && y0[0] && y0[1] && y0[2]);
    CHECK(tfc_tensor_rank(all) == 0 && !aa[0]);
    /* Over an empty dim: All is true, Any is false. */
    int64_t ed[2] = {3, 0};
    tfc_tensor *e = tfc_tensor_new(TFC_BOOL, ed, 2, &st);
    tfc_tensor *ea = tfc_reduce_all(ctx, e, &ax1, 1, false, &st), *eo = tfc_reduce_any(ctx, e, &ax1, 1, false, &st);
    REQUIRE(ea && eo);
    for (int i = 0; i < 3; i++) CHECK(((const bool *)tfc_tensor_data(ea))[i] && !((const bool *)tfc_tensor_data(eo))[i]);
    tfc_tensor *ts[] = {x, all1, any0, all, e, ea, eo};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tfc_tensor_unref(ts[i]);
}

/* Max/Min propagate NaN along every kernel path (vectorised rows, columns, narrow columns, whole tensor);
 * ArgMax/ArgMin skip NaN. */
static void test_nan(void) {
    tfc_status st = TFC_STATUS_INIT;
    enum { R = 100, C = 70 };
    static float v[R * C];
    for (int i = 0; i < R * C; i++) v[i] = (float)((i * 37) % 101) - 50.0f;
    v[5 * C + 33] = NAN; /* row 5, column 33 */
    int64_t dims[2] = {R, C}, ax0 = 0, ax1 = 1;
    tfc_tensor *x = f32(v, dims, 2);
    tfc_tensor *rows = tfc_reduce_max(ctx, x, &ax1, 1, false, &st), *cols = tfc_reduce_min(ctx, x, &ax0, 1, false, &st);
    tfc_tensor *all = tfc_reduce_max(ctx, x, NULL, 0, false, &st);
    REQUIRE(rows && cols && all);
    for (int i = 0; i < R; i++) CHECK((i == 5) == isnan(tfc_tensor_get_f64(rows, i)));
    for (int j = 0; j < C; j++) CHECK((j == 33) == isnan(tfc_tensor_get_f64(cols, j)));
    CHECK(isnan(tfc_tensor_get_f64(all, 0)));
    int64_t nd[2] = {R * C / 2, 2}; /* narrow columns */
    tfc_tensor *xn = f32(v, nd, 2), *nc = tfc_reduce_max(ctx, xn, &ax0, 1, false, &st);
    REQUIRE(nc);
    CHECK(!isnan(tfc_tensor_get_f64(nc, 0)) && isnan(tfc_tensor_get_f64(nc, 1))); /* 5*70+33 is odd */

    const float w[5] = {NAN, 3, 7, NAN, 7};
    int64_t five = 5;
    tfc_tensor *xw = f32(w, &five, 1);
    tfc_tensor *am = tfc_argmax(ctx, xw, 0, 0, &st), *an = tfc_argmin(ctx, xw, 0, TFC_INT32, &st);
    REQUIRE(am && an);
    CHECK(tfc_tensor_dtype(am) == TFC_INT64 && ((const int64_t *)tfc_tensor_data(am))[0] == 2);
    CHECK(tfc_tensor_dtype(an) == TFC_INT32 && ((const int32_t *)tfc_tensor_data(an))[0] == 1);
    tfc_tensor *ts[] = {x, rows, cols, all, xn, nc, xw, am, an};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tfc_tensor_unref(ts[i]);
}

static void test_integers(void) {
    tfc_status st = TFC_STATUS_INIT;
    int8_t v[10];
    for (int i = 0; i < 10; i++) v[i] = 100;
    int64_t n = 10;
    tfc_tensor *x = tfc_tensor_from_data(TFC_INT8, &n, 1, v, 10, &st);
    REQUIRE(x);
    tfc_tensor *s = tfc_reduce_sum(ctx, x, NULL, 0, false, &st), *m = tfc_reduce_mean(ctx, x, NULL, 0, false, &st);
    tfc_tensor *p = tfc_reduce_prod(ctx, x, NULL, 0, false, &st);
    REQUIRE(s && m && p);
    CHECK(((const int8_t *)tfc_tensor_data(s))[0] == (int8_t)(uint8_t)(1000 & 0xff)); /* wraps, as TensorFlow */
    CHECK(((const int8_t *)tfc_tensor_data(m))[0] == 100);                          /* no overflow in Mean */
    CHECK(((const int8_t *)tfc_tensor_data(p))[0] == 0);                            /* 100^10 = 0 mod 256 */
    const int32_t w[2] = {-3, -4};
    int64_t two = 2;
    tfc_tensor *xi = tfc_tensor_from_data(TFC_INT32, &two, 1, w, 8, &st);
    tfc_tensor *mi = tfc_reduce_mean(ctx, xi, NULL, 0, false, &st);
    REQUIRE(mi);
    CHECK(((const int32_t *)tfc_tensor_data(mi))[0] == -3); /* truncates toward zero */
    const int64_t big[2] = {INT64_MAX, 2};
    tfc_tensor *xb = tfc_tensor_from_data(TFC_INT64, &two, 1, big, 16, &st);
    tfc_tensor *sb = tfc_reduce_sum(ctx, xb, NULL, 0, false, &st);
    REQUIRE(sb);
    CHECK(((const int64_t *)tfc_tensor_data(sb))[0] == INT64_MIN + 1);
    tfc_tensor *ts[] = {x, s, m, p, xi, mi, xb, sb};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tfc_tensor_unref(ts[i]);
}

/* float32 sums stay close to the exact sum over long rows and columns; half Mean divides in half as
 * TensorFlow (a count beyond 65504 is inf). */
static void test_accuracy(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 1 << 20;
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, &n, 1, &st);
    REQUIRE(x);
    float *d = tfc_tensor_mutable_data(x);
    double exact = 0;
    uint32_t r = 12345;
    for (int64_t i = 0; i < n; i++) {
        r = r * 1664525u + 1013904223u;
        d[i] = (float)(r >> 8) / 16777216.0f + 0.5f;
        exact += d[i];
    }
    tfc_tensor *s = tfc_reduce_sum(ctx, x, NULL, 0, false, &st);
    REQUIRE(s);
    CHECK_NEAR(tfc_tensor_get_f64(s, 0), exact, 1e-7);
    int64_t cd[2] = {n / 4, 4}, ax0 = 0;
    tfc_tensor *xc = tfc_tensor_reshaped(x, cd, 2, &st);
    tfc_tensor *sc = tfc_reduce_sum(ctx, xc, &ax0, 1, false, &st);
    REQUIRE(sc);
    double e0 = 0;
    for (int64_t i = 0; i < n; i += 4) e0 += d[i];
    CHECK_NEAR(tfc_tensor_get_f64(sc, 0), e0, 1e-7);

    int64_t hn = 70000;
    tfc_tensor *h = tfc_tensor_new(TFC_HALF, &hn, 1, &st);
    REQUIRE(h);
    tfc_half *hd = tfc_tensor_mutable_data(h);
    for (int64_t i = 0; i < hn; i++) hd[i] = tfc_half_from_float(0.5f);
    tfc_tensor *hm = tfc_reduce_mean(ctx, h, NULL, 0, false, &st), *hs = tfc_reduce_sum(ctx, h, NULL, 0, false, &st);
    REQUIRE(hm && hs);
    CHECK(tfc_tensor_get_f64(hm, 0) == 0.0);     /* 35000 / half(70000) = 35000 / inf */
    CHECK(tfc_tensor_get_f64(hs, 0) == 35008.0); /* 35000 rounded to half */
    tfc_tensor *ts[] = {x, s, xc, sc, h, hm, hs};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tfc_tensor_unref(ts[i]);
}

static void test_wrappers_and_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    const float v[6] = {1, 2, 3, 4, 5, 6};
    int64_t dims[2] = {2, 3};
    tfc_tensor *x = f32(v, dims, 2);
    int64_t neg = -1, dup[2] = {0, -2}, bad = 2;
    tfc_tensor *s = tfc_reduce_sum(ctx, x, &neg, 1, true, &st);
    REQUIRE(s);
    CHECK(tfc_tensor_rank(s) == 2 && tfc_tensor_dim(s, 1) == 1);
    CHECK(tfc_tensor_get_f64(s, 0) == 6 && tfc_tensor_get_f64(s, 1) == 15);
    tfc_tensor *m = tfc_reduce_mean(ctx, x, NULL, 0, false, &st);
    REQUIRE(m);
    CHECK(tfc_tensor_rank(m) == 0 && tfc_tensor_get_f64(m, 0) == 3.5);
    tfc_tensor *same = tfc_reduce_max(ctx, x, dup, 0, false, &st); /* no axes: a copy */
    REQUIRE(same);
    CHECK(tfc_shape_equal(tfc_tensor_shape(same), tfc_tensor_shape(x)) && tfc_tensor_get_f64(same, 5) == 6);
    CHECK(!tfc_reduce_min(ctx, x, dup, 2, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "duplicate dimension: 0") != NULL);
    CHECK(!tfc_reduce_prod(ctx, x, &bad, 1, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Invalid reduction dimension (2 for input with 2 dimension(s)") != NULL);
    CHECK(!tfc_argmax(ctx, x, 2, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor *ts[] = {x, s, m, same};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; i++) tfc_tensor_unref(ts[i]);
}

/* Gradients through the tape: Sum spreads dy, Mean divides it, Max splits it between ties. */
static void test_gradients(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    const float v[6] = {1, 5, 5, 2, 0, 2};
    int64_t dims[2] = {2, 3}, ax1 = 1;
    tfc_tensor *x = f32(v, dims, 2);
    tfc_tape *tape = tfc_tape_new(ctx, true, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, x);
    tfc_tensor *s = tfc_reduce_sum(ctx, x, &ax1, 1, false, &st);
    tfc_tensor *m = tfc_reduce_mean(ctx, x, NULL, 0, false, &st);
    tfc_tensor *mx = tfc_reduce_max(ctx, x, &ax1, 1, false, &st);
    REQUIRE(s && m && mx);
    tfc_tensor *g[3] = {0};
    REQUIRE(tfc_tape_gradient(tape, s, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g[0], &st));
    REQUIRE(tfc_tape_gradient(tape, m, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g[1], &st));
    REQUIRE(tfc_tape_gradient(tape, mx, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g[2], &st));
    const double want_max[6] = {0, 0.5, 0.5, 0.5, 0, 0.5};
    for (int i = 0; i < 6; i++) {
        CHECK_NEAR(tfc_tensor_get_f64(g[0], i), 1.0, 0);
        CHECK_NEAR(tfc_tensor_get_f64(g[1], i), 1.0 / 6, 1e-7);
        CHECK_NEAR(tfc_tensor_get_f64(g[2], i), want_max[i], 0);
    }
    tfc_tape_free(tape);
    tfc_tensor_unref(x);
    tfc_scope_end(ctx);
}

/* Prod's gradient: the product of the other elements, exact with zeros. Checked through both of its
 * implementations: without a Cumprod op (zero counts) and with one (TensorFlow's exclusive cumulative
 * products); when the registry has no Cumprod, the test registers a minimal one (float64, any axis). */
static bool cumprod_shape(tfc_shape_ctx *c, tfc_status *st) { return tfc_shape_same_as_input0(c, st); }
static bool cumprod_kernel(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = tfc_kernel_input(k, 0);
    int64_t axis = tfc_tensor_get_f64(tfc_kernel_input(k, 1), 0), rank = tfc_tensor_rank(x), outer = 1, n, inner = 1;
    if (axis < 0) axis += rank;
    for (int i = 0; i < axis; i++) outer *= tfc_tensor_dim(x, i);
    n = tfc_tensor_dim(x, (int)axis);
    for (int i = (int)axis + 1; i < rank; i++) inner *= tfc_tensor_dim(x, i);
    const tfc_attrs *attrs = tfc_kernel_attrs(k);
    bool excl = tfc_attrs_bool(attrs, "exclusive", false), rev = tfc_attrs_bool(attrs, "reverse", false);
    const double *in = tfc_tensor_data(x);
    double *out = (double *)tfc_tensor_data(tfc_kernel_output(k, 0));
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double p = 1;
            for (int64_t q = 0; q < n; q++) {
                int64_t j = rev ? n - 1 - q : q, at = (o * n + j) * inner + i;
                if (excl) out[at] = p, p *= in[at];
                else p *= in[at], out[at] = p;
            }
        }
    (void)st;
    return true;
}
static const tfc_op_def test_cumprod = {
    .name = "Cumprod", .inputs = "x: T, axis: Tidx", .outputs = "out: T",
    .attrs = "exclusive: bool = false, reverse: bool = false, T: {double}, Tidx: {int32, int64} = int32",
    .shape = cumprod_shape,
};

static void check_prod_grad(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    const double v[12] = {0, 2, 3, 4, 0, 0, 5, 6, 1.5, 2, -1, 0.5}; /* rows: one zero, two zeros, none */
    int64_t dims[2] = {3, 4}, ax1 = 1, ax0 = 0;
    tfc_tensor *x = tfc_tensor_from_data(TFC_DOUBLE, dims, 2, v, sizeof v, &st);
    REQUIRE(x);
    tfc_tape *tape = tfc_tape_new(ctx, true, true, &st);
    tfc_tape_watch(tape, x);
    tfc_tensor *rows = tfc_reduce_prod(ctx, x, &ax1, 1, false, &st), *cols = tfc_reduce_prod(ctx, x, &ax0, 1, true, &st);
    REQUIRE(rows && cols);
    tfc_tensor *gr = NULL, *gc = NULL;
    REQUIRE(tfc_tape_gradient(tape, rows, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &gr, &st));
    REQUIRE(tfc_tape_gradient(tape, cols, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &gc, &st));
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++) {
            double wr = 1, wc = 1;
            for (int q = 0; q < 4; q++) wr *= q == j ? 1 : v[i * 4 + q];
            for (int q = 0; q < 3; q++) wc *= q == i ? 1 : v[q * 4 + j];
            CHECK_NEAR(tfc_tensor_get_f64(gr, i * 4 + j), wr, 1e-12);
            CHECK_NEAR(tfc_tensor_get_f64(gc, i * 4 + j), wc, 1e-12);
        }
    tfc_tape_free(tape);
    tfc_tensor_unref(x);
    tfc_scope_end(ctx);
}

static void test_prod_gradient(void) {
    tfc_status st = TFC_STATUS_INIT;
    check_prod_grad();
    if (!tfc_op_lookup("Cumprod")) {
        REQUIRE(tfc_op_register(&test_cumprod, &st));
        REQUIRE(tfc_kernel_register("Cumprod", "CPU", cumprod_kernel, &st));
    }
    check_prod_grad();
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_all_any();
    test_nan();
    test_integers();
    test_accuracy();
    test_wrappers_and_errors();
    test_gradients();
    test_prod_gradient();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
