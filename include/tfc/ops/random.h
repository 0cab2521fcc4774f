/* tfc — typed wrappers for the random ops with TensorFlow 2's seeding rules: tf.random.uniform,
 * tf.random.normal, tf.random.truncated_normal (ops RandomUniform / RandomUniformInt, RandomStandardNormal,
 * TruncatedNormal, scaled and shifted by Mul and AddV2 as TensorFlow does).
 *
 * Seeds (tensorflow/python/framework/random_seed.py get_seed): each call takes an op seed, or
 * TFC_RANDOM_NO_SEED for none, and combines it with the context's global seed (tfc_ctx_set_seed, as
 * tf.random.set_seed):
 *   - global seed and op seed: (global, op) (each taken modulo 2^31 - 1);
 *   - global seed only: the op seed is the next number of the context's op-seed sequence, which is
 *     Python's random.Random(global_seed).randint(0, 2^31 - 1) sequence, exactly as TensorFlow's eager
 *     context draws it, and which tfc_ctx_set_seed restarts;
 *   - op seed only: (87654321, op), TensorFlow's DEFAULT_GRAPH_SEED;
 *   - neither: nondeterministic.
 * With the same seeds, tfc returns the same numbers as TensorFlow on CPU (the Philox4x32-10 generator and
 * TensorFlow's conversions, bit for bit), including the continuation of the stream when a call with the
 * same seeds, dtype and shape dtype is repeated (TensorFlow's cached kernels): e.g. after
 * tfc_ctx_set_seed(ctx, 5), tfc_random_uniform(ctx, {3}, 1, TFC_FLOAT, 0, 1, 1, st) gives the values of
 * tf.random.set_seed(5); tf.random.uniform([3], seed=1).
 *
 * Common contract: shape holds rank dims (each >= 0, rank <= 8). Returns a new tensor owned by the caller
 * (or by the current scope), or NULL with st set: INVALID_ARGUMENT for a negative dim, a dtype not listed,
 * or (integers) minval >= maxval; RESOURCE_EXHAUSTED when out of memory. Not differentiable. */
#ifndef TFC_OPS_RANDOM_H
#define TFC_OPS_RANDOM_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "No op seed" (Python's seed=None). */
#define TFC_RANDOM_NO_SEED INT64_MIN

/* TensorFlow's random_seed.get_seed(op_seed) in ctx: the (seed, seed2) attrs a random op gets. Advances the
 * op-seed sequence when ctx has a global seed and op_seed is TFC_RANDOM_NO_SEED. Without either seed both
 * are 0 (the kernels then seed themselves nondeterministically). */
TFC_API void tfc_random_get_seed(tfc_ctx *ctx, int64_t op_seed, int64_t *seed, int64_t *seed2);

/* Uniform values in [minval, maxval). dtype: float32, float64, float16, bfloat16 (rnd * (maxval - minval) +
 * minval with rnd in [0, 1), computed in dtype), or int32, int64 (RandomUniformInt: integers in
 * [minval, maxval), minval and maxval truncated to integers; minval < maxval unless the shape is empty). */
TFC_API tfc_tensor *tfc_random_uniform(tfc_ctx *ctx, const int64_t *shape, int rank, tfc_dtype dtype, double minval,
                                       double maxval, int64_t seed, tfc_status *st);
/* Normal values rnd * stddev + mean (Box-Muller on Philox). dtype: float32, float64, float16, bfloat16. */
TFC_API tfc_tensor *tfc_random_normal(tfc_ctx *ctx, const int64_t *shape, int rank, tfc_dtype dtype, double mean,
                                      double stddev, int64_t seed, tfc_status *st);
/* Like tfc_random_normal, with the standard normals redrawn until they fall within (-2, 2). */
TFC_API tfc_tensor *tfc_truncated_normal(tfc_ctx *ctx, const int64_t *shape, int rank, tfc_dtype dtype, double mean,
                                         double stddev, int64_t seed, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
