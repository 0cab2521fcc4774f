/* Internal: fit's batch prefetcher. Keras's data adapter feeds fit from a tf.data pipeline that prefetches the
 * next batch on tf.data's own threads while the current step runs; fit on arrays here does the same with one
 * background thread that copies the rows of the next batch (perm[start .. start + len), or the slice
 * start .. start + len) of every array into new tensors while the caller runs the step on the current one.
 *
 * The caller posts the batch it will need next and takes it at the next step; the prefetcher holds at most one
 * batch (memory: one batch of every array besides the one in use). A take for other rows than those posted (a
 * callback changed the plan) discards the posted batch and reports a miss: the caller then gathers itself, so
 * batches and their order are always those of the synchronous loop. The copy is a plain row copy: the bytes
 * GatherV2 (or a slice) would produce. Arrays of strings or resources are not prefetched (deep copies). */
#ifndef TFC_KERAS_TRAINING_PREFETCH_H
#define TFC_KERAS_TRAINING_PREFETCH_H

#include <stdbool.h>
#include <stdint.h>

#include "tfc/status.h"
#include "tfc/tensor.h"

typedef struct tfc_fit_prefetch tfc_fit_prefetch;

/* Whether fit prefetches: not when TFC_FIT_PREFETCH=0 is set in the environment, nor for arrays of strings,
 * resources or fewer than 1 row. */
bool tfc_fit_prefetch_wanted(tfc_tensor *const *src, int n_src);

/* A prefetcher of batches of up to max_len rows of the n_src arrays src (borrowed: they must outlive it; all
 * with the same first dimension). Starts its thread. NULL with st set on failure. */
tfc_fit_prefetch *tfc_fit_prefetch_new(tfc_tensor *const *src, int n_src, int64_t max_len, tfc_status *st);

/* Asks for the batch rows perm[start .. start + len) (perm NULL: rows start .. start + len); the indices are
 * copied. A batch posted earlier and not taken is dropped. */
void tfc_fit_prefetch_post(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len);

/* The posted batch if it is the one asked for (same rows): waits for it and moves its n_src tensors (new
 * references) into out, returning 1. 0 (out untouched) when nothing or other rows were posted; -1 with st set
 * when the copy failed (out of memory). */
int tfc_fit_prefetch_take(tfc_fit_prefetch *p, const int64_t *perm, int64_t start, int64_t len, tfc_tensor **out,
                          tfc_status *st);

/* Stops and joins the thread and drops a batch not taken. NULL-safe. */
void tfc_fit_prefetch_free(tfc_fit_prefetch *p);

/* Batches taken from prefetchers so far in this process (tests check that fit uses them). */
int64_t tfc_fit_prefetch_hits(void);

#endif
