/* tfc_sgemm's AVX2+FMA kernels (6x16 tiles; 12x8 for products of at most 8 columns): 12 of the 16 ymm
 * registers accumulate. GCC on x86-64 only; elsewhere the table is empty (name NULL). */
#include "kernels/cpu/gemm.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define GEMM_VL 8
#define GEMM_WIDE_MR 6
#define GEMM_WIDE_NV 2
#define GEMM_NARROW_MR 12
#define GEMM_NARROW_NV 1
#define GEMM_TABLE tfc_gemm_avx2
#define GEMM_NAME "avx2"
#include "kernels/cpu/gemm_kern.inc"
#pragma GCC pop_options
#else
const tfc_gemm_isa tfc_gemm_avx2 = {0};
#endif
