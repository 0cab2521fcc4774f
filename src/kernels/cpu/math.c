/* Math kernels: broadcasting binary ops (arithmetic, comparisons, logical, the *Grad helpers) and the
 * kernel table of the family. Unary ops are in math_unary.c, Cast in math_cast.c, SelectV2/ClipByValue/AddN
 * in math_select.c.
 *
 * Numerics follow TensorFlow's CPU kernels: integer arithmetic wraps (computed in unsigned types, so it is
 * defined behaviour), FloorDiv/FloorMod round toward negative infinity with the remainder taking the
 * divisor's sign, integer division by zero is an error checked before any work, INT_MIN / -1 wraps instead
 * of trapping, Maximum/Minimum propagate NaN from either side, DivNoNan gives 0 wherever y == 0. */
#include <math.h>
#include <string.h>

#include "kernels/cpu/math_internal.h"

/* ---- half / bfloat16 chunks -------------------------------------------------------------------------- */
void tfc_math_to_float(tfc_dtype dt, const void *src, float *dst, int64_t n) {
    const uint16_t *s = src;
    if (dt == TFC_HALF)
        for (int64_t i = 0; i < n; i++) dst[i] = tfc_math_h2f(s[i]);
    else
        for (int64_t i = 0; i < n; i++) dst[i] = tfc_math_bf2f(s[i]);
}

void tfc_math_from_float(tfc_dtype dt, const float *src, void *dst, int64_t n) {
    uint16_t *d = dst;
    if (dt == TFC_HALF)
        for (int64_t i = 0; i < n; i++) d[i] = tfc_math_f2h(src[i]);
    else
        for (int64_t i = 0; i < n; i++) d[i] = tfc_math_f2bf(src[i]);
}

bool tfc_math_check_int_nonzero(const tfc_kernel_ctx *k, const tfc_tensor *t, tfc_status *st) {
    int64_t n = t->num_elements, zeros = 0;
    TFC_SWITCH_REAL_NOHALF(t->dtype, {
        const T *p = t->data;
        for (int64_t i = 0; i < n; i++) zeros += p[i] == 0;
    }, return true);
    if (zeros) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: Integer division by zero", k->op->name);
    return true;
}

/* ---- segment functions --------------------------------------------------------------------------------
 * NAME(x, y, z, n, mode): z[i] = EXPR(a, b) for n elements, a from x and b from y; mode bit 0 set: x is
 * one element repeated (stride 0), bit 1: the same for y. Inside EXPR, T is the input type and UT the
 * unsigned type integer arithmetic wraps in. */
typedef void (*bin_fn)(const void *x, const void *y, void *z, int64_t n, int mode);

#define BIN_SEG(NAME, TI, TO, U, EXPR)                                                               \
    static void NAME(const void *xv, const void *yv, void *zv, int64_t n, int mode) {                \
        typedef TI T __attribute__((unused));                                                        \
        typedef U UT __attribute__((unused));                                                        \
        const TI *restrict x = xv, *restrict y = yv;                                                 \
        TO *restrict z = zv;                                                                         \
        if (mode == 0) {                                                                             \
            for (int64_t i = 0; i < n; i++) {                                                        \
                TI a = x[i], b = y[i];                                                               \
                z[i] = (TO)(EXPR);                                                                   \
            }                                                                                        \
        } else if (mode == 1) {                                                                      \
            TI a = x[0];                                                                             \
            for (int64_t i = 0; i < n; i++) {                                                        \
                TI b = y[i];                                                                         \
                z[i] = (TO)(EXPR);                                                                   \
            }                                                                                        \
        } else if (mode == 2) {                                                                      \
            TI b = y[0];                                                                             \
            for (int64_t i = 0; i < n; i++) {                                                        \
                TI a = x[i];                                                                         \
                z[i] = (TO)(EXPR);                                                                   \
            }                                                                                        \
        } else {                                                                                     \
            TI a = x[0], b = y[0];                                                                   \
            TO v = (TO)(EXPR);                                                                       \
            for (int64_t i = 0; i < n; i++) z[i] = v;                                                \
        }                                                                                            \
    }

/* One function per dtype class. */
#define SEG_FLOATS(NAME, EXPR) BIN_SEG(NAME##_f32, float, float, uint32_t, EXPR) BIN_SEG(NAME##_f64, double, double, uint64_t, EXPR)
#define SEG_SIGNED(NAME, EXPR)                                                                       \
    BIN_SEG(NAME##_i8, int8_t, int8_t, uint32_t, EXPR) BIN_SEG(NAME##_i16, int16_t, int16_t, uint32_t, EXPR) \
    BIN_SEG(NAME##_i32, int32_t, int32_t, uint32_t, EXPR) BIN_SEG(NAME##_i64, int64_t, int64_t, uint64_t, EXPR)
#define SEG_U8(NAME, EXPR) BIN_SEG(NAME##_u8, uint8_t, uint8_t, uint32_t, EXPR)
#define SEG_CMP(NAME, EXPR)                                                                          \
    BIN_SEG(NAME##_f32, float, bool, uint32_t, EXPR) BIN_SEG(NAME##_f64, double, bool, uint64_t, EXPR)      \
    BIN_SEG(NAME##_i8, int8_t, bool, uint32_t, EXPR) BIN_SEG(NAME##_u8, uint8_t, bool, uint32_t, EXPR)      \
    BIN_SEG(NAME##_i16, int16_t, bool, uint32_t, EXPR) BIN_SEG(NAME##_i32, int32_t, bool, uint32_t, EXPR)   \
    BIN_SEG(NAME##_i64, int64_t, bool, uint64_t, EXPR)

/* Scalar helpers with TensorFlow's semantics. */
static inline float fmod_floor_f32(float a, float b) {
    float r = fmodf(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}
static inline double fmod_floor_f64(double a, double b) {
    double r = fmod(a, b);
    return (r != 0 && ((b < 0) != (r < 0))) ? r + b : r;
}
#define INT_HELPERS(T, U, SUF)                                                                       \
    static inline T ifloordiv_##SUF(T a, T b) {                                                       \
        if (b == -1) return (T)(0u - (U)a);                                                          \
        T q = (T)(a / b);                                                                            \
        return (T)((a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q);                               \
    }                                                                                                \
    static inline T ifloormod_##SUF(T a, T b) {                                                       \
        if (b == -1) return 0;                                                                       \
        T r = (T)(a % b);                                                                            \
        return (T)((r != 0 && ((r < 0) != (b < 0))) ? r + b : r);                                    \
    }                                                                                                \
    static inline T itruncdiv_##SUF(T a, T b) { return b == -1 ? (T)(0u - (U)a) : (T)(a / b); }      \
    static inline T ipow_##SUF(T a, T b) { /* b >= 0 (checked by the kernel) */                     \
        U r = 1, p = (U)a;                                                                           \
        for (; b > 0; b = (T)(b >> 1)) {                                                             \
            if (b & 1) r *= p;                                                                       \
            p *= p;                                                                                  \
        }                                                                                            \
        return (T)r;                                                                                 \
    }
INT_HELPERS(int8_t, uint32_t, i8)
INT_HELPERS(int16_t, uint32_t, i16)
INT_HELPERS(int32_t, uint32_t, i32)
INT_HELPERS(int64_t, uint64_t, i64)
#define SIGNED_CALL(FN, a, b)                                                                        \
    _Generic((a), int8_t: FN##_i8, int16_t: FN##_i16, int32_t: FN##_i32, int64_t: FN##_i64)(a, b)
#define FLOAT_CALL(F32, F64, a, b) _Generic((a), float: F32, double: F64)(a, b)

/* Arithmetic. */
SEG_FLOATS(add, a + b)
SEG_SIGNED(add, (UT)a + (UT)b)
SEG_U8(add, (UT)a + (UT)b)
SEG_FLOATS(sub, a - b)
SEG_SIGNED(sub, (UT)a - (UT)b)
SEG_U8(sub, (UT)a - (UT)b)
SEG_FLOATS(mul, a * b)
SEG_SIGNED(mul, (UT)a * (UT)b)
SEG_U8(mul, (UT)a * (UT)b)
SEG_FLOATS(div, a / b)
SEG_SIGNED(div, SIGNED_CALL(itruncdiv, a, b))
SEG_U8(div, a / b)
SEG_FLOATS(divnonan, b == 0 ? (T)0 : a / b)
SEG_FLOATS(floordiv, _Generic((a), float: floorf, double: floor)(a / b))
/* half/bfloat16 arithmetic rounds every operation (Eigen's half), so TensorFlow floors the quotient rounded
 * to the dtype: 2.998 rounds to 3 in bfloat16 and floors to 3, not 2. */
static inline float round_f16(float v) { return tfc_math_h2f(tfc_math_f2h(v)); }
static inline float round_bf16(float v) { return tfc_math_bf2f(tfc_math_f2bf(v)); }
BIN_SEG(floordiv_f16, float, float, uint32_t, floorf(round_f16(a / b)))
BIN_SEG(floordiv_bf16, float, float, uint32_t, floorf(round_bf16(a / b)))
SEG_SIGNED(floordiv, SIGNED_CALL(ifloordiv, a, b))
SEG_U8(floordiv, a / b)
SEG_FLOATS(floormod, FLOAT_CALL(fmod_floor_f32, fmod_floor_f64, a, b))
SEG_SIGNED(floormod, SIGNED_CALL(ifloormod, a, b))
SEG_U8(floormod, a % b)
SEG_FLOATS(pow, FLOAT_CALL(powf, pow, a, b))
SEG_SIGNED(pow, SIGNED_CALL(ipow, a, b))
/* NaN from either operand propagates; otherwise the first operand wins ties (so max(-0, 0) = -0). */
SEG_FLOATS(max, b != b ? b : (a < b ? b : a))
SEG_SIGNED(max, a < b ? b : a)
SEG_U8(max, a < b ? b : a)
SEG_FLOATS(min, b != b ? b : (b < a ? b : a))
SEG_SIGNED(min, b < a ? b : a)
SEG_U8(min, b < a ? b : a)
SEG_FLOATS(sqdiff, (a - b) * (a - b))
BIN_SEG(sqdiff_i32, int32_t, int32_t, uint32_t, ((UT)a - (UT)b) * ((UT)a - (UT)b))
BIN_SEG(sqdiff_i64, int64_t, int64_t, uint64_t, ((UT)a - (UT)b) * ((UT)a - (UT)b))

/* Comparisons and logical ops (bool output). */
SEG_CMP(eq, a == b)
SEG_CMP(ne, a != b)
SEG_CMP(lt, a < b)
SEG_CMP(le, a <= b)
SEG_CMP(gt, a > b)
SEG_CMP(ge, a >= b)
BIN_SEG(eq_b, uint8_t, bool, uint32_t, a == b) /* bools as bytes: bool loads do not vectorise */
BIN_SEG(ne_b, uint8_t, bool, uint32_t, a != b)
BIN_SEG(and_b, uint8_t, bool, uint32_t, a & b)
BIN_SEG(or_b, uint8_t, bool, uint32_t, a | b)

/* Gradient helpers: a = y (the forward output), b = dy. */
SEG_FLOATS(sqrtgrad, (T)0.5 * b / a)
SEG_FLOATS(rsqrtgrad, (T)-0.5 * (b * a) * (a * a))
SEG_FLOATS(recipgrad, -b * a * a)
SEG_FLOATS(tanhgrad, b * ((T)1 - a * a))
SEG_FLOATS(sigmoidgrad, b * a * ((T)1 - a))

static bool tstr_eq(const tfc_tstring *a, const tfc_tstring *b) {
    size_t n = tfc_tstring_size(a);
    return n == tfc_tstring_size(b) && (n == 0 || !memcmp(tfc_tstring_data(a), tfc_tstring_data(b), n));
}
BIN_SEG(eq_s, tfc_tstring, bool, uint32_t, tstr_eq(&a, &b))
BIN_SEG(ne_s, tfc_tstring, bool, uint32_t, !tstr_eq(&a, &b))

/* ---- the broadcasting driver --------------------------------------------------------------------------- */
typedef struct {
    bin_fn f32, f64, i8, u8, i16, i32, i64, b, s;
    bin_fn f16, bf16; /* half/bfloat16 variants on float32 chunks; NULL: f32 */
} bin_table;

static bin_fn pick(const bin_table *t, tfc_dtype dt) {
    switch (dt) {
    case TFC_FLOAT: return t->f32;
    case TFC_HALF: return t->f16 ? t->f16 : t->f32;
    case TFC_BFLOAT16: return t->bf16 ? t->bf16 : t->f32;
    case TFC_DOUBLE: return t->f64;
    case TFC_INT8: return t->i8;
    case TFC_UINT8: return t->u8;
    case TFC_INT16: return t->i16;
    case TFC_INT32: return t->i32;
    case TFC_INT64: return t->i64;
    case TFC_BOOL: return t->b;
    case TFC_STRING: return t->s;
    default: return NULL;
    }
}

typedef struct {
    tfc_bcast bc;
    const char *x, *y;
    char *z;
    size_t xs, ys, zs; /* element sizes as stored */
    bin_fn fn;
    int mode;
    tfc_dtype lowp;    /* half/bfloat16 inputs: fn runs on float32 chunks */
    bool lowp_out;     /* ... and the output is half/bfloat16 too (else bool) */
} bin_job;

static void bin_segment(const bin_job *j, int64_t xo, int64_t yo, int64_t zo, int64_t n) {
    if (!j->lowp) {
        j->fn(j->x + xo * (int64_t)j->xs, j->y + yo * (int64_t)j->ys, j->z + zo * (int64_t)j->zs, n, j->mode);
        return;
    }
    float xb[TFC_MATH_CHUNK], yb[TFC_MATH_CHUNK], zb[TFC_MATH_CHUNK];
    bool xs = j->mode & 1, ys = j->mode & 2;
    for (int64_t i = 0; i < n; i += TFC_MATH_CHUNK) {
        int64_t m = n - i < TFC_MATH_CHUNK ? n - i : TFC_MATH_CHUNK;
        tfc_math_to_float(j->lowp, j->x + (xo + (xs ? 0 : i)) * 2, xb, xs ? 1 : m);
        tfc_math_to_float(j->lowp, j->y + (yo + (ys ? 0 : i)) * 2, yb, ys ? 1 : m);
        j->fn(xb, yb, zb, m, j->mode);
        if (j->lowp_out) tfc_math_from_float(j->lowp, zb, j->z + (zo + i) * 2, m);
        else memcpy(j->z + (zo + i), zb, (size_t)m); /* bool */
    }
}

static void bin_range(void *arg, int64_t begin, int64_t end) {
    const bin_job *j = arg;
    int64_t inner = j->bc.inner;
    for (int64_t i = begin; i < end;) {
        int64_t r = i / inner, c = i - r * inner, n = inner - c, xo, yo;
        if (n > end - i) n = end - i;
        tfc_bcast_row(&j->bc, r, &xo, &yo);
        bin_segment(j, xo + c * j->bc.a_inner, yo + c * j->bc.b_inner, i, n);
        i += n;
    }
}

/* Runs out[0] = f(in[0], in[1]) with broadcasting. cost: rough cycles per element, for the thread pool. */
static bool run_binary(tfc_kernel_ctx *k, const bin_table *t, int64_t cost, tfc_status *st) {
    const tfc_tensor *x = k->in[0], *y = k->in[1];
    tfc_tensor *z = k->out[0];
    bin_fn fn = pick(t, x->dtype);
    if (!fn) return tfc_kernel_unimplemented(k, x->dtype, st);
    if (z->num_elements == 0) return true;
    bin_job j = {.x = x->data, .y = y->data, .z = z->data, .xs = tfc_dtype_size(x->dtype),
                 .ys = tfc_dtype_size(y->dtype), .zs = tfc_dtype_size(z->dtype), .fn = fn};
    tfc_bcast_init(&j.bc, &x->shape, &y->shape, &z->shape);
    j.mode = (j.bc.a_inner ? 0 : 1) | (j.bc.b_inner ? 0 : 2);
    if (tfc_math_lowp(x->dtype)) {
        j.lowp = x->dtype;
        j.lowp_out = tfc_math_lowp(z->dtype);
        cost += 8;
    }
    if (x->dtype == TFC_STRING) cost += 20;
    tfc_parallel_for(k->pool, z->num_elements, cost, bin_range, &j);
    return true;
}

#define TABLE_ARITH(P) {.f32 = P##_f32, .f64 = P##_f64, .i8 = P##_i8, .u8 = P##_u8, .i16 = P##_i16, .i32 = P##_i32, .i64 = P##_i64}
#define TABLE_SIGNED(P) {.f32 = P##_f32, .f64 = P##_f64, .i8 = P##_i8, .i16 = P##_i16, .i32 = P##_i32, .i64 = P##_i64}
#define TABLE_FLOATS(P) {.f32 = P##_f32, .f64 = P##_f64}

static const bin_table t_add = TABLE_ARITH(add), t_sub = TABLE_ARITH(sub), t_mul = TABLE_ARITH(mul),
                       t_div = TABLE_ARITH(div), t_floormod = TABLE_ARITH(floormod), t_max = TABLE_ARITH(max),
                       t_min = TABLE_ARITH(min), t_pow = TABLE_SIGNED(pow), t_divnonan = TABLE_FLOATS(divnonan),
                       t_floordiv = {.f32 = floordiv_f32, .f64 = floordiv_f64, .i8 = floordiv_i8, .u8 = floordiv_u8,
                                     .i16 = floordiv_i16, .i32 = floordiv_i32, .i64 = floordiv_i64,
                                     .f16 = floordiv_f16, .bf16 = floordiv_bf16},
                       t_sqdiff = {.f32 = sqdiff_f32, .f64 = sqdiff_f64, .i32 = sqdiff_i32, .i64 = sqdiff_i64},
                       t_sqrtgrad = TABLE_FLOATS(sqrtgrad), t_rsqrtgrad = TABLE_FLOATS(rsqrtgrad),
                       t_recipgrad = TABLE_FLOATS(recipgrad), t_tanhgrad = TABLE_FLOATS(tanhgrad),
                       t_sigmoidgrad = TABLE_FLOATS(sigmoidgrad);
static const bin_table t_eq = {.f32 = eq_f32, .f64 = eq_f64, .i8 = eq_i8, .u8 = eq_u8, .i16 = eq_i16, .i32 = eq_i32,
                               .i64 = eq_i64, .b = eq_b, .s = eq_s},
                       t_ne = {.f32 = ne_f32, .f64 = ne_f64, .i8 = ne_i8, .u8 = ne_u8, .i16 = ne_i16, .i32 = ne_i32,
                               .i64 = ne_i64, .b = ne_b, .s = ne_s},
                       t_lt = TABLE_ARITH(lt), t_le = TABLE_ARITH(le), t_gt = TABLE_ARITH(gt), t_ge = TABLE_ARITH(ge),
                       t_and = {.b = and_b}, t_or = {.b = or_b};

bool tfc_k_add(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_add, 1, st); }
bool tfc_k_sub(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_sub, 1, st); }
bool tfc_k_mul(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_mul, 1, st); }
bool tfc_k_maximum(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_max, 1, st); }
bool tfc_k_minimum(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_min, 1, st); }
bool tfc_k_squared_difference(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_sqdiff, 1, st); }
bool tfc_k_div_no_nan(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_divnonan, 4, st); }

/* Integer division kernels check the divisor first: an error must leave no partial work behind. */
static bool run_int_div(tfc_kernel_ctx *k, const bin_table *t, int64_t cost, tfc_status *st) {
    if (tfc_dtype_is_integer(k->in[1]->dtype) && k->out[0]->num_elements > 0 &&
        !tfc_math_check_int_nonzero(k, k->in[1], st))
        return false;
    return run_binary(k, t, cost, st);
}
bool tfc_k_real_div(tfc_kernel_ctx *k, tfc_status *st) { return run_int_div(k, &t_div, 4, st); }
bool tfc_k_floor_div(tfc_kernel_ctx *k, tfc_status *st) { return run_int_div(k, &t_floordiv, 8, st); }
bool tfc_k_floor_mod(tfc_kernel_ctx *k, tfc_status *st) { return run_int_div(k, &t_floormod, 12, st); }

bool tfc_k_pow(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *y = k->in[1];
    if (tfc_dtype_is_integer(y->dtype) && k->out[0]->num_elements > 0) {
        int64_t neg = 0;
        switch (y->dtype) {
#define NEG_COUNT(DT, T) case DT: for (int64_t i = 0; i < y->num_elements; i++) neg += ((const T *)y->data)[i] < 0; break;
            NEG_COUNT(TFC_INT8, int8_t) NEG_COUNT(TFC_INT16, int16_t) NEG_COUNT(TFC_INT32, int32_t)
            NEG_COUNT(TFC_INT64, int64_t)
#undef NEG_COUNT
        default: break;
        }
        if (neg)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Pow: Integers to negative integer powers are not allowed");
    }
    return run_binary(k, &t_pow, 20, st);
}

/* Equal/NotEqual with incompatible_shape_error = false: unbroadcastable shapes give a scalar false/true. */
static bool run_equality(tfc_kernel_ctx *k, const bin_table *t, bool incompatible_value, tfc_status *st) {
    tfc_shape s;
    tfc_status ignore = TFC_STATUS_INIT;
    if (!tfc_broadcast_shapes(&k->in[0]->shape, &k->in[1]->shape, &s, k->op->name, &ignore)) {
        *(bool *)k->out[0]->data = incompatible_value;
        return true;
    }
    return run_binary(k, t, 1, st);
}
bool tfc_k_equal(tfc_kernel_ctx *k, tfc_status *st) { return run_equality(k, &t_eq, false, st); }
bool tfc_k_not_equal(tfc_kernel_ctx *k, tfc_status *st) { return run_equality(k, &t_ne, true, st); }
bool tfc_k_less(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_lt, 1, st); }
bool tfc_k_less_equal(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_le, 1, st); }
bool tfc_k_greater(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_gt, 1, st); }
bool tfc_k_greater_equal(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_ge, 1, st); }
bool tfc_k_logical_and(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_and, 1, st); }
bool tfc_k_logical_or(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_or, 1, st); }

bool tfc_k_sqrt_grad(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_sqrtgrad, 4, st); }
bool tfc_k_rsqrt_grad(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_rsqrtgrad, 2, st); }
bool tfc_k_reciprocal_grad(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_recipgrad, 2, st); }
bool tfc_k_tanh_grad(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_tanhgrad, 2, st); }
bool tfc_k_sigmoid_grad(tfc_kernel_ctx *k, tfc_status *st) { return run_binary(k, &t_sigmoidgrad, 2, st); }

const tfc_kernel_reg tfc_cpu_kernels_math[] = {
    {"AddV2", tfc_k_add}, {"Add", tfc_k_add}, {"Sub", tfc_k_sub}, {"Mul", tfc_k_mul}, {"RealDiv", tfc_k_real_div},
    {"DivNoNan", tfc_k_div_no_nan}, {"FloorDiv", tfc_k_floor_div}, {"FloorMod", tfc_k_floor_mod},
    {"Pow", tfc_k_pow}, {"Maximum", tfc_k_maximum}, {"Minimum", tfc_k_minimum},
    {"SquaredDifference", tfc_k_squared_difference},
    {"Neg", tfc_k_neg}, {"Abs", tfc_k_abs}, {"Sign", tfc_k_sign}, {"Square", tfc_k_square},
    {"Sqrt", tfc_k_sqrt}, {"Rsqrt", tfc_k_rsqrt}, {"Reciprocal", tfc_k_reciprocal}, {"Exp", tfc_k_exp},
    {"Expm1", tfc_k_expm1}, {"Log", tfc_k_log}, {"Log1p", tfc_k_log1p}, {"Sin", tfc_k_sin}, {"Cos", tfc_k_cos},
    {"Tanh", tfc_k_tanh}, {"Sigmoid", tfc_k_sigmoid}, {"Erf", tfc_k_erf}, {"Floor", tfc_k_floor},
    {"Ceil", tfc_k_ceil}, {"Round", tfc_k_round},
    {"Equal", tfc_k_equal}, {"NotEqual", tfc_k_not_equal}, {"Less", tfc_k_less}, {"LessEqual", tfc_k_less_equal},
    {"Greater", tfc_k_greater}, {"GreaterEqual", tfc_k_greater_equal}, {"LogicalAnd", tfc_k_logical_and},
    {"LogicalOr", tfc_k_logical_or}, {"LogicalNot", tfc_k_logical_not},
    {"SelectV2", tfc_k_select_v2}, {"Cast", tfc_k_cast}, {"ClipByValue", tfc_k_clip_by_value}, {"AddN", tfc_k_add_n},
    {"SqrtGrad", tfc_k_sqrt_grad}, {"RsqrtGrad", tfc_k_rsqrt_grad}, {"ReciprocalGrad", tfc_k_reciprocal_grad},
    {"TanhGrad", tfc_k_tanh_grad}, {"SigmoidGrad", tfc_k_sigmoid_grad},
    {NULL, NULL},
};
