"""Seed inputs of the GraphDef/TensorProto and .npy fuzz targets (tests/fuzz/corpus/graphdef, corpus/npy), written
by TensorFlow and NumPy: python tests/fuzz/make_corpus_graphdef.py."""
import os

import numpy as np
import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
GRAPHDEF = os.path.join(HERE, "corpus", "graphdef")
NPY = os.path.join(HERE, "corpus", "npy")


@tf.function
def consts():
    return [tf.identity(tf.constant(np.arange(6).reshape(2, 3).astype(d))) for d in
            ["float32", "float64", "float16", "int32", "int64", "int16", "int8", "uint8", "uint16", "bool"]] + \
           [tf.constant([b"ab", b"c"]), tf.constant(np.arange(4, dtype=np.float32).astype(tf.bfloat16.as_numpy_dtype))]


@tf.function
def inner(a):
    return tf.nn.relu(a) * 2.0


@tf.function
def dense(x):
    return inner(tf.matmul(x, np.ones((3, 2), np.float32))), tf.reduce_sum(x, axis=1)


@tf.function
def control(x, n):
    y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: x - 1.0)
    i = tf.constant(0)
    while i < n:
        y = y + 1.0
        i += 1
    return y


def main():
    os.makedirs(GRAPHDEF, exist_ok=True)
    os.makedirs(NPY, exist_ok=True)
    graphs = [("consts", consts.get_concrete_function()),
              ("dense", dense.get_concrete_function(tf.TensorSpec([None, 3], tf.float32))),
              ("control", control.get_concrete_function(tf.TensorSpec([None, 2], tf.float32),
                                                        tf.TensorSpec([], tf.int32)))]
    for name, cf in graphs:
        with open(os.path.join(GRAPHDEF, name + ".pb"), "wb") as f:
            f.write(cf.graph.as_graph_def().SerializeToString())
    protos = [tf.make_tensor_proto(v) for v in (np.float32(1.5), np.arange(5, dtype=np.int64), np.array([b"x", b"yz"]))]
    protos.append(tf.make_tensor_proto(2.0, shape=[3, 4]))  # one value filling the shape
    for i, p in enumerate(protos):
        with open(os.path.join(GRAPHDEF, "tensor%d.pb" % i), "wb") as f:
            f.write(p.SerializeToString())
    for d in ["<f4", "<f8", "<f2", "<i4", "<i8", "|u1", "|b1", "<u2"]:
        np.save(os.path.join(NPY, "a%s.npy" % d[1:]), np.arange(6).reshape(2, 3).astype(d))
    np.save(os.path.join(NPY, "s.npy"), np.array([b"ab", b"", b"xyz"]))
    np.save(os.path.join(NPY, "u.npy"), np.array(["h\u00e9", "z"]))
    np.save(os.path.join(NPY, "scalar.npy"), np.float64(3.0))


if __name__ == "__main__":
    main()
