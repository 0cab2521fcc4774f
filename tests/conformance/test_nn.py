"""Conformance of the nn ops (activations, BiasAdd, softmax, cross-entropy, fused batch norm, L2Loss) with
TensorFlow: outputs on fresh random inputs and shapes, gradients and second derivatives against
tf.GradientTape, errors, numerical stability on huge logits, and the C wrappers of include/tfc/ops/nn.h."""
import ctypes

import numpy as np
import pytest
import tensorflow as tf

import tfc
from conftest import (FLOAT_DTYPES, assert_both_raise, assert_close, assert_grad_matches, assert_op_matches,
                      np_dtype, random_array, random_shape, require_ops, run_tf, run_tfc, tolerance)

ACTIVATIONS = ["Relu", "Relu6", "LeakyRelu", "Elu", "Selu", "Softplus", "Softsign"]
# (grad op, name of its second input, forward op producing that input from features, or None for features)
ACT_GRADS = [("ReluGrad", "features", None), ("Relu6Grad", "features", None), ("LeakyReluGrad", "features", None),
             ("EluGrad", "outputs", "Elu"), ("SeluGrad", "outputs", "Selu"), ("SoftplusGrad", "features", None),
             ("SoftsignGrad", "features", None)]
INT_RELU_DTYPES = ["int8", "uint8", "int16", "int32", "int64"]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, 6.0, 7.0, -1e-4, 1e-4, 20.0, -20.0, 100.0, -100.0, 1e4, -1e4, 0.5]


def _act_attrs(op, rng):
    return {"alpha": float(rng.choice([0.2, 0.01, 0.5, 1.5]))} if op == "LeakyRelu" else {}


def _typed(op, inputs):
    """LeakyRelu's T has a default (float32) to which tf.raw_ops converts numpy inputs: give it tensors."""
    return {k: tf.constant(v) for k, v in inputs.items()} if op.startswith("LeakyRelu") else inputs


def _both(fn):
    """fn(lib) for tfc and TensorFlow; compares the (nested) results, None with None."""
    got, want = fn(tfc), fn(tf)

    def cmp(g, w, path):
        if isinstance(w, (list, tuple)):
            assert isinstance(g, (list, tuple)) and len(g) == len(w), path
            for i, (a, b) in enumerate(zip(g, w)):
                cmp(a, b, "%s[%d]" % (path, i))
        elif w is None:
            assert g is None, "%s: TensorFlow gives None, tfc a value" % path
        else:
            assert g is not None, "%s: tfc gives None, TensorFlow a value" % path
            if isinstance(w, tf.IndexedSlices):
                w = tf.convert_to_tensor(w)
            assert_close(g, w, dtype=w.dtype.name, msg=path + ": ")
    cmp(got, want, "result")
    return got


def _const(lib, a):
    return lib.constant(np.asarray(a))


# ---- activations --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ACTIVATIONS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_activation_forward(rng, op, dtype):
    require_ops(op)
    for _ in range(4):
        x = random_array(rng, random_shape(rng), dtype, -8, 8)
        assert_op_matches(op, _typed(op, dict(features=x)), _act_attrs(op, rng))


@pytest.mark.parametrize("op", ACTIVATIONS)
def test_activation_special_values(op):
    require_ops(op)
    for dtype in ["float32", "float64"]:
        x = np.array(SPECIALS, dtype=np_dtype(dtype))
        assert_op_matches(op, _typed(op, dict(features=x)))


@pytest.mark.parametrize("op", ["Relu", "Relu6"])
@pytest.mark.parametrize("dtype", INT_RELU_DTYPES)
def test_relu_integers(rng, op, dtype):
    for _ in range(3):
        x = random_array(rng, random_shape(rng), dtype, -10, 10)
        assert_op_matches(op, dict(features=x))


@pytest.mark.parametrize("op,second,fwd", ACT_GRADS)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_activation_grad_ops(rng, op, second, fwd, dtype):
    require_ops(op)
    attrs = {"alpha": 0.3} if op == "LeakyReluGrad" else {}
    for _ in range(3):
        s = random_shape(rng)
        f = random_array(rng, s, dtype, -8, 8)
        if fwd:  # EluGrad / SeluGrad take the forward op's outputs
            f = run_tf(fwd, dict(features=f)).numpy()
        assert_op_matches(op, _typed(op, {"gradients": random_array(rng, s, dtype), second: f}), attrs)


@pytest.mark.parametrize("op", ["ReluGrad", "Relu6Grad"])
def test_relu_grad_integers(rng, op):
    for dtype in INT_RELU_DTYPES:
        s = random_shape(rng)
        assert_op_matches(op, dict(gradients=random_array(rng, s, dtype), features=random_array(rng, s, dtype, -9, 9)))


@pytest.mark.parametrize("op", ACTIVATIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_gradient(rng, op, dtype):
    require_ops(op)
    for _ in range(3):
        x = random_array(rng, random_shape(rng, max_rank=3), dtype, -5, 5)
        assert_grad_matches(op, dict(features=x), _act_attrs(op, rng), rng=rng)


def _second_order(lib, op, x0, w1, w2, attrs):
    """d/dx <w2, d/dx <w1, op(x)>>."""
    x = _const(lib, x0)
    with lib.GradientTape() as outer:
        outer.watch(x)
        with lib.GradientTape() as inner:
            inner.watch(x)
            y = getattr(lib.raw_ops, op)(features=x, **attrs)
        g = inner.gradient(y, x, output_gradients=_const(lib, w1))
    return [g, outer.gradient(g, x, output_gradients=_const(lib, w2))]


# Softsign: TensorFlow registers no gradient for SoftsignGrad; tfc does (checked against the analytic form below).
@pytest.mark.parametrize("op", ["Relu", "Relu6", "LeakyRelu", "Elu", "Selu", "Softplus"])
def test_activation_second_order(rng, op):
    require_ops("ZerosLike", "Less", "SelectV2", "Mul", "Exp", "Neg", "RealDiv")
    attrs = _act_attrs(op, rng)
    for _ in range(2):
        s = random_shape(rng, min_rank=1, max_rank=3)
        x0, w1, w2 = (random_array(rng, s, "float64", -5, 5) for _ in range(3))
        _both(lambda lib: _second_order(lib, op, x0, w1, w2, attrs))


def test_softsign_second_order(rng):
    require_ops("Abs", "Sign", "Mul", "RealDiv", "AddV2")
    s = random_shape(rng, min_rank=1, max_rank=3, allow_zero=False)
    x0, w1, w2 = (random_array(rng, s, "float64", -5, 5) for _ in range(3))
    g, gg = _second_order(tfc, "Softsign", x0, w1, w2, {})
    d = 1 + np.abs(x0)
    assert_close(g, w1 / d ** 2)
    assert_close(gg, -2 * np.sign(x0) * w1 * w2 / d ** 3)


@pytest.mark.parametrize("op,second,fwd", ACT_GRADS[:-1])
def test_activation_grad_op_gradients(rng, op, second, fwd):
    """Gradients of the *Grad helpers themselves, vs TensorFlow."""
    require_ops("ZerosLike", "Less", "SelectV2", "Mul", "Exp", "Neg", "RealDiv", "AddV2")
    attrs = {"alpha": 0.3} if op == "LeakyReluGrad" else {}
    s = random_shape(rng, max_rank=3)
    f = random_array(rng, s, "float64", -5, 5)
    if fwd:
        f = run_tf(fwd, dict(features=f)).numpy()
    assert_grad_matches(op, {"gradients": random_array(rng, s, "float64"), second: f}, attrs, rng=rng)


# ---- BiasAdd --------------------------------------------------------------------------------------------------

def _bias_case(rng, dtype, fmt, allow_zero=True):
    rank = int(rng.integers(2, 6))
    shape = random_shape(rng, rank, rank, 5, allow_zero)
    c = shape[1] if fmt == "NCHW" else shape[-1]
    return random_array(rng, shape, dtype, -5, 5), random_array(rng, (c,), dtype, -5, 5)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int32", "int64", "int8", "uint8", "int16"])
def test_bias_add(rng, fmt, dtype):
    for _ in range(4):
        v, b = _bias_case(rng, dtype, fmt)
        assert_op_matches("BiasAdd", dict(value=v, bias=b), dict(data_format=fmt))
        if dtype in ("float16", "bfloat16"):
            # TensorFlow sums these in the narrow type; tfc in float32: compare with the exact sums
            axes = tuple(i for i in range(v.ndim) if i != (1 if fmt == "NCHW" else v.ndim - 1))
            got = run_tfc("BiasAddGrad", dict(out_backprop=v), dict(data_format=fmt))
            assert_close(got, v.astype(np.float64).sum(axis=axes).astype(np_dtype(dtype)), dtype=dtype)
        else:
            assert_op_matches("BiasAddGrad", dict(out_backprop=v), dict(data_format=fmt))


def test_bias_add_large(rng):
    """Sizes that run the parallel, vectorised paths."""
    for fmt, shape in [("NHWC", (64, 7, 7, 96)), ("NCHW", (16, 32, 14, 14)), ("NHWC", (5000, 37))]:
        c = shape[1] if fmt == "NCHW" else shape[-1]
        v, b = random_array(rng, shape, "float32"), random_array(rng, (c,), "float32")
        assert_op_matches("BiasAdd", dict(value=v, bias=b), dict(data_format=fmt))
        assert_op_matches("BiasAddGrad", dict(out_backprop=v), dict(data_format=fmt), rtol=1e-4)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_bias_add_gradients(rng, fmt):
    require_ops("ZerosLike")
    for dtype in ["float32", "float64"]:
        v, b = _bias_case(rng, dtype, fmt)
        assert_grad_matches("BiasAdd", dict(value=v, bias=b), dict(data_format=fmt), rng=rng)
        assert_grad_matches("BiasAddGrad", dict(out_backprop=v), dict(data_format=fmt), rng=rng)


# ---- Softmax / LogSoftmax ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_softmax(rng, op, dtype):
    for _ in range(4):
        x = random_array(rng, random_shape(rng, 1, 4), dtype, -10, 10)
        assert_op_matches(op, dict(logits=x))


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_huge_logits(rng, op):
    for dtype in ["float32", "float64", "float16"]:
        x = random_array(rng, (int(rng.integers(1, 6)), int(rng.integers(2, 40))), dtype, -1e4, 1e4)
        got = assert_op_matches(op, dict(logits=x))[0]
        assert np.all(np.isfinite(got)), got
        if op == "Softmax":
            assert_close(got.astype(np.float64).sum(-1), np.ones(x.shape[0]), dtype=dtype)


def test_softmax_large(rng):
    for shape in [(512, 1000), (3, 70000), (20000, 3)]:
        x = random_array(rng, shape, "float32", -20, 20)
        assert_op_matches("Softmax", dict(logits=x))
        assert_op_matches("LogSoftmax", dict(logits=x))


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_gradients(rng, op):
    require_ops("Sum", "Mul", "Sub", "Exp")
    for dtype in ["float32", "float64"]:
        for lo in [-5, -1e4]:
            x = random_array(rng, random_shape(rng, 1, 3, allow_zero=False), dtype, lo, -lo)
            assert_grad_matches(op, dict(logits=x), rng=rng)


@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_second_order(rng, op):
    require_ops("Sum", "Mul", "Sub", "Exp")
    s = random_shape(rng, 1, 3, allow_zero=False)
    x0, w1, w2 = (random_array(rng, s, "float64", -3, 3) for _ in range(3))

    def f(lib):
        x = _const(lib, x0)
        with lib.GradientTape() as outer:
            outer.watch(x)
            with lib.GradientTape() as inner:
                inner.watch(x)
                y = getattr(lib.raw_ops, op)(logits=x)
            g = inner.gradient(y, x, output_gradients=_const(lib, w1))
        return [g, outer.gradient(g, x, output_gradients=_const(lib, w2))]
    _both(f)


# ---- cross-entropy ---------------------------------------------------------------------------------------------

def _probs(rng, shape, dtype):
    p = rng.random(shape) + 1e-3
    p = p / p.sum(-1, keepdims=True) if shape[-1] else p
    return p.astype(np_dtype(dtype))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_xent(rng, dtype):
    for _ in range(4):
        b, c = int(rng.integers(0, 6)), int(rng.integers(0, 8))
        f = random_array(rng, (b, c), dtype, -5, 5)
        labels = _probs(rng, (b, c), dtype) if rng.random() < 0.5 else random_array(rng, (b, c), dtype, 0, 1)
        assert_op_matches("SoftmaxCrossEntropyWithLogits", dict(features=f, labels=labels))


def test_xent_broadcast(rng):
    for fs, ls in [((1, 5), (4, 5)), ((4, 5), (1, 5)), ((5,), (3, 5)), ((3, 5), (5,)), ((3, 1), (3, 4)),
                   ((2, 3), ())]:
        assert_op_matches("SoftmaxCrossEntropyWithLogits",
                          dict(features=random_array(rng, fs, "float32", -3, 3),
                               labels=random_array(rng, ls, "float32", 0, 1)))


def test_xent_huge_logits(rng):
    for dtype in ["float32", "float64"]:
        f = random_array(rng, (4, 9), dtype, -1e4, 1e4)
        loss, back = assert_op_matches("SoftmaxCrossEntropyWithLogits", dict(features=f, labels=_probs(rng, (4, 9), dtype)))
        assert np.all(np.isfinite(loss)) and np.all(np.isfinite(back))
        labels = np.array([1, 8, 0, 3], np.int64)
        loss, back = assert_op_matches("SparseSoftmaxCrossEntropyWithLogits", dict(features=f, labels=labels))
        assert np.all(np.isfinite(loss)) and np.all(np.isfinite(back))


def test_xent_large(rng):
    for b, c in [(4096, 10), (64, 5000)]:
        f = random_array(rng, (b, c), "float32", -10, 10)
        assert_op_matches("SoftmaxCrossEntropyWithLogits", dict(features=f, labels=_probs(rng, (b, c), "float32")))
        labels = rng.integers(0, c, size=b).astype(np.int32)
        assert_op_matches("SparseSoftmaxCrossEntropyWithLogits", dict(features=f, labels=labels))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("ltype", ["int32", "int64"])
def test_sparse_xent(rng, dtype, ltype):
    for _ in range(4):
        b, c = int(rng.integers(0, 6)), int(rng.integers(1, 8))
        f = random_array(rng, (b, c), dtype, -5, 5)
        labels = rng.integers(0, c, size=b).astype(ltype)
        assert_op_matches("SparseSoftmaxCrossEntropyWithLogits", dict(features=f, labels=labels))


def test_sparse_xent_label_out_of_range(rng):
    f = random_array(rng, (3, 10), "float32")
    for labels in [np.array([1, 12, 3], np.int32), np.array([1, -1, 3], np.int64)]:
        tfc_exc, tf_exc = assert_both_raise("SparseSoftmaxCrossEntropyWithLogits", dict(features=f, labels=labels))
        bad = int(labels[1])
        want = "Received a label value of %d which is outside the valid range of [0, 10)." % bad
        assert want in str(tfc_exc) and want in str(tf_exc)
        assert "Label values: 1 %d 3" % bad in str(tfc_exc)


def test_xent_gradients(rng):
    require_ops("ExpandDims", "Mul", "Neg", "Sum", "Sub", "AddV2")
    for dtype in ["float32", "float64"]:
        for lo in [-5, -1e4]:
            b, c = int(rng.integers(1, 6)), int(rng.integers(1, 8))
            f = random_array(rng, (b, c), dtype, lo, -lo)
            assert_grad_matches("SoftmaxCrossEntropyWithLogits", dict(features=f, labels=_probs(rng, (b, c), dtype)),
                                rng=rng)
            labels = rng.integers(0, c, size=b).astype(np.int64)
            assert_grad_matches("SparseSoftmaxCrossEntropyWithLogits", dict(features=f, labels=labels), rng=rng)


def test_xent_gradient_loss_only(rng):
    """The usual training case: only the loss is used, its second output gets the tape's zeros."""
    require_ops("ExpandDims", "Mul", "Neg")
    b, c = 5, 7
    f0, l0 = random_array(rng, (b, c), "float32", -3, 3), _probs(rng, (b, c), "float32")
    idx = rng.integers(0, c, size=b).astype(np.int32)

    def f(lib):
        x, y = _const(lib, f0), _const(lib, l0)
        with lib.GradientTape(persistent=True) as tape:
            tape.watch([x, y])
            dense = lib.raw_ops.SoftmaxCrossEntropyWithLogits(features=x, labels=y)[0]
            sparse = lib.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=x, labels=_const(lib, idx))[0]
        return [tape.gradient(dense, [x, y]), tape.gradient(sparse, x)]
    _both(f)


@pytest.mark.parametrize("sparse", [False, True])
def test_xent_second_order(rng, sparse):
    """Hessian-vector products through the cross-entropy gradient (needs its second-order term)."""
    require_ops("ExpandDims", "Mul", "Neg", "Sum", "Sub", "AddV2")
    b, c = int(rng.integers(1, 5)), int(rng.integers(2, 7))
    f0, w = random_array(rng, (b, c), "float64", -3, 3), random_array(rng, (b, c), "float64")
    l0 = rng.integers(0, c, size=b).astype(np.int32) if sparse else _probs(rng, (b, c), "float64")
    op = "SparseSoftmaxCrossEntropyWithLogits" if sparse else "SoftmaxCrossEntropyWithLogits"

    def f(lib):
        x, y = _const(lib, f0), _const(lib, l0)
        with lib.GradientTape() as outer:
            outer.watch(x)
            with lib.GradientTape() as inner:
                inner.watch(x)
                loss = getattr(lib.raw_ops, op)(features=x, labels=y)[0]
            g = inner.gradient(loss, x)
        return [g, outer.gradient(g, x, output_gradients=_const(lib, w))]
    got = _both(f)
    # softmax Jacobian applied to w, row by row: (diag(p) - p p^T) w
    p = np.exp(f0 - f0.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    scale = 1.0 if sparse else l0.sum(-1, keepdims=True)
    assert_close(got[1], scale * (p * w - p * (p * w).sum(-1, keepdims=True)))


# ---- L2Loss ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_l2_loss(rng, dtype):
    for _ in range(4):
        assert_op_matches("L2Loss", dict(t=random_array(rng, random_shape(rng), dtype, -2, 2)))


def test_l2_loss_large_and_gradient(rng):
    assert_op_matches("L2Loss", dict(t=random_array(rng, (300, 1001), "float32")), rtol=1e-4)
    require_ops("Mul")
    for dtype in ["float32", "float64"]:
        assert_grad_matches("L2Loss", dict(t=random_array(rng, random_shape(rng), dtype)), rng=rng)


# ---- FusedBatchNormV3 -------------------------------------------------------------------------------------------

BN_FORMATS = [("NHWC", 4), ("NCHW", 4), ("NDHWC", 5), ("NCDHW", 5)]


def _bn_inputs(rng, dtype, fmt, rank, training, factor=1.0, allow_zero=False, shape=None):
    shape = shape or random_shape(rng, rank, rank, 4, allow_zero)
    c = shape[1] if fmt.startswith("NC") else shape[-1]
    u = "float64" if dtype == "float64" else "float32"
    stats = (c,) if (not training or factor != 1.0) else ((c,) if rng.random() < 0.5 else (0,))
    return dict(x=random_array(rng, shape, dtype, -3, 3), scale=random_array(rng, (c,), u, 0.5, 2),
                offset=random_array(rng, (c,), u, -1, 1), mean=random_array(rng, stats, u, -1, 1),
                variance=random_array(rng, stats, u, 0.5, 2))


def _bn_compare(rng, dtype, fmt, rank, training, factor, eps, shape=None, allow_zero=False):
    """y and the running statistics always; the reserve spaces (batch mean, biased variance) in training. In
    inference TensorFlow's CPU kernel leaves reserve_space_1/2 uninitialised, and for an empty x it returns
    before writing them in training too, so they are not compared there."""
    ins = _bn_inputs(rng, dtype, fmt, rank, training, factor, allow_zero, shape)
    attrs = dict(epsilon=eps, exponential_avg_factor=factor, data_format=fmt, is_training=training)
    got = [o.numpy() for o in run_tfc("FusedBatchNormV3", ins, attrs)]
    want = [o.numpy() for o in run_tf("FusedBatchNormV3", ins, attrs)]
    n = 5 if training and ins["x"].size else 3
    rtol = {"float32": 1e-4, "float64": 1e-9}.get(dtype)
    for i in range(n):
        assert_close(got[i], want[i], dtype=dtype if i == 0 else "float32", rtol=rtol, atol=rtol,
                     msg="FusedBatchNormV3 output %d: " % i)
    assert got[5].shape == () and got[0].dtype == np_dtype(dtype)
    return got


@pytest.mark.parametrize("fmt,rank", BN_FORMATS)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("training", [True, False])
def test_fused_batch_norm(rng, fmt, rank, dtype, training):
    for factor in [1.0, 0.25]:
        _bn_compare(rng, dtype, fmt, rank, training, factor, float(rng.choice([1e-4, 1e-3, 0.1])))


def test_fused_batch_norm_empty_and_single(rng):
    # empty x: NaN statistics in training and inference, as TensorFlow
    for training in [True, False]:
        got = _bn_compare(rng, "float32", "NHWC", 4, training, 1.0, 1e-3, shape=(0, 2, 2, 3))
        assert np.all(np.isnan(got[1])) and np.all(np.isnan(got[2]))
    # one element per channel: unbiased variance divides by max(n - 1, 1)
    _bn_compare(rng, "float32", "NHWC", 4, True, 1.0, 1e-3, shape=(1, 1, 1, 5))


def test_fused_batch_norm_large(rng):
    for fmt, shape in [("NHWC", (32, 14, 14, 64)), ("NCHW", (16, 64, 14, 14))]:
        for training in [True, False]:
            _bn_compare(rng, "float32", fmt, 4, training, 1.0, 1e-3, shape=shape)


@pytest.mark.parametrize("fmt,rank", BN_FORMATS)
@pytest.mark.parametrize("training", [True, False])
def test_fused_batch_norm_gradient(rng, fmt, rank, training):
    for dtype in ["float32", "float64", "float16"]:
        if dtype == "float64":  # TensorFlow has no float64 FusedBatchNormV3: finite differences below
            continue
        ins = _bn_inputs(rng, dtype, fmt, rank, training)
        attrs = dict(epsilon=1e-3, data_format=fmt, is_training=training)
        tol = {"float16": 2e-2}.get(dtype, 1e-4)
        assert_grad_matches("FusedBatchNormV3", ins, attrs, rng=rng, rtol=tol, atol=tol)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
def test_fused_batch_norm_gradient_finite_differences(rng, training, fmt):
    """float64 (a tfc extension): d <w, y> / d (x, scale, offset) by central differences."""
    ins = _bn_inputs(rng, "float64", fmt, 4, training, allow_zero=False, shape=(2, 3, 2, 3))
    attrs = dict(epsilon=1e-3, data_format=fmt, is_training=training)
    w = random_array(rng, ins["x"].shape, "float64")

    def objective(d):
        return float(np.sum(w * run_tfc("FusedBatchNormV3", d, attrs)[0].numpy()))

    src = {k: tfc.constant(v) for k, v in ins.items()}
    with tfc.GradientTape() as tape:
        tape.watch([src["x"], src["scale"], src["offset"]])
        y = tfc.raw_ops.FusedBatchNormV3(**src, **attrs)[0]
    grads = tape.gradient(y, [src["x"], src["scale"], src["offset"]], output_gradients=tfc.constant(w))
    for name, g in zip(["x", "scale", "offset"], grads):
        num = np.zeros_like(ins[name])
        for idx in np.ndindex(*ins[name].shape):
            d = {k: v.copy() for k, v in ins.items()}
            d[name][idx] += 1e-6
            fp = objective(d)
            d[name][idx] -= 2e-6
            num[idx] = (fp - objective(d)) / 2e-6
        assert_close(g, num, rtol=1e-6, atol=1e-6, msg="d/d%s: " % name)


@pytest.mark.parametrize("fmt,rank", BN_FORMATS)
@pytest.mark.parametrize("training", [True, False])
def test_fused_batch_norm_grad_op(rng, fmt, rank, training):
    for dtype in ["float32", "float16", "bfloat16"]:
        if not training and fmt.startswith("NC"):
            continue  # TensorFlow's CPU kernel only takes channels-last in inference (its gradient transposes)
        shape = random_shape(rng, rank, rank, 4, allow_zero=False)
        c = shape[1] if fmt.startswith("NC") else shape[-1]
        ins = dict(y_backprop=random_array(rng, shape, dtype), x=random_array(rng, shape, dtype, -3, 3),
                   scale=random_array(rng, (c,), "float32", 0.5, 2),
                   reserve_space_1=random_array(rng, (c,), "float32", -1, 1),
                   reserve_space_2=random_array(rng, (c,), "float32", 0.5, 2),
                   reserve_space_3=np.zeros((), np.float32))
        attrs = dict(epsilon=1e-3, data_format=fmt, is_training=training)
        got = [o.numpy() for o in run_tfc("FusedBatchNormGradV3", ins, attrs)]
        want = [o.numpy() for o in run_tf("FusedBatchNormGradV3", ins, attrs)]
        for i in range(3):
            assert_close(got[i], want[i], dtype=dtype if i == 0 else "float32",
                         rtol=1e-4 if dtype == "float32" else None, atol=1e-4 if dtype == "float32" else None,
                         msg="FusedBatchNormGradV3 output %d: " % i)
        assert got[3].shape == (0,) and got[4].shape == (0,)


@pytest.mark.parametrize("fmt", ["NHWC", "NCHW"])
@pytest.mark.parametrize("training", [True, False])
def test_fused_batch_norm_second_order(rng, fmt, training):
    require_ops("Mean", "Sum", "Sub", "Mul", "Rsqrt", "Reciprocal", "SquaredDifference", "StopGradient", "Reshape")
    ins = _bn_inputs(rng, "float32", fmt, 4, training, shape=(2, 3, 2, 3))
    attrs = dict(epsilon=1e-3, data_format=fmt, is_training=training)
    w1, w2 = random_array(rng, ins["x"].shape, "float32"), random_array(rng, ins["x"].shape, "float32")

    def f(lib):
        x, scale = _const(lib, ins["x"]), _const(lib, ins["scale"])
        rest = {k: _const(lib, ins[k]) for k in ("offset", "mean", "variance")}
        with lib.GradientTape() as outer:
            outer.watch([x, scale])
            with lib.GradientTape() as inner:
                inner.watch([x, scale])
                y = lib.raw_ops.FusedBatchNormV3(x=x, scale=scale, **rest, **attrs)[0]
            gx, gs = inner.gradient(y, [x, scale], output_gradients=_const(lib, w1))
            t = lib.raw_ops.AddV2(x=lib.raw_ops.Sum(input=lib.raw_ops.Mul(x=gx, y=_const(lib, w2)), axis=[0, 1, 2, 3]),
                                  y=lib.raw_ops.Sum(input=gs, axis=[0]))
        return [gx, gs, outer.gradient(t, [x, scale])]
    _both(f)


# ---- errors ------------------------------------------------------------------------------------------------------

F32 = np.float32


@pytest.mark.parametrize("op,inputs,attrs", [
    ("BiasAdd", dict(value=np.ones([3], F32), bias=np.ones([3], F32)), {}),
    ("BiasAdd", dict(value=np.ones([2, 3], F32), bias=np.ones([1, 3], F32)), {}),
    ("BiasAdd", dict(value=np.ones([2, 3], F32), bias=np.ones([4], F32)), {}),
    ("BiasAdd", dict(value=np.ones([2, 3, 5], F32), bias=np.ones([5], F32)), dict(data_format="NCHW")),
    ("BiasAddGrad", dict(out_backprop=np.ones([3], F32)), {}),
    ("LogSoftmax", dict(logits=np.float32(1.0)), {}),
    ("SoftmaxCrossEntropyWithLogits", dict(features=np.ones([3], F32), labels=np.ones([3], F32)), {}),
    ("SoftmaxCrossEntropyWithLogits", dict(features=np.ones([2, 3], F32), labels=np.ones([2, 4], F32)), {}),
    ("SoftmaxCrossEntropyWithLogits", dict(features=np.ones([2, 2, 3], F32), labels=np.ones([2, 2, 3], F32)), {}),
    ("SparseSoftmaxCrossEntropyWithLogits", dict(features=np.ones([3], F32), labels=np.ones([3], np.int32)), {}),
    ("SparseSoftmaxCrossEntropyWithLogits", dict(features=np.ones([3, 4], F32), labels=np.ones([3, 1], np.int32)), {}),
    ("SparseSoftmaxCrossEntropyWithLogits", dict(features=np.ones([3, 4], F32), labels=np.ones([2], np.int32)), {}),
    ("SparseSoftmaxCrossEntropyWithLogits", dict(features=np.ones([3, 0], F32), labels=np.zeros([3], np.int32)), {}),
    ("ReluGrad", dict(gradients=np.ones([2], F32), features=np.ones([3], F32)), {}),
    ("EluGrad", dict(gradients=np.ones([2], F32), outputs=np.ones([3], F32)), {}),
    ("Elu", dict(features=np.ones([2], np.int32)), {}),
    ("FusedBatchNormV3", dict(x=np.ones([2, 2, 3], F32), scale=np.ones([3], F32), offset=np.ones([3], F32),
                              mean=np.ones([3], F32), variance=np.ones([3], F32)), {}),
    ("FusedBatchNormV3", dict(x=np.ones([2, 2, 2, 3], F32), scale=np.ones([4], F32), offset=np.ones([3], F32),
                              mean=np.ones([3], F32), variance=np.ones([3], F32)), {}),
    ("FusedBatchNormV3", dict(x=np.ones([2, 2, 2, 3], F32), scale=np.ones([3], F32), offset=np.ones([3], F32),
                              mean=np.ones([4], F32), variance=np.ones([3], F32)), dict(is_training=False)),
    ("FusedBatchNormV3", dict(x=np.ones([2, 2, 2, 3], F32), scale=np.ones([3], F32), offset=np.ones([3], F32),
                              mean=np.ones([0], F32), variance=np.ones([0], F32)), dict(exponential_avg_factor=0.5)),
    ("FusedBatchNormV3", dict(x=np.ones([2, 2, 2, 3], F32), scale=np.ones([1, 3], F32), offset=np.ones([3], F32),
                              mean=np.ones([3], F32), variance=np.ones([3], F32)), {}),
    ("FusedBatchNormGradV3", dict(y_backprop=np.ones([2, 2, 1, 3], F32), x=np.ones([2, 2, 2, 3], F32),
                                  scale=np.ones([3], F32), reserve_space_1=np.ones([3], F32),
                                  reserve_space_2=np.ones([3], F32), reserve_space_3=np.ones([3], F32)), {}),
    ("FusedBatchNormGradV3", dict(y_backprop=np.ones([2, 2, 2, 3], F32), x=np.ones([2, 2, 2, 3], F32),
                                  scale=np.ones([3], F32), reserve_space_1=np.ones([4], F32),
                                  reserve_space_2=np.ones([3], F32), reserve_space_3=np.ones([3], F32)), {}),
])
def test_errors(op, inputs, attrs):
    tfc_exc, tf_exc = assert_both_raise(op, inputs, attrs)
    assert op in str(tfc_exc)


def test_softmax_rank_0():
    # TensorFlow's oneDNN kernel answers AbortedError, its plain CPU kernel InvalidArgumentError as tfc
    with pytest.raises(tf.errors.OpError):
        tf.raw_ops.Softmax(logits=np.float32(1.0))
    with pytest.raises(tfc.InvalidArgumentError, match=r"Softmax: logits must have >= 1 dimension, got \[\]"):
        tfc.raw_ops.Softmax(logits=np.float32(1.0))


def test_error_messages_name_values():
    with pytest.raises(tfc.InvalidArgumentError, match=r"BiasAdd: Must provide as many biases .*\[4\] vs\. \[2,3\]"):
        tfc.raw_ops.BiasAdd(value=np.ones([2, 3], F32), bias=np.ones([4], F32))
    with pytest.raises(tfc.InvalidArgumentError, match=r"scale must have the same number of elements as the "
                                                         r"channels of x, got 4 and 3"):
        tfc.raw_ops.FusedBatchNormV3(x=np.ones([2, 2, 2, 3], F32), scale=np.ones([4], F32), offset=np.ones([3], F32),
                                     mean=np.ones([3], F32), variance=np.ones([3], F32))
    with pytest.raises(tfc.InvalidArgumentError, match=r"logits_size=\[2,3\] labels_size=\[2,4\]"):
        tfc.raw_ops.SoftmaxCrossEntropyWithLogits(features=np.ones([2, 3], F32), labels=np.ones([2, 4], F32))
    with pytest.raises(tfc.InvalidArgumentError, match="data_format"):
        tfc.raw_ops.BiasAdd(value=np.ones([2, 3], F32), bias=np.ones([3], F32), data_format="NCDHW")


# ---- C wrappers (include/tfc/ops/nn.h) -----------------------------------------------------------------------------

def _wrap(fn, *args):
    """Calls a one-result tfc_* wrapper through ctypes: tfc.Tensors, floats, strings or None in; a tfc.Tensor
    out, or the status raised as tfc.OpError."""
    from tfc._lib import Status, ctx, lib, raise_status
    st = Status()
    f = getattr(lib, fn)
    f.restype = ctypes.c_void_p
    conv = []
    for a in args:
        if isinstance(a, tfc.Tensor):
            conv.append(ctypes.c_void_p(a.handle))
        elif isinstance(a, float):
            conv.append(ctypes.c_double(a))
        elif isinstance(a, str):
            conv.append(ctypes.c_char_p(a.encode()))
        else:
            conv.append(ctypes.c_void_p(None))
    h = f(ctypes.c_void_p(ctx()), *conv, ctypes.byref(st))
    if not h:
        raise_status(st)
    return tfc.Tensor(h)


def test_c_wrappers(rng):
    x0 = random_array(rng, (3, 4), "float32", -3, 3)
    x = tfc.constant(x0)
    for fn, op, attrs in [("tfc_relu", "Relu", {}), ("tfc_relu6", "Relu6", {}), ("tfc_elu", "Elu", {}),
                          ("tfc_selu", "Selu", {}), ("tfc_softplus", "Softplus", {}), ("tfc_softsign", "Softsign", {}),
                          ("tfc_softmax", "Softmax", {}), ("tfc_log_softmax", "LogSoftmax", {})]:
        got = _wrap(fn, x)
        assert_close(got, run_tf(op, dict(features=x0) if "max" not in op else dict(logits=x0)))
    got = _wrap("tfc_leaky_relu", x, 0.1)
    assert_close(got, np.where(x0 > 0, x0, 0.1 * x0))
    got = _wrap("tfc_l2_loss", x)
    assert_close(got, np.sum(x0.astype(np.float64) ** 2) / 2, dtype="float32")
    b0 = random_array(rng, (4,), "float32")
    got = _wrap("tfc_bias_add", x, tfc.constant(b0), None)
    assert_close(got, x0 + b0)
    b3, v3 = random_array(rng, (3,), "float32"), random_array(rng, (2, 3, 4), "float32")
    got = _wrap("tfc_bias_add", tfc.constant(v3), tfc.constant(b3), "NCHW")
    assert_close(got, v3 + b3[:, None])
    with pytest.raises(tfc.InvalidArgumentError, match="BiasAdd"):
        _wrap("tfc_bias_add", x, tfc.constant(b3), "NHWC")


def test_c_wrappers_losses_and_batch_norm(rng):
    from tfc._lib import Status, ctx, lib
    P = ctypes.c_void_p
    logits0 = random_array(rng, (4, 6), "float32", -3, 3)
    labels0 = _probs(rng, (4, 6), "float32")
    logits, labels = tfc.constant(logits0), tfc.constant(labels0)  # alive across the calls
    want = run_tf("SoftmaxCrossEntropyWithLogits", dict(features=logits0, labels=labels0))
    st, back = Status(), P()
    f = lib.tfc_softmax_cross_entropy_with_logits
    f.restype = P
    loss = f(P(ctx()), P(labels.handle), P(logits.handle), ctypes.byref(back), ctypes.byref(st))
    assert loss, st.msg
    assert_close(tfc.Tensor(loss), want[0])
    assert_close(tfc.Tensor(back.value), want[1])
    idx0 = np.array([0, 5, 2, 2], np.int64)
    idx, bad = tfc.constant(idx0), tfc.constant(np.array([0, 6, 2, 2], np.int64))
    f = lib.tfc_sparse_softmax_cross_entropy_with_logits
    f.restype = P
    loss = f(P(ctx()), P(idx.handle), P(logits.handle), None, ctypes.byref(st))
    assert loss, st.msg
    assert_close(tfc.Tensor(loss), run_tf("SparseSoftmaxCrossEntropyWithLogits", dict(features=logits0, labels=idx0))[0])
    assert not f(P(ctx()), P(bad.handle), P(logits.handle), None, ctypes.byref(st))
    assert b"Received a label value of 6 which is outside the valid range of [0, 6)" in st.msg

    ins = _bn_inputs(rng, "float32", "NHWC", 4, True, shape=(3, 2, 2, 4))
    x, scale, offset = (tfc.constant(ins[k]) for k in ("x", "scale", "offset"))
    f = lib.tfc_fused_batch_norm
    f.restype = P
    bm, bv = P(), P()
    y = f(P(ctx()), P(x.handle), P(scale.handle), P(offset.handle), None, None, ctypes.c_double(1e-3),
          ctypes.c_double(1.0), None, ctypes.c_bool(True), ctypes.byref(bm), ctypes.byref(bv), ctypes.byref(st))
    assert y, st.msg
    want = run_tf("FusedBatchNormV3", dict(ins, mean=np.zeros([0], F32), variance=np.zeros([0], F32)),
                  dict(epsilon=1e-3))
    assert_close(tfc.Tensor(y), want[0], rtol=1e-4, atol=1e-4)
    assert_close(tfc.Tensor(bm.value), want[1], rtol=1e-4, atol=1e-4)
    assert_close(tfc.Tensor(bv.value), want[2], rtol=1e-4, atol=1e-4)
    # inference without statistics is an error naming the missing sizes
    y = f(P(ctx()), P(x.handle), P(scale.handle), P(offset.handle), None, None, ctypes.c_double(1e-3),
          ctypes.c_double(1.0), None, ctypes.c_bool(False), None, None, ctypes.byref(st))
    assert not y and b"When is_training=false, mean must have" in st.msg


# ---- both SIMD paths ------------------------------------------------------------------------------------------

_BASELINE_SCRIPT = r"""
import sys
import numpy as np
sys.path.insert(0, %(here)r)
import conftest as c
rng = np.random.default_rng(%(seed)d)
for op in ["Relu", "Relu6", "LeakyRelu", "Elu", "Selu", "Softplus", "Softsign"]:
    x = c.random_array(rng, (3, 37), "float32", -8, 8)
    c.assert_op_matches(op, dict(features=x))
    c.assert_op_matches(op + "Grad", {"gradients": c.random_array(rng, (3, 37), "float32"),
                                      ("outputs" if op in ("Elu", "Selu") else "features"):
                                      np.maximum(x, -0.9) if op in ("Elu", "Selu") else x})
for op in ["Softmax", "LogSoftmax"]:
    c.assert_op_matches(op, dict(logits=c.random_array(rng, (5, 77), "float32", -1e4, 1e4)))
f = c.random_array(rng, (6, 29), "float32", -5, 5)
p = rng.random((6, 29)).astype(np.float32)
c.assert_op_matches("SoftmaxCrossEntropyWithLogits", dict(features=f, labels=p / p.sum(-1, keepdims=True)))
c.assert_op_matches("SparseSoftmaxCrossEntropyWithLogits", dict(features=f, labels=rng.integers(0, 29, 6)))
c.assert_op_matches("L2Loss", dict(t=c.random_array(rng, (1001,), "float32")))
c.assert_op_matches("BiasAddGrad", dict(out_backprop=c.random_array(rng, (2, 3, 33), "float32")),
                    dict(data_format="NCHW"))
print("baseline ok")
"""


def test_baseline_simd_path(rng):
    """The kernels for CPUs without AVX2 (selected here with TFC_NN_SIMD=baseline in a fresh process)."""
    import os
    import subprocess
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, TFC_NN_SIMD="baseline")
    script = _BASELINE_SCRIPT % dict(here=here, seed=int(rng.integers(0, 2 ** 31)))
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and "baseline ok" in r.stdout, r.stdout[-2000:] + r.stderr[-4000:]
