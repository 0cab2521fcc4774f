/* GraphDef reading and inspecting: bytes -> checked protobuf-c unpack -> validated graph with indexes. */
#include <stdio.h>
#include <string.h>

#include "platform/file_io.h"
#include "proto/graphdef_internal.h"

#define DEFAULT_LIMIT ((size_t)INT32_MAX) /* protobuf's 2 GiB - 1 */

/* ---- name map ---- */

static uint64_t hash_str(const char *s) { /* FNV-1a, 64-bit */
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

bool tfc_name_map_init(tfc_name_map *m, size_t count, tfc_status *st) {
    size_t cap = 16;
    while (cap < 2 * count) {
        if (cap > SIZE_MAX / 4 / sizeof(int64_t)) return tfc_status_oom(st, "name index", SIZE_MAX);
        cap *= 2;
    }
    m->keys = tfc_calloc(cap, sizeof *m->keys);
    m->vals = tfc_malloc(cap * sizeof *m->vals);
    if (!m->keys || !m->vals) {
        tfc_name_map_clear(m);
        return tfc_status_oom(st, "name index", cap * (sizeof *m->keys + sizeof *m->vals));
    }
    m->cap = cap;
    return true;
}

void tfc_name_map_clear(tfc_name_map *m) {
    tfc_free(m->keys);
    tfc_free(m->vals);
    memset(m, 0, sizeof *m);
}

int64_t tfc_name_map_put(tfc_name_map *m, const char *key, int64_t val) {
    for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i]) {
            m->keys[i] = key;
            m->vals[i] = val;
            return -1;
        }
        if (!strcmp(m->keys[i], key)) return m->vals[i];
    }
}

int64_t tfc_name_map_get(const tfc_name_map *m, const char *key) {
    if (!m->cap) return -1;
    for (size_t i = hash_str(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->keys[i]) return -1;
        if (!strcmp(m->keys[i], key)) return m->vals[i];
    }
}

/* ---- lifetime ---- */

static void body_clear(tfc_gd_body *b) {
    tfc_name_map_clear(&b->names);
    tfc_free(b->n_outputs);
    tfc_free(b->n_control);
    tfc_free(b->order);
    memset(b, 0, sizeof *b);
}

static void unbind(tfc_graphdef *g) {
    body_clear(&g->top);
    for (size_t i = 0; i < g->n_fns; i++) body_clear(&g->fns[i]);
    tfc_free(g->fns);
    g->fns = NULL;
    g->n_fns = 0;
    tfc_name_map_clear(&g->fn_names);
    g->validated = false;
}

bool tfc_gd_bind(tfc_graphdef *g, tfc_status *st) {
    unbind(g);
    g->top.nodes = g->pb->node;
    g->top.n_nodes = g->pb->n_node;
    const Tensorflow__FunctionDefLibrary *lib = g->pb->library;
    size_t nf = lib ? lib->n_function : 0;
    if (nf && !(g->fns = tfc_calloc(nf, sizeof *g->fns))) return tfc_status_oom(st, "GraphDef", nf * sizeof *g->fns);
    g->n_fns = nf;
    for (size_t i = 0; i < nf; i++) {
        g->fns[i].nodes = lib->function[i]->node_def;
        g->fns[i].n_nodes = lib->function[i]->n_node_def;
    }
    if (!tfc_name_map_init(&g->fn_names, nf, st)) return false;
    for (size_t i = 0; i < nf; i++) /* the first of duplicate names wins; validation reports the rest */
        if (lib->function[i]->signature) tfc_name_map_put(&g->fn_names, lib->function[i]->signature->name, (int64_t)i);
    return true;
}

void tfc_graphdef_free(tfc_graphdef *g) {
    if (!g) return;
    unbind(g);
    tfc_pb_free(g->pb);
    tfc_pb_arena_free(g->arena);
    tfc_free(g);
}

static tfc_graphdef *graphdef_shell(const tfc_graphdef_opts *opts, tfc_status *st) {
    tfc_graphdef *g = tfc_calloc(1, sizeof *g);
    if (!g || !(g->arena = tfc_pb_arena_new())) {
        tfc_free(g);
        return tfc_status_oom(st, "GraphDef", sizeof *g), NULL;
    }
    if (opts) g->opts = *opts;
    if (!g->opts.max_bytes) g->opts.max_bytes = DEFAULT_LIMIT;
    if (!g->opts.max_tensor_bytes) g->opts.max_tensor_bytes = DEFAULT_LIMIT;
    return g;
}

tfc_graphdef *tfc_graphdef_parse(const void *data, size_t size, const tfc_graphdef_opts *opts, tfc_status *st) {
    tfc_registry_init();
    tfc_graphdef *g = graphdef_shell(opts, st);
    if (!g) return NULL;
    g->pb = (Tensorflow__GraphDef *)tfc_pb_unpack(&tensorflow__graph_def__descriptor, data, size, g->opts.max_bytes,
                                                   "GraphDef", st);
    if (!g->pb || !tfc_gd_pow2_arrays(g, st) || !tfc_gd_bind(g, st) || !tfc_gd_validate(g, st)) {
        tfc_graphdef_free(g);
        return NULL;
    }
    return g;
}

tfc_graphdef *tfc_gd_adopt(Tensorflow__GraphDef *pb, const tfc_graphdef_opts *opts, tfc_status *st) {
    tfc_registry_init();
    tfc_graphdef *g = graphdef_shell(opts, st);
    if (!g) {
        tfc_pb_free(pb);
        return NULL;
    }
    g->pb = pb;
    if (!tfc_gd_pow2_arrays(g, st) || !tfc_gd_bind(g, st) || !tfc_gd_validate(g, st)) {
        tfc_graphdef_free(g);
        return NULL;
    }
    return g;
}

tfc_graphdef *tfc_graphdef_read(const char *path, const tfc_graphdef_opts *opts, tfc_status *st) {
    void *buf;
    size_t size;
    if (!tfc_file_read_all(path, opts && opts->max_bytes ? opts->max_bytes : DEFAULT_LIMIT, &buf, &size, st))
        return NULL;
    tfc_graphdef *g = tfc_graphdef_parse(buf, size, opts, st);
    tfc_free(buf);
    if (!g) { /* say which file */
        char pre[200];
        snprintf(pre, sizeof pre, "%s: ", path);
        tfc_pb_status_prefix(st, pre);
    }
    return g;
}

/* ---- inspecting ---- */

static const tfc_gd_body *body_of(const tfc_graphdef *g, int fn) {
    if (!g) return NULL;
    if (fn == TFC_GRAPHDEF_TOP) return &g->top;
    return fn >= 0 && (size_t)fn < g->n_fns ? &g->fns[fn] : NULL;
}

int64_t tfc_graphdef_num_nodes(const tfc_graphdef *g, int fn) {
    const tfc_gd_body *b = body_of(g, fn);
    return b ? (int64_t)b->n_nodes : -1;
}

int tfc_graphdef_num_functions(const tfc_graphdef *g) { return g ? (int)g->n_fns : 0; }

void tfc_graphdef_versions(const tfc_graphdef *g, int *producer, int *min_consumer) {
    const Tensorflow__VersionDef *v = g && g->pb ? g->pb->versions : NULL;
    if (producer) *producer = v ? v->producer : 0;
    if (min_consumer) *min_consumer = v ? v->min_consumer : 0;
}

bool tfc_graphdef_node(const tfc_graphdef *g, int fn, int64_t i, tfc_graphdef_node_info *out) {
    const tfc_gd_body *b = body_of(g, fn);
    if (!b || i < 0 || (size_t)i >= b->n_nodes) return false;
    const Tensorflow__NodeDef *nd = b->nodes[i];
    out->name = nd->name;
    out->op = nd->op;
    out->device = nd->device;
    out->n_inputs = (int)nd->n_input;
    out->inputs = (const char *const *)nd->input;
    out->n_control_inputs = g->validated ? b->n_control[i] : 0;
    out->n_outputs = g->validated ? b->n_outputs[i] : -1;
    out->n_attrs = (int)nd->n_attr;
    return true;
}

int64_t tfc_graphdef_find_node(const tfc_graphdef *g, int fn, const char *name) {
    const tfc_gd_body *b = body_of(g, fn);
    return b && g->validated && name ? tfc_name_map_get(&b->names, name) : -1;
}

const char *tfc_graphdef_node_attr_name(const tfc_graphdef *g, int fn, int64_t i, int k) {
    const tfc_gd_body *b = body_of(g, fn);
    if (!b || i < 0 || (size_t)i >= b->n_nodes || k < 0 || (size_t)k >= b->nodes[i]->n_attr) return NULL;
    return b->nodes[i]->attr[k]->key;
}

bool tfc_graphdef_node_attr(tfc_graphdef *g, int fn, int64_t i, const char *name, tfc_attr *out, tfc_status *st) {
    const tfc_gd_body *b = body_of(g, fn);
    if (!b || i < 0 || (size_t)i >= b->n_nodes)
        return tfc_status_set(st, TFC_OUT_OF_RANGE, "GraphDef: no node %lld in %s %d", (long long)i,
                              fn == TFC_GRAPHDEF_TOP ? "graph" : "function", fn);
    const Tensorflow__NodeDef *nd = b->nodes[i];
    const Tensorflow__AttrValue *v = tfc_gd_node_attr(nd, name);
    if (!v) return tfc_status_set(st, TFC_NOT_FOUND, "node '%s' (%s) has no attr '%s'", nd->name, nd->op, name);
    char where[160];
    snprintf(where, sizeof where, "node '%s' (%s)", nd->name, nd->op);
    const char *key = NULL;
    for (size_t k = 0; k < nd->n_attr && !key; k++)
        if (!strcmp(nd->attr[k]->key, name)) key = nd->attr[k]->key;
    return tfc_pb_attr_from_proto(v, key, g->arena, g->opts.max_tensor_bytes, where, out, st);
}

bool tfc_graphdef_function(const tfc_graphdef *g, int fn, tfc_graphdef_function_info *out) {
    if (!g || fn < 0 || (size_t)fn >= g->n_fns) return false;
    const Tensorflow__FunctionDef *f = g->pb->library->function[fn];
    const Tensorflow__OpDef *s = f->signature;
    out->name = s ? s->name : "";
    out->n_inputs = s ? (int)s->n_input_arg : 0;
    out->n_outputs = s ? (int)s->n_output_arg : 0;
    out->n_nodes = (int64_t)f->n_node_def;
    return true;
}

int tfc_graphdef_find_function(const tfc_graphdef *g, const char *name) {
    return g && name ? (int)tfc_name_map_get(&g->fn_names, name) : -1;
}

bool tfc_graphdef_function_arg(const tfc_graphdef *g, int fn, bool output, int i, tfc_graphdef_arg *out,
                               const char **ret) {
    if (!g || fn < 0 || (size_t)fn >= g->n_fns || i < 0) return false;
    const Tensorflow__FunctionDef *f = g->pb->library->function[fn];
    const Tensorflow__OpDef *s = f->signature;
    if (!s || (size_t)i >= (output ? s->n_output_arg : s->n_input_arg)) return false;
    const Tensorflow__OpDef__ArgDef *a = output ? s->output_arg[i] : s->input_arg[i];
    out->name = a->name;
    out->type = tfc_pb_dtype_is_data(a->type) || (int)a->type == TFC_RESOURCE ? (tfc_dtype)a->type : TFC_INVALID_DTYPE;
    if (ret) {
        *ret = NULL;
        for (size_t k = 0; output && k < f->n_ret; k++)
            if (!strcmp(f->ret[k]->key, a->name)) *ret = f->ret[k]->value;
    }
    return true;
}

/* ---- tensors ---- */

tfc_tensor *tfc_tensor_from_proto(const void *data, size_t size, size_t max_tensor_bytes, tfc_status *st) {
    if (!max_tensor_bytes) max_tensor_bytes = DEFAULT_LIMIT;
    Tensorflow__TensorProto *p = (Tensorflow__TensorProto *)tfc_pb_unpack(&tensorflow__tensor_proto__descriptor, data,
                                                                          size, DEFAULT_LIMIT, "TensorProto", st);
    if (!p) return NULL;
    tfc_tensor *t = tfc_pb_tensor_from_proto(p, max_tensor_bytes, "TensorProto", st);
    tfc_pb_free(p);
    return t;
}

bool tfc_tensor_to_proto(const tfc_tensor *t, void **data, size_t *size, tfc_status *st) {
    Tensorflow__TensorProto *p = tfc_pb_tensor_to_proto(t, "TensorProto", st);
    if (!p) return false;
    uint8_t *buf;
    bool ok = tfc_pb_pack(&p->base, &buf, size, "TensorProto", st);
    tfc_pb_free(p);
    if (ok) *data = buf;
    return ok;
}
