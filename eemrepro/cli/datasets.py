"""``eemrepro datasets``: list, inspect, fetch and verify the registered data sets."""

from pathlib import Path
from typing import Annotated

import typer

from ._common import fail as _fail
from ._common import flag

app = typer.Typer(help="The papers' data sets: list, info, fetch, verify.", no_args_is_help=True)

MirrorOption = Annotated[
    str | None,
    typer.Option("--mirror", help="Folder or URL standing in for the canonical hosts (else $EEMREPRO_MIRROR)."),
]
DataHomeOption = Annotated[
    Path | None,
    typer.Option("--data-home", help="Cache folder (else $EEMREPRO_DATA, else ~/.cache/eemrepro)."),
]


@app.command("list")
def list_cmd(
    group: Annotated[str | None, typer.Option(help="Only this group (uci, keel, ...).")] = None,
    paper: Annotated[str | None, typer.Option(help="Only this paper (eem, melm, esmm, lssvm-ensemble).")] = None,
    data_home: DataHomeOption = None,
):
    """Id, paper name, size, class sizes and cache state of every data set."""
    from tabulate import tabulate

    from ..datasets import get_entry, is_cached, list_datasets

    rows = []
    for name in list_datasets(group=group, paper=paper):
        e = get_entry(name)
        exp = e.expected
        classes = f"{exp.get('n_neg')}/{exp.get('n_pos')}" if e.is_binary else "/".join(map(str, exp["class_counts"]))
        rows.append([name, e.paper_name, e.group, exp.get("n"), exp.get("d"), classes, is_cached(name, data_home)])
    typer.echo(tabulate(rows, headers=["id", "paper name", "group", "n", "d", "neg/pos (classes)", "state"]))


@app.command("info")
def info_cmd(
    name: str,
    mirror: MirrorOption = None,
    data_home: DataHomeOption = None,
    no_load: Annotated[bool, flag("--no-load", help="Registry metadata only; do not fetch or load.")] = False,
):
    """All metadata of one data set, and its loaded sizes next to the paper's."""
    from ..datasets import DatasetError, get_entry, load_dataset

    try:
        e = get_entry(name)
    except DatasetError as exc:
        _fail(exc)
    typer.echo(f"{e.id}: {e.paper_name} (papers: {', '.join(e.papers)}; group {e.group})")
    labels = list(e.positive) if e.is_binary else "multiclass " + str(list(e.classes))
    typer.echo(f"format: {e.format}; positive: {labels}")
    for spec in e.files:
        typer.echo(f"file {spec.name}: sha256 {spec.sha256 or '(none published)'}")
        for url in spec.urls:
            typer.echo(f"  url {url}")
        if spec.archive:
            typer.echo(f"  archive {spec.archive['url']} member {spec.archive['member']}")
        typer.echo(f"  mirror path {spec.mirror_path(e.id)}")
    if e.notes:
        typer.echo(f"notes: {e.notes}")
    if no_load:
        return
    try:
        _, _, meta = load_dataset(name, scaling=None, data_home=data_home, mirror=mirror)
    except DatasetError as exc:
        _fail(exc)
    keys = ["n", "d", "n_neg", "n_pos"] if e.is_binary else ["n", "d", "class_counts"]
    typer.echo("size      loaded    paper")
    for key in keys:
        paper = e.paper.get(key, "-")
        flag = ""
        if key in meta["differences"]:
            why = meta["differences"][key]["why"]
            flag = f"  DIFFERS: {why}" if why else "  DIFFERS (unexplained)"
        typer.echo(f"{key:<9} {str(meta[key]):<9} {str(paper):<9}{flag}")
    for step in meta["steps"]:
        typer.echo(f"step: {step}")
    for f in meta["files"]:
        typer.echo(f"loaded {f['name']} from {f['origin']} (sha256 {f['sha256']})")


@app.command("fetch")
def fetch_cmd(
    names: Annotated[list[str] | None, typer.Argument(help="Data set ids.")] = None,
    all_: Annotated[bool, flag("--all", help="Every data set in the registry.")] = False,
    mirror: MirrorOption = None,
    data_home: DataHomeOption = None,
):
    """Download (or copy from a mirror) and verify data sets into the cache."""
    from ..datasets import DatasetError, fetch_dataset, list_datasets

    if all_ == bool(names):
        _fail("give data set names or --all (not both)")
    failures = 0
    for name in list_datasets() if all_ else names:
        bar = {"obj": None}

        def progress(done, total, bar=bar, name=name):
            if total and total > (8 << 20):
                if bar["obj"] is None:
                    bar["obj"] = typer.progressbar(length=total, label=name)
                    bar["obj"].__enter__()
                bar["obj"].update(done - bar["obj"].pos)

        try:
            for fname, origin, sha in fetch_dataset(name, data_home=data_home, mirror=mirror, progress=progress):
                typer.echo(f"{name}: {fname} ok ({origin}, sha256 {sha[:12]}...)")
        except DatasetError as exc:
            failures += 1
            typer.secho(f"{name}: error: {exc}", fg=typer.colors.RED, err=True)
        finally:
            if bar["obj"] is not None:
                bar["obj"].__exit__(None, None, None)
    if failures:
        raise typer.Exit(code=1)


@app.command("verify")
def verify_cmd(data_home: DataHomeOption = None):
    """Re-check the sha256 of every cached file; a corrupt one is removed."""
    from ..datasets import verify_cache

    report = verify_cache(data_home)
    for dataset_id, name, status in report:
        typer.echo(f"{dataset_id}/{name}: {status}")
    corrupt = sum(status.startswith("corrupt") for *_, status in report)
    typer.echo(f"{len(report)} cached files checked, {corrupt} corrupt")
    if corrupt:
        raise typer.Exit(code=1)
