/* tf.keras.models.model_from_config / model_from_json: rebuilds a Sequential or Functional model from Keras's
 * model JSON (Keras 2 and Keras 3 dialects, see specs/keras_formats.md §1): layers through the layer registry,
 * Functional graphs by replaying each layer's inbound nodes on Keras tensors. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "keras/keras_internal.h"

static bool is_model_class(const char *c) {
    return c && (!strcmp(c, "Sequential") || !strcmp(c, "Functional") || !strcmp(c, "Model"));
}

static const cJSON *item(const cJSON *o, const char *key) { return cJSON_GetObjectItemCaseSensitive(o, key); }

static const char *str_item(const cJSON *o, const char *key) {
    const cJSON *v = item(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

static tfc_model *from_json(tfc_ctx *ctx, const cJSON *root, tfc_status *st);

/* A layer (or nested model, as a layer) from one {"class_name", "config"} entry. Floating on success. */
static tfc_layer *entry_layer(tfc_ctx *ctx, const cJSON *entry, tfc_model **nested, tfc_status *st) {
    *nested = NULL;
    const char *cls = str_item(entry, "class_name");
    const cJSON *cfg = item(entry, "config");
    if (!cls) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "model config: a layer entry has no \"class_name\"");
        return NULL;
    }
    if (is_model_class(cls)) {
        if (!(*nested = from_json(ctx, entry, st))) return NULL;
        return tfc_model_as_layer(*nested);
    }
    if (!cJSON_IsObject(cfg)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "model config: layer entry of class %s has no \"config\" object", cls);
        return NULL;
    }
    return tfc_layer_from_config_json(cls, cfg, st);
}

/* The layers list of a model config: {"layers": [...]} or, in Keras 2.0-era and tfjs files, a bare list. */
static const cJSON *layers_of(const cJSON *cfg) { return cJSON_IsArray(cfg) ? cfg : item(cfg, "layers"); }

/* ---- Sequential ---------------------------------------------------------------------------------------- */

static tfc_model *sequential_from(tfc_ctx *ctx, const cJSON *cfg, tfc_status *st) {
    const cJSON *layers = layers_of(cfg);
    if (!cJSON_IsArray(layers)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Sequential config: \"layers\" must be a list");
        return NULL;
    }
    const char *name = cJSON_IsObject(cfg) ? str_item(cfg, "name") : NULL;
    tfc_model *m = tfc_sequential_named(ctx, NULL, name);
    if (!m) {
        tfc_status_oom(st, "Sequential", 0);
        return NULL;
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, layers) {
        tfc_model *nested;
        tfc_layer *l = entry_layer(ctx, e, &nested, st);
        /* A floating layer tfc_model_add rejects is released by it; a nested model is shared (the outer model
         * holds its own reference), so the reference this function created is dropped either way. */
        bool ok = l && tfc_model_add(m, l, st);
        tfc_model_free(nested);
        if (!ok) {
            tfc_model_free(m);
            return NULL;
        }
    }
    /* Keras 3 records the build shape of a Sequential without an InputLayer. */
    const cJSON *bs = cJSON_IsObject(cfg) ? item(cfg, "build_input_shape") : NULL;
    if (cJSON_IsArray(bs) && !tfc_layer_built(tfc_model_as_layer(m))) {
        int64_t dims[TFC_MAX_RANK];
        int n = 0;
        bool has;
        tfc_shape s;
        if (!tfc_json_get_i64_list(cfg, "build_input_shape", dims, TFC_MAX_RANK, &n, &has, st) ||
            !tfc_shape_make(&s, dims, n, st) || !tfc_model_build(m, &s, st)) {
            tfc_model_free(m);
            return NULL;
        }
    }
    tfc_status_clear(st);
    return m;
}

/* ---- Functional ---------------------------------------------------------------------------------------- */

typedef struct {
    const char *name;         /* borrowed from the config */
    const cJSON *entry;
    tfc_layer *layer;         /* floating until the model takes it */
    tfc_model *nested;        /* when the entry is a model */
    bool is_input;
    const cJSON *nodes;       /* inbound_nodes */
    int n_nodes, done;        /* nodes replayed so far (in order) */
    int first_node;           /* config index of the first node (1 for nested models with inputs, Keras 2) */
    tfc_ktensor **outs;       /* first output of each replayed node */
} fnode;

typedef struct {
    fnode *v;
    int n;
} graph;

static fnode *find(graph *g, const char *name) {
    for (int i = 0; i < g->n; i++)
        if (g->v[i].name && !strcmp(g->v[i].name, name)) return &g->v[i];
    return NULL;
}

/* A Keras tensor reference: Keras 2 [name, node, tensor(, kwargs)], Keras 3 {"class_name": "__keras_tensor__",
 * "config": {"keras_history": [name, node, tensor]}}. Returns false when it is none of those. */
static bool parse_ref(const cJSON *r, const char **name, int *node, int *tensor) {
    if (cJSON_IsObject(r)) {
        const cJSON *c = item(r, "config");
        r = c ? item(c, "keras_history") : NULL;
    }
    if (!cJSON_IsArray(r) || cJSON_GetArraySize(r) < 3) return false;
    const cJSON *a = cJSON_GetArrayItem(r, 0), *b = cJSON_GetArrayItem(r, 1), *c = cJSON_GetArrayItem(r, 2);
    if (!cJSON_IsString(a) || !cJSON_IsNumber(b) || !cJSON_IsNumber(c)) return false;
    /* indices from the file: a value outside int (1e78, NaN) is malformed, not converted (undefined in C) */
    double nd = b->valuedouble, td = c->valuedouble;
    if (!(nd >= INT_MIN && nd <= INT_MAX && td >= INT_MIN && td <= INT_MAX)) return false;
    *name = a->valuestring;
    *node = (int)nd;
    *tensor = (int)td;
    return true;
}

/* The tensor a reference names: NULL with *ready false when its node is not replayed yet; NULL with st set
 * when the reference is invalid. */
static tfc_ktensor *resolve(graph *g, const cJSON *r, bool *ready, tfc_status *st) {
    const char *name;
    int node, tensor;
    *ready = true;
    if (!parse_ref(r, &name, &node, &tensor)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: malformed tensor reference");
        return NULL;
    }
    fnode *f = find(g, name);
    if (!f) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: reference to unknown layer \"%s\"", name);
        return NULL;
    }
    if (f->is_input) node = 0; /* Keras: an InputLayer's tensor is always its node 0 */
    else node -= f->first_node;
    if (node < 0 || node >= (f->is_input ? 1 : f->n_nodes)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: layer \"%s\" has no node %d", name,
                       node + f->first_node);
        return NULL;
    }
    if (node >= f->done) {
        *ready = false;
        return NULL;
    }
    tfc_ktensor *sib[TFC_KERAS_MAX_IO];
    int n = tfc_ktensor_siblings(f->outs[node], sib, TFC_KERAS_MAX_IO);
    if (tensor < 0 || tensor >= n || tensor >= TFC_KERAS_MAX_IO) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: layer \"%s\" node %d has no output %d", name,
                       node, tensor);
        return NULL;
    }
    return sib[tensor];
}

/* Collects the input references of one inbound node: Keras 2 a list of refs; Keras 3 {"args": [...]} where an
 * arg is a tensor or a list of tensors (merge layers), non-tensor args skipped. */
static bool node_refs(const cJSON *node, const cJSON **refs, int *n, tfc_status *st) {
    *n = 0;
    const char *nm;
    int a, b;
    if (cJSON_IsObject(node)) {
        const cJSON *args = item(node, "args"), *arg;
        cJSON_ArrayForEach(arg, args) {
            if (parse_ref(arg, &nm, &a, &b)) {
                if (*n == TFC_KERAS_MAX_IO) goto many;
                refs[(*n)++] = arg;
            } else if (cJSON_IsArray(arg)) {
                const cJSON *x;
                cJSON_ArrayForEach(x, arg) {
                    if (!parse_ref(x, &nm, &a, &b)) continue;
                    if (*n == TFC_KERAS_MAX_IO) goto many;
                    refs[(*n)++] = x;
                }
            }
        }
        return true;
    }
    if (!cJSON_IsArray(node)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: malformed inbound node");
    /* A Keras 2 node holding a single ref ["name", 0, 0, {}] directly (some writers) */
    if (parse_ref(node, &nm, &a, &b)) {
        refs[(*n)++] = node;
        return true;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, node) {
        if (!parse_ref(x, &nm, &a, &b))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: malformed tensor reference");
        if (*n == TFC_KERAS_MAX_IO) goto many;
        refs[(*n)++] = x;
    }
    return true;
many:
    return tfc_status_set(st, TFC_UNIMPLEMENTED, "Functional config: a node with more than %d inputs",
                          TFC_KERAS_MAX_IO);
}

/* An InputLayer entry becomes a tf.keras.Input tensor (its node 0). */
static bool make_input(fnode *f, tfc_status *st) {
    const cJSON *cfg = item(f->entry, "config");
    tfc_layer_common_cfg c;
    if (!cJSON_IsObject(cfg) || !tfc_json_get_common(cfg, &c, st)) {
        if (st->code == TFC_OK) tfc_status_set(st, TFC_INVALID_ARGUMENT, "InputLayer \"%s\": no config", f->name);
        return false;
    }
    bool sparse = false, ragged = false;
    if (!tfc_json_get_bool(cfg, "sparse", &sparse, NULL, st) || !tfc_json_get_bool(cfg, "ragged", &ragged, NULL, st))
        return false;
    if (sparse || ragged)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "InputLayer \"%s\": sparse and ragged inputs are not supported",
                              f->name);
    if (c.input_rank < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "InputLayer \"%s\": the config has no batch_input_shape",
                              f->name);
    tfc_input_opts o = {.rank = c.input_rank, .batch_size = c.batch_size > 0 ? c.batch_size : 0, .dtype = c.dtype,
                        .name = c.name ? c.name : f->name};
    for (int i = 0; i < c.input_rank; i++) o.shape[i] = c.input_shape[i];
    tfc_ktensor *k = tfc_input_new(&o);
    if (!k) return tfc_status_oom(st, "Input", 0);
    f->layer = tfc_ktensor_layer(k);
    if (!(f->outs = tfc_calloc(1, sizeof *f->outs))) return tfc_status_oom(st, "Input", 0);
    f->outs[0] = k;
    f->done = 1;
    return true;
}

/* Replays node f->done of f if all its inputs exist: *progress set when it ran. */
static bool replay(graph *g, fnode *f, bool *progress, tfc_status *st) {
    const cJSON *node = cJSON_GetArrayItem(f->nodes, f->done);
    const cJSON *refs[TFC_KERAS_MAX_IO];
    int n;
    if (!node_refs(node, refs, &n, st)) return false;
    if (n == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: node %d of layer \"%s\" has no inputs",
                              f->done, f->name);
    tfc_ktensor *in[TFC_KERAS_MAX_IO];
    for (int i = 0; i < n; i++) {
        bool ready;
        if (!(in[i] = resolve(g, refs[i], &ready, st))) return ready ? false : true;
    }
    tfc_ktensor *out = tfc_layer_apply(f->layer, in, n, st);
    if (!out) return false;
    f->outs[f->done++] = out;
    *progress = true;
    return true;
}

/* Resolves input_layers / output_layers: a list of refs, or a single bare ref (Keras 3). */
static int endpoint_refs(graph *g, const cJSON *v, tfc_ktensor **out, int max, const char *what, tfc_status *st) {
    const char *nm;
    int a, b, n = 0;
    if (cJSON_IsObject(v) && !item(v, "config")) { /* Keras 3 dict of refs: values in key order */
        const cJSON *x;
        cJSON_ArrayForEach(x, v) {
            bool ready;
            if (n == max || !(out[n] = resolve(g, x, &ready, st))) goto bad;
            n++;
        }
        return n;
    }
    if (parse_ref(v, &nm, &a, &b) && !cJSON_IsArray(cJSON_GetArrayItem(v, 0))) {
        bool ready;
        if (!(out[0] = resolve(g, v, &ready, st))) goto bad;
        return 1;
    }
    const cJSON *x;
    cJSON_ArrayForEach(x, v) {
        bool ready;
        if (n == max || !(out[n] = resolve(g, x, &ready, st))) goto bad;
        n++;
    }
    if (n == 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: no %s", what);
        return -1;
    }
    return n;
bad:
    if (st->code == TFC_OK) {
        if (n == max) tfc_status_set(st, TFC_UNIMPLEMENTED, "Functional config: more than %d %s", max, what);
        else tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: %s references a node that is never built", what);
    }
    return -1;
}

static tfc_model *functional_from(tfc_ctx *ctx, const cJSON *cfg, tfc_status *st) {
    const cJSON *layers = layers_of(cfg);
    if (!cJSON_IsObject(cfg) || !cJSON_IsArray(layers)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: \"layers\" must be a list");
        return NULL;
    }
    graph g = {0};
    tfc_model *m = NULL;
    int n_layers = cJSON_GetArraySize(layers);
    if (n_layers > 0 && !(g.v = tfc_calloc((size_t)n_layers, sizeof *g.v))) {
        tfc_status_oom(st, "Functional config", 0);
        return NULL;
    }
    const cJSON *e;
    bool ok = true;
    cJSON_ArrayForEach(e, layers) {
        fnode *f = &g.v[g.n++];
        f->entry = e;
        const cJSON *c = item(e, "config");
        f->name = str_item(e, "name");
        if (!f->name && cJSON_IsObject(c)) f->name = str_item(c, "name");
        if (!f->name) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: layer %d has no name", g.n - 1);
            break;
        }
        if (find(&g, f->name) != f) {
            ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Functional config: two layers named \"%s\"", f->name);
            break;
        }
        const char *cls = str_item(e, "class_name");
        f->nodes = item(e, "inbound_nodes");
        f->n_nodes = cJSON_IsArray(f->nodes) ? cJSON_GetArraySize(f->nodes) : 0;
        if (cls && !strcmp(cls, "InputLayer")) {
            f->is_input = true;
            if (!(ok = make_input(f, st))) break;
            continue;
        }
        if (!(f->layer = entry_layer(ctx, e, &f->nested, st))) {
            ok = false;
            break;
        }
        /* Keras 2 leaves out the node a model built on its own inputs already has (functional.py's
         * _should_skip_first_node): the config numbers that model's nodes in this graph from 1. */
        const cJSON *n0 = cJSON_GetArrayItem(f->nodes, 0);
        if (f->nested && cJSON_IsArray(n0) && (strcmp(cls, "Sequential") != 0 || tfc_layer_built(f->layer)))
            f->first_node = 1;
        if (f->n_nodes > 0 && !(f->outs = tfc_calloc((size_t)f->n_nodes, sizeof *f->outs))) {
            ok = tfc_status_oom(st, "Functional config", 0);
            break;
        }
    }
    /* Replay nodes until none can run: a node may wait for a later node of a shared layer. */
    for (bool progress = true; ok && progress;) {
        progress = false;
        for (int i = 0; ok && i < g.n; i++) {
            fnode *f = &g.v[i];
            if (f->is_input) continue;
            int before = f->done;
            while (ok && f->done < f->n_nodes) {
                ok = replay(&g, f, &progress, st);
                if (f->done == before) break; /* waiting for an input */
                before = f->done;
            }
        }
    }
    tfc_ktensor *ins[TFC_KERAS_MAX_IO], *outs[TFC_KERAS_MAX_IO];
    int n_in = -1, n_out = -1;
    if (ok) n_in = endpoint_refs(&g, item(cfg, "input_layers"), ins, TFC_KERAS_MAX_IO, "input_layers", st);
    if (ok && n_in > 0)
        n_out = endpoint_refs(&g, item(cfg, "output_layers"), outs, TFC_KERAS_MAX_IO, "output_layers", st);
    /* tfc_model_new releases the floating layers of the graph when it fails; a reference of our own keeps
     * every layer this config created alive until it is sorted out below. */
    for (int i = 0; i < g.n; i++)
        if (g.v[i].layer && !g.v[i].nested) tfc_layer_ref(g.v[i].layer);
    if (ok && n_in > 0 && n_out > 0) m = tfc_model_new(ctx, ins, n_in, outs, n_out, str_item(cfg, "name"), st);
    for (int i = 0; i < g.n; i++) {
        tfc_layer *l = g.v[i].layer;
        if (g.v[i].nested) { /* shared with the model, which holds its own reference */
            tfc_model_free(g.v[i].nested);
            continue;
        }
        if (!l) continue;
        /* floating with only our reference left: tfc_model_new's cleanup dropped the floating one */
        bool released = l->floating && atomic_load(&l->refcount) == 1;
        bool untaken = l->floating && !released; /* outside the model's graph, or nothing was built */
        tfc_layer_unref(l);
        if (untaken) tfc_layer_unref(l);
    }
    for (int i = 0; i < g.n; i++) tfc_free(g.v[i].outs);
    tfc_free(g.v);
    if (m) tfc_status_clear(st);
    return m;
}

/* ---- entry points ---------------------------------------------------------------------------------------- */

static tfc_model *from_json(tfc_ctx *ctx, const cJSON *root, tfc_status *st) {
    /* model.to_json() adds keras_version/backend; .h5 files and tfjs wrap the model in "model_config" */
    const cJSON *wrapped = item(root, "model_config");
    if (cJSON_IsObject(wrapped)) root = wrapped;
    const char *cls = str_item(root, "class_name");
    const cJSON *cfg = item(root, "config");
    if (!cls) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "model config: no \"class_name\"");
        return NULL;
    }
    if (!strcmp(cls, "Sequential")) return sequential_from(ctx, cfg, st);
    if (!strcmp(cls, "Functional") || !strcmp(cls, "Model")) return functional_from(ctx, cfg, st);
    tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown model class: %s (expected Sequential, Functional or Model)", cls);
    return NULL;
}

tfc_model *tfc_model_from_config(tfc_ctx *ctx, const char *json, tfc_status *st) {
    if (!ctx || !json) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "model_from_config: NULL argument");
        return NULL;
    }
    cJSON *root = cJSON_Parse(json);
    if (!cJSON_IsObject(root)) {
        cJSON_Delete(root);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "model_from_config: the config is not a JSON object");
        return NULL;
    }
    tfc_model *m = from_json(ctx, root, st);
    cJSON_Delete(root);
    return m;
}
