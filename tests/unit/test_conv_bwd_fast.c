/* The Conv2D backprop fast paths called directly, against float64 loops: the small-channel Winograd filter
 * gradient (conv_wgrad_small.c) on odd sizes (partial tiles), SAME, VALID and EXPLICIT paddings, 1-4 input
 * channels, output channel counts that are not multiples of 16, batch 1, on no pool and on pools of 2 and 3
 * threads; and which geometries the dispatch sends to it. Buffers are allocated to their exact sizes so
 * ASan sees any access past them. */
#include "conv_test_util.h"

static bool check_wgrad_small(const tfc_conv_geom *g, tfc_threadpool *pool) {
    const int64_t xl = g->batch * g->in_h * g->in_w * g->in_c, yl = g->batch * g->out_h * g->out_w * g->out_c;
    const int64_t fl = 9 * g->in_c * g->out_c;
    float *x = rand_buf(xl), *dy = rand_buf(yl), *df = rand_buf(fl);
    double *want = malloc((size_t)fl * sizeof(double)), *mag = malloc((size_t)fl * sizeof(double));
    REQUIRE(want && mag);
    ref_bwd_filter(g, x, dy, want, mag);
    tfc_status st = TFC_STATUS_INIT;
    bool ok = tfc_conv2d_wgrad_small_f32(pool, g, x, dy, df, &st);
    CHECK(ok);
    CHECK_OK(&st);
    ok = ok && close_all("small-channel Winograd filter gradient", g, df, want, mag, fl);
    /* the same result again: units are summed in a fixed order */
    float *df2 = rand_buf(fl);
    CHECK(tfc_conv2d_wgrad_small_f32(pool, g, x, dy, df2, &st));
    CHECK(!memcmp(df, df2, (size_t)fl * sizeof(float)));
    free(x), free(dy), free(df), free(df2), free(want), free(mag);
    return ok;
}

static void test_wgrad_small(tfc_threadpool *pool2, tfc_threadpool *pool3) {
    /* n, h, w, c, co, pads */
    static const int64_t cases[][9] = {
        {4, 28, 28, 1, 32, 0, 0, 0, 0},  /* the demo's first layer, smaller batch: 26x26 output */
        {1, 9, 8, 1, 17, 0, 0, 0, 0},    /* batch 1, odd output height, 17 channels (a scalar tail) */
        {2, 7, 9, 3, 20, 1, 1, 1, 1},    /* SAME, odd sizes, RGB */
        {3, 6, 5, 2, 33, 2, 0, 0, 1},    /* EXPLICIT, asymmetric */
        {1, 8, 6, 4, 18, 3, 1, 0, 4},    /* paddings over 2: tiles reading only padding */
        {1, 3, 3, 1, 16, 0, 0, 0, 0},    /* one output pixel */
        {2, 1, 1, 2, 5, 1, 1, 1, 1},     /* 1x1 image, SAME, fewer than 16 output channels */
        {5, 30, 31, 1, 64, 1, 1, 1, 1},  /* several blocks per unit */
        {2, 40, 300, 1, 8, 0, 0, 0, 0},  /* one tile row longer than a block's tiles */
        {4, 21, 23, 3, 40, 1, 1, 1, 1},  /* odd outputs, a scalar tail, several units on a pool */
    };
    bool ok = true;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && ok; i++) {
        const int64_t *c = cases[i];
        tfc_conv_geom g = geom(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]);
        ok = check_wgrad_small(&g, NULL) && check_wgrad_small(&g, pool2) && check_wgrad_small(&g, pool3);
    }
    printf("small-channel Winograd filter gradient: %s\n", ok ? "ok" : "FAILED");

    /* no input or output channels, empty batch: zeros / nothing; not 3x3 stride 1: an error */
    tfc_status st = TFC_STATUS_INIT;
    float df[9 * 2 * 3], z[64] = {0};
    for (int i = 0; i < 9 * 2 * 3; i++) df[i] = NAN;
    tfc_conv_geom g = geom(0, 4, 4, 2, 3, 0, 0, 0, 0);
    CHECK(tfc_conv2d_wgrad_small_f32(pool2, &g, z, z, df, &st));
    CHECK_OK(&st);
    for (int i = 0; i < 9 * 2 * 3; i++) CHECK(df[i] == 0.0f);
    g = geom(1, 4, 4, 2, 0, 0, 0, 0, 0);
    CHECK(tfc_conv2d_wgrad_small_f32(NULL, &g, z, z, df, &st));
    g = geom(1, 5, 5, 1, 3, 0, 0, 0, 0);
    g.stride_w = 2;
    CHECK(!tfc_conv2d_wgrad_small_f32(NULL, &g, z, z, df, &st));
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    CHECK(!tfc_conv_wgrad_small_ok(&g));
}

/* What the Conv2DBackpropFilter kernel sends to it. */
static void test_dispatch(void) {
    const char *env = getenv("TFC_CONV_WINOGRAD");
    if (env && !strcmp(env, "0")) return; /* switched off */
    tfc_conv_geom g = geom(128, 28, 28, 1, 32, 0, 0, 0, 0);
    CHECK(tfc_conv_wgrad_small_ok(&g));
    g = geom(1, 5, 7, 1, 3, 1, 1, 1, 1); /* one input channel: always */
    CHECK(tfc_conv_wgrad_small_ok(&g));
    g = geom(8, 32, 32, 2, 32, 1, 1, 1, 1);
    CHECK(tfc_conv_wgrad_small_ok(&g));
    g = geom(8, 32, 32, 2, 31, 1, 1, 1, 1); /* two with few output channels, three or more: the GEMM paths */
    CHECK(!tfc_conv_wgrad_small_ok(&g));
    g = geom(8, 32, 32, 3, 64, 1, 1, 1, 1);
    CHECK(!tfc_conv_wgrad_small_ok(&g));
    g = geom(8, 32, 32, 1, 16, 1, 1, 1, 1);
    g.dil_h = 2;
    CHECK(!tfc_conv_wgrad_small_ok(&g));
    g = geom(8, 32, 32, 2, 16, 1, 1, 1, 1);
    g.groups = 2, g.k_c = 1;
    CHECK(!tfc_conv_wgrad_small_ok(&g));
}

int main(void) {
    tfc_threadpool *pool2 = tfc_threadpool_new(2), *pool3 = tfc_threadpool_new(3);
    REQUIRE(pool2 && pool3);
    test_wgrad_small(pool2, pool3);
    test_dispatch();
    tfc_threadpool_free(pool2);
    tfc_threadpool_free(pool3);
    printf("%d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures ? 1 : 0;
}
