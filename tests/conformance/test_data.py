"""tf.data conformance: the same deterministic pipelines built with tfc.data (python/tfc/data.py over
include/tfc/data.h) and with tf.data yield identical element sequences (values, dtypes, shapes, structures) on
fresh random data: batch with and without drop_remainder on sizes that do not divide, padded_batch with ragged
lengths, repeat/take/skip chains, interleave block orders (sequential and parallel), shard then batch, unbatch,
enumerate, zip, concatenate, map/filter, flat_map, generators, cache, cardinality and element_spec. shuffle is
checked as a permutation within the buffer's locality limit, reproducible for a seed. TFRecord files written by
TensorFlow (plain, GZIP, ZLIB) read identically in tfc, and tfc-written ones in TensorFlow; corrupt records
raise DataLossError in both."""
import os

import numpy as np
import pytest

from conftest import tf, tfc
from tfc import data as tfd

tfdata = tf.data


# ---- helpers -------------------------------------------------------------------------------------------------
def _np(x):
    if isinstance(x, bytes):  # not np.asarray: its 'S' dtype drops trailing NULs
        return np.array(x, dtype=object)
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    if isinstance(x, tuple):
        return tuple(_np(v) for v in x)
    return np.asarray(x)


def _assert_same_elem(a, b, where):
    assert type(a) is type(b), "%s: structure %r vs %r" % (where, a, b)
    if isinstance(a, dict):
        assert sorted(a) == sorted(b), "%s: keys %s vs %s" % (where, sorted(a), sorted(b))
        for k in a:
            _assert_same_elem(a[k], b[k], "%s[%r]" % (where, k))
    elif isinstance(a, tuple):
        assert len(a) == len(b), "%s: tuple lengths %d vs %d" % (where, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same_elem(x, y, "%s[%d]" % (where, i))
    else:
        assert a.shape == b.shape, "%s: shape %s vs %s" % (where, a.shape, b.shape)
        if a.dtype == object or b.dtype == object:
            assert a.tolist() == b.tolist(), "%s: %r vs %r" % (where, a, b)
        else:
            assert a.dtype == b.dtype, "%s: dtype %s vs %s" % (where, a.dtype, b.dtype)
            np.testing.assert_array_equal(a, b, err_msg=where)


def assert_same_sequence(tfc_ds, tf_ds):
    got = [_np(e) for e in tfc_ds.as_numpy_iterator()]
    want = [_np(e) for e in tf_ds.as_numpy_iterator()]
    assert len(got) == len(want), "tfc gave %d elements, TensorFlow %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        _assert_same_elem(g, w, "element %d" % i)
    return got


def assert_same_cardinality(tfc_ds, tf_ds):
    assert tfc_ds.cardinality() == int(tf_ds.cardinality().numpy())


def both(build):
    """build(lib) with lib = tfd or tf.data: returns (tfc dataset, TensorFlow dataset)."""
    return build(tfd), build(tfdata)


# ---- sources and batching --------------------------------------------------------------------------------------
def test_from_tensor_slices_structures(rng):
    n = int(rng.integers(0, 12))
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = rng.integers(-100, 100, size=n).astype(np.int64)
    s = np.array([bytes(rng.integers(97, 123, size=int(rng.integers(0, 30))).astype(np.uint8)) for _ in range(n)],
                 dtype=object)
    for value in [(x, y), {"x": x, "label": y, "name": s}, (x, {"b": y, "a": s}), x]:
        a, b = both(lambda lib: lib.Dataset.from_tensor_slices(value))
        assert_same_sequence(a, b)
        assert_same_cardinality(a, b)
    a, b = both(lambda lib: lib.Dataset.from_tensors((x, y)))
    assert_same_sequence(a, b)


@pytest.mark.parametrize("drop_remainder", [False, True])
@pytest.mark.parametrize("parallel", [False, True])
def test_batch_sizes_that_do_not_divide(rng, drop_remainder, parallel):
    for _ in range(5):
        n = int(rng.integers(0, 40))
        bs = int(rng.integers(1, 9))
        x = rng.standard_normal((n, 2, 3)).astype(np.float32)
        y = rng.integers(0, 10, size=n).astype(np.int32)
        npc = int(rng.integers(1, 4)) if parallel else None

        def build(lib):
            return lib.Dataset.from_tensor_slices((x, y)).batch(bs, drop_remainder=drop_remainder,
                                                                num_parallel_calls=npc)
        a, b = both(build)
        assert_same_sequence(a, b)
        assert_same_cardinality(a, b)
        assert a.element_spec == repr(b.element_spec)


def test_padded_batch_ragged(rng):
    for _ in range(4):
        lens = rng.integers(0, 7, size=int(rng.integers(1, 15))).astype(np.int64)
        bs = int(rng.integers(1, 5))
        drop = bool(rng.integers(0, 2))
        pad_value = int(rng.integers(-9, 0))
        fixed = None if rng.random() < 0.5 else int(lens.max() + rng.integers(0, 3))
        a = tfd.Dataset.from_tensor_slices(lens).map(lambda v: np.full(int(v), int(v), np.int64))
        a = a.padded_batch(bs, padded_shapes=None if fixed is None else [fixed], padding_values=np.int64(pad_value),
                           drop_remainder=drop)
        b = tfdata.Dataset.from_tensor_slices(lens).map(lambda v: tf.fill([v], v))
        b = b.padded_batch(bs, padded_shapes=None if fixed is None else [fixed],
                           padding_values=tf.constant(pad_value, tf.int64), drop_remainder=drop)
        assert_same_sequence(a, b)
        assert_same_cardinality(a, b)


def test_padded_batch_2d_and_strings(rng):
    rows = rng.integers(1, 4, size=6)
    cols = rng.integers(1, 4, size=6)

    def gen():
        for r, c in zip(rows, cols):
            yield (np.full((r, c), r * 10 + c, np.float32), np.array([b"s%d" % k for k in range(c)], dtype=object))

    sig_tf = (tf.TensorSpec([None, None], tf.float32), tf.TensorSpec([None], tf.string))
    a = tfd.Dataset.from_generator(gen, output_signature=sig_tf).padded_batch(4)
    b = tfdata.Dataset.from_generator(gen, output_signature=sig_tf).padded_batch(4)
    assert_same_sequence(a, b)


def test_unbatch_enumerate_zip_concatenate(rng):
    n = int(rng.integers(1, 30))
    x = rng.integers(0, 1000, size=n).astype(np.int64)
    bs = int(rng.integers(1, 6))
    a, b = both(lambda lib: lib.Dataset.from_tensor_slices(x).batch(bs).unbatch())
    assert_same_sequence(a, b)
    a, b = both(lambda lib: lib.Dataset.from_tensor_slices(x).enumerate(start=5))
    assert_same_sequence(a, b)
    m = int(rng.integers(0, 40))
    a, b = both(lambda lib: lib.Dataset.zip((lib.Dataset.range(m), lib.Dataset.from_tensor_slices(x))))
    assert_same_sequence(a, b)
    assert_same_cardinality(a, b)
    a, b = both(lambda lib: lib.Dataset.range(3).concatenate(lib.Dataset.from_tensor_slices(x)))
    assert_same_sequence(a, b)
    assert_same_cardinality(a, b)


# ---- counting transformations -------------------------------------------------------------------------------------
def test_repeat_take_skip_chains(rng):
    for _ in range(12):
        n = int(rng.integers(0, 15))
        ops = [(str(rng.choice(["repeat", "take", "skip", "shard"])), int(rng.integers(-1, 5)))
               for _ in range(int(rng.integers(1, 4)))]
        idx = int(rng.integers(0, 5))
        bs = int(rng.integers(0, 4))

        def build(lib):
            ds = lib.Dataset.range(n)
            for op, k in ops:
                if op == "repeat":  # repeat() forever is in test_infinite_cardinality (skip(-1) would not end)
                    ds = ds.repeat(max(k, 0))
                elif op == "take":
                    ds = ds.take(k)
                elif op == "skip":
                    ds = ds.skip(k)
                else:
                    ds = ds.shard(max(k, 1), idx % max(k, 1))
            return ds.take(40).batch(bs) if bs else ds.take(40)
        a, b = both(build)
        assert_same_sequence(a, b)
        assert_same_cardinality(a, b)


def test_shard_then_batch(rng):
    n = int(rng.integers(0, 50))
    k = int(rng.integers(1, 6))
    idx = int(rng.integers(0, k))
    bs = int(rng.integers(1, 5))
    a, b = both(lambda lib: lib.Dataset.range(n).shard(k, idx).batch(bs))
    assert_same_sequence(a, b)
    assert_same_cardinality(a, b)


def test_infinite_cardinality():
    a, b = both(lambda lib: lib.Dataset.range(3).repeat().take(7))
    assert_same_sequence(a, b)
    assert_same_cardinality(a, b)
    a, b = both(lambda lib: lib.Dataset.range(3).repeat().batch(2))
    assert_same_cardinality(a, b)
    assert a.cardinality() == tfd.INFINITE_CARDINALITY


# ---- functions -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("npc", [None, 1, 3, tfd.AUTOTUNE])
def test_map_filter_tuples(rng, npc):
    n = int(rng.integers(0, 40))
    x = rng.integers(-50, 50, size=n).astype(np.int64)
    y = rng.standard_normal(n).astype(np.float32)
    a = tfd.Dataset.from_tensor_slices((x, y)).map(
        lambda u, v: (u.numpy() * 3, {"v": v.numpy() * 2, "s": u.numpy() + 1}), num_parallel_calls=npc)
    a = a.filter(lambda u, d: u.numpy() % 2 == 0)
    b = tfdata.Dataset.from_tensor_slices((x, y)).map(lambda u, v: (u * 3, {"v": v * 2, "s": u + 1}),
                                                      num_parallel_calls=npc)
    b = b.filter(lambda u, d: u % 2 == 0)
    assert_same_sequence(a, b)


def test_interleave_block_orders(rng):
    for _ in range(6):
        n = int(rng.integers(1, 9))
        lens = rng.integers(0, 7, size=n).astype(np.int64)
        cycle = int(rng.integers(1, 5))
        block = int(rng.integers(1, 5))
        lens_t = tf.constant(lens)
        b = tfdata.Dataset.range(n).interleave(
            lambda i: tfdata.Dataset.range(i * 100, i * 100 + tf.gather(lens_t, i)), cycle_length=cycle,
            block_length=block)
        for npc in [None, min(2, cycle), tfd.AUTOTUNE]:
            a = tfd.Dataset.range(n).interleave(
                lambda i: tfd.Dataset.range(int(i) * 100, int(i) * 100 + int(lens[int(i)])), cycle_length=cycle,
                block_length=block, num_parallel_calls=npc)
            assert_same_sequence(a, b)
        # TensorFlow's parallel interleave keeps the same order
        b2 = tfdata.Dataset.range(n).interleave(
            lambda i: tfdata.Dataset.range(i * 100, i * 100 + tf.gather(lens_t, i)), cycle_length=cycle,
            block_length=block, num_parallel_calls=min(2, cycle), deterministic=True)
        assert_same_sequence(a, b2)


def test_interleave_lengths_as_tensorflow(rng):
    # 0 (and negatives other than AUTOTUNE) is refused by both at construction, with TensorFlow's message
    c = int(rng.integers(-9, 1))
    c = -2 if c == -1 else c
    for kw, msg in [(dict(cycle_length=c), "cycle_length must be greater than zero."),
                    (dict(cycle_length=2, block_length=int(rng.integers(-9, 1))),
                     "block_length must be greater than zero.")]:
        with pytest.raises(tf.errors.InvalidArgumentError, match=msg):
            tfdata.Dataset.range(3).interleave(lambda i: tfdata.Dataset.range(2), **kw)
        with pytest.raises(tfc.InvalidArgumentError, match=msg):
            tfd.Dataset.range(3).interleave(lambda i: tfd.Dataset.range(2), **kw)
    # AUTOTUNE: a cycle of one slot per core; the same elements either way
    b = tfdata.Dataset.range(3).interleave(lambda i: tfdata.Dataset.range(i, i + 2), cycle_length=tfdata.AUTOTUNE)
    a = tfd.Dataset.range(3).interleave(lambda i: tfd.Dataset.range(int(i), int(i) + 2), cycle_length=tfd.AUTOTUNE)
    assert sorted(int(x) for x in a.as_numpy_iterator()) == sorted(int(x) for x in b.as_numpy_iterator())


def test_flat_map(rng):
    lens = rng.integers(0, 5, size=int(rng.integers(0, 8))).astype(np.int64)
    lens_t = tf.constant(lens)
    a = tfd.Dataset.range(len(lens)).flat_map(lambda i: tfd.Dataset.range(int(lens[int(i)])).map(lambda v: v * 2))
    b = tfdata.Dataset.range(len(lens)).flat_map(lambda i: tfdata.Dataset.range(tf.gather(lens_t, i))
                                                 .map(lambda v: v * 2))
    assert_same_sequence(a, b)


def test_from_generator(rng):
    vals = rng.integers(0, 100, size=int(rng.integers(0, 20)))

    def gen():
        for v in vals:
            yield (np.int64(v), np.arange(v % 4, dtype=np.float32))

    sig = (tf.TensorSpec([], tf.int64), tf.TensorSpec([None], tf.float32))
    a = tfd.Dataset.from_generator(gen, output_signature=sig)
    b = tfdata.Dataset.from_generator(gen, output_signature=sig)
    assert_same_sequence(a, b)
    assert a.element_spec == repr(b.element_spec)


def test_generator_failure_mid_epoch():
    def gen():
        yield np.int64(1)
        yield np.int64(2)
        raise RuntimeError("broken source")

    ds = tfd.Dataset.from_generator(gen, output_signature=tf.TensorSpec([], tf.int64))
    it = iter(ds)
    assert int(next(it)) == 1 and int(next(it)) == 2
    with pytest.raises(tfc.OpError, match="broken source"):
        next(it)
    assert list(ds.ignore_errors().as_numpy_iterator()) == [1, 2]


# ---- shuffle -------------------------------------------------------------------------------------------------------
def test_shuffle_permutation_locality(rng):
    n = int(rng.integers(50, 400))
    buf = int(rng.integers(1, 40))
    seed = int(rng.integers(0, 2**31))
    ds = tfd.Dataset.range(n).shuffle(buf, seed=seed)
    e1 = list(ds.as_numpy_iterator())
    e2 = list(ds.as_numpy_iterator())
    for order in (e1, e2):
        assert sorted(order) == list(range(n))
        assert all(v < i + buf for i, v in enumerate(order)), "an element came from beyond the buffer"
    assert buf == 1 or e1 != e2  # reshuffled each iteration
    again = tfd.Dataset.range(n).shuffle(buf, seed=seed)
    assert list(again.as_numpy_iterator()) == e1 and list(again.as_numpy_iterator()) == e2
    fixed = tfd.Dataset.range(n).shuffle(buf, seed=seed, reshuffle_each_iteration=False)
    assert list(fixed.as_numpy_iterator()) == list(fixed.as_numpy_iterator())
    # TensorFlow's shuffle obeys the same locality limit (so the property is the right one)
    t = list(tfdata.Dataset.range(n).shuffle(buf, seed=seed).as_numpy_iterator())
    assert sorted(t) == list(range(n)) and all(v < i + buf for i, v in enumerate(t))


# ---- cache and options -----------------------------------------------------------------------------------------------
def test_cache_file(rng, tmp_path):
    x = rng.standard_normal((17, 2)).astype(np.float32)
    calls = []

    def f(v):
        calls.append(1)
        return v * 2

    path = str(tmp_path / "c")
    a = tfd.Dataset.from_tensor_slices(x).map(f).cache(path).repeat(3)
    b = tfdata.Dataset.from_tensor_slices(x).map(lambda v: v * 2).cache(str(tmp_path / "tf")).repeat(3)
    n0 = len(calls)
    assert_same_sequence(a, b)
    assert len(calls) - n0 == 17  # the second and third epochs read the file
    assert os.path.exists(path + ".tfcache")


def test_options_nondeterministic(rng):
    o = tfd.Options()
    o.deterministic = False
    ds = tfd.Dataset.range(100).map(lambda v: v.numpy() + 1, num_parallel_calls=4).with_options(o)
    assert sorted(ds.as_numpy_iterator()) == list(range(1, 101))
    assert ds.options().deterministic is False


# ---- files ------------------------------------------------------------------------------------------------------------
def _random_records(rng):
    return [bytes(rng.integers(0, 256, size=int(rng.integers(0, 300))).astype(np.uint8))
            for _ in range(int(rng.integers(0, 60)))]


@pytest.mark.parametrize("comp", ["", "GZIP", "ZLIB"])
def test_tfrecord_written_by_tensorflow(rng, tmp_path, comp):
    files, all_recs = [], []
    for f in range(3):
        recs = _random_records(rng)
        p = str(tmp_path / ("tf-%d.tfrecord" % f))
        with tf.io.TFRecordWriter(p, options=comp or None) as w:
            for r in recs:
                w.write(r)
        files.append(p)
        all_recs.append(recs)
    a = tfd.TFRecordDataset(files, compression_type=comp, buffer_size=int(rng.integers(1, 5000)))
    b = tfdata.TFRecordDataset(files, compression_type=comp)
    got = assert_same_sequence(a, b)
    assert [g.item() for g in got] == [r for recs in all_recs for r in recs]
    for npr in [2, 3]:
        a = tfd.TFRecordDataset(files, compression_type=comp, num_parallel_reads=npr)
        b = tfdata.TFRecordDataset(files, compression_type=comp, num_parallel_reads=npr)
        assert_same_sequence(a, b)


@pytest.mark.parametrize("comp", ["", "GZIP", "ZLIB"])
def test_tfrecord_written_by_tfc(rng, tmp_path, comp):
    recs = _random_records(rng)
    p = str(tmp_path / "tfc.tfrecord")
    with tfd.TFRecordWriter(p, comp) as w:
        for r in recs:
            w.write(r)
    assert [r.numpy() for r in tfdata.TFRecordDataset(p, compression_type=comp)] == recs
    assert list(tfd.tf_record_iterator(p, comp)) == recs
    if not comp:  # uncompressed files are byte-identical
        q = str(tmp_path / "tf.tfrecord")
        with tf.io.TFRecordWriter(q) as w:
            for r in recs:
                w.write(r)
        assert open(p, "rb").read() == open(q, "rb").read()


def test_tfrecord_corruption(rng, tmp_path):
    recs = [bytes(rng.integers(0, 256, size=40).astype(np.uint8)) for _ in range(6)]
    p = str(tmp_path / "bad.tfrecord")
    with tf.io.TFRecordWriter(p) as w:
        for r in recs:
            w.write(r)
    data = bytearray(open(p, "rb").read())
    data[3 * 56 + 20] ^= 0xFF  # payload byte of record 3
    open(p, "wb").write(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        list(tfdata.TFRecordDataset(p))
    it = iter(tfd.TFRecordDataset(p))
    got = [next(it).numpy() for _ in range(3)]
    assert got == recs[:3]
    with pytest.raises(tfc.DataLossError, match=r"bad\.tfrecord: record 3: data CRC mismatch"):
        next(it)
    open(p, "wb").write(bytes(data[:4 * 56 + 7]))  # truncated inside record 4
    with pytest.raises(tfc.DataLossError, match=r"record 3"):
        list(tfd.TFRecordDataset(p))


def test_text_lines_and_list_files(rng, tmp_path):
    for f in range(3):
        lines = [bytes(rng.integers(97, 123, size=int(rng.integers(0, 20))).astype(np.uint8)).decode()
                 for _ in range(int(rng.integers(0, 10)))]
        sep = "\r\n" if f == 1 else "\n"
        text = sep.join(lines) + (sep if rng.random() < 0.5 else "")
        (tmp_path / ("t%d.txt" % f)).write_text(text)
    pattern = str(tmp_path / "*.txt")
    a = tfd.Dataset.list_files(pattern, shuffle=False)
    b = tfdata.Dataset.list_files(pattern, shuffle=False)
    assert_same_sequence(a, b)
    assert_same_sequence(tfd.TextLineDataset(a), tfdata.TextLineDataset(b))
    assert_same_sequence(tfd.TextLineDataset(a, buffer_size=7, num_parallel_reads=2),
                         tfdata.TextLineDataset(b, num_parallel_reads=2))
    shuffled = list(tfd.Dataset.list_files(pattern, seed=1).as_numpy_iterator())
    assert sorted(shuffled) == sorted(b.as_numpy_iterator())
    with pytest.raises(tfc.InvalidArgumentError, match="No files matched pattern"):
        tfd.Dataset.list_files(str(tmp_path / "*.none"))
