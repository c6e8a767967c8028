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

import pandas as pd
import yaml

from ..experiments import get_metric
from ..papers import registered_papers
from ._build import protocol_warnings
from ._check import COMMITTED_PINS, Tolerance, baseline_pins, check, load_tolerance
from ._claims import evaluate_claims
from ._compare import (
    BAYES_NOTE,
    MIN_WILCOXON,
    RANKS_NOTE,
    SIGNED_RANK_SAMPLES,
    TESTS_NOTE,
    compared_sides,
    comparison_frame,
    new_methods,
    rope_text,
    svg_inline,
)
from ._document import benchmark_parts, document
from ._figures import build_figures
from .._kept import file_state, kept, tree_state
from ._outputs import FilesExistError, publish_built
from ._readings import COLUMNS, readings_frames, start_readings
from ._records import SITE_COLUMNS, Records, split_by_kind, with_baselines
from ._render import fits_legends, provenance_lines
from ._shapes import VERDICTS, Table
from ._spec import registered_figures
from ._tables import timeout_limit



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


def _styled(display, classes, tooltips, uuid):
    """A display frame as an HTML table through pandas' Styler: verdict classes per cell, reasons as tooltips."""
    styler = display.style.hide(axis="index").set_td_classes(classes).set_uuid(uuid)
    if tooltips is not None and tooltips.to_numpy().any():
        styler = styler.set_tooltips(tooltips)
    return styler.to_html(doctype_html=False)


def _summaries(summary):
    """A paper's ``Summary`` (its method comparisons on a metric table) as small Styler tables, and a CD diagram
    (SVG)."""
    if summary is None:
        return [], None
    spec, wdl, tests = summary.table.spec, summary.wdl, summary.tests
    out = []
    if len(wdl):
        out.append({"title": f"Wins / draws / losses (draw: {summary.rule.describe()})",
                    "html": wdl.style.hide(axis="index").set_uuid(f"{spec.id}_wdl").to_html(doctype_html=False)})
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
    out += _bayes_summaries(summary.bayes, spec, "the paper's pairs", spec.id)
    return out, svg_inline(summary.diagram)


def _bayes_summaries(bayes, spec, who, uuid):
    """Bayesian tests (``_compare.bayes_tests``' dict: a paper's pairs, ``Summary.bayes``, or a comparison's) as
    small Styler tables, their rope stated: the pairs' signed-rank tests, each data set's correlated t-tests."""
    if bayes is None:
        return []
    rope = rope_text(bayes, get_metric(spec.metric))
    out = [{"title": f"Bayesian signed-rank tests of {who} across the data sets (rope {rope}): P(model better), "
                     "P(rope) (practically equivalent), P(baseline better)",
            "html": bayes["pairs"].style.hide(axis="index").format(precision=3)
           .set_uuid(f"{uuid}_bayes").to_html(doctype_html=False)}]
    if len(bayes["by_dataset"]):
        out.append({"title": f"Bayesian correlated t-tests of {who} on each data set's test folds (rope {rope})",
                    "html": bayes["by_dataset"].style.hide(axis="index").format(precision=3)
                   .set_uuid(f"{uuid}_bayes_by_dataset").to_html(doctype_html=False)})
    return out


def _figures(dirs, figure_stores=(), loaded=None, tables_built=None):
    """{figure name: its title and inline SVG} of every registered figure the results can draw, drawn in one
    pass over the results, then one pass over each of ``figure_stores`` alone (stores that hold what figures
    draw and no table, or a sweep whose grid must not merge with a table's); none without matplotlib."""
    by_stem = {Path(f.stem).name: f for f in registered_figures()}
    tmp = Path(tempfile.mkdtemp(prefix="eemrepro-figures-"))
    out = {}
    try:
        written = []
        for k, group in enumerate([list(dirs), *([d] for d in figure_stores)]):
            try:
                # The report's own records and tables are not read or built again for its figures.
                written += build_figures(group, tmp / str(k), loaded=loaded if k == 0 else None,
                                         tables_built=tables_built if k == 0 else None, diagrams=False)
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
    checksums, configs = {}, []
    for d in dirs:
        checksums.update(prov["data_sha256"].get(str(Path(d)), {}))
        if str(Path(d)) in prov["run_configs"]:
            configs.append({"store": str(d), "text": yaml.safe_dump(prov["run_configs"][str(Path(d))],
                                                                    sort_keys=False)})
    lines = [f"hosts: {', '.join(prov['hosts']) or 'not recorded'}"]
    if prov.get("machines"):
        lines.append(f"machines: {'; '.join(prov['machines'])}")
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
    run = Table(spec).ran_here(df)
    asked = set(df.loc[run, "dataset"]) | {d for d, _ in unfinished}
    keep = df["dataset"].isin(asked).to_numpy()
    return df[keep].reset_index(drop=True), list(dict.fromkeys(df.loc[~keep, "dataset"]))


def build_report(dirs, out, tolerance=None, selection="best-of-grid", figures=True, force=False, figure_stores=(),
                 warn=None):
    """Write the report site for the results in ``dirs`` to ``out``; return the files written (the pages, then
    the files of the critical-difference diagrams they show, ``<stem>_cd.svg`` and ``.pdf``).

    ``figure_stores``: results folders whose figures the pages show too, each read alone (a paper's sweeps,
    restarts and embeddings: `make report` passes them).

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
    # What the pages are made of, kept for the next report of these folders unchanged (``_kept``): the folders
    # (with their baselines and the figures' stores), the tolerance given, or the pins committed beside the
    # baselines that the report would judge them against.
    folders = with_baselines([*dirs, *figure_stores])[0]
    state = tree_state(folders)
    # (and the page's link to the checkout's findings, from the working folder to ``out``).
    candidates = [tolerance, *(Path(os.path.realpath(d)).parent.parent / COMMITTED_PINS for d in folders)]
    pins = [file_state(p) for p in candidates if p is not None and Path(p).is_file()]
    what = None if state is None else f"report {state} {[str(d) for d in dirs]} {[str(d) for d in figure_stores]} " \
        f"{tolerance!r} {pins} {selection} {figures} {os.path.relpath(Path.cwd(), Path(out).resolve())} " \
        f"{sorted(p.name for p in (Path('docs') / 'reproduction').glob('*.md'))}"
    pages, lines = kept(what, lambda: _report_pages(dirs, Path(out), tolerance, selection, figures, figure_stores))
    for line in lines if warn is not None else ():
        warn(line)
    return _write_site(Path(out), pages, force, [os.path.normpath(str(d)) for d in dirs])


def _report_pages(dirs, out, tolerance, selection, figures, figure_stores):
    """([(page name, html)], the lines a reader must not miss) of ``build_report``."""
    from jinja2 import Environment

    lines = []
    read_once = {}  # each folder read once: the pages' records and the benchmark's groups of folders
    judged = _judge(dirs, tolerance, selection, lines.append, read_once)
    built, prov = judged.built, judged.prov
    extra_provenance, store_configs = _store_provenance(dirs, prov)
    drawn = _figures(dirs, figure_stores, loaded=(judged.records, prov), tables_built=built) if figures else {}
    benchmark = _benchmark_sections(dirs, judged.parts, judged.unfinished, selection, read_once)
    read_once.clear()
    nav = [p for p in registered_papers() if any(s.id in built and not built[s.id].empty for s in p.tables)]
    if any(new_methods(s, built[s.id]) for p in registered_papers() for s in p.tables if s.id in built):
        nav.append({"id": "comparison"})  # the page of the models the papers have not (``_comparison_page``)
    if benchmark:
        nav.append({"id": "benchmark"})  # every data set and model of the results (``_benchmark_sections``)
    env = Environment(autoescape=True, trim_blocks=True, lstrip_blocks=True)
    page, index = env.from_string(_template_text("page.html")), env.from_string(_template_text("index.html"))
    css, js = _template_text("report.css"), _template_text("report.js")
    # What every page carries: the navigation, the provenance of the results, the style and the script.
    common = {"papers": nav, "provenance": provenance_lines(prov, "")[1:] + extra_provenance,
              "configs": store_configs, "css": css, "js": js}
    pages, summary = [], []
    for paper in registered_papers():
        made = _paper_page(paper, judged, page, drawn, out, common)
        if made is not None:
            pages.append((f"{paper.id}.html", made[0]))
            summary.append(made[1])
    comparison = _comparison_page(judged.doc, page, nav, extra_provenance, store_configs, css, js)
    if comparison is not None:
        pages.append(("comparison.html", comparison))
    if benchmark:
        pages.append(("benchmark.html", _benchmark_page(page, benchmark, common)))
    pages += _diagram_files(judged.doc, benchmark)
    pins = judged.pins
    pages.insert(0, ("index.html", index.render(papers=summary, results=", ".join(str(d) for d in dirs), css=css,
                                                comparison=comparison is not None, benchmark=bool(benchmark),
                                                pins=str(pins) if pins is not None else None)))
    return pages, lines


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
    doc: object  # the ``Document``: each table's section, the check's cells, the claims, the readings
    limit: float  # the fit budget the timed-out records ran into (``timeout_limit``)


def _judge(dirs, tolerance, selection, warn, read_once=None):
    """The results of ``dirs`` read once, every table built once and judged: its cells under the tables' rules and
    the pins, the claims, and the readings (each a store of its own, judged in worker processes while this one
    builds the tables)."""
    specs = [s for paper in registered_papers() for s in paper.tables]
    started = start_readings(dirs, specs, selection)
    records, prov = Records(dirs, columns=SITE_COLUMNS, read_once=read_once).read()
    for line in protocol_warnings(prov) if warn is not None else ():
        warn(line)
    pins = baseline_pins(prov) if tolerance is None else None
    tolerance = tolerance if tolerance is not None else pins
    unfinished = {tuple(c) for c in prov["unfinished"]}
    parts = split_by_kind(records)
    # Every table once (the full layout); the checks and the claims judge these same tables. Where a
    # table's rule chooses per fold, its choices are kept for the drill-down.
    chosen = {}
    tables = [Table(spec, selection) for spec in specs]
    built = {t.id: t.build(parts[t.spec.kind], unfinished=unfinished, layout="full",
                           per_fold=chosen.setdefault(t.id, {}))
             for t in tables if t.spec.kind in parts and t.applies(parts[t.spec.kind])[1]}
    chosen = {k: v for k, v in chosen.items() if v}
    # What check compares (the full layout under the default rule), built once for both judgements below.
    reuse = built if selection == "best-of-grid" else {
        t.id: t.build(parts[t.spec.kind], unfinished=unfinished, layout="full")
        for t in (Table(s) for s in specs if s.tolerance is not None)
        if t.spec.kind in parts and t.applies(parts[t.spec.kind])[1]}
    key = lambda c: (c.table, c.dataset, c.method)
    default = {key(c): c for c in check(parts, Tolerance(), unfinished=unfinished, built=reuse)}
    pinned = {key(c): c for c in check(parts, load_tolerance(tolerance), unfinished=unfinished, built=reuse)} \
        if tolerance \
        else default
    verdicts = _verdicts(default, pinned)
    readings = readings_frames(dirs, specs, list(default.values()), selection, primary_tables=built,
                               started=started)
    claims = evaluate_claims(parts, selection=selection, unfinished=unfinished, built=built)
    limit = timeout_limit(records)
    doc = document(specs, built, prov, selection, list(default.values()), claims, readings, limit)
    return _Judged(records, prov, pins, unfinished, parts, built, chosen, verdicts, doc, limit)


_CLAIM_CLASS = {"confirmed": "v-within", "not confirmed": "v-outside", "not measured": "v-notrun",
                "too few data sets": "v-notrun"}


def _paper_page(paper, judged, page, drawn, out, common):
    """(a paper's page, its row of the index), or None where the results show none of its tables."""
    tables = [t for t in (_table_section(spec, judged) for spec in paper.tables) if t is not None]
    if not tables:
        return None
    verdicts = judged.verdicts
    verdict_list = [v for (t, _, _), (v, _) in verdicts.items() if any(t == x["id"] for x in tables)]
    row = {"id": paper.id, "title": paper.title, "tables": len(tables),
           **{k: verdict_list.count(v) for k, v in (("within", "within"), ("pinned", "pinned"),
                                                     ("outside", "outside"), ("missing", "missing"))}}
    mine_claims = [{"id": c.claim.id, "wording": c.claim.wording, "table": c.claim.table, "verdict": c.verdict,
                    "numbers": c.numbers, "source": c.claim.source, "cls": _CLAIM_CLASS[c.verdict]}
                   for c in judged.doc.claims if c.paper == paper.id]
    findings = Path("docs") / "reproduction" / f"{paper.id}.md"  # the checkout's findings page, if any
    # What the mark means, on a page one of whose cells shows it.
    shown = [judged.built[t["id"]] for t in tables if t["id"] in judged.built]
    legend = "; ".join(fits_legends(*shown)) or None
    html = page.render(title=paper.title, paper_id=paper.id, fits_legend=legend, claims=mine_claims,
                       findings=os.path.relpath(findings.resolve(), out.resolve()) if findings.is_file() else None,
                       tables=tables, figures=[drawn[f.name] for f in paper.figures if f.name in drawn],
                       intro=None, **common)
    return html, row


def _table_section(spec, judged):
    """A paper's table as its page shows it (for ``page.html``), or None where the results show none of it."""
    content = judged.doc.sections.get(spec.id)  # the table's section: what ``tables`` writes of it too
    if content is None:
        return None
    mine, df, verdicts, table = judged.parts[spec.kind], content.frame, judged.verdicts, content.table
    # The paper's data sets that nothing here ran or asked for are named, not shown as rows of "–".
    shown, collapsed = _asked_for(spec, df, judged.unfinished)
    if shown.empty:
        return None
    per_fold = judged.chosen[spec.id] if spec.id in judged.chosen else table.chosen_points(mine, judged.unfinished)
    section = table.shape.site_section(table, shown, verdicts, mine, per_fold, judged.limit, matrix=content.matrix)
    display, classes, tips, details = (section[k] for k in ("display", "classes", "tips", "details"))
    summaries, cd = _summaries(content.summary)
    counted = [verdicts[k][0] for k in verdicts if k[0] == spec.id]
    counts = ", ".join(f"{counted.count(v)} {v}" for v in VERDICTS if counted.count(v))
    notes = list(spec.notes)
    if collapsed:
        notes.insert(0, f"Not shown: {len(collapsed)} data set(s) of the paper's table that these results "
                        f"neither hold nor name ({', '.join(collapsed)}).")
    return {"id": spec.id, "title": content.title,
            "html": _styled(display, classes, tips, spec.id), "counts": counts or "not checked",
            "wide": section["wide"], "rows": len(display),
            "details": json.dumps(details).replace("</", "<\\/"), "summaries": summaries, "cd": cd,
            "cd_file": f"{content.summary.stem}_cd" if cd else None, **_summary_posterior(content.summary),
            "notes": notes, "readings": _readings_html(judged.doc.readings.get(spec.id), COLUMNS)}


def _summary_posterior(summary):
    """A paper's summary's posterior figure (``Summary.posterior``: its pairs' signed-rank posteriors) as a page
    section's keys: the SVG, its caption and the name of its files; {} without one."""
    if summary is None or summary.posterior is None:
        return {}
    rope = rope_text(summary.bayes, get_metric(summary.table.spec.metric))
    return {"posterior": svg_inline(summary.posterior),
            "posterior_caption": _posterior_caption(None, rope, "each of the paper's pairs"),
            "posterior_file": f"{summary.stem}_posterior"}


def _benchmark_page(page, benchmark, common):
    """``benchmark.html``: every data set and model of the results (``_benchmark_sections``)."""
    legend = "; ".join(dict.fromkeys(text for s in benchmark for text in s.get("legends", ()))) or None
    return page.render(
        title="Benchmark: every model on every data set of these results", paper_id="benchmark",
        fits_legend=legend, claims=[], findings=None, tables=benchmark, figures=[], benchmark=True,
        intro="Every data set the results hold (a paper's, the registry's or a file of your own) and every "
              "model (the baselines' too), at the metric the configs select by: mean±std over the test folds "
              "at the selected grid point, the best of each data set in bold (ties at the printed digits too), "
              "'–' where a model has no value; then the models ranked.",
        **common)


def _benchmark_sections(dirs, parts, unfinished, selection, read_once=None):
    """The sections of ``benchmark.html``: each benchmark table (``_benchmark``) of the results, every cell
    clickable for its folds, its matrix's best cells marked, then its comparison (``_comparison_section``); []
    when there is none. ``read_once``: the folders read already (``Records``')."""
    sections = []
    for part in benchmark_parts(dirs, parts, unfinished, selection, read_once):
        content = part.section  # what ``tables`` writes of it too
        table, df, spec = content.table, content.frame, content.spec
        section = table.shape.site_section(table, df, {}, part.records, part.per_fold, part.limit, judged=False,
                                           matrix=content.matrix)
        display, classes, tips, details = (section[k] for k in ("display", "classes", "tips", "details"))
        counts = f"{df['dataset'].nunique()} data set(s), {df['method'].nunique()} model(s)"
        sections.append({"id": spec.id, "title": content.title,
                         "html": _styled(display, classes, tips, spec.id), "counts": counts,
                         "wide": section["wide"],
                         "rows": len(display), "details": json.dumps(details).replace("</", "<\\/"),
                         "summaries": [], "cd": None, "notes": list(spec.notes), "readings": None,
                         "legends": fits_legends(df)})
        if content.comparison is not None:
            sections.append(_comparison_section(content.comparison))
    return sections


def _comparison_section(comparison):
    """A page section of a ``Comparison`` (the statistics of a metric table's models, ``_compare``): average
    ranks, Friedman and Nemenyi, the pairs' wins/draws/losses and Wilcoxon-Holm, the critical-difference
    diagram; ``tables`` writes the same as ``<stem>_comparison.md``."""
    spec, result = comparison.spec, comparison.result
    who, heading = compared_sides(result, comparison.sides)
    n, of = len(result["datasets"]), len(result["of"])
    counts = f"{who} Ranks and tests on {n} of {of} data sets (those where every compared model has a value: " \
             f"{', '.join(result['datasets']) or 'none'})"
    ranks = result.get("ranks")
    html = ranks.style.hide(axis="index").format(precision=2).set_uuid(f"{spec.id}_cmp_ranks") \
        .to_html(doctype_html=False) if ranks is not None else "<p>no data set where every model ran</p>"
    rope = rope_text(result, get_metric(spec.metric))
    pairs_title = f"{heading}: wins / draws / losses (a draw: equal at the printed {result['digits']} " \
                  f"decimal(s)), Wilcoxon signed-rank p (none under {MIN_WILCOXON} data sets) and Holm-adjusted p; " \
                  f"the Bayesian signed-rank test across the data sets both have, rope {rope}: P(model better), " \
                  "P(rope) (practically equivalent), P(baseline better)"
    pairs = comparison_frame(result).style.hide(axis="index").format(precision=3, na_rep="–")
    notes = []
    if "friedman" in result:
        stat, p = result["friedman"]
        notes.append(f"Friedman chi2 = {stat:.2f}, p = {p:.3g}; Nemenyi critical difference (alpha 0.05) = "
                     f"{result['cd']:.2f}: two models whose average ranks differ by less are not told apart.")
    notes += [RANKS_NOTE.format(digits=result["digits"]), TESTS_NOTE,
              BAYES_NOTE.format(rope=rope, samples=SIGNED_RANK_SAMPLES)]
    summaries = [{"title": pairs_title, "html": pairs.set_uuid(f"{spec.id}_cmp_pairs").to_html(doctype_html=False)}]
    summaries += _bayes_summaries(result, spec, heading[0].lower() + heading[1:], f"{spec.id}_cmp")[1:]
    return {"id": f"{spec.id}-comparison", "title": comparison.title,
            "counts": counts, "html": html, "details": "[]", "summaries": summaries,
            "cd": svg_inline(comparison.diagram),
            "cd_file": f"{comparison.stem}_cd" if comparison.diagram else None,
            "posterior": svg_inline(comparison.posterior), "posterior_caption": _posterior_caption(result, rope),
            "posterior_file": f"{comparison.stem}_posterior" if comparison.posterior else None,
            "notes": notes, "readings": None, "comparison": comparison}


def _posterior_caption(result, rope, who=None):
    """What the posterior simplexes of a comparison show (``_compare.posterior_files``); ``who``: the pairs drawn
    in words (default a comparison's: ``_compare.plotted_pairs``)."""
    who = who or ("each of your models against each of the others" if result["baselines"] else
                  f"{result['new'][0]} against each of the others")
    return (f"The Bayesian signed-rank test's posterior, {who}: each of {SIGNED_RANK_SAMPLES:,} seeded draws is a "
            "point of the triangle whose corners are 'the first model better', 'practically equivalent' (rope "
            f"{rope}) and 'the second better'; the orange lines part the regions where each is the most probable, "
            "and each corner's number is the share of the draws in its region.")


def _comparison_page(doc, page, nav, extra_provenance, store_configs, css, js):
    """comparison.html: models the papers have not (a user's), ranked with each paper's own (``_compare``)
    in every metric table that holds them (the ``Document``'s comparisons, those ``tables`` writes), with a
    critical-difference diagram; None when there are none."""
    sections = [_comparison_section(s.comparison) for s in doc.sections.values() if s.comparison is not None]
    if not sections:
        return None
    return page.render(title="New models ranked with the papers'", paper_id="comparison", fits_legend=None,
                       papers=nav, claims=[], findings=None,
                       provenance=provenance_lines(doc.prov, "")[1:] + extra_provenance, configs=store_configs,
                       tables=sections, figures=[], css=css, js=js,
                       intro="Models that a paper's table does not have (yours, run with 'baselines:' naming the "
                             "paper's results) beside the paper's own, on the data sets where all of them ran. The "
                             "paper's pages keep its own comparisons.")


def _diagram_files(doc, benchmark):
    """[(file name, bytes)]: the critical-difference diagrams and the posteriors the pages show, as SVG and PDF
    files beside them (the files ``tables`` writes: ``<summary>_cd``, ``<table>_cd``, ``<summary>_posterior``,
    ``<table>_posterior``), each drawn once (``Summary.diagram``, ``Comparison.diagram``, their ``posterior``)."""
    drawn = [part for s in doc.sections.values() for part in (s.summary, s.comparison) if part is not None]
    drawn += [s["comparison"] for s in benchmark if s.get("comparison") is not None]
    return [(f"{part.stem}_{kind}.{fmt}", figure[fmt]) for part in drawn
            for kind, figure in (("cd", part.diagram), ("posterior", part.posterior)) if figure is not None
            for fmt in ("svg", "pdf")]


#: The files of an output folder that ``eemrepro report`` wrote, and from which results (``_outputs.publish``).
SITE_MANIFEST = "report-manifest.json"


class ReportExistsError(FilesExistError):
    """The output folder holds files of the site's names that ``report`` did not write from these results."""


def _write_site(out, pages, force, sources):
    """Write ``pages`` ([(name, html or a file's bytes)]) into ``out`` from the results folders ``sources``:
    written into a staging folder and moved into place (``_outputs.publish``), a file of the same name that an
    earlier report did not write from these results not overwritten unless ``force`` (nothing is written then)."""
    def make(staging):
        for name, content in pages:
            if isinstance(content, bytes):
                (staging / name).write_bytes(content)
            else:
                (staging / name).write_text(content, encoding="utf-8")
        return [staging / name for name, _ in pages]

    try:
        return publish_built(make, out, SITE_MANIFEST, sources, force, "eemrepro report")
    except FilesExistError as exc:
        raise ReportExistsError(str(exc)) from None
