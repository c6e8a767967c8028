"""``eemrepro tables``, ``eemrepro check`` and ``eemrepro figures``: reports from stored results."""

from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from ._common import flag

ResultsArg = Annotated[list[Path], typer.Argument(help="Results folders (results/<config name>).")]


class Format(str, Enum):
    md = "md"
    csv = "csv"
    latex = "latex"


class Selection(str, Enum):
    best = "best-of-grid"
    nested = "nested"


class Layout(str, Enum):
    run = "run"
    full = "full"


def _default_out_of(path):
    """Where ``eemrepro run PATH`` writes without ``--out``: results/<its ``name:``> (read alone: the hint must
    not fail on the rest of the file), or a placeholder when it has none."""
    from types import SimpleNamespace

    from .._yaml import YAMLDocumentError, load_yaml_file
    from ..experiments._run_folder import default_out

    try:
        raw = load_yaml_file(path)[0]
    except (YAMLDocumentError, OSError):
        raw = None
    name = raw.get("name") if isinstance(raw, dict) else None
    return default_out(SimpleNamespace(name=name)) if isinstance(name, str) and name else "results/<its name>"


def _check_folders(results):
    """Each RESULTS argument must be a folder: a config file given by mistake is named, with the folder its run
    writes (``eemrepro tables configs/quick.yaml`` means ``results/quick``)."""
    from ._common import existing_store, fail

    for r in results:
        if r.is_file():
            hint = f" (`eemrepro run {r}` writes its results to {_default_out_of(r)})" \
                if r.suffix in (".yaml", ".yml") else ""
            fail(f"{r} is a file, not a results folder{hint}")
        if not r.is_dir():
            existing_store(r)  # names it (and a close name beside it); nothing is created for a typo


def _default_out(results, out, what):
    """``--out`` as given, else ``RESULTS/<what>`` beside the one results folder (several need --out); refused
    inside a store's own files or as a symbolic link (``_outputs.check_place``)."""
    from ..reports._outputs import OutputPlaceError, check_place
    from ._common import fail

    _check_folders(results)
    if out is None and len(results) != 1:
        fail(f"name the folder for the {what} of several results folders with --out "
             f"(`make {what}` builds the papers' {what})")
    out = out if out is not None else results[0] / what
    try:
        check_place(out, what)
    except OutputPlaceError as exc:
        fail(exc)
    return out


def _warn(line):
    """A line the reader must not miss (stores of different protocols combined), on stderr: the tables and the
    report say it in their provenance too."""
    typer.secho(line, fg=typer.colors.YELLOW, err=True)


def tables_cmd(
    results: ResultsArg,
    format: Annotated[list[Format] | None, typer.Option(
        "--format", help="md, csv, latex (repeatable). Default: all three.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Folder for the table files (default: RESULTS/tables beside the one results folder).")] = None,
    selection: Annotated[Selection, typer.Option(help="Grid-point selection.")] = Selection.best,
    layout: Annotated[Layout, typer.Option(
        help="run: the data sets and methods that were run; full: the paper's whole layout.")] = Layout.run,
    table: Annotated[list[str] | None, typer.Option(
        help="Only these tables (ids such as eem_table4, or benchmark; repeatable). Default: every one the "
             "results hold, and (--layout run) the benchmark of every data set and model.")] = None,
    force: Annotated[bool, flag(
        "--force", help="Overwrite table files in --out that were built from other results.")] = False,
):
    """Rebuild the papers' tables from stored results, next to the published numbers."""
    from ..reports import build_tables
    from ..reports._build import FORMATS
    from ._common import fail

    from ..reports._outputs import writing

    formats = [f.value for f in format] if format else list(FORMATS)
    out = _default_out(results, out, "tables")
    try:
        with writing(out, "tables"):
            written = build_tables(results, out, formats=formats, selection=selection.value, layout=layout.value,
                                   tables=table or None, force=force, warn=_warn)
    except (FileNotFoundError, ValueError) as exc:
        fail(exc)
    for path in written:
        typer.echo(f"wrote {path}")


def check_cmd(
    results: ResultsArg,
    tolerance: Annotated[str | None, typer.Option(
        help="Tolerance YAML file, or inline 'gmean=3,spearman=0.2'. Default: each table's rule, and the pins "
             "committed beside the baselines the results name, where those are a checkout's committed stores.")] \
        = None,
    report_only: Annotated[bool, flag("--report-only", help="Always exit 0 (measure, do not fail).")] = False,
    verbose: Annotated[bool, flag("--verbose", help="Also list passing and skipped cells.")] = False,
    reference: Annotated[list[Path] | None, typer.Option(
        help="Compare with these stored results instead of the published tables (regression check).")] = None,
    pin: Annotated[Path | None, typer.Option(
        help="Write a tolerance file pinning every current difference (a failing cell at its delta plus a "
             "margin, a missing one skipped), keeping the reasons of cells already pinned in it; exit 0.")] = None,
    pin_reason: Annotated[str, typer.Option(help="Reason recorded for newly pinned cells.")] =
        "known difference, see REPRODUCTION.md",
    claims: Annotated[Path | None, typer.Option(
        help="Verdicts of the papers' claims to hold (claim id: verdict); exit 1 when one changed.")] = None,
    pin_claims: Annotated[Path | None, typer.Option(
        help="Write the claims' current verdicts to this file (for --claims).")] = None,
):
    """Compare reproduced cells with the published ones; exit 1 when a cell drifts past the tolerance."""
    from ..reports import check, derived_readings, reading_stores, summary_line

    _check_folders(results)
    _check_places(pin, pin_claims)  # before the work: where the pins go is known now
    tol, records, ref_records, unfinished, built = _checked(results, tolerance, reference)

    def cells_under(rule):
        return check(records, rule, reference=ref_records, unfinished=unfinished, built=built)

    if pin is not None:
        _write_pins(pin, pin_reason, tol, cells_under)
        return
    cells = cells_under(tol)
    if not cells:
        _not_judged(results, reference, report_only)
    for cell in cells:
        if cell.outcome in ("fail", "missing"):
            typer.echo(cell.line())
        elif verbose:
            typer.echo(f"{cell.outcome.upper()} {cell.table} {cell.dataset} {cell.method}"
                       + (f" ({cell.reason})" if cell.reason else ""))
    changed = _claims(records, unfinished, claims, pin_claims, built) if reference is None else []
    typer.echo(summary_line(cells))
    others = [n for _, n, _ in reading_stores(results)] + [n for _, n in derived_readings(results)]
    if others:
        typer.echo(f"judged: the primary reading; not judged: the readings {', '.join(others)} "
                   "(eemrepro tables counts them in <table>_readings.md)")
    if not report_only and (changed or any(c.outcome in ("fail", "missing") for c in cells)):
        raise typer.Exit(code=1)


def _not_judged(results, reference, report_only):
    """No cell to judge (a store no paper's table holds, or no cell shared with ``--reference``): said in one line,
    and not a pass: exit 1 (0 with ``--report-only``)."""
    folders = ", ".join(map(str, results))
    if reference:
        typer.echo(f"not judged: {folders} and {', '.join(map(str, reference))} share no cell to compare")
    else:
        typer.echo(f"not judged: no paper's table holds a value of {folders} (none has their data sets, or none of "
                   "their fits there finished): nothing published to compare with (`eemrepro tables` writes their "
                   "benchmark)")
    raise typer.Exit(code=0 if report_only else 1)


def _check_places(pin, pin_claims):
    """A one-line error (exit 2) where ``--pin`` or ``--pin-claims`` cannot be written."""
    from ..reports._outputs import OutputPlaceError, check_place
    from ._common import fail

    try:
        for path, what, option in ((pin, "pins", "--pin"), (pin_claims, "claims' verdicts", "--pin-claims")):
            if path is not None:
                check_place(path, what, folder=False, option=option)
    except OutputPlaceError as exc:
        fail(exc, code=2)


def _checked(results, tolerance, reference):
    """(tolerance, records, reference records, unfinished cells, built tables) that ``check`` judges: with a
    ``reference``, the records of both; else every table built once (records None). The tolerance is the one
    given, else the pins committed beside baselines that are a checkout's committed stores."""
    from ..reports import Records, ToleranceError, load_tolerance
    from ..reports._build import protocol_warnings
    from ..reports._check import baseline_pins, build_checked
    from ._common import fail

    try:
        tol = load_tolerance(tolerance)
        if reference:
            records, prov = Records(results).read()
            ref_records = Records(reference).read()[0]
            unfinished, built = {tuple(c) for c in prov["unfinished"]}, None
        else:
            # Every table built once, a group of data sets at a time: the check (with or without pins) and the
            # claims judge the same tables.
            built, read = build_checked(results)
            records, ref_records, unfinished = None, None, read.unfinished
            prov = read.provenance
        for line in protocol_warnings(prov):
            _warn(line)
        # Baselines that are a checkout's committed stores are judged as the checkout judges them (its pins).
        pins = baseline_pins(prov) if tolerance is None and not reference else None
        if pins is not None:
            tol = load_tolerance(pins)
            typer.echo(f"judging the baselines' cells against {pins} (the committed stores' known differences; "
                       "--tolerance FILE to choose another)", err=True)
    except (ToleranceError, ValueError, FileNotFoundError) as exc:
        fail(exc, code=2)
    return tol, records, ref_records, unfinished, built


def _write_pins(pin, reason, tol, cells_under):
    """``check --pin``: every current difference pinned in ``pin`` (the reasons already written there kept), and
    the check's summary under those pins. ``cells_under(tolerance)``: the checked cells."""
    import dataclasses

    import yaml

    from .._yaml import YAMLDocumentError, load_yaml_file
    from ..reports import load_tolerance, pin_differences, summary_line
    from ._common import fail

    try:
        previous = load_yaml_file(pin)[0] if pin.is_file() else None
    except YAMLDocumentError as exc:
        fail(exc, code=2)
    # Pins come from the table rules alone: a --tolerance that is itself a pin
    # file would otherwise pass every cell it pins, and regenerating would drop them.
    unpinned = dataclasses.replace(tol, cells=[])
    pins = pin_differences(cells_under(unpinned), unpinned, reason=reason, previous=previous)
    header = ("# Known differences pinned by `eemrepro check --pin`; regenerate after a new run\n"
              "# (reasons already written here are kept).\n")
    _write(pin, header + yaml.safe_dump(pins, sort_keys=False, width=120), "pins", "--pin")
    typer.echo(f"pinned {len(pins['cells'])} cells in {pin}")
    typer.echo(summary_line(cells_under(load_tolerance(pin))))


def _write(path, text, what, option):
    """A file ``check`` writes (``--pin``, ``--pin-claims``): a one-line error (exit 2) where it cannot go."""
    from ..reports._outputs import OutputPlaceError, write_file
    from ._common import fail

    try:
        write_file(path, text, what, option)
    except OutputPlaceError as exc:
        fail(exc, code=2)


def _claims(records, unfinished, pinned_file, pin_file, built=None):
    """Print every claim's verdict; write them to ``pin_file``; return the claims whose verdict differs from
    ``pinned_file``'s."""
    import yaml

    from .._yaml import YAMLDocumentError, load_yaml_file
    from ..reports import evaluate_claims
    from ._common import fail

    results = evaluate_claims(records, unfinished=unfinished, built=built)
    for r in results:
        typer.echo(r.line())
    if pin_file is not None:
        _write(pin_file, "# The papers' claims' verdicts, held by `eemrepro check --claims`; regenerate with "
                         "--pin-claims after a new run.\n" + yaml.safe_dump({r.claim.id: r.verdict for r in results},
                                                                           sort_keys=False),
               "claims' verdicts", "--pin-claims")
        typer.echo(f"pinned {len(results)} claim verdicts in {pin_file}")
    if pinned_file is None:
        return []
    try:
        pinned = load_yaml_file(pinned_file)[0] or {}
    except YAMLDocumentError as exc:
        fail(exc, code=2)
    changed = [r for r in results if r.claim.id in pinned and pinned[r.claim.id] != r.verdict]
    for r in changed:
        typer.echo(f"CHANGED claim {r.claim.id}: {pinned[r.claim.id]} in {pinned_file}, {r.verdict} now")
    return changed


def figures_cmd(
    results: Annotated[list[Path] | None, typer.Argument(
        help="Results folders (results/<config name>); none with --dataset.")] = None,
    out: Annotated[Path | None, typer.Option(
        help="Folder for the figures (default: RESULTS/figures beside the one results folder; "
             "results/figures for --figure projection).")] = None,
    figure: Annotated[list[str] | None, typer.Option(
        help="Only these figures (names the papers register; `eemrepro papers` lists them), or 'projection' "
             "with --dataset. Default: each one the results can draw.")] = None,
    dataset: Annotated[str | None, typer.Option(
        help="With --figure projection: draw this registry data set's MELM projection (fitted and stored in "
             "results/projection-<dataset> first, resumably).")] = None,
    mirror: Annotated[str | None, typer.Option(help="Data mirror folder or URL (else $EEMREPRO_MIRROR).")] = None,
    data_home: Annotated[Path | None, typer.Option(help="Data cache folder (else $EEMREPRO_DATA).")] = None,
    force: Annotated[bool, flag(
        "--force", help="Overwrite figure files in --out that were not drawn from these results.")] = False,
):
    """The papers' figures and reproduced-vs-published scatter plots (PNG and SVG)."""
    from ..reports import build_figures
    from ..reports._outputs import writing
    from ._common import fail

    _check_folders(results or [])
    projection = dataset is not None or figure == ["projection"]
    if projection and (figure not in (None, ["projection"]) or dataset is None or results):
        fail("--dataset goes with --figure projection alone (and no results folders)")
    if not projection and not results:
        fail("name the results folders to draw from (or --figure projection --dataset NAME)")
    out = (out or Path("results/figures")) if projection else _default_out(results, out, "figures")
    try:
        with writing(out, "figures"):
            if projection:
                written = _projection_figure(dataset, out, mirror, data_home, force)
            else:
                written = build_figures(results, out, figures=figure, force=force)
    except (RuntimeError, ValueError, FileNotFoundError) as exc:
        fail(exc)
    for path in written:
        typer.echo(f"wrote {path}")


def _projection_figure(dataset, out, mirror, data_home, force=False):
    """config -> runner -> store -> figure for one data set's MELM projection."""
    from ..datasets import DatasetError
    from ..experiments import parse_config, run_experiment
    from ..experiments._run_folder import default_out
    from ..reports import Records
    from ..reports._figures import embedding_figure

    from ..reports._outputs import check_place, publish_built

    check_place(out, "figures")
    name = f"projection-{dataset}"
    config = parse_config({"name": name, "kind": "embedding", "datasets": [dataset],
                           "models": {"MELM": {"estimator": "MELM"}}, "protocol": {"seed": 0}},
                          source=f"--figure projection --dataset {dataset}")
    store = default_out(config)
    try:
        run_experiment(config, out=store, jobs=1, progress=False, mirror=mirror, data_home=data_home)
    except DatasetError as exc:
        raise ValueError(str(exc)) from exc
    records = Records([store], columns=("kind", "status", "error_message", "embedding", "labels")).read()[0]
    failed = records[records["status"] != "ok"]
    if len(failed):
        raise ValueError(f"the MELM fit on {dataset} {failed['status'].iloc[0]}: {failed['error_message'].iloc[0]}")
    return publish_built(lambda staging: embedding_figure(records, staging / f"projection_{dataset}", dataset,
                                                          title=f"{dataset}: MELM projection (records in {store})"),
                         out, "figures-manifest.json", [str(store)], force, "eemrepro figures")


def report_cmd(
    results: ResultsArg,
    out: Annotated[Path | None, typer.Option(
        help="Folder for the site (default: RESULTS/report beside the one results folder).")] = None,
    tolerance: Annotated[Path | None, typer.Option(
        help="Tolerance (pin) file: its cells show as pinned, with their reasons. Default: the pins committed "
             "beside the baselines the results name, where those are a checkout's committed stores.")] = None,
    selection: Annotated[Selection, typer.Option(help="Grid-point selection.")] = Selection.best,
    no_figures: Annotated[bool, flag("--no-figures", help="Leave the papers' figures out (faster).")] = False,
    force: Annotated[bool, flag("--force", help="Overwrite pages in --out that eemrepro report did not write.")]
        = False,
    figures_from: Annotated[list[Path] | None, typer.Option(
        "--figures-from", help="Also show the figures of this results folder, read alone (repeatable): stores "
                               "that hold what figures draw and no table, such as results/melm_restarts.")] = None,
):
    """The reproduction as a static site (one page per paper; opens from file://, no network)."""
    from ..reports import ToleranceError, build_report
    from ..reports._outputs import writing
    from ._common import fail

    out = _default_out(results, out, "report")
    _check_folders(figures_from or [])
    try:
        with writing(out, "report"):
            pages = build_report(results, out, tolerance=tolerance, selection=selection.value,
                                 figures=not no_figures, force=force, figure_stores=figures_from or (), warn=_warn)
    except (FileNotFoundError, ToleranceError, ValueError) as exc:
        fail(exc)
    for path in pages:
        typer.echo(f"wrote {path}")
    typer.echo(f"open {pages[0].resolve().as_uri()}")
