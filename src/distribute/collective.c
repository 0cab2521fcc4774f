/* Collectives on tensors over a backend (collective.h): the header exchange that turns a dtype or shape
 * mismatch into INVALID_ARGUMENT on every member instead of a hang or garbage, float16/bfloat16 summed in
 * float32, MEAN, fused packs; and the "local" backend that synchronises the replica threads of one process. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "distribute/collective.h"

#define DEFAULT_TIMEOUT 300.0

double tfc_coll_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tfc_coll_init(tfc_collective *c, const tfc_coll_vt *vt, int rank, int size, double timeout, const char *task,
                   const char *member_fmt) {
    c->vt = vt;
    c->rank = rank;
    c->size = size;
    c->timeout = timeout > 0 ? timeout : DEFAULT_TIMEOUT;
    snprintf(c->task, sizeof c->task, "%s", task);
    snprintf(c->member_fmt, sizeof c->member_fmt, "%s", member_fmt);
}

bool tfc_coll_timeout(tfc_collective *c, const char *what, tfc_status *st) {
    c->broken = true;
    return tfc_status_set(st, TFC_UNAVAILABLE,
                          "%s #%lld on %s did not complete within %g s: a task of the group (%d tasks) is dead or "
                          "not taking part",
                          what, (long long)c->seq, c->task, c->timeout, c->size);
}

int tfc_collective_rank(const tfc_collective *c) { return c->rank; }
int tfc_collective_size(const tfc_collective *c) { return c->size; }
const char *tfc_collective_backend(const tfc_collective *c) { return c->vt->name; }

void tfc_collective_stats(const tfc_collective *c, int64_t *calls, double *seconds) {
    if (calls) *calls = c->seq;
    if (seconds) *seconds = c->busy;
}

void tfc_collective_free(tfc_collective *c) {
    if (c) c->vt->destroy(c);
}

/* ---- the header exchange ---------------------------------------------------------------------------------- */
typedef enum { K_ALL_REDUCE = 1, K_BROADCAST, K_ALL_GATHER } kind;
static const char *kind_name(int k) {
    return k == K_ALL_REDUCE ? "all_reduce" : k == K_BROADCAST ? "broadcast" : k == K_ALL_GATHER ? "all_gather" : "?";
}

typedef struct {
    int32_t kind, dtype, rank, aux; /* aux: reduce op / root */
    int64_t dims[TFC_MAX_RANK];
    int64_t seq;
} header;

static char *member_name(const tfc_collective *c, int r, char *buf, size_t n) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(buf, n, c->member_fmt, r);
#pragma GCC diagnostic pop
    return buf;
}

static void header_str(const header *h, char *buf, size_t n) {
    tfc_shape s = {.rank = h->rank};
    for (int i = 0; i < h->rank && i < TFC_MAX_RANK; i++) s.dims[i] = h->dims[i];
    char sh[TFC_SHAPE_STR];
    snprintf(buf, n, "%s %s %s", kind_name(h->kind), tfc_dtype_name((tfc_dtype)h->dtype), tfc_shape_str(&s, sh, sizeof sh));
}

/* Exchanges every member's header; on a mismatch with rank 0's (the first dim excepted for all_gather) every
 * member reports the same INVALID_ARGUMENT. hs receives all headers (size entries). */
static bool exchange_dims(tfc_collective *c, kind k, tfc_dtype dt, int rank, const int64_t *dims, int aux, header *hs,
                          tfc_status *st) {
    if (c->broken)
        return tfc_status_set(st, TFC_UNAVAILABLE, "%s on %s: the collective group is broken by an earlier failure",
                              kind_name(k), c->task);
    c->seq++;
    header h = {.kind = k, .dtype = dt, .rank = rank, .aux = aux, .seq = c->seq};
    for (int i = 0; i < h.rank; i++) h.dims[i] = dims[i];
    int64_t bytes_of[TFC_CLUSTER_MAX_TASKS];
    for (int r = 0; r < c->size; r++) bytes_of[r] = (int64_t)sizeof h;
    if (!c->vt->all_gather_v(c, &h, (int64_t)sizeof h, hs, bytes_of, st)) return false;
    for (int r = 1; r < c->size; r++) {
        const header *a = &hs[0], *b = &hs[r];
        bool same = a->kind == b->kind && a->dtype == b->dtype && a->rank == b->rank && a->aux == b->aux;
        for (int i = (k == K_ALL_GATHER ? 1 : 0); same && i < a->rank; i++) same = a->dims[i] == b->dims[i];
        if (!same) {
            char n0[64], n1[64], s0[96], s1[96];
            header_str(a, s0, sizeof s0);
            header_str(b, s1, sizeof s1);
            const char *what = a->kind != b->kind ? "different collectives"
                               : a->aux != b->aux ? (k == K_BROADCAST ? "different roots" : "different reduce ops")
                               : k == K_ALL_GATHER ? "dtypes or non-leading dims differ"
                                                   : "dtypes or shapes differ";
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s #%lld: %s across the group: %s has %s (aux %d), %s has %s (aux %d)",
                                  kind_name(k), (long long)c->seq, what, member_name(c, 0, n0, sizeof n0), s0, a->aux,
                                  member_name(c, r, n1, sizeof n1), s1, b->aux);
        }
    }
    return true;
}

static bool exchange(tfc_collective *c, kind k, const tfc_tensor *t, int aux, header *hs, tfc_status *st) {
    const tfc_shape *s = tfc_tensor_shape(t);
    return exchange_dims(c, k, tfc_tensor_dtype(t), s->rank, s->dims, aux, hs, st);
}

static bool reducible(tfc_dtype dt) {
    return dt == TFC_FLOAT || dt == TFC_DOUBLE || dt == TFC_HALF || dt == TFC_BFLOAT16 || dt == TFC_INT32 ||
           dt == TFC_INT64;
}

/* Widens float16/bfloat16 to float32 (into w, n floats) and back. */
static void widen(tfc_dtype dt, const void *src, float *w, int64_t n) {
    for (int64_t i = 0; i < n; i++)
        w[i] = dt == TFC_HALF ? tfc_half_to_float(((const tfc_half *)src)[i]) : tfc_bfloat16_to_float(((const tfc_bfloat16 *)src)[i]);
}
static void narrow(tfc_dtype dt, const float *w, void *dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) {
        if (dt == TFC_HALF) ((tfc_half *)dst)[i] = tfc_half_from_float(w[i]);
        else ((tfc_bfloat16 *)dst)[i] = tfc_bfloat16_from_float(w[i]);
    }
}

/* buf receives the sum (MEAN: divided by the group size) of every member's src (n elements of dt; src may be
 * buf). */
static bool reduce_buffer(tfc_collective *c, const void *src, void *buf, int64_t n, tfc_dtype dt, tfc_reduce_op op,
                          tfc_status *st) {
    if (dt == TFC_HALF || dt == TFC_BFLOAT16) {
        float *w = tfc_malloc((size_t)(n ? n : 1) * sizeof *w);
        if (!w) return tfc_status_oom(st, "all_reduce", (size_t)n * 4);
        widen(dt, src, w, n);
        bool ok = c->vt->all_reduce_sum(c, w, w, n, TFC_FLOAT, st);
        if (ok && op == TFC_REDUCE_MEAN)
            for (int64_t i = 0; i < n; i++) w[i] /= (float)c->size;
        if (ok) narrow(dt, w, buf, n);
        tfc_free(w);
        return ok;
    }
    if (!c->vt->all_reduce_sum(c, src, buf, n, dt, st)) return false;
    if (op != TFC_REDUCE_MEAN) return true;
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case TFC_FLOAT: ((float *)buf)[i] /= (float)c->size; break;
        case TFC_DOUBLE: ((double *)buf)[i] /= (double)c->size; break;
        case TFC_INT32: ((int32_t *)buf)[i] /= c->size; break;
        default: ((int64_t *)buf)[i] /= c->size; break;
        }
    }
    return true;
}

static tfc_tensor *coll_all_reduce(tfc_collective *c, const tfc_tensor *t, tfc_reduce_op op, tfc_status *st) {
    tfc_dtype dt = tfc_tensor_dtype(t);
    if (!reducible(dt))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "all_reduce: dtype %s is not supported (float32, float64, "
                              "float16, bfloat16, int32, int64)", tfc_dtype_name(dt)), NULL;
    header hs[TFC_CLUSTER_MAX_TASKS];
    if (!exchange(c, K_ALL_REDUCE, t, (int)op, hs, st)) return NULL;
    const tfc_shape *s = tfc_tensor_shape(t);
    tfc_tensor *out = tfc_tensor_new(dt, s->dims, s->rank, st);
    if (!out) return NULL;
    if (!reduce_buffer(c, tfc_tensor_data(t), tfc_tensor_mutable_data(out), tfc_tensor_num_elements(out), dt, op, st)) {
        tfc_tensor_unref(out);
        return NULL;
    }
    return out;
}

static bool coll_all_reduce_n(tfc_collective *c, tfc_tensor **ts, int n, tfc_reduce_op op, int64_t bytes_per_pack,
                              tfc_status *st) {
    /* a pack is a run of consecutive tensors of one dtype up to bytes_per_pack bytes; its shapes are checked
     * through one header holding the pack's dtype and its element count per tensor (up to 8 tensors spelt out,
     * the total beyond) */
    for (int i = 0; i < n;) {
        tfc_dtype dt = tfc_tensor_dtype(ts[i]);
        if (!reducible(dt))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "all_reduce: tensor %d: dtype %s is not supported", i,
                                  tfc_dtype_name(dt));
        int j = i;
        int64_t bytes = 0, elems = 0;
        while (j < n && tfc_tensor_dtype(ts[j]) == dt &&
               (j == i || bytes_per_pack <= 0 || bytes + (int64_t)tfc_tensor_byte_size(ts[j]) <= bytes_per_pack)) {
            bytes += (int64_t)tfc_tensor_byte_size(ts[j]);
            elems += tfc_tensor_num_elements(ts[j]);
            j++;
        }
        int64_t desc[TFC_MAX_RANK] = {0};
        for (int k = i; k < j; k++) desc[(k - i) < TFC_MAX_RANK - 1 ? k - i : TFC_MAX_RANK - 1] += tfc_tensor_num_elements(ts[k]);
        int rank = j - i < TFC_MAX_RANK ? j - i : TFC_MAX_RANK;
        header hs[TFC_CLUSTER_MAX_TASKS];
        bool ok = exchange_dims(c, K_ALL_REDUCE, dt, rank, desc, (int)op, hs, st);
        if (!ok) return false;
        size_t esz = tfc_dtype_size(dt);
        unsigned char *pack = tfc_malloc((size_t)(bytes ? bytes : 1));
        if (!pack) return tfc_status_oom(st, "all_reduce pack", (size_t)bytes);
        size_t off = 0;
        for (int k = i; k < j; k++) {
            memcpy(pack + off, tfc_tensor_data(ts[k]), tfc_tensor_byte_size(ts[k]));
            off += tfc_tensor_byte_size(ts[k]);
        }
        ok = reduce_buffer(c, pack, pack, elems, dt, op, st);
        off = 0;
        for (int k = i; k < j && ok; k++) {
            const tfc_shape *s = tfc_tensor_shape(ts[k]);
            tfc_tensor *r = tfc_tensor_from_data(dt, s->dims, s->rank, pack + off, tfc_tensor_byte_size(ts[k]), st);
            if (!r) {
                ok = false;
                break;
            }
            off += (size_t)tfc_tensor_num_elements(ts[k]) * esz;
            tfc_tensor_unref(ts[k]);
            ts[k] = r;
        }
        tfc_free(pack);
        if (!ok) return false;
        i = j;
    }
    return true;
}

static tfc_tensor *coll_broadcast(tfc_collective *c, const tfc_tensor *t, int root, tfc_status *st) {
    tfc_dtype dt = tfc_tensor_dtype(t);
    if (dt == TFC_STRING || dt == TFC_RESOURCE)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "broadcast: dtype %s is not supported", tfc_dtype_name(dt)), NULL;
    if (root < 0 || root >= c->size)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "broadcast: root %d out of range [0, %d)", root, c->size), NULL;
    header hs[TFC_CLUSTER_MAX_TASKS];
    if (!exchange(c, K_BROADCAST, t, root, hs, st)) return NULL;
    tfc_tensor *out = tfc_tensor_copy(t, st);
    if (out && !c->vt->broadcast(c, tfc_tensor_mutable_data(out), (int64_t)tfc_tensor_byte_size(out), root, st)) {
        tfc_tensor_unref(out);
        out = NULL;
    }
    return out;
}

static tfc_tensor *coll_all_gather(tfc_collective *c, const tfc_tensor *t, tfc_status *st) {
    tfc_dtype dt = tfc_tensor_dtype(t);
    if (dt == TFC_STRING || dt == TFC_RESOURCE)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "all_gather: dtype %s is not supported", tfc_dtype_name(dt)), NULL;
    tfc_tensor *in = NULL;
    if (tfc_tensor_rank(t) == 0) { /* gathered as [1] each */
        int64_t one = 1;
        if (!(in = tfc_tensor_from_data(dt, &one, 1, tfc_tensor_data(t), tfc_tensor_byte_size(t), st))) return NULL;
        t = in;
    }
    header hs[TFC_CLUSTER_MAX_TASKS];
    tfc_tensor *out = NULL;
    if (!exchange(c, K_ALL_GATHER, t, 0, hs, st)) goto done;
    int64_t rows = 0, row_bytes = (int64_t)tfc_dtype_size(dt), bytes_of[TFC_CLUSTER_MAX_TASKS];
    for (int i = 1; i < tfc_tensor_rank(t); i++) row_bytes *= tfc_tensor_dim(t, i);
    for (int r = 0; r < c->size; r++) {
        rows += hs[r].dims[0];
        bytes_of[r] = hs[r].dims[0] * row_bytes;
    }
    tfc_shape s = *tfc_tensor_shape(t);
    s.dims[0] = rows;
    if (!(out = tfc_tensor_new(dt, s.dims, s.rank, st))) goto done;
    if (!c->vt->all_gather_v(c, tfc_tensor_data(t), (int64_t)tfc_tensor_byte_size(t), tfc_tensor_mutable_data(out),
                             bytes_of, st)) {
        tfc_tensor_unref(out);
        out = NULL;
    }
done:
    tfc_tensor_unref(in);
    return out;
}

/* ---- the local backend: replica threads of one process ------------------------------------------------- */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int n, arrived, refs;
    int64_t gen;
    bool broken;
    bool here[TFC_CLUSTER_MAX_TASKS];
    const void *ptr[TFC_CLUSTER_MAX_TASKS];
} rdv;

/* A barrier with a deadline; the group breaks (every waiter fails) on a timeout or an abort. */
static bool rdv_barrier(tfc_collective *c, const char *what, tfc_status *st) {
    rdv *r = c->impl;
    pthread_mutex_lock(&r->mu);
    if (r->broken) {
        pthread_mutex_unlock(&r->mu);
        c->broken = true;
        return tfc_status_set(st, TFC_UNAVAILABLE, "%s on %s: a replica of the group failed", what, c->task);
    }
    int64_t g = r->gen;
    r->here[c->rank] = true;
    if (++r->arrived == r->n) {
        r->arrived = 0;
        memset(r->here, 0, sizeof r->here);
        r->gen++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        return true;
    }
    double dl = tfc_coll_now() + c->timeout;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    double add = c->timeout;
    ts.tv_sec += (time_t)add;
    ts.tv_nsec += (long)((add - (double)(time_t)add) * 1e9);
    if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
    while (r->gen == g && !r->broken && tfc_coll_now() < dl)
        if (pthread_cond_timedwait(&r->cv, &r->mu, &ts)) break;
    bool ok = r->gen != g;
    char missing[64] = "";
    if (!ok) {
        for (int i = 0, k = 0; i < r->n; i++)
            if (!r->here[i]) k += snprintf(missing + k, sizeof missing - (size_t)k, "%s%d", k ? "," : "", i);
        r->broken = true;
        pthread_cond_broadcast(&r->cv);
    }
    pthread_mutex_unlock(&r->mu);
    if (ok) return true;
    c->broken = true;
    return tfc_status_set(st, TFC_UNAVAILABLE, "%s #%lld on %s: replicas [%s] did not join within %g s (or a replica "
                          "failed)", what, (long long)c->seq, c->task, missing, c->timeout);
}

static bool local_reduce(tfc_collective *c, const void *send, void *buf, int64_t count, tfc_dtype dt, tfc_status *st) {
    rdv *r = c->impl;
    size_t esz = tfc_dtype_size(dt), bytes = (size_t)count * esz;
    void *acc = tfc_malloc(bytes ? bytes : 1);
    if (!acc) return tfc_status_oom(st, "all_reduce", bytes);
    r->ptr[c->rank] = send;
    bool ok = rdv_barrier(c, "all_reduce", st);
    if (ok) { /* every member sums in rank order: identical results */
        memcpy(acc, r->ptr[0], bytes);
        for (int m = 1; m < r->n; m++) {
            const void *p = r->ptr[m];
            for (int64_t i = 0; i < count; i++) switch (dt) {
                case TFC_FLOAT: ((float *)acc)[i] += ((const float *)p)[i]; break;
                case TFC_DOUBLE: ((double *)acc)[i] += ((const double *)p)[i]; break;
                case TFC_INT32: ((int32_t *)acc)[i] = (int32_t)((uint32_t)((int32_t *)acc)[i] + (uint32_t)((const int32_t *)p)[i]); break;
                default: ((int64_t *)acc)[i] = (int64_t)((uint64_t)((int64_t *)acc)[i] + (uint64_t)((const int64_t *)p)[i]); break;
                }
        }
        ok = rdv_barrier(c, "all_reduce", st);
        if (ok) memcpy(buf, acc, bytes);
    }
    tfc_free(acc);
    return ok;
}

static bool local_bcast(tfc_collective *c, void *buf, int64_t bytes, int root, tfc_status *st) {
    rdv *r = c->impl;
    r->ptr[c->rank] = buf;
    if (!rdv_barrier(c, "broadcast", st)) return false;
    if (c->rank != root) memcpy(buf, r->ptr[root], (size_t)bytes);
    return rdv_barrier(c, "broadcast", st);
}

static bool local_gather(tfc_collective *c, const void *send, int64_t bytes, void *recv, const int64_t *bytes_of,
                         tfc_status *st) {
    rdv *r = c->impl;
    r->ptr[c->rank] = send;
    if (!rdv_barrier(c, "all_gather", st)) return false;
    size_t off = 0;
    for (int m = 0; m < r->n; m++) {
        if (bytes_of[m]) memcpy((char *)recv + off, r->ptr[m], (size_t)bytes_of[m]);
        off += (size_t)bytes_of[m];
    }
    return rdv_barrier(c, "all_gather", st);
}

static void local_destroy(tfc_collective *c) {
    rdv *r = c->impl;
    pthread_mutex_lock(&r->mu);
    bool last = --r->refs == 0;
    pthread_mutex_unlock(&r->mu);
    if (last) {
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
        tfc_free(r);
    }
    tfc_free(c);
}

static const tfc_coll_vt local_vt = {"local", local_reduce, local_bcast, local_gather, local_destroy};

bool tfc_collective_local_group(int n, double timeout, tfc_collective **members, tfc_status *st) {
    if (n < 1 || n > TFC_CLUSTER_MAX_TASKS)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "local collective group: size %d out of range [1, %d]", n,
                              TFC_CLUSTER_MAX_TASKS);
    rdv *r = tfc_calloc(1, sizeof *r);
    if (!r) return tfc_status_oom(st, "collective group", sizeof *r);
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    r->n = n;
    for (int i = 0; i < n; i++) {
        if (!(members[i] = tfc_calloc(1, sizeof **members))) {
            for (int k = 0; k < i; k++) local_destroy(members[k]);
            if (i == 0) {
                pthread_mutex_destroy(&r->mu);
                pthread_cond_destroy(&r->cv);
                tfc_free(r);
            }
            return tfc_status_oom(st, "collective group", 0);
        }
        char task[32];
        snprintf(task, sizeof task, "replica %d", i);
        tfc_coll_init(members[i], &local_vt, i, n, timeout, task, "replica %d");
        members[i]->impl = r;
        r->refs++;
    }
    return true;
}

/* Breaks a local group so that members blocked in (or entering) a collective fail at once. */
void tfc_coll_local_abort(tfc_collective *c) {
    if (!c || c->vt != &local_vt) return;
    rdv *r = c->impl;
    pthread_mutex_lock(&r->mu);
    r->broken = true;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
}

/* ---- the timed entry points ---------------------------------------------------------------------------------- */
#define TIMED(call)                     \
    double t0 = tfc_coll_now();         \
    __typeof__(call) r = call;          \
    c->busy += tfc_coll_now() - t0;     \
    return r

tfc_tensor *tfc_collective_all_reduce(tfc_collective *c, const tfc_tensor *t, tfc_reduce_op op, tfc_status *st) {
    TIMED(coll_all_reduce(c, t, op, st));
}
bool tfc_collective_all_reduce_n(tfc_collective *c, tfc_tensor **ts, int n, tfc_reduce_op op, int64_t bytes_per_pack,
                                 tfc_status *st) {
    TIMED(coll_all_reduce_n(c, ts, n, op, bytes_per_pack, st));
}
tfc_tensor *tfc_collective_broadcast(tfc_collective *c, const tfc_tensor *t, int root, tfc_status *st) {
    TIMED(coll_broadcast(c, t, root, st));
}
tfc_tensor *tfc_collective_all_gather(tfc_collective *c, const tfc_tensor *t, tfc_status *st) {
    TIMED(coll_all_gather(c, t, st));
}
