/* model.save_weights / model.load_weights: the layout follows the file name as Keras does ("x.weights.h5":
 * Keras 3's layers/<name>/vars tree, saving_keras3.c; any other name: Keras 2's layer_names layout,
 * saving_hdf5.c), and loading detects the layout from the file's contents, so both read back whatever
 * their name. Also the atomic HDF5 file helpers the full-model writers share. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keras/hdf5_io.h"
#include "keras/saving_internal.h"
#include "platform/files.h"

bool tfc_keras_has_suffix(const char *path, const char *suffix) {
    size_t n = strlen(path), k = strlen(suffix);
    return n >= k && strcmp(path + n - k, suffix) == 0;
}

bool tfc_keras_h5_write_file(const char *path, const char *op, bool (*fill)(hid_t f, void *arg, tfc_status *st),
                             void *arg, tfc_status *st) {
    size_t tn = strlen(path) + 32;
    char *tmp = tfc_malloc(tn);
    if (!tmp) return tfc_status_oom(st, "path", tn);
    snprintf(tmp, tn, "%s.tmp.%ld", path, (long)getpid());
    tfc_status_clear(st);
    char det[96];
    tfc_h5_quiet q;
    tfc_h5_quiet_begin(&q);
    hid_t f = -1, fcpl = -1;
    bool ok = false, created = false;
    if (!tfc_h5_create_tmp(tmp, path, st)) goto done;
    created = true;
    /* no timestamps (as h5py's default), so equal models give byte-identical files */
    if ((fcpl = H5Pcreate(H5P_FILE_CREATE)) < 0 || (f = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT)) < 0) {
        tfc_status_set(st, TFC_UNKNOWN, "%s %s: cannot create HDF5 file %s: %s", op, path, tmp, tfc_h5_detail(det));
        goto done;
    }
    if (!fill(f, arg, st)) goto done;
    hid_t fc = f;
    f = -1;
    if (H5Fclose(fc) < 0) {
        tfc_status_set(st, TFC_UNKNOWN, "%s %s: cannot finish %s: %s", op, path, tmp, tfc_h5_detail(det));
        goto done;
    }
    /* The data must be on disk before the rename makes it the file: otherwise a crash could leave a renamed
     * but empty file in place of the old one. */
    if (!tfc_h5_sync_file(tmp) || rename(tmp, path) != 0) {
        int e = errno;
        tfc_status_set(st, tfc_errno_code(e), "%s %s: cannot replace it with %s: %s", op, path, tmp, strerror(e));
        goto done;
    }
    created = false;
    ok = true;
done:
    tfc_h5_close(f);
    tfc_h5_close(fcpl);
    if (created) unlink(tmp);
    tfc_h5_quiet_end(&q);
    tfc_free(tmp);
    if (ok) tfc_status_clear(st);
    return ok;
}

hid_t tfc_keras_h5_open_file(const char *path, const char *op, tfc_status *st) {
    struct stat sb;
    if (stat(path, &sb) != 0) {
        int e = errno;
        tfc_status_set(st, e == ENOENT || e == ENOTDIR ? TFC_NOT_FOUND : TFC_UNKNOWN, "%s: %s", path, strerror(e));
        return -1;
    }
    if (access(path, R_OK) != 0) {
        int e = errno;
        tfc_status_set(st, e == EACCES ? TFC_PERMISSION_DENIED : TFC_UNKNOWN, "%s: %s", path, strerror(e));
        return -1;
    }
    if (S_ISDIR(sb.st_mode)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s %s: is a directory (a SavedModel or TF checkpoint folder is "
                       "not an HDF5 file)", op, path);
        return -1;
    }
    char det[96];
    htri_t is = H5Fis_hdf5(path);
    if (is <= 0) {
        tfc_status_set(st, TFC_DATA_LOSS, "%s: not an HDF5 file (no HDF5 signature)%s%s", path,
                       is < 0 && *tfc_h5_detail(det) ? ": " : "", is < 0 ? det : "");
        return -1;
    }
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) tfc_status_set(st, TFC_DATA_LOSS, "%s: corrupt or truncated HDF5 file: %s", path, tfc_h5_detail(det));
    return f;
}

typedef struct {
    tfc_model *m;
    const char *path;
    bool keras3;
} weights_job;

static bool fill_weights(hid_t f, void *arg, tfc_status *st) {
    weights_job *j = arg;
    /* Keras 3's save_weights saves the model object, the optimizer included once it has variables */
    return j->keras3 ? tfc_keras3_write(j->m, f, true, j->path, st) : tfc_keras_legacy_write(j->m, f, j->path, st);
}

bool tfc_model_save_weights(tfc_model *m, const char *path, tfc_status *st) {
    if (!m || !path || !*path) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "save_weights: NULL model or path");
    weights_job j = {m, path, tfc_keras_has_suffix(path, ".weights.h5")};
    return tfc_keras_h5_write_file(path, "save_weights", fill_weights, &j, st);
}

bool tfc_model_load_weights(tfc_model *m, const char *path, tfc_status *st) {
    if (!m || !path) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "load_weights: NULL model or path");
    tfc_status_clear(st);
    tfc_h5_quiet q;
    tfc_h5_quiet_begin(&q);
    hid_t f = tfc_keras_h5_open_file(path, "load_weights", st);
    bool ok = false;
    if (f >= 0) {
        bool legacy = H5Aexists(f, "layer_names") > 0 || H5Aexists(f, "layer_names0") > 0 ||
                      H5Lexists(f, "model_weights", H5P_DEFAULT) > 0;
        if (!legacy && tfc_keras3_is_layout(f)) ok = tfc_keras3_read(m, f, true, path, st);
        else ok = tfc_keras_legacy_read(m, f, path, st);
    }
    tfc_h5_close(f);
    tfc_h5_quiet_end(&q);
    if (ok) tfc_status_clear(st);
    return ok;
}
