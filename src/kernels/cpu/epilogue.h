/* Internal: the epilogue of a fused product or convolution (_FusedMatMul, _FusedConv2D).
 *
 * A fused op computes y = act(op(A) op(B) + bias) with the bias indexed by output column (the channel of
 * an NHWC convolution). The GEMM kernels apply it as they store the last k block of a tile, while the tile
 * is still in registers (gemm_kbody.inc), instead of a BiasAdd pass and an activation pass that each read
 * and write the whole output again. Paths without such a kernel (cblas fallbacks, float64, split-k sums, a
 * convolution routine that takes only a bias and a ReLU flag) apply it to their output rows with
 * tfc_epilogue_f32/_f64 afterwards, while those rows are still in cache where they can.
 *
 * Every path gives the values of the separate ops: the sum is rounded to the output type first, then the
 * bias is added, then the activation applied as the Relu, Relu6, LeakyRelu and Elu kernels do (NaN
 * propagates through Relu and Relu6, which map -0 to +0; Elu through the NN SIMD kernels' expm1). */
#ifndef TFC_KERNELS_CPU_EPILOGUE_H
#define TFC_KERNELS_CPU_EPILOGUE_H

#include <stdbool.h>
#include <stdint.h>

#include "tfc/platform.h"

typedef enum { TFC_EPI_NONE, TFC_EPI_RELU, TFC_EPI_RELU6, TFC_EPI_ELU, TFC_EPI_LEAKY_RELU } tfc_epi_act;

typedef struct tfc_epilogue {
    const void *bias; /* one per output column, of the product's element type (float; double for float64
                         products), or NULL for none */
    tfc_epi_act act;
    float alpha;      /* LeakyRelu's slope (a float32 attr in TensorFlow, also for float64 data) */
} tfc_epilogue;

/* The activations one element at a time (edge tiles of the GEMM kernels, and the float64 path). Elu is
 * not here for float32: it goes through tfc_epilogue_act_f32 so that it matches the Elu op's kernel. */
static inline float tfc_epi_act_scalar_f32(float v, tfc_epi_act act, float alpha) {
    switch (act) {
    case TFC_EPI_RELU: return v != v ? v : v > 0 ? v : 0.0f;
    case TFC_EPI_RELU6: return v != v ? v : v > 0 ? (v < 6 ? v : 6.0f) : 0.0f;
    case TFC_EPI_LEAKY_RELU: return v > 0 ? v : v * alpha;
    default: return v;
    }
}

/* y[i * ldy + j] = act(y[i * ldy + j] + bias[col0 + j]) for i < m, j < n (bias float). */
void tfc_epilogue_f32(const tfc_epilogue *ep, float *y, int64_t m, int64_t n, int64_t ldy, int64_t col0);
/* The same for float64 data and a float64 bias. */
void tfc_epilogue_f64(const tfc_epilogue *ep, double *y, int64_t m, int64_t n, int64_t ldy, int64_t col0);
/* Only the activation of ep, on n contiguous floats in place. */
void tfc_epilogue_act_f32(const tfc_epilogue *ep, float *y, int64_t n);
/* tfc_epilogue_f32/_f64 over a contiguous [rows, n] output (bias element j for column j), split across the
 * pool by rows. `dbl` selects float64. */
void tfc_epilogue_rows(tfc_threadpool *pool, const tfc_epilogue *ep, bool dbl, void *y, int64_t rows, int64_t n);

#endif
