/* saved_model_load: loading the demo CNN saved by TensorFlow (tf-keras model.save(dir) of the Keras model with the
 * bench's weights; the TensorFlow worker writes <work_dir>/cnn_saved_model before tfc is prepared) into a fresh
 * context, as a serving process starts: tfc_ctx_new + tfc_saved_model_load (parse, validate, import the
 * serving_default signature, restore variables), then freed; TensorFlow's side is tf.saved_model.load(dir). The
 * check is sum(probs * [0..9]) of serving_default on a fixed image, compared with TensorFlow's. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"

#pragma weak tfc_saved_model_load

typedef struct {
    bench_case base;
    char dir[4096];
    int threads;
} sm_case;

static tfc_saved_model *load(const sm_case *c, tfc_ctx **ctx, tfc_status *st) {
    if (!(*ctx = tfc_ctx_new(&(tfc_ctx_opts){.intra_op_threads = c->threads}, st))) return NULL;
    return tfc_saved_model_load(*ctx, c->dir, NULL, 0, st);
}

static bool sm_run(bench_case *bc, int64_t iters, tfc_status *st) {
    sm_case *c = (sm_case *)bc;
    for (int64_t i = 0; i < iters; i++) {
        tfc_ctx *ctx = NULL;
        tfc_saved_model *m = load(c, &ctx, st);
        tfc_saved_model_free(m);
        tfc_ctx_free(ctx);
        if (!m) return false;
    }
    return true;
}

static void sm_free(bench_case *bc) { tfc_free(bc); }

/* serving_default on an image of 0.5s: sum(probs * class index). */
static bool checksum(sm_case *c, tfc_status *st) {
    tfc_ctx *ctx = NULL;
    tfc_saved_model *m = load(c, &ctx, st);
    tfc_saved_model_signature *s = m ? tfc_saved_model_signature_find(m, "serving_default") : NULL;
    tfc_tensor *x = s ? tfc_tensor_new(TFC_FLOAT, (int64_t[]){1, 28, 28, 1}, 4, st) : NULL, *y = NULL;
    bool ok = x != NULL;
    if (ok) {
        float *d = tfc_tensor_mutable_data(x);
        for (int i = 0; i < 28 * 28; i++) d[i] = 0.5f;
        ok = tfc_saved_model_signature_num_outputs(s) == 1 && tfc_saved_model_signature_call(s, &x, 1, &y, 1, st);
    }
    if (ok) {
        c->base.check = 0;
        for (int64_t i = 0; i < tfc_tensor_num_elements(y); i++) c->base.check += (double)i * tfc_tensor_get_f64(y, i);
    }
    if (m && !s) tfc_status_set(st, TFC_NOT_FOUND, "%s has no serving_default signature", c->dir);
    tfc_tensor_unref(x);
    tfc_tensor_unref(y);
    tfc_saved_model_free(m);
    tfc_ctx_free(ctx);
    return ok;
}

bench_case *bench_prep_saved_model(tfc_ctx *ctx, const bench_cfg *cfg, const char *impl, const char *workload,
                                   tfc_status *st) {
    (void)ctx;
    if (strcmp(workload, "saved_model_load")) return NULL;
    if (strcmp(impl, "tfc")) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "saved_model_load: unknown impl '%s'", impl), NULL;
    if (!tfc_saved_model_load)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "saved_model_load: libtfc has no tfc_saved_model_load"), NULL;
    sm_case *c = tfc_calloc(1, sizeof *c);
    if (!c) return tfc_status_oom(st, "saved_model_load", sizeof *c), NULL;
    *c = (sm_case){.base = {sm_run, sm_free, 1, NAN, -1}, .threads = cfg->threads};
    snprintf(c->dir, sizeof c->dir, "%s/cnn_saved_model", cfg->work_dir ? cfg->work_dir : ".");
    if (!checksum(c, st)) {
        sm_free(&c->base);
        return NULL;
    }
    return &c->base;
}
