"""The result store: append-only JSON-lines segments under a results folder.

Layout of ``DIR`` (default ``results/<config name>``)::

    config.yaml            the config of the latest run (resolved)
    runs/<stamp>.json      one file per invocation: config, versions, host, start/end
    records/<stamp>-<pid>.jsonl   one record per line, appended as units finish
    records/*.jsonl.gz     closed segments compacted by ``compact()`` (for git)

Each record carries its identity (``_units``): what, besides its key, made
its values. Only the main process writes. Each unit's records are written, flushed and
fsync'ed together as it finishes, so a killed run loses at most the units in
flight; a line torn by the kill is ignored on reading (and redone on resume).
"""

import gzip
import json
import os
import shutil
import time
from pathlib import Path

from ._units import stored_key


class ResultStore:
    def __init__(self, root):
        self.root = Path(root)
        self.records_dir = self.root / "records"
        self._fh = None

    # -- reading ----------------------------------------------------------
    def segments(self):
        if not self.records_dir.is_dir():
            return []
        return sorted([*self.records_dir.glob("*.jsonl"), *self.records_dir.glob("*.jsonl.gz")],
                      key=lambda p: p.name)

    def _legacy_config(self):
        path = self.root / "config.yaml"
        if not path.is_file():
            return None
        import yaml

        return yaml.safe_load(path.read_text(encoding="utf-8"))

    def read(self):
        """Every complete record; the latest record of a key wins (a retried unit).

        Records written before record identities are upgraded in memory
        (``_legacy.upgrade``); the files are left as they are.
        """
        from ._legacy import is_legacy, upgrade

        latest = {}
        legacy_config = ...
        for path in self.segments():
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as fh:
                for line in fh:
                    if not line.endswith("\n"):
                        break  # torn by a kill mid-write
                    try:
                        record = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    if is_legacy(record):
                        if legacy_config is ...:
                            legacy_config = self._legacy_config()
                        record = upgrade(record, legacy_config)
                    latest[stored_key(record)] = record
        return list(latest.values())

    def done_keys(self, data_sha256, retry_failed=False, records=None):
        """(key, identity sha) of the records made with this data (what resume skips).

        With ``retry_failed``, failed fits do not count as done (timed-out ones do).
        """
        return {
            (stored_key(r), r["identity_sha"]) for r in (self.read() if records is None else records)
            if r["data_sha256"] == data_sha256.get(r["dataset"]) and not (retry_failed and r["status"] == "failed")
        }

    def unfinished_cells(self, records=None):
        """(data set, model) cells of the folder's config whose records lack a unit's record.

        The run state the reports need to tell an interrupted grid from a
        finished one (``_units.unfinished_cells``); empty without a config.yaml.
        """
        path = self.root / "config.yaml"
        if not path.is_file():
            return set()
        from ._config import load_config
        from ._kinds import get_kind
        from ._units import unfinished_cells

        config = load_config(path)
        return unfinished_cells(get_kind(config.kind).units(config), self.read() if records is None else records)

    # -- writing ----------------------------------------------------------
    def _open(self):
        if self._fh is None:
            self.records_dir.mkdir(parents=True, exist_ok=True)
            stamp = time.strftime("%Y%m%dT%H%M%S")
            self._fh = open(self.records_dir / f"{stamp}-{os.getpid()}.jsonl", "a", encoding="utf-8")
        return self._fh

    def append(self, records):
        fh = self._open()
        fh.write("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
        fh.flush()
        os.fsync(fh.fileno())

    def close(self):
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def compact(self):
        """Gzip every closed segment (complete lines only), atomically; return the new files.

        Run it when no run is writing to the folder (before committing a store).
        """
        if self._fh is not None:
            raise RuntimeError("close the store before compacting it")
        written = []
        for path in self.segments():
            if path.suffix == ".gz":
                continue
            lines = [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True)
                     if line.endswith("\n")]
            target = path.with_name(path.name + ".gz")
            tmp = target.with_name(target.name + ".tmp")
            with gzip.GzipFile(tmp, "wb", mtime=0) as gz:
                gz.write("".join(lines).encode("utf-8"))
            os.replace(tmp, target)
            path.unlink()
            written.append(target)
        return written

    def forget(self, models=None, datasets=None, cells=None):
        """Move the records of these models / data sets aside so that a resume runs them again.

        For re-measuring after a change to a model (its records no longer
        describe the code). Each segment holding a match is rewritten without
        it, atomically; the matching records go to ``superseded-<stamp>/``
        (nothing is deleted). Run it when no run is writing to the folder.
        ``cells``: (data set, model) pairs instead of names. Raises ValueError,
        moving nothing, for a name with no stored record.
        Returns ``(number of records moved, folder or None)``.
        """
        if self._fh is not None:
            raise RuntimeError("close the store before forgetting records")
        segments = []
        for path in self.segments():
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as fh:
                lines = [line for line in fh if line.endswith("\n")]
            segments.append((path, lines, [json.loads(line) for line in lines]))
        for label, chosen, field in (("model", models, "model"), ("data set", datasets, "dataset")):
            known = sorted({r[field] for _, _, records in segments for r in records})
            unknown = sorted(set(chosen or ()) - set(known))
            if unknown:
                raise ValueError(f"{self.root}: no stored records of {label}(s) {unknown}; stored: {known}")

        target = self.root / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}"
        moved = 0
        for path, lines, records in segments:
            split = {True: [], False: []}
            for line, r in zip(lines, records, strict=True):
                if cells is not None:
                    chosen = (r["dataset"], r["model"]) in cells
                else:
                    chosen = (models is None or r["model"] in models) and (datasets is None or r["dataset"] in datasets)
                split[chosen].append(line)
            if not split[True]:
                continue
            target.mkdir(parents=True, exist_ok=True)
            gz = path.suffix == ".gz"
            with gzip.GzipFile(target / (path.name if gz else path.name + ".gz"), "wb", mtime=0) as out:
                out.write("".join(split[True]).encode("utf-8"))
            tmp = path.with_name(path.name + ".tmp")
            with (gzip.GzipFile(tmp, "wb", mtime=0) if gz else open(tmp, "wb")) as out:
                out.write("".join(split[False]).encode("utf-8"))
            os.replace(tmp, path)
            moved += len(split[True])
        return moved, (target if moved else None)

    def supersede(self):
        """Move existing records aside (``--fresh``): nothing computed is deleted."""
        if not self.segments():
            return None
        target = self.root / f"superseded-{time.strftime('%Y%m%dT%H%M%S')}"
        shutil.move(str(self.records_dir), str(target))
        return target

    def write_run(self, info):
        runs = self.root / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        path = runs / f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(info, indent=2, sort_keys=True))
        os.replace(tmp, path)
        return path
