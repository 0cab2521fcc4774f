/* Depthwise convolution on NHWC data, direct loops. Each channel sees only its own KH x KW window, so a GEMM
 * formulation degenerates into C tiny products; instead every tap is a vector operation over the channels
 * (contiguous in NHWC), which the compiler vectorises. Parallel over output rows (forward), input rows
 * (backprop input, a gather with no write conflicts) and row chunks with private partial sums reduced at
 * the end (backprop filter).
 *   x [N, H, W, C]   f [KH, KW, C, M]   y [N, OH, OW, C*M] (output channel c*M + m) */
#include <string.h>

#include "kernels/cpu/conv_internal.h"

typedef struct {
    const tfc_conv_geom *g;
    const void *a, *b;  /* fwd: x, f; bwd input: dy, f; bwd filter: x, dy */
    void *out;          /* bwd filter: partial sums [chunks][KH*KW*C*M] */
    int64_t rows_per_chunk;
} dw_job;

#define DW_DEFINE(T, SFX)                                                                                   \
    static void dw_fwd_rows_##SFX(void *arg, int64_t b, int64_t e) {                                     \
        const dw_job *j = arg;                                                                              \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t H = g->in_h, W = g->in_w, C = g->in_c, M = g->mult, OC = g->out_c, OH = g->out_h;     \
        const int64_t OW = g->out_w, KH = g->k_h, KW = g->k_w;                                              \
        const T *x = j->a, *f = j->b;                                                                       \
        for (int64_t r = b; r < e; r++) {                                                                   \
            const int64_t n = r / OH, oh = r % OH;                                                          \
            T *yr = (T *)j->out + r * OW * OC;                                                              \
            memset(yr, 0, (size_t)(OW * OC) * sizeof(T));                                                   \
            for (int64_t kh = 0; kh < KH; kh++) {                                                           \
                const int64_t ih = oh * g->stride_h - g->pad_top + kh * g->dil_h;                           \
                if (ih < 0 || ih >= H) continue;                                                            \
                const T *xr = x + (n * H + ih) * W * C;                                                     \
                for (int64_t ow = 0; ow < OW; ow++) {                                                       \
                    T *restrict yp = yr + ow * OC;                                                          \
                    const int64_t iw0 = ow * g->stride_w - g->pad_left;                                     \
                    for (int64_t kw = 0; kw < KW; kw++) {                                                   \
                        const int64_t iw = iw0 + kw * g->dil_w;                                             \
                        if (iw < 0 || iw >= W) continue;                                                    \
                        const T *restrict xp = xr + iw * C, *restrict fp = f + (kh * KW + kw) * OC;         \
                        if (M == 1) {                                                                       \
                            for (int64_t c = 0; c < C; c++) yp[c] += xp[c] * fp[c];                         \
                        } else {                                                                            \
                            for (int64_t c = 0; c < C; c++)                                                 \
                                for (int64_t m = 0; m < M; m++) yp[c * M + m] += xp[c] * fp[c * M + m];     \
                        }                                                                                   \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
                                                                                                            \
    static void dw_bin_rows_##SFX(void *arg, int64_t b, int64_t e) {                                      \
        const dw_job *j = arg;                                                                              \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t H = g->in_h, W = g->in_w, C = g->in_c, M = g->mult, OC = g->out_c, OH = g->out_h;     \
        const int64_t OW = g->out_w, KH = g->k_h, KW = g->k_w;                                              \
        const T *dy = j->a, *f = j->b;                                                                      \
        for (int64_t u = b; u < e; u++) {                                                                   \
            const int64_t n = u / H, ih = u % H;                                                            \
            T *dxr = (T *)j->out + u * W * C;                                                               \
            memset(dxr, 0, (size_t)(W * C) * sizeof(T));                                                    \
            for (int64_t kh = 0; kh < KH; kh++) {                                                           \
                const int64_t t = ih + g->pad_top - kh * g->dil_h;                                          \
                if (t < 0 || t % g->stride_h) continue;                                                     \
                const int64_t oh = t / g->stride_h;                                                         \
                if (oh >= OH) continue;                                                                     \
                const T *dyr = dy + (n * OH + oh) * OW * OC;                                                \
                for (int64_t ow = 0; ow < OW; ow++) {                                                       \
                    const T *restrict dyp = dyr + ow * OC;                                                  \
                    const int64_t iw0 = ow * g->stride_w - g->pad_left;                                     \
                    for (int64_t kw = 0; kw < KW; kw++) {                                                   \
                        const int64_t iw = iw0 + kw * g->dil_w;                                             \
                        if (iw < 0 || iw >= W) continue;                                                    \
                        T *restrict dxp = dxr + iw * C;                                                     \
                        const T *restrict fp = f + (kh * KW + kw) * OC;                                     \
                        if (M == 1) {                                                                       \
                            for (int64_t c = 0; c < C; c++) dxp[c] += dyp[c] * fp[c];                       \
                        } else {                                                                            \
                            for (int64_t c = 0; c < C; c++) {                                               \
                                T s = 0;                                                                    \
                                for (int64_t m = 0; m < M; m++) s += dyp[c * M + m] * fp[c * M + m];        \
                                dxp[c] += s;                                                                \
                            }                                                                               \
                        }                                                                                   \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
                                                                                                            \
    static void dw_bfil_chunks_##SFX(void *arg, int64_t b, int64_t e) {                                   \
        const dw_job *j = arg;                                                                              \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t H = g->in_h, W = g->in_w, C = g->in_c, M = g->mult, OC = g->out_c, OH = g->out_h;     \
        const int64_t OW = g->out_w, KH = g->k_h, KW = g->k_w, rows = g->batch * OH, FS = KH * KW * OC;     \
        const T *x = j->a, *dy = j->b;                                                                      \
        for (int64_t ci = b; ci < e; ci++) {                                                                \
            T *acc = (T *)j->out + ci * FS;                                                                 \
            memset(acc, 0, (size_t)FS * sizeof(T));                                                         \
            int64_t r1 = (ci + 1) * j->rows_per_chunk;                                                      \
            if (r1 > rows) r1 = rows;                                                                       \
            for (int64_t r = ci * j->rows_per_chunk; r < r1; r++) {                                         \
                const int64_t n = r / OH, oh = r % OH;                                                      \
                const T *dyr = dy + r * OW * OC;                                                            \
                for (int64_t kh = 0; kh < KH; kh++) {                                                       \
                    const int64_t ih = oh * g->stride_h - g->pad_top + kh * g->dil_h;                       \
                    if (ih < 0 || ih >= H) continue;                                                        \
                    const T *xr = x + (n * H + ih) * W * C;                                                 \
                    for (int64_t ow = 0; ow < OW; ow++) {                                                   \
                        const T *restrict dyp = dyr + ow * OC;                                              \
                        const int64_t iw0 = ow * g->stride_w - g->pad_left;                                 \
                        for (int64_t kw = 0; kw < KW; kw++) {                                               \
                            const int64_t iw = iw0 + kw * g->dil_w;                                         \
                            if (iw < 0 || iw >= W) continue;                                                \
                            const T *restrict xp = xr + iw * C;                                             \
                            T *restrict ap = acc + (kh * KW + kw) * OC;                                     \
                            if (M == 1) {                                                                   \
                                for (int64_t c = 0; c < C; c++) ap[c] += xp[c] * dyp[c];                    \
                            } else {                                                                        \
                                for (int64_t c = 0; c < C; c++)                                             \
                                    for (int64_t m = 0; m < M; m++) ap[c * M + m] += xp[c] * dyp[c * M + m]; \
                            }                                                                               \
                        }                                                                                   \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
                                                                                                            \
    typedef struct {                                                                                        \
        const T *parts;                                                                                     \
        T *df;                                                                                              \
        int64_t chunks, fs;                                                                                 \
    } dw_reduce_##SFX;                                                                                      \
    static void dw_reduce_range_##SFX(void *arg, int64_t b, int64_t e) {                                  \
        const dw_reduce_##SFX *j = arg;                                                                     \
        for (int64_t i = b; i < e; i++) j->df[i] = 0;                                                       \
        for (int64_t ci = 0; ci < j->chunks; ci++)                                                          \
            for (int64_t i = b; i < e; i++) j->df[i] += j->parts[ci * j->fs + i];                           \
    }                                                                                                       \
                                                                                                            \
    bool tfc_depthwise_fwd_##SFX(tfc_threadpool *pool, const tfc_conv_geom *g, const T *x, const T *f, T *y, \
                                 tfc_status *st) {                                                          \
        dw_job j = {g, x, f, y, 0};                                                                         \
        tfc_parallel_for(pool, g->batch * g->out_h, g->out_w * g->k_h * g->k_w * g->out_c + 1, dw_fwd_rows_##SFX, &j); \
        return true;                                                                                        \
    }                                                                                                       \
    bool tfc_depthwise_bwd_input_##SFX(tfc_threadpool *pool, const tfc_conv_geom *g, const T *dy, const T *f, \
                                       T *dx, tfc_status *st) {                                             \
        dw_job j = {g, dy, f, dx, 0};                                                                       \
        int64_t per = g->in_w * g->k_h * g->k_w * g->out_c / (g->stride_h * g->stride_w) + g->in_w * g->in_c + 1; \
        tfc_parallel_for(pool, g->batch * g->in_h, per, dw_bin_rows_##SFX, &j);                             \
        return true;                                                                                        \
    }                                                                                                       \
    bool tfc_depthwise_bwd_filter_##SFX(tfc_threadpool *pool, const tfc_conv_geom *g, const T *x, const T *dy, \
                                        T *df, tfc_status *st) {                                            \
        const int64_t rows = g->batch * g->out_h, fs = g->k_h * g->k_w * g->out_c;                          \
        int64_t chunks = (int64_t)tfc_threadpool_size(pool) * 2;                                            \
        const int64_t row_cost = g->out_w * g->k_h * g->k_w * g->out_c + 1;                                 \
        if (chunks > rows) chunks = rows;                                                                   \
        if (chunks * row_cost < 100000 || chunks < 1) chunks = 1; /* small: one pass, no reduction */       \
        if (rows == 0) {                                                                                    \
            memset(df, 0, (size_t)fs * sizeof(T));                                                          \
            return true;                                                                                    \
        }                                                                                                   \
        T *parts = chunks == 1 ? df : tfc_aligned_alloc((size_t)(chunks * fs) * sizeof(T));                 \
        if (!parts) return tfc_status_oom(st, "DepthwiseConv2dNativeBackpropFilter partial sums",           \
                                          (size_t)(chunks * fs) * sizeof(T));                               \
        dw_job j = {g, x, dy, parts, (rows + chunks - 1) / chunks};                                         \
        tfc_parallel_for(pool, chunks, j.rows_per_chunk * row_cost, dw_bfil_chunks_##SFX, &j);              \
        if (chunks > 1) {                                                                                   \
            dw_reduce_##SFX rj = {parts, df, chunks, fs};                                                   \
            tfc_parallel_for(pool, fs, chunks, dw_reduce_range_##SFX, &rj);                                 \
            tfc_aligned_free(parts);                                                                        \
        }                                                                                                   \
        return true;                                                                                        \
    }

DW_DEFINE(float, f32)
DW_DEFINE(double, f64)
