/* Internal to the executor's files (exec.c: instantiation and the sequential run; executor.c: the parallel
 * run; planner.c: the memory plan): the plan of one instantiated function. */
#ifndef TFC_GRAPH_EXEC_INTERNAL_H
#define TFC_GRAPH_EXEC_INTERNAL_H

#include <stdatomic.h>

#include "device/device.h"
#include "graph/exec.h"
#include "graph/optimize.h"

enum { X_KERNEL, X_ARG, X_CONST, X_NOOP };

typedef struct xnode {
    const tfc_gnode *n;
    tfc_kernel_fn kernel;
    tfc_kernel_inst *inst; /* the kernel's instance when it has state (node_kernel); NULL for plain kernels */
    int kind;
    int arg;          /* X_ARG: argument index */
    int in_off;       /* first entry of this node's inputs in x->in_slots */
    int out_base;     /* value slot of output 0 */
    bool static_out;  /* every output shape is fully known: allocate without a shape function */
    bool calls;       /* runs library functions (call and control-flow ops): they make their own outputs */
    bool main_only;   /* calls or stateful: touches the context or resources, so runs on the calling thread */
    int8_t inplace_in; /* planner: output 0 may take this input's buffer when the run holds its only reference
                        * (-1: none) */
    int rel_off, n_rel; /* slots whose last reader the node is, x->rel_slots[rel_off ..]: released after it ran in
                         * the sequential run; the planner's buffers die there */
    /* parallel run */
    int succ_off, n_succ; /* nodes (run-order positions) waiting on this one: x->succ[succ_off ..] */
    int n_pred;           /* data and control edges into the node */
    double cost;          /* estimated work (about one unit per element touched or multiply-add) */
} xnode;

struct tfc_exec {
    tfc_gfunc *fn;
    tfc_opt_graph og;   /* the optimised copy of fn's body that runs */
    int n_nodes, n_slots, n_args;
    xnode *nodes;       /* in run order */
    int *in_slots;
    int *rel_slots;
    int *ret_slots;
    int *last_use;      /* per slot: run-order position of its last reader (n_nodes: a result) */
    const tfc_gnode **arg_nodes;
    /* parallel run (executor.c) */
    bool parallel;      /* the cost estimate found independent work worth spreading over threads */
    int *succ;
    int *uses;          /* per slot: readers (input edges) plus one per result that names it */
    tfc_memory_plan mem; /* planner.c */
};

/* Runs one kernel node: inputs from vals, outputs into vals (exec.c). Thread-safe for nodes that are not
 * main_only. remaining (parallel runs: readers of each slot not yet finished; NULL in the sequential run)
 * keeps a planned in-place write off an input that another node still has to read. */
bool tfc_exec_run_node(tfc_ctx *ctx, const tfc_exec *x, const xnode *xn, tfc_tensor **vals,
                       _Atomic int *const remaining, tfc_status *st);
/* Appends "[[{{node NAME}}]]" to a failed node's message (TensorFlow's error context), once. */
void tfc_exec_note_node(const xnode *xn, tfc_status *st);
/* Stores the value of an argument, constant or no-op node (no kernel). */
void tfc_exec_run_trivial(const tfc_exec *x, const xnode *xn, tfc_tensor *const *in, tfc_tensor **vals);

/* executor.c: successor lists, use counts and the cost estimate that decides x->parallel. pos: each graph
 * node's run-order position (by node id). */
bool tfc_executor_prepare(tfc_exec *x, const int *pos, tfc_status *st);
/* Runs x over the threads of ctx's pool (at most `threads`); vals as tfc_exec_run's. */
bool tfc_executor_run_parallel(tfc_ctx *ctx, const tfc_exec *x, tfc_tensor *const *in, tfc_tensor **vals, int threads,
                               tfc_status *st);
/* True while this thread runs nodes of a parallel run (nested function runs then go sequentially). */
bool tfc_executor_in_parallel(void);

/* planner.c: fills x->mem and each node's inplace_in from the run order, x->last_use and the rel lists. */
bool tfc_planner_plan(tfc_exec *x, tfc_status *st);

#endif
