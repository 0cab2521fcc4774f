"""The fused ops _FusedConv2D and _FusedMatMul (BiasAdd, then Relu / Relu6 / Elu / LeakyRelu or nothing)
against TensorFlow's own CPU kernels of those ops, on fresh random geometries; their gradients (which
TensorFlow does not register: its remapper fuses only after differentiation) against tf.GradientTape of the
separate ops (Conv2D or MatMul, BiasAdd, the activation); error classes for fusions either side rejects.

TensorFlow's fused ops are internal: no tf.raw_ops entry, so they run through the eager executor with every
attr spelled out. Its _FusedConv2D kernel takes float32/float64 NHWC, its _FusedMatMul float32/bfloat16."""
import numpy as np
import pytest
from tensorflow.python.eager import context, execute

from conftest import assert_close, random_array, require_ops, tf, tfc

FUSIONS = [["BiasAdd"], ["BiasAdd", "Relu"], ["BiasAdd", "Relu6"], ["BiasAdd", "Elu"], ["BiasAdd", "LeakyRelu"]]
TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-10), "bfloat16": (6e-2, 6e-2)}


def tf_fused(op, inputs, attrs):
    """TensorFlow's kernel of an internal fused op: attrs as (name, value) pairs, all of them."""
    flat = []
    for k, v in attrs:
        flat += [k, v]
    return execute.execute(op.encode(), 1, inputs=[tf.constant(x) for x in inputs], attrs=tuple(flat),
                           ctx=context.context())[0].numpy()


def conv_geometry(rng, dilate=True):
    """dilate=False: TensorFlow's CPU backprop kernels take no dilations."""
    while True:
        n, h, w, c = (int(rng.integers(1, 3)), int(rng.integers(2, 9)), int(rng.integers(2, 9)),
                      int(rng.integers(1, 6)))
        kh, kw, s = int(rng.integers(1, 4)), int(rng.integers(1, 4)), int(rng.integers(1, 3))
        d = int(rng.integers(1, 3)) if dilate and s == 1 and rng.random() < 0.3 else 1
        padding = str(rng.choice(["SAME", "VALID"]))
        if padding == "VALID" and (h < (kh - 1) * d + 1 or w < (kw - 1) * d + 1):
            continue
        return dict(n=n, h=h, w=w, c=c, kh=kh, kw=kw, s=s, d=d, padding=padding, co=int(rng.integers(1, 40)))


def conv_inputs(rng, g, dtype, scale=2.0):
    x = random_array(rng, (g["n"], g["h"], g["w"], g["c"]), dtype, -scale, scale)
    f = random_array(rng, (g["kh"], g["kw"], g["c"], g["co"]), dtype)
    b = random_array(rng, (g["co"],), dtype)
    return x, f, b


def conv_attrs(g):
    return dict(strides=[1, g["s"], g["s"], 1], padding=g["padding"], dilations=[1, g["d"], g["d"], 1])


def alpha_of(rng, fused_ops):
    return float(rng.choice([0.2, 0.05, 1.5])) if fused_ops[-1] == "LeakyRelu" else 0.2


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fused_ops", FUSIONS, ids=lambda f: "+".join(f))
def test_fused_conv2d_matches_tf(rng, dtype, fused_ops):
    require_ops("_FusedConv2D")
    for _ in range(6):
        g = conv_geometry(rng)
        x, f, b = conv_inputs(rng, g, dtype)
        a, alpha = conv_attrs(g), alpha_of(rng, fused_ops)
        got = tfc.raw_ops._FusedConv2D(input=x, filter=f, args=[b], host_args=[], num_args=1, fused_ops=fused_ops,
                                       leakyrelu_alpha=alpha, **a).numpy()
        dt = tf.as_dtype(dtype).as_datatype_enum
        want = tf_fused("_FusedConv2D", [x, f, b], [
            ("T", dt), ("TArgs", [dt]), ("num_args", 1), ("num_host_args", 0), ("strides", a["strides"]),
            ("padding", a["padding"]), ("explicit_paddings", []), ("data_format", "NHWC"), ("filter_format", "HWIO"),
            ("dilations", a["dilations"]), ("use_cudnn_on_gpu", True), ("fused_ops", [s.encode() for s in fused_ops]),
            ("epsilon", 1e-4), ("leakyrelu_alpha", alpha)])
        rtol, atol = TOL[dtype]
        assert_close(got, want, dtype=dtype, rtol=rtol, atol=atol, msg="%s %s: " % (fused_ops, g))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("fused_ops", FUSIONS, ids=lambda f: "+".join(f))
def test_fused_matmul_matches_tf(rng, dtype, fused_ops):
    require_ops("_FusedMatMul")
    for _ in range(6):
        m, k, n = int(rng.integers(1, 40)), int(rng.integers(1, 70)), int(rng.integers(1, 40))
        ta, tb = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
        a = random_array(rng, (k, m) if ta else (m, k), dtype)
        w = random_array(rng, (n, k) if tb else (k, n), dtype)
        b = random_array(rng, (n,), dtype)
        alpha = alpha_of(rng, fused_ops)
        got = tfc.raw_ops._FusedMatMul(a=a, b=w, args=[b], transpose_a=ta, transpose_b=tb, fused_ops=fused_ops,
                                       leakyrelu_alpha=alpha).numpy()
        want = tf_fused("_FusedMatMul", [a, w, b], [
            ("T", tf.as_dtype(dtype).as_datatype_enum), ("num_args", 1), ("transpose_a", ta), ("transpose_b", tb),
            ("fused_ops", [s.encode() for s in fused_ops]), ("epsilon", 1e-4), ("leakyrelu_alpha", alpha)])
        rtol, atol = TOL[dtype]
        assert_close(got, want, dtype=dtype, rtol=rtol, atol=atol, msg="%s [%d,%d,%d] ta=%s tb=%s: " % (
            fused_ops, m, k, n, ta, tb))


def tf_separate(z, b, fused_ops, alpha):
    """TensorFlow's separate ops after the product: BiasAdd, then the activation."""
    y = tf.nn.bias_add(z, b)
    act = fused_ops[-1]
    if act == "Relu":
        return tf.nn.relu(y)
    if act == "Relu6":
        return tf.nn.relu6(y)
    if act == "Elu":
        return tf.nn.elu(y)
    if act == "LeakyRelu":
        return tf.nn.leaky_relu(y, alpha)
    return y


def compare_grads(got, want, dtype, what):
    rtol, atol = TOL[dtype]
    for i, (g, w) in enumerate(zip(got, want)):
        assert g is not None, "%s: no gradient for input %d" % (what, i)
        assert_close(g, w, dtype=dtype, rtol=rtol, atol=atol, msg="%s gradient %d: " % (what, i))


@pytest.mark.parametrize("fused_ops", FUSIONS + [["BiasAdd", "LeakyRelu", "negative slope"]],
                         ids=lambda f: "+".join(f))
def test_fused_conv2d_gradient(rng, fused_ops):
    require_ops("_FusedConv2D")
    dtype = "float64"
    negative = fused_ops[-1] == "negative slope"
    fused_ops = fused_ops[:2]
    for _ in range(3):
        g = conv_geometry(rng, dilate=False)
        x, f, b = conv_inputs(rng, g, dtype)
        a = conv_attrs(g)
        alpha = -0.4 if negative else alpha_of(rng, fused_ops)
        srcs = [tfc.constant(v) for v in (x, f, b)]
        with tfc.GradientTape() as tape:
            tape.watch(srcs)
            y = tfc.raw_ops._FusedConv2D(input=srcs[0], filter=srcs[1], args=[srcs[2]], host_args=[], num_args=1,
                                         fused_ops=fused_ops, leakyrelu_alpha=alpha, **a)
        dy = random_array(rng, y.shape, dtype)
        got = tape.gradient(y, srcs, output_gradients=dy)
        tsrcs = [tf.constant(v) for v in (x, f, b)]
        with tf.GradientTape() as ttape:
            ttape.watch(tsrcs)
            z = tf.raw_ops.Conv2D(input=tsrcs[0], filter=tsrcs[1], **a)
            ty = tf_separate(z, tsrcs[2], fused_ops, alpha)
        assert_close(y, ty, dtype=dtype, msg="%s forward: " % fused_ops)
        compare_grads(got, ttape.gradient(ty, tsrcs, output_gradients=tf.constant(dy)), dtype, "%s %s" % (fused_ops, g))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fused_ops", FUSIONS, ids=lambda f: "+".join(f))
def test_fused_matmul_gradient(rng, dtype, fused_ops):
    require_ops("_FusedMatMul")
    for _ in range(4):
        m, k, n = int(rng.integers(1, 30)), int(rng.integers(1, 40)), int(rng.integers(1, 30))
        ta, tb = bool(rng.integers(0, 2)), bool(rng.integers(0, 2))
        vals = [random_array(rng, (k, m) if ta else (m, k), dtype), random_array(rng, (n, k) if tb else (k, n), dtype),
                random_array(rng, (n,), dtype)]
        alpha = alpha_of(rng, fused_ops)
        srcs = [tfc.constant(v) for v in vals]
        with tfc.GradientTape() as tape:
            tape.watch(srcs)
            y = tfc.raw_ops._FusedMatMul(a=srcs[0], b=srcs[1], args=[srcs[2]], transpose_a=ta, transpose_b=tb,
                                         fused_ops=fused_ops, leakyrelu_alpha=alpha)
        dy = random_array(rng, y.shape, dtype)
        got = tape.gradient(y, srcs, output_gradients=dy)
        tsrcs = [tf.constant(v) for v in vals]
        with tf.GradientTape() as ttape:
            ttape.watch(tsrcs)
            ty = tf_separate(tf.linalg.matmul(tsrcs[0], tsrcs[1], transpose_a=ta, transpose_b=tb), tsrcs[2],
                             fused_ops, alpha)
        compare_grads(got, ttape.gradient(ty, tsrcs, output_gradients=tf.constant(dy)), dtype,
                      "%s [%d,%d,%d] ta=%s tb=%s" % (fused_ops, m, k, n, ta, tb))


@pytest.mark.parametrize("fused_ops,args,error", [
    ([], 1, "InvalidArgumentError"),
    (["Relu"], 1, "UnimplementedError"),
    (["BiasAdd", "Sigmoid"], 1, "UnimplementedError"),
    (["BiasAdd", "Relu", "Relu"], 1, "UnimplementedError"),
    (["BiasAdd"], 2, "InvalidArgumentError"),
], ids=["empty", "no BiasAdd", "Sigmoid", "two activations", "two args"])
def test_fused_conv2d_errors_match_tf(rng, fused_ops, args, error):
    """float64: TensorFlow's float32 kernel (oneDNN) runs [Relu] as Relu(Conv2D), ignoring the bias it is
    given; its float64 kernel (Eigen) validates fused_ops as tfc does."""
    require_ops("_FusedConv2D")
    g = dict(n=1, h=5, w=5, c=2, kh=3, kw=3, s=1, d=1, padding="SAME", co=3)
    x, f, b = conv_inputs(rng, g, "float64")
    dt = tf.float64.as_datatype_enum
    with pytest.raises(Exception) as tf_exc:
        tf_fused("_FusedConv2D", [x, f] + [b] * args, [
            ("T", dt), ("TArgs", [dt] * args), ("num_args", args), ("num_host_args", 0), ("strides", [1, 1, 1, 1]),
            ("padding", "SAME"), ("explicit_paddings", []), ("data_format", "NHWC"), ("filter_format", "HWIO"),
            ("dilations", [1, 1, 1, 1]), ("use_cudnn_on_gpu", True), ("fused_ops", [s.encode() for s in fused_ops]),
            ("epsilon", 1e-4), ("leakyrelu_alpha", 0.2)])
    assert type(tf_exc.value).__name__ == error
    with pytest.raises(tfc.OpError) as tfc_exc:
        tfc.raw_ops._FusedConv2D(input=x, filter=f, args=[b] * args, host_args=[], num_args=args, fused_ops=fused_ops,
                                 strides=[1, 1, 1, 1], padding="SAME")
    assert type(tfc_exc.value).__name__ == error, str(tfc_exc.value)
    assert "_FusedConv2D" in str(tfc_exc.value)
