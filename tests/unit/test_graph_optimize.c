/* Grappler-style passes on traced functions: constant folding, AddV2 chains to AddN, common subexpression
 * elimination and pruning, each switchable; per-pass node counts; results equal to the unoptimised graph. */
#include "eager/context_internal.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *op2(tfc_ctx *c, const char *name, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return tfc_emit(c, name, (tfc_tensor *[]){a, b}, 2, NULL, 0, st);
}

static tfc_variable *var;

/* y = sum of a chain of 200 AddV2 + Exp(x) twice + (2 * 3) folded; an unused Sin pruned; an unused
 * assign_add kept. */
static int fn(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user, tfc_status *st) {
    tfc_tensor *x = in[0];
    for (int i = 0; i < 200 && x; i++) x = op2(c, "AddV2", x, in[1], st);
    tfc_tensor *two = tfc_scalar_f32(2, st), *three = tfc_scalar_f32(3, st), *one = tfc_scalar_f32(1, st);
    tfc_scope_track(c, two, st);
    tfc_scope_track(c, three, st);
    tfc_scope_track(c, one, st);
    tfc_tensor *six = op2(c, "Mul", two, three, st);
    tfc_tensor *e1 = tfc_emit(c, "Exp", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    tfc_tensor *e2 = tfc_emit(c, "Exp", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    tfc_tensor *unused = tfc_emit(c, "Sin", (tfc_tensor *const *)&in[0], 1, NULL, 0, st);
    if (!x || !six || !e1 || !e2 || !unused || !tfc_variable_assign_add(c, var, one, st)) return -1;
    tfc_tensor *s = op2(c, "AddV2", e1, e2, st), *t = s ? op2(c, "Mul", s, six, st) : NULL;
    out[0] = x;
    out[1] = t;
    return t ? 2 : -1;
}

static void run(bool on, tfc_tensor **res, int *nodes_after) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx_set_optimizer_options(ctx, &(tfc_optimizer_opts){on, on, on, on, on});
    tfc_function *f = tfc_function_new(ctx, fn, NULL, NULL, &st);
    REQUIRE(f);
    tfc_tensor *a = tfc_tensor_new(TFC_FLOAT, (int64_t[]){4, 4}, 2, &st), *b = tfc_tensor_new(TFC_FLOAT, (int64_t[]){4, 4}, 2, &st);
    float *da = tfc_tensor_mutable_data(a), *db = tfc_tensor_mutable_data(b);
    for (int i = 0; i < 16; i++) {
        da[i] = 0.1f * (float)i;
        db[i] = 0.25f - 0.01f * (float)i;
    }
    CHECK(tfc_function_call(f, (tfc_tensor *[]){a, b}, 2, res, 2, &st) == 2);
    CHECK_OK(&st);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(
        f, (tfc_tensor_spec[]){{TFC_FLOAT, {2, {4, 4}}}, {TFC_FLOAT, {2, {4, 4}}}}, 2, &st);
    REQUIRE(cf);
    const char *names[8];
    int before[8], after[8];
    int np = tfc_concrete_function_pass_report(cf, names, before, after, 8, &st);
    CHECK(np == (on ? 5 : 0));
    *nodes_after = np ? after[np - 1] : tfc_concrete_function_num_nodes(cf);
    for (int i = 0; i < np; i++) {
        CHECK(after[i] <= before[i]);
        if (!strcmp(names[i], "constant_folding")) CHECK(after[i] == before[i]); /* Mul(2, 3) -> a Const */
        if (!strcmp(names[i], "arithmetic_optimization")) CHECK(after[i] < before[i] - 190);
        if (!strcmp(names[i], "common_subgraph_elimination")) CHECK(after[i] < before[i]);  /* Exp, AddN(b, ...) */
        if (!strcmp(names[i], "pruning")) CHECK(after[i] <= before[i] - 3); /* Sin and the folded Mul's inputs */
    }
    tfc_tensor_unref(a);
    tfc_tensor_unref(b);
    tfc_function_free(f);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    tfc_tensor *z = tfc_scalar_f32(0, &st);
    var = tfc_variable_new(ctx, z, false, "counter", &st);
    tfc_optimizer_opts d = tfc_ctx_get_optimizer_options(ctx);
    CHECK(d.constant_folding && d.arithmetic_optimization && d.common_subgraph_elimination && d.pruning && d.remapping);
    tfc_tensor *on[2], *off[2];
    int n_on = 0, n_off = 0;
    run(true, on, &n_on);
    run(false, off, &n_off);
    CHECK(n_on < 40 && n_off > 200);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < 16; i++) CHECK_NEAR(tfc_tensor_get_f64(on[k], i), tfc_tensor_get_f64(off[k], i), 1e-5);
    CHECK_NEAR(tfc_tensor_get_f64(off[1], 3), 12 * exp(0.3), 1e-5);
    CHECK_NEAR(tfc_tensor_get_f64(tfc_variable_value(var), 0), 2, 0); /* the unused assign ran in both */
    for (int k = 0; k < 2; k++) {
        tfc_tensor_unref(on[k]);
        tfc_tensor_unref(off[k]);
    }
    tfc_variable_free(var);
    tfc_tensor_unref(z);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
