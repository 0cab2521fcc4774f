/* DType traits and float16/bfloat16 conversions (round to nearest even, as Eigen's half/bfloat16). */
#include <math.h>
#include <string.h>

#include "tfc/dtype.h"
#include "tfc/tstring.h"

tfc_half tfc_half_from_float(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t ax = x & 0x7fffffffu;
    tfc_half h;
    if (ax >= 0x7f800000u) { /* inf or nan */
        h.bits = (uint16_t)(sign | 0x7c00u | (ax > 0x7f800000u ? 0x200u | ((ax >> 13) & 0x3ffu) : 0));
        return h;
    }
    if (ax >= 0x477ff000u) { /* rounds to >= 65520: overflow to inf */
        h.bits = (uint16_t)(sign | 0x7c00u);
        return h;
    }
    if (ax < 0x38800000u) { /* subnormal half or zero: add magic to let the FPU round */
        float af;
        memcpy(&af, &ax, 4);
        af += 0.5f;
        uint32_t r;
        memcpy(&r, &af, 4);
        h.bits = (uint16_t)(sign | (r - 0x3f000000u));
        return h;
    }
    uint32_t mant_odd = (ax >> 13) & 1u;
    ax += 0xc8000fffu + mant_odd; /* rebias exponent (-112 << 23) and round to nearest even */
    h.bits = (uint16_t)(sign | (ax >> 13));
    return h;
}

float tfc_half_to_float(tfc_half h) {
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    uint32_t exp = (h.bits >> 10) & 0x1fu, mant = h.bits & 0x3ffu, x;
    if (exp == 0) {
        float f = (float)mant * 5.9604644775390625e-08f; /* 2^-24 */
        memcpy(&x, &f, 4);
        x |= sign;
    } else if (exp == 31) {
        x = sign | 0x7f800000u | (mant << 13);
    } else {
        x = sign | ((exp + 112u) << 23) | (mant << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

tfc_bfloat16 tfc_bfloat16_from_float(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    tfc_bfloat16 b;
    if (isnan(f)) { /* every NaN becomes the positive quiet NaN, as TensorFlow's (Eigen's) conversion */
        b.bits = 0x7fc0u;
        return b;
    }
    x += 0x7fffu + ((x >> 16) & 1u);
    b.bits = (uint16_t)(x >> 16);
    return b;
}

float tfc_bfloat16_to_float(tfc_bfloat16 b) {
    uint32_t x = (uint32_t)b.bits << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

size_t tfc_dtype_size(tfc_dtype dt) {
    switch (dt) {
    case TFC_FLOAT: case TFC_INT32: return 4;
    case TFC_DOUBLE: case TFC_INT64: return 8;
    case TFC_UINT8: case TFC_INT8: case TFC_BOOL: return 1;
    case TFC_INT16: case TFC_UINT16: case TFC_HALF: case TFC_BFLOAT16: return 2;
    case TFC_STRING: return sizeof(tfc_tstring);
    case TFC_RESOURCE: return sizeof(void *);
    default: return 0;
    }
}

static const struct { tfc_dtype dt; const char *name; } names[] = {
    {TFC_FLOAT, "float32"}, {TFC_DOUBLE, "float64"}, {TFC_HALF, "float16"}, {TFC_BFLOAT16, "bfloat16"},
    {TFC_INT8, "int8"},     {TFC_UINT8, "uint8"},    {TFC_INT16, "int16"},  {TFC_INT32, "int32"},
    {TFC_INT64, "int64"},   {TFC_BOOL, "bool"},      {TFC_STRING, "string"}, {TFC_RESOURCE, "resource"},
    {TFC_UINT16, "uint16"},
    /* op-def spellings */
    {TFC_FLOAT, "float"},   {TFC_DOUBLE, "double"},  {TFC_HALF, "half"},
};

const char *tfc_dtype_name(tfc_dtype dt) {
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].dt == dt) return names[i].name;
    return "invalid";
}

tfc_dtype tfc_dtype_from_name(const char *name) {
    if (!name) return TFC_INVALID_DTYPE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (!strcmp(names[i].name, name)) return names[i].dt;
    return TFC_INVALID_DTYPE;
}

bool tfc_dtype_is_valid(tfc_dtype dt) { return tfc_dtype_size(dt) != 0; }
bool tfc_dtype_is_floating(tfc_dtype dt) {
    return dt == TFC_FLOAT || dt == TFC_DOUBLE || dt == TFC_HALF || dt == TFC_BFLOAT16;
}
bool tfc_dtype_is_integer(tfc_dtype dt) {
    return dt == TFC_INT8 || dt == TFC_UINT8 || dt == TFC_INT16 || dt == TFC_UINT16 || dt == TFC_INT32 ||
           dt == TFC_INT64;
}

double tfc_dtype_get_f64(tfc_dtype dt, const void *src, int64_t i) {
    switch (dt) {
    case TFC_FLOAT: return ((const float *)src)[i];
    case TFC_DOUBLE: return ((const double *)src)[i];
    case TFC_HALF: return tfc_half_to_float(((const tfc_half *)src)[i]);
    case TFC_BFLOAT16: return tfc_bfloat16_to_float(((const tfc_bfloat16 *)src)[i]);
    case TFC_INT8: return ((const int8_t *)src)[i];
    case TFC_UINT8: return ((const uint8_t *)src)[i];
    case TFC_INT16: return ((const int16_t *)src)[i];
    case TFC_UINT16: return ((const uint16_t *)src)[i];
    case TFC_INT32: return ((const int32_t *)src)[i];
    case TFC_INT64: return (double)((const int64_t *)src)[i];
    case TFC_BOOL: return ((const uint8_t *)src)[i] ? 1.0 : 0.0;
    default: return 0.0;
    }
}

/* Saturating double -> integer conversion: C leaves out-of-range conversions undefined. */
#define SAT(T, lo, hi) (isnan(v) ? (T)0 : v <= (double)(lo) ? (T)(lo) : v >= (double)(hi) ? (T)(hi) : (T)v)

void tfc_dtype_set_f64(tfc_dtype dt, void *dst, int64_t i, double v) {
    switch (dt) {
    case TFC_FLOAT: ((float *)dst)[i] = (float)v; break;
    case TFC_DOUBLE: ((double *)dst)[i] = v; break;
    case TFC_HALF: ((tfc_half *)dst)[i] = tfc_half_from_float((float)v); break;
    case TFC_BFLOAT16: ((tfc_bfloat16 *)dst)[i] = tfc_bfloat16_from_float((float)v); break;
    case TFC_INT8: ((int8_t *)dst)[i] = SAT(int8_t, INT8_MIN, INT8_MAX); break;
    case TFC_UINT8: ((uint8_t *)dst)[i] = SAT(uint8_t, 0, UINT8_MAX); break;
    case TFC_INT16: ((int16_t *)dst)[i] = SAT(int16_t, INT16_MIN, INT16_MAX); break;
    case TFC_UINT16: ((uint16_t *)dst)[i] = SAT(uint16_t, 0, UINT16_MAX); break;
    case TFC_INT32: ((int32_t *)dst)[i] = SAT(int32_t, INT32_MIN, INT32_MAX); break;
    case TFC_INT64: ((int64_t *)dst)[i] = SAT(int64_t, -9.2233720368547758e18, 9.2233720368547748e18); break;
    case TFC_BOOL: ((uint8_t *)dst)[i] = v != 0.0; break;
    default: break;
    }
}
