/* The graph IR (src/graph/graph.h): nodes by op name with attr resolution and shape inference over partial
 * shapes and Const values, names, control edges, topological order and cycles, and the function library. */
#include "core/tensor_internal.h"
#include "graph/graph.h"
#include "tfc_test.h"

static void test_nodes_and_shapes(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_flib *lib = tfc_flib_new(&st);
    tfc_gfunc *fn = tfc_flib_add(lib, "f", &st);
    REQUIRE(fn);
    CHECK(tfc_flib_add(lib, "f", &st) == NULL);
    CHECK_CODE(&st, TFC_ALREADY_EXISTS);
    tfc_graph *g = fn->body;
    int x = tfc_gfunc_add_arg(fn, "x", TFC_FLOAT, &(tfc_shape){2, {-1, 6}}, &st);
    REQUIRE(x >= 0);
    tfc_gnode *p = tfc_graph_add_op(g, "Placeholder", "p", NULL, 0, (tfc_attr[]){TFC_ATTR_T("dtype", TFC_FLOAT)}, 1,
                                    NULL, 0, &st);
    REQUIRE(p);
    CHECK(p->out_shapes[0].rank == -1); /* no shape attr: unknown rank, as TensorFlow */
    tfc_gnode *add = tfc_graph_add_op(g, "AddV2", NULL, (tfc_gport[]){{x, 0}, {x, 0}}, 2, NULL, 0, NULL, 0, &st);
    REQUIRE(add);
    CHECK(!strcmp(add->name, "AddV2") && add->out_dtypes[0] == TFC_FLOAT);
    CHECK(add->out_shapes[0].rank == 2 && add->out_shapes[0].dims[0] == -1 && add->out_shapes[0].dims[1] == 6);
    tfc_gnode *add2 = tfc_graph_add_op(g, "AddV2", NULL, (tfc_gport[]){{add->id, 0}, {x, 0}}, 2, NULL, 0, NULL, 0, &st);
    CHECK(add2 && !strcmp(add2->name, "AddV2_1"));
    /* a Const shape input gives Reshape a known shape */
    tfc_tensor *sv = tfc_vec_i32((int32_t[]){-1, 3, 2}, 3, &st);
    tfc_gnode *c = tfc_graph_add_const(g, "shape", sv, &st);
    tfc_tensor_unref(sv);
    REQUIRE(c);
    CHECK(tfc_graph_const_value(g, (tfc_gport){c->id, 0}) != NULL);
    tfc_gnode *r = tfc_graph_add_op(g, "Reshape", "r", (tfc_gport[]){{add->id, 0}, {c->id, 0}}, 2, NULL, 0, NULL, 0, &st);
    REQUIRE(r);
    CHECK(r->out_shapes[0].rank == 3 && r->out_shapes[0].dims[1] == 3 && r->out_shapes[0].dims[2] == 2);
    /* errors */
    CHECK(!tfc_graph_add_op(g, "AddV2", "r", (tfc_gport[]){{x, 0}, {x, 0}}, 2, NULL, 0, NULL, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "Duplicate node name in graph: 'r'") != NULL);
    CHECK(!tfc_graph_add_op(g, "NoSuchOp", "n", NULL, 0, NULL, 0, NULL, 0, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(!tfc_graph_add_op(g, "AddV2", "bad", (tfc_gport[]){{x, 0}, {x, 1}}, 2, NULL, 0, NULL, 0, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_graph_add_op(g, "MatMul", "mm", (tfc_gport[]){{r->id, 0}, {r->id, 0}}, 2, NULL, 0, NULL, 0, &st));
    CHECK(strstr(st.msg, "node 'mm'") != NULL);
    CHECK(tfc_graph_find(g, "r") == r && tfc_graph_find(g, "nope") == NULL);
    /* results, order, cycles */
    CHECK(tfc_gfunc_set_rets(fn, (tfc_gport[]){{r->id, 0}}, NULL, 1, &st));
    CHECK(!strcmp(fn->ret_names[0], "output_0"));
    int order[16];
    REQUIRE(g->n_nodes <= 16);
    CHECK(tfc_graph_topo_order(g, order, &st));
    int pos_add = -1, pos_r = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        if (order[i] == add->id) pos_add = i;
        if (order[i] == r->id) pos_r = i;
    }
    CHECK(pos_add >= 0 && pos_add < pos_r);
    CHECK(tfc_graph_add_control(g, add->id, r->id, &st)); /* r -> add while add -> r: a cycle */
    CHECK(!tfc_graph_topo_order(g, order, &st));
    CHECK(strstr(st.msg, "cycle") != NULL);
    tfc_gfunc_update_stateful(fn);
    CHECK(!fn->stateful);
    tfc_flib_free(lib);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st); /* registers the ops */
    REQUIRE(ctx);
    int64_t live0 = tfc_tensor_live_count();
    test_nodes_and_shapes();
    CHECK(tfc_tensor_live_count() == live0);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
