"""Random ops against TensorFlow: with the same (seed, seed2) tfc returns TensorFlow's numbers bit for bit
(Philox4x32-10 and TensorFlow's conversions), including the continuation of the stream when a call is
repeated (TensorFlow's cached kernels) and TensorFlow 2's seed rules (tf.random.set_seed, op seeds, the
eager op-seed sequence) through the C wrappers. Seeds are fresh each run, so every call starts a stream
neither library has used in this process."""
import ctypes

import numpy as np
import pytest

from conftest import FLOAT_DTYPES, assert_both_raise, np_dtype, tf, tfc

OPS = ["RandomUniform", "RandomStandardNormal", "TruncatedNormal"]


def bits(x):
    a = np.asarray(x)
    return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])


def fresh_seeds(rng):
    return int(rng.integers(1, 2**62)), int(rng.integers(-2**62, 2**62))


def assert_same_bits(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, "%s: shape %s, TensorFlow %s" % (what, got.shape, want.shape)
    diff = np.nonzero(bits(got).ravel() != bits(want).ravel())[0]
    assert diff.size == 0, "%s: %d of %d values differ, first at %d: %r vs TensorFlow %r" % (
        what, diff.size, got.size, diff[0], got.ravel()[diff[0]], want.ravel()[diff[0]])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("op", OPS)
def test_exact_stream(rng, op, dtype):
    for _ in range(3):
        rank = int(rng.integers(0, 4))
        shape = [int(rng.integers(0, 7)) for _ in range(rank)]
        if rng.random() < 0.3:
            shape = [int(rng.integers(1000, 5000))]  # crosses thread chunks
        sdt = np.int32 if rng.random() < 0.5 else np.int64
        s1, s2 = fresh_seeds(rng)
        for call in range(3):  # the cached stream continues
            want = getattr(tf.raw_ops, op)(shape=np.asarray(shape, sdt), dtype=getattr(tf, dtype), seed=s1, seed2=s2)
            got = getattr(tfc.raw_ops, op)(shape=np.asarray(shape, sdt), dtype=tfc.as_dtype(dtype), seed=s1, seed2=s2)
            assert_same_bits(got.numpy(), want.numpy(), "%s %s %s call %d" % (op, dtype, shape, call))


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_exact_uniform_int(rng, dtype):
    info = np.iinfo(dtype)
    for lo, hi in [(0, 10), (-7, 3), (int(info.min), int(info.max)), (int(rng.integers(-1000, 0)), 10**6)]:
        s1, s2 = fresh_seeds(rng)
        shape = np.asarray([int(rng.integers(0, 50)), 3], np.int32)
        for call in range(2):
            want = tf.raw_ops.RandomUniformInt(shape=shape, minval=np.asarray(lo, dtype), maxval=np.asarray(hi, dtype),
                                               seed=s1, seed2=s2).numpy()
            got = tfc.raw_ops.RandomUniformInt(shape=shape, minval=np.asarray(lo, dtype), maxval=np.asarray(hi, dtype),
                                               seed=s1, seed2=s2).numpy()
            np.testing.assert_array_equal(got, want)


def test_unseeded_moments():
    """seed = seed2 = 0: nondeterministic, with the right distribution."""
    a = tfc.raw_ops.RandomUniform(shape=np.asarray([200000], np.int32), dtype=tfc.float32).numpy()
    b = tfc.raw_ops.RandomUniform(shape=np.asarray([200000], np.int32), dtype=tfc.float32).numpy()
    assert not np.array_equal(a, b)
    assert abs(a.mean() - 0.5) < 0.005 and abs(a.var() - 1 / 12) < 0.002 and a.min() >= 0 and a.max() < 1
    n = tfc.raw_ops.RandomStandardNormal(shape=np.asarray([200000], np.int32), dtype=tfc.float64).numpy()
    assert abs(n.mean()) < 0.01 and abs(n.var() - 1) < 0.02
    t = tfc.raw_ops.TruncatedNormal(shape=np.asarray([200000], np.int32), dtype=tfc.float32).numpy()
    assert np.abs(t).max() < 2 and abs(t.var() - 0.7737) < 0.01


# ---- the C wrappers with TensorFlow's seed rules ---------------------------------------------------------

_lib = tfc._lib
NO_SEED = -2**63


def _declare():
    for name in ("tfc_random_uniform", "tfc_random_normal", "tfc_truncated_normal"):
        fn = getattr(_lib.lib, name)
        fn.restype = ctypes.c_void_p
        fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_int, ctypes.c_int, ctypes.c_double,
                       ctypes.c_double, ctypes.c_int64, ctypes.POINTER(_lib.Status)]


_declare()


def c_random(name, shape, dtype, a, b, seed):
    dims = (ctypes.c_int64 * max(1, len(shape)))(*shape)
    st = _lib.Status()
    h = getattr(_lib.lib, name)(_lib.ctx(), dims, len(shape), tfc.as_dtype(dtype).enum, a, b,
                                NO_SEED if seed is None else seed, ctypes.byref(st))
    _lib.check(st)
    return tfc.Tensor(h).numpy()


def test_seed_rules(rng):
    g = int(rng.integers(-2**40, 2**40))
    for rep in range(2):  # set_seed restarts op seeds and cached streams in both
        tf.random.set_seed(g)
        tfc.set_seed(g)
        calls = [
            ("tfc_random_uniform", lambda s, sh: tf.random.uniform(sh, seed=s), "float32", 0.0, 1.0),
            ("tfc_random_uniform", lambda s, sh: tf.random.uniform(sh, -2.5, 7.0, tf.float64, seed=s), "float64", -2.5, 7.0),
            ("tfc_random_uniform", lambda s, sh: tf.random.uniform(sh, 3, 17, tf.int32, seed=s), "int32", 3, 17),
            ("tfc_random_uniform", lambda s, sh: tf.random.uniform(sh, 0, 4.0, tf.float16, seed=s), "float16", 0.0, 4.0),
            ("tfc_random_normal", lambda s, sh: tf.random.normal(sh, 2.0, 3.0, seed=s), "float32", 2.0, 3.0),
            ("tfc_random_normal", lambda s, sh: tf.random.normal(sh, -1.0, 0.5, tf.bfloat16, seed=s), "bfloat16", -1.0, 0.5),
            ("tfc_truncated_normal", lambda s, sh: tf.random.truncated_normal(sh, 1.0, 2.0, tf.float64, seed=s), "float64", 1.0, 2.0),
        ]
        for k in range(12):
            name, tf_fn, dt, a, b = calls[int(rng.integers(0, len(calls)))]
            seed = None if rng.random() < 0.6 else int(rng.integers(-10**6, 10**6))
            shape = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(0, 3)))]
            want = tf_fn(seed, shape).numpy()
            got = c_random(name, shape, dt, a, b, seed)
            assert_same_bits(got.astype(np_dtype(dt)), want, "%s %s seed=%s call %d" % (name, dt, seed, k))


def test_errors(rng):
    assert_both_raise("RandomUniform", {"shape": np.asarray([[2, 3]], np.int32)}, {"dtype": tfc.float32})
    assert_both_raise("RandomUniform", {"shape": np.asarray([2, -3], np.int32)}, {"dtype": tfc.float32})
    assert_both_raise("RandomStandardNormal", {"shape": np.int32(4)}, {"dtype": tfc.float32})
    assert_both_raise("RandomUniformInt", {"shape": np.asarray([3], np.int32), "minval": np.int32(5),
                                           "maxval": np.int32(5)})
    assert_both_raise("RandomUniformInt", {"shape": np.asarray([3], np.int32), "minval": np.asarray([0], np.int32),
                                           "maxval": np.int32(5)})
