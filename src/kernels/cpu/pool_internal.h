/* Internal: the pooling kernels' work description and their float32 SIMD kernels (pool.c, pool_simd*.c).
 *
 * All kernels work on NHWC data: x / dy / out point to [batch, h, w, c] arrays (pool.c stages NCHW and
 * half/bfloat16 tensors through conv_load/conv_store). The window of output (oh, ow) covers input rows
 * [oh*stride_h - pad_top, +k_h) and columns [ow*stride_w - pad_left, +k_w), clipped to the input.
 *
 * The float32 kernels are vectorised across channels (contiguous in NHWC) and live in pool_simd.inc,
 * compiled for the baseline ISA (pool_simd_base.c) and, on x86-64 with GCC, for AVX2 (pool_simd_avx2.c) and
 * AVX-512 (pool_simd_avx512.c). tfc_pool_simd_get() picks the table for the running CPU; TFC_POOL_SIMD
 * (baseline, avx2, avx512, generic) caps the choice, "generic" meaning pool.c's scalar kernels. Every table
 * computes exactly what the scalar kernels compute (same comparisons, same order of additions), so the
 * choice never changes a result. */
#ifndef TFC_KERNELS_CPU_POOL_INTERNAL_H
#define TFC_KERNELS_CPU_POOL_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu/conv_internal.h"

typedef struct pool_job {
    const tfc_conv_geom *g;
    const void *x, *dy; /* x: the forward input (orig_input); dy: the incoming gradient */
    void *out;
    int64_t cb, nb;     /* channel block size and blocks per image (units of the overlapping MaxPoolGrad) */
} pool_job;

/* MaxPool of output rows [b, e) (units (n, oh)) of j with pool.c's scalar kernel, float64 or float32 (for
 * callers without a SIMD table). */
void tfc_max_pool_rows_scalar(bool dbl, const pool_job *j, int64_t b, int64_t e);

/* float32 kernels; each is a tfc_range_fn over units of a pool_job. */
typedef struct tfc_pool_simd {
    const char *name; /* NULL: not built for this target */
    /* MaxPool / AvgPool: units are output rows (n, oh) */
    tfc_range_fn max_fwd, avg_fwd;
    /* MaxPoolGrad when windows do not overlap (stride >= window in both dimensions): units are output rows
     * (n, oh); each writes every dx element of its input rows exactly once (dy at the argmax, else 0), and
     * the rows below its windows that no window covers, so dx needs no zero fill first. */
    tfc_range_fn max_grad_disjoint;
    /* MaxPoolGrad with overlapping windows: units are (n, channel block of j->cb channels, j->nb blocks per
     * image), each zeroes its part of dx and accumulates dy at the argmaxes in (oh, ow) order. */
    tfc_range_fn max_grad_blocks;
    /* AvgPoolGrad: units are input rows (n, ih); each gathers dy / count from every window covering it */
    tfc_range_fn avg_grad;
    /* AvgPoolGrad when windows do not overlap: as max_grad_disjoint, every cell of a window gets dy / count */
    tfc_range_fn avg_grad_disjoint;
    /* _TfcMaxPoolReluBiasGrad's disjoint windows (fused_pool.c): out = MaxPoolGrad's dx times (x > 0 ? 1 : 0)
     * (ReluGrad's factor, x the ReLU's output the pool read) on the input rows of window row (n, oh), every
     * column; nothing else is written (rows no window covers are the caller's). */
    void (*max_relu_band)(const pool_job *j, int64_t n, int64_t oh);
} tfc_pool_simd;

/* The table for the running CPU (NULL: run the scalar kernels). */
const tfc_pool_simd *tfc_pool_simd_get(void);
/* For tests: uses table `name` ("avx512", "avx2", "baseline" or "generic"); NULL restores the automatic
 * choice. False when that table is not built or the CPU lacks its instructions. */
bool tfc_pool_simd_force(const char *name);

extern const tfc_pool_simd tfc_pool_simd_base;
extern const tfc_pool_simd tfc_pool_simd_avx2;   /* name NULL where not built */
extern const tfc_pool_simd tfc_pool_simd_avx512; /* name NULL where not built */

#endif
