/* Internal: iteration over NumPy-broadcast binary operands. The output index space is split into rows of
 * the innermost dimension; for each row, the inputs' starting offsets and inner strides (0 or 1) are
 * computed once, so the inner loop is a plain strided loop the compiler vectorises. */
#ifndef TFC_KERNELS_CPU_BROADCAST_H
#define TFC_KERNELS_CPU_BROADCAST_H

#include "core/tensor_internal.h"

typedef struct tfc_bcast {
    int rank;                       /* of the output, after merging */
    int64_t out_dims[TFC_MAX_RANK];
    int64_t a_strides[TFC_MAX_RANK], b_strides[TFC_MAX_RANK]; /* element strides, 0 on broadcast dims */
    int64_t inner;                  /* out_dims[rank-1] (1 for rank 0) */
    int64_t rows;                   /* product of the outer dims */
    int64_t a_inner, b_inner;       /* inner strides: 0 or 1 */
    bool same;                      /* no broadcasting: a, b and out are the same shape */
} tfc_bcast;

/* Prepares iteration of out = f(a, b); the shapes must be broadcast-compatible (validated by the op). */
void tfc_bcast_init(tfc_bcast *bc, const tfc_shape *a, const tfc_shape *b, const tfc_shape *out);
/* Offsets of row r (0 <= r < rows) in a and b. */
void tfc_bcast_row(const tfc_bcast *bc, int64_t r, int64_t *a_off, int64_t *b_off);

#endif
