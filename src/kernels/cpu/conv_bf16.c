/* Conv2D and its two backprops in bfloat16 on tfc_bgemm (vdpbf16ps, float32 accumulation): im2col in
 * bfloat16 a tile of output rows at a time, the product into float32, rounded to bfloat16 once at the end
 * (the filter gradient and the input gradient are summed over all tiles in float32 first), as TensorFlow's
 * bfloat16 convolutions accumulate in float32. NHWC, one group; conv.c routes other cases to the float32
 * kernels on widened data. Layouts as conv_gemm_tmpl.h:
 *   y[P, Cout] = col[P, K] f[K, Cout];  dcol[P, K] = dy[P, Cout] f^T, then col2im;  df[K, Cout] = col^T dy. */
#include <string.h>

#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/gemm_bf16.h"

typedef struct {
    const tfc_conv_geom *g;
    const uint16_t *x;
    uint16_t *col;
    int64_t r0; /* first output row (n * OH + oh) of the tile */
} im2col_job;

static void im2col_rows(void *arg, int64_t b, int64_t e) {
    const im2col_job *j = arg;
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w, KH = g->k_h, KW = g->k_w;
    const int64_t K = KH * KW * C;
    for (int64_t r = b; r < e; r++) {
        const int64_t R = j->r0 + r, n = R / OH, oh = R % OH;
        uint16_t *dst = j->col + r * OW * K;
        for (int64_t ow = 0; ow < OW; ow++, dst += K)
            for (int64_t kh = 0; kh < KH; kh++) {
                const int64_t ih = oh * g->stride_h - g->pad_top + kh * g->dil_h;
                for (int64_t kw = 0; kw < KW; kw++) {
                    const int64_t iw = ow * g->stride_w - g->pad_left + kw * g->dil_w;
                    uint16_t *d = dst + (kh * KW + kw) * C;
                    if (ih < 0 || ih >= H || iw < 0 || iw >= W) memset(d, 0, (size_t)C * 2);
                    else memcpy(d, j->x + ((n * H + ih) * W + iw) * C, (size_t)C * 2);
                }
            }
    }
}

typedef struct {
    const tfc_conv_geom *g;
    const float *dcol;
    float *dx;
    int64_t r0, r1, n0; /* tile rows [r0, r1); the first image they touch */
} col2im_job;

/* Adds the tile's dcol rows into dx, one image (n0 + u) per unit: an image's rows touch only its own dx. */
static void col2im_images(void *arg, int64_t b, int64_t e) {
    const col2im_job *j = arg;
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w, KH = g->k_h, KW = g->k_w;
    const int64_t K = KH * KW * C;
    for (int64_t n = j->n0 + b; n < j->n0 + e; n++) {
        const int64_t lo = n * OH > j->r0 ? n * OH : j->r0, hi = (n + 1) * OH < j->r1 ? (n + 1) * OH : j->r1;
        for (int64_t R = lo; R < hi; R++) {
            const int64_t oh = R % OH;
            const float *src = j->dcol + (R - j->r0) * OW * K;
            for (int64_t ow = 0; ow < OW; ow++, src += K)
                for (int64_t kh = 0; kh < KH; kh++) {
                    const int64_t ih = oh * g->stride_h - g->pad_top + kh * g->dil_h;
                    if (ih < 0 || ih >= H) continue;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const int64_t iw = ow * g->stride_w - g->pad_left + kw * g->dil_w;
                        if (iw < 0 || iw >= W) continue;
                        float *restrict d = j->dx + ((n * H + ih) * W + iw) * C;
                        const float *restrict s = src + (kh * KW + kw) * C;
                        for (int64_t c = 0; c < C; c++) d[c] += s[c];
                    }
                }
        }
    }
}

/* 1x1, stride 1, no padding, output as large as the input: the col matrix is x itself. */
static bool pointwise(const tfc_conv_geom *g) {
    return g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 && !g->pad_top && !g->pad_left &&
           !g->pad_bottom && !g->pad_right && g->out_h == g->in_h && g->out_w == g->in_w;
}

static void *scratch(size_t bytes, tfc_status *st) {
    void *p = tfc_aligned_alloc(bytes ? bytes : 1);
    if (!p) tfc_status_oom(st, "Conv2D bfloat16 scratch", bytes);
    return p;
}

/* Rounds n float32 values to bfloat16 on the pool. */
typedef struct {
    const float *s;
    uint16_t *d;
} narrow_job;
static void narrow_range(void *arg, int64_t b, int64_t e) {
    const narrow_job *j = arg;
    tfc_lowp_from_f32(false, j->s + b, j->d + b, e - b);
}
static void narrow(tfc_threadpool *pool, const float *s, uint16_t *d, int64_t n) {
    narrow_job j = {s, d};
    tfc_parallel_for(pool, n, 2, narrow_range, &j);
}

bool tfc_conv2d_fwd_bf16(tfc_threadpool *pool, const tfc_conv_geom *g, const uint16_t *x, const uint16_t *f,
                         uint16_t *y, tfc_status *st) {
    const int64_t OW = g->out_w, Cout = g->out_c, K = g->k_h * g->k_w * g->in_c, rows = g->batch * g->out_h;
    if (rows * OW == 0 || Cout == 0) return true;
    const bool pw = pointwise(g);
    const int64_t tr = pw ? rows : tfc_conv_tile_rows(g);
    uint16_t *col = pw ? NULL : scratch((size_t)(tr * OW * K) * 2, st);
    float *yt = scratch((size_t)(tr * OW * Cout) * sizeof(float), st);
    bool ok = yt && (pw || col);
    for (int64_t r0 = 0; ok && r0 < rows; r0 += tr) {
        const int64_t nr = r0 + tr < rows ? tr : rows - r0, M = nr * OW;
        const uint16_t *a = x;
        if (!pw) {
            im2col_job j = {g, x, col, r0};
            tfc_parallel_for(pool, nr, OW * K, im2col_rows, &j);
            a = col;
        }
        tfc_bgemm(false, false, M, Cout, K, a, K, f, Cout, yt, Cout, false, pool);
        narrow(pool, yt, y + r0 * OW * Cout, M * Cout);
    }
    tfc_aligned_free(col);
    tfc_aligned_free(yt);
    return ok;
}

bool tfc_conv2d_bwd_input_bf16(tfc_threadpool *pool, const tfc_conv_geom *g, const uint16_t *dy, const uint16_t *f,
                               uint16_t *dx, tfc_status *st) {
    const int64_t N = g->batch, C = g->in_c, OH = g->out_h, OW = g->out_w, Cout = g->out_c;
    const int64_t K = g->k_h * g->k_w * C, rows = N * OH, nx = N * g->in_h * g->in_w * C;
    if (nx == 0) return true;
    const bool pw = pointwise(g);
    const int64_t tr = tfc_conv_tile_rows(g);
    float *acc = scratch((size_t)nx * sizeof(float), st);
    float *dcol = pw || !acc ? NULL : scratch((size_t)(tr * OW * K) * sizeof(float), st);
    if (!acc || (!pw && !dcol)) {
        tfc_aligned_free(acc);
        return false;
    }
    if (pw) { /* dx = dy f^T directly */
        tfc_bgemm(false, true, rows * OW, C, Cout, dy, Cout, f, Cout, acc, C, false, pool);
    } else {
        tfc_conv_zero(pool, acc, (size_t)nx * sizeof(float));
        for (int64_t r0 = 0; r0 < rows; r0 += tr) {
            const int64_t nr = r0 + tr < rows ? tr : rows - r0;
            tfc_bgemm(false, true, nr * OW, K, Cout, dy + r0 * OW * Cout, Cout, f, Cout, dcol, K, false, pool);
            const int64_t n0 = r0 / OH, n1 = (r0 + nr - 1) / OH + 1;
            col2im_job j = {g, dcol, acc, r0, r0 + nr, n0};
            tfc_parallel_for(pool, n1 - n0, nr * OW * K / (n1 - n0) + 1, col2im_images, &j);
        }
    }
    narrow(pool, acc, dx, nx);
    tfc_aligned_free(dcol);
    tfc_aligned_free(acc);
    return true;
}

bool tfc_conv2d_bwd_filter_bf16(tfc_threadpool *pool, const tfc_conv_geom *g, const uint16_t *x, const uint16_t *dy,
                                uint16_t *df, tfc_status *st) {
    const int64_t OW = g->out_w, Cout = g->out_c, K = g->k_h * g->k_w * g->in_c, rows = g->batch * g->out_h;
    if (K * Cout == 0) return true;
    const bool pw = pointwise(g);
    const int64_t tr = pw ? (rows > 0 ? rows : 1) : tfc_conv_tile_rows(g);
    float *acc = scratch((size_t)(K * Cout) * sizeof(float), st);
    uint16_t *col = pw || !acc ? NULL : scratch((size_t)(tr * OW * K) * 2, st);
    if (!acc || (!pw && !col)) {
        tfc_aligned_free(acc);
        return false;
    }
    if (rows * OW == 0) memset(acc, 0, (size_t)(K * Cout) * sizeof(float));
    for (int64_t r0 = 0; r0 < rows; r0 += tr) {
        const int64_t nr = r0 + tr < rows ? tr : rows - r0;
        const uint16_t *a = x;
        if (!pw) {
            im2col_job j = {g, x, col, r0};
            tfc_parallel_for(pool, nr, OW * K, im2col_rows, &j);
            a = col;
        }
        tfc_bgemm(true, false, K, Cout, nr * OW, a, K, dy + r0 * OW * Cout, Cout, acc, Cout, r0 > 0, pool);
    }
    narrow(pool, acc, df, K * Cout);
    tfc_aligned_free(col);
    tfc_aligned_free(acc);
    return true;
}
