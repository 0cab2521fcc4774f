/* GraphDef -> graph IR: every library function and the graph's own nodes become IR functions whose nodes are
 * added in dependency order through tfc_graph_add_op (attrs resolved and shapes inferred as when tracing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graphdef_io.h"
#include "proto/graphdef_internal.h"

typedef struct {
    tfc_graphdef *gd;
    const tfc_gd_body *b;
    const Tensorflow__FunctionDef *fdef; /* NULL: the graph's own nodes */
    tfc_gfunc *fn;
    int *ids;                            /* GraphDef node index -> IR node id (-1: not added yet) */
    tfc_name_map args;                   /* argument name -> IR node id */
    const tfc_graphdef_feed *feeds;      /* subgraph import: tensors fed as arguments */
    int n_feeds;
    const int *feed_ids;                 /* their IR argument node ids */
    const int64_t *feed_nodes;           /* GraphDef node of each feed */
    const bool *needed;                  /* subgraph import: the nodes to add (NULL: all) */
} imp;

/* The GraphDef node an input string names (control, data, function-body syntax); -1 for an argument. */
static int64_t producer(const imp *m, const char *in) {
    if (in[0] == '^') in++;
    const char *c = strchr(in, ':');
    char buf[1024];
    size_t n = c ? (size_t)(c - in) : strlen(in);
    if (n >= sizeof buf) return -1;
    memcpy(buf, in, n);
    buf[n] = 0;
    if (m->fdef && !c && tfc_name_map_get(&m->args, buf) >= 0) return -1;
    return tfc_name_map_get(&m->b->names, buf);
}

/* A top-level tensor name "node" / "node:k": its node index (-1: no such node) and k. */
static int64_t top_tensor(const imp *m, const char *t, int *k) {
    const char *c = strchr(t, ':');
    *k = c ? atoi(c + 1) : 0;
    return producer(m, t);
}

/* The argument a fed top-level tensor became, or -1. */
static int fed_arg(const imp *m, int64_t node, int k) {
    for (int f = 0; f < m->n_feeds; f++) {
        int fk;
        if (m->feed_nodes[f] == node && (top_tensor(m, m->feeds[f].tensor, &fk), fk == k)) return m->feed_ids[f];
    }
    return -1;
}

/* A data input string -> IR port. */
static bool port_of(const imp *m, const char *in, tfc_gport *out, tfc_status *st) {
    const char *c = strchr(in, ':');
    if (m->fdef && !c) {
        int64_t a = tfc_name_map_get(&m->args, in);
        if (a >= 0) {
            *out = (tfc_gport){(int)a, 0};
            return true;
        }
    }
    int64_t p = producer(m, in);
    if (!m->fdef && m->n_feeds && p >= 0) {
        int a = fed_arg(m, p, c ? atoi(c + 1) : 0);
        if (a >= 0) {
            *out = (tfc_gport){a, 0};
            return true;
        }
    }
    if (p < 0 || m->ids[p] < 0) return tfc_status_set(st, TFC_INTERNAL, "GraphDef import: input '%s' not resolved", in);
    out->node = m->ids[p];
    out->index = 0;
    if (!c) return true;
    if (!m->fdef) { /* "node:k" */
        out->index = atoi(c + 1);
        return true;
    }
    /* "node:out_arg:k": the offset of out_arg among the producer's flattened outputs, plus k */
    const Tensorflow__NodeDef *src = m->b->nodes[p];
    const char *c2 = strrchr(in, ':');
    tfc_gd_op op;
    if (!tfc_gd_op_resolve(m->gd, src->op, &op))
        return tfc_status_set(st, TFC_NOT_FOUND, "GraphDef import: no op '%s'", src->op);
    int64_t offset = 0;
    for (int a = 0; a < tfc_gd_op_num_args(&op, true); a++) {
        const char *aname;
        int64_t cnt;
        if (!tfc_gd_op_arg(&op, src, true, a, &aname, &cnt, st)) return false;
        if (strlen(aname) == (size_t)(c2 - c - 1) && !strncmp(aname, c + 1, strlen(aname))) {
            out->index = (int)(offset + atoll(c2 + 1));
            return true;
        }
        offset += cnt;
    }
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "GraphDef import: input '%s' names no output of %s", in, src->op);
}

/* TensorFlow 1's reference variables run as resource variables: a VariableV2's ref output is a handle, the
 * ops that take a ref (Assign, AssignAdd, AssignSub) become their resource forms, and every other consumer of
 * a ref reads the variable's value when it runs (a ReadVariableOp, after the consumer's control inputs). */
static const char *resource_form(const char *op) {
    static const char *const map[][2] = {{"VariableV2", "VarHandleOp"}, {"Variable", "VarHandleOp"},
                                         {"Assign", "AssignVariableOp"}, {"AssignAdd", "AssignAddVariableOp"},
                                         {"AssignSub", "AssignSubVariableOp"}};
    for (size_t k = 0; k < sizeof map / sizeof *map; k++)
        if (!strcmp(op, map[k][0])) return map[k][1];
    return op;
}
static bool is_ref_variable(const char *op) { return !strcmp(op, "VariableV2") || !strcmp(op, "Variable"); }
static bool takes_ref(const char *op) { return !strcmp(op, "Assign") || !strcmp(op, "AssignAdd") || !strcmp(op, "AssignSub"); }

/* Input k of node nd reads the ref variable behind *port: a ReadVariableOp of the variable's dtype. */
static bool read_ref(imp *m, const Tensorflow__NodeDef *nd, size_t k, const char *in, const int *ctrl, int n_ctrl,
                     tfc_gport *port, tfc_status *st) {
    const Tensorflow__NodeDef *src = m->b->nodes[producer(m, in)];
    const Tensorflow__AttrValue *dt = tfc_gd_node_attr(src, "dtype");
    if (!dt || dt->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TYPE)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "node '%s' (%s): no dtype attr", src->name, src->op);
    tfc_attr a = {.name = "dtype", .kind = TFC_ATTR_TYPE, .v.type = (tfc_dtype)dt->type};
    char name[1100];
    snprintf(name, sizeof name, "%.1000s/_read_%zu", nd->name, k);
    tfc_gnode *r = tfc_graph_add_op(m->fn->body, "ReadVariableOp", name, port, 1, &a, 1, ctrl, n_ctrl, st);
    if (!r) return false;
    *port = (tfc_gport){r->id, 0};
    return true;
}

static bool add_node(imp *m, int64_t i, tfc_status *st) {
    const Tensorflow__NodeDef *nd = m->b->nodes[i];
    tfc_gd_op op;
    if (!tfc_gd_op_resolve(m->gd, resource_form(nd->op), &op))
        return tfc_status_set(st, TFC_NOT_FOUND, "Op type not registered '%s' (node '%s')", nd->op, nd->name);
    if (!m->fdef && m->feeds && !strcmp(nd->op, "Placeholder"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "You must feed a value for placeholder tensor '%s'", nd->name);
    if (!m->fdef && !strcmp(nd->op, "Placeholder")) { /* the graph's inputs */
        tfc_attr dt, shp;
        const char *where = nd->name;
        const Tensorflow__AttrValue *v = tfc_gd_node_attr(nd, "dtype");
        if (!v || !tfc_pb_attr_from_proto(v, "dtype", m->gd->arena, 0, where, &dt, st)) return false;
        tfc_shape s = {.rank = -1}, *sp = NULL;
        if ((v = tfc_gd_node_attr(nd, "shape"))) {
            if (!tfc_pb_attr_from_proto(v, "shape", m->gd->arena, 0, where, &shp, st)) return false;
            if (shp.n >= 0 && tfc_shape_make(&s, shp.v.ints, shp.n, st)) sp = &s;
        }
        int id = tfc_gfunc_add_arg(m->fn, nd->name, dt.v.type, sp, st);
        m->ids[i] = id;
        return id >= 0;
    }
    tfc_gport ports[TFC_MAX_IO];
    int n_in = 0, n_ctrl = 0;
    int *ctrl = nd->n_input ? tfc_malloc(nd->n_input * sizeof *ctrl) : NULL;
    if (nd->n_input && !ctrl) return tfc_status_oom(st, "GraphDef import", nd->n_input * sizeof *ctrl);
    bool ok = true;
    for (size_t k = 0; k < nd->n_input && ok; k++) {
        const char *in = nd->input[k];
        if (in[0] == '^') {
            int64_t p = producer(m, in);
            if (p >= 0 && m->ids[p] >= 0) ctrl[n_ctrl++] = m->ids[p]; /* a fed or pruned node's is dropped */
        } else if (n_in == TFC_MAX_IO) {
            ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "node '%s': more than %d inputs", nd->name, TFC_MAX_IO);
        } else {
            ok = port_of(m, in, &ports[n_in++], st);
        }
    }
    for (size_t k = 0, d = 0; ok && !m->fdef && k < nd->n_input; k++) { /* reads of ref variables */
        if (nd->input[k][0] == '^') continue;
        int64_t p = producer(m, nd->input[k]);
        if (p >= 0 && is_ref_variable(m->b->nodes[p]->op) && !(d == 0 && takes_ref(nd->op)))
            ok = read_ref(m, nd, k, nd->input[k], ctrl, n_ctrl, &ports[d], st);
        d++;
    }
    /* attrs the op declares; a call of a library function by name becomes a PartitionedCall */
    const char *op_name = resource_form(nd->op);
    tfc_attr attrs[TFC_MAX_ATTRS + 3];
    int n_attrs = 0;
    tfc_dtype *types = NULL;
    if (ok && op.kind == TFC_GD_OP_FUNCTION) {
        const Tensorflow__OpDef *s = op.fn->signature;
        types = tfc_malloc((s->n_input_arg + s->n_output_arg + 1) * sizeof *types);
        if (!types) ok = tfc_status_oom(st, "GraphDef import", 64);
        for (size_t k = 0; ok && k < s->n_input_arg + s->n_output_arg; k++) {
            const Tensorflow__OpDef__ArgDef *a = k < s->n_input_arg ? s->input_arg[k] : s->output_arg[k - s->n_input_arg];
            if (!a->type) ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "node '%s': function '%s' has an arg typed by an attr",
                                              nd->name, nd->op);
            types[k] = (tfc_dtype)a->type;
        }
        bool stateful = false;
        for (size_t k = 0; k < op.fn->n_node_def && !stateful; k++) {
            const tfc_op *r = tfc_op_lookup(op.fn->node_def[k]->op);
            stateful = !r || r->def->stateful;
        }
        op_name = stateful ? "StatefulPartitionedCall" : "PartitionedCall";
        attrs[n_attrs++] = (tfc_attr){.name = "Tin", .kind = TFC_ATTR_LIST_TYPE, .n = (int)s->n_input_arg, .v.types = types};
        attrs[n_attrs++] = (tfc_attr){.name = "Tout", .kind = TFC_ATTR_LIST_TYPE, .n = (int)s->n_output_arg,
                                      .v.types = types + s->n_input_arg};
        attrs[n_attrs++] = TFC_ATTR_FN("f", s->name);
    } else if (ok) {
        const tfc_op *r = tfc_op_lookup(op_name);
        if (!r) ok = tfc_status_set(st, TFC_NOT_FOUND, "Op type not registered '%s' (node '%s')", op_name, nd->name);
        char where[200];
        snprintf(where, sizeof where, "node '%s' (%s)", nd->name, nd->op);
        for (size_t k = 0; ok && k < nd->n_attr; k++) {
            if (tfc_op_attr_index(r, nd->attr[k]->key) < 0 || n_attrs == TFC_MAX_ATTRS) continue;
            ok = tfc_pb_attr_from_proto(nd->attr[k]->value, nd->attr[k]->key, m->gd->arena, m->gd->opts.max_tensor_bytes,
                                        where, &attrs[n_attrs++], st);
        }
    }
    tfc_gnode *node = ok ? tfc_graph_add_op(m->fn->body, op_name, nd->name, ports, n_in, attrs, n_attrs, ctrl, n_ctrl, st)
                         : NULL;
    tfc_free(types);
    tfc_free(ctrl);
    if (node) m->ids[i] = node->id;
    return node != NULL;
}

/* Adds the body's nodes in the run order validation found. */
static bool import_body(imp *m, tfc_status *st) {
    const size_t n = m->b->n_nodes;
    if (!(m->ids = tfc_malloc((n + 1) * sizeof *m->ids))) return tfc_status_oom(st, "GraphDef import", n * sizeof(int));
    for (size_t i = 0; i < n; i++) m->ids[i] = -1;
    bool ok = true;
    for (size_t i = 0; i < n && ok; i++)
        if (!m->needed || m->needed[m->b->order[i]]) ok = add_node(m, m->b->order[i], st);
    return ok;
}

static bool import_function(tfc_graphdef *gd, int f, tfc_flib *lib, tfc_status *st) {
    const Tensorflow__FunctionDef *fdef = gd->pb->library->function[f];
    const Tensorflow__OpDef *s = fdef->signature;
    imp m = {.gd = gd, .b = &gd->fns[f], .fdef = fdef};
    if (!(m.fn = tfc_flib_add(lib, s->name, st))) return false;
    bool ok = tfc_name_map_init(&m.args, s->n_input_arg, st);
    for (size_t a = 0; a < s->n_input_arg && ok; a++) {
        if (!s->input_arg[a]->type) {
            ok = tfc_status_set(st, TFC_UNIMPLEMENTED, "function '%s': arg '%s' is typed by an attr (polymorphic "
                                "functions are not supported)", s->name, s->input_arg[a]->name);
            break;
        }
        int id = tfc_gfunc_add_arg(m.fn, s->input_arg[a]->name, (tfc_dtype)s->input_arg[a]->type, NULL, st);
        ok = id >= 0;
        if (ok) tfc_name_map_put(&m.args, s->input_arg[a]->name, id);
    }
    ok = ok && import_body(&m, st);
    /* results and control results */
    tfc_gport *rets = ok ? tfc_malloc((s->n_output_arg + 1) * sizeof *rets) : NULL;
    const char **names = ok ? tfc_malloc((s->n_output_arg + 1) * sizeof *names) : NULL;
    if (ok && (!rets || !names)) ok = tfc_status_oom(st, "GraphDef import", s->n_output_arg * 16);
    for (size_t o = 0; o < s->n_output_arg && ok; o++) {
        names[o] = s->output_arg[o]->name;
        const char *r = NULL;
        for (size_t k = 0; k < fdef->n_ret && !r; k++)
            if (!strcmp(fdef->ret[k]->key, names[o])) r = fdef->ret[k]->value;
        ok = r && port_of(&m, r, &rets[o], st);
    }
    ok = ok && tfc_gfunc_set_rets(m.fn, rets, names, (int)s->n_output_arg, st);
    if (ok && fdef->n_control_ret) {
        if (!(m.fn->ctrl_rets = tfc_malloc(fdef->n_control_ret * sizeof *m.fn->ctrl_rets)))
            ok = tfc_status_oom(st, "GraphDef import", fdef->n_control_ret * sizeof(int));
        for (size_t k = 0; ok && k < fdef->n_control_ret; k++)
            m.fn->ctrl_rets[m.fn->n_ctrl_rets++] = m.ids[tfc_name_map_get(&m.b->names, fdef->control_ret[k]->value)];
    }
    if (ok) tfc_gfunc_update_stateful(m.fn);
    else tfc_flib_remove(lib, m.fn);
    tfc_free(rets);
    tfc_free(names);
    tfc_free(m.ids);
    tfc_name_map_clear(&m.args);
    return ok;
}

bool tfc_graphdef_import_library(tfc_graphdef *gd, tfc_flib *lib, tfc_status *st) {
    if (!gd->validated) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "GraphDef import: the graph is not validated");
    for (size_t f = 0; f < gd->n_fns; f++)
        if (tfc_flib_find(lib, gd->pb->library->function[f]->signature->name))
            return tfc_status_set(st, TFC_ALREADY_EXISTS, "GraphDef import: function '%s' is already defined",
                                  gd->pb->library->function[f]->signature->name);
    for (size_t f = 0; f < gd->n_fns; f++)
        if (!import_function(gd, (int)f, lib, st)) {
            char pre[200];
            snprintf(pre, sizeof pre, "function '%s': ", gd->pb->library->function[f]->signature->name);
            tfc_pb_status_prefix(st, pre);
            for (size_t k = 0; k < f; k++) tfc_flib_remove(lib, tfc_flib_find(lib, gd->pb->library->function[k]->signature->name));
            return false;
        }
    return true;
}

tfc_gfunc *tfc_graphdef_import_graph(tfc_graphdef *gd, tfc_flib *lib, const char *name, const char *const *outputs,
                                     int n_outputs, tfc_status *st) {
    if (!gd->validated)
        return tfc_status_set(st, TFC_FAILED_PRECONDITION, "GraphDef import: the graph is not validated"), NULL;
    imp m = {.gd = gd, .b = &gd->top};
    if (!(m.fn = tfc_flib_add(lib, name, st))) return NULL;
    bool ok = import_body(&m, st);
    tfc_gport *rets = ok ? tfc_malloc(((size_t)n_outputs + 1) * sizeof *rets) : NULL;
    if (ok && !rets) ok = tfc_status_oom(st, "GraphDef import", (size_t)n_outputs * sizeof *rets);
    for (int o = 0; o < n_outputs && ok; o++) {
        int64_t p = producer(&m, outputs[o]);
        const char *c = strchr(outputs[o], ':');
        if (p < 0 || outputs[o][0] == '^') {
            ok = tfc_status_set(st, TFC_NOT_FOUND, "output '%s': the graph has no such node", outputs[o]);
            break;
        }
        rets[o] = (tfc_gport){m.ids[p], c ? atoi(c + 1) : 0};
        if (!tfc_gport_valid(m.fn->body, rets[o]))
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "output '%s': node '%s' has %d outputs", outputs[o],
                                m.b->nodes[p]->name, m.fn->body->nodes[m.ids[p]]->n_out);
    }
    ok = ok && tfc_gfunc_set_rets(m.fn, rets, outputs, n_outputs, st);
    if (ok) tfc_gfunc_update_stateful(m.fn);
    tfc_free(rets);
    tfc_free(m.ids);
    if (!ok) {
        tfc_flib_remove(lib, m.fn);
        return NULL;
    }
    return m.fn;
}

/* ---- a pruned part of the graph, and the functions it calls ---- */

/* Marks function f and every function its body calls (function-named ops, func and list(func) attrs). */
static void mark_attr_fns(const tfc_graphdef *gd, const Tensorflow__AttrValue *v, bool *want);
static void mark_fn(const tfc_graphdef *gd, int64_t f, bool *want) {
    if (f < 0 || want[f]) return;
    want[f] = true;
    const tfc_gd_body *b = &gd->fns[f];
    for (size_t i = 0; i < b->n_nodes; i++) {
        mark_fn(gd, tfc_name_map_get(&gd->fn_names, b->nodes[i]->op), want);
        for (size_t k = 0; k < b->nodes[i]->n_attr; k++) mark_attr_fns(gd, b->nodes[i]->attr[k]->value, want);
    }
}
static void mark_attr_fns(const tfc_graphdef *gd, const Tensorflow__AttrValue *v, bool *want) {
    if (!v) return;
    if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && v->func)
        mark_fn(gd, tfc_name_map_get(&gd->fn_names, v->func->name), want);
    if (v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_LIST && v->list)
        for (size_t k = 0; k < v->list->n_func; k++) mark_fn(gd, tfc_name_map_get(&gd->fn_names, v->list->func[k]->name), want);
}

/* Imports the marked functions lib lacks, callees before callers (validation refused call cycles). */
static bool import_marked(tfc_graphdef *gd, tfc_flib *lib, bool *want, tfc_status *st) {
    for (bool progress = true; progress;) {
        progress = false;
        for (size_t f = 0; f < gd->n_fns; f++) {
            if (!want[f]) continue;
            const char *name = gd->pb->library->function[f]->signature->name;
            if (tfc_flib_find(lib, name)) {
                want[f] = false;
                progress = true;
                continue;
            }
            bool ready = true; /* every function f calls is in lib already */
            const tfc_gd_body *b = &gd->fns[f];
            for (size_t i = 0; i < b->n_nodes && ready; i++) {
                int64_t c = tfc_name_map_get(&gd->fn_names, b->nodes[i]->op);
                ready = c < 0 || !want[c];
                for (size_t k = 0; k < b->nodes[i]->n_attr && ready; k++) {
                    const Tensorflow__AttrValue *v = b->nodes[i]->attr[k]->value;
                    if (v && v->value_case == TENSORFLOW__ATTR_VALUE__VALUE_FUNC && v->func) {
                        c = tfc_name_map_get(&gd->fn_names, v->func->name);
                        ready = c < 0 || !want[c];
                    }
                }
            }
            if (!ready) continue;
            if (!import_function(gd, (int)f, lib, st)) {
                char pre[200];
                snprintf(pre, sizeof pre, "function '%s': ", name);
                tfc_pb_status_prefix(st, pre);
                return false;
            }
            want[f] = false;
            progress = true;
        }
    }
    for (size_t f = 0; f < gd->n_fns; f++) /* left over: a list(func) attr naming a caller (not a DAG) */
        if (want[f])
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "GraphDef import: function '%s' could not be ordered after "
                                  "its callees", gd->pb->library->function[f]->signature->name);
    return true;
}

tfc_gfunc *tfc_graphdef_import_subgraph(tfc_graphdef *gd, tfc_flib *lib, const char *name,
                                        const tfc_graphdef_feed *feeds, int n_feeds, const char *const *outputs,
                                        int n_outputs, tfc_status *st) {
    if (!gd->validated)
        return tfc_status_set(st, TFC_FAILED_PRECONDITION, "GraphDef import: the graph is not validated"), NULL;
    const size_t n = gd->top.n_nodes;
    imp m = {.gd = gd, .b = &gd->top, .feeds = feeds, .n_feeds = n_feeds};
    bool *needed = tfc_calloc(n + 1, sizeof *needed), *want = tfc_calloc(gd->n_fns + 1, sizeof *want);
    int64_t *stack = tfc_malloc((n + 1) * sizeof *stack), *feed_nodes = tfc_malloc(((size_t)n_feeds + 1) * sizeof *feed_nodes);
    int *feed_ids = tfc_malloc(((size_t)n_feeds + 1) * sizeof *feed_ids);
    tfc_gport *rets = tfc_malloc(((size_t)n_outputs + 1) * sizeof *rets);
    tfc_gfunc *fn = NULL;
    bool ok = needed && want && stack && feed_nodes && feed_ids && rets;
    if (!ok) tfc_status_oom(st, "GraphDef import", n * 9);
    m.feed_nodes = feed_nodes;
    m.feed_ids = feed_ids;
    m.needed = needed;
    for (int f = 0; f < n_feeds && ok; f++) {
        int k;
        if ((feed_nodes[f] = top_tensor(&m, feeds[f].tensor, &k)) < 0 || k < 0 ||
            (gd->top.n_outputs[feed_nodes[f]] >= 0 && k >= gd->top.n_outputs[feed_nodes[f]]))
            ok = tfc_status_set(st, TFC_NOT_FOUND, "feed '%s': the graph has no such tensor", feeds[f].tensor);
    }
    /* the nodes the outputs need, stopping at fed nodes */
    size_t sp = 0;
    for (int o = 0; o < n_outputs && ok; o++) {
        int k;
        const bool target = outputs[o][0] == '^';
        int64_t p = top_tensor(&m, outputs[o] + target, &k);
        if (p < 0) ok = tfc_status_set(st, TFC_NOT_FOUND, "output '%s': the graph has no such node", outputs[o]);
        else stack[sp++] = p, needed[p] = true;
        while (ok && sp) {
            const Tensorflow__NodeDef *nd = gd->top.nodes[stack[--sp]];
            bool fed = false;
            for (int f = 0; f < n_feeds && !fed; f++) fed = feed_nodes[f] == stack[sp];
            if (fed) {
                needed[stack[sp]] = false;
                continue;
            }
            for (size_t i = 0; i < nd->n_input; i++) {
                int64_t q = producer(&m, nd->input[i]);
                if (q >= 0 && !needed[q]) needed[q] = true, stack[sp++] = q;
            }
        }
    }
    for (size_t i = 0; i < n && ok; i++)
        if (needed[i]) {
            mark_fn(gd, tfc_name_map_get(&gd->fn_names, gd->top.nodes[i]->op), want);
            for (size_t k = 0; k < gd->top.nodes[i]->n_attr; k++) mark_attr_fns(gd, gd->top.nodes[i]->attr[k]->value, want);
        }
    ok = ok && import_marked(gd, lib, want, st) && (fn = tfc_flib_add(lib, name, st));
    m.fn = fn;
    for (int f = 0; f < n_feeds && ok; f++) {
        feed_ids[f] = tfc_gfunc_add_arg(fn, feeds[f].tensor, feeds[f].dtype, feeds[f].shape, st);
        ok = feed_ids[f] >= 0;
    }
    ok = ok && import_body(&m, st);
    int n_rets = 0, n_targets = 0;
    const char **ret_names = ok ? tfc_malloc(((size_t)n_outputs + 1) * sizeof *ret_names) : NULL;
    if (ok && (!ret_names || !(fn->ctrl_rets = tfc_malloc(((size_t)n_outputs + 1) * sizeof *fn->ctrl_rets))))
        ok = tfc_status_oom(st, "GraphDef import", (size_t)n_outputs * 16);
    for (int o = 0; o < n_outputs && ok; o++) {
        int k;
        const bool target = outputs[o][0] == '^';
        int64_t p = top_tensor(&m, outputs[o] + target, &k);
        if (target) { /* a node run for its effects: a control result (a fed one has nothing to run) */
            if (m.ids[p] >= 0) fn->ctrl_rets[n_targets++] = m.ids[p];
            continue;
        }
        int a = fed_arg(&m, p, k);
        ret_names[n_rets] = outputs[o];
        rets[n_rets] = a >= 0 ? (tfc_gport){a, 0} : (tfc_gport){m.ids[p], k};
        if (!tfc_gport_valid(fn->body, rets[n_rets++]))
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "output '%s': node '%s' has no output %d", outputs[o],
                                gd->top.nodes[p]->name, k);
    }
    if (fn) fn->n_ctrl_rets = n_targets;
    ok = ok && tfc_gfunc_set_rets(fn, rets, ret_names, n_rets, st);
    tfc_free(ret_names);
    if (ok) tfc_gfunc_update_stateful(fn);
    else if (fn) tfc_flib_remove(lib, fn), fn = NULL;
    tfc_free(m.ids);
    tfc_free(needed);
    tfc_free(want);
    tfc_free(stack);
    tfc_free(feed_nodes);
    tfc_free(feed_ids);
    tfc_free(rets);
    return fn;
}
