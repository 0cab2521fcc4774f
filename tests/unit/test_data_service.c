/* The tf.data service on 127.0.0.1: a dispatcher and workers in this process and, for the fault cases, worker
 * processes (`tfc data worker`) killed by PID mid-epoch. Every wait is bounded. */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "data/data_graph.h"
#include "data_service/ds_internal.h"
#include "data_test_util.h"
#include "distribute/transport.h"

#ifndef TFC_TOOL
#define TFC_TOOL "tfc"
#endif

static tfc_ctx *ctx;
static tfc_function *fn_affine;

/* x -> x * 3 + 1 */
static int affine(tfc_ctx *c, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                  tfc_status *st) {
    tfc_tensor *three = tfc_scalar_i64(3, st), *one = tfc_scalar_i64(1, st);
    tfc_tensor *m = three ? tfc_mul(c, in[0], three, st) : NULL;
    out[0] = m && one ? tfc_add(c, m, one, st) : NULL;
    tfc_tensor_unref(three);
    tfc_tensor_unref(one);
    return out[0] ? 1 : -1;
}

static bool c_negate(tfc_ctx *c, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out, int n_out,
                     tfc_status *st) {
    out[0] = tfc_neg(c, in[0], st);
    return out[0] != NULL;
}

static tfc_dataset *affine_range(int64_t n, tfc_status *st) {
    return tfc_dataset_map_function(tfc_dataset_range(0, n, 1, TFC_INT64, st), ctx, fn_affine, NULL, st);
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Counts of each value v*3+1 for v in [0, n) in vals[0..k): all equal to `times`, nothing else. */
static bool each_times(int64_t *vals, int64_t k, int64_t n, int times) {
    if (k != n * times) {
        fprintf(stderr, "  got %lld elements, expected %lld\n", (long long)k, (long long)(n * times));
        return false;
    }
    qsort(vals, (size_t)k, sizeof *vals, cmp64);
    for (int64_t i = 0; i < k; i++)
        if (vals[i] != (i / times) * 3 + 1) {
            fprintf(stderr, "  element %lld is %lld, expected %lld\n", (long long)i, (long long)vals[i],
                    (long long)((i / times) * 3 + 1));
            return false;
        }
    return true;
}

/* register_dataset of a fresh affine_range(n) (register borrows the dataset). */
static int64_t register_affine(const char *service, int64_t n, tfc_status *st) {
    tfc_dataset *ds = affine_range(n, st);
    int64_t id = ds ? tfc_data_service_register_dataset(service, ds, st) : -1;
    tfc_dataset_unref(ds);
    return id;
}

static void sleep_ms(int ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static bool wait_workers(tfc_dispatch_server *d, int n, double seconds) {
    for (double t = 0; t < seconds; t += 0.05) {
        if (tfc_dispatch_server_num_workers(d) >= n) return true;
        sleep_ms(50);
    }
    return false;
}

static void test_modes(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dispatch_server *d = tfc_dispatch_server_new(&(tfc_dispatcher_config){.protocol = "grpc"}, &st);
    REQUIRE(d);
    tfc_worker_server *w[2];
    for (int i = 0; i < 2; i++) {
        w[i] = tfc_worker_server_new(&(tfc_worker_config){.dispatcher_address = tfc_dispatch_server_target(d),
                                                          .heartbeat_interval_ms = 100}, &st);
        REQUIRE(w[i]);
    }
    REQUIRE(wait_workers(d, 2, 10));
    const int64_t n = 200 + rand() % 200;
    static int64_t vals[4096];
    char service[80];
    snprintf(service, sizeof service, "grpc://%s", tfc_dispatch_server_target(d));

    /* distributed_epoch: every element exactly once */
    tfc_dataset *ds = tfc_dataset_distribute(affine_range(n, &st), &(tfc_distribute_opts){
                                                 .processing_mode = "distributed_epoch", .service = service}, &st);
    REQUIRE(ds);
    CHECK(tfc_dataset_component_spec(ds, 0).dtype == TFC_INT64);
    int64_t k = drain_i64(ds, 0, vals, 4096, &st);
    CHECK_OK(&st);
    CHECK(each_times(vals, k, n, 1));
    /* a second epoch (a new iterator, a new job) gives the whole epoch again */
    k = drain_i64(ds, 0, vals, 4096, &st);
    CHECK(each_times(vals, k, n, 1));
    tfc_dataset_unref(ds);

    /* parallel_epochs: the whole dataset from each of the 2 workers */
    ds = tfc_dataset_distribute(affine_range(n, &st), &(tfc_distribute_opts){.service = service}, &st);
    REQUIRE(ds);
    k = drain_i64(ds, 0, vals, 4096, &st);
    CHECK_OK(&st);
    CHECK(each_times(vals, k, n, 2));
    tfc_dataset_unref(ds);

    /* a shared job: two iterators of the same job_name split one epoch between them */
    int64_t id = register_affine(service, n, &st);
    CHECK(id >= 0);
    tfc_distribute_opts so = {.processing_mode = "distributed_epoch", .service = service, .job_name = "shared",
                              .max_outstanding_requests = 4};
    tfc_dataset *a = tfc_data_service_from_dataset_id(id, &so, &st), *b = tfc_data_service_from_dataset_id(id, &so, &st);
    REQUIRE(a && b);
    for (int rep = 0; rep < 2; rep++) { /* a second iteration of each joins the job's second repetition */
        tfc_iterator *ia = tfc_iterator_new(a, &st), *ib = tfc_iterator_new(b, &st);
        k = 0;
        bool end_a = false, end_b = false;
        while (!(end_a && end_b) && k < 4096) {
            tfc_tensor *t = NULL;
            for (int s = 0; s < 2; s++) {
                bool *end = s ? &end_b : &end_a;
                if (*end) continue;
                if (tfc_iterator_next(s ? ib : ia, &t, 1, &st)) {
                    vals[k++] = (int64_t)tfc_tensor_get_f64(t, 0);
                    tfc_tensor_unref(t);
                } else {
                    CHECK_CODE(&st, TFC_OUT_OF_RANGE);
                    *end = true;
                }
            }
        }
        CHECK(each_times(vals, k, n, 1));
        tfc_iterator_free(ia);
        tfc_iterator_free(ib);
    }
    tfc_dataset_unref(a);
    tfc_dataset_unref(b);
    /* the same graph registers under the same id */
    CHECK(register_affine(service, n, &st) == id);

    /* coordinated reads: in round r both consumers read worker r % 2, consumer c element (r / 2) * 2 + c of its
     * stream (the same stream on both workers: a deterministic pipeline) */
    const int64_t m = 7 + rand() % 10;
    tfc_dataset *inf = tfc_dataset_repeat(affine_range(m, &st), -1, &st);
    int64_t cid = tfc_data_service_register_dataset(service, inf, &st);
    tfc_dataset_unref(inf);
    REQUIRE(cid >= 0);
    tfc_iterator *ci[2];
    tfc_dataset *cds[2];
    for (int c = 0; c < 2; c++) {
        cds[c] = tfc_data_service_from_dataset_id(cid, &(tfc_distribute_opts){.service = service, .job_name = "coord",
                                                                              .consumer_index = c, .num_consumers = 2},
                                                  &st);
        REQUIRE(cds[c]);
        ci[c] = tfc_iterator_new(cds[c], &st);
    }
    bool in_order = true;
    for (int64_t r = 0; r < 40; r++)
        for (int c = 0; c < 2; c++) {
            tfc_tensor *t = NULL;
            REQUIRE(tfc_iterator_next(ci[c], &t, 1, &st));
            const int64_t e = r / 2 * 2 + c;
            in_order &= (int64_t)tfc_tensor_get_f64(t, 0) == (e % m) * 3 + 1;
            tfc_tensor_unref(t);
        }
    CHECK(in_order);
    for (int c = 0; c < 2; c++) {
        tfc_iterator_free(ci[c]);
        tfc_dataset_unref(cds[c]);
    }
    CHECK(!tfc_data_service_from_dataset_id(id, &(tfc_distribute_opts){.service = service, .job_name = "c2",
                                                                       .num_consumers = 2}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT); /* a finite dataset */
    CHECK(strstr(st.msg, "infinite") != NULL);
    CHECK(!tfc_data_service_from_dataset_id(cid, &(tfc_distribute_opts){.service = service, .num_consumers = 2}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT); /* no job name */

    /* a C callback: a clear error unless registered by name (workers here share this process's registry) */
    tfc_dataset *c = tfc_dataset_map(tfc_dataset_range(0, 50, 1, 0, &st), c_negate, NULL,
                                     &(tfc_map_opts){.output_spec = &(tfc_tensor_spec){TFC_INT64, {0}}}, &st);
    CHECK(!tfc_dataset_distribute(tfc_dataset_ref(c), &(tfc_distribute_opts){.service = service}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "C callback") != NULL);
    REQUIRE(tfc_data_register_map_fn("test.negate", c_negate, NULL, &st));
    tfc_dataset *cd = tfc_dataset_distribute(c, &(tfc_distribute_opts){.processing_mode = "distributed_epoch",
                                                                         .service = service}, &st);
    REQUIRE(cd);
    k = drain_i64(cd, 0, vals, 4096, &st);
    int64_t sum = 0;
    for (int64_t i = 0; i < k; i++) sum += vals[i];
    CHECK(k == 50 && sum == -(49 * 50 / 2));
    tfc_dataset_unref(cd);

    /* bad arguments */
    CHECK(!tfc_data_service_from_dataset_id(987654, &(tfc_distribute_opts){.service = service}, &st));
    CHECK_CODE(&st, TFC_NOT_FOUND);
    CHECK(!tfc_data_service_from_dataset_id(id, &(tfc_distribute_opts){.service = service, .processing_mode = "x"}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    tfc_dataset *z = tfc_dataset_zip((tfc_dataset *[]){tfc_dataset_range(0, 3, 1, 0, &st), tfc_dataset_range(0, 3, 1, 0, &st)},
                                     2, &st);
    CHECK(!tfc_dataset_distribute(z, &(tfc_distribute_opts){.processing_mode = "distributed_epoch", .service = service}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);

    /* garbage to the dispatcher and to a worker: error replies, and both keep serving */
    char waddr[64];
    snprintf(waddr, sizeof waddr, "127.0.0.1:%d", tfc_worker_server_port(w[0]));
    ps_transport *t = ps_transport_nng(tfc_dispatch_server_target(d), 5, &st);
    ps_transport *tw = ps_transport_nng(waddr, 5, &st);
    for (int round = 0; round < 100; round++) {
        ps_transport *to = round < 50 ? t : tw;
        uint8_t junk[200];
        size_t len = (size_t)(rand() % (int)sizeof junk);
        for (size_t i = 0; i < len; i++) junk[i] = (uint8_t)rand();
        if (round % 2) memcpy(junk, "TFDS\x01", len < 5 ? len : 5); /* past the magic sometimes */
        uint8_t *rep = NULL;
        size_t rn = 0;
        REQUIRE(to->call(to, junk, len, &rep, &rn, &st));
        ds_msg m;
        CHECK(ds_msg_decode(rep, rn, &m, &st) && m.code == TFC_INVALID_ARGUMENT);
        to->free_reply(rep, rn);
    }
    ps_transport_free(t);
    ps_transport_free(tw);
    /* both still serve */
    tfc_dataset *after = tfc_dataset_distribute(affine_range(n, &st), &(tfc_distribute_opts){.service = service}, &st);
    k = after ? drain_i64(after, 0, vals, 4096, &st) : -1;
    CHECK(each_times(vals, k, n, 2));
    tfc_dataset_unref(after);
    CHECK(register_affine(service, n, &st) == id);
    CHECK(tfc_dispatch_server_num_workers(d) == 2);

    for (int i = 0; i < 2; i++) tfc_worker_server_free(w[i]);
    tfc_dispatch_server_free(d);
}

/* `tfc data worker` as a child process; returns its PID. */
static pid_t start_worker(const char *dispatcher) {
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", 1);
        if (null >= 0) dup2(null, 1);
        execl(TFC_TOOL, TFC_TOOL, "data", "worker", "--dispatcher_address", dispatcher, "--heartbeat_interval_ms",
              "200", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static void stop_worker(pid_t pid, int sig) {
    if (pid <= 0) return;
    kill(pid, sig);
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) return;
        sleep_ms(50);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* `tfc data ...` as a child; its stdout (the "serving on" line) goes to out_fd when >= 0. */
static pid_t start_tool(const char *const *args, int out_fd) {
    pid_t pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(out_fd >= 0 ? out_fd : null, 1);
        char *argv[16] = {(char *)TFC_TOOL, (char *)"data"};
        for (int i = 0; args[i] && i < 13; i++) argv[i + 2] = (char *)args[i];
        execv(TFC_TOOL, argv);
        _exit(127);
    }
    return pid;
}

/* Exit status of pid, waiting at most 10 s (-1: still running, then killed). */
static int exit_status(pid_t pid) {
    for (int i = 0; i < 200; i++) {
        int status = 0;
        if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
        sleep_ms(50);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

static void test_cli(void) {
    tfc_status st = TFC_STATUS_INIT;
    CHECK(exit_status(start_tool((const char *[]){"dispatcher", "--protocol", "carrier-pigeon", NULL}, -1)) == 1);
    CHECK(exit_status(start_tool((const char *[]){"worker", "--port", "-3", NULL}, -1)) == 2);
    CHECK(exit_status(start_tool((const char *[]){"worker", NULL}, -1)) == 1); /* no dispatcher_address */
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    pid_t d = start_tool((const char *[]){"dispatcher", "--port", "0", "--job_gc_timeout_ms", "60000", NULL}, fds[1]);
    close(fds[1]);
    char line[128] = "", target[64] = "";
    FILE *f = fdopen(fds[0], "r");
    if (f && fgets(line, sizeof line, f)) sscanf(line, "dispatcher serving on %63s", target);
    CHECK(target[0] != 0);
    pid_t w = target[0] ? start_tool((const char *[]){"worker", "--dispatcher_address", target,
                                                      "--heartbeat_interval_ms", "100", NULL}, -1) : 0;
    if (target[0]) {
        tfc_dataset *ds = tfc_dataset_distribute(affine_range(30, &st), &(tfc_distribute_opts){.service = target}, &st);
        static int64_t vals[64];
        int64_t k = ds ? drain_i64(ds, 0, vals, 64, &st) : -1;
        CHECK_OK(&st);
        CHECK(each_times(vals, k, 30, 1));
        tfc_dataset_unref(ds);
        kill(w, SIGTERM);
        CHECK(exit_status(w) == 0);
    }
    kill(d, SIGTERM);
    CHECK(exit_status(d) == 0);
    if (f) fclose(f);
}

static void test_worker_killed(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_dispatch_server *d = tfc_dispatch_server_new(NULL, &st);
    REQUIRE(d);
    pid_t pids[2] = {start_worker(tfc_dispatch_server_target(d)), start_worker(tfc_dispatch_server_target(d))};
    if (!wait_workers(d, 2, 30)) {
        fprintf(stderr, "worker processes did not register\n");
        tfc_test_failures++;
        goto done;
    }
    const int64_t n = 3000;
    static int64_t vals[8192];
    tfc_distribute_opts o = {.processing_mode = "distributed_epoch", .service = tfc_dispatch_server_target(d),
                             .max_outstanding_requests = 8, .worker_wait_ms = 1500};
    tfc_dataset *ds = tfc_dataset_distribute(affine_range(n, &st), &o, &st);
    REQUIRE(ds);
    /* epoch 1: the first worker is killed after 300 elements; nothing is lost, nothing doubled */
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    int64_t k = 0;
    tfc_tensor *t = NULL;
    while (k < 8192 && tfc_iterator_next(it, &t, 1, &st)) {
        vals[k++] = (int64_t)tfc_tensor_get_f64(t, 0);
        tfc_tensor_unref(t);
        if (k == 300) stop_worker(pids[0], SIGKILL), pids[0] = 0;
    }
    CHECK_CODE(&st, TFC_OUT_OF_RANGE);
    CHECK(each_times(vals, k, n, 1));
    tfc_iterator_free(it);
    /* epoch 2: the last worker is killed too: UNAVAILABLE (not a short epoch) once none is left */
    it = tfc_iterator_new(ds, &st);
    k = 0;
    const double t0 = ds_now();
    while (tfc_iterator_next(it, &t, 1, &st)) {
        tfc_tensor_unref(t);
        if (++k == 100) stop_worker(pids[1], SIGKILL), pids[1] = 0;
    }
    CHECK_CODE(&st, TFC_UNAVAILABLE);
    CHECK(strstr(st.msg, "no tf.data service worker left") != NULL);
    CHECK(k < n);
    CHECK(ds_now() - t0 < 20);
    tfc_iterator_free(it);
    tfc_dataset_unref(ds);
done:
    for (int i = 0; i < 2; i++) stop_worker(pids[i], SIGTERM);
    tfc_dispatch_server_free(d);
}

static void test_dispatcher_restart(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[] = "/tmp/tfc_ds_journal_XXXXXX";
    REQUIRE(mkdtemp(dir));
    tfc_dispatcher_config cfg = {.work_dir = dir, .fault_tolerant_mode = true};
    tfc_dispatch_server *d = tfc_dispatch_server_new(&cfg, &st);
    REQUIRE(d);
    cfg.port = tfc_dispatch_server_port(d);
    tfc_worker_server *w = tfc_worker_server_new(&(tfc_worker_config){.dispatcher_address = tfc_dispatch_server_target(d),
                                                                      .heartbeat_interval_ms = 100}, &st);
    REQUIRE(w && wait_workers(d, 1, 10));
    const int64_t n = 1000;
    char service[64];
    snprintf(service, sizeof service, "%s", tfc_dispatch_server_target(d));
    tfc_dataset *src = affine_range(n, &st);
    const int64_t id = tfc_data_service_register_dataset(service, src, &st);
    REQUIRE(id >= 0);
    tfc_distribute_opts o = {.processing_mode = "distributed_epoch", .service = service, .job_name = "resumed",
                             .max_outstanding_requests = 4};
    tfc_dataset *ds = tfc_data_service_from_dataset_id(id, &o, &st);
    REQUIRE(ds);
    static int64_t first[2048], rest[2048];
    tfc_iterator *it = tfc_iterator_new(ds, &st);
    tfc_tensor *t = NULL;
    int64_t k1 = 0;
    while (k1 < 40 && tfc_iterator_next(it, &t, 1, &st)) {
        first[k1++] = (int64_t)tfc_tensor_get_f64(t, 0);
        tfc_tensor_unref(t);
    }
    tfc_iterator_free(it); /* the consumer goes away with the splits it held */
    tfc_dataset_unref(ds);
    tfc_dispatch_server_free(d);

    /* restarted on the same port and work_dir: the dataset id and the job's progress are back */
    d = tfc_dispatch_server_new(&cfg, &st);
    REQUIRE(d);
    REQUIRE(wait_workers(d, 1, 10));
    CHECK(tfc_data_service_register_dataset(service, src, &st) == id);
    ds = tfc_data_service_from_dataset_id(id, &o, &st);
    REQUIRE(ds);
    int64_t k2 = drain_i64(ds, 0, rest, 2048, &st);
    CHECK_OK(&st);
    CHECK(k1 == 40 && k2 > 0 && k1 + k2 <= n);
    bool disjoint = true;
    for (int64_t i = 0; i < k1; i++)
        for (int64_t j = 0; j < k2; j++) disjoint &= first[i] != rest[j];
    CHECK(disjoint);
    /* a garbage journal is DATA_LOSS naming it */
    tfc_dataset_unref(ds);
    tfc_dataset_unref(src);
    tfc_worker_server_free(w);
    tfc_dispatch_server_free(d);
    char path[128];
    snprintf(path, sizeof path, "%s/dispatcher.journal", dir);
    FILE *f = fopen(path, "r+b");
    REQUIRE(f);
    fseek(f, 20, SEEK_SET);
    fputc(0x5a, f);
    fclose(f);
    cfg.port = 0;
    CHECK(!tfc_dispatch_server_new(&cfg, &st));
    CHECK_CODE(&st, TFC_DATA_LOSS);
    CHECK(strstr(st.msg, "dispatcher.journal") != NULL);
    unlink(path);
    rmdir(dir);
}

int main(void) {
    srand((unsigned)time(NULL));
    signal(SIGPIPE, SIG_IGN);
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    fn_affine = tfc_function_new(ctx, affine, NULL, &(tfc_function_opts){.name = "affine"}, &st);
    REQUIRE(ctx && fn_affine);
    test_modes();
    test_cli();
    test_worker_killed();
    test_dispatcher_restart();
    tfc_function_free(fn_affine);
    tfc_ctx_free(ctx);
    printf("%d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures != 0;
}
