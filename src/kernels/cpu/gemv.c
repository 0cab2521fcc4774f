/* One-row products for tfc_sgemm (see gemv.h): a Dense layer on a single example ([1, 1600] x [1600, 10]
 * in the demo CNN's inference) spent 19% of the forward pass in the blocked GEMM, which packs all of B into
 * 16-column panels (10 columns padded) and then runs one dependent FMA chain per panel over all of k. Here
 * B is read in place, once, and the sum is spread over independent partial sums. */
#include <string.h>

#include "kernels/cpu/gemv.h"
#include "kernels/cpu/kernels.h"

#define CW 64 /* columns per strip of B (no transpose): 4 KB of partial sums, in L1 */
#define KU 4  /* independent partial sums per column (rows of B k, k+1, k+2, k+3) */
#define DL 16 /* lanes of a dot product (transposed B) */

/* c[j] = sum_p a[p * as] b[p * ldb + j] for j < w <= CW: KU interleaved row sums, added at the end. */
TFC_SIMD_CLONES static void rows_strip(int64_t w, int64_t k, const float *a, int64_t as, const float *b, int64_t ldb,
                                       float *c) {
    float acc[KU][CW];
    memset(acc, 0, sizeof acc);
    int64_t p = 0;
    for (; p + KU <= k; p += KU)
        for (int u = 0; u < KU; u++) {
            const float x = a[(p + u) * as];
            const float *restrict br = b + (p + u) * ldb;
            float *restrict s = acc[u];
            for (int64_t j = 0; j < w; j++) s[j] += x * br[j];
        }
    for (; p < k; p++) {
        const float x = a[p * as];
        const float *restrict br = b + p * ldb;
        for (int64_t j = 0; j < w; j++) acc[0][j] += x * br[j];
    }
    for (int64_t j = 0; j < w; j++) c[j] = (acc[0][j] + acc[1][j]) + (acc[2][j] + acc[3][j]);
}

/* The same for w <= 16 columns (a Dense layer's 10 classes): each row of B is one 16-float vector load,
 * reading past the row's w values into the next row (the extra lanes are dropped), so not for the rows whose
 * 16 floats would end past B's last value, (k - 1) * ldb + w: those run as scalars. */
typedef float v16 __attribute__((vector_size(64)));
typedef float v16u __attribute__((vector_size(64), aligned(4), may_alias));

TFC_SIMD_CLONES static void rows_narrow(int64_t w, int64_t k, const float *a, int64_t as, const float *b, int64_t ldb,
                                        float *c) {
    v16 acc[KU] = {{0}};
    const int64_t end = (k - 1) * ldb + w; /* floats of B from b */
    int64_t p = 0;
    for (; p + KU <= k && (p + KU - 1) * ldb + 16 <= end; p += KU)
        for (int u = 0; u < KU; u++) acc[u] += a[(p + u) * as] * *(const v16u *)(b + (p + u) * ldb);
    float s[16];
    const v16 t = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    memcpy(s, &t, sizeof s);
    for (; p < k; p++) {
        const float x = a[p * as];
        for (int64_t j = 0; j < w; j++) s[j] += x * b[p * ldb + j];
    }
    memcpy(c, s, (size_t)w * sizeof(float));
}

/* sum_p a[p * as] b[p], b contiguous: DL lanes (fixed, so the compiler vectorises without reassociating). */
TFC_SIMD_CLONES static float dot(int64_t k, const float *a, int64_t as, const float *restrict b) {
    float s[DL] = {0};
    int64_t p = 0;
    if (as == 1)
        for (; p + DL <= k; p += DL)
            for (int i = 0; i < DL; i++) s[i] += a[p + i] * b[p + i];
    else
        for (; p + DL <= k; p += DL)
            for (int i = 0; i < DL; i++) s[i] += a[(p + i) * as] * b[p + i];
    for (int i = 0; p < k; p++, i++) s[i] += a[p * as] * b[p];
    for (int w = DL / 2; w > 0; w /= 2)
        for (int i = 0; i < w; i++) s[i] += s[i + w];
    return s[0];
}

void tfc_sgemv_row(bool trans_b, int64_t n, int64_t k, float alpha, const float *a, int64_t as, const float *b,
                   int64_t ldb, float beta, float *c, const tfc_epilogue *ep) {
    float strip[CW];
    for (int64_t j0 = 0; j0 < n; j0 += CW) {
        const int64_t w = n - j0 < CW ? n - j0 : CW;
        if (trans_b)
            for (int64_t j = 0; j < w; j++) strip[j] = dot(k, a, as, b + (j0 + j) * ldb);
        else if (w <= 16) rows_narrow(w, k, a, as, b + j0, ldb, strip);
        else rows_strip(w, k, a, as, b + j0, ldb, strip);
        for (int64_t j = 0; j < w; j++) /* beta 0 ignores C (NaN there does not propagate), as BLAS */
            c[j0 + j] = beta == 0.0f ? alpha * strip[j] : alpha * strip[j] + beta * c[j0 + j];
    }
    if (ep) tfc_epilogue_f32(ep, c, 1, n, n, 0);
}
