/* The transport (transport.h) over nng's REQ/REP on TCP, and the fault-injecting wrapper. */
#define _POSIX_C_SOURCE 200809L
#include "distribute/transport.h"

#include <arpa/inet.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PS_MAX_MESSAGE ((size_t)1 << 31) /* largest message accepted */

typedef struct {
    ps_transport base;
    nng_socket sock;
    pthread_mutex_t mu; /* one request in flight per socket */
} nng_client;

static bool nng_fail(tfc_status *st, int rv, const char *what, const char *addr) {
    const tfc_code code = (rv == NNG_ENOMEM) ? TFC_RESOURCE_EXHAUSTED : TFC_UNAVAILABLE;
    return tfc_status_set(st, code, "%s %s: %s", what, addr, nng_strerror(rv));
}

static bool nng_client_call(ps_transport *t, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn,
                            tfc_status *st) {
    nng_client *c = (nng_client *)t;
    pthread_mutex_lock(&c->mu);
    int rv = nng_send(c->sock, (void *)req, n, 0);
    void *buf = NULL;
    size_t len = 0;
    if (rv == 0) rv = nng_recv(c->sock, &buf, &len, NNG_FLAG_ALLOC);
    pthread_mutex_unlock(&c->mu);
    if (rv) {
        if (rv == NNG_ETIMEDOUT)
            return tfc_status_set(st, TFC_UNAVAILABLE, "no reply from task %s within %.3g s", t->addr, t->timeout);
        return nng_fail(st, rv, "request to task", t->addr);
    }
    *rep = buf; /* nng's buffer, without a copy */
    *rn = len;
    return true;
}

static void nng_free_reply(uint8_t *rep, size_t rn) {
    if (rep) nng_free(rep, rn);
}

static void nng_client_free(ps_transport *t) {
    nng_client *c = (nng_client *)t;
    nng_close(c->sock);
    pthread_mutex_destroy(&c->mu);
    free(c);
}

static void url_of(const char *host_port, char *url, size_t size) { snprintf(url, size, "tcp://%s", host_port); }

ps_transport *ps_transport_nng(const char *host_port, double timeout, tfc_status *st) {
    nng_client *c = calloc(1, sizeof *c);
    if (!c) return tfc_status_oom(st, "ps transport", sizeof *c), NULL;
    snprintf(c->base.addr, sizeof c->base.addr, "%s", host_port);
    c->base.timeout = timeout > 0 ? timeout : 30;
    c->base.call = nng_client_call;
    c->base.free = nng_client_free;
    c->base.free_reply = nng_free_reply;
    pthread_mutex_init(&c->mu, NULL);
    int rv = nng_req0_open(&c->sock);
    if (rv) {
        pthread_mutex_destroy(&c->mu);
        free(c);
        return nng_fail(st, rv, "opening a client of", host_port), NULL;
    }
    const nng_duration ms = (nng_duration)(c->base.timeout * 1000);
    nng_socket_set_ms(c->sock, NNG_OPT_SENDTIMEO, ms);
    nng_socket_set_ms(c->sock, NNG_OPT_RECVTIMEO, ms);
    nng_socket_set_ms(c->sock, NNG_OPT_REQ_RESENDTIME, ms < 2000 ? ms : 2000);
    nng_socket_set_ms(c->sock, NNG_OPT_RECONNMINT, 20);
    nng_socket_set_ms(c->sock, NNG_OPT_RECONNMAXT, 250);
    nng_socket_set_size(c->sock, NNG_OPT_RECVMAXSZ, PS_MAX_MESSAGE);
    char url[160];
    url_of(host_port, url, sizeof url);
    rv = nng_dial(c->sock, url, NULL, NNG_FLAG_NONBLOCK);
    if (rv) {
        nng_client_free(&c->base);
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "cannot dial task address '%s': %s", host_port,
                              nng_strerror(rv)), NULL;
    }
    return &c->base;
}

void ps_transport_free(ps_transport *t) {
    if (t) t->free(t);
}

/* ---- fault injection ---------------------------------------------------------------------------------- */
typedef struct {
    ps_transport base;
    ps_transport *inner;
    uint32_t rng;
    double dup, delay;
    int max_delay_ms;
    pthread_mutex_t mu;
} faulty;

static double next_uniform(faulty *f) {
    pthread_mutex_lock(&f->mu);
    f->rng = f->rng * 1664525u + 1013904223u;
    const uint32_t r = f->rng >> 8;
    pthread_mutex_unlock(&f->mu);
    return r / (double)(1u << 24);
}

static bool faulty_call(ps_transport *t, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn, tfc_status *st) {
    faulty *f = (faulty *)t;
    if (next_uniform(f) < f->delay) {
        const long ms = (long)(next_uniform(f) * f->max_delay_ms);
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (next_uniform(f) < f->dup) {
        uint8_t *first = NULL;
        size_t fn = 0;
        if (f->inner->call(f->inner, req, n, &first, &fn, st)) f->inner->free_reply(first, fn);
        else tfc_status_clear(st); /* the lost first reply; the resend decides */
    }
    return f->inner->call(f->inner, req, n, rep, rn, st);
}

static void faulty_free(ps_transport *t) {
    faulty *f = (faulty *)t;
    ps_transport_free(f->inner);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

ps_transport *ps_transport_faulty(ps_transport *inner, uint32_t seed, double dup, double delay, int max_delay_ms) {
    faulty *f = calloc(1, sizeof *f);
    if (!f) {
        ps_transport_free(inner);
        return NULL;
    }
    f->base = *inner;
    f->base.call = faulty_call;
    f->base.free = faulty_free;
    f->inner = inner;
    f->rng = seed ? seed : 1;
    f->dup = dup;
    f->delay = delay;
    f->max_delay_ms = max_delay_ms;
    pthread_mutex_init(&f->mu, NULL);
    return &f->base;
}

/* ---- server ------------------------------------------------------------------------------------------- */
struct ps_listener {
    nng_socket sock;
    nng_listener lis;
    int port;
};

ps_listener *ps_listener_new(const char *host_port, tfc_status *st) {
    ps_listener *l = calloc(1, sizeof *l);
    if (!l) return tfc_status_oom(st, "ps listener", sizeof *l), NULL;
    int rv = nng_rep0_open(&l->sock);
    if (rv) {
        free(l);
        return nng_fail(st, rv, "opening a server on", host_port), NULL;
    }
    nng_socket_set_size(l->sock, NNG_OPT_RECVMAXSZ, PS_MAX_MESSAGE);
    nng_socket_set_ms(l->sock, NNG_OPT_RECVTIMEO, 100);
    nng_socket_set_ms(l->sock, NNG_OPT_SENDTIMEO, 1000);
    char url[160];
    url_of(host_port, url, sizeof url);
    rv = nng_listen(l->sock, url, &l->lis, 0);
    if (rv) {
        nng_close(l->sock);
        free(l);
        return nng_fail(st, rv, "cannot listen on", host_port), NULL;
    }
    nng_sockaddr sa;
    if (nng_listener_get_addr(l->lis, NNG_OPT_LOCADDR, &sa) == 0 && sa.s_family == NNG_AF_INET)
        l->port = ntohs(sa.s_in.sa_port);
    return l;
}

int ps_listener_port(const ps_listener *l) { return l->port; }

bool ps_listener_serve(ps_listener *l, ps_handler h, void *user, volatile int *stop, tfc_status *st) {
    while (!*stop) {
        void *buf = NULL;
        size_t len = 0;
        int rv = nng_recv(l->sock, &buf, &len, NNG_FLAG_ALLOC);
        if (rv == NNG_ETIMEDOUT) continue;
        if (rv) return nng_fail(st, rv, "receiving on", "server");
        uint8_t *rep = NULL;
        size_t rn = 0;
        h(user, buf, len, &rep, &rn);
        nng_free(buf, len);
        rv = nng_send(l->sock, rep, rn, 0);
        free(rep);
        (void)rv; /* a client that went away gets no reply; REQ resends when it reconnects */
    }
    return true;
}

void ps_listener_free(ps_listener *l) {
    if (!l) return;
    nng_close(l->sock);
    free(l);
}
