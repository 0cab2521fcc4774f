/* Internal: the serving core that every front end (REST in rest.c, gRPC) calls. It knows nothing of JSON or
 * protobuf requests: front ends turn their wire format into the plain C values below and back.
 *
 * The pieces, in TensorFlow Serving's terms:
 *   - model config:   the text-proto `model_config_list` (ModelServerConfig) parsed into tfc_srv_config;
 *   - model manager:  AspiredVersionsManager + FileSystemStoragePathSource: for every configured model the
 *                     directories <base_path>/<version>/ (a version is a non-negative integer name) are scanned at
 *                     start and every poll; the versions the model_version_policy wants are loaded, the others
 *                     unloaded. A new version is loaded before an old one is retired, so a model never lacks an
 *                     AVAILABLE version during a swap; a version that fails to load is kept in the status (state
 *                     END with its error), the previous one keeps serving, and it is tried again at the next
 *                     scans (at most 5 more times, tensorflow_model_server's --max_num_load_retries default);
 *   - servable handle: tfc_srv_acquire gives a refcounted, loaded version (ServableHandle); a retired version is
 *                     freed only when the last handle is released, so in-flight requests always finish;
 *   - calls:          status (GetModelStatus), metadata (GetModelMetadata's SignatureDefMap), predict, classify and
 *                     regress with TensorFlow Serving's checks, error codes and messages.
 *
 * Threads: every function here may be called from any thread at once. A tfc_ctx (and a SavedModel loaded into
 * it) is used by one thread at a time, so a loaded version holds `instances` independent copies, each a context
 * with the SavedModel loaded into it; a call takes a free copy (waiting while all are busy) and gives it back.
 * Tensors passed in and out are plain refcounted tensors, not tied to any context. */
#ifndef TFC_SERVING_SERVABLE_H
#define TFC_SERVING_SERVABLE_H

#include <stddef.h>
#include <stdint.h>

#include "tfc/saved_model.h"
#include "tfc/serving.h"
#include "tfc/status.h"
#include "tfc/tensor.h"

/* ---- model config (model_server_config.proto's ModelConfigList, text format) ---------------------------- */

typedef enum {
    TFC_SRV_POLICY_LATEST = 0,   /* model_version_policy { latest { num_versions: N } } (the default, N = 1) */
    TFC_SRV_POLICY_ALL = 1,      /* model_version_policy { all {} } */
    TFC_SRV_POLICY_SPECIFIC = 2, /* model_version_policy { specific { versions: 1 versions: 2 } } */
} tfc_srv_policy;

typedef struct tfc_srv_label {
    char *label;     /* version_labels key ("stable") */
    int64_t version; /* version_labels value */
} tfc_srv_label;

/* One `config { ... }` entry (ModelConfig). Strings are owned by the config. */
typedef struct tfc_srv_model_config {
    char *name;          /* name: the model's name in requests */
    char *base_path;     /* base_path: the folder holding <version>/ subfolders */
    char *platform;      /* model_platform; only "tensorflow" (or empty) is served */
    tfc_srv_policy policy;
    int64_t num_versions;   /* latest: how many of the highest versions are served (>= 1) */
    int64_t *versions;      /* specific: the versions to serve */
    int n_versions;
    tfc_srv_label *labels;  /* version_labels */
    int n_labels;
} tfc_srv_model_config;

typedef struct tfc_srv_config {
    tfc_srv_model_config *models;
    int n_models;
} tfc_srv_config;

/* Parses a ModelServerConfig text proto holding `model_config_list { config { ... } ... }` (the content of
 * --model_config_file), as protobuf's TextFormat: comments (#), either quote, `field: value` and `field { }` /
 * `field < >`, optional ';' / ',' separators; the fields name, base_path, model_platform, model_version_policy
 * (latest.num_versions, all, specific.versions), version_labels { key value } (also `version_labels: {...}`),
 * and logging_config / model_type (read and ignored). INVALID_ARGUMENT naming line and column for syntax errors,
 * unknown fields, duplicate model names, a config without name or base_path, a label used twice;
 * UNIMPLEMENTED for custom_model_config. *out is cleared first; free it with tfc_srv_config_clear. */
bool tfc_srv_config_parse(const char *text, size_t len, tfc_srv_config *out, tfc_status *st);
/* A config of one model (the --model_name / --model_base_path flags, policy latest 1). */
bool tfc_srv_config_single(const char *name, const char *base_path, tfc_srv_config *out, tfc_status *st);
void tfc_srv_config_clear(tfc_srv_config *c); /* frees what c owns and zeroes it; NULL-safe */
/* Parses a MonitoringConfig text proto (--monitoring_config_file):
 *   prometheus_config { enable: true path: "/monitoring/prometheus/metrics" }
 * *enable and path (default "/monitoring/prometheus/metrics" when not given; must start with '/') are set.
 * INVALID_ARGUMENT naming line and column otherwise. */
bool tfc_srv_monitoring_parse(const char *text, size_t len, bool *enable, char *path, size_t path_size,
                              tfc_status *st);

/* ---- model manager -------------------------------------------------------------------------------------- */

typedef struct tfc_srv_manager tfc_srv_manager;
typedef struct tfc_srv_version tfc_srv_version;

/* --enable_batching with --batching_parameters_file (TensorFlow Serving's BatchingParameters; zero: its default). */
typedef struct tfc_srv_batching_opts {
    int64_t max_batch_size;        /* rows per batch (default 1000); a larger request is INVALID_ARGUMENT */
    int64_t batch_timeout_micros;  /* how long the oldest request waits for the batch to fill (default 0) */
    int64_t max_enqueued_batches;  /* queue bound, in batches of max_batch_size rows (default 10); UNAVAILABLE
                                    * "The batch scheduling queue ... is full" beyond */
    int num_batch_threads;         /* batches run at once (default: cores) */
    int64_t allowed_batch_sizes[64]; /* increasing; the last must equal max_batch_size; a batch is padded up */
    int n_allowed;
    /* called after every batch run with the model's name, the real rows and the padded size (metrics) */
    void (*on_batch)(void *user, const char *model, int64_t size, int64_t padded);
    void *user;
} tfc_srv_batching_opts;

/* Parses a BatchingParameters text proto (max_batch_size { value: 128 } batch_timeout_micros { value: 1000 }
 * max_enqueued_batches { value: 100 } num_batch_threads { value: 4 } allowed_batch_sizes: 32 ...; the scalar
 * form `max_batch_size: 128` is accepted too; pad_variable_length_inputs and thread_pool_name are read and
 * ignored). INVALID_ARGUMENT naming line and column for syntax errors, unknown fields, values out of range,
 * allowed_batch_sizes not increasing or whose last entry differs from max_batch_size. *out is zeroed first. */
bool tfc_srv_batching_parse(const char *text, size_t len, tfc_srv_batching_opts *out, tfc_status *st);

typedef struct tfc_srv_manager_opts {
    const tfc_srv_batching_opts *batching; /* NULL: no batching; predict calls of every model go through it */
    int instances;              /* copies of each loaded version (concurrent calls); 0: min(cores, 4) */
    int intra_op_threads;       /* each copy's context's intra-op threads; 0: max(1, cores / instances), or
                                 * every core when batching (a batch is run by one copy) */
    double poll_wait_seconds;   /* --file_system_poll_wait_seconds: rescans by a background thread; <= 0: none */
} tfc_srv_manager_opts;

/* A manager serving the models of cfg (copied). Scans every base_path and loads what the policies want before
 * returning (load failures do not fail this call; they are in the model status). Then, when poll_wait_seconds
 * > 0, a thread rescans every poll_wait_seconds. INVALID_ARGUMENT for a bad option; RESOURCE_EXHAUSTED. */
tfc_srv_manager *tfc_srv_manager_new(const tfc_srv_config *cfg, const tfc_srv_manager_opts *opts, tfc_status *st);
/* Rescans every model's base_path now (what the polling thread does): loads new versions the policy wants,
 * then retires versions it no longer wants (not the last AVAILABLE one of a model whose wanted versions all
 * failed). Loads run on the calling thread without holding the manager's lock, so requests keep being served. */
void tfc_srv_manager_poll(tfc_srv_manager *m);
/* Stops the polling thread, retires every version and waits until every handle has been released, then frees.
 * NULL-safe. No other call on m may start once this has begun. */
void tfc_srv_manager_free(tfc_srv_manager *m);
/* The number of configured models, and model i's name (borrowed), for listing. */
int tfc_srv_manager_num_models(const tfc_srv_manager *m);
const char *tfc_srv_manager_model_name(const tfc_srv_manager *m, int i);

/* A loaded version to call (ServableHandle), from ModelSpec's name + version or version_label:
 *   version >= 0 and label == NULL: exactly that version;  label != NULL (version < 0): the version the model
 *   config maps the label to;  neither: the latest (highest) AVAILABLE version.
 * Errors, with TensorFlow Serving's messages:
 *   NOT_FOUND         "Servable not found for request: Latest(name)" / "Specific(name, N)" (unknown model, version
 *                     not loaded, no AVAILABLE version yet)
 *   INVALID_ARGUMENT  "Unrecognized servable version label: L"; both a version and a label given
 * The handle must be released with tfc_srv_release (on any thread). */
tfc_srv_version *tfc_srv_acquire(tfc_srv_manager *m, const char *name, int64_t version, const char *label,
                                 tfc_status *st);
void tfc_srv_release(tfc_srv_version *v); /* NULL-safe */
const char *tfc_srv_version_model(const tfc_srv_version *v); /* the model's name (borrowed from v) */
int64_t tfc_srv_version_number(const tfc_srv_version *v);

/* ---- deadlines (RunOptions.timeout_in_ms) --------------------------------------------------------------- */

/* Bounds the calls this thread makes next (predict, classify, regress, multi-inference) to timeout_ms from now;
 * 0 (or negative) lifts the bound. A bounded call that waits for a free copy of the model or in the batch queue
 * past its deadline, or whose run ends after it, fails with DEADLINE_EXCEEDED "Timed out waiting for
 * notification" (TensorFlow's session message for an expired RunOptions.timeout_in_ms); a run already started
 * is not interrupted, its result is dropped. Front ends set it per request: REST from --rest_api_timeout_in_ms,
 * gRPC from the call's deadline. */
void tfc_srv_set_deadline(int64_t timeout_ms);

/* ---- status (get_model_status.proto) -------------------------------------------------------------------- */

/* ModelVersionStatus.State (numbers as the proto's). */
typedef enum {
    TFC_SRV_UNKNOWN = 0,
    TFC_SRV_START = 10,
    TFC_SRV_LOADING = 20,
    TFC_SRV_AVAILABLE = 30,
    TFC_SRV_UNLOADING = 40,
    TFC_SRV_END = 50,
} tfc_srv_state;

typedef struct tfc_srv_version_status {
    int64_t version;
    tfc_srv_state state;
    tfc_status status; /* OK, or why the version failed to load */
} tfc_srv_version_status;

/* TensorFlow Serving's state name ("AVAILABLE"), or "UNKNOWN". */
const char *tfc_srv_state_name(tfc_srv_state s);

/* GetModelStatus: the status of every version of model `name` the manager knows (loaded, loading, failed,
 * retired), in increasing version order, or of the one version / label asked for (same selection rules and
 * errors as tfc_srv_acquire, except that any known version is reported, not only AVAILABLE ones; an unknown
 * version is NOT_FOUND "Could not find version N of model name"; an unknown model NOT_FOUND "Could not find any
 * versions of model name"). Returns the count and *out (caller frees with tfc_free), or -1 with st set. */
int tfc_srv_model_status(tfc_srv_manager *m, const char *name, int64_t version, const char *label,
                         tfc_srv_version_status **out, tfc_status *st);

/* TensorFlow's DataTypeString of dt ("float", "double", "int32", "string"; written into buf), from the enum name
 * (tfc_pb_dtype_enum_name). */
const char *tfc_srv_dtype_string(int dt, char *buf, size_t size);

/* ---- calls on a loaded version -------------------------------------------------------------------------- */

/* GetModelMetadata's "signature_def" metadata: the serialized tensorflow.serving.SignatureDefMap (every
 * SignatureDef of the served MetaGraphDef, __saved_model_init_op included), borrowed from v (*len bytes). */
const void *tfc_srv_signature_def_map(const tfc_srv_version *v, size_t *len);

/* The signature `name` ("" or NULL: "serving_default") of v's model, borrowed while v is held: front ends read
 * its input dtypes to convert a request (tfc_saved_model_signature_input ...). NULL with FAILED_PRECONDITION
 * "Serving signature key \"name\" not found." otherwise. */
const tfc_saved_model_signature *tfc_srv_signature(tfc_srv_version *v, const char *name, tfc_status *st);

/* A named tensor of a request or response: an input/output alias of the signature and a tensor reference. */
typedef struct tfc_srv_named_tensor {
    const char *name;
    tfc_tensor *tensor;
} tfc_srv_named_tensor;

/* Predict: runs signature `signature_name` ("" / NULL: serving_default) on inputs (one per signature input, any
 * order; the tensors are borrowed), returning in *outputs (a new array of *n_outputs, in signature key order,
 * free with tfc_srv_outputs_free; names borrowed from v) the outputs named in output_filter (n_filter aliases),
 * or all outputs when n_filter is 0. Errors (TensorFlow Serving's predict_util checks):
 *   FAILED_PRECONDITION  unknown signature
 *   INVALID_ARGUMENT     "input size does not match signature: 1!=2 len({x}) != len({x,y}). Sent extra: {}.
 *                        Missing but required: {y}."; a duplicate input; "Expects arg[i] to be float but double
 *                        is provided" for a dtype that differs from the signature's; a shape the signature's
 *                        known dims reject; "output tensor alias not found in signature: a Outputs expected to be
 *                        in the set {b,c}."; "duplicate output tensor alias: a"
 *   other codes          from running the model (its ops' errors) */
bool tfc_srv_predict(tfc_srv_version *v, const char *signature_name, const tfc_srv_named_tensor *inputs,
                     int n_inputs, const char *const *output_filter, int n_filter, tfc_srv_named_tensor **outputs,
                     int *n_outputs, tfc_status *st);
void tfc_srv_outputs_free(tfc_srv_named_tensor *outputs, int n); /* unrefs the tensors; NULL-safe */

/* The Input of a Classify / Regress request: n serialized tf.Example messages (ExampleList), optionally with a
 * serialized context Example (ExampleListWithContext) whose features are merged into every example (protobuf
 * merge: each example's own features win). Bytes are borrowed. */
typedef struct tfc_srv_examples {
    const char *const *examples;
    const size_t *lens;
    int64_t n;
    const char *context; /* NULL: no context */
    size_t context_len;
} tfc_srv_examples;

/* ClassificationResult: n_examples x n_classes (label, score) pairs, row-major. labels is NULL when the
 * signature has no `classes` output (labels print as ""), scores NULL when it has no `scores` output. */
typedef struct tfc_srv_classification {
    int64_t n_examples, n_classes;
    char **labels;   /* n_examples * n_classes NUL-terminated strings (lens in label_lens), or NULL */
    size_t *label_lens;
    float *scores;   /* n_examples * n_classes, or NULL */
} tfc_srv_classification;

/* Classify with a classification signature (TensorFlow Serving's classifier): method_name
 * "tensorflow/serving/classify", one DT_STRING input "inputs", outputs "classes" (DT_STRING) and/or "scores"
 * (DT_FLOAT), each [n, K] (or [n], read as K = 1). The examples feed "inputs" as a DT_STRING [n] tensor.
 * Errors: FAILED_PRECONDITION unknown signature; INVALID_ARGUMENT "Expected classification signature
 * method_name to be tensorflow/serving/classify. Was: ...", missing inputs/outputs, no examples ("Invalid
 * argument: Input is empty"), output shapes or dtypes other than the above, naming the tensor and shape;
 * the model's errors. *out is filled on success; free with tfc_srv_classification_clear. */
bool tfc_srv_classify(tfc_srv_version *v, const char *signature_name, const tfc_srv_examples *ex,
                      tfc_srv_classification *out, tfc_status *st);
void tfc_srv_classification_clear(tfc_srv_classification *c); /* NULL-safe; zeroes c */

/* Regress with a regression signature: method_name "tensorflow/serving/regress", one DT_STRING input "inputs",
 * one DT_FLOAT output "outputs" of shape [n] or [n, 1]. Returns a new array of n values (tfc_free) in
 * *values, or NULL with errors as tfc_srv_classify's. */
float *tfc_srv_regress(tfc_srv_version *v, const char *signature_name, const tfc_srv_examples *ex, int64_t *n,
                       tfc_status *st);

/* ---- MultiInference (inference.proto) ------------------------------------------------------------------- */

/* One InferenceTask: its ModelSpec's name and signature_name, and the method_name. Strings borrowed. */
typedef struct tfc_srv_inference_task {
    const char *model;     /* model_spec.name */
    const char *signature; /* model_spec.signature_name ("" / NULL: serving_default) */
    const char *method;    /* "tensorflow/serving/classify" or "tensorflow/serving/regress" */
} tfc_srv_inference_task;

/* One InferenceResult: a classification (is_regression false) or the n_values regression values. */
typedef struct tfc_srv_inference_result {
    bool is_regression;
    tfc_srv_classification classification;
    float *values;
    int64_t n_values;
} tfc_srv_inference_result;

/* MultiInference as TensorFlow Serving's TensorFlowMultiInferenceRunner: v is the servable of the first task's
 * ModelSpec (the front end acquires it, NOT_FOUND first). Every task is checked before anything runs, in this
 * order per task, with TensorFlow Serving's messages:
 *   INVALID_ARGUMENT  "Found ModelSpec with an empty model name."; "All ModelSpecs in a MultiInferenceRequest must
 *                     access the same model name."; "Duplicate evaluation of signature: S"; "Requested signature
 *                     not found in model graph: S"; the classify / regress signature checks (tfc_srv_classify);
 *                     "Input tensor must be the same for all Signatures."
 *   UNIMPLEMENTED     "Unsupported signature method_name: M"
 * then each task runs as tfc_srv_classify / tfc_srv_regress would on the same examples (their errors, e.g.
 * "Input is empty"). *results gets a new array of n_tasks results in task order (tfc_srv_inference_results_free). */
bool tfc_srv_multi_inference(tfc_srv_version *v, const tfc_srv_inference_task *tasks, int n_tasks,
                             const tfc_srv_examples *ex, tfc_srv_inference_result **results, tfc_status *st);
void tfc_srv_inference_results_free(tfc_srv_inference_result *r, int n); /* NULL-safe */

#endif
