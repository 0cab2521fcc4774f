/* BackupAndRestore on fit fed from a dataset, resumed mid-epoch: a training process killed with SIGKILL (or
 * stopped by an error) in the middle of an epoch is started again and ends with the weights of an
 * uninterrupted run, because the backup holds the dataset iterator's position (tfc/data_checkpoint.h) and the
 * batches done in the epoch. Also with steps_per_epoch (one iterator across epochs), and the refusals. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tfc_test.h"

static char tmpdir[256];

static tfc_dataset *make_dataset(bool infinite) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t n = 96;
    float x[96 * 4];
    int32_t y[96];
    uint32_t s = 12345;
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) {
            s = s * 1664525u + 1013904223u;
            x[i * 4 + k] = (float)(s >> 8) / 16777216.0f * 2 - 1;
        }
        y[i] = x[i * 4] + 0.5f * x[i * 4 + 1] > 0.1f ? 1 : 0;
    }
    tfc_tensor *t[2] = {tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){n, 4}, 2, x, sizeof x, &st),
                        tfc_tensor_from_data(TFC_INT32, &n, 1, y, sizeof y, &st)};
    tfc_dataset *ds = tfc_dataset_from_tensor_slices(t, 2, "(.,.)", &st);
    tfc_tensor_unref(t[0]);
    tfc_tensor_unref(t[1]);
    ds = tfc_dataset_shuffle(ds, 40, &(tfc_shuffle_opts){.seed = 5, .has_seed = true}, &st);
    ds = tfc_dataset_batch(ds, 8, NULL, &st); /* 12 batches */
    if (infinite) ds = tfc_dataset_repeat(ds, -1, &st);
    ds = tfc_dataset_prefetch(ds, 2, &st);
    REQUIRE(ds);
    return ds;
}

static tfc_model *mlp(tfc_ctx *c) {
    tfc_keras_clear_session();
    tfc_model *m = tfc_sequential(c, (tfc_layer *[]){tfc_layers_dense(.units = 16, .activation = "relu", .input_shape = {4}),
                                                     tfc_layers_dense(.units = 2, .activation = "softmax"), NULL});
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(m);
    REQUIRE(tfc_compile(m, &st, .optimizer = tfc_optimizers_adam(.learning_rate = 0.01),
                        .loss_name = "sparse_categorical_crossentropy", .metrics = {"accuracy"}));
    return m;
}

/* ---- callbacks: SIGKILL / an error at (epoch, batch) end; a batch counter ---- */
typedef struct {
    int epoch;
    int64_t batch;
    bool kill;
} stop_at;

static bool stop_batch_end(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *l, tfc_status *st) {
    stop_at *s = tfc_callback_user(cb);
    if (s->epoch >= 0 || batch != s->batch) return true;
    if (s->kill) raise(SIGKILL);
    return tfc_status_set(st, TFC_ABORTED, "stopped at batch %lld", (long long)batch);
}
static bool stop_epoch_begin(tfc_callback *cb, tfc_model *m, int epoch, const tfc_logs *l, tfc_status *st) {
    stop_at *s = tfc_callback_user(cb);
    if (s->epoch == epoch) s->epoch = -1; /* armed for this epoch's batches */
    return true;
}
static const tfc_callback_fns stop_fns = {.on_epoch_begin = stop_epoch_begin, .on_train_batch_end = stop_batch_end};

static int64_t batches_run;
static bool count_batch(tfc_callback *cb, tfc_model *m, int64_t batch, const tfc_logs *l, tfc_status *st) {
    batches_run++;
    return true;
}
static const tfc_callback_fns count_fns = {.on_train_batch_end = count_batch};

/* A fresh program's fit: context (seed 42), model, dataset; returns the weights (*n) and the History's epochs. */
static int run_fit(tfc_callback *cb1, tfc_callback *cb2, bool infinite, tfc_tensor **w, int *n, bool *ok,
                   tfc_status *st) {
    tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.seed = 42, .has_seed = true}, st);
    tfc_model *m = mlp(c);
    tfc_dataset *ds = make_dataset(infinite);
    tfc_history *h = NULL;
    batches_run = 0;
    *ok = tfc_model_fit_dataset(m, ds,
                                &(tfc_fit_opts){.epochs = 3, .verbose = TFC_VERBOSE_SILENT,
                                                .steps_per_epoch = infinite ? 10 : 0,
                                                .callbacks = {tfc_callback_new(&count_fns, NULL), cb1, cb2}},
                                NULL, &h, st);
    int epochs = tfc_history_epochs(h);
    *n = w ? tfc_model_get_weights(m, w, 8, st) : 0;
    tfc_history_free(h);
    tfc_model_free(m);
    tfc_dataset_unref(ds);
    tfc_ctx_free(c);
    return epochs;
}

static double max_diff(tfc_tensor **a, int na, tfc_tensor **b, int nb) {
    CHECK(na == 4 && nb == 4);
    double md = 0;
    for (int i = 0; i < na && i < nb; i++)
        for (int64_t k = 0; k < tfc_tensor_num_elements(a[i]); k++) {
            double d = fabs(tfc_tensor_get_f64(a[i], k) - tfc_tensor_get_f64(b[i], k));
            if (d > md) md = d;
        }
    return md;
}

static void unref_all(tfc_tensor **t, int n) {
    for (int i = 0; i < n; i++) tfc_tensor_unref(t[i]);
}

/* Kills (SIGKILL, in a child process) or stops (an error) the fit at the end of batch `batch` of epoch `epoch`,
 * then resumes it; the weights must equal the uninterrupted run's. */
static void check_resume(bool infinite, bool kill, int epoch, int64_t batch, int64_t save_freq, int64_t want_batches,
                         int want_epochs) {
    tfc_status st = TFC_STATUS_INIT;
    char dir[400], file[440];
    snprintf(dir, sizeof dir, "%s/backup_%d_%d", tmpdir, infinite, kill);
    snprintf(file, sizeof file, "%s/backup.tfcb", dir);
    tfc_tensor *ref[8], *w[8];
    int nref = 0, nw = 0;
    bool ok;
    CHECK(run_fit(NULL, NULL, infinite, ref, &nref, &ok, &st) == 3);
    CHECK(ok);
    /* backups alone change nothing */
    CHECK(run_fit(tfc_callbacks_backup_and_restore_freq(dir, save_freq), NULL, infinite, w, &nw, &ok, &st) == 3);
    CHECK(ok);
    CHECK(max_diff(ref, nref, w, nw) == 0);
    CHECK(access(file, F_OK) != 0);
    unref_all(w, nw);
    stop_at at = {epoch, batch, kill};
    if (kill) {
        fflush(NULL);
        pid_t pid = fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            tfc_status cst = TFC_STATUS_INIT;
            run_fit(tfc_callbacks_backup_and_restore_freq(dir, save_freq), tfc_callback_new(&stop_fns, &at), infinite,
                    NULL, &nw, &ok, &cst);
            _exit(3); /* not reached */
        }
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    } else {
        run_fit(tfc_callbacks_backup_and_restore_freq(dir, save_freq), tfc_callback_new(&stop_fns, &at), infinite, NULL,
                &nw, &ok, &st);
        CHECK(!ok);
        CHECK_CODE(&st, TFC_ABORTED);
    }
    CHECK(access(file, F_OK) == 0);
    int epochs = run_fit(tfc_callbacks_backup_and_restore_freq(dir, save_freq), NULL, infinite, w, &nw, &ok, &st);
    CHECK(ok);
    CHECK_OK(&st);
    CHECK(epochs == want_epochs);
    CHECK(batches_run == want_batches); /* resumed mid-epoch, not from the epoch's start */
    double d = max_diff(ref, nref, w, nw);
    CHECK(d <= 1e-6);
    if (epochs != want_epochs || batches_run != want_batches || d > 1e-6)
        fprintf(stderr, "resume (infinite=%d kill=%d): %d epochs, %lld batches, weights differ by %g\n", infinite, kill,
                epochs, (long long)batches_run, d);
    CHECK(access(file, F_OK) != 0); /* deleted at the end */
    unref_all(w, nw);
    unref_all(ref, nref);
}

static void test_refusals(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *c = tfc_ctx_new(&(tfc_ctx_opts){.seed = 42, .has_seed = true}, &st);
    tfc_model *m = mlp(c);
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, (int64_t[]){32, 4}, 2, &st);
    tfc_tensor *y = tfc_tensor_new(TFC_INT32, (int64_t[]){32}, 1, &st);
    memset(tfc_tensor_mutable_data(x), 0, 32 * 4 * 4);
    memset(tfc_tensor_mutable_data(y), 0, 32 * 4);
    char dir[400];
    snprintf(dir, sizeof dir, "%s/backup_arrays", tmpdir);
    /* mid-epoch backups need a dataset */
    CHECK(!tfc_model_fit(m, x, y,
                         &(tfc_fit_opts){.epochs = 1, .batch_size = 4, .verbose = TFC_VERBOSE_SILENT,
                                         .callbacks = {tfc_callbacks_backup_and_restore_freq(dir, 3)}},
                         NULL, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(strstr(st.msg, "save_freq=3") != NULL);
    CHECK(tfc_callbacks_backup_and_restore_freq(dir, -1) == NULL);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_ctx_free(c);
    char cmd[500];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tfc_backup_ds_XXXXXX");
    REQUIRE(mkdtemp(tmpdir));
    /* 12 batches an epoch, backups every 5 batches: killed after batch 9 of epoch 1 (0-based), the last backup
     * was after batch 7 (the 20th batch), so the resumed fit runs batches 8..11 of epoch 1 and epoch 2 */
    check_resume(false, true, 1, 9, 5, 4 + 12, 2);
    /* stopped by an error after batch 3 of epoch 2: last backup after batch 0 of epoch 2 (the 25th) */
    check_resume(false, false, 2, 3, 5, 11, 1);
    /* steps_per_epoch 10 over a repeated dataset (one iterator for all epochs): killed after batch 6 of epoch 1,
     * the last backup after batch 4 of epoch 1 (the 15th) */
    check_resume(true, true, 1, 6, 5, 5 + 10, 2);
    test_refusals();
    rmdir(tmpdir);
    TEST_MAIN_END();
}
