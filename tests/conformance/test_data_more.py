"""tf.data conformance, second part (include/tfc/data_more.h): scan, reduce, take_while, unique, rebatch,
group_by_window, bucket_by_sequence_length, choose_from_datasets, counter, FixedLengthRecordDataset and CsvDataset
yield the same elements, cardinality and element_spec as tf.data on fresh random inputs; sample_from_datasets
keeps each input's order, draws by weight and honours stop_on_empty_dataset; bad CSV rows and fixed-length files
of the wrong size raise InvalidArgumentError / DataLossError naming the file, as in TensorFlow."""
import csv
import gzip
import io

import numpy as np
import pytest

from conftest import tf, tfc
from tfc import data as tfd
from test_data import assert_same_cardinality, assert_same_sequence, both

tfdata = tf.data


def assert_same_spec(a, b):
    assert a.element_spec == repr(b.element_spec)


def check(a, b):
    assert_same_sequence(a, b)
    assert_same_cardinality(a, b)
    assert_same_spec(a, b)


# ---- stateful transformations ------------------------------------------------------------------------------------
def test_scan_running_sum_and_tuple_state(rng):
    x = rng.integers(-50, 50, size=int(rng.integers(0, 20))).astype(np.int64)
    init = np.int64(rng.integers(-5, 5))
    a = tfd.Dataset.from_tensor_slices(x).scan(init, lambda s, e: (s.numpy() + e.numpy(), (s.numpy() * 2, e.numpy())))
    b = tfdata.Dataset.from_tensor_slices(x).scan(tf.constant(init), lambda s, e: (s + e, (s * 2, e)))
    if len(x):
        check(a, b)
    else:
        assert_same_sequence(a, b)
    v = rng.standard_normal((7, 3)).astype(np.float32)
    a = tfd.Dataset.from_tensor_slices(v).scan((np.zeros(3, np.float32), np.int32(0)),
                                               lambda s, e: ((s[0].numpy() + e.numpy(), s[1].numpy() + 1),
                                                             s[0].numpy() * e.numpy()))
    b = tfdata.Dataset.from_tensor_slices(v).scan((tf.zeros(3), tf.constant(0)),
                                                  lambda s, e: ((s[0] + e, s[1] + 1), s[0] * e))
    check(a, b)


def test_reduce(rng):
    x = rng.integers(-1000, 1000, size=int(rng.integers(0, 30))).astype(np.int64)
    got = tfd.Dataset.from_tensor_slices(x if len(x) else np.zeros(0, np.int64)).reduce(
        (np.int64(0), np.int64(1)), lambda s, e: (s[0].numpy() + e.numpy(), s[1].numpy() * 3 % 1000003))
    want = tfdata.Dataset.from_tensor_slices(x if len(x) else np.zeros(0, np.int64)).reduce(
        (tf.constant(0, tf.int64), tf.constant(1, tf.int64)), lambda s, e: (s[0] + e, s[1] * 3 % 1000003))
    assert got[0].numpy() == want[0].numpy() and got[1].numpy() == want[1].numpy()
    with pytest.raises(tfc.errors.InvalidArgumentError):
        tfd.Dataset.range(3).repeat().reduce(np.int64(0), lambda s, e: s)


def test_take_while_and_unique(rng):
    n = int(rng.integers(1, 40))
    x = rng.integers(0, 10, size=n).astype(np.int64)
    limit = int(rng.integers(0, 10))
    a, b = tfd.Dataset.from_tensor_slices(x).take_while(lambda e: e.numpy() < limit), \
        tfdata.Dataset.from_tensor_slices(x).take_while(lambda e: e < limit)
    check(a, b)
    for dt in (np.int32, np.int64):
        v = rng.integers(-5, 5, size=n).astype(dt)
        check(tfd.Dataset.from_tensor_slices(v).unique(), tfdata.Dataset.from_tensor_slices(v).unique())
    s = np.array([b"".join(rng.choice([b"a", b"b", b"\x00"], size=int(rng.integers(0, 3)))) for _ in range(n)],
                 dtype=object)
    check(tfd.Dataset.from_tensor_slices(s).unique(), tfdata.Dataset.from_tensor_slices(s).unique())
    with pytest.raises(tfc.errors.InvalidArgumentError, match="unique"):
        tfd.Dataset.from_tensor_slices(rng.standard_normal(3).astype(np.float32)).unique()


@pytest.mark.parametrize("drop_remainder", [False, True])
def test_rebatch(rng, drop_remainder):
    n, bs = int(rng.integers(0, 40)), int(rng.integers(1, 7))
    x = rng.standard_normal((n, 2)).astype(np.float32)
    y = rng.integers(0, 100, size=n).astype(np.int32)
    for sizes in (int(rng.integers(1, 9)), [int(s) for s in rng.integers(1, 5, size=int(rng.integers(1, 4)))]):
        a, b = both(lambda lib: lib.Dataset.from_tensor_slices((x, y)).batch(bs).rebatch(
            sizes, drop_remainder=drop_remainder))
        check(a, b)


def test_counter():
    for start, step, dt in [(0, 1, None), (5, -3, "int32"), (2, 0, "int64"), (-4, 2, "float32")]:
        a = tfd.Dataset.counter(start, step, dtype=dt)
        b = tfdata.Dataset.counter(start, step, dtype=getattr(tf, dt) if dt else tf.int64)
        assert_same_cardinality(a, b)
        assert_same_spec(a, b)
        assert_same_sequence(a.take(9), b.take(9))


# ---- grouping and combining -------------------------------------------------------------------------------------
def test_group_by_window(rng):
    n, k, w = int(rng.integers(0, 40)), int(rng.integers(1, 5)), int(rng.integers(1, 5))
    x = rng.integers(0, 1000, size=n).astype(np.int64)
    a = tfd.Dataset.from_tensor_slices(x).group_by_window(lambda e: e.numpy() % k, lambda key, win: win.batch(w + 1),
                                                          window_size=w)
    b = tfdata.Dataset.from_tensor_slices(x).group_by_window(lambda e: e % k, lambda key, win: win.batch(w + 1),
                                                             window_size=w)
    assert_same_sequence(a, b)
    assert_same_cardinality(a, b)
    if n:
        assert_same_spec(a, b)
    sizes = [int(v) for v in rng.integers(1, 5, size=k)]
    a = tfd.Dataset.from_tensor_slices(x).group_by_window(lambda e: e.numpy() % k, lambda key, win: win.batch(3),
                                                          window_size_func=lambda key: sizes[int(key.numpy())])
    b = tfdata.Dataset.from_tensor_slices(x).group_by_window(lambda e: e % k, lambda key, win: win.batch(3),
                                                             window_size_func=lambda key: tf.gather(tf.constant(sizes, tf.int64), key))
    assert_same_sequence(a, b)


def test_bucket_by_sequence_length(rng):
    n = int(rng.integers(1, 30))
    rows = [rng.integers(1, 100, size=int(rng.integers(1, 12))).astype(np.int32) for _ in range(n)]
    sig = tf.TensorSpec([None], tf.int32)
    bounds = sorted(set(int(v) for v in rng.integers(2, 12, size=int(rng.integers(1, 4)))))
    sizes = [int(v) for v in rng.integers(1, 4, size=len(bounds) + 1)]
    for kw in [{}, {"drop_remainder": True}, {"padding_values": np.int32(-1)}, {"pad_to_bucket_boundary": True}]:
        if kw.get("pad_to_bucket_boundary"):
            bounds_k = bounds + [13]
            sizes_k = sizes + [2]
        else:
            bounds_k, sizes_k = bounds, sizes
        a = tfd.Dataset.from_generator(lambda: iter(rows), output_signature=("int32", [None])) \
            .bucket_by_sequence_length(lambda e: e.shape[0], bounds_k, sizes_k, **kw)
        b = tfdata.Dataset.from_generator(lambda: iter(rows), output_signature=sig) \
            .bucket_by_sequence_length(lambda e: tf.shape(e)[0], bounds_k, sizes_k, **kw)
        check(a, b)


@pytest.mark.parametrize("stop", [True, False])
def test_choose_from_datasets(rng, stop):
    k = int(rng.integers(1, 4))
    data = [rng.integers(0, 100, size=int(rng.integers(0, 8))).astype(np.int64) + 1000 * i for i in range(k)]
    choice = rng.integers(0, k, size=int(rng.integers(0, 30))).astype(np.int64)
    a, b = both(lambda lib: lib.Dataset.choose_from_datasets(
        [lib.Dataset.from_tensor_slices(d) for d in data], lib.Dataset.from_tensor_slices(choice),
        stop_on_empty_dataset=stop))
    check(a, b)
    with pytest.raises(tfc.errors.InvalidArgumentError, match="Selector index out of range"):
        list(tfd.Dataset.choose_from_datasets([tfd.Dataset.range(3)],
                                              tfd.Dataset.from_tensor_slices(np.array([0, 5], np.int64))))


def test_sample_from_datasets(rng):
    sizes = [int(s) for s in rng.integers(20, 60, size=3)]
    ds = [tfd.Dataset.range(1000 * i, 1000 * i + s) for i, s in enumerate(sizes)]
    a = tfd.Dataset.sample_from_datasets(ds, weights=[0.2, 0.3, 0.5], seed=int(rng.integers(1 << 30)))
    b = tfdata.Dataset.sample_from_datasets([tfdata.Dataset.range(1000 * i, 1000 * i + s)
                                             for i, s in enumerate(sizes)], weights=[0.2, 0.3, 0.5], seed=1)
    assert_same_cardinality(a, b)
    assert_same_spec(a, b)
    got = [int(v) for v in a.as_numpy_iterator()]
    assert sorted(got) == sorted(int(v) for v in b.as_numpy_iterator())  # every element, once
    for i, s in enumerate(sizes):
        assert [v for v in got if v // 1000 == i] == list(range(1000 * i, 1000 * i + s))  # order kept
    assert got == [int(v) for v in a.as_numpy_iterator()]  # a seed reproduces the choices
    # weights: the first 60 draws of infinite inputs follow them (binomial bounds, p = 0.9 vs 0.1)
    inf = tfd.Dataset.sample_from_datasets([tfd.Dataset.from_tensors(np.int64(0)).repeat(),
                                            tfd.Dataset.from_tensors(np.int64(1)).repeat()], weights=[0.9, 0.1])
    assert inf.cardinality() == tfd.INFINITE_CARDINALITY
    ones = sum(int(v) for v in inf.take(400).as_numpy_iterator())
    assert 10 <= ones <= 80
    stop = tfd.Dataset.sample_from_datasets([tfd.Dataset.range(3), tfd.Dataset.range(10, 1000)],
                                            stop_on_empty_dataset=True, seed=3)
    got = [int(v) for v in stop.as_numpy_iterator()]
    assert [v for v in got if v < 3] == [0, 1, 2] and len(got) < 990


# ---- file sources ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("comp", [None, "GZIP"])
def test_fixed_length_records(rng, tmp_path, comp):
    rec, head, foot = int(rng.integers(1, 9)), int(rng.integers(0, 5)), int(rng.integers(0, 5))
    files = []
    for i in range(int(rng.integers(1, 4))):
        body = rng.integers(0, 256, size=(head + rec * int(rng.integers(0, 10)) + foot)).astype(np.uint8).tobytes()
        p = tmp_path / ("f%d.bin" % i)
        p.write_bytes(gzip.compress(body) if comp else body)
        files.append(str(p))
    for npr in (None, 2):
        a, b = both(lambda lib: lib.FixedLengthRecordDataset(files, rec, header_bytes=head, footer_bytes=foot,
                                                             compression_type=comp, num_parallel_reads=npr))
        check(a, b)
    rec = max(rec, 2)  # a body of rec + 1 bytes is not a multiple of rec
    bad = tmp_path / "bad.bin"
    bad.write_bytes(gzip.compress(b"x" * (head + rec + 1 + foot)) if comp else b"x" * (head + rec + 1 + foot))
    err = tfc.errors.DataLossError if comp else tfc.errors.InvalidArgumentError
    with pytest.raises(err, match="bad.bin.*not an exact multiple of the record length"):
        list(tfd.FixedLengthRecordDataset(str(bad), rec, header_bytes=head, footer_bytes=foot,
                                          compression_type=comp).as_numpy_iterator())
    with pytest.raises(tf.errors.InvalidArgumentError if not comp else tf.errors.DataLossError):
        list(tfdata.FixedLengthRecordDataset(str(bad), rec, header_bytes=head, footer_bytes=foot,
                                             compression_type=comp).take(1 if not comp else 3).as_numpy_iterator())


def _random_field(rng, kind, cr):
    if kind == "int":
        return str(int(rng.integers(-10 ** 6, 10 ** 6)))
    if kind == "float":
        return repr(float(np.float32(rng.standard_normal() * 100)))
    alphabet = list("abc xyz,\"\n;" + ("\r" if cr else "")) + ["\u00e9"]  # csv quotes "\r" only with "\r\n" lines
    return "".join(rng.choice(alphabet, size=int(rng.integers(0, 8))))


@pytest.mark.parametrize("comp", [None, "GZIP"])
def test_csv_dataset(rng, tmp_path, comp):
    kinds = list(rng.choice(["int", "float", "str"], size=int(rng.integers(1, 6))))
    rows = []
    crlf = rng.random() < 0.5
    for _ in range(int(rng.integers(0, 25))):
        row = [_random_field(rng, k, crlf) for k in kinds]
        for j in range(len(row)):  # some missing fields take the default
            if rng.random() < 0.15:
                row[j] = ""
        rows.append(row)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n" if crlf else "\n").writerows([["h%d" % i for i in
                                                                                       range(len(kinds))]] + rows)
    text = buf.getvalue().encode()
    p = tmp_path / "x.csv"
    p.write_bytes(gzip.compress(text) if comp else text)
    np_dt = {"int": np.int64, "float": np.float32, "str": object}
    defaults = [np.array([7 if k == "int" else (1.5 if k == "float" else "dflt")], dtype=np_dt[k]) for k in kinds]
    tf_defaults = [tf.constant(d) for d in defaults]
    a = tfd.CsvDataset(str(p), defaults, compression_type=comp, header=True)
    b = tfdata.experimental.CsvDataset(str(p), tf_defaults, compression_type=comp or "", header=True)
    check(a, b)
    sel = sorted(set(int(v) for v in rng.integers(0, len(kinds), size=int(rng.integers(1, len(kinds) + 1)))))
    a = tfd.CsvDataset(str(p), [defaults[i] for i in sel], compression_type=comp, header=True, select_cols=sel)
    b = tfdata.experimental.CsvDataset(str(p), [tf_defaults[i] for i in sel], compression_type=comp or "",
                                       header=True, select_cols=sel)
    check(a, b)


def test_csv_delims_na_and_required(tmp_path):
    p = tmp_path / "y.csv"
    p.write_text("1;NA;x\n2;3;\n")
    a = tfd.CsvDataset(str(p), [np.array([0], np.int32), np.array([-1], np.int32), np.array(["?"], dtype=object)],
                       field_delim=";", na_value="NA")
    b = tfdata.experimental.CsvDataset(str(p), [tf.constant([0]), tf.constant([-1]), tf.constant(["?"])],
                                       field_delim=";", na_value="NA")
    check(a, b)
    q = tmp_path / "z.csv"
    q.write_text('1,"a ""b"" c"\n,x\n2\n3,"open\n')
    a = tfd.CsvDataset(str(q), [tf.int32, tf.string])
    b = tfdata.experimental.CsvDataset(str(q), [tf.int32, tf.string])
    got, want = [], []
    for ds, out, errs in ((a, got, (tfc.errors.InvalidArgumentError,)), (b, want, (tf.errors.InvalidArgumentError,))):
        it = iter(ds)
        for _ in range(6):
            try:
                e = next(it)
                out.append(tuple(v.numpy() for v in e))
            except StopIteration:
                break
            except errs as ex:
                out.append("error")
                if ds is a:
                    assert "z.csv" in str(ex)
    assert got == want
    assert got[0] == (1, b'a "b" c') and got[1:] == ["error"] * 3


def test_csv_truncated_row_names_the_file(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("1,2,3\n4,5\n6,7,8\n")
    it = iter(tfd.CsvDataset(str(p), [tf.int64] * 3))
    assert [v.numpy() for v in next(it)] == [1, 2, 3]
    with pytest.raises(tfc.errors.InvalidArgumentError, match=r"t\.csv: Expect 3 fields but have 2 in record 1"):
        next(it)
    assert [v.numpy() for v in next(it)] == [6, 7, 8]
