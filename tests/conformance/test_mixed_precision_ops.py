"""float16 and bfloat16 ops against TensorFlow at the tolerances mixed precision needs.

- Every registered op accepts float16 and bfloat16 wherever TensorFlow's OpDef does (for ops with float32).
- Cast between float32/float64 and float16/bfloat16 is bit for bit TensorFlow's (round to nearest even, NaN
  stays NaN, overflow to infinity), on random bit patterns, ties and the special values.
- Per op, on fresh random inputs: outputs within 1e-3 relative (float16) / 1e-2 relative (bfloat16) of
  TensorFlow's; the GEMM-based ops (MatMul, BatchMatMulV2, Conv2D and both backprops) at sizes that reach
  their blocked paths (vdpbf16ps for bfloat16 where the CPU has it).
- Reductions over long rows, softmax and batch normalisation accumulate in float32: long sums, and a
  float16 softmax masked with -1e9, stay finite exactly where TensorFlow's do.
Where TensorFlow's kernel itself rounds intermediate results to the 16-bit type, tfc (which keeps them in
float32) must instead be at least as close to the float64 result (check_op).
"""
import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.framework import op_def_registry

import tfc
from tfc import ops as tfc_ops
from conftest import assert_close, np_dtype, random_array, require_ops

LOWP = ["float16", "bfloat16"]
RTOL = {"float16": 1e-3, "bfloat16": 1e-2}


def close(got, want, dtype, msg=""):
    """Within the dtype's relative tolerance; values near zero (|x| below a tenth of the tolerance times the
    output's largest) are compared absolutely at that scale, where summation order alone moves a rounded
    result."""
    assert_close(got, want, dtype=dtype, rtol=RTOL[dtype], atol=RTOL[dtype] * 0.1, msg=msg)


def run_both(op, inputs, attrs=None):
    t = getattr(tfc.raw_ops, op)(**inputs, **(attrs or {}))
    tf_attrs = {k: (tf.as_dtype(v.name) if isinstance(v, tfc.DType) else v) for k, v in (attrs or {}).items()}
    w = getattr(tf.raw_ops, op)(**inputs, **tf_attrs)
    t = t if isinstance(t, (list, tuple)) else [t]
    w = w if isinstance(w, (list, tuple)) else [w]
    return [x.numpy() for x in t], [x.numpy() for x in w]


def tf_float64(op, inputs, attrs=None):
    """TensorFlow's outputs for the same inputs widened to float64 (the exact value to compare against; float32
    where TensorFlow has no float64 kernel for the attrs, such as dilated Conv2DBackpropInput)."""
    for wide_dt in (np.float64, np.float32):
        wide = {k: (v.astype(wide_dt) if isinstance(v, np.ndarray) and v.dtype in (np.float16, np_dtype("bfloat16"))
                    else v) for k, v in inputs.items()}
        try:
            out = getattr(tf.raw_ops, op)(**wide, **(attrs or {}))
        except tf.errors.InvalidArgumentError:
            continue
        return [x.numpy() for x in (out if isinstance(out, (list, tuple)) else [out])]
    raise AssertionError("%s: TensorFlow has no float64 or float32 kernel for these inputs" % op)


def check_op(op, inputs, dtype, attrs=None, outputs=None):
    """tfc's outputs within the tolerance of TensorFlow's; where they are not, TensorFlow's kernel rounds
    intermediate results to float16/bfloat16 (its float16 Conv2DBackpropInput, Prod and column Means
    accumulate in float16, Selu and SquaredDifference round each step) and tfc's, computed in float32, must
    then be within the tolerance of the float64 result or at least as close to it as TensorFlow's."""
    got, want = run_both(op, inputs, attrs)
    exact = None
    for i in (outputs if outputs is not None else range(len(want))):
        assert got[i].dtype == want[i].dtype, "%s output %d: dtype %s, TensorFlow %s" % (op, i, got[i].dtype, want[i].dtype)
        g, w = got[i].astype(np.float64), want[i].astype(np.float64)
        rtol, atol = RTOL[dtype], RTOL[dtype] * 0.1 * max(1.0, float(np.max(np.abs(w), initial=0.0)))
        near_tf = np.abs(g - w) <= atol + rtol * np.abs(w)
        if near_tf.all():
            continue
        if exact is None:
            exact = tf_float64(op, inputs, attrs)
        e = exact[i].astype(np.float64)
        err, err_tf = np.abs(g - e), np.abs(w - e)
        ok = near_tf | (err <= atol + rtol * np.abs(e)) | (err <= err_tf)
        bad = np.argwhere(~ok)
        assert ok.all(), "%s %s output %d: %d elements neither near TensorFlow's nor as exact, e.g. %s" % (
            op, dtype, i, len(bad), [(tuple(int(v) for v in b), g[tuple(b)], w[tuple(b)], e[tuple(b)]) for b in bad[:4]])


# ---- registry --------------------------------------------------------------------------------------------

def test_registry_accepts_half_and_bfloat16_where_tensorflow_does():
    missing = []
    for name in tfc_ops.op_names():
        od = op_def_registry.get(name)
        if name.startswith("_") or od is None:
            continue
        info = tfc_ops.op_info(name)
        for a in od.attr:
            if a.type != "type" or a.name not in info.type_allowed or info.type_allowed[a.name] is None:
                continue
            mine = {d.name for d in info.type_allowed[a.name]}
            if "float32" not in mine:
                continue
            theirs = ({tf.as_dtype(t).name for t in a.allowed_values.list.type}
                      if a.HasField("allowed_values") else None)
            for want in LOWP:
                if (theirs is None or want in theirs) and want not in mine:
                    missing.append("%s.%s: %s" % (name, a.name, want))
    assert not missing, "ops without a dtype TensorFlow allows: " + ", ".join(missing)


@pytest.mark.parametrize("dtype", LOWP)
def test_hash_table_half_values(rng, dtype):
    """HashTableV2's op def allows float16/bfloat16 values (TensorFlow registers no CPU kernel for them: NOT_FOUND
    there); tfc's table gives each found key its value rounded to the dtype as TensorFlow's Cast rounds, and the
    default for the others."""
    keys = rng.choice(1000, size=8, replace=False).astype(np.int64)
    vals = random_array(rng, (8,), "float32", -50, 50)
    pick = rng.permutation(8)[:5]
    probe = np.concatenate([keys[pick], np.array([1000, 1001], np.int64)])
    h = tfc.raw_ops.HashTableV2(key_dtype="int64", value_dtype=dtype)
    tfc.raw_ops.InitializeTableV2(table_handle=h, keys=keys, values=tfc.raw_ops.Cast(x=vals, DstT=dtype))
    found = tfc.raw_ops.LookupTableFindV2(table_handle=h, keys=probe,
                                          default_value=tfc.raw_ops.Cast(x=np.float32(-7.5), DstT=dtype))
    want = tf.cast(tf.cast(np.concatenate([vals[pick], [-7.5, -7.5]]).astype(np.float32), dtype), tf.float32)
    np.testing.assert_array_equal(np.asarray(tfc.raw_ops.Cast(x=found, DstT="float32")), want.numpy())


# ---- Cast ------------------------------------------------------------------------------------------------

def _special_floats(rng, n):
    bits = rng.integers(0, 2 ** 32, size=n, dtype=np.uint64).astype(np.uint32)
    q = n // 8
    bits[:q] = (bits[:q] & 0xFFFF0000) | 0x8000          # bfloat16 ties
    bits[q:2 * q] = (bits[q:2 * q] & 0xFFFFE000) | 0x1000  # float16 ties
    # float16's subnormal range and its overflow boundary
    bits[2 * q:3 * q] = (bits[2 * q:3 * q] & 0x807FFFFF) | ((rng.integers(0x60, 0x72, size=q).astype(np.uint32)) << 23)
    special = [0x7F800001, 0xFFC00001, 0x7FC00000, 0x7F800000, 0xFF800000, 0x477FF000, 0x477FEFFF, 0x33000000,
               0x33000001, 0x00000001, 0x80000000, 0x7F7FFFFF, 0x7F7F8000, 0x387FE000]
    bits[3 * q:3 * q + len(special)] = special
    return bits.view(np.float32)


@pytest.mark.parametrize("dst", LOWP)
def test_cast_is_bitwise_tensorflow(rng, dst):
    x = _special_floats(rng, 1 << 16)
    for src in (x, x.astype(np.float64) * rng.choice([1.0, 1.0 + 2.0 ** -30], size=x.shape)):
        got, want = run_both("Cast", dict(x=src), dict(DstT=tfc.as_dtype(dst)))
        g, w = got[0].view(np.uint16), want[0].view(np.uint16)
        bad = np.nonzero(g != w)[0]
        assert bad.size == 0, "%s -> %s: %d differ, e.g. %r" % (
            src.dtype, dst, bad.size, [(float(src[i]), hex(g[i]), hex(w[i])) for i in bad[:5]])
        # and back to float32, exactly
        back_t, back_w = run_both("Cast", dict(x=want[0]), dict(DstT=tfc.float32))
        np.testing.assert_array_equal(back_t[0].view(np.uint32), back_w[0].view(np.uint32))


# ---- per op ----------------------------------------------------------------------------------------------

UNARY = {  # op: (low, high)
    "Exp": (-8, 8), "Log": (0.01, 10), "Sqrt": (0, 10), "Rsqrt": (0.05, 10), "Tanh": (-4, 4),
    "Sigmoid": (-10, 10), "Relu": (-3, 3), "Elu": (-3, 3), "Selu": (-3, 3), "Softplus": (-8, 8),
    "Softsign": (-5, 5), "Erf": (-3, 3), "Square": (-10, 10), "Neg": (-5, 5), "Abs": (-5, 5),
    "Reciprocal": (0.1, 5), "Sin": (-3, 3), "Cos": (-3, 3), "Log1p": (-0.5, 5), "Expm1": (-3, 3),
    "Relu6": (-3, 9),
}


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary(rng, op, dtype):
    require_ops(op)
    lo, hi = UNARY[op]
    key = "features" if op in ("Relu", "Elu", "Selu", "Softplus", "Softsign", "Relu6") else "x"
    check_op(op, {key: random_array(rng, (37, 129), dtype, lo, hi)}, dtype)


BINARY = ["AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "SquaredDifference", "Pow"]


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("op", BINARY)
def test_binary(rng, op, dtype):
    require_ops(op)
    lo = 0.1 if op in ("RealDiv", "Pow") else -4
    check_op(op, dict(x=random_array(rng, (8, 1, 65), dtype, lo, 4), y=random_array(rng, (1, 33, 65), dtype, lo, 2)),
             dtype)


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("shape", [(64, 96, 80), (300, 513, 129), (1, 700, 3)])
@pytest.mark.parametrize("trans", [(False, False), (True, False), (False, True), (True, True)])
def test_matmul(rng, dtype, shape, trans):
    m, k, n = shape
    ta, tb = trans
    a = random_array(rng, (k, m) if ta else (m, k), dtype)
    b = random_array(rng, (n, k) if tb else (k, n), dtype)
    check_op("MatMul", dict(a=a, b=b), dtype, dict(transpose_a=ta, transpose_b=tb))


@pytest.mark.parametrize("dtype", LOWP)
def test_batch_matmul(rng, dtype):
    check_op("BatchMatMulV2", dict(x=random_array(rng, (3, 1, 40, 70), dtype), y=random_array(rng, (2, 70, 45), dtype)),
             dtype, dict(adj_x=False, adj_y=False))
    check_op("BatchMatMulV2", dict(x=random_array(rng, (6, 200, 30), dtype), y=random_array(rng, (6, 50, 200), dtype)),
             dtype, dict(adj_x=True, adj_y=True))


CONVS = [  # input [n, h, w, c], filter [kh, kw, c, o], strides, padding, dilations
    ((4, 13, 13, 32), (3, 3, 32, 64), 1, "VALID", 1),
    ((2, 28, 28, 1), (3, 3, 1, 32), 1, "VALID", 1),
    ((2, 15, 17, 24), (5, 3, 24, 40), 2, "SAME", 1),
    ((2, 9, 9, 16), (1, 1, 16, 48), 1, "VALID", 1),
    ((1, 12, 12, 8), (3, 3, 8, 16), 1, "SAME", 2),
]


@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_conv2d_and_backprops(rng, dtype, case):
    xs, fs, s, pad, d = CONVS[case]
    attrs = dict(strides=[1, s, s, 1], padding=pad, dilations=[1, d, d, 1])
    x, f = random_array(rng, xs, dtype), random_array(rng, fs, dtype)
    check_op("Conv2D", dict(input=x, filter=f), dtype, attrs)
    dy = random_array(rng, tf.raw_ops.Conv2D(input=x, filter=f, **attrs).shape, dtype)
    if d > 1:  # TensorFlow's CPU backprop kernels have no dilations
        return
    check_op("Conv2DBackpropInput", dict(input_sizes=np.array(xs, np.int32), filter=f, out_backprop=dy), dtype, attrs)
    check_op("Conv2DBackpropFilter", dict(input=x, filter_sizes=np.array(fs, np.int32), out_backprop=dy), dtype, attrs)


@pytest.mark.parametrize("dtype", LOWP)
def test_bias_add_softmax_batchnorm(rng, dtype):
    x = random_array(rng, (6, 7, 5, 24), dtype, -3, 3)
    check_op("BiasAdd", dict(value=x, bias=random_array(rng, (24,), dtype)), dtype)
    check_op("Softmax", dict(logits=random_array(rng, (50, 300), dtype, -8, 8)), dtype)
    check_op("LogSoftmax", dict(logits=random_array(rng, (50, 300), dtype, -8, 8)), dtype)
    scale, offset = random_array(rng, (24,), "float32", 0.5, 2), random_array(rng, (24,), "float32")
    mean, var = random_array(rng, (24,), "float32"), random_array(rng, (24,), "float32", 0.5, 2)
    for training in (True, False):
        # y in the data's dtype; batch statistics and the reserve outputs in float32, as TensorFlow's
        got, want = run_both("FusedBatchNormV3", dict(x=x, scale=scale, offset=offset, mean=mean, variance=var),
                             dict(epsilon=1e-3, is_training=training, exponential_avg_factor=1.0))
        close(got[0], want[0], dtype, "FusedBatchNormV3 y: ")
        for i in (1, 2):
            assert got[i].dtype == np.float32
            assert_close(got[i], want[i], dtype="float32", rtol=1e-4, atol=1e-5, msg="FusedBatchNormV3 output %d: " % i)


# ---- float32 accumulation --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", LOWP)
@pytest.mark.parametrize("op", ["Sum", "Mean", "Max", "Min", "Prod", "EuclideanNorm"])
def test_reductions_over_long_rows(rng, op, dtype):
    require_ops(op)
    lo, hi = (0.999, 1.001) if op == "Prod" else (-1, 9)
    x = random_array(rng, (3, 40000), dtype, lo, hi)
    for axis in (1, 0):
        inputs, attrs = dict(input=x, axis=np.array([axis], np.int32)), dict(keep_dims=False)
        got, want = run_both(op, inputs, attrs)
        assert np.isfinite(got[0].astype(np.float32)).tolist() == np.isfinite(want[0].astype(np.float32)).tolist()
        check_op(op, inputs, dtype, attrs)
    if op == "Mean":
        # The sum of 40000 eights, 320000, is beyond float16's 65504: TensorFlow's Mean rounds the float32
        # sum to the dtype before dividing (T(T(sum) / T(count))), so float16 gives inf and bfloat16 8; tfc
        # the same.
        big = np.full((40000,), 8.0, dtype=np_dtype(dtype))
        got, want = run_both("Mean", dict(input=big, axis=np.array([0], np.int32)), dict(keep_dims=False))
        assert float(want[0]) == (float("inf") if dtype == "float16" else 8.0)
        assert float(got[0]) == float(want[0])


@pytest.mark.parametrize("dtype", LOWP)
def test_masked_softmax_stays_finite(rng, dtype):
    logits = random_array(rng, (16, 1000), "float32", -5, 5)
    mask = rng.random((16, 1000)) < 0.7
    mask[3] = True   # a row that is all mask
    mask[4] = False  # and one without any
    masked = np.where(mask, -1e9, logits).astype(np_dtype(dtype))  # -1e9 is -inf in float16
    for op in ("Softmax", "LogSoftmax"):
        got, want = run_both(op, dict(logits=masked))
        np.testing.assert_array_equal(np.isfinite(got[0].astype(np.float32)), np.isfinite(want[0].astype(np.float32)))
        np.testing.assert_array_equal(np.isnan(got[0].astype(np.float32)), np.isnan(want[0].astype(np.float32)))
        close(got[0], want[0], dtype, "%s: " % op)
