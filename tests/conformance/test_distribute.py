"""TF_CONFIG resolution: tfc_cluster_resolve against TensorFlow's TFConfigClusterResolver and multi_worker_util
(task type and id, chief, worker id, worker count, addresses, rpc_layer), on random clusters and on the invalid
configurations TensorFlow rejects."""
import ctypes
import json
import os

import pytest
import tensorflow as tf
from tensorflow.python.distribute import multi_worker_util

from tfc._lib import Status, lib

MAX_TASKS = 64


class _Job(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char * 16), ("n_tasks", ctypes.c_int), ("address", ctypes.c_char_p * MAX_TASKS)]


class _Cluster(ctypes.Structure):
    _fields_ = [("n_jobs", ctypes.c_int), ("jobs", _Job * 4), ("task_type", ctypes.c_char * 16), ("task_id", ctypes.c_int),
                ("rpc_layer", ctypes.c_char * 16), ("is_chief", ctypes.c_bool), ("num_workers", ctypes.c_int),
                ("worker_id", ctypes.c_int)]


lib.tfc_cluster_resolve.argtypes = [ctypes.c_char_p, ctypes.POINTER(_Cluster), ctypes.POINTER(Status)]
lib.tfc_cluster_resolve.restype = ctypes.c_bool
lib.tfc_cluster_clear.argtypes = [ctypes.POINTER(_Cluster)]
lib.tfc_cluster_address.argtypes = [ctypes.POINTER(_Cluster), ctypes.c_char_p, ctypes.c_int]
lib.tfc_cluster_address.restype = ctypes.c_char_p


def resolve(cfg):
    c, st = _Cluster(), Status()
    ok = lib.tfc_cluster_resolve(json.dumps(cfg).encode(), ctypes.byref(c), ctypes.byref(st))
    return (c if ok else None), st


def random_config(rng):
    cluster = {}
    has_chief = bool(rng.integers(2))
    if has_chief:
        cluster["chief"] = ["chief0:%d" % rng.integers(1000, 9999)]
    n_workers = int(rng.integers(0 if has_chief else 1, 5))
    if n_workers:
        cluster["worker"] = ["w%d:%d" % (i, rng.integers(1000, 9999)) for i in range(n_workers)]
    if rng.integers(2):
        cluster["ps"] = ["ps%d:2222" % i for i in range(int(rng.integers(1, 3)))]
    if rng.integers(2):
        cluster["evaluator"] = ["ev:2222"]
    task_type = str(rng.choice(sorted(cluster)))
    cfg = {"cluster": cluster, "task": {"type": task_type, "index": int(rng.integers(len(cluster[task_type])))}}
    if rng.integers(2):
        cfg["rpc_layer"] = "grpc+verbs"
    return cfg


def test_matches_tensorflow_resolver(rng, monkeypatch):
    for _ in range(40):
        cfg = random_config(rng)
        monkeypatch.setenv("TF_CONFIG", json.dumps(cfg))
        r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        spec = r.cluster_spec().as_dict()
        c, st = resolve(cfg)
        assert c is not None, (cfg, st.msg)
        assert c.task_type.decode() == r.task_type and c.task_id == r.task_id, cfg
        assert c.rpc_layer.decode() == (r.rpc_layer or "grpc"), cfg
        assert c.is_chief == multi_worker_util.is_chief(spec, r.task_type, r.task_id), cfg
        if r.task_type in ("chief", "worker"):
            assert c.worker_id == multi_worker_util.id_in_cluster(spec, r.task_type, r.task_id), cfg
        if r.task_type != "ps":  # (worker_count rejects ps tasks)
            assert c.num_workers == multi_worker_util.worker_count(spec, r.task_type), cfg
        for job, addrs in spec.items():
            for i, a in enumerate(addrs):
                assert lib.tfc_cluster_address(ctypes.byref(c), job.encode(), i).decode() == a
        lib.tfc_cluster_clear(ctypes.byref(c))


def test_local_mode():
    c, _ = resolve({})
    assert c.is_chief and c.num_workers == 1 and c.task_type == b""


@pytest.mark.parametrize("cfg", [
    {"cluster": {"worker": ["a:1"]}, "task": {"type": "master", "index": 0}},
    {"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 1}},
    {"cluster": {"chief": ["a:1", "b:1"]}, "task": {"type": "chief", "index": 0}},
    {"cluster": {"worker": ["a:1"]}},
])
def test_rejected_like_tensorflow(cfg, monkeypatch):
    """TensorFlow raises ValueError for each (from the resolver or from multi_worker_util); tfc INVALID_ARGUMENT."""
    monkeypatch.setenv("TF_CONFIG", json.dumps(cfg))
    with pytest.raises(ValueError):
        r = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        spec = r.cluster_spec()
        if r.task_type is None:
            raise ValueError("When `cluster_spec` is given, you must also specify `task_type` and `task_id`.")
        multi_worker_util._validate_cluster_spec(spec.as_dict(), r.task_type, r.task_id)
    c, st = resolve(cfg)
    assert c is None and st.code == 3, st.msg
