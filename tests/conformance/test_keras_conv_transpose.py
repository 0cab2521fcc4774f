"""Conv1DTranspose / Conv2DTranspose: tfc against tf_keras on random configurations drawn fresh every run (the seed
is printed; TFC_TEST_SEED=<n> replays a run): outputs, gradients (inputs, kernel, bias), weights, layer.losses and
configs through the shared layer harness (test_keras_layers.check_layer), with padding valid/same, strides,
dilation and output_padding; channels_first against tf_keras's channels_last twin on transposed inputs where
TensorFlow's CPU kernels lack NCHW; bad arguments; weights of a tf_keras model in an .h5 file."""
import numpy as np
import pytest

from conftest import assert_close, random_array, tf, tfc
from test_keras_layers import (add_init_reg, assert_config_equal, check_layer, clear_sessions, keras_build, pick,
                               rand_bool, require_layer, tf_json_kwargs)

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras


def deconv_len(n, k, padding, out_pad, s, d):
    k = (k - 1) * d + 1
    if out_pad is None:
        return n * s + max(k - s, 0) if padding == "valid" else n * s
    return (n - 1) * s + k - 2 * (k // 2 if padding == "same" else 0) + out_pad


_TF_DILATED_1D = {}


def tf_runs_dilated_conv1d_transpose():
    """tf.nn.conv1d_transpose passes dilations to Conv2DBackpropInput, which some TensorFlow CPU builds reject."""
    if not _TF_DILATED_1D:
        try:
            tf.nn.conv1d_transpose(tf.zeros((1, 4, 1)), tf.zeros((2, 1, 1)), (1, 5, 1), 1, dilations=2)
            _TF_DILATED_1D["ok"] = True
        except (tf.errors.InvalidArgumentError, tf.errors.UnimplementedError, ValueError):
            _TF_DILATED_1D["ok"] = False
    return _TF_DILATED_1D["ok"]


def consistent(n, k, padding, out_pad, s, d):
    """The output length's forward convolution gives back n (else TensorFlow's Conv2DBackpropInput raises)."""
    m, keff = deconv_len(n, k, padding, out_pad, s, d), (k - 1) * d + 1
    back = -(-m // s) if padding == "same" else ((m - keff) // s + 1 if m >= keff else 0)
    return m >= 1 and back == n


def case_conv_transpose(rng, rank, channels_first=False, valid=True):
    """(kwargs, input shape) of a random ConvNDTranspose whose output lengths are >= 1 and consistent (or, with
    valid=False, one with output_padding where some length is not)."""
    while True:
        kw = {"filters": int(rng.integers(1, 5))}
        k = [int(rng.integers(1, 4)) for _ in range(rank)]
        kw["kernel_size"] = k[0] if rank == 1 or rand_bool(rng) else tuple(k)
        if not isinstance(kw["kernel_size"], tuple):
            k = [k[0]] * rank
        s, d = [1] * rank, [1] * rank
        if rand_bool(rng, 0.25) and (rank == 2 or tf_runs_dilated_conv1d_transpose()):
            d = [int(rng.integers(2, 4))] * rank  # Keras's conv2d_transpose needs equal rates
            kw["dilation_rate"] = d[0] if rand_bool(rng) else tuple(d)
        elif rand_bool(rng, 0.8):
            s = [int(rng.integers(1, 4)) for _ in range(rank)]
            kw["strides"] = tuple(s) if rank == 2 or rand_bool(rng) else s[0]
        padding = "valid"
        if rand_bool(rng, 0.7):
            padding = kw["padding"] = pick(rng, ["valid", "same"])
        op = [None] * rank
        if rand_bool(rng, 0.4):
            op = [int(rng.integers(0, x)) for x in s]
            kw["output_padding"] = tuple(op) if rank == 2 or rand_bool(rng) else op[0]
        if rand_bool(rng):
            kw["activation"] = pick(rng, ["relu", "tanh", "linear"])
        if rand_bool(rng, 0.25):
            kw["use_bias"] = False
        add_init_reg(rng, kw, ["kernel_initializer", "bias_initializer"],
                     ["kernel_regularizer", "bias_regularizer", "activity_regularizer"])
        spatial = [int(rng.integers(1, 6)) for _ in range(rank)]
        ok = all(consistent(n, k[i], padding, op[i], s[i], d[i]) for i, n in enumerate(spatial))
        if ok == valid and (valid or "output_padding" in kw):
            break
    b, c = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    if channels_first:
        kw["data_format"] = "channels_first"
        return kw, tuple([b, c] + spatial)
    return kw, tuple([b] + spatial + [c])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv2d_transpose_matches_keras(dtype, rng):
    require_layer("Conv2DTranspose")
    for _ in range(10):
        kw, shape = case_conv_transpose(rng, 2, channels_first=rand_bool(rng, 0.3))
        check_layer("Conv2DTranspose", kw, shape, dtype, rng, {})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_conv1d_transpose_matches_keras(dtype, rng):
    require_layer("Conv1DTranspose")
    for _ in range(10):
        kw, shape = case_conv_transpose(rng, 1)
        check_layer("Conv1DTranspose", kw, shape, dtype, rng, {})


def test_conv1d_transpose_channels_first(rng):
    """TensorFlow's CPU kernels have no NCW transposed convolution: compare with the channels_last twin."""
    require_layer("Conv1DTranspose")
    for _ in range(6):
        kw, shape = case_conv_transpose(rng, 1, channels_first=True)
        kw.pop("activity_regularizer", None)
        tl = tf_keras.layers.Conv1DTranspose(**dict(kw, data_format="channels_last"))
        b, c, n = shape
        keras_build(tl, (b, n, c))
        tl.set_weights([random_array(rng, w.shape.as_list(), "float32") for w in tl.weights])
        ml = K.layer_from_config("Conv1DTranspose", tf_json_kwargs(kw))
        ml.build(shape)
        ml.set_weights(tl.get_weights())
        x = random_array(rng, shape, "float32")
        want = np.transpose(tl(np.transpose(x, (0, 2, 1))).numpy(), (0, 2, 1))
        assert_close(ml(x).numpy(), want, rtol=1e-4, atol=1e-5, msg="Conv1DTranspose(%s) input %s: " % (kw, shape))


@pytest.mark.parametrize("cls,rank", [("Conv1DTranspose", 1), ("Conv2DTranspose", 2)])
def test_conv_transpose_partial_config(cls, rank, rng):
    require_layer(cls)
    for _ in range(6):
        kw, shape = case_conv_transpose(rng, rank)
        clear_sessions()
        tl = getattr(tf_keras.layers, cls)(**kw)
        ml = K.layer_from_config(cls, tf_json_kwargs(kw))
        assert_config_equal(ml.get_config(), tl.get_config(), "%s(%s)" % (cls, kw))
        keras_build(tl, shape)
        ml.build(shape)
        assert_config_equal(ml.get_config(), tl.get_config(), "%s(%s) after build" % (cls, kw))
        again = K.layer_from_config(cls, ml.get_config())
        assert_config_equal(again.get_config(), ml.get_config(), "%s(%s) round trip" % (cls, kw))


def test_conv_transpose_bad_arguments():
    require_layer("Conv2DTranspose")
    L = K.layer_from_config
    with pytest.raises(tfc.InvalidArgumentError, match=r"Strides must be greater than output padding.*\(2, 2\)"):
        L("Conv2DTranspose", {"filters": 1, "kernel_size": 2, "strides": 2, "output_padding": 2}).build((1, 3, 3, 1))
    with pytest.raises(tfc.InvalidArgumentError, match=r"Strides must be greater than output padding"):
        L("Conv1DTranspose", {"filters": 1, "kernel_size": 2, "output_padding": 1}).build((1, 3, 1))
    with pytest.raises(tfc.InvalidArgumentError, match=r"dilation_rate=\(1, 2\)"):
        L("Conv2DTranspose", {"filters": 1, "kernel_size": 2, "dilation_rate": [1, 2]}).build((1, 3, 3, 1))
    with pytest.raises(tfc.InvalidArgumentError, match="Inputs should have rank 4"):
        L("Conv2DTranspose", {"filters": 1, "kernel_size": 2}).build((1, 3, 3))
    with pytest.raises(tfc.InvalidArgumentError, match="Inputs should have rank 3"):
        L("Conv1DTranspose", {"filters": 1, "kernel_size": 2}).build((1, 3, 3, 1))
    with pytest.raises(tfc.InvalidArgumentError, match="filters"):
        L("Conv2DTranspose", {"filters": 0, "kernel_size": 2}).build((1, 3, 3, 1))
    with pytest.raises(tfc.InvalidArgumentError, match="padding.*full"):
        L("Conv2DTranspose", {"filters": 1, "kernel_size": 2, "padding": "full"}).build((1, 3, 3, 1))
    with pytest.raises(tfc.InvalidArgumentError, match="channel dimension"):
        L("Conv2DTranspose", {"filters": 1, "kernel_size": 2}).build((1, 3, 3, None))
    with pytest.raises(tfc.InvalidArgumentError, match="non-positive output length 0"):
        L("Conv2DTranspose", {"filters": 1, "kernel_size": 2, "strides": 2, "padding": "same",
                              "output_padding": 0}).build((1, 1, 3, 1))
    with pytest.raises(tfc.InvalidArgumentError, match="groups must be 1"):
        L("Conv2DTranspose", {"filters": 2, "kernel_size": 2, "groups": 2})


@pytest.mark.parametrize("cls,rank", [("Conv1DTranspose", 1), ("Conv2DTranspose", 2)])
def test_conv_transpose_inconsistent_output_padding(cls, rank, rng):
    """Where output_padding gives an output whose forward convolution is not the input's length, TensorFlow raises
    at the call (Conv2DBackpropInput) and tfc at build, naming the layer and the values."""
    require_layer(cls)
    for _ in range(4):
        kw, shape = case_conv_transpose(rng, rank, valid=False)
        tl = getattr(tf_keras.layers, cls)(**kw)
        with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
            tl(tf.zeros(shape))
        with pytest.raises(tfc.InvalidArgumentError, match=r"output_padding=\(|output_padding=None"):
            K.layer_from_config(cls, tf_json_kwargs(kw)).build(shape)


def _seq_model():
    return tf_keras.Sequential([
        tf_keras.layers.Conv2DTranspose(3, 3, strides=2, padding="same", output_padding=1, activation="relu",
                                        input_shape=(5, 4, 2)),
        tf_keras.layers.Conv2DTranspose(2, (2, 3), dilation_rate=2),
        tf_keras.layers.Flatten(),
        tf_keras.layers.Dense(3),
    ])


def _seq_model_1d():
    return tf_keras.Sequential([
        tf_keras.layers.Conv1DTranspose(4, 3, strides=2, activation="tanh", input_shape=(6, 2)),
        tf_keras.layers.Conv1DTranspose(2, 2, padding="same", strides=3, output_padding=2),
        tf_keras.layers.Flatten(),
        tf_keras.layers.Dense(2),
    ])


@pytest.mark.parametrize("make,shape", [(_seq_model, (5, 4, 2)), (_seq_model_1d, (6, 2))])
def test_keras_h5_weights_load_in_tfc(make, shape, rng, tmp_path):
    """A tf_keras model with transposed convolutions: its .h5 weights load into tfc's model made from its JSON,
    with equal predictions and gradients of a loss with respect to the input."""
    require_layer("Conv2DTranspose")
    src = make()
    src.set_weights([random_array(rng, w.shape.as_list(), "float32", -0.5, 0.5) for w in src.weights])
    path = str(tmp_path / "w.h5")
    src.save_weights(path)
    mm = K.model_from_json(src.to_json())
    mm.load_weights(path)
    for i, (a, b) in enumerate(zip(mm.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="weight %d" % i)
    x = random_array(rng, (3,) + shape, "float32")
    assert_close(mm(x).numpy(), src(x).numpy(), rtol=1e-4, atol=1e-5)
    o = random_array(rng, src(x).shape.as_list(), "float32")
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        want = tf.reduce_sum(src(xt) * o)
    xm = tfc.constant(x)
    with tfc.GradientTape() as tape2:
        tape2.watch(xm)
        y = mm(xm)
        got = tfc.raw_ops.Sum(input=y * tfc.constant(o), axis=tfc.constant(np.arange(o.ndim, dtype=np.int32)))
    assert_close(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    assert_close(tape2.gradient(got, xm).numpy(), tape.gradient(want, xt).numpy(), rtol=1e-4, atol=1e-5)
