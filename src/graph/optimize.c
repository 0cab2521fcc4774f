/* Grappler-style passes (optimize.h). They work on a copy of the body in which nodes are marked dead and their
 * consumers redirected (alias[] names the node that took a dead node's place); a final compaction keeps the
 * live nodes in topological order. */
#include <stdio.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "eager/context_internal.h"
#include "graph/optimize.h"

#define FOLD_MAX_ELEMENTS (1 << 16)

typedef struct {
    tfc_ctx *ctx;
    tfc_graph *g;
    bool *dead;
    int *alias;
    int cap;
    int n_args, *args;
    int n_rets;
    tfc_gport *rets;
    int n_ctrl;
    int *ctrl_rets;
} work;

static int live_count(const work *w) {
    int n = 0;
    for (int i = 0; i < w->g->n_nodes; i++) n += !w->dead[i];
    return n;
}

/* room in dead[] / alias[] for nodes added by passes */
static bool grow(work *w, tfc_status *st) {
    if (w->g->n_nodes + 64 <= w->cap) return true;
    int cap = (w->g->n_nodes + 64) * 2;
    bool *d = tfc_realloc(w->dead, (size_t)cap * sizeof *d);
    if (d) w->dead = d;
    int *a = d ? tfc_realloc(w->alias, (size_t)cap * sizeof *a) : NULL;
    if (!a) return tfc_status_oom(st, "graph optimizer", 0);
    w->alias = a;
    for (int i = w->cap; i < cap; i++) {
        w->dead[i] = false;
        w->alias[i] = -1;
    }
    w->cap = cap;
    return true;
}

static void redirect(work *w, tfc_gport from, tfc_gport to) {
    for (int i = 0; i < w->g->n_nodes; i++) {
        tfc_gnode *n = w->g->nodes[i];
        for (int k = 0; k < n->n_in; k++)
            if (n->in[k].node == from.node && n->in[k].index == from.index) n->in[k] = to;
    }
    for (int r = 0; r < w->n_rets; r++)
        if (w->rets[r].node == from.node && w->rets[r].index == from.index) w->rets[r] = to;
}

static void kill(work *w, int node, int alias) {
    w->dead[node] = true;
    w->alias[node] = alias;
}

static bool has_func_attr(const tfc_gnode *n) {
    for (int a = 0; n->attrs && a < n->attrs->n; a++)
        if (n->attrs->a[a].kind == TFC_ATTR_FUNC || n->attrs->a[a].kind == TFC_ATTR_LIST_FUNC) return true;
    return false;
}

static bool is_op(const tfc_gnode *n, const char *op) { return !strcmp(n->op->def->name, op); }

/* ---- constant folding ---- */
static bool fold_constants(work *w, tfc_status *st) {
    const int n0 = w->g->n_nodes;
    for (int i = 0; i < n0; i++) {
        tfc_gnode *n = w->g->nodes[i];
        if (w->dead[i] || n->n_in == 0 || n->n_out == 0 || n->n_ctrl || n->op->def->stateful || !tfc_op_has_kernel(n->op, "CPU") ||
            has_func_attr(n))
            continue;
        bool ok = true;
        tfc_tensor *ins[TFC_MAX_IO];
        for (int k = 0; k < n->n_in && ok; k++)
            ok = (ins[k] = (tfc_tensor *)tfc_graph_const_value(w->g, n->in[k])) != NULL && ins[k]->dtype != TFC_RESOURCE;
        for (int o = 0; o < n->n_out && ok; o++) {
            int64_t ne;
            tfc_status sst = TFC_STATUS_INIT;
            ok = tfc_shape_is_fully_defined(&n->out_shapes[o]) &&
                 tfc_shape_num_elements(&n->out_shapes[o], &ne, NULL, &sst) && ne <= FOLD_MAX_ELEMENTS;
        }
        if (!ok) continue;
        tfc_attr at[TFC_MAX_ATTRS];
        int n_at = 0;
        for (int a = 0; n->attrs && a < n->attrs->n; a++)
            if (n->attrs->a[a].kind != TFC_ATTR_NONE) at[n_at++] = n->attrs->a[a];
        tfc_tensor *res[TFC_MAX_IO];
        if (!tfc_scope_begin(w->ctx, st)) return false;
        tfc_status fst = TFC_STATUS_INIT;
        int r = tfc_execute_op(w->ctx, n->op, ins, n->n_in, at, n_at, res, TFC_MAX_IO, &fst);
        for (int o = 0; o < r; o++) tfc_tensor_ref(res[o]);
        tfc_scope_end(w->ctx);
        if (r != n->n_out) { /* an op that fails on these constants fails at run time too: leave it */
            for (int o = 0; o < r; o++) tfc_tensor_unref(res[o]);
            continue;
        }
        int first = -1;
        for (int o = 0; o < r && ok; o++) {
            char name[300];
            snprintf(name, sizeof name, "%s/folded_%d", n->name, o);
            tfc_gnode *c = grow(w, st) ? tfc_graph_add_const(w->g, tfc_graph_find(w->g, name) ? NULL : name, res[o], st)
                                       : NULL;
            if (!c) ok = false;
            else {
                if (first < 0) first = c->id;
                redirect(w, (tfc_gport){i, o}, (tfc_gport){c->id, 0});
            }
        }
        for (int o = 0; o < r; o++) tfc_tensor_unref(res[o]);
        if (!ok) return false;
        kill(w, i, first);
    }
    return true;
}

/* ---- arithmetic: trees of AddV2 over one shape -> AddN (in groups of at most TFC_MAX_IO inputs) ---- */
static bool same_shape(const tfc_shape *a, const tfc_shape *b) {
    return tfc_shape_is_fully_defined(a) && tfc_shape_equal(a, b);
}

static const tfc_shape *port_shape(const tfc_graph *g, tfc_gport p) { return &g->nodes[p.node]->out_shapes[p.index]; }

/* An AddV2 whose inputs and output share one known shape (no broadcasting). */
static bool plain_add(const work *w, const tfc_gnode *n) {
    return !w->dead[n->id] && is_op(n, "AddV2") && n->n_ctrl == 0 &&
           same_shape(&n->out_shapes[0], port_shape(w->g, n->in[0])) &&
           same_shape(&n->out_shapes[0], port_shape(w->g, n->in[1]));
}

/* uses[i]: live data consumers of node i (+2 for each control consumer, result or control result: such a node
 * is never absorbed into its consumer); consumer[i]: one of them (-1 when none). */
static void count_uses(const work *w, int n0, int *uses, int *consumer) {
    for (int i = 0; i < n0; i++) consumer[i] = -1;
    for (int i = 0; i < n0; i++) {
        const tfc_gnode *n = w->g->nodes[i];
        if (w->dead[i]) continue;
        for (int k = 0; k < n->n_in; k++) {
            uses[n->in[k].node]++;
            consumer[n->in[k].node] = i;
        }
        for (int k = 0; k < n->n_ctrl; k++) uses[n->ctrl[k]] += 2;
    }
    for (int r = 0; r < w->n_rets; r++) uses[w->rets[r].node] += 2;
    for (int r = 0; r < w->n_ctrl; r++) uses[w->ctrl_rets[r]] += 2;
}

static bool rewrite_adds(work *w, tfc_status *st) {
    const int n0 = w->g->n_nodes;
    int *uses = tfc_calloc((size_t)n0 + 1, sizeof *uses), *consumer = tfc_malloc((size_t)n0 * sizeof(int) + 1);
    tfc_gport *leaves = tfc_malloc((size_t)(n0 + 1) * sizeof *leaves);
    int *stack = tfc_malloc((size_t)(n0 + 1) * sizeof *stack);
    bool ok = uses && consumer && leaves && stack;
    if (!ok) {
        tfc_status_oom(st, "graph optimizer", 0);
        goto done;
    }
    count_uses(w, n0, uses, consumer);
    for (int i = 0; i < n0 && ok; i++) {
        const tfc_gnode *root = w->g->nodes[i];
        if (!plain_add(w, root)) continue;
        const int c = consumer[i];
        if (uses[i] == 1 && c >= 0 && plain_add(w, w->g->nodes[c]) &&
            tfc_shape_equal(&w->g->nodes[c]->out_shapes[0], &root->out_shapes[0]))
            continue; /* absorbed into its consumer's tree */
        int n_leaves = 0, sp = 0;
        stack[sp++] = i;
        while (sp) {
            const tfc_gnode *n = w->g->nodes[stack[--sp]];
            for (int k = 1; k >= 0; k--) { /* right first: leaves come out left to right */
                const tfc_gport p = n->in[k];
                const tfc_gnode *m = w->g->nodes[p.node];
                if (p.node < n0 && uses[p.node] == 1 && consumer[p.node] == n->id && plain_add(w, m) &&
                    tfc_shape_equal(&m->out_shapes[0], &root->out_shapes[0]))
                    stack[sp++] = p.node;
                else
                    leaves[n_leaves++] = p;
            }
        }
        if (n_leaves < 3) continue;
        const int first_new = w->g->n_nodes;
        bool made = true;
        while (n_leaves > 1 && made) {
            int out = 0;
            for (int s = 0; s < n_leaves && made; s += TFC_MAX_IO) {
                int k = n_leaves - s < TFC_MAX_IO ? n_leaves - s : TFC_MAX_IO;
                if (k == 1) {
                    leaves[out++] = leaves[s];
                    continue;
                }
                if (!(ok = grow(w, st))) break;
                tfc_status ast = TFC_STATUS_INIT; /* a dtype AddN lacks: leave this tree as it is */
                tfc_gnode *a = tfc_graph_add_op(w->g, "AddN", NULL, &leaves[s], k, NULL, 0, NULL, 0, &ast);
                if (!a) made = false;
                else leaves[out++] = (tfc_gport){a->id, 0};
            }
            n_leaves = out;
        }
        if (!ok) break;
        if (!made) {
            for (int k = first_new; k < w->g->n_nodes; k++) kill(w, k, -1);
            continue;
        }
        /* the tree's nodes are dead: the root's consumers read the AddN */
        redirect(w, (tfc_gport){i, 0}, leaves[0]);
        sp = 0;
        stack[sp++] = i;
        while (sp) {
            const tfc_gnode *n = w->g->nodes[stack[--sp]];
            kill(w, n->id, leaves[0].node);
            for (int k = 0; k < 2; k++) {
                const tfc_gport p = n->in[k];
                if (p.node < n0 && !w->dead[p.node] && uses[p.node] == 1 && consumer[p.node] == n->id &&
                    plain_add(w, w->g->nodes[p.node]) &&
                    tfc_shape_equal(&w->g->nodes[p.node]->out_shapes[0], &root->out_shapes[0]))
                    stack[sp++] = p.node;
            }
        }
    }
done:
    tfc_free(uses);
    tfc_free(consumer);
    tfc_free(leaves);
    tfc_free(stack);
    return ok;
}

/* ---- common subexpression elimination ---- */
static bool same_node(const tfc_gnode *a, const tfc_gnode *b) {
    if (a->op != b->op || a->n_in != b->n_in || a->n_out != b->n_out) return false;
    for (int k = 0; k < a->n_in; k++)
        if (a->in[k].node != b->in[k].node || a->in[k].index != b->in[k].index) return false;
    if (!a->attrs || !b->attrs) return a->attrs == b->attrs;
    for (int i = 0; i < a->attrs->n; i++)
        if (!tfc_attr_equal(&a->attrs->a[i], &b->attrs->a[i])) return false;
    return true;
}

static bool cse(work *w, tfc_status *st) {
    const int n = w->g->n_nodes;
    int cap = 64;
    while (cap < 2 * n) cap *= 2;
    int *slots = tfc_malloc((size_t)cap * sizeof *slots);
    if (!slots) return tfc_status_oom(st, "graph optimizer", 0);
    for (int i = 0; i < cap; i++) slots[i] = -1;
    for (int i = 0; i < n; i++) { /* ids are topological: inputs are merged before their consumers */
        const tfc_gnode *d = w->g->nodes[i];
        if (w->dead[i] || d->n_ctrl || d->op->def->stateful || is_op(d, "Placeholder") || d->n_out == 0 ||
            has_func_attr(d))
            continue;
        uint64_t h = (uint64_t)(uintptr_t)d->op * 1469598103934665603ull;
        for (int k = 0; k < d->n_in; k++) h = (h ^ (uint64_t)(d->in[k].node * 64 + d->in[k].index)) * 1099511628211ull;
        if (is_op(d, "Const")) {
            const tfc_tensor *v = tfc_graph_const_value(w->g, (tfc_gport){i, 0});
            h = (h ^ (uint64_t)v->dtype) * 1099511628211ull ^ (uint64_t)v->num_elements;
        }
        int s = (int)(h & (uint64_t)(cap - 1)), found = -1;
        for (; slots[s] >= 0; s = (s + 1) & (cap - 1))
            if (same_node(w->g->nodes[slots[s]], d)) {
                found = slots[s];
                break;
            }
        if (found < 0) {
            slots[s] = i;
            continue;
        }
        for (int o = 0; o < d->n_out; o++) redirect(w, (tfc_gport){i, o}, (tfc_gport){found, o});
        kill(w, i, found);
    }
    tfc_free(slots);
    return true;
}

/* ---- remapping: MatMul / Conv2D + BiasAdd (+ activation) -> _FusedMatMul / _FusedConv2D ----
 * As TensorFlow's remapper: only when each absorbed intermediate has the next node as its only consumer (no
 * other data or control consumer, not a function result), float32/float64, NHWC, all on one device, and the
 * activations the fused kernels run (Relu, Relu6, Elu, LeakyRelu). */
static const char *const fusable_acts[] = {"Relu", "Relu6", "Elu", "LeakyRelu"};

static bool attr_copy(const tfc_gnode *n, const char *name, tfc_attr *at, int *n_at) {
    const tfc_attr *a = tfc_attrs_find(n->attrs, name);
    if (!a || a->kind == TFC_ATTR_NONE) return false;
    at[(*n_at)++] = *a;
    return true;
}

static bool remap_dtype_ok(const tfc_gnode *n) {
    tfc_dtype t = tfc_attrs_type(n->attrs, "T", TFC_INVALID_DTYPE);
    return t == TFC_FLOAT || t == TFC_DOUBLE;
}

static bool nhwc(const tfc_gnode *n) { return !strcmp(tfc_attrs_string(n->attrs, "data_format", "NHWC"), "NHWC"); }

static bool remap(work *w, tfc_status *st) {
    const int n0 = w->g->n_nodes;
    int *uses = tfc_calloc((size_t)n0 + 1, sizeof *uses), *consumer = tfc_malloc((size_t)n0 * sizeof(int) + 1);
    if (!uses || !consumer) {
        tfc_free(uses);
        tfc_free(consumer);
        return tfc_status_oom(st, "graph optimizer", 0);
    }
    count_uses(w, n0, uses, consumer);
    bool ok = true;
    for (int i = 0; i < n0 && ok; i++) {
        const tfc_gnode *bias = w->g->nodes[i];
        if (w->dead[i] || !is_op(bias, "BiasAdd") || bias->n_ctrl || !remap_dtype_ok(bias) || !nhwc(bias)) continue;
        const tfc_gnode *prod = w->g->nodes[bias->in[0].node];
        const bool mm = is_op(prod, "MatMul"), conv = is_op(prod, "Conv2D");
        if (w->dead[prod->id] || (!mm && !conv) || uses[prod->id] != 1 || prod->n_ctrl || !remap_dtype_ok(prod) ||
            tfc_attrs_type(prod->attrs, "T", TFC_INVALID_DTYPE) != tfc_attrs_type(bias->attrs, "T", TFC_INVALID_DTYPE) ||
            (conv && !nhwc(prod)) || strcmp(prod->device, bias->device))
            continue;
        const tfc_gnode *act = NULL;
        if (uses[i] == 1 && consumer[i] >= 0) {
            const tfc_gnode *c = w->g->nodes[consumer[i]];
            for (size_t a = 0; a < sizeof fusable_acts / sizeof *fusable_acts; a++)
                if (is_op(c, fusable_acts[a]) && !c->n_ctrl && !strcmp(c->device, bias->device) &&
                    tfc_attrs_type(c->attrs, "T", TFC_INVALID_DTYPE) == tfc_attrs_type(bias->attrs, "T", TFC_INVALID_DTYPE))
                    act = c;
        }
        const tfc_gnode *last = act ? act : bias;
        const char *ops[2] = {"BiasAdd", act ? act->op->def->name : NULL};
        tfc_attr at[TFC_MAX_ATTRS];
        int n_at = 0;
        static const char *const mm_attrs[] = {"T", "transpose_a", "transpose_b"};
        static const char *const conv_attrs[] = {"T", "strides", "padding", "explicit_paddings", "data_format",
                                                 "dilations", "use_cudnn_on_gpu"};
        const char *const *names = mm ? mm_attrs : conv_attrs;
        const int n_names = mm ? 3 : 7;
        for (int a = 0; a < n_names; a++) attr_copy(prod, names[a], at, &n_at);
        const tfc_dtype t = tfc_attrs_type(prod->attrs, "T", TFC_INVALID_DTYPE);
        at[n_at++] = TFC_ATTR_I("num_args", 1);
        if (conv) at[n_at++] = (tfc_attr){.name = "TArgs", .kind = TFC_ATTR_LIST_TYPE, .n = 1, .v.types = &t};
        at[n_at++] = (tfc_attr){.name = "fused_ops", .kind = TFC_ATTR_LIST_STRING, .n = act ? 2 : 1, .v.strs = ops};
        if (act && is_op(act, "LeakyRelu"))
            at[n_at++] = TFC_ATTR_F("leakyrelu_alpha", tfc_attrs_float(act->attrs, "alpha", 0.2));
        const tfc_gport in[3] = {prod->in[0], prod->in[1], bias->in[1]};
        if (!(ok = grow(w, st))) break;
        tfc_status fst = TFC_STATUS_INIT; /* a combination the fused op rejects: leave the chain as it is */
        tfc_gnode *f = tfc_graph_add_op(w->g, mm ? "_FusedMatMul" : "_FusedConv2D", NULL, in, 3, at, n_at, NULL, 0, &fst);
        if (!f) continue;
        char *dev = tfc_strdup(last->device);
        if (!dev) {
            ok = tfc_status_oom(st, "graph optimizer", 0);
            break;
        }
        tfc_free(f->device);
        f->device = dev;
        f->out_shapes[0] = last->out_shapes[0]; /* what the chain inferred (at least as precise) */
        redirect(w, (tfc_gport){last->id, 0}, (tfc_gport){f->id, 0});
        kill(w, prod->id, f->id);
        kill(w, bias->id, f->id);
        if (act) kill(w, act->id, f->id);
    }
    tfc_free(uses);
    tfc_free(consumer);
    return ok;
}

/* ---- pruning: what results, control results, arguments and stateful ops need ---- */
static bool prune(work *w, tfc_status *st) {
    const int n = w->g->n_nodes;
    bool *need = tfc_calloc((size_t)n + 1, sizeof *need);
    int *stack = tfc_malloc((size_t)n * sizeof *stack + 1);
    if (!need || !stack) {
        tfc_free(need);
        tfc_free(stack);
        return tfc_status_oom(st, "graph optimizer", 0);
    }
    int sp = 0;
#define MARK(id)                                                                                                    \
    do {                                                                                                            \
        int m_ = (id);                                                                                              \
        while (m_ >= 0 && w->dead[m_]) m_ = w->alias[m_];                                                           \
        if (m_ >= 0 && !need[m_]) need[m_] = true, stack[sp++] = m_;                                                \
    } while (0)
    for (int r = 0; r < w->n_rets; r++) MARK(w->rets[r].node);
    for (int r = 0; r < w->n_ctrl; r++) MARK(w->ctrl_rets[r]);
    for (int a = 0; a < w->n_args; a++) MARK(w->args[a]);
    for (int i = 0; i < n; i++)
        if (!w->dead[i] && w->g->nodes[i]->op->def->stateful) MARK(i);
    while (sp) {
        const tfc_gnode *d = w->g->nodes[stack[--sp]];
        for (int k = 0; k < d->n_in; k++) MARK(d->in[k].node);
        for (int k = 0; k < d->n_ctrl; k++) MARK(d->ctrl[k]);
    }
#undef MARK
    for (int i = 0; i < n; i++)
        if (!need[i] && !w->dead[i]) kill(w, i, -1);
    tfc_free(need);
    tfc_free(stack);
    return true;
}

/* ---- copy in and out ---- */
void tfc_opt_graph_clear(tfc_opt_graph *og) {
    tfc_graph_free(og->g);
    tfc_free(og->arg_nodes);
    tfc_free(og->rets);
    memset(og, 0, sizeof *og);
}

/* Copies the live nodes of src, in topological order, into out->g (control inputs of dead nodes follow their
 * aliases). map[old id] = new id. */
static bool compact(work *w, tfc_opt_graph *out, tfc_status *st) {
    const tfc_graph *g = w->g;
    int *order = tfc_malloc((size_t)g->n_nodes * sizeof *order + 1), *map = tfc_malloc((size_t)g->n_nodes * sizeof *map + 1);
    bool ok = order && map && (out->g = tfc_graph_new(g->lib, st)) != NULL;
    if (!order || !map) tfc_status_oom(st, "graph optimizer", 0);
    ok = ok && tfc_graph_topo_order(g, order, st);
    for (int k = 0; ok && k < g->n_nodes; k++) map[k] = -1;
    for (int k = 0; ok && k < g->n_nodes; k++) {
        const tfc_gnode *n = g->nodes[order[k]];
        if (w->dead[n->id]) continue;
        tfc_gport in[TFC_MAX_IO];
        int ctrl[64], n_ctrl = 0;
        for (int i = 0; i < n->n_in; i++) in[i] = (tfc_gport){map[n->in[i].node], n->in[i].index};
        for (int i = 0; i < n->n_ctrl && n_ctrl < 64; i++) {
            int c = n->ctrl[i];
            while (c >= 0 && w->dead[c]) c = w->alias[c];
            if (c >= 0 && map[c] >= 0) ctrl[n_ctrl++] = map[c];
        }
        tfc_gnode *m = tfc_graph_add_node(out->g, n->op, n->name, n->attrs, in, n->n_in, ctrl, n_ctrl, n->n_out,
                                          n->out_dtypes, n->out_shapes, st);
        ok = m != NULL;
        if (ok) map[n->id] = m->id;
    }
    if (ok) {
        out->n_args = w->n_args;
        out->n_rets = w->n_rets;
        out->arg_nodes = tfc_malloc((size_t)w->n_args * sizeof(int) + 1);
        out->rets = tfc_malloc((size_t)w->n_rets * sizeof(tfc_gport) + 1);
        ok = out->arg_nodes && out->rets;
        if (!ok) tfc_status_oom(st, "graph optimizer", 0);
        for (int a = 0; ok && a < w->n_args; a++) out->arg_nodes[a] = map[w->args[a]];
        for (int r = 0; ok && r < w->n_rets; r++) out->rets[r] = (tfc_gport){map[w->rets[r].node], w->rets[r].index};
    }
    tfc_free(order);
    tfc_free(map);
    return ok;
}

bool tfc_graph_optimize(tfc_ctx *ctx, const tfc_gfunc *fn, const tfc_optimizer_opts *o, tfc_opt_graph *out,
                        tfc_status *st) {
    const tfc_optimizer_opts all = {true, true, true, true, true};
    if (!o) o = &all;
    memset(out, 0, sizeof *out);
    const tfc_graph *src = fn->body;
    work w = {.ctx = ctx, .n_args = fn->n_args, .n_rets = fn->n_rets, .n_ctrl = fn->n_ctrl_rets};
    int *order = tfc_malloc((size_t)src->n_nodes * sizeof *order + 1), *map = tfc_malloc((size_t)src->n_nodes * sizeof *map + 1);
    w.args = tfc_malloc((size_t)fn->n_args * sizeof(int) + 1);
    w.rets = tfc_malloc((size_t)fn->n_rets * sizeof(tfc_gport) + 1);
    w.ctrl_rets = tfc_malloc((size_t)fn->n_ctrl_rets * sizeof(int) + 1);
    bool ok = order && map && w.args && w.rets && w.ctrl_rets && (w.g = tfc_graph_new(src->lib, st)) != NULL;
    if (!order || !map || !w.args || !w.rets || !w.ctrl_rets) tfc_status_oom(st, "graph optimizer", 0);
    ok = ok && grow(&w, st) && tfc_graph_topo_order(src, order, st);
    for (int k = 0; ok && k < src->n_nodes; k++) { /* the copy's ids are topological */
        const tfc_gnode *n = src->nodes[order[k]];
        tfc_gport in[TFC_MAX_IO];
        int ctrl[64], n_ctrl = 0;
        for (int i = 0; i < n->n_in; i++) in[i] = (tfc_gport){map[n->in[i].node], n->in[i].index};
        for (int i = 0; i < n->n_ctrl && n_ctrl < 64; i++) ctrl[n_ctrl++] = map[n->ctrl[i]];
        tfc_gnode *m = grow(&w, st) ? tfc_graph_add_node(w.g, n->op, n->name, n->attrs, in, n->n_in, ctrl, n_ctrl,
                                                         n->n_out, n->out_dtypes, n->out_shapes, st)
                                    : NULL;
        ok = m != NULL;
        if (ok) map[n->id] = m->id;
    }
    for (int a = 0; ok && a < fn->n_args; a++) w.args[a] = map[fn->arg_nodes[a]];
    for (int r = 0; ok && r < fn->n_rets; r++) w.rets[r] = (tfc_gport){map[fn->rets[r].node], fn->rets[r].index};
    for (int r = 0; ok && r < fn->n_ctrl_rets; r++) w.ctrl_rets[r] = map[fn->ctrl_rets[r]];
    struct {
        const char *name;
        bool on;
        bool (*run)(work *, tfc_status *);
    } passes[] = {{"constant_folding", o->constant_folding, fold_constants},
                  {"arithmetic_optimization", o->arithmetic_optimization, rewrite_adds},
                  {"common_subgraph_elimination", o->common_subgraph_elimination, cse},
                  {"pruning", o->pruning, prune},
                  {"remapping", o->remapping, remap}};
    for (size_t p = 0; ok && p < sizeof passes / sizeof passes[0]; p++) {
        if (!passes[p].on) continue;
        int before = live_count(&w);
        ok = passes[p].run(&w, st);
        out->stats[out->n_stats++] = (tfc_pass_stat){passes[p].name, before, live_count(&w)};
    }
    int n_stats = out->n_stats;
    tfc_pass_stat stats[TFC_MAX_PASSES];
    memcpy(stats, out->stats, sizeof stats);
    ok = ok && compact(&w, out, st);
    if (ok) {
        out->n_stats = n_stats;
        memcpy(out->stats, stats, sizeof stats);
    } else {
        tfc_opt_graph_clear(out);
    }
    tfc_graph_free(w.g);
    tfc_free(w.dead);
    tfc_free(w.alias);
    tfc_free(w.args);
    tfc_free(w.rets);
    tfc_free(w.ctrl_rets);
    tfc_free(order);
    tfc_free(map);
    return ok;
}
