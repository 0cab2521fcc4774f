/* ParameterServerStrategy (parameter_server.h): clients of the ps tasks, variable placement (round-robin,
 * sharded by a partitioner) and the variable operations that go to the owning task. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/size_check.h"
#include "distribute/ps_internal.h"
#include "distribute/ps_strategy_internal.h"

#define PS_MAX_SHARDS 64

struct tfc_ps_variable {
    tfc_ps_strategy *s;
    char name[104];
    tfc_dtype dtype;
    tfc_shape shape;
    int n_shards;
    int task[PS_MAX_SHARDS];
    int64_t rows[PS_MAX_SHARDS];
};

tfc_ps_strategy *tfc_parameter_server_strategy_new(const tfc_cluster *cluster,
                                                   const tfc_variable_partitioner *partitioner,
                                                   double timeout_seconds, tfc_status *st) {
    int n_ps = 0, n_workers = 0;
    for (int j = 0; cluster && j < cluster->n_jobs; j++) {
        if (!strcmp(cluster->jobs[j].name, "ps")) n_ps = cluster->jobs[j].n_tasks;
        if (!strcmp(cluster->jobs[j].name, "worker")) n_workers = cluster->jobs[j].n_tasks;
    }
    if (n_ps < 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ParameterServerStrategy: the cluster has no 'ps' job"), NULL;
    tfc_ps_strategy *s = calloc(1, sizeof *s);
    if (!s) return tfc_status_oom(st, "ParameterServerStrategy", sizeof *s), NULL;
    s->cluster = cluster;
    s->n_ps = n_ps;
    s->n_workers = n_workers;
    s->timeout = timeout_seconds > 0 ? timeout_seconds : 30;
    if (partitioner) s->partitioner = *partitioner;
    for (int i = 0; i < n_ps; i++) {
        const char *addr = tfc_cluster_address(cluster, "ps", i);
        if (!addr || !(s->ps[i] = ps_transport_nng(addr, s->timeout, st))) {
            if (!addr) tfc_status_set(st, TFC_INVALID_ARGUMENT, "ParameterServerStrategy: ps task %d has no address", i);
            tfc_ps_strategy_free(s);
            return NULL;
        }
    }
    return s;
}

void tfc_ps_strategy_inject_faults(tfc_ps_strategy *s, uint32_t seed, double dup, double delay, int max_delay_ms) {
    s->faults.seed = seed;
    s->faults.dup = dup;
    s->faults.delay = delay;
    s->faults.max_delay_ms = max_delay_ms;
    s->faults.on = true;
    for (int i = 0; i < s->n_ps; i++) {
        ps_transport *f = ps_transport_faulty(s->ps[i], seed + (uint32_t)i, dup, delay, max_delay_ms);
        if (f) s->ps[i] = f;
    }
}

void tfc_ps_strategy_free(tfc_ps_strategy *s) {
    if (!s) return;
    for (int i = 0; i < s->n_ps; i++) ps_transport_free(s->ps[i]);
    for (int i = 0; i < s->n_vars; i++) free(s->vars[i]);
    free(s->vars);
    free(s);
}

int tfc_ps_strategy_num_ps(const tfc_ps_strategy *s) { return s->n_ps; }
int tfc_ps_strategy_num_workers(const tfc_ps_strategy *s) { return s->n_workers; }

static void shard_name(const tfc_ps_variable *v, int i, char *buf, size_t size) {
    if (v->n_shards == 1) snprintf(buf, size, "%s", v->name);
    else snprintf(buf, size, "%s/part_%d", v->name, i);
}

/* Shard i's rows as a tensor view copy of t's rows [off, off + rows). */
static tfc_tensor *rows_of(const tfc_tensor *t, int64_t off, int64_t rows, tfc_status *st) {
    const tfc_shape *sh = tfc_tensor_shape(t);
    if (sh->rank == 0) return tfc_tensor_copy(t, st);
    const size_t row_bytes = tfc_tensor_byte_size(t) / (size_t)(sh->dims[0] ? sh->dims[0] : 1);
    int64_t dims[TFC_MAX_RANK];
    memcpy(dims, sh->dims, sizeof dims);
    dims[0] = rows;
    return tfc_tensor_from_data(tfc_tensor_dtype(t), dims, sh->rank,
                                (const char *)tfc_tensor_data(t) + (size_t)off * row_bytes, (size_t)rows * row_bytes,
                                st); /* size-ok: rows within a tensor that exists */
}

static bool check_value(const tfc_ps_variable *v, const tfc_tensor *t, const char *what, tfc_status *st) {
    const tfc_shape *sh = tfc_tensor_shape(t);
    bool same = tfc_tensor_dtype(t) == v->dtype && sh->rank == v->shape.rank;
    for (int i = 0; same && i < sh->rank; i++) same = sh->dims[i] == v->shape.dims[i];
    if (same) return true;
    char a[64], b[64];
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s of variable '%s': got %s %s, the variable is %s %s", what,
                          v->name, tfc_dtype_name(tfc_tensor_dtype(t)), tfc_shape_str(sh, a, sizeof a),
                          tfc_dtype_name(v->dtype), tfc_shape_str(&v->shape, b, sizeof b));
}

/* Sends op with value's rows (NULL: none) to every shard. */
static bool each_shard(tfc_ps_variable *v, int op, const tfc_tensor *value, double arg, tfc_status *st) {
    int64_t off = 0;
    for (int i = 0; i < v->n_shards; i++) {
        ps_msg req, rep;
        char name[PS_NAME_MAX];
        shard_name(v, i, name, sizeof name);
        ps_msg_init(&req, op, name);
        req.value = arg;
        req.id = op == PS_OP_CREATE ? 0 : ps_next_message_id();
        tfc_tensor *part = rows_of(value, off, v->rows[i], st);
        bool ok = part && ps_msg_add(&req, part, st);
        tfc_tensor_unref(part);
        ok = ok && ps_rpc(v->s->ps[v->task[i]], &req, &rep, NULL, st);
        ps_msg_clear(&req);
        ps_msg_clear(&rep);
        if (!ok) return false;
        off += v->rows[i];
    }
    return true;
}

tfc_ps_variable *tfc_ps_variable_new(tfc_ps_strategy *s, const char *name, const tfc_tensor *init, tfc_status *st) {
    const tfc_dtype dt = init ? tfc_tensor_dtype(init) : TFC_INVALID_DTYPE;
    if (!name || !*name || strlen(name) > 100 || !init)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps variable: name (1..100 bytes) and initial value needed"),
               NULL;
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && dt != TFC_INT32 && dt != TFC_INT64)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "ps variable '%s': dtype %s (float32, float64, int32, int64)",
                              name, tfc_dtype_name(dt)), NULL;
    for (int i = 0; i < s->n_vars; i++)
        if (!strcmp(s->vars[i]->name, name))
            return tfc_status_set(st, TFC_ALREADY_EXISTS, "ps variable '%s' already exists", name), NULL;
    tfc_ps_variable *v = calloc(1, sizeof *v);
    tfc_ps_variable **nv = v ? realloc(s->vars, (size_t)(s->n_vars + 1) * sizeof *nv) : NULL;
    if (!nv) {
        free(v);
        return tfc_status_oom(st, "ps variable", sizeof *v), NULL;
    }
    s->vars = nv;
    v->s = s;
    snprintf(v->name, sizeof v->name, "%s", name);
    v->dtype = dt;
    v->shape = *tfc_tensor_shape(init);
    int64_t n = tfc_partitioner_num_shards(&s->partitioner, v->shape.dims, v->shape.rank, dt);
    if (n > PS_MAX_SHARDS) n = PS_MAX_SHARDS;
    v->n_shards = (int)n;
    const int64_t dim0 = v->shape.rank ? v->shape.dims[0] : 1;
    for (int i = 0; i < v->n_shards; i++) {
        v->rows[i] = v->shape.rank ? dim0 / n + (i < dim0 % n ? 1 : 0) : 1;
        v->task[i] = s->next_task;
        s->next_task = (s->next_task + 1) % s->n_ps;
    }
    if (!each_shard(v, PS_OP_CREATE, init, 0, st)) {
        free(v);
        return NULL;
    }
    s->vars[s->n_vars++] = v;
    return v;
}

const char *tfc_ps_variable_name(const tfc_ps_variable *v) { return v->name; }
int tfc_ps_variable_num_shards(const tfc_ps_variable *v) { return v->n_shards; }
int tfc_ps_variable_shard_task(const tfc_ps_variable *v, int i) { return i >= 0 && i < v->n_shards ? v->task[i] : -1; }
int64_t tfc_ps_variable_shard_rows(const tfc_ps_variable *v, int i) {
    return i >= 0 && i < v->n_shards ? v->rows[i] : -1;
}

tfc_tensor *tfc_ps_variable_read(tfc_ps_variable *v, tfc_status *st) {
    if (v->n_shards == 1) { /* the reply's tensor itself */
        ps_msg req, rep;
        ps_msg_init(&req, PS_OP_READ, v->name);
        if (!ps_rpc(v->s->ps[v->task[0]], &req, &rep, NULL, st)) return NULL;
        tfc_tensor *t = rep.n_tensors == 1 ? tfc_tensor_ref(rep.t[0]) : NULL;
        ps_msg_clear(&rep);
        if (t && !check_value(v, t, "read", st)) {
            tfc_tensor_unref(t);
            return NULL;
        }
        if (!t) tfc_status_set(st, TFC_DATA_LOSS, "read of '%s': ps task %d sent no value", v->name, v->task[0]);
        return t;
    }
    tfc_tensor *out = tfc_tensor_new(v->dtype, v->shape.dims, v->shape.rank, st);
    size_t at = 0;
    for (int i = 0; out && i < v->n_shards; i++) {
        ps_msg req, rep;
        char name[PS_NAME_MAX];
        shard_name(v, i, name, sizeof name);
        ps_msg_init(&req, PS_OP_READ, name);
        bool ok = ps_rpc(v->s->ps[v->task[i]], &req, &rep, NULL, st);
        if (ok && (rep.n_tensors != 1 || tfc_tensor_dtype(rep.t[0]) != v->dtype ||
                   tfc_tensor_byte_size(rep.t[0]) > tfc_tensor_byte_size(out) - at))
            ok = tfc_status_set(st, TFC_DATA_LOSS, "read of '%s': ps task %d sent a value of another shape", name,
                                v->task[i]);
        if (ok) {
            memcpy((char *)tfc_tensor_mutable_data(out) + at, tfc_tensor_data(rep.t[0]), tfc_tensor_byte_size(rep.t[0]));
            at += tfc_tensor_byte_size(rep.t[0]);
        }
        ps_msg_clear(&rep);
        if (!ok) {
            tfc_tensor_unref(out);
            return NULL;
        }
    }
    return out;
}

bool tfc_ps_variable_assign(tfc_ps_variable *v, const tfc_tensor *value, tfc_status *st) {
    return check_value(v, value, "assign", st) && each_shard(v, PS_OP_ASSIGN, value, 0, st);
}

bool tfc_ps_variable_assign_add(tfc_ps_variable *v, const tfc_tensor *delta, tfc_status *st) {
    return check_value(v, delta, "assign_add", st) && each_shard(v, PS_OP_ASSIGN_ADD, delta, 0, st);
}

bool tfc_ps_variable_apply_sgd(tfc_ps_variable *v, const tfc_tensor *gradient, double learning_rate,
                               tfc_status *st) {
    return check_value(v, gradient, "apply_sgd", st) && each_shard(v, PS_OP_APPLY_SGD, gradient, learning_rate, st);
}
