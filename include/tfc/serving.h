/* tfc — a TensorFlow Serving compatible model server (tensorflow_model_server) to embed: it serves SavedModel
 * versions (<model_base_path>/<version>/) over TensorFlow Serving's REST API (GET /v1/models/NAME[/versions/N |
 * /labels/L][/metadata], POST ...:predict | :classify | :regress; specs/serving_rest.md) and its gRPC API
 * (PredictionService Predict / Classify / Regress / GetModelMetadata, ModelService GetModelStatus), from one set
 * of loaded models; picks up new versions while serving, and stops gracefully. `tfc serve` is this API behind tensorflow_model_server's flags. */
#ifndef TFC_SERVING_H
#define TFC_SERVING_H

#include "tfc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tfc_model_server tfc_model_server;

/* Server options: the fields are tensorflow_model_server's flags; zero / NULL means the flag's default. */
typedef struct tfc_model_server_opts {
    const char *model_name;        /* --model_name (default "default"), with model_base_path */
    const char *model_base_path;   /* --model_base_path: one model, latest version */
    const char *model_config_file; /* --model_config_file: a ModelServerConfig text proto (instead of the two above) */
    int port;                      /* --port, the gRPC port (default 8500); -1: no gRPC listener; 0 is not "any
                                    * port", use grpc_any_port */
    bool grpc_any_port;            /* bind an ephemeral gRPC port (tfc_model_server_grpc_port tells which) */
    int rest_api_port;             /* --rest_api_port (default 8501); -1: no REST listener; 0 is not "any port",
                                    * use rest_api_any_port */
    bool rest_api_any_port;        /* bind an ephemeral port (tfc_model_server_rest_port tells which) */
    const char *rest_api_host;     /* address to bind (default "0.0.0.0", all interfaces) */
    int rest_api_num_threads;      /* --rest_api_num_threads (default 4 x cores) */
    int64_t rest_api_timeout_in_ms; /* --rest_api_timeout_in_ms (default 30000): a REST request's deadline: a
                                     * predict / classify / regress not answered by then gets HTTP 504 with
                                     * {"error": "Timed out waiting for notification"} (DEADLINE_EXCEEDED, as
                                     * TensorFlow Serving's RunOptions.timeout_in_ms); a connection idle this long
                                     * (a slow client) is closed (rounded up to whole seconds) */
    double file_system_poll_wait_seconds; /* --file_system_poll_wait_seconds (0: the default 1); negative: the base
                                           * paths are scanned once at start (tensorflow_model_server's 0) */
    bool enable_batching;          /* --enable_batching: predict requests are batched across clients */
    const char *batching_parameters_file; /* --batching_parameters_file: a BatchingParameters text proto */
    const char *monitoring_config_file; /* --monitoring_config_file: prometheus_config { enable: true path: "..." } */
    size_t max_request_bytes;      /* request bodies above this get 413-style RESOURCE_EXHAUSTED (default 64 MiB) */
    int model_instances;           /* copies of each loaded model run concurrently (default min(cores, 4)) */
} tfc_model_server_opts;

/* Loads the models (every policy-wanted version; a version that fails to load is reported in its status and does
 * not fail the start) and starts the REST and gRPC listeners and the file system poller. Errors:
 *   INVALID_ARGUMENT  no model given, both a config file and a base path, a malformed config file or monitoring
 *                     config (naming line and column), bad numbers
 *   NOT_FOUND         the config file is missing
 *   UNAVAILABLE       the REST or gRPC port cannot be bound (in use, no permission)
 * Caller owns the server (tfc_model_server_stop). */
TFC_API tfc_model_server *tfc_model_server_start(const tfc_model_server_opts *opts, tfc_status *st);
/* The bound REST port (the asked one, or the ephemeral one with rest_api_any_port); -1 when none. */
TFC_API int tfc_model_server_rest_port(const tfc_model_server *s);
/* The bound gRPC port (the asked one, or the ephemeral one with grpc_any_port); -1 when none. */
TFC_API int tfc_model_server_grpc_port(const tfc_model_server *s);
/* Graceful stop: stops accepting connections (gRPC first, whose in-flight calls get 30 s before they are
 * cancelled, then REST), lets in-flight requests finish, unloads the models and frees s.
 * NULL-safe. */
TFC_API void tfc_model_server_stop(tfc_model_server *s);

#ifdef __cplusplus
}
#endif
#endif
