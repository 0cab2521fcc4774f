/* tfc — TensorFlow checkpoints (tf.train.Checkpoint's files): reading a checkpoint's variables by name.
 * A checkpoint is a tensor bundle: `<prefix>.index` (a table of tensor names, dtypes, shapes and checksums)
 * and `<prefix>.data-00000-of-00001` (the bytes). Files written by TensorFlow 2.x open here, and the reverse. */
#ifndef TFC_CHECKPOINT_H
#define TFC_CHECKPOINT_H

#include "tfc/eager.h"
#include "tfc/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_checkpoint_reader tfc_checkpoint_reader;


/* tf.train.latest_checkpoint(checkpoint_dir): the prefix named by model_checkpoint_path in
 * `<checkpoint_dir>/checkpoint` (joined to checkpoint_dir when relative), written into out (size bytes).
 * NOT_FOUND when there is no state file, it names no checkpoint, or that checkpoint's index is missing (where
 * TensorFlow returns None); DATA_LOSS for a state file that is not a CheckpointState; OUT_OF_RANGE when out is
 * too small. */
TFC_API bool tfc_latest_checkpoint(const char *checkpoint_dir, char *out, size_t size, tfc_status *st);

/* tf.train.load_checkpoint(ckpt_dir_or_file): opens the checkpoint whose files start with the prefix (e.g.
 * "ckpt/ckpt-3"), or a directory's latest checkpoint. The whole index is read and checked here. Returns a reader the caller frees with tfc_checkpoint_reader_free,
 * or NULL with st set:
 *   NOT_FOUND         no `<prefix>.index`
 *   DATA_LOSS         a corrupt index (bad block checksum, truncated table, malformed entries); the message
 *                     names the file, tensor and field
 *   INVALID_ARGUMENT  an entry out of range (unknown dtype, undefined shape, size that does not match the
 *                     shape, shard number or offset out of range) */
TFC_API tfc_checkpoint_reader *tfc_checkpoint_reader_new(const char *ckpt_dir_or_file, tfc_status *st);
/* Frees the reader; NULL-safe. */
TFC_API void tfc_checkpoint_reader_free(tfc_checkpoint_reader *r);

/* The number of tensors in the checkpoint (the keys of CheckpointReader.get_variable_to_shape_map()). */
TFC_API int64_t tfc_checkpoint_reader_size(const tfc_checkpoint_reader *r);
/* The i-th tensor name in sorted order (0 <= i < size), or NULL; owned by the reader. */
TFC_API const char *tfc_checkpoint_reader_name(const tfc_checkpoint_reader *r, int64_t i);
/* CheckpointReader.has_tensor(name). */
TFC_API bool tfc_checkpoint_reader_has_tensor(const tfc_checkpoint_reader *r, const char *name);
/* The dtype and shape stored for name (get_variable_to_dtype_map / get_variable_to_shape_map). *dtype is
 * TensorFlow's DataType number, which may be one tfc has no tensors for (complex64, ...). Either pointer may be
 * NULL. NOT_FOUND when the checkpoint has no such tensor. */
TFC_API bool tfc_checkpoint_reader_info(const tfc_checkpoint_reader *r, const char *name, int *dtype, tfc_shape *shape,
                                        tfc_status *st);
/* CheckpointReader.get_tensor(name): a new tensor (caller owns one reference), or NULL with st set:
 *   NOT_FOUND      no such tensor
 *   DATA_LOSS      the data file is missing, shorter than the index says, or the bytes fail their CRC32C
 *   UNIMPLEMENTED  a dtype tfc has no tensors for, or a partitioned (sliced) variable */
TFC_API tfc_tensor *tfc_checkpoint_reader_get_tensor(tfc_checkpoint_reader *r, const char *name, tfc_status *st);


/* ---- trackable objects (tf.Module / AutoTrackable) ---------------------------------------------------------
 * A tree (in general a DAG) of named children whose leaves are variables: what tf.train.Checkpoint saves and
 * restores by object structure. Each variable is stored under the '/'-joined local names of the first path
 * that reaches it breadth-first from the checkpoint's root ("model/layer_with_weights-0/kernel/.ATTRIBUTES/
 * VARIABLE_VALUE"); restore walks the checkpoint's TrackableObjectGraph in parallel with the objects by local
 * name, so a value lands in the same object whatever its key. Names are escaped as TensorFlow does ('.' ->
 * "..", '/' -> ".S"). */
typedef struct tfc_trackable tfc_trackable;

/* A new empty trackable (one reference, the caller's). NULL only when out of memory. */
TFC_API tfc_trackable *tfc_trackable_new(tfc_status *st);
/* Adds a reference to t and returns it; NULL-safe. */
TFC_API tfc_trackable *tfc_trackable_ref(tfc_trackable *t);
/* Drops a reference; at zero frees t and drops its references to its children. Variables are borrowed, never
 * freed here. NULL-safe. */
TFC_API void tfc_trackable_unref(tfc_trackable *t);
/* Tracks variable v under local_name (setattr of a tf.Variable on a tf.Module). v is borrowed: it must outlive
 * every save/restore through t. The same variable may be tracked under several names or parents; it is saved
 * once. INVALID_ARGUMENT: empty or duplicate local_name. */
TFC_API bool tfc_trackable_track_variable(tfc_trackable *t, const char *local_name, tfc_variable *v, tfc_status *st);
/* Tracks child under local_name; t takes a reference to child. INVALID_ARGUMENT: empty or duplicate name. */
TFC_API bool tfc_trackable_track_child(tfc_trackable *t, const char *local_name, tfc_trackable *child, tfc_status *st);
/* Records slot variable `slot` (e.g. "m") of optimizer t for variable `original`, as an optimizer's
 * slot_variables in the object graph; saved under "<original's path>/.OPTIMIZER_SLOT/<t's path>/<slot_name>/
 * .ATTRIBUTES/VARIABLE_VALUE". Both variables are borrowed. */
TFC_API bool tfc_trackable_track_slot(tfc_trackable *t, tfc_variable *original, const char *slot_name,
                                      tfc_variable *slot, tfc_status *st);

/* A value of t that is not a variable (TensorFlow's saveable attributes, e.g. a tf.data iterator's: see
 * tfc/data_checkpoint.h): listed in the object graph as attribute `name` with checkpoint_key
 * "<t's path>/.ATTRIBUTES/<name>", its tensor stored under that key followed by key_suffix (NULL: none), as
 * TensorFlow does (an iterator: name "ITERATOR", suffix "_STATE", so the tensor is
 * "iterator/.ATTRIBUTES/ITERATOR_STATE"). Saving stores the tensor save(user) returns (a new reference; NULL
 * with st set fails the save); a restore that matches t passes the stored tensor to restore(user, value) (false
 * with st set fails the restore). An attribute missing from the checkpoint counts as an unmatched object, one
 * left unused as an unused value. user is borrowed. INVALID_ARGUMENT: an empty name, "VARIABLE_VALUE", a
 * duplicate name, or a NULL callback. */
TFC_API bool tfc_trackable_track_attribute(tfc_trackable *t, const char *name, const char *key_suffix,
                                           tfc_tensor *(*save)(void *user, tfc_status *st),
                                           bool (*restore)(void *user, const tfc_tensor *value, tfc_status *st),
                                           void *user, tfc_status *st);

/* Callbacks of an object whose checkpointed values mirror state kept elsewhere (a hyper-parameter held as a
 * number, saved as a variable): saving(user) runs before its variables are written, restored(user) after a
 * restore assigned values to variables anywhere in the checkpoint, free_user(user) when t is freed. Any may be
 * NULL. */
TFC_API void tfc_trackable_set_hooks(tfc_trackable *t, void (*saving)(void *user), void (*restored)(void *user),
                                     void (*free_user)(void *user), void *user);

/* ---- tf.train.Checkpoint ----------------------------------------------------------------------------------- */
typedef struct tfc_checkpoint tfc_checkpoint;
typedef struct tfc_checkpoint_status tfc_checkpoint_status;

/* tf.train.Checkpoint(**{names[i]: objects[i]}): the root object with n named children (each referenced), plus
 * its own int64 `save_counter` variable (0) saved as "save_counter". ctx runs the variable reads and assigns.
 * INVALID_ARGUMENT for an empty or duplicate name or "save_counter". */
TFC_API tfc_checkpoint *tfc_checkpoint_new(tfc_ctx *ctx, const char *const *names, tfc_trackable *const *objects,
                                           int n, tfc_status *st);
/* Frees the checkpoint and its save_counter; NULL-safe. */
TFC_API void tfc_checkpoint_free(tfc_checkpoint *c);
/* The root trackable (borrowed): track more children on it before saving. */
TFC_API tfc_trackable *tfc_checkpoint_root(tfc_checkpoint *c);
/* Checkpoint.save_counter's value: the number of tfc_checkpoint_save calls (restored by restore). */
TFC_API int64_t tfc_checkpoint_save_counter(const tfc_checkpoint *c);
/* Checkpoint.write(file_prefix): writes every variable reachable from the root and the object graph under
 * _CHECKPOINTABLE_OBJECT_GRAPH to `<file_prefix>.index` / `.data-00000-of-00001` (temporary names renamed into
 * place; directories created). The save counter is not incremented and no `checkpoint` file is written. */
TFC_API bool tfc_checkpoint_write(tfc_checkpoint *c, const char *file_prefix, tfc_status *st);
/* Checkpoint.save(file_prefix): increments save_counter to N, writes `<file_prefix>-N` and records it as the
 * latest (and, as TensorFlow does, the only listed) checkpoint in the directory's `checkpoint` file; older
 * files stay (tfc_checkpoint_manager_save keeps a list and deletes). The path
 * written goes to out (size bytes; OUT_OF_RANGE when too small). */
TFC_API bool tfc_checkpoint_save(tfc_checkpoint *c, const char *file_prefix, char *out, size_t size, tfc_status *st);
/* Checkpoint.restore(save_path) (or .read): matches the checkpoint's object graph to the objects by local names
 * from the root and assigns each matched variable (and optimizer slot) its value. Returns a status object the
 * caller frees, or NULL with st set:
 *   NOT_FOUND         no such checkpoint
 *   DATA_LOSS         corrupt files, or a checkpoint without an object graph
 *   INVALID_ARGUMENT  a matched value's dtype or shape differs from its variable's (names the key)
 * Checkpoint values without a matching object, and variables without a value, are left alone and reported by
 * the status. */
TFC_API tfc_checkpoint_status *tfc_checkpoint_restore(tfc_checkpoint *c, const char *save_path, tfc_status *st);
/* CheckpointLoadStatus.assert_consumed(): FAILED_PRECONDITION unless every value in the checkpoint was matched
 * to an object ("Unresolved object in checkpoint (root).a.b: ...") and every variable reachable from the root got
 * a value ("Some objects were not bound to checkpointed values: ..."). */
TFC_API bool tfc_checkpoint_status_assert_consumed(const tfc_checkpoint_status *s, tfc_status *st);
/* CheckpointLoadStatus.assert_existing_objects_matched(): FAILED_PRECONDITION unless every variable reachable from
 * the root got a value (checkpoint values left over are allowed). */
TFC_API bool tfc_checkpoint_status_assert_existing_objects_matched(const tfc_checkpoint_status *s, tfc_status *st);
/* CheckpointLoadStatus.expect_partial(): no warnings about unused values when the status is freed. */
TFC_API void tfc_checkpoint_status_expect_partial(tfc_checkpoint_status *s);
/* The number of checkpoint values that matched no object. */
TFC_API int tfc_checkpoint_status_unused_values(const tfc_checkpoint_status *s);
/* The number of variables reachable from the root that got no value. */
TFC_API int tfc_checkpoint_status_unmatched_variables(const tfc_checkpoint_status *s);
/* Frees the status; unless expect_partial was called, logs a WARNING naming the first values that were not
 * used, as TensorFlow does when a partially consumed status is deleted. NULL-safe. */
TFC_API void tfc_checkpoint_status_free(tfc_checkpoint_status *s);


/* ---- tf.train.CheckpointManager ---------------------------------------------------------------------------- */
typedef struct tfc_checkpoint_manager tfc_checkpoint_manager;

typedef struct {
    int max_to_keep;                       /* checkpoints kept (oldest deleted first); 0: keep all (None) */
    double keep_checkpoint_every_n_hours;  /* 0: none; else one checkpoint per this many hours is never deleted */
    const char *checkpoint_name;           /* NULL: "ckpt" */
} tfc_checkpoint_manager_opts;

/* tf.train.CheckpointManager(checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours,
 * checkpoint_name): manages `<directory>/<checkpoint_name>-<N>` checkpoints of c (borrowed: it must outlive the
 * manager). An existing `<directory>/checkpoint` state file is read, so the checkpoints an earlier manager kept
 * are still counted and deleted in turn. opts may be NULL (keep all). INVALID_ARGUMENT for a negative
 * max_to_keep or keep_checkpoint_every_n_hours; DATA_LOSS for a corrupt state file. */
TFC_API tfc_checkpoint_manager *tfc_checkpoint_manager_new(tfc_checkpoint *c, const char *directory,
                                                           const tfc_checkpoint_manager_opts *opts, tfc_status *st);
/* Frees the manager (not the checkpoint); NULL-safe. */
TFC_API void tfc_checkpoint_manager_free(tfc_checkpoint_manager *m);
/* CheckpointManager.save(checkpoint_number): adds one to save_counter, writes `<prefix>-<checkpoint_number>` (the
 * save counter's value when checkpoint_number < 0), records it with a timestamp in the state file (written
 * atomically before anything is deleted), then deletes the oldest checkpoints beyond max_to_keep except those
 * keep_checkpoint_every_n_hours preserves. Returns the path (owned by the manager, valid until the next save),
 * or NULL with st set. */
TFC_API const char *tfc_checkpoint_manager_save(tfc_checkpoint_manager *m, int64_t checkpoint_number, tfc_status *st);
/* CheckpointManager.latest_checkpoint: the newest managed checkpoint's prefix, or NULL when there is none. */
TFC_API const char *tfc_checkpoint_manager_latest_checkpoint(const tfc_checkpoint_manager *m);
/* len(CheckpointManager.checkpoints): the managed checkpoints still on disk, oldest first. */
TFC_API int tfc_checkpoint_manager_num_checkpoints(const tfc_checkpoint_manager *m);
/* CheckpointManager.checkpoints[i] (0 <= i < num_checkpoints), or NULL; owned by the manager. */
TFC_API const char *tfc_checkpoint_manager_checkpoint(const tfc_checkpoint_manager *m, int i);

#ifdef __cplusplus
}
#endif
#endif
