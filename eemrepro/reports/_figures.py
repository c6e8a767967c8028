"""Figures (matplotlib, the optional ``plot`` extra): EEM Figure 3 and reproduced vs published."""

import json
from collections import defaultdict
from pathlib import Path

import numpy as np


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        # SVG element ids are salted randomly unless fixed: fix them so a
        # rebuild from the same records gives the same bytes.
        plt.rcParams["svg.hashsalt"] = "eemrepro"
    except ImportError as exc:
        raise RuntimeError("figures need matplotlib: pip install 'eemrepro[plot]'") from exc
    return plt


def _save(fig, stem):
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for ext in ("png", "svg"):
        path = stem.with_suffix("." + ext)
        # Fixed metadata so a rebuild from the same records gives the same bytes.
        fig.savefig(path, dpi=120, bbox_inches="tight",
                    metadata={"Date": None} if ext == "svg" else {"Software": None})
        paths.append(path)
    return paths


def stability_figure(records, stem, model="EEMrbf", param="n_hidden"):
    """EEM Figure 3: GMean against h with std error bars, one panel per data set."""
    plt = _pyplot()
    by = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["model"] == model and r["inner"] is None and r["status"] == "ok" and param in r["params"]:
            by[r["dataset"]][r["params"][param]].append(100 * r["gmean"])
    if not by:
        raise ValueError(f"no {model} records with a {param} grid")
    names = list(by)
    cols = min(3, len(names))
    rows = int(np.ceil(len(names) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False)
    for ax, name in zip(axes.flat, names, strict=False):
        hs = sorted(by[name])
        means = [np.mean(by[name][h]) for h in hs]
        stds = [np.std(by[name][h], ddof=1) if len(by[name][h]) > 1 else 0.0 for h in hs]
        ax.errorbar(hs, means, yerr=stds, fmt="-", lw=1, elinewidth=0.5, capsize=0)
        ax.set_title(name)
        ax.set_xlabel("h")
        ax.set_ylabel("GMean (%)")
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    paths = _save(fig, stem)
    plt.close(fig)
    return paths


def scatter_figure(table, stem, title="GMean: reproduced vs published"):
    """Reproduced against published GMean, one point per cell, with the diagonal."""
    plt = _pyplot()
    t = table[np.isfinite(table["gmean"]) & np.isfinite(table["published"])]
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    for method, g in t.groupby("method", sort=False):
        ax.scatter(g["published"], g["gmean"], s=14, label=method)
    lo = float(min(t["published"].min(), t["gmean"].min(), 0)) if len(t) else 0
    ax.plot([lo, 100], [lo, 100], "k--", lw=0.8)
    ax.set_xlabel("published GMean (%)")
    ax.set_ylabel("reproduced GMean (%)")
    ax.set_title(title)
    if len(t):
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    paths = _save(fig, stem)
    plt.close(fig)
    return paths


FIGURES = ("scatter", "stability")


def build_figures(dirs, out, selection="best-of-grid", figures=None):
    """Draw ``figures`` (default: each of FIGURES the records can draw) into ``out``."""
    from ._render import load_results
    from ._tables import gmean_table

    unknown = sorted(set(figures or ()) - set(FIGURES))
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; choose from {list(FIGURES)}")
    records, _ = load_results(dirs)
    out = Path(out)
    written = []
    grid = [r for r in records if r["model"] != "dcs-correlation"]
    eem = [r for r in grid if r["model"] == "EEMrbf"]
    # Figure 3 needs the dense h grid of configs/stability.yaml (h = 5, 10, ..., 500).
    dense = len({json.dumps(r["params"]) for r in eem}) >= 20
    drawers = {
        "scatter": (bool(grid), "no grid-search records",
                    lambda: scatter_figure(gmean_table(records, selection), out / "gmean_reproduced_vs_published")),
        "stability": (dense, "needs EEMrbf at >= 20 values of h (configs/stability.yaml)",
                      lambda: stability_figure(records, out / "eem_figure3_stability")),
    }
    for name, (possible, why, draw) in drawers.items():
        if figures and name not in figures:
            continue
        if possible:
            written += draw()
        elif figures:
            raise ValueError(f"cannot draw the {name} figure from {', '.join(map(str, dirs))}: {why}")
    return written
