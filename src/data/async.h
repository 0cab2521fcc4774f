/* Internal: the engine behind parallel map, parallel batch and prefetch.
 *
 * Worker threads take turns fetching input (sequentially, under an input lock, so input order is kept) into a
 * reserved output slot, then process it in parallel (map's function, batch's stacking) and mark the slot ready.
 * The consumer pops the oldest slot when it is ready (deterministic) or any ready slot. Slots outstanding are
 * bounded by `capacity`, the work in flight by `parallelism`: memory never grows with the dataset. Cheap elements
 * are handed over in runs, which a stage whose capacity follows its parallelism buffers besides (async.c). */
#ifndef TFC_DATA_ASYNC_H
#define TFC_DATA_ASYNC_H

#include "data/data_internal.h"

typedef struct data_async data_async;

typedef struct data_async_cfg {
    const char *name;         /* for messages */
    int n_out;                /* components of an output element */
    int threads;              /* worker threads (>= 1) */
    int parallelism;          /* workers fetching/processing at once (1..threads); autotune starts at 1 */
    int capacity;             /* outstanding slots (>= 1) */
    int max_capacity;         /* capacity's ceiling under autotune */
    bool autotune;            /* tune parallelism (up to threads) and capacity (up to max_capacity) */
    bool capacity_follows_parallelism; /* capacity = parallelism (parallel map and batch) */
    bool deterministic;
    bool worker_ctx;          /* give process() an eager context per worker */
    void *self;
    /* Fetches the next work item (under the input lock). *end at the end of the input. */
    bool (*fetch)(void *self, void **work, bool *end, tfc_status *st);
    /* Turns work into an output element (n_out new references); always consumes work. NULL: work is a
     * tfc_tensor *[n_out] array whose references move to the output. */
    bool (*process)(void *self, tfc_ctx *ctx, void *work, tfc_tensor **out, tfc_status *st);
    /* Frees work that will not be processed (required with process). */
    void (*drop)(void *self, void *work);
} data_async_cfg;

data_async *data_async_new(const data_async_cfg *cfg, const data_ictx *ictx, tfc_status *st);
/* Next element, as data_iter next. Starts the threads at the first call. */
bool data_async_next(data_async *a, tfc_tensor **out, bool *end, tfc_status *st);
/* Stops and joins the workers and drops the buffered elements. NULL-safe. */
void data_async_free(data_async *a);

/* Resolves num_parallel_calls (TFC_AUTOTUNE or n >= 1) into threads/parallelism/autotune for a stage. */
void data_async_parallel_cfg(data_async_cfg *cfg, int64_t num_parallel_calls, const data_ictx *ictx);

#endif
