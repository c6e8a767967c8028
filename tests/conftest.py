import http.server
import os
import threading

import pytest

# What the reports keep of unchanged folders (``eemrepro._kept``) is off for the suite, in this process and the
# commands it starts: a test that plants a failure in a reader or counts its reads meets the reader itself.
# tests/reports/test_kept.py turns it on, in a folder of its own.
os.environ["EEMREPRO_CACHE"] = "0"


@pytest.fixture
def small_chunks(monkeypatch):
    """Force many tiny chunks so the chunked accumulation paths are exercised."""
    import eemrepro.models._base as base

    monkeypatch.setattr(base, "_CHUNK_VALUES", 64 * 7)
    return base


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
