"""Conv1D: tfc against tf_keras on random configurations drawn fresh every run (the seed is printed;
TFC_TEST_SEED=<n> replays a run): outputs, gradients, weights, layer.losses and configs through the shared layer
harness; channels_first against tf_keras's channels_last twin on transposed inputs (TensorFlow's CPU kernels have no
NCW convolution); padding "causal"; bad arguments."""
import numpy as np
import pytest

from conftest import assert_close, random_array, tf, tfc
from test_keras_layers import (add_init_reg, assert_config_equal, check_layer, clear_sessions, keras_build, norm,
                               pick, rand_bool, require_layer, tf_json_kwargs)

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras


def case_conv1d(rng, channels_first=False):
    kw = {"filters": int(rng.integers(1, 5)), "kernel_size": int(rng.integers(1, 4))}
    if rand_bool(rng):
        kw["kernel_size"] = (kw["kernel_size"],)
    k = kw["kernel_size"][0] if isinstance(kw["kernel_size"], tuple) else kw["kernel_size"]
    add_init_reg(rng, kw, ["kernel_initializer", "bias_initializer"],
                 ["kernel_regularizer", "bias_regularizer", "activity_regularizer"])
    d = 1
    if rand_bool(rng, 0.3):
        d = kw["dilation_rate"] = int(rng.integers(1, 4))
    elif rand_bool(rng):
        kw["strides"] = int(rng.integers(1, 4))
    if rand_bool(rng, 0.7):
        kw["padding"] = pick(rng, ["valid", "same", "causal"])
    if rand_bool(rng):
        kw["activation"] = pick(rng, ["relu", "tanh", "linear"])
    if rand_bool(rng, 0.25):
        kw["use_bias"] = False
    c = int(rng.integers(1, 4))
    if rand_bool(rng, 0.25):
        g = int(rng.integers(2, 4))
        kw["groups"], kw["filters"], c = g, g * int(rng.integers(1, 3)), g * int(rng.integers(1, 3))
    n = (k - 1) * d + 1 + int(rng.integers(0, 5))
    b = int(rng.integers(1, 4))
    if channels_first:
        kw["data_format"] = "channels_first"
        return kw, (b, c, n)
    return kw, (b, n, c)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv1d_matches_keras(dtype, rng):
    require_layer("Conv1D")
    for _ in range(10):
        kw, shape = case_conv1d(rng)
        if kw.get("groups", 1) > 1 and dtype == "float64":
            kw.pop("groups")  # TensorFlow's CPU kernels have no float64 grouped convolution
        check_layer("Conv1D", kw, shape, dtype, rng, {})


def test_conv1d_channels_first(rng):
    require_layer("Conv1D")
    for _ in range(6):
        kw, shape = case_conv1d(rng, channels_first=True)
        kw.pop("activity_regularizer", None)
        last = dict(kw, data_format="channels_last")
        tl = tf_keras.layers.Conv1D(**last)
        b, c, n = shape
        keras_build(tl, (b, n, c))
        tl.set_weights([random_array(rng, w.shape.as_list(), "float32") for w in tl.weights])
        ml = K.layer_from_config("Conv1D", tf_json_kwargs(kw))
        ml.build(shape)
        ml.set_weights(tl.get_weights())
        x = random_array(rng, shape, "float32")
        want = np.transpose(tl(np.transpose(x, (0, 2, 1))).numpy(), (0, 2, 1))
        assert_close(ml(x).numpy(), want, rtol=1e-4, atol=1e-5, msg="Conv1D(%s) input %s: " % (kw, shape))


def test_conv1d_partial_config_and_errors(rng):
    require_layer("Conv1D")
    for _ in range(6):
        kw, shape = case_conv1d(rng)
        clear_sessions()
        tl = tf_keras.layers.Conv1D(**kw)
        ml = K.layer_from_config("Conv1D", tf_json_kwargs(kw))
        assert_config_equal(ml.get_config(), tl.get_config(), "Conv1D(%s)" % kw)
        again = K.layer_from_config("Conv1D", ml.get_config())
        assert_config_equal(again.get_config(), ml.get_config(), "Conv1D(%s) round trip" % kw)
    with pytest.raises(tfc.InvalidArgumentError, match="filters"):
        K.layer_from_config("Conv1D", {"filters": 0, "kernel_size": 2}).build((1, 5, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="expected ndim=3"):
        K.layer_from_config("Conv1D", {"filters": 1, "kernel_size": 2}).build((1, 5, 2, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="padding"):
        K.layer_from_config("Conv1D", {"filters": 1, "kernel_size": 2, "padding": "full"}).build((1, 5, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="<= 0"):
        K.layer_from_config("Conv1D", {"filters": 1, "kernel_size": 4}).build((1, 2, 2))
