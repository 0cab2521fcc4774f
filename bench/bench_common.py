"""Shared pieces of the benchmark's Python side: Fashion-MNIST loading, the demo CNN's weights file, the
checksum that shows every framework computes the same thing, and the worker's line protocol (the same one
tfc_bench speaks, see bench/README.md)."""

import gzip
import os
import sys
import time

import numpy as np

BATCH = 128
EAGER_OPS = 10000

# The demo CNN's weights in Keras's get_weights() order and layout (HWIO kernels, [in, out] dense kernel).
CNN_WEIGHT_SHAPES = [(3, 3, 1, 32), (32,), (3, 3, 32, 64), (64,), (1600, 10), (10,)]


def data_dir(explicit=None):
    """Fashion-MNIST folder, resolved as tfc's tfc_datasets_fashion_mnist_load does."""
    if explicit:
        return explicit
    root = os.environ.get("TFC_DATASETS_DIR")
    if root:
        return os.path.join(root, "fashion-mnist")
    return "/usr/share/datasets/fashion-mnist"


def _read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    rank = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(rank)]
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * rank).reshape(dims)


def _idx_path(folder, stem):
    for name in (stem + ".gz", stem):
        p = os.path.join(folder, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError(os.path.join(folder, stem + "(.gz)"))


def load_fashion_mnist(folder=None, test=False, count=0):
    """x float32 [count, 28, 28, 1] in [0, 1] and y int64 [count] (count 0: all). Converted in place, as a
    memory-careful user would, so that peak memory compares the frameworks and not the conversion."""
    folder = data_dir(folder)
    prefix = "t10k" if test else "train"
    x8 = _read_idx(_idx_path(folder, prefix + "-images-idx3-ubyte"))
    y8 = _read_idx(_idx_path(folder, prefix + "-labels-idx1-ubyte"))
    if count and count < len(x8):
        x8, y8 = x8[:count], y8[:count]
    x = x8.astype(np.float32).reshape(-1, 28, 28, 1)
    x /= 255.0
    return x, y8.astype(np.int64)


def write_cnn_weights(path, seed=1234):
    """Glorot-uniform kernels and small biases, raw float32 in CNN_WEIGHT_SHAPES order."""
    rng = np.random.default_rng(seed)
    arrays = []
    for shape in CNN_WEIGHT_SHAPES:
        if len(shape) == 1:
            arrays.append(rng.uniform(-0.1, 0.1, shape).astype(np.float32))
        else:
            fan_in = int(np.prod(shape[:-1]))
            fan_out = shape[-1] * (int(np.prod(shape[:-2])) if len(shape) == 4 else 1)
            lim = np.sqrt(6.0 / (fan_in + fan_out))
            arrays.append(rng.uniform(-lim, lim, shape).astype(np.float32))
    with open(path + ".tmp", "wb") as f:
        for a in arrays:
            f.write(a.tobytes())
    os.replace(path + ".tmp", path)


def read_cnn_weights(path):
    raw = np.fromfile(path, dtype=np.float32)
    out, off = [], 0
    for shape in CNN_WEIGHT_SHAPES:
        n = int(np.prod(shape))
        out.append(raw[off:off + n].reshape(shape).copy())
        off += n
    if off != raw.size:
        raise ValueError(f"{path}: {raw.size} floats, expected {off}")
    return out


def probs_checksum(p):
    """sum over rows i and classes j of p[i,j] * (j + 1) * (i % 7 + 1) (as tfc_bench computes it)."""
    p = np.asarray(p, dtype=np.float64)
    rows = (np.arange(p.shape[0]) % 7 + 1)[:, None]
    cols = np.arange(1, p.shape[1] + 1)[None, :]
    return float((p * rows * cols).sum())


class Case:
    """A prepared workload: run(iters) does iters iterations of `units` units of work each; it returns None (the
    driver gets the wall time) or the seconds it timed itself (training: the second epoch of each fit)."""

    def __init__(self, run, units=1.0, check=float("nan"), free=None):
        self.run, self.units, self.check, self.free = run, units, check, free


class NotAvailable(Exception):
    pass


def serve(prep):
    """The worker loop: prep(impl, workload) returns a Case (or raises NotAvailable)."""
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever libraries print goes to stderr; the protocol owns the original stdout
    sys.stdout = sys.stderr

    def reply(s):
        proto.write(s.replace("\n", " ") + "\n")
        proto.flush()

    cur = None
    for line in sys.stdin:
        parts = line.split()
        if not parts:
            continue
        cmd = parts[0]
        if cmd == "quit":
            break
        try:
            if cmd == "free":
                if cur is not None and cur.free:
                    cur.free()
                cur = None
                reply("ok")
            elif cmd == "prep" and len(parts) in (3, 4):
                cur = None
                try:
                    cur = prep(parts[1], parts[2])
                except NotAvailable as e:
                    reply(f"na {e}")
                    continue
                calibrate = len(parts) == 3 or parts[3] != "0"
                t0 = time.perf_counter()
                cur.run(1)  # warm-up: tracing, first-touch, lazy initialisation
                if calibrate:
                    t0 = time.perf_counter()
                    cur.run(1)
                t1 = time.perf_counter()
                reply(f"ok {t1 - t0:.9g} {cur.units:.9g} {cur.check:.12g}")
            elif cmd == "run" and len(parts) == 2 and cur is not None:
                iters = max(1, int(parts[1]))
                t0 = time.perf_counter()
                measured = cur.run(iters)  # a run that times part of its work itself returns those seconds
                t1 = time.perf_counter()
                reply(f"ok {measured if measured is not None else t1 - t0:.9g}")
            else:
                reply(f"err bad command: {line.strip()}")
        except Exception as e:  # the driver records the error and goes on
            import traceback
            traceback.print_exc()
            reply(f"err {type(e).__name__}: {e}")
