/* JSON helpers for layer configs: Keras 2 serialisation of initializers and regularizers
 * ({"class_name": "GlorotUniform", "config": {"seed": null}}), shapes, typed readers and the common keys. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keras/keras_internal.h"

/* Keras identifiers and class names of the built-in initializers. */
static const struct {
    const char *name, *class_name;
} init_names[] = {
    {"glorot_uniform", "GlorotUniform"}, {"glorot_normal", "GlorotNormal"},
    {"he_uniform", "HeUniform"},         {"he_normal", "HeNormal"},
    {"lecun_uniform", "LecunUniform"},   {"lecun_normal", "LecunNormal"},
    {"zeros", "Zeros"},                  {"ones", "Ones"},
    {"constant", "Constant"},            {"random_normal", "RandomNormal"},
    {"random_uniform", "RandomUniform"}, {"truncated_normal", "TruncatedNormal"},
    {"orthogonal", "Orthogonal"},        {"identity", "Identity"},
    {"variance_scaling", "VarianceScaling"},
};
/* Aliases Keras 2 also resolves (tf.keras.initializers.get). */
static const struct {
    const char *alias, *name;
} init_aliases[] = {
    {"zero", "zeros"}, {"one", "ones"}, {"normal", "random_normal"}, {"uniform", "random_uniform"},
    {"Zero", "zeros"}, {"One", "ones"}, {"glorot_normalV2", "glorot_normal"}, {"glorot_uniformV2", "glorot_uniform"},
};

static const char *init_canonical(const char *s) {
    if (!s) return NULL;
    for (size_t i = 0; i < sizeof init_names / sizeof *init_names; i++)
        if (!strcmp(s, init_names[i].name) || !strcmp(s, init_names[i].class_name)) return init_names[i].name;
    for (size_t i = 0; i < sizeof init_aliases / sizeof *init_aliases; i++)
        if (!strcmp(s, init_aliases[i].alias)) return init_aliases[i].name;
    return NULL;
}

static const char *init_class_name(const char *name) {
    for (size_t i = 0; i < sizeof init_names / sizeof *init_names; i++)
        if (!strcmp(name, init_names[i].name)) return init_names[i].class_name;
    return NULL;
}

void tfc_kinit_set(tfc_kinit *dst, const tfc_initializer *src, const char *dflt) {
    memset(dst, 0, sizeof *dst);
    tfc_initializer in = src ? *src : (tfc_initializer){.name = dflt};
    const char *canon = init_canonical(in.name);
    snprintf(dst->name, sizeof dst->name, "%s", canon ? canon : (in.name ? in.name : dflt));
    /* Resolve "zero means Keras default" once, so configs show the effective values. */
    if (!strcmp(dst->name, "random_normal") || !strcmp(dst->name, "truncated_normal")) {
        if (in.stddev == 0) in.stddev = 0.05;
    } else if (!strcmp(dst->name, "random_uniform")) {
        if (in.minval == 0 && in.maxval == 0) in.minval = -0.05, in.maxval = 0.05;
    } else if (!strcmp(dst->name, "orthogonal") || !strcmp(dst->name, "identity")) {
        if (in.gain == 0) in.gain = 1;
    } else if (!strcmp(dst->name, "variance_scaling")) {
        if (in.scale == 0) in.scale = 1;
    }
    snprintf(dst->mode, sizeof dst->mode, "%s", in.mode ? in.mode : "fan_in");
    snprintf(dst->distribution, sizeof dst->distribution, "%s", in.distribution ? in.distribution : "truncated_normal");
    dst->init = in;
    dst->init.name = dst->name;
    dst->init.mode = dst->mode;
    dst->init.distribution = dst->distribution;
}

/* ---- writers ------------------------------------------------------------------------------------------- */

cJSON *tfc_json_int_array(const int64_t *v, int n) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < n; i++) {
        cJSON *e = cJSON_CreateNumber((double)v[i]);
        if (!e || !cJSON_AddItemToArray(a, e)) {
            cJSON_Delete(e);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

cJSON *tfc_json_shape(const tfc_shape *s) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; a && i < s->rank; i++) {
        cJSON *e = s->dims[i] < 0 ? cJSON_CreateNull() : cJSON_CreateNumber((double)s->dims[i]);
        if (!e || !cJSON_AddItemToArray(a, e)) {
            cJSON_Delete(e);
            cJSON_Delete(a);
            return NULL;
        }
    }
    return a;
}

bool tfc_json_add_f32(cJSON *cfg, const char *key, double v) {
    return cJSON_AddNumberToObject(cfg, key, (double)(float)v) != NULL;
}

static bool add_seed(cJSON *c, const tfc_initializer *in) {
    return in->has_seed ? cJSON_AddNumberToObject(c, "seed", (double)in->seed) != NULL
                        : cJSON_AddNullToObject(c, "seed") != NULL;
}

bool tfc_json_add_initializer(cJSON *cfg, const char *key, const tfc_initializer *init) {
    if (!init) return cJSON_AddNullToObject(cfg, key) != NULL;
    tfc_kinit k;
    tfc_kinit_set(&k, init, "zeros");
    const tfc_initializer *in = &k.init;
    const char *cls = init_class_name(k.name);
    cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject();
    bool ok = o && c && cJSON_AddStringToObject(o, "class_name", cls ? cls : k.name);
    const char *n = k.name;
    if (!ok) {
    } else if (!strcmp(n, "zeros") || !strcmp(n, "ones")) {
    } else if (!strcmp(n, "constant")) {
        ok = cJSON_AddNumberToObject(c, "value", in->value) != NULL;
    } else if (!strcmp(n, "random_normal") || !strcmp(n, "truncated_normal")) {
        ok = cJSON_AddNumberToObject(c, "mean", in->mean) && cJSON_AddNumberToObject(c, "stddev", in->stddev) &&
             add_seed(c, in);
    } else if (!strcmp(n, "random_uniform")) {
        ok = cJSON_AddNumberToObject(c, "minval", in->minval) && cJSON_AddNumberToObject(c, "maxval", in->maxval) &&
             add_seed(c, in);
    } else if (!strcmp(n, "orthogonal")) {
        ok = cJSON_AddNumberToObject(c, "gain", in->gain) && add_seed(c, in);
    } else if (!strcmp(n, "identity")) {
        ok = cJSON_AddNumberToObject(c, "gain", in->gain) != NULL;
    } else if (!strcmp(n, "variance_scaling")) {
        ok = cJSON_AddNumberToObject(c, "scale", in->scale) && cJSON_AddStringToObject(c, "mode", in->mode) &&
             cJSON_AddStringToObject(c, "distribution", in->distribution) && add_seed(c, in);
    } else {
        ok = add_seed(c, in); /* the VarianceScaling presets: GlorotUniform, HeNormal, ... */
    }
    if (ok && cJSON_AddItemToObject(o, "config", c)) {
        c = NULL;
        if (cJSON_AddItemToObject(cfg, key, o)) return true;
    }
    cJSON_Delete(c);
    cJSON_Delete(o);
    return false;
}

bool tfc_json_add_regularizer(cJSON *cfg, const char *key, const tfc_regularizer *reg, bool has) {
    if (!has || !reg) return cJSON_AddNullToObject(cfg, key) != NULL;
    cJSON *o = cJSON_CreateObject(), *c = cJSON_CreateObject();
    const char *cls = reg->l1_l2                       ? "L1L2"
                      : reg->l1 != 0 && reg->l2 == 0 ? "L1"
                      : reg->l2 != 0 && reg->l1 == 0 ? "L2"
                                                     : "L1L2";
    bool ok = o && c && cJSON_AddStringToObject(o, "class_name", cls);
    if (ok && strcmp(cls, "L2") != 0) ok = tfc_json_add_f32(c, "l1", reg->l1);
    if (ok && strcmp(cls, "L1") != 0) ok = tfc_json_add_f32(c, "l2", reg->l2);
    if (ok && cJSON_AddItemToObject(o, "config", c)) {
        c = NULL;
        if (cJSON_AddItemToObject(cfg, key, o)) return true;
    }
    cJSON_Delete(c);
    cJSON_Delete(o);
    return false;
}

/* Numbers as Python's json writes them: integers without a fraction, other values in the shortest form that
 * reads back exactly (cJSON's own printer keeps only 15 digits when they compare equal within an epsilon). */
static bool exact_numbers(cJSON *parent) {
    for (cJSON *it = parent->child, *next; it; it = next) {
        next = it->next;
        if (cJSON_IsNumber(it)) {
            double v = it->valuedouble;
            char buf[40];
            if (isnan(v)) snprintf(buf, sizeof buf, "NaN");
            else if (isinf(v)) snprintf(buf, sizeof buf, v > 0 ? "Infinity" : "-Infinity");
            else if (v == floor(v) && fabs(v) < 1e15) snprintf(buf, sizeof buf, "%.0f", v);
            else
                for (int p = 15; p <= 17; p++) {
                    snprintf(buf, sizeof buf, "%.*g", p, v);
                    if (strtod(buf, NULL) == v) break;
                }
            cJSON *raw = cJSON_CreateRaw(buf);
            if (!raw) return false;
            /* the key moves to the replacement */
            raw->string = it->string;
            raw->type |= it->type & cJSON_StringIsConst;
            it->string = NULL;
            cJSON_ReplaceItemViaPointer(parent, it, raw); /* cannot fail: it is a child of parent */
        } else if ((cJSON_IsObject(it) || cJSON_IsArray(it)) && !exact_numbers(it)) {
            return false;
        }
    }
    return true;
}

char *tfc_json_print(const cJSON *item) {
    cJSON *dup = cJSON_Duplicate(item, true);
    if (!dup) return NULL;
    char *s = NULL, *r = NULL;
    if (exact_numbers(dup) && (s = cJSON_PrintUnformatted(dup))) r = tfc_strdup(s);
    cJSON_free(s);
    cJSON_Delete(dup);
    return r;
}

/* ---- readers ------------------------------------------------------------------------------------------- */

static const cJSON *get_item(const cJSON *cfg, const char *key, bool *present) {
    const cJSON *v = cfg ? cJSON_GetObjectItemCaseSensitive(cfg, key) : NULL;
    if (v && cJSON_IsNull(v)) v = NULL;
    if (present) *present = v != NULL;
    return v;
}

bool tfc_json_get_f64(const cJSON *cfg, const char *key, double *out, bool *present, tfc_status *st) {
    const cJSON *v = get_item(cfg, key, present);
    if (!v) return true;
    if (cJSON_IsBool(v)) {
        *out = cJSON_IsTrue(v);
        return true;
    }
    if (!cJSON_IsNumber(v)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must be a number", key);
    *out = v->valuedouble;
    return true;
}

bool tfc_json_get_i64(const cJSON *cfg, const char *key, int64_t *out, bool *present, tfc_status *st) {
    const cJSON *v = get_item(cfg, key, present);
    if (!v) return true;
    if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9.0e15)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must be an integer", key);
    *out = (int64_t)v->valuedouble;
    return true;
}

bool tfc_json_get_bool(const cJSON *cfg, const char *key, bool *out, bool *present, tfc_status *st) {
    const cJSON *v = get_item(cfg, key, present);
    if (!v) return true;
    if (!cJSON_IsBool(v)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must be a boolean", key);
    *out = cJSON_IsTrue(v);
    return true;
}

bool tfc_json_get_str(const cJSON *cfg, const char *key, const char **out, bool *present, tfc_status *st) {
    const cJSON *v = get_item(cfg, key, present);
    if (!v) return true;
    if (!cJSON_IsString(v)) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must be a string", key);
    *out = v->valuestring;
    return true;
}

bool tfc_json_get_i64_list(const cJSON *cfg, const char *key, int64_t *out, int max, int *n, bool *present,
                           tfc_status *st) {
    const cJSON *v = get_item(cfg, key, present);
    if (n) *n = 0;
    if (!v) return true;
    if (cJSON_IsNumber(v)) {
        if (max < 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\": too many values", key);
        if (!tfc_json_get_i64(cfg, key, &out[0], NULL, st)) return false;
        if (n) *n = 1;
        return true;
    }
    if (!cJSON_IsArray(v))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must be a list of integers", key);
    int k = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        if (k >= max)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" has more than %d values", key, max);
        if (cJSON_IsNull(e)) {
            out[k++] = -1;
        } else if (cJSON_IsNumber(e) && e->valuedouble == floor(e->valuedouble) && fabs(e->valuedouble) < 9.0e15) {
            out[k++] = (int64_t)e->valuedouble;
        } else {
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must be a list of integers", key);
        }
    }
    if (n) *n = k;
    return true;
}

/* The class name and config of a serialised object: a bare identifier string or {"class_name", "config"}. */
static bool get_object(const cJSON *v, const char *key, const char **cls, const cJSON **conf, tfc_status *st) {
    *conf = NULL;
    if (cJSON_IsString(v)) {
        *cls = v->valuestring;
        return true;
    }
    const cJSON *c = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, "class_name") : NULL;
    if (!c || !cJSON_IsString(c))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT,
                              "config key \"%s\" must be an identifier or {\"class_name\": ..., \"config\": ...}", key);
    *cls = c->valuestring;
    *conf = cJSON_GetObjectItemCaseSensitive(v, "config");
    if (*conf && !cJSON_IsObject(*conf)) *conf = NULL;
    return true;
}

static bool get_seed(const cJSON *c, tfc_initializer *out, tfc_status *st) {
    bool has = false;
    if (!tfc_json_get_i64(c, "seed", &out->seed, &has, st)) return false;
    out->has_seed = has;
    return true;
}

bool tfc_json_get_initializer(const cJSON *cfg, const char *key, tfc_initializer *out, char *name_buf,
                              size_t name_size, tfc_status *st) {
    bool present;
    const cJSON *v = get_item(cfg, key, &present);
    if (!v) return true;
    const char *cls;
    const cJSON *c;
    if (!get_object(v, key, &cls, &c, st)) return false;
    const char *name = init_canonical(cls);
    if (!name) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown initializer: %s (config key \"%s\")", cls, key);
    tfc_initializer in = {.name = name};
    bool ok = get_seed(c, &in, st);
    if (!strcmp(name, "constant")) {
        ok = ok && tfc_json_get_f64(c, "value", &in.value, NULL, st);
    } else if (!strcmp(name, "random_normal") || !strcmp(name, "truncated_normal")) {
        in.stddev = 0.05;
        ok = ok && tfc_json_get_f64(c, "mean", &in.mean, NULL, st) && tfc_json_get_f64(c, "stddev", &in.stddev, NULL, st);
    } else if (!strcmp(name, "random_uniform")) {
        in.minval = -0.05, in.maxval = 0.05;
        ok = ok && tfc_json_get_f64(c, "minval", &in.minval, NULL, st) &&
             tfc_json_get_f64(c, "maxval", &in.maxval, NULL, st);
    } else if (!strcmp(name, "orthogonal") || !strcmp(name, "identity")) {
        in.gain = 1;
        ok = ok && tfc_json_get_f64(c, "gain", &in.gain, NULL, st);
    } else if (!strcmp(name, "variance_scaling")) {
        in.scale = 1;
        ok = ok && tfc_json_get_f64(c, "scale", &in.scale, NULL, st) && tfc_json_get_str(c, "mode", &in.mode, NULL, st) &&
             tfc_json_get_str(c, "distribution", &in.distribution, NULL, st);
        /* Keras 2 still reads the deprecated "normal" as "truncated_normal". */
        if (ok && in.distribution && !strcmp(in.distribution, "normal")) in.distribution = "truncated_normal";
    }
    if (!ok) return false;
    /* The caller's buffer holds the name; mode/distribution are static strings or borrowed from cfg. */
    if (name_buf && name_size) {
        snprintf(name_buf, name_size, "%s", name);
        in.name = name_buf;
    }
    *out = in;
    return true;
}

bool tfc_json_get_regularizer(const cJSON *cfg, const char *key, tfc_regularizer *out, bool *has, tfc_status *st) {
    bool present;
    const cJSON *v = get_item(cfg, key, &present);
    if (has) *has = false;
    if (!v) return true;
    const char *cls;
    const cJSON *c;
    if (!get_object(v, key, &cls, &c, st)) return false;
    tfc_regularizer r = {0};
    if (!strcmp(cls, "L1") || !strcmp(cls, "l1")) {
        r.l1 = 0.01;
        if (!tfc_json_get_f64(c, "l1", &r.l1, NULL, st)) return false;
    } else if (!strcmp(cls, "L2") || !strcmp(cls, "l2")) {
        r.l2 = 0.01;
        if (!tfc_json_get_f64(c, "l2", &r.l2, NULL, st)) return false;
    } else if (!strcmp(cls, "L1L2") || !strcmp(cls, "l1_l2")) {
        r.l1_l2 = true;
        if (!c && !strcmp(cls, "l1_l2")) r.l1 = r.l2 = 0.01;
        if (!tfc_json_get_f64(c, "l1", &r.l1, NULL, st) || !tfc_json_get_f64(c, "l2", &r.l2, NULL, st)) return false;
    } else {
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unknown regularizer: %s (config key \"%s\")", cls, key);
    }
    *out = r;
    if (has) *has = true;
    return true;
}

bool tfc_json_get_common(const cJSON *cfg, tfc_layer_common_cfg *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    out->input_rank = -1;
    out->batch_size = -1;
    out->dtype = TFC_INVALID_DTYPE;
    bool has, tr = true;
    if (!tfc_json_get_str(cfg, "name", &out->name, NULL, st)) return false;
    if (!tfc_json_get_bool(cfg, "trainable", &tr, &has, st)) return false;
    out->trainable = has ? (tr ? TFC_YES : TFC_NO) : TFC_DEFAULT;
    const cJSON *d = get_item(cfg, "dtype", &has);
    if (d) {
        const char *dn = NULL;
        if (cJSON_IsString(d)) {
            dn = d->valuestring;
        } else if (cJSON_IsObject(d)) { /* DTypePolicy / Policy object */
            const cJSON *c = cJSON_GetObjectItemCaseSensitive(d, "config");
            if (!tfc_json_get_str(c, "name", &dn, NULL, st)) return false;
        }
        if (!dn) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"dtype\" must be a dtype name or policy");
        if (!strcmp(dn, "mixed_float16") || !strcmp(dn, "mixed_bfloat16")) { /* a mixed precision Policy */
            out->dtype_policy = dn;
            dn = "float32";
        }
        out->dtype = tfc_dtype_from_name(dn);
        if (out->dtype == TFC_INVALID_DTYPE)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"dtype\": unknown dtype %s", dn);
    }
    int64_t shape[TFC_MAX_RANK + 1];
    int n = 0;
    const char *key = get_item(cfg, "batch_input_shape", NULL) ? "batch_input_shape" : "batch_shape";
    if (!tfc_json_get_i64_list(cfg, key, shape, TFC_MAX_RANK, &n, &has, st)) return false;
    if (has) {
        if (n < 1) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "config key \"%s\" must include the batch dim", key);
        out->batch_size = shape[0];
        out->input_rank = n - 1;
        for (int i = 1; i < n; i++) out->input_shape[i - 1] = shape[i];
    }
    return true;
}

bool tfc_json_add_kernel_bias_tail(cJSON *cfg, const tfc_layer *l, const char *activation, bool use_bias,
                                   const tfc_kinit *kernel_init, const tfc_kinit *bias_init,
                                   const tfc_regularizer *kernel_reg, bool has_kernel_reg,
                                   const tfc_regularizer *bias_reg, bool has_bias_reg) {
    return cJSON_AddStringToObject(cfg, "activation", tfc_activation_config_name(activation)) &&
           cJSON_AddBoolToObject(cfg, "use_bias", use_bias) &&
           tfc_json_add_initializer(cfg, "kernel_initializer", &kernel_init->init) &&
           tfc_json_add_initializer(cfg, "bias_initializer", &bias_init->init) &&
           tfc_json_add_regularizer(cfg, "kernel_regularizer", kernel_reg, has_kernel_reg) &&
           tfc_json_add_regularizer(cfg, "bias_regularizer", bias_reg, has_bias_reg) &&
           tfc_json_add_regularizer(cfg, "activity_regularizer", &l->activity_reg, l->has_activity_reg) &&
           cJSON_AddNullToObject(cfg, "kernel_constraint") && cJSON_AddNullToObject(cfg, "bias_constraint");
}
