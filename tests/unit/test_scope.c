/* Scopes (tfc_scope_begin/end, tfc_keep): op results are released at the end of their scope, kept tensors
 * escape, scopes nest, and GradientTape results land in the caller's scope. Checked by counting live
 * tensors and reference counts (and by ASan/LSan in the sanitizer build). */
#include "core/tensor_internal.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static int refs(const tfc_tensor *t) { return atomic_load(&t->refcount); }

static tfc_tensor *op2(const char *name, tfc_tensor *a, tfc_tensor *b) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *r = tfc_emit(ctx, name, (tfc_tensor *[]){a, b}, 2, NULL, 0, &st);
    CHECK_OK(&st);
    REQUIRE(r);
    return r;
}

static tfc_tensor *op1(const char *name, tfc_tensor *a) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *r = tfc_emit(ctx, name, &a, 1, NULL, 0, &st);
    CHECK_OK(&st);
    REQUIRE(r);
    return r;
}

static tfc_tensor *vec(float a, float b, float c) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_vec_f32((float[]){a, b, c}, 3, &st);
    REQUIRE(t);
    return t;
}

static float at(const tfc_tensor *t, int i) { return ((const float *)tfc_tensor_data(t))[i]; }

static void test_scope_frees(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(1, 2, 3), *y = vec(10, 20, 30); /* created directly: the caller owns them */
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *z = op2("AddV2", x, y);
    tfc_tensor *w = op2("Mul", z, z);
    tfc_tensor *i = op1("Identity", w);
    tfc_tensor *o = op1("OnesLike", i);
    tfc_tensor *zl = op1("ZerosLike", o);
    CHECK(at(w, 2) == 33 * 33 && at(i, 0) == 121 && at(o, 1) == 1 && at(zl, 1) == 0);
    CHECK(tfc_tensor_live_count() >= base + 7);
    tfc_tensor_ref(z); /* observe z across the end of the scope */
    CHECK(refs(z) == 2);
    tfc_scope_end(ctx);
    CHECK(refs(z) == 1); /* the scope dropped exactly its own reference */
    CHECK(at(z, 0) == 11 && at(z, 2) == 33);
    CHECK(tfc_tensor_live_count() == base + 3); /* x, y, z */
    CHECK(refs(x) == 1 && refs(y) == 1);        /* inputs untouched by the scope */
    tfc_tensor_unref(z);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    CHECK(tfc_tensor_live_count() == base);
    /* without a scope the caller owns op results */
    x = vec(1, 1, 1);
    z = op2("AddV2", x, x);
    CHECK(refs(z) == 1 && at(z, 0) == 2);
    tfc_tensor_unref(z);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
    tfc_scope_end(ctx); /* no open scope: nothing happens */
}

static void test_keep(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(1, 2, 3);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *a = op2("Mul", x, x);
    tfc_tensor *b = op2("AddV2", a, x);
    CHECK(tfc_keep(ctx, b) == b);
    CHECK(tfc_keep(ctx, NULL) == NULL);
    CHECK(tfc_keep(ctx, x) == x); /* not in any scope: a no-op */
    tfc_scope_end(ctx);
    CHECK(refs(b) == 1 && at(b, 2) == 12);
    CHECK(tfc_tensor_live_count() == base + 2); /* x, b */
    tfc_tensor_unref(b);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
}

static void test_nested(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(1, 2, 3);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *a = op2("AddV2", x, x); /* outer */
    tfc_tensor_ref(a);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *b = op2("Mul", a, a); /* inner */
    tfc_tensor_ref(b);
    tfc_tensor *c = op2("AddV2", b, a);
    tfc_tensor *d = op1("Identity", a);
    CHECK(tfc_keep(ctx, c) == c);
    tfc_scope_end(ctx);
    CHECK(refs(b) == 1); /* released by the inner scope */
    CHECK(refs(a) == 2); /* still held by the outer scope */
    CHECK(refs(c) == 1 && at(c, 1) == 16 + 4);
    (void)d;
    CHECK(tfc_tensor_live_count() == base + 4); /* x, a, b (our ref), c */
    tfc_tensor *e = op2("Mul", a, c);
    tfc_tensor_ref(e);
    /* keeping a tensor of an outer scope from inside an inner one takes it out of the outer scope */
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *f = op1("Identity", e);
    CHECK(tfc_keep(ctx, a) == a);
    tfc_scope_end(ctx);
    (void)f;
    tfc_scope_end(ctx);
    CHECK(refs(a) == 2); /* ours + the kept reference */
    CHECK(refs(e) == 1 && at(e, 2) == 6 * (36 + 6));
    tfc_tensor_unref(a);
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    tfc_tensor_unref(c);
    tfc_tensor_unref(e);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
}

static void test_many(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(1, 0, 0);
    for (int depth = 0; depth < 20; depth++) REQUIRE(tfc_scope_begin(ctx, &st)); /* scopes grow too */
    tfc_tensor *acc = x;
    for (int i = 0; i < 1000; i++) acc = op2("AddV2", acc, x); /* scope lists grow past their first block */
    CHECK(at(acc, 0) == 1001);
    CHECK(tfc_tensor_live_count() == base + 1001);
    tfc_keep(ctx, acc);
    for (int depth = 0; depth < 20; depth++) tfc_scope_end(ctx);
    CHECK(tfc_tensor_live_count() == base + 2);
    CHECK(at(acc, 0) == 1001);
    tfc_tensor_unref(acc);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
}

/* Gradients computed inside a scope belong to that scope (the tape's own temporaries do not survive). */
static void test_tape_in_scope(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(1, 2, 3);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tape *tape = tfc_tape_new(ctx, true, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, x);
    tfc_tensor *y = op2("Mul", x, x);
    tfc_tensor *z = op2("Mul", y, x); /* x^3 */
    int64_t before = tfc_tensor_live_count();
    tfc_tensor *g = NULL;
    REQUIRE(tfc_tape_gradient(tape, z, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
    REQUIRE(g);
    CHECK(at(g, 0) == 3 && at(g, 1) == 12 && at(g, 2) == 27); /* 3x^2 */
    CHECK(tfc_tensor_live_count() == before + 1);           /* only the result remains */
    CHECK(refs(g) == 1);                                    /* held by our scope */
    tfc_tensor_ref(g);
    /* a second gradient, kept */
    tfc_tensor *g2 = NULL;
    REQUIRE(tfc_tape_gradient(tape, y, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g2, &st));
    REQUIRE(g2);
    CHECK(tfc_keep(ctx, g2) == g2);
    tfc_scope_end(ctx);
    CHECK(refs(g) == 1); /* the scope released its reference: g was scope-owned */
    CHECK(at(g, 2) == 27);
    CHECK(refs(g2) == 1 && at(g2, 2) == 6); /* 2x */
    tfc_tape_free(tape);                    /* releases the recorded y, z */
    CHECK(tfc_tensor_live_count() == base + 3);
    tfc_tensor_unref(g);
    tfc_tensor_unref(g2);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
}

/* In nested scopes the gradient lands in the innermost one, and survives into the enclosing one when kept. */
static void test_tape_nested_scopes(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(2, 3, 4);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    REQUIRE(tape);
    tfc_tape_watch(tape, x);
    tfc_tensor *y = op2("Mul", x, x);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_tensor *g = NULL;
    REQUIRE(tfc_tape_gradient(tape, y, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
    REQUIRE(g);
    tfc_tensor_ref(g);
    tfc_scope_end(ctx);
    CHECK(refs(g) == 1); /* owned by the inner scope, released there */
    tfc_tensor_unref(g);
    tfc_tape_free(tape);
    (void)y;
    tfc_scope_end(ctx);
    CHECK(tfc_tensor_live_count() == base + 1);

    /* kept from the inner scope: the caller owns it after both scopes */
    REQUIRE(tfc_scope_begin(ctx, &st));
    tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    y = op2("Mul", x, x);
    tfc_tensor *s = op2("AddV2", y, x);
    REQUIRE(tfc_scope_begin(ctx, &st));
    REQUIRE(tfc_tape_gradient(tape, s, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, &st));
    tfc_keep(ctx, g);
    tfc_scope_end(ctx);
    tfc_scope_end(ctx);
    tfc_tape_free(tape);
    CHECK(refs(g) == 1 && at(g, 0) == 5 && at(g, 2) == 9); /* 2x + 1 */
    CHECK(tfc_tensor_live_count() == base + 2);
    tfc_tensor_unref(g);

    /* without any scope the caller owns the gradient */
    tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    y = op2("Mul", x, x);
    REQUIRE(tfc_tape_gradient(tape, y, &x, 1, NULL, 0, TFC_UNCONNECTED_ZERO, &g, &st));
    tfc_tape_free(tape);
    CHECK(refs(g) == 1 && at(g, 1) == 6);
    tfc_tensor_unref(g);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
}

/* The same tensor asked for twice, and output_gradients passed straight through, come back as separate
 * references that each scope end / unref releases once. */
static void test_tape_duplicates(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(1, 2, 3), *dy = vec(5, 5, 5);
    tfc_tape *tape = tfc_tape_new(ctx, false, true, &st);
    tfc_tape_watch(tape, x);
    tfc_tensor *y = op1("Identity", x);
    tfc_tensor *g[2] = {0};
    REQUIRE(tfc_tape_gradient_n(tape, &y, 1, &dy, (tfc_tensor *[]){x, x}, 2, NULL, 0, TFC_UNCONNECTED_NONE, g, &st));
    REQUIRE(g[0] && g[1]);
    CHECK(g[0] != g[1] && g[0] != dy && g[1] != dy);
    CHECK(at(g[0], 0) == 5 && at(g[1], 2) == 5);
    tfc_tape_free(tape);
    tfc_tensor_unref(g[0]);
    tfc_tensor_unref(g[1]);
    tfc_tensor_unref(y);
    CHECK(refs(dy) == 1 && refs(x) == 1);
    tfc_tensor_unref(dy);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
}

/* Variables: reads are op results (scope-owned); the variable's own value and handle are not. */
static void test_variable_in_scope(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *init = vec(1, 2, 3);
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_variable *v = tfc_variable_new(ctx, init, true, "v", &st);
    REQUIRE(v);
    tfc_tensor *r = tfc_variable_read(ctx, v, &st);
    REQUIRE(r);
    tfc_tensor *two = op2("AddV2", r, r);
    REQUIRE(tfc_variable_assign(ctx, v, two, &st));
    REQUIRE(tfc_variable_assign_add(ctx, v, init, &st));
    tfc_scope_end(ctx);
    /* the value survives the scope: it is the variable's */
    const tfc_tensor *val = tfc_variable_value(v);
    CHECK(at(val, 0) == 3 && at(val, 2) == 9);
    tfc_variable_free(v);
    tfc_tensor_unref(init);
    CHECK(tfc_tensor_live_count() == base);
}

/* Freeing a context ends its open scopes and releases their tensors. */
static void test_ctx_free_open_scopes(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_ctx *c2 = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 2}, &st);
    REQUIRE(c2);
    tfc_tensor *x = vec(1, 2, 3);
    REQUIRE(tfc_scope_begin(c2, &st));
    tfc_tensor *a = tfc_emit(c2, "AddV2", (tfc_tensor *[]){x, x}, 2, NULL, 0, &st);
    REQUIRE(tfc_scope_begin(c2, &st));
    tfc_tensor *b = tfc_emit(c2, "Mul", (tfc_tensor *[]){a, x}, 2, NULL, 0, &st);
    REQUIRE(a && b);
    CHECK(tfc_tensor_live_count() == base + 3);
    tfc_ctx_free(c2);
    CHECK(tfc_tensor_live_count() == base + 1);
    tfc_tensor_unref(x);
    tfc_ctx_free(NULL);
}

/* An op whose result cannot be tracked (scope list full, out of memory) fails and leaks nothing. */
static void test_scope_oom(void) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    tfc_tensor *x = vec(1, 2, 3);
    REQUIRE(tfc_scope_begin(ctx, &st));
    int fails = 0;
    for (int n = 0; n < 40; n++) {
        tfc_alloc_fail_after(n);
        tfc_tensor *r = tfc_emit(ctx, "AddV2", (tfc_tensor *[]){x, x}, 2, NULL, 0, &st);
        tfc_alloc_fail_after(-1);
        if (!r) {
            CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
            fails++;
        } else {
            CHECK(at(r, 2) == 6);
            break;
        }
    }
    CHECK(fails > 0);
    tfc_scope_end(ctx);
    CHECK(tfc_tensor_live_count() == base + 1);
    /* scope_begin itself can fail: no scope is opened then */
    tfc_ctx *c2 = tfc_ctx_new(NULL, &st);
    REQUIRE(c2);
    tfc_alloc_fail_after(0);
    CHECK(!tfc_scope_begin(c2, &st));
    tfc_alloc_fail_after(-1);
    CHECK_CODE(&st, TFC_RESOURCE_EXHAUSTED);
    tfc_tensor *r = tfc_emit(c2, "AddV2", (tfc_tensor *[]){x, x}, 2, NULL, 0, &st);
    REQUIRE(r);
    CHECK(refs(r) == 1);
    tfc_tensor_unref(r);
    tfc_ctx_free(c2);
    tfc_tensor_unref(x);
    CHECK(tfc_tensor_live_count() == base);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_scope_frees();
    test_keep();
    test_nested();
    test_many();
    test_tape_in_scope();
    test_tape_nested_scopes();
    test_tape_duplicates();
    test_variable_in_scope();
    test_ctx_free_open_scopes();
    test_scope_oom();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
