/* `tfc model run --model M --inputs 'x=x.npy' [--input_exprs 'x=[...]'] --outdir O [--overwrite]`: runs a saved
 * model on .npy inputs and writes each output as O/<output_key>.npy. The kind of model is picked from the path by
 * the table below (one row per format); a SavedModel directory runs its serving_default signature under the
 * 'serve' tag set; a Keras file (.keras, .h5) predicts (tfc_model_keras.c). */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tfc_tools.h"

typedef struct {
    const char *model, *outdir;
    char *inputs, *input_exprs;
    bool overwrite;
} model_args;

static bool is_saved_model_dir(const char *path) {
    char pb[4096];
    struct stat sb;
    snprintf(pb, sizeof pb, "%s/saved_model.pb", path);
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode) && stat(pb, &sb) == 0;
}

static int run_saved_model(const model_args *a) {
    return tfc_tool_run_signature("tfc model run", a->model, "serve", "serving_default", a->inputs, a->input_exprs,
                                  a->outdir, a->overwrite);
}

static int run_keras(const model_args *a) {
    return tfc_tool_run_keras_model(a->model, a->inputs, a->outdir, a->overwrite);
}

/* Model formats: the first whose `matches` accepts the path runs it. */
static const struct {
    const char *what;
    bool (*matches)(const char *path);
    int (*run)(const model_args *a);
} kinds[] = {
    {"SavedModel directory (saved_model.pb)", is_saved_model_dir, run_saved_model},
    {"Keras model file (.keras, .h5)", tfc_tool_is_keras_file, run_keras},
};

int tfc_tool_model(int argc, char **argv) {
    model_args a = {0};
    if (argc < 1 || strcmp(argv[0], "run")) {
        fprintf(stderr, "usage: tfc model run --model M --inputs 'x=x.npy' --outdir O [--overwrite]\n");
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--overwrite")) a.overwrite = true;
        else if (i + 1 >= argc) {
            fprintf(stderr, "tfc model run: unknown or incomplete argument '%s'\n", argv[i]);
            return 2;
        } else if (!strcmp(argv[i], "--model")) a.model = argv[++i];
        else if (!strcmp(argv[i], "--inputs")) a.inputs = argv[++i];
        else if (!strcmp(argv[i], "--input_exprs")) a.input_exprs = argv[++i];
        else if (!strcmp(argv[i], "--outdir")) a.outdir = argv[++i];
        else {
            fprintf(stderr, "tfc model run: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }
    if (!a.model || !a.outdir || (!a.inputs && !a.input_exprs)) {
        fprintf(stderr, "tfc model run: --model, --outdir and --inputs (or --input_exprs) are required\n");
        return 2;
    }
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (kinds[k].matches(a.model)) return kinds[k].run(&a);
    fprintf(stderr, "tfc model run: %s is not a model tfc can run (expected one of:", a.model);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) fprintf(stderr, "%s %s", k ? "," : "", kinds[k].what);
    fprintf(stderr, ")\n");
    return 1;
}

void tfc_tool_model_usage(FILE *f) {
    fprintf(f, "  model run --model M --inputs 'x=x.npy' --outdir O [--overwrite]\n"
               "                       run a SavedModel directory's serving_default or predict with a .keras / .h5\n"
               "                       model, writing O/<output>.npy\n");
}
