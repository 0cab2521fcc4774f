/* Internal: sharing OpenBLAS with tfc's thread pool. */
#ifndef TFC_KERNELS_CPU_LINALG_BLAS_H
#define TFC_KERNELS_CPU_LINALG_BLAS_H

#include "tfc/op.h"

/* Limits OpenBLAS's own threads to the kernel's pool size, so that a GEMM called from the op's thread uses
 * as many cores as tfc's other kernels and no more. OpenBLAS keeps one global setting: the last context to
 * call wins. Call before cblas_*gemm from the calling thread; GEMMs issued from inside tfc_parallel_for
 * workers must be small enough (m*n*k <= TFC_BLAS_SINGLE_THREAD_MNK) that OpenBLAS runs them on the calling
 * thread, else the two pools oversubscribe the cores. */
void tfc_blas_set_threads(const tfc_kernel_ctx *k);

/* OpenBLAS 0.3's threshold below which a GEMM runs single-threaded (65536 * GEMM_MULTITHREAD_THRESHOLD). */
#define TFC_BLAS_SINGLE_THREAD_MNK 262144.0

#endif
