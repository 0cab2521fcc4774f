/* NN kernels: elementwise activations and their *Grad ops, BiasAdd, BiasAddGrad, L2Loss, and the family's
 * kernel table (softmax and cross-entropy kernels are in nn_softmax.c, batch norm in nn_batchnorm.c).
 * float32 and float64 run typed loops the compiler vectorises; half and bfloat16 are widened to float32
 * in blocks; integer dtypes (Relu, Relu6, BiasAdd) run typed loops too. */
#include "core/size_check.h"
#include "kernels/cpu/kstate.h"
#include "kernels/cpu/nn_internal.h"

/* ---- shared helpers ---- */

float *tfc_nn_scratch(const tfc_kernel_ctx *k, int64_t n, tfc_status *st) {
    float *p = tfc_malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
    if (!p) tfc_status_oom(st, k->op->name, (size_t)n * sizeof(float));
    return p;
}

float *tfc_nn_widen_alloc(const tfc_kernel_ctx *k, const tfc_tensor *t, tfc_status *st) {
    float *p = tfc_nn_scratch(k, t->num_elements, st);
    if (p) nn_widen(t->dtype, t->data, p, t->num_elements);
    return p;
}

int64_t tfc_nn_reduce_chunks(const tfc_kernel_ctx *k, int64_t rows, int64_t cols) {
    int64_t threads = tfc_threadpool_size(k->pool);
    int64_t total = rows * (cols > 0 ? cols : 1);
    int64_t by_size = total / 32768 + 1; /* at least ~32k elements per chunk */
    int64_t n = threads * 4 < by_size ? threads * 4 : by_size;
    if (n > rows) n = rows;
    return n < 1 ? 1 : n;
}

/* ---- elementwise activations ---- */

typedef struct {
    act_kind kind;
    const tfc_nn_simd *simd;
    bool grad;        /* the *Grad op: y = f'(x) * g */
    tfc_dtype dt;
    const void *x, *g; /* features (or outputs for Elu/Selu grads); gradients */
    void *y;
    double alpha;
} act_job;

/* float64 (the reference dtype): plain loops. */
#define ACT_FWD(T, EXPM1, LOG1P, EXP)                                                                     \
    do {                                                                                                  \
        const T *restrict x = (const T *)j->x + b;                                                         \
        T *restrict y = (T *)j->y + b;                                                                     \
        int64_t n = e - b;                                                                                 \
        T al = (T)j->alpha;                                                                                \
        switch (j->kind) {                                                                                 \
        case ACT_RELU:                                                                                     \
            for (int64_t i = 0; i < n; i++) {                                                              \
                T v = x[i] > 0 ? x[i] : (T)0;                                                              \
                y[i] = x[i] == x[i] ? v : x[i];                                                            \
            }                                                                                              \
            break;                                                                                         \
        case ACT_RELU6:                                                                                    \
            for (int64_t i = 0; i < n; i++) {                                                              \
                T v = x[i] > 0 ? x[i] : (T)0;                                                              \
                v = v < 6 ? v : (T)6;                                                                      \
                y[i] = x[i] == x[i] ? v : x[i];                                                            \
            }                                                                                              \
            break;                                                                                         \
        case ACT_LEAKY:                                                                                    \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : x[i] * al;                            \
            break;                                                                                         \
        case ACT_ELU:                                                                                      \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] < 0 ? EXPM1(x[i]) : x[i];                          \
            break;                                                                                         \
        case ACT_SELU:                                                                                     \
            for (int64_t i = 0; i < n; i++)                                                                \
                y[i] = x[i] < 0 ? (T)(SELU_SCALE * SELU_ALPHA) * EXPM1(x[i]) : (T)SELU_SCALE * x[i];      \
            break;                                                                                         \
        case ACT_SOFTPLUS: /* log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|) */                \
            for (int64_t i = 0; i < n; i++) {                                                              \
                T v = x[i];                                                                                \
                y[i] = v > 0 ? v + LOG1P(EXP(-v)) : LOG1P(EXP(v));                                          \
            }                                                                                              \
            break;                                                                                         \
        case ACT_SOFTSIGN:                                                                                 \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] / (1 + (x[i] < 0 ? -x[i] : x[i]));                \
            break;                                                                                         \
        }                                                                                                  \
    } while (0)

#define ACT_BWD(T, EXP)                                                                                    \
    do {                                                                                                  \
        const T *restrict f = (const T *)j->x + b;                                                         \
        const T *restrict g = (const T *)j->g + b;                                                         \
        T *restrict y = (T *)j->y + b;                                                                     \
        int64_t n = e - b;                                                                                 \
        T al = (T)j->alpha;                                                                                \
        switch (j->kind) {                                                                                 \
        case ACT_RELU:                                                                                     \
            for (int64_t i = 0; i < n; i++) y[i] = g[i] * (T)(f[i] > 0);                                   \
            break;                                                                                         \
        case ACT_RELU6:                                                                                    \
            for (int64_t i = 0; i < n; i++) y[i] = g[i] * (T)((f[i] > 0) & (f[i] < 6));                    \
            break;                                                                                         \
        case ACT_LEAKY:                                                                                    \
            for (int64_t i = 0; i < n; i++) y[i] = f[i] > 0 ? g[i] : g[i] * al;                            \
            break;                                                                                         \
        case ACT_ELU:                                                                                      \
            for (int64_t i = 0; i < n; i++) y[i] = f[i] < 0 ? g[i] * (f[i] + 1) : g[i];                    \
            break;                                                                                         \
        case ACT_SELU:                                                                                     \
            for (int64_t i = 0; i < n; i++)                                                                \
                y[i] = f[i] < 0 ? g[i] * (f[i] + (T)(SELU_SCALE * SELU_ALPHA)) : g[i] * (T)SELU_SCALE;     \
            break;                                                                                         \
        case ACT_SOFTPLUS:                                                                                 \
            for (int64_t i = 0; i < n; i++) y[i] = g[i] / (1 + EXP(-f[i]));                                \
            break;                                                                                         \
        case ACT_SOFTSIGN:                                                                                 \
            for (int64_t i = 0; i < n; i++) {                                                              \
                T d = 1 + (f[i] < 0 ? -f[i] : f[i]);                                                       \
                y[i] = g[i] / (d * d);                                                                     \
            }                                                                                              \
            break;                                                                                         \
        }                                                                                                  \
    } while (0)

/* Integer Relu/Relu6 and their gradients. */
#define ACT_INT(T)                                                                                         \
    do {                                                                                                  \
        const T *x = (const T *)j->x + b, *g = j->g ? (const T *)j->g + b : NULL;                          \
        T *y = (T *)j->y + b;                                                                              \
        int64_t n = e - b;                                                                                 \
        bool six = j->kind == ACT_RELU6;                                                                   \
        if (!j->grad && !six)                                                                              \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? x[i] : (T)0;                                 \
        else if (!j->grad)                                                                                 \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? (x[i] < 6 ? x[i] : (T)6) : (T)0;             \
        else if (!six)                                                                                     \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 ? g[i] : (T)0;                                 \
        else                                                                                               \
            for (int64_t i = 0; i < n; i++) y[i] = x[i] > 0 && x[i] < 6 ? g[i] : (T)0;                     \
    } while (0)

static void act_fwd_f64(const act_job *j, int64_t b, int64_t e) { ACT_FWD(double, expm1, log1p, exp); }
static void act_bwd_f64(const act_job *j, int64_t b, int64_t e) { ACT_BWD(double, exp); }

#define ACT_BLOCK 1024

static void act_range(void *arg, int64_t begin, int64_t end) {
    const act_job *j = arg;
    switch (j->dt) {
    case TFC_FLOAT: {
        const float *x = (const float *)j->x + begin;
        float *y = (float *)j->y + begin;
        if (j->grad) j->simd->act_bwd(j->kind, (float)j->alpha, (const float *)j->g + begin, x, y, end - begin);
        else j->simd->act_fwd(j->kind, (float)j->alpha, x, y, end - begin);
        return;
    }
    case TFC_DOUBLE: j->grad ? act_bwd_f64(j, begin, end) : act_fwd_f64(j, begin, end); return;
    case TFC_HALF:
    case TFC_BFLOAT16: {
        /* Widen a block into float scratch on the stack, run the float32 loop on it, narrow back. */
        float xs[ACT_BLOCK], gs[ACT_BLOCK], ys[ACT_BLOCK];
        for (int64_t b = begin; b < end; b += ACT_BLOCK) {
            int64_t n = end - b < ACT_BLOCK ? end - b : ACT_BLOCK;
            nn_widen(j->dt, (const uint16_t *)j->x + b, xs, n);
            if (j->grad) {
                nn_widen(j->dt, (const uint16_t *)j->g + b, gs, n);
                j->simd->act_bwd(j->kind, (float)j->alpha, gs, xs, ys, n);
            } else {
                j->simd->act_fwd(j->kind, (float)j->alpha, xs, ys, n);
            }
            nn_narrow(j->dt, ys, (uint16_t *)j->y + b, n);
        }
        return;
    }
    case TFC_INT8: { typedef int8_t T; int64_t b = begin, e = end; ACT_INT(T); return; }
    case TFC_UINT8: { typedef uint8_t T; int64_t b = begin, e = end; ACT_INT(T); return; }
    case TFC_INT16: { typedef int16_t T; int64_t b = begin, e = end; ACT_INT(T); return; }
    case TFC_INT32: { typedef int32_t T; int64_t b = begin, e = end; ACT_INT(T); return; }
    case TFC_INT64: { typedef int64_t T; int64_t b = begin, e = end; ACT_INT(T); return; }
    default: return;
    }
}

static bool act_run(tfc_kernel_ctx *k, act_kind kind, bool grad, tfc_status *st) {
    act_job j = {.kind = kind, .simd = tfc_nn_simd_get(), .grad = grad, .dt = k->in[0]->dtype, .y = k->out[0]->data,
                 /* float attrs are float32 in TensorFlow: alpha is 0.2f even for float64 data */
                 .alpha = (float)tfc_attrs_float(k->attrs, "alpha", 0.2)};
    if (grad) {
        j.g = k->in[0]->data;
        j.x = k->in[1]->data;
    } else {
        j.x = k->in[0]->data;
    }
    switch (j.dt) {
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_HALF: case TFC_BFLOAT16: break;
    case TFC_INT8: case TFC_UINT8: case TFC_INT16: case TFC_INT32: case TFC_INT64:
        if (kind == ACT_RELU || kind == ACT_RELU6) break;
        return tfc_kernel_unimplemented(k, j.dt, st);
    default: return tfc_kernel_unimplemented(k, j.dt, st);
    }
    int64_t cost = kind == ACT_RELU || kind == ACT_RELU6 || kind == ACT_LEAKY ? 1 : 20;
    if (nn_is_half(j.dt)) cost += 8;
    tfc_parallel_for(k->pool, k->out[0]->num_elements, cost, act_range, &j);
    return true;
}

static bool relu(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_RELU, false, st); }
static bool relu_grad(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_RELU, true, st); }
static bool relu6(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_RELU6, false, st); }
static bool relu6_grad(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_RELU6, true, st); }
static bool leaky_relu(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_LEAKY, false, st); }
static bool leaky_relu_grad(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_LEAKY, true, st); }
static bool elu(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_ELU, false, st); }
static bool elu_grad(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_ELU, true, st); }
static bool selu(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_SELU, false, st); }
static bool selu_grad(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_SELU, true, st); }
static bool softplus(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_SOFTPLUS, false, st); }
static bool softplus_grad(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_SOFTPLUS, true, st); }
static bool softsign(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_SOFTSIGN, false, st); }
static bool softsign_grad(tfc_kernel_ctx *k, tfc_status *st) { return act_run(k, ACT_SOFTSIGN, true, st); }

/* ---- BiasAdd / BiasAddGrad ----
 * The value is viewed as [outer, channels, inner]: inner = 1 for NHWC (channels last), the spatial size
 * for NCHW. */

typedef struct {
    tfc_dtype dt;
    const tfc_nn_simd *simd;
    int64_t outer, ch, inner;
    const void *x, *bias;
    void *y;
    const float *xf, *bf; /* widened half/bfloat16 inputs */
    double *partial;      /* BiasAddGrad: [chunks, ch] */
    int64_t rows_per_chunk;
} bias_job;

/* nchw: data_format NCHW, parsed by the instance (kstate.h) */
static void bias_view(bool nchw, const tfc_tensor *t, int64_t *outer, int64_t *ch, int64_t *inner) {
    const tfc_shape *s = &t->shape;
    int cd = nchw ? 1 : s->rank - 1;
    /* an empty tensor walks nothing: [2^31, 4, 0] must not loop 2^31 times over empty rows */
    *outer = t->num_elements ? tfc_dims_product(s->dims, 0, cd) : 0;
    *inner = t->num_elements ? tfc_dims_product(s->dims, cd + 1, s->rank) : 0;
    *ch = s->dims[cd];
}

/* Rows of [outer * ch] strips of length inner (NCHW), or rows of ch (NHWC, inner == 1). */
#define BIAS_ADD_LOOP(T, X, B)                                                                             \
    do {                                                                                                  \
        T *y = (T *)j->y;                                                                                  \
        if (j->inner == 1) {                                                                               \
            for (int64_t r = begin; r < end; r++) {                                                        \
                const T *restrict xr = (X) + r * j->ch;                                                     \
                T *restrict yr = y + r * j->ch;                                                             \
                for (int64_t c = 0; c < j->ch; c++) yr[c] = (T)(xr[c] + (B)[c]);                           \
            }                                                                                              \
        } else {                                                                                           \
            for (int64_t r = begin; r < end; r++) {                                                        \
                T bv = (T)(B)[r % j->ch];                                                                  \
                const T *restrict xr = (X) + r * j->inner;                                                  \
                T *restrict yr = y + r * j->inner;                                                          \
                for (int64_t i = 0; i < j->inner; i++) yr[i] = (T)(xr[i] + bv);                           \
            }                                                                                              \
        }                                                                                                  \
    } while (0)

static void bias_add_range(void *arg, int64_t begin, int64_t end) {
    const bias_job *j = arg;
    switch (j->dt) {
    case TFC_FLOAT: BIAS_ADD_LOOP(float, (const float *)j->x, (const float *)j->bias); break;
    case TFC_DOUBLE: BIAS_ADD_LOOP(double, (const double *)j->x, (const double *)j->bias); break;
    case TFC_INT8: BIAS_ADD_LOOP(int8_t, (const int8_t *)j->x, (const int8_t *)j->bias); break;
    case TFC_UINT8: BIAS_ADD_LOOP(uint8_t, (const uint8_t *)j->x, (const uint8_t *)j->bias); break;
    case TFC_INT16: BIAS_ADD_LOOP(int16_t, (const int16_t *)j->x, (const int16_t *)j->bias); break;
    case TFC_INT32: /* wraps like TensorFlow's; unsigned arithmetic keeps it defined */
        BIAS_ADD_LOOP(uint32_t, (const uint32_t *)j->x, (const uint32_t *)j->bias);
        break;
    case TFC_INT64: BIAS_ADD_LOOP(uint64_t, (const uint64_t *)j->x, (const uint64_t *)j->bias); break;
    case TFC_HALF:
    case TFC_BFLOAT16: {
        int64_t len = j->inner == 1 ? j->ch : j->inner;
        float buf[ACT_BLOCK];
        for (int64_t r = begin; r < end; r++) {
            for (int64_t o = 0; o < len; o += ACT_BLOCK) {
                int64_t n = len - o < ACT_BLOCK ? len - o : ACT_BLOCK;
                int64_t off = r * len + o;
                nn_widen(j->dt, (const uint16_t *)j->x + off, buf, n);
                if (j->inner == 1)
                    for (int64_t i = 0; i < n; i++) buf[i] += j->bf[o + i];
                else
                    for (int64_t i = 0; i < n; i++) buf[i] += j->bf[r % j->ch];
                nn_narrow(j->dt, buf, (uint16_t *)j->y + off, n);
            }
        }
        break;
    }
    default: break;
    }
}

static bool bias_add(tfc_kernel_ctx *k, tfc_status *st) {
    bias_job j = {.dt = k->in[0]->dtype, .x = k->in[0]->data, .bias = k->in[1]->data, .y = k->out[0]->data};
    tfc_kstate tmp;
    const tfc_kstate *ks = tfc_kstate_of(k, &tmp, st);
    if (!ks) return false;
    bias_view(ks->nchw, k->in[0], &j.outer, &j.ch, &j.inner);
    if (k->out[0]->num_elements == 0) return true;
    float *bf = NULL;
    if (nn_is_half(j.dt)) {
        if (!(bf = tfc_nn_widen_alloc(k, k->in[1], st))) return false;
        j.bf = bf;
    }
    if (j.inner == 1) tfc_parallel_for(k->pool, j.outer, j.ch, bias_add_range, &j);
    else tfc_parallel_for(k->pool, j.outer * j.ch, j.inner, bias_add_range, &j);
    tfc_free(bf);
    return true;
}

/* Column sums of NHWC rows [rb, re) into part[0, ch): float32 sums over blocks of 64 rows are added into
 * double, so long batches keep their precision while the inner loop stays a float vector add. blk is
 * ch floats of scratch. */
static void col_sums_f32(const float *x, int64_t ch, int64_t rb, int64_t re, double *part, float *blk) {
    for (int64_t r0 = rb; r0 < re; r0 += 64) {
        int64_t r1 = re - r0 < 64 ? re : r0 + 64;
        for (int64_t c = 0; c < ch; c++) blk[c] = 0;
        for (int64_t r = r0; r < r1; r++) {
            const float *restrict xr = x + r * ch;
            for (int64_t c = 0; c < ch; c++) blk[c] += xr[c];
        }
        for (int64_t c = 0; c < ch; c++) part[c] += (double)blk[c];
    }
}

/* NHWC: chunk i sums rows [i * rows_per_chunk, ...) into partial + i * 2 * ch (ch sums, then ch doubles
 * of scratch). */
static void bias_grad_chunks(void *arg, int64_t begin, int64_t end) {
    const bias_job *j = arg;
    for (int64_t chunk = begin; chunk < end; chunk++) {
        double *part = j->partial + chunk * 2 * j->ch;
        int64_t rb = chunk * j->rows_per_chunk, re = rb + j->rows_per_chunk;
        if (re > j->outer) re = j->outer;
        for (int64_t c = 0; c < j->ch; c++) part[c] = 0;
        if (j->dt == TFC_FLOAT) {
            col_sums_f32(j->x, j->ch, rb, re, part, (float *)(part + j->ch));
        } else if (nn_is_half(j->dt)) {
            col_sums_f32(j->xf, j->ch, rb, re, part, (float *)(part + j->ch));
        } else {
            const double *x = j->x;
            for (int64_t r = rb; r < re; r++)
                for (int64_t c = 0; c < j->ch; c++) part[c] += x[r * j->ch + c];
        }
    }
}

/* NCHW: each channel sums its outer strips of inner elements into partial[c]. */
static void bias_grad_channels(void *arg, int64_t begin, int64_t end) {
    const bias_job *j = arg;
    for (int64_t c = begin; c < end; c++) {
        double s = 0;
        for (int64_t o = 0; o < j->outer; o++) {
            int64_t off = (o * j->ch + c) * j->inner;
            if (j->dt == TFC_FLOAT) {
                s += j->simd->sum((const float *)j->x + off, j->inner);
            } else if (nn_is_half(j->dt)) {
                s += j->simd->sum(j->xf + off, j->inner);
            } else {
                const double *x = (const double *)j->x + off;
                for (int64_t i = 0; i < j->inner; i++) s += x[i];
            }
        }
        j->partial[c] = s;
    }
}

/* Integer sums wrap as TensorFlow's (Eigen sums in T): accumulate in uint64 and truncate. */
#define BIAS_GRAD_INT(T)                                                                                   \
    do {                                                                                                  \
        const T *x = j->x;                                                                                 \
        T *out = j->y;                                                                                     \
        for (int64_t c = 0; c < j->ch; c++) {                                                              \
            uint64_t s = 0;                                                                                \
            for (int64_t o = 0; o < j->outer; o++)                                                         \
                for (int64_t i = 0; i < j->inner; i++) s += (uint64_t)x[(o * j->ch + c) * j->inner + i];   \
            out[c] = (T)s;                                                                                 \
        }                                                                                                  \
    } while (0)

static bool bias_add_grad(tfc_kernel_ctx *k, tfc_status *st) {
    bias_job jb = {.dt = k->in[0]->dtype, .simd = tfc_nn_simd_get(), .x = k->in[0]->data, .y = k->out[0]->data};
    bias_job *j = &jb;
    tfc_kstate tmp;
    const tfc_kstate *ks = tfc_kstate_of(k, &tmp, st);
    if (!ks) return false;
    bias_view(ks->nchw, k->in[0], &j->outer, &j->ch, &j->inner);
    switch (j->dt) {
    case TFC_INT8: BIAS_GRAD_INT(int8_t); return true;
    case TFC_UINT8: BIAS_GRAD_INT(uint8_t); return true;
    case TFC_INT16: BIAS_GRAD_INT(int16_t); return true;
    case TFC_INT32: BIAS_GRAD_INT(int32_t); return true;
    case TFC_INT64: BIAS_GRAD_INT(int64_t); return true;
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_HALF: case TFC_BFLOAT16: break;
    default: return tfc_kernel_unimplemented(k, j->dt, st);
    }
    if (j->ch == 0) return true;
    float *xf = NULL;
    if (nn_is_half(j->dt) && k->in[0]->num_elements > 0) {
        if (!(xf = tfc_nn_widen_alloc(k, k->in[0], st))) return false;
        j->xf = xf;
    }
    bool nhwc = j->inner == 1;
    int64_t chunks = nhwc ? tfc_nn_reduce_chunks(k, j->outer, j->ch) : 1;
    size_t bytes = (size_t)(nhwc ? chunks * 2 * j->ch : j->ch) * sizeof(double);
    double *partial = tfc_malloc(bytes);
    if (!partial) {
        tfc_free(xf);
        return tfc_status_oom(st, k->op->name, bytes);
    }
    j->partial = partial;
    if (nhwc) {
        j->rows_per_chunk = (j->outer + chunks - 1) / chunks;
        if (j->outer > 0) tfc_parallel_for(k->pool, chunks, j->rows_per_chunk * j->ch, bias_grad_chunks, j);
        else for (int64_t c = 0; c < j->ch; c++) partial[c] = 0;
        for (int64_t i = 1; i < chunks && j->outer > 0; i++)
            for (int64_t c = 0; c < j->ch; c++) partial[c] += partial[i * 2 * j->ch + c];
    } else {
        tfc_parallel_for(k->pool, j->ch, j->outer * j->inner + 1, bias_grad_channels, j);
    }
    switch (j->dt) {
    case TFC_FLOAT: for (int64_t c = 0; c < j->ch; c++) ((float *)j->y)[c] = (float)partial[c]; break;
    case TFC_DOUBLE: memcpy(j->y, partial, (size_t)j->ch * sizeof(double)); break;
    default: for (int64_t c = 0; c < j->ch; c++) tfc_dtype_set_f64(j->dt, j->y, c, partial[c]); break;
    }
    tfc_free(partial);
    tfc_free(xf);
    return true;
}

/* ---- L2Loss: sum(t^2) / 2 ---- */

typedef struct {
    tfc_dtype dt;
    const tfc_nn_simd *simd;
    const void *x;
    const float *xf;
    int64_t n, per_chunk;
    double *partial;
} l2_job;

static void l2_chunks(void *arg, int64_t begin, int64_t end) {
    const l2_job *j = arg;
    for (int64_t chunk = begin; chunk < end; chunk++) {
        int64_t b = chunk * j->per_chunk, e = b + j->per_chunk < j->n ? b + j->per_chunk : j->n;
        double s = 0;
        if (j->dt == TFC_DOUBLE) {
            const double *x = j->x;
            for (int64_t i = b; i < e; i++) s += x[i] * x[i];
        } else {
            /* float32 vector sums over blocks of 4096, each block's sum added in double */
            const float *x = j->dt == TFC_FLOAT ? j->x : j->xf;
            for (int64_t b0 = b; b0 < e; b0 += 4096)
                s += j->simd->sum_squares(x + b0, (e - b0 < 4096 ? e : b0 + 4096) - b0);
        }
        j->partial[chunk] = s;
    }
}

static bool l2_loss(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    l2_job j = {.dt = x->dtype, .simd = tfc_nn_simd_get(), .x = x->data, .n = x->num_elements};
    if (j.dt != TFC_FLOAT && j.dt != TFC_DOUBLE && !nn_is_half(j.dt)) return tfc_kernel_unimplemented(k, j.dt, st);
    float *xf = NULL;
    if (nn_is_half(j.dt) && j.n > 0) {
        if (!(xf = tfc_nn_widen_alloc(k, x, st))) return false;
        j.xf = xf;
    }
    int64_t chunks = tfc_nn_reduce_chunks(k, j.n, 1);
    j.per_chunk = (j.n + chunks - 1) / chunks;
    double parts[256], total = 0;
    if (chunks > 256) chunks = 256, j.per_chunk = (j.n + 255) / 256;
    j.partial = parts;
    if (j.n > 0) tfc_parallel_for(k->pool, chunks, j.per_chunk, l2_chunks, &j);
    for (int64_t i = 0; i < chunks && j.n > 0; i++) total += parts[i];
    tfc_dtype_set_f64(j.dt, k->out[0]->data, 0, total / 2);
    tfc_free(xf);
    return true;
}

/* the kernels with attrs parsed once per instance (kstate.h); Softmax has none to parse, but runs as an
 * instance too, so every hot nn kernel goes through one path */
const tfc_kernel_def tfc_cpu_kernel_defs_nn[] = {
    TFC_KSTATE_DEF("BiasAdd", bias_add),
    TFC_KSTATE_DEF("BiasAddGrad", bias_add_grad),
    TFC_KSTATE_DEF("Softmax", tfc_nn_softmax),
    TFC_KSTATE_DEF("FusedBatchNormV3", tfc_nn_fused_batch_norm),
    TFC_KSTATE_DEF("FusedBatchNormGradV3", tfc_nn_fused_batch_norm_grad),
    {.op = NULL},
};

const tfc_kernel_reg tfc_cpu_kernels_nn[] = {
    {"Relu", relu}, {"ReluGrad", relu_grad}, {"Relu6", relu6}, {"Relu6Grad", relu6_grad},
    {"LeakyRelu", leaky_relu}, {"LeakyReluGrad", leaky_relu_grad}, {"Elu", elu}, {"EluGrad", elu_grad},
    {"Selu", selu}, {"SeluGrad", selu_grad}, {"Softplus", softplus}, {"SoftplusGrad", softplus_grad},
    {"Softsign", softsign}, {"SoftsignGrad", softsign_grad},
    {"L2Loss", l2_loss},
    {"LogSoftmax", tfc_nn_log_softmax}, {"SoftmaxCrossEntropyWithLogits", tfc_nn_xent},
    {"SparseSoftmaxCrossEntropyWithLogits", tfc_nn_sparse_xent},
    {NULL, NULL},
};
