"""model.export(dir): tfc writes a Keras model as a SavedModel that real TensorFlow serves. Models are built in tf_keras
with fresh random weights, rebuilt in tfc from their JSON with the same weights and exported by tfc; then
tf.saved_model.load(dir).signatures["serving_default"] gives tfc's predictions (and tf_keras's) on fresh random
inputs of a random batch size, the signature's keys, dtypes and shapes are those of tf_keras's own model.export of
the same model, and saved_model_cli shows it."""
import contextlib
import io
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf

from conftest import assert_close, need, random_array, tfc

tf_keras = pytest.importorskip("tf_keras")
L = tf_keras.layers


def cnn(rng):
    # Conv2D directly followed by MaxPooling2D: the pair tfc runs fused in inference, which the export must
    # write as TensorFlow's own ops
    h, c = int(rng.integers(8, 13)), int(rng.integers(1, 4))
    return tf_keras.Sequential([
        L.Conv2D(int(rng.integers(2, 6)), 3, activation="relu", padding="same", input_shape=(h, h, c)),
        L.MaxPooling2D(),
        L.BatchNormalization(),
        L.Dropout(0.4),
        L.Conv2D(int(rng.integers(2, 6)), 3, activation="relu"),
        L.AveragePooling2D(),
        L.Flatten(),
        L.Dense(int(rng.integers(2, 9)), activation="softmax")])


def functional(rng):
    h = int(rng.integers(6, 11))
    image = tf_keras.Input((h, h, 2), name="image")
    meta = tf_keras.Input((int(rng.integers(1, 6)),), name="meta")
    x = L.Conv2D(4, 3, activation="relu")(image)
    x = L.BatchNormalization()(x)
    x = L.MaxPooling2D()(x)
    x = L.Flatten()(x)
    m = L.Dense(5, activation="tanh")(meta)
    z = L.Dropout(0.5)(L.Concatenate()([x, m]))
    z = L.BatchNormalization()(L.Dense(8, activation="relu")(z))
    return tf_keras.Model([image, meta], [L.Dense(3, name="score")(z), L.Dense(1, activation="sigmoid", name="prob")(z)])


def nested(rng):
    # a Sequential inside a functional model runs its own layers: its Conv2D + MaxPooling2D must not fuse either
    h = int(rng.integers(6, 11))
    inner = tf_keras.Sequential([L.Conv2D(int(rng.integers(2, 6)), 3, activation="relu", input_shape=(h, h, 1)),
                                 L.MaxPooling2D()], name="features")
    image = tf_keras.Input((h, h, 1), name="img")
    return tf_keras.Model(image, L.Dense(int(rng.integers(2, 6)))(L.Flatten()(inner(image))))


MODELS = {"sequential_cnn": cnn, "functional_two_heads": functional, "nested_sequential": nested}


def randomize(model, rng):
    ws = []
    for w in model.weights:
        lo, hi = (0.5, 1.5) if "variance" in w.name else (-0.5, 0.5)
        ws.append(random_array(rng, tuple(w.shape), "float32", lo, hi))
    model.set_weights(ws)


def _cli(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_tensorflow_serves_tfc_export(kind, rng, tmp_path):
    need("tfc_model_from_config", "tfc_model_export")
    from tensorflow.python.tools import saved_model_cli as cli
    src = MODELS[kind](rng)
    randomize(src, rng)
    mm = tfc.keras.model_from_json(src.to_json())
    mm.set_weights(src.get_weights())
    ours, theirs = str(tmp_path / "tfc" / "1"), str(tmp_path / "tf_keras")
    mm.export(ours)
    src.export(theirs)
    assert sorted(os.listdir(ours)) == ["fingerprint.pb", "saved_model.pb", "variables"]
    assert not [f for f in os.listdir(tmp_path / "tfc") if f != "1"]  # the temporary folder was renamed

    sig = tf.saved_model.load(ours).signatures["serving_default"]
    want = tf.saved_model.load(theirs).signatures["serving_default"]
    # the same keys, dtypes and shapes (None batch) as tf_keras's model.export writes
    assert sig.structured_input_signature == want.structured_input_signature
    assert sig.structured_outputs == want.structured_outputs

    n = int(rng.integers(1, 6))
    keys = sorted(want.structured_input_signature[1])
    specs = want.structured_input_signature[1]
    feeds = {k: random_array(rng, (n,) + tuple(specs[k].shape[1:]), "float32") for k in keys}
    got = sig(**{k: tf.constant(v) for k, v in feeds.items()})
    xs = [feeds[k] for k in src.input_names]  # the model's input order
    ref_tfc = mm.predict(xs if len(xs) > 1 else xs[0], n_outputs=len(src.outputs))
    ref_tfc = ref_tfc if isinstance(ref_tfc, (list, tuple)) else [ref_tfc]
    ref_keras = src(xs if len(xs) > 1 else xs[0], training=False)
    ref_keras = ref_keras if isinstance(ref_keras, (list, tuple)) else [ref_keras]
    assert sorted(got) == ["output_%d" % i for i in range(len(src.outputs))]
    for i in range(len(src.outputs)):
        out = got["output_%d" % i].numpy()
        assert out.shape[0] == n
        assert_close(out, np.asarray(ref_tfc[i]), "float32", msg="output_%d vs tfc predict" % i)
        assert_close(out, np.asarray(ref_keras[i]), "float32", msg="output_%d vs tf_keras" % i)

    # tfc's own loader serves it too (tfc saved_model run, as tfc serve loads exports)
    exe = os.path.join(os.path.dirname(tfc.library_path), "tfc")
    if os.path.exists(exe):
        for k, v in feeds.items():
            np.save(tmp_path / (k + ".npy"), v)
        r = subprocess.run([exe, "saved_model", "run", "--dir", ours, "--tag_set", "serve", "--signature_def",
                            "serving_default", "--inputs", ";".join("%s=%s" % (k, tmp_path / (k + ".npy")) for k in keys),
                            "--outdir", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        for k, v in got.items():
            assert_close(np.load(tmp_path / "out" / (k + ".npy")), v.numpy(), "float32", msg="tfc load " + k)

    # saved_model_cli: the signature shows as tf_keras's export shows it (tensor names too: the "serve" endpoint
    # comes first, so serving_default's call node is "StatefulPartitionedCall_1"); --all lists it
    def shown(d):
        return _cli(cli._show_inputs_outputs, d, "serve", "serving_default")
    assert "StatefulPartitionedCall_1:0" in shown(theirs)
    assert shown(ours) == shown(theirs)
    r = subprocess.run([sys.executable, "-m", "tensorflow.python.tools.saved_model_cli", "show", "--dir", ours, "--all"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "signature_def['serving_default']:" in r.stdout
    for k in keys:
        assert "inputs['%s'] tensor_info:" % k in r.stdout
    assert "outputs['output_0'] tensor_info:" in r.stdout


def test_export_errors(tmp_path):
    need("tfc_model_export")
    K = tfc.keras
    unbuilt = K.Sequential([K.layer_from_config("Dense", {"units": 3})])
    with pytest.raises(tfc.errors.InvalidArgumentError, match="no known inputs"):
        unbuilt.export(str(tmp_path / "m"))
    assert not os.path.exists(tmp_path / "m")
