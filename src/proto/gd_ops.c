/* Resolving a GraphDef node's op to its signature: tfc's op registry, the few TensorFlow graph ops the registry
 * does not define yet (a table of what a reader needs of them: argument counts and names, attr kinds, from
 * TensorFlow's op definitions; the registry's definition wins once it has one), or a function of the graph's
 * library. */
#include <stdio.h>
#include <string.h>

#include "proto/graphdef_internal.h"

typedef struct { const char *name, *kind; bool required; } gop_attr;
struct tfc_gd_graph_op {
    const char *name;
    const char *in_single;   /* a leading single input arg (PlaceholderWithDefault's input), or NULL */
    const char *in_list;     /* list(type) attr giving the further inputs' count, or NULL */
    const char *out_list;    /* list(type) attr giving the outputs' count, or NULL */
    int n_out_single;        /* else: this many single outputs named "output" */
    gop_attr attrs[8];
};

static const tfc_gd_graph_op graph_ops[] = {
    {"PlaceholderWithDefault", "input", NULL, NULL, 1, {{"dtype", "type", true}, {"shape", "shape", true}}},
    {"IdentityN", NULL, "T", "T", 0, {{"T", "list(type)", true}}},
};

bool tfc_gd_op_resolve(const tfc_graphdef *g, const char *op_name, tfc_gd_op *out) {
    memset(out, 0, sizeof *out);
    out->name = op_name;
    if ((out->reg = tfc_op_lookup(op_name))) {
        out->kind = TFC_GD_OP_REGISTRY;
        return true;
    }
    for (size_t i = 0; i < sizeof graph_ops / sizeof graph_ops[0]; i++)
        if (!strcmp(graph_ops[i].name, op_name)) {
            out->kind = TFC_GD_OP_GRAPH;
            out->graph = &graph_ops[i];
            return true;
        }
    int64_t f = tfc_name_map_get(&g->fn_names, op_name);
    if (f >= 0) {
        out->kind = TFC_GD_OP_FUNCTION;
        out->fn = g->pb->library->function[f];
        return true;
    }
    return false;
}

int tfc_gd_op_num_args(const tfc_gd_op *op, bool output) {
    switch (op->kind) {
    case TFC_GD_OP_REGISTRY: return output ? op->reg->n_out_args : op->reg->n_in_args;
    case TFC_GD_OP_GRAPH: {
        const tfc_gd_graph_op *o = op->graph;
        if (output) return o->out_list ? 1 : o->n_out_single;
        return (o->in_single ? 1 : 0) + (o->in_list ? 1 : 0);
    }
    case TFC_GD_OP_FUNCTION: {
        const Tensorflow__OpDef *s = op->fn->signature;
        return (int)(output ? s->n_output_arg : s->n_input_arg);
    }
    }
    return 0;
}

const Tensorflow__AttrValue *tfc_gd_node_attr(const Tensorflow__NodeDef *nd, const char *name) {
    for (size_t i = 0; i < nd->n_attr; i++)
        if (nd->attr[i]->key && !strcmp(nd->attr[i]->key, name)) return nd->attr[i]->value;
    return NULL;
}

/* Length of a list arg from the node's attr: an int (number_attr) or a list(type)'s length. */
static bool list_len(const Tensorflow__NodeDef *nd, const char *attr, bool is_number, int64_t dflt, bool has_dflt,
                     int64_t *out, tfc_status *st) {
    const Tensorflow__AttrValue *v = tfc_gd_node_attr(nd, attr);
    if (!v) {
        if (has_dflt) {
            *out = dflt;
            return true;
        }
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "NodeDef missing attr '%s' (node '%s', op %s)", attr, nd->name,
                              nd->op);
    }
    if (is_number) {
        if (v->value_case != TENSORFLOW__ATTR_VALUE__VALUE_I || v->i < 0)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "node '%s' (%s): attr '%s' must be a non-negative int, "
                                  "got %s", nd->name, nd->op, attr, tfc_pb_attr_value_kind(v));
        *out = v->i;
        return true;
    }
    const char *kind = tfc_pb_attr_value_kind(v);
    if (strcmp(kind, "list(type)") && strcmp(kind, "list"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "AttrValue had value with type '%s' when 'list(type)' expected "
                              "for attr '%s'; NodeDef: {{node %s}}", kind, attr, nd->name);
    *out = (int64_t)v->list->n_type;
    return true;
}

bool tfc_gd_op_arg(const tfc_gd_op *op, const Tensorflow__NodeDef *nd, bool output, int i, const char **name,
                   int64_t *count, tfc_status *st) {
    switch (op->kind) {
    case TFC_GD_OP_REGISTRY: {
        const tfc_arg_spec *a = output ? &op->reg->out[i] : &op->reg->in[i];
        *name = a->name;
        if (a->kind == TFC_ARG_N_TYPE || a->kind == TFC_ARG_TYPE_LIST) {
            const tfc_attr_spec *s = &op->reg->attrs[a->kind == TFC_ARG_N_TYPE ? a->number_attr : a->type_attr];
            int64_t d = s->has_default ? (a->kind == TFC_ARG_N_TYPE ? s->dflt.v.i : s->dflt.n) : 0;
            return list_len(nd, s->name, a->kind == TFC_ARG_N_TYPE, d, s->has_default, count, st);
        }
        *count = 1;
        return true;
    }
    case TFC_GD_OP_GRAPH: {
        const tfc_gd_graph_op *o = op->graph;
        if (output) {
            *name = "output";
            if (o->out_list) return list_len(nd, o->out_list, false, 0, false, count, st);
            *count = 1;
            return true;
        }
        if (i == 0 && o->in_single) {
            *name = o->in_single;
            *count = 1;
            return true;
        }
        *name = o->in_single ? "input" : "args";
        return list_len(nd, o->in_list, false, 0, false, count, st);
    }
    case TFC_GD_OP_FUNCTION: {
        const Tensorflow__OpDef *s = op->fn->signature;
        const Tensorflow__OpDef__ArgDef *a = output ? s->output_arg[i] : s->input_arg[i];
        *name = a->name;
        if (a->number_attr[0]) return list_len(nd, a->number_attr, true, 0, false, count, st);
        if (a->type_list_attr[0]) return list_len(nd, a->type_list_attr, false, 0, false, count, st);
        *count = 1;
        return true;
    }
    }
    return false;
}

int tfc_gd_op_num_attrs(const tfc_gd_op *op) {
    switch (op->kind) {
    case TFC_GD_OP_REGISTRY: return op->reg->n_attrs;
    case TFC_GD_OP_GRAPH: {
        int n = 0;
        while (n < 8 && op->graph->attrs[n].name) n++;
        return n;
    }
    case TFC_GD_OP_FUNCTION: return (int)op->fn->signature->n_attr;
    }
    return 0;
}

void tfc_gd_op_attr(const tfc_gd_op *op, int i, tfc_gd_attr_spec *out) {
    memset(out, 0, sizeof *out);
    switch (op->kind) {
    case TFC_GD_OP_REGISTRY: {
        const tfc_attr_spec *s = &op->reg->attrs[i];
        out->name = s->name;
        out->kind = tfc_pb_attr_kind_name(s->kind);
        /* type attrs inferred from inputs in eager calls are always written in a GraphDef */
        out->required = !s->has_default;
        out->reg = s;
        break;
    }
    case TFC_GD_OP_GRAPH:
        out->name = op->graph->attrs[i].name;
        out->kind = op->graph->attrs[i].kind;
        out->required = op->graph->attrs[i].required;
        break;
    case TFC_GD_OP_FUNCTION: {
        const Tensorflow__OpDef__AttrDef *a = op->fn->signature->attr[i];
        out->name = a->name;
        out->kind = a->type;
        out->required = !a->default_value;
        break;
    }
    }
}

void tfc_gd_op_describe(const tfc_gd_op *op, char *buf, size_t size) {
    size_t k = 0;
#define PUT(...) do { int w_ = snprintf(buf + k, k < size ? size - k : 0, __VA_ARGS__); \
                      if (w_ > 0) k += (size_t)w_; } while (0)
    PUT("Op<name=%s; attr=", op->name);
    int n = tfc_gd_op_num_attrs(op);
    for (int i = 0; i < n; i++) {
        tfc_gd_attr_spec a;
        tfc_gd_op_attr(op, i, &a);
        PUT("%s%s:%s", i ? "," : "", a.name, a.kind);
    }
    PUT(">");
#undef PUT
    if (size) buf[size - 1] = 0;
}
