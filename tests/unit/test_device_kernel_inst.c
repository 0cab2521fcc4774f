/* The hot kernels as instances (device/device.h): attrs parsed and validated when an instance is created (bad
 * attrs fail there, naming the op and the attr, also in a graph whose shapes left them unchecked), and the
 * forward convolutions' kept Winograd filter transforms (kernels/cpu/filter_cache.h) invalidated by an in-place
 * update of the filter variable (its buffer's version), eagerly and in a graph function. */
#include <math.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "core/variable.h"
#include "device/device.h"
#include "eager/kernel_cache.h"
#include "kernels/cpu/conv_internal.h"
#include "kernels/cpu/filter_cache.h"
#include "ops/registry.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

#define N 1
#define H 12
#define W 12
#define C 16
#define CO 16

static const int64_t strides4[4] = {1, 1, 1, 1};

/* SAME 3x3 stride-1 convolution in double, the reference */
static void conv_ref(const float *x, const float *f, double *y) {
    for (int h = 0; h < H; h++)
        for (int w = 0; w < W; w++)
            for (int co = 0; co < CO; co++) {
                double s = 0;
                for (int kh = 0; kh < 3; kh++)
                    for (int kw = 0; kw < 3; kw++) {
                        int ih = h + kh - 1, iw = w + kw - 1;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                        for (int ci = 0; ci < C; ci++)
                            s += (double)x[(ih * W + iw) * C + ci] * f[((kh * 3 + kw) * C + ci) * CO + co];
                    }
                y[(h * W + w) * CO + co] = s;
            }
}

static double max_err(const tfc_tensor *y, const float *x, const float *f) {
    static double ref[H * W * CO];
    conv_ref(x, f, ref);
    const float *p = tfc_tensor_data(y);
    double e = 0;
    for (int i = 0; i < H * W * CO; i++) e = fmax(e, fabs(p[i] - ref[i]) / (1 + fabs(ref[i])));
    return e;
}

static tfc_tensor *conv(tfc_ctx *c, tfc_tensor *x, tfc_tensor *f, tfc_status *st) {
    tfc_tensor *in[2] = {x, f}, *out[1] = {0};
    const tfc_attr a[] = {TFC_ATTR_INTS("strides", strides4, 4), TFC_ATTR_S("padding", "SAME")};
    return tfc_execute(c, "Conv2D", in, 2, a, 2, out, 1, st) == 1 ? out[0] : NULL;
}

/* the eager Conv2D instance's filter cache for these inputs (found in the context's kernel cache) */
static int64_t eager_transforms(tfc_tensor *x, tfc_tensor *f, tfc_status *st) {
    const tfc_op *op = tfc_op_lookup("Conv2D");
    const tfc_attr a[] = {TFC_ATTR_INTS("strides", strides4, 4), TFC_ATTR_S("padding", "SAME")};
    tfc_tensor *in[2] = {x, f};
    tfc_attrs ra;
    tfc_dtype odt[1], dts[2] = {TFC_FLOAT, TFC_FLOAT};
    int n_out = 0;
    if (!tfc_resolve_call(op, in, 2, a, 2, &ra, &n_out, odt, st)) return -1;
    tfc_kernel_inst *i = tfc_kernel_cache_instance_of(ctx, op, &ra, dts, 2, st);
    if (!i) return -1;
    const tfc_conv_state *s = i->state;
    int64_t n = s && s->fc ? tfc_filter_cache_transforms(s->fc) : -1;
    tfc_kernel_inst_unref(i);
    return n;
}

static void fill(float *p, int n, float scale, int seed) {
    for (int i = 0; i < n; i++) p[i] = scale * (float)(((i * 37 + seed * 11) % 23) - 11) / 11.0f;
}

static bool sgd_step(tfc_variable *v, const float *delta, float lr, tfc_status *st) {
    const int64_t fd[4] = {3, 3, C, CO};
    tfc_tensor *d = tfc_tensor_from_data(TFC_FLOAT, fd, 4, delta, sizeof(float) * 9 * C * CO, st);
    tfc_tensor *alpha = d ? tfc_scalar_f32(lr, st) : NULL;
    tfc_tensor *in[3] = {tfc_variable_handle(v), alpha, d};
    bool ok = alpha && tfc_execute(ctx, "ResourceApplyGradientDescent", in, 3, NULL, 0, NULL, 0, st) == 0;
    tfc_tensor_unref(alpha);
    tfc_tensor_unref(d);
    return ok;
}

static int conv_of_var(tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                tfc_status *st) {
    (void)n_in, (void)max_out;
    tfc_tensor *f = tfc_variable_read(c, user, st);
    return f && (out[0] = conv(c, in[0], f, st)) ? 1 : -1;
}

static void test_filter_update_invalidates(void) {
    tfc_status st = TFC_STATUS_INIT;
    static float xs[N * H * W * C], f0[9 * C * CO], delta[9 * C * CO], f1[9 * C * CO];
    fill(xs, N * H * W * C, 1.0f, 1);
    fill(f0, 9 * C * CO, 0.2f, 2);
    fill(delta, 9 * C * CO, 1.0f, 3);
    const float lr = 0.5f;
    for (int i = 0; i < 9 * C * CO; i++) f1[i] = f0[i] - lr * delta[i];
    const int64_t xd[4] = {N, H, W, C}, fd[4] = {3, 3, C, CO};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, xd, 4, xs, sizeof xs, &st);
    tfc_tensor *init = tfc_tensor_from_data(TFC_FLOAT, fd, 4, f0, sizeof f0, &st);
    REQUIRE(x && init);
    tfc_variable *v = tfc_variable_new(ctx, init, true, "kernel", &st);
    REQUIRE(v);
    tfc_tensor_unref(init);

    /* two forwards with the same weights: one transform, the second call served from the instance */
    for (int call = 0; call < 2; call++) {
        tfc_tensor *f = tfc_variable_read(ctx, v, &st);
        REQUIRE(f);
        tfc_tensor *y = conv(ctx, x, f, &st);
        REQUIRE(y);
        CHECK(max_err(y, xs, f0) < 1e-4);
        CHECK(eager_transforms(x, f, &st) == 1);
        tfc_tensor_unref(y);
        tfc_tensor_unref(f);
    }
    /* a training step updates the variable in place (the cache holds no reference to its buffer) */
    const tfc_buffer *b = tfc_variable_value(v)->buf;
    const uint64_t uid = b->uid, ver = atomic_load(&b->version);
    REQUIRE(sgd_step(v, delta, lr, &st));
    CHECK(tfc_variable_value(v)->buf->uid == uid);              /* same buffer ... */
    CHECK(atomic_load(&tfc_variable_value(v)->buf->version) > ver); /* ... new contents */
    /* the next forward uses the new weights: transformed again */
    tfc_tensor *f = tfc_variable_read(ctx, v, &st);
    REQUIRE(f);
    tfc_tensor *y = conv(ctx, x, f, &st);
    REQUIRE(y);
    CHECK(max_err(y, xs, f1) < 1e-4);
    CHECK(max_err(y, xs, f0) > 1e-2);
    CHECK(eager_transforms(x, f, &st) == 2);
    tfc_tensor_unref(y);
    tfc_tensor_unref(f);

    /* the same in a graph function reading the variable: its node's instance sees the update */
    tfc_variable *vv = v;
    tfc_function *fn = NULL;
    fn = tfc_function_new(ctx, conv_of_var, vv, NULL, &st);
    REQUIRE(fn);
    static float f2[9 * C * CO];
    for (int i = 0; i < 9 * C * CO; i++) f2[i] = f1[i] - lr * delta[i];
    tfc_tensor *o[1] = {0};
    REQUIRE(tfc_function_call(fn, &x, 1, o, 1, &st) == 1);
    CHECK(max_err(o[0], xs, f1) < 1e-4);
    tfc_tensor_unref(o[0]);
    REQUIRE(tfc_function_call(fn, &x, 1, o, 1, &st) == 1); /* the kept transform serves the second call */
    CHECK(max_err(o[0], xs, f1) < 1e-4);
    tfc_tensor_unref(o[0]);
    REQUIRE(sgd_step(v, delta, lr, &st));
    REQUIRE(tfc_function_call(fn, &x, 1, o, 1, &st) == 1);
    CHECK(max_err(o[0], xs, f2) < 1e-4);
    CHECK(max_err(o[0], xs, f1) > 1e-2);
    tfc_tensor_unref(o[0]);
    tfc_function_free(fn);
    tfc_variable_free(v);
    tfc_tensor_unref(x);
}

/* ---- bad attrs fail when the instance is created, naming the op and the attr ---- */
static int bad_strides_fn(tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    (void)n_in, (void)max_out, (void)user;
    const int64_t s3[3] = {1, 1, 1};
    tfc_tensor *io[2] = {in[0], in[1]};
    const tfc_attr a[] = {TFC_ATTR_INTS("strides", s3, 3), TFC_ATTR_S("padding", "SAME")};
    return tfc_execute(c, "Conv2D", io, 2, a, 2, out, 1, st) == 1 ? 1 : -1;
}

static void test_bad_attrs_at_creation(void) {
    tfc_status st = TFC_STATUS_INIT;
    const int64_t xd[4] = {1, 5, 5, 2}, fd[4] = {3, 3, 2, 2}, s3[3] = {1, 1, 1};
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, xd, 4, &st), *f = tfc_tensor_new(TFC_FLOAT, fd, 4, &st);
    REQUIRE(x && f);
    const tfc_op *op = tfc_op_lookup("Conv2D");
    const tfc_attr a[] = {TFC_ATTR_INTS("strides", s3, 3), TFC_ATTR_S("padding", "SAME")};
    tfc_tensor *in[2] = {x, f};
    tfc_attrs ra;
    tfc_dtype odt[1], dts[2] = {TFC_FLOAT, TFC_FLOAT};
    int n_out = 0;
    REQUIRE(tfc_resolve_call(op, in, 2, a, 2, &ra, &n_out, odt, &st));
    const tfc_kernel_entry *ke = tfc_device_kernel(tfc_device_cpu(), op, &ra);
    REQUIRE(ke && ke->create);
    const int64_t live = tfc_kernel_inst_live_count();
    CHECK(tfc_kernel_inst_new(ctx, tfc_device_cpu(), ke, op, &ra, dts, 2, &st) == NULL);
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Conv2D") && strstr(st.msg, "strides") && strstr(st.msg, "got 3"));
    CHECK(tfc_kernel_inst_live_count() == live);

    /* MaxPool with a ksize across the batch: UNIMPLEMENTED naming ksize */
    const tfc_op *mp = tfc_op_lookup("MaxPool");
    const int64_t k4[4] = {2, 2, 2, 1};
    const tfc_attr pa[] = {TFC_ATTR_INTS("ksize", k4, 4), TFC_ATTR_INTS("strides", strides4, 4),
                           TFC_ATTR_S("padding", "VALID")};
    REQUIRE(tfc_resolve_call(mp, in, 1, pa, 3, &ra, &n_out, odt, &st));
    ke = tfc_device_kernel(tfc_device_cpu(), mp, &ra);
    REQUIRE(ke && ke->create);
    CHECK(tfc_kernel_inst_new(ctx, tfc_device_cpu(), ke, mp, &ra, dts, 1, &st) == NULL);
    CHECK_CODE(&st, TFC_UNIMPLEMENTED);
    CHECK(strstr(st.msg, "MaxPool") && strstr(st.msg, "ksize [2,2,2,1]"));

    /* in a graph whose shapes are unknown the shape function cannot check the attrs: instantiation does */
    const tfc_tensor_spec spec[2] = {{.dtype = TFC_FLOAT, .shape = {.rank = -1}},
                                     {.dtype = TFC_FLOAT, .shape = {.rank = -1}}};
    tfc_function *fn = tfc_function_new(ctx, bad_strides_fn, NULL,
                                        &(tfc_function_opts){.input_signature = spec, .n_input_signature = 2}, &st);
    REQUIRE(fn);
    tfc_tensor *o[1] = {0};
    CHECK(tfc_function_call(fn, in, 2, o, 1, &st) == -1);
    CHECK(strstr(st.msg, "Conv2D") && strstr(st.msg, "strides") && strstr(st.msg, "got 3"));
    tfc_function_free(fn);
    tfc_tensor_unref(x);
    tfc_tensor_unref(f);
}

/* ---- every converted op runs as an instance, made once per attrs ---- */
static void test_converted_ops_are_instances(void) {
    const char *ops[] = {"Conv2D", "_FusedConv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter",
                         "DepthwiseConv2dNative", "DepthwiseConv2dNativeBackpropInput",
                         "DepthwiseConv2dNativeBackpropFilter", "MatMul", "_FusedMatMul", "BatchMatMulV2", "BiasAdd",
                         "BiasAddGrad", "MaxPool", "MaxPoolGrad", "AvgPool", "AvgPoolGrad", "FusedBatchNormV3",
                         "FusedBatchNormGradV3", "Softmax"};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        const tfc_op *op = tfc_op_lookup(ops[i]);
        REQUIRE(op);
        const tfc_kernel_entry *ke = tfc_device_kernel(tfc_device_cpu(), op, NULL);
        CHECK(ke && ke->create && ke->destroy);
        if (!(ke && ke->create)) fprintf(stderr, "  %s has no instance\n", ops[i]);
    }
    /* repeated eager MatMuls: one instance, then cache hits */
    tfc_status st = TFC_STATUS_INIT;
    const int64_t d[2] = {2, 2};
    const float av[4] = {1, 2, 3, 4}, bv[4] = {5, 6, 7, 8};
    tfc_tensor *a = tfc_tensor_from_data(TFC_FLOAT, d, 2, av, sizeof av, &st);
    tfc_tensor *b = tfc_tensor_from_data(TFC_FLOAT, d, 2, bv, sizeof bv, &st);
    REQUIRE(a && b);
    tfc_ctx_set_seed(ctx, 7); /* clears the cache */
    tfc_tensor *in[2] = {a, b};
    const tfc_attr ta = TFC_ATTR_B("transpose_b", true);
    for (int i = 0; i < 5; i++) {
        tfc_tensor *o[1] = {0};
        REQUIRE(tfc_execute(ctx, "MatMul", in, 2, &ta, 1, o, 1, &st) == 1);
        const float *p = tfc_tensor_data(o[0]); /* a b^T */
        CHECK(p[0] == 17 && p[1] == 23 && p[2] == 39 && p[3] == 53);
        tfc_tensor_unref(o[0]);
    }
    tfc_kernel_cache_stats s = tfc_kernel_cache_stats_get(ctx);
    CHECK(s.size == 1 && s.misses == 1 && s.hits == 4);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
}

/* ---- the device allocator's counters ---- */
static void test_memory_info(void) {
    tfc_status st = TFC_STATUS_INIT;
    const tfc_device *d = tfc_device_find("CPU:0");
    REQUIRE(d);
    tfc_device_reset_memory_stats(d);
    const tfc_device_memory_info m0 = tfc_device_get_memory_info(d);
    CHECK(m0.current >= 0 && m0.peak == m0.current);
    const int64_t dims[1] = {1 << 20};
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, dims, 1, &st);
    REQUIRE(t);
    const tfc_device_memory_info m1 = tfc_device_get_memory_info(d);
    CHECK(m1.current - m0.current == 4 << 20);
    CHECK(m1.peak == m1.current && m1.allocs == m0.allocs + 1);
    /* a kernel's output is counted too: Square of t, 4 MB more while both live */
    tfc_tensor *o[1] = {0};
    REQUIRE(tfc_execute(ctx, "Square", &t, 1, NULL, 0, o, 1, &st) == 1);
    CHECK(tfc_device_get_memory_info(d).current - m0.current == 8 << 20);
    tfc_tensor_unref(o[0]);
    tfc_tensor_unref(t);
    const tfc_device_memory_info m2 = tfc_device_get_memory_info(d);
    CHECK(m2.current == m0.current);
    CHECK(m2.peak - m0.current >= 8 << 20); /* the peak stays until reset */
    tfc_device_reset_memory_stats(d);
    CHECK(tfc_device_get_memory_info(d).peak == m0.current);
    CHECK(tfc_device_get_memory_info(NULL).current == 0);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_converted_ops_are_instances();
    test_bad_attrs_at_creation();
    test_filter_update_invalidates();
    test_memory_info();
    tfc_ctx_free(ctx);
    CHECK(tfc_kernel_inst_live_count() == 0);
    TEST_MAIN_END();
}
