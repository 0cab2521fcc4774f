/* `tfc ps` and `tfc worker`: run this process as the ps or worker task named by TF_CONFIG (tf.distribute.Server
 * with job_name and task_index from the "task" entry) until it is told to stop (a stop request, SIGINT or
 * SIGTERM); `--stop HOST:PORT` sends a stop request to a running task. A worker started this way runs only
 * functions registered by this command (none): workers that train run the training program itself, which
 * registers its functions and calls tfc_server_new (see include/tfc/parameter_server.h). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/tfc.h"
#include "tfc_tools.h"

static tfc_server *g_server;

static void on_signal(int sig) {
    (void)sig;
    if (g_server) tfc_server_stop(g_server); /* sets a flag the serving thread polls */
}

void tfc_tool_ps_usage(FILE *f) {
    fprintf(f, "  ps | worker    serve the TF_CONFIG task (job ps or worker) until stopped\n"
               "  ps --stop HOST:PORT [--timeout S]   ask a running ps or worker task to stop\n");
}

int tfc_tool_ps(const char *job, int argc, char **argv) {
    double timeout = 10;
    const char *stop = NULL;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--stop") && i + 1 < argc) stop = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = atof(argv[++i]);
        else {
            fprintf(stderr, "tfc %s: unknown argument '%s'\n", job, argv[i]);
            tfc_tool_ps_usage(stderr);
            return 2;
        }
    }
    tfc_status st = TFC_STATUS_INIT;
    if (stop) {
        if (tfc_server_stop_remote(stop, timeout, &st)) return 0;
        fprintf(stderr, "tfc %s --stop %s: %s\n", job, stop, st.msg);
        return 1;
    }
    tfc_cluster cl;
    if (!tfc_cluster_resolve(NULL, &cl, &st)) {
        fprintf(stderr, "tfc %s: TF_CONFIG: %s\n", job, st.msg);
        return 2;
    }
    if (strcmp(cl.task_type, job)) {
        fprintf(stderr, "tfc %s: TF_CONFIG's task is '%s' %d, not a %s task\n", job,
                cl.task_type[0] ? cl.task_type : "(none)", cl.task_id, job);
        tfc_cluster_clear(&cl);
        return 2;
    }
    g_server = tfc_server_new(&cl, job, cl.task_id, cl.rpc_layer[0] ? cl.rpc_layer : NULL, &st);
    if (!g_server) {
        fprintf(stderr, "tfc %s: %s\n", job, st.msg);
        tfc_cluster_clear(&cl);
        return 1;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    fprintf(stderr, "tfc %s: task %d serving on %s\n", job, cl.task_id, tfc_server_target(g_server));
    const bool ok = tfc_server_join(g_server, &st);
    if (!ok) fprintf(stderr, "tfc %s: %s\n", job, st.msg);
    tfc_server_free(g_server);
    g_server = NULL;
    tfc_cluster_clear(&cl);
    return ok ? 0 : 1;
}
