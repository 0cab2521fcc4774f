/* saved_model.pb: read, unpack (bounded, checked wire bytes) and validate every field later code relies on, so a
 * tampered file fails here with the file and the field path in the message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/file_io.h"
#include "proto/proto_internal.h"
#include "saved_model/sm_internal.h"

#define MAX_TAGS 64

typedef struct {
    const char *file;
    tfc_status *st;
} vctx;

#define BAD(v, ...) (tfc_status_set((v)->st, TFC_INVALID_ARGUMENT, __VA_ARGS__), false)

static bool dtype_ok(int dt) { /* _REF types (TF1 graphs) are their base type + 100; 0 (unset) names an op */
    return dt == 0 || tfc_pb_dtype_is_data(dt >= 100 ? dt - 100 : dt) || dt == TFC_RESOURCE;
}

static bool check_tensor_info(vctx *v, const Tensorflow__TensorInfo *ti, const char *where) {
    if (!ti) return BAD(v, "%s: %s: missing TensorInfo", v->file, where);
    if (ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME && (!ti->name || !ti->name[0]))
        return BAD(v, "%s: %s.name: empty tensor name", v->file, where);
    if (ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING__NOT_SET)
        return BAD(v, "%s: %s: TensorInfo has no encoding (name, coo_sparse or composite_tensor)", v->file, where);
    if (ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME && !dtype_ok(ti->dtype)) {
        char b[32];
        return BAD(v, "%s: %s.dtype: %s is not a DataType tfc holds", v->file, where, tfc_pb_dtype_str(ti->dtype, b, sizeof b));
    }
    tfc_shape s;
    char w[800];
    snprintf(w, sizeof w, "%.200s: %.500s.tensor_shape", v->file, where);
    return !ti->tensor_shape || tfc_pb_shape_from_proto(ti->tensor_shape, &s, w, v->st);
}

static bool check_signature(vctx *v, const Tensorflow__MetaGraphDef__SignatureDefEntry *e, const char *mgw) {
    char w[400];
    if (!e->key || !e->value) return BAD(v, "%s: %s.signature_def: an entry without a key or value", v->file, mgw);
    const Tensorflow__SignatureDef *sd = e->value;
    for (size_t i = 0; i < sd->n_inputs; i++) {
        snprintf(w, sizeof w, "%s.signature_def['%s'].inputs['%s']", mgw, e->key, sd->inputs[i]->key);
        if (!check_tensor_info(v, sd->inputs[i]->value, w)) return false;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sd->inputs[j]->key, sd->inputs[i]->key)) return BAD(v, "%s: %s: duplicate key", v->file, w);
    }
    for (size_t i = 0; i < sd->n_outputs; i++) {
        snprintf(w, sizeof w, "%s.signature_def['%s'].outputs['%s']", mgw, e->key, sd->outputs[i]->key);
        if (!check_tensor_info(v, sd->outputs[i]->value, w)) return false;
        for (size_t j = 0; j < i; j++)
            if (!strcmp(sd->outputs[j]->key, sd->outputs[i]->key)) return BAD(v, "%s: %s: duplicate key", v->file, w);
    }
    return true;
}

static bool check_ref(vctx *v, int32_t id, size_t n, const char *w, size_t i, size_t k) {
    if (id < 0 || (size_t)id >= n)
        return BAD(v, "%s: %s.nodes[%zu] reference %zu: node_id %d out of range [0, %zu)", v->file, w, i, k, id, n);
    return true;
}

static bool check_object_graph(vctx *v, const Tensorflow__SavedObjectGraph *og, const char *mgw) {
    char w[300];
    snprintf(w, sizeof w, "%s.object_graph_def", mgw);
    const size_t n = og->n_nodes;
    for (size_t i = 0; i < n; i++) {
        const Tensorflow__SavedObject *o = og->nodes[i];
        for (size_t k = 0; k < o->n_children; k++)
            if (!check_ref(v, o->children[k]->node_id, n, w, i, k)) return false;
        for (size_t k = 0; k < o->n_dependencies; k++)
            if (!check_ref(v, o->dependencies[k]->node_id, n, w, i, k)) return false;
        if (o->kind_case == TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE) {
            const Tensorflow__SavedVariable *sv = o->variable;
            tfc_shape s;
            char sw[600];
            snprintf(sw, sizeof sw, "%.200s: %.300s.nodes[%zu].variable.shape", v->file, w, i);
            if (!tfc_pb_dtype_is_data(sv->dtype)) {
                char b[32];
                return BAD(v, "%s: %s.nodes[%zu].variable.dtype: %s is not a DataType tfc holds", v->file, w, i,
                           tfc_pb_dtype_str(sv->dtype, b, sizeof b));
            }
            if (sv->shape && !tfc_pb_shape_from_proto(sv->shape, &s, sw, v->st)) return false;
        }
    }
    for (size_t c = 0; c < og->n_concrete_functions; c++) {
        const Tensorflow__SavedConcreteFunction *f = og->concrete_functions[c]->value;
        for (size_t k = 0; f && k < f->n_bound_inputs; k++)
            if (f->bound_inputs[k] < 0 || (size_t)f->bound_inputs[k] >= n)
                return BAD(v, "%s: %s.concrete_functions['%s'].bound_inputs[%zu]: node %d out of range [0, %zu)", v->file,
                           w, og->concrete_functions[c]->key, k, f->bound_inputs[k], n);
    }
    return true;
}

static bool check_meta_graph(vctx *v, const Tensorflow__MetaGraphDef *mg, size_t m) {
    char w[64];
    snprintf(w, sizeof w, "meta_graphs[%zu]", m);
    const Tensorflow__MetaGraphDef__MetaInfoDef *mi = mg->meta_info_def;
    if (!mi || !mi->n_tags) return BAD(v, "%s: %s.meta_info_def.tags: a MetaGraphDef without tags", v->file, w);
    if (mi->n_tags > MAX_TAGS) return BAD(v, "%s: %s.meta_info_def.tags: %zu tags (at most %d)", v->file, w, mi->n_tags, MAX_TAGS);
    if (!mg->graph_def) return BAD(v, "%s: %s.graph_def: missing", v->file, w);
    for (size_t i = 0; i < mg->n_signature_def; i++)
        if (!check_signature(v, mg->signature_def[i], w)) return false;
    for (size_t i = 0; i < mg->n_asset_file_def; i++) {
        const char *f = mg->asset_file_def[i]->filename;
        if (!f || !f[0] || strchr(f, '/') || !strcmp(f, "..") || !strcmp(f, "."))
            return BAD(v, "%s: %s.asset_file_def[%zu].filename: '%s' is not a file name inside assets/", v->file, w, i,
                       f ? f : "");
    }
    return !mg->object_graph_def || check_object_graph(v, mg->object_graph_def, w);
}

static bool same_tags(const Tensorflow__MetaGraphDef *mg, const char *const *tags, size_t n) {
    const Tensorflow__MetaGraphDef__MetaInfoDef *mi = mg->meta_info_def;
    for (size_t i = 0; i < mi->n_tags; i++) {
        bool in = false;
        for (size_t k = 0; k < n && !in; k++) in = !strcmp(mi->tags[i], tags[k]);
        if (!in) return false;
    }
    for (size_t k = 0; k < n; k++) {
        bool in = false;
        for (size_t i = 0; i < mi->n_tags && !in; i++) in = !strcmp(mi->tags[i], tags[k]);
        if (!in) return false;
    }
    return true;
}

Tensorflow__SavedModel *tfc_sm_parse(const void *data, size_t size, const char *path, tfc_status *st) {
    Tensorflow__SavedModel *sm = (Tensorflow__SavedModel *)tfc_pb_unpack(&tensorflow__saved_model__descriptor, data, size,
                                                                         INT32_MAX, "SavedModel", st);
    if (!sm) {
        char pre[4200];
        snprintf(pre, sizeof pre, "%s: ", path);
        tfc_pb_status_prefix(st, pre);
        return NULL;
    }
    vctx v = {path, st};
    bool ok = true;
    if (!sm->n_meta_graphs) ok = BAD(&v, "%s: meta_graphs: the SavedModel holds no MetaGraphDef", path);
    for (size_t m = 0; m < sm->n_meta_graphs && ok; m++) {
        ok = check_meta_graph(&v, sm->meta_graphs[m], m);
        for (size_t k = 0; k < m && ok; k++)
            if (same_tags(sm->meta_graphs[k], (const char *const *)sm->meta_graphs[m]->meta_info_def->tags,
                          sm->meta_graphs[m]->meta_info_def->n_tags))
                ok = BAD(&v, "%s: meta_graphs[%zu].meta_info_def.tags: the same tag set as meta_graphs[%zu]", path, m, k);
    }
    if (!ok) {
        tfc_pb_free(sm);
        return NULL;
    }
    return sm;
}

Tensorflow__SavedModel *tfc_sm_read(const char *dir, tfc_status *st) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/saved_model.pb", dir) >= sizeof path)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "SavedModel directory name too long: %.200s...", dir), NULL;
    void *buf;
    size_t size;
    if (!tfc_file_read_all(path, INT32_MAX, &buf, &size, st)) {
        if (st->code == TFC_NOT_FOUND)
            tfc_status_set(st, TFC_NOT_FOUND, "Could not find SavedModel .pb or .pbtxt at supplied export directory "
                           "path: %s (no %s)", dir, path);
        return NULL;
    }
    Tensorflow__SavedModel *sm = tfc_sm_parse(buf, size, path, st);
    tfc_free(buf);
    return sm;
}

Tensorflow__MetaGraphDef *tfc_sm_find_meta_graph(Tensorflow__SavedModel *sm, const char *dir, const char *const *tags,
                                                 int n_tags, tfc_status *st) {
    static const char *const serve[] = {TFC_SAVED_MODEL_SERVE};
    if (!tags || n_tags <= 0) tags = serve, n_tags = 1;
    for (size_t m = 0; m < sm->n_meta_graphs; m++)
        if (same_tags(sm->meta_graphs[m], tags, (size_t)n_tags)) return sm->meta_graphs[m];
    char want[512] = "", have[1024] = "";
    size_t w = 0, h = 0;
    for (int k = 0; k < n_tags && w < sizeof want; k++)
        w += (size_t)snprintf(want + w, sizeof want - w, "%s%s", k ? ", " : "", tags[k]);
    for (size_t m = 0; m < sm->n_meta_graphs && h < sizeof have; m++)
        for (size_t k = 0; k < sm->meta_graphs[m]->meta_info_def->n_tags && h < sizeof have; k++)
            h += (size_t)snprintf(have + h, sizeof have - h, "%s%s%s", k ? ", " : m ? "], [" : "[",
                                  sm->meta_graphs[m]->meta_info_def->tags[k],
                                  k + 1 == sm->meta_graphs[m]->meta_info_def->n_tags && m + 1 == sm->n_meta_graphs ? "]" : "");
    return tfc_status_set(st, TFC_NOT_FOUND, "MetaGraphDef associated with tags {%s} could not be found in SavedModel "
                          "%s, with available tags '%s'", want, dir, have), NULL;
}

Tensorflow__SignatureDef *tfc_sm_signature_def(const Tensorflow__MetaGraphDef *mg, const char *key) {
    for (size_t i = 0; i < mg->n_signature_def; i++)
        if (!strcmp(mg->signature_def[i]->key, key)) return mg->signature_def[i]->value;
    return NULL;
}

static int cmp_entry(const void *a, const void *b) {
    return strcmp((*(Tensorflow__SignatureDef__InputsEntry *const *)a)->key,
                  (*(Tensorflow__SignatureDef__InputsEntry *const *)b)->key);
}

void tfc_sm_sort_tensor_infos(Tensorflow__SignatureDef__InputsEntry **e, size_t n) {
    if (n > 1) qsort(e, n, sizeof *e, cmp_entry);
}
