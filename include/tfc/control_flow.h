/* tfc — control flow with C callbacks (TensorFlow's tf.cond, tf.switch_case and tf.while_loop; the C stand-in for
 * AutoGraph). Callbacks have tfc_function_fn's form: they read n_in tensors and write up to max_out results,
 * returning the count or -1 with st set; their temporaries are released by the framework.
 *
 * Eagerly, the callbacks just run (a predicate or index is read from its tensor). Inside a traced function
 * (tfc/function.h) each callback is traced into a function of the graph's library and the construct becomes one
 * node: If / StatelessIf, Case / StatelessCase, While / StatelessWhile (the stateful form when a callback runs a
 * stateful op), which the graph executor runs. Tensors of the enclosing function used by a callback become
 * extra inputs of the node. Results are new tensors, owned as op results (caller or innermost scope). Tapes
 * record through both forms: eagerly they see the callbacks' ops; in graphs the If and Case nodes have
 * gradients (branch gradient functions under an If / Case of the same predicate), and so have While nodes: with
 * respect to the loop's inputs, the tensors its callbacks capture and the variables they read (not with respect
 * to a variable the body assigns). A While's gradient first re-runs the loop with an iteration counter and
 * accumulators that stack each iteration's loop values, then runs the body's gradient function backwards that
 * many iterations in a second While. Second-order gradients through a loop are untested. */
#ifndef TFC_CONTROL_FLOW_H
#define TFC_CONTROL_FLOW_H

#include "tfc/function.h"

#ifdef __cplusplus
extern "C" {
#endif

/* tf.cond(pred, true_fn, false_fn) with explicit operands in[0..n_in) passed to the branch that runs. pred: a
 * scalar (bool, or numeric: non-zero is true). Both branches must return the same number of results with the
 * same dtypes (INVALID_ARGUMENT otherwise, when traced); result shapes are those both branches agree on.
 * Returns the result count or -1. */
TFC_API int tfc_cond(tfc_ctx *ctx, tfc_tensor *pred, tfc_function_fn true_fn, tfc_function_fn false_fn, void *user,
                     tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, tfc_status *st);

/* tf.switch_case(branch_index, branch_fns): runs branches[branch_index] (an int32 scalar); an index outside
 * [0, n_branches) runs the last branch, as TensorFlow's Case. */
TFC_API int tfc_case(tfc_ctx *ctx, tfc_tensor *branch_index, const tfc_function_fn *branches, int n_branches,
                     void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, tfc_status *st);

typedef struct tfc_while_opts {
    int64_t maximum_iterations;     /* < 0 (or 0 in a zeroed struct with has_maximum_iterations false): none */
    bool has_maximum_iterations;
    const tfc_shape *shape_invariants; /* n shapes (rank -1 / dims -1 for unknown) or NULL: the inputs' shapes */
    int parallel_iterations;        /* recorded in the graph (default 10); iterations run in order */
    const char *const *names;       /* loop variable names for errors, or NULL */
} tfc_while_opts;

/* tf.while_loop(cond, body, loop_vars): while cond(vars) (a scalar bool) is true, vars = body(vars). body must
 * return n tensors keeping each variable's dtype and a shape compatible with its invariant, else
 * INVALID_ARGUMENT in TensorFlow's words naming the variable ("Input tensor 'x' enters the loop with shape (2,),
 * but has shape (3,) after one iteration. ..."). Writes the final n values to out; returns n or -1. opts may
 * be NULL. */
TFC_API int tfc_while_loop(tfc_ctx *ctx, tfc_function_fn cond, tfc_function_fn body, void *user,
                           tfc_tensor *const *loop_vars, int n, tfc_tensor **out, const tfc_while_opts *opts,
                           tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
