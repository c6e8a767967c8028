"""A metric table as a reader expects it: data sets x models, each cell mean±std, the best of each data set marked.

``Matrix`` is made once per table (``Matrix.of``, the ``Document``'s section holds it) from its ``Table``: the
printed decimals, the metric's direction and the draw rule (``_stats.DrawRule.best``: every model whose value
prints as the best of its data set is best, ties at the printed digits too, where two models at least have a
value there), the cell's mark ``†k`` where k of
its fits failed or ran past the budget, and the average ranks of the comparison as its last row. Markdown and
LaTeX are rendered here, the report's page draws the same cells and marks (``_shapes._metric``): no renderer
decides a mark of its own. ``latex_table`` writes any frame (a comparison's pairs, whatever its columns) as a
booktabs table.
"""

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._stats import DrawRule
from ._render import FAILED_MARK, UNCONVERGED_MARK, plain_cell, unconverged_fits, unfinished_fits

#: How a LaTeX table is read: booktabs' rules, and what its marks mean (under the rule).
BOLD_NOTE = "bold: the best of each data set as printed (ties at the printed digits too)"
MARK_NOTE = "k of the cell's fits failed or ran past the fit budget"
UNCONVERGED_NOTE = "k of the cell's fits stopped short of convergence (the solver's iteration limit)"
RANK_LABEL = "average rank"

_LATEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
          "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "±": r"$\pm$", "–": "--",
          FAILED_MARK: r"$^\dagger$", UNCONVERGED_MARK: r"$^\ddagger$"}


def latex_escape(text):
    """``text`` as LaTeX typesets it literally (its special characters escaped, ± and – as LaTeX writes them)."""
    return "".join(_LATEX.get(c, c) for c in str(text))


def mark_text(counts):
    """A cell's marks in text: " †n" where n of its fits did not finish, " ‡k" where k did not converge."""
    n, k = counts
    return (f" {FAILED_MARK}{n}" if n else "") + (f" {UNCONVERGED_MARK}{k}" if k else "")


@dataclass(frozen=True)
class Matrix:
    """Data sets x models of a metric table: each cell's text (``plain_cell``) and mark count, the best cells,
    the average ranks (1 = best) on ``ranked`` of the data sets."""

    datasets: tuple
    methods: tuple
    text: dict  # {(data set, method): "mean±std" / "–" / "> N"}
    marks: dict  # {(data set, method): (fits that did not finish, fits not converged)}, where either > 0
    best: frozenset  # {(data set, method)}: the best of its data set as printed
    ranks: dict = field(default_factory=dict)  # {method: average rank}
    ranked: int = 0  # the data sets the ranks are taken on (those where every model has a value)
    rank_note: str = ""  # which models the ranks rank, where not every one (a paper's summary ranks its columns)

    @classmethod
    def of(cls, table, df, ranks=None, limit=None, ranked=None, rank_note=""):
        """The matrix of ``df`` (a metric table's frame, one row per cell) read under ``table`` (``Table``: its
        value column, printed decimals and draw rule). ``ranks``: each method's average rank (a Series or a
        mapping), taken on ``ranked`` data sets (default all); ``rank_note``: which models they rank, in words
        (the LaTeX says it under the table)."""
        value, digits, rule = table.value, table.digits, table.draw_rule
        datasets = tuple(dict.fromkeys(df["dataset"]))
        methods = tuple(dict.fromkeys(df["method"]))
        text, marks, best = {}, {}, set()
        ok = df["status"] == "ok"
        for dataset, rows in df.groupby("dataset", sort=False):
            values = rows[value].where(ok[rows.index])
            if values.notna().sum() < 2:
                continue  # a lone value is the best of nothing: no mark
            mask = rule.best(values)
            best.update((dataset, m) for m, b in zip(rows["method"], mask, strict=True) if b)
        for r in df.to_dict("records"):
            key = (r["dataset"], r["method"])
            text[key] = plain_cell(r, value, digits, limit)
            if unfinished_fits(r) or unconverged_fits(r):
                marks[key] = (unfinished_fits(r), unconverged_fits(r))
        ranks = {} if ranks is None else {m: float(ranks[m]) for m in methods if m in ranks}
        return cls(datasets, methods, text, marks, frozenset(best), ranks,
                   len(datasets) if ranked is None else ranked, rank_note if ranks else "")

    def rank_label(self):
        return RANK_LABEL if self.ranked == len(self.datasets) else \
            f"{RANK_LABEL} ({self.ranked} of {len(self.datasets)} data sets)"

    def best_ranks(self):
        """The methods of the best average rank at two decimals (ties too)."""
        methods = list(self.ranks)
        mask = DrawRule(2, greater_is_better=False).best(pd.Series([self.ranks[m] for m in methods]))
        return {m for m, b in zip(methods, mask, strict=True) if b}

    def cell(self, key, bold, mark, fill="–"):
        """A cell's text with its best mark (``bold(text)``) and its ``mark(counts)`` (``marks``')."""
        text = self.text.get(key, fill)
        text = bold(text) if key in self.best else text
        return text + (mark(self.marks[key]) if key in self.marks else "")

    def markdown(self):
        """The matrix as a GitHub Markdown table (best in bold, ``†k`` after the cell), its rank row last."""
        from tabulate import tabulate

        bold = lambda t: f"**{t}**"
        rows = [[d, *(self.cell((d, m), bold, mark_text) for m in self.methods)] for d in self.datasets]
        rows += self._rank_row(bold)
        return tabulate(rows, headers=["data set", *self.methods], tablefmt="github", disable_numparse=True)

    def latex(self, head=()):
        """The matrix as a booktabs tabular (``\\usepackage{booktabs}``): best in bold, ``†k`` as a superscript
        explained under the table, the average-rank row under a rule (what it ranks said under the table where
        ``rank_note`` says it); ``head``: comment lines above it."""
        bold = lambda t: f"\\textbf{{{latex_escape(t)}}}"
        def mark(counts):
            return "".join(f"$^{{\\{sign} {k}}}$" for sign, k in zip(("dagger", "ddagger"), counts, strict=True) if k)

        rows = [[latex_escape(d), *(self._latex_cell((d, m), bold, mark) for m in self.methods)]
                for d in self.datasets]
        notes = [BOLD_NOTE] + [f"$^{{\\{sign} k}}$: {note}" for i, (sign, note) in
                               enumerate((("dagger", MARK_NOTE), ("ddagger", UNCONVERGED_NOTE)))
                               if any(counts[i] for counts in self.marks.values())]
        if self.rank_note:
            notes.append(latex_escape(f"{self.rank_label()}: {self.rank_note} (1 = best)"))
        return latex_tabular(["data set", *self.methods], rows, head, notes, "l" + "r" * len(self.methods),
                             footer=self._rank_row(bold, escape=True))

    def _latex_cell(self, key, bold, mark):
        text = self.text.get(key, "–")
        shown = bold(text) if key in self.best else latex_escape(text)
        return shown + (mark(self.marks[key]) if key in self.marks else "")

    def _rank_row(self, bold, escape=False):
        """[the average-rank row] (the best rank in bold), or [] without ranks."""
        if not self.ranks:
            return []
        best = self.best_ranks()

        def rank(m):
            if m not in self.ranks:
                return "--" if escape else "–"
            text = f"{self.ranks[m]:.2f}"
            return bold(text) if m in best else text

        return [[latex_escape(self.rank_label()) if escape else self.rank_label(), *map(rank, self.methods)]]


def latex_tabular(headers, rows, head=(), notes=(), columns=None, footer=()):
    """A booktabs tabular of ``rows`` (cells already LaTeX) under ``headers`` (escaped here), ``footer`` rows
    under a rule, ``notes`` (LaTeX) as footnote lines under the last rule; ``head``: comment lines above it."""
    columns = columns or "l" * len(headers)
    n = len(headers)
    lines = [f"% {line}" for line in head] + ["% needs \\usepackage{booktabs}", f"\\begin{{tabular}}{{{columns}}}",
                                              "\\toprule", " & ".join(latex_escape(h) for h in headers) + " \\\\",
                                              "\\midrule"]
    lines += [" & ".join(row) + " \\\\" for row in rows]
    if footer:
        lines += ["\\midrule"] + [" & ".join(row) + " \\\\" for row in footer]
    lines.append("\\bottomrule")
    lines += [f"\\multicolumn{{{n}}}{{l}}{{\\footnotesize {note}}} \\\\" for note in notes]
    lines.append("\\end{tabular}")
    return "\n".join(lines) + "\n"


def latex_value(v):
    """A frame's value as a LaTeX cell, whatever its column: an integer as it is, a float at two decimals (under
    1 in size, a p or a probability: three significant digits), a missing value "--", text escaped."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "--"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return format(float(v), ".2f" if abs(v) >= 1 else ".3g")
    return latex_escape(v)


def latex_table(frame, head=(), notes=()):
    """Every column of ``frame`` as a booktabs tabular (its values by ``latex_value``), ``notes`` under it."""
    rows = [[latex_value(v) for v in row] for row in frame.itertuples(index=False)]
    columns = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in frame.columns)
    return latex_tabular(list(frame.columns), rows, head, [latex_escape(n) for n in notes], columns)
