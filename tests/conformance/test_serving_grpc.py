"""`tfc serve`'s gRPC API (TensorFlow Serving's PredictionService and ModelService) against the official client
(tensorflow-serving-api: PredictionServiceStub, requests built with tf.make_tensor_proto): SavedModels written at
test time by TensorFlow and by tfc answer Predict, Classify and Regress with TensorFlow's own outputs
(tf.saved_model.load) on fresh random inputs; GetModelMetadata returns the SavedModel's SignatureDefs and
GetModelStatus the version states; hostile messages (bytes that are not protobuf, giant dims, wrong dtypes,
unknown models and methods) get TensorFlow Serving's status codes and the server keeps serving, also under
concurrent calls; SIGTERM ends the server with exit status 0."""
import concurrent.futures
import os
import signal
import socket
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf
from conftest import assert_close
from test_serving_rest import example as tf1_example
from test_serving_rest import save_tf1_examples_model

import tfc

grpc = pytest.importorskip("grpc")
apis = pytest.importorskip("tensorflow_serving.apis.prediction_service_pb2_grpc")
from tensorflow.core.example import example_pb2  # noqa: E402
from tensorflow.core.framework import tensor_pb2  # noqa: E402
from tensorflow.core.protobuf import saved_model_pb2  # noqa: E402
from tensorflow_serving.apis import (classification_pb2, get_model_metadata_pb2, get_model_status_pb2,  # noqa: E402
                                     inference_pb2, input_pb2, model_service_pb2_grpc, predict_pb2, prediction_service_pb2_grpc,
                                     regression_pb2)

START_TIMEOUT = 120  # seconds for the server to load its models and listen
CALL_TIMEOUT = 60


def _tfc_bin():
    """The tfc command next to the library under test; TFC_SERVE_BIN overrides it (a sanitizer build of it)."""
    return os.environ.get("TFC_SERVE_BIN") or os.path.join(os.path.dirname(tfc.library_path), "tfc")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Affine(tf.Module):
    """serving_default: y = relu(x @ w + b) * scale, z = row sums of x @ w + b."""

    def __init__(self, rng, n_in, n_out):
        super().__init__()
        self.w = tf.Variable(rng.standard_normal((n_in, n_out)).astype(np.float32))
        self.b = tf.Variable(rng.standard_normal((n_out,)).astype(np.float32))
        self.scale = tf.Variable(np.float32(rng.uniform(0.5, 2.0)))

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.matmul(x, self.w) + self.b
        return {"y": tf.nn.relu(h) * self.scale, "z": tf.reduce_sum(h, axis=1)}


N_FEAT, CLASSES = 3, [b"ant", b"bee", b"cat", b"dog"]


class _Examples(tf.Module):
    """Classify and Regress signatures over serialized tf.Examples with a float feature "x" [3] and an optional
    float feature "c" [1] (a context feature in the tests) added to every x."""

    def __init__(self, rng):
        super().__init__()
        self.w = tf.Variable(rng.standard_normal((N_FEAT, len(CLASSES))).astype(np.float32))
        self.v = tf.Variable(rng.standard_normal((N_FEAT,)).astype(np.float32))

    def _features(self, inputs):
        f = tf.io.parse_example(inputs, {"x": tf.io.FixedLenFeature([N_FEAT], tf.float32),
                                         "c": tf.io.FixedLenFeature([1], tf.float32, default_value=[0.0])})
        return f["x"] + f["c"]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def classify(self, inputs):
        scores = tf.nn.softmax(tf.matmul(self._features(inputs), self.w))
        classes = tf.tile(tf.constant([CLASSES]), tf.stack([tf.shape(scores)[0], 1]))
        return {"classes": classes, "scores": scores}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def regress(self, inputs):
        return {"outputs": tf.reduce_sum(self._features(inputs) * self.v, axis=1)}


def _set_method_names(export_dir, methods):
    """TensorFlow 2 writes every signature as a predict signature; TensorFlow Serving's Classify and Regress
    need the classify / regress method names (what TF1's classification_signature_def wrote)."""
    path = os.path.join(export_dir, "saved_model.pb")
    sm = saved_model_pb2.SavedModel()
    with open(path, "rb") as f:
        sm.ParseFromString(f.read())
    for key, method in methods.items():
        sm.meta_graphs[0].signature_def[key].method_name = method
    with open(path, "wb") as f:
        f.write(sm.SerializeToString())


class _Server:
    def __init__(self, config_path, log_path):
        self.port, self.rest_port = _free_port(), _free_port()
        self.log = open(log_path, "wb")
        self.proc = subprocess.Popen([_tfc_bin(), "serve", f"--port={self.port}", f"--rest_api_port={self.rest_port}",
                                      f"--model_config_file={config_path}"], stdout=self.log, stderr=subprocess.STDOUT)
        self.log_path = log_path
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        try:
            grpc.channel_ready_future(self.channel).result(timeout=START_TIMEOUT)
        except grpc.FutureTimeoutError:
            self.stop()
            pytest.fail(f"tfc serve did not listen on {self.port} within {START_TIMEOUT} s:\n{self.output()}")
        self.predict = prediction_service_pb2_grpc.PredictionServiceStub(self.channel)
        self.models = model_service_pb2_grpc.ModelServiceStub(self.channel)
        # the models load before the port opens; wait until each reports AVAILABLE all the same
        self.wait_available(["affine", "exported", "examples", "tf1ex"])

    def wait_available(self, names):
        deadline = time.time() + START_TIMEOUT
        for name in names:
            while True:
                req = get_model_status_pb2.GetModelStatusRequest()
                req.model_spec.name = name
                try:
                    r = self.models.GetModelStatus(req, timeout=CALL_TIMEOUT)
                    if any(v.state == 30 for v in r.model_version_status):
                        break
                except grpc.RpcError:
                    pass
                assert time.time() < deadline, f"{name} never became AVAILABLE:\n{self.output()}"
                time.sleep(0.2)

    def output(self):
        self.log.flush()
        with open(self.log_path, "rb") as f:
            return f.read().decode(errors="replace")[-4000:]

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.log.close()
        return self.proc.returncode


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    rng = np.random.default_rng()
    root = tmp_path_factory.mktemp("grpc_models")
    n_in, n_out = int(rng.integers(2, 7)), int(rng.integers(1, 5))
    # TensorFlow's SavedModel
    m = _Affine(rng, n_in, n_out)
    tf.saved_model.save(m, str(root / "affine" / "1"), signatures=m.__call__)
    # tfc's SavedModel (tfc_saved_model_save: y = relu(x @ w + b))
    exe = os.path.join(os.path.dirname(tfc.library_path), "examples", "saved_model_export")
    if not os.path.exists(exe):
        pytest.skip("examples are not built")
    w = rng.standard_normal((n_in, n_out)).astype(np.float32)
    b = rng.standard_normal((n_out,)).astype(np.float32)
    np.save(root / "w.npy", w)
    np.save(root / "b.npy", b)
    os.makedirs(root / "exported")
    r = subprocess.run([exe, str(root / "exported" / "1"), str(root / "w.npy"), str(root / "b.npy")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    # Classify / Regress signatures (TensorFlow's)
    e = _Examples(rng)
    tf.saved_model.save(e, str(root / "examples" / "1"), signatures={"classify": e.classify, "regress": e.regress,
                                                                      "serving_default": e.regress})
    _set_method_names(str(root / "examples" / "1"), {"classify": "tensorflow/serving/classify",
                                                      "regress": "tensorflow/serving/regress"})
    # a TF1 graph whose classify and regress signatures share one input tensor (what MultiInference needs)
    save_tf1_examples_model(str(root / "tf1ex" / "1"), rng)
    config = root / "models.config"
    config.write_text("model_config_list {\n" + "".join(
        f'  config {{ name: "{n}" base_path: "{root / n}" model_platform: "tensorflow" }}\n'
        for n in ("affine", "exported", "examples", "tf1ex")) + "}\n")
    server = _Server(str(config), str(root / "serve.log"))
    yield {"root": root, "n_in": n_in, "n_out": n_out, "server": server, "w": w, "b": b}
    rc = server.stop()
    assert rc == 0, f"tfc serve exited with {rc} after SIGTERM:\n{server.output()}"


def _predict_request(name, inputs, version=None, signature=None, output_filter=()):
    req = predict_pb2.PredictRequest()
    req.model_spec.name = name
    if version is not None:
        req.model_spec.version.value = version
    if signature is not None:
        req.model_spec.signature_name = signature
    for k, v in inputs.items():
        req.inputs[k].CopyFrom(v if isinstance(v, tensor_pb2.TensorProto) else tf.make_tensor_proto(v))
    req.output_filter.extend(output_filter)
    return req


def _expect_code(call, code, fragment=None):
    with pytest.raises(grpc.RpcError) as e:
        call()
    assert e.value.code() == code, f"{e.value.code()}: {e.value.details()}"
    if fragment:
        assert fragment in e.value.details(), e.value.details()
    return e.value.details()


@pytest.mark.parametrize("name", ["affine", "exported"])
def test_predict_matches_tensorflow(served, rng, name):
    s = served["server"]
    loaded = tf.saved_model.load(str(served["root"] / name / "1"))
    sig = loaded.signatures["serving_default"]
    for batch in (1, int(rng.integers(2, 9))):
        x = rng.standard_normal((batch, served["n_in"])).astype(np.float32)
        want = {k: v.numpy() for k, v in sig(x=tf.constant(x)).items()}
        r = s.predict.Predict(_predict_request(name, {"x": x}), timeout=CALL_TIMEOUT)
        assert set(r.outputs) == set(want)
        for k, v in want.items():
            got = tf.make_ndarray(r.outputs[k])
            assert got.dtype == v.dtype
            assert_close(got, v, "float32", msg=f"{name} output {k} batch {batch}")
            # TensorFlow Serving answers with Tensor::AsProtoField: the values in float_val
            assert len(r.outputs[k].float_val) == v.size and not r.outputs[k].tensor_content
        assert r.model_spec.name == name and r.model_spec.version.value == 1
        assert r.model_spec.signature_name == "serving_default"
    # an explicit version, signature name and output filter
    x = rng.standard_normal((2, served["n_in"])).astype(np.float32)
    first = sorted(want)[0]
    r = s.predict.Predict(_predict_request(name, {"x": x}, version=1, signature="serving_default",
                                           output_filter=[first]), timeout=CALL_TIMEOUT)
    assert list(r.outputs) == [first]
    assert_close(tf.make_ndarray(r.outputs[first]), sig(x=tf.constant(x))[first].numpy(), "float32")


def test_tfc_model_values(served, rng):
    """The tfc-written model gives NumPy's relu(x @ w + b) through the server."""
    x = rng.standard_normal((3, served["n_in"])).astype(np.float32)
    r = served["server"].predict.Predict(_predict_request("exported", {"x": x}), timeout=CALL_TIMEOUT)
    assert_close(tf.make_ndarray(r.outputs["y"]), np.maximum(x @ served["w"] + served["b"], 0), "float32")


def test_get_model_metadata(served):
    s = served["server"]
    for name in ("affine", "exported", "examples"):
        req = get_model_metadata_pb2.GetModelMetadataRequest()
        req.model_spec.name = name
        req.metadata_field.append("signature_def")
        r = s.predict.GetModelMetadata(req, timeout=CALL_TIMEOUT)
        assert r.model_spec.name == name and r.model_spec.version.value == 1
        got = get_model_metadata_pb2.SignatureDefMap()
        assert r.metadata["signature_def"].Unpack(got)
        sm = saved_model_pb2.SavedModel()
        with open(served["root"] / name / "1" / "saved_model.pb", "rb") as f:
            sm.ParseFromString(f.read())
        want = sm.meta_graphs[0].signature_def
        assert set(got.signature_def) == set(want)
        for key in want:
            assert got.signature_def[key] == want[key], key
    req = get_model_metadata_pb2.GetModelMetadataRequest()
    req.model_spec.name = "affine"
    _expect_code(lambda: s.predict.GetModelMetadata(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT,
                 "must specify at least one metadata_field")
    req.metadata_field.append("nonsense")
    _expect_code(lambda: s.predict.GetModelMetadata(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT,
                 "Metadata field nonsense is not supported")


def test_get_model_status(served):
    s = served["server"]
    req = get_model_status_pb2.GetModelStatusRequest()
    req.model_spec.name = "affine"
    r = s.models.GetModelStatus(req, timeout=CALL_TIMEOUT)
    assert [(v.version, v.state, v.status.error_code, v.status.error_message) for v in r.model_version_status] == \
        [(1, get_model_status_pb2.ModelVersionStatus.AVAILABLE, 0, "")]
    req.model_spec.version.value = 1
    assert len(s.models.GetModelStatus(req, timeout=CALL_TIMEOUT).model_version_status) == 1
    req.model_spec.version.value = 7
    _expect_code(lambda: s.models.GetModelStatus(req, timeout=CALL_TIMEOUT), grpc.StatusCode.NOT_FOUND)
    req = get_model_status_pb2.GetModelStatusRequest()
    req.model_spec.name = "no_such_model"
    _expect_code(lambda: s.models.GetModelStatus(req, timeout=CALL_TIMEOUT), grpc.StatusCode.NOT_FOUND)


def _example(x=None, c=None):
    e = example_pb2.Example()
    if x is not None:
        e.features.feature["x"].float_list.value.extend(x)
    if c is not None:
        e.features.feature["c"].float_list.value.extend(c)
    return e


@pytest.mark.parametrize("with_context", [False, True])
def test_classify_and_regress_match_tensorflow(served, rng, with_context):
    s = served["server"]
    loaded = tf.saved_model.load(str(served["root"] / "examples" / "1"))
    n = int(rng.integers(1, 6))
    xs = rng.standard_normal((n, N_FEAT)).astype(np.float32)
    c = rng.standard_normal(1).astype(np.float32)
    # what TensorFlow sees: the context's features merged into every example
    full = [_example(x, c if with_context else None).SerializeToString() for x in xs]
    want_cls = loaded.signatures["classify"](inputs=tf.constant(full))
    want_reg = loaded.signatures["regress"](inputs=tf.constant(full))["outputs"].numpy()

    def fill(inp):
        if with_context:
            inp.example_list_with_context.examples.extend([_example(x) for x in xs])
            inp.example_list_with_context.context.CopyFrom(_example(c=c))
        else:
            inp.example_list.examples.extend([_example(x) for x in xs])

    creq = classification_pb2.ClassificationRequest()
    creq.model_spec.name = "examples"
    creq.model_spec.signature_name = "classify"
    fill(creq.input)
    r = s.predict.Classify(creq, timeout=CALL_TIMEOUT)
    assert r.model_spec.name == "examples" and r.model_spec.signature_name == "classify"
    assert len(r.result.classifications) == n
    scores = np.array([[cl.score for cl in row.classes] for row in r.result.classifications], np.float32)
    labels = [[cl.label.encode() for cl in row.classes] for row in r.result.classifications]
    assert_close(scores, want_cls["scores"].numpy(), "float32")
    assert labels == want_cls["classes"].numpy().tolist()

    rreq = regression_pb2.RegressionRequest()
    rreq.model_spec.name = "examples"
    rreq.model_spec.signature_name = "regress"
    fill(rreq.input)
    r = s.predict.Regress(rreq, timeout=CALL_TIMEOUT)
    assert r.model_spec.version.value == 1
    assert_close(np.array([g.value for g in r.result.regressions], np.float32), want_reg, "float32")


def test_classify_errors(served):
    s = served["server"]
    req = classification_pb2.ClassificationRequest()
    req.model_spec.name = "examples"
    req.model_spec.signature_name = "regress"  # not a classification signature
    req.input.example_list.examples.add().CopyFrom(_example([1, 2, 3]))
    _expect_code(lambda: s.predict.Classify(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT,
                 "tensorflow/serving/classify")
    req = classification_pb2.ClassificationRequest(input=input_pb2.Input())
    _expect_code(lambda: s.predict.Classify(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT,
                 "Missing ModelSpec")
    req = regression_pb2.RegressionRequest()
    req.model_spec.name = "examples"
    req.model_spec.signature_name = "regress"
    _expect_code(lambda: s.predict.Regress(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT)


def _multi_request(tasks, examples):
    req = inference_pb2.MultiInferenceRequest()
    for name, signature, method in tasks:
        t = req.tasks.add()
        t.model_spec.name = name
        if signature is not None:
            t.model_spec.signature_name = signature
        t.method_name = method
    req.input.example_list.examples.extend(examples)
    return req


CLASSIFY, REGRESS = "tensorflow/serving/classify", "tensorflow/serving/regress"


def test_multi_inference_matches_classify_and_regress(served, rng):
    """MultiInference with a classify and a regress task on one Input (a TF1 model whose two signatures share the
    input tensor) answers what Classify and Regress answer for the same Input, and TensorFlow's own outputs, one
    result per task in task order with the task's model spec."""
    s = served["server"]
    loaded = tf.saved_model.load(str(served["root"] / "tf1ex" / "1"))
    n = int(rng.integers(1, 6))
    xs, ks = rng.standard_normal(n).astype(np.float32), rng.integers(-5, 5, n)
    serialized = [tf1_example(float(x), int(k)) for x, k in zip(xs, ks)]
    examples = [example_pb2.Example.FromString(b) for b in serialized]
    for order in ([("classify_x", CLASSIFY), ("regress_x", REGRESS)], [("regress_x", REGRESS), ("classify_x", CLASSIFY)]):
        r = s.predict.MultiInference(_multi_request([("tf1ex", sig, m) for sig, m in order], examples),
                                     timeout=CALL_TIMEOUT)
        assert len(r.results) == 2
        for (sig, method), res in zip(order, r.results):
            assert res.model_spec.name == "tf1ex" and res.model_spec.version.value == 1
            assert res.model_spec.signature_name == sig
            want_tf = loaded.signatures[sig](inputs=tf.constant(serialized))
            if method == CLASSIFY:
                creq = classification_pb2.ClassificationRequest()
                creq.model_spec.name, creq.model_spec.signature_name = "tf1ex", sig
                creq.input.example_list.examples.extend(examples)
                want = s.predict.Classify(creq, timeout=CALL_TIMEOUT).result
                assert res.WhichOneof("result") == "classification_result"
                assert res.classification_result == want
                scores = np.array([[c.score for c in row.classes] for row in res.classification_result.classifications])
                assert_close(scores.astype(np.float32), want_tf["scores"].numpy(), "float32")
            else:
                rreq = regression_pb2.RegressionRequest()
                rreq.model_spec.name, rreq.model_spec.signature_name = "tf1ex", sig
                rreq.input.example_list.examples.extend(examples)
                want = s.predict.Regress(rreq, timeout=CALL_TIMEOUT).result
                assert res.WhichOneof("result") == "regression_result"
                assert res.regression_result == want
                assert_close(np.array([g.value for g in res.regression_result.regressions], np.float32),
                             want_tf["outputs"].numpy().reshape(-1), "float32")


def test_multi_inference_errors(served):
    """TensorFlow Serving's MultiInference checks: the servable of the first task first, then per task an empty
    model name, mixed models, a repeated signature, an unknown signature, an unsupported method name, and the
    signature's own classify / regress checks; nothing is answered for a request with a bad task."""
    s = served["server"]
    ex = [_example([1.0, 2.0, 3.0])]

    def call(tasks, examples=ex):
        return lambda: s.predict.MultiInference(_multi_request(tasks, examples), timeout=CALL_TIMEOUT)

    INVALID = grpc.StatusCode.INVALID_ARGUMENT
    _expect_code(call([("no_such_model", "classify", CLASSIFY)]), grpc.StatusCode.NOT_FOUND)
    _expect_code(call([("examples", "classify", CLASSIFY), ("affine", "serving_default", REGRESS)]), INVALID,
                 "All ModelSpecs in a MultiInferenceRequest must access the same model name.")
    _expect_code(call([("examples", "classify", CLASSIFY), ("", "regress", REGRESS)]), INVALID,
                 "Found ModelSpec with an empty model name.")
    _expect_code(call([("examples", "classify", CLASSIFY), ("examples", "classify", CLASSIFY)]), INVALID,
                 "Duplicate evaluation of signature: classify")
    _expect_code(call([("examples", "nope", CLASSIFY)]), INVALID, "Requested signature not found in model graph: nope")
    _expect_code(call([("examples", "classify", "tensorflow/serving/predict")]), grpc.StatusCode.UNIMPLEMENTED,
                 "Unsupported signature method_name: tensorflow/serving/predict")
    _expect_code(call([("examples", "regress", CLASSIFY)]), INVALID,
                 "Expected classification signature method_name to be tensorflow/serving/classify")
    _expect_code(call([("tf1ex", "classify_x", CLASSIFY), ("tf1ex", "regress_x", REGRESS)], examples=[]), INVALID,
                 "Input is empty")
    # TensorFlow 2 gives every signature its own input placeholder: MultiInference refuses to share the Input
    _expect_code(call([("examples", "classify", CLASSIFY), ("examples", "regress", REGRESS)]), INVALID,
                 "Input tensor must be the same for all Signatures.")
    assert s.alive()


def _raw(s, method, payload):
    call = s.channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    return call(payload, timeout=CALL_TIMEOUT)


def _tensor(dtype, dims, **fields):
    t = tensor_pb2.TensorProto()
    t.dtype = dtype
    for d in dims:
        t.tensor_shape.dim.add().size = d
    for k, v in fields.items():
        getattr(t, k).extend(v) if isinstance(v, list) else setattr(t, k, v)
    return t


def test_hostile_messages_get_tensorflow_serving_codes(served, rng):
    s = served["server"]
    n_in = served["n_in"]
    P = "/tensorflow.serving.PredictionService/"
    # bytes that are not a protobuf: INTERNAL, as gRPC's C++ server (TensorFlow Serving) answers
    for junk in (b"\xff\xff\xff\xff", b"\x0a\xff\xff\xff\xff\x0f", b"\x12" + b"\x80" * 11, os.urandom(64)):
        try:
            _raw(s, P + "Predict", junk)
        except grpc.RpcError as e:
            assert e.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT), e.details()
    _expect_code(lambda: _raw(s, P + "Predict", b"\xff\xff\xff\xff"), grpc.StatusCode.INTERNAL)
    _expect_code(lambda: _raw(s, P + "GetModelMetadata", b"\x0a\x05ab"), grpc.StatusCode.INTERNAL)
    _expect_code(lambda: _raw(s, "/tensorflow.serving.ModelService/GetModelStatus", b"\x0b"), grpc.StatusCode.INTERNAL)
    # unknown methods and services
    _expect_code(lambda: _raw(s, P + "NoSuchMethod", b""), grpc.StatusCode.UNIMPLEMENTED)
    _expect_code(lambda: _raw(s, "/no.such.Service/Predict", b""), grpc.StatusCode.UNIMPLEMENTED)
    # giant dims: element counts past int64, and tensors far over the size limit from a few bytes
    F = tf.float32.as_datatype_enum
    for dims, fields in (([2 ** 40, 2 ** 40], {}), ([2 ** 62, 4], {"float_val": [1.0]}), ([1 << 40], {"float_val": [1.0]}),
                         ([-5, 3], {}), ([1 << 33], {"string_val": [b"x" * 1000]})):
        dt = tf.string.as_datatype_enum if "string_val" in fields else F
        req = _predict_request("affine", {"x": _tensor(dt, dims, **fields)})
        _expect_code(lambda: s.predict.Predict(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT)
    # wrong dtypes: a double tensor for a float input; values in another dtype's field; content of the wrong size
    req = _predict_request("affine", {"x": rng.standard_normal((2, n_in))})  # float64
    _expect_code(lambda: s.predict.Predict(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT)
    req = _predict_request("affine", {"x": _tensor(F, [1, n_in], int_val=[1] * n_in)})
    _expect_code(lambda: s.predict.Predict(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT,
                 "tensor parsing error")
    req = _predict_request("affine", {"x": _tensor(F, [2, n_in], tensor_content=b"\0" * 7)})
    _expect_code(lambda: s.predict.Predict(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT)
    req = _predict_request("affine", {"x": _tensor(999, [1])})
    _expect_code(lambda: s.predict.Predict(req, timeout=CALL_TIMEOUT), grpc.StatusCode.INVALID_ARGUMENT)
    # wrong input names, unknown models and versions, no model spec
    x = rng.standard_normal((1, n_in)).astype(np.float32)
    _expect_code(lambda: s.predict.Predict(_predict_request("affine", {"q": x}), timeout=CALL_TIMEOUT),
                 grpc.StatusCode.INVALID_ARGUMENT)
    _expect_code(lambda: s.predict.Predict(_predict_request("nope", {"x": x}), timeout=CALL_TIMEOUT),
                 grpc.StatusCode.NOT_FOUND, "Servable not found for request")
    _expect_code(lambda: s.predict.Predict(_predict_request("affine", {"x": x}, version=42), timeout=CALL_TIMEOUT),
                 grpc.StatusCode.NOT_FOUND)
    _expect_code(lambda: s.predict.Predict(_predict_request("affine", {"x": x}, signature="nope"),
                                           timeout=CALL_TIMEOUT), grpc.StatusCode.FAILED_PRECONDITION)
    _expect_code(lambda: s.predict.Predict(predict_pb2.PredictRequest(), timeout=CALL_TIMEOUT),
                 grpc.StatusCode.INVALID_ARGUMENT, "Missing ModelSpec")
    # and the server still answers good requests
    assert s.alive()
    sig = tf.saved_model.load(str(served["root"] / "affine" / "1")).signatures["serving_default"]
    r = s.predict.Predict(_predict_request("affine", {"x": x}), timeout=CALL_TIMEOUT)
    assert_close(tf.make_ndarray(r.outputs["y"]), sig(x=tf.constant(x))["y"].numpy(), "float32")


def test_concurrent_calls(served, rng):
    """16 client threads, good and bad requests interleaved: every good answer is TensorFlow's."""
    s = served["server"]
    sig = tf.saved_model.load(str(served["root"] / "affine" / "1")).signatures["serving_default"]
    xs = [rng.standard_normal((int(rng.integers(1, 5)), served["n_in"])).astype(np.float32) for _ in range(48)]
    want = [sig(x=tf.constant(x))["y"].numpy() for x in xs]

    def one(i):
        if i % 3 == 2:
            try:
                _raw(s, "/tensorflow.serving.PredictionService/Predict", b"\xff" * (i + 1))
            except grpc.RpcError as e:
                return e.code() == grpc.StatusCode.INTERNAL
            return False
        r = s.predict.Predict(_predict_request("affine", {"x": xs[i]}), timeout=CALL_TIMEOUT)
        return np.allclose(tf.make_ndarray(r.outputs["y"]), want[i], rtol=1e-5, atol=1e-5)

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(one, range(len(xs))))
    assert all(results), results
    assert s.alive()


def test_error_order_signature_before_tensors(served):
    """TensorFlow Serving looks the signature up before it parses the input tensors: a request with both an
    unknown signature and an unparsable tensor gets FAILED_PRECONDITION for the signature; with the right
    signature the same tensor gets INVALID_ARGUMENT."""
    s = served["server"]
    bad = _tensor(1, [2, served["n_in"]], tensor_content=b"\x00" * 5)  # DT_FLOAT, 5 bytes for 2 x n_in floats
    _expect_code(lambda: s.predict.Predict(_predict_request("affine", {"x": bad}, signature="nope"),
                                           timeout=CALL_TIMEOUT),
                 grpc.StatusCode.FAILED_PRECONDITION, 'Serving signature key "nope" not found.')
    _expect_code(lambda: s.predict.Predict(_predict_request("affine", {"x": bad}), timeout=CALL_TIMEOUT),
                 grpc.StatusCode.INVALID_ARGUMENT)
