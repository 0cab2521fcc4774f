/* Trackable objects (tf.Module / AutoTrackable) and the object graph TensorFlow derives from them
 * (tensorflow/python/checkpoint/graph_view.py: breadth-first numbering, the first path to an object names it,
 * slot variables appended after the objects). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "proto/proto_internal.h"
#include "proto/trackable_object_graph.pb-c.h"
#include "saved_model/bundle.h"
#include "saved_model/checkpoint_internal.h"

typedef struct {
    char *name;
    tfc_trackable *child; /* one of child and var */
    tfc_variable *var;
} tk_ref;

typedef struct {
    tfc_variable *original, *slot;
    char *name;
} tk_slot;

struct tfc_trackable {
    atomic_int refs;
    tk_ref *refs_arr;
    int n, cap;
    tk_slot *slots;
    int n_slots, cap_slots;
    tfc_ckpt_attr *attrs;
    int n_attrs;
    void (*saving)(void *), (*restored)(void *), (*free_user)(void *);
    void *user;
};

void tfc_trackable_set_hooks(tfc_trackable *t, void (*saving)(void *user), void (*restored)(void *user),
                             void (*free_user)(void *user), void *user) {
    t->saving = saving;
    t->restored = restored;
    t->free_user = free_user;
    t->user = user;
}

void tfc_ckpt_graph_hooks(const tfc_ckpt_graph *g, bool restored) {
    for (int i = 0; i < g->n; i++) {
        const tfc_trackable *t = g->nodes[i].obj;
        if (t && (restored ? t->restored : t->saving)) (restored ? t->restored : t->saving)(t->user);
    }
}

tfc_trackable *tfc_trackable_new(tfc_status *st) {
    tfc_trackable *t = tfc_calloc(1, sizeof *t);
    if (!t) {
        tfc_status_oom(st, "trackable", sizeof *t);
        return NULL;
    }
    atomic_init(&t->refs, 1);
    tfc_status_clear(st);
    return t;
}

tfc_trackable *tfc_trackable_ref(tfc_trackable *t) {
    if (t) atomic_fetch_add(&t->refs, 1);
    return t;
}

void tfc_trackable_unref(tfc_trackable *t) {
    if (!t || atomic_fetch_sub(&t->refs, 1) != 1) return;
    if (t->free_user) t->free_user(t->user);
    for (int i = 0; i < t->n; i++) {
        tfc_free(t->refs_arr[i].name);
        tfc_trackable_unref(t->refs_arr[i].child);
    }
    for (int i = 0; i < t->n_slots; i++) tfc_free(t->slots[i].name);
    for (int i = 0; i < t->n_attrs; i++) {
        tfc_free(t->attrs[i].name);
        tfc_free(t->attrs[i].suffix);
    }
    tfc_free(t->attrs);
    tfc_free(t->refs_arr);
    tfc_free(t->slots);
    tfc_free(t);
}

static bool add_ref(tfc_trackable *t, const char *name, tfc_trackable *child, tfc_variable *var, tfc_status *st) {
    if (!name || !name[0]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "a tracked object needs a non-empty name");
    for (int i = 0; i < t->n; i++)
        if (!strcmp(t->refs_arr[i].name, name))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "an object is already tracked under the name '%s'", name);
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 8;
        tk_ref *a = tfc_realloc(t->refs_arr, (size_t)cap * sizeof *a);
        if (!a) return tfc_status_oom(st, "trackable children", (size_t)cap * sizeof *a);
        t->refs_arr = a;
        t->cap = cap;
    }
    char *n = tfc_ckpt_strdup(name);
    if (!n) return tfc_status_oom(st, name, strlen(name));
    t->refs_arr[t->n++] = (tk_ref){n, tfc_trackable_ref(child), var};
    tfc_status_clear(st);
    return true;
}

bool tfc_trackable_track_variable(tfc_trackable *t, const char *local_name, tfc_variable *v, tfc_status *st) {
    if (!v) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "'%s': no variable", local_name ? local_name : "");
    return add_ref(t, local_name, NULL, v, st);
}

bool tfc_trackable_track_child(tfc_trackable *t, const char *local_name, tfc_trackable *child, tfc_status *st) {
    if (!child) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "'%s': no object", local_name ? local_name : "");
    if (child == t) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "'%s': an object cannot track itself", local_name);
    return add_ref(t, local_name, child, NULL, st);
}

bool tfc_trackable_track_slot(tfc_trackable *t, tfc_variable *original, const char *slot_name, tfc_variable *slot,
                              tfc_status *st) {
    if (!original || !slot || !slot_name || !slot_name[0])
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "a slot needs an original variable, a name and a slot variable");
    for (int i = 0; i < t->n_slots; i++)
        if (t->slots[i].original == original && !strcmp(t->slots[i].name, slot_name))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "slot '%s' of variable '%s' is already tracked", slot_name,
                                  tfc_variable_name(original));
    if (t->n_slots == t->cap_slots) {
        int cap = t->cap_slots ? 2 * t->cap_slots : 8;
        tk_slot *a = tfc_realloc(t->slots, (size_t)cap * sizeof *a);
        if (!a) return tfc_status_oom(st, "slots", (size_t)cap * sizeof *a);
        t->slots = a;
        t->cap_slots = cap;
    }
    char *n = tfc_ckpt_strdup(slot_name);
    if (!n) return tfc_status_oom(st, slot_name, strlen(slot_name));
    t->slots[t->n_slots++] = (tk_slot){original, slot, n};
    tfc_status_clear(st);
    return true;
}

bool tfc_trackable_track_attribute(tfc_trackable *t, const char *name, const char *key_suffix,
                                   tfc_tensor *(*save)(void *user, tfc_status *st),
                                   bool (*restore)(void *user, const tfc_tensor *value, tfc_status *st), void *user,
                                   tfc_status *st) {
    if (!t || !name || !name[0] || !strcmp(name, "VARIABLE_VALUE") || !save || !restore)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "an attribute needs a name other than VARIABLE_VALUE and save/restore callbacks (got '%s')",
                              name ? name : "");
    for (int i = 0; i < t->n_attrs; i++)
        if (!strcmp(t->attrs[i].name, name))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "attribute '%s' is already tracked", name);
    tfc_ckpt_attr *a = tfc_realloc(t->attrs, (size_t)(t->n_attrs + 1) * sizeof *a);
    if (!a) return tfc_status_oom(st, "attributes", (size_t)(t->n_attrs + 1) * sizeof *a);
    t->attrs = a;
    char *n = tfc_ckpt_strdup(name), *sfx = tfc_ckpt_strdup(key_suffix ? key_suffix : "");
    if (!n || !sfx) {
        tfc_free(n);
        tfc_free(sfx);
        return tfc_status_oom(st, name, strlen(name));
    }
    t->attrs[t->n_attrs++] = (tfc_ckpt_attr){n, sfx, save, restore, user};
    tfc_status_clear(st);
    return true;
}

const tfc_ckpt_attr *tfc_trackable_attrs(const tfc_trackable *t, int *n) {
    *n = t ? t->n_attrs : 0;
    return t ? t->attrs : NULL;
}

bool tfc_trackable_slot_at(const tfc_trackable *t, int i, tfc_variable **original, const char **name,
                           tfc_variable **slot) {
    if (i < 0 || i >= t->n_slots) return false;
    *original = t->slots[i].original;
    *name = t->slots[i].name;
    *slot = t->slots[i].slot;
    return true;
}

/* ---- the graph ---- */

/* TensorFlow's escaping of a local name inside a key: '.' -> "..", '/' -> ".S". */
static char *escape(const char *name) {
    size_t n = 0;
    for (const char *p = name; *p; p++) n += (*p == '.' || *p == '/') ? 2 : 1;
    char *out = tfc_malloc(n + 1), *o = out;
    if (!out) return NULL;
    for (const char *p = name; *p; p++) {
        if (*p == '.') *o++ = '.', *o++ = '.';
        else if (*p == '/') *o++ = '.', *o++ = 'S';
        else *o++ = *p;
    }
    *o = 0;
    return out;
}

static int find_node(const tfc_ckpt_graph *g, const tfc_trackable *obj, const tfc_variable *var) {
    for (int i = 0; i < g->n; i++)
        if (obj ? g->nodes[i].obj == obj : (g->nodes[i].var == var && g->nodes[i].slot_of_opt < 0)) return i;
    return -1;
}

static int add_node(tfc_ckpt_graph *g, tfc_trackable *obj, tfc_variable *var, char *path, tfc_status *st) {
    if (!path) {
        tfc_status_oom(st, "object graph", 0);
        return -1;
    }
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 16;
        tfc_ckpt_node *a = tfc_realloc(g->nodes, (size_t)cap * sizeof *a);
        if (!a) {
            tfc_free(path);
            tfc_status_oom(st, "object graph", (size_t)cap * sizeof *a);
            return -1;
        }
        g->nodes = a;
        g->cap = cap;
    }
    g->nodes[g->n] = (tfc_ckpt_node){.obj = obj, .var = var, .path = path, .slot_of_var = -1, .slot_of_opt = -1};
    return g->n++;
}

static char *join_path(const char *parent, const char *name) {
    char *e = escape(name);
    if (!e || !parent[0]) return e;
    size_t n = strlen(parent) + strlen(e) + 2;
    char *out = tfc_malloc(n);
    if (out) snprintf(out, n, "%s/%s", parent, e);
    tfc_free(e);
    return out;
}

static bool add_child(tfc_ckpt_node *parent, const char *name, int node, tfc_status *st) {
    tfc_ckpt_child *a = tfc_realloc(parent->children, (size_t)(parent->n_children + 1) * sizeof *a);
    char *n = tfc_ckpt_strdup(name);
    if (a) parent->children = a;
    if (!a || !n) {
        tfc_free(n);
        return tfc_status_oom(st, "object graph", 0);
    }
    a[parent->n_children++] = (tfc_ckpt_child){n, node};
    return true;
}

bool tfc_ckpt_graph_build(tfc_trackable *root, tfc_ckpt_graph *g, tfc_status *st) {
    memset(g, 0, sizeof *g);
    if (add_node(g, root, NULL, tfc_ckpt_strdup(""), st) < 0) return false;
    for (int q = 0; q < g->n; q++) { /* g->n grows as the breadth-first walk finds objects */
        tfc_trackable *t = g->nodes[q].obj;
        if (!t) continue;
        for (int i = 0; i < t->n; i++) {
            const tk_ref *r = &t->refs_arr[i];
            int id = find_node(g, r->child, r->var);
            if (id < 0 && (id = add_node(g, r->child, r->var, join_path(g->nodes[q].path, r->name), st)) < 0) goto fail;
            if (!add_child(&g->nodes[q], r->name, id, st)) goto fail;
        }
    }
    int objects = g->n;
    for (int q = 0; q < objects; q++) {
        tfc_trackable *t = g->nodes[q].obj;
        for (int i = 0; t && i < t->n_slots; i++) {
            int orig = find_node(g, NULL, t->slots[i].original);
            if (orig < 0 || orig >= objects) continue; /* TensorFlow skips slots of variables it does not save */
            char *e = escape(t->slots[i].name);
            const char *op = g->nodes[q].path, *vp = g->nodes[orig].path;
            size_t n = strlen(vp) + strlen(op) + (e ? strlen(e) : 0) + 32;
            char *path = e ? tfc_malloc(n) : NULL;
            if (path) snprintf(path, n, "%s/.OPTIMIZER_SLOT/%s/%s", vp, op, e);
            tfc_free(e);
            int id = add_node(g, NULL, t->slots[i].slot, path, st);
            if (id < 0) goto fail;
            g->nodes[id].slot_of_var = orig;
            g->nodes[id].slot_of_opt = q;
            g->nodes[id].slot_name = tfc_ckpt_strdup(t->slots[i].name);
            if (!g->nodes[id].slot_name) {
                tfc_status_oom(st, "object graph", 0);
                goto fail;
            }
        }
    }
    /* has_checkpoint_values: a variable, or an object from which one is reachable (a fixed point over the DAG) */
    for (int i = 0; i < g->n; i++) g->nodes[i].has_values = g->nodes[i].var != NULL || (g->nodes[i].obj && g->nodes[i].obj->n_attrs);
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < g->n; i++) {
            tfc_ckpt_node *nd = &g->nodes[i];
            for (int c = 0; !nd->has_values && c < nd->n_children; c++)
                if (g->nodes[nd->children[c].node].has_values) nd->has_values = changed = true;
        }
        for (int i = objects; i < g->n; i++)
            if (!g->nodes[g->nodes[i].slot_of_opt].has_values) g->nodes[g->nodes[i].slot_of_opt].has_values = changed = true;
    }
    tfc_status_clear(st);
    return true;
fail:
    tfc_ckpt_graph_free(g);
    return false;
}

void tfc_ckpt_graph_free(tfc_ckpt_graph *g) {
    for (int i = 0; i < g->n; i++) {
        tfc_ckpt_node *nd = &g->nodes[i];
        for (int c = 0; c < nd->n_children; c++) tfc_free(nd->children[c].local_name);
        tfc_free(nd->children);
        tfc_free(nd->path);
        tfc_free(nd->slot_name);
    }
    tfc_free(g->nodes);
    memset(g, 0, sizeof *g);
}

char *tfc_ckpt_node_key(const tfc_ckpt_graph *g, int node) {
    const char *p = g->nodes[node].path;
    size_t n = strlen(p) + 32;
    char *k = tfc_malloc(n);
    if (k) snprintf(k, n, "%s/.ATTRIBUTES/VARIABLE_VALUE", p);
    return k;
}

char *tfc_ckpt_attr_key(const tfc_ckpt_graph *g, int node, const char *name, const char *suffix) {
    const char *p = g->nodes[node].path;
    char *e = escape(name);
    if (!suffix) suffix = "";
    size_t n = strlen(p) + (e ? strlen(e) : 0) + strlen(suffix) + 16;
    char *k = e ? tfc_malloc(n) : NULL;
    if (k) snprintf(k, n, "%s%s.ATTRIBUTES/%s%s", p, p[0] ? "/" : "", e, suffix);
    tfc_free(e);
    return k;
}

typedef Tensorflow__TrackableObjectGraph__TrackableObject tk_obj;
typedef Tensorflow__TrackableObjectGraph__TrackableObject__ObjectReference tk_objref;
typedef Tensorflow__TrackableObjectGraph__TrackableObject__SerializedTensor tk_tensor;
typedef Tensorflow__TrackableObjectGraph__TrackableObject__SlotVariableReference tk_slotref;

bool tfc_ckpt_graph_serialize(const tfc_ckpt_graph *g, uint8_t **out, size_t *size, tfc_status *st) {
    int n = g->n, n_children = 0;
    for (int i = 0; i < n; i++) n_children += g->nodes[i].n_children;
    /* one block for every message: objects, their pointer arrays, references, attributes, slot references */
    tk_obj *objs = tfc_calloc((size_t)n, sizeof *objs);
    tk_obj **objp = tfc_calloc((size_t)n, sizeof *objp);
    tk_objref *refs = tfc_calloc((size_t)n_children + 1, sizeof *refs);
    tk_objref **refp = tfc_calloc((size_t)n_children + 1, sizeof *refp);
    tk_tensor *atts = tfc_calloc((size_t)n, sizeof *atts);
    tk_tensor **attp = tfc_calloc((size_t)n, sizeof *attp);
    tk_slotref *slots = tfc_calloc((size_t)n, sizeof *slots);
    tk_slotref **slotp = tfc_calloc((size_t)n, sizeof *slotp);
    Google__Protobuf__BoolValue *bools = tfc_calloc((size_t)n, sizeof *bools);
    char **keys = tfc_calloc((size_t)n, sizeof *keys);
    int n_oatts = 0, oa = 0; /* attributes of objects (tfc_trackable_track_attribute) */
    for (int i = 0; i < n; i++) n_oatts += g->nodes[i].obj ? g->nodes[i].obj->n_attrs : 0;
    tk_tensor *oatts = tfc_calloc((size_t)n_oatts + 1, sizeof *oatts);
    tk_tensor **oattp = tfc_calloc((size_t)n_oatts + 1, sizeof *oattp);
    char **okeys = tfc_calloc((size_t)n_oatts + 1, sizeof *okeys);
    bool ok = objs && objp && refs && refp && atts && attp && slots && slotp && bools && keys && oatts && oattp && okeys;
    if (!ok) tfc_status_oom(st, "object graph", (size_t)n * sizeof *objs);
    int r = 0;
    for (int i = 0; ok && i < n; i++) {
        const tfc_ckpt_node *nd = &g->nodes[i];
        tk_obj *o = &objs[i];
        tensorflow__trackable_object_graph__trackable_object__init(o);
        objp[i] = o;
        o->children = &refp[r];
        for (int c = 0; c < nd->n_children; c++, r++) {
            tensorflow__trackable_object_graph__trackable_object__object_reference__init(&refs[r]);
            refs[r].node_id = nd->children[c].node;
            refs[r].local_name = nd->children[c].local_name;
            refp[r] = &refs[r];
        }
        o->n_children = (size_t)nd->n_children;
        if (nd->var) {
            if (!(keys[i] = tfc_ckpt_node_key(g, i))) {
                ok = tfc_status_oom(st, "object graph", 0);
                break;
            }
            tensorflow__trackable_object_graph__trackable_object__serialized_tensor__init(&atts[i]);
            atts[i].name = "VARIABLE_VALUE";
            atts[i].full_name = (char *)tfc_variable_name(nd->var);
            if (!atts[i].full_name) atts[i].full_name = "";
            atts[i].checkpoint_key = keys[i];
            attp[i] = &atts[i];
            o->attributes = &attp[i];
            o->n_attributes = 1;
        }
        if (nd->obj && nd->obj->n_attrs) {
            o->attributes = &oattp[oa];
            o->n_attributes = (size_t)nd->obj->n_attrs;
            for (int a = 0; a < nd->obj->n_attrs; a++, oa++) {
                if (!(okeys[oa] = tfc_ckpt_attr_key(g, i, nd->obj->attrs[a].name, NULL))) {
                    ok = tfc_status_oom(st, "object graph", 0);
                    break;
                }
                tensorflow__trackable_object_graph__trackable_object__serialized_tensor__init(&oatts[oa]);
                oatts[oa].name = nd->obj->attrs[a].name;
                oatts[oa].full_name = "";
                oatts[oa].checkpoint_key = okeys[oa];
                oattp[oa] = &oatts[oa];
            }
            if (!ok) break;
        }
        google__protobuf__bool_value__init(&bools[i]);
        bools[i].value = nd->has_values;
        o->has_checkpoint_values = &bools[i];
    }
    /* slot references belong to the optimizer: gather each optimizer's run (slot nodes are contiguous per optimizer) */
    for (int i = 0; ok && i < n; i++) {
        const tfc_ckpt_node *nd = &g->nodes[i];
        if (nd->slot_of_opt < 0) continue;
        tensorflow__trackable_object_graph__trackable_object__slot_variable_reference__init(&slots[i]);
        slots[i].original_variable_node_id = nd->slot_of_var;
        slots[i].slot_name = nd->slot_name;
        slots[i].slot_variable_node_id = i;
        slotp[i] = &slots[i];
        tk_obj *opt = &objs[nd->slot_of_opt];
        if (!opt->n_slot_variables) opt->slot_variables = &slotp[i];
        opt->n_slot_variables++;
    }
    if (ok) {
        Tensorflow__TrackableObjectGraph graph = TENSORFLOW__TRACKABLE_OBJECT_GRAPH__INIT;
        graph.nodes = objp;
        graph.n_nodes = (size_t)n;
        ok = tfc_pb_pack(&graph.base, out, size, TFC_BUNDLE_OBJECT_GRAPH_KEY, st);
    }
    for (int i = 0; keys && i < n; i++) tfc_free(keys[i]);
    tfc_free(keys);
    for (int i = 0; okeys && i < n_oatts; i++) tfc_free(okeys[i]);
    tfc_free(okeys);
    tfc_free(oatts);
    tfc_free(oattp);
    tfc_free(objs);
    tfc_free(objp);
    tfc_free(refs);
    tfc_free(refp);
    tfc_free(atts);
    tfc_free(attp);
    tfc_free(slots);
    tfc_free(slotp);
    tfc_free(bools);
    return ok;
}
