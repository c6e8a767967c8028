import hashlib
import http.server
import os
import threading
from pathlib import Path

import numpy as np
import pytest


@pytest.fixture
def small_chunks(monkeypatch):
    """Force many tiny chunks so the chunked accumulation paths are exercised."""
    import eemrepro.models._base as base

    monkeypatch.setattr(base, "_CHUNK_VALUES", 64 * 7)
    return base


def make_imbalanced(n=300, d=5, ratio=0.2, seed=0, shift=0.8):
    """Two Gaussian blobs in [0, 1]-ish, the positive (minority) class shifted."""
    rng = np.random.RandomState(seed)
    n_pos = int(n * ratio)
    X = rng.normal(0.5, 0.15, size=(n, d))
    y = np.full(n, -1)
    y[:n_pos] = 1
    X[:n_pos] += shift * 0.15
    return X, y


DATA = Path(__file__).parent / "data"


def sha256_bytes(data):
    return hashlib.sha256(data).hexdigest()


def find_mirror():
    """The offline mirror: $EEMREPRO_MIRROR, else ../shared/datasets beside the checkout."""
    env = os.environ.get("EEMREPRO_MIRROR")
    if env:
        return Path(env)
    candidate = Path(__file__).resolve().parents[2] / "shared" / "datasets"
    return candidate if candidate.is_dir() else None


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``server.routes[path]``: a list of behaviours, one per request
    (the last one repeats): ("ok", bytes), ("drop", bytes) sends the headers
    and half the body then closes, ("status", code)."""

    def do_GET(self):
        routes, hits = self.server.routes, self.server.hits
        plan = routes.get(self.path)
        if plan is None:
            self.send_error(404)
            return
        n = hits.get(self.path, 0)
        hits[self.path] = n + 1
        kind, payload = plan[min(n, len(plan) - 1)]
        if kind == "status":
            self.send_error(payload)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if kind == "ok":
            self.wfile.write(payload)
        else:  # drop: a connection cut mid-body
            self.wfile.write(payload[: len(payload) // 2])
            self.wfile.flush()
            self.connection.shutdown(2)

    def log_message(self, *args):
        pass


def require_mirror():
    """The mirror, or skip -- a failure instead where EEMREPRO_REQUIRE_MIRROR is set (CI)."""
    mirror = find_mirror()
    if mirror is None:
        message = "no mirror: ../shared/datasets beside the checkout or EEMREPRO_MIRROR"
        if os.environ.get("EEMREPRO_REQUIRE_MIRROR"):
            pytest.fail(message + " (required: EEMREPRO_REQUIRE_MIRROR is set)")
        pytest.skip(message)
    return mirror


@pytest.fixture
def http_server():
    """A real HTTP server on 127.0.0.1 (an ephemeral port), stopped after the test."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.routes, server.hits = {}, {}
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def no_retry_delay(monkeypatch):
    import eemrepro.datasets._fetch as fetch

    monkeypatch.setattr(fetch.time, "sleep", lambda s: None)
    return fetch
