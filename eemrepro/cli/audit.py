"""``eemrepro audit DIR...``: re-derive a random sample of stored units with today's code and data."""

from pathlib import Path
from typing import Annotated

import typer

from ._common import flag

#: Differing fields printed per unit (the rest are counted).
SHOWN = 10


def audit_cmd(
    dirs: Annotated[list[Path], typer.Argument(help="Results folders (results/<config name>).")],
    sample: Annotated[int | None, typer.Option(help="Units to re-run per folder (default 20).", min=1)] = None,
    fraction: Annotated[float | None, typer.Option(
        help="Re-run this fraction of each folder's stored units instead of --sample.", min=0.0, max=1.0)]
        = None,
    seed: Annotated[int | None, typer.Option(
        help="Seed of the draw (default a fresh one, printed so that the audit can be replayed).", min=0)] = None,
    jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: the config's, else all cores).")]
        = None,
    mirror: Annotated[str | None, typer.Option(help="Data mirror folder or URL (else $EEMREPRO_MIRROR).")] = None,
    data_home: Annotated[Path | None, typer.Option(help="Data cache folder (else $EEMREPRO_DATA).")] = None,
    only_datasets: Annotated[str | None, typer.Option(help="Comma-separated data sets to draw units of.")] = None,
    only_models: Annotated[str | None, typer.Option(help="Comma-separated models to draw units of.")] = None,
    max_seconds: Annotated[float | None, typer.Option(
        help="Per folder, pass over units whose stored timings would take the re-runs past this many seconds, "
             "and start no unit once the re-runs have taken that long.", min=0.0)] = None,
    keep: Annotated[bool, flag("--keep", help="Keep the scratch folder of the re-derived records.")] = False,
    skip_unavailable: Annotated[bool, flag(
        "--skip-unavailable", help="Leave out (and name) the units of data sets whose files cannot be fetched, "
                                   "instead of stopping.")] = False,
    known: Annotated[Path | None, typer.Option(
        help="Known differences (YAML: store, fields, reason; optional models, datasets): a unit differing only "
             "in those fields is reported as known, with its reason, and does not fail the audit.")] = None,
):
    """Re-run a seeded random sample of each folder's stored units and compare every record with the stored one.

    Each unit: equal, float noise (within 1e-9 relative), differs, or made under another identity / on other data.

    Exit status: 0 all equal, float noise or known; 1 a difference or another identity; 2 bad input. Folders are
    only read.
    """
    import secrets

    from ..experiments._audit import AuditError, load_audited, load_known
    from ..experiments._run_folder import ResultsFolder
    from ..store import FolderConfigError
    from ._common import fail, split_names

    try:
        entries = load_known(known) if known is not None else []
    except AuditError as exc:
        fail(exc, code=2)

    if sample is not None and fraction is not None:
        fail("--sample and --fraction exclude each other: give one", code=2)
    if fraction == 0:
        fail("--fraction must be above 0 (a fraction of the stored units, at most 1)", code=2)
    if sample is None and fraction is None:
        sample = 20
    if seed is None:
        seed = secrets.randbelow(2**31)
    try:
        names = {n for d in dirs for n in ResultsFolder(d).names()}
    except FolderConfigError as exc:
        fail(exc, code=2)
    datasets, models = split_names(only_datasets, names), split_names(only_models, names)
    # Every folder is checked before anything runs: a typo in the third one stops the audit at once.
    for d in dirs:
        try:
            load_audited(d, datasets, models)
        except AuditError as exc:
            fail(exc, code=2)
    replay = _replay(dirs, sample, fraction, seed, only_datasets, only_models, max_seconds, known, skip_unavailable)
    typer.echo(f"audit seed {seed} (replay: {replay})")
    ok = True
    for d in dirs:
        ok &= _audit_one(d, sample, fraction, seed, jobs, mirror, data_home, datasets, models, max_seconds, keep,
                         entries, skip_unavailable)
    raise typer.Exit(code=0 if ok else 1)


def _replay(dirs, sample, fraction, seed, only_datasets, only_models, max_seconds, known=None,
            skip_unavailable=False):
    import shlex

    words = ["eemrepro", "audit", *map(str, dirs)]
    words += ["--fraction", f"{fraction:g}"] if fraction is not None else ["--sample", str(sample)]
    words += ["--seed", str(seed)]
    for name, value in (("--only-datasets", only_datasets), ("--only-models", only_models),
                        ("--max-seconds", None if max_seconds is None else f"{max_seconds:g}"),
                        ("--known", None if known is None else str(known))):
        if value is not None:
            words += [name, value]
    if skip_unavailable:
        words.append("--skip-unavailable")
    return " ".join(shlex.quote(w) for w in words)


def _audit_one(folder, sample, fraction, seed, jobs, mirror, data_home, datasets, models, max_seconds, keep,
               known=(), skip_unavailable=False):
    """Audit one folder, printing each unit as it is judged and a summary line; whether all is equal or noise."""
    from ..experiments._audit import DIFFERS, EQUAL, FLOAT_NOISE, KNOWN, NOISE, OTHER, AuditError, audit_store
    from ._common import fail

    cells = _Cells(folder)

    def echo(u):
        # A field the stored records lack (written before the code recorded it) is no stored number: said, not
        # counted.
        added = f" (today's code also records: {', '.join(u.added)})" if u.added else ""
        if u.verdict == EQUAL:
            typer.echo(f"  {u.label}: equal{added}")
        elif u.verdict == NOISE:
            typer.echo(f"  {u.label}: float noise (largest relative difference {u.largest:.1e}, in "
                       f"{u.largest_field}){added}")
        elif u.verdict == OTHER:
            typer.secho(f"  {u.label}: {u.why}", fg=typer.colors.YELLOW)
        elif u.verdict == KNOWN:
            fields = sorted({d[3] for d in u.differing})
            # An integer field (an iteration count) differs exactly: no relative float difference to say.
            by = f" (largest relative difference {u.largest:.1e})" if u.largest > 0 else ""
            typer.secho(f"  {u.label}: differs in {', '.join(fields)}{by}, a known difference: {u.why}",
                        fg=typer.colors.YELLOW)
            _kernels(u)
        else:
            by = f" (largest relative difference {u.largest:.1e}, in {u.largest_field})" \
                if u.largest > FLOAT_NOISE else ""
            typer.secho(f"  {u.label}: differs{by}{added}", fg=typer.colors.RED)
            # The same change in several records (a projection's D_CS, in each of its classifiers' records) is
            # one line, with the first record it was found in.
            groups = {}
            for point, _repeat, fold, name, old, new in u.differing:
                groups.setdefault((name, _show(old), _show(new)), []).append((point, fold))
            for (name, old, new), where in list(groups.items())[:SHOWN]:
                more = f" (and {len(where) - 1} more record{'s' * (len(where) > 2)})" if len(where) > 1 else ""
                typer.echo(f"    {where[0][0]} fold {where[0][1]}: {name} {old} stored, {new} now{more}")
            if len(groups) > SHOWN:
                typer.echo(f"    ... and {len(groups) - SHOWN} more differing value(s)")
            for point, _repeat, fold, why in u.edited:
                typer.echo(f"    {point} fold {fold}: the stored record's {why.removeprefix('its ')} (edited by "
                           "hand: `eemrepro store verify` names its segment)")
            _kernels(u)
            for line in cells.changes(u):
                typer.echo(f"    {line}")

    typer.echo(f"{folder}:")
    try:
        audit = audit_store(folder, sample=sample, fraction=fraction, seed=seed, jobs=jobs, mirror=mirror,
                            data_home=data_home, only_datasets=datasets, only_models=models,
                            max_seconds=max_seconds, keep=keep, echo=echo, known=known,
                            skip_unavailable=skip_unavailable)
    except AuditError as exc:
        fail(exc, code=2)
    for dataset, why in audit.unavailable.items():
        typer.secho(f"  (the drawn units of {dataset} not audited: {why})", fg=typer.colors.YELLOW)
    if audit.over_budget:
        typer.echo(f"  ({audit.over_budget} drawn unit(s) passed over: their stored timings would take the audit "
                   f"past --max-seconds {max_seconds:g})")
    if audit.not_run:
        typer.echo(f"  ({audit.not_run} drawn unit(s) not run: the re-runs had taken --max-seconds {max_seconds:g} "
                   "already)")
    if audit.scratch is not None:
        typer.echo(f"  re-derived records kept in {audit.scratch}")
    typer.echo(f"{folder}: {len(audit.units)} units audited (of {audit.population} stored), "
               f"{audit.count(EQUAL)} equal, {audit.count(NOISE)} float noise, {audit.count(DIFFERS)} differ, "
               f"{audit.count(OTHER)} other identity, {audit.count(KNOWN)} known ({audit.seconds:.1f} s)")
    return audit.ok


def _kernels(u):
    """The line that says a differing unit's stored records were made with other BLAS kernels than this machine's,
    and how to re-derive them with those (OpenBLAS's ``OPENBLAS_CORETYPE``)."""
    from ..experiments._watchdog import kernels_said

    if u.kernels is None:
        return
    theirs, now, core = kernels_said(*u.kernels)
    how = f"; OPENBLAS_CORETYPE={core} re-derives with the stored run's" if core else ""
    typer.echo(f"    made with BLAS kernels {theirs}, re-derived with {now}{how}")


def _show(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


class _Cells:
    """The run table's printed cells of a folder, before and after a unit's re-derived records replace its
    stored ones (the stored records read once, at the first unit that differs)."""

    def __init__(self, folder):
        self.folder = folder
        self.records = None

    def changes(self, u):
        from ..experiments._audit import substitute
        from ..reports._records import Records
        from ..reports._run_table import printed_cells

        if self.records is None:
            self.records, self.prov = Records([Path(self.folder)], require=False).read()
        config = load_config_for_reports(self.folder)
        mine = self.records[(self.records["dataset"] == u.unit.dataset).to_numpy()]
        before = printed_cells(config, mine, self.prov)
        if not before:
            return [f"(no printed cell: the run of kind {config.kind} prints no table of its records)"]
        after = printed_cells(config, substitute(mine, u.new_records), self.prov)
        lines = []
        for key in sorted(set(before) | set(after), key=str):
            (old, old_point), (new, new_point) = before.get(key, ("–", None)), after.get(key, ("–", None))
            if old != new or old_point != new_point:
                title, row, column = key
                what = f"printed {old} -> {new}" if old != new else f"printed {old} (unchanged)"
                where = f"selected point {old_point} -> {new_point}" if old_point != new_point else \
                    f"selected point {old_point} (unchanged)"
                lines.append(f"cell {row} / {column}: {what}; {where}")
        return lines or ["the printed cells and selected points of the run table do not change"]


def load_config_for_reports(folder):
    """The folder's config as the reports read it (estimators named, not imported)."""
    from ..experiments._run_folder import ResultsFolder

    return ResultsFolder(folder).required_config()
