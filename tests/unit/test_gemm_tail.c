/* tfc_sgemm's tail tiles (gemm_kern.inc: the last rows of a product whose m is not a multiple of MR run a
 * 2-, 4- or 8-row tile): the rows of a product with a tail are bit for bit those of the same rows inside a
 * product of whole MR-row tiles (beta 0, with and without a fused bias + activation), for every tail size
 * 1 .. MR-1, short and long k, both transposes, wide and narrow tiles, every kernel set this CPU has, on
 * one thread and on the pool, also from an A of exactly the product's rows (tails read A in place); and the
 * MLP's shapes ([128, 784] x [784, 128], [128, 10] x [1600, 10]^T)
 * against float64. */
#include "kernels/cpu/gemm.h"
#include "tfc_test.h"

static uint32_t rng = 4242u;
static float uniform(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return (float)(rng >> 8) / 8388608.0f - 1.0f;
}

/* A: [mbig, k] (or [k, mbig] transposed). C_small = A[0:m] op(B), C_big = A op(B) with mbig a multiple of
 * the tile rows: rows 0 .. m of both must hold the same bits. */
static bool same_rows(const char *isa, bool ta, bool tb, int64_t m, int64_t mbig, int64_t n, int64_t k, bool ep,
                      tfc_threadpool *pool) {
    const int64_t lda = ta ? mbig : k, ldb = tb ? k : n;
    float *a = malloc((size_t)(mbig * k) * sizeof(float)), *b = malloc((size_t)(n * k) * sizeof(float));
    float *cs = malloc((size_t)(m * n) * sizeof(float)), *cb = malloc((size_t)(mbig * n) * sizeof(float));
    float *bias = malloc((size_t)n * sizeof(float));
    REQUIRE(a && b && cs && cb && bias);
    for (int64_t i = 0; i < mbig * k; i++) a[i] = uniform();
    for (int64_t i = 0; i < n * k; i++) b[i] = uniform();
    for (int64_t j = 0; j < n; j++) bias[j] = uniform();
    tfc_epilogue e = {.bias = bias, .act = TFC_EPI_RELU};
    /* the small product reads the same A: its first m rows (a transposed A keeps the big lda) */
    if (ep) {
        tfc_sgemm_ep(ta, tb, m, n, k, a, lda, b, ldb, cs, n, &e, pool);
        tfc_sgemm_ep(ta, tb, mbig, n, k, a, lda, b, ldb, cb, n, &e, pool);
    } else {
        tfc_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, cs, n, pool);
        tfc_sgemm(ta, tb, mbig, n, k, 1.0f, a, lda, b, ldb, 0.0f, cb, n, pool);
    }
    bool ok = memcmp(cs, cb, (size_t)(m * n) * sizeof(float)) == 0;
    if (!ok)
        fprintf(stderr, "%s ta=%d tb=%d m=%lld (of %lld) n=%lld k=%lld ep=%d threads=%d: rows differ\n", isa, ta, tb,
                (long long)m, (long long)mbig, (long long)n, (long long)k, ep, tfc_threadpool_size(pool));
    CHECK(ok);
    /* the same rows from an A of exactly m rows (transposed: [k, m], lda m): tail tiles that read A in place
     * must stay inside it (AddressSanitizer builds catch a read past its end) */
    float *ae = malloc((size_t)(m * k) * sizeof(float));
    REQUIRE(ae);
    for (int64_t i = 0; i < m; i++)
        for (int64_t p = 0; p < k; p++) ae[ta ? p * m + i : i * k + p] = ta ? a[p * lda + i] : a[i * lda + p];
    memset(cs, 0, (size_t)(m * n) * sizeof(float));
    if (ep)
        tfc_sgemm_ep(ta, tb, m, n, k, ae, ta ? m : k, b, ldb, cs, n, &e, pool);
    else
        tfc_sgemm(ta, tb, m, n, k, 1.0f, ae, ta ? m : k, b, ldb, 0.0f, cs, n, pool);
    bool exact = memcmp(cs, cb, (size_t)(m * n) * sizeof(float)) == 0;
    if (!exact)
        fprintf(stderr, "%s ta=%d tb=%d m=%lld n=%lld k=%lld ep=%d: rows from an exact-size A differ\n", isa, ta, tb,
                (long long)m, (long long)n, (long long)k, ep);
    CHECK(exact);
    ok = ok && exact;
    free(ae);
    free(a);
    free(b);
    free(cs);
    free(cb);
    free(bias);
    return ok;
}

static void against_f64(bool tb, int64_t m, int64_t n, int64_t k, tfc_threadpool *pool) {
    float *a = malloc((size_t)(m * k) * sizeof(float)), *b = malloc((size_t)(n * k) * sizeof(float));
    float *c = malloc((size_t)(m * n) * sizeof(float));
    REQUIRE(a && b && c);
    for (int64_t i = 0; i < m * k; i++) a[i] = uniform();
    for (int64_t i = 0; i < n * k; i++) b[i] = uniform();
    tfc_sgemm(false, tb, m, n, k, 1.0f, a, k, b, tb ? k : n, 0.0f, c, n, pool);
    double worst = 0;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, sa = 0;
            for (int64_t p = 0; p < k; p++) {
                double x = (double)a[i * k + p] * (double)(tb ? b[j * k + p] : b[p * n + j]);
                s += x;
                sa += fabs(x);
            }
            double d = fabs(s - c[i * n + j]) / ((double)k * 1.2e-7 * sa + 1e-30);
            if (d > worst) worst = d;
        }
    CHECK(worst <= 1.0); /* within k * eps * sum |products| */
    free(a);
    free(b);
    free(c);
}

int main(void) {
    tfc_threadpool *pool = tfc_threadpool_new(2);
    REQUIRE(pool);
    against_f64(false, 128, 128, 784, NULL);
    against_f64(true, 128, 1600, 10, pool);
    against_f64(true, 127, 33, 5, NULL);
    const char *isas[] = {"avx512", "avx2", "baseline"};
    const int tile_rows[] = {14, 12, 6}; /* a common multiple of every MR of the set (avx2: 6 and 12) */
    for (int s = 0; s < 3; s++) {
        if (!tfc_sgemm_force_isa(isas[s])) continue;
        const int64_t mr = s == 1 ? 12 : tile_rows[s];
        bool ok = true;
        /* the MLP's products (m = 128: 9 x 14 + 2 with the AVX-512 tiles), A read in place */
        ok = same_rows(isas[s], false, false, 128, 140, 128, 784, true, NULL) &&
             same_rows(isas[s], true, false, 128, 140, 10, 128, false, NULL) &&
             same_rows(isas[s], false, true, 128, 140, 128, 10, false, NULL) &&
             same_rows(isas[s], false, false, 128, 140, 10, 128, false, NULL);
        for (int64_t t = 1; t < mr && ok; t++) {
            const int64_t mbig = 3 * mr, m = 2 * mr + t; /* two whole tiles, then a tail of t rows */
            static const int64_t ns[] = {1, 7, 16, 33, 1600}, ks[] = {1, 10, 131};
            for (int r = 0; r < 8 && ok; r++) {
                const int64_t n = ns[(t + r) % 5], k = ks[r % 3];
                ok = same_rows(isas[s], r & 1, (r >> 1) & 1, m, mbig, n, k, (r >> 2) & 1, r % 3 ? NULL : pool);
            }
        }
    }
    CHECK(tfc_sgemm_force_isa(NULL));
    tfc_threadpool_free(pool);
    TEST_MAIN_END();
}
