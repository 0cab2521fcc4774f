/* tfc_bgemm's AVX512_BF16 kernels (see gemm_bf16.h) and the AVX-512 / F16C array conversions.
 *
 * Micro-tile 14 x 32: 28 of the 32 zmm registers accumulate, the two B vectors of a k pair are loaded and
 * each row's (A[i, 2p], A[i, 2p + 1]) pair is broadcast as one 32-bit value, so a k pair costs 2 loads, 14
 * broadcasts and 28 vdpbf16ps (896 multiply-adds). Operands are packed into those pairs first (packing is
 * O(mk + nk) against the product's O(mnk)). GCC on x86-64 only; elsewhere the table is empty. */
#include <string.h>

#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/math_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512bw,avx512bf16,avx2,fma,f16c")
#include <immintrin.h>

#define MR TFC_BGEMM_MR
#define NR TFC_BGEMM_NR

/* Rows [0, nrows) of 16 32-bit words each (row r at base + r * ld, of which `valid` 16-bit elements are
 * read, the rest zero; nrows <= 16) transposed: column q (q < ncols) goes to out + q * ostride, its first
 * rows selected by `smask` stored. 16x16 in four rounds of unpacks and lane shuffles. */
static inline void transpose16(const uint16_t *base, int64_t ld, int nrows, int64_t valid, int ncols, uint32_t *out,
                               int64_t ostride, __mmask16 smask) {
    const __mmask32 lm = valid >= 32 ? 0xffffffffu : (__mmask32)((1u << valid) - 1u);
    __m512i r[16], t[16];
    for (int i = 0; i < 16; i++) r[i] = i < nrows ? _mm512_maskz_loadu_epi16(lm, base + i * ld) : _mm512_setzero_si512();
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(r[i], r[i + 1]);
    }
    for (int i = 0; i < 16; i += 4) { /* r[i + c]: column c (mod 4) of rows i..i+3 in each 128-bit lane */
        r[i] = _mm512_unpacklo_epi64(t[i], t[i + 2]);
        r[i + 1] = _mm512_unpackhi_epi64(t[i], t[i + 2]);
        r[i + 2] = _mm512_unpacklo_epi64(t[i + 1], t[i + 3]);
        r[i + 3] = _mm512_unpackhi_epi64(t[i + 1], t[i + 3]);
    }
    for (int h = 0; h < 16; h += 8)
        for (int c = 0; c < 4; c++) {
            t[h + c] = _mm512_shuffle_i32x4(r[h + c], r[h + 4 + c], 0x88);
            t[h + 4 + c] = _mm512_shuffle_i32x4(r[h + c], r[h + 4 + c], 0xdd);
        }
    for (int c = 0; c < 8; c++) {
        const __m512i lo = _mm512_shuffle_i32x4(t[c], t[8 + c], 0x88), hi = _mm512_shuffle_i32x4(t[c], t[8 + c], 0xdd);
        if (c < ncols) _mm512_mask_storeu_epi32(out + c * ostride, smask, lo);
        if (c + 8 < ncols) _mm512_mask_storeu_epi32(out + (c + 8) * ostride, smask, hi);
    }
}

static void pack_a(bool ta, const uint16_t *a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc, int64_t k,
                   uint32_t *out) {
    const int64_t kp = (kc + 1) / 2;
    if (!ta) { /* A is [m, k]: a row's pairs are adjacent; 16 pairs of each row at a time, transposed */
        for (int64_t p = 0; p < kp; p += 16) {
            const int np = (int)(kp - p < 16 ? kp - p : 16);
            transpose16(a + i0 * lda + k0 + 2 * p, lda, rows, k - (k0 + 2 * p), np, out + p * MR, MR,
                        (__mmask16)((1u << MR) - 1u)); /* rows past `rows` come out zero */
        }
        return;
    }
    /* A is [k, m]: rows 2p and 2p + 1, widened to 32 bits and interleaved */
    const __mmask16 rm = (__mmask16)((1u << rows) - 1u);
    for (int64_t p = 0; p < kp; p++) {
        const int64_t kk = k0 + 2 * p;
        const uint16_t *s0 = a + kk * lda + i0;
        __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(rm, s0));
        __m512i hi = kk + 1 < k ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(rm, s0 + lda)) : _mm512_setzero_si512();
        _mm512_mask_storeu_epi32(out + p * MR, (__mmask16)((1u << MR) - 1u), _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
    }
}

static void pack_b(bool tb, const uint16_t *b, int64_t ldb, int64_t j0, int cols, int64_t k0, int64_t kc, int64_t k,
                   uint32_t *out) {
    const int64_t kp = (kc + 1) / 2;
    if (tb) { /* B is [n, k]: a column's k pairs are adjacent; 16 columns x 16 pairs at a time, transposed */
        for (int64_t p = 0; p < kp; p += 16) {
            const int np = (int)(kp - p < 16 ? kp - p : 16);
            const uint16_t *s = b + j0 * ldb + k0 + 2 * p;
            const int64_t valid = k - (k0 + 2 * p);
            transpose16(s, ldb, cols < 16 ? cols : 16, valid, np, out + p * NR, NR, 0xffff);
            transpose16(s + 16 * ldb, ldb, cols > 16 ? cols - 16 : 0, valid, np, out + p * NR + 16, NR, 0xffff);
        }
        return;
    }
    /* B is [k, n]: rows 2p and 2p + 1, widened to 32 bits and interleaved 16 columns at a time */
    const __mmask16 m0 = (__mmask16)(cols >= 16 ? 0xffffu : (1u << cols) - 1u);
    const __mmask16 m1 = (__mmask16)(cols >= 32 ? 0xffffu : cols <= 16 ? 0u : (1u << (cols - 16)) - 1u);
    for (int64_t p = 0; p < kp; p++) {
        const int64_t kk = k0 + 2 * p;
        const uint16_t *r0 = b + kk * ldb + j0, *r1 = r0 + ldb;
        const bool two = kk + 1 < k;
        for (int h = 0; h < 2; h++) {
            const __mmask16 mk = h ? m1 : m0;
            __m512i lo = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mk, r0 + 16 * h));
            __m512i hi = two ? _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(mk, r1 + 16 * h)) : _mm512_setzero_si512();
            _mm512_store_si512(out + p * NR + 16 * h, _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16)));
        }
    }
}

static void tile(int64_t kp, const uint32_t *ap, const uint32_t *bp, float *c, int64_t ldc, int rows, int cols,
                 bool accumulate) {
    __m512 c0[MR], c1[MR];
#pragma GCC unroll 14
    for (int r = 0; r < MR; r++) { /* C's lines arrive while the tile computes */
        _mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + r * ldc + 16), _MM_HINT_T0);
        c0[r] = c1[r] = _mm512_setzero_ps();
    }
    for (int64_t p = 0; p < kp; p++) {
        const __m512bh b0 = (__m512bh)_mm512_load_si512(bp), b1 = (__m512bh)_mm512_load_si512(bp + 16);
        _mm_prefetch((const char *)(bp + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 14
        for (int r = 0; r < MR; r++) {
            const __m512bh av = (__m512bh)_mm512_set1_epi32((int)ap[r]);
            c0[r] = _mm512_dpbf16_ps(c0[r], av, b0);
            c1[r] = _mm512_dpbf16_ps(c1[r], av, b1);
        }
        ap += MR;
        bp += NR;
    }
    if (cols == NR) {
        for (int r = 0; r < rows; r++) {
            float *cr = c + r * ldc;
            if (accumulate) {
                c0[r] = _mm512_add_ps(c0[r], _mm512_loadu_ps(cr));
                c1[r] = _mm512_add_ps(c1[r], _mm512_loadu_ps(cr + 16));
            }
            _mm512_storeu_ps(cr, c0[r]);
            _mm512_storeu_ps(cr + 16, c1[r]);
        }
        return;
    }
    const __mmask16 m0 = (__mmask16)(cols >= 16 ? 0xffffu : (1u << cols) - 1u);
    const __mmask16 m1 = (__mmask16)(cols <= 16 ? 0u : (1u << (cols - 16)) - 1u);
    for (int r = 0; r < rows; r++) {
        float *cr = c + r * ldc;
        if (accumulate) {
            c0[r] = _mm512_add_ps(c0[r], _mm512_maskz_loadu_ps(m0, cr));
            c1[r] = _mm512_add_ps(c1[r], _mm512_maskz_loadu_ps(m1, cr + 16));
        }
        _mm512_mask_storeu_ps(cr, m0, c0[r]);
        _mm512_mask_storeu_ps(cr + 16, m1, c1[r]);
    }
}

/* float16 through F16C (exact widening; narrowing rounds to nearest even, as tfc_half_from_float); bfloat16
 * widening is a shift and its narrowing the integer rounding of tfc_math_f2bf, vectorised (vcvtneps2bf16
 * would flush float32 denormals to zero, which TensorFlow's conversion does not). */
static void to_f32(bool half, const uint16_t *src, float *dst, int64_t n) {
    int64_t i = 0;
    if (half)
        for (; i + 16 <= n; i += 16) _mm512_storeu_ps(dst + i, _mm512_cvtph_ps(_mm256_loadu_si256((const void *)(src + i))));
    else
        for (; i + 16 <= n; i += 16)
            _mm512_storeu_si512(dst + i, _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const void *)(src + i))), 16));
    for (; i < n; i++) dst[i] = half ? tfc_math_h2f(src[i]) : tfc_math_bf2f(src[i]);
}

static void from_f32(bool half, const float *src, uint16_t *dst, int64_t n) {
    int64_t i = 0;
    if (half) {
        for (; i + 16 <= n; i += 16)
            _mm256_storeu_si256((void *)(dst + i), _mm512_cvtps_ph(_mm512_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
    } else { /* (x + 0x7fff + lsb) >> 16; NaN: 0x7fc0 */
        const __m512i one = _mm512_set1_epi32(1), half_ulp = _mm512_set1_epi32(0x7fff), qnan = _mm512_set1_epi32(0x7fc0);
        for (; i + 16 <= n; i += 16) {
            const __m512 xf = _mm512_loadu_ps(src + i);
            const __m512i x = _mm512_castps_si512(xf);
            const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), one);
            __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, half_ulp), lsb), 16);
            r = _mm512_mask_mov_epi32(r, _mm512_cmp_ps_mask(xf, xf, _CMP_UNORD_Q), qnan);
            _mm256_storeu_si256((void *)(dst + i), _mm512_cvtepi32_epi16(r));
        }
    }
    for (; i < n; i++) dst[i] = half ? tfc_math_f2h(src[i]) : tfc_math_f2bf(src[i]);
}

const tfc_bgemm_kernels tfc_bgemm_avx512bf16 = {pack_a, pack_b, tile, to_f32, from_f32};
#pragma GCC pop_options
#else
const tfc_bgemm_kernels tfc_bgemm_avx512bf16 = {0};
#endif
