"""``eemrepro status DIR``: progress of a results folder, as the runner's own plan sees it."""

from pathlib import Path
from typing import Annotated

import typer

from ._common import flag

_STATUSES = ("ok", "timed-out", "failed", "skipped-after-timeout")


def status_cmd(
    out: Annotated[Path, typer.Argument(help="Results folder (results/<config name>).")],
    retry_failed: Annotated[bool, flag(
        "--retry-failed", help="Count units with failed fits as not done (as `run --retry-failed` would).")] = False,
    mirror: Annotated[str | None, typer.Option(help="Data mirror folder or URL (else $EEMREPRO_MIRROR).")] = None,
    data_home: Annotated[Path | None, typer.Option(help="Data cache folder (else $EEMREPRO_DATA).")] = None,
    config_file: Annotated[Path | None, typer.Option(
        "--config", help="Plan the folder as this config (edited since its last run) would run it.")] = None,
):
    """Done/total units per data set and model, and every failure.

    A unit is done when `eemrepro run` of the folder's config (or of --config) would skip it: every record
    stored, made with the data as it is now, under the cell's identity now (settings, a user's code and data
    definition). The data are checksummed as a run does (a data set not cached yet is fetched). Where that run
    would refuse (cells stored under another setting, fewer repeats than the folder's, a baseline of another
    protocol, another live process writing the folder, a user's module or file it cannot read), status says
    why in the run's words and exits with status 1.
    """
    from ..experiments import ConfigError, load_config
    from ..experiments._plan import PLAN_COLUMNS, RunOptions, check_data, plan_run
    from ..experiments._run_folder import planned_config, refuse_another_configs_store
    from ..store import ResultStore, StoreError
    from ._common import fail, results_folder

    results_folder(out)
    try:
        config, problem = planned_config(out) if config_file is None else (load_config(config_file), None)
        refuse_another_configs_store(out, config)  # as the run of --config would refuse it
    except (ConfigError, ValueError) as exc:
        fail(exc)
    store = ResultStore(out)
    try:
        stored = store.frame([*PLAN_COLUMNS, "converged"])
    except StoreError as exc:
        fail(exc)
    counts = _counts(stored)
    if problem is not None:  # no plan can be made: what is stored, and why a run would stop
        _table(_cells(config, {}, config.datasets), counts)
        _failures(stored)
        # (the stored records are read as the reports read them; the run stops there, so status exits as for
        # its other refusals)
        typer.secho(f"\nunits done: not known ({problem}); a run of this folder stops there", fg=typer.colors.RED,
                    err=True)
        raise typer.Exit(code=1)
    try:  # what a run would refuse before planning (fewer repeats than the folder's, a baseline's protocol)
        _, stored_config, options = RunOptions(out=out, retry_failed=retry_failed, skip_unavailable=True,
                                               mirror=mirror, data_home=None if data_home is None else
                                               str(data_home)).resolve(config)
        data = check_data(config, options)
    except ValueError as exc:
        fail(f"a run would refuse: {exc}")
    plan = plan_run(config, store, options, data, stored=stored, stored_config=stored_config)
    _table(_cells(config, plan.by_cell(), plan.data.unavailable), counts)
    _explain(plan)
    _failures(stored)
    refusal = _locked(store) or plan.refusal()  # (the run meets another run's lock before its plan)
    if refusal:  # the run's own words, and its exit status
        typer.secho(f"\na run would refuse: {refusal}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=1)


def _locked(store):
    """The words a run would be refused in while another live process (a run in progress) writes the folder,
    or None."""
    from ..store import StoreLockedError

    try:
        store.check_unlocked()
    except StoreLockedError as exc:
        return str(exc)
    return None


def _cells(config, planned, unplanned):
    """{(data set, model): (units done or None where unknown, units)}: the plan's, then the units of the data
    sets ``unplanned`` (unavailable, or no plan at all) counted from the config alone."""
    from dataclasses import replace

    from ..experiments import get_kind

    cells = dict(planned)
    for d in unplanned:
        for u in get_kind(config.kind).units(replace(config, datasets=(d,))):
            cells[(u.dataset, u.model)] = (None, cells.get((u.dataset, u.model), (None, 0))[1] + 1)
    return cells


def _counts(stored):
    """{(data set, model, status): records} of a store frame, and {(data set, model, "not converged"): records}
    of its fits whose solver stopped short of convergence (``converged`` False)."""
    if not len(stored):
        return {}
    cells = stored.groupby(["dataset", "model"], observed=True)
    counts = cells["status"].value_counts().to_dict()
    if "converged" in stored:
        unconverged = (stored["converged"] == False).to_numpy(dtype=bool, na_value=False)  # noqa: E712 (bools, NA)
        counts.update({(d, m, _UNCONVERGED): int(n) for (d, m), n in
                       stored.assign(_n=unconverged).groupby(["dataset", "model"], observed=True)["_n"].sum().items()})
    return counts


#: The status table's last column: fits whose solver stopped short of convergence (the tables' ``‡k``).
_UNCONVERGED = "not converged"


def _table(cells, counts):
    from tabulate import tabulate

    rows = []
    for (dataset, model), (done, total) in cells.items():
        c = [counts.get((dataset, model, s), 0) for s in (*_STATUSES, _UNCONVERGED)]
        rows.append([dataset, model, f"{'?' if done is None else done}/{total}", *c])
    typer.echo(tabulate(rows, headers=["dataset", "model", "units done", "ok", "timed out", "failed", "skipped",
                                       _UNCONVERGED]))


def _explain(plan):
    """Why units are not done, as the run would say it."""
    pending = len(plan.pending)
    for name, why in plan.data.unavailable.items():
        typer.secho(f"data set {name} unavailable, its units not counted: {why}", fg=typer.colors.YELLOW)
    for change in plan.data_changes:
        typer.echo(f"{change.said()}: its {change.units} unit(s) not done; a run moves its {change.records} old "
                   f"record(s) to {plan.options.out}/superseded-<stamp>/ and runs them again")
    if plan.changed:
        typer.echo(f"{len(plan.changed)} cell(s) stored under another setting than the config's now (not done; "
                   "`eemrepro run --rerun-changed` reruns them): " +
                   ", ".join(f"{m} on {d} ({', '.join(diff)})" for d, m, diff in plan.changed[:5]))
    if plan.left_out:
        from ..experiments._units import describe_left_out

        typer.echo(f"kept but not used (the config no longer names them): {describe_left_out(plan.left_out)}")
    typer.echo(f"{len(plan.units) - pending} of {len(plan.units)} units done, {pending} to run"
               + (" (failed fits counted as not done)" if plan.options.retry_failed else ""))


def _failures(stored):
    if not len(stored):
        return
    failures = [f"{r.dataset} {r.model} {r.point} repeat {r.repeat} fold {r.fold}: {r.error_message}"
                for r in stored[stored["status"] == "failed"].itertuples(index=False)]
    if failures:
        typer.echo(f"\n{len(failures)} failed fits:")
        for line in failures[:50]:
            typer.echo("  " + line)
