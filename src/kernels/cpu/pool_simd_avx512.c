/* The float32 pooling kernels compiled for AVX-512 (16 floats per vector, masked channel tails), chosen at
 * run time by tfc_pool_simd_get() on CPUs that have it. Only with GCC on x86-64; elsewhere the table is
 * empty (name NULL) and a narrower table runs. */
#include <string.h>

#include "kernels/cpu/pool_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx512f,avx512vl,avx512dq,avx512bw,avx2")
#include <immintrin.h>
#define PV_VL 16
#define PV_TABLE tfc_pool_simd_avx512
#define PV_NAME "avx512"
#include "kernels/cpu/pool_simd.inc"
#pragma GCC pop_options
#else
const tfc_pool_simd tfc_pool_simd_avx512 = {0};
#endif
