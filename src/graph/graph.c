/* The graph IR: nodes, names, topological order, and the function library (graph.h). */
#include <stdio.h>
#include <string.h>

#include "core/tensor_internal.h"
#include "graph/graph.h"

/* ---- names ---- */
static uint32_t name_hash(const char *s) { /* FNV-1a */
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

static int find_slot(const tfc_graph *g, const char *name) {
    if (!g->cap_slots) return -1;
    for (uint32_t i = name_hash(name) & (uint32_t)(g->cap_slots - 1);; i = (i + 1) & (uint32_t)(g->cap_slots - 1)) {
        int id = g->name_slots[i];
        if (id < 0) return -1;
        if (!strcmp(g->nodes[id]->name, name)) return id;
    }
}

static void put_slot(int *slots, int cap, const char *name, int id) {
    uint32_t i = name_hash(name) & (uint32_t)(cap - 1);
    while (slots[i] >= 0) i = (i + 1) & (uint32_t)(cap - 1);
    slots[i] = id;
}

static bool grow_slots(tfc_graph *g, tfc_status *st) {
    if ((int64_t)(g->n_nodes + 1) * 2 <= g->cap_slots) return true;
    int cap = g->cap_slots ? g->cap_slots * 2 : 64;
    int *s = tfc_malloc((size_t)cap * sizeof *s);
    if (!s) return tfc_status_oom(st, "graph names", (size_t)cap * sizeof *s);
    for (int i = 0; i < cap; i++) s[i] = -1;
    for (int id = 0; id < g->n_nodes; id++) put_slot(s, cap, g->nodes[id]->name, id);
    tfc_free(g->name_slots);
    g->name_slots = s;
    g->cap_slots = cap;
    return true;
}

tfc_gnode *tfc_graph_find(const tfc_graph *g, const char *name) {
    int id = name ? find_slot(g, name) : -1;
    return id >= 0 ? g->nodes[id] : NULL;
}

/* TensorFlow's unique_name: "base", then "base_1", "base_2", ... */
static char *unique_name(const tfc_graph *g, const char *base) {
    while (*base == '_') base++; /* "_FusedConv2D" -> "FusedConv2D": TensorFlow's node names start with [A-Za-z0-9.] */
    if (!*base) base = "node";
    size_t n = strlen(base) + 24;
    char *s = tfc_malloc(n);
    if (!s) return NULL;
    snprintf(s, n, "%s", base);
    for (int64_t k = 1; find_slot(g, s) >= 0; k++) snprintf(s, n, "%s_%lld", base, (long long)k);
    return s;
}

/* ---- graph ---- */
tfc_graph *tfc_graph_new(tfc_flib *lib, tfc_status *st) {
    tfc_graph *g = tfc_calloc(1, sizeof *g);
    if (!g) {
        tfc_status_oom(st, "graph", sizeof *g);
        return NULL;
    }
    g->lib = lib;
    return g;
}

static void node_free(tfc_gnode *n) {
    if (!n) return;
    tfc_free(n->name);
    tfc_attrs_free(n->attrs);
    tfc_free(n->in);
    tfc_free(n->ctrl);
    tfc_free(n->out_dtypes);
    tfc_free(n->out_shapes);
    tfc_free(n->device);
    tfc_free(n);
}

void tfc_graph_free(tfc_graph *g) {
    if (!g) return;
    for (int i = 0; i < g->n_nodes; i++) node_free(g->nodes[i]);
    tfc_free(g->nodes);
    tfc_free(g->name_slots);
    tfc_free(g);
}

static bool check_port(const tfc_graph *g, tfc_gport p, const char *what, tfc_status *st) {
    if (p.node < 0 || p.node >= g->n_nodes)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input node %d does not exist (graph has %d nodes)", what,
                              p.node, g->n_nodes);
    if (p.index < 0 || p.index >= g->nodes[p.node]->n_out)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: input '%s:%d' is out of range ('%s' has %d outputs)",
                              what, g->nodes[p.node]->name, p.index, g->nodes[p.node]->name, g->nodes[p.node]->n_out);
    return true;
}

tfc_gnode *tfc_graph_add_node(tfc_graph *g, const tfc_op *op, const char *name, const tfc_attrs *attrs,
                              const tfc_gport *in, int n_in, const int *ctrl, int n_ctrl, int n_out,
                              const tfc_dtype *out_dtypes, const tfc_shape *out_shapes, tfc_status *st) {
    const char *what = name ? name : op->def->name;
    if (n_in < 0 || n_ctrl < 0 || n_out < 0 || n_in > TFC_MAX_IO || n_out > TFC_MAX_IO) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %d inputs / %d outputs is outside [0, %d]", what, n_in, n_out,
                       TFC_MAX_IO);
        return NULL;
    }
    if (name && find_slot(g, name) >= 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Duplicate node name in graph: '%s'", name);
        return NULL;
    }
    if (name && !*name) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: empty node name", op->def->name);
        return NULL;
    }
    for (int i = 0; i < n_in; i++)
        if (!check_port(g, in[i], what, st)) return NULL;
    for (int i = 0; i < n_ctrl; i++)
        if (ctrl[i] < 0 || ctrl[i] >= g->n_nodes) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: control input node %d does not exist", what, ctrl[i]);
            return NULL;
        }
    if (g->n_nodes == g->cap_nodes) {
        if (g->cap_nodes > (1 << 29)) {
            tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "graph: more than %d nodes", g->cap_nodes);
            return NULL;
        }
        int cap = g->cap_nodes ? g->cap_nodes * 2 : 32;
        tfc_gnode **nodes = tfc_realloc(g->nodes, (size_t)cap * sizeof *nodes);
        if (!nodes) {
            tfc_status_oom(st, "graph", (size_t)cap * sizeof *nodes);
            return NULL;
        }
        g->nodes = nodes;
        g->cap_nodes = cap;
    }
    if (!grow_slots(g, st)) return NULL;
    tfc_gnode *n = tfc_calloc(1, sizeof *n);
    if (!n) goto oom;
    n->graph = g;
    n->id = g->n_nodes;
    n->op = op;
    n->n_in = n_in;
    n->n_ctrl = n_ctrl;
    n->n_out = n_out;
    if (!(n->name = name ? tfc_strdup(name) : unique_name(g, op->def->name))) goto oom;
    if (!(n->device = tfc_strdup(""))) goto oom;
    if (attrs && !(n->attrs = tfc_attrs_clone(attrs))) goto oom;
    if (n_in && !(n->in = tfc_malloc((size_t)n_in * sizeof *n->in))) goto oom;
    if (n_ctrl && !(n->ctrl = tfc_malloc((size_t)n_ctrl * sizeof *n->ctrl))) goto oom;
    if (n_out && (!(n->out_dtypes = tfc_malloc((size_t)n_out * sizeof *n->out_dtypes)) ||
                  !(n->out_shapes = tfc_malloc((size_t)n_out * sizeof *n->out_shapes))))
        goto oom;
    if (n_in) memcpy(n->in, in, (size_t)n_in * sizeof *in);
    if (n_ctrl) memcpy(n->ctrl, ctrl, (size_t)n_ctrl * sizeof *ctrl);
    for (int i = 0; i < n_out; i++) {
        n->out_dtypes[i] = out_dtypes[i];
        if (out_shapes) n->out_shapes[i] = out_shapes[i];
        else n->out_shapes[i].rank = -1;
    }
    g->nodes[g->n_nodes++] = n;
    put_slot(g->name_slots, g->cap_slots, n->name, n->id);
    return n;
oom:
    node_free(n);
    tfc_status_oom(st, "graph node", 0);
    return NULL;
}

bool tfc_graph_add_control(tfc_graph *g, int node, int ctrl, tfc_status *st) {
    if (node < 0 || node >= g->n_nodes || ctrl < 0 || ctrl >= g->n_nodes)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "control edge %d -> %d: no such node", ctrl, node);
    tfc_gnode *n = g->nodes[node];
    for (int i = 0; i < n->n_ctrl; i++)
        if (n->ctrl[i] == ctrl) return true;
    int *c = tfc_realloc(n->ctrl, (size_t)(n->n_ctrl + 1) * sizeof *c);
    if (!c) return tfc_status_oom(st, "graph control edge", 0);
    c[n->n_ctrl++] = ctrl;
    n->ctrl = c;
    return true;
}

const tfc_tensor *tfc_graph_const_value(const tfc_graph *g, tfc_gport p) {
    if (p.node < 0 || p.node >= g->n_nodes) return NULL;
    const tfc_gnode *n = g->nodes[p.node];
    if (strcmp(n->op->def->name, "Const") || !n->attrs) return NULL;
    const tfc_attr *a = tfc_attrs_find(n->attrs, "value");
    return a && a->kind == TFC_ATTR_TENSOR ? a->v.tensor : NULL;
}

tfc_gnode *tfc_graph_add_op(tfc_graph *g, const char *op_name, const char *name, const tfc_gport *in, int n_in,
                            const tfc_attr *attrs, int n_attrs, const int *ctrl, int n_ctrl, tfc_status *st) {
    const tfc_op *op = tfc_op_lookup(op_name ? op_name : "");
    const char *what = name ? name : (op_name ? op_name : "(null)");
    if (!op) {
        tfc_status_set(st, TFC_NOT_FOUND, "Op type not registered '%s' in node '%s'", op_name ? op_name : "(null)",
                       what);
        return NULL;
    }
    if (n_in < 0 || n_in > TFC_MAX_IO) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %d inputs is outside [0, %d]", what, n_in, TFC_MAX_IO);
        return NULL;
    }
    for (int i = 0; i < n_in; i++)
        if (!check_port(g, in[i], what, st)) return NULL;
    /* Stand-in tensors carrying the inputs' dtypes, shapes and (for Const inputs) values: resolve and shape
     * functions read only these fields. */
    tfc_tensor stand[TFC_MAX_IO];
    tfc_tensor *ins[TFC_MAX_IO];
    tfc_shape in_shapes[TFC_MAX_IO], out_shapes[TFC_MAX_IO];
    tfc_dtype in_dtypes[TFC_MAX_IO], out_dtypes[TFC_MAX_IO];
    for (int i = 0; i < n_in; i++) {
        const tfc_gnode *p = g->nodes[in[i].node];
        const tfc_tensor *cv = tfc_graph_const_value(g, in[i]);
        if (cv) {
            ins[i] = (tfc_tensor *)cv;
        } else {
            memset(&stand[i], 0, sizeof stand[i]);
            stand[i].dtype = p->out_dtypes[in[i].index];
            stand[i].shape = p->out_shapes[in[i].index];
            stand[i].num_elements = -1;
            ins[i] = &stand[i];
        }
        in_shapes[i] = ins[i]->shape;
        in_dtypes[i] = ins[i]->dtype;
    }
    tfc_attrs ra;
    int n_out = 0;
    if (!tfc_resolve_call(op, ins, n_in, attrs, n_attrs, &ra, &n_out, out_dtypes, st)) goto err;
    for (int i = 0; i < n_out; i++) out_shapes[i].rank = -1;
    tfc_shape_ctx sc = {.op = op->def, .attrs = &ra, .n_in = n_in, .in_shapes = in_shapes, .in_dtypes = in_dtypes,
                        .in_values = ins, .n_out = n_out, .out_shapes = out_shapes, .out_dtypes = out_dtypes};
    if (op->def->shape && !op->def->shape(&sc, st)) goto err;
    return tfc_graph_add_node(g, op, name, &ra, in, n_in, ctrl, n_ctrl, n_out, out_dtypes, out_shapes, st);
err:
    if (name) {
        char m[sizeof st->msg];
        memcpy(m, st->msg, sizeof m);
        tfc_status_set(st, st->code, "node '%s': %s", name, m);
    }
    return NULL;
}

tfc_gnode *tfc_graph_add_const(tfc_graph *g, const char *name, tfc_tensor *value, tfc_status *st) {
    tfc_attr a[2] = {{.name = "value", .kind = TFC_ATTR_TENSOR, .v.tensor = value}, TFC_ATTR_T("dtype", value->dtype)};
    return tfc_graph_add_op(g, "Const", name, NULL, 0, a, 2, NULL, 0, st);
}

tfc_gnode *tfc_graph_add_placeholder(tfc_graph *g, const char *name, tfc_dtype dt, const tfc_shape *shape,
                                     tfc_status *st) {
    tfc_attr a[2] = {TFC_ATTR_T("dtype", dt),
                     {.name = "shape", .kind = TFC_ATTR_SHAPE, .n = shape ? shape->rank : -1,
                      .v.ints = shape ? shape->dims : NULL}};
    return tfc_graph_add_op(g, "Placeholder", name, NULL, 0, a, 2, NULL, 0, st);
}

bool tfc_graph_topo_order(const tfc_graph *g, int *order, tfc_status *st) {
    const int n = g->n_nodes;
    int *pending = tfc_calloc((size_t)n + 1, sizeof *pending);
    int *first = tfc_calloc((size_t)n + 2, sizeof *first); /* consumers in CSR form */
    int64_t edges = 0;
    for (int i = 0; i < n; i++) edges += g->nodes[i]->n_in + g->nodes[i]->n_ctrl;
    int *adj = tfc_malloc((size_t)edges * sizeof *adj + 1);
    bool ok = pending && first && adj;
    if (!ok) {
        tfc_status_oom(st, "graph order", 0);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        const tfc_gnode *d = g->nodes[i];
        for (int k = 0; k < d->n_in; k++) first[d->in[k].node + 1]++;
        for (int k = 0; k < d->n_ctrl; k++) first[d->ctrl[k] + 1]++;
        pending[i] = d->n_in + d->n_ctrl;
    }
    for (int i = 0; i < n; i++) first[i + 1] += first[i];
    {
        int *fill = tfc_malloc((size_t)n * sizeof *fill + 1);
        if (!fill) {
            ok = tfc_status_oom(st, "graph order", 0);
            goto done;
        }
        memcpy(fill, first, (size_t)n * sizeof *fill);
        for (int i = 0; i < n; i++) {
            const tfc_gnode *d = g->nodes[i];
            for (int k = 0; k < d->n_in; k++) adj[fill[d->in[k].node]++] = i;
            for (int k = 0; k < d->n_ctrl; k++) adj[fill[d->ctrl[k]]++] = i;
        }
        tfc_free(fill);
    }
    /* Kahn's algorithm; `order` doubles as the queue. Seeding in id order keeps a traced graph's order. */
    int head = 0, tail = 0;
    for (int i = 0; i < n; i++)
        if (!pending[i]) order[tail++] = i;
    while (head < tail) {
        int v = order[head++];
        for (int e = first[v]; e < first[v + 1]; e++)
            if (--pending[adj[e]] == 0) order[tail++] = adj[e];
    }
    if (tail < n) {
        int bad = 0;
        while (!pending[bad]) bad++;
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Graph contains a cycle: node '%s' (%s) depends on itself",
                            g->nodes[bad]->name, g->nodes[bad]->op->def->name);
    }
done:
    tfc_free(pending);
    tfc_free(first);
    tfc_free(adj);
    return ok;
}

/* ---- function library ---- */
tfc_flib *tfc_flib_new(tfc_status *st) {
    tfc_flib *lib = tfc_calloc(1, sizeof *lib);
    if (!lib) tfc_status_oom(st, "function library", sizeof *lib);
    return lib;
}

static void gfunc_free(tfc_gfunc *fn) {
    if (!fn) return;
    if (fn->runtime_free) fn->runtime_free(fn->runtime);
    tfc_free(fn->name);
    tfc_graph_free(fn->body);
    tfc_free(fn->arg_nodes);
    tfc_free(fn->rets);
    for (int i = 0; i < fn->n_rets; i++) tfc_free(fn->ret_names[i]);
    tfc_free(fn->ret_names);
    tfc_free(fn->ctrl_rets);
    tfc_free(fn);
}

void tfc_flib_free(tfc_flib *lib) {
    if (!lib) return;
    for (int i = 0; i < lib->n; i++) gfunc_free(lib->fns[i]);
    tfc_free(lib->fns);
    tfc_free(lib);
}

tfc_gfunc *tfc_flib_find(const tfc_flib *lib, const char *name) {
    if (!lib || !name) return NULL;
    for (int i = 0; i < lib->n; i++)
        if (!strcmp(lib->fns[i]->name, name)) return lib->fns[i];
    return NULL;
}

tfc_gfunc *tfc_flib_add(tfc_flib *lib, const char *name, tfc_status *st) {
    if (!name || !*name) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "function library: empty function name");
        return NULL;
    }
    if (tfc_flib_find(lib, name)) {
        tfc_status_set(st, TFC_ALREADY_EXISTS, "Cannot add function '%s' because a different function with the same name already exists.", name);
        return NULL;
    }
    if (lib->n == lib->cap) {
        int cap = lib->cap ? lib->cap * 2 : 8;
        tfc_gfunc **f = tfc_realloc(lib->fns, (size_t)cap * sizeof *f);
        if (!f) {
            tfc_status_oom(st, "function library", 0);
            return NULL;
        }
        lib->fns = f;
        lib->cap = cap;
    }
    tfc_gfunc *fn = tfc_calloc(1, sizeof *fn);
    if (!fn || !(fn->name = tfc_strdup(name)) || !(fn->body = tfc_graph_new(lib, st))) {
        gfunc_free(fn);
        tfc_status_oom(st, "function", 0);
        return NULL;
    }
    fn->lib = lib;
    lib->fns[lib->n++] = fn;
    return fn;
}

void tfc_flib_remove(tfc_flib *lib, tfc_gfunc *fn) {
    for (int i = 0; lib && i < lib->n; i++)
        if (lib->fns[i] == fn) {
            memmove(&lib->fns[i], &lib->fns[i + 1], (size_t)(lib->n - i - 1) * sizeof *lib->fns);
            lib->n--;
            gfunc_free(fn);
            return;
        }
}

bool tfc_flib_is_referenced(const tfc_flib *lib, const char *name, const tfc_gfunc *except) {
    for (int f = 0; lib && f < lib->n; f++) {
        const tfc_gfunc *fn = lib->fns[f];
        if (fn == except) continue;
        for (int i = 0; i < fn->body->n_nodes; i++) {
            const tfc_attrs *a = fn->body->nodes[i]->attrs;
            for (int k = 0; a && k < a->n; k++) {
                const tfc_attr *x = &a->a[k];
                if (x->kind == TFC_ATTR_FUNC && !strcmp(x->v.s, name)) return true;
                for (int j = 0; x->kind == TFC_ATTR_LIST_FUNC && j < x->n; j++)
                    if (!strcmp(x->v.strs[j], name)) return true;
            }
        }
    }
    return false;
}

void tfc_flib_release(tfc_flib *lib, tfc_gfunc *fn) {
    if (!lib || fn->pinned || tfc_flib_is_referenced(lib, fn->name, fn)) return;
    /* the functions it calls, by name (they may go once fn is gone) */
    char *callees[64];
    int n_callees = 0;
    for (int i = 0; i < fn->body->n_nodes; i++) {
        const tfc_attrs *a = fn->body->nodes[i]->attrs;
        for (int k = 0; a && k < a->n; k++) {
            const tfc_attr *x = &a->a[k];
            int n = x->kind == TFC_ATTR_FUNC ? 1 : x->kind == TFC_ATTR_LIST_FUNC ? x->n : 0;
            for (int j = 0; j < n && n_callees < 64; j++) {
                char *c = tfc_strdup(x->kind == TFC_ATTR_FUNC ? x->v.s : x->v.strs[j]);
                if (c) callees[n_callees++] = c;
            }
        }
    }
    size_t len = strlen(fn->name);
    char *name = tfc_strdup(fn->name);
    tfc_flib_remove(lib, fn);
    /* its gradient functions (and theirs), as they become unreferenced */
    for (bool progress = name != NULL; progress;) {
        progress = false;
        for (int i = 0; i < lib->n && !progress; i++) {
            tfc_gfunc *g = lib->fns[i];
            if (!g->pinned && !strncmp(g->name, name, len) && !strncmp(g->name + len, "_grad", 5) &&
                !tfc_flib_is_referenced(lib, g->name, g)) {
                tfc_flib_release(lib, g);
                progress = true;
            }
        }
    }
    for (int i = 0; i < n_callees; i++) {
        tfc_gfunc *g = tfc_flib_find(lib, callees[i]);
        if (g) tfc_flib_release(lib, g);
        tfc_free(callees[i]);
    }
    tfc_free(name);
}

int tfc_gfunc_add_arg(tfc_gfunc *fn, const char *name, tfc_dtype dt, const tfc_shape *shape, tfc_status *st) {
    int *a = tfc_realloc(fn->arg_nodes, (size_t)(fn->n_args + 1) * sizeof *a);
    if (!a) {
        tfc_status_oom(st, "function args", 0);
        return -1;
    }
    fn->arg_nodes = a;
    tfc_gnode *n = tfc_graph_add_placeholder(fn->body, name, dt, shape, st);
    if (!n) return -1;
    a[fn->n_args++] = n->id;
    return n->id;
}

bool tfc_gfunc_set_rets(tfc_gfunc *fn, const tfc_gport *rets, const char *const *names, int n, tfc_status *st) {
    tfc_gport *r = tfc_malloc((size_t)n * sizeof *r + 1);
    char **nm = tfc_calloc((size_t)n + 1, sizeof *nm);
    bool ok = r && nm;
    for (int i = 0; i < n && ok; i++) {
        ok = tfc_gport_valid(fn->body, rets[i]);
        if (!ok) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s': result %d is not an output of its body", fn->name, i);
            break;
        }
        r[i] = rets[i];
        char buf[32];
        snprintf(buf, sizeof buf, "output_%d", i);
        ok = (nm[i] = tfc_strdup(names && names[i] ? names[i] : buf)) != NULL;
        if (!ok) tfc_status_oom(st, "function results", 0);
    }
    if (!r || !nm) tfc_status_oom(st, "function results", 0);
    if (!ok) {
        for (int i = 0; nm && i < n; i++) tfc_free(nm[i]);
        tfc_free(nm);
        tfc_free(r);
        return false;
    }
    for (int i = 0; i < fn->n_rets; i++) tfc_free(fn->ret_names[i]);
    tfc_free(fn->ret_names);
    tfc_free(fn->rets);
    fn->rets = r;
    fn->ret_names = nm;
    fn->n_rets = n;
    return true;
}

void tfc_gfunc_update_stateful(tfc_gfunc *fn) {
    fn->stateful = false;
    for (int i = 0; i < fn->body->n_nodes && !fn->stateful; i++) {
        const tfc_gnode *n = fn->body->nodes[i];
        fn->stateful = n->op->def->stateful;
        if (!fn->stateful && n->attrs) /* a call of a stateful function is stateful */
            for (int k = 0; k < n->attrs->n && !fn->stateful; k++) {
                const tfc_attr *a = &n->attrs->a[k];
                if (a->kind == TFC_ATTR_FUNC) {
                    const tfc_gfunc *f = tfc_flib_find(fn->lib, a->v.s);
                    fn->stateful = f && f != fn && f->stateful;
                }
            }
    }
}

void tfc_gfunc_arg_dtypes(const tfc_gfunc *fn, tfc_dtype *out) {
    for (int i = 0; i < fn->n_args; i++) out[i] = fn->body->nodes[fn->arg_nodes[i]]->out_dtypes[0];
}

void tfc_gfunc_ret_dtypes(const tfc_gfunc *fn, tfc_dtype *out) {
    for (int i = 0; i < fn->n_rets; i++) out[i] = fn->body->nodes[fn->rets[i].node]->out_dtypes[fn->rets[i].index];
}
