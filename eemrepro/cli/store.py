"""``eemrepro store upgrade DIR...`` (older stores to sealed Parquet segments) and
``eemrepro export DIR`` (the records as one CSV or Parquet file)."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(help="Maintain results folders.", no_args_is_help=True)


@app.command("upgrade")
def upgrade_cmd(dirs: Annotated[list[Path], typer.Argument(help="Results folders.")]):
    """Seal every JSON-lines segment of each folder into Parquet (lossless; reports read both)."""
    from ..store import StoreError, upgrade_store
    from ._common import fail

    for d in dirs:
        try:
            written, before, after = upgrade_store(d)
        except (StoreError, OSError) as exc:
            fail(exc)
        typer.echo(f"{d}: sealed {len(written)} segment(s), {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB")


class ExportFormat(str, Enum):
    csv = "csv"
    parquet = "parquet"


def export_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Results folders.")],
    format: Annotated[ExportFormat, typer.Option("--format", help="csv or parquet.")] = ExportFormat.csv,
    out: Annotated[Path | None, typer.Option(help="File to write (default: <first folder>/records.<format>).")]
        = None,
):
    """Write the stored records (one row each, the latest of a retried unit) as CSV or Parquet."""
    from ..store import StoreError, export_results
    from ._common import fail

    target = out or dirs[0] / f"records.{format.value}"
    try:
        rows = export_results(dirs, target, fmt=format.value)
    except (StoreError, OSError) as exc:
        fail(exc)
    typer.echo(f"wrote {rows} records to {target}")
