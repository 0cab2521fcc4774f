"""`make bench` rows for `tfc serve` (REST), measured with wrk against a running server:

  serve_http_ceiling  GET of a model's status: libmicrohttpd and the request path with no model compute
  serve_rest_b1       predict of a small CNN (the demo's shape: conv 3x3x32, pool, conv 3x3x64, pool, dense 10)
                      at batch 1, 16 connections; ratio to the HTTP ceiling
  serve_batching      64 connections at batch 1 against an MLP 784-4096-4096-10 (its batch-1 step reads all the
                      weights), batching off and on; and the CNN with batching on vs off
  serve_batching_demo the demo's CNN exported by tfc (tfc_model_export of the Keras Sequential in
                      examples/fashion_mnist.c), 8 connections of single-image predicts, batching off and on

Prints requests/s and p50/p99 latency per row and writes bench/results/serve_latest.json.

    python bench/bench_serve.py --tfc build/rel/tfc [--quick]
"""
import argparse
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def save_models(tmp):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import tensorflow as tf
    rng = np.random.default_rng(0)

    class CNN(tf.Module):
        def __init__(self):
            self.k1 = tf.Variable(rng.standard_normal((3, 3, 1, 32)).astype(np.float32) * 0.1)
            self.k2 = tf.Variable(rng.standard_normal((3, 3, 32, 64)).astype(np.float32) * 0.1)
            self.w = tf.Variable(rng.standard_normal((5 * 5 * 64, 10)).astype(np.float32) * 0.01)

        @tf.function(input_signature=[tf.TensorSpec([None, 28, 28, 1], tf.float32, name="x")])
        def serve(self, x):
            h = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, self.k1, 1, "VALID")), 2, 2, "VALID")
            h = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(h, self.k2, 1, "VALID")), 2, 2, "VALID")
            return {"y": tf.nn.softmax(tf.matmul(tf.reshape(h, [-1, 5 * 5 * 64]), self.w))}

    class MLP(tf.Module):
        def __init__(self):
            self.ws = [tf.Variable(rng.standard_normal(s).astype(np.float32) * 0.02)
                       for s in ((784, 4096), (4096, 4096), (4096, 10))]

        @tf.function(input_signature=[tf.TensorSpec([None, 784], tf.float32, name="x")])
        def serve(self, x):
            h = tf.nn.relu(tf.matmul(x, self.ws[0]))
            h = tf.nn.relu(tf.matmul(h, self.ws[1]))
            return {"y": tf.matmul(h, self.ws[2])}

    for name, m in (("cnn", CNN()), ("mlp", MLP())):
        tf.saved_model.save(m, os.path.join(tmp, name, "1"), signatures={"serving_default": m.serve})
    x_cnn = rng.random((1, 28, 28, 1)).astype(np.float32).round(3).tolist()
    x_mlp = rng.random((1, 784)).astype(np.float32).round(3).tolist()
    return json.dumps({"instances": x_cnn}), json.dumps({"instances": x_mlp})


def save_demo_cnn(tmp, tfc_bin):
    """The demo's Keras CNN (examples/fashion_mnist.c), exported by tfc_model_export through tfc's Python binding
    (untrained weights: the request rate does not depend on them)."""
    lib = os.path.join(os.path.dirname(os.path.abspath(tfc_bin)), "libtfc.so")
    os.environ.setdefault("TFC_LIBRARY", lib)
    sys.path.insert(0, os.path.join(HERE, "..", "python"))
    import tfc
    layers = [("InputLayer", {"batch_input_shape": [None, 28, 28, 1], "dtype": "float32"}),
              ("Conv2D", {"filters": 32, "kernel_size": [3, 3], "activation": "relu"}),
              ("MaxPooling2D", {"pool_size": [2, 2]}),
              ("Conv2D", {"filters": 64, "kernel_size": [3, 3], "activation": "relu"}),
              ("MaxPooling2D", {"pool_size": [2, 2]}), ("Flatten", {}), ("Dropout", {"rate": 0.5}),
              ("Dense", {"units": 10, "activation": "softmax"})]
    m = tfc.keras.model_from_config({"class_name": "Sequential", "config": {
        "name": "demo_cnn", "layers": [{"class_name": c, "config": k} for c, k in layers]}})
    m.export(os.path.join(tmp, "demo_cnn", "1"))


def wrk(url, body, conns, seconds, threads=2):
    """Runs wrk; returns (requests/s, p50 ms, p99 ms, non-2xx)."""
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as f:
        if body is not None:
            f.write('wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\n')
            f.write("wrk.body = [==[" + body + "]==]\n")
        script = f.name
    try:
        out = subprocess.run(["wrk", "-t", str(min(threads, conns)), "-c", str(conns), "-d", f"{seconds}s",
                              "--latency", "-s", script, url], capture_output=True, text=True, timeout=seconds + 60)
    finally:
        os.unlink(script)
    text = out.stdout

    def ms(label):
        m = re.search(rf"^\s+{label}%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        if not m:
            return float("nan")
        v = float(m.group(1))
        return {"us": v / 1000, "ms": v, "s": v * 1000}[m.group(2)]

    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    return rps, ms("50"), ms("99"), int(bad.group(1)) if bad else 0


class Serve:
    def __init__(self, tfc, base, *flags):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.p = subprocess.Popen([tfc, "serve", f"--model_base_path={base}", "--model_name=m",
                                   "--rest_api_host=127.0.0.1", f"--rest_api_port={self.port}",
                                   f"--port={free_port()}", *flags],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import urllib.request
        for _ in range(600):
            try:
                with urllib.request.urlopen(self.url + "/v1/models/m", timeout=2) as r:
                    if b"AVAILABLE" in r.read():
                        return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("tfc serve did not start")

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        self.p.wait(timeout=120)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tfc", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default="", help="run only the rows whose name starts with this")
    a = ap.parse_args()
    secs = 3 if a.quick else 10
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        body_cnn, body_mlp = save_models(tmp)
        params = os.path.join(tmp, "batching.config")
        with open(params, "w") as f:
            f.write("max_batch_size { value: 64 }\nbatch_timeout_micros { value: 2000 }\n"
                    "num_batch_threads { value: 2 }\nmax_enqueued_batches { value: 1000 }\n")

        params8 = os.path.join(tmp, "batching8.config")
        with open(params8, "w") as f:  # a batch as large as the 8 clients: it runs once full
            f.write("max_batch_size { value: 8 }\nbatch_timeout_micros { value: 2000 }\n"
                    "num_batch_threads { value: 2 }\n")

        def row(name, base, body, conns, *flags):
            if not name.startswith(a.only):
                return
            s = Serve(a.tfc, os.path.join(tmp, base), "--rest_api_num_threads=64", *flags)
            try:
                url = s.url + ("/v1/models/m" if body is None else "/v1/models/m:predict")
                wrk(url, body, conns, 1)  # warm-up
                rps, p50, p99, bad = wrk(url, body, conns, secs)
            finally:
                s.stop()
            rows[name] = {"requests_per_s": rps, "p50_ms": p50, "p99_ms": p99, "non_2xx": bad, "connections": conns}
            print(f"{name:28s} {rps:10.1f} req/s   p50 {p50:8.2f} ms   p99 {p99:8.2f} ms   non-2xx {bad}", flush=True)

        row("serve_http_ceiling", "cnn", None, 16)
        row("serve_rest_b1", "cnn", body_cnn, 16)
        row("serve_batching_cnn_off", "cnn", body_cnn, 64)
        row("serve_batching_cnn_on", "cnn", body_cnn, 64, "--enable_batching", f"--batching_parameters_file={params}")
        save_demo_cnn(tmp, a.tfc)
        row("serve_batching_demo_off", "demo_cnn", body_cnn, 8)
        row("serve_batching_demo_on", "demo_cnn", body_cnn, 8, "--enable_batching",
            f"--batching_parameters_file={params8}")
        row("serve_batching_demo_on_64", "demo_cnn", body_cnn, 8, "--enable_batching",
            f"--batching_parameters_file={params}")
        row("serve_batching_mlp_off", "mlp", body_mlp, 64)
        row("serve_batching_mlp_on", "mlp", body_mlp, 64, "--enable_batching", f"--batching_parameters_file={params}")
    r = rows

    def ratio(a_row, b_row):
        return r[a_row]["requests_per_s"] / r[b_row]["requests_per_s"] if a_row in r and b_row in r else None

    ratios = {
        "serve_rest_b1 / http_ceiling": ratio("serve_rest_b1", "serve_http_ceiling"),
        "mlp batching on / off": ratio("serve_batching_mlp_on", "serve_batching_mlp_off"),
        "cnn batching on / off": ratio("serve_batching_cnn_on", "serve_batching_cnn_off"),
        "demo cnn batching on / off (8 conns)": ratio("serve_batching_demo_on", "serve_batching_demo_off"),
        "demo cnn batching max 64 on / off (8 conns)": ratio("serve_batching_demo_on_64", "serve_batching_demo_off"),
    }
    ratios = {k: v for k, v in ratios.items() if v is not None}
    for k, v in ratios.items():
        print(f"{k:36s} {v:6.2f}x")
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "serve_latest.json"), "w") as f:
        json.dump({"rows": rows, "ratios": ratios, "seconds": secs}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
