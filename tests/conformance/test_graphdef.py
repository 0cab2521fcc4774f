"""GraphDef, TensorProto and .npy interchange with TensorFlow and NumPy: what TensorFlow writes tfc reads (same
nodes, ops, inputs, functions, constant values; `tfc graph show` lists them), what tfc writes TensorFlow reads
and runs, and hostile edits of TensorFlow's graphs get tfc's clear errors. Random values every run."""
import os
import re
import subprocess

import numpy as np
import pytest
import tensorflow as tf
from conftest import random_array

import tfc
from tfc import graphdef as gd

DTYPES = ["float32", "float64", "float16", "bfloat16", "int32", "int64", "int16", "int8", "uint8", "uint16", "bool",
          "string"]


def _tfc_bin():
    return os.path.join(os.path.dirname(tfc.library_path), "tfc")


def _random_shape(rng, max_rank=4):
    return tuple(int(d) for d in rng.integers(0, 4, size=int(rng.integers(0, max_rank + 1))))


def _value(rng, dtype, shape):
    if dtype in ("uint8", "uint16"):
        return rng.integers(0, 200, size=shape).astype(dtype)
    if dtype in ("int8", "int16"):
        return rng.integers(-100, 100, size=shape).astype(dtype)
    return random_array(rng, shape, dtype, low=-50, high=50)


def _same(a, b, dtype):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    if dtype == "string":
        assert a.tolist() == b.tolist()
    elif dtype == "bfloat16":
        np.testing.assert_array_equal(a.astype(np.float32), b.astype(np.float32))
    else:
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        np.testing.assert_array_equal(a, b)


# ---- TensorProto ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_tensorflow_tensor_protos_decode_in_tfc(rng, dtype):
    for _ in range(4):
        arr = _value(rng, dtype, _random_shape(rng))
        proto = tf.make_tensor_proto(arr, dtype=dtype)
        _same(gd.tensor_from_proto(proto.SerializeToString()).numpy(), tf.make_ndarray(proto), dtype)
    # TensorFlow's short typed fields: one value broadcast to a shape repeats (the fill rule)
    scalar = _value(rng, dtype, ())
    shape = [int(rng.integers(1, 4)), int(rng.integers(2, 5))]
    proto = tf.make_tensor_proto(scalar, dtype=dtype, shape=shape)
    assert not proto.tensor_content  # the typed field holds fewer values than the shape
    _same(gd.tensor_from_proto(proto.SerializeToString()).numpy(), tf.make_ndarray(proto), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_tfc_tensor_protos_decode_in_tensorflow(rng, dtype):
    for shape in [(), _random_shape(rng), (1,), (2, 3)]:
        arr = _value(rng, dtype, shape)
        t = tfc.constant(arr, dtype=dtype)
        proto = tf.make_tensor_proto(0)
        proto.ParseFromString(gd.tensor_to_proto(t))
        assert proto.dtype == tf.as_dtype(dtype).as_datatype_enum
        _same(tf.make_ndarray(proto), t.numpy(), dtype)


def test_hostile_tensor_protos():
    proto = tf.make_tensor_proto(np.arange(6, dtype=np.float32).reshape(2, 3))
    proto.tensor_content = proto.tensor_content[:-4]
    with pytest.raises(tfc.errors.InvalidArgumentError, match="tensor_content has 20 bytes, but shape"):
        gd.tensor_from_proto(proto.SerializeToString())
    proto = tf.make_tensor_proto(np.zeros(2, np.complex64))
    with pytest.raises(tfc.errors.InvalidArgumentError, match="dtype 8 is not supported"):
        gd.tensor_from_proto(proto.SerializeToString())
    proto = tf.make_tensor_proto(1.0, shape=[1 << 20, 1 << 20])
    with pytest.raises(tfc.errors.InvalidArgumentError, match="over the limit"):
        gd.tensor_from_proto(proto.SerializeToString())
    with pytest.raises((tfc.errors.DataLossError, tfc.errors.InvalidArgumentError)):
        gd.tensor_from_proto(tf.make_tensor_proto(np.ones(9)).SerializeToString()[:-3])


# ---- GraphDefs TensorFlow traces ------------------------------------------------------------------------

def _graphs(rng):
    """(name, GraphDef) of tf.functions with constants of every dtype, arithmetic, a nested function call,
    cond and while (function library), traced by TensorFlow."""
    consts = {d: _value(rng, d, _random_shape(rng, 3)) for d in DTYPES}

    @tf.function
    def constants():
        return [tf.identity(tf.constant(v, dtype=d)) for d, v in consts.items()]

    w = random_array(rng, (3, 4), "float32")

    @tf.function
    def inner(a):
        return tf.nn.relu(a) * 2.0

    @tf.function
    def dense(x, b):
        return inner(tf.matmul(x, w) + b), tf.reduce_sum(x, axis=1)

    @tf.function
    def control(x, n):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 3.0, lambda: x - 1.0)
        i = tf.constant(0)
        while i < n:
            y = y + tf.cast(i, tf.float32)
            i += 1
        return y

    return [
        ("constants", constants.get_concrete_function().graph.as_graph_def()),
        ("dense", dense.get_concrete_function(tf.TensorSpec([None, 3], tf.float32),
                                              tf.TensorSpec([4], tf.float32)).graph.as_graph_def()),
        ("control", control.get_concrete_function(tf.TensorSpec([2, None], tf.float32),
                                                  tf.TensorSpec([], tf.int32)).graph.as_graph_def()),
    ]


def _check_consts(g, nodes, fn):
    n_checked = 0
    for node in nodes:
        if node.op != "Const":
            continue
        expected = tf.make_ndarray(node.attr["value"].tensor)
        got = g.attr(node.name, "value", fn=fn).numpy()
        _same(got, expected, tf.as_dtype(node.attr["dtype"].type).name)
        assert g.attr(node.name, "dtype", fn=fn) == tf.as_dtype(node.attr["dtype"].type).name
        n_checked += 1
    return n_checked


def test_tensorflow_graphdefs_read_by_tfc(rng):
    for name, graph_def in _graphs(rng):
        g = gd.GraphDef(graph_def.SerializeToString())  # strict: every op known to tfc or the library
        nodes = g.nodes()
        assert [(n.name, n.op, n.inputs) for n in nodes] == [(n.name, n.op, list(n.input)) for n in graph_def.node], name
        consts = _check_consts(g, graph_def.node, gd.TOP)
        fns = g.functions()
        assert sorted(f[0] for f in fns) == sorted(f.signature.name for f in graph_def.library.function)
        for idx, (fname, ins, outs, n_nodes) in enumerate(fns):
            fdef = next(f for f in graph_def.library.function if f.signature.name == fname)
            assert [a for a, _ in ins] == [a.name for a in fdef.signature.input_arg]
            assert [(o, r) for o, _, r in outs] == [(a.name, fdef.ret[a.name]) for a in fdef.signature.output_arg]
            assert [(n.name, n.op, n.inputs) for n in g.nodes(idx)] == [(n.name, n.op, list(n.input)) for n in fdef.node_def]
            consts += _check_consts(g, fdef.node_def, idx)
        assert consts > 0
        if name == "constants":
            assert consts >= len(DTYPES)
        if name == "control":
            assert {n.op for n in nodes} & {"If", "StatelessIf"} and {n.op for n in nodes} & {"While", "StatelessWhile"}


def test_graph_show_lists_tensorflow_graph(rng, tmp_path):
    for name, graph_def in _graphs(rng):
        path = tmp_path / (name + ".pb")
        path.write_bytes(graph_def.SerializeToString())
        out = subprocess.run([_tfc_bin(), "graph", "show", str(path)], check=True, capture_output=True, text=True).stdout
        lines = out.splitlines()
        assert lines[0].startswith("graph %s: %d nodes, %d functions" % (path, len(graph_def.node),
                                                                          len(graph_def.library.function)))
        body = lines[lines.index("nodes:") + 1:]
        top = []
        for line in body:
            if line.startswith("function "):
                break
            m = re.match(r"  (\S+) = (\S+)\((.*?)\)", line)
            assert m, line
            top.append((m.group(1), m.group(2), m.group(3).split(", ") if m.group(3) else []))
        assert top == [(n.name, n.op, list(n.input)) for n in graph_def.node]
        placeholders = [n.name for n in graph_def.node if n.op == "Placeholder"]
        assert lines[1] == "inputs: " + (" ".join(placeholders) if placeholders else "(none)")
        for f in graph_def.library.function:
            assert any(line.startswith("function %s(" % f.signature.name) for line in lines)


def test_tfc_reserialises_tensorflow_graphdefs(rng):
    for _, graph_def in _graphs(rng):
        again = tf.compat.v1.GraphDef.FromString(gd.GraphDef(graph_def.SerializeToString()).serialize())
        assert again == graph_def


def test_hostile_edits_of_tensorflow_graphs(rng):
    _, graph_def = _graphs(rng)[1]
    bad = tf.compat.v1.GraphDef()
    bad.CopyFrom(graph_def)
    next(n for n in bad.node if n.op == "MatMul").op = "NoSuchOp"
    with pytest.raises(tfc.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
        gd.GraphDef(bad.SerializeToString())
    gd.GraphDef(bad.SerializeToString(), allow_unknown_ops=True)  # inspecting still works
    bad.CopyFrom(graph_def)
    node = next(n for n in bad.node if n.op == "AddV2")
    del node.attr["T"]
    with pytest.raises(tfc.errors.InvalidArgumentError, match="NodeDef missing attr 'T'.*node %s" % re.escape(node.name)):
        gd.GraphDef(bad.SerializeToString())
    bad.CopyFrom(graph_def)
    bad.node[-1].input.append("^nowhere")
    with pytest.raises(tfc.errors.InvalidArgumentError, match="Unknown input node '\\^nowhere'"):
        gd.GraphDef(bad.SerializeToString())
    bad.node[-1].input[-1] = bad.node[0].name
    with pytest.raises(tfc.errors.InvalidArgumentError, match="2 data inputs given, the op takes 1"):
        gd.GraphDef(bad.SerializeToString())
    bad.CopyFrom(graph_def)
    bad.node[0].input.append("^" + bad.node[-1].name)  # the first node now waits for the last: a cycle
    with pytest.raises(tfc.errors.InvalidArgumentError, match="cycle"):
        gd.GraphDef(bad.SerializeToString())
    bad.CopyFrom(graph_def)
    f = bad.library.function[0]
    call = f.node_def.add()
    call.CopyFrom(next(n for n in bad.node if n.op in ("StatefulPartitionedCall", "PartitionedCall")))
    call.name = "self_call"
    del call.input[:]
    call.input.extend([f.signature.input_arg[0].name])
    call.attr["f"].func.name = f.signature.name
    with pytest.raises(tfc.errors.InvalidArgumentError, match="calls itself"):
        gd.GraphDef(bad.SerializeToString())
    data = graph_def.SerializeToString()
    for cut in sorted(set(int(c) for c in rng.integers(1, len(data), size=40))):
        try:
            gd.GraphDef(data[:cut])
        except (tfc.errors.DataLossError, tfc.errors.InvalidArgumentError, tfc.errors.NotFoundError):
            pass


# ---- GraphDefs tfc writes ------------------------------------------------------------------------------

def test_tfc_written_graphdef_runs_in_tensorflow(rng):
    x = random_array(rng, (2, 3), "float32")
    w = random_array(rng, (3, 4), "float32")
    b = random_array(rng, (4,), "float32")
    g = gd.GraphDef.new()
    f32 = tfc.float32
    f = g.add_function("affine", [("a", f32)], [("r", f32, "add:z:0")])
    g.add_node("two", "Const", attrs={"dtype": f32, "value": tfc.constant(2.0)}, fn=f)
    g.add_node("mul", "Mul", ["a", "two:output:0"], {"T": f32}, fn=f)
    g.add_node("add", "AddV2", ["mul:z:0", "two:output:0"], {"T": f32}, fn=f)
    g.add_node("x", "Placeholder", attrs={"dtype": f32, "shape": gd.Shape_([2, 3])})
    g.add_node("w", "Const", attrs={"dtype": f32, "value": tfc.constant(w)})
    g.add_node("b", "Const", attrs={"dtype": f32, "value": tfc.constant(b)})
    g.add_node("mm", "MatMul", ["x", "w"], {"T": f32, "transpose_a": False, "transpose_b": False})
    g.add_node("ba", "BiasAdd", ["mm", "b"], {"T": f32, "data_format": "NHWC"})
    g.add_node("relu", "Relu", ["ba:0"], {"T": f32})
    g.add_node("call", "PartitionedCall", ["relu"], {"Tin": [f32], "Tout": [f32], "f": gd.Func("affine")})
    g.add_node("y", "Identity", ["call:0", "^x"], {"T": f32})
    g.validate()
    graph_def = tf.compat.v1.GraphDef.FromString(g.serialize())
    assert [n.name for n in graph_def.node] == ["x", "w", "b", "mm", "ba", "relu", "call", "y"]
    with tf.Graph().as_default() as graph:
        tf.graph_util.import_graph_def(graph_def, name="")
        with tf.compat.v1.Session(graph=graph) as sess:
            y = sess.run("y:0", feed_dict={"x:0": x})
    np.testing.assert_allclose(y, np.maximum(x @ w + b, 0) * 2 + 2, rtol=1e-5, atol=1e-5)


# ---- .npy ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [d for d in DTYPES if d not in ("bfloat16", "string")] + ["S", "U"])
def test_npy_interchange_with_numpy(rng, tmp_path, dtype):
    shape = _random_shape(rng)
    if dtype in ("S", "U"):
        words = ["", "ab", "h\u00e9llo", "a much longer word"]
        words = np.array([w.encode("utf-8") for w in words] if dtype == "S" else words)
        arr = words[rng.integers(0, 4, size=shape)]
    else:
        arr = _value(rng, dtype, shape)
    path = tmp_path / "a.npy"
    np.save(path, arr)
    t = gd.npy_parse(path.read_bytes())
    if dtype in ("S", "U"):
        expected = np.vectorize(lambda s: s if isinstance(s, bytes) else s.encode("utf-8"), otypes=[object])(arr)
        assert np.asarray(t.numpy(), dtype=object).tolist() == expected.tolist()
    else:
        _same(t.numpy(), arr, dtype)
    path.write_bytes(gd.npy_serialize(t))
    back = np.load(path)
    if dtype in ("S", "U"):
        assert back.astype(object).tolist() == np.asarray(t.numpy(), dtype=object).tolist()
    else:
        _same(back, arr, dtype)


# ---- TensorFlow-traced graphs run by `tfc graph run` ----------------------------------------------------

def _run_cases(rng):
    """(name, tf.function, input specs, inputs) with weights captured as constants (numpy arrays)."""
    w = random_array(rng, (5, 4), "float32")
    b = random_array(rng, (4,), "float32")
    k = random_array(rng, (3, 3, 2, 3), "float32")

    @tf.function
    def head(h):
        return tf.nn.softmax(h), tf.reduce_mean(h, axis=1, keepdims=True)

    @tf.function
    def dense(x):
        h = tf.nn.relu(tf.matmul(x, w) + b)
        return head(h) + (tf.reduce_sum(h),)

    @tf.function
    def elementwise(x, y):
        return tf.tanh(x * y) - tf.exp(-tf.abs(y)) + tf.sigmoid(x) / (1.0 + tf.square(y))

    @tf.function
    def shapes(x):
        t = tf.transpose(tf.reshape(x, [-1, 2, 5]), [0, 2, 1])
        return tf.concat([t, t * 2.0], axis=2), tf.argmax(x, axis=1), tf.cast(x > 0, tf.int32)

    @tf.function
    def conv(img):
        y = tf.nn.conv2d(img, k, strides=1, padding="SAME")
        return tf.nn.max_pool2d(tf.nn.relu(y), 2, 2, "VALID")

    @tf.function
    def control(x, n):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 3.0, lambda: x - 1.0)
        i = tf.constant(0)
        while i < n:
            y = y * 0.5 + tf.cast(i, tf.float32)
            i += 1
        return y, i

    n = int(rng.integers(1, 5))
    return [
        ("dense", dense, [tf.TensorSpec([None, 5], tf.float32)], [random_array(rng, (n, 5), "float32")]),
        ("elementwise", elementwise, [tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([3], tf.float32)],
         [random_array(rng, (n, 3), "float32"), random_array(rng, (3,), "float32")]),
        ("shapes", shapes, [tf.TensorSpec([None, 10], tf.float32)], [random_array(rng, (2 * n, 10), "float32")]),
        ("conv", conv, [tf.TensorSpec([None, 6, 6, 2], tf.float32)], [random_array(rng, (n, 6, 6, 2), "float32")]),
        ("control", control, [tf.TensorSpec([2, None], tf.float32), tf.TensorSpec([], tf.int32)],
         [random_array(rng, (2, n), "float32"), np.int32(rng.integers(0, 5))]),
    ]


def test_tensorflow_graphs_run_in_tfc(rng, tmp_path):
    for name, fn, specs, inputs in _run_cases(rng):
        cf = fn.get_concrete_function(*specs)
        path = tmp_path / (name + ".pb")
        path.write_bytes(cf.graph.as_graph_def().SerializeToString())
        feeds = []
        for t, v in zip(cf.inputs, inputs):
            f = tmp_path / ("%s_%s.npy" % (name, t.op.name))
            np.save(f, v)
            feeds.append("%s=%s" % (t.op.name, f))
        outs = [t.name[:-2] if t.name.endswith(":0") else t.name for t in cf.outputs]
        outdir = tmp_path / name
        outdir.mkdir()
        r = subprocess.run([_tfc_bin(), "graph", "run", str(path), "--inputs", ";".join(feeds), "--outputs",
                            ",".join(outs), "--outdir", str(outdir)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        expected = tf.nest.flatten(cf(*[tf.constant(v) for v in inputs]))
        for o, e in zip(outs, expected):
            got = np.load(outdir / (o.replace(":", "_").replace("/", "_") + ".npy"))
            assert got.dtype == e.numpy().dtype, (name, o)
            np.testing.assert_allclose(got, e.numpy(), rtol=2e-5, atol=2e-5, err_msg="%s %s" % (name, o))


def test_graph_run_bad_flags(rng, tmp_path):
    name, fn, specs, inputs = _run_cases(rng)[0]
    path = tmp_path / "g.pb"
    cf = fn.get_concrete_function(*specs)
    path.write_bytes(cf.graph.as_graph_def().SerializeToString())
    np.save(tmp_path / "x.npy", inputs[0])
    base = [_tfc_bin(), "graph", "run", str(path), "--outdir", str(tmp_path)]
    r = subprocess.run(base + ["--outputs", "Identity"], capture_output=True, text=True)
    assert r.returncode == 1 and "Placeholder 'x' is not fed" in r.stderr
    r = subprocess.run(base + ["--inputs", "nope=%s" % (tmp_path / "x.npy"), "--outputs", "Identity"],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "'nope' is not a Placeholder" in r.stderr
    r = subprocess.run(base + ["--inputs", "x=%s" % (tmp_path / "x.npy"), "--outputs", "ghost"], capture_output=True,
                       text=True)
    assert r.returncode == 1 and "output 'ghost'" in r.stderr
    r = subprocess.run(base + ["--inputs", "x=%s" % (tmp_path / "x.npy"), "--outputs", "Identity"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(base + ["--inputs", "x=%s" % (tmp_path / "x.npy"), "--outputs", "Identity"], capture_output=True,
                       text=True)
    assert r.returncode == 1 and "already exists (use --overwrite)" in r.stderr
