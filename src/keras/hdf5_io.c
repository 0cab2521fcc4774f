/* HDF5 helpers shared by Keras's weights layouts (saving_hdf5.c: Keras 2; saving_keras3.c: Keras 3): quiet error
 * handling, dtype mapping, one variable as a dataset both ways, and the temporary-file steps of an atomic save. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "keras/hdf5_io.h"

/* HDF5 prints its error stack to stderr by default; a library reports through its status instead. The
 * innermost HDF5 message ("truncated file: eof = ...") is appended to DATA_LOSS messages. */
void tfc_h5_quiet_begin(tfc_h5_quiet *q) {
    H5Eget_auto2(H5E_DEFAULT, &q->fn, &q->data);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    H5Eclear2(H5E_DEFAULT);
}

void tfc_h5_quiet_end(tfc_h5_quiet *q) {
    H5Eclear2(H5E_DEFAULT);
    H5Eset_auto2(H5E_DEFAULT, q->fn, q->data);
}

static herr_t first_error(unsigned n, const H5E_error2_t *e, void *arg) {
    if (n == 0 && e->desc) snprintf((char *)arg, 96, "%s", e->desc);
    return 0;
}

/* The innermost HDF5 error description, or "" (buf holds 96 bytes). */
const char *tfc_h5_detail(char *buf) {
    buf[0] = 0;
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, buf);
    return buf;
}

void tfc_h5_close(hid_t id) {
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
hid_t tfc_h5_type(tfc_dtype dt, bool file) {
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

/* A variable-length scalar string attribute, as h5py writes a Python str. */
bool tfc_h5_write_scalar_str(hid_t obj, const char *name, const char *value) {
    hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a = -1;
    bool ok = t >= 0 && s >= 0 && H5Tset_size(t, H5T_VARIABLE) >= 0 &&
              (a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT)) >= 0 && H5Awrite(a, t, &value) >= 0;
    tfc_h5_close(a);
    tfc_h5_close(s);
    tfc_h5_close(t);
    return ok;
}


/* model.layers as a new array (caller frees); *n gets the count. */
tfc_layer **tfc_keras_model_layers_array(tfc_model *m, int *n, tfc_status *st) {
    *n = tfc_model_layers(m, NULL, 0);
    tfc_layer **l = tfc_malloc((size_t)(*n > 0 ? *n : 1) * sizeof *l);
    if (!l) {
        tfc_status_oom(st, "model layers", (size_t)*n * sizeof *l);
        return NULL;
    }
    *n = tfc_model_layers(m, l, *n);
    return l;
}


bool tfc_h5_write_var(hid_t group, const char *dset, tfc_variable *v, const char *file, const char *what,
                      tfc_status *st) {
    char det[96];
    const char *wname = dset ? dset : tfc_variable_name(v);
    const tfc_tensor *val = tfc_variable_value(v);
    tfc_dtype dt = tfc_variable_dtype(v);
    const tfc_shape *s = tfc_variable_shape(v);
    hid_t ftype = tfc_h5_type(dt, true), mtype = tfc_h5_type(dt, false), space = -1, lcpl = -1, dcpl = -1, d = -1;
    if (ftype < 0 || mtype < 0) {
        tfc_h5_close(ftype);
        tfc_h5_close(mtype);
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "%s: %s has dtype %s, which HDF5 files cannot hold", file, what,
                              tfc_dtype_name(dt));
    }
    hsize_t dims[TFC_MAX_RANK];
    for (int i = 0; i < s->rank; i++) dims[i] = (hsize_t)s->dims[i];
    bool ok = (space = s->rank ? H5Screate_simple(s->rank, dims, NULL) : H5Screate(H5S_SCALAR)) >= 0 &&
              (lcpl = H5Pcreate(H5P_LINK_CREATE)) >= 0 && H5Pset_create_intermediate_group(lcpl, 1) >= 0 &&
              (dcpl = H5Pcreate(H5P_DATASET_CREATE)) >= 0 && H5Pset_obj_track_times(dcpl, 0) >= 0 &&
              (d = H5Dcreate2(group, wname, ftype, space, lcpl, dcpl, H5P_DEFAULT)) >= 0;
    if (ok && dt == TFC_BFLOAT16) ok = tfc_h5_write_scalar_str(d, "dtype", "bfloat16");
    if (ok && tfc_tensor_num_elements(val) > 0)
        ok = H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, tfc_tensor_data(val)) >= 0;
    if (!ok)
        tfc_status_set(st, TFC_INTERNAL, "%s: cannot write %s: %s", file, what, tfc_h5_detail(det));
    tfc_h5_close(d);
    tfc_h5_close(dcpl);
    tfc_h5_close(lcpl);
    tfc_h5_close(space);
    tfc_h5_close(mtype);
    tfc_h5_close(ftype);
    return ok;
}

/* Opens (creating) the temporary file first with open(2), so that failures carry errno's reason. */
bool tfc_h5_create_tmp(const char *tmp, const char *path, tfc_status *st) {
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

bool tfc_h5_sync_file(const char *path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    bool ok = fsync(fd) == 0;
    close(fd);
    return ok;
}

/* Reads one dataset into a new tensor of the variable's dtype and shape, checking shape and dtype kind
 * (floating data only for floating variables, integers or bools for the others; within a kind values convert
 * as Keras's np.asarray(value, dtype=variable.dtype) does). */
tfc_tensor *tfc_h5_read_var(hid_t g, const char *wname, tfc_variable *v, const char *what, const char *file,
                            tfc_status *st) {
    char det[96];
    tfc_dtype dt = tfc_variable_dtype(v);
    const tfc_shape *want = tfc_variable_shape(v);
    tfc_tensor *t = NULL, *tmpf = NULL;
    hid_t d = -1, space = -1, ftype = -1, mtype = -1;
    if (H5Lexists(g, wname, H5P_DEFAULT) <= 0 || (d = H5Dopen2(g, wname, H5P_DEFAULT)) < 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: %s: the file has no dataset \"%s\"%s%s", file, what, wname,
                       *tfc_h5_detail(det) ? ": " : "", det);
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
                       "%s has shape %s in the file, but the model's weight has shape %s (%s)", what,
                       TFC_KSHP(&got), TFC_KSHP(want), file);
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
                       "%s holds %s data in the file, but the model's weight has dtype %s (%s)", what, fc >= 0 && fc < 11 ? cls[fc] : "unknown", tfc_dtype_name(dt), file);
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
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %s: enum of %zu bytes for a bool weight", file,
                           what, H5Tget_size(ftype));
            goto done;
        }
        uint8_t *b = out;
        if ((mtype = H5Tcopy(ftype)) < 0) goto h5fail;
        if ((r = H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, b)) >= 0)
            for (int64_t i = 0, n = tfc_tensor_num_elements(t); i < n; i++) b[i] = b[i] != 0;
    } else {
        if ((mtype = tfc_h5_type(dt == TFC_BOOL ? TFC_UINT8 : dt, false)) < 0) goto h5fail;
        r = H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
        if (r >= 0 && dt == TFC_BOOL) {
            uint8_t *b = out;
            for (int64_t i = 0, n = tfc_tensor_num_elements(t); i < n; i++) b[i] = b[i] != 0;
        }
    }
    if (r < 0) goto h5fail;
    goto done;
h5fail:
    tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read %s: %s", file, what, tfc_h5_detail(det));
    tfc_tensor_unref(t);
    t = NULL;
done:
    if (st->code != TFC_OK) {
        tfc_tensor_unref(t);
        t = NULL;
    }
    tfc_tensor_unref(tmpf);
    tfc_h5_close(mtype);
    tfc_h5_close(ftype);
    tfc_h5_close(space);
    tfc_h5_close(d);
    return t;
}


/* ---- files in memory ------------------------------------------------------------------------------------- */

hid_t tfc_h5_mem_create(const char *what, tfc_status *st) {
    char det[96];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    if (fapl >= 0 && H5Pset_fapl_core(fapl, 64 * 1024, 0) >= 0)
        f = H5Fcreate(what, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (f < 0) tfc_status_set(st, TFC_INTERNAL, "%s: cannot create an HDF5 file in memory: %s", what, tfc_h5_detail(det));
    tfc_h5_close(fapl);
    return f;
}

bool tfc_h5_mem_image(hid_t f, void **data, size_t *size, const char *what, tfc_status *st) {
    char det[96];
    *data = NULL;
    *size = 0;
    ssize_t n = H5Fflush(f, H5F_SCOPE_GLOBAL) < 0 ? -1 : H5Fget_file_image(f, NULL, 0);
    if (n <= 0)
        return tfc_status_set(st, TFC_INTERNAL, "%s: cannot finish the HDF5 image: %s", what, tfc_h5_detail(det));
    void *buf = tfc_malloc((size_t)n);
    if (!buf) return tfc_status_oom(st, what, (size_t)n);
    if (H5Fget_file_image(f, buf, (size_t)n) != n) {
        tfc_free(buf);
        return tfc_status_set(st, TFC_INTERNAL, "%s: cannot copy the HDF5 image: %s", what, tfc_h5_detail(det));
    }
    *data = buf;
    *size = (size_t)n;
    return true;
}

hid_t tfc_h5_mem_open(const void *data, size_t size, const char *what, tfc_status *st) {
    char det[96];
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), f = -1;
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    if (size < 8 || memcmp(data, sig, 8) != 0) {
        tfc_h5_close(fapl);
        tfc_status_set(st, TFC_DATA_LOSS, "%s: not an HDF5 file (no HDF5 signature)", what);
        return -1;
    }
    /* Without H5LT's callbacks HDF5 copies the image, so `data` need only live through the open. */
    if (fapl >= 0 && H5Pset_fapl_core(fapl, 64 * 1024, 0) >= 0 && H5Pset_file_image(fapl, (void *)data, size) >= 0)
        f = H5Fopen(what, H5F_ACC_RDONLY, fapl);
    if (f < 0) tfc_status_set(st, TFC_DATA_LOSS, "%s: corrupt or truncated HDF5 file: %s", what, tfc_h5_detail(det));
    tfc_h5_close(fapl);
    return f;
}

/* ---- assigning loaded values ------------------------------------------------------------------------------ */

bool tfc_keras_assign_all(tfc_ctx *ctx, tfc_variable *const *vars, tfc_tensor *const *vals, int n, tfc_status *st) {
    /* Shapes and dtypes were checked, so only an allocation can fail; assigning shares buffers, so holding the
     * old values costs nothing. */
    if (n <= 0) return true;
    tfc_tensor **old = tfc_calloc((size_t)n, sizeof *old);
    if (!old) return tfc_status_oom(st, "weights", (size_t)n * sizeof *old);
    int assigned = 0;
    for (; assigned < n; assigned++) {
        old[assigned] = tfc_tensor_ref((tfc_tensor *)tfc_variable_value(vars[assigned]));
        if (!tfc_variable_assign(ctx, vars[assigned], vals[assigned], st)) break;
    }
    bool ok = assigned == n;
    if (!ok) {
        tfc_status keep = *st, ignore = TFC_STATUS_INIT;
        for (int i = 0; i <= assigned && i < n; i++)
            if (old[i]) tfc_variable_assign(ctx, vars[i], old[i], &ignore);
        *st = keep;
    }
    for (int i = 0; i < n; i++) tfc_tensor_unref(old[i]);
    tfc_free(old);
    return ok;
}
