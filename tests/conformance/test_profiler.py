"""The profiler: a session's files open in the real tools. The XSpace (<host>.xplane.pb) parses with
TensorFlow's own xplane_pb2 and converts with the profile plugin (xprof) to its trace viewer and overview
data; the Chrome-trace JSON loads in Perfetto's trace processor (skipped when its binary cannot be fetched).
Events are queried back: every op run, with its input shapes, thread and duration; Trace scopes with
step_num; Keras's train steps under the TensorBoard callback's profile_batch."""
import glob
import json
import os
import shutil
import socket

import numpy as np
import pytest

from conftest import tf, tfc

xplane_pb2 = pytest.importorskip("tensorflow.tsl.profiler.protobuf.xplane_pb2")


def run_ops():
    a = tfc.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = tfc.constant(np.ones((3, 4), np.float32))
    with tfc.profiler.Trace("my_step", step_num=7):
        c = tfc.raw_ops.MatMul(a=a, b=b)
        tfc.raw_ops.Relu(features=c)
    return c


def load_xspace(run_dir):
    files = glob.glob(os.path.join(run_dir, "*.xplane.pb"))
    assert [os.path.basename(f) for f in files] == [socket.gethostname() + ".xplane.pb"]
    xs = xplane_pb2.XSpace()
    with open(files[0], "rb") as fh:
        xs.ParseFromString(fh.read())
    return xs, files[0]


def events_of(xs):
    """[(name, thread name, start_ns, dur_ns, {stat: value})] of the host plane."""
    plane = [p for p in xs.planes if p.name == "/host:CPU"][0]
    smd = {k: v.name for k, v in plane.stat_metadata.items()}
    out = []
    for line in plane.lines:
        for e in line.events:
            stats = {smd[s.metadata_id]: getattr(s, s.WhichOneof("value")) for s in e.stats}
            out.append((plane.event_metadata[e.metadata_id].name, line.name,
                        line.timestamp_ns + e.offset_ps // 1000, e.duration_ps // 1000, stats))
    return out


def test_profile_session_xspace_and_json(tmp_path):
    logdir = str(tmp_path / "logs")
    tfc.profiler.start(logdir)
    with pytest.raises(tfc.errors.AlreadyExistsError, match="Another profiler is running"):
        tfc.profiler.start(logdir)
    run_ops()
    run_dir = tfc.profiler.stop()
    with pytest.raises(tfc.errors.UnavailableError, match="No profiler is running"):
        tfc.profiler.stop()
    assert os.path.dirname(run_dir) == os.path.join(logdir, "plugins", "profile")
    xs, path = load_xspace(run_dir)
    ev = events_of(xs)
    names = [e[0] for e in ev]
    assert "MatMul" in names and "Relu" in names and "my_step" in names
    mm = [e for e in ev if e[0] == "MatMul"][0]
    assert mm[4]["shapes"] == "float32[2,3];float32[3,4]"
    step = [e for e in ev if e[0] == "my_step"][0]
    assert step[4]["step_num"] == 7
    assert step[2] <= mm[2] and mm[2] + mm[3] <= step[2] + step[3]  # the op inside the scope
    # Chrome JSON: the same events
    with open(os.path.join(run_dir, socket.gethostname() + ".trace.json")) as fh:
        js = json.load(fh)
    xev = [e for e in js["traceEvents"] if e["ph"] == "X"]
    assert sorted(e["name"] for e in xev) == sorted(names)
    assert [e["args"]["shapes"] for e in xev if e["name"] == "MatMul"] == ["float32[2,3];float32[3,4]"]


def test_profiler_off_records_nothing_and_host_level_1_skips_ops(tmp_path):
    run_ops()  # nothing recorded while off
    tfc.profiler.start(str(tmp_path), host_tracer_level=1)
    run_ops()
    names = [e[0] for e in events_of(load_xspace(tfc.profiler.stop())[0])]
    assert names == ["my_step"]


def test_bad_logdir_is_a_clear_error(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(tfc.errors.FailedPreconditionError, match="not a directory"):
        tfc.profiler.start(str(f / "logs"))
    tfc.profiler.start(str(tmp_path / "ok"))  # nothing was left running
    tfc.profiler.stop(save=False)


def test_xprof_converts_the_xspace(tmp_path):
    raw = pytest.importorskip("xprof.convert.raw_to_tool_data")
    tfc.profiler.start(str(tmp_path))
    run_ops()
    run_dir = tfc.profiler.stop()
    _, path = load_xspace(run_dir)
    data, ctype = raw.xspace_to_tool_data([path], "trace_viewer", {})
    trace = json.loads(data)
    names = {e.get("name") for e in trace["traceEvents"]}
    # the trace viewer names a step marker "<name> <step_num>"
    assert {"MatMul", "Relu", "my_step 7"} <= names, sorted(n for n in names if n)[:40]
    ov, _ = raw.xspace_to_tool_data([path], "overview_page", {})
    assert ov


def test_perfetto_loads_the_json(tmp_path):
    tp_mod = pytest.importorskip("perfetto.trace_processor")
    tfc.profiler.start(str(tmp_path))
    run_ops()
    run_dir = tfc.profiler.stop()
    path = os.path.join(run_dir, socket.gethostname() + ".trace.json")
    # The package fetches its trace_processor_shell binary from the network on first use; use one that is
    # already here (PERFETTO_TRACE_PROCESSOR, on PATH, or the package's cache) and skip otherwise.
    shell = os.environ.get("PERFETTO_TRACE_PROCESSOR") or shutil.which("trace_processor_shell")
    if not shell:
        cached = sorted(glob.glob(os.path.expanduser("~/.local/share/perfetto/prebuilts/trace_processor_shell*")))
        shell = next((c for c in cached if not c.endswith(".tmp") and os.access(c, os.X_OK)), None)
    if not shell:
        pytest.skip("no Perfetto trace_processor_shell here (set PERFETTO_TRACE_PROCESSOR)")
    tp = tp_mod.TraceProcessor(trace=path, config=tp_mod.TraceProcessorConfig(bin_path=shell))
    try:
        rows = list(tp.query("select s.name as name, s.dur as dur, t.name as tname from slice s "
                             "join thread_track tt on s.track_id = tt.id join thread t using(utid)"))
    finally:
        tp.close()
    names = {r.name for r in rows}
    assert {"MatMul", "Relu", "my_step"} <= names
    assert all(r.dur >= 0 for r in rows)


def test_tensorboard_profile_batch(tmp_path):
    tf_keras = pytest.importorskip("tf_keras")
    inp = tf_keras.Input((4,))
    tm = tf_keras.Model(inp, tf_keras.layers.Dense(2)(inp))
    mm = tfc.keras.model_from_json(tm.to_json())
    mm.compile(optimizer="sgd", loss="mse")
    logdir = str(tmp_path / "logs")
    mm.fit(np.ones((32, 4), np.float32), np.ones((32, 2), np.float32), batch_size=4, epochs=1,
           callbacks=[tfc.keras.TensorBoard(logdir, profile_batch=(2, 3))])
    runs = glob.glob(os.path.join(logdir, "plugins", "profile", "*"))
    assert len(runs) == 1
    ev = events_of(load_xspace(runs[0])[0])
    steps = sorted(e[4]["step_num"] for e in ev if e[0] == "train")
    assert steps == [1, 2]  # global batches 2 and 3 are steps 1 and 2 of epoch 0
    assert all(e[4].get("_r") == 1 for e in ev if e[0] == "train")
    assert any(e[0] == "MatMul" for e in ev)
    assert len([e for e in ev if e[0] == "Iterator::GetNext"]) == 2
