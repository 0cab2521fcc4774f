/* Internal: shared pieces of the math kernels (math.c, math_unary.c, math_cast.c, math_select.c).
 *
 * Elementwise kernels are written as "segment" functions that process n contiguous elements of one dtype
 * in a plain loop the compiler vectorises; a driver splits the output into segments (rows of the broadcast
 * iteration, ranges of a parallel_for) and calls the segment function once per segment, so there is no
 * per-element indirection. half and bfloat16 run the float32 segment functions on small converted chunks. */
#ifndef TFC_KERNELS_CPU_MATH_INTERNAL_H
#define TFC_KERNELS_CPU_MATH_INTERNAL_H

#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/kernels.h"

#define TFC_MATH_CHUNK 256 /* elements converted at a time for half/bfloat16 */

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
