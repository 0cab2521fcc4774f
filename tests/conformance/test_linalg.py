"""MatMul and BatchMatMulV2 against TensorFlow on fresh random inputs: random sizes (including 0), transposes /
adjoints, broadcast batch dims, every dtype TensorFlow's CPU kernels take; gradients against tf.GradientTape;
errors against TensorFlow's. (tfc also multiplies int8/uint8/int16, which TensorFlow registers but has no CPU
kernel for; those are covered by tests/unit/test_linalg.c.)"""
import numpy as np
import pytest

from conftest import FLOAT_DTYPES, assert_both_raise, assert_grad_matches, assert_op_matches, random_array, tf, tfc

DTYPES = FLOAT_DTYPES + ["int32", "int64"]
TRIALS = 6


def operands(rng, dtype, m, k, n, ta, tb, bx=(), by=()):
    lo, hi = (-5, 6) if dtype in ("int32", "int64") else (-1, 1)
    a = random_array(rng, tuple(bx) + ((k, m) if ta else (m, k)), dtype, lo, hi)
    b = random_array(rng, tuple(by) + ((n, k) if tb else (k, n)), dtype, lo, hi)
    return a, b


def tol(dtype, k):
    """float16/bfloat16 products are rounded once by tfc (float32 accumulation); TensorFlow may differ by
    rounding of its own accumulation, which grows with k."""
    return {"float16": 2e-3 * max(1, k), "bfloat16": 1e-2 * max(1, k)}.get(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul(rng, dtype):
    for _ in range(TRIALS):
        m, k, n = (int(rng.integers(0, 9)) for _ in range(3))
        if rng.random() < 0.3:
            m, k, n = (int(rng.integers(30, 90)) for _ in range(3))
        ta, tb = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        a, b = operands(rng, dtype, m, k, n, ta, tb)
        t = tol(dtype, k)
        assert_op_matches("MatMul", {"a": a, "b": b}, {"transpose_a": ta, "transpose_b": tb}, rtol=t, atol=t)


def broadcast_batches(rng):
    out = [int(rng.integers(0, 4)) for _ in range(int(rng.integers(0, 3)))]
    bx, by = list(out), list(out)
    for i in range(len(out)):
        r = rng.random()
        if r < 0.3:
            bx[i] = 1
        elif r < 0.6:
            by[i] = 1
    cut = int(rng.integers(0, len(out) + 1))
    return (bx[cut:], by) if rng.random() < 0.5 else (bx, by[cut:])


@pytest.mark.parametrize("dtype", DTYPES)
def test_batch_matmul(rng, dtype):
    for _ in range(TRIALS):
        m, k, n = (int(rng.integers(0, 7)) for _ in range(3))
        ax, ay = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        bx, by = broadcast_batches(rng)
        a, b = operands(rng, dtype, m, k, n, ax, ay, bx, by)
        t = tol(dtype, k)
        assert_op_matches("BatchMatMulV2", {"x": a, "y": b}, {"adj_x": ax, "adj_y": ay}, rtol=t, atol=t)


def test_batch_matmul_many(rng):
    """Many small products (split across the pool) and a large batched product (OpenBLAS threads)."""
    for bx, m, k, n in [((400,), 5, 7, 3), ((2, 3), 80, 120, 70)]:
        a, b = operands(rng, "float32", m, k, n, False, True, bx, bx)
        assert_op_matches("BatchMatMulV2", {"x": a, "y": b}, {"adj_y": True})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matmul_gradients(rng, dtype):
    for ta in (False, True):
        for tb in (False, True):
            m, k, n = (int(rng.integers(1, 6)) for _ in range(3))
            a, b = operands(rng, dtype, m, k, n, ta, tb)
            assert_grad_matches("MatMul", {"a": a, "b": b}, {"transpose_a": ta, "transpose_b": tb}, rng=rng)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_matmul_gradients(rng, dtype):
    for _ in range(TRIALS):
        m, k, n = (int(rng.integers(1, 5)) for _ in range(3))
        ax, ay = bool(rng.random() < 0.5), bool(rng.random() < 0.5)
        bx, by = broadcast_batches(rng)
        a, b = operands(rng, dtype, m, k, n, ax, ay, bx, by)
        assert_grad_matches("BatchMatMulV2", {"x": a, "y": b}, {"adj_x": ax, "adj_y": ay}, rng=rng)


def test_second_order(rng):
    a = random_array(rng, (3, 4), "float64")
    b = random_array(rng, (4, 2), "float64")
    with tf.GradientTape() as t2:
        at = tf.constant(a)
        t2.watch(at)
        with tf.GradientTape() as t1:
            t1.watch(at)
            y = tf.raw_ops.MatMul(a=at * at, b=tf.constant(b))
        g = t1.gradient(y, at)
    want = t2.gradient(g, at).numpy()
    with tfc.GradientTape() as c2:
        ac = tfc.constant(a)
        c2.watch(ac)
        with tfc.GradientTape() as c1:
            c1.watch(ac)
            yc = tfc.raw_ops.MatMul(a=ac * ac, b=tfc.constant(b))
        gc = c1.gradient(yc, ac)
    np.testing.assert_allclose(c2.gradient(gc, ac).numpy(), want, rtol=1e-10, atol=1e-12)


def test_errors(rng):
    f = lambda *s: random_array(rng, s, "float32")  # noqa: E731
    assert_both_raise("MatMul", {"a": f(2, 3), "b": f(4, 3)})
    assert_both_raise("MatMul", {"a": f(2, 3), "b": f(2, 3)}, {"transpose_a": True, "transpose_b": True})
    assert_both_raise("MatMul", {"a": f(2, 3, 3), "b": f(3, 3)})
    assert_both_raise("BatchMatMulV2", {"x": f(2, 2, 3), "y": f(3, 3, 4)})
    assert_both_raise("BatchMatMulV2", {"x": f(2, 3), "y": f(4, 4)})
    assert_both_raise("BatchMatMulV2", {"x": f(3), "y": f(3, 4)})
    assert_both_raise("BatchMatMulV2", {"x": f(1, 2, 3), "y": f(1, 3, 2)}, {"adj_y": True})
