/* `tfc data dispatcher [--port N] [--protocol grpc|nng] [--work_dir DIR] [--fault_tolerant_mode]
 * [--job_gc_timeout_ms N]` and `tfc data worker --dispatcher_address HOST:PORT [--worker_address ADDR] [--port N]
 * [--heartbeat_interval_ms N]`: the tf.data service's servers (DispatcherConfig / WorkerConfig fields as flags).
 * Each prints "<role> serving on <address>" once it listens and runs until SIGINT or SIGTERM. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/data_service.h"
#include "tfc_tools.h"

static volatile int stop_flag;

static void on_signal(int sig) {
    (void)sig;
    stop_flag = 1;
}

void tfc_tool_data_usage(FILE *f) {
    fprintf(f, "  data dispatcher [--port N] [--protocol grpc|nng] [--work_dir DIR] [--fault_tolerant_mode]\n"
               "                  [--job_gc_timeout_ms N]      run a tf.data service dispatcher\n"
               "  data worker --dispatcher_address HOST:PORT [--worker_address ADDR] [--port N]\n"
               "              [--heartbeat_interval_ms N]      run a tf.data service worker\n");
}

/* A non-negative integer flag value; -1 when malformed. */
static long long number(const char *flag, const char *v) {
    char *end;
    long long x = strtoll(v, &end, 10);
    if (end == v || *end || x < 0) {
        fprintf(stderr, "tfc data: %s expects a non-negative integer, got '%s'\n", flag, v);
        return -1;
    }
    return x;
}

int tfc_tool_data(int argc, char **argv) {
    if (argc < 1 || (strcmp(argv[0], "dispatcher") && strcmp(argv[0], "worker"))) {
        fprintf(stderr, "usage:\n");
        tfc_tool_data_usage(stderr);
        return 2;
    }
    const bool disp = !strcmp(argv[0], "dispatcher");
    tfc_dispatcher_config dc = {0};
    tfc_worker_config wc = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long long x = 0;
        if (disp && !strcmp(a, "--fault_tolerant_mode")) {
            dc.fault_tolerant_mode = true;
            continue;
        }
        if (!v) {
            fprintf(stderr, "tfc data %s: unknown or incomplete argument '%s'\n", argv[0], a);
            return 2;
        }
        i++;
        if (!strcmp(a, "--port")) {
            if ((x = number(a, v)) < 0 || x > 65535) return 2;
            dc.port = wc.port = (int)x;
        } else if (disp && !strcmp(a, "--protocol")) {
            dc.protocol = v;
        } else if (disp && !strcmp(a, "--work_dir")) {
            dc.work_dir = v;
        } else if (disp && !strcmp(a, "--job_gc_timeout_ms")) {
            if ((dc.job_gc_timeout_ms = number(a, v)) < 0) return 2;
        } else if (!disp && !strcmp(a, "--dispatcher_address")) {
            wc.dispatcher_address = v;
        } else if (!disp && !strcmp(a, "--worker_address")) {
            wc.worker_address = v;
        } else if (!disp && !strcmp(a, "--heartbeat_interval_ms")) {
            if ((wc.heartbeat_interval_ms = number(a, v)) < 0) return 2;
        } else {
            fprintf(stderr, "tfc data %s: unknown argument '%s'\n", argv[0], a);
            return 2;
        }
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    tfc_status st = TFC_STATUS_INIT;
    bool ok;
    if (disp) {
        tfc_dispatch_server *d = tfc_dispatch_server_new(&dc, &st);
        if (d) {
            printf("dispatcher serving on %s\n", tfc_dispatch_server_target(d));
            fflush(stdout);
        }
        ok = d && tfc_dispatch_server_join(d, &stop_flag, &st);
        tfc_dispatch_server_free(d);
    } else {
        tfc_worker_server *w = tfc_worker_server_new(&wc, &st);
        if (w) {
            printf("worker serving on %s\n", tfc_worker_server_address(w));
            fflush(stdout);
        }
        ok = w && tfc_worker_server_join(w, &stop_flag, &st);
        tfc_worker_server_free(w);
    }
    if (!ok) fprintf(stderr, "tfc data %s: %s: %s\n", argv[0], tfc_code_name(st.code), st.msg);
    return ok ? 0 : 1;
}
