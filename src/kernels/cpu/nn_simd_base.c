/* The NN float32 SIMD kernels for the baseline ISA the library is compiled for (SSE2 on x86-64; AVX when
 * built with TFC_NATIVE on an AVX machine), and the choice of table for the running CPU. */
#include <stdlib.h>

#include "kernels/cpu/nn_internal.h"

#pragma GCC diagnostic ignored "-Wpsabi"
#ifdef __AVX__
#define NN_VL 8
#else
#define NN_VL 4
#endif
#define NN_SIMD_TABLE tfc_nn_simd_base
#define NN_SIMD_NAME "baseline"
#include "kernels/cpu/nn_simd.inc"

const tfc_nn_simd *tfc_nn_simd_get(void) {
    static const tfc_nn_simd *_Atomic chosen;
    const tfc_nn_simd *t = chosen;
    if (t) return t;
    const char *env = getenv("TFC_NN_SIMD");
    t = &tfc_nn_simd_base;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (tfc_nn_simd_avx2.name && !(env && !strcmp(env, "baseline")) && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        t = &tfc_nn_simd_avx2;
#else
    (void)env;
#endif
    chosen = t;
    return t;
}
