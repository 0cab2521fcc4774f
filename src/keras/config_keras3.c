/* The model's config in Keras 3's serialization (keras_formats.md §1, the .keras archive's config.json):
 * tfc's get_config (Keras 2 dialect, model_get_config.c) with what Keras 3's deserialize_keras_object needs:
 *   - every serialized object gets "module" and "registered_name" (null for built-ins): models "keras"
 *     (Sequential) / "keras.src.models.functional" (Functional), layers "keras.layers", initializers
 *     "keras.initializers", regularizers "keras.regularizers", constraints "keras.constraints";
 *   - InputLayer's batch_input_shape is batch_shape; BatchNormalization's one-element axis list is an int;
 *   - the top level adds build_config (the input shape) and compile_config (optimizer, loss, metrics).
 * Functional inbound nodes stay in the Keras 2 list form, which Keras 3 reads. The way back is
 * tfc_model_from_config, which reads both dialects. */
#include <string.h>

#include "keras/model_internal.h"
#include "keras/saving_internal.h"

static const char *module_for(const char *class_name, const char *key) {
    if (!strcmp(class_name, "Sequential") || !strcmp(class_name, "DTypePolicy")) return "keras";
    if (!strcmp(class_name, "Functional") || !strcmp(class_name, "Model")) return "keras.src.models.functional";
    if (key) {
        size_t n = strlen(key);
        if (n >= 11 && !strcmp(key + n - 11, "initializer")) return "keras.initializers";
        if (n >= 11 && !strcmp(key + n - 11, "regularizer")) return "keras.regularizers";
        if (n >= 10 && !strcmp(key + n - 10, "constraint")) return "keras.constraints";
    }
    return "keras.layers";
}

static bool set_str(cJSON *o, const char *key, const char *v) {
    cJSON_DeleteItemFromObjectCaseSensitive(o, key);
    return cJSON_AddStringToObject(o, key, v) != NULL;
}

/* Rewrites one serialized object {"class_name", "config"} (found under `key` of its parent) and what it
 * holds, in place. */
static bool convert(cJSON *o, const char *key, int depth, tfc_status *st);

static bool convert_children(cJSON *o, int depth, tfc_status *st) {
    for (cJSON *c = o->child; c; c = c->next) {
        if (cJSON_IsObject(c) && !convert(c, c->string, depth + 1, st)) return false;
        if (cJSON_IsArray(c))
            for (cJSON *e = c->child; e; e = e->next)
                if (cJSON_IsObject(e) && !convert(e, c->string, depth + 1, st)) return false;
    }
    return true;
}

static bool convert(cJSON *o, const char *key, int depth, tfc_status *st) {
    if (depth > 64) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "model config nests too deep");
    const cJSON *cn = cJSON_GetObjectItemCaseSensitive(o, "class_name");
    cJSON *cfg = cJSON_GetObjectItemCaseSensitive(o, "config");
    if (cJSON_IsString(cn) && cJSON_IsObject(cfg)) {
        if (key && !strcmp(key, "dtype") && !strcmp(cn->valuestring, "Policy") && !set_str(o, "class_name", "DTypePolicy"))
            return tfc_status_oom(st, "config", 0);
        cn = cJSON_GetObjectItemCaseSensitive(o, "class_name");
        const char *cls = cn->valuestring;
        if (!cJSON_GetObjectItemCaseSensitive(o, "module") && !set_str(o, "module", module_for(cls, key)))
            return tfc_status_oom(st, "config", 0);
        if (!cJSON_GetObjectItemCaseSensitive(o, "registered_name") && !cJSON_AddNullToObject(o, "registered_name"))
            return tfc_status_oom(st, "config", 0);
        if (!strcmp(cls, "InputLayer")) {
            cJSON *b = cJSON_DetachItemFromObjectCaseSensitive(cfg, "batch_input_shape");
            if (b) cJSON_AddItemToObject(cfg, "batch_shape", b);
        }
        if (!strcmp(cls, "BatchNormalization")) {
            cJSON *axis = cJSON_GetObjectItemCaseSensitive(cfg, "axis");
            if (cJSON_IsArray(axis) && cJSON_GetArraySize(axis) == 1 && cJSON_IsNumber(axis->child))
                cJSON_ReplaceItemInObjectCaseSensitive(cfg, "axis", cJSON_CreateNumber(axis->child->valuedouble));
        }
        return convert_children(cfg, depth, st);
    }
    return convert_children(o, depth, st);
}

static cJSON *shape_json(const tfc_shape *s) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < s->rank; i++)
        cJSON_AddItemToArray(a, s->dims[i] < 0 || i == 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)s->dims[i]));
    return a;
}

/* compile_config as Keras 3's Model.get_compile_config: the optimizer serialized, the loss and metric names. */
static cJSON *compile_config(tfc_model *m, tfc_status *st) {
    tfc_model_impl *impl = TFC_IMPL(m);
    cJSON *cc = cJSON_CreateObject();
    if (!cc) return NULL;
    tfc_optimizer *o = m->optimizer;
    if (o) {
        cJSON *ser = tfc_keras3_optimizer_config(o, st);
        if (!ser) {
            cJSON_Delete(cc);
            return NULL;
        }
        cJSON_AddItemToObject(cc, "optimizer", ser);
    }
    if (impl->loss_name) cJSON_AddStringToObject(cc, "loss", impl->loss_name);
    else cJSON_AddNullToObject(cc, "loss");
    cJSON_AddNullToObject(cc, "loss_weights");
    cJSON *metrics = impl->n_spec ? cJSON_CreateArray() : cJSON_CreateNull();
    for (int i = 0; i < impl->n_spec && metrics; i++) cJSON_AddItemToArray(metrics, cJSON_CreateString(impl->spec_names[i]));
    cJSON_AddItemToObject(cc, "metrics", metrics);
    cJSON_AddNullToObject(cc, "weighted_metrics");
    cJSON_AddBoolToObject(cc, "run_eagerly", m->run_eagerly);
    cJSON_AddNumberToObject(cc, "steps_per_execution", 1);
    cJSON_AddBoolToObject(cc, "jit_compile", false);
    return cc;
}

cJSON *tfc_keras3_model_config(tfc_model *m, tfc_status *st) {
    cJSON *cfg = tfc_layer_config_json(&m->base, st);
    if (!cfg) return NULL;
    cJSON *top = cJSON_CreateObject();
    if (!top) {
        cJSON_Delete(cfg);
        tfc_status_oom(st, "config", 0);
        return NULL;
    }
    const char *cls = m->base.cls->class_name;
    cJSON_AddStringToObject(top, "module", module_for(cls, NULL));
    cJSON_AddStringToObject(top, "class_name", cls);
    cJSON_AddItemToObject(top, "config", cfg);
    cJSON_AddNullToObject(top, "registered_name");
    if (m->n_inputs == 1) {
        cJSON *bc = cJSON_CreateObject();
        if (bc) {
            cJSON_AddItemToObject(bc, "input_shape", shape_json(&m->inputs[0]->shape));
            cJSON_AddItemToObject(top, "build_config", bc);
        }
    }
    if (m->compiled) {
        cJSON *cc = compile_config(m, st);
        if (!cc) {
            cJSON_Delete(top);
            return NULL;
        }
        cJSON_AddItemToObject(top, "compile_config", cc);
    }
    if (!convert(top, NULL, 0, st)) {
        cJSON_Delete(top);
        return NULL;
    }
    return top;
}

bool tfc_keras_compile_from_config(tfc_model *m, const cJSON *cc, const char *file, tfc_status *st) {
    tfc_compile_opts o = {0};
    const cJSON *opt = cJSON_GetObjectItemCaseSensitive(cc, "optimizer");
    if (!opt) opt = cJSON_GetObjectItemCaseSensitive(cc, "optimizer_config"); /* .h5 training_config */
    if (cJSON_IsString(opt)) {
        o.optimizer_name = opt->valuestring;
    } else if (cJSON_IsObject(opt)) {
        const cJSON *cn = cJSON_GetObjectItemCaseSensitive(opt, "class_name");
        if (!cJSON_IsString(cn))
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: compile_config optimizer has no class_name", file);
        char *js = cJSON_PrintUnformatted(opt);
        if (!js) return tfc_status_oom(st, "compile_config", 0);
        /* "Custom>Adam" is how tf.keras 2.11+ names its new optimizers in .h5 files */
        const char *name = strncmp(cn->valuestring, "Custom>", 7) ? cn->valuestring : cn->valuestring + 7;
        o.optimizer = tfc_optimizer_from_config(name, js, st);
        cJSON_free(js);
        if (!o.optimizer) return false;
    } else if (opt && !cJSON_IsNull(opt)) {
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: compile_config optimizer must be a name or an object",
                              file);
    }
    const cJSON *loss = cJSON_GetObjectItemCaseSensitive(cc, "loss");
    if (cJSON_IsString(loss)) {
        o.loss_name = loss->valuestring;
    } else if (cJSON_IsObject(loss)) {
        const cJSON *cn = cJSON_GetObjectItemCaseSensitive(loss, "class_name");
        const cJSON *lc = cJSON_GetObjectItemCaseSensitive(loss, "config");
        char *js = lc ? cJSON_PrintUnformatted(lc) : NULL;
        o.loss = cJSON_IsString(cn) ? tfc_loss_from_config(cn->valuestring, js, st) : NULL;
        cJSON_free(js);
        if (!o.loss) {
            tfc_optimizer_free(o.optimizer);
            if (st->code == TFC_OK)
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: compile_config loss has no class_name", file);
            return false;
        }
    }
    const cJSON *metrics = cJSON_GetObjectItemCaseSensitive(cc, "metrics");
    int k = 0;
    const cJSON *e;
    const cJSON *mlist = cJSON_IsArray(metrics) ? metrics : NULL;
    cJSON_ArrayForEach(e, mlist) {
        if (cJSON_IsArray(e) && cJSON_GetArraySize(e) == 1) e = e->child; /* Keras 3 nests per output */
        if (cJSON_IsString(e) && k < 7) o.metrics[k++] = e->valuestring;
    }
    const cJSON *re = cJSON_GetObjectItemCaseSensitive(cc, "run_eagerly");
    o.run_eagerly = cJSON_IsTrue(re);
    return tfc_model_compile(m, &o, st);
}
