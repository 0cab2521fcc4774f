"""TensorFlow 1 SavedModels, init ops, assets and lookup tables: models written by real TensorFlow at test time —
tf.compat.v1 graphs with reference variables (VariableV2, restored through the SaverDef) and a main op (TF Serving's
half_plus_two), a TF1 graph with lookup tables initialized from a vocabulary asset and from tensors, and a TF2
tf.Module with a tf.lookup.StaticHashTable over a vocabulary asset — load in tfc (`tfc saved_model run`) and give
TensorFlow's outputs for fresh random inputs, out-of-vocabulary keys included. The files the models were built from
are deleted before loading, so only the model's own assets/ directory can be read. Bad inputs (a missing asset
file, a vocabulary line that does not parse) are clear errors naming the file."""
import os
import shutil
import subprocess
import time

import numpy as np
import pytest
import tensorflow as tf
from conftest import assert_close

import tfc


def _tfc(*args, check=True):
    exe = os.path.join(os.path.dirname(tfc.library_path), "tfc")
    r = subprocess.run([exe, *args], capture_output=True, text=True, errors="replace", timeout=300)
    if check:
        assert r.returncode == 0, f"tfc {' '.join(args)}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r


def _words(rng, n, lo=3, hi=9):
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    out = set()
    while len(out) < n:
        out.add("".join(rng.choice(letters, int(rng.integers(lo, hi)))))
    return sorted(out, key=lambda _: rng.random())


def _run(path, tmp_path, inputs, key="serving_default"):
    """tfc saved_model run with .npy inputs; returns {output key: array}."""
    spec = []
    for k, v in inputs.items():
        np.save(tmp_path / f"in_{k}.npy", v)
        spec.append(f"{k}={tmp_path / f'in_{k}.npy'}")
    outdir = tmp_path / "out"
    _tfc("saved_model", "run", "--dir", str(path), "--tag_set", "serve", "--signature_def", key,
         "--inputs", ";".join(spec), "--outdir", str(outdir), "--overwrite")
    return {f[:-4]: np.load(outdir / f) for f in os.listdir(outdir)}


def _tf_run(path, inputs, key="serving_default"):
    sig = tf.saved_model.load(str(path)).signatures[key]
    return {k: v.numpy() for k, v in sig(**{k: tf.constant(v) for k, v in inputs.items()}).items()}


def _compare(got, want, what):
    assert sorted(got) == sorted(want), what
    for k, w in want.items():
        g = got[k]
        if w.dtype == object or w.dtype.kind in "SU":
            assert [bytes(x) for x in g.ravel()] == [bytes(x) for x in w.ravel()], f"{what}: {k}"
            assert g.shape == w.shape
        elif w.dtype.kind in "iub":
            np.testing.assert_array_equal(g, w, err_msg=f"{what}: {k}")
        else:
            assert_close(g, w, "float32", msg=f"{what}: {k}")


# ---- TensorFlow 1: reference variables, the SaverDef's restore, a main op ----

def _half_plus_two(export_dir, rng):
    """TF Serving's half_plus_two: y = a*x + b with VariableV2 a, b; y2 = a*x + c where c is outside the checkpoint
    and set by the main op (as TF Serving's model sets its filename variable)."""
    g = tf.Graph()
    vals = {k: np.float32(rng.uniform(-3, 3)) for k in "abc"}
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 1], name="x")
        a = tf.compat.v1.Variable(vals["a"], name="a", use_resource=False)
        b = tf.compat.v1.Variable(vals["b"], name="b", use_resource=False)
        c = tf.compat.v1.Variable(np.float32(0), name="c", use_resource=False, collections=[])
        y = tf.add(tf.multiply(a, x), b, name="y")
        y2 = tf.add(tf.multiply(a, x), c, name="y2")
        assert a.op.type == "VariableV2"
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            builder = tf.compat.v1.saved_model.Builder(str(export_dir))
            sig = tf.compat.v1.saved_model.predict_signature_def({"x": x}, {"y": y, "y2": y2})
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"serving_default": sig},
                                                 main_op=tf.group(c.assign(vals["c"])))
            builder.save()
    return vals


def test_tf1_half_plus_two_matches_tensorflow(tmp_path, rng):
    path = tmp_path / "hp2"
    vals = _half_plus_two(path, rng)
    x = rng.standard_normal((int(rng.integers(1, 6)), 1)).astype(np.float32)
    got = _run(path, tmp_path, {"x": x})
    _compare(got, _tf_run(path, {"x": x}), "half_plus_two")
    assert_close(got["y2"], vals["a"] * x + vals["c"], "float32")  # the main op ran


def test_tf1_simple_save_matches_tensorflow(tmp_path, rng):
    g = tf.Graph()
    w0 = rng.standard_normal((3, 2)).astype(np.float32)
    with g.as_default():
        x = tf.compat.v1.placeholder(tf.float32, [None, 3], name="inp")
        w = tf.compat.v1.Variable(w0, name="w", use_resource=False)
        out = tf.nn.relu(tf.matmul(x, tf.identity(w)), name="out")
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            sess.run(w.assign_add(np.ones_like(w0)))  # the saved value, not the initial one
            tf.compat.v1.saved_model.simple_save(sess, str(tmp_path / "simple"), {"inp": x}, {"out": out})
    x = rng.standard_normal((4, 3)).astype(np.float32)
    got = _run(tmp_path / "simple", tmp_path, {"inp": x})
    _compare(got, _tf_run(tmp_path / "simple", {"inp": x}), "simple_save")
    assert_close(got["out"], np.maximum(x @ (w0 + 1), 0), "float32")


# ---- lookup tables over vocabulary assets ----

def _vocab_file(tmp_path, rng, n):
    words = _words(rng, n)
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    f = src / "vocab.txt"
    f.write_text("".join(w + "\n" for w in words))
    return words, f


def _tf1_table_model(export_dir, vocab_path, rng, delimited=False):
    """string -> id from a vocabulary asset (line numbers, or 'word<TAB>id' lines), int64 -> string from tensors."""
    g = tf.Graph()
    int_keys = np.unique(rng.integers(0, 1000, 8)).astype(np.int64)
    names = np.array(_words(rng, len(int_keys)), dtype=object)
    with g.as_default():
        keys = tf.compat.v1.placeholder(tf.string, [None], name="keys")
        ints = tf.compat.v1.placeholder(tf.int64, [None], name="ints")
        if delimited:
            init = tf.compat.v1.lookup.TextFileInitializer(str(vocab_path), tf.string, 0, tf.int64, 1, delimiter="\t")
        else:
            init = tf.compat.v1.lookup.TextFileInitializer(
                str(vocab_path), tf.string, tf.compat.v1.lookup.TextFileIndex.WHOLE_LINE,
                tf.int64, tf.compat.v1.lookup.TextFileIndex.LINE_NUMBER)
        table = tf.compat.v1.lookup.StaticHashTable(init, default_value=-1)
        names_table = tf.compat.v1.lookup.StaticHashTable(
            tf.compat.v1.lookup.KeyValueTensorInitializer(tf.constant(int_keys), tf.constant(names.astype(bytes))),
            default_value="UNK")
        scale = tf.compat.v1.Variable(np.float32(rng.uniform(0.5, 2)), name="scale", use_resource=False)
        ids = table.lookup(keys)
        score = tf.multiply(tf.cast(ids, tf.float32), scale, name="score")
        name = names_table.lookup(ints)
        with tf.compat.v1.Session(graph=g) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            builder = tf.compat.v1.saved_model.Builder(str(export_dir))
            sig = tf.compat.v1.saved_model.predict_signature_def({"keys": keys, "ints": ints},
                                                                 {"ids": ids, "score": score, "name": name})
            builder.add_meta_graph_and_variables(
                sess, ["serve"], signature_def_map={"serving_default": sig},
                assets_collection=tf.compat.v1.get_collection(tf.compat.v1.GraphKeys.ASSET_FILEPATHS),
                main_op=tf.compat.v1.tables_initializer())
            builder.save()
    return int_keys


class _Vocab(tf.Module):
    def __init__(self, vocab_path, rng):
        super().__init__()
        init = tf.lookup.TextFileInitializer(str(vocab_path), tf.string, tf.lookup.TextFileIndex.WHOLE_LINE,
                                             tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER)
        self.table = tf.lookup.StaticHashTable(init, default_value=-1)
        self.w = tf.Variable(rng.standard_normal(3).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="keys")])
    def __call__(self, keys):
        ids = self.table.lookup(keys)
        return {"ids": ids, "emb": tf.cast(ids, tf.float32)[:, None] * self.w[None, :]}


def _keys(rng, words, n_oov=3):
    oov = [w for w in _words(rng, n_oov + 5, 10, 14) if w not in words][:n_oov]
    k = list(rng.choice(words, int(rng.integers(3, 9)))) + oov
    rng.shuffle(k)
    return np.array(k, dtype=bytes)


def test_tf2_static_hash_table_from_vocabulary_asset(tmp_path, rng):
    words, vocab = _vocab_file(tmp_path, rng, int(rng.integers(5, 40)))
    m = _Vocab(vocab, rng)
    path = tmp_path / "tf2_table"
    tf.saved_model.save(m, str(path), signatures=m.__call__)
    shutil.rmtree(tmp_path / "src")  # only the model's assets/ copy remains
    assert os.path.exists(path / "assets" / "vocab.txt")
    keys = _keys(rng, words)
    got = _run(path, tmp_path, {"keys": keys})
    want = _tf_run(path, {"keys": keys})
    _compare(got, want, "tf2 table")
    assert (got["ids"] == -1).sum() >= 3 and (got["ids"] >= 0).any()


@pytest.mark.parametrize("delimited", [False, True])
def test_tf1_tables_with_init_op_and_assets(tmp_path, rng, delimited):
    n = int(rng.integers(5, 40))
    words, vocab = _vocab_file(tmp_path, rng, n)
    if delimited:  # 'word<TAB>id' with random ids
        ids = rng.permutation(10 * n)[:n]
        vocab.write_text("".join(f"{w}\t{i}\n" for w, i in zip(words, ids)))
    path = tmp_path / "tf1_table"
    int_keys = _tf1_table_model(path, vocab, rng, delimited)
    shutil.rmtree(tmp_path / "src")
    ints = np.concatenate([rng.choice(int_keys, 4), rng.integers(1000, 2000, 2)]).astype(np.int64)
    inputs = {"keys": _keys(rng, words), "ints": ints}
    got = _run(path, tmp_path, inputs)
    want = _tf_run(path, inputs)
    _compare(got, want, "tf1 tables")
    assert (got["ids"] == -1).sum() >= 3 and [bytes(x) for x in got["name"][-2:]] == [b"UNK", b"UNK"]


# ---- bad inputs ----

def test_missing_asset_and_bad_vocabulary_line_are_clear_errors(tmp_path, rng):
    words, vocab = _vocab_file(tmp_path, rng, 6)
    vocab.write_text("".join(f"{w}\t{i}\n" for i, w in enumerate(words)))
    path = tmp_path / "m"
    _tf1_table_model(path, vocab, rng, delimited=True)
    inputs = {"keys": np.array([b"x"]), "ints": np.array([1], np.int64)}
    for k, v in inputs.items():
        np.save(tmp_path / f"{k}.npy", v)
    args = ["saved_model", "run", "--dir", str(path), "--tag_set", "serve", "--signature_def", "serving_default",
            "--inputs", f"keys={tmp_path / 'keys.npy'};ints={tmp_path / 'ints.npy'}", "--outdir",
            str(tmp_path / "o"), "--overwrite"]
    asset = path / "assets" / "vocab.txt"
    lines = asset.read_text().splitlines()
    # a value that is not an int64 on line 3
    bad = list(lines)
    bad[2] = bad[2].split("\t")[0] + "\tseven"
    asset.write_text("\n".join(bad) + "\n")
    r = _tfc(*args, check=False)
    assert r.returncode != 0
    assert "InitializeTableFromTextFileV2" in r.stderr and "vocab.txt line 3" in r.stderr and "seven" in r.stderr, r.stderr
    # a line without the value column
    bad = list(lines)
    bad[4] = "lonely"
    asset.write_text("\n".join(bad) + "\n")
    r = _tfc(*args, check=False)
    assert r.returncode != 0 and "vocab.txt line 5" in r.stderr and "columns" in r.stderr, r.stderr
    # the asset file gone
    asset.unlink()
    r = _tfc(*args, check=False)
    assert r.returncode != 0 and "vocab.txt" in r.stderr and "asset" in r.stderr, r.stderr


# ---- tfc serve: the same models behind TensorFlow Serving's REST API ----

def test_serve_tf1_and_table_models(tmp_path, rng):
    from serving_util import Server
    base = tmp_path / "models"
    _half_plus_two(base / "hp2" / "1", rng)
    words, vocab = _vocab_file(tmp_path, rng, int(rng.integers(5, 30)))
    m = _Vocab(vocab, rng)
    tf.saved_model.save(m, str(base / "vocab" / "3"), signatures=m.__call__)
    shutil.rmtree(tmp_path / "src")
    config = tmp_path / "models.config"
    config.write_text("model_config_list {\n" + "".join(
        f'  config {{ name: "{n}" base_path: "{base / n}" model_platform: "tensorflow" }}\n' for n in ("hp2", "vocab"))
        + "}\n")
    x = rng.standard_normal((int(rng.integers(1, 5)), 1)).astype(np.float32)
    keys = _keys(rng, words)
    want_hp2 = _tf_run(base / "hp2" / "1", {"x": x})
    want_vocab = _tf_run(base / "vocab" / "3", {"keys": keys})
    with Server(f"--model_config_file={config}", wait_model="vocab") as s:
        deadline = time.time() + 60  # the other model too
        while not any(v["state"] == "AVAILABLE" for v in s.get("/v1/models/hp2").json().get("model_version_status", [])):
            assert time.time() < deadline, s.get("/v1/models/hp2").text
            time.sleep(0.1)
        r = s.post("/v1/models/hp2:predict", {"inputs": {"x": x.tolist()}})
        assert r.status_code == 200, r.text
        out = r.json()["outputs"]
        for k in ("y", "y2"):
            np.testing.assert_allclose(np.array(out[k], np.float32), want_hp2[k], rtol=1e-6, atol=1e-6)
        r = s.post("/v1/models/vocab:predict", {"instances": [k.decode() for k in keys]})
        assert r.status_code == 200, r.text
        preds = r.json()["predictions"]
        assert [p["ids"] for p in preds] == want_vocab["ids"].tolist()
        np.testing.assert_allclose(np.array([p["emb"] for p in preds], np.float32), want_vocab["emb"], rtol=1e-6,
                                   atol=1e-6)
