"""Convolution and pooling ops (Conv2D and its backprops, DepthwiseConv2dNative and its backprops, MaxPool,
MaxPoolGrad, MaxPoolGradGrad, AvgPool, AvgPoolGrad) against TensorFlow on fresh random shapes, strides,
dilations, paddings and layouts; gradients (first and second order) against tf.GradientTape.

TensorFlow's CPU kernels accept only NHWC for most of these ops (and no dilations/unequal strides for
depthwise convolution, no grouped backprops), so NCHW results are compared with TensorFlow's NHWC results
transposed, and the cases TensorFlow's CPU kernels lack are compared with compositions of ops it has
(per-group Conv2D for grouped and dilated depthwise convolution)."""
import re

import numpy as np
import pytest

from conftest import (FLOAT_DTYPES, assert_both_raise, assert_close, assert_grad_matches, assert_op_matches,
                      random_array, require_ops, run_tf, run_tfc, tf, tfc)

CONV_OPS = ["Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "DepthwiseConv2dNative",
            "DepthwiseConv2dNativeBackpropInput", "DepthwiseConv2dNativeBackpropFilter"]
POOL_OPS = ["MaxPool", "MaxPoolGrad", "MaxPoolGradGrad", "AvgPool", "AvgPoolGrad"]

# Sums of up to ~100 products: looser than the elementwise defaults for reduced precision.
# TensorFlow's oneDNN pooling kernels round float64 through float32: compare float64 pooling at float32 precision.
POOL_TOL = {"float64": (1e-6, 1e-6)}
CONV_TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-10), "float16": (2e-2, 2e-2), "bfloat16": (6e-2, 6e-2),
            "int32": (0, 0)}


def to_nchw(x):
    return np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2)))


def to_nhwc(x):
    return np.ascontiguousarray(np.transpose(x, (0, 2, 3, 1)))


def layout4(v, fmt):
    """[n, h, w, c]-ordered values in data_format order."""
    return [v[0], v[3], v[1], v[2]] if fmt == "NCHW" else list(v)


def out_size(n, k, s, d, padding, pads=(0, 0)):
    eff = (k - 1) * d + 1
    if padding == "SAME":
        return -(-n // s)
    if padding == "EXPLICIT":
        return (n + pads[0] + pads[1] - eff + s) // s
    return (n - eff + s) // s


def conv_config(rng, depthwise=False, tf_cpu=False, allow_empty=False, dilate=True):
    """Random conv geometry. tf_cpu: only what TensorFlow's CPU depthwise kernels accept. allow_empty: size-0
    batch or output dims (TensorFlow's oneDNN kernels mishandle those, so only for shape checks)."""
    while True:
        n = int(rng.integers(0, 3)) if allow_empty and rng.random() < 0.3 else int(rng.integers(1, 3))
        h, w = int(rng.integers(1, 9)), int(rng.integers(1, 9))
        c = int(rng.integers(1, 5))
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        dh, dw = (int(rng.integers(1, 3)), int(rng.integers(1, 3))) if dilate and rng.random() < 0.4 else (1, 1)
        if depthwise and tf_cpu:
            sw, dh, dw = sh, 1, 1
        padding = str(rng.choice(["SAME", "VALID", "EXPLICIT"]))
        pads = [int(p) for p in rng.integers(0, 3, size=4)]
        oh = out_size(h, kh, sh, dh, padding, pads[:2])
        ow = out_size(w, kw, sw, dw, padding, pads[2:])
        if oh < 0 or ow < 0 or (not allow_empty and (oh == 0 or ow == 0)):
            continue
        fmt = str(rng.choice(["NHWC", "NCHW"]))
        return dict(n=n, h=h, w=w, c=c, kh=kh, kw=kw, sh=sh, sw=sw, dh=dh, dw=dw, padding=padding, pads=pads,
                    fmt=fmt, oh=oh, ow=ow)


def pads_of(cfg):
    """(top, bottom, left, right) padding as TensorFlow computes it."""
    if cfg["padding"] == "EXPLICIT":
        return tuple(cfg["pads"])
    if cfg["padding"] == "VALID":
        return (0, 0, 0, 0)
    res = []
    for n, k, s, d, o in ((cfg["h"], cfg["kh"], cfg["sh"], cfg["dh"], cfg["oh"]),
                          (cfg["w"], cfg["kw"], cfg["sw"], cfg["dw"], cfg["ow"])):
        need = max(0, (o - 1) * s + (k - 1) * d + 1 - n)
        res += [need // 2, need - need // 2]
    return tuple(res)


def _taps(cfg):
    """Padded-input geometry and, per filter tap, the strided slices of the padded input it reads."""
    pt, _, pl, _ = pads_of(cfg)
    hp = max(cfg["h"] + pt, (cfg["oh"] - 1) * cfg["sh"] + (cfg["kh"] - 1) * cfg["dh"] + 1)
    wp = max(cfg["w"] + pl, (cfg["ow"] - 1) * cfg["sw"] + (cfg["kw"] - 1) * cfg["dw"] + 1)
    taps = []
    for kh in range(cfg["kh"]):
        for kw in range(cfg["kw"]):
            h0, w0 = kh * cfg["dh"], kw * cfg["dw"]
            taps.append((kh, kw, slice(h0, h0 + (cfg["oh"] - 1) * cfg["sh"] + 1, cfg["sh"]),
                         slice(w0, w0 + (cfg["ow"] - 1) * cfg["sw"] + 1, cfg["sw"])))
    return pt, pl, hp, wp, taps


def np_conv(x, f, cfg, groups=1):
    """Reference grouped Conv2D in float64 on NHWC data (any strides, dilations, padding)."""
    pt, pl, hp, wp, taps = _taps(cfg)
    n, h, w, c = x.shape
    xp = np.zeros((n, hp, wp, c))
    xp[:, pt:pt + h, pl:pl + w] = x
    cg, cog = c // groups, f.shape[3] // groups
    y = np.zeros((n, cfg["oh"], cfg["ow"], f.shape[3]))
    for kh, kw, hs, ws in taps:
        for g in range(groups):
            y[..., g * cog:(g + 1) * cog] += xp[:, hs, ws, g * cg:(g + 1) * cg] @ f[kh, kw, :, g * cog:(g + 1) * cog]
    return y


def np_conv_backprop_input(dy, f, x_shape, cfg, groups=1):
    pt, pl, hp, wp, taps = _taps(cfg)
    n, h, w, c = x_shape
    dxp = np.zeros((n, hp, wp, c))
    cg, cog = c // groups, f.shape[3] // groups
    for kh, kw, hs, ws in taps:
        for g in range(groups):
            dxp[:, hs, ws, g * cg:(g + 1) * cg] += dy[..., g * cog:(g + 1) * cog] @ f[kh, kw, :, g * cog:(g + 1) * cog].T
    return dxp[:, pt:pt + h, pl:pl + w]


def np_conv_backprop_filter(x, dy, f_shape, cfg, groups=1):
    pt, pl, hp, wp, taps = _taps(cfg)
    n, h, w, c = x.shape
    xp = np.zeros((n, hp, wp, c))
    xp[:, pt:pt + h, pl:pl + w] = x
    cg, cog = c // groups, f_shape[3] // groups
    df = np.zeros(f_shape)
    for kh, kw, hs, ws in taps:
        for g in range(groups):
            df[kh, kw, :, g * cog:(g + 1) * cog] = np.einsum("nhwc,nhwo->co", xp[:, hs, ws, g * cg:(g + 1) * cg],
                                                             dy[..., g * cog:(g + 1) * cog])
    return df


def conv_attrs(cfg, fmt=None):
    fmt = fmt or cfg["fmt"]
    a = dict(strides=layout4([1, cfg["sh"], cfg["sw"], 1], fmt), padding=cfg["padding"], data_format=fmt,
             dilations=layout4([1, cfg["dh"], cfg["dw"], 1], fmt))
    if cfg["padding"] == "EXPLICIT":
        p = cfg["pads"]
        a["explicit_paddings"] = sum(layout4([[0, 0], p[:2], p[2:], [0, 0]], fmt), [])
    return a


def tfc_outputs(op, inputs, attrs):
    out = getattr(tfc.raw_ops, op)(**inputs, **attrs)
    return out.numpy()


def tf_nhwc(op, inputs, attrs, nchw_inputs=(), nchw_output=False):
    """Runs TensorFlow in NHWC: NCHW inputs named in nchw_inputs are transposed in, the output back out."""
    kw = {}
    for k, v in inputs.items():
        kw[k] = to_nhwc(v) if k in nchw_inputs else v
    a = dict(attrs)
    fmt = a.get("data_format", "NHWC")
    if fmt == "NCHW":
        a["data_format"] = "NHWC"
        for key in ("strides", "dilations", "ksize"):
            if key in a:
                v = a[key]
                a[key] = [v[0], v[2], v[3], v[1]]
        if "explicit_paddings" in a:
            p = a["explicit_paddings"]
            a["explicit_paddings"] = p[0:2] + p[4:6] + p[6:8] + p[2:4]
    out = getattr(tf.raw_ops, op)(**kw, **a).numpy()
    return to_nchw(out) if (fmt == "NCHW" and nchw_output) else out


def compare(got, want, dtype, msg, tol=None):
    rtol, atol = (tol or CONV_TOL).get(dtype, CONV_TOL.get(dtype, (1e-5, 1e-5)))
    assert_close(got, want, dtype=dtype, rtol=rtol, atol=atol, msg=msg)


# ---- Conv2D --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int32"])
def test_conv2d_matches_tf(rng, dtype):
    require_ops("Conv2D")
    for _ in range(12):
        cfg = conv_config(rng)
        co = int(rng.integers(1, 5))
        xs = layout4([cfg["n"], cfg["h"], cfg["w"], cfg["c"]], cfg["fmt"])
        x = random_array(rng, xs, dtype)
        f = random_array(rng, (cfg["kh"], cfg["kw"], cfg["c"], co), dtype)
        attrs = conv_attrs(cfg)
        # TF's CPU kernels: compute the reference in float64 for int32/bfloat16 (no kernel), where a stride
        # exceeds the filter size, and for one input channel with an output width of 1 and a width stride > 1:
        # TensorFlow 2.21's float32 Conv2D returns wrong values there (garbage such as 1e13 for input [2,7,3,1],
        # filter [2,2,1,3], strides [1,1,3,1], SAME; wrong sums for input [2,4,2,1], filter [2,3,1,3], strides
        # [1,1,2,1], SAME: seed 2521700094; 128 of 963 such shapes measured, none with 2 channels); its float64
        # kernel is right.
        if (dtype in ("int32", "bfloat16") or cfg["sh"] > cfg["kh"] or cfg["sw"] > cfg["kw"]
                or (cfg["c"] == 1 and cfg["ow"] == 1 and cfg["sw"] > 1)):
            ref_dt = np.float64
            want = tf_nhwc("Conv2D", {"input": x.astype(ref_dt), "filter": f.astype(ref_dt)}, attrs,
                           nchw_inputs=("input",) if cfg["fmt"] == "NCHW" else (), nchw_output=True)
            want = want.astype(np.float64)
        else:
            want = tf_nhwc("Conv2D", {"input": x, "filter": f}, attrs,
                           nchw_inputs=("input",) if cfg["fmt"] == "NCHW" else (), nchw_output=True)
        got = tfc_outputs("Conv2D", {"input": x, "filter": f}, attrs)
        assert got.dtype == x.dtype
        compare(got.astype(np.float64), np.asarray(want).astype(np.float64), dtype, "Conv2D %s %r: " % (dtype, cfg))


def test_conv2d_special_shapes(rng):
    """The GEMM fast paths: pointwise (1x1, stride 1), filter covering the whole input, big channel counts,
    SAME with stride 2 on even and odd sizes."""
    require_ops("Conv2D")
    cases = [((2, 7, 5, 16), (1, 1, 16, 8), [1, 1, 1, 1], "VALID"),
             ((3, 4, 6, 5), (4, 6, 5, 7), [1, 1, 1, 1], "VALID"),
             ((2, 8, 8, 3), (3, 3, 3, 4), [1, 2, 2, 1], "SAME"),
             ((2, 9, 7, 3), (3, 3, 3, 4), [1, 2, 2, 1], "SAME"),
             ((1, 9, 9, 2), (2, 2, 2, 3), [1, 2, 2, 1], "SAME"),
             ((1, 33, 31, 40), (3, 3, 40, 36), [1, 1, 1, 1], "SAME"),
             ((1, 6, 6, 4), (1, 1, 4, 3), [1, 2, 2, 1], "SAME")]
    for xs, fs, strides, pad in cases:
        x, f = random_array(rng, xs), random_array(rng, fs)
        assert_op_matches("Conv2D", {"input": x, "filter": f}, {"strides": strides, "padding": pad},
                          rtol=1e-4, atol=1e-4)


def test_conv2d_large_tiles(rng):
    """Enough output rows that im2col runs in several tiles."""
    require_ops("Conv2D")
    x, f = random_array(rng, (3, 70, 66, 24)), random_array(rng, (5, 5, 24, 8))
    for op, inputs in [("Conv2D", {"input": x, "filter": f})]:
        assert_op_matches(op, inputs, {"strides": [1, 1, 1, 1], "padding": "SAME"}, rtol=1e-4, atol=1e-4)
    dy = random_array(rng, (3, 70, 66, 8))
    assert_op_matches("Conv2DBackpropInput", {"input_sizes": np.array(x.shape, np.int32), "filter": f,
                                              "out_backprop": dy},
                      {"strides": [1, 1, 1, 1], "padding": "SAME"}, rtol=1e-4, atol=1e-4)
    assert_op_matches("Conv2DBackpropFilter", {"input": x, "filter_sizes": np.array(f.shape, np.int32),
                                               "out_backprop": dy},
                      {"strides": [1, 1, 1, 1], "padding": "SAME"}, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv2d_winograd_shapes(rng, dtype):
    """3x3 stride-1 convolutions with 16+ channels each way, which tfc computes with Winograd F(2x2, 3x3) in
    float32: odd sizes (partial tiles), SAME and VALID, batch 1-3; forward and backprop-input, at the
    tolerance of the GEMM path."""
    require_ops("Conv2D", "Conv2DBackpropInput")
    for _ in range(6):
        n, h, w = int(rng.integers(1, 4)), int(rng.integers(7, 24)), int(rng.integers(7, 24))
        c, co = int(rng.integers(16, 49)), int(rng.integers(16, 49))
        padding = str(rng.choice(["SAME", "VALID"]))
        attrs = {"strides": [1, 1, 1, 1], "padding": padding}
        oh, ow = (h, w) if padding == "SAME" else (h - 2, w - 2)
        x, f = random_array(rng, (n, h, w, c), dtype), random_array(rng, (3, 3, c, co), dtype)
        dy = random_array(rng, (n, oh, ow, co), dtype)
        msg = " %s %r: " % (dtype, (n, h, w, c, co, padding))
        compare(tfc_outputs("Conv2D", {"input": x, "filter": f}, attrs),
                tf.raw_ops.Conv2D(input=x, filter=f, **attrs).numpy(), dtype, "Conv2D" + msg)
        sizes = np.array([n, h, w, c], np.int32)
        compare(tfc_outputs("Conv2DBackpropInput", {"input_sizes": sizes, "filter": f, "out_backprop": dy}, attrs),
                tf.raw_ops.Conv2DBackpropInput(input_sizes=sizes, filter=f, out_backprop=dy, **attrs).numpy(), dtype,
                "Conv2DBackpropInput" + msg)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_conv2d_winograd_backprop_filter(rng, dtype):
    """Conv2DBackpropFilter of 3x3 stride-1 convolutions with 16+ channels each way and even output sizes,
    which tfc computes with Winograd F(2x2, 3x3) in float32: SAME and VALID, odd input sizes (VALID of 2k + 1
    is odd too: those run on the GEMM path), channel counts not multiples of 16, batch 1-3; at the tolerance
    of the GEMM path."""
    require_ops("Conv2DBackpropFilter")
    for i in range(6):
        n, oh, ow = int(rng.integers(1, 4)), 2 * int(rng.integers(4, 12)), 2 * int(rng.integers(4, 12))
        if i == 5:
            oh += 1  # an odd output: the GEMM path, for comparison
        c, co = int(rng.integers(16, 49)), int(rng.integers(16, 49))
        padding = str(rng.choice(["SAME", "VALID"]))
        attrs = {"strides": [1, 1, 1, 1], "padding": padding}
        h, w = (oh, ow) if padding == "SAME" else (oh + 2, ow + 2)
        x, dy = random_array(rng, (n, h, w, c), dtype), random_array(rng, (n, oh, ow, co), dtype)
        fs = np.array([3, 3, c, co], np.int32)
        msg = " %s %r: " % (dtype, (n, h, w, c, co, padding))
        compare(tfc_outputs("Conv2DBackpropFilter", {"input": x, "filter_sizes": fs, "out_backprop": dy}, attrs),
                tf.raw_ops.Conv2DBackpropFilter(input=x, filter_sizes=fs, out_backprop=dy, **attrs).numpy(), dtype,
                "Conv2DBackpropFilter" + msg)


def grouped_reference(x, f, attrs, groups):
    """Grouped convolution as TensorFlow ops: one Conv2D per group, concatenated (NHWC)."""
    cg, cog = x.shape[3] // groups, f.shape[3] // groups
    outs = [tf.raw_ops.Conv2D(input=x[..., g * cg:(g + 1) * cg], filter=f[..., g * cog:(g + 1) * cog], **attrs)
            for g in range(groups)]
    return tf.concat(outs, axis=3)


def test_conv2d_grouped_and_dilated(rng):
    """Grouped convolution (and dilations, which TensorFlow's CPU backprops lack): values and gradients against
    a numpy reference, which TensorFlow's per-group Conv2D confirms where it can."""
    require_ops("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter")
    for _ in range(6):
        cfg = conv_config(rng)
        groups, cg, cog = int(rng.integers(1, 4)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        x = random_array(rng, (cfg["n"], cfg["h"], cfg["w"], cg * groups), "float64")
        f = random_array(rng, (cfg["kh"], cfg["kw"], cg, cog * groups), "float64")
        attrs = conv_attrs(cfg, "NHWC")
        cfg["c"] = x.shape[3]
        want = np_conv(x, f, cfg, groups)
        if cfg["dh"] == cfg["dw"] == 1:  # TensorFlow (per-group Conv2D) agrees with the numpy reference
            assert_close(grouped_reference(tf.constant(x), tf.constant(f), attrs, groups), want)
        dy = random_array(rng, want.shape, "float64")
        wdx = np_conv_backprop_input(dy, f, x.shape, cfg, groups)
        wdf = np_conv_backprop_filter(x, dy, f.shape, cfg, groups)
        cx, cf = tfc.constant(x), tfc.constant(f)
        with tfc.GradientTape() as ctape:
            ctape.watch([cx, cf])
            got = tfc.raw_ops.Conv2D(input=cx, filter=cf, **attrs)
        gdx, gdf = ctape.gradient(got, [cx, cf], output_gradients=dy)
        assert_close(got, want, msg="grouped Conv2D %r: " % cfg)
        assert_close(gdx, wdx, msg="grouped Conv2D d input %r: " % cfg)
        assert_close(gdf, wdf, msg="grouped Conv2D d filter %r: " % cfg)


def conv_backprop_inputs(rng, cfg, co, dtype, depthwise=False):
    fmt = cfg["fmt"]
    xs = layout4([cfg["n"], cfg["h"], cfg["w"], cfg["c"]], fmt)
    oc = cfg["c"] * co if depthwise else co
    ys = layout4([cfg["n"], cfg["oh"], cfg["ow"], oc], fmt)
    x = random_array(rng, xs, dtype)
    f = random_array(rng, (cfg["kh"], cfg["kw"], cfg["c"], co), dtype)
    dy = random_array(rng, ys, dtype)
    return x, f, dy


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_conv2d_backprops_match_tf(rng, dtype):
    require_ops("Conv2DBackpropInput", "Conv2DBackpropFilter")
    for _ in range(10):
        cfg = conv_config(rng)
        co = int(rng.integers(1, 5))
        x, f, dy = conv_backprop_inputs(rng, cfg, co, dtype)
        attrs = conv_attrs(cfg)
        nchw = cfg["fmt"] == "NCHW"
        ref = (lambda a: a.astype(np.float32)) if dtype == "bfloat16" else (lambda a: a)
        sizes = np.array(x.shape, np.int32)
        nhwc_sizes = np.array(to_nhwc(x).shape if nchw else x.shape, np.int32)
        dilated = cfg["dh"] > 1 or cfg["dw"] > 1  # TensorFlow's CPU backprops reject dilations: numpy reference
        got = tfc_outputs("Conv2DBackpropInput", {"input_sizes": sizes, "filter": f, "out_backprop": dy}, attrs)
        if dilated:
            want = np_conv_backprop_input(to_nhwc(dy) if nchw else dy.astype(np.float64), f.astype(np.float64),
                                          tuple(nhwc_sizes), cfg)
            want = to_nchw(want) if nchw else want
        else:
            want = tf_nhwc("Conv2DBackpropInput", {"input_sizes": nhwc_sizes, "filter": ref(f), "out_backprop": ref(dy)},
                           attrs, nchw_inputs=("out_backprop",) if nchw else (), nchw_output=True)
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "Conv2DBackpropInput %r: " % cfg)
        got = tfc_outputs("Conv2DBackpropFilter", {"input": x, "filter_sizes": np.array(f.shape, np.int32),
                                                   "out_backprop": dy}, attrs)
        if dilated:
            want = np_conv_backprop_filter((to_nhwc(x) if nchw else x).astype(np.float64),
                                           (to_nhwc(dy) if nchw else dy).astype(np.float64), f.shape, cfg)
        else:
            want = tf_nhwc("Conv2DBackpropFilter", {"input": ref(x), "filter_sizes": np.array(f.shape, np.int32),
                                                    "out_backprop": ref(dy)}, attrs,
                           nchw_inputs=("input", "out_backprop") if nchw else ())
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "Conv2DBackpropFilter %r: " % cfg)


def test_conv2d_backprop_input_two_sizes(rng):
    """input_sizes may hold only the spatial dims."""
    require_ops("Conv2DBackpropInput")
    f, dy = random_array(rng, (3, 3, 2, 4)), random_array(rng, (2, 3, 3, 4))
    attrs = {"strides": [1, 2, 2, 1], "padding": "SAME"}
    got = tfc_outputs("Conv2DBackpropInput", {"input_sizes": np.array([5, 6], np.int32), "filter": f,
                                              "out_backprop": dy}, attrs)
    want = tf.raw_ops.Conv2DBackpropInput(input_sizes=[2, 5, 6, 2], filter=f, out_backprop=dy, **attrs)
    assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_conv2d_gradients_match_tf(rng):
    require_ops(*CONV_OPS[:3])
    for _ in range(8):
        cfg = conv_config(rng, dilate=False)  # TensorFlow's CPU backprops reject dilations
        co = int(rng.integers(1, 4))
        x, f, dy = conv_backprop_inputs(rng, cfg, co, "float64")
        attrs = conv_attrs(cfg, "NHWC")
        if cfg["fmt"] == "NCHW":  # NHWC here; NCHW gradients are checked in test_conv2d_nchw_gradients
            x, dy = to_nhwc(x), to_nhwc(dy)
        assert_grad_matches("Conv2D", {"input": x, "filter": f}, attrs, rng=rng)
        # second order: the backprops' own gradients
        assert_grad_matches("Conv2DBackpropInput", {"input_sizes": np.array(x.shape, np.int32), "filter": f,
                                                    "out_backprop": dy}, attrs, rng=rng)
        assert_grad_matches("Conv2DBackpropFilter", {"input": x, "filter_sizes": np.array(f.shape, np.int32),
                                                     "out_backprop": dy}, attrs, rng=rng)


def test_conv2d_nchw_gradients(rng):
    """NCHW gradients equal the NHWC ones transposed."""
    require_ops(*CONV_OPS[:3])
    for _ in range(5):
        cfg = conv_config(rng, dilate=False)
        cfg["fmt"] = "NCHW"
        co = int(rng.integers(1, 4))
        x, f, dy = conv_backprop_inputs(rng, cfg, co, "float64")
        cx, cf = tfc.constant(x), tfc.constant(f)
        with tfc.GradientTape() as tape:
            tape.watch([cx, cf])
            y = tfc.raw_ops.Conv2D(input=cx, filter=cf, **conv_attrs(cfg))
        gx, gf = tape.gradient(y, [cx, cf], output_gradients=dy)
        tx, tfl = tf.constant(to_nhwc(x)), tf.constant(f)
        with tf.GradientTape() as ttape:
            ttape.watch([tx, tfl])
            ty = tf.raw_ops.Conv2D(input=tx, filter=tfl, **conv_attrs(cfg, "NHWC"))
        wx, wf = ttape.gradient(ty, [tx, tfl], output_gradients=tf.constant(to_nhwc(dy)))
        assert_close(y, to_nchw(ty.numpy()), msg="NCHW Conv2D %r: " % cfg)
        assert_close(gx, to_nchw(wx.numpy()), msg="NCHW Conv2D d input %r: " % cfg)
        assert_close(gf, wf, msg="NCHW Conv2D d filter %r: " % cfg)


def test_conv2d_second_order_nested_tapes(rng):
    """d/d filter of sum(w * d conv/d input): nested tapes in both libraries."""
    require_ops("Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter", "Mul", "Sum")
    cfg = conv_config(rng, dilate=False)
    x, f, dy = conv_backprop_inputs(rng, cfg, 3, "float64")
    x, dy = (to_nhwc(x), to_nhwc(dy)) if cfg["fmt"] == "NCHW" else (x, dy)
    attrs = conv_attrs(cfg, "NHWC")
    w = random_array(rng, x.shape, "float64")

    def run(lib):
        cx, cf = lib.constant(x), lib.constant(f)
        with lib.GradientTape() as outer:
            outer.watch(cf)
            with lib.GradientTape() as inner:
                inner.watch(cx)
                y = lib.raw_ops.Conv2D(input=cx, filter=cf, **attrs)
            gx = inner.gradient(y, cx, output_gradients=lib.constant(dy))
            s = lib.raw_ops.Sum(input=lib.raw_ops.Mul(x=gx, y=lib.constant(w)), axis=np.array([0, 1, 2, 3], np.int32))
        return outer.gradient(s, cf)

    assert_close(run(tfc), run(tf), msg="second order %r: " % cfg)


# ---- depthwise -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_depthwise_matches_tf(rng, dtype):
    require_ops(*CONV_OPS[3:])
    for _ in range(10):
        cfg = conv_config(rng, depthwise=True, tf_cpu=True)
        m = int(rng.integers(1, 4))
        x, f, dy = conv_backprop_inputs(rng, cfg, m, dtype, depthwise=True)
        attrs = conv_attrs(cfg)
        nchw = cfg["fmt"] == "NCHW"
        ref = (lambda a: a.astype(np.float32)) if dtype == "bfloat16" else (lambda a: a)
        got = tfc_outputs("DepthwiseConv2dNative", {"input": x, "filter": f}, attrs)
        want = tf_nhwc("DepthwiseConv2dNative", {"input": ref(x), "filter": ref(f)}, attrs,
                       nchw_inputs=("input",) if nchw else (), nchw_output=True)
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "DepthwiseConv2dNative %r: " % cfg)
        nhwc_sizes = np.array(to_nhwc(x).shape if nchw else x.shape, np.int32)
        got = tfc_outputs("DepthwiseConv2dNativeBackpropInput", {"input_sizes": np.array(x.shape, np.int32),
                                                                 "filter": f, "out_backprop": dy}, attrs)
        want = tf_nhwc("DepthwiseConv2dNativeBackpropInput", {"input_sizes": nhwc_sizes, "filter": ref(f),
                                                              "out_backprop": ref(dy)}, attrs,
                       nchw_inputs=("out_backprop",) if nchw else (), nchw_output=True)
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "DepthwiseBackpropInput %r: " % cfg)
        got = tfc_outputs("DepthwiseConv2dNativeBackpropFilter", {"input": x, "filter_sizes": np.array(f.shape, np.int32),
                                                                  "out_backprop": dy}, attrs)
        want = tf_nhwc("DepthwiseConv2dNativeBackpropFilter", {"input": ref(x), "filter_sizes": np.array(f.shape, np.int32),
                                                               "out_backprop": ref(dy)}, attrs,
                       nchw_inputs=("input", "out_backprop") if nchw else ())
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "DepthwiseBackpropFilter %r: " % cfg)


def test_depthwise_many_channels(rng):
    """Channel counts past the kernels' vector blocks (16 floats / 8 doubles), with a remainder."""
    require_ops(*CONV_OPS[3:])
    for dtype in ("float32", "float64"):
        for _ in range(3):
            cfg = conv_config(rng, depthwise=True, tf_cpu=True)
            cfg["c"], cfg["fmt"] = int(rng.integers(16, 41)), "NHWC"
            m = int(rng.choice([1, 1, 2]))
            x, f, dy = conv_backprop_inputs(rng, cfg, m, dtype, depthwise=True)
            attrs = conv_attrs(cfg)
            assert_op_matches("DepthwiseConv2dNative", {"input": x, "filter": f}, attrs, rtol=1e-4, atol=1e-4)
            assert_op_matches("DepthwiseConv2dNativeBackpropInput", {"input_sizes": np.array(x.shape, np.int32),
                                                                     "filter": f, "out_backprop": dy}, attrs,
                              rtol=1e-4, atol=1e-4)
            assert_op_matches("DepthwiseConv2dNativeBackpropFilter", {"input": x, "filter_sizes": np.array(f.shape, np.int32),
                                                                      "out_backprop": dy}, attrs, rtol=1e-4, atol=1e-4)


def test_depthwise_gradients_match_tf(rng):
    require_ops(*CONV_OPS[3:])
    for _ in range(6):
        cfg = conv_config(rng, depthwise=True, tf_cpu=True)
        cfg["fmt"] = "NHWC"
        m = int(rng.integers(1, 3))
        x, f, dy = conv_backprop_inputs(rng, cfg, m, "float64", depthwise=True)
        attrs = conv_attrs(cfg)
        assert_grad_matches("DepthwiseConv2dNative", {"input": x, "filter": f}, attrs, rng=rng)
        assert_grad_matches("DepthwiseConv2dNativeBackpropInput", {"input_sizes": np.array(x.shape, np.int32),
                                                                   "filter": f, "out_backprop": dy}, attrs, rng=rng)
        assert_grad_matches("DepthwiseConv2dNativeBackpropFilter", {"input": x, "filter_sizes": np.array(f.shape, np.int32),
                                                                    "out_backprop": dy}, attrs, rng=rng)


def test_depthwise_dilated_and_unequal_strides(rng):
    """Beyond TensorFlow's CPU kernel: compared with per-channel Conv2D, values and gradients, both layouts."""
    require_ops("DepthwiseConv2dNative")
    for _ in range(6):
        cfg = conv_config(rng, depthwise=True)
        m = int(rng.integers(1, 3))
        x, f, dy = conv_backprop_inputs(rng, cfg, m, "float64", depthwise=True)
        nchw = cfg["fmt"] == "NCHW"
        xh, dyh = (to_nhwc(x), to_nhwc(dy)) if nchw else (x, dy)
        fg = f.reshape(cfg["kh"], cfg["kw"], 1, cfg["c"] * m)  # depthwise = grouped conv with one channel per group
        want = np_conv(xh, fg, cfg, cfg["c"])
        if cfg["dh"] == cfg["dw"] == 1:
            assert_close(grouped_reference(tf.constant(xh), tf.constant(fg), conv_attrs(cfg, "NHWC"), cfg["c"]), want)
        wdx = np_conv_backprop_input(dyh, fg, xh.shape, cfg, cfg["c"])
        wdf = np_conv_backprop_filter(xh, dyh, fg.shape, cfg, cfg["c"])
        cx, cf = tfc.constant(x), tfc.constant(f)
        with tfc.GradientTape() as ctape:
            ctape.watch([cx, cf])
            got = tfc.raw_ops.DepthwiseConv2dNative(input=cx, filter=cf, **conv_attrs(cfg))
        gdx, gdf = ctape.gradient(got, [cx, cf], output_gradients=dy)
        back = to_nchw if nchw else (lambda a: a)
        assert_close(got, back(want), msg="depthwise %r: " % cfg)
        assert_close(gdx, back(wdx), msg="depthwise d input %r: " % cfg)
        assert_close(gdf, wdf.reshape(f.shape), msg="depthwise d filter %r: " % cfg)


# ---- pooling -------------------------------------------------------------------------------------------

def pool_config(rng, explicit=False, allow_empty=False):
    while True:
        n = int(rng.integers(0, 3)) if allow_empty and rng.random() < 0.3 else int(rng.integers(1, 3))
        h, w, c = int(rng.integers(1, 9)), int(rng.integers(1, 9)), int(rng.integers(1, 6))
        kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        padding = str(rng.choice(["SAME", "VALID"] + (["EXPLICIT"] if explicit else [])))
        pads = [int(rng.integers(0, kh)), int(rng.integers(0, kh)), int(rng.integers(0, kw)), int(rng.integers(0, kw))]
        oh, ow = out_size(h, kh, sh, 1, padding, pads[:2]), out_size(w, kw, sw, 1, padding, pads[2:])
        if oh < 0 or ow < 0 or (not allow_empty and (oh == 0 or ow == 0)):
            continue
        fmt = str(rng.choice(["NHWC", "NCHW"]))
        return dict(n=n, h=h, w=w, c=c, kh=kh, kw=kw, sh=sh, sw=sw, padding=padding, pads=pads, fmt=fmt, oh=oh, ow=ow)


def np_max_pool(x, cfg):
    """Exact max pooling of NHWC x (TensorFlow's oneDNN MaxPool rounds float64 through float32, which breaks
    the orig_output == orig_input matching of MaxPoolGradGrad)."""
    pt, _, pl, _ = pads_of(dict(cfg, dh=1, dw=1))
    n, h, w, c = x.shape
    y = np.empty((n, cfg["oh"], cfg["ow"], c), x.dtype)
    for i in range(cfg["oh"]):
        for j in range(cfg["ow"]):
            h0, w0 = i * cfg["sh"] - pt, j * cfg["sw"] - pl
            y[:, i, j] = x[:, max(h0, 0):h0 + cfg["kh"], max(w0, 0):w0 + cfg["kw"]].max(axis=(1, 2))
    return y


def pool_attrs(cfg, fmt=None):
    fmt = fmt or cfg["fmt"]
    a = dict(ksize=layout4([1, cfg["kh"], cfg["kw"], 1], fmt), strides=layout4([1, cfg["sh"], cfg["sw"], 1], fmt),
             padding=cfg["padding"], data_format=fmt)
    if cfg["padding"] == "EXPLICIT":
        p = cfg["pads"]
        a["explicit_paddings"] = sum(layout4([[0, 0], p[:2], p[2:], [0, 0]], fmt), [])
    return a


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + ["int32", "int64", "int8", "uint8", "int16"])
def test_max_pool_matches_tf(rng, dtype):
    require_ops("MaxPool")
    for _ in range(10):
        cfg = pool_config(rng, explicit=True)
        x = random_array(rng, layout4([cfg["n"], cfg["h"], cfg["w"], cfg["c"]], cfg["fmt"]), dtype, -50, 50)
        attrs = pool_attrs(cfg)
        got = tfc_outputs("MaxPool", {"input": x}, attrs)
        want = tf_nhwc("MaxPool", {"input": x}, attrs, nchw_inputs=("input",) if cfg["fmt"] == "NCHW" else (),
                       nchw_output=True)
        assert got.dtype == x.dtype
        rtol, atol = POOL_TOL.get(dtype, (None, None))
        assert_close(got, want, dtype=dtype, rtol=rtol, atol=atol, msg="MaxPool %s %r: " % (dtype, cfg))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_avg_pool_matches_tf(rng, dtype):
    require_ops("AvgPool", "AvgPoolGrad")
    for _ in range(10):
        cfg = pool_config(rng)
        nchw = cfg["fmt"] == "NCHW"
        x = random_array(rng, layout4([cfg["n"], cfg["h"], cfg["w"], cfg["c"]], cfg["fmt"]), dtype)
        attrs = pool_attrs(cfg)
        got = tfc_outputs("AvgPool", {"value": x}, attrs)
        want = tf_nhwc("AvgPool", {"value": x}, attrs, nchw_inputs=("value",) if nchw else (), nchw_output=True)
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "AvgPool %r: " % cfg, POOL_TOL)
        dy = random_array(rng, got.shape, dtype)
        shp = np.array(x.shape, np.int32)
        got = tfc_outputs("AvgPoolGrad", {"orig_input_shape": shp, "grad": dy}, attrs)
        want = tf_nhwc("AvgPoolGrad", {"orig_input_shape": np.array(to_nhwc(x).shape if nchw else x.shape, np.int32),
                                       "grad": dy}, attrs, nchw_inputs=("grad",) if nchw else (), nchw_output=True)
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "AvgPoolGrad %r: " % cfg, POOL_TOL)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32"])
def test_max_pool_grads_match_tf(rng, dtype):
    require_ops("MaxPoolGrad", "MaxPoolGradGrad")
    for _ in range(10):
        cfg = pool_config(rng)
        nchw = cfg["fmt"] == "NCHW"
        lo, hi = (-50, 50) if dtype == "int32" else (-1, 1)
        x = random_array(rng, layout4([cfg["n"], cfg["h"], cfg["w"], cfg["c"]], cfg["fmt"]), dtype, lo, hi)
        attrs = pool_attrs(cfg)
        xt = to_nhwc(x) if nchw else x
        y_nhwc = np_max_pool(xt, cfg)
        y = (to_nchw(y_nhwc) if nchw else y_nhwc).astype(x.dtype)
        dy = random_array(rng, y.shape, dtype, lo, hi)
        got = tfc_outputs("MaxPoolGrad", {"orig_input": x, "orig_output": y, "grad": dy}, attrs)
        want = tf_nhwc("MaxPoolGrad", {"orig_input": x, "orig_output": y, "grad": dy}, attrs,
                       nchw_inputs=("orig_input", "orig_output", "grad") if nchw else (), nchw_output=True)
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "MaxPoolGrad %r: " % cfg, POOL_TOL)
        g2 = random_array(rng, x.shape, dtype, lo, hi)
        got = tfc_outputs("MaxPoolGradGrad", {"orig_input": x, "orig_output": y, "grad": g2}, attrs)
        want = tf_nhwc("MaxPoolGradGrad", {"orig_input": x, "orig_output": y, "grad": g2}, attrs,
                       nchw_inputs=("orig_input", "orig_output", "grad") if nchw else (), nchw_output=True)
        compare(got.astype(np.float64), want.astype(np.float64), dtype, "MaxPoolGradGrad %r: " % cfg, POOL_TOL)


def test_pool_many_channels(rng):
    """Channel counts past the kernels' channel blocks (MaxPoolGrad splits channels across threads; the
    argmax loops run 256 channels at a time)."""
    require_ops(*POOL_OPS)
    for c in (40, 300):
        cfg = dict(pool_config(rng), c=c, fmt="NHWC", n=1)
        x = random_array(rng, (1, cfg["h"], cfg["w"], c))
        attrs = pool_attrs(cfg)
        y = np_max_pool(x, cfg)
        assert_close(tfc_outputs("MaxPool", {"input": x}, attrs), y)
        dy = random_array(rng, y.shape)
        assert_op_matches("MaxPoolGrad", {"orig_input": x, "orig_output": y, "grad": dy}, attrs)
        assert_op_matches("MaxPoolGradGrad", {"orig_input": x, "orig_output": y, "grad": random_array(rng, x.shape)}, attrs)
        assert_op_matches("AvgPool", {"value": x}, attrs)
        assert_op_matches("AvgPoolGrad", {"orig_input_shape": np.array(x.shape, np.int32), "grad": dy}, attrs)


def test_max_pool_grad_routes_to_first_max():
    """Ties: the whole gradient goes to the first maximum in row-major window order."""
    require_ops("MaxPoolGrad")
    x = np.array([[1, 3, 3], [3, 2, 3], [0, 3, 1]], np.float32).reshape(1, 3, 3, 1)
    attrs = {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}
    y = tf.raw_ops.MaxPool(input=x, **attrs).numpy()
    dy = np.array([1, 10, 100, 1000], np.float32).reshape(1, 2, 2, 1)
    assert_op_matches("MaxPoolGrad", {"orig_input": x, "orig_output": y, "grad": dy}, attrs)


def test_pool_gradients_match_tf(rng):
    require_ops(*POOL_OPS)
    for _ in range(6):
        cfg = pool_config(rng)
        cfg["fmt"] = "NHWC"
        x = random_array(rng, (cfg["n"], cfg["h"], cfg["w"], cfg["c"]), "float64")
        attrs = pool_attrs(cfg)
        tol = dict(zip(("rtol", "atol"), POOL_TOL["float64"]))
        assert_grad_matches("MaxPool", {"input": x}, attrs, rng=rng, **tol)
        assert_grad_matches("AvgPool", {"value": x}, attrs, rng=rng, **tol)
        y = np_max_pool(x, cfg)
        dy = random_array(rng, y.shape, "float64")
        assert_grad_matches("MaxPoolGrad", {"orig_input": x, "orig_output": y, "grad": dy}, attrs, rng=rng, **tol)
        assert_grad_matches("MaxPoolGradGrad", {"orig_input": x, "orig_output": y,
                                                "grad": random_array(rng, x.shape, "float64")}, attrs, rng=rng, **tol)
        assert_grad_matches("AvgPoolGrad", {"orig_input_shape": np.array(x.shape, np.int32), "grad": dy}, attrs,
                            rng=rng, **tol)


def test_pool_nchw_gradients(rng):
    require_ops("MaxPool", "AvgPool", "MaxPoolGrad", "AvgPoolGrad")
    for _ in range(4):
        cfg = pool_config(rng)
        cfg["fmt"] = "NCHW"
        x = random_array(rng, (cfg["n"], cfg["c"], cfg["h"], cfg["w"]), "float64")
        for op, key in (("MaxPool", "input"), ("AvgPool", "value")):
            cx = tfc.constant(x)
            with tfc.GradientTape() as tape:
                tape.watch(cx)
                y = getattr(tfc.raw_ops, op)(**{key: cx}, **pool_attrs(cfg))
            dy = random_array(rng, y.shape, "float64")
            g = tape.gradient(y, cx, output_gradients=dy)
            tx = tf.constant(to_nhwc(x))
            with tf.GradientTape() as ttape:
                ttape.watch(tx)
                ty = getattr(tf.raw_ops, op)(**{key: tx}, **pool_attrs(cfg, "NHWC"))
            wg = ttape.gradient(ty, tx, output_gradients=tf.constant(to_nhwc(dy)))
            assert_close(y, to_nchw(ty.numpy()), rtol=1e-6, atol=1e-6, msg="%s NCHW %r: " % (op, cfg))
            assert_close(g, to_nchw(wg.numpy()), rtol=1e-6, atol=1e-6, msg="%s NCHW gradient %r: " % (op, cfg))


def test_empty_shapes(rng):
    """Size-0 batches and outputs: shapes from the window formulas, backprops all zeros."""
    require_ops(*CONV_OPS, *POOL_OPS)
    for _ in range(20):
        cfg = conv_config(rng, allow_empty=True)
        fmt = cfg["fmt"]
        x, f, dy = conv_backprop_inputs(rng, cfg, 2, "float32")
        attrs = conv_attrs(cfg)
        y = tfc_outputs("Conv2D", {"input": x, "filter": f}, attrs)
        assert y.shape == tuple(layout4([cfg["n"], cfg["oh"], cfg["ow"], 2], fmt)), cfg
        dx = tfc_outputs("Conv2DBackpropInput", {"input_sizes": np.array(x.shape, np.int32), "filter": f,
                                                 "out_backprop": dy}, attrs)
        df = tfc_outputs("Conv2DBackpropFilter", {"input": x, "filter_sizes": np.array(f.shape, np.int32),
                                                  "out_backprop": dy}, attrs)
        assert dx.shape == x.shape and df.shape == f.shape
        if dy.size == 0:
            assert not dx.any() and not df.any(), cfg
        pc = pool_config(rng, allow_empty=True)
        px = random_array(rng, layout4([pc["n"], pc["h"], pc["w"], pc["c"]], pc["fmt"]))
        for op, key in (("MaxPool", "input"), ("AvgPool", "value")):
            py = tfc_outputs(op, {key: px}, pool_attrs(pc))
            assert py.shape == tuple(layout4([pc["n"], pc["oh"], pc["ow"], pc["c"]], pc["fmt"])), pc
        pdy = random_array(rng, py.shape)
        g = tfc_outputs("AvgPoolGrad", {"orig_input_shape": np.array(px.shape, np.int32), "grad": pdy}, pool_attrs(pc))
        assert g.shape == px.shape and (pdy.size or not g.any())


# ---- errors --------------------------------------------------------------------------------------------

def test_conv_errors_match_tf(rng):
    require_ops(*CONV_OPS)
    x, f = random_array(rng, (2, 5, 5, 3)), random_array(rng, (3, 3, 3, 4))
    ok = {"strides": [1, 1, 1, 1], "padding": "VALID"}
    bad = [
        ("Conv2D", {"input": x, "filter": random_array(rng, (3, 3, 2, 4))}, ok),          # 3 % 2 != 0
        ("Conv2D", {"input": x, "filter": f}, {"strides": [1, 1, 1], "padding": "VALID"}),
        ("Conv2D", {"input": x, "filter": f}, {"strides": [1, 0, 1, 1], "padding": "VALID"}),
        ("Conv2D", {"input": x, "filter": f}, {"strides": [1, -2, 1, 1], "padding": "VALID"}),
        ("Conv2D", {"input": x, "filter": f}, {"strides": [2, 1, 1, 1], "padding": "VALID"}),
        ("Conv2D", {"input": x, "filter": f}, dict(ok, dilations=[1, 0, 1, 1])),
        ("Conv2D", {"input": x, "filter": f}, dict(ok, dilations=[1, 1, 1])),
        ("Conv2D", {"input": x, "filter": f}, dict(ok, dilations=[1, 3, 3, 1])),          # output would be negative
        ("Conv2D", {"input": x, "filter": random_array(rng, (0, 3, 3, 4))}, ok),
        ("DepthwiseConv2dNative", {"input": x, "filter": random_array(rng, (3, 3, 2, 2))}, ok),
        ("DepthwiseConv2dNative", {"input": x, "filter": f}, {"strides": [1, 0, 0, 1], "padding": "VALID"}),
    ]
    for op, inputs, attrs in bad:
        assert_both_raise(op, inputs, attrs)


def test_conv_zero_output_channels_as_tf(rng):
    """A filter with 0 output channels gives an empty output (and a zero input gradient), as TensorFlow's."""
    require_ops(*CONV_OPS)
    x, f = random_array(rng, (2, 5, 5, 3)), random_array(rng, (3, 3, 3, 0))
    dy = random_array(rng, (2, 3, 3, 0))
    ok = {"strides": [1, 1, 1, 1], "padding": "VALID"}
    cases = [
        ("Conv2D", {"input": x, "filter": f}),
        ("Conv2DBackpropInput", {"input_sizes": np.array([2, 5, 5, 3], np.int32), "filter": f, "out_backprop": dy}),
        ("Conv2DBackpropFilter", {"input": x, "filter_sizes": np.array([3, 3, 3, 0], np.int32), "out_backprop": dy}),
    ]
    for op, inputs in cases:
        want = np.asarray(run_tf(op, inputs, ok))
        got = np.asarray(run_tfc(op, inputs, ok))
        assert got.shape == want.shape, op
        np.testing.assert_array_equal(got, want)


def test_pool_errors_match_tf(rng):
    require_ops(*POOL_OPS)
    x = random_array(rng, (2, 5, 5, 3))
    bad = [
        ("MaxPool", {"input": x}, {"ksize": [1, 0, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}),
        ("MaxPool", {"input": x}, {"ksize": [1, 2, 2, 1], "strides": [1, 0, 1, 1], "padding": "VALID"}),
        ("MaxPool", {"input": x}, {"ksize": [2, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}),
        ("MaxPool", {"input": x}, {"ksize": [1, 7, 1, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}),
        ("MaxPool", {"input": x}, {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "EXPLICIT",
                                   "explicit_paddings": [0, 0, 2, 2, 1, 1, 0, 0]}),
        ("AvgPool", {"value": x}, {"ksize": [1, 2, 2, 1, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}),
        ("AvgPool", {"value": x[0]}, {"ksize": [1, 2, 2, 1], "strides": [1, 1, 1, 1], "padding": "VALID"}),
        ("MaxPoolGrad", {"orig_input": x, "orig_output": random_array(rng, (2, 3, 3, 3)),
                         "grad": random_array(rng, (2, 3, 2, 3))},
         {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}),
    ]
    for op, inputs, attrs in bad:
        assert_both_raise(op, inputs, attrs)


def test_rejects_what_tensorflow_reference_kernels_reject(rng):
    """Calls TensorFlow's reference (Eigen) kernels reject but its oneDNN kernels, the default in the test venv,
    let through, abort on or crash the process with: tfc follows the reference kernels' checks."""
    require_ops(*CONV_OPS, *POOL_OPS)
    x, f = random_array(rng, (2, 5, 5, 3)), random_array(rng, (3, 3, 3, 4))
    ok = {"strides": [1, 1, 1, 1], "padding": "VALID"}
    cases = [
        ("Conv2D", {"input": x, "filter": f}, dict(ok, padding="EXPLICIT", explicit_paddings=[0, 0, 1, 1, 1, 1]),
         "explicit_paddings attribute must contain 8 values"),
        ("Conv2D", {"input": x, "filter": f}, dict(ok, explicit_paddings=[0, 0, 1, 1, 1, 1, 0, 0]),
         "explicit_paddings attribute must be empty"),
        ("Conv2D", {"input": x, "filter": f}, dict(ok, padding="EXPLICIT", explicit_paddings=[0, 0, -1, 1, 1, 1, 0, 0]),
         "must be nonnegative"),
        ("Conv2D", {"input": x, "filter": f}, dict(ok, padding="EXPLICIT", explicit_paddings=[1, 0, 1, 1, 1, 1, 0, 0]),
         "batch or depth"),
        ("AvgPoolGrad", {"orig_input_shape": np.array([2, 5, 5, 3], np.int32), "grad": random_array(rng, (2, 2, 3, 3))},
         {"ksize": [1, 2, 2, 1], "strides": [1, 2, 2, 1], "padding": "SAME"}, "Expected grad shape to be [2,3,3,3]"),
        ("Conv2DBackpropInput", {"input_sizes": np.array([2, 5, 5, 3], np.int32), "filter": f,
                                 "out_backprop": random_array(rng, (2, 4, 3, 4))}, ok,
         "Size of out_backprop doesn't match computed: actual = 4, computed = 3"),
        ("Conv2DBackpropInput", {"input_sizes": np.array([2, 5, 5, 3], np.int32), "filter": f,
                                 "out_backprop": random_array(rng, (3, 3, 3, 4))}, ok, "same batch size: 2 vs 3"),
        ("Conv2DBackpropInput", {"input_sizes": np.array([2, 5, 5, 3], np.int32), "filter": f,
                                 "out_backprop": random_array(rng, (2, 3, 3, 5))}, ok, "same out_depth: 4 vs 5"),
        ("Conv2DBackpropInput", {"input_sizes": np.array([5, 5, 3], np.int32), "filter": f,
                                 "out_backprop": random_array(rng, (2, 3, 3, 4))}, ok,
         "input_sizes must contain 4 values or 2 values, got 3"),
        ("Conv2DBackpropFilter", {"input": x, "filter_sizes": np.array([3, 3, 3, 5], np.int32),
                                  "out_backprop": random_array(rng, (2, 3, 3, 4))}, ok, "same out_depth: 5 vs 4"),
    ]
    for op, inputs, attrs, text in cases:
        with pytest.raises(tfc.InvalidArgumentError, match=r"%s: .*%s" % (op, re.escape(text))):
            tfc_outputs(op, inputs, attrs)


def test_c_wrappers_exist():
    """The typed C wrappers are exported."""
    for name in ("tfc_conv2d", "tfc_conv2d_backprop_input", "tfc_conv2d_backprop_filter", "tfc_depthwise_conv2d",
                 "tfc_max_pool", "tfc_avg_pool", "tfc_max_pool_grad", "tfc_avg_pool_grad"):
        assert hasattr(tfc._lib.lib, name), name
