/* Request/reply over the transport, the function registry and message ids (ps_internal.h). */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "distribute/ps_internal.h"

bool ps_rpc(ps_transport *t, const ps_msg *req, ps_msg *rep, bool *transport_failed, tfc_status *st) {
    if (transport_failed) *transport_failed = false;
    memset(rep, 0, sizeof *rep);
    uint8_t *buf = NULL, *out = NULL;
    size_t n = 0, on = 0;
    if (!ps_msg_encode(req, &buf, &n, st)) return false;
    const bool ok = t->call(t, buf, n, &out, &on, st);
    free(buf);
    if (!ok) {
        if (transport_failed) *transport_failed = true;
        return false;
    }
    const bool dec = ps_msg_decode(out, on, rep, st);
    t->free_reply(out, on);
    if (!dec) return tfc_status_set(st, TFC_DATA_LOSS, "bad reply from task %s: %s", t->addr, st->msg);
    if (rep->code != TFC_OK) {
        tfc_status_set(st, (tfc_code)rep->code, "%s", rep->name);
        ps_msg_clear(rep);
        return false;
    }
    return true;
}

/* ---- registry: functions and dataset functions by name --------------------------------------------------- */
#define PS_MAX_FUNCTIONS 256
static struct {
    char name[128];
    int kind;                   /* 0 function, 1 dataset function */
    void (*fn)(void);
    void *user;
} g_fns[PS_MAX_FUNCTIONS];
static int g_n_fns;
static pthread_mutex_t g_fn_mu = PTHREAD_MUTEX_INITIALIZER;

static bool registry_add(const char *what, int kind, const char *name, void (*fn)(void), void *user, tfc_status *st) {
    if (!name || !*name || strlen(name) >= sizeof g_fns[0].name || !fn)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "register %s: name must be 1..127 bytes and fn non-NULL "
                                                        "(got '%s')", what, name ? name : "(null)");
    pthread_mutex_lock(&g_fn_mu);
    int i = 0;
    while (i < g_n_fns && (strcmp(g_fns[i].name, name) || g_fns[i].kind != kind)) i++;
    if (i == PS_MAX_FUNCTIONS) {
        pthread_mutex_unlock(&g_fn_mu);
        return tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "register %s '%s': more than %d registered", what, name,
                              PS_MAX_FUNCTIONS);
    }
    snprintf(g_fns[i].name, sizeof g_fns[i].name, "%s", name);
    g_fns[i].kind = kind;
    g_fns[i].fn = fn;
    g_fns[i].user = user;
    if (i == g_n_fns) g_n_fns++;
    pthread_mutex_unlock(&g_fn_mu);
    return true;
}

static void (*registry_find(int kind, const char *name, void **user))(void) {
    void (*fn)(void) = NULL;
    pthread_mutex_lock(&g_fn_mu);
    for (int i = 0; i < g_n_fns; i++)
        if (g_fns[i].kind == kind && !strcmp(g_fns[i].name, name)) {
            fn = g_fns[i].fn;
            *user = g_fns[i].user;
        }
    pthread_mutex_unlock(&g_fn_mu);
    return fn;
}

bool tfc_remote_function_register(const char *name, tfc_remote_function fn, void *user, tfc_status *st) {
    return registry_add("remote function", 0, name, (void (*)(void))fn, user, st);
}

bool tfc_remote_dataset_register(const char *name, tfc_remote_dataset_fn fn, void *user, tfc_status *st) {
    return registry_add("dataset function", 1, name, (void (*)(void))fn, user, st);
}

tfc_remote_function ps_function_lookup(const char *name, void **user) {
    return (tfc_remote_function)registry_find(0, name, user);
}

tfc_remote_dataset_fn ps_dataset_lookup(const char *name, void **user) {
    return (tfc_remote_dataset_fn)registry_find(1, name, user);
}

/* ---- message ids -------------------------------------------------------------------------------------- */
static _Thread_local uint64_t t_step;
static _Thread_local uint64_t t_seq;

static uint64_t mix64(uint64_t x) { /* splitmix64's finaliser */
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

void ps_step_begin(uint64_t step) {
    t_step = step;
    t_seq = 0;
}

void ps_step_end(void) { t_step = 0; }

uint64_t ps_next_message_id(void) {
    if (t_step) return mix64(t_step ^ mix64(++t_seq)) | 1;
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static uint64_t base, counter;
    pthread_mutex_lock(&mu);
    if (!base) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        base = mix64(((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20));
    }
    const uint64_t id = mix64(base + ++counter) | 1;
    pthread_mutex_unlock(&mu);
    return id;
}
