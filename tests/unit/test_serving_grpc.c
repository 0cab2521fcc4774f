/* The gRPC front end (src/serving/grpc_server.h) through gRPC core's client API: Predict on a tfc-saved model
 * (y = x * 2, z = row sums) gives the right values, GetModelStatus reports AVAILABLE, undecodable bytes are
 * INTERNAL, unknown methods UNIMPLEMENTED, a message over the size limit RESOURCE_EXHAUSTED, giant dims
 * INVALID_ARGUMENT; 8 client threads at once all get right answers; the server stops with calls in flight and
 * frees everything (the ASan build checks leaks). The Python conformance test covers the official client. */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "eager/context_internal.h"
#include "proto/get_model_status.pb-c.h"
#include "proto/predict.pb-c.h"
#include "proto/proto_internal.h"
#include "serving/grpc_server.h"
#include "tfc_test.h"

static tfc_ctx *ctx;
static char base[300];
static grpc_channel *channel;

#define PREDICT "/tensorflow.serving.PredictionService/Predict"

static int fn_double(tfc_ctx *c, tfc_tensor *const *in, int n, tfc_tensor **out, int max_out, void *user,
                     tfc_status *st) {
    tfc_tensor *two = tfc_scalar_f32(2.0f, st), *ax1 = two ? tfc_scalar_i32(1, st) : NULL;
    if (!ax1 || !tfc_scope_track(c, two, st) || !tfc_scope_track(c, ax1, st)) return -1;
    if (!(out[0] = tfc_emit(c, "Mul", (tfc_tensor *[]){in[0], two}, 2, NULL, 0, st)) ||
        !(out[1] = tfc_emit(c, "Sum", (tfc_tensor *[]){in[0], ax1}, 2, NULL, 0, st)))
        return -1;
    return 2;
}

static void save_model(void) {
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_scope_begin(ctx, &st));
    tfc_function *f = tfc_function_new(ctx, fn_double, NULL, &(tfc_function_opts){.name = "double"}, &st);
    REQUIRE(f);
    tfc_concrete_function *cf =
        tfc_function_get_concrete_function(f, (tfc_tensor_spec[]){{TFC_FLOAT, {2, {-1, 3}}}}, 1, &st);
    REQUIRE(cf);
    tfc_saved_model_signature_spec spec = {.key = "serving_default", .function = cf,
                                           .input_keys = (const char *[]){"x"},
                                           .output_keys = (const char *[]){"y", "z"}};
    char dir[400];
    snprintf(dir, sizeof dir, "%s/1", base);
    CHECK(tfc_saved_model_save(ctx, dir, &spec, 1, &st));
    CHECK_OK(&st);
    tfc_function_free(f);
    tfc_scope_end(ctx);
}

/* One unary call: returns the status code; *resp (tfc_malloc'd) gets the response message on OK. */
static int call(const char *method, const uint8_t *req, size_t len, uint8_t **resp, size_t *resp_len, char *details,
                size_t details_size) {
    grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
    gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_REALTIME), gpr_time_from_seconds(60, GPR_TIMESPAN));
    grpc_slice path = grpc_slice_from_copied_string(method);
    grpc_call *c = grpc_channel_create_call(channel, NULL, GRPC_PROPAGATE_DEFAULTS, cq, path, NULL, deadline, NULL);
    grpc_slice body = grpc_slice_from_copied_buffer((const char *)req, len);
    grpc_byte_buffer *send = grpc_raw_byte_buffer_create(&body, 1), *recv = NULL;
    grpc_metadata_array initial_md, trailing_md;
    grpc_metadata_array_init(&initial_md);
    grpc_metadata_array_init(&trailing_md);
    grpc_status_code code = GRPC_STATUS_UNKNOWN;
    grpc_slice status_details;
    grpc_op ops[6];
    memset(ops, 0, sizeof ops);
    ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
    ops[1].op = GRPC_OP_SEND_MESSAGE;
    ops[1].data.send_message.send_message = send;
    ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
    ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
    ops[3].data.recv_initial_metadata.recv_initial_metadata = &initial_md;
    ops[4].op = GRPC_OP_RECV_MESSAGE;
    ops[4].data.recv_message.recv_message = &recv;
    ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
    ops[5].data.recv_status_on_client.trailing_metadata = &trailing_md;
    ops[5].data.recv_status_on_client.status = &code;
    ops[5].data.recv_status_on_client.status_details = &status_details;
    REQUIRE(grpc_call_start_batch(c, ops, 6, (void *)1, NULL) == GRPC_CALL_OK);
    grpc_event ev = grpc_completion_queue_pluck(cq, (void *)1, deadline, NULL);
    CHECK(ev.type == GRPC_OP_COMPLETE);
    if (details) snprintf(details, details_size, "%.*s", (int)GRPC_SLICE_LENGTH(status_details),
                          (const char *)GRPC_SLICE_START_PTR(status_details));
    if (resp) {
        *resp = NULL;
        *resp_len = 0;
        if (recv) {
            grpc_byte_buffer_reader r;
            REQUIRE(grpc_byte_buffer_reader_init(&r, recv));
            grpc_slice all = grpc_byte_buffer_reader_readall(&r);
            grpc_byte_buffer_reader_destroy(&r);
            *resp_len = GRPC_SLICE_LENGTH(all);
            *resp = tfc_malloc(*resp_len + 1);
            memcpy(*resp, GRPC_SLICE_START_PTR(all), *resp_len);
            grpc_slice_unref(all);
        }
    }
    if (recv) grpc_byte_buffer_destroy(recv);
    grpc_byte_buffer_destroy(send);
    grpc_slice_unref(body);
    grpc_slice_unref(path);
    grpc_slice_unref(status_details);
    grpc_metadata_array_destroy(&initial_md);
    grpc_metadata_array_destroy(&trailing_md);
    grpc_call_unref(c);
    grpc_completion_queue_shutdown(cq);
    while (grpc_completion_queue_pluck(cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type != GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(cq);
    return (int)code;
}

/* A serialized PredictRequest for model "m" with x = [rows, 3] of value base + i (or the given dims). */
static uint8_t *predict_request(int64_t rows, float first, const int64_t *dims, int rank, size_t *len) {
    tfc_status st = TFC_STATUS_INIT;
    int64_t shape[2] = {rows, 3};
    tfc_tensor *x = tfc_tensor_new(TFC_FLOAT, dims ? dims : shape, dims ? 0 : 2, &st); /* scalar for odd dims */
    REQUIRE(x);
    if (!dims) {
        float *d = tfc_tensor_mutable_data(x);
        for (int64_t i = 0; i < rows * 3; i++) d[i] = first + (float)i;
    }
    Tensorflow__TensorProto *tp = tfc_pb_tensor_to_proto(x, "x", &st);
    REQUIRE(tp);
    if (dims) { /* replace the shape: a giant one, with one float_val to fill it */
        tfc_pb_free(tp->tensor_shape);
        tfc_shape s = {.rank = rank};
        for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
        tp->tensor_shape = tfc_pb_shape_to_proto(&s, &st);
    }
    Tensorflow__Serving__PredictRequest__InputsEntry entry = TENSORFLOW__SERVING__PREDICT_REQUEST__INPUTS_ENTRY__INIT,
                                                     *entries[1] = {&entry};
    entry.key = "x";
    entry.value = tp;
    Tensorflow__Serving__ModelSpec spec = TENSORFLOW__SERVING__MODEL_SPEC__INIT;
    spec.name = "m";
    Tensorflow__Serving__PredictRequest req = TENSORFLOW__SERVING__PREDICT_REQUEST__INIT;
    req.model_spec = &spec;
    req.n_inputs = 1;
    req.inputs = entries;
    uint8_t *out = NULL;
    REQUIRE(tfc_pb_pack(&req.base, &out, len, "req", &st));
    tfc_pb_free(tp);
    tfc_tensor_unref(x);
    return out;
}

/* Predicts rows x 3 values starting at `first`; true when y = 2x and z = row sums. */
static bool predict_ok(int64_t rows, float first) {
    size_t len = 0, rlen = 0;
    uint8_t *req = predict_request(rows, first, NULL, 0, &len), *resp = NULL;
    char details[300];
    int code = call(PREDICT, req, len, &resp, &rlen, details, sizeof details);
    tfc_free(req);
    if (code != 0) {
        fprintf(stderr, "Predict: code %d: %s\n", code, details);
        return false;
    }
    Tensorflow__Serving__PredictResponse *r =
        (Tensorflow__Serving__PredictResponse *)tfc_pb_unpack(&tensorflow__serving__predict_response__descriptor,
                                                              resp, rlen, 0, "resp", &(tfc_status)TFC_STATUS_INIT);
    tfc_free(resp);
    bool ok = r && r->n_outputs == 2 && r->model_spec && !strcmp(r->model_spec->name, "m") &&
              r->model_spec->version && r->model_spec->version->value == 1 &&
              !strcmp(r->model_spec->signature_name, "serving_default");
    for (size_t i = 0; ok && i < r->n_outputs; i++) {
        const Tensorflow__TensorProto *t = r->outputs[i]->value;
        bool is_y = !strcmp(r->outputs[i]->key, "y");
        ok = t && t->tensor_content.len == 0 && t->n_float_val == (size_t)(is_y ? rows * 3 : rows);
        for (int64_t k = 0; ok && k < (is_y ? rows * 3 : rows); k++) {
            float want = is_y ? 2 * (first + (float)k) : 3 * first + (float)(9 * k + 3);
            ok = t->float_val[k] == want;
        }
    }
    tfc_pb_free(r);
    return ok;
}

static void test_calls(void) {
    CHECK(predict_ok(1, 0.5f));
    CHECK(predict_ok(4, -3.0f));
    char details[300];
    /* GetModelStatus: version 1 AVAILABLE */
    Tensorflow__Serving__ModelSpec spec = TENSORFLOW__SERVING__MODEL_SPEC__INIT;
    spec.name = "m";
    Tensorflow__Serving__GetModelStatusRequest sreq = TENSORFLOW__SERVING__GET_MODEL_STATUS_REQUEST__INIT;
    sreq.model_spec = &spec;
    uint8_t *req = NULL, *resp = NULL;
    size_t len = 0, rlen = 0;
    tfc_status st = TFC_STATUS_INIT;
    REQUIRE(tfc_pb_pack(&sreq.base, &req, &len, "req", &st));
    CHECK(call("/tensorflow.serving.ModelService/GetModelStatus", req, len, &resp, &rlen, details, sizeof details) == 0);
    tfc_free(req);
    Tensorflow__Serving__GetModelStatusResponse *sr = (Tensorflow__Serving__GetModelStatusResponse *)tfc_pb_unpack(
        &tensorflow__serving__get_model_status_response__descriptor, resp, rlen, 0, "resp", &st);
    CHECK(sr && sr->n_model_version_status == 1 && sr->model_version_status[0]->version == 1 &&
          sr->model_version_status[0]->state == TENSORFLOW__SERVING__MODEL_VERSION_STATUS__STATE__AVAILABLE);
    tfc_pb_free(sr);
    tfc_free(resp);
    /* bytes that are not a protobuf; unknown methods */
    CHECK(call(PREDICT, (const uint8_t *)"\xff\xff\xff", 3, NULL, NULL, details, sizeof details) == GRPC_STATUS_INTERNAL);
    CHECK(strstr(details, "PredictRequest") != NULL);
    CHECK(call("/tensorflow.serving.PredictionService/Nope", (const uint8_t *)"", 0, NULL, NULL, details,
               sizeof details) == GRPC_STATUS_UNIMPLEMENTED);
    CHECK(strstr(details, "Nope") != NULL);
    CHECK(call("/x.Y/Z", (const uint8_t *)"", 0, NULL, NULL, NULL, 0) == GRPC_STATUS_UNIMPLEMENTED);
    /* giant dims: past int64, and a few bytes asking for 4 TB */
    const int64_t huge[][2] = {{INT64_C(1) << 40, INT64_C(1) << 40}, {INT64_C(1) << 40, 1}};
    for (int i = 0; i < 2; i++) {
        req = predict_request(0, 0, huge[i], 2, &len);
        CHECK(call(PREDICT, req, len, NULL, NULL, details, sizeof details) == GRPC_STATUS_INVALID_ARGUMENT);
        CHECK(strstr(details, "tensor parsing error: x") != NULL);
        tfc_free(req);
    }
    /* over the message size limit (4096 bytes in this server) */
    req = predict_request(400, 1.0f, NULL, 0, &len);
    CHECK(len > 4096);
    CHECK(call(PREDICT, req, len, NULL, NULL, details, sizeof details) == GRPC_STATUS_RESOURCE_EXHAUSTED);
    tfc_free(req);
    CHECK(predict_ok(2, 7.0f)); /* still serving */
}

static void *client(void *arg) {
    int *failures = arg;
    for (int i = 0; i < 10; i++) {
        if (i % 3 == 2) {
            if (call(PREDICT, (const uint8_t *)"\x0a\xff", 2, NULL, NULL, NULL, 0) != GRPC_STATUS_INTERNAL) ++*failures;
        } else if (!predict_ok(1 + i % 4, (float)i)) {
            ++*failures;
        }
    }
    return NULL;
}

static void test_concurrent(void) {
    pthread_t th[8];
    int failures[8] = {0};
    for (int i = 0; i < 8; i++) REQUIRE(pthread_create(&th[i], NULL, client, &failures[i]) == 0);
    int total = 0;
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        total += failures[i];
    }
    CHECK(total == 0);
}

static void test_bad_options(tfc_srv_manager *m, int port_in_use) {
    tfc_status st = TFC_STATUS_INIT;
    CHECK(!tfc_grpc_server_start(m, &(tfc_grpc_opts){.port = 70000}, &st));
    CHECK_CODE(&st, TFC_INVALID_ARGUMENT);
    CHECK(!tfc_grpc_server_start(m, &(tfc_grpc_opts){.host = "127.0.0.1", .port = port_in_use}, &st));
    CHECK_CODE(&st, TFC_UNAVAILABLE);
}

int main(void) {
    tfc_status st = TFC_STATUS_INIT;
    ctx = tfc_ctx_new(NULL, &st);
    REQUIRE(ctx);
    const char *tmp = getenv("TMPDIR");
    snprintf(base, sizeof base, "%s/tfc_test_serving_grpc_%ld", tmp && tmp[0] ? tmp : "/tmp", (long)getpid());
    REQUIRE(mkdir(base, 0755) == 0);
    save_model();
    tfc_srv_config cfg = {0};
    REQUIRE(tfc_srv_config_single("m", base, &cfg, &st));
    tfc_srv_manager *m = tfc_srv_manager_new(&cfg, &(tfc_srv_manager_opts){.instances = 2}, &st);
    tfc_srv_config_clear(&cfg);
    REQUIRE(m);
    tfc_grpc_server *s = tfc_grpc_server_start(
        m, &(tfc_grpc_opts){.host = "127.0.0.1", .port = 0, .threads = 3, .max_message_bytes = 4096}, &st);
    CHECK_OK(&st);
    REQUIRE(s);
    int port = tfc_grpc_server_port(s);
    CHECK(port > 0);
    grpc_init();
    char target[64];
    snprintf(target, sizeof target, "127.0.0.1:%d", port);
    grpc_channel_credentials *creds = grpc_insecure_credentials_create();
    channel = grpc_channel_create(target, creds, NULL);
    grpc_channel_credentials_release(creds);
    test_calls();
    test_concurrent();
    test_bad_options(m, port);
    grpc_channel_destroy(channel);
    tfc_grpc_server_stop(s, 5);
    grpc_shutdown();
    tfc_srv_manager_free(m);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", base);
    tfc_ctx_free(ctx);
    TEST_MAIN_END();
}
