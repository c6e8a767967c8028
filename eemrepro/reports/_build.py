"""``build_tables``: every table the stored records support, in one folder."""

import math
from pathlib import Path

import numpy as np
from scipy import stats

from ._render import _fmt, _signed, gmean_cell, load_results, write_table
from ._tables import correlation_table, gmean_table, ranks_and_tests, time_table, wins_draws_losses

_GMEAN_COLUMNS = [
    ("dataset", "data set", None), ("method", "method", None), ("status", "status", None),
    ("gmean", "GMean %", _fmt), ("gmean_std", "std", _fmt), ("published", "paper", _fmt),
    ("published_std", "paper std", _fmt), ("delta", "delta", _signed), ("point", "selected point", None),
    ("repeats", "repeats", None),
]


def _has(records, predicate):
    return any(predicate(r) for r in records)


def build_tables(dirs, out, formats=("md", "csv"), selection="best-of-grid"):
    """Write the tables of the records in ``dirs`` to ``out``; return the paths written."""
    records, prov = load_results(dirs)
    out = Path(out)
    written = []
    grid = [r for r in records if r["model"] != "dcs-correlation"]

    def emit(df, stem, title, columns, wide=None, notes=()):
        for fmt in formats:
            written.append(write_table(df, out / stem, fmt, title, prov, columns, wide, notes))

    if grid:
        t4 = gmean_table(records, selection=selection)
        emit(t4, "eem_table4_gmean", f"EEM Table 4: GMean (%), reproduced ({selection}) vs published",
             _GMEAN_COLUMNS, wide=("dataset", "method", gmean_cell),
             notes=["cell: reproduced mean±std (delta = reproduced - published); '–' not run or no data here"])
        t5 = time_table(records, selection=selection)
        if t5["seconds"].notna().any():
            ratio_notes = []
            for x in ("sig", "nsig", "rbf"):
                w, e = t5[t5["method"] == f"WELM{x}"], t5[t5["method"] == f"EEM{x}"]
                both = w.merge(e, on="dataset", suffixes=("_w", "_e"))
                both = both[np.isfinite(both["seconds_w"]) & np.isfinite(both["seconds_e"])]
                if len(both):
                    ours = float(np.exp(np.mean(np.log(both["seconds_w"] / both["seconds_e"]))))
                    pub = both[np.isfinite(both["published_w"]) & np.isfinite(both["published_e"])]
                    ratios = pub["published_w"] / pub["published_e"]
                    theirs = float(np.exp(np.mean(np.log(ratios)))) if len(pub) else math.nan
                    ratio_notes.append(f"WELM{x}/EEM{x} training time, geometric mean over {len(both)} data sets: "
                                       f"{ours:.2f} here, {theirs:.2f} in the paper")
            emit(t5, "eem_table5_time", "EEM Table 5: training seconds at the selected grid point", [
                ("dataset", "data set", None), ("method", "method", None),
                ("seconds", "seconds", lambda v: _fmt(v, 2)), ("published", "paper", lambda v: _fmt(v, 1)),
                ("timing", "timing", None), ("point", "selected point", None),
            ], wide=("dataset", "method", lambda r: _fmt(r["seconds"], 2)),
                notes=["seconds differ by machine: compare ratios between methods of the same run"] + ratio_notes)
        wdl = wins_draws_losses(t4)
        tests = ranks_and_tests(t4)
        lines = [f"# Method comparisons on reproduced GMean ({selection})", "",
                 f"Data sets with every method: {tests['datasets']}", ""]
        if len(wdl):
            from tabulate import tabulate

            lines += ["## Wins / draws / losses (draw = equal at one decimal)", "",
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
        path = out / "summary.md"
        out.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        written.append(path)
    if _has(records, lambda r: r.get("dcs_gaussian") is not None):
        for crit in ("gaussian", "kde"):
            t6 = gmean_table(records, selection=f"dcs-{crit}", published_name="eem_table6_dcs_selection_gmean",
                             criterion=crit)
            emit(t6, f"eem_table6_dcs_{crit}", f"EEM Table 6 ({'a' if crit == 'gaussian' else 'b'}): GMean (%) "
                 f"with the grid point chosen by the {crit} D_CS of the training projection", _GMEAN_COLUMNS,
                 wide=("dataset", "method", gmean_cell))
    if _has(records, lambda r: r["model"] == "dcs-correlation"):
        t1 = correlation_table(records)
        emit(t1, "eem_table1_spearman", "EEM Table 1: Spearman rho of D_CS and (m+ - m-)^2/(S+ + S-)", [
            ("dataset", "data set", None), ("h", "h", None), ("spearman", "rho", lambda v: _fmt(v, 3)),
            ("published", "paper", lambda v: _fmt(v, 3)), ("delta", "delta", lambda v: _signed(v, 3)),
            ("var_share", "var. share", lambda v: _fmt(v, 3)), ("layers", "layers", None), ("pairs", "pairs", None),
        ], wide=("dataset", "h", lambda r: f"{_fmt(r['spearman'], 3)} ({_signed(r['delta'], 3)})"),
            notes=_variance_share_notes(t1))
    if records:
        written.append(_write_check(records, out, prov))
    return written


def _variance_share_notes(t1):
    """How rho follows the variance term's share of D_CS over the measured cells."""
    notes = ["var. share: median over the pairs of ln(((S+ + S-)/2)/sqrt(S+ S-)) / D_CS, the part of D_CS "
             "that is not a function of the ratio"]
    both = t1.dropna(subset=["spearman", "var_share"])
    if len(both) > 2:
        rho = stats.spearmanr(both["spearman"], both["var_share"]).statistic
        notes.append(f"Spearman of rho and var. share over the {len(both)} measured cells: {rho:.2f}")
    return notes


def _write_check(records, out, prov):
    """check.md: per table, cells within the default tolerance and every cell that is not."""
    from collections import Counter

    from ._check import check, summary_line
    from ._render import provenance_lines

    cells = check(records)
    lines = [f"# {provenance_lines(prov, 'Reproduced vs published cells (default tolerance)')[0]}", ""]
    lines += [f"- {line}" for line in provenance_lines(prov, "")[1:]]
    lines += ["- tolerance: |delta| <= max(2 points, published std) for GMean; |delta rho| <= 0.1 for Spearman", ""]
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
