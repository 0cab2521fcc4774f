/* Graph IR -> GraphDef: nodes with TensorFlow's op names and every resolved attr, inputs in GraphDef syntax at
 * the top level and in FunctionDef syntax ("node:out_arg:k", argument names) inside functions. */
#include <stdio.h>
#include <string.h>

#include "eager/context_internal.h"
#include "graph/graphdef_io.h"
#include "proto/graphdef_internal.h"

/* How many tensors output arg a of node n is (list args read their length attr). */
static int arg_count(const tfc_gnode *n, const tfc_arg_spec *a) {
    if (a->kind == TFC_ARG_N_TYPE) return (int)n->attrs->a[a->number_attr].v.i;
    if (a->kind == TFC_ARG_TYPE_LIST) return n->attrs->a[a->type_attr].n;
    return 1;
}

/* The input string for port p of g: "node", "node:k" (top level) or "node:out_arg:k" / an argument name. */
static void port_str(const tfc_graph *g, tfc_gport p, const tfc_gfunc *fn, char *buf, size_t size) {
    const tfc_gnode *src = g->nodes[p.node];
    if (fn) {
        for (int a = 0; a < fn->n_args; a++)
            if (fn->arg_nodes[a] == p.node) {
                snprintf(buf, size, "%s", src->name);
                return;
            }
        int k = p.index;
        for (int a = 0; a < src->op->n_out_args; a++) {
            int cnt = arg_count(src, &src->op->out[a]);
            if (k < cnt) {
                snprintf(buf, size, "%s:%s:%d", src->name, src->op->out[a].name, k);
                return;
            }
            k -= cnt;
        }
    }
    if (p.index) snprintf(buf, size, "%s:%d", src->name, p.index);
    else snprintf(buf, size, "%s", src->name);
}

static bool is_arg(const tfc_gfunc *fn, int id) {
    for (int a = 0; fn && a < fn->n_args; a++)
        if (fn->arg_nodes[a] == id) return true;
    return false;
}

static bool export_nodes(const tfc_graph *g, const tfc_gfunc *fn, tfc_graphdef *gd, int target, tfc_status *st) {
    int *order = tfc_malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    if (!order) return tfc_status_oom(st, "GraphDef export", (size_t)g->n_nodes * sizeof *order);
    bool ok = tfc_graph_topo_order(g, order, st);
    for (int k = 0; k < g->n_nodes && ok; k++) {
        const tfc_gnode *n = g->nodes[order[k]];
        if (is_arg(fn, n->id)) continue;
        const int n_inputs = n->n_in + n->n_ctrl;
        char **ins = tfc_calloc((size_t)n_inputs + 1, sizeof *ins);
        tfc_attr attrs[TFC_MAX_ATTRS];
        int n_attrs = 0;
        ok = ins != NULL;
        for (int i = 0; i < n_inputs && ok; i++) {
            char buf[1100];
            if (i < n->n_in) port_str(g, n->in[i], fn, buf, sizeof buf);
            else snprintf(buf, sizeof buf, "^%s", g->nodes[n->ctrl[i - n->n_in]]->name);
            ok = (ins[i] = tfc_strdup(buf)) != NULL;
        }
        if (!ok) tfc_status_oom(st, "GraphDef export", 1024);
        for (int a = 0; ok && n->attrs && a < n->attrs->n; a++)
            if (n->attrs->a[a].kind != TFC_ATTR_NONE) {
                attrs[n_attrs] = n->attrs->a[a];
                attrs[n_attrs++].name = n->op->attrs[a].name;
            }
        ok = ok && tfc_graphdef_add_node(gd, target, n->name, n->op->def->name, (const char *const *)ins, n_inputs, attrs,
                                         n_attrs, st);
        for (int i = 0; ins && i < n_inputs; i++) tfc_free(ins[i]);
        tfc_free(ins);
    }
    tfc_free(order);
    return ok;
}

bool tfc_graphdef_export_graph(const tfc_graph *g, tfc_graphdef *gd, tfc_status *st) {
    return export_nodes(g, NULL, gd, TFC_GRAPHDEF_TOP, st);
}

bool tfc_graphdef_export_function(const tfc_gfunc *fn, tfc_graphdef *gd, tfc_status *st) {
    const tfc_graph *g = fn->body;
    tfc_graphdef_arg *args = tfc_calloc((size_t)fn->n_args + (size_t)fn->n_rets + 1, sizeof *args);
    char **rets = tfc_calloc((size_t)fn->n_rets + 1, sizeof *rets);
    bool ok = args && rets;
    if (!ok) tfc_status_oom(st, "GraphDef export", 64);
    for (int a = 0; ok && a < fn->n_args; a++) {
        const tfc_gnode *p = g->nodes[fn->arg_nodes[a]];
        args[a] = (tfc_graphdef_arg){p->name, p->out_dtypes[0]};
    }
    for (int r = 0; ok && r < fn->n_rets; r++) {
        char buf[1100];
        port_str(g, fn->rets[r], fn, buf, sizeof buf);
        args[fn->n_args + r] = (tfc_graphdef_arg){fn->ret_names[r], g->nodes[fn->rets[r].node]->out_dtypes[fn->rets[r].index]};
        if (!(rets[r] = tfc_strdup(buf))) ok = tfc_status_oom(st, "GraphDef export", sizeof buf);
    }
    int f = ok ? tfc_graphdef_add_function(gd, fn->name, args, fn->n_args, args + fn->n_args, (const char *const *)rets,
                                           fn->n_rets, st)
               : -1;
    ok = f >= 0 && export_nodes(g, fn, gd, f, st);
    /* control results: nodes a call must run even though no result reads them */
    Tensorflow__FunctionDef *fdef = ok ? gd->pb->library->function[f] : NULL;
    for (int c = 0; ok && c < fn->n_ctrl_rets; c++) {
        Tensorflow__FunctionDef__ControlRetEntry *e = tfc_malloc(sizeof *e);
        void **arr = e ? tfc_realloc(fdef->control_ret, (fdef->n_control_ret + 1) * sizeof *arr) : NULL;
        if (arr) fdef->control_ret = (Tensorflow__FunctionDef__ControlRetEntry **)arr;
        if (e) tensorflow__function_def__control_ret_entry__init(e);
        const char *nm = g->nodes[fn->ctrl_rets[c]]->name;
        if (!arr || !(e->key = tfc_strdup(nm)) || !(e->value = tfc_strdup(nm))) {
            if (e && !e->key) e->key = (char *)protobuf_c_empty_string;
            if (e && !e->value) e->value = (char *)protobuf_c_empty_string;
            tfc_pb_free(e);
            ok = tfc_status_oom(st, "GraphDef export", 64);
            break;
        }
        fdef->control_ret[fdef->n_control_ret++] = e;
        Tensorflow__OpDef *s = fdef->signature;
        char **names = tfc_realloc(s->control_output, (s->n_control_output + 1) * sizeof *names);
        if (!names || !(names[s->n_control_output] = tfc_strdup(nm))) {
            if (names) s->control_output = names;
            ok = tfc_status_oom(st, "GraphDef export", 64);
            break;
        }
        s->control_output = names;
        s->n_control_output++;
    }
    if (ok && fn->stateful) fdef->signature->is_stateful = true;
    for (int r = 0; rets && r < fn->n_rets; r++) tfc_free(rets[r]);
    tfc_free(rets);
    tfc_free(args);
    return ok;
}

/* Appends to *list (n, growing) every function g's nodes name that is not there yet, then those they call. */
static bool collect_called(const tfc_graph *g, const tfc_flib *lib, const tfc_gfunc ***list, int *n, int *cap,
                           tfc_status *st) {
    for (int i = 0; i < g->n_nodes; i++) {
        const tfc_gnode *nd = g->nodes[i];
        for (int a = 0; nd->attrs && a < nd->attrs->n; a++) {
            const tfc_attr *at = &nd->attrs->a[a];
            const int count = at->kind == TFC_ATTR_FUNC ? 1 : at->kind == TFC_ATTR_LIST_FUNC ? at->n : 0;
            for (int k = 0; k < count; k++) {
                const tfc_gfunc *f = tfc_flib_find(lib, at->kind == TFC_ATTR_FUNC ? at->v.s : at->v.strs[k]);
                bool seen = !f;
                for (int j = 0; j < *n && !seen; j++) seen = (*list)[j] == f;
                if (seen) continue;
                if (*n == *cap) {
                    int c = *cap ? 2 * *cap : 8;
                    const tfc_gfunc **p = tfc_realloc((void *)*list, (size_t)c * sizeof *p);
                    if (!p) return tfc_status_oom(st, "GraphDef export", (size_t)c * sizeof *p);
                    *list = p;
                    *cap = c;
                }
                (*list)[(*n)++] = f;
                if (!collect_called(f->body, lib, list, n, cap, st)) return false;
            }
        }
    }
    return true;
}

bool tfc_concrete_function_graph_def(tfc_ctx *ctx, const tfc_concrete_function *cf, void **data, size_t *size,
                                     tfc_status *st) {
    const char *name = cf ? tfc_concrete_function_name(cf) : NULL;
    const tfc_flib *lib = ctx ? ctx->flib : NULL;
    const tfc_gfunc *fn = lib && name ? tfc_flib_find(lib, name) : NULL;
    if (!fn) return tfc_status_set(st, TFC_NOT_FOUND, "concrete function '%s' is not in the context's library",
                                   name ? name : "(null)");
    const tfc_gfunc **called = NULL;
    int n = 0, cap = 0;
    tfc_graphdef *gd = tfc_graphdef_new(st);
    bool ok = gd && collect_called(fn->body, lib, &called, &n, &cap, st);
    for (int i = 0; i < n && ok; i++) ok = tfc_graphdef_export_function(called[i], gd, st);
    ok = ok && tfc_graphdef_export_graph(fn->body, gd, st) && tfc_graphdef_serialize(gd, data, size, st);
    tfc_free((void *)called);
    tfc_graphdef_free(gd);
    return ok;
}

bool tfc_graphdef_export_function_tree(const tfc_gfunc *fn, const tfc_flib *lib, tfc_graphdef *gd, tfc_status *st) {
    const tfc_gfunc **called = NULL;
    int n = 0, cap = 0;
    bool ok = collect_called(fn->body, lib, &called, &n, &cap, st);
    for (int i = -1; i < n && ok; i++) {
        const tfc_gfunc *f = i < 0 ? fn : called[i];
        if (tfc_graphdef_find_function(gd, f->name) < 0) ok = tfc_graphdef_export_function(f, gd, st);
    }
    tfc_free((void *)called);
    return ok;
}
