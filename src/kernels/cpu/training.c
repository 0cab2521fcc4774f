/* Training-op kernels (tensorflow/core/kernels/training_ops.cc): one fused pass over the variable, its slots
 * and the gradient, split over the pool for large variables.
 *
 * Values are copy-on-write (src/kernels/cpu/resource.c): a variable whose value tensor and buffer have no
 * other owner is updated in place; otherwise (a read still holds the old value) the update writes a new
 * tensor that replaces the value, so earlier reads never change. Each element is read from the old value and
 * written to the destination, which is the same memory in the in-place case.
 *
 * float32 and float64 run typed loops in their own precision with the expressions in TensorFlow's order (so
 * results match TensorFlow's Eigen code to rounding); half and bfloat16 are widened to float32 in blocks,
 * updated by the float32 loop and narrowed back. Integer T has no kernel, as in TensorFlow. The loops are
 * compiled for AVX-512 / AVX2 / baseline (TFC_SIMD_CLONES) and vectorised: the library is built with
 * -fno-math-errno (sqrt need not set errno), and "GCC ivdep" tells the vectoriser that a destination may
 * only alias its own source element by element (the in-place case), which needs no run-time overlap checks. */
#include <math.h>
#include <string.h>

#include "kernels/cpu/kernels.h"
#include "ops/training_ops.h"

typedef enum { K_GD, K_MOMENTUM, K_ADAM, K_AMSGRAD, K_RMSPROP, K_CENTERED_RMSPROP, K_ADAGRAD, K_ADAMAX } kind;

typedef struct {
    kind k;
    tfc_dtype dt;
    int n_vars;
    void *dst[TFC_TRAIN_MAX_VARS];       /* var, slots: where the new values go */
    const void *src[TFC_TRAIN_MAX_VARS]; /* their current values (== dst when updated in place) */
    const void *grad;
    double c[6];                         /* hyper-parameters, already combined as the kernel needs them */
    bool flag;                           /* use_nesterov / update_slots */
} job;

/* One loop body per op for the compute type C: d[i] are destinations, s[i] sources, g the gradient. Hyper-
 * parameters are converted to C first, so a float32 update computes in float32 as TensorFlow does. */
#define DEF_RANGE(SUF, C, SQRT, FABS, FMAX)                                                                       \
    TFC_SIMD_CLONES static void range_##SUF(const job *j, C *const *d, const C *const *s, const C *g, int64_t b, int64_t e) {   \
        const C c0 = (C)j->c[0], c1 = (C)j->c[1], c2 = (C)j->c[2], c3 = (C)j->c[3];                           \
        C *var = d[0];                                                                                         \
        const C *var0 = s[0];                                                                                  \
        switch (j->k) {                                                                                        \
        case K_GD: /* var -= grad * alpha */                                                                   \
            _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) var[i] = var0[i] - g[i] * c0;                                      \
            break;                                                                                             \
        case K_MOMENTUM: { /* c0 lr, c1 momentum */                                                            \
            C *acc = d[1];                                                                                     \
            const C *acc0 = s[1];                                                                              \
            if (j->flag)                                                                                       \
                _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                              \
                    C a = acc0[i] * c1 - g[i] * c0;                                                            \
                    acc[i] = a;                                                                                \
                    var[i] = var0[i] + (a * c1 - g[i] * c0);                                                   \
                }                                                                                              \
            else                                                                                               \
                _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                              \
                    C a = acc0[i] * c1 - g[i] * c0;                                                            \
                    acc[i] = a;                                                                                \
                    var[i] = var0[i] + a;                                                                      \
                }                                                                                              \
            break;                                                                                             \
        }                                                                                                      \
        case K_ADAM:                                                                                           \
        case K_AMSGRAD: { /* c0 alpha, c1 1-beta1, c2 1-beta2, c3 epsilon; c[4] beta1 */                      \
            C *m = d[1], *v = d[2];                                                                            \
            const C *m0 = s[1], *v0 = s[2];                                                                    \
            const C b1 = (C)j->c[4];                                                                           \
            if (j->k == K_AMSGRAD) {                                                                           \
                C *vh = d[3];                                                                                  \
                const C *vh0 = s[3];                                                                           \
                _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                              \
                    C mi = m0[i] + (g[i] - m0[i]) * c1;                                                        \
                    C vi = v0[i] + (g[i] * g[i] - v0[i]) * c2;                                                 \
                    C hi = FMAX(vh0[i], vi);                                                                   \
                    m[i] = mi;                                                                                 \
                    v[i] = vi;                                                                                 \
                    vh[i] = hi;                                                                                \
                    var[i] = var0[i] - (mi * c0) / (SQRT(hi) + c3);                                            \
                }                                                                                              \
            } else if (j->flag) {                                                                              \
                _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                              \
                    C mi = m0[i] + (g[i] - m0[i]) * c1;                                                        \
                    C vi = v0[i] + (g[i] * g[i] - v0[i]) * c2;                                                 \
                    m[i] = mi;                                                                                 \
                    v[i] = vi;                                                                                 \
                    var[i] = var0[i] - ((g[i] * c1 + b1 * mi) * c0) / (SQRT(vi) + c3);                         \
                }                                                                                              \
            } else {                                                                                           \
                _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                              \
                    C mi = m0[i] + (g[i] - m0[i]) * c1;                                                        \
                    C vi = v0[i] + (g[i] * g[i] - v0[i]) * c2;                                                 \
                    m[i] = mi;                                                                                 \
                    v[i] = vi;                                                                                 \
                    var[i] = var0[i] - (mi * c0) / (SQRT(vi) + c3);                                            \
                }                                                                                              \
            }                                                                                                  \
            break;                                                                                             \
        }                                                                                                      \
        case K_RMSPROP: { /* c0 lr, c1 1-rho, c2 momentum, c3 epsilon */                                       \
            C *ms = d[1], *mom = d[2];                                                                         \
            const C *ms0 = s[1], *mom0 = s[2];                                                                 \
            _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                                  \
                C msi = ms0[i] + (g[i] * g[i] - ms0[i]) * c1;                                                  \
                C mo = mom0[i] * c2 + (g[i] * c0) / SQRT(msi + c3);                                            \
                ms[i] = msi;                                                                                   \
                mom[i] = mo;                                                                                   \
                var[i] = var0[i] - mo;                                                                         \
            }                                                                                                  \
            break;                                                                                             \
        }                                                                                                      \
        case K_CENTERED_RMSPROP: { /* slots mg, ms, mom; c as RMSProp */                                       \
            C *mg = d[1], *ms = d[2], *mom = d[3];                                                             \
            const C *mg0 = s[1], *ms0 = s[2], *mom0 = s[3];                                                    \
            _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                                  \
                C msi = ms0[i] + (g[i] * g[i] - ms0[i]) * c1;                                                  \
                C mgi = mg0[i] + (g[i] - mg0[i]) * c1;                                                         \
                C den = (msi - mgi * mgi) + c3;                                                                \
                C mo = mom0[i] * c2 + (g[i] * c0) / SQRT(den);                                                 \
                ms[i] = msi;                                                                                   \
                mg[i] = mgi;                                                                                   \
                mom[i] = mo;                                                                                   \
                var[i] = var0[i] - mo;                                                                         \
            }                                                                                                  \
            break;                                                                                             \
        }                                                                                                      \
        case K_ADAGRAD: { /* c0 lr, c1 epsilon; flag update_slots */                                           \
            C *acc = d[1];                                                                                     \
            const C *acc0 = s[1];                                                                              \
            if (j->flag)                                                                                       \
                _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                              \
                    C a = acc0[i] + g[i] * g[i];                                                               \
                    acc[i] = a;                                                                                \
                    var[i] = var0[i] - g[i] * c0 / (SQRT(a) + c1);                                             \
                }                                                                                              \
            else                                                                                               \
                _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                              \
                    acc[i] = acc0[i];                                                                          \
                    var[i] = var0[i] - g[i] * c0 / (SQRT(acc0[i]) + c1);                                       \
                }                                                                                              \
            break;                                                                                             \
        }                                                                                                      \
        case K_ADAMAX: { /* c0 lr/(1-beta1_power), c1 1-beta1, c2 beta2, c3 epsilon */                          \
            C *m = d[1], *v = d[2];                                                                            \
            const C *m0 = s[1], *v0 = s[2];                                                                    \
            _Pragma("GCC ivdep") for (int64_t i = b; i < e; i++) {                                                                  \
                C mi = m0[i] + (g[i] - m0[i]) * c1;                                                            \
                C vi = FMAX(c2 * v0[i], FABS(g[i]));                                                           \
                m[i] = mi;                                                                                     \
                v[i] = vi;                                                                                     \
                var[i] = var0[i] - c0 * (mi / (vi + c3));                                                      \
            }                                                                                                  \
            break;                                                                                             \
        }                                                                                                      \
        }                                                                                                      \
    }

/* max as Eigen's cwiseMax: the first operand when the comparison is false (NaN in v stays NaN-free only if
 * the other side is a number, as TensorFlow's). */
static inline float maxf_(float a, float b) { return a < b ? b : a; }
static inline double maxd_(double a, double b) { return a < b ? b : a; }

DEF_RANGE(f32, float, sqrtf, fabsf, maxf_)
DEF_RANGE(f64, double, sqrt, fabs, maxd_)


#define BLOCK 512

static inline float widen(tfc_dtype dt, const void *p, int64_t i) {
    return dt == TFC_HALF ? tfc_half_to_float(((const tfc_half *)p)[i])
                          : tfc_bfloat16_to_float(((const tfc_bfloat16 *)p)[i]);
}
static inline void narrow(tfc_dtype dt, void *p, int64_t i, float v) {
    if (dt == TFC_HALF) ((tfc_half *)p)[i] = tfc_half_from_float(v);
    else ((tfc_bfloat16 *)p)[i] = tfc_bfloat16_from_float(v);
}

/* Denormals flushed to zero while an update runs, as TensorFlow's kernels run them: its thread pools start
 * every thread with flush-to-zero and denormals-are-zero set (tsl's EigenEnvironment::CreateThread), so a
 * Keras fit's optimizer updates never produce or read a denormal. Without it an Adam m (or momentum, or
 * RMSProp slot) whose gradient stays 0 (a weight of an always-black pixel) decays by beta_1 each step into the
 * denormal range after about 800 steps, where every operation on it costs several times a normal one: the
 * MLP's first-layer update measured 13 us with normal values, 39 us with a third of m denormal, 14 us with
 * FTZ/DAZ. The mode is set per chunk and restored, so nothing else changes. x86 only (MXCSR). */
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define MXCSR_FTZ_DAZ 0x8040u /* flush to zero (bit 15), denormals are zero (bit 6) */
static unsigned flush_denormals_begin(void) {
    unsigned csr = _mm_getcsr();
    _mm_setcsr(csr | MXCSR_FTZ_DAZ);
    return csr;
}
static void flush_denormals_end(unsigned csr) { _mm_setcsr(csr); }
#else
static unsigned flush_denormals_begin(void) { return 0; }
static void flush_denormals_end(unsigned csr) { (void)csr; }
#endif

static void run_range(void *arg, int64_t b, int64_t e) {
    const unsigned csr = flush_denormals_begin();
    const job *j = arg;
    if (j->dt == TFC_FLOAT) {
        range_f32(j, (float *const *)j->dst, (const float *const *)j->src, j->grad, b, e);
    } else if (j->dt == TFC_DOUBLE) {
        range_f64(j, (double *const *)j->dst, (const double *const *)j->src, j->grad, b, e);
    } else { /* half / bfloat16 through float32 blocks */
        float buf[TFC_TRAIN_MAX_VARS][BLOCK], out[TFC_TRAIN_MAX_VARS][BLOCK], gb[BLOCK];
        float *dp[TFC_TRAIN_MAX_VARS];
        const float *sp[TFC_TRAIN_MAX_VARS];
        for (int v = 0; v < TFC_TRAIN_MAX_VARS; v++) dp[v] = out[v], sp[v] = buf[v];
        for (int64_t s = b; s < e; s += BLOCK) {
            int64_t n = e - s < BLOCK ? e - s : BLOCK;
            for (int v = 0; v < j->n_vars; v++)
                for (int64_t i = 0; i < n; i++) buf[v][i] = widen(j->dt, j->src[v], s + i);
            for (int64_t i = 0; i < n; i++) gb[i] = widen(j->dt, j->grad, s + i);
            range_f32(j, dp, sp, gb, 0, n);
            for (int v = 0; v < j->n_vars; v++)
                for (int64_t i = 0; i < n; i++) narrow(j->dt, j->dst[v], s + i, out[v][i]);
        }
    }
    flush_denormals_end(csr);
}

/* Scalar input i as double (any float dtype). */
static double scalar(const tfc_kernel_ctx *k, int i) { return tfc_tensor_get_f64(k->in[i], 0); }

/* Rounds a hyper-parameter combination to the op's compute precision (float32 for all but float64), so that
 * e.g. Adam's alpha is the float32 value TensorFlow computes. */
static double in_T(tfc_dtype dt, double x) { return dt == TFC_DOUBLE ? x : (double)(float)x; }

static void prepare(const tfc_kernel_ctx *k, kind kd, job *j) {
    tfc_dtype dt = j->dt;
    switch (kd) {
    case K_GD: j->c[0] = scalar(k, 1); break;
    case K_MOMENTUM:
        j->c[0] = scalar(k, 2);
        j->c[1] = scalar(k, 4);
        j->flag = tfc_attrs_bool(k->attrs, "use_nesterov", false);
        break;
    case K_ADAM:
    case K_AMSGRAD: {
        int o = kd == K_AMSGRAD ? 4 : 3;
        double b1p = scalar(k, o), b2p = scalar(k, o + 1), lr = scalar(k, o + 2), b1 = scalar(k, o + 3),
               b2 = scalar(k, o + 4);
        /* alpha = lr * sqrt(1 - beta2_power) / (1 - beta1_power), each step rounded to T */
        double sq = in_T(dt, sqrt(in_T(dt, 1.0 - b2p)));
        j->c[0] = in_T(dt, in_T(dt, lr * sq) / in_T(dt, 1.0 - b1p));
        j->c[1] = in_T(dt, 1.0 - b1);
        j->c[2] = in_T(dt, 1.0 - b2);
        j->c[3] = scalar(k, o + 5);
        j->c[4] = b1;
        j->flag = kd == K_ADAM && tfc_attrs_bool(k->attrs, "use_nesterov", false);
        break;
    }
    case K_RMSPROP:
    case K_CENTERED_RMSPROP: {
        int o = kd == K_RMSPROP ? 3 : 4;
        j->c[0] = scalar(k, o);
        j->c[1] = in_T(dt, 1.0 - scalar(k, o + 1));
        j->c[2] = scalar(k, o + 2);
        j->c[3] = scalar(k, o + 3);
        break;
    }
    case K_ADAGRAD:
        j->c[0] = scalar(k, 2);
        j->c[1] = scalar(k, 3);
        j->flag = tfc_attrs_bool(k->attrs, "update_slots", true);
        break;
    case K_ADAMAX:
        j->c[0] = in_T(dt, scalar(k, 4) / in_T(dt, 1.0 - scalar(k, 3)));
        j->c[1] = in_T(dt, 1.0 - scalar(k, 5));
        j->c[2] = scalar(k, 6);
        j->c[3] = scalar(k, 7);
        break;
    }
}

static bool apply(tfc_kernel_ctx *k, kind kd, tfc_status *st) {
    const tfc_train_sig *s = tfc_train_sig_find(k->op->name);
    tfc_variable *v[TFC_TRAIN_MAX_VARS];
    if (!s) return tfc_status_set(st, TFC_INTERNAL, "%s: no training-op signature", k->op->name);
    if (!tfc_train_vars(s, k->in, v, st)) return false;
    const tfc_tensor *grad = k->in[s->grad];
    tfc_dtype dt = grad->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && dt != TFC_HALF && dt != TFC_BFLOAT16)
        return tfc_kernel_unimplemented(k, dt, st);
    job j = {.k = kd, .dt = dt, .n_vars = s->n_vars, .grad = grad->data};
    tfc_tensor *fresh[TFC_TRAIN_MAX_VARS] = {0};
    tfc_train_lock(v, s->n_vars);
    bool ok = tfc_train_check(s, v, dt, &grad->shape, st);
    for (int i = 0; ok && i < s->n_vars; i++) {
        tfc_tensor *cur = v[i]->value;
        j.src[i] = cur->data;
        if (atomic_load(&cur->refcount) == 1 && atomic_load(&cur->buf->refcount) == 1 && cur->buf->owned) {
            tfc_buffer_written(cur->buf);
            j.dst[i] = cur->data;
        } else if ((fresh[i] = tfc_tensor_alloc(cur->dtype, &cur->shape, st))) {
            j.dst[i] = fresh[i]->data;
        } else {
            ok = false;
        }
    }
    if (ok) {
        prepare(k, kd, &j);
        int64_t n = grad->num_elements;
        /* ~4 loads/stores per state array plus a sqrt and a divide: a few dozen cycles per element */
        tfc_parallel_for(k->pool, n, 8 + 8 * s->n_vars, run_range, &j);
        for (int i = 0; i < s->n_vars; i++)
            if (fresh[i]) {
                tfc_tensor_unref(v[i]->value);
                v[i]->value = fresh[i];
                fresh[i] = NULL;
            }
    }
    tfc_train_unlock(v, s->n_vars);
    for (int i = 0; i < s->n_vars; i++) tfc_tensor_unref(fresh[i]);
    return ok;
}

static bool gradient_descent(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_GD, st); }
static bool keras_momentum(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_MOMENTUM, st); }
static bool adam(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_ADAM, st); }
static bool adam_amsgrad(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_AMSGRAD, st); }
static bool rms_prop(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_RMSPROP, st); }
static bool centered_rms_prop(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_CENTERED_RMSPROP, st); }
static bool adagrad_v2(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_ADAGRAD, st); }
static bool ada_max(tfc_kernel_ctx *k, tfc_status *st) { return apply(k, K_ADAMAX, st); }

const tfc_kernel_reg tfc_cpu_kernels_training[] = {
    {"ResourceApplyGradientDescent", gradient_descent},
    {"ResourceApplyKerasMomentum", keras_momentum},
    {"ResourceApplyAdam", adam},
    {"ResourceApplyAdamWithAmsgrad", adam_amsgrad},
    {"ResourceApplyRMSProp", rms_prop},
    {"ResourceApplyCenteredRMSProp", centered_rms_prop},
    {"ResourceApplyAdagradV2", adagrad_v2},
    {"ResourceApplyAdaMax", ada_max},
    {NULL, NULL},
};
