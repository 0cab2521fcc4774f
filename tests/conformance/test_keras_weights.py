"""Keras HDF5 weights files between tfc and tf_keras: a file tfc writes (model.save_weights("w.h5")) loads into
tf_keras with equal weights and predictions, and the reverse; tf_keras's full-model .h5 files load too. Models
cover Dense/Conv2D/pooling, BatchNormalization (non-trainable weights), Embedding, shared layers and a
multi-input Functional graph. Weights are random (fresh seed each run)."""
import os

import h5py
import numpy as np
import pytest

from conftest import assert_close, need, random_array, tf, tfc

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras


def m_mlp():
    return tf_keras.Sequential([tf_keras.layers.Dense(7, activation="relu", input_shape=(5,)),
                                tf_keras.layers.Dense(3, activation="softmax")])


def m_cnn():
    inp = tf_keras.Input((9, 9, 2))
    x = tf_keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    x = tf_keras.layers.BatchNormalization()(x)
    x = tf_keras.layers.MaxPooling2D()(x)
    x = tf_keras.layers.DepthwiseConv2D(2)(x)
    x = tf_keras.layers.GlobalAveragePooling2D()(x)
    return tf_keras.Model(inp, tf_keras.layers.Dense(2)(x))


def m_multi():
    a, b = tf_keras.Input((4,), name="a"), tf_keras.Input((4,), name="b")
    shared = tf_keras.layers.Dense(6, activation="tanh", name="shared")
    x = tf_keras.layers.Concatenate()([shared(a), shared(b)])
    y = tf_keras.layers.Add()([tf_keras.layers.Dense(3)(x), tf_keras.layers.Dense(3, use_bias=False)(x)])
    return tf_keras.Model([a, b], tf_keras.layers.LayerNormalization()(y))


def m_embedding():
    return tf_keras.Sequential([tf_keras.layers.Embedding(11, 4, input_length=6), tf_keras.layers.Flatten(),
                                tf_keras.layers.Dense(2)])


MODELS = {"mlp": m_mlp, "cnn": m_cnn, "multi": m_multi, "embedding": m_embedding}


def inputs_for(kind, rng, n=5):
    if kind == "mlp":
        return random_array(rng, (n, 5), "float32")
    if kind == "cnn":
        return random_array(rng, (n, 9, 9, 2), "float32")
    if kind == "multi":
        return [random_array(rng, (n, 4), "float32"), random_array(rng, (n, 4), "float32")]
    return rng.integers(0, 11, size=(n, 6)).astype(np.int32)


def randomize(model, rng):
    ws = []
    for w in model.weights:
        lo, hi = (0.5, 1.5) if "variance" in w.name else (-0.5, 0.5)
        ws.append(random_array(rng, w.shape.as_list(), w.dtype.name, lo, hi))
    model.set_weights(ws)


def tfc_model(tm):
    need("tfc_model_from_config", "tfc_model_save_weights", "tfc_model_load_weights")
    return K.model_from_json(tm.to_json())


def predict_tfc(mm, x):
    return mm(x).numpy()  # a list of arrays feeds a multi-input model


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_tfc_written_weights_load_in_keras(kind, rng, tmp_path):
    src = MODELS[kind]()
    randomize(src, rng)
    mm = tfc_model(src)
    mm.set_weights(src.get_weights())
    path = str(tmp_path / "w.h5")
    mm.save_weights(path)
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89HDF\r\n\x1a\n"
    dst = MODELS[kind]()
    dst.load_weights(path)
    for i, (a, b) in enumerate(zip(dst.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="%s weight %d" % (kind, i))
    x = inputs_for(kind, rng)
    assert_close(dst.predict(x, verbose=0), predict_tfc(mm, x), rtol=1e-5, atol=1e-6)
    with h5py.File(path, "r") as f:  # the Keras layout: root attrs and one group per layer (of the saved model)
        names = [n.decode() if isinstance(n, bytes) else n for n in f.attrs["layer_names"]]
        assert names == [layer.name for layer in src.layers], (names, [layer.name for layer in src.layers])
        assert "keras_version" in f.attrs and "backend" in f.attrs


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_keras_written_weights_load_in_tfc(kind, rng, tmp_path):
    src = MODELS[kind]()
    randomize(src, rng)
    path = str(tmp_path / "w.h5")
    src.save_weights(path)
    mm = tfc_model(MODELS[kind]())
    mm.load_weights(path)
    for i, (a, b) in enumerate(zip(mm.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="%s weight %d" % (kind, i))
    x = inputs_for(kind, rng)
    assert_close(predict_tfc(mm, x), src.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_keras_full_model_h5_weights_load_in_tfc(kind, rng, tmp_path):
    """load_weights on a whole-model .h5 (model.save) reads its model_weights group."""
    src = MODELS[kind]()
    randomize(src, rng)
    path = str(tmp_path / "m.h5")
    src.save(path, save_format="h5")
    mm = tfc_model(MODELS[kind]())
    mm.load_weights(path)
    for i, (a, b) in enumerate(zip(mm.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="%s weight %d" % (kind, i))


def test_round_trip_after_training(rng, tmp_path):
    """Weights (and their values after some training) survive tfc -> file -> tfc bit-exactly."""
    need("tfc_model_compile", "tfc_model_train_on_batch")
    src = m_mlp()
    mm = tfc_model(src)
    mm.compile(optimizer=("Adam", {"learning_rate": 0.01}), loss="categorical_crossentropy")
    for _ in range(5):
        mm.train_on_batch(random_array(rng, (8, 5), "float32"), np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)])
    path = str(tmp_path / "w.h5")
    mm.save_weights(path)
    other = tfc_model(m_mlp())
    other.load_weights(path)
    for a, b in zip(other.get_weights(), mm.get_weights()):
        np.testing.assert_array_equal(a, b)
    assert os.listdir(str(tmp_path)) == ["w.h5"], "temporary files left behind: %s" % os.listdir(str(tmp_path))
