/* Internal: Winograd F(2x2, 3x3) convolution of float32 NHWC data (conv_winograd.c).
 *
 * A 3x3 stride-1 convolution computes each 2x2 block of output pixels from the 4x4 input patch under it
 * with 16 products per (input channel, output channel) pair instead of 36 (2.25x fewer multiplies):
 *   y_tile = A^T [ (G g G^T) . (B^T d B) ] A   per channel pair, summed over input channels,
 * and the sum over input channels of the 16 transform points is 16 GEMMs [tiles, in_c] x [in_c, out_c] on
 * tfc's SGEMM kernels. F(2x2, 3x3)'s transforms only add, subtract and halve, and each transform point
 * sums in_c products where the GEMM path sums 9 * in_c in one chain: against float64, a 2x56x56x64 -> 64
 * layer's largest error was 0.47x what tests/ops allows float32 kernels (2e-5 * (1 + |reference|) per
 * element), the GEMM path's and TensorFlow's float32 0.97x. F(4x4, 3x3) would save another 1.8x of the
 * multiplies, but its transforms (entries up to 8 and 1/24) gave 3-7x that tolerance at 64 channels (in a
 * float32 emulation, over the usual choices of interpolation points), so it is not used.
 *
 * Conv2D uses it for 3x3 filters with stride 1, dilation 1, no groups and any padding (SAME, VALID,
 * EXPLICIT), float32 (half and bfloat16 compute in float32 too), where it measured faster than the
 * implicit-GEMM path (tfc_conv_winograd_fwd_ok); Conv2DBackpropInput of such a convolution is the same
 * computation on the output gradient, with the filter rotated by 180 degrees and its channel dims
 * swapped, and "full" padding (2 - pad), or, where dy has clearly fewer 2x2 tiles than dx ("VALID"), the
 * adjoint of the forward transforms over dy's tiles. Conv2DBackpropFilter sums, per transform point, the
 * products of the input tiles' B^T d B and the output gradient tiles' A dY A^T over all tiles (16 GEMMs
 * [in_c, tiles] x [tiles, out_c], or their transposes) and brings them back to 3x3 with G^T . G; it is used
 * where a cost model fitted to measurements expects it faster (tfc_conv_winograd_bwd_filter_ok: enough
 * channels for the transforms to pay). TFC_CONV_WINOGRAD=0 in the environment turns the path off (read
 * once), for comparisons; TFC_CONV_IM2COL=1 (im2col for every convolution) bypasses it too. */
#ifndef TFC_KERNELS_CPU_CONV_WINOGRAD_H
#define TFC_KERNELS_CPU_CONV_WINOGRAD_H

#include <stdbool.h>

#include "kernels/cpu/kernels.h"
#include "ops/conv_geom.h"

/* Whether Conv2D of geometry g (from tfc_conv_geom_init; NHWC or NCHW, the kernels see NHWC) in float32
 * runs on the Winograd path: it applies (3x3, stride 1, dilation 1, groups 1), is not switched off, and is
 * expected faster than the GEMM path for these sizes (small channel counts keep the GEMM path). */
bool tfc_conv_winograd_fwd_ok(const tfc_conv_geom *g);
/* The same for Conv2DBackpropInput of geometry g (the forward convolution's geometry). */
bool tfc_conv_winograd_bwd_input_ok(const tfc_conv_geom *g);
/* The same for Conv2DBackpropFilter of geometry g. */
bool tfc_conv_winograd_bwd_filter_ok(const tfc_conv_geom *g);

/* Forward Conv2D, optionally fused with BiasAdd and Relu (TensorFlow's _FusedConv2D):
 *   y[n, oh, ow, co] = act(sum_{kh, kw, ci} x[n, oh + kh - pad_top, ow + kw - pad_left, ci] f[kh, kw, ci, co]
 *                          + bias[co])
 * x [batch, in_h, in_w, in_c], f [3, 3, in_c, out_c] (TensorFlow's filter layout), y [batch, out_h, out_w,
 * out_c], all float32, NHWC, contiguous; input pixels outside x are zero. bias: out_c values, or NULL for
 * none. relu: act(v) = max(v, 0) (NaN stays NaN, as the Relu op), applied after the bias; false: identity.
 * Only g's batch, in_h/in_w/in_c, out_h/out_w/out_c, pad_top and pad_left are read; g must describe a 3x3
 * filter with stride 1, dilation 1 and one group (any padding, out_h/out_w >= 0). The caller picks the
 * path with tfc_conv_winograd_fwd_ok, but any such geometry computes correctly. Runs on `pool`.
 * Returns false with st set: UNIMPLEMENTED when g is not such a convolution or tfc_sgemm runs on cblas
 * (TFC_GEMM=blas), RESOURCE_EXHAUSTED when its scratch cannot be allocated; y is then unspecified and
 * the caller falls back to the GEMM path (nothing else is left behind). */
bool tfc_conv2d_winograd_fwd_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f,
                                 const float *bias, bool relu, float *y, tfc_status *st);

/* The forward convolution's filter transform alone: u [16][c][co] (floats) = G f G^T of f [3, 3, c, co], as
 * tfc_conv2d_winograd_fwd_f32 computes it on every call; for callers that keep it across calls with an
 * unchanged filter (src/kernels/cpu/fused_pool.c). */
void tfc_conv_winograd_filter_f32(tfc_threadpool *pool, const float *f, int64_t c, int64_t co, float *u);
/* tfc_conv2d_winograd_fwd_f32 with the filter given as its transform u (from tfc_conv_winograd_filter_f32 of
 * a [3, 3, g->in_c, g->out_c] filter): the same results, without the transform. Errors as that function. */
bool tfc_conv2d_winograd_fwd_u_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *u,
                                   const float *bias, bool relu, float *y, tfc_status *st);
/* The same with the tiles cut into `parts` blocks of (nearly) equal size that run on the pool's threads, below
 * the size where the function above runs on one thread (parts <= 0: as that function): for callers that split
 * a small convolution between threads whose hand-off is cheap (a batch-1 inference, fused_pool.c). */
bool tfc_conv2d_winograd_fwd_u_parts_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *u,
                                         const float *bias, bool relu, int parts, float *y, tfc_status *st);

/* Conv2DBackpropInput of the forward convolution g (same conditions on g):
 *   dx[n, ih, iw, ci] = sum_{kh, kw, co} dy[n, ih + pad_top - kh, iw + pad_left - kw, co] f[kh, kw, ci, co]
 * dy [batch, out_h, out_w, out_c], f [3, 3, in_c, out_c], dx [batch, in_h, in_w, in_c]; dy pixels outside
 * dy are zero. Errors as tfc_conv2d_winograd_fwd_f32. */
bool tfc_conv2d_winograd_bwd_input_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *dy, const float *f,
                                       float *dx, tfc_status *st);

/* The same computation as the adjoint of the forward convolution's transforms over dy's tiles (fewer tiles
 * than dx's with VALID padding); tfc_conv2d_winograd_bwd_input_f32 picks it where it is expected faster. */
bool tfc_conv2d_winograd_bwd_input_adj_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *dy,
                                           const float *f, float *dx, tfc_status *st);

/* Conv2DBackpropFilter of the forward convolution g (same conditions on g):
 *   df[kh, kw, ci, co] = sum_{n, oh, ow} x[n, oh + kh - pad_top, ow + kw - pad_left, ci] dy[n, oh, ow, co]
 * x [batch, in_h, in_w, in_c], dy [batch, out_h, out_w, out_c], df [3, 3, in_c, out_c] (overwritten); x
 * pixels outside x are zero. Errors as tfc_conv2d_winograd_fwd_f32. */
bool tfc_conv2d_winograd_bwd_filter_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *dy,
                                        float *df, tfc_status *st);

#endif
