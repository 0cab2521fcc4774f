/* The NN float32 SIMD kernels compiled for AVX2 + FMA (8 floats per vector), chosen at run time by
 * tfc_nn_simd_get() on CPUs that have them. Only with GCC on x86-64; elsewhere the table is empty (name NULL)
 * and the baseline kernels run. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/nn_internal.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define NN_VL 8
#define NN_SIMD_TABLE tfc_nn_simd_avx2
#define NN_SIMD_NAME "avx2"
#include "kernels/cpu/nn_simd.inc"
#pragma GCC pop_options
#else
const tfc_nn_simd tfc_nn_simd_avx2 = {0};
#endif
