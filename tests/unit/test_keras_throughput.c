/* fit's report_throughput: one line per epoch with steps/s and the input-pipeline wait share, with and without
 * the prefetch thread; and the TensorBoard callback's profile_batch next to a running profiler (logged, fit
 * goes on). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfc/tfc.h"
#include "tfc_test.h"

static tfc_model *small_model(tfc_ctx *c) {
    tfc_model *m = tfc_sequential(c, (tfc_layer *[]){tfc_layers_dense(.units = 8, .activation = "relu", .input_shape = {4}),
                                                    tfc_layers_dense(.units = 2, .activation = "softmax"), NULL});
    tfc_status st = TFC_STATUS_INIT;
    if (m && !tfc_compile(m, &st, .optimizer = tfc_optimizers_sgd(), .loss_name = "sparse_categorical_crossentropy"))
        return NULL;
    return m;
}

static void check_report(tfc_ctx *c, tfc_tensor *x, tfc_tensor *y) {
    tfc_model *m = small_model(c);
    REQUIRE(m);
    FILE *out = tmpfile();
    REQUIRE(out);
    tfc_status st = TFC_STATUS_INIT;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.batch_size = 8, .epochs = 3, .verbose = TFC_VERBOSE_SILENT, .out = out,
                                        .report_throughput = true},
                        NULL, &st));
    rewind(out);
    char line[256];
    int epochs = 0;
    while (fgets(line, sizeof line, out)) {
        int e = 0;
        double sps = -1, wait = -1, ws = -1, total = -1;
        int n = sscanf(line, "Epoch %d: %lf steps/s, input pipeline wait %lf%% of the epoch (%lf ms of %lf ms)", &e,
                       &sps, &wait, &ws, &total);
        CHECK(n == 5);
        CHECK(e == epochs + 1);
        CHECK(sps > 0 && total > 0);
        CHECK(wait >= 0 && wait <= 100 && ws <= total);
        CHECK_NEAR(sps * total / 1e3, 8.0, 0.05); /* 64 samples / 8: 8 steps in `total` ms (rounded print) */
        epochs++;
    }
    CHECK(epochs == 3);
    fclose(out);
    tfc_model_free(m);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *c = tfc_ctx_new(NULL, &st);
    REQUIRE(c);
    float xv[64 * 4];
    int32_t yv[64];
    for (int i = 0; i < 64; i++) {
        for (int j = 0; j < 4; j++) xv[i * 4 + j] = (float)((i * 7 + j * 3) % 11) / 11.0f;
        yv[i] = i % 2;
    }
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){64, 4}, 2, xv, sizeof xv, &st);
    tfc_tensor *y = tfc_tensor_from_data(TFC_INT32, (int64_t[]){64}, 1, yv, sizeof yv, &st);
    REQUIRE(x && y);
    check_report(c, x, y);
    tfc_runtime_config rc = *tfc_ctx_config(c);
    rc.fit_prefetch = false;
    tfc_ctx_set_config(c, &rc);
    check_report(c, x, y);

    /* a profiler already running: profile_batch cannot start its own (logged), training goes on, the running
     * one keeps recording */
    char dir[256];
    snprintf(dir, sizeof dir, "%s/tfc_tb_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    REQUIRE(mkdtemp(dir));
    CHECK(tfc_profiler_start(dir, NULL, &st));
    tfc_model *m = small_model(c);
    REQUIRE(m);
    tfc_history *h = NULL;
    CHECK(tfc_model_fit(m, x, y,
                        &(tfc_fit_opts){.batch_size = 8, .epochs = 2, .verbose = TFC_VERBOSE_SILENT,
                                        .callbacks = {tfc_callbacks_tensorboard_new(
                                            &(tfc_tensorboard_opts){.log_dir = dir, .profile_batch_start = 2,
                                                                    .profile_batch_stop = 3},
                                            &st)}},
                        &h, &st));
    CHECK(tfc_history_epochs(h) == 2);
    CHECK(tfc_profiler_active());
    CHECK(tfc_profiler_stop(false, &st));
    tfc_history_free(h);
    tfc_model_free(m);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_ctx_free(c);
    TEST_MAIN_END();
}
