/* Keras models and optimizers as trackables (tfc/checkpoint.h), with the object structure tf-keras gives them,
 * so that tf.train.Checkpoint(model=..., optimizer=...) files move between tfc and TensorFlow:
 *   model      "layer-<i>" for every layer of model.layers, "layer_with_weights-<k>" for the k-th layer that has
 *              weights; a layer's weights under their attribute names ("kernel", "bias", "gamma", ...), nested
 *              models recursively.
 *   optimizer  Keras 2.11+ family: "_iterations", "_learning_rate", "_variables/<i>" (optimizer.variables:
 *              iterations then the slots in creation order) and Adam's "_momentums"/"_velocities"/
 *              "_velocity_hats" lists; OptimizerV2 (legacy): "iter", the hyper-parameters as float32 variables
 *              ("learning_rate", "decay", "beta_1", ...) and the slots as slot_variables ("m", "v", ...).
 * Hyper-parameters are numbers in tfc: they are copied into their variables before a save and back after a
 * restore. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "keras/model_internal.h"
#include "keras/optimizer_internal.h"
#include "tfc/checkpoint.h"
#include "tfc/keras/checkpoint.h"

#define MAX_HYPERS 6

/* ---- the model ---- */

/* A weight's attribute name: its variable name without the layer scope and ":0" ("dense/kernel:0" -> "kernel"). */
static void weight_attr(const tfc_variable *v, char *buf, size_t n) {
    const char *name = tfc_variable_name(v);
    if (!name) name = "weight";
    const char *slash = strrchr(name, '/');
    snprintf(buf, n, "%s", slash ? slash + 1 : name);
    char *colon = strrchr(buf, ':');
    if (colon && colon != buf) *colon = 0;
}

static tfc_trackable *layer_trackable(tfc_layer *l, tfc_status *st);

static bool track_layers(tfc_trackable *t, tfc_model *m, tfc_status *st) {
    int n = tfc_model_layers(m, NULL, 0);
    tfc_layer **layers = tfc_calloc((size_t)(n ? n : 1), sizeof *layers);
    if (!layers) return tfc_status_oom(st, "model layers", (size_t)n * sizeof *layers);
    tfc_model_layers(m, layers, n);
    bool ok = true;
    for (int i = 0, k = 0; ok && i < n; i++) {
        tfc_trackable *lt = layer_trackable(layers[i], st);
        char name[48];
        ok = lt != NULL;
        if (ok && tfc_layer_weights(layers[i], NULL, 0) > 0) {
            snprintf(name, sizeof name, "layer_with_weights-%d", k++);
            ok = tfc_trackable_track_child(t, name, lt, st);
        }
        snprintf(name, sizeof name, "layer-%d", i);
        ok = ok && tfc_trackable_track_child(t, name, lt, st);
        tfc_trackable_unref(lt);
    }
    tfc_free(layers);
    return ok;
}

static tfc_trackable *layer_trackable(tfc_layer *l, tfc_status *st) {
    tfc_trackable *t = tfc_trackable_new(st);
    if (!t) return NULL;
    tfc_model *inner = tfc_layer_as_model(l);
    bool ok = true;
    if (inner) {
        ok = track_layers(t, inner, st);
    } else {
        int n = tfc_layer_weights(l, NULL, 0);
        tfc_variable **w = tfc_calloc((size_t)(n ? n : 1), sizeof *w);
        if (!w) ok = tfc_status_oom(st, "layer weights", (size_t)n * sizeof *w);
        if (ok) tfc_layer_weights(l, w, n);
        for (int i = 0; ok && i < n; i++) {
            char attr[128];
            weight_attr(w[i], attr, sizeof attr);
            ok = tfc_trackable_track_variable(t, attr, w[i], st);
        }
        tfc_free(w);
    }
    if (!ok) {
        tfc_trackable_unref(t);
        return NULL;
    }
    return t;
}

tfc_trackable *tfc_model_trackable(tfc_model *m, tfc_status *st) {
    tfc_trackable *t = tfc_trackable_new(st);
    if (t && !track_layers(t, m, st)) {
        tfc_trackable_unref(t);
        return NULL;
    }
    return t;
}

/* ---- the optimizer ---- */

typedef struct {
    tfc_optimizer *o;
    tfc_ctx *ctx;
    int n;
    tfc_variable *var[MAX_HYPERS];
    double *field[MAX_HYPERS];
} opt_hypers;

static void hypers_saving(void *user) {
    opt_hypers *h = user;
    tfc_status st = TFC_STATUS_INIT;
    for (int i = 0; i < h->n; i++) {
        tfc_tensor *t = tfc_scalar_f32((float)*h->field[i], &st);
        if (t) tfc_variable_assign(h->ctx, h->var[i], t, &st);
        tfc_tensor_unref(t);
    }
}

static void hypers_restored(void *user) {
    opt_hypers *h = user;
    for (int i = 0; i < h->n; i++) *h->field[i] = *(const float *)tfc_tensor_data(tfc_variable_value(h->var[i]));
}

static void hypers_free(void *user) {
    opt_hypers *h = user;
    for (int i = 0; i < h->n; i++) tfc_variable_free(h->var[i]);
    tfc_free(h);
}

/* Tracks hyper-parameter `name` (the optimizer's field) as a float32 variable the trackable owns. */
static bool track_hyper(tfc_trackable *t, opt_hypers *h, const char *name, double *field, tfc_status *st) {
    tfc_tensor *v = tfc_scalar_f32((float)*field, st);
    char vname[64];
    snprintf(vname, sizeof vname, "%s:0", name);
    tfc_variable *var = v ? tfc_variable_new(h->ctx, v, false, vname, st) : NULL;
    tfc_tensor_unref(v);
    if (!var) return false;
    h->var[h->n] = var;
    h->field[h->n++] = field;
    return tfc_trackable_track_variable(t, name, var, st);
}

/* Keras's name of the list attribute holding slot kind `slot` of the new Adam family, or NULL. */
static const char *slot_list_name(const char *slot) {
    if (!strcmp(slot, "m")) return "_momentums";
    if (!strcmp(slot, "v")) return "_velocities";
    if (!strcmp(slot, "vhat")) return "_velocity_hats";
    return NULL;
}

static bool track_new_family(tfc_trackable *t, tfc_optimizer *o, opt_hypers *h, tfc_variable *const *vars, int nv,
                             tfc_status *st) {
    tfc_trackable *list = tfc_trackable_new(st);
    bool ok = list != NULL;
    for (int i = 0; ok && i < o->n_weights; i++) {
        char name[24];
        snprintf(name, sizeof name, "%d", i);
        ok = tfc_trackable_track_variable(list, name, o->weights[i], st);
    }
    ok = ok && tfc_trackable_track_child(t, "_variables", list, st);
    tfc_trackable_unref(list);
    if (ok && o->iterations) ok = tfc_trackable_track_variable(t, "_iterations", o->iterations, st);
    if (ok && !o->schedule) ok = track_hyper(t, h, "_learning_rate", &o->learning_rate, st);
    for (int k = 0; ok && k < TFC_OPT_MAX_SLOTS; k++) {
        const char *ln = o->slot_names[k][0] ? slot_list_name(o->slot_names[k]) : NULL;
        if (!ln) continue;
        tfc_trackable *sl = tfc_trackable_new(st);
        ok = sl != NULL;
        for (int i = 0, j = 0; ok && i < nv; i++) {
            tfc_opt_slots *s = tfc_opt_find_slots(o, vars[i]);
            if (!s || !s->slot[k]) continue;
            char name[24];
            snprintf(name, sizeof name, "%d", j++);
            ok = tfc_trackable_track_variable(sl, name, s->slot[k], st);
        }
        ok = ok && tfc_trackable_track_child(t, ln, sl, st);
        tfc_trackable_unref(sl);
    }
    return ok;
}

static bool track_legacy(tfc_trackable *t, tfc_optimizer *o, opt_hypers *h, tfc_variable *const *vars, int nv,
                         tfc_status *st) {
    bool ok = !o->iterations || tfc_trackable_track_variable(t, "iter", o->iterations, st);
    const char *cls = o->cls->class_name;
    bool adam_like = !strcmp(cls, "Adam") || !strcmp(cls, "Adamax") || !strcmp(cls, "Nadam");
    if (ok && !o->schedule) ok = track_hyper(t, h, "learning_rate", &o->learning_rate, st);
    if (ok) ok = track_hyper(t, h, "decay", &o->decay, st);
    if (ok && adam_like) ok = track_hyper(t, h, "beta_1", &o->beta_1, st) && track_hyper(t, h, "beta_2", &o->beta_2, st);
    if (ok && !strcmp(cls, "RMSprop")) ok = track_hyper(t, h, "rho", &o->rho, st);
    if (ok && (!strcmp(cls, "RMSprop") || !strcmp(cls, "SGD"))) ok = track_hyper(t, h, "momentum", &o->momentum, st);
    for (int i = 0; ok && i < nv; i++) {
        tfc_opt_slots *s = tfc_opt_find_slots(o, vars[i]);
        for (int k = 0; ok && s && k < TFC_OPT_MAX_SLOTS; k++)
            if (s->slot[k]) ok = tfc_trackable_track_slot(t, vars[i], o->slot_names[k], s->slot[k], st);
    }
    return ok;
}

tfc_trackable *tfc_optimizer_trackable(tfc_optimizer *o, tfc_model *m, tfc_status *st) {
    if (o->inner) o = o->inner; /* a LossScaleOptimizer saves the optimizer it wraps */
    tfc_trackable *t = tfc_trackable_new(st);
    opt_hypers *h = t ? tfc_calloc(1, sizeof *h) : NULL;
    int nv = m ? tfc_layer_trainable_weights(&m->base, NULL, 0) : 0;
    tfc_variable **vars = tfc_calloc((size_t)(nv ? nv : 1), sizeof *vars);
    bool ok = t && h && vars;
    if (t && (!h || !vars)) tfc_status_oom(st, "optimizer trackable", sizeof *h);
    if (ok) {
        h->o = o;
        h->ctx = m ? m->ctx : o->ctx;
        tfc_trackable_set_hooks(t, hypers_saving, hypers_restored, hypers_free, h); /* t owns h now */
        if (nv) tfc_layer_trainable_weights(&m->base, vars, nv);
        ok = o->legacy ? track_legacy(t, o, h, vars, nv, st) : track_new_family(t, o, h, vars, nv, st);
    } else {
        tfc_free(h);
    }
    tfc_free(vars);
    if (!ok) {
        tfc_trackable_unref(t);
        return NULL;
    }
    return t;
}

tfc_checkpoint *tfc_model_checkpoint_new(tfc_model *m, tfc_status *st) {
    tfc_optimizer *o = m->optimizer;
    /* optimizer.build(model.trainable_variables): the slots exist (zeros), so a restore can fill them */
    if (o && !tfc_optimizer_variables(o, NULL, 0) && !tfc_model_build_optimizer(m, st)) return NULL;
    tfc_trackable *objs[2] = {tfc_model_trackable(m, st), NULL};
    const char *names[2] = {"model", "optimizer"};
    int n = 1;
    if (objs[0] && o) {
        objs[1] = tfc_optimizer_trackable(o, m, st);
        n = 2;
    }
    tfc_checkpoint *c = objs[0] && (n == 1 || objs[1]) ? tfc_checkpoint_new(m->ctx, names, objs, n, st) : NULL;
    tfc_trackable_unref(objs[0]);
    tfc_trackable_unref(objs[1]);
    return c;
}
