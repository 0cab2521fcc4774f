/* tf.train.Checkpoint: write/save every variable reachable from the root with the object graph, and restore by
 * walking the saved TrackableObjectGraph and the live objects in parallel by local name (TensorFlow's
 * CheckpointPosition), reporting what matched as CheckpointLoadStatus does. */
#include <stdio.h>
#include <string.h>

#include "proto/proto_internal.h"
#include "proto/trackable_object_graph.pb-c.h"
#include "saved_model/bundle.h"
#include "saved_model/checkpoint_internal.h"

#define MAX_GRAPH_BYTES ((size_t)1 << 30)

struct tfc_checkpoint {
    tfc_ctx *ctx;
    tfc_trackable *root;
    tfc_variable *save_counter;
};

tfc_checkpoint *tfc_checkpoint_new(tfc_ctx *ctx, const char *const *names, tfc_trackable *const *objects, int n,
                                   tfc_status *st) {
    tfc_checkpoint *c = tfc_calloc(1, sizeof *c);
    if (!c) {
        tfc_status_oom(st, "checkpoint", sizeof *c);
        return NULL;
    }
    c->ctx = ctx;
    tfc_tensor *zero = NULL;
    if (!(c->root = tfc_trackable_new(st))) goto fail;
    for (int i = 0; i < n; i++) {
        if (names[i] && !strcmp(names[i], "save_counter")) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "tf.train.Checkpoint: 'save_counter' is reserved");
            goto fail;
        }
        if (!tfc_trackable_track_child(c->root, names[i], objects[i], st)) goto fail;
    }
    if (!(zero = tfc_scalar_i64(0, st)) ||
        !(c->save_counter = tfc_variable_new(ctx, zero, false, "save_counter", st)) ||
        !tfc_trackable_track_variable(c->root, "save_counter", c->save_counter, st))
        goto fail;
    tfc_tensor_unref(zero);
    return c;
fail:
    tfc_tensor_unref(zero);
    tfc_checkpoint_free(c);
    return NULL;
}

void tfc_checkpoint_free(tfc_checkpoint *c) {
    if (!c) return;
    tfc_trackable_unref(c->root);
    tfc_variable_free(c->save_counter);
    tfc_free(c);
}

tfc_trackable *tfc_checkpoint_root(tfc_checkpoint *c) { return c->root; }

int64_t tfc_checkpoint_save_counter(const tfc_checkpoint *c) {
    const tfc_tensor *v = tfc_variable_value(c->save_counter);
    return v ? *(const int64_t *)tfc_tensor_data(v) : 0;
}

bool tfc_checkpoint_write(tfc_checkpoint *c, const char *file_prefix, tfc_status *st) {
    tfc_ckpt_graph g;
    if (!tfc_ckpt_graph_build(c->root, &g, st)) return false;
    tfc_ckpt_graph_hooks(&g, false);
    uint8_t *gb = NULL;
    size_t glen = 0;
    tfc_tensor *gt = NULL;
    tfc_bundle_writer *w = NULL;
    bool ok = tfc_ckpt_graph_serialize(&g, &gb, &glen, st);
    const char *s = (const char *)gb;
    ok = ok && (gt = tfc_tensor_from_strings(&s, &glen, NULL, 0, st)) && (w = tfc_bundle_writer_new(file_prefix, st)) &&
         tfc_bundle_writer_add(w, TFC_BUNDLE_OBJECT_GRAPH_KEY, gt, st);
    for (int i = 0; ok && i < g.n; i++) {
        if (!g.nodes[i].var) continue;
        const tfc_tensor *v = tfc_variable_value(g.nodes[i].var);
        char *key = tfc_ckpt_node_key(&g, i);
        if (!key) ok = tfc_status_oom(st, "checkpoint key", 0);
        else if (!v)
            ok = tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: variable '%s' is uninitialized", file_prefix, key);
        else ok = tfc_bundle_writer_add(w, key, v, st);
        tfc_free(key);
    }
    for (int i = 0; ok && i < g.n; i++) { /* non-variable values (an iterator's state) */
        int na = 0;
        const tfc_ckpt_attr *a = tfc_trackable_attrs(g.nodes[i].obj, &na);
        for (int k = 0; ok && k < na; k++) {
            char *key = tfc_ckpt_attr_key(&g, i, a[k].name, a[k].suffix);
            tfc_tensor *v = key ? a[k].save(a[k].user, st) : NULL;
            if (!key) ok = tfc_status_oom(st, "checkpoint key", 0);
            else ok = v && tfc_bundle_writer_add(w, key, v, st);
            tfc_tensor_unref(v);
            tfc_free(key);
        }
    }
    ok = ok && tfc_bundle_writer_finish(w, st);
    tfc_bundle_writer_free(w);
    tfc_tensor_unref(gt);
    tfc_free(gb);
    tfc_ckpt_graph_free(&g);
    return ok;
}

/* Splits prefix into its directory ("." when none) and base name, both new strings. */
static bool split_prefix(const char *prefix, char **dir, char **base) {
    const char *slash = strrchr(prefix, '/');
    size_t dn = slash ? (size_t)(slash - prefix) : 1;
    *dir = tfc_malloc(dn + 1);
    *base = tfc_ckpt_strdup(slash ? slash + 1 : prefix);
    if (!*dir || !*base) return false;
    memcpy(*dir, slash ? prefix : ".", dn);
    (*dir)[dn] = 0;
    if (slash == prefix) strcpy(*dir, "/");
    return true;
}

bool tfc_ckpt_bump_counter(tfc_checkpoint *c, tfc_status *st) {
    tfc_tensor *one = tfc_scalar_i64(1, st);
    bool ok = one && tfc_variable_assign_add(c->ctx, c->save_counter, one, st);
    tfc_tensor_unref(one);
    return ok;
}

bool tfc_checkpoint_save(tfc_checkpoint *c, const char *file_prefix, char *out, size_t size, tfc_status *st) {
    if (!tfc_ckpt_bump_counter(c, st)) return false;
    int64_t n = tfc_checkpoint_save_counter(c);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s-%lld", file_prefix, (long long)n) >= sizeof path)
        return tfc_status_set(st, TFC_OUT_OF_RANGE, "%s: path too long", file_prefix);
    if (!tfc_checkpoint_write(c, path, st) || !tfc_ckpt_record_latest(path, false, st)) return false;
    if (strlen(path) >= size) return tfc_status_set(st, TFC_OUT_OF_RANGE, "%s: path longer than %zu bytes", path, size);
    memcpy(out, path, strlen(path) + 1);
    return true;
}

bool tfc_ckpt_record_latest(const char *path, bool keep_all, tfc_status *st) {
    char *dir = NULL, *base = NULL;
    tfc_ckpt_state s = {0};
    bool ok = split_prefix(path, &dir, &base);
    if (!ok) tfc_status_oom(st, path, strlen(path));
    if (ok && !tfc_ckpt_state_read(dir, &s, st)) {
        if (st->code != TFC_NOT_FOUND) ok = false;
        memset(&s, 0, sizeof s);
    }
    if (ok) {
        char *m = tfc_ckpt_strdup(base), *a = tfc_ckpt_strdup(base);
        char **arr = tfc_realloc(s.all_model_checkpoint_paths, (size_t)(s.n_paths + 1) * sizeof *arr);
        if (arr) s.all_model_checkpoint_paths = arr;
        if (!m || !a || !arr) {
            tfc_free(m);
            tfc_free(a);
            ok = tfc_status_oom(st, path, 0);
        } else {
            tfc_free(s.model_checkpoint_path);
            s.model_checkpoint_path = m;
            int k = 0; /* drop an earlier entry of the same name, and all of them unless keep_all */
            for (int i = 0; i < s.n_paths; i++) {
                if (keep_all && strcmp(arr[i], base)) arr[k++] = arr[i];
                else tfc_free(arr[i]);
            }
            arr[k++] = a;
            s.n_paths = k;
            tfc_free(s.all_model_checkpoint_timestamps); /* Checkpoint.save writes no timestamps */
            s.all_model_checkpoint_timestamps = NULL;
            s.n_timestamps = 0;
            ok = tfc_ckpt_state_write(dir, &s, st);
        }
    }
    tfc_ckpt_state_free(&s);
    tfc_free(dir);
    tfc_free(base);
    if (ok) tfc_status_clear(st);
    return ok;
}

/* ---- restore ---- */

struct tfc_checkpoint_status {
    char **unused;     /* checkpoint keys of values no object took */
    int n_unused;
    char **unmatched; /* paths of variables that got no value */
    int n_unmatched;
    bool expect_partial;
};

static bool push_name(char ***arr, int *n, const char *s, tfc_status *st) {
    char **a = tfc_realloc(*arr, (size_t)(*n + 1) * sizeof *a);
    if (!a) return tfc_status_oom(st, "checkpoint status", 0);
    *arr = a;
    if (!(a[*n] = tfc_ckpt_strdup(s))) return tfc_status_oom(st, "checkpoint status", 0);
    (*n)++;
    return true;
}

typedef Tensorflow__TrackableObjectGraph__TrackableObject tk_obj;

static const char *value_key(const tk_obj *o) {
    for (size_t a = 0; a < o->n_attributes; a++)
        if (o->attributes[a]->name && !strcmp(o->attributes[a]->name, "VARIABLE_VALUE"))
            return o->attributes[a]->checkpoint_key;
    return NULL;
}

/* The checkpoint key of o's attribute `name`, or NULL. */
static const char *attr_key(const tk_obj *o, const char *name) {
    for (size_t a = 0; a < o->n_attributes; a++)
        if (o->attributes[a]->name && !strcmp(o->attributes[a]->name, name)) return o->attributes[a]->checkpoint_key;
    return NULL;
}

/* Whether values of this attribute name count as unused when no object takes them: variables, iterators, and
 * any name a live object of g has. */
static bool live_attr(const tfc_ckpt_graph *g, const char *name) {
    if (!strcmp(name, "ITERATOR")) return true;
    for (int i = 0; i < g->n; i++) {
        int na = 0;
        const tfc_ckpt_attr *a = tfc_trackable_attrs(g->nodes[i].obj, &na);
        for (int k = 0; k < na; k++)
            if (!strcmp(a[k].name, name)) return true;
    }
    return false;
}

static bool assign_from(tfc_checkpoint *c, tfc_bundle_reader *r, const char *key, tfc_variable *v, tfc_status *st) {
    tfc_tensor *t = tfc_bundle_read(r, key, st);
    if (!t) return false;
    bool ok = true;
    char a[TFC_SHAPE_STR], b[TFC_SHAPE_STR];
    if (tfc_tensor_dtype(t) != tfc_variable_dtype(v))
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: '%s' holds %s, but variable '%s' is %s", tfc_bundle_prefix(r), key,
                            tfc_dtype_name(tfc_tensor_dtype(t)), tfc_variable_name(v), tfc_dtype_name(tfc_variable_dtype(v)));
    else if (tfc_variable_shape(v)->rank >= 0 && !tfc_shape_equal(tfc_tensor_shape(t), tfc_variable_shape(v)))
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                            "Received incompatible tensor with shape %s when attempting to restore variable with shape %s "
                            "and name %s (checkpoint key %s in %s)",
                            tfc_shape_str(tfc_tensor_shape(t), a, sizeof a), tfc_shape_str(tfc_variable_shape(v), b, sizeof b),
                            tfc_variable_name(v), key, tfc_bundle_prefix(r));
    ok = ok && tfc_variable_assign(c->ctx, v, t, st);
    tfc_tensor_unref(t);
    return ok;
}

tfc_checkpoint_status *tfc_checkpoint_restore(tfc_checkpoint *c, const char *save_path, tfc_status *st) {
    tfc_bundle_reader *r = tfc_bundle_open(save_path, st);
    if (!r) return NULL;
    tfc_checkpoint_status *s = tfc_calloc(1, sizeof *s);
    Tensorflow__TrackableObjectGraph *og = NULL;
    tfc_ckpt_graph g = {0};
    int *match = NULL, *queue = NULL; /* match[checkpoint node] = live node, or -1 */
    bool *used = NULL, *got = NULL;
    bool ok = s != NULL;
    if (!ok) tfc_status_oom(st, "checkpoint status", sizeof *s);
    tfc_tensor *gt = ok ? tfc_bundle_read(r, TFC_BUNDLE_OBJECT_GRAPH_KEY, st) : NULL;
    if (ok && !gt) {
        ok = false;
        if (st->code == TFC_NOT_FOUND)
            tfc_status_set(st, TFC_DATA_LOSS, "%s: no %s: not an object-based checkpoint", save_path,
                           TFC_BUNDLE_OBJECT_GRAPH_KEY);
    } else if (ok && (tfc_tensor_dtype(gt) != TFC_STRING || tfc_tensor_num_elements(gt) != 1)) {
        ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: %s is not a string scalar", save_path, TFC_BUNDLE_OBJECT_GRAPH_KEY);
    }
    if (ok) {
        size_t len;
        const char *bytes = tfc_tensor_string(gt, 0, &len);
        char what[512];
        snprintf(what, sizeof what, "%s: %s", save_path, TFC_BUNDLE_OBJECT_GRAPH_KEY);
        og = (Tensorflow__TrackableObjectGraph *)tfc_pb_unpack(&tensorflow__trackable_object_graph__descriptor,
                                                               (const uint8_t *)bytes, len, MAX_GRAPH_BYTES, what, st);
        ok = og != NULL;
        for (size_t i = 0; ok && i < og->n_nodes; i++) {
            const tk_obj *o = og->nodes[i];
            for (size_t k = 0; ok && k < o->n_children; k++)
                if (o->children[k]->node_id < 0 || (size_t)o->children[k]->node_id >= og->n_nodes)
                    ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: node %zu: child node_id %d out of range [0, %zu)", what, i,
                                        o->children[k]->node_id, og->n_nodes);
            for (size_t k = 0; ok && k < o->n_slot_variables; k++) {
                const Tensorflow__TrackableObjectGraph__TrackableObject__SlotVariableReference *sv = o->slot_variables[k];
                if (sv->original_variable_node_id < 0 || (size_t)sv->original_variable_node_id >= og->n_nodes ||
                    sv->slot_variable_node_id < 0 || (size_t)sv->slot_variable_node_id >= og->n_nodes)
                    ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: node %zu: slot variable node ids out of range", what, i);
            }
        }
        if (ok && og->n_nodes == 0) ok = tfc_status_set(st, TFC_DATA_LOSS, "%s: no nodes", what);
    }
    ok = ok && tfc_ckpt_graph_build(c->root, &g, st);
    size_t nn = og ? og->n_nodes : 0;
    if (ok) {
        match = tfc_malloc(nn * sizeof *match);
        queue = tfc_malloc(nn * sizeof *queue);
        used = tfc_calloc(nn, sizeof *used);
        got = tfc_calloc((size_t)g.n, sizeof *got);
        if (!match || !queue || !used || !got) ok = tfc_status_oom(st, "checkpoint restore", nn * sizeof *match);
    }
    if (ok) {
        for (size_t i = 0; i < nn; i++) match[i] = -1;
        size_t head = 0, tail = 0;
        match[0] = 0;
        queue[tail++] = 0;
        while (head < tail) {
            int cid = queue[head++];
            const tk_obj *o = og->nodes[cid];
            const tfc_ckpt_node *live = &g.nodes[match[cid]];
            for (size_t k = 0; k < o->n_children; k++) {
                int child = o->children[k]->node_id;
                if (match[child] >= 0) continue;
                for (int j = 0; j < live->n_children; j++)
                    if (o->children[k]->local_name && !strcmp(live->children[j].local_name, o->children[k]->local_name)) {
                        match[child] = live->children[j].node;
                        queue[tail++] = child;
                        break;
                    }
            }
        }
        /* slot variables: the optimizer's slot_variables entry whose original is the live slot's original */
        for (int i = 0; i < g.n; i++) {
            const tfc_ckpt_node *nd = &g.nodes[i];
            if (nd->slot_of_opt < 0) continue;
            for (size_t cid = 0; cid < nn; cid++) {
                if (match[cid] != nd->slot_of_opt) continue;
                const tk_obj *o = og->nodes[cid];
                for (size_t k = 0; k < o->n_slot_variables; k++) {
                    const Tensorflow__TrackableObjectGraph__TrackableObject__SlotVariableReference *sv = o->slot_variables[k];
                    if (match[sv->original_variable_node_id] == nd->slot_of_var && sv->slot_name &&
                        !strcmp(sv->slot_name, nd->slot_name) && match[sv->slot_variable_node_id] < 0)
                        match[sv->slot_variable_node_id] = i;
                }
            }
        }
        for (size_t cid = 0; ok && cid < nn; cid++) {
            if (match[cid] < 0 || !g.nodes[match[cid]].var) continue;
            const char *key = value_key(og->nodes[cid]);
            if (!key || got[match[cid]]) continue;
            ok = assign_from(c, r, key, g.nodes[match[cid]].var, st);
            got[match[cid]] = used[cid] = ok;
        }
    }
    /* non-variable values: each attribute of a matched object is given the saved value of the same name */
    for (size_t cid = 0; ok && cid < nn; cid++) {
        if (match[cid] < 0 || !g.nodes[match[cid]].obj || got[match[cid]]) continue;
        int na = 0;
        const tfc_ckpt_attr *a = tfc_trackable_attrs(g.nodes[match[cid]].obj, &na);
        const tk_obj *o = og->nodes[cid];
        bool all = na > 0;
        for (int k = 0; ok && k < na; k++) {
            const char *key = attr_key(o, a[k].name);
            char *full = key ? tfc_malloc(strlen(key) + strlen(a[k].suffix) + 1) : NULL;
            if (full) snprintf(full, strlen(key) + strlen(a[k].suffix) + 1, "%s%s", key, a[k].suffix);
            tfc_tensor *v = full ? tfc_bundle_read(r, full, st) : NULL;
            if (!key) all = false;
            else if (!full) ok = tfc_status_oom(st, "checkpoint key", strlen(key));
            else if (!v && st->code == TFC_UNIMPLEMENTED) /* a dtype tfc has no tensors for */
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                    "%s: cannot restore %s from '%s': a dtype tfc has no tensors for (TensorFlow "
                                    "writes its iterators' state as DT_VARIANT; tfc restores the states tfc wrote)",
                                    save_path, a[k].name, full);
            else ok = v && a[k].restore(a[k].user, v, st);
            tfc_tensor_unref(v);
            tfc_free(full);
        }
        if (ok && na > 0) used[cid] = true, got[match[cid]] = all;
    }
    if (ok) tfc_ckpt_graph_hooks(&g, true);
    for (size_t cid = 0; ok && cid < nn; cid++) {
        const tk_obj *o = og->nodes[cid];
        for (size_t a = 0; ok && a < o->n_attributes; a++) {
            const char *name = o->attributes[a]->name, *key = o->attributes[a]->checkpoint_key;
            if (!name || !key || used[cid] || !(!strcmp(name, "VARIABLE_VALUE") || live_attr(&g, name))) continue;
            ok = push_name(&s->unused, &s->n_unused, key, st);
        }
    }
    for (int i = 0; ok && i < g.n; i++) {
        int na = 0;
        tfc_trackable_attrs(g.nodes[i].obj, &na);
        if ((g.nodes[i].var || na) && !got[i]) ok = push_name(&s->unmatched, &s->n_unmatched, g.nodes[i].path, st);
    }
    tfc_free(match);
    tfc_free(queue);
    tfc_free(used);
    tfc_free(got);
    tfc_ckpt_graph_free(&g);
    tfc_pb_free(og);
    tfc_tensor_unref(gt);
    tfc_bundle_close(r);
    if (!ok) {
        if (s) s->expect_partial = true;
        tfc_checkpoint_status_free(s);
        return NULL;
    }
    tfc_status_clear(st);
    return s;
}

/* "(root).a.b" for a '/'-joined path or key (up to its "/.ATTRIBUTES" part). */
static void object_name(const char *path, char *buf, size_t n) {
    size_t o = (size_t)snprintf(buf, n, "(root)%s", path[0] ? "." : "");
    const char *end = strstr(path, "/.ATTRIBUTES");
    for (const char *p = path; *p && (!end || p < end) && o + 1 < n; p++) buf[o++] = *p == '/' ? '.' : *p;
    buf[o < n ? o : n - 1] = 0;
}

static bool list_error(char **names, int n, const char *head, tfc_status *st) {
    char msg[256];
    size_t o = (size_t)snprintf(msg, sizeof msg, "%s", head);
    for (int i = 0; i < n && o < sizeof msg; i++) {
        char nm[200];
        object_name(names[i], nm, sizeof nm);
        o += (size_t)snprintf(msg + o, sizeof msg - o, "%s%s", i ? ", " : "", nm);
    }
    return tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s", msg);
}

bool tfc_checkpoint_status_assert_existing_objects_matched(const tfc_checkpoint_status *s, tfc_status *st) {
    if (s->n_unmatched)
        return list_error(s->unmatched, s->n_unmatched, "Some objects were not bound to checkpointed values: ", st);
    tfc_status_clear(st);
    return true;
}

bool tfc_checkpoint_status_assert_consumed(const tfc_checkpoint_status *s, tfc_status *st) {
    if (s->n_unused) return list_error(s->unused, s->n_unused, "Unresolved object in checkpoint: ", st);
    return tfc_checkpoint_status_assert_existing_objects_matched(s, st);
}

void tfc_checkpoint_status_expect_partial(tfc_checkpoint_status *s) { s->expect_partial = true; }
int tfc_checkpoint_status_unused_values(const tfc_checkpoint_status *s) { return s->n_unused; }
int tfc_checkpoint_status_unmatched_variables(const tfc_checkpoint_status *s) { return s->n_unmatched; }

void tfc_checkpoint_status_free(tfc_checkpoint_status *s) {
    if (!s) return;
    if (!s->expect_partial && s->n_unused) {
        char nm[200];
        object_name(s->unused[0], nm, sizeof nm);
        tfc_log(TFC_LOG_WARNING,
                "A checkpoint was restored but not all checkpointed values were used (%d unused, e.g. %s); "
                "call expect_partial() on the load status to silence this",
                s->n_unused, nm);
    }
    for (int i = 0; i < s->n_unused; i++) tfc_free(s->unused[i]);
    for (int i = 0; i < s->n_unmatched; i++) tfc_free(s->unmatched[i]);
    tfc_free(s->unused);
    tfc_free(s->unmatched);
    tfc_free(s);
}
