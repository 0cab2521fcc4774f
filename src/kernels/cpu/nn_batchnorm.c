/* FusedBatchNormV3 and FusedBatchNormGradV3 on CPU, as TensorFlow's CPU kernels compute them:
 *   training:  mean, var = batch statistics (var biased), y = (x - mean) * rsqrt(var + eps) * scale + offset,
 *              batch_mean / batch_variance = running statistics (variance unbiased, n / max(n - 1, 1)),
 *              blended with the given ones when exponential_avg_factor != 1;
 *              reserve_space_1/2 = the batch mean and biased variance (the gradient's inputs);
 *   inference: the given mean and variance are used and passed through.
 * x is viewed as [outer, channels, inner]: inner = 1 for channels-last formats (the reductions then run
 * over row chunks in parallel, vectorised across channels), the spatial size for NCHW/NCDHW (channels
 * run in parallel, vectorised along the spatial strip). Statistics accumulate in double over float
 * blocks. half/bfloat16 inputs are widened to float32; U (the statistics dtype) is read into double. */
#include "core/size_check.h"
#include "kernels/cpu/kstate.h"
#include "kernels/cpu/nn_internal.h"

typedef struct {
    bool dbl;                  /* x/dy/y data are double (else float) */
    int64_t outer, ch, inner;
    const void *x, *dy;        /* dy: gradient pass only */
    void *y;                   /* y or x_backprop; NULL: statistics only */
    const void *mean_t;        /* [ch] in T: centre for the variance / gradient passes */
    const void *ca, *cb, *cd;  /* [ch] in T: output coefficients, see bn_out */
    double *partial;           /* NHWC: [chunks][4 * ch] (sums, then scratch) */
    int64_t rows_per_chunk;
    int pass;                  /* 0: sum x, 1: sum (x - mean)^2, 2: gradient sums (dy, dy * (x - mean)) */
    /* NCHW, one task per channel: everything at once */
    bool training, grad;
    double eps;
    const double *scale, *offset, *in_mean, *in_var;
    double *mean, *var, *s1, *s2; /* per-channel results */
} bn_job;

/* ---- typed loops ----
 * NHWC reductions: rows [rb, re) of [rows, ch], summed in T over blocks of 64 rows, each block added
 * into part (double). Outputs:
 *   forward: y = (x - mean) * a + b
 *   grad:    dx = a * dy + b * (x - mean) + d    (b, d zero in inference) */
#define BN_DEFINE(T, SUF)                                                                                  \
    static void bn_rows_##SUF(const bn_job *j, int64_t rb, int64_t re, double *part, T *blk) {             \
        int64_t C = j->ch;                                                                                 \
        const T *x = j->x, *dy = j->dy, *mu = j->mean_t;                                                   \
        int w = j->pass == 2 ? 2 : 1;                                                                      \
        for (int64_t c = 0; c < w * C; c++) part[c] = 0;                                                   \
        for (int64_t r0 = rb; r0 < re; r0 += 64) {                                                         \
            int64_t r1 = re - r0 < 64 ? re : r0 + 64;                                                      \
            for (int64_t c = 0; c < w * C; c++) blk[c] = 0;                                                \
            for (int64_t r = r0; r < r1; r++) {                                                            \
                const T *restrict xr = x + r * C;                                                           \
                if (j->pass == 0) {                                                                        \
                    for (int64_t c = 0; c < C; c++) blk[c] += xr[c];                                       \
                } else if (j->pass == 1) {                                                                 \
                    for (int64_t c = 0; c < C; c++) {                                                      \
                        T d = xr[c] - mu[c];                                                               \
                        blk[c] += d * d;                                                                   \
                    }                                                                                      \
                } else {                                                                                   \
                    const T *restrict gr = dy + r * C;                                                      \
                    for (int64_t c = 0; c < C; c++) {                                                      \
                        blk[c] += gr[c];                                                                   \
                        blk[C + c] += gr[c] * (xr[c] - mu[c]);                                             \
                    }                                                                                      \
                }                                                                                          \
            }                                                                                              \
            for (int64_t c = 0; c < w * C; c++) part[c] += (double)blk[c];                                 \
        }                                                                                                  \
    }                                                                                                      \
    static void bn_out_##SUF(const bn_job *j, int64_t rb, int64_t re) {                                   \
        int64_t C = j->ch;                                                                                 \
        const T *x = j->x, *dy = j->dy, *a = j->ca, *b = j->cb, *d = j->cd, *mu = j->mean_t;               \
        T *y = j->y;                                                                                       \
        for (int64_t r = rb; r < re; r++) {                                                                \
            const T *restrict xr = x + r * C;                                                               \
            T *restrict yr = y + r * C;                                                                     \
            if (!j->grad) {                                                                                \
                for (int64_t c = 0; c < C; c++) yr[c] = (xr[c] - mu[c]) * a[c] + b[c];                     \
            } else {                                                                                       \
                const T *restrict gr = dy + r * C;                                                          \
                for (int64_t c = 0; c < C; c++) yr[c] = a[c] * gr[c] + b[c] * (xr[c] - mu[c]) + d[c];      \
            }                                                                                              \
        }                                                                                                  \
    }                                                                                                      \
    /* NCHW: channel c's strips x[o, c, :] */                                                              \
    static void bn_channel_##SUF(const bn_job *j, int64_t c) {                                            \
        int64_t C = j->ch, I = j->inner, n = j->outer * I;                                                 \
        const T *x = j->x, *dy = j->dy;                                                                    \
        T *y = j->y;                                                                                       \
        double mean, var;                                                                                  \
        if (j->grad) {                                                                                     \
            mean = j->in_mean[c];                                                                          \
            var = j->in_var[c];                                                                            \
        } else if (j->training) {                                                                          \
            double s = 0, q = 0;                                                                           \
            for (int64_t o = 0; o < j->outer; o++) {                                                       \
                const T *xs = x + (o * C + c) * I;                                                         \
                T acc[NN_LANES] = {0};                                                                     \
                int64_t i = 0;                                                                             \
                for (; i + NN_LANES <= I; i += NN_LANES)                                                   \
                    for (int l = 0; l < NN_LANES; l++) acc[l] += xs[i + l];                                \
                T t = 0;                                                                                   \
                for (int l = 0; l < NN_LANES; l++) t += acc[l];                                            \
                for (; i < I; i++) t += xs[i];                                                             \
                s += (double)t;                                                                            \
            }                                                                                              \
            mean = s / (double)n;                                                                          \
            T mt = (T)mean;                                                                                \
            for (int64_t o = 0; o < j->outer; o++) {                                                       \
                const T *xs = x + (o * C + c) * I;                                                         \
                T acc[NN_LANES] = {0};                                                                     \
                int64_t i = 0;                                                                             \
                for (; i + NN_LANES <= I; i += NN_LANES)                                                   \
                    for (int l = 0; l < NN_LANES; l++) {                                                   \
                        T d = xs[i + l] - mt;                                                              \
                        acc[l] += d * d;                                                                   \
                    }                                                                                      \
                T t = 0;                                                                                   \
                for (int l = 0; l < NN_LANES; l++) t += acc[l];                                            \
                for (; i < I; i++) t += (xs[i] - mt) * (xs[i] - mt);                                       \
                q += (double)t;                                                                            \
            }                                                                                              \
            var = q / (double)n;                                                                           \
        } else {                                                                                           \
            mean = j->in_mean[c];                                                                          \
            var = j->in_var[c];                                                                            \
        }                                                                                                  \
        double inv = 1.0 / sqrt(var + j->eps);                                                             \
        j->mean[c] = mean;                                                                                 \
        j->var[c] = var;                                                                                   \
        if (!j->grad) {                                                                                    \
            T a = (T)(j->scale[c] * inv), b = (T)j->offset[c], m0 = (T)mean;                               \
            for (int64_t o = 0; o < j->outer; o++) {                                                       \
                const T *restrict xs = x + (o * C + c) * I;                                                 \
                T *restrict ys = y + (o * C + c) * I;                                                       \
                for (int64_t i = 0; i < I; i++) ys[i] = (xs[i] - m0) * a + b;                              \
            }                                                                                              \
            return;                                                                                        \
        }                                                                                                  \
        T mt = (T)mean;                                                                                    \
        double sdy = 0, sdyx = 0;                                                                          \
        for (int64_t o = 0; o < j->outer; o++) {                                                           \
            const T *xs = x + (o * C + c) * I, *gs = dy + (o * C + c) * I;                                 \
            T a1[NN_LANES] = {0}, a2[NN_LANES] = {0};                                                      \
            int64_t i = 0;                                                                                 \
            for (; i + NN_LANES <= I; i += NN_LANES)                                                       \
                for (int l = 0; l < NN_LANES; l++) {                                                       \
                    a1[l] += gs[i + l];                                                                    \
                    a2[l] += gs[i + l] * (xs[i + l] - mt);                                                 \
                }                                                                                          \
            T t1 = 0, t2 = 0;                                                                              \
            for (int l = 0; l < NN_LANES; l++) t1 += a1[l], t2 += a2[l];                                   \
            for (; i < I; i++) t1 += gs[i], t2 += gs[i] * (xs[i] - mt);                                    \
            sdy += (double)t1;                                                                             \
            sdyx += (double)t2;                                                                            \
        }                                                                                                  \
        j->s1[c] = sdy;                                                                                    \
        j->s2[c] = sdyx;                                                                                   \
        double A = j->scale[c] * inv, B = 0, D = 0;                                                        \
        if (j->training && n > 0) {                                                                        \
            B = -A * inv * inv * sdyx / (double)n;                                                         \
            D = -A * sdy / (double)n;                                                                      \
        }                                                                                                  \
        T at = (T)A, bt = (T)B, dt = (T)D;                                                                 \
        for (int64_t o = 0; o < j->outer; o++) {                                                           \
            const T *restrict xs = x + (o * C + c) * I, *restrict gs = dy + (o * C + c) * I;               \
            T *restrict ys = y + (o * C + c) * I;                                                           \
            for (int64_t i = 0; i < I; i++) ys[i] = at * gs[i] + bt * (xs[i] - mt) + dt;                   \
        }                                                                                                  \
    }

BN_DEFINE(float, f32)
BN_DEFINE(double, f64)

/* ---- parallel drivers ---- */

static void bn_reduce_chunks(void *arg, int64_t begin, int64_t end) {
    const bn_job *j = arg;
    for (int64_t chunk = begin; chunk < end; chunk++) {
        int64_t rb = chunk * j->rows_per_chunk, re = rb + j->rows_per_chunk;
        if (re > j->outer) re = j->outer;
        double *part = j->partial + chunk * 4 * j->ch;
        if (j->dbl) bn_rows_f64(j, rb, re, part, part + 2 * j->ch);
        else bn_rows_f32(j, rb, re, part, (float *)(part + 2 * j->ch));
    }
}

static void bn_out_range(void *arg, int64_t begin, int64_t end) {
    const bn_job *j = arg;
    if (j->dbl) bn_out_f64(j, begin, end);
    else bn_out_f32(j, begin, end);
}

static void bn_channels(void *arg, int64_t begin, int64_t end) {
    const bn_job *j = arg;
    for (int64_t c = begin; c < end; c++) {
        if (j->dbl) bn_channel_f64(j, c);
        else bn_channel_f32(j, c);
    }
}

/* NHWC: column sums for pass j->pass into out (ch values, or 2 * ch for the gradient pass). */
static void bn_column_sums(tfc_kernel_ctx *k, bn_job *j, int64_t chunks, double *out) {
    int64_t w = j->pass == 2 ? 2 : 1;
    tfc_parallel_for(k->pool, chunks, j->rows_per_chunk * j->ch * 2, bn_reduce_chunks, j);
    for (int64_t c = 0; c < w * j->ch; c++) {
        double s = 0;
        for (int64_t i = 0; i < chunks; i++) s += j->partial[i * 4 * j->ch + c];
        out[c] = s;
    }
}

/* Per-channel T-typed copies of a double vector. */
static void to_t(bool dbl, void *dst, const double *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (dbl) ((double *)dst)[i] = src[i];
        else ((float *)dst)[i] = (float)src[i];
    }
}

static void read_u(const tfc_tensor *t, double *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = tfc_dtype_get_f64(t->dtype, t->data, i);
}

static void write_u(tfc_tensor *t, const double *src, int64_t n) {
    for (int64_t i = 0; i < n; i++) tfc_dtype_set_f64(t->dtype, t->data, i, src[i]);
}

static void fill_u(tfc_tensor *t, double v) {
    for (int64_t i = 0; i < t->num_elements; i++) tfc_dtype_set_f64(t->dtype, t->data, i, v);
}

/* nchw: channels in dim 1 (data_format NCHW or NCDHW, parsed by the instance: kstate.h) */
static void bn_view(bool nchw, const tfc_tensor *x, bn_job *j) {
    int cd = nchw ? 1 : x->shape.rank - 1;
    j->outer = x->num_elements ? tfc_dims_product(x->shape.dims, 0, cd) : 0; /* empty: no rows to walk */
    j->inner = x->num_elements ? tfc_dims_product(x->shape.dims, cd + 1, x->shape.rank) : 0;
    j->ch = x->shape.dims[cd];
}

/* Shared setup: T data as float or double (widening half/bfloat16), work buffers. */
typedef struct {
    float *xw, *dyw, *yw; /* widened half/bfloat16 buffers */
    double *work;         /* doubles: see bn_alloc */
} bn_bufs;

static void bn_free(bn_bufs *b) {
    tfc_free(b->xw);
    tfc_free(b->dyw);
    tfc_free(b->yw);
    tfc_free(b->work);
}

/* work layout (doubles): scale, offset, in_mean, in_var, mean, var, s1, s2 (8 * ch), then T arrays
 * mean_t, ca, cb, cd (4 * ch, as doubles for alignment), then NHWC partials (chunks * 4 * ch). */
static bool bn_alloc(tfc_kernel_ctx *k, bn_job *j, bn_bufs *b, int64_t chunks, const tfc_tensor *x,
                     const tfc_tensor *dy, tfc_tensor *y, tfc_status *st) {
    tfc_dtype T = x->dtype;
    j->dbl = T == TFC_DOUBLE;
    j->x = x->data;
    j->dy = dy ? dy->data : NULL;
    j->y = y->data;
    if (nn_is_half(T) && x->num_elements > 0) {
        if (!(b->xw = tfc_nn_widen_alloc(k, x, st))) return false;
        if (dy && !(b->dyw = tfc_nn_widen_alloc(k, dy, st))) return false;
        if (!(b->yw = tfc_nn_scratch(k, x->num_elements, st))) return false;
        j->x = b->xw;
        j->dy = b->dyw;
        j->y = b->yw;
    }
    int64_t C = j->ch;
    size_t n = (size_t)(12 * C + chunks * 4 * C + 1);
    if (!(b->work = tfc_calloc(n, sizeof(double)))) return tfc_status_oom(st, k->op->name, n * sizeof(double));
    double *w = b->work;
    j->scale = w;
    j->offset = w + C;
    j->in_mean = w + 2 * C;
    j->in_var = w + 3 * C;
    j->mean = w + 4 * C;
    j->var = w + 5 * C;
    j->s1 = w + 6 * C;
    j->s2 = w + 7 * C;
    j->mean_t = w + 8 * C;
    j->ca = w + 9 * C;
    j->cb = w + 10 * C;
    j->cd = w + 11 * C;
    j->partial = w + 12 * C;
    return true;
}

static void bn_finish(const tfc_tensor *x, tfc_tensor *y, const bn_bufs *b) {
    if (b->yw) nn_narrow(x->dtype, b->yw, y->data, x->num_elements);
}

bool tfc_nn_fused_batch_norm(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    tfc_tensor *y = k->out[0], *bmean = k->out[1], *bvar = k->out[2], *rs1 = k->out[3], *rs2 = k->out[4],
               *rs3 = k->out[5];
    tfc_kstate tmp;
    const tfc_kstate *ks = tfc_kstate_of(k, &tmp, st);
    if (!ks) return false;
    bool training = ks->training;
    double eps = ks->eps, f = ks->factor; /* float32 values, as TensorFlow's float attrs */
    bn_job j = {.training = training, .eps = eps};
    bn_view(ks->nchw, x, &j);
    int64_t C = j.ch, n = j.outer * j.inner;
    fill_u(rs3, 0.0);
    if (x->num_elements == 0) { /* TensorFlow: NaN statistics, zero reserve spaces */
        fill_u(bmean, NAN);
        fill_u(bvar, NAN);
        fill_u(rs1, 0.0);
        fill_u(rs2, 0.0);
        return true;
    }
    bool nhwc = j.inner == 1;
    int64_t chunks = nhwc ? tfc_nn_reduce_chunks(k, j.outer, C) : 0;
    bn_bufs b = {0};
    if (!bn_alloc(k, &j, &b, chunks, x, NULL, y, st)) {
        bn_free(&b);
        return false;
    }
    double *scale = (double *)j.scale, *offset = (double *)j.offset, *in_mean = (double *)j.in_mean,
           *in_var = (double *)j.in_var;
    read_u(k->in[1], scale, C);
    read_u(k->in[2], offset, C);
    bool use_in = !training || f != 1.0;
    if (use_in) {
        read_u(k->in[3], in_mean, C);
        read_u(k->in[4], in_var, C);
    }
    if (!nhwc) {
        tfc_parallel_for(k->pool, C, n * (training ? 4 : 2), bn_channels, &j);
    } else {
        if (training) {
            j.rows_per_chunk = (j.outer + chunks - 1) / chunks;
            j.pass = 0;
            bn_column_sums(k, &j, chunks, j.mean);
            for (int64_t c = 0; c < C; c++) j.mean[c] /= (double)n;
            to_t(j.dbl, (void *)j.mean_t, j.mean, C);
            j.pass = 1;
            bn_column_sums(k, &j, chunks, j.var);
            for (int64_t c = 0; c < C; c++) j.var[c] /= (double)n;
        } else {
            memcpy(j.mean, in_mean, (size_t)C * sizeof(double));
            memcpy(j.var, in_var, (size_t)C * sizeof(double));
        }
        double *a = j.s1; /* reused as coefficient scratch */
        for (int64_t c = 0; c < C; c++) a[c] = scale[c] / sqrt(j.var[c] + eps);
        to_t(j.dbl, (void *)j.mean_t, j.mean, C);
        to_t(j.dbl, (void *)j.ca, a, C);
        to_t(j.dbl, (void *)j.cb, offset, C);
        tfc_parallel_for(k->pool, j.outer, C * 2, bn_out_range, &j);
    }
    if (training) {
        double *bm = j.s1, *bv = j.s2;
        double corr = (double)n / (double)(n > 1 ? n - 1 : 1);
        for (int64_t c = 0; c < C; c++) {
            double unbiased = j.var[c] * corr;
            bm[c] = f == 1.0 ? j.mean[c] : (1.0 - f) * in_mean[c] + f * j.mean[c];
            bv[c] = f == 1.0 ? unbiased : (1.0 - f) * in_var[c] + f * unbiased;
        }
        write_u(bmean, bm, C);
        write_u(bvar, bv, C);
        write_u(rs1, j.mean, C);
        write_u(rs2, j.var, C);
    } else {
        write_u(bmean, in_mean, C);
        write_u(bvar, in_var, C);
        write_u(rs1, in_mean, C);
        write_u(rs2, in_var, C);
    }
    bn_finish(x, y, &b);
    bn_free(&b);
    return true;
}

/* x_backprop = scale * rsqrt(var + eps) * (dy - mean(dy) - (x - mean) * mean(dy * (x - mean)) / (var + eps))
 * in training, scale * rsqrt(var + eps) * dy in inference; scale_backprop = sum(dy * (x - mean)) *
 * rsqrt(var + eps); offset_backprop = sum(dy). mean/var are reserve_space_1/2. */
bool tfc_nn_fused_batch_norm_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *dy = k->in[0], *x = k->in[1];
    tfc_tensor *dx = k->out[0], *dscale = k->out[1], *doffset = k->out[2];
    tfc_kstate tmp;
    const tfc_kstate *ks = tfc_kstate_of(k, &tmp, st);
    if (!ks) return false;
    bool training = ks->training;
    double eps = ks->eps;
    bn_job j = {.training = training, .grad = true, .eps = eps};
    bn_view(ks->nchw, x, &j);
    int64_t C = j.ch, n = j.outer * j.inner;
    if (x->num_elements == 0) {
        fill_u(dscale, 0.0);
        fill_u(doffset, 0.0);
        return true;
    }
    bool nhwc = j.inner == 1;
    int64_t chunks = nhwc ? tfc_nn_reduce_chunks(k, j.outer, 2 * C) : 0;
    bn_bufs b = {0};
    if (!bn_alloc(k, &j, &b, chunks, x, dy, dx, st)) {
        bn_free(&b);
        return false;
    }
    double *scale = (double *)j.scale, *in_mean = (double *)j.in_mean, *in_var = (double *)j.in_var;
    read_u(k->in[2], scale, C);
    read_u(k->in[3], in_mean, C);
    read_u(k->in[4], in_var, C);
    to_t(j.dbl, (void *)j.mean_t, in_mean, C);
    if (!nhwc) {
        tfc_parallel_for(k->pool, C, n * 4, bn_channels, &j);
    } else {
        j.rows_per_chunk = (j.outer + chunks - 1) / chunks;
        j.pass = 2;
        double *sums = j.mean; /* mean and var are adjacent: 2 * ch doubles */
        bn_column_sums(k, &j, chunks, sums);
        memcpy(j.s1, sums, (size_t)C * sizeof(double));
        memcpy(j.s2, sums + C, (size_t)C * sizeof(double));
        /* coefficients in the now free mean, var and in_mean slots (mean_t already holds the centre) */
        double *A = j.mean, *B = j.var, *Dv = in_mean;
        for (int64_t c = 0; c < C; c++) {
            double inv = 1.0 / sqrt(in_var[c] + eps);
            A[c] = scale[c] * inv;
            B[c] = training ? -A[c] * inv * inv * j.s2[c] / (double)n : 0.0;
            Dv[c] = training ? -A[c] * j.s1[c] / (double)n : 0.0;
        }
        to_t(j.dbl, (void *)j.ca, A, C);
        to_t(j.dbl, (void *)j.cb, B, C);
        to_t(j.dbl, (void *)j.cd, Dv, C);
        tfc_parallel_for(k->pool, j.outer, C * 3, bn_out_range, &j);
    }
    double *ds = j.mean; /* reuse: the per-channel results are final now */
    for (int64_t c = 0; c < C; c++) ds[c] = j.s2[c] / sqrt(in_var[c] + eps);
    write_u(dscale, ds, C);
    write_u(doffset, j.s1, C);
    bn_finish(x, dx, &b);
    bn_free(&b);
    return true;
}
