/* Internal: transformed filters kept by a kernel instance across calls (TensorFlow's kernels keep packed or
 * transformed weights in the OpKernel the same way).
 *
 * Inference and training call a convolution with the same filter again and again, and the Winograd path
 * transforms it on every call. An instance of Conv2D, _FusedConv2D or _TfcFusedConv2DMaxPool(Argmax) keeps the
 * transform of the float32 filters it saw (TFC_FILTER_CACHE entries), each keyed by the filter buffer's uid and
 * version (core/tensor_internal.h: the uid is never reused, and every in-place writer of a buffer, such as an
 * optimizer updating the variable, bumps its version first). A filter updated in place therefore misses and is
 * transformed again on its next use, and the cache holds no reference to the buffer, so updates stay in
 * place. Entries in use by a call are not replaced meanwhile; the least recently used other one is. */
#ifndef TFC_KERNELS_CPU_FILTER_CACHE_H
#define TFC_KERNELS_CPU_FILTER_CACHE_H

#include "kernels/cpu/kernels.h"

#define TFC_FILTER_CACHE 4
#define TFC_FILTER_CACHE_MAX_FLOATS ((int64_t)1 << 20) /* 4 MB of transform: 16 x 256 x 256 channels */

typedef struct tfc_filter_cache tfc_filter_cache;

/* A new, empty cache (NULL when out of memory); free with tfc_filter_cache_free (NULL-safe). */
tfc_filter_cache *tfc_filter_cache_new(void);
void tfc_filter_cache_free(tfc_filter_cache *c);

/* The Winograd transform u [16][c][co] of filter f ([3, 3, c, co] float32 with a tfc buffer), found or computed
 * now (tfc_conv_winograd_filter_f32), with a use taken that *token releases (tfc_filter_cache_put). NULL (and
 * *token NULL) when it cannot be kept: no cache, a filter whose buffer tfc did not allocate (wrapped user memory may change unseen), one over TFC_FILTER_CACHE_MAX_FLOATS,
 * every entry in use, or no memory; the caller then transforms on its own. */
const float *tfc_filter_cache_winograd(tfc_filter_cache *c, tfc_threadpool *pool, const tfc_tensor *f, int64_t ci,
                                       int64_t co, void **token);
/* Releases the use taken by tfc_filter_cache_winograd (NULL token: nothing). */
void tfc_filter_cache_put(tfc_filter_cache *c, void *token);
/* Transforms this cache computed since it was made (tests: a second call with the same filter adds none, a call
 * after an in-place update of the filter adds one). */
int64_t tfc_filter_cache_transforms(const tfc_filter_cache *c);

#endif
