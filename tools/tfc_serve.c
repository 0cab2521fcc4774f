/* `tfc serve`: tensorflow_model_server's command line over the embedded model server (tfc/serving.h). Flags keep
 * tensorflow_model_server's names and defaults (--flag=value or --flag value; booleans also bare). SIGTERM or
 * SIGINT stops it gracefully (no new connections, in-flight requests finish) with exit code 0: a handler writes
 * to a pipe the main thread reads, whichever thread the signal lands on. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tfc/serving.h"
#include "tfc_tools.h"

void tfc_tool_serve_usage(FILE *f) {
    fprintf(f, "  serve --model_name=NAME --model_base_path=DIR | --model_config_file=FILE\n"
               "        [--rest_api_port=8501] [--port=8500] [--rest_api_num_threads=N] [--rest_api_timeout_in_ms=30000]\n"
               "        [--file_system_poll_wait_seconds=1] [--monitoring_config_file=FILE]\n"
               "        [--enable_batching [--batching_parameters_file=FILE]]\n"
               "        [--rest_api_host=0.0.0.0] [--max_request_bytes=67108864] [--model_instances=N]\n"
               "                 TensorFlow Serving compatible model server (REST and gRPC APIs)\n");
}

/* The value of flag `name` at argv[*i] ("--name=v" or "--name v"); NULL when argv[*i] is another flag. */
static const char *flag_value(int argc, char **argv, int *i, const char *name, bool *missing) {
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, "--", 2) || strncmp(a + 2, name, n)) return NULL;
    if (a[2 + n] == '=') return a + 3 + n;
    if (a[2 + n]) return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static int stop_pipe[2] = {-1, -1};

static void on_stop_signal(int sig) {
    const int saved = errno;
    unsigned char b = (unsigned char)sig;
    if (write(stop_pipe[1], &b, 1) < 0) {} /* the pipe holds the byte; a second signal may find it full */
    errno = saved;
}

static bool parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) return false;
    *out = v;
    return true;
}

int tfc_tool_serve(int argc, char **argv) {
    tfc_tool_serve_flags fl = {.opts = {.port = 8500, .rest_api_port = 8501, .file_system_poll_wait_seconds = 1}};
    for (int i = 0; i < argc; i++) {
        bool missing = false;
        const char *v;
        int64_t x;
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            tfc_tool_serve_usage(stdout);
            return 0;
        }
#define STR_FLAG(name, field) else if ((v = flag_value(argc, argv, &i, name, &missing))) fl.opts.field = v;
#define INT_FLAG(name, lo, hi, store)                                                                      \
    else if ((v = flag_value(argc, argv, &i, name, &missing))) {                                           \
        if (!parse_i64(v, lo, hi, &x)) {                                                                   \
            fprintf(stderr, "tfc serve: --%s=%s: expected an integer in [%lld, %lld]\n", name, v,          \
                    (long long)(lo), (long long)(hi));                                                     \
            return 2;                                                                                      \
        }                                                                                                  \
        store;                                                                                             \
    }
        if (0) {}
        STR_FLAG("model_name", model_name)
        STR_FLAG("model_base_path", model_base_path)
        STR_FLAG("model_config_file", model_config_file)
        STR_FLAG("monitoring_config_file", monitoring_config_file)
        STR_FLAG("rest_api_host", rest_api_host)
        STR_FLAG("batching_parameters_file", batching_parameters_file)
        INT_FLAG("port", 0, 65535, fl.opts.port = (int)x; fl.opts.grpc_any_port = x == 0)
        INT_FLAG("rest_api_port", 0, 65535, fl.opts.rest_api_port = (int)x; fl.opts.rest_api_any_port = false)
        INT_FLAG("rest_api_num_threads", 1, 4096, fl.opts.rest_api_num_threads = (int)x)
        INT_FLAG("rest_api_timeout_in_ms", 1, INT64_C(1) << 40, fl.opts.rest_api_timeout_in_ms = x)
        INT_FLAG("max_request_bytes", 1, INT64_C(1) << 40, fl.opts.max_request_bytes = (size_t)x)
        INT_FLAG("model_instances", 1, 256, fl.opts.model_instances = (int)x)
        else if (!strcmp(argv[i], "--enable_batching") || !strcmp(argv[i], "--enable_batching=true"))
            fl.opts.enable_batching = true;
        else if (!strcmp(argv[i], "--enable_batching=false")) fl.opts.enable_batching = false;
        else if ((v = flag_value(argc, argv, &i, "file_system_poll_wait_seconds", &missing))) {
            char *end;
            double d = strtod(v, &end);
            if (end == v || *end || d != d) {
                fprintf(stderr, "tfc serve: --file_system_poll_wait_seconds=%s: expected a number\n", v);
                return 2;
            }
            fl.opts.file_system_poll_wait_seconds = d > 0 ? d : -1; /* 0: scan once, as tensorflow_model_server */
        } else {
            fprintf(stderr, "tfc serve: %s flag '%s'\n", missing ? "no value for" : "unknown", argv[i]);
            tfc_tool_serve_usage(stderr);
            return 2;
        }
#undef STR_FLAG
#undef INT_FLAG
    }
    /* --rest_api_port=0 means no REST listener in tensorflow_model_server */
    if (fl.opts.rest_api_port == 0) fl.opts.rest_api_port = -1;
    /* many concurrent connections need descriptors: raise the soft limit to the hard one */
    struct rlimit rl;
    if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* SIGTERM / SIGINT, on whichever thread they land, write to a pipe this thread waits on */
    if (pipe(stop_pipe) != 0) {
        perror("tfc serve: pipe");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    tfc_status st = TFC_STATUS_INIT;
    tfc_model_server *s = tfc_model_server_start(&fl.opts, &st);
    if (!s) {
        fprintf(stderr, "tfc serve: %s: %s\n", tfc_code_name(st.code), st.msg);
        return 1;
    }
    fprintf(stderr, "tfc serve: running gRPC ModelServer at 0.0.0.0:%d\n", tfc_model_server_grpc_port(s));
    if (tfc_model_server_rest_port(s) >= 0)
        fprintf(stderr, "tfc serve: exporting HTTP/REST API at %s:%d\n",
                fl.opts.rest_api_host ? fl.opts.rest_api_host : "0.0.0.0", tfc_model_server_rest_port(s));
    fflush(stderr);
    unsigned char sig = 0;
    while (read(stop_pipe[0], &sig, 1) < 0 && errno == EINTR) {}
    fprintf(stderr, "tfc serve: signal %d, shutting down\n", sig);
    tfc_model_server_stop(s);
    return 0;
}
