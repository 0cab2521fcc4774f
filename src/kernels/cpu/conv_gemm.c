/* GEMM-based Conv2D and its backprops on NHWC data: im2col + GEMM, instantiated for float (tfc's own
 * GEMM on the op's pool, gemm.h) and double (OpenBLAS) from conv_gemm_tmpl.h. */
#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/gemm.h"

/* C[m, n] = alpha op(A) op(B) + beta C, row-major. */
static void gemm_f32(tfc_threadpool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                     int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    tfc_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
}

static void gemm_f64(tfc_threadpool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
    (void)pool;
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha,
                a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

/* C[m, n] = act(A B + bias[col ...]): float in the GEMM's tile stores; double in a pass over the rows just
 * computed (float64 is the reference dtype, not a fast path). */
static void gemm_ep_f32(tfc_threadpool *pool, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                        const float *b, int64_t ldb, float *c, int64_t ldc, const tfc_epilogue *ep, int64_t col) {
    if (!ep || !col) {
        tfc_sgemm_ep(false, false, m, n, k, a, lda, b, ldb, c, ldc, ep, pool);
        return;
    }
    tfc_epilogue e = *ep; /* a grouped convolution's group: its slice of the bias */
    e.bias = e.bias ? (const float *)e.bias + col : NULL;
    tfc_sgemm_ep(false, false, m, n, k, a, lda, b, ldb, c, ldc, &e, pool);
}

static void gemm_ep_f64(tfc_threadpool *pool, int64_t m, int64_t n, int64_t k, const double *a, int64_t lda,
                        const double *b, int64_t ldb, double *c, int64_t ldc, const tfc_epilogue *ep, int64_t col) {
    gemm_f64(pool, false, false, m, n, k, 1, a, lda, b, ldb, 0, c, ldc);
    if (ep) tfc_epilogue_f64(ep, c, m, n, ldc, col);
}

/* ---- float32 without im2col: Winograd (conv_winograd.c), else tfc_sgemm_conv ----
 * 3x3 stride-1 convolutions with enough channels run on the Winograd path (tfc_conv_winograd_fwd_ok; off
 * with TFC_CONV_WINOGRAD=0). The others:
 * Forward convolutions and filter gradients with width dilation 1, and backprop-input with stride 1, read
 * their A rows (columns for the filter gradient) from the (padded) input in place. This saves writing and re-reading the col matrix, which measured 10-15% of a 3x3
 * 64-channel convolution and about half of a one-channel one (the col matrix is 9x its input). Grouped
 * convolutions and the other cases use im2col; TFC_CONV_IM2COL=1 forces it for every convolution, Winograd's
 * included (for comparisons). */
bool tfc_conv_im2col_forced(void) {
    static _Atomic int state; /* 0: not read, 1: forced, 2: not */
    int s = state;
    if (!s) {
        const char *e = getenv("TFC_CONV_IM2COL");
        state = s = e && *e && strcmp(e, "0") ? 1 : 2;
    }
    return s == 1;
}

typedef struct {
    const float *src;
    float *dst;
    int64_t h, w, c, hp, wp, pt, pl;
} pad_job;

static void pad_rows(void *arg, int64_t b, int64_t e) {
    const pad_job *j = arg;
    for (int64_t r = b; r < e; r++) {
        const int64_t n = r / j->hp, ih = r % j->hp - j->pt;
        float *d = j->dst + r * j->wp * j->c;
        if (ih < 0 || ih >= j->h) {
            memset(d, 0, (size_t)(j->wp * j->c) * sizeof(float));
            continue;
        }
        memset(d, 0, (size_t)(j->pl * j->c) * sizeof(float));
        memcpy(d + j->pl * j->c, j->src + (n * j->h + ih) * j->w * j->c, (size_t)(j->w * j->c) * sizeof(float));
        memset(d + (j->pl + j->w) * j->c, 0, (size_t)((j->wp - j->pl - j->w) * j->c) * sizeof(float));
    }
}

/* src [n, h, w, c] into a new buffer [n, h + pt + pb, w + pl + pr, c] with zero borders and `slack` more
 * zeros after it; NULL when out of memory. Returns src itself (nothing to free) when there is neither. */
static const float *padded(tfc_threadpool *pool, const float *src, int64_t n, int64_t h, int64_t w, int64_t c, int64_t pt,
                           int64_t pb, int64_t pl, int64_t pr, int64_t slack, float **owned) {
    *owned = NULL;
    if (!pt && !pb && !pl && !pr && slack <= 0) return src;
    const int64_t hp = h + pt + pb, wp = w + pl + pr, len = n * hp * wp * c;
    float *d = tfc_aligned_alloc((size_t)(len + (slack > 0 ? slack : 0)) * sizeof(float));
    if (!d) return NULL;
    if (slack > 0) memset(d + len, 0, (size_t)slack * sizeof(float));
    pad_job j = {src, d, h, w, c, hp, wp, pt, pl};
    tfc_parallel_for(pool, n * hp, wp * c / 4 + 1, pad_rows, &j);
    *owned = d;
    return d;
}

/* The Winograd path with a fused op's epilogue: its output transform adds the bias and applies a ReLU; the
 * other activations run over the output afterwards (the Relu6/Elu/LeakyRelu ops' own kernels, so the fused
 * op still equals Conv2D + BiasAdd + activation, which take the same path). False: not taken (or no
 * scratch: the GEMM paths then run). */
static bool winograd_fwd_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f,
                             const float *u, float *y, const tfc_epilogue *ep) {
    if (!tfc_conv_winograd_fwd_ok(g)) return false;
    tfc_status st = TFC_STATUS_INIT;
    const bool relu = ep && ep->act == TFC_EPI_RELU;
    const float *bias = ep ? ep->bias : NULL;
    if (!(u ? tfc_conv2d_winograd_fwd_u_f32(pool, g, x, u, bias, relu, y, &st)
            : tfc_conv2d_winograd_fwd_f32(pool, g, x, f, bias, relu, y, &st)))
        return false;
    if (ep && ep->act != TFC_EPI_NONE && !relu) {
        const tfc_epilogue act = {.act = ep->act, .alpha = ep->alpha};
        tfc_epilogue_rows(pool, &act, false, y, g->batch * g->out_h * g->out_w, g->out_c);
    }
    return true;
}

static bool implicit_fwd_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f, float *y,
                             const tfc_epilogue *ep) {
    if (tfc_conv_im2col_forced()) return false;
    if (winograd_fwd_f32(pool, g, x, f, NULL, y, ep)) return true;
    if (g->groups != 1 || g->dil_w != 1) return false;
    float *owned;
    const float *xp = padded(pool, x, g->batch, g->in_h, g->in_w, g->in_c, g->pad_top, g->pad_bottom, g->pad_left,
                             g->pad_right, 0, &owned);
    if (!xp) return false;
    const int64_t hp = g->in_h + g->pad_top + g->pad_bottom, wp = g->in_w + g->pad_left + g->pad_right;
    tfc_gemm_conv cv = {.x = xp, .hp = hp, .wp = wp, .c = g->in_c, .sh = g->stride_h, .sw = g->stride_w,
                        .n = g->batch, .oh = g->out_h, .ow = g->out_w, .kh = g->k_h, .kwc = g->k_w * g->in_c,
                        .seg = g->dil_h * wp * g->in_c, .f = f, .cout = g->out_c, .y = y, .ep = ep};
    bool ok = tfc_sgemm_conv(&cv, pool);
    tfc_aligned_free(owned);
    return ok;
}

/* Stride 1: dx is the forward convolution of dy, padded by (filter extent - 1 - padding) on each side, with
 * the filter flipped in both spatial dims and its channel dims swapped (done while packing it, tfc_gemm_conv's
 * flip: a separate transposed copy of a 3x3x512x512 filter measured a third of the whole op):
 *   dx[n, ih, iw, :] = sum dy[n, ih - pt' + kh' * dil_h, iw - pl' + kw', co] f[KH-1-kh', KW-1-kw', :, co]
 * with pt' = (KH - 1) * dil_h - pad_top, pl' = KW - 1 - pad_left (and likewise at the bottom and right). */
static bool implicit_bwd_input_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *dy, const float *f,
                                   float *dx) {
    if (tfc_conv_im2col_forced()) return false;
    tfc_status wst = TFC_STATUS_INIT; /* its only failures (no scratch) fall back to the paths below */
    if (tfc_conv_winograd_bwd_input_ok(g) && tfc_conv2d_winograd_bwd_input_f32(pool, g, dy, f, dx, &wst)) return true;
    if (g->groups != 1 || g->dil_w != 1 || g->stride_h != 1 || g->stride_w != 1) return false;
    const int64_t KH = g->k_h, KW = g->k_w, C = g->in_c, Cout = g->out_c, eh = (KH - 1) * g->dil_h;
    const int64_t pt = eh - g->pad_top, pb = eh - g->pad_bottom, pl = KW - 1 - g->pad_left, pr = KW - 1 - g->pad_right;
    if (pt < 0 || pb < 0 || pl < 0 || pr < 0) return false; /* paddings beyond the filter (EXPLICIT) */
    /* It multiplies over every input pixel what im2col's GEMM multiplies over every output pixel: with
     * "VALID" on small images (13x13 from 11x11) that is 40% more work than col2im saves. A few input
     * channels make a narrow product that wastes most of each vector. */
    if (g->in_h * g->in_w * 10 > g->out_h * g->out_w * 11 || C < 16) return false;
    float *owned;
    const float *dyp = padded(pool, dy, g->batch, g->out_h, g->out_w, Cout, pt, pb, pl, pr, 0, &owned);
    bool ok = false;
    if (dyp) {
        const int64_t hp = g->out_h + pt + pb, wp = g->out_w + pl + pr;
        tfc_gemm_conv cv = {.x = dyp, .hp = hp, .wp = wp, .c = Cout, .sh = 1, .sw = 1, .n = g->batch, .oh = g->in_h,
                            .ow = g->in_w, .kh = KH, .kwc = KW * Cout, .seg = g->dil_h * wp * Cout, .f = f, .cout = C,
                            .y = dx, .flip = true};
        ok = tfc_sgemm_conv(&cv, pool);
    }
    tfc_aligned_free(owned);
    return ok;
}

/* The filter gradient of a 3x3 stride-1 convolution of a one- or two-channel image on the small-channel
 * Winograd kernel (conv_wgrad_small.c, tfc_conv_wgrad_small_ok), else on the Winograd path where it applies
 * (tfc_conv_winograd_bwd_filter_ok), else with each pixel's receptive field read from the (padded) input
 * (row tiles lie within one filter row of kw * c floats; 4-row tiles for a one-channel image's 3). */
static bool implicit_bwd_filter_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *dy,
                                    float *df) {
    if (tfc_conv_im2col_forced()) return false;
    tfc_status wst = TFC_STATUS_INIT; /* its only failures (no scratch) fall back to the paths below */
    if (tfc_conv_wgrad_small_ok(g) && tfc_conv2d_wgrad_small_f32(pool, g, x, dy, df, &wst)) return true;
    if (tfc_conv_winograd_bwd_filter_ok(g) && tfc_conv2d_winograd_bwd_filter_f32(pool, g, x, dy, df, &wst)) return true;
    if (g->groups != 1 || g->dil_w != 1) return false;
    const int64_t hp = g->in_h + g->pad_top + g->pad_bottom, wp = g->in_w + g->pad_left + g->pad_right;
    tfc_gemm_conv cv = {.hp = hp, .wp = wp, .c = g->in_c, .sh = g->stride_h, .sw = g->stride_w, .n = g->batch,
                        .oh = g->out_h, .ow = g->out_w, .kh = g->k_h, .kwc = g->k_w * g->in_c,
                        .seg = g->dil_h * wp * g->in_c, .cout = g->out_c};
    const int64_t len = g->batch * hp * wp * g->in_c, reach = (int64_t)tfc_sgemm_conv_reach(&cv);
    float *owned;
    cv.x = padded(pool, x, g->batch, g->in_h, g->in_w, g->in_c, g->pad_top, g->pad_bottom, g->pad_left, g->pad_right,
                  reach > len ? reach - len : 0, &owned);
    if (!cv.x) return false;
    bool ok = tfc_sgemm_conv_bwd_filter(&cv, dy, df, pool);
    tfc_aligned_free(owned);
    return ok;
}

#define T float
#define SFX f32
#define GEMM gemm_f32
#define GEMM_EP gemm_ep_f32
#define IMPLICIT_BWD_FILTER implicit_bwd_filter_f32
#define IMPLICIT_FWD implicit_fwd_f32
#define IMPLICIT_BWD_INPUT implicit_bwd_input_f32
#include "kernels/cpu/conv_gemm_tmpl.h"
#undef T
#undef SFX
#undef GEMM
#undef GEMM_EP
#undef IMPLICIT_FWD

/* tfc_conv2d_fwd_ep_f32's path choice up to Winograd: not empty, not a plain GEMM, not forced to im2col. */
bool tfc_conv2d_fwd_winograd_taken(const tfc_conv_geom *g) {
    return g->batch * g->out_h * g->out_w > 0 && g->out_c > 0 && !is_pointwise_f32(g) && !is_full_f32(g) &&
           !tfc_conv_im2col_forced() && tfc_conv_winograd_fwd_ok(g);
}

bool tfc_conv2d_fwd_ep_u_f32(tfc_threadpool *pool, const tfc_conv_geom *g, const float *x, const float *f,
                             const float *u, float *y, const tfc_epilogue *ep, tfc_status *st) {
    if (u && tfc_conv2d_fwd_winograd_taken(g) && winograd_fwd_f32(pool, g, x, f, u, y, ep)) return true;
    return tfc_conv2d_fwd_ep_f32(pool, g, x, f, y, ep, st);
}
#undef IMPLICIT_BWD_INPUT
#undef IMPLICIT_BWD_FILTER

#define T double
#define SFX f64
#define GEMM gemm_f64
#define GEMM_EP gemm_ep_f64
#include "kernels/cpu/conv_gemm_tmpl.h"
#undef T
#undef SFX
#undef GEMM
#undef GEMM_EP
