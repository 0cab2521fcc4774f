/* Internal: the Keras file layouts shared by save_weights / load_weights (saving_weights.c) and the full-model
 * files (.keras in saving_keras_zip.c, .h5 in saving_model_h5.c). */
#ifndef TFC_KERAS_SAVING_INTERNAL_H
#define TFC_KERAS_SAVING_INTERNAL_H

#include <hdf5.h>

#include "keras/keras_internal.h"

/* keras_version written into Keras 2 layouts (tf.keras 2.4 with h5py 2: every Keras 2 reader accepts it) and
 * into Keras 3 archives' metadata.json. */
#define TFC_KERAS2_VERSION "2.4.0"
#define TFC_KERAS3_VERSION "3.15.1"

/* ---- Keras 2 layout (saving_hdf5.c) ---- */
/* Writes layer_names, backend, keras_version and one group per layer into root (the file root of a weights
 * file, /model_weights of a full-model .h5). */
bool tfc_keras_legacy_write(tfc_model *m, hid_t root, const char *path, tfc_status *st);
/* Reads the Keras 2 layout from f (its root, or /model_weights of a full-model file) into m, positionally;
 * nothing is assigned unless everything matches. */
bool tfc_keras_legacy_read(tfc_model *m, hid_t f, const char *path, tfc_status *st);

/* optimizer_weights of a full-model file: attr weight_names, one dataset per variable (named by it). */
bool tfc_keras_legacy_write_optimizer(hid_t f, tfc_variable *const *v, int n, const char *path, tfc_status *st);
/* Reads optimizer_weights into vals[0..n) (new tensors) for the variables v, positionally: n, 0 when the file
 * has none or a different count (a warning, as tf.keras), -1 with st set when a value is unreadable or of
 * another shape or dtype. */
int tfc_keras_legacy_read_optimizer(hid_t f, tfc_variable *const *v, int n, tfc_tensor **vals, const char *path,
                                    tfc_status *st);

/* ---- Keras 3 layout (saving_keras3.c) ---- */
/* Writes the layers/<key>/vars tree of m into root, and with include_optimizer the compiled optimizer's state
 * (optimizer/vars: iterations, learning_rate, slots) once it has any. */
bool tfc_keras3_write(tfc_model *m, hid_t root, bool include_optimizer, const char *file, tfc_status *st);
/* True when root holds Keras 3's tree (a layers or vars group). */
bool tfc_keras3_is_layout(hid_t root);
/* Reads the tree into m (all checked before anything is assigned); with load_optimizer and an optimizer/vars
 * group, builds the compiled optimizer's slots and restores them. */
bool tfc_keras3_read(tfc_model *m, hid_t root, bool load_optimizer, const char *file, tfc_status *st);

/* ---- Keras 3 config (config_keras3.c) ---- */
/* The model serialized as Keras 3's config.json: {"module", "class_name", "config", "registered_name",
 * "build_config"?, "compile_config"?}; caller deletes. */
cJSON *tfc_keras3_model_config(tfc_model *m, tfc_status *st);
/* Compiles m from a compile_config (Keras 3's, or a legacy .h5 training_config: optimizer_config, loss,
 * metrics); names and objects tfc does not know are INVALID_ARGUMENT naming `file`. */
bool tfc_keras_compile_from_config(tfc_model *m, const cJSON *cc, const char *file, tfc_status *st);

/* ---- the optimizer in Keras 3's terms (saving_optimizer.c) ---- */
/* {"module": "keras.optimizers", "class_name", "config", "registered_name"} with the config Keras 3 accepts. */
cJSON *tfc_keras3_optimizer_config(const tfc_optimizer *o, tfc_status *st);
/* The optimizer's state in Keras 3's order (iterations, then the slots as the new family creates them for
 * train_vars; SGD without momentum has none, Nadam's u_product comes last): the count written to out (0 with
 * a warning when a legacy optimizer's state has no Keras 3 form, -1 with st set on errors). */
int tfc_keras3_optimizer_state(tfc_optimizer *o, tfc_variable *const *train_vars, int n_train, tfc_variable **out,
                               int max, tfc_status *st);

/* ---- whole models (saving_keras_zip.c: .keras, saving_model_h5.c: legacy .h5) ---- */
bool tfc_keras_save_zip(tfc_model *m, const char *path, tfc_status *st);
/* Loads the archive at path, or, when data is not NULL, the size bytes at data (path then names it). */
tfc_model *tfc_keras_load_zip(tfc_ctx *ctx, const char *path, const void *data, size_t size, tfc_status *st);
bool tfc_keras_save_h5_model(tfc_model *m, const char *path, tfc_status *st);
tfc_model *tfc_keras_load_h5_model(tfc_ctx *ctx, const char *path, tfc_status *st);

/* ---- files (saving_weights.c) ---- */
/* Writes an HDF5 file atomically: fill(f, arg) on a new file at path.tmp.<pid>, closed, synced and renamed
 * over path. `op` names the operation in messages ("save_weights"). */
bool tfc_keras_h5_write_file(const char *path, const char *op, bool (*fill)(hid_t f, void *arg, tfc_status *st),
                             void *arg, tfc_status *st);
/* Opens an existing HDF5 file read-only: NOT_FOUND / PERMISSION_DENIED / INVALID_ARGUMENT (a directory) /
 * DATA_LOSS (not HDF5, corrupt) naming path and `op`. -1 on failure. */
hid_t tfc_keras_h5_open_file(const char *path, const char *op, tfc_status *st);
/* Whether path ends with suffix. */
bool tfc_keras_has_suffix(const char *path, const char *suffix);

#endif
