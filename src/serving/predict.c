/* Calls on a loaded version: predict, classify, regress and the metadata, with TensorFlow Serving's request
 * checks (predict_util, classifier, regressor). Each call runs on one free copy of the version. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "proto/proto_internal.h"

#include "serving/serving_internal.h"
#include "tfc/platform.h"

#define CLASSIFY_METHOD "tensorflow/serving/classify"
#define REGRESS_METHOD "tensorflow/serving/regress"

const void *tfc_srv_signature_def_map(const tfc_srv_version *v, size_t *len) {
    *len = v ? v->sigmap_len : 0;
    return v ? v->sigmap : NULL;
}

const char *tfc_srv_dtype_string(int dt, char *buf, size_t size) {
    const char *e = tfc_pb_dtype_enum_name(dt);
    size_t i = 0;
    for (e += 3; *e && i + 1 < size; e++) buf[i++] = (char)tolower((unsigned char)*e);
    buf[i] = 0;
    return buf;
}

static const char *sig_name(const char *name) {
    return name && *name ? name : TFC_SAVED_MODEL_DEFAULT_SIGNATURE;
}

const tfc_saved_model_signature *tfc_srv_signature(tfc_srv_version *v, const char *name, tfc_status *st) {
    /* signature tables are identical in every copy and never change: the first copy's is read without a lock */
    tfc_saved_model_signature *s = tfc_saved_model_signature_find(v->inst[0].sm, sig_name(name));
    if (!s) tfc_status_set(st, TFC_FAILED_PRECONDITION, "Serving signature key \"%s\" not found.", sig_name(name));
    else tfc_status_clear(st);
    return s;
}

/* Appends "a,b,c" (the keys flagged in use[], or all when use is NULL) to buf. */
static void key_set(char *buf, size_t size, const char *const *keys, int n, const bool *use) {
    size_t at = 0;
    buf[0] = 0;
    for (int i = 0, first = 1; i < n && at + 1 < size; i++) {
        if (use && !use[i]) continue;
        int w = snprintf(buf + at, size - at, "%s%s", first ? "" : ",", keys[i]);
        if (w < 0) break;
        at += (size_t)w < size - at ? (size_t)w : size - at - 1;
        first = 0;
    }
}

static _Thread_local double deadline_s; /* this thread's deadline, 0: none */

double srv_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void tfc_srv_set_deadline(int64_t timeout_ms) { deadline_s = timeout_ms > 0 ? srv_now() + (double)timeout_ms * 1e-3 : 0; }

double srv_deadline(void) { return deadline_s; }

bool srv_deadline_exceeded(tfc_status *st) {
    return tfc_status_set(st, TFC_DEADLINE_EXCEEDED, "Timed out waiting for notification");
}

bool srv_run_on_copy(tfc_srv_version *v, const char *key, tfc_tensor *const *in, int n_in, tfc_tensor **out,
                     int n_out, tfc_status *st) {
    const double deadline = srv_deadline();
    srv_instance *c = srv_instance_take(v, deadline);
    if (!c) return srv_deadline_exceeded(st);
    tfc_saved_model_signature *s = tfc_saved_model_signature_find(c->sm, key);
    bool ok = s && tfc_saved_model_signature_call(s, in, n_in, out, n_out, st);
    if (!s) tfc_status_set(st, TFC_INTERNAL, "signature '%s' missing from a copy of the model", key);
    srv_instance_put(v, c);
    if (ok && deadline && srv_now() > deadline) {
        for (int o = 0; o < n_out; o++) {
            tfc_tensor_unref(out[o]);
            out[o] = NULL;
        }
        return srv_deadline_exceeded(st);
    }
    return ok;
}

bool tfc_srv_predict(tfc_srv_version *v, const char *signature_name, const tfc_srv_named_tensor *inputs,
                     int n_inputs, const char *const *output_filter, int n_filter, tfc_srv_named_tensor **outputs,
                     int *n_outputs, tfc_status *st) {
    *outputs = NULL;
    *n_outputs = 0;
    const tfc_saved_model_signature *s = tfc_srv_signature(v, signature_name, st);
    if (!s) return false;
    const int n_in = tfc_saved_model_signature_num_inputs(s), n_out = tfc_saved_model_signature_num_outputs(s);
    /* the request's scratch arrays in one block: pointers first, then the flags */
    const size_t n_ptrs = 2 * ((size_t)n_in + (size_t)n_out) + (size_t)n_inputs,
                 n_flags = (size_t)n_inputs + (size_t)n_in + (size_t)n_out;
    void **scratch = tfc_calloc(n_ptrs * sizeof(void *) + n_flags + 1, 1);
    tfc_tensor **out = NULL;
    bool ok = false;
    if (!scratch) {
        tfc_status_oom(st, "Predict", n_ptrs * sizeof(void *) + n_flags);
        goto done;
    }
    const char **in_keys = (const char **)scratch, **out_keys = in_keys + n_in, **req_keys = out_keys + n_out;
    tfc_tensor **in = (tfc_tensor **)(scratch + n_in + n_out + n_inputs);
    out = in + n_in;
    bool *sent_extra = (bool *)(scratch + n_ptrs), *missing = sent_extra + n_inputs, *keep = missing + n_in;
    for (int i = 0; i < n_in; i++) in_keys[i] = tfc_saved_model_signature_input(s, i)->key;
    for (int i = 0; i < n_out; i++) out_keys[i] = tfc_saved_model_signature_output(s, i)->key;
    /* inputs by alias: every signature input exactly once, nothing else */
    bool mismatch = false;
    for (int r = 0; r < n_inputs; r++) {
        req_keys[r] = inputs[r].name ? inputs[r].name : "";
        int k = -1;
        for (int i = 0; i < n_in && k < 0; i++)
            if (!strcmp(in_keys[i], req_keys[r])) k = i;
        if (k < 0) sent_extra[r] = mismatch = true;
        else if (in[k]) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "duplicate input tensor alias: %s", req_keys[r]);
            goto done;
        } else in[k] = inputs[r].tensor;
    }
    for (int i = 0; i < n_in; i++)
        if (!in[i]) missing[i] = mismatch = true;
    if (mismatch || n_inputs != n_in) {
        char sent[200], want[200], extra[200], miss[200];
        key_set(sent, sizeof sent, req_keys, n_inputs, NULL);
        key_set(want, sizeof want, in_keys, n_in, NULL);
        key_set(extra, sizeof extra, req_keys, n_inputs, sent_extra);
        key_set(miss, sizeof miss, in_keys, n_in, missing);
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "input size does not match signature: %d!=%d len({%s}) != len({%s}). "
                       "Sent extra: {%s}. Missing but required: {%s}.", n_inputs, n_in, sent, want, extra, miss);
        goto done;
    }
    for (int i = 0; i < n_in; i++) {
        tfc_dtype want = tfc_saved_model_signature_input(s, i)->dtype, got = tfc_tensor_dtype(in[i]);
        if (want != got) { /* every in[i] is set: the alias check above ran */
            char a[32], b[32];
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expects arg[%d] to be %s but %s is provided", i,
                           tfc_srv_dtype_string(want, a, sizeof a), tfc_srv_dtype_string(got, b, sizeof b));
            goto done;
        }
    }
    /* output filter: aliases of the signature, each at most once */
    for (int f = 0; f < n_filter; f++) {
        int k = -1;
        for (int o = 0; o < n_out && k < 0; o++)
            if (output_filter[f] && !strcmp(out_keys[o], output_filter[f])) k = o;
        if (k < 0) {
            char set[300];
            key_set(set, sizeof set, out_keys, n_out, NULL);
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "output tensor alias not found in signature: %s Outputs expected "
                           "to be in the set {%s}.", output_filter[f] ? output_filter[f] : "", set);
            goto done;
        }
        if (keep[k]) {
            tfc_status_set(st, TFC_INVALID_ARGUMENT, "duplicate output tensor alias: %s", output_filter[f]);
            goto done;
        }
        keep[k] = true;
    }
    /* batched when the server batches and every input has the same leading (batch) dimension */
    srv_batcher *batcher = srv_manager_batcher(v->mgr);
    bool batch = batcher && n_in > 0;
    for (int i = 0; batch && i < n_in; i++)
        batch = tfc_tensor_rank(in[i]) >= 1 && tfc_tensor_dim(in[i], 0) > 0 &&
                tfc_tensor_dim(in[i], 0) == tfc_tensor_dim(in[0], 0);
    if (!(batch ? srv_batcher_run(batcher, v, tfc_saved_model_signature_key(s), in, n_in, out, n_out, st)
                : srv_run_on_copy(v, tfc_saved_model_signature_key(s), in, n_in, out, n_out, st)))
        goto done;
    int n_kept = 0;
    for (int o = 0; o < n_out; o++) n_kept += !n_filter || keep[o];
    tfc_srv_named_tensor *r = tfc_calloc((size_t)n_kept + 1, sizeof *r);
    if (!r) {
        tfc_status_oom(st, "Predict outputs", (size_t)n_kept * sizeof *r);
        goto done;
    }
    for (int o = 0, j = 0; o < n_out; o++)
        if (!n_filter || keep[o]) {
            r[j++] = (tfc_srv_named_tensor){out_keys[o], out[o]};
            out[o] = NULL;
        }
    *outputs = r;
    *n_outputs = n_kept;
    ok = true;
    tfc_status_clear(st);
done:
    for (int o = 0; out && o < n_out; o++) tfc_tensor_unref(out[o]);
    tfc_free(scratch);
    return ok;
}

void tfc_srv_outputs_free(tfc_srv_named_tensor *outputs, int n) {
    for (int i = 0; outputs && i < n; i++) tfc_tensor_unref(outputs[i].tensor);
    tfc_free(outputs);
}

/* ---- classify and regress ------------------------------------------------------------------------------- */

/* The serialized examples as a DT_STRING [n] tensor, each prefixed by the context (protobuf merge). */
static tfc_tensor *examples_tensor(const tfc_srv_examples *ex, tfc_status *st) {
    if (!ex || ex->n <= 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Invalid argument: Input is empty");
        return NULL;
    }
    const size_t n = (size_t)ex->n;
    char **buf = tfc_calloc(n, sizeof *buf);
    size_t *lens = tfc_calloc(n, sizeof *lens);
    tfc_tensor *t = NULL;
    if (!buf || !lens) goto oom;
    for (size_t i = 0; i < n; i++) {
        size_t l = ex->context_len + ex->lens[i];
        if (!(buf[i] = tfc_malloc(l + 1))) goto oom;
        if (ex->context_len) memcpy(buf[i], ex->context, ex->context_len);
        if (ex->lens[i]) memcpy(buf[i] + ex->context_len, ex->examples[i], ex->lens[i]);
        lens[i] = l;
    }
    int64_t dims[1] = {ex->n};
    t = tfc_tensor_from_strings((const char *const *)buf, lens, dims, 1, st);
    goto done;
oom:
    tfc_status_oom(st, "serialized examples", n * sizeof *buf);
done:
    for (size_t i = 0; buf && i < n; i++) tfc_free(buf[i]);
    tfc_free(buf);
    tfc_free(lens);
    return t;
}

/* Index of output `key` of s, or -1. */
static int output_index(const tfc_saved_model_signature *s, const char *key) {
    for (int i = 0; i < tfc_saved_model_signature_num_outputs(s); i++)
        if (!strcmp(tfc_saved_model_signature_output(s, i)->key, key)) return i;
    return -1;
}

const tfc_saved_model_signature *srv_examples_signature(tfc_srv_version *v, const char *signature_name,
                                                       const char *method, tfc_status *st) {
    const tfc_saved_model_signature *s = tfc_srv_signature(v, signature_name, st);
    if (!s) return NULL;
    const char *kind = strcmp(method, CLASSIFY_METHOD) ? "regression" : "classification";
    if (strcmp(tfc_saved_model_signature_method(s), method))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected %s signature method_name to be %s. Was: %s", kind,
                              method, tfc_saved_model_signature_method(s)), NULL;
    const tfc_saved_model_tensor_info *in = tfc_saved_model_signature_input(s, 0);
    if (tfc_saved_model_signature_num_inputs(s) != 1)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected one input Tensor."), NULL;
    if (strcmp(in->key, "inputs"))
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "No %s inputs found in SignatureDef: %s", kind,
                              tfc_saved_model_signature_key(s)), NULL;
    if (in->dtype != TFC_STRING)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "%s input 'inputs' must be DT_STRING, the signature has %s",
                              kind, tfc_dtype_name(in->dtype)), NULL;
    return s;
}

/* The checks both classify and regress make on their signature; runs it on the examples. */
static bool run_examples(tfc_srv_version *v, const char *signature_name, const char *method, const char *kind,
                         const tfc_srv_examples *ex, const tfc_saved_model_signature **sig, tfc_tensor ***outs,
                         tfc_status *st) {
    const tfc_saved_model_signature *s = srv_examples_signature(v, signature_name, method, st);
    if (!s) return false;
    *sig = s;
    tfc_tensor *x = examples_tensor(ex, st);
    if (!x) return false;
    const int n_out = tfc_saved_model_signature_num_outputs(s);
    tfc_tensor **o = tfc_calloc((size_t)n_out + 1, sizeof *o);
    if (!o) {
        tfc_tensor_unref(x);
        return tfc_status_oom(st, kind, 64);
    }
    bool ok = srv_run_on_copy(v, tfc_saved_model_signature_key(s), &x, 1, o, n_out, st);
    tfc_tensor_unref(x);
    if (!ok) {
        tfc_free(o);
        return false;
    }
    *outs = o;
    return true;
}

static void outs_free(tfc_tensor **o, const tfc_saved_model_signature *s) {
    for (int i = 0; o && i < tfc_saved_model_signature_num_outputs(s); i++) tfc_tensor_unref(o[i]);
    tfc_free(o);
}

/* [n, K] (or [n], K = 1) of dtype dt with n = batch; K in *k. */
static bool check_nk(const tfc_tensor *t, tfc_dtype dt, const char *name, int64_t n, int64_t *k, tfc_status *st) {
    char buf[TFC_SHAPE_STR];
    const int r = tfc_tensor_rank(t);
    if (tfc_tensor_dtype(t) != dt)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected %s Tensor of DT_%s. Got: %s", name,
                              dt == TFC_FLOAT ? "FLOAT" : "STRING", tfc_dtype_name(tfc_tensor_dtype(t)));
    if ((r != 1 && r != 2) || tfc_tensor_dim(t, 0) != n)
        return tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected Tensor shape: [batch_size num_classes] but got %s "
                              "(batch_size %lld) for %s", tfc_shape_str(tfc_tensor_shape(t), buf, sizeof buf),
                              (long long)n, name);
    *k = r == 2 ? tfc_tensor_dim(t, 1) : 1;
    return true;
}

bool tfc_srv_classify(tfc_srv_version *v, const char *signature_name, const tfc_srv_examples *ex,
                      tfc_srv_classification *out, tfc_status *st) {
    memset(out, 0, sizeof *out);
    const tfc_saved_model_signature *s = NULL;
    tfc_tensor **o = NULL;
    if (!run_examples(v, signature_name, CLASSIFY_METHOD, "classification", ex, &s, &o, st)) return false;
    const int ic = output_index(s, "classes"), is = output_index(s, "scores");
    int64_t kc = -1, ks = -1;
    bool ok = false;
    if (ic < 0 && is < 0) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected classification signature outputs to contain classes or "
                       "scores.");
        goto done;
    }
    if ((ic >= 0 && !check_nk(o[ic], TFC_STRING, "classes", ex->n, &kc, st)) ||
        (is >= 0 && !check_nk(o[is], TFC_FLOAT, "scores", ex->n, &ks, st)))
        goto done;
    if (ic >= 0 && is >= 0 && kc != ks) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Tensors class and score should match in dim[1]. Got %lld vs. %lld",
                       (long long)kc, (long long)ks);
        goto done;
    }
    out->n_examples = ex->n;
    out->n_classes = ic >= 0 ? kc : ks;
    int64_t total;
    if (!tfc_mul_overflow_i64(out->n_examples, out->n_classes, &total)) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "classification result too large");
        goto done;
    }
    if (ic >= 0) {
        out->labels = tfc_calloc((size_t)total + 1, sizeof *out->labels);
        out->label_lens = tfc_calloc((size_t)total + 1, sizeof *out->label_lens);
        if (!out->labels || !out->label_lens) goto oom;
        for (int64_t i = 0; i < total; i++) {
            size_t len = 0;
            const char *l = tfc_tensor_string(o[ic], i, &len);
            if (!(out->labels[i] = tfc_malloc(len + 1))) goto oom;
            if (len) memcpy(out->labels[i], l, len);
            out->labels[i][len] = 0;
            out->label_lens[i] = len;
        }
    }
    if (is >= 0) {
        if (!(out->scores = tfc_malloc((size_t)total * sizeof(float) + 1))) goto oom;
        if (total) memcpy(out->scores, tfc_tensor_data(o[is]), (size_t)total * sizeof(float));
    }
    ok = true;
    tfc_status_clear(st);
    goto done;
oom:
    tfc_status_oom(st, "classification result", 64);
done:
    if (!ok) tfc_srv_classification_clear(out);
    outs_free(o, s);
    return ok;
}

void tfc_srv_classification_clear(tfc_srv_classification *c) {
    if (!c) return;
    for (int64_t i = 0; c->labels && i < c->n_examples * c->n_classes; i++) tfc_free(c->labels[i]);
    tfc_free(c->labels);
    tfc_free(c->label_lens);
    tfc_free(c->scores);
    memset(c, 0, sizeof *c);
}

float *tfc_srv_regress(tfc_srv_version *v, const char *signature_name, const tfc_srv_examples *ex, int64_t *n,
                       tfc_status *st) {
    *n = 0;
    const tfc_saved_model_signature *s = NULL;
    tfc_tensor **o = NULL;
    if (!run_examples(v, signature_name, REGRESS_METHOD, "regression", ex, &s, &o, st)) return NULL;
    float *r = NULL;
    const int io = output_index(s, "outputs");
    char buf[TFC_SHAPE_STR];
    if (io < 0 || tfc_saved_model_signature_num_outputs(s) != 1) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected one output Tensor 'outputs' in the regression signature %s",
                       tfc_saved_model_signature_key(s));
        goto done;
    }
    const tfc_tensor *t = o[io];
    const int rank = tfc_tensor_rank(t);
    if (tfc_tensor_dtype(t) != TFC_FLOAT) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected output Tensor of DT_FLOAT. Got: %s",
                       tfc_dtype_name(tfc_tensor_dtype(t)));
        goto done;
    }
    if (!(rank == 1 || (rank == 2 && tfc_tensor_dim(t, 1) == 1)) || tfc_tensor_dim(t, 0) != ex->n) {
        tfc_status_set(st, TFC_INVALID_ARGUMENT, "Expected output Tensor shape to be either [batch_size] or "
                       "[batch_size, 1] but got %s", tfc_shape_str(tfc_tensor_shape(t), buf, sizeof buf));
        goto done;
    }
    if (!(r = tfc_malloc((size_t)ex->n * sizeof *r))) {
        tfc_status_oom(st, "regression result", (size_t)ex->n * sizeof *r);
        goto done;
    }
    memcpy(r, tfc_tensor_data(t), (size_t)ex->n * sizeof *r);
    *n = ex->n;
    tfc_status_clear(st);
done:
    outs_free(o, s);
    return r;
}
