/* tfc_sgemm (src/kernels/cpu/gemm.c) against a float64 triple loop: every kernel set this CPU has, every
 * transpose, alpha/beta (beta 0 must not read C), leading dimensions past the matrix (their padding holds
 * NaN, which must never be read; C's padding must stay untouched), sizes around the tile and block edges,
 * and the row, column and k splits across 1, 2 and 3 threads; the implicit-GEMM convolution core
 * (tfc_sgemm_conv) against a direct loop. */
#include "kernels/cpu/gemm.h"
#include "tfc_test.h"

static uint32_t rng = 12345u;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static float uniform(void) { return (float)(next_u32() >> 8) / 8388608.0f - 1.0f; } /* [-1, 1) */
static int64_t pick(const int64_t *v, int n) { return v[next_u32() % (uint32_t)n]; }

/* Runs one product and checks every element of C (and C's padding). Returns false on the first bad
 * product so that one bug does not print thousands of lines. */
static bool check_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, float beta, int64_t pad,
                      tfc_threadpool *pool, const char *isa) {
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const int64_t lda = ac + pad, ldb = bc + pad, ldc = n + pad;
    float *a = malloc((size_t)(ar * lda + 1) * sizeof(float)), *b = malloc((size_t)(br * ldb + 1) * sizeof(float));
    float *c = malloc((size_t)(m * ldc + 1) * sizeof(float));
    double *want = malloc((size_t)(m * n + 1) * sizeof(double)), *bound = malloc((size_t)(m * n + 1) * sizeof(double));
    REQUIRE(a && b && c && want && bound);
    for (int64_t i = 0; i < ar * lda; i++) a[i] = i % lda < ac ? uniform() : NAN;
    for (int64_t i = 0; i < br * ldb; i++) b[i] = i % ldb < bc ? uniform() : NAN;
    for (int64_t i = 0; i < m * ldc; i++) c[i] = i % ldc < n ? (beta == 0.0f ? NAN : uniform()) : -777.0f;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = 0, sa = 0;
            for (int64_t p = 0; p < k; p++) {
                double x = ta ? a[p * lda + i] : a[i * lda + p], y = tb ? b[j * ldb + p] : b[p * ldb + j];
                s += x * y;
                sa += fabs(x * y);
            }
            double c0 = beta == 0.0f ? 0.0 : c[i * ldc + j];
            want[i * n + j] = alpha * s + beta * c0;
            /* float32 summation of k products: |error| <= k * eps * sum |products| (plus the final scaling) */
            bound[i * n + j] = (double)(k + 4) * 1.2e-7 * (fabs(alpha) * sa + fabs(beta * c0)) + 1e-30;
        }
    tfc_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
    bool ok = true;
    for (int64_t i = 0; i < m && ok; i++)
        for (int64_t j = 0; j < ldc && ok; j++) {
            double got = c[i * ldc + j];
            bool good = j < n ? fabs(got - want[i * n + j]) <= bound[i * n + j] : got == -777.0f;
            if (!good) {
                fprintf(stderr,
                        "%s ta=%d tb=%d m=%lld n=%lld k=%lld alpha=%g beta=%g pad=%lld threads=%d: C[%lld,%lld] = %.9g, "
                        "expected %.9g\n",
                        isa, ta, tb, (long long)m, (long long)n, (long long)k, alpha, beta, (long long)pad,
                        tfc_threadpool_size(pool), (long long)i, (long long)j, got, j < n ? want[i * n + j] : -777.0);
                ok = false;
            }
        }
    CHECK(ok);
    free(a);
    free(b);
    free(c);
    free(want);
    free(bound);
    return ok;
}

static const int64_t small_sizes[] = {1, 2, 3, 5, 7, 8, 9, 13, 14, 15, 16, 17, 23, 28, 29, 31, 32, 33, 47, 48, 63, 64, 65};
static const int64_t mid_sizes[] = {97, 127, 128, 129, 191, 256, 257, 263, 300, 331};
static const float alphas[] = {1.0f, -0.5f, 2.0f};
static const float betas[] = {0.0f, 1.0f, -1.5f};

static void run_isa(const char *isa, tfc_threadpool *pool2, tfc_threadpool *pool3) {
    if (!tfc_sgemm_force_isa(isa)) {
        printf("gemm: %s not available here, skipped\n", isa);
        return;
    }
    CHECK(!strcmp(tfc_sgemm_isa(), isa));
    tfc_threadpool *pools[] = {NULL, pool2, pool3};
    bool ok = true;
    /* every transpose with every small shape class */
    for (int t = 0; t < 4 && ok; t++)
        for (int r = 0; r < 40 && ok; r++) {
            int64_t m = pick(small_sizes, 23), n = pick(small_sizes, 23), k = pick(small_sizes, 23);
            ok = check_one(t & 1, t >> 1, m, n, k, alphas[r % 3], betas[(r / 3) % 3], r % 4 == 0 ? 3 : 0, NULL, isa);
        }
    /* tile and block edges, leading dimensions, thread splits */
    for (int r = 0; r < 24 && ok; r++) {
        int64_t m = pick(mid_sizes, 10), n = r % 3 ? pick(small_sizes, 23) : pick(mid_sizes, 10), k = pick(mid_sizes, 10);
        ok = check_one(r & 1, (r >> 1) & 1, m, n, k, alphas[r % 3], betas[(r / 2) % 3], r % 5 == 0 ? 7 : 0, pools[r % 3],
                       isa);
    }
    /* shapes of the workloads: conv forward (many rows, few columns), backprop-input, filter gradient
     * (long k: split along k across threads), Dense layers, a large prime product */
    const struct { bool ta, tb; int64_t m, n, k; } shapes[] = {
        {0, 0, 2000, 32, 9},  {0, 1, 2000, 9, 32},   {1, 0, 9, 32, 6000},   {1, 0, 288, 64, 3000}, {0, 0, 1500, 64, 288},
        {0, 1, 700, 288, 64}, {0, 0, 128, 10, 1600}, {1, 0, 1600, 10, 128}, {0, 1, 128, 1600, 10}, {0, 0, 521, 523, 541},
        {1, 1, 263, 601, 700}, {0, 0, 1, 1000, 700}, {0, 0, 1000, 1, 700},  {1, 0, 1, 1, 5000},    {0, 1, 33, 2100, 17},
        {1, 1, 40, 30, 5000},   {0, 0, 600, 300, 400},
        /* one-row products (gemv.c): a Dense layer on one example, narrow and wide B, k past and below the
         * 4-row unroll, B transposed, A a column */
        {0, 0, 1, 10, 1600},    {0, 0, 1, 16, 3},      {0, 0, 1, 3, 2},       {0, 0, 1, 17, 9},       {0, 0, 1, 70, 33},
        {0, 1, 1, 10, 1600},    {0, 1, 1, 7, 15},      {1, 0, 1, 13, 37},     {1, 1, 1, 9, 21},       {0, 0, 1, 130, 5},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && ok; s++)
        for (int p = 0; p < 3 && ok; p++)
            ok = check_one(shapes[s].ta, shapes[s].tb, shapes[s].m, shapes[s].n, shapes[s].k, p == 1 ? -0.5f : 1.0f,
                           p == 2 ? 0.5f : 0.0f, s % 4 == 1 ? 5 : 0, pools[p], isa);
    printf("gemm: %s %s\n", isa, ok ? "ok" : "FAILED");
}

/* tfc_sgemm_conv against a direct loop: x [n, hp, wp, c] allocated to its exact size (ASan sees any read
 * past it), strides, row dilation, output channel counts around the tile widths, pixel counts that end in a
 * partial tile. */
static bool check_conv(int64_t n, int64_t hp, int64_t wp, int64_t c, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                       int64_t dh, int64_t cout, bool flip, tfc_threadpool *pool, const char *isa) {
    const int64_t oh = (hp - (kh - 1) * dh - 1) / sh + 1, ow = (wp - kw) / sw + 1, P = n * oh * ow, K = kh * kw * c;
    tfc_gemm_conv cv = {.hp = hp, .wp = wp, .c = c, .sh = sh, .sw = sw, .n = n, .oh = oh, .ow = ow, .kh = kh,
                        .kwc = kw * c, .seg = dh * wp * c, .cout = cout, .flip = flip};
    /* the filter gradient may read a little past the input: exactly as far as tfc_sgemm_conv_reach says */
    int64_t len = n * hp * wp * c, reach = (int64_t)tfc_sgemm_conv_reach(&cv), alloc = reach > len ? reach : len;
    float *x = malloc((size_t)alloc * sizeof(float)), *f = malloc((size_t)(K * cout) * sizeof(float));
    float *y = malloc((size_t)(P * cout) * sizeof(float)), *dy = malloc((size_t)(P * cout) * sizeof(float));
    float *df = malloc((size_t)(K * cout) * sizeof(float));
    REQUIRE(x && f && y && dy && df);
    for (int64_t i = 0; i < alloc; i++) x[i] = i < len ? uniform() : NAN;
    for (int64_t i = 0; i < K * cout; i++) f[i] = uniform(), df[i] = NAN;
    for (int64_t i = 0; i < P * cout; i++) y[i] = NAN, dy[i] = uniform();
    cv.x = x, cv.f = f, cv.y = y;
    bool ok = tfc_sgemm_conv(&cv, pool);
    CHECK(ok == (strcmp(isa, "blas") != 0));
    CHECK(tfc_sgemm_conv_bwd_filter(&cv, dy, df, pool) == ok); /* (flip does not apply to it) */
    /* df[(i, j), o] = sum_q x[base(q) + i * seg + j] dy[q, o] */
    for (int64_t i = 0; i < kh && ok; i++)
        for (int64_t j = 0; j < kw * c && ok; j++)
            for (int64_t o = 0; o < cout && ok; o++) {
                double s = 0, sa = 0;
                for (int64_t q = 0; q < P; q++) {
                    const int64_t b = q / (oh * ow), r = q / ow % oh, col = q % ow;
                    double v = (double)x[((b * hp + r * sh + i * dh) * wp + col * sw) * c + j] * dy[q * cout + o];
                    s += v;
                    sa += fabs(v);
                }
                double got = df[(i * kw * c + j) * cout + o];
                if (!(fabs(got - s) <= (double)(P + 4) * 1.2e-7 * sa + 1e-30)) {
                    fprintf(stderr, "%s conv filter gradient n=%lld hp=%lld wp=%lld c=%lld k=%lldx%lld s=%lld,%lld dh=%lld cout=%lld: df[%lld,%lld] = %.9g, expected %.9g\n",
                            isa, (long long)n, (long long)hp, (long long)wp, (long long)c, (long long)kh, (long long)kw,
                            (long long)sh, (long long)sw, (long long)dh, (long long)cout, (long long)(i * kw * c + j),
                            (long long)o, got, s);
                    ok = false;
                }
            }
    for (int64_t q = 0; q < P && ok; q++) {
        const int64_t b = q / (oh * ow), r = q / ow % oh, col = q % ow;
        for (int64_t o = 0; o < cout && ok; o++) {
            double s = 0, sa = 0;
            for (int64_t i = 0; i < kh; i++)
                for (int64_t j = 0; j < kw * c; j++) {
                    /* flip: f is [kh, kw, cout, c], used flipped with its channel dims swapped */
                    const int64_t w = j / c, ci = j % c;
                    const float fv = flip ? f[(((kh - 1 - i) * kw + (kw - 1 - w)) * cout + o) * c + ci] : f[(i * kw * c + j) * cout + o];
                    double v = (double)x[((b * hp + r * sh + i * dh) * wp + col * sw) * c + j] * fv;
                    s += v;
                    sa += fabs(v);
                }
            if (!(fabs(y[q * cout + o] - s) <= (double)(K + 4) * 1.2e-7 * sa + 1e-30)) {
                fprintf(stderr, "%s conv n=%lld hp=%lld wp=%lld c=%lld k=%lldx%lld s=%lld,%lld dh=%lld cout=%lld: y[%lld,%lld] = %.9g, expected %.9g\n",
                        isa, (long long)n, (long long)hp, (long long)wp, (long long)c, (long long)kh, (long long)kw,
                        (long long)sh, (long long)sw, (long long)dh, (long long)cout, (long long)q, (long long)o,
                        y[q * cout + o], s);
                ok = false;
            }
        }
    }
    if (strcmp(isa, "blas")) CHECK(ok);
    free(x);
    free(f);
    free(y);
    free(dy);
    free(df);
    return ok || !strcmp(isa, "blas");
}

static void run_conv(const char *isa, tfc_threadpool *pool2, tfc_threadpool *pool3) {
    if (!tfc_sgemm_force_isa(isa)) return;
    tfc_threadpool *pools[] = {NULL, pool2, pool3};
    static const int64_t couts[] = {1, 5, 12, 16, 17, 31, 32, 33, 40, 64, 70};
    bool ok = check_conv(2, 13, 13, 32, 3, 3, 1, 1, 1, 64, false, pool2, isa) && /* the demo's second layer, batch 2 */
              check_conv(3, 28, 28, 1, 3, 3, 1, 1, 1, 32, false, pool3, isa) &&  /* its first */
              check_conv(9, 12, 12, 24, 3, 3, 1, 1, 1, 20, false, pool2, isa) && /* long enough to split the gradient */
              check_conv(2, 6, 6, 64, 3, 3, 1, 1, 1, 300, false, NULL, isa) &&   /* filter beyond L2: blocked */
              check_conv(2, 7, 8, 40, 3, 3, 1, 1, 1, 70, true, pool2, isa);      /* a backprop-input filter */
    for (int r = 0; r < 30 && ok; r++) {
        int64_t kh = 1 + next_u32() % 4, kw = 1 + next_u32() % 4, sh = 1 + next_u32() % 2, sw = 1 + next_u32() % 3;
        int64_t dh = 1 + next_u32() % 2, c = 1 + next_u32() % 20, cout = couts[next_u32() % 11];
        int64_t hp = (kh - 1) * dh + 1 + next_u32() % 9, wp = kw + next_u32() % 17, n = 1 + next_u32() % 3;
        ok = check_conv(n, hp, wp, c, kh, kw, sh, sw, dh, cout, r % 4 == 3, pools[r % 3], isa);
    }
    printf("gemm conv: %s %s\n", isa, ok ? "ok" : "FAILED");
}

/* k == 0 and alpha == 0 only scale C by beta; empty outputs touch nothing. */
static void degenerate(void) {
    float a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4}, c[4] = {1, NAN, 3, 4};
    tfc_sgemm(false, false, 2, 2, 0, 1.0f, a, 2, b, 2, 0.0f, c, 2, NULL);
    for (int i = 0; i < 4; i++) CHECK(c[i] == 0.0f);
    float d[4] = {1, 2, 3, 4};
    tfc_sgemm(false, false, 2, 2, 2, 0.0f, a, 2, b, 2, 2.0f, d, 2, NULL);
    CHECK(d[0] == 2.0f && d[1] == 4.0f && d[2] == 6.0f && d[3] == 8.0f);
    tfc_sgemm(false, false, 0, 2, 2, 1.0f, a, 2, b, 2, 0.0f, d, 2, NULL);
    tfc_sgemm(false, false, 2, 0, 2, 1.0f, a, 2, b, 2, 0.0f, d, 2, NULL);
    CHECK(d[0] == 2.0f && d[3] == 8.0f);
    /* 2x2 by hand: [1 2; 3 4] [1 2; 3 4] = [7 10; 15 22] */
    float e[4] = {0};
    tfc_sgemm(false, false, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, e, 2, NULL);
    CHECK(e[0] == 7.0f && e[1] == 10.0f && e[2] == 15.0f && e[3] == 22.0f);
    /* A^T B^T = (BA)^T = [7 15; 10 22] */
    tfc_sgemm(true, true, 2, 2, 2, 1.0f, a, 2, b, 2, 0.0f, e, 2, NULL);
    CHECK(e[0] == 7.0f && e[1] == 15.0f && e[2] == 10.0f && e[3] == 22.0f);
}

int main(void) {
    tfc_threadpool *pool2 = tfc_threadpool_new(2), *pool3 = tfc_threadpool_new(3);
    REQUIRE(pool2 && pool3);
    printf("gemm: automatic choice %s\n", tfc_sgemm_isa());
    degenerate();
    const char *isas[] = {"avx512", "avx2", "baseline", "blas"};
    for (int i = 0; i < 4; i++) {
        run_isa(isas[i], pool2, pool3);
        run_conv(isas[i], pool2, pool3);
    }
    CHECK(tfc_sgemm_force_isa(NULL));
    CHECK(!tfc_sgemm_force_isa("no-such-isa"));
    tfc_threadpool_free(pool2);
    tfc_threadpool_free(pool3);
    TEST_MAIN_END();
}
