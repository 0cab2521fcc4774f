"""Keras error paths: what tf_keras rejects, tfc rejects with the right error class (tfc.InvalidArgumentError
where Keras raises ValueError / InvalidArgumentError, NotFoundError for missing files, DataLossError for corrupt
ones) and a message naming the layer, loss or file and the offending shapes/values. Weights files are written
atomically: an existing file is never left half-written, whatever fails."""
import ctypes
import os
import shutil

import h5py
import numpy as np
import pytest

from conftest import need, random_array, tf, tfc

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras


def raises_both(tfc_fn, tf_fn, cls=tfc.InvalidArgumentError, contains=()):
    """tf_keras rejects tf_fn(); tfc raises cls from tfc_fn() with every string of `contains` in its message."""
    tf_exc = None
    try:
        tf_fn()
    except Exception as e:  # noqa: BLE001
        tf_exc = e
    assert tf_exc is not None, "tf_keras accepted the call"
    with pytest.raises(cls) as ei:
        tfc_fn()
    msg = str(ei.value)
    for s in contains:
        assert s in msg, "message %r lacks %r (tf_keras: %s: %s)" % (msg, s, type(tf_exc).__name__, tf_exc)
    return ei.value, tf_exc


def raises_tfc(tfc_fn, cls=tfc.InvalidArgumentError, contains=()):
    """For errors tf_keras 2.21 only reports later or not at all (TensorFlow 2.4's Keras raised them)."""
    with pytest.raises(cls) as ei:
        tfc_fn()
    for s in contains:
        assert s in str(ei.value), "message %r lacks %r" % (str(ei.value), s)
    return ei.value


def f32(*shape):
    return np.ones(shape, np.float32)


# ---- layers ----------------------------------------------------------------------------------------------

# (class, config, build shape or None, inputs of the failing call, strings the message must contain)
LAYER_SHAPE_ERRORS = [
    ("Dense", {"units": 2}, (None, 3), [f32(2, 5)], ["(2, 5)", "3"]),
    ("Dense", {"units": 2}, None, [f32(4)], ["(4,)"]),
    ("Conv2D", {"filters": 2, "kernel_size": 3}, None, [f32(2, 5, 5)], ["(2, 5, 5)", "ndim"]),
    ("Conv2D", {"filters": 2, "kernel_size": 3}, (None, 5, 5, 3), [f32(2, 5, 5, 4)], ["(2, 5, 5, 4)"]),
    # a negative output length (tf_keras 2.21 called eagerly gives a 0-length output, as TensorFlow's Conv2D op,
    # for a window one longer than the input, where tfc's layer refuses as tf_keras's symbolic call does)
    ("Conv2D", {"filters": 2, "kernel_size": 3, "dilation_rate": 3}, None, [f32(1, 5, 5, 1)], []),
    ("DepthwiseConv2D", {"kernel_size": 2}, None, [f32(2, 5, 5)], ["(2, 5, 5)"]),
    ("MaxPooling2D", {"pool_size": 2}, None, [f32(2, 5, 5)], ["(2, 5, 5)"]),
    ("BatchNormalization", {"axis": 3}, None, [f32(2, 4)], []),
    ("BatchNormalization", {}, (None, 4), [f32(2, 5)], ["(2, 5)"]),
    ("LayerNormalization", {"axis": 2}, None, [f32(2, 4)], []),
    ("Reshape", {"target_shape": [4]}, None, [f32(2, 3)], ["(3,)", "(4,)"]),
    ("Reshape", {"target_shape": [-1, -1]}, None, [f32(2, 6)], []),
    ("Concatenate", {}, None, [f32(2, 3), f32(3, 3)], ["(2, 3)", "(3, 3)"]),
    ("Concatenate", {"axis": 1}, None, [f32(2, 3, 4), f32(2, 3, 5)], ["(2, 3, 4)", "(2, 3, 5)"]),
    ("Add", {}, None, [f32(2, 3), f32(2, 4)], ["(2, 3)", "(2, 4)"]),
    ("Multiply", {}, None, [f32(2, 3), f32(2, 4)], ["(2, 3)", "(2, 4)"]),
    ("Softmax", {"axis": 3}, None, [f32(2, 3)], []),
]


@pytest.mark.parametrize("case", range(len(LAYER_SHAPE_ERRORS)))
def test_incompatible_shapes_name_the_layer(case):
    cls, cfg, build, ins, contains = LAYER_SHAPE_ERRORS[case]
    try:
        ml = K.layer_from_config(cls, dict(cfg, name="bad_%s" % cls.lower()))
    except tfc.InvalidArgumentError as e:
        if "Unknown layer" in str(e):
            pytest.skip("tfc has no %s layer yet" % cls)
        raise
    tl = getattr(tf_keras.layers, cls)(**cfg)

    def tfc_call():
        if build is not None:
            ml.build(build)
        ml(ins if len(ins) > 1 or cls in ("Add", "Concatenate", "Multiply") else ins[0])

    def tf_call():
        if build is not None:
            tl.build(build)
        tl([tf.constant(x) for x in ins] if len(ins) > 1 or cls in ("Add", "Concatenate", "Multiply")
           else tf.constant(ins[0]))
    raises_both(tfc_call, tf_call, contains=["bad_%s" % cls.lower()] + list(contains))


def test_set_weights_checks_count_and_shapes():
    ml = K.layer_from_config("Dense", {"units": 2, "name": "fc"})
    ml.build((None, 3))
    with pytest.raises(tfc.InvalidArgumentError, match="fc"):
        ml.set_weights([np.zeros((3, 2), np.float32)])
    with pytest.raises(tfc.InvalidArgumentError) as ei:
        ml.set_weights([np.zeros((4, 2), np.float32), np.zeros((2,), np.float32)])
    assert "fc" in str(ei.value) and "(3, 2)" in str(ei.value) and "(4, 2)" in str(ei.value)
    ml.set_weights([np.ones((3, 2), np.float32), np.ones((2,), np.float32)])  # a good call still works


# ---- unknown names ---------------------------------------------------------------------------------------------

def test_unknown_activation():
    def tfc_fn():
        K.layer_from_config("Dense", {"units": 2, "activation": "no_such_act", "name": "fc"}).build((None, 3))
    raises_both(tfc_fn, lambda: tf_keras.layers.Dense(2, activation="no_such_act"),
                contains=["no_such_act", "fc"])
    raises_both(lambda: K.layer_from_config("Activation", {"activation": "bogus"}).build((None, 3)),
                lambda: tf_keras.layers.Activation("bogus"), contains=["bogus"])


def test_unknown_layer_class_initializer_regularizer():
    # tf_keras.layers.deserialize of an unknown class and Dense(kernel_regularizer="no_reg") do not raise in
    # tf_keras 2.21 (the names fail later); TensorFlow 2.4 raised ValueError at once, as tfc does.
    raises_tfc(lambda: K.layer_from_config("NoSuchLayer", {}), contains=["NoSuchLayer"])
    raises_both(lambda: K.layer_from_config("Dense", {"units": 2, "kernel_initializer": "no_init"}),
                lambda: tf_keras.layers.Dense(2, kernel_initializer="no_init"), contains=["no_init"])
    raises_tfc(lambda: K.layer_from_config("Dense", {"units": 2, "kernel_regularizer": "no_reg"}), contains=["no_reg"])


def test_unknown_loss_optimizer_metric():
    need("tfc_loss_from_config", "tfc_optimizer_from_config", "tfc_metric_from_config")
    raises_both(lambda: K.loss_from_config("no_loss"), lambda: tf_keras.losses.get("no_loss"), contains=["no_loss"])
    raises_both(lambda: K.optimizer_from_config("no_opt"), lambda: tf_keras.optimizers.get("no_opt"),
                contains=["no_opt"])
    # tf_keras.metrics.get returns unknown strings as they are (compile fails later)
    raises_tfc(lambda: K.metric_from_config("no_metric"), contains=["no_metric"])


def test_optimizer_config_values_keras_rejects():
    need("tfc_optimizer_from_config")
    sched = {"class_name": "ExponentialDecay",
             "config": {"initial_learning_rate": 0.1, "decay_steps": 10, "decay_rate": 0.9}}
    raises_both(lambda: K.optimizer_from_config("Nadam", {"learning_rate": sched}),
                lambda: tf_keras.optimizers.legacy.Nadam(
                    learning_rate=tf_keras.optimizers.schedules.deserialize(sched)), contains=["Nadam"])
    raises_both(lambda: K.optimizer_from_config("SGD", {"momentum": -1.0}),
                lambda: tf_keras.optimizers.legacy.SGD(momentum=-1.0), contains=["momentum"])


def test_compile_rejects_unknown_names():
    need("tfc_model_from_config", "tfc_model_compile")
    tm = tf_keras.Sequential([tf_keras.layers.Dense(2, input_shape=(3,))])
    mm = K.model_from_json(tm.to_json())
    with pytest.raises(tfc.InvalidArgumentError, match="no_loss"):
        mm.compile(optimizer="sgd", loss="no_loss")
    with pytest.raises(tfc.InvalidArgumentError, match="no_opt"):
        mm.compile(optimizer="no_opt", loss="mse")
    with pytest.raises(tfc.InvalidArgumentError, match="no_metric"):
        mm.compile(optimizer="sgd", loss="mse", metrics=["no_metric"])
    # objects handed to a failing compile belong to the model all the same (no double free when both go)
    opt, loss = K.optimizer_from_config("Adam"), K.loss_from_config("mse")
    with pytest.raises(tfc.InvalidArgumentError, match="no_metric"):
        mm.compile(optimizer=opt, loss=loss, metrics=["no_metric"])
    del opt, loss
    mm.compile(optimizer="sgd", loss="mse")  # still usable
    mm.train_on_batch(np.ones((2, 3), np.float32), np.ones((2, 2), np.float32))


# ---- labels and indices out of range -----------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [3, 7, -1])
def test_sparse_labels_out_of_range(bad):
    need("tfc_loss_from_config", "tfc_loss_call")
    y_pred = np.full((2, 3), 1 / 3, np.float32)
    labels = np.array([0, bad], np.int64)
    for logits in (False, True):
        _, tf_exc = raises_both(
            lambda: K.loss_from_config("SparseCategoricalCrossentropy", {"from_logits": logits})(labels, y_pred),
            lambda: tf_keras.losses.SparseCategoricalCrossentropy(from_logits=logits)(labels, y_pred),
            contains=[str(bad), "[0, 3)"])


def test_sparse_labels_out_of_range_in_training():
    need("tfc_model_from_config", "tfc_model_train_on_batch")
    tm = tf_keras.Sequential([tf_keras.layers.Dense(3, input_shape=(4,))])
    mm = K.model_from_json(tm.to_json())
    mm.compile(optimizer="sgd", loss=("SparseCategoricalCrossentropy", {"from_logits": True}))
    before = mm.get_weights()
    with pytest.raises(tfc.InvalidArgumentError, match="5"):
        mm.train_on_batch(np.ones((2, 4), np.float32), np.array([0, 5], np.int32))
    for a, b in zip(mm.get_weights(), before):  # a failed step changes nothing
        np.testing.assert_array_equal(a, b)
    mm.train_on_batch(np.ones((2, 4), np.float32), np.array([0, 2], np.int32))


def test_embedding_index_out_of_range():
    ml = K.layer_from_config("Embedding", {"input_dim": 3, "output_dim": 2, "name": "emb"})
    tl = tf_keras.layers.Embedding(3, 2)
    raises_both(lambda: ml(np.array([[0, 3]], np.int32)), lambda: tl(np.array([[0, 3]], np.int32)),
                contains=["emb", "3"])


def test_loss_shape_mismatch_names_the_loss():
    need("tfc_loss_from_config", "tfc_loss_call")
    raises_both(lambda: K.loss_from_config("mse")(f32(2, 3), f32(2, 4)),
                lambda: tf_keras.losses.get("mse")(f32(2, 3), f32(2, 4)), contains=["mean_squared_error"])


# ---- models ---------------------------------------------------------------------------------------------------

def test_model_config_with_incompatible_layers():
    need("tfc_model_from_config")
    good = tf_keras.Sequential([tf_keras.layers.Dense(4, input_shape=(3,), name="fc1"),
                                tf_keras.layers.Dense(2, name="fc2")])
    cfg = good.get_config()
    cfg["layers"].append({"class_name": "Reshape", "config": {"name": "bad_reshape", "target_shape": [3]}})
    with pytest.raises(tfc.InvalidArgumentError) as ei:
        K.model_from_config({"class_name": "Sequential", "config": cfg})
    assert "bad_reshape" in str(ei.value)
    with pytest.raises(tfc.InvalidArgumentError, match="NoSuchLayer"):
        cfg["layers"][-1] = {"class_name": "NoSuchLayer", "config": {"name": "x"}}
        K.model_from_config({"class_name": "Sequential", "config": cfg})
    with pytest.raises(tfc.InvalidArgumentError):
        K.model_from_config({"class_name": "NotAModel", "config": {}})
    with pytest.raises(tfc.InvalidArgumentError):
        K.model_from_config("{not json")


def test_fit_rejects_mismatched_sample_counts():
    need("tfc_model_from_config", "tfc_model_fit_n")
    tm = tf_keras.Sequential([tf_keras.layers.Dense(2, input_shape=(3,))])
    mm = K.model_from_json(tm.to_json())
    mm.compile(optimizer="sgd", loss="mse")
    tm.compile(optimizer="sgd", loss="mse")
    raises_both(lambda: mm.fit(f32(10, 3), f32(8, 2)), lambda: tm.fit(f32(10, 3), f32(8, 2), verbose=0),
                contains=["10", "8"])
    raises_both(lambda: mm.fit(f32(10, 4), f32(10, 2)), lambda: tm.fit(f32(10, 4), f32(10, 2), verbose=0),
                contains=["4"])


# ---- weights files -------------------------------------------------------------------------------------------

def small_model():
    need("tfc_model_from_config", "tfc_model_save_weights", "tfc_model_load_weights")
    tm = tf_keras.Sequential([tf_keras.layers.Dense(4, input_shape=(3,), name="fc1"),
                              tf_keras.layers.Dense(2, name="fc2")])
    return tm, K.model_from_json(tm.to_json())


def assert_weights_equal(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_load_weights_missing_file(tmp_path):
    _, mm = small_model()
    with pytest.raises(tfc.NotFoundError) as ei:
        mm.load_weights(str(tmp_path / "nope.h5"))
    assert "nope.h5" in str(ei.value)


@pytest.mark.parametrize("how", ["truncated", "garbage", "text", "empty", "flipped"])
def test_load_weights_corrupt_file(how, tmp_path, rng):
    _, mm = small_model()
    good = str(tmp_path / "good.h5")
    mm.save_weights(good)
    data = open(good, "rb").read()
    if how == "truncated":
        data = data[:len(data) // 2]
    elif how == "garbage":
        data = bytes(rng.integers(0, 256, size=4096, dtype=np.uint8))
    elif how == "text":
        data = b'{"this is": "not hdf5"}\n'
    elif how == "empty":
        data = b""
    else:  # the HDF5 signature intact, the superblock and object headers damaged
        arr = np.frombuffer(data, np.uint8).copy()
        arr[8:200] ^= 0xA5
        data = arr.tobytes()
    bad = str(tmp_path / "bad.h5")
    with open(bad, "wb") as f:
        f.write(data)
    before = mm.get_weights()
    with pytest.raises((tfc.DataLossError, tfc.InvalidArgumentError)) as ei:
        mm.load_weights(bad)
    assert "bad.h5" in str(ei.value), str(ei.value)
    assert_weights_equal(mm.get_weights(), before)


def test_load_weights_of_another_architecture(tmp_path):
    """Shapes that do not match: InvalidArgumentError naming the layer and both shapes; nothing assigned."""
    _, mm = small_model()
    other = tf_keras.Sequential([tf_keras.layers.Dense(4, input_shape=(3,), name="fc1"),
                                 tf_keras.layers.Dense(5, name="fc2")])
    path = str(tmp_path / "other.h5")
    other.save_weights(path)
    before = mm.get_weights()
    with pytest.raises(tfc.InvalidArgumentError) as ei:
        mm.load_weights(path)
    msg = str(ei.value)
    assert "fc2" in msg and "(4, 5)" in msg and "(4, 2)" in msg, msg
    assert_weights_equal(mm.get_weights(), before)
    fewer = tf_keras.Sequential([tf_keras.layers.Dense(4, input_shape=(3,), name="fc1")])
    fewer.save_weights(path)
    with pytest.raises(tfc.InvalidArgumentError):
        mm.load_weights(path)
    assert_weights_equal(mm.get_weights(), before)


def test_load_weights_wrong_dataset_shape_inside_group(tmp_path):
    """A file whose layer groups are intact but one dataset has another shape."""
    tm, mm = small_model()
    path = str(tmp_path / "w.h5")
    tm.save_weights(path)
    with h5py.File(path, "r+") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["fc2"].attrs["weight_names"]]
        del f["fc2"][names[1]]
        f["fc2"].create_dataset(names[1], data=np.zeros((7,), np.float32))
    before = mm.get_weights()
    with pytest.raises(tfc.InvalidArgumentError) as ei:
        mm.load_weights(path)
    assert "fc2" in str(ei.value)
    assert_weights_equal(mm.get_weights(), before)


def test_save_weights_never_leaves_a_half_written_file(tmp_path):
    """An existing weights file survives every failed save intact: allocation failures injected at each
    allocation of save_weights in turn, a directory in the way, an unwritable folder."""
    _, mm = small_model()
    path = str(tmp_path / "w.h5")
    mm.save_weights(path)
    original = open(path, "rb").read()
    mm.set_weights([w + 1 for w in mm.get_weights()])
    lib = tfc._lib.lib
    lib.tfc_alloc_fail_once_after.argtypes = [ctypes.c_int64]
    lib.tfc_alloc_failures.restype = ctypes.c_int64
    saved = False
    for n in range(0, 400):
        lib.tfc_alloc_fail_once_after(n)
        try:
            mm.save_weights(path)
            failed = lib.tfc_alloc_failures() > 0
        except tfc.OpError:
            failed = True
        finally:
            lib.tfc_alloc_fail_once_after(-1)
        data = open(path, "rb").read()
        if failed and data != original:
            # a swallowed failure may still succeed; then the file must be the complete new one
            other = small_model()[1]
            other.load_weights(path)
            assert_weights_equal(other.get_weights(), mm.get_weights())
            saved = True
            break
        if not failed:
            saved = True
            break
        assert data == original, "allocation failure %d left %s changed" % (n, path)
        assert sorted(os.listdir(str(tmp_path))) == ["w.h5"], "leftovers: %s" % os.listdir(str(tmp_path))
    assert saved, "save_weights never succeeded within 400 injected failures"
    # the target is a directory: error, directory untouched
    d = tmp_path / "adir.h5"
    d.mkdir()
    (d / "keep").write_text("x")
    with pytest.raises(tfc.OpError):
        mm.save_weights(str(d))
    assert (d / "keep").read_text() == "x"
    # an unwritable folder (skipped as root, who may write anyway)
    ro = tmp_path / "ro"
    ro.mkdir()
    shutil.copy(path, str(ro / "w.h5"))
    before = open(str(ro / "w.h5"), "rb").read()
    os.chmod(str(ro), 0o500)
    try:
        if os.access(str(ro), os.W_OK):
            pytest.skip("running with permission to write a read-only folder (root)")
        with pytest.raises(tfc.OpError):
            mm.save_weights(str(ro / "w.h5"))
        assert open(str(ro / "w.h5"), "rb").read() == before
    finally:
        os.chmod(str(ro), 0o700)
