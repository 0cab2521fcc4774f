/* A fixed thread pool with a blocking parallel_for. One job runs at a time per pool (ops run one after
 * another in a context); workers pull chunk indices from an atomic counter so uneven chunks balance.
 * The caller never waits for workers to wake up: it runs chunks itself, then closes the job to new joiners
 * and waits only for workers that are inside a chunk. On a loaded machine a worker's wake-up can take
 * milliseconds, far longer than a small op.
 *
 * Hand-offs of small jobs (a few microseconds of work each, as in a batch-1 inference whose ops come every
 * few microseconds): a futex wake-up of a sleeping worker costs the caller a system call and the worker tens
 * of microseconds before it runs, so such jobs would all run on the caller. So a worker that finishes a job
 * (or finds it closed) polls the job generation for SPIN_NS (pause instructions first, then sched_yield, see
 * spin_until) before it sleeps on the condition variable; a job posted meanwhile is joined within about a
 * microsecond, and the caller skips the wake-up call when no worker sleeps. Likewise the caller, waiting
 * for workers still inside a chunk, polls up to SPIN_NS before sleeping. The polling is bounded per job, so
 * an idle pool sleeps. TFC_POOL_SPIN_US in the environment (read once; 0 turns polling off) sets it, for
 * comparisons (default 50 us). */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "tfc/platform.h"

#define SPIN_NS_DEFAULT 50000

typedef struct pool_job {
    tfc_range_fn fn;
    void *arg;
    int64_t n, chunk, n_chunks;
    _Atomic int64_t next_chunk;
    _Atomic int refs; /* workers inside the job (changed under the pool mutex; read by the spinning caller) */
} pool_job;

struct tfc_threadpool {
    int n_workers; /* threads besides the caller */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    pthread_mutex_t job_mu; /* serialises parallel_for calls from different threads */
    _Atomic uint64_t generation; /* written under mu; polled without it by spinning workers */
    int sleepers;                /* workers waiting on work_cv (under mu) */
    _Atomic bool stop; /* written under mu; also read by spinning workers */
    pool_job *job; /* open job (on the caller's stack), NULL when closed */
};

static _Thread_local int in_pool_worker;

/* How long workers and callers poll before sleeping, in nanoseconds (0: no spinning). */
static int64_t spin_ns(void) {
    static _Atomic int64_t v = -1;
    int64_t s = atomic_load_explicit(&v, memory_order_relaxed);
    if (s < 0) {
        const char *e = getenv("TFC_POOL_SPIN_US");
        s = e && *e ? (int64_t)atoi(e) * 1000 : SPIN_NS_DEFAULT;
        if (s < 0) s = 0;
        atomic_store_explicit(&v, s, memory_order_relaxed);
    }
    return s;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Polls until done(arg) or `ns` nanoseconds passed; returns done(arg). The first polls are pause
 * instructions (a job posted within a microsecond or two is seen at once); after that each poll yields the
 * CPU (sched_yield), so that on a machine with more runnable threads than cores a spinning thread gives its
 * core to them instead of taking it from the threads doing work (this process's included). */
static bool spin_until(bool (*done)(const void *), const void *arg, int64_t ns) {
    if (ns <= 0) return done(arg);
    int64_t end = 0;
    for (unsigned i = 0;; i++) {
        if (done(arg)) return true;
        if (i < 256) {
            cpu_relax();
            continue;
        }
        const int64_t t = now_ns();
        if (!end) end = t + ns;
        else if (t >= end) return done(arg);
        sched_yield();
    }
}

int tfc_num_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

static void run_chunks(pool_job *j) {
    for (;;) {
        int64_t c = atomic_fetch_add(&j->next_chunk, 1);
        if (c >= j->n_chunks) break;
        int64_t b = c * j->chunk, e = b + j->chunk;
        if (e > j->n) e = j->n;
        j->fn(j->arg, b, e);
    }
}

typedef struct {
    const tfc_threadpool *p;
    uint64_t seen;
} gen_wait;

static bool new_generation(const void *arg) {
    const gen_wait *w = arg;
    return atomic_load_explicit(&w->p->generation, memory_order_acquire) != w->seen || w->p->stop;
}

static void *worker(void *arg) {
    tfc_threadpool *p = arg;
    in_pool_worker = 1;
    uint64_t seen = 0;
    const int64_t spin = spin_ns();
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (!p->stop && (!p->job || p->generation == seen) && spin > 0) {
            /* poll for the next job a while before sleeping */
            pthread_mutex_unlock(&p->mu);
            spin_until(new_generation, &(gen_wait){p, seen}, spin);
            pthread_mutex_lock(&p->mu);
        }
        while (!p->stop && (!p->job || p->generation == seen)) {
            if (p->generation != seen) { /* a job came and closed meanwhile: poll again for the next */
                seen = p->generation;
                break;
            }
            p->sleepers++;
            pthread_cond_wait(&p->work_cv, &p->mu);
            p->sleepers--;
        }
        if (p->stop) break;
        if (!p->job || p->generation == seen) continue;
        seen = p->generation;
        pool_job *j = p->job;
        atomic_fetch_add(&j->refs, 1);
        pthread_mutex_unlock(&p->mu);
        run_chunks(j);
        pthread_mutex_lock(&p->mu);
        /* j may be gone once refs is 0 (a spinning caller returns): the last use */
        if (atomic_fetch_sub(&j->refs, 1) == 1) pthread_cond_signal(&p->done_cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

tfc_threadpool *tfc_threadpool_new(int num_threads) {
    if (num_threads <= 0) num_threads = tfc_num_cores();
    tfc_threadpool *p = tfc_calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n_workers = num_threads - 1;
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->job_mu, NULL);
    pthread_cond_init(&p->work_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    if (p->n_workers > 0) {
        p->threads = tfc_calloc((size_t)p->n_workers, sizeof *p->threads);
        if (!p->threads) {
            tfc_free(p);
            return NULL;
        }
        for (int i = 0; i < p->n_workers; i++) {
            if (pthread_create(&p->threads[i], NULL, worker, p) != 0) {
                p->n_workers = i; /* run with fewer threads */
                break;
            }
        }
    }
    return p;
}

void tfc_threadpool_free(tfc_threadpool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->n_workers; i++) pthread_join(p->threads[i], NULL);
    tfc_free(p->threads);
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->job_mu);
    pthread_cond_destroy(&p->work_cv);
    pthread_cond_destroy(&p->done_cv);
    tfc_free(p);
}

int tfc_threadpool_size(const tfc_threadpool *p) { return p ? p->n_workers + 1 : 1; }

static bool refs_zero(const void *arg) { return atomic_load(&((const pool_job *)arg)->refs) == 0; }

void tfc_parallel_for(tfc_threadpool *p, int64_t n, int64_t cost_per_unit, tfc_range_fn fn, void *arg) {
    if (n <= 0) return;
    /* Below ~50k cost units the wake-up latency of workers costs more than it saves. */
    double total = (double)n * (double)(cost_per_unit > 0 ? cost_per_unit : 1);
    if (!p || p->n_workers == 0 || in_pool_worker || total < 50000.0 || n == 1) {
        fn(arg, 0, n);
        return;
    }
    int threads = p->n_workers + 1;
    int64_t max_chunks = (int64_t)threads * 4;
    /* total may exceed int64 (n * cost): clamp in double before converting */
    int64_t by_cost = total / 25000.0 >= (double)max_chunks ? max_chunks : (int64_t)(total / 25000.0);
    if (by_cost < threads) by_cost = threads;
    int64_t n_chunks = by_cost < max_chunks ? by_cost : max_chunks;
    if (n_chunks > n) n_chunks = n;
    int64_t chunk = (n + n_chunks - 1) / n_chunks;
    n_chunks = (n + chunk - 1) / chunk;

    pool_job j = {.fn = fn, .arg = arg, .n = n, .chunk = chunk, .n_chunks = n_chunks};
    atomic_init(&j.next_chunk, 0);
    atomic_init(&j.refs, 0);
    pthread_mutex_lock(&p->job_mu);
    pthread_mutex_lock(&p->mu);
    p->job = &j;
    atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
    if (p->sleepers) pthread_cond_broadcast(&p->work_cv); /* (spinning workers see the generation) */
    pthread_mutex_unlock(&p->mu);
    in_pool_worker = 1;
    run_chunks(&j);
    in_pool_worker = 0;
    pthread_mutex_lock(&p->mu);
    p->job = NULL; /* workers that wake from now on find nothing to join */
    if (atomic_load(&j.refs) > 0) {
        /* workers still inside a chunk: poll a while (they decrement refs under mu, and touch j no more
         * after that), then sleep until the last one signals */
        pthread_mutex_unlock(&p->mu);
        const bool done = spin_until(refs_zero, &j, spin_ns());
        pthread_mutex_lock(&p->mu);
        while (!done && atomic_load(&j.refs) > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    }
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->job_mu);
}
