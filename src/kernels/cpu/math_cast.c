/* Cast between float32, float64, half, bfloat16, the integer types and bool, with TensorFlow's x86 CPU
 * results where C leaves them undefined:
 *  - floating -> int32/int64: truncation toward zero; NaN and out-of-range values give INT_MIN/INT64_MIN
 *    (what cvttss2si/cvttsd2si produce, and what TensorFlow returns);
 *  - floating -> int8/uint8/int16: through int32 as above, then saturated (300.0 -> int8 127, -1.0 -> uint8 0,
 *    NaN -> int8 -128). TensorFlow's vectorised loop does this; its scalar loop for the last n % 32 elements
 *    keeps the low bits instead (300.0 -> 44), so TensorFlow itself disagrees with itself there;
 *  - integer -> narrower integer: keeps the low bits; anything -> bool: x != 0 (NaN is true);
 *  - float64 -> half/bfloat16 goes through float32 (so it can round twice, as TensorFlow does); float64 ->
 *    bfloat16 also flushes results below float32's normal range to zero and keeps a NaN's sign (0xffc0), as
 *    TensorFlow's Eigen path does under the flush-to-zero mode of its threads;
 *  - Truncate = true on a floating source zeroes the mantissa bits the destination cannot hold before
 *    converting (TensorFlow's LSBZeroSetter), i.e. rounds toward zero instead of to nearest even.
 * Same-dtype casts share the input buffer. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu/math_internal.h"

static inline int32_t f2i32(double d) { return d > -2147483649.0 && d < 2147483648.0 ? (int32_t)d : INT32_MIN; }
static inline int32_t sat32(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : v > hi ? hi : v; }
static inline int64_t f2i64(double d) {
    return d >= -9223372036854775808.0 && d < 9223372036854775808.0 ? (int64_t)d : INT64_MIN;
}

/* Loads: a floating source as double (exact), an integer or bool source as int64 (exact). */
#define LD_F(v) ((double)(v))
#define LD_H(v) ((double)tfc_math_h2f(v))
#define LD_B(v) ((double)tfc_math_bf2f(v))
#define LD_I(v) ((int64_t)(v))
/* Stores from a double (F) or an int64 (I). */
#define STF_f32(x) ((float)(x))
#define STF_f64(x) ((double)(x))
#define STF_f16(x) tfc_math_f2h((float)(x))
#define STF_bf16(x) tfc_math_f2bf((float)(x))
#define STF_i8(x) ((int8_t)sat32(f2i32(x), INT8_MIN, INT8_MAX))
#define STF_u8(x) ((uint8_t)sat32(f2i32(x), 0, UINT8_MAX))
#define STF_i16(x) ((int16_t)sat32(f2i32(x), INT16_MIN, INT16_MAX))
#define STF_i32(x) f2i32(x)
#define STF_i64(x) f2i64(x)
#define STF_b(x) ((x) != 0)
#define STI_f32(x) ((float)(x))
#define STI_f64(x) ((double)(x))
#define STI_f16(x) tfc_math_f2h((float)(x))
#define STI_bf16(x) tfc_math_f2bf((float)(x))
#define STI_i8(x) ((int8_t)(x))
#define STI_u8(x) ((uint8_t)(x))
#define STI_i16(x) ((int16_t)(x))
#define STI_i32(x) ((int32_t)(x))
#define STI_i64(x) ((int64_t)(x))
#define STI_b(x) ((x) != 0)

#define LOOP(ST, LD, DT, STORE)                                                                      \
    {                                                                                                \
        const ST *restrict s = src;                                                                  \
        DT *restrict d = dst;                                                                        \
        for (int64_t i = 0; i < n; i++) d[i] = STORE(LD(s[i]));                                      \
    }                                                                                                \
    return true;
/* ST##K##_dst pastes to STF_dst or STI_dst. */
#define DST_CASES(SRC, LD, K)                                                                        \
    switch (dst_dt) {                                                                                \
    case TFC_FLOAT: LOOP(SRC, LD, float, ST##K##_f32)                                                \
    case TFC_DOUBLE: LOOP(SRC, LD, double, ST##K##_f64)                                              \
    case TFC_HALF: LOOP(SRC, LD, uint16_t, ST##K##_f16)                                              \
    case TFC_BFLOAT16: LOOP(SRC, LD, uint16_t, ST##K##_bf16)                                         \
    case TFC_INT8: LOOP(SRC, LD, int8_t, ST##K##_i8)                                                 \
    case TFC_UINT8: LOOP(SRC, LD, uint8_t, ST##K##_u8)                                               \
    case TFC_INT16: LOOP(SRC, LD, int16_t, ST##K##_i16)                                              \
    case TFC_INT32: LOOP(SRC, LD, int32_t, ST##K##_i32)                                              \
    case TFC_INT64: LOOP(SRC, LD, int64_t, ST##K##_i64)                                              \
    case TFC_BOOL: LOOP(SRC, LD, bool, ST##K##_b)                                                    \
    default: return false;                                                                           \
    }

static inline uint16_t f64_to_bf16(double v) {
    if (v != v) return signbit(v) ? 0xffc0u : 0x7fc0u;
    float f = (float)v;
    if (fabsf(f) < FLT_MIN) f = signbit(f) ? -0.0f : 0.0f;
    return tfc_math_f2bf(f);
}

/* Converts n elements; false when the pair is not supported. */
static bool cast_block(tfc_dtype src_dt, const void *src, tfc_dtype dst_dt, void *dst, int64_t n) {
    if (src_dt == TFC_DOUBLE && dst_dt == TFC_BFLOAT16) {
        LOOP(double, LD_F, uint16_t, f64_to_bf16) /* (returns) */
    }
    switch (src_dt) {
    case TFC_FLOAT: DST_CASES(float, LD_F, F)
    case TFC_DOUBLE: DST_CASES(double, LD_F, F)
    case TFC_HALF: DST_CASES(uint16_t, LD_H, F) /* half and bfloat16 as their bits */
    case TFC_BFLOAT16: DST_CASES(uint16_t, LD_B, F)
    case TFC_INT8: DST_CASES(int8_t, LD_I, I)
    case TFC_UINT8: DST_CASES(uint8_t, LD_I, I)
    case TFC_INT16: DST_CASES(int16_t, LD_I, I)
    case TFC_INT32: DST_CASES(int32_t, LD_I, I)
    case TFC_INT64: DST_CASES(int64_t, LD_I, I)
    case TFC_BOOL: DST_CASES(bool, LD_I, I)
    default: return false;
    }
}

static bool castable(tfc_dtype dt) {
    switch (dt) {
    case TFC_FLOAT: case TFC_DOUBLE: case TFC_HALF: case TFC_BFLOAT16: case TFC_INT8: case TFC_UINT8:
    case TFC_INT16: case TFC_INT32: case TFC_INT64: case TFC_BOOL: return true;
    default: return false;
    }
}

/* Mantissa bits a truncating cast drops from a float32/float64 source (0: no truncation applies). */
static int truncated_bits(tfc_dtype src, tfc_dtype dst) {
    int keep = dst == TFC_HALF ? 10 : dst == TFC_BFLOAT16 ? 7 : dst == TFC_FLOAT ? 23 : -1;
    if (keep < 0) return 0;
    if (src == TFC_FLOAT) return 23 - keep;
    if (src == TFC_DOUBLE) return 52 - keep;
    return 0;
}

typedef struct {
    tfc_dtype src_dt, dst_dt;
    const char *src;
    char *dst;
    size_t ss, ds;
    int drop; /* mantissa bits zeroed first (Truncate) */
} cast_job;

static void cast_range(void *arg, int64_t begin, int64_t end) {
    const cast_job *j = arg;
    if (!j->drop) {
        cast_block(j->src_dt, j->src + begin * (int64_t)j->ss, j->dst_dt, j->dst + begin * (int64_t)j->ds, end - begin);
        return;
    }
    uint64_t buf[TFC_MATH_CHUNK];
    for (int64_t i = begin; i < end; i += TFC_MATH_CHUNK) {
        int64_t m = end - i < TFC_MATH_CHUNK ? end - i : TFC_MATH_CHUNK;
        if (j->src_dt == TFC_FLOAT) {
            uint32_t *b = (uint32_t *)buf, mask = ~((1u << j->drop) - 1u);
            memcpy(b, j->src + i * 4, (size_t)m * 4);
            for (int64_t k = 0; k < m; k++)
                if ((b[k] & 0x7fffffffu) <= 0x7f800000u) b[k] &= mask; /* NaN stays NaN */
        } else {
            uint64_t mask = ~((1ull << j->drop) - 1ull);
            memcpy(buf, j->src + i * 8, (size_t)m * 8);
            for (int64_t k = 0; k < m; k++)
                if ((buf[k] & 0x7fffffffffffffffull) <= 0x7ff0000000000000ull) buf[k] &= mask;
        }
        cast_block(j->src_dt, buf, j->dst_dt, j->dst + i * (int64_t)j->ds, m);
    }
}

bool tfc_k_cast(tfc_kernel_ctx *k, tfc_status *st) {
    const tfc_tensor *x = k->in[0];
    tfc_dtype src = x->dtype, dst = tfc_attrs_type(k->attrs, "DstT", TFC_INVALID_DTYPE);
    if (src == dst) return tfc_kernel_forward_input(k, 0, 0, NULL, st);
    if (!castable(src) || !castable(dst))
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "Cast %s to %s is not supported", tfc_dtype_name(src),
                              tfc_dtype_name(dst));
    cast_job j = {.src_dt = src, .dst_dt = dst, .src = x->data, .dst = k->out[0]->data,
                  .ss = tfc_dtype_size(src), .ds = tfc_dtype_size(dst)};
    if (tfc_attrs_bool(k->attrs, "Truncate", false)) j.drop = truncated_bits(src, dst);
    tfc_parallel_for(k->pool, x->num_elements, j.drop ? 4 : 1, cast_range, &j);
    return true;
}
