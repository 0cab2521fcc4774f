/* Internal: the SavedModel module's shared pieces. saved_model.pb is unpacked by protobuf-c (proto/saved_model.proto)
 * and validated once (sm_read.c); loading (sm_load.c) imports the MetaGraphDef's graph into the context's function
 * library and binds variables restored from variables/ (sm_variables.c); saving is sm_save.c. */
#ifndef TFC_SAVED_MODEL_SM_INTERNAL_H
#define TFC_SAVED_MODEL_SM_INTERNAL_H

#include "graph/graph.h"
#include "graph/graphdef_io.h"
#include "proto/saved_model.pb-c.h"
#include "tfc/saved_model.h"

/* Reads and validates <dir>/saved_model.pb (caller frees with tfc_pb_free). Every field the loader and the tools
 * use is checked here, so later code may index without checks: DATA_LOSS for malformed bytes, INVALID_ARGUMENT
 * naming "<dir>/saved_model.pb" and the field path for bad values (empty or oversized tag sets, TensorInfos
 * without a name or with dtypes/shapes TensorFlow would refuse, object-graph references out of range,
 * duplicate tag sets); NOT_FOUND when the file is missing (saved_model.pbtxt is not read). */
Tensorflow__SavedModel *tfc_sm_read(const char *dir, tfc_status *st);
/* tfc_sm_read's checks on bytes already read; path names them in messages. */
Tensorflow__SavedModel *tfc_sm_parse(const void *data, size_t size, const char *path, tfc_status *st);
/* The MetaGraphDef whose tag set equals tags (as sets); NOT_FOUND listing the tag sets there are otherwise. */
Tensorflow__MetaGraphDef *tfc_sm_find_meta_graph(Tensorflow__SavedModel *sm, const char *dir, const char *const *tags,
                                                 int n_tags, tfc_status *st);
/* The SignatureDef `key` of mg, or NULL. */
Tensorflow__SignatureDef *tfc_sm_signature_def(const Tensorflow__MetaGraphDef *mg, const char *key);
/* Sorts map entries of a SignatureDef's inputs/outputs by key (TensorFlow's loaders and saved_model_cli order). */
void tfc_sm_sort_tensor_infos(Tensorflow__SignatureDef__InputsEntry **e, size_t n);

/* One signature of a loaded model. */
struct tfc_saved_model_signature {
    char *key;
    struct tfc_saved_model *model;
    const Tensorflow__SignatureDef *def;
    int n_in, n_out;
    tfc_saved_model_tensor_info *in, *out;
    tfc_gfunc *fn;          /* inputs (key order), then the restored variables' handles */
    tfc_status error;       /* why fn could not be imported (returned by calls), or OK */
};

struct tfc_saved_model {
    tfc_ctx *ctx;
    char *dir;
    Tensorflow__SavedModel *pb;
    Tensorflow__MetaGraphDef *mg;
    void *gd;                       /* tfc_graphdef of mg's graph */
    int n_sigs;
    tfc_saved_model_signature *sigs;
    int n_vars;
    tfc_variable **vars;            /* one per variable node of the graph (tfc_sm_is_variable_op), in node order */
    char **var_nodes;               /* their node names */
    /* tensors fed to every part of the graph tfc runs (after a signature's inputs): the handle of each resource
     * node (variables, restored or created once; lookup tables, created once) and each asset path tensor
     * (asset_file_def's, rewired to <dir>/assets/<filename>) */
    int n_fixed;
    tfc_graphdef_feed *fixed;
    char **fixed_names;
    tfc_tensor **fixed_values;      /* owned references */
};

/* A node whose op makes a variable: VarHandleOp, or TensorFlow 1's VariableV2 / Variable (imported as resource
 * variables: graph/graphdef_io.h). */
bool tfc_sm_is_variable_op(const char *op);

/* Fills m->fixed: one handle per resource node (restored variables' own; the others made by running their nodes
 * once) and one string scalar per asset_file_def entry; NOT_FOUND naming the file when an asset is missing. */
bool tfc_sm_bind_resources(tfc_saved_model *m, int id, tfc_status *st);
/* Runs the MetaGraphDef's init op once, if it has one: the `__saved_model_init_op` signature's target, else the
 * `saved_model_main_op` or `legacy_init_op` collection (TensorFlow 1's main_op / legacy_init_op), as
 * TensorFlow's loader does after restoring the variables (it initializes tables, e.g. from vocabulary assets). */
bool tfc_sm_run_init_op(tfc_saved_model *m, int id, tfc_status *st);

/* Creates m->vars (one per VarHandleOp node of the graph) with the values stored in <dir>/variables, found
 * through the object graphs (SavedObjectGraph variable -> TrackableObjectGraph node -> VARIABLE_VALUE key). */
bool tfc_sm_restore_variables(tfc_saved_model *m, tfc_status *st);

#endif
