/* Internal: the eager context's cache of kernel instances (TensorFlow's eager kernel cache). A call of an op
 * whose kernel has a create function finds its instance by (kernel, attrs, input dtypes) instead of
 * creating one per call, so repeated calls skip attr parsing and a stateful kernel (a random generator)
 * continues its state. Bounded: the least recently used instance of a probe window is replaced. */
#ifndef TFC_EAGER_KERNEL_CACHE_H
#define TFC_EAGER_KERNEL_CACHE_H

#include "device/device.h"

#define TFC_KERNEL_CACHE_SLOTS 512 /* most instances one context keeps */

typedef struct tfc_kernel_cache tfc_kernel_cache;

/* The instance for this call, found or created (a reference taken: release with tfc_kernel_inst_unref
 * after the compute). NULL with st set when creation fails. */
tfc_kernel_inst *tfc_kernel_cache_get(tfc_ctx *ctx, const tfc_kernel_entry *ke, const tfc_op *op,
                                      const tfc_attrs *attrs, const tfc_dtype *in_dtypes, int n_in, tfc_status *st);
/* The instance of op's CPU kernel for attrs and in_dtypes (the kernel context's instance_of): NULL with st
 * set when op has no kernel with a create function or creation fails. */
tfc_kernel_inst *tfc_kernel_cache_instance_of(tfc_ctx *ctx, const tfc_op *op, const tfc_attrs *attrs,
                                              const tfc_dtype *in_dtypes, int n_in, tfc_status *st);
/* Drops every instance of ctx's cache (tfc_ctx_set_seed: seeded random streams restart, as TensorFlow's
 * clearing of its kernel cache; tfc_ctx_free). */
void tfc_kernel_cache_clear(tfc_ctx *ctx);
/* Frees the cache itself (tfc_ctx_free). */
void tfc_kernel_cache_free(tfc_ctx *ctx);

typedef struct tfc_kernel_cache_stats {
    int size;          /* instances held now */
    int64_t hits, misses, evictions;
} tfc_kernel_cache_stats;
/* Counters of ctx's cache (zeros when it has none yet). */
tfc_kernel_cache_stats tfc_kernel_cache_stats_get(tfc_ctx *ctx);

#endif
