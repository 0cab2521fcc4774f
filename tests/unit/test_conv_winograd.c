/* The Winograd F(2x2, 3x3) convolution (src/kernels/cpu/conv_winograd.c) called directly, against float64
 * loops: forward with and without bias and ReLU, backprop-input, backprop-filter, on odd sizes (partial tiles), SAME, VALID and
 * EXPLICIT paddings (over 2 too, where the backprop's "full" padding becomes negative), channel counts
 * that are not multiples of 16, batch 1, several blocks per thread on a pool, every GEMM kernel set this CPU
 * has; and which geometries the Conv2D dispatch sends to it. Buffers are allocated to their exact sizes so
 * ASan sees any access past them. */
#include "kernels/cpu/conv_winograd.h"
#include "kernels/cpu/gemm.h"
#include "conv_test_util.h"

/* y[n, oh, ow, o] = sum x[n, oh + kh - pt, ow + kw - pl, c] f[kh, kw, c, o] in float64 (no bias); ya: the sums
 * of the terms' magnitudes */
static void ref_fwd(const tfc_conv_geom *g, const float *x, const float *f, double *y, double *ya) {
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t oh = 0; oh < g->out_h; oh++)
            for (int64_t ow = 0; ow < g->out_w; ow++)
                for (int64_t o = 0; o < g->out_c; o++) {
                    double s = 0, sa = 0;
                    for (int64_t kh = 0; kh < 3; kh++)
                        for (int64_t kw = 0; kw < 3; kw++) {
                            const int64_t ih = oh + kh - g->pad_top, iw = ow + kw - g->pad_left;
                            if (ih < 0 || ih >= g->in_h || iw < 0 || iw >= g->in_w) continue;
                            for (int64_t c = 0; c < g->in_c; c++) {
                                const double v = (double)x[((n * g->in_h + ih) * g->in_w + iw) * g->in_c + c] *
                                                 f[((kh * 3 + kw) * g->in_c + c) * g->out_c + o];
                                s += v;
                                sa += fabs(v);
                            }
                        }
                    y[((n * g->out_h + oh) * g->out_w + ow) * g->out_c + o] = s;
                    ya[((n * g->out_h + oh) * g->out_w + ow) * g->out_c + o] = sa;
                }
}

/* dx = the adjoint of ref_fwd applied to dy (dxa: magnitudes, as ref_fwd) */
static void ref_bwd_input(const tfc_conv_geom *g, const float *dy, const float *f, double *dx, double *dxa) {
    memset(dx, 0, (size_t)(g->batch * g->in_h * g->in_w * g->in_c) * sizeof(double));
    memset(dxa, 0, (size_t)(g->batch * g->in_h * g->in_w * g->in_c) * sizeof(double));
    for (int64_t n = 0; n < g->batch; n++)
        for (int64_t oh = 0; oh < g->out_h; oh++)
            for (int64_t ow = 0; ow < g->out_w; ow++)
                for (int64_t kh = 0; kh < 3; kh++)
                    for (int64_t kw = 0; kw < 3; kw++) {
                        const int64_t ih = oh + kh - g->pad_top, iw = ow + kw - g->pad_left;
                        if (ih < 0 || ih >= g->in_h || iw < 0 || iw >= g->in_w) continue;
                        for (int64_t c = 0; c < g->in_c; c++) {
                            double s = 0, sa = 0;
                            for (int64_t o = 0; o < g->out_c; o++) {
                                const double v = (double)dy[((n * g->out_h + oh) * g->out_w + ow) * g->out_c + o] *
                                                 f[((kh * 3 + kw) * g->in_c + c) * g->out_c + o];
                                s += v;
                                sa += fabs(v);
                            }
                            dx[((n * g->in_h + ih) * g->in_w + iw) * g->in_c + c] += s;
                            dxa[((n * g->in_h + ih) * g->in_w + iw) * g->in_c + c] += sa;
                        }
                    }
}

static bool check_geom(const tfc_conv_geom *g, tfc_threadpool *pool) {
    const int64_t xl = g->batch * g->in_h * g->in_w * g->in_c, yl = g->batch * g->out_h * g->out_w * g->out_c;
    const int64_t fl = 9 * g->in_c * g->out_c;
    float *x = rand_buf(xl), *f = rand_buf(fl), *bias = rand_buf(g->out_c), *dy = rand_buf(yl);
    float *y = rand_buf(yl), *dx = rand_buf(xl);
    double *want = malloc((size_t)(yl > 0 ? yl : 1) * sizeof(double)), *dxw = malloc((size_t)(xl > 0 ? xl : 1) * sizeof(double));
    double *ya = malloc((size_t)(yl > 0 ? yl : 1) * sizeof(double)), *dxa = malloc((size_t)(xl > 0 ? xl : 1) * sizeof(double));
    REQUIRE(want && dxw && ya && dxa);
    tfc_status st = TFC_STATUS_INIT;
    bool ok = true;

    ref_fwd(g, x, f, want, ya);
    CHECK(tfc_conv2d_winograd_fwd_f32(pool, g, x, f, NULL, false, y, &st));
    CHECK_OK(&st);
    ok = ok && close_all("forward", g, y, want, ya, yl);

    /* bias and ReLU: act(conv + bias) */
    for (int64_t i = 0; i < yl; i++) {
        const double v = want[i] + bias[i % g->out_c];
        want[i] = v > 0 ? v : 0;
    }
    CHECK(tfc_conv2d_winograd_fwd_f32(pool, g, x, f, bias, true, y, &st));
    CHECK_OK(&st);
    ok = ok && close_all("forward + bias + relu", g, y, want, ya, yl);

    ref_bwd_input(g, dy, f, dxw, dxa);
    CHECK(tfc_conv2d_winograd_bwd_input_f32(pool, g, dy, f, dx, &st));
    CHECK_OK(&st);
    ok = ok && close_all("backprop input", g, dx, dxw, dxa, xl);
    for (int64_t i = 0; i < xl; i++) dx[i] = NAN; /* every element written */
    CHECK(tfc_conv2d_winograd_bwd_input_adj_f32(pool, g, dy, f, dx, &st));
    CHECK_OK(&st);
    ok = ok && close_all("backprop input (adjoint)", g, dx, dxw, dxa, xl);

    float *df = rand_buf(fl);
    double *dfw = malloc((size_t)(fl > 0 ? fl : 1) * sizeof(double)), *dfa = malloc((size_t)(fl > 0 ? fl : 1) * sizeof(double));
    REQUIRE(dfw && dfa);
    ref_bwd_filter(g, x, dy, dfw, dfa);
    CHECK(tfc_conv2d_winograd_bwd_filter_f32(pool, g, x, dy, df, &st));
    CHECK_OK(&st);
    ok = ok && close_all("backprop filter", g, df, dfw, dfa, fl);
    free(df), free(dfw), free(dfa);
    CHECK(ok);
    free(x), free(f), free(bias), free(dy), free(y), free(dx), free(want), free(dxw), free(ya), free(dxa);
    return ok;
}

static void run_isa(const char *isa, tfc_threadpool *pool) {
    if (!tfc_sgemm_force_isa(isa)) {
        printf("winograd: %s not available here, skipped\n", isa);
        return;
    }
    /* n, h, w, c, co, pads */
    static const int64_t cases[][9] = {
        {1, 7, 9, 17, 20, 1, 1, 1, 1},    /* SAME, odd sizes, batch 1 */
        {2, 13, 13, 32, 64, 0, 0, 0, 0},  /* VALID: 11x11 output, partial last tiles */
        {3, 6, 5, 24, 33, 2, 0, 0, 1},    /* EXPLICIT, asymmetric */
        {1, 8, 6, 19, 18, 3, 1, 0, 4},    /* paddings over 2: the backprop's window starts inside dy */
        {1, 3, 3, 16, 16, 0, 0, 0, 0},    /* one output pixel */
        {1, 1, 1, 21, 17, 1, 1, 1, 1},    /* 1x1 image, SAME */
        {2, 4, 7, 5, 3, 1, 1, 1, 1},      /* few channels (the dispatch keeps these on the GEMM path) */
        {2, 30, 31, 40, 48, 1, 1, 1, 1},  /* several blocks per thread */
        {1, 12, 10, 70, 300, 1, 1, 1, 1}, /* more than 256 output channels: pre-packed U panels */
        {1, 16, 16, 300, 24, 0, 0, 1, 1}, /* long k for the GEMM */
        {3, 13, 13, 32, 64, 0, 0, 0, 0},  /* the filter gradient's product transposed (M^T = D^T V), 11x11 */
        {2, 9, 10, 48, 40, 1, 1, 1, 1},   /* the same, channels not multiples of 16 */
        {5, 12, 9, 20, 36, 0, 0, 0, 0},   /* (pool) several images per unit of the adjoint input gradient,
                                           * blocks spanning images: each image's dx zeroed at its first tile */
        {6, 10, 10, 17, 33, 0, 0, 0, 0},  /* (no pool) one unit over all images, odd channel counts */
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && ok; i++) {
        const int64_t *c = cases[i];
        tfc_conv_geom g = geom(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]);
        ok = check_geom(&g, i % 2 ? pool : NULL);
    }
    printf("winograd: %s %s\n", isa, ok ? "ok" : "FAILED");
}

/* Zero input channels: y = act(bias); empty batch or output: nothing to do. */
static void test_degenerate(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_conv_geom g = geom(1, 3, 4, 0, 3, 1, 1, 1, 1);
    float bias[3] = {0.5f, -2.0f, 1.0f}, y[36], f[1] = {0};
    for (int i = 0; i < 36; i++) y[i] = NAN;
    CHECK(tfc_conv2d_winograd_fwd_f32(NULL, &g, f, f, bias, true, y, &st));
    for (int i = 0; i < 36; i++) CHECK(y[i] == (i % 3 == 1 ? 0.0f : bias[i % 3]));
    g = geom(0, 3, 4, 16, 16, 1, 1, 1, 1);
    CHECK(tfc_conv2d_winograd_fwd_f32(NULL, &g, f, f, NULL, false, y, &st));
    CHECK_OK(&st);
    /* filter gradient of an empty batch, or of no output channels: zeros / nothing */
    float df[9 * 16 * 16];
    for (int i = 0; i < 9 * 16 * 16; i++) df[i] = NAN;
    CHECK(tfc_conv2d_winograd_bwd_filter_f32(NULL, &g, f, f, df, &st));
    CHECK_OK(&st);
    for (int i = 0; i < 9 * 16 * 16; i++) CHECK(df[i] == 0.0f);
    g = geom(1, 3, 4, 16, 0, 1, 1, 1, 1);
    CHECK(tfc_conv2d_winograd_bwd_filter_f32(NULL, &g, f, f, df, &st));
    CHECK_OK(&st);
    /* not a 3x3 stride-1 convolution: an error, nothing written */
    g = geom(1, 5, 5, 16, 16, 1, 1, 1, 1);
    g.stride_h = 2;
    CHECK(!tfc_conv2d_winograd_fwd_f32(NULL, &g, f, f, NULL, false, y, &st));
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    CHECK(!tfc_conv_winograd_fwd_ok(&g));
    CHECK(!tfc_conv2d_winograd_bwd_filter_f32(NULL, &g, f, f, y, &st));
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    CHECK(!tfc_conv_winograd_bwd_filter_ok(&g));
}

/* What the Conv2D kernels send to it. */
static void test_dispatch(void) {
    const char *env = getenv("TFC_CONV_WINOGRAD");
    if (env && !strcmp(env, "0")) return; /* switched off */
    tfc_conv_geom g = geom(32, 56, 56, 64, 64, 1, 1, 1, 1);
    CHECK(tfc_conv_winograd_fwd_ok(&g) && tfc_conv_winograd_bwd_input_ok(&g));
    g = geom(128, 13, 13, 32, 64, 0, 0, 0, 0);
    CHECK(tfc_conv_winograd_fwd_ok(&g) && tfc_conv_winograd_bwd_input_ok(&g));
    /* the Winograd cases of tests/ops/cases_conv.c */
    g = geom(1, 11, 13, 17, 20, 1, 1, 1, 1);
    CHECK(tfc_conv_winograd_fwd_ok(&g) && tfc_conv_winograd_bwd_input_ok(&g));
    g = geom(2, 9, 13, 18, 24, 0, 0, 0, 0);
    CHECK(tfc_conv_winograd_fwd_ok(&g) && tfc_conv_winograd_bwd_input_ok(&g));
    g = geom(2, 10, 9, 19, 33, 2, 0, 1, 3);
    CHECK(tfc_conv_winograd_fwd_ok(&g));
    g = geom(2, 12, 9, 16, 21, 3, 0, 1, 3);
    CHECK(tfc_conv_winograd_bwd_input_ok(&g));
    /* the filter gradient: where the transforms pay for the products they save (enough channels) */
    g = geom(32, 56, 56, 64, 64, 1, 1, 1, 1);
    CHECK(tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(128, 13, 13, 32, 64, 0, 0, 0, 0); /* 11x11 outputs, partial last tiles */
    CHECK(tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(128, 13, 13, 32, 32, 0, 0, 0, 0);
    CHECK(!tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(32, 28, 28, 16, 32, 1, 1, 1, 1); /* few channels: the GEMM path */
    CHECK(!tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(1, 12, 14, 17, 20, 1, 1, 1, 1);
    CHECK(!tfc_conv_winograd_bwd_filter_ok(&g));
    /* the Winograd filter gradient cases of tests/ops/cases_conv.c */
    g = geom(1, 12, 14, 40, 48, 1, 1, 1, 1);
    CHECK(tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(2, 10, 14, 28, 42, 0, 0, 0, 0);
    CHECK(tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(2, 11, 13, 48, 40, 1, 0, 0, 1);
    CHECK(tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(2, 10, 9, 64, 33, 2, 0, 1, 2);
    CHECK(tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(2, 11, 13, 42, 56, 1, 1, 1, 1); /* 11x13 outputs */
    CHECK(tfc_conv_winograd_bwd_filter_ok(&g));
    /* not worth it: few tiles (one 7x7 image), most of a tile past the output (3x3 outputs) */
    g = geom(1, 7, 7, 64, 64, 1, 1, 1, 1);
    CHECK(!tfc_conv_winograd_fwd_ok(&g) && !tfc_conv_winograd_bwd_input_ok(&g) && !tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(64, 5, 5, 64, 64, 0, 0, 0, 0);
    CHECK(!tfc_conv_winograd_fwd_ok(&g));
    g = geom(128, 28, 28, 1, 32, 0, 0, 0, 0); /* a one-channel image: the GEMM path */
    CHECK(!tfc_conv_winograd_fwd_ok(&g) && !tfc_conv_winograd_bwd_input_ok(&g) && !tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(8, 28, 28, 32, 64, 1, 1, 1, 1);
    g.dil_w = 2;
    CHECK(!tfc_conv_winograd_fwd_ok(&g) && !tfc_conv_winograd_bwd_filter_ok(&g));
    g = geom(8, 28, 28, 32, 64, 1, 1, 1, 1);
    g.groups = 2, g.k_c = 16;
    CHECK(!tfc_conv_winograd_fwd_ok(&g));
}

/* The ReLU of the output transform keeps NaN and writes +0 (never -0) for v <= 0, as the Relu op: a NaN bias
 * and a bias far below every sum, on channels in the 16-wide vector part (3, 5) and in the scalar tail (18, 19)
 * of 20 output channels. */
static void test_relu_edges(tfc_threadpool *pool) {
    tfc_conv_geom g = geom(2, 9, 7, 16, 20, 1, 1, 1, 1);
    const int64_t xl = g.batch * g.in_h * g.in_w * g.in_c, yl = g.batch * g.out_h * g.out_w * g.out_c;
    float *x = rand_buf(xl), *f = rand_buf(9 * g.in_c * g.out_c), *bias = rand_buf(g.out_c), *y = rand_buf(yl);
    double *want = malloc((size_t)yl * sizeof(double)), *ya = malloc((size_t)yl * sizeof(double));
    REQUIRE(want && ya);
    bias[3] = bias[18] = NAN;
    bias[5] = bias[19] = -1e6f;
    ref_fwd(&g, x, f, want, ya);
    tfc_status st = TFC_STATUS_INIT;
    CHECK(tfc_conv2d_winograd_fwd_f32(pool, &g, x, f, bias, true, y, &st));
    CHECK_OK(&st);
    int64_t bad = 0;
    for (int64_t i = 0; i < yl; i++) {
        const int64_t o = i % g.out_c;
        const double v = want[i] + bias[o];
        uint32_t bits;
        memcpy(&bits, &y[i], 4);
        const bool good = o == 3 || o == 18 ? y[i] != y[i]
                          : o == 5 || o == 19 ? bits == 0
                                              : fabs(y[i] - (v > 0 ? v : 0)) <= 2e-5 * (1 + fabs(v)) + 1.2e-7 * ya[i];
        if (!good && bad++ < 3) fprintf(stderr, "relu edges: element %lld (channel %lld) = %.9g\n", (long long)i, (long long)o, y[i]);
    }
    CHECK(bad == 0);
    free(x), free(f), free(bias), free(y), free(want), free(ya);
}

int main(void) {
    conv_test_rng = 0x9e3779b97f4a7c15ull;
    tfc_threadpool *pool = tfc_threadpool_new(3);
    test_relu_edges(pool);
    REQUIRE(pool);
    const char *isas[] = {"avx512", "avx2", "baseline"};
    for (int i = 0; i < 3; i++) run_isa(isas[i], pool);
    CHECK(tfc_sgemm_force_isa(NULL));
    test_degenerate();
    test_dispatch();
    if (tfc_sgemm_force_isa("blas")) { /* products on cblas: the path declines */
        tfc_status st = TFC_STATUS_INIT;
        tfc_conv_geom g = geom(1, 4, 4, 16, 16, 1, 1, 1, 1);
        float z[256] = {0};
        CHECK(!tfc_conv_winograd_fwd_ok(&g));
        CHECK(!tfc_conv2d_winograd_fwd_f32(NULL, &g, z, z, NULL, false, z, &st));
        CHECK_CODE(&st, TFC_UNIMPLEMENTED);
        CHECK(!tfc_conv_winograd_bwd_filter_ok(&g));
        CHECK(!tfc_conv2d_winograd_bwd_filter_f32(NULL, &g, z, z, z, &st));
        CHECK_CODE(&st, TFC_UNIMPLEMENTED);
        CHECK(tfc_sgemm_force_isa(NULL));
    }
    tfc_threadpool_free(pool);
    printf("%d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures ? 1 : 0;
}
