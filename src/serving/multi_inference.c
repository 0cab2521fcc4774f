/* MultiInference on a loaded version (servable.h): several classify / regress tasks of one model on one Input,
 * checked together first as TensorFlow Serving's multi-inference runner does, then run. */
#include <string.h>

#include "serving/serving_internal.h"
#include "tfc/platform.h"

#define CLASSIFY_METHOD "tensorflow/serving/classify"
#define REGRESS_METHOD "tensorflow/serving/regress"

static const char *sig_name(const char *name) {
    return name && *name ? name : TFC_SAVED_MODEL_DEFAULT_SIGNATURE;
}

/* The checks of every task, before any runs. */
static bool check_tasks(tfc_srv_version *v, const tfc_srv_inference_task *tasks, int n, tfc_status *st) {
    const char *model = NULL, *input = NULL;
    for (int t = 0; t < n; t++) {
        const char *name = tasks[t].model ? tasks[t].model : "", *sig = sig_name(tasks[t].signature);
        const char *method = tasks[t].method ? tasks[t].method : "";
        if (!*name) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Found ModelSpec with an empty model name.");
        if (!model) model = name;
        else if (strcmp(model, name))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "All ModelSpecs in a MultiInferenceRequest must access "
                                  "the same model name.");
        for (int u = 0; u < t; u++)
            if (!strcmp(sig_name(tasks[u].signature), sig))
                return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Duplicate evaluation of signature: %s", sig);
        if (!tfc_saved_model_signature_find(v->inst[0].sm, sig))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Requested signature not found in model graph: %s", sig);
        if (strcmp(method, CLASSIFY_METHOD) && strcmp(method, REGRESS_METHOD))
            return tfc_status_set(st, TFC_UNIMPLEMENTED, "Unsupported signature method_name: %s", method);
        const tfc_saved_model_signature *s = srv_examples_signature(v, sig, method, st);
        if (!s) return false;
        const char *in = tfc_saved_model_signature_input(s, 0)->name;
        if (!input) input = in;
        else if (strcmp(input, in))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Input tensor must be the same for all Signatures.");
    }
    return true;
}

bool tfc_srv_multi_inference(tfc_srv_version *v, const tfc_srv_inference_task *tasks, int n_tasks,
                             const tfc_srv_examples *ex, tfc_srv_inference_result **results, tfc_status *st) {
    *results = NULL;
    if (n_tasks < 0) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "MultiInference: %d tasks", n_tasks);
    if (!check_tasks(v, tasks, n_tasks, st)) return false;
    tfc_srv_inference_result *r = tfc_calloc((size_t)n_tasks + 1, sizeof *r);
    if (!r) return tfc_status_oom(st, "MultiInference results", (size_t)n_tasks * sizeof *r);
    for (int t = 0; t < n_tasks; t++) {
        bool ok;
        if ((r[t].is_regression = !strcmp(tasks[t].method, REGRESS_METHOD)))
            ok = (r[t].values = tfc_srv_regress(v, tasks[t].signature, ex, &r[t].n_values, st)) != NULL;
        else
            ok = tfc_srv_classify(v, tasks[t].signature, ex, &r[t].classification, st);
        if (!ok) {
            tfc_srv_inference_results_free(r, n_tasks);
            return false;
        }
    }
    *results = r;
    tfc_status_clear(st);
    return true;
}

void tfc_srv_inference_results_free(tfc_srv_inference_result *r, int n) {
    for (int t = 0; r && t < n; t++) {
        tfc_srv_classification_clear(&r[t].classification);
        tfc_free(r[t].values);
    }
    tfc_free(r);
}
