/* Internal: helpers shared by the NN kernels (nn.c, nn_softmax.c, nn_batchnorm.c). */
#ifndef TFC_KERNELS_CPU_NN_INTERNAL_H
#define TFC_KERNELS_CPU_NN_INTERNAL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/kernels.h"

/* Independent accumulators of the scalar (float64) lane reductions. */
#define NN_LANES 16

/* ---- float32 SIMD kernels ----
 * The hot float32 loops (activations, softmax rows, cross-entropy rows, sums) live in nn_simd.inc, compiled
 * once for the baseline ISA (nn_simd_base.c) and, on x86-64 with GCC, once for AVX2 + FMA
 * (nn_simd_avx2.c); tfc_nn_simd_get() picks the table for the running CPU (TFC_NN_SIMD=baseline forces the
 * first). Calls go through the table once per row or chunk, never per element. */
typedef enum { ACT_RELU, ACT_RELU6, ACT_LEAKY, ACT_ELU, ACT_SELU, ACT_SOFTPLUS, ACT_SOFTSIGN } act_kind;

#define SELU_SCALE 1.0507009873554804934193349852946
#define SELU_ALPHA 1.6732632423543772848170429916717

typedef struct tfc_nn_simd {
    const char *name;
    /* y = f(x) / y = g * f'(x) (x: the forward outputs for Elu, Selu), n elements */
    void (*act_fwd)(act_kind kind, float alpha, const float *x, float *y, int64_t n);
    void (*act_bwd)(act_kind kind, float alpha, const float *g, const float *x, float *y, int64_t n);
    /* softmax or log-softmax of one row (y may alias x) */
    void (*softmax_row)(const float *x, float *y, int64_t n, bool log_out);
    /* one cross-entropy row: y = softmax(f) - labels, returns the loss; f, l, y contiguous */
    float (*xent_row)(const float *f, const float *l, float *y, int64_t n);
    /* one sparse cross-entropy row: y = softmax(f) - onehot(label), returns the loss */
    float (*sparse_xent_row)(const float *f, float *y, int64_t n, int64_t label);
    /* y = exp(x - m) (y may alias x, or be NULL), returns the sum of the exponentials */
    float (*exp_sub_sum)(const float *x, float *y, int64_t n, float m);
    float (*sum)(const float *x, int64_t n);
    float (*sum_squares)(const float *x, int64_t n);
} tfc_nn_simd;

const tfc_nn_simd *tfc_nn_simd_get(void);
extern const tfc_nn_simd tfc_nn_simd_base;
extern const tfc_nn_simd tfc_nn_simd_avx2; /* name NULL where not built */

/* half / bfloat16 <-> float32 for n elements (kernels widen these dtypes and run their float32 path), through
 * F16C / AVX-512 where the CPU has them (gemm_bf16.h). */
static inline void nn_widen(tfc_dtype dt, const void *src, float *dst, int64_t n) {
    tfc_lowp_to_f32(dt == TFC_HALF, src, dst, n);
}

static inline void nn_narrow(tfc_dtype dt, const float *src, void *dst, int64_t n) {
    tfc_lowp_from_f32(dt == TFC_HALF, src, dst, n);
}

static inline bool nn_is_half(tfc_dtype dt) { return dt == TFC_HALF || dt == TFC_BFLOAT16; }

/* A float32 copy of a half/bfloat16 tensor's n elements (tfc_free it); NULL with st set when out of memory. */
float *tfc_nn_widen_alloc(const tfc_kernel_ctx *k, const tfc_tensor *t, tfc_status *st);
/* Uninitialised float32 scratch of n elements (tfc_free it); NULL with st set when out of memory. */
float *tfc_nn_scratch(const tfc_kernel_ctx *k, int64_t n, tfc_status *st);

/* Number of row chunks for a parallel column reduction of a [rows, cols] matrix: a few per thread, each
 * large enough to be worth a task. */
int64_t tfc_nn_reduce_chunks(const tfc_kernel_ctx *k, int64_t rows, int64_t cols);
/* blk[c] = the sum of the n rows of d (row stride ch) in column c, from 0 and added row after row in float
 * (BiasAddGrad's order within a block of rows; fused.c, used by _FusedBiasAddGrad and fused_pool.c). */
void tfc_nn_block_col_sums(const float *restrict d, int64_t n, int64_t ch, float *restrict blk);

/* Kernels defined in nn_softmax.c and nn_batchnorm.c, registered by nn.c's table. */
bool tfc_nn_softmax(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_log_softmax(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_xent(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_sparse_xent(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_fused_batch_norm(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_nn_fused_batch_norm_grad(tfc_kernel_ctx *k, tfc_status *st);

#endif
