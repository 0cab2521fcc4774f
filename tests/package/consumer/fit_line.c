/* Keras's first example in C: one Dense unit learns y = 2x - 1 from six points, then predicts y(10). */
#include <stdio.h>
#include "tfc/tfc.h"

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    if (!ctx) return fprintf(stderr, "%s\n", st.msg), 1;
    tfc_ctx_set_seed(ctx, 1); /* tf.random.set_seed(1) */
    float xs[] = {-1, 0, 1, 2, 3, 4}, ys[] = {-3, -1, 1, 3, 5, 7}, q[] = {10};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){6, 1}, 2, xs, sizeof xs, &st);
    tfc_tensor *y = x ? tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){6, 1}, 2, ys, sizeof ys, &st) : NULL;
    tfc_tensor *xq = y ? tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){1, 1}, 2, q, sizeof q, &st) : NULL;
    tfc_model *model = tfc_sequential(ctx, (tfc_layer *[]){tfc_layers_dense(.units = 1, .input_shape = {1}), NULL});
    tfc_tensor *pred = NULL;
    if (xq && tfc_compile(model, &st, .optimizer_name = "sgd", .loss_name = "mean_squared_error") &&
        tfc_model_fit(model, x, y, &(tfc_fit_opts){.epochs = 500, .verbose = TFC_VERBOSE_SILENT}, NULL, &st))
        pred = tfc_model_predict(model, xq, &(tfc_eval_opts){.verbose = TFC_VERBOSE_SILENT}, &st);
    if (pred) printf("tfc %s: y(10) = %.1f\n", tfc_version(), ((const float *)tfc_tensor_data(pred))[0]);
    else fprintf(stderr, "error: %s: %s\n", tfc_code_name(st.code), st.msg);
    int rc = !pred;
    tfc_tensor_unref(pred), tfc_tensor_unref(xq), tfc_tensor_unref(y), tfc_tensor_unref(x);
    tfc_model_free(model);
    tfc_ctx_free(ctx);
    return rc;
}
