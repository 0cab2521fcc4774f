/* Building GraphDefs node by node and function by function, and writing them (atomically) as TensorFlow
 * reads them. Messages are allocated with tfc_malloc and freed as unpacked ones (tfc_pb_free). */
#include <stdio.h>
#include <string.h>

#include "platform/file_io.h"
#include "proto/graphdef_internal.h"

/* TensorFlow 2.21's GRAPH_DEF_VERSION: what tf.Graph.as_graph_def writes. */
#define TFC_GRAPHDEF_PRODUCER 2474

/* Appends p to a protobuf-c repeated field (*arr, *n) whose capacity is n rounded up to a power of two (as
 * push leaves it, and tfc_gd_pow2_arrays makes a parsed message's): it grows only when n is 0 or a power of
 * two, so building n nodes copies O(n) pointers even where realloc always moves (ASan). */
static bool push(void ***arr, size_t *n, void *p) {
    if ((*n & (*n - 1)) == 0) {
        void **a = tfc_realloc(*arr, (*n ? 2 * *n : 1) * sizeof *a);
        if (!a) return false;
        *arr = a;
    }
    (*arr)[(*n)++] = p;
    return true;
}

static bool pow2_array(void ***arr, size_t n) {
    size_t cap = 1;
    while (cap < n) cap *= 2;
    if (!n || cap == n) return true;
    void **a = tfc_realloc(*arr, cap * sizeof *a);
    if (!a) return false;
    *arr = a;
    return true;
}

bool tfc_gd_pow2_arrays(tfc_graphdef *g, tfc_status *st) {
    Tensorflow__FunctionDefLibrary *lib = g->pb->library;
    bool ok = pow2_array((void ***)&g->pb->node, g->pb->n_node);
    if (lib) {
        ok = ok && pow2_array((void ***)&lib->function, lib->n_function);
        for (size_t f = 0; ok && f < lib->n_function; f++)
            ok = pow2_array((void ***)&lib->function[f]->node_def, lib->function[f]->n_node_def);
    }
    return ok || tfc_status_oom(st, "GraphDef", g->pb->n_node * sizeof(void *));
}

tfc_graphdef *tfc_graphdef_new(tfc_status *st) {
    tfc_registry_init();
    tfc_graphdef *g = tfc_calloc(1, sizeof *g);
    Tensorflow__GraphDef *pb = tfc_malloc(sizeof *pb);
    Tensorflow__VersionDef *ver = tfc_malloc(sizeof *ver);
    if (!g || !pb || !ver || !(g->arena = tfc_pb_arena_new())) {
        tfc_free(g);
        tfc_free(pb);
        tfc_free(ver);
        return tfc_status_oom(st, "GraphDef", sizeof *g), NULL;
    }
    tensorflow__graph_def__init(pb);
    tensorflow__version_def__init(ver);
    ver->producer = TFC_GRAPHDEF_PRODUCER;
    pb->versions = ver;
    g->pb = pb;
    g->opts.max_bytes = g->opts.max_tensor_bytes = (size_t)INT32_MAX;
    if (!tfc_gd_bind(g, st)) {
        tfc_graphdef_free(g);
        return NULL;
    }
    tfc_status_clear(st);
    return g;
}

static Tensorflow__NodeDef *new_node(const char *name, const char *op, const char *const *inputs, int n_inputs,
                                     const tfc_attr *attrs, int n_attrs, tfc_status *st) {
    Tensorflow__NodeDef *nd = tfc_malloc(sizeof *nd);
    if (!nd) return tfc_status_oom(st, "NodeDef", sizeof *nd), NULL;
    tensorflow__node_def__init(nd);
    if (!(nd->name = tfc_strdup(name)) || !(nd->op = tfc_strdup(op))) goto oom;
    if (n_inputs && !(nd->input = tfc_calloc((size_t)n_inputs, sizeof *nd->input))) goto oom;
    for (int i = 0; i < n_inputs; i++) {
        if (!inputs[i]) {
            tfc_pb_free(nd);
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "node '%s': input %d is NULL", name, i), NULL;
        }
        if (!(nd->input[i] = tfc_strdup(inputs[i]))) goto oom;
        nd->n_input++;
    }
    if (n_attrs && !(nd->attr = tfc_calloc((size_t)n_attrs, sizeof *nd->attr))) goto oom;
    for (int i = 0; i < n_attrs; i++) {
        Tensorflow__NodeDef__AttrEntry *e = tfc_malloc(sizeof *e);
        if (!e) goto oom;
        tensorflow__node_def__attr_entry__init(e);
        nd->attr[nd->n_attr++] = e;
        if (!attrs[i].name || !(e->key = tfc_strdup(attrs[i].name))) {
            e->key = (char *)protobuf_c_empty_string;
            if (!attrs[i].name) {
                tfc_pb_free(nd);
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "node '%s': attr %d has no name", name, i), NULL;
            }
            goto oom;
        }
        if (!(e->value = tfc_pb_attr_to_proto(&attrs[i], st))) {
            char pre[160];
            snprintf(pre, sizeof pre, "node '%s': ", name);
            tfc_pb_status_prefix(st, pre);
            tfc_pb_free(nd);
            return NULL;
        }
    }
    return nd;
oom:
    tfc_pb_free(nd);
    return tfc_status_oom(st, "NodeDef", sizeof *nd), NULL;
}

bool tfc_graphdef_add_node(tfc_graphdef *g, int fn, const char *name, const char *op, const char *const *inputs,
                           int n_inputs, const tfc_attr *attrs, int n_attrs, tfc_status *st) {
    if (!g || !name || !op || n_inputs < 0 || n_attrs < 0 || (n_inputs && !inputs) || (n_attrs && !attrs))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_graphdef_add_node: missing name, op, inputs or attrs");
    if (fn != TFC_GRAPHDEF_TOP && (fn < 0 || (size_t)fn >= g->n_fns))
        return tfc_status_set(st, TFC_OUT_OF_RANGE, "tfc_graphdef_add_node: no function %d", fn);
    Tensorflow__NodeDef *nd = new_node(name, op, inputs, n_inputs, attrs, n_attrs, st);
    if (!nd) return false;
    Tensorflow__FunctionDef *f = fn == TFC_GRAPHDEF_TOP ? NULL : g->pb->library->function[fn];
    void ***arr = f ? (void ***)&f->node_def : (void ***)&g->pb->node;
    size_t *n = f ? &f->n_node_def : &g->pb->n_node;
    if (!push(arr, n, nd)) {
        tfc_pb_free(nd);
        return tfc_status_oom(st, "GraphDef", *n * sizeof(void *));
    }
    return tfc_gd_bind(g, st);
}

static Tensorflow__OpDef__ArgDef *new_arg(const tfc_graphdef_arg *a) {
    Tensorflow__OpDef__ArgDef *d = tfc_malloc(sizeof *d);
    if (!d) return NULL;
    tensorflow__op_def__arg_def__init(d);
    d->type = (Tensorflow__DataType)a->type;
    if (!(d->name = tfc_strdup(a->name ? a->name : ""))) {
        d->name = (char *)protobuf_c_empty_string;
        tfc_pb_free(d);
        return NULL;
    }
    return d;
}

int tfc_graphdef_add_function(tfc_graphdef *g, const char *name, const tfc_graphdef_arg *inputs, int n_in,
                              const tfc_graphdef_arg *outputs, const char *const *rets, int n_out, tfc_status *st) {
    if (!g || !name || n_in < 0 || n_out < 0 || (n_in && !inputs) || (n_out && (!outputs || !rets)))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_graphdef_add_function: missing name, args or rets"), -1;
    for (int i = 0; i < n_out; i++)
        if (!rets[i] || !outputs[i].name)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "function '%s': output %d has no name or ret", name, i), -1;
    Tensorflow__FunctionDef *f = tfc_malloc(sizeof *f);
    Tensorflow__OpDef *sig = tfc_malloc(sizeof *sig);
    if (!f || !sig) {
        tfc_free(f);
        tfc_free(sig);
        return tfc_status_oom(st, "FunctionDef", sizeof *f), -1;
    }
    tensorflow__function_def__init(f);
    tensorflow__op_def__init(sig);
    f->signature = sig;
    bool ok = (sig->name = tfc_strdup(name)) != NULL;
    if (!ok) sig->name = (char *)protobuf_c_empty_string;
    for (int i = 0; i < n_in && ok; i++) {
        Tensorflow__OpDef__ArgDef *a = new_arg(&inputs[i]);
        ok = a && push((void ***)&sig->input_arg, &sig->n_input_arg, a);
        if (a && !ok) tfc_pb_free(a);
    }
    for (int i = 0; i < n_out && ok; i++) {
        Tensorflow__OpDef__ArgDef *a = new_arg(&outputs[i]);
        ok = a && push((void ***)&sig->output_arg, &sig->n_output_arg, a);
        if (a && !ok) tfc_pb_free(a);
        Tensorflow__FunctionDef__RetEntry *r = ok ? tfc_malloc(sizeof *r) : NULL;
        if (r) tensorflow__function_def__ret_entry__init(r);
        ok = r && (r->key = tfc_strdup(outputs[i].name)) && (r->value = tfc_strdup(rets[i]));
        if (r && !ok) {
            if (!r->key) r->key = (char *)protobuf_c_empty_string;
            if (!r->value) r->value = (char *)protobuf_c_empty_string;
            tfc_pb_free(r);
        } else if (ok && !push((void ***)&f->ret, &f->n_ret, r)) {
            tfc_pb_free(r);
            ok = false;
        }
    }
    Tensorflow__FunctionDefLibrary *lib = g->pb->library;
    if (ok && !lib) {
        if ((lib = tfc_malloc(sizeof *lib))) {
            tensorflow__function_def_library__init(lib);
            g->pb->library = lib;
        }
        ok = lib != NULL;
    }
    if (!ok || !push((void ***)&lib->function, &lib->n_function, f)) {
        tfc_pb_free(f);
        return tfc_status_oom(st, "FunctionDef", sizeof *f), -1;
    }
    if (!tfc_gd_bind(g, st)) return -1;
    return (int)lib->n_function - 1;
}

bool tfc_graphdef_validate(tfc_graphdef *g, const tfc_graphdef_opts *opts, tfc_status *st) {
    if (!g) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_graphdef_validate: no graph");
    if (opts) {
        g->opts = *opts;
        if (!g->opts.max_bytes) g->opts.max_bytes = (size_t)INT32_MAX;
        if (!g->opts.max_tensor_bytes) g->opts.max_tensor_bytes = (size_t)INT32_MAX;
    }
    return tfc_gd_bind(g, st) && tfc_gd_validate(g, st);
}

bool tfc_graphdef_serialize(const tfc_graphdef *g, void **data, size_t *size, tfc_status *st) {
    if (!g || !data || !size) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_graphdef_serialize: missing argument");
    uint8_t *buf;
    if (!tfc_pb_pack(&g->pb->base, &buf, size, "GraphDef", st)) return false;
    *data = buf;
    return true;
}

bool tfc_graphdef_write(const tfc_graphdef *g, const char *path, tfc_status *st) {
    void *data;
    size_t size;
    if (!path) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "tfc_graphdef_write: no path");
    if (!tfc_graphdef_serialize(g, &data, &size, st)) return false;
    bool ok = tfc_file_write_atomic(path, data, size, st);
    tfc_free(data);
    return ok;
}
