/* Mixed precision through the C API: Policy and the global policy, a Dense layer under mixed_float16 and
 * mixed_bfloat16 (float32 variables, compute-dtype outputs, a float32 softmax after it), the
 * LossScaleOptimizer's loss-scale updates and skipped steps, and the TensorFloat-32 switch. */
#include <math.h>

#include "tfc/keras.h"
#include "tfc/tfc.h"
#include "tfc_test.h"

static tfc_ctx *ctx;

static void test_policies(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_policy p;
    CHECK(tfc_policy_init(&p, "mixed_float16", &st) && p.compute_dtype == TFC_HALF && p.variable_dtype == TFC_FLOAT);
    CHECK(tfc_policy_init(&p, "mixed_bfloat16", &st) && p.compute_dtype == TFC_BFLOAT16);
    CHECK(tfc_policy_init(&p, "float64", &st) && p.compute_dtype == TFC_DOUBLE && p.variable_dtype == TFC_DOUBLE);
    CHECK(!tfc_policy_init(&p, "mixed_float32", &st) && st.code == TFC_INVALID_ARGUMENT);
    CHECK(!strcmp(tfc_mixed_precision_global_policy().name, "float32"));
    CHECK(!tfc_mixed_precision_set_global_policy("int32", &st) && st.code == TFC_INVALID_ARGUMENT);
    CHECK(!strcmp(tfc_mixed_precision_global_policy().name, "float32"));
}

static void test_layers(const char *policy, tfc_dtype cd) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_mixed_precision_set_global_policy(policy, &st));
    tfc_layer *d = tfc_layers_dense(.units = 4, .activation = "relu");
    tfc_layer *s = tfc_layers_softmax(.dtype_policy = "float32");
    tfc_layer *bad = tfc_layers_dense(.units = 2, .dtype_policy = "mixed_float8");
    REQUIRE(tfc_mixed_precision_set_global_policy(NULL, &st));
    REQUIRE(d && s && bad);
    CHECK(tfc_layer_compute_dtype(d) == cd && tfc_layer_variable_dtype(d) == TFC_FLOAT);
    CHECK(!strcmp(tfc_layer_dtype_policy(d).name, policy));
    float xv[6] = {0.5f, -1, 2, 0.25f, 1, -0.5f};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, xv, sizeof xv, &st);
    tfc_tensor *y = x ? tfc_layer_call1(d, ctx, x, false, &st) : NULL;
    tfc_tensor *z = y ? tfc_layer_call1(s, ctx, y, false, &st) : NULL;
    CHECK_OK(&st);
    CHECK(y && tfc_tensor_dtype(y) == cd && z && tfc_tensor_dtype(z) == TFC_FLOAT);
    tfc_variable *w[2];
    CHECK(tfc_layer_weights(d, w, 2) == 2 && tfc_variable_dtype(w[0]) == TFC_FLOAT && tfc_variable_dtype(w[1]) == TFC_FLOAT);
    for (int i = 0; z && i < 2; i++) {
        double sum = 0;
        for (int j = 0; j < 4; j++) sum += tfc_tensor_get_f64(z, i * 4 + j);
        CHECK(fabs(sum - 1) < 1e-6);
    }
    char *cfg = tfc_layer_get_config(d, &st);
    CHECK(cfg && strstr(cfg, "\"class_name\":\"Policy\"") && strstr(cfg, policy));
    /* the config reads back with its policy */
    tfc_layer *back = cfg ? tfc_layer_from_config("Dense", cfg, &st) : NULL;
    CHECK(back && tfc_layer_compute_dtype(back) == cd && tfc_layer_variable_dtype(back) == TFC_FLOAT);
    /* an unknown policy is reported when the layer is built */
    CHECK(!tfc_layer_call1(bad, ctx, x, false, &st) && st.code == TFC_INVALID_ARGUMENT && strstr(st.msg, "mixed_float8"));
    tfc_free(cfg);
    tfc_tensor_unref(x), tfc_tensor_unref(y), tfc_tensor_unref(z);
    tfc_layer_unref(d), tfc_layer_unref(s), tfc_layer_unref(bad), tfc_layer_unref(back);
}

/* growth 2, initial 4: finite, finite (-> 8), inf (-> 4, skipped), finite, nan (-> 2, skipped), finite, finite (-> 4) */
static void test_loss_scale(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_optimizer *o = tfc_mixed_precision_loss_scale_optimizer(tfc_optimizers_sgd(.learning_rate = 0.5),
                                                                 .initial_scale = 4, .dynamic_growth_steps = 2);
    REQUIRE(o && tfc_optimizer_is_loss_scale(o));
    tfc_tensor *v0 = tfc_scalar_f32(1.0f, &st);
    tfc_variable *v = v0 ? tfc_variable_new(ctx, v0, true, "v", &st) : NULL;
    REQUIRE(v);
    const float gs[] = {1, 1, INFINITY, 1, NAN, 1, 1};
    const double scales[] = {4, 8, 4, 4, 2, 2, 4}, values[] = {0.5, 0, 0, -0.5, -0.5, -1, -1.5};
    for (int i = 0; i < 7; i++) {
        tfc_tensor *g = tfc_scalar_f32(gs[i], &st);
        CHECK(g && tfc_optimizer_apply_gradients(o, ctx, &g, &v, 1, &st));
        CHECK(tfc_loss_scale_optimizer_loss_scale(o) == scales[i]);
        CHECK(tfc_tensor_get_f64(tfc_variable_value(v), 0) == values[i]);
        tfc_tensor_unref(g);
    }
    CHECK(tfc_optimizer_iterations(o) == 7);
    tfc_tensor *loss = tfc_scalar_f32(0.75f, &st), *sl = loss ? tfc_loss_scale_optimizer_get_scaled_loss(o, ctx, loss, &st) : NULL;
    CHECK(sl && tfc_tensor_get_f64(sl, 0) == 3.0);
    tfc_tensor *ug = NULL;
    CHECK(sl && tfc_loss_scale_optimizer_get_unscaled_gradients(o, ctx, &sl, 1, &ug, &st) && ug &&
          tfc_tensor_get_f64(ug, 0) == 0.75);
    tfc_tensor_unref(loss), tfc_tensor_unref(sl), tfc_tensor_unref(ug), tfc_tensor_unref(v0);
    tfc_variable_free(v);
    tfc_optimizer_free(o);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    CHECK(tfc_config_tensor_float_32_execution_enabled()); /* TensorFlow's default */
    tfc_config_enable_tensor_float_32_execution(false);
    CHECK(!tfc_config_tensor_float_32_execution_enabled());
    tfc_config_enable_tensor_float_32_execution(true);
    test_policies();
    test_layers("mixed_float16", TFC_HALF);
    test_layers("mixed_bfloat16", TFC_BFLOAT16);
    test_loss_scale();
    tfc_ctx_free(ctx);
    printf("%d checks, %d failures\n", tfc_test_checks, tfc_test_failures);
    return tfc_test_failures != 0;
}
