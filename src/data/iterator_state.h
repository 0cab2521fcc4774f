/* Internal: the record a tfc_iterator keeps so that its position can be checkpointed (src/data/iterator_state.c;
 * the design is described in include/tfc/data_checkpoint.h). Every function accepts r == NULL (iterators built
 * outside a tfc_iterator, e.g. by scan's state machine, keep no record). */
#ifndef TFC_DATA_ITERATOR_STATE_H
#define TFC_DATA_ITERATOR_STATE_H

#include "data/data_internal.h"

typedef struct data_replay data_replay;

/* A record for an iterator over root (the pipeline's nodes are listed now). NULL with st set when out of memory. */
data_replay *data_replay_new(tfc_dataset *root, tfc_status *st);
void data_replay_free(data_replay *r);
/* Called by data_iter_make for every node instantiated in the tree (static or made by a user function):
 * notes nodes whose state cannot be captured. */
void data_replay_made(data_replay *r, tfc_dataset *ds);
/* Called by tfc_iterator_next after each call: the element (n components) when code is TFC_OK and !end, the
 * error code of a failed element otherwise. */
void data_replay_note(data_replay *r, tfc_tensor *const *out, int n, tfc_code code, bool end);
/* shuffle.c: the epoch a new shuffle iterator over ds uses. True (and *epoch set, and logged) while a restore
 * replays an epoch recorded for ds; false otherwise: the caller draws the epoch from the dataset and logs it
 * with data_replay_shuffle_log. An unseeded shuffle that is not part of the iterated pipeline (made by an
 * interleave / flat_map function) marks the record as not capturable. */
bool data_replay_shuffle_epoch(data_replay *r, tfc_dataset *ds, bool seeded, int64_t *epoch);
void data_replay_shuffle_log(data_replay *r, tfc_dataset *ds, int64_t epoch);
/* shuffle.c: a shuffle node's seed and epoch counter (false for other kinds of node), and setting them. */
bool data_shuffle_get(const tfc_dataset *ds, int64_t *seed, int64_t *counter);
void data_shuffle_set(tfc_dataset *ds, int64_t seed, int64_t counter);
/* dataset.c: the record of a public iterator, and rebuilding its iterator tree from the start (the record's
 * counts are left alone); on failure the iterator is at its end. */
data_replay *data_iterator_replay(tfc_iterator *it);
bool data_iterator_reset(tfc_iterator *it, tfc_status *st);
/* Frees the iterator tree: the iterator is at its end. */
void data_iterator_end(tfc_iterator *it);

#endif
