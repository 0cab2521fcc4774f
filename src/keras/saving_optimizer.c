/* The optimizer as Keras 3 saves it in a .keras archive: its serialized config (compile_config's
 * "optimizer") and its state in Keras 3's order (optimizer/vars of model.weights.h5).
 *
 * Keras 3's optimizers are tfc's new family. A legacy-family optimizer (OptimizerV2, tfc's default) is saved
 * as the new-family optimizer of the same class and hyper-parameters: its config loses the keys Keras 3
 * rejects (is_legacy_optimizer, jit_compile, a zero decay), and its slots are listed in the order the new
 * family creates them (per variable for Adam, ...), matched by variable and slot name (legacy RMSprop's
 * "rms" / "mg" are "velocity" / "average_gradient", "momentum" is "m"). SGD without momentum has only its
 * iteration count, as in Keras 3. Adam, Adamax, Adagrad and SGD have the same update in
 * both families; where a slot has no counterpart (legacy Nadam's momentum_cache) the state is not saved and a
 * warning says so, as Keras skips optimizer state that does not match. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "keras/optimizer_internal.h"
#include "keras/saving_internal.h"

/* Keras 3 checks some hyper-parameters with isinstance(x, float): integral values are written as "0.0". */
static void floats_as_floats(cJSON *cfg) {
    static const char *const keys[] = {"momentum", "rho", "beta_1", "beta_2", "epsilon", "initial_accumulator_value",
                                       "learning_rate", "weight_decay", "ema_momentum"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        cJSON *v = cJSON_GetObjectItemCaseSensitive(cfg, keys[i]);
        char buf[64];
        if (!cJSON_IsNumber(v) || v->valuedouble != (double)(long long)v->valuedouble || fabs(v->valuedouble) > 1e15)
            continue;
        snprintf(buf, sizeof buf, "%.1f", v->valuedouble);
        cJSON *raw = cJSON_CreateRaw(buf);
        if (raw) cJSON_ReplaceItemInObjectCaseSensitive(cfg, keys[i], raw);
    }
}

cJSON *tfc_keras3_optimizer_config(const tfc_optimizer *o, tfc_status *st) {
    char *js = tfc_optimizer_get_config(o, st);
    cJSON *cfg = js ? cJSON_Parse(js) : NULL, *ser = cJSON_CreateObject();
    tfc_free(js);
    if (!cfg || !ser) {
        cJSON_Delete(cfg);
        cJSON_Delete(ser);
        if (st->code == TFC_OK) tfc_status_oom(st, "optimizer config", 0);
        return NULL;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, "is_legacy_optimizer");
    cJSON_DeleteItemFromObjectCaseSensitive(cfg, "jit_compile");
    const cJSON *decay = cJSON_GetObjectItemCaseSensitive(cfg, "decay");
    if (cJSON_IsNumber(decay) && decay->valuedouble == 0) cJSON_DeleteItemFromObjectCaseSensitive(cfg, "decay");
    floats_as_floats(cfg);
    cJSON_AddStringToObject(ser, "module", "keras.optimizers");
    cJSON_AddStringToObject(ser, "class_name", tfc_optimizer_class_name(o));
    cJSON_AddItemToObject(ser, "config", cfg);
    cJSON_AddNullToObject(ser, "registered_name");
    return ser;
}

static const char *new_family_slot_name(const char *legacy) {
    if (!strcmp(legacy, "rms")) return "velocity";
    if (!strcmp(legacy, "mg")) return "average_gradient";
    if (!strcmp(legacy, "momentum")) return "m";
    return legacy;
}

/* The legacy optimizer's slot of the variable with id var_id named (in the new family) `name`; NULL if none. */
static tfc_variable *legacy_slot(const tfc_optimizer *o, uint64_t var_id, const char *name) {
    for (int i = 0; i < o->n_slots; i++) {
        if (o->slots[i].var_id != var_id) continue;
        for (int k = 0; k < TFC_OPT_MAX_SLOTS; k++)
            if (o->slots[i].slot[k] && !strcmp(new_family_slot_name(o->slot_names[k]), name))
                return o->slots[i].slot[k];
    }
    return NULL;
}

int tfc_keras3_optimizer_state(tfc_optimizer *o, tfc_variable *const *train_vars, int n_train, tfc_variable **out,
                               int max, tfc_status *st) {
    int n = tfc_optimizer_variables(o, NULL, 0);
    if (n > 0 && o->cls == &tfc_opt_sgd && o->momentum == 0) {
        /* Keras 3's SGD has no momentum slots without momentum (tfc's new family keeps unused ones) */
        if (max >= 1) out[0] = o->iterations;
        return 1;
    }
    if (n <= 0 || !o->legacy) {
        int k = tfc_optimizer_variables(o, out, max);
        if (k <= 0 || !o->extra || k + 1 > max) return k;
        out[k] = o->extra; /* the new Nadam's u_product ends Keras 3's list */
        return k + 1;
    }
    /* a new-family twin, built on the same variables, gives Keras 3's order */
    cJSON *ser = tfc_keras3_optimizer_config(o, st);
    char *js = ser ? cJSON_PrintUnformatted(ser) : NULL;
    cJSON_Delete(ser);
    tfc_optimizer *twin = js ? tfc_optimizer_from_config(NULL, js, st) : NULL;
    cJSON_free(js);
    if (!twin) return -1;
    int count = -1;
    tfc_variable **tv = NULL;
    if (!tfc_optimizer_build(twin, o->ctx, train_vars, n_train, st)) goto done;
    int nt = tfc_optimizer_variables(twin, NULL, 0);
    if (!(tv = tfc_malloc((size_t)nt * sizeof *tv))) {
        tfc_status_oom(st, "optimizer variables", (size_t)nt * sizeof *tv);
        goto done;
    }
    nt = tfc_optimizer_variables(twin, tv, nt);
    if (o->extra || twin->extra || nt > max) {
        count = 0;
        goto done;
    }
    out[0] = o->iterations;
    for (int i = 1; i < nt; i++) {
        tfc_variable *found = NULL;
        for (int r = 0; r < twin->n_slots && !found; r++)
            for (int k = 0; k < TFC_OPT_MAX_SLOTS && !found; k++)
                if (twin->slots[r].slot[k] == tv[i]) found = legacy_slot(o, twin->slots[r].var_id, twin->slot_names[k]);
        if (!found) {
            count = 0;
            goto done;
        }
        out[i] = found;
    }
    count = nt;
done:
    if (count == 0)
        tfc_log(TFC_LOG_WARNING, "The state of optimizer '%s' has no Keras 3 equivalent and is not saved; a loaded "
                "model's optimizer starts fresh.", o->name);
    tfc_free(tv);
    tfc_optimizer_free(twin);
    return count;
}
