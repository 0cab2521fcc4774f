/* tf.profiler.experimental.start / stop / Trace: sessions over the recorder of platform/trace.h, written as
 * an XSpace (xplane.pb, for TensorBoard's profile plugin) and as Chrome trace-event JSON (for Perfetto). */
#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "platform/files.h"
#include "platform/trace.h"
#include "proto/xplane.pb-c.h"
#include "tfc/profiler.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static bool running;
static char *session_logdir;
static uint64_t mono0, real0; /* the session's start on the monotonic and the wall clock */
static char last_run[1024];

static uint64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool tfc_profiler_start(const char *logdir, const tfc_profiler_options *opts, tfc_status *st) {
    if (!logdir || !*logdir)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "profiler start: logdir must be a non-empty path");
    int level = opts && opts->host_tracer_level > 0 ? opts->host_tracer_level : 2;
    pthread_mutex_lock(&mu);
    bool ok = false;
    if (running) {
        tfc_status_set(st, TFC_ALREADY_EXISTS, "Another profiler is running.");
    } else if (tfc_make_dirs(logdir, "profiler start", st)) {
        char *dir = tfc_strdup(logdir);
        if (!dir) {
            tfc_status_oom(st, "profiler start", strlen(logdir));
        } else {
            tfc_free(session_logdir);
            session_logdir = dir;
            mono0 = tfc_trace_now();
            real0 = realtime_ns();
            running = true;
            tfc_trace_session_begin(level);
            ok = true;
        }
    }
    pthread_mutex_unlock(&mu);
    if (ok) tfc_status_clear(st);
    return ok;
}

bool tfc_profiler_active(void) { return __atomic_load_n(&running, __ATOMIC_ACQUIRE); }

void tfc_profiler_last_run_dir(char *buf, size_t size) {
    if (!buf || !size) return;
    pthread_mutex_lock(&mu);
    snprintf(buf, size, "%s", last_run);
    pthread_mutex_unlock(&mu);
}

void tfc_profiler_trace_begin(tfc_profiler_trace *t, const char *name, int64_t step_num) {
    t->t0 = tfc_trace_level ? tfc_trace_now() : 0;
    t->name = name;
    t->step_num = step_num;
}

void tfc_profiler_trace_end(tfc_profiler_trace *t) {
    if (!t->t0 || !tfc_trace_level) return;
    tfc_trace_record(1, t->step_num >= 0 ? "step" : "scope", t->name, NULL, t->t0, tfc_trace_now(),
                     t->step_num >= 0 ? t->step_num : -1);
}

/* ---- collection ----------------------------------------------------------------------------------------- */

typedef struct {
    int64_t tid;
    char tname[32];
    tfc_trace_event ev;
} rec;

typedef struct {
    rec *r;
    size_t n, cap;
    bool oom;
} recs;

static void collect(void *user, int64_t tid, const char *tname, const tfc_trace_event *ev) {
    recs *rs = user;
    if (rs->oom) return;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 1024;
        rec *r = tfc_realloc(rs->r, cap * sizeof *r);
        if (!r) {
            rs->oom = true;
            return;
        }
        rs->r = r;
        rs->cap = cap;
    }
    rec *x = &rs->r[rs->n++];
    x->tid = tid;
    snprintf(x->tname, sizeof x->tname, "%s", tname);
    x->ev = *ev;
}

/* by thread (kept in visiting order through the index), then start, outer (longer) events first */
static int rec_cmp(const void *a_, const void *b_) {
    const rec *a = a_, *b = b_;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->ev.start_ns != b->ev.start_ns) return a->ev.start_ns < b->ev.start_ns ? -1 : 1;
    if (a->ev.end_ns != b->ev.end_ns) return a->ev.end_ns > b->ev.end_ns ? -1 : 1;
    return 0;
}

/* ---- output --------------------------------------------------------------------------------------------- */

static bool write_file(const char *path, const void *data, size_t n, tfc_status *st) {
    size_t len = strlen(path) + 8;
    char *tmp = tfc_malloc(len);
    if (!tmp) return tfc_status_oom(st, "profiler", len);
    snprintf(tmp, len, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(data, 1, n, f) == n;
    int e = errno;
    if (f && fclose(f) != 0 && ok) ok = false, e = errno;
    if (ok && rename(tmp, path) != 0) ok = false, e = errno;
    if (!ok) {
        remove(tmp);
        tfc_status_set(st, tfc_errno_code(e), "profiler: cannot write %s: %s", path, strerror(e));
    }
    tfc_free(tmp);
    return ok;
}

typedef struct {
    char *p;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->p ? b->p + b->n : NULL, b->p ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->p && b->n + (size_t)k < b->cap) {
            b->n += (size_t)k;
            return;
        }
        size_t cap = (b->cap ? 2 * b->cap : 65536) + (size_t)k;
        char *p = tfc_realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
}

/* a JSON string body (quotes, backslashes and control characters escaped) */
static void sb_json_str(sbuf *b, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') sb_printf(b, "\\%c", c);
        else if (c < 0x20) sb_printf(b, "\\u%04x", c);
        else sb_printf(b, "%c", c);
    }
}

static bool write_json(const char *path, const recs *rs, tfc_status *st) {
    sbuf b = {0};
    long pid = (long)getpid();
    sb_printf(&b, "{\"traceEvents\":[\n");
    sb_printf(&b, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%ld,\"tid\":0,\"args\":{\"name\":\"/host:CPU\"}}", pid);
    for (size_t i = 0; i < rs->n; i++) {
        const rec *r = &rs->r[i];
        if (i == 0 || r->tid != rs->r[i - 1].tid) {
            sb_printf(&b, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%ld,\"tid\":%lld,\"args\":{\"name\":\"", pid,
                      (long long)r->tid);
            sb_json_str(&b, r->tname);
            sb_printf(&b, "\"}}");
        }
        const tfc_trace_event *e = &r->ev;
        sb_printf(&b, ",\n{\"ph\":\"X\",\"cat\":\"%s\",\"name\":\"", e->category);
        sb_json_str(&b, e->name);
        sb_printf(&b, "\",\"pid\":%ld,\"tid\":%lld,\"ts\":%.3f,\"dur\":%.3f,\"args\":{", pid, (long long)r->tid,
                  (double)(e->start_ns - mono0) / 1e3, (double)(e->end_ns - e->start_ns) / 1e3);
        const char *sep = "";
        if (e->detail[0]) {
            sb_printf(&b, "\"shapes\":\"");
            sb_json_str(&b, e->detail);
            sb_printf(&b, "\"");
            sep = ",";
        }
        if (e->step >= 0) sb_printf(&b, "%s\"step_num\":%lld", sep, (long long)e->step);
        sb_printf(&b, "}}");
    }
    sb_printf(&b, "\n]}\n");
    bool ok = !b.oom ? write_file(path, b.p, b.n, st) : tfc_status_oom(st, "profiler trace JSON", b.cap);
    tfc_free(b.p);
    return ok;
}

enum { STAT_SHAPES = 1, STAT_STEP_NUM, STAT_ROOT, N_STATS };
static const char *const stat_names[N_STATS] = {NULL, "shapes", "step_num", "_r"};

/* The XSpace: one plane "/host:CPU", a line per thread, event metadata per distinct name. */
static bool write_xplane(const char *path, const recs *rs, const char *host, tfc_status *st) {
    size_t n = rs->n, n_lines = 0, n_names = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || rs->r[i].tid != rs->r[i - 1].tid) n_lines++;
    Tensorflow__Profiler__XLine *lines = tfc_calloc(n_lines + 1, sizeof *lines);
    Tensorflow__Profiler__XLine **line_p = tfc_calloc(n_lines + 1, sizeof *line_p);
    Tensorflow__Profiler__XEvent *evs = tfc_calloc(n + 1, sizeof *evs);
    Tensorflow__Profiler__XEvent **ev_p = tfc_calloc(n + 1, sizeof *ev_p);
    Tensorflow__Profiler__XStat *stats = tfc_calloc(3 * n + 1, sizeof *stats);
    Tensorflow__Profiler__XStat **stat_p = tfc_calloc(3 * n + 1, sizeof *stat_p);
    Tensorflow__Profiler__XEventMetadata *md = tfc_calloc(n + 1, sizeof *md);
    Tensorflow__Profiler__XPlane__EventMetadataEntry *md_e = tfc_calloc(n + 1, sizeof *md_e), **md_p =
        tfc_calloc(n + 1, sizeof *md_p);
    Tensorflow__Profiler__XStatMetadata smd[N_STATS];
    Tensorflow__Profiler__XPlane__StatMetadataEntry smd_e[N_STATS], *smd_p[N_STATS];
    bool ok = lines && line_p && evs && ev_p && stats && stat_p && md && md_e && md_p;
    uint8_t *buf = NULL;
    if (!ok) {
        tfc_status_oom(st, "profiler XSpace", n * sizeof *evs);
        goto done;
    }
    for (int s = 1; s < N_STATS; s++) {
        smd[s] = (Tensorflow__Profiler__XStatMetadata)TENSORFLOW__PROFILER__XSTAT_METADATA__INIT;
        smd[s].id = s;
        smd[s].name = (char *)stat_names[s];
        smd_e[s] = (Tensorflow__Profiler__XPlane__StatMetadataEntry)TENSORFLOW__PROFILER__XPLANE__STAT_METADATA_ENTRY__INIT;
        smd_e[s].key = s;
        smd_e[s].value = &smd[s];
        smd_p[s - 1] = &smd_e[s];
    }
    size_t li = 0, si = 0;
    Tensorflow__Profiler__XLine *line = NULL;
    for (size_t i = 0; i < n; i++) {
        const rec *r = &rs->r[i];
        const tfc_trace_event *e = &r->ev;
        int64_t abs_ns = (int64_t)(e->start_ns - mono0 + real0);
        if (!line || r->tid != rs->r[i - 1].tid) {
            line = &lines[li];
            *line = (Tensorflow__Profiler__XLine)TENSORFLOW__PROFILER__XLINE__INIT;
            line->id = line->display_id = r->tid;
            line->name = (char *)r->tname;
            line->timestamp_ns = abs_ns; /* events are sorted: the first starts first */
            line->events = &ev_p[i];
            line_p[li++] = line;
        }
        int64_t mid = 0;
        for (size_t k = 0; k < n_names && !mid; k++)
            if (!strcmp(md[k].name, e->name)) mid = md[k].id;
        if (!mid) {
            md[n_names] = (Tensorflow__Profiler__XEventMetadata)TENSORFLOW__PROFILER__XEVENT_METADATA__INIT;
            md[n_names].id = mid = (int64_t)n_names + 1;
            md[n_names].name = (char *)e->name;
            md_e[n_names] = (Tensorflow__Profiler__XPlane__EventMetadataEntry)TENSORFLOW__PROFILER__XPLANE__EVENT_METADATA_ENTRY__INIT;
            md_e[n_names].key = mid;
            md_e[n_names].value = &md[n_names];
            md_p[n_names] = &md_e[n_names];
            n_names++;
        }
        Tensorflow__Profiler__XEvent *x = &evs[i];
        *x = (Tensorflow__Profiler__XEvent)TENSORFLOW__PROFILER__XEVENT__INIT;
        x->metadata_id = mid;
        x->data_case = TENSORFLOW__PROFILER__XEVENT__DATA_OFFSET_PS;
        x->offset_ps = (abs_ns - line->timestamp_ns) * 1000;
        x->duration_ps = (int64_t)(e->end_ns - e->start_ns) * 1000;
        x->stats = &stat_p[si];
        if (e->detail[0]) {
            stats[si] = (Tensorflow__Profiler__XStat)TENSORFLOW__PROFILER__XSTAT__INIT;
            stats[si].metadata_id = STAT_SHAPES;
            stats[si].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_STR_VALUE;
            stats[si].str_value = (char *)e->detail;
            stat_p[si] = &stats[si];
            si++, x->n_stats++;
        }
        if (e->step >= 0) {
            stats[si] = (Tensorflow__Profiler__XStat)TENSORFLOW__PROFILER__XSTAT__INIT;
            stats[si].metadata_id = STAT_STEP_NUM;
            stats[si].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
            stats[si].int64_value = e->step;
            stat_p[si] = &stats[si];
            si++, x->n_stats++;
        }
        if (!strcmp(e->category, "step")) { /* a step marker is a root event ("_r" 1), as Keras's "train" */
            stats[si] = (Tensorflow__Profiler__XStat)TENSORFLOW__PROFILER__XSTAT__INIT;
            stats[si].metadata_id = STAT_ROOT;
            stats[si].value_case = TENSORFLOW__PROFILER__XSTAT__VALUE_INT64_VALUE;
            stats[si].int64_value = 1;
            stat_p[si] = &stats[si];
            si++, x->n_stats++;
        }
        ev_p[i] = x;
        line->n_events++;
        int64_t end_ps = x->offset_ps + x->duration_ps;
        if (end_ps > line->duration_ps) line->duration_ps = end_ps;
    }
    Tensorflow__Profiler__XPlane plane = TENSORFLOW__PROFILER__XPLANE__INIT;
    plane.id = 0;
    plane.name = "/host:CPU";
    plane.n_lines = n_lines;
    plane.lines = line_p;
    plane.n_event_metadata = n_names;
    plane.event_metadata = md_p;
    plane.n_stat_metadata = N_STATS - 1;
    plane.stat_metadata = smd_p;
    Tensorflow__Profiler__XPlane *pp = &plane;
    char *hosts[1] = {(char *)host};
    Tensorflow__Profiler__XSpace space = TENSORFLOW__PROFILER__XSPACE__INIT;
    space.n_planes = 1;
    space.planes = &pp;
    space.n_hostnames = 1;
    space.hostnames = hosts;
    size_t len = tensorflow__profiler__xspace__get_packed_size(&space);
    if (!(buf = tfc_malloc(len ? len : 1))) {
        ok = tfc_status_oom(st, "profiler XSpace", len);
        goto done;
    }
    tensorflow__profiler__xspace__pack(&space, buf);
    ok = write_file(path, buf, len, st);
done:
    tfc_free(buf);
    tfc_free(lines), tfc_free(line_p), tfc_free(evs), tfc_free(ev_p), tfc_free(stats), tfc_free(stat_p);
    tfc_free(md), tfc_free(md_e), tfc_free(md_p);
    return ok;
}

bool tfc_profiler_stop(bool save, tfc_status *st) {
    pthread_mutex_lock(&mu);
    if (!running) {
        pthread_mutex_unlock(&mu);
        return tfc_status_set(st, TFC_UNAVAILABLE, "Cannot export profiling results. No profiler is running.");
    }
    tfc_trace_session_end();
    running = false;
    bool ok = true;
    if (save) {
        recs rs = {0};
        tfc_trace_visit(collect, &rs);
        if (rs.oom) ok = tfc_status_oom(st, "profiler events", rs.cap * sizeof(rec));
        if (ok && rs.n) qsort(rs.r, rs.n, sizeof *rs.r, rec_cmp);
        char host[256] = "localhost", stamp[32], dir[1024], path[1400];
        if (gethostname(host, sizeof host - 1) != 0) snprintf(host, sizeof host, "localhost");
        time_t now = (time_t)(real0 / 1000000000ull);
        struct tm tm;
        localtime_r(&now, &tm);
        strftime(stamp, sizeof stamp, "%Y_%m_%d_%H_%M_%S", &tm);
        snprintf(dir, sizeof dir, "%s/plugins/profile/%s", session_logdir, stamp);
        ok = ok && tfc_make_dirs(dir, "profiler stop", st);
        if (ok) {
            snprintf(path, sizeof path, "%s/%s.xplane.pb", dir, host);
            ok = write_xplane(path, &rs, host, st);
        }
        if (ok) {
            snprintf(path, sizeof path, "%s/%s.trace.json", dir, host);
            ok = write_json(path, &rs, st);
        }
        if (ok) snprintf(last_run, sizeof last_run, "%s", dir);
        tfc_free(rs.r);
    }
    pthread_mutex_unlock(&mu);
    if (ok) tfc_status_clear(st);
    return ok;
}
