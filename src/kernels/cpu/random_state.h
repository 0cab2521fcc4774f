/* Internal: per-context generator state of the stateful random kernels.
 *
 * TensorFlow's eager runtime caches one kernel object per (op, attrs) in the context; a random kernel owns a
 * Philox generator seeded from its (seed, seed2) attrs and advances it by 256 samples per output element on
 * every call, so calling tf.raw_ops.RandomUniform twice with the same seeds continues one stream, and
 * tf.random.set_seed (which clears the kernel cache) restarts it. tfc keeps the same state in a table keyed
 * by (context, op, attrs); the eager context drops a context's entries when it is freed or reseeded. */
#ifndef TFC_KERNELS_CPU_RANDOM_STATE_H
#define TFC_KERNELS_CPU_RANDOM_STATE_H

#include "tfc/op.h"

/* Forgets every generator state of ctx (tfc_ctx_free, tfc_ctx_set_seed). */
void tfc_random_state_clear(tfc_ctx *ctx);

#endif
