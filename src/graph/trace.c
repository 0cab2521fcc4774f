/* Tracing: while a trace is active every op call adds a node to the trace's graph (trace.h). */
#include <stdio.h>
#include <string.h>

#include "core/variable.h"
#include "graph/trace.h"

/* TensorFlow's _EAGER_CONST_THRESHOLD: eager tensors up to this many elements are captured as Const nodes. */
#define EAGER_CONST_THRESHOLD 128

static void flib_free_hook(void *lib) { tfc_flib_free(lib); }

tfc_flib *tfc_ctx_flib(tfc_ctx *ctx, tfc_status *st) {
    if (!ctx->flib) {
        if (!(ctx->flib = tfc_flib_new(st))) return NULL;
        ctx->flib_free = flib_free_hook;
    }
    return ctx->flib;
}

bool tfc_flib_fresh_name(tfc_flib *lib, const char *prefix, char *buf, size_t size) {
    for (int k = lib->n;; k++) {
        int w = snprintf(buf, size, "%s_%d", prefix, k);
        if (w < 0 || (size_t)w >= size) return false;
        if (!tfc_flib_find(lib, buf)) return true;
    }
}

bool tfc_trace_begin(tfc_ctx *ctx, tfc_trace *t, const char *name, tfc_status *st) {
    memset(t, 0, sizeof *t);
    t->ctx = ctx;
    t->last_stateful = -1;
    tfc_flib *lib = tfc_ctx_flib(ctx, st);
    if (!lib || !(t->fn = tfc_flib_add(lib, name, st))) return false;
    t->g = t->fn->body;
    if (!tfc_scope_begin(ctx, st)) {
        tfc_flib_remove(lib, t->fn);
        return false;
    }
    t->scope_open = true;
    t->outer = ctx->trace;
    t->start_id = tfc_tensor_next_id();
    ctx->trace = t;
    ctx->trace_op = tfc_trace_op;
    return true;
}

static void end_trace(tfc_trace *t) {
    if (t->ctx->trace == t) t->ctx->trace = t->outer;
    if (t->scope_open) tfc_scope_end(t->ctx);
    t->scope_open = false;
}

void tfc_trace_free_caps(tfc_trace *t) {
    for (int i = 0; i < t->n_caps; i++) tfc_tensor_unref(t->caps[i].src);
    tfc_free(t->caps);
    tfc_free(t->stateful);
    t->caps = NULL;
    t->stateful = NULL;
    t->n_caps = t->n_stateful = 0;
}

void tfc_trace_abort(tfc_trace *t) {
    end_trace(t);
    if (t->fn) tfc_flib_remove(t->fn->lib, t->fn);
    t->fn = NULL;
    t->g = NULL;
    tfc_trace_free_caps(t);
}

static tfc_tensor *symbolic_output(tfc_gnode *n, int i, tfc_status *st) {
    tfc_tensor *s;
    const tfc_tensor *cv = tfc_graph_const_value(n->graph, (tfc_gport){n->id, i});
    if (cv) s = tfc_tensor_share((tfc_tensor *)cv, &cv->shape, st); /* a Const keeps its value visible */
    else s = tfc_tensor_symbolic(n->out_dtypes[i], &n->out_shapes[i], st);
    if (!s) return NULL;
    s->node = n;
    s->node_output = i;
    return s;
}

tfc_tensor *tfc_trace_arg(tfc_trace *t, const char *name, tfc_dtype dt, const tfc_shape *shape, tfc_status *st) {
    int id = tfc_gfunc_add_arg(t->fn, name, dt, shape, st);
    if (id < 0) return NULL;
    t->n_declared++;
    tfc_tensor *s = symbolic_output(t->g->nodes[id], 0, st);
    return s && tfc_scope_track(t->ctx, s, st) ? s : NULL;
}

static bool in_enclosing_trace(const tfc_trace *t, const tfc_graph *g) {
    for (const tfc_trace *o = t->outer; o; o = o->outer)
        if (o->g == g) return true;
    return false;
}

bool tfc_trace_port(tfc_trace *t, tfc_tensor *x, tfc_gport *out, tfc_status *st) {
    const tfc_gnode *n = x->node;
    if (n && n->graph == t->g) {
        *out = (tfc_gport){n->id, x->node_output};
        return true;
    }
    if (n && !in_enclosing_trace(t, n->graph))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "tensor '%s:%d' belongs to a function graph that is no longer being built and cannot be "
                              "used here (it escaped its tf.function)", n->name, x->node_output);
    for (int i = 0; i < t->n_caps; i++)
        if (t->caps[i].key == x->id) {
            *out = (tfc_gport){t->caps[i].node, 0};
            return true;
        }
    if (t->n_caps == t->cap_caps) {
        int cap = t->cap_caps ? t->cap_caps * 2 : 8;
        tfc_capture *c = tfc_realloc(t->caps, (size_t)cap * sizeof *c);
        if (!c) return tfc_status_oom(st, "trace captures", 0);
        t->caps = c;
        t->cap_caps = cap;
    }
    const bool has_value = x->data && x->dtype != TFC_RESOURCE;
    const bool as_const = has_value && (x->num_elements <= EAGER_CONST_THRESHOLD || (!n && x->id >= t->start_id));
    int id;
    if (as_const) {
        tfc_gnode *c = tfc_graph_add_const(t->g, NULL, x, st);
        id = c ? c->id : -1;
    } else {
        id = tfc_gfunc_add_arg(t->fn, NULL, x->dtype, &x->shape, st);
    }
    if (id < 0) return false;
    t->caps[t->n_caps++] = (tfc_capture){.src = tfc_tensor_ref(x), .key = x->id, .node = id, .is_const = as_const};
    *out = (tfc_gport){id, 0};
    return true;
}

static bool note_stateful(tfc_trace *t, int id, tfc_status *st) {
    if (t->n_stateful == t->cap_stateful) {
        int cap = t->cap_stateful ? t->cap_stateful * 2 : 8;
        int *s = tfc_realloc(t->stateful, (size_t)cap * sizeof *s);
        if (!s) return tfc_status_oom(st, "trace", 0);
        t->stateful = s;
        t->cap_stateful = cap;
    }
    t->stateful[t->n_stateful++] = id;
    t->last_stateful = id;
    return true;
}

int tfc_trace_op(tfc_ctx *ctx, const tfc_op *op, tfc_tensor *const *in, int n_in, const tfc_attr *attrs, int n_attrs,
                 tfc_tensor **out, int max_out, tfc_status *st) {
    tfc_trace *t = ctx->trace;
    tfc_gport ports[TFC_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input #%d is NULL", op->def->name, i);
            return -1;
        }
        if (!tfc_trace_port(t, in[i], &ports[i], st)) return -1;
    }
    tfc_attrs ra;
    tfc_shape shapes[TFC_MAX_IO];
    tfc_dtype dts[TFC_MAX_IO];
    const int n_out = tfc_op_infer(op, in, n_in, attrs, n_attrs, &ra, dts, shapes, max_out, st);
    if (n_out < 0) return -1;
    /* a captured variable's handle carries its shape (TensorFlow's handle data): a read has that shape */
    if (n_out == 1 && n_in == 1 && in[0]->dtype == TFC_RESOURCE && in[0]->resource &&
        !strcmp(op->def->name, "ReadVariableOp"))
        shapes[0] = ((const tfc_variable *)in[0]->resource)->shape;
    bool stateful = op->def->stateful;
    for (int i = 0; i < n_in && !stateful; i++) stateful = in[i]->dtype == TFC_RESOURCE;
    int ctrl = t->last_stateful;
    tfc_gnode *n = tfc_graph_add_node(t->g, op, NULL, &ra, ports, n_in, &ctrl, stateful && ctrl >= 0 ? 1 : 0,
                                      n_out, dts, shapes, st);
    if (!n || (stateful && !note_stateful(t, n->id, st))) return -1;
    tfc_tensor *res[TFC_MAX_IO];
    for (int i = 0; i < n_out; i++)
        if (!(res[i] = symbolic_output(n, i, st))) {
            for (int k = 0; k < i; k++) tfc_tensor_unref(res[k]);
            return -1;
        }
    bool ok = true;
    if (ctx->n_tapes && n_in == 1 && in[0]->dtype == TFC_RESOURCE && in[0]->resource &&
        !strcmp(op->def->name, "ReadVariableOp"))
        tfc_tape_variable_accessed(ctx, in[0]->resource);
    if (ctx->n_tapes && !ctx->record_paused && tfc_tape_should_record(ctx, in, n_in))
        ok = tfc_tape_record_op(ctx, op, &ra, in, n_in, res, n_out, st);
    for (int i = 0; i < n_out; i++) {
        if (!ok) {
            tfc_tensor_unref(res[i]);
            continue;
        }
        out[i] = res[i];
        if (!tfc_scope_track(ctx, res[i], st)) {
            ok = false;
            for (int j = i + 1; j < n_out; j++) tfc_tensor_unref(res[j]);
            break;
        }
    }
    if (!ok) return -1;
    tfc_status_clear(st);
    return n_out;
}

bool tfc_trace_finish(tfc_trace *t, tfc_tensor *const *outs, int n, tfc_status *st) {
    tfc_gport rets[TFC_MAX_IO];
    if (n < 0 || n > TFC_MAX_IO)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s': %d results is outside [0, %d]", t->fn->name, n,
                              TFC_MAX_IO);
    for (int i = 0; i < n; i++) {
        if (!outs[i])
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s': result %d is NULL", t->fn->name, i);
        tfc_tensor *id = tfc_emit(t->ctx, "Identity", &outs[i], 1, NULL, 0, st);
        if (!id) return false;
        const tfc_gnode *node = id->node;
        rets[i] = (tfc_gport){node->id, 0};
    }
    if (!tfc_gfunc_set_rets(t->fn, rets, NULL, n, st)) return false;
    if (t->n_stateful) {
        t->fn->ctrl_rets = t->stateful;
        t->fn->n_ctrl_rets = t->n_stateful;
        t->stateful = NULL;
        t->n_stateful = t->cap_stateful = 0;
    }
    tfc_gfunc_update_stateful(t->fn);
    end_trace(t);
    return true;
}

bool tfc_gfunc_replay(tfc_ctx *ctx, const tfc_gfunc *fn, tfc_tensor *const *in, tfc_tensor **out, tfc_status *st) {
    const tfc_graph *g = fn->body;
    int *order = tfc_malloc((size_t)g->n_nodes * sizeof *order + 1);
    int *first = tfc_calloc((size_t)g->n_nodes + 1, sizeof *first);
    tfc_tensor **vals = NULL;
    bool ok = order && first;
    if (!ok) tfc_status_oom(st, "function replay", 0);
    ok = ok && tfc_graph_topo_order(g, order, st);
    if (ok) {
        for (int i = 0; i < g->n_nodes; i++) first[i + 1] = first[i] + g->nodes[i]->n_out;
        ok = (vals = tfc_calloc((size_t)first[g->n_nodes] + 1, sizeof *vals)) != NULL;
        if (!ok) tfc_status_oom(st, "function replay", 0);
    }
    bool scoped = ok && tfc_scope_begin(ctx, st);
    ok = scoped;
    for (int k = 0; ok && k < g->n_nodes; k++) {
        const tfc_gnode *n = g->nodes[order[k]];
        if (!strcmp(n->op->def->name, "Placeholder")) {
            int a = 0;
            while (a < fn->n_args && fn->arg_nodes[a] != n->id) a++;
            if (a == fn->n_args) {
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s': placeholder '%s' is not an argument",
                                    fn->name, n->name);
                break;
            }
            vals[first[n->id]] = in[a];
            continue;
        }
        tfc_tensor *ins[TFC_MAX_IO];
        tfc_attr at[TFC_MAX_ATTRS];
        int n_at = 0;
        for (int i = 0; i < n->n_in; i++) ins[i] = vals[first[n->in[i].node] + n->in[i].index];
        for (int i = 0; n->attrs && i < n->attrs->n; i++)
            if (n->attrs->a[i].kind != TFC_ATTR_NONE) at[n_at++] = n->attrs->a[i];
        ok = tfc_execute_op(ctx, n->op, ins, n->n_in, at, n_at, &vals[first[n->id]], n->n_out, st) >= 0;
    }
    if (ok)
        for (int i = 0; i < fn->n_rets; i++) out[i] = vals[first[fn->rets[i].node] + fn->rets[i].index];
    if (scoped) {
        if (ok) ok = tfc_scope_end_keep(ctx, out, fn->n_rets, st);
        else tfc_scope_end(ctx);
    }
    tfc_free(order);
    tfc_free(first);
    tfc_free(vals);
    return ok;
}

void tfc_captures_free(tfc_tensor **caps, int n) {
    for (int i = 0; i < n; i++) tfc_tensor_unref(caps[i]);
    tfc_free(caps);
}

tfc_gfunc *tfc_trace_callback(tfc_ctx *ctx, const char *name, tfc_callback_fn fn, void *user, const tfc_dtype *dts,
                              const tfc_shape *shapes, int n, char *const *arg_names, tfc_tensor ***caps,
                              int *n_caps, tfc_status *st) {
    tfc_tape *saved[TFC_MAX_TAPES];
    const int n_saved = ctx->n_tapes, paused = ctx->record_paused;
    memcpy(saved, ctx->tapes, (size_t)n_saved * sizeof *saved);
    ctx->n_tapes = 0;
    ctx->record_paused = 0;
    tfc_gfunc *res = NULL;
    tfc_trace t;
    *caps = NULL;
    *n_caps = 0;
    bool ok = tfc_trace_begin(ctx, &t, name, st);
    if (!ok) goto restore;
    tfc_tensor *args[TFC_MAX_IO], *outs[TFC_MAX_IO];
    for (int i = 0; i < n && ok; i++) {
        char an[32];
        snprintf(an, sizeof an, "args_%d", i);
        ok = (args[i] = tfc_trace_arg(&t, arg_names && arg_names[i] ? arg_names[i] : an, dts[i], &shapes[i], st)) != NULL;
    }
    int n_out = ok ? fn(ctx, args, n, outs, TFC_MAX_IO, user, st) : -1;
    if (n_out < 0 || ctx->trace != &t) {
        if (n_out >= 0) tfc_status_set(st, TFC_INTERNAL, "function '%s': a nested trace was left open", name);
        ok = false;
    }
    if (ok && n_out > TFC_MAX_IO)
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s' returned %d outputs, more than %d", name, n_out,
                            TFC_MAX_IO);
    if (ok) ok = tfc_trace_finish(&t, outs, n_out, st);
    if (!ok) {
        while (ctx->trace && ctx->trace != t.outer && ctx->trace != &t) tfc_trace_abort(ctx->trace);
        tfc_trace_abort(&t);
        goto restore;
    }
    tfc_tensor **c = tfc_malloc((size_t)t.n_caps * sizeof *c + 1);
    if (!c) {
        tfc_status_oom(st, "trace", 0);
        tfc_flib_remove(t.fn->lib, t.fn);
        tfc_trace_free_caps(&t);
        goto restore;
    }
    for (int i = 0; i < t.n_caps; i++)
        if (!t.caps[i].is_const) c[(*n_caps)++] = tfc_tensor_ref(t.caps[i].src);
    *caps = c;
    res = t.fn;
    tfc_trace_free_caps(&t);
restore:
    memcpy(ctx->tapes, saved, (size_t)n_saved * sizeof *saved);
    ctx->n_tapes = n_saved;
    ctx->record_paused = paused;
    return res;
}
