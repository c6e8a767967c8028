"""Timing helper shared by the benchmark scripts (run as ``python benchmarks/<name>.py``)."""

import time


def best_of(fn, repeat):
    """(fastest wall time of ``repeat`` calls of ``fn``, the last call's result)."""
    times, out = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return min(times), out
