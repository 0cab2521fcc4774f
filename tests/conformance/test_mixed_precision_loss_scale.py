"""LossScaleOptimizer against tf-keras's: for scripted gradient sequences with inf/NaN at given steps, the
loss-scale trajectory, the dynamic counter, which steps are skipped (variables unchanged), the inner
optimizer's iterations and the variables equal tf-keras's exactly; fixed scales; get_config; Model.compile
under mixed_float16 wraps the optimizer."""
import numpy as np
import pytest
import tensorflow as tf
import tf_keras as keras

import tfc
from tfc import keras as tk


def _script(rng, steps, bad_steps, bad_value):
    gs = []
    for i in range(steps):
        g = rng.uniform(-1, 1, size=(3,)).astype(np.float32)
        if i in bad_steps:
            g[int(rng.integers(0, 3))] = bad_value
        gs.append(g)
    return gs


def _run_keras(gs, init, **kw):
    opt = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.legacy.SGD(0.1), **kw)
    v = tf.Variable(init)
    out = []
    for g in gs:
        opt.apply_gradients([(tf.constant(g), v)])
        out.append((float(opt.loss_scale), None if opt.dynamic_counter is None else int(opt.dynamic_counter),
                    int(opt.iterations), v.numpy().copy()))
    return out


def _run_tfc(gs, init, **kw):
    opt = tk.LossScaleOptimizer(tk.optimizer_from_config("SGD", {"learning_rate": 0.1}), **kw)
    layer = tk.layer_from_config("Dense", {"units": 3, "use_bias": False})
    layer.build((1, 1))
    layer.set_weights([init.reshape(1, 3)])
    v = layer.trainable_weights[0]
    out = []
    for g in gs:
        opt.apply_gradients([(g.reshape(1, 3), v)])
        out.append((opt.loss_scale, opt.dynamic_counter, opt.iterations, v.numpy().reshape(3).copy()))
    return out


@pytest.mark.parametrize("kw,bad,value", [
    (dict(initial_scale=8.0, dynamic_growth_steps=3), {2, 3, 9, 10, 11, 17}, np.inf),
    (dict(dynamic_growth_steps=2), {0, 1, 2, 5}, np.nan),
    (dict(initial_scale=2.0, dynamic_growth_steps=1), {0, 1, 2, 3, 7}, -np.inf),  # floors at 1
    (dict(), {4}, np.inf),                                                     # defaults: 2^15, 2000
    (dict(dynamic=False, initial_scale=64.0), set(), np.inf),                  # fixed: never changes
])
def test_trajectory_matches_tf_keras(rng, kw, bad, value):
    gs = _script(rng, 24, bad, value)
    init = rng.uniform(-1, 1, size=(3,)).astype(np.float32)
    want, got = _run_keras(gs, init, **kw), _run_tfc(gs, init, **kw)
    prev_w, prev_g = init, init
    for step, (w, g) in enumerate(zip(want, got)):
        assert g[0] == w[0], "step %d: loss scale %r, tf-keras %r" % (step, g[0], w[0])
        assert g[1] == w[1], "step %d: dynamic counter %r, tf-keras %r" % (step, g[1], w[1])
        assert g[2] == w[2], "step %d: iterations %r, tf-keras %r" % (step, g[2], w[2])
        # skipped exactly where tf-keras skips (the variable keeps every bit)
        skipped_w, skipped_g = np.array_equal(w[3], prev_w), np.array_equal(g[3], prev_g)
        assert skipped_g == skipped_w, "step %d: skipped %s, tf-keras %s" % (step, skipped_g, skipped_w)
        # SGD's own update may round differently by an ulp (FMA)
        np.testing.assert_allclose(g[3], w[3], rtol=1e-6, atol=1e-7, err_msg="step %d: variable" % step)
        prev_w, prev_g = w[3], g[3]


def test_get_config():
    opt = tk.LossScaleOptimizer(tk.optimizer_from_config("SGD", {"learning_rate": 0.1}), initial_scale=4.0,
                                dynamic_growth_steps=7)
    want = keras.mixed_precision.LossScaleOptimizer(keras.optimizers.legacy.SGD(0.1), initial_scale=4.0,
                                                    dynamic_growth_steps=7).get_config()
    got = opt.get_config()
    for k in ("dynamic", "initial_scale", "dynamic_growth_steps"):
        assert got[k] == want[k], k
    assert got["inner_optimizer"]["class_name"] == want["inner_optimizer"]["class_name"]


@pytest.mark.parametrize("policy", ["mixed_float16", "mixed_bfloat16"])
def test_fit_under_policy(rng, policy):
    """A small model under the policy (float32 softmax last) trains: float32 variables, float32 outputs, the
    loss falls; under mixed_float16 compile wrapped the optimizer and the loss scale is in force."""
    tk.set_global_policy(policy)
    try:
        m = tk.Sequential([tk.layer_from_config("Dense", {"units": 16, "activation": "relu"}),
                           tk.layer_from_config("Dense", {"units": 3}),
                           tk.layer_from_config("Activation", {"activation": "softmax", "dtype": "float32"})])
        m.build((None, 4))
        m.compile(optimizer=("SGD", {"learning_rate": 0.2}), loss="sparse_categorical_crossentropy")
    finally:
        tk.set_global_policy(None)
    x = rng.uniform(-1, 1, size=(256, 4)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32) + (x[:, 1] > 0.5).astype(np.int32)
    h = m.fit(x, y, batch_size=32, epochs=6)
    assert all(np.isfinite(h["loss"])) and h["loss"][-1] < h["loss"][0]
    assert all(w.dtype.name == "float32" for w in m.weights)
    assert m(x[:5]).dtype.name == "float32"
    cfg = m.optimizer.get_config()
    if policy == "mixed_float16":
        assert m.optimizer.class_name == "LossScaleOptimizer" and cfg["dynamic"] is True
        assert cfg["inner_optimizer"]["class_name"] == "SGD" and m.optimizer.iterations == 6 * 8
    else:
        assert m.optimizer.class_name == "SGD"
