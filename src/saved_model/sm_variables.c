/* Restoring a SavedModel's variables straight from variables/ (instead of running its restore function): each
 * VarHandleOp's shared_name is a SavedVariable's name; the SavedObjectGraph and the checkpoint's
 * TrackableObjectGraph are walked together from the root by local names, and the matching checkpoint object's
 * VARIABLE_VALUE attribute names the bundle key (specs/savedmodel.md §8). Without an object graph the key is the
 * variable's name (name-based checkpoints). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/graphdef_internal.h"
#include "proto/trackable_object_graph.pb-c.h"
#include "saved_model/bundle.h"
#include "saved_model/sm_internal.h"
#include "tfc/tstring.h"

typedef struct {
    const char *file;                     /* the bundle prefix, for messages */
    const Tensorflow__SavedObjectGraph *og;
    Tensorflow__TrackableObjectGraph *tg; /* NULL: name-based keys */
    int32_t *to_ckpt;                     /* SavedObject id -> TrackableObject id (-1: none) */
    bool *captured;                       /* SavedObject id -> bound to a VarHandleOp by a saved function's call */
} binder;

/* Pairs the two graphs' nodes breadth-first from the roots by equal local names. */
static bool pair_nodes(binder *b, tfc_status *st) {
    const size_t n = b->og->n_nodes, nt = b->tg->n_nodes;
    int32_t *queue = tfc_malloc((n + 1) * sizeof *queue);
    if (!(b->to_ckpt = tfc_malloc((n + 1) * sizeof *b->to_ckpt)) || !queue) {
        tfc_free(queue);
        return tfc_status_oom(st, "SavedModel variables", n * 8);
    }
    for (size_t i = 0; i < n; i++) b->to_ckpt[i] = -1;
    size_t head = 0, tail = 0;
    if (n && nt) b->to_ckpt[0] = 0, queue[tail++] = 0;
    while (head < tail) {
        const int32_t s = queue[head++];
        const Tensorflow__SavedObject *so = b->og->nodes[s];
        const Tensorflow__TrackableObjectGraph__TrackableObject *to = b->tg->nodes[b->to_ckpt[s]];
        for (size_t c = 0; c < so->n_children; c++) {
            const int32_t sc = so->children[c]->node_id; /* in range: checked by tfc_sm_read */
            if (b->to_ckpt[sc] >= 0) continue;
            for (size_t k = 0; k < to->n_children; k++) {
                const int32_t tc = to->children[k]->node_id;
                if (strcmp(to->children[k]->local_name, so->children[c]->local_name)) continue;
                if (tc < 0 || (size_t)tc >= nt) {
                    tfc_free(queue);
                    return tfc_status_set(st, TFC_DATA_LOSS, "%s: %s: nodes[%d].children[%zu].node_id %d out of range "
                                          "[0, %zu)", b->file, TFC_BUNDLE_OBJECT_GRAPH_KEY, b->to_ckpt[s], k, tc, nt);
                }
                b->to_ckpt[sc] = tc;
                queue[tail++] = sc;
                break;
            }
        }
    }
    tfc_free(queue);
    return true;
}

/* The SavedObject each VarHandleOp stands for: a top-level call of a saved concrete function passes captured
 * variables as its last inputs, in the order of that function's bound_inputs (object ids). -1: not found. */
static bool bind_handles(const tfc_graphdef *gd, const Tensorflow__SavedObjectGraph *og, int32_t *obj, tfc_status *st) {
    for (size_t i = 0; i < gd->top.n_nodes; i++) obj[i] = -1;
    for (size_t i = 0; i < gd->top.n_nodes; i++) {
        const Tensorflow__NodeDef *nd = gd->top.nodes[i];
        const Tensorflow__AttrValue *f = tfc_gd_node_attr(nd, "f");
        if (!f || f->value_case != TENSORFLOW__ATTR_VALUE__VALUE_FUNC || !f->func) continue;
        const Tensorflow__SavedConcreteFunction *cf = NULL;
        for (size_t c = 0; c < og->n_concrete_functions && !cf; c++)
            if (!strcmp(og->concrete_functions[c]->key, f->func->name)) cf = og->concrete_functions[c]->value;
        if (!cf) continue;
        const size_t n_data = nd->n_input - (size_t)gd->top.n_control[i];
        if (cf->n_bound_inputs > n_data) continue;
        for (size_t k = 0; k < cf->n_bound_inputs; k++) {
            const char *in = nd->input[n_data - cf->n_bound_inputs + k];
            char name[1024];
            snprintf(name, sizeof name, "%.*s", (int)strcspn(in, ":"), in);
            int64_t p = tfc_name_map_get(&gd->top.names, name);
            if (p >= 0 && !strcmp(gd->top.nodes[p]->op, "VarHandleOp")) obj[p] = cf->bound_inputs[k];
        }
    }
    (void)st;
    return true;
}

/* The bundle key of the variable of VarHandleOp node i (shared_name `name`), and whether it is trainable. */
static const char *key_of(const binder *b, const int32_t *obj, size_t i, const char *name, bool *trainable) {
    *trainable = true;
    if (!b->og || !b->tg) return name;
    int32_t so_id = obj[i];
    for (size_t k = 0; so_id < 0 && k < b->og->n_nodes; k++) /* not captured by a saved function: by name */
        if (b->og->nodes[k]->kind_case == TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE && !b->captured[k] &&
            !strcmp(b->og->nodes[k]->variable->name, name))
            so_id = (int32_t)k;
    if (so_id < 0 || b->og->nodes[so_id]->kind_case != TENSORFLOW__SAVED_OBJECT__KIND_VARIABLE) return NULL;
    *trainable = b->og->nodes[so_id]->variable->trainable;
    if (b->to_ckpt[so_id] < 0) return NULL;
    const Tensorflow__TrackableObjectGraph__TrackableObject *to = b->tg->nodes[b->to_ckpt[so_id]];
    for (size_t a = 0; a < to->n_attributes; a++)
        if (!strcmp(to->attributes[a]->name, "VARIABLE_VALUE")) return to->attributes[a]->checkpoint_key;
    return NULL;
}

/* The node an input string names ("^" and ":k" dropped), or NULL; *k gets the output index. */
static const Tensorflow__NodeDef *input_node(const tfc_graphdef *gd, const char *in, int *k) {
    char name[1024];
    const size_t n = strcspn(in + (in[0] == '^'), ":");
    snprintf(name, sizeof name, "%.*s", (int)n, in + (in[0] == '^'));
    const char *c = strchr(in, ':');
    *k = c ? atoi(c + 1) : 0;
    int64_t p = tfc_name_map_get(&gd->top.names, name);
    return p >= 0 ? gd->top.nodes[p] : NULL;
}

/* TensorFlow 1 (a name-based checkpoint restored by the SaverDef's restore op): the bundle key the restore op
 * assigns to variable node `var` — an Assign / AssignVariableOp of it whose value is output k of a RestoreV2
 * (through Identity nodes) reads tensor_names[k]. NULL when the saver does not restore this variable. */
static const char *saver_key(const tfc_graphdef *gd, const char *var) {
    for (size_t i = 0; i < gd->top.n_nodes; i++) {
        const Tensorflow__NodeDef *nd = gd->top.nodes[i];
        if ((strcmp(nd->op, "Assign") && strcmp(nd->op, "AssignVariableOp")) || nd->n_input < 2) continue;
        int k;
        const Tensorflow__NodeDef *v = input_node(gd, nd->input[0], &k), *src = input_node(gd, nd->input[1], &k);
        if (!v || strcmp(v->name, var)) continue;
        for (int hop = 0; src && !strcmp(src->op, "Identity") && src->n_input && hop < 8; hop++)
            src = input_node(gd, src->input[0], &k);
        if (!src || strcmp(src->op, "RestoreV2") || src->n_input < 2) continue;
        int kn;
        const Tensorflow__NodeDef *names = input_node(gd, src->input[1], &kn);
        const Tensorflow__AttrValue *val = names && !strcmp(names->op, "Const") ? tfc_gd_node_attr(names, "value") : NULL;
        if (!val || val->value_case != TENSORFLOW__ATTR_VALUE__VALUE_TENSOR || !val->tensor || k < 0 ||
            (size_t)k >= val->tensor->n_string_val)
            continue;
        static _Thread_local char key[1024];
        snprintf(key, sizeof key, "%.*s", (int)val->tensor->string_val[k].len, (const char *)val->tensor->string_val[k].data);
        return key;
    }
    return NULL;
}

static bool read_object_graph(binder *b, tfc_bundle_reader *r, tfc_status *st) {
    if (!tfc_bundle_find(r, TFC_BUNDLE_OBJECT_GRAPH_KEY)) return true; /* a name-based checkpoint */
    tfc_tensor *t = tfc_bundle_read(r, TFC_BUNDLE_OBJECT_GRAPH_KEY, st);
    if (!t) return false;
    if (tfc_tensor_dtype(t) != TFC_STRING || tfc_tensor_num_elements(t) != 1) {
        tfc_tensor_unref(t);
        return tfc_status_set(st, TFC_DATA_LOSS, "%s: %s is not a string scalar", b->file, TFC_BUNDLE_OBJECT_GRAPH_KEY);
    }
    const tfc_tstring *s = (const tfc_tstring *)tfc_tensor_data(t);
    char what[600];
    snprintf(what, sizeof what, "%.500s: %s: TrackableObjectGraph", b->file, TFC_BUNDLE_OBJECT_GRAPH_KEY);
    b->tg = (Tensorflow__TrackableObjectGraph *)tfc_pb_unpack(&tensorflow__trackable_object_graph__descriptor,
                                                              (const uint8_t *)tfc_tstring_data(s), tfc_tstring_size(s),
                                                              INT32_MAX, what, st);
    tfc_tensor_unref(t);
    if (!b->tg) return false;
    return pair_nodes(b, st);
}

/* Checks a restored value against its VarHandleOp's dtype and (when fully known) shape attrs. */
static bool check_value(const Tensorflow__NodeDef *nd, const char *key, const tfc_tensor *t, const char *file,
                        tfc_status *st) {
    const Tensorflow__AttrValue *dt = tfc_gd_node_attr(nd, "dtype"), *sh = tfc_gd_node_attr(nd, "shape");
    const tfc_shape *ts = tfc_tensor_shape(t);
    if (dt && (int)tfc_tensor_dtype(t) != (int)dt->type)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: '%s' has dtype %s but variable '%s' is %s", file, key,
                              tfc_dtype_name(tfc_tensor_dtype(t)), nd->name, tfc_dtype_name((tfc_dtype)dt->type));
    tfc_shape s;
    if (sh && sh->value_case == TENSORFLOW__ATTR_VALUE__VALUE_SHAPE &&
        tfc_pb_shape_from_proto(sh->shape, &s, nd->name, st) && s.rank >= 0) {
        bool fits = s.rank == ts->rank;
        for (int d = 0; fits && d < s.rank; d++) fits = s.dims[d] < 0 || s.dims[d] == ts->dims[d];
        char a[TFC_SHAPE_STR], c[TFC_SHAPE_STR];
        if (!fits)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: '%s' has shape %s but variable '%s' is %s", file, key,
                                  tfc_shape_str(ts, a, sizeof a), nd->name, tfc_shape_str(&s, c, sizeof c));
    }
    return st->code == TFC_OK;
}

bool tfc_sm_restore_variables(tfc_saved_model *m, tfc_status *st) {
    if (!m->n_vars) return true;
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s/variables/variables", m->dir);
    binder b = {.file = prefix, .og = m->mg->object_graph_def};
    tfc_bundle_reader *r = tfc_bundle_open(prefix, st);
    const tfc_graphdef *gd = m->gd;
    int32_t *obj = tfc_malloc((gd->top.n_nodes + 1) * sizeof *obj);
    bool ok = r && (!b.og || read_object_graph(&b, r, st));
    if (ok && !obj) ok = tfc_status_oom(st, "SavedModel variables", gd->top.n_nodes * 4);
    ok = ok && (!b.og || bind_handles(gd, b.og, obj, st));
    if (ok && b.og && !(b.captured = tfc_calloc(b.og->n_nodes + 1, sizeof *b.captured)))
        ok = tfc_status_oom(st, "SavedModel variables", b.og->n_nodes);
    for (size_t i = 0; ok && b.og && i < gd->top.n_nodes; i++) /* ids in range: bound_inputs checked by tfc_sm_read */
        if (obj[i] >= 0 && (size_t)obj[i] < b.og->n_nodes) b.captured[obj[i]] = true;
    for (size_t i = 0, v = 0; ok && i < gd->top.n_nodes; i++) {
        const Tensorflow__NodeDef *nd = gd->top.nodes[i];
        if (!tfc_sm_is_variable_op(nd->op)) continue;
        const Tensorflow__AttrValue *sn = tfc_gd_node_attr(nd, "shared_name");
        char name[1024];
        snprintf(name, sizeof name, "%.*s", sn && sn->value_case == TENSORFLOW__ATTR_VALUE__VALUE_S ? (int)sn->s.len : 0,
                 sn && sn->s.data ? (const char *)sn->s.data : "");
        if (!name[0]) snprintf(name, sizeof name, "%s", nd->name);
        bool trainable = true;
        const char *key = b.og || !m->mg->saver_def ? key_of(&b, obj, i, name, &trainable) : saver_key(gd, nd->name);
        if (!key) { /* not reached by any saved function (an asset path, a table): left out, as not restorable */
            v++;
            continue;
        }
        tfc_tensor *t = tfc_bundle_read(r, key, st);
        ok = t && check_value(nd, key, t, prefix, st) && (m->vars[v] = tfc_variable_new(m->ctx, t, trainable, name, st));
        if (!t && st->code == TFC_NOT_FOUND)
            tfc_status_set(st, TFC_NOT_FOUND, "%s: variable '%s': key '%s' not found in checkpoint", prefix, name, key);
        tfc_tensor_unref(t);
        v++;
    }
    tfc_free(obj);
    tfc_pb_free(b.tg);
    tfc_free(b.to_ckpt);
    tfc_free(b.captured);
    tfc_bundle_close(r);
    return ok;
}
