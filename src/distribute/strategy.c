/* MirroredStrategy and MultiWorkerMirroredStrategy: replicas, strategy.run on replica threads, the replica
 * context's all_reduce / merge_call, and strategy.reduce / gather. A replica all-reduce is hierarchical: the
 * local replicas sum over the "local" group, local replica 0 all-reduces the sum across workers, then
 * broadcasts it back to the local replicas. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "distribute/collective.h"
#include "distribute/distribute_internal.h"

static _Thread_local tfc_strategy *g_current;
static _Thread_local int g_depth;

static bool make_local(tfc_strategy *s, tfc_status *st) {
    for (int i = 0; i < s->n_local; i++) tfc_collective_free(s->local[i]);
    memset(s->local, 0, sizeof s->local);
    return tfc_collective_local_group(s->n_local, s->opts.timeout_seconds, s->local, st);
}

static tfc_strategy *strategy_new(tfc_ctx *ctx, int n_local, int threads, const tfc_communication_options *o,
                                  tfc_status *st) {
    if (o && o->implementation == TFC_COMM_NCCL)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "CommunicationImplementation.NCCL: tfc has no GPU collective "
                              "backend yet (use AUTO or RING)"), NULL;
    if (n_local < 1 || n_local > TFC_MAX_LOCAL_REPLICAS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "MirroredStrategy: num_replicas %d out of range [1, %d]",
                              n_local, TFC_MAX_LOCAL_REPLICAS), NULL;
    tfc_strategy *s = tfc_calloc(1, sizeof *s);
    if (!s) return tfc_status_oom(st, "strategy", sizeof *s), NULL;
    s->ctx = ctx;
    s->n_local = n_local;
    s->n_workers = 1;
    if (o) s->opts = *o;
    tfc_cluster_resolve("{}", &s->cluster, st);
    s->rctx[0] = ctx;
    for (int i = 1; i < n_local; i++) {
        tfc_ctx_opts co = {.intra_op_threads = threads > 0 ? threads : 1};
        if (!(s->rctx[i] = tfc_ctx_new(&co, st))) {
            tfc_strategy_free(s);
            return NULL;
        }
    }
    if (!make_local(s, st)) {
        tfc_strategy_free(s);
        return NULL;
    }
    return s;
}

tfc_strategy *tfc_mirrored_strategy_new(tfc_ctx *ctx, const tfc_mirrored_opts *o, tfc_status *st) {
    tfc_mirrored_opts d = o ? *o : (tfc_mirrored_opts){0};
    tfc_strategy *s = strategy_new(ctx, d.num_replicas > 0 ? d.num_replicas : 1, d.intra_op_threads,
                                   &d.communication_options, st);
    if (s) snprintf(s->name, sizeof s->name, "MirroredStrategy");
    return s;
}

tfc_strategy *tfc_multi_worker_mirrored_strategy_new(tfc_ctx *ctx, const tfc_communication_options *o, tfc_status *st) {
    tfc_cluster cl;
    if (!tfc_cluster_resolve(NULL, &cl, st)) return NULL;
    tfc_strategy *s = strategy_new(ctx, 1, 1, o, st);
    if (!s) {
        tfc_cluster_clear(&cl);
        return NULL;
    }
    snprintf(s->name, sizeof s->name, "MultiWorkerMirroredStrategy");
    tfc_cluster_clear(&s->cluster);
    s->cluster = cl;
    bool training_task = !cl.task_type[0] || !strcmp(cl.task_type, "chief") || !strcmp(cl.task_type, "worker");
    bool under_mpirun = !cl.task_type[0] && getenv("OMPI_COMM_WORLD_SIZE") && atoi(getenv("OMPI_COMM_WORLD_SIZE")) > 1;
    if ((training_task && cl.num_workers > 1) || under_mpirun) {
        if (!(s->cross = tfc_collective_mpi_new(under_mpirun ? NULL : &cl, s->opts.timeout_seconds, st))) {
            tfc_strategy_free(s);
            return NULL;
        }
        s->n_workers = s->cross->size;
        s->worker_id = s->cross->rank;
        if (under_mpirun) {
            s->cluster.num_workers = s->n_workers;
            s->cluster.worker_id = s->worker_id;
            s->cluster.is_chief = s->worker_id == 0;
            snprintf(s->cluster.task_type, sizeof s->cluster.task_type, "worker");
            s->cluster.task_id = s->worker_id;
        }
    }
    return s;
}

void tfc_strategy_free(tfc_strategy *s) {
    if (!s) return;
    for (int i = 0; i < s->n_local; i++) {
        tfc_collective_free(s->local[i]);
        if (i > 0) tfc_ctx_free(s->rctx[i]);
    }
    tfc_collective_free(s->cross);
    tfc_cluster_clear(&s->cluster);
    tfc_free(s);
}

int tfc_strategy_num_replicas_in_sync(const tfc_strategy *s) { return s->n_local * s->n_workers; }
int tfc_strategy_num_local_replicas(const tfc_strategy *s) { return s->n_local; }
int tfc_strategy_num_workers(const tfc_strategy *s) { return s->n_workers; }
int tfc_strategy_worker_id(const tfc_strategy *s) { return s->worker_id; }
bool tfc_strategy_is_chief(const tfc_strategy *s) { return s->cluster.is_chief; }
const tfc_cluster *tfc_strategy_cluster(const tfc_strategy *s) { return &s->cluster; }
tfc_collective *tfc_strategy_collective(tfc_strategy *s) { return s->cross; }
const tfc_communication_options *tfc_strategy_communication_options(const tfc_strategy *s) { return &s->opts; }

bool tfc_strategy_scope(tfc_strategy *s, tfc_status *st) {
    if (g_current && g_current != s)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Mixing different tf.distribute.Strategy objects: %s scope "
                              "opened inside another strategy's scope", s->name);
    g_current = s;
    g_depth++;
    return true;
}

void tfc_strategy_scope_end(tfc_strategy *s) {
    if (g_current != s || g_depth == 0) return;
    if (--g_depth == 0) g_current = NULL;
}

tfc_strategy *tfc_distribute_get_strategy(void) { return g_current; }

void tfc_per_replica_clear(tfc_per_replica *v) {
    for (int i = 0; v && i < v->n; i++) {
        tfc_tensor_unref(v->values[i]);
        v->values[i] = NULL;
    }
    if (v) v->n = 0;
}

/* ---- strategy.run ------------------------------------------------------------------------------------------ */
typedef struct {
    tfc_strategy *s;
    tfc_replica_fn fn;
    void *user;
    const tfc_per_replica *args;
    int n_in, n_out;
    tfc_per_replica *out;
    int local_id;
    bool ok;
    tfc_status st;
} run_job;

static void *run_replica(void *p) {
    run_job *j = p;
    tfc_replica_ctx rc = {j->s, j->local_id, j->s->rctx[j->local_id]};
    tfc_tensor *in[64], *out[64] = {0};
    for (int i = 0; i < j->n_in; i++) in[i] = j->args[i].values[j->local_id];
    j->ok = j->fn(&rc, rc.ctx, j->user, in, j->n_in, out, j->n_out, &j->st);
    if (!j->ok) {
        if (j->st.code == TFC_OK) tfc_status_set(&j->st, TFC_INTERNAL, "replica function failed without a status");
        tfc_coll_local_abort(j->s->local[j->local_id]); /* unblock the replicas waiting for this one */
    }
    for (int i = 0; i < j->n_out; i++) {
        if (j->ok) j->out[i].values[j->local_id] = out[i];
        else tfc_tensor_unref(out[i]);
    }
    return NULL;
}

bool tfc_strategy_run(tfc_strategy *s, tfc_replica_fn fn, void *user, const tfc_per_replica *args, int n_in,
                      tfc_per_replica *out, int n_out, tfc_status *st) {
    if (n_in < 0 || n_in > 64 || n_out < 0 || n_out > 64)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "strategy.run: at most 64 arguments and results");
    for (int i = 0; i < n_in; i++)
        if (args[i].n != s->n_local)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "strategy.run: argument %d has %d per-replica values, the "
                                  "strategy has %d local replicas", i, args[i].n, s->n_local);
    for (int i = 0; i < n_out; i++) out[i] = (tfc_per_replica){.n = s->n_local};
    run_job jobs[TFC_MAX_LOCAL_REPLICAS];
    pthread_t th[TFC_MAX_LOCAL_REPLICAS];
    bool started[TFC_MAX_LOCAL_REPLICAS] = {0};
    for (int r = 0; r < s->n_local; r++)
        jobs[r] = (run_job){s, fn, user, args, n_in, n_out, out, r, false, TFC_STATUS_INIT};
    for (int r = 1; r < s->n_local; r++) started[r] = pthread_create(&th[r], NULL, run_replica, &jobs[r]) == 0;
    for (int r = 1; r < s->n_local; r++)
        if (!started[r]) {
            tfc_status_set(&jobs[r].st, TFC_RESOURCE_EXHAUSTED, "strategy.run: cannot start replica %d's thread", r);
            tfc_coll_local_abort(s->local[r]);
        }
    run_replica(&jobs[0]);
    for (int r = 1; r < s->n_local; r++)
        if (started[r]) pthread_join(th[r], NULL);
    int bad = -1;
    for (int r = 0; r < s->n_local && bad < 0; r++)
        if (!jobs[r].ok && (jobs[r].st.code != TFC_UNAVAILABLE || !strstr(jobs[r].st.msg, "replica"))) bad = r;
    for (int r = 0; r < s->n_local && bad < 0; r++)
        if (!jobs[r].ok) bad = r;
    if (bad < 0) return true;
    *st = jobs[bad].st;
    for (int i = 0; i < n_out; i++) tfc_per_replica_clear(&out[i]);
    if (s->n_local > 1) {
        tfc_status ist = TFC_STATUS_INIT;
        make_local(s, &ist); /* a fresh group for the next run */
    }
    return false;
}

/* ---- replica context --------------------------------------------------------------------------------------- */
int tfc_replica_id_in_sync_group(const tfc_replica_ctx *rc) { return rc->s->worker_id * rc->s->n_local + rc->local_id; }
int tfc_replica_num_replicas_in_sync(const tfc_replica_ctx *rc) { return tfc_strategy_num_replicas_in_sync(rc->s); }
tfc_strategy *tfc_replica_strategy(tfc_replica_ctx *rc) { return rc->s; }

tfc_tensor *tfc_dist_divide(tfc_ctx *ctx, tfc_tensor *t, double n, tfc_status *st) {
    tfc_tensor *r = tfc_tensor_copy(t, st);
    if (!r) return NULL;
    tfc_dtype dt = tfc_tensor_dtype(r);
    bool integer = tfc_dtype_is_integer(dt);
    void *p = tfc_tensor_mutable_data(r);
    for (int64_t i = 0; i < tfc_tensor_num_elements(r); i++) {
        double v = tfc_dtype_get_f64(dt, p, i) / n;
        tfc_dtype_set_f64(dt, p, i, integer ? (double)(int64_t)v : v);
    }
    return r;
}

/* Sum over the local group, then across workers (local replica 0), then back to every local replica. */
tfc_tensor *tfc_dist_hier_sum(tfc_strategy *s, int local_id, const tfc_tensor *v, tfc_status *st) {
    tfc_tensor *sum = s->n_local > 1 ? tfc_collective_all_reduce(s->local[local_id], v, TFC_REDUCE_SUM, st)
                                     : tfc_tensor_copy(v, st);
    if (!sum || !s->cross) return sum;
    tfc_tensor *x = sum;
    bool failed = false;
    if (local_id == 0) {
        x = tfc_collective_all_reduce(s->cross, sum, TFC_REDUCE_SUM, st);
        tfc_tensor_unref(sum);
        if (!x) {
            failed = true;
            if (s->n_local == 1) return NULL;
            tfc_coll_local_abort(s->local[0]);
            return NULL;
        }
    }
    if (s->n_local > 1 && !failed) {
        tfc_tensor *b = tfc_collective_broadcast(s->local[local_id], x, 0, st);
        tfc_tensor_unref(x);
        x = b;
    }
    return x;
}

tfc_tensor *tfc_replica_all_reduce(tfc_replica_ctx *rc, tfc_reduce_op op, const tfc_tensor *value, tfc_status *st) {
    tfc_tensor *sum = tfc_dist_hier_sum(rc->s, rc->local_id, value, st);
    if (!sum || op != TFC_REDUCE_MEAN) return sum;
    tfc_tensor *m = tfc_dist_divide(rc->ctx, sum, tfc_strategy_num_replicas_in_sync(rc->s), st);
    tfc_tensor_unref(sum);
    return m;
}

bool tfc_replica_merge_call(tfc_replica_ctx *rc, tfc_merge_fn fn, void *user, tfc_tensor *value, tfc_tensor **out,
                            tfc_status *st) {
    tfc_strategy *s = rc->s;
    *out = NULL;
    s->merge_in.values[rc->local_id] = value;
    /* barriers double as error votes: an int32 all-reduce of "ok" flags */
    int32_t one = 1;
    tfc_tensor *flag = tfc_tensor_from_data(TFC_INT32, NULL, 0, &one, 4, st), *r;
    if (!flag) return false;
    bool ok = (r = tfc_collective_all_reduce(s->local[rc->local_id], flag, TFC_REDUCE_SUM, st)) != NULL;
    tfc_tensor_unref(r);
    if (ok && rc->local_id == 0) {
        s->merge_in.n = s->n_local;
        s->merge_out = NULL;
        s->merge_st = (tfc_status)TFC_STATUS_INIT;
        if (!fn(s, rc->ctx, user, &s->merge_in, &s->merge_out, &s->merge_st)) {
            if (s->merge_st.code == TFC_OK) tfc_status_set(&s->merge_st, TFC_INTERNAL, "merge_fn failed without a status");
            tfc_tensor_unref(s->merge_out);
            s->merge_out = NULL;
        }
        s->merge_in.n = 0;
    }
    ok = ok && (r = tfc_collective_all_reduce(s->local[rc->local_id], flag, TFC_REDUCE_SUM, st)) != NULL;
    tfc_tensor_unref(r);
    if (ok && s->merge_st.code != TFC_OK) {
        *st = s->merge_st;
        ok = false;
    }
    if (ok) *out = tfc_tensor_ref(s->merge_out);
    /* everyone holds its reference before replica 0 drops the strategy's */
    bool ok2 = (r = tfc_collective_all_reduce(s->local[rc->local_id], flag, TFC_REDUCE_SUM, st)) != NULL;
    tfc_tensor_unref(r);
    if (ok2 && rc->local_id == 0) {
        tfc_tensor_unref(s->merge_out);
        s->merge_out = NULL;
    }
    tfc_tensor_unref(flag);
    if (!ok2 && ok) {
        tfc_tensor_unref(*out);
        *out = NULL;
        ok = false;
    }
    return ok;
}

/* ---- cross-replica reduce / gather ------------------------------------------------------------------------ */
/* Tensors made outside the eager scope (collective results, constants), released at the end. */
typedef struct {
    tfc_tensor *t[16];
    int n;
} tbag;
static bool bag_add(tbag *b, tfc_tensor *t) {
    b->t[b->n++] = t;
    return true;
}
static void bag_free(tbag *b) {
    for (int i = 0; i < b->n; i++) tfc_tensor_unref(b->t[i]);
}

static bool check_pr(const tfc_strategy *s, const tfc_per_replica *v, const char *what, tfc_status *st) {
    if (!v || v->n != s->n_local)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: expected %d per-replica values, got %d", what,
                              s->n_local, v ? v->n : 0);
    for (int i = 0; i < v->n; i++)
        if (!v->values[i]) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: per-replica value %d is NULL", what, i);
    return true;
}

tfc_tensor *tfc_strategy_reduce(tfc_strategy *s, tfc_reduce_op op, const tfc_per_replica *value, bool has_axis, int axis,
                                tfc_status *st) {
    if (!check_pr(s, value, "strategy.reduce", st)) return NULL;
    tfc_ctx *ctx = s->ctx;
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tbag bag = {0};
    tfc_tensor *parts[TFC_MAX_LOCAL_REPLICAS], *sum = NULL, *res = NULL;
    double count = 0;
    bool ok = true;
    for (int i = 0; i < s->n_local && ok; i++) {
        parts[i] = value->values[i];
        if (has_axis) {
            int rank = tfc_tensor_rank(parts[i]), a = axis < 0 ? axis + rank : axis;
            if (a < 0 || a >= rank) {
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "strategy.reduce: axis %d out of range for rank %d", axis, rank);
                break;
            }
            count += (double)tfc_tensor_dim(parts[i], a);
            tfc_tensor *ax = tfc_scalar_i32(a, st);
            ok = ax && bag_add(&bag, ax) &&
                 (parts[i] = tfc_emit(ctx, "Sum", (tfc_tensor *[]){parts[i], ax}, 2, NULL, 0, st));
        }
    }
    if (ok) sum = s->n_local == 1 ? parts[0] : tfc_emit(ctx, "AddN", parts, s->n_local, NULL, 0, st);
    ok = ok && sum;
    tfc_tensor *total = NULL;
    if (ok && s->cross) ok = (total = tfc_collective_all_reduce(s->cross, sum, TFC_REDUCE_SUM, st)) && bag_add(&bag, total);
    if (ok && !s->cross) total = sum;
    if (ok && op == TFC_REDUCE_MEAN && has_axis && s->cross) {
        tfc_tensor *c = tfc_scalar_f64(count, st), *cs = NULL;
        ok = c && bag_add(&bag, c) && (cs = tfc_collective_all_reduce(s->cross, c, TFC_REDUCE_SUM, st)) &&
             bag_add(&bag, cs);
        if (ok) count = tfc_tensor_get_f64(cs, 0);
    }
    if (ok) {
        if (op == TFC_REDUCE_MEAN) res = tfc_dist_divide(ctx, total, has_axis ? count : tfc_strategy_num_replicas_in_sync(s), st);
        else res = tfc_tensor_ref(total);
    }
    tfc_scope_end(ctx);
    bag_free(&bag);
    return res;
}

tfc_tensor *tfc_strategy_gather(tfc_strategy *s, const tfc_per_replica *value, int axis, tfc_status *st) {
    if (!check_pr(s, value, "strategy.gather", st)) return NULL;
    tfc_ctx *ctx = s->ctx;
    int rank = tfc_tensor_rank(value->values[0]), a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "strategy.gather: axis %d out of range for rank %d", axis, rank), NULL;
    if (!tfc_scope_begin(ctx, st)) return NULL;
    tbag bag = {0};
    tfc_tensor *res = NULL, *cat = value->values[0], *ax = tfc_scalar_i32(a, st);
    bool ok = ax && bag_add(&bag, ax);
    if (ok && s->n_local > 1) {
        tfc_tensor *in[TFC_MAX_LOCAL_REPLICAS + 1];
        for (int i = 0; i < s->n_local; i++) in[i] = value->values[i];
        in[s->n_local] = ax;
        tfc_attr at = TFC_ATTR_I("N", s->n_local);
        ok = (cat = tfc_emit(ctx, "ConcatV2", in, s->n_local + 1, &at, 1, st)) != NULL;
    }
    if (ok && s->cross) { /* all_gather works on dim 0: move axis there and back */
        int32_t perm[TFC_MAX_RANK];
        for (int i = 0; i < rank; i++) perm[i] = i;
        perm[0] = a, perm[a] = 0;
        tfc_tensor *p = tfc_vec_i32(perm, rank, st), *t = NULL, *g = NULL;
        ok = p && bag_add(&bag, p) &&
             (t = a ? tfc_emit(ctx, "Transpose", (tfc_tensor *[]){cat, p}, 2, NULL, 0, st) : cat) &&
             (g = tfc_collective_all_gather(s->cross, t, st)) && bag_add(&bag, g) &&
             (cat = a ? tfc_emit(ctx, "Transpose", (tfc_tensor *[]){g, p}, 2, NULL, 0, st) : g);
    }
    if (ok) res = tfc_tensor_ref(cat);
    tfc_scope_end(ctx);
    bag_free(&bag);
    return res;
}

bool tfc_strategy_broadcast_variables(tfc_strategy *s, tfc_variable *const *vars, int n, tfc_status *st) {
    if (!s->cross) return true;
    for (int i = 0; i < n; i++) {
        tfc_tensor *v = (tfc_tensor *)tfc_variable_value(vars[i]);
        if (!v) return tfc_status_set(st, TFC_FAILED_PRECONDITION, "broadcast: variable \"%s\" is not initialised",
                                      tfc_variable_name(vars[i]));
        tfc_tensor *b = tfc_collective_broadcast(s->cross, v, 0, st);
        bool ok = b && tfc_variable_assign(s->ctx, vars[i], b, st);
        tfc_tensor_unref(b);
        if (!ok) return false;
    }
    return true;
}
