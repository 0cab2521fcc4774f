/* The profiler's event recorder (platform/trace.h): per-thread chunked buffers, written only by their thread,
 * published to the collector through an atomic count. */
#define _GNU_SOURCE
#include "platform/trace.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tfc/platform.h"

int tfc_trace_level;

#define CHUNK_EVENTS 512

typedef struct chunk {
    struct chunk *next;
    int n; /* published count (atomic) */
    tfc_trace_event ev[CHUNK_EVENTS];
} chunk;

typedef struct tbuf {
    struct tbuf *next; /* registration list */
    int64_t tid;
    char name[32];
    int gen; /* the session this buffer's events belong to */
    chunk *head, *tail;
} tbuf;

static pthread_mutex_t reg_mu = PTHREAD_MUTEX_INITIALIZER;
static tbuf *threads; /* every thread that recorded, newest first */
static int session_gen;
static _Thread_local tbuf *mine;
static _Thread_local char pending_name[32];

uint64_t tfc_trace_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tfc_trace_set_thread_name(const char *name) {
    snprintf(pending_name, sizeof pending_name, "%s", name ? name : "");
    if (mine) snprintf(mine->name, sizeof mine->name, "%s", pending_name);
}

static tbuf *my_buffer(void) {
    if (!mine) {
        tbuf *b = tfc_calloc(1, sizeof *b);
        if (!b) return NULL;
        b->tid = (int64_t)syscall(SYS_gettid);
        if (pending_name[0]) snprintf(b->name, sizeof b->name, "%s", pending_name);
        else if (b->tid == (int64_t)getpid()) snprintf(b->name, sizeof b->name, "main");
        else snprintf(b->name, sizeof b->name, "thread %lld", (long long)b->tid);
        b->gen = -1;
        pthread_mutex_lock(&reg_mu);
        b->next = threads;
        threads = b;
        pthread_mutex_unlock(&reg_mu);
        mine = b;
    }
    int gen = __atomic_load_n(&session_gen, __ATOMIC_ACQUIRE);
    if (mine->gen != gen) { /* a new session: this thread drops its old events itself */
        for (chunk *c = mine->head; c; c = c->next) __atomic_store_n(&c->n, 0, __ATOMIC_RELEASE);
        mine->tail = mine->head;
        mine->gen = gen;
    }
    return mine;
}

/* strlcpy (NULL: empty) */
static void copy_str(char *dst, size_t size, const char *src) {
    size_t n = src ? strnlen(src, size - 1) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = 0;
}

void tfc_trace_record(int min_level, const char *category, const char *name, const char *detail, uint64_t start_ns,
                      uint64_t end_ns, int64_t step) {
    if (__atomic_load_n(&tfc_trace_level, __ATOMIC_RELAXED) < min_level) return;
    tbuf *b = my_buffer();
    if (!b) return;
    chunk *c = b->tail;
    if (!c || c->n == CHUNK_EVENTS) {
        chunk *nc = c && c->next ? c->next : NULL;
        if (!nc) {
            if (!(nc = tfc_malloc(sizeof *nc))) return;
            nc->next = NULL;
            nc->n = 0;
            if (c) __atomic_store_n(&c->next, nc, __ATOMIC_RELEASE);
            else __atomic_store_n(&b->head, nc, __ATOMIC_RELEASE);
        }
        b->tail = c = nc;
    }
    tfc_trace_event *e = &c->ev[c->n];
    copy_str(e->name, sizeof e->name, name);
    copy_str(e->detail, sizeof e->detail, detail);
    e->category = category;
    e->start_ns = start_ns;
    e->end_ns = end_ns;
    e->step = step;
    __atomic_store_n(&c->n, c->n + 1, __ATOMIC_RELEASE);
}

void tfc_trace_session_begin(int level) {
    __atomic_add_fetch(&session_gen, 1, __ATOMIC_ACQ_REL);
    __atomic_store_n(&tfc_trace_level, level, __ATOMIC_RELEASE);
}

void tfc_trace_session_end(void) { __atomic_store_n(&tfc_trace_level, 0, __ATOMIC_RELEASE); }

void tfc_trace_visit(tfc_trace_visit_fn fn, void *user) {
    pthread_mutex_lock(&reg_mu);
    tbuf *list = threads;
    pthread_mutex_unlock(&reg_mu);
    int gen = __atomic_load_n(&session_gen, __ATOMIC_ACQUIRE);
    for (tbuf *b = list; b; b = b->next) {
        if (b->gen != gen) continue; /* recorded nothing in this session */
        for (chunk *c = __atomic_load_n(&b->head, __ATOMIC_ACQUIRE); c; c = __atomic_load_n(&c->next, __ATOMIC_ACQUIRE)) {
            int n = __atomic_load_n(&c->n, __ATOMIC_ACQUIRE);
            for (int i = 0; i < n; i++) fn(user, b->tid, b->name, &c->ev[i]);
            if (n < CHUNK_EVENTS) break;
        }
    }
}
