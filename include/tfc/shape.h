/* tfc — tensor shapes: rank <= 8, int64 dims. In graphs a dim may be -1 (unknown) and rank may be -1. */
#ifndef TFC_SHAPE_H
#define TFC_SHAPE_H

#include "tfc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TFC_MAX_RANK 8

typedef struct tfc_shape {
    int rank;                      /* 0..TFC_MAX_RANK, or -1 for unknown rank */
    int64_t dims[TFC_MAX_RANK];    /* dims[i] >= 0, or -1 for unknown */
} tfc_shape;

/* Builds a shape from `rank` dims. INVALID_ARGUMENT when rank > 8 or a dim is < -1. */
TFC_API bool tfc_shape_make(tfc_shape *out, const int64_t *dims, int rank, tfc_status *st);
/* Number of elements; INVALID_ARGUMENT when the product overflows int64 or a dim is negative/unknown.
 * `what` names the caller in the message (an op name); may be NULL. */
TFC_API bool tfc_shape_num_elements(const tfc_shape *s, int64_t *out, const char *what, tfc_status *st);
TFC_API bool tfc_shape_equal(const tfc_shape *a, const tfc_shape *b);
TFC_API bool tfc_shape_is_fully_defined(const tfc_shape *s);
/* Writes "[2,3,4]" ("<unknown>" for unknown rank, "?" for unknown dims) into buf; returns buf. */
TFC_API char *tfc_shape_str(const tfc_shape *s, char *buf, size_t size);
/* Checked int64 product helper: false on overflow or negative factors. */
TFC_API bool tfc_mul_overflow_i64(int64_t a, int64_t b, int64_t *out);

/* A scratch string long enough for any shape: use as tfc_shape_str(&s, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR). */
#define TFC_SHAPE_STR 192

#ifdef __cplusplus
}
#endif
#endif
