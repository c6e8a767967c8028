"""``eemrepro status DIR``: progress of a results folder."""

from pathlib import Path
from typing import Annotated

import typer


def status_cmd(out: Annotated[Path, typer.Argument(help="Results folder (results/<config name>).")]):
    """Done/total units per data set and model, and every failure."""
    from tabulate import tabulate

    from ..experiments import enumerate_units, load_config
    from ..store import ResultStore, StoreError
    from ._common import fail

    if not (out / "config.yaml").is_file():
        fail(f"{out} has no config.yaml: not a results folder written by `eemrepro run`")
    from ..experiments import ConfigError

    try:
        # A user's estimator is imported where it can be: its code and parameters are part of a cell's identity.
        try:
            config = load_config(out / "config.yaml")
        except ConfigError:
            config = load_config(out / "config.yaml", import_estimators=False)
    except ConfigError as exc:
        fail(exc)
    try:
        stored = ResultStore(out).frame(["status", "identity_sha", "error_message"])
    except StoreError as exc:
        fail(exc)
    counts = stored.groupby(["dataset", "model"])["status"].value_counts().to_dict() if len(stored) else {}
    from ..experiments import get_kind
    from ..experiments._identity import cell_identity
    from ..experiments._units import frame_keys, identity_sha

    kind = get_kind(config.kind)
    keys = frame_keys(stored).tolist() if len(stored) else []
    done_keys = set(zip(keys, stored["identity_sha"].tolist(), strict=True)) if keys else set()
    rows, failures, codes = [], [], {}
    for (dataset, model), units in _group(enumerate_units(config)).items():
        shas = {}  # outer and inner units have their own identity
        for u in units:
            if (u.inner is None) not in shas:
                shas[u.inner is None] = identity_sha(cell_identity(kind, config, u, codes))
        done = sum(all((k, shas[u.inner is None]) in done_keys for k in u.keys()) for u in units)
        c = {s: counts.get((dataset, model, s), 0) for s in ("ok", "timed-out", "failed", "skipped-after-timeout")}
        rows.append([dataset, model, f"{done}/{len(units)}", c["ok"], c["timed-out"], c["failed"],
                     c["skipped-after-timeout"]])
    typer.echo(tabulate(rows, headers=["dataset", "model", "units done", "ok", "timed out", "failed", "skipped"]))
    for r in stored[stored["status"] == "failed"].itertuples(index=False) if len(stored) else ():
        where = f"{r.dataset} {r.model} {r.point} repeat {r.repeat} fold {r.fold}"
        failures.append(f"{where}: {r.error_message}")
    if failures:
        typer.echo(f"\n{len(failures)} failed fits:")
        for line in failures[:50]:
            typer.echo("  " + line)


def _group(units):
    out = {}
    for u in units:
        out.setdefault((u.dataset, u.model), []).append(u)
    return out
