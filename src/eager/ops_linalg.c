/* Typed wrappers for matrix products (include/tfc/ops/linalg.h). */
#include "core/tensor_internal.h"
#include "tfc/ops/linalg.h"

#define T(x) ((tfc_tensor *)(x)) /* inputs are only read */

/* As tf.linalg.matmul: MatMul for two matrices, else BatchMatMulV2 (whose adjoints are transposes for real
 * dtypes). */
tfc_tensor *tfc_matmul(tfc_ctx *ctx, const tfc_tensor *a, const tfc_tensor *b, bool transpose_a, bool transpose_b,
                       tfc_status *st) {
    if (!a || !b) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "MatMul: input is NULL");
        return NULL;
    }
    if (a->shape.rank == 2 && b->shape.rank == 2) {
        tfc_attr at[2] = {TFC_ATTR_B("transpose_a", transpose_a), TFC_ATTR_B("transpose_b", transpose_b)};
        return tfc_emit(ctx, "MatMul", (tfc_tensor *[]){T(a), T(b)}, 2, at, 2, st);
    }
    tfc_attr at[2] = {TFC_ATTR_B("adj_x", transpose_a), TFC_ATTR_B("adj_y", transpose_b)};
    return tfc_emit(ctx, "BatchMatMulV2", (tfc_tensor *[]){T(a), T(b)}, 2, at, 2, st);
}
