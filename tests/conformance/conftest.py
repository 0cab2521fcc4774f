"""Conformance harness: tfc (through python/tfc) against real TensorFlow on fresh random inputs.

Helpers for test_<family>.py files (import them with `from conftest import ...`):

    rng                         fixture: numpy Generator, freshly seeded per test; the seed is printed and shown
                                in failure reports; TFC_TEST_SEED=<n> reproduces a run
    random_array(rng, shape, dtype, low=-1, high=1)   numpy array (bfloat16 as ml_dtypes.bfloat16)
    random_shape(rng, min_rank=0, max_rank=4, max_dim=5, allow_zero=True)
    broadcastable_shapes(rng, ...)                     two shapes that broadcast against each other
    tolerance(dtype)                                   (rtol, atol) for a dtype
    assert_close(actual, expected, dtype=None, rtol=None, atol=None, msg="")
    assert_op_matches(op, inputs, attrs=None, ...)     run tfc.raw_ops.<op> and tf.raw_ops.<op>, compare outputs
    assert_grad_matches(op, inputs, attrs=None, wrt=None, rng=None, ...)   gradients vs tf.GradientTape
    assert_both_raise(op, inputs, attrs=None)          both raise; tfc's error class matches TensorFlow's
    require_ops(*names)                                skip the test when tfc lacks an op
    FLOAT_DTYPES, INT_DTYPES                           dtype name lists for parametrize
"""
import os
import random
import sys

import numpy as np
import pytest

_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# TFC_CONFORMANCE_INSTALLED=1 (make conformance-installed): test the tfc package installed by `pip install .`
# with its bundled libtfc.so, not this tree's python/ folder.
if not os.environ.get("TFC_CONFORMANCE_INSTALLED"):
    sys.path.insert(0, os.path.join(_REPO, "python"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import tensorflow as tf  # noqa: E402
import tfc  # noqa: E402

if os.environ.get("TFC_CONFORMANCE_INSTALLED"):
    assert not os.path.abspath(tfc.__file__).startswith(os.path.join(_REPO, "python")), tfc.__file__
    assert os.path.dirname(tfc.library_path) == os.path.dirname(os.path.abspath(tfc.__file__)), tfc.library_path

try:
    import ml_dtypes
    BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover
    ml_dtypes, BF16 = None, None

FLOAT_DTYPES = ["float32", "float64", "float16", "bfloat16"]
INT_DTYPES = ["int32", "int64"]
ALL_INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8"]

# (rtol, atol): atol is scaled by max(1, max |expected|) in assert_close.
_TOL = {
    "float32": (1e-5, 1e-5),
    "float64": (1e-10, 1e-10),
    "float16": (1e-2, 1e-2),
    "bfloat16": (2e-2, 2e-2),
}


def _dtype_name(dtype):
    if dtype is None:
        return None
    if isinstance(dtype, str):
        return tfc.as_dtype(dtype).name
    name = getattr(dtype, "name", None)
    if isinstance(name, str) and not isinstance(dtype, np.dtype):
        return tfc.as_dtype(name).name
    return tfc.as_dtype(dtype).name


def tolerance(dtype):
    """(rtol, atol) for comparing values of `dtype` (ints, bool, string: exact)."""
    return _TOL.get(_dtype_name(dtype), (0.0, 0.0))


def np_dtype(dtype):
    """numpy dtype for a tfc/TF/numpy dtype or name (bfloat16: ml_dtypes.bfloat16)."""
    name = _dtype_name(dtype)
    if name == "bfloat16":
        return BF16
    if name == "string":
        return np.dtype(object)
    return np.dtype(tfc.as_dtype(name).as_numpy_dtype)


# ---- random inputs ------------------------------------------------------------------------------------

@pytest.fixture
def rng(request):
    """A fresh numpy Generator per test; the seed differs every run and is printed (shown on failure).
    TensorFlow's global seed and Python's `random` (which tf_keras's unseeded initializers draw from) are set
    from the same seed, so TFC_TEST_SEED also reproduces the initial weights of tf_keras models."""
    env = os.environ.get("TFC_TEST_SEED")
    seed = int(env) if env else int.from_bytes(os.urandom(4), "little")
    request.node.user_properties.append(("seed", seed))
    print("seed=%d (reproduce with TFC_TEST_SEED=%d)" % (seed, seed))
    random.seed(seed)
    tf.random.set_seed(seed)
    return np.random.default_rng(seed)


def pytest_runtest_makereport(item, call):
    if call.when == "call" and call.excinfo is not None:
        for k, v in item.user_properties:
            if k == "seed":
                item.add_report_section("call", "seed", "TFC_TEST_SEED=%d" % v)


def random_array(rng, shape, dtype="float32", low=-1.0, high=1.0):
    """Uniform values in [low, high) (ints: integers in [low, high), at least [-5, 5] when low/high are the
    float defaults; bool: fair coin; string: short random bytes)."""
    name = _dtype_name(dtype)
    shape = tuple(int(d) for d in shape)
    if name == "bool":
        return rng.random(shape) < 0.5
    if name == "string":
        out = np.empty(shape, dtype=object)
        for idx in np.ndindex(*shape):
            out[idx] = bytes(rng.integers(97, 123, size=int(rng.integers(0, 8))).astype(np.uint8))
        return out
    if tfc.as_dtype(name).is_integer:
        lo, hi = (int(low), int(high)) if (low, high) != (-1.0, 1.0) else (-5, 6)
        info = np.iinfo(np_dtype(name))
        lo, hi = max(lo, info.min), min(hi, info.max + 1)
        return rng.integers(lo, hi, size=shape, dtype=np.int64).astype(np_dtype(name))
    vals = rng.uniform(low, high, size=shape)
    return np.asarray(vals, dtype=np.float64).astype(np_dtype(name))


def random_shape(rng, min_rank=0, max_rank=4, max_dim=5, allow_zero=True):
    """A random shape; with allow_zero, each dim is 0 with small probability."""
    rank = int(rng.integers(min_rank, max_rank + 1))
    lo = 0 if allow_zero and rng.random() < 0.15 else 1
    return tuple(int(rng.integers(lo, max_dim + 1)) for _ in range(rank))


def broadcastable_shapes(rng, max_rank=4, max_dim=5, allow_zero=True):
    """Two shapes that NumPy-broadcast together (some dims 1 on either side, ranks may differ)."""
    out = random_shape(rng, 0, max_rank, max_dim, allow_zero)
    a, b = list(out), list(out)
    for i in range(len(out)):
        r = rng.random()
        if r < 0.25:
            a[i] = 1
        elif r < 0.5:
            b[i] = 1
    drop = int(rng.integers(0, len(out) + 1))
    if rng.random() < 0.5:
        a = a[drop:]
    else:
        b = b[drop:]
    return tuple(a), tuple(b)


# ---- comparison -----------------------------------------------------------------------------------------

def _np(x):
    if hasattr(x, "numpy"):  # tfc.Tensor, tf.Tensor, variables
        x = x.numpy()
    if isinstance(x, bytes):
        return np.array(x, dtype=object)
    return np.asarray(x)


def assert_close(actual, expected, dtype=None, rtol=None, atol=None, msg=""):
    """Compares arrays (Tensors of either library or numpy): same shape and values within the dtype's
    tolerance (NaN == NaN, infinities must match exactly); atol scales with the expected magnitude."""
    a, e = _np(actual), _np(expected)
    name = _dtype_name(dtype if dtype is not None else e.dtype)
    assert a.shape == e.shape, "%sshape %s != expected %s" % (msg, a.shape, e.shape)
    if name == "string" or e.dtype == object:
        assert a.tolist() == e.tolist(), "%sstrings differ:\n tfc %r\n tf  %r" % (msg, a, e)
        return
    r0, a0 = tolerance(name)
    rtol = r0 if rtol is None else rtol
    atol = a0 if atol is None else atol
    if name == "bool" or (rtol == 0 and atol == 0 and e.dtype.kind in "iub"):
        np.testing.assert_array_equal(a, e, err_msg=msg)
        return
    af, ef = a.astype(np.float64), e.astype(np.float64)
    finite = np.isfinite(ef)
    scale = max(1.0, float(np.max(np.abs(ef[finite])))) if finite.any() else 1.0
    np.testing.assert_allclose(af, ef, rtol=rtol, atol=atol * scale, equal_nan=True, err_msg=msg)


def _tf_value(v):
    """Converts an input/attr value for tf.raw_ops (tfc objects become numpy / tf.DType)."""
    if isinstance(v, tfc.DType):
        return tf.as_dtype(v.name)
    if isinstance(v, (tfc.Tensor, tfc.Variable)):
        return v.numpy()
    if isinstance(v, list):
        return [_tf_value(x) for x in v]
    return v


def _flat_outputs(out):
    if out is None:
        return []
    if isinstance(out, (list, tuple)):
        res = []
        for o in out:
            res.extend(_flat_outputs(o))
        return res
    return [out]


def run_tfc(op, inputs, attrs=None):
    return getattr(tfc.raw_ops, op)(**dict(inputs), **dict(attrs or {}))


def run_tf(op, inputs, attrs=None):
    kw = {k: _tf_value(v) for k, v in dict(inputs).items()}
    kw.update({k: _tf_value(v) for k, v in dict(attrs or {}).items()})
    return getattr(tf.raw_ops, op)(**kw)


def assert_op_matches(op, inputs, attrs=None, rtol=None, atol=None, check_dtype=True, postprocess=None):
    """Runs tfc.raw_ops.<op>(**inputs, **attrs) and tf.raw_ops.<op>(...) and compares every output (count,
    dtype, shape, values). inputs: {input name: numpy array / Python value / list for list inputs}.
    postprocess(list of numpy outputs) -> list may canonicalise outputs whose order is unspecified.
    Returns the tfc outputs as a list of numpy arrays."""
    got = [_np(o) for o in _flat_outputs(run_tfc(op, inputs, attrs))]
    want_t = _flat_outputs(run_tf(op, inputs, attrs))
    want = [_np(o) for o in want_t]
    assert len(got) == len(want), "%s: tfc gave %d outputs, TensorFlow %d" % (op, len(got), len(want))
    if postprocess:
        got, want = postprocess(got), postprocess(want)
    for i, (g, w, wt) in enumerate(zip(got, want, want_t)):
        dt = wt.dtype.name if hasattr(wt, "dtype") and hasattr(wt.dtype, "is_floating") else w.dtype
        if check_dtype:
            assert _dtype_name(g.dtype if g.dtype != object else "string") == _dtype_name(dt), \
                "%s output %d: dtype %s, TensorFlow %s" % (op, i, g.dtype, dt)
        assert_close(g, w, dtype=dt, rtol=rtol, atol=atol, msg="%s output %d: " % (op, i))
    return got


def _is_float(x):
    try:
        return tfc.as_dtype(x.dtype.name if hasattr(x.dtype, "name") and not isinstance(x.dtype, np.dtype)
                            else x.dtype).is_floating
    except TypeError:
        return False


def assert_grad_matches(op, inputs, attrs=None, wrt=None, rng=None, output_gradients=True, rtol=None, atol=None):
    """Compares gradients of tfc.raw_ops.<op> w.r.t. the inputs named in `wrt` (default: every float input;
    a list input contributes each element) with tf.GradientTape's. Upstream gradients are random (from
    `rng`) when output_gradients is True, ones when False. Returns the tfc gradients (numpy or None)."""
    inputs = dict(inputs)
    if wrt is None:
        wrt = [k for k, v in inputs.items()
               if (isinstance(v, list) and v and _is_float(np.asarray(v[0]))) or
               (not isinstance(v, list) and _is_float(np.asarray(v)))]
    rng = rng if rng is not None else np.random.default_rng()

    def make(lib, convert):
        ins, srcs = {}, []
        for k, v in inputs.items():
            if isinstance(v, list):
                ins[k] = [convert(x) for x in v]
                if k in wrt:
                    srcs.extend(ins[k])
            else:
                ins[k] = convert(v)
                if k in wrt:
                    srcs.append(ins[k])
        return ins, srcs

    tfc_in, tfc_src = make(tfc, lambda x: tfc.constant(np.asarray(x)))
    tf_in, tf_src = make(tf, lambda x: tf.constant(np.asarray(x)))
    with tfc.GradientTape() as tape:
        tape.watch(tfc_src)
        outs = [o for o in _flat_outputs(run_tfc(op, tfc_in, attrs)) if o.dtype.is_floating]
    ogs = None
    if output_gradients and outs:
        ogs = [random_array(rng, o.shape, o.dtype.name) for o in outs]
    got = tape.gradient(outs, tfc_src, output_gradients=ogs) if outs else [None] * len(tfc_src)
    with tf.GradientTape() as ttape:
        ttape.watch(tf_src)
        touts = [o for o in _flat_outputs(run_tf(op, tf_in, attrs)) if o.dtype.is_floating]
    want = ttape.gradient(touts, tf_src, output_gradients=[tf.constant(g) for g in ogs] if ogs else None)
    res = []
    for i, (g, w) in enumerate(zip(got, want)):
        if w is None:
            assert g is None, "%s: gradient %d is None in TensorFlow but not in tfc" % (op, i)
            res.append(None)
            continue
        if isinstance(w, tf.IndexedSlices):
            w = tf.convert_to_tensor(w)
        assert g is not None, "%s: gradient %d is None in tfc but not in TensorFlow" % (op, i)
        assert_close(g, w, dtype=w.dtype.name, rtol=rtol, atol=atol, msg="%s gradient %d: " % (op, i))
        res.append(g.numpy())
    return res


def assert_both_raise(op, inputs, attrs=None):
    """Both libraries must reject the call. tfc must raise a tfc.OpError subclass named like TensorFlow's
    exception (InvalidArgumentError ...); when TensorFlow rejects the call in Python (ValueError/TypeError),
    tfc may raise the same Python class or InvalidArgumentError. Returns (tfc_exc, tf_exc)."""
    tf_exc = tfc_exc = None
    try:
        run_tf(op, inputs, attrs)
    except Exception as e:  # noqa: BLE001
        tf_exc = e
    assert tf_exc is not None, "%s: TensorFlow accepted the call" % op
    try:
        run_tfc(op, inputs, attrs)
    except Exception as e:  # noqa: BLE001
        tfc_exc = e
    assert tfc_exc is not None, "%s: tfc accepted a call TensorFlow rejects with %s: %s" % (
        op, type(tf_exc).__name__, tf_exc)
    tf_name, tfc_name = type(tf_exc).__name__, type(tfc_exc).__name__
    if isinstance(tf_exc, tf.errors.OpError):
        assert isinstance(tfc_exc, tfc.OpError) and tfc_name == tf_name, \
            "%s: TensorFlow raised %s (%s), tfc %s (%s)" % (op, tf_name, tf_exc, tfc_name, tfc_exc)
    else:
        assert tfc_name == tf_name or isinstance(tfc_exc, tfc.InvalidArgumentError), \
            "%s: TensorFlow raised %s (%s), tfc %s (%s)" % (op, tf_name, tf_exc, tfc_name, tfc_exc)
    return tfc_exc, tf_exc


def need(*fns):
    """Skips the calling test when libtfc lacks one of the Keras C functions (tfc.keras.available)."""
    missing = [f for f in fns if not tfc.keras.available(f)]
    if missing:
        pytest.skip("libtfc has no %s yet" % ", ".join(missing))


def require_ops(*names):
    """Skips the calling test when tfc does not register one of the ops yet."""
    missing = [n for n in names if tfc.op_info(n) is None]
    if missing:
        pytest.skip("tfc has no op %s yet" % ", ".join(missing))
