/* Fault injection (DESIGN §8, SQLite's approach): for N = 0, 1, 2, ... run a small eager program with the
 * allocations after the first N failing, until it runs through; once with every later allocation failing
 * too, once with only the Nth failing (which finds failures that are swallowed rather than reported). Each
 * failing run must report RESOURCE_EXHAUSTED, never crash, and leave no tensor alive (ASan/LSan check the
 * memory too). Runs that succeed must compute the right numbers. */
#include "core/tensor_internal.h"
#include "tfc_test.h"

#define N6 6
typedef struct {
    double gx[N6], gy[N6], gv[N6], v_after[N6], bcast[N6];
    double inner[N6], chain[N6];
    double dx3, ddx3, ddx3_again, custom_dx[3];
} results;

static const float XV[N6] = {1, 2, 3, -1, 0.5f, 4}, YV[N6] = {2, -1, 0, 3, 1, 2}, WV[N6] = {3, 1, -2, 2, 4, 0.5f};
static const int64_t DIMS[2] = {2, 3};

static bool emit2(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_tensor *b, tfc_tensor **out, tfc_status *st) {
    return (*out = tfc_emit(ctx, op, (tfc_tensor *[]){a, b}, 2, NULL, 0, st)) != NULL;
}
static bool emit1(tfc_ctx *ctx, const char *op, tfc_tensor *a, tfc_tensor **out, tfc_status *st) {
    return (*out = tfc_emit(ctx, op, &a, 1, NULL, 0, st)) != NULL;
}
/* A NULL where a result is due means an error was swallowed on the way: report it as such. */
static bool have(tfc_tensor *const *t, int n, const char *what, tfc_status *st) {
    for (int i = 0; i < n; i++)
        if (!t[i]) return tfc_status_set(st, TFC_INTERNAL, "%s: result %d missing after a successful call", what, i);
    return true;
}

/* Tensors, a variable, AddV2/Mul/Identity/OnesLike/ZerosLike, a tape gradient for tensors and a variable,
 * variable updates and a broadcasting op, all in one scope. f = (x + y) * x * w + 1. */
static bool program_basic(int threads, results *res, tfc_status *st) {
    tfc_ctx *ctx = NULL;
    tfc_tensor *x = NULL, *y = NULL, *init = NULL, *one = NULL;
    tfc_tape *tape = NULL;
    tfc_variable *v = NULL;
    bool ok = false, scoped = false;
    if (!(ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = threads}, st))) goto done;
    if (!(x = tfc_tensor_from_data(TFC_FLOAT, DIMS, 2, XV, sizeof XV, st))) goto done;
    if (!(y = tfc_tensor_from_data(TFC_FLOAT, DIMS, 2, YV, sizeof YV, st))) goto done;
    if (!(init = tfc_tensor_from_data(TFC_FLOAT, DIMS, 2, WV, sizeof WV, st))) goto done;
    if (!(one = tfc_scalar_f32(1.0f, st))) goto done;
    if (!(v = tfc_variable_new(ctx, init, true, "w", st))) goto done;
    if (!tfc_scope_begin(ctx, st)) goto done;
    scoped = true;
    if (!(tape = tfc_tape_new(ctx, false, true, st))) goto done;
    tfc_tape_watch(tape, x);
    tfc_tape_watch(tape, y);
    tfc_tensor *a, *b, *r, *c, *d, *o, *e, *z, *f, *g[3];
    if (!emit2(ctx, "AddV2", x, y, &a, st) || !emit2(ctx, "Mul", a, x, &b, st)) goto done;
    if (!(r = tfc_variable_read(ctx, v, st))) goto done;
    if (!emit2(ctx, "Mul", b, r, &c, st) || !emit1(ctx, "Identity", c, &d, st) || !emit1(ctx, "OnesLike", d, &o, st) ||
        !emit2(ctx, "AddV2", d, o, &e, st) || !emit1(ctx, "ZerosLike", e, &z, st) || !emit2(ctx, "AddV2", e, z, &f, st))
        goto done;
    if (!tfc_tape_gradient(tape, f, (tfc_tensor *[]){x, y}, 2, &v, 1, TFC_UNCONNECTED_NONE, g, st)) goto done;
    if (!have(g, 3, "gradient", st)) goto done;
    for (int i = 0; i < N6; i++) {
        res->gx[i] = tfc_tensor_get_f64(g[0], i);
        res->gy[i] = tfc_tensor_get_f64(g[1], i);
        res->gv[i] = tfc_tensor_get_f64(g[2], i);
    }
    /* w <- w + (x + y) * x - x, then a broadcasting add of a scalar */
    if (!tfc_variable_assign_add(ctx, v, g[2], st) || !tfc_variable_assign_sub(ctx, v, x, st)) goto done;
    tfc_tensor *w2, *h;
    if (!(w2 = tfc_variable_read(ctx, v, st)) || !emit2(ctx, "AddV2", w2, one, &h, st)) goto done;
    for (int i = 0; i < N6; i++) {
        res->v_after[i] = tfc_tensor_get_f64(tfc_variable_value(v), i);
        res->bcast[i] = tfc_tensor_get_f64(h, i);
    }
    /* a plain assign replaces the value */
    if (!tfc_variable_assign(ctx, v, y, st)) goto done;
    if (tfc_tensor_get_f64(tfc_variable_value(v), 1) != YV[1]) {
        tfc_status_set(st, TFC_INTERNAL, "assign did not take");
        goto done;
    }
    ok = true;
done:
    if (scoped) tfc_scope_end(ctx);
    tfc_tape_free(tape);
    tfc_variable_free(v);
    tfc_tensor_unref(one);
    tfc_tensor_unref(init);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_ctx_free(ctx);
    return ok;
}

/* The gradient is asked for inside a fresh (empty) scope nested in another: handing the results to that scope
 * must allocate. Then they are kept and outlive both scopes. d/dx (x * y + x) = y + 1. */
static bool program_inner_scope(int unused, results *res, tfc_status *st) {
    tfc_ctx *ctx = NULL;
    tfc_tensor *x = NULL, *y = NULL, *g = NULL;
    tfc_tape *tape = NULL;
    int scopes = 0;
    bool ok = false;
    if (!(ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, st))) goto done;
    if (!(x = tfc_tensor_from_data(TFC_FLOAT, DIMS, 2, XV, sizeof XV, st))) goto done;
    if (!(y = tfc_tensor_from_data(TFC_FLOAT, DIMS, 2, YV, sizeof YV, st))) goto done;
    if (!tfc_scope_begin(ctx, st)) goto done;
    scopes++;
    if (!(tape = tfc_tape_new(ctx, false, true, st))) goto done;
    tfc_tape_watch(tape, x);
    tfc_tensor *a, *b;
    if (!emit2(ctx, "Mul", x, y, &a, st) || !emit2(ctx, "AddV2", a, x, &b, st)) goto done;
    if (!tfc_scope_begin(ctx, st)) goto done;
    scopes++;
    if (!tfc_tape_gradient(tape, b, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, st)) goto done;
    if (!have(&g, 1, "gradient", st)) goto done;
    tfc_keep(ctx, g);
    for (int i = 0; i < N6; i++) res->inner[i] = tfc_tensor_get_f64(g, i);
    ok = true;
done:
    while (scopes-- > 0) tfc_scope_end(ctx);
    tfc_tape_free(tape);
    if (ok) tfc_tensor_unref(g); /* kept: ours */
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_ctx_free(ctx);
    return ok;
}

/* Enough recorded ops to grow the tape's tables while recording: t = x + 80 y, then d/dx t*x = t + x. */
static bool program_long_chain(int unused, results *res, tfc_status *st) {
    tfc_ctx *ctx = NULL;
    tfc_tensor *x = NULL, *y = NULL;
    tfc_tape *tape = NULL;
    bool ok = false, scoped = false;
    if (!(ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, st))) goto done;
    if (!(x = tfc_tensor_from_data(TFC_FLOAT, DIMS, 2, XV, sizeof XV, st))) goto done;
    if (!(y = tfc_tensor_from_data(TFC_FLOAT, DIMS, 2, YV, sizeof YV, st))) goto done;
    if (!tfc_scope_begin(ctx, st)) goto done;
    scoped = true;
    if (!(tape = tfc_tape_new(ctx, true, true, st))) goto done;
    tfc_tape_watch(tape, x);
    tfc_tensor *t = x, *p, *g = NULL;
    for (int i = 0; i < 80; i++)
        if (!emit2(ctx, "AddV2", t, y, &t, st)) goto done;
    if (!emit2(ctx, "Mul", t, x, &p, st)) goto done;
    if (!tfc_tape_gradient(tape, p, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &g, st)) goto done;
    if (!have(&g, 1, "gradient", st)) goto done;
    for (int i = 0; i < N6; i++) res->chain[i] = tfc_tensor_get_f64(g, i);
    ok = true;
done:
    if (scoped) tfc_scope_end(ctx);
    tfc_tape_free(tape);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_ctx_free(ctx);
    return ok;
}

/* custom gradient: forward y = x * x, gradient 3 dy (deliberately not 2x: it shows the function was used) */
static bool square_fwd(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                       tfc_status *st) {
    return emit2(ctx, "Mul", in[0], in[0], &out[0], st);
}
static bool triple_grad(tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor *const *out, int n_out,
                        tfc_tensor *const *dy, tfc_tensor **dx, tfc_status *st) {
    tfc_tensor *t1, *t2;
    if (!emit2(ctx, "AddV2", dy[0], dy[0], &t1, st) || !emit2(ctx, "AddV2", t1, dy[0], &t2, st)) return false;
    dx[0] = t2;
    return true;
}

/* Nested tapes (a second-order gradient), a persistent tape asked twice, and a custom gradient, without a
 * user scope: the caller owns and releases every result. */
static bool program_tapes(int unused, results *res, tfc_status *st) {
    tfc_ctx *ctx = NULL;
    tfc_tensor *x = NULL, *x2 = NULL, *x3 = NULL, *dx = NULL, *ddx = NULL, *ddx2 = NULL, *v = NULL, *cy = NULL,
               *cg = NULL;
    tfc_tape *outer = NULL, *inner = NULL, *tc = NULL;
    bool ok = false;
    if (!(ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, st))) goto done;
    if (!(x = tfc_scalar_f64(2.0, st))) goto done;
    if (!(outer = tfc_tape_new(ctx, true, true, st))) goto done;
    tfc_tape_watch(outer, x);
    if (!(inner = tfc_tape_new(ctx, false, true, st))) goto done;
    tfc_tape_watch(inner, x);
    if (!emit2(ctx, "Mul", x, x, &x2, st) || !emit2(ctx, "Mul", x2, x, &x3, st)) goto done;
    if (!tfc_tape_gradient(inner, x3, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &dx, st)) goto done;
    if (!have(&dx, 1, "inner gradient", st)) goto done;
    res->dx3 = tfc_tensor_get_f64(dx, 0);
    if (!tfc_tape_gradient(outer, dx, &x, 1, NULL, 0, TFC_UNCONNECTED_NONE, &ddx, st)) goto done;
    if (!have(&ddx, 1, "outer gradient", st)) goto done;
    res->ddx3 = tfc_tensor_get_f64(ddx, 0);
    if (!tfc_tape_gradient(outer, dx, &x, 1, NULL, 0, TFC_UNCONNECTED_ZERO, &ddx2, st)) goto done;
    if (!have(&ddx2, 1, "outer gradient again", st)) goto done;
    res->ddx3_again = tfc_tensor_get_f64(ddx2, 0);
    if (!(v = tfc_vec_f32((float[]){1, 2, 3}, 3, st))) goto done;
    if (!(tc = tfc_tape_new(ctx, false, false, st))) goto done;
    tfc_tape_watch(tc, v);
    if (!tfc_custom_gradient(ctx, square_fwd, triple_grad, NULL, &v, 1, &cy, 1, st)) goto done;
    if (!tfc_tape_gradient(tc, cy, &v, 1, NULL, 0, TFC_UNCONNECTED_NONE, &cg, st)) goto done;
    if (!have(&cg, 1, "custom gradient", st)) goto done;
    for (int i = 0; i < 3; i++) res->custom_dx[i] = tfc_tensor_get_f64(cg, i);
    ok = true;
done:
    tfc_tape_free(tc);
    tfc_tape_free(inner);
    tfc_tape_free(outer);
    tfc_tensor *all[] = {cg, cy, v, ddx2, ddx, dx, x3, x2, x};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) tfc_tensor_unref(all[i]);
    tfc_ctx_free(ctx);
    return ok;
}

static void check_basic(const results *r) {
    for (int i = 0; i < N6; i++) {
        double x = XV[i], y = YV[i], w = WV[i];
        CHECK_NEAR(r->gx[i], (2 * x + y) * w, 1e-6);
        CHECK_NEAR(r->gy[i], x * w, 1e-6);
        CHECK_NEAR(r->gv[i], (x + y) * x, 1e-6);
        CHECK_NEAR(r->v_after[i], w + (x + y) * x - x, 1e-6);
        CHECK_NEAR(r->bcast[i], w + (x + y) * x - x + 1, 1e-6);
    }
}
static void check_inner(const results *r) {
    for (int i = 0; i < N6; i++) CHECK_NEAR(r->inner[i], YV[i] + 1.0, 0);
}
static void check_chain(const results *r) {
    for (int i = 0; i < N6; i++) CHECK_NEAR(r->chain[i], 2.0 * XV[i] + 80.0 * YV[i], 1e-6);
}
static void check_tapes(const results *r) {
    CHECK_NEAR(r->dx3, 12.0, 1e-12);  /* 3x^2 at 2 */
    CHECK_NEAR(r->ddx3, 12.0, 1e-12); /* 6x */
    CHECK_NEAR(r->ddx3_again, 12.0, 1e-12);
    for (int i = 0; i < 3; i++) CHECK_NEAR(r->custom_dx[i], 3.0, 0);
}

typedef bool (*program_fn)(int arg, results *res, tfc_status *st);

/* The failing-allocation-at-N loop. Returns the number of allocations the program makes. */
static int64_t fault_loop(const char *name, program_fn fn, int arg, void (*check)(const results *), bool once) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t base = tfc_tensor_live_count();
    results ref;
    memset(&ref, 0, sizeof ref);
    REQUIRE(fn(arg, &ref, &st));
    CHECK_OK(&st);
    check(&ref);
    CHECK(tfc_tensor_live_count() == base);
    int64_t n;
    int bad_code = 0, leaked = 0, recovered = 0, failed = 0;
    for (n = 0; n < 100000; n++) {
        results res;
        memset(&res, 0, sizeof res);
        tfc_status_clear(&st);
        if (once) tfc_alloc_fail_once_after(n);
        else tfc_alloc_fail_after(n);
        bool ok = fn(arg, &res, &st);
        int64_t failures = tfc_alloc_failures();
        tfc_alloc_fail_after(-1);
        if (tfc_tensor_live_count() != base) {
            if (leaked++ < 5)
                fprintf(stderr, "%s: N=%lld: %lld tensors left alive (%s)\n", name, (long long)n,
                        (long long)(tfc_tensor_live_count() - base), ok ? "ok" : st.msg);
            base = tfc_tensor_live_count();
        }
        if (ok) {
            CHECK_OK(&st);
            int before = tfc_test_failures;
            check(&res); /* whatever failed on the way was recovered from correctly */
            if (tfc_test_failures != before)
                fprintf(stderr, "%s: N=%lld: wrong results after %lld failed allocations\n", name, (long long)n,
                        (long long)failures);
            if (failures == 0) break;
            recovered++;
            continue;
        }
        failed++;
        if (st.code != TFC_RESOURCE_EXHAUSTED && bad_code++ < 5)
            fprintf(stderr, "%s: N=%lld: expected RESOURCE_EXHAUSTED, got %s: %s\n", name, (long long)n,
                    tfc_code_name(st.code), st.msg);
        CHECK(failures > 0);
    }
    CHECK(bad_code == 0);
    CHECK(leaked == 0);
    printf("%-24s %-10s %4lld allocations: %d runs failed cleanly, %d recovered\n", name,
           once ? "fail-once" : "fail-all", (long long)n, failed, recovered);
    return n;
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* the op registry and kernel tables are built once per process, before any fault is injected */
    tfc_ctx *warm = tfc_ctx_new(NULL, &st);
    REQUIRE(warm);
    tfc_ctx_free(warm);
    tfc_log_set_min_level(TFC_LOG_ERROR);
    static const struct { const char *name; program_fn fn; int arg; void (*check)(const results *); } progs[] = {
        {"basic (1 thread)", program_basic, 1, check_basic},
        {"basic (2 threads)", program_basic, 2, check_basic},
        {"gradient in inner scope", program_inner_scope, 0, check_inner},
        {"long tape", program_long_chain, 0, check_chain},
        {"nested/custom tapes", program_tapes, 0, check_tapes},
    };
    for (size_t i = 0; i < sizeof progs / sizeof progs[0]; i++)
        for (int once = 0; once < 2; once++)
            CHECK(fault_loop(progs[i].name, progs[i].fn, progs[i].arg, progs[i].check, once) > 10);
    TEST_MAIN_END();
}
