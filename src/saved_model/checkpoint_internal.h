/* Internal: the `checkpoint` state file (CheckpointState in text format, as TensorFlow's checkpoint_management
 * writes it) and the object-graph helpers shared by checkpoint save/restore and the manager. */
#ifndef TFC_SAVED_MODEL_CHECKPOINT_INTERNAL_H
#define TFC_SAVED_MODEL_CHECKPOINT_INTERNAL_H

#include <stdbool.h>

#include "tfc/checkpoint.h"

/* CheckpointState (tensorflow/python/checkpoint/checkpoint_state.proto). Paths as stored: relative to the
 * directory when TensorFlow or tfc saved them there. */
typedef struct {
    char *model_checkpoint_path;
    char **all_model_checkpoint_paths;
    int n_paths;
    double *all_model_checkpoint_timestamps;
    int n_timestamps;
    double last_preserved_timestamp;
} tfc_ckpt_state;

/* Reads `<dir>/checkpoint`. NOT_FOUND when there is none; DATA_LOSS naming the file and line for text that is
 * not a CheckpointState. */
bool tfc_ckpt_state_read(const char *dir, tfc_ckpt_state *out, tfc_status *st);
/* Writes `<dir>/checkpoint` atomically. */
bool tfc_ckpt_state_write(const char *dir, const tfc_ckpt_state *s, tfc_status *st);
void tfc_ckpt_state_free(tfc_ckpt_state *s); /* leaves *s zeroed */
/* Adds one to c's save_counter (Checkpoint.save and CheckpointManager.save number checkpoints with it). */
bool tfc_ckpt_bump_counter(tfc_checkpoint *c, tfc_status *st);
/* Makes path the model_checkpoint_path of its directory's `checkpoint` file, appending it to (keep_all) or
 * replacing all_model_checkpoint_paths, as Checkpoint.save's update_checkpoint_state does. */
bool tfc_ckpt_record_latest(const char *path, bool keep_all, tfc_status *st);
/* dir joined with path, unless path is absolute; a new tfc_malloc'd string (NULL when out of memory). */
char *tfc_ckpt_join(const char *dir, const char *path);
/* Whether `<prefix>.index` exists. */
bool tfc_ckpt_exists(const char *prefix);
/* A tfc_malloc'd copy of s (NULL when out of memory). */
char *tfc_ckpt_strdup(const char *s);

/* ---- the object graph as saved: trackables and variables numbered breadth-first from the root ---- */
typedef struct {
    char *local_name; /* unescaped */
    int node;
} tfc_ckpt_child;

typedef struct {
    tfc_trackable *obj; /* exactly one of obj and var is set */
    tfc_variable *var;
    char *path; /* escaped local names joined by '/' ("" for the root) */
    tfc_ckpt_child *children;
    int n_children;
    int slot_of_var, slot_of_opt; /* slot variables: node of the original variable and of the optimizer, else -1 */
    char *slot_name;
    bool has_values;
} tfc_ckpt_node;

typedef struct {
    tfc_ckpt_node *nodes;
    int n, cap;
} tfc_ckpt_graph;

/* Numbers everything reachable from root breadth-first (children in the order tracked), then adds a node for
 * each slot variable of a reachable optimizer whose original variable is reachable. */
bool tfc_ckpt_graph_build(tfc_trackable *root, tfc_ckpt_graph *g, tfc_status *st);
void tfc_ckpt_graph_free(tfc_ckpt_graph *g);
/* The bundle key of a variable node: "<path>/.ATTRIBUTES/VARIABLE_VALUE" (or the slot form) into buf. */
char *tfc_ckpt_node_key(const tfc_ckpt_graph *g, int node);
/* The TrackableObjectGraph of g, serialised (a tfc_malloc'd buffer). */
bool tfc_ckpt_graph_serialize(const tfc_ckpt_graph *g, uint8_t **out, size_t *size, tfc_status *st);
/* Runs every object's saving (restored false) or restored hook, in node order. */
void tfc_ckpt_graph_hooks(const tfc_ckpt_graph *g, bool restored);
/* Slot records of optimizer t: i-th (original, name, slot); false past the end. */
bool tfc_trackable_slot_at(const tfc_trackable *t, int i, tfc_variable **original, const char **name,
                           tfc_variable **slot);

/* The non-variable values of t (tfc_trackable_track_attribute): *n of them. */
typedef struct {
    char *name;
    char *suffix;     /* after the checkpoint key in the bundle's tensor key ("" for none) */
    tfc_tensor *(*save)(void *user, tfc_status *st);
    bool (*restore)(void *user, const tfc_tensor *value, tfc_status *st);
    void *user;
} tfc_ckpt_attr;
const tfc_ckpt_attr *tfc_trackable_attrs(const tfc_trackable *t, int *n);
/* The checkpoint key of attribute `name` of object node `node`: "<path>/.ATTRIBUTES/<name>", followed by suffix
 * when not NULL (the bundle's tensor key) (tfc_malloc'd). */
char *tfc_ckpt_attr_key(const tfc_ckpt_graph *g, int node, const char *name, const char *suffix);

#endif
