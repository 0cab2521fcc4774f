/* The fused-op epilogue in the GEMM kernels (src/kernels/cpu/gemm*.c, epilogue.h): for every kernel set
 * this CPU has, tfc_sgemm_ep and tfc_sgemm_conv with an epilogue must give bit for bit what the plain
 * product followed by tfc_epilogue_f32 (the separate BiasAdd and activation) gives: every activation and
 * none, full tiles, masked column tails and element-wise edge tiles, products of several k blocks, products
 * split by rows, columns and k across threads, leading dimensions past the matrix (C's padding must stay
 * untouched), NaN inputs (propagated by Relu and Relu6); convolutions whose k runs in several groups and
 * whose filter is too large for L2 (the blocked loop). */
#include "kernels/cpu/gemm.h"
#include "tfc_test.h"

static uint32_t rng = 4242u;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static float uniform(void) { return (float)(next_u32() >> 8) / 8388608.0f - 1.0f; } /* [-1, 1) */

static const tfc_epilogue epilogues[] = {
    {.act = TFC_EPI_NONE},
    {.act = TFC_EPI_RELU},
    {.act = TFC_EPI_RELU6},
    {.act = TFC_EPI_ELU},
    {.act = TFC_EPI_LEAKY_RELU, .alpha = 0.2f},
    {.act = TFC_EPI_LEAKY_RELU, .alpha = -0.3f},
};
#define N_EPI (int)(sizeof epilogues / sizeof *epilogues)

/* Same float, NaN equal to NaN. */
static bool same(float a, float b) { return (a != a && b != b) || !memcmp(&a, &b, sizeof a); }

static bool check_product(bool ta, bool tb, int64_t m, int64_t n, int64_t k, int64_t pad, int e, bool with_nan,
                          tfc_threadpool *pool, const char *isa) {
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const int64_t lda = ac + pad, ldb = bc + pad, ldc = n + pad;
    float *a = malloc((size_t)(ar * lda + 1) * sizeof(float)), *b = malloc((size_t)(br * ldb + 1) * sizeof(float));
    float *c1 = malloc((size_t)(m * ldc + 1) * sizeof(float)), *c2 = malloc((size_t)(m * ldc + 1) * sizeof(float));
    float *bias = malloc((size_t)(n + 1) * sizeof(float));
    REQUIRE(a && b && c1 && c2 && bias);
    /* scaled so that Relu6 clips some outputs */
    for (int64_t i = 0; i < ar * lda; i++) a[i] = 4 * uniform();
    for (int64_t i = 0; i < br * ldb; i++) b[i] = uniform();
    for (int64_t i = 0; i < n; i++) bias[i] = 2 * uniform();
    if (with_nan && ar * ac > 0) a[(next_u32() % (uint32_t)ar) * lda + next_u32() % (uint32_t)ac] = NAN;
    for (int64_t i = 0; i < m * ldc; i++) c1[i] = c2[i] = i % ldc < n ? NAN : -777.0f;
    tfc_epilogue ep = epilogues[e];
    ep.bias = bias;
    tfc_sgemm_ep(ta, tb, m, n, k, a, lda, b, ldb, c1, ldc, &ep, pool);
    tfc_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c2, ldc, pool);
    tfc_epilogue_f32(&ep, c2, m, n, ldc, 0);
    bool ok = true;
    for (int64_t i = 0; i < m * ldc && ok; i++)
        if (!same(c1[i], c2[i]) || (i % ldc >= n && c1[i] != -777.0f)) {
            fprintf(stderr, "%s ta=%d tb=%d m=%lld n=%lld k=%lld pad=%lld epilogue %d threads=%d: C[%lld,%lld] = %.9g, separate ops %.9g\n",
                    isa, ta, tb, (long long)m, (long long)n, (long long)k, (long long)pad, e, tfc_threadpool_size(pool),
                    (long long)(i / ldc), (long long)(i % ldc), c1[i], c2[i]);
            ok = false;
        }
    CHECK(ok);
    free(a);
    free(b);
    free(c1);
    free(c2);
    free(bias);
    return ok;
}

/* The implicit-GEMM convolution with an epilogue against the plain one then tfc_epilogue_f32 (x [n, hp,
 * wp, c] with its padding in it, f [kh, kw * c, cout]). */
static bool check_conv(int64_t n, int64_t hp, int64_t wp, int64_t c, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                       int64_t cout, int e, tfc_threadpool *pool, const char *isa) {
    const int64_t oh = (hp - kh) / sh + 1, ow = (wp - kw) / sw + 1, P = n * oh * ow, K = kh * kw * c;
    const int64_t len = n * hp * wp * c;
    float *x = malloc((size_t)len * sizeof(float)), *f = malloc((size_t)(K * cout) * sizeof(float));
    float *y1 = malloc((size_t)(P * cout) * sizeof(float)), *y2 = malloc((size_t)(P * cout) * sizeof(float));
    float *bias = malloc((size_t)cout * sizeof(float));
    REQUIRE(x && f && y1 && y2 && bias);
    for (int64_t i = 0; i < len; i++) x[i] = uniform();
    const float fs = 4.0f / sqrtf((float)K); /* outputs of a few units, some past 6 */
    for (int64_t i = 0; i < K * cout; i++) f[i] = fs * uniform();
    for (int64_t i = 0; i < cout; i++) bias[i] = uniform();
    for (int64_t i = 0; i < P * cout; i++) y1[i] = y2[i] = NAN;
    tfc_epilogue ep = epilogues[e];
    ep.bias = bias;
    tfc_gemm_conv cv = {.x = x, .hp = hp, .wp = wp, .c = c, .sh = sh, .sw = sw, .n = n, .oh = oh, .ow = ow, .kh = kh,
                        .kwc = kw * c, .seg = wp * c, .f = f, .cout = cout, .y = y1, .ep = &ep};
    bool ran = tfc_sgemm_conv(&cv, pool);
    cv.y = y2;
    cv.ep = NULL;
    CHECK(tfc_sgemm_conv(&cv, pool) == ran);
    CHECK(ran == (strcmp(isa, "blas") != 0)); /* the blas set has no implicit convolution: callers use im2col */
    bool ok = true;
    if (ran) {
        tfc_epilogue_f32(&ep, y2, P, cout, cout, 0);
        for (int64_t i = 0; i < P * cout && ok; i++)
            if (!same(y1[i], y2[i])) {
                fprintf(stderr, "%s conv n=%lld hp=%lld wp=%lld c=%lld k=%lldx%lld s=%lld,%lld cout=%lld epilogue %d: y[%lld,%lld] = %.9g, separate ops %.9g\n",
                        isa, (long long)n, (long long)hp, (long long)wp, (long long)c, (long long)kh, (long long)kw,
                        (long long)sh, (long long)sw, (long long)cout, e, (long long)(i / cout), (long long)(i % cout),
                        y1[i], y2[i]);
                ok = false;
            }
    }
    CHECK(ok);
    free(x);
    free(f);
    free(y1);
    free(y2);
    free(bias);
    return ok;
}

static const int64_t sizes[] = {1, 3, 5, 11, 12, 13, 14, 15, 16, 17, 24, 28, 29, 31, 32, 33, 40, 47, 64, 65};

static void run_isa(const char *isa, tfc_threadpool *pool2, tfc_threadpool *pool3) {
    if (!tfc_sgemm_force_isa(isa)) {
        printf("gemm epilogue: %s not available here, skipped\n", isa);
        return;
    }
    tfc_threadpool *pools[] = {NULL, pool2, pool3};
    bool ok = true;
    /* every epilogue and transpose on tile-edge sizes */
    for (int r = 0; r < 96 && ok; r++) {
        int64_t m = sizes[next_u32() % 20], n = sizes[next_u32() % 20], k = sizes[next_u32() % 20];
        ok = check_product(r & 1, (r >> 1) & 1, m, n, k, r % 5 == 0 ? 3 : 0, r % N_EPI, r % 7 == 0, NULL, isa);
    }
    /* the workloads' shapes and the splits: conv-like (many rows), Dense layers, k in several blocks (k 3000),
     * k split across threads (a small output with a long k), columns split, k = 0 (the bias alone) */
    const struct { bool ta, tb; int64_t m, n, k; } shapes[] = {
        {0, 0, 2000, 32, 9}, {0, 0, 128, 10, 1600}, {0, 0, 128, 128, 784}, {0, 0, 37, 40, 3000},
        {0, 0, 32, 32, 4096}, {1, 0, 40, 30, 5000}, {0, 1, 9, 700, 64},   {0, 0, 300, 300, 300},
        {0, 0, 5, 7, 0},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes && ok; s++)
        for (int p = 0; p < 3 && ok; p++)
            ok = check_product(shapes[s].ta, shapes[s].tb, shapes[s].m, shapes[s].n, shapes[s].k, s % 3 == 1 ? 5 : 0,
                               (int)(s + (size_t)p) % N_EPI, p == 2, pools[p], isa);
    /* implicit-GEMM convolutions: the demo's layers, partial tiles and column tails, strides, k in several
     * groups (kw * c > 2048), and a filter too large for L2 (300 output channels: the blocked loop) */
    for (int e = 0; e < N_EPI && ok; e++)
        ok = check_conv(2, 13, 13, 32, 3, 3, 1, 1, 64, e, pool2, isa) && check_conv(3, 28, 28, 1, 3, 3, 1, 1, 32, e, pool3, isa) &&
             check_conv(2, 7, 9, 5, 3, 3, 2, 1, 20, e, NULL, isa) && check_conv(1, 5, 6, 3, 2, 2, 1, 2, 17, e, pool2, isa) &&
             check_conv(1, 3, 3, 550, 2, 2, 1, 1, 5, e, NULL, isa) && check_conv(1, 3, 3, 800, 3, 3, 1, 1, 40, e, pool2, isa) &&
             check_conv(2, 6, 6, 64, 3, 3, 1, 1, 300, e, pool3, isa);
    printf("gemm epilogue: %s %s\n", isa, ok ? "ok" : "FAILED");
}

/* Float64 epilogue and the scalar activations against their definitions. */
static void scalar_forms(void) {
    CHECK(tfc_epi_act_scalar_f32(-0.0f, TFC_EPI_RELU, 0) == 0.0f && !signbit(tfc_epi_act_scalar_f32(-0.0f, TFC_EPI_RELU, 0)));
    CHECK(isnan(tfc_epi_act_scalar_f32(NAN, TFC_EPI_RELU, 0)) && isnan(tfc_epi_act_scalar_f32(NAN, TFC_EPI_RELU6, 0)));
    CHECK(tfc_epi_act_scalar_f32(7.5f, TFC_EPI_RELU6, 0) == 6.0f && tfc_epi_act_scalar_f32(-2.0f, TFC_EPI_RELU6, 0) == 0.0f);
    CHECK(tfc_epi_act_scalar_f32(-2.0f, TFC_EPI_LEAKY_RELU, 0.25f) == -0.5f);
    double y[6] = {-1, 0.5, 7, -3, 2, NAN}, bias[3] = {0.5, -1, 0};
    tfc_epilogue ep = {.bias = bias, .act = TFC_EPI_ELU};
    tfc_epilogue_f64(&ep, y, 2, 3, 3, 0);
    CHECK_NEAR(y[0], expm1(-0.5), 1e-15);
    CHECK_NEAR(y[1], expm1(-0.5), 1e-15);
    CHECK(y[2] == 7 && y[4] == 1 && isnan(y[5]));
    CHECK_NEAR(y[3], expm1(-2.5), 1e-15);
    float z[4] = {-1, 5, 9, NAN};
    tfc_epilogue e6 = {.act = TFC_EPI_RELU6};
    tfc_epilogue_f32(&e6, z, 1, 4, 4, 0);
    CHECK(z[0] == 0 && z[1] == 5 && z[2] == 6 && isnan(z[3]));
}

int main(void) {
    tfc_threadpool *pool2 = tfc_threadpool_new(2), *pool3 = tfc_threadpool_new(3);
    REQUIRE(pool2 && pool3);
    scalar_forms();
    const char *isas[] = {"avx512", "avx2", "baseline", "blas"};
    for (int i = 0; i < 4; i++) run_isa(isas[i], pool2, pool3);
    CHECK(tfc_sgemm_force_isa(NULL));
    tfc_threadpool_free(pool2);
    tfc_threadpool_free(pool3);
    TEST_MAIN_END();
}
