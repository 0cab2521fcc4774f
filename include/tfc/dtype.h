/* tfc — data types. Numbers are TensorFlow's DataType enum (types.proto), so file and C-API
 * interop is a cast. float16 and bfloat16 are struct wrappers: no accidental integer arithmetic. */
#ifndef TFC_DTYPE_H
#define TFC_DTYPE_H

#include "tfc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TFC_INVALID_DTYPE = 0,
    TFC_FLOAT = 1,
    TFC_DOUBLE = 2,
    TFC_INT32 = 3,
    TFC_UINT8 = 4,
    TFC_INT16 = 5,
    TFC_INT8 = 6,
    TFC_STRING = 7,
    TFC_INT64 = 9,
    TFC_BOOL = 10,
    TFC_BFLOAT16 = 14,
    TFC_UINT16 = 17, /* image codecs (DecodePng/EncodePng 16-bit) and resize */
    TFC_HALF = 19,
    TFC_RESOURCE = 20,
} tfc_dtype;

/* IEEE 754 binary16 and bfloat16 (upper 16 bits of a float32), stored as raw bits. */
typedef struct { uint16_t bits; } tfc_half;
typedef struct { uint16_t bits; } tfc_bfloat16;

/* Round-to-nearest-even conversions, bit for bit as TensorFlow's Cast on x86: NaN stays NaN (float16 keeps the
 * sign and top payload bits with the quiet bit set; bfloat16 gives the canonical 0x7fc0), float32 subnormals
 * are rounded (not flushed), overflow goes to infinity. */
TFC_API tfc_half tfc_half_from_float(float f);
TFC_API float tfc_half_to_float(tfc_half h);
TFC_API tfc_bfloat16 tfc_bfloat16_from_float(float f);
TFC_API float tfc_bfloat16_to_float(tfc_bfloat16 b);

/* Element size in bytes (24 for TFC_STRING, the TF_TString layout; 0 for unknown dtypes). */
TFC_API size_t tfc_dtype_size(tfc_dtype dt);
/* TensorFlow's lowercase name ("float32" style as tf.DType.name: float32, float64, half is "float16",
 * bfloat16, int8, uint8, int16, int32, int64, bool, string, resource); "invalid" otherwise. */
TFC_API const char *tfc_dtype_name(tfc_dtype dt);
/* Parses names as above plus the op-def spellings "float", "double", "half". Returns
 * TFC_INVALID_DTYPE when unknown. */
TFC_API tfc_dtype tfc_dtype_from_name(const char *name);
TFC_API bool tfc_dtype_is_valid(tfc_dtype dt);
TFC_API bool tfc_dtype_is_floating(tfc_dtype dt); /* float, double, half, bfloat16 */
TFC_API bool tfc_dtype_is_integer(tfc_dtype dt); /* int8..int64, uint8, uint16 */

/* Converts one element at src (of dtype `dt`) to double, and back (integer targets truncate toward
 * zero as C casts do; bool is v != 0). Used by reference kernels, tests and Cast. */
TFC_API double tfc_dtype_get_f64(tfc_dtype dt, const void *src, int64_t index);
TFC_API void tfc_dtype_set_f64(tfc_dtype dt, void *dst, int64_t index, double v);

#ifdef __cplusplus
}
#endif
#endif
