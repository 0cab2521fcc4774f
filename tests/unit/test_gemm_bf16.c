/* tfc_bgemm (src/kernels/cpu/gemm_bf16.c) against a float64 loop over the same bfloat16 values: the
 * vdpbf16ps path (where the CPU has AVX512_BF16) and the widening path, every transpose, accumulate or
 * overwrite (overwrite must not read C: it holds NaN), leading dimensions past the matrix (their padding holds
 * NaN, never read; C's padding stays untouched), sizes around the 14 x 32 tile and the k block, odd k, and
 * 1-3 threads. Products of bfloat16 values are exact in float32, so the only error is float32 summation:
 * within (k + 4) * eps * sum |products|. Also the array conversions against the scalar ones, bit for bit.
 *
 * `test_gemm_bf16 time` prints GFLOP/s of a 1024-cubed product in bfloat16 and float32 instead. */
#include <time.h>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_bf16.h"
#include "tfc_test.h"

static uint32_t rng = 777u;
static uint32_t next_u32(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}
static float uniform(void) { return (float)(next_u32() >> 8) / 8388608.0f - 1.0f; }
static uint16_t bf(float f) { return tfc_bfloat16_from_float(f).bits; }
static double f(uint16_t b) { return tfc_bfloat16_to_float((tfc_bfloat16){b}); }

static bool check_one(bool ta, bool tb, int64_t m, int64_t n, int64_t k, bool acc, int64_t pad, tfc_threadpool *pool,
                      const char *isa) {
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    const int64_t lda = ac + pad, ldb = bc + pad, ldc = n + pad;
    uint16_t *a = malloc((size_t)(ar * lda + 1) * 2), *b = malloc((size_t)(br * ldb + 1) * 2);
    float *c = malloc((size_t)(m * ldc + 1) * sizeof(float));
    double *want = malloc((size_t)(m * n + 1) * sizeof(double)), *bound = malloc((size_t)(m * n + 1) * sizeof(double));
    REQUIRE(a && b && c && want && bound);
    for (int64_t i = 0; i < ar * lda; i++) a[i] = bf(i % lda < ac ? uniform() * 4 : NAN);
    for (int64_t i = 0; i < br * ldb; i++) b[i] = bf(i % ldb < bc ? uniform() : NAN);
    for (int64_t i = 0; i < m * ldc; i++) c[i] = i % ldc < n ? (acc ? uniform() : NAN) : -777.0f;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            double s = acc ? c[i * ldc + j] : 0.0, sa = fabs(s);
            for (int64_t p = 0; p < k; p++) {
                double x = f(ta ? a[p * lda + i] : a[i * lda + p]), y = f(tb ? b[j * ldb + p] : b[p * ldb + j]);
                s += x * y;
                sa += fabs(x * y);
            }
            want[i * n + j] = s;
            bound[i * n + j] = (double)(k + 4) * 1.2e-7 * sa + 1e-30;
        }
    tfc_bgemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, acc, pool);
    bool ok = true;
    for (int64_t i = 0; i < m && ok; i++)
        for (int64_t j = 0; j < ldc && ok; j++) {
            double got = c[i * ldc + j];
            if (!(j < n ? fabs(got - want[i * n + j]) <= bound[i * n + j] : got == -777.0f)) {
                fprintf(stderr, "%s ta=%d tb=%d m=%lld n=%lld k=%lld acc=%d pad=%lld threads=%d: C[%lld,%lld] = %.9g, expected %.9g\n",
                        isa, ta, tb, (long long)m, (long long)n, (long long)k, acc, (long long)pad,
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

static const int64_t sizes[] = {1, 2, 3, 5, 13, 14, 15, 16, 17, 27, 28, 29, 31, 32, 33, 47, 63, 64, 65, 97};
static const int64_t ks[] = {1, 2, 3, 7, 8, 31, 64, 383, 384, 385, 767, 800};

static void run_isa(const char *isa, tfc_threadpool *pool2, tfc_threadpool *pool3) {
    if (!tfc_bgemm_force_isa(isa)) {
        printf("gemm_bf16: %s not available here, skipped\n", isa);
        return;
    }
    CHECK(!strcmp(tfc_bgemm_isa(), isa));
    tfc_threadpool *pools[] = {NULL, pool2, pool3};
    bool ok = true;
    for (int r = 0; r < 96 && ok; r++) {
        int64_t m = sizes[next_u32() % 20], n = sizes[next_u32() % 20], k = ks[next_u32() % 12];
        ok = check_one(r & 1, (r >> 1) & 1, m, n, k, (r >> 2) & 1, r % 5 == 0 ? 3 : 0, pools[r % 3], isa);
    }
    /* several A blocks per unit and several units per thread; a k of many blocks */
    const struct { bool ta, tb; int64_t m, n, k; } shapes[] = {
        {0, 0, 500, 70, 130}, {1, 0, 463, 129, 90}, {0, 1, 64, 300, 1000}, {1, 1, 30, 33, 1600}, {0, 0, 1, 1, 2001},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0] && ok; s++)
        ok = check_one(shapes[s].ta, shapes[s].tb, shapes[s].m, shapes[s].n, shapes[s].k, s & 1, 1, pools[s % 3], isa);
    printf("gemm_bf16: %s %s\n", isa, ok ? "ok" : "FAILED");
}

/* Array conversions against tfc_half/bfloat16 scalar ones, on every 16-bit pattern and on float32 values of
 * every class (normal, subnormal, halfway cases, overflow, inf, NaN). */
static void check_conversions(void) {
    enum { N = 65536 + 37 };
    uint16_t *bits = malloc(N * 2), *back = malloc(N * 2);
    float *fl = malloc(N * sizeof(float));
    REQUIRE(bits && back && fl);
    for (int h = 0; h < 2; h++) {
        for (int i = 0; i < N; i++) bits[i] = (uint16_t)i;
        tfc_lowp_to_f32(h, bits, fl, N);
        int bad = 0;
        for (int i = 0; i < N; i++) {
            float want = h ? tfc_half_to_float((tfc_half){bits[i]}) : tfc_bfloat16_to_float((tfc_bfloat16){bits[i]});
            uint32_t gw, ww;
            memcpy(&gw, &fl[i], 4);
            memcpy(&ww, &want, 4);
            /* F16C quiets signalling NaNs: compare NaNs as NaN */
            if (gw != ww && !(isnan(want) && isnan(fl[i]))) bad++;
        }
        CHECK(bad == 0);
        for (int i = 0; i < N; i++) {
            uint32_t x = next_u32();
            if (i % 4 == 1) x = (x & 0x807fffffu) | (0x33u + i % 20) << 23;       /* near half's subnormals */
            if (i % 4 == 2) x = (x & 0xffff8000u) | (i % 8 == 2 ? 0x1000u : 0x8000u); /* halfway cases */
            if (i % 97 == 3) x = 0x7f800001u + (x & 0xfffu);                       /* NaN */
            if (i % 89 == 5) x = 0x477ff000u + (x & 0x1fffu);                      /* half overflow boundary */
            memcpy(&fl[i], &x, 4);
        }
        tfc_lowp_from_f32(h, fl, back, N);
        bad = 0;
        for (int i = 0; i < N; i++) {
            uint16_t want = h ? tfc_half_from_float(fl[i]).bits : tfc_bfloat16_from_float(fl[i]).bits;
            if (back[i] != want) {
                if (bad++ < 5) fprintf(stderr, "%s from %a: got %04x want %04x\n", h ? "half" : "bf16", fl[i], back[i], want);
            }
        }
        CHECK(bad == 0);
    }
    free(bits);
    free(back);
    free(fl);
}

static double now(clockid_t id) {
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void time_products(int threads) {
    const int64_t N = 1024;
    tfc_threadpool *pool = threads > 1 ? tfc_threadpool_new(threads) : NULL;
    uint16_t *a = malloc(N * N * 2), *b = malloc(N * N * 2);
    float *af = malloc(N * N * 4), *bf32 = malloc(N * N * 4), *c = malloc(N * N * 4);
    REQUIRE(a && b && af && bf32 && c);
    for (int64_t i = 0; i < N * N; i++) af[i] = uniform(), bf32[i] = uniform(), a[i] = bf(af[i]), b[i] = bf(bf32[i]);
    for (int which = 0; which < 2; which++) {
        double best = 1e9, best_cpu = 1e9;
        for (int r = 0; r < 9; r++) {
            double t0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_PROCESS_CPUTIME_ID);
            if (which) tfc_sgemm(false, false, N, N, N, 1.0f, af, N, bf32, N, 0.0f, c, N, pool);
            else tfc_bgemm(false, false, N, N, N, a, N, b, N, c, N, false, pool);
            double t = now(CLOCK_MONOTONIC) - t0, tc = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
            if (t < best) best = t;
            if (tc < best_cpu) best_cpu = tc;
        }
        /* on a shared machine wall time depends on the load; GFLOP per CPU-second (all threads) does not */
        printf("threads %d %-17s 1024^3: %7.3f ms wall, %6.1f GFLOP/s wall, %6.1f GFLOP per CPU-second\n", threads,
               which ? "float32 tfc_sgemm" : tfc_bgemm_isa(), best * 1e3, 2.0 * (double)(N * N * N) / best * 1e-9,
               2.0 * (double)(N * N * N) / best_cpu * 1e-9);
    }
    free(a), free(b), free(af), free(bf32), free(c);
    tfc_threadpool_free(pool);
}

int main(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "time")) {
        time_products(1);
        time_products(2);
        return 0;
    }
    tfc_threadpool *pool2 = tfc_threadpool_new(2), *pool3 = tfc_threadpool_new(3);
    REQUIRE(pool2 && pool3);
    check_conversions();
    run_isa("avx512_bf16", pool2, pool3);
    run_isa("widen", pool2, pool3);
    tfc_bgemm_force_isa(NULL);
    tfc_threadpool_free(pool2);
    tfc_threadpool_free(pool3);
    printf("%d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures != 0;
}
