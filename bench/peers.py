"""The peers' side of `make bench`: TensorFlow, PyTorch and ONNX Runtime running the same workloads as
tfc_bench, one framework and one thread count per process.

    python peers.py serve FRAMEWORK --threads N [--train-steps S] [--mlp-steps S] [--weights FILE] [--data-dir DIR] [--work-dir DIR]
    python peers.py peak-mem tensorflow --threads N [--workload train_cnn|data_pipeline] [--train-steps S]
                                        [--data-dir DIR] [--work-dir DIR]

serve speaks tfc_bench's line protocol (bench/README.md); peak-mem runs one workload in this process (train_cnn:
trains the demo CNN; data_pipeline: a few epochs of the input pipeline) and prints "ok <peak resident KiB>" (VmHWM,
as tfc_bench: ru_maxrss would include the driver's RSS copied by fork before exec). Workload names are tfc_bench's
(see bench_ops.c and bench_keras.c)."""

import argparse
import os
import re
import resource
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_common as bc  # noqa: E402
from bench_common import BATCH, EAGER_OPS, Case, NotAvailable  # noqa: E402

CONV_RE = re.compile(r"conv2d_(fwd|bwd_input|bwd_filter)_(\d+)x(\d+)x(\d+)x(\d+)_(\d+)x(\d+)x(\d+)(_same)?$")


def parse_conv(workload):
    m = CONV_RE.match(workload)
    if not m:
        return None
    n, h, w, c, kh, kw, o = (int(v) for v in m.groups()[1:8])
    return m.group(1), (n, h, w, c), (kh, kw, c, o), bool(m.group(9))


def rand(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


# ---------------------------------------------------------------------------------------------- TensorFlow
class TensorFlowPeer:
    def __init__(self, args):
        import tensorflow as tf
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
        try:  # Keras 2 (tf.keras of TensorFlow <= 2.15, the API tfc implements); Keras 3 otherwise
            import tf_keras as keras
        except ImportError:
            keras = tf.keras
        tf.random.set_seed(1)
        self.tf, self.keras, self.args = tf, keras, args

    def model(self, cnn, policy=None):
        L = self.keras.layers
        if policy:  # Keras's mixed precision recipe: the policy for the model, the last layer in float32
            self.keras.mixed_precision.set_global_policy(policy)
        if cnn:
            layers = [L.Conv2D(32, 3, activation="relu", input_shape=(28, 28, 1)), L.MaxPooling2D(2),
                      L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2), L.Flatten(), L.Dropout(0.5),
                      L.Dense(10, activation="softmax", dtype="float32" if policy else None)]
        else:
            layers = [L.Flatten(input_shape=(28, 28, 1)), L.Dense(128, activation="relu"),
                      L.Dense(10, activation="softmax")]
        m = self.keras.Sequential(layers)
        m.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        if policy:
            self.keras.mixed_precision.set_global_policy("float32")
        return m

    def prep(self, workload):
        tf, args = self.tf, self.args
        conv = parse_conv(workload)
        if conv:
            kind, xs, fs, same = conv
            pad = "SAME" if same else "VALID"
            ys = (xs[0], xs[1] if same else xs[1] - fs[0] + 1, xs[2] if same else xs[2] - fs[1] + 1, fs[3])
            x, f, dy = tf.constant(rand(xs, 3)), tf.constant(rand(fs, 4)), tf.constant(rand(ys, 5))
            s = [1, 1, 1, 1]
            if kind == "fwd":
                op = lambda: tf.raw_ops.Conv2D(input=x, filter=f, strides=s, padding=pad)
            elif kind == "bwd_input":
                sizes = tf.constant(xs, tf.int32)
                op = lambda: tf.raw_ops.Conv2DBackpropInput(input_sizes=sizes, filter=f, out_backprop=dy, strides=s,
                                                            padding=pad)
            else:
                sizes = tf.constant(fs, tf.int32)
                op = lambda: tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=sizes, out_backprop=dy,
                                                             strides=s, padding=pad)

            def run(iters):
                for _ in range(iters):
                    op()
            return Case(run)
        if workload in ("train_mlp", "train_cnn") or workload.startswith("train_cnn_mixed_"):
            steps = args.mlp_steps if workload == "train_mlp" else args.train_steps
            x, y = bc.load_fashion_mnist(args.data_dir, count=steps * BATCH)
            policy = workload[len("train_cnn_"):] if workload.startswith("train_cnn_mixed_") else None
            m = self.model(workload != "train_mlp", policy)
            keras = self.keras

            class EpochTimer(keras.callbacks.Callback):
                def on_epoch_begin(self, epoch, logs=None):
                    self.t0 = time.perf_counter()

                def on_epoch_end(self, epoch, logs=None):
                    self.seconds = time.perf_counter() - self.t0

            def run(iters):
                # two epochs per fit call, the second timed (see bench_keras.c)
                total = 0.0
                for _ in range(iters):
                    timer = EpochTimer()
                    m.fit(x, y, batch_size=BATCH, epochs=2, verbose=0, shuffle=True, callbacks=[timer])
                    total += timer.seconds
                return total
            return Case(run, units=len(x))
        if workload in ("infer_cnn_b1", "infer_cnn_b256"):
            batch = 1 if workload == "infer_cnn_b1" else 256
            x, _ = bc.load_fashion_mnist(args.data_dir, test=True, count=256)
            m = self.model(True)
            check = float("nan")
            if args.weights:
                m.set_weights(bc.read_cnn_weights(args.weights))
                check = bc.probs_checksum(m(x, training=False).numpy())
            # The fastest way TensorFlow offers to run a Keras model: a traced tf.function with a fixed signature.
            fn = tf.function(lambda t: m(t, training=False),
                             input_signature=[tf.TensorSpec([batch, 28, 28, 1], tf.float32)])
            xb = tf.constant(x[:batch])

            def run(iters):
                for _ in range(iters):
                    fn(xb)
            return Case(run, units=batch, check=check)
        if workload == "eager_dispatch":
            a, b = tf.constant(rand((8, 8), 6)), tf.constant(rand((8, 8), 7))
            add = tf.add

            def run(iters):
                for _ in range(iters * EAGER_OPS):
                    add(a, b)
            return Case(run, units=EAGER_OPS)
        if workload == "graph_dispatch":
            a, b = tf.constant(rand((8, 8), 6)), tf.constant(rand((8, 8), 7))

            @tf.function
            def chain(x, y):
                for _ in range(1000):
                    x = tf.raw_ops.AddV2(x=x, y=y)
                return x
            chain(a, b)

            def run(iters):
                for _ in range(iters):
                    chain(a, b)
            return Case(run, units=1)
        if workload == "data_pipeline":
            return self.data_pipeline()
        if workload == "saved_model_load":
            return self.saved_model_load()
        raise NotAvailable(f"tensorflow has no workload {workload}")

    def saved_model_load(self):
        """Writes the demo CNN (bench weights) as a SavedModel with tf-keras model.save(dir), which tfc's side then
        loads too; a sample is one tf.saved_model.load(dir)."""
        import shutil
        tf, args = self.tf, self.args
        path = os.path.join(args.work_dir, "cnn_saved_model")
        m = self.model(True)
        if args.weights:
            m.set_weights(bc.read_cnn_weights(args.weights))
        shutil.rmtree(path, ignore_errors=True)
        m.save(path)
        probs = tf.saved_model.load(path).signatures["serving_default"](tf.fill([1, 28, 28, 1], 0.5))
        (p,) = probs.values()
        check = float(np.sum(p.numpy() * np.arange(10)))

        def run(iters):
            for _ in range(iters):
                tf.saved_model.load(path)
        return Case(run, units=1, check=check)

    def data_pipeline(self):
        import bench_data
        return bench_data.tf_pipeline(self.tf, self.args)


# ------------------------------------------------------------------------------------------------- PyTorch
class TorchPeer:
    def __init__(self, args):
        import torch
        torch.set_num_threads(args.threads)
        try:
            torch.set_num_interop_threads(args.threads)
        except RuntimeError:
            pass
        torch.manual_seed(1)
        self.torch, self.args = torch, args

    def model(self, cnn):
        nn = self.torch.nn
        if cnn:
            return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(32, 64, 3), nn.ReLU(),
                                 nn.MaxPool2d(2), nn.Flatten(), nn.Dropout(0.5), nn.Linear(1600, 10))
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))

    def set_cnn_weights(self, m, path):
        """Keras layout (HWIO kernels, NHWC flatten order) to PyTorch's (OIHW, NCHW flatten order)."""
        k1, b1, k2, b2, kd, bd = bc.read_cnn_weights(path)
        t = self.torch
        with t.no_grad():
            m[0].weight.copy_(t.from_numpy(k1.transpose(3, 2, 0, 1).copy()))
            m[0].bias.copy_(t.from_numpy(b1))
            m[3].weight.copy_(t.from_numpy(k2.transpose(3, 2, 0, 1).copy()))
            m[3].bias.copy_(t.from_numpy(b2))
            m[8].weight.copy_(t.from_numpy(kd.reshape(5, 5, 64, 10).transpose(3, 2, 0, 1).reshape(10, 1600).copy()))
            m[8].bias.copy_(t.from_numpy(bd))

    def prep(self, workload):
        torch, args = self.torch, self.args
        F = torch.nn.functional
        conv = parse_conv(workload)
        if conv:
            # PyTorch's own layout (NCHW), as a PyTorch user runs it.
            kind, (n, h, w, c), (kh, kw, _, o), same = conv
            pad = kh // 2 if same else 0
            oh, ow = (h, w) if same else (h - kh + 1, w - kw + 1)
            x = torch.from_numpy(rand((n, c, h, w), 3))
            f = torch.from_numpy(rand((o, c, kh, kw), 4))
            dy = torch.from_numpy(rand((n, o, oh, ow), 5))
            if kind == "fwd":
                op = lambda: F.conv2d(x, f, padding=pad)
            else:
                # What autograd runs for Conv2d's backward, asking for one gradient only.
                mask = [kind == "bwd_input", kind == "bwd_filter", False]
                op = lambda: torch.ops.aten.convolution_backward(dy, x, f, None, [1, 1], [pad, pad], [1, 1], False,
                                                                 [0, 0], 1, mask)

            def run(iters):
                with torch.no_grad():
                    for _ in range(iters):
                        op()
            return Case(run)
        if workload in ("train_mlp", "train_cnn"):
            steps = args.train_steps if workload == "train_cnn" else args.mlp_steps
            xn, yn = bc.load_fashion_mnist(args.data_dir, count=steps * BATCH)
            x = torch.from_numpy(xn.transpose(0, 3, 1, 2).copy())
            y = torch.from_numpy(yn)
            m = self.model(workload == "train_cnn")
            opt = torch.optim.Adam(m.parameters(), lr=1e-3)
            m.train()

            def epoch():
                perm = torch.randperm(len(x))
                for s in range(0, len(x), BATCH):
                    idx = perm[s:s + BATCH]
                    opt.zero_grad(set_to_none=True)
                    loss = F.cross_entropy(m(x[idx]), y[idx])
                    loss.backward()
                    opt.step()

            def run(iters):
                # two epochs, the second timed, as the Keras sides
                total = 0.0
                for _ in range(iters):
                    epoch()
                    t0 = time.perf_counter()
                    epoch()
                    total += time.perf_counter() - t0
                return total
            return Case(run, units=len(x))
        if workload in ("infer_cnn_b1", "infer_cnn_b256"):
            batch = 1 if workload == "infer_cnn_b1" else 256
            xn, _ = bc.load_fashion_mnist(args.data_dir, test=True, count=256)
            x = torch.from_numpy(xn.transpose(0, 3, 1, 2).copy())
            m = self.model(True)
            m.eval()
            check = float("nan")
            if args.weights:
                self.set_cnn_weights(m, args.weights)
                with torch.inference_mode():
                    check = bc.probs_checksum(F.softmax(m(x), dim=1).numpy())
            xb = x[:batch].contiguous()

            def run(iters):
                with torch.inference_mode():
                    for _ in range(iters):
                        F.softmax(m(xb), dim=1)
            return Case(run, units=batch, check=check)
        if workload == "eager_dispatch":
            a, b = torch.from_numpy(rand((8, 8), 6)), torch.from_numpy(rand((8, 8), 7))
            add = torch.add

            def run(iters):
                for _ in range(iters * EAGER_OPS):
                    add(a, b)
            return Case(run, units=EAGER_OPS)
        raise NotAvailable(f"torch has no workload {workload}")


# -------------------------------------------------------------------------------------------- ONNX Runtime
def cnn_onnx_model(weights_path):
    """The demo CNN as an ONNX graph (NCHW, as exporters emit it) with the weights of weights_path."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    k1, b1, k2, b2, kd, bd = bc.read_cnn_weights(weights_path)
    inits = [
        numpy_helper.from_array(k1.transpose(3, 2, 0, 1).copy(), "w1"), numpy_helper.from_array(b1, "b1"),
        numpy_helper.from_array(k2.transpose(3, 2, 0, 1).copy(), "w2"), numpy_helper.from_array(b2, "b2"),
        # rows of the dense kernel in NCHW flatten order
        numpy_helper.from_array(kd.reshape(5, 5, 64, 10).transpose(2, 0, 1, 3).reshape(1600, 10).copy(), "wd"),
        numpy_helper.from_array(bd, "bd"),
    ]
    nodes = [
        helper.make_node("Conv", ["input", "w1", "b1"], ["c1"], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "wd", "bd"], ["logits"]),
        helper.make_node("Softmax", ["logits"], ["probs"], axis=1),
    ]
    graph = helper.make_graph(
        nodes, "fashion_mnist_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 1, 28, 28])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="tfc-bench")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString()


class OnnxRuntimePeer:
    def __init__(self, args):
        import onnxruntime as ort
        self.ort, self.args = ort, args
        self.session = None

    def prep(self, workload):
        if workload not in ("infer_cnn_b1", "infer_cnn_b256"):
            raise NotAvailable(f"onnxruntime has no workload {workload}")
        if not self.args.weights:
            raise NotAvailable("no weights file")
        if self.session is None:
            so = self.ort.SessionOptions()
            so.intra_op_num_threads = self.args.threads
            so.inter_op_num_threads = 1
            so.graph_optimization_level = self.ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            self.session = self.ort.InferenceSession(cnn_onnx_model(self.args.weights), so,
                                                     providers=["CPUExecutionProvider"])
        sess = self.session
        batch = 1 if workload == "infer_cnn_b1" else 256
        xn, _ = bc.load_fashion_mnist(self.args.data_dir, test=True, count=256)
        x = np.ascontiguousarray(xn.transpose(0, 3, 1, 2))
        check = bc.probs_checksum(sess.run(None, {"input": x})[0])
        xb = np.ascontiguousarray(x[:batch])

        def run(iters):
            for _ in range(iters):
                sess.run(None, {"input": xb})
        return Case(run, units=batch, check=check)


PEERS = {"tensorflow": TensorFlowPeer, "torch": TorchPeer, "onnxruntime": OnnxRuntimePeer}


def peak_rss_kib():
    """This program's peak resident memory (VmHWM of /proc/self/status, ru_maxrss where there is none)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_mem_tensorflow(args):
    """The demo's training run in tf.keras: the whole training set in memory, fit with batch 128; or the input
    pipeline of data_pipeline."""
    peer = TensorFlowPeer(args)
    if args.workload == "data_pipeline":
        import bench_data
        bench_data.peak_mem(peer.tf, args)
        return peak_rss_kib()
    x, y = bc.load_fashion_mnist(args.data_dir)
    m = peer.model(True)
    m.fit(x, y, batch_size=BATCH, epochs=1, steps_per_epoch=args.train_steps, verbose=0)
    return peak_rss_kib()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["serve", "peak-mem"])
    ap.add_argument("framework", choices=sorted(PEERS))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--train-steps", type=int, default=10)
    ap.add_argument("--mlp-steps", type=int, default=100)
    ap.add_argument("--weights")
    ap.add_argument("--data-dir")
    ap.add_argument("--work-dir", default=".")
    ap.add_argument("--workload", default="train_cnn", choices=["train_cnn", "data_pipeline"])
    args = ap.parse_args()
    if args.mode == "peak-mem":
        if args.framework != "tensorflow":
            sys.exit("peak-mem: only tensorflow")
        kb = peak_mem_tensorflow(args)
        print(f"ok {kb}", flush=True)
        return
    peer = PEERS[args.framework](args)

    def prep(impl, workload):
        if impl != args.framework:
            raise NotAvailable(f"this worker runs {args.framework}, not {impl}")
        return peer.prep(workload)
    bc.serve(prep)


if __name__ == "__main__":
    main()
