from typing import Annotated

import typer

from .. import __version__

app = typer.Typer(
    name="eemrepro",
    help=(
        "Reproduce the Extreme Entropy Machines experiments (Czarnecki & Tabor 2017) and related "
        "entropy-based classifier papers, and benchmark classifiers under the same protocols."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # main() turns an unexpected error into one line (--debug: the traceback)
)

#: Set by --debug: an unexpected error shows its traceback instead of one line.
DEBUG = False


def _print_version(value: bool):
    if value:
        typer.echo(f"eemrepro {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool | None,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.",
                     metavar=""),
    ] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show the traceback of an unexpected error.",
                                        metavar="")] = False,
):
    """Reproduce the EEM paper's experiments."""
    global DEBUG
    DEBUG = debug


from .audit import audit_cmd  # noqa: E402
from .compact import compact_cmd, forget_cmd  # noqa: E402
from .datasets import app as _datasets_app  # noqa: E402
from .reports import check_cmd, figures_cmd, report_cmd, tables_cmd  # noqa: E402
from .run import run_cmd  # noqa: E402
from .status import status_cmd  # noqa: E402
from .store import app as _store_app  # noqa: E402
from .store import export_cmd  # noqa: E402

app.add_typer(_datasets_app, name="datasets")
app.command("run")(run_cmd)
app.command("status")(status_cmd)
app.command("audit")(audit_cmd)
app.command("tables")(tables_cmd)
app.command("check")(check_cmd)
app.command("figures")(figures_cmd)
app.command("report")(report_cmd)
app.command("compact")(compact_cmd)
app.command("forget")(forget_cmd)
app.add_typer(_store_app, name="store")
app.command("export")(export_cmd)


@app.command("papers")
def _papers():
    """List the registered papers: their tables, figures, configs and model sets (for `paper_models:`)."""
    from ..papers import registered_papers

    for p in registered_papers():
        typer.echo(f"{p.id}: {p.title}")
        for t in p.tables:
            checked = f"checked ({t.tolerance})" if t.tolerance else "not checked"
            typer.echo(f"  table {t.id} -> {t.stem} [{t.kind}, {t.builder}, {checked}]")
        for f in p.figures:
            typer.echo(f"  figure {f.name} -> {f.stem}")
        for c in p.configs:
            typer.echo(f"  config {c}")
        for m in p.model_sets:
            typer.echo(f"  paper_models: {m.name} -> the models of {m.config}: {m.description}")


@app.command("models")
def _models():
    """List the classifiers and their parameters."""
    from .models import list_models

    list_models()
