"""Compiled Keras steps (compile(run_eagerly=False)) against tf_keras's traced train_function, on random data drawn
fresh every run (seed printed; TFC_TEST_SEED=<n> replays).

The Dense MLP and the small CNN of test_keras_training, with identical weights, fitted on the same batches in
graph mode with steps_per_execution 1 and 8: the losses fit reports per epoch -- one step per epoch for 50 steps
(steps_per_execution 1), one execution of 8 steps per epoch for 56 steps (steps_per_execution 8) -- within 1e-4
relative of tf_keras over the first 10 steps (first 3 executions) and within the drift tolerance of
test_keras_training after (two float32 trainings on fixed batches drift apart slowly); evaluate, predict and
train_on_batch agree.
"""
import numpy as np
import pytest

from conftest import assert_close, tfc
from test_keras_training import assert_losses_close, cnn, data_for, mlp, serialize_opt, tf_keras, twin

K = tfc.keras


def make_opt(name):
    if name == "adam":
        return tf_keras.optimizers.legacy.Adam(learning_rate=0.01)
    return tf_keras.optimizers.legacy.SGD(learning_rate=0.05, momentum=0.9)


@pytest.mark.parametrize("opt", ["adam", "sgd_momentum"])
@pytest.mark.parametrize("spe", [1, 8])
@pytest.mark.parametrize("kind", ["mlp", "cnn"])
def test_graph_fit_matches_keras(kind, spe, opt, rng):
    if not K.available("tfc_model_fit_n", "tfc_model_from_config"):
        pytest.skip("libtfc has no Keras fit")
    tm = (mlp if kind == "mlp" else cnn)(3, None)
    mm = twin(tm)
    tf_opt = make_opt(opt)
    mm.compile(optimizer=serialize_opt(tf_opt), loss=("CategoricalCrossentropy", {"from_logits": True}),
               run_eagerly=False, steps_per_execution=spe)
    tm.compile(optimizer=tf_opt, loss=tf_keras.losses.CategoricalCrossentropy(from_logits=True), run_eagerly=False,
               steps_per_execution=spe)
    x, y = data_for(kind, rng, 8 * spe)  # an epoch: one execution of spe steps of 8 samples
    what = "%s %s steps_per_execution=%d" % (kind, opt, spe)
    epochs = 50 if spe == 1 else 7
    th = tm.fit(x, y, batch_size=8, epochs=epochs, shuffle=False, verbose=0).history
    mh = mm.fit(x, y, batch_size=8, epochs=epochs, shuffle=False)
    assert len(mh["loss"]) == epochs
    assert_losses_close(mh["loss"], th["loss"], what, exact_steps=10 if spe == 1 else 3)
    for i, (a, b) in enumerate(zip(mm.get_weights(), tm.get_weights())):
        assert_close(a, b, rtol=5e-3, atol=5e-4, msg="%s weight %d after fit: " % (what, i))
    xe, ye = data_for(kind, rng, 20)
    assert_losses_close(mm.evaluate(xe, ye, batch_size=8), tm.evaluate(xe, ye, batch_size=8, verbose=0),
                        what + " evaluate")
    assert_close(mm.predict(xe, batch_size=8), tm.predict(xe, batch_size=8, verbose=0), rtol=1e-4, atol=1e-5)
    if spe > 1:  # tf_keras's train_on_batch then asks its one-batch iterator for spe batches (OutOfRangeError)
        return
    tm.reset_metrics()
    mm.reset_metrics()
    want = tm.train_on_batch(xe[:8], ye[:8])
    got = mm.train_on_batch(xe[:8], ye[:8])
    assert_losses_close(np.ravel(got)[:1], np.ravel(want)[:1], what + " train_on_batch")
