/* Conv2D -> MaxPooling2D inference as one op (_TfcFusedConv2DMaxPool, src/kernels/cpu/fused_pool.c; Keras
 * model calls with training=false, src/keras/model.c):
 *  - the op against _FusedConv2D then MaxPool on the same data, bit for bit, on 1 to 4 threads: shapes
 *    that reach the Winograd, implicit-GEMM and im2col convolutions, SAME/VALID pools with clipped or dropped
 *    edges, batch 1, batches cut into several slices, fewer images than threads (pool rows in bands), and the
 *    whole-batch path (few images, much work each);
 *  - a Sequential CNN called with training=false against the same layers called one by one (the unfused
 *    ops), bit for bit, with a counting kernel showing the fused op ran (once per Conv2D/MaxPooling2D pair);
 *    after set_weights and in-place updates (assign_add) of either kernel the fused result follows the new
 *    weights (the Winograd filter transform the op keeps between calls is not stale);
 *  - no inference fusion under a recording tape (the training fusion runs there instead:
 *    test_keras_conv_pool_train.c), with training=true, or where the convolution's output is also read
 *    elsewhere (a Functional model);
 *  - Dense(softmax) for inference (_FusedMatMul with the bias, then Softmax) against MatMul, BiasAdd, Softmax. */
#include "kernels/cpu/kernels.h"
#include "keras/keras_internal.h"
#include "tfc/keras.h"
#include "fused_test_util.h"

extern const tfc_kernel_def tfc_cpu_kernel_defs_fused_pool[];

static tfc_kernel_fn orig_fused;
static int n_fused;
static bool count_fused(tfc_kernel_ctx *k, tfc_status *st) { return n_fused++, orig_fused(k, st); }

/* ---- the op against _FusedConv2D + MaxPool ---- */
static void op_case(tfc_ctx *ctx, const int64_t xd[4], const int64_t fd[4], int64_t cs, const char *cpad, int64_t dil,
                    const char *act, int64_t pk, int64_t pstride, const char *ppad) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    const int64_t bd[1] = {fd[3]};
    tfc_tensor *x = random_tensor(xd, 4, 1.0f), *f = random_tensor(fd, 4, 0.5f), *b = random_tensor(bd, 1, 0.3f);
    int64_t strides[4] = {1, cs, cs, 1}, dils[4] = {1, dil, dil, 1}, ks[4] = {1, pk, pk, 1}, ps[4] = {1, pstride, pstride, 1};
    const char *ops[2] = {"BiasAdd", act};
    const tfc_attr fused = {.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = act ? 2 : 1, .v.strs = ops};
    tfc_attr ca[6] = {TFC_ATTR_INTS("strides", strides, 4), TFC_ATTR_S("padding", cpad), TFC_ATTR_INTS("dilations", dils, 4),
                      fused, TFC_ATTR_I("num_args", 1)};
    tfc_tensor *y1 = tfc_emit(ctx, "_FusedConv2D", (tfc_tensor *[]){x, f, b}, 3, ca, 5, &st);
    tfc_attr pa[3] = {TFC_ATTR_INTS("ksize", ks, 4), TFC_ATTR_INTS("strides", ps, 4), TFC_ATTR_S("padding", ppad)};
    tfc_tensor *want = y1 ? tfc_emit(ctx, "MaxPool", &y1, 1, pa, 3, &st) : NULL;
    tfc_attr fa[8] = {ca[0], ca[1], ca[2], ca[3], ca[4], TFC_ATTR_INTS("ksize", ks, 4), TFC_ATTR_INTS("pool_strides", ps, 4),
                      TFC_ATTR_S("pool_padding", ppad)};
    tfc_tensor *got = want ? tfc_emit(ctx, "_TfcFusedConv2DMaxPool", (tfc_tensor *[]){x, f, b}, 3, fa, 8, &st) : NULL;
    if (!got) fprintf(stderr, "error: %s\n", st.msg);
    /* again with the same filter: a kept Winograd transform, where that path runs */
    tfc_tensor *again = got ? tfc_emit(ctx, "_TfcFusedConv2DMaxPool", (tfc_tensor *[]){x, f, b}, 3, fa, 8, &st) : NULL;
    bool ok = got && same(got, want) && again && same(again, want);
    if (!ok)
        fprintf(stderr, "op: x [%lld,%lld,%lld,%lld] f [%lld,%lld,%lld,%lld] stride %lld %s dil %lld %s pool %lld/%lld %s on %d threads differs\n",
                (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3], (long long)fd[0], (long long)fd[1],
                (long long)fd[2], (long long)fd[3], (long long)cs, cpad, (long long)dil, act ? act : "linear", (long long)pk,
                (long long)pstride, ppad, tfc_threadpool_size(tfc_ctx_pool(ctx)));
    CHECK(ok);
    tfc_tensor_unref(x);
    tfc_tensor_unref(f);
    tfc_tensor_unref(b);
    tfc_scope_end(ctx);
}

static void op_cases(int threads) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(ctx);
    /* the demo CNN (Winograd for layer 2, implicit GEMM for one input channel), batch 1 and several slices */
    op_case(ctx, (const int64_t[]){1, 28, 28, 1}, (const int64_t[]){3, 3, 1, 32}, 1, "VALID", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){1, 13, 13, 32}, (const int64_t[]){3, 3, 32, 64}, 1, "VALID", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){37, 28, 28, 1}, (const int64_t[]){3, 3, 1, 32}, 1, "VALID", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){45, 13, 13, 32}, (const int64_t[]){3, 3, 32, 64}, 1, "VALID", 1, "Relu", 2, 2, "VALID");
    /* odd sizes and channel counts, SAME, other activations and pools */
    op_case(ctx, (const int64_t[]){3, 15, 14, 17}, (const int64_t[]){3, 3, 17, 20}, 1, "SAME", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){2, 9, 11, 3}, (const int64_t[]){3, 2, 3, 13}, 1, "SAME", 1, NULL, 3, 2, "SAME");
    op_case(ctx, (const int64_t[]){2, 10, 9, 4}, (const int64_t[]){3, 3, 4, 6}, 2, "SAME", 1, "Elu", 2, 1, "VALID");
    op_case(ctx, (const int64_t[]){3, 9, 10, 2}, (const int64_t[]){2, 3, 2, 5}, 1, "VALID", 2, "LeakyRelu", 2, 2, "SAME");
    op_case(ctx, (const int64_t[]){2, 7, 8, 5}, (const int64_t[]){3, 3, 5, 7}, 1, "SAME", 1, "Relu6", 3, 3, "VALID");
    /* fewer images than threads, little work each (a batch-1 inference on 2+ threads): each image's pool rows
     * in bands, one per thread, each band's conv rows (from an even row: Winograd's tiles) computed apart.
     * Odd sizes, SAME and VALID convs and pools, overlapping and clipped windows, strides, dilation, channel
     * counts off multiples of 16, Winograd with odd band boundaries */
    op_case(ctx, (const int64_t[]){1, 15, 14, 17}, (const int64_t[]){3, 3, 17, 20}, 1, "SAME", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){1, 21, 19, 24}, (const int64_t[]){3, 3, 24, 33}, 1, "VALID", 1, "Relu", 3, 2, "SAME");
    op_case(ctx, (const int64_t[]){1, 23, 22, 32}, (const int64_t[]){3, 3, 32, 48}, 1, "SAME", 1, NULL, 2, 2, "SAME");
    op_case(ctx, (const int64_t[]){1, 30, 29, 5}, (const int64_t[]){3, 3, 5, 19}, 1, "SAME", 1, "Relu", 3, 3, "VALID");
    op_case(ctx, (const int64_t[]){1, 33, 31, 3}, (const int64_t[]){3, 3, 3, 16}, 2, "SAME", 1, "Elu", 2, 1, "VALID");
    op_case(ctx, (const int64_t[]){1, 31, 30, 4}, (const int64_t[]){2, 3, 4, 24}, 1, "VALID", 2, "LeakyRelu", 2, 2, "SAME");
    op_case(ctx, (const int64_t[]){1, 27, 26, 2}, (const int64_t[]){5, 5, 2, 40}, 1, "VALID", 1, "Relu6", 3, 1, "VALID");
    op_case(ctx, (const int64_t[]){2, 17, 16, 16}, (const int64_t[]){3, 3, 16, 32}, 1, "VALID", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){3, 13, 13, 32}, (const int64_t[]){3, 3, 32, 64}, 1, "VALID", 1, "Relu", 2, 2, "VALID");
    /* VALID pools that read no last row or column (odd conv outputs): only the rows and columns read are
     * computed; with im2col (dilation), strides, the implicit GEMM, Winograd, in slices and in bands */
    op_case(ctx, (const int64_t[]){1, 12, 13, 3}, (const int64_t[]){2, 3, 3, 5}, 1, "VALID", 2, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){3, 12, 13, 3}, (const int64_t[]){2, 3, 3, 5}, 1, "VALID", 2, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){2, 15, 17, 6}, (const int64_t[]){3, 3, 6, 9}, 2, "VALID", 1, NULL, 3, 2, "VALID");
    op_case(ctx, (const int64_t[]){1, 19, 17, 20}, (const int64_t[]){3, 3, 20, 18}, 1, "SAME", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){5, 17, 19, 20}, (const int64_t[]){3, 3, 20, 18}, 1, "VALID", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){1, 16, 16, 8}, (const int64_t[]){3, 3, 8, 16}, 1, "VALID", 1, "Relu", 4, 4, "VALID");
    /* 1x1 filters (the pointwise GEMM, whose col matrix is the input only for an untrimmed output) */
    op_case(ctx, (const int64_t[]){1, 10, 11, 1}, (const int64_t[]){1, 1, 1, 1}, 1, "VALID", 1, NULL, 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){3, 11, 12, 4}, (const int64_t[]){1, 1, 4, 8}, 1, "SAME", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){4, 9, 10, 3}, (const int64_t[]){1, 1, 3, 5}, 1, "VALID", 1, "Relu", 3, 2, "VALID");
    /* few images with much work each: on several threads, the convolution over the whole batch */
    op_case(ctx, (const int64_t[]){1, 40, 40, 16}, (const int64_t[]){3, 3, 16, 32}, 1, "SAME", 1, "Relu", 2, 2, "VALID");
    op_case(ctx, (const int64_t[]){2, 36, 34, 8}, (const int64_t[]){5, 5, 8, 24}, 1, "VALID", 1, "Relu", 2, 2, "SAME");
    tfc_ctx_free(ctx);
}

/* ---- Keras ---- */
static tfc_layer *conv(int64_t filters, const char *act) {
    return tfc_layers_conv2d(.filters = filters, .kernel_size = {3}, .activation = act);
}

/* x through the layers one by one (training=false: the unfused ops) */
static tfc_tensor *layer_by_layer(tfc_ctx *ctx, tfc_model *m, tfc_tensor *x, tfc_status *st) {
    tfc_layer *ls[16];
    const int n = tfc_model_layers(m, ls, 16);
    tfc_tensor *y = tfc_tensor_ref(x);
    for (int i = 0; i < n && y; i++) {
        tfc_tensor *z = tfc_layer_call1(ls[i], ctx, y, false, st);
        tfc_tensor_unref(y);
        y = z;
    }
    return y;
}

static void keras_cases(int threads) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, &st);
    REQUIRE(ctx);
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){conv(32, "relu"), tfc_layers_max_pooling2d(.pool_size = {2}),
                                                       conv(64, "relu"), tfc_layers_max_pooling2d(.pool_size = {2}),
                                                       tfc_layers_flatten(), tfc_layers_dropout(.rate = 0.5),
                                                       tfc_layers_dense(.units = 10, .activation = "softmax"), NULL});
    REQUIRE(m);
    const int64_t batches[] = {1, 3, 40};
    for (int bi = 0; bi < 3; bi++) {
        tfc_tensor *x = random_tensor((const int64_t[]){batches[bi], 28, 28, 1}, 4, 1.0f);
        tfc_tensor *y0 = tfc_model_call(m, x, false, &st); /* builds the model (first call: layer by layer) */
        REQUIRE(y0);
        n_fused = 0;
        tfc_tensor *y = tfc_model_call(m, x, false, &st), *want = layer_by_layer(ctx, m, x, &st);
        CHECK(y && want && same(y, want));
        CHECK(n_fused == 2);
        tfc_tensor_unref(y);
        tfc_tensor_unref(want);
        tfc_tensor_unref(y0);
        tfc_tensor_unref(x);
    }
    tfc_layer *ls[16];
    REQUIRE(tfc_model_layers(m, ls, 16) == 7);
    tfc_tensor *x = random_tensor((const int64_t[]){5, 28, 28, 1}, 4, 1.0f);
    /* new weights (set_weights), then an in-place update (assign_add): the fused call follows both */
    tfc_tensor *w[2];
    REQUIRE(tfc_layer_get_weights(ls[2], w, 2, &st) == 2);
    tfc_tensor *nk = random_tensor(tfc_tensor_shape(w[0])->dims, 4, 0.2f), *nb = random_tensor(tfc_tensor_shape(w[1])->dims, 1, 0.2f);
    tfc_tensor *before = tfc_model_call(m, x, false, &st);
    REQUIRE(before && tfc_layer_set_weights(ls[2], ctx, (tfc_tensor *[]){nk, nb}, 2, &st));
    n_fused = 0;
    tfc_tensor *y = tfc_model_call(m, x, false, &st), *want = layer_by_layer(ctx, m, x, &st);
    CHECK(y && want && same(y, want) && !same(y, before) && n_fused == 2);
    tfc_tensor_unref(y);
    tfc_tensor_unref(want);
    tfc_variable *vars[2], *vars2[2];
    REQUIRE(tfc_layer_weights(ls[0], vars, 2) == 2 && tfc_layer_weights(ls[2], vars2, 2) == 2);
    tfc_tensor *delta = random_tensor(tfc_variable_shape(vars[0])->dims, 4, 0.1f);
    tfc_tensor *delta2 = random_tensor(tfc_variable_shape(vars2[0])->dims, 4, 0.1f);
    for (int round = 0; round < 2; round++) {
        /* the second layer's kernel (Winograd: its transform is kept between calls) in place, then the first's */
        tfc_tensor *prev = tfc_model_call(m, x, false, &st);
        REQUIRE(prev && tfc_variable_assign_add(ctx, round ? vars[0] : vars2[0], round ? delta : delta2, &st));
        y = tfc_model_call(m, x, false, &st), want = layer_by_layer(ctx, m, x, &st);
        CHECK(y && want && same(y, want) && !same(y, prev));
        tfc_tensor_unref(y);
        tfc_tensor_unref(want);
        tfc_tensor_unref(prev);
    }
    tfc_tensor_unref(delta2);
    /* training=true: the layers one by one (dropout active, no fused op) */
    n_fused = 0;
    y = tfc_model_call(m, x, true, &st);
    CHECK(y && n_fused == 0);
    tfc_tensor_unref(y);
    /* under a recording tape: not the inference op (the training one, whose gradient exists) */
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    REQUIRE(tape);
    n_fused = 0;
    y = tfc_model_call(m, x, false, &st);
    tfc_tensor *g[2] = {0};
    tfc_variable *dense_w[2];
    REQUIRE(tfc_layer_weights(ls[6], dense_w, 2) == 2);
    CHECK(y && n_fused == 0);
    /* the first convolution's and the Dense layer's kernels: both read (and recorded) with the tape on */
    CHECK(y && tfc_tape_gradient(tape, y, NULL, 0, (tfc_variable *[]){vars[0], dense_w[0]}, 2, TFC_UNCONNECTED_NONE, g,
                                 &st) &&
          g[0] && g[1]);
    tfc_tape_free(tape);
    tfc_tensor_unref(g[0]);
    tfc_tensor_unref(g[1]);
    tfc_tensor_unref(y);
    tfc_tensor_unref(before);
    tfc_tensor_unref(delta);
    tfc_tensor_unref(nk);
    tfc_tensor_unref(nb);
    tfc_tensor_unref(w[0]);
    tfc_tensor_unref(w[1]);
    tfc_tensor_unref(x);
    tfc_model_free(m);
    tfc_ctx_free(ctx);
}

/* A Functional model whose first convolution's output also feeds a second branch: not fused there (the
 * second pair is), and the outputs equal the layers' own. */
static void functional_case(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    tfc_ktensor *in = tfc_input(.shape = {12, 12, 3});
    REQUIRE(in);
    tfc_layer *c1 = conv(8, "relu"), *p1 = tfc_layers_max_pooling2d(.pool_size = {2}), *c2 = conv(16, "relu"),
              *p2 = tfc_layers_max_pooling2d(.pool_size = {2}), *gp = tfc_layers_global_max_pooling2d();
    REQUIRE(c1 && p1 && c2 && p2 && gp);
    tfc_ktensor *a = tfc_layer_apply(c1, &in, 1, &st), *b = a ? tfc_layer_apply(p1, &a, 1, &st) : NULL;
    tfc_ktensor *c = b ? tfc_layer_apply(c2, &b, 1, &st) : NULL, *d = c ? tfc_layer_apply(p2, &c, 1, &st) : NULL;
    tfc_ktensor *e = d ? tfc_layer_apply(gp, &a, 1, &st) : NULL; /* a read twice */
    REQUIRE(e);
    tfc_model *m = tfc_model_new(ctx, &in, 1, (tfc_ktensor *[]){d, e}, 2, NULL, &st);
    REQUIRE(m);
    tfc_tensor *x = random_tensor((const int64_t[]){3, 12, 12, 3}, 4, 1.0f), *y[2] = {0};
    CHECK(tfc_model_call_n(m, &x, 1, y, 2, false, &st)); /* builds the layers */
    tfc_tensor_unref(y[0]);
    tfc_tensor_unref(y[1]);
    n_fused = 0;
    CHECK(tfc_model_call_n(m, &x, 1, y, 2, false, &st));
    if (n_fused != 1) fprintf(stderr, "functional: %d fused ops\n", n_fused);
    CHECK(n_fused == 1);
    tfc_tensor *ya = tfc_layer_call1(c1, ctx, x, false, &st), *yb = ya ? tfc_layer_call1(p1, ctx, ya, false, &st) : NULL;
    tfc_tensor *yc = yb ? tfc_layer_call1(c2, ctx, yb, false, &st) : NULL, *yd = yc ? tfc_layer_call1(p2, ctx, yc, false, &st) : NULL;
    tfc_tensor *ye = yd ? tfc_layer_call1(gp, ctx, ya, false, &st) : NULL;
    CHECK(ye && same(y[0], yd) && same(y[1], ye));
    tfc_tensor *all[] = {x, y[0], y[1], ya, yb, yc, yd, ye};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfc_tensor_unref(all[i]);
    tfc_model_free(m);
    tfc_ctx_free(ctx);
}

/* Dense with an activation _FusedMatMul lacks (softmax), called for inference: _FusedMatMul with the bias
 * only, then the activation; the same bits as MatMul, BiasAdd, Softmax. */
static void dense_softmax_case(int64_t batch, int64_t in, int64_t units) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    tfc_layer *l = tfc_layers_dense(.units = units, .activation = "softmax");
    REQUIRE(l);
    tfc_tensor *x = random_tensor((const int64_t[]){batch, in}, 2, 1.0f);
    tfc_tensor *y0 = tfc_layer_call1(l, ctx, x, false, &st); /* builds */
    tfc_variable *w[2];
    REQUIRE(y0 && tfc_layer_weights(l, w, 2) == 2);
    tfc_tensor *nb = random_tensor((const int64_t[]){units}, 1, 0.5f);
    REQUIRE(tfc_variable_assign(ctx, w[1], nb, &st)); /* a zero bias would hide a missing one */
    tfc_tensor *y = tfc_layer_call1(l, ctx, x, false, &st);
    tfc_tensor *k = tfc_variable_read(ctx, w[0], &st), *b = tfc_variable_read(ctx, w[1], &st);
    tfc_tensor *mm = tfc_emit(ctx, "MatMul", (tfc_tensor *[]){x, k}, 2, NULL, 0, &st);
    tfc_tensor *ba = mm ? tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){mm, b}, 2, NULL, 0, &st) : NULL;
    tfc_tensor *want = ba ? tfc_emit(ctx, "Softmax", &ba, 1, NULL, 0, &st) : NULL;
    CHECK(y && want && same(y, want));
    tfc_tensor *all[] = {x, y0, nb, y, k, b, mm, ba, want};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfc_tensor_unref(all[i]);
    tfc_layer_unref(l);
    tfc_ctx_free(ctx);
}

int main(void) {
    test_rng = 12345u;
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *init = tfc_ctx_new(NULL, &st); /* the registry, before the counting kernel replaces the op's */
    REQUIRE(init);
    const tfc_kernel_def *orig = NULL; /* an instance kernel (its Winograd transforms): wrapped with its state */
    for (const tfc_kernel_def *d = tfc_cpu_kernel_defs_fused_pool; d->op; d++)
        if (!strcmp(d->op, "_TfcFusedConv2DMaxPool")) orig = d;
    REQUIRE(orig && (orig_fused = orig->compute));
    tfc_kernel_def counting = *orig;
    counting.compute = count_fused;
    REQUIRE(tfc_kernel_register_def(&counting, &st));
    for (int t = 1; t <= 4; t++) op_cases(t);
    keras_cases(1);
    keras_cases(2);
    functional_case();
    dense_softmax_case(1, 1600, 10);
    dense_softmax_case(7, 33, 12);
    REQUIRE(tfc_kernel_register_def(orig, &st));
    tfc_ctx_free(init);
    TEST_MAIN_END();
}
