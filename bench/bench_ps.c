/* ps_rpc_small / ps_rpc_4MB: the parameter-server transport end to end (tfc_ps_variable_read of a float32
 * variable held by a ps server on 127.0.0.1: request encoding, nng REQ/REP over TCP, validation, the reply's
 * tensor) against a raw nng REQ/REP echo of a message of the same size, interleaved in one run, one process
 * (server threads). Prints one row per size: median round trip in microseconds, throughput, and tfc/raw ratio
 * (throughput; the target is >= 0.8).
 *     build/bench/bench_ps [repeats]  */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <nng/nng.h>
#include <nng/protocol/reqrep0/rep.h>
#include <nng/protocol/reqrep0/req.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tfc/tfc.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int free_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd >= 0 && !bind(fd, (struct sockaddr *)&a, sizeof a) && !getsockname(fd, (struct sockaddr *)&a, &len))
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

/* The raw echo server: replies with a reply of the requested size (the first 8 bytes of the request). */
static nng_socket echo_sock;
static void *echo_main(void *arg) {
    for (;;) {
        void *buf;
        size_t n;
        if (nng_recv(echo_sock, &buf, &n, NNG_FLAG_ALLOC)) return NULL;
        size_t want = 0;
        if (n >= sizeof want) memcpy(&want, buf, sizeof want);
        nng_free(buf, n);
        void *rep = calloc(1, want ? want : 1);
        nng_send(echo_sock, rep, want, 0);
        free(rep);
    }
}

int main(int argc, char **argv) {
    int repeats = argc > 1 ? atoi(argv[1]) : 2000;
    if (repeats < 10 || repeats > 100000) repeats = 2000;
    tfc_status st = TFC_STATUS_INIT;
    char json[256], url[64];
    int ps_port = free_port(), echo_port = free_port();
    snprintf(json, sizeof json, "{\"cluster\":{\"chief\":[\"127.0.0.1:1\"],\"ps\":[\"127.0.0.1:%d\"]},"
                                "\"task\":{\"type\":\"chief\",\"index\":0}}", ps_port);
    tfc_cluster cl;
    if (!tfc_cluster_resolve(json, &cl, &st)) return fprintf(stderr, "%s\n", st.msg), 1;
    tfc_server *server = tfc_server_new(&cl, "ps", 0, NULL, &st);
    tfc_ps_strategy *s = server ? tfc_parameter_server_strategy_new(&cl, NULL, 10, &st) : NULL;
    if (!s) return fprintf(stderr, "%s\n", st.msg), 1;
    nng_socket req;
    pthread_t echo;
    snprintf(url, sizeof url, "tcp://127.0.0.1:%d", echo_port);
    if (nng_rep0_open(&echo_sock) || nng_listen(echo_sock, url, NULL, 0) || nng_req0_open(&req) ||
        nng_dial(req, url, NULL, 0) || pthread_create(&echo, NULL, echo_main, NULL))
        return fprintf(stderr, "raw nng echo: cannot start\n"), 1;
    const int64_t sizes[2] = {1, 1 << 20}; /* float32 elements: 4 bytes and 4 MiB */
    const char *names[2] = {"ps_rpc_small", "ps_rpc_4MB"};
    printf("%-14s %12s %12s %12s %12s %8s\n", "row", "tfc_us", "raw_us", "tfc_MB/s", "raw_MB/s", "ratio");
    for (int k = 0; k < 2; k++) {
        tfc_tensor *init = tfc_tensor_new(TFC_FLOAT, &sizes[k], 1, &st);
        tfc_ps_variable *v = init ? tfc_ps_variable_new(s, names[k], init, &st) : NULL;
        if (!v) return fprintf(stderr, "%s\n", st.msg), 1;
        const int n = k ? repeats / 20 : repeats;
        double *tt = calloc((size_t)n, sizeof *tt), *tr = calloc((size_t)n, sizeof *tr);
        const size_t bytes = tfc_tensor_byte_size(init);
        for (int i = 0; i < n; i++) {
            double t0 = now();
            tfc_tensor *r = tfc_ps_variable_read(v, &st);
            tt[i] = now() - t0;
            if (!r) return fprintf(stderr, "%s\n", st.msg), 1;
            tfc_tensor_unref(r);
            size_t want = bytes + 64; /* the reply of a read carries the tensor and a header */
            t0 = now();
            void *buf;
            size_t got;
            if (nng_send(req, &want, sizeof want, 0) || nng_recv(req, &buf, &got, NNG_FLAG_ALLOC))
                return fprintf(stderr, "raw nng echo failed\n"), 1;
            tr[i] = now() - t0;
            nng_free(buf, got);
        }
        qsort(tt, (size_t)n, sizeof *tt, cmp);
        qsort(tr, (size_t)n, sizeof *tr, cmp);
        const double mt = tt[n / 2], mr = tr[n / 2];
        printf("%-14s %12.1f %12.1f %12.1f %12.1f %8.2f\n", names[k], mt * 1e6, mr * 1e6, (double)bytes / mt / 1e6,
               (double)bytes / mr / 1e6, mr / mt);
        free(tt);
        free(tr);
        tfc_tensor_unref(init);
    }
    nng_close(req);
    nng_close(echo_sock);
    pthread_join(echo, NULL);
    tfc_ps_strategy_free(s);
    tfc_server_free(server);
    tfc_cluster_clear(&cl);
    return 0;
}
