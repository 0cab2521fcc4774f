/* tf.distribute: TF_CONFIG, collectives against a serial reference (local thread group, and Open MPI between
 * processes started by mpirun and by TF_CONFIG), MirroredStrategy, and Keras fit under a strategy compared with
 * a single-process fit. Child processes are started by this test (fork/exec or mpirun), on loopback and shared
 * memory only, each bounded by a timeout; only their PIDs are signalled. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tfc_test.h"

/* ---- serial references ------------------------------------------------------------------------------------- */
static double val(int rank, int64_t i) { return (double)((rank + 1) * 3 + (i % 7)) * 0.25; }

static tfc_tensor *member_tensor(tfc_dtype dt, const int64_t *dims, int rank_, int member) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(dt, dims, rank_, &st);
    for (int64_t i = 0; t && i < tfc_tensor_num_elements(t); i++)
        tfc_dtype_set_f64(dt, tfc_tensor_mutable_data(t), i, dt == TFC_INT32 || dt == TFC_INT64 ? (double)(member * 5 + i % 11) : val(member, i));
    return t;
}

/* Checks all-reduce, broadcast, all-gather (ragged), zero-size, single-element and a shape mismatch on one
 * member of a group of `size`; returns failures. */
static int check_collectives(tfc_collective *c) {
    int fails = tfc_test_failures, me = tfc_collective_rank(c), n = tfc_collective_size(c);
    tfc_status st = TFC_STATUS_INIT;
    const tfc_dtype dts[] = {TFC_FLOAT, TFC_DOUBLE, TFC_HALF, TFC_BFLOAT16, TFC_INT32, TFC_INT64};
    const int64_t shapes[][2] = {{3, 5}, {0, 4}, {1, 1}};
    for (size_t d = 0; d < sizeof dts / sizeof *dts; d++)
        for (int s = 0; s < 3; s++)
            for (int op = 0; op < 2; op++) {
                tfc_tensor *t = member_tensor(dts[d], shapes[s], 2, me);
                tfc_tensor *r = tfc_collective_all_reduce(c, t, (tfc_reduce_op)op, &st);
                CHECK_OK(&st);
                REQUIRE(r);
                CHECK(tfc_shape_equal(tfc_tensor_shape(r), tfc_tensor_shape(t)));
                for (int64_t i = 0; i < tfc_tensor_num_elements(r); i++) {
                    double want = 0;
                    for (int m = 0; m < n; m++) {
                        tfc_tensor *o = member_tensor(dts[d], shapes[s], 2, m);
                        want += tfc_tensor_get_f64(o, i);
                        tfc_tensor_unref(o);
                    }
                    bool integer = dts[d] == TFC_INT32 || dts[d] == TFC_INT64;
                    if (op == TFC_REDUCE_MEAN) want = integer ? (double)((int64_t)want / n) : want / n;
                    double tol = dts[d] == TFC_HALF ? 1e-2 * fabs(want) : dts[d] == TFC_BFLOAT16 ? 1e-2 * fabs(want) + 1e-2 : 1e-6;
                    if (fabs(tfc_tensor_get_f64(r, i) - want) > tol) {
                        CHECK(!"all_reduce value");
                        fprintf(stderr, "member %d dtype %s op %d [%lld]: got %g want %g\n", me,
                                tfc_dtype_name(dts[d]), op, (long long)i, tfc_tensor_get_f64(r, i), want);
                        break;
                    }
                }
                tfc_tensor_unref(r);
                tfc_tensor_unref(t);
            }
    /* broadcast from the last member */
    tfc_tensor *t = member_tensor(TFC_FLOAT, (int64_t[]){4}, 1, me), *b = tfc_collective_broadcast(c, t, n - 1, &st);
    CHECK_OK(&st);
    REQUIRE(b);
    for (int i = 0; i < 4; i++) CHECK(tfc_tensor_get_f64(b, i) == (double)(float)val(n - 1, i));
    tfc_tensor_unref(b);
    tfc_tensor_unref(t);
    /* all_gather with a ragged first dim: member m has m + 1 rows (member 0 of a pair: none) */
    int64_t rows = me == 0 ? 0 : me + 1;
    t = member_tensor(TFC_INT64, (int64_t[]){rows, 2}, 2, me);
    tfc_tensor *g = tfc_collective_all_gather(c, t, &st);
    CHECK_OK(&st);
    REQUIRE(g);
    int64_t total = 0, k = 0;
    for (int m = 0; m < n; m++) total += m == 0 ? 0 : m + 1;
    CHECK(tfc_tensor_dim(g, 0) == total && tfc_tensor_dim(g, 1) == 2);
    for (int m = 0; m < n; m++)
        for (int64_t i = 0; i < (m == 0 ? 0 : m + 1) * 2; i++, k++) CHECK(tfc_tensor_get_f64(g, k) == (double)(m * 5 + i % 11));
    tfc_tensor_unref(g);
    tfc_tensor_unref(t);
    /* scalar gather */
    t = tfc_scalar_f32((float)me, &st);
    g = tfc_collective_all_gather(c, t, &st);
    REQUIRE(g);
    CHECK(tfc_tensor_rank(g) == 1 && tfc_tensor_dim(g, 0) == n && tfc_tensor_get_f64(g, n - 1) == n - 1);
    tfc_tensor_unref(g);
    tfc_tensor_unref(t);
    /* fused packs */
    tfc_tensor *ts[3] = {member_tensor(TFC_FLOAT, (int64_t[]){5}, 1, me), member_tensor(TFC_FLOAT, (int64_t[]){2, 3}, 2, me),
                         member_tensor(TFC_DOUBLE, (int64_t[]){2}, 1, me)};
    CHECK(tfc_collective_all_reduce_n(c, ts, 3, TFC_REDUCE_SUM, 24, &st));
    CHECK_OK(&st);
    for (int j = 0; j < 3; j++) {
        double want = 0;
        for (int m = 0; m < n; m++) want += val(m, 1);
        CHECK(fabs(tfc_tensor_get_f64(ts[j], 1) - want) < 1e-5);
        tfc_tensor_unref(ts[j]);
    }
    /* one pack of large tensors (its header carries element counts, not a tensor of them) */
    tfc_tensor *big[3] = {member_tensor(TFC_FLOAT, (int64_t[]){3000}, 1, me), member_tensor(TFC_FLOAT, (int64_t[]){40, 100}, 2, me),
                          member_tensor(TFC_FLOAT, (int64_t[]){5000}, 1, me)};
    CHECK(tfc_collective_all_reduce_n(c, big, 3, TFC_REDUCE_MEAN, 0, &st));
    CHECK_OK(&st);
    for (int j = 0; j < 3; j++) {
        double want = 0;
        for (int m = 0; m < n; m++) want += val(m, 2999);
        CHECK(fabs(tfc_tensor_get_f64(big[j], 2999) - want / n) < 1e-5);
        tfc_tensor_unref(big[j]);
    }
    /* mismatched shapes: every member gets INVALID_ARGUMENT naming both shapes, and the group stays usable */
    if (n == 1) return tfc_test_failures - fails;
    t = member_tensor(TFC_FLOAT, (int64_t[]){2, me == n - 1 ? 4 : 3}, 2, me);
    tfc_tensor *r = tfc_collective_all_reduce(c, t, TFC_REDUCE_SUM, &st);
    CHECK(!r && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "[2,3]") && strstr(st.msg, "[2,4]"));
    if (st.code != TFC_INVALID_ARGUMENT) fprintf(stderr, "member %d: %s\n", me, st.msg);
    tfc_status_clear(&st);
    tfc_tensor_unref(t);
    t = member_tensor(TFC_FLOAT, (int64_t[]){2}, 1, me);
    CHECK((r = tfc_collective_all_reduce(c, t, TFC_REDUCE_SUM, &st)) != NULL);
    tfc_tensor_unref(r);
    tfc_tensor_unref(t);
    return tfc_test_failures - fails;
}

typedef struct {
    tfc_collective *c;
} member_arg;
static void *member_main(void *p) {
    check_collectives(((member_arg *)p)->c);
    return NULL;
}

static void test_local_collectives(void) {
    for (int n = 1; n <= 3; n++) {
        tfc_collective *m[3];
        tfc_status st = TFC_STATUS_INIT;
        REQUIRE(tfc_collective_local_group(n, 10, m, &st));
        pthread_t th[3];
        member_arg a[3];
        for (int i = 0; i < n; i++) {
            a[i].c = m[i];
            pthread_create(&th[i], NULL, member_main, &a[i]);
        }
        for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < n; i++) tfc_collective_free(m[i]);
    }
    /* a member that never comes: UNAVAILABLE naming it, within the timeout */
    tfc_collective *m[2];
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_collective_local_group(2, 0.3, m, &st));
    tfc_tensor *t = tfc_scalar_f32(1, &st), *r = tfc_collective_all_reduce(m[0], t, TFC_REDUCE_SUM, &st);
    CHECK(!r && st.code == TFC_UNAVAILABLE && strstr(st.msg, "replicas [1]"));
    tfc_status_clear(&st);
    CHECK(!tfc_collective_all_reduce(m[0], t, TFC_REDUCE_SUM, &st) && st.code == TFC_UNAVAILABLE);
    tfc_tensor_unref(t);
    tfc_collective_free(m[0]);
    tfc_collective_free(m[1]);
}

/* ---- TF_CONFIG --------------------------------------------------------------------------------------------- */
static void test_tf_config(void) {
    tfc_cluster c;
    tfc_status st = TFC_STATUS_INIT;
    char buf[64];
    CHECK(tfc_cluster_resolve("{}", &c, &st) && c.is_chief && c.num_workers == 1);
    tfc_cluster_clear(&c);
    CHECK(tfc_cluster_resolve("{\"cluster\":{\"worker\":[\"a:1\",\"b:2\"]},\"task\":{\"type\":\"worker\",\"index\":0}}", &c, &st));
    CHECK(c.is_chief && c.num_workers == 2 && c.worker_id == 0);
    CHECK(!strcmp(tfc_cluster_leader(&c, buf, sizeof buf), "/job:worker/replica:0/task:0"));
    tfc_cluster_clear(&c);
    CHECK(tfc_cluster_resolve("{\"cluster\":{\"worker\":[\"a:1\",\"b:2\"],\"chief\":[\"c:3\"]},"
                              "\"task\":{\"type\":\"worker\",\"index\":1}}", &c, &st));
    CHECK(!c.is_chief && c.worker_id == 2 && c.num_workers == 3);
    CHECK(!strcmp(tfc_cluster_leader(&c, buf, sizeof buf), "/job:chief/replica:0/task:0"));
    CHECK(!strcmp(tfc_cluster_address(&c, "chief", 0), "c:3") && !strcmp(c.rpc_layer, "grpc"));
    tfc_cluster_clear(&c);
    CHECK(tfc_cluster_resolve("{\"cluster\":{\"worker\":{\"1\":\"b:2\"}},\"task\":{\"type\":\"worker\",\"index\":\"1\"}}", &c, &st));
    CHECK(!strcmp(tfc_cluster_address(&c, "worker", 1), "b:2") && c.task_id == 1);
    tfc_cluster_clear(&c);
    const char *bad[] = {
        "{\"cluster\":{\"worker\":[\"a:1\"]},\"task\":{\"type\":\"master\",\"index\":0}}",
        "{\"cluster\":{\"worker\":[\"a:1\"]},\"task\":{\"type\":\"worker\",\"index\":1}}",
        "{\"cluster\":{\"chief\":[\"a:1\",\"b:1\"]},\"task\":{\"type\":\"chief\",\"index\":0}}",
        "{\"cluster\":{\"evaluator\":[\"a:1\",\"b:1\"],\"worker\":[\"c:1\"]},\"task\":{\"type\":\"worker\",\"index\":0}}",
        "{\"cluster\":{\"worker\":[\"a:1\"]}}",
        "{\"cluster\":",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tfc_status_clear(&st);
        CHECK(!tfc_cluster_resolve(bad[i], &c, &st) && st.code == TFC_INVALID_ARGUMENT);
    }
    CHECK(strstr(st.msg, "offset") != NULL);
}

/* ---- MirroredStrategy -------------------------------------------------------------------------------------- */
static bool replica_fn(tfc_replica_ctx *rc, tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                       int n_out, tfc_status *st) {
    float v = (float)(tfc_replica_id_in_sync_group(rc) + 1) * (float)tfc_tensor_get_f64(in[0], 0);
    tfc_tensor *t = tfc_scalar_f32(v, st);
    out[0] = t ? tfc_replica_all_reduce(rc, TFC_REDUCE_MEAN, t, st) : NULL;
    tfc_tensor_unref(t);
    return out[0] != NULL;
}
static bool merge_fn(tfc_strategy *s, tfc_ctx *ctx, void *user, const tfc_per_replica *v, tfc_tensor **result,
                     tfc_status *st) {
    double sum = 0;
    for (int i = 0; i < v->n; i++) sum += tfc_tensor_get_f64(v->values[i], 0);
    return (*result = tfc_scalar_f64(sum * 10, st)) != NULL;
}
static bool merging_fn(tfc_replica_ctx *rc, tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in,
                       tfc_tensor **out, int n_out, tfc_status *st) {
    tfc_tensor *t = tfc_scalar_f64(tfc_replica_id_in_sync_group(rc), st);
    bool ok = tfc_replica_merge_call(rc, merge_fn, NULL, t, &out[0], st);
    tfc_tensor_unref(t);
    return ok;
}
static bool failing_fn(tfc_replica_ctx *rc, tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                       int n_out, tfc_status *st) {
    if (tfc_replica_id_in_sync_group(rc) == 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "replica one fails");
    return replica_fn(rc, ctx, user, in, n_in, out, n_out, st);
}

/* Replica r assigns (r + 1) * in[0] to the mirrored variable, adds r + 1 to the sync-on-read one, and tries to
 * assign the NONE-aggregated one. */
static tfc_dist_variable *g_mean_var, *g_sum_var, *g_none_var, *g_first_var;
static bool var_fn(tfc_replica_ctx *rc, tfc_ctx *ctx, void *user, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                   int n_out, tfc_status *st) {
    int r = tfc_replica_id_in_sync_group(rc);
    tfc_tensor *v = tfc_scalar_f32((float)(r + 1) * (float)tfc_tensor_get_f64(in[0], 0), st);
    bool ok = v && tfc_replica_assign(rc, g_mean_var, v, st) && tfc_replica_assign_add(rc, g_sum_var, v, st) &&
              tfc_replica_assign(rc, g_first_var, v, st);
    tfc_status st2 = TFC_STATUS_INIT;
    CHECK(!tfc_replica_assign(rc, g_none_var, v, &st2) && st2.code == TFC_INVALID_ARGUMENT &&
          strstr(st2.msg, "aggregation method"));
    /* each replica reads the mirrored variable's new value */
    tfc_tensor *now = ok ? tfc_variable_read(ctx, tfc_dist_variable_local(g_mean_var, rc), st) : NULL;
    CHECK(now && tfc_tensor_get_f64(now, 0) == 4.0);
    tfc_tensor_unref(now);
    tfc_tensor_unref(v);
    out[0] = ok ? tfc_scalar_f32(0, st) : NULL;
    return ok;
}

static void test_variables(tfc_strategy *s) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *zero = tfc_scalar_f32(0, &st), *two = tfc_scalar_f32(2, &st);
    g_mean_var = tfc_strategy_variable_new(s, zero, true, "m", TFC_VARIABLE_SYNCHRONIZATION_ON_WRITE, TFC_VARIABLE_AGGREGATION_MEAN, &st);
    g_sum_var = tfc_strategy_variable_new(s, zero, false, "s", TFC_VARIABLE_SYNCHRONIZATION_ON_READ, TFC_VARIABLE_AGGREGATION_SUM, &st);
    g_none_var = tfc_strategy_variable_new(s, zero, true, "n", TFC_VARIABLE_SYNCHRONIZATION_AUTO, TFC_VARIABLE_AGGREGATION_NONE, &st);
    g_first_var = tfc_strategy_variable_new(s, zero, true, "f", TFC_VARIABLE_SYNCHRONIZATION_AUTO, TFC_VARIABLE_AGGREGATION_ONLY_FIRST_REPLICA, &st);
    REQUIRE(g_mean_var && g_sum_var && g_none_var && g_first_var);
    CHECK(!tfc_strategy_variable_new(s, zero, true, "x", TFC_VARIABLE_SYNCHRONIZATION_ON_READ, TFC_VARIABLE_AGGREGATION_SUM, &st) &&
          st.code == TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    tfc_per_replica arg = {.n = 3, .values = {two, two, two}}, out;
    for (int k = 0; k < 2; k++) { /* twice: the sync-on-read copies accumulate */
        CHECK(tfc_strategy_run(s, var_fn, NULL, &arg, 1, &out, 1, &st));
        CHECK_OK(&st);
        tfc_per_replica_clear(&out);
    }
    tfc_tensor *r = tfc_dist_variable_read(g_mean_var, &st); /* mean of 2, 4, 6 */
    CHECK(r && tfc_tensor_get_f64(r, 0) == 4.0);
    tfc_tensor_unref(r);
    r = tfc_dist_variable_read(g_sum_var, &st); /* 2 * (2 + 4 + 6) */
    CHECK(r && tfc_tensor_get_f64(r, 0) == 24.0);
    tfc_tensor_unref(r);
    r = tfc_dist_variable_read(g_first_var, &st);
    CHECK(r && tfc_tensor_get_f64(r, 0) == 2.0);
    tfc_tensor_unref(r);
    tfc_dist_variable_free(g_mean_var);
    tfc_dist_variable_free(g_sum_var);
    tfc_dist_variable_free(g_none_var);
    tfc_dist_variable_free(g_first_var);
    tfc_tensor_unref(zero);
    tfc_tensor_unref(two);
}

static void test_mirrored(tfc_ctx *ctx) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_strategy *s = tfc_mirrored_strategy_new(ctx, &(tfc_mirrored_opts){.num_replicas = 3}, &st);
    REQUIRE(s);
    CHECK(tfc_strategy_num_replicas_in_sync(s) == 3 && tfc_strategy_is_chief(s));
    tfc_tensor *two = tfc_scalar_f32(2, &st);
    tfc_per_replica arg = {.n = 3, .values = {two, two, two}}, out;
    CHECK(tfc_strategy_run(s, replica_fn, NULL, &arg, 1, &out, 1, &st));
    CHECK_OK(&st);
    for (int i = 0; i < 3; i++) CHECK(out.values[i] && tfc_tensor_get_f64(out.values[i], 0) == 4.0); /* (2+4+6)/3 */
    tfc_tensor *r = tfc_strategy_reduce(s, TFC_REDUCE_SUM, &out, false, 0, &st);
    CHECK(r && tfc_tensor_get_f64(r, 0) == 12.0);
    tfc_tensor_unref(r);
    tfc_per_replica_clear(&out);
    CHECK(tfc_strategy_run(s, merging_fn, NULL, NULL, 0, &out, 1, &st));
    for (int i = 0; i < 3; i++) CHECK(out.values[i] && tfc_tensor_get_f64(out.values[i], 0) == 30.0);
    tfc_per_replica_clear(&out);
    /* a failing replica fails the run (the others do not hang), and the strategy stays usable */
    CHECK(!tfc_strategy_run(s, failing_fn, NULL, &arg, 1, &out, 1, &st) && strstr(st.msg, "replica one fails"));
    tfc_status_clear(&st);
    CHECK(tfc_strategy_run(s, replica_fn, NULL, &arg, 1, &out, 1, &st));
    tfc_per_replica_clear(&out);
    /* reduce MEAN over an axis, gather along axis 1 */
    tfc_per_replica v = {.n = 3};
    for (int i = 0; i < 3; i++) v.values[i] = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){i + 1, 2}, 2, (float[]){1, 2, 3, 4, 5, 6}, (size_t)(i + 1) * 8, &st);
    r = tfc_strategy_reduce(s, TFC_REDUCE_MEAN, &v, true, 0, &st);
    /* rows: [1,2] | [1,2],[3,4] | [1,2],[3,4],[5,6]: column sums 14, 20 over 6 rows */
    CHECK(r && fabs(tfc_tensor_get_f64(r, 0) - 14.0 / 6) < 1e-6 && fabs(tfc_tensor_get_f64(r, 1) - 20.0 / 6) < 1e-6);
    tfc_tensor_unref(r);
    r = tfc_strategy_gather(s, &v, 0, &st);
    CHECK(r && tfc_tensor_dim(r, 0) == 6 && tfc_tensor_get_f64(r, 11) == 6);
    tfc_tensor_unref(r);
    tfc_per_replica_clear(&v);
    /* experimental_distribute_dataset: global batches of 7 split 3/2/2 */
    tfc_dataset *ds = tfc_dataset_batch(tfc_dataset_range(0, 14, 1, TFC_INT64, &st), 7, NULL, &st);
    tfc_dist_dataset *dd = tfc_strategy_experimental_distribute_dataset(s, ds, TFC_AUTO_SHARD_AUTO, &st);
    tfc_dist_iterator *it = dd ? tfc_dist_iterator_new(dd, &st) : NULL;
    REQUIRE(it);
    tfc_per_replica el;
    CHECK(tfc_dist_iterator_next(it, &el, 1, &st));
    CHECK(tfc_tensor_dim(el.values[0], 0) == 3 && tfc_tensor_dim(el.values[1], 0) == 2 && tfc_tensor_get_f64(el.values[2], 0) == 5);
    tfc_per_replica_clear(&el);
    CHECK(tfc_dist_iterator_next(it, &el, 1, &st) && tfc_tensor_get_f64(el.values[0], 0) == 7);
    tfc_per_replica_clear(&el);
    CHECK(!tfc_dist_iterator_next(it, &el, 1, &st) && st.code == TFC_OUT_OF_RANGE);
    tfc_status_clear(&st);
    tfc_dist_iterator_free(it);
    tfc_dist_dataset_free(dd);
    tfc_input_context ic = {1, 0, 3};
    CHECK(tfc_input_context_get_per_replica_batch_size(&ic, 12, &st) == 4);
    CHECK(tfc_input_context_get_per_replica_batch_size(&ic, 10, &st) == -1 && st.code == TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    test_variables(s);
    tfc_tensor_unref(two);
    tfc_strategy_free(s);
}

/* ---- Keras under a strategy ------------------------------------------------------------------------------- */
#define STEPS 6
#define GLOBAL_BATCH 16
typedef struct {
    double loss[64];
    int n;
} loss_log;
static bool on_batch_end(tfc_callback *cb, tfc_model *m, int64_t b, const tfc_logs *logs, tfc_status *st) {
    loss_log *l = tfc_callback_user(cb);
    if (l->n < 64) l->loss[l->n++] = tfc_logs_get(logs, "loss");
    return true;
}
static const tfc_callback_fns log_fns = {.on_train_batch_end = on_batch_end};

/* Trains a small classifier for 2 epochs of STEPS global batches (shuffled under the context's seed) and writes
 * the per-step running losses and the final weights (flattened) into *losses / w. Returns the weight count. */
static int g_epochs = 2;
static tfc_callback *g_extra[2];

static int train_small(tfc_ctx *ctx, tfc_strategy *s, loss_log *losses, float *w, int max_w) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = STEPS * GLOBAL_BATCH;
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 6}, 2, &st), *y = tfc_tensor_new(TFC_INT32, (int64_t[]){n}, 1, &st);
    float *xd = tfc_tensor_mutable_data(x);
    int32_t *yd = tfc_tensor_mutable_data(y);
    for (int64_t i = 0; i < n; i++) {
        for (int j = 0; j < 6; j++) xd[i * 6 + j] = (float)sin((double)(i * 7 + j * 3)) ;
        yd[i] = (int32_t)((i * 5) % 3);
    }
    if (s) tfc_strategy_scope(s, &st);
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_input_layer(.input_shape = {6}),
                                                       tfc_layers_dense(.units = 8, .activation = "relu"),
                                                       tfc_layers_dense(.units = 3, .activation = "softmax"), NULL});
    REQUIRE(m);
    REQUIRE(tfc_compile(m, &st, .optimizer = tfc_optimizers_sgd(.learning_rate = 0.1, .momentum = 0.5),
                        .loss_name = "sparse_categorical_crossentropy", .metrics = {"accuracy"}));
    if (s) tfc_strategy_scope_end(s);
    tfc_fit_opts fo = {.batch_size = GLOBAL_BATCH, .epochs = g_epochs, .verbose = TFC_VERBOSE_SILENT,
                       .callbacks = {tfc_callback_new(&log_fns, losses), g_extra[0], g_extra[1]}};
    g_extra[0] = g_extra[1] = NULL;
    CHECK(tfc_model_fit(m, x, y, &fo, NULL, &st));
    CHECK_OK(&st);
    double res[2] = {0};
    CHECK(tfc_model_evaluate(m, x, y, &(tfc_eval_opts){.batch_size = GLOBAL_BATCH, .verbose = TFC_VERBOSE_SILENT}, res, 2, &st) == 2);
    losses->loss[losses->n++] = res[0];
    losses->loss[losses->n++] = res[1];
    tfc_tensor *ws[8];
    int nw = tfc_model_get_weights(m, ws, 8, &st), k = 0;
    for (int i = 0; i < nw; i++) {
        for (int64_t j = 0; j < tfc_tensor_num_elements(ws[i]) && k < max_w; j++) w[k++] = (float)tfc_tensor_get_f64(ws[i], j);
        tfc_tensor_unref(ws[i]);
    }
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    return k;
}

/* float32 tolerance: the replicas' gradient sums differ from the single batch's only in summation order
 * (relative ~1e-7 per step, over 12 SGD steps) */
#define TOL 2e-5
static int compare(const loss_log *a, const float *wa, int na, const loss_log *b, const float *wb, int nb) {
    int bad = 0;
    if (a->n != b->n || na != nb) return fprintf(stderr, "counts differ: %d/%d losses, %d/%d weights\n", a->n, b->n, na, nb), 1;
    for (int i = 0; i < a->n; i++)
        if (fabs(a->loss[i] - b->loss[i]) > TOL * (1 + fabs(a->loss[i])))
            bad++, fprintf(stderr, "loss %d: %.9g vs %.9g\n", i, a->loss[i], b->loss[i]);
    for (int i = 0; i < na; i++)
        if (fabs(wa[i] - wb[i]) > TOL * (1 + fabs(wa[i]))) bad++, fprintf(stderr, "weight %d: %.9g vs %.9g\n", i, wa[i], wb[i]);
    return bad;
}

static int reference(loss_log *l, float *w) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 7, .has_seed = true, .intra_op_threads = 1}, &st);
    int n = train_small(ctx, NULL, l, w, 256);
    tfc_ctx_free(ctx);
    return n;
}

static void test_keras_mirrored(void) {
    loss_log l1 = {0}, l2 = {0};
    float w1[256], w2[256];
    int n1 = reference(&l1, w1);
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 7, .has_seed = true, .intra_op_threads = 1}, &st);
    tfc_strategy *s = tfc_mirrored_strategy_new(ctx, &(tfc_mirrored_opts){.num_replicas = 2}, &st);
    REQUIRE(s);
    int n2 = train_small(ctx, s, &l2, w2, 256);
    CHECK(n1 > 50 && compare(&l1, w1, n1, &l2, w2, n2) == 0);
    tfc_strategy_free(s);
    tfc_ctx_free(ctx);
}

/* ---- worker processes ---------------------------------------------------------------------------------------- */
static const char *g_dir;

static int worker_collectives(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    tfc_strategy *s = tfc_multi_worker_mirrored_strategy_new(ctx, &(tfc_communication_options){.timeout_seconds = 20}, &st);
    if (!s) return fprintf(stderr, "strategy: %s\n", st.msg), 1;
    REQUIRE(tfc_strategy_num_workers(s) >= 2);
    check_collectives(tfc_strategy_collective(s));
    /* strategy.reduce / gather across workers */
    tfc_tensor *t = tfc_scalar_f32((float)tfc_strategy_worker_id(s) + 1, &st);
    tfc_per_replica v = {.n = 1, .values = {t}};
    tfc_tensor *r = tfc_strategy_reduce(s, TFC_REDUCE_MEAN, &v, false, 0, &st);
    int W = tfc_strategy_num_workers(s);
    CHECK(r && fabs(tfc_tensor_get_f64(r, 0) - (W + 1) / 2.0) < 1e-6);
    tfc_tensor_unref(r);
    /* a mirrored variable starts from worker 0's value; a sync-on-read one sums the workers' copies */
    tfc_dist_variable *mv = tfc_strategy_variable_new(s, t, true, "mv", TFC_VARIABLE_SYNCHRONIZATION_AUTO,
                                                      TFC_VARIABLE_AGGREGATION_MEAN, &st);
    tfc_dist_variable *sv = tfc_strategy_variable_new(s, t, false, "sv", TFC_VARIABLE_SYNCHRONIZATION_ON_READ,
                                                      TFC_VARIABLE_AGGREGATION_SUM, &st);
    REQUIRE(mv && sv);
    r = tfc_dist_variable_read(mv, &st);
    CHECK(r && tfc_tensor_get_f64(r, 0) == 1.0);
    tfc_tensor_unref(r);
    r = tfc_dist_variable_read(sv, &st);
    CHECK(r && tfc_tensor_get_f64(r, 0) == W * (W + 1) / 2.0);
    tfc_tensor_unref(r);
    tfc_dist_variable_free(mv);
    tfc_dist_variable_free(sv);
    tfc_tensor_unref(t);
    tfc_strategy_free(s);
    tfc_ctx_free(ctx);
    return tfc_test_failures ? 1 : 0;
}

static int worker_keras(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 7, .has_seed = true, .intra_op_threads = 1}, &st);
    tfc_strategy *s = tfc_multi_worker_mirrored_strategy_new(ctx, &(tfc_communication_options){.timeout_seconds = 30}, &st);
    if (!s) return fprintf(stderr, "strategy: %s\n", st.msg), 1;
    loss_log l = {0};
    float w[256];
    int n = train_small(ctx, s, &l, w, 256);
    if (tfc_strategy_is_chief(s)) {
        char path[512];
        snprintf(path, sizeof path, "%s/keras.bin", g_dir);
        FILE *f = fopen(path, "wb");
        REQUIRE(f);
        fwrite(&l, sizeof l, 1, f);
        fwrite(&n, sizeof n, 1, f);
        fwrite(w, sizeof *w, (size_t)n, f);
        fclose(f);
    }
    tfc_strategy_free(s);
    tfc_ctx_free(ctx);
    return tfc_test_failures ? 1 : 0;
}

/* fit on a dataset under MultiWorkerMirroredStrategy with an unseeded context: the model is built by the first
 * batch with different random weights on each worker, broadcast from worker 0 before the step, so the workers
 * end with the same weights. Each worker writes its weights to keras_ds_<id>.bin. */
static int worker_keras_dataset(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    tfc_strategy *s = tfc_multi_worker_mirrored_strategy_new(ctx, &(tfc_communication_options){.timeout_seconds = 30}, &st);
    if (!s) return fprintf(stderr, "strategy: %s\n", st.msg), 1;
    int64_t n = 64;
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 5}, 2, &st), *y = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 1}, 2, &st);
    for (int64_t i = 0; i < n * 5; i++) ((float *)tfc_tensor_mutable_data(x))[i] = (float)cos((double)i);
    for (int64_t i = 0; i < n; i++) ((float *)tfc_tensor_mutable_data(y))[i] = (float)(i % 4) * 0.5f;
    tfc_dataset *ds = tfc_dataset_batch(tfc_dataset_from_tensor_slices((tfc_tensor *[]){x, y}, 2, NULL, &st), 16, NULL, &st);
    REQUIRE(ds && tfc_strategy_scope(s, &st));
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 4, .activation = "tanh"),
                                                       tfc_layers_dense(.units = 1), NULL});
    REQUIRE(m && tfc_compile(m, &st, .optimizer = tfc_optimizers_adam(), .loss_name = "mse"));
    tfc_strategy_scope_end(s);
    CHECK(tfc_model_fit_dataset(m, ds, &(tfc_fit_opts){.epochs = 2, .verbose = TFC_VERBOSE_SILENT}, NULL, NULL, &st));
    CHECK_OK(&st);
    tfc_tensor *ws[8];
    int nw = tfc_model_get_weights(m, ws, 8, &st);
    char path[512];
    snprintf(path, sizeof path, "%s/keras_ds_%d.bin", g_dir, tfc_strategy_worker_id(s));
    FILE *f = fopen(path, "wb");
    REQUIRE(f && nw == 4);
    for (int i = 0; i < nw; i++) {
        fwrite(tfc_tensor_data(ws[i]), 1, tfc_tensor_byte_size(ws[i]), f);
        tfc_tensor_unref(ws[i]);
    }
    fclose(f);
    tfc_model_free(m);
    tfc_dataset_unref(ds);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_strategy_free(s);
    tfc_ctx_free(ctx);
    return tfc_test_failures ? 1 : 0;
}

static void check_same_files(const char *a, const char *b) {
    char pa[512], pb[512], da[4096], db[4096];
    snprintf(pa, sizeof pa, "%s/%s", g_dir, a);
    snprintf(pb, sizeof pb, "%s/%s", g_dir, b);
    FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
    size_t na = fa ? fread(da, 1, sizeof da, fa) : 0, nb = fb ? fread(db, 1, sizeof db, fb) : 0;
    CHECK(fa && fb && na > 0 && na == nb && memcmp(da, db, na) == 0);
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    unlink(pa);
    unlink(pb);
}

/* BackupAndRestore across a killed worker: with `kill`, worker 1 SIGKILLs itself in the middle of epoch 1 (after
 * the backup of epoch 0); the job is then started again without it and must end with the weights of an
 * uninterrupted run. */
static bool kill_mid_epoch(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *logs, tfc_status *st) {
    int *epoch = tfc_callback_user(cb);
    if (*epoch == 1 && batch == 2) raise(SIGKILL);
    return true;
}
static bool note_epoch(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *logs, tfc_status *st) {
    *(int *)tfc_callback_user(cb) = epoch;
    return true;
}
static const tfc_callback_fns kill_fns = {.on_epoch_begin = note_epoch, .on_train_batch_begin = kill_mid_epoch};

static int worker_backup(bool kill_one) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/backup", g_dir);
    static int epoch;
    g_epochs = 3;
    g_extra[0] = tfc_callbacks_backup_and_restore(dir);
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.seed = 7, .has_seed = true, .intra_op_threads = 1}, &st);
    tfc_strategy *s = tfc_multi_worker_mirrored_strategy_new(ctx, &(tfc_communication_options){.timeout_seconds = 4}, &st);
    if (!s) return fprintf(stderr, "strategy: %s\n", st.msg), 1;
    if (kill_one && tfc_strategy_worker_id(s) == 1) g_extra[1] = tfc_callback_new(&kill_fns, &epoch);
    loss_log l = {0};
    float w[256];
    int n = train_small(ctx, s, &l, w, 256);
    if (tfc_test_failures) _exit(1); /* the surviving worker of a killed job (its group is broken) */
    if (tfc_strategy_is_chief(s)) {
        char path[512];
        snprintf(path, sizeof path, "%s/backup.bin", g_dir);
        FILE *f = fopen(path, "wb");
        REQUIRE(f);
        fwrite(&n, sizeof n, 1, f);
        fwrite(w, sizeof *w, (size_t)n, f);
        fclose(f);
    }
    tfc_strategy_free(s);
    tfc_ctx_free(ctx);
    return 0;
}

/* The last worker leaves without taking part: the others' collective fails with UNAVAILABLE within the timeout,
 * each naming the dead task (the leader sees its connection close and tells the others). */
static int worker_dead_peer(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = 1}, &st);
    tfc_strategy *s = tfc_multi_worker_mirrored_strategy_new(ctx, &(tfc_communication_options){.timeout_seconds = 3}, &st);
    if (!s) return fprintf(stderr, "strategy: %s\n", st.msg), 1;
    int W = tfc_strategy_num_workers(s);
    if (tfc_strategy_worker_id(s) == W - 1) _exit(0);
    char want[64];
    snprintf(want, sizeof want, "task /job:worker/replica:0/task:%d died", W - 1);
    tfc_tensor *t = tfc_scalar_f32(1, &st);
    double t0 = (double)time(NULL);
    tfc_tensor *r = tfc_collective_all_reduce(tfc_strategy_collective(s), t, TFC_REDUCE_SUM, &st);
    fprintf(stderr, "dead peer: %s: %s\n", tfc_code_name(st.code), st.msg);
    CHECK(!r && st.code == TFC_UNAVAILABLE && strstr(st.msg, want) &&
          (double)time(NULL) - t0 < 10);
    _exit(tfc_test_failures ? 1 : 0); /* (MPI is broken: no finalize) */
}

/* ---- the driver: runs children with a deadline ------------------------------------------------------------- */
static pid_t spawn(char *const argv[], const char *tf_config) {
    pid_t pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        if (tf_config) setenv("TF_CONFIG", tf_config, 1);
        execv(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Waits for the children (killing their process groups at the deadline); true when all exited 0. */
static bool wait_all(pid_t *pids, int n, double seconds) {
    bool ok = true;
    double end = (double)time(NULL) + seconds;
    for (int left = n; left > 0;) {
        for (int i = 0; i < n; i++) {
            int status;
            if (pids[i] > 0 && waitpid(pids[i], &status, WNOHANG) == pids[i]) {
                if (!WIFEXITED(status) || WEXITSTATUS(status)) ok = false, fprintf(stderr, "child %d failed (%d)\n", i, status);
                pids[i] = -1;
                left--;
            }
        }
        if (left && (double)time(NULL) > end) {
            for (int i = 0; i < n; i++)
                if (pids[i] > 0) kill(-pids[i], SIGKILL), waitpid(pids[i], NULL, 0), pids[i] = -1;
            fprintf(stderr, "children did not finish within %g s\n", seconds);
            return false;
        }
        if (left) usleep(20000);
    }
    return ok;
}

static bool run_mpirun(const char *self, const char *mode, int np) {
    char nps[8];
    snprintf(nps, sizeof nps, "%d", np);
    char *argv[] = {(char *)TFC_MPIRUN, "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--mca", "btl", "self,vader",
                    "-np", nps, (char *)self, (char *)mode, (char *)g_dir, NULL};
    pid_t pid = spawn(argv, NULL);
    return wait_all(&pid, 1, 120);
}

static bool run_tf_config(const char *self, const char *mode, int n, int port) {
    pid_t pids[4];
    char cluster[256] = "", cfg[512];
    for (int i = 0; i < n; i++)
        snprintf(cluster + strlen(cluster), sizeof cluster - strlen(cluster), "%s\"127.0.0.1:%d\"", i ? "," : "", port + i);
    for (int i = 0; i < n; i++) {
        snprintf(cfg, sizeof cfg, "{\"cluster\":{\"worker\":[%s]},\"task\":{\"type\":\"worker\",\"index\":%d}}", cluster, i);
        char *argv[] = {(char *)self, (char *)mode, (char *)g_dir, NULL};
        pids[i] = spawn(argv, cfg);
    }
    return wait_all(pids, n, 120);
}

static void check_keras_file(const loss_log *l1, const float *w1, int n1) {
    char path[512];
    snprintf(path, sizeof path, "%s/keras.bin", g_dir);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    loss_log l2;
    int n2 = 0;
    float w2[256];
    CHECK(fread(&l2, sizeof l2, 1, f) == 1 && fread(&n2, sizeof n2, 1, f) == 1 && n2 <= 256 &&
          fread(w2, sizeof *w2, (size_t)n2, f) == (size_t)n2);
    fclose(f);
    unlink(path);
    CHECK(compare(l1, w1, n1, &l2, w2, n2) == 0);
}

static void test_backup_kill(const char *self, int port) {
    loss_log l1 = {0};
    float w1[256], w2[256];
    g_epochs = 3;
    int n1 = reference(&l1, w1), n2 = 0;
    g_epochs = 2;
    char path[512];
    CHECK(!run_tf_config(self, "backup_kill", 2, port)); /* the killed job fails (no hang) */
    snprintf(path, sizeof path, "%s/backup/backup.tfcb", g_dir);
    CHECK(access(path, F_OK) == 0);                      /* epoch 0's backup */
    CHECK(run_tf_config(self, "backup", 2, port + 5));   /* the restarted job resumes and finishes */
    CHECK(access(path, F_OK) != 0);                      /* and deletes the backup */
    snprintf(path, sizeof path, "%s/backup.bin", g_dir);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fread(&n2, sizeof n2, 1, f) == 1 && n2 == n1 && fread(w2, sizeof *w2, (size_t)n2, f) == (size_t)n2);
    fclose(f);
    unlink(path);
    loss_log none = {0};
    CHECK(compare(&none, w1, n1, &none, w2, n2) == 0);
    snprintf(path, sizeof path, "%s/backup", g_dir);
    rmdir(path);
}

int main(int argc, char **argv) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    setenv("OMPI_MCA_btl_vader_single_copy_mechanism", "none", 1);
    setenv("OMPI_MCA_rmaps_base_oversubscribe", "1", 1);
    setenv("OMPI_MCA_btl_tcp_if_include", "lo", 1); /* loopback only */
    setenv("OMPI_MCA_oob_tcp_if_include", "lo", 1);
    if (argc == 3) {
        g_dir = argv[2];
        if (!strcmp(argv[1], "collectives")) return worker_collectives();
        if (!strcmp(argv[1], "keras")) return worker_keras();
        if (!strcmp(argv[1], "dead_peer")) return worker_dead_peer();
        if (!strcmp(argv[1], "backup_kill")) return worker_backup(true);
        if (!strcmp(argv[1], "backup")) return worker_backup(false);
        if (!strcmp(argv[1], "keras_dataset")) return worker_keras_dataset();
        return 2;
    }
    char dir[] = "/tmp/tfc_test_distribute_XXXXXX";
    REQUIRE(mkdtemp(dir));
    g_dir = dir;
    char self[1024];
    ssize_t k = readlink("/proc/self/exe", self, sizeof self - 1);
    REQUIRE(k > 0);
    self[k] = 0;
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);

    test_tf_config();
    test_local_collectives();
    test_mirrored(ctx);
    test_keras_mirrored();

    loss_log l1 = {0};
    float w1[256];
    int n1 = reference(&l1, w1);
    int port = 20000 + (int)(getpid() % 20000);
    CHECK(run_mpirun(self, "collectives", 2));
    CHECK(run_mpirun(self, "collectives", 3));
    CHECK(run_tf_config(self, "collectives", 2, port));
    CHECK(run_mpirun(self, "keras", 2));
    check_keras_file(&l1, w1, n1);
    CHECK(run_mpirun(self, "keras", 4));
    check_keras_file(&l1, w1, n1);
    CHECK(run_tf_config(self, "keras", 2, port + 10));
    check_keras_file(&l1, w1, n1);
    CHECK(run_mpirun(self, "keras_dataset", 2));
    check_same_files("keras_ds_0.bin", "keras_ds_1.bin");
    CHECK(run_tf_config(self, "dead_peer", 2, port + 20));
    CHECK(run_tf_config(self, "dead_peer", 3, port + 25));
    test_backup_kill(self, port + 30);
    rmdir(dir);
    tfc_ctx_free(ctx);
    printf("%d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures ? 1 : 0;
}
