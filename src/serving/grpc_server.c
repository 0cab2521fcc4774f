/* The gRPC transport of `tfc serve`: gRPC core's completion-queue server, unary calls only.
 *
 * Each accepted call is a small state machine driven by completion-queue events, on whichever worker thread
 * pops the event:
 *   REQUESTED  grpc_server_request_call matched an incoming call: read its one request message;
 *   READ       the message (or its absence) arrived: answer it on this thread (the model runs here), then send
 *              initial metadata, the response and the status, and wait for the call to close;
 *   DONE       the call is over on the server side: free it.
 * Calls of every method arrive through the generic grpc_server_request_call and are dispatched by path, so an
 * unknown method gets an UNIMPLEMENTED status rather than waiting for a handler that never comes.
 *
 * Memory is bounded: gRPC core refuses request messages over max_message_bytes (RESOURCE_EXHAUSTED) before
 * they reach us, decoded tensors are bounded by the same number, and the server accepts at most
 * MAX_ACTIVE_PER_THREAD calls per worker at a time (further calls wait inside gRPC core until one finishes). */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "serving/grpc_server.h"
#include "tfc/platform.h"

#define DEFAULT_THREADS 4
#define MAX_ACTIVE_PER_THREAD 16

enum { CALL_REQUESTED, CALL_READ, CALL_DONE };

typedef struct grpc_srv_call {
    tfc_grpc_server *srv;
    int state;
    bool accepted; /* counted in srv->active */
    grpc_call *call;
    grpc_call_details details;
    grpc_metadata_array request_md;
    grpc_byte_buffer *request, *response;
    grpc_slice status_details;
    bool has_status_details;
    int cancelled;
} grpc_srv_call;

struct tfc_grpc_server {
    tfc_srv_manager *manager;
    grpc_server *server;
    grpc_completion_queue *cq;
    pthread_t *threads;
    int n_threads;
    int port;
    size_t max_message;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stopping, shutdown_done;
    int pending; /* grpc_server_request_call posted and not yet matched */
    int active;  /* accepted calls not yet freed */
    int max_active;
    char shutdown_tag; /* its address is the tag of grpc_server_shutdown_and_notify */
};

static void call_free(grpc_srv_call *c) {
    tfc_grpc_server *s = c->srv;
    if (c->call) grpc_call_unref(c->call);
    grpc_call_details_destroy(&c->details);
    grpc_metadata_array_destroy(&c->request_md);
    if (c->request) grpc_byte_buffer_destroy(c->request);
    if (c->response) grpc_byte_buffer_destroy(c->response);
    if (c->has_status_details) grpc_slice_unref(c->status_details);
    bool accepted = c->accepted;
    tfc_free(c);
    if (accepted) {
        pthread_mutex_lock(&s->mu);
        s->active--;
        pthread_mutex_unlock(&s->mu);
    }
}

/* Posts grpc_server_request_call until `threads` requests are pending, within the cap of accepted calls. */
static void refill(tfc_grpc_server *s) {
    pthread_mutex_lock(&s->mu);
    while (!s->stopping && s->pending < s->n_threads && s->pending + s->active < s->max_active) {
        grpc_srv_call *c = tfc_calloc(1, sizeof *c);
        if (!c) break; /* out of memory: the next finished call tries again */
        c->srv = s;
        c->state = CALL_REQUESTED;
        grpc_call_details_init(&c->details);
        grpc_metadata_array_init(&c->request_md);
        if (grpc_server_request_call(s->server, &c->call, &c->details, &c->request_md, s->cq, s->cq, c) !=
            GRPC_CALL_OK) {
            c->call = NULL;
            grpc_call_details_destroy(&c->details);
            grpc_metadata_array_destroy(&c->request_md);
            tfc_free(c);
            break;
        }
        s->pending++;
    }
    pthread_mutex_unlock(&s->mu);
}

/* Answers c's request and starts the batch that sends the answer and waits for the call to close. */
static void answer(grpc_srv_call *c) {
    tfc_grpc_server *s = c->srv;
    tfc_status st = TFC_STATUS_INIT;
    uint8_t *out = NULL;
    size_t out_len = 0;
    const char *method = (const char *)GRPC_SLICE_START_PTR(c->details.method);
    size_t method_len = GRPC_SLICE_LENGTH(c->details.method);
    if (!c->request) {
        tfc_status_set(&st, TFC_INTERNAL, "%.*s: the call carried no request message", (int)method_len, method);
    } else {
        grpc_byte_buffer_reader reader;
        if (!grpc_byte_buffer_reader_init(&reader, c->request)) {
            tfc_status_set(&st, TFC_INTERNAL, "%.*s: the request message could not be decompressed", (int)method_len,
                           method);
        } else {
            grpc_slice msg = grpc_byte_buffer_reader_readall(&reader);
            grpc_byte_buffer_reader_destroy(&reader);
            /* the client's deadline bounds the model run, as TensorFlow Serving's enforce_session_run_timeout */
            gpr_timespec deadline = gpr_convert_clock_type(c->details.deadline, GPR_CLOCK_MONOTONIC);
            if (gpr_time_cmp(deadline, gpr_inf_future(GPR_CLOCK_MONOTONIC)) < 0) {
                int64_t ms = gpr_time_to_millis(gpr_time_sub(deadline, gpr_now(GPR_CLOCK_MONOTONIC)));
                tfc_srv_set_deadline(ms > 0 ? ms : 1);
            }
            tfc_grpc_service_call(s->manager, method, method_len, GRPC_SLICE_START_PTR(msg), GRPC_SLICE_LENGTH(msg),
                                  s->max_message, &out, &out_len, &st);
            tfc_srv_set_deadline(0);
            grpc_slice_unref(msg);
        }
    }
    grpc_op ops[4];
    memset(ops, 0, sizeof ops);
    size_t n = 0;
    ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
    if (st.code == TFC_OK) {
        grpc_slice body = out_len ? grpc_slice_new(out, out_len, tfc_free) : grpc_empty_slice();
        if (!out_len) tfc_free(out);
        out = NULL;
        c->response = grpc_raw_byte_buffer_create(&body, 1);
        grpc_slice_unref(body);
        ops[n].op = GRPC_OP_SEND_MESSAGE;
        ops[n++].data.send_message.send_message = c->response;
    }
    c->status_details = grpc_slice_from_copied_string(st.code == TFC_OK ? "" : st.msg);
    c->has_status_details = true;
    ops[n].op = GRPC_OP_SEND_STATUS_FROM_SERVER;
    ops[n].data.send_status_from_server.status = (grpc_status_code)st.code; /* gRPC's numbers are TensorFlow's */
    ops[n++].data.send_status_from_server.status_details = &c->status_details;
    ops[n].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
    ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
    c->state = CALL_DONE;
    if (grpc_call_start_batch(c->call, ops, n, c, NULL) != GRPC_CALL_OK) {
        call_free(c);
        refill(s);
    }
}

static void step(grpc_srv_call *c, bool success) {
    tfc_grpc_server *s = c->srv;
    switch (c->state) {
    case CALL_REQUESTED: {
        pthread_mutex_lock(&s->mu);
        s->pending--;
        if (success) s->active++;
        pthread_mutex_unlock(&s->mu);
        if (!success) { /* the server is shutting down */
            if (c->call) grpc_call_unref(c->call);
            c->call = NULL;
            call_free(c);
            return;
        }
        c->accepted = true;
        refill(s);
        grpc_op op;
        memset(&op, 0, sizeof op);
        op.op = GRPC_OP_RECV_MESSAGE;
        op.data.recv_message.recv_message = &c->request;
        c->state = CALL_READ;
        if (grpc_call_start_batch(c->call, &op, 1, c, NULL) != GRPC_CALL_OK) {
            call_free(c);
            refill(s);
        }
        return;
    }
    case CALL_READ:
        if (!success) { /* the client went away before its message arrived */
            call_free(c);
            refill(s);
            return;
        }
        answer(c);
        return;
    default: /* CALL_DONE */
        call_free(c);
        refill(s);
        return;
    }
}

static void *worker(void *arg) {
    tfc_grpc_server *s = arg;
    for (;;) {
        grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
        if (ev.type == GRPC_QUEUE_SHUTDOWN) return NULL;
        if (ev.type != GRPC_OP_COMPLETE) continue;
        if (ev.tag == &s->shutdown_tag) {
            pthread_mutex_lock(&s->mu);
            s->shutdown_done = true;
            pthread_cond_broadcast(&s->cv);
            pthread_mutex_unlock(&s->mu);
            continue;
        }
        step(ev.tag, ev.success != 0);
    }
}

/* Frees what every server holds once gRPC core's objects are gone. */
static void server_free(tfc_grpc_server *s) {
    pthread_cond_destroy(&s->cv);
    pthread_mutex_destroy(&s->mu);
    tfc_free(s->threads);
    tfc_free(s);
    grpc_shutdown();
}

/* Shuts down and destroys a server whose worker threads never started (start failed half way). */
static void destroy_unstarted(tfc_grpc_server *s) {
    if (s->server) {
        grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
        for (;;) {
            grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
            if (ev.type == GRPC_OP_COMPLETE && ev.tag == &s->shutdown_tag) break;
            if (ev.type == GRPC_OP_COMPLETE) step(ev.tag, false);
            if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
        }
        grpc_server_destroy(s->server);
    }
    if (s->cq) {
        grpc_completion_queue_shutdown(s->cq);
        while (grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN) {
        }
        grpc_completion_queue_destroy(s->cq);
    }
    server_free(s);
}

tfc_grpc_server *tfc_grpc_server_start(tfc_srv_manager *m, const tfc_grpc_opts *opts, tfc_status *st) {
    tfc_grpc_opts o = opts ? *opts : (tfc_grpc_opts){0};
    if (o.port < 0 || o.port > 65535)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "gRPC server: port %d is outside 0..65535", o.port), NULL;
    if (o.threads < 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "gRPC server: %d threads", o.threads), NULL;
    const char *host = o.host && *o.host ? o.host : "0.0.0.0";
    tfc_grpc_server *s = tfc_calloc(1, sizeof *s);
    if (!s) return tfc_status_oom(st, "gRPC server", sizeof *s), NULL;
    s->manager = m;
    s->n_threads = o.threads ? o.threads : DEFAULT_THREADS;
    s->max_active = s->n_threads * MAX_ACTIVE_PER_THREAD;
    s->max_message = o.max_message_bytes ? o.max_message_bytes : TFC_GRPC_DEFAULT_MAX_MESSAGE;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    grpc_init();
    if (!(s->threads = tfc_calloc((size_t)s->n_threads, sizeof *s->threads))) {
        tfc_status_oom(st, "gRPC server threads", (size_t)s->n_threads * sizeof *s->threads);
        server_free(s);
        return NULL;
    }
    grpc_arg args[3];
    memset(args, 0, sizeof args);
    args[0].type = GRPC_ARG_INTEGER;
    args[0].key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
    args[0].value.integer = s->max_message > INT_MAX ? INT_MAX : (int)s->max_message;
    args[1].type = GRPC_ARG_INTEGER;
    args[1].key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
    args[1].value.integer = -1; /* responses are as large as the model makes them */
    args[2].type = GRPC_ARG_INTEGER;
    args[2].key = (char *)GRPC_ARG_ALLOW_REUSEPORT;
    args[2].value.integer = 0; /* a port already in use is an error, not a second server sharing it */
    grpc_channel_args ca = {.num_args = 3, .args = args};
    s->cq = grpc_completion_queue_create_for_next(NULL);
    s->server = grpc_server_create(&ca, NULL);
    grpc_server_register_completion_queue(s->server, s->cq, NULL);
    char addr[320];
    snprintf(addr, sizeof addr, strchr(host, ':') ? "[%s]:%d" : "%s:%d", host, o.port);
    grpc_server_credentials *creds = grpc_insecure_server_credentials_create();
    s->port = grpc_server_add_http2_port(s->server, addr, creds);
    grpc_server_credentials_release(creds);
    if (s->port <= 0) {
        tfc_status_set(st, TFC_UNAVAILABLE, "gRPC server: cannot listen on %s (address in use or not available)", addr);
        destroy_unstarted(s);
        return NULL;
    }
    grpc_server_start(s->server);
    for (int i = 0; i < s->n_threads; i++) {
        int err = pthread_create(&s->threads[i], NULL, worker, s);
        if (err) {
            tfc_status_set(st, TFC_RESOURCE_EXHAUSTED, "gRPC server: cannot start worker thread %d: %s", i,
                           strerror(err));
            s->n_threads = i;
            tfc_grpc_server_stop(s, 0);
            return NULL;
        }
    }
    refill(s);
    return s;
}

int tfc_grpc_server_port(const tfc_grpc_server *s) { return s->port; }

void tfc_grpc_server_stop(tfc_grpc_server *s, double grace_seconds) {
    if (!s) return;
    pthread_mutex_lock(&s->mu);
    s->stopping = true;
    pthread_mutex_unlock(&s->mu);
    grpc_server_shutdown_and_notify(s->server, s->cq, &s->shutdown_tag);
    if (s->n_threads == 0) { /* no worker to deliver the tag: wait for it here */
        for (;;) {
            grpc_event ev = grpc_completion_queue_next(s->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
            if (ev.type != GRPC_OP_COMPLETE) break;
            if (ev.tag == &s->shutdown_tag) break;
            step(ev.tag, false);
        }
    } else {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        double whole = grace_seconds > 0 ? (double)(time_t)grace_seconds : 0;
        until.tv_sec += (time_t)whole;
        until.tv_nsec += grace_seconds > 0 ? (long)((grace_seconds - whole) * 1e9) : 0;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&s->mu);
        while (!s->shutdown_done && pthread_cond_timedwait(&s->cv, &s->mu, &until) != ETIMEDOUT) {
        }
        bool done = s->shutdown_done;
        pthread_mutex_unlock(&s->mu);
        if (!done) grpc_server_cancel_all_calls(s->server); /* in-flight calls past the grace period */
        pthread_mutex_lock(&s->mu);
        while (!s->shutdown_done) pthread_cond_wait(&s->cv, &s->mu);
        pthread_mutex_unlock(&s->mu);
    }
    grpc_completion_queue_shutdown(s->cq);
    for (int i = 0; i < s->n_threads; i++) pthread_join(s->threads[i], NULL);
    grpc_server_destroy(s->server);
    grpc_completion_queue_destroy(s->cq);
    server_free(s);
}
