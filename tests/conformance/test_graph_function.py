"""tfc.function / tfc.cond / tfc.while_loop against tf.function on fresh random inputs: outputs, gradients and
how many times the same call sequence traces."""
import numpy as np
import pytest
import tensorflow as tf

import tfc
from conftest import assert_close, random_array


def both(body):
    """The same Python body for both libraries: body(lib, raw) with lib = tf or tfc, raw = its raw_ops."""
    return body(tf, tf.raw_ops), body(tfc, tfc.raw_ops)


def arith(lib, raw):
    def f(x, y):
        return raw.Tanh(x=raw.AddV2(x=raw.Mul(x=x, y=y), y=x)) - y, raw.Sum(input=x, axis=np.int32(0))
    return f


@pytest.mark.parametrize("reduce_retracing", [False, True])
def test_outputs_and_retracing(rng, reduce_retracing):
    tf_f = tf.function(arith(tf, tf.raw_ops), reduce_retracing=reduce_retracing)
    c_f = tfc.function(arith(tfc, tfc.raw_ops), reduce_retracing=reduce_retracing)
    calls = [((2, 3), "float32"), ((2, 3), "float32"), ((3, 3), "float32"), ((4, 3), "float32"),
             ((2, 3), "float64"), ((5, 3), "float32"), ((5, 2), "float32")]
    for shape, dt in calls:
        x, y = random_array(rng, shape, dt), random_array(rng, shape, dt)
        want, got = tf_f(x, y), c_f(x, y)
        for w, g in zip(want, got):
            assert_close(g.numpy(), w.numpy(), dtype=dt)
    assert c_f.experimental_get_tracing_count() == tf_f.experimental_get_tracing_count()


def test_input_signature(rng):
    sig = [tf.TensorSpec([None, 4], tf.float32, name="x"), tf.TensorSpec([None, 4], tf.float32, name="y")]
    tf_f = tf.function(arith(tf, tf.raw_ops), input_signature=sig)
    c_f = tfc.function(arith(tfc, tfc.raw_ops), input_signature=sig)
    for rows in (1, 3, 6):
        x, y = random_array(rng, (rows, 4)), random_array(rng, (rows, 4))
        for w, g in zip(tf_f(x, y), c_f(x, y)):
            assert_close(g.numpy(), w.numpy())
    assert c_f.experimental_get_tracing_count() == tf_f.experimental_get_tracing_count() == 1
    bad = random_array(rng, (2, 3))
    with pytest.raises(Exception):
        tf_f(bad, bad)
    with pytest.raises(tfc.errors.InvalidArgumentError, match="'x'"):
        c_f(bad, bad)


def test_variables_updated(rng):
    init = random_array(rng, (3,))
    delta = random_array(rng, (3,))
    res = []
    for lib in (tf, tfc):
        v = lib.Variable(init)

        def step(d, v=v, lib=lib):
            v.assign_add(d)
            return lib.raw_ops.Mul(x=v.read_value(), y=d)

        f = lib.function(step)
        outs = [f(delta).numpy() for _ in range(3)]
        res.append((outs, v.numpy()))
    for w, g in zip(res[0][0], res[1][0]):
        assert_close(g, w)
    assert_close(res[1][1], res[0][1])


def test_cond_and_while(rng):
    def body(lib, raw):
        def f(x, p, n):
            c = lib.cond(raw.Greater(x=p, y=np.float32(0)), lambda: raw.Mul(x=x, y=x), lambda: raw.Sin(x=x))

            def wbody(i, s):
                return raw.AddV2(x=i, y=np.int32(1)), raw.AddV2(x=s, y=raw.Mul(x=s, y=np.float32(0.5)))

            _, s = lib.while_loop(lambda i, s: raw.Less(x=i, y=n), wbody, (np.int32(0), c))
            return s
        return f

    tf_f, c_f = both(lambda lib, raw: lib.function(body(lib, raw)))
    x = random_array(rng, (2, 3))
    for p, n in ((1.0, 3), (-1.0, 0), (0.5, 5), (-2.0, 2)):
        want = tf_f(x, np.float32(p), np.int32(n))
        got = c_f(x, np.float32(p), np.int32(n))
        assert_close(got.numpy(), want.numpy())
    assert c_f.experimental_get_tracing_count() == tf_f.experimental_get_tracing_count()


@pytest.mark.parametrize("pred", [True, False])
def test_gradient_of_cond_through_function(rng, pred):
    def body(lib, raw):
        def f(x, p):
            return lib.cond(p, lambda: raw.Mul(x=x, y=raw.Exp(x=x)), lambda: raw.Tanh(x=x))
        return f

    x = random_array(rng, (4,))
    grads = []
    for lib in (tf, tfc):
        f = lib.function(body(lib, lib.raw_ops))
        xt = lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch(xt)
            y = f(xt, lib.constant(pred))
        grads.append(tape.gradient(y, xt).numpy())
    assert_close(grads[1], grads[0])


@pytest.mark.parametrize("n,max_iter", [(0, None), (1, None), (4, None), (6, 3)])
def test_gradient_of_while_through_function(rng, n, max_iter):
    """Gradients of a traced while_loop w.r.t. its input, captured tensors and a variable read in the body (tfc's
    traced variable reads have no static shape yet: s gets an unknown-shape invariant in both)."""
    def body(lib, raw, v):
        def f(x, w, n):
            def wbody(i, s):
                t = raw.AddV2(x=raw.Mul(x=s, y=raw.Tanh(x=w)), y=raw.Mul(x=x, y=v.read_value()))
                return raw.AddV2(x=i, y=np.int32(1)), raw.Sin(x=t)
            _, s = lib.while_loop(lambda i, s: raw.Less(x=i, y=n), wbody, (np.int32(0), raw.Mul(x=x, y=x)),
                                  maximum_iterations=max_iter,
                                  shape_invariants=(tf.TensorShape([]), tf.TensorShape(None)))
            return s
        return f

    x, w, v0 = random_array(rng, (3,)), random_array(rng, (3,)), random_array(rng, (3,))
    grads = []
    for lib in (tf, tfc):
        v = lib.Variable(v0)
        f = lib.function(body(lib, lib.raw_ops, v))
        xt, wt = lib.constant(x), lib.constant(w)
        with lib.GradientTape() as tape:
            tape.watch(xt)
            tape.watch(wt)
            y = f(xt, wt, lib.constant(np.int32(n)))
        grads.append([g.numpy() for g in tape.gradient(y, [xt, wt, v])])
    for g, want in zip(grads[1], grads[0]):
        assert_close(g, want)
