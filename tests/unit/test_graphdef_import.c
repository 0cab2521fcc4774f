/* GraphDef <-> graph IR: a GraphDef with a function library imported and run by the executor (call ops and a
 * direct call by function name), a traced tf.function exported to a GraphDef that validates and re-imports to
 * the same values, and import errors. */
#include "eager/context_internal.h"
#include "graph/exec.h"
#include "graph/graphdef_io.h"
#include "graph/trace.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

/* x: [2,3] Placeholder; y = affine(relu(x @ w)) with affine(a) = a * 2 + 2, called through PartitionedCall
 * (direct = false) or by the function's name as the op (direct = true). */
static tfc_graphdef *dense_graph(bool direct, const float *w, tfc_status *st) {
    tfc_graphdef *g = tfc_graphdef_new(st);
    REQUIRE(g);
    tfc_graphdef_arg in = {"a", TFC_FLOAT}, out = {"r", TFC_FLOAT};
    const char *ret = "add:z:0";
    int f = tfc_graphdef_add_function(g, "affine", &in, 1, &out, &ret, 1, st);
    REQUIRE(f == 0);
    tfc_tensor *two = tfc_scalar_f32(2.0f, st), *wt = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){3, 4}, 2, w, 48, st);
    tfc_attr tf = TFC_ATTR_T("T", TFC_FLOAT);
    tfc_attr ca[] = {TFC_ATTR_T("dtype", TFC_FLOAT), {.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = two}};
    REQUIRE(tfc_graphdef_add_node(g, f, "two", "Const", NULL, 0, ca, 2, st));
    REQUIRE(tfc_graphdef_add_node(g, f, "mul", "Mul", (const char *[]){"a", "two:output:0"}, 2, &tf, 1, st));
    REQUIRE(tfc_graphdef_add_node(g, f, "add", "AddV2", (const char *[]){"mul:z:0", "two:output:0"}, 2, &tf, 1, st));
    const int64_t shape[2] = {2, 3};
    tfc_attr xa[] = {TFC_ATTR_T("dtype", TFC_FLOAT), TFC_ATTR_SHAPE_("shape", shape, 2)};
    tfc_attr wa[] = {TFC_ATTR_T("dtype", TFC_FLOAT), {.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = wt}};
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "x", "Placeholder", NULL, 0, xa, 2, st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "w", "Const", NULL, 0, wa, 2, st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "mm", "MatMul", (const char *[]){"x", "w"}, 2, &tf, 1, st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "relu", "Relu", (const char *[]){"mm"}, 1, &tf, 1, st));
    const tfc_dtype fl[1] = {TFC_FLOAT};
    tfc_attr call[] = {{.name = "Tin", .kind = TFC_ATTR_LIST_TYPE, .n = 1, .v.types = fl},
                       {.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = 1, .v.types = fl}, TFC_ATTR_FN("f", "affine")};
    if (direct) REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "call", "affine", (const char *[]){"relu"}, 1, NULL, 0, st));
    else REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "call", "PartitionedCall", (const char *[]){"relu"}, 1, call, 3, st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "y", "Identity", (const char *[]){"call:0", "^x"}, 2, &tf, 1, st));
    REQUIRE(tfc_graphdef_validate(g, NULL, st));
    tfc_tensor_unref(two);
    tfc_tensor_unref(wt);
    return g;
}

static void test_import_and_run(void) {
    tfc_status st = TFC_STATUS_INIT;
    float w[12], x[6];
    for (int i = 0; i < 12; i++) w[i] = 0.25f * (float)(i % 5) - 0.5f;
    for (int i = 0; i < 6; i++) x[i] = (float)i - 2.5f;
    tfc_tensor *xt = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, x, sizeof x, &st);
    for (int direct = 0; direct < 2; direct++) {
        tfc_ctx *c = tfc_ctx_new(NULL, &st);
        tfc_graphdef *g = dense_graph(direct, w, &st);
        tfc_flib *lib = tfc_ctx_flib(c, &st);
        REQUIRE(lib && tfc_graphdef_import_library(g, lib, &st));
        const char *outs[1] = {"y"};
        tfc_gfunc *fn = tfc_graphdef_import_graph(g, lib, "main", outs, 1, &st);
        CHECK_OK(&st);
        REQUIRE(fn);
        CHECK(fn->n_args == 1 && fn->n_rets == 1);
        CHECK(!strcmp(fn->body->nodes[tfc_graph_find(fn->body, "call")->id]->op->def->name, "PartitionedCall"));
        tfc_exec *x_ = tfc_exec_get(c, fn, &st);
        tfc_tensor *out = NULL;
        REQUIRE(x_ && tfc_exec_run(c, x_, &xt, 1, &out, &st));
        for (int r = 0; r < 2; r++)
            for (int k = 0; k < 4; k++) {
                float acc = 0;
                for (int j = 0; j < 3; j++) acc += x[r * 3 + j] * w[j * 4 + k];
                CHECK_NEAR(tfc_tensor_get_f64(out, r * 4 + k), (acc > 0 ? acc : 0) * 2 + 2, 1e-6);
            }
        tfc_tensor_unref(out);
        /* a second import of the same library clashes */
        CHECK(!tfc_graphdef_import_library(g, lib, &st));
        CHECK_CODE(&st, TFC_ALREADY_EXISTS);
        /* export: the library and the imported graph validate strictly and keep TensorFlow's names */
        tfc_graphdef *e = tfc_graphdef_new(&st);
        CHECK(tfc_graphdef_export_function(tfc_flib_find(lib, "affine"), e, &st));
        CHECK(tfc_graphdef_export_graph(fn->body, e, &st));
        CHECK(tfc_graphdef_validate(e, NULL, &st));
        CHECK_OK(&st);
        CHECK(tfc_graphdef_num_nodes(e, TFC_GRAPHDEF_TOP) == 6 && tfc_graphdef_num_functions(e) == 1);
        tfc_graphdef_node_info nd;
        CHECK(tfc_graphdef_node(e, TFC_GRAPHDEF_TOP, tfc_graphdef_find_node(e, TFC_GRAPHDEF_TOP, "y"), &nd) &&
              nd.n_inputs == 2 && !strcmp(nd.inputs[0], "call") && !strcmp(nd.inputs[1], "^x"));
        const char *ret;
        tfc_graphdef_arg a;
        CHECK(tfc_graphdef_function_arg(e, 0, true, 0, &a, &ret) && !strcmp(ret, "add:z:0"));
        tfc_graphdef_free(e);
        tfc_graphdef_free(g);
        tfc_ctx_free(c);
    }
    tfc_tensor_unref(xt);
}

/* f(x, y) = cond(sum(x) > 0, tanh(x * y + x) - y, x - y), traced; exported with
 * tfc_concrete_function_graph_def (the branches in the library); imported into another context; same values. */
static int branch_arith(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                        tfc_status *st) {
    tfc_tensor *m, *a, *t, *r;
    if (!(m = tfc_emit(c, "Mul", (tfc_tensor *[]){in[0], in[1]}, 2, NULL, 0, st)) ||
        !(a = tfc_emit(c, "AddV2", (tfc_tensor *[]){m, in[0]}, 2, NULL, 0, st)) ||
        !(t = tfc_emit(c, "Tanh", &a, 1, NULL, 0, st)) || !(r = tfc_emit(c, "Sub", (tfc_tensor *[]){t, in[1]}, 2, NULL, 0, st)))
        return -1;
    out[0] = r;
    return 1;
}
static int branch_sub(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                      tfc_status *st) {
    return (out[0] = tfc_emit(c, "Sub", (tfc_tensor *[]){in[0], in[1]}, 2, NULL, 0, st)) ? 1 : -1;
}
static int fn_cond(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                   tfc_status *st) {
    tfc_tensor *axes = tfc_vec_i32((const int32_t[]){0, 1}, 2, st), *zero = tfc_scalar_f32(0.0f, st), *s, *p;
    if (!axes || !zero) return -1;
    tfc_scope_track(c, axes, st);
    tfc_scope_track(c, zero, st);
    if (!(s = tfc_emit(c, "Sum", (tfc_tensor *[]){in[0], axes}, 2, NULL, 0, st)) ||
        !(p = tfc_emit(c, "Greater", (tfc_tensor *[]){s, zero}, 2, NULL, 0, st)))
        return -1;
    return tfc_cond(c, p, branch_arith, branch_sub, NULL, in, 2, out, max_out, st);
}

static void test_traced_roundtrip(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_cond, NULL, &(tfc_function_opts){.name = "with_cond"}, &st);
    REQUIRE(f);
    for (int sign = 0; sign < 2; sign++) {
        float xv[6] = {0.5f, -1, 2, 0.25f, -0.75f, 1.5f}, yv[6] = {1, 2, -0.5f, 0, 3, -2};
        for (int i = 0; sign && i < 6; i++) xv[i] = -xv[i] - 1;
        tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, xv, sizeof xv, &st);
        tfc_tensor *y = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, yv, sizeof yv, &st);
        tfc_tensor *ref[1];
        REQUIRE(tfc_function_call(f, (tfc_tensor *[]){x, y}, 2, ref, 1, &st) == 1);
        tfc_tensor_spec specs[2] = {{.dtype = TFC_FLOAT, .shape = {.rank = 2, .dims = {2, 3}}},
                                    {.dtype = TFC_FLOAT, .shape = {.rank = 2, .dims = {2, 3}}}};
        tfc_concrete_function *cf = tfc_function_get_concrete_function(f, specs, 2, &st);
        REQUIRE(cf);
        void *bytes;
        size_t n;
        REQUIRE(tfc_concrete_function_graph_def(ctx, cf, &bytes, &n, &st));
        tfc_graphdef *g = tfc_graphdef_parse(bytes, n, NULL, &st); /* strict validation */
        tfc_free(bytes);
        CHECK_OK(&st);
        REQUIRE(g);
        CHECK(tfc_graphdef_num_functions(g) == 2); /* the two branches */
        int ifs = 0, placeholders = 0;
        for (int64_t i = 0; i < tfc_graphdef_num_nodes(g, TFC_GRAPHDEF_TOP); i++) {
            tfc_graphdef_node_info nd;
            tfc_graphdef_node(g, TFC_GRAPHDEF_TOP, i, &nd);
            ifs += !strcmp(nd.op, "If") || !strcmp(nd.op, "StatelessIf");
            placeholders += !strcmp(nd.op, "Placeholder");
        }
        CHECK(ifs == 1 && placeholders == 2);
        /* the returned tensor: the cond's output, fetched by name from the imported graph */
        tfc_gfunc *gf = tfc_flib_find(ctx->flib, tfc_concrete_function_name(cf));
        char out_name[256];
        snprintf(out_name, sizeof out_name, "%s:%d", gf->body->nodes[gf->rets[0].node]->name, gf->rets[0].index);
        tfc_ctx *c2 = tfc_ctx_new(NULL, &st);
        tfc_flib *lib2 = tfc_ctx_flib(c2, &st);
        REQUIRE(tfc_graphdef_import_library(g, lib2, &st));
        tfc_gfunc *back = tfc_graphdef_import_graph(g, lib2, "main", (const char *[]){out_name}, 1, &st);
        CHECK_OK(&st);
        REQUIRE(back && back->n_args == 2);
        tfc_exec *xe = tfc_exec_get(c2, back, &st);
        tfc_tensor *out = NULL;
        REQUIRE(xe && tfc_exec_run(c2, xe, (tfc_tensor *[]){x, y}, 2, &out, &st));
        for (int i = 0; i < 6; i++) CHECK_NEAR(tfc_tensor_get_f64(out, i), tfc_tensor_get_f64(ref[0], i), 1e-6);
        tfc_tensor_unref(out);
        tfc_graphdef_free(g);
        tfc_ctx_free(c2);
        tfc_tensor_unref(x);
        tfc_tensor_unref(y);
    }
    CHECK(!tfc_concrete_function_graph_def(ctx, NULL, NULL, NULL, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* TensorFlow passes a captured variable as a resource Placeholder read by ReadVariableOp and written by
 * AssignAddVariableOp: y = read(v) * x, and v += x as a control dependency of y. */
static void test_captured_variable(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef *g = tfc_graphdef_new(&st);
    tfc_attr fa[] = {TFC_ATTR_T("dtype", TFC_FLOAT)}, ra[] = {TFC_ATTR_T("dtype", TFC_RESOURCE)};
    tfc_attr tf = TFC_ATTR_T("T", TFC_FLOAT);
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "x", "Placeholder", NULL, 0, fa, 1, &st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "v", "Placeholder", NULL, 0, ra, 1, &st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "read", "ReadVariableOp", (const char *[]){"v"}, 1, fa, 1, &st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "mul", "Mul", (const char *[]){"read", "x"}, 2, &tf, 1, &st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "assign", "AssignAddVariableOp",
                                  (const char *[]){"v", "x", "^mul"}, 3, fa, 1, &st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "y", "Identity", (const char *[]){"mul", "^assign"}, 2, &tf, 1, &st));
    REQUIRE(tfc_graphdef_validate(g, NULL, &st));
    tfc_ctx *c = tfc_ctx_new(NULL, &st);
    tfc_flib *lib = tfc_ctx_flib(c, &st);
    tfc_gfunc *fn = tfc_graphdef_import_graph(g, lib, "main", (const char *[]){"y"}, 1, &st);
    CHECK_OK(&st);
    REQUIRE(fn && fn->n_args == 2 && fn->stateful);
    tfc_tensor *init = tfc_scalar_f32(3.0f, &st), *x = tfc_scalar_f32(2.0f, &st), *out = NULL;
    tfc_variable *v = tfc_variable_new(c, init, true, "v", &st);
    REQUIRE(v);
    tfc_exec *xe = tfc_exec_get(c, fn, &st);
    REQUIRE(xe && tfc_exec_run(c, xe, (tfc_tensor *[]){x, tfc_variable_handle(v)}, 2, &out, &st));
    CHECK(tfc_tensor_get_f64(out, 0) == 6.0);
    tfc_tensor_unref(out);
    out = NULL;
    REQUIRE(tfc_exec_run(c, xe, (tfc_tensor *[]){x, tfc_variable_handle(v)}, 2, &out, &st));
    CHECK(tfc_tensor_get_f64(out, 0) == 10.0); /* the first run added 2 to the variable */
    tfc_tensor_unref(out);
    tfc_tensor_unref(init);
    tfc_tensor_unref(x);
    tfc_variable_free(v);
    tfc_graphdef_free(g);
    tfc_ctx_free(c);
}

static void test_import_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_graphdef *g = tfc_graphdef_new(&st);
    tfc_attr ph[] = {TFC_ATTR_T("dtype", TFC_FLOAT)};
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "x", "Placeholder", NULL, 0, ph, 1, &st));
    REQUIRE(tfc_graphdef_add_node(g, TFC_GRAPHDEF_TOP, "u", "Unknowable", (const char *[]){"x"}, 1, NULL, 0, &st));
    tfc_graphdef_opts lax = {.allow_unknown_ops = true};
    REQUIRE(tfc_graphdef_validate(g, &lax, &st));
    tfc_ctx *c = tfc_ctx_new(NULL, &st);
    tfc_flib *lib = tfc_ctx_flib(c, &st);
    const char *outs[1] = {"u"};
    CHECK(!tfc_graphdef_import_graph(g, lib, "main", outs, 1, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(!tfc_flib_find(lib, "main")); /* a failed import leaves nothing behind */
    const char *ghost[1] = {"ghost"};
    CHECK(!tfc_graphdef_import_graph(g, lib, "main", ghost, 1, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    tfc_graphdef_free(g);
    tfc_ctx_free(c);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_import_and_run();
    test_traced_roundtrip();
    test_captured_variable();
    test_import_errors();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
