/* tf.train.CheckpointManager: numbered checkpoints in one directory, the `checkpoint` state file with their
 * timestamps, and deletion of the oldest beyond max_to_keep (keep_checkpoint_every_n_hours preserving some).
 * Unlike TensorFlow, the state file is rewritten before old files are deleted, so a process killed in between
 * never leaves a state file naming a deleted checkpoint. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

#include "saved_model/bundle.h"
#include "saved_model/checkpoint_internal.h"

struct tfc_checkpoint_manager {
    tfc_checkpoint *ckpt;
    char *dir, *prefix;
    int max_to_keep;
    double every_n_hours, last_preserved;
    char **paths; /* full prefixes, oldest first (TensorFlow's _maybe_delete) */
    double *stamps;
    int n;
    char *latest;
};

static double now_seconds(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + tv.tv_usec / 1e6;
}

static bool push(tfc_checkpoint_manager *m, char *path, double stamp, tfc_status *st) {
    char **p = tfc_realloc(m->paths, (size_t)(m->n + 1) * sizeof *p);
    if (p) m->paths = p;
    double *s = p ? tfc_realloc(m->stamps, (size_t)(m->n + 1) * sizeof *s) : NULL;
    if (s) m->stamps = s;
    if (!p || !s) {
        tfc_free(path);
        return tfc_status_oom(st, "checkpoint manager", 0);
    }
    m->paths[m->n] = path;
    m->stamps[m->n++] = stamp;
    return true;
}

static void remove_at(tfc_checkpoint_manager *m, int i) {
    tfc_free(m->paths[i]);
    memmove(&m->paths[i], &m->paths[i + 1], (size_t)(m->n - i - 1) * sizeof *m->paths);
    memmove(&m->stamps[i], &m->stamps[i + 1], (size_t)(m->n - i - 1) * sizeof *m->stamps);
    m->n--;
}

tfc_checkpoint_manager *tfc_checkpoint_manager_new(tfc_checkpoint *c, const char *directory,
                                                   const tfc_checkpoint_manager_opts *opts, tfc_status *st) {
    tfc_checkpoint_manager_opts o = opts ? *opts : (tfc_checkpoint_manager_opts){0};
    if (o.max_to_keep < 0 || o.keep_checkpoint_every_n_hours < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT,
                       "CheckpointManager: max_to_keep %d and keep_checkpoint_every_n_hours %g must not be negative",
                       o.max_to_keep, o.keep_checkpoint_every_n_hours);
        return NULL;
    }
    tfc_checkpoint_manager *m = tfc_calloc(1, sizeof *m);
    if (!m) {
        tfc_status_oom(st, "checkpoint manager", sizeof *m);
        return NULL;
    }
    m->ckpt = c;
    m->max_to_keep = o.max_to_keep;
    m->every_n_hours = o.keep_checkpoint_every_n_hours;
    m->dir = tfc_ckpt_strdup(directory);
    m->prefix = m->dir ? tfc_ckpt_join(directory, o.checkpoint_name ? o.checkpoint_name : "ckpt") : NULL;
    if (!m->prefix) {
        tfc_status_oom(st, directory, strlen(directory));
        tfc_checkpoint_manager_free(m);
        return NULL;
    }
    double now = now_seconds();
    tfc_ckpt_state s;
    if (tfc_ckpt_state_read(directory, &s, st)) {
        /* recover the checkpoints an earlier manager kept; without timestamps they count as made now */
        bool ok = true;
        for (int i = 0; ok && i < s.n_paths; i++) {
            char *p = tfc_ckpt_join(directory, s.all_model_checkpoint_paths[i]);
            ok = p ? push(m, p, i < s.n_timestamps ? s.all_model_checkpoint_timestamps[i] : now, st)
                   : tfc_status_oom(st, directory, 0);
        }
        if (ok && s.model_checkpoint_path && s.model_checkpoint_path[0] &&
            !(m->latest = tfc_ckpt_join(directory, s.model_checkpoint_path)))
            ok = tfc_status_oom(st, directory, 0);
        m->last_preserved = s.last_preserved_timestamp != 0 && s.last_preserved_timestamp <= now
                                ? s.last_preserved_timestamp
                                : now;
        tfc_ckpt_state_free(&s);
        if (!ok) {
            tfc_checkpoint_manager_free(m);
            return NULL;
        }
    } else if (st->code != TFC_NOT_FOUND) {
        tfc_checkpoint_manager_free(m);
        return NULL;
    } else {
        m->last_preserved = now;
    }
    tfc_status_clear(st);
    return m;
}

void tfc_checkpoint_manager_free(tfc_checkpoint_manager *m) {
    if (!m) return;
    for (int i = 0; i < m->n; i++) tfc_free(m->paths[i]);
    tfc_free(m->paths);
    tfc_free(m->stamps);
    tfc_free(m->dir);
    tfc_free(m->prefix);
    tfc_free(m->latest);
    tfc_free(m);
}

/* The state file: every kept checkpoint relative to the directory, with its timestamp. */
static bool record_state(tfc_checkpoint_manager *m, tfc_status *st) {
    size_t dl = strlen(m->dir);
    char **rel = tfc_calloc((size_t)(m->n ? m->n : 1), sizeof *rel);
    if (!rel) return tfc_status_oom(st, "checkpoint state", 0);
    for (int i = 0; i < m->n; i++)
        rel[i] = strncmp(m->paths[i], m->dir, dl) == 0 && m->paths[i][dl] == '/' ? m->paths[i] + dl + 1 : m->paths[i];
    const char *latest = m->latest;
    if (latest && strncmp(latest, m->dir, dl) == 0 && latest[dl] == '/') latest += dl + 1;
    tfc_ckpt_state s = {.model_checkpoint_path = (char *)latest, .all_model_checkpoint_paths = rel, .n_paths = m->n,
                        .all_model_checkpoint_timestamps = m->stamps, .n_timestamps = m->n,
                        .last_preserved_timestamp = m->last_preserved};
    bool ok = tfc_ckpt_state_write(m->dir, &s, st);
    tfc_free(rel);
    return ok;
}

/* Deletes a checkpoint's files (index first: without it the data file is never read). */
static void delete_checkpoint(const char *prefix) {
    char path[4200];
    snprintf(path, sizeof path, "%s.index", prefix);
    remove(path);
    tfc_bundle_shard_name(prefix, 0, 1, path, sizeof path);
    remove(path);
}

const char *tfc_checkpoint_manager_save(tfc_checkpoint_manager *m, int64_t checkpoint_number, tfc_status *st) {
    if (!tfc_ckpt_bump_counter(m->ckpt, st)) return NULL;
    if (checkpoint_number < 0) checkpoint_number = tfc_checkpoint_save_counter(m->ckpt);
    size_t n = strlen(m->prefix) + 32;
    char *path = tfc_malloc(n);
    if (!path) {
        tfc_status_oom(st, m->prefix, n);
        return NULL;
    }
    snprintf(path, n, "%s-%lld", m->prefix, (long long)checkpoint_number);
    if (!tfc_checkpoint_write(m->ckpt, path, st)) {
        tfc_free(path);
        return NULL;
    }
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->paths[i], path)) {
            remove_at(m, i);
            break;
        }
    char *latest = tfc_ckpt_strdup(path);
    if (!latest || !push(m, path, now_seconds(), st)) {
        tfc_free(latest);
        if (st->code == TFC_OK) tfc_status_oom(st, "checkpoint manager", 0);
        return NULL;
    }
    tfc_free(m->latest);
    m->latest = latest;
    /* TensorFlow's _sweep: the oldest go first; one every keep_checkpoint_every_n_hours is kept for good */
    char **doomed = tfc_calloc((size_t)m->n, sizeof *doomed);
    int nd = 0;
    if (!doomed) {
        tfc_status_oom(st, "checkpoint manager", 0);
        return NULL;
    }
    while (m->max_to_keep > 0 && m->n > m->max_to_keep) {
        double stamp = m->stamps[0];
        if (m->every_n_hours > 0 && stamp - m->every_n_hours * 3600.0 >= m->last_preserved) {
            m->last_preserved = stamp;
            tfc_free(m->paths[0]);
        } else {
            doomed[nd++] = m->paths[0];
        }
        memmove(&m->paths[0], &m->paths[1], (size_t)(m->n - 1) * sizeof *m->paths);
        memmove(&m->stamps[0], &m->stamps[1], (size_t)(m->n - 1) * sizeof *m->stamps);
        m->n--;
    }
    bool ok = record_state(m, st);
    for (int i = 0; i < nd; i++) {
        if (ok) delete_checkpoint(doomed[i]);
        tfc_free(doomed[i]);
    }
    tfc_free(doomed);
    if (!ok) return NULL;
    tfc_status_clear(st);
    return m->latest;
}

const char *tfc_checkpoint_manager_latest_checkpoint(const tfc_checkpoint_manager *m) { return m->latest; }
int tfc_checkpoint_manager_num_checkpoints(const tfc_checkpoint_manager *m) { return m->n; }
const char *tfc_checkpoint_manager_checkpoint(const tfc_checkpoint_manager *m, int i) {
    return i >= 0 && i < m->n ? m->paths[i] : NULL;
}
