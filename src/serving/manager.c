/* The model manager: which versions of each configured model are loaded, their status, and refcounted handles.
 * One mutex (mgr->mu) guards the model table and every version's refcount; loading (slow) runs without it, so
 * requests are served while a new version loads. A version is published only once fully loaded and freed only
 * when its last handle is released. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "serving/serving_internal.h"
#include "tfc/platform.h"

/* What the manager knows of one version of a model (ServableStateMonitor's record). */
typedef struct srv_vstat {
    int64_t version;
    tfc_srv_state state;
    tfc_status status;
    tfc_srv_version *loaded; /* while AVAILABLE: the served version (holding the manager's reference) */
    int failures;            /* failed loads so far */
    uint64_t failed_scan;    /* the scan of the last failure */
} srv_vstat;

/* A version that failed to load is tried again at the next scans of its base path, at most this many times
 * (tensorflow_model_server's --max_num_load_retries default). */
#define MAX_LOAD_RETRIES 5

typedef struct srv_model {
    tfc_srv_model_config *cfg; /* in mgr->cfg */
    srv_vstat *vs;
    int n_vs, cap_vs;
} srv_model;

struct tfc_srv_manager {
    pthread_mutex_t mu;
    pthread_cond_t changed;   /* a version was freed; or the poller is asked to stop */
    pthread_mutex_t poll_mu;  /* one scan at a time */
    uint64_t scans;           /* scans so far (under poll_mu) */
    tfc_srv_config cfg;
    srv_model *models;
    int n_models;
    int live;                 /* versions allocated and not yet freed */
    int instances, intra_op_threads;
    double poll_wait;
    bool stop, has_poller;
    pthread_t poller;
    srv_batcher *batcher;
};

srv_batcher *srv_manager_batcher(tfc_srv_manager *m) { return m ? m->batcher : NULL; }

const char *tfc_srv_state_name(tfc_srv_state s) {
    switch (s) {
    case TFC_SRV_START: return "START";
    case TFC_SRV_LOADING: return "LOADING";
    case TFC_SRV_AVAILABLE: return "AVAILABLE";
    case TFC_SRV_UNLOADING: return "UNLOADING";
    case TFC_SRV_END: return "END";
    default: return "UNKNOWN";
    }
}

/* ---- versions ------------------------------------------------------------------------------------------- */

static void version_destroy(tfc_srv_version *v) {
    if (!v) return;
    for (int i = 0; i < v->n_inst; i++) {
        tfc_saved_model_free(v->inst[i].sm);
        tfc_ctx_free(v->inst[i].ctx);
    }
    tfc_free(v->inst);
    tfc_free(v->sigmap);
    pthread_mutex_destroy(&v->mu);
    pthread_cond_destroy(&v->freed);
    tfc_free(v);
}

/* Loads <base_path>/<number> `instances` times, each into its own context. */
static tfc_srv_version *version_load(tfc_srv_manager *m, srv_model *md, int64_t number, tfc_status *st) {
    char dir[4096];
    if (snprintf(dir, sizeof dir, "%s/%lld", md->cfg->base_path, (long long)number) >= (int)sizeof dir) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "model '%s': base_path too long", md->cfg->name);
        return NULL;
    }
    tfc_srv_version *v = tfc_calloc(1, sizeof *v);
    srv_instance *inst = tfc_calloc((size_t)m->instances, sizeof *inst);
    if (!v || !inst) {
        tfc_free(v);
        tfc_free(inst);
        tfc_status_oom(st, "servable version", sizeof *v);
        return NULL;
    }
    pthread_mutex_init(&v->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are srv_now() values */
    pthread_cond_init(&v->freed, &ca);
    pthread_condattr_destroy(&ca);
    v->mgr = m;
    v->model_name = md->cfg->name;
    v->number = number;
    v->inst = inst;
    for (int i = 0; i < m->instances; i++) {
        tfc_ctx_opts o = {.intra_op_threads = m->intra_op_threads};
        if (!(inst[i].ctx = tfc_ctx_new(&o, st))) goto fail;
        v->n_inst = i + 1;
        if (!(inst[i].sm = tfc_saved_model_load(inst[i].ctx, dir, NULL, 0, st))) goto fail;
    }
    if (!(v->sigmap = tfc_saved_model_signature_def_map(inst[0].sm, &v->sigmap_len, st))) goto fail;
    return v;
fail:
    version_destroy(v);
    return NULL;
}

srv_instance *srv_instance_take(tfc_srv_version *v, double deadline) {
    pthread_mutex_lock(&v->mu);
    for (;;) {
        for (int i = 0; i < v->n_inst; i++)
            if (!v->inst[i].busy) {
                v->inst[i].busy = true;
                pthread_mutex_unlock(&v->mu);
                return &v->inst[i];
            }
        if (!deadline) {
            pthread_cond_wait(&v->freed, &v->mu);
            continue;
        }
        struct timespec until = {.tv_sec = (time_t)deadline};
        until.tv_nsec = (long)((deadline - (double)until.tv_sec) * 1e9);
        if (pthread_cond_timedwait(&v->freed, &v->mu, &until) == ETIMEDOUT) {
            pthread_mutex_unlock(&v->mu);
            return NULL;
        }
    }
}

void srv_instance_put(tfc_srv_version *v, srv_instance *in) {
    pthread_mutex_lock(&v->mu);
    in->busy = false;
    pthread_cond_signal(&v->freed);
    pthread_mutex_unlock(&v->mu);
}

static srv_vstat *find_vstat(srv_model *md, int64_t version) {
    for (int i = 0; i < md->n_vs; i++)
        if (md->vs[i].version == version) return &md->vs[i];
    return NULL;
}

/* Drops one reference (mgr->mu held); returns the version when it was the last, for the caller to destroy
 * after unlocking. The version's status becomes END. */
static tfc_srv_version *unref_locked(tfc_srv_version *v) {
    if (--v->refs > 0) return NULL;
    for (int i = 0; i < v->mgr->n_models; i++) {
        srv_model *md = &v->mgr->models[i];
        if (md->cfg->name != v->model_name) continue;
        srv_vstat *s = find_vstat(md, v->number);
        if (s && s->state == TFC_SRV_UNLOADING && !s->loaded) s->state = TFC_SRV_END;
    }
    return v;
}

static void destroy_and_count(tfc_srv_manager *m, tfc_srv_version *v) {
    if (!v) return;
    version_destroy(v);
    pthread_mutex_lock(&m->mu);
    m->live--;
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->mu);
}

void tfc_srv_release(tfc_srv_version *v) {
    if (!v) return;
    tfc_srv_manager *m = v->mgr;
    pthread_mutex_lock(&m->mu);
    tfc_srv_version *dead = unref_locked(v);
    pthread_mutex_unlock(&m->mu);
    destroy_and_count(m, dead);
}

const char *tfc_srv_version_model(const tfc_srv_version *v) { return v ? v->model_name : NULL; }
int64_t tfc_srv_version_number(const tfc_srv_version *v) { return v ? v->number : -1; }

/* ---- scanning base paths -------------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The version folders under base_path: names of decimal digits that fit int64 and are directories. */
static int64_t *list_versions(const char *base, int *n) {
    *n = 0;
    DIR *d = opendir(base);
    if (!d) return NULL;
    int64_t *out = NULL;
    int cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *s = e->d_name;
        size_t len = strlen(s);
        if (!len || len > 18 || strspn(s, "0123456789") != len) continue;
        char path[4096];
        struct stat sb;
        if (snprintf(path, sizeof path, "%s/%s", base, s) >= (int)sizeof path || stat(path, &sb) || !S_ISDIR(sb.st_mode))
            continue;
        if (*n == cap) {
            int64_t *g = tfc_realloc(out, (size_t)(cap = cap ? 2 * cap : 8) * sizeof *out);
            if (!g) break;
            out = g;
        }
        out[(*n)++] = strtoll(s, NULL, 10);
    }
    closedir(d);
    if (*n) qsort(out, (size_t)*n, sizeof *out, cmp_i64);
    return out;
}

static bool vstat_add(srv_model *md, int64_t version, tfc_srv_state state) {
    if (md->n_vs == md->cap_vs) {
        int cap = md->cap_vs ? 2 * md->cap_vs : 4;
        srv_vstat *g = tfc_realloc(md->vs, (size_t)cap * sizeof *g);
        if (!g) return false;
        md->vs = g;
        md->cap_vs = cap;
    }
    md->vs[md->n_vs++] = (srv_vstat){.version = version, .state = state};
    return true;
}

/* Does the policy want `version`, out of the present versions (sorted) that have not failed? */
static bool wanted(const tfc_srv_model_config *c, const int64_t *present, int n, int64_t version) {
    switch (c->policy) {
    case TFC_SRV_POLICY_ALL: return true;
    case TFC_SRV_POLICY_SPECIFIC:
        for (int i = 0; i < c->n_versions; i++)
            if (c->versions[i] == version) return true;
        return false;
    default:
        for (int i = n - 1, k = 0; i >= 0 && k < c->num_versions; i--, k++)
            if (present[i] == version) return true;
        return false;
    }
}

static void poll_model(tfc_srv_manager *m, srv_model *md, uint64_t scan) {
    int n = 0;
    int64_t *present = list_versions(md->cfg->base_path, &n);
    /* versions that failed in this scan (or too often) are not candidates: the policy then wants the best of the
     * others (so a failure of the newest version under `latest` loads the next one down); repeat until no load
     * fails. A version that failed in an earlier scan is tried again (its files may have been completed). */
    for (bool failed = true; failed;) {
        failed = false;
        pthread_mutex_lock(&m->mu);
        int k = 0;
        for (int i = 0; i < n; i++) {
            srv_vstat *s = find_vstat(md, present[i]);
            if (!(s && s->state == TFC_SRV_END && s->status.code != TFC_OK &&
                  (s->failed_scan == scan || s->failures > MAX_LOAD_RETRIES)))
                present[k++] = present[i];
        }
        n = k;
        pthread_mutex_unlock(&m->mu);
        for (int i = 0; i < n; i++) {
            if (!wanted(md->cfg, present, n, present[i])) continue;
            pthread_mutex_lock(&m->mu);
            srv_vstat *s = find_vstat(md, present[i]);
            bool load = !s || s->state == TFC_SRV_END;
            if (load) {
                if (s) s->state = TFC_SRV_LOADING, tfc_status_clear(&s->status);
                else if (!vstat_add(md, present[i], TFC_SRV_LOADING)) load = false;
            }
            pthread_mutex_unlock(&m->mu);
            if (!load) continue;
            tfc_status st = TFC_STATUS_INIT;
            tfc_log(TFC_LOG_INFO, "serving: loading model '%s' version %lld", md->cfg->name, (long long)present[i]);
            tfc_srv_version *v = version_load(m, md, present[i], &st);
            pthread_mutex_lock(&m->mu);
            s = find_vstat(md, present[i]);
            if (v) {
                v->refs = 1;
                m->live++;
                s->loaded = v;
                s->state = TFC_SRV_AVAILABLE;
            } else {
                s->state = TFC_SRV_END;
                s->status = st;
                s->failures++;
                s->failed_scan = scan;
                failed = true;
            }
            pthread_mutex_unlock(&m->mu);
            if (!v)
                tfc_log(TFC_LOG_ERROR, "serving: model '%s' version %lld failed to load: %s", md->cfg->name,
                        (long long)present[i], st.msg);
        }
    }
    /* retire what is no longer wanted, keeping the last AVAILABLE version when no wanted one loaded */
    pthread_mutex_lock(&m->mu);
    bool any_wanted_available = false;
    for (int i = 0; i < md->n_vs; i++)
        if (md->vs[i].state == TFC_SRV_AVAILABLE && wanted(md->cfg, present, n, md->vs[i].version)) {
            bool is_present = false;
            for (int j = 0; j < n; j++) is_present |= present[j] == md->vs[i].version;
            any_wanted_available |= is_present;
        }
    tfc_srv_version *dead[64];
    int n_dead = 0;
    for (int i = 0; i < md->n_vs; i++) {
        srv_vstat *s = &md->vs[i];
        if (s->state != TFC_SRV_AVAILABLE) continue;
        bool is_present = false;
        for (int j = 0; j < n; j++) is_present |= present[j] == s->version;
        if (is_present && wanted(md->cfg, present, n, s->version)) continue;
        if (!any_wanted_available && md->cfg->policy == TFC_SRV_POLICY_LATEST && is_present) continue;
        if (n_dead == 64) break;
        tfc_log(TFC_LOG_INFO, "serving: unloading model '%s' version %lld", md->cfg->name, (long long)s->version);
        tfc_srv_version *v = s->loaded;
        s->loaded = NULL;
        s->state = TFC_SRV_UNLOADING;
        dead[n_dead] = unref_locked(v);
        n_dead += dead[n_dead] != NULL;
    }
    pthread_mutex_unlock(&m->mu);
    for (int i = 0; i < n_dead; i++) destroy_and_count(m, dead[i]);
    tfc_free(present);
}

void tfc_srv_manager_poll(tfc_srv_manager *m) {
    if (!m) return;
    pthread_mutex_lock(&m->poll_mu);
    const uint64_t scan = ++m->scans;
    for (int i = 0; i < m->n_models; i++) poll_model(m, &m->models[i], scan);
    pthread_mutex_unlock(&m->poll_mu);
}

static void *poll_thread(void *arg) {
    tfc_srv_manager *m = arg;
    for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        double s = (double)t.tv_sec + t.tv_nsec * 1e-9 + m->poll_wait;
        t.tv_sec = (time_t)s;
        t.tv_nsec = (long)((s - (double)t.tv_sec) * 1e9);
        pthread_mutex_lock(&m->mu);
        while (!m->stop && pthread_cond_timedwait(&m->changed, &m->mu, &t) != ETIMEDOUT) {}
        bool stop = m->stop;
        pthread_mutex_unlock(&m->mu);
        if (stop) return NULL;
        tfc_srv_manager_poll(m);
    }
}

/* ---- the manager ---------------------------------------------------------------------------------------- */

static bool config_copy(const tfc_srv_config *src, tfc_srv_config *dst, tfc_status *st);

tfc_srv_manager *tfc_srv_manager_new(const tfc_srv_config *cfg, const tfc_srv_manager_opts *opts, tfc_status *st) {
    tfc_srv_manager_opts o = opts ? *opts : (tfc_srv_manager_opts){0};
    if (o.instances < 0 || o.intra_op_threads < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "serving: instances (%d) and intra_op_threads (%d) must be >= 0",
                       o.instances, o.intra_op_threads);
        return NULL;
    }
    const int cores = tfc_num_cores() > 0 ? tfc_num_cores() : 1;
    tfc_srv_manager *m = tfc_calloc(1, sizeof *m);
    if (!m) {
        tfc_status_oom(st, "model manager", sizeof *m);
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    pthread_mutex_init(&m->poll_mu, NULL);
    pthread_cond_init(&m->changed, NULL);
    m->instances = o.instances ? o.instances : (cores < 4 ? cores : 4);
    /* unbatched, concurrent requests share the cores between the copies; batched, the batch is the unit of
     * parallelism (TensorFlow Serving runs it on the session's intra-op pool): each batch may use every core */
    m->intra_op_threads = o.intra_op_threads ? o.intra_op_threads
                          : o.batching      ? cores
                                            : (cores / m->instances > 1 ? cores / m->instances : 1);
    m->poll_wait = o.poll_wait_seconds;
    if (!config_copy(cfg, &m->cfg, st)) goto fail;
    if (o.batching && !(m->batcher = srv_batcher_new(o.batching, st))) goto fail;
    if (!(m->models = tfc_calloc((size_t)m->cfg.n_models + 1, sizeof *m->models))) {
        tfc_status_oom(st, "model manager", 64);
        goto fail;
    }
    m->n_models = m->cfg.n_models;
    for (int i = 0; i < m->n_models; i++) m->models[i].cfg = &m->cfg.models[i];
    tfc_srv_manager_poll(m);
    if (m->poll_wait > 0) {
        if (pthread_create(&m->poller, NULL, poll_thread, m)) {
            tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "serving: cannot start the file system polling thread");
            goto fail;
        }
        m->has_poller = true;
    }
    tfc_status_clear(st);
    return m;
fail:
    tfc_srv_manager_free(m);
    return NULL;
}

void tfc_srv_manager_free(tfc_srv_manager *m) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_broadcast(&m->changed);
    pthread_mutex_unlock(&m->mu);
    if (m->has_poller) pthread_join(m->poller, NULL);
    pthread_mutex_lock(&m->poll_mu); /* a poll started by another thread finishes first */
    pthread_mutex_lock(&m->mu);
    for (int i = 0; i < m->n_models; i++)
        for (int j = 0; j < m->models[i].n_vs; j++) {
            srv_vstat *s = &m->models[i].vs[j];
            if (!s->loaded) continue;
            tfc_srv_version *v = s->loaded;
            s->loaded = NULL;
            s->state = TFC_SRV_UNLOADING;
            v = unref_locked(v);
            if (v) {
                pthread_mutex_unlock(&m->mu);
                destroy_and_count(m, v);
                pthread_mutex_lock(&m->mu);
            }
        }
    while (m->live > 0) pthread_cond_wait(&m->changed, &m->mu);
    pthread_mutex_unlock(&m->mu);
    pthread_mutex_unlock(&m->poll_mu);
    srv_batcher_free(m->batcher); /* every handle is released: nothing is queued or can be */
    for (int i = 0; i < m->n_models; i++) tfc_free(m->models[i].vs);
    tfc_free(m->models);
    tfc_srv_config_clear(&m->cfg);
    pthread_mutex_destroy(&m->mu);
    pthread_mutex_destroy(&m->poll_mu);
    pthread_cond_destroy(&m->changed);
    tfc_free(m);
}

int tfc_srv_manager_num_models(const tfc_srv_manager *m) { return m ? m->n_models : 0; }
const char *tfc_srv_manager_model_name(const tfc_srv_manager *m, int i) {
    return m && i >= 0 && i < m->n_models ? m->models[i].cfg->name : NULL;
}

static srv_model *find_model(tfc_srv_manager *m, const char *name) {
    for (int i = 0; name && i < m->n_models; i++)
        if (!strcmp(m->models[i].cfg->name, name)) return &m->models[i];
    return NULL;
}

/* version / label -> a version number (or -1: latest); mgr->mu held. */
static bool resolve(srv_model *md, int64_t version, const char *label, int64_t *out, tfc_status *st) {
    if (label && version >= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Both model version (%lld) and model version label (%s) "
                              "cannot be supplied.", (long long)version, label);
    *out = version >= 0 ? version : -1;
    if (!label) return true;
    for (int i = 0; md && i < md->cfg->n_labels; i++)
        if (!strcmp(md->cfg->labels[i].label, label)) {
            *out = md->cfg->labels[i].version;
            return true;
        }
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unrecognized servable version label: %s", label);
}

tfc_srv_version *tfc_srv_acquire(tfc_srv_manager *m, const char *name, int64_t version, const char *label,
                                 tfc_status *st) {
    pthread_mutex_lock(&m->mu);
    srv_model *md = find_model(m, name);
    tfc_srv_version *v = NULL;
    int64_t want;
    if (!resolve(md, version, label, &want, st)) goto done;
    for (int i = 0; md && i < md->n_vs; i++) {
        srv_vstat *s = &md->vs[i];
        if (s->state != TFC_SRV_AVAILABLE || !s->loaded) continue;
        if (want >= 0 ? s->version == want : (!v || s->version > v->number)) v = s->loaded;
    }
    if (v) {
        v->refs++;
        tfc_status_clear(st);
    } else if (want >= 0) {
        tfc_status_set(st, TFC_NOT_FOUND, "Servable not found for request: Specific(%s, %lld)", name ? name : "",
                       (long long)want);
    } else {
        tfc_status_set(st, TFC_NOT_FOUND, "Servable not found for request: Latest(%s)", name ? name : "");
    }
done:
    pthread_mutex_unlock(&m->mu);
    return v;
}

static int cmp_vstat(const void *a, const void *b) {
    return cmp_i64(&((const tfc_srv_version_status *)a)->version, &((const tfc_srv_version_status *)b)->version);
}

int tfc_srv_model_status(tfc_srv_manager *m, const char *name, int64_t version, const char *label,
                         tfc_srv_version_status **out, tfc_status *st) {
    *out = NULL;
    int n = -1;
    pthread_mutex_lock(&m->mu);
    srv_model *md = find_model(m, name);
    int64_t want;
    if (!resolve(md, version, label, &want, st)) goto done;
    if (!md || !md->n_vs) {
        tfc_status_set(st, TFC_NOT_FOUND, "Could not find any versions of model %s", name ? name : "");
        goto done;
    }
    tfc_srv_version_status *r = tfc_calloc((size_t)md->n_vs, sizeof *r);
    if (!r) {
        tfc_status_oom(st, "model status", (size_t)md->n_vs * sizeof *r);
        goto done;
    }
    n = 0;
    for (int i = 0; i < md->n_vs; i++)
        if (want < 0 || md->vs[i].version == want)
            r[n++] = (tfc_srv_version_status){md->vs[i].version, md->vs[i].state, md->vs[i].status};
    if (!n) {
        tfc_free(r);
        n = -1;
        tfc_status_set(st, TFC_NOT_FOUND, "Could not find version %lld of model %s", (long long)want, name);
        goto done;
    }
    qsort(r, (size_t)n, sizeof *r, cmp_vstat);
    *out = r;
    tfc_status_clear(st);
done:
    pthread_mutex_unlock(&m->mu);
    return n;
}

/* ---- config copies -------------------------------------------------------------------------------------- */

static bool config_copy(const tfc_srv_config *src, tfc_srv_config *dst, tfc_status *st) {
    memset(dst, 0, sizeof *dst);
    if (!src || src->n_models <= 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "serving: the model config lists no model");
    if (!(dst->models = tfc_calloc((size_t)src->n_models, sizeof *dst->models))) goto oom;
    dst->n_models = src->n_models;
    for (int i = 0; i < src->n_models; i++) {
        const tfc_srv_model_config *a = &src->models[i];
        tfc_srv_model_config *b = &dst->models[i];
        *b = (tfc_srv_model_config){.policy = a->policy, .num_versions = a->num_versions};
        if (!(b->name = tfc_strdup(a->name ? a->name : "")) || !(b->base_path = tfc_strdup(a->base_path ? a->base_path : "")) ||
            !(b->platform = tfc_strdup(a->platform ? a->platform : "")))
            goto oom;
        if (b->num_versions < 1) b->num_versions = 1;
        if (a->n_versions) {
            if (!(b->versions = tfc_calloc((size_t)a->n_versions, sizeof *b->versions))) goto oom;
            memcpy(b->versions, a->versions, (size_t)a->n_versions * sizeof *b->versions);
            b->n_versions = a->n_versions;
        }
        if (a->n_labels) {
            if (!(b->labels = tfc_calloc((size_t)a->n_labels, sizeof *b->labels))) goto oom;
            for (int j = 0; j < a->n_labels; j++, b->n_labels++) {
                b->labels[j].version = a->labels[j].version;
                if (!(b->labels[j].label = tfc_strdup(a->labels[j].label))) goto oom;
            }
        }
        if (*b->platform && strcmp(b->platform, "tensorflow")) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "model '%s': model_platform '%s' is not served (only "
                           "'tensorflow')", b->name, b->platform);
            tfc_srv_config_clear(dst);
            return false;
        }
    }
    return true;
oom:
    tfc_srv_config_clear(dst);
    return tfc_status_oom(st, "model config", 64);
}

void tfc_srv_config_clear(tfc_srv_config *c) {
    if (!c) return;
    for (int i = 0; i < c->n_models; i++) {
        tfc_srv_model_config *b = &c->models[i];
        tfc_free(b->name);
        tfc_free(b->base_path);
        tfc_free(b->platform);
        tfc_free(b->versions);
        for (int j = 0; j < b->n_labels; j++) tfc_free(b->labels[j].label);
        tfc_free(b->labels);
    }
    tfc_free(c->models);
    memset(c, 0, sizeof *c);
}

bool tfc_srv_config_single(const char *name, const char *base_path, tfc_srv_config *out, tfc_status *st) {
    tfc_srv_model_config one = {.name = (char *)name, .base_path = (char *)base_path, .num_versions = 1};
    tfc_srv_config c = {.models = &one, .n_models = 1};
    return config_copy(&c, out, st);
}
