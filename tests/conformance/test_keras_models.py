"""Keras models from their JSON config (tfc_model_from_config, src/keras/model_config.c) against tf_keras: the
model rebuilt from tf_keras's model.to_json() with tf_keras's weights gives the same outputs, the same
get_config (Keras 2 dialect; module / registered_name / build_config, which tf_keras >= 2.13 adds, ignored)
and the same summary text. Keras 3 configs (from the keras 3 package TensorFlow ships) load too. Weights and
inputs are random (fresh seed each run)."""
import json

import numpy as np
import pytest

from conftest import assert_close, need, random_array, tf, tfc

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras
L = tf_keras.layers

# Keys tf_keras 2.21 writes that TensorFlow 2.4's Keras (which tfc follows) did not: module, registered_name
# (every serialized object), build_config (layers), optional (InputLayer, tf_keras >= 2.16).
IGNORED_KEYS = ("module", "registered_name", "build_config", "optional")


def norm(v):
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items() if k not in IGNORED_KEYS}
    if isinstance(v, np.ndarray):
        return norm(v.tolist())
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, (list, tuple)) or type(v).__name__ == "ListWrapper":
        return [norm(x) for x in v]
    return v


def diff(got, want, path=""):
    out = []
    if isinstance(got, dict) and isinstance(want, dict):
        for k in sorted(set(got) | set(want)):
            if k not in got:
                out.append("%s%s: missing in tfc" % (path, k))
            elif k not in want:
                out.append("%s%s: extra in tfc (%r)" % (path, k, got[k]))
            else:
                out.extend(diff(got[k], want[k], "%s%s." % (path, k)))
    elif isinstance(got, list) and isinstance(want, list) and len(got) == len(want):
        for i, (a, b) in enumerate(zip(got, want)):
            out.extend(diff(a, b, "%s%d." % (path, i)))
    elif got != want:
        out.append("%s: tfc %r, tf_keras %r" % (path.rstrip("."), got, want))
    return out


# ---- architectures (each returns the tf_keras model and a list of input shapes without batch) ------------------

def a_sequential_input_shape():
    return tf_keras.Sequential([L.Dense(6, activation="relu", input_shape=(5,)), L.Dropout(0.3),
                                L.Dense(3, activation="softmax")]), [(5,)]


def a_sequential_with_input():
    return tf_keras.Sequential([tf_keras.Input((6, 6, 2)), L.Conv2D(3, 3, padding="same"), L.BatchNormalization(),
                                L.ReLU(), L.AveragePooling2D(), L.Flatten(), L.Dense(2)]), [(6, 6, 2)]


def a_functional_cnn():
    inp = tf_keras.Input((8, 8, 1), name="image")
    x = L.Conv2D(4, 3, activation="relu")(inp)
    x = L.MaxPooling2D()(x)
    x = L.DepthwiseConv2D(2, depth_multiplier=2)(x)
    x = L.GlobalMaxPooling2D()(x)
    return tf_keras.Model(inp, L.Dense(3)(x), name="cnn"), [(8, 8, 1)]


def a_multi_io():
    a, b = tf_keras.Input((4,), name="in_a"), tf_keras.Input((3,), name="in_b")
    x = L.Concatenate()([L.Dense(5, activation="tanh")(a), b])
    y1 = L.Dense(2, name="out_1")(x)
    y2 = L.Multiply(name="out_2")([L.Dense(2)(x), L.Dense(2, activation="sigmoid")(x)])
    return tf_keras.Model([a, b], [y1, y2]), [(4,), (3,)]


def a_shared_layer():
    a, b = tf_keras.Input((4,)), tf_keras.Input((4,))
    shared = L.Dense(4, activation="relu", name="shared")
    x = shared(shared(a))  # called twice on one branch and once on the other: three nodes
    y = shared(b)
    return tf_keras.Model([a, b], L.Add()([x, y])), [(4,), (4,)]


def a_nested():
    inner = tf_keras.Sequential([L.Dense(5, activation="relu", input_shape=(4,)), L.Dense(4)], name="inner")
    inp = tf_keras.Input((4,))
    x = inner(inp)
    x = L.LayerNormalization()(L.Add()([x, inp]))
    return tf_keras.Model(inp, L.Dense(2)(x)), [(4,)]


def a_embedding():
    return tf_keras.Sequential([L.Embedding(20, 3, input_length=5), L.Reshape((15,)), L.Dense(2)]), [(5,)]


ARCHS = {f.__name__[2:]: f for f in [a_sequential_input_shape, a_sequential_with_input, a_functional_cnn,
                                       a_multi_io, a_shared_layer, a_nested, a_embedding]}


def inputs_for(arch, shapes, rng, n=4):
    if arch == "embedding":
        return [rng.integers(0, 20, size=(n,) + s).astype(np.int32) for s in shapes]
    return [random_array(rng, (n,) + s, "float32") for s in shapes]


def randomize(tm, rng):
    tm.set_weights([random_array(rng, w.shape.as_list(), "float32", 0.5, 1.5) if "variance" in w.name
                    else random_array(rng, w.shape.as_list(), "float32", -0.7, 0.7) for w in tm.weights])


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_model_from_json_matches_keras(arch, rng):
    need("tfc_model_from_config")
    tf_keras.backend.clear_session()
    K.clear_session()
    tm, shapes = ARCHS[arch]()
    randomize(tm, rng)
    mm = K.model_from_json(tm.to_json())
    assert mm.name == tm.name
    assert [l.name for l in mm.layers] == [l.name for l in tm.layers]
    assert [w.name for w in mm.weights] == [w.name for w in tm.weights]
    mm.set_weights(tm.get_weights())
    assert mm.count_params() == tm.count_params()
    xs = inputs_for(arch, shapes, rng)
    want = tm(xs if len(xs) > 1 else xs[0], training=False)
    want = [w.numpy() for w in (want if isinstance(want, (list, tuple)) else [want])]
    got = mm(xs if len(xs) > 1 else xs[0], n_outputs=len(want))
    got = [g.numpy() for g in (got if isinstance(got, list) else [got])]
    for i, (g, w) in enumerate(zip(got, want)):
        assert_close(g, w, rtol=1e-5, atol=1e-5, msg="%s output %d: " % (arch, i))
    d = diff(norm(mm.get_config()), norm(tm.get_config()))
    assert not d, "%s get_config:\n  %s" % (arch, "\n  ".join(d))
    again = K.model_from_config({"class_name": tm.__class__.__name__ if arch.startswith("sequential") or
                                 arch == "embedding" else "Functional", "config": mm.get_config()})
    assert [l.name for l in again.layers] == [l.name for l in tm.layers]


@pytest.mark.parametrize("arch", sorted(ARCHS))
def test_summary_matches_keras(arch, rng):
    need("tfc_model_from_config", "tfc_model_summary")
    tf_keras.backend.clear_session()
    K.clear_session()
    tm, _ = ARCHS[arch]()
    mm = K.model_from_json(tm.to_json())
    lines = []
    tm.summary(print_fn=lambda s, **kw: lines.append(s))
    want = "\n".join(lines)
    got = mm.summary(print_fn=False).rstrip("\n")
    assert got == want, "summary differs:\n--- tfc\n%s\n--- tf_keras\n%s" % (got, want)


def test_sequential_config_variants(rng):
    """A Keras 2.0-era bare-list Sequential config, and one whose first layer carries batch_input_shape."""
    need("tfc_model_from_config")
    tm = tf_keras.Sequential([L.Dense(4, activation="relu", input_shape=(3,)), L.Dense(2)])
    randomize(tm, rng)
    cfg = json.loads(tm.to_json())
    layers = [e for e in cfg["config"]["layers"] if e["class_name"] != "InputLayer"]
    x = random_array(rng, (5, 3), "float32")
    for variant in ({"class_name": "Sequential", "config": layers},
                    {"class_name": "Sequential", "config": {"name": "s", "layers": layers}},
                    {"keras_version": "2.4.0", "backend": "tensorflow",
                     "model_config": {"class_name": "Sequential", "config": {"name": "s", "layers": layers}}}):
        mm = K.model_from_config(variant)
        mm.set_weights(tm.get_weights())
        assert_close(mm(x), tm(x), rtol=1e-5, atol=1e-6)


def test_unbuilt_sequential_builds_on_first_call(rng):
    need("tfc_model_from_config")
    tm = tf_keras.Sequential([L.Dense(4), L.Dense(2)])
    mm = K.model_from_json(tm.to_json())
    x = random_array(rng, (3, 5), "float32")
    tm(x)
    mm(x)
    mm.set_weights(tm.get_weights())
    assert_close(mm(x), tm(x), rtol=1e-5, atol=1e-6)


def _keras3():
    try:
        import keras
    except ImportError:
        return None
    return keras if keras.__version__.startswith("3") else None


def test_keras3_config_loads(rng):
    """A Keras 3 Functional model (keras_history tensors, DTypePolicy dtypes, batch_shape) and a Keras 3
    Sequential (build_input_shape) load and compute what Keras 3 computes."""
    need("tfc_model_from_config")
    keras = _keras3()
    if keras is None:
        pytest.skip("no Keras 3 installed")
    a, b = keras.Input((4,), name="a"), keras.Input((4,), name="b")
    shared = keras.layers.Dense(3, activation="relu", name="shared")
    y = keras.layers.Add()([shared(a), shared(b)])
    m3 = keras.Model([a, b], keras.layers.Dense(2)(y))
    cfg = keras.saving.serialize_keras_object(m3)
    mm = K.model_from_config(json.loads(json.dumps(cfg, default=lambda o: o.tolist())))
    ws = [random_array(rng, w.shape, "float32") for w in m3.weights]
    m3.set_weights(ws)
    mm.set_weights(ws)
    xs = [random_array(rng, (3, 4), "float32"), random_array(rng, (3, 4), "float32")]
    assert_close(mm(xs), np.asarray(m3(xs)), rtol=1e-5, atol=1e-6)
    s3 = keras.Sequential([keras.layers.Dense(3), keras.layers.Dense(1)])
    s3.build((None, 5))
    mm = K.model_from_config(json.loads(json.dumps(keras.saving.serialize_keras_object(s3),
                                                   default=lambda o: o.tolist())))
    ws = [random_array(rng, w.shape, "float32") for w in s3.weights]
    s3.set_weights(ws)
    mm.set_weights(ws)
    x = random_array(rng, (2, 5), "float32")
    assert_close(mm(x), np.asarray(s3(x)), rtol=1e-5, atol=1e-6)
    # a nested Keras 3 Sequential (Keras 3 numbers its node in the outer graph from 0, Keras 2 from 1)
    inner = keras.Sequential([keras.Input((4,)), keras.layers.Dense(5), keras.layers.Dense(4)], name="inner")
    inp = keras.Input((4,))
    n3 = keras.Model(inp, keras.layers.Dense(2)(keras.layers.Add()([inner(inp), inp])))
    mm = K.model_from_config(json.loads(json.dumps(keras.saving.serialize_keras_object(n3),
                                                   default=lambda o: o.tolist())))
    ws = [random_array(rng, w.shape, "float32") for w in n3.weights]
    n3.set_weights(ws)
    mm.set_weights(ws)
    x = random_array(rng, (3, 4), "float32")
    assert_close(mm(x), np.asarray(n3(x)), rtol=1e-5, atol=1e-6)


def test_functional_api_from_python(rng):
    """tfc.keras.Input / layer calls on KerasTensors / Functional(inputs, outputs) build what tf_keras builds."""
    need("tfc_model_new")
    tf_keras.backend.clear_session()
    K.clear_session()
    inp = K.Input((6,))
    h = K.layer_from_config("Dense", {"units": 5, "activation": "relu"})(inp)
    out = K.layer_from_config("Dense", {"units": 2})(h)
    mm = K.Functional(inp, out)
    ti = tf_keras.Input((6,))
    th = L.Dense(5, activation="relu")(ti)
    tm = tf_keras.Model(ti, L.Dense(2)(th))
    assert [l.name for l in mm.layers] == [l.name for l in tm.layers]
    randomize(tm, rng)
    mm.set_weights(tm.get_weights())
    x = random_array(rng, (4, 6), "float32")
    assert_close(mm(x), tm(x), rtol=1e-5, atol=1e-6)
    d = diff(norm(mm.get_config()), norm(tm.get_config()))
    assert not d, "\n".join(d)
