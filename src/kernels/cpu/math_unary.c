/* Unary elementwise kernels (Neg ... Round, LogicalNot). Transcendentals use libm for now. Integer Neg/Abs
 * wrap (Abs(INT_MIN) == INT_MIN, as TensorFlow); integer Reciprocal by zero is an error. Round is round
 * half to even (rint under the default rounding mode); on integers it is the identity. */
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/cpu/math_internal.h"

typedef void (*un_fn)(const void *x, void *z, int64_t n);

#define UN_SEG(NAME, TI, U, EXPR)                                                                    \
    static void NAME(const void *xv, void *zv, int64_t n) {                                          \
        typedef TI T;                                                                                \
        typedef U UT __attribute__((unused));                                                        \
        const T *restrict x = xv;                                                                    \
        T *restrict z = zv;                                                                          \
        for (int64_t i = 0; i < n; i++) {                                                            \
            T a = x[i];                                                                              \
            z[i] = (T)(EXPR);                                                                        \
        }                                                                                            \
    }
#define UN_FLOATS(NAME, EXPR) UN_SEG(NAME##_f32, float, uint32_t, EXPR) UN_SEG(NAME##_f64, double, uint64_t, EXPR)
#define UN_SIGNED(NAME, EXPR)                                                                        \
    UN_SEG(NAME##_i8, int8_t, uint32_t, EXPR) UN_SEG(NAME##_i16, int16_t, uint32_t, EXPR)            \
    UN_SEG(NAME##_i32, int32_t, uint32_t, EXPR) UN_SEG(NAME##_i64, int64_t, uint64_t, EXPR)
/* libm by type: FM(exp, a) is expf(a) for float, exp(a) for double. */
#define FM(F, a) _Generic((a), float: F##f, double: F)(a)

/* ---- float32 exp, log, tanh, sigmoid ------------------------------------------------------------------
 * Branch-free (selects only) so that the loops vectorise; libm's expf/tanhf are 10-30x slower per element.
 * Errors are within 2 ulp (checked against float64 references by the op tests and TensorFlow by the
 * conformance tests). */
static inline float f32_from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* exp(x) = 2^n e^r with n = round(x / ln 2), |r| <= ln(2) / 2, e^r by its Taylor series to r^7 (truncation
 * error < 6e-9). 2^n is applied as two factors so that results down to the subnormal range are exact. */
static inline float fast_expf(float x) {
    float xc = x > -104.0f ? x : -104.0f; /* also maps NaN somewhere harmless; restored below */
    xc = xc < 89.0f ? xc : 89.0f;
    float fn = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f; /* round to nearest */
    float r = xc - fn * 0.693359375f;                                    /* ln 2 = 0.693359375 - 2.1219e-4 */
    r = r + fn * 2.12194440e-4f;
    float p = 1.0f + r * (1.0f + r * (0.5f + r * (1.0f / 6 + r * (1.0f / 24 + r * (1.0f / 120 + r * (1.0f / 720 + r * (1.0f / 5040)))))));
    int32_t n = (int32_t)fn, n1 = n / 2, n2 = n - n1;
    float y = p * f32_from_bits((uint32_t)(n1 + 127) << 23) * f32_from_bits((uint32_t)(n2 + 127) << 23);
    return x != x ? x : y;
}

/* log(x) = e ln 2 + log(m), m in [sqrt(1/2), sqrt(2)); log(m) = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172,
 * by the odd series to s^11 (truncation error < 1e-11). */
static inline float fast_logf(float x) {
    bool sub = x < 1.17549435e-38f;
    float scaled = x * 8388608.0f; /* subnormals scaled by 2^23 (every select picks computed values: with the
                                      default -ftrapping-math GCC will not speculate FP operations into one) */
    uint32_t u = f32_bits(sub ? scaled : x);
    int32_t e = (int32_t)(u >> 23) - (sub ? 150 : 127);
    float m = f32_from_bits((u & 0x007fffffu) | 0x3f800000u);
    bool big = m > 1.41421356f;
    float half_m = m * 0.5f;
    m = big ? half_m : m;
    float fe = (float)(e + (big ? 1 : 0));
    float sv = (m - 1.0f) / (m + 1.0f), s2 = sv * sv;
    float lm = 2.0f * sv * (1.0f + s2 * (1.0f / 3 + s2 * (1.0f / 5 + s2 * (1.0f / 7 + s2 * (1.0f / 9 + s2 * (1.0f / 11))))));
    float y = fe * 0.693359375f + (lm - fe * 2.12194440e-4f);
    y = x == 0 ? -INFINITY : y;
    y = x == INFINITY ? x : y;
    return x < 0 || x != x ? NAN : y;
}

/* tanh: an odd polynomial fitted (relative least squares) on |x| < 0.625, where 1 - 2 / (e^2|x| + 1) would
 * cancel; that formula elsewhere. */
static inline float fast_tanhf(float x) {
    float ax = fabsf(x), t = x * x;
    float small = x * (1.0f + t * (-0.333332747f + t * (0.133313656f + t * (-0.0537358262f + t * (0.0206302088f + t * -0.00569743058f)))));
    float large = 1.0f - 2.0f / (fast_expf(2.0f * ax) + 1.0f);
    float neg_large = -large;
    large = x < 0 ? neg_large : large;
    return ax < 0.625f ? small : large; /* NaN: large is NaN */
}

/* 1 / (1 + e^-x) from e^-|x|, which cannot overflow. */
static inline float fast_sigmoidf(float x) {
    float e = fast_expf(-fabsf(x)), r = 1.0f / (1.0f + e), er = e * r;
    return x >= 0 ? r : er;
}
static inline double logistic_f64(double a) {
    double e = exp(-fabs(a)), r = 1.0 / (1.0 + e);
    return a >= 0 ? r : e * r;
}

UN_FLOATS(neg, -a)
UN_SIGNED(neg, 0u - (UT)a)
UN_FLOATS(abs, FM(fabs, a))
UN_SIGNED(abs, a < 0 ? (T)(0u - (UT)a) : a)
UN_FLOATS(sign, a > 0 ? (T)1 : a < 0 ? (T)-1 : a == 0 ? (T)0 : a) /* NaN stays NaN, -0 gives 0 */
UN_SIGNED(sign, (a > 0) - (a < 0))
UN_FLOATS(square, a * a)
UN_SIGNED(square, (UT)a * (UT)a)
UN_SEG(square_u8, uint8_t, uint32_t, (UT)a * (UT)a)
/* sqrt: C's sqrt may set errno, which keeps GCC from vectorising it; use the SSE instructions directly. */
#if defined(__SSE2__)
#define SQRT_SEG(NAME, T, LOAD, STORE, SQRT, W, SCALAR)                                                \
    static void NAME(const void *xv, void *zv, int64_t n) {                                          \
        const T *x = xv;                                                                             \
        T *z = zv;                                                                                   \
        int64_t i = 0;                                                                               \
        for (; i + W <= n; i += W) STORE(z + i, SQRT(LOAD(x + i)));                                  \
        for (; i < n; i++) z[i] = SCALAR(x[i]);                                                      \
    }
#define RSQRT_PS(v) _mm_div_ps(_mm_set1_ps(1.0f), _mm_sqrt_ps(v))
#define RSQRT_PD(v) _mm_div_pd(_mm_set1_pd(1.0), _mm_sqrt_pd(v))
#define RSQRTF(a) (1.0f / sqrtf(a))
#define RSQRT(a) (1.0 / sqrt(a))
SQRT_SEG(sqrt_f32, float, _mm_loadu_ps, _mm_storeu_ps, _mm_sqrt_ps, 4, sqrtf)
SQRT_SEG(sqrt_f64, double, _mm_loadu_pd, _mm_storeu_pd, _mm_sqrt_pd, 2, sqrt)
SQRT_SEG(rsqrt_f32, float, _mm_loadu_ps, _mm_storeu_ps, RSQRT_PS, 4, RSQRTF)
SQRT_SEG(rsqrt_f64, double, _mm_loadu_pd, _mm_storeu_pd, RSQRT_PD, 2, RSQRT)
#else
UN_FLOATS(sqrt, FM(sqrt, a))
UN_FLOATS(rsqrt, (T)1 / FM(sqrt, a))
#endif
UN_FLOATS(reciprocal, (T)1 / a)
UN_SIGNED(reciprocal, 1 / a) /* a != 0: checked by the kernel */
UN_SEG(exp_f32, float, uint32_t, fast_expf(a))
UN_SEG(exp_f64, double, uint64_t, exp(a))
UN_FLOATS(expm1, FM(expm1, a))
UN_SEG(log_f32, float, uint32_t, fast_logf(a))
UN_SEG(log_f64, double, uint64_t, log(a))
UN_FLOATS(log1p, FM(log1p, a))
UN_FLOATS(sin, FM(sin, a))
UN_FLOATS(cos, FM(cos, a))
UN_SEG(tanh_f32, float, uint32_t, fast_tanhf(a))
UN_SEG(tanh_f64, double, uint64_t, tanh(a))
UN_SEG(sigmoid_f32, float, uint32_t, fast_sigmoidf(a))
UN_SEG(sigmoid_f64, double, uint64_t, logistic_f64(a))
UN_FLOATS(erf, FM(erf, a))
UN_FLOATS(floor, FM(floor, a))
UN_FLOATS(ceil, FM(ceil, a))
UN_FLOATS(round, FM(rint, a))
UN_SIGNED(round, a)
UN_SEG(not_b, uint8_t, uint32_t, a == 0) /* bool as bytes: bool loads do not vectorise */

typedef struct {
    un_fn f32, f64, i8, u8, i16, i32, i64, b;
} un_table;

typedef struct {
    un_fn fn;
    const char *x;
    char *z;
    int64_t es;
    tfc_dtype lowp;
} un_job;

static void un_range(void *arg, int64_t begin, int64_t end) {
    const un_job *j = arg;
    if (!j->lowp) {
        j->fn(j->x + begin * j->es, j->z + begin * j->es, end - begin);
        return;
    }
    float xb[TFC_MATH_CHUNK], zb[TFC_MATH_CHUNK];
    for (int64_t i = begin; i < end; i += TFC_MATH_CHUNK) {
        int64_t m = end - i < TFC_MATH_CHUNK ? end - i : TFC_MATH_CHUNK;
        tfc_math_to_float(j->lowp, j->x + i * 2, xb, m);
        j->fn(xb, zb, m);
        tfc_math_from_float(j->lowp, zb, j->z + i * 2, m);
    }
}

static bool run_unary(tfc_kernel_ctx *k, const un_table *t, int64_t cost, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    tfc_tensor *z = k->out[0];
    un_fn fn = NULL;
    switch (x->dtype) {
    case TFC_FLOAT: case TFC_HALF: case TFC_BFLOAT16: fn = t->f32; break;
    case TFC_DOUBLE: fn = t->f64; break;
    case TFC_INT8: fn = t->i8; break;
    case TFC_UINT8: fn = t->u8; break;
    case TFC_INT16: fn = t->i16; break;
    case TFC_INT32: fn = t->i32; break;
    case TFC_INT64: fn = t->i64; break;
    case TFC_BOOL: fn = t->b; break;
    default: break;
    }
    if (!fn) return tfc_kernel_unimplemented(k, x->dtype, st);
    un_job j = {.fn = fn, .x = x->data, .z = z->data, .es = (int64_t)tfc_dtype_size(x->dtype)};
    if (tfc_math_lowp(x->dtype)) {
        j.lowp = x->dtype;
        cost += 8;
    }
    tfc_parallel_for(k->pool, z->num_elements, cost, un_range, &j);
    return true;
}

#define T_FLOATS(P) P##_f32, P##_f64, NULL, NULL, NULL, NULL, NULL, NULL
#define T_SIGNED(P) P##_f32, P##_f64, P##_i8, NULL, P##_i16, P##_i32, P##_i64, NULL

#define UNARY_KERNEL(FN, COST, ...)                                                                  \
    bool FN(tfc_kernel_ctx *k, tfc_status *st) {                                                     \
        static const un_table t = {__VA_ARGS__};                                                     \
        return run_unary(k, &t, COST, st);                                                           \
    }
UNARY_KERNEL(tfc_k_neg, 1, T_SIGNED(neg))
UNARY_KERNEL(tfc_k_abs, 1, T_SIGNED(abs))
UNARY_KERNEL(tfc_k_sign, 1, T_SIGNED(sign))
UNARY_KERNEL(tfc_k_square, 1, square_f32, square_f64, square_i8, square_u8, square_i16, square_i32, square_i64, NULL)
UNARY_KERNEL(tfc_k_sqrt, 4, T_FLOATS(sqrt))
UNARY_KERNEL(tfc_k_rsqrt, 6, T_FLOATS(rsqrt))
UNARY_KERNEL(tfc_k_exp, 20, T_FLOATS(exp))
UNARY_KERNEL(tfc_k_expm1, 25, T_FLOATS(expm1))
UNARY_KERNEL(tfc_k_log, 20, T_FLOATS(log))
UNARY_KERNEL(tfc_k_log1p, 25, T_FLOATS(log1p))
UNARY_KERNEL(tfc_k_sin, 25, T_FLOATS(sin))
UNARY_KERNEL(tfc_k_cos, 25, T_FLOATS(cos))
UNARY_KERNEL(tfc_k_tanh, 25, T_FLOATS(tanh))
UNARY_KERNEL(tfc_k_sigmoid, 25, T_FLOATS(sigmoid))
UNARY_KERNEL(tfc_k_erf, 25, T_FLOATS(erf))
UNARY_KERNEL(tfc_k_floor, 2, T_FLOATS(floor))
UNARY_KERNEL(tfc_k_ceil, 2, T_FLOATS(ceil))
UNARY_KERNEL(tfc_k_round, 2, T_SIGNED(round))
UNARY_KERNEL(tfc_k_logical_not, 1, .b = not_b)

bool tfc_k_reciprocal(tfc_kernel_ctx *k, tfc_status *st) {
    static const un_table t = {T_SIGNED(reciprocal)};
    if (tfc_dtype_is_integer(k->in[0]->dtype) && !tfc_math_check_int_nonzero(k, k->in[0], st)) return false;
    return run_unary(k, &t, 4, st);
}
