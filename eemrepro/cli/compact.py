"""``eemrepro compact DIR`` (seal the closed record segments into Parquet before committing a store) and
``eemrepro forget DIR`` (move one model's records aside so that a resume re-runs it)."""

from pathlib import Path
from typing import Annotated

import typer


def compact_cmd(out: Annotated[Path, typer.Argument(help="Results folder.")]):
    """Seal every closed write-ahead segment of DIR into Parquet; reading, resuming and reports are unchanged."""
    from ..store import StoreError, upgrade_store
    from ._common import fail, results_folder

    results_folder(out)
    try:
        written, before, after = upgrade_store(out)
    except (StoreError, OSError) as exc:
        fail(exc)
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
    from ..store import ResultStore
    from ._common import fail, results_folder, split_names

    if models is None and datasets is None:
        fail(ValueError("name --models and/or --datasets (to start a whole store over, use `eemrepro run --fresh`)"))
    names = results_folder(out).names()
    try:
        moved, target = ResultStore(out).forget(models=split_names(models, names),
                                                datasets=split_names(datasets, names))
    except ValueError as exc:
        fail(exc)
    typer.echo(f"{out}: moved {moved} record(s) to {target}; `eemrepro run` runs them again")
