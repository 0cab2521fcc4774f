/* Template body of conv_gemm.c, included once per element type with
 *   T     element type (float, double)
 *   SFX   function-name suffix (f32, f64)
 *   GEMM  the GEMM wrapper (gemm_f32, gemm_f64): GEMM(pool, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
 *   GEMM_EP  the forward product with a fused op's epilogue (tfc_epilogue; NULL: none), its bias column of
 *         the product's first column: GEMM_EP(pool, m, n, k, a, lda, b, ldb, c, ldc, ep, col)
 *   IMPLICIT_FWD, IMPLICIT_BWD_INPUT, IMPLICIT_BWD_FILTER (optional) a convolution without im2col, tried
 *         first with the function's own arguments: (pool, g, in1, in2, out), IMPLICIT_FWD also with the
 *         epilogue -> false when it does not apply or cannot run
 *
 * Layouts (NHWC data, TensorFlow filter layout):
 *   x  [N, H, W, C]        f  [KH, KW, Cg, Cout]   (Cg = C / G input channels per group)
 *   y  [N, OH, OW, Cout]   col [P, K] with P = N*OH*OW output pixels and K = KH*KW*C
 * A col row holds the receptive field of one output pixel ordered (group, kh, kw, cg), so group gi's
 * columns are the contiguous K/G block at gi*Kg and the filter rows (kh, kw, cg) line up with them:
 *   y[:, gi]  = col[:, gi] x f[:, gi]           (forward)
 *   dcol[:, gi] = dy[:, gi] x f[:, gi]^T        (backprop input, then col2im)
 *   df[:, gi] += col[:, gi]^T x dy[:, gi]       (backprop filter)
 * Only strided sub-matrices, so one GEMM (G = 1) or G GEMMs per tile. The col matrix is built a tile of
 * output rows at a time (bounded memory) and in parallel; float GEMMs run on the pool, double ones on
 * OpenBLAS's threads. */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)

typedef struct {
    const tfc_conv_geom *g;
    const T *x;
    T *col;
    int64_t r0;    /* first output row (n * OH + oh) of the tile */
    int64_t nr;    /* rows in the tile */
} FN(tile_job);

/* n elements from s to d: a library call for the short runs of an image's first layers (kw * c = 3 floats)
 * costs more than the copy, so runs under 16 are fixed-size moves (which the compiler inlines). */
static inline void FN(copy_run)(T *restrict d, const T *restrict s, int64_t n) {
    if (n >= 16) {
        memcpy(d, s, (size_t)n * sizeof(T));
        return;
    }
    if (n & 8) memcpy(d, s, 8 * sizeof(T)), d += 8, s += 8;
    if (n & 4) memcpy(d, s, 4 * sizeof(T)), d += 4, s += 4;
    if (n & 2) memcpy(d, s, 2 * sizeof(T)), d += 2, s += 2;
    if (n & 1) *d = *s;
}

/* col rows of output rows [r0 + b, r0 + e). */
static void FN(im2col_rows)(void *arg, int64_t b, int64_t e) {
    const FN(tile_job) *j = arg;
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;
    const int64_t KH = g->k_h, KW = g->k_w, G = g->groups, Cg = g->k_c, Kg = KH * KW * Cg, K = Kg * G;
    for (int64_t r = b; r < e; r++) {
        const int64_t R = j->r0 + r, n = R / OH, oh = R % OH;
        T *dst = j->col + r * OW * K;
        for (int64_t ow = 0; ow < OW; ow++, dst += K) {
            const int64_t iw0 = ow * g->stride_w - g->pad_left;
            for (int64_t kh = 0; kh < KH; kh++) {
                const int64_t ih = oh * g->stride_h - g->pad_top + kh * g->dil_h;
                if (ih < 0 || ih >= H) {
                    for (int64_t gi = 0; gi < G; gi++) memset(dst + gi * Kg + kh * KW * Cg, 0, (size_t)(KW * Cg) * sizeof(T));
                    continue;
                }
                const T *xrow = j->x + (n * H + ih) * W * C;
                if (G == 1 && g->dil_w == 1 && iw0 >= 0 && iw0 + KW <= W) { /* the whole kernel row is contiguous */
                    FN(copy_run)(dst + kh * KW * C, xrow + iw0 * C, KW * C);
                    continue;
                }
                for (int64_t kw = 0; kw < KW; kw++) {
                    const int64_t iw = iw0 + kw * g->dil_w;
                    T *d = dst + (kh * KW + kw) * Cg;
                    if (iw < 0 || iw >= W) {
                        for (int64_t gi = 0; gi < G; gi++) memset(d + gi * Kg, 0, (size_t)Cg * sizeof(T));
                    } else {
                        const T *s = xrow + iw * C;
                        for (int64_t gi = 0; gi < G; gi++) FN(copy_run)(d + gi * Kg, s + gi * Cg, Cg);
                    }
                }
            }
        }
    }
}

typedef struct {
    const tfc_conv_geom *g;
    const T *dcol;
    T *dx;
    int64_t r0, nr, n0; /* tile rows [r0, r0 + nr); first image n0 */
} FN(col2im_job);

/* dx rows (n, ih) for units u = (n - n0) * H + ih: gathers every tile column that reads the row, so
 * rows are independent and need no locking. */
TFC_SIMD_CLONES static void FN(col2im_rows)(void *arg, int64_t b, int64_t e) {
    const FN(col2im_job) *j = arg;
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;
    const int64_t KH = g->k_h, KW = g->k_w, G = g->groups, Cg = g->k_c, Kg = KH * KW * Cg, K = Kg * G;
    for (int64_t u = b; u < e; u++) {
        const int64_t n = j->n0 + u / H, ih = u % H;
        T *dxr = j->dx + (n * H + ih) * W * C;
        for (int64_t kh = 0; kh < KH; kh++) {
            const int64_t t = ih + g->pad_top - kh * g->dil_h;
            if (t < 0 || t % g->stride_h) continue;
            const int64_t oh = t / g->stride_h, R = n * OH + oh;
            if (oh >= OH || R < j->r0 || R >= j->r0 + j->nr) continue;
            const T *src = j->dcol + (R - j->r0) * OW * K + kh * KW * Cg;
            for (int64_t ow = 0; ow < OW; ow++, src += K) {
                const int64_t iw0 = ow * g->stride_w - g->pad_left;
                if (G == 1 && g->dil_w == 1 && iw0 >= 0 && iw0 + KW <= W) { /* one contiguous run of KW*C */
                    T *restrict d = dxr + iw0 * C;
                    const T *restrict s = src;
                    for (int64_t i = 0; i < KW * C; i++) d[i] += s[i];
                    continue;
                }
                for (int64_t kw = 0; kw < KW; kw++) {
                    const int64_t iw = iw0 + kw * g->dil_w;
                    if (iw < 0 || iw >= W) continue;
                    for (int64_t gi = 0; gi < G; gi++) {
                        T *d = dxr + iw * C + gi * Cg;
                        const T *s = src + gi * Kg + kw * Cg;
                        for (int64_t c = 0; c < Cg; c++) d[c] += s[c];
                    }
                }
            }
        }
    }
}

/* Cases where the col matrix is the input itself. */
/* (The output must cover the whole input: _TfcFusedConv2DMaxPool asks for only the rows and columns its pool
 * reads, a smaller output of the same input.) */
static bool FN(is_pointwise)(const tfc_conv_geom *g) { /* 1x1, stride 1, no padding: col = x */
    return g->batch * g->out_h * g->out_w <= INT_MAX && g->k_h == 1 && g->k_w == 1 && g->stride_h == 1 && g->stride_w == 1 && g->groups == 1 &&
           !g->pad_top && !g->pad_left && !g->pad_bottom && !g->pad_right && g->out_h == g->in_h && g->out_w == g->in_w;
}
static bool FN(is_full)(const tfc_conv_geom *g) { /* filter covers the unpadded input: one pixel per image */
    return g->batch <= INT_MAX && g->k_h == g->in_h && g->k_w == g->in_w && g->out_h == 1 && g->out_w == 1 && g->groups == 1 &&
           !g->pad_top && !g->pad_left && !g->pad_bottom && !g->pad_right;
}

/* Rows of output per tile (tfc_conv_tile_rows), and the scratch buffer for it. */
static T *FN(tile_alloc)(const tfc_conv_geom *g, int64_t *tile_rows, tfc_status *st) {
    const int64_t tr = tfc_conv_tile_rows(g), row = g->out_w * g->k_h * g->k_w * g->in_c;
    *tile_rows = tr;
    size_t bytes = (size_t)(tr * row) * sizeof(T);
    T *p = tfc_aligned_alloc(bytes);
    if (!p) tfc_status_oom(st, "Conv2D im2col tile", bytes);
    return p;
}

bool FN(tfc_conv2d_fwd_ep)(tfc_threadpool *pool, const tfc_conv_geom *g, const T *x, const T *f, T *y,
                           const tfc_epilogue *ep, tfc_status *st) {
    const int64_t N = g->batch, C = g->in_c, OH = g->out_h, OW = g->out_w, Cout = g->out_c, G = g->groups;
    const int64_t P = N * OH * OW, K = g->k_h * g->k_w * C, Kg = K / G, Cog = Cout / G;
    if (P == 0 || Cout == 0) return true;
    if (FN(is_pointwise)(g)) {
        GEMM_EP(pool, P, Cout, C, x, C, f, Cout, y, Cout, ep, 0);
        return true;
    }
    if (FN(is_full)(g)) {
        GEMM_EP(pool, N, Cout, K, x, K, f, Cout, y, Cout, ep, 0);
        return true;
    }
#ifdef IMPLICIT_FWD
    if (IMPLICIT_FWD(pool, g, x, f, y, ep)) return true;
#endif
    int64_t tr;
    T *col = FN(tile_alloc)(g, &tr, st);
    if (!col) return false;
    const int64_t rows = N * OH;
    for (int64_t r0 = 0; r0 < rows; r0 += tr) {
        FN(tile_job) j = {g, x, col, r0, r0 + tr < rows ? tr : rows - r0};
        tfc_parallel_for(pool, j.nr, OW * K, FN(im2col_rows), &j);
        const int64_t M = j.nr * OW;
        T *yt = y + r0 * OW * Cout;
        for (int64_t gi = 0; gi < G; gi++)
            GEMM_EP(pool, M, Cog, Kg, col + gi * Kg, K, f + gi * Cog, Cout, yt + gi * Cog, Cout, ep, gi * Cog);
    }
    tfc_aligned_free(col);
    return true;
}

bool FN(tfc_conv2d_fwd)(tfc_threadpool *pool, const tfc_conv_geom *g, const T *x, const T *f, T *y, tfc_status *st) {
    return FN(tfc_conv2d_fwd_ep)(pool, g, x, f, y, NULL, st);
}

bool FN(tfc_conv2d_bwd_input)(tfc_threadpool *pool, const tfc_conv_geom *g, const T *dy, const T *f, T *dx,
                              tfc_status *st) {
    const int64_t N = g->batch, H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;
    const int64_t Cout = g->out_c, G = g->groups, P = N * OH * OW, K = g->k_h * g->k_w * C, Kg = K / G, Cog = Cout / G;
    if (N * H * W * C == 0) return true;
    if (P == 0) {
        tfc_conv_zero(pool, dx, (size_t)(N * H * W * C) * sizeof(T));
        return true;
    }
    if (FN(is_pointwise)(g)) {
        GEMM(pool, false, true, P, C, Cout, 1, dy, Cout, f, Cout, 0, dx, C);
        return true;
    }
    if (FN(is_full)(g)) {
        GEMM(pool, false, true, N, K, Cout, 1, dy, Cout, f, Cout, 0, dx, K);
        return true;
    }
#ifdef IMPLICIT_BWD_INPUT
    if (IMPLICIT_BWD_INPUT(pool, g, dy, f, dx)) return true;
#endif
    int64_t tr;
    T *dcol = FN(tile_alloc)(g, &tr, st);
    if (!dcol) return false;
    tfc_conv_zero(pool, dx, (size_t)(N * H * W * C) * sizeof(T));
    const int64_t rows = N * OH;
    for (int64_t r0 = 0; r0 < rows; r0 += tr) {
        const int64_t nr = r0 + tr < rows ? tr : rows - r0, M = nr * OW;
        const T *dyt = dy + r0 * OW * Cout;
        for (int64_t gi = 0; gi < G; gi++)
            GEMM(pool, false, true, M, Kg, Cog, 1, dyt + gi * Cog, Cout,
                 f + gi * Cog, Cout, 0, dcol + gi * Kg, K);
        const int64_t n0 = r0 / OH, n1 = (r0 + nr - 1) / OH;
        FN(col2im_job) j = {g, dcol, dx, r0, nr, n0};
        tfc_parallel_for(pool, (n1 - n0 + 1) * H, OW * K / (H > 0 ? H : 1) + W * C, FN(col2im_rows), &j);
    }
    tfc_aligned_free(dcol);
    return true;
}

bool FN(tfc_conv2d_bwd_filter)(tfc_threadpool *pool, const tfc_conv_geom *g, const T *x, const T *dy, T *df,
                               tfc_status *st) {
    const int64_t N = g->batch, C = g->in_c, OH = g->out_h, OW = g->out_w, Cout = g->out_c, G = g->groups;
    const int64_t P = N * OH * OW, K = g->k_h * g->k_w * C, Kg = K / G, Cog = Cout / G;
    if (Kg * Cout == 0) return true;
    if (P == 0) {
        tfc_conv_zero(pool, df, (size_t)(Kg * Cout) * sizeof(T));
        return true;
    }
    if (FN(is_pointwise)(g)) {
        GEMM(pool, true, false, C, Cout, P, 1, x, C, dy, Cout, 0, df, Cout);
        return true;
    }
    if (FN(is_full)(g)) {
        GEMM(pool, true, false, K, Cout, N, 1, x, K, dy, Cout, 0, df, Cout);
        return true;
    }
#ifdef IMPLICIT_BWD_FILTER
    if (IMPLICIT_BWD_FILTER(pool, g, x, dy, df)) return true;
#endif
    int64_t tr;
    T *col = FN(tile_alloc)(g, &tr, st);
    if (!col) return false;
    const int64_t rows = N * OH;
    for (int64_t r0 = 0; r0 < rows; r0 += tr) {
        FN(tile_job) j = {g, x, col, r0, r0 + tr < rows ? tr : rows - r0};
        tfc_parallel_for(pool, j.nr, OW * K, FN(im2col_rows), &j);
        const int64_t M = j.nr * OW;
        const T *dyt = dy + r0 * OW * Cout;
        for (int64_t gi = 0; gi < G; gi++)
            GEMM(pool, true, false, Kg, Cog, M, 1, col + gi * Kg, K,
                 dyt + gi * Cog, Cout, r0 ? 1 : 0, df + gi * Cog, Cout);
    }
    tfc_aligned_free(col);
    return true;
}

#undef FN
#undef CAT
#undef CAT_
