/* model.save / load_model: the format by suffix when saving and by content when loading (keras_formats.md:
 * "do not trust the extension"), and the legacy full-model HDF5 file:
 *   /                attrs keras_version, backend, model_config (the model's JSON, Keras 2 dialect),
 *                          training_config (when compiled: loss, metrics, optimizer_config)
 *   /model_weights   the Keras 2 weights layout (saving_hdf5.c)
 *   /optimizer_weights  attr weight_names; the optimizer's variables in its order, which is tf_keras's (the
 *                        training_config keeps the optimizer's family, so tf_keras and tfc rebuild the same
 *                        optimizer and assign the state positionally) */
#include <stdio.h>
#include <string.h>

#include "keras/hdf5_io.h"
#include "keras/model_internal.h"
#include "keras/optimizer_internal.h"
#include "keras/saving_internal.h"
#include "tfc/keras/saving.h"

typedef struct {
    tfc_model *m;
    const char *path;
} model_job;

static tfc_optimizer *state_optimizer(tfc_model *m) {
    tfc_optimizer *o = m->compiled ? m->optimizer : NULL;
    while (o && o->inner) o = o->inner;
    return o;
}

/* The optimizer's variables in its own order, which is tf_keras's for either family (a new allocation). */
static int optimizer_state(tfc_optimizer *o, tfc_variable ***v, tfc_status *st) {
    *v = NULL;
    int n = tfc_optimizer_variables(o, NULL, 0);
    if (n <= 0) return 0;
    if (!(*v = tfc_malloc((size_t)n * sizeof **v))) {
        tfc_status_oom(st, "optimizer variables", (size_t)n * sizeof **v);
        return -1;
    }
    return tfc_optimizer_variables(o, *v, n);
}

static bool write_optimizer_weights(tfc_model *m, hid_t f, const char *path, tfc_status *st) {
    tfc_optimizer *o = state_optimizer(m);
    if (!o || tfc_optimizer_variables(o, NULL, 0) <= 0) return true;
    tfc_variable **v;
    int n = optimizer_state(o, &v, st);
    bool ok = n >= 0 && (n == 0 || tfc_keras_legacy_write_optimizer(f, v, n, path, st));
    tfc_free(v);
    return ok;
}

/* tf_keras's load: optimizer.build(model.trainable_variables), then set_weights from optimizer_weights. */
static bool read_optimizer_weights(tfc_model *m, hid_t f, const char *path, tfc_status *st) {
    tfc_optimizer *o = state_optimizer(m);
    if (!o || H5Lexists(f, "optimizer_weights", H5P_DEFAULT) <= 0) return true;
    int nt = tfc_layer_trainable_weights(&m->base, NULL, 0);
    tfc_variable **tv = tfc_malloc((size_t)(nt ? nt : 1) * sizeof *tv);
    if (!tv) return tfc_status_oom(st, "trainable variables", (size_t)nt * sizeof *tv);
    tfc_layer_trainable_weights(&m->base, tv, nt);
    bool ok = tfc_optimizer_build(o, m->ctx, tv, nt, st);
    tfc_free(tv);
    tfc_variable **v = NULL;
    int n = ok ? optimizer_state(o, &v, st) : -1;
    tfc_tensor **vals = n > 0 ? tfc_calloc((size_t)n, sizeof *vals) : NULL;
    if (n > 0 && !vals) {
        tfc_status_oom(st, "optimizer weights", (size_t)n * sizeof *vals);
        n = -1;
    }
    int got = n > 0 ? tfc_keras_legacy_read_optimizer(f, v, n, vals, path, st) : n;
    ok = got >= 0 && (got == 0 || tfc_keras_assign_all(m->ctx, v, vals, got, st));
    for (int i = 0; i < got; i++) tfc_tensor_unref(vals[i]);
    tfc_free(vals);
    tfc_free(v);
    return ok;
}

static bool fill_model(hid_t f, void *arg, tfc_status *st) {
    model_job *j = arg;
    char det[96];
    cJSON *cfg = tfc_layer_config_json(&j->m->base, st), *top = cJSON_CreateObject();
    if (!cfg || !top) {
        cJSON_Delete(cfg);
        cJSON_Delete(top);
        return st->code != TFC_OK ? false : tfc_status_oom(st, "model_config", 0);
    }
    cJSON_AddStringToObject(top, "class_name", j->m->base.cls->class_name);
    cJSON_AddItemToObject(top, "config", cfg);
    char *model_config = cJSON_PrintUnformatted(top), *training_config = NULL;
    cJSON_Delete(top);
    if (j->m->compiled) {
        cJSON *k3 = tfc_keras3_model_config(j->m, st);
        cJSON *cc = k3 ? cJSON_DetachItemFromObjectCaseSensitive(k3, "compile_config") : NULL;
        cJSON_Delete(k3);
        if (!cc) {
            cJSON_free(model_config);
            return st->code != TFC_OK ? false : tfc_status_oom(st, "training_config", 0);
        }
        /* tf.keras's training_config names the optimizer optimizer_config, serialized without a module and in
         * the optimizer's own dialect: tf_keras rebuilds a legacy optimizer from a config without
         * "is_legacy_optimizer" and the new one from "is_legacy_optimizer": false, as tfc does */
        cJSON_DeleteItemFromObjectCaseSensitive(cc, "optimizer");
        tfc_optimizer *o = j->m->optimizer;
        char *oc = o ? tfc_optimizer_get_config(o, st) : NULL;
        cJSON *ocj = oc ? cJSON_Parse(oc) : NULL, *opt = ocj ? cJSON_CreateObject() : NULL;
        tfc_free(oc);
        if (opt) {
            cJSON_AddStringToObject(opt, "class_name", tfc_optimizer_class_name(o));
            cJSON_AddItemToObject(opt, "config", ocj);
            cJSON_AddItemToObject(cc, "optimizer_config", opt);
        } else {
            cJSON_Delete(ocj);
        }
        cJSON_DeleteItemFromObjectCaseSensitive(cc, "run_eagerly");
        cJSON_DeleteItemFromObjectCaseSensitive(cc, "steps_per_execution");
        cJSON_DeleteItemFromObjectCaseSensitive(cc, "jit_compile");
        training_config = cJSON_PrintUnformatted(cc);
        cJSON_Delete(cc);
    }
    hid_t g = -1;
    bool ok = model_config && (!j->m->compiled || training_config);
    if (!ok) tfc_status_oom(st, "model_config", 0);
    if (ok && (!tfc_h5_write_scalar_str(f, "keras_version", TFC_KERAS2_VERSION) ||
               !tfc_h5_write_scalar_str(f, "backend", "tensorflow") ||
               !tfc_h5_write_scalar_str(f, "model_config", model_config) ||
               (training_config && !tfc_h5_write_scalar_str(f, "training_config", training_config)) ||
               (g = H5Gcreate2(f, "model_weights", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0))
        ok = tfc_status_set(st, TFC_INTERNAL, "%s: cannot write the model attributes: %s", j->path, tfc_h5_detail(det));
    ok = ok && tfc_keras_legacy_write(j->m, g, j->path, st) && write_optimizer_weights(j->m, f, j->path, st);
    tfc_h5_close(g);
    cJSON_free(model_config);
    cJSON_free(training_config);
    return ok;
}

bool tfc_keras_save_h5_model(tfc_model *m, const char *path, tfc_status *st) {
    model_job j = {m, path};
    return tfc_keras_h5_write_file(path, "save", fill_model, &j, st);
}

/* A scalar string attribute (variable or fixed length) as a new string; NULL when absent (st untouched) or
 * unreadable (st set). */
static char *read_str(hid_t obj, const char *name, const char *path, tfc_status *st) {
    if (H5Aexists(obj, name) <= 0) return NULL;
    char det[96];
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT), t = a >= 0 ? H5Aget_type(a) : -1, mt = -1;
    hid_t sp = a >= 0 ? H5Aget_space(a) : -1;
    char *out = NULL;
    if (t < 0 || sp < 0 || H5Tget_class(t) != H5T_STRING || H5Sget_simple_extent_npoints(sp) != 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: attribute %s is not a string", path, name);
    } else if (H5Tis_variable_str(t) > 0) {
        char *s = NULL;
        mt = H5Tcopy(H5T_C_S1);
        if (mt >= 0 && H5Tset_size(mt, H5T_VARIABLE) >= 0 && H5Tset_cset(mt, H5Tget_cset(t)) >= 0 &&
            H5Aread(a, mt, &s) >= 0 && s) {
            size_t n = strlen(s) + 1;
            if ((out = tfc_malloc(n))) memcpy(out, s, n);
            else tfc_status_oom(st, name, n);
            H5free_memory(s);
        } else {
            tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read attribute %s: %s", path, name, tfc_h5_detail(det));
        }
    } else {
        size_t n = H5Tget_size(t);
        if (n == 0 || n > ((size_t)64 << 20)) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: attribute %s has %zu bytes", path, name, n);
        } else if (!(out = tfc_calloc(n + 1, 1))) {
            tfc_status_oom(st, name, n + 1);
        } else if ((mt = H5Tcopy(t)) < 0 || H5Aread(a, mt, out) < 0) {
            tfc_free(out);
            out = NULL;
            tfc_status_set(st, TFC_DATA_LOSS, "%s: cannot read attribute %s: %s", path, name, tfc_h5_detail(det));
        }
    }
    tfc_h5_close(mt);
    tfc_h5_close(sp);
    tfc_h5_close(t);
    tfc_h5_close(a);
    return out;
}

tfc_model *tfc_keras_load_h5_model(tfc_ctx *ctx, const char *path, tfc_status *st) {
    tfc_h5_quiet q;
    tfc_h5_quiet_begin(&q);
    tfc_model *m = NULL;
    char *mc = NULL, *tc = NULL;
    hid_t f = tfc_keras_h5_open_file(path, "load_model", st);
    if (f < 0) goto done;
    mc = read_str(f, "model_config", path, st);
    if (!mc) {
        if (st->code == TFC_OK)
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: No model config found in the file (a weights-only file? "
                           "use load_weights)", path);
        goto done;
    }
    if (!(m = tfc_model_from_config(ctx, mc, st))) {
        char msg[sizeof st->msg];
        snprintf(msg, sizeof msg, "%s", st->msg);
        tfc_status_set(st, st->code, "%s: model_config: %s", path, msg);
        goto done;
    }
    tc = read_str(f, "training_config", path, st);
    if (st->code != TFC_OK) goto fail;
    if (tc) {
        cJSON *cc = cJSON_Parse(tc);
        bool ok = cJSON_IsObject(cc);
        if (!ok) tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: training_config is not a JSON object", path);
        ok = ok && tfc_keras_compile_from_config(m, cc, path, st);
        cJSON_Delete(cc);
        if (!ok) goto fail;
    }
    if (!tfc_keras_legacy_read(m, f, path, st) || !read_optimizer_weights(m, f, path, st)) goto fail;
    goto done;
fail:
    tfc_model_free(m);
    m = NULL;
done:
    tfc_free(mc);
    tfc_free(tc);
    tfc_h5_close(f);
    tfc_h5_quiet_end(&q);
    return m;
}

bool tfc_model_save(tfc_model *m, const char *filepath, tfc_status *st) {
    if (!m || !filepath || !*filepath) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "save: NULL model or path");
    if (m->kind == TFC_MODEL_SUBCLASSED)
        return tfc_status_set(st, TFC_UNIMPLEMENTED, "save %s: subclassed model \"%s\" has no config; use "
                              "save_weights", filepath, m->base.name);
    tfc_status_clear(st);
    if (tfc_keras_has_suffix(filepath, ".keras")) return tfc_keras_save_zip(m, filepath, st);
    if (tfc_keras_has_suffix(filepath, ".h5") || tfc_keras_has_suffix(filepath, ".hdf5"))
        return tfc_keras_save_h5_model(m, filepath, st);
    return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Invalid filepath extension for saving. Please add either a "
                          "`.keras` extension for the native Keras format (recommended) or a `.h5` extension. "
                          "Received: filepath=%s", filepath);
}

tfc_model *tfc_keras_load_model(tfc_ctx *ctx, const char *filepath, tfc_status *st) {
    if (!ctx || !filepath) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "load_model: NULL context or path");
        return NULL;
    }
    tfc_status_clear(st);
    unsigned char head[8] = {0};
    FILE *fp = fopen(filepath, "rb");
    size_t n = fp ? fread(head, 1, sizeof head, fp) : 0;
    if (fp) fclose(fp);
    if (n >= 4 && !memcmp(head, "PK\003\004", 4)) return tfc_keras_load_zip(ctx, filepath, NULL, 0, st);
    tfc_model *m = tfc_keras_load_h5_model(ctx, filepath, st); /* also reports missing files */
    if (!m && st->code == TFC_DATA_LOSS && strstr(st->msg, "no HDF5 signature")) /* neither format: say both */
        tfc_status_set(st, TFC_DATA_LOSS, "%s: not a Keras model file: neither a .keras archive (zip) nor an HDF5 "
                       "model", filepath);
    return m;
}
