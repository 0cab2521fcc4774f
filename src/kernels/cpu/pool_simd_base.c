/* The float32 pooling kernels for the baseline ISA the library is compiled for (SSE2 on x86-64: 4 floats per
 * vector; 8 when built with AVX), and the choice of table for the running CPU. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/pool_internal.h"

#pragma GCC diagnostic ignored "-Wpsabi"
#ifdef __AVX__
#define PV_VL 8
#else
#define PV_VL 4
#endif
#define PV_TABLE tfc_pool_simd_base
#define PV_NAME "baseline"
#include "kernels/cpu/pool_simd.inc"

/* A table sentinel for "the scalar kernels of pool.c". */
static const tfc_pool_simd generic_table = {.name = "generic"};

static bool usable(const tfc_pool_simd *t) {
    if (!t->name) return false;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (t == &tfc_pool_simd_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    if (t == &tfc_pool_simd_avx2) return __builtin_cpu_supports("avx2");
#endif
    return true;
}

static const tfc_pool_simd *named(const char *name) {
    const tfc_pool_simd *all[] = {&tfc_pool_simd_avx512, &tfc_pool_simd_avx2, &tfc_pool_simd_base, &generic_table};
    for (int i = 0; i < 4; i++)
        if (all[i]->name && !strcmp(all[i]->name, name)) return all[i];
    return NULL;
}

/* The widest usable table, at most the level TFC_POOL_SIMD names. */
static const tfc_pool_simd *choose(void) {
    const tfc_pool_simd *order[] = {&tfc_pool_simd_avx512, &tfc_pool_simd_avx2, &tfc_pool_simd_base, &generic_table};
    const char *env = getenv("TFC_POOL_SIMD");
    const tfc_pool_simd *cap = env ? named(env) : NULL;
    int i = 0;
    if (cap)
        while (order[i] != cap) i++;
    for (; i < 4; i++)
        if (usable(order[i])) return order[i];
    return &generic_table;
}

static const tfc_pool_simd *_Atomic chosen;

const tfc_pool_simd *tfc_pool_simd_get(void) {
    const tfc_pool_simd *t = atomic_load(&chosen);
    if (!t) {
        t = choose();
        atomic_store(&chosen, t);
    }
    return t == &generic_table ? NULL : t;
}

bool tfc_pool_simd_force(const char *name) {
    if (!name) {
        atomic_store(&chosen, choose());
        return true;
    }
    const tfc_pool_simd *t = named(name);
    if (!t || !usable(t)) return false;
    atomic_store(&chosen, t);
    return true;
}
