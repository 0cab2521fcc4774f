/* tfc — graph functions (TensorFlow 2's tf.function and ConcreteFunction).
 *
 * tfc_function_new wraps a C function. Calling the result with tensors traces the C function once per input
 * signature (each input's dtype and shape): during the trace every op the function runs through tfc_execute
 * adds a node to a graph and returns a symbolic tensor (no data; dtype and a partially known shape) instead of
 * running a kernel. The traced graph (a concrete function) is cached and run by the graph executor on this and
 * later calls with a matching signature.
 *
 * Inside the traced function:
 *   - inputs are symbolic tensors; ops on them give symbolic tensors (tfc_tensor_is_symbolic is true, data
 *     is NULL). Shapes may have unknown dims (-1) under an input_signature or reduce_retracing.
 *   - eager tensors used from outside become captured inputs: those with at most 128 elements, and any made
 *     during the trace (tf.constant inside a tf.function), become Const nodes; larger ones are captured by
 *     reference and fed on each call, as TensorFlow's captures.
 *   - variables read or assigned are captured resources: calls see and update their current values.
 *   - stateful ops (assignments, random ops, ...) run in program order (TensorFlow's automatic control
 *     dependencies) and always run, even when no output depends on them.
 *   - GradientTape works: gradient functions emit ops, so they trace.
 *   - the C function must not read tensor data (it has none during the trace); Python control flow has a C
 *     stand-in in tfc/control_flow.h.
 * A function is used from the thread of its context. */
#ifndef TFC_FUNCTION_H
#define TFC_FUNCTION_H

#include "tfc/data.h"
#include "tfc/eager.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The function to trace: reads n_in inputs, writes up to max_out outputs (tensors returned by ops, inputs,
 * or eager tensors) and returns how many, or -1 with st set. Its temporaries are released by the framework
 * (it runs inside a scope), so it must not unref the tensors it returns. */
typedef int (*tfc_function_fn)(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out,
                               void *user, tfc_status *st);

/* Input specs are tf.TensorSpec (tfc_tensor_spec of tfc/data.h: dtype and shape, rank -1 for unknown rank,
 * dims -1 for unknown dims). */

typedef struct tfc_function_opts {
    const char *name;                      /* used in graph and warning text; NULL: "function" */
    const tfc_tensor_spec *input_signature; /* tf.function(input_signature=...); NULL: per-call signatures */
    int n_input_signature;
    const char *const *input_names;        /* n_input_signature argument names (may be NULL) for graphs and errors */
    bool reduce_retracing;                 /* tf.function(reduce_retracing=True): generalise differing dims */
} tfc_function_opts;

typedef struct tfc_function tfc_function;
typedef struct tfc_concrete_function tfc_concrete_function;

/* New function object bound to ctx (opts may be NULL; the signature is copied). NULL with st set on OOM or a
 * bad signature (INVALID_ARGUMENT). */
TFC_API tfc_function *tfc_function_new(tfc_ctx *ctx, tfc_function_fn fn, void *user, const tfc_function_opts *opts,
                                       tfc_status *st);
/* Frees the function object and its concrete functions (NULL-safe). A concrete function's graph leaves the
 * context's function library with it, unless another function's graph still calls it (then it stays until
 * the context is freed). */
TFC_API void tfc_function_free(tfc_function *f);

/* Calls f (tf.function.__call__): traces on a new signature, then runs the concrete function. Outputs are new
 * eager tensors (caller- or scope-owned as op results). Returns the output count or -1 with st set:
 *   INVALID_ARGUMENT  inputs contradict the input_signature (names the argument and both specs), too many
 *                     outputs for max_out, or the traced function's own errors
 * A trace that fails leaves no concrete function behind. Called inside another trace, the call becomes a
 * (Stateful)PartitionedCall node. Recorded on active tapes: gradients flow through the call. */
TFC_API int tfc_function_call(tfc_function *f, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out,
                              tfc_status *st);

/* tf.function.get_concrete_function(*specs): the concrete function for these input specs, traced if needed
 * (borrowed; owned by f). With an input_signature, specs may be NULL (n = 0). */
TFC_API tfc_concrete_function *tfc_function_get_concrete_function(tfc_function *f, const tfc_tensor_spec *specs,
                                                                  int n, tfc_status *st);
/* experimental_get_tracing_count(): traces so far (failed traces included, as TensorFlow counts). */
TFC_API int tfc_function_tracing_count(const tfc_function *f);

/* Runs a concrete function on inputs matching its specs (dims it knows must match). As tfc_function_call. */
TFC_API int tfc_concrete_function_call(tfc_concrete_function *cf, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                                       int max_out, tfc_status *st);
/* Its inputs (user arguments; captures excluded) and outputs. */
TFC_API int tfc_concrete_function_num_inputs(const tfc_concrete_function *cf);
TFC_API int tfc_concrete_function_num_outputs(const tfc_concrete_function *cf);
TFC_API tfc_tensor_spec tfc_concrete_function_input_spec(const tfc_concrete_function *cf, int i);
TFC_API tfc_tensor_spec tfc_concrete_function_output_spec(const tfc_concrete_function *cf, int i);
/* Nodes in its graph (Placeholders of inputs and captures included); its library name ("__inference_f_12"). */
TFC_API int tfc_concrete_function_num_nodes(const tfc_concrete_function *cf);
TFC_API const char *tfc_concrete_function_name(const tfc_concrete_function *cf);
/* How many captured tensors (variables' handles and large eager tensors) it feeds on each call. */
TFC_API int tfc_concrete_function_num_captures(const tfc_concrete_function *cf);
/* Captured tensor i (ConcreteFunction.captured_inputs[i]): a variable's resource handle (tfc_variable_from_handle
 * gives the variable) or an eager tensor; borrowed, NULL when out of range. */
TFC_API const tfc_tensor *tfc_concrete_function_capture(const tfc_concrete_function *cf, int i);

/* ---- graph optimisation (tf.config.optimizer.set_experimental_options) ---------------------------------
 * Passes run when a concrete function is first called (instantiated); the traced graph itself is kept as
 * traced. Each pass is switchable; the default is all on. */
typedef struct tfc_optimizer_opts {
    bool constant_folding;            /* ops whose inputs are all constants are computed once */
    bool arithmetic_optimization;     /* chains of AddV2 over equal shapes become AddN */
    bool common_subgraph_elimination; /* identical stateless nodes are computed once */
    bool pruning;                     /* nodes no result, control result or stateful op needs are dropped */
    bool remapping; /* MatMul / Conv2D + BiasAdd (+ Relu, Relu6, Elu or LeakyRelu) whose intermediates nothing
                     * else reads become one _FusedMatMul / _FusedConv2D (float32/float64, NHWC) */
} tfc_optimizer_opts;
/* Sets the passes for functions instantiated from now on in ctx. */
TFC_API void tfc_ctx_set_optimizer_options(tfc_ctx *ctx, const tfc_optimizer_opts *opts);
TFC_API tfc_optimizer_opts tfc_ctx_get_optimizer_options(const tfc_ctx *ctx);
/* The passes run on cf (instantiating it if needed): writes up to max (name, nodes before, nodes after) and
 * returns how many passes ran, or -1 with st set. */
TFC_API int tfc_concrete_function_pass_report(tfc_concrete_function *cf, const char **names, int *before, int *after,
                                              int max, tfc_status *st);

/* ---- execution: threads and memory ---------------------------------------------------------------------
 * tf.config.threading.set_inter_op_parallelism_threads / get_inter_op_parallelism_threads, per context: how
 * many threads of the context's pool (tfc_ctx_opts.intra_op_threads) a graph function's run may use for
 * independent nodes. 0 (the default): all of them; 1: one node at a time, in a fixed order. A function whose
 * independent work is too small to gain (estimated from its static shapes when it is instantiated) always runs
 * one node at a time, each kernel splitting its own work over the pool. In a parallel run each node runs on
 * one thread, so a run gives the same values every time, equal to the sequential run's wherever a kernel's
 * arithmetic does not depend on how many threads split it. Takes effect on the next call; negative values
 * count as 0. */
TFC_API void tfc_ctx_set_inter_op_parallelism_threads(tfc_ctx *ctx, int num_threads);
TFC_API int tfc_ctx_get_inter_op_parallelism_threads(const tfc_ctx *ctx);

/* The memory plan of a concrete function's optimised graph (liveness-based buffer assignment). Values are the
 * outputs of the graph's kernels; inputs, captures, constants and variables are not counted. */
typedef struct tfc_memory_plan {
    int64_t peak_bytes;   /* most bytes of planned buffers live at once over a run (one node at a time) */
    int64_t buffer_bytes; /* the planned buffers' sizes added up */
    int n_buffers;        /* buffers after reusing dead values' buffers and in-place writes */
    int n_values;         /* values of a size known from the traced shapes */
    int n_inplace;        /* values written into the buffer of an input that dies at their node */
    int n_unknown;        /* values sized only at run time (unknown dims, strings): not in the figures */
} tfc_memory_plan;
/* Fills *plan for cf (instantiating it if needed, as its first call does). Returns false with st set when
 * instantiation fails (the errors of a first call: UNIMPLEMENTED for an op without a kernel, ...). */
TFC_API bool tfc_concrete_function_memory_plan(tfc_concrete_function *cf, tfc_memory_plan *plan, tfc_status *st);

/* True while ctx is tracing (tf.inside_function()). */
TFC_API bool tfc_inside_function(const tfc_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif
