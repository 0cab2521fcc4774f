/* Keras 3's weights tree (keras_formats.md §4): what model.save_weights('x.weights.h5') writes and the
 * model.weights.h5 member of a .keras archive holds. The HDF5 tree mirrors the object tree:
 *
 *   /vars                          attr name = the model's name; the model's own variables (none in tfc)
 *   /layers/<key>/vars/0, 1, ...   a layer's own variables, trainable then non-trainable; attr name = its name
 *   /layers/<key>/layers/...       a nested model recurses
 *   /optimizer/vars/0, 1, ...      iterations (int64), learning_rate (float32), then the slots (optional)
 *
 * <key> is the snake_case of the class name with a per-class counter over model.layers in order ("dense",
 * "dense_1", ...); a Functional model lists its InputLayers, a Sequential one does not. Loading walks the same
 * tree and assigns vars/<i> positionally, checking counts, shapes and dtypes before anything is assigned. */
#include <stdio.h>
#include <string.h>

#include "keras/hdf5_io.h"
#include "keras/optimizer_internal.h"
#include "keras/saving_internal.h"

#define MAX_DEPTH 16

/* A growing list of (variable, dataset path) pairs: the whole model's state in file order. */
typedef struct k3_item {
    tfc_variable *var;
    char *path;   /* "layers/dense/vars/0" */
    char *what;   /* "layer \"dense_3\" variable 0" for messages */
} k3_item;

typedef struct k3_list {
    k3_item *items;
    int n, cap;
} k3_list;

static void list_free(k3_list *l) {
    for (int i = 0; i < l->n; i++) {
        tfc_free(l->items[i].path);
        tfc_free(l->items[i].what);
    }
    tfc_free(l->items);
    *l = (k3_list){0};
}

static char *dup_str(const char *s) {
    size_t n = strlen(s) + 1;
    char *c = tfc_malloc(n);
    if (c) memcpy(c, s, n);
    return c;
}

static bool list_add(k3_list *l, tfc_variable *v, const char *path, const char *what, tfc_status *st) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 32;
        k3_item *ni = tfc_realloc(l->items, (size_t)cap * sizeof *ni);
        if (!ni) return tfc_status_oom(st, "weights", (size_t)cap * sizeof *ni);
        l->items = ni, l->cap = cap;
    }
    k3_item *it = &l->items[l->n];
    it->var = v;
    it->path = dup_str(path);
    it->what = dup_str(what);
    if (!it->path || !it->what) {
        tfc_free(it->path);
        tfc_free(it->what);
        return tfc_status_oom(st, "weights", strlen(path));
    }
    l->n++;
    return true;
}

/* A layer's own variables in Keras 3's save_own_variables order: trainable, then non-trainable (group
 * <prefix>/vars). */
static bool own_vars(const tfc_layer *l, const char *prefix, k3_list *out, k3_list *groups, tfc_status *st) {
    char path[1024], what[256];
    int k = 0;
    snprintf(path, sizeof path, "%s%svars", prefix, *prefix ? "/" : "");
    if (groups && !list_add(groups, NULL, path, l->name, st)) return false;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < l->n_weights; i++) {
            if (l->weights[i].trainable != (pass == 0)) continue;
            snprintf(path, sizeof path, "%s/vars/%d", prefix, k);
            snprintf(what, sizeof what, "layer \"%.80s\" variable %d (%.60s)", l->name, k, l->weights[i].name);
            k++;
            if (!list_add(out, l->weights[i].var, path, what, st)) return false;
        }
    return true;
}

/* Walks a model as Keras 3's _save_state does: its variables with their dataset paths into `out`, and, when
 * groups is not NULL, every vars group (path "<prefix>/vars", what = the object's name, var NULL) into groups,
 * weightless layers included, so that a written tree matches Keras's. prefix "" is the root. A model's
 * sublayers are model.layers; the sublayers of other (custom) layers are stored the same way, under
 * <layer>/layers/<key>, where Keras would use the attribute's name, which tfc does not know. */
static bool walk_layer(const tfc_layer *l, const char *prefix, int depth, k3_list *out, k3_list *groups,
                       tfc_status *st) {
    if (depth > MAX_DEPTH)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "layer \"%s\" nests layers more than %d deep", l->name,
                              MAX_DEPTH);
    if (!own_vars(l, prefix, out, groups, st)) return false;
    int n = l->n_sublayers;
    if (n == 0) return true;
    /* per-class counters: the keys used so far and how often */
    char (*keys)[64] = tfc_calloc((size_t)n, sizeof *keys);
    int *counts = tfc_calloc((size_t)n, sizeof *counts);
    int n_keys = 0;
    bool ok = keys && counts;
    if (!ok) tfc_status_oom(st, "layer keys", (size_t)n * sizeof *keys);
    for (int i = 0; ok && i < n; i++) {
        const tfc_layer *sub_l = l->sublayers[i];
        char key[64], sub[1024];
        tfc_keras_snake_case(sub_l->cls->class_name, key, sizeof key);
        int j = 0;
        while (j < n_keys && strcmp(keys[j], key) != 0) j++;
        if (j == n_keys) {
            snprintf(keys[n_keys++], sizeof keys[0], "%s", key);
            snprintf(sub, sizeof sub, "%s%slayers/%s", prefix, *prefix ? "/" : "", key);
        } else {
            snprintf(sub, sizeof sub, "%s%slayers/%s_%d", prefix, *prefix ? "/" : "", key, ++counts[j]);
        }
        ok = walk_layer(sub_l, sub, depth + 1, out, groups, st);
    }
    tfc_free(keys);
    tfc_free(counts);
    return ok;
}

/* Creates group `path` (and its parents) with attr name, as Keras 3 writes each vars group. */
static bool make_vars_group(hid_t root, const char *path, const char *name, const char *file, tfc_status *st) {
    char det[96];
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), gcpl = H5Pcreate(H5P_GROUP_CREATE), g = -1;
    bool ok = lcpl >= 0 && gcpl >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
              H5Pset_obj_track_times(gcpl, 0) >= 0 && (g = H5Gcreate2(root, path, lcpl, gcpl, H5P_DEFAULT)) >= 0 &&
              tfc_h5_write_scalar_str(g, "name", name);
    if (!ok) tfc_status_set(st, TFC_INTERNAL, "%s: cannot create group %s: %s", file, path, tfc_h5_detail(det));
    tfc_h5_close(g);
    tfc_h5_close(gcpl);
    tfc_h5_close(lcpl);
    return ok;
}

/* The optimizer whose state is saved (a LossScaleOptimizer's inner one); NULL when not compiled. Its state in
 * Keras 3's order is iterations, learning_rate, then tfc_optimizer_variables past iterations. */
static tfc_optimizer *model_optimizer(tfc_model *m) {
    tfc_optimizer *o = m->compiled ? m->optimizer : NULL;
    while (o && o->inner) o = o->inner;
    return o;
}

bool tfc_keras3_write(tfc_model *m, hid_t root, bool include_optimizer, const char *file, tfc_status *st) {
    k3_list l = {0}, groups = {0};
    bool ok = walk_layer(&m->base, "", 0, &l, &groups, st);
    for (int i = 0; ok && i < groups.n; i++) ok = make_vars_group(root, groups.items[i].path, groups.items[i].what, file, st);
    list_free(&groups);
    for (int i = 0; ok && i < l.n; i++) ok = tfc_h5_write_var(root, l.items[i].path, l.items[i].var, file,
                                                              l.items[i].what, st);
    list_free(&l);
    tfc_optimizer *o = include_optimizer ? model_optimizer(m) : NULL;
    int nv = o ? tfc_optimizer_variables(o, NULL, 0) : 0;
    if (!ok || nv <= 0) return ok;
    int nt = tfc_layer_trainable_weights(&m->base, NULL, 0), cap = 2 + TFC_OPT_MAX_SLOTS * nt;
    tfc_variable **v = tfc_malloc((size_t)(cap + nt) * sizeof *v);
    if (!v) return tfc_status_oom(st, "optimizer variables", (size_t)(cap + nt) * sizeof *v);
    tfc_variable **tv = v + cap;
    tfc_layer_trainable_weights(&m->base, tv, nt);
    nv = tfc_keras3_optimizer_state(o, tv, nt, v, cap, st);
    if (nv <= 0) {
        tfc_free(v);
        return nv == 0;
    }
    ok = make_vars_group(root, "optimizer/vars", o->name ? o->name : "optimizer", file, st);
    /* learning_rate is a float32 scalar variable in Keras 3; tfc keeps a number, written as a dataset here */
    tfc_variable *lr = NULL;
    if (ok) {
        tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, NULL, 0, st);
        if (t) *(float *)tfc_tensor_mutable_data(t) = (float)tfc_optimizer_learning_rate(o);
        lr = t ? tfc_variable_new(o->ctx ? o->ctx : m->ctx, t, false, "learning_rate", st) : NULL;
        tfc_tensor_unref(t);
        ok = lr != NULL;
    }
    char path[64], what[96];
    for (int i = 0, k = 0; ok && i < nv; i++, k++) {
        if (i == 1) {
            ok = tfc_h5_write_var(root, "optimizer/vars/1", lr, file, "optimizer learning_rate", st);
            k++;
            if (!ok) break;
        }
        snprintf(path, sizeof path, "optimizer/vars/%d", k);
        snprintf(what, sizeof what, "optimizer variable %d", k);
        ok = tfc_h5_write_var(root, path, v[i], file, what, st);
    }
    if (ok && nv == 1) ok = tfc_h5_write_var(root, "optimizer/vars/1", lr, file, "optimizer learning_rate", st);
    if (lr) tfc_variable_free(lr);
    tfc_free(v);
    return ok;
}

bool tfc_keras3_is_layout(hid_t f) {
    return H5Lexists(f, "layers", H5P_DEFAULT) > 0 || H5Lexists(f, "vars", H5P_DEFAULT) > 0;
}

/* The number of datasets in group `path` of root named 0, 1, ... (-1 when the group is absent). */
static int count_vars(hid_t root, const char *path) {
    if (H5Lexists(root, path, H5P_DEFAULT) <= 0) return -1;
    hid_t g = H5Gopen2(root, path, H5P_DEFAULT);
    if (g < 0) return -1;
    H5G_info_t info;
    int n = H5Gget_info(g, &info) < 0 ? -1 : (int)(info.nlinks > 1000000 ? 1000000 : info.nlinks);
    H5Gclose(g);
    return n;
}

/* Checks that each vars group of the model has exactly the variables the model expects (Keras 3's
 * load_own_variables: "Layer 'x' expected n variables, but received m variables during loading"). */
static bool check_counts(const k3_list *l, hid_t root, const char *file, tfc_status *st) {
    for (int i = 0; i < l->n;) {
        const char *p = l->items[i].path;
        const char *slash = strrchr(p, '/');
        size_t glen = (size_t)(slash - p);
        int j = i;
        while (j < l->n && strncmp(l->items[j].path, p, glen) == 0 && l->items[j].path[glen] == '/' &&
               !strchr(l->items[j].path + glen + 1, '/'))
            j++;
        char group[1024];
        snprintf(group, sizeof group, "%.*s", (int)glen, p);
        int got = count_vars(root, group);
        if (got != j - i) {
            const char *what = l->items[i].what;
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: %.*s expected %d variables, but received %d variables during loading (group "
                                  "%s)",
                                  file, (int)(strstr(what, " variable") ? strstr(what, " variable") - what : 0), what,
                                  j - i, got < 0 ? 0 : got, group);
        }
        i = j;
    }
    return true;
}

bool tfc_keras3_read(tfc_model *m, hid_t root, bool load_optimizer, const char *file, tfc_status *st) {
    k3_list l = {0};
    tfc_tensor **vals = NULL;
    tfc_variable **vars = NULL;
    int n_vals = 0;
    bool ok = walk_layer(&m->base, "", 0, &l, NULL, st) && check_counts(&l, root, file, st);
    tfc_optimizer *o = load_optimizer ? model_optimizer(m) : NULL;
    int n_opt = o ? count_vars(root, "optimizer/vars") : -1;
    tfc_variable **ov = NULL;
    int nov = 0;
    if (ok && n_opt >= 2) {
        /* optimizer.build(model.trainable_variables), then the saved state must match it */
        int nt = tfc_layer_trainable_weights(&m->base, NULL, 0);
        tfc_variable **tv = tfc_malloc((size_t)(nt ? nt : 1) * sizeof *tv);
        ok = tv != NULL;
        if (ok) {
            tfc_layer_trainable_weights(&m->base, tv, nt);
            /* an optimizer saved before its first step holds only iterations and learning_rate */
            ok = tfc_optimizer_build(o, m->ctx, tv, n_opt == 2 ? 0 : nt, st);
        } else {
            tfc_status_oom(st, "trainable variables", (size_t)nt * sizeof *tv);
        }
        int cap = 2 + TFC_OPT_MAX_SLOTS * nt;
        if (ok && !(ov = tfc_malloc((size_t)cap * sizeof *ov))) ok = tfc_status_oom(st, "optimizer", 0);
        nov = ok ? tfc_keras3_optimizer_state(o, tv, nt, ov, cap, st) : 0;
        tfc_free(tv);
        if (nov < 0) ok = false;
        if (ok && nov + 1 != n_opt) {
            /* Keras 3 skips the optimizer's state then, with this warning */
            tfc_log(TFC_LOG_WARNING, "Skipping variable loading for optimizer '%s', because it has %d variables "
                    "whereas the saved optimizer has %d variables (%s).", o->name, nov + 1, n_opt, file);
            nov = 0;
        }
        char path[64], what[96];
        for (int i = 0; ok && i < nov; i++) {
            snprintf(path, sizeof path, "optimizer/vars/%d", i ? i + 1 : 0);
            snprintf(what, sizeof what, "optimizer variable %d", i ? i + 1 : 0);
            ok = list_add(&l, ov[i], path, what, st);
        }
    }
    if (ok && l.n > 0) {
        vals = tfc_calloc((size_t)l.n, sizeof *vals);
        vars = tfc_calloc((size_t)l.n, sizeof *vars);
        if (!vals || !vars) ok = tfc_status_oom(st, "weights", (size_t)l.n * sizeof *vals);
    }
    for (int i = 0; ok && i < l.n; i++) {
        if (!(vals[i] = tfc_h5_read_var(root, l.items[i].path, l.items[i].var, l.items[i].what, file, st))) ok = false;
        else vars[n_vals++] = l.items[i].var;
    }
    if (ok) ok = tfc_keras_assign_all(m->ctx, vars, vals, n_vals, st);
    if (ok && nov > 0) {
        /* learning_rate: a schedule keeps its own value; a constant rate takes the saved one */
        float lr;
        hid_t d = H5Dopen2(root, "optimizer/vars/1", H5P_DEFAULT);
        if (d >= 0 && H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, &lr) >= 0 && !o->schedule)
            tfc_optimizer_set_learning_rate(o, lr);
        tfc_h5_close(d);
    }
    for (int i = 0; vals && i < l.n; i++) tfc_tensor_unref(vals[i]);
    tfc_free(vals);
    tfc_free(vars);
    tfc_free(ov);
    list_free(&l);
    return ok;
}
