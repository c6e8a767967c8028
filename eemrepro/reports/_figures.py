"""Figures (matplotlib, the optional ``plot`` extra), as the registered papers declare them.

Two drawers: ``sweep`` (a metric against one grid parameter, std error bars,
one panel per data set) and ``scatter`` (reproduced against published cells of
a metric table).
"""

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


def sweep_figure(records, stem, model, param, metric="gmean", scale=100.0):
    """``model``'s metric against grid parameter ``param`` with std error bars, one panel per data set."""
    from ..experiments import get_metric

    plt = _pyplot()
    by = defaultdict(lambda: defaultdict(list))
    for r in records:
        if r["model"] == model and r["inner"] is None and r["status"] == "ok" and param in r["params"]:
            by[r["dataset"]][r["params"][param]].append(scale * r["metrics"][metric])
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
        ax.set_xlabel("h" if param == "n_hidden" else param)
        ax.set_ylabel(get_metric(metric).title + (" (%)" if scale == 100 else ""))
    for ax in list(axes.flat)[len(names):]:
        ax.axis("off")
    fig.tight_layout()
    paths = _save(fig, stem)
    plt.close(fig)
    return paths


def scatter_figure(table, stem, title="GMean: reproduced vs published", metric="gmean", label="GMean (%)"):
    """Reproduced against published values, one point per cell, with the diagonal."""
    plt = _pyplot()
    t = table[np.isfinite(table[metric]) & np.isfinite(table["published"])]
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    for method, g in t.groupby("method", sort=False):
        ax.scatter(g["published"], g[metric], s=14, label=method)
    lo = float(min(t["published"].min(), t[metric].min(), 0)) if len(t) else 0
    hi = float(max(t["published"].max(), t[metric].max(), 1)) if len(t) else 1
    hi = 100 if hi > 1 else 1
    ax.plot([lo, hi], [lo, hi], "k--", lw=0.8)
    ax.set_xlabel(f"published {label}")
    ax.set_ylabel(f"reproduced {label}")
    ax.set_title(title)
    if len(t):
        ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    paths = _save(fig, stem)
    plt.close(fig)
    return paths


def build_figures(dirs, out, selection="best-of-grid", figures=None):
    """Draw ``figures`` (names; default: each registered figure the records can draw) into ``out``."""
    from ..experiments import get_metric
    from ._render import load_results
    from ._spec import registered_figures, registered_tables
    from ._tables import build_table, table_applies

    specs = {f.name: f for f in registered_figures()}
    unknown = sorted(set(figures or ()) - set(specs))
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; choose from {sorted(specs)}")
    records, prov = load_results(dirs)
    unfinished = {tuple(c) for c in prov["unfinished"]}
    tables = {t.id: t for t in registered_tables()}
    out = Path(out)
    written = []
    for name, f in specs.items():
        if figures and name not in figures:
            continue
        if f.drawer == "scatter":
            spec = tables[f.table]
            possible, why = table_applies(spec, records), f"no records for table {spec.id}"
            metric = get_metric(spec.metric)
            label = metric.title + (" (%)" if spec.scale == 100 else "")
            draw = lambda spec=spec, f=f, label=label: scatter_figure(
                build_table(spec, records, selection, unfinished=unfinished), out / f.stem,
                title=f.title or f"{get_metric(spec.metric).title}: reproduced vs published",
                metric=spec.metric, label=label)
        else:
            values = {json.dumps(r["params"]) for r in records if r["model"] == f.model}
            possible = len(values) >= f.min_points
            why = f"needs {f.model} at >= {f.min_points} values of {f.param}"
            draw = lambda f=f: sweep_figure(records, out / f.stem, f.model, f.param, f.metric)
        if possible:
            written += draw()
        elif figures:
            raise ValueError(f"cannot draw the {name} figure from {', '.join(map(str, dirs))}: {why}")
    return written
