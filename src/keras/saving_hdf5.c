/* model.save_weights('w.h5') / model.load_weights('w.h5'): Keras 2's HDF5 weights layout (keras_formats.md
 * §3 "Weights-only file"), written as tf.keras 2.4 with h5py 2 did, so that every Keras 2 reader and the
 * tfjs converter accept it:
 *
 *   /                         attrs layer_names (fixed-length byte strings, all of model.layers in order),
 *                                   backend "tensorflow", keras_version "2.4.0" (variable-length strings)
 *   /<layer>                  attr weight_names ("dense/kernel:0", ...; an empty float64 array when none)
 *   /<layer>/<weight_name>    dataset of the variable's dtype and shape ("dense/kernel:0" is a path:
 *                             /dense/dense/kernel:0)
 *
 * No timestamps are stored (as h5py's default), so equal weights give byte-identical files.
 *
 * Reading accepts fixed- and variable-length strings, attributes chunked as name0, name1, ... (Keras splits
 * arrays over HDF5's 64 KiB object-header limit), and full-model files (the layout under /model_weights).
 * Layers are matched positionally, as Keras: the layers listed with weights pair in order with the model's
 * layers that have weights. Every weight is read and checked before any variable is assigned, so a failed
 * load leaves the model unchanged. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keras/hdf5_io.h"
#include "keras/saving_internal.h"

/* Keras's HDF5_OBJECT_HEADER_LIMIT: attributes larger than this are split into numbered chunks. */
#define HEADER_LIMIT 64512
/* Sanity bounds for what a (possibly corrupt) file may claim. */
#define MAX_ATTR_STRINGS (1 << 24)
#define MAX_STRING_SIZE (1 << 20)

/* ---- string list attributes ------------------------------------------------------------------------------ */

typedef struct strlist {
    char **s;
    int n, cap;
} strlist;

static void strlist_free(strlist *l) {
    for (int i = 0; i < l->n; i++) tfc_free(l->s[i]);
    tfc_free(l->s);
    *l = (strlist){0};
}

static bool strlist_add(strlist *l, const char *s, size_t len, tfc_status *st) {
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 16;
        char **ns = tfc_realloc(l->s, (size_t)cap * sizeof *ns);
        if (!ns) return tfc_status_oom(st, "HDF5 attribute strings", (size_t)cap * sizeof *ns);
        l->s = ns, l->cap = cap;
    }
    char *c = tfc_malloc(len + 1);
    if (!c) return tfc_status_oom(st, "HDF5 attribute string", len + 1);
    memcpy(c, s, len);
    c[len] = 0;
    l->s[l->n++] = c;
    return true;
}

/* Appends the strings of one attribute (a string array, a scalar string, or an empty array of any type as
 * Keras writes for weightless layers). `what` names the object in messages. */
static bool read_str_attr1(hid_t obj, const char *name, const char *file, const char *what, strlist *out,
                           tfc_status *st) {
    char det[96];
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), space = -1, ftype = -1, mtype = -1;
    void *buf = NULL;
    bool ok = false;
    hssize_t n = -1;
    if (a < 0 || (space = H5Aget_space(a)) < 0 || (ftype = H5Aget_type(a)) < 0 ||
        (n = H5Sget_simple_extent_npoints(space)) < 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read attribute %s of %s: %s", file, name, what, tfc_h5_detail(det));
        goto done;
    }
    if (n == 0) {
        ok = true;
        goto done;
    }
    if (H5Tget_class(ftype) != H5T_STRING || n > MAX_ATTR_STRINGS) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: attribute %s of %s is not a list of strings", file, name, what);
        goto done;
    }
    htri_t vlen = H5Tis_variable_str(ftype);
    if (vlen > 0) {
        mtype = H5Tcopy(H5T_C_S1);
        if (mtype < 0 || H5Tset_size(mtype, H5T_VARIABLE) < 0 || H5Tset_cset(mtype, H5Tget_cset(ftype)) < 0)
            goto h5fail;
        char **p = tfc_calloc((size_t)n, sizeof *p);
        if (!(buf = p)) {
            tfc_status_oom(st, "HDF5 attribute", (size_t)n * sizeof *p);
            goto done;
        }
        if (H5Aread(a, mtype, p) < 0) goto h5fail;
        ok = true;
        for (hssize_t i = 0; i < n && ok; i++) ok = strlist_add(out, p[i] ? p[i] : "", p[i] ? strlen(p[i]) : 0, st);
        H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, p);
    } else {
        size_t size = H5Tget_size(ftype);
        if (size == 0 || size > MAX_STRING_SIZE) {
            tfc_status_set(st, TFC_DATA_LOSS, "%s: attribute %s of %s has strings of %zu bytes", file, name, what,
                           size);
            goto done;
        }
        mtype = H5Tcopy(ftype);
        char *p = tfc_malloc((size_t)n * size);
        if (!(buf = p)) {
            tfc_status_oom(st, "HDF5 attribute", (size_t)n * size);
            goto done;
        }
        if (mtype < 0 || H5Aread(a, mtype, p) < 0) goto h5fail;
        ok = true;
        for (hssize_t i = 0; i < n && ok; i++) {
            const char *s = p + (size_t)i * size;
            ok = strlist_add(out, s, strnlen(s, size), st); /* NULLPAD or NULLTERM; SPACEPAD keeps spaces */
        }
    }
    goto done;
h5fail:
    tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read attribute %s of %s: %s", file, name, what, tfc_h5_detail(det));
done:
    tfc_free(buf);
    tfc_h5_close(mtype);
    tfc_h5_close(ftype);
    tfc_h5_close(space);
    tfc_h5_close(a);
    return ok;
}

/* Keras's load_attributes_from_hdf5_group: the attribute `name`, or its chunks name0, name1, ... in order.
 * *found is false (and the list empty) when neither exists. */
static bool read_str_attr(hid_t obj, const char *name, const char *file, const char *what, strlist *out,
                          bool *found, tfc_status *st) {
    *found = false;
    htri_t e = H5Aexists(obj, name);
    if (e > 0) {
        *found = true;
        return read_str_attr1(obj, name, file, what, out, st);
    }
    char chunk[80];
    for (int i = 0;; i++) {
        snprintf(chunk, sizeof chunk, "%s%d", name, i);
        if (H5Aexists(obj, chunk) <= 0) break;
        *found = true;
        if (!read_str_attr1(obj, chunk, file, what, out, st)) return false;
    }
    return true;
}

/* One attribute holding strings [from, from + n) as fixed-length byte strings of `size` bytes (numpy's |S<size>,
 * NULL-padded), or, with n == 0, an empty float64 array: what Keras 2 writes for an empty list. */
static bool write_fixed_strs(hid_t obj, const char *name, char *const *strs, int n, size_t size, tfc_status *st) {
    hsize_t dims[1] = {(hsize_t)n};
    hid_t t = n ? H5Tcopy(H5T_C_S1) : H5Tcopy(H5T_IEEE_F64LE), s = H5Screate_simple(1, dims, NULL), a = -1;
    char *buf = n ? tfc_calloc((size_t)n, size) : NULL;
    bool ok = t >= 0 && s >= 0 && (!n || buf);
    if (n && !buf) tfc_status_oom(st, "HDF5 attribute", (size_t)n * size);
    if (ok && n) {
        for (int i = 0; i < n; i++) memcpy(buf + (size_t)i * size, strs[i], strlen(strs[i]));
        ok = H5Tset_size(t, size) >= 0 && H5Tset_strpad(t, H5T_STR_NULLPAD) >= 0;
    }
    ok = ok && (a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0;
    if (ok && n) ok = H5Awrite(a, t, buf) >= 0;
    if (!ok && st->code == TFC_OK) tfc_status_set(st, TFC_INTERNAL, "cannot write attribute %s", name);
    tfc_free(buf);
    tfc_h5_close(a);
    tfc_h5_close(s);
    tfc_h5_close(t);
    return ok;
}

/* Keras's save_attributes_to_hdf5_group: one attribute, or numbered chunks (np.array_split into the fewest
 * equal parts whose bytes stay under HEADER_LIMIT) when the array is larger. */
static bool write_str_list(hid_t obj, const char *name, char *const *strs, int n, const char *file,
                           tfc_status *st) {
    size_t size = 1;
    for (int i = 0; i < n; i++) {
        size_t len = strlen(strs[i]);
        if (len > HEADER_LIMIT)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                                  "%s: the %s entry \"%.40s...\" is larger than %d bytes and cannot be saved to "
                                  "HDF5",
                                  file, name, strs[i], HEADER_LIMIT);
        if (len > size) size = len;
    }
    int chunks = 1;
    while ((size_t)((n + chunks - 1) / chunks) * size > HEADER_LIMIT) chunks++;
    if (chunks == 1) return write_fixed_strs(obj, name, strs, n, size, st);
    char cname[80];
    for (int c = 0, from = 0; c < chunks; c++) {
        int k = n / chunks + (c < n % chunks);
        snprintf(cname, sizeof cname, "%s%d", name, c);
        if (!write_fixed_strs(obj, cname, strs + from, k, size, st)) return false;
        from += k;
    }
    return true;
}

/* ---- the model's side ------------------------------------------------------------------------------------ */

/* Keras's _legacy_weights(layer): trainable_weights + non_trainable_weights (for a nested model this is not
 * its layer-by-layer `weights` order). New array (caller frees; NULL when none), *n the count. */
static tfc_variable **legacy_weights(const tfc_layer *l, int *n, tfc_status *st) {
    int nt = tfc_layer_trainable_weights(l, NULL, 0), nn = tfc_layer_non_trainable_weights(l, NULL, 0);
    *n = nt + nn;
    if (*n == 0) return NULL;
    tfc_variable **v = tfc_malloc((size_t)*n * sizeof *v);
    if (!v) {
        tfc_status_oom(st, "layer weights", (size_t)*n * sizeof *v);
        *n = -1;
        return NULL;
    }
    tfc_layer_trainable_weights(l, v, nt);
    tfc_layer_non_trainable_weights(l, v + nt, nn);
    return v;
}

/* ---- save ------------------------------------------------------------------------------------------------- */

static bool write_layer(hid_t file, tfc_layer *l, const char *path, tfc_status *st) {
    char det[96];
    const char *name = tfc_layer_name(l);
    int n;
    tfc_variable **v = legacy_weights(l, &n, st);
    if (n < 0) return false;
    char **names = tfc_malloc((size_t)(n ? n : 1) * sizeof *names);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE), gcpl = H5Pcreate(H5P_GROUP_CREATE), g = -1;
    bool ok = names != NULL;
    if (!names) tfc_status_oom(st, "weight names", (size_t)n * sizeof *names);
    for (int i = 0; ok && i < n; i++) names[i] = (char *)tfc_variable_name(v[i]);
    if (ok && (lcpl < 0 || gcpl < 0 || H5Pset_create_intermediate_group(lcpl, 1) < 0 ||
               H5Pset_obj_track_times(gcpl, 0) < 0 || (g = H5Gcreate2(file, name, lcpl, gcpl, H5P_DEFAULT)) < 0))
        ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: cannot create the group of layer \"%s\" (duplicate layer "
                            "name?): %s", path, name, tfc_h5_detail(det));
    ok = ok && write_str_list(g, "weight_names", names, n, path, st);
    for (int i = 0; ok && i < n; i++) {
        char what[160];
        snprintf(what, sizeof what, "layer \"%.60s\" weight \"%.80s\"", name, names[i]);
        ok = tfc_h5_write_var(g, NULL, v[i], path, what, st);
    }
    tfc_h5_close(g);
    tfc_h5_close(gcpl);
    tfc_h5_close(lcpl);
    tfc_free(names);
    tfc_free(v);
    return ok;
}

bool tfc_keras_legacy_write(tfc_model *m, hid_t root, const char *path, tfc_status *st) {
    char det[96];
    int n = 0;
    tfc_layer **layers = tfc_keras_model_layers_array(m, &n, st);
    if (!layers) return false;
    char **names = tfc_malloc((size_t)(n ? n : 1) * sizeof *names);
    bool ok = names != NULL;
    if (!ok) tfc_status_oom(st, "layer names", (size_t)n * sizeof *names);
    for (int i = 0; ok && i < n; i++) names[i] = (char *)tfc_layer_name(layers[i]);
    ok = ok && write_str_list(root, "layer_names", names, n, path, st);
    if (ok && (!tfc_h5_write_scalar_str(root, "backend", "tensorflow") ||
               !tfc_h5_write_scalar_str(root, "keras_version", TFC_KERAS2_VERSION)))
        ok = tfc_status_set(st, TFC_INTERNAL, "%s: cannot write attributes: %s", path, tfc_h5_detail(det));
    for (int i = 0; ok && i < n; i++) ok = write_layer(root, layers[i], path, st);
    tfc_free(names);
    tfc_free(layers);
    return ok;
}

/* ---- load ------------------------------------------------------------------------------------------------- */

/* One layer listed in the file with its weight names (positional pairing uses only those with weights). */
typedef struct saved_layer {
    const char *name;
    strlist weights;
} saved_layer;

bool tfc_keras_legacy_read(tfc_model *m, hid_t f, const char *path, tfc_status *st) {
    char det[96];
    hid_t root = -1;
    strlist names = {0};
    saved_layer *saved = NULL;
    int n_saved = 0, n_layers = 0, n_with = 0;
    tfc_layer **layers = NULL, **with = NULL;
    tfc_tensor **vals = NULL;
    tfc_variable **vars = NULL;
    int n_vals = 0, cap_vals = 0;
    bool ok = false, found;
    /* A full-model file (model.save('m.h5')) keeps the same layout under /model_weights. */
    if (H5Aexists(f, "layer_names") <= 0 && H5Aexists(f, "layer_names0") <= 0 &&
        H5Lexists(f, "model_weights", H5P_DEFAULT) > 0)
        root = H5Gopen2(f, "model_weights", H5P_DEFAULT);
    else
        root = H5Gopen2(f, "/", H5P_DEFAULT);
    if (root < 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot open the root group: %s", path, tfc_h5_detail(det));
        goto done;
    }
    if (!read_str_attr(root, "layer_names", path, "the root group", &names, &found, st)) goto done;
    if (!found) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: not a Keras weights file (no layer_names attribute)", path);
        goto done;
    }
    if (names.n > 0 && !(saved = tfc_calloc((size_t)names.n, sizeof *saved))) {
        tfc_status_oom(st, "saved layers", (size_t)names.n * sizeof *saved);
        goto done;
    }
    for (int i = 0; i < names.n; i++) {
        hid_t g = H5Lexists(root, names.s[i], H5P_DEFAULT) > 0 ? H5Gopen2(root, names.s[i], H5P_DEFAULT) : -1;
        if (g < 0) {
            tfc_status_set(st, TFC_DATA_LOSS, "%s: layer_names lists \"%s\" but the file has no such group", path,
                           names.s[i]);
            goto done;
        }
        saved_layer *s = &saved[n_saved];
        s->name = names.s[i];
        char what[96];
        snprintf(what, sizeof what, "layer \"%.80s\"", names.s[i]);
        bool okw = read_str_attr(g, "weight_names", path, what, &s->weights, &found, st);
        H5Gclose(g);
        if (!okw) goto done;
        if (s->weights.n > 0) n_saved++;
        else strlist_free(&s->weights);
    }
    if (!(layers = tfc_keras_model_layers_array(m, &n_layers, st))) goto done;
    if (!(with = tfc_malloc((size_t)(n_layers ? n_layers : 1) * sizeof *with))) {
        tfc_status_oom(st, "layers", (size_t)n_layers * sizeof *with);
        goto done;
    }
    for (int i = 0; i < n_layers; i++)
        if (tfc_layer_trainable_weights(layers[i], NULL, 0) + tfc_layer_non_trainable_weights(layers[i], NULL, 0) > 0)
            with[n_with++] = layers[i];
    if (n_with != n_saved) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "You are trying to load a weight file containing %d layers into a "
                       "model with %d layers (%s).", n_saved, n_with, path);
        goto done;
    }
    for (int k = 0; k < n_with; k++) {
        const char *lname = tfc_layer_name(with[k]);
        int nv;
        tfc_variable **v = legacy_weights(with[k], &nv, st);
        if (nv < 0) goto done;
        if (nv != saved[k].weights.n) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT,
                           "Layer #%d (named \"%s\" in the current model) was found to correspond to layer %s in the "
                           "save file. However the new layer %s expects %d weights, but the saved weights have %d "
                           "elements.",
                           k, lname, saved[k].name, lname, nv, saved[k].weights.n);
            tfc_free(v);
            goto done;
        }
        if (n_vals + nv > cap_vals) {
            int cap = (n_vals + nv) * 2;
            tfc_tensor **nt = tfc_realloc(vals, (size_t)cap * sizeof *nt);
            if (nt) vals = nt;
            tfc_variable **nvr = nt ? tfc_realloc(vars, (size_t)cap * sizeof *nvr) : NULL;
            if (nvr) vars = nvr;
            if (!nt || !nvr) {
                tfc_status_oom(st, "weights", (size_t)cap * sizeof *nt);
                tfc_free(v);
                goto done;
            }
            cap_vals = cap;
        }
        hid_t g = H5Gopen2(root, saved[k].name, H5P_DEFAULT);
        if (g < 0) {
            tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot open the group of layer \"%s\": %s", path, saved[k].name,
                           tfc_h5_detail(det));
            tfc_free(v);
            goto done;
        }
        for (int i = 0; i < nv; i++) {
            char what[200];
            snprintf(what, sizeof what, "Layer #%d (named \"%.60s\"): weight \"%.80s\"", k, lname,
                     saved[k].weights.s[i]);
            tfc_tensor *t = tfc_h5_read_var(g, saved[k].weights.s[i], v[i], what, path, st);
            if (!t) {
                H5Gclose(g);
                tfc_free(v);
                goto done;
            }
            vals[n_vals] = t;
            vars[n_vals++] = v[i];
        }
        H5Gclose(g);
        tfc_free(v);
    }
    /* Everything read and checked: now assign. */
    if (!tfc_keras_assign_all(m->ctx ? m->ctx : n_with ? with[0]->ctx : NULL, vars, vals, n_vals, st)) goto done;
    ok = true;
done:
    for (int i = 0; i < n_vals; i++) tfc_tensor_unref(vals[i]);
    tfc_free(vals);
    tfc_free(vars);
    tfc_free(with);
    tfc_free(layers);
    for (int i = 0; i < n_saved; i++) strlist_free(&saved[i].weights);
    if (saved && n_saved < names.n) strlist_free(&saved[n_saved].weights);
    tfc_free(saved);
    strlist_free(&names);
    tfc_h5_close(root);
    if (ok) tfc_status_clear(st);
    return ok;
}

/* ---- optimizer_weights of a full-model file ------------------------------------------------------------------ */

bool tfc_keras_legacy_write_optimizer(hid_t f, tfc_variable *const *v, int n, const char *path, tfc_status *st) {
    char det[96];
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE), g = -1;
    char **names = tfc_malloc((size_t)(n ? n : 1) * sizeof *names);
    bool ok = names && gcpl >= 0 && H5Pset_obj_track_times(gcpl, 0) >= 0 &&
              (g = H5Gcreate2(f, "optimizer_weights", H5P_DEFAULT, gcpl, H5P_DEFAULT)) >= 0;
    if (!ok) tfc_status_set(st, TFC_INTERNAL, "%s: cannot create optimizer_weights: %s", path, tfc_h5_detail(det));
    for (int i = 0; ok && i < n; i++) names[i] = (char *)tfc_variable_name(v[i]);
    ok = ok && write_str_list(g, "weight_names", names, n, path, st);
    for (int i = 0; ok && i < n; i++) {
        char what[160];
        snprintf(what, sizeof what, "optimizer weight \"%.120s\"", names[i]);
        ok = tfc_h5_write_var(g, names[i], v[i], path, what, st);
    }
    tfc_h5_close(g);
    tfc_h5_close(gcpl);
    tfc_free(names);
    return ok;
}

int tfc_keras_legacy_read_optimizer(hid_t f, tfc_variable *const *v, int n, tfc_tensor **vals, const char *path,
                                    tfc_status *st) {
    if (H5Lexists(f, "optimizer_weights", H5P_DEFAULT) <= 0) return 0;
    hid_t g = H5Gopen2(f, "optimizer_weights", H5P_DEFAULT);
    strlist names = {0};
    bool found = false;
    int got = -1;
    if (g < 0) {
        char det[96];
        tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot open optimizer_weights: %s", path, tfc_h5_detail(det));
    } else if (read_str_attr(g, "weight_names", path, "optimizer_weights", &names, &found, st)) {
        if (names.n != n) {
            /* tf.keras warns and goes on with a fresh optimizer */
            tfc_log(TFC_LOG_WARNING, "Error in loading the saved optimizer state (%s): the optimizer has %d "
                    "variables, the file %d. The model's optimizer starts fresh.", path, n, names.n);
            got = 0;
        } else {
            got = n;
            for (int i = 0; i < n; i++) {
                char what[160];
                snprintf(what, sizeof what, "optimizer weight \"%.120s\"", names.s[i]);
                if (!(vals[i] = tfc_h5_read_var(g, names.s[i], v[i], what, path, st))) {
                    for (int j = 0; j < i; j++) tfc_tensor_unref(vals[j]);
                    got = -1;
                    break;
                }
            }
        }
    }
    strlist_free(&names);
    tfc_h5_close(g);
    return got;
}
