/* Compiled steps: Keras's train_function, test_function and predict_function as graph functions
 * (tfc/function.h). Each traces tfc_model_step_ops (or the forward pass) once per input signature: the
 * layers' weights, the optimizer's iterations and slots are captured variables, so every call trains the
 * model's current state; so is the model's seed generator (Dropout's masks), which fit sets per epoch without a
 * new trace. n steps of one execution (steps_per_execution) are unrolled in one trace. The loss
 * tracker and the metrics are updated on the host from the losses and predictions the function returns.
 *
 * A trace bakes in what the step reads from the host: the learning rate (constant: tfc_optimizer_traceable
 * excludes schedules and time decay) is remembered with the functions, and a callback that changes it
 * (LearningRateScheduler, ReduceLROnPlateau) makes the next call retrace. */
#include <stdlib.h>
#include <string.h>

#include "keras/model_internal.h"
#include "keras/optimizer_internal.h"
#include "tfc/function.h"

typedef struct fn_slot {
    struct tfc_model_fns *owner;
    tfc_fn_kind kind;
    bool has_sw;
    int n_x;          /* model inputs per step */
    tfc_function *fn; /* NULL until first used */
} fn_slot;

struct tfc_model_fns {
    tfc_model *m;
    fn_slot slot[3][2]; /* [kind][has_sw] */
    double lr;          /* the learning rate the train functions were traced with */
    int traces;         /* traces of freed functions (so the count survives a retrace) */
};

static int outs_per_step(const tfc_model *m, tfc_fn_kind kind) {
    int n_out = TFC_IMPL(m)->n_out > 0 ? TFC_IMPL(m)->n_out : tfc_model_num_outputs(m);
    if (kind == TFC_FN_PREDICT) return n_out;
    return 1 + (n_out > 1 ? n_out : 0) + n_out;
}

/* The traced body: n steps, each one's inputs after the previous one's. */
static int traced(tfc_ctx *ctx, tfc_tensor *const *in, int n_in, tfc_tensor **out, int max_out, void *user,
                  tfc_status *st) {
    (void)ctx;
    fn_slot *s = user;
    tfc_model *m = s->owner->m;
    int n_out = s->kind == TFC_FN_PREDICT ? tfc_model_num_outputs(m) : TFC_IMPL(m)->n_out;
    int per_in = s->n_x + (s->kind == TFC_FN_PREDICT ? 0 : n_out + (s->has_sw ? 1 : 0));
    int per_out = outs_per_step(m, s->kind), n = n_in / per_in, k = 0;
    if (n * per_in != n_in || n * per_out > max_out) {
        tfc_status_set(st, TFC_INTERNAL, "%s: %d inputs for steps of %d", m->base.name, n_in, per_in);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        tfc_tensor *const *x = in + i * per_in;
        tfc_step_out o = {0};
        if (s->kind == TFC_FN_PREDICT) {
            if (!tfc_model_forward(m, x, s->n_x, o.pred, n_out, false, st)) return -1;
        } else {
            tfc_tensor *const *y = x + s->n_x;
            if (!tfc_model_step_ops(m, s->kind == TFC_FN_TRAIN, x, s->n_x, y, s->has_sw ? y[n_out] : NULL, &o, st))
                return -1;
            out[k++] = o.total;
            for (int j = 0; j < n_out && n_out > 1; j++) out[k++] = o.out_loss[j];
        }
        for (int j = 0; j < n_out; j++) out[k++] = o.pred[j];
    }
    return k;
}

bool tfc_model_graph_mode(tfc_model *m, bool train) {
    /* run_eagerly = TFC_DEFAULT: the context's keras_run_eagerly switch (TFC_KERAS_RUN_EAGERLY) */
    tfc_flag r = m->run_eagerly == TFC_DEFAULT ? (tfc_ctx_config(m->ctx)->keras_run_eagerly ? TFC_YES : TFC_NO)
                                                : m->run_eagerly;
    if (r != TFC_NO || TFC_IMPL(m)->strategy) return false;
    return !train || tfc_optimizer_traceable(m->optimizer);
}

void tfc_model_fns_forget(tfc_model *m, tfc_fn_kind kind) {
    struct tfc_model_fns *f = TFC_IMPL(m)->fns;
    for (int w = 0; f && w < 2; w++) {
        fn_slot *s = &f->slot[kind][w];
        if (!s->fn) continue;
        f->traces += tfc_function_tracing_count(s->fn);
        tfc_function_free(s->fn);
        s->fn = NULL;
    }
}

static void slots_free(tfc_model *m) {
    for (int k = 0; k < 3; k++) tfc_model_fns_forget(m, (tfc_fn_kind)k);
}

void tfc_model_fns_free(tfc_model *m) {
    struct tfc_model_fns *f = TFC_IMPL(m)->fns;
    if (!f) return;
    slots_free(m);
    tfc_free(f);
    TFC_IMPL(m)->fns = NULL;
}

int tfc_model_fn_tracing_count(const tfc_model *m) {
    const struct tfc_model_fns *f = TFC_IMPL(m)->fns;
    if (!f) return 0;
    int n = f->traces;
    for (int k = 0; k < 3; k++)
        for (int w = 0; w < 2; w++)
            if (f->slot[k][w].fn) n += tfc_function_tracing_count(f->slot[k][w].fn);
    return n;
}

static const char *const fn_names[3] = {"train_function", "test_function", "predict_function"};

bool tfc_model_fn_run(tfc_model *m, tfc_fn_kind kind, int n, tfc_tensor *const *in, int n_x, bool has_sw,
                      tfc_step_out *out, tfc_status *st) {
    tfc_model_impl *impl = TFC_IMPL(m);
    if (n < 1 || n > TFC_MAX_STEPS_PER_EXECUTION)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: %d steps in one execution", m->base.name, n);
    struct tfc_model_fns *f = impl->fns;
    if (!f) {
        if (!(f = impl->fns = tfc_calloc(1, sizeof *f))) return tfc_status_oom(st, "compiled steps", sizeof *f);
        f->m = m;
        f->lr = -1;
    }
    if (kind == TFC_FN_TRAIN) {
        /* the optimizer's variables exist before the trace (assignments inside it would run at every call) */
        int nv = tfc_layer_trainable_weights(&m->base, NULL, 0);
        tfc_variable **vars = tfc_calloc((size_t)(nv ? nv : 1), sizeof *vars);
        if (!vars) return tfc_status_oom(st, "compiled steps", 0);
        tfc_layer_trainable_weights(&m->base, vars, nv);
        bool built = tfc_optimizer_build(m->optimizer, m->ctx, vars, nv, st);
        tfc_free(vars);
        /* and the seed generator Dropout draws from (training_rng.c) */
        if (!built || !tfc_model_rng_ready(m, st)) return false;
        double lr = tfc_optimizer_learning_rate(m->optimizer);
        if (lr != f->lr) { /* a changed learning rate: the traced constant is stale */
            slots_free(m);
            f->lr = lr;
        }
    }
    fn_slot *s = &f->slot[kind][has_sw ? 1 : 0];
    if (s->fn && s->n_x != n_x) tfc_model_fns_forget(m, kind);
    if (!s->fn) {
        *s = (fn_slot){.owner = f, .kind = kind, .has_sw = has_sw, .n_x = n_x};
        tfc_function_opts fo = {.name = fn_names[kind]};
        if (!(s->fn = tfc_function_new(m->ctx, traced, s, &fo, st))) return false;
    }
    int n_out = kind == TFC_FN_PREDICT ? tfc_model_num_outputs(m) : impl->n_out;
    int per_in = n_x + (kind == TFC_FN_PREDICT ? 0 : n_out + (has_sw ? 1 : 0)), per_out = outs_per_step(m, kind);
    tfc_tensor *res[TFC_MAX_STEPS_PER_EXECUTION * (2 * TFC_KERAS_MAX_IO + 1)];
    int got = tfc_function_call(s->fn, in, n * per_in, res, n * per_out, st);
    if (got < 0) return false;
    if (got != n * per_out)
        return tfc_status_set(st, TFC_INTERNAL, "%s: %s gave %d results, expected %d", m->base.name, fn_names[kind], got,
                              n * per_out);
    int k = 0;
    for (int i = 0; i < n; i++) {
        out[i] = (tfc_step_out){0};
        if (kind != TFC_FN_PREDICT) {
            out[i].total = res[k++];
            for (int j = 0; j < n_out && n_out > 1; j++) out[i].out_loss[j] = res[k++];
        }
        for (int j = 0; j < n_out; j++) out[i].pred[j] = res[k++];
    }
    return true;
}
