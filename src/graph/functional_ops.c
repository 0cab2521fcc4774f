/* Function-call ops: PartitionedCall and StatefulPartitionedCall run a function of the context's library with
 * the graph executor. Their gradient is itself a function (TensorFlow's SymbolicGradient of a call): the
 * forward function replayed under a tape inside a trace, whose gradient results are its outputs; it is built
 * once per function and called like any other. */
#include <stdio.h>
#include <string.h>

#include "graph/exec.h"
#include "graph/functional.h"
#include "graph/trace.h"
#include "kernels/cpu/kernels.h"

static tfc_gfunc *find_fn(tfc_ctx *ctx, const tfc_attrs *attrs, const char *attr, const char *op, tfc_status *st) {
    const tfc_attr *a = tfc_attrs_find(attrs, attr);
    const char *name = a && a->kind == TFC_ATTR_FUNC ? a->v.s : "";
    tfc_gfunc *fn = tfc_flib_find(ctx->flib, name);
    if (!fn) tfc_status_set(st, TFC_NOT_FOUND, "%s: function '%s' is not defined in the library", op, name);
    return fn;
}

bool tfc_call_gfunc(tfc_ctx *ctx, tfc_gfunc *fn, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                    tfc_status *st) {
    if (n_out != fn->n_rets)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s' has %d results, the call expects %d", fn->name,
                              fn->n_rets, n_out);
    tfc_exec *x = tfc_exec_get(ctx, fn, st);
    tfc_tensor *res[TFC_MAX_IO];
    if (!x || !tfc_exec_run(ctx, x, in, n_in, res, st)) return false;
    for (int o = 0; o < n_out; o++) {
        tfc_tensor_unref(out[o]);
        out[o] = res[o];
    }
    return true;
}

static bool call_k(tfc_kernel_ctx *k, tfc_status *st) {
    tfc_gfunc *fn = find_fn(k->ctx, k->attrs, "f", k->op->name, st);
    return fn && tfc_call_gfunc(k->ctx, fn, k->in, k->n_in, k->out, k->n_out, st);
}

static bool differentiable(tfc_dtype dt) { return tfc_dtype_is_floating(dt) || dt == TFC_RESOURCE; }

/* The gradient function of fn, traced as `name`: args are fn's args then one upstream gradient per floating
 * result. need NULL: results are the gradients of the connected differentiable args, named "dx_<arg index>".
 * need given: one result per arg with need[i] != TFC_INVALID_DTYPE, zeros of that dtype when unconnected (a
 * resource arg's zeros are those of its variable's value, read with dtype need[i]): branches of one If / Case
 * get the same results this way. */
tfc_gfunc *tfc_gfunc_grad_fn(tfc_ctx *ctx, tfc_gfunc *fn, const char *name, const tfc_dtype *need, tfc_status *st) {
    tfc_trace t;
    tfc_tape *tape = NULL;
    if (!tfc_trace_begin(ctx, &t, name, st)) return NULL;
    tfc_tape *saved[TFC_MAX_TAPES];
    const int n_saved = ctx->n_tapes, paused = ctx->record_paused;
    memcpy(saved, ctx->tapes, (size_t)n_saved * sizeof *saved);
    ctx->n_tapes = 0;
    ctx->record_paused = 0;
    tfc_tensor *xs[TFC_MAX_IO], *dys[TFC_MAX_IO], *outs[TFC_MAX_IO], *tg[TFC_MAX_IO], *src[TFC_MAX_IO];
    tfc_tensor *dx[TFC_MAX_IO], *res[TFC_MAX_IO];
    int src_arg[TFC_MAX_IO], n_src = 0, n_tg = 0, n_res = 0;
    char res_buf[TFC_MAX_IO][16];
    bool ok = true;
    for (int i = 0; i < fn->n_args && ok; i++) {
        const tfc_gnode *p = fn->body->nodes[fn->arg_nodes[i]];
        ok = (xs[i] = tfc_trace_arg(&t, NULL, p->out_dtypes[0], &p->out_shapes[0], st)) != NULL;
    }
    for (int i = 0; i < fn->n_rets && ok; i++) {
        const tfc_gnode *p = fn->body->nodes[fn->rets[i].node];
        dys[i] = NULL;
        if (tfc_dtype_is_floating(p->out_dtypes[fn->rets[i].index]))
            ok = (dys[i] = tfc_trace_arg(&t, NULL, p->out_dtypes[fn->rets[i].index], &p->out_shapes[fn->rets[i].index],
                                         st)) != NULL;
    }
    ok = ok && (tape = tfc_tape_new(ctx, false, false, st)) != NULL;
    for (int i = 0; i < fn->n_args && ok; i++)
        if (differentiable(xs[i]->dtype) && (!need || need[i] != TFC_INVALID_DTYPE)) {
            tfc_tape_watch(tape, xs[i]);
            src[n_src] = xs[i];
            src_arg[n_src++] = i;
        }
    ok = ok && tfc_gfunc_replay(ctx, fn, xs, outs, st);
    if (ok) {
        tfc_tensor *og[TFC_MAX_IO];
        for (int i = 0; i < fn->n_rets; i++)
            if (dys[i]) {
                tg[n_tg] = outs[i];
                og[n_tg++] = dys[i];
            }
        ok = tfc_tape_gradient_n(tape, tg, n_tg, og, src, n_src, NULL, 0, TFC_UNCONNECTED_NONE, dx, st);
    }
    for (int i = 0; i < n_src && ok; i++) {
        tfc_tensor *d = dx[i], *x = src[i]; /* dx[i] is owned by the trace's scope */
        if (!d && need) {
            if (x->dtype == TFC_RESOURCE) {
                tfc_attr a = TFC_ATTR_T("dtype", need[src_arg[i]]);
                x = tfc_emit(ctx, "ReadVariableOp", &x, 1, &a, 1, st);
            }
            d = x ? tfc_emit(ctx, "ZerosLike", &x, 1, NULL, 0, st) : NULL;
            ok = d != NULL;
        }
        if (!d) continue;
        res[n_res] = d;
        snprintf(res_buf[n_res], sizeof res_buf[0], "dx_%d", src_arg[i]);
        n_res++;
    }
    tfc_tape_free(tape);
    memcpy(ctx->tapes, saved, (size_t)n_saved * sizeof *saved);
    ctx->n_tapes = n_saved;
    ctx->record_paused = paused;
    if (ok && tfc_trace_finish(&t, res, n_res, st)) {
        tfc_gfunc *g = t.fn;
        for (int i = 0; i < n_res && ok; i++) {
            tfc_free(g->ret_names[i]);
            if (!(g->ret_names[i] = tfc_strdup(res_buf[i]))) ok = tfc_status_oom(st, "gradient function", 0);
        }
        /* The body reads only its arguments and constants: an input capture means a tensor escaped into it. */
        for (int i = 0; i < t.n_caps && ok; i++)
            if (!t.caps[i].is_const)
                ok = tfc_status_set(st, TFC_INTERNAL, "gradient of '%s' captured an outside %s tensor", fn->name,
                                    tfc_dtype_name(t.caps[i].src->dtype));
        tfc_trace_free_caps(&t);
        if (!ok) {
            tfc_flib_remove(ctx->flib, g);
            return NULL;
        }
        return g;
    }
    tfc_trace_abort(&t);
    return NULL;
}

static tfc_gfunc *grad_fn(tfc_ctx *ctx, tfc_gfunc *fn, tfc_status *st) {
    char name[256];
    snprintf(name, sizeof name, "%s_grad", fn->name);
    tfc_gfunc *g = tfc_flib_find(ctx->flib, name);
    return g ? g : tfc_gfunc_grad_fn(ctx, fn, name, NULL, st);
}

bool tfc_gfunc_gradient(tfc_ctx *ctx, tfc_gfunc *fn, tfc_tensor *const *in, tfc_tensor *const *out,
                        tfc_tensor *const *dy, tfc_tensor **dx, tfc_status *st) {
    tfc_gfunc *g = grad_fn(ctx, fn, st);
    if (!g) return false;
    tfc_tensor *args[2 * TFC_MAX_IO], *res[TFC_MAX_IO];
    int n = 0;
    for (int i = 0; i < fn->n_args; i++) args[n++] = in[i];
    for (int i = 0; i < fn->n_rets; i++) {
        tfc_dtype dt = fn->body->nodes[fn->rets[i].node]->out_dtypes[fn->rets[i].index];
        if (!tfc_dtype_is_floating(dt)) continue;
        if (dy[i]) args[n++] = dy[i];
        else if (!(args[n++] = tfc_emit(ctx, "ZerosLike", (tfc_tensor *const *)&out[i], 1, NULL, 0, st))) return false;
    }
    if (n > TFC_MAX_IO)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "gradient of '%s': %d arguments is more than %d", fn->name, n,
                              TFC_MAX_IO);
    if (!tfc_call_emit(ctx, g, args, n, res, st)) return false;
    for (int i = 0; i < g->n_rets; i++) {
        int a = -1;
        sscanf(g->ret_names[i], "dx_%d", &a);
        if (a >= 0 && a < fn->n_args) dx[a] = res[i];
    }
    return true;
}

static bool call_grad(tfc_grad_ctx *g, tfc_status *st) {
    tfc_gfunc *fn = find_fn(g->ctx, g->attrs, "f", g->op->name, st);
    return fn && tfc_gfunc_gradient(g->ctx, fn, g->in, g->out, g->dy, g->dx, st);
}

bool tfc_call_emit(tfc_ctx *ctx, tfc_gfunc *fn, tfc_tensor *const *in, int n_in, tfc_tensor **out, tfc_status *st) {
    tfc_dtype tout[TFC_MAX_IO];
    tfc_gfunc_ret_dtypes(fn, tout);
    tfc_attr a[2] = {TFC_ATTR_FN("f", fn->name),
                     {.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = fn->n_rets, .v.types = tout}};
    const tfc_op *op = tfc_op_lookup(fn->stateful ? "StatefulPartitionedCall" : "PartitionedCall");
    int n = tfc_execute_op(ctx, op, in, n_in, a, 2, out, TFC_MAX_IO, st);
    if (n < 0) return false;
    /* In a trace the call's results take the function's result shapes (the op's own shape function cannot
     * see the library). */
    for (int i = 0; ctx->trace && i < n; i++) {
        tfc_gnode *node = out[i]->node;
        const tfc_shape *s = &fn->body->nodes[fn->rets[i].node]->out_shapes[fn->rets[i].index];
        node->out_shapes[i] = *s;
        out[i]->shape = *s;
        int64_t ne = 1;
        for (int d = 0; d < s->rank && ne >= 0; d++) ne = s->dims[d] < 0 ? -1 : ne * s->dims[d];
        out[i]->num_elements = s->rank < 0 ? -1 : ne;
    }
    return true;
}

#define CALL_ATTRS "Tin: list(type) >= 0, Tout: list(type) >= 0, f: func, config: string = '', " \
                   "config_proto: string = '', executor_type: string = ''"
static bool call_shape(tfc_shape_ctx *c, tfc_status *st) {
    for (int i = 0; i < c->n_out; i++) c->out_shapes[i].rank = -1;
    return true;
}
const tfc_op_def tfc_op_def_partitioned_call = {
    .name = "PartitionedCall", .inputs = "args: Tin", .outputs = "output: Tout", .attrs = CALL_ATTRS,
    .shape = call_shape, .grad = call_grad, .grad_null_dy = ~0u,
};
const tfc_op_def tfc_op_def_stateful_partitioned_call = {
    .name = "StatefulPartitionedCall", .inputs = "args: Tin", .outputs = "output: Tout", .attrs = CALL_ATTRS,
    .shape = call_shape, .grad = call_grad, .stateful = true, .grad_null_dy = ~0u,
};

const tfc_op_def *const tfc_ops_functional[] = {
    &tfc_op_def_partitioned_call, &tfc_op_def_stateful_partitioned_call, NULL,
};
const tfc_kernel_reg tfc_cpu_kernels_functional[] = {
    {"PartitionedCall", call_k}, {"StatefulPartitionedCall", call_k}, {NULL, NULL},
};
