import http.server
import os
import threading

import pytest

# What the reports keep of unchanged folders (``eemrepro._kept``) is off for the suite, in this process and the
# commands it starts: a test that plants a failure in a reader or counts its reads meets the reader itself.
# tests/reports/test_kept.py turns it on, in a folder of its own.
os.environ["EEMREPRO_CACHE"] = "0"


def _forked_fits_count_for_mutmut():
    """Under ``make mutate``'s statistics pass, the functions a forked fit child runs count as run by the test.

    mutmut runs, for each mutant, the tests its statistics pass saw call the mutated function, and it records those
    calls in its own process only. A run's fits (the plug-in guards, the metrics, the worker's code check) happen in
    a forked child (``experiments/_watchdog._FitChild``): the tests that check them were never run against their
    mutants, which then "survived". In a forked child each function's first call (since the test process last
    collected them) is appended to a file of that child's, and the test process adds them to mutmut's record of
    the test before mutmut reads it. The child runs the mutant under test already (it forks the test process,
    mutmut's trampolines and environment included); only the statistics were lost.
    """
    import sys
    import tempfile
    from pathlib import Path

    if "mutmut" not in sys.modules:  # (not under mutmut: nothing to do)
        return
    import mutmut.mutation.trampoline as trampoline
    from mutmut.state import state

    hits = Path(tempfile.mkdtemp(prefix="mutmut-forked-hits-"))

    def in_child():
        record, seen, path = trampoline.record_trampoline_hit, set(), hits / str(os.getpid())

        def also_to_the_parent(name, caller=None):
            record(name, caller=caller)
            if not path.exists():
                seen.clear()  # the test process took them: a later test counts them again
            if name not in seen:
                seen.add(name)
                with open(path, "a") as f:
                    f.write(name + "\n")

        trampoline.record_trampoline_hit = also_to_the_parent

    os.register_at_fork(after_in_child=in_child)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_teardown(item, nextitem):
        for path in hits.iterdir():
            names = path.read_text().split()
            path.unlink()
            state()._stats.update(names)

    def pytest_sessionfinish(session, exitstatus):
        """The processes the tests left running (loky's idle workers) stopped and reaped here: mutmut runs its
        statistics and clean tests in its own process and then waits for its mutants' processes with
        ``os.wait()``, which would reap one of these when it ends and stop the run with a ``KeyError``."""
        import signal

        from joblib.externals.loky import get_reusable_executor

        get_reusable_executor().shutdown(wait=True, kill_workers=True)
        for entry in Path("/proc").iterdir():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) if entry.name.isdigit() else 0
            except (OSError, IndexError, ValueError):
                continue
            if ppid == os.getpid():
                try:
                    os.kill(int(entry.name), signal.SIGKILL)
                    os.waitpid(int(entry.name), 0)
                except (ProcessLookupError, ChildProcessError):
                    pass

    globals()["pytest_runtest_teardown"] = pytest_runtest_teardown
    globals()["pytest_sessionfinish"] = pytest_sessionfinish


_forked_fits_count_for_mutmut()


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
