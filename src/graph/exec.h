/* Internal: the graph executor. A function is instantiated once (kernels looked up, run order, input slots and
 * the point after which each value dies computed) and then run any number of times; the plan is cached in
 * fn->runtime. Runs use the calling context (its thread pool for kernels, its library for called functions). */
#ifndef TFC_GRAPH_EXEC_H
#define TFC_GRAPH_EXEC_H

#include "eager/context_internal.h"
#include "graph/graph.h"
#include "tfc/function.h"

typedef struct tfc_exec tfc_exec;


/* fn's plan, made on first use from a copy of fn's body optimised by the passes switched on in ctx (optimize.h).
 * NULL with st set: UNIMPLEMENTED naming a node whose op has no CPU kernel,
 * INVALID_ARGUMENT for a cycle. */
tfc_exec *tfc_exec_get(tfc_ctx *ctx, tfc_gfunc *fn, tfc_status *st);
/* Runs fn on n_args inputs (declared arguments then captures), writing its n_rets results as new tensors the
 * caller owns (not scope-tracked). Inputs must match the argument dtypes and known dims (INVALID_ARGUMENT
 * naming the argument otherwise). */
bool tfc_exec_run(tfc_ctx *ctx, tfc_exec *x, tfc_tensor *const *in, int n_in, tfc_tensor **out, tfc_status *st);
/* Nodes executed per run, and the passes that made the plan (name, live nodes before and after). */
int tfc_exec_num_nodes(const tfc_exec *x);
/* The memory plan (planner.c) of x. */
const tfc_memory_plan *tfc_exec_mem(const tfc_exec *x);
/* Whether runs may spread independent nodes over the context's pool (the cost estimate at instantiation). */
bool tfc_exec_is_parallel(const tfc_exec *x);
int tfc_exec_pass_report(const tfc_exec *x, const char **names, int *before, int *after, int max);

#endif
