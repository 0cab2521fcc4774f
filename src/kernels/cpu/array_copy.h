/* Internal: the strided block copy behind the data-movement kernels (Transpose, Slice, StridedSlice, Concat,
 * Split, Pack, Unpack, Tile, Pad, BroadcastTo). Each describes its copy as a block of `dims` walked with
 * per-dimension element strides in the source and the destination; the engine drops unit dims, merges
 * dims that are contiguous in both, then copies contiguous rows with memcpy, transposes 2-D tiles in
 * cache-sized blocks when the destination's innermost dim is strided in the source, and otherwise runs a
 * typed strided loop, splitting the rows over the thread pool when the copy is large. Strides may be 0
 * (broadcast) or negative (reversed StridedSlice). */
#ifndef TFC_KERNELS_CPU_ARRAY_COPY_H
#define TFC_KERNELS_CPU_ARRAY_COPY_H

#include "kernels/cpu/kernels.h"

#define TFC_COPY_MAX_RANK (2 * TFC_MAX_RANK) /* Tile views its output as [m0, d0, m1, d1, ...] */

/* Copies the block: dst[dst_off + sum_i idx_i * dst_strides[i]] = src[src_off + sum_i idx_i * src_strides[i]]
 * for every index with 0 <= idx_i < dims[i] (offsets and strides in elements of dt). Destination elements
 * must be distinct. Strings are deep-copied (tfc_tstring_assign); false (RESOURCE_EXHAUSTED) only when
 * that runs out of memory. */
bool tfc_array_copy(tfc_threadpool *pool, tfc_dtype dt, const void *src, int64_t src_off, const int64_t *src_strides,
                    void *dst, int64_t dst_off, const int64_t *dst_strides, const int64_t *dims, int rank,
                    tfc_status *st);

/* Row-major element strides of a shape. */
void tfc_array_strides(const tfc_shape *s, int64_t *strides);

/* Sets n elements at dst to the element at value (dtype dt; strings are assigned). */
bool tfc_array_fill(tfc_threadpool *pool, tfc_dtype dt, void *dst, int64_t n, const void *value, tfc_status *st);

#endif
