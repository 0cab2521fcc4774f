/* tfc — checkpointing tf.data iterators (tf.train.Checkpoint(iterator=it), Keras BackupAndRestore mid-epoch).
 *
 * DESIGN: REPLAY, not per-transformation state. An iterator's state is a small record: how many elements
 * (and element errors) it has produced, whether it reached the end, the seed and epoch counter of every shuffle
 * in the pipeline, the epoch each shuffle iterator it made used, and a fingerprint of the elements produced
 * (dtype, shape and the first 64 bytes of each component). Restoring rebuilds the iterator tree from the start
 * with those seeds and epochs and pulls the recorded number of elements again, discarding them, then checks
 * the fingerprint; the next element is then exactly the one the saved iterator would have produced next.
 * Why: tfc's pipelines are deterministic functions of their inputs, their seeds and the shuffle epochs, and
 * many stages run on threads with read-ahead buffers (parallel map and batch, parallel interleave, prefetch);
 * capturing each stage's buffers, in-flight work and file offsets would mean a serialiser per transformation
 * and stopping every thread at a consistent cut, for the same result. The price is time: a restore re-runs
 * the pipeline up to the saved position (O(position) work, user functions included); the record itself is a
 * few hundred bytes whatever the buffers hold (a shuffle buffer of 10,000 images costs nothing to save).
 *
 * WHAT REPLAYS EXACTLY: from_tensors / from_tensor_slices / range / TFRecord / text-line / fixed-length / CSV
 * sources, map (also parallel), filter, batch (also parallel), padded_batch, unbatch, shuffle (seeded or not;
 * reshuffle_each_iteration: the epoch counter is saved and restored with the iterator, so the iterators made
 * after a restore, e.g. Keras's next epochs, continue the uninterrupted run's orders), repeat, prefetch,
 * take / skip / shard / enumerate, interleave / flat_map (also parallel, deterministic), zip, concatenate,
 * cache, ignore_errors, choose_from_datasets and seeded sample_from_datasets. Conditions: user functions are
 * deterministic (the same element for the same input; a function drawing from a global random state replays
 * differently) and input files are unchanged. A fingerprint mismatch detected on restore is FAILED_PRECONDITION.
 *
 * REFUSED (FAILED_PRECONDITION naming the node, at save and at restore, never a wrong restore):
 * from_generator (a C generator's position is opaque), a parallel map / batch / interleave whose output order is
 * not deterministic (deterministic off, directly or by the dataset options), sample_from_datasets without a
 * seed, and a shuffle without a seed made inside an interleave / flat_map function.
 *
 * CHECKPOINT FILES: tfc_iterator_trackable makes the iterator an object of tf.train.Checkpoint, laid out as
 * TensorFlow lays out an iterator: the object graph lists attribute "ITERATOR" with checkpoint_key
 * "<path>/.ATTRIBUTES/ITERATOR" and the state is the tensor "<path>/.ATTRIBUTES/ITERATOR_STATE" (e.g.
 * "iterator/.ATTRIBUTES/ITERATOR_STATE"). tfc's state is a string scalar (the record above, versioned and
 * CRC-32C checked) where TensorFlow's is a DT_VARIANT vector of its own per-op state, so the file stays a
 * TensorFlow checkpoint: tf.train.load_checkpoint lists the key (dtype string, shape []) next to the
 * variables, and TensorFlow restores the variables of a checkpoint that holds a tfc iterator (expect_partial);
 * TensorFlow cannot restore its iterator from tfc's state (TensorFlow's restore raises InvalidArgumentError
 * "... expected dtype variant does not equal original dtype string"), and tfc cannot restore a TensorFlow
 * iterator state (tfc_checkpoint_restore: INVALID_ARGUMENT naming the key and DT_VARIANT). */
#ifndef TFC_DATA_CHECKPOINT_H
#define TFC_DATA_CHECKPOINT_H

#include "tfc/checkpoint.h"
#include "tfc/data.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The iterator's state (the record described above) as a new string scalar tensor (caller's reference), or NULL
 * with st set: FAILED_PRECONDITION for a pipeline whose state cannot be captured (names the node and why);
 * RESOURCE_EXHAUSTED. Cheap (no element is copied); safe while the iterator's threads run ahead. */
TFC_API tfc_tensor *tfc_iterator_save_state(tfc_iterator *it, tfc_status *st);
/* Moves `it` (fresh or used, over the same pipeline as the saved iterator: the same kinds of node, element
 * structure and shuffles) to the saved position: the next tfc_iterator_next returns the element the saved
 * iterator would have returned next (OUT_OF_RANGE when it had ended). Re-runs the pipeline up to that position.
 * Also sets the pipeline's shuffle seeds and epoch counters to the saved ones. The state of an iterator that had
 * reached its end restores without re-running anything (and without the fingerprint check: nothing is left
 * to produce). Errors (the iterator is then at
 * the start of a fresh pass):
 *   INVALID_ARGUMENT     not a string scalar / not a tfc iterator state (bad magic, version, CRC or length),
 *                        or the state of another pipeline (both pipelines named)
 *   FAILED_PRECONDITION  a pipeline whose state cannot be captured (as save), or the replay produced other
 *                        elements than the saved iterator did (non-deterministic functions, changed files), or
 *                        ended before the saved position */
TFC_API bool tfc_iterator_restore_state(tfc_iterator *it, const tfc_tensor *state, tfc_status *st);
/* tf.train.Checkpoint(iterator=it): a new trackable (caller's reference) whose only value is the iterator's
 * state, saved and restored by tfc_checkpoint_write / save / restore under "<path>/.ATTRIBUTES/ITERATOR_STATE"
 * with the functions above (their errors are those of the checkpoint call). `it` is borrowed: it must outlive
 * every save and restore through the trackable. NULL with st set when out of memory. */
TFC_API tfc_trackable *tfc_iterator_trackable(tfc_iterator *it, tfc_status *st);

#ifdef __cplusplus
}
#endif
#endif
