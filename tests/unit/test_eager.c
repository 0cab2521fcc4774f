/* Eager execution, scopes, variables and GradientTape. */
#include "tfc_test.h"

static tfc_ctx *ctx;

static void test_add_mul(void) {
    tfc_status st = TFC_STATUS_INIT;
    float a[] = {1, 2, 3, 4, 5, 6}, b[] = {10, 20, 30};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, a, sizeof a, &st);
    tfc_tensor *y = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){3}, 1, b, sizeof b, &st);
    tfc_tensor *z = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){x, y}, 2, NULL, 0, &st);
    CHECK_OK(&st);
    REQUIRE(z);
    CHECK(tfc_tensor_rank(z) == 2 && tfc_tensor_dim(z, 0) == 2 && tfc_tensor_dim(z, 1) == 3);
    const float *zd = tfc_tensor_data(z);
    for (int i = 0; i < 6; i++) CHECK_NEAR(zd[i], a[i] + b[i % 3], 0);
    tfc_tensor *w = tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, y}, 2, NULL, 0, &st);
    REQUIRE(w);
    for (int i = 0; i < 6; i++) CHECK_NEAR(((const float *)tfc_tensor_data(w))[i], a[i] * b[i % 3], 0);
    /* incompatible shapes */
    tfc_tensor *bad = tfc_tensor_new(TFC_FLOAT, (int64_t[]){4}, 1, &st);
    CHECK(!tfc_emit(ctx, "AddV2", (tfc_tensor *[]){x, bad}, 2, NULL, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "AddV2") && strstr(st.msg, "[2,3]") && strstr(st.msg, "[4]"));
    /* dtype mismatch */
    tfc_tensor *i32 = tfc_scalar_i32(1, &st);
    CHECK(!tfc_emit(ctx, "AddV2", (tfc_tensor *[]){x, i32}, 2, NULL, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_emit(ctx, "NoSuchOp", NULL, 0, NULL, 0, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    /* a NULL element in a list(string) attr is refused before any op reads it */
    const char *fused[] = {"BiasAdd", NULL};
    tfc_tensor *bias = tfc_tensor_new(TFC_FLOAT, (int64_t[]){3}, 1, &st);
    tfc_attr fa[] = {{.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = 2, .v.strs = fused}};
    CHECK(!tfc_emit(ctx, "_FusedMatMul", (tfc_tensor *[]){x, x, bias}, 3, fa, 1, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "fused_ops") && strstr(st.msg, "element 1 is NULL"));
    tfc_tensor_unref(bias);
    tfc_tensor_unref(bad);
    tfc_tensor_unref(i32);
    tfc_tensor_unref(z);
    tfc_tensor_unref(w);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
}

static void test_tape_basic(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x = tfc_scalar_f32(3.0f, &st);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    tfc_tensor *y = tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, x}, 2, NULL, 0, &st); /* x^2 */
    tfc_tensor *z = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){y, x}, 2, NULL, 0, &st); /* x^2 + x */
    tfc_tensor *g = NULL;
    REQUIRE(tfc_tape_gradient(tape, z, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
    CHECK_OK(&st);
    REQUIRE(g);
    CHECK_NEAR(tfc_tensor_get_f64(g, 0), 7.0, 1e-6);
    /* non-persistent tapes answer once */
    tfc_tensor *g2 = NULL;
    CHECK(!tfc_tape_gradient(tape, z, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g2, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    tfc_tape_free(tape);
    tfc_tensor_unref(x);
    tfc_scope_end(ctx);
}

static void test_tape_nested(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *x = tfc_scalar_f64(2.0, &st);
    tfc_tape *outer = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(outer, x);
    tfc_tape *inner = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(inner, x);
    tfc_tensor *x2 = tfc_emit(ctx, "Mul", (tfc_tensor *[]){x, x}, 2, NULL, 0, &st);
    tfc_tensor *x3 = tfc_emit(ctx, "Mul", (tfc_tensor *[]){x2, x}, 2, NULL, 0, &st);
    tfc_tensor *dx = NULL, *ddx = NULL;
    REQUIRE(tfc_tape_gradient(inner, x3, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &dx, &st));
    CHECK_NEAR(tfc_tensor_get_f64(dx, 0), 12.0, 1e-12); /* 3x^2 */
    REQUIRE(tfc_tape_gradient(outer, dx, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &ddx, &st));
    REQUIRE(ddx);
    CHECK_NEAR(tfc_tensor_get_f64(ddx, 0), 12.0, 1e-12); /* 6x */
    tfc_tape_free(inner);
    tfc_tape_free(outer);
    tfc_tensor_unref(x);
    tfc_scope_end(ctx);
}

static void test_variables(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *init = tfc_scalar_f32(2.0f, &st);
    tfc_variable *v = tfc_variable_new(ctx, init, true, "v", &st);
    CHECK_OK(&st);
    REQUIRE(v);
    tfc_tensor *c = tfc_scalar_f32(5.0f, &st);
    tfc_tape *tape = tfc_tape_new(ctx, true, true, &st);
    tfc_tensor *r = tfc_variable_read(ctx, v, &st);
    tfc_tensor *y = tfc_emit(ctx, "Mul", (tfc_tensor *[]){r, c}, 2, NULL, 0, &st);
    tfc_tensor *g = NULL;
    REQUIRE(tfc_tape_gradient(tape, y, NULL, 0, &v, 1, TFC_UNCONNECTED_NONE, &g, &st));
    REQUIRE(g);
    CHECK_NEAR(tfc_tensor_get_f64(g, 0), 5.0, 0);
    /* unconnected: none and zero */
    tfc_tensor *u = tfc_scalar_f32(1.0f, &st), *gu = NULL;
    REQUIRE(tfc_tape_gradient(tape, y, &u, 1, NULL, 0, TFC_UNCONNECTED_NONE, &gu, &st));
    CHECK(gu == NULL);
    REQUIRE(tfc_tape_gradient(tape, y, &u, 1, NULL, 0, TFC_UNCONNECTED_ZERO, &gu, &st));
    REQUIRE(gu);
    CHECK_NEAR(tfc_tensor_get_f64(gu, 0), 0.0, 0);
    tfc_tape_free(tape);
    /* copy-on-write: a read keeps its value across assign_add */
    REQUIRE(tfc_variable_assign_add(ctx, v, c, &st));
    CHECK_NEAR(tfc_tensor_get_f64(r, 0), 2.0, 0);
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(v), 0), 7.0, 0);
    tfc_tensor *bad = tfc_scalar_i32(1, &st);
    CHECK(!tfc_variable_assign(ctx, v, bad, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_tensor_unref(bad);
    tfc_tensor_unref(u);
    tfc_tensor_unref(c);
    tfc_tensor_unref(init);
    tfc_variable_free(v);
    tfc_scope_end(ctx);
}

/* The registry's name index: every registered op is found by its name, near misses are not, and an op
 * registered at run time is found at once. */
static const tfc_op_def index_test_op = {
    .name = "TfcIndexTestOp", .inputs = "x: T", .outputs = "y: T", .attrs = "T: {float}", .shape = tfc_shape_same_as_input0,
};

static void test_registry_index(void) {
    tfc_status st = TFC_STATUS_INIT;
    int n = tfc_op_count();
    CHECK(n > 100);
    for (int i = 0; i < n; i++) {
        const tfc_op *op = tfc_op_at(i);
        const char *name = tfc_op_get_def(op)->name;
        CHECK(tfc_op_lookup(name) == op);
        char near[128];
        snprintf(near, sizeof near, "%sX", name);
        CHECK(tfc_op_lookup(near) == NULL);
        snprintf(near, sizeof near, "%.*s", (int)strlen(name) - 1, name);
        CHECK(tfc_op_lookup(near) != op);
    }
    /* one buffer holding each name in turn: the lookup follows the contents, not the address */
    char buf[128];
    for (int i = 0; i < n; i++) {
        const tfc_op *op = tfc_op_at(i);
        snprintf(buf, sizeof buf, "%s", tfc_op_get_def(op)->name);
        CHECK(tfc_op_lookup(buf) == op);
        CHECK(tfc_op_lookup(buf) == op);
        buf[0] ^= 0x20; /* the other case: no op */
        CHECK(tfc_op_lookup(buf) == NULL || tfc_op_lookup(buf) != op);
    }
    CHECK(tfc_op_lookup("") == NULL);
    CHECK(tfc_op_lookup("conv2d") == NULL);
    CHECK(tfc_op_lookup("TfcIndexTestOp") == NULL);
    REQUIRE(tfc_op_register(&index_test_op, &st));
    CHECK(tfc_op_count() == n + 1);
    CHECK(tfc_op_lookup("TfcIndexTestOp") == tfc_op_at(n));
    CHECK(!tfc_op_register(&index_test_op, &st) && st.code == TFC_ALREADY_EXISTS);
    CHECK(tfc_op_count() == n + 1);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    test_registry_index();
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_add_mul();
    test_tape_basic();
    test_tape_nested();
    test_variables();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
