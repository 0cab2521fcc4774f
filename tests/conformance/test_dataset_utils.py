"""Keras's dataset utilities: tfc_image_dataset_from_directory / tfc_text_dataset_from_directory (C, through ctypes)
against tf_keras.utils.image_dataset_from_directory / text_dataset_from_directory, on a directory tree made fresh
for each test: random class folders, nested folders whose names sort differently as paths than depth-first
("a", "a-b", "a.b", "a/z"), file names with mixed case, digits and non-ASCII letters, image files under every
allowed extension in mixed case (PNG contents, which both decoders recognise by their bytes), non-image files,
hidden folders and top-level files.

Checked: class_names, file_paths (Keras's attribute) and the elements themselves in the unshuffled order, for
every label_mode, color_mode, both interpolations, crop_to_aspect_ratio, batched and not; with a seed, the file
order after Keras's numpy shuffle and the validation split exactly, and the multiset of (element, label) pairs;
the printed messages; the errors both raise."""
import ctypes
import os
import zlib

import numpy as np
import pytest

from conftest import tf  # noqa: F401  (sets up TensorFlow's logging before tf_keras loads)
import tfc
from tfc import data as tfd
from tfc._lib import Status, check, lib

tf_keras = pytest.importorskip("tf_keras")

_CP = ctypes.c_char_p
_I64 = ctypes.c_int64
_I = ctypes.c_int


class ImageOpts(ctypes.Structure):
    _fields_ = [("labels", _CP), ("label_values", ctypes.POINTER(ctypes.c_int32)), ("num_label_values", _I64),
                ("label_mode", _CP), ("class_names", ctypes.POINTER(_CP)), ("num_class_names", _I),
                ("color_mode", _CP), ("batch_size", _I64), ("image_size", _I64 * 2), ("shuffle", _I), ("seed", _I64),
                ("has_seed", ctypes.c_bool), ("validation_split", ctypes.c_double), ("subset", _CP),
                ("interpolation", _CP), ("follow_links", _I), ("crop_to_aspect_ratio", _I), ("verbose", _I)]


class TextOpts(ctypes.Structure):
    _fields_ = [("labels", _CP), ("label_values", ctypes.POINTER(ctypes.c_int32)), ("num_label_values", _I64),
                ("label_mode", _CP), ("class_names", ctypes.POINTER(_CP)), ("num_class_names", _I),
                ("batch_size", _I64), ("max_length", _I64), ("shuffle", _I), ("seed", _I64),
                ("has_seed", ctypes.c_bool), ("validation_split", ctypes.c_double), ("subset", _CP),
                ("follow_links", _I), ("verbose", _I)]


class Info(ctypes.Structure):
    _fields_ = [("class_names", ctypes.POINTER(_CP)), ("num_classes", _I), ("file_paths", ctypes.POINTER(_CP)),
                ("labels", ctypes.POINTER(ctypes.c_int32)), ("num_files", _I64), ("validation", ctypes.c_void_p),
                ("validation_file_paths", ctypes.POINTER(_CP)), ("validation_labels", ctypes.POINTER(ctypes.c_int32)),
                ("num_validation_files", _I64)]


for _name, _opts in (("tfc_image_dataset_from_directory", ImageOpts), ("tfc_text_dataset_from_directory", TextOpts)):
    getattr(lib, _name).restype = ctypes.c_void_p
    getattr(lib, _name).argtypes = [_CP, ctypes.POINTER(_opts), ctypes.POINTER(Info), ctypes.POINTER(Status)]
lib.tfc_directory_dataset_info_free.restype = None
lib.tfc_directory_dataset_info_free.argtypes = [ctypes.POINTER(Info)]

UNBATCHED = -1


def _flag(v):
    return 0 if v is None else (1 if v else -1)


def tfc_from_directory(kind, directory, labels="inferred", label_mode="int", class_names=None, batch_size=32,
                       shuffle=True, seed=None, validation_split=None, subset=None, **kw):
    """Calls the C utility with Keras's keyword arguments; returns (Dataset, class_names, file_paths)."""
    image = kind == "image"
    o = ImageOpts() if image else TextOpts()
    keep = []
    if isinstance(labels, (list, tuple)):
        arr = (ctypes.c_int32 * len(labels))(*labels)
        keep.append(arr)
        o.label_values, o.num_label_values = arr, len(labels)
    else:
        o.labels = b"none" if labels is None else labels.encode()
    o.label_mode = b"none" if label_mode is None else label_mode.encode()
    if class_names is not None:
        names = (_CP * len(class_names))(*[c.encode() for c in class_names])
        keep.append(names)
        o.class_names, o.num_class_names = names, len(class_names)
    o.batch_size = UNBATCHED if batch_size is None else batch_size
    o.shuffle = _flag(shuffle)
    if seed is not None:
        o.seed, o.has_seed = seed, True
    o.validation_split = validation_split or 0.0
    o.subset = subset.encode() if subset else None
    if image:
        o.color_mode = kw.get("color_mode", "rgb").encode()
        o.image_size[0], o.image_size[1] = kw.get("image_size", (256, 256))
        o.interpolation = kw.get("interpolation", "bilinear").encode()
        o.crop_to_aspect_ratio = _flag(kw.get("crop_to_aspect_ratio", False))
    else:
        o.max_length = kw.get("max_length") or 0
    o.follow_links = _flag(kw.get("follow_links", False))
    info, st = Info(), Status()
    fn = lib.tfc_image_dataset_from_directory if image else lib.tfc_text_dataset_from_directory
    h = fn(directory.encode(), ctypes.byref(o), ctypes.byref(info), ctypes.byref(st))
    if not h:
        check(st)
        raise AssertionError("NULL dataset without an error")
    try:
        names = [info.class_names[i].decode() for i in range(info.num_classes)]
        paths = [info.file_paths[i].decode() for i in range(info.num_files)]
        val = None
        if info.validation:
            val = (tfd.Dataset(info.validation),
                   [info.validation_file_paths[i].decode() for i in range(info.num_validation_files)])
            info.validation = None  # the Dataset owns that reference now
    finally:
        lib.tfc_directory_dataset_info_free(ctypes.byref(info))
    return tfd.Dataset(h), names, paths, val


# ---- the tree ------------------------------------------------------------------------------------------------------

def _png(h, w, c, px):
    raw = b"".join(b"\x00" + px[y].tobytes() for y in range(h))

    def chunk(t, d):
        return len(d).to_bytes(4, "big") + t + d + zlib.crc32(t + d).to_bytes(4, "big")
    ctype = {1: 0, 3: 2, 4: 6}[c]
    ihdr = w.to_bytes(4, "big") + h.to_bytes(4, "big") + bytes([8, ctype, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def _bmp(px):
    """A 24-bit bottom-up BMP of RGB pixels px [h, w, 3]."""
    h, w, _ = px.shape
    stride = (w * 3 + 3) // 4 * 4
    rows = b"".join(px[y, :, ::-1].tobytes().ljust(stride, b"\0") for y in range(h - 1, -1, -1))
    info = (40).to_bytes(4, "little") + w.to_bytes(4, "little") + h.to_bytes(4, "little") + \
        (1).to_bytes(2, "little") + (24).to_bytes(2, "little") + bytes(4) + len(rows).to_bytes(4, "little") + bytes(16)
    return b"BM" + (54 + len(rows)).to_bytes(4, "little") + bytes(4) + (54).to_bytes(4, "little") + info + rows


_LETTERS = "aAbBzZ019_-é"


def _name(rng, n=None):
    n = n or int(rng.integers(1, 6))
    return "".join(_LETTERS[int(rng.integers(0, len(_LETTERS)))] for _ in range(n))


def make_tree(rng, root, n_classes=None, files_per_class=(1, 6), text=False):
    """A random class tree under root. Returns the number of data files written."""
    n_classes = n_classes or int(rng.integers(2, 5))
    classes = set()
    while len(classes) < n_classes:
        classes.add(_name(rng))
    exts = [".txt", ".TXT", ".Txt"] if text else [".png", ".PNG", ".jpg", ".JPG", ".jpeg", ".Jpeg", ".gif", ".bmp"]
    other = [".md", ".json", ".png.bak", ""] + ([".png"] if text else [".txt"])
    count = 0

    def write(path, data):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)

    def data_file(path):
        nonlocal count
        count += 1
        if text:
            write(path, bytes(rng.integers(97, 123, size=int(rng.integers(0, 40))).astype(np.uint8)))
        else:
            h, w, c = int(rng.integers(2, 10)), int(rng.integers(2, 10)), [1, 3, 4][int(rng.integers(0, 3))]
            px = rng.integers(0, 256, size=(h, w, c)).astype(np.uint8)
            ext = os.path.splitext(path)[1].lower()
            if ext in (".jpg", ".jpeg") and rng.random() < 0.5:
                write(path, tf.io.encode_jpeg(px[..., :1] if c == 1 else px[..., :3]).numpy())
            elif ext == ".bmp" and rng.random() < 0.5:
                write(path, _bmp(px[..., :3] if c >= 3 else np.repeat(px, 3, axis=2)))
            else:  # PNG bytes under any image extension: both decoders go by content
                write(path, _png(h, w, c, px))

    # folders whose path order differs from a depth-first walk: "a" < "a-b" < "a.b" < "a/z"
    sub_choices = ["", "", "a", "a-b", "a.b", "a/z", "a/z/Q1", "B", ".hid", "sub dir"]
    for cls in sorted(classes):
        for _ in range(int(rng.integers(*files_per_class))):
            sub = sub_choices[int(rng.integers(0, len(sub_choices)))]
            fname = _name(rng) + exts[int(rng.integers(0, len(exts)))]
            p = os.path.join(root, cls, sub, fname)
            if not os.path.exists(p):
                data_file(p)
        if rng.random() < 0.7:
            p = os.path.join(root, cls, _name(rng) + other[int(rng.integers(0, len(other)))])
            if not os.path.exists(p):  # a name without extension may be a folder's
                write(p, b"not data")
    if rng.random() < 0.5:
        os.makedirs(os.path.join(root, "empty" + _name(rng, 2)), exist_ok=True)
    # a hidden class folder and a top-level file: skipped with labels inferred, listed with labels=None
    data_file(os.path.join(root, ".hidden", "h" + exts[0]))
    data_file(os.path.join(root, "top" + exts[0]))
    return count


def _elements(ds, to_numpy):
    out = []
    for e in ds:
        if not isinstance(e, tuple):
            e = (e,)
        out.append(tuple(to_numpy(t) for t in e))
    return out


def _rows(elements, batched):
    """Unbatches a list of element tuples into per-row tuples of numpy arrays."""
    rows = []
    for e in elements:
        if batched:
            for i in range(e[0].shape[0]):
                rows.append(tuple(c[i] for c in e))
        else:
            rows.append(e)
    return rows


def _assert_rows_equal(got, want, atol=1e-3):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape, (i, a.dtype, b.dtype, a.shape, b.shape)
            if a.dtype == object or a.dtype.kind in "SU":
                assert a.tolist() == b.tolist(), i
            elif a.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=0, atol=atol, err_msg="row %d" % i)
            else:
                np.testing.assert_array_equal(a, b, err_msg="row %d" % i)


def _keras(kind, directory, **kw):
    fn = (tf_keras.utils.image_dataset_from_directory if kind == "image"
          else tf_keras.utils.text_dataset_from_directory)
    return fn(directory, **kw)


# ---- tests ---------------------------------------------------------------------------------------------------------

def test_image_unshuffled_matches_keras(rng, tmp_path):
    root = str(tmp_path / "imgs")
    make_tree(rng, root)
    for trial in range(4):
        label_mode = ["int", "categorical", "binary", None][trial]
        kw = dict(label_mode=label_mode, shuffle=False,
                  batch_size=[None, 1, 3, 32][int(rng.integers(0, 4))],
                  image_size=(int(rng.integers(1, 9)), int(rng.integers(1, 9))),
                  color_mode=["rgb", "grayscale", "rgba"][int(rng.integers(0, 3))],
                  interpolation=["bilinear", "nearest"][int(rng.integers(0, 2))],
                  crop_to_aspect_ratio=bool(rng.random() < 0.3))
        if label_mode == "binary":
            names = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)) and n[0] != ".")
            kw["class_names"] = [names[1], names[0]] if len(names) == 2 else None
            if len(names) != 2:  # Keras and tfc both reject it
                with pytest.raises(ValueError):
                    _keras("image", root, **kw)
                with pytest.raises(tfc.errors.InvalidArgumentError, match="exactly 2 class_names"):
                    tfc_from_directory("image", root, **kw)
                continue
        k = _keras("image", root, **kw)
        ds, names, paths, _ = tfc_from_directory("image", root, **kw)
        assert names == list(k.class_names)
        assert paths == list(k.file_paths)
        assert ds.cardinality() == int(k.cardinality())
        try:
            want = _rows(_elements(k, lambda t: t.numpy()), kw["batch_size"] is not None)
        except tf.errors.InvalidArgumentError:
            # crop_to_aspect_ratio can crop a thin image to nothing (resizing it fails), a JPEG has no 4-channel
            # decoding: both fail
            with pytest.raises(tfc.errors.InvalidArgumentError):
                _elements(ds, lambda t: t.numpy())
            continue
        got = _rows(_elements(ds, lambda t: t.numpy()), kw["batch_size"] is not None)
        _assert_rows_equal(got, want)


def test_image_class_names_and_explicit_labels(rng, tmp_path):
    root = str(tmp_path / "imgs")
    make_tree(rng, root)
    names = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)) and n[0] != ".")
    order = [names[i] for i in rng.permutation(len(names))]
    kw = dict(class_names=order, label_mode="categorical", shuffle=False, image_size=(3, 2), batch_size=None)
    k = _keras("image", root, **kw)
    ds, got_names, paths, _ = tfc_from_directory("image", root, **kw)
    assert got_names == list(k.class_names) and paths == list(k.file_paths)
    _assert_rows_equal(_elements(ds, lambda t: t.numpy()), _elements(k, lambda t: t.numpy()))
    # labels=[...]: one per file of the flat listing (hidden folders and top-level files included)
    n = len(_keras("image", root, labels=None, shuffle=False).file_paths)
    labels = [int(v) for v in rng.integers(0, 4, size=n)]
    for mode in ("int", "categorical"):
        kw = dict(labels=labels, label_mode=mode, shuffle=False, image_size=(2, 2), batch_size=4)
        k = _keras("image", root, **kw)
        ds, got_names, paths, _ = tfc_from_directory("image", root, **kw)
        assert got_names == [str(c) for c in k.class_names] and paths == list(k.file_paths)
        _assert_rows_equal(_rows(_elements(ds, lambda t: t.numpy()), True),
                           _rows(_elements(k, lambda t: t.numpy()), True))


def _multiset(rows):
    return sorted(tuple(tuple(np.asarray(c).ravel().tolist()) for c in r) for r in rows)


def _assert_same_rows_any_order(got, want, atol=1e-3):
    assert len(got) == len(want)
    left = list(want)
    for g in got:
        for j, w in enumerate(left):
            if all(np.asarray(a).shape == np.asarray(b).shape and np.allclose(a, b, rtol=0, atol=atol)
                   for a, b in zip(g, w)):
                del left[j]
                break
        else:
            raise AssertionError("element %r not among Keras's" % (g,))


def test_image_shuffle_and_split_match_keras(rng, tmp_path):
    root = str(tmp_path / "imgs")
    make_tree(rng, root, files_per_class=(3, 12))
    for trial in range(3):
        seed = int(rng.integers(0, 2**32))
        split = float(rng.uniform(0.1, 0.6))
        for subset in ("training", "validation"):
            kw = dict(seed=seed, validation_split=split, subset=subset, image_size=(2, 3),
                      batch_size=[None, 4][trial % 2], label_mode=["int", "categorical", None][trial])
            k = _keras("image", root, **kw)
            ds, names, paths, _ = tfc_from_directory("image", root, **kw)
            assert names == list(k.class_names)
            assert paths == list(k.file_paths)  # numpy's shuffle and Keras's split, exactly
            batched = kw["batch_size"] is not None
            want = _rows(_elements(k, lambda t: t.numpy()), batched)
            got = _rows(_elements(ds, lambda t: t.numpy()), batched)
            # the elements' order goes through a shuffle buffer with different random numbers; the pairs agree
            _assert_same_rows_any_order(got, want)
        # subset "both" returns both at once, the same files
        kw["subset"] = "both"
        kt, kv = _keras("image", root, **kw)
        ds, names, paths, (val, val_paths) = tfc_from_directory("image", root, **kw)
        assert paths == list(kt.file_paths) and val_paths == list(kv.file_paths)
        assert sorted(paths + val_paths) == sorted(_keras("image", root, shuffle=False, labels=kw["label_mode"] and
                                                          "inferred", label_mode=kw["label_mode"]).file_paths)


def test_text_matches_keras(rng, tmp_path):
    root = str(tmp_path / "texts")
    make_tree(rng, root, text=True, files_per_class=(3, 8))
    for label_mode in ("int", "categorical", None):
        kw = dict(label_mode=label_mode, shuffle=False, batch_size=[None, 2, 32][int(rng.integers(0, 3))],
                  max_length=[None, 5][int(rng.integers(0, 2))])
        k = _keras("text", root, **kw)
        ds, names, _, _ = tfc_from_directory("text", root, **kw)
        assert names == list(k.class_names)
        batched = kw["batch_size"] is not None
        _assert_rows_equal(_rows(_elements(ds, lambda t: t.numpy()), batched),
                           _rows(_elements(k, lambda t: t.numpy()), batched))
    seed = int(rng.integers(0, 10**6))
    for subset in ("training", "validation"):
        kw = dict(seed=seed, validation_split=0.3, subset=subset, batch_size=3)
        k = _keras("text", root, **kw)
        ds, names, _, _ = tfc_from_directory("text", root, **kw)
        got = _rows(_elements(ds, lambda t: t.numpy()), True)
        want = _rows(_elements(k, lambda t: t.numpy()), True)
        assert _multiset(got) == _multiset(want)


def test_messages_match_keras(rng, tmp_path, capfd):
    root = str(tmp_path / "imgs")
    # at least 4 images: with fewer, int(0.25 * n) == 0 and tf_keras's samples[:-0] leaves it no training
    # images (a tf_keras quirk, seed 2729187218)
    make_tree(rng, root, files_per_class=(3, 6))
    seed = int(rng.integers(0, 1000))
    calls = [dict(shuffle=False), dict(labels=None, shuffle=False),
             dict(seed=seed, validation_split=0.25, subset="both")]
    for kw in calls:
        _keras("image", root, image_size=(2, 2), **kw)
        want = capfd.readouterr().out
        tfc_from_directory("image", root, image_size=(2, 2), **kw)
        got = capfd.readouterr().out
        assert got == want and got.startswith("Found ")


def test_errors_match_keras(tmp_path):
    root = str(tmp_path / "imgs")
    os.makedirs(os.path.join(root, "a"))
    os.makedirs(os.path.join(root, "b"))
    os.makedirs(os.path.join(root, "c"))
    with open(os.path.join(root, "a", "x.png"), "wb") as f:
        f.write(_png(2, 2, 1, np.zeros((2, 2, 1), np.uint8)))
    cases = [
        (dict(class_names=["a", "b"]), tfc.errors.InvalidArgumentError),
        (dict(label_mode="binary"), tfc.errors.InvalidArgumentError),
        (dict(label_mode="sparse"), tfc.errors.InvalidArgumentError),
        (dict(color_mode="cmyk"), tfc.errors.InvalidArgumentError),
        (dict(validation_split=0.5), tfc.errors.InvalidArgumentError),
        (dict(validation_split=0.5, subset="training"), tfc.errors.InvalidArgumentError),
        (dict(validation_split=1.0, subset="training", seed=1), tfc.errors.InvalidArgumentError),
        (dict(labels=[0], class_names=["a"]), tfc.errors.InvalidArgumentError),
        (dict(labels=[0, 1]), tfc.errors.InvalidArgumentError),
    ]
    for kw, err in cases:
        with pytest.raises(ValueError) as ke:
            _keras("image", root, **kw)
        with pytest.raises(err) as te:
            tfc_from_directory("image", root, **kw)
        # the same message up to Python's rendering of lists
        assert str(ke.value).split(".")[0].split("Received")[0].split("Expected")[0][:40] in str(te.value), \
            (str(ke.value), str(te.value))
    with pytest.raises(tf.errors.NotFoundError):
        _keras("image", os.path.join(root, "missing"))
    with pytest.raises(tfc.errors.NotFoundError, match="Could not find directory"):
        tfc_from_directory("image", os.path.join(root, "missing"))
    empty = str(tmp_path / "empty")
    os.makedirs(os.path.join(empty, "a"))
    with pytest.raises(ValueError) as ke:
        _keras("image", empty)
    with pytest.raises(tfc.errors.InvalidArgumentError) as te:
        tfc_from_directory("image", empty)
    assert str(ke.value) == str(te.value)
