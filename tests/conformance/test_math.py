"""Elementwise math ops against TensorFlow on fresh random inputs and random (broadcasting, rank 0, size 0)
shapes: binary arithmetic, unary functions, comparisons, logical ops, SelectV2, Cast, ClipByValue, AddN and the
*Grad helpers; gradients (first and second order) against tf.GradientTape; errors against TensorFlow's.

Each op runs in every dtype that both the op definition and TensorFlow's CPU kernels accept (TensorFlow has no
CPU kernel for integer RealDiv/Reciprocal, nor for int8/int16 Round). Known, deliberate difference: TensorFlow
2.21's CPU Round on int32/int64 returns zeros; tfc returns the input unchanged (test_round_integers_identity)."""
import numpy as np
import pytest

from conftest import (FLOAT_DTYPES, assert_both_raise, assert_close, assert_grad_matches, assert_op_matches,
                      broadcastable_shapes, np_dtype, random_array, random_shape, require_ops, tf, tfc)

SIGNED_INTS = ["int8", "int16", "int32", "int64"]
INTS = SIGNED_INTS + ["uint8"]
REAL = FLOAT_DTYPES + INTS
SIGNED = FLOAT_DTYPES + SIGNED_INTS
ALL = REAL + ["bool"]
TRIALS = 4

SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 1e30, -1e30, 0.5, -0.5, 1.5, 2.5, -2.5, 65504.0]


def with_specials(rng, x, p=0.2):
    """x with some entries replaced by NaN, infinities, signed zeros, huge and half-way values (floats only)."""
    if x.size == 0 or x.dtype.kind != "f" and x.dtype != np_dtype("bfloat16"):
        return x
    x = x.copy()
    flat = x.reshape(-1)
    mask = rng.random(flat.size) < p
    vals = rng.choice(np.array(SPECIALS, dtype=np.float64), size=int(mask.sum()))
    with np.errstate(over="ignore"):  # 1e30 becomes inf in float16
        flat[mask] = vals.astype(x.dtype)
    return x


def nonzero(rng, shape, dtype, lo, hi, signed=True):
    """Values with |v| in [lo, hi] and a random sign (ints: at least 1)."""
    if tfc.as_dtype(dtype).is_integer:
        v = rng.integers(max(1, int(lo)), int(hi) + 1, size=shape)
    else:
        v = rng.uniform(lo, hi, size=shape)
    if signed and dtype != "uint8":
        v = v * rng.choice([-1, 1], size=shape)
    return np.asarray(v).astype(np_dtype(dtype))


def rand(rng, shape, dtype, lo=-1.0, hi=1.0):
    if dtype in INTS and (lo, hi) == (-1.0, 1.0):
        lo, hi = -20, 21
    return random_array(rng, shape, dtype, lo, hi)


# ---- binary arithmetic ---------------------------------------------------------------------------------

def make_binary_inputs(rng, op, dtype, sa, sb):
    is_int = dtype in INTS
    if op in ("RealDiv", "DivNoNan", "FloorDiv", "FloorMod"):
        x = rand(rng, sa, dtype, -9, 9)
        y = nonzero(rng, sb, dtype, 1 if is_int else 0.25, 6 if is_int else 3)
        if not is_int and y.size and (op == "DivNoNan" or rng.random() < 0.3):
            y.reshape(-1)[rng.random(y.size) < 0.25] = 0  # IEEE results (inf, nan) or DivNoNan's 0
        if not is_int:
            x = with_specials(rng, x, 0.1)
        return x, y
    if op == "Pow":
        if is_int:
            return rand(rng, sa, dtype, -4, 5), rand(rng, sb, dtype, 0, 5)
        if rng.random() < 0.5:
            return rand(rng, sa, dtype, 0.1, 3), rand(rng, sb, dtype, -3, 3)
        # negative bases with integral exponents, zeros, and the odd NaN case
        x = rand(rng, sa, dtype, -3, 3)
        y = np.round(rand(rng, sb, "float64", -3, 3)).astype(np_dtype(dtype))
        return with_specials(rng, x, 0.1), y
    x, y = rand(rng, sa, dtype, -5, 5), rand(rng, sb, dtype, -5, 5)
    if not is_int:
        if op in ("Maximum", "Minimum") and rng.random() < 0.5:
            x, y = np.round(x), np.round(y)  # ties
        x, y = with_specials(rng, x, 0.1), with_specials(rng, y, 0.1)
    return x, y


BINARY = {
    "AddV2": REAL, "Sub": REAL, "Mul": REAL, "RealDiv": FLOAT_DTYPES, "DivNoNan": FLOAT_DTYPES,
    "FloorDiv": REAL, "FloorMod": REAL, "Pow": SIGNED, "Maximum": REAL, "Minimum": REAL,
    "SquaredDifference": FLOAT_DTYPES + ["int32", "int64"],
}


@pytest.mark.parametrize("op,dtype", [(op, dt) for op, dts in BINARY.items() for dt in dts])
def test_binary(rng, op, dtype):
    require_ops(op)
    for _ in range(TRIALS):
        sa, sb = broadcastable_shapes(rng)
        if rng.random() < 0.5:
            sa, sb = sb, sa
        x, y = make_binary_inputs(rng, op, dtype, sa, sb)
        assert_op_matches(op, dict(x=x, y=y))


@pytest.mark.parametrize("op", ["AddV2", "Sub", "Mul", "Maximum", "Minimum", "FloorDiv", "FloorMod"])
def test_binary_large_and_parallel(rng, op):
    """Sizes above the thread pool's threshold: same shape, row broadcast, scalar, short inner rows."""
    require_ops(op)
    for sa, sb in [((300, 257), (300, 257)), ((300, 257), (257,)), ((), (70000,)), ((40000, 2), (40000, 1))]:
        x, y = make_binary_inputs(rng, op, "float32", sa, sb)
        assert_op_matches(op, dict(x=x, y=y))


@pytest.mark.parametrize("dtype", INTS)
def test_integer_arithmetic_wraps(rng, dtype):
    info = np.iinfo(np_dtype(dtype))
    shape = (64,)
    x = rng.integers(info.min, info.max + 1, size=shape, dtype=np.int64).astype(np_dtype(dtype))
    y = rng.integers(info.min, info.max + 1, size=shape, dtype=np.int64).astype(np_dtype(dtype))
    x[:4] = [info.min, info.min, info.max, info.min]
    y[:4] = [-1 if dtype != "uint8" else 1, info.min, info.max, info.max]
    for op in ["AddV2", "Sub", "Mul", "Maximum", "Minimum", "FloorDiv", "FloorMod"]:
        yy = y.copy()
        if op in ("FloorDiv", "FloorMod"):
            yy[yy == 0] = 1
        assert_op_matches(op, dict(x=x, y=yy))
    if dtype in SIGNED_INTS:
        assert_op_matches("Pow", dict(x=x, y=rng.integers(0, 9, size=shape).astype(np_dtype(dtype))))
    if dtype in ("int32", "int64"):
        assert_op_matches("SquaredDifference", dict(x=x, y=y))


def test_floor_div_mod_signs():
    x = np.array([7, -7, 7, -7, 6, -6, 0, 1, -1], np.int32)
    y = np.array([2, 2, -2, -2, 3, 3, 5, -1, 7], np.int32)
    for dt in ["int8", "int16", "int32", "int64", "float32", "float64", "float16", "bfloat16"]:
        for op in ("FloorDiv", "FloorMod"):
            assert_op_matches(op, dict(x=x.astype(np_dtype(dt)), y=y.astype(np_dtype(dt))))
    f = np.array([7.5, -7.5, 7.5, -7.5, 6.0, -6.0, -1.0, 1.0], np.float32)
    g = np.array([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, np.inf, -np.inf], np.float32)
    assert_op_matches("FloorMod", dict(x=f, y=g))


def test_maximum_minimum_nan_and_signed_zero():
    x = np.array([np.nan, 1.0, np.nan, -0.0, 0.0, -np.inf], np.float32)
    y = np.array([1.0, np.nan, np.nan, 0.0, -0.0, np.inf], np.float32)
    for op in ("Maximum", "Minimum"):
        got = assert_op_matches(op, dict(x=x, y=y))[0]
        want = getattr(tf.raw_ops, op)(x=x, y=y).numpy()
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


# ---- unary -------------------------------------------------------------------------------------------------

UNARY = {  # op: (dtypes, low, high)
    "Neg": (SIGNED, -5, 5), "Abs": (SIGNED, -5, 5), "Sign": (SIGNED, -5, 5), "Square": (REAL, -5, 5),
    "Sqrt": (FLOAT_DTYPES, 0, 5), "Rsqrt": (FLOAT_DTYPES, 0.01, 5), "Reciprocal": (FLOAT_DTYPES, -5, 5),
    "Exp": (FLOAT_DTYPES, -10, 10), "Expm1": (FLOAT_DTYPES, -3, 3), "Log": (FLOAT_DTYPES, 0.01, 10),
    "Log1p": (FLOAT_DTYPES, -0.99, 5), "Sin": (FLOAT_DTYPES, -10, 10), "Cos": (FLOAT_DTYPES, -10, 10),
    "Tanh": (FLOAT_DTYPES, -5, 5), "Sigmoid": (FLOAT_DTYPES, -20, 20), "Erf": (FLOAT_DTYPES, -3, 3),
    "Floor": (FLOAT_DTYPES, -10, 10), "Ceil": (FLOAT_DTYPES, -10, 10), "Round": (FLOAT_DTYPES, -10, 10),
}


@pytest.mark.parametrize("op,dtype", [(op, dt) for op, (dts, _, _) in UNARY.items() for dt in dts])
def test_unary(rng, op, dtype):
    require_ops(op)
    _, lo, hi = UNARY[op]
    for i in range(TRIALS):
        x = rand(rng, random_shape(rng), dtype, lo, hi)
        if op == "Round" and i % 2:
            x = (np.round(rand(rng, x.shape, "float64", -20, 20)) / 2).astype(x.dtype)  # exact halves
        assert_op_matches(op, dict(x=x))


@pytest.mark.parametrize("op", [op for op, (dts, _, _) in UNARY.items() if "float32" in dts])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_unary_special_values(rng, op, dtype):
    """NaN, infinities, signed zeros, huge and tiny values, domain errors (log of a negative number)."""
    require_ops(op)
    x = np.array(SPECIALS + [-1.0, -3.0, 100.0, -100.0, 88.5, -88.5, 1e-7], np.float64)
    with np.errstate(over="ignore"):
        x = np.concatenate([x, rand(rng, (32,), "float64", -30, 30)]).astype(np_dtype(dtype))
    if op == "Erf" and dtype == "float64":
        x = x[~np.isinf(x)]  # TensorFlow 2.21 gives NaN for erf(+-inf) in float64 (1 in float32); tfc gives +-1
    assert_op_matches(op, dict(x=x))


def test_sigmoid_saturates_without_overflow():
    x = np.array([-1000, -100, -88, -30, -17, 0, 17, 30, 88, 100, 1000], np.float32)
    got = assert_op_matches("Sigmoid", dict(x=x))[0]
    assert np.all(np.isfinite(got)) and got[0] == 0 and got[-1] == 1
    assert_op_matches("Sigmoid", dict(x=x.astype(np.float64)))


def test_round_integers_identity(rng):
    """TensorFlow 2.21's CPU Round returns zeros for int32/int64 (a bug); tfc returns the input, as documented."""
    for dt in SIGNED_INTS:
        x = rand(rng, (3, 5), dt)
        np.testing.assert_array_equal(tfc.raw_ops.Round(x=x).numpy(), x)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64"])
def test_neg_abs_integer_minimum(dtype):
    info = np.iinfo(np_dtype(dtype))
    x = np.array([info.min, info.min + 1, -1, 0, 1, info.max], np_dtype(dtype))
    for op in ("Neg", "Abs", "Sign", "Square"):
        assert_op_matches(op, dict(x=x))


@pytest.mark.parametrize("op", ["SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "TanhGrad", "SigmoidGrad"])
@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_grad_helpers(rng, op, dtype):
    require_ops(op)
    lo, hi = {"TanhGrad": (-1, 1), "SigmoidGrad": (0, 1)}.get(op, (0.2, 3))
    for _ in range(TRIALS):
        shape = random_shape(rng)
        assert_op_matches(op, dict(y=rand(rng, shape, dtype, lo, hi), dy=rand(rng, shape, dtype, -2, 2)))


# ---- comparisons and logic ----------------------------------------------------------------------------------

COMPARE = {"Equal": ALL, "NotEqual": ALL, "Less": REAL, "LessEqual": REAL, "Greater": REAL, "GreaterEqual": REAL}


@pytest.mark.parametrize("op,dtype", [(op, dt) for op, dts in COMPARE.items() for dt in dts])
def test_compare(rng, op, dtype):
    require_ops(op)
    for _ in range(TRIALS):
        sa, sb = broadcastable_shapes(rng)
        x, y = rand(rng, sa, dtype, -3, 4), rand(rng, sb, dtype, -3, 4)
        if dtype in FLOAT_DTYPES:
            x, y = np.round(x), np.round(y)  # plenty of ties
            x, y = with_specials(rng, x, 0.1), with_specials(rng, y, 0.1)
        assert_op_matches(op, dict(x=x, y=y))


@pytest.mark.parametrize("op", ["Equal", "NotEqual"])
def test_equality_strings_and_incompatible_shapes(rng, op):
    require_ops(op)
    for _ in range(TRIALS):
        sa, sb = broadcastable_shapes(rng)
        x, y = random_array(rng, sa, "string"), random_array(rng, sb, "string")
        if x.size and y.size:
            x.reshape(-1)[0] = y.reshape(-1)[0]
        assert_op_matches(op, dict(x=x, y=y))
    attrs = dict(incompatible_shape_error=False)
    assert_op_matches(op, dict(x=rand(rng, (2,), "float32"), y=rand(rng, (3,), "float32")), attrs)
    assert_op_matches(op, dict(x=rand(rng, (2, 1), "int32"), y=rand(rng, (3,), "int32")), attrs)
    assert_op_matches(op, dict(x=random_array(rng, (4,), "string"), y=random_array(rng, (2, 3), "string")), attrs)
    assert_both_raise(op, dict(x=rand(rng, (2,), "float32"), y=rand(rng, (3,), "float32")))


@pytest.mark.parametrize("op", ["LogicalAnd", "LogicalOr"])
def test_logical_binary(rng, op):
    require_ops(op)
    for _ in range(TRIALS):
        sa, sb = broadcastable_shapes(rng)
        assert_op_matches(op, dict(x=random_array(rng, sa, "bool"), y=random_array(rng, sb, "bool")))
    assert_op_matches(op, dict(x=random_array(rng, (500, 300), "bool"), y=random_array(rng, (300,), "bool")))


def test_logical_not(rng):
    require_ops("LogicalNot")
    for _ in range(TRIALS):
        assert_op_matches("LogicalNot", dict(x=random_array(rng, random_shape(rng), "bool")))


# ---- SelectV2 ----------------------------------------------------------------------------------------------

def three_shapes(rng):
    out = random_shape(rng, 0, 4, 4)
    shapes = []
    for _ in range(3):
        s = [1 if rng.random() < 0.3 else d for d in out]
        shapes.append(tuple(s[int(rng.integers(0, len(s) + 1)):] if rng.random() < 0.3 else s))
    return shapes


@pytest.mark.parametrize("dtype", ALL + ["string"])
def test_select_v2(rng, dtype):
    require_ops("SelectV2")
    for _ in range(TRIALS):
        sc, st, se = three_shapes(rng)
        assert_op_matches("SelectV2", dict(condition=random_array(rng, sc, "bool"), t=rand(rng, st, dtype)
                                           if dtype != "string" else random_array(rng, st, "string"),
                                           e=rand(rng, se, dtype) if dtype != "string"
                                           else random_array(rng, se, "string")))
    big = (200, 301)
    assert_op_matches("SelectV2", dict(condition=random_array(rng, big, "bool"),
                                       t=rand(rng, big, "float32"), e=rand(rng, (), "float32")))


# ---- Cast --------------------------------------------------------------------------------------------------

def cast_source(rng, dtype, n=128):
    """n values of dtype (n a multiple of 64: TensorFlow's vectorised cast loop, which saturates out-of-range
    floats converted to int8/uint8/int16, covers whole blocks; its scalar tail keeps the low bits instead)."""
    if dtype == "bool":
        return random_array(rng, (n,), "bool")
    if dtype in INTS:
        info = np.iinfo(np_dtype(dtype))
        x = rng.integers(info.min, info.max + 1, size=n, dtype=np.int64)
        x[: n // 2] = rng.integers(-300, 300, size=n // 2)
        return np.clip(x, info.min, info.max).astype(np_dtype(dtype))
    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, 255.9, -0.7, -1.5, 2.0 ** 31, -2.0 ** 31 - 2.0 ** 9, 2.0 ** 63,
               65519.0, 65520.0, 1.0 + 2.0 ** -8, 1.0 + 3 * 2.0 ** -11, 3e9, -1e10, 40000.5]
    rest = n - len(special)
    x = np.concatenate([rng.uniform(-300, 300, rest // 2), rng.uniform(-3, 3, rest // 4),
                        10.0 ** rng.uniform(-8, 12, rest - rest // 2 - rest // 4) * rng.choice([-1, 1], rest - rest // 2 - rest // 4),
                        special])
    rng.shuffle(x)
    with np.errstate(over="ignore", invalid="ignore"):
        return x.astype(np_dtype(dtype))


@pytest.mark.parametrize("src", ALL)
@pytest.mark.parametrize("dst", ALL)
def test_cast(rng, src, dst):
    require_ops("Cast")
    x = cast_source(rng, src)
    if dst == "uint8" and src in ("float64", "float16"):
        # TensorFlow's vectorised float64/float16 -> uint8 loop packs through int16 and turns values in
        # [32768, 2^31) into 0 rather than 255; tfc saturates. Not compared.
        xf = x.astype(np.float64)
        x[(xf >= 32768) & (xf < 2.0 ** 31)] = 300
    assert_op_matches("Cast", dict(x=x), dict(DstT=tfc.as_dtype(dst)))


@pytest.mark.parametrize("src", ["float32", "float64"])
@pytest.mark.parametrize("dst", ["float16", "bfloat16", "float32"])
def test_cast_truncate(rng, src, dst):
    require_ops("Cast")
    x = cast_source(rng, src)
    assert_op_matches("Cast", dict(x=x), dict(DstT=tfc.as_dtype(dst), Truncate=True))


def test_cast_parallel_and_shapes(rng):
    for shape in [(), (0, 3), (300, 301)]:
        assert_op_matches("Cast", dict(x=rand(rng, shape, "float32", -50, 50)), dict(DstT=tfc.int32))
        assert_op_matches("Cast", dict(x=rand(rng, shape, "int32")), dict(DstT=tfc.float16))


def test_cast_string_unimplemented():
    tfc_exc, tf_exc = assert_both_raise("Cast", dict(x=np.array([b"a"], dtype=object)), dict(DstT=tfc.int32))
    assert type(tfc_exc).__name__ == "UnimplementedError"


# ---- ClipByValue, AddN -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", REAL)
def test_clip_by_value(rng, dtype):
    require_ops("ClipByValue")
    for _ in range(TRIALS):
        shape = random_shape(rng)
        t = rand(rng, shape, dtype, -5, 5)
        lo_shape = () if rng.random() < 0.5 else shape
        hi_shape = () if rng.random() < 0.5 else shape
        lo, hi = rand(rng, lo_shape, dtype, -4, 1), rand(rng, hi_shape, dtype, -1, 4)  # sometimes lo > hi
        if dtype in FLOAT_DTYPES:
            t, lo, hi = with_specials(rng, t, 0.1), with_specials(rng, lo, 0.05), with_specials(rng, hi, 0.05)
        assert_op_matches("ClipByValue", dict(t=t, clip_value_min=lo, clip_value_max=hi))
    assert_op_matches("ClipByValue", dict(t=rand(rng, (300, 300), "float32", -5, 5),
                                          clip_value_min=np.float32(-1), clip_value_max=np.float32(1)))


@pytest.mark.parametrize("dtype", REAL)
def test_add_n(rng, dtype):
    require_ops("AddN")
    for _ in range(TRIALS):
        shape = random_shape(rng)
        n = int(rng.integers(1, 6))
        assert_op_matches("AddN", dict(inputs=[rand(rng, shape, dtype) for _ in range(n)]))
    assert_op_matches("AddN", dict(inputs=[rand(rng, (70000,), dtype) for _ in range(3)]))


# ---- gradients -----------------------------------------------------------------------------------------------

GRAD_DTYPES = ["float32", "float64"]
GRAD_TOL = {"float32": (2e-4, 2e-4), "float64": (1e-10, 1e-10)}


def grad_inputs(rng, op, dtype, sa, sb):
    if op in ("RealDiv", "DivNoNan", "FloorMod", "FloorDiv"):
        return rand(rng, sa, dtype, -5, 5), nonzero(rng, sb, dtype, 0.3, 3)
    if op == "Pow":
        x = rand(rng, sa, dtype, 0.2, 3)
        if x.size and rng.random() < 0.5:  # x <= 0: dz/dy is 0 there (NaN-free mask), dz/dx may be NaN
            x.reshape(-1)[rng.random(x.size) < 0.3] = rng.choice([0.0, -1.0, -2.0])
        y = rand(rng, sb, dtype, -2, 3)
        if rng.random() < 0.5:
            y = np.round(y)
        return x, y
    x, y = rand(rng, sa, dtype, -3, 3), rand(rng, sb, dtype, -3, 3)
    if op in ("Maximum", "Minimum") and rng.random() < 0.5:
        x, y = np.round(x), np.round(y)  # ties: TensorFlow sends the gradient to x
    return x, y


@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_binary_gradients(rng, op, dtype):
    require_ops(op, "Sum", "Reshape")
    for _ in range(TRIALS):
        sa, sb = broadcastable_shapes(rng)
        x, y = grad_inputs(rng, op, dtype, sa, sb)
        assert_grad_matches(op, dict(x=x, y=y), rng=rng, rtol=GRAD_TOL[dtype][0], atol=GRAD_TOL[dtype][1])


UNARY_GRAD_RANGE = {"Sqrt": (0.1, 5), "Rsqrt": (0.1, 5), "Log": (0.1, 5), "Log1p": (-0.9, 5), "Reciprocal": (0.2, 4)}


@pytest.mark.parametrize("op", list(UNARY))
@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_unary_gradients(rng, op, dtype):
    require_ops(op)
    lo, hi = UNARY_GRAD_RANGE.get(op, (-3, 3))
    for _ in range(TRIALS):
        x = rand(rng, random_shape(rng), dtype, lo, hi)
        if op == "Reciprocal":
            x = x * rng.choice([-1, 1], size=x.shape).astype(x.dtype)
        assert_grad_matches(op, dict(x=x), rng=rng, rtol=GRAD_TOL[dtype][0], atol=GRAD_TOL[dtype][1])


@pytest.mark.parametrize("op", ["SqrtGrad", "RsqrtGrad", "ReciprocalGrad", "TanhGrad", "SigmoidGrad"])
@pytest.mark.parametrize("dtype", GRAD_DTYPES)
def test_grad_helper_gradients(rng, op, dtype):
    require_ops(op)
    lo, hi = {"TanhGrad": (-1, 1), "SigmoidGrad": (0, 1)}.get(op, (0.2, 3))
    for _ in range(TRIALS):
        shape = random_shape(rng)
        assert_grad_matches(op, dict(y=rand(rng, shape, dtype, lo, hi), dy=rand(rng, shape, dtype, -2, 2)), rng=rng,
                            rtol=GRAD_TOL[dtype][0], atol=GRAD_TOL[dtype][1])


@pytest.mark.parametrize("op", ["Tanh", "Sigmoid", "Sqrt", "Rsqrt", "Reciprocal", "Exp", "Log", "Sin", "Erf"])
def test_second_and_third_order(rng, op):
    """Nested tapes: d2y/dx2 and d3y/dx3 through the gradient ops' own gradients."""
    require_ops(op, "Sum", "Reshape")
    lo, hi = UNARY_GRAD_RANGE.get(op, (-2, 2))
    x = rand(rng, (7,), "float64", lo, hi)

    def run(lib):
        xt = lib.constant(x)
        with lib.GradientTape() as t3:
            t3.watch(xt)
            with lib.GradientTape() as t2:
                t2.watch(xt)
                with lib.GradientTape() as t1:
                    t1.watch(xt)
                    y = getattr(lib.raw_ops, op)(x=xt)
                g1 = t1.gradient(y, xt)
            g2 = t2.gradient(g1, xt)
        g3 = t3.gradient(g2, xt)
        return [g1.numpy(), g2.numpy(), g3.numpy()]

    for got, want in zip(run(tfc), run(tf)):
        assert_close(got, want, dtype="float64", rtol=1e-9, atol=1e-9)


def test_select_v2_gradients(rng):
    require_ops("SelectV2", "Sum", "Reshape")
    for dtype in GRAD_DTYPES:
        for _ in range(TRIALS):
            sc, st, se = three_shapes(rng)
            assert_grad_matches("SelectV2", dict(condition=random_array(rng, sc, "bool"), t=rand(rng, st, dtype),
                                                 e=rand(rng, se, dtype)), rng=rng)


def test_clip_by_value_gradients(rng):
    require_ops("ClipByValue", "Sum", "Reshape")
    for dtype in GRAD_DTYPES:
        for _ in range(TRIALS):
            shape = random_shape(rng, 1)
            t = np.round(rand(rng, shape, dtype, -4, 4) * 2) / 2  # some values on the bounds
            lo = rand(rng, () if rng.random() < 0.5 else shape, dtype, -2, 0).round()
            hi = rand(rng, () if rng.random() < 0.5 else shape, dtype, 0, 2).round()
            assert_grad_matches("ClipByValue", dict(t=t, clip_value_min=lo, clip_value_max=hi), rng=rng)


def test_add_n_and_cast_gradients(rng):
    require_ops("AddN", "Cast")
    for dtype in GRAD_DTYPES:
        shape = random_shape(rng)
        assert_grad_matches("AddN", dict(inputs=[rand(rng, shape, dtype) for _ in range(3)]), rng=rng)
    for src, dst in [("float32", "float64"), ("float64", "float32"), ("float32", "float16"), ("float64", "bfloat16"),
                     ("float32", "int32"), ("float64", "float64")]:
        assert_grad_matches("Cast", dict(x=rand(rng, (3, 4), src, -5, 5)), dict(DstT=tfc.as_dtype(dst)), rng=rng,
                            rtol=2e-2, atol=2e-2)


# ---- errors --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("op", list(BINARY))
def test_binary_errors(rng, op):
    assert_both_raise(op, dict(x=rand(rng, (2, 3), "float32"), y=rand(rng, (4,), "float32")))
    assert_both_raise(op, dict(x=random_array(rng, (2,), "bool"), y=random_array(rng, (2,), "bool")))


@pytest.mark.parametrize("op", ["FloorDiv", "FloorMod"])
@pytest.mark.parametrize("dtype", INTS)
def test_integer_division_by_zero(rng, op, dtype):
    x = rand(rng, (5,), dtype, 1, 9)
    y = rand(rng, (5,), dtype, 1, 9)
    y[2] = 0
    tfc_exc, tf_exc = assert_both_raise(op, dict(x=x, y=y))
    assert "Integer division by zero" in str(tfc_exc)


def test_pow_negative_integer_exponent(rng):
    tfc_exc, _ = assert_both_raise("Pow", dict(x=np.array([2, 3], np.int32), y=np.array([2, -1], np.int32)))
    assert "Integers to negative integer powers are not allowed" in str(tfc_exc)


def test_other_errors(rng):
    f = lambda *s: rand(rng, s, "float32")  # noqa: E731
    assert_both_raise("SelectV2", dict(condition=random_array(rng, (2,), "bool"), t=f(3), e=f()))
    assert_both_raise("ClipByValue", dict(t=f(2, 2), clip_value_min=f(2), clip_value_max=f()))
    assert_both_raise("ClipByValue", dict(t=f(2), clip_value_min=f(), clip_value_max=f(2, 2)))
    assert_both_raise("AddN", dict(inputs=[f(2), f(3)]))
    assert_both_raise("AddN", dict(inputs=[f(2), f()]))
    assert_both_raise("Less", dict(x=random_array(rng, (2,), "bool"), y=random_array(rng, (2,), "bool")))
    assert_both_raise("Sqrt", dict(x=np.array([1, 2], np.int32)))
    assert_both_raise("SqrtGrad", dict(y=f(2), dy=f(3)))
