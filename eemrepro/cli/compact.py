"""``eemrepro compact DIR`` (gzip the closed record segments before committing a store) and
``eemrepro forget DIR`` (move one model's records aside so that a resume re-runs it)."""

from pathlib import Path
from typing import Annotated

import typer


def compact_cmd(out: Annotated[Path, typer.Argument(help="Results folder.")]):
    """Gzip every record segment of DIR; reading, resuming and reports are unchanged."""
    from ..experiments import ResultStore

    store = ResultStore(out)
    before = sum(p.stat().st_size for p in store.segments())
    written = store.compact()
    after = sum(p.stat().st_size for p in store.segments())
    typer.echo(f"{out}: compacted {len(written)} segment(s), {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB")


def forget_cmd(
    out: Annotated[Path, typer.Argument(help="Results folder.")],
    models: Annotated[str | None, typer.Option(help="Comma-separated models whose records to move aside.")] = None,
    datasets: Annotated[str | None, typer.Option(help="Comma-separated data sets (default: all).")] = None,
):
    """Move the stored records of some models / data sets aside; `eemrepro run` then runs them again.

    Use it after changing a model so that its stored records describe the code.
    Nothing is deleted: the records go to DIR/superseded-<stamp>/.
    """
    from ..experiments import ResultStore
    from ._common import fail

    if models is None and datasets is None:
        fail(ValueError("name --models and/or --datasets (to start a whole store over, use `eemrepro run --fresh`)"))
    split = (lambda text: None if text is None else [x.strip() for x in text.split(",") if x.strip()])
    stored = ResultStore(out).read()
    for label, chosen, key in (("model", split(models), "model"), ("data set", split(datasets), "dataset")):
        known = sorted({r[key] for r in stored})
        unknown = sorted(set(chosen or ()) - set(known))
        if unknown:
            fail(ValueError(f"{out}: no stored records of {label}(s) {unknown}; stored: {known}"))
    moved, target = ResultStore(out).forget(models=split(models), datasets=split(datasets))
    typer.echo(f"{out}: moved {moved} record(s) to {target}; `eemrepro run` runs them again")
