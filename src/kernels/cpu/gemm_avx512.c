/* tfc_sgemm's AVX-512 kernels (12x32 tiles; 12x16 for products of at most 16 columns): 24 (12) of the 32 zmm
 * registers accumulate, B rows are two vector loads and A values are broadcast from memory. 12 rows rather than
 * 14: an A read in place keeps a pointer (or offset) per row in general registers, and 14 of them spilled to the
 * stack, reloaded every k step; with rows 4 KB apart (lda 1024) they also share one L1 set of 12 ways. Measured
 * on Zen 5, 1024-square at 1 thread: 83% of the FMA peak with 14 rows, 88-89% with 12 (86% with 8); 12x16
 * measured 1.1-1.2x faster than 14x16 on [1024, 1024] x [1024, 16] and [4096, 288] x [288, 16]. The implicit
 * convolutions use 12x32 / 12x16 tiles as well (with a pointer per row, more rows would run out of general
 * registers: spilled B vectors measured 30% slower); filter gradients of filter rows of at most 4 values use
 * 4x32. GCC on x86-64 only; elsewhere the table is empty (name NULL). */
#include "kernels/cpu/gemm.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2,fma")
#include <immintrin.h>
#define GEMM_VL 16
#define GV_MASK_T __mmask16
#define GV_MASK(n) ((__mmask16)((1u << (n)) - 1u))
#define GV_LOAD_MASK(p, m) ((gv)_mm512_maskz_loadu_ps((m), (p)))
#define GV_STORE_MASK(p, m, v) _mm512_mask_storeu_ps((p), (m), (__m512)(v))
#define GEMM_WIDE_MR 12
#define GEMM_WIDE_NV 2
#define GEMM_NARROW_MR 12
#define GEMM_NARROW_NV 1
#define GEMM_PTRS_WIDE_MR 12
#define GEMM_PTRS_WIDE_NV 2
#define GEMM_PTRS_NARROW_MR 12
#define GEMM_PTRS_NARROW_NV 1
#define GEMM_PTRS_SMALL_MR 4
#define GEMM_TABLE tfc_gemm_avx512
#define GEMM_NAME "avx512"
#include "kernels/cpu/gemm_kern.inc"
#pragma GCC pop_options
#else
const tfc_gemm_isa tfc_gemm_avx512 = {0};
#endif
