/* A fixed thread pool with a blocking parallel_for. One job runs at a time per pool (ops run one after
 * another in a context); workers pull chunk indices from an atomic counter so uneven chunks balance.
 * The caller never waits for workers to wake up: it runs chunks itself, then closes the job to new joiners
 * and waits only for workers that are inside a chunk. On a loaded machine a worker's wake-up can take
 * milliseconds, far longer than a small op. */
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "tfc/platform.h"

typedef struct pool_job {
    tfc_range_fn fn;
    void *arg;
    int64_t n, chunk, n_chunks;
    _Atomic int64_t next_chunk;
    int refs; /* workers inside the job (under the pool mutex) */
} pool_job;

struct tfc_threadpool {
    int n_workers; /* threads besides the caller */
    pthread_t *threads;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    pthread_mutex_t job_mu; /* serialises parallel_for calls from different threads */
    uint64_t generation;
    bool stop;
    pool_job *job; /* open job (on the caller's stack), NULL when closed */
};

static _Thread_local int in_pool_worker;

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

static void *worker(void *arg) {
    tfc_threadpool *p = arg;
    in_pool_worker = 1;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && (!p->job || p->generation == seen)) pthread_cond_wait(&p->work_cv, &p->mu);
        if (p->stop) break;
        seen = p->generation;
        pool_job *j = p->job;
        j->refs++;
        pthread_mutex_unlock(&p->mu);
        run_chunks(j);
        pthread_mutex_lock(&p->mu);
        if (--j->refs == 0) pthread_cond_signal(&p->done_cv);
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

    pool_job j = {.fn = fn, .arg = arg, .n = n, .chunk = chunk, .n_chunks = n_chunks, .refs = 0};
    atomic_init(&j.next_chunk, 0);
    pthread_mutex_lock(&p->job_mu);
    pthread_mutex_lock(&p->mu);
    p->job = &j;
    p->generation++;
    pthread_cond_broadcast(&p->work_cv);
    pthread_mutex_unlock(&p->mu);
    in_pool_worker = 1;
    run_chunks(&j);
    in_pool_worker = 0;
    pthread_mutex_lock(&p->mu);
    p->job = NULL; /* workers that wake from now on find nothing to join */
    while (j.refs > 0) pthread_cond_wait(&p->done_cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    pthread_mutex_unlock(&p->job_mu);
}
