"""Write a synthetic results folder of N records with the real schema, for the readers' benchmark.

    python benchmarks/make_synthetic_store.py .cache/bench-store/synthetic --records 10000000 --mirror DIR

A user's grid over many data sets: registry data sets whose classes all hold
at least 10 records (so that the config validates with 10 folds), eight models
of the package's estimators with a grid each, 5 repeats of 10-fold CV; the
grid sizes are chosen so that data sets x points x repeats x folds reaches
``--records``. The records are the runner's own: a real unit is run once per
model to get a record of each, which is encoded as the store encodes records;
each segment then tiles those columns and sets the key columns (data set,
model, grid point, repeat, fold), the identity of each cell as the config
gives it, the data checksum of each data set, and random metrics and timings.
The folder holds the config (``config.yaml``), one run file per segment and
checksummed Parquet segments, as a run writes them: ``eemrepro tables``,
``check`` and ``run --dry-run`` read it as any store.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eemrepro.datasets import dataset_checksum, get_entry, list_datasets  # noqa: E402
from eemrepro.experiments import get_kind, load_config, run_experiment  # noqa: E402
from eemrepro.experiments._units import identity_sha  # noqa: E402
from eemrepro.store import ResultStore  # noqa: E402
from eemrepro.store._files import MARKER  # noqa: E402
from eemrepro.store._segments import encode  # noqa: E402
from eemrepro.store._store import write_parquet  # noqa: E402

MODELS = {  # name -> (estimator, fixed parameters, grid parameter); each grid is log-spaced values of that one
    "WELMsig": ("WELM", {"activation": "sig"}, "n_hidden"),
    "EEMsig": ("EEM", {"activation": "sig"}, "n_hidden"),
    "WELMrbf": ("WELM", {"activation": "rbf"}, "n_hidden"),
    "EEMrbf": ("EEM", {"activation": "rbf"}, "n_hidden"),
    "LS-SVMrbf": ("LSSVM", {"gamma": 1.0}, "C"),
    "EEKMrbf": ("EEKM", {"gamma": 1.0}, "n_hidden"),
    "SVMrbf": ("SVM", {"gamma": 1.0}, "C"),
    "SVMlin": ("SVM", {"gamma": 0.001}, "C"),
}
FOLDS, REPEATS = 10, 5


def _datasets(mirror, limit=50):
    """Registry data sets whose every class holds at least FOLDS records, binary ones whose files the mirror
    (or the cache) has, up to ``limit``: {id: data checksum}."""
    from eemrepro.datasets import DatasetError

    out = {}
    for d in list_datasets():
        e = get_entry(d)
        counts = (e.expected or {}).get("class_counts") or [(e.expected or {}).get(k) for k in ("n_pos", "n_neg")]
        if e.is_binary and all(isinstance(c, int) and c >= FOLDS for c in counts):
            try:
                out[d] = dataset_checksum(d, mirror=mirror)
            except DatasetError:
                continue
        if len(out) == limit:
            break
    return out


def _grid(param, n):
    if param == "n_hidden":
        return sorted({int(round(v)) for v in np.geomspace(5, 5000, n * 3)})[:n] if n > 1 else [50]
    return [float(f"{v:.6g}") for v in np.geomspace(1e-3, 1e6, n)]


def make_config(records, datasets):
    per_model = max(1, round(records / (len(datasets) * len(MODELS) * REPEATS * FOLDS)))
    models = {name: {"estimator": est, **fixed, "grid": {param: _grid(param, per_model)}}
              for name, (est, fixed, param) in MODELS.items()}
    return {"name": "synthetic", "datasets": list(datasets), "models": models,
            "protocol": {"folds": FOLDS, "repeats": REPEATS, "seed": 0, "scaling": "global",
                         "selection": "best-of-grid", "fit_timeout": 600}}


def template_records(config_raw, mirror):
    """One real record of each model (a unit run on the first data set, one point, one fold)."""
    small = dict(config_raw, datasets=config_raw["datasets"][:1], protocol=dict(config_raw["protocol"], repeats=1))
    small["models"] = {name: dict(spec, grid={k: v[:1] for k, v in spec["grid"].items()})
                       for name, spec in config_raw["models"].items()}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.yaml"
        path.write_text(yaml.safe_dump(small, sort_keys=False))
        run_experiment(load_config(path), out=Path(tmp) / "out", jobs=1, progress=False, mirror=mirror,
                       only_datasets=None)
        records = ResultStore(Path(tmp) / "out").read()
    return {r["model"]: r for r in records if r["fold"] == 0 and r["status"] == "ok"}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--segment", type=int, default=1_000_000, help="records per Parquet segment")
    parser.add_argument("--mirror")
    args = parser.parse_args(argv)
    out = args.out
    if (out / "records").exists():
        sys.exit(f"{out} holds records already; remove it first")
    out.mkdir(parents=True, exist_ok=True)
    shas = _datasets(args.mirror)
    raw = make_config(args.records, shas)
    (out / "config.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    (out / MARKER).write_text("")
    config = load_config(out / "config.yaml")
    kind = get_kind(config.kind)
    templates = template_records(raw, args.mirror)
    scope = kind.scope(config)
    identity = {}
    for u in kind.units(config):
        if (u.dataset, u.model) not in identity:
            ident = kind.identity(config, u)
            identity[(u.dataset, u.model)] = (json.dumps(ident, sort_keys=True), identity_sha(ident))
    # Every record key in order: cell, point, repeat, fold.
    cells = list(scope)
    rng = np.random.default_rng(0)
    store = ResultStore(out)
    (out / "records").mkdir(exist_ok=True)
    total, segment = 0, 0
    key_rows = []
    for (d, m) in cells:
        points, positions = scope[(d, m)]
        key_rows.append((d, m, points, positions))
    # Flatten lazily, a segment at a time.
    buffer = {k: [] for k in ("dataset", "model", "params", "repeat", "fold")}

    def flush():
        nonlocal segment, total
        n = len(buffer["dataset"])
        if not n:
            return
        segment += 1
        run_id = f"s{segment:06d}-20261126T000000.000000-0"
        by_model = {}
        for i, m in enumerate(buffer["model"]):
            by_model.setdefault(m, []).append(i)
        tables = []
        for m, idx in by_model.items():
            t = encode([templates[m]], run_id)
            reps = t.take(np.zeros(len(idx), dtype=np.int64))
            cols = {name: reps.column(name) for name in reps.column_names}
            def take(key, idx=idx):
                return [buffer[key][i] for i in idx]

            ds = take("dataset")
            cols["dataset"] = pa.array(ds, pa.string())
            cols["model"] = pa.array([m] * len(idx), pa.string())
            cols["params"] = pa.array(take("params"), pa.string())
            cols["repeat"] = pa.array(take("repeat"), pa.int64())
            cols["fold"] = pa.array(take("fold"), pa.int64())
            cols["data_sha256"] = pa.array([shas[x] for x in ds], pa.string())
            cols["identity"] = pa.array([identity[(x, m)][0] for x in ds], pa.string())
            cols["identity_sha"] = pa.array([identity[(x, m)][1] for x in ds], pa.string())
            for name in cols:
                if name.startswith("metrics.") and name != "metrics.keys":
                    cols[name] = pa.array(rng.uniform(0.5, 1.0, len(idx)), pa.float64())
            for name in ("fit_seconds", "predict_seconds"):
                if name in cols:
                    cols[name] = pa.array(rng.exponential(0.05, len(idx)), pa.float64())
            tables.append(pa.table(cols).replace_schema_metadata(t.schema.metadata))
        table = pa.concat_tables(tables, promote_options="permissive")
        write_parquet(table, out / "records" / f"{run_id}.parquet")
        store.run_id = run_id
        store.write_run({"config": raw, "config_file": str(out / "config.yaml"), "versions": templates[
            next(iter(templates))].get("versions"), "host": "synthetic", "commit": None})
        total += n
        for v in buffer.values():
            v.clear()
        print(f"segment {segment}: {n} records ({total} in all)", flush=True)

    for d, m, points, positions in key_rows:
        params = [json.dumps(json.loads(p), sort_keys=True) for p in points]
        for p in params:
            for r, f, _ in positions:
                buffer["dataset"].append(d)
                buffer["model"].append(m)
                buffer["params"].append(p)
                buffer["repeat"].append(r)
                buffer["fold"].append(f)
            if len(buffer["dataset"]) >= args.segment:
                flush()
    flush()
    print(f"{out}: {total} records, {len(config.datasets)} data sets x {len(config.models)} models, "
          f"{sum(len(s['grid'][next(iter(s['grid']))]) for s in raw['models'].values())} grid points, "
          f"{REPEATS} repeats x {FOLDS} folds")


if __name__ == "__main__":
    main()
