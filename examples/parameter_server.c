/* Asynchronous training with parameter servers (TensorFlow's "Parameter server training" tutorial, in C): a
 * softmax classifier on Fashion-MNIST whose weights are sharded over 2 ps tasks, trained by 2 worker tasks that
 * the coordinator (the chief) schedules steps on. Every task runs this same program and takes its role from
 * TF_CONFIG; the workers run the function `train_step`, registered by name, on batches of their own per-worker
 * dataset, and apply SGD on the ps tasks. The chief then reads the weights and reports the test accuracy.
 *
 *   ./parameter_server --local [steps]         starts 2 ps and 2 worker processes itself and coordinates them
 * or by hand, one process per task (ports free on this machine):
 *   C='"cluster":{"chief":["127.0.0.1:7000"],"worker":["127.0.0.1:7001","127.0.0.1:7002"],
 *                 "ps":["127.0.0.1:7003","127.0.0.1:7004"]}'
 *   TF_CONFIG="{$C,\"task\":{\"type\":\"ps\",\"index\":0}}" ./parameter_server &    (and ps 1, workers 0 and 1)
 *   TF_CONFIG="{$C,\"task\":{\"type\":\"chief\",\"index\":0}}" ./parameter_server [steps]
 * The chief stops the ps and worker tasks when it is done. */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tfc/ops/array.h"
#include "tfc/ops/linalg.h"
#include "tfc/ops/math.h"
#include "tfc/ops/nn.h"
#include "tfc/ops/reduction.h"
#include "tfc/tfc.h"

#define BATCH 64
#define LR 0.1

typedef struct {
    tfc_ctx *ctx;
    tfc_ps_strategy *strategy;
    tfc_ps_variable *w, *b;
    tfc_tensor *x_train, *y_train;  /* workers: [60000, 784] float32, [60000] int32 */
    int num_workers;
} program;
static program P;

/* images uint8 [n, 28, 28] -> float32 [n, 784] / 255; labels -> int32 */
static bool prepare(const tfc_tensor *images, const tfc_tensor *labels, tfc_tensor **x, tfc_tensor **y,
                    tfc_status *st) {
    tfc_tensor *f = tfc_cast(P.ctx, images, TFC_FLOAT, st), *k = tfc_scalar_f32(1.0f / 255.0f, st);
    tfc_tensor *s = f && k ? tfc_mul(P.ctx, f, k, st) : NULL;
    *x = s ? tfc_reshape(P.ctx, s, (int64_t[]){tfc_tensor_dim(images, 0), 784}, 2, st) : NULL;
    *y = *x ? tfc_cast(P.ctx, labels, TFC_INT32, st) : NULL;
    tfc_tensor_unref(f);
    tfc_tensor_unref(k);
    tfc_tensor_unref(s);
    return *y != NULL;
}

/* The per-worker dataset: this worker's shard of the training set, shuffled, repeated, in batches. */
static tfc_dataset *train_dataset(int worker, void *user, tfc_status *st) {
    (void)user;
    tfc_tensor *parts[2] = {P.x_train, P.y_train};
    return tfc_dataset_batch(
        tfc_dataset_repeat(tfc_dataset_shuffle(tfc_dataset_shard(tfc_dataset_from_tensor_slices(parts, 2, NULL, st),
                                                                 P.num_workers, worker, st),
                                               1024, NULL, st),
                           -1, st),
        BATCH, &(tfc_batch_opts){.drop_remainder = true}, st);
}

/* logits = x w + b */
static tfc_tensor *logits_of(const tfc_tensor *x, const tfc_tensor *w, const tfc_tensor *b, tfc_status *st) {
    tfc_tensor *m = tfc_matmul(P.ctx, x, w, false, false, st);
    tfc_tensor *l = m ? tfc_add(P.ctx, m, b, st) : NULL;
    tfc_tensor_unref(m);
    return l;
}

/* One step on a worker: next batch of the per-worker iterator (argument 0), the cross-entropy's gradients
 * (softmax - one_hot, through the weights), SGD applied on the ps tasks; returns the batch's mean loss. */
static bool train_step(tfc_tensor *const *args, int n_args, tfc_tensor **out, int *n_out, void *user, tfc_status *st) {
    (void)user;
    if (n_args != 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "train_step takes the per-worker iterator");
    tfc_tensor *xy[2] = {NULL, NULL};
    if (!tfc_per_worker_iterator_next(args[0], xy, 2, st)) return false;
    tfc_tensor *w = tfc_ps_variable_read(P.w, st), *b = w ? tfc_ps_variable_read(P.b, st) : NULL, *bp = NULL;
    tfc_tensor *logits = b ? logits_of(xy[0], w, b, st) : NULL;
    tfc_tensor *loss = logits ? tfc_sparse_softmax_cross_entropy_with_logits(P.ctx, xy[1], logits, &bp, st) : NULL;
    tfc_tensor *inv = tfc_scalar_f32(1.0f / BATCH, st);
    tfc_tensor *g = loss ? tfc_mul(P.ctx, bp, inv, st) : NULL;                   /* d mean / d logits */
    tfc_tensor *gw = g ? tfc_matmul(P.ctx, xy[0], g, true, false, st) : NULL;    /* x^T g */
    tfc_tensor *gb = gw ? tfc_reduce_sum(P.ctx, g, (int64_t[]){0}, 1, false, st) : NULL;
    tfc_tensor *mean = gb ? tfc_reduce_mean(P.ctx, loss, (int64_t[]){0}, 1, false, st) : NULL;
    const bool ok = mean && tfc_ps_variable_apply_sgd(P.w, gw, LR, st) && tfc_ps_variable_apply_sgd(P.b, gb, LR, st);
    if (ok) {
        out[0] = tfc_tensor_ref(mean);
        *n_out = 1;
    }
    tfc_tensor *all[] = {w, b, logits, loss, bp, inv, g, gw, gb, mean};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) tfc_tensor_unref(all[i]);
    tfc_tensor_unref(xy[0]);
    tfc_tensor_unref(xy[1]);
    return ok;
}

/* The variables, created in the same order by every task: w [784, 10] in 2 shards, b [10]. */
static bool build_variables(tfc_status *st) {
    tfc_tensor *w0 = tfc_tensor_new(TFC_FLOAT, (int64_t[]){784, 10}, 2, st);
    tfc_tensor *b0 = tfc_tensor_new(TFC_FLOAT, (int64_t[]){10}, 1, st);
    P.w = w0 && b0 ? tfc_ps_variable_new(P.strategy, "dense/kernel", w0, st) : NULL;
    P.b = P.w ? tfc_ps_variable_new(P.strategy, "dense/bias", b0, st) : NULL;
    tfc_tensor_unref(w0);
    tfc_tensor_unref(b0);
    return P.b != NULL;
}

static double accuracy(const tfc_tensor *x, const tfc_tensor *y, tfc_status *st) {
    tfc_tensor *w = tfc_ps_variable_read(P.w, st), *b = w ? tfc_ps_variable_read(P.b, st) : NULL;
    tfc_tensor *l = b ? logits_of(x, w, b, st) : NULL;
    tfc_tensor *pred = l ? tfc_argmax(P.ctx, l, 1, TFC_INT32, st) : NULL;
    double right = 0;
    for (int64_t i = 0; pred && i < tfc_tensor_num_elements(pred); i++)
        right += ((const int32_t *)tfc_tensor_data(pred))[i] == ((const int32_t *)tfc_tensor_data(y))[i];
    const double acc = pred ? right / (double)tfc_tensor_dim(y, 0) : -1;
    tfc_tensor_unref(w);
    tfc_tensor_unref(b);
    tfc_tensor_unref(l);
    tfc_tensor_unref(pred);
    return acc;
}

static int coordinate(const tfc_cluster *cl, int64_t steps, const tfc_dataset_arrays *d, tfc_status *st) {
    tfc_coordinator *co = tfc_cluster_coordinator_new(P.strategy, st);
    tfc_tensor *it = co ? tfc_coordinator_create_per_worker_iterator(co, "train_dataset", st) : NULL;
    tfc_tensor *x_test = NULL, *y_test = NULL;
    tfc_remote_value *last = NULL;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int64_t k = 0; it && k < steps; k++)
        if (!(last = tfc_coordinator_schedule(co, "train_step", &it, 1, st))) break;
    bool ok = last && tfc_coordinator_join(co, st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    tfc_tensor *loss = ok ? tfc_remote_value_fetch(last, 0, st) : NULL;
    ok = loss && prepare(d->x_test, d->y_test, &x_test, &y_test, st);
    if (ok) {
        int64_t executed, requeued;
        tfc_coordinator_stats(co, &executed, &requeued);
        const double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        printf("%lld steps on %d workers in %.2f s (%.1f ms/step), %lld re-queued; last loss %.4f\n",
               (long long)executed, P.num_workers, secs, secs * 1e3 / (double)steps, (long long)requeued,
               tfc_tensor_get_f64(loss, 0));
        const double acc = accuracy(x_test, y_test, st);
        ok = acc >= 0;
        if (ok) printf("chief done: test_accuracy=%.4f\n", acc);
    }
    tfc_tensor_unref(loss);
    tfc_tensor_unref(it);
    tfc_tensor_unref(x_test);
    tfc_tensor_unref(y_test);
    tfc_coordinator_free(co);
    tfc_status ss = TFC_STATUS_INIT; /* stop every task, whatever happened */
    for (int i = 0; i < P.num_workers; i++) tfc_server_stop_remote(tfc_cluster_address(cl, "worker", i), 5, &ss);
    for (int i = 0; i < tfc_ps_strategy_num_ps(P.strategy); i++)
        tfc_server_stop_remote(tfc_cluster_address(cl, "ps", i), 5, &ss);
    return ok ? 0 : 1;
}

/* Runs the task TF_CONFIG names. */
static int run_task(int64_t steps) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_cluster cl;
    tfc_dataset_arrays d = {0};
    tfc_server *server = NULL;
    int rc = 1;
    if (!tfc_cluster_resolve(NULL, &cl, &st)) return fprintf(stderr, "TF_CONFIG: %s\n", st.msg), 2;
    const bool ps = !strcmp(cl.task_type, "ps"), worker = !strcmp(cl.task_type, "worker");
    if (!(P.ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1, .seed = 42, .has_seed = true}, &st))) goto done;
    if (ps) {
        if ((server = tfc_server_new(&cl, "ps", cl.task_id, NULL, &st)) && tfc_server_join(server, &st)) rc = 0;
        goto done;
    }
    for (int j = 0; j < cl.n_jobs; j++)
        if (!strcmp(cl.jobs[j].name, "worker")) P.num_workers = cl.jobs[j].n_tasks;
    /* workers' requests to ps tasks time out before the coordinator's to workers */
    if (!(P.strategy = tfc_parameter_server_strategy_new(&cl, &(tfc_variable_partitioner){.kind = TFC_PARTITION_FIXED,
                                                                                          .num_shards = 2},
                                                         worker ? 20 : 60, &st)) ||
        !build_variables(&st) || !tfc_datasets_fashion_mnist_load(NULL, &d, &st))
        goto done;
    if (worker) {
        if (prepare(d.x_train, d.y_train, &P.x_train, &P.y_train, &st) &&
            (server = tfc_server_new(&cl, "worker", cl.task_id, NULL, &st)) && tfc_server_join(server, &st))
            rc = 0;
    } else {
        rc = coordinate(&cl, steps, &d, &st);
    }
done:
    if (st.code != TFC_OK) fprintf(stderr, "%s %d: %s: %s\n", cl.task_type, cl.task_id, tfc_code_name(st.code), st.msg);
    tfc_server_free(server);
    tfc_tensor_unref(P.x_train);
    tfc_tensor_unref(P.y_train);
    tfc_datasets_free(&d);
    tfc_ps_strategy_free(P.strategy);
    tfc_ctx_free(P.ctx);
    tfc_cluster_clear(&cl);
    return rc;
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

/* --local: 2 ps and 2 worker processes of this program, the coordinator here. */
static int run_local(const char *self, int64_t steps) {
    char cluster[512], config[640];
    int p[5];
    for (int i = 0; i < 5; i++) p[i] = free_port();
    snprintf(cluster, sizeof cluster, "\"cluster\":{\"chief\":[\"127.0.0.1:%d\"],\"worker\":[\"127.0.0.1:%d\","
             "\"127.0.0.1:%d\"],\"ps\":[\"127.0.0.1:%d\",\"127.0.0.1:%d\"]}", p[0], p[1], p[2], p[3], p[4]);
    const char *types[4] = {"ps", "ps", "worker", "worker"};
    pid_t kids[4];
    for (int i = 0; i < 4; i++) {
        snprintf(config, sizeof config, "{%s,\"task\":{\"type\":\"%s\",\"index\":%d}}", cluster, types[i], i % 2);
        if ((kids[i] = fork()) == 0) {
            alarm(600);
            setenv("TF_CONFIG", config, 1);
            execl(self, self, (char *)NULL);
            _exit(127);
        }
    }
    snprintf(config, sizeof config, "{%s,\"task\":{\"type\":\"chief\",\"index\":0}}", cluster);
    setenv("TF_CONFIG", config, 1);
    int rc = run_task(steps);
    for (int i = 0; i < 4; i++) {
        int ws = 0, k = 0;
        while (waitpid(kids[i], &ws, WNOHANG) != kids[i] && k++ < 200) nanosleep(&(struct timespec){0, 50000000}, NULL);
        if (k > 200) {
            kill(kids[i], SIGKILL);
            waitpid(kids[i], &ws, 0);
        }
        if (!WIFEXITED(ws) || WEXITSTATUS(ws)) rc = 1;
    }
    return rc;
}

int main(int argc, char **argv) {
    const bool local = argc > 1 && !strcmp(argv[1], "--local");
    const int64_t steps = argc > 1 + local ? atoll(argv[1 + local]) : 600;
    tfc_status st = TFC_STATUS_INIT;
    if (steps < 1) return fprintf(stderr, "usage: %s [--local] [steps]\n", argv[0]), 2;
    if (!tfc_remote_function_register("train_step", train_step, NULL, &st) ||
        !tfc_remote_dataset_register("train_dataset", train_dataset, NULL, &st))
        return fprintf(stderr, "%s\n", st.msg), 1;
    signal(SIGPIPE, SIG_IGN);
    return local ? run_local(argv[0], steps) : run_task(steps);
}
