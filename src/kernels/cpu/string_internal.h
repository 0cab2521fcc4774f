/* Internal: string kernels shared between string.c (the table) and string_convert.c, and TensorFlow's
 * string -> number rules (absl SimpleAtoi/SimpleAtof: ASCII whitespace around the number is ignored;
 * integers are decimal with an optional sign and must fit; floats accept decimal and hex forms, inf,
 * infinity and nan, overflow to infinity and underflow to zero). */
#ifndef TFC_KERNELS_CPU_STRING_INTERNAL_H
#define TFC_KERNELS_CPU_STRING_INTERNAL_H

#include "kernels/cpu/kernels.h"

bool tfc_kernel_string_to_number(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_kernel_as_string(tfc_kernel_ctx *k, tfc_status *st);
bool tfc_kernel_decode_csv(tfc_kernel_ctx *k, tfc_status *st);

/* Each returns false when s[0..n) is not a valid number of the type. */
bool tfc_parse_i64(const char *s, size_t n, int64_t *out);
bool tfc_parse_i32(const char *s, size_t n, int32_t *out);
bool tfc_parse_f32(const char *s, size_t n, float *out);
bool tfc_parse_f64(const char *s, size_t n, double *out);

#endif
