/* ParameterServerStrategy with a ClusterCoordinator across processes on 127.0.0.1: this test starts 2 ps tasks
 * and up to 3 worker tasks as child processes (itself, re-executed with --task), each bounded by a timeout;
 * only the PIDs it started are signalled.
 *  - correctness: one worker, one step at a time, equals the same steps run synchronously in this process;
 *  - failures: 3 workers training while workers are SIGKILLed and restarted 5 times at random points: the run
 *    completes and every scheduled step updated the variables exactly once (a per-step counter on the ps);
 *  - a killed ps task makes join and reads fail with UNAVAILABLE within the timeout. */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "distribute/ps_internal.h"
#include "ps_test_util.h"

#define DIM 8
#define BATCH 16
#define MAX_STEPS 240
#define LR 0.05
#define WORKER_PS_TIMEOUT 2.0  /* a worker's requests to ps tasks */
#define COORD_TIMEOUT 4.0      /* the coordinator's, longer: a worker's ps failure reaches it as an answer */

/* The model every task builds: y = x w + b (linear regression), w sharded over the 2 ps tasks, and a counter
 * of the updates each step made. */
typedef struct {
    tfc_ps_strategy *s;
    tfc_ps_variable *w, *b, *hits;
    int step_delay_ms;
} model;
static model g_model;

static void batch(int64_t step, float *x, float *y) {
    uint32_t r = (uint32_t)step * 2654435761u + 12345u;
    for (int i = 0; i < BATCH; i++) {
        float t = 0.5f;
        for (int j = 0; j < DIM; j++) {
            r = r * 1664525u + 1013904223u;
            x[i * DIM + j] = (float)((r >> 8) % 2000) / 1000.0f - 1.0f;
            t += x[i * DIM + j] * (float)(j + 1) * 0.25f;
        }
        y[i] = t;
    }
}

/* Gradients of the mean squared error and the loss, in float32, the same code on every task. */
static float gradients(int64_t step, const float *w, float b, float *gw, float *gb) {
    float x[BATCH * DIM], y[BATCH], loss = 0;
    batch(step, x, y);
    memset(gw, 0, DIM * sizeof *gw);
    *gb = 0;
    for (int i = 0; i < BATCH; i++) {
        float p = b;
        for (int j = 0; j < DIM; j++) p += x[i * DIM + j] * w[j];
        const float e = p - y[i];
        loss += e * e / BATCH;
        for (int j = 0; j < DIM; j++) gw[j] += 2 * e * x[i * DIM + j] / BATCH;
        *gb += 2 * e / BATCH;
    }
    return loss;
}

static bool model_build(tfc_ps_strategy *s, tfc_status *st) {
    const int64_t wd[2] = {DIM, 1}, hd[1] = {MAX_STEPS};
    tfc_tensor *w0 = tfc_tensor_new(TFC_FLOAT, wd, 2, st); /* zeros */
    tfc_tensor *b0 = tfc_tensor_new(TFC_FLOAT, NULL, 0, st);
    tfc_tensor *h0 = tfc_tensor_new(TFC_INT64, hd, 1, st);
    g_model.s = s;
    g_model.w = w0 ? tfc_ps_variable_new(s, "w", w0, st) : NULL;
    g_model.b = g_model.w ? tfc_ps_variable_new(s, "b", b0, st) : NULL;
    g_model.hits = g_model.b ? tfc_ps_variable_new(s, "hits", h0, st) : NULL;
    tfc_tensor_unref(w0);
    tfc_tensor_unref(b0);
    tfc_tensor_unref(h0);
    return g_model.hits != NULL;
}

/* One training step, arg 0 the step index (int64 scalar): reads w and b from the ps tasks, applies SGD there and
 * counts the step in hits[step]; returns the loss. */
static bool train_step(tfc_tensor *const *args, int n_args, tfc_tensor **out, int *n_out, void *user, tfc_status *st) {
    model *m = user;
    if (n_args != 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "train_step takes the step index");
    const int64_t step = (int64_t)tfc_tensor_get_f64(args[0], 0);
    tfc_tensor *w = tfc_ps_variable_read(m->w, st);
    tfc_tensor *b = w ? tfc_ps_variable_read(m->b, st) : NULL;
    if (!b) {
        tfc_tensor_unref(w);
        return false;
    }
    if (m->step_delay_ms) usleep((useconds_t)m->step_delay_ms * 1000);
    float gw[DIM], gb;
    const float loss = gradients(step, tfc_tensor_data(w), *(const float *)tfc_tensor_data(b), gw, &gb);
    const int64_t wd[2] = {DIM, 1}, hd[1] = {MAX_STEPS};
    tfc_tensor *tw = tfc_tensor_from_data(TFC_FLOAT, wd, 2, gw, sizeof gw, st);
    tfc_tensor *tb = tfc_scalar_f32(gb, st);
    tfc_tensor *hit = tfc_tensor_new(TFC_INT64, hd, 1, st);
    if (hit) ((int64_t *)tfc_tensor_mutable_data(hit))[step % MAX_STEPS] = 1;
    bool ok = tw && tb && hit && tfc_ps_variable_apply_sgd(m->w, tw, LR, st) &&
              tfc_ps_variable_apply_sgd(m->b, tb, LR, st) && tfc_ps_variable_assign_add(m->hits, hit, st);
    if (ok) {
        out[0] = tfc_scalar_f32(loss, st);
        *n_out = 1;
        ok = out[0] != NULL;
    }
    tfc_tensor_unref(w);
    tfc_tensor_unref(b);
    tfc_tensor_unref(tw);
    tfc_tensor_unref(tb);
    tfc_tensor_unref(hit);
    return ok;
}

/* The per-worker dataset: worker i reads i * 1000, i * 1000 + 1, ... */
static tfc_dataset *numbers(int worker, void *user, tfc_status *st) {
    return tfc_dataset_range(worker * 1000, worker * 1000 + 100, 1, TFC_INT64, st);
}

/* next(iterator) of the per-worker iterator given as argument 0. */
static bool take(tfc_tensor *const *args, int n_args, tfc_tensor **out, int *n_out, void *user, tfc_status *st) {
    if (n_args != 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "take takes an iterator");
    if (!tfc_per_worker_iterator_next(args[0], out, 1, st)) return false;
    *n_out = 1;
    return true;
}

/* ---- child tasks ------------------------------------------------------------------------------------------- */
static int run_task(const char *json, const char *job, int index, int delay_ms) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_cluster cl;
    if (!tfc_cluster_resolve(json, &cl, &st)) return fprintf(stderr, "task: %s\n", st.msg), 3;
    tfc_ps_strategy *s = NULL;
    if (!strcmp(job, "worker")) {
        g_model.step_delay_ms = delay_ms;
        /* the worker's requests to ps tasks time out before the coordinator's to the worker */
        s = tfc_parameter_server_strategy_new(&cl, NULL, WORKER_PS_TIMEOUT, &st);
        if (s && getenv("PS_TEST_FAULTS")) tfc_ps_strategy_inject_faults(s, (uint32_t)index + 1, 0.3, 0.2, 3);
        if (!s || !model_build(s, &st)) return fprintf(stderr, "worker %d: %s\n", index, st.msg), 3;
    }
    tfc_server *srv = tfc_server_new(&cl, job, index, "grpc", &st);
    if (!srv) return fprintf(stderr, "%s %d: %s\n", job, index, st.msg), 3;
    const bool ok = tfc_server_join(srv, &st);
    tfc_server_free(srv);
    tfc_ps_strategy_free(s);
    tfc_cluster_clear(&cl);
    return ok ? 0 : 1;
}

/* ---- the coordinator ------------------------------------------------------------------------------------- */
typedef struct {
    char json_task[1024];       /* TF_CONFIG body, with %s %d for the task */
    char cluster[900];
    int n_workers;
    pid_t ps[2], worker[3];
    const char *self;
    int delay_ms;
} cluster_procs;

static pid_t spawn(cluster_procs *c, const char *job, int index) {
    char json[1200], idx[16], delay[16];
    snprintf(json, sizeof json, "{\"cluster\":{%s},\"task\":{\"type\":\"%s\",\"index\":%d}}", c->cluster, job, index);
    snprintf(idx, sizeof idx, "%d", index);
    snprintf(delay, sizeof delay, "%d", c->delay_ms);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(240); /* a child outliving the test ends itself */
        char *argv[] = {(char *)c->self, "--task", json, (char *)job, idx, delay, NULL};
        execv(c->self, argv);
        _exit(127);
    }
    return pid;
}

static bool ping(const char *addr, double timeout) {
    tfc_status st = TFC_STATUS_INIT;
    ps_transport *t = ps_transport_nng(addr, timeout, &st);
    ps_msg req, rep;
    ps_msg_init(&req, PS_OP_PING, NULL);
    const bool ok = t && ps_rpc(t, &req, &rep, NULL, &st);
    ps_transport_free(t);
    return ok;
}

static void start_cluster(cluster_procs *c, int n_workers, int delay_ms, tfc_cluster *cl) {
    int pp[2], wp[3];
    char ps[128], wk[128];
    ps_addr_list(ps, sizeof ps, 2, pp);
    ps_addr_list(wk, sizeof wk, n_workers, wp);
    c->n_workers = n_workers;
    c->delay_ms = delay_ms;
    snprintf(c->cluster, sizeof c->cluster, "\"chief\":[\"127.0.0.1:1\"],\"worker\":[%s],\"ps\":[%s]", wk, ps);
    for (int i = 0; i < 2; i++) c->ps[i] = spawn(c, "ps", i);
    for (int i = 0; i < n_workers; i++) c->worker[i] = spawn(c, "worker", i);
    char json[1200];
    snprintf(json, sizeof json, "{\"cluster\":{%s},\"task\":{\"type\":\"chief\",\"index\":0}}", c->cluster);
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_cluster_resolve(json, cl, &st));
    for (int i = 0; i < 2; i++) REQUIRE(ping(tfc_cluster_address(cl, "ps", i), 20));
    for (int i = 0; i < n_workers; i++) REQUIRE(ping(tfc_cluster_address(cl, "worker", i), 20));
}

static void reap(pid_t pid) {
    for (int i = 0; i < 100; i++) {
        if (waitpid(pid, NULL, WNOHANG) == pid) return;
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

static void stop_cluster(cluster_procs *c, tfc_cluster *cl) {
    tfc_status st = TFC_STATUS_INIT;
    for (int i = 0; i < c->n_workers; i++) tfc_server_stop_remote(tfc_cluster_address(cl, "worker", i), 2, &st);
    for (int i = 0; i < 2; i++) tfc_server_stop_remote(tfc_cluster_address(cl, "ps", i), 2, &st);
    for (int i = 0; i < c->n_workers; i++) reap(c->worker[i]);
    for (int i = 0; i < 2; i++) reap(c->ps[i]);
    tfc_cluster_clear(cl);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tfc_remote_value *schedule_step(tfc_coordinator *co, int64_t step, tfc_status *st) {
    tfc_tensor *a = tfc_scalar_i64(step, st);
    tfc_remote_value *rv = tfc_coordinator_schedule(co, "train_step", &a, 1, st);
    tfc_tensor_unref(a);
    return rv;
}

static float read_scalar(tfc_ps_variable *v, int64_t i) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_ps_variable_read(v, &st);
    const float r = t ? (float)tfc_tensor_get_f64(t, i) : NAN;
    tfc_tensor_unref(t);
    return r;
}

/* One worker and one step at a time: the same w and b, bit for bit, as the steps run here synchronously; with
 * faults, every request of the coordinator and of the worker may be duplicated or delayed: the same again. */
static void test_one_worker_equals_sync(const char *self, bool faults) {
    cluster_procs c = {.self = self};
    tfc_cluster cl;
    if (faults) setenv("PS_TEST_FAULTS", "1", 1); /* the worker's requests to ps tasks too */
    start_cluster(&c, 1, 0, &cl);
    unsetenv("PS_TEST_FAULTS");
    tfc_status st = TFC_STATUS_INIT;
    tfc_ps_strategy *s = tfc_parameter_server_strategy_new(&cl, NULL, 5, &st);
    if (s && faults) tfc_ps_strategy_inject_faults(s, 99, 0.3, 0.2, 3);
    REQUIRE(s && model_build(s, &st));
    tfc_coordinator *co = tfc_cluster_coordinator_new(s, &st);
    REQUIRE(co);
    const int steps = 30;
    float w[DIM] = {0}, b = 0, first = 0, last = 0;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    for (int k = 0; k < steps; k++) {
        tfc_remote_value *rv = schedule_step(co, k, &st);
        CHECK(rv && tfc_coordinator_join(co, &st));
        tfc_tensor *loss = rv ? tfc_remote_value_fetch(rv, 0, &st) : NULL;
        CHECK_OK(&st);
        /* the synchronous reference: the same gradients, the same float32 update as the ps task's ops */
        float gw[DIM], gb;
        const float ref_loss = gradients(k, w, b, gw, &gb);
        CHECK(loss && (float)tfc_tensor_get_f64(loss, 0) == ref_loss);
        for (int j = 0; j < DIM; j++) w[j] = w[j] - gw[j] * (float)LR;
        b = b - gb * (float)LR;
        if (k == 0) first = ref_loss;
        last = ref_loss;
        tfc_tensor_unref(loss);
    }
    tfc_tensor *rw = tfc_ps_variable_read(g_model.w, &st);
    REQUIRE(rw);
    int same = 0;
    for (int j = 0; j < DIM; j++) same += ((const float *)tfc_tensor_data(rw))[j] == w[j];
    CHECK(same == DIM);
    CHECK(read_scalar(g_model.b, 0) == b);
    CHECK(last < first * 0.5f);
    printf("one worker%s: %d steps, loss %.4f -> %.4f, equal to the synchronous run in %d/%d weights\n",
           faults ? " (duplicated and delayed requests)" : "", steps, first, last, same, DIM);
    int64_t executed, requeued;
    tfc_coordinator_stats(co, &executed, &requeued);
    CHECK(executed == steps && requeued == 0);
    /* a per-worker dataset: the worker's elements in order; after the worker restarts its iterator is made again */
    tfc_tensor *it = tfc_coordinator_create_per_worker_iterator(co, "numbers", &st);
    REQUIRE(it);
    for (int k = 0; k < 3; k++) {
        tfc_remote_value *rv = tfc_coordinator_schedule(co, "take", &it, 1, &st);
        tfc_tensor *v = rv ? tfc_remote_value_fetch(rv, 0, &st) : NULL;
        CHECK(v && tfc_tensor_get_f64(v, 0) == k);
        tfc_tensor_unref(v);
    }
    kill(c.worker[0], SIGKILL);
    waitpid(c.worker[0], NULL, 0);
    c.worker[0] = spawn(&c, "worker", 0);
    tfc_remote_value *rv = tfc_coordinator_schedule(co, "take", &it, 1, &st);
    tfc_tensor *v = rv ? tfc_remote_value_fetch(rv, 0, &st) : NULL;
    CHECK_OK(&st);
    CHECK(v && tfc_tensor_get_f64(v, 0) == 0);
    tfc_tensor_unref(v);
    tfc_tensor_unref(it);
    CHECK(!tfc_coordinator_create_per_worker_iterator(co, "nothing", &st) && st.code == TFC_NOT_FOUND);
    tfc_status_clear(&st);
    CHECK(!tfc_coordinator_schedule(co, "nothing", NULL, 0, &st) && st.code == TFC_NOT_FOUND);
    tfc_status_clear(&st);
    tfc_tensor_unref(rw);
    tfc_ctx_free(ctx);
    tfc_coordinator_free(co);
    tfc_ps_strategy_free(s);
    stop_cluster(&c, &cl);
}

/* 3 workers, workers SIGKILLed and restarted 5 times while steps run; then a ps task killed. */
static void test_worker_failures(const char *self) {
    cluster_procs c = {.self = self};
    tfc_cluster cl;
    start_cluster(&c, 3, 30, &cl);
    tfc_status st = TFC_STATUS_INIT;
    tfc_ps_strategy *s = tfc_parameter_server_strategy_new(&cl, NULL, COORD_TIMEOUT, &st);
    REQUIRE(s && model_build(s, &st));
    tfc_coordinator *co = tfc_cluster_coordinator_new(s, &st);
    REQUIRE(co);
    const int steps = MAX_STEPS;
    for (int k = 0; k < steps; k++) REQUIRE(schedule_step(co, k, &st));
    unsigned seed = (unsigned)time(NULL);
    srand(seed);
    /* 5 kills at random moments; a victim comes back at the same address after a random pause, the first one
     * only after the coordinator's timeout (its closure must move to another worker), others often before it
     * (then REQ resends the request to the restarted worker) */
    int kills = 0;
    double restart_at[3] = {0, 0, 0}, next_kill = now_s() + 0.2;
    for (;;) {
        usleep(20000);
        const double now = now_s();
        bool waiting = false;
        for (int v = 0; v < 3; v++) {
            if (restart_at[v] > 0 && now >= restart_at[v]) {
                c.worker[v] = spawn(&c, "worker", v);
                restart_at[v] = 0;
            }
            waiting |= restart_at[v] > 0;
        }
        if (kills < 5 && now >= next_kill && !tfc_coordinator_done(co)) {
            int victim = rand() % 3;
            while (restart_at[victim] > 0) victim = (victim + 1) % 3;
            if (restart_at[(victim + 1) % 3] > 0 && restart_at[(victim + 2) % 3] > 0) continue; /* keep one up */
            kill(c.worker[victim], SIGKILL);
            waitpid(c.worker[victim], NULL, 0);
            restart_at[victim] = now + (kills == 0 ? COORD_TIMEOUT + 1.0 : (rand() % 1500) / 1000.0);
            kills++;
            next_kill = now + 0.1 + (rand() % 300) / 1000.0;
        }
        if (!waiting && (kills == 5 || tfc_coordinator_done(co))) break;
    }
    CHECK(tfc_coordinator_join(co, &st));
    CHECK_OK(&st);
    int64_t executed, requeued;
    tfc_coordinator_stats(co, &executed, &requeued);
    tfc_tensor *hits = tfc_ps_variable_read(g_model.hits, &st);
    REQUIRE(hits);
    int once = 0;
    for (int k = 0; k < steps; k++) once += tfc_tensor_get_f64(hits, k) == 1;
    CHECK(once == steps);
    CHECK(executed == steps);
    CHECK(kills == 5);
    CHECK(requeued >= 1);
    printf("3 workers, %d kills (seed %u): %d steps each applied exactly once in %d/%d; %lld re-queued\n", kills, seed,
           steps, once, steps, (long long)requeued);
    tfc_tensor_unref(hits);

    /* a checkpoint; then a ps task dies: the next step and a read fail with UNAVAILABLE within the timeouts */
    char dir[] = "/tmp/tfc_ps_cluster_XXXXXX";
    REQUIRE(mkdtemp(dir));
    CHECK(tfc_ps_strategy_save(s, dir, &st));
    tfc_tensor *saved_w = tfc_ps_variable_read(g_model.w, &st);
    REQUIRE(saved_w);
    kill(c.ps[1], SIGKILL);
    waitpid(c.ps[1], NULL, 0);
    const double t0 = now_s();
    CHECK(schedule_step(co, 0, &st));
    CHECK(!tfc_coordinator_join(co, &st) && st.code == TFC_UNAVAILABLE);
    const double secs = now_s() - t0;
    printf("ps task killed: join -> %s after %.2f s: %s\n", tfc_code_name(st.code), secs, st.msg);
    CHECK(secs < COORD_TIMEOUT); /* the worker's ps timeout plus slack, below the coordinator's */
    tfc_status_clear(&st);
    tfc_ps_variable *on_ps1 = tfc_ps_variable_shard_task(g_model.w, 0) == 1 ? g_model.w : g_model.b;
    tfc_tensor *r = tfc_ps_variable_read(on_ps1, &st);
    CHECK(!r && st.code == TFC_UNAVAILABLE);
    tfc_status_clear(&st);
    tfc_coordinator_free(co);
    tfc_ps_strategy_free(s);

    /* the job restarts: the ps task comes back empty, the coordinator restores the checkpoint and trains on */
    c.ps[1] = spawn(&c, "ps", 1);
    REQUIRE(ping(tfc_cluster_address(&cl, "ps", 1), 20));
    s = tfc_parameter_server_strategy_new(&cl, NULL, COORD_TIMEOUT, &st);
    REQUIRE(s && model_build(s, &st));
    CHECK(tfc_ps_strategy_restore(s, dir, &st));
    tfc_tensor *restored = tfc_ps_variable_read(g_model.w, &st);
    CHECK(restored && !memcmp(tfc_tensor_data(restored), tfc_tensor_data(saved_w), tfc_tensor_byte_size(saved_w)));
    co = tfc_cluster_coordinator_new(s, &st);
    REQUIRE(co);
    for (int k = 0; k < 10; k++) CHECK(schedule_step(co, k, &st));
    CHECK(tfc_coordinator_join(co, &st));
    CHECK_OK(&st);
    tfc_tensor *h2 = tfc_ps_variable_read(g_model.hits, &st);
    CHECK(h2 && tfc_tensor_get_f64(h2, 0) == 2 && tfc_tensor_get_f64(h2, 10) == 1); /* restored, then once more */
    printf("restarted from the checkpoint: 10 more steps ran\n");
    tfc_tensor_unref(h2);
    tfc_tensor_unref(restored);
    tfc_tensor_unref(saved_w);
    const char *files[] = {"w.npy", "b.npy", "hits.npy"};
    for (int i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        CHECK(remove(path) == 0);
    }
    rmdir(dir);
    tfc_coordinator_free(co);
    tfc_ps_strategy_free(s);
    stop_cluster(&c, &cl);
}

/* `tfc ps` serves the TF_CONFIG task until `tfc ps --stop` asks it to stop. */
static void test_cli(void) {
    int port = ps_free_port();
    char json[256], addr[64];
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    snprintf(json, sizeof json, "{\"cluster\":{\"ps\":[\"%s\"]},\"task\":{\"type\":\"ps\",\"index\":0}}", addr);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(60);
        setenv("TF_CONFIG", json, 1);
        execl(TFC_TOOL, TFC_TOOL, "ps", (char *)NULL);
        _exit(127);
    }
    tfc_status st = TFC_STATUS_INIT;
    tfc_cluster cl;
    REQUIRE(tfc_cluster_resolve(json, &cl, &st));
    CHECK(ping(addr, 20));
    tfc_ps_strategy *s = tfc_parameter_server_strategy_new(&cl, NULL, 5, &st);
    tfc_tensor *one = tfc_scalar_i64(3, &st);
    tfc_ps_variable *v = s ? tfc_ps_variable_new(s, "counter", one, &st) : NULL;
    CHECK(v && tfc_ps_variable_assign_add(v, one, &st));
    tfc_tensor *r = v ? tfc_ps_variable_read(v, &st) : NULL;
    CHECK(r && tfc_tensor_get_f64(r, 0) == 6);
    CHECK_OK(&st);
    /* `tfc ps --stop` */
    pid_t stopper = fork();
    if (stopper == 0) {
        execl(TFC_TOOL, TFC_TOOL, "ps", "--stop", addr, (char *)NULL);
        _exit(127);
    }
    int ws = -1, ps_status = -1;
    waitpid(stopper, &ws, 0);
    CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
    for (int i = 0; i < 200 && waitpid(pid, &ps_status, WNOHANG) != pid; i++) usleep(50000);
    CHECK(WIFEXITED(ps_status) && WEXITSTATUS(ps_status) == 0);
    if (!WIFEXITED(ps_status)) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    tfc_tensor_unref(r);
    tfc_tensor_unref(one);
    tfc_ps_strategy_free(s);
    tfc_cluster_clear(&cl);
}

int main(int argc, char **argv) {
    REQUIRE(tfc_remote_function_register("train_step", train_step, &g_model, &(tfc_status)TFC_STATUS_INIT));
    REQUIRE(tfc_remote_function_register("take", take, NULL, &(tfc_status)TFC_STATUS_INIT));
    REQUIRE(tfc_remote_dataset_register("numbers", numbers, NULL, &(tfc_status)TFC_STATUS_INIT));
    if (argc == 6 && !strcmp(argv[1], "--task")) return run_task(argv[2], argv[3], atoi(argv[4]), atoi(argv[5]));
    signal(SIGPIPE, SIG_IGN);
    test_cli();
    test_one_worker_equals_sync(argv[0], false);
    test_one_worker_equals_sync(argv[0], true);
    test_worker_failures(argv[0]);
    TEST_MAIN_END();
}
