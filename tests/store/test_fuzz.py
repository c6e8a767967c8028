"""Fuzzing the two readers of user input: the config loader and the record reader (Hypothesis).

Every generated document or record line gives a result or one clear error
(``ConfigError`` / ``StoreError``, one line naming the file), never another
exception, within a time budget. CI runs a fixed number of examples
(``HYPOTHESIS_PROFILE=ci``, the default here); ``make fuzz`` runs many more.
"""

import json
import os
import time
from pathlib import Path

import pytest
import yaml

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from eemrepro.experiments import ConfigError, ExperimentConfig, load_config  # noqa: E402
from eemrepro.store import ResultStore, StoreError, StoreWarning  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
settings.register_profile("ci", max_examples=120, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.register_profile("fuzz", max_examples=3000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))
SECONDS = 3.0  # per document, far above a real config's read
MEGABYTES = 200  # the most one example may raise the process's peak memory


def _peak_mb():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _one_line_error(exc, path):
    text = str(exc)
    assert "\n" not in text.strip() or text.startswith(str(path)), text
    assert str(path) in text or "<" in text, text


scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-10**30, max_value=10**30),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=30),
    st.sampled_from(["ten", "1e400", "-1", "0", "", "rbf", "EEM", "os:system", "nested", "global", "\u2603", "\x00"]),
)
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                        st.dictionaries(st.text(max_size=10), inner, max_size=4)),
                      max_leaves=12)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated_configs(draw):
    """A committed config with a few keys dropped, retyped, nested or added."""
    source = draw(st.sampled_from(CONFIGS))
    doc = yaml.safe_load(source.read_text())
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        action = draw(st.sampled_from(["drop", "retype", "nest", "add"]))
        if action == "drop":
            del parent[path[-1]]
        elif action == "retype":
            parent[path[-1]] = draw(values)
        elif action == "nest":
            parent[path[-1]] = {"x": parent[path[-1]]}
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=8))] = draw(values)
    return source.name, doc


@pytest.mark.slow
@given(mutated_configs())
def test_mutated_configs_load_or_fail_in_one_line(tmp_path_factory, case):
    name, doc = case
    path = tmp_path_factory.mktemp("cfg") / name
    path.write_text(yaml.safe_dump(doc, allow_unicode=True))
    start, peak = time.perf_counter(), _peak_mb()
    try:
        assert isinstance(load_config(path), ExperimentConfig)
    except ConfigError as exc:
        _one_line_error(exc, path)
    assert time.perf_counter() - start < SECONDS and _peak_mb() - peak < MEGABYTES


@st.composite
def text_edits(draw):
    """A committed config's text with lines duplicated, cut, anchored or replaced by bytes."""
    source = draw(st.sampled_from(CONFIGS))
    lines = source.read_text().splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["dup", "cut", "anchor", "alias", "bytes", "indent"]))
        if action == "dup":
            lines.insert(i, lines[i])
        elif action == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif action == "anchor":
            lines[i] = lines[i].replace(": ", ": &a ", 1)
        elif action == "alias":
            lines[i] = lines[i].split(":")[0] + ": *a\n"
        elif action == "indent":
            lines[i] = "  " + lines[i]
        else:
            lines[i] = draw(st.binary(max_size=20)).decode("latin-1") + "\n"
    return source.name, "".join(lines).encode("utf-8", errors="surrogateescape")


@given(text_edits())
def test_edited_config_text_loads_or_fails_in_one_line(tmp_path_factory, case):
    name, data = case
    path = tmp_path_factory.mktemp("txt") / name
    path.write_bytes(data)
    start, peak = time.perf_counter(), _peak_mb()
    try:
        load_config(path)
    except ConfigError as exc:
        _one_line_error(exc, path)
    assert time.perf_counter() - start < SECONDS and _peak_mb() - peak < MEGABYTES


GOOD = {"kind": "grid-search", "dataset": "heart", "model": "M", "params": {"C": 1.0}, "repeat": 0, "fold": 0,
        "inner": None, "status": "ok", "metrics": {"gmean": 0.5}, "criteria": {}, "identity": {"kind": "grid-search"},
        "identity_sha": "abc", "data_sha256": "x", "versions": {"numpy": "2"}, "host": "h", "finished_at": 1.0}


@st.composite
def record_lines(draw):
    """Lines of a write-ahead segment: records, records with fields retyped or dropped, torn and garbled lines."""
    lines = []
    for i in range(draw(st.integers(1, 6))):
        r = dict(GOOD, fold=i)
        kind = draw(st.sampled_from(["good", "retype", "drop", "torn", "garbage", "json"]))
        if kind == "retype":
            r[draw(st.sampled_from(sorted(r)))] = draw(values)
        elif kind == "drop":
            del r[draw(st.sampled_from(sorted(r)))]
        line = json.dumps(r, allow_nan=True) + "\n"
        if kind == "torn":
            line = line[: draw(st.integers(0, len(line) - 1))]
        elif kind == "garbage":
            line = draw(st.binary(max_size=40)).decode("latin-1") + "\n"
        elif kind == "json":
            line = json.dumps(draw(values)) + "\n"
        lines.append(line)
    return lines


@given(record_lines())
def test_record_lines_read_or_fail_in_one_line(tmp_path_factory, lines):
    import warnings

    folder = tmp_path_factory.mktemp("store")
    (folder / "records").mkdir()
    (folder / "records" / "20260101T000000-1.jsonl").write_text("".join(lines), encoding="utf-8",
                                                                 errors="surrogateescape")
    start, peak = time.perf_counter(), _peak_mb()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", StoreWarning)
        store = ResultStore(folder)
        try:
            records = store.read()
            frame = store.frame(["status", "metrics"])
            assert len(frame) == len(records)
            store.compact()  # sealing what was read gives the same records back
            assert len(ResultStore(folder).read()) == len(records)
        except StoreError as exc:
            assert "\n" not in str(exc).strip() and str(folder) in str(exc)
    assert time.perf_counter() - start < SECONDS and _peak_mb() - peak < MEGABYTES


# -- the sealed store: damage is refused by name, and no clock reorders records ----------------------------------
def _sealed_store(folder, n=12):
    store = ResultStore(folder)
    store.append([dict(GOOD, fold=i, params={"C": 0.5 * (i % 3)}, metrics={"gmean": 0.6 + i / 100}) for i in range(n)])
    store.close()
    (segment,) = (folder / "records").glob("*.parquet")
    return segment, ResultStore(folder).frame()


@pytest.fixture(scope="module")
def sealed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sealed")
    segment, frame = _sealed_store(folder)
    return folder, segment, segment.read_bytes(), frame


@pytest.mark.slow
@given(st.data())
def test_a_bit_flipped_anywhere_in_a_sealed_segment_is_refused_by_name_or_harmless(sealed, data):
    # Expected: the frame read before the flip (an independent read of the intact file), or a StoreError naming
    # the segment; never a frame that differs.
    import pandas as pd

    folder, segment, original, frame = sealed
    bit = data.draw(st.integers(0, len(original) * 8 - 1))
    flipped = bytearray(original)
    flipped[bit // 8] ^= 1 << (bit % 8)
    segment.write_bytes(bytes(flipped))
    try:
        try:
            got = ResultStore(folder).frame()
        except StoreError as exc:
            assert str(segment) in str(exc) and "\n" not in str(exc).strip()
        else:
            pd.testing.assert_frame_equal(got, frame)
    finally:
        segment.write_bytes(original)


@pytest.mark.slow
@given(st.lists(st.integers(-48 * 3600, 48 * 3600), min_size=2, max_size=5))
def test_the_last_run_wins_whatever_the_clock_said(tmp_path_factory, monkeypatch_clock, shifts):
    # Each run writes the same key with its own number under a clock moved by ``shifts`` seconds (time zones,
    # DST, a clock set back): the record read is the last run's, as the order of the runs says.
    folder = tmp_path_factory.mktemp("clock")
    for number, shift in enumerate(shifts):
        monkeypatch_clock(shift)
        store = ResultStore(folder)
        store.append([dict(GOOD, metrics={"gmean": float(number)})])
        store.close()
    monkeypatch_clock(0)
    assert ResultStore(folder).frame(["gmean"])["gmean"].tolist() == [float(len(shifts) - 1)]


@pytest.fixture
def monkeypatch_clock(monkeypatch):
    real_time, real_localtime = time.time, time.localtime

    def shift(seconds):
        monkeypatch.setattr(time, "time", lambda: real_time() + seconds)
        monkeypatch.setattr(time, "localtime", lambda t=None: real_localtime(real_time() + seconds if t is None
                                                                              else t))
    return shift
