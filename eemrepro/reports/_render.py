"""Writing tables as Markdown, CSV or LaTeX, each with its provenance.

Nothing here reads the clock: the provenance comes from the stored runs, so
rebuilding from the same store gives the same bytes (``make tables``).
"""

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd

from ..experiments._selection import budget_groups
from ..store import ResultStore, read_runs
from ..store._files import stores_inside
from ..store._store import LARGE_FRAME, concat_frames, distinct, release_memory, repeats_per_cell

#: The columns the tables, the checks and the figures read (``ResultStore.frame`` reads nothing else).
REPORT_COLUMNS = ("kind", "status", "metrics", "criteria", "fit_seconds", "path_size",
                  "standalone_fit_seconds", "finished_at", "run_id", "estimator", "fixed_params", "dcs", "ratio",
                  "values", "embedding", "labels")
#: What the HTML report shows besides: each fold's prediction time (a drill-down the tables do not have).
SITE_COLUMNS = (*REPORT_COLUMNS, "predict_seconds")


#: Of ``REPORT_COLUMNS``, those read for the provenance alone (``load_results`` does not return them).
_PROVENANCE_ONLY = ("finished_at", "run_id")


class NoRecordsError(ValueError):
    """The results folders hold no record: a report or a gate over them would say nothing (fails closed)."""


def no_records_message(dirs):
    """Why ``dirs`` give nothing to report, naming the results folders inside them if any (``results/``)."""
    inside = [s for d in dirs for s in stores_inside(d)]
    hint = f"; the results folders inside are: {', '.join(inside[:8])}{' ...' if len(inside) > 8 else ''}" \
        if inside else " (a results folder is what `eemrepro run` writes: results/<config name>)"
    return f"no records in {', '.join(str(d) for d in dirs)}: nothing to report{hint}"


def load_results(dirs, columns=REPORT_COLUMNS, require=True):
    """(records frame, provenance) of one or more results folders.

    The frame is what ``eemrepro.read_results`` gives, limited to ``columns``
    (and the key columns), each experiment kind's rows in one block (the
    folders' order within it). ``provenance["unfinished"]`` lists the (data set,
    model) cells whose folder's config has units the records lack (the
    store's run state). A folder's records that its config.yaml no longer
    names (a grid point, model or data set taken out of it since they were
    run) are kept in the store but left out here, counted by reason in
    ``provenance["left_out"]`` ({folder: {reason: records}}).

    Raises :class:`NoRecordsError` when the folders hold no record at all
    (unless ``require`` is false): a report of nothing is never a pass.
    """
    dirs, named = with_baselines(dirs)
    facts = _Facts(dirs, named)
    records = _read_folders(dirs, columns, facts)
    if require and not len(records):
        raise NoRecordsError(no_records_message(dirs))
    return records, facts.provenance()


class ResultsByDatasets:
    """The records of results folders a group of data sets at a time, and their provenance once all are read.

    Iterating gives one records frame per group (``load_results``' frame restricted to the group's data
    sets: the same rows, in the same order); the groups are consecutive in sorted data set order, each of at
    most ``budget`` stored records where a data set alone is not larger (one group when all fit).
    ``provenance`` is ``load_results``' once the last group has been read. Each cell is one data set's, so
    whatever is made cell by cell (the tables' rows, the checks) is made group by group in a fraction of the
    memory of the whole frame. Each group is one consistent state of the folders (records a writer adds
    meanwhile show in the groups read after them, as in a later read).
    """

    def __init__(self, dirs, budget, columns=REPORT_COLUMNS):
        self.dirs, self.named = with_baselines(dirs)
        self.columns = columns
        counts = {}
        for d in self.dirs:
            if not Path(d).is_dir():
                raise FileNotFoundError(f"{d} is not a results folder")
            for dataset, n in ResultStore(d).dataset_counts().items():
                counts[dataset] = counts.get(dataset, 0) + n
        names = sorted(counts)
        self.groups = [[names[i] for i in g] for g in budget_groups([counts[n] for n in names], budget)] or [[]]
        self.provenance = None
        self._facts, self._started = _Facts(self.dirs, self.named), False
        #: The unfinished (data set, model) cells of the groups read so far (all once every group is).
        self.unfinished = self._facts.unfinished

    def __len__(self):
        return len(self.groups)

    def __iter__(self):
        if self._started:
            raise RuntimeError("the groups of a ResultsByDatasets are read once (its provenance sums them)")
        self._started = True
        facts = self._facts
        records = 0
        for group in self.groups:
            frame = _read_folders(self.dirs, self.columns, facts, datasets=None if len(self.groups) == 1 else group)
            records += len(frame)
            yield frame
            del frame
        if not records:
            raise NoRecordsError(no_records_message(self.dirs))
        self.provenance = facts.provenance()


class _Facts:
    """What the provenance says of results folders, gathered folder by folder (and group by group of data
    sets: every fact here is a union or a sum over records), made into ``load_results``' provenance once."""

    def __init__(self, dirs, named):
        self.dirs, self.named = dirs, named
        self.owner, self.unfinished, self.left_out = {}, set(), {}
        self.finished, self.versions, self.hosts = [], set(), set()
        self.per_cell = {}  # folder -> each of its cells' count of repeats
        self.cells = {}  # folder -> its (kind, data set) pairs
        self.records = 0

    def add(self, d, these, run_facts, scope):
        """A folder's frame (already cut to its config's scope), its run facts ({run id: facts}) and scope."""
        if scope is not None:
            self.unfinished |= scope.unfinished
            for why, n in scope.left_out.items():
                counts = self.left_out.setdefault(str(d), {})
                counts[why] = counts.get(why, 0) + n
        self.records += len(these)
        if not len(these):
            return
        # Two folders with the same model on the same data set (say results/uci
        # and the h sweep of results/stability) would silently merge their grids
        # into one best-of-grid cell. Records of different kinds never share a table.
        cells = {tuple("" if v is None else v for v in c) for c in distinct(these, ["dataset", "model", "kind"])}
        for key in sorted(cells):
            if key in self.owner and self.owner[key] != d:
                raise ValueError(f"{self.owner[key]} and {d} both hold {key[1]} on {key[0]}; their grids would be "
                                 "merged into one cell: pass them to separate commands")
            self.owner[key] = d
        for run_id in these["run_id"].dropna().unique() if "run_id" in these else ():
            fact = run_facts.get(run_id) or {}
            if fact.get("versions"):
                self.versions.add(json.dumps(fact["versions"], sort_keys=True))
            if fact.get("host"):
                self.hosts.add(fact["host"])
        if "finished_at" in these:
            stamps = pd.to_numeric(these["finished_at"], errors="coerce")
            stamps = stamps[stamps.notna() & (stamps != 0)]
            self.finished += stamps.agg(["min", "max"]).tolist() if len(stamps) else []
        self.per_cell.setdefault(str(d), []).extend(repeats_per_cell(these).values())
        self.cells.setdefault(str(d), set()).update(
            ("" if k is None else k, ds) for k, ds in distinct(these, ["kind", "dataset"]))

    def provenance(self):
        runs, configs, per_dir_repeats, protocols = [], {}, {}, {}
        for d in self.dirs:
            for info in read_runs(d):
                runs.append(info)
                configs[info["config"]["name"]] = info.get("config_file")
            # A folder whose cells ran different numbers of repeats (say 5 for the ELM family, 1 for
            # SVM) reads "1 to 5", not its largest count.
            per_cell = self.per_cell.get(str(d), [])
            label = "0" if not per_cell else (
                str(min(per_cell)) if min(per_cell) == max(per_cell) else f"{min(per_cell)} to {max(per_cell)}")
            per_dir_repeats.setdefault(label, []).append(Path(d).name)
            if per_cell:
                protocols[str(d)] = (_protocol_of(d, label), self.cells[str(d)])
        commits = sorted({r.get("commit") for r in runs if r.get("commit")})
        # One count when every folder has the same; else each count with its folders.
        repeats = next(iter(per_dir_repeats)) if len(per_dir_repeats) == 1 else ", ".join(
            f"{n} ({', '.join(names)})" for n, names in sorted(per_dir_repeats.items(), key=_repeats_order))
        provenance = {
            "results": [str(Path(d)) for d in self.dirs],
            "configs": {k: v for k, v in sorted(configs.items())},
            "commits": commits,
            "package_versions": [json.loads(v) for v in sorted(self.versions)],
            "records": self.records,
            "repeats": repeats,
            "records_finished": _date_range(self.finished),
            "hosts": sorted(self.hosts),
            "unfinished": sorted(self.unfinished),
            "left_out": self.left_out,
        }
        if self.named:
            provenance["baselines"] = self.named
        differences = protocol_differences(protocols)
        if differences:
            provenance["protocol_differences"] = differences
        return provenance


def _read_folders(dirs, columns, facts, datasets=None):
    """The records frame of ``dirs`` (of ``datasets`` only, unless None), each kind's rows in one block;
    ``facts`` (``_Facts``) gathers what the provenance says of them."""
    from ..experiments._run_folder import config_scope_in

    pieces = {}
    for d in dirs:
        d = Path(d)
        if not d.is_dir():
            raise FileNotFoundError(f"{d} is not a results folder")
        # The records' identities, checked against what the folder's config.yaml says (``config_scope_in``)
        these = ResultStore(d).frame([*columns, *(["identity"] if "identity" not in columns else [])],
                                     datasets=datasets)
        run_facts = these.attrs.get("run_facts") or {}
        these.attrs = {}  # pandas deep-copies ``attrs`` into every frame derived from this one: read once, dropped
        scope = config_scope_in(d, these) if len(these) else None
        if "identity" not in columns and "identity" in these:
            del these["identity"]  # in place: the frame is this function's own
        if scope is not None and scope.left_out:
            these = these[scope.keep].reset_index(drop=True)
        facts.add(d, these, run_facts, scope)
        # The run ids and finish times give the provenance and nothing else: not carried in the frame
        # every table reads (a column of floats per record).
        for c in [c for c in _PROVENANCE_ONLY if c in these]:
            del these[c]  # in place: the frame is this function's own
        _narrow_counters(these)
        # Rows of one kind end up in one block: each table reads its kind as a slice, not a copy.
        kinds = these["kind"] if "kind" in these else pd.Series(np.nan, index=these.index)
        if len(these) and kinds.nunique(dropna=False) == 1:  # one kind (most folders): the frame itself, no copy
            pieces.setdefault(kinds.iloc[0], []).append(these)
        else:
            for kind, rows in these.groupby(kinds, sort=False, dropna=False, observed=True):
                pieces.setdefault(kind, []).append(rows)
        large = len(these) >= LARGE_FRAME
        del these, kinds
        if large:
            release_memory()  # what reading this folder took, before the next
    records = concat_frames([rows for group in pieces.values() for rows in group])
    pieces.clear()
    if len(records) >= LARGE_FRAME:
        release_memory()  # the folders' frames, before the tables
    return records


def with_baselines(dirs):
    """(``dirs`` and the baseline folders their config.yaml name, {folder: the baselines it names}).

    A results folder whose config names baselines (``baselines:``, paths
    from the folder) is read with them: its models beside the ones it was
    run to be compared with. A baseline that is not there is an error naming it.
    """
    import os

    from .._yaml import YAMLDocumentError, load_yaml_file

    out, named, seen = [], {}, set()
    for d in dirs:
        key = os.path.realpath(d)
        if key not in seen:
            seen.add(key)
            out.append(Path(d))
    for d in list(out):
        path = Path(d) / "config.yaml"
        try:
            raw = load_yaml_file(path)[0] if path.is_file() else None
        except YAMLDocumentError:
            raw = None  # the scope check reads it again and names what is wrong
        baselines = raw.get("baselines") if isinstance(raw, dict) else None
        if not isinstance(baselines, list):
            continue
        named[str(d)] = [str(b) for b in baselines]
        for b in baselines:
            folder = Path(os.path.normpath(Path(d) / str(b)))
            if not folder.is_dir():
                raise FileNotFoundError(f"{path} names the baseline {b} ({folder}), which is not there: restore "
                                        "it, or take it out of the config's 'baselines'")
            if os.path.realpath(folder) not in seen:
                seen.add(os.path.realpath(folder))
                out.append(folder)
    return out, named


def _protocol_of(folder, repeats):
    """What two stores must share for their cells to meet in a table: their config's protocol
    (``_baselines.protocol_of``) and the repeats their records hold (with the (kind, data set) pairs they
    cover, ``protocol_differences`` compares them)."""
    from ..experiments._baselines import protocol_of, stored_config

    config = stored_config(folder)
    protocol = protocol_of(config) if config is not None else {}
    protocol.pop("kind", None)
    protocol["repeats run"] = repeats
    return protocol


def protocol_differences(protocols):
    """One line for each two stores made under different protocols whose records share a (kind, data set)."""
    lines = []
    folders = list(protocols)
    for i, a in enumerate(folders):
        for b in folders[i + 1:]:
            (pa, ca), (pb, cb) = protocols[a], protocols[b]
            shared = sorted({d for _, d in ca & cb})
            pa, pb = ({k: ({d: v for d, v in x[k].items() if d in shared} if isinstance(x[k], dict) else x[k])
                       for k in x} for x in (pa, pb))  # a per-data-set train_size: on the shared data sets
            keys = [k for k in dict.fromkeys([*pa, *pb]) if pa.get(k) != pb.get(k)]
            if shared and keys:
                what = "; ".join(f"{k} {pa.get(k)!r} in {a}, {pb.get(k)!r} in {b}" for k in keys)
                lines.append(f"{a} and {b} were made under different protocols ({what}), yet are combined on "
                             f"{', '.join(shared[:5])}{' ...' if len(shared) > 5 else ''}")
    return lines


def _repeats_order(item):
    """Sort key of a (repeats label, folders) pair: by the label's numbers ("1 to 5" after "1")."""
    return [int(n) for n in item[0].split(" to ")]


def _narrow_counters(frame):
    """The repeat and fold numbers as 32-bit integers where they are 64-bit ones (half the memory per record;
    every value a store can hold fits: they count splits)."""
    for c in ("repeat", "fold"):
        if c in frame and frame[c].dtype == np.int64 and len(frame) and \
                frame[c].min() >= np.iinfo(np.int32).min and frame[c].max() <= np.iinfo(np.int32).max:
            frame[c] = frame[c].astype(np.int32)


def _date_range(stamps):
    if not stamps:
        return None
    import datetime as dt

    fmt = lambda s: dt.datetime.fromtimestamp(s, dt.timezone.utc).strftime("%Y-%m-%d")
    lo, hi = fmt(min(stamps)), fmt(max(stamps))
    return lo if lo == hi else f"{lo} to {hi}"


def provenance_lines(prov, title, notes=()):
    lines = [title, f"results: {', '.join(prov['results'])} ({prov['records']} records, "
                    f"{prov['repeats']} repeat(s) of the CV; records finished {prov['records_finished']})"]
    for name, path in prov["configs"].items():
        lines.append(f"config {name}: {path}")
    if prov["commits"]:
        lines.append("code commit(s): " + ", ".join(prov["commits"]))
    for v in prov["package_versions"]:
        lines.append("versions: " + ", ".join(f"{k} {v[k]}" for k in sorted(v)))
    for folder, baselines in prov.get("baselines", {}).items():
        lines.append(f"baselines of {folder} (its config.yaml names them): {', '.join(baselines)}")
    lines.extend(f"WARNING, protocols differ: {line}" for line in prov.get("protocol_differences", ()))
    lines.extend(left_out_lines(prov))
    lines.extend(notes)
    return lines


def left_out_lines(prov):
    """One line per results folder with stored records its config no longer names (kept, not read)."""
    from ..experiments._units import describe_left_out

    return [f"left out of {folder} (kept in the store, not named by its config.yaml): {describe_left_out(reasons)}"
            for folder, reasons in prov.get("left_out", {}).items()]


def _fmt(x, digits=1, limit=None):
    """A number at ``digits``; NaN "–"; +inf (past the fit budget ``limit``) "> limit"."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, float) and math.isinf(x):
        return f"> {limit:g}" if limit is not None else "inf"
    return f"{x:.{digits}f}"


def _signed(x, digits=1):
    if x is None or (isinstance(x, float) and (math.isnan(x) or math.isinf(x))):
        return "–"
    return f"{x:+.{digits}f}"


class RowFormat:
    """A long-view column's formatter that reads the whole row (a value beside its cell's mark, ``fits_mark``),
    where the others read the column's value alone."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, row):
        return self.fn(row)


def _text(r, column, fn):
    if isinstance(fn, RowFormat):
        return fn(r)
    if fn:
        return fn(r[column])
    v = r[column]
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)


def write_table(df, path_stem, fmt, title, prov, columns, wide=None, notes=(), fill=""):
    """Write ``df`` (long format) as ``path_stem.<ext>`` with a provenance header.

    ``columns``: [(column, header, formatter)] for Markdown/LaTeX long tables
    (a ``RowFormat`` formatter is given the row);
    ``wide``: optional (index, columns, cell formatter) for a compact wide view,
    ``fill`` its text where a (row, column) has no row of ``df``.
    """
    head = provenance_lines(prov, title, notes)
    path_stem = Path(path_stem)
    path_stem.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "csv":
        out = path_stem.with_suffix(".csv")
        body = df.to_csv(index=False, float_format="%.6g", lineterminator="\n")
        out.write_text("".join(f"# {line}\n" for line in head) + body)
        return out
    rows = [[_text(r, c, fn) for c, _, fn in columns] for _, r in df.iterrows()]
    headers = [h for _, h, _ in columns]
    if fmt == "md":
        from tabulate import tabulate

        out = path_stem.with_suffix(".md")
        text = f"# {head[0]}\n\n" + "".join(f"- {line}\n" for line in head[1:]) + "\n"
        if wide is not None:
            index, cols, cell = wide
            pivot = _wide(df, index, cols, cell, fill)
            text += tabulate(pivot.values.tolist(), headers=[index] + list(pivot.columns[1:]),
                             tablefmt="github", disable_numparse=True) + "\n\n"
        text += tabulate(rows, headers=headers, tablefmt="github", disable_numparse=True) + "\n"
        out.write_text(text)
        return out
    if fmt == "latex":
        out = path_stem.with_suffix(".tex")
        esc = lambda s: str(s).replace("_", r"\_").replace("%", r"\%").replace("&", r"\&").replace("±", r"$\pm$") \
            .replace(FAILED_MARK, r"$^\dagger$")
        text = "".join(f"% {line}\n" for line in head)
        text += "\\begin{tabular}{" + "l" * len(headers) + "}\n\\hline\n"
        text += " & ".join(esc(h) for h in headers) + " \\\\\n\\hline\n"
        text += "".join(" & ".join(esc(c) for c in row) + " \\\\\n" for row in rows)
        text += "\\hline\n\\end{tabular}\n"
        out.write_text(text)
        return out
    raise ValueError(f"format must be md, csv or latex, got {fmt!r}")


def _wide(df, index, cols, cell, fill=""):
    order_rows = list(dict.fromkeys(df[index]))
    order_cols = list(dict.fromkeys(df[cols]))
    table = {r: {c: fill for c in order_cols} for r in order_rows}
    for _, r in df.iterrows():
        table[r[index]][r[cols]] = cell(r)
    return pd.DataFrame([[r] + [table[r][c] for c in order_cols] for r in order_rows],
                        columns=[index] + order_cols)


#: The mark of a cell some of whose fits failed or ran past the fit budget, followed by how many ("†3").
FAILED_MARK = "†"
#: What the mark means, in the legend of every table that shows one.
FITS_LEGEND = (f"'{FAILED_MARK}k': k of the cell's fits failed or ran past the fit budget; its value is over the "
               "grid points (per-fold rules: the points chosen per fold) that finished on every test fold, never over "
               "the folds that survived a failure (csv: failed_fits, timed_out_fits, and skipped_fits, not tried "
               "after a timeout)")


def _count(r, column):
    v = r.get(column, 0)
    return 0 if v is None or v != v else int(v)


def unfinished_fits(r):
    """How many fits of a table row's cell failed or ran past the fit budget (``select``'s counts)."""
    return _count(r, "failed_fits") + _count(r, "timed_out_fits")


def fits_mark(r):
    """" †k" after a cell's text where k of its fits failed or ran past the fit budget; "" where none did."""
    n = unfinished_fits(r)
    return f" {FAILED_MARK}{n}" if n else ""


def fits_note(r):
    """The counts behind a cell's mark in words ("2 fits failed, 1 ran past the fit budget"), or ""."""
    failed, timed_out, skipped = (_count(r, c) for c in ("failed_fits", "timed_out_fits", "skipped_fits"))
    if not failed + timed_out:
        return ""
    parts = [f"{failed} fit{'s' if failed != 1 else ''} failed" if failed else "",
             f"{timed_out} ran past the fit budget" if timed_out else "",
             f"{skipped} {'were' if skipped != 1 else 'was'} not tried after a timeout" if skipped else ""]
    return ", ".join(p for p in parts if p)


def marked(df):
    """Whether a table (a frame of rows) has a cell with the mark (``fits_mark``)."""
    return any(unfinished_fits(r) for r in df.to_dict("records"))


def run_cell(metric, limit, digits=1):
    """The run's printed table: reproduced mean±std, then the paper's value and the delta where it has one."""
    wide = metric_cell(metric, limit, digits)

    def cell(r):
        if r["status"] != "ok":
            return wide(r)
        text = f"{_fmt(r[metric], digits)}±{_fmt(r[metric + '_std'], digits)}{fits_mark(r)}"
        published = r.get("published", np.nan)
        if published is None or np.isnan(published):
            return text
        return f"{text} (paper {_fmt(published, digits)}, {_signed(r['delta'], digits)})"

    return cell


#: The legend printed under a run's table.
RUN_LEGEND = ("cell: reproduced mean±std over the test folds; (paper P, D): the published value and "
              "D = reproduced - published; '> N': past the fit budget; '–': not run or no value")


def metric_cell(metric, limit, digits=1, delta=True):
    """Wide-view cell: reproduced mean±std (delta, unless not ``delta``: a table with no published value);
    "> limit" past the fit budget; "–" not run; each with the cell's mark where some of its fits failed or ran
    past the budget (``fits_mark``)."""

    def cell(r):
        mark = fits_mark(r)
        if r["status"] == "timed-out":
            return f"> {limit:g}{mark}"
        if r["status"] != "ok":
            published = r.get("published", np.nan)
            return f"–{mark}" if np.isnan(published) else f"–{mark} ({_fmt(published, digits)})"
        text = f"{_fmt(r[metric], digits)}±{_fmt(r[metric + '_std'], digits)}{mark}"
        return f"{text} ({_signed(r['delta'], digits)})" if delta else text

    return cell
