/* Keras callbacks: the callback list, logs, History and the small built-in callbacks (TerminateOnNaN,
 * LearningRateScheduler, CSVLogger). ModelCheckpoint, EarlyStopping and ReduceLROnPlateau live in
 * callbacks_monitor.c, BackupAndRestore in callbacks_backup.c. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keras/model_internal.h"

struct tfc_callback {
    const tfc_callback_fns *fns;
    void *user;
};

tfc_callback *tfc_callback_new(const tfc_callback_fns *fns, void *user) {
    if (!fns) return NULL;
    tfc_callback *cb = tfc_calloc(1, sizeof *cb);
    if (!cb) return NULL;
    cb->fns = fns;
    cb->user = user;
    return cb;
}

void *tfc_callback_user(const tfc_callback *cb) { return cb ? cb->user : NULL; }

void tfc_callback_free(tfc_callback *cb) {
    if (!cb) return;
    if (cb->fns->destroy) cb->fns->destroy(cb);
    tfc_free(cb);
}

double tfc_logs_get(const tfc_logs *logs, const char *key) {
    if (!logs || !key) return NAN;
    for (int i = 0; i < logs->n; i++)
        if (!strcmp(logs->keys[i], key)) return logs->values[i];
    return NAN;
}

bool tfc_logs_set(tfc_logs *logs, const char *key, double value) {
    for (int i = 0; i < logs->n; i++)
        if (!strcmp(logs->keys[i], key)) {
            logs->values[i] = value;
            return true;
        }
    if (logs->n >= TFC_LOGS_MAX) return false;
    logs->keys[logs->n] = key;
    logs->values[logs->n++] = value;
    return true;
}

static bool logs_has(const tfc_logs *logs, const char *key) {
    for (int i = 0; logs && i < logs->n; i++)
        if (!strcmp(logs->keys[i], key)) return true;
    return false;
}

bool tfc_callbacks_run(tfc_callback *const *cbs, int n, tfc_hook hook, tfc_model *m, int64_t index, tfc_logs *logs,
                       tfc_status *st) {
    static const tfc_logs empty;
    const tfc_logs *cl = logs ? logs : &empty;
    for (int i = 0; i < n; i++) {
        const tfc_callback_fns *f = cbs[i]->fns;
        bool ok = true;
        tfc_status_clear(st);
        switch (hook) {
        case TFC_HOOK_TRAIN_BEGIN: ok = !f->on_train_begin || f->on_train_begin(cbs[i], m, cl, st); break;
        case TFC_HOOK_TRAIN_END: ok = !f->on_train_end || f->on_train_end(cbs[i], m, cl, st); break;
        case TFC_HOOK_EPOCH_BEGIN: ok = !f->on_epoch_begin || f->on_epoch_begin(cbs[i], m, (int)index, cl, st); break;
        case TFC_HOOK_EPOCH_END: ok = !f->on_epoch_end || f->on_epoch_end(cbs[i], m, (int)index, logs, st); break;
        case TFC_HOOK_TRAIN_BATCH_BEGIN:
            ok = !f->on_train_batch_begin || f->on_train_batch_begin(cbs[i], m, index, cl, st);
            break;
        case TFC_HOOK_TRAIN_BATCH_END:
            ok = !f->on_train_batch_end || f->on_train_batch_end(cbs[i], m, index, cl, st);
            break;
        case TFC_HOOK_TEST_BEGIN: ok = !f->on_test_begin || f->on_test_begin(cbs[i], m, cl, st); break;
        case TFC_HOOK_TEST_END: ok = !f->on_test_end || f->on_test_end(cbs[i], m, cl, st); break;
        }
        if (!ok) {
            if (st->code == TFC_OK) tfc_status_set(st, TFC_UNKNOWN, "a callback stopped training without a status");
            return false;
        }
    }
    tfc_status_clear(st);
    return true;
}

/* ---- History ------------------------------------------------------------------------------------------- */

typedef struct {
    char *key;
    double *v;
    int n, cap;
} hist_key;

struct tfc_history {
    hist_key *keys;
    int n_keys, cap_keys;
    int epochs;
};

tfc_history *tfc_history_new(void) { return tfc_calloc(1, sizeof(tfc_history)); }

int tfc_history_epochs(const tfc_history *h) { return h ? h->epochs : 0; }

const double *tfc_history_get(const tfc_history *h, const char *key, int *n) {
    if (n) *n = 0;
    if (!h || !key) return NULL;
    for (int i = 0; i < h->n_keys; i++)
        if (!strcmp(h->keys[i].key, key)) {
            if (n) *n = h->keys[i].n;
            return h->keys[i].v;
        }
    return NULL;
}

int tfc_history_keys(const tfc_history *h, const char **out, int max) {
    if (!h) return 0;
    for (int i = 0; i < h->n_keys && i < max && out; i++) out[i] = h->keys[i].key;
    return h->n_keys;
}

void tfc_history_free(tfc_history *h) {
    if (!h) return;
    for (int i = 0; i < h->n_keys; i++) {
        tfc_free(h->keys[i].key);
        tfc_free(h->keys[i].v);
    }
    tfc_free(h->keys);
    tfc_free(h);
}

static bool history_append(tfc_history *h, const char *key, double v, tfc_status *st) {
    hist_key *k = NULL;
    for (int i = 0; i < h->n_keys && !k; i++)
        if (!strcmp(h->keys[i].key, key)) k = &h->keys[i];
    if (!k) {
        if (h->n_keys == h->cap_keys) {
            int cap = h->cap_keys ? h->cap_keys * 2 : 8;
            hist_key *nk = tfc_realloc(h->keys, (size_t)cap * sizeof *nk);
            if (!nk) return tfc_status_oom(st, "History", 0);
            h->keys = nk;
            h->cap_keys = cap;
        }
        k = &h->keys[h->n_keys];
        *k = (hist_key){.key = tfc_strdup(key)};
        if (!k->key) return tfc_status_oom(st, "History", 0);
        h->n_keys++;
    }
    if (k->n == k->cap) {
        int cap = k->cap ? k->cap * 2 : 16;
        double *nv = tfc_realloc(k->v, (size_t)cap * sizeof *nv);
        if (!nv) return tfc_status_oom(st, "History", 0);
        k->v = nv;
        k->cap = cap;
    }
    k->v[k->n++] = v;
    return true;
}

static bool history_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    tfc_history *h = cb->user;
    for (int i = 0; logs && i < logs->n; i++)
        if (!history_append(h, logs->keys[i], logs->values[i], st)) return false;
    h->epochs++;
    return true;
}

static const tfc_callback_fns history_fns = {.on_epoch_end = history_epoch_end};

tfc_callback *tfc_callback_history_new(tfc_history *h) { return tfc_callback_new(&history_fns, h); }

/* ---- TerminateOnNaN ------------------------------------------------------------------------------------ */

static bool nan_batch_end(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    if (!logs_has(logs, "loss")) return true;
    double loss = tfc_logs_get(logs, "loss");
    if (isnan(loss) || isinf(loss)) {
        FILE *out = tfc_model_fit_out(m);
        fprintf(out, "Batch %lld: Invalid loss, terminating training\n", (long long)batch);
        fflush(out);
        tfc_model_stop_training(m);
    }
    return true;
}

static const tfc_callback_fns nan_fns = {.on_train_batch_end = nan_batch_end};

tfc_callback *tfc_callbacks_terminate_on_nan(void) { return tfc_callback_new(&nan_fns, NULL); }

/* ---- LearningRateScheduler ----------------------------------------------------------------------------- */

typedef struct {
    double (*schedule)(int epoch, double lr, void *user);
    void *user;
} lr_sched;

static bool need_optimizer(tfc_model *m, const char *who, tfc_status *st) {
    if (tfc_model_optimizer(m)) return true;
    return tfc_status_set(st, TFC_FAILED_PRECONDITION, "%s: the model has no optimizer (compile it first)", who);
}

static bool sched_epoch_begin(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *logs, tfc_status *st) {
    lr_sched *s = cb->user;
    if (!need_optimizer(m, "LearningRateScheduler", st)) return false;
    tfc_optimizer *o = tfc_model_optimizer(m);
    /* Keras reads the float32 variable as a Python float. */
    double lr = s->schedule(epoch, (double)(float)tfc_optimizer_learning_rate(o), s->user);
    if (!isfinite(lr))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "LearningRateScheduler: the schedule returned %g for epoch %d; it should be a finite float",
                              lr, epoch);
    tfc_optimizer_set_learning_rate(o, lr);
    return true;
}

static bool sched_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    tfc_optimizer *o = tfc_model_optimizer(m);
    if (o && logs) tfc_logs_set(logs, "lr", (double)(float)tfc_optimizer_learning_rate(o));
    return true;
}

static void sched_destroy(tfc_callback *cb) { tfc_free(cb->user); }

static const tfc_callback_fns sched_fns = {
    .on_epoch_begin = sched_epoch_begin, .on_epoch_end = sched_epoch_end, .destroy = sched_destroy};

tfc_callback *tfc_callbacks_learning_rate_scheduler(double (*schedule)(int epoch, double lr, void *user), void *user) {
    if (!schedule) return NULL;
    lr_sched *s = tfc_calloc(1, sizeof *s);
    if (!s) return NULL;
    s->schedule = schedule;
    s->user = user;
    tfc_callback *cb = tfc_callback_new(&sched_fns, s);
    if (!cb) tfc_free(s);
    return cb;
}

/* ---- CSVLogger ----------------------------------------------------------------------------------------- */

typedef struct {
    char *filename, *sep;
    bool append, append_header;
    FILE *f;
    char **keys; /* sorted at the first epoch end, then fixed */
    int n_keys;
} csv_logger;

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

/* Python's csv module (excel dialect): a field is quoted when it holds the delimiter, a quote or a line break. */
static void csv_field(FILE *f, const char *s, const char *sep) {
    bool quote = strstr(s, sep) || strchr(s, '"') || strchr(s, '\n') || strchr(s, '\r');
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static bool csv_train_begin(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    csv_logger *c = cb->user;
    c->append_header = true;
    if (c->append) {
        FILE *r = fopen(c->filename, "rb");
        if (r) {
            int ch = fgetc(r);
            c->append_header = ch == EOF; /* not bool(len(f.readline())) */
            fclose(r);
        }
    }
    c->f = fopen(c->filename, c->append ? "ab" : "wb");
    if (!c->f)
        return tfc_status_set(st, errno == ENOENT ? TFC_NOT_FOUND : TFC_PERMISSION_DENIED, "CSVLogger: cannot open %s: %s",
                              c->filename, strerror(errno));
    return true;
}

static bool csv_epoch_end(tfc_callback *cb, tfc_model *m, int epoch, tfc_logs *logs, tfc_status *st) {
    csv_logger *c = cb->user;
    if (!c->f) return true;
    if (!c->keys) {
        int n = logs ? logs->n : 0;
        c->keys = tfc_calloc((size_t)(n ? n : 1), sizeof *c->keys);
        if (!c->keys) return tfc_status_oom(st, "CSVLogger", 0);
        for (int i = 0; i < n; i++)
            if (!(c->keys[c->n_keys++] = tfc_strdup(logs->keys[i]))) return tfc_status_oom(st, "CSVLogger", 0);
        qsort(c->keys, (size_t)c->n_keys, sizeof *c->keys, cmp_str);
        if (c->append_header) {
            csv_field(c->f, "epoch", c->sep);
            for (int i = 0; i < c->n_keys; i++) {
                fputs(c->sep, c->f);
                csv_field(c->f, c->keys[i], c->sep);
            }
            fputs("\r\n", c->f);
        }
    }
    fprintf(c->f, "%d", epoch);
    bool stopping = m->stop_training;
    for (int i = 0; i < c->n_keys; i++) {
        fputs(c->sep, c->f);
        if (logs_has(logs, c->keys[i])) {
            char num[64];
            fputs(tfc_py_repr_f64(tfc_logs_get(logs, c->keys[i]), num, sizeof num), c->f);
        } else if (stopping) {
            fputs("NA", c->f); /* so that csv parsers do not fail for this last epoch */
        } else {
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "CSVLogger: the logs of epoch %d have no \"%s\"", epoch,
                                  c->keys[i]);
        }
    }
    fputs("\r\n", c->f);
    if (fflush(c->f) != 0)
        return tfc_status_set(st, TFC_DATA_LOSS, "CSVLogger: writing %s failed: %s", c->filename, strerror(errno));
    return true;
}

static bool csv_train_end(tfc_callback *cb, tfc_model *m, const tfc_logs *logs, tfc_status *st) {
    csv_logger *c = cb->user;
    if (c->f && fclose(c->f) != 0) {
        c->f = NULL;
        return tfc_status_set(st, TFC_DATA_LOSS, "CSVLogger: closing %s failed: %s", c->filename, strerror(errno));
    }
    c->f = NULL;
    return true;
}

static void csv_destroy(tfc_callback *cb) {
    csv_logger *c = cb->user;
    if (c->f) fclose(c->f);
    for (int i = 0; i < c->n_keys; i++) tfc_free(c->keys[i]);
    tfc_free(c->keys);
    tfc_free(c->filename);
    tfc_free(c->sep);
    tfc_free(c);
}

static const tfc_callback_fns csv_fns = {
    .on_train_begin = csv_train_begin,
    .on_epoch_end = csv_epoch_end,
    .on_train_end = csv_train_end,
    .destroy = csv_destroy,
};

tfc_callback *tfc_callbacks_csv_logger(const char *filename, const char *separator, bool append) {
    if (!filename) return NULL;
    csv_logger *c = tfc_calloc(1, sizeof *c);
    if (!c) return NULL;
    c->filename = tfc_strdup(filename);
    c->sep = tfc_strdup(separator && *separator ? separator : ",");
    c->append = append;
    tfc_callback *cb = c->filename && c->sep ? tfc_callback_new(&csv_fns, c) : NULL;
    if (!cb) {
        tfc_free(c->filename);
        tfc_free(c->sep);
        tfc_free(c);
    }
    return cb;
}
