"""``build_report``: the reproduction as a static site, one page per paper, that works from ``file://``.

Every registered table the results hold, each cell coloured by its verdict
(within the table's tolerance; pinned, with the reason from a tolerance file;
outside; missing; not compared), sortable by column; a click on a cell shows
its test folds at the selected point, the parameters selected and the grid
curve. Under each paper table: its comparisons (wins/draws/losses, average
ranks, Friedman, Wilcoxon) and a critical-difference diagram; then the
paper's figures as inline SVG, and the provenance of the results. Pages come
from Jinja2 templates (``templates/``), table bodies from pandas' Styler; no
script, style or figure is loaded from outside the folder.
"""

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd

from ..papers import registered_papers
from ._outputs import FilesExistError, publish
from ._render import FITS_LEGEND, _fmt, _signed, fits_mark, fits_note, marked

VERDICTS = {"within": "v-within", "pinned": "v-pinned", "outside": "v-outside", "missing": "v-missing",
            "not compared": "v-notrun"}


def _template_text(name):
    return resources.files("eemrepro.reports").joinpath("templates", name).read_text(encoding="utf-8")


def _verdicts(default_cells, pinned_cells):
    """{(table, dataset, method): (verdict, reason)} from a check under the tables' rules and one under the pins."""
    out = {}
    for key, c in default_cells.items():
        p = pinned_cells.get(key, c)
        if c.outcome == "pass":
            out[key] = ("within", None)
        elif c.outcome in ("fail", "missing") and p.outcome in ("pass", "skipped") and p.reason:
            out[key] = ("pinned", p.reason)
        elif c.outcome == "fail":
            out[key] = ("outside", None)
        elif c.outcome == "missing":
            out[key] = ("missing", "run, but no value (interrupted, failed or past the time budget)")
        else:
            out[key] = ("not compared", c.reason or "no published value")
    return out


def _cell_frames(spec, mine):
    """{(data set, method): its outer-fold rows} of a metric table (facets split as the table splits them)."""
    from ._tables import _facet, _of_kind

    grid = _of_kind(mine, spec.kind)
    if spec.facet:
        grid, _ = _facet(grid, spec.facet, ())
    outer = grid[grid["inner"].isna()] if len(grid) else grid
    if not len(outer):
        return {}
    # What a click shows reads the finished folds alone, in (repeat, fold) order: filtered and sorted once here,
    # and only the columns it shows.
    wanted = [c for c in ("dataset", "model", "point", "repeat", "fold", "status", spec.metric, "fit_seconds",
                          "predict_seconds") if c in outer]
    ok = outer.loc[outer["status"] == "ok", wanted]
    keyed = ok.assign(dataset=ok["dataset"].astype(str), model=ok["model"].astype(str),
                      point=ok["point"].astype(str)).sort_values(["repeat", "fold"], kind="stable")
    return dict(iter(keyed.groupby(["dataset", "model"], sort=False)))


def _details(spec, row, frames, verdict, reason, per_fold=None):
    """What a click on a metric cell shows: its test folds (at the point each fold selected) and its grid curve.

    ``per_fold``: {(repeat, fold): point} where the selection rule chooses per fold
    (nested CV, a criterion); else every fold is shown at the cell's selected point.
    """
    scale, digits = spec.scale, spec.printed_digits
    cell = {"cell": f"{row['dataset']} / {row['method']}", "verdict": verdict, "reason": reason,
            "point": row.get("point") if isinstance(row.get("point"), str) else None, "fits": fits_note(row)}
    g = frames.get((row["dataset"], row["method"]))
    if g is None or spec.metric not in g:
        return cell
    ok = g  # (``_cell_frames``: the finished folds, in (repeat, fold) order)
    if per_fold:
        chosen = pd.Series([per_fold.get((int(r), int(f))) for r, f in zip(ok["repeat"], ok["fold"], strict=True)],
                           index=ok.index)
        at = ok[ok["point"] == chosen]
    else:
        at = ok[ok["point"] == cell["point"]] if cell["point"] else ok.iloc[:0]
    cell["fold_headers"] = ["repeat", "fold", "selected", spec.metric, "fit s", "predict s"]
    cell["folds"] = [[int(r), int(f), p, _fmt(scale * v, digits), _fmt(fs, 3), _fmt(ps, 4)]
                     for r, f, p, v, fs, ps in zip(at["repeat"], at["fold"], at["point"], at[spec.metric],
                                                   at.get("fit_seconds", pd.Series(np.nan, index=at.index)),
                                                   at.get("predict_seconds", pd.Series(np.nan, index=at.index)),
                                                   strict=True)][:200]
    from ..experiments._selection import _point_sort_key

    curve = ok.groupby("point", sort=False)[spec.metric].agg(["mean", "count"])
    means, counts = curve["mean"].to_dict(), curve["count"].to_dict()
    points = sorted(curve.index, key=_point_sort_key)  # the grid's own order: parameters by name, values ascending
    cell["grid"] = [[p, _fmt(scale * means[p], digits), int(counts[p])] for p in points][:300]
    return cell


def _styled(display, classes, tooltips, uuid):
    """A display frame as an HTML table through pandas' Styler: verdict classes per cell, reasons as tooltips."""
    styler = display.style.hide(axis="index").set_td_classes(classes).set_uuid(uuid)
    if tooltips is not None and tooltips.to_numpy().any():
        styler = styler.set_tooltips(tooltips)
    return styler.to_html(doctype_html=False)


def _per_fold_points(spec, mine, selection, unfinished):
    """{(data set, method): {(repeat, fold): point}} where the table's rule selects per fold."""
    from ..experiments import select
    from ._tables import _facet, _of_kind

    rule = spec.selection or selection
    if rule == "best-of-grid":
        return {}
    grid = _of_kind(mine, spec.kind)
    if spec.facet:
        grid, unfinished = _facet(grid, spec.facet, unfinished)
    sel = select(grid, rule, metric=spec.metric, unfinished=unfinished) if len(grid) else pd.DataFrame()
    if "folds" not in sel:
        return {}
    return {(str(r["dataset"]), str(r["model"])): dict(zip(map(tuple, r["folds"]), r["points"], strict=True))
            for r in sel.to_dict("records") if isinstance(r.get("folds"), list)}


#: What a benchmark's cell (``_benchmark``) is, where a paper's cell has its verdict.
UNJUDGED = ("not compared", "a benchmark cell: no published value to compare with")


def _metric_section(spec, df, verdicts, mine, per_fold, judged=True):
    """A metric table as a sortable list (and each cell's details); ``judged``: False for a benchmark, whose
    cells have no published value and no verdict."""
    digits = spec.printed_digits
    m = spec.metric
    frames = _cell_frames(spec, mine)
    rows, details, classes, tips = [], [], [], []
    for _, r in df.iterrows():
        verdict, reason = verdicts.get((spec.id, r["dataset"], r["method"]),
                                       ("not compared", "not checked") if judged else UNJUDGED)
        rows.append({"data set": r["dataset"], "method": r["method"], "reproduced": _fmt(r[m], digits) + fits_mark(r),
                     spec.spread: _fmt(r[m + "_std"], digits), "paper": _fmt(r.get("published"), digits),
                     "paper " + spec.spread: _fmt(r.get("published_std"), digits),
                     "delta": _signed(r.get("delta"), digits), "status": r["status"], "repeats": r.get("repeats"),
                     "verdict": verdict})
        cls = VERDICTS[verdict] if judged else ""
        classes.append(["", "", cls, "", "", "", cls, "", "", cls])
        tips.append(["", "", fits_note(r), "", "", "", reason or "", "", "", reason or ""])
        details.append(_details(spec, r, frames, verdict, reason, per_fold.get((r["dataset"], r["method"]))))
    display = pd.DataFrame(rows)
    classes, tips = pd.DataFrame(classes, columns=display.columns), pd.DataFrame(tips, columns=display.columns)
    if not judged:  # nothing published to show beside, no verdict
        unjudged = [c for c in display.columns if c in ("paper", "paper " + spec.spread, "delta", "verdict")]
        display, classes, tips = (f.drop(columns=unjudged) for f in (display, classes, tips))
    return display, classes, tips, details


def _wide_section(spec, df, verdicts, judged=True):
    """The table in the paper's shape: data sets as rows, methods as columns (the paper's, then any other), each
    cell ours with its delta, coloured by verdict, the published value and the reason on hover; a click shows
    the cell's folds (``cell-<k>``: its row of the long list, whose details the page holds). A benchmark (not
    ``judged``: no published value, no verdict) shows "–" where a model was not run on a data set."""
    digits = spec.printed_digits
    m = spec.metric
    datasets = list(dict.fromkeys(df["dataset"]))
    methods = list(dict.fromkeys(df["method"]))
    text = pd.DataFrame("" if judged else "–", index=datasets, columns=methods)
    classes, tips = pd.DataFrame("", index=datasets, columns=methods), pd.DataFrame("", index=datasets,
                                                                                     columns=methods)
    for k, (_, r) in enumerate(df.iterrows()):
        verdict, reason = verdicts.get((spec.id, r["dataset"], r["method"]),
                                       ("not compared", "not checked") if judged else UNJUDGED)
        value = _fmt(r[m], digits) + fits_mark(r)
        delta = r.get("delta")
        has_delta = delta is not None and not (isinstance(delta, float) and np.isnan(delta))
        text.at[r["dataset"], r["method"]] = f"{value} ({_signed(delta, digits)})" if has_delta else value
        cls = VERDICTS[verdict] + " " if judged else ""
        classes.at[r["dataset"], r["method"]] = f"{cls}cell-{k}"
        paper = r.get("published")
        said = (verdict, reason or "") if judged else ()
        tips.at[r["dataset"], r["method"]] = "; ".join(
            t for t in (f"paper {_fmt(paper, digits)}" if paper is not None and paper == paper else "",
                        *said, fits_note(r)) if t)
    text, classes, tips = (f.reset_index(drop=True) for f in (text, classes, tips))
    text.insert(0, "data set", datasets)
    classes.insert(0, "data set", "")
    tips.insert(0, "data set", "")
    styler = text.style.hide(axis="index").set_td_classes(classes).set_tooltips(tips).set_uuid(f"{spec.id}_wide")
    return styler.to_html(doctype_html=False)


def _other_section(spec, df, verdicts, limit):
    rows, details, classes = [], [], []
    for _, r in df.iterrows():
        if spec.builder == "correlation":
            key = (spec.id, r["dataset"], f"h={r['h']}")
            verdict, reason = verdicts.get(key, ("not compared", "not checked"))
            rows.append({"data set": r["dataset"], "h": int(r["h"]), "rho": _fmt(r["spearman"], 3),
                         "paper": _fmt(r.get("published"), 3),
                         "delta": _signed(r.get("delta"), 3),
                         "layers": int(r["layers"]), "pairs": int(r["pairs"]), "verdict": verdict})
            classes.append(["", "", VERDICTS[verdict], "", VERDICTS[verdict], "", "", VERDICTS[verdict]])
        else:
            verdict, reason = "not compared", "training times depend on the machine"
            rows.append({"data set": r["dataset"], "method": r["method"],
                         "seconds": _fmt(r["seconds"], 2, limit) + fits_mark(r),
                         "paper": _fmt(r.get("published"), 1, limit), "timing": r.get("timing") or "",
                         "selected point": r.get("point") or ""})
            classes.append([""] * 6)
        details.append({"cell": f"{r['dataset']} / {rows[-1].get('method', rows[-1].get('h'))}",
                        "verdict": verdict, "reason": reason, "fits": fits_note(r)})
    display = pd.DataFrame(rows)
    return display, pd.DataFrame(classes, columns=display.columns), None, details


def _summaries(spec, df):
    """The paper's method comparisons on a metric table, as small Styler tables, and a CD diagram (SVG)."""
    from .._stats import DrawRule, ranks_and_tests, wins_draws_losses

    if not spec.summary:
        return [], None
    pub = spec.published_frame()
    if pub is not None:
        df = df[df["method"].isin(set(pub["method"]))]
    rule = DrawRule.of(spec)
    better = rule.greater_is_better
    out = []
    wdl = wins_draws_losses(df, spec.pairs, value=spec.metric, rule=rule)
    if len(wdl):
        out.append({"title": f"Wins / draws / losses (draw: {rule.describe()})",
                    "html": wdl.style.hide(axis="index").set_uuid(f"{spec.id}_wdl").to_html(doctype_html=False)})
    tests = ranks_and_tests(df, spec.pairs, value=spec.metric, greater_is_better=better)
    if "average_rank" in tests:
        average = tests["average_rank"]
        ranks = pd.DataFrame({"method": list(average), "average rank": list(average.values())})
        title = f"Average ranks over {tests['datasets']} data sets (1 = best)"
        if "friedman_p" in tests:
            title += (f"; Friedman chi2 = {tests['friedman_statistic']:.2f}, p = {tests['friedman_p']:.3g}; "
                      f"Nemenyi critical difference = {tests['nemenyi_cd']:.2f}")
        out.append({"title": title, "html": ranks.style.hide(axis="index").format(precision=2)
                   .set_uuid(f"{spec.id}_ranks").to_html(doctype_html=False)})
    if tests.get("wilcoxon"):
        out.append({"title": "Wilcoxon signed-rank tests of the paper's pairs",
                    "html": pd.DataFrame(tests["wilcoxon"]).style.hide(axis="index").format(precision=3)
                   .set_uuid(f"{spec.id}_wilcoxon").to_html(doctype_html=False)})
    return out, _cd_diagram(df, spec.metric, better)


def _cd_diagram(df, metric, better):
    """Demsar's critical-difference diagram of a paper's table (``_compare.cd_diagram``): SVG text, or None."""
    from ._compare import cd_diagram

    wide = df.pivot_table(index="dataset", columns="method", values=metric).dropna()
    return cd_diagram(wide, better, min_datasets=3, size=(6, 1.8))


def _figures(dirs, figure_stores=(), loaded=None, tables_built=None):
    """{figure name: its title and inline SVG} of every registered figure the results can draw, drawn in one
    pass over the results, then one pass over each of ``figure_stores`` alone (stores that hold what figures
    draw and no table, or a sweep whose grid must not merge with a table's); none without matplotlib."""
    from ._figures import build_figures
    from ._spec import registered_figures

    by_stem = {Path(f.stem).name: f for f in registered_figures()}
    tmp = Path(tempfile.mkdtemp(prefix="eemrepro-figures-"))
    out = {}
    try:
        written = []
        for k, group in enumerate([list(dirs), *([d] for d in figure_stores)]):
            try:
                # The report's own records and tables are not read or built again for its figures.
                written += build_figures(group, tmp / str(k), loaded=loaded if k == 0 else None,
                                         tables_built=tables_built if k == 0 else None)
            except (ValueError, RuntimeError):
                continue  # no matplotlib, or nothing drawable there: the pages go without those figures
        for path in written:
            spec = by_stem.get(path.stem)
            if path.suffix == ".svg" and spec is not None:
                text = path.read_text(encoding="utf-8")
                out.setdefault(spec.name, {"title": spec.title or spec.name, "svg": text[text.index("<svg"):]})
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def _store_provenance(dirs, prov):
    """Hosts, data checksums and each store's config (from its run files: the ``Records``' provenance ``prov``),
    for the provenance block."""
    import yaml

    checksums, configs = {}, []
    for d in dirs:
        checksums.update(prov["data_sha256"].get(str(Path(d)), {}))
        if str(Path(d)) in prov["run_configs"]:
            configs.append({"store": str(d), "text": yaml.safe_dump(prov["run_configs"][str(Path(d))],
                                                                    sort_keys=False)})
    lines = [f"hosts: {', '.join(prov['hosts']) or 'not recorded'}"]
    if checksums:
        lines.append("data sha256: " + ", ".join(f"{k} {v[:12]}" for k, v in sorted(checksums.items())))
    return lines, configs


def _readings_html(df, columns):
    """A table's readings (``_readings.readings_frames``) as an HTML table, or None."""
    if df is None or df.empty:
        return None
    shown = df[[c for c, _, _ in columns]].rename(columns={c: h for c, h, _ in columns})
    return shown.to_html(index=False, classes="readings", escape=True, na_rep="", border=0)


def _asked_for(spec, df, unfinished):
    """(the rows of a paper's table on data sets the results hold or their configs name, the other data sets):
    a published cell with no record anywhere in its data set is of a data set nobody asked for here."""
    run = df["layers"] > 0 if spec.builder == "correlation" else df["status"] != "missing"
    asked = set(df.loc[run, "dataset"]) | {d for d, _ in unfinished}
    keep = df["dataset"].isin(asked).to_numpy()
    return df[keep].reset_index(drop=True), list(dict.fromkeys(df.loc[~keep, "dataset"]))


def build_report(dirs, out, tolerance=None, selection="best-of-grid", figures=True, force=False, figure_stores=(),
                 warn=None):
    """Write the report site for the results in ``dirs`` to ``out``; return the pages written.

    ``figure_stores``: results folders whose figures the pages show too, each read alone (MELM's restarts and
    embeddings, EEM's h sweep: `make report` passes them).

    A file of ``out`` with a page's name that an earlier report did not write
    is not overwritten unless ``force`` (:class:`ReportExistsError`).

    ``tolerance``: a tolerance (pin) file whose cells turn an outside cell into
    a pinned one, with its reason (``make report`` uses ``.ci/published-pins.yaml``).
    None: the pins committed beside the baselines the results name, if they are
    the committed stores of a checkout (``_check.baseline_pins``); the index says which.

    Besides the papers' pages: ``benchmark.html``, every data set and model of
    the results at the metric their config selects by (``_benchmark``), ranked,
    with its critical-difference diagram. ``warn``: called with each line a
    reader must not miss (stores of different protocols combined).
    """
    from jinja2 import Environment

    from ._compare import new_methods
    from ._render import provenance_lines

    judged = _judge(dirs, tolerance, selection, warn)
    built, prov = judged.built, judged.prov
    extra_provenance, store_configs = _store_provenance(dirs, prov)
    drawn = _figures(dirs, figure_stores, loaded=(judged.records, prov), tables_built=built) if figures else {}
    benchmark = _benchmark_sections(dirs, judged.parts, judged.unfinished, selection)
    nav = [p for p in registered_papers() if any(s.id in built and not built[s.id].empty for s in p.tables)]
    if any(new_methods(s, built[s.id]) for p in registered_papers() for s in p.tables if s.id in built):
        nav.append({"id": "comparison"})  # the page of the models the papers have not (``_comparison_page``)
    if benchmark:
        nav.append({"id": "benchmark"})  # every data set and model of the results (``_benchmark_sections``)
    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    page, index = env.from_string(_template_text("page.html")), env.from_string(_template_text("index.html"))
    css, js = _template_text("report.css"), _template_text("report.js")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # What every page carries: the navigation, the provenance of the results, the style and the script.
    common = {"papers": nav, "provenance": provenance_lines(prov, "")[1:] + extra_provenance,
              "configs": store_configs, "css": css, "js": js}
    pages, summary = [], []
    for paper in registered_papers():
        made = _paper_page(paper, judged, selection, page, drawn, out, common)
        if made is not None:
            pages.append((f"{paper.id}.html", made[0]))
            summary.append(made[1])
    comparison = _comparison_page(built, selection, page, nav, prov, extra_provenance, store_configs, css, js)
    if comparison is not None:
        pages.append(("comparison.html", comparison))
    if benchmark:
        pages.append(("benchmark.html", _benchmark_page(page, benchmark, common)))
    pins = judged.pins
    pages.insert(0, ("index.html", index.render(papers=summary, results=", ".join(str(d) for d in dirs), css=css,
                                                comparison=comparison is not None, benchmark=bool(benchmark),
                                                pins=str(pins) if pins is not None else None)))
    return _write_site(out, pages, force, [os.path.normpath(str(d)) for d in dirs])


@dataclass(frozen=True)
class _Judged:
    """The results as the report's pages show them (``_judge``)."""

    records: pd.DataFrame
    prov: dict
    pins: object  # the committed pins of the baselines the cells were judged against, or None
    unfinished: set
    parts: dict  # the records by experiment kind
    built: dict  # {table id: every registered table that applies, built once (the full layout)}
    chosen: dict  # {table id: its per-fold chosen points}, where the table's rule chooses per fold
    verdicts: dict  # {(table, data set, method): (verdict, reason)}
    readings: dict  # {table id: its readings' frame}
    claims: list


def _judge(dirs, tolerance, selection, warn):
    """The results of ``dirs`` read once, every table built once and judged: its cells under the tables' rules and
    the pins, the claims, and the readings (each a store of its own, judged in worker processes while this one
    builds the tables)."""
    from ._build import protocol_warnings
    from ._check import Tolerance, baseline_pins, check, load_tolerance
    from ._claims import evaluate_claims
    from ._readings import readings_frames, start_readings
    from ._records import SITE_COLUMNS, Records, split_by_kind
    from ._tables import build_table, table_applies

    specs = [s for paper in registered_papers() for s in paper.tables]
    started = start_readings(dirs, specs, selection)
    records, prov = Records(dirs, columns=SITE_COLUMNS).read()
    for line in protocol_warnings(prov) if warn is not None else ():
        warn(line)
    pins = baseline_pins(prov) if tolerance is None else None
    tolerance = tolerance if tolerance is not None else pins
    unfinished = {tuple(c) for c in prov["unfinished"]}
    parts = split_by_kind(records)
    # Every table once (the full layout); the checks and the claims judge these same tables. Where a
    # table's rule chooses per fold, its choices are kept for the drill-down.
    chosen = {}
    built = {spec.id: build_table(spec, parts[spec.kind], selection, unfinished=unfinished, layout="full",
                                  per_fold=chosen.setdefault(spec.id, {}) if spec.builder == "metric" else None)
             for spec in specs if spec.kind in parts and table_applies(spec, parts[spec.kind])}
    chosen = {k: v for k, v in chosen.items() if v}
    reuse = built if selection == "best-of-grid" else None  # what check compares
    key = lambda c: (c.table, c.dataset, c.method)
    default = {key(c): c for c in check(parts, Tolerance(), unfinished=unfinished, built=reuse)}
    pinned = {key(c): c for c in check(parts, load_tolerance(tolerance), unfinished=unfinished, built=reuse)} \
        if tolerance \
        else default
    verdicts = _verdicts(default, pinned)
    readings = readings_frames(dirs, specs, list(default.values()), selection, primary_tables=built,
                               started=started)
    claims = evaluate_claims(parts, selection=selection, unfinished=unfinished, built=built)
    return _Judged(records, prov, pins, unfinished, parts, built, chosen, verdicts, readings, claims)


_CLAIM_CLASS = {"confirmed": "v-within", "not confirmed": "v-outside", "not measured": "v-notrun",
                "too few data sets": "v-notrun"}


def _paper_page(paper, judged, selection, page, drawn, out, common):
    """(a paper's page, its row of the index), or None where the results show none of its tables."""
    tables = [t for t in (_table_section(spec, judged, selection) for spec in paper.tables) if t is not None]
    if not tables:
        return None
    verdicts = judged.verdicts
    verdict_list = [v for (t, _, _), (v, _) in verdicts.items() if any(t == x["id"] for x in tables)]
    row = {"id": paper.id, "title": paper.title, "tables": len(tables),
           **{k: verdict_list.count(v) for k, v in (("within", "within"), ("pinned", "pinned"),
                                                     ("outside", "outside"), ("missing", "missing"))}}
    mine_claims = [{"id": c.claim.id, "wording": c.claim.wording, "table": c.claim.table, "verdict": c.verdict,
                    "numbers": c.numbers, "source": c.claim.source, "cls": _CLAIM_CLASS[c.verdict]}
                   for c in judged.claims if c.paper == paper.id]
    findings = Path("docs") / "reproduction" / f"{paper.id}.md"  # the checkout's findings page, if any
    # What the mark means, on a page one of whose cells shows it.
    shown = [judged.built[t["id"]] for t in tables if t["id"] in judged.built]
    legend = FITS_LEGEND if any(marked(df) for df in shown) else None
    html = page.render(title=paper.title, paper_id=paper.id, fits_legend=legend, claims=mine_claims,
                       findings=os.path.relpath(findings.resolve(), out.resolve()) if findings.is_file() else None,
                       tables=tables, figures=[drawn[f.name] for f in paper.figures if f.name in drawn],
                       intro=None, **common)
    return html, row


def _table_section(spec, judged, selection):
    """A paper's table as its page shows it (for ``page.html``), or None where the results show none of it."""
    from ._readings import COLUMNS
    from ._tables import table_title, timeout_limit

    if spec.id not in judged.built:
        return None
    mine, df, verdicts = judged.parts[spec.kind], judged.built[spec.id], judged.verdicts
    if df.empty:
        return None
    # The paper's data sets that nothing here ran or asked for are named, not shown as rows of "–".
    shown, collapsed = _asked_for(spec, df, judged.unfinished)
    if shown.empty:
        return None
    if spec.builder == "metric":
        per_fold = judged.chosen[spec.id] if spec.id in judged.chosen else _per_fold_points(spec, mine, selection,
                                                                                            judged.unfinished)
        display, classes, tips, details = _metric_section(spec, shown, verdicts, mine, per_fold)
        summaries, cd = _summaries(spec, df)
        wide = _wide_section(spec, shown, verdicts)
    else:
        wide = None
        display, classes, tips, details = _other_section(spec, shown, verdicts, timeout_limit(judged.records))
        summaries, cd = [], None
    counted = [verdicts[k][0] for k in verdicts if k[0] == spec.id]
    counts = ", ".join(f"{counted.count(v)} {v}" for v in VERDICTS if counted.count(v))
    notes = list(spec.notes)
    if collapsed:
        notes.insert(0, f"Not shown: {len(collapsed)} data set(s) of the paper's table that these results "
                        f"neither hold nor name ({', '.join(collapsed)}).")
    return {"id": spec.id, "title": table_title(spec, df, selection),
            "html": _styled(display, classes, tips, spec.id), "counts": counts or "not checked",
            "wide": wide, "rows": len(display),
            "details": json.dumps(details).replace("</", "<\\/"), "summaries": summaries, "cd": cd,
            "notes": notes, "readings": _readings_html(judged.readings.get(spec.id), COLUMNS)}


def _benchmark_page(page, benchmark, common):
    """``benchmark.html``: every data set and model of the results (``_benchmark_sections``)."""
    legend = FITS_LEGEND if any(s.get("marked") for s in benchmark) else None
    return page.render(
        title="Benchmark: every model on every data set of these results", paper_id="benchmark",
        fits_legend=legend, claims=[], findings=None, tables=benchmark, figures=[], benchmark=True,
        intro="Every data set the results hold (a paper's, the registry's or a file of your own) and every "
              "model (the baselines' too), at the metric the configs select by: mean±std over the test folds "
              "at the selected grid point, '–' where a model has no value; then the models ranked.",
        **common)


def _benchmark_sections(dirs, parts, unfinished, selection):
    """The sections of ``benchmark.html``: each benchmark table (``_benchmark``) of the results, every cell
    clickable for its folds, then its comparison (``_comparison_section``); [] when there is none."""
    from ._benchmark import SIDES, benchmark_frame, benchmarks, compared
    from ._benchmark import comparison_title as bench_title
    from ._records import SITE_COLUMNS, Records
    from ._tables import build_table, table_title

    sections = []
    for bench in benchmarks(dirs):
        spec = bench.spec
        own_parts, own_unfinished = parts, unfinished
        if bench.dirs is not None:  # a group of its own among the folders: its records alone
            own_parts, prov = Records(list(bench.dirs), columns=SITE_COLUMNS).read_by_kind()
            own_unfinished = {tuple(c) for c in prov["unfinished"]}
        mine = own_parts.get(spec.kind)
        if mine is None:
            continue
        per_fold = {}
        df = benchmark_frame(bench, build_table(spec, mine, selection, unfinished=own_unfinished, layout="run",
                                                per_fold=per_fold))
        if df is None:
            continue
        display, classes, tips, details = _metric_section(spec, df, {}, mine, per_fold, judged=False)
        counts = f"{df['dataset'].nunique()} data set(s), {df['method'].nunique()} model(s)"
        sections.append({"id": spec.id, "title": table_title(spec, df, selection),
                         "html": _styled(display, classes, tips, spec.id), "counts": counts,
                         "wide": _wide_section(spec, df, {}, judged=False),
                         "rows": len(display), "details": json.dumps(details).replace("</", "<\\/"),
                         "summaries": [], "cd": None, "notes": list(spec.notes), "readings": None,
                         "marked": marked(df)})
        section = _comparison_section(spec, df, selection, new=compared(bench, df), sides=SIDES,
                                      title=bench_title(spec, selection))
        if section is not None:
            sections.append(section)
    return sections


def _comparison_section(spec, df, selection, new=None, sides=None, title=None):
    """A page section of the statistics of a metric table's models (``_compare``): average ranks, Friedman and
    Nemenyi, the pairs' wins/draws/losses and Wilcoxon-Holm, the critical-difference diagram; None when there
    is nothing to compare. ``new``, ``sides``, ``title``: as ``_build._write_comparison``'s."""
    from ._build import comparison_title
    from ._compare import (
        MIN_WILCOXON,
        PAPER_SIDES,
        RANKS_NOTE,
        TESTS_NOTE,
        cd_diagram,
        compare_methods,
        compared_sides,
        comparison_frame,
    )

    result = compare_methods(spec, df, new=new)
    if result is None:
        return None
    better = result["rule"].greater_is_better
    who, heading = compared_sides(result, sides or PAPER_SIDES)
    n, of = len(result["datasets"]), len(result["of"])
    counts = f"{who} Ranks and tests on {n} of {of} data sets (those where every compared model has a value: " \
             f"{', '.join(result['datasets']) or 'none'})"
    ranks = result.get("ranks")
    html = ranks.style.hide(axis="index").format(precision=2).set_uuid(f"{spec.id}_cmp_ranks") \
        .to_html(doctype_html=False) if ranks is not None else "<p>no data set where every model ran</p>"
    pairs_title = f"{heading}: wins / draws / losses (a draw: equal at the printed {result['digits']} " \
                  f"decimal(s)), Wilcoxon signed-rank p (none under {MIN_WILCOXON} data sets) and Holm-adjusted p"
    pairs = comparison_frame(result).style.hide(axis="index").format(precision=3, na_rep="–")
    notes = []
    if "friedman" in result:
        stat, p = result["friedman"]
        notes.append(f"Friedman chi2 = {stat:.2f}, p = {p:.3g}; Nemenyi critical difference (alpha 0.05) = "
                     f"{result['cd']:.2f}: two models whose average ranks differ by less are not told apart.")
    notes += [RANKS_NOTE.format(digits=result["digits"]), TESTS_NOTE]
    return {"id": f"{spec.id}-comparison", "title": title or comparison_title(spec, selection),
            "counts": counts, "html": html, "details": "[]",
            "summaries": [{"title": pairs_title, "html": pairs.set_uuid(f"{spec.id}_cmp_pairs")
                          .to_html(doctype_html=False)}],
            "cd": cd_diagram(result["wide"], better, highlight=result["new"] if result["baselines"] else (),
                             name=f"{spec.id}-cd"),
            "notes": notes, "readings": None}


def _comparison_page(built, selection, page, nav, prov, extra_provenance, store_configs, css, js):
    """comparison.html: models the papers have not (a user's), ranked with each paper's own (``_compare``)
    in every metric table that holds them, with a critical-difference diagram; None when there are none."""
    from ._render import provenance_lines

    sections = []
    for spec in (s for paper in registered_papers() for s in paper.tables):
        df = built.get(spec.id)
        if df is None or spec.builder != "metric":
            continue
        section = _comparison_section(spec, df, selection)
        if section is not None:
            sections.append(section)
    if not sections:
        return None
    return page.render(title="New models ranked with the papers'", paper_id="comparison", fits_legend=None,
                       papers=nav, claims=[], findings=None,
                       provenance=provenance_lines(prov, "")[1:] + extra_provenance, configs=store_configs,
                       tables=sections, figures=[], css=css, js=js,
                       intro="Models that a paper's table does not have (yours, run with 'baselines:' naming the "
                             "paper's results) beside the paper's own, on the data sets where all of them ran. The "
                             "paper's pages keep its own comparisons.")


#: The files of an output folder that ``eemrepro report`` wrote, and from which results (``_outputs.publish``).
SITE_MANIFEST = "report-manifest.json"


class ReportExistsError(FilesExistError):
    """The output folder holds files of the site's names that ``report`` did not write from these results."""


def _write_site(out, pages, force, sources):
    """Write ``pages`` ([(name, html)]) into ``out`` from the results folders ``sources``: written into a staging
    folder and moved into place (``_outputs.publish``), a file of the same name that an earlier report did not
    write from these results not overwritten unless ``force`` (nothing is written then)."""
    staging = Path(tempfile.mkdtemp(prefix=".report-", dir=out))
    try:
        built = []
        for name, html in pages:
            (staging / name).write_text(html, encoding="utf-8")
            built.append(staging / name)
        try:
            return publish(built, out, SITE_MANIFEST, sources, force, "eemrepro report")
        except FilesExistError as exc:
            raise ReportExistsError(str(exc)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
