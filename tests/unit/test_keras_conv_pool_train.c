/* Conv2D(relu) -> MaxPooling2D under a training step's tape (_TfcFusedConv2DMaxPoolTrain, whose gradient is
 * _TfcMaxPoolReluBiasGrad then the convolution's backprops, or a first layer's _TfcFusedConv2DMaxPoolFilterGrad;
 * a first layer under a 2x2/stride-2 pool as _TfcFusedConv2DMaxPoolArgmax; src/keras/model.c,
 * src/kernels/cpu/fused_pool.c, conv_wgrad_small.c):
 *  - _TfcMaxPoolReluBiasGrad against MaxPoolGrad then _FusedBiasAddGrad(Relu), bit for bit, on 1, 2 and 3
 *    threads and every pooling SIMD table (AVX-512, AVX2, baseline, generic): the demo CNN's layer, odd sizes
 *    (VALID dropping the last row and column, SAME clipping the edge windows), overlapping 3x3 windows,
 *    stride past the window, channel counts not multiples of 16, batch 1, many chunks, and integer inputs
 *    full of ties and zeros (y == 0: the ReLU gradient's edge), with -0 and negative upstream gradients;
 *  - _TfcFusedConv2DMaxPoolFilterGrad against Conv2DBackpropFilter of _TfcMaxPoolReluBiasGrad's dz (df bit
 *    for bit, db within float32 rounding; float64 bit for bit), on shapes of its fused per-tile path (1 and 2
 *    input channels, odd VALID and SAME-clipped sizes, channel tails, batch 1, several units) and of the
 *    two-step form (3 input channels, overlapping pools, stride past the window), 1-3 threads;
 *  - _TfcFusedConv2DMaxPoolArgmax against _TfcFusedConv2DMaxPool (bit for bit) and its filter gradient
 *    against _TfcFusedConv2DMaxPoolFilterGrad of the conv output (df bit for bit; db too where both take the
 *    fused path), with ties and zeros, odd sizes, one-pixel outputs, 1-3 threads;
 *  - Sequential CNNs (the benchmark's, and odd sizes with SAME/overlapping pools) under a non-persistent
 *    tape (fused) against a persistent one (the layer-by-layer ops): outputs and the gradients of every
 *    weight bit for bit (the first layer's bias gradient within float32 rounding where its sum's order
 *    differs), batch 1 and 5, 1 and 2 threads, also with integer weights and inputs (ties, zeros); the fused
 *    gradient ops ran exactly when expected;
 *  - a fit (SGD) step with the fusion on and off (the context's keras_fuse_conv_pool switch): the same weights within float32
 *    rounding. */
#include <math.h>
#include <stdlib.h>

#include "kernels/cpu/kernels.h"
#include "kernels/cpu/pool_internal.h"
#include "keras/keras_internal.h"
#include "tfc/keras.h"
#include "fused_test_util.h"

extern const tfc_kernel_reg tfc_cpu_kernels_fused_pool[];

static tfc_kernel_fn orig_rbg, orig_fgrad, orig_agrad;
static int n_rbg, n_fgrad, n_agrad;
static bool count_agrad(tfc_kernel_ctx *k, tfc_status *st) { return n_agrad++, orig_agrad(k, st); }
static bool count_rbg(tfc_kernel_ctx *k, tfc_status *st) { return n_rbg++, orig_rbg(k, st); }
static bool count_fgrad(tfc_kernel_ctx *k, tfc_status *st) { return n_fgrad++, orig_fgrad(k, st); }

/* Whether float32 tensors a and b have one shape and |a - b| <= tol * (1 + |b|) everywhere. */
static bool close_to(const tfc_tensor *a, const tfc_tensor *b, float tol) {
    if (!a || !b || !tfc_shape_equal(tfc_tensor_shape(a), tfc_tensor_shape(b))) return false;
    const float *x = tfc_tensor_data(a), *y = tfc_tensor_data(b);
    for (int64_t i = 0; i < tfc_tensor_num_elements(a); i++)
        if (!(fabsf(x[i] - y[i]) <= tol * (1.0f + fabsf(y[i])))) return false;
    return true;
}

/* ---- _TfcFusedConv2DMaxPoolFilterGrad against Conv2DBackpropFilter of _TfcMaxPoolReluBiasGrad's dz ----
 * x [n, h, w, c], a 3x3 filter to co channels (conv padding cpad), y = Relu of a random conv output (its
 * values, not the convolution's: the op only reads it), 2x2/stride-2 pool (ppad) or k x k / stride s. df is
 * the same bits where the fused path runs (it forms the same dz, then the same kernel), db within float32
 * rounding of its other summation order; float64 (the two-step form) the same bits. */
static void fgrad_case(tfc_ctx *ctx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t co, const char *cpad,
                       int64_t k, int64_t s, const char *ppad, int ints, bool dbl) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    const int64_t oh = !strcmp(cpad, "SAME") ? h : h - 2, ow = !strcmp(cpad, "SAME") ? w : w - 2;
    tfc_tensor *x = random_tensor_ints((const int64_t[]){n, h, w, c}, 4, 1.0f, ints);
    tfc_tensor *f = random_tensor((const int64_t[]){3, 3, c, co}, 4, 1.0f);
    tfc_tensor *z = random_tensor_ints((const int64_t[]){n, oh, ow, co}, 4, 1.0f, ints);
    tfc_tensor *y = tfc_emit(ctx, "Relu", &z, 1, NULL, 0, &st);
    REQUIRE(y);
    int64_t ks[4] = {1, k, k, 1}, ss[4] = {1, s, s, 1}, s1[4] = {1, 1, 1, 1};
    tfc_attr pa[3] = {TFC_ATTR_INTS("ksize", ks, 4), TFC_ATTR_INTS("strides", ss, 4), TFC_ATTR_S("padding", ppad)};
    tfc_tensor *pooled = tfc_emit(ctx, "MaxPool", &y, 1, pa, 3, &st);
    REQUIRE(pooled);
    tfc_tensor *dp = random_tensor_ints(tfc_tensor_shape(pooled)->dims, 4, 2.0f, 0);
    float *d = tfc_tensor_mutable_data(dp);
    for (int64_t i = 0; i < tfc_tensor_num_elements(dp); i += 7) d[i] = -0.0f;
    tfc_tensor *ins[5] = {x, f, y, pooled, dp};
    if (dbl) {
        tfc_attr ca = TFC_ATTR_T("DstT", TFC_DOUBLE);
        for (int i = 0; i < 5; i++) REQUIRE((ins[i] = tfc_emit(ctx, "Cast", &ins[i], 1, &ca, 1, &st)));
    }
    tfc_tensor *want[2] = {0}, *got[2] = {0};
    REQUIRE(tfc_execute(ctx, "_TfcMaxPoolReluBiasGrad", (tfc_tensor *[]){ins[2], ins[3], ins[4]}, 3, pa, 3, want, 2,
                        &st) == 2);
    tfc_tensor *fs = tfc_vec_i32((const int32_t[]){3, 3, (int32_t)c, (int32_t)co}, 4, &st);
    tfc_attr ca[2] = {TFC_ATTR_INTS("strides", s1, 4), TFC_ATTR_S("padding", cpad)};
    tfc_tensor *df = tfc_emit(ctx, "Conv2DBackpropFilter", (tfc_tensor *[]){ins[0], fs, want[0]}, 3, ca, 2, &st);
    if (!df) fprintf(stderr, "%s\n", st.msg);
    REQUIRE(df);
    const char *ops[2] = {"BiasAdd", "Relu"};
    tfc_attr fa[6] = {TFC_ATTR_INTS("strides", s1, 4), TFC_ATTR_S("padding", cpad),
                      {.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = 2, .v.strs = ops},
                      TFC_ATTR_INTS("ksize", ks, 4), TFC_ATTR_INTS("pool_strides", ss, 4),
                      TFC_ATTR_S("pool_padding", ppad)};
    const int before = n_fgrad;
    REQUIRE(tfc_execute(ctx, "_TfcFusedConv2DMaxPoolFilterGrad", ins, 5, fa, 6, got, 2, &st) == 2);
    CHECK(n_fgrad == before + 1);
    bool ok_f, ok_b;
    if (dbl) {
        const size_t nf = (size_t)tfc_tensor_num_elements(df), nb = (size_t)tfc_tensor_num_elements(want[1]);
        ok_f = tfc_shape_equal(tfc_tensor_shape(got[0]), tfc_tensor_shape(df)) &&
               !memcmp(tfc_tensor_data(got[0]), tfc_tensor_data(df), nf * sizeof(double));
        ok_b = tfc_shape_equal(tfc_tensor_shape(got[1]), tfc_tensor_shape(want[1])) &&
               !memcmp(tfc_tensor_data(got[1]), tfc_tensor_data(want[1]), nb * sizeof(double));
    } else {
        ok_f = same(got[0], df);
        ok_b = close_to(got[1], want[1], 2e-5f);
    }
    if (!ok_f || !ok_b)
        fprintf(stderr, "filter grad case [%lld,%lld,%lld,%lld] -> %lld %s pool %lld/%lld %s ints %d f64 %d: df %d db %d\n",
                (long long)n, (long long)h, (long long)w, (long long)c, (long long)co, cpad, (long long)k,
                (long long)s, ppad, ints, dbl, ok_f, ok_b);
    CHECK(ok_f && ok_b);
    tfc_tensor_unref(fs);
    tfc_tensor_unref(x);
    tfc_tensor_unref(f);
    tfc_tensor_unref(z);
    tfc_tensor_unref(dp);
    tfc_scope_end(ctx);
}

/* ---- _TfcFusedConv2DMaxPoolArgmax and its filter gradient, against _TfcFusedConv2DMaxPool and
 * _TfcFusedConv2DMaxPoolFilterGrad of the conv output (_FusedConv2D): the pooled output the same bits; df the
 * same bits (the same dz bits into the same kernel); db the same bits where both take the small-channel fused
 * path (the same sums in the same order), else within float32 rounding. ---- */
static void argmax_case(tfc_ctx *ctx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t co, const char *cpad,
                        const char *ppad, int ints) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x = random_tensor_ints((const int64_t[]){n, h, w, c}, 4, 1.0f, ints);
    tfc_tensor *f = random_tensor_ints((const int64_t[]){3, 3, c, co}, 4, 1.0f, ints ? 1 : 0);
    tfc_tensor *b = random_tensor_ints((const int64_t[]){co}, 1, 0.5f, 0);
    if (ints) memset(tfc_tensor_mutable_data(b), 0, (size_t)co * sizeof(float)); /* exact zeros: ReLU's edge */
    int64_t ks[4] = {1, 2, 2, 1}, s1[4] = {1, 1, 1, 1};
    const char *ops[2] = {"BiasAdd", "Relu"};
    tfc_attr fa[8] = {TFC_ATTR_INTS("strides", s1, 4), TFC_ATTR_S("padding", cpad),
                      {.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = 2, .v.strs = ops},
                      TFC_ATTR_INTS("dilations", s1, 4), TFC_ATTR_I("num_args", 1), TFC_ATTR_INTS("ksize", ks, 4),
                      TFC_ATTR_INTS("pool_strides", ks, 4), TFC_ATTR_S("pool_padding", ppad)};
    tfc_tensor *am[2] = {0};
    REQUIRE(tfc_execute(ctx, "_TfcFusedConv2DMaxPoolArgmax", (tfc_tensor *[]){x, f, b}, 3, fa, 8, am, 2, &st) == 2);
    tfc_tensor *pooled = tfc_emit(ctx, "_TfcFusedConv2DMaxPool", (tfc_tensor *[]){x, f, b}, 3, fa, 8, &st);
    tfc_tensor *conv = tfc_emit(ctx, "_FusedConv2D", (tfc_tensor *[]){x, f, b}, 3, fa, 5, &st);
    if (!pooled || !conv) fprintf(stderr, "%s\n", st.msg);
    REQUIRE(pooled && conv);
    const bool ok_y = same(am[0], pooled);
    tfc_tensor *dp = random_tensor_ints(tfc_tensor_shape(pooled)->dims, 4, 2.0f, 0);
    float *d = tfc_tensor_mutable_data(dp);
    for (int64_t i = 0; i < tfc_tensor_num_elements(dp); i += 7) d[i] = -0.0f;
    tfc_tensor *want[2] = {0}, *got[2] = {0};
    REQUIRE(tfc_execute(ctx, "_TfcFusedConv2DMaxPoolFilterGrad", (tfc_tensor *[]){x, f, conv, pooled, dp}, 5, fa, 8,
                        want, 2, &st) == 2);
    const int before = n_agrad;
    REQUIRE(tfc_execute(ctx, "_TfcFusedConv2DMaxPoolArgmaxFilterGrad", (tfc_tensor *[]){x, f, am[1], dp}, 4, fa, 8,
                        got, 2, &st) == 2);
    CHECK(n_agrad == before + 1);
    const bool small = c <= 2; /* (c 2 with co >= 32 or c 1: the fused path in both) */
    const bool ok_f = same(got[0], want[0]), ok_b = small && co >= 32 ? same(got[1], want[1]) : close_to(got[1], want[1], 2e-5f);
    if (!ok_y || !ok_f || !ok_b)
        fprintf(stderr, "argmax case [%lld,%lld,%lld,%lld] -> %lld %s pool %s ints %d: y %d df %d db %d\n",
                (long long)n, (long long)h, (long long)w, (long long)c, (long long)co, cpad, ppad, ints, ok_y, ok_f,
                ok_b);
    CHECK(ok_y && ok_f && ok_b);
    tfc_tensor_unref(x);
    tfc_tensor_unref(f);
    tfc_tensor_unref(b);
    tfc_tensor_unref(dp);
    tfc_scope_end(ctx);
}

static void argmax_cases(int threads) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(ctx);
    for (int ints = 0; ints <= 1; ints++) {
        argmax_case(ctx, 3, 28, 28, 1, 32, "VALID", "VALID", ints);  /* the demo CNN's first layer */
        argmax_case(ctx, 2, 13, 13, 1, 20, "VALID", "VALID", ints);  /* odd 11x11 output: last row/col dropped */
        argmax_case(ctx, 2, 9, 11, 1, 17, "VALID", "SAME", ints);    /* SAME pool clips the odd edges */
        argmax_case(ctx, 1, 7, 6, 1, 35, "SAME", "SAME", ints);      /* batch 1, SAME conv, tail of 3 */
        argmax_case(ctx, 2, 10, 9, 2, 32, "SAME", "VALID", ints);    /* 2 input channels */
        argmax_case(ctx, 2, 9, 9, 3, 8, "SAME", "SAME", ints);       /* 3 input channels: dz built */
        argmax_case(ctx, 9, 12, 12, 1, 32, "SAME", "VALID", ints);   /* several units on 2+ threads */
        argmax_case(ctx, 1, 3, 3, 1, 4, "VALID", "SAME", ints);      /* one pixel, one clipped window */
        argmax_case(ctx, 1, 128, 129, 1, 32, "VALID", "SAME", ints); /* one large image on 2+ threads: the whole
                                                                          batch's conv on the pool, then the pool */
    }
    tfc_ctx_free(ctx);
}

static void fgrad_cases(int threads) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(ctx);
    for (int ints = 0; ints <= 2; ints += 2) {
        fgrad_case(ctx, 3, 28, 28, 1, 32, "VALID", 2, 2, "VALID", ints, false); /* the demo CNN's first layer */
        fgrad_case(ctx, 2, 13, 13, 1, 20, "VALID", 2, 2, "VALID", ints, false); /* odd 11x11: last row/col dropped,
                                                                                   20 channels: a scalar tail */
        fgrad_case(ctx, 2, 9, 11, 1, 17, "VALID", 2, 2, "SAME", ints, false);   /* SAME pool clips odd edges */
        fgrad_case(ctx, 1, 7, 6, 1, 16, "SAME", 2, 2, "SAME", ints, false);     /* SAME conv, batch 1 */
        fgrad_case(ctx, 1, 5, 8, 1, 3, "SAME", 2, 2, "VALID", ints, false);     /* 3 channels: scalars only */
        fgrad_case(ctx, 2, 10, 9, 2, 32, "SAME", 2, 2, "VALID", ints, false);   /* 2 input channels */
        fgrad_case(ctx, 2, 12, 13, 2, 40, "VALID", 2, 2, "SAME", ints, false);  /* 2 input channels, tail of 8 */
        fgrad_case(ctx, 9, 12, 12, 1, 32, "SAME", 2, 2, "VALID", ints, false);  /* several units on 2+ threads */
        /* the two-step form: no fused path for these */
        fgrad_case(ctx, 2, 9, 9, 3, 8, "SAME", 2, 2, "VALID", ints, false);     /* 3 input channels */
        fgrad_case(ctx, 2, 9, 10, 1, 8, "SAME", 3, 2, "SAME", ints, false);     /* overlapping 3x3 pool */
        fgrad_case(ctx, 1, 8, 8, 1, 6, "SAME", 2, 3, "VALID", ints, false);     /* stride past the window */
        fgrad_case(ctx, 2, 9, 8, 1, 5, "VALID", 2, 2, "VALID", ints, true);     /* float64 */
    }
    tfc_ctx_free(ctx);
}

/* ---- the op against MaxPoolGrad + _FusedBiasAddGrad ---- */
static void op_case(tfc_ctx *ctx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t k, int64_t s, const char *pad,
                    int ints) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *y = random_tensor_ints((const int64_t[]){n, h, w, c}, 4, 1.0f, ints);
    int64_t ks[4] = {1, k, k, 1}, ss[4] = {1, s, s, 1};
    tfc_attr pa[3] = {TFC_ATTR_INTS("ksize", ks, 4), TFC_ATTR_INTS("strides", ss, 4), TFC_ATTR_S("padding", pad)};
    tfc_tensor *pooled = tfc_emit(ctx, "MaxPool", &y, 1, pa, 3, &st);
    REQUIRE(pooled);
    tfc_tensor *dp = random_tensor_ints(tfc_tensor_shape(pooled)->dims, 4, 2.0f, 0);
    float *d = tfc_tensor_mutable_data(dp);
    for (int64_t i = 0; i < tfc_tensor_num_elements(dp); i += 7) d[i] = -0.0f; /* -0 becomes +0 as MaxPoolGrad's */
    tfc_tensor *dx = tfc_emit(ctx, "MaxPoolGrad", (tfc_tensor *[]){y, pooled, dp}, 3, pa, 3, &st);
    tfc_attr ra = TFC_ATTR_S("activation", "Relu");
    tfc_tensor *want[2] = {0}, *got[2] = {0};
    REQUIRE(dx && tfc_execute(ctx, "_FusedBiasAddGrad", (tfc_tensor *[]){dx, y}, 2, &ra, 1, want, 2, &st) == 2);
    REQUIRE(tfc_execute(ctx, "_TfcMaxPoolReluBiasGrad", (tfc_tensor *[]){y, pooled, dp}, 3, pa, 3, got, 2, &st) == 2);
    const bool ok = same(got[0], want[0]) && same(got[1], want[1]);
    if (!ok)
        fprintf(stderr, "op case [%lld,%lld,%lld,%lld] k%lld s%lld %s ints %d: dz %d db %d\n", (long long)n,
                (long long)h, (long long)w, (long long)c, (long long)k, (long long)s, pad, ints,
                same(got[0], want[0]), same(got[1], want[1]));
    CHECK(ok);
    tfc_tensor_unref(y);
    tfc_tensor_unref(dp);
    tfc_scope_end(ctx);
}

static void op_cases(int threads) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(ctx);
    const char *tables[] = {"avx512", "avx2", "baseline", "generic"};
    for (int t = 0; t < 4; t++) {
        if (!tfc_pool_simd_force(tables[t])) continue; /* not on this CPU */
        for (int ints = 0; ints <= 2; ints += 2) {
            op_case(ctx, 3, 26, 26, 32, 2, 2, "VALID", ints); /* the demo CNN's first layer */
            op_case(ctx, 1, 7, 9, 5, 2, 2, "VALID", ints);    /* last row and column dropped */
            op_case(ctx, 2, 5, 7, 17, 2, 2, "SAME", ints);    /* clipped edge windows */
            op_case(ctx, 2, 9, 10, 4, 3, 2, "SAME", ints);    /* overlapping windows */
            op_case(ctx, 2, 9, 10, 36, 3, 1, "VALID", ints);  /* stride 1 */
            op_case(ctx, 1, 8, 8, 6, 2, 3, "SAME", ints);     /* uncovered rows and columns */
            op_case(ctx, 2, 11, 13, 20, 3, 3, "VALID", ints); /* disjoint 3x3 */
            op_case(ctx, 2, 7, 8, 5, 3, 3, "SAME", ints);     /* disjoint 3x3 padded on both sides */
            op_case(ctx, 1, 6, 6, 33, 2, 2, "VALID", ints);   /* batch 1 */
            op_case(ctx, 64, 12, 12, 16, 2, 2, "VALID", ints); /* many chunks */
            op_case(ctx, 5, 11, 11, 64, 2, 2, "VALID", ints); /* the second layer's (odd 11x11) */
        }
    }
    REQUIRE(tfc_pool_simd_force(NULL));
    tfc_ctx_free(ctx);
}

/* ---- Keras ---- */
static tfc_layer *conv(int64_t filters, const char *pad) {
    return tfc_layers_conv2d(.filters = filters, .kernel_size = {3}, .activation = "relu", .padding = pad);
}

static tfc_model *bench_model(tfc_ctx *ctx) {
    return tfc_sequential(ctx, (tfc_layer *[]){conv(32, NULL), tfc_layers_max_pooling2d(.pool_size = {2}),
                                               conv(64, NULL), tfc_layers_max_pooling2d(.pool_size = {2}),
                                               tfc_layers_flatten(), tfc_layers_dense(.units = 10, .activation = "softmax"),
                                               NULL});
}

static tfc_model *odd_model(tfc_ctx *ctx) {
    return tfc_sequential(
        ctx, (tfc_layer *[]){conv(8, "same"), tfc_layers_max_pooling2d(.pool_size = {3}, .strides = {2}, .padding = "same"),
                             conv(20, NULL), tfc_layers_max_pooling2d(.pool_size = {2}, .padding = "same"),
                             tfc_layers_flatten(), tfc_layers_dense(.units = 5), NULL});
}

static int model_vars(tfc_model *m, tfc_variable **vars, int max) {
    tfc_layer *ls[16];
    int nl = tfc_model_layers(m, ls, 16), nv = 0;
    for (int i = 0; i < nl; i++) nv += tfc_layer_weights(ls[i], vars + nv, max - nv);
    return nv;
}

/* output and gradients of every weight, under a persistent tape (unfused) or not (fused) */
static int run_tape(tfc_ctx *ctx, tfc_model *m, tfc_tensor *x, bool persistent, tfc_tensor **y, tfc_tensor **g) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *vars[16];
    const int nv = model_vars(m, vars, 16);
    tfc_tape *tape = tfc_tape_new(ctx, persistent, true, &st);
    REQUIRE(tape);
    *y = tfc_model_call(m, x, true, &st);
    REQUIRE(*y);
    /* a weighted sum, so that each output element has its own upstream gradient */
    tfc_tensor *w = random_tensor_ints(tfc_tensor_shape(*y)->dims, 2, 1.0f, 0);
    tfc_tensor *prod = tfc_emit(ctx, "Mul", (tfc_tensor *[]){*y, w}, 2, NULL, 0, &st);
    REQUIRE(prod);
    CHECK(tfc_tape_gradient(tape, prod, NULL, 0, vars, nv, TFC_UNCONNECTED_NONE, g, &st));
    tfc_tape_free(tape);
    tfc_tensor_unref(prod);
    tfc_tensor_unref(w);
    return nv;
}

static void keras_case(tfc_model *(*make)(tfc_ctx *), const int64_t in_dims[3], int threads, int64_t batch, bool ints) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(ctx);
    tfc_model *m = make(ctx);
    REQUIRE(m);
    const int64_t xd[4] = {batch, in_dims[0], in_dims[1], in_dims[2]};
    tfc_tensor *x = random_tensor_ints(xd, 4, 1.0f, ints ? 1 : 0);
    tfc_tensor *y0 = tfc_model_call(m, x, false, &st); /* builds */
    REQUIRE(y0);
    tfc_tensor_unref(y0);
    if (ints) { /* integer convolution outputs: ties in the pools and exact zeros before the ReLUs */
        tfc_variable *vars[16];
        const int nv = model_vars(m, vars, 16);
        for (int i = 0; i < nv; i++) {
            const tfc_shape *s = tfc_variable_shape(vars[i]);
            tfc_tensor *v = random_tensor_ints(s->dims, s->rank, 1.0f, s->rank == 1 ? 0 : 1);
            if (s->rank == 1) memset(tfc_tensor_mutable_data(v), 0, (size_t)tfc_tensor_num_elements(v) * sizeof(float));
            REQUIRE(tfc_variable_assign(ctx, vars[i], v, &st));
            tfc_tensor_unref(v);
        }
    }
    tfc_tensor *yf, *yu, *gf[16] = {0}, *gu[16] = {0};
    n_rbg = n_fgrad = n_agrad = 0;
    const uint32_t seed = test_rng;
    const int nv = run_tape(ctx, m, x, false, &yf, gf);
    const int fused = n_rbg, fused_f = n_fgrad, fused_a = n_agrad;
    test_rng = seed; /* the same output weights */
    n_rbg = n_fgrad = n_agrad = 0;
    run_tape(ctx, m, x, true, &yu, gu);
    /* the first layer (no input gradient) takes _TfcFusedConv2DMaxPoolArgmax's gradient (2x2 pools of stride
     * 2) or _TfcFusedConv2DMaxPoolFilterGrad, the second _TfcMaxPoolReluBiasGrad */
    CHECK(fused == 1 && fused_f + fused_a == 1 && fused_a == (make == bench_model) && n_rbg == 0 && n_fgrad == 0 &&
          n_agrad == 0);
    CHECK(same(yf, yu));
    for (int i = 0; i < nv; i++) {
        /* the first layer's bias gradient: a float32 sum in another order where the fused filter gradient
         * forms dz itself (one input channel: the bench model); everything else bit for bit */
        const bool ok = gf[i] && gu[i] && (i == 1 && make == bench_model ? close_to(gf[i], gu[i], 2e-5f) : same(gf[i], gu[i]));
        if (!ok) fprintf(stderr, "keras case threads %d batch %lld ints %d: gradient %d differs\n", threads, (long long)batch, ints, i);
        CHECK(ok);
        tfc_tensor_unref(gf[i]);
        tfc_tensor_unref(gu[i]);
    }
    tfc_tensor_unref(yf);
    tfc_tensor_unref(yu);
    tfc_tensor_unref(x);
    tfc_model_free(m);
    tfc_ctx_free(ctx);
}

/* a fit step with the fusion on, then off (on a copy of the initial weights): the same weights after, within
 * rounding */
static void fit_case(int threads) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(ctx);
    tfc_model *m[2] = {bench_model(ctx), bench_model(ctx)};
    REQUIRE(m[0] && m[1]);
    tfc_tensor *x = random_tensor_ints((const int64_t[]){48, 28, 28, 1}, 4, 1.0f, 0);
    tfc_tensor *labels = tfc_tensor_new(TFC_INT32, (const int64_t[]){48}, 1, &st);
    REQUIRE(labels);
    for (int i = 0; i < 48; i++) ((int32_t *)tfc_tensor_mutable_data(labels))[i] = (i * 7) % 10;
    for (int k = 0; k < 2; k++) {
        tfc_tensor *y = tfc_model_call(m[k], x, false, &st);
        REQUIRE(y);
        tfc_tensor_unref(y);
        REQUIRE(tfc_compile(m[k], &st, .optimizer = tfc_optimizers_sgd(.learning_rate = 0.05),
                            .loss_name = "sparse_categorical_crossentropy"));
    }
    tfc_layer *l0[16], *l1[16];
    const int nl = tfc_model_layers(m[0], l0, 16);
    REQUIRE(tfc_model_layers(m[1], l1, 16) == nl);
    for (int i = 0; i < nl; i++) {
        tfc_tensor *w[4] = {0};
        const int nw = tfc_layer_get_weights(l0[i], w, 4, &st);
        REQUIRE(nw >= 0 && (nw == 0 || tfc_layer_set_weights(l1[i], ctx, w, nw, &st)));
        for (int k = 0; k < nw; k++) tfc_tensor_unref(w[k]);
    }
    for (int k = 0; k < 2; k++) {
        tfc_runtime_config rc = *tfc_ctx_config(ctx);
        rc.keras_fuse_conv_pool = k == 0;
        tfc_ctx_set_config(ctx, &rc);
        n_rbg = n_fgrad = n_agrad = 0;
        CHECK(tfc_model_fit(m[k], x, labels,
                            &(tfc_fit_opts){.batch_size = 48, .epochs = 1, .shuffle = TFC_NO, .verbose = TFC_VERBOSE_SILENT},
                            NULL, &st));
        CHECK(k ? n_rbg == 0 && n_fgrad == 0 && n_agrad == 0 : n_rbg == 1 && n_agrad == 1 && n_fgrad == 0);
        /* (two pairs, one step) */
        rc.keras_fuse_conv_pool = true;
        tfc_ctx_set_config(ctx, &rc);
    }
    tfc_variable *v0[16], *v1[16];
    const int nv = model_vars(m[0], v0, 16);
    REQUIRE(model_vars(m[1], v1, 16) == nv);
    for (int i = 0; i < nv; i++) {
        tfc_tensor *a = tfc_variable_read(ctx, v0[i], &st), *b = tfc_variable_read(ctx, v1[i], &st);
        /* the first layer's bias gradient differs in rounding (its sum's order in the fused filter gradient):
         * the weights after one SGD step within float32 noise of it. (One step: from the second on, the forward
         * passes see weights that differ in rounding, which now and then flips a max-pool tie or a ReLU at 0 and
         * changes a gradient by a whole upstream value; Adam's m / sqrt(v) would also turn rounding noise in a
         * near-zero gradient into a step of up to the learning rate.) */
        const bool ok = close_to(a, b, 1e-6f);
        if (!ok) {
            const float *x = tfc_tensor_data(a), *y = tfc_tensor_data(b);
            double worst = 0;
            int64_t at = 0;
            for (int64_t e = 0; e < tfc_tensor_num_elements(a); e++)
                if (fabs((double)x[e] - y[e]) > worst) worst = fabs((double)x[e] - y[e]), at = e;
            fprintf(stderr, "fit threads %d: weight %d differs: [%lld] %.9g vs %.9g\n", threads, i, (long long)at,
                    (double)x[at], (double)y[at]);
        }
        CHECK(ok);
        tfc_tensor_unref(a);
        tfc_tensor_unref(b);
    }
    tfc_tensor_unref(x);
    tfc_tensor_unref(labels);
    tfc_model_free(m[0]);
    tfc_model_free(m[1]);
    tfc_ctx_free(ctx);
}

int main(void) {
    test_rng = 987654u;
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *init = tfc_ctx_new(NULL, &st); /* the registry, before the counting kernel replaces the op's */
    REQUIRE(init);
    for (const tfc_kernel_reg *r = tfc_cpu_kernels_fused_pool; r->op; r++)
        if (!strcmp(r->op, "_TfcMaxPoolReluBiasGrad")) orig_rbg = r->fn;
    for (const tfc_kernel_reg *r = tfc_cpu_kernels_fused_pool; r->op; r++)
        if (!strcmp(r->op, "_TfcFusedConv2DMaxPoolFilterGrad")) orig_fgrad = r->fn;
    for (const tfc_kernel_reg *r = tfc_cpu_kernels_fused_pool; r->op; r++)
        if (!strcmp(r->op, "_TfcFusedConv2DMaxPoolArgmaxFilterGrad")) orig_agrad = r->fn;
    REQUIRE(orig_rbg && orig_fgrad && orig_agrad);
    REQUIRE(tfc_kernel_register("_TfcFusedConv2DMaxPoolArgmaxFilterGrad", "CPU", count_agrad, &st));
    REQUIRE(tfc_kernel_register("_TfcMaxPoolReluBiasGrad", "CPU", count_rbg, &st));
    REQUIRE(tfc_kernel_register("_TfcFusedConv2DMaxPoolFilterGrad", "CPU", count_fgrad, &st));
    for (int t = 1; t <= 3; t++) op_cases(t);
    for (int t = 1; t <= 3; t++) fgrad_cases(t);
    for (int t = 1; t <= 3; t++) argmax_cases(t);
    for (int t = 1; t <= 2; t++)
        for (int b = 0; b < 2; b++) {
            keras_case(bench_model, (const int64_t[]){28, 28, 1}, t, b ? 5 : 1, false);
            keras_case(bench_model, (const int64_t[]){28, 28, 1}, t, b ? 5 : 1, true);
            keras_case(odd_model, (const int64_t[]){15, 13, 3}, t, b ? 5 : 1, false);
            keras_case(odd_model, (const int64_t[]){15, 13, 3}, t, b ? 5 : 1, true);
        }
    fit_case(1);
    fit_case(2);
    REQUIRE(tfc_kernel_register("_TfcMaxPoolReluBiasGrad", "CPU", orig_rbg, &st));
    REQUIRE(tfc_kernel_register("_TfcFusedConv2DMaxPoolFilterGrad", "CPU", orig_fgrad, &st));
    REQUIRE(tfc_kernel_register("_TfcFusedConv2DMaxPoolArgmaxFilterGrad", "CPU", orig_agrad, &st));
    tfc_ctx_free(init);
    TEST_MAIN_END();
}
