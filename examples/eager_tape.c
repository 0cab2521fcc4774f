/* Eager ops, a variable and a GradientTape in C: y = w * x * x + x, then one SGD step on w. */
#include <stdio.h>

#include "tfc/tfc.h"

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    if (!ctx) return fprintf(stderr, "%s\n", st.msg), 1;
    tfc_scope_begin(ctx, &st); /* ops' results below belong to the scope */

    float xv[] = {1, 2, 3}, wv[] = {0.5f, -1, 2};
    tfc_tensor *x = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){3}, 1, xv, sizeof xv, &st);
    tfc_tensor *w0 = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){3}, 1, wv, sizeof wv, &st);
    tfc_variable *w = x && w0 ? tfc_variable_new(ctx, w0, true, "w", &st) : NULL;
    tfc_tape *tape = w ? tfc_tape_new(ctx, false, true, &st) : NULL; /* with tf.GradientTape() as tape: */
    tfc_tensor *y = NULL, *grads[2] = {NULL, NULL}, *step = NULL;
    if (tape) {
        tfc_tape_watch(tape, x);                   /* w is watched when read: it is trainable */
        tfc_tensor *wx = tfc_emit(ctx, "Mul", (tfc_tensor *[]){tfc_variable_read(ctx, w, &st), x}, 2, NULL, 0, &st);
        tfc_tensor *wxx = wx ? tfc_emit(ctx, "Mul", (tfc_tensor *[]){wx, x}, 2, NULL, 0, &st) : NULL;
        y = wxx ? tfc_emit(ctx, "AddV2", (tfc_tensor *[]){wxx, x}, 2, NULL, 0, &st) : NULL;
    }
    /* dy/dx = 2wx + 1, dy/dw = x^2 */
    if (y && tfc_tape_gradient(tape, y, &x, 1, &w, 1, TFC_UNCONNECTED_NONE, grads, &st)) {
        tfc_tensor *lr = tfc_scalar_f32(0.1f, &st);
        step = tfc_emit(ctx, "Mul", (tfc_tensor *[]){lr, grads[1]}, 2, NULL, 0, &st);
        tfc_tensor_unref(lr);
        if (step) tfc_variable_assign_sub(ctx, w, step, &st); /* w -= 0.1 * dy/dw */
    }
    if (st.code == TFC_OK) {
        char buf[256];
        printf("y     = %s\n", tfc_tensor_str(y, buf, sizeof buf, 10));
        printf("dy/dx = %s\n", tfc_tensor_str(grads[0], buf, sizeof buf, 10));
        printf("dy/dw = %s\n", tfc_tensor_str(grads[1], buf, sizeof buf, 10));
        printf("w     = %s\n", tfc_tensor_str(tfc_variable_value(w), buf, sizeof buf, 10));
    } else {
        fprintf(stderr, "error: %s: %s\n", tfc_code_name(st.code), st.msg);
    }
    int rc = st.code != TFC_OK;
    tfc_tape_free(tape);
    tfc_variable_free(w);
    tfc_tensor_unref(w0);
    tfc_tensor_unref(x);
    tfc_scope_end(ctx); /* frees y, the gradients and every intermediate */
    tfc_ctx_free(ctx);
    return rc;
}
