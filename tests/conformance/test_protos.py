"""tfc's .proto wire specs (src/proto) against the messages TensorFlow itself was built with: every
message and enum tfc declares must match TensorFlow's by field name, number, type and label, so that what
tfc writes TensorFlow reads and the reverse."""
import os
import shutil
import subprocess
import tempfile

import pytest
from google.protobuf import descriptor_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROTO_DIR = os.path.join(ROOT, "src", "proto")

# Where TensorFlow (or TensorBoard / TF Serving) defines each of tfc's messages, as module paths.
TF_MODULES = [
    "tensorflow.core.framework.types_pb2",
    "tensorflow.core.framework.tensor_shape_pb2",
    "tensorflow.core.framework.resource_handle_pb2",
    "tensorflow.core.framework.tensor_pb2",
    "tensorflow.core.framework.versions_pb2",
    "tensorflow.core.framework.tensor_slice_pb2",
    "tensorflow.core.framework.attr_value_pb2",
    "tensorflow.core.framework.node_def_pb2",
    "tensorflow.core.framework.function_pb2",
    "tensorflow.core.framework.graph_pb2",
    "tensorflow.core.framework.op_def_pb2",
    "tensorflow.core.framework.full_type_pb2",
    "tensorflow.core.framework.summary_pb2",
    "tensorflow.core.util.event_pb2",
    "tensorflow.core.protobuf.meta_graph_pb2",
    "tensorflow.core.protobuf.saved_model_pb2",
    "tensorflow.core.protobuf.saved_object_graph_pb2",
    "tensorflow.core.protobuf.trackable_object_graph_pb2",
    "tensorflow.core.protobuf.struct_pb2",
    "tensorflow.core.protobuf.tensor_bundle_pb2",
    "tensorflow.tsl.profiler.protobuf.xplane_pb2",
    "tensorflow.core.example.feature_pb2",
    "tensorflow.core.example.example_pb2",
    "tensorflow.core.protobuf.error_codes_pb2",
    "google.protobuf.wrappers_pb2",
    "tensorflow_serving.apis.model_pb2",
    "tensorflow_serving.apis.predict_pb2",
    "tensorflow_serving.apis.get_model_metadata_pb2",
    "tensorflow_serving.apis.status_pb2",
    "tensorflow_serving.apis.get_model_status_pb2",
    "tensorflow_serving.apis.input_pb2",
    "tensorflow_serving.apis.classification_pb2",
    "tensorflow_serving.apis.regression_pb2",
]


def _tfc_descriptors():
    protoc = shutil.which("protoc-c") or shutil.which("protoc")
    if protoc is None:
        pytest.fail("protoc-c is not installed (Debian: protobuf-c-compiler)")
    files = sorted(f for f in os.listdir(PROTO_DIR) if f.endswith(".proto"))
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "set.pb")
        subprocess.run([protoc, "--proto_path=" + os.path.join(ROOT, "src"), "--descriptor_set_out=" + out]
                       + ["proto/" + f for f in files], check=True)
        fds = descriptor_pb2.FileDescriptorSet()
        with open(out, "rb") as fh:
            fds.ParseFromString(fh.read())
    msgs, enums = {}, {}

    def walk(prefix, mlist, elist):
        for e in elist:
            enums[prefix + e.name] = {v.name: v.number for v in e.value}
        for m in mlist:
            name = prefix + m.name
            msgs[name] = {f.name: (f.number, f.type, f.label, f.type_name.lstrip(".")) for f in m.field}
            walk(name + ".", m.nested_type, m.enum_type)

    for fd in fds.file:
        walk(fd.package + "." if fd.package else "", fd.message_type, fd.enum_type)
    return msgs, enums


def _tf_pool():
    import importlib

    from google.protobuf import descriptor_pool
    for m in TF_MODULES:
        try:
            importlib.import_module(m)
        except ImportError:
            pass
    return descriptor_pool.Default()




def test_every_tfc_message_matches_tensorflow():
    msgs, enums = _tfc_descriptors()
    assert msgs, "no messages found under src/proto"
    pool = _tf_pool()
    checked = 0
    for name, fields in msgs.items():
        if name.endswith("Entry") and set(fields) == {"key", "value"}:
            continue  # map entries are synthesised the same way on both sides
        try:
            tf_msg = pool.FindMessageTypeByName(name)
        except KeyError:
            pytest.fail(f"{name}: TensorFlow has no such message (check the package name)")
        tf_fields = {f.name: f for f in tf_msg.fields}
        for fname, (number, ftype, label, type_name) in fields.items():
            assert fname in tf_fields, f"{name}.{fname}: not a field of TensorFlow's {name}"
            tf = tf_fields[fname]
            assert tf.number == number, f"{name}.{fname}: number {number}, TensorFlow's is {tf.number}"
            assert tf.type == ftype, f"{name}.{fname}: type {ftype}, TensorFlow's is {tf.type}"
            tf_repeated = tf.is_repeated if hasattr(tf, "is_repeated") else tf.label == 3
            assert tf_repeated == (label == 3), f"{name}.{fname}: repeated is {label == 3} in tfc, {tf_repeated} in TensorFlow"
            tf_type = (tf.message_type or tf.enum_type)
            if type_name:
                assert tf_type is not None and tf_type.full_name == type_name, \
                    f"{name}.{fname}: type {type_name}, TensorFlow's is {tf_type.full_name if tf_type else None}"
            checked += 1
    for name, values in enums.items():
        tf_enum = pool.FindEnumTypeByName(name)
        tf_values = {v.name: v.number for v in tf_enum.values}
        for vname, number in values.items():
            assert tf_values.get(vname) == number, f"{name}.{vname} = {number}, TensorFlow's is {tf_values.get(vname)}"
            checked += 1
    assert checked >= 20
