"""SavedModel interchange with TensorFlow: SavedModels written by real TensorFlow at test time (tf.saved_model.save
of a tf.Module, tf-keras model.save(dir), Keras 3 model.export(dir)) load in tfc and their signatures give TensorFlow's
outputs on fresh random inputs (through `tfc saved_model run` and `tfc model run`); `tfc saved_model show` prints
what saved_model_cli prints; tampered saved_model.pb files get clear errors, never a crash."""
import contextlib
import io
import os
import subprocess

import numpy as np
import pytest
import tensorflow as tf
from conftest import assert_close

import tfc


def _tfc_bin():
    return os.path.join(os.path.dirname(tfc.library_path), "tfc")


def _tfc(*args, check=True):
    r = subprocess.run([_tfc_bin(), *args], capture_output=True, text=True, errors="replace", timeout=300)
    if check:
        assert r.returncode == 0, f"tfc {' '.join(args)}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


class _Affine(tf.Module):
    def __init__(self, rng, n_in, n_out):
        super().__init__()
        self.w = tf.Variable(rng.standard_normal((n_in, n_out)).astype(np.float32))
        self.b = tf.Variable(rng.standard_normal((n_out,)).astype(np.float32))
        self.scale = tf.Variable(np.float32(rng.uniform(0.5, 2.0)), trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.matmul(x, self.w) + self.b
        return {"y": tf.nn.relu(h) * self.scale, "z": tf.reduce_sum(h, axis=1)}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    rng = np.random.default_rng()
    root = tmp_path_factory.mktemp("saved_models")
    n_in, n_out = int(rng.integers(2, 7)), int(rng.integers(1, 5))
    m = _Affine(rng, n_in, n_out)
    tf.saved_model.save(m, str(root / "module"), signatures=m.__call__)
    import tf_keras
    k2 = tf_keras.Sequential([tf_keras.layers.Dense(int(rng.integers(2, 8)), activation="relu", input_shape=(n_in,)),
                              tf_keras.layers.Dense(n_out, activation="softmax")])
    k2.save(str(root / "tf_keras"))
    tf.saved_model.save(k2, str(root / "tf_keras_tf_save"))
    import keras
    k3 = keras.Sequential([keras.Input((n_in,)), keras.layers.Dense(int(rng.integers(2, 8)), activation="tanh"),
                           keras.layers.Dense(n_out)])
    k3.export(str(root / "keras3"), verbose=False)
    return {"root": root, "n_in": n_in, "n_out": n_out}


def _tf_signature(path, key="serving_default"):
    return tf.saved_model.load(path).signatures[key]


def _run_and_compare(models, tmp_path, name, cmd, rng):
    path = str(models["root"] / name)
    sig = _tf_signature(path)
    (in_key, spec), = sig.structured_input_signature[1].items()
    x = rng.standard_normal((int(rng.integers(1, 6)), models["n_in"])).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    outdir = tmp_path / "out"
    if cmd == "saved_model":
        _tfc("saved_model", "run", "--dir", path, "--tag_set", "serve", "--signature_def", "serving_default",
             "--inputs", f"{in_key}={tmp_path / 'x.npy'}", "--outdir", str(outdir))
    else:
        _tfc("model", "run", "--model", path, "--inputs", f"{in_key}={tmp_path / 'x.npy'}", "--outdir", str(outdir))
    want = sig(**{in_key: tf.constant(x)})
    assert sorted(os.listdir(outdir)) == sorted(k + ".npy" for k in want)
    for k, v in want.items():
        assert_close(np.load(outdir / (k + ".npy")), v.numpy(), "float32", msg=f"{name} output {k}")


@pytest.mark.parametrize("name", ["module", "tf_keras", "tf_keras_tf_save", "keras3"])
def test_signature_outputs_match_tensorflow(models, tmp_path, rng, name):
    _run_and_compare(models, tmp_path, name, "saved_model", rng)


def test_model_run_on_a_saved_model_directory(models, tmp_path, rng):
    _run_and_compare(models, tmp_path, "tf_keras", "model", rng)


def test_run_output_layout_matches_saved_model_cli(models, tmp_path, rng):
    from tensorflow.python.tools import saved_model_cli
    path = str(models["root"] / "module")
    x = rng.standard_normal((3, models["n_in"])).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _tfc("saved_model", "run", "--dir", path, "--tag_set", "serve", "--signature_def", "serving_default",
         "--inputs", f"x={tmp_path / 'x.npy'}", "--outdir", str(ours))
    with contextlib.redirect_stdout(io.StringIO()):
        saved_model_cli.run_saved_model_with_feed_dict(path, "serve", "serving_default", {"x": x}, str(theirs), False)
    assert sorted(os.listdir(ours)) == sorted(os.listdir(theirs))
    for f in os.listdir(theirs):
        a, b = np.load(ours / f), np.load(theirs / f)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert_close(a, b, "float32", msg=f)
    # an existing output file is kept unless --overwrite, as saved_model_cli
    r = _tfc("saved_model", "run", "--dir", path, "--tag_set", "serve", "--signature_def", "serving_default",
             "--input_exprs", "x=[[1.0" + ", 1.0" * (models["n_in"] - 1) + "]]", "--outdir", str(ours), check=False)
    assert r.returncode == 1 and "already exists" in r.stderr and "--overwrite" in r.stderr
    _tfc("saved_model", "run", "--dir", path, "--tag_set", "serve", "--signature_def", "serving_default",
         "--input_exprs", f"x=np.ones((1, {models['n_in']}))", "--outdir", str(ours), "--overwrite")
    want = _tf_signature(path)(x=tf.ones((1, models["n_in"])))
    assert_close(np.load(ours / "y.npy"), want["y"].numpy(), "float32")


def _cli_show(fn, *args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    return buf.getvalue()


@pytest.mark.parametrize("name", ["module", "keras3"])
def test_show_matches_saved_model_cli(models, name):
    from tensorflow.python.tools import saved_model_cli as cli
    path = str(models["root"] / name)
    assert _tfc("saved_model", "show", "--dir", path).stdout == _cli_show(cli._show_tag_sets, path)
    assert _tfc("saved_model", "show", "--dir", path, "--tag_set", "serve").stdout == \
        _cli_show(cli._show_signature_def_map_keys, path, "serve")
    assert _tfc("saved_model", "show", "--dir", path, "--tag_set", "serve", "--signature_def",
                "serving_default").stdout == _cli_show(cli._show_inputs_outputs, path, "serve", "serving_default")
    # --all: the SignatureDefs verbatim; the op set as a set (Python prints sets unordered); tfc lists no
    # "Concrete Functions" (that needs the Python objects)
    ours = _tfc("saved_model", "show", "--dir", path, "--all").stdout
    theirs = _cli_show(cli._show_all, path).split("\nConcrete Functions:")[0]
    ops_line = "contains the following ops: "
    assert ours.split(ops_line)[0] == theirs.split(ops_line)[0]
    our_ops = ours.split(ops_line)[1].strip()
    their_ops = theirs.split(ops_line)[1].strip()
    assert eval(our_ops) == eval(their_ops)  # noqa: S307 - both are Python set literals of op names


def test_tampered_saved_model_pb_is_a_clear_error(models, tmp_path, rng):
    src = models["root"] / "module"
    data = (src / "saved_model.pb").read_bytes()
    bad = tmp_path / "bad"
    os.makedirs(bad)
    os.symlink(src / "variables", bad / "variables")
    cases = [data[: int(rng.integers(1, len(data) - 1))], data[:10], b"\xff" * 64]
    for _ in range(20):  # random byte flips: an error or a model that still loads, never a crash
        b = bytearray(data)
        for _ in range(int(rng.integers(1, 8))):
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        cases.append(bytes(b))
    for i, c in enumerate(cases):
        (bad / "saved_model.pb").write_bytes(c)
        for args in (["saved_model", "show", "--dir", str(bad), "--all"],
                     ["saved_model", "run", "--dir", str(bad), "--tag_set", "serve", "--signature_def",
                      "serving_default", "--input_exprs", "x=[[1.0]]"]):
            r = _tfc(*args, check=False)
            assert r.returncode in (0, 1), f"case {i}: {args[1]} exit {r.returncode}\n{r.stderr}"
            if i < 3:
                assert r.returncode == 1 and "saved_model.pb" in r.stderr, r.stderr
    # well-formed protobuf, broken structure: a library function without a signature (show --all walks the
    # library before anything validates the graph; it crashed once)
    from tensorflow.core.protobuf import saved_model_pb2
    sm = saved_model_pb2.SavedModel.FromString(data)
    sm.meta_graphs[0].graph_def.library.function[0].ClearField("signature")
    (bad / "saved_model.pb").write_bytes(sm.SerializeToString())
    assert _tfc("saved_model", "show", "--dir", str(bad), "--all", check=False).returncode == 0
    r = _tfc("saved_model", "run", "--dir", str(bad), "--tag_set", "serve", "--signature_def", "serving_default",
             "--input_exprs", "x=[[1.0]]", check=False)
    assert r.returncode == 1 and "has no name" in r.stderr, r.stderr
    r = _tfc("saved_model", "show", "--dir", str(tmp_path / "missing"), check=False)
    assert r.returncode == 1 and "NOT_FOUND" in r.stderr


def test_missing_variables_and_wrong_tags_are_clear_errors(models, tmp_path):
    src = models["root"] / "module"
    r = _tfc("saved_model", "run", "--dir", str(src), "--tag_set", "train", "--signature_def", "serving_default",
             "--input_exprs", "x=[[1.0]]", check=False)
    assert r.returncode == 1 and "could not be found" in r.stderr and "serve" in r.stderr
    bad = tmp_path / "novars"
    os.makedirs(bad)
    os.symlink(src / "saved_model.pb", bad / "saved_model.pb")
    r = _tfc("saved_model", "run", "--dir", str(bad), "--tag_set", "serve", "--signature_def", "serving_default",
             "--input_exprs", "x=[[1.0]]", check=False)
    assert r.returncode == 1 and "NOT_FOUND" in r.stderr and "variables" in r.stderr


def test_tensorflow_loads_what_tfc_saves(tmp_path, rng):
    """tfc_saved_model_save (examples/saved_model_export.c: y = relu(x @ w + b) with random w, b) -> TensorFlow's
    tf.saved_model.load and saved_model_cli read it; the signature gives NumPy's values; re-saving replaces it."""
    from tensorflow.python.tools import saved_model_cli as cli
    exe = os.path.join(os.path.dirname(tfc.library_path), "examples", "saved_model_export")
    if not os.path.exists(exe):
        pytest.skip("examples are not built")
    n_in, n_out = int(rng.integers(1, 7)), int(rng.integers(1, 6))
    out = str(tmp_path / "model")
    for rep in range(2):
        w = rng.standard_normal((n_in, n_out)).astype(np.float32)
        b = rng.standard_normal((n_out,)).astype(np.float32)
        np.save(tmp_path / "w.npy", w)
        np.save(tmp_path / "b.npy", b)
        r = subprocess.run([exe, out, str(tmp_path / "w.npy"), str(tmp_path / "b.npy")], capture_output=True, text=True,
                           timeout=300)
        assert r.returncode == 0, r.stderr
        assert not [f for f in os.listdir(tmp_path) if ".tmp-" in f or ".old-" in f]  # temporaries renamed/removed
        loaded = tf.saved_model.load(out)
        sig = loaded.signatures["serving_default"]
        x = rng.standard_normal((int(rng.integers(1, 5)), n_in)).astype(np.float32)
        # the values come from variables/ (an object-based checkpoint): TensorFlow rebuilt the root object with
        # the variables as attributes from the SavedObjectGraph
        assert_close(sig(x=tf.constant(x))["y"].numpy(), np.maximum(x @ w + b, 0), "float32", msg=f"save {rep}")
        np.testing.assert_array_equal(getattr(loaded, "dense/kernel").numpy(), w)
        np.testing.assert_array_equal(getattr(loaded, "dense/bias").numpy(), b)
    shown = _cli_show(cli._show_inputs_outputs, out, "serve", "serving_default")
    assert "inputs['x'] tensor_info:" in shown and f"shape: (-1, {n_in})" in shown and "outputs['y']" in shown
    assert _tfc("saved_model", "show", "--dir", out, "--tag_set", "serve", "--signature_def",
                "serving_default").stdout == shown
