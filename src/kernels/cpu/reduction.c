/* Reduction kernels: Sum, Mean, Prod, Max, Min, All, Any, ArgMax, ArgMin.
 *
 * The input's dims are collapsed into alternating groups of kept (K) and reduced (R) dims (size-1 dims
 * dropped, neighbours of the same kind merged), so every reduction is a sequence of passes of two shapes:
 *   [rows, R]     the reduced group is innermost and contiguous: each row reduces to one value;
 *   [O, R, K]     a reduced group above kept ones: R rows of K contiguous values are combined into K.
 * Each pass removes one reduced group; most reductions need one pass, alternating patterns like
 * [R, K, R] two. Work is done in a native "work" type W (half/bfloat16 are widened to float, int8/uint8/
 * int16 to int32 first) and accumulated in A: float sums in double (float partial sums over short blocks,
 * so errors stay near one ulp whatever the length), int32 sums and products in int64, the rest in W.
 * Integer sums and products wrap as TensorFlow's do (computed in unsigned arithmetic: no undefined
 * overflow). Max and Min propagate NaN as TensorFlow does; ArgMax/ArgMin skip NaNs and return the first
 * index of the extreme value. */
#include <math.h>
#include <string.h>

#include "core/size_check.h"
#include "kernels/cpu/kernels.h"

typedef enum { R_SUM, R_MEAN, R_PROD, R_MAX, R_MIN, R_ALL, R_ANY } red_op;

/* ---- primitives per (work type, accumulator type, op) ------------------------------------------------- */
typedef enum { ACC_F64, ACC_F32, ACC_I64, ACC_I32, ACC_U8 } acc_kind;

typedef struct red_impl {
    size_t wsize, asize;
    acc_kind akind;
    void (*init)(void *acc, int64_t n);                                       /* identity values */
    void (*inner)(const void *x, int64_t n, void *out);                       /* one contiguous run -> one A */
    void (*outer)(const void *x, int64_t rows, int64_t k, int64_t stride, void *acc); /* acc[k] op= x[r][k] */
    void (*combine)(void *acc, const void *b, int64_t n);                     /* acc[i] op= b[i], both A */
    const struct red_impl *next;                                              /* the A -> A impl for later passes */
} red_impl;

#define LANES 16

#define ADD_STEP(a, x) ((a) += (x))
#define MUL_STEP(a, x) ((a) *= (x))
#define FMAX_STEP(a, x) ((a) = ((x) > (a) || isnan(x)) ? (x) : (a))
#define FMIN_STEP(a, x) ((a) = ((x) < (a) || isnan(x)) ? (x) : (a))
#define IMAX_STEP(a, x) ((a) = (x) > (a) ? (x) : (a))
#define IMIN_STEP(a, x) ((a) = (x) < (a) ? (x) : (a))
#define UADD_STEP(a, x) ((a) = (int64_t)((uint64_t)(a) + (uint64_t)(int64_t)(x)))
#define UMUL_STEP(a, x) ((a) = (int64_t)((uint64_t)(a) * (uint64_t)(int64_t)(x)))
#define AND_STEP(a, x) ((a) &= (x))
#define OR_STEP(a, x) ((a) |= (x))

/* init, outer and combine for one (W, A, op). `outer` over narrow contiguous rows (k < 32) reads WIDE
 * values at a time into a wide accumulator row and folds it at the end, so the loop stays vectorised. */
#define WIDE 128
#define DEF_COMMON(NAME, W, A, INIT, STEP)                                                              \
    static void NAME##_init(void *acc, int64_t n) {                                                       \
        A *a = acc;                                                                                       \
        for (int64_t i = 0; i < n; i++) a[i] = (INIT);                                                    \
    }                                                                                                     \
    static void NAME##_outer(const void *xv, int64_t rows, int64_t k, int64_t stride, void *accv) {       \
        const W *x = xv;                                                                                  \
        A *acc = accv;                                                                                    \
        int64_t r = 0;                                                                                    \
        if (stride == k && k < 32 && rows >= 2 * (WIDE / k)) {                                            \
            int64_t m = WIDE / k, wk = m * k;                                                             \
            A wide[WIDE];                                                                                 \
            for (int64_t i = 0; i < wk; i++) wide[i] = (INIT);                                            \
            for (; r + m <= rows; r += m) {                                                               \
                const W *blk = x + r * k;                                                                 \
                for (int64_t i = 0; i < wk; i++) STEP(wide[i], (A)blk[i]);                                \
            }                                                                                             \
            for (int64_t i = 0; i < wk; i++) STEP(acc[i % k], wide[i]);                                   \
        }                                                                                                 \
        for (; r < rows; r++) {                                                                           \
            const W *row = x + r * stride;                                                                \
            for (int64_t i = 0; i < k; i++) STEP(acc[i], (A)row[i]);                                      \
        }                                                                                                 \
    }                                                                                                     \
    static void NAME##_combine(void *accv, const void *bv, int64_t n) {                                   \
        A *acc = accv;                                                                                    \
        const A *b = bv;                                                                                  \
        for (int64_t i = 0; i < n; i++) STEP(acc[i], b[i]);                                               \
    }

/* `inner` with LANES independent accumulators so that the loop vectorises. */
#define DEF_INNER(NAME, W, A, INIT, STEP)                                                               \
    static void NAME##_inner(const void *xv, int64_t n, void *out) {                                      \
        const W *x = xv;                                                                                  \
        A lane[LANES];                                                                                    \
        for (int l = 0; l < LANES; l++) lane[l] = (INIT);                                                 \
        int64_t i = 0;                                                                                    \
        for (; i + LANES <= n; i += LANES)                                                                \
            for (int l = 0; l < LANES; l++) STEP(lane[l], (A)x[i + l]);                                   \
        A r = (INIT);                                                                                     \
        for (int l = 0; l < LANES; l++) STEP(r, lane[l]);                                                 \
        for (; i < n; i++) STEP(r, (A)x[i]);                                                              \
        *(A *)out = r;                                                                                    \
    }

/* Float max/min `inner` with GCC vector types (the compiler does not vectorise the NaN-propagating scalar
 * form): a compare-and-blend per lane and a separate NaN mask; 4 vectors in flight hide the latency. */
#define DEF_INNER_FMINMAX(NAME, T, VT, IT, INIT, CMP, STEP)                                              \
    static void NAME##_inner(const void *xv, int64_t n, void *out) {                                      \
        const T *x = xv;                                                                                  \
        enum { NV = 16 / sizeof(T) };                                                                     \
        VT m[4];                                                                                          \
        IT nan[4];                                                                                        \
        for (int q = 0; q < 4; q++) {                                                                     \
            for (int l = 0; l < NV; l++) m[q][l] = (INIT);                                                \
            nan[q] = (IT){0};                                                                             \
        }                                                                                                 \
        int64_t i = 0;                                                                                    \
        for (; i + 4 * NV <= n; i += 4 * NV)                                                              \
            for (int q = 0; q < 4; q++) {                                                                 \
                VT v;                                                                                     \
                memcpy(&v, x + i + q * NV, sizeof v);                                                     \
                IT take = v CMP m[q];                                                                     \
                m[q] = (VT)(((IT)v & take) | ((IT)m[q] & ~take));                                         \
                nan[q] |= v != v;                                                                         \
            }                                                                                             \
        T r = (INIT);                                                                                     \
        bool any = false;                                                                                 \
        for (int q = 0; q < 4; q++)                                                                       \
            for (int l = 0; l < NV; l++) STEP(r, m[q][l]), any |= nan[q][l] != 0;                         \
        for (; i < n; i++) STEP(r, x[i]);                                                                 \
        *(T *)out = any ? (T)NAN : r;                                                                     \
    }

typedef float f32x4 __attribute__((vector_size(16)));
typedef int32_t i32x4 __attribute__((vector_size(16)));
typedef double f64x2 __attribute__((vector_size(16)));
typedef int64_t i64x2 __attribute__((vector_size(16)));

#define DEF_TABLE(NAME, W, A, AK, NEXT)                                                                 \
    static const red_impl NAME = {sizeof(W), sizeof(A), AK, NAME##_init, NAME##_inner, NAME##_outer,     \
                                  NAME##_combine, NEXT};
#define DEF_IMPL(NAME, W, A, AK, INIT, STEP, NEXT)                                                      \
    DEF_COMMON(NAME, W, A, INIT, STEP) DEF_INNER(NAME, W, A, INIT, STEP) DEF_TABLE(NAME, W, A, AK, NEXT)
#define DEF_FMINMAX(NAME, T, VT, IT, AK, INIT, CMP, STEP)                                               \
    DEF_COMMON(NAME, T, T, INIT, STEP)                                                                    \
    DEF_INNER_FMINMAX(NAME, T, VT, IT, INIT, CMP, STEP) DEF_TABLE(NAME, T, T, AK, &NAME)

DEF_IMPL(sum_f64, double, double, ACC_F64, 0.0, ADD_STEP, &sum_f64)
DEF_IMPL(prod_f64, double, double, ACC_F64, 1.0, MUL_STEP, &prod_f64)
DEF_FMINMAX(max_f64, double, f64x2, i64x2, ACC_F64, -INFINITY, >, FMAX_STEP)
DEF_FMINMAX(min_f64, double, f64x2, i64x2, ACC_F64, INFINITY, <, FMIN_STEP)
DEF_IMPL(prod_f32, float, float, ACC_F32, 1.0f, MUL_STEP, &prod_f32)
DEF_FMINMAX(max_f32, float, f32x4, i32x4, ACC_F32, -INFINITY, >, FMAX_STEP)
DEF_FMINMAX(min_f32, float, f32x4, i32x4, ACC_F32, INFINITY, <, FMIN_STEP)
DEF_IMPL(sum_i64, int64_t, int64_t, ACC_I64, 0, UADD_STEP, &sum_i64)
DEF_IMPL(prod_i64, int64_t, int64_t, ACC_I64, 1, UMUL_STEP, &prod_i64)
DEF_IMPL(max_i64, int64_t, int64_t, ACC_I64, INT64_MIN, IMAX_STEP, &max_i64)
DEF_IMPL(min_i64, int64_t, int64_t, ACC_I64, INT64_MAX, IMIN_STEP, &min_i64)
DEF_IMPL(sum_i32, int32_t, int64_t, ACC_I64, 0, UADD_STEP, &sum_i64)
DEF_IMPL(prod_i32, int32_t, int64_t, ACC_I64, 1, UMUL_STEP, &prod_i64)
DEF_IMPL(max_i32, int32_t, int32_t, ACC_I32, INT32_MIN, IMAX_STEP, &max_i32)
DEF_IMPL(min_i32, int32_t, int32_t, ACC_I32, INT32_MAX, IMIN_STEP, &min_i32)
DEF_IMPL(all_b, uint8_t, uint8_t, ACC_U8, 1, AND_STEP, &all_b)
DEF_IMPL(any_b, uint8_t, uint8_t, ACC_U8, 0, OR_STEP, &any_b)

/* float sums: blocks of BLOCK elements are summed in float lanes, blocks are added in double. */
#define BLOCK 512
static void sum_f32_init(void *acc, int64_t n) { sum_f64_init(acc, n); }
static void sum_f32_inner(const void *xv, int64_t n, void *out) {
    const float *x = xv;
    double total = 0.0;
    for (int64_t i = 0; i < n; i += BLOCK) {
        int64_t len = n - i < BLOCK ? n - i : BLOCK, j = 0;
        float lane[LANES] = {0};
        for (; j + LANES <= len; j += LANES)
            for (int l = 0; l < LANES; l++) lane[l] += x[i + j + l];
        float s = 0.0f;
        for (int l = 0; l < LANES; l++) s += lane[l];
        for (; j < len; j++) s += x[i + j];
        total += s;
    }
    *(double *)out = total;
}
static void sum_f32_outer(const void *xv, int64_t rows, int64_t k, int64_t stride, void *accv) {
    const float *x = xv;
    double *acc = accv;
    int64_t r = 0;
    if (stride == k && k < 32 && rows >= 2 * (WIDE / k)) { /* narrow rows: see DEF_COMMON */
        int64_t m = WIDE / k, wk = m * k;
        double wide[WIDE] = {0};
        for (; r + m <= rows; r += m)
            for (int64_t i = 0; i < wk; i++) wide[i] += x[r * k + i];
        for (int64_t i = 0; i < wk; i++) acc[i % k] += wide[i];
    }
    for (; r < rows; r++) {
        const float *row = x + r * stride;
        for (int64_t i = 0; i < k; i++) acc[i] += row[i];
    }
}
static const red_impl sum_f32 = {sizeof(float), sizeof(double), ACC_F64, sum_f32_init, sum_f32_inner, sum_f32_outer,
                                 sum_f64_combine, &sum_f64};

/* The work dtype that `dt` is widened to. */
static tfc_dtype work_dtype(tfc_dtype dt) {
    switch (dt) {
    case TFC_HALF: case TFC_BFLOAT16: return TFC_FLOAT;
    case TFC_INT8: case TFC_UINT8: case TFC_INT16: return TFC_INT32;
    default: return dt;
    }
}

static const red_impl *select_impl(red_op op, tfc_dtype w) {
    bool sum = op == R_SUM || op == R_MEAN;
    switch (w) {
    case TFC_FLOAT: return sum ? &sum_f32 : op == R_PROD ? &prod_f32 : op == R_MAX ? &max_f32 : &min_f32;
    case TFC_DOUBLE: return sum ? &sum_f64 : op == R_PROD ? &prod_f64 : op == R_MAX ? &max_f64 : &min_f64;
    case TFC_INT32: return sum ? &sum_i32 : op == R_PROD ? &prod_i32 : op == R_MAX ? &max_i32 : &min_i32;
    case TFC_INT64: return sum ? &sum_i64 : op == R_PROD ? &prod_i64 : op == R_MAX ? &max_i64 : &min_i64;
    case TFC_BOOL: return op == R_ALL ? &all_b : op == R_ANY ? &any_b : NULL;
    default: return NULL;
    }
}

/* ---- passes ------------------------------------------------------------------------------------------- */
typedef struct {
    const red_impl *im;
    const char *src;
    char *dst, *partial;
    int64_t rows, n, cpr, chunk;          /* inner pass: chunks per row and their length */
    int64_t O, R, K, kb, nkb, rcn, rchunk; /* outer pass: column blocks and row chunks */
} pass_job;

static void inner_range(void *arg, int64_t b, int64_t e) {
    const pass_job *j = arg;
    for (int64_t i = b; i < e; i++) {
        int64_t row = i / j->cpr, c = i % j->cpr, s = c * j->chunk;
        int64_t len = j->n - s < j->chunk ? j->n - s : j->chunk;
        char *o = j->cpr == 1 ? j->dst + row * (int64_t)j->im->asize : j->partial + i * (int64_t)j->im->asize;
        j->im->inner(j->src + (row * j->n + s) * (int64_t)j->im->wsize, len, o);
    }
}

static bool inner_pass(tfc_kernel_ctx *k, const red_impl *im, const void *src, int64_t rows, int64_t n, void *dst,
                       tfc_status *st) {
    int threads = tfc_threadpool_size(k->pool);
    pass_job j = {.im = im, .src = src, .dst = dst, .rows = rows, .n = n, .cpr = 1, .chunk = n};
    if (rows < threads * 2 && n >= 16384) {
        int64_t want = (threads * 4 + rows - 1) / rows, most = n / 4096;
        j.cpr = want < most ? want : most;
        j.chunk = (n + j.cpr - 1) / j.cpr;
        j.cpr = (n + j.chunk - 1) / j.chunk;
    }
    if (j.cpr > 1 && !(j.partial = tfc_malloc((size_t)(rows * j.cpr) * im->asize)))
        return tfc_status_oom(st, k->op->name, (size_t)(rows * j.cpr) * im->asize);
    tfc_parallel_for(k->pool, rows * j.cpr, j.chunk, inner_range, &j);
    if (j.cpr > 1) {
        for (int64_t r = 0; r < rows; r++) {
            char *d = (char *)dst + r * (int64_t)im->asize, *p = j.partial + r * j.cpr * (int64_t)im->asize;
            memcpy(d, p, im->asize);
            for (int64_t c = 1; c < j.cpr; c++) im->combine(d, p + c * (int64_t)im->asize, 1);
        }
        tfc_free(j.partial);
    }
    return true;
}

#define KBLOCK 512

static void outer_range(void *arg, int64_t b, int64_t e) {
    const pass_job *j = arg;
    int64_t as = (int64_t)j->im->asize, ws = (int64_t)j->im->wsize;
    for (int64_t i = b; i < e; i++) {
        int64_t rc = i % j->rcn, kbi = (i / j->rcn) % j->nkb, o = i / (j->rcn * j->nkb);
        int64_t k0 = kbi * j->kb, klen = j->K - k0 < j->kb ? j->K - k0 : j->kb;
        int64_t r0 = rc * j->rchunk, rlen = j->R - r0 < j->rchunk ? j->R - r0 : j->rchunk;
        char *acc = (j->rcn == 1 ? j->dst : j->partial + rc * j->O * j->K * as) + (o * j->K + k0) * as;
        j->im->init(acc, klen);
        j->im->outer(j->src + ((o * j->R + r0) * j->K + k0) * ws, rlen, klen, j->K, acc);
    }
}

static bool outer_pass(tfc_kernel_ctx *k, const red_impl *im, const void *src, int64_t O, int64_t R, int64_t K,
                       void *dst, tfc_status *st) {
    int threads = tfc_threadpool_size(k->pool);
    pass_job j = {.im = im, .src = src, .dst = dst, .O = O, .R = R, .K = K, .kb = KBLOCK, .rcn = 1, .rchunk = R};
    j.nkb = (K + j.kb - 1) / j.kb;
    int64_t items = O * j.nkb;
    if (items < threads * 2 && R * (K < KBLOCK ? K : KBLOCK) >= 32768) {
        int64_t want = (threads * 4 + items - 1) / items, most = R / 64;
        j.rcn = want < most ? want : most;
        if (j.rcn < 1) j.rcn = 1;
        j.rchunk = (R + j.rcn - 1) / j.rcn;
        j.rcn = (R + j.rchunk - 1) / j.rchunk;
    }
    size_t psize = (size_t)(j.rcn * O * K) * im->asize;
    if (j.rcn > 1 && !(j.partial = tfc_malloc(psize))) return tfc_status_oom(st, k->op->name, psize);
    tfc_parallel_for(k->pool, items * j.rcn, j.rchunk * (K < KBLOCK ? K : KBLOCK), outer_range, &j);
    if (j.rcn > 1) {
        memcpy(dst, j.partial, (size_t)(O * K) * im->asize);
        for (int64_t c = 1; c < j.rcn; c++) im->combine(dst, j.partial + c * O * K * (int64_t)im->asize, O * K);
        tfc_free(j.partial);
    }
    return true;
}

/* ---- widening and finishing ----------------------------------------------------------------------------- */
typedef struct {
    tfc_dtype from;
    const void *src;
    void *dst;
} widen_job;

static void widen_range(void *arg, int64_t b, int64_t e) {
    const widen_job *j = arg;
    float *f = j->dst;
    int32_t *w = j->dst;
    switch (j->from) {
    case TFC_HALF: for (int64_t i = b; i < e; i++) f[i] = tfc_half_to_float(((const tfc_half *)j->src)[i]); break;
    case TFC_BFLOAT16:
        for (int64_t i = b; i < e; i++) f[i] = tfc_bfloat16_to_float(((const tfc_bfloat16 *)j->src)[i]);
        break;
    case TFC_INT8: for (int64_t i = b; i < e; i++) w[i] = ((const int8_t *)j->src)[i]; break;
    case TFC_UINT8: for (int64_t i = b; i < e; i++) w[i] = ((const uint8_t *)j->src)[i]; break;
    case TFC_INT16: for (int64_t i = b; i < e; i++) w[i] = ((const int16_t *)j->src)[i]; break;
    default: break;
    }
}

/* Writes accumulator values (of impl im) as dtype dt into out; Mean divides by count first. */
static void finish(const red_impl *im, red_op op, const void *acc, tfc_tensor *out, int64_t count) {
    tfc_dtype dt = out->dtype;
    int64_t n = out->num_elements;
    bool mean = op == R_MEAN;
    switch (im->akind) {
    case ACC_F64: {
        const double *a = acc;
        double c = (double)count;
        if (dt == TFC_DOUBLE) {
            for (int64_t i = 0; i < n; i++) ((double *)out->data)[i] = mean ? a[i] / c : a[i];
        } else {
            for (int64_t i = 0; i < n; i++) ((float *)out->data)[i] = (float)(mean ? a[i] / c : a[i]);
        }
        break;
    }
    case ACC_F32: memcpy(out->data, acc, (size_t)n * sizeof(float)); break;
    case ACC_U8: memcpy(out->data, acc, (size_t)n); break;
    case ACC_I64: { /* integer results wrap to the output width, as TensorFlow's integer arithmetic */
        const int64_t *a = acc;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = (uint64_t)(mean ? (count ? a[i] / count : 0) : a[i]);
            switch (dt) {
            case TFC_INT64: ((int64_t *)out->data)[i] = (int64_t)v; break;
            case TFC_INT32: ((int32_t *)out->data)[i] = (int32_t)(uint32_t)v; break;
            case TFC_INT16: ((int16_t *)out->data)[i] = (int16_t)(uint16_t)v; break;
            case TFC_INT8: ((int8_t *)out->data)[i] = (int8_t)(uint8_t)v; break;
            case TFC_UINT8: ((uint8_t *)out->data)[i] = (uint8_t)v; break;
            default: break;
            }
        }
        break;
    }
    case ACC_I32: { /* max/min: values are in the output's range */
        const int32_t *a = acc;
        for (int64_t i = 0; i < n; i++) {
            switch (dt) {
            case TFC_INT32: ((int32_t *)out->data)[i] = a[i]; break;
            case TFC_INT16: ((int16_t *)out->data)[i] = (int16_t)a[i]; break;
            case TFC_INT8: ((int8_t *)out->data)[i] = (int8_t)a[i]; break;
            case TFC_UINT8: ((uint8_t *)out->data)[i] = (uint8_t)a[i]; break;
            default: break;
            }
        }
        break;
    }
    }
}

/* Half and bfloat16 outputs: the float (or double) accumulators rounded to the type; Mean as
 * T(T(sum) / T(count)). */
static void finish_half(const red_impl *im, red_op op, const void *acc, tfc_tensor *out, int64_t count) {
    bool half = out->dtype == TFC_HALF;
    for (int64_t i = 0; i < out->num_elements; i++) {
        float v = im->akind == ACC_F64 ? (float)((const double *)acc)[i] : ((const float *)acc)[i];
        if (op == R_MEAN) {
            float s = half ? tfc_half_to_float(tfc_half_from_float(v)) : tfc_bfloat16_to_float(tfc_bfloat16_from_float(v));
            float c = half ? tfc_half_to_float(tfc_half_from_float((float)count))
                           : tfc_bfloat16_to_float(tfc_bfloat16_from_float((float)count));
            v = s / c;
        }
        if (half) ((tfc_half *)out->data)[i] = tfc_half_from_float(v);
        else ((tfc_bfloat16 *)out->data)[i] = tfc_bfloat16_from_float(v);
    }
}

/* ---- the reduction driver -------------------------------------------------------------------------------- */
static bool reduce(tfc_kernel_ctx *k, red_op op, tfc_status *st) {
    const tfc_tensor *in = k->in[0], *axes = k->in[1];
    tfc_tensor *out = k->out[0];
    tfc_dtype dt = in->dtype, w = op == R_ALL || op == R_ANY ? TFC_BOOL : work_dtype(dt);
    const red_impl *im = select_impl(op, w);
    if (!im) return tfc_kernel_unimplemented(k, dt, st);
    if (out->num_elements == 0) return true;
    int rank = in->shape.rank;
    bool mask[TFC_MAX_RANK] = {0};
    for (int64_t i = 0; i < axes->num_elements; i++) {
        int64_t a = axes->dtype == TFC_INT32 ? ((const int32_t *)axes->data)[i] : ((const int64_t *)axes->data)[i];
        mask[a < 0 ? a + rank : a] = true;
    }
    int64_t count = out->num_elements ? in->num_elements / out->num_elements : 0;
    bool halfish = dt == TFC_HALF || dt == TFC_BFLOAT16;
    size_t out_acc = (size_t)out->num_elements * im->next->asize;
    char *acc = NULL, *widened = NULL;

    if (in->num_elements == 0) { /* reducing empty dims: the identity (Mean: 0/0) */
        if ((op == R_MAX || op == R_MIN) && w == TFC_INT32 && dt != TFC_INT32) {
            /* the narrow type's own lowest/highest value */
            double v = dt == TFC_INT8 ? (op == R_MAX ? INT8_MIN : INT8_MAX)
                       : dt == TFC_UINT8 ? (op == R_MAX ? 0 : UINT8_MAX) : (op == R_MAX ? INT16_MIN : INT16_MAX);
            for (int64_t i = 0; i < out->num_elements; i++) tfc_dtype_set_f64(dt, out->data, i, v);
            return true;
        }
        if (!(acc = tfc_malloc(out_acc ? out_acc : 1))) return tfc_status_oom(st, k->op->name, out_acc);
        im->next->init(acc, out->num_elements);
        goto done;
    }

    /* Collapse dims into alternating kept/reduced groups. */
    int64_t gs[TFC_MAX_RANK];
    bool gr[TFC_MAX_RANK];
    int ng = 0;
    for (int i = 0; i < rank; i++) {
        if (in->shape.dims[i] == 1) continue;
        if (ng > 0 && gr[ng - 1] == mask[i]) gs[ng - 1] = tfc_dims_product((int64_t[]){gs[ng - 1], in->shape.dims[i]}, 0, 2);
        else gs[ng] = in->shape.dims[i], gr[ng++] = mask[i];
    }
    bool any_reduced = false;
    for (int i = 0; i < ng; i++) any_reduced |= gr[i];
    if (!any_reduced) { /* nothing to combine: a copy */
        memcpy(out->data, in->data, (size_t)in->num_elements * tfc_dtype_size(dt));
        return true;
    }

    const char *src = in->data;
    if (w != dt && op != R_ALL && op != R_ANY) {
        size_t bytes = (size_t)in->num_elements * 4;
        if (!(widened = tfc_malloc(bytes))) return tfc_status_oom(st, k->op->name, bytes);
        widen_job wj = {.from = dt, .src = in->data, .dst = widened};
        tfc_parallel_for(k->pool, in->num_elements, 2, widen_range, &wj);
        src = widened;
    }
    char *prev = NULL; /* intermediate to free */
    const red_impl *cur = im;
    while (any_reduced) {
        char *dst;
        bool inner = gr[ng - 1];
        int j = ng - 1; /* the innermost reduced group: removed by this pass */
        while (!gr[j]) j--;
        int64_t dst_n = 1;
        for (int i = 0; i < ng; i++)
            if (i != j) dst_n *= gs[i];
        size_t bytes = (size_t)dst_n * cur->asize;
        if (!(dst = tfc_malloc(bytes ? bytes : 1))) {
            tfc_free(prev);
            tfc_free(widened);
            return tfc_status_oom(st, k->op->name, bytes);
        }
        bool ok;
        if (inner) {
            ok = inner_pass(k, cur, src, dst_n, gs[ng - 1], dst, st);
            ng--;
        } else {
            int64_t O = 1, K = 1;
            for (int i = 0; i < j; i++) O *= gs[i];
            for (int i = j + 1; i < ng; i++) K *= gs[i];
            ok = outer_pass(k, cur, src, O, gs[j], K, dst, st);
            /* drop group j and merge its kept neighbours */
            for (int i = j; i < ng - 1; i++) gs[i] = gs[i + 1], gr[i] = gr[i + 1];
            ng--;
            if (j > 0 && j < ng && !gr[j - 1] && !gr[j]) {
                gs[j - 1] *= gs[j];
                for (int i = j; i < ng - 1; i++) gs[i] = gs[i + 1], gr[i] = gr[i + 1];
                ng--;
            }
        }
        tfc_free(prev);
        if (!ok) {
            tfc_free(dst);
            tfc_free(widened);
            return false;
        }
        prev = dst;
        src = dst;
        cur = cur->next;
        any_reduced = false;
        for (int i = 0; i < ng; i++) any_reduced |= gr[i];
    }
    tfc_free(widened);
    acc = prev;
done:
    if (halfish) finish_half(im->next, op, acc, out, count);
    else finish(im->next, op, acc, out, count);
    tfc_free(acc);
    return true;
}

static bool sum_kernel(tfc_kernel_ctx *k, tfc_status *st) { return reduce(k, R_SUM, st); }
static bool mean_kernel(tfc_kernel_ctx *k, tfc_status *st) { return reduce(k, R_MEAN, st); }
static bool prod_kernel(tfc_kernel_ctx *k, tfc_status *st) { return reduce(k, R_PROD, st); }
static bool max_kernel(tfc_kernel_ctx *k, tfc_status *st) { return reduce(k, R_MAX, st); }
static bool min_kernel(tfc_kernel_ctx *k, tfc_status *st) { return reduce(k, R_MIN, st); }
static bool all_kernel(tfc_kernel_ctx *k, tfc_status *st) { return reduce(k, R_ALL, st); }
static bool any_kernel(tfc_kernel_ctx *k, tfc_status *st) { return reduce(k, R_ANY, st); }

/* ---- ArgMax / ArgMin ------------------------------------------------------------------------------------ */
typedef struct {
    const void *x;
    void *out;
    tfc_dtype dt, odt;
    int64_t R, inner;
    bool is_max;
} arg_job;

static inline void store_index(const arg_job *j, int64_t i, int64_t v) {
    if (j->odt == TFC_INT64) ((int64_t *)j->out)[i] = v;
    else if (j->odt == TFC_INT32) ((int32_t *)j->out)[i] = (int32_t)v;
    else ((int16_t *)j->out)[i] = (int16_t)v;
}

/* best starts at the type's lowest (highest) value and moves on strictly greater (smaller) values: NaN never
 * wins and ties keep the first index, as TensorFlow. Rows of the [outer, R, inner] view run over the
 * `inner` contiguous positions together. */
#define ARG_LOOP(T, LOAD, LOWEST, HIGHEST)                                                                 \
    do {                                                                                                    \
        const T *x = j->x;                                                                                  \
        for (int64_t o = b; o < e; o++) {                                                                   \
            int64_t base = o * j->R * j->inner;                                                             \
            for (int64_t i0 = 0; i0 < j->inner; i0 += 64) {                                                 \
                int64_t len = j->inner - i0 < 64 ? j->inner - i0 : 64;                                      \
                double best_d[64];                                                                          \
                int64_t idx[64];                                                                            \
                for (int64_t i = 0; i < len; i++) best_d[i] = j->is_max ? (LOWEST) : (HIGHEST), idx[i] = 0; \
                for (int64_t r = 0; r < j->R; r++) {                                                        \
                    const T *row = x + base + r * j->inner + i0;                                            \
                    if (j->is_max) {                                                                        \
                        for (int64_t i = 0; i < len; i++) {                                                 \
                            double v = LOAD(row[i]);                                                        \
                            if (v > best_d[i]) best_d[i] = v, idx[i] = r;                                   \
                        }                                                                                   \
                    } else {                                                                                \
                        for (int64_t i = 0; i < len; i++) {                                                 \
                            double v = LOAD(row[i]);                                                        \
                            if (v < best_d[i]) best_d[i] = v, idx[i] = r;                                   \
                        }                                                                                   \
                    }                                                                                       \
                }                                                                                           \
                for (int64_t i = 0; i < len; i++) store_index(j, o * j->inner + i0 + i, idx[i]);          \
            }                                                                                               \
        }                                                                                                   \
    } while (0)

/* Contiguous rows (inner == 1), the common case: a typed scalar scan. */
#define ARG_ROWS(T, LOWEST, HIGHEST)                                                                      \
    do {                                                                                                   \
        const T *x = j->x;                                                                                 \
        for (int64_t o = b; o < e; o++) {                                                                  \
            const T *row = x + o * j->R;                                                                   \
            int64_t best_i = 0;                                                                            \
            T best = j->is_max ? (LOWEST) : (HIGHEST);                                                     \
            if (j->is_max) {                                                                               \
                for (int64_t r = 0; r < j->R; r++)                                                         \
                    if (row[r] > best) best = row[r], best_i = r;                                          \
            } else {                                                                                       \
                for (int64_t r = 0; r < j->R; r++)                                                         \
                    if (row[r] < best) best = row[r], best_i = r;                                          \
            }                                                                                              \
            store_index(j, o, best_i);                                                                     \
        }                                                                                                  \
    } while (0)

#define LD_NUM(v) ((double)(v))
#define LD_HALF(v) ((double)tfc_half_to_float(v))
#define LD_BF16(v) ((double)tfc_bfloat16_to_float(v))

static void arg_range(void *arg, int64_t b, int64_t e) {
    const arg_job *j = arg;
    if (j->inner == 1) {
        switch (j->dt) {
        case TFC_FLOAT: ARG_ROWS(float, -INFINITY, INFINITY); return;
        case TFC_DOUBLE: ARG_ROWS(double, -INFINITY, INFINITY); return;
        case TFC_INT32: ARG_ROWS(int32_t, INT32_MIN, INT32_MAX); return;
        case TFC_INT64: ARG_ROWS(int64_t, INT64_MIN, INT64_MAX); return;
        default: break;
        }
    }
    switch (j->dt) {
    case TFC_FLOAT: ARG_LOOP(float, LD_NUM, -INFINITY, INFINITY); break;
    case TFC_DOUBLE: ARG_LOOP(double, LD_NUM, -INFINITY, INFINITY); break;
    case TFC_HALF: ARG_LOOP(tfc_half, LD_HALF, -INFINITY, INFINITY); break;
    case TFC_BFLOAT16: ARG_LOOP(tfc_bfloat16, LD_BF16, -INFINITY, INFINITY); break;
    case TFC_INT8: ARG_LOOP(int8_t, LD_NUM, -INFINITY, INFINITY); break;
    case TFC_UINT8: case TFC_BOOL: ARG_LOOP(uint8_t, LD_NUM, -INFINITY, INFINITY); break;
    case TFC_INT16: ARG_LOOP(int16_t, LD_NUM, -INFINITY, INFINITY); break;
    case TFC_INT32: ARG_LOOP(int32_t, LD_NUM, -INFINITY, INFINITY); break;
    case TFC_INT64: { /* exact compare: doubles cannot hold every int64 */
        const int64_t *x = j->x;
        for (int64_t o = b; o < e; o++)
            for (int64_t i = 0; i < j->inner; i++) {
                int64_t best = j->is_max ? INT64_MIN : INT64_MAX, bi = 0;
                for (int64_t r = 0; r < j->R; r++) {
                    int64_t v = x[(o * j->R + r) * j->inner + i];
                    if (j->is_max ? v > best : v < best) best = v, bi = r;
                }
                store_index(j, o * j->inner + i, bi);
            }
        break;
    }
    default: break;
    }
}

static bool arg_reduce(tfc_kernel_ctx *k, bool is_max, tfc_status *st) {
    const tfc_tensor *in = k->in[0], *dim = k->in[1];
    tfc_tensor *out = k->out[0];
    if (out->num_elements == 0) return true;
    int64_t a = dim->dtype == TFC_INT32 ? *(const int32_t *)dim->data
                : dim->dtype == TFC_INT16 ? *(const int16_t *)dim->data : *(const int64_t *)dim->data;
    int rank = in->shape.rank, axis = (int)(a < 0 ? a + rank : a);
    arg_job j = {.x = in->data, .out = out->data, .dt = in->dtype, .odt = out->dtype, .R = in->shape.dims[axis],
                 .inner = 1, .is_max = is_max};
    int64_t outer = tfc_dims_product(in->shape.dims, 0, axis);
    j.inner = tfc_dims_product(in->shape.dims, axis + 1, rank);
    tfc_parallel_for(k->pool, outer, j.R * j.inner * 2, arg_range, &j);
    return true;
}

static bool arg_max_kernel(tfc_kernel_ctx *k, tfc_status *st) { return arg_reduce(k, true, st); }
static bool arg_min_kernel(tfc_kernel_ctx *k, tfc_status *st) { return arg_reduce(k, false, st); }

const tfc_kernel_reg tfc_cpu_kernels_reduction[] = {
    {"Sum", sum_kernel}, {"Mean", mean_kernel}, {"Prod", prod_kernel}, {"Max", max_kernel},
    {"Min", min_kernel}, {"All", all_kernel},   {"Any", any_kernel},   {"ArgMax", arg_max_kernel},
    {"ArgMin", arg_min_kernel}, {NULL, NULL},
};
