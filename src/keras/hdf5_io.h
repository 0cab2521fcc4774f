/* Internal: HDF5 helpers shared by the Keras weights layouts (saving_hdf5.c: Keras 2's layer_names layout,
 * saving_keras3.c: Keras 3's layers/<name>/vars tree) and the full-model files (.keras, .h5). */
#ifndef TFC_KERAS_HDF5_IO_H
#define TFC_KERAS_HDF5_IO_H

#include <hdf5.h>

#include "keras/keras_internal.h"

/* HDF5 prints its error stack to stderr by default; a library reports through its status instead:
 * quiet_begin saves and disables the handler, quiet_end restores it. */
typedef struct {
    H5E_auto2_t fn;
    void *data;
} tfc_h5_quiet;
void tfc_h5_quiet_begin(tfc_h5_quiet *q);
void tfc_h5_quiet_end(tfc_h5_quiet *q);
/* The innermost HDF5 error description, or "" (buf holds 96 bytes). Returns buf. */
const char *tfc_h5_detail(char *buf);
/* Closes any HDF5 id (file, group, dataset, space, type, attribute, property list); ignores ids < 0. */
void tfc_h5_close(hid_t id);
/* A new HDF5 datatype for a tfc dtype: the file type (little-endian, as h5py writes on x86) or the memory type.
 * bfloat16 is its 16 raw bits (uint16; the dataset gets attr dtype = "bfloat16", as Keras 3 writes). -1 when
 * HDF5 has no equivalent. */
hid_t tfc_h5_type(tfc_dtype dt, bool file);
/* A variable-length scalar string attribute, as h5py writes a Python str. */
bool tfc_h5_write_scalar_str(hid_t obj, const char *name, const char *value);
/* model.layers as a new array (caller frees); *n gets the count. NULL (st set) when out of memory. */
tfc_layer **tfc_keras_model_layers_array(tfc_model *m, int *n, tfc_status *st);
/* Writes the variable's value as dataset `dset` (NULL: the variable's name; a path creates intermediate
 * groups) of group. `what` names the weight in messages ("layer \"dense\" weight \"kernel\""). */
bool tfc_h5_write_var(hid_t group, const char *dset, tfc_variable *v, const char *file, const char *what,
                      tfc_status *st);
/* Reads dataset `dset` of g into a new tensor of the variable's dtype and shape, checking the shape and the
 * dtype kind (floating data only for floating variables, integers or bools for the others; within a kind
 * values convert as Keras's np.asarray(value, dtype=variable.dtype)). INVALID_ARGUMENT for a shape or kind
 * mismatch, DATA_LOSS for a missing or unreadable dataset; messages start with `what` / name file. */
tfc_tensor *tfc_h5_read_var(hid_t g, const char *dset, tfc_variable *v, const char *what, const char *file,
                            tfc_status *st);
/* Creates (truncating) tmp with open(2), so that failures carry errno's reason; `path` names the target. */
bool tfc_h5_create_tmp(const char *tmp, const char *path, tfc_status *st);
/* fsync of a closed file by path. */
bool tfc_h5_sync_file(const char *path);

/* An HDF5 file held in memory (the core driver without a backing store): create, then tfc_h5_mem_image copies
 * the bytes out. -1 (st set, naming `what`) on failure. */
hid_t tfc_h5_mem_create(const char *what, tfc_status *st);
/* The image of a file made by tfc_h5_mem_create, flushed, as a new tfc_malloc'd buffer. */
bool tfc_h5_mem_image(hid_t f, void **data, size_t *size, const char *what, tfc_status *st);
/* Opens an HDF5 image read-only (data must outlive the file id). DATA_LOSS naming `what` when it is not a
 * readable HDF5 file. */
hid_t tfc_h5_mem_open(const void *data, size_t size, const char *what, tfc_status *st);
/* Assigns vals[i] to vars[i] for all i, or none: on a failure the values assigned so far are put back. */
bool tfc_keras_assign_all(tfc_ctx *ctx, tfc_variable *const *vars, tfc_tensor *const *vals, int n, tfc_status *st);

#endif
