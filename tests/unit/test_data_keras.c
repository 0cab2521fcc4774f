/* Keras on tf.data: fit / evaluate / predict given a dataset equal the array versions batch for batch (same
 * losses, metrics, weights), sample weights and class weights from elements, validation datasets,
 * steps_per_epoch over a repeated dataset, and the errors (element structure, shapes, infinite data). */
#include <string.h>

#include "data_test_util.h"
#include "tfc/keras.h"

static tfc_ctx *ctx;

static uint64_t lcg;
static float urand(void) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((lcg >> 40) & 0xFFFFFF) / (float)0x1000000 * 2.0f - 1.0f;
}

static void make_data(int64_t n, tfc_tensor **x, tfc_tensor **y, tfc_tensor **sw) {
    tfc_status st = TFC_STATUS_INIT;
    lcg = 777;
    *x = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n, 4}, 2, &st);
    *y = tfc_tensor_new(TFC_INT32, (int64_t[]){n}, 1, &st);
    *sw = tfc_tensor_new(TFC_FLOAT, (int64_t[]){n}, 1, &st);
    float *xd = tfc_tensor_mutable_data(*x), *wd = tfc_tensor_mutable_data(*sw);
    int32_t *yd = tfc_tensor_mutable_data(*y);
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) xd[i * 4 + k] = urand();
        yd[i] = xd[i * 4] - 0.5f * xd[i * 4 + 2] > 0 ? 1 : 0;
        wd[i] = 0.5f + (float)(i % 3);
    }
}

/* Two identical models (same initial weights). */
static tfc_model *model(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_model *m = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 8, .activation = "tanh", .input_shape = {4}),
                                                      tfc_layers_dense(.units = 2, .activation = "softmax"), NULL});
    REQUIRE(m);
    REQUIRE(tfc_compile(m, &st, .optimizer = tfc_optimizers_sgd(.learning_rate = 0.1),
                        .loss_name = "sparse_categorical_crossentropy", .metrics = {"accuracy"}));
    return m;
}

static void copy_weights(tfc_model *dst, tfc_model *src) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *w[8];
    int n = tfc_model_get_weights(src, w, 8, &st);
    REQUIRE(n == 4);
    REQUIRE(tfc_model_set_weights(dst, w, n, &st));
    for (int i = 0; i < n; i++) tfc_tensor_unref(w[i]);
}

static bool same_weights(tfc_model *a, tfc_model *b) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *wa[8], *wb[8];
    int n = tfc_model_get_weights(a, wa, 8, &st);
    REQUIRE(tfc_model_get_weights(b, wb, 8, &st) == n);
    bool same = true;
    for (int i = 0; i < n; i++) {
        same = same && tfc_tensor_byte_size(wa[i]) == tfc_tensor_byte_size(wb[i]) &&
               !memcmp(tfc_tensor_data(wa[i]), tfc_tensor_data(wb[i]), tfc_tensor_byte_size(wa[i]));
        tfc_tensor_unref(wa[i]);
        tfc_tensor_unref(wb[i]);
    }
    return same;
}

static void test_fit_equals_arrays(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y, *sw;
    make_data(100, &x, &y, &sw);
    for (int weighted = 0; weighted < 2; weighted++) {
        tfc_model *a = model(), *b = model();
        tfc_model_build(b, &(tfc_shape){2, {-1, 4}}, &st);
        copy_weights(b, a);
        tfc_history *ha = NULL, *hb = NULL;
        CHECK(tfc_model_fit(a, x, y,
                            &(tfc_fit_opts){.epochs = 3, .batch_size = 16, .shuffle = TFC_NO,
                                            .sample_weight = weighted ? sw : NULL, .verbose = TFC_VERBOSE_SILENT},
                            &ha, &st));
        CHECK_OK(&st);
        tfc_dataset *ds = tfc_dataset_batch(
            tfc_dataset_from_tensor_slices((tfc_tensor *[]){x, y, sw}, weighted ? 3 : 2, NULL, &st), 16, NULL, &st);
        REQUIRE(ds);
        CHECK(tfc_model_fit_dataset(b, ds, &(tfc_fit_opts){.epochs = 3, .verbose = TFC_VERBOSE_SILENT}, NULL, &hb, &st));
        CHECK_OK(&st);
        REQUIRE(ha && hb);
        int na, nb;
        const double *la = tfc_history_get(ha, "loss", &na), *lb = tfc_history_get(hb, "loss", &nb);
        const double *aa = tfc_history_get(ha, "accuracy", NULL), *ab = tfc_history_get(hb, "accuracy", NULL);
        CHECK(na == 3 && nb == 3);
        for (int e = 0; e < 3 && la && lb; e++) {
            CHECK_NEAR(lb[e], la[e], 1e-6);
            CHECK_NEAR(ab[e], aa[e], 1e-6);
        }
        CHECK(lb[2] < lb[0]);
        CHECK(same_weights(a, b));
        /* evaluate and predict */
        double ra[4], rb[4];
        CHECK(tfc_model_evaluate(a, x, y, &(tfc_eval_opts){.batch_size = 16, .verbose = TFC_VERBOSE_SILENT}, ra, 4, &st) == 2);
        CHECK(tfc_model_evaluate_dataset(b, ds, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, rb, 4, &st) == 2);
        CHECK_OK(&st);
        if (!weighted) {
            CHECK_NEAR(rb[0], ra[0], 1e-6);
            CHECK_NEAR(rb[1], ra[1], 1e-6);
        }
        tfc_tensor *pa = tfc_model_predict(a, x, &(tfc_eval_opts){.batch_size = 16, .verbose = TFC_VERBOSE_SILENT}, &st);
        tfc_tensor *pb = tfc_model_predict_dataset(b, ds, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, &st);
        CHECK_OK(&st);
        REQUIRE(pa && pb);
        CHECK(tfc_tensor_dim(pb, 0) == 100 && tfc_tensor_dim(pb, 1) == 2);
        CHECK(!memcmp(tfc_tensor_data(pa), tfc_tensor_data(pb), tfc_tensor_byte_size(pa)));
        tfc_tensor_unref(pa);
        tfc_tensor_unref(pb);
        tfc_history_free(ha);
        tfc_history_free(hb);
        tfc_dataset_unref(ds);
        tfc_model_free(a);
        tfc_model_free(b);
    }
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_tensor_unref(sw);
}

static void test_validation_and_steps(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y, *sw;
    make_data(64, &x, &y, &sw);
    tfc_model *m = model();
    tfc_dataset *train = tfc_dataset_prefetch(
        tfc_dataset_batch(tfc_dataset_shuffle(tfc_dataset_from_tensor_slices((tfc_tensor *[]){x, y}, 2, NULL, &st), 64,
                                              &(tfc_shuffle_opts){.seed = 1, .has_seed = true}, &st),
                          10, NULL, &st),
        TFC_AUTOTUNE, &st);
    tfc_dataset *val = tfc_dataset_batch(tfc_dataset_from_tensor_slices((tfc_tensor *[]){x, y}, 2, NULL, &st), 32, NULL,
                                         &st);
    tfc_history *h = NULL;
    CHECK(tfc_model_fit_dataset(m, train, &(tfc_fit_opts){.epochs = 4, .verbose = TFC_VERBOSE_SILENT}, val, &h, &st));
    CHECK_OK(&st);
    int n;
    const double *vl = tfc_history_get(h, "val_loss", &n);
    CHECK(n == 4 && vl);
    double r[4];
    CHECK(tfc_model_evaluate_dataset(m, val, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, r, 4, &st) == 2);
    if (vl) CHECK_NEAR(r[0], vl[3], 1e-6);
    tfc_history_free(h);
    /* an infinite dataset needs steps_per_epoch; with it, epochs take the next batches of one iterator */
    tfc_dataset *forever = tfc_dataset_repeat(tfc_dataset_ref(train), -1, &st);
    CHECK(!tfc_model_fit_dataset(m, forever, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, NULL, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "infinite dataset"));
    CHECK(tfc_model_fit_dataset(m, forever, &(tfc_fit_opts){.epochs = 3, .steps_per_epoch = 5, .verbose = TFC_VERBOSE_SILENT},
                                NULL, &h, &st));
    CHECK(tfc_history_epochs(h) == 3);
    tfc_history_free(h);
    /* a finite dataset that runs out stops training after the epoch that emptied it */
    CHECK(tfc_model_fit_dataset(m, train, &(tfc_fit_opts){.epochs = 5, .steps_per_epoch = 4, .verbose = TFC_VERBOSE_SILENT},
                                NULL, &h, &st));
    CHECK_OK(&st);
    CHECK(tfc_history_epochs(h) == 2); /* 7 batches: epochs of 4, then 3 and the end */
    tfc_history_free(h);
    tfc_dataset_unref(forever);
    tfc_dataset_unref(train);
    tfc_dataset_unref(val);
    tfc_model_free(m);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_tensor_unref(sw);
}

static void test_errors(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x, *y, *sw;
    make_data(20, &x, &y, &sw);
    tfc_model *m = model();
    tfc_model_build(m, &(tfc_shape){2, {-1, 4}}, &st);
    /* x of 3 features for a model of 4 */
    tfc_tensor *x3 = tfc_tensor_new(TFC_FLOAT, (int64_t[]){20, 3}, 2, &st);
    tfc_dataset *bad = tfc_dataset_batch(tfc_dataset_from_tensor_slices((tfc_tensor *[]){x3, y}, 2, NULL, &st), 5, NULL, &st);
    CHECK(!tfc_model_fit_dataset(m, bad, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, NULL, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "(None, 3)") && strstr(st.msg, "(None, 4)"));
    tfc_dataset_unref(bad);
    tfc_dataset *xs = tfc_dataset_batch(tfc_dataset_from_tensor_slices(&x, 1, NULL, &st), 5, NULL, &st);
    CHECK(!tfc_model_fit_dataset(m, xs, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, NULL, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "(x, y)"));
    /* predict takes x alone */
    tfc_tensor *p = tfc_model_predict_dataset(m, xs, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, &st);
    CHECK_OK(&st);
    CHECK(p && tfc_tensor_dim(p, 0) == 20);
    tfc_tensor_unref(p);
    tfc_dataset *ok = tfc_dataset_batch(tfc_dataset_from_tensor_slices((tfc_tensor *[]){x, y}, 2, NULL, &st), 5, NULL, &st);
    CHECK(!tfc_model_fit_dataset(m, ok, &(tfc_fit_opts){.batch_size = 5, .verbose = TFC_VERBOSE_SILENT}, NULL, NULL, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "batch_size"));
    tfc_dataset *nested = tfc_dataset_from_tensors((tfc_tensor *[]){x, x, y}, 3, "((.,.),.)", &st);
    CHECK(!tfc_model_fit_dataset(m, nested, NULL, NULL, NULL, &st) && st.code == TFC_UNIMPLEMENTED);
    tfc_dataset *empty = tfc_dataset_take(tfc_dataset_ref(ok), 0, &st);
    CHECK(!tfc_model_fit_dataset(m, empty, &(tfc_fit_opts){.verbose = TFC_VERBOSE_SILENT}, NULL, NULL, &st));
    CHECK(st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "no batches"));
    tfc_dataset_unref(empty);
    tfc_dataset_unref(nested);
    tfc_dataset_unref(ok);
    tfc_dataset_unref(xs);
    tfc_model_free(m);
    tfc_tensor_unref(x3);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_tensor_unref(sw);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    test_fit_equals_arrays();
    test_validation_and_steps();
    test_errors();
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
