/* TensorFlow Serving's REST API over the serving core: URL grammar, model status, metadata, predict (row and
 * columnar), classify and regress, and error bodies. JSON <-> tensors is json_tensor.c; HTTP is http.c. */
#include "serving/rest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "proto/get_model_metadata.pb-c.h"
#include "proto/meta_graph.pb-c.h"
#include "proto/proto_internal.h"
#include "serving/json_tensor.h"
#include "tfc/example.h"
#include "tfc/platform.h"

int srv_http_status(tfc_code code) {
    static const int http[] = {200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401};
    return (int)code >= 0 && (size_t)code < sizeof http / sizeof http[0] ? http[code] : 500;
}

void srv_rest_response_clear(srv_rest_response *r) { srv_buf_free(&r->body); }

static void error_body(srv_rest_response *r, const tfc_status *st) {
    r->code = st->code;
    r->http_status = srv_http_status(st->code);
    r->body.len = 0;
    srv_buf_puts(&r->body, "{ \"error\": ");
    srv_buf_json_string(&r->body, st->msg, strlen(st->msg));
    srv_buf_puts(&r->body, " }");
}

/* ---- URL grammar ---------------------------------------------------------------------------------------- */

typedef struct request_path {
    char name[256];
    char label[256];
    int64_t version;   /* -1: none */
    bool has_label;
    enum { VERB_NONE, VERB_PREDICT, VERB_CLASSIFY, VERB_REGRESS, VERB_METADATA } verb;
} request_path;

static bool prefix_ci(const char **p, const char *word) {
    size_t n = strlen(word);
    if (strncasecmp(*p, word, n)) return false;
    *p += n;
    return true;
}

/* One path segment (chars other than '/' and ':'), percent-decoded into out. */
static bool segment(const char **p, char *out, size_t size) {
    size_t n = 0;
    const char *s = *p;
    while (*s && *s != '/' && *s != ':') {
        int c = (unsigned char)*s++;
        if (c == '%' && s[0] && s[1]) {
            char hex[3] = {s[0], s[1], 0}, *end;
            long v = strtol(hex, &end, 16);
            if (*end == 0) {
                c = (int)v;
                s += 2;
            }
        }
        if (n + 1 >= size || c == 0) return false;
        out[n++] = (char)c;
    }
    out[n] = 0;
    *p = s;
    return n > 0;
}

/* Parses what follows "/v1/models/": name, optional /versions/N or /labels/L, then the verb (":predict" ...
 * for POST, "/metadata" or nothing for GET). */
static bool parse_path(const char *p, bool post, request_path *rp) {
    memset(rp, 0, sizeof *rp);
    rp->version = -1;
    if (!segment(&p, rp->name, sizeof rp->name)) return false;
    if (prefix_ci(&p, "/versions/")) {
        if (*p < '0' || *p > '9') return false;
        int64_t v = 0;
        for (; *p >= '0' && *p <= '9'; p++) {
            if (v > (INT64_MAX - (*p - '0')) / 10) return false;
            v = v * 10 + (*p - '0');
        }
        rp->version = v;
    } else if (prefix_ci(&p, "/labels/")) {
        if (!segment(&p, rp->label, sizeof rp->label)) return false;
        rp->has_label = true;
    }
    if (post) {
        if (prefix_ci(&p, ":predict")) rp->verb = VERB_PREDICT;
        else if (prefix_ci(&p, ":classify")) rp->verb = VERB_CLASSIFY;
        else if (prefix_ci(&p, ":regress")) rp->verb = VERB_REGRESS;
        else return false;
    } else if (prefix_ci(&p, "/metadata")) {
        rp->verb = VERB_METADATA;
    }
    return *p == 0;
}

/* ---- status and metadata -------------------------------------------------------------------------------- */

static bool handle_status(tfc_srv_manager *m, const request_path *rp, srv_rest_response *r, tfc_status *st) {
    tfc_srv_version_status *vs = NULL;
    int n = tfc_srv_model_status(m, rp->name, rp->version, rp->has_label ? rp->label : NULL, &vs, st);
    if (n < 0) return false;
    srv_buf *b = &r->body;
    srv_buf_puts(b, "{\n \"model_version_status\": [");
    for (int i = 0; i < n; i++) {
        srv_buf_printf(b, "%s\n  {\n   \"version\": \"%lld\",\n   \"state\": \"%s\",\n   \"status\": {\n"
                       "    \"error_code\": \"%s\",\n    \"error_message\": ", i ? "," : "", (long long)vs[i].version,
                       tfc_srv_state_name(vs[i].state), tfc_code_name(vs[i].status.code));
        srv_buf_json_string(b, vs[i].status.code ? vs[i].status.msg : "", vs[i].status.code ? strlen(vs[i].status.msg) : 0);
        srv_buf_puts(b, "\n   }\n  }");
    }
    srv_buf_puts(b, "\n ]\n}\n");
    tfc_free(vs);
    return true;
}

static void tensor_info_json(srv_buf *b, const Tensorflow__TensorInfo *ti) {
    srv_buf_printf(b, "{\"dtype\": \"%s\", \"tensor_shape\": {\"dim\": [", tfc_pb_dtype_enum_name(ti->dtype));
    const Tensorflow__TensorShapeProto *sh = ti->tensor_shape;
    for (size_t d = 0; sh && d < sh->n_dim; d++) {
        srv_buf_printf(b, "%s{\"size\": \"%lld\", \"name\": ", d ? ", " : "", (long long)sh->dim[d]->size);
        const char *nm = sh->dim[d]->name ? sh->dim[d]->name : "";
        srv_buf_json_string(b, nm, strlen(nm));
        srv_buf_puts(b, "}");
    }
    srv_buf_printf(b, "], \"unknown_rank\": %s}, \"name\": ", !sh || sh->unknown_rank ? "true" : "false");
    const char *nm = ti->encoding_case == TENSORFLOW__TENSOR_INFO__ENCODING_NAME && ti->name ? ti->name : "";
    srv_buf_json_string(b, nm, strlen(nm));
    srv_buf_puts(b, "}");
}

static void tensor_map_json(srv_buf *b, Tensorflow__SignatureDef__InputsEntry **e, size_t n) {
    srv_buf_puts(b, "{");
    for (size_t i = 0; i < n; i++) {
        srv_buf_puts(b, i ? ", " : "");
        srv_buf_json_string(b, e[i]->key, strlen(e[i]->key));
        srv_buf_puts(b, ": ");
        tensor_info_json(b, e[i]->value);
    }
    srv_buf_puts(b, "}");
}

static bool handle_metadata(tfc_srv_version *v, srv_rest_response *r, tfc_status *st) {
    size_t len = 0;
    const uint8_t *p = tfc_srv_signature_def_map(v, &len);
    Tensorflow__Serving__SignatureDefMap *map = tensorflow__serving__signature_def_map__unpack(NULL, len, p);
    if (!map) return tfc_status_set(st, TFC_INTERNAL, "malformed SignatureDefMap");
    for (size_t i = 0; i < map->n_signature_def; i++)
        if (!map->signature_def[i]->key || !map->signature_def[i]->value) {
            tensorflow__serving__signature_def_map__free_unpacked(map, NULL);
            return tfc_status_set(st, TFC_INTERNAL, "malformed SignatureDefMap entry");
        }
    srv_buf *b = &r->body;
    srv_buf_puts(b, "{\n\"model_spec\": {\"name\": ");
    srv_buf_json_string(b, tfc_srv_version_model(v), strlen(tfc_srv_version_model(v)));
    srv_buf_printf(b, ", \"signature_name\": \"\", \"version\": \"%lld\"},\n\"metadata\": {\"signature_def\": "
                   "{\"signature_def\": {", (long long)tfc_srv_version_number(v));
    for (size_t i = 0; i < map->n_signature_def; i++) {
        const Tensorflow__Serving__SignatureDefMap__SignatureDefEntry *e = map->signature_def[i];
        const char *key = e->key;
        const Tensorflow__SignatureDef *sd = e->value;
        srv_buf_puts(b, i ? ",\n" : "\n");
        srv_buf_json_string(b, key, strlen(key));
        srv_buf_puts(b, ": {\"inputs\": ");
        tensor_map_json(b, (Tensorflow__SignatureDef__InputsEntry **)sd->inputs, sd->n_inputs);
        srv_buf_puts(b, ", \"outputs\": ");
        tensor_map_json(b, (Tensorflow__SignatureDef__InputsEntry **)sd->outputs, sd->n_outputs);
        srv_buf_puts(b, ", \"method_name\": ");
        const char *mn = sd->method_name ? sd->method_name : "";
        srv_buf_json_string(b, mn, strlen(mn));
        /* TensorFlow Serving prints the (always empty here) defaults map, except for the init op's signature */
        srv_buf_puts(b, strcmp(key, "__saved_model_init_op") ? ", \"defaults\": {}}" : "}");
    }
    tensorflow__serving__signature_def_map__free_unpacked(map, NULL);
    srv_buf_puts(b, "\n}}}\n}\n");
    return true;
}

/* ---- predict -------------------------------------------------------------------------------------------- */

static bool named_object(const srv_json *v) { return v->type == SRV_J_OBJECT && !srv_json_is_b64(v); }

/* The signature_name member: NULL (default) or its string; false with the error when it is not a string. */
static bool signature_member(const srv_json *req, const char **name, tfc_status *st) {
    const srv_json *s = srv_json_get(req, "signature_name");
    *name = NULL;
    if (!s) return true;
    if (s->type != SRV_J_STRING) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "'signature_name' key must be a string value.");
    *name = s->s;
    return true;
}

static const tfc_saved_model_signature *rest_signature(tfc_srv_version *v, const char *name, tfc_status *st) {
    const tfc_saved_model_signature *s = tfc_srv_signature(v, name, st);
    if (!s)
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Serving signature name: \"%s\" not found in signature def",
                       name && *name ? name : TFC_SAVED_MODEL_DEFAULT_SIGNATURE);
    return s;
}

/* instances -> one tensor per signature input (ins[i] for input i). */
static bool rows_to_tensors(const tfc_saved_model_signature *s, const srv_json *inst, tfc_srv_named_tensor *ins,
                            tfc_status *st) {
    const int n_in = tfc_saved_model_signature_num_inputs(s);
    if (inst->type != SRV_J_ARRAY || inst->n == 0)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "'instances' must be a non-empty JSON array");
    const bool named = named_object(inst->items[0]);
    for (uint32_t i = 0; i < inst->n; i++)
        if (named_object(inst->items[i]) != named)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expecting all 'instances' to be %s, item %u is not (the "
                                  "list mixes named-input objects and values)", named ? "JSON objects" : "values", i);
    if (!named && n_in != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "The signature has %d inputs: each of 'instances' must be a "
                              "JSON object with one key per input", n_in);
    const srv_json **rows = tfc_calloc(inst->n, sizeof *rows);
    if (!rows) return tfc_status_oom(st, "instances", inst->n * sizeof *rows);
    bool ok = true;
    for (int k = 0; ok && k < n_in; k++) {
        const tfc_saved_model_tensor_info *ti = tfc_saved_model_signature_input(s, k);
        for (uint32_t i = 0; ok && i < inst->n; i++) {
            const srv_json *o = inst->items[i];
            if (!named) {
                rows[i] = o;
                continue;
            }
            if ((int)o->n != n_in || !(rows[i] = srv_json_get(o, ti->key))) {
                char keys[200] = "";
                for (int j = 0, at = 0; j < n_in && at < (int)sizeof keys - 1; j++)
                    at += snprintf(keys + at, sizeof keys - (size_t)at, "%s%s", j ? "," : "",
                                   tfc_saved_model_signature_input(s, j)->key);
                ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Failed to process element: %u of 'instances' list. "
                                    "JSON object: keys must be exactly the signature's inputs {%s}", i, keys);
            }
        }
        if (ok) ok = (ins[k].tensor = srv_json_rows_tensor(rows, inst->n, ti->dtype, ti->key, st)) != NULL;
        ins[k].name = ti->key;
    }
    tfc_free(rows);
    return ok;
}

static bool columns_to_tensors(const tfc_saved_model_signature *s, const srv_json *inputs, tfc_srv_named_tensor *ins,
                               tfc_status *st) {
    const int n_in = tfc_saved_model_signature_num_inputs(s);
    const bool named = named_object(inputs);
    if (!named && n_in != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "The signature has %d inputs: 'inputs' must be a JSON object "
                              "with one key per input", n_in);
    for (int k = 0; k < n_in; k++) {
        const tfc_saved_model_tensor_info *ti = tfc_saved_model_signature_input(s, k);
        const srv_json *v = named ? srv_json_get(inputs, ti->key) : inputs;
        if (!v) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Missing named input: %s in 'inputs' object.", ti->key);
        ins[k].name = ti->key;
        if (!(ins[k].tensor = srv_json_tensor(v, ti->dtype, ti->key, st))) return false;
    }
    return true;
}

static bool predict_json(srv_buf *b, tfc_srv_named_tensor *out, int n_out, bool rows, tfc_status *st) {
    if (!rows) {
        srv_buf_puts(b, "{\n    \"outputs\": ");
        if (n_out == 1) srv_tensor_json(b, out[0].tensor, out[0].name);
        else {
            srv_buf_puts(b, "{");
            for (int i = 0; i < n_out; i++) {
                srv_buf_puts(b, i ? ",\n        " : "\n        ");
                srv_buf_json_string(b, out[i].name, strlen(out[i].name));
                srv_buf_puts(b, ": ");
                srv_tensor_json(b, out[i].tensor, out[i].name);
            }
            srv_buf_puts(b, "\n    }");
        }
        srv_buf_puts(b, "\n}\n");
        return true;
    }
    int64_t batch = -1;
    for (int i = 0; i < n_out; i++) {
        if (tfc_tensor_rank(out[i].tensor) < 1)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Tensor name: %s has no shape information", out[i].name);
        int64_t d0 = tfc_tensor_dim(out[i].tensor, 0);
        if (batch >= 0 && d0 != batch)
            return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Tensor name: %s has inconsistent batch size: %lld "
                                  "expecting: %lld", out[i].name, (long long)d0, (long long)batch);
        batch = d0;
    }
    srv_buf_puts(b, "{\n    \"predictions\": [");
    for (int64_t r = 0; r < batch && !b->oom; r++) {
        srv_buf_puts(b, r ? ", " : "");
        if (n_out == 1) {
            srv_tensor_row_json(b, out[0].tensor, out[0].name, r);
            continue;
        }
        srv_buf_puts(b, "{");
        for (int i = 0; i < n_out; i++) {
            srv_buf_puts(b, i ? ", " : "");
            srv_buf_json_string(b, out[i].name, strlen(out[i].name));
            srv_buf_puts(b, ": ");
            srv_tensor_row_json(b, out[i].tensor, out[i].name, r);
        }
        srv_buf_puts(b, "}");
    }
    srv_buf_puts(b, "]\n}\n");
    return true;
}

static bool handle_predict(tfc_srv_version *v, const srv_json *req, srv_rest_response *r, tfc_status *st) {
    const char *sig_name;
    if (!signature_member(req, &sig_name, st)) return false;
    const tfc_saved_model_signature *s = rest_signature(v, sig_name, st);
    if (!s) return false;
    const srv_json *inst = srv_json_get(req, "instances"), *cols = srv_json_get(req, "inputs");
    if (inst && cols)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Not formatted correctly expecting only one of 'inputs' or "
                              "'instances' keys exist");
    if (!inst && !cols) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Missing 'inputs' or 'instances' key");
    const int n_in = tfc_saved_model_signature_num_inputs(s);
    tfc_srv_named_tensor *ins = tfc_calloc((size_t)n_in + 1, sizeof *ins), *out = NULL;
    if (!ins) return tfc_status_oom(st, "predict inputs", sizeof *ins);
    int n_out = 0;
    bool ok = (inst ? rows_to_tensors(s, inst, ins, st) : columns_to_tensors(s, cols, ins, st)) &&
              tfc_srv_predict(v, sig_name, ins, n_in, NULL, 0, &out, &n_out, st) &&
              predict_json(&r->body, out, n_out, inst != NULL, st);
    for (int i = 0; i < n_in; i++) tfc_tensor_unref(ins[i].tensor);
    tfc_free(ins);
    tfc_srv_outputs_free(out, n_out);
    return ok;
}

/* ---- classify / regress --------------------------------------------------------------------------------- */

typedef enum { KIND_NONE, KIND_BYTES, KIND_FLOAT, KIND_INT64 } feature_kind;

static feature_kind element_kind(const srv_json *v) {
    switch (v->type) {
    case SRV_J_STRING: return KIND_BYTES;
    case SRV_J_TRUE: case SRV_J_FALSE: return KIND_INT64;
    case SRV_J_NUMBER: return v->is_int ? KIND_INT64 : KIND_FLOAT;
    case SRV_J_OBJECT: return srv_json_is_b64(v) ? KIND_BYTES : KIND_NONE;
    default: return KIND_NONE;
    }
}

/* One JSON feature map -> a serialized tf.train.Example (new buffer, tfc_free). */
static char *example_from_json(const srv_json *obj, size_t *len, tfc_status *st) {
    static const char *const kind_names[] = {"", "bytes", "float", "int64"};
    if (obj->type != SRV_J_OBJECT)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Example must be JSON object but got JSON %s",
                              srv_json_type_name(obj)), NULL;
    tfc_example *ex = tfc_example_new(st);
    char *out = NULL;
    void *vals = NULL;
    size_t *lens = NULL;
    unsigned char **owned = NULL;
    uint32_t n_owned = 0;
    if (!ex) return NULL;
    for (uint32_t f = 0; f < obj->n; f++) {
        const char *key = obj->keys[f];
        const srv_json *v = obj->items[f];
        const srv_json *const *el = v->type == SRV_J_ARRAY ? (const srv_json *const *)v->items : &v;
        const uint32_t n = v->type == SRV_J_ARRAY ? v->n : 1;
        feature_kind kind = n ? element_kind(el[0]) : KIND_FLOAT;
        for (uint32_t i = 0; i < n; i++) {
            feature_kind k = element_kind(el[i]);
            if (k == KIND_NONE) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "Feature: %s has element with unexpected JSON type: %s", key,
                               srv_json_type_name(el[i]));
                goto done;
            }
            if (k != kind) {
                tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unexpected element type in feature: %s expecting type: %s",
                               key, kind_names[kind]);
                goto done;
            }
        }
        tfc_free(vals);
        tfc_free(lens);
        lens = NULL;
        if (!(vals = tfc_calloc((size_t)n + 1, 8))) {
            tfc_status_oom(st, "example", (size_t)n * 8);
            goto done;
        }
        bool ok = true;
        if (kind == KIND_FLOAT) {
            for (uint32_t i = 0; i < n; i++) {
                double d = 0;
                srv_json_number_f64(el[i], &d);
                ((float *)vals)[i] = (float)d;
            }
            ok = tfc_example_set_floats(ex, key, vals, n, st);
        } else if (kind == KIND_INT64) {
            for (uint32_t i = 0; i < n && ok; i++) {
                int64_t x = el[i]->type == SRV_J_TRUE;
                if (el[i]->type == SRV_J_NUMBER && !srv_json_number_i64(el[i], INT64_MIN, INT64_MAX, &x))
                    ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Only int64 is supported: feature %s holds %.*s, "
                                        "out of int64 range", key, (int)(el[i]->len < 40 ? el[i]->len : 40), el[i]->s);
                ((int64_t *)vals)[i] = x;
            }
            ok = ok && tfc_example_set_int64s(ex, key, vals, n, st);
        } else {
            const char **sv = vals;
            if (!(lens = tfc_calloc((size_t)n + 1, sizeof *lens)) ||
                !(owned = tfc_realloc(owned, ((size_t)n_owned + n + 1) * sizeof *owned))) {
                tfc_status_oom(st, "example", (size_t)n * 8);
                goto done;
            }
            for (uint32_t i = 0; i < n && ok; i++) {
                if (el[i]->type == SRV_J_STRING) {
                    sv[i] = el[i]->s;
                    lens[i] = el[i]->len;
                    continue;
                }
                unsigned char *dec = srv_json_b64_decode(el[i], &lens[i]);
                if (!dec) ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Unable to base64 decode feature %s", key);
                else sv[i] = (const char *)(owned[n_owned++] = dec);
            }
            ok = ok && tfc_example_set_bytes(ex, key, sv, lens, n, st);
        }
        if (!ok) goto done;
    }
    out = tfc_example_serialize(ex, len, st);
done:
    for (uint32_t i = 0; i < n_owned; i++) tfc_free(owned[i]);
    tfc_free(owned);
    tfc_free(vals);
    tfc_free(lens);
    tfc_example_free(ex);
    return out;
}

static bool handle_examples(tfc_srv_version *v, const srv_json *req, bool classify, srv_rest_response *r,
                            tfc_status *st) {
    const char *sig_name;
    if (!signature_member(req, &sig_name, st)) return false;
    if (!rest_signature(v, sig_name, st)) return false;
    const srv_json *exs = srv_json_get(req, "examples"), *ctx = srv_json_get(req, "context");
    if (!exs) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expecting 'examples' key: key 'examples' is expected "
                                    "and was not found");
    if (exs->type != SRV_J_ARRAY || !exs->n)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expecting 'examples' value to be a non-empty JSON array");
    char **ser = tfc_calloc(exs->n, sizeof *ser), *cser = NULL;
    size_t *lens = tfc_calloc(exs->n, sizeof *lens), clen = 0;
    bool ok = ser && lens;
    if (!ok) tfc_status_oom(st, "examples", exs->n * sizeof *ser);
    if (ok && ctx) {
        ok = (cser = example_from_json(ctx, &clen, st)) != NULL;
        for (uint32_t i = 0; ok && i < exs->n; i++)
            for (uint32_t k = 0; ok && exs->items[i]->type == SRV_J_OBJECT && k < ctx->n; k++)
                if (srv_json_get(exs->items[i], ctx->keys[k]))
                    ok = tfc_status_set(st, TFC_INVALID_ARGUMENT, "Feature: %s of example %u is also in 'context'",
                                        ctx->keys[k], i);
    }
    for (uint32_t i = 0; ok && i < exs->n; i++) ok = (ser[i] = example_from_json(exs->items[i], &lens[i], st)) != NULL;
    if (ok) {
        tfc_srv_examples in = {(const char *const *)ser, lens, exs->n, cser, clen};
        srv_buf *b = &r->body;
        if (classify) {
            tfc_srv_classification c;
            if ((ok = tfc_srv_classify(v, sig_name, &in, &c, st))) {
                srv_buf_puts(b, "{\n    \"results\": [");
                for (int64_t e = 0; e < c.n_examples; e++) {
                    srv_buf_puts(b, e ? ", [" : "[");
                    for (int64_t k = 0; k < c.n_classes; k++) {
                        int64_t at = e * c.n_classes + k;
                        srv_buf_puts(b, k ? ", [" : "[");
                        if (c.labels) srv_buf_json_string(b, c.labels[at], c.label_lens[at]);
                        else srv_buf_puts(b, "\"\"");
                        srv_buf_puts(b, ", ");
                        srv_buf_float(b, c.scores ? c.scores[at] : 0.0f);
                        srv_buf_puts(b, "]");
                    }
                    srv_buf_puts(b, "]");
                }
                srv_buf_puts(b, "]\n}\n");
                tfc_srv_classification_clear(&c);
            }
        } else {
            int64_t n = 0;
            float *vals = tfc_srv_regress(v, sig_name, &in, &n, st);
            if ((ok = vals != NULL)) {
                srv_buf_puts(b, "{\n    \"results\": [");
                for (int64_t e = 0; e < n; e++) {
                    srv_buf_puts(b, e ? ", " : "");
                    srv_buf_float(b, vals[e]);
                }
                srv_buf_puts(b, "]\n}\n");
            }
            tfc_free(vals);
        }
    }
    for (uint32_t i = 0; ser && i < exs->n; i++) tfc_free(ser[i]);
    tfc_free(ser);
    tfc_free(lens);
    tfc_free(cser);
    return ok;
}

/* ---- dispatch ------------------------------------------------------------------------------------------- */

static void fixed_oom(srv_rest_response *r) {
    static char body[] = "{ \"error\": \"out of memory\" }";
    srv_buf_free(&r->body);
    r->code = TFC_RESOURCE_EXHAUSTED;
    r->http_status = 500;
    srv_buf_puts(&r->body, body);
}

void srv_rest_handle(tfc_srv_manager *m, const char *method, const char *path, const char *body, size_t len,
                     srv_rest_response *r) {
    memset(r, 0, sizeof *r);
    r->api = "";
    r->http_status = 200;
    tfc_status st = TFC_STATUS_INIT;
    const char *p = path ? path : "";
    if (strncasecmp(p, "/v1/", 4)) {
        r->code = TFC_NOT_FOUND;
        r->http_status = 404;
        srv_buf_puts(&r->body, "{ \"error\": \"Not found\" }");
        return;
    }
    const bool post = !strcmp(method, "POST"), get = !strcmp(method, "GET");
    request_path rp;
    bool parsed = false;
    if ((post || get) && prefix_ci(&p, "/v1/models")) {
        if (get && *p == 0) {
            tfc_status_set(&st, TFC_INVALID_ARGUMENT, "Missing model name in request.");
            goto fail;
        }
        parsed = *p == '/' && parse_path(p + 1, post, &rp);
    }
    if (!parsed) {
        tfc_status_set(&st, TFC_INVALID_ARGUMENT, "Malformed request: %s %.200s", method, path);
        goto fail;
    }
    snprintf(r->model, sizeof r->model, "%.127s", rp.name);
    r->api = rp.verb == VERB_PREDICT ? "predict" : rp.verb == VERB_CLASSIFY ? "classify" : rp.verb == VERB_REGRESS
             ? "regress" : rp.verb == VERB_METADATA ? "metadata" : "status";
    if (get && rp.verb == VERB_NONE) {
        if (!handle_status(m, &rp, r, &st)) goto fail;
        goto done;
    }
    tfc_srv_version *v = tfc_srv_acquire(m, rp.name, rp.version, rp.has_label ? rp.label : NULL, &st);
    if (!v) goto fail;
    bool ok;
    if (rp.verb == VERB_METADATA) {
        ok = handle_metadata(v, r, &st);
    } else {
        srv_json *req = NULL;
        srv_json_doc *doc = srv_json_parse(body ? body : "", len, &req, &st);
        ok = doc != NULL;
        if (ok && req->type != SRV_J_OBJECT)
            ok = tfc_status_set(&st, TFC_INVALID_ARGUMENT, "JSON Value: %s is not an object: the request body must be "
                                "a JSON object", srv_json_type_name(req));
        if (ok) ok = rp.verb == VERB_PREDICT ? handle_predict(v, req, r, &st)
                     : handle_examples(v, req, rp.verb == VERB_CLASSIFY, r, &st);
        srv_json_free(doc);
    }
    tfc_srv_release(v);
    if (!ok) goto fail;
done:
    if (r->body.oom) fixed_oom(r);
    return;
fail:
    error_body(r, &st);
    if (r->body.oom) fixed_oom(r);
}
