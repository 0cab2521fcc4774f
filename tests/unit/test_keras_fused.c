/* Keras Conv2D and Dense layers on the fused ops (_FusedConv2D, _FusedMatMul): for float32, a bias and a
 * relu / relu6 / elu / leaky_relu / linear activation the layer runs one fused op; its outputs and the
 * gradients of the input, kernel and bias (on a tape, with a random upstream gradient) must equal, bit for
 * bit, those of the separate ops (Conv2D or MatMul, BiasAdd, the activation) run on the same weights. Counting kernels
 * (wrapping the registered ones) check which path each layer took: other activations, no bias and
 * channels_first stay on the separate ops. */
#include "kernels/cpu/kernels.h"
#include "keras/keras_internal.h"
#include "tfc/keras.h"
#include "fused_test_util.h"

extern const tfc_kernel_def tfc_cpu_kernel_defs_fused[], tfc_cpu_kernel_defs_nn[];

static tfc_ctx *ctx;
static const tfc_kernel_def *def_conv, *def_mm, *def_bias; /* the built-in kernels (instances with parsed attrs) */
static tfc_kernel_fn orig_conv, orig_mm, orig_bias;
static int n_conv, n_mm, n_bias;

static const tfc_kernel_def *find(const tfc_kernel_def *t, const char *op) {
    for (; t->op; t++)
        if (!strcmp(t->op, op)) return t;
    return NULL;
}
static bool count_conv(tfc_kernel_ctx *k, tfc_status *st) { return n_conv++, orig_conv(k, st); }
static bool count_mm(tfc_kernel_ctx *k, tfc_status *st) { return n_mm++, orig_mm(k, st); }
static bool count_bias(tfc_kernel_ctx *k, tfc_status *st) { return n_bias++, orig_bias(k, st); }

/* registers def's kernel with its compute counted (the same create and destroy) */
static bool wrap(const tfc_kernel_def *def, tfc_kernel_fn *orig, tfc_kernel_fn counted, tfc_status *st) {
    tfc_kernel_def w = *def;
    *orig = def->compute;
    w.compute = counted;
    return tfc_kernel_register_def(&w, st);
}

/* Largest |a - b| / (1 + |b|) over two float tensors of one shape (inf when the shapes differ). */
static double max_diff(const tfc_tensor *a, const tfc_tensor *b) {
    if (!a || !b || !tfc_shape_equal(tfc_tensor_shape(a), tfc_tensor_shape(b))) return INFINITY;
    const float *x = tfc_tensor_data(a), *y = tfc_tensor_data(b);
    double m = 0;
    for (int64_t i = 0; i < tfc_tensor_num_elements(a); i++) {
        double d = isnan(x[i]) && isnan(y[i]) ? 0 : fabs((double)x[i] - y[i]) / (1 + fabs((double)y[i]));
        if (!(d <= m)) m = d;
    }
    return m;
}

/* The separate ops of the layer `l` on x: Conv2D (NHWC or NCHW attrs) or MatMul, BiasAdd, the activation. */
typedef struct {
    bool conv;
    const char *padding, *data_format;
    int64_t strides[4], dilations[4];
    const char *activation;
} ref_spec;

static tfc_tensor *reference(const ref_spec *r, tfc_tensor *x, tfc_variable *kv, tfc_variable *bv, tfc_status *st) {
    tfc_tensor *k = tfc_variable_read(ctx, kv, st), *y;
    if (!k) return NULL;
    if (r->conv) {
        tfc_attr a[4] = {TFC_ATTR_INTS("strides", r->strides, 4), TFC_ATTR_S("padding", r->padding),
                         TFC_ATTR_S("data_format", r->data_format), TFC_ATTR_INTS("dilations", r->dilations, 4)};
        y = tfc_emit(ctx, "Conv2D", (tfc_tensor *[]){x, k}, 2, a, 4, st);
    } else if (tfc_tensor_rank(x) == 2) {
        y = tfc_emit(ctx, "MatMul", (tfc_tensor *[]){x, k}, 2, NULL, 0, st);
    } else { /* [b, t, in] -> [b * t, in] @ k -> [b, t, units] */
        int64_t d2[2] = {-1, tfc_tensor_dim(x, -1)}, d3[3] = {tfc_tensor_dim(x, 0), tfc_tensor_dim(x, 1), tfc_tensor_dim(k, 1)};
        tfc_tensor *s2 = tfc_vec_i64(d2, 2, st), *s3 = tfc_vec_i64(d3, 3, st);
        REQUIRE(s2 && s3);
        tfc_tensor *x2 = tfc_emit(ctx, "Reshape", (tfc_tensor *[]){x, s2}, 2, NULL, 0, st);
        tfc_tensor *y2 = x2 ? tfc_emit(ctx, "MatMul", (tfc_tensor *[]){x2, k}, 2, NULL, 0, st) : NULL;
        y = y2 ? tfc_emit(ctx, "Reshape", (tfc_tensor *[]){y2, s3}, 2, NULL, 0, st) : NULL;
        tfc_tensor_unref(s2);
        tfc_tensor_unref(s3);
    }
    if (!y) return NULL;
    if (bv) {
        tfc_tensor *b = tfc_variable_read(ctx, bv, st);
        tfc_attr df = TFC_ATTR_S("data_format", r->data_format ? r->data_format : "NHWC");
        if (!b || !(y = tfc_emit(ctx, "BiasAdd", (tfc_tensor *[]){y, b}, 2, &df, 1, st))) return NULL;
    }
    return tfc_activation_apply(ctx, r->activation, y, st);
}

/* Output and gradients (x, kernel, bias) of f on a tape: `layer` calls l, else the reference ops. */
static bool run(tfc_layer *l, const ref_spec *r, bool layer, tfc_tensor *x, tfc_tensor *dy, tfc_tensor *out[4]) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_variable *w[2] = {0};
    int nw = tfc_layer_weights(l, w, 2);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, x);
    out[0] = layer ? tfc_layer_call1(l, ctx, x, true, &st) : reference(r, x, w[0], nw > 1 ? w[1] : NULL, &st);
    bool ok = out[0] && tfc_tape_gradient_n(tape, &out[0], 1, &dy, &x, 1, w, nw, TFC_UNCONNECTED_ZERO, out + 1, &st);
    CHECK_OK(&st);
    tfc_tape_free(tape);
    return ok;
}

/* Calls l (built for x) and the reference; compares; checks which kernels ran. */
static void compare(const char *what, tfc_layer *l, const ref_spec *r, const int64_t *xd, int xr, bool expect_fused) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x = random_tensor(xd, xr, 2.0f);
    /* a first call builds the layer; then random weights (a zero bias would hide a missing BiasAdd) */
    tfc_tensor *y0 = tfc_layer_call1(l, ctx, x, false, &st);
    CHECK_OK(&st);
    REQUIRE(y0);
    tfc_variable *w[2] = {0};
    int nw = tfc_layer_weights(l, w, 2);
    tfc_tensor *nv[2] = {0};
    for (int i = 0; i < nw; i++) nv[i] = random_tensor(tfc_variable_shape(w[i])->dims, tfc_variable_shape(w[i])->rank, 0.5f);
    CHECK(tfc_layer_set_weights(l, ctx, nv, nw, &st));
    CHECK_OK(&st);
    tfc_tensor *dy = random_tensor(tfc_tensor_shape(y0)->dims, tfc_tensor_rank(y0), 1.0f);
    tfc_tensor *fused[4] = {0}, *sep[4] = {0};
    int c0 = n_conv, m0 = n_mm, b0 = n_bias;
    bool ok = run(l, r, true, x, dy, fused);
    int dc = n_conv - c0, dm = n_mm - m0, db = n_bias - b0;
    ok = ok && run(l, r, false, x, dy, sep);
    CHECK(ok);
    /* The fused kernels round as the separate ops do (the sum, then + bias, then the activation; the bias
     * gradient summed in BiasAddGrad's order): the same numbers, bit for bit. */
    const char *names[4] = {"output", "d input", "d kernel", "d bias"};
    for (int i = 0; ok && i < 1 + 1 + nw; i++) {
        double d = max_diff(fused[i], sep[i]);
        if (d != 0) fprintf(stderr, "%s: %s differs from the separate ops by %g\n", what, names[i], d);
        CHECK(d == 0);
    }
    if (expect_fused) {
        CHECK(dc + dm == 1 && db == 0); /* one fused op forward; no BiasAdd */
    } else {
        CHECK(dc + dm == 0);
    }
    if ((dc + dm == 1) != expect_fused) fprintf(stderr, "%s: fused %d, expected %d\n", what, dc + dm, expect_fused);
    tfc_tensor_unref(x);
    tfc_tensor_unref(dy);
    for (int i = 0; i < nw; i++) tfc_tensor_unref(nv[i]);
    tfc_scope_end(ctx);
}

static void conv_case(const char *act, const char *padding, int64_t stride, int64_t groups, int64_t filters,
                      const int64_t xd[4], bool use_bias, bool channels_first, bool expect_fused) {
    tfc_layer *l = tfc_layers_conv2d(.filters = filters, .kernel_size = {3, 3}, .strides = {stride, stride},
                                     .padding = padding, .groups = groups, .activation = act,
                                     .use_bias = use_bias ? TFC_YES : TFC_NO,
                                     .data_format = channels_first ? "channels_first" : "channels_last");
    REQUIRE(l);
    ref_spec r = {.conv = true, .padding = !strcmp(padding, "same") ? "SAME" : "VALID",
                  .data_format = channels_first ? "NCHW" : "NHWC", .dilations = {1, 1, 1, 1}, .activation = act};
    for (int i = 0; i < 4; i++) r.strides[i] = 1;
    r.strides[channels_first ? 2 : 1] = r.strides[channels_first ? 3 : 2] = stride;
    char what[160];
    snprintf(what, sizeof what, "Conv2D(%lld, %s, %s, stride %lld, groups %lld%s%s) on [%lld,%lld,%lld,%lld]",
             (long long)filters, act, padding, (long long)stride, (long long)groups, use_bias ? "" : ", no bias",
             channels_first ? ", channels_first" : "", (long long)xd[0], (long long)xd[1], (long long)xd[2],
             (long long)xd[3]);
    compare(what, l, &r, xd, 4, expect_fused);
    tfc_layer_unref(l);
}

static void dense_case(const char *act, int64_t units, const int64_t *xd, int xr, bool use_bias, bool expect_fused) {
    tfc_layer *l = tfc_layers_dense(.units = units, .activation = act, .use_bias = use_bias ? TFC_YES : TFC_NO);
    REQUIRE(l);
    ref_spec r = {.conv = false, .activation = act};
    char what[128];
    snprintf(what, sizeof what, "Dense(%lld, %s%s) on rank %d", (long long)units, act, use_bias ? "" : ", no bias", xr);
    compare(what, l, &r, xd, xr, expect_fused);
    tfc_layer_unref(l);
}

int main(void) {
    test_rng = 777u;
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    REQUIRE((def_conv = find(tfc_cpu_kernel_defs_fused, "_FusedConv2D")) &&
            (def_mm = find(tfc_cpu_kernel_defs_fused, "_FusedMatMul")) && (def_bias = find(tfc_cpu_kernel_defs_nn, "BiasAdd")));
    REQUIRE(wrap(def_conv, &orig_conv, count_conv, &st) && wrap(def_mm, &orig_mm, count_mm, &st) &&
            wrap(def_bias, &orig_bias, count_bias, &st));

    /* the demo CNN's layers (batch 3), odd sizes, strides, groups, every fused activation */
    conv_case("relu", "valid", 1, 1, 32, (const int64_t[]){3, 28, 28, 1}, true, false, true);
    conv_case("relu", "valid", 1, 1, 64, (const int64_t[]){3, 13, 13, 32}, true, false, true);
    conv_case("relu", "same", 2, 1, 17, (const int64_t[]){1, 9, 7, 3}, true, false, true);
    conv_case("relu6", "same", 1, 1, 20, (const int64_t[]){2, 6, 5, 4}, true, false, true);
    conv_case("elu", "valid", 1, 2, 6, (const int64_t[]){2, 7, 6, 4}, true, false, true);
    conv_case("leaky_relu", "same", 1, 1, 5, (const int64_t[]){1, 5, 5, 2}, true, false, true);
    conv_case("linear", "valid", 1, 1, 8, (const int64_t[]){2, 5, 6, 3}, true, false, true);
    /* the Winograd path (3x3 stride 1, 16+ channels each way): every fused activation */
    conv_case("relu6", "same", 1, 1, 20, (const int64_t[]){2, 11, 9, 17}, true, false, true);
    conv_case("elu", "valid", 1, 1, 24, (const int64_t[]){2, 9, 13, 18}, true, false, true);
    conv_case("leaky_relu", "same", 1, 1, 16, (const int64_t[]){1, 12, 12, 16}, true, false, true);
    conv_case("linear", "valid", 1, 1, 24, (const int64_t[]){2, 9, 13, 18}, true, false, true);
    /* the separate ops: other activations, no bias, channels_first */
    conv_case("tanh", "same", 1, 1, 4, (const int64_t[]){1, 5, 5, 2}, true, false, false);
    conv_case("relu", "same", 1, 1, 4, (const int64_t[]){1, 5, 5, 2}, false, false, false);
    conv_case("relu", "same", 1, 1, 4, (const int64_t[]){1, 2, 5, 5}, true, true, false);

    dense_case("relu", 128, (const int64_t[]){16, 784}, 2, true, true);
    dense_case("relu", 10, (const int64_t[]){7, 33}, 2, true, true);
    dense_case("relu6", 33, (const int64_t[]){5, 12}, 2, true, true);
    dense_case("elu", 9, (const int64_t[]){4, 20}, 2, true, true);
    dense_case("leaky_relu", 16, (const int64_t[]){3, 8}, 2, true, true);
    dense_case("linear", 7, (const int64_t[]){2, 3, 5}, 3, true, true);
    dense_case("relu", 6, (const int64_t[]){2, 4, 5}, 3, true, true);
    /* other activations: the bias in the product's epilogue, then the activation op (training too) */
    dense_case("softmax", 10, (const int64_t[]){8, 30}, 2, true, true);
    dense_case("softmax", 10, (const int64_t[]){128, 128}, 2, true, true);
    dense_case("tanh", 17, (const int64_t[]){1, 9}, 2, true, true);
    dense_case("sigmoid", 5, (const int64_t[]){2, 3, 7}, 3, true, true);
    dense_case("relu", 10, (const int64_t[]){8, 30}, 2, false, false);

    REQUIRE(tfc_kernel_register_def(def_conv, &st) && tfc_kernel_register_def(def_mm, &st) &&
            tfc_kernel_register_def(def_bias, &st));
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
