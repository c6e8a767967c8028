"""``eemrepro store upgrade DIR...`` (older stores to sealed, checksummed Parquet segments),
``eemrepro store verify DIR...`` (every segment and run file checked) and
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
    from ._common import fail, results_folder

    for d in dirs:
        results_folder(d)  # a broken config said as every command says it, before anything is sealed
        try:
            written, before, after = upgrade_store(d)
        except (StoreError, OSError) as exc:
            fail(exc)
        typer.echo(f"{d}: sealed or checksummed {len(written)} segment(s), {before / 1e6:.1f} MB -> "
                   f"{after / 1e6:.1f} MB")


@app.command("verify")
def verify_cmd(dirs: Annotated[list[Path], typer.Argument(help="Results folders.")]):
    """Check every segment, checksum list and run file of each folder (its readings and what it moved aside
    too), and its config as every command reads it; exit 1 naming each damaged one."""
    from ..experiments._run_folder import ResultsFolder
    from ..store import FolderConfigError, StoreError, verify_store
    from ._common import fail

    damaged = 0
    for d in dirs:
        try:
            checked, problems = verify_store(d)
        except (StoreError, OSError) as exc:
            fail(exc, code=2)
        lines = [f"{path}: {why}" for path, why in problems]
        try:
            ResultsFolder(d).config()
        except FolderConfigError as exc:
            lines.append(str(exc))  # (it names the file)
        for line in lines:
            typer.secho(f"FAIL {line}", fg=typer.colors.RED)
        problems = lines
        damaged += len(problems)
        typer.echo(f"{d}: {checked} file(s) checked, {len(problems) or 'no'} problem(s)")
    if damaged:
        raise typer.Exit(code=1)


class ExportFormat(str, Enum):
    csv = "csv"
    parquet = "parquet"


def export_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Results folders.")],
    format: Annotated[ExportFormat, typer.Option("--format", help="csv or parquet.")] = ExportFormat.csv,
    out: Annotated[Path | None, typer.Option(
        help="File to write (default: <first folder's name>-records.<format> in the current folder).")] = None,
    force: Annotated[bool, typer.Option("--force", metavar="", help=(
        "Overwrite the file if it exists (a regular file: never a device, FIFO or folder)."))] = False,
):
    """Write the stored records (one row each, the latest of a retried unit) as CSV or Parquet."""
    # Never into a results folder by default: a committed store would gain a file of every record.
    from ..reports._outputs import OutputPlaceError, check_place, not_its_own, record_written, writing
    from ..store import StoreError, export_results
    from ._common import fail

    target = out or Path(f"{dirs[0].resolve().name}-records.{format.value}")
    try:
        check_place(target, "export", folder=False)
    except OutputPlaceError as exc:
        fail(exc)
    # A file this command wrote, unchanged since (its folder's manifest says so), is its own to overwrite.
    if (target.exists() or target.is_symlink()) and not force:
        why = not_its_own(target, "eemrepro export")
        if why:
            fail(f"{target} exists ({why}): choose another --out, or overwrite it with --force")
    try:
        with writing(target, "export"):
            rows = export_results(dirs, target, fmt=format.value)
            record_written(target, dirs, "eemrepro export")
    except (StoreError, OutputPlaceError, OSError) as exc:
        fail(exc)
    typer.echo(f"wrote {rows} records to {target}")
