"""``eemrepro compact DIR``: gzip the closed record segments of a results folder (before committing it)."""

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
