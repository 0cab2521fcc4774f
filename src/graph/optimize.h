/* Internal: Grappler-style passes over a function's graph, run when the executor instantiates it. The library
 * keeps the unoptimised graph (TensorFlow ops only, for export); the executor runs an optimised copy. */
#ifndef TFC_GRAPH_OPTIMIZE_H
#define TFC_GRAPH_OPTIMIZE_H

#include "graph/graph.h"
#include "tfc/function.h"

#define TFC_MAX_PASSES 8

typedef struct tfc_pass_stat {
    const char *pass;  /* TensorFlow's optimizer names: "constant_folding", "arithmetic_optimization", ... */
    int before, after; /* live nodes before and after the pass */
} tfc_pass_stat;

/* An optimised copy of a function body: args are Placeholder nodes, results ports, as in tfc_gfunc. */
typedef struct tfc_opt_graph {
    tfc_graph *g;
    int n_args;
    int *arg_nodes;
    int n_rets;
    tfc_gport *rets;
    int n_stats;
    tfc_pass_stat stats[TFC_MAX_PASSES];
} tfc_opt_graph;

/* Copies fn's body and runs the passes enabled in o (NULL: all): constant folding (ops whose inputs are all
 * Const, run now on ctx), arithmetic optimisation (chains of AddV2 over equal shapes become AddN), common
 * subexpression elimination (identical stateless nodes merged), pruning (nodes no result, control result or
 * stateful op needs), remapping (MatMul / Conv2D + BiasAdd (+ Relu, Relu6, Elu or LeakyRelu) whose intermediates
 * nothing else reads -> _FusedMatMul / _FusedConv2D, float32/float64, NHWC, one device). On failure out is left
 * empty. */
bool tfc_graph_optimize(tfc_ctx *ctx, const tfc_gfunc *fn, const tfc_optimizer_opts *o, tfc_opt_graph *out,
                        tfc_status *st);
void tfc_opt_graph_clear(tfc_opt_graph *og);

#endif
