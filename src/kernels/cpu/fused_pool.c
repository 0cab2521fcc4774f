/* Kernel of _TfcFusedConv2DMaxPool (src/ops/fused_pool_ops.h): MaxPool(act(Conv2D(x, f) + bias)).
 *
 * The convolution's output (the demo CNN's first layer at batch 256: 22 MB) would be written to memory and
 * read back by MaxPool, which then took 17% of the inference. Here the batch is cut into slices of a few
 * images whose convolution output fits in L2 (SLICE_BYTES), each computed by the forward convolution of
 * _FusedConv2D (conv_gemm.c: Winograd, implicit GEMM or im2col, with the bias and activation in its tile
 * stores) into a per-thread scratch, and pooled from there by MaxPool's own kernels (pool_simd.inc, or the
 * same comparisons in scalar code). Slices run in parallel, each convolution on its thread alone; a batch
 * with fewer slices than threads and much work per image runs the convolution over the whole batch on the
 * pool instead (into one scratch of the full size), then the pool; one with little work per image (a batch-1
 * inference) does the same with Winograd's tiles in one equal block per thread (the pool's workers spin
 * briefly between jobs, so a hand-off of a few microseconds of work pays), or else cuts each image's pool
 * rows into bands, one per thread (see bands() below). Only the convolution rows and columns some pool
 * window reads are computed. Every path computes what _FusedConv2D then MaxPool compute: the same
 * convolution per image, the same comparisons.
 *
 * Inference calls this op with the same weights again and again, and the Winograd convolution transforms
 * its filter on every call (10% of a batch-1 CNN inference; once per slice here). So the transform of
 * float32 filters on that path is kept by the kernel instance (device/device.h: a graph node's own, or the
 * one eager calls with the same attrs share) in its filter cache (filter_cache.h), keyed by the filter
 * buffer's uid and version, so a filter updated in place is transformed again on its next use. A call without
 * an instance (the plain form) transforms every time.
 *
 * Also the training pair's kernels (fused_pool_ops.h): _TfcFusedConv2DMaxPoolTrain (MaxPool of the given
 * convolution output) and _TfcMaxPoolReluBiasGrad (its gradient's single pass, below), a first layer's
 * _TfcFusedConv2DMaxPoolFilterGrad, and _TfcFusedConv2DMaxPoolArgmax (this op's slices, plus the windows'
 * routing bytes read from each slice's conv output while in cache) with its filter gradient. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/filter_cache.h"
#include "kernels/cpu/nn_internal.h"
#include "kernels/cpu/pool_internal.h"
#include "ops/fused_ops.h"
#include "ops/fused_pool_ops.h"

/* 64-byte vector types in inline helpers: no call ever passes one (GCC warns about the ABI regardless) */
#pragma GCC diagnostic ignored "-Wpsabi"

#define SLICE_BYTES (384 * 1024)

/* ---- kept Winograd filter transforms (filter_cache.h): the instance's state ---- */
static bool u_cache_create(tfc_kernel_ctx *k, void **state, tfc_status *st) {
    (void)k;
    if (!(*state = tfc_filter_cache_new())) return tfc_status_oom(st, "Winograd filter cache", 0);
    return true;
}

static void u_cache_destroy(void *state) { tfc_filter_cache_free(state); }

typedef struct {
    bool dbl;
    const tfc_conv_geom *cg, *pg;
    const void *x, *f;
    void *y;
    const tfc_epilogue *ep;
    const tfc_pool_simd *simd; /* float32 MaxPool tables, or NULL */
    const float *u;            /* the filter's kept Winograd transform (float32, no or ReLU activation), or NULL */
    int64_t full_oh, full_ow;  /* the convolution's output size before trimming (cg has the rows and columns the
                                * pool reads) */
    int64_t per;               /* images per slice */
    void *scratch;             /* n_slots slots of slot_elems */
    int64_t slot_elems;
    _Atomic int *busy;
    int n_slots;
    atomic_bool failed;        /* a convolution could not get its scratch */
    uint8_t *amax;             /* _TfcFusedConv2DMaxPoolArgmax: the windows' routing bytes (float32), or NULL */
} slice_job;

/* The routing bytes (conv_internal.h: TFC_POOL_ARGMAX_*) of 2x2 stride-2 windows without top/left padding over
 * the conv output src (pool geometry pg), pool rows [b, e) (units (n, oh)): the comparisons of
 * _TfcMaxPoolReluBiasGrad's routing (strict <, row-major, cells past the output (-inf) never picked), 16
 * channels at a time in GCC vector types (written as masks: the plain loop with ?: stayed scalar, 20% of a
 * training step), the rest in scalars. */
typedef float av __attribute__((vector_size(64)));
typedef float avu __attribute__((vector_size(64), aligned(4), may_alias));
typedef int avi __attribute__((vector_size(64)));
typedef unsigned char a8 __attribute__((vector_size(16)));
typedef unsigned char a8u __attribute__((vector_size(16), aligned(1), may_alias));

static inline __attribute__((always_inline)) av asel(avi m, av x, av y) { return (av)(((avi)x & m) | ((avi)y & ~m)); }
static inline __attribute__((always_inline)) avi asel_i(avi m, avi x, avi y) { return (x & m) | (y & ~m); }

#define ARGMAX_V(A, B, E, F, OUT)                                                                             \
    do {                                                                                                      \
        const av a_ = (A), b_ = (B), e_ = (E), f_ = (F);                                                      \
        const avi m1 = a_ < b_;                                                                               \
        av best = asel(m1, b_, a_);                                                                           \
        const avi m2 = best < e_;                                                                             \
        best = asel(m2, e_, best);                                                                            \
        const avi m3 = best < f_;                                                                             \
        best = asel(m3, f_, best);                                                                            \
        const avi one_ = (avi){0} + 1, two_ = one_ + one_, three_ = two_ + one_;                              \
        const avi cell = asel_i(m3, three_, asel_i(m2, two_, asel_i(m1, one_, (avi){0})));                     \
        const avi code_ = cell + asel_i(best > (av){0}, two_ + two_, (avi){0});                               \
        for (int k_ = 0; k_ < 16; k_++) (OUT)[k_] = (uint8_t)code_[k_];                                       \
    } while (0)

/* One window's routing byte in scalars (float32 tails, and the float64 reference) */
#define ARGMAX_S(name, T)                                                                                     \
    static inline __attribute__((always_inline)) uint8_t name(T a, T b, T e, T f) {                           \
        const bool m1 = a < b;                                                                                \
        T best = m1 ? b : a;                                                                                  \
        const bool m2 = best < e;                                                                             \
        best = m2 ? e : best;                                                                                 \
        const bool m3 = best < f;                                                                             \
        best = m3 ? f : best;                                                                                 \
        return (uint8_t)((m3 ? 3 : m2 ? 2 : m1 ? 1 : 0) | (best > 0 ? TFC_POOL_ARGMAX_POS : 0));              \
    }
ARGMAX_S(argmax_s, float)
ARGMAX_S(argmax_s_f64, double)
#undef ARGMAX_S

/* float64 (the op tests' reference): the same comparisons in scalars */
static void argmax_rows_f64(const tfc_conv_geom *pg, const double *src, uint8_t *dst, int64_t b, int64_t e) {
    const int64_t H = pg->in_h, W = pg->in_w, C = pg->in_c, OH = pg->out_h, OW = pg->out_w;
    const double ninf = -__builtin_inf();
    for (int64_t u = b; u < e; u++) {
        const int64_t n = u / OH, oh = u % OH, h0 = 2 * oh;
        const bool two = h0 + 1 < H;
        for (int64_t ow = 0; ow < OW; ow++) {
            const int64_t w0 = 2 * ow;
            const bool right = w0 + 1 < W;
            const double *pa = src + ((n * H + h0) * W + w0) * C, *pb = pa + C, *pe = pa + W * C, *pf = pe + C;
            uint8_t *out = dst + ((n * OH + oh) * OW + ow) * C;
            for (int64_t c = 0; c < C; c++)
                out[c] = argmax_s_f64(pa[c], right ? pb[c] : ninf, two ? pe[c] : ninf, two && right ? pf[c] : ninf);
        }
    }
}

TFC_SIMD_CLONES static void argmax_rows(const tfc_conv_geom *pg, const float *src, uint8_t *dst, int64_t b, int64_t e) {
    const int64_t H = pg->in_h, W = pg->in_w, C = pg->in_c, OH = pg->out_h, OW = pg->out_w, cv = C / 16 * 16;
    const float ninf = -__builtin_inff();
    const av vninf = (av){0} + ninf;
    for (int64_t u = b; u < e; u++) {
        const int64_t n = u / OH, oh = u % OH, h0 = 2 * oh;
        const bool two = h0 + 1 < H;
        for (int64_t ow = 0; ow < OW; ow++) {
            const int64_t w0 = 2 * ow;
            const bool right = w0 + 1 < W;
            const float *pa = src + ((n * H + h0) * W + w0) * C, *pb = pa + C, *pe = pa + W * C, *pf = pe + C;
            uint8_t *out = dst + ((n * OH + oh) * OW + ow) * C;
            int64_t c = 0;
            if (two && right) {
                for (; c < cv; c += 16)
                    ARGMAX_V(*(const avu *)(pa + c), *(const avu *)(pb + c), *(const avu *)(pe + c),
                             *(const avu *)(pf + c), out + c);
                for (; c < C; c++) out[c] = argmax_s(pa[c], pb[c], pe[c], pf[c]);
            } else {
                for (; c < cv; c += 16)
                    ARGMAX_V(*(const avu *)(pa + c), right ? (av)*(const avu *)(pb + c) : vninf,
                             two ? (av)*(const avu *)(pe + c) : vninf, two && right ? (av)*(const avu *)(pf + c) : vninf,
                             out + c);
                for (; c < C; c++)
                    out[c] = argmax_s(pa[c], right ? pb[c] : ninf, two ? pe[c] : ninf, two && right ? pf[c] : ninf);
            }
        }
    }
}

/* MaxPool of pool rows [b, e) (units (n, oh) of geometry pg) from conv output `src` into `dst`. */
static void pool_rows(const slice_job *j, const tfc_conv_geom *pg, const void *src, void *dst, int64_t b, int64_t e) {
    pool_job pj = {pg, src, NULL, dst, pg->in_c, 1};
    if (j->simd) j->simd->max_fwd(&pj, b, e);
    else tfc_max_pool_rows_scalar(j->dbl, &pj, b, e);
}

/* The convolution of g (one slice, the batch, or a band of rows of one image) into y: with the kept
 * transform where `wino` (the Winograd path takes the whole image's or slice's geometry, as conv_gemm.c
 * would choose it), else _FusedConv2D's forward. parts > 0: Winograd's tiles in that many equal blocks on
 * the pool (see tfc_conv2d_winograd_fwd_u_parts_f32). */
static bool conv_with(const slice_job *j, tfc_threadpool *pool, const tfc_conv_geom *g, bool wino, int parts,
                      const void *x, void *y, tfc_status *st) {
    if (wino &&
        tfc_conv2d_winograd_fwd_u_parts_f32(pool, g, x, j->u, j->ep->bias, j->ep->act == TFC_EPI_RELU, parts, y, st))
        return true;
    tfc_status_clear(st); /* (Winograd's only failure: no scratch; the GEMM paths then run) */
    return j->dbl ? tfc_conv2d_fwd_ep_f64(pool, g, x, j->f, y, j->ep, st)
                  : tfc_conv2d_fwd_ep_f32(pool, g, x, j->f, y, j->ep, st);
}

/* Whether the Winograd path runs for g (cg, a slice of it, or one image of it): as _FusedConv2D decides it
 * for the untrimmed output size, so that both compute the same tiles. */
static bool wino_for(const slice_job *j, const tfc_conv_geom *g) {
    tfc_conv_geom full = *g;
    full.out_h = j->full_oh;
    full.out_w = j->full_ow;
    return j->u && tfc_conv_winograd_fwd_ok(&full);
}

static bool conv_into(const slice_job *j, tfc_threadpool *pool, const tfc_conv_geom *g, const void *x, void *y,
                      tfc_status *st) {
    return conv_with(j, pool, g, wino_for(j, g), 0, x, y, st);
}

static int take_slot(slice_job *j) {
    for (;;)
        for (int s = 0; s < j->n_slots; s++) {
            int expect = 0;
            if (atomic_compare_exchange_strong(&j->busy[s], &expect, 1)) return s;
        }
}

static void slices(void *arg, int64_t b, int64_t e) {
    slice_job *j = arg;
    const int slot = take_slot(j);
    const size_t es = j->dbl ? sizeof(double) : sizeof(float);
    void *tmp = (char *)j->scratch + (size_t)slot * (size_t)j->slot_elems * es;
    const tfc_conv_geom *cg = j->cg, *pg = j->pg;
    for (int64_t s = b; s < e && !atomic_load(&j->failed); s++) {
        const int64_t n0 = s * j->per, nb = cg->batch - n0 < j->per ? cg->batch - n0 : j->per;
        tfc_conv_geom cs = *cg, ps = *pg;
        cs.batch = ps.batch = nb;
        tfc_status st = TFC_STATUS_INIT;
        const char *x = (const char *)j->x + (size_t)(n0 * cg->in_h * cg->in_w * cg->in_c) * es;
        char *y = (char *)j->y + (size_t)(n0 * pg->out_h * pg->out_w * pg->out_c) * es;
        if (!conv_into(j, NULL, &cs, x, tmp, &st)) {
            atomic_store(&j->failed, true);
            break;
        }
        pool_rows(j, &ps, tmp, y, 0, nb * ps.out_h);
        if (j->amax) {
            uint8_t *am = j->amax + n0 * pg->out_h * pg->out_w * pg->out_c;
            if (j->dbl) argmax_rows_f64(&ps, tmp, am, 0, nb * ps.out_h);
            else argmax_rows(&ps, tmp, am, 0, nb * ps.out_h);
        }
    }
    atomic_store(&j->busy[slot], 0);
}

typedef struct {
    const slice_job *j;
    const void *src;
} rows_job;

static void pool_range(void *arg, int64_t b, int64_t e) {
    const rows_job *r = arg;
    pool_rows(r->j, r->j->pg, r->src, r->j->y, b, e);
    if (r->j->amax) {
        if (r->j->dbl) argmax_rows_f64(r->j->pg, r->src, r->j->amax, b, e);
        else argmax_rows(r->j->pg, r->src, r->j->amax, b, e);
    }
}

/* ---- bands: fewer images than threads, little work each (a batch-1 inference) ----
 * Each image's pool rows are cut into nb bands, one unit (n, band) each; a unit computes the convolution rows
 * its pool rows read (conv rows [lo, hi), lo rounded down to even so that Winograd's 2x2 tiles are the whole
 * image's) into its thread's scratch and pools them, so the threads split one image's work with one hand-off
 * (the pool's workers spin briefly between jobs: a few microseconds of work each is worth splitting). Every
 * output reads the same convolution values as the whole image's: the same per-pixel sums (Winograd: the same
 * tiles, the same transforms), the same windows of the same pool kernels. */
typedef struct {
    slice_job *j;
    int64_t nb;  /* bands per image */
    bool wino;   /* the Winograd path, chosen for the whole image */
} band_job;

/* Conv rows [*lo, *hi) that pool rows [p0, p1) of geometry pg read (lo even). */
static void band_rows(const tfc_conv_geom *pg, int64_t p0, int64_t p1, int64_t *lo, int64_t *hi) {
    int64_t a = p0 * pg->stride_h - pg->pad_top, b = (p1 - 1) * pg->stride_h - pg->pad_top + pg->k_h;
    if (a < 0) a = 0;
    if (b > pg->in_h) b = pg->in_h;
    *lo = a / 2 * 2;
    *hi = b;
}

/* The geometry of conv rows [lo, hi) of one image of cg, reading input rows from *x_row on (non-negative
 * paddings, out_h = hi - lo). */
static tfc_conv_geom band_geom(const tfc_conv_geom *cg, int64_t lo, int64_t hi, int64_t *x_row) {
    tfc_conv_geom g = *cg;
    const int64_t start = lo * cg->stride_h - cg->pad_top, /* first input row of the band's windows */
        end = (hi - 1) * cg->stride_h - cg->pad_top + (cg->k_h - 1) * cg->dil_h + 1; /* past the last */
    g.batch = 1;
    g.out_h = hi - lo;
    *x_row = start > 0 ? start : 0;
    g.pad_top = start < 0 ? -start : 0;
    g.in_h = (end < cg->in_h ? end : cg->in_h) - *x_row;
    g.pad_bottom = end > cg->in_h ? end - cg->in_h : 0;
    return g;
}

static void bands(void *arg, int64_t b, int64_t e) {
    const band_job *bj = arg;
    slice_job *j = bj->j;
    const int slot = take_slot(j);
    const size_t es = j->dbl ? sizeof(double) : sizeof(float);
    void *tmp = (char *)j->scratch + (size_t)slot * (size_t)j->slot_elems * es;
    const tfc_conv_geom *cg = j->cg, *pg = j->pg;
    for (int64_t u = b; u < e && !atomic_load(&j->failed); u++) {
        /* the last band (the largest where the rows do not divide evenly) first: the caller, which starts at
         * once, takes it, and a worker that joins later has the smaller ones */
        const int64_t n = u / bj->nb, band = bj->nb - 1 - u % bj->nb;
        const int64_t p0 = pg->out_h * band / bj->nb, p1 = pg->out_h * (band + 1) / bj->nb;
        int64_t lo, hi, x_row;
        band_rows(pg, p0, p1, &lo, &hi);
        const tfc_conv_geom cs = band_geom(cg, lo, hi, &x_row);
        tfc_conv_geom ps = *pg; /* the pool over the band's conv rows: row lo is row 0 */
        ps.batch = 1;
        ps.in_h = hi - lo;
        ps.pad_top = pg->pad_top + lo;
        tfc_status st = TFC_STATUS_INIT;
        const char *x = (const char *)j->x + (size_t)((n * cg->in_h + x_row) * cg->in_w * cg->in_c) * es;
        char *y = (char *)j->y + (size_t)(n * pg->out_h * pg->out_w * pg->out_c) * es;
        if (!conv_with(j, NULL, &cs, bj->wino, 0, x, tmp, &st)) {
            atomic_store(&j->failed, true);
            break;
        }
        pool_rows(j, &ps, tmp, y, p0, p1);
    }
    atomic_store(&j->busy[slot], 0);
}

/* Bands per image for j's geometry on `threads` threads: enough units for the threads, at least BAND_MACS
 * multiply-adds and one pool row each; 1 (no bands) where that leaves fewer than 2 per image or a band
 * would read no conv row. */
#define BAND_MACS 65536.0
static int64_t band_count(const tfc_conv_geom *cg, const tfc_conv_geom *pg, int threads, double macs_per_image) {
    const int64_t N = cg->batch;
    if (N <= 0 || N >= threads) return 1;
    int64_t nb = (threads + N - 1) / N;
    if (nb > pg->out_h) nb = pg->out_h;
    if ((double)nb * BAND_MACS > macs_per_image) nb = (int64_t)(macs_per_image / BAND_MACS);
    if (nb < 2) return 1;
    for (int64_t band = 0; band < nb; band++) {
        int64_t lo, hi;
        band_rows(pg, pg->out_h * band / nb, pg->out_h * (band + 1) / nb, &lo, &hi);
        if (hi <= lo) return 1;
    }
    return nb;
}

static bool run_bands(tfc_kernel_ctx *k, slice_job *j, int64_t nb, double macs, size_t es, int threads,
                      tfc_status *st) {
    const tfc_conv_geom *cg = j->cg, *pg = j->pg;
    const int64_t units = cg->batch * nb;
    int64_t rows = 0; /* the most conv rows of a band */
    for (int64_t band = 0; band < nb; band++) {
        int64_t lo, hi;
        band_rows(pg, pg->out_h * band / nb, pg->out_h * (band + 1) / nb, &lo, &hi);
        if (hi - lo > rows) rows = hi - lo;
    }
    tfc_conv_geom one = *cg;
    one.batch = 1;
    band_job bj = {j, nb, wino_for(j, &one)};
    j->n_slots = units < threads ? (int)units : threads;
    j->slot_elems = (rows * cg->out_w * cg->out_c + 15) / 16 * 16;
    const size_t bytes = (size_t)j->n_slots * (size_t)j->slot_elems * es + (size_t)j->n_slots * sizeof(_Atomic int);
    char *buf = tfc_aligned_alloc(bytes);
    if (!buf) return tfc_status_oom(st, k->op->name, bytes);
    j->scratch = buf;
    j->busy = (_Atomic int *)(buf + (size_t)j->n_slots * (size_t)j->slot_elems * es);
    for (int s = 0; s < j->n_slots; s++) atomic_init(&j->busy[s], 0);
    /* (a cost that always splits: the bands were sized to be worth a hand-off) */
    tfc_parallel_for(k->pool, units, (int64_t)(macs / (double)units) + 50000, bands, &bj);
    tfc_aligned_free(buf);
    if (atomic_load(&j->failed)) return tfc_status_oom(st, k->op->name, (size_t)j->slot_elems * es);
    return true;
}

/* The convolution and pool of j (geometry, data and kept transform set): in slices on the threads, or the
 * whole batch's convolution on the pool, then the pool. */
static bool run_slices(tfc_kernel_ctx *k, slice_job *jp, int64_t per, int64_t n_slices, double macs, int64_t img,
                       size_t es, int threads, tfc_status *st) {
    slice_job *j = jp;
    const char *op = k->op->name;
    const tfc_conv_geom cg = *j->cg, pg = *j->pg; /* (copies for reading) */
    const int64_t N = cg.batch;
    /* little work per image: Winograd's tiles in equal blocks, one per thread (balanced where bands of pool
     * rows are not: the demo CNN's layer 2 has 5 tile rows), or else bands */
    const bool small = n_slices < threads && macs < 4194304.0;
    const int parts = small && wino_for(j, &cg) && macs >= (double)threads * BAND_MACS ? threads : 0;
    if (small && !parts && !j->amax) { /* (bands write no routing bytes) */
        const int64_t nb = band_count(&cg, &pg, threads, macs / (double)N);
        if (nb > 1) return run_bands(k, j, nb, macs, es, threads, st);
    }
    if (parts || (n_slices < threads && macs >= 4194304.0)) {
        /* too few images to keep the threads busy one slice each: the convolution over the whole batch on
         * the pool, then the pool */
        const size_t bytes = (size_t)(N * img) * es;
        void *tmp = tfc_aligned_alloc(bytes);
        if (!tmp) return tfc_status_oom(st, op, bytes);
        bool ok = conv_with(j, k->pool, &cg, wino_for(j, &cg), parts, j->x, tmp, st);
        if (ok) {
            rows_job r = {j, tmp};
            tfc_parallel_for(k->pool, N * pg.out_h, pg.out_w * pg.k_h * pg.k_w * pg.in_c + 1, pool_range, &r);
        }
        tfc_aligned_free(tmp);
        return ok;
    }
    j->per = per;
    j->n_slots = n_slices < threads ? (int)n_slices : threads;
    j->slot_elems = (per * img + 15) / 16 * 16;
    const size_t bytes = (size_t)j->n_slots * (size_t)j->slot_elems * es + (size_t)j->n_slots * sizeof(_Atomic int);
    char *buf = tfc_aligned_alloc(bytes);
    if (!buf) return tfc_status_oom(st, op, bytes);
    j->scratch = buf;
    j->busy = (_Atomic int *)(buf + (size_t)j->n_slots * (size_t)j->slot_elems * es);
    for (int s = 0; s < j->n_slots; s++) atomic_init(&j->busy[s], 0);
    tfc_parallel_for(k->pool, n_slices, (int64_t)(macs / (double)n_slices / 8) + 1, slices, j);
    tfc_aligned_free(buf);
    if (atomic_load(&j->failed)) return tfc_status_oom(st, op, (size_t)(per * img) * es);
    return true;
}

/* The conv and pool geometries of a fused conv+pool kernel and its pooled output (allocated here when a graph
 * trace left its shape unknown); false with st set on bad attrs or no memory. */
static bool conv_pool_out(tfc_kernel_ctx *k, tfc_conv_geom *cg, tfc_conv_geom *pg, tfc_status *st) {
    if (!tfc_conv_pool_geom(k->op->name, k->attrs, k->in[0]->shape.dims, k->in[1]->shape.dims, cg, pg, st))
        return false;
    if (k->out[0]) return true;
    int64_t od[4];
    tfc_conv_dims(false, pg->batch, pg->out_h, pg->out_w, pg->out_c, od);
    return tfc_kernel_alloc_output(k, 0, od, 4, st);
}

static bool conv_pool_body(tfc_kernel_ctx *k, bool argmax, tfc_status *st) {
    const char *op = k->op->name;
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(op, k->attrs, &fs, st)) return false;
    static const tfc_epi_act map[] = {[TFC_FUSED_LINEAR] = TFC_EPI_NONE, [TFC_FUSED_RELU] = TFC_EPI_RELU,
                                      [TFC_FUSED_RELU6] = TFC_EPI_RELU6, [TFC_FUSED_ELU] = TFC_EPI_ELU,
                                      [TFC_FUSED_LEAKY_RELU] = TFC_EPI_LEAKY_RELU};
    tfc_conv_geom cg, pg;
    if (!conv_pool_out(k, &cg, &pg, st)) return false;
    tfc_tensor *out = k->out[0];
    if (out->num_elements == 0) return true;
    const tfc_dtype dt = out->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE) return tfc_kernel_unimplemented(k, dt, st);
    const tfc_epilogue ep = {.bias = k->in[2]->data, .act = map[fs.act], .alpha = fs.alpha};
    const bool dbl = dt == TFC_DOUBLE;
    /* Only the convolution rows and columns that some pool window reads are computed: a VALID pool drops the
     * last ones of odd sizes (the demo CNN's 11x11 -> 5x5: 10x10, 25 Winograd tiles instead of 36). The
     * kernels take the output size from cg (the input and paddings unchanged) and compute each kept output
     * as before; the pool reads the trimmed layout. */
    const int64_t full_oh = cg.out_h, full_ow = cg.out_w;
    {
        const int64_t rows = (pg.out_h - 1) * pg.stride_h - pg.pad_top + pg.k_h,
                      cols = (pg.out_w - 1) * pg.stride_w - pg.pad_left + pg.k_w;
        if (rows > 0 && rows < cg.out_h) cg.out_h = pg.in_h = rows;
        if (cols > 0 && cols < cg.out_w) cg.out_w = pg.in_w = cols;
    }
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    if (argmax && !k->out[1]) return tfc_status_set(st, TFC_INTERNAL, "%s: 2 outputs expected", op);
    slice_job j = {.dbl = dbl, .cg = &cg, .pg = &pg, .x = k->in[0]->data, .f = k->in[1]->data, .y = out->data,
                   .ep = &ep, .simd = dbl ? NULL : tfc_pool_simd_get(), .full_oh = full_oh, .full_ow = full_ow,
                   .amax = argmax ? k->out[1]->data : NULL};
    atomic_init(&j.failed, false);
    /* images per slice: a conv output of about SLICE_BYTES, and at least one slice per thread */
    const int threads = tfc_threadpool_size(k->pool);
    const int64_t N = cg.batch, img = cg.out_h * cg.out_w * cg.out_c;
    int64_t per = (int64_t)(SLICE_BYTES / es) / (img > 0 ? img : 1);
    if (per < 1) per = 1;
    if (per * threads > N) per = (N + threads - 1) / threads;
    const int64_t n_slices = (N + per - 1) / per;
    const double macs = (double)N * (double)img * (double)(cg.k_h * cg.k_w * cg.k_c);
    tfc_conv_geom whole = cg, one; /* (untrimmed, as wino_for decides) */
    whole.out_h = full_oh;
    whole.out_w = full_ow;
    one = whole;
    one.batch = per;
    void *token = NULL;
    j.u = !dbl && (ep.act == TFC_EPI_NONE || ep.act == TFC_EPI_RELU) && !tfc_conv_im2col_forced() &&
                  (tfc_conv_winograd_fwd_ok(&one) || tfc_conv_winograd_fwd_ok(&whole))
              ? tfc_filter_cache_winograd(k->state, k->pool, k->in[1], cg.in_c, cg.out_c, &token)
              : NULL;
    const bool ok = run_slices(k, &j, per, n_slices, macs, img, es, threads, st);
    tfc_filter_cache_put(k->state, token);
    return ok;
}

static bool fused_conv2d_max_pool(tfc_kernel_ctx *k, tfc_status *st) { return conv_pool_body(k, false, st); }

/* ---- _TfcFusedConv2DMaxPoolArgmax: _TfcFusedConv2DMaxPool's computation, and the routing bytes of its windows
 * (read from the slice's conv output while in cache), for a training step that keeps them instead of the conv
 * output ---- */
static bool fused_conv2d_max_pool_argmax(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_conv_geom cg, pg;
    if (!conv_pool_out(k, &cg, &pg, st)) return false;
    if (!k->out[1]) {
        int64_t od[4];
        tfc_conv_dims(false, pg.batch, pg.out_h, pg.out_w, pg.out_c, od);
        if (!tfc_kernel_alloc_output(k, 1, od, 4, st)) return false;
    }
    return conv_pool_body(k, true, st);
}

/* ---- _TfcFusedConv2DMaxPoolTrain: MaxPool of conv_output (input 3; _FusedConv2D computed it) ---- */
static bool fused_conv2d_max_pool_train(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_conv_geom cg, pg;
    if (!conv_pool_out(k, &cg, &pg, st)) return false;
    tfc_tensor *out = k->out[0];
    if (out->num_elements == 0) return true;
    const tfc_dtype dt = out->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE) return tfc_kernel_unimplemented(k, dt, st);
    slice_job j = {.dbl = dt == TFC_DOUBLE, .pg = &pg, .y = out->data, .simd = dt == TFC_DOUBLE ? NULL : tfc_pool_simd_get()};
    rows_job r = {&j, k->in[3]->data};
    tfc_parallel_for(k->pool, pg.batch * pg.out_h, pg.out_w * pg.k_h * pg.k_w * pg.in_c + 1, pool_range, &r);
    return true;
}

/* ---- _TfcMaxPoolReluBiasGrad: dz = ReluGrad(MaxPoolGrad(y, pooled, dp), y), db = BiasAddGrad(dz) ----
 * y, dz: [N, H, W, C] (the pool's input), dp: [N, OH, OW, C]. The pixel rows (n, h, w) of y are cut into the
 * chunks _FusedBiasAddGrad uses (tfc_nn_reduce_chunks), one task each. float32 walks its chunk in pixel
 * order: where windows do not overlap (the CNN's 2x2 pools), a whole band of image rows under one pool row
 * at a time (the pooling SIMD table's max_relu_band: argmax, dp routed there, times the ReLU factor, each
 * dz written once; band_f32 without a table); elsewhere (overlapping windows, a band cut by the chunk's
 * ends) image-row segments gathered by route_row (every covering window in (oh, ow) order, each window's
 * first maximum in row-major order recomputed from y) and multiplied by the ReLU-gradient kernel
 * _FusedBiasAddGrad runs. The column sums of each RB_BLOCK pixels from the chunk's start (the blocks of
 * _FusedBiasAddGrad) are taken as soon as they are written, while in cache: float per block, double across
 * blocks, chunks then added in order. So dz and db equal MaxPoolGrad then _FusedBiasAddGrad bit for bit
 * (acc starts at +0 and adds dp at the argmax, +0 elsewhere: exact, acc is never -0, as MaxPoolGrad adds dy
 * to a zeroed dx), and the op reads y once and writes dz once instead of MaxPoolGrad writing a mostly-zero
 * dx that _FusedBiasAddGrad reads back with y. float64 (the op tests' reference) gathers blocks of RB_BLOCK
 * pixels with route_row and sums in double. */
#define RB_BLOCK 64 /* _FusedBiasAddGrad's block of rows */

typedef struct {
    const tfc_conv_geom *g; /* the pool's geometry: in_* y's dims, out_* dp's */
    const tfc_nn_simd *simd;
    const tfc_pool_simd *pool_simd; /* float32 MaxPool tables (their max_relu_band), or NULL: band_f32 */
    bool dbl;
    const void *y, *dp;
    void *dz;
    int64_t rows, rows_per_chunk; /* N * H * W pixel rows of C channels */
    double *partial;              /* [chunks][C] */
    int64_t acc_rows;             /* pixels of acc: max(W, RB_BLOCK) */
    void *scratch;                /* [chunks][(acc_rows + 1) * C] of T: acc, best */
    float *blk;                   /* [chunks][C] */
    int32_t *idx;                 /* [chunks][C] */
} relu_bias_job;

#define ROUTE_DEFINE(T, SFX)                                                                                     \
    /* acc[(w - wa) * C + c] = MaxPoolGrad's value at (n, h, w) for w in [wa, wb) */                             \
    static inline __attribute__((always_inline)) void route_row_##SFX(const relu_bias_job *j, int64_t n, int64_t h, int64_t wa, int64_t wb,     \
                                       T *restrict acc, T *restrict best, int32_t *restrict idx) {               \
        const tfc_conv_geom *g = j->g;                                                                           \
        const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;                       \
        const int64_t sh = g->stride_h, sw = g->stride_w;                                                        \
        const T *yn = (const T *)j->y + n * H * W * C, *dpn = (const T *)j->dp + n * OH * OW * C;               \
        memset(acc, 0, (size_t)((wb - wa) * C) * sizeof(T));                                                     \
        /* windows oh with oh*sh - pad_top <= h < oh*sh - pad_top + k_h, ow likewise over [wa, wb) */            \
        const int64_t lh = h + g->pad_top - g->k_h + 1, lw = wa + g->pad_left - g->k_w + 1;                      \
        const int64_t oh0 = lh <= 0 ? 0 : (lh + sh - 1) / sh, ow0 = lw <= 0 ? 0 : (lw + sw - 1) / sw;           \
        int64_t oh1 = (h + g->pad_top) / sh, ow1 = (wb - 1 + g->pad_left) / sw;                                  \
        if (oh1 > OH - 1) oh1 = OH - 1;                                                                          \
        if (ow1 > OW - 1) ow1 = OW - 1;                                                                          \
        for (int64_t oh = oh0; oh <= oh1; oh++) {                                                                \
            const int64_t hs = oh * sh - g->pad_top, h0 = hs < 0 ? 0 : hs, h1 = hs + g->k_h < H ? hs + g->k_h : H; \
            if (h < h0 || h >= h1) continue;                                                                     \
            for (int64_t ow = ow0; ow <= ow1; ow++) {                                                            \
                const int64_t ws = ow * sw - g->pad_left, w0 = ws < 0 ? 0 : ws,                                  \
                              w1 = ws + g->k_w < W ? ws + g->k_w : W;                                            \
                const int64_t ca = w0 > wa ? w0 : wa, cb = w1 < wb ? w1 : wb, nw = w1 - w0;                      \
                if (ca >= cb) continue;                                                                          \
                const T *first = yn + (h0 * W + w0) * C;                                                         \
                for (int64_t c = 0; c < C; c++) best[c] = first[c], idx[c] = 0;                                  \
                for (int64_t hh = h0; hh < h1; hh++)                                                             \
                    for (int64_t ww = hh == h0 ? w0 + 1 : w0; ww < w1; ww++) {                                   \
                        const T *restrict p = yn + (hh * W + ww) * C;                                            \
                        const int32_t t = (int32_t)((hh - h0) * nw + ww - w0);                                   \
                        for (int64_t c = 0; c < C; c++) {                                                        \
                            const T v = p[c];                                                                    \
                            const bool m = best[c] < v;                                                          \
                            best[c] = m ? v : best[c];                                                           \
                            idx[c] = m ? t : idx[c];                                                             \
                        }                                                                                        \
                    }                                                                                            \
                const T *restrict dpp = dpn + (oh * OW + ow) * C;                                                \
                const int64_t base = (h - h0) * nw - w0; /* window index of (h, ww) is base + ww */               \
                for (int64_t ww = ca; ww < cb; ww++) {                                                           \
                    T *restrict a = acc + (ww - wa) * C;                                                         \
                    const int32_t tw = (int32_t)(base + ww);                                                     \
                    for (int64_t c = 0; c < C; c++) a[c] += idx[c] == tw ? dpp[c] : (T)0;                        \
                }                                                                                                \
            }                                                                                                    \
        }                                                                                                        \
    }                                                                                                            \
                                                                                                                 \
    /* acc for pixel rows [r0, r1) (at most RB_BLOCK), image row by image row */                                  \
    static inline void route_block_##SFX(const relu_bias_job *j, int64_t r0, int64_t r1, T *acc, T *best,        \
                                         int32_t *idx) {                                                         \
        const int64_t W = j->g->in_w, HW = j->g->in_h * W;                                                       \
        for (int64_t r = r0; r < r1;) {                                                                          \
            const int64_t n = r / HW, h = r % HW / W, wa = r % W, wb = wa + (r1 - r) < W ? wa + (r1 - r) : W;    \
            route_row_##SFX(j, n, h, wa, wb, acc + (r - r0) * j->g->in_c, best, idx);                            \
            r += wb - wa;                                                                                        \
        }                                                                                                        \
    }

ROUTE_DEFINE(float, f32)
ROUTE_DEFINE(double, f64)

/* float32, windows that do not overlap (stride >= window in both dimensions): dz of the window at p (nh x nw
 * cells, rows ld floats apart, cells C apart) and its pooled gradient dpp. The argmax cell gets 0 + dp (as
 * MaxPoolGrad's 0 + dy, turning -0 into +0), the others +0, each times (y > 0 ? 1 : 0) as ReluGrad's kernel
 * multiplies: the bits MaxPoolGrad then _FusedBiasAddGrad write. */
static inline __attribute__((always_inline)) void win2x2_f32(const float *restrict p, const float *restrict dpp, float *restrict d, int64_t ld,
                              int64_t C) {
    for (int64_t c = 0; c < C; c++) {
        const float a = p[c], b = p[C + c], e = p[ld + c], f = p[ld + C + c];
        const bool m1 = a < b;
        float best = m1 ? b : a;
        const bool m2 = best < e;
        best = m2 ? e : best;
        const bool m3 = best < f;
        const float g = 0.0f + dpp[c];
        const float g3 = m3 ? g : 0.0f, g2 = !m3 && m2 ? g : 0.0f, g1 = !m3 && !m2 && m1 ? g : 0.0f,
                    g0 = !m3 && !m2 && !m1 ? g : 0.0f;
        d[c] = g0 * (a > 0 ? 1.0f : 0.0f);
        d[C + c] = g1 * (b > 0 ? 1.0f : 0.0f);
        d[ld + c] = g2 * (e > 0 ? 1.0f : 0.0f);
        d[ld + C + c] = g3 * (f > 0 ? 1.0f : 0.0f);
    }
}

static inline __attribute__((always_inline)) void win_any_f32(const float *restrict p, const float *restrict dpp, float *restrict d, int64_t nh,
                               int64_t nw, int64_t ld, int64_t C, float *restrict best, int32_t *restrict idx) {
    for (int64_t c = 0; c < C; c++) best[c] = p[c], idx[c] = 0;
    for (int64_t i = 0; i < nh; i++)
        for (int64_t w = i == 0; w < nw; w++) {
            const float *restrict q = p + i * ld + w * C;
            const int32_t t = (int32_t)(i * nw + w);
            for (int64_t c = 0; c < C; c++) {
                const bool m = best[c] < q[c];
                best[c] = m ? q[c] : best[c];
                idx[c] = m ? t : idx[c];
            }
        }
    for (int64_t i = 0; i < nh; i++)
        for (int64_t w = 0; w < nw; w++) {
            const float *restrict q = p + i * ld + w * C;
            float *restrict o = d + i * ld + w * C;
            const int32_t t = (int32_t)(i * nw + w);
            for (int64_t c = 0; c < C; c++) o[c] = (idx[c] == t ? 0.0f + dpp[c] : 0.0f) * (q[c] > 0 ? 1.0f : 0.0f);
        }
}

/* float32 disjoint windows: dz of image n's rows [h0, h1), the windows of pool row oh (all columns; columns no
 * window covers get +0, as MaxPoolGrad's 0 times the ReLU gradient). */
static inline __attribute__((always_inline)) void band_f32(const relu_bias_job *j, int64_t n, int64_t oh, int64_t h0, int64_t h1, float *best,
                            int32_t *idx) {
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OW = g->out_w, ld = W * C, nh = h1 - h0;
    const float *yr = (const float *)j->y + (n * H + h0) * ld, *dpr = (const float *)j->dp + (n * g->out_h + oh) * OW * C;
    float *dr = (float *)j->dz + (n * H + h0) * ld;
    int64_t prev = 0;
    for (int64_t ow = 0; ow < OW; ow++) {
        const int64_t ws = ow * g->stride_w - g->pad_left, w0 = ws < 0 ? 0 : ws, w1 = ws + g->k_w < W ? ws + g->k_w : W;
        for (int64_t i = 0; i < nh && w0 > prev; i++) memset(dr + i * ld + prev * C, 0, (size_t)((w0 - prev) * C) * sizeof(float));
        if (w1 <= w0) continue;
        prev = w1;
        if (nh == 2 && w1 - w0 == 2) win2x2_f32(yr + w0 * C, dpr + ow * C, dr + w0 * C, ld, C);
        else win_any_f32(yr + w0 * C, dpr + ow * C, dr + w0 * C, nh, w1 - w0, ld, C, best, idx);
    }
    for (int64_t i = 0; i < nh && W > prev; i++) memset(dr + i * ld + prev * C, 0, (size_t)((W - prev) * C) * sizeof(float));
}

/* float32 chunk [rb, re): whole bands of disjoint windows where they lie inside the chunk, else image-row
 * segments gathered by route_row and multiplied by the ReLU gradient (the kernel _FusedBiasAddGrad runs);
 * the column sums of each RB_BLOCK pixels (from rb, as _FusedBiasAddGrad's blocks) as soon as they are
 * written, while in cache. */
static inline __attribute__((always_inline)) void chunk_f32(const relu_bias_job *j, int64_t rb, int64_t re, double *part, float *acc, float *best,
                             int32_t *idx, float *blk) {
    const tfc_conv_geom *g = j->g;
    const int64_t H = g->in_h, W = g->in_w, C = g->in_c, HW = H * W;
    const bool disjoint = g->stride_h >= g->k_h && g->stride_w >= g->k_w;
    float *dz = j->dz;
    int64_t r = rb, summed = rb;
    while (r < re) {
        const int64_t n = r / HW, h = r % HW / W, wa = r % W;
        const int64_t oh = (h + g->pad_top) / g->stride_h, hs = oh * g->stride_h - g->pad_top;
        const bool covered = !disjoint || (oh < g->out_h && h < hs + g->k_h);
        const int64_t h0 = hs < 0 ? 0 : hs, h1 = hs + g->k_h < H ? hs + g->k_h : H;
        if (disjoint && covered && wa == 0 && h == h0 && r + (h1 - h0) * W <= re) {
            if (j->pool_simd) {
                const pool_job pj = {g, j->y, j->dp, j->dz, C, 1};
                j->pool_simd->max_relu_band(&pj, n, oh);
            } else {
                band_f32(j, n, oh, h0, h1, best, idx);
            }
            r += (h1 - h0) * W;
        } else {
            const int64_t wb = wa + (re - r) < W ? wa + (re - r) : W;
            if (!covered) memset(dz + r * C, 0, (size_t)((wb - wa) * C) * sizeof(float));
            else {
                route_row_f32(j, n, h, wa, wb, acc, best, idx);
                j->simd->act_bwd(ACT_RELU, 0.2f, acc, (const float *)j->y + r * C, dz + r * C, (wb - wa) * C);
            }
            r += wb - wa;
        }
        for (; summed + RB_BLOCK <= r; summed += RB_BLOCK) {
            tfc_nn_block_col_sums(dz + summed * C, RB_BLOCK, C, blk);
            for (int64_t c = 0; c < C; c++) part[c] += (double)blk[c];
        }
    }
    if (summed < re) {
        tfc_nn_block_col_sums(dz + summed * C, re - summed, C, blk);
        for (int64_t c = 0; c < C; c++) part[c] += (double)blk[c];
    }
}

TFC_SIMD_CLONES static void relu_bias_chunks(void *arg, int64_t b, int64_t e) {
    const relu_bias_job *j = arg;
    const int64_t C = j->g->in_c;
    const size_t es = j->dbl ? sizeof(double) : sizeof(float);
    for (int64_t chunk = b; chunk < e; chunk++) {
        double *part = j->partial + chunk * C;
        char *scr = (char *)j->scratch + (size_t)(chunk * (j->acc_rows + 1) * C) * es;
        int32_t *idx = j->idx + chunk * C;
        float *blk = j->blk + chunk * C;
        for (int64_t c = 0; c < C; c++) part[c] = 0;
        const int64_t rb = chunk * j->rows_per_chunk, re = rb + j->rows_per_chunk < j->rows ? rb + j->rows_per_chunk : j->rows;
        if (!j->dbl) {
            if (rb < re) chunk_f32(j, rb, re, part, (float *)scr, (float *)scr + j->acc_rows * C, idx, blk);
            continue;
        }
        /* float64 (the reference): blocks of pixels gathered by route_row, summed in double */
        for (int64_t r0 = rb; r0 < re; r0 += RB_BLOCK) {
            const int64_t r1 = re - r0 < RB_BLOCK ? re : r0 + RB_BLOCK, cnt = (r1 - r0) * C;
            double *acc = (double *)scr, *dz = (double *)j->dz + r0 * C;
            const double *y = (const double *)j->y + r0 * C;
            route_block_f64(j, r0, r1, acc, acc + j->acc_rows * C, idx);
            for (int64_t i = 0; i < cnt; i++) dz[i] = acc[i] * (double)(y[i] > 0);
            for (int64_t i = 0; i < cnt; i++) part[i % C] += dz[i];
        }
    }
}

/* dz and db of _TfcMaxPoolReluBiasGrad for the pool geometry g over y (dims [batch, in_h, in_w, in_c]). */
static bool relu_bias_run(tfc_kernel_ctx *k, const tfc_conv_geom *g, bool dbl, const void *y, const void *dp,
                          void *dz, void *db, tfc_status *st) {
    const int64_t C = g->in_c, rows = g->batch * g->in_h * g->in_w;
    if (C == 0) return true;
    if (rows == 0) {
        memset(db, 0, (size_t)C * (dbl ? sizeof(double) : sizeof(float)));
        return true;
    }
    const int64_t chunks = tfc_nn_reduce_chunks(k, rows, C);
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const int64_t acc_rows = g->in_w > RB_BLOCK ? g->in_w : RB_BLOCK;
    const size_t bytes = (size_t)(chunks * C) * (sizeof(double) + sizeof(float) + sizeof(int32_t)) +
                         (size_t)(chunks * (acc_rows + 1) * C) * es;
    char *mem = tfc_malloc(bytes);
    if (!mem) return tfc_status_oom(st, k->op->name, bytes);
    relu_bias_job j = {.g = g, .simd = tfc_nn_simd_get(), .pool_simd = dbl ? NULL : tfc_pool_simd_get(), .dbl = dbl, .y = y, .dp = dp,
                       .dz = dz, .rows = rows, .rows_per_chunk = (rows + chunks - 1) / chunks,
                       .acc_rows = acc_rows};
    j.partial = (double *)mem;
    j.scratch = mem + (size_t)(chunks * C) * sizeof(double);
    j.blk = (float *)((char *)j.scratch + (size_t)(chunks * (acc_rows + 1) * C) * es);
    j.idx = (int32_t *)(j.blk + chunks * C);
    tfc_parallel_for(k->pool, chunks, j.rows_per_chunk * C * (g->k_h * g->k_w + 4), relu_bias_chunks, &j);
    for (int64_t i = 1; i < chunks; i++)
        for (int64_t c = 0; c < C; c++) j.partial[c] += j.partial[i * C + c];
    if (dbl) memcpy(db, j.partial, (size_t)C * sizeof(double));
    else
        for (int64_t c = 0; c < C; c++) ((float *)db)[c] = (float)j.partial[c];
    tfc_free(mem);
    return true;
}

static bool max_pool_relu_bias_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const char *op = k->op->name;
    const tfc_tensor *y = k->in[0];
    tfc_conv_geom g;
    if (!tfc_conv_geom_init(op, TFC_CONV_POOL, k->attrs, y->shape.dims, NULL, &g, st)) return false;
    const tfc_dtype dt = y->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE) return tfc_kernel_unimplemented(k, dt, st);
    if (!k->out[0] && !tfc_kernel_alloc_output(k, 0, y->shape.dims, 4, st)) return false;
    if (!k->out[1] && !tfc_kernel_alloc_output(k, 1, &g.in_c, 1, st)) return false;
    return relu_bias_run(k, &g, dt == TFC_DOUBLE, y->data, k->in[2]->data, k->out[0]->data, k->out[1]->data, st);
}

/* ---- _TfcFusedConv2DMaxPoolFilterGrad: (df, db) of the convolution under _TfcFusedConv2DMaxPoolTrain ----
 * dz, db = _TfcMaxPoolReluBiasGrad(conv_output, orig_output, grad), df = Conv2DBackpropFilter(input, dz).
 * float32 convolutions that the small-channel Winograd filter gradient takes, under 2x2 pools of stride 2
 * whose windows are its tiles (the demo CNN's first layer), form dz per tile in that kernel and never write it
 * (conv_wgrad_small.c); everything else runs the two ops' computations with dz in a temporary. */
static bool conv_max_pool_filter_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const char *op = k->op->name;
    tfc_conv_geom cg, pg;
    if (!tfc_conv_pool_geom(op, k->attrs, k->in[0]->shape.dims, k->in[1]->shape.dims, &cg, &pg, st)) return false;
    const tfc_dtype dt = k->in[0]->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE) return tfc_kernel_unimplemented(k, dt, st);
    if (!k->out[0] && !tfc_kernel_alloc_output(k, 0, k->in[1]->shape.dims, 4, st)) return false;
    if (!k->out[1] && !tfc_kernel_alloc_output(k, 1, &cg.out_c, 1, st)) return false;
    const bool dbl = dt == TFC_DOUBLE;
    const void *x = k->in[0]->data, *y = k->in[2]->data, *dp = k->in[4]->data;
    void *df = k->out[0]->data, *db = k->out[1]->data;
    if (!dbl && cg.in_c >= 1 && tfc_conv_wgrad_small_pool_ok(&cg, &pg) && !tfc_conv_im2col_forced()) {
        if (tfc_conv2d_wgrad_small_pool_f32(k->pool, &cg, &pg, x, y, dp, df, db, st)) return true;
        tfc_status_clear(st); /* (its only failure here: no scratch; the two-step form then runs) */
    }
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t bytes = (size_t)(pg.batch * pg.in_h * pg.in_w * pg.in_c) * es;
    void *dz = tfc_aligned_alloc(bytes ? bytes : 1);
    if (!dz) return tfc_status_oom(st, op, bytes);
    bool ok = relu_bias_run(k, &pg, dbl, y, dp, dz, db, st) &&
              (k->out[0]->num_elements == 0 || (dbl ? tfc_conv2d_bwd_filter_f64(k->pool, &cg, x, dz, df, st)
                                                    : tfc_conv2d_bwd_filter_f32(k->pool, &cg, x, dz, df, st)));
    tfc_aligned_free(dz);
    return ok;
}

/* ---- _TfcFusedConv2DMaxPoolArgmaxFilterGrad: (df, db) of the convolution under _TfcFusedConv2DMaxPoolArgmax
 * from its routing bytes: dz (the conv output's gradient) gets (0 + dp) * (pos ? 1 : 0) at each window's routed
 * cell, +0 elsewhere, as _TfcMaxPoolReluBiasGrad computes it from the conv output; db = sum of dz, df =
 * Conv2DBackpropFilter(input, dz). Small-channel 3x3 convolutions form dz per tile in the Winograd filter
 * gradient (conv_wgrad_small.c); others build dz in a temporary. ---- */
/* dz [batch, H, W, C] (zeroed) of the routing bytes amax and pooled gradient dp (pool geometry pg), and
 * sum[c] its channel sums */
#define ARGMAX_DZ_BUILD(T)                                                                                    \
    do {                                                                                                      \
        const T *dpt = dp;                                                                                    \
        T *dzt = dz;                                                                                          \
        for (int64_t n = 0; n < pg.batch; n++)                                                                \
            for (int64_t oh = 0; oh < OH; oh++)                                                               \
                for (int64_t ow = 0; ow < OW; ow++)                                                           \
                    for (int64_t c = 0; c < C; c++) {                                                         \
                        const int64_t at = ((n * OH + oh) * OW + ow) * C + c, cell = amax[at] & TFC_POOL_ARGMAX_CELL; \
                        const int64_t h = 2 * oh + cell / 2, w = 2 * ow + cell % 2;                           \
                        if (h >= H || w >= W) continue; /* past the conv output: ignored, as the fused path */ \
                        const T v = ((T)0 + dpt[at]) * (amax[at] & TFC_POOL_ARGMAX_POS ? (T)1 : (T)0);        \
                        dzt[((n * H + h) * W + w) * C + c] = v;                                               \
                        sum[c] += (double)v;                                                                  \
                    }                                                                                         \
    } while (0)

static bool conv_max_pool_argmax_filter_grad(tfc_kernel_ctx *k, tfc_status *st) {
    const char *op = k->op->name;
    tfc_conv_geom cg, pg;
    if (!tfc_conv_pool_geom(op, k->attrs, k->in[0]->shape.dims, k->in[1]->shape.dims, &cg, &pg, st)) return false;
    const tfc_dtype dt = k->in[0]->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE) return tfc_kernel_unimplemented(k, dt, st);
    const bool dbl = dt == TFC_DOUBLE;
    if (!k->out[0] && !tfc_kernel_alloc_output(k, 0, k->in[1]->shape.dims, 4, st)) return false;
    if (!k->out[1] && !tfc_kernel_alloc_output(k, 1, &cg.out_c, 1, st)) return false;
    const void *x = k->in[0]->data, *dp = k->in[3]->data;
    const uint8_t *amax = k->in[2]->data;
    void *df = k->out[0]->data, *db = k->out[1]->data;
    const int64_t C = pg.in_c;
    if (C == 0) return true;
    if (!dbl && cg.in_c >= 1 && tfc_conv_wgrad_small_pool_ok(&cg, &pg) && !tfc_conv_im2col_forced()) {
        if (tfc_conv2d_wgrad_small_argmax_f32(k->pool, &cg, &pg, x, amax, dp, df, db, st)) return true;
        tfc_status_clear(st); /* (no scratch: the form below) */
    }
    const int64_t H = pg.in_h, W = pg.in_w, OH = pg.out_h, OW = pg.out_w;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    const size_t bytes = (size_t)(pg.batch * H * W * C) * es + (size_t)C * sizeof(double);
    char *mem = tfc_aligned_alloc(bytes);
    if (!mem) return tfc_status_oom(st, op, bytes);
    double *sum = (double *)mem;
    void *dz = sum + C;
    memset(mem, 0, bytes);
    if (dbl) ARGMAX_DZ_BUILD(double);
    else ARGMAX_DZ_BUILD(float);
    for (int64_t c = 0; c < C; c++) {
        if (dbl) ((double *)db)[c] = sum[c];
        else ((float *)db)[c] = (float)sum[c];
    }
    const bool ok = k->out[0]->num_elements == 0 ||
                    (dbl ? tfc_conv2d_bwd_filter_f64(k->pool, &cg, x, dz, df, st)
                         : tfc_conv2d_bwd_filter_f32(k->pool, &cg, x, dz, df, st));
    tfc_aligned_free(mem);
    return ok;
}

const tfc_kernel_reg tfc_cpu_kernels_fused_pool[] = {
    {"_TfcFusedConv2DMaxPoolTrain", fused_conv2d_max_pool_train},
    {"_TfcMaxPoolReluBiasGrad", max_pool_relu_bias_grad},
    {"_TfcFusedConv2DMaxPoolFilterGrad", conv_max_pool_filter_grad},
    {"_TfcFusedConv2DMaxPoolArgmaxFilterGrad", conv_max_pool_argmax_filter_grad},
    {NULL, NULL},
};

/* the forward kernels keep their filters' Winograd transforms in their instances */
const tfc_kernel_def tfc_cpu_kernel_defs_fused_pool[] = {
    {.op = "_TfcFusedConv2DMaxPool", .device = "CPU", .compute = fused_conv2d_max_pool, .create = u_cache_create,
     .destroy = u_cache_destroy},
    {.op = "_TfcFusedConv2DMaxPoolArgmax", .device = "CPU", .compute = fused_conv2d_max_pool_argmax,
     .create = u_cache_create, .destroy = u_cache_destroy},
    {.op = NULL},
};
