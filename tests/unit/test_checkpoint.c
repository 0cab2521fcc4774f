/* tf.train.Checkpoint in C: save/restore of a tree of trackables by object structure (values land in the same
 * objects even when the tree is rebuilt in another order), slot variables, the load status's assert_consumed /
 * expect_partial, the `checkpoint` state file and tf.train.latest_checkpoint. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "platform/files.h"
#include "saved_model/checkpoint_internal.h"
#include "tfc_test.h"

static char dir[256];
static tfc_ctx *ctx;

static tfc_variable *var_f32(const float *v, int64_t n, const char *name) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *t = tfc_vec_f32(v, n, &st);
    tfc_variable *var = t ? tfc_variable_new(ctx, t, true, name, &st) : NULL;
    tfc_tensor_unref(t);
    REQUIRE(var);
    return var;
}

static float value_at(tfc_variable *v, int i) { return ((const float *)tfc_tensor_data(tfc_variable_value(v)))[i]; }

static void test_round_trip(void) {
    tfc_status st = TFC_STATUS_INIT;
    /* model { dense { kernel, bias } }, optimizer { iter, slots m/v of the kernel }, plus an alias to the dense */
    float k[4] = {1, 2, 3, 4}, b[2] = {0.5f, -0.5f}, m[4] = {0.1f, 0.2f, 0.3f, 0.4f}, it = 7;
    tfc_variable *kernel = var_f32(k, 4, "dense/kernel"), *bias = var_f32(b, 2, "dense/bias");
    tfc_variable *slot_m = var_f32(m, 4, "Adam/m"), *iter = var_f32(&it, 1, "iter");
    tfc_trackable *model = tfc_trackable_new(&st), *dense = tfc_trackable_new(&st), *opt = tfc_trackable_new(&st);
    REQUIRE(tfc_trackable_track_variable(dense, "kernel", kernel, &st));
    REQUIRE(tfc_trackable_track_variable(dense, "bias", bias, &st));
    REQUIRE(tfc_trackable_track_child(model, "layer_with_weights-0", dense, &st));
    REQUIRE(tfc_trackable_track_child(model, "layer-0", dense, &st)); /* alias: saved once */
    CHECK(!tfc_trackable_track_child(model, "layer-0", dense, &st) && st.code == TFC_INVALID_ARGUMENT);
    REQUIRE(tfc_trackable_track_variable(opt, "iter", iter, &st));
    REQUIRE(tfc_trackable_track_slot(opt, kernel, "m", slot_m, &st));
    const char *names[2] = {"model", "optimizer"};
    tfc_trackable *objs[2] = {model, opt};
    tfc_checkpoint *c = tfc_checkpoint_new(ctx, names, objs, 2, &st);
    REQUIRE(c);
    char prefix[512], path[600];
    snprintf(prefix, sizeof prefix, "%s/ckpts/ckpt", dir);
    REQUIRE(tfc_checkpoint_save(c, prefix, path, sizeof path, &st));
    CHECK(tfc_checkpoint_save_counter(c) == 1);
    CHECK(strstr(path, "ckpt-1") != NULL);
    REQUIRE(tfc_checkpoint_save(c, prefix, path, sizeof path, &st));
    CHECK(strstr(path, "ckpt-2") != NULL);
    /* keys as TensorFlow writes them */
    tfc_checkpoint_reader *r = tfc_checkpoint_reader_new(path, &st);
    REQUIRE(r);
    CHECK(tfc_checkpoint_reader_has_tensor(r, "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
    CHECK(!tfc_checkpoint_reader_has_tensor(r, "model/layer-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"));
    CHECK(tfc_checkpoint_reader_has_tensor(r, "optimizer/iter/.ATTRIBUTES/VARIABLE_VALUE"));
    CHECK(tfc_checkpoint_reader_has_tensor(
        r, "model/layer_with_weights-0/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE"));
    CHECK(tfc_checkpoint_reader_has_tensor(r, "save_counter/.ATTRIBUTES/VARIABLE_VALUE"));
    CHECK(tfc_checkpoint_reader_has_tensor(r, "_CHECKPOINTABLE_OBJECT_GRAPH"));
    CHECK(tfc_checkpoint_reader_size(r) == 6);
    tfc_checkpoint_reader_free(r);
    /* the directory's latest checkpoint */
    char latest[600], d2[300];
    snprintf(d2, sizeof d2, "%s/ckpts", dir);
    REQUIRE(tfc_latest_checkpoint(d2, latest, sizeof latest, &st));
    CHECK(strcmp(latest, path) == 0);
    tfc_ckpt_state cs;
    REQUIRE(tfc_ckpt_state_read(d2, &cs, &st));
    CHECK(cs.n_paths == 1 && !strcmp(cs.all_model_checkpoint_paths[0], "ckpt-2") && !strcmp(cs.model_checkpoint_path, "ckpt-2"));
    tfc_ckpt_state_free(&cs);
    r = tfc_checkpoint_reader_new(d2, &st); /* load_checkpoint of a directory */
    CHECK(r && tfc_checkpoint_reader_size(r) == 6);
    tfc_checkpoint_reader_free(r);

    /* a second program builds the same structure in another order with other values: restore by structure */
    float z[4] = {0};
    tfc_variable *kernel2 = var_f32(z, 4, "k2"), *bias2 = var_f32(z, 2, "b2"), *m2 = var_f32(z, 4, "m2"),
                 *iter2 = var_f32(z, 1, "i2");
    tfc_trackable *model2 = tfc_trackable_new(&st), *dense2 = tfc_trackable_new(&st), *opt2 = tfc_trackable_new(&st);
    REQUIRE(tfc_trackable_track_slot(opt2, kernel2, "m", m2, &st));
    REQUIRE(tfc_trackable_track_variable(opt2, "iter", iter2, &st));
    REQUIRE(tfc_trackable_track_variable(dense2, "bias", bias2, &st));
    REQUIRE(tfc_trackable_track_variable(dense2, "kernel", kernel2, &st));
    REQUIRE(tfc_trackable_track_child(model2, "layer_with_weights-0", dense2, &st));
    const char *names2[2] = {"optimizer", "model"};
    tfc_trackable *objs2[2] = {opt2, model2};
    tfc_checkpoint *c2 = tfc_checkpoint_new(ctx, names2, objs2, 2, &st);
    REQUIRE(c2);
    tfc_checkpoint_status *s = tfc_checkpoint_restore(c2, path, &st);
    REQUIRE(s);
    CHECK(tfc_checkpoint_status_assert_consumed(s, &st));
    tfc_checkpoint_status_free(s);
    for (int i = 0; i < 4; i++) CHECK(value_at(kernel2, i) == k[i] && value_at(m2, i) == m[i]);
    CHECK(value_at(bias2, 1) == -0.5f && value_at(iter2, 0) == 7);
    CHECK(tfc_checkpoint_save_counter(c2) == 2);

    /* a partial structure: values left over, so assert_consumed fails but existing objects matched */
    tfc_trackable *model3 = tfc_trackable_new(&st), *dense3 = tfc_trackable_new(&st);
    tfc_variable *k3 = var_f32(z, 4, "k3"), *extra = var_f32(z, 1, "extra");
    REQUIRE(tfc_trackable_track_variable(dense3, "kernel", k3, &st));
    REQUIRE(tfc_trackable_track_child(model3, "layer_with_weights-0", dense3, &st));
    const char *n3 = "model";
    tfc_checkpoint *c3 = tfc_checkpoint_new(ctx, &n3, &model3, 1, &st);
    REQUIRE(c3);
    s = tfc_checkpoint_restore(c3, path, &st);
    REQUIRE(s);
    CHECK(!tfc_checkpoint_status_assert_consumed(s, &st) && st.code == TFC_FAILED_PRECONDITION &&
          strstr(st.msg, "(root)."));
    CHECK(tfc_checkpoint_status_assert_existing_objects_matched(s, &st));
    CHECK(tfc_checkpoint_status_unused_values(s) == 3); /* bias, iter, the slot */
    tfc_checkpoint_status_expect_partial(s);
    tfc_checkpoint_status_free(s);
    CHECK(value_at(k3, 3) == 4);
    /* an object the checkpoint does not have */
    REQUIRE(tfc_trackable_track_variable(dense3, "extra", extra, &st));
    s = tfc_checkpoint_restore(c3, path, &st);
    REQUIRE(s);
    CHECK(!tfc_checkpoint_status_assert_existing_objects_matched(s, &st) && strstr(st.msg, "extra"));
    CHECK(tfc_checkpoint_status_unmatched_variables(s) == 1);
    tfc_checkpoint_status_expect_partial(s);
    tfc_checkpoint_status_free(s);
    /* shape mismatch */
    tfc_trackable *model4 = tfc_trackable_new(&st), *dense4 = tfc_trackable_new(&st);
    tfc_variable *k4 = var_f32(z, 3, "k4");
    REQUIRE(tfc_trackable_track_variable(dense4, "kernel", k4, &st));
    REQUIRE(tfc_trackable_track_child(model4, "layer_with_weights-0", dense4, &st));
    tfc_checkpoint *c4 = tfc_checkpoint_new(ctx, &n3, &model4, 1, &st);
    CHECK(!tfc_checkpoint_restore(c4, path, &st) && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "shape"));
    CHECK(!tfc_checkpoint_restore(c4, "/nonexistent/x", &st) && st.code == TFC_NOT_FOUND);
    CHECK(!tfc_checkpoint_new(ctx, (const char *[]){"save_counter"}, &model4, 1, &st) && st.code == TFC_INVALID_ARGUMENT);

    tfc_checkpoint_free(c);
    tfc_checkpoint_free(c2);
    tfc_checkpoint_free(c3);
    tfc_checkpoint_free(c4);
    tfc_trackable_unref(model);
    tfc_trackable_unref(dense);
    tfc_trackable_unref(opt);
    tfc_trackable_unref(model2);
    tfc_trackable_unref(dense2);
    tfc_trackable_unref(opt2);
    tfc_trackable_unref(model3);
    tfc_trackable_unref(dense3);
    tfc_trackable_unref(model4);
    tfc_trackable_unref(dense4);
    tfc_variable *vars[] = {kernel, bias, slot_m, iter, kernel2, bias2, m2, iter2, k3, extra, k4};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) tfc_variable_free(vars[i]);
}

static void test_state_file(void) {
    tfc_status st = TFC_STATUS_INIT;
    char d[300], path[400];
    snprintf(d, sizeof d, "%s/state", dir);
    snprintf(path, sizeof path, "%s/checkpoint", d);
    char *paths[2] = {"a\"b", "ckpt-2"};
    double ts[2] = {1796182783.25, 1796182790.5};
    tfc_ckpt_state s = {.model_checkpoint_path = "ckpt-2", .all_model_checkpoint_paths = paths, .n_paths = 2,
                        .all_model_checkpoint_timestamps = ts, .n_timestamps = 2, .last_preserved_timestamp = 1796182700};
    REQUIRE(tfc_make_dirs(d, "test", &st));
    REQUIRE(tfc_ckpt_state_write(d, &s, &st));
    tfc_ckpt_state r;
    REQUIRE(tfc_ckpt_state_read(d, &r, &st));
    CHECK(r.n_paths == 2 && !strcmp(r.all_model_checkpoint_paths[0], "a\"b") && !strcmp(r.model_checkpoint_path, "ckpt-2"));
    CHECK(r.n_timestamps == 2 && r.all_model_checkpoint_timestamps[1] == 1796182790.5);
    CHECK(r.last_preserved_timestamp == 1796182700);
    tfc_ckpt_state_free(&r);
    char latest[64];
    CHECK(!tfc_latest_checkpoint(d, latest, sizeof latest, &st) && st.code == TFC_NOT_FOUND); /* no ckpt-2.index */
    FILE *f = fopen(path, "w");
    REQUIRE(f);
    fputs("model_checkpoint_path: \"x\"\nbogus_field: 3\n", f);
    fclose(f);
    CHECK(!tfc_ckpt_state_read(d, &r, &st) && st.code == TFC_DATA_LOSS && strstr(st.msg, "line 2"));
    f = fopen(path, "w");
    REQUIRE(f);
    fputs("model_checkpoint_path: \"unterminated\n", f);
    fclose(f);
    CHECK(!tfc_ckpt_state_read(d, &r, &st) && st.code == TFC_DATA_LOSS);
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/tfc_ckpt_XXXXXX");
    REQUIRE(mkdtemp(dir));
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_round_trip();
    test_state_file();
    tfc_ctx_free(ctx);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
