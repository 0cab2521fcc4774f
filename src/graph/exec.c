/* The graph executor (exec.h). Instantiation does the per-node work once: kernel lookup, run order, flat value
 * slots for every output, each node's input slots, and which slots die after each node. A run then only
 * allocates outputs (shape functions rerun only for nodes whose static shapes are not fully known), calls
 * kernels and drops values at their last use, so a node costs about one kernel call. */
#include <string.h>

#include "graph/exec_internal.h"

static void exec_free(void *p) {
    tfc_exec *x = p;
    if (!x) return;
    for (int i = 0; x->nodes && i < x->n_nodes; i++) tfc_kernel_inst_unref(x->nodes[i].inst);
    tfc_opt_graph_clear(&x->og);
    tfc_free(x->nodes);
    tfc_free(x->in_slots);
    tfc_free(x->rel_slots);
    tfc_free(x->ret_slots);
    tfc_free(x->last_use);
    tfc_free(x->succ);
    tfc_free(x->uses);
    tfc_free(x->arg_nodes);
    tfc_free(x);
}

int tfc_exec_num_nodes(const tfc_exec *x) { return x->n_nodes; }
const tfc_memory_plan *tfc_exec_mem(const tfc_exec *x) { return &x->mem; }
bool tfc_exec_is_parallel(const tfc_exec *x) { return x->parallel; }

int tfc_exec_pass_report(const tfc_exec *x, const char **names, int *before, int *after, int max) {
    for (int i = 0; i < x->og.n_stats && i < max; i++) {
        names[i] = x->og.stats[i].pass;
        before[i] = x->og.stats[i].before;
        after[i] = x->og.stats[i].after;
    }
    return x->og.n_stats;
}

/* The node's kernel, and its instance when the kernel keeps state: made once per instantiation, as
 * TensorFlow constructs a function's OpKernels when it is instantiated. */
static bool node_kernel(tfc_ctx *ctx, const tfc_graph *g, const tfc_gnode *d, xnode *xn, tfc_status *st) {
    const tfc_kernel_entry *ke = tfc_device_kernel(tfc_device_cpu(), d->op, d->attrs);
    if (!ke) return tfc_status_set(st, TFC_UNIMPLEMENTED, "node '%s': %s has no CPU kernel", d->name, d->op->def->name);
    xn->kernel = ke->compute;
    if (!ke->create) return true;
    tfc_dtype dts[TFC_MAX_IO];
    for (int i = 0; i < d->n_in && i < TFC_MAX_IO; i++) dts[i] = g->nodes[d->in[i].node]->out_dtypes[d->in[i].index];
    return (xn->inst = tfc_kernel_inst_new(ctx, tfc_device_cpu(), ke, d->op, d->attrs, dts, d->n_in, st)) != NULL;
}

static tfc_exec *instantiate(tfc_ctx *ctx, tfc_gfunc *fn, tfc_status *st) {
    tfc_exec *x = tfc_calloc(1, sizeof *x);
    if (!x) return tfc_status_oom(st, "graph executor", 0), NULL;
    const unsigned off = ctx->optimizer_off;
    const tfc_optimizer_opts o = {!(off & 1), !(off & 2), !(off & 4), !(off & 8), !(off & 16)};
    if (!tfc_graph_optimize(ctx, fn, &o, &x->og, st)) {
        tfc_free(x);
        return NULL;
    }
    const tfc_graph *g = x->og.g;
    const int n = g->n_nodes;
    int *order = tfc_malloc((size_t)n * sizeof *order + 1);
    int *first = tfc_calloc((size_t)n + 1, sizeof *first);
    int *last_use, *pos = NULL;
    int64_t n_inputs = 0;
    bool ok = order && first;
    if (!ok) goto oom;
    x->fn = fn;
    x->n_nodes = n;
    x->n_args = x->og.n_args;
    if (!tfc_graph_topo_order(g, order, st)) goto fail;
    for (int i = 0; i < n; i++) {
        first[i + 1] = first[i] + g->nodes[i]->n_out;
        n_inputs += g->nodes[i]->n_in;
    }
    x->n_slots = first[n];
    x->nodes = tfc_calloc((size_t)n + 1, sizeof *x->nodes);
    x->in_slots = tfc_malloc((size_t)n_inputs * sizeof(int) + 1);
    x->rel_slots = tfc_malloc((size_t)x->n_slots * sizeof(int) + 1);
    x->ret_slots = tfc_malloc((size_t)x->og.n_rets * sizeof(int) + 1);
    x->arg_nodes = tfc_calloc((size_t)x->og.n_args + 1, sizeof *x->arg_nodes);
    last_use = x->last_use = tfc_malloc((size_t)x->n_slots * sizeof(int) + 1);
    pos = tfc_malloc((size_t)n * sizeof(int) + 1);
    if (!x->nodes || !x->in_slots || !x->rel_slots || !x->ret_slots || !x->arg_nodes || !last_use || !pos) goto oom;
    for (int k = 0; k < n; k++) pos[order[k]] = k;
    /* A value dies after the last node (in run order) that reads it; results live to the end; a value nobody
     * reads dies right after its producer. */
    for (int s = 0; s < x->n_slots; s++) last_use[s] = -1;
    for (int i = 0; i < n; i++) {
        const tfc_gnode *d = g->nodes[i];
        for (int k = 0; k < d->n_in; k++) {
            int s = first[d->in[k].node] + d->in[k].index;
            if (pos[i] > last_use[s]) last_use[s] = pos[i];
        }
    }
    for (int r = 0; r < x->og.n_rets; r++) {
        x->ret_slots[r] = first[x->og.rets[r].node] + x->og.rets[r].index;
        last_use[x->ret_slots[r]] = n; /* released by the run after taking the results */
    }
    for (int i = 0; i < n; i++)
        for (int o = 0; o < g->nodes[i]->n_out; o++)
            if (last_use[first[i] + o] < 0) last_use[first[i] + o] = pos[i];
    /* rel lists in run order: count per position, then fill */
    int *tmp = tfc_calloc((size_t)n + 1, sizeof *tmp);
    if (!tmp) goto oom;
    for (int s = 0; s < x->n_slots; s++)
        if (last_use[s] < n) tmp[last_use[s]]++;
    int acc = 0;
    for (int k = 0; k < n; k++) {
        x->nodes[k].rel_off = acc;
        x->nodes[k].n_rel = 0;
        acc += tmp[k];
    }
    tfc_free(tmp);
    for (int s = 0; s < x->n_slots; s++)
        if (last_use[s] < n) {
            xnode *xn = &x->nodes[last_use[s]];
            x->rel_slots[xn->rel_off + xn->n_rel++] = s;
        }
    int in_off = 0;
    for (int k = 0; k < n; k++) {
        const tfc_gnode *d = g->nodes[order[k]];
        xnode *xn = &x->nodes[k];
        xn->n = d;
        xn->out_base = first[d->id];
        xn->in_off = in_off;
        for (int i = 0; i < d->n_in; i++) x->in_slots[in_off++] = first[d->in[i].node] + d->in[i].index;
        xn->static_out = true;
        for (int o = 0; o < d->n_out; o++) xn->static_out &= tfc_shape_is_fully_defined(&d->out_shapes[o]);
        /* a read of a resource (ReadVariableOp) shares the variable's buffer: its kernel allocates nothing */
        for (int i = 0; i < d->n_in; i++)
            xn->static_out &= g->nodes[d->in[i].node]->out_dtypes[d->in[i].index] != TFC_RESOURCE;
        for (int a = 0; d->attrs && a < d->attrs->n; a++)
            xn->calls |= d->attrs->a[a].kind == TFC_ATTR_FUNC || d->attrs->a[a].kind == TFC_ATTR_LIST_FUNC;
        const char *opn = d->op->def->name;
        if (!strcmp(opn, "Placeholder")) {
            int a = 0;
            while (a < x->og.n_args && x->og.arg_nodes[a] != d->id) a++;
            if (a == x->og.n_args) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT,
                               "You must feed a value for placeholder tensor '%s' with dtype %s", d->name,
                               tfc_dtype_name(d->out_dtypes[0]));
                goto fail;
            }
            xn->kind = X_ARG;
            xn->arg = a;
            x->arg_nodes[a] = d;
        } else if (!strcmp(opn, "Const")) {
            xn->kind = X_CONST;
        } else if (!strcmp(opn, "NoOp")) {
            xn->kind = X_NOOP;
        } else {
            xn->kind = X_KERNEL;
            xn->main_only = xn->calls || d->op->def->stateful;
            if (!node_kernel(ctx, g, d, xn, st)) goto fail;
        }
    }
    ok = tfc_planner_plan(x, st) && tfc_executor_prepare(x, pos, st);
    tfc_free(order);
    tfc_free(first);
    tfc_free(pos);
    if (!ok) {
        exec_free(x);
        return NULL;
    }
    return x;
oom:
    tfc_status_oom(st, "graph executor", 0);
fail:
    exec_free(x);
    tfc_free(order);
    tfc_free(first);
    tfc_free(pos);
    return NULL;
}

tfc_exec *tfc_exec_get(tfc_ctx *ctx, tfc_gfunc *fn, tfc_status *st) {
    if (fn->runtime) return fn->runtime;
    tfc_exec *x = instantiate(ctx, fn, st);
    if (!x) return NULL;
    fn->runtime = x;
    fn->runtime_free = exec_free;
    return x;
}

static bool check_arg(const tfc_exec *x, int a, const tfc_tensor *t, tfc_status *st) {
    const tfc_gnode *p = x->arg_nodes[a];
    if (!p) return true; /* an argument nothing reads */
    const tfc_shape *s = &p->out_shapes[0];
    bool ok = t && t->dtype == p->out_dtypes[0] && (s->rank < 0 || s->rank == t->shape.rank);
    for (int i = 0; ok && s->rank > 0 && i < s->rank; i++) ok = s->dims[i] < 0 || s->dims[i] == t->shape.dims[i];
    if (ok) return true;
    if (!t) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s': argument %d ('%s') is NULL", x->fn->name, a,
                                  p->name);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                          "function '%s': argument %d ('%s') expects %s %s, got %s %s", x->fn->name, a, p->name,
                          tfc_dtype_name(p->out_dtypes[0]), tfc_shape_str(s, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR),
                          tfc_dtype_name(t->dtype),
                          tfc_shape_str(&t->shape, (char[TFC_SHAPE_STR]){0}, TFC_SHAPE_STR));
}

/* Whether output 0 may be written into input i's buffer: the run holds the only reference to the tensor and
 * the tensor the only one to its buffer (no alias or view reads it), with the same dtype and shape as the
 * output. The write bumps the buffer's version, so a kept transform of its old contents is not used again. */
static bool can_take_input(const tfc_tensor *t, tfc_dtype dt, const tfc_shape *s) {
    if (!t || !t->buf || !t->buf->owned || t->buf->strings || t->dtype != dt || !tfc_shape_equal(&t->shape, s))
        return false;
    return atomic_load_explicit(&t->refcount, memory_order_acquire) == 1 &&
           atomic_load_explicit(&t->buf->refcount, memory_order_acquire) == 1 && t->data == t->buf->data;
}

bool tfc_exec_run_node(tfc_ctx *ctx, const tfc_exec *x, const xnode *xn, tfc_tensor **vals,
                       _Atomic int *const remaining, tfc_status *st) {
    const tfc_gnode *d = xn->n;
    tfc_tensor *ins[TFC_MAX_IO];
    for (int i = 0; i < d->n_in; i++) ins[i] = vals[x->in_slots[xn->in_off + i]];
    tfc_tensor **res = &vals[xn->out_base];
    const tfc_shape *shapes = d->out_shapes;
    tfc_shape dyn[TFC_MAX_IO];
    tfc_kernel_ctx k = {.ctx = ctx, .op = d->op->def, .attrs = d->attrs, .n_in = d->n_in, .in = ins,
                        .n_out = d->n_out, .out = res, .pool = ctx->pool, .state = xn->inst ? xn->inst->state : NULL};
    if (xn->calls) return xn->kernel(&k, st); /* call and control-flow kernels make their own outputs */
    if (!xn->static_out) {
        /* Shapes depend on this run's inputs: the op's shape function (which also validates) gives them. */
        tfc_shape in_shapes[TFC_MAX_IO];
        tfc_dtype in_dtypes[TFC_MAX_IO], out_dtypes[TFC_MAX_IO];
        for (int i = 0; i < d->n_in; i++) {
            in_shapes[i] = ins[i]->shape;
            in_dtypes[i] = ins[i]->dtype;
        }
        for (int o = 0; o < d->n_out; o++) {
            dyn[o].rank = -1;
            out_dtypes[o] = d->out_dtypes[o];
        }
        tfc_shape_ctx sc = {.op = d->op->def, .attrs = d->attrs, .n_in = d->n_in, .in_shapes = in_shapes,
                            .in_dtypes = in_dtypes, .in_values = ins, .n_out = d->n_out, .out_shapes = dyn,
                            .out_dtypes = out_dtypes};
        if (d->op->def->shape && !d->op->def->shape(&sc, st)) return false;
        shapes = dyn;
    }
    int o = 0;
    if (xn->inplace_in >= 0 && can_take_input(ins[xn->inplace_in], d->out_dtypes[0], &shapes[0]) &&
        (!remaining || atomic_load(&remaining[x->in_slots[xn->in_off + xn->inplace_in]]) == 1)) {
        res[0] = tfc_tensor_ref(ins[xn->inplace_in]);
        tfc_buffer_written(res[0]->buf);
        o = 1;
    }
    for (; o < d->n_out; o++)
        if (tfc_shape_is_fully_defined(&shapes[o]) && !(res[o] = tfc_tensor_alloc(d->out_dtypes[o], &shapes[o], st)))
            return false;
    if (!xn->kernel(&k, st)) return false;
    for (int o = 0; o < d->n_out; o++)
        if (!res[o]) return tfc_status_set(st, TFC_INTERNAL, "node '%s': kernel did not produce output %d", d->name, o);
    return true;
}

void tfc_exec_note_node(const xnode *xn, tfc_status *st) {
    if (strstr(st->msg, xn->n->name)) return;
    char m[sizeof st->msg];
    memcpy(m, st->msg, sizeof m);
    tfc_status_set(st, st->code, "%s\n\t [[{{node %s}}]]", m, xn->n->name);
}

void tfc_exec_run_trivial(const tfc_exec *x, const xnode *xn, tfc_tensor *const *in, tfc_tensor **vals) {
    if (xn->kind == X_ARG) vals[xn->out_base] = tfc_tensor_ref(in[xn->arg]);
    else if (xn->kind == X_CONST)
        vals[xn->out_base] = tfc_tensor_ref((tfc_tensor *)tfc_graph_const_value(x->og.g, (tfc_gport){xn->n->id, 0}));
}

/* The run in plan order on the calling thread (kernels still split their work over the pool). */
static bool run_sequential(tfc_ctx *ctx, const tfc_exec *x, tfc_tensor *const *in, tfc_tensor **vals,
                           tfc_status *st) {
    bool ok = true;
    for (int k = 0; k < x->n_nodes && ok; k++) {
        const xnode *xn = &x->nodes[k];
        if (xn->kind != X_KERNEL) tfc_exec_run_trivial(x, xn, in, vals);
        else if (!tfc_exec_run_node(ctx, x, xn, vals, NULL, st)) {
            ok = false;
            tfc_exec_note_node(xn, st);
        }
        for (int r = 0; r < xn->n_rel; r++) {
            int s = x->rel_slots[xn->rel_off + r];
            tfc_tensor_unref(vals[s]);
            vals[s] = NULL;
        }
    }
    return ok;
}

bool tfc_exec_run(tfc_ctx *ctx, tfc_exec *x, tfc_tensor *const *in, int n_in, tfc_tensor **out, tfc_status *st) {
    if (n_in != x->n_args)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s' takes %d inputs, got %d", x->fn->name,
                              x->n_args, n_in);
    for (int a = 0; a < n_in; a++)
        if (!check_arg(x, a, in[a], st)) return false;
    tfc_tensor *stackv[256];
    tfc_tensor **vals = x->n_slots <= 256 ? stackv : tfc_malloc((size_t)x->n_slots * sizeof *vals);
    if (!vals) return tfc_status_oom(st, "graph run", 0);
    memset(vals, 0, (size_t)x->n_slots * sizeof *vals);
    /* inter_op_threads: 0 = the pool's threads, 1 = sequential (tf.config.threading's inter-op setting) */
    int threads = tfc_threadpool_size(ctx->pool);
    if (ctx->inter_op_threads > 0 && ctx->inter_op_threads < threads) threads = ctx->inter_op_threads;
    const bool ok = x->parallel && threads > 1 && !tfc_executor_in_parallel()
                        ? tfc_executor_run_parallel(ctx, x, in, vals, threads, st)
                        : run_sequential(ctx, x, in, vals, st);
    if (ok)
        for (int r = 0; r < x->og.n_rets; r++) out[r] = tfc_tensor_ref(vals[x->ret_slots[r]]);
    for (int s = 0; s < x->n_slots; s++) tfc_tensor_unref(vals[s]);
    if (vals != stackv) tfc_free(vals);
    return ok;
}
