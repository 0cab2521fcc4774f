/* Internal: products of bfloat16 matrices with float32 accumulation (gemm_bf16.c, gemm_bf16_avx512.c), and
 * float16/bfloat16 <-> float32 conversion of whole arrays.
 *
 * On CPUs with AVX512_BF16 the product runs on `vdpbf16ps` (16 lanes, each adding the products of two
 * bfloat16 pairs to a float32 accumulator: twice the multiply-adds of a float32 FMA per instruction).
 * Products of two bfloat16 values are exact in float32, so the result equals a float32-accumulating loop up
 * to the order of the additions (and, as the instruction does, with float32 denormal inputs and sums
 * flushed to zero). Elsewhere the operands are widened to float32 and multiplied by tfc_sgemm, which is the
 * same arithmetic. The choice is made at run time from CPUID. */
#ifndef TFC_KERNELS_CPU_GEMM_BF16_H
#define TFC_KERNELS_CPU_GEMM_BF16_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfc/platform.h"

/* C[m, n] = op(A)[m, k] op(B)[k, n] in float32, A and B bfloat16 (raw bits), all row-major, strides in
 * elements; op(X) = X^T when trans_x (A is then [k, m], B [n, k]). accumulate: C += the product instead of
 * C = (beta 1 / beta 0; with beta 0 C is not read). Runs on `pool` (NULL: the calling thread). Never fails:
 * without scratch memory it falls back to a plain loop. */
void tfc_bgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t *a, int64_t lda,
               const uint16_t *b, int64_t ldb, float *c, int64_t ldc, bool accumulate, tfc_threadpool *pool);

/* "avx512_bf16" (vdpbf16ps) or "widen" (tfc_sgemm on widened operands). */
const char *tfc_bgemm_isa(void);
/* Whether tfc_bgemm runs on vdpbf16ps now: callers holding whole bfloat16 tensors otherwise widen them once
 * themselves and use the float32 kernels. */
bool tfc_bgemm_native(void);
/* Uses the named path from now on (NULL: the automatic choice). False when this CPU or build lacks it.
 * For tests and benchmarks; not thread-safe against running products. */
bool tfc_bgemm_force_isa(const char *name);

/* n elements of float16 (half = true) or bfloat16 to float32 and back (round to nearest even, NaN stays
 * NaN; as tfc_half_from_float / tfc_bfloat16_from_float, bit for bit). F16C / AVX-512 where the CPU has
 * them. */
void tfc_lowp_to_f32(bool half, const uint16_t *src, float *dst, int64_t n);
void tfc_lowp_from_f32(bool half, const float *src, uint16_t *dst, int64_t n);

/* ---- between gemm_bf16.c and gemm_bf16_avx512.c ---- */
#define TFC_BGEMM_MR 14  /* rows of a micro-tile */
#define TFC_BGEMM_NR 32  /* columns of a micro-tile (two vectors) */
#define TFC_BGEMM_KC 384 /* k values per block (even): a B micro-panel of KC x NR bfloat16 stays in L1 */

typedef struct tfc_bgemm_kernels {
    /* Packs rows [i0, i0 + rows) of op(A) (rows <= MR; the rest zero) over k range [k0, k0 + kc) into pairs:
     * out[p * MR + r] = A[i0 + r, k0 + 2p] | A[i0 + r, k0 + 2p + 1] << 16 (zero past k). */
    void (*pack_a)(bool ta, const uint16_t *a, int64_t lda, int64_t i0, int rows, int64_t k0, int64_t kc,
                   int64_t k, uint32_t *out);
    /* The same for columns [j0, j0 + cols) of op(B), cols <= NR: out[p * NR + c]. */
    void (*pack_b)(bool tb, const uint16_t *b, int64_t ldb, int64_t j0, int cols, int64_t k0, int64_t kc,
                   int64_t k, uint32_t *out);
    /* C[rows, cols] (=|+=) packed A micro-panel x packed B micro-panel over kp pairs. */
    void (*tile)(int64_t kp, const uint32_t *ap, const uint32_t *bp, float *c, int64_t ldc, int rows, int cols,
                 bool accumulate);
    void (*to_f32)(bool half, const uint16_t *src, float *dst, int64_t n);
    void (*from_f32)(bool half, const float *src, uint16_t *dst, int64_t n);
} tfc_bgemm_kernels;

extern const tfc_bgemm_kernels tfc_bgemm_avx512bf16; /* all NULL where not built */

#endif
