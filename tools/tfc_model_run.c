/* `tfc model run --model M.keras|M.h5 --inputs 'x=x.npy;y=y.npy' --outdir DIR [--overwrite]`: loads a Keras
 * model file (tfc_keras_load_model: a .keras archive or a legacy .h5 model, detected from the contents), feeds
 * its inputs by input-layer name from .npy files, runs model.predict on them and writes each output to
 * DIR/<output layer name>.npy, with saved_model_cli's flag spellings (--inputs entries separated by ';';
 * existing output files are kept unless --overwrite). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "keras/keras_internal.h"
#include "tfc/keras.h"
#include "tfc/npy.h"
#include "tfc_tools.h"

static int fail(const char *what, const tfc_status *st) {
    fprintf(stderr, "tfc model run: %s: %s: %s\n", what, tfc_code_name(st->code), st->msg);
    return 1;
}

void tfc_tool_model_usage(FILE *f) {
    fprintf(f, "  model run --model M.keras|M.h5 --inputs 'x=x.npy;y=y.npy' --outdir DIR [--overwrite]\n"
               "                       predict with a Keras model file, writing DIR/<output>.npy\n");
}

static int model_run(int argc, char **argv) {
    const char *path = NULL, *outdir = NULL;
    char *inputs = NULL;
    bool overwrite = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--model") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "--inputs") && i + 1 < argc) inputs = argv[++i];
        else if (!strcmp(argv[i], "--outdir") && i + 1 < argc) outdir = argv[++i];
        else if (!strcmp(argv[i], "--overwrite")) overwrite = true;
        else {
            fprintf(stderr, "tfc model run: unknown or incomplete argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!path || !inputs || !outdir) {
        fprintf(stderr, "usage: tfc ");
        tfc_tool_model_usage(stderr);
        return 2;
    }
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
        fprintf(stderr, "tfc model run: %s: the model has no known inputs\n", path);
        goto done;
    }
    /* each entry key=file names an input layer; a one-input model also takes any single key */
    char *save = NULL;
    for (char *e = strtok_r(inputs, ";", &save); e; e = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(e, '=');
        if (!eq || eq == e || !eq[1]) {
            fprintf(stderr, "tfc model run: --inputs entry '%s' is not <input_key>=<filename>\n", e);
            rc = 2;
            goto done;
        }
        *eq = 0;
        int k = -1;
        for (int i = 0; i < m->n_inputs && k < 0; i++)
            if (!strcmp(m->inputs[i]->node->layer->name, e)) k = i;
        if (k < 0 && m->n_inputs == 1) k = 0;
        if (k < 0 || x[k]) {
            fprintf(stderr, "tfc model run: --inputs key '%s' is not an input of the model%s\n", e,
                    k < 0 ? "" : " or is given twice");
            goto done;
        }
        if (!(x[k] = tfc_npy_read(eq + 1, &st))) {
            fail(eq + 1, &st);
            goto done;
        }
    }
    for (int i = 0; i < m->n_inputs; i++)
        if (!x[i]) {
            fprintf(stderr, "tfc model run: input '%s' is not fed (--inputs '%s=FILE.npy')\n",
                    m->inputs[i]->node->layer->name, m->inputs[i]->node->layer->name);
            goto done;
        }
    char files[TFC_KERAS_MAX_IO][1024];
    for (int o = 0; o < m->n_outputs; o++) {
        snprintf(files[o], sizeof files[o], "%s/%s.npy", outdir, m->outputs[o]->node->layer->name);
        struct stat sb;
        if (!overwrite && stat(files[o], &sb) == 0) {
            fprintf(stderr, "tfc model run: output file %s already exists (use --overwrite)\n", files[o]);
            goto done;
        }
    }
    if (!tfc_model_predict_n(m, x, m->n_inputs, NULL, y, m->n_outputs, &st)) {
        fail("predict", &st);
        goto done;
    }
    for (int o = 0; o < m->n_outputs; o++) {
        if (!tfc_npy_write(y[o], files[o], &st)) {
            fail(files[o], &st);
            goto done;
        }
        printf("%s: %s\n", m->outputs[o]->node->layer->name, files[o]);
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

int tfc_tool_model(int argc, char **argv) {
    if (argc >= 1 && !strcmp(argv[0], "run")) return model_run(argc - 1, argv + 1);
    fprintf(stderr, "usage: tfc ");
    tfc_tool_model_usage(stderr);
    return 2;
}
