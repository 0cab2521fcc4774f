/* Internal: tfc's own float32 GEMM (gemm.c, gemm_kern.inc).
 *
 * GotoBLAS/BLIS structure: B is packed into k x NR column panels, A into MR-row panels, blocked so that a
 * B micro-panel sits in L1 and an A block in L2, and an MR x NR register-blocked micro-kernel accumulates
 * with FMA. The kernels are compiled for AVX-512 (12x32 / 12x16 tiles), AVX2+FMA (6x16 / 12x8) and the
 * baseline ISA (6x8 with GCC vector extensions), and the best one the CPU supports is picked at run time.
 * Work is split across tfc's thread pool (never OpenBLAS's threads): by rows of C, by columns, or, for
 * small outputs with a long inner dimension (filter gradients), by k into partial sums added at the end.
 * Operands are read in place instead of packed where that measured faster (see serial() in
 * gemm_kern.inc). The same kernels, addressing A through a pointer per row (or per k step), compute
 * convolutions straight from the input image (tfc_sgemm_conv, below). */
#ifndef TFC_KERNELS_CPU_GEMM_H
#define TFC_KERNELS_CPU_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernels/cpu/epilogue.h"
#include "tfc/platform.h"

/* C[m, n] = alpha * op(A)[m, k] op(B)[k, n] + beta * C, all row-major; op(X) = X^T when trans_x.
 * A is [m, k] (lda >= k) or, transposed, [k, m] (lda >= m); B is [k, n] (ldb >= n) or [n, k] (ldb >= k);
 * ldc >= n. beta == 0 overwrites C without reading it (NaN in C does not propagate), as BLAS does. Runs on
 * `pool` (NULL: the calling thread); from inside a pool worker it runs on that thread. Never fails: when
 * its scratch cannot be allocated it computes through cblas_sgemm (or, for dimensions beyond int, a plain
 * loop). */
void tfc_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc, tfc_threadpool *pool);

/* C[m, n] = act(op(A) op(B) + bias) for a fused op (alpha 1, beta 0): tfc_sgemm with the epilogue `ep`
 * (bias: n floats, or NULL) applied as each output tile is stored (see epilogue.h). ep NULL: tfc_sgemm. */
void tfc_sgemm_ep(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float *c, int64_t ldc, const tfc_epilogue *ep, tfc_threadpool *pool);

/* Name of the micro-kernel set in use: "avx512", "avx2", "baseline" or "blas" (TFC_GEMM=blas routes every
 * product to cblas_sgemm; TFC_GEMM=avx2|baseline caps the ISA, for tests and comparisons). */
const char *tfc_sgemm_isa(void);
/* Uses the named kernel set from now on (NULL: the automatic choice again). False when this CPU or build
 * lacks it. For tests and benchmarks; not thread-safe against running products. */
bool tfc_sgemm_force_isa(const char *name);

/* ---- implicit-GEMM convolution ----
 * The GEMM of a convolution without its im2col matrix: output pixel q = (n, oh, ow) is a row of A whose
 * k entries are `kh` segments of `kwc` contiguous floats of the input (one per filter row: kw * c values,
 * which needs dilation 1 along the width), so the micro-kernel reads them from the input in place:
 *   y[q, 0:cout] = sum_{s < kh} sum_{p < kwc} x[base(q) + s * seg + p] * f[s * kwc + p, 0:cout]
 *   base(q) = ((n * hp + oh * sh) * wp + ow * sw) * c
 * x is [n, hp, wp, c] with any padding already in it, f is [kh * kwc, cout] (the filter, row-major), y is
 * [n * oh * ow, cout]. Forward Conv2D maps onto this directly; Conv2DBackpropInput with stride 1 too, on
 * the padded out_backprop with the flipped, transposed filter. */
typedef struct tfc_gemm_conv {
    const float *x;
    int64_t hp, wp, c, sh, sw; /* input dims (padding included), strides */
    int64_t n, oh, ow;         /* output pixels */
    int64_t kh, kwc, seg;      /* segments per pixel, floats per segment, input floats between segments */
    const float *f;
    int64_t cout;
    float *y;
    /* f is instead the filter of the convolution whose input gradient this is, [kh, kw, cout, c]: the one used
     * is it flipped in both spatial dims with its channel dims swapped (kwc = kw * c) */
    bool flip;
    /* applied to y as its tiles are stored (bias: cout floats); NULL: none. Forward convolutions only. */
    const tfc_epilogue *ep;
} tfc_gemm_conv;

/* Computes the convolution above on `pool`. False, with nothing written, when tfc_sgemm runs on cblas
 * (TFC_GEMM=blas) or its scratch (the packed filter) cannot be allocated: the caller then uses im2col. */
bool tfc_sgemm_conv(const tfc_gemm_conv *cv, tfc_threadpool *pool);

/* The filter gradient of the same convolution: df[s * kwc + p, 0:cout] = sum_q x[base(q) + s * seg + p] *
 * dy[q, 0:cout] over every output pixel q (cv->f and cv->y unused). Tiles of rows may read a few floats
 * past a segment's end: x must be readable for tfc_sgemm_conv_reach(cv) floats. df is [kh * kwc, cout],
 * overwritten. False as tfc_sgemm_conv. */
bool tfc_sgemm_conv_bwd_filter(const tfc_gemm_conv *cv, const float *dy, float *df, tfc_threadpool *pool);
size_t tfc_sgemm_conv_reach(const tfc_gemm_conv *cv);

/* ---- between gemm.c and the per-ISA files ---- */
typedef struct tfc_gemm_args {
    bool ta, tb;
    int64_t m, n, k;
    float alpha, beta;
    const float *a, *b;
    float *c;
    int64_t lda, ldb, ldc;
    /* B already packed by pack_b_panels (shared by the units of a split product): panel j (columns
     * j * NR...) of this product's B at bp + j * bp_stride, row p of it at + p * NR. NULL: serial packs. */
    const float *bp;
    int64_t bp_stride;
    /* the epilogue of a fused op (NULL: none), applied with the last k block; column j of this product is
     * column ep_col + j of the epilogue's bias */
    const tfc_epilogue *ep;
    int64_t ep_col;
    /* untransposed A whose rows may be read up to the next multiple of MR past m (readable memory, any
     * values: those rows' products are computed and dropped): serial reads the last rows in place instead
     * of packing them (a Winograd block's V, followed by more scratch) */
    bool a_over;
} tfc_gemm_args;

typedef struct tfc_gemm_isa {
    const char *name; /* NULL where this ISA's file was not built */
    int nr_max;       /* widest micro-tile (columns), the unit of column splits */
    int mr;           /* rows of the micro-tile, the unit of row splits */
    /* floats of scratch (64-byte aligned) that serial() needs for a problem of this size */
    size_t (*ws_floats)(const tfc_gemm_args *g);
    /* the whole product on the calling thread */
    void (*serial)(const tfc_gemm_args *g, float *ws);
    /* B of g (all k) in panels of the NR serial() uses for g->n: panels [j0, j1) of bp_nr(g) columns each,
     * panel j at out + j * k * bp_nr(g) */
    int (*bp_nr)(const tfc_gemm_args *g);
    void (*pack_b_panels)(const tfc_gemm_args *g, float *out, int64_t j0, int64_t j1);
    /* implicit-GEMM convolution: tiles of conv_mr(cv) output pixels; the filter packed by conv_pack into
     * conv_pack_floats(cv) floats; conv_tiles computes tiles [t0, t1) */
    int (*conv_mr)(const tfc_gemm_conv *cv);
    size_t (*conv_pack_floats)(const tfc_gemm_conv *cv);
    void (*conv_pack)(const tfc_gemm_conv *cv, float *fp);
    void (*conv_tiles)(const tfc_gemm_conv *cv, const float *fp, int64_t t0, int64_t t1);
    /* filter gradient over pixels [p0, p1) (ap: each pixel's input row pointer, ebuf: 1024 * nr_max floats) */
    void (*conv_bwd_filter)(const tfc_gemm_conv *cv, const float *const *ap, const float *dy, int64_t p0, int64_t p1,
                            float *df, bool accumulate, float *ebuf);
} tfc_gemm_isa;

extern const tfc_gemm_isa tfc_gemm_avx512, tfc_gemm_avx2, tfc_gemm_base;

/* The kernel set tfc_sgemm uses now, for callers that run many small products on their own threads
 * (Winograd convolution: isa->serial with scratch they allocate once); NULL when products go to cblas
 * (TFC_GEMM=blas). */
const tfc_gemm_isa *tfc_sgemm_kernels(void);

#endif
