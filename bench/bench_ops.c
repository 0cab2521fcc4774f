/* Op-level workloads: GEMM (tfc's MatMul and OpenBLAS's cblas_sgemm called directly), Conv2D and its two
 * backprops, and eager dispatch of small ops.
 *
 *   gemm_<m>x<k>x<n>         C[m,n] = A[m,k] B[k,n], float32. The demo's Dense backward products keep the
 *                            transposes Dense's gradient uses: gemm_128x10x1600 is dY[128,10] W[1600,10]^T
 *                            (transpose_b) and gemm_1600x128x10 is X[128,1600]^T dY[128,10] (transpose_a).
 *   gemm_bf16_<n>            C[n,n] = A[n,n] B[n,n] in bfloat16 (MatMul: vdpbf16ps where the CPU has it, float32
 *                            accumulation); its peer "tfc_f32" is tfc's MatMul of the same shape in float32.
 *   conv2d_<pass>_<n>x<h>x<w>x<c>_<kh>x<kw>x<o>[_same]
 *                            pass fwd (Conv2D), bwd_input (Conv2DBackpropInput), bwd_filter
 *                            (Conv2DBackpropFilter); NHWC, stride 1, VALID unless _same.
 *   eager_dispatch           10,000 AddV2 on two 8x8 float32 tensors (one iteration = 10,000 ops).
 *   graph_dispatch           one call of a traced function of 1,000 chained AddV2 on 8x8 float32 tensors
 *                            (impl tfc: tfc_function_call; impl tfc_eager: the same 1,000 AddV2 run eagerly).
 *   graph_parallel           one call of a traced function of 8 independent branches MatMul(x, w_i) on [128, 128]
 *                            float32, summed by AddN (impl tfc: the executor may run branches on parallel
 *                            threads; impl tfc_seq: inter-op parallelism 1, one node at a time, each product
 *                            split over the pool). */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "tfc/ops/conv.h"
#include "tfc/ops/linalg.h"
#include "tfc/ops/math.h"

/* ---- GEMM ---- */
typedef struct {
    bench_case base;
    tfc_ctx *ctx;
    tfc_tensor *a, *b;
    float *c; /* OpenBLAS side's output */
    int64_t m, k, n;
    bool ta, tb, blas;
} gemm_case;

static bool gemm_run(bench_case *bc, int64_t iters, tfc_status *st) {
    gemm_case *g = (gemm_case *)bc;
    if (g->blas) {
        const float *a = tfc_tensor_data(g->a), *b = tfc_tensor_data(g->b);
        for (int64_t i = 0; i < iters; i++)
            cblas_sgemm(CblasRowMajor, g->ta ? CblasTrans : CblasNoTrans, g->tb ? CblasTrans : CblasNoTrans,
                        (blasint)g->m, (blasint)g->n, (blasint)g->k, 1.0f, a, (blasint)(g->ta ? g->m : g->k), b,
                        (blasint)(g->tb ? g->k : g->n), 0.0f, g->c, (blasint)g->n);
        return true;
    }
    for (int64_t i = 0; i < iters; i++) {
        tfc_tensor *c = tfc_matmul(g->ctx, g->a, g->b, g->ta, g->tb, st);
        if (!c) return false;
        tfc_tensor_unref(c);
    }
    return true;
}

static void gemm_free(bench_case *bc) {
    gemm_case *g = (gemm_case *)bc;
    tfc_tensor_unref(g->a);
    tfc_tensor_unref(g->b);
    tfc_aligned_free(g->c);
    tfc_free(g);
}

/* gemm_bf16_<n>: tfc's MatMul in bfloat16 (impl tfc) or float32 (impl tfc_f32). */
static bench_case *gemm_bf16_prep(tfc_ctx *ctx, const char *impl, const char *workload, tfc_status *st) {
    int64_t n;
    int used = 0;
    if (sscanf(workload, "gemm_bf16_%ld%n", &n, &used) != 1 || workload[used] || n < 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "bad GEMM workload '%s'", workload);
        return NULL;
    }
    const bool f32 = !strcmp(impl, "tfc_f32");
    if (!f32 && strcmp(impl, "tfc")) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "GEMM: unknown impl '%s'", impl);
        return NULL;
    }
    gemm_case *g = tfc_calloc(1, sizeof *g);
    if (!g) return tfc_status_oom(st, "gemm", sizeof *g), NULL;
    *g = (gemm_case){.base = {gemm_run, gemm_free, 1.0, NAN}, .ctx = ctx, .m = n, .k = n, .n = n};
    const int64_t d[2] = {n, n};
    tfc_tensor *a = bench_random_tensor(d, 2, 1, st), *b = a ? bench_random_tensor(d, 2, 2, st) : NULL;
    if (b && f32) {
        g->a = a, g->b = b;
        return &g->base;
    }
    g->a = b ? tfc_cast(ctx, a, TFC_BFLOAT16, st) : NULL;
    g->b = g->a ? tfc_cast(ctx, b, TFC_BFLOAT16, st) : NULL;
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    if (!g->b) {
        gemm_free(&g->base);
        return NULL;
    }
    return &g->base;
}

static bench_case *gemm_prep(tfc_ctx *ctx, const char *impl, const char *workload, tfc_status *st) {
    int64_t m, k, n;
    int used = 0;
    if (!strncmp(workload, "gemm_bf16_", 10)) return gemm_bf16_prep(ctx, impl, workload, st);
    if (sscanf(workload, "gemm_%ldx%ldx%ld%n", &m, &k, &n, &used) != 3 || workload[used] || m < 1 || k < 1 ||
        n < 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "bad GEMM workload '%s'", workload);
        return NULL;
    }
    bool blas = !strcmp(impl, "openblas");
    if (!blas && strcmp(impl, "tfc")) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "GEMM: unknown impl '%s'", impl);
        return NULL;
    }
    gemm_case *g = tfc_calloc(1, sizeof *g);
    if (!g) return tfc_status_oom(st, "gemm", sizeof *g), NULL;
    *g = (gemm_case){.base = {gemm_run, gemm_free, 1.0, NAN}, .ctx = ctx, .m = m, .k = k, .n = n, .blas = blas};
    /* Dense's gradient products (see the file comment). */
    g->tb = m == 128 && k == 10 && n == 1600;
    g->ta = m == 1600 && k == 128 && n == 10;
    int64_t ad[2] = {g->ta ? k : m, g->ta ? m : k}, bd[2] = {g->tb ? n : k, g->tb ? k : n};
    g->a = bench_random_tensor(ad, 2, 1, st);
    g->b = g->a ? bench_random_tensor(bd, 2, 2, st) : NULL;
    if (g->b && blas && !(g->c = tfc_aligned_alloc((size_t)(m * n) * sizeof(float))))
        tfc_status_oom(st, "gemm output", (size_t)(m * n) * sizeof(float));
    if (!g->b || (blas && !g->c)) {
        gemm_free(&g->base);
        return NULL;
    }
    return &g->base;
}

/* ---- Conv2D ---- */
typedef enum { CONV_FWD, CONV_BWD_INPUT, CONV_BWD_FILTER } conv_pass;

typedef struct {
    bench_case base;
    tfc_ctx *ctx;
    conv_pass pass;
    tfc_tensor *x, *f, *dy;
    int64_t in_sizes[4], filter_sizes[4];
    tfc_conv2d_attrs attrs;
} conv_case;

static bool conv_run(bench_case *bc, int64_t iters, tfc_status *st) {
    conv_case *c = (conv_case *)bc;
    for (int64_t i = 0; i < iters; i++) {
        tfc_tensor *y = c->pass == CONV_FWD ? tfc_conv2d(c->ctx, c->x, c->f, &c->attrs, st)
                        : c->pass == CONV_BWD_INPUT
                            ? tfc_conv2d_backprop_input(c->ctx, c->in_sizes, c->f, c->dy, &c->attrs, st)
                            : tfc_conv2d_backprop_filter(c->ctx, c->x, c->filter_sizes, c->dy, &c->attrs, st);
        if (!y) return false;
        tfc_tensor_unref(y);
    }
    return true;
}

static void conv_free(bench_case *bc) {
    conv_case *c = (conv_case *)bc;
    tfc_tensor_unref(c->x);
    tfc_tensor_unref(c->f);
    tfc_tensor_unref(c->dy);
    tfc_free(c);
}

static bench_case *conv_prep(tfc_ctx *ctx, const char *impl, const char *workload, tfc_status *st) {
    const char *p = workload + strlen("conv2d_");
    conv_pass pass;
    if (!strncmp(p, "fwd_", 4))
        pass = CONV_FWD, p += 4;
    else if (!strncmp(p, "bwd_input_", 10))
        pass = CONV_BWD_INPUT, p += 10;
    else if (!strncmp(p, "bwd_filter_", 11))
        pass = CONV_BWD_FILTER, p += 11;
    else
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "bad Conv2D pass in '%s'", workload), NULL;
    int64_t n, h, w, ci, kh, kw, co;
    int used = 0;
    if (sscanf(p, "%ldx%ldx%ldx%ld_%ldx%ldx%ld%n", &n, &h, &w, &ci, &kh, &kw, &co, &used) != 7 ||
        (p[used] && strcmp(p + used, "_same")))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "bad Conv2D shape in '%s'", workload), NULL;
    if (strcmp(impl, "tfc"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Conv2D: unknown impl '%s'", impl), NULL;
    bool same = p[used] != 0;
    int64_t oh = same ? h : h - kh + 1, ow = same ? w : w - kw + 1;
    conv_case *c = tfc_calloc(1, sizeof *c);
    if (!c) return tfc_status_oom(st, "conv", sizeof *c), NULL;
    *c = (conv_case){.base = {conv_run, conv_free, 1.0, NAN},
                     .ctx = ctx,
                     .pass = pass,
                     .in_sizes = {n, h, w, ci},
                     .filter_sizes = {kh, kw, ci, co},
                     .attrs = {.padding = same ? "SAME" : "VALID"}};
    int64_t yd[4] = {n, oh, ow, co};
    bool ok = true;
    if (pass != CONV_BWD_INPUT) ok = (c->x = bench_random_tensor(c->in_sizes, 4, 3, st)) != NULL;
    if (ok && pass != CONV_BWD_FILTER) ok = (c->f = bench_random_tensor(c->filter_sizes, 4, 4, st)) != NULL;
    if (ok && pass != CONV_FWD) ok = (c->dy = bench_random_tensor(yd, 4, 5, st)) != NULL;
    if (!ok) {
        conv_free(&c->base);
        return NULL;
    }
    return &c->base;
}

/* ---- eager dispatch ---- */
#define EAGER_OPS 10000

typedef struct {
    bench_case base;
    tfc_ctx *ctx;
    tfc_tensor *a, *b;
} eager_case;

static bool eager_run(bench_case *bc, int64_t iters, tfc_status *st) {
    eager_case *e = (eager_case *)bc;
    for (int64_t i = 0; i < iters * EAGER_OPS; i++) {
        tfc_tensor *c = tfc_add(e->ctx, e->a, e->b, st);
        if (!c) return false;
        tfc_tensor_unref(c);
    }
    return true;
}

static void eager_free(bench_case *bc) {
    eager_case *e = (eager_case *)bc;
    tfc_tensor_unref(e->a);
    tfc_tensor_unref(e->b);
    tfc_free(e);
}

static bench_case *eager_prep(tfc_ctx *ctx, const char *impl, tfc_status *st) {
    if (strcmp(impl, "tfc"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "eager_dispatch: unknown impl '%s'", impl), NULL;
    eager_case *e = tfc_calloc(1, sizeof *e);
    if (!e) return tfc_status_oom(st, "eager", sizeof *e), NULL;
    *e = (eager_case){.base = {eager_run, eager_free, EAGER_OPS, NAN}, .ctx = ctx};
    int64_t d[2] = {8, 8};
    e->a = bench_random_tensor(d, 2, 6, st);
    e->b = e->a ? bench_random_tensor(d, 2, 7, st) : NULL;
    if (!e->b) {
        eager_free(&e->base);
        return NULL;
    }
    return &e->base;
}

/* ---- graph dispatch: y = ((a + b) + b) + ... (1,000 AddV2), a traced function vs the same ops eagerly ---- */
#define GRAPH_OPS 1000
#pragma weak tfc_function_new
#pragma weak tfc_function_call
#pragma weak tfc_function_free
#pragma weak tfc_ctx_set_inter_op_parallelism_threads

typedef struct {
    bench_case base;
    tfc_ctx *ctx;
    tfc_tensor *a, *b;
    tfc_function *f;
} graph_case;

static int chain(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                 tfc_status *st) {
    tfc_tensor *x = in[0];
    for (int i = 0; i < GRAPH_OPS && x; i++) x = tfc_add(ctx, x, in[1], st);
    out[0] = x;
    return x ? 1 : -1;
}

static bool graph_run(bench_case *bc, int64_t iters, tfc_status *st) {
    graph_case *g = (graph_case *)bc;
    tfc_tensor *in[2] = {g->a, g->b}, *out[1];
    for (int64_t i = 0; i < iters; i++) {
        if (g->f) {
            if (tfc_function_call(g->f, in, 2, out, 1, st) != 1) return false;
            tfc_tensor_unref(out[0]);
        } else {
            if (!tfc_scope_begin(g->ctx, st)) return false;
            int n = chain(g->ctx, in, 2, out, 1, NULL, st);
            tfc_scope_end(g->ctx);
            if (n != 1) return false;
        }
    }
    return true;
}

static void graph_free(bench_case *bc) {
    graph_case *g = (graph_case *)bc;
    if (g->f) tfc_function_free(g->f);
    tfc_tensor_unref(g->a);
    tfc_tensor_unref(g->b);
    tfc_free(g);
}

static bench_case *graph_prep(tfc_ctx *ctx, const char *impl, tfc_status *st) {
    const bool traced = !strcmp(impl, "tfc");
    if (!traced && strcmp(impl, "tfc_eager"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "graph_dispatch: unknown impl '%s'", impl), NULL;
    if (traced && !tfc_function_new)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "graph_dispatch: libtfc has no tfc_function_new"), NULL;
    graph_case *g = tfc_calloc(1, sizeof *g);
    if (!g) return tfc_status_oom(st, "graph", sizeof *g), NULL;
    *g = (graph_case){.base = {graph_run, graph_free, 1, NAN}, .ctx = ctx};
    int64_t d[2] = {8, 8};
    g->a = bench_random_tensor(d, 2, 6, st);
    g->b = g->a ? bench_random_tensor(d, 2, 7, st) : NULL;
    if (g->b && traced) g->f = tfc_function_new(ctx, chain, NULL, &(tfc_function_opts){.name = "graph_dispatch"}, st);
    if (!g->b || (traced && !g->f)) {
        graph_free(&g->base);
        return NULL;
    }
    return &g->base;
}

/* ---- graph parallel: sum_i x w_i over 8 independent products ---- */
#define PAR_BRANCHES 8
#define PAR_N 128

static int branches(tfc_ctx *ctx, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    tfc_tensor *p[PAR_BRANCHES];
    for (int i = 0; i < PAR_BRANCHES; i++)
        if (!(p[i] = tfc_emit(ctx, "MatMul", (tfc_tensor *[]){in[0], in[1 + i]}, 2, NULL, 0, st))) return -1;
    return (out[0] = tfc_emit(ctx, "AddN", p, PAR_BRANCHES, NULL, 0, st)) ? 1 : -1;
}

typedef struct {
    bench_case base;
    tfc_ctx *ctx;
    tfc_tensor *in[1 + PAR_BRANCHES];
    tfc_function *f;
} par_case;

static bool par_run(bench_case *bc, int64_t iters, tfc_status *st) {
    par_case *g = (par_case *)bc;
    tfc_tensor *out[1];
    for (int64_t i = 0; i < iters; i++) {
        if (tfc_function_call(g->f, g->in, 1 + PAR_BRANCHES, out, 1, st) != 1) return false;
        tfc_tensor_unref(out[0]);
    }
    return true;
}

static void par_free(bench_case *bc) {
    par_case *g = (par_case *)bc;
    tfc_function_free(g->f);
    for (int i = 0; i <= PAR_BRANCHES; i++) tfc_tensor_unref(g->in[i]);
    tfc_ctx_set_inter_op_parallelism_threads(g->ctx, 0);
    tfc_free(g);
}

static bench_case *par_prep(tfc_ctx *ctx, const char *impl, tfc_status *st) {
    const bool seq = !strcmp(impl, "tfc_seq");
    if (!seq && strcmp(impl, "tfc"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "graph_parallel: unknown impl '%s'", impl), NULL;
    if (!tfc_function_new || !tfc_ctx_set_inter_op_parallelism_threads)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "graph_parallel: libtfc has no inter-op parallelism setting"),
               NULL;
    par_case *g = tfc_calloc(1, sizeof *g);
    if (!g) return tfc_status_oom(st, "graph_parallel", sizeof *g), NULL;
    *g = (par_case){.base = {par_run, par_free, 1, NAN}, .ctx = ctx};
    tfc_ctx_set_inter_op_parallelism_threads(ctx, seq ? 1 : 0);
    bool ok = true;
    for (int i = 0; i <= PAR_BRANCHES && ok; i++) ok = (g->in[i] = bench_random_tensor((int64_t[]){PAR_N, PAR_N}, 2,
                                                                                        20 + (uint64_t)i, st));
    if (ok) ok = (g->f = tfc_function_new(ctx, branches, NULL, &(tfc_function_opts){.name = "graph_parallel"}, st));
    if (!ok) {
        par_free(&g->base);
        return NULL;
    }
    return &g->base;
}

bench_case *bench_prep_ops(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                           tfc_status *st) {
    (void)cfg;
    if (!strncmp(workload, "gemm_", 5)) return gemm_prep(ctx, impl, workload, st);
    if (!strncmp(workload, "conv2d_", 7)) return conv_prep(ctx, impl, workload, st);
    if (!strcmp(workload, "eager_dispatch")) return eager_prep(ctx, impl, st);
    if (!strcmp(workload, "graph_dispatch")) return graph_prep(ctx, impl, st);
    if (!strcmp(workload, "graph_parallel")) return par_prep(ctx, impl, st);
    return NULL;
}
