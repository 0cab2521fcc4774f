"""Keras model files between tfc and real Keras, made at test time with fresh random weights and inputs:
- "x.weights.h5" in Keras 3's layout: tfc's loads in Keras 3 and tf_keras 2.21, Keras 3's loads in tfc;
- "m.keras" (Keras 3 archive): keras.saving.load_model reads tfc's, tfc's load_model reads Keras 3's;
- "m.h5" (legacy full model): tf_keras.models.load_model reads tfc's, tfc reads tf_keras's;
- optimizer state survives save -> load (the next training step is the same);
- damaged archives fail with DataLoss / InvalidArgument naming the file and member."""
import json
import os
import zipfile

import h5py
import numpy as np
import pytest

from conftest import assert_close, need, random_array, tfc

keras = pytest.importorskip("keras")
tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras


def k3_mlp():
    return keras.Sequential([keras.Input((5,)), keras.layers.Dense(7, activation="relu"), keras.layers.Dropout(0.2),
                             keras.layers.Dense(3, activation="softmax")])


def k3_cnn():
    inp = keras.Input((9, 9, 2))
    x = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inp)
    x = keras.layers.BatchNormalization()(x)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    return keras.Model(inp, keras.layers.Dense(2)(x))


def k3_multi():
    a, b = keras.Input((4,), name="a"), keras.Input((4,), name="b")
    shared = keras.layers.Dense(6, activation="tanh", name="shared")
    x = keras.layers.Concatenate()([shared(a), shared(b)])
    y = keras.layers.Add()([keras.layers.Dense(3)(x), keras.layers.Dense(3, use_bias=False)(x)])
    return keras.Model([a, b], keras.layers.LayerNormalization()(y))


MODELS = {"mlp": k3_mlp, "cnn": k3_cnn, "multi": k3_multi}


def inputs_for(kind, rng, n=4):
    if kind == "mlp":
        return random_array(rng, (n, 5), "float32")
    if kind == "cnn":
        return random_array(rng, (n, 9, 9, 2), "float32")
    return [random_array(rng, (n, 4), "float32"), random_array(rng, (n, 4), "float32")]


def randomize(model, rng):
    ws = []
    for w in model.weights:
        lo, hi = (0.5, 1.5) if "variance" in w.path else (-0.5, 0.5)
        ws.append(random_array(rng, tuple(w.shape), "float32", lo, hi))
    model.set_weights(ws)


def to_tfc(km):
    need("tfc_model_from_config", "tfc_model_save", "tfc_keras_load_model")
    return K.model_from_json(km.to_json())


def k3_predict(km, x):
    return np.asarray(km(x if not isinstance(x, list) else list(x)))


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_tfc_weights_h5_loads_in_keras3(kind, rng, tmp_path):
    src = MODELS[kind]()
    randomize(src, rng)
    mm = to_tfc(src)
    mm.set_weights(src.get_weights())
    path = str(tmp_path / "x.weights.h5")
    mm.save_weights(path)
    with h5py.File(path, "r") as f:
        assert "layers" in f and "layer_names" not in f.attrs
    dst = MODELS[kind]()
    dst.load_weights(path)
    for i, (a, b) in enumerate(zip(dst.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="weight %d" % i)
    x = inputs_for(kind, rng)
    assert_close(k3_predict(dst, x), mm(x).numpy(), rtol=1e-5, atol=1e-6)
    assert os.listdir(str(tmp_path)) == ["x.weights.h5"]


def test_tfc_weights_h5_loads_in_tf_keras(rng, tmp_path):
    src = tf_keras.Sequential([tf_keras.layers.Dense(6, activation="relu", input_shape=(5,)),
                               tf_keras.layers.Dense(2)])
    src.set_weights([random_array(rng, tuple(w.shape), "float32") for w in src.weights])
    need("tfc_model_from_config", "tfc_model_save_weights")
    mm = K.model_from_json(src.to_json())
    mm.set_weights(src.get_weights())
    path = str(tmp_path / "t.weights.h5")
    mm.save_weights(path)
    dst = tf_keras.Sequential([tf_keras.layers.Dense(6, activation="relu", input_shape=(5,)),
                               tf_keras.layers.Dense(2)])
    dst.load_weights(path)
    for a, b in zip(dst.get_weights(), src.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_keras3_weights_h5_loads_in_tfc(kind, rng, tmp_path):
    src = MODELS[kind]()
    randomize(src, rng)
    path = str(tmp_path / "k.weights.h5")
    src.save_weights(path)
    mm = to_tfc(MODELS[kind]())
    mm.load_weights(path)
    for i, (a, b) in enumerate(zip(mm.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="weight %d" % i)
    x = inputs_for(kind, rng)
    assert_close(mm(x).numpy(), k3_predict(src, x), rtol=1e-5, atol=1e-6)


def test_legacy_name_keeps_legacy_layout(rng, tmp_path):
    mm = to_tfc(k3_mlp())
    path = str(tmp_path / "w.h5")
    mm.save_weights(path)
    with h5py.File(path, "r") as f:
        assert "layer_names" in f.attrs
    other = to_tfc(k3_mlp())
    other.load_weights(path)
    for a, b in zip(other.get_weights(), mm.get_weights()):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_tfc_keras_archive_loads_in_keras3(kind, rng, tmp_path):
    src = MODELS[kind]()
    randomize(src, rng)
    mm = to_tfc(src)
    mm.set_weights(src.get_weights())
    path = str(tmp_path / "m.keras")
    mm.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
    dst = keras.saving.load_model(path)
    x = inputs_for(kind, rng)
    assert_close(k3_predict(dst, x), mm(x).numpy(), rtol=1e-5, atol=1e-6)
    assert os.listdir(str(tmp_path)) == ["m.keras"]


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_keras3_archive_loads_in_tfc(kind, rng, tmp_path):
    src = MODELS[kind]()
    randomize(src, rng)
    src.compile(optimizer="adam", loss="mse")
    path = str(tmp_path / "k.keras")
    src.save(path)
    need("tfc_keras_load_model")
    mm = K.load_model(path)
    x = inputs_for(kind, rng)
    assert_close(mm(x).numpy(), k3_predict(src, x), rtol=1e-5, atol=1e-6)


def test_tfc_h5_model_loads_in_tf_keras(rng, tmp_path):
    src = tf_keras.Sequential([tf_keras.layers.Dense(6, activation="relu", input_shape=(5,)),
                               tf_keras.layers.Dense(3, activation="softmax")])
    src.set_weights([random_array(rng, tuple(w.shape), "float32") for w in src.weights])
    need("tfc_model_save")
    mm = K.model_from_json(src.to_json())
    mm.set_weights(src.get_weights())
    mm.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
    path = str(tmp_path / "m.h5")
    mm.save(path)
    dst = tf_keras.models.load_model(path)
    x = random_array(rng, (4, 5), "float32")
    assert_close(dst.predict(x, verbose=0), mm(x).numpy(), rtol=1e-5, atol=1e-6)
    assert getattr(dst.loss, "__name__", dst.loss) == "categorical_crossentropy"


def test_tf_keras_h5_model_loads_in_tfc(rng, tmp_path):
    inp = tf_keras.Input((5,))
    out = tf_keras.layers.Dense(2)(tf_keras.layers.BatchNormalization()(tf_keras.layers.Dense(4)(inp)))
    src = tf_keras.Model(inp, out)
    src.set_weights([random_array(rng, tuple(w.shape), "float32", 0.5, 1.5) for w in src.weights])
    src.compile(optimizer="adam", loss="mse")
    path = str(tmp_path / "t.h5")
    src.save(path, save_format="h5")
    need("tfc_keras_load_model")
    mm = K.load_model(path)
    x = random_array(rng, (4, 5), "float32")
    assert_close(mm(x).numpy(), src.predict(x, verbose=0), rtol=1e-5, atol=1e-6)


OPTIMIZERS = [("Adam", {}), ("SGD", {}), ("SGD", {"momentum": 0.9}), ("Adagrad", {}),
              ("Adam", {"is_legacy_optimizer": False}), ("RMSprop", {"is_legacy_optimizer": False}),
              ("Nadam", {"is_legacy_optimizer": False})]


@pytest.mark.parametrize("optimizer,extra", OPTIMIZERS)
def test_optimizer_state_survives_keras_archive(optimizer, extra, rng, tmp_path):
    """tfc's legacy optimizers whose update equals Keras 3's are saved as Keras 3's (the slots reordered); the
    new family as it is. The next step after loading equals the next step without the round trip."""
    need("tfc_model_compile", "tfc_model_train_on_batch", "tfc_model_save")
    km = keras.Sequential([keras.Input((5,)), keras.layers.Dense(7, activation="tanh"),
                           keras.layers.Dense(3, activation="softmax")])  # no Dropout: steps are deterministic
    randomize(km, rng)
    mm = to_tfc(km)
    mm.set_weights(km.get_weights())
    mm.compile(optimizer=(optimizer, dict(learning_rate=0.01, **extra)), loss="categorical_crossentropy")
    xs = [random_array(rng, (8, 5), "float32") for _ in range(4)]
    ys = [np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)] for _ in range(4)]
    for x, y in zip(xs[:3], ys[:3]):
        mm.train_on_batch(x, y)
    path = str(tmp_path / "m.keras")
    mm.save(path)
    loaded = K.load_model(path)
    mm.train_on_batch(xs[3], ys[3])
    loaded.train_on_batch(xs[3], ys[3])
    for a, b in zip(loaded.get_weights(), mm.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    # Keras 3 reads the same state
    dst = keras.saving.load_model(path)
    assert int(dst.optimizer.iterations.numpy()) == 3
    assert type(dst.optimizer).__name__ == optimizer
    dst.train_on_batch(xs[3], ys[3])  # Keras 3's next step from the saved state is tfc's
    for a, b in zip(dst.get_weights(), mm.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def _rewrite(src, dst, drop=None, replace=None):
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w") as zo:
        for name in zi.namelist():
            if name == drop:
                continue
            data = replace[1] if replace and replace[0] == name else zi.read(name)
            zo.writestr(name, data)


def test_damaged_archives(rng, tmp_path):
    mm = to_tfc(k3_mlp())
    good = str(tmp_path / "good.keras")
    mm.save(good)
    bad = str(tmp_path / "bad.keras")
    _rewrite(good, bad, drop="config.json")
    with pytest.raises(tfc.DataLossError, match="bad.keras.*config.json"):
        K.load_model(bad)
    _rewrite(good, bad, replace=("config.json", b'{"class_name": 3, "config": []}'))
    with pytest.raises(tfc.InvalidArgumentError, match="bad.keras"):
        K.load_model(bad)
    _rewrite(good, bad, replace=("model.weights.h5", b"not hdf5"))
    with pytest.raises(tfc.DataLossError, match="model.weights.h5"):
        K.load_model(bad)
    with open(good, "rb") as f:
        data = f.read()
    with open(bad, "wb") as f:
        f.write(data[: len(data) // 2])
    with pytest.raises(tfc.DataLossError, match="bad.keras"):
        K.load_model(bad)
    cfg = json.loads(zipfile.ZipFile(good).read("config.json"))
    cfg["config"]["layers"][1]["class_name"] = "NoSuchLayer"
    _rewrite(good, bad, replace=("config.json", json.dumps(cfg).encode()))
    with pytest.raises(tfc.InvalidArgumentError, match="Unknown layer.*NoSuchLayer"):
        K.load_model(bad)


@pytest.mark.parametrize("optimizer,extra", [("Adam", {}), ("RMSprop", {}), ("Adam", {"is_legacy_optimizer": False})])
def test_optimizer_state_survives_h5_in_tf_keras(optimizer, extra, rng, tmp_path):
    """A trained tfc model saved as .h5: tf_keras's load_model restores the optimizer (its family included) and
    its next step is tfc's; tfc's own load continues the same way."""
    need("tfc_model_compile", "tfc_model_train_on_batch", "tfc_model_save")
    src = tf_keras.Sequential([tf_keras.layers.Dense(6, activation="tanh", input_shape=(5,)),
                               tf_keras.layers.Dense(3, activation="softmax")])
    src.set_weights([random_array(rng, tuple(w.shape), "float32", -0.5, 0.5) for w in src.weights])
    mm = K.model_from_json(src.to_json())
    mm.set_weights(src.get_weights())
    mm.compile(optimizer=(optimizer, dict(learning_rate=0.01, **extra)), loss="categorical_crossentropy")
    xs = [random_array(rng, (8, 5), "float32") for _ in range(4)]
    ys = [np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)] for _ in range(4)]
    for x, y in zip(xs[:3], ys[:3]):
        mm.train_on_batch(x, y)
    path = str(tmp_path / "m.h5")
    mm.save(path)
    dst = tf_keras.models.load_model(path)
    loaded = K.load_model(path)
    mm.train_on_batch(xs[3], ys[3])
    loaded.train_on_batch(xs[3], ys[3])
    dst.train_on_batch(xs[3], ys[3])
    for a, b in zip(loaded.get_weights(), mm.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    for a, b in zip(dst.get_weights(), mm.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


def test_tf_keras_h5_optimizer_state_loads_in_tfc(rng, tmp_path):
    src = tf_keras.Sequential([tf_keras.layers.Dense(6, activation="tanh", input_shape=(5,)),
                               tf_keras.layers.Dense(3, activation="softmax")])
    src.compile(optimizer=tf_keras.optimizers.Adam(0.01), loss="categorical_crossentropy")
    xs = [random_array(rng, (8, 5), "float32") for _ in range(4)]
    ys = [np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)] for _ in range(4)]
    for x, y in zip(xs[:3], ys[:3]):
        src.train_on_batch(x, y)
    path = str(tmp_path / "t.h5")
    src.save(path, save_format="h5")
    need("tfc_keras_load_model", "tfc_model_train_on_batch")
    mm = K.load_model(path)
    src.train_on_batch(xs[3], ys[3])
    mm.train_on_batch(xs[3], ys[3])
    for a, b in zip(mm.get_weights(), src.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fmt", ["keras", "h5"])
def test_tfc_model_run_cli(fmt, rng, tmp_path):
    """`tfc model run --model M --inputs 'a=a.npy;b=b.npy' --outdir O` on a file Keras wrote: O/<output>.npy
    equals Keras's prediction."""
    import subprocess
    tfc_bin = os.path.join(os.path.dirname(tfc.library_path), "tfc")
    if not os.path.exists(tfc_bin):
        pytest.skip("no tfc command beside the library")
    if fmt == "keras":
        src = k3_multi()
        randomize(src, rng)
        path = str(tmp_path / "m.keras")
        src.save(path)
        names = ["a", "b"]
        x = inputs_for("multi", rng)
        want = k3_predict(src, x)
        out_name = src.layers[-1].name
    else:
        a, b = tf_keras.Input((4,), name="a"), tf_keras.Input((4,), name="b")
        y = tf_keras.layers.Dense(3, name="out")(tf_keras.layers.Concatenate()([a, b]))
        src = tf_keras.Model([a, b], y)
        src.set_weights([random_array(rng, tuple(w.shape), "float32") for w in src.weights])
        path = str(tmp_path / "m.h5")
        src.save(path, save_format="h5")
        names = ["a", "b"]
        x = [random_array(rng, (4, 4), "float32"), random_array(rng, (4, 4), "float32")]
        want = src.predict(x, verbose=0)
        out_name = "out"
    feeds = []
    for n, v in zip(names, x):
        np.save(str(tmp_path / (n + ".npy")), v)
        feeds.append("%s=%s" % (n, tmp_path / (n + ".npy")))
    outdir = tmp_path / "out"
    outdir.mkdir()
    cmd = [tfc_bin, "model", "run", "--model", path, "--inputs", ";".join(feeds), "--outdir", str(outdir)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert_close(np.load(str(outdir / (out_name + ".npy"))), want, rtol=1e-5, atol=1e-6)
    r = subprocess.run(cmd, capture_output=True, text=True)  # outputs exist: kept without --overwrite
    assert r.returncode != 0 and "--overwrite" in r.stderr
    r = subprocess.run(cmd[:-4] + ["--inputs", "nope=%s" % (tmp_path / "a.npy"), "--outdir", str(outdir)],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "nope" in r.stderr
