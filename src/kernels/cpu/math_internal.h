/* Internal: shared pieces of the math kernels (math.c, math_unary.c, math_cast.c, math_select.c).
 *
 * Elementwise kernels are written as "segment" functions that process n contiguous elements of one dtype
 * in a plain loop the compiler vectorises; a driver splits the output into segments (rows of the broadcast
 * iteration, ranges of a parallel_for) and calls the segment function once per segment, so there is no
 * per-element indirection. half and bfloat16 run the float32 segment functions on small converted chunks. */
#ifndef TFC_KERNELS_CPU_MATH_INTERNAL_H
#define TFC_KERNELS_CPU_MATH_INTERNAL_H

#if defined(__GNUC__) && !defined(__clang__)
/* The math kernels never read FP exception flags: with trapping math GCC refuses to turn selects between
 * floating-point values into blends, and the loops stay scalar. */
#pragma GCC optimize("no-trapping-math")
#endif

#include <string.h>

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/kernels.h"

#define TFC_MATH_CHUNK 256 /* elements converted at a time for half/bfloat16 */

/* Branch-free conversions (the loops using them vectorise), bit-identical to tfc_half_to_float,
 * tfc_half_from_float and tfc_bfloat16_from_float: round to nearest even, NaN stays NaN (bfloat16: 0x7fc0). */
static inline float tfc_math_h2f(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu;
    uint32_t normal = (em << 13) + (112u << 23), infnan = (em << 13) | 0x7f800000u;
    float subf = (float)em * 5.9604644775390625e-08f; /* zero and subnormals: mantissa * 2^-24 */
    uint32_t sub;
    memcpy(&sub, &subf, 4);
    uint32_t r = (em < 0x400u ? sub : em >= 0x7c00u ? infnan : normal) | sign;
    float f;
    memcpy(&f, &r, 4);
    return f;
}
static inline uint16_t tfc_math_f2h(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    float af, subf;
    memcpy(&af, &ax, 4);
    subf = af + 0.5f; /* subnormal halves: let the FPU round */
    uint32_t sub;
    memcpy(&sub, &subf, 4);
    sub -= 0x3f000000u;
    uint32_t norm = (ax + 0xc8000fffu + ((ax >> 13) & 1u)) >> 13; /* rebias, round to nearest even */
    uint32_t nan = 0x7e00u | ((ax >> 13) & 0x3ffu);
    uint32_t r = ax > 0x7f800000u ? nan : ax >= 0x477ff000u ? 0x7c00u : ax < 0x38800000u ? sub : norm;
    return (uint16_t)(sign | r);
}
static inline float tfc_math_bf2f(uint16_t b) {
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint16_t tfc_math_f2bf(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t rne = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)((x & 0x7fffffffu) > 0x7f800000u ? 0x7fc0u : rne); /* NaN: TensorFlow's canonical quiet NaN */
}

/* half/bfloat16 <-> float32 over n elements (dt is TFC_HALF or TFC_BFLOAT16). */
void tfc_math_to_float(tfc_dtype dt, const void *src, float *dst, int64_t n);
void tfc_math_from_float(tfc_dtype dt, const float *src, void *dst, int64_t n);
static inline bool tfc_math_lowp(tfc_dtype dt) { return dt == TFC_HALF || dt == TFC_BFLOAT16; }

/* INVALID_ARGUMENT "Integer division by zero" when any of the n elements of integer tensor t is zero
 * (TensorFlow's message for integer FloorDiv/FloorMod by zero). */
bool tfc_math_check_int_nonzero(const tfc_kernel_ctx *k, const tfc_tensor *t, tfc_status *st);

/* Kernels, by file. */
bool tfc_k_add(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_sub(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_mul(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_real_div(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_div_no_nan(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_floor_div(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_floor_mod(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_pow(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_maximum(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_minimum(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_squared_difference(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_equal(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_not_equal(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_less(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_less_equal(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_greater(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_greater_equal(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_logical_and(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_logical_or(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_sqrt_grad(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_rsqrt_grad(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_reciprocal_grad(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_tanh_grad(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_sigmoid_grad(tfc_kernel_ctx *k, tfc_status *st);

bool tfc_k_neg(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_abs(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_sign(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_square(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_sqrt(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_rsqrt(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_reciprocal(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_exp(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_expm1(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_log(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_log1p(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_sin(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_cos(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_tanh(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_sigmoid(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_erf(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_floor(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_ceil(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_round(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_logical_not(tfc_kernel_ctx *k, tfc_status *st);

bool tfc_k_cast(tfc_kernel_ctx *k, tfc_status *st);

bool tfc_k_select_v2(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_clip_by_value(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_k_add_n(tfc_kernel_ctx *k, tfc_status *st);

#endif
