/* tf.distribute.Server for ps and worker tasks (parameter_server.h): a ps server holds variables and applies
 * updates; a worker server runs registered functions. Requests are served one at a time; state-changing
 * requests carry a message id and a repeated id is answered from the cache of replies, so every handler is
 * idempotent under REQ/REP resends and duplicated messages. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "distribute/ps_internal.h"
#include "tfc/eager.h"
#include "tfc/ops/math.h"

#define REPLY_CACHE 8192

typedef struct {
    char *name;
    tfc_tensor *value;
} ps_var;

typedef struct {
    uint64_t id;
    uint8_t *bytes;
    size_t len;
} cached_reply;

struct tfc_server {
    char job[16];
    int task;
    char target[128];
    ps_listener *lis;
    pthread_t thread;
    bool started;
    volatile int stop;
    tfc_status serve_st;
    tfc_ctx *ctx;           /* ps: the updates' eager ops */
    ps_var *vars;
    int n_vars, cap_vars;
    cached_reply cache[REPLY_CACHE];
    int cache_next;
    int64_t runs;           /* worker: functions executed */
};

static ps_var *find_var(tfc_server *s, const char *name) {
    for (int i = 0; i < s->n_vars; i++)
        if (!strcmp(s->vars[i].name, name)) return &s->vars[i];
    return NULL;
}

static bool same_kind(const tfc_tensor *a, const tfc_tensor *b, const char *what, const char *name,
                      tfc_status *st) {
    const tfc_shape *sa = tfc_tensor_shape(a), *sb = tfc_tensor_shape(b);
    bool same = tfc_tensor_dtype(a) == tfc_tensor_dtype(b) && sa->rank == sb->rank;
    for (int i = 0; same && i < sa->rank; i++) same = sa->dims[i] == sb->dims[i];
    if (same) return true;
    char ba[64], bb[64];
    tfc_shape_str(sa, ba, sizeof ba);
    tfc_shape_str(sb, bb, sizeof bb);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s variable '%s': %s %s does not match the variable's %s %s",
                          what, name, tfc_dtype_name(tfc_tensor_dtype(b)), bb, tfc_dtype_name(tfc_tensor_dtype(a)),
                          ba);
}

static bool var_create(tfc_server *s, const ps_msg *m, tfc_status *st) {
    if (m->n_tensors != 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "create '%s': needs 1 tensor", m->name);
    const tfc_dtype dt = tfc_tensor_dtype(m->t[0]);
    if (dt != TFC_FLOAT && dt != TFC_DOUBLE && dt != TFC_INT32 && dt != TFC_INT64)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "create '%s': dtype %s (float32, float64, int32, int64)",
                              m->name, tfc_dtype_name(dt));
    ps_var *v = find_var(s, m->name);
    if (v) return same_kind(v->value, m->t[0], "create", m->name, st); /* attach */
    if (s->n_vars == s->cap_vars) {
        const int cap = s->cap_vars ? 2 * s->cap_vars : 16;
        ps_var *nv = realloc(s->vars, (size_t)cap * sizeof *nv);
        if (!nv) return tfc_status_oom(st, "ps variables", (size_t)cap * sizeof *nv);
        s->vars = nv;
        s->cap_vars = cap;
    }
    char *name = strdup(m->name);
    if (!name) return tfc_status_oom(st, "ps variable name", strlen(m->name));
    s->vars[s->n_vars++] = (ps_var){name, tfc_tensor_ref(m->t[0])};
    return true;
}

static bool var_update(tfc_server *s, const ps_msg *m, ps_msg *rep, tfc_status *st) {
    ps_var *v = find_var(s, m->name);
    if (!v) return tfc_status_set(st, TFC_NOT_FOUND, "variable '%s' is not on ps task %d", m->name, s->task);
    if (m->op == PS_OP_READ) return ps_msg_add(rep, v->value, st);
    if (m->n_tensors != 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "update '%s': needs 1 tensor", m->name);
    if (!same_kind(v->value, m->t[0], "update", m->name, st)) return false;
    tfc_tensor *nv = NULL;
    if (m->op == PS_OP_ASSIGN) {
        nv = tfc_tensor_ref(m->t[0]);
    } else if (m->op == PS_OP_ASSIGN_ADD) {
        nv = tfc_add(s->ctx, v->value, m->t[0], st);
    } else {
        tfc_tensor *lr = tfc_scalar(tfc_tensor_dtype(v->value), m->value, st);
        tfc_tensor *step = lr ? tfc_mul(s->ctx, m->t[0], lr, st) : NULL;
        nv = step ? tfc_sub(s->ctx, v->value, step, st) : NULL;
        tfc_tensor_unref(step);
        tfc_tensor_unref(lr);
    }
    if (!nv) return false;
    tfc_tensor_unref(v->value);
    v->value = nv;
    return true;
}

static bool run_function(tfc_server *s, const ps_msg *m, ps_msg *rep, tfc_status *st) {
    void *user = NULL;
    tfc_remote_function fn = ps_function_lookup(m->name, &user);
    if (!fn) return tfc_status_set(st, TFC_NOT_FOUND, "worker %d: no function registered as '%s'", s->task, m->name);
    tfc_tensor *out[TFC_REMOTE_MAX_OUTPUTS] = {0};
    int n_out = 0;
    ps_step_begin(m->step ? (uint64_t)m->step : ps_next_message_id());
    const bool ok = fn(m->t, m->n_tensors, out, &n_out, user, st);
    ps_step_end();
    s->runs++;
    if (ok && st->code != TFC_OK) tfc_status_clear(st);
    if (!ok && st->code == TFC_OK) tfc_status_set(st, TFC_UNKNOWN, "function '%s' failed without a status", m->name);
    bool added = ok;
    for (int i = 0; i < n_out && i < TFC_REMOTE_MAX_OUTPUTS; i++) {
        if (added && out[i]) added = ps_msg_add(rep, out[i], st);
        tfc_tensor_unref(out[i]);
    }
    return added;
}

static bool dispatch(tfc_server *s, const ps_msg *m, ps_msg *rep, tfc_status *st) {
    const bool ps = !strcmp(s->job, "ps");
    switch (m->op) {
    case PS_OP_PING: return true;
    case PS_OP_STOP: s->stop = 1; return true;
    case PS_OP_CREATE: if (ps) return var_create(s, m, st); break;
    case PS_OP_READ: case PS_OP_ASSIGN: case PS_OP_ASSIGN_ADD: case PS_OP_APPLY_SGD:
        if (ps) return var_update(s, m, rep, st);
        break;
    case PS_OP_RUN: if (!ps) return run_function(s, m, rep, st); break;
    case PS_OP_MAKE_ITERATOR: if (!ps) return ps_iterator_make(m->name, (uint64_t)m->step, s->task, st); break;
    case PS_OP_COUNT:
        rep->step = ps ? s->n_vars : s->runs;
        if (m->step == 1) s->runs = 0;
        return true;
    default: break;
    }
    return tfc_status_set(st, TFC_UNIMPLEMENTED, "request %d is not served by a %s task", m->op, s->job);
}

static const cached_reply *cache_find(tfc_server *s, uint64_t id) {
    for (int i = 0; i < REPLY_CACHE; i++)
        if (s->cache[i].id == id && s->cache[i].bytes) return &s->cache[i];
    return NULL;
}

static void cache_put(tfc_server *s, uint64_t id, const uint8_t *bytes, size_t len) {
    cached_reply *c = &s->cache[s->cache_next];
    s->cache_next = (s->cache_next + 1) % REPLY_CACHE;
    free(c->bytes);
    c->bytes = malloc(len ? len : 1);
    c->id = c->bytes ? id : 0;
    c->len = len;
    if (c->bytes) memcpy(c->bytes, bytes, len);
}

static void handle(void *user, const uint8_t *req, size_t n, uint8_t **out, size_t *on) {
    tfc_server *s = user;
    tfc_status st = TFC_STATUS_INIT;
    ps_msg m, rep;
    ps_msg_init(&rep, PS_OP_PING, NULL);
    if (ps_msg_decode(req, n, &m, &st)) {
        rep.op = m.op;
        rep.id = m.id;
        const cached_reply *c = m.id ? cache_find(s, m.id) : NULL;
        if (c && (*out = malloc(c->len ? c->len : 1))) {
            memcpy(*out, c->bytes, c->len);
            *on = c->len;
            ps_msg_clear(&m);
            return;
        }
        dispatch(s, &m, &rep, &st);
        ps_msg_clear(&m);
    }
    if (st.code != TFC_OK) {
        ps_msg_clear(&rep);
        rep.code = st.code;
        snprintf(rep.name, sizeof rep.name, "%s", st.msg);
    }
    tfc_status est = TFC_STATUS_INIT;
    if (!ps_msg_encode(&rep, out, on, &est)) { /* out of memory: an empty reply fails the client's decode */
        *out = malloc(1);
        *on = 0;
    } else if (rep.id && rep.code != TFC_UNAVAILABLE && rep.code != TFC_ABORTED) {
        cache_put(s, rep.id, *out, *on); /* UNAVAILABLE (a ps task down) and ABORTED may succeed when retried */
    }
    ps_msg_clear(&rep);
}

static void *serve_thread(void *arg) {
    tfc_server *s = arg;
    ps_listener_serve(s->lis, handle, s, &s->stop, &s->serve_st);
    return NULL;
}

tfc_server *tfc_server_new(const tfc_cluster *cluster, const char *job_name, int task_index, const char *protocol,
                           tfc_status *st) {
    if (protocol && strcmp(protocol, "nng") && strcmp(protocol, "grpc"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Server: protocol '%s' (this build speaks nng; 'grpc' is "
                                                        "taken as nng)", protocol), NULL;
    if (!job_name || (strcmp(job_name, "ps") && strcmp(job_name, "worker")))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Server: job_name '%s' (ps or worker)",
                              job_name ? job_name : "(null)"), NULL;
    const char *addr = cluster ? tfc_cluster_address(cluster, job_name, task_index) : NULL;
    if (!addr)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Server: task %d of job '%s' is not in the cluster spec",
                              task_index, job_name), NULL;
    tfc_server *s = calloc(1, sizeof *s);
    if (!s) return tfc_status_oom(st, "server", sizeof *s), NULL;
    snprintf(s->job, sizeof s->job, "%s", job_name);
    snprintf(s->target, sizeof s->target, "%s", addr);
    s->task = task_index;
    s->serve_st = (tfc_status)TFC_STATUS_INIT;
    if (!strcmp(job_name, "ps") && !(s->ctx = tfc_ctx_new(NULL, st))) {
        free(s);
        return NULL;
    }
    if (!(s->lis = ps_listener_new(addr, st)) || pthread_create(&s->thread, NULL, serve_thread, s)) {
        if (s->lis && st->code == TFC_OK) tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "Server: cannot start a thread");
        tfc_server_free(s);
        return NULL;
    }
    s->started = true;
    return s;
}

const char *tfc_server_target(const tfc_server *s) { return s->target; }

bool tfc_server_join(tfc_server *s, tfc_status *st) {
    if (s->started) pthread_join(s->thread, NULL);
    s->started = false;
    if (s->serve_st.code != TFC_OK) {
        *st = s->serve_st;
        return false;
    }
    return true;
}

void tfc_server_stop(tfc_server *s) { s->stop = 1; }

void tfc_server_free(tfc_server *s) {
    if (!s) return;
    s->stop = 1;
    if (s->started) pthread_join(s->thread, NULL);
    ps_listener_free(s->lis);
    for (int i = 0; i < s->n_vars; i++) {
        free(s->vars[i].name);
        tfc_tensor_unref(s->vars[i].value);
    }
    free(s->vars);
    for (int i = 0; i < REPLY_CACHE; i++) free(s->cache[i].bytes);
    tfc_ctx_free(s->ctx);
    if (!strcmp(s->job, "worker")) ps_iterators_clear();
    free(s);
}

bool tfc_server_stop_remote(const char *host_port, double timeout_seconds, tfc_status *st) {
    ps_transport *t = ps_transport_nng(host_port, timeout_seconds, st);
    if (!t) return false;
    ps_msg req, rep;
    ps_msg_init(&req, PS_OP_STOP, NULL);
    const bool ok = ps_rpc(t, &req, &rep, NULL, st);
    ps_msg_clear(&rep);
    ps_transport_free(t);
    return ok;
}
