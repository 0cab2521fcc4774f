"""Reductions (Sum, Mean, Max, Min, Prod, All, Any, ArgMax, ArgMin) against TensorFlow on fresh random inputs:
random shapes (rank 0, size-0 dims), random axis sets (negative, scalar, empty, int32/int64), keep_dims;
NaN handling; gradients against tf.GradientTape; errors against TensorFlow's.

Known, deliberate difference: TensorFlow sums float16 in float16 (its result can be off by a few ulps of the
partial sums); tfc accumulates in float32, so half Sum/Mean are compared with a tolerance scaled by the sum
of |x|."""
import numpy as np
import pytest

from conftest import (FLOAT_DTYPES, assert_both_raise, assert_close, assert_grad_matches, assert_op_matches,
                      np_dtype, random_array, random_shape, tf, tfc)

INTS = ["int8", "int16", "int32", "int64", "uint8"]
REAL = FLOAT_DTYPES + INTS
TRIALS = 6


def random_axes(rng, rank):
    """A random set of distinct axes (possibly negative, possibly empty), as a list or a scalar."""
    if rank == 0:
        return np.zeros([0], dtype=np.int32 if rng.random() < 0.5 else np.int64)
    k = int(rng.integers(0, rank + 1))
    axes = [int(a) for a in rng.permutation(rank)[:k]]
    axes = [a - rank if rng.random() < 0.3 else a for a in axes]
    if k == 1 and rng.random() < 0.3:
        return np.asarray(axes[0], dtype=np.int32)
    return np.asarray(axes, dtype=np.int64 if rng.random() < 0.3 else np.int32).reshape([k])


def values(rng, op, shape, dtype):
    if op == "Prod" and dtype in FLOAT_DTYPES:
        return random_array(rng, shape, dtype, 0.5, 1.5) * np.asarray(rng.choice([-1, 1], size=shape)).astype(
            np_dtype(dtype))
    if dtype in INTS and op in ("Sum", "Mean", "Prod"):
        return random_array(rng, shape, dtype, -100 if dtype != "uint8" else 0, 100)  # overflow wraps alike
    return random_array(rng, shape, dtype, -3, 3)


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min", "Prod"])
def test_reduce(rng, op, dtype):
    for _ in range(TRIALS):
        shape = random_shape(rng, 0, 4, 5)
        x = values(rng, op, shape, dtype)
        axes = random_axes(rng, len(shape))
        keep = bool(rng.random() < 0.5)
        inputs = {"input": x, "axis": np.asarray(axes)}
        if dtype in ("float16", "bfloat16") and op in ("Sum", "Mean"):
            got = getattr(tfc.raw_ops, op)(input=x, axis=np.asarray(axes), keep_dims=keep).numpy()
            want = getattr(tf.raw_ops, op)(input=x, axis=np.asarray(axes), keep_dims=keep).numpy()
            bound = 4e-3 * float(np.abs(x.astype(np.float64)).sum()) / (1 if op == "Sum" else max(1, x.size))
            assert got.shape == want.shape
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=2e-2, atol=bound + 1e-2,
                                       equal_nan=True)
            continue
        assert_op_matches(op, inputs, {"keep_dims": keep})


def test_reduce_large(rng):
    """Long rows, long columns, narrow columns and whole-tensor reductions (the parallel paths)."""
    for shape, axes in [((3, 70000), [1]), ((70000, 3), [0]), ((200, 1300), [0]), ((2, 3000, 40), [0, 2]),
                        ((300000,), [0]), ((64, 64, 64), [1])]:
        x = random_array(rng, shape, "float32")
        for op in ("Sum", "Mean", "Max", "Min"):
            assert_op_matches(op, {"input": x, "axis": np.asarray(axes, np.int32)}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["All", "Any"])
def test_all_any(rng, op):
    for _ in range(TRIALS * 2):
        shape = random_shape(rng, 0, 4, 5)
        x = rng.random(shape) < (0.9 if op == "All" else 0.1)
        assert_op_matches(op, {"input": x, "axis": np.asarray(random_axes(rng, len(shape)))},
                          {"keep_dims": bool(rng.random() < 0.5)})


@pytest.mark.parametrize("dtype", REAL + ["bool"])
@pytest.mark.parametrize("op", ["ArgMax", "ArgMin"])
def test_arg_reduce(rng, op, dtype):
    for _ in range(TRIALS):
        shape = list(random_shape(rng, 1, 4, 5, allow_zero=False))
        axis = int(rng.integers(-len(shape), len(shape)))
        if rng.random() < 0.2:  # zero-sized kept dims are fine
            other = [i for i in range(len(shape)) if i != axis % len(shape)]
            if other:
                shape[other[0]] = 0
        x = random_array(rng, shape, dtype, -4, 4) if dtype != "bool" else rng.random(shape) < 0.5
        out_t = "int32" if rng.random() < 0.5 else "int64"
        dim = np.asarray(axis, dtype=np.int32 if rng.random() < 0.5 else np.int64)
        assert_op_matches(op, {"input": x, "dimension": dim}, {"output_type": tfc.as_dtype(out_t)})


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
def test_nan(rng, dtype):
    """Max/Min propagate NaN; ArgMax/ArgMin skip it (first index on ties)."""
    for shape, axis in [((5, 40), 1), ((40, 5), 0), ((3, 7, 2), 1), ((50,), 0)]:
        x = random_array(rng, shape, dtype, -3, 3)
        flat = x.reshape(-1)
        flat[rng.random(flat.size) < 0.05] = np.nan
        flat[0] = np.nan
        for op in ("Max", "Min"):
            assert_op_matches(op, {"input": x, "axis": np.asarray([axis], np.int32)})
        for op in ("ArgMax", "ArgMin"):
            assert_op_matches(op, {"input": x, "dimension": np.asarray(axis, np.int32)})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min", "Prod"])
def test_gradients(rng, op, dtype):
    for _ in range(TRIALS):
        shape = random_shape(rng, 0, 4, 4)
        x = values(rng, op, shape, dtype)
        assert_grad_matches(op, {"input": x, "axis": np.asarray(random_axes(rng, len(shape)))},
                            {"keep_dims": bool(rng.random() < 0.5)}, wrt=["input"], rng=rng)


def test_prod_gradient_zeros(rng):
    """One zero in a group: its gradient is the product of the others; two zeros: all zero."""
    x = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.5, 2.0, -1.0]])
    for axes in ([1], [0], [0, 1]):
        assert_grad_matches("Prod", {"input": x, "axis": np.asarray(axes, np.int32)}, wrt=["input"], rng=rng)


def test_gradient_second_order(rng):
    x = random_array(rng, (3, 4), "float64", 0.5, 1.5)
    for op in ("Sum", "Mean", "Prod"):
        with tf.GradientTape() as t2:
            xt = tf.constant(x)
            t2.watch(xt)
            with tf.GradientTape() as t1:
                t1.watch(xt)
                y = getattr(tf.raw_ops, op)(input=xt * xt, axis=[1])
            g = t1.gradient(y, xt)
        want = t2.gradient(g, xt)
        with tfc.GradientTape() as c2:
            xc = tfc.constant(x)
            c2.watch(xc)
            with tfc.GradientTape() as c1:
                c1.watch(xc)
                yc = getattr(tfc.raw_ops, op)(input=xc * xc, axis=np.asarray([1], np.int32))
            gc = c1.gradient(yc, xc)
        got = c2.gradient(gc, xc)
        assert_close(got, want, dtype="float64", rtol=1e-9, atol=1e-9, msg="%s second order: " % op)


@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min", "Prod"])
def test_errors(rng, op):
    x = random_array(rng, (2, 3), "float32")
    for axes in ([2], [-3], [0, 0], [1, -1]):
        assert_both_raise(op, {"input": x, "axis": np.asarray(axes, np.int32)})
    assert_both_raise(op, {"input": np.float32(1.0), "axis": np.asarray([0], np.int32)})


def test_arg_errors(rng):
    x = random_array(rng, (2, 3), "float32")
    assert_both_raise("ArgMax", {"input": x, "dimension": np.int32(2)})
    assert_both_raise("ArgMin", {"input": x, "dimension": np.int32(-3)})
    assert_both_raise("ArgMax", {"input": np.zeros((2, 0), np.float32), "dimension": np.int32(1)})
    assert_both_raise("ArgMax", {"input": x, "dimension": np.asarray([1], np.int32)})
    assert_both_raise("ArgMin", {"input": np.float32(3.0), "dimension": np.int32(0)})
