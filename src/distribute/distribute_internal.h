/* Internal: the strategy object shared by strategy.c, input.c and the Keras integration's entry points. */
#ifndef TFC_DISTRIBUTE_INTERNAL_H
#define TFC_DISTRIBUTE_INTERNAL_H

#include "tfc/distribute.h"

struct tfc_strategy {
    char name[32];
    tfc_ctx *ctx;                                   /* the user's context: replica 0 and cross-replica work */
    int n_local, n_workers, worker_id;
    tfc_cluster cluster;
    tfc_communication_options opts;
    tfc_collective *cross;                          /* across workers (NULL with one worker) */
    tfc_collective *local[TFC_MAX_LOCAL_REPLICAS];  /* one handle per local replica */
    tfc_ctx *rctx[TFC_MAX_LOCAL_REPLICAS];          /* replica contexts (rctx[0] = ctx) */
    /* merge_call's hand-over between replica threads */
    tfc_per_replica merge_in;
    tfc_tensor *merge_out;
    tfc_status merge_st;
};

struct tfc_replica_ctx {
    tfc_strategy *s;
    int local_id;                                   /* replica index within this worker */
    tfc_ctx *ctx;                                   /* the replica's eager context */
};

/* t / n elementwise (integers truncate, as TensorFlow's Div), a new caller-owned tensor. */
tfc_tensor *tfc_dist_divide(tfc_ctx *ctx, tfc_tensor *t, double n, tfc_status *st);
/* The sum of v over every replica of every worker, called by each local replica (local_id) at once. */
tfc_tensor *tfc_dist_hier_sum(tfc_strategy *s, int local_id, const tfc_tensor *v, tfc_status *st);

#endif
