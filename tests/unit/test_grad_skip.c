/* Binary gradients (src/ops/math_ops.c: AddV2, Sub, Mul, RealDiv, DivNoNan) skip an input whose gradient no
 * source needs (the tape's need_dx): the values of the gradients that are wanted stay exact, and the skipped
 * input's chain of ops is not built (counted through the allocation hook: the gradient with respect to x
 * alone needs fewer allocations than the one with respect to x and y). An op's grad_null_dy: the tape hands its
 * gradient function NULL (not a ZerosLike) for the flagged outputs that received no gradient, zeros for the
 * others; the cross-entropy ops' gradients stay exact without the backprop output's zeros. */
#include <math.h>
#include <string.h>

#include "tfc/eager.h"
#include "tfc/op.h"
#include "tfc/platform.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *f64(const double *v, int64_t r, int64_t c) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_DOUBLE, (int64_t[]){r, c}, 2, &st);
    REQUIRE(t);
    memcpy(tfc_tensor_mutable_data(t), v, (size_t)(r * c) * sizeof(double));
    return t;
}

/* z = sum(op(x, y)) with x [3,1], y [1,4] (broadcast); gradients with respect to x (and y when both). With
 * fail_at >= 0, allocations fail from the fail_at-th on during the gradient; returns whether it succeeded. */
static bool grad_of(const char *op, tfc_tensor *x, tfc_tensor *y, bool both, int64_t fail_at, tfc_tensor **gx,
                    tfc_tensor **gy) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, x);
    if (both) tfc_tape_watch(tape, y);
    tfc_tensor *z = tfc_emit(ctx, op, (tfc_tensor *[]){x, y}, 2, NULL, 0, &st);
    tfc_tensor *ax = tfc_vec_i32((int32_t[]){0, 1}, 2, &st);
    tfc_tensor *s = tfc_emit(ctx, "Sum", (tfc_tensor *[]){z, ax}, 2, NULL, 0, &st);
    tfc_tensor_unref(ax);
    REQUIRE(s);
    tfc_tensor *src[2] = {x, y}, *g[2] = {0};
    if (fail_at >= 0) tfc_alloc_fail_after(fail_at);
    bool ok = tfc_tape_gradient(tape, s, src, both ? 2 : 1, NULL, 0, TFC_UNCONNECTED_NONE, g, &st);
    tfc_alloc_fail_after(-1);
    tfc_tape_free(tape);
    *gx = g[0];
    if (gy) *gy = g[1];
    return ok;
}

/* The fewest allocations with which the gradient succeeds. */
static int64_t allocs_needed(const char *op, tfc_tensor *x, tfc_tensor *y, bool both) {
    for (int64_t k = 0; k < 400; k++) {
        tfc_status st = TFC_STATUS_INIT;
        REQUIRE(tfc_scope_begin(ctx, &st));
        tfc_tensor *gx = NULL, *gy = NULL;
        bool ok = grad_of(op, x, y, both, k, &gx, &gy);
        tfc_scope_end(ctx);
        if (ok) return k;
    }
    return -1;
}

/* ---- grad_null_dy ---- */
/* Two ops returning their input twice: y0 = y1 = x; the gradient records whether dy[1] arrived and dx = dy0 + dy1. */
static int seen_null_dy[2], seen_calls;
static bool two_out_kernel(tfc_kernel_ctx *k, tfc_status *st) {
    return tfc_kernel_forward_input(k, 0, 0, NULL, st) && tfc_kernel_forward_input(k, 0, 1, NULL, st);
}
static bool two_out_shape(tfc_shape_ctx *c, tfc_status *st) {
    return tfc_shape_same_as_input0(c, st) && (c->out_shapes[1] = c->out_shapes[0], true);
}
static bool two_out_grad(tfc_grad_ctx *g, tfc_status *st) {
    seen_calls++;
    for (int i = 0; i < 2; i++) seen_null_dy[i] += g->dy[i] == NULL;
    tfc_tensor *a = g->dy[0], *b = g->dy[1];
    g->dx[0] = !a ? b : !b ? a : tfc_emit(g->ctx, "AddV2", (tfc_tensor *[]){a, b}, 2, NULL, 0, st);
    return g->dx[0] != NULL;
}
static const tfc_op_def two_out_null = {.name = "TfcTwoOutNullDy", .inputs = "x: T", .outputs = "y0: T, y1: T",
                                        .attrs = "T: {double}", .shape = two_out_shape, .grad = two_out_grad,
                                        .grad_null_dy = 1u << 1};
static const tfc_op_def two_out_zeros = {.name = "TfcTwoOutZeros", .inputs = "x: T", .outputs = "y0: T, y1: T",
                                         .attrs = "T: {double}", .shape = two_out_shape, .grad = two_out_grad};

/* d sum(2 * out[which]) / dx through op, counting the gradient calls' NULL dy */
static void two_out_case(const char *op, int which, tfc_tensor *x, int null0, int null1) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, x);
    tfc_tensor *y[2] = {0};
    REQUIRE(tfc_execute(ctx, op, &x, 1, NULL, 0, y, 2, &st));
    tfc_tensor *two = tfc_scalar_f64(2.0, &st);
    tfc_tensor *m = tfc_emit(ctx, "Mul", (tfc_tensor *[]){y[which], two}, 2, NULL, 0, &st);
    tfc_tensor *ax = tfc_vec_i32((int32_t[]){0, 1}, 2, &st);
    tfc_tensor *s = tfc_emit(ctx, "Sum", (tfc_tensor *[]){m, ax}, 2, NULL, 0, &st);
    REQUIRE(s);
    seen_null_dy[0] = seen_null_dy[1] = seen_calls = 0;
    tfc_tensor *g = NULL;
    CHECK(tfc_tape_gradient(tape, s, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
    CHECK_OK(&st);
    CHECK(seen_calls == 1 && seen_null_dy[0] == null0 && seen_null_dy[1] == null1);
    REQUIRE(g);
    for (int i = 0; i < 3; i++) CHECK(tfc_tensor_get_f64(g, i) == 2.0);
    tfc_tape_free(tape);
    tfc_tensor_unref(two);
    tfc_tensor_unref(ax);
    tfc_scope_end(ctx); /* y, m, s, g */
}

static void test_grad_null_dy(tfc_tensor *x) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_op_register(&two_out_null, &st) && tfc_op_register(&two_out_zeros, &st));
    REQUIRE(tfc_kernel_register("TfcTwoOutNullDy", "CPU", two_out_kernel, &st) &&
            tfc_kernel_register("TfcTwoOutZeros", "CPU", two_out_kernel, &st));
    two_out_case("TfcTwoOutNullDy", 0, x, 0, 1); /* y1 unused and flagged: NULL */
    two_out_case("TfcTwoOutNullDy", 1, x, 0, 0); /* y0 unused, not flagged: zeros */
    two_out_case("TfcTwoOutZeros", 0, x, 0, 0);  /* no flag: zeros */
    /* SparseSoftmaxCrossEntropyWithLogits: d mean(loss) / d logits = (softmax - onehot) / batch, with the
     * backprop output unused (its dy NULL) */
    REQUIRE(tfc_scope_begin(ctx, &st));
    const double lv[6] = {0.5, -1.0, 2.0, 0.0, 3.0, -0.5};
    tfc_tensor *logits = f64(lv, 2, 3);
    tfc_tensor *labels = tfc_vec_i32((int32_t[]){2, 0}, 2, &st);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, logits);
    tfc_tensor *out[2] = {0};
    REQUIRE(tfc_execute(ctx, "SparseSoftmaxCrossEntropyWithLogits", (tfc_tensor *[]){logits, labels}, 2, NULL, 0,
                        out, 2, &st));
    tfc_tensor *ax = tfc_vec_i32((int32_t[]){0}, 1, &st);
    tfc_tensor *loss = tfc_emit(ctx, "Mean", (tfc_tensor *[]){out[0], ax}, 2, NULL, 0, &st);
    REQUIRE(loss);
    tfc_tensor *g = NULL;
    CHECK(tfc_tape_gradient(tape, loss, &logits, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
    REQUIRE(g);
    for (int r = 0; r < 2; r++) {
        double mx = fmax(fmax(lv[r * 3], lv[r * 3 + 1]), lv[r * 3 + 2]), sum = 0;
        for (int c = 0; c < 3; c++) sum += exp(lv[r * 3 + c] - mx);
        for (int c = 0; c < 3; c++) {
            double want = (exp(lv[r * 3 + c] - mx) / sum - (c == (r == 0 ? 2 : 0))) / 2;
            CHECK_NEAR(tfc_tensor_get_f64(g, r * 3 + c), want, 1e-12);
        }
    }
    tfc_tape_free(tape);
    tfc_tensor_unref(ax);
    tfc_tensor_unref(labels);
    tfc_tensor_unref(logits);
    tfc_scope_end(ctx);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    const double xv[3] = {1.5, -2.0, 0.25}, yv[4] = {2.0, 0.0, -4.0, 0.5};
    tfc_tensor *x = f64(xv, 3, 1), *y = f64(yv, 1, 4);
    const char *ops[] = {"AddV2", "Sub", "Mul", "RealDiv", "DivNoNan"};
    for (int o = 0; o < 5; o++) {
        const char *op = ops[o];
        bool div = o >= 3;
        for (int both = 0; both < 2; both++) {
            REQUIRE(tfc_scope_begin(ctx, &st));
            tfc_tensor *gx = NULL, *gy = NULL;
            CHECK(grad_of(op, x, y, both, -1, &gx, &gy));
            REQUIRE(gx);
            CHECK(tfc_tensor_dim(gx, 0) == 3 && tfc_tensor_dim(gx, 1) == 1);
            for (int i = 0; i < 3; i++) {
                double want = 0;
                for (int j = 0; j < 4; j++)
                    want += o == 0 || o == 1 ? 1.0
                            : o == 2         ? yv[j]
                            : o == 3         ? 1.0 / yv[j]
                                             : (yv[j] == 0 ? 0.0 : 1.0 / yv[j]);
                double got = tfc_tensor_get_f64(gx, i);
                if (o == 3) CHECK(isinf(got)); /* 1/0 in RealDiv's sum */
                else CHECK_NEAR(got, want, 1e-12);
            }
            if (both) {
                REQUIRE(gy);
                for (int j = 0; j < 4; j++) {
                    double want = 0;
                    for (int i = 0; i < 3; i++)
                        want += o == 0 ? 1.0
                                : o == 1 ? -1.0
                                : o == 2 ? xv[i]
                                : yv[j] == 0 && o == 4 ? 0.0
                                                       : -xv[i] / yv[j] / yv[j];
                    double got = tfc_tensor_get_f64(gy, j);
                    if (o == 3 && yv[j] == 0) CHECK(isinf(got) || isnan(got));
                    else CHECK_NEAR(got, want, 1e-12);
                }
            } else {
                CHECK(gy == NULL);
            }
            (void)div;
            tfc_scope_end(ctx);
        }
        /* x alone: y's chain (Neg, the divisions, Mul, its unbroadcast) is not built */
        int64_t one = allocs_needed(op, x, y, false), two = allocs_needed(op, x, y, true);
        CHECK(one >= 0 && two >= 0);
        int64_t fewer = o == 0 ? 1 : o == 1 ? 2 : o == 2 ? 2 : 4;
        if (!(one + fewer <= two)) fprintf(stderr, "%s: %lld allocations for x, %lld for x and y\n", op, (long long)one, (long long)two);
        CHECK(one + fewer <= two);
    }
    test_grad_null_dy(x);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
