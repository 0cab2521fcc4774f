/* tfc — typed wrappers for the array ops: reshaping, transposing, slicing, joining, padding and filling
 * (TensorFlow's Reshape, Transpose, ExpandDims, Squeeze, ConcatV2, Split, SplitV, Slice, StridedSlice, Pack,
 * Unpack, Tile, Pad, PadV2, MirrorPad, Fill, ZerosLike, OnesLike, Identity, StopGradient, Shape, Size, Rank,
 * BroadcastTo). Each wrapper runs its op through tfc_execute, so it is recorded on active tapes and is
 * differentiable like the op (to any order).
 *
 * Common contract:
 *   - dtypes: every dtype (float32, float64, float16, bfloat16, int8, uint8, int16, int32, int64, bool, string)
 *     unless a function says otherwise; outputs have the input's dtype.
 *   - Shapes, axes, sizes and multiples are given as int64 arrays; axes may be negative (counted from the
 *     end) where TensorFlow allows it.
 *   - Returns a new tensor owned by the caller (or by the current scope), or NULL (-1 / false) with st set:
 *       INVALID_ARGUMENT   shapes, axes, sizes, permutations or paddings are inconsistent, or the output
 *                          would have more than 2^63 - 1 elements (message names the op and the values)
 *       UNIMPLEMENTED      no kernel for the dtype (e.g. resource tensors)
 *       RESOURCE_EXHAUSTED out of memory
 *   - Inputs are borrowed (never released by the wrapper). Reshape, ExpandDims, Squeeze, Identity and
 *     StopGradient return tensors sharing the input's buffer (tensors are immutable, so this is invisible). */
#ifndef TFC_OPS_ARRAY_H
#define TFC_OPS_ARRAY_H

#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- shapes -------------------------------------------------------------------------------------------- */

/* tf.reshape (Reshape): x with shape dims[0..rank); one dim may be -1 and is then inferred. The element
 * count must stay the same ("Input to reshape is a tensor with 6 values, but the requested shape has 4"). */
TFC_API tfc_tensor *tfc_reshape(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st);
/* tf.transpose (Transpose): output dim i is input dim perm[i]; perm is a permutation of [0, rank) (entries may
 * be negative). perm NULL reverses the dims, as tf.transpose's default. */
TFC_API tfc_tensor *tfc_transpose(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *perm, tfc_status *st);
/* tf.expand_dims (ExpandDims): inserts a dim of size 1 at axis, in [-rank - 1, rank]. */
TFC_API tfc_tensor *tfc_expand_dims(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_status *st);
/* tf.squeeze (Squeeze): removes the size-1 dims listed in axes (n of them), or every size-1 dim when n == 0.
 * A listed dim that is not 1 is INVALID_ARGUMENT. */
TFC_API tfc_tensor *tfc_squeeze(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *axes, int n, tfc_status *st);
/* tf.broadcast_to (BroadcastTo): x repeated along its size-1 (or missing leading) dims to shape dims. */
TFC_API tfc_tensor *tfc_broadcast_to(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *dims, int rank, tfc_status *st);
/* tf.shape (Shape): a 1-D tensor [rank] of out_type TFC_INT32 or TFC_INT64 holding x's dims. Not
 * differentiable. */
TFC_API tfc_tensor *tfc_shape_of(tfc_ctx *ctx, const tfc_tensor *x, tfc_dtype out_type, tfc_status *st);
/* tf.size (Size): scalar element count of x, TFC_INT32 or TFC_INT64. */
TFC_API tfc_tensor *tfc_size_of(tfc_ctx *ctx, const tfc_tensor *x, tfc_dtype out_type, tfc_status *st);
/* tf.rank (Rank): int32 scalar. */
TFC_API tfc_tensor *tfc_rank_of(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);

/* ---- creating ------------------------------------------------------------------------------------------- */

/* tf.fill (Fill): a tensor of shape dims filled with the scalar `value` (its dtype gives the output's).
 * Gradient: with respect to value, the sum of the upstream gradient. */
TFC_API tfc_tensor *tfc_fill(tfc_ctx *ctx, const int64_t *dims, int rank, const tfc_tensor *value, tfc_status *st);
/* tf.zeros / tf.ones: tensors of shape dims and dtype dt (strings: empty; tfc_ones: not for strings). */
TFC_API tfc_tensor *tfc_zeros(tfc_ctx *ctx, tfc_dtype dt, const int64_t *dims, int rank, tfc_status *st);
TFC_API tfc_tensor *tfc_ones(tfc_ctx *ctx, tfc_dtype dt, const int64_t *dims, int rank, tfc_status *st);
/* tf.zeros_like (ZerosLike, every dtype) and tf.ones_like (OnesLike, no strings). Not differentiable. */
TFC_API tfc_tensor *tfc_zeros_like(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
TFC_API tfc_tensor *tfc_ones_like(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
/* tf.identity (Identity): x itself as a new tensor; its gradient passes through. */
TFC_API tfc_tensor *tfc_identity(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);
/* tf.stop_gradient (StopGradient): x, but tapes propagate no gradient through it. */
TFC_API tfc_tensor *tfc_stop_gradient(tfc_ctx *ctx, const tfc_tensor *x, tfc_status *st);

/* ---- slicing -------------------------------------------------------------------------------------------- */

/* tf.slice (Slice): the block starting at begin[i] with size[i] elements in each of x's rank dims; a size of
 * -1 takes the rest of that dim. */
TFC_API tfc_tensor *tfc_slice(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *begin, const int64_t *size,
                              tfc_status *st);

/* The masks of StridedSlice (bit i refers to entry i of begin/end/strides), as tf.strided_slice. */
typedef struct tfc_strided_slice_attrs {
    int32_t begin_mask;       /* ignore begin[i]: start at the first (last, for negative strides) element */
    int32_t end_mask;         /* ignore end[i]: run to the end */
    int32_t ellipsis_mask;    /* entry i is `...` (at most one bit) */
    int32_t new_axis_mask;    /* entry i inserts a size-1 dim (tf.newaxis) */
    int32_t shrink_axis_mask; /* entry i takes the single index begin[i] and drops the dim */
} tfc_strided_slice_attrs;

/* tf.strided_slice (StridedSlice), i.e. Python's x[b0:e0:s0, b1:e1:s1, ...]: n entries of begin, end and
 * strides (strides NULL = all 1; a stride of 0 is INVALID_ARGUMENT). Out-of-range indices are clamped,
 * negative ones count from the end, negative strides walk backwards; masks may be NULL (all zero). */
TFC_API tfc_tensor *tfc_strided_slice(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *begin, const int64_t *end,
                                      const int64_t *strides, int n, const tfc_strided_slice_attrs *masks,
                                      tfc_status *st);

/* ---- joining and splitting -------------------------------------------------------------------------------- */

/* tf.concat (ConcatV2): the n >= 1 tensors joined along axis; all have the same rank (>= 1), dtype, and dims
 * except along axis ("ConcatOp : Dimension 1 in both shapes must be equal: ..."). n == 1 returns Identity. */
TFC_API tfc_tensor *tfc_concat(tfc_ctx *ctx, const tfc_tensor *const *values, int n, int64_t axis, tfc_status *st);
/* tf.stack (Pack): the n >= 1 tensors of one shape stacked along a new dim at axis, in [-rank-1, rank]. */
TFC_API tfc_tensor *tfc_stack(tfc_ctx *ctx, const tfc_tensor *const *values, int n, int64_t axis, tfc_status *st);
/* tf.unstack (Unpack): x's slices along axis, dim(axis) new tensors written to out (room for max_out).
 * Returns the count, or -1 with st set (INVALID_ARGUMENT also when max_out is too small). */
TFC_API int tfc_unstack(tfc_ctx *ctx, const tfc_tensor *x, int64_t axis, tfc_tensor **out, int max_out,
                        tfc_status *st);
/* tf.split with a number (Split): num_split equal parts along axis (dim(axis) must divide evenly), written to
 * out[0..num_split). */
TFC_API bool tfc_split(tfc_ctx *ctx, const tfc_tensor *x, int num_split, int64_t axis, tfc_tensor **out,
                       tfc_status *st);
/* tf.split with sizes (SplitV): n parts of sizes[i] elements along axis (one size may be -1: the rest),
 * written to out[0..n). */
TFC_API bool tfc_split_v(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *sizes, int n, int64_t axis,
                         tfc_tensor **out, tfc_status *st);

/* ---- tiling and padding ------------------------------------------------------------------------------------ */

/* tf.tile (Tile): x repeated multiples[i] >= 0 times along each of its rank dims. */
TFC_API tfc_tensor *tfc_tile(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *multiples, tfc_status *st);
/* tf.pad: paddings holds (before, after) >= 0 for each of x's rank dims (2 * rank values). mode NULL or
 * "CONSTANT" pads with constant_values (Pad when 0, else PadV2; numeric dtypes); "REFLECT" and "SYMMETRIC"
 * mirror x (MirrorPad; paddings must be < dim, resp. <= dim). */
TFC_API tfc_tensor *tfc_pad(tfc_ctx *ctx, const tfc_tensor *x, const int64_t *paddings, const char *mode,
                            double constant_values, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
