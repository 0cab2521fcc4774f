/* Whole-model files: Keras's model.save(filepath) and keras.saving.load_model(filepath).
 *   "m.keras"  the Keras 3 archive: a ZIP of metadata.json, config.json (the model in Keras 3's serialization,
 *              with build_config and compile_config) and model.weights.h5 (Keras 3's layers/<name>/vars tree,
 *              with the optimizer's state under optimizer/vars), as keras.Model.save writes it; Keras 3's
 *              keras.saving.load_model reads it.
 *   "m.h5"     the legacy HDF5 model (tf.keras 2 / tf_keras): root attrs model_config, training_config, backend,
 *              keras_version, the weights under /model_weights, as tf_keras.Model.save(..., save_format="h5").
 * Weights-only files are tfc_model_save_weights / tfc_model_load_weights (tfc/keras/model.h). */
#ifndef TFC_KERAS_SAVING_H
#define TFC_KERAS_SAVING_H

#include "tfc/keras/model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* keras.Model.save(filepath): the format follows the suffix (".keras", or ".h5"/".hdf5"); any other suffix is
 * INVALID_ARGUMENT, as Keras 3. A compiled model's optimizer, loss and metrics are saved as its
 * compile_config / training_config, and its optimizer state (once it has trained) with the weights. The file
 * is written to a temporary name, synced and renamed over filepath, so an existing file is never left
 * half-written. UNIMPLEMENTED for subclassed models (they have no config). */
TFC_API bool tfc_model_save(tfc_model *m, const char *filepath, tfc_status *st);
/* keras.saving.load_model(filepath) / tf_keras.models.load_model: the format is detected from the contents
 * (a ZIP is a .keras archive, an HDF5 file a legacy model), not the name. The model is rebuilt from its config
 * (unknown layer classes are INVALID_ARGUMENT "Unknown layer: 'X'"), compiled when the file has a
 * compile/training config, and its weights and optimizer state restored. NOT_FOUND for a missing file;
 * DATA_LOSS for a corrupt or truncated file or a missing member; INVALID_ARGUMENT for members over their size
 * limits (config.json 64 MiB, model.weights.h5 16 GiB) or weights whose count, shape or dtype do not match
 * the config; messages name the file and the member or field. The caller frees the model. */
TFC_API tfc_model *tfc_keras_load_model(tfc_ctx *ctx, const char *filepath, tfc_status *st);

/* model.export(export_dir) (tf_keras and Keras 3, format "tf_saved_model"): writes the model as a SavedModel for
 * serving (TF Serving, tf.saved_model.load, saved_model_cli; tfc_saved_model_load) through tfc_saved_model_save:
 * one signature `serving_default` running the model's call in inference mode (Dropout off, BatchNormalization
 * with its moving statistics), with an input per model input keyed by its Input layer's name (a Sequential
 * model's "<first layer>_input", "input_1", or the name given; Keras 3 calls unnamed inputs "keras_tensor_N"
 * instead), the model's input dtypes and shapes with an unknown batch dim, and outputs "output_0",
 * "output_1", ... in the model's order; the weights as variables (variables/, and attributes of the root object
 * named as the weights). For a servable layout pass a versioned folder ("models/fashion/1"); an existing folder
 * there is replaced. Errors:
 *   INVALID_ARGUMENT  a model without known inputs (an unbuilt Sequential model, a subclassed model), two inputs
 *                     with one name, more than 8 inputs or outputs
 *   others            the layers' errors while tracing the call, tfc_saved_model_save's (files), each message
 *                     starting "model.export(<dir>): " */
TFC_API bool tfc_model_export(tfc_model *m, const char *export_dir, tfc_status *st);

/* A custom layer class's constructor from its config: config_json is the layer's get_config object (the base
 * keys name, trainable, dtype included); returns a new floating layer (tfc_layer_alloc with the config's name),
 * or NULL with st set. */
typedef tfc_layer *(*tfc_custom_layer_fn)(const char *config_json, void *user, tfc_status *st);
/* keras.saving.register_keras_serializable / load_model(custom_objects=...): registers (process-wide) the
 * constructor of class_name, so that model configs naming it (as class_name, or a registered_name
 * "package>class_name") load; its get_config (tfc_layer_class.get_config) writes the config back. from_config
 * NULL unregisters. Without a registration, loading fails with INVALID_ARGUMENT "Unknown layer: 'X'. ...",
 * Keras's message. INVALID_ARGUMENT for an empty or over-long (>= 128 bytes) name, RESOURCE_EXHAUSTED past 64
 * classes. */
TFC_API bool tfc_keras_register_layer(const char *class_name, tfc_custom_layer_fn from_config, void *user,
                                      tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
