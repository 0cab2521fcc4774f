"""Keras preprocessing layers: tfc (include/tfc/keras/preprocessing.h through python/tfc/keras.py) against tf_keras
on fresh random inputs and configurations each run (the seed is printed; TFC_TEST_SEED=<n> replays a run).

Each tfc layer is created from tf_keras's get_config(), so config round trips through tfc's registry are checked
on the way; adapted state (vocabularies in order, with the many frequency ties small alphabets give; Normalization's
mean/variance/count), outputs and get_config must equal tf_keras's. Bad input must raise in both.
"""
import numpy as np
import pytest

from conftest import assert_close, tf, tfc
from tfc import data as tfc_data
from test_keras_layers import norm as _layers_norm

tf_keras = pytest.importorskip("tf_keras")
K = tfc.keras
L = tf_keras.layers
TRIALS = 6


def norm(v):
    """A config as plain JSON values (test_keras_layers.norm), without the build's batch_input_shape."""
    if isinstance(v, dict):
        v = {k: x for k, x in v.items() if k != "batch_input_shape"}
    return _layers_norm(v)


def assert_config(got, want):
    g, w = norm(got), norm(want)
    assert g == w, "get_config differs:\n tfc      %r\n tf_keras %r" % (g, w)


def twin(tk_layer):
    """The tfc layer made from tf_keras's config (the registry's from_config)."""
    return K.layer_from_config(type(tk_layer).__name__, norm(tk_layer.get_config()))


@pytest.fixture(autouse=True)
def _clear():
    tf_keras.backend.clear_session()
    K.clear_session()


def rand_words(rng, n, alphabet=5, max_len=3, unicode=False):
    """n strings over a small alphabet (many repeats and frequency ties); some empty, some non-ASCII."""
    chars = list("abcdefghij"[:alphabet]) + (["é", "ß", "字"] if unicode else [])
    out = []
    for _ in range(n):
        k = int(rng.integers(0, max_len + 1))
        out.append("".join(chars[int(rng.integers(0, len(chars)))] for _ in range(k)))
    return np.array(out, dtype=object)


def as_bytes(a):
    return np.vectorize(lambda s: s.encode() if isinstance(s, str) else s, otypes=[object])(a)


def tk_out(layer, x):
    return np.asarray(layer(tf.constant(x)))


# ---- Hashing --------------------------------------------------------------------------------------------------

def test_hashing_buckets_match(rng):
    for _ in range(TRIALS):
        kw = {"num_bins": int(rng.integers(1, 40))}
        strings = rng.random() < 0.6
        if rng.random() < 0.4 and kw["num_bins"] > 1:
            kw["mask_value"] = "" if strings else 0
        if rng.random() < 0.4:
            kw["salt"] = int(rng.integers(0, 2**31)) if rng.random() < 0.5 else [int(rng.integers(0, 2**31)),
                                                                                 int(rng.integers(0, 2**31))]
        if rng.random() < 0.3:
            kw["output_mode"] = ["one_hot", "multi_hot", "count"][int(rng.integers(0, 3))]
        shape = (int(rng.integers(1, 6)), 1 if kw.get("output_mode") == "one_hot" else int(rng.integers(1, 6)))
        if strings:
            x = rand_words(rng, int(np.prod(shape)), alphabet=8, max_len=90, unicode=True).reshape(shape)
        else:
            x = rng.integers(-1000, 1000, size=shape).astype(np.int64)
        tk = L.Hashing(**kw)
        mine = twin(tk)
        want = tk_out(tk, x)
        got = mine(x).numpy()
        np.testing.assert_array_equal(got, want, err_msg="Hashing(%r)" % kw)
        assert got.dtype == want.dtype
        assert_config(mine.get_config(), tk.get_config())


def test_fingerprint64_long_strings(rng):
    """FarmHash Fingerprint64 for every length class (0-16, 17-32, 33-64, and the 64-byte rounds)."""
    lengths = list(range(0, 70)) + [int(v) for v in rng.integers(70, 600, size=20)]
    x = np.array(["".join(chr(int(c)) for c in rng.integers(32, 127, size=n)) for n in lengths], dtype=object)
    tk = L.Hashing(num_bins=2**52 + int(rng.integers(0, 2**40)))  # exact in a JSON double
    mine = twin(tk)
    np.testing.assert_array_equal(mine(x).numpy(), tk_out(tk, x))


# ---- CategoryEncoding -----------------------------------------------------------------------------------------

def test_category_encoding_matches(rng):
    for _ in range(TRIALS):
        n = int(rng.integers(1, 10))
        mode = ["one_hot", "multi_hot", "count"][int(rng.integers(0, 3))]
        rank = int(rng.integers(0, 3))
        shape = [(), (int(rng.integers(1, 6)),), (int(rng.integers(1, 5)), 1 if mode == "one_hot" else int(rng.integers(1, 5)))][rank]
        x = rng.integers(0, n, size=shape).astype(np.int32 if rng.random() < 0.5 else np.int64)
        tk = L.CategoryEncoding(num_tokens=n, output_mode=mode)
        mine = twin(tk)
        assert_close(mine(x).numpy(), tk_out(tk, x))
        assert_config(mine.get_config(), tk.get_config())


def test_category_encoding_out_of_range():
    tk = L.CategoryEncoding(num_tokens=3)
    mine = twin(tk)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tk(tf.constant([[0, 3]]))
    with pytest.raises(tfc.InvalidArgumentError, match="num_tokens=3"):
        mine(np.array([[0, 3]]))
    with pytest.raises(tfc.InvalidArgumentError, match="num_tokens"):
        K.layer_from_config("CategoryEncoding", {"num_tokens": 0})(np.array([0]))


# ---- StringLookup / IntegerLookup -----------------------------------------------------------------------------

def rand_lookup_kwargs(rng, strings):
    kw = {}
    if rng.random() < 0.5:
        kw["max_tokens"] = int(rng.integers(4, 9))
    if rng.random() < 0.5:
        kw["num_oov_indices"] = int(rng.integers(0, 4))
    if rng.random() < 0.4:
        kw["mask_token"] = "" if strings else 0
    if rng.random() < 0.2 and strings:
        kw["oov_token"] = "<?>"
    if rng.random() < 0.5:
        kw["output_mode"] = ["one_hot", "multi_hot", "count", "tf_idf"][int(rng.integers(0, 4))]
        if rng.random() < 0.3 and "max_tokens" in kw:
            kw["pad_to_max_tokens"] = True
    return kw


def lookup_data(rng, strings, shape):
    n = int(np.prod(shape))
    if strings:
        return rand_words(rng, n, alphabet=4, max_len=2, unicode=rng.random() < 0.5).reshape(shape)
    return rng.integers(0, 9, size=shape).astype(np.int64)


@pytest.mark.parametrize("strings", [True, False], ids=["StringLookup", "IntegerLookup"])
def test_lookup_adapt_matches(rng, strings):
    cls = L.StringLookup if strings else L.IntegerLookup
    for _ in range(TRIALS):
        kw = rand_lookup_kwargs(rng, strings)
        mode = kw.get("output_mode", "int")
        rows = int(rng.integers(2, 80))
        # tf_keras's tf_idf adapt stacks per-row unique tokens (it fails on rows with different counts): vectors there,
        # each batch of 32 being one document
        data = lookup_data(rng, strings, (rows,) if mode == "tf_idf" else (rows, int(rng.integers(1, 4))))
        tk = cls(**kw)
        mine = twin(tk)
        tk.adapt(as_bytes(data) if strings else data)
        mine.adapt(data)
        want_vocab = [v.decode() if isinstance(v, bytes) else (str(v) if strings else int(v))
                      for v in tk.get_vocabulary()]
        assert mine.get_vocabulary() == want_vocab, "%s(%r) adapted on %r" % (cls.__name__, kw, data.tolist())
        assert mine.vocabulary_size() == tk.vocabulary_size()
        # fresh inputs (in-vocabulary only when OOV inputs are an error)
        shape = (int(rng.integers(1, 5)), 1 if mode == "one_hot" else int(rng.integers(1, 5)))
        x = lookup_data(rng, strings, shape)
        if kw.get("num_oov_indices") == 0:
            vocab = [v for v in mine.get_vocabulary()]
            x = np.array([vocab[int(i)] for i in rng.integers(0, len(vocab), size=shape).ravel()],
                         dtype=object if strings else np.int64).reshape(shape)
        want = tk_out(tk, as_bytes(x) if strings else x)
        got = mine(x).numpy()
        assert got.dtype == want.dtype, "%r: dtype %s != %s" % (kw, got.dtype, want.dtype)
        assert_close(got, want, msg="%s(%r)" % (cls.__name__, kw))
        assert_config(mine.get_config(), tk.get_config())


@pytest.mark.parametrize("strings", [True, False], ids=["StringLookup", "IntegerLookup"])
def test_lookup_vocabulary_and_invert(rng, strings):
    cls = L.StringLookup if strings else L.IntegerLookup
    for _ in range(TRIALS):
        pool = (["w%d" % i for i in range(20)] if strings else list(range(1, 21)))
        vocab = [pool[int(i)] for i in rng.permutation(20)[:int(rng.integers(1, 10))]]
        kw = {}
        if rng.random() < 0.5:
            kw["mask_token"] = "" if strings else 0
        if rng.random() < 0.5:
            kw["num_oov_indices"] = int(rng.integers(1, 3))
        tk = cls(vocabulary=vocab, **kw)
        mine = twin(tk)
        assert mine.get_vocabulary() == [v.decode() if isinstance(v, bytes) else (v if strings else int(v))
                                         for v in tk.get_vocabulary()]
        x = np.array([pool[int(i)] for i in rng.integers(0, 20, size=6)], dtype=object if strings else np.int64)
        np.testing.assert_array_equal(mine(x).numpy(), tk_out(tk, x))
        assert_config(mine.get_config(), tk.get_config())
        # inverse
        tki = cls(vocabulary=vocab, invert=True, **kw)
        mi = twin(tki)
        ids = rng.integers(0, tki.vocabulary_size() + 2, size=(2, 3)).astype(np.int64)
        got, want = mi(ids).numpy(), tk_out(tki, ids)
        np.testing.assert_array_equal(as_bytes(got) if strings else got, want)


def test_lookup_bad_vocabularies():
    for vocab, kw in [(["a", "b", "a"], {}), (["a", "", "b"], {"mask_token": ""}), ([], {}),
                      (["a", "b", "c", "d"], {"max_tokens": 3})]:
        with pytest.raises((ValueError, tf.errors.InvalidArgumentError)):
            L.StringLookup(vocabulary=vocab, **kw)
        with pytest.raises(tfc.InvalidArgumentError):
            K.layer_from_config("StringLookup", dict(kw, vocabulary=vocab))
    with pytest.raises(tfc.InvalidArgumentError, match="repeated term"):
        K.layer_from_config("IntegerLookup", {"vocabulary": [1, 2, 1]})
    lk = K.layer_from_config("StringLookup", {"vocabulary": ["a"]})
    with pytest.raises(tfc.InvalidArgumentError, match="Cannot adapt"):
        lk.adapt(np.array(["a"], dtype=object))
    with pytest.raises(tfc.InvalidArgumentError, match="string"):
        lk(np.array([1, 2]))
    lk0 = K.layer_from_config("StringLookup", {"vocabulary": ["a"], "num_oov_indices": 0})
    with pytest.raises(tfc.InvalidArgumentError, match="num_oov_indices=0"):
        lk0(np.array(["b"], dtype=object))


def test_adapt_empty_and_wrong_dtype():
    for cls, data in [("StringLookup", np.array([], dtype=object)), ("Normalization", np.zeros((0, 3), np.float32))]:
        with pytest.raises(tfc.InvalidArgumentError, match="no data"):
            K.layer_from_config(cls, {}).adapt(data)
    with pytest.raises(tfc.InvalidArgumentError, match="string"):
        K.layer_from_config("StringLookup", {}).adapt(np.array([1, 2]))
    with pytest.raises(tfc.InvalidArgumentError, match="has no adapt"):
        K.layer_from_config("Dense", {"units": 2}).adapt(np.zeros((2, 2), np.float32))


def test_adapt_from_dataset_and_map(rng):
    data = lookup_data(rng, True, (int(rng.integers(10, 60)),))
    batch = int(rng.integers(1, 8))
    tk = L.StringLookup()
    tk.adapt(tf.data.Dataset.from_tensor_slices(as_bytes(data)).batch(batch))
    mine = K.layer_from_config("StringLookup", {})
    ds = tfc_data.Dataset.from_tensor_slices(data).batch(batch)
    mine.adapt(ds)
    assert mine.get_vocabulary() == [v.decode() if isinstance(v, bytes) else v for v in tk.get_vocabulary()]
    mapped = K.map_with_layer(ds, mine)
    got = np.concatenate([np.asarray(e) for e in mapped.as_numpy_iterator()])
    np.testing.assert_array_equal(got, tk_out(tk, as_bytes(data)))


# ---- Normalization --------------------------------------------------------------------------------------------

def test_normalization_adapt_matches(rng):
    for _ in range(TRIALS):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(2, 50))] + [int(rng.integers(1, 5)) for _ in range(rank - 1)]
        choices = [None] if rank == 1 else [-1, None] + list(range(1, rank)) + ([(1, rank - 1)] if rank == 3 else [])
        axis = choices[int(rng.integers(0, len(choices)))]
        x = (rng.normal(size=shape) * rng.uniform(0.1, 10) + rng.uniform(-5, 5)).astype(np.float32)
        batch = int(rng.integers(1, 40))
        tk = L.Normalization(axis=axis)
        mine = twin(tk)
        tk.adapt(x, batch_size=batch)
        mine.adapt(x, batch_size=batch)
        for a, b in zip(mine.get_weights(), tk.get_weights()):
            assert_close(a, b, rtol=1e-4, atol=1e-5, msg="Normalization(axis=%r) state" % (axis,))
        y = (rng.normal(size=shape) * 3).astype(np.float32)
        assert_close(mine(y).numpy(), tk_out(tk, y), rtol=1e-4, atol=1e-4)
        assert_config(mine.get_config(), tk.get_config())


def test_normalization_given_stats_and_invert(rng):
    for _ in range(TRIALS):
        d = int(rng.integers(1, 5))
        mean = [float(v) for v in rng.normal(size=d)]
        var = [float(v) for v in rng.uniform(0.1, 4, size=d)]
        if rng.random() < 0.3:
            var[0] = 0.0  # max(sqrt(var), epsilon)
        tk = L.Normalization(mean=mean, variance=var, invert=bool(rng.random() < 0.5))
        mine = twin(tk)
        x = rng.normal(size=(4, d)).astype(np.float32)
        assert_close(mine(x).numpy(), tk_out(tk, x))
        assert_config(mine.get_config(), tk.get_config())
    with pytest.raises(tfc.InvalidArgumentError, match="Cannot `adapt`"):
        K.layer_from_config("Normalization", {"mean": [0.0], "variance": [1.0]}).adapt(np.zeros((2, 1), np.float32))
    with pytest.raises(tfc.InvalidArgumentError, match="axis"):
        K.layer_from_config("Normalization", {"axis": [3]})(np.zeros((2, 2), np.float32))


def test_normalization_in_model(rng):
    """A tf_keras model with preprocessing layers loads from JSON and predicts the same."""
    d = int(rng.integers(2, 6))
    norm_l = L.Normalization()
    norm_l.adapt(rng.normal(size=(32, d)).astype(np.float32))
    tm = tf_keras.Sequential([tf_keras.Input((d,)), norm_l, L.Dense(3)])
    mm = K.model_from_json(tm.to_json())
    mm.set_weights(tm.get_weights())
    x = rng.normal(size=(5, d)).astype(np.float32)
    assert_close(np.asarray(mm.predict(x, verbose=0) if "verbose" in mm.predict.__code__.co_varnames else mm.predict(x)),
                 tm.predict(x, verbose=0), rtol=1e-4, atol=1e-5)


# ---- Discretization -------------------------------------------------------------------------------------------

def boundary_probe(bounds):
    """Values at, just below and just above each boundary (float32)."""
    b = np.asarray(bounds, np.float32)
    return np.concatenate([b, np.nextafter(b, np.float32(-np.inf)), np.nextafter(b, np.float32(np.inf))])


def test_discretization_boundaries_match(rng):
    for _ in range(TRIALS):
        bounds = sorted(float(v) for v in np.round(rng.normal(size=int(rng.integers(0, 6))), 3))
        mode = ["int", "one_hot", "multi_hot", "count"][int(rng.integers(0, 4))]
        tk = L.Discretization(bin_boundaries=bounds, output_mode=mode)
        mine = twin(tk)
        x = np.concatenate([rng.normal(size=8).astype(np.float32), boundary_probe(bounds)]) if bounds else \
            rng.normal(size=8).astype(np.float32)
        x = x[:, None] if mode == "one_hot" else x.reshape(1, -1) if mode != "int" else x
        got, want = mine(x).numpy(), tk_out(tk, x)
        assert got.dtype == want.dtype
        assert_close(got, want)
        assert_config(mine.get_config(), tk.get_config())


def test_discretization_adapt_matches(rng):
    for _ in range(TRIALS):
        n = int(rng.integers(1, 400))
        x = rng.normal(size=n) * rng.uniform(0.5, 20)
        if rng.random() < 0.4:
            x = np.round(x)  # many ties
        x = x.astype(np.float32)
        kw = {"num_bins": int(rng.integers(1, 12)), "epsilon": float(pick(rng, [0.01, 0.05, 0.1, 0.003]))}
        batch = int(rng.integers(1, 100))
        tk = L.Discretization(**kw)
        mine = twin(tk)
        tk.adapt(x, batch_size=batch)
        mine.adapt(x, batch_size=batch)
        probe = np.concatenate([x, boundary_probe(tk.bin_boundaries)]) if len(tk.bin_boundaries) else x
        np.testing.assert_array_equal(mine(probe).numpy(), tk_out(tk, probe),
                                      err_msg="Discretization(%r), boundaries %r" % (kw, list(tk.bin_boundaries)))
    with pytest.raises(tfc.InvalidArgumentError, match="Cannot adapt"):
        K.layer_from_config("Discretization", {"bin_boundaries": [0.0]}).adapt(np.zeros(3, np.float32))
    with pytest.raises(tfc.InvalidArgumentError, match="num_bins"):
        K.layer_from_config("Discretization", {"num_bins": -1})(np.zeros(3, np.float32))
    with pytest.raises(tfc.InvalidArgumentError, match="num_bins"):
        K.layer_from_config("Discretization", {"num_bins": 0}).adapt(np.zeros(3, np.float32))


def pick(rng, seq):
    return seq[int(rng.integers(0, len(seq)))]


# ---- image layers ---------------------------------------------------------------------------------------------

def test_rescaling_matches(rng):
    for _ in range(TRIALS):
        tk = L.Rescaling(scale=float(rng.uniform(-2, 2)), offset=float(rng.uniform(-1, 1)))
        mine = twin(tk)
        x = rng.integers(0, 256, size=(2, 3, 4, 3)).astype(pick(rng, [np.uint8, np.float32, np.int32]))
        assert_close(mine(x).numpy(), tk_out(tk, x))
        assert_config(mine.get_config(), tk.get_config())


def test_resizing_and_center_crop_match(rng):
    for _ in range(TRIALS):
        h, w = int(rng.integers(1, 12)), int(rng.integers(1, 12))
        shape = ((int(rng.integers(1, 3)),) if rng.random() < 0.7 else ()) + (int(rng.integers(1, 14)),
                                                                            int(rng.integers(1, 14)), 3)
        x = rng.uniform(0, 255, size=shape).astype(np.float32)
        layers = [L.CenterCrop(h, w), L.Resizing(h, w, interpolation=pick(rng, ["bilinear", "nearest"]),
                                                 crop_to_aspect_ratio=bool(rng.random() < 0.5))]
        for tk in layers:
            mine = twin(tk)
            try:
                want = tk_out(tk, x)
            except tf.errors.InvalidArgumentError:  # an aspect-ratio crop of zero size: both refuse it
                with pytest.raises(tfc.InvalidArgumentError, match="non-zero size"):
                    mine(x)
                continue
            assert_close(mine(x).numpy(), want, rtol=1e-5, atol=1e-5, msg="%s on %r" % (tk.get_config(), shape))
            assert_config(mine.get_config(), tk.get_config())
    with pytest.raises(tfc.InvalidArgumentError, match="interpolation"):
        K.layer_from_config("Resizing", {"height": 2, "width": 2, "interpolation": "bicubicx"})(np.zeros((1, 4, 4, 1), np.float32))
    with pytest.raises(tfc.InvalidArgumentError, match="zero size"):
        K.layer_from_config("CenterCrop", {"height": 2, "width": 2})(np.zeros((1, 0, 4, 1), np.float32))


# ---- TextVectorization ----------------------------------------------------------------------------------------

WORDS = ["The", "cat", "sat", "on", "a", "mat", "dog", "Ran", "éclair", "naïve", "字", "ok"]
PUNCT = list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def rand_text(rng, n_docs):
    docs = []
    for _ in range(n_docs):
        parts = []
        for _ in range(int(rng.integers(0, 9))):
            w = WORDS[int(rng.integers(0, len(WORDS)))]
            if rng.random() < 0.3:
                w += PUNCT[int(rng.integers(0, len(PUNCT)))]
            parts.append(w)
            parts.append(pick(rng, [" ", " ", "  ", "\t", "\n"]))
        docs.append("".join(parts))
    return np.array(docs, dtype=object)


def rand_tv_kwargs(rng):
    kw = {"standardize": pick(rng, ["lower_and_strip_punctuation", "lower", "strip_punctuation", None]),
          "split": pick(rng, ["whitespace", "whitespace", "character"])}
    if rng.random() < 0.4:
        kw["ngrams"] = pick(rng, [2, 3, (1, 2), (2,)])
    if rng.random() < 0.5:
        kw["max_tokens"] = int(rng.integers(3, 30))
    kw["output_mode"] = pick(rng, ["int", "int", "multi_hot", "count", "tf_idf"])
    if kw["output_mode"] == "int" and rng.random() < 0.5:
        kw["output_sequence_length"] = int(rng.integers(1, 12))
    if kw["output_mode"] != "int" and "max_tokens" in kw and rng.random() < 0.3:
        kw["pad_to_max_tokens"] = True
    return kw


def test_text_vectorization_adapt_matches(rng):
    for _ in range(TRIALS):
        kw = rand_tv_kwargs(rng)
        data = rand_text(rng, int(rng.integers(1, 60)))
        tk = L.TextVectorization(**kw)
        mine = twin(tk)
        tk.adapt(as_bytes(data), batch_size=int(rng.integers(1, 40)))
        mine.adapt(data, batch_size=int(rng.integers(1, 40)) if kw["output_mode"] != "tf_idf" else None)
        want_vocab = [v.decode() if isinstance(v, bytes) else str(v) for v in tk.get_vocabulary()]
        assert mine.get_vocabulary() == want_vocab, "TextVectorization(%r) on %r" % (kw, data.tolist())
        x = rand_text(rng, int(rng.integers(1, 6)))
        want = tk_out(tk, as_bytes(x))
        got = mine(x).numpy()
        assert got.dtype == want.dtype
        assert_close(got, want, msg="TextVectorization(%r) on %r" % (kw, x.tolist()))
        assert_config(mine.get_config(), tk.get_config())


def test_text_vectorization_vocabulary_and_errors(rng):
    vocab = ["cat", "sat", "the", "a"]
    tk = L.TextVectorization(vocabulary=vocab, output_sequence_length=5)
    mine = twin(tk)
    x = np.array(["The cat sat!", "a dog", ""], dtype=object)
    np.testing.assert_array_equal(mine(x).numpy(), tk_out(tk, as_bytes(x)))
    np.testing.assert_array_equal(mine(x[:, None]).numpy(), tk_out(tk, as_bytes(x[:, None])))
    assert_config(mine.get_config(), tk.get_config())
    with pytest.raises(tfc.InvalidArgumentError, match="repeated"):
        K.layer_from_config("TextVectorization", {"vocabulary": ["a", "a"]})
    with pytest.raises(tfc.InvalidArgumentError, match="rank must be 1"):
        mine(np.array([["a b", "c"]], dtype=object))
    with pytest.raises(tfc.InvalidArgumentError, match="string"):
        mine(np.array([1, 2]))
    with pytest.raises(tfc.InvalidArgumentError, match="output_sequence_length"):
        K.layer_from_config("TextVectorization", {"output_mode": "count", "output_sequence_length": 3})(x)


def test_text_model_predicts_and_trains(rng):
    """A tf_keras model taking raw strings (TextVectorization -> Embedding -> Flatten -> Dense) loads from JSON,
    predicts as tf_keras with the same vocabulary and weights, and trains with fit on raw strings."""
    texts = rand_text(rng, 48)
    seq = int(rng.integers(2, 7))
    tv = L.TextVectorization(max_tokens=30, output_sequence_length=seq)
    tv.adapt(as_bytes(texts))
    tm = tf_keras.Sequential([tf_keras.Input((1,), dtype="string"), tv, L.Embedding(30, 4), L.Flatten(),
                              L.Dense(1, activation="sigmoid")])
    mm = K.model_from_json(tm.to_json())
    mm.layers[0].set_vocabulary(tv.get_vocabulary())
    for i in (1, 3):  # Embedding and Dense (tf_keras also lists a lookup-table weight of the TextVectorization)
        mm.layers[i].set_weights(tm.layers[i].get_weights())
    x = rand_text(rng, 7)[:, None]
    got = mm.predict(x)
    assert_close(np.asarray(got), tm.predict(as_bytes(x), verbose=0), rtol=1e-4, atol=1e-6)
    y = (np.array([len(t) % 2 for t in texts], np.float32))[:, None]
    mm.compile(optimizer=("Adam", {"learning_rate": 0.05}), loss="binary_crossentropy")
    hist = mm.fit(texts[:, None], y, batch_size=8, epochs=8)
    losses = hist["loss"] if isinstance(hist, dict) else hist.history["loss"]
    assert losses[-1] < losses[0]


# ---- augmentation (Keras's RNG cannot be matched: statistical and structural checks, identity at inference) ----

def test_random_flip_statistics(rng):
    mode = pick(rng, ["horizontal", "vertical", "horizontal_and_vertical"])
    tk = L.RandomFlip(mode, seed=int(rng.integers(0, 1000)))
    mine = twin(tk)
    assert_config(mine.get_config(), tk.get_config())
    n = 4000
    x = np.broadcast_to(np.arange(4, dtype=np.float32).reshape(1, 2, 2, 1), (n, 2, 2, 1)).copy()
    np.testing.assert_array_equal(mine(x, training=False).numpy(), x)
    for out in (mine(x, training=True).numpy(), np.asarray(tk(x, training=True))):
        # each image is one of the flips the mode allows; the flip rates are 1/2 (4 sigma)
        tl = out[:, 0, 0, 0]
        h = np.isin(tl, [1, 3]).mean()
        v = np.isin(tl, [2, 3]).mean()
        assert abs(h - (0.5 if "horizontal" in mode else 0)) < 0.04 and abs(v - (0.5 if "vertical" in mode else 0)) < 0.04


def test_random_contrast_structure(rng):
    lower, upper = float(rng.uniform(0, 0.9)), float(rng.uniform(0, 2))
    tk = L.RandomContrast((lower, upper))
    mine = twin(tk)
    assert_config(mine.get_config(), tk.get_config())
    x = rng.uniform(50, 200, size=(3, 5, 4, 2)).astype(np.float32)
    np.testing.assert_array_equal(mine(x, training=False).numpy(), x)
    mean = x.mean(axis=(1, 2), keepdims=True)
    for out in (mine(x, training=True).numpy(), np.asarray(tk(x, training=True))):
        inside = (out > 0) & (out < 255)
        f = ((out - mean) / (x - mean))[inside]
        assert np.ptp(f) < 1e-3 and 1 - lower - 1e-4 <= f.mean() <= 1 + upper + 1e-4
    with pytest.raises(tfc.InvalidArgumentError, match="factor"):
        K.layer_from_config("RandomContrast", {"factor": -0.5})(x, training=True)
