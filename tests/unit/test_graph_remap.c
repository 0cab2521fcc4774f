/* The remapping pass on traced functions: MatMul / Conv2D + BiasAdd (+ Relu, Relu6, Elu, LeakyRelu) become
 * _FusedMatMul / _FusedConv2D in the executor's copy (node counts, op types, fused attrs), but not when an
 * intermediate has another consumer or is a result; outputs and gradients equal the unfused run on random
 * inputs; the library keeps the traced (unfused) graph; the pass is switchable. */
#include <time.h>

#include "eager/context_internal.h"
#include "graph/optimize.h"
#include "graph/trace.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static tfc_tensor *op1(tfc_ctx *c, const char *name, tfc_tensor *a, tfc_status *st) {
    return a ? tfc_emit(c, name, &a, 1, NULL, 0, st) : NULL;
}
static tfc_tensor *op2(tfc_ctx *c, const char *name, tfc_tensor *a, tfc_tensor *b, tfc_status *st) {
    return a && b ? tfc_emit(c, name, (tfc_tensor *[]){a, b}, 2, NULL, 0, st) : NULL;
}
static tfc_tensor *cast64(tfc_ctx *c, tfc_tensor *a, tfc_status *st) {
    const tfc_attr at = TFC_ATTR_T("DstT", TFC_DOUBLE);
    return a ? tfc_emit(c, "Cast", &a, 1, &at, 1, st) : NULL;
}

#define N_IN 6
#define N_OUT 8

/* in: x [4,8], w [8,5], b [5], img [2,6,6,3], filt [3,3,3,4], cb [4] */
static int fn(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user, tfc_status *st) {
    tfc_tensor *x = in[0], *w = in[1], *b = in[2];
    /* 0: Dense with relu -> _FusedMatMul [BiasAdd, Relu] */
    out[0] = op1(c, "Relu", op2(c, "BiasAdd", op2(c, "MatMul", x, w, st), b, st), st);
    /* 1: Tanh is not a fused activation: [BiasAdd], then Tanh */
    out[1] = op1(c, "Tanh", op2(c, "BiasAdd", op2(c, "MatMul", op1(c, "Neg", x, st), w, st), b, st), st);
    /* 2: Conv2D + BiasAdd + LeakyRelu(0.3) -> _FusedConv2D [BiasAdd, LeakyRelu] */
    const int64_t strides[4] = {1, 1, 1, 1};
    const tfc_attr ca[] = {{.name = "strides", .kind = TFC_ATTR_LIST_INT, .n = 4, .v.ints = strides},
                           {.name = "padding", .kind = TFC_ATTR_STRING, .v.s = "SAME"}};
    tfc_tensor *cv = tfc_emit(c, "Conv2D", (tfc_tensor *[]){in[3], in[4]}, 2, ca, 2, st);
    tfc_tensor *cbias = op2(c, "BiasAdd", cv, in[5], st);
    const tfc_attr la = TFC_ATTR_F("alpha", 0.3);
    out[2] = cbias ? tfc_emit(c, "LeakyRelu", &cbias, 1, &la, 1, st) : NULL;
    /* 3: the product has a second consumer (Neg): nothing fuses */
    tfc_tensor *m3 = op2(c, "MatMul", op1(c, "Exp", x, st), w, st);
    out[3] = op2(c, "AddV2", op1(c, "Relu", op2(c, "BiasAdd", m3, b, st), st), op1(c, "Neg", m3, st), st);
    if (out[3] && !(out[3] = op1(c, "Relu6", out[3], st))) return -1;
    /* 4, 5: the BiasAdd is a result too: MatMul + BiasAdd fuse, the Relu stays */
    tfc_tensor *b4 = op2(c, "BiasAdd", op2(c, "MatMul", op1(c, "Sin", x, st), w, st), b, st);
    out[4] = b4;
    out[5] = op1(c, "Relu", b4, st);
    /* 6: float64 with Elu -> _FusedMatMul [BiasAdd, Elu] */
    out[6] = op1(c, "Elu", op2(c, "BiasAdd", op2(c, "MatMul", cast64(c, x, st), cast64(c, w, st), st),
                               cast64(c, b, st), st),
                 st);
    /* 7: VALID, stride 2, Relu6 -> _FusedConv2D [BiasAdd, Relu6] */
    const int64_t strides2[4] = {1, 2, 2, 1};
    const tfc_attr ca2[] = {{.name = "strides", .kind = TFC_ATTR_LIST_INT, .n = 4, .v.ints = strides2},
                            {.name = "padding", .kind = TFC_ATTR_STRING, .v.s = "VALID"}};
    tfc_tensor *nimg = op1(c, "Neg", in[3], st);
    tfc_tensor *cv2 = nimg ? tfc_emit(c, "Conv2D", (tfc_tensor *[]){nimg, in[4]}, 2, ca2, 2, st) : NULL;
    out[7] = op1(c, "Relu6", op2(c, "BiasAdd", cv2, in[5], st), st);
    for (int i = 0; i < N_OUT; i++)
        if (!out[i]) return -1;
    return N_OUT;
}

static const tfc_tensor_spec specs[N_IN] = {{TFC_FLOAT, {2, {4, 8}}}, {TFC_FLOAT, {2, {8, 5}}},
                                            {TFC_FLOAT, {1, {5}}},    {TFC_FLOAT, {4, {2, 6, 6, 3}}},
                                            {TFC_FLOAT, {4, {3, 3, 3, 4}}}, {TFC_FLOAT, {1, {4}}}};

static tfc_tensor *inputs[N_IN];

static int count_op(const tfc_graph *g, const char *op) {
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) k += !strcmp(g->nodes[i]->op->def->name, op);
    return k;
}

static const tfc_gnode *find_op(const tfc_graph *g, const char *op, const char *act) {
    for (int i = 0; i < g->n_nodes; i++) {
        const tfc_gnode *n = g->nodes[i];
        const tfc_attr *a = tfc_attrs_find(n->attrs, "fused_ops");
        if (!strcmp(n->op->def->name, op) && a && a->n == (act ? 2 : 1) && !strcmp(a->v.strs[0], "BiasAdd") &&
            (!act || !strcmp(a->v.strs[1], act)))
            return n;
    }
    return NULL;
}

/* The executor's graph: op types and fused attrs; the library's graph stays unfused. */
static void check_graph(tfc_concrete_function *cf) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_gfunc *g = tfc_flib_find(tfc_ctx_flib(ctx, &st), tfc_concrete_function_name(cf));
    REQUIRE(g);
    CHECK(count_op(g->body, "MatMul") == 5 && count_op(g->body, "Conv2D") == 2);
    CHECK(count_op(g->body, "_FusedMatMul") == 0);
    tfc_opt_graph og;
    REQUIRE(tfc_graph_optimize(ctx, g, NULL, &og, &st));
    CHECK(count_op(og.g, "_FusedMatMul") == 4);
    CHECK(count_op(og.g, "_FusedConv2D") == 2);
    CHECK(find_op(og.g, "_FusedConv2D", "Relu6") != NULL);
    CHECK(count_op(og.g, "MatMul") == 1 && count_op(og.g, "BiasAdd") == 1); /* chain 3 */
    CHECK(count_op(og.g, "Conv2D") == 0 && count_op(og.g, "LeakyRelu") == 0 && count_op(og.g, "Elu") == 0);
    CHECK(count_op(og.g, "Relu") == 2 && count_op(og.g, "Tanh") == 1 && count_op(og.g, "Relu6") == 1);
    CHECK(find_op(og.g, "_FusedMatMul", "Relu") != NULL);
    CHECK(find_op(og.g, "_FusedMatMul", NULL) != NULL);
    const tfc_gnode *e = find_op(og.g, "_FusedMatMul", "Elu");
    CHECK(e && tfc_attrs_type(e->attrs, "T", TFC_INVALID_DTYPE) == TFC_DOUBLE);
    const tfc_gnode *cv = find_op(og.g, "_FusedConv2D", "LeakyRelu");
    REQUIRE(cv);
    CHECK_NEAR(tfc_attrs_float(cv->attrs, "leakyrelu_alpha", 0), 0.3, 1e-6);
    CHECK(!strcmp(tfc_attrs_string(cv->attrs, "padding", ""), "SAME"));
    CHECK(tfc_attrs_int(cv->attrs, "num_args", 0) == 1);
    tfc_opt_graph_clear(&og);
    /* the pass off: nothing fused */
    const tfc_optimizer_opts off = {true, true, true, true, false};
    REQUIRE(tfc_graph_optimize(ctx, g, &off, &og, &st));
    CHECK(count_op(og.g, "_FusedMatMul") == 0 && count_op(og.g, "MatMul") == 5 && count_op(og.g, "Conv2D") == 2);
    tfc_opt_graph_clear(&og);
}

/* Calls a fresh function with the remapper on or off: outputs, the pass report, and gradients of outputs 0,
 * 2, 6 and 7 (summed) with respect to every input. */
static void run(bool remap, tfc_tensor **res, tfc_tensor **grads) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx_set_optimizer_options(ctx, &(tfc_optimizer_opts){true, true, true, true, remap});
    tfc_function *f = tfc_function_new(ctx, fn, NULL, NULL, &st);
    REQUIRE(f);
    tfc_tape *tape = tfc_tape_new(ctx, false, false, &st);
    REQUIRE(tape);
    for (int i = 0; i < N_IN; i++) tfc_tape_watch(tape, inputs[i]);
    REQUIRE(tfc_function_call(f, inputs, N_IN, res, N_OUT, &st) == N_OUT);
    CHECK_OK(&st);
    tfc_tensor *targets[4] = {res[0], res[2], res[6], res[7]};
    CHECK(tfc_tape_gradient_n(tape, targets, 4, NULL, inputs, N_IN, NULL, 0, TFC_UNCONNECTED_ZERO, grads, &st));
    CHECK_OK(&st);
    tfc_tape_free(tape);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, specs, N_IN, &st);
    REQUIRE(cf);
    const char *names[8];
    int before[8], after[8];
    int np = tfc_concrete_function_pass_report(cf, names, before, after, 8, &st);
    CHECK(np == (remap ? 5 : 4));
    bool seen = false;
    for (int i = 0; i < np; i++)
        if (!strcmp(names[i], "remapping")) {
            seen = true;
            /* 0: -2, 1: -1, 2: -2, 4: -1, 6: -2, 7: -2 */
            CHECK(before[i] - after[i] == 10);
        }
    CHECK(seen == remap);
    if (remap) check_graph(cf);
    tfc_function_free(f);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    srand((unsigned)time(NULL));
    for (int i = 0; i < N_IN; i++) {
        inputs[i] = tfc_tensor_new(TFC_FLOAT, specs[i].shape.dims, specs[i].shape.rank, &st);
        REQUIRE(inputs[i]);
        float *d = tfc_tensor_mutable_data(inputs[i]);
        for (int64_t k = 0; k < inputs[i]->num_elements; k++) d[k] = 2.f * (float)rand() / (float)RAND_MAX - 1.f;
    }
    tfc_tensor *on[N_OUT], *off[N_OUT], *g_on[N_IN], *g_off[N_IN];
    run(true, on, g_on);
    run(false, off, g_off);
    /* the fused Dense chain against its definition: relu(x w + b) */
    for (int r = 0; r < 4; r++)
        for (int j = 0; j < 5; j++) {
            double z = tfc_tensor_get_f64(inputs[2], j);
            for (int k = 0; k < 8; k++) z += tfc_tensor_get_f64(inputs[0], r * 8 + k) * tfc_tensor_get_f64(inputs[1], k * 5 + j);
            CHECK_NEAR(tfc_tensor_get_f64(on[0], r * 5 + j), z > 0 ? z : 0, 1e-5);
        }
    for (int k = 0; k < N_OUT; k++) {
        REQUIRE(on[k]->num_elements == off[k]->num_elements && on[k]->dtype == off[k]->dtype);
        for (int64_t i = 0; i < on[k]->num_elements; i++) {
            double a = tfc_tensor_get_f64(on[k], i), b = tfc_tensor_get_f64(off[k], i);
            CHECK_NEAR(a, b, 1e-5 * (1 + fabs(b)));
        }
        tfc_tensor_unref(on[k]);
        tfc_tensor_unref(off[k]);
    }
    for (int k = 0; k < N_IN; k++) {
        REQUIRE(g_on[k] && g_off[k] && g_on[k]->num_elements == inputs[k]->num_elements);
        double norm = 0;
        for (int64_t i = 0; i < g_on[k]->num_elements; i++) {
            double a = tfc_tensor_get_f64(g_on[k], i), b = tfc_tensor_get_f64(g_off[k], i);
            CHECK_NEAR(a, b, 1e-5 * (1 + fabs(b)));
            norm += fabs(b);
        }
        CHECK(norm > 0); /* every input reaches a differentiated output */
        tfc_tensor_unref(g_on[k]);
        tfc_tensor_unref(g_off[k]);
    }
    for (int k = 0; k < N_IN; k++) tfc_tensor_unref(inputs[k]);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
