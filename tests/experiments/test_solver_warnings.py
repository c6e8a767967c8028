"""Solver warnings become counts (issue 67, finding 8): no bare library line on the terminal, and the fits that
stopped short of convergence counted per cell (``‡k``, as ``†k`` counts failed fits) in the tables, the page and
``status``.

The user's run printed LIBSVM's bare ``WARNING: reaching max number of iterations`` 34 times between its progress
lines (LIBSVM writes it to the process's stderr from C, past the print function the SVM collects its output
with); the records held ``converged=False`` for those fits, and nothing showed it.

The data: 40 points of two Gaussian features whose labels (the first 16 positive) do not depend on them, fitted
whole (``splitter: whole``, ``scaling: none``). LIBSVM at C = 1e10, gamma = 0.1 stops there at its iteration
limit, max(10^7, 100 n) = 10^7 (seen by fitting ``SVM(C=1e10, gamma=0.1)`` on them: ``n_iter_`` 10,000,000,
about 4 s); at C = 1, gamma = 1 it converges. scikit-learn's LogisticRegression with ``max_iter: 1`` raises its
``ConvergenceWarning``.
"""

import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from eemrepro import read_results
from eemrepro.cli import app

LIBSVM_LINE = "WARNING: reaching max number of iterations"


def _noise(path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"])
    frame["label"] = np.where(np.arange(40) < 16, "pos", "neg")
    frame.to_csv(path, index=False)


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """(the run's output, its results folder): the config run through the CLI in a process of its own, whose
    terminal (both streams) is what the test reads."""
    root = tmp_path_factory.mktemp("solver")
    _noise(root / "noise.csv")
    (root / "c.yaml").write_text(textwrap.dedent("""\
        name: noisy
        datasets: [noise]
        local_datasets:
          noise: {file: noise.csv, target: label, positive: pos}
        models:
          SVM: {estimator: SVM, grid: {C: [1, 1e10], gamma: [0.1, 1]}}
          LR: {estimator: 'sklearn.linear_model:LogisticRegression', max_iter: 1}
        protocol: {splitter: whole, scaling: none, repeats: 1}
        """))
    out = root / "out"
    run = subprocess.run([sys.executable, "-m", "eemrepro", "run", str(root / "c.yaml"), "--out", str(out),
                          "--jobs", "1"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout + run.stderr, out


def test_no_bare_solver_line_on_the_terminal_but_one_count_per_warning(ran):
    output, _ = ran
    assert LIBSVM_LINE not in output
    lines = output.splitlines()
    svm = [line for line in lines if "ConvergenceWarning: SVM: LIBSVM stopped at its iteration limit" in line]
    assert len(svm) == 1 and svm[0].startswith("warned in 1 fit(s): "), output
    lr = [line for line in lines if "ConvergenceWarning: lbfgs failed to converge" in line]
    assert len(lr) == 1 and lr[0].startswith("warned in 1 fit(s): "), output  # (its several lines said as one)


def test_the_records_say_which_fits_did_not_converge(ran):
    _, out = ran
    df = read_results(out, columns=["converged", "n_iter"])
    svm = df[df["model"] == "SVM"].set_index("point")
    assert svm.loc['{"C": 10000000000.0, "gamma": 0.1}', "converged"] == False  # noqa: E712 (a stored bool)
    assert svm.loc['{"C": 10000000000.0, "gamma": 0.1}', "n_iter"] == 10_000_000
    assert svm.drop('{"C": 10000000000.0, "gamma": 0.1}')["converged"].tolist() == [True, True, True]
    # scikit-learn's solver says it in a warning alone: the fit that warned did not converge
    assert df.loc[df["model"] == "LR", "converged"].tolist() == [False]


def test_each_table_rendering_page_and_status_count_them(ran, tmp_path):
    output, out = ran
    # the run's own table: the cell and the legend
    assert "‡1" in output and "'‡k': k of the cell's fits stopped short of convergence" in output
    runner = CliRunner()
    tables = tmp_path / "tables"
    result = runner.invoke(app, ["tables", str(out), "--out", str(tables), "--format", "md", "--format", "csv",
                                 "--format", "latex"])
    assert result.exit_code == 0, result.output
    text = (tables / "benchmark_gmean.md").read_text()
    assert text.count("‡1") >= 2 and "'‡k': k of the cell's fits stopped short of convergence" in text
    frame = pd.read_csv(tables / "benchmark_gmean.csv", comment="#")
    assert frame.set_index("method")["unconverged_fits"].to_dict() == {"SVM": 1, "LR": 1}
    assert r"$^{\ddagger 1}$" in (tables / "benchmark_gmean.tex").read_text()  # the matrix's mark, a superscript
    result = runner.invoke(app, ["status", str(out)])
    assert result.exit_code == 0, result.output
    header, _, *rows = result.output.splitlines()[:4]
    assert header.split()[-2:] == ["not", "converged"], header
    assert {row.split()[1]: int(row.split()[-1]) for row in rows} == {"SVM": 1, "LR": 1}
    page = tmp_path / "page"
    result = runner.invoke(app, ["report", str(out), "--out", str(page)])
    assert result.exit_code == 0, result.output
    html = "".join(p.read_text() for p in page.glob("*.html"))
    assert "‡1" in html and "stopped short of convergence" in html
