"""`make bench`: tfc side by side with OpenBLAS, TensorFlow, PyTorch and ONNX Runtime, in one run.

For each thread count (1 and 2) the driver starts one worker per side: tfc_bench (twice: once for tfc, once for
OpenBLAS called directly) and one Python process per peer framework (peers.py). For each workload it prepares every
side (set-up, a warm-up iteration, a timed iteration that sizes the samples), then takes the samples
interleaved, tfc, peer 1, peer 2, tfc, peer 1, ... so that load from other processes on this shared machine
falls on every side alike. It prints medians and ratios (peer time / tfc time: > 1 means tfc is faster) and
writes bench/results/latest.json.

    python bench.py --worker build/bench/tfc_bench [--quick] [--threads 1,2] [--only REGEX]
"""

import argparse
import datetime
import json
import math
import os
import platform
import re
import select
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench_common as bc  # noqa: E402

PEER_FRAMEWORKS = ("tensorflow", "torch", "onnxruntime")
# Peers that are tfc itself in another configuration, served by tfc_bench (no Python framework to start).
C_PEERS = ("openblas", "tfc_f32", "tfc_eager", "tfc_seq", "tfc_local")  # sides served by tfc_bench itself
PEER_MODULES = {"tensorflow": "tensorflow", "torch": "torch", "onnxruntime": "onnxruntime"}

CONV_SHAPES = ["128x28x28x1_3x3x32", "128x13x13x32_3x3x64", "32x56x56x64_3x3x64_same"]
GEMMS = ["256x256x256", "512x512x512", "1024x1024x1024", "128x1600x10", "128x10x1600", "1600x128x10"]

# Targets of the benchmark issue: (workload pattern, peer) -> minimum ratio.
TARGETS = [
    (r"gemm_", "openblas", 0.95),
    (r"gemm_bf16_", "tfc_f32", 1.7),
    (r"conv2d_", "tensorflow", 1.2), (r"conv2d_", "torch", 1.2),
    (r"train_cnn$", "tensorflow", 2.0), (r"train_cnn$", "torch", 1.3),
    (r"train_cnn_mixed_bfloat16$", "tfc_f32", 1.5), (r"train_cnn_mixed_bfloat16$", "tensorflow", 2.5),
    (r"train_mlp$", "tensorflow", 3.0),
    (r"infer_cnn_b256$", "onnxruntime", 1.0), (r"infer_cnn_b1$", "onnxruntime", 1.0),
    (r"eager_dispatch$", "tensorflow", 10.0),
    (r"graph_dispatch$", "tensorflow", 20.0), (r"graph_dispatch$", "tfc_eager", 2.0),
    (r"peak_mem_train_cnn$", "tensorflow", 2.0),
    (r"data_pipeline$", "tensorflow", 1.5),
    (r"peak_mem_data_pipeline$", "tensorflow", 1.0),  # the pipeline's speed-up at no more memory
    (r"data_service$", "tfc_local", 1.6),  # 2 service workers feed one consumer, each with the local side's threads
    (r"saved_model_load$", "tensorflow", 10.0),
]


def target_for(workload, peer):
    for pat, p, t in TARGETS:
        if p == peer and re.match(pat, workload):
            return t
    return None


# Floating-point work of one unit of a workload, for its fraction of peak_fma (the FMA ceiling measured in the
# same run at the same thread count). GEMM: 2mkn per product. Training: per image, 2 FLOP per multiply-add of
# the forward pass, the input gradient (every layer but the first) and the weight gradient, at the layer shapes
# (direct convolution's count; Winograd and fusion do less arithmetic, so they can pass 100%).
def _train_flops(layers):
    """layers: multiply-adds of each layer's forward pass, first layer first."""
    return 2.0 * sum(m * (2 if i == 0 else 3) for i, m in enumerate(layers))


CNN_MACS = [26 * 26 * 32 * 9, 11 * 11 * 64 * 9 * 32, 1600 * 10]  # Conv2D(32), Conv2D(64), Dense(10)
MLP_MACS = [784 * 128, 128 * 10]
FLOPS_PER_UNIT = {"train_cnn": _train_flops(CNN_MACS), "train_mlp": _train_flops(MLP_MACS)}


def flops_per_unit(workload):
    m = re.fullmatch(r"gemm_(\d+)x(\d+)x(\d+)", workload)
    if m:
        a, b, c = (int(v) for v in m.groups())
        return 2.0 * a * b * c
    return FLOPS_PER_UNIT.get(workload)


def workloads():
    """(name, kind, peers) in run order. kind: time (ms per op), rate (units/s) or mem."""
    out = [("peak_fma", "rate", [])]  # first: the rows after it are rated against it
    out += [("gemm_" + g, "time", ["openblas"]) for g in GEMMS]
    out.append(("gemm_bf16_1024", "time", ["tfc_f32"]))
    for shape in CONV_SHAPES:
        for p in ("fwd", "bwd_input", "bwd_filter"):
            out.append((f"conv2d_{p}_{shape}", "time", ["tensorflow", "torch"]))
    out += [
        ("train_mlp", "rate", ["tensorflow", "torch"]),
        ("train_cnn", "rate", ["tensorflow", "torch"]),
        ("train_cnn_mixed_bfloat16", "rate", ["tfc_f32", "tensorflow"]),
        ("train_cnn_mixed_float16", "rate", ["tfc_f32", "tensorflow"]),
        ("infer_cnn_b1", "time", ["tensorflow", "torch", "onnxruntime"]),
        ("infer_cnn_b256", "rate", ["tensorflow", "torch", "onnxruntime"]),
        ("eager_dispatch", "rate", ["tensorflow", "torch"]),
        ("graph_dispatch", "time", ["tensorflow", "tfc_eager"]),
        ("graph_parallel", "time", ["tfc_seq"]),
        ("data_pipeline", "rate", ["tensorflow"]),
        ("data_service", "rate", ["tfc_local"]),
        ("saved_model_load", "time", ["tensorflow"]),
    ]
    return out


UNITS = {"peak_fma": "GFLOP/s", "train_mlp": "images/s", "train_cnn": "images/s", "train_cnn_mixed_bfloat16": "images/s",
         "train_cnn_mixed_float16": "images/s", "infer_cnn_b256": "images/s",
         "eager_dispatch": "ops/s", "data_pipeline": "elements/s", "data_service": "elements/s", "peak_mem_train_cnn": "MB",
         "peak_mem_data_pipeline": "MB"}


class WorkerError(Exception):
    pass


class Worker:
    """A serve-mode process speaking the line protocol; stderr goes to a log file."""

    def __init__(self, name, argv, env, log_path):
        self.name, self.log_path = name, log_path
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=env, cwd=HERE)
        self.buf = b""

    def call(self, line, timeout):
        if self.proc.poll() is not None:
            raise WorkerError(f"{self.name} exited with {self.proc.returncode} (log: {self.log_path})")
        try:
            self.proc.stdin.write((line + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise WorkerError(f"{self.name} exited (log: {self.log_path})")
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise WorkerError(f"{self.name}: no answer to '{line}' within {timeout:.0f} s")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    rc = self.proc.wait()
                    raise WorkerError(f"{self.name} exited with {rc} during '{line}' (log: {self.log_path})")
                self.buf += chunk
        reply, self.buf = self.buf.split(b"\n", 1)
        return reply.decode(errors="replace").strip()

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b"quit\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=20)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.kill()
        self.log.close()


class Bench:
    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.repeats = args.repeats or (3 if self.quick else 7)
        self.train_repeats = args.repeats or (3 if self.quick else 5)
        self.target_s = 0.1 if self.quick else 0.3          # length of one micro-benchmark sample
        # Batches of 128 per epoch of a training sample (one fit call of two epochs, the second timed: the fixed
        # cost of a fit call, 0.1-0.7 s in tf.keras, is paid once per training run, not per epoch). The full run's
        # MLP epochs are whole Fashion-MNIST epochs (469 batches).
        self.train_steps = 16 if self.quick else 60
        self.mlp_steps = 100 if self.quick else 469
        self.peak_steps = 20 if self.quick else 100
        self.timeout = 300 if self.quick else 900
        self.work = os.path.abspath(args.work_dir)
        os.makedirs(os.path.join(self.work, "logs"), exist_ok=True)
        self.weights = os.path.join(self.work, "cnn_weights.bin")
        self.rows = []
        self.peak = {}  # threads -> peak_fma median, GFLOP/s
        self.workers = {}
        self.missing = {}
        for fw in PEER_FRAMEWORKS:
            import importlib.util
            if importlib.util.find_spec(PEER_MODULES[fw]) is None:
                self.missing[fw] = f"{fw} is not installed (make bench installs it)"

    # ---- workers ----
    def env(self, threads, framework=None):
        env = dict(os.environ)
        for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            env[k] = str(threads)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        if framework == "torch" and threads > 1:
            # OpenMP's spinning barrier collapses when the cores are shared with other processes (this
            # machine's normal state): passive waiting keeps PyTorch's 2-thread numbers meaningful.
            env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        return env

    def common_flags(self, threads):
        flags = ["--threads", str(threads), "--train-steps", str(self.train_steps), "--mlp-steps",
                 str(self.mlp_steps), "--work-dir", self.work,
                 "--weights", self.weights]
        if self.args.data_dir:
            flags += ["--data-dir", self.args.data_dir]
        return flags

    def worker(self, side, threads):
        """side: 'tfc', 'openblas' (a second tfc_bench process: a worker holds one prepared workload at a
        time, so tfc's and OpenBLAS's GEMM cases must live in different processes) or a peer framework;
        started on first use."""
        key = (side, threads)
        w = self.workers.get(key)
        if w is not None and w.alive():
            return w
        log = os.path.join(self.work, "logs", f"{side}_t{threads}.log")
        if side == "tfc" or side in C_PEERS:
            argv = [self.args.worker, "serve"] + self.common_flags(threads)
        else:
            argv = [sys.executable, os.path.join(HERE, "peers.py"), "serve", side] + self.common_flags(threads)
        w = Worker(f"{side} (threads={threads})", argv, self.env(threads, side), log)
        self.workers[key] = w
        return w

    def start_peers(self, threads, needed):
        for fw in needed:
            if fw not in self.missing:
                self.worker(fw, threads)  # imports run concurrently while earlier groups finish

    def close_workers(self):
        for w in self.workers.values():
            w.close()
        self.workers = {}

    # ---- one workload at one thread count ----
    def run_group(self, workload, kind, peers, threads):
        # saved_model_load: TensorFlow writes the SavedModel both sides load, so it is prepared first
        impls = peers + ["tfc"] if workload == "saved_model_load" else ["tfc"] + peers
        prepared, notes, checks = {}, {}, {}
        # A training or pipeline sample is one call (fit, epoch): the warm-up is enough, no sizing run.
        single = workload.startswith("train_") or workload in ("data_pipeline", "data_service")

        for impl in impls:
            if impl in self.missing:
                notes[impl] = self.missing[impl]
                continue
            side = impl
            try:
                reply = self.worker(side, threads).call(f"prep {impl} {workload}{' 0' if single else ''}",
                                                        self.timeout)
            except WorkerError as e:
                notes[impl] = f"error: {e}"
                continue
            word, _, rest = reply.partition(" ")
            if impl == "tfc" and word != "ok":
                notes[impl] = ("not yet available: " if word == "na" else "error: ") + rest
                break  # nothing to compare with: the peers are not run
            if word == "ok":
                t1, units, check = (float(v) for v in rest.split()[:3])
                iters = 1 if single else max(1, min(1_000_000, round(self.target_s / max(t1, 1e-9))))
                prepared[impl] = (side, iters, units)
                checks[impl] = check
            elif word == "na":
                notes[impl] = "not yet available: " + rest
            else:
                notes[impl] = "error: " + rest
        samples = {impl: [] for impl in prepared}
        for _ in range(self.train_repeats if workload.startswith("train_") else self.repeats):
            for impl, (side, iters, units) in list(prepared.items()):
                try:
                    reply = self.worker(side, threads).call(f"run {iters}", self.timeout)
                except WorkerError as e:
                    notes[impl] = f"error: {e}"
                    del prepared[impl]
                    continue
                word, _, rest = reply.partition(" ")
                if word != "ok":
                    notes[impl] = "error: " + rest
                    del prepared[impl]
                    continue
                samples[impl].append(float(rest) / (iters * units))  # seconds per unit
        for impl, (side, _, _) in prepared.items():
            try:
                self.worker(side, threads).call("free", self.timeout)
            except WorkerError:
                pass
        if not peers:  # a row of tfc's side alone (peak_fma)
            self.add_row(workload, kind, threads, "-", samples.get("tfc", []), [], notes.get("tfc"))
        for peer in peers:
            note = notes.get("tfc") if "tfc" not in samples or not samples["tfc"] else None
            note = note or notes.get(peer)
            c_tfc, c_peer = checks.get("tfc", math.nan), checks.get(peer, math.nan)
            if not note and math.isfinite(c_tfc) and math.isfinite(c_peer) and \
                    abs(c_tfc - c_peer) > 1e-4 * max(abs(c_tfc), abs(c_peer)):
                note = f"outputs differ: checksum tfc {c_tfc:.6g} vs {peer} {c_peer:.6g}"
            self.add_row(workload, kind, threads, peer, samples.get("tfc", []), samples.get(peer, []), note)

    def add_row(self, workload, kind, threads, peer, tfc_s, peer_s, note):
        """tfc_s, peer_s: seconds per unit (kind time/rate) or MB (kind mem)."""
        unit = UNITS.get(workload, "ms")
        if kind == "time":
            conv = lambda s: [1e3 * v for v in s]
        elif kind == "rate":
            conv = lambda s: [1.0 / v for v in s if v > 0]
        else:
            conv = lambda s: list(s)
        a, b = conv(tfc_s), conv(peer_s)
        row = {"workload": workload, "threads": threads, "peer": peer,
               "tfc_median": statistics.median(a) if a else None,
               "peer_median": statistics.median(b) if b else None,
               "unit": unit, "ratio": None,
               "tfc_min": min(a) if a else None, "tfc_max": max(a) if a else None,
               "peer_min": min(b) if b else None, "peer_max": max(b) if b else None,
               "repeats": min(len(a), len(b)), "target": target_for(workload, peer)}
        if a and b and not note:
            ta, tb = row["tfc_median"], row["peer_median"]
            # > 1 means tfc is better: peer time / tfc time, tfc rate / peer rate, peer memory / tfc memory
            row["ratio"] = tb / ta if kind in ("time", "mem") else ta / tb
        if note:
            row["note"] = note
        if workload == "peak_fma" and a:
            self.peak[threads] = row["tfc_median"]
        flops = flops_per_unit(workload)
        if flops and a and self.peak.get(threads):
            # the fraction of the FMA ceiling tfc's median reaches
            per_s = 1e3 / row["tfc_median"] if kind == "time" else row["tfc_median"]
            row["gflops"] = per_s * flops * 1e-9
            row["peak_fraction"] = row["gflops"] / self.peak[threads]
        self.rows.append(row)
        self.print_row(row)

    # ---- peak memory: each run in a fresh process, tfc and TensorFlow alternating ----
    def peak_mem(self, threads, workload="peak_mem_train_cnn"):
        """peak_mem_train_cnn: the demo's training run; peak_mem_data_pipeline: a few epochs of data_pipeline over
        the TFRecord file in the work folder (tfc_bench writes it first when it is missing)."""
        inner = workload[len("peak_mem_"):]
        flags = ["--threads", str(threads), "--train-steps", str(self.peak_steps), "--workload", inner,
                 "--work-dir", self.work]
        if self.args.data_dir:
            flags += ["--data-dir", self.args.data_dir]
        cmds = {"tfc": [self.args.worker, "peak-mem"] + flags,
                "tensorflow": [sys.executable, os.path.join(HERE, "peers.py"), "peak-mem", "tensorflow"] + flags}
        mb, notes = {"tfc": [], "tensorflow": []}, {}
        if "tensorflow" in self.missing:
            notes["tensorflow"] = self.missing["tensorflow"]
        reps = 1 if self.quick else 3
        for _ in range(reps):
            for side, argv in cmds.items():  # tfc first: it writes the pipeline's file when missing
                if side in notes:
                    continue
                log = os.path.join(self.work, "logs", f"{workload}_{side}_t{threads}.log")
                with open(log, "ab") as lf:
                    try:
                        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=lf, env=self.env(threads),
                                           cwd=HERE, timeout=self.timeout)
                    except subprocess.TimeoutExpired:
                        notes[side] = f"error: timed out (log: {log})"
                        continue
                out = p.stdout.decode(errors="replace").strip().splitlines()
                last = out[-1] if out else ""
                word, _, rest = last.partition(" ")
                if word == "ok" and p.returncode == 0:
                    mb[side].append(int(rest) / 1024.0)
                elif word == "na":
                    notes[side] = "not yet available: " + rest
                else:
                    notes[side] = f"error: exit {p.returncode} {rest} (log: {log})"
        self.add_row(workload, "mem", threads, "tensorflow", mb["tfc"], mb["tensorflow"],
                     notes.get("tfc") or notes.get("tensorflow"))

    # ---- output ----
    HEADER = ("workload", "thr", "peer", "tfc", "peer", "unit", "ratio", "target", "tfc min-max", "peer min-max")
    WIDTHS = (40, 3, 11, 9, 9, 10, 6, 7, 19, 19)

    def print_header(self):
        print(" ".join(h.ljust(w) if i < 3 or i == 5 else h.rjust(w)
                       for i, (h, w) in enumerate(zip(self.HEADER, self.WIDTHS))))
        print("-" * (sum(self.WIDTHS) + len(self.WIDTHS) - 1))

    def print_row(self, r):
        f = fmt
        if r["ratio"] is None:
            mark = ""
        elif r["target"] is None:
            mark = "-"
        else:
            mark = f"{r['target']:g} " + ("ok" if r["ratio"] >= r["target"] else "MISS")
        cells = (r["workload"], str(r["threads"]), r["peer"], f(r["tfc_median"]), f(r["peer_median"]), r["unit"],
                 f"{r['ratio']:.2f}" if r["ratio"] is not None else "n/a", mark,
                 f"{f(r['tfc_min'])}-{f(r['tfc_max'])}" if r["tfc_min"] is not None else "",
                 f"{f(r['peer_min'])}-{f(r['peer_max'])}" if r["peer_min"] is not None else "")
        line = " ".join(c.ljust(w) if i < 3 or i == 5 else c.rjust(w)
                        for i, (c, w) in enumerate(zip(cells, self.WIDTHS)))
        print(line.rstrip(), flush=True)
        if r.get("peak_fraction") is not None:
            print(f"    ^ {100 * r['peak_fraction']:.0f}% of peak_fma ({r['gflops']:.1f} GFLOP/s)", flush=True)
        if r.get("note"):
            print(f"    ^ {r['note']}", flush=True)

    def write_json(self):
        path = self.args.results or os.path.join(HERE, "results", "latest.json")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump(self.rows, f, indent=1)
            f.write("\n")
        os.replace(path + ".tmp", path)
        return path

    def run(self):
        t0 = time.monotonic()
        load0 = os.getloadavg()
        bc.write_cnn_weights(self.weights)
        print(f"tfc bench{' (QUICK)' if self.quick else ''}: {datetime.datetime.now():%Y-%m-%d %H:%M}, "
              f"{cpu_name()}, {os.cpu_count()} cores, load {load0[0]:.1f}; "
              f"{self.repeats} interleaved samples per side; ratio > 1 means tfc is faster (or smaller)")
        for fw, why in self.missing.items():
            print(f"note: {why}")
        if load0[0] > (os.cpu_count() or 1):
            print(f"note: the machine is busy (load {load0[0]:.1f} on {os.cpu_count()} cores): expect wide min-max "
                  f"ranges, above all with 2 threads")
        only = re.compile(self.args.only) if self.args.only else None
        todo = [w for w in workloads() if not only or only.search(w[0])]
        self.print_header()
        for threads in self.args.threads:
            peers_needed = sorted({p for _, _, ps in todo for p in ps if p not in C_PEERS})
            started = False
            for name, kind, peers in todo:
                if not started and any(p not in C_PEERS for p in peers):
                    self.start_peers(threads, peers_needed)
                    started = True
                self.run_group(name, kind, peers, threads)
            self.close_workers()
        if not only or only.search("peak_mem_train_cnn"):
            # Peak RSS barely depends on the thread count: QUICK measures it at the largest one only.
            for threads in (self.args.threads[-1:] if self.quick else self.args.threads):
                self.peak_mem(threads)
        if not only or only.search("peak_mem_data_pipeline"):
            # The pipeline's buffers and threads grow with the thread count: every thread count, also in QUICK.
            for threads in self.args.threads:
                self.peak_mem(threads, "peak_mem_data_pipeline")
        path = self.write_json()
        load1 = os.getloadavg()
        print(f"wrote {os.path.relpath(path)}; {time.monotonic() - t0:.0f} s; load {load1[0]:.1f}")


def fmt(v):
    if v is None:
        return "-"
    a = abs(v)
    if a >= 1000:
        return f"{v:.0f}"
    if a >= 100:
        return f"{v:.1f}"
    if a >= 10:
        return f"{v:.2f}"
    return f"{v:.3g}"


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worker", required=True, help="path of tfc_bench")
    ap.add_argument("--quick", action="store_true", help="reduced run (about 3 minutes)")
    ap.add_argument("--threads", default="1,2", type=lambda s: [int(v) for v in s.split(",")])
    ap.add_argument("--only", help="regular expression selecting workloads")
    ap.add_argument("--repeats", type=int, default=0, help="samples per side (default 3 quick, 7 full)")
    ap.add_argument("--data-dir", help="Fashion-MNIST folder (default: TFC_DATASETS_DIR or Debian's)")
    ap.add_argument("--work-dir", default=os.path.join(HERE, "..", "build", "bench", "run"))
    ap.add_argument("--results", help="JSON output (default bench/results/latest.json)")
    args = ap.parse_args()
    args.worker = os.path.abspath(args.worker)
    b = Bench(args)
    try:
        b.run()
    finally:
        b.close_workers()


if __name__ == "__main__":
    main()
