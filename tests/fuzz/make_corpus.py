"""Writes the seed corpus of every libFuzzer target into tests/fuzz/corpus/<reader>/ (committed; rerun after
changing a reader's format). Every seed is made here, by TensorFlow/Keras (build/venv) or by hand from the
format's spec, never copied from third-party files. Small on purpose: the fuzzer mutates from them.

    build/venv/bin/python tests/fuzz/make_corpus.py
"""
import gzip
import json
import os
import struct
import sys
import tempfile
import zlib

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus")


def put(reader, name, data):
    d = os.path.join(OUT, reader)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- IDX: magic 0 0 type rank, big-endian dims, data ----
def idx(dtype_code, fmt, dims, values):
    head = bytes([0, 0, dtype_code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims)
    return head + b"".join(struct.pack(">" + fmt, v) for v in values)


def make_idx():
    put("idx", "u8_images", idx(0x08, "B", [2, 3, 3], range(18)))
    put("idx", "u8_labels", idx(0x08, "B", [4], [1, 2, 3, 9]))
    put("idx", "i32", idx(0x0C, "i", [2, 2], [1, -2, 3, 70000]))
    put("idx", "f32", idx(0x0D, "f", [3], [0.5, -1.0, 2.0]))
    put("idx", "f64", idx(0x0E, "d", [1, 2], [1.5, 3.0]))
    put("idx", "i16", idx(0x0B, "h", [2], [-3, 300]))
    put("idx", "scalar_rank0", bytes([0, 0, 8, 0, 7]))


# ---- TFRecord framing: len, masked crc32c(len), data, masked crc32c(data) ----
def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data):
    n = struct.pack("<Q", len(data))
    return n + struct.pack("<I", masked(n)) + data + struct.pack("<I", masked(data))


def make_tfrecord(examples):
    plain = b"".join(record(r) for r in [b"hello", b"", b"x" * 40] + examples[:2])
    # first byte picks the compression: 0 none, 1 ZLIB, 2 GZIP
    put("tfrecord", "plain", b"\x00" + plain)
    put("tfrecord", "zlib", b"\x01" + zlib.compress(plain))
    put("tfrecord", "gzip", b"\x02" + gzip.compress(plain, mtime=0))
    bad = bytearray(plain)
    bad[14] ^= 0xFF  # a data CRC error in the first record
    put("tfrecord", "bad_data_crc", b"\x00" + bytes(bad))
    put("tfrecord", "truncated", b"\x00" + plain[:-3])


def make_examples():
    import tensorflow as tf

    def feat(v):
        if isinstance(v[0], float):
            return tf.train.Feature(float_list=tf.train.FloatList(value=v))
        if isinstance(v[0], int):
            return tf.train.Feature(int64_list=tf.train.Int64List(value=v))
        return tf.train.Feature(bytes_list=tf.train.BytesList(value=v))

    protos = [
        {"a": [1.0, 2.0], "b": [b"str"], "c": [1, 2, 3], "d": [1.0, 2.0, 3.0, 4.0], "e": [b"x", b"yz"], "f": [5]},
        {"c": [7], "e": [b""], "f": [1, 2, 3, 4]},
        {"a": [0.5, -1.0], "d": [], "zz": [b"unused"]},
        {},
    ]
    out = []
    for i, p in enumerate(protos):
        ex = tf.train.Example(features=tf.train.Features(feature={k: feat(v) if v else tf.train.Feature(float_list=tf.train.FloatList()) for k, v in p.items()}))
        data = ex.SerializeToString()
        put("example", "example%d" % i, data)
        out.append(data)
    seq = tf.train.SequenceExample(context=tf.train.Features(feature={"a": feat([1.0, 2.0])}))
    put("example", "sequence_example", seq.SerializeToString())
    return out


def make_images():
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(0)
    for h, w, c in [(2, 3, 3), (4, 4, 1), (3, 2, 4), (1, 1, 2)]:
        img = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
        # first byte picks channels / dtype / JPEG attributes
        put("image", "png_%dx%dx%d" % (h, w, c), b"\x00" + tf.io.encode_png(img).numpy())
    img16 = rng.integers(0, 65536, (2, 2, 3), dtype=np.uint16)
    put("image", "png16", b"\x05" + tf.io.encode_png(img16).numpy())
    for h, w, c, prog in [(8, 8, 3, False), (5, 7, 1, True), (16, 9, 3, True)]:
        img = rng.integers(0, 256, (h, w, c), dtype=np.uint8)
        put("image", "jpeg_%dx%dx%d" % (h, w, c), bytes([0x12 if prog else 0x00]) +
            tf.io.encode_jpeg(img, progressive=prog, chroma_downsampling=not prog).numpy())
    # BMP: 24-bit bottom-up 2x2 and 32-bit top-down 1x2, by the spec (BITMAPINFOHEADER)
    def bmp(w, h, bpp, rows):
        row = ((w * bpp // 8) + 3) & ~3
        pix = b"".join(r + b"\x00" * (row - len(r)) for r in rows)
        info = struct.pack("<IiiHHIIiiII", 40, w, h, 1, bpp, 0, len(pix), 2835, 2835, 0, 0)
        return b"BM" + struct.pack("<IHHI", 14 + 40 + len(pix), 0, 0, 54) + info + pix
    put("image", "bmp24", b"\x00" + bmp(2, 2, 24, [b"\x00\x00\xff\x00\xff\x00", b"\xff\x00\x00\xff\xff\xff"]))
    put("image", "bmp32_topdown", b"\x03" + bmp(2, -1, 32, [b"\x01\x02\x03\x04\x05\x06\x07\x08"]))


def make_keras():
    import numpy as np
    import tf_keras as keras

    m = keras.Sequential([keras.layers.Dense(3, activation="relu", input_shape=(4,)), keras.layers.Dropout(0.5),
                          keras.layers.BatchNormalization(), keras.layers.Dense(2)])
    put("keras_json", "sequential", m.to_json().encode())
    inp = keras.Input((8, 8, 1))
    x = keras.layers.Conv2D(2, 3, padding="same", activation="relu")(inp)
    x = keras.layers.MaxPooling2D()(x)
    x = keras.layers.Flatten()(x)
    out = keras.layers.Dense(3, activation="softmax")(x)
    f = keras.Model(inp, out)
    put("keras_json", "functional", f.to_json().encode())
    put("keras_json", "dense_layer", json.dumps(keras.layers.Dense(4, use_bias=False).get_config()).encode())
    put("keras_json", "empty_object", b"{}")
    # weights of the fuzz_hdf5 model (same architecture), and of a model that does not match it
    with tempfile.TemporaryDirectory() as d:
        m.set_weights([np.full(w.shape, 0.25, w.dtype) for w in m.get_weights()])
        p = os.path.join(d, "w.h5")
        m.save_weights(p)
        with open(p, "rb") as fh:
            put("hdf5", "matching_weights", fh.read())
        small = keras.Sequential([keras.layers.Dense(1, input_shape=(2,))])
        small.save_weights(p)
        with open(p, "rb") as fh:
            put("hdf5", "other_model", fh.read())


def make_keras_zip():
    """Keras 3 archives: a compiled, trained Sequential (optimizer state included), a Functional model, and an
    uncompiled one."""
    import numpy as np
    import keras

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "m.keras")
        m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="relu"), keras.layers.Dropout(0.5),
                              keras.layers.BatchNormalization(), keras.layers.Dense(2)])
        m.compile(optimizer="adam", loss="mse")
        m.fit(np.ones((4, 4), "float32"), np.zeros((4, 2), "float32"), verbose=0)
        m.save(p)
        with open(p, "rb") as fh:
            put("keras_zip", "sequential_adam", fh.read())
        a, b = keras.Input((2,), name="a"), keras.Input((2,), name="b")
        f = keras.Model([a, b], keras.layers.Dense(1)(keras.layers.Concatenate()([a, b])))
        f.save(p)
        with open(p, "rb") as fh:
            put("keras_zip", "functional", fh.read())
        keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)]).save(p)
        with open(p, "rb") as fh:
            put("keras_zip", "small", fh.read())


def make_text():
    # first byte picks DecodeCSV's attributes (columns, delimiter, quoting, na_value, select_cols)
    put("text", "csv", b"\x02" + b"1.5,2,abc,4,5\n-1,,\"q,uoted\",7,8.25\n,,,,\n")
    put("text", "csv_semicolon", b"\x0b" + b"1;2;x;3;4\r\n5;6;y;7;8\r\n")
    put("text", "na_values", b"\x24" + b"NA,NA,NA,1,NA\n")
    put("text", "select_cols", b"\x44" + b"a,b,c,d,e,f,g\n1,2,3,4,5,6,7\n")
    put("text", "no_trailing_newline", b"\x00" + b"only one line")
    put("text", "empty_lines", b"\x01" + b"\n\n\r\n")


def make_csv():
    # first byte: columns (1 + k % 5), header (4), ';' (8), no quoting (16), na_value "NA" (32), select_cols (64),
    # GZIP (128); the same bytes are read as fixed-length records (1 + k % 7 bytes, header k % 3, footer k >> 3 % 3)
    put("csv", "plain", b"\x02" + b"1.5,2,abc\n-1,,\"q,uo\"\"ted\"\r\n,,\n")
    put("csv", "multiline_quote", b"\x02" + b"1,2,\"line\nbreak\"\n3,4,\"open")
    put("csv", "header_semicolon", b"\x0e" + b"a;b;c\n1;2;x\n5;6\n")
    put("csv", "required_na", b"\x24" + b"NA,NA,NA,,NA\n1,2,3,4,5\n")
    put("csv", "select_cols", b"\x44" + b"a,b,c,d,e,f,g\n1,2,3,4,5,6,7\n")
    put("csv", "gzip", b"\x82" + gzip.compress(b"1,2,x\n3,4,y\n", mtime=0))
    put("csv", "records", b"\x09" + bytes(range(40)))


def make_checkpoint():
    # fuzz_checkpoint's input: 2-byte little-endian index length, the .index table, then the data shard
    import numpy as np
    import tensorflow as tf

    def bundle(name, **objs):
        with tempfile.TemporaryDirectory() as d:
            prefix = tf.train.Checkpoint(**objs).write(os.path.join(d, "ckpt"))
            with open(prefix + ".index", "rb") as fh:
                index = fh.read()
            with open(prefix + ".data-00000-of-00001", "rb") as fh:
                data = fh.read()
        put("checkpoint", name, struct.pack("<H", len(index)) + index + data)

    bundle("variables", a=tf.Variable(np.arange(6, dtype=np.float32).reshape(2, 3)), b=tf.Variable(np.int64(7)),
           c=tf.Variable([True, False]), h=tf.Variable(np.array([1.5, -2], np.float16)))
    bundle("strings", s=tf.Variable(["", "abc", "de"]))
    from tensorflow.python.distribute import sharded_variable  # a partitioned variable: slices under binary keys
    bundle("partitioned", e=sharded_variable.ShardedVariable(
        [tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2)), tf.Variable(np.ones((70, 2), np.float32))]))


def make_saved_model():
    import numpy as np
    import tensorflow as tf

    def saved(name, module, signatures):
        with tempfile.TemporaryDirectory() as d:
            tf.saved_model.save(module, d, signatures=signatures)
            with open(os.path.join(d, "saved_model.pb"), "rb") as fh:
                put("saved_model", name, fh.read())

    class Dense(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            return {"y": tf.nn.relu(tf.matmul(x, self.w))}

    m = Dense()
    saved("dense.pb", m, m.__call__)
    plain = tf.Module()
    plain.f = tf.function(lambda a, b: {"s": a + b, "d": a - b},
                          input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.int32)])
    saved("novar.pb", plain, plain.f)
# ---- parameter-server messages (src/distribute/ps_wire.h): "TFPS", version, op, code, id, step, value, name,
# tensors (dtype, rank, dims, nbytes, bytes), little-endian ----
def ps_message(op, name, tensors, code=0, msg_id=0, step=0, value=0.0):
    b = b"TFPS" + bytes([1, op, 0, 0]) + struct.pack("<iQqd", code, msg_id, step, value)
    b += struct.pack("<I", len(name)) + name + struct.pack("<I", len(tensors))
    for dtype, dims, data in tensors:
        b += struct.pack("<II", dtype, len(dims)) + b"".join(struct.pack("<q", d) for d in dims)
        b += struct.pack("<Q", len(data)) + data
    return b


def make_ps_message():
    f32 = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
    put("ps_message", "ping", ps_message(1, b"", []))
    put("ps_message", "create_f32", ps_message(2, b"emb/part_0", [(1, [2, 3], f32)]))
    put("ps_message", "sgd", ps_message(6, b"w", [(1, [6], f32)], msg_id=77, value=0.25))
    put("ps_message", "run_args", ps_message(7, b"train_step", [(9, [], struct.pack("<q", 5)), (3, [0, 4], b"")],
                                             msg_id=9, step=9))
    put("ps_message", "error_reply", ps_message(3, b"variable 'w' is not on ps task 1", [], code=5))
    put("ps_message", "i64_f64", ps_message(5, b"c", [(2, [1, 1], struct.pack("<d", 0.5)),
                                                      (19, [2], struct.pack("<2H", 1, 2))]))


def ds_message(op, v=(), s=b"", blob=b"", code=0):
    v = list(v) + [0] * (8 - len(v))
    return (b"TFDS" + bytes([1, op, 0, 0]) + struct.pack("<i8q", code, *v) + struct.pack("<I", len(s)) + s +
            struct.pack("<Q", len(blob)) + blob)


def make_data_service():
    i64 = bytes([9, 0]) + struct.pack("<q", 7)  # one int64 scalar element (data_encode_element)
    elems = struct.pack("<I", 2) + struct.pack("<IQ", 0, len(i64)) + i64 + struct.pack("<IQ", 3, 5) + b"bad x"
    put("data_service", "register", ds_message(1, blob=b"\n\x00"))
    put("data_service", "get_dataset", ds_message(2, [1000]))
    put("data_service", "create_job", ds_message(3, [1000, 2, 16], b"shared"))
    put("data_service", "get_split", ds_message(4, [2000, 77, 1]))
    put("data_service", "heartbeat", ds_message(5, [1000], s=b"127.0.0.1:5051"))
    put("data_service", "workers", ds_message(6))
    put("data_service", "elements_reply", ds_message(7, [2, 0], blob=elems))
    put("data_service", "error_reply", ds_message(4, s=b"job 5 does not exist", code=5))


def make_grpc_predict():
    """TensorFlow Serving PredictRequests as the official client builds them (tf.make_tensor_proto)."""
    import numpy as np
    import tensorflow as tf
    from tensorflow_serving.apis import predict_pb2

    def req(name, inputs, version=None, label=None, signature=None, output_filter=()):
        r = predict_pb2.PredictRequest()
        r.model_spec.name = name
        if version is not None:
            r.model_spec.version.value = version
        if label is not None:
            r.model_spec.version_label = label
        if signature is not None:
            r.model_spec.signature_name = signature
        for k, v in inputs.items():
            r.inputs[k].CopyFrom(tf.make_tensor_proto(v))
        r.output_filter.extend(output_filter)
        return r.SerializeToString()

    x = np.arange(12, dtype=np.float32).reshape(3, 4) / 4
    put("grpc_predict", "f32_batch", req("model", {"x": x}))
    put("grpc_predict", "scalar_version", req("m", {"x": np.float32(2.5)}, version=3, signature="serving_default"))
    put("grpc_predict", "label_filter", req("m", {"a": np.array([1, 2, 3], np.int64), "b": np.array([[True, False]])},
                                            label="stable", output_filter=["y", "z"]))
    put("grpc_predict", "strings", req("m", {"s": np.array([b"ab", b"", b"cde"]), "i": np.array([7], np.int32)}))
    put("grpc_predict", "half_u8_f64", req("m", {"h": np.array([1.5, -2], np.float16), "u": np.array([[1, 255]], np.uint8),
                                                 "d": np.array([0.25, 1e300])}))
    fill = predict_pb2.PredictRequest()
    fill.model_spec.name = "m"
    t = fill.inputs["x"]
    t.dtype = tf.float32.as_datatype_enum
    t.tensor_shape.dim.add().size = 5
    t.float_val.append(1.5)  # repeated to fill the shape
    put("grpc_predict", "fill", fill.SerializeToString())
    # the same key twice on the wire (protobuf keeps the last)
    put("grpc_predict", "duplicate_key", req("m", {"x": x}) + req("", {"x": np.float32(1)}))


def make_vocab():
    # first byte: bits 0-2 key column, 3-5 value column (-2 line, -1 line number, 0, 1, 2, 0, 1, -2), 6-7 dtypes
    put("vocab", "lines", bytes([0 | (1 << 3)]) + b"the\ncat\r\nsat")
    put("vocab", "columns", bytes([2 | (3 << 3) | 2]) + b"a,10\nb,20\n,30\nc\n")
    put("vocab", "tabs_vocab_size", bytes([3 | (2 << 3) | 16]) + b"x\t1.5\ty\n\t\t\n")
    put("vocab", "bad_number", bytes([3 | (2 << 3) | 64]) + b"k\t99999999999999999999\n")


def make_iterator_state():
    # fuzz_iterator_state's input: a flag byte (odd: the target rewrites the CRC), then a state as
    # src/data/iterator_state.c lays it out, for fuzz_iterator_state's pipeline range.shuffle.batch
    sig = b"BatchDatasetV2,ShuffleDatasetV3,RangeDataset -> ."

    def state(n_next, ended, shuffles, log):
        b = b"TFCITER1" + struct.pack("<II", 1, len(sig)) + sig
        b += struct.pack("<qqBQ", n_next, 0, ended, 0x1234) + struct.pack("<I", len(shuffles))
        b += b"".join(struct.pack("<Iqq", *s) for s in shuffles) + struct.pack("<I", len(log))
        b += b"".join(struct.pack("<Iq", *e) for e in log)
        return b + struct.pack("<I", masked(b))

    put("iterator_state", "mid", b"\x00" + state(3, 0, [(1, 1, 1)], [(1, 0)]))
    put("iterator_state", "ended", b"\x00" + state(13, 1, [(1, 1, 1)], [(1, 0)]))
    put("iterator_state", "fix_crc", b"\x01" + state(2, 0, [(1, 5, 3)], [(1, 2), (1, 1)]))


def make_snapshot():
    # fuzz_snapshot's input: a mode byte (0 snapshot.metadata, 1 dataset_spec.pb, 2/3 a chunk file, plain / GZIP),
    # then for chunks a byte choosing the components (81: int64, string) and the chunk file
    import glob

    import tensorflow as tf

    value = (tf.range(5, dtype=tf.int64), tf.constant(["a", "", "bc\0d", "e", "fgh"]))
    for comp, mode in ((None, 2), ("GZIP", 3)):
        with tempfile.TemporaryDirectory() as d:
            tf.data.Dataset.from_tensor_slices(value).save(d, compression=comp)
            (chunk,) = glob.glob(os.path.join(d, "*", "*.shard", "*.snapshot"))
            with open(chunk, "rb") as fh:
                put("snapshot", "chunk_%s" % (comp or "none").lower(), bytes([mode, 81]) + fh.read())
            if comp is None:
                with open(os.path.join(d, "snapshot.metadata"), "rb") as fh:
                    put("snapshot", "metadata", b"\x00" + fh.read())
                with open(os.path.join(d, "dataset_spec.pb"), "rb") as fh:
                    put("snapshot", "spec_tuple", b"\x01" + fh.read())
    with tempfile.TemporaryDirectory() as d:
        tf.data.Dataset.from_tensors({"a": tf.zeros([2, 3]), "b": (tf.constant(1), tf.constant(["x"]))}).save(d)
        with open(os.path.join(d, "dataset_spec.pb"), "rb") as fh:
            put("snapshot", "spec_dict", b"\x01" + fh.read())


def main():
    make_idx()
    examples = make_examples()
    make_tfrecord(examples)
    make_images()
    make_keras()
    make_keras_zip()
    make_text()
    make_csv()
    make_checkpoint()
    make_saved_model()
    make_ps_message()
    make_data_service()
    make_grpc_predict()
    make_vocab()
    make_iterator_state()
    make_snapshot()
    for r in sorted(os.listdir(OUT)):
        n = len(os.listdir(os.path.join(OUT, r)))
        size = sum(os.path.getsize(os.path.join(OUT, r, f)) for f in os.listdir(os.path.join(OUT, r)))
        print("%-12s %2d seeds, %6d bytes" % (r, n, size))


if __name__ == "__main__":
    sys.exit(main())
