/* Internal: the one-row product of tfc_sgemm (gemv.c), used for m == 1 with a small B.
 *
 *   c[0, j] = act(alpha * sum_p a[p * as] op(B)[p, j] + beta * c[0, j] + bias[j])   j < n
 *
 * a: k floats at stride `as` (1 for a row of A; lda for a column of a transposed A). B: [k, n] row-major
 * (ldb >= n) or, trans_b, [n, k] (ldb >= k). beta 0 does not read c. ep (epilogue.h; NULL: none) is
 * applied after the alpha/beta step, bias column j for c[j]. Runs on the calling thread. */
#ifndef TFC_KERNELS_CPU_GEMV_H
#define TFC_KERNELS_CPU_GEMV_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/epilogue.h"

void tfc_sgemv_row(bool trans_b, int64_t n, int64_t k, float alpha, const float *a, int64_t as, const float *b,
                   int64_t ldb, float beta, float *c, const tfc_epilogue *ep);

#endif
