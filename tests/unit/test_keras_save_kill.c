/* Durability of Keras saves: a child process saves one model in a loop to "m.keras", "m.h5", "w.weights.h5" and a
 * SavedModel folder "sm/1" (model.export), save k with every weight equal to k (each child numbering its saves
 * above the previous child's); the parent kills it with SIGKILL
 * at a random moment after its set-up (inside a save, between saves) and then every file must still load
 * (load_model / load_weights / tfc_saved_model_load) with uniform weights: the previous complete save, never a
 * half-written one, and no temporary left where a file belongs. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tfc/keras.h"
#include "tfc/saved_model.h"
#include "tfc_test.h"

#define UNITS 512 /* Dense(512) on 256 inputs: 512 KiB of weights, so a save takes long enough to be cut */

static char dir[64];

static const char *path(const char *name) {
    static char buf[4][256];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 256, "%s/%s", dir, name);
    return p;
}

static tfc_model *model_new(tfc_ctx *ctx) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = UNITS, .activation = "relu",
                                                                         .input_shape = {256}),
                                                        tfc_layers_dense(.units = 4), NULL});
    REQUIRE(m);
    tfc_shape in = {.rank = 2, .dims = {-1, 256}};
    REQUIRE(tfc_model_build(m, &in, &st));
    return m;
}

static void set_all(tfc_model *m, float v) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *w[8];
    int n = tfc_model_get_weights(m, w, 8, &st);
    REQUIRE(n == 4);
    for (int i = 0; i < n; i++) {
        float *p = tfc_tensor_mutable_data(w[i]);
        for (int64_t j = 0; j < tfc_tensor_num_elements(w[i]); j++) p[j] = v;
    }
    REQUIRE(tfc_model_set_weights(m, w, n, &st));
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
}

static bool save_all(tfc_model *m, tfc_status *st) {
    return tfc_model_save(m, path("m.keras"), st) && tfc_model_save(m, path("m.h5"), st) &&
           tfc_model_save_weights(m, path("w.weights.h5"), st) && tfc_model_export(m, path("sm/1"), st);
}

/* The child writes one byte to ready_fd once it is set up, so that the parent's random delay counts from there
 * and not from a start-up that a loaded machine (or a sanitizer build) makes slow. */
static int child(float first, int ready_fd) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    if (!ctx) return 2;
    tfc_model *m = model_new(ctx);
    if (write(ready_fd, "r", 1) != 1) return 5;
    for (float k = first;; k++) {
        set_all(m, k);
        if (!save_all(m, &st)) {
            fprintf(stderr, "child: %s\n", st.msg);
            return 4;
        }
    }
}

/* The value every weight of the tensors holds, or -1 when they differ. */
static float uniform(tfc_tensor *const *w, int n) {
    float v = n > 0 ? ((const float *)tfc_tensor_data(w[0]))[0] : -1;
    for (int i = 0; i < n; i++) {
        const float *p = tfc_tensor_data(w[i]);
        for (int64_t j = 0; j < tfc_tensor_num_elements(w[i]); j++)
            if (p[j] != v) return -1;
    }
    return v;
}

static float model_value(tfc_model *m) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *w[8];
    int n = tfc_model_get_weights(m, w, 8, &st);
    CHECK(n == 4);
    float v = uniform(w, n);
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
    return v;
}

static float max_seen;
static int mid_save; /* rounds that found the files from different saves: the kill landed inside a save */

static void check_files(tfc_ctx *ctx) {
    tfc_status st = TFC_STATUS_INIT;
    float v[4];
    for (int f = 0; f < 2; f++) {
        tfc_model *m = tfc_keras_load_model(ctx, path(f ? "m.h5" : "m.keras"), &st);
        CHECK_OK(&st);
        v[f] = m ? model_value(m) : -1;
        tfc_model_free(m);
    }
    tfc_model *m = model_new(ctx);
    CHECK(tfc_model_load_weights(m, path("w.weights.h5"), &st));
    CHECK_OK(&st);
    v[2] = model_value(m);
    tfc_model_free(m);
    tfc_saved_model *sm = tfc_saved_model_load(ctx, path("sm/1"), NULL, 0, &st);
    CHECK_OK(&st);
    v[3] = -1;
    if (sm) {
        tfc_tensor *w[8];
        int n = tfc_saved_model_num_variables(sm);
        CHECK(n == 4);
        bool all = n == 4;
        for (int i = 0; all && i < n; i++) {
            tfc_variable *var = tfc_saved_model_variable(sm, i);
            all = var && (w[i] = (tfc_tensor *)tfc_variable_value(var)) != NULL;
        }
        v[3] = all ? uniform(w, n) : -1;
    }
    tfc_saved_model_free(sm);
    for (int f = 0; f < 4; f++) {
        CHECK(v[f] >= 0); /* loads, and holds one save's values */
        if (v[f] > max_seen) max_seen = v[f];
    }
    /* every save writes the files in this order and save numbers only grow (each child starts above the
     * last), so a later file never holds a newer save than an earlier one */
    bool ordered = true;
    for (int f = 1; f < 4; f++) ordered = ordered && v[f] <= v[f - 1];
    if (!ordered) fprintf(stderr, "saves found: .keras %g, .h5 %g, .weights.h5 %g, SavedModel %g\n", v[0], v[1], v[2], v[3]);
    CHECK(ordered);
    if (v[3] != v[0]) mid_save++;
}

int main(int argc, char **argv) {
    snprintf(dir, sizeof dir, "%s", argc == 5 && !strcmp(argv[1], "child") ? argv[2] : "/tmp/tfc_keras_kill_XXXXXX");
    if (argc == 5) return child((float)atoi(argv[3]), atoi(argv[4]));
    REQUIRE(mkdtemp(dir));
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    tfc_model *m = model_new(ctx);
    set_all(m, 0);
    REQUIRE(save_all(m, &st));
    tfc_model_free(m);
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    REQUIRE(n > 0);
    exe[n] = 0;
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    for (int round = 0; round < 10; round++) {
        int fds[2];
        REQUIRE(pipe(fds) == 0);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            char first[16], fd_arg[16];
            snprintf(first, sizeof first, "%d", 1000 * (round + 1));
            snprintf(fd_arg, sizeof fd_arg, "%d", fds[1]);
            close(fds[0]);
            execl(exe, exe, "child", dir, first, fd_arg, (char *)NULL);
            _exit(127);
        }
        close(fds[1]);
        char ready;
        CHECK(read(fds[0], &ready, 1) == 1); /* set up (or exited: then read returns 0 and the wait below says so) */
        close(fds[0]);
        /* after set-up, up to 0.3 s in the first round, up to 3 s in the last: kills inside a first save and
         * between later saves, where one save of the four files is slow (sanitizer builds on a busy machine) */
        long ms = rand() % (300 * (round + 1));
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        REQUIRE(waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        check_files(ctx);
    }
    printf("latest save loaded after a kill: %g; kills inside a save: %d of 10\n", max_seen, mid_save);
    CHECK(max_seen >= 1);
    tfc_ctx_free(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
