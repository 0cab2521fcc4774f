/* tfc_bgemm: choice of path, blocking and the split across the pool (see gemm_bf16.h).
 *
 * Per block of KC k values: op(A) is packed into MR-row micro-panels and op(B) into NR-column
 * micro-panels (both in parallel), then the pool computes units of one B micro-panel (in L1) against up
 * to MBLK A micro-panels (in L2). Blocks after the first add into C. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/math_internal.h"

#define MBLK 32 /* A micro-panels per unit: 448 rows x KC, about 340 KB */

static bool bf16_usable(void) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    return tfc_bgemm_avx512bf16.tile && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16") &&
           __builtin_cpu_supports("f16c");
#else
    return false;
#endif
}

/* 0: not chosen yet, 1: vdpbf16ps, 2: widen */
static _Atomic int chosen;

static int path(void) {
    int p = atomic_load(&chosen);
    if (!p) {
        const char *env = getenv("TFC_BGEMM");
        p = bf16_usable() && !(env && !strcmp(env, "widen")) ? 1 : 2;
        atomic_store(&chosen, p);
    }
    return p;
}

const char *tfc_bgemm_isa(void) { return path() == 1 ? "avx512_bf16" : "widen"; }
bool tfc_bgemm_native(void) { return path() == 1; }

bool tfc_bgemm_force_isa(const char *name) {
    if (!name) {
        atomic_store(&chosen, 0);
        return true;
    }
    if (!strcmp(name, "widen")) atomic_store(&chosen, 2);
    else if (!strcmp(name, "avx512_bf16") && bf16_usable()) atomic_store(&chosen, 1);
    else return false;
    return true;
}

/* ---- conversions ---- */
static bool conv_usable(void) {
    static _Atomic int ok; /* 0 unknown, 1 yes, 2 no */
    int v = atomic_load(&ok);
    if (!v) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
        v = tfc_bgemm_avx512bf16.to_f32 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                    __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("f16c")
                ? 1
                : 2;
#else
        v = 2;
#endif
        atomic_store(&ok, v);
    }
    return v == 1;
}

void tfc_lowp_to_f32(bool half, const uint16_t *src, float *dst, int64_t n) {
    if (conv_usable()) {
        tfc_bgemm_avx512bf16.to_f32(half, src, dst, n);
        return;
    }
    if (half)
        for (int64_t i = 0; i < n; i++) dst[i] = tfc_math_h2f(src[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = tfc_math_bf2f(src[i]);
}

void tfc_lowp_from_f32(bool half, const float *src, uint16_t *dst, int64_t n) {
    if (conv_usable()) {
        tfc_bgemm_avx512bf16.from_f32(half, src, dst, n);
        return;
    }
    if (half)
        for (int64_t i = 0; i < n; i++) dst[i] = tfc_math_f2h(src[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = tfc_math_f2bf(src[i]);
}

/* ---- fallbacks ---- */
/* Float32-accumulating loop, for when no scratch can be had. */
static void plain(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t *a, int64_t lda, const uint16_t *b,
                  int64_t ldb, float *c, int64_t ldc, bool accumulate) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            float s = accumulate ? c[i * ldc + j] : 0.0f;
            for (int64_t p = 0; p < k; p++)
                s += tfc_math_bf2f(ta ? a[p * lda + i] : a[i * lda + p]) * tfc_math_bf2f(tb ? b[j * ldb + p] : b[p * ldb + j]);
            c[i * ldc + j] = s;
        }
}

/* Rows x cols stored bfloat16 (stride ld) to contiguous float32. */
static void widen_rows(const uint16_t *s, int64_t ld, int64_t rows, int64_t cols, float *d) {
    for (int64_t r = 0; r < rows; r++) tfc_lowp_to_f32(false, s + r * ld, d + r * cols, cols);
}

static void widen_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t *a, int64_t lda,
                       const uint16_t *b, int64_t ldb, float *c, int64_t ldc, bool accumulate, tfc_threadpool *pool) {
    const int64_t ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    float *buf = tfc_aligned_alloc((size_t)(ar * ac + br * bc) * sizeof(float));
    if (!buf) {
        plain(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
        return;
    }
    widen_rows(a, lda, ar, ac, buf);
    widen_rows(b, ldb, br, bc, buf + ar * ac);
    tfc_sgemm(ta, tb, m, n, k, 1.0f, buf, ac, buf + ar * ac, bc, accumulate ? 1.0f : 0.0f, c, ldc, pool);
    tfc_aligned_free(buf);
}

/* ---- the blocked product ---- */
typedef struct {
    const tfc_bgemm_kernels *kr;
    bool ta, tb, acc;
    int64_t m, n, k, lda, ldb, ldc, k0, kc, kp;
    const uint16_t *a, *b;
    float *c;
    uint32_t *ap, *bp; /* packed micro-panels of this block */
    int64_t mt, nt, mb; /* A micro-panels, B micro-panels, units along m */
} bjob;

static void pack_range(void *arg, int64_t lo, int64_t hi) {
    const bjob *j = arg;
    for (int64_t u = lo; u < hi; u++) {
        if (u < j->mt) {
            const int64_t i0 = u * TFC_BGEMM_MR;
            const int rows = (int)(j->m - i0 < TFC_BGEMM_MR ? j->m - i0 : TFC_BGEMM_MR);
            j->kr->pack_a(j->ta, j->a, j->lda, i0, rows, j->k0, j->kc, j->k, j->ap + u * j->kp * TFC_BGEMM_MR);
        } else {
            const int64_t q = u - j->mt, j0 = q * TFC_BGEMM_NR;
            const int cols = (int)(j->n - j0 < TFC_BGEMM_NR ? j->n - j0 : TFC_BGEMM_NR);
            j->kr->pack_b(j->tb, j->b, j->ldb, j0, cols, j->k0, j->kc, j->k, j->bp + q * j->kp * TFC_BGEMM_NR);
        }
    }
}

/* Unit u: B micro-panel u % nt against A micro-panels [MBLK * (u / nt), + MBLK). */
static void tile_range(void *arg, int64_t lo, int64_t hi) {
    const bjob *j = arg;
    const bool acc = j->acc || j->k0 > 0;
    for (int64_t u = lo; u < hi; u++) {
        const int64_t q = u % j->nt, t0 = u / j->nt * MBLK, t1 = t0 + MBLK < j->mt ? t0 + MBLK : j->mt;
        const int64_t j0 = q * TFC_BGEMM_NR;
        const int cols = (int)(j->n - j0 < TFC_BGEMM_NR ? j->n - j0 : TFC_BGEMM_NR);
        const uint32_t *bp = j->bp + q * j->kp * TFC_BGEMM_NR;
        for (int64_t t = t0; t < t1; t++) {
            const int64_t i0 = t * TFC_BGEMM_MR;
            const int rows = (int)(j->m - i0 < TFC_BGEMM_MR ? j->m - i0 : TFC_BGEMM_MR);
            j->kr->tile(j->kp, j->ap + t * j->kp * TFC_BGEMM_MR, bp, j->c + i0 * j->ldc + j0, j->ldc, rows, cols, acc);
        }
    }
}

void tfc_bgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const uint16_t *a, int64_t lda, const uint16_t *b,
               int64_t ldb, float *c, int64_t ldc, bool accumulate, tfc_threadpool *pool) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0) {
        if (!accumulate)
            for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, (size_t)n * sizeof(float));
        return;
    }
    if (path() != 1) {
        widen_gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate, pool);
        return;
    }
    bjob j = {.kr = &tfc_bgemm_avx512bf16, .ta = ta, .tb = tb, .acc = accumulate, .m = m, .n = n, .k = k,
              .lda = lda, .ldb = ldb, .ldc = ldc, .a = a, .b = b, .c = c};
    j.mt = (m + TFC_BGEMM_MR - 1) / TFC_BGEMM_MR;
    j.nt = (n + TFC_BGEMM_NR - 1) / TFC_BGEMM_NR;
    j.mb = (j.mt + MBLK - 1) / MBLK;
    const int64_t kcmax = k < TFC_BGEMM_KC ? k : TFC_BGEMM_KC, kpmax = (kcmax + 1) / 2;
    const int64_t a_words = (j.mt * TFC_BGEMM_MR * kpmax + 15) / 16 * 16; /* B panels 64-byte aligned */
    uint32_t *buf = tfc_aligned_alloc((size_t)(a_words + j.nt * TFC_BGEMM_NR * kpmax) * sizeof(uint32_t));
    if (!buf) {
        plain(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
        return;
    }
    j.ap = buf;
    j.bp = buf + a_words;
    for (j.k0 = 0; j.k0 < k; j.k0 += TFC_BGEMM_KC) {
        j.kc = k - j.k0 < TFC_BGEMM_KC ? k - j.k0 : TFC_BGEMM_KC;
        j.kp = (j.kc + 1) / 2;
        tfc_parallel_for(pool, j.mt + j.nt, j.kp * 32, pack_range, &j);
        const int64_t per_unit = (j.mt < MBLK ? j.mt : MBLK) * j.kp * 28; /* ~cycles: 28 vdpbf16ps per pair */
        tfc_parallel_for(pool, j.mb * j.nt, per_unit, tile_range, &j);
    }
    tfc_aligned_free(buf);
}
