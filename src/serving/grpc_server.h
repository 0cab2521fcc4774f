/* Internal: TensorFlow Serving's gRPC API (tensorflow.serving.PredictionService and ModelService) over gRPC
 * core's C API, answering from a serving core manager (servable.h). Two parts:
 *   - grpc_server.c:  the transport: a completion-queue server on one port, worker threads, unary calls, message
 *                     size limits, graceful shutdown;
 *   - grpc_service.c: the methods: request bytes -> protobuf-c message -> serving core call -> response bytes,
 *                     with TensorFlow Serving's status codes (gRPC's code numbers are TensorFlow's).
 * Not public: `tfc serve` (tools/tfc_serve.c) starts it next to the REST server. */
#ifndef TFC_SERVING_GRPC_SERVER_H
#define TFC_SERVING_GRPC_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "serving/servable.h"
#include "tfc/status.h"
#include "tfc/tensor.h"

/* ---- methods (grpc_service.c) ---------------------------------------------------------------------------- */

/* Default size limit of one request message (bytes), the REST server's default body limit: TensorFlow Serving
 * accepts up to 2 GiB; tfc bounds the memory one call can hold (`tfc serve --max_request_bytes` sets both). */
#define TFC_GRPC_DEFAULT_MAX_MESSAGE ((size_t)64 << 20)

/* Answers one unary call of `method` (the HTTP/2 path, e.g. "/tensorflow.serving.PredictionService/Predict";
 * method_len bytes, not NUL-terminated) whose request message is req[0..len). On success *out is a new
 * tfc_malloc'd serialized response (*out_len bytes, possibly 0) and true is returned; otherwise false with st
 * holding the code and message to send as the call's status:
 *   UNIMPLEMENTED     an unknown service or method ("Method not found: <path>")
 *   INTERNAL          a request that is not a valid protobuf of the method's request type (what gRPC's C++
 *                     server, and so TensorFlow Serving, answers for undecodable messages)
 *   INVALID_ARGUMENT  tensors TensorFlow's TensorProto decoding rejects ("tensor parsing error: x: ..."), a
 *                     decoded tensor over max_tensor_bytes, and the serving core's argument errors
 *   NOT_FOUND, FAILED_PRECONDITION, ...  the serving core's errors (servable.h), unchanged.
 * max_tensor_bytes bounds each decoded input tensor (0: no bound besides overflow). Thread-safe. */
bool tfc_grpc_service_call(tfc_srv_manager *m, const char *method, size_t method_len, const uint8_t *req,
                           size_t len, size_t max_tensor_bytes, uint8_t **out, size_t *out_len, tfc_status *st);

/* A PredictRequest decoded into the plain values the serving core takes. */
typedef struct tfc_grpc_predict_req {
    void *msg;                     /* the unpacked protobuf-c message, owning the strings below */
    const char *model;             /* model_spec.name ("" when absent) */
    int64_t version;               /* model_spec.version, or -1 */
    const char *label;             /* model_spec.version_label, or NULL */
    const char *signature;         /* model_spec.signature_name ("" when absent) */
    tfc_srv_named_tensor *inputs;  /* n_inputs decoded tensors (one reference each), names borrowed from msg */
    int n_inputs;
    const char **output_filter;    /* n_filter names borrowed from msg */
    int n_filter;
} tfc_grpc_predict_req;

/* Decodes a serialized PredictRequest and every input TensorProto into *out (cleared first; release with
 * tfc_grpc_predict_req_clear, also after a failure). Errors: INTERNAL for bytes that are not a PredictRequest;
 * INVALID_ARGUMENT "tensor parsing error: <alias>: <why>" for an input TensorFlow's decoding rejects (dtype,
 * shape, size over max_tensor_bytes, value count), a duplicate input alias. This is the whole untrusted-bytes
 * path of Predict before the model (what tests/fuzz/fuzz_grpc_predict.c exercises). */
bool tfc_grpc_predict_req_decode(const uint8_t *req, size_t len, size_t max_tensor_bytes, tfc_grpc_predict_req *out,
                                 tfc_status *st);
void tfc_grpc_predict_req_clear(tfc_grpc_predict_req *r); /* NULL-safe; zeroes r */

/* ---- transport (grpc_server.c) --------------------------------------------------------------------------- */

typedef struct tfc_grpc_server tfc_grpc_server;

typedef struct tfc_grpc_opts {
    const char *host;           /* address to bind; NULL: "0.0.0.0" (tensorflow_model_server binds every address) */
    int port;                   /* --port; 0 picks a free port (tfc_grpc_server_port tells which) */
    int threads;                /* worker threads polling the completion queue (calls run on them); 0: 4 */
    size_t max_message_bytes;   /* largest request message; 0: TFC_GRPC_DEFAULT_MAX_MESSAGE. Larger ones get gRPC's
                                 * RESOURCE_EXHAUSTED before any byte is decoded. Also bounds decoded tensors. */
} tfc_grpc_opts;

/* Starts serving m's models over gRPC on host:port: binds (insecure HTTP/2, no port sharing), starts the worker
 * threads, returns. m must outlive the server. Errors: UNAVAILABLE when the port cannot be bound (in use, bad
 * host), INVALID_ARGUMENT for a port outside 0..65535 or negative threads, RESOURCE_EXHAUSTED. */
tfc_grpc_server *tfc_grpc_server_start(tfc_srv_manager *m, const tfc_grpc_opts *opts, tfc_status *st);
/* The port the server listens on. */
int tfc_grpc_server_port(const tfc_grpc_server *s);
/* Graceful shutdown, then frees s: stops accepting calls, lets in-flight calls finish for up to grace_seconds
 * (then cancels the rest: clients see CANCELLED), joins the threads. NULL-safe. */
void tfc_grpc_server_stop(tfc_grpc_server *s, double grace_seconds);

#endif
