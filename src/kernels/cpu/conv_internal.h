/* Internal: shared pieces of the conv/pool CPU kernels.
 *
 * The compute kernels work on NHWC data in a compute dtype (float for float/half/bfloat16, double for
 * double/int32). conv_load/conv_store move tensors in and out of that form: a tensor that already is NHWC in
 * the compute dtype is used in place; NCHW tensors are transposed and half/bfloat16/int32 converted into
 * scratch buffers (one O(size) pass each, small next to the convolution itself). */
#ifndef TFC_KERNELS_CPU_CONV_INTERNAL_H
#define TFC_KERNELS_CPU_CONV_INTERNAL_H

#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/kernels.h"
#include "ops/conv_geom.h"

/* im2col tiles: about this many elements (4 MB of float: the tile is still in cache when the GEMM packs
 * it), but at least TFC_CONV_TILE_MIN_M output pixels so each GEMM is big enough to run well, up to
 * TFC_CONV_TILE_MAX_ELEMS. A single output row is the smallest tile. */
#define TFC_CONV_TILE_ELEMS ((int64_t)1 << 20)
#define TFC_CONV_TILE_MIN_M 256
#define TFC_CONV_TILE_MAX_ELEMS ((int64_t)1 << 23)
/* Output rows (n, oh) per im2col tile of g by the rules above, at most all of them. */
int64_t tfc_conv_tile_rows(const tfc_conv_geom *g);

/* The environment's switches for comparisons, read once: TFC_CONV_IM2COL=1 (im2col + GEMM for every
 * convolution, the Winograd and implicit-GEMM paths off; conv_gemm.c) and TFC_CONV_WINOGRAD=0 (no Winograd
 * path; conv_winograd.c). */
bool tfc_conv_im2col_forced(void);
bool tfc_conv_winograd_enabled(void);

/* float for float/half/bfloat16, double for double and integer dtypes. */
tfc_dtype tfc_conv_compute_dtype(tfc_dtype dt);

/* A compute-form view of a tensor: data points into the tensor or into owned scratch. */
typedef struct conv_buf {
    void *data;
    bool owned;
} conv_buf;

/* Input t (4-D, layout nchw when `nchw`) as NHWC data of dtype ct. */
bool tfc_conv_load(tfc_kernel_ctx *k, const tfc_tensor *t, tfc_dtype ct, bool nchw, conv_buf *b, tfc_status *st);
/* Output buffer for out in NHWC dtype ct: out's own data when it already has that form. */
bool tfc_conv_out(const tfc_tensor *out, tfc_dtype ct, bool nchw, conv_buf *b, tfc_status *st);
/* Writes b (from tfc_conv_out, now filled) into out and releases it. */
bool tfc_conv_store(tfc_kernel_ctx *k, conv_buf *b, tfc_tensor *out, tfc_dtype ct, bool nchw, tfc_status *st);
void tfc_conv_release(conv_buf *b);

/* dst[n][j][i] = src[n][i][j] for src [n, a, b] with elements of `es` bytes (2, 4 or 8). */
void tfc_conv_transpose(tfc_threadpool *pool, const void *src, void *dst, int64_t n, int64_t a, int64_t b, size_t es);
/* Converts `n` elements between dtypes (any numeric pair; integer targets wrap like C casts of int64). */
void tfc_conv_convert(tfc_threadpool *pool, const void *src, tfc_dtype sdt, void *dst, tfc_dtype ddt, int64_t n);
/* Parallel memset(0) of n bytes. */
void tfc_conv_zero(tfc_threadpool *pool, void *p, size_t n);

/* GEMM-based convolutions on NHWC data (conv_gemm.c): x [batch, in_h, in_w, in_c], f [k_h, k_w, k_c, out_c],
 * y [batch, out_h, out_w, out_c]. Grouped convolution when g->groups > 1. False only when out of memory. */
bool tfc_conv2d_fwd_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f, float *y, tfc_status *st);
bool tfc_conv2d_fwd_f64(tfc_threadpool *pool, const tfc_conv_geom *g, const double *x, const double *f, double *y, tfc_status *st);
/* The forward convolution with a fused op's epilogue (epilogue.h; bias: out_c values of the data type, NULL
 * ep: none): float32 applies it as the GEMM stores each output tile, float64 in a pass over each tile's rows. */
bool tfc_conv2d_fwd_ep_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f, float *y,
                           const tfc_epilogue *ep, tfc_status *st);
bool tfc_conv2d_fwd_ep_f64(tfc_threadpool *pool, const tfc_conv_geom *g, const double *x, const double *f, double *y,
                           const tfc_epilogue *ep, tfc_status *st);
/* Whether tfc_conv2d_fwd_ep_f32 of g runs on the Winograd path (where a kept filter transform serves it). */
bool tfc_conv2d_fwd_winograd_taken(const tfc_conv_geom *g);
/* tfc_conv2d_fwd_ep_f32 with the filter's Winograd transform u (filter_cache.h; NULL: none) used where that
 * path is taken: the same results. */
bool tfc_conv2d_fwd_ep_u_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f,
                             const float *u, float *y, const tfc_epilogue *ep, tfc_status *st);
bool tfc_conv2d_bwd_input_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *dy, const float *f, float *dx, tfc_status *st);
bool tfc_conv2d_bwd_input_f64(tfc_threadpool *pool, const tfc_conv_geom *g, const double *dy, const double *f, double *dx, tfc_status *st);
bool tfc_conv2d_bwd_filter_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *dy, float *df, tfc_status *st);
bool tfc_conv2d_bwd_filter_f64(tfc_threadpool *pool, const tfc_conv_geom *g, const double *x, const double *dy, double *df, tfc_status *st);

/* The same three in bfloat16 on vdpbf16ps with float32 accumulation (conv_bf16.c), one group only; conv.c
 * takes them when tfc_bgemm_native() (gemm_bf16.h). */
bool tfc_conv2d_fwd_bf16(tfc_threadpool *pool, const tfc_conv_geom *g, const uint16_t *x, const uint16_t *f,
                         uint16_t *y, tfc_status *st);
bool tfc_conv2d_bwd_input_bf16(tfc_threadpool *pool, const tfc_conv_geom *g, const uint16_t *dy, const uint16_t *f,
                               uint16_t *dx, tfc_status *st);
bool tfc_conv2d_bwd_filter_bf16(tfc_threadpool *pool, const tfc_conv_geom *g, const uint16_t *x, const uint16_t *dy,
                                uint16_t *df, tfc_status *st);

/* Conv2DBackpropFilter of a 3x3, stride-1, dilation-1, one-group float32 convolution with 1-4 input channels
 * (conv_wgrad_small.c): Winograd F(2x2, 3x3) with the 16 transform points' sums in vector registers.
 *   df[kh, kw, ci, co] = sum_{n, oh, ow} x[n, oh + kh - pad_top, ow + kw - pad_left, ci] dy[n, oh, ow, co]
 * x [batch, in_h, in_w, in_c], dy [batch, out_h, out_w, out_c], df [3, 3, in_c, out_c] (overwritten); pixels
 * outside x are zero; any padding. _ok: whether the Conv2DBackpropFilter kernel takes it for g (such a
 * geometry with 1 input channel, or 2 and at least 32 output channels, and TFC_CONV_WINOGRAD is not 0). The run: false with st set when g is not such a convolution
 * (UNIMPLEMENTED) or its scratch cannot be allocated (RESOURCE_EXHAUSTED), df then unspecified. */
bool tfc_conv_wgrad_small_ok(const tfc_conv_geom *g);
bool tfc_conv2d_wgrad_small_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *dy,
                                float *df, tfc_status *st);
/* The same filter gradient with dy = ReluGrad(MaxPoolGrad(y, MaxPool(y), dp), y) formed per 2x2 tile instead
 * of read (the gradient of _TfcFusedConv2DMaxPoolTrain: y the conv output [batch, out_h, out_w, out_c], pg the
 * pool's geometry over it, dp [batch, pg->out_h, pg->out_w, out_c]), and db[co] = the sum of that dy over all
 * pixels (the bias gradient). df holds the bits tfc_conv2d_wgrad_small_f32 computes from
 * _TfcMaxPoolReluBiasGrad's dy; db is summed in another order (float per block, double across). _ok: whether
 * it applies (tfc_conv_wgrad_small_ok's geometries, a 2x2 pool of stride 2 without top or left padding, so
 * its windows are the 2x2 tiles). Errors as tfc_conv2d_wgrad_small_f32. */
bool tfc_conv_wgrad_small_pool_ok(const tfc_conv_geom *g, const tfc_conv_geom *pg);
/* The routing byte of a 2x2 pool window (per channel) that _TfcFusedConv2DMaxPoolArgmax keeps instead of the
 * conv output: the cell (row-major 0..3) _TfcMaxPoolReluBiasGrad's comparisons route the gradient to, and
 * whether that cell's value is > 0 (its ReLU factor). */
#define TFC_POOL_ARGMAX_CELL 3
#define TFC_POOL_ARGMAX_POS 4
/* tfc_conv2d_wgrad_small_pool_f32 with the routing bytes amax [batch, pg->out_h, pg->out_w, out_c] in place of
 * y: the same df bits and db. */
bool tfc_conv2d_wgrad_small_argmax_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const tfc_conv_geom *pg,
                                       const float *x, const uint8_t *amax, const float *dp, float *df, float *db,
                                       tfc_status *st);
bool tfc_conv2d_wgrad_small_pool_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const tfc_conv_geom *pg,
                                     const float *x, const float *y, const float *dp, float *df, float *db,
                                     tfc_status *st);

/* Direct depthwise convolutions on NHWC data (conv_depthwise.c): f [k_h, k_w, in_c, mult],
 * y [batch, out_h, out_w, in_c * mult]. */
bool tfc_depthwise_fwd_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f, float *y, tfc_status *st);
bool tfc_depthwise_fwd_f64(tfc_threadpool *pool, const tfc_conv_geom *g, const double *x, const double *f, double *y, tfc_status *st);
bool tfc_depthwise_bwd_input_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *dy, const float *f, float *dx, tfc_status *st);
bool tfc_depthwise_bwd_input_f64(tfc_threadpool *pool, const tfc_conv_geom *g, const double *dy, const double *f, double *dx, tfc_status *st);
bool tfc_depthwise_bwd_filter_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *dy, float *df, tfc_status *st);
bool tfc_depthwise_bwd_filter_f64(tfc_threadpool *pool, const tfc_conv_geom *g, const double *x, const double *dy, double *df, tfc_status *st);

/* A conv/pool kernel instance's state (conv.c, fused.c, pool.c): the window attrs parsed and validated once at
 * creation (TensorFlow's OpKernel constructors do the same), a fused op's epilogue (bias unset), and for the
 * forward Conv2D / _FusedConv2D the kept Winograd transforms of the filters it saw (filter_cache.h). */
struct tfc_filter_cache;
typedef struct tfc_conv_state {
    tfc_conv_kind kind;
    tfc_conv_attrs a;
    tfc_epilogue ep;
    struct tfc_filter_cache *fc; /* NULL: none kept */
} tfc_conv_state;
/* Parses k's attrs for a kernel of `kind` into s (fused: its fused_ops too; filter_cache: make a cache); errors
 * name the op and the attr. tfc_conv_state_of gives the instance's state, or parses into *tmp for a call
 * without instance (NULL with st set on bad attrs). */
bool tfc_conv_state_init(const tfc_kernel_ctx *k, tfc_conv_kind kind, bool fused, bool filter_cache,
                         tfc_conv_state *s, tfc_status *st);
const tfc_conv_state *tfc_conv_state_of(const tfc_kernel_ctx *k, tfc_conv_kind kind, bool fused,
                                        tfc_conv_state *tmp, tfc_status *st);
/* Instance create/destroy for the conv/pool kernels (tfc_kernel_def). */
bool tfc_conv_create_2d(tfc_kernel_ctx *k, void **state, tfc_status *st);
bool tfc_conv_create_2d_fwd(tfc_kernel_ctx *k, void **state, tfc_status *st);
bool tfc_conv_create_fused(tfc_kernel_ctx *k, void **state, tfc_status *st);
bool tfc_conv_create_depthwise(tfc_kernel_ctx *k, void **state, tfc_status *st);
bool tfc_conv_create_pool(tfc_kernel_ctx *k, void **state, tfc_status *st);
void tfc_conv_state_destroy(void *state);
/* A fused op's fused_ops / leakyrelu_alpha as an epilogue without bias (_FusedConv2D, _FusedMatMul); errors name
 * the op and the value (tfc_fused_spec_read). */
bool tfc_fused_epilogue_read(const tfc_kernel_ctx *k, tfc_epilogue *ep, tfc_status *st);

/* Pooling kernels (pool.c), registered by conv.c's table. */
bool tfc_kernel_max_pool(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_kernel_max_pool_grad(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_kernel_max_pool_grad_grad(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_kernel_avg_pool(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_kernel_avg_pool_grad(tfc_kernel_ctx *k, tfc_status *st);

#endif
