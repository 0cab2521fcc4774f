/* Internal: tracing C functions into graph functions (the core of tf.function, cond and while_loop).
 *
 * A trace builds one function of the context's library. While it is active (ctx->trace), every op call adds a
 * node and returns symbolic tensors. Tensors from outside the trace (eager tensors, or symbolic tensors of an
 * enclosing trace) are captured on first use: small or trace-made eager tensors become Const nodes, others
 * become extra Placeholder arguments after the declared ones, whose outside values are kept in `caps` (the
 * caller feeds them on each call). Stateful ops are chained by control edges in program order and listed as
 * the function's control results. */
#ifndef TFC_GRAPH_TRACE_H
#define TFC_GRAPH_TRACE_H

#include "eager/context_internal.h"
#include "graph/graph.h"

typedef struct tfc_capture {
    tfc_tensor *src; /* the outside tensor (a reference) */
    uint64_t key;    /* src->id */
    int node;        /* its Placeholder or Const node in the trace's graph */
    bool is_const;
} tfc_capture;

typedef struct tfc_trace {
    tfc_ctx *ctx;
    void *outer;      /* the enclosing trace (ctx->trace before this one) */
    tfc_gfunc *fn;    /* being built; removed from the library if the trace fails */
    tfc_graph *g;
    tfc_capture *caps;
    int n_caps, cap_caps;
    int n_declared;   /* declared arguments (placeholders before captures) */
    uint64_t start_id; /* eager tensors with an id at least this were made during the trace */
    int last_stateful; /* node id, or -1 */
    int *stateful;
    int n_stateful, cap_stateful;
    bool scope_open;
} tfc_trace;

/* The context's function library, made on first use (freed with the context). NULL with st set on OOM. */
tfc_flib *tfc_ctx_flib(tfc_ctx *ctx, tfc_status *st);
/* A fresh function name in ctx's library: "<prefix>_<n>" (TensorFlow's "__inference_f_12"). */
bool tfc_flib_fresh_name(tfc_flib *lib, const char *prefix, char *buf, size_t size);

/* Starts tracing function `name` (added to ctx's library) and opens a scope for the trace's tensors. The
 * declared arguments come next with tfc_trace_arg. */
bool tfc_trace_begin(tfc_ctx *ctx, tfc_trace *t, const char *name, tfc_status *st);
/* Adds declared argument i (a Placeholder) and returns its symbolic tensor (scope-owned). */
tfc_tensor *tfc_trace_arg(tfc_trace *t, const char *name, tfc_dtype dt, const tfc_shape *shape, tfc_status *st);
/* The port standing for x in the trace's graph (capturing x when it comes from outside). */
bool tfc_trace_port(tfc_trace *t, tfc_tensor *x, tfc_gport *out, tfc_status *st);
/* Sets the results (each through an Identity node, as TensorFlow's), the control results, and ends the trace
 * (closing its scope). On success the function stays in the library and t->caps keeps the captures (release
 * with tfc_trace_free_caps). */
bool tfc_trace_finish(tfc_trace *t, tfc_tensor *const *outs, int n, tfc_status *st);
/* Ends a trace that failed: closes its scope, removes the function, releases the captures. */
void tfc_trace_abort(tfc_trace *t);
void tfc_trace_free_caps(tfc_trace *t);

/* The trace hook installed in ctx->trace_op (adds a node per op). */
int tfc_trace_op(tfc_ctx *ctx, const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                 tfc_tensor **out, int max_out, tfc_status *st);

/* Traces a C callback (tfc_function_fn) into a new library function `name` whose arguments are n placeholders
 * of dts / shapes (arg_names may be NULL) followed by one per input capture. Outer tapes are hidden during the
 * trace (the call or control-flow node is what they record). On success returns the function and sets
 * *caps / *n_caps to the captured outside tensors (references the caller releases with tfc_captures_free), in
 * argument order; on failure nothing is left in the library. */
typedef int (*tfc_callback_fn)(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out,
                               void *user, tfc_status *st);
tfc_gfunc *tfc_trace_callback(tfc_ctx *ctx, const char *name, tfc_callback_fn fn, void *user, const tfc_dtype *dts,
                              const tfc_shape *shapes, int n, char *const *arg_names, tfc_tensor ***caps,
                              int *n_caps, tfc_status *st);
void tfc_captures_free(tfc_tensor **caps, int n);

/* Replays fn's body through tfc_execute_op on `in` (n_args tensors; eagerly or into the active trace), writing
 * its n_rets results (scope-owned) to out. Used to differentiate a function (under a tape) and to inline it. */
bool tfc_gfunc_replay(tfc_ctx *ctx, const tfc_gfunc *fn, tfc_tensor *const *in, tfc_tensor **out, tfc_status *st);

#endif
