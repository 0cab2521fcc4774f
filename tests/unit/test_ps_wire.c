/* Parameter-server pieces in one process: the message format (round trip and rejected inputs), the
 * partitioners, ps servers on loopback with a strategy (placement, sharding, reads and updates, attach), and a
 * fault-injecting transport that duplicates and delays requests without changing any result. */
#define _GNU_SOURCE /* mkdtemp */
#include <stdlib.h>
#include <string.h>

#include "distribute/ps_internal.h"
#include "ps_test_util.h"

static void test_wire(void) {
    tfc_status st = TFC_STATUS_INIT;
    ps_msg m, d;
    ps_msg_init(&m, PS_OP_ASSIGN_ADD, "layer/kernel");
    m.id = 0x1234567890abcdefull;
    m.step = -5;
    m.value = 0.125;
    const int64_t dims[2] = {2, 3};
    const float v[6] = {1, 2, 3, 4, 5, 6};
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, 2, v, sizeof v, &st);
    tfc_tensor *s = tfc_scalar_i64(42, &st);
    REQUIRE(t && s && ps_msg_add(&m, t, &st) && ps_msg_add(&m, s, &st));
    uint8_t *buf = NULL;
    size_t n = 0;
    REQUIRE(ps_msg_encode(&m, &buf, &n, &st));
    CHECK(ps_msg_decode(buf, n, &d, &st));
    CHECK_OK(&st);
    CHECK(d.op == PS_OP_ASSIGN_ADD && d.id == m.id && d.step == -5 && d.value == 0.125);
    CHECK(!strcmp(d.name, "layer/kernel") && d.n_tensors == 2);
    if (d.n_tensors == 2) {
        CHECK(tfc_tensor_dtype(d.t[0]) == TFC_FLOAT && tfc_tensor_dim(d.t[0], 1) == 3);
        CHECK(!memcmp(tfc_tensor_data(d.t[0]), v, sizeof v));
        CHECK(tfc_tensor_get_f64(d.t[1], 0) == 42);
    }
    ps_msg_clear(&d);
    /* every strict prefix is truncated, never accepted */
    int accepted = 0;
    for (size_t k = 0; k < n; k++) {
        tfc_status e = TFC_STATUS_INIT;
        if (ps_msg_decode(buf, k, &d, &e)) accepted++;
        ps_msg_clear(&d);
        if (k == 10) CHECK(e.code == TFC_INVALID_ARGUMENT && strstr(e.msg, "truncated"));
    }
    CHECK(accepted == 0);
    /* field offsets: magic 0, header 4 (version, op), code 8, id 12, step 20, value 28, name_len 36, name 40 */
    const size_t name_len = strlen("layer/kernel"), t0 = 40 + name_len + 4; /* first tensor: dtype, rank, dims */
    struct { size_t at; uint64_t val; int width; const char *want; } bad[] = {
        {0, 'X', 1, "magic"},
        {4, 9, 1, "version"},
        {5, 77, 1, "unknown op"},
        {8, 99, 4, "status code"},
        {36, 100000, 4, "name length"},
        {t0 - 4, 1000, 4, "tensors"},
        {t0, TFC_STRING, 4, "dtype"},
        {t0 + 4, 9, 4, "rank"},
        {t0 + 8, (uint64_t)-1, 8, "dim"},
        {t0 + 8, (uint64_t)1 << 62, 8, "overflows"},
        {t0 + 8 + 16, 25, 8, "bytes"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        uint8_t *b = malloc(n);
        memcpy(b, buf, n);
        memcpy(b + bad[i].at, &bad[i].val, (size_t)bad[i].width);
        tfc_status e = TFC_STATUS_INIT;
        CHECK(!ps_msg_decode(b, n, &d, &e));
        CHECK(e.code == TFC_INVALID_ARGUMENT && strstr(e.msg, bad[i].want));
        if (!strstr(e.msg, bad[i].want)) fprintf(stderr, "case %zu: %s\n", i, e.msg);
        ps_msg_clear(&d);
        free(b);
    }
    uint8_t *longer = malloc(n + 1);
    memcpy(longer, buf, n);
    longer[n] = 0;
    tfc_status e = TFC_STATUS_INIT;
    CHECK(!ps_msg_decode(longer, n + 1, &d, &e) && strstr(e.msg, "trailing"));
    free(longer);
    free(buf);
    ps_msg_clear(&m);
    tfc_tensor_unref(t);
    tfc_tensor_unref(s);
}

static void test_partitioners(void) {
    /* values from TensorFlow 2.21's partitioners (tests/conformance checks them against TF itself) */
    const int64_t emb[2] = {10, 4}, big[2] = {1000, 256}, one[1] = {1};
    tfc_variable_partitioner f = tfc_fixed_shards_partitioner(3);
    CHECK(tfc_partitioner_num_shards(&f, emb, 2, TFC_FLOAT) == 3);
    CHECK(tfc_partitioner_num_shards(&f, one, 1, TFC_FLOAT) == 1);
    CHECK(tfc_partitioner_num_shards(&f, NULL, 0, TFC_FLOAT) == 1);
    tfc_variable_partitioner mn = tfc_min_size_partitioner(256 << 10, 4, 16);
    CHECK(tfc_partitioner_num_shards(&mn, emb, 2, TFC_FLOAT) == 1);        /* 160 bytes */
    CHECK(tfc_partitioner_num_shards(&mn, big, 2, TFC_FLOAT) == 4);        /* 1 MB: ceil(3.9) = 4 */
    tfc_variable_partitioner mn2 = tfc_min_size_partitioner(300 << 10, 10, 16);
    CHECK(tfc_partitioner_num_shards(&mn2, big, 2, TFC_FLOAT) == 4);       /* ceil(1024000 / 307200) = 4 */
    tfc_variable_partitioner mx = tfc_max_size_partitioner(100, 0, 16);
    CHECK(tfc_partitioner_num_shards(&mx, emb, 2, TFC_FLOAT) == 2);        /* 16 B rows, 6 per shard */
    tfc_variable_partitioner mx2 = tfc_max_size_partitioner(100, 1, 16);
    CHECK(tfc_partitioner_num_shards(&mx2, emb, 2, TFC_FLOAT) == 1);
    tfc_variable_partitioner mx3 = tfc_max_size_partitioner(8, 0, 16);
    CHECK(tfc_partitioner_num_shards(&mx3, emb, 2, TFC_FLOAT) == 10);      /* a row above the limit: 1 per shard */
}

/* Two ps servers in this process and a strategy over them. */
static void test_servers(void) {
    tfc_status st = TFC_STATUS_INIT;
    int ports[2];
    char list[128], json[512];
    ps_addr_list(list, sizeof list, 2, ports);
    snprintf(json, sizeof json, "{\"cluster\":{\"chief\":[\"127.0.0.1:1\"],\"ps\":[%s]},"
                                "\"task\":{\"type\":\"chief\",\"index\":0}}", list);
    tfc_cluster cl;
    REQUIRE(tfc_cluster_resolve(json, &cl, &st));
    tfc_server *ps[2];
    for (int i = 0; i < 2; i++) {
        ps[i] = tfc_server_new(&cl, "ps", i, "grpc", &st);
        CHECK_OK(&st);
        REQUIRE(ps[i]);
    }
    CHECK(!tfc_server_new(&cl, "ps", 0, "grpc", &st) && st.code == TFC_UNAVAILABLE); /* address taken */
    tfc_status_clear(&st);
    CHECK(!tfc_server_new(&cl, "ps", 5, NULL, &st) && st.code == TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);
    CHECK(!tfc_server_new(&cl, "ps", 0, "mpi", &st) && st.code == TFC_INVALID_ARGUMENT);
    tfc_status_clear(&st);

    for (int faults = 0; faults < 2; faults++) {
        tfc_variable_partitioner p = tfc_fixed_shards_partitioner(2);
        tfc_ps_strategy *s = tfc_parameter_server_strategy_new(&cl, &p, 5, &st);
        REQUIRE(s);
        CHECK(tfc_ps_strategy_num_ps(s) == 2);
        if (faults) tfc_ps_strategy_inject_faults(s, 7, 0.5, 0.3, 5);
        char name[32], name2[32];
        snprintf(name, sizeof name, "emb%d", faults);
        snprintf(name2, sizeof name2, "bias%d", faults);
        const int64_t dims[2] = {5, 2};
        float init[10];
        for (int i = 0; i < 10; i++) init[i] = (float)i;
        tfc_tensor *t0 = tfc_tensor_from_data(TFC_FLOAT, dims, 2, init, sizeof init, &st);
        tfc_tensor *b0 = tfc_scalar_f64(1.5, &st);
        tfc_ps_variable *emb = tfc_ps_variable_new(s, name, t0, &st);
        tfc_ps_variable *bias = tfc_ps_variable_new(s, name2, b0, &st);
        CHECK_OK(&st);
        REQUIRE(emb && bias);
        /* 5 rows over 2 shards: 3 + 2, on ps 0 and 1; the scalar next round-robin (ps 0) */
        CHECK(tfc_ps_variable_num_shards(emb) == 2 && tfc_ps_variable_shard_rows(emb, 0) == 3 &&
              tfc_ps_variable_shard_rows(emb, 1) == 2);
        CHECK(tfc_ps_variable_shard_task(emb, 0) == 0 && tfc_ps_variable_shard_task(emb, 1) == 1);
        CHECK(tfc_ps_variable_num_shards(bias) == 1 && tfc_ps_variable_shard_task(bias, 0) == 0);
        CHECK(!tfc_ps_variable_new(s, name, t0, &st) && st.code == TFC_ALREADY_EXISTS);
        tfc_status_clear(&st);
        /* 20 assign_adds of ones and 10 SGD steps with gradient 2 at lr 0.25: emb = init + 20 - 5 */
        float ones[10];
        for (int i = 0; i < 10; i++) ones[i] = 1;
        tfc_tensor *d = tfc_tensor_from_data(TFC_FLOAT, dims, 2, ones, sizeof ones, &st);
        tfc_tensor *g = tfc_tensor_from_data(TFC_FLOAT, dims, 2, ones, sizeof ones, &st);
        for (int k = 0; k < 20; k++) CHECK(tfc_ps_variable_assign_add(emb, d, &st));
        for (int k = 0; k < 10; k++) CHECK(tfc_ps_variable_apply_sgd(emb, g, 2 * 0.25, &st));
        tfc_tensor *bd = tfc_scalar_f64(0.25, &st);
        for (int k = 0; k < 4; k++) CHECK(tfc_ps_variable_assign_add(bias, bd, &st));
        CHECK_OK(&st);
        tfc_tensor *r = tfc_ps_variable_read(emb, &st);
        tfc_tensor *rb = tfc_ps_variable_read(bias, &st);
        REQUIRE(r && rb);
        for (int i = 0; i < 10; i++) CHECK(((const float *)tfc_tensor_data(r))[i] == (float)i + 15);
        CHECK(tfc_tensor_get_f64(rb, 0) == 2.5);
        /* wrong shape and dtype are refused before anything is sent */
        CHECK(!tfc_ps_variable_assign(emb, b0, &st) && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, name));
        tfc_status_clear(&st);
        CHECK(tfc_ps_variable_assign(bias, b0, &st));
        tfc_tensor_unref(rb);
        rb = tfc_ps_variable_read(bias, &st);
        CHECK(rb && tfc_tensor_get_f64(rb, 0) == 1.5);
        /* a second strategy (another task of the same program) attaches to the same variables */
        tfc_ps_strategy *s2 = tfc_parameter_server_strategy_new(&cl, &p, 5, &st);
        tfc_ps_variable *emb2 = s2 ? tfc_ps_variable_new(s2, name, t0, &st) : NULL;
        tfc_tensor *r2 = emb2 ? tfc_ps_variable_read(emb2, &st) : NULL;
        CHECK_OK(&st);
        CHECK(r2 && !memcmp(tfc_tensor_data(r2), tfc_tensor_data(r), sizeof init));
        tfc_ps_strategy *s3 = tfc_parameter_server_strategy_new(&cl, NULL, 5, &st); /* unsharded */
        tfc_ps_variable *bad = s3 ? tfc_ps_variable_new(s3, name2, t0, &st) : NULL;     /* a scalar there */
        CHECK(!bad && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "float64"));
        if (!strstr(st.msg, "float64")) fprintf(stderr, "%s\n", st.msg);
        tfc_status_clear(&st);
        tfc_ps_strategy_free(s3);
        tfc_ps_strategy_free(s2);
        tfc_tensor_unref(r2);
        tfc_tensor_unref(r);
        tfc_tensor_unref(rb);
        tfc_tensor_unref(d);
        tfc_tensor_unref(g);
        tfc_tensor_unref(bd);
        tfc_tensor_unref(t0);
        tfc_tensor_unref(b0);
        tfc_ps_strategy_free(s);
    }
    /* a stop request ends join */
    CHECK(tfc_server_stop_remote(tfc_server_target(ps[1]), 5, &st));
    CHECK(tfc_server_join(ps[1], &st));
    CHECK_OK(&st);
    for (int i = 0; i < 2; i++) tfc_server_free(ps[i]);
    /* nobody listening: UNAVAILABLE within the timeout */
    tfc_ps_strategy *s = tfc_parameter_server_strategy_new(&cl, NULL, 0.5, &st);
    tfc_tensor *x = tfc_scalar_f32(1, &st);
    CHECK(s && !tfc_ps_variable_new(s, "v", x, &st) && st.code == TFC_UNAVAILABLE && strstr(st.msg, "127.0.0.1"));
    tfc_tensor_unref(x);
    tfc_ps_strategy_free(s);
    tfc_cluster_clear(&cl);
}

/* Servers for n ps tasks in this process and the cluster naming them. */
static void start_ps(int n, tfc_cluster *cl, tfc_server **servers) {
    tfc_status st = TFC_STATUS_INIT;
    int ports[8];
    char list[512], json[768];
    ps_addr_list(list, sizeof list, n, ports);
    snprintf(json, sizeof json, "{\"cluster\":{\"chief\":[\"127.0.0.1:1\"],\"ps\":[%s]},"
                                "\"task\":{\"type\":\"chief\",\"index\":0}}", list);
    REQUIRE(tfc_cluster_resolve(json, cl, &st));
    for (int i = 0; i < n; i++) REQUIRE((servers[i] = tfc_server_new(cl, "ps", i, NULL, &st)));
}

/* A checkpoint of variables sharded over 3 ps tasks restores onto 2 ps tasks with another partitioning. */
static void test_checkpoint(void) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[] = "/tmp/tfc_ps_ckpt_XXXXXX";
    REQUIRE(mkdtemp(dir));
    const int64_t dims[2] = {7, 3};
    double vals[21];
    for (int i = 0; i < 21; i++) vals[i] = i * 0.5 - 3;
    tfc_tensor *v0 = tfc_tensor_from_data(TFC_DOUBLE, dims, 2, vals, sizeof vals, &st);
    tfc_tensor *c0 = tfc_scalar_i32(41, &st);
    tfc_tensor *zero = tfc_tensor_new(TFC_DOUBLE, dims, 2, &st), *czero = tfc_scalar_i32(0, &st);
    for (int round = 0; round < 2; round++) {
        tfc_cluster cl;
        tfc_server *servers[3];
        const int n_ps = round ? 2 : 3;
        start_ps(n_ps, &cl, servers);
        tfc_variable_partitioner p = round ? tfc_max_size_partitioner(50, 0, 16) : tfc_fixed_shards_partitioner(3);
        tfc_ps_strategy *s = tfc_parameter_server_strategy_new(&cl, &p, 5, &st);
        tfc_ps_variable *emb = s ? tfc_ps_variable_new(s, "model/embedding", round ? zero : v0, &st) : NULL;
        tfc_ps_variable *cnt = emb ? tfc_ps_variable_new(s, "count", round ? czero : c0, &st) : NULL;
        REQUIRE(cnt);
        CHECK(tfc_ps_variable_num_shards(emb) == (round ? 4 : 3)); /* 24-byte rows, 2 per 50-byte shard */
        if (!round) {
            CHECK(tfc_ps_strategy_save(s, dir, &st));
        } else {
            tfc_tensor *before = tfc_ps_variable_read(emb, &st);
            CHECK(before && tfc_tensor_get_f64(before, 20) == 0);
            tfc_tensor_unref(before);
            CHECK(tfc_ps_strategy_restore(s, dir, &st));
            tfc_tensor *r = tfc_ps_variable_read(emb, &st), *rc = tfc_ps_variable_read(cnt, &st);
            CHECK(r && !memcmp(tfc_tensor_data(r), vals, sizeof vals));
            CHECK(rc && tfc_tensor_get_f64(rc, 0) == 41);
            tfc_tensor_unref(r);
            tfc_tensor_unref(rc);
        }
        CHECK_OK(&st);
        tfc_ps_strategy_free(s);
        for (int i = 0; i < n_ps; i++) tfc_server_free(servers[i]);
        tfc_cluster_clear(&cl);
    }
    /* a checkpoint without the variable */
    tfc_cluster cl;
    tfc_server *servers[1];
    start_ps(1, &cl, servers);
    tfc_ps_strategy *s = tfc_parameter_server_strategy_new(&cl, NULL, 5, &st);
    CHECK(s && tfc_ps_variable_new(s, "other", c0, &st));
    CHECK(!tfc_ps_strategy_restore(s, dir, &st) && st.code == TFC_NOT_FOUND);
    tfc_ps_strategy_free(s);
    tfc_server_free(servers[0]);
    tfc_cluster_clear(&cl);
    char path[256];
    const char *files[] = {"model.embedding.npy", "count.npy"};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i]);
        CHECK(remove(path) == 0);
    }
    rmdir(dir);
    tfc_tensor_unref(v0);
    tfc_tensor_unref(c0);
    tfc_tensor_unref(zero);
    tfc_tensor_unref(czero);
}

int main(void) {
    test_wire();
    test_partitioners();
    test_servers();
    test_checkpoint();
    TEST_MAIN_END();
}
