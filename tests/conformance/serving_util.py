"""Starting and stopping `tfc serve` for the test_serving_*.py files.

Each server listens on 127.0.0.1 on a free port, is waited for with a bounded time, and is stopped with
SIGTERM (only the process the test started; a server that does not stop in time is killed and the test fails).
"""
import os
import signal
import socket
import subprocess
import time

import requests
import tfc


def tfc_bin():
    """The tfc command next to the library under test; TFC_SERVE_BIN overrides it (a sanitizer build of it)."""
    return os.environ.get("TFC_SERVE_BIN") or os.path.join(os.path.dirname(tfc.library_path), "tfc")


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`tfc serve` with the given flags; url is http://127.0.0.1:<port>."""

    def __init__(self, *flags, wait_model=None, timeout=120):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = open(os.devnull, "w") if os.environ.get("TFC_SERVE_QUIET") else None
        self.proc = subprocess.Popen([tfc_bin(), "serve", "--rest_api_host=127.0.0.1",
                                      f"--rest_api_port={self.port}", f"--port={free_port()}", *flags],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        deadline = time.time() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tfc serve exited with {self.proc.returncode}: {self.proc.stdout.read()}")
            try:
                if wait_model is None:
                    requests.get(self.url + "/v1/models/_", timeout=2)
                    break
                r = requests.get(f"{self.url}/v1/models/{wait_model}", timeout=2)
                if r.status_code == 200 and any(v["state"] == "AVAILABLE" for v in r.json()["model_version_status"]):
                    break
            except requests.ConnectionError:
                pass
            if time.time() > deadline:
                self.kill()
                raise RuntimeError("tfc serve did not come up in time")
            time.sleep(0.1)

    def get(self, path, **kw):
        return requests.get(self.url + path, timeout=kw.pop("timeout", 60), **kw)

    def post(self, path, body=None, **kw):
        return requests.post(self.url + path, json=body, timeout=kw.pop("timeout", 60), **kw)

    def post_raw(self, path, data, **kw):
        return requests.post(self.url + path, data=data, timeout=kw.pop("timeout", 60), **kw)

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def alive(self):
        return self.proc.poll() is None

    def stop(self, timeout=60):
        """SIGTERM; returns the exit code (the test asserts 0)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.kill()
                raise
        self.output = self.proc.stdout.read()
        return self.proc.returncode

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is not None:
            self.kill()
        else:
            code = self.stop()
            assert code == 0, f"tfc serve exited with {code}: {self.output}"
