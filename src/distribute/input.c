/* Input distribution: InputContext, experimental_distribute_dataset (global batches split per replica, the
 * rebatched stream sharded by worker: DATA policy) and distribute_datasets_from_function. */
#include <stdio.h>
#include <string.h>

#include "distribute/distribute_internal.h"

int64_t tfc_input_context_get_per_replica_batch_size(const tfc_input_context *ic, int64_t global, tfc_status *st) {
    if (ic->num_replicas_in_sync < 1 || global % ic->num_replicas_in_sync)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "The `global_batch_size` %lld is not divisible by "
                              "`num_replicas_in_sync` %d", (long long)global, ic->num_replicas_in_sync), -1;
    return global / ic->num_replicas_in_sync;
}

struct tfc_dist_dataset {
    tfc_strategy *s;
    tfc_dataset *ds;
    bool split;        /* elements are global batches to split (experimental_distribute_dataset) */
    bool shard;        /* keep only this worker's pieces (DATA); false: OFF */
};

struct tfc_dist_iterator {
    tfc_dist_dataset *d;
    tfc_iterator *it;
};

tfc_dist_dataset *tfc_strategy_experimental_distribute_dataset(tfc_strategy *s, tfc_dataset *ds,
                                                               tfc_auto_shard_policy policy, tfc_status *st) {
    if (!ds) return st->code == TFC_OK ? (tfc_status_set(st, TFC_INVALID_ARGUMENT, "NULL input dataset"), NULL) : NULL;
    if (policy != TFC_AUTO_SHARD_AUTO && policy != TFC_AUTO_SHARD_DATA && policy != TFC_AUTO_SHARD_OFF) {
        tfc_dataset_unref(ds);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "experimental_distribute_dataset: unknown AutoShardPolicy %d",
                              (int)policy), NULL;
    }
    tfc_dist_dataset *d = tfc_calloc(1, sizeof *d);
    if (!d) {
        tfc_dataset_unref(ds);
        return tfc_status_oom(st, "distributed dataset", sizeof *d), NULL;
    }
    if (policy == TFC_AUTO_SHARD_AUTO && s->n_workers > 1 && s->worker_id == 0)
        /* TensorFlow's warning when AUTO cannot shard by file (tfc shards the rebatched stream by data) */
        fprintf(stderr, "W tfc distribute: AUTO sharding policy will apply DATA sharding policy as it failed to "
                        "apply FILE sharding policy because of the following reason: Did not find a shardable "
                        "source, walked to a node which is not a dataset: the pipeline has no file-based source "
                        "tfc can shard.\n");
    *d = (tfc_dist_dataset){s, ds, true, policy != TFC_AUTO_SHARD_OFF};
    return d;
}

tfc_dist_dataset *tfc_strategy_distribute_datasets_from_function(tfc_strategy *s, tfc_dataset_fn fn, void *user,
                                                                 tfc_status *st) {
    tfc_input_context ic = {s->n_workers, s->worker_id, tfc_strategy_num_replicas_in_sync(s)};
    tfc_dataset *ds = fn(&ic, user, st);
    if (!ds) {
        if (st->code == TFC_OK) tfc_status_set(st, TFC_INVALID_ARGUMENT, "dataset_fn returned no dataset");
        return NULL;
    }
    tfc_dist_dataset *d = tfc_calloc(1, sizeof *d);
    if (!d) {
        tfc_dataset_unref(ds);
        return tfc_status_oom(st, "distributed dataset", sizeof *d), NULL;
    }
    *d = (tfc_dist_dataset){s, ds, false, false};
    return d;
}

void tfc_dist_dataset_free(tfc_dist_dataset *d) {
    if (!d) return;
    tfc_dataset_unref(d->ds);
    tfc_free(d);
}

tfc_dist_iterator *tfc_dist_iterator_new(tfc_dist_dataset *d, tfc_status *st) {
    tfc_dist_iterator *it = tfc_calloc(1, sizeof *it);
    if (!it) return tfc_status_oom(st, "distributed iterator", sizeof *it), NULL;
    it->d = d;
    if (!(it->it = tfc_iterator_new(d->ds, st))) {
        tfc_free(it);
        return NULL;
    }
    return it;
}

void tfc_dist_iterator_free(tfc_dist_iterator *it) {
    if (!it) return;
    tfc_iterator_free(it->it);
    tfc_free(it);
}

/* Rows [begin, begin + len) of t (a copy). */
static tfc_tensor *rows(const tfc_tensor *t, int64_t begin, int64_t len, tfc_status *st) {
    if (tfc_tensor_rank(t) < 1 || tfc_tensor_dtype(t) == TFC_STRING)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "distributed dataset: components must be batched (rank >= 1) "
                              "tensors of a fixed-size dtype, got %s of rank %d", tfc_dtype_name(tfc_tensor_dtype(t)),
                              tfc_tensor_rank(t)), NULL;
    tfc_shape s = *tfc_tensor_shape(t);
    size_t row = s.dims[0] ? tfc_tensor_byte_size(t) / (size_t)s.dims[0] : 0;
    s.dims[0] = len;
    return tfc_tensor_from_data(tfc_tensor_dtype(t), s.dims, s.rank, (const char *)tfc_tensor_data(t) + (size_t)begin * row,
                                (size_t)len * row, st);
}

void tfc_distribute_split_batch(int64_t B, int R, int p, int64_t *begin, int64_t *len) {
    int64_t base = B / R, extra = B % R;
    *begin = p * base + (p < extra ? p : extra);
    *len = base + (p < extra ? 1 : 0);
}

bool tfc_dist_iterator_next(tfc_dist_iterator *it, tfc_per_replica *out, int max, tfc_status *st) {
    tfc_dist_dataset *d = it->d;
    tfc_strategy *s = d->s;
    int nc = tfc_dataset_num_components(d->ds);
    if (nc > max || nc > TFC_DATA_MAX_COMPONENTS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "distributed iterator: %d components, room for %d", nc, max);
    for (int c = 0; c < nc; c++) out[c] = (tfc_per_replica){.n = s->n_local};
    tfc_tensor *el[64];
    if (nc > 64) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "distributed iterator: at most 64 components");
    bool ok = true;
    if (d->split) {
        if (!tfc_iterator_next(it->it, el, nc, st)) return false;
        int R = tfc_strategy_num_replicas_in_sync(s);
        int64_t B = tfc_tensor_rank(el[0]) > 0 ? tfc_tensor_dim(el[0], 0) : 0;
        for (int l = 0; l < s->n_local && ok; l++) {
            int p = d->shard ? s->worker_id * s->n_local + l : l;
            int64_t b, n;
            tfc_distribute_split_batch(B, d->shard ? R : s->n_local, p, &b, &n);
            for (int c = 0; c < nc && ok; c++) ok = (out[c].values[l] = rows(el[c], b, n, st)) != NULL;
        }
        for (int c = 0; c < nc; c++) tfc_tensor_unref(el[c]);
    } else {
        for (int l = 0; l < s->n_local && ok; l++) {
            if (!(ok = tfc_iterator_next(it->it, el, nc, st))) break;
            for (int c = 0; c < nc; c++) out[c].values[l] = el[c];
        }
    }
    if (!ok)
        for (int c = 0; c < nc; c++) tfc_per_replica_clear(&out[c]);
    return ok;
}
