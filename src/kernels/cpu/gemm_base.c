/* tfc_sgemm's kernels for the ISA the library is built for (SSE2 on x86-64, NEON on arm64): 6x8 tiles of
 * 4-float vectors, 12 of 16 registers accumulating. Needs GCC-compatible vector extensions; elsewhere the
 * table is empty and products go to cblas_sgemm. */
#include "kernels/cpu/gemm.h"

#if defined(__GNUC__)
#pragma GCC diagnostic ignored "-Wpsabi"
#define GEMM_VL 4
#define GEMM_WIDE_MR 6
#define GEMM_WIDE_NV 2
#define GEMM_TABLE tfc_gemm_base
#define GEMM_NAME "baseline"
#include "kernels/cpu/gemm_kern.inc"
#else
const tfc_gemm_isa tfc_gemm_base = {0};
#endif
