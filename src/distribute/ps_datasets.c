/* Per-worker iterators of ClusterCoordinator.create_per_worker_dataset, held by a worker process and found by
 * the handle the coordinator chose (parameter_server.h). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "distribute/ps_internal.h"

#define PS_MAX_ITERATORS 64

static struct {
    uint64_t id;
    tfc_iterator *it;
} g_its[PS_MAX_ITERATORS];
static int g_n_its;
static pthread_mutex_t g_it_mu = PTHREAD_MUTEX_INITIALIZER;

bool ps_iterator_make(const char *name, uint64_t id, int worker, tfc_status *st) {
    pthread_mutex_lock(&g_it_mu);
    for (int i = 0; i < g_n_its; i++)
        if (g_its[i].id == id) {
            pthread_mutex_unlock(&g_it_mu);
            return true;
        }
    pthread_mutex_unlock(&g_it_mu);
    void *user = NULL;
    tfc_remote_dataset_fn fn = ps_dataset_lookup(name, &user);
    if (!fn) return tfc_status_set(st, TFC_NOT_FOUND, "worker %d: no dataset function registered as '%s'", worker, name);
    tfc_dataset *ds = fn(worker, user, st);
    if (!ds) {
        if (st->code == TFC_OK) tfc_status_set(st, TFC_UNKNOWN, "dataset function '%s' returned no dataset", name);
        return false;
    }
    tfc_iterator *it = tfc_iterator_new(ds, st);
    tfc_dataset_unref(ds);
    if (!it) return false;
    pthread_mutex_lock(&g_it_mu);
    if (g_n_its == PS_MAX_ITERATORS) {
        pthread_mutex_unlock(&g_it_mu);
        tfc_iterator_free(it);
        return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "worker %d: more than %d per-worker iterators", worker,
                              PS_MAX_ITERATORS);
    }
    g_its[g_n_its].id = id;
    g_its[g_n_its++].it = it;
    pthread_mutex_unlock(&g_it_mu);
    return true;
}

bool tfc_per_worker_iterator_next(const tfc_tensor *handle, tfc_tensor **out, int max_out, tfc_status *st) {
    if (!handle || tfc_tensor_dtype(handle) != TFC_INT64 || tfc_tensor_num_elements(handle) != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "per-worker iterator: the handle must be an int64 scalar");
    const uint64_t id = *(const uint64_t *)tfc_tensor_data(handle);
    tfc_iterator *it = NULL;
    pthread_mutex_lock(&g_it_mu);
    for (int i = 0; i < g_n_its; i++)
        if (g_its[i].id == id) it = g_its[i].it;
    pthread_mutex_unlock(&g_it_mu);
    if (!it) return tfc_status_set(st, TFC_ABORTED, "per-worker iterator %llx is not on this worker (it restarted)",
                                   (unsigned long long)id);
    return tfc_iterator_next(it, out, max_out, st); /* functions run one at a time on a worker */
}

void ps_iterators_clear(void) {
    pthread_mutex_lock(&g_it_mu);
    for (int i = 0; i < g_n_its; i++) tfc_iterator_free(g_its[i].it);
    g_n_its = 0;
    pthread_mutex_unlock(&g_it_mu);
}
