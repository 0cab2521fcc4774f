/* tf.summary's file writer: an events.out.tfevents file (TFRecord framing from src/data) of serialized
 * tensorflow.Event messages, with TensorFlow's SummaryFileWriter queueing (max_queue / flush_millis). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "platform/files.h"
#include "summary/summary_internal.h"
#include "tfc/data.h"

typedef struct {
    uint8_t *p;
    size_t n;
} packed_event;

struct tfc_summary_writer {
    pthread_mutex_t mu;
    tfc_tfrecord_writer *rec;
    char *path;
    int max_queue, flush_millis;
    packed_event *q;
    int nq, capq;
    double last_flush;
    bool closed;
    tfc_status failed; /* the first I/O error, repeated by later calls */
};

/* per thread, as TensorFlow's summary state */
static _Thread_local tfc_summary_writer *default_writer;
static _Thread_local int64_t default_step = TFC_SUMMARY_DEFAULT_STEP;
static _Thread_local int record_off; /* 0: record (the initial state) */

/* files this process opened: the <n> of the name (TensorFlow's global file number) */
static int file_counter;

double summary_wall_time(void) {
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static bool io_fail(tfc_summary_writer *w, const tfc_status *err, tfc_status *st) {
    if (w->failed.code == TFC_OK) {
        tfc_code c = err->code == TFC_UNKNOWN && errno ? tfc_errno_code(errno) : err->code;
        tfc_status_set(&w->failed, c, "summary writer: %s", err->msg);
    }
    return tfc_status_set(st, w->failed.code, "%s", w->failed.msg);
}

/* Writes the queued events and flushes the file (w->mu held). */
static bool write_queue(tfc_summary_writer *w, tfc_status *st) {
    if (w->failed.code != TFC_OK) return tfc_status_set(st, w->failed.code, "%s", w->failed.msg);
    tfc_status err = {0};
    bool ok = true;
    int i = 0;
    for (; i < w->nq && ok; i++) ok = tfc_tfrecord_writer_write(w->rec, w->q[i].p, w->q[i].n, &err);
    if (ok) ok = tfc_tfrecord_writer_flush(w->rec, &err);
    for (int j = 0; j < w->nq; j++) tfc_free(w->q[j].p);
    w->nq = 0;
    w->last_flush = summary_wall_time();
    if (!ok) return io_fail(w, &err, st);
    tfc_status_clear(st);
    return true;
}

static bool enqueue(tfc_summary_writer *w, Tensorflow__Event *ev, tfc_status *st) {
    if (w->nq == w->capq) {
        int cap = w->capq ? 2 * w->capq : 16;
        packed_event *q = tfc_realloc(w->q, (size_t)cap * sizeof *q);
        if (!q) return tfc_status_oom(st, "summary writer queue", (size_t)cap * sizeof *q);
        w->q = q;
        w->capq = cap;
    }
    size_t n = tensorflow__event__get_packed_size(ev);
    uint8_t *p = tfc_malloc(n ? n : 1);
    if (!p) return tfc_status_oom(st, "summary event", n);
    tensorflow__event__pack(ev, p);
    w->q[w->nq++] = (packed_event){p, n};
    return true;
}

bool summary_writer_add(tfc_summary_writer *w, Tensorflow__Event *ev, tfc_status *st) {
    if (!w) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "summary: NULL writer");
    if (ev->wall_time == 0) ev->wall_time = summary_wall_time();
    pthread_mutex_lock(&w->mu);
    bool ok;
    if (w->closed)
        ok = tfc_status_set(st, TFC_FAILED_PRECONDITION, "summary writer %s is closed", w->path);
    else if (w->failed.code != TFC_OK)
        ok = tfc_status_set(st, w->failed.code, "%s", w->failed.msg);
    else if ((ok = enqueue(w, ev, st)) &&
             (w->nq > w->max_queue || (ev->wall_time - w->last_flush) * 1000.0 > w->flush_millis))
        ok = write_queue(w, st);
    pthread_mutex_unlock(&w->mu);
    if (ok) tfc_status_clear(st);
    return ok;
}

tfc_summary_writer *tfc_summary_create_file_writer(const char *logdir, int max_queue, int flush_millis,
                                                   const char *filename_suffix, tfc_status *st) {
    if (!logdir || !*logdir) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "create_file_writer: logdir must be a non-empty path");
        return NULL;
    }
    if (!tfc_make_dirs(logdir, "create_file_writer", st)) return NULL;
    tfc_summary_writer *w = tfc_calloc(1, sizeof *w);
    if (!w) {
        tfc_status_oom(st, "summary writer", sizeof *w);
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    w->max_queue = max_queue > 0 ? max_queue : 10;
    w->flush_millis = flush_millis > 0 ? flush_millis : 120000;
    char host[256] = "localhost";
    if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "localhost");
    double now = summary_wall_time();
    int n = __atomic_fetch_add(&file_counter, 1, __ATOMIC_RELAXED);
    const char *suffix = filename_suffix ? filename_suffix : ".v2";
    size_t len = strlen(logdir) + strlen(host) + strlen(suffix) + 96;
    if (!(w->path = tfc_malloc(len))) {
        tfc_summary_writer_free(w);
        tfc_status_oom(st, "summary writer", len);
        return NULL;
    }
    snprintf(w->path, len, "%s%sevents.out.tfevents.%010lld.%s.%ld.%d%s", logdir,
             logdir[strlen(logdir) - 1] == '/' ? "" : "/", (long long)now, host, (long)getpid(), n, suffix);
    tfc_status err = {0};
    errno = 0;
    if (!(w->rec = tfc_tfrecord_writer_new(w->path, NULL, -1, &err))) {
        tfc_status_set(st, err.code == TFC_UNKNOWN && errno ? tfc_errno_code(errno) : err.code,
                       "create_file_writer: %s", err.msg);
        tfc_summary_writer_free(w);
        return NULL;
    }
    Tensorflow__SourceMetadata src = TENSORFLOW__SOURCE_METADATA__INIT;
    src.writer = "tfc";
    Tensorflow__Event ev = TENSORFLOW__EVENT__INIT;
    ev.wall_time = (double)(long long)now;
    ev.what_case = TENSORFLOW__EVENT__WHAT_FILE_VERSION;
    ev.file_version = "brain.Event:2";
    ev.source_metadata = &src;
    pthread_mutex_lock(&w->mu);
    bool ok = enqueue(w, &ev, st) && write_queue(w, st);
    pthread_mutex_unlock(&w->mu);
    if (!ok) {
        tfc_summary_writer_free(w);
        return NULL;
    }
    tfc_status_clear(st);
    return w;
}

const char *tfc_summary_writer_path(const tfc_summary_writer *w) { return w ? w->path : NULL; }

bool tfc_summary_writer_flush(tfc_summary_writer *w, tfc_status *st) {
    if (!w) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "summary flush: NULL writer");
    pthread_mutex_lock(&w->mu);
    bool ok = w->closed || write_queue(w, st);
    pthread_mutex_unlock(&w->mu);
    if (ok) tfc_status_clear(st);
    return ok;
}

bool tfc_summary_writer_close(tfc_summary_writer *w, tfc_status *st) {
    if (!w) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "summary close: NULL writer");
    pthread_mutex_lock(&w->mu);
    bool ok = true;
    if (!w->closed) {
        ok = !w->rec || write_queue(w, st);
        tfc_status err = {0};
        if (w->rec && !tfc_tfrecord_writer_close(w->rec, &err) && ok) ok = io_fail(w, &err, st);
        w->rec = NULL;
        w->closed = true;
    }
    pthread_mutex_unlock(&w->mu);
    if (ok) tfc_status_clear(st);
    return ok;
}

void tfc_summary_writer_free(tfc_summary_writer *w) {
    if (!w) return;
    tfc_status st = {0};
    tfc_summary_writer_close(w, &st);
    if (default_writer == w) default_writer = NULL;
    for (int i = 0; i < w->nq; i++) tfc_free(w->q[i].p);
    tfc_free(w->q);
    tfc_free(w->path);
    pthread_mutex_destroy(&w->mu);
    tfc_free(w);
}

tfc_summary_writer *tfc_summary_set_default_writer(tfc_summary_writer *w) {
    tfc_summary_writer *prev = default_writer;
    default_writer = w;
    return prev;
}

tfc_summary_writer *tfc_summary_default_writer(void) { return default_writer; }

void tfc_summary_set_step(int64_t step) { default_step = step; }

int64_t tfc_summary_get_step(void) { return default_step; }

bool tfc_summary_record_if(bool record) {
    bool prev = !record_off;
    record_off = !record;
    return prev;
}

bool summary_resolve_step(int64_t step, const char *what, int64_t *out, tfc_status *st) {
    if (step == TFC_SUMMARY_DEFAULT_STEP) step = default_step;
    if (step == TFC_SUMMARY_DEFAULT_STEP)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: No step set. Please specify one either through the `step` "
                              "argument or through tf.summary.experimental.set_step()", what);
    *out = step;
    return true;
}

bool summary_recording(void) { return !record_off && default_writer; }
