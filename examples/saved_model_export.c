/* Exporting a model as a SavedModel, as tf.saved_model.save(module, dir, signatures=module.__call__):
 *
 *     saved_model_export DIR [W.npy B.npy]
 *
 * A dense layer y = relu(x @ w + b) (w [n_in, n_out], b [n_out]: from the .npy files, or a fixed 2x3 example) is
 * traced as a tf.function with input signature x: float32 [None, n_in] and saved to DIR with the signature
 * serving_default (inputs {"x"}, outputs {"y"}). The model is then loaded back and run on x = ones([1, n_in]).
 * TensorFlow reads DIR: tf.saved_model.load(DIR).signatures["serving_default"](x=...)["y"], or
 * `saved_model_cli show --dir DIR --all`. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>

#include "tfc/tfc.h"

typedef struct {
    tfc_variable *w, *b;
} dense;

static int dense_fn(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                    tfc_status *st) {
    (void)n_in, (void)max_out; /* the input signature fixes one input and one output */
    dense *d = user;
    tfc_tensor *w = tfc_variable_read(ctx, d->w, st), *b = w ? tfc_variable_read(ctx, d->b, st) : NULL, *h, *y;
    if (!b || !(h = tfc_matmul(ctx, in[0], w, false, false, st)) || !(h = tfc_add(ctx, h, b, st)) || !(y = tfc_relu(ctx, h, st)))
        return -1;
    out[0] = y;
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: %s DIR [W.npy B.npy]\n", argv[0]);
        return 2;
    }
    tfc_status st = TFC_STATUS_INIT;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    tfc_tensor *w0 = NULL, *b0 = NULL, *x = NULL, *y = NULL;
    tfc_function *f = NULL;
    tfc_saved_model *m = NULL;
    dense d = {0};
    int rc = 1;
    if (!ctx) goto done;
    if (argc == 4) {
        w0 = tfc_npy_read(argv[2], &st);
        b0 = w0 ? tfc_npy_read(argv[3], &st) : NULL;
    } else {
        const float wv[6] = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f}, bv[3] = {0.1f, 0.2f, -0.3f};
        w0 = tfc_tensor_from_data(TFC_FLOAT, (int64_t[]){2, 3}, 2, wv, sizeof wv, &st);
        b0 = w0 ? tfc_vec_f32(bv, 3, &st) : NULL;
    }
    if (!b0 || !(d.w = tfc_variable_new(ctx, w0, true, "dense/kernel", &st)) ||
        !(d.b = tfc_variable_new(ctx, b0, true, "dense/bias", &st)))
        goto done;
    const int64_t n_in = tfc_tensor_shape(w0)->dims[0];
    tfc_tensor_spec spec = {TFC_FLOAT, {2, {-1, n_in}}};
    f = tfc_function_new(ctx, dense_fn, &d, &(tfc_function_opts){.name = "dense", .input_signature = &spec,
                                                                  .n_input_signature = 1}, &st);
    tfc_concrete_function *cf = f ? tfc_function_get_concrete_function(f, &spec, 1, &st) : NULL;
    tfc_saved_model_signature_spec sig = {.key = TFC_SAVED_MODEL_DEFAULT_SIGNATURE, .function = cf,
                                          .input_keys = (const char *[]){"x"}, .output_keys = (const char *[]){"y"}};
    if (!cf || !tfc_saved_model_save(ctx, argv[1], &sig, 1, &st)) goto done;
    printf("saved %s: serving_default x: float32 [?,%lld] -> y\n", argv[1], (long long)n_in);
    /* load it back, as tf.saved_model.load */
    if (!(m = tfc_saved_model_load(ctx, argv[1], NULL, 0, &st))) goto done;
    tfc_saved_model_signature *s = tfc_saved_model_signature_find(m, TFC_SAVED_MODEL_DEFAULT_SIGNATURE);
    if (!(x = tfc_tensor_new(TFC_FLOAT, (int64_t[]){1, n_in}, 2, &st))) goto done;
    float *xd = tfc_tensor_mutable_data(x);
    for (int64_t i = 0; i < n_in; i++) xd[i] = 1.0f;
    if (!s || !tfc_saved_model_signature_call(s, &x, 1, &y, 1, &st)) goto done;
    printf("loaded: y(ones) =");
    for (int64_t i = 0; i < tfc_tensor_num_elements(y); i++) printf(" %g", tfc_tensor_get_f64(y, i));
    printf("\n");
    rc = 0;
done:
    if (rc) fprintf(stderr, "saved_model_export: %s: %s\n", tfc_code_name(st.code), st.msg);
    tfc_tensor_unref(y);
    tfc_tensor_unref(x);
    tfc_saved_model_free(m);
    tfc_function_free(f);
    tfc_variable_free(d.w);
    tfc_variable_free(d.b);
    tfc_tensor_unref(w0);
    tfc_tensor_unref(b0);
    tfc_ctx_free(ctx);
    return rc;
}
