"""``eemrepro status DIR``: progress of a results folder."""

from pathlib import Path
from typing import Annotated

import typer


def status_cmd(out: Annotated[Path, typer.Argument(help="Results folder (results/<config name>).")]):
    """Done/total units per data set and model, and every failure."""
    from collections import Counter

    from tabulate import tabulate

    from ..experiments import ResultStore, enumerate_units, load_config
    from ._common import fail

    if not (out / "config.yaml").is_file():
        fail(f"{out} has no config.yaml: not a results folder written by `eemrepro run`")
    from ..experiments import ConfigError

    try:
        config = load_config(out / "config.yaml")
    except ConfigError as exc:
        fail(exc)
    records = ResultStore(out).read()
    keys = {}
    for r in records:
        keys.setdefault((r["dataset"], r["model"]), Counter())[r["status"]] += 1
    from ..experiments import get_kind
    from ..experiments._units import identity_sha, stored_key

    kind = get_kind(config.kind)
    done_keys = {(stored_key(r), r["identity_sha"]) for r in records}
    rows, failures = [], []
    for (dataset, model), units in _group(enumerate_units(config)).items():
        done = sum(all((k, identity_sha(kind.identity(config, u))) in done_keys for k in u.keys()) for u in units)
        c = keys.get((dataset, model), Counter())
        rows.append([dataset, model, f"{done}/{len(units)}", c["ok"], c["timed-out"], c["failed"],
                     c["skipped-after-timeout"]])
    typer.echo(tabulate(rows, headers=["dataset", "model", "units done", "ok", "timed out", "failed", "skipped"]))
    for r in records:
        if r["status"] == "failed":
            where = f"{r['dataset']} {r['model']} {r['params']} repeat {r['repeat']} fold {r['fold']}"
            failures.append(f"{where}: {r['error']}")
    if failures:
        typer.echo(f"\n{len(failures)} failed fits:")
        for line in failures[:50]:
            typer.echo("  " + line)


def _group(units):
    out = {}
    for u in units:
        out.setdefault((u.dataset, u.model), []).append(u)
    return out
