"""Keras layers: tfc (python/tfc/keras.py over include/tfc/keras) against tf_keras (the Keras 2 API) on random
configurations drawn fresh every run (the seed is printed; TFC_TEST_SEED=<n> replays a run).

For each layer class and trial: build the tf_keras layer from random arguments, create the tfc layer from
tf_keras's get_config(), copy the weights, and compare outputs, gradients (w.r.t. the inputs and the trainable
weights, with random upstream gradients) and the weights after the call (BatchNormalization's moving
statistics); and compare get_config of a tfc layer created from a PARTIAL config (only the arguments chosen)
with tf_keras's for the same arguments, before and after building.

Keys ignored in config comparisons (tfc follows TensorFlow 2.4's Keras, which did not write them):
  module, registered_name   added by tf_keras >= 2.13 to every serialized object (initializers, ...)
  build_config              added by tf_keras >= 2.13 to serialized layers (the build input shape)
"""
import json

import numpy as np
import pytest

from conftest import assert_close, random_array, tf, tfc

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras

IGNORED_KEYS = ("module", "registered_name", "build_config")
TRIALS = 8
DTYPES = ["float32", "float64", "float16", "bfloat16"]
# (rtol, atol); atol scales with the largest expected magnitude (conftest.assert_close). Sums over
# kernels/normalised axes round differently from oneDNN's, hence float32 above the elementwise 1e-5.
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-10), "float16": (2e-2, 2e-2), "bfloat16": (6e-2, 6e-2)}
# TensorFlow's oneDNN pooling rounds float64 through float32.
POOL_TOL = {"float64": (1e-6, 1e-6)}

# tf_keras 2.21's float64 gelu (through erfc) is ~5e-8 off the exact 0.5*x*(1+erf(x/sqrt(2))) that TensorFlow 2.4
# and tfc compute.
GELU_TOL = {"float64": (1e-7, 1e-7)}

# Activation names: TensorFlow 2.4's tf.keras.activations and the extras tfc documents (layer.h).
ACTIVATIONS_TF24 = ["linear", "relu", "sigmoid", "tanh", "softmax", "elu", "selu", "gelu", "swish", "softplus",
                    "softsign", "exponential", "hard_sigmoid"]
ACTIVATIONS_TFC = ["silu", "relu6"]
# Names tf_keras 2.21 knows beyond those (tfc may lack them: skipped with a reason then).
ACTIVATIONS_NEWER = ["mish", "leaky_relu", "log_softmax"]


# ---- helpers ------------------------------------------------------------------------------------------------

def norm(v):
    """A config as plain JSON values: numpy scalars/arrays -> Python (float32 values as the exact double), tuples
    and ListWrappers -> lists, IGNORED_KEYS dropped at every level."""
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if k not in IGNORED_KEYS}
    if isinstance(v, np.ndarray):
        return norm(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)) or type(v).__name__ == "ListWrapper":
        return [norm(x) for x in v]
    return v


def config_diff(got, want, path=""):
    """Human-readable differences between two normalised configs."""
    out = []
    if isinstance(got, dict) and isinstance(want, dict):
        for k in sorted(set(got) | set(want)):
            if k not in got:
                out.append("%s%s: missing in tfc (tf_keras: %r)" % (path, k, want[k]))
            elif k not in want:
                out.append("%s%s: extra in tfc (%r)" % (path, k, got[k]))
            else:
                out.extend(config_diff(got[k], want[k], path + k + "."))
        return out
    if got != want or type(got) is not type(want) and not (isinstance(got, (int, float)) and
                                                            isinstance(want, (int, float))
                                                            and not isinstance(got, bool)
                                                            and not isinstance(want, bool)):
        out.append("%s: tfc %r != tf_keras %r" % (path.rstrip(".") or "<root>", got, want))
    return out


def assert_config_equal(got, want, what):
    diff = config_diff(norm(got), norm(want))
    assert not diff, "%s: get_config differs:\n  %s" % (what, "\n  ".join(diff))


_HAS = {}


def require_layer(class_name):
    """Skips while tfc has no layer class of that name."""
    if class_name not in _HAS:
        try:
            K.layer_from_config(class_name, {})
            _HAS[class_name] = True
        except tfc.InvalidArgumentError as e:
            _HAS[class_name] = "Unknown layer" not in str(e)
    if not _HAS[class_name]:
        pytest.skip("tfc has no %s layer yet" % class_name)


def clear_sessions():
    tf_keras.backend.clear_session()
    K.clear_session()


def rand_bool(rng, p=0.5):
    return bool(rng.random() < p)


def pick(rng, seq):
    return seq[int(rng.integers(0, len(seq)))]


def image_shape(rng, fmt, batch, h, w, c):
    return (batch, c, h, w) if fmt == "channels_first" else (batch, h, w, c)


# ---- random configurations: each returns (kwargs, input shapes, options) ---------------------------------------
# options: inputs="int:<n>" for integer inputs in [0, n); training=(False,) or (False, True); tol=...;
# a single input shape is a tuple, several are a list of tuples.

INITIALIZERS = ["glorot_uniform", "glorot_normal", "he_uniform", "he_normal", "lecun_uniform", "lecun_normal",
                "zeros", "ones", "orthogonal"]


def rand_initializer(rng, matrix):
    """An initializer argument as a user writes it: a name, or a serialized object with parameters
    (orthogonal only for kernels: Keras rejects it for 1-D weights)."""
    r = rng.random()
    if r < 0.5:
        return pick(rng, INITIALIZERS if matrix else INITIALIZERS[:-1])
    if r < 0.65:
        return {"class_name": "RandomNormal", "config": {"mean": float(np.round(rng.uniform(-1, 1), 2)),
                                                         "stddev": float(np.round(rng.uniform(0.01, 1), 3)),
                                                         "seed": int(rng.integers(0, 100))}}
    if r < 0.8:
        return {"class_name": "VarianceScaling", "config": {"scale": float(np.round(rng.uniform(0.5, 3), 2)),
                                                            "mode": pick(rng, ["fan_in", "fan_out", "fan_avg"]),
                                                            "distribution": pick(rng, ["truncated_normal",
                                                                                       "untruncated_normal",
                                                                                       "uniform"]),
                                                            "seed": None}}
    if r < 0.9:
        return {"class_name": "Constant", "config": {"value": float(np.round(rng.uniform(-1, 1), 3))}}
    return {"class_name": "RandomUniform", "config": {"minval": -0.3, "maxval": 0.2, "seed": None}}


def rand_regularizer(rng):
    r = rng.random()
    if r < 0.3:
        return pick(rng, ["l1", "l2"])
    if r < 0.6:
        return {"class_name": "L2", "config": {"l2": float(np.round(rng.uniform(0.001, 0.1), 4))}}
    return {"class_name": "L1L2", "config": {"l1": float(np.round(rng.uniform(0, 0.1), 4)),
                                             "l2": float(np.round(rng.uniform(0, 0.1), 4))}}


def for_dtype(kw, dtype):
    """TensorFlow's orthogonal initializer needs Qr, which has no bfloat16 kernel."""
    if dtype != "bfloat16":
        return kw
    return {k: ("glorot_uniform" if v == "orthogonal" else v) for k, v in kw.items()}


def add_init_reg(rng, kw, inits, regs):
    """Random initializer / regularizer arguments (kept by get_config; regularizers add layer.losses)."""
    for k in inits:
        if rand_bool(rng, 0.3):
            kw[k] = rand_initializer(rng, k in ("kernel_initializer", "depthwise_initializer",
                                                "embeddings_initializer"))
    for k in regs:
        if rand_bool(rng, 0.2):
            kw[k] = rand_regularizer(rng)


def case_dense(rng):
    kw = {"units": int(rng.integers(1, 7))}
    add_init_reg(rng, kw, ["kernel_initializer", "bias_initializer"],
                 ["kernel_regularizer", "bias_regularizer", "activity_regularizer"])
    if rand_bool(rng):
        kw["activation"] = pick(rng, ["relu", "tanh", "sigmoid", "linear", "softmax", "elu"])
    if rand_bool(rng, 0.3):
        kw["use_bias"] = False
    rank = int(rng.integers(2, 5))
    shape = tuple(int(rng.integers(1, 5)) for _ in range(rank))
    return kw, shape, {}


def _conv_common(rng, kw, depthwise):
    k = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    kw["kernel_size"] = k if rand_bool(rng) else k[0]
    if not isinstance(kw["kernel_size"], tuple):
        k = (k[0], k[0])
    dil = (1, 1)
    if rand_bool(rng, 0.3):
        dil = (int(rng.integers(1, 3)), int(rng.integers(1, 3)))
        kw["dilation_rate"] = dil
    elif rand_bool(rng):
        kw["strides"] = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if rand_bool(rng):
        kw["padding"] = pick(rng, ["valid", "same"])
    fmt = "channels_last"
    if rand_bool(rng, 0.3):
        fmt = kw["data_format"] = "channels_first"
    if rand_bool(rng):
        kw["activation"] = pick(rng, ["relu", "tanh", "linear"])
    if rand_bool(rng, 0.25):
        kw["use_bias"] = False
    eff = [(k[i] - 1) * dil[i] + 1 for i in range(2)]
    h, w = eff[0] + int(rng.integers(0, 4)), eff[1] + int(rng.integers(0, 4))
    return fmt, h, w


def case_conv2d(rng):
    kw = {"filters": int(rng.integers(1, 5))}
    add_init_reg(rng, kw, ["kernel_initializer", "bias_initializer"],
                 ["kernel_regularizer", "bias_regularizer", "activity_regularizer"])
    fmt, h, w = _conv_common(rng, kw, False)
    c = int(rng.integers(1, 4))
    if rand_bool(rng, 0.25):
        g = int(rng.integers(2, 4))
        kw["groups"] = g
        kw["filters"] = g * int(rng.integers(1, 3))
        c = g * int(rng.integers(1, 3))
    return kw, image_shape(rng, fmt, int(rng.integers(1, 4)), h, w, c), {}


def case_depthwise_conv2d(rng):
    kw = {}
    add_init_reg(rng, kw, ["depthwise_initializer", "bias_initializer"],
                 ["depthwise_regularizer", "bias_regularizer", "activity_regularizer"])
    fmt, h, w = _conv_common(rng, kw, True)
    if rand_bool(rng):
        kw["depth_multiplier"] = int(rng.integers(1, 4))
    c = int(rng.integers(1, 4))
    return kw, image_shape(rng, fmt, int(rng.integers(1, 4)), h, w, c), {}


def _case_pool(rng):
    kw = {}
    p = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if rand_bool(rng, 0.7):
        kw["pool_size"] = p if rand_bool(rng) else p[0]
        if not isinstance(kw["pool_size"], tuple):
            p = (p[0], p[0])
    else:
        p = (2, 2)
    if rand_bool(rng):
        kw["strides"] = (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if rand_bool(rng):
        kw["padding"] = pick(rng, ["valid", "same"])
    fmt = "channels_last"
    if rand_bool(rng, 0.3):
        fmt = kw["data_format"] = "channels_first"
    h, w = p[0] + int(rng.integers(0, 4)), p[1] + int(rng.integers(0, 4))
    return kw, image_shape(rng, fmt, int(rng.integers(1, 4)), h, w, int(rng.integers(1, 4))), {"tol": POOL_TOL}


def _case_global_pool(rng):
    kw = {}
    fmt = "channels_last"
    if rand_bool(rng, 0.4):
        fmt = kw["data_format"] = "channels_first"
    if rand_bool(rng):
        kw["keepdims"] = rand_bool(rng)
    return kw, image_shape(rng, fmt, int(rng.integers(1, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 5)),
                           int(rng.integers(1, 5))), {"tol": POOL_TOL}


def case_flatten(rng):
    kw = {}
    rank = int(rng.integers(2, 6))
    if rand_bool(rng, 0.4):
        kw["data_format"] = pick(rng, ["channels_first", "channels_last"])
    return kw, tuple(int(rng.integers(1, 4)) for _ in range(rank)), {}


def case_reshape(rng):
    dims = [int(rng.integers(1, 4)) for _ in range(int(rng.integers(1, 4)))]
    n = int(np.prod(dims))
    target, rest = [], n
    for _ in range(int(rng.integers(1, 4))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0]
        d = pick(rng, divs)
        target.append(d)
        rest //= d
    target[-1] *= rest
    target = [int(t) for t in rng.permutation(target)]
    if rand_bool(rng, 0.4):
        target[int(rng.integers(0, len(target)))] = -1
    return {"target_shape": tuple(target)}, tuple([int(rng.integers(1, 4))] + dims), {}


def case_zero_padding2d(rng):
    kw = {}
    r = rng.random()
    if r < 0.25:
        kw["padding"] = int(rng.integers(0, 3))
    elif r < 0.5:
        kw["padding"] = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
    elif r < 0.85:
        kw["padding"] = ((int(rng.integers(0, 3)), int(rng.integers(0, 3))),
                         (int(rng.integers(0, 3)), int(rng.integers(0, 3))))
    fmt = "channels_last"
    if rand_bool(rng, 0.3):
        fmt = kw["data_format"] = "channels_first"
    return kw, image_shape(rng, fmt, int(rng.integers(1, 3)), int(rng.integers(1, 4)), int(rng.integers(1, 4)),
                           int(rng.integers(1, 4))), {}


def case_dropout(rng):
    kw = {"rate": float(np.round(rng.uniform(0, 0.9), 3))}
    if rand_bool(rng, 0.3):
        kw["seed"] = int(rng.integers(0, 1000))
    rank = int(rng.integers(2, 5))
    shape = tuple(int(rng.integers(1, 5)) for _ in range(rank))
    if rand_bool(rng, 0.3):
        kw["noise_shape"] = tuple([None] + [pick(rng, [1, d]) for d in shape[1:]])
    training = (False,)
    if rand_bool(rng, 0.4):
        kw["rate"] = 0.0
        training = (False, True)
    return kw, shape, {"training": training}


def case_activation(rng):
    name = pick(rng, ACTIVATIONS_TF24)
    return {"activation": name}, tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(2, 5)))), {
        "scale": 3.0, "tol": GELU_TOL if name == "gelu" else {}}


def case_relu(rng):
    kw = {}
    if rand_bool(rng):
        kw["max_value"] = float(np.round(rng.uniform(0.2, 2.0), 2))
    if rand_bool(rng):
        kw["negative_slope"] = float(np.round(rng.uniform(0.0, 0.5), 2))
    if rand_bool(rng):
        kw["threshold"] = float(np.round(rng.uniform(-0.5, 0.5), 2))
        if kw["threshold"] < 0:
            kw["threshold"] = -kw["threshold"]  # Keras rejects negative thresholds
    return kw, tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(2, 5)))), {"scale": 3.0}


def case_leaky_relu(rng):
    kw = {}
    if rand_bool(rng, 0.7):
        kw["alpha"] = float(np.round(rng.uniform(0.0, 1.0), 3))
    return kw, tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(2, 5)))), {}


def case_softmax(rng):
    rank = int(rng.integers(2, 5))
    kw = {}
    if rand_bool(rng, 0.7):
        kw["axis"] = int(rng.integers(-rank, rank))
        if kw["axis"] in (0, -rank):
            kw["axis"] = -1
    return kw, tuple(int(rng.integers(1, 5)) for _ in range(rank)), {"scale": 4.0}


def norm_grad_scale(epsilon):
    """Input gradients of a normalization are differences of terms of size |dy| / sqrt(var + epsilon) that
    cancel (exactly to 0 over an axis of size 1): rounding errors scale with 1/sqrt(epsilon), so does the
    absolute tolerance of those gradients (capped; per dtype in check_layer)."""
    return 1.0 / np.sqrt(epsilon)


def case_batch_normalization(rng):
    rank = pick(rng, [2, 3, 4, 4])
    kw = {}
    add_init_reg(rng, kw, ["beta_initializer", "gamma_initializer", "moving_mean_initializer",
                           "moving_variance_initializer"], ["beta_regularizer", "gamma_regularizer"])
    axis = -1
    if rand_bool(rng, 0.5):
        axis = kw["axis"] = int(pick(rng, [a for a in range(-rank, rank) if a not in (0, -rank)]))
    if rand_bool(rng):
        kw["momentum"] = float(np.round(rng.uniform(0.5, 0.99), 3))
    if rand_bool(rng):
        kw["epsilon"] = float(10.0 ** rng.uniform(-5, -1))
    if rand_bool(rng, 0.3):
        kw["center"] = False
    if rand_bool(rng, 0.3):
        kw["scale"] = False
    shape = tuple([int(rng.integers(2, 5))] + [int(rng.integers(1, 5)) for _ in range(rank - 1)])
    return kw, shape, {"training": (False, True), "random_weights": True,
                       "grad_atol_scale": norm_grad_scale(kw.get("epsilon", 1e-3))}


def case_layer_normalization(rng):
    rank = int(rng.integers(2, 5))
    kw = {}
    add_init_reg(rng, kw, ["beta_initializer", "gamma_initializer"], ["beta_regularizer", "gamma_regularizer"])
    if rand_bool(rng, 0.6):
        axes = [a for a in range(1, rank) if rand_bool(rng)] or [rank - 1]
        if len(axes) == 1 and rand_bool(rng):
            kw["axis"] = axes[0] - rank if rand_bool(rng) else axes[0]
        else:
            kw["axis"] = axes
    if rand_bool(rng):
        kw["epsilon"] = float(10.0 ** rng.uniform(-5, -1))
    if rand_bool(rng, 0.3):
        kw["center"] = False
    if rand_bool(rng, 0.3):
        kw["scale"] = False
    shape = tuple(int(rng.integers(1, 5)) for _ in range(rank))
    return kw, shape, {"random_weights": True, "grad_atol_scale": norm_grad_scale(kw.get("epsilon", 1e-3))}


def case_embedding(rng):
    kw = {"input_dim": int(rng.integers(1, 10)), "output_dim": int(rng.integers(1, 6))}
    add_init_reg(rng, kw, ["embeddings_initializer"], ["embeddings_regularizer", "activity_regularizer"])
    rank = int(rng.integers(1, 4))
    shape = tuple(int(rng.integers(1, 5)) for _ in range(rank))
    if rank == 2 and rand_bool(rng, 0.3):
        kw["input_length"] = shape[1]
    if rand_bool(rng, 0.2):
        kw["mask_zero"] = True
        kw["input_dim"] = max(kw["input_dim"], 2)
    return kw, shape, {"inputs": "int:%d" % kw["input_dim"]}


def _merge_shapes(rng, n, bcast):
    rank = int(rng.integers(2, 5))
    base = [int(rng.integers(1, 5)) for _ in range(rank)]
    shapes = []
    for _ in range(n):
        s = list(base)
        if bcast:
            for i in range(1, rank):
                if rand_bool(rng, 0.25):
                    s[i] = 1
        shapes.append(tuple(s))
    return shapes


def case_add(rng):
    return {}, _merge_shapes(rng, int(rng.integers(2, 5)), False), {}


def case_multiply(rng):
    return {}, _merge_shapes(rng, int(rng.integers(2, 5)), False), {}


def case_concatenate(rng):
    rank = int(rng.integers(2, 5))
    kw = {}
    axis = -1
    if rand_bool(rng, 0.7):
        axis = kw["axis"] = int(pick(rng, [a for a in range(-rank, rank) if a not in (0, -rank)]))
    base = [int(rng.integers(1, 4)) for _ in range(rank)]
    shapes = []
    for _ in range(int(rng.integers(2, 5))):
        s = list(base)
        s[axis] = int(rng.integers(1, 4))
        shapes.append(tuple(s))
    return kw, shapes, {}


CASES = {
    "Dense": case_dense,
    "Conv2D": case_conv2d,
    "DepthwiseConv2D": case_depthwise_conv2d,
    "MaxPooling2D": _case_pool,
    "AveragePooling2D": _case_pool,
    "GlobalAveragePooling2D": _case_global_pool,
    "GlobalMaxPooling2D": _case_global_pool,
    "Flatten": case_flatten,
    "Reshape": case_reshape,
    "ZeroPadding2D": case_zero_padding2d,
    "Dropout": case_dropout,
    "Activation": case_activation,
    "ReLU": case_relu,
    "LeakyReLU": case_leaky_relu,
    "Softmax": case_softmax,
    "BatchNormalization": case_batch_normalization,
    "LayerNormalization": case_layer_normalization,
    "Embedding": case_embedding,
    "Add": case_add,
    "Concatenate": case_concatenate,
    "Multiply": case_multiply,
}


# ---- the comparison ---------------------------------------------------------------------------------------------

def make_inputs(rng, shapes, dtype, opts):
    multi = isinstance(shapes, list)
    shapes = shapes if multi else [shapes]
    kind = opts.get("inputs", "float")
    scale = opts.get("scale", 1.0)
    if kind.startswith("int:"):
        hi = int(kind[4:])
        xs = [rng.integers(0, hi, size=s).astype(np.int32) for s in shapes]
    else:
        xs = [random_array(rng, s, dtype, -scale, scale) for s in shapes]
    return xs, multi


def keras_build(layer, shapes):
    """layer.build inside the layer's name scope, as a first call does (weights named "<layer>/kernel:0")."""
    with tf.name_scope(layer.name):
        layer.build(shapes)


def tf_json_kwargs(kw):
    """kwargs as the JSON a config would hold (tuples -> lists)."""
    return json.loads(json.dumps(kw))


def run_tf(fwd, layer, xs, multi, training, og_rng, og=None):
    """fwd(inputs, training) runs the reference; layer holds its trainable weights. The upstream gradient is
    random (from og_rng) unless given."""
    ins = [tf.constant(x) for x in xs]
    float_ins = [t for t in ins if t.dtype.is_floating]
    with tf.GradientTape() as tape:
        tape.watch(float_ins)
        y = fwd(ins if multi else ins[0], training)
    if og is None:
        og = random_array(og_rng, y.shape.as_list(), y.dtype.name)
    srcs = float_ins + list(layer.trainable_weights)
    grads = tape.gradient(y, srcs, output_gradients=tf.constant(og))
    grads = [None if g is None else tf.convert_to_tensor(g).numpy() for g in grads]
    return y.numpy(), og, grads, [w.numpy() for w in layer.weights]


def _probe(fwd, layer, shapes, dtype):
    """True when fwd runs forward and backward in TensorFlow (its CPU kernels lack some layouts/strides)."""
    multi = isinstance(shapes, list)
    xs = [tf.zeros(sh, dtype=dtype) for sh in (shapes if multi else [shapes])]
    try:
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = fwd(xs if multi else xs[0], False)
        tape.gradient(y, xs + list(layer.trainable_weights))
        return True
    except (tf.errors.UnimplementedError, tf.errors.InvalidArgumentError):
        return False


def _same_pads(n, k, s, d):
    eff = (k - 1) * d + 1
    total = max((-(-n // s) - 1) * s + eff - n, 0)
    return total // 2, total - total // 2


def _depthwise_composed(tl, shape_nhwc):
    """DepthwiseConv2D from ops TensorFlow's CPU kernels have for any strides: explicit SAME padding, a
    stride-1 VALID depthwise convolution, then every stride-th row/column (exactly the strided result)."""
    cfg = tl.get_config()
    (kh, kw), (sh, sw), (dh, dw) = cfg["kernel_size"], cfg["strides"], cfg["dilation_rate"]

    def fwd(x, training):
        if cfg["padding"] == "same":
            ph = _same_pads(shape_nhwc[1], kh, sh, dh)
            pw = _same_pads(shape_nhwc[2], kw, sw, dw)
            x = tf.pad(x, [[0, 0], list(ph), list(pw), [0, 0]])
        y = tf.nn.depthwise_conv2d(x, tl.depthwise_kernel, [1, 1, 1, 1], "VALID", dilations=[dh, dw])
        y = y[:, ::sh, ::sw, :]
        if cfg["use_bias"]:
            y = tf.nn.bias_add(y, tl.bias)
        return tl.activation(y)
    return fwd


def reference(class_name, tl, kw, dtype, shapes):
    """(fwd, layer, direct) computing tf_keras's result, layer holding the trainable weights, direct when fwd is
    the layer's own call. TensorFlow's CPU kernels
    lack some cases (NCHW float64 Conv2D, NCHW MaxPoolGrad, unequal depthwise strides): then a channels_last
    twin with the same weights runs on transposed inputs, or DepthwiseConv2D is composed from other ops."""
    def direct(ins, training):
        return tl(ins, training=training)
    strides = tl.get_config().get("strides", (1, 1))
    # TensorFlow's CPU depthwise kernels reject unequal strides, except oneDNN's bfloat16 path, which accepts
    # them and computes wrong values: always compose those.
    unequal_depthwise = class_name == "DepthwiseConv2D" and strides[0] != strides[1]
    if not unequal_depthwise and _probe(direct, tl, shapes, dtype):
        return direct, tl, True
    first = kw.get("data_format") == "channels_first"
    ref, nhwc = tl, shapes
    if first:
        n, c, h, w = shapes
        nhwc = (n, h, w, c)
        ref = getattr(tf_keras.layers, class_name)(dtype=dtype, **dict(kw, data_format="channels_last"))
        keras_build(ref, nhwc)
        ref.set_weights(tl.get_weights())
    inner = (lambda x, training: ref(x, training=training))
    if unequal_depthwise or (class_name == "DepthwiseConv2D" and not _probe(inner, ref, nhwc, dtype)):
        inner = _depthwise_composed(ref, nhwc)
    if not first:
        return inner, ref, False

    def fwd(x, training):
        y = inner(tf.transpose(x, (0, 2, 3, 1)), training)
        return tf.transpose(y, (0, 3, 1, 2)) if y.shape.rank == 4 else y
    return fwd, ref, False


def run_tfc(layer, xs, multi, training, og):
    ins = [tfc.constant(x) for x in xs]
    float_ins = [t for t in ins if t.dtype.is_floating]
    with tfc.GradientTape() as tape:
        tape.watch(float_ins)
        y = layer(ins if multi else ins[0], training=training)
    srcs = float_ins + layer.trainable_weights
    grads = tape.gradient(y, srcs, output_gradients=tfc.constant(og))
    grads = [None if g is None else g.numpy() for g in grads]
    return y.numpy(), grads, [w.numpy() for w in layer.weights]


class Truth:
    """The float64 result of the same layer, weights, inputs and upstream gradient (computed on demand)."""

    def __init__(self, class_name, kw, shapes, weights, xs, multi, training, og):
        self.args = (class_name, kw, shapes, weights, xs, multi, training, og)
        self.value = None

    def get(self):
        if self.value is None:
            class_name, kw, shapes, weights, xs, multi, training, og = self.args
            t64 = getattr(tf_keras.layers, class_name)(dtype="float64", **kw)
            keras_build(t64, shapes)
            t64.set_weights([np.asarray(w, np.float64) for w in weights])
            fwd, ref, _ = reference(class_name, t64, kw, "float64", shapes)
            xs64 = [x if x.dtype.kind in "iu" else np.asarray(x, np.float64) for x in xs]
            y, _, grads, _ = run_tf(fwd, ref, xs64, multi, training, None, og=np.asarray(og, np.float64))
            self.value = [y] + grads
        return self.value


def close_or_as_accurate(got, want, rtol, atol, msg, dtype, truth, index):
    """got matches want within the tolerance; for float16/bfloat16 it may instead be at least as close to the
    float64 result as TensorFlow's own (within 2x): both round differently, and where TensorFlow keeps more
    precision (e.g. tf.nn.moments' float32 statistics) the mismatch must show up as lost accuracy."""
    try:
        assert_close(got, want, rtol=rtol, atol=atol, msg=msg)
    except AssertionError:
        if dtype not in ("float16", "bfloat16"):
            raise
        exact = truth.get()[index]
        e_tfc = float(np.max(np.abs(np.asarray(got, np.float64) - exact), initial=0.0))
        e_tf = float(np.max(np.abs(np.asarray(want, np.float64) - exact), initial=0.0))
        if e_tfc > 2.0 * e_tf:
            raise AssertionError("%sbeyond the tolerance of TensorFlow's result and less accurate: max error vs the "
                                 "float64 result %g, TensorFlow's %g" % (msg, e_tfc, e_tf))


def check_layer(class_name, kw, shapes, dtype, rng, opts):
    """One random case: tf_keras layer from kw, tfc layer from its get_config(), same weights; outputs,
    gradients, weights after each call and the built config must agree."""
    kw = for_dtype(kw, dtype)
    what = "%s(%s) dtype=%s input %s" % (class_name, ", ".join("%s=%r" % i for i in kw.items()), dtype, shapes)
    print(what)
    tl = getattr(tf_keras.layers, class_name)(dtype=dtype, **kw)
    multi = isinstance(shapes, list)
    keras_build(tl, shapes)
    if opts.get("random_weights"):  # make gamma/beta/moving statistics non-trivial
        ws = []
        for w in tl.weights:
            v = random_array(rng, w.shape.as_list(), dtype, 0.5, 1.5) if "variance" in w.name or "gamma" in w.name \
                else random_array(rng, w.shape.as_list(), dtype, -0.5, 0.5)
            ws.append(v)
        tl.set_weights(ws)
    cfg = tl.get_config()
    ml = K.layer_from_config(class_name, norm(cfg))
    assert ml.name == tl.name
    ml.build(shapes if multi else shapes)
    assert_config_equal(ml.get_config(), cfg, what + " (config of the tfc layer built from tf_keras's config)")
    ml.set_weights(tl.get_weights())
    assert [w.name for w in ml.weights] == [w.name for w in tl.weights], what
    assert [w.name for w in ml.trainable_weights] == [w.name for w in tl.trainable_weights], what
    assert [w.name for w in ml.non_trainable_weights] == [w.name for w in tl.non_trainable_weights], what
    assert ml.count_params() == sum(int(np.prod(w.shape)) for w in tl.weights), what
    fwd, ref, direct = reference(class_name, tl, kw, dtype, shapes)
    tol = dict(TOL)
    tol.update(opts.get("tol", {}))
    rtol, atol = tol[dtype]
    for training in opts.get("training", (False,)):
        xs, multi = make_inputs(rng, shapes, dtype, opts)
        before = tl.get_weights()
        want, og, want_g, want_w = run_tf(fwd, ref, xs, multi, training, rng)
        got, got_g, got_w = run_tfc(ml, xs, multi, training, og)
        truth = Truth(class_name, kw, shapes, before, xs, multi, training, og)
        tag = "%s training=%s" % (what, training)
        assert str(got.dtype) == str(want.dtype), "%s: output dtype %s, tf_keras %s" % (tag, got.dtype, want.dtype)
        close_or_as_accurate(got, want, rtol, atol, "%s output: " % tag, dtype, truth, 0)
        assert len(got_g) == len(want_g)
        names = ["input %d" % i for i in range(len(got_g) - len(tl.trainable_weights))] + \
                [w.name for w in tl.trainable_weights]
        for k, (n, g, w) in enumerate(zip(names, got_g, want_g)):
            if w is None:
                assert g is None or not np.any(g), "%s: gradient of %s is None in tf_keras" % (tag, n)
                continue
            assert g is not None, "%s: no gradient for %s in tfc" % (tag, n)
            cap = 30.0 if dtype in ("float32", "float64") else 8.0
            gatol = atol * min(opts.get("grad_atol_scale", 1.0), cap) if n.startswith("input") else atol
            close_or_as_accurate(g, w, rtol, gatol, "%s gradient of %s: " % (tag, n), dtype, truth, k + 1)
        for w, a, b in zip(tl.weights, got_w, want_w):
            assert_close(a, b, rtol=rtol, atol=atol, msg="%s weight %s after the call: " % (tag, w.name))
        if direct:  # weight regularizers plus the latest call's activity regularizer, summed
            want_l = float(np.sum([np.float64(x.numpy()) for x in tl.losses])) if tl.losses else None
            got_l = ml.losses
            assert (want_l is None) == (not got_l), "%s: layer.losses %s, tf_keras %s" % (tag, got_l, tl.losses)
            if want_l is not None:
                assert_close(np.float64(got_l[0].numpy()), want_l, rtol=max(rtol, 1e-5), atol=atol,
                             msg="%s layer.losses: " % tag)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("class_name", sorted(CASES))
def test_layer_matches_keras(class_name, dtype, rng):
    require_layer(class_name)
    for _ in range(TRIALS):
        kw, shapes, opts = CASES[class_name](rng)
        check_layer(class_name, kw, shapes, dtype, rng, opts)


@pytest.mark.parametrize("class_name", sorted(CASES))
def test_partial_config_matches_keras(class_name, rng):
    """A tfc layer made from only the chosen arguments reports the same get_config as tf_keras (defaults,
    normalisation such as kernel_size=3 -> [3, 3], automatic names), before and after building."""
    require_layer(class_name)
    for _ in range(TRIALS):
        kw, shapes, opts = CASES[class_name](rng)
        if rand_bool(rng, 0.3):
            kw["dtype"] = pick(rng, DTYPES)
        if rand_bool(rng, 0.3):
            kw["trainable"] = False
        if rand_bool(rng, 0.2):
            kw["name"] = "my_layer_%d" % int(rng.integers(0, 100))
        kw = for_dtype(kw, kw.get("dtype", "float32"))
        what = "%s(%s)" % (class_name, ", ".join("%s=%r" % i for i in kw.items()))
        clear_sessions()
        tl = getattr(tf_keras.layers, class_name)(**kw)
        ml = K.layer_from_config(class_name, tf_json_kwargs(kw))
        assert_config_equal(ml.get_config(), tl.get_config(), what + " before build")
        keras_build(tl, shapes)
        ml.build(shapes)
        assert_config_equal(ml.get_config(), tl.get_config(), what + " after build")
        # the config round-trips through from_config
        again = K.layer_from_config(class_name, ml.get_config())
        assert_config_equal(again.get_config(), ml.get_config(), what + " round trip")


@pytest.mark.parametrize("name", ACTIVATIONS_TF24 + ACTIVATIONS_TFC + ACTIVATIONS_NEWER)
@pytest.mark.parametrize("dtype", DTYPES)
def test_activation_names(name, dtype, rng):
    """Activation(name) for every activation name, values and gradients (inputs around the interesting range,
    including the hard_sigmoid / relu6 kinks)."""
    require_layer("Activation")
    try:
        ml = K.layer_from_config("Activation", {"activation": name, "dtype": dtype, "name": "act"})
        ml.build((2, 3))
    except tfc.InvalidArgumentError as e:
        if name in ACTIVATIONS_NEWER and "Unknown activation" in str(e):
            pytest.skip("tfc follows TensorFlow 2.4's activations; %s is newer (%s)" % (name, e))
        raise
    shape = tuple(int(rng.integers(1, 5)) for _ in range(int(rng.integers(2, 4))))
    x = random_array(rng, shape, dtype, -7, 7)
    tl = tf_keras.layers.Activation(name, dtype=dtype, name="act")
    want, og, want_g, _ = run_tf(lambda v, t: tl(v, training=t), tl, [x], False, False, rng)
    got, got_g, _ = run_tfc(ml, [x], False, False, og)
    rtol, atol = TOL[dtype]
    if name == "gelu" and dtype == "float64":
        rtol, atol = GELU_TOL[dtype]
    assert_close(got, want, rtol=rtol, atol=atol, msg="activation %s: " % name)
    assert_close(got_g[0], want_g[0], rtol=rtol, atol=atol, msg="activation %s gradient: " % name)
    assert_config_equal(ml.get_config(), tl.get_config(), "Activation(%s)" % name)


def test_dense_activation_names(rng):
    """Dense(activation=name) for every name tfc knows: the activation is applied after the bias."""
    require_layer("Dense")
    for name in ACTIVATIONS_TF24 + ACTIVATIONS_TFC:
        kw = {"units": int(rng.integers(1, 5)), "activation": name}
        check_layer("Dense", kw, (int(rng.integers(1, 4)), int(rng.integers(1, 5))), "float32", rng, {})


def test_dropout_training_statistics(rng):
    """Dropout(rate) in training: every output is 0 or x / (1 - rate), about rate of them dropped; noise_shape
    drops whole broadcast slices; rate 0 and inference are the identity."""
    require_layer("Dropout")
    rate = float(rng.uniform(0.2, 0.7))
    x = random_array(rng, (64, 50), "float32", 0.5, 1.5)
    d = K.layer_from_config("Dropout", {"rate": rate})
    y = d(x, training=True).numpy()
    kept = y != 0
    assert_close(y[kept], x[kept] / (1 - rate), rtol=1e-6, atol=1e-6)
    frac = 1 - kept.mean()
    assert abs(frac - rate) < 0.06, "dropped fraction %.3f for rate %.3f" % (frac, rate)
    assert_close(d(x, training=False), x)
    d2 = K.layer_from_config("Dropout", {"rate": rate, "noise_shape": [None, 1]})
    y2 = d2(x, training=True).numpy()
    rows = (y2 != 0).all(axis=1) | (y2 == 0).all(axis=1)
    assert rows.all(), "noise_shape [None, 1] must drop whole rows"


def test_batch_normalization_moving_statistics_over_steps(rng):
    """Several training calls: tfc's moving mean/variance follow tf_keras's after each call (fused 4-D path and
    the generic path)."""
    require_layer("BatchNormalization")
    for shape, axis in [((4, 3, 3, 2), -1), ((5, 3), -1), ((4, 2, 3, 3), 1), ((3, 4, 2), 1)]:
        momentum = float(rng.uniform(0.5, 0.95))
        tl = tf_keras.layers.BatchNormalization(axis=axis, momentum=momentum)
        tl.build(shape)
        ml = K.layer_from_config("BatchNormalization", norm(tl.get_config()))
        ml.build(shape)
        ml.set_weights(tl.get_weights())
        for step in range(3):
            x = random_array(rng, shape, "float32", -2, 2) + step
            want = tl(x, training=True).numpy()
            got = ml(x, training=True).numpy()
            assert_close(got, want, rtol=1e-4, atol=1e-5, msg="shape %s step %d output: " % (shape, step))
            for w, a in zip(tl.weights, ml.get_weights()):
                assert_close(a, w.numpy(), rtol=1e-4, atol=1e-5, msg="shape %s step %d %s: " % (shape, step, w.name))
        x = random_array(rng, shape, "float32", -2, 2)
        assert_close(ml(x, training=False), tl(x, training=False), rtol=1e-4, atol=1e-5,
                     msg="shape %s inference after training: " % (shape,))


def test_layer_names_and_counters():
    """Automatic names follow Keras's per-class counters and clear_session resets them."""
    require_layer("Dense")
    clear_sessions()
    names_tf = [tf_keras.layers.Dense(1).name, tf_keras.layers.Dense(1).name, tf_keras.layers.ReLU().name,
                tf_keras.layers.LeakyReLU().name, tf_keras.layers.Dense(1).name]
    names_tfc = [K.layer_from_config("Dense", {"units": 1}).name, K.layer_from_config("Dense", {"units": 1}).name,
                 K.layer_from_config("ReLU", {}).name, K.layer_from_config("LeakyReLU", {}).name,
                 K.layer_from_config("Dense", {"units": 1}).name]
    assert names_tfc == names_tf
    clear_sessions()
    assert K.layer_from_config("Dense", {"units": 1}).name == "dense"


def test_layer_trainable_flag_moves_weights(rng):
    """layer.trainable = False moves the weights to non_trainable_weights (Keras's order)."""
    require_layer("Dense")
    ml = K.layer_from_config("Dense", {"units": 3})
    ml.build((2, 4))
    assert [w.name for w in ml.trainable_weights] == [ml.name + "/kernel:0", ml.name + "/bias:0"]
    ml.trainable = False
    assert ml.trainable_weights == [] and len(ml.non_trainable_weights) == 2
    assert ml.get_config()["trainable"] is False
