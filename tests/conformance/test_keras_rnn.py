"""Recurrent layers (SimpleRNN, LSTM, GRU): tfc against tf_keras on random configurations drawn fresh every run
(the seed is printed; TFC_TEST_SEED=<n> replays a run).

Each case builds the tf_keras layer, creates the tfc layer from its get_config(), copies the weights (Keras's
layout: kernel [features, G*units], recurrent_kernel [units, G*units], bias), and compares every output
(sequences and states), the gradients with respect to the inputs, the initial states and every weight, and the
configs. Errors for bad arguments and inputs are compared with tf_keras's.
"""
import numpy as np
import pytest

from conftest import assert_close, random_array, tf, tfc
from test_keras_layers import (assert_config_equal, check_layer, clear_sessions, keras_build, norm, pick,
                               rand_bool, rand_initializer, rand_regularizer, require_layer, tf_json_kwargs)

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras

CLASSES = ["SimpleRNN", "LSTM", "GRU"]
N_STATES = {"SimpleRNN": 1, "LSTM": 2, "GRU": 1}
TRIALS = 6
TOL = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-10)}


def rnn_kwargs(rng, class_name):
    kw = {"units": int(rng.integers(1, 6))}
    if rand_bool(rng, 0.3):
        kw["activation"] = pick(rng, ["tanh", "relu", "sigmoid", "linear"])
    if class_name != "SimpleRNN" and rand_bool(rng, 0.3):
        kw["recurrent_activation"] = pick(rng, ["sigmoid", "hard_sigmoid", "tanh"])
    if rand_bool(rng, 0.25):
        kw["use_bias"] = False
    for k in ("return_sequences", "go_backwards", "time_major", "unroll"):
        if rand_bool(rng, 0.4):
            kw[k] = True
    if class_name == "GRU" and rand_bool(rng, 0.4):
        kw["reset_after"] = False
    if class_name == "LSTM" and rand_bool(rng, 0.3):
        kw["unit_forget_bias"] = False
    for k in ("kernel_initializer", "recurrent_initializer", "bias_initializer"):
        if rand_bool(rng, 0.2):
            kw[k] = rand_initializer(rng, k != "bias_initializer")
    for k in ("kernel_regularizer", "recurrent_regularizer", "bias_regularizer", "activity_regularizer"):
        if rand_bool(rng, 0.15):
            kw[k] = rand_regularizer(rng)
    return kw


def input_shape(rng, kw):
    b, t, f = int(rng.integers(1, 4)), int(rng.integers(1, 6)), int(rng.integers(1, 5))
    return (t, b, f) if kw.get("time_major") else (b, t, f)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("class_name", CLASSES)
def test_rnn_matches_keras(class_name, dtype, rng):
    """Single output (last step or sequences): the shared layer harness (outputs, gradients, weights, losses,
    the config of the tfc layer built from tf_keras's)."""
    require_layer(class_name)
    for _ in range(TRIALS):
        kw = rnn_kwargs(rng, class_name)
        check_layer(class_name, kw, input_shape(rng, kw), dtype, rng, {"random_weights": True})


def _outputs(y):
    return list(y) if isinstance(y, (list, tuple)) else [y]


@pytest.mark.parametrize("class_name", CLASSES)
def test_rnn_states_match_keras(class_name, rng):
    """return_state and initial_state: every output and the gradients of their weighted sum with respect to the
    input, the initial states and the weights."""
    require_layer(class_name)
    ns = N_STATES[class_name]
    for _ in range(TRIALS):
        kw = rnn_kwargs(rng, class_name)
        kw.pop("time_major", None)
        kw["return_state"] = True
        units = kw["units"]
        shape = input_shape(rng, kw)
        with_init = rand_bool(rng, 0.6)
        shapes = [shape] + [(shape[0], units)] * ns if with_init else shape
        tl = getattr(tf_keras.layers, class_name)(**kw)
        keras_build(tl, shape)
        tl.set_weights([random_array(rng, w.shape.as_list(), "float32", -0.7, 0.7) for w in tl.weights])
        ml = K.layer_from_config(class_name, norm(tl.get_config()))
        ml.build(shapes)
        ml.set_weights(tl.get_weights())
        x = random_array(rng, shape, "float32")
        states = [random_array(rng, (shape[0], units), "float32") for _ in range(ns)]
        n_out = 1 + ns
        ogs = None
        ins_tf = [tf.constant(v) for v in [x] + (states if with_init else [])]
        with tf.GradientTape() as tape:
            tape.watch(ins_tf)
            ys = _outputs(tl(ins_tf[0], initial_state=ins_tf[1:] if with_init else None))
            ogs = [random_array(rng, y.shape.as_list(), "float32") for y in ys]
            loss = tf.add_n([tf.reduce_sum(y * o) for y, o in zip(ys, ogs)])
        want_g = tape.gradient(loss, ins_tf + list(tl.trainable_weights))
        ins = [tfc.constant(v) for v in [x] + (states if with_init else [])]
        with tfc.GradientTape() as tape2:
            tape2.watch(ins)
            got = ml(ins if with_init else ins[0], n_outputs=n_out)
            gl = None
            for y, o in zip(got, ogs):
                term = tfc.raw_ops.Sum(input=y * tfc.constant(o), axis=tfc.constant(np.arange(o.ndim, dtype=np.int32)))
                gl = term if gl is None else gl + term
        got_g = tape2.gradient(gl, ins + ml.trainable_weights)
        what = "%s(%s) input %s initial_state=%s" % (class_name, kw, shape, with_init)
        assert len(got) == len(ys) == n_out, what
        for i, (a, b) in enumerate(zip(got, ys)):
            assert_close(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5, msg="%s output %d: " % (what, i))
        for i, (a, b) in enumerate(zip(got_g, want_g)):
            assert_close(a.numpy(), tf.convert_to_tensor(b).numpy(), rtol=1e-4, atol=1e-5,
                         msg="%s gradient %d: " % (what, i))


@pytest.mark.parametrize("class_name", CLASSES)
def test_rnn_partial_config_matches_keras(class_name, rng):
    """A tfc layer made from only the chosen arguments reports tf_keras's get_config, before and after build,
    and round-trips through from_config."""
    require_layer(class_name)
    for _ in range(TRIALS):
        kw = rnn_kwargs(rng, class_name)
        if rand_bool(rng, 0.3):
            kw["dropout"] = float(np.round(rng.uniform(0, 0.5), 2))
            kw["recurrent_dropout"] = float(np.round(rng.uniform(0, 0.5), 2))
        if rand_bool(rng, 0.3):
            kw["return_state"] = True
        if rand_bool(rng, 0.2):
            kw["name"] = "my_rnn_%d" % int(rng.integers(0, 100))
        what = "%s(%s)" % (class_name, kw)
        clear_sessions()
        tl = getattr(tf_keras.layers, class_name)(**kw)
        ml = K.layer_from_config(class_name, tf_json_kwargs(kw))
        assert_config_equal(ml.get_config(), tl.get_config(), what + " before build")
        shape = input_shape(rng, kw)
        keras_build(tl, shape)
        ml.build(shape)
        assert_config_equal(ml.get_config(), tl.get_config(), what + " after build")
        assert [w.name for w in ml.weights] == [w.name for w in tl.weights], what
        again = K.layer_from_config(class_name, ml.get_config())
        assert_config_equal(again.get_config(), ml.get_config(), what + " round trip")


@pytest.mark.parametrize("class_name", ["LSTM", "GRU"])
def test_rnn_default_bias_matches_keras(class_name):
    """Initial biases as Keras creates them: LSTM's forget gate at 1 (unit_forget_bias), GRU's [2, 3*units]."""
    require_layer(class_name)
    tl = getattr(tf_keras.layers, class_name)(3)
    keras_build(tl, (2, 4, 5))
    ml = K.layer_from_config(class_name, {"units": 3})
    ml.build((2, 4, 5))
    assert_close(ml.get_weights()[2], tl.get_weights()[2])
    assert [w.shape for w in ml.get_weights()] == [tuple(w.shape) for w in tl.get_weights()]


def test_rnn_dropout_training(rng):
    """dropout / recurrent_dropout apply only in training: inference equals the layer without dropout, training
    outputs differ and stay finite."""
    require_layer("LSTM")
    ml = K.layer_from_config("LSTM", {"units": 4, "dropout": 0.5, "recurrent_dropout": 0.3,
                                      "return_sequences": True})
    ref = K.layer_from_config("LSTM", {"units": 4, "return_sequences": True})
    x = random_array(rng, (3, 5, 6), "float32")
    ml.build(x.shape)
    ref.build(x.shape)
    ref.set_weights(ml.get_weights())
    assert_close(ml(x, training=False).numpy(), ref(x, training=False).numpy())
    y = ml(x, training=True).numpy()
    assert np.all(np.isfinite(y))
    assert not np.allclose(y, ref(x, training=False).numpy())


@pytest.mark.parametrize("class_name", CLASSES)
def test_rnn_bad_input_errors(class_name):
    """units <= 0 and inputs of the wrong rank raise ValueError in tf_keras and INVALID_ARGUMENT in tfc."""
    require_layer(class_name)
    with pytest.raises(ValueError):
        getattr(tf_keras.layers, class_name)(0)
    with pytest.raises(tfc.InvalidArgumentError, match="units"):
        K.layer_from_config(class_name, {"units": 0}).build((2, 3, 4))
    with pytest.raises(ValueError, match="expected ndim=3, found ndim=2"):
        getattr(tf_keras.layers, class_name)(2)(tf.zeros((2, 3)))
    with pytest.raises(tfc.InvalidArgumentError, match="expected ndim=3, found ndim=2"):
        K.layer_from_config(class_name, {"units": 2})(tfc.constant(np.zeros((2, 3), np.float32)))
    ml = K.layer_from_config(class_name, {"units": 2})
    ml.build((2, 3, 4))
    with pytest.raises(tfc.InvalidArgumentError, match="expected axis -1 of input shape to have value 4"):
        ml(tfc.constant(np.zeros((2, 3, 5), np.float32)))


@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
def test_bidirectional_matches_keras(merge_mode, rng):
    """Bidirectional(RNN) with every merge mode: outputs (and states), gradients, weight names and config."""
    require_layer("Bidirectional")
    for _ in range(3):
        class_name = pick(rng, CLASSES)
        kw = rnn_kwargs(rng, class_name)
        for k in ("activity_regularizer", "kernel_regularizer", "recurrent_regularizer", "bias_regularizer"):
            kw.pop(k, None)
        kw["return_state"] = rand_bool(rng, 0.3)
        clear_sessions()
        tl = tf_keras.layers.Bidirectional(getattr(tf_keras.layers, class_name)(**kw), merge_mode=merge_mode)
        shape = input_shape(rng, kw)
        keras_build(tl, shape)
        tl.set_weights([random_array(rng, w.shape.as_list(), "float32", -0.7, 0.7) for w in tl.weights])
        cfg = norm(tl.get_config())
        ml = K.layer_from_config("Bidirectional", cfg)
        ml.build(shape)
        what = "Bidirectional(%s(%s), merge_mode=%r) input %s" % (class_name, kw, merge_mode, shape)
        assert_config_equal(ml.get_config(), tl.get_config(), what)
        assert [w.name for w in ml.weights] == [w.name for w in tl.weights], what
        ml.set_weights(tl.get_weights())
        x = random_array(rng, shape, "float32")
        xt = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(xt)
            ys = _outputs(tl(xt))
            ogs = [random_array(rng, y.shape.as_list(), "float32") for y in ys]
            loss = tf.add_n([tf.reduce_sum(y * o) for y, o in zip(ys, ogs)])
        want_g = tape.gradient(loss, [xt] + list(tl.trainable_weights))
        xm = tfc.constant(x)
        with tfc.GradientTape() as tape2:
            tape2.watch(xm)
            got = _outputs(ml(xm, n_outputs=len(ys)))
            gl = None
            for y, o in zip(got, ogs):
                term = tfc.raw_ops.Sum(input=y * tfc.constant(o), axis=tfc.constant(np.arange(o.ndim, dtype=np.int32)))
                gl = term if gl is None else gl + term
        got_g = tape2.gradient(gl, [xm] + ml.trainable_weights)
        for i, (a, b) in enumerate(zip(got, ys)):
            assert_close(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5, msg="%s output %d: " % (what, i))
        for i, (a, b) in enumerate(zip(got_g, want_g)):
            assert_close(a.numpy(), tf.convert_to_tensor(b).numpy(), rtol=1e-4, atol=1e-5,
                         msg="%s gradient %d: " % (what, i))


def _sequence_model():
    return tf_keras.Sequential([tf_keras.Input((5, 4)), tf_keras.layers.LSTM(3, return_sequences=True),
                                tf_keras.layers.Bidirectional(tf_keras.layers.GRU(2, return_sequences=True)),
                                tf_keras.layers.SimpleRNN(2), tf_keras.layers.Dense(2)])


def test_rnn_weights_files_both_ways(rng, tmp_path):
    """A tf_keras model of recurrent layers: its .h5 weights load into tfc (model_from_json) and give the same
    predictions; tfc's .h5 weights load back into tf_keras."""
    require_layer("Bidirectional")
    src = _sequence_model()
    src.set_weights([random_array(rng, w.shape.as_list(), "float32") for w in src.weights])
    path = str(tmp_path / "rnn.h5")
    src.save_weights(path)
    mm = K.model_from_json(src.to_json())
    mm.load_weights(path)
    for i, (a, b) in enumerate(zip(mm.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="weight %d" % i)
    x = random_array(rng, (3, 5, 4), "float32")
    assert_close(mm(x).numpy(), src.predict(x, verbose=0), rtol=1e-4, atol=1e-5)
    back = str(tmp_path / "tfc.h5")
    mm.save_weights(back)
    dst = _sequence_model()
    dst.load_weights(back)
    for i, (a, b) in enumerate(zip(dst.get_weights(), src.get_weights())):
        np.testing.assert_array_equal(a, b, err_msg="weight %d after the round trip" % i)
