/* tfc — typed wrappers for the indexing ops: gathering and scattering by index, segment sums, one-hot
 * encoding, ranges, the coordinates of true elements, reversal, cumulative sums and top-k (TensorFlow's
 * GatherV2, GatherNd, ScatterNd, UnsortedSegmentSum, OneHot, Range, Where, ReverseV2, Cumsum, TopKV2). Each
 * wrapper runs its op through tfc_execute, so it is recorded on active tapes and differentiable like the op.
 *
 * Common contract:
 *   - Index tensors (indices, segment_ids) are int16, int32 or int64 (OneHot: uint8, int8, int32, int64).
 *     Indices are checked: an index outside its dimension is INVALID_ARGUMENT with TensorFlow's CPU message
 *     ("GatherV2: indices[3] = 7 is not in [0, 5)"), except where a function says otherwise.
 *   - Data dtypes: float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64, and bool / string
 *     where noted; outputs have the data's dtype unless noted.
 *   - Returns a new tensor owned by the caller (or by the current scope), or NULL (false) with st set:
 *       INVALID_ARGUMENT   bad ranks, shapes, axes, indices, attr values, or an output of more than 2^63 - 1
 *                          elements (the message names the op and the offending values)
 *       UNIMPLEMENTED      no kernel for the dtype
 *       RESOURCE_EXHAUSTED out of memory
 *   - Inputs are borrowed (never released by the wrapper).
 *   - Gradients (tape): gather, gather_nd, scatter_nd (w.r.t. updates), unsorted_segment_sum (w.r.t. data),
 *     reverse, cumsum and top_k (w.r.t. input) are differentiable; one_hot, range and where are not. The
 *     gather gradient is dense (tfc has no IndexedSlices): the same values as TensorFlow's after
 *     tf.convert_to_tensor. */
#ifndef TFC_OPS_INDEXING_H
#define TFC_OPS_INDEXING_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.gather (GatherV2): slices of params along `axis` (in [-rank, rank)) picked by indices.
 *   params [P0..Pa-1, Pa, Pa+1..], indices [I0..In-1]  ->  [P0..Pa-1, Ib..In-1, Pa+1..]
 * batch_dims (in [-rank(indices), rank(indices)], <= axis) leading dims are shared by params and indices
 * (tf.gather's batch_dims). Every dtype including bool and string. */
TFC_API tfc_tensor *tfc_gather(tfc_ctx *ctx, const tfc_tensor *params, const tfc_tensor *indices, int64_t axis,
                               int64_t batch_dims, tfc_status *st);

/* tf.gather_nd (GatherNd): indices [..., D] (D <= rank(params)) address elements (D == rank) or slices of
 * params; output [indices.shape[:-1], params.shape[D:]]. Every dtype including bool and string. */
TFC_API tfc_tensor *tfc_gather_nd(tfc_ctx *ctx, const tfc_tensor *params, const tfc_tensor *indices, tfc_status *st);

/* tf.scatter_nd (ScatterNd): a zero tensor of shape dims[0..rank) into which updates
 * [indices.shape[:-1], dims[D:]] are added at indices [..., D]; duplicate indices add up (bool: logical or,
 * string: concatenation in index order). The shape is passed to the op in indices' dtype. */
TFC_API tfc_tensor *tfc_scatter_nd(tfc_ctx *ctx, const tfc_tensor *indices, const tfc_tensor *updates,
                                   const int64_t *dims, int rank, tfc_status *st);

/* tf.math.unsorted_segment_sum (UnsortedSegmentSum): output[s, ...] = sum of data[i, ...] over the i with
 * segment_ids[i] == s. segment_ids' shape is a prefix of data's; output [num_segments, data.shape[rank(ids):]].
 * Negative ids are dropped (as TensorFlow); ids >= num_segments are INVALID_ARGUMENT. No bool or string. */
TFC_API tfc_tensor *tfc_unsorted_segment_sum(tfc_ctx *ctx, const tfc_tensor *data, const tfc_tensor *segment_ids,
                                             int64_t num_segments, tfc_status *st);

/* tf.one_hot (OneHot): a new dim of size depth (>= 0) at axis (-1 = last, else [0, rank(indices)]) holding
 * on_value where the index equals the position and off_value elsewhere; indices outside [0, depth) give an
 * all-off row (no error). dtype: the output dtype (0 = float32), any non-string dtype (bool: value != 0). */
TFC_API tfc_tensor *tfc_one_hot(tfc_ctx *ctx, const tfc_tensor *indices, int32_t depth, double on_value,
                                double off_value, int64_t axis, tfc_dtype dtype, tfc_status *st);

/* tf.range (Range): [start, start + delta, ...) up to but excluding limit, 1-D of
 * ceil((limit - start) / delta) elements. dtype: int8, int16, int32, int64, float16, bfloat16, float32,
 * float64, or 0 for tf.range's choice (int32 when start, limit and delta are whole numbers, else float32).
 * INVALID_ARGUMENT: delta == 0 ("Requires delta != 0"), delta of the wrong sign, more than 2^63 - 1 elements.
 * Values beyond 2^53 cannot be given exactly as doubles: use tfc_execute("Range") with int64 tensors. */
TFC_API tfc_tensor *tfc_range(tfc_ctx *ctx, double start, double limit, double delta, tfc_dtype dtype, tfc_status *st);

/* tf.where with one argument (Where): int64 [num_true, rank] coordinates of the non-zero (true) elements of
 * condition (rank >= 1; any numeric dtype or bool; NaN counts as true), in row-major order. */
TFC_API tfc_tensor *tfc_where(tfc_ctx *ctx, const tfc_tensor *condition, tfc_status *st);

/* tf.reverse (ReverseV2): tensor with the n dims listed in axes (each in [-rank, rank), no repeats)
 * reversed. Every dtype including bool and string. */
TFC_API tfc_tensor *tfc_reverse(tfc_ctx *ctx, const tfc_tensor *tensor, const int64_t *axes, int n, tfc_status *st);

/* tf.math.cumsum (Cumsum): running sums along axis (in [-rank, rank)); exclusive: each output excludes its
 * own element; reverse: sums from the end. Numeric dtypes (integers wrap; float16 and bfloat16 round after
 * every addition, as TensorFlow). */
TFC_API tfc_tensor *tfc_cumsum(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, bool exclusive, bool reverse,
                               tfc_status *st);

/* tf.math.top_k (TopKV2): the k largest entries of each row along the last dim (input rank >= 1,
 * 0 <= k <= last dim: "input must have at least k columns"). *values: input's dtype, shape [..., k];
 * *indices: int32 positions in the row. Larger values first, NaN largest, ties by lower index; with
 * sorted = false the k entries come in index order. Numeric dtypes (no bool). Returns false with st set
 * (and both outputs NULL) on error. */
TFC_API bool tfc_top_k(tfc_ctx *ctx, const tfc_tensor *input, int64_t k, bool sorted, tfc_tensor **values,
                       tfc_tensor **indices, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
