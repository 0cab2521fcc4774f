/* Internal: calling library functions (the call ops' kernel and emitters) and their gradients. */
#ifndef TFC_GRAPH_FUNCTIONAL_H
#define TFC_GRAPH_FUNCTIONAL_H

#include "eager/context_internal.h"
#include "graph/graph.h"

/* Runs fn with the executor on n_in inputs (arguments then captures), replacing out[0..n_out) (NULL or
 * references the caller owns) with its results. */
bool tfc_call_gfunc(tfc_ctx *ctx, tfc_gfunc *fn, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    tfc_status *st);
/* Emits a (Stateful)PartitionedCall of fn through tfc_execute_op: runs it eagerly (recorded on tapes) or adds a
 * call node to the active trace (its outputs then carry fn's result shapes). out gets fn->n_rets tensors. */
bool tfc_call_emit(tfc_ctx *ctx, tfc_gfunc *fn, tfc_tensor *const *in, int n_in, tfc_tensor **out, tfc_status *st);
/* The gradient of a call of fn: in are the call's inputs, out its results, dy their upstream gradients (NULL:
 * none). Sets dx[i] for each argument the results depend on (others untouched). Emits a call of fn's gradient
 * function (built and added to the library on first use), so it works eagerly, in traces and to any order. */
bool tfc_gfunc_gradient(tfc_ctx *ctx, tfc_gfunc *fn, tfc_tensor *const *in, tfc_tensor *const *out,
                        tfc_tensor *const *dy, tfc_tensor **dx, tfc_status *st);

/* Traces the gradient function of fn as `name` (see functional_ops.c): args are fn's args then the upstream
 * gradients of its floating results; results named "dx_<arg>", for connected args (need NULL) or exactly the
 * args with need[i] != TFC_INVALID_DTYPE (zeros when unconnected). */
tfc_gfunc *tfc_gfunc_grad_fn(tfc_ctx *ctx, tfc_gfunc *fn, const char *name, const tfc_dtype *need, tfc_status *st);

/* The dtype fn reads its resource argument a with (ReadVariableOp / Assign*VariableOp's dtype), or
 * TFC_INVALID_DTYPE when it does not read it (control_flow_ops.c). */
tfc_dtype tfc_gfunc_resource_dtype(const tfc_gfunc *fn, int a);
/* Whether shape s (every value it may have) fits a while_loop shape invariant (control_flow.c). */
bool tfc_shape_fits_invariant(const tfc_shape *inv, const tfc_shape *s);
/* The gradient of While / StatelessWhile (while_grad.c). */
bool tfc_while_grad(tfc_grad_ctx *g, tfc_status *st);

#endif
