"""Getting data files: bundled copy, cache, mirror or canonical host.

Every file that enters the cache is written to a temporary file in the cache
folder, checked against its sha256 and only then renamed into place
(``os.replace`` is atomic), the way ``sklearn.datasets._base._fetch_remote``
does it; on any failure the temporary file is removed, so the cache never
holds a partial or unverified file. A cached file whose checksum no longer
matches is fetched again.

A mirror (a folder or a URL laid out as ``<root>/<dataset id>/<file>``, such as
``../shared/datasets``) stands in for the canonical hosts: when one is given,
only the mirror is used.
"""

import gzip
import hashlib
import http.client
import os
import shutil
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from importlib import resources
from pathlib import Path

from ._errors import ChecksumError, DownloadError

_READ_BLOCK = 1 << 20


def get_data_home(data_home=None):
    """Cache root: the argument, else ``$EEMREPRO_DATA``, else the per-user cache folder.

    Parameters
    ----------
    data_home : str or Path, optional

    Returns
    -------
    path : Path (created if missing)
    """
    if data_home is None:
        data_home = os.environ.get("EEMREPRO_DATA")
    if data_home is None:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
        data_home = Path(base) / "eemrepro"
    path = Path(data_home).expanduser()
    path.mkdir(parents=True, exist_ok=True)
    return path


def get_mirror(mirror=None):
    """Mirror root: the argument, else ``$EEMREPRO_MIRROR``, else ``None``."""
    if mirror is None:
        mirror = os.environ.get("EEMREPRO_MIRROR") or None
    return None if mirror is None else str(mirror)


def _is_url(location):
    return urllib.parse.urlsplit(str(location)).scheme in ("http", "https", "file", "ftp")


def sha256_of(path):
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_READ_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def _new_temp(folder, name):
    fd, temp = tempfile.mkstemp(prefix=f"{name}.part_", dir=folder)
    # mkstemp makes the file private (0600); a cached data file is public data, readable like any other.
    os.fchmod(fd, 0o644)
    os.close(fd)
    return Path(temp)


def _download(url, folder, name, progress=None, n_retries=3, delay=1.0, timeout=60):
    """Stream ``url`` into a new temporary file in ``folder``; retry with back-off.

    A body shorter than its Content-Length (a dropped connection) is retried
    like any other transient failure. Returns the temporary file's path; the
    caller verifies and renames it.
    """
    temp = _new_temp(folder, name)
    try:
        for attempt in range(n_retries + 1):
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response, open(temp, "wb") as out:
                    length = response.headers.get("Content-Length")
                    total = int(length) if length is not None else None
                    done = 0
                    for block in iter(lambda: response.read(_READ_BLOCK), b""):
                        out.write(block)
                        done += len(block)
                        if progress is not None:
                            progress(done, total)
                    if total is not None and done != total:
                        raise http.client.IncompleteRead(b"", total - done)
                return temp
            except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as exc:
                if isinstance(exc, urllib.error.HTTPError) and exc.code == 404:
                    raise DownloadError(f"{url} answered 404 Not Found") from exc
                if attempt == n_retries:
                    raise DownloadError(
                        f"could not download {url} after {n_retries + 1} attempts: {exc}. "
                        "If this host is unreachable from here, pass a mirror of the data "
                        "(--mirror PATH|URL or EEMREPRO_MIRROR)."
                    ) from exc
                time.sleep(delay * 2**attempt)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def _copy_to_temp(src, folder, name):
    temp = _new_temp(folder, name)
    try:
        shutil.copyfile(src, temp)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    return temp


def _transform_to_temp(src_temp, folder, name, fn):
    """Write ``fn(src_temp, out_path)`` to a new temp file; remove the source temp."""
    temp = _new_temp(folder, name)
    try:
        fn(src_temp, temp)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    finally:
        Path(src_temp).unlink(missing_ok=True)
    return temp


def _gunzip(src, dst):
    with gzip.open(src, "rb") as fin, open(dst, "wb") as fout:
        shutil.copyfileobj(fin, fout, _READ_BLOCK)


def _extract_zip_member(member):
    def extract(src, dst):
        try:
            with zipfile.ZipFile(src) as zf, zf.open(member) as fin, open(dst, "wb") as fout:
                shutil.copyfileobj(fin, fout, _READ_BLOCK)
        except (zipfile.BadZipFile, KeyError) as exc:
            raise DownloadError(f"the zip archive has no readable member {member!r}: {exc}") from exc

    return extract


def _extract_tar_member(archive, member, dst):
    try:
        with tarfile.open(archive) as tf:
            names = {Path(m.name).name: m for m in tf.getmembers() if m.isfile()}
            if member not in names:
                raise DownloadError(f"archive {archive} has no member {member!r}")
            with tf.extractfile(names[member]) as fin, open(dst, "wb") as fout:
                shutil.copyfileobj(fin, fout, _READ_BLOCK)
    except tarfile.TarError as exc:
        raise DownloadError(f"archive {archive} is unreadable: {exc}") from exc


def _verify(temp, expected, origin, label):
    actual = sha256_of(temp)
    if expected is not None and actual != expected:
        temp.unlink(missing_ok=True)
        raise ChecksumError(
            f"checksum mismatch for {label} from {origin}: expected sha256 {expected}, "
            f"got {actual}. The downloaded copy was deleted (nothing in the cache changed); the source may be "
            "corrupt or a different version."
        )
    return actual


def _from_mirror(dataset_id, spec, mirror, folder, progress):
    rel = spec.mirror_path(dataset_id)
    if _is_url(mirror):
        url = mirror.rstrip("/") + "/" + urllib.parse.quote(rel)
        try:
            temp = _download(url, folder, spec.name, progress)
        except DownloadError as exc:
            raise DownloadError(f"mirror {mirror} could not deliver {rel}: {exc}") from exc
        origin = url
    else:
        src = Path(mirror).expanduser() / rel
        if not src.is_file():
            raise DownloadError(
                f"mirror {mirror} has no file {rel} (needed for data set {dataset_id!r}); "
                "a mirror stands in for the canonical hosts, so nothing else was tried."
            )
        temp = _copy_to_temp(src, folder, spec.name)
        origin = str(src)
    if spec.mirror.get("compression") == "gzip":
        _verify(temp, spec.mirror.get("sha256"), origin, rel)
        temp = _transform_to_temp(temp, folder, spec.name, _gunzip)
    return temp, origin


def _from_canonical(dataset_id, spec, data_home, folder, progress):
    if spec.archive:
        url = spec.archive["url"]
        archive_dir = data_home / "_archives"
        archive_dir.mkdir(exist_ok=True)
        archive = archive_dir / Path(urllib.parse.urlsplit(url).path).name
        if not archive.is_file():
            temp = _download(url, archive_dir, archive.name, progress)
            os.replace(temp, archive)
        temp = _new_temp(folder, spec.name)
        try:
            _extract_tar_member(archive, spec.archive["member"], temp)
        except BaseException:
            temp.unlink(missing_ok=True)
            raise
        return temp, f"{url} (member {spec.archive['member']})"
    if not spec.urls:
        raise DownloadError(f"data set {dataset_id!r}: no canonical URL for {spec.name}")
    errors = []
    for url in spec.urls:
        try:
            temp = _download(url, folder, spec.name, progress)
            if spec.zip_member:
                temp = _transform_to_temp(temp, folder, spec.name, _extract_zip_member(spec.zip_member))
            if spec.sha256 is not None and sha256_of(temp) != spec.sha256 and url != spec.urls[-1]:
                # Another canonical host may serve the recorded version.
                errors.append(f"{url}: checksum differs")
                temp.unlink(missing_ok=True)
                continue
            return temp, url
        except DownloadError as exc:
            errors.append(str(exc))
    raise DownloadError("; ".join(errors))


def fetch_file(dataset_id, spec, bundled=False, data_home=None, mirror=None, download=True, progress=None):
    """Local path of a verified copy of one registry file, fetching it if needed.

    Order: the copy bundled with the package, a valid cached copy, then the
    mirror (if one is given) or the canonical hosts.

    Returns
    -------
    path : Path
    origin : str
        Where the file came from ("bundled", "cache", the mirror path or URL).
    sha256 : str
    """
    if spec.local is not None:  # a user's own file: read in place, its checksum what the records carry
        path = Path(spec.local)
        if not path.is_file():
            raise DownloadError(f"local data set file {path} is not there (moved or deleted?)")
        actual = sha256_of(path)
        if spec.sha256 is not None and actual != spec.sha256:
            raise ChecksumError(f"local data set file {path} has sha256 {actual}, expected {spec.sha256}: "
                                "it changed since it was checksummed")
        return path, f"local file {path}", actual
    if bundled:
        path = resources.files("eemrepro.datasets") / "data" / dataset_id / spec.name
        with resources.as_file(path) as local:
            actual = sha256_of(local)
            if spec.sha256 is not None and actual != spec.sha256:
                raise ChecksumError(
                    f"bundled file {local} has sha256 {actual}, expected {spec.sha256}: "
                    "the installed package is damaged; reinstall it."
                )
            return Path(local), "bundled", actual

    data_home = get_data_home(data_home)
    folder = data_home / dataset_id
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / spec.name
    sidecar = folder / (spec.name + ".sha256")
    expected = spec.sha256
    if expected is None and sidecar.is_file():
        expected = sidecar.read_text().split()[0]
    if final.is_file():
        actual = sha256_of(final)
        if expected is None or actual == expected:
            return final, "cache", actual
        warnings.warn(
            f"cached {final} has sha256 {actual}, expected {expected}: fetching it again",
            stacklevel=2,
        )
        final.unlink()
    if not download:
        raise DownloadError(f"{final} is not cached and download=False")

    mirror = get_mirror(mirror)
    if mirror is not None:
        temp, origin = _from_mirror(dataset_id, spec, mirror, folder, progress)
    else:
        temp, origin = _from_canonical(dataset_id, spec, data_home, folder, progress)
    try:
        actual = _verify(temp, expected, origin, spec.name)
        if expected is None:
            sidecar.write_text(f"{actual}  {spec.name}\n")
            warnings.warn(
                f"{spec.name} has no published checksum; recorded sha256 {actual} in {sidecar} "
                "and will check it from now on.",
                stacklevel=2,
            )
        os.replace(temp, final)
    finally:
        temp.unlink(missing_ok=True)
    return final, origin, actual
