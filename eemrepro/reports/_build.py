"""``build_tables``: every registered table the stored records support, in one folder."""

import os
from collections import Counter
from pathlib import Path

from tabulate import tabulate

from ..experiments import get_metric
from ._benchmark import BENCHMARK, PUBLISHED_COLUMNS, benchmark_tables, benchmarks
from ._check import check, describe_rule, summary_line
from ._claims import evaluate_claims
from ._compare import (
    BAYES_NOTE,
    SIGNED_RANK_SAMPLES,
    bayes_markdown,
    comparison_frame,
    comparison_markdown,
    comparison_notes,
    rope_text,
    write_cd,
)
from ._document import benchmark_section, document
from .._kept import kept, stable_text, tree_state
from ._matrix import latex_table
from ._outputs import FilesExistError, publish_built
from ._readings import COLUMNS, reading_stores, readings_frames, start_readings
from ._records import with_baselines
from ._render import left_out_lines, metric_cell, provenance_lines, write_table
from ._spec import registered_tables
from ._tables import rows_by_datasets

LAYOUTS = ("run", "full")


#: Which results folders wrote each table file of an output folder.
MANIFEST = "tables-manifest.json"


class TablesExistError(FilesExistError):
    """The output folder holds table files built from other results (overwritten only with ``force``)."""


#: What ``tables`` writes without ``--format``: every format (docs/reports.md lists the files).
FORMATS = ("md", "csv", "latex")


def build_tables(dirs, out, formats=FORMATS, selection="best-of-grid", layout="run", tables=None,
                 force=False, warn=None):
    """Write the tables of the records in ``dirs`` to ``out``; return the paths written.

    ``layout``: ``run`` shows the cells that were run, and writes the
    benchmark table of the results (``_benchmark``: every data set they hold,
    whatever it is, x every model, with its comparison); ``full`` the papers'
    whole layout alone: every published cell as well (a cell not run reads
    "–"), no benchmark. ``tables``: only these table ids (default every
    registered table the records hold, and the benchmark; ``benchmark`` names
    it). ``warn``: called with each line a reader must not miss (two stores of
    different protocols combined), besides the tables' provenance.

    The tables are built in a temporary folder inside ``out`` and moved into
    place when all are written. A file of ``out`` that ``MANIFEST`` does not
    record as built from these same results folders (another store's tables,
    or a file this command did not write) is not overwritten unless ``force``:
    :class:`TablesExistError` names them and nothing is written.
    """
    sources = [os.path.normpath(str(d)) for d in dirs]
    try:
        return publish_built(lambda staging: _build_tables(dirs, staging, formats, selection, layout, tables, warn),
                             out, MANIFEST, sources, force, "eemrepro tables")
    except FilesExistError as exc:
        raise TablesExistError(str(exc)) from None


def _build_tables(dirs, out, formats, selection, layout, tables, warn=None):
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {list(LAYOUTS)}, got {layout!r}")
    specs = [s for s in registered_tables() if tables is None or s.id in tables]
    unknown = sorted(set(tables or ()) - {s.id for s in specs} - {BENCHMARK})
    if unknown:
        raise ValueError(f"unknown table(s) {unknown}; registered: {[s.id for s in registered_tables()]} "
                         f"and {BENCHMARK}")
    # What the files are made of, kept for the next command that reads these folders unchanged (``_kept``).
    folders = with_baselines(dirs)[0]
    state = tree_state(folders)
    what = None if state is None else f"tables {state} {[str(d) for d in dirs]} {stable_text(specs)} " \
                                      f"{selection} {layout} {None if tables is None else sorted(tables)}"
    doc, benches, limit = kept(what, lambda: _tables_document(dirs, specs, selection, layout, tables))
    for line in protocol_warnings(doc.prov) if warn is not None else ():
        warn(line)
    return _write_document(doc, Path(out), formats, limit, dirs, specs, benches)


def _tables_document(dirs, specs, selection, layout, tables):
    """(the ``Document`` of the tables of ``specs`` over ``dirs``, the benchmarks [(their ``Section``, the
    provenance of the folders each was read from)], the fit budget the timed-out records ran into): what
    ``_write_document`` writes, its figures drawn."""
    # The readings (each a store of its own) are judged in worker processes while this one builds the tables.
    started = start_readings(dirs, specs)
    # The papers' layout is theirs alone; what was run gets the benchmark of every data set and model too.
    benches = benchmarks(dirs) if layout == "run" and (tables is None or BENCHMARK in tables) else []
    # Every table's cells, made a group of data sets at a time; the check.md tables are the default selection's.
    rules = list(dict.fromkeys([selection, "best-of-grid"]))
    shared = [b.spec for b in benches if b.dirs is None]
    results, made, applies, limit = rows_by_datasets(dirs, specs + shared, rules)
    prov = results.provenance
    built, checked = {}, {}
    for spec in specs:
        if spec.id in applies:
            built[spec.id] = made[(spec.id, selection)].frame(layout)
            checked[spec.id] = built[spec.id] if layout == "full" and selection == "best-of-grid" else \
                made[(spec.id, "best-of-grid")].frame("full")
    cells, claims, readings = None, (), None
    if prov["records"]:
        # check.md compares the full layout under the default selection; the claims read the tables written.
        cells = check(None, unfinished=results.unfinished, tables=[s.id for s in specs], built=checked)
        claims = evaluate_claims(None, selection=selection, unfinished=results.unfinished, built=built)
        readings = readings_frames(dirs, specs, cells, primary_tables=built, started=started)
    doc = document(specs, built, prov, selection, cells, claims, readings, limit)
    sections = [(benchmark_section(bench, df, selection, limit), bench_prov)
                for bench, df, bench_prov in benchmark_tables(benches, made, prov, selection)]
    _draw([*doc.sections.values(), *(section for section, _ in sections)])
    return doc, sections, limit


def _draw(sections):
    """Each section's summary and comparison figures drawn now (their cached ``diagram`` and ``posterior``): a kept
    document carries them, and the next command over unchanged folders draws none."""
    for section in sections:
        for part in (section.summary, section.comparison):
            if part is not None:
                part.diagram, part.posterior  # noqa: B018  (cached properties: drawn once, here)


def _write_document(doc, out, formats, limit, dirs, specs, benches):
    """The files of a ``Document`` in ``formats``: each table with its comparison and summary, each benchmark
    (``benches``: [(a benchmark's ``Section``, its provenance)]), check.md of the tables of ``specs``, the readings
    and claims.md."""
    written = []
    for section in doc.sections.values():
        written += _write_paper_table(section, out, formats, doc.prov, limit)
    for section, bench_prov in benches:
        written += _write_benchmark(section, out, formats, bench_prov, limit)
    if doc.cells is not None:
        if doc.cells:  # no paper's table holds these data sets: nothing to check, no check.md
            written.append(_write_check(doc.cells, out, doc.prov, specs))
        written += _write_readings(dirs, out, doc.prov, specs, doc.readings, formats)
        if doc.claims:
            written.append(_write_claims(doc, out))
    return written


def _write_paper_table(section, out, formats, prov, limit):
    """A paper's table (its ``Section``: the content the report draws too) in each format, with its comparison
    with new models and its summary, where it shows."""
    table, df, spec, matrix = section.table, section.frame, section.spec, section.matrix
    columns, wide = table.columns(limit)
    if matrix is not None:  # the data sets x methods view with the matrix's best cells in bold
        wide = (*wide[:2], metric_cell(spec.metric, limit, table.digits, best=matrix.best))
    written = [write_table(df, out / spec.stem, fmt, section.title, prov, columns, wide, section.notes)
               for fmt in formats]
    if matrix is not None and "latex" in formats:
        path = out / f"{spec.stem}_matrix.tex"
        path.write_text(matrix.latex(provenance_lines(prov, section.title.removesuffix(" vs published"),
                                                      _matrix_notes(section.notes, spec.stem))))
        written.append(path)
    compared = _write_comparison(section.comparison, out, formats, prov)
    if section.summary is not None:
        # The summary ranks the paper's columns; it names the file that ranks the others, where there is one.
        ranked = next((p.name for p in sorted(compared, key=lambda p: p.suffix != ".md")), None)
        written.append(_write_summary(section.summary, out / f"{spec.summary}.md", ranked))
        written += write_cd(section.summary.diagram, out / f"{section.summary.stem}_cd")
        written += write_cd(section.summary.posterior, out / f"{section.summary.stem}_posterior")
        if section.summary.bayes is not None and "csv" in formats:
            written.append(_write_ttests(section.summary.bayes, out / f"{section.summary.stem}_ttests.csv"))
    return written + compared


def _matrix_notes(notes, stem):
    """A paper's table's notes as its ``<stem>_matrix.tex`` says them: the long table's cell note (the published
    value, the delta, the selected point) is its own."""
    said = [f"this file: the reproduced values alone, data sets x methods, each cell as {stem}.md prints it without "
            f"its delta or selected point (the published values and deltas: {stem}.md); '–' not run or no data here"]
    return said + [n for n in notes if not n.startswith("cell:")]


def _write_ttests(bayes, path):
    """``path``: each pair's Bayesian correlated t-test on each data set (``bayes_tests``' ``by_dataset``: the
    rows the Markdown prints, every column: the folds and repeats paired, the test share, the rope)."""
    bayes["by_dataset"].to_csv(path, index=False, float_format="%.6g", lineterminator="\n")
    return path


def _write_claims(doc, out):
    """claims.md: each paper claim the records can judge (the ``Document``'s), its verdict and the numbers
    behind it."""
    title = "The papers' claims, judged on the reproduced tables"
    lines = [f"# {provenance_lines(doc.prov, title)[0]}", ""]
    lines += [f"- {line}" for line in provenance_lines(doc.prov, "")[1:]] + [""]
    for paper in dict.fromkeys(r.paper for r in doc.claims):
        lines += [f"## {paper}", "", "| claim | table | verdict | numbers |", "|---|---|---|---|"]
        lines += [f"| {r.claim.wording} | {r.claim.table} | {r.verdict} | {r.numbers} |"
                  for r in doc.claims if r.paper == paper]
        lines += [""] + [f"- {r.claim.id}: \"{r.claim.source}\"" for r in doc.claims if r.paper == paper] + [""]
    path = out / "claims.md"
    path.write_text("\n".join(lines))
    return path


def protocol_warnings(prov, left_out=True):
    """The provenance's lines a reader must not miss on the terminal: stores of different protocols combined, and
    (``left_out``) stored records a folder's config.yaml no longer names, which the tables do not read."""
    return [f"WARNING, protocols differ: {line}" for line in prov.get("protocol_differences", ())] + \
        (left_out_lines(prov) if left_out else [])


def _write_benchmark(section, out, formats, prov, limit):
    """``<stem>.md/.csv/.tex`` of a benchmark's ``Section`` (``_document.benchmark_section``) and its comparison
    (``<stem>_comparison``)."""
    df, table, spec = section.frame, section.table, section.spec
    columns, (index, across, _) = table.columns(limit)
    # No published cell to show beside: neither its columns nor a delta in the cells.
    columns = [c for c in columns if c[0] not in PUBLISHED_COLUMNS]
    wide = (index, across, metric_cell(spec.metric, limit, table.digits, delta=False))
    ranked = _write_comparison(section.comparison, out, formats, prov)
    notes = section.notes + [f"average ranks, Friedman/Nemenyi, wins/draws/losses and Wilcoxon-Holm: {p.name}"
                             for p in ranked if p.suffix == ".md"]
    return [write_table(df, out / spec.stem, fmt, section.title, prov, columns, wide, notes, fill="–",
                        matrix=section.matrix) for fmt in formats] + ranked


def summary_markdown(summary, compared=None):
    """A paper's ``Summary`` as Markdown: wins/draws/losses, ranks, Friedman, Wilcoxon. ``compared``: the file
    that ranks the models the paper has not (``_write_comparison``), named where the summary leaves them out."""
    table, wdl, tests = summary.table, summary.wdl, summary.tests
    lines = [f"# Method comparisons on reproduced {get_metric(table.spec.metric).title} ({table.selection})", "",
             f"Data sets with every method: {tests['datasets']}", ""]
    if summary.extra:
        lines += [f"Not in the paper, not ranked here: {', '.join(summary.extra)}"
                  + (f" (ranked with the paper's models in {compared})" if compared else ""), ""]
    if len(wdl):
        lines += [f"## Wins / draws / losses (draw = {summary.rule.describe()})", "",
                  tabulate(wdl.values.tolist(), headers=list(wdl.columns), tablefmt="github"), ""]
    if "average_rank" in tests:
        lines += ["## Average rank (1 = best)", ""]
        lines += [f"- {m}: {r:.2f}" for m, r in tests["average_rank"].items()]
    if "friedman_p" in tests:
        lines += ["", f"Friedman chi2 = {tests['friedman_statistic']:.3f}, p = {tests['friedman_p']:.3g}; "
                      f"Nemenyi critical difference (alpha 0.05) = {tests['nemenyi_cd']:.2f}"]
    if tests.get("wilcoxon"):
        lines += ["", "## Wilcoxon signed-rank tests of the paper's pairs", ""]
        lines += [f"- {t['pair']}: median difference {t['median_difference']:+.2f}, p = {t['wilcoxon_p']:.3g}"
                  for t in tests["wilcoxon"]]
    if summary.bayes is not None:
        metric = get_metric(table.spec.metric)
        lines += [""] + bayes_markdown(summary.bayes, metric, "The paper's pairs")
        lines += [BAYES_NOTE.format(rope=rope_text(summary.bayes, metric), samples=SIGNED_RANK_SAMPLES)]
    return "\n".join(lines) + "\n"


def _write_summary(summary, path, compared=None):
    """``<summary>.md``: the paper's ``Summary`` (``summary_markdown``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(summary_markdown(summary, compared))
    return path


def _write_comparison(comparison, out, formats, prov):
    """``<stem>_comparison.md`` (and ``.csv``, ``.tex``: its pairs, whatever columns they hold; with the CSV, each
    pair's correlated t-test on each data set, ``<stem>_comparison_ttests.csv``) of a ``Comparison``
    (``_compare``), its critical-difference diagram ``<stem>_cd.svg`` and ``.pdf`` and its pairs' signed-rank
    posteriors ``<stem>_posterior.svg`` and ``.pdf``; nothing without one (a table of the paper's models alone)."""
    if comparison is None:
        return []
    spec, result = comparison.spec, comparison.result
    written = []
    if "md" in formats:
        head = provenance_lines(prov, comparison.title)
        text = comparison_markdown(spec, result, head[0], sides=comparison.sides)
        text += "\n" + "\n".join(f"- {line}" for line in head[1:]) + "\n"
        path = out / f"{spec.stem}_comparison.md"
        path.write_text(text)
        written.append(path)
    if "csv" in formats:
        path = out / f"{spec.stem}_comparison.csv"
        comparison_frame(result).to_csv(path, index=False, float_format="%.6g")
        written.append(path)
    if "latex" in formats:
        path = out / f"{spec.stem}_comparison.tex"
        path.write_text(latex_table(comparison_frame(result), provenance_lines(prov, comparison.title),
                                    comparison_notes(result)))
        written.append(path)
    if "csv" in formats:
        written.append(_write_ttests(result, out / f"{spec.stem}_comparison_ttests.csv"))
    return written + write_cd(comparison.diagram, out / f"{comparison.stem}_cd") + \
        write_cd(comparison.posterior, out / f"{comparison.stem}_posterior")


def _write_readings(dirs, out, prov, specs, frames, formats):
    """``<stem>_readings.md`` (and ``.csv``) of each checked table a stored reading covers (``frames``: the
    ``Document``'s readings)."""
    stores = ", ".join(str(folder) for _, _, folder in reading_stores(dirs))
    written = []
    for spec in specs:
        df = frames.get(spec.id)
        if df is None:
            continue
        title = f"Readings of {spec.id}: cells within the default tolerance, each reading beside the primary one"
        notes = ["readings: SPEC section 8; each is stored under <results>/readings/<name> "
                 "(eemrepro run CONFIG --reading NAME); check judges the primary reading only",
                 f"reading stores (each with its own provenance): {stores}"]
        for fmt in [f for f in formats if f in ("md", "csv")]:
            written.append(write_table(df, out / f"{spec.stem}_readings", fmt, title, prov, COLUMNS, None, notes))
    return written


def _write_check(cells, out, prov, specs):
    """check.md: per table, cells within the default tolerance (``cells``, from ``check``, one at least) and
    every cell not."""

    lines = [f"# {provenance_lines(prov, 'Reproduced vs published cells (default tolerance)')[0]}", ""]
    lines += [f"- {line}" for line in provenance_lines(prov, "")[1:]]
    rules = {s.id: describe_rule(s) for s in specs if s.tolerance is not None and any(c.table == s.id for c in cells)}
    if rules:
        lines += ["- tolerance: " + "; ".join(f"{t}: {r}" for t, r in rules.items())]
    lines.append("")
    for table in dict.fromkeys(c.table for c in cells):
        group = [c for c in cells if c.table == table]
        counts = Counter(c.outcome for c in group)
        lines += [f"## {table}: {summary_line(group)}", "",
                  f"pass {counts['pass']}, fail {counts['fail']}, missing {counts['missing']}, "
                  f"skipped {counts['skipped']}", ""]
        bad = [c for c in group if c.outcome == "fail"]
        if bad:
            lines += ["| data set | method | reproduced | published | delta | tolerance |", "|---|---|---|---|---|---|"]
            lines += [f"| {c.dataset} | {c.method} | {c.reproduced:.3g} | {c.published:.3g} | "
                      f"{c.reproduced - c.published:+.3g} | {c.tolerance:.3g} |" for c in bad]
            lines.append("")
    path = out / "check.md"
    out.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path
