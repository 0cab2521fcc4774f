/* Internal: instances of the GEMM and nn kernels (MatMul, BatchMatMulV2, _FusedMatMul, BiasAdd, BiasAddGrad,
 * FusedBatchNormV3 and its gradient, Softmax): their attrs parsed once when the instance is created (an eager
 * call's first with these attrs, a graph function's instantiation; device/device.h), so a call reads a struct
 * instead of looking attrs up by name. Conv and pool kernels have theirs in conv_internal.h. */
#ifndef TFC_KERNELS_CPU_KSTATE_H
#define TFC_KERNELS_CPU_KSTATE_H

#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/kernels.h"

typedef struct tfc_kstate {
    bool ta, tb;          /* MatMul / _FusedMatMul transpose_a, transpose_b; BatchMatMulV2 adj_x, adj_y */
    tfc_epilogue ep;      /* _FusedMatMul: fused_ops and leakyrelu_alpha (bias unset) */
    bool nchw;            /* BiasAdd(Grad), FusedBatchNorm(Grad)V3: data_format puts channels in dim 1 */
    bool training;        /* FusedBatchNorm(Grad)V3: is_training */
    double eps, factor;   /* FusedBatchNorm(Grad)V3: epsilon, exponential_avg_factor (float32 values) */
} tfc_kstate;

/* create (tfc_kernel_def) for the ops above: parses the op's attrs; errors name the op and the attr value
 * (INVALID_ARGUMENT for a data_format the op does not take; _FusedMatMul's fused_ops as tfc_fused_spec_read). */
bool tfc_kstate_create(tfc_kernel_ctx *k, void **state, tfc_status *st);
/* The instance's state, or k's attrs parsed into *tmp for a call without instance (NULL with st set). */
const tfc_kstate *tfc_kstate_of(const tfc_kernel_ctx *k, tfc_kstate *tmp, tfc_status *st);
void tfc_kstate_destroy(void *state);

#define TFC_KSTATE_DEF(name, fn) \
    {.op = name, .device = "CPU", .compute = fn, .create = tfc_kstate_create, .destroy = tfc_kstate_destroy}

#endif
