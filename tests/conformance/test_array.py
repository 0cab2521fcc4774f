"""Array ops (Reshape, Transpose, InvertPermutation, ExpandDims, Squeeze, ConcatV2, Split, SplitV, Slice,
StridedSlice, StridedSliceGrad, Pack, Unpack, Tile, Pad, PadV2, MirrorPad, MirrorPadGrad, Fill, ZerosLike,
OnesLike, Identity, StopGradient, Shape, Size, Rank, BroadcastTo) against TensorFlow on fresh random shapes,
axes, masks and dtypes (strings included); gradients against tf.GradientTape; invalid calls must fail in
both libraries with the same error class.

tfc.raw_ops takes inputs by their op-def names (ExpandDims' `dim`, Split's `split_dim`, ...); tf.raw_ops
renames a few to `axis`, so run_tf is wrapped to translate."""
import numpy as np
import pytest

import conftest
from conftest import (assert_both_raise, assert_grad_matches, assert_op_matches, random_array, random_shape,
                      require_ops, tf, tfc)

ALL_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int16", "int32", "int64", "bool",
              "string"]
GRAD_DTYPES = ["float32", "float64"]

# op-def input name -> tf.raw_ops keyword
_TF_NAMES = {"ExpandDims": {"dim": "axis"}, "Squeeze": {"squeeze_dims": "axis"}, "Split": {"split_dim": "axis"},
             "SplitV": {"split_dim": "axis"}}
_run_tf = conftest.run_tf


def _keep_int64(v):
    # tf.raw_ops converts numpy int64 inputs of ops whose index attr defaults to int32 into int32 (wrapping
    # large values); a tf.Tensor keeps its dtype
    if isinstance(v, (np.ndarray, np.int64)) and np.asarray(v).dtype == np.int64:
        return tf.constant(v)
    return v


def _renamed_run_tf(op, inputs, attrs=None):
    ren = _TF_NAMES.get(op, {})
    return _run_tf(op, {ren.get(k, k): _keep_int64(v) for k, v in dict(inputs).items()},
                   {ren.get(k, k): v for k, v in dict(attrs or {}).items()})


@pytest.fixture(autouse=True)
def _tf_arg_names(monkeypatch):
    monkeypatch.setattr(conftest, "run_tf", _renamed_run_tf)


def i32(v):
    return np.asarray(v, dtype=np.int32)


def i64(v):
    return np.asarray(v, dtype=np.int64)


def idx(rng, v):
    """An index tensor of random dtype (int32 or int64)."""
    return i32(v) if rng.random() < 0.5 else i64(v)


def pick_dtype(rng, dtypes=ALL_DTYPES):
    return str(rng.choice(dtypes))


# ---- metadata, identity, filling ------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_identity_like_ops(rng, dtype):
    for _ in range(3):
        x = random_array(rng, random_shape(rng, max_rank=5), dtype)
        assert_op_matches("Identity", dict(input=x))
        assert_op_matches("StopGradient", dict(input=x))
        assert_op_matches("ZerosLike", dict(x=x))
        if dtype != "string":
            assert_op_matches("OnesLike", dict(x=x))
        assert_op_matches("Rank", dict(input=x))
        for out_type in (tfc.int32, tfc.int64):
            assert_op_matches("Shape", dict(input=x), dict(out_type=out_type))
            assert_op_matches("Size", dict(input=x), dict(out_type=out_type))


def test_stop_gradient_blocks(rng):
    x = random_array(rng, (3, 2), "float64")
    for lib in (tfc, tf):
        xc = lib.constant(x)
        with lib.GradientTape() as tape:
            tape.watch(xc)
            y = lib.raw_ops.StopGradient(input=xc)
        assert tape.gradient(y, xc) is None


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_fill(rng, dtype):
    for _ in range(4):
        dims = random_shape(rng, max_rank=4)
        assert_op_matches("Fill", dict(dims=idx(rng, dims), value=random_array(rng, (), dtype)))


def test_fill_gradient(rng):
    for _ in range(3):
        assert_grad_matches("Fill", dict(dims=i32(random_shape(rng)), value=random_array(rng, (), "float64")),
                            wrt=["value"], rng=rng)


def test_invert_permutation(rng):
    for _ in range(5):
        n = int(rng.integers(0, 9))
        p = rng.permutation(n)
        assert_op_matches("InvertPermutation", dict(x=i32(p)))
        assert_op_matches("InvertPermutation", dict(x=i64(p)))
    assert_both_raise("InvertPermutation", dict(x=i32([0, 0])))
    assert_both_raise("InvertPermutation", dict(x=i32([0, 2])))
    assert_both_raise("InvertPermutation", dict(x=i32([[0]])))


# ---- reshaping --------------------------------------------------------------------------------------------

def random_reshape(rng, shape):
    """A new shape with the same element count, maybe with one -1."""
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if n == 0:
        out = [int(d) for d in rng.permutation(list(shape))] if shape else [0]
        if rng.random() < 0.5:
            nz = [i for i, d in enumerate(out) if d != 0]
            if nz:
                out[int(rng.choice(nz))] = -1
        return out
    dims, rest = [], n
    for p in (2, 3, 5, 7):
        while rest % p == 0:
            rest //= p
            dims.append(p)
    dims = dims + ([rest] if rest > 1 else [])
    rng.shuffle(dims)
    out = []
    for d in dims:
        if out and rng.random() < 0.5:
            out[-1] *= d
        else:
            out.append(d)
    for _ in range(int(rng.integers(0, 2))):
        out.insert(int(rng.integers(0, len(out) + 1)), 1)
    if out and rng.random() < 0.5:
        out[int(rng.integers(0, len(out)))] = -1
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reshape(rng, dtype):
    for _ in range(5):
        shape = random_shape(rng, max_rank=4)
        assert_op_matches("Reshape", dict(tensor=random_array(rng, shape, dtype), shape=idx(rng, random_reshape(rng, shape))))


def test_reshape_gradient(rng):
    for _ in range(4):
        shape = random_shape(rng, max_rank=4)
        assert_grad_matches("Reshape", dict(tensor=random_array(rng, shape, "float64"),
                                            shape=i32(random_reshape(rng, shape))), rng=rng)


def test_reshape_errors():
    x = np.zeros((2, 3), np.float32)
    for shape in ([4], [-1, 4], [-1, -1], [-2, -3], [[2, 3]], [0, -1]):
        assert_both_raise("Reshape", dict(tensor=x, shape=i32(shape)))
    assert_both_raise("Reshape", dict(tensor=np.zeros((0,), np.float32), shape=i64([2 ** 40, 2 ** 40, 0])))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_expand_dims_squeeze(rng, dtype):
    for _ in range(4):
        shape = random_shape(rng, max_rank=4)
        x = random_array(rng, shape, dtype)
        r = len(shape)
        assert_op_matches("ExpandDims", dict(input=x, dim=idx(rng, int(rng.integers(-r - 1, r + 1)))))
        ones = tuple(1 if rng.random() < 0.4 else d for d in shape)
        y = random_array(rng, ones, dtype)
        unit = [i for i, d in enumerate(ones) if d == 1]
        axes = [int(i - r if rng.random() < 0.5 else i) for i in unit if rng.random() < 0.6]
        assert_op_matches("Squeeze", dict(input=y), dict(squeeze_dims=axes))


def test_expand_dims_squeeze_gradients(rng):
    for _ in range(3):
        shape = random_shape(rng, max_rank=4)
        r = len(shape)
        assert_grad_matches("ExpandDims", dict(input=random_array(rng, shape, "float64"),
                                               dim=i32(int(rng.integers(-r - 1, r + 1)))), rng=rng)
        ones = tuple(1 if rng.random() < 0.4 else d for d in shape)
        assert_grad_matches("Squeeze", dict(input=random_array(rng, ones, "float64")), rng=rng)


def test_expand_dims_squeeze_errors():
    x = np.zeros((2, 3), np.float32)
    for d in (3, -4):
        assert_both_raise("ExpandDims", dict(input=x, dim=i32(d)))
    assert_both_raise("ExpandDims", dict(input=x, dim=i32([0, 1])))
    for axes in ([1], [2], [-3]):
        assert_both_raise("Squeeze", dict(input=x), dict(squeeze_dims=axes))


# ---- transposing ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_transpose(rng, dtype):
    for _ in range(5):
        shape = random_shape(rng, max_rank=6, max_dim=4)
        r = len(shape)
        perm = [int(p - r if rng.random() < 0.2 else p) for p in rng.permutation(r)]
        assert_op_matches("Transpose", dict(x=random_array(rng, shape, dtype), perm=idx(rng, perm)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "float16", "string"])
def test_transpose_large(rng, dtype):
    # blocked 2-D tiles, uneven edges, and the batched inner transpose of NHWC <-> NCHW
    m, n = int(rng.integers(33, 150)), int(rng.integers(33, 150))
    assert_op_matches("Transpose", dict(x=random_array(rng, (m, n), dtype), perm=i32([1, 0])))
    shape = (2, int(rng.integers(5, 20)), int(rng.integers(5, 20)), int(rng.integers(3, 40)))
    assert_op_matches("Transpose", dict(x=random_array(rng, shape, dtype), perm=i32([0, 3, 1, 2])))


def test_transpose_gradient(rng):
    for _ in range(4):
        shape = random_shape(rng, max_rank=4)
        assert_grad_matches("Transpose", dict(x=random_array(rng, shape, "float64"),
                                              perm=i32(rng.permutation(len(shape)))), rng=rng)


def test_transpose_errors():
    x = np.zeros((2, 3), np.float32)
    for perm in ([0], [0, 0], [0, 2], [[0, 1]], [-3, 0]):
        assert_both_raise("Transpose", dict(x=x, perm=i32(perm)))


# ---- broadcasting and tiling ------------------------------------------------------------------------------

def broadcast_source(rng, target):
    src = [1 if rng.random() < 0.4 else d for d in target]
    return tuple(src[int(rng.integers(0, len(src) + 1)):])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_broadcast_to(rng, dtype):
    for _ in range(5):
        target = random_shape(rng, max_rank=5, max_dim=4)
        assert_op_matches("BroadcastTo", dict(input=random_array(rng, broadcast_source(rng, target), dtype),
                                              shape=idx(rng, target)))


def test_broadcast_to_gradient(rng):
    for _ in range(4):
        target = random_shape(rng, max_rank=4, max_dim=4)
        assert_grad_matches("BroadcastTo", dict(input=random_array(rng, broadcast_source(rng, target), "float64"),
                                                shape=i32(target)), rng=rng)


def test_broadcast_to_errors():
    x = np.zeros((2, 3), np.float32)
    for shape in ([4, 3], [3], [-1, 3], [[2, 3]], [2 ** 40, 2 ** 40, 3]):
        assert_both_raise("BroadcastTo", dict(input=x, shape=i64(shape)))
    assert_both_raise("BroadcastTo", dict(input=np.zeros((0,), np.float32), shape=i32([1])))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_tile(rng, dtype):
    for _ in range(5):
        shape = random_shape(rng, max_rank=4, max_dim=4)
        mult = [int(rng.integers(0 if rng.random() < 0.1 else 1, 4)) for _ in shape]
        assert_op_matches("Tile", dict(input=random_array(rng, shape, dtype), multiples=idx(rng, mult)))


def test_tile_gradient(rng):
    for _ in range(4):
        shape = random_shape(rng, max_rank=6, max_dim=3)
        mult = [int(rng.integers(1, 3)) for _ in shape]
        assert_grad_matches("Tile", dict(input=random_array(rng, shape, "float64"), multiples=i32(mult)), rng=rng)


def test_tile_errors():
    x = np.zeros((2, 3), np.float32)
    for m in ([2], [1, -1], [[1, 1]], [2 ** 40, 2 ** 40]):
        assert_both_raise("Tile", dict(input=x, multiples=i64(m)))


# ---- padding -----------------------------------------------------------------------------------------------

def random_paddings(rng, shape, limit=None):
    return [[int(rng.integers(0, (limit(d) if limit else 3) + 1)) for _ in range(2)] for d in shape]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pad(rng, dtype):
    for _ in range(4):
        shape = random_shape(rng, max_rank=4, max_dim=4)
        x = random_array(rng, shape, dtype)
        pads = idx(rng, np.reshape(random_paddings(rng, shape), (len(shape), 2)))
        assert_op_matches("Pad", dict(input=x, paddings=pads))
        assert_op_matches("PadV2", dict(input=x, paddings=pads, constant_values=random_array(rng, (), dtype)))


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_mirror_pad(rng, mode, dtype):
    for _ in range(4):
        shape = tuple(d + 1 for d in random_shape(rng, max_rank=4, max_dim=4))
        lim = (lambda d: d - 1) if mode == "REFLECT" else (lambda d: d)
        pads = idx(rng, np.reshape(random_paddings(rng, shape, lim), (len(shape), 2)))
        assert_op_matches("MirrorPad", dict(input=random_array(rng, shape, dtype), paddings=pads), dict(mode=mode))


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64"])
def test_mirror_pad_grad(rng, mode, dtype):
    for _ in range(4):
        out = tuple(d + 1 for d in random_shape(rng, max_rank=4, max_dim=4))
        lim = (lambda d: d - 1) if mode == "REFLECT" else (lambda d: d)
        pads = random_paddings(rng, out, lim)
        big = tuple(d + p[0] + p[1] for d, p in zip(out, pads))
        assert_op_matches("MirrorPadGrad", dict(input=random_array(rng, big, dtype),
                                                paddings=idx(rng, np.reshape(pads, (len(out), 2)))), dict(mode=mode))


def test_pad_gradients(rng):
    for _ in range(3):
        shape = random_shape(rng, max_rank=4, max_dim=4)
        pads = i32(np.reshape(random_paddings(rng, shape), (len(shape), 2)))
        x = random_array(rng, shape, "float64")
        assert_grad_matches("Pad", dict(input=x, paddings=pads), rng=rng)
        assert_grad_matches("PadV2", dict(input=x, paddings=pads, constant_values=np.float64(0.5)), wrt=["input"],
                            rng=rng)
        shape = tuple(d + 1 for d in shape)
        for mode, lim in (("REFLECT", lambda d: d - 1), ("SYMMETRIC", lambda d: d)):
            pads = random_paddings(rng, shape, lim)
            x = random_array(rng, shape, "float64")
            p = i32(np.reshape(pads, (len(shape), 2)))
            assert_grad_matches("MirrorPad", dict(input=x, paddings=p), dict(mode=mode), rng=rng)
            big = tuple(d + a + b for d, (a, b) in zip(shape, pads))
            assert_grad_matches("MirrorPadGrad", dict(input=random_array(rng, big, "float64"), paddings=p),
                                dict(mode=mode), rng=rng)


def test_pad_errors():
    x = np.zeros((2, 3), np.float32)
    for p in ([[1, 1]], [[1, 1, 1], [1, 1, 1]], [[1, -1], [0, 0]], [1, 1], [[2 ** 62, 2 ** 62], [0, 0]]):
        assert_both_raise("Pad", dict(input=x, paddings=i64(p)))
    assert_both_raise("PadV2", dict(input=x, paddings=i32([[1, 1], [0, 0]]), constant_values=np.float32([1, 2])))
    for mode, p in (("REFLECT", [[2, 0], [0, 0]]), ("SYMMETRIC", [[3, 0], [0, 0]]), ("SYMMETRIC", [[-1, 0], [0, 0]]),
                    ("FOO", [[1, 0], [0, 0]])):
        assert_both_raise("MirrorPad", dict(input=x, paddings=i32(p)), dict(mode=mode))
    for mode, p in (("REFLECT", [[2, 2]]), ("REFLECT", [[2, 1]]), ("SYMMETRIC", [[3, 0]]), ("REFLECT", [[-2, 1]])):
        assert_both_raise("MirrorPadGrad", dict(input=np.zeros((5,), np.float32), paddings=i32(p)), dict(mode=mode))


# ---- joining and splitting --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_concat(rng, dtype):
    for _ in range(5):
        shape = list(random_shape(rng, min_rank=1, max_rank=4, max_dim=4))
        axis = int(rng.integers(-len(shape), len(shape)))
        vals = []
        for _ in range(int(rng.integers(2, 5))):
            s = list(shape)
            s[axis] = int(rng.integers(0, 4))
            vals.append(random_array(rng, s, dtype))
        assert_op_matches("ConcatV2", dict(values=vals, axis=idx(rng, axis)))


def test_concat_gradient(rng):
    for _ in range(4):
        shape = list(random_shape(rng, min_rank=1, max_rank=4, max_dim=4))
        axis = int(rng.integers(-len(shape), len(shape)))
        vals = []
        for _ in range(int(rng.integers(2, 4))):
            s = list(shape)
            s[axis] = int(rng.integers(0, 4))
            vals.append(random_array(rng, s, "float64"))
        assert_grad_matches("ConcatV2", dict(values=vals, axis=i32(axis)), rng=rng)


def test_concat_errors():
    x = np.zeros((2, 3), np.float32)
    assert_both_raise("ConcatV2", dict(values=[x, np.zeros((2, 4), np.float32)], axis=i32(0)))
    assert_both_raise("ConcatV2", dict(values=[x, np.zeros((3,), np.float32)], axis=i32(0)))
    assert_both_raise("ConcatV2", dict(values=[x, x], axis=i32(2)))
    assert_both_raise("ConcatV2", dict(values=[np.float32(1), np.float32(2)], axis=i32(0)))
    assert_both_raise("ConcatV2", dict(values=[x, x], axis=i32([0, 1])))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_pack_unpack(rng, dtype):
    for _ in range(4):
        shape = random_shape(rng, max_rank=4, max_dim=4)
        r = len(shape)
        n = int(rng.integers(1, 5))
        axis = int(rng.integers(-r - 1, r + 1))
        assert_op_matches("Pack", dict(values=[random_array(rng, shape, dtype) for _ in range(n)]), dict(axis=axis))
        big = random_shape(rng, min_rank=1, max_rank=4, max_dim=4)
        ax = int(rng.integers(-len(big), len(big)))
        assert_op_matches("Unpack", dict(value=random_array(rng, big, dtype)), dict(num=big[ax], axis=ax))


def test_pack_unpack_gradients(rng):
    for _ in range(3):
        shape = random_shape(rng, max_rank=3, max_dim=4)
        r = len(shape)
        assert_grad_matches("Pack", dict(values=[random_array(rng, shape, "float64") for _ in range(3)]),
                            dict(axis=int(rng.integers(-r - 1, r + 1))), rng=rng)
        big = random_shape(rng, min_rank=1, max_rank=4, max_dim=4)
        ax = int(rng.integers(-len(big), len(big)))
        assert_grad_matches("Unpack", dict(value=random_array(rng, big, "float64")), dict(num=big[ax], axis=ax),
                            rng=rng)


def test_pack_unpack_errors():
    x = np.zeros((2, 3), np.float32)
    assert_both_raise("Pack", dict(values=[x, np.zeros((2, 4), np.float32)]))
    assert_both_raise("Pack", dict(values=[x, x]), dict(axis=3))
    assert_both_raise("Unpack", dict(value=x), dict(num=3))
    assert_both_raise("Unpack", dict(value=x), dict(num=2, axis=2))
    assert_both_raise("Unpack", dict(value=np.float32(1)), dict(num=1))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_split(rng, dtype):
    for _ in range(4):
        shape = list(random_shape(rng, min_rank=1, max_rank=4, max_dim=3))
        axis = int(rng.integers(-len(shape), len(shape)))
        num = int(rng.integers(1, 4))
        shape[axis] *= num
        x = random_array(rng, shape, dtype)
        assert_op_matches("Split", dict(split_dim=i32(axis), value=x), dict(num_split=num))
        sizes = [int(s) for s in rng.integers(0, 4, size=num)]
        shape[axis] = sum(sizes)
        if num > 1 and rng.random() < 0.5:  # TensorFlow wants the exact size when num_split is 1
            sizes[int(rng.integers(0, num))] = -1
        x = random_array(rng, shape, dtype)
        assert_op_matches("SplitV", dict(value=x, size_splits=idx(rng, sizes), split_dim=i32(axis)),
                          dict(num_split=num))


def test_split_gradients(rng):
    for _ in range(3):
        shape = list(random_shape(rng, min_rank=1, max_rank=4, max_dim=3))
        axis = int(rng.integers(-len(shape), len(shape)))
        num = int(rng.integers(1, 4))
        shape[axis] *= num
        assert_grad_matches("Split", dict(split_dim=i32(axis), value=random_array(rng, shape, "float64")),
                            dict(num_split=num), rng=rng)
        sizes = [int(s) for s in rng.integers(0, 4, size=num)]
        shape[axis] = sum(sizes)
        assert_grad_matches("SplitV", dict(value=random_array(rng, shape, "float64"), size_splits=i64(sizes),
                                           split_dim=i32(axis)), dict(num_split=num), rng=rng)


def test_split_errors():
    x = np.zeros((2, 3), np.float32)
    assert_both_raise("Split", dict(split_dim=i32(1), value=x), dict(num_split=2))
    assert_both_raise("Split", dict(split_dim=i32(2), value=x), dict(num_split=2))
    assert_both_raise("Split", dict(split_dim=i32([1]), value=x), dict(num_split=1))
    for sizes in ([1, 1], [-1, -1], [1, 1, 1], [-2, 5], [4, -1]):
        assert_both_raise("SplitV", dict(value=x, size_splits=i32(sizes), split_dim=i32(1)), dict(num_split=2))
    assert_both_raise("SplitV", dict(value=x, size_splits=i32([1, 2]), split_dim=i32(3)), dict(num_split=2))
    assert_both_raise("SplitV", dict(value=x, size_splits=i64([-1]), split_dim=i32(1)), dict(num_split=1))


# ---- slicing ----------------------------------------------------------------------------------------------

def random_slice(rng, shape):
    begin = [int(rng.integers(0, d + 1)) for d in shape]
    size = [int(rng.integers(0, d - b + 1)) if rng.random() < 0.7 else -1 for d, b in zip(shape, begin)]
    return begin, size


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_slice(rng, dtype):
    for _ in range(5):
        shape = random_shape(rng, max_rank=4, max_dim=5)
        begin, size = random_slice(rng, shape)
        t = i32 if rng.random() < 0.5 else i64
        assert_op_matches("Slice", dict(input=random_array(rng, shape, dtype), begin=t(begin), size=t(size)))


def test_slice_gradient(rng):
    for _ in range(4):
        shape = random_shape(rng, max_rank=4, max_dim=5)
        begin, size = random_slice(rng, shape)
        assert_grad_matches("Slice", dict(input=random_array(rng, shape, "float64"), begin=i32(begin),
                                          size=i32(size)), rng=rng)


def test_slice_errors():
    x = np.zeros((2, 3), np.float32)
    for b, s in (([0, 1], [2, 3]), ([-1, 0], [1, 1]), ([3, 0], [0, 1]), ([0], [1]), ([0, 0], [-2, 1])):
        assert_both_raise("Slice", dict(input=x, begin=i32(b), size=i32(s)))
    assert_both_raise("Slice", dict(input=np.zeros((0, 3), np.float32), begin=i32([1, 0]), size=i32([0, 1])))


def random_strided_spec(rng, shape):
    """begin/end/strides and masks for a random Python-style slice of `shape` (indices may be out of range)."""
    r = len(shape)
    n = int(rng.integers(0, r + 3))
    ellipsis = 1 << int(rng.integers(0, n)) if n and rng.random() < 0.4 else 0
    new_axis = sum(1 << i for i in range(n) if rng.random() < 0.15)
    shrink = sum(1 << i for i in range(n) if rng.random() < 0.2)
    begin_mask = sum(1 << i for i in range(n) if rng.random() < 0.25)
    end_mask = sum(1 << i for i in range(n) if rng.random() < 0.25)
    dmax = max(shape) if shape else 1
    begin = [int(rng.integers(-dmax - 2, dmax + 3)) for _ in range(n)]
    end = [int(rng.integers(-dmax - 2, dmax + 3)) for _ in range(n)]
    strides = [int(rng.choice([-3, -2, -1, 1, 1, 1, 2, 3])) for _ in range(n)]
    for i in range(n):  # most shrinks valid: a stride of 1 and an index in range
        if shrink >> i & 1 and rng.random() < 0.8:
            strides[i] = 1
            d = shape[min(i, r - 1)] if r else 1
            begin[i] = int(rng.integers(-d, d)) if d else 0
    attrs = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis, new_axis_mask=new_axis,
                 shrink_axis_mask=shrink)
    return begin, end, strides, attrs


def _tf_accepts(op, inputs, attrs):
    try:
        conftest.run_tf(op, inputs, attrs)
        return True
    except Exception:  # noqa: BLE001
        return False


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_strided_slice(rng, dtype):
    checked = 0
    for _ in range(40):
        shape = random_shape(rng, max_rank=4, max_dim=5)
        x = random_array(rng, shape, dtype)
        begin, end, strides, attrs = random_strided_spec(rng, shape)
        t = i32 if rng.random() < 0.5 else i64
        inputs = dict(input=x, begin=t(begin), end=t(end), strides=t(strides))
        if _tf_accepts("StridedSlice", inputs, attrs):
            assert_op_matches("StridedSlice", inputs, attrs)
            checked += 1
        else:
            assert_both_raise("StridedSlice", inputs, attrs)
    assert checked > 0


def test_strided_slice_int16_index(rng):
    x = random_array(rng, (6, 5), "float32")
    ins = dict(input=x, begin=np.int16([-1, 1]), end=np.int16([0, 5]), strides=np.int16([-2, 2]))
    assert_op_matches("StridedSlice", ins)


def test_strided_slice_gradients(rng):
    done = 0
    while done < 12:
        shape = random_shape(rng, max_rank=4, max_dim=5)
        begin, end, strides, attrs = random_strided_spec(rng, shape)
        inputs = dict(input=random_array(rng, shape, "float64"), begin=i32(begin), end=i32(end), strides=i32(strides))
        if not _tf_accepts("StridedSlice", inputs, attrs):
            continue
        assert_grad_matches("StridedSlice", inputs, attrs, rng=rng)
        dy_shape = conftest.run_tf("StridedSlice", inputs, attrs).shape
        gin = dict(shape=i64(shape), begin=i64(begin), end=i64(end), strides=i64(strides),
                   dy=random_array(rng, dy_shape, "float64"))
        assert_op_matches("StridedSliceGrad", gin, attrs)
        assert_grad_matches("StridedSliceGrad", gin, attrs, wrt=["dy"], rng=rng)
        done += 1


def test_strided_slice_errors():
    x = np.zeros((2, 3), np.float32)

    def ss(b, e, s, **attrs):
        assert_both_raise("StridedSlice", dict(input=x, begin=i32(b), end=i32(e), strides=i32(s)), attrs)

    ss([0], [1], [0])
    ss([0, 0], [1], [1])
    ss([5], [6], [1], shrink_axis_mask=1)
    ss([0, 0, 0], [1, 1, 1], [1, 1, 1])
    ss([0, 0], [1, 1], [1, 1], ellipsis_mask=3)
    ss([1], [6], [-1], shrink_axis_mask=1)
    assert_both_raise("StridedSliceGrad", dict(shape=i32([2, 3]), begin=i32([0]), end=i32([1]), strides=i32([1]),
                                               dy=np.zeros((2, 3), np.float32)))


def test_no_copy_views():
    """Reshape/Identity forward the buffer; slices of contiguous rows stay equal to TensorFlow's."""
    x = np.arange(64 * 48, dtype=np.float32).reshape(64, 48)
    out = tfc.raw_ops.Split(split_dim=i32(0), value=tfc.constant(x), num_split=4)
    for k, o in enumerate(out):
        np.testing.assert_array_equal(o.numpy(), x[16 * k:16 * (k + 1)])
    s = tfc.raw_ops.Slice(input=tfc.constant(x), begin=i32([32, 0]), size=i32([8, -1]))
    np.testing.assert_array_equal(s.numpy(), x[32:40])
    r = tfc.raw_ops.Reshape(tensor=s, shape=i32([-1]))
    np.testing.assert_array_equal(r.numpy(), x[32:40].reshape(-1))


def test_second_order_gradients(rng):
    """Gradients of gradients go through the *Grad ops and back (MirrorPad <-> MirrorPadGrad,
    StridedSlice <-> StridedSliceGrad, Tile -> Sum)."""
    x = random_array(rng, (4, 5), "float64")
    results = []
    for lib in (tfc, tf):
        xc = lib.constant(x)
        with lib.GradientTape() as outer:
            outer.watch(xc)
            with lib.GradientTape() as inner:
                inner.watch(xc)
                y = lib.raw_ops.MirrorPad(input=xc * xc, paddings=np.int32([[1, 2], [2, 1]]), mode="REFLECT")
                z = lib.raw_ops.StridedSlice(input=y, begin=np.int32([-1, 1]), end=np.int32([0, 7]),
                                             strides=np.int32([-2, 2]))
                w = lib.raw_ops.Tile(input=z, multiples=np.int32([2, 3]))
            g = inner.gradient(w, xc)
        results.append((g.numpy(), outer.gradient(g, xc).numpy()))
    np.testing.assert_allclose(results[0][0], results[1][0], rtol=1e-12)
    np.testing.assert_allclose(results[0][1], results[1][1], rtol=1e-12)
