/* Kernel of _TfcFusedConv2DMaxPool (src/ops/fused_pool_ops.h): MaxPool(act(Conv2D(x, f) + bias)).
 *
 * The convolution's output (the demo CNN's first layer at batch 256: 22 MB) would be written to memory and
 * read back by MaxPool, which then took 17% of the inference. Here the batch is cut into slices of a few
 * images whose convolution output fits in L2 (SLICE_BYTES), each computed by the forward convolution of
 * _FusedConv2D (conv_gemm.c: Winograd, implicit GEMM or im2col, with the bias and activation in its tile
 * stores) into a per-thread scratch, and pooled from there by MaxPool's own kernels (pool_simd.inc, or the
 * same comparisons in scalar code). Slices run in parallel, each convolution on its thread alone; a batch
 * with fewer slices than threads and much work per image runs the convolution over the whole batch on the
 * pool instead (into one scratch of the full size), then the pool. Every path computes what _FusedConv2D
 * then MaxPool compute: the same convolution per image, the same comparisons.
 *
 * Inference calls this op with the same weights again and again, and the Winograd convolution transforms
 * its filter on every call (10% of a batch-1 CNN inference; once per slice here). So the transform of
 * float32 filters on that path is kept (U_CACHE entries, process-wide) with a reference to the filter's
 * buffer: tfc's tensors are immutable and its in-place writers (variable updates, optimizers) check that
 * they own a buffer alone before writing, so while the entry holds it the data cannot change (an update
 * copies instead; the next call finds a new buffer and transforms it). The held buffers stay allocated
 * until their entry is replaced (at most U_CACHE filters of at most U_MAX_FLOATS transformed floats). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/epilogue.h"
#include "kernels/cpu/pool_internal.h"
#include "ops/fused_ops.h"
#include "ops/fused_pool_ops.h"

#define SLICE_BYTES (384 * 1024)
#define U_CACHE 4
#define U_MAX_FLOATS ((int64_t)1 << 20) /* 4 MB of transform: 16 x 256 x 256 channels */

/* ---- kept Winograd filter transforms ---- */
typedef struct {
    tfc_buffer *buf;  /* the filter's buffer, referenced while cached (NULL: free entry) */
    const void *data; /* the filter's data in it */
    int64_t c, co;
    float *u;         /* [16][c][co] */
    int users;        /* calls using u now: not replaced meanwhile */
    uint64_t used;    /* last use, for replacing the least recently used */
} u_entry;

static pthread_mutex_t u_mu = PTHREAD_MUTEX_INITIALIZER;
static u_entry u_cache[U_CACHE];
static uint64_t u_clock;

/* Whether TFC_CONV_IM2COL=1 turned the paths without im2col (Winograd's included) off, as conv_gemm.c reads it. */
static bool im2col_forced(void) {
    static _Atomic int state; /* 0: not read, 1: forced, 2: not */
    int s = state;
    if (!s) {
        const char *e = getenv("TFC_CONV_IM2COL");
        state = s = e && *e && strcmp(e, "0") ? 1 : 2;
    }
    return s == 1;
}

/* The entry holding U of filter f ([3, 3, c, co] float32, its buffer allocated by tfc), found or made (the
 * least recently used unused entry replaced), with a user taken; NULL when it cannot be kept (a filter tfc
 * does not own, too large, every entry in use, no memory): the caller then transforms on every call. */
static u_entry *u_get(tfc_threadpool *pool, const tfc_tensor *f, int64_t c, int64_t co) {
    if (!f->buf || !f->buf->owned || 16 * c * co > U_MAX_FLOATS) return NULL;
    pthread_mutex_lock(&u_mu);
    u_entry *e = NULL, *victim = NULL;
    for (int i = 0; i < U_CACHE && !e; i++) {
        u_entry *x = &u_cache[i];
        if (x->buf == f->buf && x->data == f->data && x->c == c && x->co == co) e = x;
        else if (!x->users && (!victim || (victim->buf && (!x->buf || x->used < victim->used)))) victim = x;
    }
    if (!e && victim) {
        float *u = tfc_aligned_alloc((size_t)(16 * c * co) * sizeof(float));
        if (u) {
            if (victim->buf) {
                tfc_buffer_unref(victim->buf);
                tfc_aligned_free(victim->u);
            }
            tfc_conv_winograd_filter_f32(pool, f->data, c, co, u);
            tfc_buffer_ref(f->buf);
            *victim = (u_entry){.buf = f->buf, .data = f->data, .c = c, .co = co, .u = u};
            e = victim;
        }
    }
    if (e) e->users++, e->used = ++u_clock;
    pthread_mutex_unlock(&u_mu);
    return e;
}

static void u_put(u_entry *e) {
    if (!e) return;
    pthread_mutex_lock(&u_mu);
    e->users--;
    pthread_mutex_unlock(&u_mu);
}

/* MaxPool of rows [b, e) of the pool's output (units (n, oh)) without SIMD tables: the first cell of the
 * window, then y = y < v ? v : y over the others in row-major order, as pool.c's scalar kernel. */
#define SCALAR_MAX_POOL(T, SFX)                                                                               \
    static void max_pool_rows_##SFX(const tfc_conv_geom *g, const T *x, T *y, int64_t b, int64_t e) {        \
        const int64_t H = g->in_h, W = g->in_w, C = g->in_c, OH = g->out_h, OW = g->out_w;                    \
        for (int64_t r = b; r < e; r++) {                                                                     \
            const int64_t n = r / OH, oh = r % OH;                                                            \
            int64_t h0 = oh * g->stride_h - g->pad_top, h1 = h0 + g->k_h;                                     \
            h0 = h0 < 0 ? 0 : h0, h1 = h1 > H ? H : h1;                                                       \
            for (int64_t ow = 0; ow < OW; ow++) {                                                             \
                int64_t w0 = ow * g->stride_w - g->pad_left, w1 = w0 + g->k_w;                                \
                w0 = w0 < 0 ? 0 : w0, w1 = w1 > W ? W : w1;                                                   \
                T *restrict yp = y + (r * OW + ow) * C;                                                       \
                const T *xn = x + n * H * W * C;                                                              \
                memcpy(yp, xn + (h0 * W + w0) * C, (size_t)C * sizeof(T));                                   \
                for (int64_t h = h0; h < h1; h++)                                                             \
                    for (int64_t w = (h == h0 ? w0 + 1 : w0); w < w1; w++) {                                  \
                        const T *restrict xp = xn + (h * W + w) * C;                                          \
                        for (int64_t c = 0; c < C; c++) yp[c] = yp[c] < xp[c] ? xp[c] : yp[c];                \
                    }                                                                                         \
            }                                                                                                 \
        }                                                                                                     \
    }
SCALAR_MAX_POOL(float, f32)
SCALAR_MAX_POOL(double, f64)

typedef struct {
    bool dbl;
    const tfc_conv_geom *cg, *pg;
    const void *x, *f;
    void *y;
    const tfc_epilogue *ep;
    const tfc_pool_simd *simd; /* float32 MaxPool tables, or NULL */
    const float *u;            /* the filter's kept Winograd transform (float32, no or ReLU activation), or NULL */
    int64_t per;               /* images per slice */
    void *scratch;             /* n_slots slots of slot_elems */
    int64_t slot_elems;
    _Atomic int *busy;
    int n_slots;
    atomic_bool failed;        /* a convolution could not get its scratch */
} slice_job;

/* MaxPool of pool rows [b, e) (units (n, oh) of geometry pg) from conv output `src` into `dst`. */
static void pool_rows(const slice_job *j, const tfc_conv_geom *pg, const void *src, void *dst, int64_t b, int64_t e) {
    if (j->dbl) {
        max_pool_rows_f64(pg, src, dst, b, e);
    } else if (j->simd) {
        pool_job pj = {pg, src, NULL, dst, pg->in_c, 1};
        j->simd->max_fwd(&pj, b, e);
    } else {
        max_pool_rows_f32(pg, src, dst, b, e);
    }
}

/* The convolution of g (one slice, or the batch) into y: with the kept transform where the Winograd path
 * takes g (as conv_gemm.c would choose it), else _FusedConv2D's forward. */
static bool conv_into(const slice_job *j, tfc_threadpool *pool, const tfc_conv_geom *g, const void *x, void *y,
                      tfc_status *st) {
    if (j->u && tfc_conv_winograd_fwd_ok(g) &&
        tfc_conv2d_winograd_fwd_u_f32(pool, g, x, j->u, j->ep->bias, j->ep->act == TFC_EPI_RELU, y, st))
        return true;
    tfc_status_clear(st); /* (Winograd's only failure: no scratch; the GEMM paths then run) */
    return j->dbl ? tfc_conv2d_fwd_ep_f64(pool, g, x, j->f, y, j->ep, st)
                  : tfc_conv2d_fwd_ep_f32(pool, g, x, j->f, y, j->ep, st);
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
}

/* The convolution and pool of j (geometry, data and kept transform set): in slices on the threads, or the
 * whole batch's convolution on the pool, then the pool. */
static bool run_slices(tfc_kernel_ctx *k, slice_job *jp, int64_t per, int64_t n_slices, double macs, int64_t img,
                       size_t es, int threads, tfc_status *st) {
    slice_job *j = jp;
    const char *op = k->op->name;
    const tfc_conv_geom cg = *j->cg, pg = *j->pg; /* (copies for reading) */
    const int64_t N = cg.batch;
    if (n_slices < threads && macs >= 4194304.0) {
        /* too few images to keep the threads busy one slice each: the convolution over the whole batch on
         * the pool, then the pool */
        const size_t bytes = (size_t)(N * img) * es;
        void *tmp = tfc_aligned_alloc(bytes);
        if (!tmp) return tfc_status_oom(st, op, bytes);
        bool ok = conv_into(j, k->pool, &cg, j->x, tmp, st);
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

static bool fused_conv2d_max_pool(tfc_kernel_ctx *k, tfc_status *st) {
    const char *op = k->op->name;
    tfc_fused_spec fs;
    if (!tfc_fused_spec_read(op, k->attrs, &fs, st)) return false;
    static const tfc_epi_act map[] = {[TFC_FUSED_LINEAR] = TFC_EPI_NONE, [TFC_FUSED_RELU] = TFC_EPI_RELU,
                                      [TFC_FUSED_RELU6] = TFC_EPI_RELU6, [TFC_FUSED_ELU] = TFC_EPI_ELU,
                                      [TFC_FUSED_LEAKY_RELU] = TFC_EPI_LEAKY_RELU};
    tfc_conv_geom cg, pg;
    if (!tfc_conv_pool_geom(op, k->attrs, k->in[0]->shape.dims, k->in[1]->shape.dims, &cg, &pg, st)) return false;
    if (!k->out[0]) { /* shape left unknown by a graph trace */
        int64_t od[4];
        tfc_conv_dims(false, pg.batch, pg.out_h, pg.out_w, pg.out_c, od);
        if (!tfc_kernel_alloc_output(k, 0, od, 4, st)) return false;
    }
    tfc_tensor *out = k->out[0];
    if (out->num_elements == 0) return true;
    const tfc_dtype dt = out->dtype;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE) return tfc_kernel_unimplemented(k, dt, st);
    const tfc_epilogue ep = {.bias = k->in[2]->data, .act = map[fs.act], .alpha = fs.alpha};
    const bool dbl = dt == TFC_DOUBLE;
    const size_t es = dbl ? sizeof(double) : sizeof(float);
    slice_job j = {.dbl = dbl, .cg = &cg, .pg = &pg, .x = k->in[0]->data, .f = k->in[1]->data, .y = out->data,
                   .ep = &ep, .simd = dbl ? NULL : tfc_pool_simd_get()};
    atomic_init(&j.failed, false);
    /* images per slice: a conv output of about SLICE_BYTES, and at least one slice per thread */
    const int threads = tfc_threadpool_size(k->pool);
    const int64_t N = cg.batch, img = cg.out_h * cg.out_w * cg.out_c;
    int64_t per = (int64_t)(SLICE_BYTES / es) / (img > 0 ? img : 1);
    if (per < 1) per = 1;
    if (per * threads > N) per = (N + threads - 1) / threads;
    const int64_t n_slices = (N + per - 1) / per;
    const double macs = (double)N * (double)img * (double)(cg.k_h * cg.k_w * cg.k_c);
    tfc_conv_geom one = cg;
    one.batch = per;
    u_entry *ue = !dbl && (ep.act == TFC_EPI_NONE || ep.act == TFC_EPI_RELU) && !im2col_forced() &&
                          (tfc_conv_winograd_fwd_ok(&one) || tfc_conv_winograd_fwd_ok(&cg))
                      ? u_get(k->pool, k->in[1], cg.in_c, cg.out_c)
                      : NULL;
    j.u = ue ? ue->u : NULL;
    const bool ok = run_slices(k, &j, per, n_slices, macs, img, es, threads, st);
    u_put(ue);
    return ok;
}

const tfc_kernel_reg tfc_cpu_kernels_fused_pool[] = {
    {"_TfcFusedConv2DMaxPool", fused_conv2d_max_pool},
    {NULL, NULL},
};
