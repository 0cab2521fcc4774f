"""tf.summary and Keras's TensorBoard callback: event files tfc writes against the ones TensorFlow / tf-keras
write for the same data, both loaded with TensorBoard's own reader (event_accumulator): same runs, tags, steps,
plugin names and values (bit-exact for scalars and histograms of the same data; within float tolerance where
the values come from training)."""
import glob
import json
import os
import re
import socket

import numpy as np
import pytest

from conftest import random_array, tf, tfc

tf_keras = pytest.importorskip("tf_keras")
ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
from tensorboard.util import tensor_util  # noqa: E402

K = tfc.keras


def load(run_dir):
    """{tag: [(step, value ndarray / list of bytes)]} and {tag: plugin name} of a run, read by TensorBoard."""
    acc = ea.EventAccumulator(run_dir, size_guidance={ea.TENSORS: 0})
    acc.Reload()
    out, plugins = {}, {}
    for tag in acc.Tags()["tensors"]:
        out[tag] = [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]
        plugins[tag] = acc.SummaryMetadata(tag).plugin_data.plugin_name
    return out, plugins


def event_files(d):
    return sorted(glob.glob(os.path.join(d, "*tfevents*")))


def test_event_file_name_and_header(tmp_path):
    w = tfc.summary.create_file_writer(str(tmp_path))
    w.scalar("loss", 0.25, step=0)
    w.close()
    files = event_files(str(tmp_path))
    assert len(files) == 1 and files[0] == w.path
    name = os.path.basename(files[0])
    host = re.escape(socket.gethostname())
    assert re.fullmatch(r"events\.out\.tfevents\.\d{10}\.%s\.%d\.\d+\.v2" % (host, os.getpid()), name), name
    recs = [tf.compat.v1.Event.FromString(r.numpy()) for r in tf.data.TFRecordDataset(files[0])]  # CRCs checked
    assert recs[0].file_version == "brain.Event:2"
    assert recs[1].step == 0 and recs[1].summary.value[0].tag == "loss"


def test_summaries_match_tensorflow(tmp_path, rng):
    scalars = [float(v) for v in random_array(rng, (5,), "float64", -10, 10)]
    hists = [random_array(rng, tuple(int(d) for d in rng.integers(1, 40, size=2)), "float32", -3, 3),
             random_array(rng, (50,), "float64", 0, 1), np.array([2.5, 2.5, 2.5], np.float32),
             np.zeros([0], np.float32), rng.integers(-5, 5, size=(7,)).astype(np.int32)]
    buckets = [None, int(rng.integers(1, 12)), 4, None, 3]
    imgs_f = random_array(rng, (4, 5, 3, 3), "float32", -0.2, 1.2)
    imgs_u8 = rng.integers(0, 256, size=(2, 3, 4, 1)).astype(np.uint8)
    text = np.array([b"alpha", b"\xce\xb2eta", b""], dtype=object)
    ref, mine = str(tmp_path / "tf"), str(tmp_path / "tfc")
    tw = tf.summary.create_file_writer(ref)
    with tw.as_default():
        for i, v in enumerate(scalars):
            tf.summary.scalar("s", v, step=i)
        for i, (h, b) in enumerate(zip(hists, buckets)):
            tf.summary.histogram("h%d" % i, h, step=7, buckets=b)
        tf.summary.image("img_f", imgs_f, step=3, max_outputs=2)
        tf.summary.image("img_u8", imgs_u8, step=4)
        tf.summary.text("txt", tf.constant(text), step=5)
        tf.summary.text("one", "hello", step=6)
    tw.close()
    w = tfc.summary.create_file_writer(mine)
    for i, v in enumerate(scalars):
        w.scalar("s", v, step=i)
    for i, (h, b) in enumerate(zip(hists, buckets)):
        w.histogram("h%d" % i, h, step=7, buckets=b)
    w.image("img_f", imgs_f, step=3, max_outputs=2)
    w.image("img_u8", imgs_u8, step=4)
    w.text("txt", tfc.constant(list(text)), step=5)
    w.text("one", tfc.constant(b"hello"), step=6)
    w.close()
    want, want_p = load(ref)
    got, got_p = load(mine)
    assert sorted(got) == sorted(want)
    assert got_p == want_p
    for tag in want:
        assert [s for s, _ in got[tag]] == [s for s, _ in want[tag]], tag
        for (_, g), (_, e) in zip(got[tag], want[tag]):
            assert g.dtype == e.dtype and g.shape == e.shape, (tag, g.dtype, e.dtype, g.shape, e.shape)
            if tag.startswith("img"):
                assert list(g[:2]) == list(e[:2]), tag  # width, height
                for gp, ep in zip(g[2:], e[2:]):
                    np.testing.assert_array_equal(tf.io.decode_png(gp).numpy(), tf.io.decode_png(ep).numpy())
            elif g.dtype == object:
                assert list(g.flat) == list(e.flat), tag
            else:
                np.testing.assert_array_equal(g, e, err_msg=tag)


def test_unwritable_logdir_is_a_clear_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(tfc.errors.FailedPreconditionError, match="not a directory"):
        tfc.summary.create_file_writer(str(f / "logs"))


# ---- Keras TensorBoard -----------------------------------------------------------------------------------------

def twin(tm):
    mm = K.model_from_json(tm.to_json())
    mm.set_weights(tm.get_weights())
    return mm


def compare_runs(got_dir, want_dir, rtol):
    for run in ("train", "validation"):
        got, got_p = load(os.path.join(got_dir, run))
        want, want_p = load(os.path.join(want_dir, run))
        assert sorted(got) == sorted(want), run
        assert got_p == want_p, run
        for tag in want:
            assert [s for s, _ in got[tag]] == [s for s, _ in want[tag]], (run, tag)
            for (_, g), (_, e) in zip(got[tag], want[tag]):
                assert g.dtype == e.dtype and g.shape == e.shape, (run, tag)
                if tag.endswith("/histogram"):
                    np.testing.assert_allclose(g[:, :2], e[:, :2], rtol=rtol, atol=1e-6, err_msg=tag)
                    assert g[:, 2].sum() == e[:, 2].sum()
                    assert np.abs(g[:, 2] - e[:, 2]).sum() <= 2, (tag, g[:, 2], e[:, 2])  # a value on an edge
                elif tag.endswith("/image"):  # the weights as pixels: trained values, so +-1 a pixel
                    assert list(g[:2]) == list(e[:2]) and len(g) == len(e), tag
                    for gp, ep in zip(g[2:], e[2:]):
                        gi, ei = tf.io.decode_png(gp).numpy().astype(int), tf.io.decode_png(ep).numpy().astype(int)
                        assert gi.shape == ei.shape and np.abs(gi - ei).max() <= 1, tag
                elif tag == "keras":  # the model's JSON: the same model, layer by layer
                    gj, ej = json.loads(g.item()), json.loads(e.item())
                    assert gj["class_name"] == ej["class_name"]
                    assert [(x["class_name"], x["config"]["name"]) for x in gj["config"]["layers"]] == \
                        [(x["class_name"], x["config"]["name"]) for x in ej["config"]["layers"]]
                else:
                    np.testing.assert_allclose(g, e, rtol=rtol, atol=1e-6, err_msg="%s %s" % (run, tag))


@pytest.mark.parametrize("schedule,cnn", [(False, False), (True, False), (False, True)])
def test_tensorboard_callback_matches_tf_keras(tmp_path, rng, schedule, cnn):
    inp = tf_keras.Input((6,))
    h = inp
    if cnn:  # conv kernels [3, 1, 1, 4] and [2, 1, 4, 3] as images: the rank-3 and rank-4 layouts
        h = tf_keras.layers.Reshape((6, 1, 1))(h)
        h = tf_keras.layers.Conv2D(4, (3, 1), activation="relu")(h)
        h = tf_keras.layers.Conv2D(3, (2, 1), activation="relu")(h)
        h = tf_keras.layers.Flatten()(h)
    h = tf_keras.layers.Dense(5, activation="relu")(h)
    out = tf_keras.layers.Dense(3, activation="softmax")(h)
    tm = tf_keras.Model(inp, out)
    mm = twin(tm)
    lr = tf_keras.optimizers.schedules.ExponentialDecay(0.1, 3, 0.5) if schedule else 0.1
    opt = tf_keras.optimizers.legacy.SGD(learning_rate=lr)
    mm.compile(optimizer=tf_keras.optimizers.serialize(opt), loss="categorical_crossentropy", metrics=["accuracy"])
    tm.compile(optimizer=opt, loss="categorical_crossentropy", metrics=["accuracy"])
    x = random_array(rng, (40, 6), "float32")
    y = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=40)]
    vx = random_array(rng, (12, 6), "float32")
    vy = np.eye(3, dtype=np.float32)[rng.integers(0, 3, size=12)]
    ref, mine = str(tmp_path / "tf"), str(tmp_path / "tfc")
    tm.fit(x, y, batch_size=8, epochs=3, shuffle=False, validation_data=(vx, vy), verbose=0,
           callbacks=[tf_keras.callbacks.TensorBoard(ref, histogram_freq=1, write_images=True, profile_batch=0)])
    mm.fit(x, y, batch_size=8, epochs=3, shuffle=False, validation_data=(vx, vy),
           callbacks=[K.TensorBoard(mine, histogram_freq=1, write_images=True)])
    compare_runs(mine, ref, rtol=1e-4)
    got, _ = load(os.path.join(mine, "train"))
    assert ("epoch_learning_rate" in got) == schedule
    assert len(got["epoch_loss"]) == 3


def test_tensorboard_unwritable_logdir_training_goes_on(tmp_path):
    inp = tf_keras.Input((3,))
    tm = tf_keras.Model(inp, tf_keras.layers.Dense(2)(inp))
    mm = twin(tm)
    mm.compile(optimizer="sgd", loss="mse")
    f = tmp_path / "file"
    f.write_text("x")
    hist = mm.fit(np.ones((4, 3), np.float32), np.ones((4, 2), np.float32), epochs=2,
                  callbacks=[K.TensorBoard(str(f / "logs"))])
    assert len(hist["loss"]) == 2


def graph_ops(run_dir):
    """The op types of the run's graph as TensorBoard's reader returns it (sorted, with repeats)."""
    acc = ea.EventAccumulator(run_dir)
    acc.Reload()
    assert acc.Tags()["graph"]
    return sorted(n.op for n in acc.Graph().node)


def test_graph_of_a_traced_function(tmp_path):
    """tf.summary.graph of f.get_concrete_function(spec).graph: TensorBoard reads tfc's graph of the same
    function with the same ops as TensorFlow's; TensorFlow's own GraphDef written by tfc reads back unchanged."""
    a, b = (float(v) for v in np.random.uniform(-4, 4, 2))
    spec = tf.TensorSpec([None, int(np.random.randint(1, 6))], tf.float32)

    def fn(x):
        return x * a + b

    tfc_dir, tf_dir, copy_dir = (str(tmp_path / d) for d in ("tfc", "tf", "copy"))
    w = tfc.summary.create_file_writer(tfc_dir)
    w.graph(tfc.function(fn).concrete_graph_def(spec))
    w.close()
    tf_graph = tf.function(fn).get_concrete_function(spec).graph
    with tf.summary.create_file_writer(tf_dir).as_default():
        tf.summary.graph(tf_graph)
    assert graph_ops(tfc_dir) == graph_ops(tf_dir)
    w = tfc.summary.create_file_writer(copy_dir)
    w.graph(tf_graph.as_graph_def().SerializeToString())
    w.close()
    acc = ea.EventAccumulator(copy_dir)
    acc.Reload()
    # compared as messages (map fields have no canonical byte order), in TensorFlow's own GraphDef class
    assert tf.compat.v1.GraphDef.FromString(acc.Graph().SerializeToString()) == tf_graph.as_graph_def()


def test_graph_refuses_bytes_that_are_not_a_graph(tmp_path):
    w = tfc.summary.create_file_writer(str(tmp_path))
    with pytest.raises(tfc.errors.DataLossError, match="tf.summary.graph"):  # a field running past the end
        w.graph(b"\x0a\xff\xff")
    w.close()
