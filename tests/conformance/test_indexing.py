"""Indexing ops (GatherV2, GatherNd, ScatterNd, UnsortedSegmentSum, OneHot, Range, Where, ReverseV2, Cumsum,
TopKV2) against TensorFlow on fresh random shapes, axes, indices and dtypes; gradients against
tf.GradientTape (TensorFlow's IndexedSlices gradients are densified); errors against TensorFlow's.

TensorFlow's CPU kernels lack a few dtype combinations that tfc supports (Range in int8/int16, ScatterNd with
int16 indices, ...): such draws are checked for running only."""
import numpy as np
import pytest

from conftest import (ALL_INT_DTYPES, FLOAT_DTYPES, assert_both_raise, assert_close, assert_grad_matches,
                      assert_op_matches, random_array, random_shape, require_ops, run_tf, run_tfc, tf, tfc)

REAL_DTYPES = FLOAT_DTYPES + ALL_INT_DTYPES
ALL_DTYPES = REAL_DTYPES + ["bool", "string"]
INDEX_DTYPES = ["int32", "int64", "int16"]
GRAD_DTYPES = ["float32", "float64"]
N_DRAWS = 6


@pytest.fixture(autouse=True)
def _ops_present():
    require_ops("GatherV2", "GatherNd", "ScatterNd", "UnsortedSegmentSum", "OneHot", "Range", "Where", "ReverseV2",
                "Cumsum", "TopKV2")


def tf_has_kernel(op, inputs, attrs=None):
    """False when TensorFlow has no CPU kernel for this dtype combination (NotFoundError)."""
    try:
        run_tf(op, inputs, attrs)
    except tf.errors.NotFoundError:
        return False
    except Exception:  # noqa: BLE001  (other errors are the test's business)
        return True
    return True


def matches_or_runs(op, inputs, attrs=None, **kw):
    if tf_has_kernel(op, inputs, attrs):
        return assert_op_matches(op, inputs, attrs, **kw)
    run_tfc(op, inputs, attrs)
    return None


def index_array(rng, shape, lo, hi, dtype):
    return rng.integers(lo, hi, size=shape).astype(np.dtype(dtype))


def assert_same_error(op, inputs, attrs=None, fragment=None):
    """Both reject; tfc's message names the op and contains `fragment` (TensorFlow's wording) when given."""
    tfc_exc, tf_exc = assert_both_raise(op, inputs, attrs)
    msg = str(tfc_exc)
    assert op in msg, msg
    if fragment:
        assert fragment in msg, "tfc: %r lacks %r (TensorFlow: %s)" % (msg, fragment, tf_exc)
        assert fragment in str(tf_exc), "TensorFlow's message changed: %s" % tf_exc
    return tfc_exc


# ---- GatherV2 ---------------------------------------------------------------------------------------------

def gather_case(rng, dtype, allow_empty=True, index_dtypes=INDEX_DTYPES):
    """Random GatherV2 inputs: params rank 1..4, axis, batch_dims <= axis, indices sharing the batch dims."""
    prank = int(rng.integers(1, 5))
    pshape = random_shape(rng, prank, prank, 4, allow_empty)
    axis = int(rng.integers(0, prank))
    bd = int(rng.integers(0, axis + 1))
    ishape = pshape[:bd] + random_shape(rng, 0, min(3, 7 - prank), 4, allow_empty)
    n = pshape[axis]
    if n == 0:
        ishape = ishape[:bd] + (0,) + ishape[bd + 1:] if len(ishape) > bd else ishape + (0,)
    idt = str(rng.choice(index_dtypes))
    ind = index_array(rng, ishape, 0, max(n, 1), idt)
    # negative axis / batch_dims spellings
    ax = axis - prank if rng.random() < 0.3 else axis
    bds = bd - len(ishape) if bd and rng.random() < 0.3 else bd
    return dict(params=random_array(rng, pshape, dtype), indices=ind,
                axis=np.array(ax, dtype=str(rng.choice(["int32", "int64"])))), dict(batch_dims=bds)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_v2(rng, dtype):
    for _ in range(N_DRAWS):
        inputs, attrs = gather_case(rng, dtype)
        matches_or_runs("GatherV2", inputs, attrs)


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_gather_v2_grad(rng, dtype):
    for _ in range(N_DRAWS):
        # TensorFlow's gradient with batch_dims builds tf.range in the index dtype, which rejects int16
        inputs, attrs = gather_case(rng, dtype, allow_empty=False, index_dtypes=["int32", "int64"])
        assert_grad_matches("GatherV2", inputs, attrs, wrt=["params"], rng=rng)


def test_gather_v2_second_order(rng):
    params = random_array(rng, (4, 3), "float64")
    ind = np.array([3, 0, 3, 1], np.int32)
    x, tx = tfc.constant(params), tf.constant(params)
    with tfc.GradientTape() as t2:
        t2.watch(x)
        with tfc.GradientTape() as t1:
            t1.watch(x)
            y = tfc.raw_ops.GatherV2(params=x, indices=ind, axis=np.int32(0))
            y = tfc.raw_ops.Mul(x=y, y=y)
        g = t1.gradient(y, x)
    gg = t2.gradient(g, x)
    with tf.GradientTape() as u2:
        u2.watch(tx)
        with tf.GradientTape() as u1:
            u1.watch(tx)
            ty = tf.gather(tx, ind) ** 2
        tg = tf.convert_to_tensor(u1.gradient(ty, tx))
    tgg = tf.convert_to_tensor(u2.gradient(tg, tx))
    assert_close(g, tg)
    assert_close(gg, tgg)


def test_gather_v2_errors(rng):
    p = random_array(rng, (5, 3), "float32")
    assert_same_error("GatherV2", dict(params=p, indices=np.array([1, 2, 0, 7], np.int32), axis=np.int32(0)),
                      fragment="indices[3] = 7 is not in [0, 5)")
    assert_same_error("GatherV2", dict(params=p, indices=np.array([[1, 2], [0, -1]], np.int64), axis=np.int32(1)),
                      fragment="indices[1,1] = -1 is not in [0, 3)")
    assert_same_error("GatherV2", dict(params=p, indices=np.int64(9), axis=np.int32(1)),
                      fragment="indices = 9 is not in [0, 3)")
    assert_same_error("GatherV2", dict(params=p, indices=np.array([0], np.int32), axis=np.int32(2)))
    assert_same_error("GatherV2", dict(params=p, indices=np.array([0], np.int32), axis=np.array([0], np.int32)),
                      fragment="axis must be scalar")
    assert_same_error("GatherV2", dict(params=p, indices=np.zeros((5, 1), np.int32), axis=np.int32(0)),
                      dict(batch_dims=1), fragment="batch_dims (1) must be less than or equal to axis (0)")
    assert_same_error("GatherV2", dict(params=p, indices=np.zeros((4, 1), np.int32), axis=np.int32(1)),
                      dict(batch_dims=1), fragment="params.shape[0]: 5 should be equal to indices.shape[0]: 4")
    assert_same_error("GatherV2", dict(params=p, indices=np.zeros(5, np.int32), axis=np.int32(1)),
                      dict(batch_dims=2), fragment="Expected batch_dims in the range [-1, 1], but got 2")
    assert_same_error("GatherV2", dict(params=np.float32(1), indices=np.zeros(1, np.int32), axis=np.int32(0)),
                      fragment="params must be at least 1 dimensional")
    assert_same_error("GatherV2", dict(params=p, indices=np.zeros(1, np.float32), axis=np.int32(0)))


# ---- GatherNd / ScatterNd ---------------------------------------------------------------------------------

def nd_case(rng, allow_empty=True, min_outer_rank=0):
    """A shape (rank 1..4), an index depth <= rank and int indices [..., depth] in range."""
    rank = int(rng.integers(1, 5))
    shape = random_shape(rng, rank, rank, 4, allow_zero=False)
    depth = int(rng.integers(1, rank + 1))
    outer = random_shape(rng, max(min_outer_rank, 0 if allow_empty else 1), 2, 4, allow_empty)
    idt = str(rng.choice(["int32", "int64"]))
    ind = np.stack([rng.integers(0, shape[d], size=outer) for d in range(depth)], axis=-1).astype(idt)
    return shape, depth, outer, ind


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gather_nd(rng, dtype):
    for _ in range(N_DRAWS):
        shape, depth, outer, ind = nd_case(rng)
        matches_or_runs("GatherNd", dict(params=random_array(rng, shape, dtype), indices=ind))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_gather_nd_grad(rng, dtype):
    for _ in range(N_DRAWS):
        shape, depth, outer, ind = nd_case(rng, allow_empty=False)
        assert_grad_matches("GatherNd", dict(params=random_array(rng, shape, dtype), indices=ind), wrt=["params"],
                            rng=rng)


def test_gather_nd_ignore_policy(rng):
    p = random_array(rng, (5, 3), "float32")
    ind = np.array([[1, 2], [5, 0], [-1, 1], [4, 2]], np.int32)
    assert_op_matches("GatherNd", dict(params=p, indices=ind), dict(bad_indices_policy="IGNORE"))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_scatter_nd(rng, dtype):
    for _ in range(N_DRAWS):
        shape, depth, outer, ind = nd_case(rng, min_outer_rank=1)  # updates must have rank >= 1
        # duplicates: repeat some index tuples
        if ind.size and rng.random() < 0.7:
            flat = ind.reshape(-1, depth)
            flat[rng.integers(0, len(flat), size=len(flat) // 2)] = flat[0]
        upd = random_array(rng, outer + shape[depth:], dtype)
        matches_or_runs("ScatterNd", dict(indices=ind, updates=upd, shape=np.array(shape, ind.dtype)))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_scatter_nd_grad(rng, dtype):
    for _ in range(N_DRAWS):
        shape, depth, outer, ind = nd_case(rng, allow_empty=False, min_outer_rank=1)
        upd = random_array(rng, outer + shape[depth:], dtype)
        assert_grad_matches("ScatterNd", dict(indices=ind, updates=upd, shape=np.array(shape, ind.dtype)),
                            wrt=["updates"], rng=rng)


def test_scatter_nd_ignore_policy(rng):
    ind = np.array([[1], [3], [-1], [1]], np.int32)
    upd = random_array(rng, (4, 2), "float32")
    assert_op_matches("ScatterNd", dict(indices=ind, updates=upd, shape=np.array([3, 2], np.int32)),
                      dict(bad_indices_policy="IGNORE"))


def test_gather_scatter_nd_errors(rng):
    p = random_array(rng, (5, 3), "float32")
    assert_same_error("GatherNd", dict(params=p, indices=np.array([[1, 2], [5, 0]], np.int32)),
                      fragment="indices[1] = [5, 0] does not index into param shape [5,3]")
    assert_same_error("GatherNd", dict(params=p, indices=np.array([[[1, 2], [4, 3]]], np.int64)),
                      fragment="indices[0,1] = [4, 3] does not index into param shape [5,3]")
    assert_same_error("GatherNd", dict(params=p, indices=np.array([7, 1], np.int32)),
                      fragment="indices = [7, 1] does not index into param shape [5,3]")
    assert_same_error("GatherNd", dict(params=p, indices=np.array([[1, 2, 0]], np.int32)),
                      fragment="saw: 3 vs. 2")
    assert_same_error("GatherNd", dict(params=np.zeros((0, 3), np.float32), indices=np.array([[0]], np.int32)),
                      fragment="Requested more than 0 entries, but params is empty.")
    upd = np.ones(2, np.float32)
    assert_same_error("ScatterNd", dict(indices=np.array([[1], [3]], np.int32), updates=upd,
                                        shape=np.array([3], np.int32)),
                      fragment="indices[1] = [3] does not index into shape [3]")
    assert_same_error("ScatterNd", dict(indices=np.array([[1], [2]], np.int32), updates=np.ones(3, np.float32),
                                        shape=np.array([3], np.int32)),
                      fragment="Dimensions [0,1) of indices[shape=[2,1]] must match dimensions [0,1) of updates[shape=[3]]")
    assert_same_error("ScatterNd", dict(indices=np.array([[1], [2]], np.int32), updates=np.ones((2, 2), np.float32),
                                        shape=np.array([3, 3], np.int32)),
                      fragment="Dimensions [1,2) of input[shape=[3,3]] must match dimensions [1,2) of updates[shape=[2,2]]")
    assert_same_error("ScatterNd", dict(indices=np.array([[1]], np.int32), updates=np.ones(1, np.float32),
                                        shape=np.array([-3], np.int32)), fragment="Dimension -3 must be >= 0")
    assert_same_error("ScatterNd", dict(indices=np.array([4], np.int32), updates=np.ones(3, np.float32),
                                        shape=np.array([5, 3], np.int32)),
                      fragment="Dimensions [0,1) of indices[shape=[1]] = 1 must match dimensions [0,1) of updates[shape=[3]] = 3")
    assert_same_error("ScatterNd", dict(indices=np.array([4], np.int32), updates=np.ones(1, np.float32),
                                        shape=np.array([5, 1], np.int32)))
    assert_same_error("ScatterNd", dict(indices=np.array([[1]], np.int64), updates=np.ones((1, 1), np.float32),
                                        shape=np.array([2**40, 2**40], np.int64)),
                      fragment="would have more than 2**63 - 1 elements")
    assert_same_error("ScatterNd", dict(indices=np.array([[1]], np.int32), updates=np.ones((1, 0), np.float32),
                                        shape=np.array([3, 0], np.int32)),
                      fragment="Indices and updates specified for empty output shape")
    assert_same_error("ScatterNd", dict(indices=np.array([[1]], np.int32), updates=np.float32(1),
                                        shape=np.array([3], np.int32)),
                      fragment="Updates shape must have rank at least one")


# ---- UnsortedSegmentSum -----------------------------------------------------------------------------------

def segment_case(rng, dtype, negatives=True, min_segments=0):
    drank = int(rng.integers(1, 4))
    dshape = random_shape(rng, drank, drank, 4)
    irank = int(rng.integers(0, drank + 1))
    num = int(rng.integers(min_segments, 6))
    lo = -2 if negatives else 0
    ids = index_array(rng, dshape[:irank], lo, max(num, 1), str(rng.choice(INDEX_DTYPES)))
    if num == 0:
        ids = np.full(ids.shape, -1, ids.dtype)
    return dict(data=random_array(rng, dshape, dtype), segment_ids=ids,
                num_segments=np.array(num, str(rng.choice(["int32", "int64"]))))


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_unsorted_segment_sum(rng, dtype):
    for _ in range(N_DRAWS):
        matches_or_runs("UnsortedSegmentSum", segment_case(rng, dtype))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_unsorted_segment_sum_grad(rng, dtype):
    for _ in range(N_DRAWS):
        # TensorFlow's own gradient fails for num_segments == 0 (it gathers from an empty tensor)
        assert_grad_matches("UnsortedSegmentSum", segment_case(rng, dtype, min_segments=1), wrt=["data"], rng=rng)


def test_unsorted_segment_sum_errors(rng):
    d = random_array(rng, (3, 2), "float32")
    assert_same_error("UnsortedSegmentSum", dict(data=d, segment_ids=np.array([1, 3, 1], np.int32),
                                                 num_segments=np.int32(3)),
                      fragment="segment_ids[1] = 3 is out of range [0, 3)")
    assert_same_error("UnsortedSegmentSum", dict(data=d.reshape(1, 3, 2), segment_ids=np.array([[0, 1, 5]], np.int64),
                                                 num_segments=np.int32(3)),
                      fragment="segment_ids[0,2] = 5 is out of range [0, 3)")
    assert_same_error("UnsortedSegmentSum", dict(data=d, segment_ids=np.array([1, 2], np.int32),
                                                 num_segments=np.int32(3)),
                      fragment="data.shape = [3,2] does not start with segment_ids.shape = [2]")
    assert_same_error("UnsortedSegmentSum", dict(data=d, segment_ids=np.array([0, 0, 0], np.int32),
                                                 num_segments=np.int32(-1)),
                      fragment="num_segments == -1 must not be negative")


# ---- OneHot -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_one_hot(rng, dtype):
    for _ in range(N_DRAWS):
        shape = random_shape(rng, 0, 3, 4)
        depth = int(rng.integers(0, 6))
        tidt = str(rng.choice(["uint8", "int8", "int32", "int64"]))
        lo = 0 if tidt == "uint8" else -2
        ind = index_array(rng, shape, lo, depth + 2, tidt)
        on, off = random_array(rng, (2,), dtype)
        axis = int(rng.integers(-1, len(shape) + 1))
        matches_or_runs("OneHot", dict(indices=ind, depth=np.int32(depth), on_value=on, off_value=off),
                        dict(axis=axis))


def test_one_hot_not_differentiable(rng):
    on, off = tfc.constant(np.float32(2)), tfc.constant(np.float32(0))
    with tfc.GradientTape() as tape:
        tape.watch([on, off])
        y = tfc.raw_ops.OneHot(indices=np.array([0, 2], np.int64), depth=np.int32(3), on_value=on, off_value=off)
    assert tape.gradient(y, [on, off]) == [None, None]


def test_one_hot_errors(rng):
    ind = np.array([0, 2], np.int32)
    v = np.float32(1)
    assert_same_error("OneHot", dict(indices=ind, depth=np.int32(3), on_value=v, off_value=v), dict(axis=-2),
                      fragment="Expected axis to be -1 or between [0, 2).  But received: -2")
    assert_same_error("OneHot", dict(indices=ind, depth=np.int32(-1), on_value=v, off_value=v),
                      fragment="depth must be non-negative, got: -1")
    assert_same_error("OneHot", dict(indices=ind, depth=np.array([3], np.int32), on_value=v, off_value=v),
                      fragment="depth must be a scalar, but got: [1]")
    assert_same_error("OneHot", dict(indices=ind, depth=np.int32(3), on_value=np.ones(1, np.float32), off_value=v),
                      fragment="on_value must be a scalar, but got: [1]")


# ---- Range --------------------------------------------------------------------------------------------------

RANGE_DTYPES = ["int32", "int64", "int8", "int16", "float32", "float64", "float16", "bfloat16"]


@pytest.mark.parametrize("dtype", RANGE_DTYPES)
def test_range(rng, dtype):
    for _ in range(N_DRAWS * 2):
        if "int" in dtype:
            start = int(rng.integers(-20, 20))
            delta = int(rng.choice([-1, 1])) * int(rng.integers(1, 6))
            limit = start + delta * int(rng.integers(0, 12)) + int(rng.integers(-1, 2)) * (1 if delta > 0 else -1)
            if (delta > 0 and limit < start) or (delta < 0 and limit > start):
                limit = start
        else:
            start = float(rng.uniform(-5, 5))
            delta = float(rng.choice([-1, 1]) * rng.uniform(0.1, 2))
            limit = start + delta * float(rng.uniform(0, 12))
        check_range(start, limit, delta, dtype)


def check_range(start, limit, delta, dtype):
    """tf.raw_ops.Range infers Tidx from Python/numpy scalars itself (int32 / float32), so TensorFlow gets
    tensors of the dtype under test."""
    inputs = {k: tfc.constant(np.array(v), dtype=dtype) for k, v in (("start", start), ("limit", limit),
                                                                      ("delta", delta))}
    got = run_tfc("Range", inputs)
    assert got.dtype.name == dtype
    try:
        want = tf.raw_ops.Range(**{k: tf.constant(v.numpy()) for k, v in inputs.items()})
    except tf.errors.NotFoundError:  # TensorFlow has no CPU kernel for this dtype: values by hand
        want = np.array([inputs["start"].numpy() + i * inputs["delta"].numpy() for i in range(got.shape[0])])
        assert got.shape[0] == max(0, -(-(int(limit) - int(start)) // int(delta)))
    assert_close(got, want, dtype=dtype)


def test_range_errors():
    i32 = lambda v: np.int32(v)  # noqa: E731
    assert_same_error("Range", dict(start=i32(0), limit=i32(10), delta=i32(0)), fragment="Requires delta != 0: 0")
    assert_same_error("Range", dict(start=i32(0), limit=i32(10), delta=i32(-1)),
                      fragment="Requires start >= limit when delta < 0: 0/10")
    assert_same_error("Range", dict(start=i32(10), limit=i32(0), delta=i32(1)),
                      fragment="Requires start <= limit when delta > 0: 10/0")
    assert_same_error("Range", dict(start=np.float32(0), limit=np.float32(1e30), delta=np.float32(1)),
                      fragment="Requires ((limit - start) / delta) <= 9223372036854775807")
    assert_same_error("Range", dict(start=np.int64(-2**63), limit=np.int64(2**63 - 1), delta=np.int64(1)),
                      fragment="Requires ((limit - start) / delta) <= 9223372036854775807")
    assert_same_error("Range", dict(start=np.float32(0), limit=np.float32(np.inf), delta=np.float32(1)))


def test_range_int_extremes():
    for s, l, d, dt in [(-2**63, 2**63 - 1, 2**62, "int64"), (-2**31, 2**31 - 1, 2**30, "int32"),
                        (2**62, -2**62, -2**61, "int64"), (2**31 - 10, 2**31 - 1, 5, "int32")]:
        check_range(s, l, d, dt)


# ---- Where ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL_DTYPES + ["bool"])
def test_where(rng, dtype):
    for _ in range(N_DRAWS):
        shape = random_shape(rng, 1, 5, 5)
        x = random_array(rng, shape, dtype)
        if dtype != "bool":
            x = np.where(rng.random(shape) < 0.5, np.zeros_like(x), x)
        got = tfc.raw_ops.Where(input=x).numpy()
        want = tf.raw_ops.Where(condition=x).numpy()
        assert got.dtype == np.int64 and got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_where_nan_and_signed_zero():
    x = np.array([[0.0, np.nan], [-0.0, -1.0]], np.float32)
    np.testing.assert_array_equal(tfc.raw_ops.Where(input=x).numpy(), tf.raw_ops.Where(condition=x).numpy())


def test_where_scalar_rejected():
    with pytest.raises(tfc.InvalidArgumentError, match="Where"):
        tfc.raw_ops.Where(input=np.bool_(True))
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.raw_ops.Where(condition=np.bool_(True))


# ---- ReverseV2 -----------------------------------------------------------------------------------------------

def reverse_case(rng, dtype, allow_empty=True):
    shape = random_shape(rng, 0, 5, 4, allow_empty)
    r = len(shape)
    k = int(rng.integers(0, r + 1))
    axes = [int(a) for a in rng.permutation(r)[:k]]
    axes = [a - r if rng.random() < 0.3 else a for a in axes]
    return dict(tensor=random_array(rng, shape, dtype), axis=np.array(axes, str(rng.choice(["int32", "int64"]))))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_reverse_v2(rng, dtype):
    for _ in range(N_DRAWS):
        matches_or_runs("ReverseV2", reverse_case(rng, dtype))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_reverse_v2_grad(rng, dtype):
    for _ in range(N_DRAWS):
        assert_grad_matches("ReverseV2", reverse_case(rng, dtype, allow_empty=False), wrt=["tensor"], rng=rng)


def test_reverse_v2_errors(rng):
    x = random_array(rng, (2, 3), "float32")
    assert_same_error("ReverseV2", dict(tensor=x, axis=np.array([1, -1], np.int32)),
                      fragment="axis 1 specified more than once.")
    assert_same_error("ReverseV2", dict(tensor=x, axis=np.array([2], np.int32)), fragment="'axis'[0] = 2")
    assert_same_error("ReverseV2", dict(tensor=x, axis=np.int32(1)), fragment="'dims' must be 1-dimension, not 0")


# ---- Cumsum ----------------------------------------------------------------------------------------------------

def cumsum_case(rng, dtype, allow_empty=True):
    shape = random_shape(rng, 1, 4, 6, allow_empty)
    axis = int(rng.integers(-len(shape), len(shape)))
    lo, hi = (-1.0, 1.0) if dtype in FLOAT_DTYPES else (0, 4) if dtype == "uint8" else (-3, 4)
    return (dict(x=random_array(rng, shape, dtype, lo, hi), axis=np.array(axis, str(rng.choice(["int32", "int64"])))),
            dict(exclusive=bool(rng.random() < 0.5), reverse=bool(rng.random() < 0.5)))


@pytest.mark.parametrize("dtype", REAL_DTYPES)
def test_cumsum(rng, dtype):
    for _ in range(N_DRAWS):
        inputs, attrs = cumsum_case(rng, dtype)
        matches_or_runs("Cumsum", inputs, attrs)


def test_cumsum_integer_wraps_like_tensorflow():
    x = np.array([100, 100, 100], np.int8)
    assert_op_matches("Cumsum", dict(x=x, axis=np.int32(0)))


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_cumsum_grad(rng, dtype):
    for _ in range(N_DRAWS):
        inputs, attrs = cumsum_case(rng, dtype, allow_empty=False)
        assert_grad_matches("Cumsum", inputs, attrs, wrt=["x"], rng=rng)


def test_cumsum_errors(rng):
    x = random_array(rng, (2, 3), "float32")
    assert_same_error("Cumsum", dict(x=x, axis=np.int32(2)), fragment="Expected scan axis in the range [-2, 2), but got 2")
    assert_same_error("Cumsum", dict(x=x, axis=np.array([1], np.int32)), fragment="axis must be a scalar, not [1]")


# ---- TopKV2 -----------------------------------------------------------------------------------------------------

TOPK_DTYPES = FLOAT_DTYPES + ALL_INT_DTYPES


def topk_case(rng, dtype, allow_empty=True, ties=False):
    shape = random_shape(rng, 1, 3, 8, allow_empty)
    n = shape[-1]
    k = int(rng.integers(0, n + 1))
    if ties and dtype in FLOAT_DTYPES:
        x = np.floor(random_array(rng, shape, "float64", 0, 4)).astype(random_array(rng, (), dtype).dtype)
    elif dtype not in FLOAT_DTYPES:
        x = random_array(rng, shape, dtype, 0, 4) if ties else random_array(rng, shape, dtype, -100, 100)
    else:
        x = random_array(rng, shape, dtype)
    attrs = dict(sorted=bool(rng.random() < 0.7))
    if rng.random() < 0.3:
        attrs["index_type"] = str(rng.choice(["int64", "int16"]))
    return dict(input=x, k=np.array(k, str(rng.choice(["int32", "int64"])))), attrs


def by_index(outs):
    """Unsorted top-k: canonical order (by index) of (values, indices) per row."""
    v, i = outs
    order = np.argsort(i, axis=-1, kind="stable")
    return [np.take_along_axis(v, order, -1), np.take_along_axis(i, order, -1)]


@pytest.mark.parametrize("dtype", TOPK_DTYPES)
def test_top_k(rng, dtype):
    for _ in range(N_DRAWS):
        inputs, attrs = topk_case(rng, dtype, ties=rng.random() < 0.5)
        post = None if attrs["sorted"] else by_index
        matches_or_runs("TopKV2", inputs, attrs, postprocess=post)


def test_top_k_long_rows(rng):
    for dtype in ["float32", "float64", "int32", "bfloat16"]:
        x = random_array(rng, (3, 700), dtype, -50, 50) if dtype == "int32" else random_array(rng, (3, 700), dtype)
        for k in [1, 5, 200, 700]:
            assert_op_matches("TopKV2", dict(input=x, k=np.int32(k)))
            assert_op_matches("TopKV2", dict(input=x, k=np.int32(k)), dict(sorted=False), postprocess=by_index)


def test_top_k_inf_and_signed_zeros():
    x = np.array([[1.0, -0.0, 3.0, np.inf, -np.inf, 0.0, -0.0, 3.0, -np.inf]], np.float32)
    for k in [1, 2, 4, 7, 9]:
        assert_op_matches("TopKV2", dict(input=x, k=np.int32(k)))
        assert_op_matches("TopKV2", dict(input=x.astype(np.float64), k=np.int32(k)))


def test_top_k_nan_is_largest():
    # TensorFlow's order of NaN depends on its algorithm (k == 1, k == n, heap); tfc puts NaN first always.
    x = np.array([[1.0, np.nan, 3.0, np.inf, np.nan, 2.0]], np.float32)
    for k in [1, 3, 6]:
        v, i = tfc.raw_ops.TopKV2(input=x, k=np.int32(k))
        assert i.numpy().tolist()[0] == [1, 4, 3, 2, 5, 0][:k]


@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_top_k_grad(rng, dtype):
    for _ in range(N_DRAWS):
        inputs, attrs = topk_case(rng, dtype, allow_empty=False)
        attrs.pop("index_type", None)  # TensorFlow's gradient adds int32 offsets to the indices: int32 only
        attrs["sorted"] = True  # unsorted output order is unspecified, and with it where each upstream grad goes
        assert_grad_matches("TopKV2", inputs, attrs, wrt=["input"], rng=rng)


def test_top_k_errors(rng):
    x = random_array(rng, (1, 2), "float32")
    assert_same_error("TopKV2", dict(input=x, k=np.int32(3)),
                      fragment="input must have at least k columns. Had 2, needed 3")
    assert_same_error("TopKV2", dict(input=x, k=np.int32(-1)), fragment="Need k >= 0, got -1")
    assert_same_error("TopKV2", dict(input=np.float32(1), k=np.int32(1)), fragment="input must be >= 1-D, got shape []")
    assert_same_error("TopKV2", dict(input=x, k=np.array([1], np.int32)), fragment="k must be scalar, got shape [1]")


# ---- C wrappers (include/tfc/ops/indexing.h) ------------------------------------------------------------------

def _call(fn, restype, *args):
    """Calls a tfc_* wrapper through ctypes (args already ctypes values), raising its status as tfc.OpError."""
    import ctypes
    from tfc._lib import Status, ctx, lib, raise_status
    st = Status()
    f = getattr(lib, fn)
    f.restype = restype
    r = f(ctypes.c_void_p(ctx()), *args, ctypes.byref(st))
    if not r:
        raise_status(st)
    return r


def test_c_wrappers(rng):
    import ctypes
    T = lambda t: ctypes.c_void_p(t.handle)  # noqa: E731
    I64 = ctypes.c_int64
    wrap = lambda fn, *a: tfc.Tensor(_call(fn, ctypes.c_void_p, *a))  # noqa: E731
    p0 = random_array(rng, (5, 3), "float32")
    p, ind = tfc.constant(p0), tfc.constant(np.array([[4, 0], [2, 2]], np.int32))
    assert_close(wrap("tfc_gather", T(p), T(ind), I64(0), I64(0)), tf.gather(p0, [[4, 0], [2, 2]]))
    ind64 = tfc.constant(np.array([2, 0], np.int64))  # keep every tfc.Tensor alive while its handle is used
    assert_close(wrap("tfc_gather", T(p), T(ind64), I64(-1), I64(0)), tf.gather(p0, [2, 0], axis=-1))
    assert_close(wrap("tfc_gather_nd", T(p), T(ind)), tf.gather_nd(p0, [[4, 0], [2, 2]]))
    dims = (I64 * 2)(4, 3)
    upd = random_array(rng, (2, 2, 3), "float32")
    sidx = np.array([[[1], [3]], [[1], [0]]], np.int32)
    t_sidx, t_upd = tfc.constant(sidx), tfc.constant(upd)
    assert_close(wrap("tfc_scatter_nd", T(t_sidx), T(t_upd), dims, ctypes.c_int(2)), tf.scatter_nd(sidx, upd, [4, 3]))
    ids = np.array([1, -1, 1, 0, 2], np.int32)
    t_ids = tfc.constant(ids)
    assert_close(wrap("tfc_unsorted_segment_sum", T(p), T(t_ids), I64(3)), tf.math.unsorted_segment_sum(p0, ids, 3))
    t_oh = tfc.constant(np.array([0, 2, 5], np.int64))
    oh = wrap("tfc_one_hot", T(t_oh), ctypes.c_int32(3), ctypes.c_double(2.0), ctypes.c_double(-1.0), I64(0),
              ctypes.c_int(0))
    assert_close(oh, tf.one_hot([0, 2, 5], 3, on_value=2.0, off_value=-1.0, axis=0))
    r = wrap("tfc_range", ctypes.c_double(1), ctypes.c_double(11), ctypes.c_double(3), ctypes.c_int(0))
    assert r.dtype.name == "int32" and r.numpy().tolist() == [1, 4, 7, 10]
    r = wrap("tfc_range", ctypes.c_double(0), ctypes.c_double(1), ctypes.c_double(0.25), ctypes.c_int(0))
    assert r.dtype.name == "float32" and r.numpy().tolist() == [0, 0.25, 0.5, 0.75]
    with pytest.raises(tfc.InvalidArgumentError, match="Requires delta != 0"):
        wrap("tfc_range", ctypes.c_double(0), ctypes.c_double(1), ctypes.c_double(0), ctypes.c_int(0))
    t_cond = tfc.constant(p0 > 0)
    assert_close(wrap("tfc_where", T(t_cond)), tf.where(p0 > 0))
    axes = (I64 * 2)(0, -1)
    assert_close(wrap("tfc_reverse", T(p), axes, ctypes.c_int(2)), tf.reverse(p0, [0, -1]))
    assert_close(wrap("tfc_cumsum", T(p), I64(1), ctypes.c_bool(True), ctypes.c_bool(True)),
                 tf.math.cumsum(p0, 1, exclusive=True, reverse=True))
    vals, idx = ctypes.c_void_p(), ctypes.c_void_p()
    _call("tfc_top_k", ctypes.c_bool, T(p), I64(2), ctypes.c_bool(True), ctypes.byref(vals), ctypes.byref(idx))
    tv, ti = tf.math.top_k(p0, 2)
    assert_close(tfc.Tensor(vals.value), tv)
    assert_close(tfc.Tensor(idx.value), ti)
    with pytest.raises(tfc.InvalidArgumentError, match="at least k columns"):
        _call("tfc_top_k", ctypes.c_bool, T(p), I64(4), ctypes.c_bool(True), ctypes.byref(vals), ctypes.byref(idx))
    with pytest.raises(tfc.InvalidArgumentError, match=r"indices\[0,0\] = 4 is not in \[0, 3\)"):
        wrap("tfc_gather", T(p), T(ind), I64(1), I64(0))
