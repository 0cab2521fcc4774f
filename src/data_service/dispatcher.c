/* The tf.data service dispatcher: registered datasets, jobs and their split counters, live workers, and the
 * journal that lets a restarted dispatcher continue (fault_tolerant_mode). One request at a time (the listener
 * serves sequentially); the mutex guards the state against the public query functions. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "data_service/ds_internal.h"
#include "distribute/transport.h"

#define MAX_CLIENTS 64     /* remembered last GetSplit answer per client of a job */
#define NAME_MAX_LEN 256

typedef struct ddataset {
    int64_t id;
    uint8_t *graph;
    size_t n;
} ddataset;

typedef struct dclient {
    int64_t client, seq, split;
} dclient;

typedef struct djob {
    int64_t id, dataset, mode, num_splits, next_split, num_consumers, repetition;
    char name[NAME_MAX_LEN];
    char workers[DS_STR_MAX + 1];  /* coordinated reads: the workers, fixed at creation */
    double last_used;
    dclient clients[MAX_CLIENTS];
    int n_clients, next_slot;
} djob;

typedef struct dworker {
    char addr[NAME_MAX_LEN];
    double last_seen, timeout; /* listed while heard from within timeout seconds */
} dworker;

struct tfc_dispatch_server {
    tfc_dispatcher_config cfg;
    char work_dir[1024];
    ps_listener *l;
    pthread_t th;
    bool running;
    volatile int stop;
    pthread_mutex_t mu;
    ddataset *datasets;
    int n_datasets, cap_datasets;
    djob *jobs;
    int n_jobs, cap_jobs;
    dworker *workers;
    int n_workers, cap_workers;
    int64_t next_dataset_id, next_job_id;
    FILE *journal;
    char list[DS_STR_MAX + 1];     /* GET_WORKERS reply text (encoded under mu) */
    char target[64];
    int port;
};

double ds_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct timespec ds_deadline(int ms) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += ms % 1000 * 1000000L;
    t.tv_sec += ms / 1000 + t.tv_nsec / 1000000000L;
    t.tv_nsec %= 1000000000L;
    return t;
}

void ds_wait_stop(volatile int *stop, volatile int *own) {
    while (!*stop && !*own) {
        struct timespec ts = {0, 100 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

bool ds_address(const char *in, char *buf, size_t size, tfc_status *st) {
    if (in) {
        const char *p = strstr(in, "://");
        if (p) in = p + 3;
    }
    if (!in || !*in || strlen(in) >= size)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "data service address '%s' is not host:port", in ? in : "(null)");
    snprintf(buf, size, "%s", in);
    return true;
}

static bool grow(void **arr, int *cap, int n, size_t elem, tfc_status *st) {
    if (n < *cap) return true;
    int nc = *cap ? *cap * 2 : 8;
    void *p = tfc_realloc(*arr, (size_t)nc * elem);
    if (!p) return tfc_status_oom(st, "dispatcher state", (size_t)nc * elem);
    *arr = p;
    *cap = nc;
    return true;
}

/* ---- journal ---------------------------------------------------------------------------------------------------- */
/* A journal record is an encoded ds_msg in TFRecord framing (CRC-checked): REGISTER_DATASET (v[0] id, blob graph),
 * GET_OR_CREATE_JOB (v[0] dataset, v[1] mode, v[2] splits, v[3] job id, v[4] num_consumers, v[5] repetition, str
 * name, blob its workers) and GET_SPLIT (v[0] job, v[1] next split after this one). */
static bool journal_write(tfc_dispatch_server *d, const ds_msg *m, tfc_status *st) {
    if (!d->journal) return true;
    uint8_t *enc = NULL;
    size_t n = 0;
    data_bytes b = {0};
    bool ok = ds_msg_encode(m, &enc, &n, st) && data_record_frame(&b, enc, n, st);
    if (ok && (fwrite(b.p, 1, b.len, d->journal) != b.len || fflush(d->journal)))
        ok = tfc_status_set(st, TFC_UNKNOWN, "dispatcher journal in %s: write failed: %s", d->work_dir, strerror(errno));
    free(enc);
    tfc_free(b.p);
    return ok;
}

static ddataset *find_dataset(tfc_dispatch_server *d, int64_t id) {
    for (int i = 0; i < d->n_datasets; i++)
        if (d->datasets[i].id == id) return &d->datasets[i];
    return NULL;
}

static djob *find_job(tfc_dispatch_server *d, int64_t id) {
    for (int i = 0; i < d->n_jobs; i++)
        if (d->jobs[i].id == id) return &d->jobs[i];
    return NULL;
}

static bool add_dataset(tfc_dispatch_server *d, int64_t id, const uint8_t *g, size_t n, tfc_status *st) {
    if (!grow((void **)&d->datasets, &d->cap_datasets, d->n_datasets, sizeof *d->datasets, st)) return false;
    uint8_t *copy = tfc_malloc(n ? n : 1);
    if (!copy) return tfc_status_oom(st, "dataset graph", n);
    if (n) memcpy(copy, g, n);
    d->datasets[d->n_datasets++] = (ddataset){id, copy, n};
    if (id >= d->next_dataset_id) d->next_dataset_id = id + 1;
    return true;
}

static djob *add_job(tfc_dispatch_server *d, int64_t id, const int64_t *v, const char *name, const uint8_t *workers,
                     size_t n_workers, tfc_status *st) {
    if (n_workers > DS_STR_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "job worker list of %zu bytes", n_workers), NULL;
    if (!grow((void **)&d->jobs, &d->cap_jobs, d->n_jobs, sizeof *d->jobs, st)) return NULL;
    djob *j = &d->jobs[d->n_jobs++];
    memset(j, 0, sizeof *j);
    j->id = id;
    j->dataset = v[0];
    j->mode = v[1];
    j->num_splits = v[2];
    j->num_consumers = v[4];
    j->repetition = v[5];
    j->last_used = ds_now();
    snprintf(j->name, sizeof j->name, "%s", name);
    if (n_workers) memcpy(j->workers, workers, n_workers);
    if (id >= d->next_job_id) d->next_job_id = id + 1;
    return j;
}

static bool replay(tfc_dispatch_server *d, const char *path, tfc_status *st) {
    data_record_reader r;
    if (access(path, F_OK) != 0) return true;
    if (!data_record_reader_open(&r, path, NULL, 0, st)) return false;
    bool ok = true;
    for (;;) {
        size_t len = 0;
        bool end = false;
        tfc_status rs = TFC_STATUS_INIT;
        if (!data_record_reader_next(&r, &len, &end, &rs)) {
            /* a record cut short by a crash ends the journal; anything else is corruption */
            if (!strstr(rs.msg, "truncated")) ok = tfc_status_set(st, TFC_DATA_LOSS, "dispatcher journal %s: %s", path, rs.msg);
            break;
        }
        if (end) break;
        ds_msg m;
        if (!ds_msg_decode(r.buf, len, &m, st)) {
            ok = tfc_status_set(st, TFC_DATA_LOSS, "dispatcher journal %s: record %lld: %s", path,
                                (long long)r.index - 1, st->msg);
            break;
        }
        djob *j;
        char name[NAME_MAX_LEN];
        if (m.op == DS_REGISTER_DATASET) ok = add_dataset(d, m.v[0], m.blob, m.blob_len, st);
        else if (m.op == DS_GET_OR_CREATE_JOB) ok = ds_msg_str(&m, name, sizeof name) &&
                                                     add_job(d, m.v[3], m.v, name, m.blob, m.blob_len, st);
        else if (m.op == DS_GET_SPLIT && (j = find_job(d, m.v[0]))) j->next_split = m.v[1];
        if (!ok) break;
    }
    data_record_reader_close(&r);
    return ok;
}

/* Rewrites the journal with the replayed state (dropping a torn tail) and opens it for appending. */
static bool journal_open(tfc_dispatch_server *d, tfc_status *st) {
    char path[1100], tmp[1120];
    snprintf(path, sizeof path, "%s/dispatcher.journal", d->work_dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    if (mkdir(d->work_dir, 0777) != 0 && errno != EEXIST)
        return tfc_status_set(st, TFC_NOT_FOUND, "dispatcher work_dir %s: %s", d->work_dir, strerror(errno));
    if (!replay(d, path, st)) return false;
    if (!(d->journal = fopen(tmp, "wb")))
        return tfc_status_set(st, TFC_PERMISSION_DENIED, "dispatcher journal %s: %s", tmp, strerror(errno));
    bool ok = true;
    for (int i = 0; ok && i < d->n_datasets; i++) {
        ds_msg m = {.op = DS_REGISTER_DATASET, .v = {d->datasets[i].id}, .blob = d->datasets[i].graph,
                    .blob_len = d->datasets[i].n};
        ok = journal_write(d, &m, st);
    }
    for (int i = 0; ok && i < d->n_jobs; i++) {
        djob *j = &d->jobs[i];
        ds_msg m = {.op = DS_GET_OR_CREATE_JOB,
                    .v = {j->dataset, j->mode, j->num_splits, j->id, j->num_consumers, j->repetition},
                    .str = j->name, .str_len = (uint32_t)strlen(j->name), .blob = (const uint8_t *)j->workers,
                    .blob_len = strlen(j->workers)};
        ds_msg s = {.op = DS_GET_SPLIT, .v = {j->id, j->next_split}};
        ok = journal_write(d, &m, st) && journal_write(d, &s, st);
    }
    if (ok && rename(tmp, path) != 0)
        ok = tfc_status_set(st, TFC_UNKNOWN, "dispatcher journal %s: rename failed: %s", path, strerror(errno));
    return ok;
}

/* ---- requests ------------------------------------------------------------------------------------------------------ */
/* A worker is live while it was heard from within max(5 s, 4 of its heartbeat intervals). */
static double worker_timeout(int64_t heartbeat_ms) {
    const double four = heartbeat_ms > 0 && heartbeat_ms < 86400000 ? 4e-3 * (double)heartbeat_ms : 0;
    return four > 5.0 ? four : 5.0;
}

static void gc_jobs(tfc_dispatch_server *d) {
    const double limit = (d->cfg.job_gc_timeout_ms > 0 ? d->cfg.job_gc_timeout_ms : 300000) / 1000.0, now = ds_now();
    for (int i = 0; i < d->n_jobs;)
        if (now - d->jobs[i].last_used > limit) d->jobs[i] = d->jobs[--d->n_jobs];
        else i++;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The live workers' addresses, sorted, comma-separated (those that do not fit are left out). */
static void live_workers(tfc_dispatch_server *d, char *list, size_t size) {
    const double now = ds_now();
    const char **live = tfc_calloc((size_t)d->n_workers + 1, sizeof *live);
    int n = 0;
    for (int i = 0; live && i < d->n_workers; i++)
        if (now - d->workers[i].last_seen <= d->workers[i].timeout) live[n++] = d->workers[i].addr;
    if (live) qsort(live, (size_t)n, sizeof *live, cmp_str);
    size_t len = 0;
    list[0] = 0;
    for (int i = 0; i < n; i++) {
        size_t k = strlen(live[i]);
        if (len + k + 2 > size) break;
        if (len) list[len++] = ',';
        memcpy(list + len, live[i], k + 1);
        len += k;
    }
    tfc_free(live);
}

static bool handle(tfc_dispatch_server *d, const ds_msg *q, ds_msg *r, tfc_status *st) {
    char name[NAME_MAX_LEN];
    djob *j;
    switch (q->op) {
    case DS_REGISTER_DATASET: {
        if (!q->blob_len) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "register_dataset: empty dataset graph");
        for (int i = 0; i < d->n_datasets; i++)
            if (d->datasets[i].n == q->blob_len && !memcmp(d->datasets[i].graph, q->blob, q->blob_len)) {
                r->v[0] = d->datasets[i].id;
                return true;
            }
        const int64_t id = d->next_dataset_id;
        ds_msg jm = {.op = DS_REGISTER_DATASET, .v = {id}, .blob = q->blob, .blob_len = q->blob_len};
        if (!journal_write(d, &jm, st) || !add_dataset(d, id, q->blob, q->blob_len, st)) return false;
        r->v[0] = id;
        return true;
    }
    case DS_GET_DATASET: {
        ddataset *ds = find_dataset(d, q->v[0]);
        if (!ds) return tfc_status_set(st, TFC_NOT_FOUND, "dataset id %lld is not registered", (long long)q->v[0]);
        r->blob = ds->graph;
        r->blob_len = ds->n;
        return true;
    }
    case DS_GET_OR_CREATE_JOB: {
        if (!ds_msg_str(q, name, sizeof name))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "job name of %u bytes is too long", q->str_len);
        if (!find_dataset(d, q->v[0]))
            return tfc_status_set(st, TFC_NOT_FOUND, "dataset id %lld is not registered", (long long)q->v[0]);
        if (q->v[1] != DS_MODE_PARALLEL_EPOCHS && q->v[1] != DS_MODE_DISTRIBUTED_EPOCH)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "processing mode %lld", (long long)q->v[1]);
        if (q->v[2] < 0 || (q->v[1] == DS_MODE_DISTRIBUTED_EPOCH && q->v[2] < 1))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "num_splits %lld", (long long)q->v[2]);
        if (q->v[3] < 0 || q->v[3] > 4096 || (q->v[3] && (!name[0] || q->v[1] != DS_MODE_PARALLEL_EPOCHS)))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "num_consumers %lld (coordinated reads need a job name "
                                  "and parallel_epochs)", (long long)q->v[3]);
        gc_jobs(d);
        for (int i = 0; name[0] && i < d->n_jobs; i++)
            if (!strcmp(d->jobs[i].name, name) && d->jobs[i].repetition == q->v[4]) {
                j = &d->jobs[i];
                if (j->dataset != q->v[0] || j->mode != q->v[1] || j->num_consumers != q->v[3])
                    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "job '%s' exists for dataset %lld with another "
                                          "processing mode, dataset or num_consumers", name, (long long)j->dataset);
                j->last_used = ds_now();
                r->v[0] = j->id;
                r->str = j->workers;
                r->str_len = (uint32_t)strlen(j->workers);
                return true;
            }
        char workers[DS_STR_MAX + 1] = "";
        if (q->v[3]) { /* the round-robin order of coordinated reads: the live workers now, sorted */
            live_workers(d, workers, sizeof workers);
            if (!workers[0])
                return tfc_status_set(st, TFC_UNAVAILABLE, "coordinated job '%s': no worker has registered yet", name);
        }
        const int64_t id = d->next_job_id, jv[6] = {q->v[0], q->v[1], q->v[2], id, q->v[3], q->v[4]};
        ds_msg jm = {.op = DS_GET_OR_CREATE_JOB, .v = {jv[0], jv[1], jv[2], jv[3], jv[4], jv[5]}, .str = name,
                     .str_len = (uint32_t)strlen(name), .blob = (const uint8_t *)workers, .blob_len = strlen(workers)};
        if (!journal_write(d, &jm, st) || !(j = add_job(d, id, jv, name, (const uint8_t *)workers, strlen(workers), st)))
            return false;
        r->v[0] = id;
        r->str = j->workers;
        r->str_len = (uint32_t)strlen(j->workers);
        return true;
    }
    case DS_GET_SPLIT: {
        if (!(j = find_job(d, q->v[0])))
            return tfc_status_set(st, TFC_NOT_FOUND, "job %lld does not exist (finished, or collected after "
                                  "job_gc_timeout_ms)", (long long)q->v[0]);
        j->last_used = ds_now();
        dclient *c = NULL;
        for (int i = 0; i < j->n_clients && !c; i++)
            if (j->clients[i].client == q->v[1]) c = &j->clients[i];
        if (c && c->seq == q->v[2]) { /* a resent request: the same answer */
            r->v[0] = c->split;
            return true;
        }
        if (!c) {
            c = &j->clients[j->n_clients < MAX_CLIENTS ? j->n_clients++ : j->next_slot++ % MAX_CLIENTS];
            c->client = q->v[1];
        }
        int64_t split = j->next_split < j->num_splits ? j->next_split : -1;
        if (split >= 0) {
            ds_msg jm = {.op = DS_GET_SPLIT, .v = {j->id, split + 1}};
            if (!journal_write(d, &jm, st)) return false;
            j->next_split++;
        }
        c->seq = q->v[2];
        c->split = split;
        r->v[0] = split;
        return true;
    }
    case DS_HEARTBEAT: {
        if (!q->str_len || !ds_msg_str(q, name, sizeof name))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "heartbeat: worker address of %u bytes", q->str_len);
        for (int i = 0; i < d->n_workers; i++)
            if (!strcmp(d->workers[i].addr, name)) {
                d->workers[i].last_seen = ds_now();
                d->workers[i].timeout = worker_timeout(q->v[0]);
                return true;
            }
        if (!grow((void **)&d->workers, &d->cap_workers, d->n_workers, sizeof *d->workers, st)) return false;
        snprintf(d->workers[d->n_workers].addr, NAME_MAX_LEN, "%s", name);
        d->workers[d->n_workers].last_seen = ds_now();
        d->workers[d->n_workers++].timeout = worker_timeout(q->v[0]);
        return true;
    }
    case DS_GET_WORKERS: {
        live_workers(d, d->list, sizeof d->list);
        r->str = d->list;
        r->str_len = (uint32_t)strlen(d->list);
        return true;
    }
    default:
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "the dispatcher does not serve op %d", q->op);
    }
}

void ds_dispatcher_handle(void *user, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn) {
    tfc_dispatch_server *d = user;
    tfc_status st = TFC_STATUS_INIT;
    ds_msg q, r = {0};
    if (!ds_msg_decode(req, n, &q, &st)) {
        ds_reply_error(1, &st, rep, rn);
        return;
    }
    r.op = q.op;
    pthread_mutex_lock(&d->mu);
    bool ok = handle(d, &q, &r, &st) && ds_msg_encode(&r, rep, rn, &st);
    pthread_mutex_unlock(&d->mu);
    if (!ok) ds_reply_error(q.op, &st, rep, rn);
}

/* ---- server ---------------------------------------------------------------------------------------------------------- */
tfc_dispatch_server *ds_dispatcher_state_new(const tfc_dispatcher_config *config, tfc_status *st) {
    tfc_dispatcher_config c = config ? *config : (tfc_dispatcher_config){0};
    if (c.protocol && *c.protocol && strcmp(c.protocol, "grpc") && strcmp(c.protocol, "nng"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "DispatcherConfig: protocol '%s' is not supported (\"grpc\" "
                              "or \"nng\", both served over nng)", c.protocol), NULL;
    if (c.port < 0 || c.port > 65535)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "DispatcherConfig: port %d", c.port), NULL;
    if (c.fault_tolerant_mode && (!c.work_dir || !*c.work_dir))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "DispatcherConfig: fault_tolerant_mode needs a work_dir"), NULL;
    tfc_dispatch_server *d = tfc_calloc(1, sizeof *d);
    if (!d) return tfc_status_oom(st, "dispatcher", sizeof *d), NULL;
    d->cfg = c;
    d->cfg.protocol = NULL;
    d->cfg.work_dir = NULL;
    if (c.work_dir) snprintf(d->work_dir, sizeof d->work_dir, "%s", c.work_dir);
    d->next_dataset_id = 1000;
    d->next_job_id = 2000;
    pthread_mutex_init(&d->mu, NULL);
    if (c.fault_tolerant_mode && !journal_open(d, st)) {
        tfc_dispatch_server_free(d);
        return NULL;
    }
    return d;
}

static void *serve_main(void *arg) {
    tfc_dispatch_server *d = arg;
    tfc_status st = TFC_STATUS_INIT;
    if (!ps_listener_serve(d->l, ds_dispatcher_handle, d, &d->stop, &st)) {
        fprintf(stderr, "tf.data dispatcher %s: %s\n", d->target, st.msg);
        d->stop = 1; /* ends tfc_dispatch_server_join */
    }
    return NULL;
}

tfc_dispatch_server *tfc_dispatch_server_new(const tfc_dispatcher_config *config, tfc_status *st) {
    tfc_dispatch_server *d = ds_dispatcher_state_new(config, st);
    if (!d) return NULL;
    char addr[64];
    snprintf(addr, sizeof addr, "0.0.0.0:%d", d->cfg.port);
    if (!(d->l = ps_listener_new(addr, st))) {
        tfc_dispatch_server_free(d);
        return NULL;
    }
    d->port = ps_listener_port(d->l);
    snprintf(d->target, sizeof d->target, "127.0.0.1:%d", d->port);
    if (pthread_create(&d->th, NULL, serve_main, d)) {
        tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "dispatcher: cannot start its thread");
        tfc_dispatch_server_free(d);
        return NULL;
    }
    d->running = true;
    tfc_status_clear(st);
    return d;
}

int tfc_dispatch_server_port(const tfc_dispatch_server *d) { return d ? d->port : 0; }
const char *tfc_dispatch_server_target(const tfc_dispatch_server *d) { return d ? d->target : ""; }

int tfc_dispatch_server_num_workers(tfc_dispatch_server *d) {
    int n = 0;
    pthread_mutex_lock(&d->mu);
    const double now = ds_now();
    for (int i = 0; i < d->n_workers; i++) n += now - d->workers[i].last_seen <= d->workers[i].timeout;
    pthread_mutex_unlock(&d->mu);
    return n;
}

bool tfc_dispatch_server_join(tfc_dispatch_server *d, volatile int *stop, tfc_status *st) {
    ds_wait_stop(stop, &d->stop);
    tfc_status_clear(st);
    return true;
}

void tfc_dispatch_server_free(tfc_dispatch_server *d) {
    if (!d) return;
    d->stop = 1;
    if (d->running) pthread_join(d->th, NULL);
    ps_listener_free(d->l);
    if (d->journal) fclose(d->journal);
    for (int i = 0; i < d->n_datasets; i++) tfc_free(d->datasets[i].graph);
    tfc_free(d->datasets);
    tfc_free(d->jobs);
    tfc_free(d->workers);
    pthread_mutex_destroy(&d->mu);
    tfc_free(d);
}
