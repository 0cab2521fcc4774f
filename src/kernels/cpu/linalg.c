/* MatMul and BatchMatMulV2 kernels. float goes to tfc's own GEMM (gemm.h: AVX-512/AVX2 kernels on tfc's
 * pool); bfloat16 to tfc_bgemm (gemm_bf16.h: vdpbf16ps with float accumulation) where the CPU has
 * AVX512_BF16; half, and bfloat16 elsewhere, are widened to float (F16C), multiplied the same way and
 * rounded back (float accumulation, as TensorFlow's half/bfloat16 products); double goes to OpenBLAS (cblas_dgemm); integer types use a row-times-matrix loop that wraps
 * on overflow as TensorFlow's integer products do.
 *
 * Threads: a batch of small products, or of at least 4 per thread, is split across tfc's pool with each
 * GEMM on its worker's thread; otherwise each product uses the whole pool (float) or OpenBLAS's threads,
 * limited to the op's pool size by tfc_blas_set_threads (double). */
#include <cblas.h>
#include <stdatomic.h>
#include <string.h>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemm_bf16.h"
#include "kernels/cpu/kernels.h"
#include "kernels/cpu/kstate.h"
#include "kernels/cpu/linalg_blas.h"

void tfc_blas_set_threads(const tfc_kernel_ctx *k) {
    static _Atomic int configured;
    int n = tfc_threadpool_size(k->pool);
    if (atomic_load(&configured) != n) {
        openblas_set_num_threads(n);
        atomic_store(&configured, n);
    }
}

typedef struct {
    tfc_dtype dt;     /* the element type the products run in: float, double, bfloat16 (float C) or an integer type */
    const void *a, *b;
    void *c;
    int64_t m, n, k;
    bool ta, tb;
    int64_t batch;                     /* output matrices */
    tfc_threadpool *pool;              /* float products: the pool each GEMM may use (NULL: its thread) */
    int brank;                         /* output batch dims, for broadcasting */
    int64_t bdims[TFC_MAX_RANK];
    int64_t a_bstride[TFC_MAX_RANK], b_bstride[TFC_MAX_RANK]; /* in matrices; 0 on broadcast dims */
} mm_job;

/* Matrix index of output batch `bi` in each operand. */
static void batch_offsets(const mm_job *j, int64_t bi, int64_t *ai, int64_t *bj) {
    int64_t x = 0, y = 0;
    for (int d = j->brank - 1; d >= 0; d--) {
        int64_t idx = bi % j->bdims[d];
        bi /= j->bdims[d];
        x += idx * j->a_bstride[d];
        y += idx * j->b_bstride[d];
    }
    *ai = x;
    *bj = y;
}

static void gemm_one(const mm_job *j, int64_t bi) {
    int64_t ai, bj, msz = j->m * j->k, nsz = j->k * j->n, csz = j->m * j->n;
    batch_offsets(j, bi, &ai, &bj);
    const size_t ces = j->dt == TFC_BFLOAT16 ? sizeof(float) : tfc_dtype_size(j->dt);
    if (j->k == 0) {
        memset((char *)j->c + bi * csz * (int64_t)ces, 0, (size_t)csz * ces);
        return;
    }
    const int64_t lda = j->ta ? j->m : j->k, ldb = j->tb ? j->k : j->n;
    if (j->dt == TFC_BFLOAT16) {
        tfc_bgemm(j->ta, j->tb, j->m, j->n, j->k, (const uint16_t *)j->a + ai * msz, lda, (const uint16_t *)j->b + bj * nsz,
                  ldb, (float *)j->c + bi * csz, j->n, false, j->pool);
        return;
    }
    if (j->dt == TFC_FLOAT) {
        tfc_sgemm(j->ta, j->tb, j->m, j->n, j->k, 1.0f, (const float *)j->a + ai * msz, lda, (const float *)j->b + bj * nsz,
                  ldb, 0.0f, (float *)j->c + bi * csz, j->n, j->pool);
        return;
    }
    cblas_dgemm(CblasRowMajor, j->ta ? CblasTrans : CblasNoTrans, j->tb ? CblasTrans : CblasNoTrans, (blasint)j->m,
                (blasint)j->n, (blasint)j->k, 1.0, (const double *)j->a + ai * msz, (blasint)lda,
                (const double *)j->b + bj * nsz, (blasint)ldb, 0.0, (double *)j->c + bi * csz, (blasint)j->n);
}

static void gemm_range(void *arg, int64_t b, int64_t e) {
    for (int64_t i = b; i < e; i++) gemm_one(arg, i);
}

/* Integer products: row i of C accumulates a(i,kk) * B[kk, :] over kk in unsigned arithmetic (wrapping),
 * reading B row-wise (a transposed B is read column-wise: slower but rare). Work items are (batch, row). */
#define INT_ROWS(T, U)                                                                                    \
    do {                                                                                                   \
        const T *A = j->a, *B = j->b;                                                                      \
        T *C = j->c;                                                                                       \
        U acc[256];                                                                                        \
        for (int64_t it = b; it < e; it++) {                                                               \
            int64_t bi = it / j->m, i = it % j->m, ai, bj;                                                 \
            batch_offsets(j, bi, &ai, &bj);                                                                \
            const T *a = A + ai * j->m * j->k, *bm = B + bj * j->k * j->n;                                 \
            T *c = C + (bi * j->m + i) * j->n;                                                             \
            for (int64_t j0 = 0; j0 < j->n; j0 += 256) {                                                   \
                int64_t nl = j->n - j0 < 256 ? j->n - j0 : 256;                                            \
                for (int64_t q = 0; q < nl; q++) acc[q] = 0;                                               \
                for (int64_t kk = 0; kk < j->k; kk++) {                                                    \
                    U av = (U)(j->ta ? a[kk * j->m + i] : a[i * j->k + kk]);                               \
                    if (j->tb) {                                                                           \
                        for (int64_t q = 0; q < nl; q++) acc[q] += av * (U)bm[(j0 + q) * j->k + kk];       \
                    } else {                                                                               \
                        const T *brow = bm + kk * j->n + j0;                                               \
                        for (int64_t q = 0; q < nl; q++) acc[q] += av * (U)brow[q];                        \
                    }                                                                                      \
                }                                                                                          \
                for (int64_t q = 0; q < nl; q++) c[j0 + q] = (T)acc[q];                                    \
            }                                                                                              \
        }                                                                                                  \
    } while (0)

static void int_range(void *arg, int64_t b, int64_t e) {
    const mm_job *j = arg;
    switch (j->dt) {
    case TFC_INT32: INT_ROWS(int32_t, uint32_t); break;
    case TFC_INT64: INT_ROWS(int64_t, uint64_t); break;
    case TFC_INT16: INT_ROWS(int16_t, uint32_t); break;
    case TFC_INT8: INT_ROWS(int8_t, uint32_t); break;
    case TFC_UINT8: INT_ROWS(uint8_t, uint32_t); break;
    default: break;
    }
}

/* C[batch..., m, n] = op(A)[..., m, k] op(B)[..., k, n] with NumPy broadcasting of the batch dims. */
static bool matmul_run(tfc_kernel_ctx *k, bool ta, bool tb, tfc_status *st) {
    const tfc_tensor *x = k->in[0], *y = k->in[1];
    tfc_tensor *out = k->out[0];
    tfc_dtype dt = x->dtype;
    int xr = x->shape.rank, yr = y->shape.rank, orank = out->shape.rank;
    mm_job j = {.dt = dt, .a = x->data, .b = y->data, .c = out->data, .ta = ta, .tb = tb};
    j.m = out->shape.dims[orank - 2];
    j.n = out->shape.dims[orank - 1];
    j.k = x->shape.dims[ta ? xr - 2 : xr - 1];
    j.brank = orank - 2;
    j.batch = 1;
    /* before the strides: an empty output's batch dims may multiply past int64 ([0, 2^62, 2^63-1, ...]) */
    if (out->num_elements == 0) return true;
    int64_t sa = 1, sb = 1;
    for (int d = j.brank - 1; d >= 0; d--) {
        int ia = d - (j.brank - (xr - 2)), ib = d - (j.brank - (yr - 2));
        int64_t da = ia >= 0 ? x->shape.dims[ia] : 1, db = ib >= 0 ? y->shape.dims[ib] : 1;
        j.bdims[d] = out->shape.dims[d];
        j.a_bstride[d] = da == 1 ? 0 : sa;
        j.b_bstride[d] = db == 1 ? 0 : sb;
        sa *= da;
        sb *= db;
        j.batch *= j.bdims[d];
    }

    if (dt == TFC_FLOAT || dt == TFC_DOUBLE || dt == TFC_HALF || dt == TFC_BFLOAT16) {
        float *buf = NULL, *cf = NULL;
        if (dt == TFC_BFLOAT16 && tfc_bgemm_native()) { /* bfloat16 operands read as they are; C in float */
            size_t bytes = (size_t)out->num_elements * sizeof(float);
            if (!(buf = tfc_malloc(bytes))) return tfc_status_oom(st, k->op->name, bytes);
            j.c = cf = buf;
        } else if (dt == TFC_HALF || dt == TFC_BFLOAT16) {
            size_t bytes = (size_t)(x->num_elements + y->num_elements + out->num_elements) * sizeof(float);
            if (!(buf = tfc_malloc(bytes ? bytes : 1))) return tfc_status_oom(st, k->op->name, bytes);
            tfc_lowp_to_f32(dt == TFC_HALF, x->data, buf, x->num_elements);
            tfc_lowp_to_f32(dt == TFC_HALF, y->data, buf + x->num_elements, y->num_elements);
            cf = buf + x->num_elements + y->num_elements;
            j.a = buf;
            j.b = buf + x->num_elements;
            j.c = cf;
            j.dt = TFC_FLOAT;
        }
        double mnk = (double)j.m * (double)j.n * (double)j.k;
        if (j.dt == TFC_FLOAT || j.dt == TFC_BFLOAT16) {
            if (j.batch > 1 && (mnk <= 2097152.0 || j.batch >= 4 * tfc_threadpool_size(k->pool))) {
                tfc_parallel_for(k->pool, j.batch, (int64_t)mnk + 1000, gemm_range, &j);
            } else {
                j.pool = k->pool;
                gemm_range(&j, 0, j.batch);
            }
        } else if (j.batch > 1 && mnk <= TFC_BLAS_SINGLE_THREAD_MNK) {
            tfc_parallel_for(k->pool, j.batch, (int64_t)mnk + 1000, gemm_range, &j);
        } else {
            tfc_blas_set_threads(k);
            gemm_range(&j, 0, j.batch);
        }
        if (cf) {
            tfc_lowp_from_f32(dt == TFC_HALF, cf, out->data, out->num_elements);
            tfc_free(buf);
        }
        return true;
    }
    if (dt != TFC_INT32 && dt != TFC_INT64 && dt != TFC_INT16 && dt != TFC_INT8 && dt != TFC_UINT8)
        return tfc_kernel_unimplemented(k, dt, st);
    tfc_parallel_for(k->pool, j.batch * j.m, j.n * j.k + 1, int_range, &j);
    return true;
}

/* MatMul's transpose_a/b and BatchMatMulV2's adj_x/adj_y come parsed from the instance (kstate.h) */
static bool mat_mul(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_kstate tmp;
    const tfc_kstate *s = tfc_kstate_of(k, &tmp, st);
    return s && matmul_run(k, s->ta, s->tb, st);
}

const tfc_kernel_def tfc_cpu_kernel_defs_linalg[] = {
    TFC_KSTATE_DEF("MatMul", mat_mul),
    TFC_KSTATE_DEF("BatchMatMulV2", mat_mul),
    {.op = NULL},
};
