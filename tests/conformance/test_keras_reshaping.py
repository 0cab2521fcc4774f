"""UpSampling1D/2D, Cropping1D/2D, ZeroPadding1D, MaxPooling1D, AveragePooling1D, GlobalAveragePooling1D and
GlobalMaxPooling1D: tfc against tf_keras on random configurations drawn fresh every run (the seed is printed;
TFC_TEST_SEED=<n> replays a run): outputs, gradients and configs through the shared layer harness
(test_keras_layers.check_layer); 1-D channels_first pooling against tf_keras's channels_last twin on transposed
inputs (TensorFlow's CPU MaxPool has no NCHW); bad arguments; a tf_keras model's .h5 weights in tfc."""
import numpy as np
import pytest

from conftest import assert_close, random_array, tf, tfc
from test_keras_layers import (POOL_TOL, assert_config_equal, check_layer, clear_sessions, image_shape, keras_build,
                               pick, rand_bool, require_layer, tf_json_kwargs)

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras
DTYPES = ["float32", "float64", "float16"]


def _b(rng):
    return int(rng.integers(1, 4))


def case_up_sampling1d(rng):
    kw = {"size": int(rng.integers(1, 4))} if rand_bool(rng, 0.7) else {}
    return kw, (_b(rng), int(rng.integers(1, 5)), int(rng.integers(1, 4))), {}


def case_up_sampling2d(rng):
    kw = {}
    if rand_bool(rng, 0.7):
        kw["size"] = int(rng.integers(1, 4)) if rand_bool(rng) else (int(rng.integers(1, 4)), int(rng.integers(1, 4)))
    if rand_bool(rng, 0.6):
        kw["interpolation"] = pick(rng, ["nearest", "bilinear"])
    fmt = "channels_last"
    if rand_bool(rng, 0.3):
        fmt = kw["data_format"] = "channels_first"
    return kw, image_shape(rng, fmt, _b(rng), int(rng.integers(1, 5)), int(rng.integers(1, 5)),
                           int(rng.integers(1, 4))), {}


def case_cropping1d(rng):
    kw = {}
    c = (1, 1)
    if rand_bool(rng, 0.7):
        c = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
        kw["cropping"] = c if rand_bool(rng) else c[0]
        if not isinstance(kw["cropping"], tuple):
            c = (c[0], c[0])
    return kw, (_b(rng), sum(c) + int(rng.integers(1, 4)), int(rng.integers(1, 4))), {}


def case_cropping2d(rng):
    kw = {}
    c = ((0, 0), (0, 0))
    r = rng.random()
    if r < 0.25:
        v = int(rng.integers(0, 3))
        kw["cropping"], c = v, ((v, v), (v, v))
    elif r < 0.5:
        h, w = int(rng.integers(0, 3)), int(rng.integers(0, 3))
        kw["cropping"], c = (h, w), ((h, h), (w, w))
    elif r < 0.85:
        c = ((int(rng.integers(0, 3)), int(rng.integers(0, 3))), (int(rng.integers(0, 3)), int(rng.integers(0, 3))))
        kw["cropping"] = c
    fmt = "channels_last"
    if rand_bool(rng, 0.3):
        fmt = kw["data_format"] = "channels_first"
    return kw, image_shape(rng, fmt, _b(rng), sum(c[0]) + int(rng.integers(1, 4)), sum(c[1]) + int(rng.integers(1, 4)),
                           int(rng.integers(1, 4))), {}


def case_zero_padding1d(rng):
    kw = {}
    r = rng.random()
    if r < 0.35:
        kw["padding"] = int(rng.integers(0, 3))
    elif r < 0.8:
        kw["padding"] = (int(rng.integers(0, 3)), int(rng.integers(0, 3)))
    return kw, (_b(rng), int(rng.integers(1, 5)), int(rng.integers(1, 4))), {}


def case_pool1d(rng, channels_first=False):
    kw = {}
    p = 2
    if rand_bool(rng, 0.7):
        p = int(rng.integers(1, 4))
        kw["pool_size"] = p if rand_bool(rng) else (p,)
    if rand_bool(rng):
        kw["strides"] = int(rng.integers(1, 4))
    if rand_bool(rng):
        kw["padding"] = pick(rng, ["valid", "same"])
    n, c = p + int(rng.integers(0, 4)), int(rng.integers(1, 4))
    if channels_first:
        kw["data_format"] = "channels_first"
        return kw, (_b(rng), c, n), {"tol": POOL_TOL}
    return kw, (_b(rng), n, c), {"tol": POOL_TOL}


def case_global_pool1d(rng, channels_first=None):
    kw = {}
    if channels_first is None:
        channels_first = rand_bool(rng, 0.4)
    if channels_first:
        kw["data_format"] = "channels_first"
    if rand_bool(rng):
        kw["keepdims"] = rand_bool(rng)
    b, n, c = _b(rng), int(rng.integers(1, 5)), int(rng.integers(1, 4))
    return kw, ((b, c, n) if channels_first else (b, n, c)), {"tol": POOL_TOL}


CASES = {
    "UpSampling1D": case_up_sampling1d,
    "UpSampling2D": case_up_sampling2d,
    "Cropping1D": case_cropping1d,
    "Cropping2D": case_cropping2d,
    "ZeroPadding1D": case_zero_padding1d,
    "MaxPooling1D": case_pool1d,
    "AveragePooling1D": case_pool1d,
    "GlobalAveragePooling1D": case_global_pool1d,
    "GlobalMaxPooling1D": case_global_pool1d,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("class_name", sorted(CASES))
def test_layer_matches_keras(class_name, dtype, rng):
    require_layer(class_name)
    for _ in range(8):
        kw, shape, opts = CASES[class_name](rng)
        if class_name == "UpSampling2D" and kw.get("interpolation") == "bilinear" and dtype == "float16":
            opts = dict(opts, tol={"float16": (2e-2, 2e-2)})
        check_layer(class_name, kw, shape, dtype, rng, opts)


@pytest.mark.parametrize("class_name", ["MaxPooling1D", "AveragePooling1D"])
def test_pool1d_channels_first(class_name, rng):
    """channels_first against the channels_last twin on transposed inputs: outputs and input gradients."""
    require_layer(class_name)
    for _ in range(6):
        kw, shape, _ = case_pool1d(rng, channels_first=True)
        tl = getattr(tf_keras.layers, class_name)(**dict(kw, data_format="channels_last"))
        ml = K.layer_from_config(class_name, tf_json_kwargs(kw))
        x = random_array(rng, shape, "float32")
        xt = tf.constant(np.transpose(x, (0, 2, 1)))
        with tf.GradientTape() as tape:
            tape.watch(xt)
            yt = tl(xt)
        o = random_array(rng, yt.shape.as_list(), "float32")
        gt = np.transpose(tape.gradient(yt, xt, output_gradients=tf.constant(o)).numpy(), (0, 2, 1))
        xm = tfc.constant(x)
        with tfc.GradientTape() as tape2:
            tape2.watch(xm)
            ym = ml(xm)
        om = np.transpose(o, (0, 2, 1))
        gm = tape2.gradient(ym, xm, output_gradients=tfc.constant(om)).numpy()
        what = "%s(%s) input %s" % (class_name, kw, shape)
        assert_close(ym.numpy(), np.transpose(yt.numpy(), (0, 2, 1)), rtol=1e-5, atol=1e-6, msg=what + " output: ")
        assert_close(gm, gt, rtol=1e-5, atol=1e-6, msg=what + " input gradient: ")


@pytest.mark.parametrize("class_name", sorted(CASES))
def test_partial_config_matches_keras(class_name, rng):
    require_layer(class_name)
    for _ in range(6):
        kw, shape, _ = CASES[class_name](rng)
        if rand_bool(rng, 0.2):
            kw["name"] = "my_layer_%d" % int(rng.integers(0, 100))
        what = "%s(%s)" % (class_name, kw)
        clear_sessions()
        tl = getattr(tf_keras.layers, class_name)(**kw)
        ml = K.layer_from_config(class_name, tf_json_kwargs(kw))
        assert_config_equal(ml.get_config(), tl.get_config(), what + " before build")
        keras_build(tl, shape)
        ml.build(shape)
        assert_config_equal(ml.get_config(), tl.get_config(), what + " after build")
        again = K.layer_from_config(class_name, ml.get_config())
        assert_config_equal(again.get_config(), ml.get_config(), what + " round trip")


def test_bad_arguments():
    require_layer("Cropping1D")
    L = K.layer_from_config
    with pytest.raises(tfc.InvalidArgumentError, match=r"must be greater than the input shape.*\(2, 1\)"):
        L("Cropping1D", {"cropping": [2, 1]}).build((1, 3, 2))
    with pytest.raises(tfc.InvalidArgumentError, match=r"must be greater than the input shape"):
        L("Cropping2D", {"cropping": [[1, 1], [0, 0]]}).build((1, 2, 4, 2))
    with pytest.raises(tfc.InvalidArgumentError, match=r"non-negative.*-1"):
        L("Cropping1D", {"cropping": [-1, 1]}).build((1, 5, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="expected ndim=3"):
        L("Cropping1D", {}).build((1, 5, 2, 2))
    with pytest.raises(tfc.InvalidArgumentError, match=r"`padding`.*-2"):
        L("ZeroPadding1D", {"padding": [-2, 1]}).build((1, 5, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="size"):
        L("UpSampling1D", {"size": 0})
    with pytest.raises(tfc.InvalidArgumentError, match=r"interpolation.*cubic"):
        L("UpSampling2D", {"interpolation": "cubic"}).build((1, 2, 2, 1))
    with pytest.raises(tfc.UnimplementedError, match="bicubic"):
        L("UpSampling2D", {"interpolation": "bicubic"}).build((1, 2, 2, 1))
    with pytest.raises(tfc.InvalidArgumentError, match="expected ndim=4"):
        L("UpSampling2D", {}).build((1, 2, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="<= 0"):
        L("MaxPooling1D", {"pool_size": 4}).build((1, 3, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="pool_size"):
        L("AveragePooling1D", {"pool_size": 0})
    with pytest.raises(tfc.InvalidArgumentError, match="expected ndim=3"):
        L("GlobalAveragePooling1D", {}).build((1, 3, 2, 2))
    with pytest.raises(tfc.InvalidArgumentError, match="Incorrect input shape"):
        L("GlobalMaxPooling1D", {}).build((1, 0, 2))


def _seq_model():
    return tf_keras.Sequential([
        tf_keras.layers.ZeroPadding1D((1, 2), input_shape=(7, 3)),
        tf_keras.layers.Conv1D(4, 3, activation="relu"),
        tf_keras.layers.UpSampling1D(3),
        tf_keras.layers.Cropping1D((2, 1)),
        tf_keras.layers.MaxPooling1D(3, strides=2, padding="same"),
        tf_keras.layers.AveragePooling1D(2),
        tf_keras.layers.GlobalMaxPooling1D(),
        tf_keras.layers.Dense(2),
    ])


def _image_model():
    return tf_keras.Sequential([
        tf_keras.layers.Conv2D(3, 2, input_shape=(6, 5, 2)),
        tf_keras.layers.UpSampling2D((2, 3), interpolation="bilinear"),
        tf_keras.layers.Cropping2D(((1, 2), (0, 3))),
        tf_keras.layers.UpSampling2D(2),
        tf_keras.layers.Reshape((-1, 3)),
        tf_keras.layers.GlobalAveragePooling1D(),
        tf_keras.layers.Dense(2),
    ])


@pytest.mark.parametrize("make,shape", [(_seq_model, (7, 3)), (_image_model, (6, 5, 2))])
def test_keras_h5_model_in_tfc(make, shape, rng, tmp_path):
    """A tf_keras model made of these layers: tfc's model from its JSON loads the .h5 weights and predicts the
    same, with the same input gradient."""
    require_layer("UpSampling1D")
    src = make()
    src.set_weights([random_array(rng, w.shape.as_list(), "float32", -0.5, 0.5) for w in src.weights])
    path = str(tmp_path / "w.h5")
    src.save_weights(path)
    mm = K.model_from_json(src.to_json())
    mm.load_weights(path)
    x = random_array(rng, (4,) + shape, "float32")
    o = random_array(rng, (4, 2), "float32")
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        yt = src(xt)
    xm = tfc.constant(x)
    with tfc.GradientTape() as tape2:
        tape2.watch(xm)
        ym = mm(xm)
    assert_close(ym.numpy(), yt.numpy(), rtol=1e-4, atol=1e-5)
    assert_close(tape2.gradient(ym, xm, output_gradients=tfc.constant(o)).numpy(),
                 tape.gradient(yt, xt, output_gradients=tf.constant(o)).numpy(), rtol=1e-4, atol=1e-5)
