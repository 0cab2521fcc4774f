/* tfc_sgemm: choice of kernels, split of the work across the pool, scratch (see gemm.h). */
#include <cblas.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu/gemm.h"
#include "kernels/cpu/gemv.h"

/* ---- which kernels ---- */
static const tfc_gemm_isa blas_isa = {.name = "blas"}; /* every product through cblas_sgemm */

static bool isa_usable(const tfc_gemm_isa *t) {
    if (t == &blas_isa) return true;
    if (!t->name) return false;
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
    if (t == &tfc_gemm_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
    if (t == &tfc_gemm_avx2) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
    return true;
}

static const tfc_gemm_isa *isa_named(const char *name) {
    if (!strcmp(name, "blas")) return &blas_isa;
    if (!strcmp(name, "avx512")) return &tfc_gemm_avx512;
    if (!strcmp(name, "avx2")) return &tfc_gemm_avx2;
    if (!strcmp(name, "baseline")) return &tfc_gemm_base;
    return NULL;
}

/* The best kernels for this CPU, at most the level TFC_GEMM names. */
static const tfc_gemm_isa *choose_isa(void) {
    const char *env = getenv("TFC_GEMM");
    const tfc_gemm_isa *order[] = {&tfc_gemm_avx512, &tfc_gemm_avx2, &tfc_gemm_base, &blas_isa};
    const tfc_gemm_isa *cap = env ? isa_named(env) : NULL;
    int i = 0;
    if (cap)
        while (order[i] != cap) i++;
    for (; i < 4; i++)
        if (isa_usable(order[i])) return order[i];
    return &blas_isa;
}

static const tfc_gemm_isa *_Atomic chosen_isa;

static const tfc_gemm_isa *isa_get(void) {
    const tfc_gemm_isa *t = atomic_load(&chosen_isa);
    if (!t) {
        t = choose_isa();
        atomic_store(&chosen_isa, t);
    }
    return t;
}

const char *tfc_sgemm_isa(void) { return isa_get()->name; }

const tfc_gemm_isa *tfc_sgemm_kernels(void) {
    const tfc_gemm_isa *t = isa_get();
    return t == &blas_isa ? NULL : t;
}

bool tfc_sgemm_force_isa(const char *name) {
    if (!name) {
        atomic_store(&chosen_isa, choose_isa());
        return true;
    }
    const tfc_gemm_isa *t = isa_named(name);
    if (!t || !isa_usable(t)) return false;
    atomic_store(&chosen_isa, t);
    return true;
}

/* ---- fallbacks ---- */
static void scale_c(int64_t m, int64_t n, float beta, float *c, int64_t ldc) {
    for (int64_t i = 0; i < m; i++) {
        float *r = c + i * ldc;
        if (beta == 0.0f) memset(r, 0, (size_t)n * sizeof(float));
        else if (beta != 1.0f)
            for (int64_t j = 0; j < n; j++) r[j] *= beta;
    }
}

static void blas_gemm(const tfc_gemm_args *g) {
    if (g->m <= INT_MAX && g->n <= INT_MAX && g->k <= INT_MAX && g->lda <= INT_MAX && g->ldb <= INT_MAX &&
        g->ldc <= INT_MAX) {
        cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans, (int)g->m,
                    (int)g->n, (int)g->k, g->alpha, g->a, (int)g->lda, g->b, (int)g->ldb, g->beta, g->c, (int)g->ldc);
        return;
    }
    for (int64_t i = 0; i < g->m; i++) /* beyond BLAS's int: a plain loop, float64 accumulation */
        for (int64_t j = 0; j < g->n; j++) {
            double s = 0;
            for (int64_t p = 0; p < g->k; p++)
                s += (double)(g->ta ? g->a[p * g->lda + i] : g->a[i * g->lda + p]) *
                     (double)(g->tb ? g->b[j * g->ldb + p] : g->b[p * g->ldb + j]);
            float *cp = g->c + i * g->ldc + j;
            *cp = g->beta == 0.0f ? (float)(g->alpha * s) : (float)(g->alpha * s + g->beta * *cp);
        }
}

/* ---- splitting the work ----
 * A unit is a block of rows x columns x k range of the product, computed by isa->serial with its own
 * scratch (a slot: at most one per running thread). Units of the k range > 0 write alpha * partial product
 * into private buffers that are added to C afterwards (unit 0 of each block applies beta). */
typedef struct {
    const tfc_gemm_isa *isa;
    tfc_gemm_args g;
    int64_t um, un, uk;       /* units along m, n, k */
    int64_t mstep, nstep, kstep;
    float *ws;                /* n_slots scratch areas of slot_floats */
    size_t slot_floats;
    _Atomic int *slot_busy;
    int n_slots;
    float *partial;           /* (uk - 1) buffers of m x n */
} gemm_job;

static int take_slot(gemm_job *j) {
    for (;;)
        for (int s = 0; s < j->n_slots; s++) {
            int expect = 0;
            if (atomic_compare_exchange_strong(&j->slot_busy[s], &expect, 1)) return s;
        }
}

/* The sub-problem of unit u; false when it is empty. */
static bool unit_args(const gemm_job *j, int64_t u, tfc_gemm_args *s, int64_t *ku) {
    const tfc_gemm_args *g = &j->g;
    int64_t iu = u / (j->un * j->uk), ju = u / j->uk % j->un;
    *ku = u % j->uk;
    int64_t m0 = iu * j->mstep, n0 = ju * j->nstep, k0 = *ku * j->kstep;
    if (m0 >= g->m || n0 >= g->n || k0 >= g->k) return false;
    *s = *g;
    s->m = g->m - m0 < j->mstep ? g->m - m0 : j->mstep;
    s->n = g->n - n0 < j->nstep ? g->n - n0 : j->nstep;
    s->k = g->k - k0 < j->kstep ? g->k - k0 : j->kstep;
    s->a = g->ta ? g->a + k0 * g->lda + m0 : g->a + m0 * g->lda + k0;
    s->b = g->tb ? g->b + n0 * g->ldb + k0 : g->b + k0 * g->ldb + n0;
    if (g->bp) s->bp = g->bp + k0 * j->isa->bp_nr(g); /* only with un == 1: n0 == 0 */
    s->ep_col = g->ep_col + n0;
    if (j->uk > 1) s->ep = NULL; /* applied once the partial sums are added (reduce_rows) */
    if (*ku == 0) {
        s->c = g->c + m0 * g->ldc + n0;
    } else {
        s->c = j->partial + (*ku - 1) * g->m * g->n + m0 * g->n + n0;
        s->ldc = g->n;
        s->beta = 0.0f;
    }
    return true;
}

static void unit_range(void *arg, int64_t b, int64_t e) {
    gemm_job *j = arg;
    int slot = take_slot(j);
    float *ws = j->ws + (size_t)slot * j->slot_floats;
    for (int64_t u = b; u < e; u++) {
        tfc_gemm_args s;
        int64_t ku;
        if (unit_args(j, u, &s, &ku)) j->isa->serial(&s, ws);
    }
    atomic_store(&j->slot_busy[slot], 0);
}

static void pack_b_range(void *arg, int64_t b, int64_t e) {
    const gemm_job *j = arg;
    j->isa->pack_b_panels(&j->g, (float *)j->g.bp, b, e);
}

static void reduce_rows(void *arg, int64_t b, int64_t e) {
    const gemm_job *j = arg;
    const int64_t m = j->g.m, n = j->g.n;
    for (int64_t i = b; i < e; i++) {
        float *restrict cr = j->g.c + i * j->g.ldc;
        for (int64_t u = 0; u < j->uk - 1; u++) {
            const float *restrict pr = j->partial + u * m * n + i * n;
            for (int64_t q = 0; q < n; q++) cr[q] += pr[q];
        }
        if (j->g.ep) tfc_epilogue_f32(j->g.ep, cr, 1, n, j->g.ldc, j->g.ep_col);
    }
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t round_up_i64(int64_t a, int64_t b) { return ceil_div(a, b) * b; }
static int64_t clamp64(int64_t x, int64_t lo, int64_t hi) { return x < lo ? lo : x > hi ? hi : x; }

/* Units for T threads. A product with a small output and a long k (a filter gradient: [K, Cout] summed
 * over every pixel) is split along k, into partial outputs of at most 4 MB each; others by rows (sharing
 * one packed B), then by columns. Up to 8 units per thread (rows: 72 of a 1024-row product, 0.7 ms of work
 * each) let a thread that gets more of the shared cores take more of the work: a thread that joins late (a
 * woken worker on a loaded machine: tens of microseconds to milliseconds) leaves at most one small unit of
 * imbalance at the end. Units along m share the packed B and read A in place, so more of them cost only
 * their tails (process CPU time of the 2-thread 1024-square product within 1-2% of 1 thread's). */
static void plan(gemm_job *j, int T) {
    const tfc_gemm_args *g = &j->g;
    const int64_t mr = j->isa->mr, nr = j->isa->nr_max;
    j->um = j->un = j->uk = 1;
    if (T > 1) {
        const int64_t mp = ceil_div(g->m, mr), np = ceil_div(g->n, nr);
        if (g->k >= 4 * (g->m > g->n ? g->m : g->n) && g->k >= 512 && g->m * g->n <= ((int64_t)1 << 20)) {
            j->uk = clamp64(g->k / 256, 1, 2 * T);
        } else if (mp >= 2 * T) {
            j->um = clamp64(mp / 4, T, 8 * T);
        } else {
            j->um = clamp64(mp, 1, T);
            j->un = clamp64(ceil_div(2 * T, j->um), 1, np);
        }
    }
    j->mstep = round_up_i64(ceil_div(g->m, j->um), mr);
    j->nstep = round_up_i64(ceil_div(g->n, j->un), nr);
    j->kstep = ceil_div(g->k, j->uk);
    j->um = ceil_div(g->m, j->mstep);
    j->un = ceil_div(g->n, j->nstep);
    j->uk = ceil_div(g->k, j->kstep);
}

/* Below about this many multiply-adds (15-20 microseconds on one core) waking the pool costs more than it saves. */
#define GEMM_PARALLEL_MIN_MACS 2097152.0

static void sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
                  int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc, const tfc_epilogue *ep,
                  tfc_threadpool *pool) {
    if (m <= 0 || n <= 0) return;
    if (k <= 0 || alpha == 0.0f) {
        scale_c(m, n, beta, c, ldc);
        if (ep) tfc_epilogue_f32(ep, c, m, n, ldc, 0);
        return;
    }
    const tfc_gemm_args g = {trans_a, trans_b, m, n, k, alpha, beta, a, b, c, lda, ldb, ldc, NULL, 0, ep, 0, false};
    const tfc_gemm_isa *isa = isa_get();
    if (isa == &blas_isa) {
        blas_gemm(&g);
        if (ep) tfc_epilogue_f32(ep, c, m, n, ldc, 0);
        return;
    }
    const double macs = (double)m * (double)n * (double)k;
    if (m == 1 && macs < GEMM_PARALLEL_MIN_MACS) { /* one row on one thread: B read in place (gemv.h) */
        tfc_sgemv_row(trans_b, n, k, alpha, a, trans_a ? lda : 1, b, ldb, beta, c, ep);
        return;
    }
    gemm_job j = {.isa = isa, .g = g};
    int T = macs < GEMM_PARALLEL_MIN_MACS ? 1 : tfc_threadpool_size(pool);
    plan(&j, T);
    const int64_t units = j.um * j.un * j.uk;
    j.n_slots = units < T ? (int)units : T;
    tfc_gemm_args dims = g; /* the largest unit */
    dims.m = j.mstep < m ? j.mstep : m;
    dims.n = j.nstep < n ? j.nstep : n;
    dims.k = j.kstep < k ? j.kstep : k;
    j.slot_floats = (isa->ws_floats(&dims) + 15) / 16 * 16;
    const size_t part_floats = (size_t)((j.uk - 1) * m * n);
    /* Units along m or k would each pack all of B (as much copying as a 64-row unit's multiplies for a
     * 1024-square product): pack it once, in parallel, for all of them, unless B is read in place. */
    const bool share_b = units > 1 && j.un == 1 && (trans_b || ldb > 256);
    const int64_t bnr = isa->bp_nr(&g), bpanels = (n + bnr - 1) / bnr;
    const size_t bp_floats = share_b ? (size_t)(bpanels * bnr * k) : 0;
    const size_t ws_floats = (size_t)j.n_slots * j.slot_floats + (part_floats + 15) / 16 * 16 + bp_floats;
    char *buf = tfc_aligned_alloc(ws_floats * sizeof(float) + (size_t)j.n_slots * sizeof(_Atomic int));
    if (!buf) { /* no scratch: OpenBLAS manages its own */
        blas_gemm(&g);
        if (ep) tfc_epilogue_f32(ep, c, m, n, ldc, 0);
        return;
    }
    j.ws = (float *)buf;
    j.partial = j.ws + (size_t)j.n_slots * j.slot_floats;
    j.slot_busy = (_Atomic int *)(buf + ws_floats * sizeof(float));
    for (int s = 0; s < j.n_slots; s++) atomic_init(&j.slot_busy[s], 0);
    if (share_b) {
        j.g.bp = j.partial + (part_floats + 15) / 16 * 16;
        j.g.bp_stride = bnr * k;
        tfc_parallel_for(pool, bpanels, bnr * k, pack_b_range, &j);
    }
    if (units == 1) {
        isa->serial(&g, j.ws);
    } else {
        tfc_parallel_for(pool, units, (int64_t)(macs / (double)units), unit_range, &j);
        if (j.uk > 1) tfc_parallel_for(pool, m, n * (j.uk - 1), reduce_rows, &j);
    }
    tfc_aligned_free(buf);
}

void tfc_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a,
               int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc, tfc_threadpool *pool) {
    sgemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, NULL, pool);
}

void tfc_sgemm_ep(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                  const float *b, int64_t ldb, float *c, int64_t ldc, const tfc_epilogue *ep, tfc_threadpool *pool) {
    sgemm(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc, ep, pool);
}

/* ---- implicit-GEMM convolution ---- */
typedef struct {
    const tfc_gemm_isa *isa;
    const tfc_gemm_conv *cv;
    const float *fp;
} conv_job;

static void conv_range(void *arg, int64_t b, int64_t e) {
    const conv_job *j = arg;
    j->isa->conv_tiles(j->cv, j->fp, b, e);
}

bool tfc_sgemm_conv(const tfc_gemm_conv *cv, tfc_threadpool *pool) {
    const tfc_gemm_isa *isa = isa_get();
    if (isa == &blas_isa) return false;
    const int64_t P = cv->n * cv->oh * cv->ow, K = cv->kh * cv->kwc;
    if (P <= 0 || cv->cout <= 0) return true;
    if (K <= 0) {
        memset(cv->y, 0, (size_t)(P * cv->cout) * sizeof(float));
        if (cv->ep) tfc_epilogue_rows(pool, cv->ep, false, cv->y, P, cv->cout);
        return true;
    }
    float *fp = tfc_aligned_alloc(isa->conv_pack_floats(cv) * sizeof(float));
    if (!fp) return false;
    isa->conv_pack(cv, fp);
    conv_job j = {isa, cv, fp};
    const int64_t mr = isa->conv_mr(cv), tiles = (P + mr - 1) / mr;
    tfc_parallel_for(pool, tiles, mr * K * cv->cout / 8 + 1, conv_range, &j);
    tfc_aligned_free(fp);
    return true;
}

size_t tfc_sgemm_conv_reach(const tfc_gemm_conv *cv) {
    const tfc_gemm_isa *isa = isa_get();
    const int64_t mr = isa == &blas_isa ? 1 : isa->conv_mr(cv);
    if (cv->n <= 0 || cv->oh <= 0 || cv->ow <= 0) return 0;
    const int64_t last = (((cv->n - 1) * cv->hp + (cv->oh - 1) * cv->sh) * cv->wp + (cv->ow - 1) * cv->sw) * cv->c;
    return (size_t)(last + (cv->kh - 1) * cv->seg + round_up_i64(cv->kwc, mr));
}

typedef struct {
    const tfc_gemm_isa *isa;
    const tfc_gemm_conv *cv;
    const float *dy;
    float *df, *partial, *ebuf;
    const float **ap;
    int64_t units, P, K;
} bwd_filter_job;

static void bwd_filter_units(void *arg, int64_t b, int64_t e) {
    const bwd_filter_job *j = arg;
    const tfc_gemm_conv *cv = j->cv;
    for (int64_t u = b; u < e; u++) {
        const int64_t p0 = j->P * u / j->units, p1 = j->P * (u + 1) / j->units;
        int64_t n = p0 / (cv->oh * cv->ow), oh = p0 / cv->ow % cv->oh, ow = p0 % cv->ow;
        for (int64_t q = p0; q < p1; q++) {
            j->ap[q] = cv->x + ((n * cv->hp + oh * cv->sh) * cv->wp + ow * cv->sw) * cv->c;
            if (++ow == cv->ow) {
                ow = 0;
                if (++oh == cv->oh) oh = 0, n++;
            }
        }
        float *out = u ? j->partial + (u - 1) * j->K * cv->cout : j->df;
        j->isa->conv_bwd_filter(cv, j->ap, j->dy, p0, p1, out, false, j->ebuf + u * 1024 * j->isa->nr_max);
    }
}

static void bwd_filter_reduce(void *arg, int64_t b, int64_t e) {
    const bwd_filter_job *j = arg;
    const int64_t cout = j->cv->cout;
    for (int64_t r = b; r < e; r++) {
        float *restrict d = j->df + r * cout;
        for (int64_t u = 1; u < j->units; u++) {
            const float *restrict s = j->partial + ((u - 1) * j->K + r) * cout;
            for (int64_t q = 0; q < cout; q++) d[q] += s[q];
        }
    }
}

bool tfc_sgemm_conv_bwd_filter(const tfc_gemm_conv *cv, const float *dy, float *df, tfc_threadpool *pool) {
    const tfc_gemm_isa *isa = isa_get();
    if (isa == &blas_isa) return false;
    const int64_t P = cv->n * cv->oh * cv->ow, K = cv->kh * cv->kwc;
    if (K <= 0 || cv->cout <= 0) return true;
    if (P <= 0) {
        memset(df, 0, (size_t)(K * cv->cout) * sizeof(float));
        return true;
    }
    /* units: ranges of pixels, each summed into its own buffer, added at the end */
    const double macs = (double)P * (double)K * (double)cv->cout;
    const int T = macs < GEMM_PARALLEL_MIN_MACS ? 1 : tfc_threadpool_size(pool);
    const int64_t units = T == 1 ? 1 : clamp64(P / 256, 1, 2 * T);
    const size_t ptr_bytes = ((size_t)P * sizeof(float *) + 63) / 64 * 64;
    const size_t floats = (size_t)(units * 1024 * isa->nr_max) + (size_t)((units - 1) * K * cv->cout);
    char *buf = tfc_aligned_alloc(ptr_bytes + floats * sizeof(float));
    if (!buf) return false;
    bwd_filter_job j = {isa, cv, dy, df, NULL, NULL, (const float **)buf, units, P, K};
    j.ebuf = (float *)(buf + ptr_bytes);
    j.partial = j.ebuf + units * 1024 * isa->nr_max;
    tfc_parallel_for(pool, units, (int64_t)(macs / (double)units), bwd_filter_units, &j);
    if (units > 1) tfc_parallel_for(pool, K, cv->cout * (units - 1), bwd_filter_reduce, &j);
    tfc_aligned_free(buf);
    return true;
}
