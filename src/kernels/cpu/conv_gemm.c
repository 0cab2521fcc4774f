/* GEMM-based Conv2D and its backprops on NHWC data: im2col + GEMM, instantiated for float (tfc's own
 * GEMM on the op's pool, gemm.h) and double (OpenBLAS) from conv_gemm_tmpl.h. */
#include <cblas.h>
#include <limits.h>
#include <string.h>

#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/gemm.h"

/* C[m, n] = alpha op(A) op(B) + beta C, row-major. */
static void gemm_f32(tfc_threadpool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                     int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
    tfc_sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, pool);
}

static void gemm_f64(tfc_threadpool *pool, bool ta, bool tb, int64_t m, int64_t n, int64_t k, double alpha,
                     const double *a, int64_t lda, const double *b, int64_t ldb, double beta, double *c, int64_t ldc) {
    (void)pool;
    cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha,
                a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}

#define T float
#define SFX f32
#define GEMM gemm_f32
#include "kernels/cpu/conv_gemm_tmpl.h"
#undef T
#undef SFX
#undef GEMM

#define T double
#define SFX f64
#define GEMM gemm_f64
#include "kernels/cpu/conv_gemm_tmpl.h"
#undef T
#undef SFX
#undef GEMM
