/* tfc — TensorFlow's SavedModel directories (tensorflow/python/saved_model): saved_model.pb (a SavedModel
 * message: MetaGraphDefs with the graph, its function library, SignatureDefs and the SavedObjectGraph),
 * variables/ (a tensor bundle checkpoint) and fingerprint.pb.
 *
 * Loading implements the inference half of tf.saved_model.load(export_dir, tags): the variables are restored,
 * the init op runs once, and every signature (`loaded.signatures["serving_default"]`) is callable. Models written
 * by TensorFlow 2.x (tf.saved_model.save of a tf.Module, tf-keras model.save(dir), Keras 3 model.export(dir)) and
 * TensorFlow 1-style graphs (tf.compat.v1.saved_model.Builder / simple_save: VariableV2 reference variables,
 * restored as the SaverDef's restore op would, and a main_op / legacy_init_op) load when the ops their signatures
 * and init op reach have tfc kernels; the rest of the graph (the save/restore functions) may hold others. Lookup
 * tables (HashTableV2, MutableHashTableV2) and assets are supported: the tensors naming an asset
 * (asset_file_def, TensorFlow 1's saved_model_assets collection) are fed "<export_dir>/assets/<filename>", so an
 * init op filling a table from a vocabulary file reads the model's own copy. */
#ifndef TFC_SAVED_MODEL_H
#define TFC_SAVED_MODEL_H

#include "tfc/eager.h"
#include "tfc/function.h"
#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_saved_model tfc_saved_model;
typedef struct tfc_saved_model_signature tfc_saved_model_signature;

/* The tag of the serving graph (tf.saved_model.SERVING) and the default signature key
 * (tf.saved_model.DEFAULT_SERVING_SIGNATURE_DEF_KEY). */
#define TFC_SAVED_MODEL_SERVE "serve"
#define TFC_SAVED_MODEL_DEFAULT_SIGNATURE "serving_default"

/* Loads the SavedModel in export_dir, choosing the MetaGraphDef whose tag set equals tags (n_tags strings;
 * NULL/0 means {"serve"}), as tf.saved_model.load(export_dir, tags). Variables are created in ctx with the values
 * of variables/variables.{index,data-*}; signatures are imported into ctx's function library (ctx must outlive
 * the model). Errors, with TensorFlow's codes and messages naming the file and field:
 *   NOT_FOUND         no saved_model.pb, no MetaGraphDef with these tags, a variable missing from the checkpoint, an
 *                     asset file missing from assets/ (naming it)
 *   DATA_LOSS         truncated or malformed saved_model.pb or checkpoint (CRC mismatch, short data)
 *   INVALID_ARGUMENT  bad field values (dtypes, shapes, node references, object-graph ids out of range), a
 *                     checkpoint value whose dtype or shape differs from its variable
 * A signature that cannot be imported (an op tfc lacks, sparse or composite tensors: UNIMPLEMENTED, NOT_FOUND)
 * does not fail the load: its calls return that error. The init op's errors (`__saved_model_init_op`, else the
 * saved_model_main_op / legacy_init_op collection; e.g. a vocabulary line that does not parse) fail the load,
 * prefixed with export_dir and the init op's name. Caller owns the result (tfc_saved_model_free). */
TFC_API tfc_saved_model *tfc_saved_model_load(tfc_ctx *ctx, const char *export_dir, const char *const *tags,
                                              int n_tags, tfc_status *st);
TFC_API void tfc_saved_model_free(tfc_saved_model *m); /* NULL-safe; frees its variables and signatures */

/* Signatures other than TensorFlow's internal `__saved_model_init_op`, sorted by key (loaded.signatures). */
TFC_API int tfc_saved_model_num_signatures(const tfc_saved_model *m);
/* Signature i (0 <= i < num_signatures), or NULL; borrowed from m. */
TFC_API tfc_saved_model_signature *tfc_saved_model_signature_at(tfc_saved_model *m, int i);
/* The signature with this key (loaded.signatures[key]), or NULL; borrowed from m. */
TFC_API tfc_saved_model_signature *tfc_saved_model_signature_find(tfc_saved_model *m, const char *key);

/* A signature input or output: its key, the graph tensor it names ("serving_default_x:0"), dtype and shape
 * (rank -1: unknown rank; dims -1: unknown), as SignatureDef's TensorInfo. */
typedef struct tfc_saved_model_tensor_info {
    const char *key;
    const char *name;
    tfc_dtype dtype;
    tfc_shape shape;
} tfc_saved_model_tensor_info;

/* The signature's key ("serving_default"), borrowed from the model. */
TFC_API const char *tfc_saved_model_signature_key(const tfc_saved_model_signature *s);
/* SignatureDef.method_name ("tensorflow/serving/predict"). */
TFC_API const char *tfc_saved_model_signature_method(const tfc_saved_model_signature *s);
/* Inputs and outputs are in key order (the order of `structured_input_signature` and of the result dict). */
TFC_API int tfc_saved_model_signature_num_inputs(const tfc_saved_model_signature *s);
TFC_API int tfc_saved_model_signature_num_outputs(const tfc_saved_model_signature *s);
/* Input / output i (borrowed), or NULL when out of range. */
TFC_API const tfc_saved_model_tensor_info *tfc_saved_model_signature_input(const tfc_saved_model_signature *s, int i);
TFC_API const tfc_saved_model_tensor_info *tfc_saved_model_signature_output(const tfc_saved_model_signature *s, int i);

/* Calls the signature, as loaded.signatures[key](**inputs): inputs[i] feeds input i (key order); outputs[i]
 * receives a new tensor (caller owns it) for output i. n_inputs must equal num_inputs and max_outputs must be
 * at least num_outputs. INVALID_ARGUMENT when an input's dtype or known dims differ from the signature's,
 * naming the key; errors of the ops run otherwise (outputs are then all NULL). */
TFC_API bool tfc_saved_model_signature_call(tfc_saved_model_signature *s, tfc_tensor *const *inputs, int n_inputs,
                                            tfc_tensor **outputs, int max_outputs, tfc_status *st);

/* The MetaGraphDef's SignatureDefs serialized as a tensorflow.serving.SignatureDefMap message (field 1: a map entry
 * per signature, `__saved_model_init_op` included), the "signature_def" metadata of TensorFlow Serving's
 * GetModelMetadata. Returns a new buffer of *len bytes (free with tfc_free), or NULL with RESOURCE_EXHAUSTED. */
TFC_API void *tfc_saved_model_signature_def_map(const tfc_saved_model *m, size_t *len, tfc_status *st);

/* The variables restored from variables/ (one slot per VarHandleOp, VariableV2 or Variable node of the graph, in
 * graph order), borrowed from m; NULL for a variable the checkpoint does not hold (no saved function captures it,
 * or TensorFlow 1's saver does not restore it: asset-path variables, variables the init op sets). */
TFC_API int tfc_saved_model_num_variables(const tfc_saved_model *m);
TFC_API tfc_variable *tfc_saved_model_variable(const tfc_saved_model *m, int i);

/* ---- saving ---- */

/* A signature to export: a traced concrete function (tfc_function_get_concrete_function) whose captures are
 * variables' handles (saved to variables/, restored by the loader) or eager tensors (saved as constants). */
typedef struct tfc_saved_model_signature_spec {
    const char *key;                  /* "serving_default" (TFC_SAVED_MODEL_DEFAULT_SIGNATURE) */
    tfc_concrete_function *function;
    const char *const *input_keys;    /* one per input; NULL: the function's argument names */
    const char *const *output_keys;   /* one per output; NULL: "output_0", "output_1", ... */
    const char *method_name;          /* NULL: "tensorflow/serving/predict" */
} tfc_saved_model_signature_spec;

/* Writes a SavedModel with the 'serve' tag set, as tf.saved_model.save(obj, export_dir, signatures=...) does for
 * its signatures: saved_model.pb (the functions and their callees in the library, a Placeholder per input named
 * "<key>_<input_key>", a VarHandleOp per captured variable and a SaverDef with RestoreV2/SaveV2 subgraphs),
 * variables/variables.{index,data-00000-of-00001} (a tensor bundle of the variables' current values) and
 * fingerprint.pb. TensorFlow's tf.saved_model.load, saved_model_cli and TF Serving read it; tfc_saved_model_load
 * too. The files are written into "<export_dir>.tmp-<pid>" and renamed to export_dir (a folder already there is
 * replaced, and survives a crash before the rename). When every signature's input and output keys are in sorted
 * order (TensorFlow flattens dicts by key) and its captures are variables, a SavedObjectGraph is written too (a
 * root object with the variables as attributes by name and `signatures`) with an object-based checkpoint
 * ("<name>/.ATTRIBUTES/VARIABLE_VALUE" keys), which tf.saved_model.load restores as Python objects; otherwise
 * TensorFlow loads the signatures through the SaverDef (its TF1 path). Errors:
 *   INVALID_ARGUMENT  no signature, a missing or duplicate key, a function not traced in ctx
 *   other codes       from writing files (PERMISSION_DENIED, RESOURCE_EXHAUSTED, ...), naming the path */
TFC_API bool tfc_saved_model_save(tfc_ctx *ctx, const char *export_dir, const tfc_saved_model_signature_spec *sigs,
                                  int n_sigs, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
