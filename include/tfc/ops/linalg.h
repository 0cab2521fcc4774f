/* tfc — typed wrappers for matrix products: tf.linalg.matmul (TensorFlow's MatMul for two matrices,
 * BatchMatMulV2 otherwise). Recorded on active tapes and differentiable (to any order).
 *
 *   a: [..., m, k] (or [..., k, m] with transpose_a), b: [..., k, n] (or [..., n, k] with transpose_b);
 *   the leading batch dims broadcast as NumPy; the result is [broadcast batch..., m, n].
 *   dtypes: float32 and float64 (OpenBLAS GEMM), float16 and bfloat16 (computed in float32, rounded once),
 *   int8, uint8, int16 (batched only), int32, int64 (exact, wrapping on overflow); a and b of one dtype.
 *   Returns a new tensor owned by the caller (or by the current scope), or NULL with st set:
 *     INVALID_ARGUMENT   a rank below 2, inner dims that differ ("Matrix size-incompatible: In[0]: [2,3],
 *                        In[1]: [4,3]"), batch dims that do not broadcast, mixed or unsupported dtypes, or an
 *                        output with more than 2^63 - 1 elements
 *     RESOURCE_EXHAUSTED out of memory
 *   Inputs are borrowed (never released by the wrapper).
 *   Threads: a large product runs on OpenBLAS's threads, limited to the context's intra-op thread count; a
 *   batch of small products is split across the context's pool. */
#ifndef TFC_OPS_LINALG_H
#define TFC_OPS_LINALG_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.linalg.matmul(a, b, transpose_a, transpose_b): a [..., m, k], b [..., k, n] (after the transposes) ->
 * [..., m, n]; MatMul for two matrices, else BatchMatMulV2 with broadcast batch dims. Dtypes and errors as above. */
TFC_API tfc_tensor *tfc_matmul(tfc_ctx *ctx, const tfc_tensor *a, const tfc_tensor *b, bool transpose_a,
                               bool transpose_b, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
