/* The embedded server (include/tfc/serving.h): the model manager plus the REST API over libmicrohttpd. Requests
 * run on libmicrohttpd's thread pool (--rest_api_num_threads); a body is gathered up to max_request_bytes, then
 * handed to srv_rest_handle. Stopping quiesces the listener, waits for in-flight requests, then frees. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "serving/grpc_server.h"
#include "serving/metrics.h"
#include "serving/rest.h"
#include "tfc/platform.h"
#include "tfc/serving.h"

#define DEFAULT_MAX_REQUEST (64u << 20)
/* How long in-flight gRPC calls may run after a stop begins before they are cancelled. */
#define GRPC_GRACE_SECONDS 30.0

struct tfc_model_server {
    tfc_srv_manager *mgr;
    struct MHD_Daemon *d;
    int rest_port;
    tfc_grpc_server *grpc; /* the gRPC front end on the same manager (grpc_server.h); NULL with port -1 */
    size_t max_request;
    int64_t timeout_ms;    /* --rest_api_timeout_in_ms: each request's deadline (RunOptions.timeout_in_ms) */
    srv_metrics *metrics;
    char *metrics_path;
    pthread_mutex_t mu;
    pthread_cond_t idle;
    int in_flight;
    size_t body_bytes, max_body_bytes; /* request bodies held by all connections, and their bound (under mu) */
};

/* Per-request state: the body gathered so far. */
typedef struct request {
    srv_buf body;
    size_t counted;   /* bytes of body counted in the server's body_bytes */
    bool too_big, overloaded;
    struct timespec start;
} request;

static double seconds_since(const struct timespec *t0) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static enum MHD_Result reply(struct MHD_Connection *c, int status, const char *body, size_t len, const char *type) {
    struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    enum MHD_Result ok = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ok;
}

static enum MHD_Result reply_error(struct MHD_Connection *c, int status, const char *msg) {
    srv_buf b = {0};
    srv_buf_puts(&b, "{ \"error\": ");
    srv_buf_json_string(&b, msg, strlen(msg));
    srv_buf_puts(&b, " }");
    enum MHD_Result ok = b.oom ? MHD_NO : reply(c, status, b.p, b.len, "application/json");
    srv_buf_free(&b);
    return ok;
}

/* The bound on the request bodies held at once by all connections. */
#define MAX_BODY_BYTES_TOTAL ((size_t)1 << 30)

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                               const char *version, const char *upload, size_t *upload_size, void **con_cls) {
    tfc_model_server *s = cls;
    request *rq = *con_cls;
    if (!rq) {
        if (!(rq = tfc_calloc(1, sizeof *rq))) return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &rq->start);
        *con_cls = rq;
        pthread_mutex_lock(&s->mu);
        s->in_flight++;
        pthread_mutex_unlock(&s->mu);
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (cl && strtoull(cl, NULL, 10) > s->max_request) rq->too_big = true;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!rq->too_big && rq->body.len + *upload_size > s->max_request) rq->too_big = true;
        if (!rq->too_big && !rq->overloaded) {
            /* all connections together hold at most max_body_bytes of bodies: many large uploads at once are
             * refused rather than growing memory without bound */
            pthread_mutex_lock(&s->mu);
            if (s->body_bytes + *upload_size > s->max_body_bytes) rq->overloaded = true;
            else s->body_bytes += *upload_size, rq->counted += *upload_size;
            pthread_mutex_unlock(&s->mu);
            if (!rq->overloaded) srv_buf_put(&rq->body, upload, *upload_size);
        }
        *upload_size = 0;
        return MHD_YES;
    }
    if (rq->too_big || rq->body.oom) {
        char msg[160];
        snprintf(msg, sizeof msg, "Request body too large: the limit is %zu bytes", s->max_request);
        srv_metrics_request(s->metrics, "", "", TFC_RESOURCE_EXHAUSTED, seconds_since(&rq->start));
        return reply_error(c, 413, msg);
    }
    if (rq->overloaded) {
        srv_metrics_request(s->metrics, "", "", TFC_UNAVAILABLE, seconds_since(&rq->start));
        return reply_error(c, 503, "The server holds too many request bodies at once; retry later");
    }
    if (s->metrics && !strcmp(method, "GET") && !strcmp(url, s->metrics_path)) {
        srv_buf b = {0};
        srv_metrics_prometheus(s->metrics, &b);
        enum MHD_Result ok = b.oom ? MHD_NO : reply(c, 200, b.p, b.len, "text/plain; version=0.0.4");
        srv_buf_free(&b);
        return ok;
    }
    srv_rest_response r;
    tfc_srv_set_deadline(s->timeout_ms);
    srv_rest_handle(s->mgr, method, url, rq->body.p, rq->body.len, &r);
    tfc_srv_set_deadline(0);
    srv_metrics_request(s->metrics, r.model, r.api, r.code, seconds_since(&rq->start));
    enum MHD_Result ok = reply(c, r.http_status, r.body.p ? r.body.p : "", r.body.len, "application/json");
    srv_rest_response_clear(&r);
    return ok;
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode code) {
    tfc_model_server *s = cls;
    request *rq = *con_cls;
    if (!rq) return;
    const size_t counted = rq->counted;
    srv_buf_free(&rq->body);
    tfc_free(rq);
    *con_cls = NULL;
    pthread_mutex_lock(&s->mu);
    s->body_bytes -= counted;
    if (--s->in_flight == 0) pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
}

static char *read_text_file(const char *path, size_t *len, tfc_status *st) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        tfc_status_set(st, TFC_NOT_FOUND, "cannot open %s", path);
        return NULL;
    }
    char *buf = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n + 4096 > cap) {
            if (cap > (64u << 20)) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: larger than 64 MiB", path);
                break;
            }
            char *g = tfc_realloc(buf, cap = cap ? 2 * cap : 8192);
            if (!g) {
                tfc_status_oom(st, path, cap);
                break;
            }
            buf = g;
        }
        size_t k = fread(buf + n, 1, cap - n - 1, f);
        n += k;
        if (k == 0) {
            fclose(f);
            buf[n] = 0;
            *len = n;
            return buf;
        }
    }
    fclose(f);
    tfc_free(buf);
    return NULL;
}

static void on_batch(void *user, const char *model, int64_t size, int64_t padded) {
    srv_metrics_batch(((tfc_model_server *)user)->metrics, model, size, padded);
}

static bool load_config(const tfc_model_server_opts *o, tfc_srv_config *cfg, tfc_status *st) {
    if (o->model_config_file && *o->model_config_file) {
        if (o->model_base_path && *o->model_base_path)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "give either --model_config_file or --model_base_path, "
                                  "not both");
        size_t len = 0;
        char *text = read_text_file(o->model_config_file, &len, st);
        if (!text) return false;
        bool ok = tfc_srv_config_parse(text, len, cfg, st);
        tfc_free(text);
        if (!ok) {
            char msg[sizeof st->msg];
            snprintf(msg, sizeof msg, "%s", st->msg);
            tfc_status_set(st, st->code, "%s: %s", o->model_config_file, msg);
        }
        return ok;
    }
    if (!o->model_base_path || !*o->model_base_path)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "no model: give --model_base_path or --model_config_file");
    return tfc_srv_config_single(o->model_name && *o->model_name ? o->model_name : "default", o->model_base_path, cfg, st);
}

tfc_model_server *tfc_model_server_start(const tfc_model_server_opts *opts, tfc_status *st) {
    tfc_model_server_opts o = opts ? *opts : (tfc_model_server_opts){0};
    const int cores = tfc_num_cores() > 0 ? tfc_num_cores() : 1;
    if (o.rest_api_num_threads < 0 || o.rest_api_timeout_in_ms < 0 || o.rest_api_port < -1 || o.rest_api_port > 65535 ||
        o.port < -1 || o.port > 65535)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "serve: bad option (rest_api_num_threads %d, "
                              "rest_api_timeout_in_ms %lld, rest_api_port %d, port %d)", o.rest_api_num_threads,
                              (long long)o.rest_api_timeout_in_ms, o.rest_api_port, o.port), NULL;
    tfc_model_server *s = tfc_calloc(1, sizeof *s);
    if (!s) return tfc_status_oom(st, "server", sizeof *s), NULL;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->idle, NULL);
    s->rest_port = -1;
    s->max_request = o.max_request_bytes ? o.max_request_bytes : DEFAULT_MAX_REQUEST;
    s->max_body_bytes = s->max_request > MAX_BODY_BYTES_TOTAL ? s->max_request : MAX_BODY_BYTES_TOTAL;
    tfc_srv_config cfg = {0};
    if (o.monitoring_config_file && *o.monitoring_config_file) {
        size_t len = 0;
        char *text = read_text_file(o.monitoring_config_file, &len, st);
        bool enable = false;
        char path[256];
        bool ok = text && tfc_srv_monitoring_parse(text, len, &enable, path, sizeof path, st);
        tfc_free(text);
        if (!ok) goto fail;
        if (enable && (!(s->metrics = srv_metrics_new()) || !(s->metrics_path = tfc_strdup(path)))) {
            tfc_status_oom(st, "metrics", 64);
            goto fail;
        }
    }
    if (!load_config(&o, &cfg, st)) goto fail;
    tfc_srv_batching_opts batching = {0};
    if (o.batching_parameters_file && *o.batching_parameters_file) {
        size_t len = 0;
        char *text = read_text_file(o.batching_parameters_file, &len, st);
        bool ok = text && tfc_srv_batching_parse(text, len, &batching, st);
        tfc_free(text);
        if (!ok) goto fail;
    }
    batching.on_batch = on_batch;
    batching.user = s;
    double poll = o.file_system_poll_wait_seconds == 0 ? 1.0 : o.file_system_poll_wait_seconds;
    s->mgr = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.batching = o.enable_batching ? &batching : NULL,
                                                                .instances = o.model_instances,
                                                                .poll_wait_seconds = poll > 0 ? poll : 0}, st);
    tfc_srv_config_clear(&cfg);
    if (!s->mgr) goto fail;
    if (o.rest_api_port >= 0 || o.rest_api_any_port) {
        int port = o.rest_api_any_port ? 0 : o.rest_api_port ? o.rest_api_port : 8501;
        const char *host = o.rest_api_host && *o.rest_api_host ? o.rest_api_host : "0.0.0.0";
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
        if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "serve: rest_api_host '%s' is not an IPv4 address", host);
            goto fail;
        }
        unsigned threads = (unsigned)(o.rest_api_num_threads ? o.rest_api_num_threads : 4 * cores);
        int64_t timeout_ms = s->timeout_ms = o.rest_api_timeout_in_ms ? o.rest_api_timeout_in_ms : 30000;
        /* idle connections (slow clients) are closed after the same time, at least a second */
        unsigned timeout_s = (unsigned)((timeout_ms + 999) / 1000);
        struct rlimit rl;
        unsigned conn_limit = 10000;
        if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < conn_limit + 64)
            conn_limit = rl.rlim_cur > 128 ? (unsigned)rl.rlim_cur - 64 : 64;
        s->d = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_USE_ITC, (uint16_t)port, NULL, NULL, handler, s,
                                MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&addr, MHD_OPTION_THREAD_POOL_SIZE, threads,
                                MHD_OPTION_CONNECTION_TIMEOUT, timeout_s, MHD_OPTION_CONNECTION_LIMIT, conn_limit,
                                MHD_OPTION_NOTIFY_COMPLETED, completed, s, MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u,
                                MHD_OPTION_END);
        if (!s->d) {
            tfc_status_set(st, TFC_UNAVAILABLE, "serve: cannot listen on %s:%d for the REST API (port in use?)", host,
                           port);
            goto fail;
        }
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
        s->rest_port = info ? info->port : port;
    }
    if (o.port >= 0 || o.grpc_any_port) {
        tfc_grpc_opts g = {.port = o.grpc_any_port ? 0 : o.port ? o.port : 8500, .max_message_bytes = s->max_request};
        if (!(s->grpc = tfc_grpc_server_start(s->mgr, &g, st))) goto fail;
    }
    tfc_status_clear(st);
    return s;
fail:
    tfc_srv_config_clear(&cfg);
    tfc_model_server_stop(s);
    return NULL;
}

int tfc_model_server_rest_port(const tfc_model_server *s) { return s ? s->rest_port : -1; }
int tfc_model_server_grpc_port(const tfc_model_server *s) { return s && s->grpc ? tfc_grpc_server_port(s->grpc) : -1; }

void tfc_model_server_stop(tfc_model_server *s) {
    if (!s) return;
    tfc_grpc_server_stop(s->grpc, GRPC_GRACE_SECONDS);
    if (s->d) {
        /* stop accepting, then let the requests already read finish (bounded: a stuck client cannot hold the
         * shutdown past the connection timeout, after which libmicrohttpd closes it) */
        MHD_socket fd = MHD_quiesce_daemon(s->d);
        if (fd != MHD_INVALID_SOCKET) close(fd);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 60;
        pthread_mutex_lock(&s->mu);
        while (s->in_flight > 0 && pthread_cond_timedwait(&s->idle, &s->mu, &until) == 0) {}
        pthread_mutex_unlock(&s->mu);
        MHD_stop_daemon(s->d);
    }
    tfc_srv_manager_free(s->mgr);
    srv_metrics_free(s->metrics);
    tfc_free(s->metrics_path);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->idle);
    tfc_free(s);
}

