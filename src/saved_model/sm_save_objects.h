/* Internal: the SavedObjectGraph and the checkpoint's TrackableObjectGraph of a model tfc saves (sm_save_objects.c). */
#ifndef TFC_SAVED_MODEL_SM_SAVE_OBJECTS_H
#define TFC_SAVED_MODEL_SM_SAVE_OBJECTS_H

#include <stddef.h>
#include <stdint.h>

#include "tfc/function.h"

/* One exported signature as its concrete function sees it: inputs and outputs in the function's order. */
typedef struct tfc_sm_sig_objects {
    const char *key, *fname;
    int n_in, n_out, n_caps;
    const char *const *in_keys;
    const tfc_tensor_spec *in_specs;
    const char *const *out_keys;
    const tfc_tensor_spec *out_specs;
    const int *bound;     /* per capture: the index of the captured variable, -1 for another tensor */
} tfc_sm_sig_objects;

/* The bundle key of variable `name` in an object-based checkpoint: "<name, '.'->'..' '/'->'.S'>/.ATTRIBUTES/
 * VARIABLE_VALUE". */
void tfc_sm_checkpoint_key(const char *name, char *out, size_t size);

/* Packs the SavedObjectGraph (root with the variables as children by name and `signatures`, a signature_map of
 * bare concrete functions: keyword arguments, ((), {key: TensorSpec}) inputs, {key: TensorSpec} outputs, the
 * captured variables as bound_inputs) into *og_bytes and the TrackableObjectGraph (root -> variables, each with
 * its VARIABLE_VALUE key) into *ckpt_bytes (both tfc_free). When TensorFlow's structured signatures cannot
 * describe a signature (keys not in sorted order, which is how TensorFlow flattens dicts, or a captured tensor that
 * is not a variable), returns true with both NULL: the model is then saved without object graph. */
bool tfc_sm_object_graphs(tfc_variable *const *vars, const char *const *names, int n_vars, const tfc_sm_sig_objects *sigs,
                          int n_sigs, uint8_t **og_bytes, size_t *og_size, uint8_t **ckpt_bytes, size_t *ckpt_size,
                          tfc_status *st);

#endif
