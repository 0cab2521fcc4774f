/* Matrix products: tfc_matmul against a direct triple loop (2-D, batched with broadcasting, transposes,
 * every dtype path), integer wrap-around, and gradients through the tape. */
#include "tfc_test.h"
#include "tfc/ops/linalg.h"

static tfc_ctx *ctx;

static tfc_tensor *filled(tfc_dtype dt, const int64_t *dims, int rank, uint32_t seed) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(dt, dims, rank, &st);
    REQUIRE(t);
    void *d = tfc_tensor_mutable_data(t);
    for (int64_t i = 0; i < tfc_tensor_num_elements(t); i++) {
        seed = seed * 1664525u + 1013904223u;
        double v = tfc_dtype_is_integer(dt) ? (double)((seed >> 16) % 7) - 3.0 : (double)(seed >> 8) / 8388608.0 - 1.0;
        tfc_dtype_set_f64(dt, d, i, v);
    }
    return t;
}

/* Element [b..., i, j] of op(a) op(b) by a direct loop in double, with batch broadcasting. */
static double reference(const tfc_tensor *a, const tfc_tensor *b, bool ta, bool tb, const int64_t *bidx, int brank,
                        int64_t i, int64_t j) {
    int ra = tfc_tensor_rank(a), rb = tfc_tensor_rank(b);
    int64_t k = tfc_tensor_dim(a, ta ? -2 : -1), oa = 0, ob = 0, sa = 1, sb = 1;
    int64_t am = tfc_tensor_dim(a, -2) * tfc_tensor_dim(a, -1), bm = tfc_tensor_dim(b, -2) * tfc_tensor_dim(b, -1);
    for (int d = brank - 1; d >= 0; d--) {
        int ia = d - (brank - (ra - 2)), ib = d - (brank - (rb - 2));
        int64_t da = ia >= 0 ? tfc_tensor_dim(a, ia) : 1, db = ib >= 0 ? tfc_tensor_dim(b, ib) : 1;
        oa += (da == 1 ? 0 : bidx[d]) * sa;
        ob += (db == 1 ? 0 : bidx[d]) * sb;
        sa *= da;
        sb *= db;
    }
    int64_t ac = tfc_tensor_dim(a, -1), bc = tfc_tensor_dim(b, -1);
    double s = 0;
    for (int64_t q = 0; q < k; q++) {
        double x = tfc_tensor_get_f64(a, oa * am + (ta ? q * ac + i : i * ac + q));
        double y = tfc_tensor_get_f64(b, ob * bm + (tb ? j * bc + q : q * bc + j));
        s += x * y;
    }
    return s;
}

static void check_product(tfc_dtype dt, const int64_t *ad, int ar, const int64_t *bd, int br, bool ta, bool tb,
                          double tol) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *a = filled(dt, ad, ar, 1), *b = filled(dt, bd, br, 2);
    tfc_tensor *c = tfc_matmul(ctx, a, b, ta, tb, &st);
    CHECK_OK(&st);
    REQUIRE(c);
    int rc = tfc_tensor_rank(c), brank = rc - 2;
    int64_t m = tfc_tensor_dim(c, -2), n = tfc_tensor_dim(c, -1), nb = m * n > 0 ? tfc_tensor_num_elements(c) / (m * n) : 0;
    int bad = 0;
    for (int64_t bi = 0; bi < nb && !bad; bi++) {
        int64_t bidx[TFC_MAX_RANK], r = bi;
        for (int d = brank - 1; d >= 0; d--) bidx[d] = r % tfc_tensor_dim(c, d), r /= tfc_tensor_dim(c, d);
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j++) {
                double want = reference(a, b, ta, tb, bidx, brank, i, j);
                double got = tfc_tensor_get_f64(c, (bi * m + i) * n + j);
                if (!(fabs(got - want) <= tol * (1 + fabs(want))) && !bad++)
                    fprintf(stderr, "%s matmul [%lld,%lld,%lld]: %g, want %g\n", tfc_dtype_name(dt), (long long)bi,
                            (long long)i, (long long)j, got, want);
            }
    }
    tfc_test_checks++;
    tfc_test_failures += bad != 0;
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    tfc_tensor_unref(c);
}

static void test_products(void) {
    const tfc_dtype dts[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT32, TFC_INT64};
    const double tol[] = {1e-5, 1e-12, 1e-2, 2e-2, 0, 0};
    for (int k = 0; k < 6; k++) {
        for (int t = 0; t < 4; t++) {
            bool ta = t & 1, tb = t & 2;
            int64_t a2[2] = {ta ? 37 : 5, ta ? 5 : 37}, b2[2] = {tb ? 9 : 37, tb ? 37 : 9};
            check_product(dts[k], a2, 2, b2, 2, ta, tb, tol[k]);
            int64_t a4[4] = {3, 1, a2[0], a2[1]}, b3[3] = {4, b2[0], b2[1]};
            check_product(dts[k], a4, 4, b3, 3, ta, tb, tol[k]); /* batch [3,1] x [4] -> [3,4] */
        }
        int64_t many_a[3] = {300, 4, 6}, many_b[3] = {300, 6, 3}; /* many small products across the pool */
        check_product(dts[k], many_a, 3, many_b, 3, false, false, tol[k]);
        int64_t big_a[2] = {150, 200}, big_b[2] = {120, 200}; /* OpenBLAS threads */
        check_product(dts[k], big_a, 2, big_b, 2, false, true, tol[k] * 4);
    }
    const tfc_dtype small[] = {TFC_INT8, TFC_UINT8, TFC_INT16};
    for (int k = 0; k < 3; k++) {
        int64_t a3[3] = {2, 3, 2}, b3[3] = {2, 2, 4};
        check_product(small[k], a3, 3, b3, 3, false, false, 0);
    }
}

static void test_int_wrap(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int32_t a[2] = {65536, 65536}, b[2] = {65536, 3};
    int64_t ad[2] = {1, 2}, bd[2] = {2, 1};
    tfc_tensor *x = tfc_tensor_from_data(TFC_INT32, ad, 2, a, 8, &st), *y = tfc_tensor_from_data(TFC_INT32, bd, 2, b, 8, &st);
    tfc_tensor *c = tfc_matmul(ctx, x, y, false, false, &st);
    REQUIRE(c);
    CHECK(((const int32_t *)tfc_tensor_data(c))[0] == 196608); /* 2^32 wraps to 0, plus 3 * 65536 */
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_tensor_unref(c);
}

static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t ad[2] = {2, 3}, bd[2] = {4, 3}, v[1] = {3};
    tfc_tensor *a = filled(TFC_FLOAT, ad, 2, 1), *b = filled(TFC_FLOAT, bd, 2, 2), *c = filled(TFC_FLOAT, v, 1, 3);
    CHECK(!tfc_matmul(ctx, a, b, false, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Matrix size-incompatible: In[0]: [2,3], In[1]: [4,3]") != NULL);
    tfc_tensor *ok = tfc_matmul(ctx, a, b, false, true, &st);
    CHECK_OK(&st);
    CHECK(ok && tfc_tensor_dim(ok, 0) == 2 && tfc_tensor_dim(ok, 1) == 4);
    CHECK(!tfc_matmul(ctx, c, b, false, false, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "ndims must be >= 2") != NULL);
    tfc_tensor *ts[] = {a, b, c, ok};
    for (int i = 0; i < 4; i++) tfc_tensor_unref(ts[i]);
}

/* d/dA sum(W * (A B)) = W B^T and d/dB = A^T W, also through broadcast batch dims (summed). */
static void test_gradients(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    int64_t ad[3] = {2, 3, 4}, bd[2] = {4, 5};
    tfc_tensor *a = filled(TFC_DOUBLE, ad, 3, 5), *b = filled(TFC_DOUBLE, bd, 2, 6);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, a);
    tfc_tape_watch(tape, b);
    tfc_tensor *c = tfc_matmul(ctx, a, b, false, false, &st);
    REQUIRE(c);
    tfc_tensor *g[2] = {0};
    REQUIRE(tfc_tape_gradient(tape, c, (tfc_tensor *[]){a, b}, 2, NULL, 0, TFC_UNCONNECTED_NONE, g, &st));
    REQUIRE(g[0] && g[1]);
    CHECK(tfc_shape_equal(tfc_tensor_shape(g[0]), tfc_tensor_shape(a)));
    CHECK(tfc_shape_equal(tfc_tensor_shape(g[1]), tfc_tensor_shape(b)));
    /* with W = ones: dA[b,i,q] = sum_j B[q,j]; dB[q,j] = sum_{b,i} A[b,i,q] */
    for (int64_t bi = 0; bi < 2; bi++)
        for (int64_t i = 0; i < 3; i++)
            for (int64_t q = 0; q < 4; q++) {
                double want = 0;
                for (int64_t j = 0; j < 5; j++) want += tfc_tensor_get_f64(b, q * 5 + j);
                CHECK_NEAR(tfc_tensor_get_f64(g[0], (bi * 3 + i) * 4 + q), want, 1e-12);
            }
    for (int64_t q = 0; q < 4; q++)
        for (int64_t j = 0; j < 5; j++) {
            double want = 0;
            for (int64_t r = 0; r < 6; r++) want += tfc_tensor_get_f64(a, r * 4 + q);
            CHECK_NEAR(tfc_tensor_get_f64(g[1], q * 5 + j), want, 1e-12);
        }
    tfc_tape_free(tape);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    tfc_scope_end(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_products();
    test_int_wrap();
    test_errors();
    test_gradients();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
