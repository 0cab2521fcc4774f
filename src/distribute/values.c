/* Distributed variables: MirroredVariable (one copy per worker, updated with the replicas' all-reduced values)
 * and SyncOnReadVariable (a copy per replica, aggregated when read in cross-replica context). */
#include <stdio.h>
#include <string.h>

#include "distribute/collective.h"
#include "distribute/distribute_internal.h"

struct tfc_dist_variable {
    tfc_strategy *s;
    bool on_read;
    tfc_variable_aggregation agg;
    int n;                                        /* copies: 1 (mirrored) or the local replicas (on read) */
    tfc_variable *v[TFC_MAX_LOCAL_REPLICAS];
};

void tfc_dist_variable_free(tfc_dist_variable *v) {
    if (!v) return;
    for (int i = 0; i < v->n; i++) tfc_variable_free(v->v[i]);
    tfc_free(v);
}

tfc_dist_variable *tfc_strategy_variable_new(tfc_strategy *s, tfc_tensor *init, bool trainable, const char *name,
                                             tfc_variable_synchronization sync, tfc_variable_aggregation agg,
                                             tfc_status *st) {
    if (!init) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Variable: initial_value is NULL"), NULL;
    if ((int)agg < 0 || agg > TFC_VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA || (int)sync < 0 ||
        sync > TFC_VARIABLE_SYNCHRONIZATION_ON_READ)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Variable \"%s\": invalid synchronization %d or aggregation %d",
                              name ? name : "Variable", (int)sync, (int)agg), NULL;
    bool on_read = sync == TFC_VARIABLE_SYNCHRONIZATION_ON_READ;
    if (on_read && trainable)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Synchronization value can be set to "
                              "VariableSynchronization.ON_READ only for non-trainable variables. You have specified "
                              "trainable=True and synchronization=VariableSynchronization.ON_READ."), NULL;
    tfc_dist_variable *v = tfc_calloc(1, sizeof *v);
    if (!v) return tfc_status_oom(st, "variable", sizeof *v), NULL;
    *v = (tfc_dist_variable){.s = s, .on_read = on_read, .agg = agg, .n = on_read ? s->n_local : 1};
    tfc_tensor *start = NULL;
    if (!on_read && s->cross) { /* MultiWorkerMirroredStrategy: every worker starts from worker 0's value */
        if (!(start = tfc_collective_broadcast(s->cross, init, 0, st))) {
            tfc_free(v);
            return NULL;
        }
        init = start;
    }
    for (int i = 0; i < v->n; i++) {
        char nm[256];
        snprintf(nm, sizeof nm, i ? "%s/replica_%d" : "%s", name ? name : "Variable", i);
        if (!(v->v[i] = tfc_variable_new(s->ctx, init, trainable, nm, st))) {
            v->n = i;
            tfc_dist_variable_free(v);
            v = NULL;
            break;
        }
    }
    tfc_tensor_unref(start);
    return v;
}

tfc_variable *tfc_dist_variable_local(tfc_dist_variable *v, tfc_replica_ctx *rc) {
    return v->v[v->on_read && rc ? rc->local_id : 0];
}

/* A barrier of the local replicas that is also an error vote: false on every replica when one passes !ok. */
static bool local_vote(tfc_strategy *s, int local_id, bool ok, tfc_status *st) {
    if (s->n_local == 1) return ok;
    int32_t one = ok ? 1 : 0;
    tfc_status vst = TFC_STATUS_INIT;
    tfc_tensor *f = tfc_tensor_from_data(TFC_INT32, NULL, 0, &one, 4, &vst), *r = NULL;
    if (f) r = tfc_collective_all_reduce(s->local[local_id], f, TFC_REDUCE_SUM, &vst);
    bool all = r && *(const int32_t *)tfc_tensor_data(r) == s->n_local;
    tfc_tensor_unref(f);
    tfc_tensor_unref(r);
    if (!r && ok) *st = vst;
    else if (ok && !all) tfc_status_set(st, TFC_ABORTED, "variable update: another replica failed");
    return ok && all;
}

static bool update(tfc_replica_ctx *rc, tfc_dist_variable *v, tfc_tensor *x, bool add, tfc_status *st) {
    tfc_strategy *s = rc->s;
    int id = rc->local_id;
    tfc_ctx *ctx = rc->ctx;
    if (v->on_read) {
        tfc_variable *mine = v->v[id];
        return add ? tfc_variable_assign_add(ctx, mine, x, st) : tfc_variable_assign(ctx, mine, x, st);
    }
    if (v->agg == TFC_VARIABLE_AGGREGATION_NONE)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "You must specify an aggregation method to update a "
                              "MirroredVariable in Replica Context. You can do so by passing an explicit value for "
                              "argument `aggregation` to tf.Variable(..).e.g. `tf.Variable(..., "
                              "aggregation=tf.VariableAggregation.SUM)` (variable \"%s\")", tfc_variable_name(v->v[0]));
    tfc_tensor *r = NULL;
    if (v->agg == TFC_VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA) {
        tfc_tensor *x0 = id == 0 && s->cross ? tfc_collective_broadcast(s->cross, x, 0, st) : tfc_tensor_ref(x);
        r = x0 && s->n_local > 1 ? tfc_collective_broadcast(s->local[id], x0, 0, st) : tfc_tensor_ref(x0);
        tfc_tensor_unref(x0);
    } else {
        r = tfc_replica_all_reduce(rc, v->agg == TFC_VARIABLE_AGGREGATION_MEAN ? TFC_REDUCE_MEAN : TFC_REDUCE_SUM, x, st);
    }
    /* all replicas hold the same value: replica 0 applies it, then everyone passes the barrier */
    bool ok = r != NULL;
    if (ok && id == 0) ok = add ? tfc_variable_assign_add(ctx, v->v[0], r, st) : tfc_variable_assign(ctx, v->v[0], r, st);
    tfc_tensor_unref(r);
    return local_vote(s, id, ok, st);
}

bool tfc_replica_assign(tfc_replica_ctx *rc, tfc_dist_variable *v, tfc_tensor *value, tfc_status *st) {
    return update(rc, v, value, false, st);
}

bool tfc_replica_assign_add(tfc_replica_ctx *rc, tfc_dist_variable *v, tfc_tensor *delta, tfc_status *st) {
    return update(rc, v, delta, true, st);
}

tfc_tensor *tfc_dist_variable_read(tfc_dist_variable *v, tfc_status *st) {
    tfc_strategy *s = v->s;
    if (!v->on_read || v->agg == TFC_VARIABLE_AGGREGATION_NONE || v->agg == TFC_VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA) {
        const tfc_tensor *val = tfc_variable_value(v->v[0]);
        return val ? tfc_tensor_copy(val, st)
                   : (tfc_status_set(st, TFC_FAILED_PRECONDITION, "variable \"%s\" is not initialised",
                                     tfc_variable_name(v->v[0])), NULL);
    }
    tfc_per_replica pr = {.n = s->n_local};
    for (int i = 0; i < s->n_local; i++) pr.values[i] = (tfc_tensor *)tfc_variable_value(v->v[i]);
    return tfc_strategy_reduce(s, v->agg == TFC_VARIABLE_AGGREGATION_MEAN ? TFC_REDUCE_MEAN : TFC_REDUCE_SUM, &pr, false,
                               0, st);
}
