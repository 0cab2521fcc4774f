/* Pooling kernels on NHWC data, direct loops vectorised over channels (contiguous in NHWC); NCHW tensors
 * and half/bfloat16 are staged through conv_load/conv_store. Window of output (oh, ow): rows
 * [oh*sh - pad_top, +KH) and columns [ow*sw - pad_left, +KW) clipped to the input, so padding cells never
 * take part (TensorFlow's semantics: AvgPool divides by the number of real cells; MaxPool ignores padding).
 * MaxPoolGrad and MaxPoolGradGrad route through the FIRST maximum of each window in row-major window order,
 * recomputed from orig_input as TensorFlow's CPU kernels do (orig_output is not read).
 *
 * float32 (and half/bfloat16, computed in float) runs the SIMD kernels of pool_simd.inc for MaxPool,
 * MaxPoolGrad, AvgPool and AvgPoolGrad; the scalar kernels below serve the other dtypes, MaxPoolGradGrad,
 * and TFC_POOL_SIMD=generic (the reference the SIMD kernels are tested against). */
#include <string.h>

#include "kernels/cpu/pool_internal.h"
#include "ops/op_util.h"

static inline void window(const tfc_conv_geom *g, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1, int64_t *w0,
                          int64_t *w1) {
    int64_t hs = oh * g->stride_h - g->pad_top, ws = ow * g->stride_w - g->pad_left;
    *h0 = hs < 0 ? 0 : hs;
    *h1 = hs + g->k_h < g->in_h ? hs + g->k_h : g->in_h;
    *w0 = ws < 0 ? 0 : ws;
    *w1 = ws + g->k_w < g->in_w ? ws + g->k_w : g->in_w;
}

#define CB_MAX 256 /* channels handled per pass of the argmax loops (stack arrays) */

#define POOL_DEFINE(T, SFX)                                                                                 \
    TFC_SIMD_CLONES static void max_pool_rows_##SFX(void *arg, int64_t b, int64_t e) {                                    \
        const pool_job *j = arg;                                                                            \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;                              \
        const T *x = j->x;                                                                                  \
        for (int64_t r = b; r < e; r++) {                                                                   \
            const int64_t n = r / OH, oh = r % OH;                                                          \
            for (int64_t ow = 0; ow < OW; ow++) {                                                           \
                int64_t h0, h1, w0, w1;                                                                     \
                window(g, oh, ow, &h0, &h1, &w0, &w1);                                                      \
                T *restrict yp = (T *)j->out + (r * OW + ow) * C;                                           \
                const T *xn = x + n * g->in_h * W * C;                                                      \
                memcpy(yp, xn + (h0 * W + w0) * C, (size_t)C * sizeof(T));                                  \
                for (int64_t h = h0; h < h1; h++)                                                           \
                    for (int64_t w = (h == h0 ? w0 + 1 : w0); w < w1; w++) {                                \
                        const T *restrict xp = xn + (h * W + w) * C;                                        \
                        for (int64_t c = 0; c < C; c++) yp[c] = yp[c] < xp[c] ? xp[c] : yp[c];              \
                    }                                                                                       \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
                                                                                                            \
    /* First argmax (pixel index h*W + w within the image) of window (oh, ow) for channels [c0, c0+nc). */ \
    static inline void argmax_##SFX(const tfc_conv_geom *g, const T *xn, int64_t oh, int64_t ow, int64_t c0,   \
                                    int64_t nc, int64_t *idx) {                                             \
        const int64_t W = g->in_w, C = g->in_c;                                                             \
        int64_t h0, h1, w0, w1;                                                                             \
        T best[CB_MAX];                                                                                     \
        window(g, oh, ow, &h0, &h1, &w0, &w1);                                                              \
        const T *first = xn + (h0 * W + w0) * C + c0;                                                       \
        for (int64_t c = 0; c < nc; c++) best[c] = first[c], idx[c] = h0 * W + w0;                          \
        for (int64_t h = h0; h < h1; h++)                                                                   \
            for (int64_t w = (h == h0 ? w0 + 1 : w0); w < w1; w++) {                                        \
                const T *xp = xn + (h * W + w) * C + c0;                                                    \
                for (int64_t c = 0; c < nc; c++)                                                            \
                    if (best[c] < xp[c]) best[c] = xp[c], idx[c] = h * W + w;                               \
            }                                                                                               \
    }                                                                                                       \
                                                                                                            \
    /* Units (n, channel block): dx[n, :, :, block] += dy routed to each window's argmax. */                \
    TFC_SIMD_CLONES static void max_pool_grad_units_##SFX(void *arg, int64_t b, int64_t e) {                              \
        const pool_job *j = arg;                                                                            \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t HW = g->in_h * g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;                   \
        int64_t idx[CB_MAX];                                                                                \
        for (int64_t u = b; u < e; u++) {                                                                   \
            const int64_t n = u / j->nb, c0 = (u % j->nb) * j->cb;                                          \
            const int64_t nc = c0 + j->cb < C ? j->cb : C - c0;                                             \
            const T *xn = (const T *)j->x + n * HW * C;                                                     \
            const T *dyn = (const T *)j->dy + n * OH * OW * C;                                              \
            T *dxn = (T *)j->out + n * HW * C;                                                              \
            for (int64_t p = 0; p < HW; p++) memset(dxn + p * C + c0, 0, (size_t)nc * sizeof(T));           \
            for (int64_t oh = 0; oh < OH; oh++)                                                             \
                for (int64_t ow = 0; ow < OW; ow++) {                                                       \
                    argmax_##SFX(g, xn, oh, ow, c0, nc, idx);                                               \
                    const T *dyp = dyn + (oh * OW + ow) * C + c0;                                           \
                    for (int64_t c = 0; c < nc; c++) dxn[idx[c] * C + c0 + c] += dyp[c];                    \
                }                                                                                           \
        }                                                                                                   \
    }                                                                                                       \
                                                                                                            \
    /* Output rows (n, oh): out = grad (shaped like orig_input) picked at each window's argmax. */          \
    TFC_SIMD_CLONES static void max_pool_grad_grad_rows_##SFX(void *arg, int64_t b, int64_t e) {                          \
        const pool_job *j = arg;                                                                            \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t HW = g->in_h * g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;                   \
        int64_t idx[CB_MAX];                                                                                \
        for (int64_t r = b; r < e; r++) {                                                                   \
            const int64_t n = r / OH, oh = r % OH;                                                          \
            const T *xn = (const T *)j->x + n * HW * C, *gn = (const T *)j->dy + n * HW * C;                \
            for (int64_t ow = 0; ow < OW; ow++) {                                                           \
                T *yp = (T *)j->out + (r * OW + ow) * C;                                                    \
                for (int64_t c0 = 0; c0 < C; c0 += CB_MAX) {                                                \
                    const int64_t nc = c0 + CB_MAX < C ? CB_MAX : C - c0;                                   \
                    argmax_##SFX(g, xn, oh, ow, c0, nc, idx);                                               \
                    for (int64_t c = 0; c < nc; c++) yp[c0 + c] = gn[idx[c] * C + c0 + c];                  \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
    }

POOL_DEFINE(float, f32)
POOL_DEFINE(double, f64)
POOL_DEFINE(int8_t, i8)
POOL_DEFINE(uint8_t, u8)
POOL_DEFINE(int16_t, i16)
POOL_DEFINE(int32_t, i32)
POOL_DEFINE(int64_t, i64)

void tfc_max_pool_rows_scalar(bool dbl, const pool_job *j, int64_t b, int64_t e) {
    if (dbl) max_pool_rows_f64((void *)j, b, e);
    else max_pool_rows_f32((void *)j, b, e);
}

#define AVG_DEFINE(T, SFX)                                                                                  \
    TFC_SIMD_CLONES static void avg_pool_rows_##SFX(void *arg, int64_t b, int64_t e) {                                    \
        const pool_job *j = arg;                                                                            \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;                              \
        for (int64_t r = b; r < e; r++) {                                                                   \
            const int64_t n = r / OH, oh = r % OH;                                                          \
            const T *xn = (const T *)j->x + n * g->in_h * W * C;                                            \
            for (int64_t ow = 0; ow < OW; ow++) {                                                           \
                int64_t h0, h1, w0, w1;                                                                     \
                window(g, oh, ow, &h0, &h1, &w0, &w1);                                                      \
                T *restrict yp = (T *)j->out + (r * OW + ow) * C;                                           \
                memset(yp, 0, (size_t)C * sizeof(T));                                                       \
                for (int64_t h = h0; h < h1; h++)                                                           \
                    for (int64_t w = w0; w < w1; w++) {                                                     \
                        const T *restrict xp = xn + (h * W + w) * C;                                        \
                        for (int64_t c = 0; c < C; c++) yp[c] += xp[c];                                     \
                    }                                                                                       \
                const T cnt = (T)((h1 - h0) * (w1 - w0));                                                   \
                for (int64_t c = 0; c < C; c++) yp[c] /= cnt;                                               \
            }                                                                                               \
        }                                                                                                   \
    }                                                                                                       \
                                                                                                            \
    /* Input rows (n, ih): gathers dy / count from every window containing the row (no write conflicts). */ \
    TFC_SIMD_CLONES static void avg_pool_grad_rows_##SFX(void *arg, int64_t b, int64_t e) {                               \
        const pool_job *j = arg;                                                                            \
        const tfc_conv_geom *g = j->g;                                                                      \
        const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;                 \
        const int64_t sh = g->stride_h;                                                                     \
        for (int64_t u = b; u < e; u++) {                                                                   \
            const int64_t n = u / H, ih = u % H;                                                            \
            T *restrict dxr = (T *)j->out + u * W * C;                                                      \
            memset(dxr, 0, (size_t)(W * C) * sizeof(T));                                                    \
            /* oh with oh*sh - pad_top <= ih < oh*sh - pad_top + KH */                                      \
            const int64_t lo_num = ih + g->pad_top - g->k_h + 1;                                            \
            int64_t oh_lo = lo_num <= 0 ? 0 : (lo_num + sh - 1) / sh, oh_hi = (ih + g->pad_top) / sh;       \
            if (oh_hi > OH - 1) oh_hi = OH - 1;                                                             \
            for (int64_t oh = oh_lo; oh <= oh_hi; oh++) {                                                   \
                const T *dyr = (const T *)j->dy + (n * OH + oh) * OW * C;                                   \
                for (int64_t ow = 0; ow < OW; ow++) {                                                       \
                    int64_t h0, h1, w0, w1;                                                                 \
                    window(g, oh, ow, &h0, &h1, &w0, &w1);                                                  \
                    const T cnt = (T)((h1 - h0) * (w1 - w0));                                               \
                    const T *restrict dyp = dyr + ow * C;                                                   \
                    for (int64_t w = w0; w < w1; w++) {                                                     \
                        T *restrict dxp = dxr + w * C;                                                      \
                        for (int64_t c = 0; c < C; c++) dxp[c] += dyp[c] / cnt;                             \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        }                                                                                                   \
    }

AVG_DEFINE(float, f32)
AVG_DEFINE(double, f64)

/* ---- dispatch ---- */
typedef enum { MAX_POOL, MAX_POOL_GRAD, MAX_POOL_GRAD_GRAD, AVG_POOL, AVG_POOL_GRAD } pool_op;

/* Compute dtype: half/bfloat16 go through float; everything else is native. */
static tfc_dtype pool_ct(tfc_dtype dt) { return dt == TFC_HALF || dt == TFC_BFLOAT16 ? TFC_FLOAT : dt; }

#define PICK(dt, name, fn)                                                                  \
    switch (dt) {                                                                           \
    case TFC_FLOAT: fn = name##_f32; break;                                                 \
    case TFC_DOUBLE: fn = name##_f64; break;                                                \
    case TFC_INT8: fn = name##_i8; break;                                                   \
    case TFC_UINT8: fn = name##_u8; break;                                                  \
    case TFC_INT16: fn = name##_i16; break;                                                 \
    case TFC_INT32: fn = name##_i32; break;                                                 \
    case TFC_INT64: fn = name##_i64; break;                                                 \
    default: fn = NULL;                                                                     \
    }

static bool pool_run(tfc_kernel_ctx *k, pool_op op, tfc_status *st) {
    /* the geometry comes from the forward input: in[0] (orig_input) or, for AvgPoolGrad, the output */
    tfc_tensor *out = k->out[0];
    int64_t in_dims[4];
    if (op == AVG_POOL_GRAD && out) {
        memcpy(in_dims, out->shape.dims, sizeof in_dims);
    } else if (op == AVG_POOL_GRAD) { /* shape left unknown by a graph trace: read orig_input_shape */
        int64_t n = tfc_read_ints(k->op->name, "orig_input_shape", k->in[0], in_dims, 4, st);
        if (n < 0) return false;
        if (n != 4)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: orig_input_shape must contain 4 values, got %lld",
                                  k->op->name, (long long)n);
    } else {
        memcpy(in_dims, k->in[0]->shape.dims, sizeof in_dims);
    }
    tfc_conv_state tmp;
    const tfc_conv_state *s = tfc_conv_state_of(k, TFC_CONV_POOL, false, &tmp, st);
    tfc_conv_geom g;
    if (!s || !tfc_conv_geom_make(k->op->name, TFC_CONV_POOL, &s->a, in_dims, NULL, &g, st)) return false;
    if (!out) {
        int64_t od[4];
        if (op == MAX_POOL_GRAD || op == AVG_POOL_GRAD) memcpy(od, in_dims, sizeof od);
        else tfc_conv_dims(g.nchw, g.batch, g.out_h, g.out_w, g.out_c, od);
        if (!(out = tfc_kernel_alloc_output(k, 0, od, 4, st))) return false;
    }
    if (out->num_elements == 0) return true;
    tfc_dtype dt = out->dtype, ct = pool_ct(dt);
    tfc_range_fn fn = NULL;
    switch (op) {
    case MAX_POOL: PICK(ct, max_pool_rows, fn) break;
    case MAX_POOL_GRAD: PICK(ct, max_pool_grad_units, fn) break;
    case MAX_POOL_GRAD_GRAD: PICK(ct, max_pool_grad_grad_rows, fn) break;
    case AVG_POOL: fn = ct == TFC_FLOAT ? avg_pool_rows_f32 : ct == TFC_DOUBLE ? avg_pool_rows_f64 : NULL; break;
    case AVG_POOL_GRAD: fn = ct == TFC_FLOAT ? avg_pool_grad_rows_f32 : ct == TFC_DOUBLE ? avg_pool_grad_rows_f64 : NULL; break;
    }
    if (!fn) return tfc_kernel_unimplemented(k, dt, st);
    const tfc_pool_simd *simd = ct == TFC_FLOAT ? tfc_pool_simd_get() : NULL;
    /* the gradient's windows do not overlap: each dx element is written once, no zero fill */
    const bool disjoint = g.stride_h >= g.k_h && g.stride_w >= g.k_w && g.out_h > 0 && g.out_w > 0;
    if (simd) switch (op) {
        case MAX_POOL: fn = simd->max_fwd; break;
        case MAX_POOL_GRAD: fn = disjoint ? simd->max_grad_disjoint : simd->max_grad_blocks; break;
        case AVG_POOL: fn = simd->avg_fwd; break;
        case AVG_POOL_GRAD: fn = disjoint ? simd->avg_grad_disjoint : simd->avg_grad; break;
        case MAX_POOL_GRAD_GRAD: break;
        }

    /* inputs: x = orig_input (max ops) or value; dy = grad (gradient ops) */
    const tfc_tensor *x_t = op == AVG_POOL_GRAD ? NULL : k->in[0];
    const tfc_tensor *dy_t = op == MAX_POOL_GRAD || op == MAX_POOL_GRAD_GRAD ? k->in[2] : op == AVG_POOL_GRAD ? k->in[1] : NULL;
    conv_buf x = {0}, dy = {0}, o = {0};
    bool ok = (!x_t || tfc_conv_load(k, x_t, ct, g.nchw, &x, st)) && (!dy_t || tfc_conv_load(k, dy_t, ct, g.nchw, &dy, st)) &&
              tfc_conv_out(out, ct, g.nchw, &o, st);
    if (ok) {
        pool_job j = {&g, x.data, dy.data, o.data, g.in_c, 1};
        const int64_t win = g.k_h * g.k_w;
        switch (op) {
        case MAX_POOL_GRAD: {
            if (simd && disjoint) { /* units are output rows (n, oh), each owning the dx rows under it */
                tfc_parallel_for(k->pool, g.batch * g.out_h, 2 * g.in_h * g.in_w * g.in_c / g.out_h + 1, fn, &j);
                break;
            }
            /* units are (image, channel block of a multiple of 16 channels): enough of them to keep the
             * threads busy */
            int64_t want = (int64_t)tfc_threadpool_size(k->pool) * 4, nb = g.batch >= want ? 1 : (want + g.batch - 1) / g.batch;
            int64_t cb = (g.in_c + nb - 1) / nb;
            cb = (cb + 15) / 16 * 16;
            if (cb > CB_MAX) cb = CB_MAX;
            if (cb > g.in_c) cb = g.in_c;
            j.cb = cb;
            j.nb = (g.in_c + cb - 1) / cb;
            tfc_parallel_for(k->pool, g.batch * j.nb, g.out_h * g.out_w * win * cb + g.in_h * g.in_w * cb, fn, &j);
            break;
        }
        case AVG_POOL_GRAD: {
            if (simd && disjoint) {
                tfc_parallel_for(k->pool, g.batch * g.out_h, g.in_h * g.in_w * g.in_c / g.out_h + 1, fn, &j);
                break;
            }
            int64_t per = g.out_w * g.k_h * win * g.in_c / (g.stride_h > 0 ? g.stride_h : 1) + g.in_w * g.in_c + 1;
            tfc_parallel_for(k->pool, g.batch * g.in_h, per, fn, &j);
            break;
        }
        default:
            tfc_parallel_for(k->pool, g.batch * g.out_h, g.out_w * win * g.in_c + 1, fn, &j);
        }
        ok = tfc_conv_store(k, &o, out, ct, g.nchw, st);
    }
    tfc_conv_release(&x);
    tfc_conv_release(&dy);
    tfc_conv_release(&o);
    return ok;
}

bool tfc_kernel_max_pool(tfc_kernel_ctx *k, tfc_status *st) { return pool_run(k, MAX_POOL, st); }
bool tfc_kernel_max_pool_grad(tfc_kernel_ctx *k, tfc_status *st) { return pool_run(k, MAX_POOL_GRAD, st); }
bool tfc_kernel_max_pool_grad_grad(tfc_kernel_ctx *k, tfc_status *st) { return pool_run(k, MAX_POOL_GRAD_GRAD, st); }
bool tfc_kernel_avg_pool(tfc_kernel_ctx *k, tfc_status *st) { return pool_run(k, AVG_POOL, st); }
bool tfc_kernel_avg_pool_grad(tfc_kernel_ctx *k, tfc_status *st) { return pool_run(k, AVG_POOL_GRAD, st); }
