/* Internal: fit's batch prefetcher. Keras's data adapter feeds fit from a tf.data pipeline that prefetches
 * batches on tf.data's own threads while the current step runs; fit on arrays here does the same with one
 * background thread that copies the rows of the batches ahead (perm[start .. start + len), or the slice
 * start .. start + len) of every array into new tensors while the caller runs the step on the current one.
 *
 * The caller posts the batches it will need next, in the order it will take them, and takes them one per step.
 * The prefetcher keeps a queue of up to depth batches (2 to 8: as many as fit in 8 MiB, see
 * tfc_fit_prefetch_new), so memory is at most depth batches of every array besides the one in use, plus depth
 * copies of a batch's indices. The thread is woken only when half the queue waits to be copied (or the caller
 * waits for a batch not yet copied), then copies everything posted before it sleeps again: a wake-up (a futex
 * call, ~10 us of the caller's time, and a thread competing for its CPU) every depth / 2 steps instead of every
 * step. A take for other rows than those at the head of the queue (a callback changed the plan) discards the
 * whole queue and reports a miss: the caller then gathers itself, so batches and their order are always those
 * of the synchronous loop. The copy is a plain row copy: the bytes GatherV2 (or a slice) would produce. Arrays
 * of strings or resources are not prefetched (deep copies). */
#ifndef TFC_KERAS_TRAINING_PREFETCH_H
#define TFC_KERAS_TRAINING_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "tfc/status.h"
#include "tfc/tensor.h"

typedef struct tfc_fit_prefetch tfc_fit_prefetch;

/* The deepest queue. */
#define TFC_FIT_PREFETCH_MAX_DEPTH 8

/* Whether fit can prefetch these arrays: not for arrays of strings, resources or fewer than 1 row (the context's
 * fit_prefetch switch is the caller's). */
bool tfc_fit_prefetch_wanted(tfc_tensor *const *src, int n_src);

/* A prefetcher of batches of up to max_len rows of the n_src arrays src (borrowed: they must outlive it; all
 * with the same first dimension), queueing up to depth batches (1 .. TFC_FIT_PREFETCH_MAX_DEPTH; 0: as
 * many batches as fit in 8 MiB, at least 2; fit passes the context's fit_prefetch_depth). Starts its
 * thread. NULL with st set on failure. */
tfc_fit_prefetch *tfc_fit_prefetch_new(tfc_tensor *const *src, int n_src, int64_t max_len, int depth,
                                       tfc_status *st);

/* The queue's capacity (0 for NULL). */
int tfc_fit_prefetch_depth(const tfc_fit_prefetch *p);

/* Queues the batch of rows perm[start .. start + len) (perm NULL: rows start .. start + len); the indices are
 * copied. false (nothing queued) when the queue is full, p is NULL or len is not in 1 .. max_len. */
bool tfc_fit_prefetch_post(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len);

/* The batch at the head of the queue if it is the one asked for (same rows): waits for it and moves its n_src
 * tensors (new references) into out, returning 1. 0 (out untouched, the queue emptied) when nothing or other
 * rows are at its head; -1 with st set when the copy failed (out of memory; the queue is emptied). */
int tfc_fit_prefetch_take(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len, tfc_tensor **out,
                          tfc_status *st);

/* Stops and joins the thread and drops the batches not taken. NULL-safe. */
void tfc_fit_prefetch_free(tfc_fit_prefetch *p);

/* Batches taken from prefetchers so far in this process (tests check that fit uses them), and the times a
 * prefetcher's thread was woken (tests check that it is not woken every step). */
int64_t tfc_fit_prefetch_hits(void);
int64_t tfc_fit_prefetch_wakes(void);

#endif
