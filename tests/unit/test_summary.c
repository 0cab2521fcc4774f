/* tf.summary's writer (src/summary): records read back through the TFRecord reader and the Event wire spec,
 * TensorFlow's queueing (max_queue), default writer / step / record_if, and I/O errors (a full disk simulated
 * with RLIMIT_FSIZE, a closed writer, a logdir under a file). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto/event.pb-c.h"
#include "tfc/tfc.h"
#include "tfc_test.h"

static char tmpdir[256];

static long file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

/* The events of a file, in order (caller frees with tensorflow__event__free_unpacked). */
static int read_events(const char *path, Tensorflow__Event **ev, int max) {
    tfc_status st = {0};
    tfc_tfrecord_reader *r = tfc_tfrecord_reader_new(path, NULL, 0, &st);
    if (!r) return -1;
    int n = 0;
    const char *d;
    size_t len;
    while (n < max && tfc_tfrecord_reader_next(r, &d, &len, &st)) {
        ev[n] = tensorflow__event__unpack(NULL, len, (const uint8_t *)d);
        if (!ev[n]) break;
        n++;
    }
    bool clean_end = st.code == TFC_OUT_OF_RANGE;
    tfc_tfrecord_reader_free(r);
    return clean_end ? n : -1;
}

static void free_events(Tensorflow__Event **ev, int n) {
    for (int i = 0; i < n; i++) tensorflow__event__free_unpacked(ev[i], NULL);
}

static void test_records_and_queue(void) {
    tfc_status st = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/q/a/b", tmpdir); /* missing parents are made */
    tfc_summary_writer *w = tfc_summary_create_file_writer(dir, 3, 1000000, NULL, &st);
    CHECK_OK(&st);
    REQUIRE(w);
    const char *path = tfc_summary_writer_path(w);
    CHECK(strstr(path, "/events.out.tfevents.") && !strcmp(path + strlen(path) - 3, ".v2"));
    long header = file_size(path);
    CHECK(header > 12); /* the file_version record is on disk at once */
    for (int i = 0; i < 3; i++) CHECK(tfc_summary_write_scalar(w, "loss", 0.5 * i, i, NULL, &st));
    CHECK(file_size(path) == header); /* 3 queued, max_queue 3: not written yet */
    CHECK(tfc_summary_write_scalar(w, "loss", 1.5, 3, "the loss", &st));
    CHECK(file_size(path) > header); /* the 4th (> max_queue) writes the queue */
    int64_t dims[2] = {2, 2};
    float v[4] = {1, 2, 3, 4};
    tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, dims, 2, v, sizeof v, &st);
    CHECK(tfc_summary_write_histogram(w, "h", t, 9, 2, NULL, &st));
    tfc_tensor_unref(t);
    CHECK(tfc_summary_writer_close(w, &st));
    CHECK(!tfc_summary_write_scalar(w, "loss", 1, 1, NULL, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);

    Tensorflow__Event *ev[16];
    int n = read_events(path, ev, 16);
    REQUIRE(n == 6);
    CHECK(ev[0]->what_case == TENSORFLOW__EVENT__WHAT_FILE_VERSION && !strcmp(ev[0]->file_version, "brain.Event:2"));
    for (int i = 1; i <= 4; i++) {
        Tensorflow__Summary__Value *val = ev[i]->summary->value[0];
        CHECK(ev[i]->step == i - 1 && !strcmp(val->tag, "loss"));
        CHECK(!strcmp(val->metadata->plugin_data->plugin_name, "scalars"));
        CHECK(val->tensor->dtype == TENSORFLOW__DATA_TYPE__DT_FLOAT && val->tensor->tensor_shape->n_dim == 0);
        float f;
        REQUIRE(val->tensor->tensor_content.len == 4);
        memcpy(&f, val->tensor->tensor_content.data, 4);
        CHECK(f == (float)(0.5 * (i - 1)));
    }
    CHECK(!strcmp(ev[4]->summary->value[0]->metadata->summary_description, "the loss"));
    /* histogram of 1..4 in 2 buckets: [1, 2.5) holds 1, 2; [2.5, 4] holds 3, 4 */
    Tensorflow__TensorProto *h = ev[5]->summary->value[0]->tensor;
    REQUIRE(h->dtype == TENSORFLOW__DATA_TYPE__DT_DOUBLE && h->tensor_content.len == 6 * sizeof(double));
    double rows[6];
    memcpy(rows, h->tensor_content.data, sizeof rows);
    CHECK(rows[0] == 1 && rows[1] == 2.5 && rows[2] == 2 && rows[3] == 2.5 && rows[4] == 4 && rows[5] == 2);
    free_events(ev, n);
    tfc_summary_writer_free(w);
}

static void test_default_writer_and_step(void) {
    tfc_status st = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/dflt", tmpdir);
    CHECK(!tfc_summary_scalar("x", 1, 0, &st)); /* no default writer: False, no error */
    CHECK_OK(&st);
    tfc_summary_writer *w = tfc_summary_create_file_writer(dir, 0, 0, "", &st);
    REQUIRE(w);
    CHECK(strstr(tfc_summary_writer_path(w), ".v2") == NULL); /* suffix "" */
    CHECK(tfc_summary_set_default_writer(w) == NULL);
    CHECK(!tfc_summary_scalar("x", 1, TFC_SUMMARY_DEFAULT_STEP, &st)); /* no step */
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "No step set"));
    tfc_summary_set_step(7);
    CHECK(tfc_summary_scalar("x", 2, TFC_SUMMARY_DEFAULT_STEP, &st));
    CHECK(tfc_summary_record_if(false));
    CHECK(!tfc_summary_scalar("x", 3, 8, &st)); /* not recorded */
    CHECK_OK(&st);
    tfc_summary_record_if(true);
    CHECK(tfc_summary_flush(&st));
    Tensorflow__Event *ev[8];
    int n = read_events(tfc_summary_writer_path(w), ev, 8);
    REQUIRE(n == 2);
    CHECK(ev[1]->step == 7);
    free_events(ev, n);
    tfc_summary_writer_free(w); /* clears the default */
    CHECK(tfc_summary_default_writer() == NULL);
    tfc_summary_set_step(TFC_SUMMARY_DEFAULT_STEP);
}

/* x * 2 + 1: the function whose graph the graph summary writes. It runs in a scope: op results are the scope's;
 * the scalars are this function's (captured as constants by the trace). */
static int affine(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                  tfc_status *st) {
    (void)n_in, (void)max_out, (void)user;
    tfc_tensor *two = tfc_scalar_f32(2, st), *one = two ? tfc_scalar_f32(1, st) : NULL;
    tfc_tensor *m = one ? tfc_mul(ctx, in[0], two, st) : NULL;
    out[0] = m ? tfc_add(ctx, m, one, st) : NULL;
    tfc_tensor_unref(two), tfc_tensor_unref(one);
    return out[0] ? 1 : -1;
}

/* tf.summary.graph: the traced function's GraphDef is the Event's graph_def at step 0, parsed back with the
 * function's node count; bytes that are not a GraphDef are refused and nothing is written. */
static void test_graph(void) {
    tfc_status st = {0};
    char dir[512];
    snprintf(dir, sizeof dir, "%s/graph", tmpdir);
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    tfc_tensor_spec spec = {.dtype = TFC_FLOAT, .shape = {.rank = 2, .dims = {-1, 3}}};
    tfc_function *f = tfc_function_new(ctx, affine, NULL, &(tfc_function_opts){.name = "affine"}, &st);
    REQUIRE(f);
    tfc_concrete_function *cf = tfc_function_get_concrete_function(f, &spec, 1, &st);
    REQUIRE(cf);
    tfc_summary_writer *w = tfc_summary_create_file_writer(dir, 0, 0, "", &st);
    REQUIRE(w);
    tfc_summary_set_step(5);
    CHECK(tfc_summary_write_function_graph(w, ctx, cf, &st));
    CHECK_OK(&st);
    CHECK(!tfc_summary_write_graph(w, "\x0a\xff\xff", 3, &st)); /* a node field running past the end */
    CHECK(st.code == TFC_DATA_LOSS || st.code == TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "tf.summary.graph"));
    CHECK(!tfc_summary_graph("", 0, &st)); /* no default writer: False, no error */
    CHECK_OK(&st);
    CHECK(tfc_summary_writer_flush(w, &st));
    Tensorflow__Event *ev[8];
    int n = read_events(tfc_summary_writer_path(w), ev, 8);
    REQUIRE(n == 2); /* file_version, graph */
    CHECK(ev[1]->what_case == TENSORFLOW__EVENT__WHAT_GRAPH_DEF);
    CHECK(ev[1]->step == 0);
    tfc_graphdef *g = tfc_graphdef_parse(ev[1]->graph_def.data, ev[1]->graph_def.len, NULL, &st);
    CHECK(g);
    CHECK(g && tfc_graphdef_num_nodes(g, TFC_GRAPHDEF_TOP) == tfc_concrete_function_num_nodes(cf));
    int muls = 0, adds = 0;
    tfc_graphdef_node_info ni;
    for (int64_t i = 0; g && tfc_graphdef_node(g, TFC_GRAPHDEF_TOP, i, &ni); i++)
        muls += !strcmp(ni.op, "Mul"), adds += !strcmp(ni.op, "AddV2");
    CHECK(muls == 1 && adds == 1);
    tfc_graphdef_free(g);
    free_events(ev, n);
    tfc_summary_set_step(TFC_SUMMARY_DEFAULT_STEP);
    tfc_summary_writer_free(w);
    tfc_function_free(f);
    tfc_ctx_free(ctx);
}

static void test_bad_logdirs(void) {
    tfc_status st = {0};
    char file[512], dir[600];
    snprintf(file, sizeof file, "%s/plain_file", tmpdir);
    FILE *f = fopen(file, "w");
    REQUIRE(f);
    fclose(f);
    snprintf(dir, sizeof dir, "%s/logs", file);
    CHECK(!tfc_summary_create_file_writer(dir, 0, 0, NULL, &st));
    CHECK_CODE(&st, TFC_FAILED_PRECONDITION);
    CHECK(strstr(st.msg, file) != NULL);
    CHECK(!tfc_summary_create_file_writer("", 0, 0, NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
}

/* A full disk: the child may write at most a few KiB (RLIMIT_FSIZE); the flush that passes it fails with
 * RESOURCE_EXHAUSTED naming the file, and the writer keeps failing. */
static void test_full_disk(void) {
    char dir[512];
    snprintf(dir, sizeof dir, "%s/full", tmpdir);
    pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {4096, 4096};
        setrlimit(RLIMIT_FSIZE, &rl);
        tfc_status st = {0};
        tfc_summary_writer *w = tfc_summary_create_file_writer(dir, 1000, 0, NULL, &st);
        if (!w) _exit(10);
        float big[2048] = {0};
        int64_t d = 2048;
        tfc_tensor *t = tfc_tensor_from_data(TFC_FLOAT, &d, 1, big, sizeof big, &st);
        if (!tfc_summary_write_tensor(w, "big", t, 0, NULL, NULL, 0, NULL, &st)) _exit(11); /* queued only */
        bool flushed = tfc_summary_writer_flush(w, &st);
        if (flushed || st.code != TFC_RESOURCE_EXHAUSTED || !strstr(st.msg, "events.out.tfevents")) _exit(12);
        if (tfc_summary_write_scalar(w, "x", 1, 1, NULL, &st) || st.code != TFC_RESOURCE_EXHAUSTED) _exit(13);
        if (tfc_summary_writer_close(w, &st)) _exit(14);
        tfc_tensor_unref(t);
        tfc_summary_writer_free(w);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status)) fprintf(stderr, "full-disk child exit %d\n", WEXITSTATUS(status));
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "%s/tfc_summary_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(tmpdir));
    test_records_and_queue();
    test_default_writer_and_step();
    test_graph();
    test_bad_logdirs();
    test_full_disk();
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
    TEST_MAIN_END();
}
