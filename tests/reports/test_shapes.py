"""A table's shape is a registered plug-in (issue 66, item 2): a new shape is one class, registered.

The toy shape here counts each cell's stored outer-fold records, a number known in closed form (test folds x
repeats x grid points); its paper publishes one cell right and one wrong. Registered with no other edit of the
package, its table is written as Markdown, CSV and LaTeX, checked (check.md and ``check``), and drawn in the
report; a table naming no registered shape is refused in one line.
"""

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro.cli import app
from eemrepro.papers import Paper, TableSpec, register_paper, unregister_paper
from eemrepro.reports import TableShape, register_shape, registered_tables, unregister_shape

runner = CliRunner()
FOLDS, REPEATS = 3, 2
#: Each model's grid points: LR two values of C, the dummy one strategy.
POINTS = {"LR": 2, "Dummy": 1}


class RecordCount(TableShape):
    """Per (data set, model): how many outer-fold records the store holds."""

    name = "toy-count"

    def value_column(self, spec):
        return "records"

    def greater_is_better(self, spec):
        return True

    def digits(self, spec):
        return 0

    def required_column(self, spec):
        return None  # its cells are enough: it reads no metric

    def rows(self, records, table, unfinished=(), per_fold=None):
        outer = records[records["inner"].isna()]
        counts = outer.groupby(["dataset", "model"], observed=True).size()
        return {(str(d), str(m)): {"dataset": str(d), "method": str(m), "status": "ok", "records": int(n)}
                for (d, m), n in counts.items()}, {}

    def frame(self, rows, extra, table, layout="full"):
        rows = {k: dict(v) for k, v in rows.items()}
        for p in table.spec.published_frame().itertuples():
            if layout == "full" or (p.dataset, p.method) in rows:
                rows.setdefault((p.dataset, p.method), {"dataset": p.dataset, "method": p.method,
                                                        "status": "missing", "records": np.nan})
                rows[(p.dataset, p.method)]["published"] = float(p.records)
        return pd.DataFrame(list(rows.values()), columns=["dataset", "method", "status", "records", "published"])

    def columns(self, table, limit):
        number = lambda v: "–" if v != v else f"{v:.0f}"
        return ([("dataset", "data set", None), ("method", "method", None), ("records", "records", number),
                 ("published", "paper", number)],
                ("dataset", "method", lambda r: number(r["records"])))


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A store of one CSV x two scikit-learn models, and a registered toy paper whose table has the toy shape."""
    folder = tmp_path_factory.mktemp("toy")
    rng = np.random.default_rng(0)
    y = np.where(np.arange(60) < 20, "a", "b")
    data = pd.DataFrame(rng.normal(size=(60, 2)) + (y == "a")[:, None], columns=["x1", "x2"])
    data.assign(label=y).to_csv(folder / "blobs.csv", index=False)
    cfg = folder / "toy.yaml"
    cfg.write_text("name: toy\ndatasets: [blobs]\nlocal_datasets:\n  blobs: {file: blobs.csv, target: label}\n"
                   "models:\n"
                   '  LR: {estimator: "sklearn.linear_model:LogisticRegression", grid: {C: [0.1, 1.0]}}\n'
                   '  Dummy: {estimator: "sklearn.dummy:DummyClassifier", strategy: prior}\n'
                   f"protocol: {{folds: {FOLDS}, repeats: {REPEATS}, seed: 1}}\n")
    store = folder / "results"
    result = runner.invoke(app, ["run", str(cfg), "--out", str(store), "--jobs", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    # The paper: LR's count right (3 folds x 2 repeats x 2 points = 12), the dummy's wrong (6 stored, 9 published).
    (folder / "published.csv").write_text("dataset,method,records\nblobs,LR,12\nblobs,Dummy,9\n")
    spec = TableSpec(id="toy_count", stem="toy_count", title="Records per cell ({selection})", builder="toy-count",
                     published=str(folder / "published.csv"), tolerance={"abs": 0.5})
    register_shape(RecordCount())
    register_paper(Paper(id="toy", title="A toy paper", tables=(spec,)))
    yield store
    unregister_paper("toy")
    unregister_shape("toy-count")


def test_a_toy_shape_is_written_in_every_format_and_checked(toy, tmp_path):
    out = tmp_path / "tables"
    result = runner.invoke(app, ["tables", str(toy), "--out", str(out), "--format", "md", "--format", "csv",
                                 "--format", "latex"])
    assert result.exit_code == 0, result.output
    # Closed form: folds x repeats x grid points records per cell.
    table = pd.read_csv(out / "toy_count.csv", comment="#").set_index("method")
    assert table["records"].to_dict() == {m: FOLDS * REPEATS * n for m, n in POINTS.items()}
    assert table["published"].to_dict() == {"LR": 12, "Dummy": 9}
    md = (out / "toy_count.md").read_text()
    assert md.startswith("# Records per cell (best-of-grid)")
    # The wide view (data sets x models, each cell as the shape writes it), then the long one.
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in md.splitlines() if line.startswith("| ")]
    wide = dict(zip(rows[0], rows[1], strict=True))
    assert wide == {"dataset": "blobs", "LR": "12", "Dummy": "6"}
    assert rows[2] == ["data set", "method", "records", "paper"] and ["blobs", "Dummy", "6", "9"] in rows[3:]
    tex = (out / "toy_count.tex").read_text()
    assert "blobs & LR & 12 & 12 \\\\" in tex and "blobs & Dummy & 6 & 9 \\\\" in tex
    # Checked under its tolerance: LR within, the dummy's 6 against 9 outside.
    check = (out / "check.md").read_text().split("## toy_count: ", 1)[1].split("\n## ", 1)[0]
    assert "pass 1, fail 1, missing 0, skipped 0" in check
    assert "| blobs | Dummy | 6 | 9 | -3 | 0.5 |" in check
    result = runner.invoke(app, ["check", str(toy)])
    assert result.exit_code != 0 and "FAIL toy_count blobs Dummy: reproduced 6, published 9" in result.output


def test_a_toy_shape_is_drawn_in_the_report(toy, tmp_path):
    result = runner.invoke(app, ["report", str(toy), "--out", str(tmp_path / "site"), "--no-figures"])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "site" / "toy.html").read_text()
    section = page.split('<section class="table" id="toy_count">', 1)[1].split("</section>", 1)[0]
    assert "Records per cell (best-of-grid)" in section
    cells = {m: (n, paper, verdict) for _, m, n, paper, verdict in _body_rows(section, "toy_count")}
    assert cells == {"LR": ("12", "12", "within"), "Dummy": ("6", "9", "outside")}
    assert 'href="toy.html"' in (tmp_path / "site" / "index.html").read_text()


def test_a_table_of_an_unregistered_shape_is_refused_in_one_line(tmp_path):
    register_paper(Paper(id="bad", title="Bad", tables=(TableSpec(id="bad_t", stem="bad_t", title="t",
                                                                  builder="pie-chart"),)))
    try:
        with pytest.raises(ValueError, match=r"^table bad_t: builder 'pie-chart' is not a registered table shape; "
                                             r"registered: \['correlation', 'metric', 'time'"):
            registered_tables()
        result = runner.invoke(app, ["tables", str(tmp_path), "--out", str(tmp_path / "t")])
        assert result.exit_code != 0 and "table bad_t: builder 'pie-chart' is not a registered" in result.output
        assert "Traceback" not in result.output
    finally:
        unregister_paper("bad")


def _body_rows(section, uuid):
    """The rows of the Styler table ``T_<uuid>`` of a report section, as cell texts."""
    import re

    body = section.split(f'id="T_{uuid}"', 1)[1].split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", body, re.S)]
