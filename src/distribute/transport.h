/* Internal: the request/reply transport between parameter-server tasks (ps_server.c, ps_strategy.c,
 * coordinator.c). One small interface so that the wire library (nng here) and test wrappers that inject faults
 * sit behind it.
 *
 * WHY NNG. Debian's libnng is one C library without a code generator; its REQ/REP protocol reconnects after a
 * peer restarts and resends requests that got no reply. Resending means a request can arrive twice, so every
 * handler is idempotent: state-changing requests carry a message id and servers answer a repeated id from a
 * cache of replies (ps_server.c). gRPC core would need the C++ runtime and protobuf service stubs.
 *
 * TIMEOUTS. Every call waits at most the transport's timeout; a peer that is not listening, has died or does
 * not answer in time gives UNAVAILABLE naming its address. */
#ifndef TFC_TRANSPORT_H
#define TFC_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tfc/status.h"

typedef struct ps_transport ps_transport;
struct ps_transport {
    /* Sends req (n bytes) and returns the peer's reply in a new buffer, released with free_reply. */
    bool (*call)(ps_transport *t, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn, tfc_status *st);
    void (*free_reply)(uint8_t *rep, size_t rn);
    void (*free)(ps_transport *t);
    char addr[128];
    double timeout;     /* seconds */
};

/* A client of the task at "host:port" (the connection is made in the background and remade after failures). */
ps_transport *ps_transport_nng(const char *host_port, double timeout, tfc_status *st);
/* Wraps inner (taking ownership): each call is, with probability dup, sent twice (the second reply is returned,
 * as when a reply was lost and REQ resent the request) and, with probability delay, sent after a pause of up
 * to max_delay_ms. Deterministic for a seed. */
ps_transport *ps_transport_faulty(ps_transport *inner, uint32_t seed, double dup, double delay, int max_delay_ms);
void ps_transport_free(ps_transport *t); /* NULL-safe */

/* The serving side: replies to each request with the handler's answer, one request at a time. */
typedef struct ps_listener ps_listener;
/* Returns a malloc'd reply (never fails: errors travel inside the reply). */
typedef void (*ps_handler)(void *user, const uint8_t *req, size_t n, uint8_t **rep, size_t *rn);
/* Listens on "host:port" (port 0: a free port, see ps_listener_port). UNAVAILABLE when the address is taken. */
ps_listener *ps_listener_new(const char *host_port, tfc_status *st);
int ps_listener_port(const ps_listener *l);
/* Serves until *stop becomes non-zero (checked at least every 100 ms). */
bool ps_listener_serve(ps_listener *l, ps_handler h, void *user, volatile int *stop, tfc_status *st);
void ps_listener_free(ps_listener *l); /* NULL-safe */

#endif
