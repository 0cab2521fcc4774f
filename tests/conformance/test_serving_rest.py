"""`tfc serve` against TensorFlow: SavedModels exported by TensorFlow (a tf.Module with several inputs and outputs,
a tf-keras model) and by tfc are served over TensorFlow Serving's REST API, and every answer equals what
tf.saved_model.load computes on the same fresh random inputs; metadata equals the SignatureDefs TensorFlow wrote;
classify/regress on a TF1-style model with ParseExample; TensorFlow Serving's errors and codes; model_config_file
with two models and labels; hot reload of a new version under concurrent requests; SIGTERM exits 0."""
import json
import os
import shutil
import subprocess
import threading
import time

import numpy as np
import pytest
import requests
import tensorflow as tf
from google.protobuf import json_format
from tensorflow.core.protobuf import saved_model_pb2

from serving_util import Server


# ---- models --------------------------------------------------------------------------------------------------

def save_module(path, rng):
    """A tf.Module: inputs a [None, 3] float32 and b [None] int64; outputs dense = tanh(a @ w + c) [None, 2] and
    count = b * 2 + 1 [None] int64."""
    w = tf.Variable(rng.standard_normal((3, 2)).astype(np.float32))
    c = tf.Variable(rng.standard_normal((2,)).astype(np.float32))

    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="a"),
                                      tf.TensorSpec([None], tf.int64, name="b")])
        def serve(self, a, b):
            return {"dense": tf.tanh(tf.matmul(a, w) + c), "count": b * 2 + 1}

    m = M()
    m.w, m.c = w, c
    tf.saved_model.save(m, path, signatures={"serving_default": m.serve})


def save_keras(path, rng):
    import tf_keras as keras
    model = keras.Sequential([keras.layers.Input((4,)), keras.layers.Dense(8, activation="relu"),
                              keras.layers.Dense(3, activation="softmax")])
    for v in model.weights:
        v.assign(rng.standard_normal(v.shape).astype(np.float32))
    model.save(path, save_format="tf")


def save_scale(path, scale):
    """y = x * scale on x [None, 2]."""
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 2], tf.float32, name="x")])
        def serve(self, x):
            return {"y": x * scale}

    tmp = path + ".tmp"
    tf.saved_model.save(M(), tmp)
    os.rename(tmp, path)  # a version appears whole, as TensorFlow Serving expects


def tf_signature(path, key="serving_default"):
    return tf.saved_model.load(path).signatures[key]


def tfc_saved_model(tmp_path, rng):
    """A SavedModel written by tfc (examples/saved_model_export: y = relu(x @ w + b))."""
    import tfc
    exe = os.path.join(os.path.dirname(tfc.library_path), "examples", "saved_model_export")
    if not os.path.exists(exe):
        pytest.skip("examples/saved_model_export is not built")
    w = rng.standard_normal((5, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    np.save(tmp_path / "w.npy", w)
    np.save(tmp_path / "b.npy", b)
    out = str(tmp_path / "tfc_model" / "1")
    os.makedirs(os.path.dirname(out))
    subprocess.run([exe, out, str(tmp_path / "w.npy"), str(tmp_path / "b.npy")], check=True, capture_output=True,
                   timeout=120)
    return os.path.dirname(out), w, b


# ---- predict on TensorFlow-written models ---------------------------------------------------------------------

def test_tf_module_predict_rows_and_columns(tmp_path, rng):
    base = tmp_path / "m"
    save_module(str(base / "7"), rng)
    sig = tf_signature(str(base / "7"))
    n = int(rng.integers(1, 6))
    a = rng.standard_normal((n, 3)).astype(np.float32)
    b = rng.integers(-1000, 1000, size=n).astype(np.int64)
    want = sig(a=tf.constant(a), b=tf.constant(b))
    with Server(f"--model_base_path={base}", "--model_name=mod", wait_model="mod") as s:
        # columnar: outputs by name, shapes as TensorFlow's
        r = s.post("/v1/models/mod:predict", {"inputs": {"a": a.tolist(), "b": b.tolist()}})
        assert r.status_code == 200, r.text
        assert r.headers["Content-Type"] == "application/json"
        out = r.json()["outputs"]
        np.testing.assert_allclose(np.array(out["dense"], np.float32), want["dense"].numpy(), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(np.array(out["count"], np.int64), want["count"].numpy())
        # rows: one object per instance, with both outputs
        r = s.post("/v1/models/mod/versions/7:predict",
                   {"signature_name": "serving_default",
                    "instances": [{"a": a[i].tolist(), "b": int(b[i])} for i in range(n)]})
        assert r.status_code == 200, r.text
        preds = r.json()["predictions"]
        assert len(preds) == n
        for i in range(n):
            np.testing.assert_allclose(np.array(preds[i]["dense"], np.float32), want["dense"].numpy()[i], rtol=1e-6,
                                       atol=1e-6)
            assert preds[i]["count"] == int(want["count"].numpy()[i])
        # status and metadata
        st = s.get("/v1/models/mod").json()
        assert st == {"model_version_status": [{"version": "7", "state": "AVAILABLE",
                                                "status": {"error_code": "OK", "error_message": ""}}]}
        meta = s.get("/v1/models/mod/metadata").json()
        assert meta["model_spec"] == {"name": "mod", "signature_name": "", "version": "7"}
        assert_metadata_matches(meta, str(base / "7"))


def assert_metadata_matches(meta, path):
    """The metadata's SignatureDefMap equals TensorFlow's saved_model.pb SignatureDefs (proto3 JSON)."""
    sm = saved_model_pb2.SavedModel()
    with open(os.path.join(path, "saved_model.pb"), "rb") as f:
        sm.ParseFromString(f.read())
    want = {}
    for key, sd in sm.meta_graphs[0].signature_def.items():
        d = json_format.MessageToDict(sd, preserving_proto_field_name=True)
        for part in ("inputs", "outputs"):
            for ti in d.setdefault(part, {}).values():
                shape = ti.setdefault("tensor_shape", {})
                shape.setdefault("unknown_rank", False)
                shape.setdefault("dim", [])
                for dim in shape["dim"]:
                    dim.setdefault("size", "0")
                    dim.setdefault("name", "")
                ti.setdefault("dtype", "DT_INVALID")
        d.setdefault("method_name", "")
        if key != "__saved_model_init_op":
            d.setdefault("defaults", {})
        want[key] = d
    got = meta["metadata"]["signature_def"]["signature_def"]
    if "__saved_model_init_op" in want:  # its tensor_shape is absent from the proto: unknown rank
        want["__saved_model_init_op"]["outputs"]["__saved_model_init_op"]["tensor_shape"]["unknown_rank"] = True
    assert got == want


def test_tf_keras_model_predict(tmp_path, rng):
    base = tmp_path / "k"
    save_keras(str(base / "1"), rng)
    sig = tf_signature(str(base / "1"))
    in_key = list(sig.structured_input_signature[1].keys())[0]
    out_key = list(sig.structured_outputs.keys())[0]
    x = rng.standard_normal((int(rng.integers(1, 8)), 4)).astype(np.float32)
    want = sig(**{in_key: tf.constant(x)})[out_key].numpy()
    with Server(f"--model_base_path={base}", wait_model="default") as s:
        r = s.post("/v1/models/default:predict", {"instances": x.tolist()})
        assert r.status_code == 200, r.text
        np.testing.assert_allclose(np.array(r.json()["predictions"], np.float32), want, rtol=1e-5, atol=1e-6)
        r = s.post("/v1/models/default:predict", {"inputs": {in_key: x.tolist()}})
        np.testing.assert_allclose(np.array(r.json()["outputs"], np.float32), want, rtol=1e-5, atol=1e-6)


def test_tfc_written_model_predict(tmp_path, rng):
    base, w, b = tfc_saved_model(tmp_path, rng)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    want = tf_signature(os.path.join(base, "1"))(x=tf.constant(x))["y"].numpy()
    np.testing.assert_allclose(want, np.maximum(x @ w + b, 0), rtol=1e-5, atol=1e-5)
    with Server(f"--model_base_path={base}", "--model_name=dense", wait_model="dense") as s:
        r = s.post("/v1/models/dense:predict", {"instances": x.tolist()})
        assert r.status_code == 200, r.text
        np.testing.assert_allclose(np.array(r.json()["predictions"], np.float32), want, rtol=1e-6, atol=1e-6)
        assert_metadata_matches(s.get("/v1/models/dense/metadata").json(), os.path.join(base, "1"))


# ---- classify / regress -----------------------------------------------------------------------------------------

def save_tf1_examples_model(path, rng):
    """A TF1-style SavedModel with classification and regression signatures over serialized tf.Examples
    (ParseExample of x [1] float and k [1] int64): regress outputs = 0.5 * x + k; classify scores = [x, 2x, k],
    classes = ["a", "b", "c"]."""
    w = float(rng.uniform(0.1, 2.0))
    g = tf.Graph()
    with g.as_default():
        serialized = tf.compat.v1.placeholder(tf.string, [None], name="tf_example")
        feats = tf.io.parse_example(serialized, {"x": tf.io.FixedLenFeature([1], tf.float32),
                                                 "k": tf.io.FixedLenFeature([1], tf.int64, default_value=[0])})
        x, k = feats["x"], tf.cast(feats["k"], tf.float32)
        y = w * x + k
        scores = tf.concat([x, 2 * x, k], axis=1)
        classes = tf.tile(tf.constant([["a", "b", "c"]]), [tf.shape(x)[0], 1])
        u = tf.compat.v1.saved_model.utils.build_tensor_info
        reg = tf.compat.v1.saved_model.signature_def_utils.regression_signature_def(serialized, y)
        cls = tf.compat.v1.saved_model.signature_def_utils.classification_signature_def(serialized, classes, scores)
        pred = tf.compat.v1.saved_model.signature_def_utils.predict_signature_def({"x": serialized}, {"y": y})
        del u
        with tf.compat.v1.Session(graph=g) as sess:
            b = tf.compat.v1.saved_model.Builder(path)
            b.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={
                "regress_x": reg, "classify_x": cls, "serving_default": pred})
            b.save()
    return w


def example(x, k=None):
    f = {"x": tf.train.Feature(float_list=tf.train.FloatList(value=[x]))}
    if k is not None:
        f["k"] = tf.train.Feature(int64_list=tf.train.Int64List(value=[k]))
    return tf.train.Example(features=tf.train.Features(feature=f)).SerializeToString()


def test_classify_and_regress(tmp_path, rng):
    base = tmp_path / "ex"
    save_tf1_examples_model(str(base / "1"), rng)
    loaded = tf.saved_model.load(str(base / "1"))
    xs = rng.uniform(-10, 10, size=4).astype(np.float32).round(3)
    ks = rng.integers(-5, 5, size=4)
    ser = tf.constant([example(float(x), int(k)) for x, k in zip(xs, ks)])
    want_reg = loaded.signatures["regress_x"](inputs=ser)["outputs"].numpy().reshape(-1)
    want_cls = loaded.signatures["classify_x"](inputs=ser)
    with Server(f"--model_base_path={base}", wait_model="default") as s:
        body = {"signature_name": "regress_x", "examples": [{"x": float(x), "k": int(k)} for x, k in zip(xs, ks)]}
        r = s.post("/v1/models/default:regress", body)
        assert r.status_code == 200, r.text
        np.testing.assert_allclose(r.json()["results"], want_reg, rtol=1e-6)
        # the same with k from the context
        r = s.post("/v1/models/default:regress", {"signature_name": "regress_x", "context": {"k": 3},
                                                  "examples": [{"x": float(x)} for x in xs]})
        want_ctx = loaded.signatures["regress_x"](inputs=tf.constant([example(float(x), 3) for x in xs]))
        np.testing.assert_allclose(r.json()["results"], want_ctx["outputs"].numpy().reshape(-1), rtol=1e-6)
        r = s.post("/v1/models/default:classify", dict(body, signature_name="classify_x"))
        assert r.status_code == 200, r.text
        res = r.json()["results"]
        assert len(res) == 4
        for i in range(4):
            assert [p[0] for p in res[i]] == ["a", "b", "c"]
            np.testing.assert_allclose([p[1] for p in res[i]], want_cls["scores"].numpy()[i], rtol=1e-6)
        # TensorFlow Serving's checks
        r = s.post("/v1/models/default:regress", {"signature_name": "classify_x", "examples": [{"x": 1.0}]})
        assert r.status_code == 400 and "tensorflow/serving/regress" in r.json()["error"]
        r = s.post("/v1/models/default:regress", {"signature_name": "regress_x"})
        assert r.status_code == 400 and "'examples'" in r.json()["error"]
        r = s.post("/v1/models/default:regress", {"signature_name": "regress_x", "examples": [{"x": [1.0, 2]}]})
        assert r.status_code == 400 and "Unexpected element type in feature: x" in r.json()["error"]
        r = s.post("/v1/models/default:regress", {"signature_name": "regress_x", "examples": [{"x": None}]})
        assert r.status_code == 400


# ---- errors ----------------------------------------------------------------------------------------------------

def test_errors_and_codes(tmp_path, rng):
    base = tmp_path / "m"
    save_module(str(base / "3"), rng)
    with Server(f"--model_base_path={base}", wait_model="default") as s:
        def err(r, code, text=None):
            assert r.status_code == code, (r.status_code, r.text)
            assert r.headers["Content-Type"] == "application/json"
            msg = r.json()["error"]
            assert isinstance(msg, str)
            if text:
                assert text in msg, msg
        ok_inputs = {"a": [[1.0, 2.0, 3.0]], "b": [4]}
        err(s.post("/v1/models/nope:predict", {"inputs": ok_inputs}), 404, "Servable not found for request: Latest(nope)")
        err(s.post("/v1/models/default/versions/99:predict", {"inputs": ok_inputs}), 404, "Specific(default, 99)")
        err(s.post("/v1/models/default/labels/x:predict", {"inputs": ok_inputs}), 400,
            "Unrecognized servable version label: x")
        err(s.post("/v1/models/default:predict", {"inputs": ok_inputs, "instances": []}), 400)
        err(s.post("/v1/models/default:predict", {"x": 1}), 400, "Missing 'inputs' or 'instances' key")
        err(s.post("/v1/models/default:predict", {"signature_name": 100, "inputs": ok_inputs}), 400,
            "'signature_name' key must be a string value.")
        err(s.post("/v1/models/default:predict", {"signature_name": "zz", "inputs": ok_inputs}), 400,
            'Serving signature name: "zz" not found in signature def')
        err(s.post("/v1/models/default:predict", {"instances": [{"a": [1, 2, 3], "b": 1}, {"a": [1, 2], "b": 1}]}), 400)
        err(s.post("/v1/models/default:predict", {"inputs": {"a": [[1.0, 2.0], [3.0]], "b": [1, 2]}}), 400,
            "Encountered list at unexpected size")
        err(s.post("/v1/models/default:predict", {"inputs": {"a": [["x", 2.0, 3.0]], "b": [1]}}), 400,
            "not of expected type: float")
        err(s.post("/v1/models/default:predict", {"inputs": {"a": [[1.0, 2.0, 3.0]], "b": [1.5]}}), 400,
            "not of expected type: int64")
        err(s.post("/v1/models/default:predict", {"inputs": {"a": [[1.0, 2.0, 3.0]]}}), 400,
            "Missing named input: b in 'inputs' object.")
        err(s.get("/v1/models/default:predict"), 400, "Malformed request: GET /v1/models/default:predict")
        err(s.get("/v1/models"), 400, "Missing model name in request.")
        err(s.post_raw("/v1/models/default:predict", "not json"), 400, "JSON Parse error")
        err(s.get("/v1/models/nope"), 404)
        assert s.get("/other").status_code == 404
        # the model still answers
        assert s.post("/v1/models/default:predict", {"inputs": ok_inputs}).status_code == 200


def test_encodings(tmp_path):
    """TensorFlow Serving's float formatting, b64 strings in and out."""
    class M(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="s"),
                                      tf.TensorSpec([None], tf.float32, name="f")])
        def serve(self, s, f):
            return {"img_bytes": s, "text": s, "f": f, "d": tf.cast(f, tf.float64)}

    tf.saved_model.save(M(), str(tmp_path / "e" / "1"), signatures={"serving_default": M().serve})
    with Server(f"--model_base_path={tmp_path / 'e'}", wait_model="default") as s:
        r = s.post_raw("/v1/models/default:predict",
                       '{"inputs": {"s": [{"b64": "aW1hZ2UgYnl0ZXM="}, {"b64": "AP8="}], "f": [0.2, 3.0]}}')
        assert r.status_code == 200, r.text
        out = r.json()["outputs"]
        assert out["img_bytes"] == [{"b64": "aW1hZ2UgYnl0ZXM="}, {"b64": "AP8="}]
        assert out["text"][0] == "image bytes"
        f_text = r.text.split('"f":')[1].split("]")[0].replace(" ", "").replace("\n", "")
        assert f_text == "[0.2,3.0", f_text
        r = s.post_raw("/v1/models/default:predict",
                       '{"inputs": {"s": ["a", "b", "c", "d", "e"], "f": [1e-5, 9000000.0, NaN, -Infinity, 0.1]}}')
        assert r.status_code == 200, r.text
        f_text = r.text.split('"f":')[1].split("]")[0].replace(" ", "").replace("\n", "")
        assert f_text == "[1e-05,9e+06,NaN,-Infinity,0.1", f_text
        d_text = r.text.split('"d":')[1].split("]")[0].replace(" ", "").replace("\n", "")
        assert d_text == "[9.9999997473787516e-06,9e+06,NaN,-Infinity,0.10000000149011612", d_text


# ---- config file, labels, hot reload, shutdown ------------------------------------------------------------------

def test_model_config_two_models_and_labels(tmp_path, rng):
    save_scale(str(tmp_path / "a" / "1"), 2.0)
    save_scale(str(tmp_path / "a" / "2"), 3.0)
    save_scale(str(tmp_path / "b" / "5"), -1.0)
    save_scale(str(tmp_path / "b" / "6"), 10.0)
    cfg = tmp_path / "models.config"
    cfg.write_text(f"""
model_config_list {{
  config {{ name: "a" base_path: "{tmp_path / 'a'}" model_platform: "tensorflow"
           model_version_policy {{ all {{}} }}
           version_labels {{ key: "stable" value: 1 }} version_labels {{ key: "canary" value: 2 }} }}
  config {{ name: "b" base_path: "{tmp_path / 'b'}" model_platform: "tensorflow"
           model_version_policy {{ specific {{ versions: 5 }} }} }}
}}
""")
    x = rng.standard_normal((2, 2)).astype(np.float32)

    def y(s, path):
        r = s.post(path, {"instances": x.tolist()})
        assert r.status_code == 200, r.text
        return np.array(r.json()["predictions"], np.float32)

    with Server(f"--model_config_file={cfg}", wait_model="b") as s:
        np.testing.assert_allclose(y(s, "/v1/models/a/labels/stable:predict"), x * 2)
        np.testing.assert_allclose(y(s, "/v1/models/a/labels/canary:predict"), x * 3)
        np.testing.assert_allclose(y(s, "/v1/models/a:predict"), x * 3)
        np.testing.assert_allclose(y(s, "/v1/models/a/versions/1:predict"), x * 2)
        np.testing.assert_allclose(y(s, "/v1/models/b:predict"), x * -1)
        assert s.post("/v1/models/b/versions/6:predict", {"instances": x.tolist()}).status_code == 404
        st = s.get("/v1/models/a").json()["model_version_status"]
        assert sorted(v["version"] for v in st) == ["1", "2"] and all(v["state"] == "AVAILABLE" for v in st)
        st = s.get("/v1/models/a/labels/canary").json()["model_version_status"]
        assert [v["version"] for v in st] == ["2"]


def test_hot_reload_under_load(tmp_path, rng):
    base = tmp_path / "hr"
    save_scale(str(base / "1"), 1.0)
    x = rng.standard_normal((3, 2)).astype(np.float32)
    stop = threading.Event()
    failures, seen = [], set()

    def client():
        sess = requests.Session()
        while not stop.is_set():
            try:
                r = sess.post(f"{s.url}/v1/models/default:predict", json={"instances": x.tolist()}, timeout=60)
                if r.status_code != 200:
                    failures.append(r.text)
                    continue
                y = np.array(r.json()["predictions"], np.float32)
                scale = round(float(y[0, 0] / x[0, 0]))
                np.testing.assert_allclose(y, x * scale, rtol=1e-5)
                seen.add(scale)
            except Exception as e:  # noqa: BLE001 - every failure is counted
                failures.append(repr(e))

    with Server(f"--model_base_path={base}", "--file_system_poll_wait_seconds=0.2", wait_model="default") as s:
        threads = [threading.Thread(target=client) for _ in range(4)]
        for t in threads:
            t.start()
        for version in (2, 3):
            save_scale(str(base / str(version)), float(version))
            deadline = time.time() + 60
            while time.time() < deadline:
                st = s.get("/v1/models/default").json()["model_version_status"]
                if any(v["version"] == str(version) and v["state"] == "AVAILABLE" for v in st):
                    break
                time.sleep(0.05)
            time.sleep(0.5)
        stop.set()
        for t in threads:
            t.join(timeout=60)
        assert not failures, failures[:5]
        assert 3 in seen
        st = {v["version"]: v["state"] for v in s.get("/v1/models/default").json()["model_version_status"]}
        assert st["3"] == "AVAILABLE" and st["1"] == "END" and st["2"] == "END"
        # a version that fails to load is reported, the previous one keeps serving
        os.makedirs(base / "4")
        (base / "4" / "saved_model.pb").write_bytes(b"\x0a\xff\xff garbage")
        deadline = time.time() + 60
        while time.time() < deadline:
            st = {v["version"]: v for v in s.get("/v1/models/default").json()["model_version_status"]}
            if "4" in st and st["4"]["state"] == "END":
                break
            time.sleep(0.05)
        assert st["4"]["status"]["error_code"] != "OK" and st["4"]["status"]["error_message"]
        r = s.post("/v1/models/default:predict", {"instances": x.tolist()})
        np.testing.assert_allclose(np.array(r.json()["predictions"]), x * 3, rtol=1e-5)


def test_sigterm_finishes_in_flight(tmp_path, rng):
    base = tmp_path / "t"
    save_scale(str(base / "1"), 2.0)
    x = rng.standard_normal((200, 2)).astype(np.float32)
    s = Server(f"--model_base_path={base}", wait_model="default")
    results = []

    def client():
        try:
            r = requests.post(f"{s.url}/v1/models/default:predict", json={"instances": x.tolist()}, timeout=60)
            results.append(r.status_code)
        except requests.ConnectionError:
            results.append("refused")  # sent after the listener closed: allowed

    try:
        threads = [threading.Thread(target=client) for _ in range(8)]
        for t in threads:
            t.start()
        time.sleep(0.05)
        assert s.stop() == 0, s.output
        for t in threads:
            t.join(timeout=60)
    finally:
        s.kill()
    assert all(r in (200, "refused") for r in results), results
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{s.url}/v1/models/default", timeout=5)


def test_bad_flags_and_config(tmp_path):
    from serving_util import tfc_bin
    r = subprocess.run([tfc_bin(), "serve", "--bogus=1"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "unknown flag" in r.stderr
    cfg = tmp_path / "bad.config"
    cfg.write_text('model_config_list { config { name: "a" base_pat: "/x" } }')
    r = subprocess.run([tfc_bin(), "serve", f"--model_config_file={cfg}", "--rest_api_port=0"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "line 1 column" in r.stderr and "base_pat" in r.stderr
    r = subprocess.run([tfc_bin(), "serve", "--rest_api_port=0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "--model_base_path" in r.stderr


def test_prometheus_metrics(tmp_path):
    save_scale(str(tmp_path / "p" / "1"), 2.0)
    mon = tmp_path / "monitoring.config"
    mon.write_text('prometheus_config { enable: true, path: "/monitoring/prometheus/metrics" }')
    with Server(f"--model_base_path={tmp_path / 'p'}", f"--monitoring_config_file={mon}", wait_model="default") as s:
        for _ in range(3):
            assert s.post("/v1/models/default:predict", {"instances": [[1.0, 2.0]]}).status_code == 200
        s.post("/v1/models/default:predict", {"instances": [["x", 2.0]]})
        r = s.get("/monitoring/prometheus/metrics")
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
        t = r.text
        assert ':tensorflow:serving:request_count{entrypoint="REST",model_name="default",API="predict",status="OK"} 3' in t
        assert 'status="INVALID_ARGUMENT"} 1' in t
        assert ':tensorflow:serving:request_latency_count{entrypoint="REST",model_name="default",API="predict"} 4' in t


def test_batching_joins_concurrent_requests(tmp_path, rng):
    """--enable_batching: concurrent single-row requests are answered correctly and run in shared batches
    (the Prometheus batch-size histogram counts fewer batches than requests)."""
    save_scale(str(tmp_path / "b" / "1"), 4.0)
    params = tmp_path / "batching.config"
    params.write_text("max_batch_size { value: 16 }\nbatch_timeout_micros { value: 20000 }\n"
                      "num_batch_threads { value: 2 }\nmax_enqueued_batches { value: 100 }\n"
                      "allowed_batch_sizes: 8\nallowed_batch_sizes: 16\n")
    mon = tmp_path / "monitoring.config"
    mon.write_text('prometheus_config { enable: true }')
    xs = rng.standard_normal((64, 1, 2)).astype(np.float32)
    failures = []
    with Server(f"--model_base_path={tmp_path / 'b'}", "--enable_batching", f"--batching_parameters_file={params}",
                f"--monitoring_config_file={mon}", "--rest_api_num_threads=16", wait_model="default") as s:
        def client(k):
            sess = requests.Session()
            for i in range(k, 64, 16):
                r = sess.post(f"{s.url}/v1/models/default:predict", json={"instances": xs[i].tolist()}, timeout=60)
                try:
                    np.testing.assert_allclose(np.array(r.json()["predictions"], np.float32), xs[i] * 4.0)
                except Exception as e:  # noqa: BLE001
                    failures.append((r.status_code, r.text, repr(e)))
        threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert not failures, failures[:3]
        text = s.get("/monitoring/prometheus/metrics").text
        line = [ln for ln in text.splitlines()
                if ln.startswith(":tensorflow:serving:batching_session:processed_batch_size_count")][0]
        n_batches = int(line.split()[-1])
        assert 0 < n_batches < 64, line
        sum_line = [ln for ln in text.splitlines()
                    if ln.startswith(":tensorflow:serving:batching_session:processed_batch_size_sum")][0]
        assert float(sum_line.split()[-1]) == 64
        # a request over max_batch_size
        r = s.post("/v1/models/default:predict", {"instances": np.zeros((17, 2)).tolist()})
        assert r.status_code == 400 and "larger than maximum batch size 16" in r.json()["error"]


def test_rest_api_timeout_in_ms(tmp_path, rng):
    """--rest_api_timeout_in_ms bounds each request as TensorFlow Serving's RunOptions.timeout_in_ms: a predict
    still queued when it expires (here waiting for a batch whose batch_timeout_micros is 5 s) gets HTTP 504 with
    DEADLINE_EXCEEDED's message well before the batch would run; a quick one and a status call are unaffected."""
    save_scale(str(tmp_path / "t" / "1"), 3.0)
    params = tmp_path / "batching.config"
    params.write_text("max_batch_size { value: 4 }\nbatch_timeout_micros { value: 5000000 }\n")
    x = rng.standard_normal((1, 2)).astype(np.float32)
    with Server(f"--model_base_path={tmp_path / 't'}", "--enable_batching", f"--batching_parameters_file={params}",
                "--rest_api_timeout_in_ms=300", wait_model="default") as s:
        t0 = time.time()
        r = s.post("/v1/models/default:predict", {"instances": x.tolist()})
        took = time.time() - t0
        assert r.status_code == 504, r.text
        assert r.json() == {"error": "Timed out waiting for notification"}
        assert 0.25 < took < 4.0, took
        # a full batch runs at once, within the deadline
        r = s.post("/v1/models/default:predict", {"instances": np.tile(x, (4, 1)).tolist()})
        assert r.status_code == 200, r.text
        np.testing.assert_allclose(np.array(r.json()["predictions"], np.float32), np.tile(x, (4, 1)) * 3.0, rtol=1e-6)
        assert s.get("/v1/models/default").status_code == 200
    with Server(f"--model_base_path={tmp_path / 't'}", "--rest_api_timeout_in_ms=30000", wait_model="default") as s:
        r = s.post("/v1/models/default:predict", {"instances": x.tolist()})
        assert r.status_code == 200
        np.testing.assert_allclose(np.array(r.json()["predictions"], np.float32), x * 3.0, rtol=1e-6)
