"""``eemrepro run CONFIG``: run or resume an experiment."""

import os
import signal
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from ._common import flag


class Backend(str, Enum):
    loky = "loky"
    dask = "dask"


def _interrupt(signum, frame):
    """The first Ctrl-C (or SIGTERM) stops the run cleanly; a second one exits at once."""
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, lambda *_: os._exit(130))
    raise KeyboardInterrupt


def _io_error(exc, results):
    """One line for a failed read or write: where, why, and what to do (``results``: the run's folder, if
    known yet)."""
    import errno

    where = Path(exc.filename) if exc.filename else results
    inside = bool(where and results) and where.resolve().is_relative_to(Path(results).resolve())
    fix = "choose another --out" if inside else "choose another --data-home (or $EEMREPRO_DATA) or --out"
    what = {errno.ENOSPC: "the disk is full: free space and run the same command again (stored units are kept)",
            errno.EROFS: f"the file system is read-only: {fix}",
            errno.EACCES: f"permission denied: {fix}, or fix the folder's permissions",
            errno.ENOTDIR: f"a path in it is a file, not a folder: {fix}",
            errno.EEXIST: f"a file is in the way of a folder: {fix}"}
    return f"{where}: {what.get(exc.errno, exc.strerror or str(exc))}"


def _aside(summary, cfg, dry_run):
    """Say which records the run moved aside (or, dry, would) and where, and which changed cells it left."""
    records, cells = summary.set_aside
    where = f"to {summary.superseded}" if summary.superseded else f"to {summary.out}/superseded-<stamp>/"
    for change in summary.data_changes:
        typer.echo(f"{change.said()}: its {change.units} unit(s) run again; its {change.records} old record(s) "
                   f"{'would move' if dry_run else 'moved'} {where}")
    if cells > sum(len(c.cells) for c in summary.data_changes):  # (moved for another reason too)
        typer.echo(f"{'would move' if dry_run else 'moved'} {records} record(s) of {cells} cell(s) aside {where}, "
                   "to run those cells again")
    if summary.stale:
        cells = ", ".join(f"{m} on {d}" for d, m, _ in summary.stale[:5]) + (" ..." if len(summary.stale) > 5 else "")
        typer.secho(f"{len(summary.stale)} cell(s) not run now hold records made under another setting ({cells}): "
                    f"kept, and the reports refuse {summary.out} until they run again: eemrepro run "
                    f"{cfg.source or 'CONFIG'} --out {summary.out} --rerun-changed", fg=typer.colors.YELLOW, err=True)


def _most_said(counts, verb, what, column):
    """The five texts of ``counts`` ({text: fits}) said in most fits, one line each, on stderr; how many others
    there are, and where each record keeps its own."""
    for text, fits in sorted(counts.items(), key=lambda kv: -kv[1])[:5]:
        typer.secho(f"{verb} {fits} fit(s): {text}", fg=typer.colors.YELLOW, err=True)
    if len(counts) > 5:
        typer.secho(f"... and {len(counts) - 5} other {what}; each record holds its fit's (column '{column}' "
                    "of eemrepro export)", fg=typer.colors.YELLOW, err=True)


def run_cmd(
    config: Annotated[Path, typer.Argument(help="Experiment config (YAML).")],
    out: Annotated[Path | None, typer.Option(help="Results folder (default results/<config name>).")] = None,
    jobs: Annotated[int | None, typer.Option(help="Parallel workers (default: the config's, else all cores).")] = None,
    backend: Annotated[Backend | None, typer.Option(
        help="loky (workers on this machine; --jobs 1 runs here) or dask (every unit on a Dask cluster). "
             "Default: dask with --scheduler, else loky.")] = None,
    scheduler: Annotated[str | None, typer.Option(
        help="Dask scheduler address (implies --backend dask; default: a local cluster of --jobs workers).")] \
        = None,
    fresh: Annotated[bool, flag("--fresh", help="Move stored records aside and start over.")] = False,
    dry_run: Annotated[bool, flag("--dry-run", help="Print the unit count and a time estimate.")] = False,
    mirror: Annotated[str | None, typer.Option(help="Data mirror folder or URL (else $EEMREPRO_MIRROR).")] = None,
    data_home: Annotated[Path | None, typer.Option(help="Data cache folder (else $EEMREPRO_DATA).")] = None,
    quiet: Annotated[bool, flag("--quiet", help="No progress line.")] = False,
    repeats: Annotated[int | None, typer.Option(help="Override protocol.repeats of the config.")] = None,
    skip_unavailable: Annotated[bool, flag(
        "--skip-unavailable", help="Skip data sets whose files cannot be fetched (listed), run the rest.")] = False,
    retry_failed: Annotated[bool, flag("--retry-failed", help="Run failed fits again.")] = False,
    only_models: Annotated[str | None, typer.Option(
        help="Comma-separated models of the config to run now (the rest stays pending).")] = None,
    only_datasets: Annotated[str | None, typer.Option(
        help="Comma-separated data sets of the config to run now.")] = None,
    rerun_changed: Annotated[bool, flag(
        "--rerun-changed", help="Cells whose stored records were made under another setting (estimator, "
                                "parameter, splitter, ...): move those records aside and run the cells afresh.")]
        = False,
    reading: Annotated[str | None, typer.Option(
        help="Run this reading of the config (its 'readings' section) into <out>/readings/<reading>.")] = None,
):
    """Run every unit of CONFIG (resuming what is stored), then print its result table."""
    ran = _run_config(config, out, reading, only_models, only_datasets, jobs=jobs, backend=backend and backend.value,
                      scheduler=scheduler, fresh=fresh, dry_run=dry_run, mirror=mirror, data_home=data_home,
                      progress=not quiet, repeats=repeats, skip_unavailable=skip_unavailable,
                      retry_failed=retry_failed, rerun_changed=rerun_changed)
    if ran is None:  # a derived reading: nothing to run
        return
    cfg, summary = ran
    _say_run(cfg, summary, dry_run)
    if not dry_run:
        _print_run_table(cfg, summary)


def _run_config(config, out, reading, only_models, only_datasets, **options):
    """(config, run summary) of running CONFIG (or its ``reading``) into ``out`` with ``options`` (keywords of
    ``run_experiment``); None for a derived reading, which is only noted. Ctrl-C, and every error, end the command
    in one line."""
    from ..datasets import DatasetError
    from ..experiments import ConfigError, RunInterrupted, load_config, run_experiment
    from ..experiments._dispatch import DispatchError
    from ..experiments._run_folder import default_out
    from ..store import StoreError
    from ._common import fail, split_names

    previous = {s: signal.signal(s, _interrupt) for s in (signal.SIGINT, signal.SIGTERM)}
    results = out
    try:
        cfg = load_config(config)
        results = out if out is not None else default_out(cfg)
        if reading is not None:
            primary, cfg = cfg, cfg.with_reading(reading)
            if cfg.reading.derived:
                _note_derived_reading(results, cfg, primary, reading)
                return None
            out = results = results / "readings" / reading
        names = {*cfg.datasets, *(m.name for m in cfg.models)}
        return cfg, run_experiment(cfg, out=out, only_models=split_names(only_models, names),
                                   only_datasets=split_names(only_datasets, names), **options)
    except RunInterrupted as exc:
        typer.secho(str(exc), fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(code=130 if exc.reason is None else 1) from None
    except KeyboardInterrupt:
        typer.secho("interrupted before any unit ran; nothing was changed", fg=typer.colors.YELLOW, err=True)
        raise typer.Exit(code=130) from None
    except (ConfigError, DatasetError, StoreError, ValueError, DispatchError) as exc:
        fail(exc)
    except OSError as exc:
        fail(_io_error(exc, results))
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _note_derived_reading(results, cfg, primary, reading):
    """A reading that changes only how the tables read the records: noted in the results folder, nothing run."""
    from ..experiments._run_folder import record_derived_reading

    where = record_derived_reading(results, cfg, primary.readings)
    whose = f"reading {cfg.reading.records}'s records" if cfg.reading.records else "the config's own records"
    typer.echo(f"reading {reading} changes only how the tables read the records "
               f"({cfg.reading.describe()}): nothing to run; noted in {where}, and `eemrepro tables` "
               f"reports it from {whose}, beside the primary reading")


def _say_run(cfg, summary, dry_run):
    """What the run did (or, dry, would do): data sets skipped, records moved aside or left out, then the units
    and their outcome, with the failures' and warnings' most frequent texts."""
    for name, why in summary.unavailable.items():
        typer.secho(f"skipped {name}: {why}", fg=typer.colors.YELLOW, err=True)
    _aside(summary, cfg, dry_run)
    if summary.other_kernels:
        from ..experiments._watchdog import kernels_said

        theirs, now, core = kernels_said(*summary.other_kernels)
        pick = f"; OPENBLAS_CORETYPE={core} picks theirs" if core else ""
        typer.secho(f"{summary.out}'s records were made with BLAS kernels {theirs}, this machine's are "
                    f"{now}: an ill-conditioned number rounds otherwise in the units "
                    f"run now (docs/running.md, \"Another CPU's round-off\"){pick}", fg=typer.colors.YELLOW, err=True)
    done = summary.total_units - summary.pending_units
    if summary.left_out:
        from ..experiments._units import describe_left_out

        typer.echo(f"kept in {summary.out} but not used (the config no longer names them): "
                   f"{describe_left_out(summary.left_out)}")
    if dry_run:
        typer.echo(f"{cfg.name}: {summary.total_units} units, {done} already stored, "
                   f"{summary.pending_units} to run; {summary.estimate.words()}")
        return
    # A unit makes one record per grid point (and per fold, for a unit that spans folds): the counts are records'.
    records = sum(summary.status_counts.values())
    counts = f"{records} record(s) (" + ", ".join(f"{n} {s}" for s, n in sorted(summary.status_counts.items())) + \
        ")" if records else "nothing to do"
    typer.echo(f"{cfg.name}: ran {summary.done_units} of {summary.pending_units} pending units "
               f"({done} were stored) in {summary.seconds:.1f} s: {counts}; records in {summary.out}")
    if summary.ran_on and summary.ran_on.startswith("the Dask cluster"):  # not where a user may think
        typer.echo(f"ran on {summary.ran_on}")
    _most_said(summary.failures, "failed in", "reason(s) of failure", "error_message")
    # caught in the fit processes on every backend, each record keeps its own
    _most_said(summary.warnings, "warned in", "warning(s)", "warnings")


def _print_run_table(cfg, summary):
    """The run's result table, read as every report reads the folder (its seconds are the run file's last
    stage), and the command that writes all of them."""
    import time

    from ..experiments._run_folder import StaleRecordsError, note_stage
    from ..reports import run_table

    start = time.monotonic()
    try:
        typer.echo("\n" + run_table(cfg, summary.out))
    except StaleRecordsError as exc:  # read as every report reads the folder: the stale cells said above
        typer.secho(f"\nno table: {exc}", fg=typer.colors.YELLOW, err=True)
    if summary.run_id is not None:  # the table is the run's last stage: its seconds go into the run file
        try:
            note_stage(summary.out, summary.run_id, "table", time.monotonic() - start)
        except OSError:
            pass  # the run file holds the other stages; a read-only folder by now loses only this one
    typer.echo(f"\nAll tables: eemrepro tables {summary.out}")
