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
#include <fcntl.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keras/keras_internal.h"

#define KERAS_VERSION "2.4.0"
/* Keras's HDF5_OBJECT_HEADER_LIMIT: attributes larger than this are split into numbered chunks. */
#define HEADER_LIMIT 64512
/* Sanity bounds for what a (possibly corrupt) file may claim. */
#define MAX_ATTR_STRINGS (1 << 24)
#define MAX_STRING_SIZE (1 << 20)

/* ---- HDF5 error handling --------------------------------------------------------------------------------
 * HDF5 prints its error stack to stderr by default; a library reports through its status instead. The
 * innermost HDF5 message ("truncated file: eof = ...") is appended to DATA_LOSS messages. */
typedef struct {
    H5E_auto2_t fn;
    void *data;
} h5_quiet;

static void quiet_begin(h5_quiet *q) {
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    H5Eclear2(H5E_DEFAULT);
}

static void quiet_end(h5_quiet *q) {
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

static herr_t first_error(unsigned n, const H5E_error2_t *e, void *arg) {
    if (n == 0 && e->desc) snprintf((char *)arg, 96, "%s", e->desc);
    return 0;
}

/* The innermost HDF5 error description, or "" (buf holds 96 bytes). */
static const char *h5_detail(char *buf) {
    buf[0] = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, buf);
    return buf;
}

static void close_id(hid_t id) {
    if (id < 0) return;
    switch (H5Iget_type(id)) {
    case H5I_FILE: H5Fclose(id); break;
    case H5I_GROUP: H5Gclose(id); break;
    case H5I_DATASET: H5Dclose(id); break;
    case H5I_DATASPACE: H5Sclose(id); break;
    case H5I_DATATYPE: H5Tclose(id); break;
    case H5I_ATTR: H5Aclose(id); break;
    case H5I_GENPROP_LST: H5Pclose(id); break;
    default: break;
    }
}

/* ---- dtypes ---------------------------------------------------------------------------------------------- */

/* h5py's float16: IEEE binary16, little-endian. */
static hid_t half_type(void) {
    hid_t t = H5Tcopy(H5T_IEEE_F32LE);
    if (t < 0) return t;
    if (H5Tset_fields(t, 15, 10, 5, 0, 10) < 0 || H5Tset_size(t, 2) < 0 || H5Tset_ebias(t, 15) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* h5py's bool: an int8 enum {FALSE = 0, TRUE = 1}. */
static hid_t bool_type(void) {
    hid_t t = H5Tenum_create(H5T_NATIVE_INT8);
    if (t < 0) return t;
    int8_t f = 0, tr = 1;
    if (H5Tenum_insert(t, "FALSE", &f) < 0 || H5Tenum_insert(t, "TRUE", &tr) < 0) {
        H5Tclose(t);
        return -1;
    }
    return t;
}

/* A new datatype for a tfc dtype: the file type (little-endian, as h5py writes on x86) or the memory type.
 * bfloat16 is stored as its 16 raw bits (uint16) with attr dtype = "bfloat16", as Keras 3 does. -1 when
 * HDF5 has no equivalent. */
static hid_t h5_type(tfc_dtype dt, bool file) {
    switch (dt) {
    case TFC_FLOAT: return H5Tcopy(file ? H5T_IEEE_F32LE : H5T_NATIVE_FLOAT);
    case TFC_DOUBLE: return H5Tcopy(file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE);
    case TFC_HALF: return half_type();
    case TFC_BFLOAT16: return H5Tcopy(file ? H5T_STD_U16LE : H5T_NATIVE_UINT16);
    case TFC_INT8: return H5Tcopy(file ? H5T_STD_I8LE : H5T_NATIVE_INT8);
    case TFC_UINT8: return H5Tcopy(file ? H5T_STD_U8LE : H5T_NATIVE_UINT8);
    case TFC_INT16: return H5Tcopy(file ? H5T_STD_I16LE : H5T_NATIVE_INT16);
    case TFC_INT32: return H5Tcopy(file ? H5T_STD_I32LE : H5T_NATIVE_INT32);
    case TFC_INT64: return H5Tcopy(file ? H5T_STD_I64LE : H5T_NATIVE_INT64);
    case TFC_BOOL: return bool_type();
    default: return -1;
    }
}

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
        tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read attribute %s of %s: %s", file, name, what, h5_detail(det));
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
    tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read attribute %s of %s: %s", file, name, what, h5_detail(det));
done:
    tfc_free(buf);
    close_id(mtype);
    close_id(ftype);
    close_id(space);
    close_id(a);
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

/* A variable-length scalar string attribute, as h5py writes a Python str. */
static bool write_scalar_str(hid_t obj, const char *name, const char *value) {
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a = -1;
    bool ok = t >= 0 && s >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 &&
              (a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Awrite(a, t, &value) >= 0;
    close_id(a);
    close_id(s);
    close_id(t);
    return ok;
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
    close_id(a);
    close_id(s);
    close_id(t);
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

/* model.layers as a new array (caller frees); *n gets the count. */
static tfc_layer **model_layers(tfc_model *m, int *n, tfc_status *st) {
    *n = tfc_model_layers(m, NULL, 0);
    tfc_layer **l = tfc_malloc((size_t)(*n > 0 ? *n : 1) * sizeof *l);
    if (!l) {
        tfc_status_oom(st, "model layers", (size_t)*n * sizeof *l);
        return NULL;
    }
    *n = tfc_model_layers(m, l, *n);
    return l;
}

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

static bool write_weight(hid_t group, tfc_variable *v, const char *file, const char *layer, tfc_status *st) {
    char det[96];
    const char *wname = tfc_variable_name(v);
    const tfc_tensor *val = tfc_variable_value(v);
    tfc_dtype dt = tfc_variable_dtype(v);
    const tfc_shape *s = tfc_variable_shape(v);
    hid_t ftype = h5_type(dt, true), mtype = h5_type(dt, false), space = -1, lcpl = -1, dcpl = -1, d = -1;
    if (ftype < 0 || mtype < 0) {
        close_id(ftype);
        close_id(mtype);
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: layer \"%s\" weight \"%s\" has dtype %s, which HDF5 files "
                              "cannot hold", file, layer, wname, tfc_dtype_name(dt));
    }
    hsize_t dims[TFC_MAX_RANK];
    for (int i = 0; i < s->rank; i++) dims[i] = (hsize_t)s->dims[i];
    bool ok = (space = s->rank ? H5Screate_simple(s->rank, dims, NULL) : H5Screate(H5S_SCALAR)) >= 0 &&
              (lcpl = H5Pcreate(H5P_LINK_CREATE)) >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
              (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0 &&
              (d = H5Dcreate2(group, wname, ftype, space, lcpl, dcpl, H5P_DEFAULT)) >= 0;
    if (ok && dt == TFC_BFLOAT16) ok = write_scalar_str(d, "dtype", "bfloat16");
    if (ok && tfc_tensor_num_elements(val) > 0)
        ok = H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, tfc_tensor_data(val)) >= 0;
    if (!ok)
        tfc_status_set(st, TFC_INTERNAL, "%s: cannot write layer \"%s\" weight \"%s\": %s", file, layer, wname,
                       h5_detail(det));
    close_id(d);
    close_id(dcpl);
    close_id(lcpl);
    close_id(space);
    close_id(mtype);
    close_id(ftype);
    return ok;
}

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
                            "name?): %s", path, name, h5_detail(det));
    ok = ok && write_str_list(g, "weight_names", names, n, path, st);
    for (int i = 0; ok && i < n; i++) ok = write_weight(g, v[i], path, name, st);
    close_id(g);
    close_id(gcpl);
    close_id(lcpl);
    tfc_free(names);
    tfc_free(v);
    return ok;
}

/* Opens (creating) the temporary file first with open(2), so that failures carry errno's reason. */
static bool create_tmp(const char *tmp, const char *path, tfc_status *st) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0666);
    if (fd < 0) {
        int e = errno;
        return tfc_status_set(st, e == ENOENT ? TFC_NOT_FOUND : e == EACCES || e == EROFS ? TFC_PERMISSION_DENIED
                                                                                         : TFC_UNKNOWN,
                              "save_weights %s: cannot create %s: %s", path, tmp, strerror(e));
    }
    close(fd);
    return true;
}

static bool sync_file(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    bool ok = fsync(fd) == 0;
    close(fd);
    return ok;
}

bool tfc_model_save_weights(tfc_model *m, const char *path, tfc_status *st) {
    if (!m || !path || !*path) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "save_weights: NULL model or path");
    size_t tn = strlen(path) + 32;
    char *tmp = tfc_malloc(tn);
    if (!tmp) return tfc_status_oom(st, "path", tn);
    snprintf(tmp, tn, "%s.tmp.%ld", path, (long)getpid());
    tfc_status_clear(st);
    int n = 0;
    tfc_layer **layers = NULL;
    char **names = NULL;
    hid_t f = -1;
    bool ok = false, created = false;
    h5_quiet q;
    quiet_begin(&q);
    char det[96];
    if (!(layers = model_layers(m, &n, st))) goto done;
    if (!(names = tfc_malloc((size_t)(n ? n : 1) * sizeof *names))) {
        tfc_status_oom(st, "layer names", (size_t)n * sizeof *names);
        goto done;
    }
    for (int i = 0; i < n; i++) names[i] = (char *)tfc_layer_name(layers[i]);
    if (!create_tmp(tmp, path, st)) goto done;
    created = true;
    if ((f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) < 0) {
        tfc_status_set(st, TFC_UNKNOWN, "save_weights %s: cannot create HDF5 file %s: %s", path, tmp, h5_detail(det));
        goto done;
    }
    if (!write_str_list(f, "layer_names", names, n, path, st)) goto done;
    if (!write_scalar_str(f, "backend", "tensorflow") || !write_scalar_str(f, "keras_version", KERAS_VERSION)) {
        tfc_status_set(st, TFC_INTERNAL, "save_weights %s: cannot write attributes: %s", path, h5_detail(det));
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (!write_layer(f, layers[i], path, st)) goto done;
    hid_t fc = f;
    f = -1;
    if (H5Fclose(fc) < 0) {
        tfc_status_set(st, TFC_UNKNOWN, "save_weights %s: cannot finish %s: %s", path, tmp, h5_detail(det));
        goto done;
    }
    /* The data must be on disk before the rename makes it the file: otherwise a crash could leave a
     * renamed but empty file in place of the old one. */
    if (!sync_file(tmp) || rename(tmp, path) != 0) {
        int e = errno;
        tfc_status_set(st, e == EACCES || e == EPERM ? TFC_PERMISSION_DENIED : TFC_UNKNOWN,
                       "save_weights %s: cannot replace it with %s: %s", path, tmp, strerror(e));
        goto done;
    }
    created = false;
    ok = true;
done:
    close_id(f);
    if (created) unlink(tmp);
    quiet_end(&q);
    tfc_free(names);
    tfc_free(layers);
    tfc_free(tmp);
    if (ok) tfc_status_clear(st);
    return ok;
}

/* ---- load ------------------------------------------------------------------------------------------------- */

/* Reads one dataset into a new tensor of the variable's dtype and shape, checking shape and dtype kind
 * (floating data only for floating variables, integers or bools for the others; within a kind values convert
 * as Keras's np.asarray(value, dtype=variable.dtype) does). */
static tfc_tensor *read_weight(hid_t g, const char *wname, tfc_variable *v, int k, const char *layer,
                               const char *file, tfc_status *st) {
    char det[96];
    tfc_dtype dt = tfc_variable_dtype(v);
    const tfc_shape *want = tfc_variable_shape(v);
    tfc_tensor *t = NULL, *tmpf = NULL;
    hid_t d = -1, space = -1, ftype = -1, mtype = -1;
    if (H5Lexists(g, wname, H5P_DEFAULT) <= 0 || (d = H5Dopen2(g, wname, H5P_DEFAULT)) < 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: layer \"%s\" lists weight \"%s\" but has no such dataset%s%s", file,
                       layer, wname, *h5_detail(det) ? ": " : "", det);
        goto done;
    }
    if ((space = H5Dget_space(d)) < 0 || (ftype = H5Dget_type(d)) < 0) goto h5fail;
    H5S_class_t sc = H5Sget_simple_extent_type(space);
    int rank = sc == H5S_SCALAR ? 0 : H5Sget_simple_extent_ndims(space);
    if (sc == H5S_NO_CLASS || rank < 0) goto h5fail;
    hsize_t dims[32];
    tfc_shape got = {.rank = rank > TFC_MAX_RANK ? TFC_MAX_RANK : rank};
    if (rank > 32 || (rank > 0 && H5Sget_simple_extent_dims(space, dims, NULL) < 0)) goto h5fail;
    bool same = sc != H5S_NULL && rank == want->rank;
    for (int i = 0; i < got.rank; i++) {
        got.dims[i] = (int64_t)dims[i];
        if (same && (int64_t)dims[i] != want->dims[i]) same = false;
    }
    if (!same) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "Layer #%d (named \"%s\"): weight \"%s\" has shape %s in the file, but the model's weight "
                       "has shape %s (%s)",
                       k, layer, wname, TFC_KSHP(&got), TFC_KSHP(want), file);
        goto done;
    }
    H5T_class_t fc = H5Tget_class(ftype);
    bool bf16_bits = false;
    if (dt == TFC_BFLOAT16 && fc == H5T_INTEGER && H5Tget_size(ftype) == 2 && H5Aexists(d, "dtype") > 0)
        bf16_bits = true; /* Keras 3's raw bfloat16 */
    bool floating = tfc_dtype_is_floating(dt);
    if (!bf16_bits && (floating ? fc != H5T_FLOAT : !(fc == H5T_INTEGER || (fc == H5T_ENUM && dt == TFC_BOOL)))) {
        static const char *const cls[] = {"integer", "float", "time", "string", "bitfield", "opaque",
                                          "compound", "reference", "enum", "variable-length", "array"};
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "Layer #%d (named \"%s\"): weight \"%s\" holds %s data in the file, but the model's weight "
                       "has dtype %s (%s)",
                       k, layer, wname, fc >= 0 && fc < 11 ? cls[fc] : "unknown", tfc_dtype_name(dt), file);
        goto done;
    }
    if (!(t = tfc_tensor_new(dt, want->dims, want->rank, st))) goto done;
    if (tfc_tensor_num_elements(t) == 0) goto done;
    void *out = tfc_tensor_mutable_data(t);
    herr_t r;
    if (dt == TFC_BFLOAT16 && !bf16_bits) {
        /* No HDF5 conversion to bfloat16: read float32, then round. */
        if (!(tmpf = tfc_tensor_new(TFC_FLOAT, want->dims, want->rank, st))) goto done;
        float *f = tfc_tensor_mutable_data(tmpf);
        if ((r = H5Dread(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, f)) >= 0) {
            tfc_bfloat16 *b = out;
            for (int64_t i = 0, n = tfc_tensor_num_elements(t); i < n; i++) b[i] = tfc_bfloat16_from_float(f[i]);
        }
    } else if (dt == TFC_BOOL && fc == H5T_ENUM) {
        /* HDF5 converts no enum to integers; h5py's bool enum is one byte whose value is the truth value. */
        if (H5Tget_size(ftype) != 1) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: layer \"%s\" weight \"%s\": enum of %zu bytes for a bool "
                           "weight", file, layer, wname, H5Tget_size(ftype));
            goto done;
        }
        uint8_t *b = out;
        if ((mtype = H5Tcopy(ftype)) < 0) goto h5fail;
        if ((r = H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, b)) >= 0)
            for (int64_t i = 0, n = tfc_tensor_num_elements(t); i < n; i++) b[i] = b[i] != 0;
    } else {
        if ((mtype = h5_type(dt == TFC_BOOL ? TFC_UINT8 : dt, false)) < 0) goto h5fail;
        r = H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
        if (r >= 0 && dt == TFC_BOOL) {
            uint8_t *b = out;
            for (int64_t i = 0, n = tfc_tensor_num_elements(t); i < n; i++) b[i] = b[i] != 0;
        }
    }
    if (r < 0) goto h5fail;
    goto done;
h5fail:
    tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read layer \"%s\" weight \"%s\": %s", file, layer, wname,
                   h5_detail(det));
    tfc_tensor_unref(t);
    t = NULL;
done:
    if (st->code != TFC_OK) {
        tfc_tensor_unref(t);
        t = NULL;
    }
    tfc_tensor_unref(tmpf);
    close_id(mtype);
    close_id(ftype);
    close_id(space);
    close_id(d);
    return t;
}

/* One layer listed in the file with its weight names (positional pairing uses only those with weights). */
typedef struct saved_layer {
    const char *name;
    strlist weights;
} saved_layer;

bool tfc_model_load_weights(tfc_model *m, const char *path, tfc_status *st) {
    if (!m || !path) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "load_weights: NULL model or path");
    struct stat sb;
    if (stat(path, &sb) != 0) {
        int e = errno;
        return tfc_status_set(st, e == ENOENT || e == ENOTDIR ? TFC_NOT_FOUND : TFC_UNKNOWN, "%s: %s", path,
                              strerror(e));
    }
    tfc_status_clear(st);
    if (access(path, R_OK) != 0) {
        int e = errno;
        return tfc_status_set(st, e == EACCES ? TFC_PERMISSION_DENIED : TFC_UNKNOWN, "%s: %s", path, strerror(e));
    }
    if (S_ISDIR(sb.st_mode))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "load_weights %s: is a directory (a SavedModel or TF "
                              "checkpoint folder is not an HDF5 weights file)", path);
    char det[96];
    h5_quiet q;
    quiet_begin(&q);
    hid_t f = -1, root = -1;
    strlist names = {0};
    saved_layer *saved = NULL;
    int n_saved = 0, n_layers = 0, n_with = 0;
    tfc_layer **layers = NULL, **with = NULL;
    tfc_tensor **vals = NULL, **old = NULL;
    tfc_variable **vars = NULL;
    int n_vals = 0, cap_vals = 0;
    bool ok = false, found;
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: not an HDF5 file (no HDF5 signature)%s%s", path,
                       is < 0 && *h5_detail(det) ? ": " : "", is < 0 ? det : "");
        goto done;
    }
    if ((f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: corrupt or truncated HDF5 file: %s", path, h5_detail(det));
        goto done;
    }
    /* A full-model file (model.save('m.h5')) keeps the same layout under /model_weights. */
    if (H5Aexists(f, "layer_names") <= 0 && H5Aexists(f, "layer_names0") <= 0 &&
        H5Lexists(f, "model_weights", H5P_DEFAULT) > 0)
        root = H5Gopen2(f, "model_weights", H5P_DEFAULT);
    else
        root = H5Gopen2(f, "/", H5P_DEFAULT);
    if (root < 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot open the root group: %s", path, h5_detail(det));
        goto done;
    }
    if (!read_str_attr(root, "layer_names", path, "the root group", &names, &found, st)) goto done;
    if (!found) {
        if (H5Lexists(root, "layers", H5P_DEFAULT) > 0 || H5Lexists(root, "vars", H5P_DEFAULT) > 0)
            tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: a Keras 3 weights file (layers/<name>/vars layout); "
                           "load_weights reads the Keras 2 HDF5 layout", path);
        else
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
    if (!(layers = model_layers(m, &n_layers, st))) goto done;
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
                           h5_detail(det));
            tfc_free(v);
            goto done;
        }
        for (int i = 0; i < nv; i++) {
            tfc_tensor *t = read_weight(g, saved[k].weights.s[i], v[i], k, lname, path, st);
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
    /* Everything read and checked: now assign. Shapes and dtypes match, so only an allocation can fail; then
     * the values assigned so far are put back (assigning shares buffers, so holding the old values costs
     * nothing). */
    if (n_vals > 0 && !(old = tfc_calloc((size_t)n_vals, sizeof *old))) {
        tfc_status_oom(st, "weights", (size_t)n_vals * sizeof *old);
        goto done;
    }
    tfc_ctx *ctx = m->ctx ? m->ctx : n_with ? with[0]->ctx : NULL;
    int assigned = 0;
    for (; assigned < n_vals; assigned++) {
        old[assigned] = tfc_tensor_ref((tfc_tensor *)tfc_variable_value(vars[assigned]));
        if (!tfc_variable_assign(ctx, vars[assigned], vals[assigned], st)) break;
    }
    if (assigned < n_vals) {
        tfc_status keep = *st, ignore = TFC_STATUS_INIT;
        for (int i = 0; i <= assigned; i++)
            if (old[i]) tfc_variable_assign(ctx, vars[i], old[i], &ignore);
        *st = keep;
        goto done;
    }
    ok = true;
done:
    for (int i = 0; old && i < n_vals; i++) tfc_tensor_unref(old[i]);
    tfc_free(old);
    for (int i = 0; i < n_vals; i++) tfc_tensor_unref(vals[i]);
    tfc_free(vals);
    tfc_free(vars);
    tfc_free(with);
    tfc_free(layers);
    for (int i = 0; i < n_saved; i++) strlist_free(&saved[i].weights);
    if (saved && n_saved < names.n) strlist_free(&saved[n_saved].weights);
    tfc_free(saved);
    strlist_free(&names);
    close_id(root);
    close_id(f);
    quiet_end(&q);
    if (ok) tfc_status_clear(st);
    return ok;
}
