/* The Keras-file row of `tfc model run` (tfc_model.c): loads a .keras archive or a legacy .h5 model
 * (tfc_keras_load_model, detected from the contents), feeds its inputs by input-layer name from --inputs .npy
 * files (a one-input model takes any single key), runs model.predict and writes each output to
 * OUTDIR/<output layer name>.npy. */
#include <stdio.h>
#include <string.h>

#include "keras/keras_internal.h"
#include "tfc/keras.h"
#include "tfc/npy.h"
#include "tfc_tools.h"

static const char *PROG = "tfc model run";

static int fail(const char *what, const tfc_status *st) {
    fprintf(stderr, "%s: %s: %s: %s\n", PROG, what, tfc_code_name(st->code), st->msg);
    return 1;
}

bool tfc_tool_is_keras_file(const char *path) {
    size_t n = strlen(path);
    return (n > 6 && !strcmp(path + n - 6, ".keras")) || (n > 3 && !strcmp(path + n - 3, ".h5"));
}

int tfc_tool_run_keras_model(const char *path, char *inputs, const char *outdir, bool overwrite) {
    if (!inputs) {
        fprintf(stderr, "%s: a Keras model takes --inputs 'name=file.npy'\n", PROG);
        return 2;
    }
    tfc_tool_pair feeds[TFC_KERAS_MAX_IO];
    int n_feeds = tfc_tool_parse_pairs(inputs, feeds, TFC_KERAS_MAX_IO, PROG, "--inputs");
    if (n_feeds < 0) return 2;
    int rc = 1;
    tfc_status st = TFC_STATUS_INIT;
    tfc_tensor *x[TFC_KERAS_MAX_IO] = {0}, *y[TFC_KERAS_MAX_IO] = {0};
    tfc_model *m = NULL;
    tfc_ctx *ctx = tfc_ctx_new(NULL, &st);
    if (!ctx) return fail("context", &st);
    if (!(m = tfc_keras_load_model(ctx, path, &st))) {
        fail(path, &st);
        goto done;
    }
    if (m->kind == TFC_MODEL_SUBCLASSED || m->n_inputs < 1 || m->n_inputs > TFC_KERAS_MAX_IO ||
        m->n_outputs > TFC_KERAS_MAX_IO) {
        fprintf(stderr, "%s: %s: the model has no known inputs\n", PROG, path);
        goto done;
    }
    for (int f = 0; f < n_feeds; f++) {
        int k = -1;
        for (int i = 0; i < m->n_inputs && k < 0; i++)
            if (!strcmp(m->inputs[i]->node->layer->name, feeds[f].key)) k = i;
        if (k < 0 && m->n_inputs == 1) k = 0;
        if (k < 0 || x[k]) {
            fprintf(stderr, "%s: --inputs key '%s' is not an input of the model%s\n", PROG, feeds[f].key,
                    k < 0 ? "" : " or is given twice");
            goto done;
        }
        if (!(x[k] = tfc_npy_read(feeds[f].value, &st))) {
            fail(feeds[f].value, &st);
            goto done;
        }
    }
    for (int i = 0; i < m->n_inputs; i++)
        if (!x[i]) {
            fprintf(stderr, "%s: input '%s' is not fed (--inputs '%s=FILE.npy')\n", PROG,
                    m->inputs[i]->node->layer->name, m->inputs[i]->node->layer->name);
            goto done;
        }
    const char *keys[TFC_KERAS_MAX_IO];
    char files[TFC_KERAS_MAX_IO][4096];
    for (int o = 0; o < m->n_outputs; o++) keys[o] = m->outputs[o]->node->layer->name;
    if (!tfc_tool_output_paths(PROG, outdir, keys, m->n_outputs, overwrite, files)) goto done;
    if (!tfc_model_predict_n(m, x, m->n_inputs, NULL, y, m->n_outputs, &st)) {
        fail("predict", &st);
        goto done;
    }
    for (int o = 0; o < m->n_outputs; o++) {
        if (!tfc_npy_write(y[o], files[o], &st)) {
            fail(files[o], &st);
            goto done;
        }
        printf("%s: %s\n", keys[o], files[o]);
    }
    rc = 0;
done:
    for (int i = 0; i < TFC_KERAS_MAX_IO; i++) {
        tfc_tensor_unref(x[i]);
        tfc_tensor_unref(y[i]);
    }
    tfc_model_free(m);
    tfc_ctx_free(ctx);
    return rc;
}
