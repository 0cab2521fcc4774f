/* Internal: the Philox4x32-10 counter-based generator (Salmon et al., SC 2011) and the conversions
 * TensorFlow's random kernels apply to its output, reproduced bit for bit so that tfc and TensorFlow
 * give the same numbers for the same (seed, seed2):
 *  - state: a 128-bit counter (4 x uint32, least significant first) and a 64-bit key (2 x uint32);
 *    seeding with (seed, seed2) puts seed in the key and seed2 in the upper half of the counter;
 *  - each call returns 4 uint32 (one "128-bit sample") and increments the counter by one;
 *  - floats take 23 random mantissa bits over exponent 0 and subtract 1, doubles 52 bits (20 from the
 *    first word, 32 from the second), half 10 bits and bfloat16 7 bits of the low half of a word;
 *  - normals use Box-Muller on pairs of uniforms, the first uniform clamped to >= 1e-7. */
#ifndef TFC_CORE_PHILOX_H
#define TFC_CORE_PHILOX_H

#include <math.h>
#include <stdint.h>
#include <string.h>

typedef struct tfc_philox {
    uint32_t ctr[4];
    uint32_t key[2];
} tfc_philox;

/* TensorFlow's PhiloxRandom(seed_lo, seed_hi). */
static inline void tfc_philox_init(tfc_philox *g, uint64_t seed, uint64_t seed2) {
    g->key[0] = (uint32_t)seed;
    g->key[1] = (uint32_t)(seed >> 32);
    g->ctr[0] = g->ctr[1] = 0;
    g->ctr[2] = (uint32_t)seed2;
    g->ctr[3] = (uint32_t)(seed2 >> 32);
}

/* Advances the counter by n 128-bit samples (carrying through all four words). */
static inline void tfc_philox_skip(tfc_philox *g, uint64_t n) {
    uint32_t lo = (uint32_t)n, hi = (uint32_t)(n >> 32);
    g->ctr[0] += lo;
    if (g->ctr[0] < lo) hi++;
    g->ctr[1] += hi;
    if (g->ctr[1] < hi && ++g->ctr[2] == 0) g->ctr[3]++;
}

/* Writes the next 4 words and advances by one sample. */
static inline void tfc_philox_next(tfc_philox *g, uint32_t out[4]) {
    uint32_t c0 = g->ctr[0], c1 = g->ctr[1], c2 = g->ctr[2], c3 = g->ctr[3];
    uint32_t k0 = g->key[0], k1 = g->key[1];
    for (int r = 0; r < 10; r++) {
        uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0, n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    out[0] = c0;
    out[1] = c1;
    out[2] = c2;
    out[3] = c3;
    if (++g->ctr[0] == 0 && ++g->ctr[1] == 0 && ++g->ctr[2] == 0) g->ctr[3]++;
}

/* Uniform [0, 1) from the low 23 bits. */
static inline float tfc_philox_u32_to_float(uint32_t x) {
    uint32_t v = (127u << 23) | (x & 0x7fffffu);
    float f;
    memcpy(&f, &v, 4);
    return f - 1.0f;
}

/* Uniform [0, 1) from 52 bits: the low 20 bits of x0 are the high mantissa bits. */
static inline double tfc_philox_u64_to_double(uint32_t x0, uint32_t x1) {
    uint64_t v = (1023ull << 52) | ((uint64_t)(x0 & 0xfffffu) << 32) | x1;
    double d;
    memcpy(&d, &v, 8);
    return d - 1.0;
}

/* Uniform [0, 1) with 10 (half) or 7 (bfloat16) random bits; the results are exact in those formats. */
static inline float tfc_philox_u16_to_half_value(uint32_t x) { return (float)(x & 0x3ffu) * (1.0f / 1024.0f); }
static inline float tfc_philox_u16_to_bf16_value(uint32_t x) { return (float)(x & 0x7fu) * (1.0f / 128.0f); }

/* Box-Muller as TensorFlow computes it in float: the angle is formed in double and rounded. */
static inline void tfc_philox_box_muller_f(uint32_t x0, uint32_t x1, float *f0, float *f1) {
    float u1 = tfc_philox_u32_to_float(x0);
    if (u1 < 1.0e-7f) u1 = 1.0e-7f;
    const float v1 = (float)(2.0 * 3.14159265358979323846 * (double)tfc_philox_u32_to_float(x1));
    const float u2 = sqrtf(-2.0f * logf(u1));
    float s, c;
#if defined(__clang__) /* clang has no __builtin_sincosf (the fuzz build); the same values from sinf and cosf */
    s = sinf(v1);
    c = cosf(v1);
#else
    __builtin_sincosf(v1, &s, &c);
#endif
    *f0 = s * u2;
    *f1 = c * u2;
}

static inline void tfc_philox_box_muller_d(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, double *d0,
                                           double *d1) {
    double u1 = tfc_philox_u64_to_double(x0, x1);
    if (u1 < 1.0e-7) u1 = 1.0e-7;
    const double v1 = 2.0 * 3.14159265358979323846 * tfc_philox_u64_to_double(x2, x3);
    const double u2 = sqrt(-2.0 * log(u1));
    double s, c;
#if defined(__clang__)
    s = sin(v1);
    c = cos(v1);
#else
    __builtin_sincos(v1, &s, &c);
#endif
    *d0 = s * u2;
    *d1 = c * u2;
}

#endif
