/* Template body of conv_depthwise.c, included once per element type with T (float, double) and SFX (f32, f64).
 *
 * Multiplier 1 (the common case) runs channel blocks of CB elements (one cache line) with the accumulators in
 * registers: for each output pixel and block, all valid taps are summed before one store. The tap ranges are
 * computed per row / pixel, so the inner loops have no bounds checks. Other multipliers use a plain
 * read-modify-write loop over the output channels. The backprops loop taps outermost and sum or scatter
 * along a whole row, so the updates stay in registers (filter) or in one cached row (input). */

#define CAT_(a, b) a##_##b
#define CAT(a, b) CAT_(a, b)
#define FN(name) CAT(name, SFX)
#define CB ((int64_t)(64 / sizeof(T)))

/* Valid taps [lo, hi) of a window starting at `start` with dilation d over an input of size n. */
static inline void FN(tap_range)(int64_t start, int64_t k, int64_t d, int64_t n, int64_t *lo, int64_t *hi) {
    *lo = start < 0 ? (-start + d - 1) / d : 0;
    *hi = n - start <= 0 ? 0 : (n - start + d - 1) / d;
    if (*hi > k) *hi = k;
    if (*lo > *hi) *lo = *hi;
}

TFC_SIMD_CLONES static void FN(dw_fwd_rows)(void *arg, int64_t b, int64_t e) {
    const dw_job *j = arg;
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, M = g->mult, OC = g->out_c, OH = g->out_h, OW = g->out_w;
    const int64_t KW = g->k_w, dh = g->dil_h, dw = g->dil_w;
    const T *x = j->a, *f = j->b;
    for (int64_t r = b; r < e; r++) {
        const int64_t n = r / OH, oh = r % OH, ih0 = oh * g->stride_h - g->pad_top;
        int64_t kh0, kh1;
        FN(tap_range)(ih0, g->k_h, dh, H, &kh0, &kh1);
        const T *xn = x + n * H * W * C;
        for (int64_t ow = 0; ow < OW; ow++) {
            const int64_t iw0 = ow * g->stride_w - g->pad_left;
            int64_t kw0, kw1;
            FN(tap_range)(iw0, KW, dw, W, &kw0, &kw1);
            T *restrict yp = (T *)j->out + (r * OW + ow) * OC;
            if (M == 1) {
                int64_t c0 = 0;
                for (; c0 + CB <= C; c0 += CB) {
                    T acc[CB];
                    for (int64_t i = 0; i < CB; i++) acc[i] = 0;
                    for (int64_t kh = kh0; kh < kh1; kh++) {
                        const T *xr = xn + (ih0 + kh * dh) * W * C + c0, *fr = f + kh * KW * C + c0;
                        for (int64_t kw = kw0; kw < kw1; kw++) {
                            const T *restrict xp = xr + (iw0 + kw * dw) * C, *restrict fp = fr + kw * C;
                            for (int64_t i = 0; i < CB; i++) acc[i] += xp[i] * fp[i];
                        }
                    }
                    for (int64_t i = 0; i < CB; i++) yp[c0 + i] = acc[i];
                }
                for (int64_t c = c0; c < C; c++) {
                    T acc = 0;
                    for (int64_t kh = kh0; kh < kh1; kh++)
                        for (int64_t kw = kw0; kw < kw1; kw++)
                            acc += xn[((ih0 + kh * dh) * W + iw0 + kw * dw) * C + c] * f[(kh * KW + kw) * C + c];
                    yp[c] = acc;
                }
            } else {
                memset(yp, 0, (size_t)OC * sizeof(T));
                for (int64_t kh = kh0; kh < kh1; kh++)
                    for (int64_t kw = kw0; kw < kw1; kw++) {
                        const T *restrict xp = xn + ((ih0 + kh * dh) * W + iw0 + kw * dw) * C;
                        const T *restrict fp = f + (kh * KW + kw) * OC;
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t m = 0; m < M; m++) yp[c * M + m] += xp[c] * fp[c * M + m];
                    }
            }
        }
    }
}

/* Input rows (n, ih): every tap that reads the row adds dy * f into it; the row belongs to one thread, so
 * there are no write conflicts. Tap kw of output column ow reads input column ow * sw + off. */
TFC_SIMD_CLONES static void FN(dw_bin_rows)(void *arg, int64_t b, int64_t e) {
    const dw_job *j = arg;
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, M = g->mult, OC = g->out_c, OH = g->out_h, OW = g->out_w;
    const int64_t KH = g->k_h, KW = g->k_w, sw = g->stride_w;
    const T *dy = j->a, *f = j->b;
    for (int64_t u = b; u < e; u++) {
        const int64_t n = u / H, ih = u % H;
        T *dxr = (T *)j->out + u * W * C;
        memset(dxr, 0, (size_t)(W * C) * sizeof(T));
        for (int64_t kh = 0; kh < KH; kh++) {
            const int64_t t = ih + g->pad_top - kh * g->dil_h;
            if (t < 0 || t % g->stride_h || t / g->stride_h >= OH) continue;
            const T *dyr = dy + (n * OH + t / g->stride_h) * OW * OC;
            for (int64_t kw = 0; kw < KW; kw++) {
                const int64_t off = kw * g->dil_w - g->pad_left;
                int64_t ow0 = off >= 0 ? 0 : (-off + sw - 1) / sw, ow1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
                if (ow1 > OW) ow1 = OW;
                if (ow0 >= ow1) continue;
                const T *restrict fp = f + (kh * KW + kw) * OC;
                if (M == 1) {
                    int64_t c0 = 0;
                    for (; c0 + CB <= C; c0 += CB) {
                        T fv[CB];
                        for (int64_t i = 0; i < CB; i++) fv[i] = fp[c0 + i];
                        for (int64_t ow = ow0; ow < ow1; ow++) {
                            T *restrict dxp = dxr + (ow * sw + off) * C + c0;
                            const T *restrict dyp = dyr + ow * C + c0;
                            for (int64_t i = 0; i < CB; i++) dxp[i] += dyp[i] * fv[i];
                        }
                    }
                    for (int64_t c = c0; c < C; c++)
                        for (int64_t ow = ow0; ow < ow1; ow++) dxr[(ow * sw + off) * C + c] += dyr[ow * C + c] * fp[c];
                } else {
                    for (int64_t ow = ow0; ow < ow1; ow++) {
                        T *restrict dxp = dxr + (ow * sw + off) * C;
                        const T *restrict dyp = dyr + ow * OC;
                        for (int64_t c = 0; c < C; c++) {
                            T s = 0;
                            for (int64_t m = 0; m < M; m++) s += dyp[c * M + m] * fp[c * M + m];
                            dxp[c] += s;
                        }
                    }
                }
            }
        }
    }
}

/* Row chunks: private partial filter gradients [KH, KW, C*M], reduced afterwards. For each row, tap and
 * channel block the products are summed over the whole output row in registers before one update. */
TFC_SIMD_CLONES static void FN(dw_bfil_chunks)(void *arg, int64_t b, int64_t e) {
    const dw_job *j = arg;
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, M = g->mult, OC = g->out_c, OH = g->out_h, OW = g->out_w;
    const int64_t KW = g->k_w, dh = g->dil_h, sw = g->stride_w, rows = g->batch * OH, FS = g->k_h * KW * OC;
    const T *x = j->a, *dy = j->b;
    for (int64_t ci = b; ci < e; ci++) {
        T *acc = (T *)j->out + ci * FS;
        memset(acc, 0, (size_t)FS * sizeof(T));
        int64_t r1 = (ci + 1) * j->rows_per_chunk;
        if (r1 > rows) r1 = rows;
        for (int64_t r = ci * j->rows_per_chunk; r < r1; r++) {
            const int64_t n = r / OH, oh = r % OH, ih0 = oh * g->stride_h - g->pad_top;
            int64_t kh0, kh1;
            FN(tap_range)(ih0, g->k_h, dh, H, &kh0, &kh1);
            const T *dyr = dy + r * OW * OC;
            for (int64_t kh = kh0; kh < kh1; kh++) {
                const T *xr = x + ((n * H + ih0 + kh * dh) * W) * C;
                for (int64_t kw = 0; kw < KW; kw++) {
                    /* output columns whose tap kw lands inside the row: iw = ow * sw + off in [0, W) */
                    const int64_t off = kw * g->dil_w - g->pad_left;
                    int64_t ow0 = off >= 0 ? 0 : (-off + sw - 1) / sw, ow1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
                    if (ow1 > OW) ow1 = OW;
                    if (ow0 >= ow1) continue;
                    T *restrict ap = acc + (kh * KW + kw) * OC;
                    if (M == 1) {
                        int64_t c0 = 0;
                        for (; c0 + CB <= C; c0 += CB) {
                            T s[CB];
                            for (int64_t i = 0; i < CB; i++) s[i] = 0;
                            for (int64_t ow = ow0; ow < ow1; ow++) {
                                const T *restrict xp = xr + (ow * sw + off) * C + c0, *restrict dyp = dyr + ow * C + c0;
                                for (int64_t i = 0; i < CB; i++) s[i] += xp[i] * dyp[i];
                            }
                            for (int64_t i = 0; i < CB; i++) ap[c0 + i] += s[i];
                        }
                        for (int64_t c = c0; c < C; c++) {
                            T s = 0;
                            for (int64_t ow = ow0; ow < ow1; ow++) s += xr[(ow * sw + off) * C + c] * dyr[ow * C + c];
                            ap[c] += s;
                        }
                    } else {
                        for (int64_t ow = ow0; ow < ow1; ow++) {
                            const T *restrict xp = xr + (ow * sw + off) * C, *restrict dyp = dyr + ow * OC;
                            for (int64_t c = 0; c < C; c++)
                                for (int64_t m = 0; m < M; m++) ap[c * M + m] += xp[c] * dyp[c * M + m];
                        }
                    }
                }
            }
        }
    }
}

typedef struct {
    const T *parts;
    T *df;
    int64_t chunks, fs;
} FN(dw_reduce_job);

TFC_SIMD_CLONES static void FN(dw_reduce_range)(void *arg, int64_t b, int64_t e) {
    const FN(dw_reduce_job) *j = arg;
    for (int64_t i = b; i < e; i++) j->df[i] = 0;
    for (int64_t ci = 0; ci < j->chunks; ci++)
        for (int64_t i = b; i < e; i++) j->df[i] += j->parts[ci * j->fs + i];
}

bool FN(tfc_depthwise_fwd)(tfc_threadpool *pool, const tfc_conv_geom *g, const T *x, const T *f, T *y, tfc_status *st) {
    dw_job j = {g, x, f, y, 0};
    tfc_parallel_for(pool, g->batch * g->out_h, g->out_w * g->k_h * g->k_w * g->out_c + 1, FN(dw_fwd_rows), &j);
    return true;
}

bool FN(tfc_depthwise_bwd_input)(tfc_threadpool *pool, const tfc_conv_geom *g, const T *dy, const T *f, T *dx,
                                 tfc_status *st) {
    dw_job j = {g, dy, f, dx, 0};
    int64_t per = g->in_w * g->k_h * g->k_w * g->out_c / (g->stride_h * g->stride_w) + g->in_w * g->in_c + 1;
    tfc_parallel_for(pool, g->batch * g->in_h, per, FN(dw_bin_rows), &j);
    return true;
}

bool FN(tfc_depthwise_bwd_filter)(tfc_threadpool *pool, const tfc_conv_geom *g, const T *x, const T *dy, T *df,
                                  tfc_status *st) {
    const int64_t rows = g->batch * g->out_h, fs = g->k_h * g->k_w * g->out_c;
    const int64_t row_cost = g->out_w * g->k_h * g->k_w * g->out_c + 1;
    int64_t chunks = (int64_t)tfc_threadpool_size(pool) * 2;
    if (chunks > rows) chunks = rows;
    if (chunks < 1 || chunks * row_cost < 100000) chunks = 1; /* small: one pass, no reduction */
    if (rows == 0) {
        memset(df, 0, (size_t)fs * sizeof(T));
        return true;
    }
    T *parts = chunks == 1 ? df : tfc_aligned_alloc((size_t)(chunks * fs) * sizeof(T));
    if (!parts)
        return tfc_status_oom(st, "DepthwiseConv2dNativeBackpropFilter partial sums", (size_t)(chunks * fs) * sizeof(T));
    dw_job j = {g, x, dy, parts, (rows + chunks - 1) / chunks};
    tfc_parallel_for(pool, chunks, j.rows_per_chunk * row_cost, FN(dw_bfil_chunks), &j);
    if (chunks > 1) {
        FN(dw_reduce_job) rj = {parts, df, chunks, fs};
        tfc_parallel_for(pool, fs, chunks, FN(dw_reduce_range), &rj);
        tfc_aligned_free(parts);
    }
    return true;
}

#undef CB
#undef FN
#undef CAT
#undef CAT_
