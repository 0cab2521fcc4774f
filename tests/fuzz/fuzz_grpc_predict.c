/* TensorFlow Serving's gRPC Predict, the untrusted-bytes half: a serialized PredictRequest decoded into its model
 * spec, output filter and input tensors (tfc_grpc_predict_req_decode, what the server runs before the model),
 * then every decoded tensor encoded back as the response does (AsProtoField) and packed. */
#include "fuzz_util.h"
#include "proto/proto_internal.h"
#include "serving/grpc_server.h"

/* Decoded tensors may not exceed this many bytes together (the server's limit is its message size). */
#define FUZZ_TENSOR_LIMIT ((size_t)64 << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_ctx();
    tfc_status st = TFC_STATUS_INIT;
    tfc_grpc_predict_req r;
    bool ok = tfc_grpc_predict_req_decode(data, size, FUZZ_TENSOR_LIMIT, &r, &st);
    if (!ok && st.code == TFC_OK) abort();
    if (ok) {
        if (!r.model || !r.signature || r.n_inputs < 0 || r.n_filter < 0 || r.version < -1) abort();
        for (int i = 0; i < r.n_filter; i++)
            if (!r.output_filter[i]) abort();
        for (int i = 0; i < r.n_inputs; i++) {
            if (!r.inputs[i].name || !r.inputs[i].tensor) abort();
            /* the inputs are sorted by alias, each alias once */
            if (i && strcmp(r.inputs[i - 1].name, r.inputs[i].name) >= 0) abort();
            tfc_status est = TFC_STATUS_INIT;
            Tensorflow__TensorProto *p = tfc_pb_tensor_to_proto_field(r.inputs[i].tensor, r.inputs[i].name, &est);
            uint8_t *bytes = NULL;
            size_t n = 0;
            if (p && tfc_pb_pack(&p->base, &bytes, &n, "fuzz", &est)) tfc_free(bytes);
            else if (est.code == TFC_OK) abort();
            tfc_pb_free(p);
        }
    }
    tfc_grpc_predict_req_clear(&r);
    return 0;
}
