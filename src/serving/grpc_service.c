/* TensorFlow Serving's gRPC methods: each turns its request message (protobuf-c) into the serving core's plain
 * values, calls the core, and serializes the response as TensorFlow Serving builds it:
 *   Predict           outputs as Tensor::AsProtoField writes them (values in float_val, int_val, ...), the
 *                     model_spec actually used (name, version, signature name with "serving_default" filled in);
 *   GetModelMetadata  metadata["signature_def"] = Any(SignatureDefMap);
 *   GetModelStatus    one ModelVersionStatus per version with its state and StatusProto;
 *   Classify/Regress  the Input's tf.Examples (re-serialized one by one, as the signature takes them) and the
 *                     ClassificationResult / RegressionResult.
 * Checks in TensorFlow Serving's order and words: "Missing ModelSpec", then the servable (NOT_FOUND), then the
 * method's own validation. A request that is not a protobuf of the method's type is INTERNAL, as gRPC's C++
 * server answers it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/classification.pb-c.h"
#include "proto/get_model_metadata.pb-c.h"
#include "proto/get_model_status.pb-c.h"
#include "proto/inference.pb-c.h"
#include "proto/predict.pb-c.h"
#include "proto/proto_internal.h"
#include "proto/regression.pb-c.h"
#include "core/tensor_internal.h"
#include "serving/grpc_server.h"
#include "tfc/platform.h"

#define DEFAULT_SIGNATURE "serving_default"
#define SIGNATURE_DEF_MAP_URL "type.googleapis.com/tensorflow.serving.SignatureDefMap"

/* Unpacks a request; bytes that do not parse as `desc` are INTERNAL (out of memory stays RESOURCE_EXHAUSTED). */
static void *unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *req, size_t len, tfc_status *st) {
    ProtobufCMessage *m = tfc_pb_unpack(desc, req, len, 0, desc->short_name, st);
    if (!m && st->code != TFC_RESOURCE_EXHAUSTED) st->code = TFC_INTERNAL;
    return m;
}

/* ---- ModelSpec ---------------------------------------------------------------------------------------------- */

typedef struct {
    const char *name, *label, *signature;
    int64_t version; /* -1: none given */
} spec_in;

static bool spec_read(const Tensorflow__Serving__ModelSpec *s, spec_in *o, tfc_status *st) {
    if (!s) return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Missing ModelSpec");
    o->name = s->name ? s->name : "";
    o->signature = s->signature_name ? s->signature_name : "";
    o->version = -1;
    o->label = NULL;
    if (s->version_choice_case == TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION) {
        o->version = s->version ? s->version->value : 0;
        if (o->version < 0) /* no version directory has a negative number */
            return tfc_status_set(st, TFC_NOT_FOUND, "Servable not found for request: Specific(%s, %lld)", o->name,
                                  (long long)o->version);
    } else if (s->version_choice_case == TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION_LABEL &&
               s->version_label && *s->version_label) {
        o->label = s->version_label;
    }
    return true;
}

static tfc_srv_version *spec_acquire(tfc_srv_manager *m, const Tensorflow__Serving__ModelSpec *s, spec_in *o,
                                     tfc_status *st) {
    if (!spec_read(s, o, st)) return NULL;
    return tfc_srv_acquire(m, o->name, o->version, o->label, st);
}

/* The response's model_spec: the served name and version; signature_name when `signature` is not NULL. */
static void spec_write(Tensorflow__Serving__ModelSpec *spec, Google__Protobuf__Int64Value *ver,
                       const tfc_srv_version *v, const char *signature) {
    tensorflow__serving__model_spec__init(spec);
    google__protobuf__int64_value__init(ver);
    spec->name = (char *)tfc_srv_version_model(v);
    ver->value = tfc_srv_version_number(v);
    spec->version_choice_case = TENSORFLOW__SERVING__MODEL_SPEC__VERSION_CHOICE_VERSION;
    spec->version = ver;
    if (signature) spec->signature_name = (char *)(*signature ? signature : DEFAULT_SIGNATURE);
}

/* ---- Predict ------------------------------------------------------------------------------------------------ */

static bool predict_unpack(const uint8_t *req, size_t len, tfc_grpc_predict_req *r, tfc_status *st) {
    memset(r, 0, sizeof *r);
    Tensorflow__Serving__PredictRequest *p = unpack(&tensorflow__serving__predict_request__descriptor, req, len, st);
    if (!p) return false;
    r->msg = p;
    spec_in s = {0};
    if (!spec_read(p->model_spec, &s, st)) return false;
    r->model = s.name;
    r->version = s.version;
    r->label = s.label;
    r->signature = s.signature;
    if (p->n_output_filter > (size_t)INT32_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "PredictRequest: %zu output_filter entries",
                              p->n_output_filter);
    r->output_filter = (const char **)p->output_filter;
    r->n_filter = (int)p->n_output_filter;
    return true;
}

static int entry_cmp(const void *a, const void *b) {
    const Tensorflow__Serving__PredictRequest__InputsEntry *x = *(const void *const *)a, *y = *(const void *const *)b;
    int c = strcmp(x->key ? x->key : "", y->key ? y->key : "");
    return c ? c : (x < y ? -1 : x > y); /* entries sit in one array: address order is wire order */
}

/* Bytes a decoded tensor holds (its elements, and the characters of its strings). */
static size_t tensor_bytes(const tfc_tensor *t) {
    size_t n = (size_t)t->num_elements, bytes = n * tfc_dtype_size(t->dtype); /* allocated, so it fits */
    if (t->dtype == TFC_STRING)
        for (size_t i = 0; i < n; i++) bytes += tfc_tstring_size(&((const tfc_tstring *)t->data)[i]);
    return bytes;
}

/* Decodes the inputs map. A key repeated on the wire keeps its last value, as protobuf's map parsing does.
 * max_tensor_bytes bounds all inputs together: repeated-value filling lets a small message ask for huge tensors. */
static bool predict_tensors(tfc_grpc_predict_req *r, size_t max_tensor_bytes, tfc_status *st) {
    Tensorflow__Serving__PredictRequest *p = r->msg;
    size_t n = p->n_inputs;
    if (!n) return true;
    if (n > (size_t)INT32_MAX)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "PredictRequest: %zu inputs", n);
    Tensorflow__Serving__PredictRequest__InputsEntry **sorted = tfc_malloc(n * sizeof *sorted);
    if (!sorted) return tfc_status_oom(st, "PredictRequest inputs", n * sizeof *sorted);
    memcpy(sorted, p->inputs, n * sizeof *sorted);
    qsort(sorted, n, sizeof *sorted, entry_cmp);
    if (!(r->inputs = tfc_calloc(n, sizeof *r->inputs))) {
        tfc_free(sorted);
        return tfc_status_oom(st, "PredictRequest inputs", n * sizeof *r->inputs);
    }
    bool ok = true;
    size_t used = 0;
    for (size_t i = 0; i < n && ok; i++) {
        if (i + 1 < n && !strcmp(sorted[i]->key ? sorted[i]->key : "", sorted[i + 1]->key ? sorted[i + 1]->key : ""))
            continue; /* a later entry of the same key wins */
        const char *key = sorted[i]->key ? sorted[i]->key : "";
        Tensorflow__TensorProto empty = TENSORFLOW__TENSOR_PROTO__INIT;
        const Tensorflow__TensorProto *tp = sorted[i]->value ? sorted[i]->value : &empty;
        /* max_tensor_bytes 0: unbounded; room 0 would mean the same to the decoder, so stop before it */
        size_t room = max_tensor_bytes ? max_tensor_bytes - used : 0;
        bool over = max_tensor_bytes && !room;
        tfc_tensor *t = over ? NULL : tfc_pb_tensor_from_proto(tp, room, key, st);
        if (t && max_tensor_bytes && (used += tensor_bytes(t)) > max_tensor_bytes) {
            tfc_tensor_unref(t);
            t = NULL;
            over = true;
        }
        if (over)
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s: the request's inputs decode to more than the limit of %zu "
                           "bytes", key, max_tensor_bytes);
        if (!t) {
            if (st->code != TFC_RESOURCE_EXHAUSTED) st->code = TFC_INVALID_ARGUMENT;
            tfc_pb_status_prefix(st, "tensor parsing error: ");
            ok = false;
            break;
        }
        r->inputs[r->n_inputs].name = key;
        r->inputs[r->n_inputs++].tensor = t;
    }
    tfc_free(sorted);
    return ok;
}

bool tfc_grpc_predict_req_decode(const uint8_t *req, size_t len, size_t max_tensor_bytes, tfc_grpc_predict_req *out,
                                 tfc_status *st) {
    return predict_unpack(req, len, out, st) && predict_tensors(out, max_tensor_bytes, st);
}

void tfc_grpc_predict_req_clear(tfc_grpc_predict_req *r) {
    if (!r) return;
    for (int i = 0; i < r->n_inputs; i++) tfc_tensor_unref(r->inputs[i].tensor);
    tfc_free(r->inputs);
    tfc_pb_free(r->msg);
    memset(r, 0, sizeof *r);
}

static bool predict(tfc_srv_manager *m, const uint8_t *req, size_t len, size_t max_tensor_bytes, uint8_t **out,
                    size_t *out_len, tfc_status *st) {
    tfc_grpc_predict_req r;
    tfc_srv_version *v = NULL;
    tfc_srv_named_tensor *outs = NULL;
    int n_outs = 0;
    Tensorflow__Serving__PredictResponse__OutputsEntry *entries = NULL, **entry_ptrs = NULL;
    bool ok = false;
    if (!predict_unpack(req, len, &r, st)) goto done;
    if (!(v = tfc_srv_acquire(m, r.model, r.version, r.label, st))) goto done;
    /* TensorFlow Serving's order: the signature (FAILED_PRECONDITION) before the input tensors are parsed */
    if (!tfc_srv_signature(v, r.signature, st) || !predict_tensors(&r, max_tensor_bytes, st)) goto done;
    if (!tfc_srv_predict(v, r.signature, r.inputs, r.n_inputs, r.output_filter, r.n_filter, &outs, &n_outs, st))
        goto done;
    Tensorflow__Serving__PredictResponse resp = TENSORFLOW__SERVING__PREDICT_RESPONSE__INIT;
    Tensorflow__Serving__ModelSpec spec;
    Google__Protobuf__Int64Value ver;
    spec_write(&spec, &ver, v, r.signature);
    resp.model_spec = &spec;
    if (n_outs) {
        entries = tfc_calloc((size_t)n_outs, sizeof *entries);
        entry_ptrs = tfc_calloc((size_t)n_outs, sizeof *entry_ptrs);
        if (!entries || !entry_ptrs) {
            tfc_status_oom(st, "PredictResponse", (size_t)n_outs * sizeof *entries);
            goto done;
        }
    }
    for (int i = 0; i < n_outs; i++) {
        tensorflow__serving__predict_response__outputs_entry__init(&entries[i]);
        entries[i].key = (char *)outs[i].name;
        if (!(entries[i].value = tfc_pb_tensor_to_proto_field(outs[i].tensor, outs[i].name, st))) goto done;
        entry_ptrs[i] = &entries[i];
        resp.n_outputs++;
    }
    resp.outputs = entry_ptrs;
    ok = tfc_pb_pack(&resp.base, out, out_len, "PredictResponse", st);
done:
    for (int i = 0; entries && i < n_outs; i++) tfc_pb_free(entries[i].value);
    tfc_free(entries);
    tfc_free(entry_ptrs);
    tfc_srv_outputs_free(outs, n_outs);
    tfc_srv_release(v);
    tfc_grpc_predict_req_clear(&r);
    return ok;
}

/* ---- GetModelMetadata --------------------------------------------------------------------------------------- */

static bool metadata(tfc_srv_manager *m, const uint8_t *req, size_t len, size_t max_tensor_bytes, uint8_t **out,
                     size_t *out_len, tfc_status *st) {
    Tensorflow__Serving__GetModelMetadataRequest *p =
        unpack(&tensorflow__serving__get_model_metadata_request__descriptor, req, len, st);
    if (!p) return false;
    bool ok = false;
    tfc_srv_version *v = NULL;
    if (!p->model_spec) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Missing ModelSpec");
        goto done;
    }
    if (!p->n_metadata_field) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "GetModelMetadataRequest must specify at least one metadata_field");
        goto done;
    }
    for (size_t i = 0; i < p->n_metadata_field; i++)
        if (strcmp(p->metadata_field[i], "signature_def")) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Metadata field %s is not supported", p->metadata_field[i]);
            goto done;
        }
    spec_in s = {0};
    if (!(v = spec_acquire(m, p->model_spec, &s, st))) goto done;
    size_t map_len = 0;
    const void *map = tfc_srv_signature_def_map(v, &map_len);
    Google__Protobuf__Any any = GOOGLE__PROTOBUF__ANY__INIT;
    any.type_url = (char *)SIGNATURE_DEF_MAP_URL;
    any.value.data = (uint8_t *)map;
    any.value.len = map_len;
    Tensorflow__Serving__GetModelMetadataResponse__MetadataEntry entry =
        TENSORFLOW__SERVING__GET_MODEL_METADATA_RESPONSE__METADATA_ENTRY__INIT;
    entry.key = (char *)"signature_def";
    entry.value = &any;
    Tensorflow__Serving__GetModelMetadataResponse__MetadataEntry *entries[1] = {&entry};
    Tensorflow__Serving__GetModelMetadataResponse resp = TENSORFLOW__SERVING__GET_MODEL_METADATA_RESPONSE__INIT;
    Tensorflow__Serving__ModelSpec spec;
    Google__Protobuf__Int64Value ver;
    spec_write(&spec, &ver, v, NULL);
    resp.model_spec = &spec;
    resp.n_metadata = 1;
    resp.metadata = entries;
    ok = tfc_pb_pack(&resp.base, out, out_len, "GetModelMetadataResponse", st);
done:
    tfc_srv_release(v);
    tfc_pb_free(p);
    return ok;
}

/* ---- GetModelStatus ----------------------------------------------------------------------------------------- */

static bool model_status(tfc_srv_manager *m, const uint8_t *req, size_t len, size_t max_tensor_bytes, uint8_t **out,
                         size_t *out_len, tfc_status *st) {
    Tensorflow__Serving__GetModelStatusRequest *p =
        unpack(&tensorflow__serving__get_model_status_request__descriptor, req, len, st);
    if (!p) return false;
    bool ok = false;
    tfc_srv_version_status *vs = NULL;
    Tensorflow__Serving__ModelVersionStatus *rows = NULL, **row_ptrs = NULL;
    Tensorflow__Serving__StatusProto *codes = NULL;
    spec_in s = {0};
    if (!spec_read(p->model_spec, &s, st)) goto done;
    int n = tfc_srv_model_status(m, s.name, s.version, s.label, &vs, st);
    if (n < 0) goto done;
    if (n) {
        rows = tfc_calloc((size_t)n, sizeof *rows);
        row_ptrs = tfc_calloc((size_t)n, sizeof *row_ptrs);
        codes = tfc_calloc((size_t)n, sizeof *codes);
        if (!rows || !row_ptrs || !codes) {
            tfc_status_oom(st, "GetModelStatusResponse", (size_t)n * sizeof *rows);
            goto done;
        }
    }
    for (int i = 0; i < n; i++) {
        tensorflow__serving__model_version_status__init(&rows[i]);
        tensorflow__serving__status_proto__init(&codes[i]);
        rows[i].version = vs[i].version;
        rows[i].state = (Tensorflow__Serving__ModelVersionStatus__State)vs[i].state;
        codes[i].error_code = (Tensorflow__Error__Code)vs[i].status.code;
        codes[i].error_message = vs[i].status.code == TFC_OK ? (char *)"" : vs[i].status.msg;
        rows[i].status = &codes[i];
        row_ptrs[i] = &rows[i];
    }
    Tensorflow__Serving__GetModelStatusResponse resp = TENSORFLOW__SERVING__GET_MODEL_STATUS_RESPONSE__INIT;
    resp.n_model_version_status = (size_t)n;
    resp.model_version_status = row_ptrs;
    ok = tfc_pb_pack(&resp.base, out, out_len, "GetModelStatusResponse", st);
done:
    tfc_free(rows);
    tfc_free(row_ptrs);
    tfc_free(codes);
    tfc_free(vs);
    tfc_pb_free(p);
    return ok;
}

/* ---- Classify and Regress ----------------------------------------------------------------------------------- */

/* The Input's Examples serialized one by one into one buffer, as the serving core takes them. */
typedef struct {
    uint8_t *buf;
    const char **examples;
    size_t *lens;
    tfc_srv_examples ex;
} examples_wire;

static void examples_clear(examples_wire *w) {
    tfc_free(w->buf);
    tfc_free(w->examples);
    tfc_free(w->lens);
    memset(w, 0, sizeof *w);
}

static bool examples_pack(const Tensorflow__Serving__Input *in, examples_wire *w, tfc_status *st) {
    memset(w, 0, sizeof *w);
    Tensorflow__Example **list = NULL, *context = NULL;
    size_t n = 0;
    if (in && in->kind_case == TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST && in->example_list) {
        list = in->example_list->examples;
        n = in->example_list->n_examples;
    } else if (in && in->kind_case == TENSORFLOW__SERVING__INPUT__KIND_EXAMPLE_LIST_WITH_CONTEXT &&
               in->example_list_with_context) {
        list = in->example_list_with_context->examples;
        n = in->example_list_with_context->n_examples;
        context = in->example_list_with_context->context;
    }
    /* sizes fit: the examples were unpacked from a message of at most max_message bytes */
    size_t total = context ? protobuf_c_message_get_packed_size(&context->base) : 0;
    for (size_t i = 0; i < n; i++) total += protobuf_c_message_get_packed_size(&list[i]->base);
    if (!(w->buf = tfc_malloc(total ? total : 1)) || (n && !(w->examples = tfc_calloc(n, sizeof *w->examples))) ||
        (n && !(w->lens = tfc_calloc(n, sizeof *w->lens)))) {
        examples_clear(w);
        return tfc_status_oom(st, "Input examples", total);
    }
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        w->examples[i] = (const char *)w->buf + at;
        w->lens[i] = protobuf_c_message_pack(&list[i]->base, w->buf + at);
        at += w->lens[i];
    }
    if (context) {
        w->ex.context = (const char *)w->buf + at;
        w->ex.context_len = protobuf_c_message_pack(&context->base, w->buf + at);
    }
    w->ex.examples = w->examples;
    w->ex.lens = w->lens;
    w->ex.n = (int64_t)n;
    return true;
}

/* What Classify and Regress share before the call: the servable and the Input's examples. */
static bool examples_begin(tfc_srv_manager *m, const Tensorflow__Serving__ModelSpec *spec,
                           const Tensorflow__Serving__Input *in, tfc_srv_version **v, spec_in *s, examples_wire *w,
                           tfc_status *st) {
    return (*v = spec_acquire(m, spec, s, st)) && examples_pack(in, w, st);
}

/* A ClassificationResult of the core's classification, pointing into the arrays it allocates (freed by the
 * caller with classification_result_free). */
static bool classification_result(const tfc_srv_classification *c, Tensorflow__Serving__ClassificationResult *res,
                                  tfc_status *st) {
    tensorflow__serving__classification_result__init(res);
    size_t ne = (size_t)c->n_examples, nk = (size_t)c->n_classes, cells = ne * nk;
    Tensorflow__Serving__Classifications *rows = ne ? tfc_calloc(ne, sizeof *rows) : NULL;
    Tensorflow__Serving__Classifications **row_ptrs = ne ? tfc_calloc(ne, sizeof *row_ptrs) : NULL;
    Tensorflow__Serving__Class *classes = cells ? tfc_calloc(cells, sizeof *classes) : NULL;
    Tensorflow__Serving__Class **class_ptrs = cells ? tfc_calloc(cells, sizeof *class_ptrs) : NULL;
    if ((ne && (!rows || !row_ptrs)) || (cells && (!classes || !class_ptrs))) {
        tfc_free(rows);
        tfc_free(row_ptrs);
        tfc_free(classes);
        tfc_free(class_ptrs);
        return tfc_status_oom(st, "ClassificationResult", cells * sizeof *classes);
    }
    for (size_t i = 0; i < ne; i++) {
        tensorflow__serving__classifications__init(&rows[i]);
        rows[i].n_classes = nk;
        rows[i].classes = class_ptrs + i * nk;
        for (size_t k = 0; k < nk; k++) {
            Tensorflow__Serving__Class *cl = &classes[i * nk + k];
            tensorflow__serving__class__init(cl);
            if (c->labels) cl->label = c->labels[i * nk + k];
            if (c->scores) cl->score = c->scores[i * nk + k];
            class_ptrs[i * nk + k] = cl;
        }
        row_ptrs[i] = &rows[i];
    }
    res->n_classifications = ne;
    res->classifications = row_ptrs;
    return true;
}

static void classification_result_free(Tensorflow__Serving__ClassificationResult *res) {
    if (!res->classifications) return;
    Tensorflow__Serving__Classifications *rows = res->classifications[0];
    Tensorflow__Serving__Class **class_ptrs = rows->classes, *classes = class_ptrs ? class_ptrs[0] : NULL;
    tfc_free(classes);
    tfc_free(class_ptrs);
    tfc_free(rows);
    tfc_free(res->classifications);
    res->classifications = NULL;
}

static bool regression_result(const float *values, int64_t n, Tensorflow__Serving__RegressionResult *res,
                              tfc_status *st) {
    tensorflow__serving__regression_result__init(res);
    Tensorflow__Serving__Regression *rows = n ? tfc_calloc((size_t)n, sizeof *rows) : NULL;
    Tensorflow__Serving__Regression **row_ptrs = n ? tfc_calloc((size_t)n, sizeof *row_ptrs) : NULL;
    if (n && (!rows || !row_ptrs)) {
        tfc_free(rows);
        tfc_free(row_ptrs);
        return tfc_status_oom(st, "RegressionResult", (size_t)n * sizeof *rows);
    }
    for (int64_t i = 0; i < n; i++) {
        tensorflow__serving__regression__init(&rows[i]);
        rows[i].value = values[i];
        row_ptrs[i] = &rows[i];
    }
    res->n_regressions = (size_t)n;
    res->regressions = row_ptrs;
    return true;
}

static void regression_result_free(Tensorflow__Serving__RegressionResult *res) {
    if (!res->regressions) return;
    tfc_free(res->regressions[0]);
    tfc_free(res->regressions);
    res->regressions = NULL;
}

static bool classify(tfc_srv_manager *m, const uint8_t *req, size_t len, size_t max_tensor_bytes, uint8_t **out,
                     size_t *out_len, tfc_status *st) {
    Tensorflow__Serving__ClassificationRequest *p =
        unpack(&tensorflow__serving__classification_request__descriptor, req, len, st);
    if (!p) return false;
    bool ok = false;
    tfc_srv_version *v = NULL;
    examples_wire w = {0};
    tfc_srv_classification c = {0};
    Tensorflow__Serving__ClassificationResult result = TENSORFLOW__SERVING__CLASSIFICATION_RESULT__INIT;
    spec_in s = {0};
    if (!examples_begin(m, p->model_spec, p->input, &v, &s, &w, st)) goto done;
    if (!tfc_srv_classify(v, s.signature, &w.ex, &c, st) || !classification_result(&c, &result, st)) goto done;
    Tensorflow__Serving__ClassificationResponse resp = TENSORFLOW__SERVING__CLASSIFICATION_RESPONSE__INIT;
    Tensorflow__Serving__ModelSpec spec;
    Google__Protobuf__Int64Value ver;
    spec_write(&spec, &ver, v, s.signature);
    resp.model_spec = &spec;
    resp.result = &result;
    ok = tfc_pb_pack(&resp.base, out, out_len, "ClassificationResponse", st);
done:
    classification_result_free(&result);
    tfc_srv_classification_clear(&c);
    examples_clear(&w);
    tfc_srv_release(v);
    tfc_pb_free(p);
    return ok;
}

static bool regress(tfc_srv_manager *m, const uint8_t *req, size_t len, size_t max_tensor_bytes, uint8_t **out,
                    size_t *out_len, tfc_status *st) {
    Tensorflow__Serving__RegressionRequest *p =
        unpack(&tensorflow__serving__regression_request__descriptor, req, len, st);
    if (!p) return false;
    bool ok = false;
    tfc_srv_version *v = NULL;
    examples_wire w = {0};
    float *values = NULL;
    int64_t n = 0;
    Tensorflow__Serving__RegressionResult result = TENSORFLOW__SERVING__REGRESSION_RESULT__INIT;
    spec_in s = {0};
    if (!examples_begin(m, p->model_spec, p->input, &v, &s, &w, st)) goto done;
    if (!(values = tfc_srv_regress(v, s.signature, &w.ex, &n, st)) || !regression_result(values, n, &result, st))
        goto done;
    Tensorflow__Serving__RegressionResponse resp = TENSORFLOW__SERVING__REGRESSION_RESPONSE__INIT;
    Tensorflow__Serving__ModelSpec spec;
    Google__Protobuf__Int64Value ver;
    spec_write(&spec, &ver, v, s.signature);
    resp.model_spec = &spec;
    resp.result = &result;
    ok = tfc_pb_pack(&resp.base, out, out_len, "RegressionResponse", st);
done:
    regression_result_free(&result);
    tfc_free(values);
    examples_clear(&w);
    tfc_srv_release(v);
    tfc_pb_free(p);
    return ok;
}

/* ---- MultiInference ----------------------------------------------------------------------------------------- */

typedef struct {
    Tensorflow__Serving__InferenceResult result;
    Tensorflow__Serving__ModelSpec spec;
    Google__Protobuf__Int64Value ver;
    Tensorflow__Serving__ClassificationResult cls;
    Tensorflow__Serving__RegressionResult reg;
} inference_out;

static bool multi_inference(tfc_srv_manager *m, const uint8_t *req, size_t len, size_t max_tensor_bytes,
                            uint8_t **out, size_t *out_len, tfc_status *st) {
    Tensorflow__Serving__MultiInferenceRequest *p =
        unpack(&tensorflow__serving__multi_inference_request__descriptor, req, len, st);
    if (!p) return false;
    bool ok = false;
    tfc_srv_version *v = NULL;
    examples_wire w = {0};
    tfc_srv_inference_task *tasks = NULL;
    tfc_srv_inference_result *results = NULL;
    inference_out *outs = NULL;
    Tensorflow__Serving__InferenceResult **result_ptrs = NULL;
    const int n = p->n_tasks > (size_t)INT32_MAX ? -1 : (int)p->n_tasks;
    /* the servable of the first task's ModelSpec (an empty one when there is none) */
    Tensorflow__Serving__ModelSpec none = TENSORFLOW__SERVING__MODEL_SPEC__INIT;
    const Tensorflow__Serving__ModelSpec *first = n > 0 && p->tasks[0]->model_spec ? p->tasks[0]->model_spec : &none;
    spec_in s = {0};
    if (n < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "MultiInferenceRequest: %zu tasks", p->n_tasks);
        goto done;
    }
    if (!(v = spec_acquire(m, first, &s, st))) goto done;
    if (n && (!(tasks = tfc_calloc((size_t)n, sizeof *tasks)) || !(outs = tfc_calloc((size_t)n, sizeof *outs)) ||
              !(result_ptrs = tfc_calloc((size_t)n, sizeof *result_ptrs)))) {
        tfc_status_oom(st, "MultiInferenceRequest", (size_t)n * sizeof *outs);
        goto done;
    }
    for (int t = 0; t < n; t++) {
        const Tensorflow__Serving__ModelSpec *ms = p->tasks[t]->model_spec ? p->tasks[t]->model_spec : &none;
        tasks[t] = (tfc_srv_inference_task){ms->name ? ms->name : "", ms->signature_name ? ms->signature_name : "",
                                            p->tasks[t]->method_name ? p->tasks[t]->method_name : ""};
    }
    if (!examples_pack(p->input, &w, st)) goto done;
    if (!tfc_srv_multi_inference(v, tasks, n, &w.ex, &results, st)) goto done;
    for (int t = 0; t < n; t++) {
        inference_out *o = &outs[t];
        tensorflow__serving__inference_result__init(&o->result);
        spec_write(&o->spec, &o->ver, v, tasks[t].signature);
        o->result.model_spec = &o->spec;
        if (results[t].is_regression) {
            if (!regression_result(results[t].values, results[t].n_values, &o->reg, st)) goto done;
            o->result.result_case = TENSORFLOW__SERVING__INFERENCE_RESULT__RESULT_REGRESSION_RESULT;
            o->result.regression_result = &o->reg;
        } else {
            if (!classification_result(&results[t].classification, &o->cls, st)) goto done;
            o->result.result_case = TENSORFLOW__SERVING__INFERENCE_RESULT__RESULT_CLASSIFICATION_RESULT;
            o->result.classification_result = &o->cls;
        }
        result_ptrs[t] = &o->result;
    }
    Tensorflow__Serving__MultiInferenceResponse resp = TENSORFLOW__SERVING__MULTI_INFERENCE_RESPONSE__INIT;
    resp.n_results = (size_t)n;
    resp.results = result_ptrs;
    ok = tfc_pb_pack(&resp.base, out, out_len, "MultiInferenceResponse", st);
done:
    for (int t = 0; outs && t < n; t++) {
        classification_result_free(&outs[t].cls);
        regression_result_free(&outs[t].reg);
    }
    tfc_free(outs);
    tfc_free(result_ptrs);
    tfc_srv_inference_results_free(results, n);
    tfc_free(tasks);
    examples_clear(&w);
    tfc_srv_release(v);
    tfc_pb_free(p);
    return ok;
}

/* ---- dispatch ----------------------------------------------------------------------------------------------- */

typedef bool (*method_fn)(tfc_srv_manager *m, const uint8_t *req, size_t len, size_t max_tensor_bytes,
                          uint8_t **out, size_t *out_len, tfc_status *st);

static const struct {
    const char *path;
    method_fn fn;
} METHODS[] = {
    {"/tensorflow.serving.PredictionService/Predict", predict},
    {"/tensorflow.serving.PredictionService/Classify", classify},
    {"/tensorflow.serving.PredictionService/Regress", regress},
    {"/tensorflow.serving.PredictionService/GetModelMetadata", metadata},
    {"/tensorflow.serving.PredictionService/MultiInference", multi_inference},
    {"/tensorflow.serving.ModelService/GetModelStatus", model_status},
};

bool tfc_grpc_service_call(tfc_srv_manager *m, const char *method, size_t method_len, const uint8_t *req,
                           size_t len, size_t max_tensor_bytes, uint8_t **out, size_t *out_len, tfc_status *st) {
    *out = NULL;
    *out_len = 0;
    for (size_t i = 0; i < sizeof METHODS / sizeof METHODS[0]; i++)
        if (strlen(METHODS[i].path) == method_len && !memcmp(METHODS[i].path, method, method_len))
            return METHODS[i].fn(m, req, len, max_tensor_bytes, out, out_len, st);
    int shown = method_len > 160 ? 160 : (int)method_len;
    return tfc_status_set(st, TFC_UNIMPLEMENTED, "Method not found: %.*s", shown, method);
}
