/* Durability: a child process saves checkpoints through a CheckpointManager (max_to_keep 2) in a loop, each save
 * filling every variable with the save's number; the parent kills it with SIGKILL at a random moment, then
 * tf.train.latest_checkpoint must name a checkpoint that restores completely (assert_consumed) with uniform
 * values, whatever the save was doing. Also the manager itself: numbering, max_to_keep deletion, the state file
 * read back by a new manager. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tfc_test.h"

#define N_ELEMS (1 << 18) /* 1 MiB per variable: a save takes long enough to be interrupted inside */

static tfc_variable *filled(tfc_ctx *ctx, float v, const char *name) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){N_ELEMS}, 1, &st);
    REQUIRE(t);
    float *p = tfc_tensor_mutable_data(t);
    for (int i = 0; i < N_ELEMS; i++) p[i] = v;
    tfc_variable *var = tfc_variable_new(ctx, t, true, name, &st);
    tfc_tensor_unref(t);
    REQUIRE(var);
    return var;
}

typedef struct {
    tfc_variable *a, *b;
    tfc_trackable *model;
    tfc_checkpoint *ckpt;
} saver;

static void saver_new(tfc_ctx *ctx, saver *s) {
    tfc_status st = TFC_STATUS_INIT;
    s->a = filled(ctx, 0, "a");
    s->b = filled(ctx, 0, "b");
    s->model = tfc_trackable_new(&st);
    REQUIRE(tfc_trackable_track_variable(s->model, "a", s->a, &st));
    REQUIRE(tfc_trackable_track_variable(s->model, "b", s->b, &st));
    const char *name = "model";
    REQUIRE((s->ckpt = tfc_checkpoint_new(ctx, &name, &s->model, 1, &st)));
}

static void saver_free(saver *s) {
    tfc_checkpoint_free(s->ckpt);
    tfc_trackable_unref(s->model);
    tfc_variable_free(s->a);
    tfc_variable_free(s->b);
}

static void set_all(tfc_ctx *ctx, tfc_variable *v, float x) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_tensor_new(TFC_FLOAT, (int64_t[]){N_ELEMS}, 1, &st);
    float *p = tfc_tensor_mutable_data(t);
    for (int i = 0; i < N_ELEMS; i++) p[i] = x;
    REQUIRE(tfc_variable_assign(ctx, v, t, &st));
    tfc_tensor_unref(t);
}

/* The child: saves forever, save k holding k everywhere. It writes one byte to ready_fd once it is set up, so
 * the parent's random delay counts from there and not from a start-up that a loaded machine makes slow. */
static int child(const char *dir, int ready_fd) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    if (!ctx) return 2;
    saver s;
    saver_new(ctx, &s);
    tfc_checkpoint_manager *m = tfc_checkpoint_manager_new(s.ckpt, dir, &(tfc_checkpoint_manager_opts){.max_to_keep = 2}, &st);
    if (!m) return 3;
    /* as a restarted job does: continue from the latest checkpoint (its save counter numbers the next save) */
    char latest[512];
    if (tfc_latest_checkpoint(dir, latest, sizeof latest, &st)) tfc_checkpoint_status_free(tfc_checkpoint_restore(s.ckpt, latest, &st));
    if (write(ready_fd, "r", 1) != 1) return 5;
    for (float k = 1;; k++) {
        set_all(ctx, s.a, k);
        set_all(ctx, s.b, k);
        if (!tfc_checkpoint_manager_save(m, -1, &st)) {
            fprintf(stderr, "child: %s\n", st.msg);
            return 4;
        }
    }
}

static float max_seen; /* the highest save number restored: the children did save before being killed */

static void check_restorable(tfc_ctx *ctx, const char *dir) {
    tfc_status st = TFC_STATUS_INIT;
    char latest[512];
    REQUIRE(tfc_latest_checkpoint(dir, latest, sizeof latest, &st));
    saver s;
    saver_new(ctx, &s);
    tfc_checkpoint_status *cs = tfc_checkpoint_restore(s.ckpt, latest, &st);
    CHECK_OK(&st);
    if (cs) {
        CHECK(tfc_checkpoint_status_assert_consumed(cs, &st));
        const float *a = tfc_tensor_data(tfc_variable_value(s.a)), *b = tfc_tensor_data(tfc_variable_value(s.b));
        bool uniform = true;
        for (int i = 0; i < N_ELEMS; i++) uniform = uniform && a[i] == a[0] && b[i] == a[0];
        CHECK(uniform);
        CHECK(a[0] >= 0);
        if (a[0] > max_seen) max_seen = a[0];
    }
    tfc_checkpoint_status_free(cs);
    saver_free(&s);
}

static void test_kill(tfc_ctx *ctx, const char *exe, const char *dir) {
    tfc_status st = TFC_STATUS_INIT;
    { /* a first checkpoint before any child runs */
        saver s;
        saver_new(ctx, &s);
        tfc_checkpoint_manager *m = tfc_checkpoint_manager_new(s.ckpt, dir, NULL, &st);
        REQUIRE(m && tfc_checkpoint_manager_save(m, -1, &st));
        tfc_checkpoint_manager_free(m);
        saver_free(&s);
    }
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    for (int round = 0; round < 12; round++) {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            char fd_arg[16];
            snprintf(fd_arg, sizeof fd_arg, "%d", fds[1]);
            close(fds[0]);
            execl(exe, exe, "child", dir, fd_arg, (char *)NULL);
            _exit(127);
        }
        close(fds[1]);
        char ready;
        CHECK(read(fds[0], &ready, 1) == 1); /* set up (or exited: then read returns 0 and the wait below says so) */
        close(fds[0]);
        struct timespec ts = {0, (long)(rand() % 400) * 1000000L}; /* 0-400 ms after set-up: mid-save, between saves */
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        check_restorable(ctx, dir);
    }
    printf("latest save restored after a kill: %g\n", max_seen);
    CHECK(max_seen >= 2);
}

static void test_manager(tfc_ctx *ctx, const char *dir) {
    tfc_status st = TFC_STATUS_INIT;
    saver s;
    saver_new(ctx, &s);
    tfc_checkpoint_manager *m =
        tfc_checkpoint_manager_new(s.ckpt, dir, &(tfc_checkpoint_manager_opts){.max_to_keep = 2, .checkpoint_name = "model"}, &st);
    REQUIRE(m);
    CHECK(tfc_checkpoint_manager_latest_checkpoint(m) == NULL);
    for (int i = 1; i <= 4; i++) {
        set_all(ctx, s.a, (float)i);
        const char *p = tfc_checkpoint_manager_save(m, -1, &st);
        REQUIRE(p);
        char want[512];
        snprintf(want, sizeof want, "%s/model-%d", dir, i);
        CHECK(strcmp(p, want) == 0);
    }
    CHECK(tfc_checkpoint_manager_num_checkpoints(m) == 2);
    CHECK(strstr(tfc_checkpoint_manager_checkpoint(m, 0), "model-3") != NULL);
    char path[600];
    snprintf(path, sizeof path, "%s/model-1.index", dir);
    CHECK(access(path, F_OK) != 0); /* deleted */
    snprintf(path, sizeof path, "%s/model-3.index", dir);
    CHECK(access(path, F_OK) == 0);
    const char *p = tfc_checkpoint_manager_save(m, 100, &st); /* an explicit number */
    CHECK(p && strstr(p, "model-100"));
    tfc_checkpoint_manager_free(m);
    /* a new manager continues from the state file */
    m = tfc_checkpoint_manager_new(s.ckpt, dir, &(tfc_checkpoint_manager_opts){.max_to_keep = 2, .checkpoint_name = "model"}, &st);
    REQUIRE(m);
    CHECK(tfc_checkpoint_manager_num_checkpoints(m) == 2);
    CHECK(strstr(tfc_checkpoint_manager_latest_checkpoint(m), "model-100") != NULL);
    tfc_checkpoint_manager_free(m);
    CHECK(!tfc_checkpoint_manager_new(s.ckpt, dir, &(tfc_checkpoint_manager_opts){.max_to_keep = -1}, &st) &&
          st.code == TFC_INVALID_ARGUMENT);
    saver_free(&s);
}

int main(int argc, char **argv) {
    if (argc == 4 && !strcmp(argv[1], "child")) return child(argv[2], atoi(argv[3]));
    char dir[64] = "/tmp/tfc_ckpt_kill_XXXXXX", dir2[80];
    REQUIRE(mkdtemp(dir));
    snprintf(dir2, sizeof dir2, "%s/managed", dir);
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_manager(ctx, dir2);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    REQUIRE(n > 0);
    exe[n] = 0;
    test_kill(ctx, exe, dir);
    tfc_ctx_free(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
