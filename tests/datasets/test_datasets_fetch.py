"""The download path, for real, against an HTTP server on 127.0.0.1 started by the test."""

import dataclasses
import gzip
import io
import tarfile
import warnings

import numpy as np
import pytest

from eemrepro.datasets import ChecksumError, DownloadError, load_dataset
from eemrepro.datasets._fetch import fetch_file
from eemrepro.datasets._registry import FileSpec, _registry, get_entry

from tests.helpers import DATA, sha256_bytes

PAYLOAD = b"0.1,0.2,g\n0.3,0.4,b\n" * 50


@pytest.fixture(autouse=True)
def no_environment_mirror(monkeypatch):
    # These tests choose their source explicitly; a mirror set in the
    # environment (as .ci/run does) would replace the canonical hosts.
    monkeypatch.delenv("EEMREPRO_MIRROR", raising=False)


def _spec(server, path="/f.csv", sha=None, **kw):
    return FileSpec(name="f.csv", sha256=sha or sha256_bytes(PAYLOAD), urls=(server.url + path,), **kw)


def _leftovers(folder):
    return sorted(p.name for p in folder.rglob("*") if p.is_file())


def test_success_is_verified_and_cached(http_server, tmp_path):
    http_server.routes["/f.csv"] = [("ok", PAYLOAD)]
    path, origin, sha = fetch_file("demo", _spec(http_server), data_home=tmp_path)
    assert path.read_bytes() == PAYLOAD and sha == sha256_bytes(PAYLOAD) and origin.endswith("/f.csv")
    assert _leftovers(tmp_path) == ["f.csv"]
    assert path.stat().st_mode & 0o777 == 0o644  # public data, not a private temporary file's 0600
    # Second call: served from the cache, no request.
    assert fetch_file("demo", _spec(http_server), data_home=tmp_path)[1] == "cache"
    assert http_server.hits["/f.csv"] == 1


def test_retry_after_a_dropped_connection(http_server, tmp_path, no_retry_delay):
    http_server.routes["/f.csv"] = [("drop", PAYLOAD), ("ok", PAYLOAD)]
    path, _, _ = fetch_file("demo", _spec(http_server), data_home=tmp_path)
    assert path.read_bytes() == PAYLOAD
    assert http_server.hits["/f.csv"] == 2
    assert _leftovers(tmp_path) == ["f.csv"]


def test_checksum_mismatch_removes_the_file(http_server, tmp_path):
    http_server.routes["/f.csv"] = [("ok", PAYLOAD + b"tampered")]
    with pytest.raises(ChecksumError, match=f"expected sha256 {sha256_bytes(PAYLOAD)}, got {sha256_bytes(PAYLOAD + b'tampered')}"):
        fetch_file("demo", _spec(http_server), data_home=tmp_path)
    assert _leftovers(tmp_path) == []
    with pytest.raises(ChecksumError, match=r"The downloaded copy was deleted \(nothing in the cache changed\)"):
        fetch_file("demo", _spec(http_server), data_home=tmp_path)


def test_truncated_body_every_time_leaves_no_cache_entry(http_server, tmp_path, no_retry_delay):
    http_server.routes["/f.csv"] = [("drop", PAYLOAD)]
    with pytest.raises(DownloadError, match=r"after 4 attempts.*--mirror"):
        fetch_file("demo", _spec(http_server), data_home=tmp_path)
    assert http_server.hits["/f.csv"] == 4
    assert _leftovers(tmp_path) == []


def test_interrupted_download_leaves_no_cache_entry(http_server, tmp_path, monkeypatch):
    # An interruption (Ctrl-C) in the middle of writing: temp file removed, nothing cached.
    import eemrepro.datasets._fetch as fetch

    http_server.routes["/f.csv"] = [("ok", PAYLOAD)]

    def interrupted(done, total):
        raise KeyboardInterrupt

    monkeypatch.setattr(fetch, "_READ_BLOCK", 100)
    with pytest.raises(KeyboardInterrupt):
        fetch_file("demo", _spec(http_server), data_home=tmp_path, progress=interrupted)
    assert _leftovers(tmp_path) == []


def test_unreachable_host_names_the_url(tmp_path, no_retry_delay):
    spec = FileSpec(name="f.csv", sha256="0" * 64, urls=("http://127.0.0.1:9/f.csv",))
    with pytest.raises(DownloadError, match=r"http://127\.0\.0\.1:9/f\.csv.*--mirror"):
        fetch_file("demo", spec, data_home=tmp_path)


def test_corrupt_cached_file_is_fetched_again(http_server, tmp_path):
    http_server.routes["/f.csv"] = [("ok", PAYLOAD)]
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "f.csv").write_bytes(PAYLOAD[:10])
    with pytest.warns(UserWarning, match="fetching it again"):
        path, origin, _ = fetch_file("demo", _spec(http_server), data_home=tmp_path)
    assert path.read_bytes() == PAYLOAD and origin != "cache"


def test_mirror_folder_and_url(http_server, tmp_path):
    folder = tmp_path / "mirror" / "demo"
    folder.mkdir(parents=True)
    (folder / "f.csv").write_bytes(PAYLOAD)
    spec = FileSpec(name="f.csv", sha256=sha256_bytes(PAYLOAD), urls=("http://127.0.0.1:9/never",))
    path, origin, _ = fetch_file("demo", spec, data_home=tmp_path / "c1", mirror=tmp_path / "mirror")
    assert path.read_bytes() == PAYLOAD and origin == str(folder / "f.csv")
    http_server.routes["/root/demo/f.csv"] = [("ok", PAYLOAD)]
    path, origin, _ = fetch_file("demo", spec, data_home=tmp_path / "c2", mirror=http_server.url + "/root")
    assert path.read_bytes() == PAYLOAD and origin == http_server.url + "/root/demo/f.csv"


def test_mirror_missing_the_file(tmp_path):
    spec = FileSpec(name="f.csv", sha256="0" * 64)
    (tmp_path / "mirror").mkdir()
    with pytest.raises(DownloadError, match="has no file demo/f.csv"):
        fetch_file("demo", spec, data_home=tmp_path / "c", mirror=tmp_path / "mirror")
    assert _leftovers(tmp_path / "c") == []


def test_gzip_mirror_copy_is_cached_as_the_canonical_file(tmp_path):
    gz = gzip.compress(PAYLOAD, mtime=0)
    (tmp_path / "m" / "demo").mkdir(parents=True)
    (tmp_path / "m" / "demo" / "f.csv.gz").write_bytes(gz)
    spec = FileSpec(name="f.csv", sha256=sha256_bytes(PAYLOAD),
                    mirror={"name": "f.csv.gz", "sha256": sha256_bytes(gz), "compression": "gzip"})
    path, _, sha = fetch_file("demo", spec, data_home=tmp_path / "c", mirror=tmp_path / "m")
    assert path.read_bytes() == PAYLOAD and sha == sha256_bytes(PAYLOAD)


def test_tar_archive_member_and_unpublished_checksum(http_server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo("bench/x9data.npz")
        data = (DATA / "isolet_tiny.npz").read_bytes()
        info.size = len(data)
        tf.addfile(info, io.BytesIO(data))
    http_server.routes["/bench.tar.gz"] = [("ok", buf.getvalue())]
    spec = FileSpec(name="x9data.npz", sha256=None,
                    archive={"url": http_server.url + "/bench.tar.gz", "member": "x9data.npz"})
    with pytest.warns(UserWarning, match="no published checksum; recorded sha256"):
        path, _, sha = fetch_file("isolet", spec, data_home=tmp_path)
    assert sha == sha256_bytes(data)
    # From now on the recorded checksum guards the cached copy.
    path.write_bytes(b"garbage")
    with pytest.warns(UserWarning, match="fetching it again"):
        fetch_file("isolet", spec, data_home=tmp_path)
    assert path.read_bytes() == data


def _patched_entry(monkeypatch, name, **file_changes):
    entry = get_entry(name)
    spec = dataclasses.replace(entry.files[0], **file_changes)
    registry = dict(_registry())
    registry[name] = dataclasses.replace(entry, files=(spec,), expected={})
    monkeypatch.setattr("eemrepro.datasets._load._registry", lambda: registry)
    monkeypatch.setattr("eemrepro.datasets._registry._registry", lambda: registry)


def test_forest_cover_download_and_parse_on_a_synthetic_file(http_server, tmp_path, monkeypatch):
    # The real canonical-host path (URL list, checksum, gzip CSV parser, class 5
    # = positive) on a 12-row file of covtype's format; only the URL and sha256
    # are pointed at the synthetic copy.
    data = (DATA / "covtype_tiny.data.gz").read_bytes()
    http_server.routes["/covtype.data.gz"] = [("ok", data)]
    _patched_entry(monkeypatch, "forest-cover", sha256=sha256_bytes(data),
                   urls=(http_server.url + "/covtype.data.gz",))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        X, y, meta = load_dataset("forest-cover", data_home=tmp_path)
    assert X.shape == (12, 54)
    assert (y == 1).sum() == 3  # rows 0, 4, 8 are class 5
    assert meta["files"][0]["origin"].endswith("/covtype.data.gz")


def test_isolet_from_a_mirror_with_a_synthetic_member(tmp_path, monkeypatch):
    (tmp_path / "m" / "isolet").mkdir(parents=True)
    data = (DATA / "isolet_tiny.npz").read_bytes()
    (tmp_path / "m" / "isolet" / "x9data.npz").write_bytes(data)
    _patched_entry(monkeypatch, "isolet", sha256=sha256_bytes(data))
    X, y, meta = load_dataset("isolet", data_home=tmp_path / "c", mirror=tmp_path / "m")
    assert X.shape == (10, 617) and (y == 1).sum() == 2
    np.testing.assert_allclose(X.min(axis=0), 0.0)
