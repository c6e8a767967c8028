"""Figures (matplotlib, the optional ``plot`` extra), as the registered papers declare them.

Drawers: ``sweep`` (a metric against one grid parameter, std error bars, one
panel per data set), ``scatter`` (reproduced against published cells of a
metric table), ``histogram`` and ``expected-max`` (an optimiser's per-start
values from the ``restarts`` kind) and ``embedding`` (2-D images from the
``embedding`` kind with per-class KDE contours).
"""

import json
from collections import defaultdict
from pathlib import Path

import numpy as np

from ..store._segments import as_frame


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
    df = as_frame(records)
    by = defaultdict(lambda: defaultdict(list))
    if len(df) and metric in df:
        sub = df[(df["model"] == model) & df["inner"].isna() & (df["status"] == "ok")]
        points = {p: json.loads(p) for p in sub["point"].unique()}
        for dataset, point, value in zip(sub["dataset"], sub["point"], sub[metric], strict=True):
            if param in points[point]:
                by[dataset][points[point][param]].append(scale * value)
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


def _finish(plt, fig, stem, title):
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    paths = _save(fig, stem)
    plt.close(fig)
    return paths


def _panels(plt, n, width=3.6, height=2.8, cols=5):
    cols = min(cols, n)
    rows = int(np.ceil(n / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(width * cols, height * rows), squeeze=False)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    return fig, list(axes.flat)[:n]


def restart_values(records, model):
    """{data set: the finite per-start values of ``model``, every batch pooled}."""
    df = as_frame(records)
    by = defaultdict(list)
    if not len(df) or "values" not in df or "kind" not in df:
        return {}
    sub = df[(df["kind"] == "restarts") & (df["model"] == model) & (df["status"] == "ok")]
    sub = sub.sort_values(["dataset", "repeat"], kind="stable")
    for dataset, values in zip(sub["dataset"], sub["values"], strict=True):
        by[dataset] += [v for v in (values if values is not None else ()) if v is not None and v == v]
    return {d: np.asarray(v) for d, v in by.items() if v}


def expected_max(values, starts):
    """E[max of s draws with replacement from ``values``] for each s in ``starts`` (the exact bootstrap).

    With v_(1) <= ... <= v_(n): E = sum_i v_(i) ((i/n)^s - ((i-1)/n)^s).
    """
    v = np.sort(np.asarray(values, dtype=float))
    n = v.shape[0]
    i = np.arange(1, n + 1)
    return np.array([np.sum(v * ((i / n) ** s - ((i - 1) / n) ** s)) for s in starts])


def histogram_figure(records, stem, model, title=""):
    plt = _pyplot()
    by = restart_values(records, model)
    if not by:
        raise ValueError(f"no restarts records of {model}")
    fig, axes = _panels(plt, len(by))
    for ax, (dataset, v) in zip(axes, by.items(), strict=True):
        ax.hist(v, bins=30, color="0.4")
        ax.set_title(f"{dataset} ({v.size} starts)", fontsize=9)
        ax.set_xlabel("D_CS")
    return _finish(plt, fig, stem, title)


def expected_max_figure(records, stem, model, title="", max_starts=64, mark=16):
    plt = _pyplot()
    by = restart_values(records, model)
    if not by:
        raise ValueError(f"no restarts records of {model}")
    starts = np.arange(1, max_starts + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for dataset, v in by.items():
        e = expected_max(v, starts)
        left.plot(starts, e, label=dataset, lw=1)
        right.plot(starts, e / v.max(), label=dataset, lw=1)
    for ax, label in ((left, "expected best D_CS"), (right, "expected best / best found")):
        ax.axvline(mark, color="k", ls=":", lw=0.8)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("random starts s")
        ax.set_ylabel(label)
    right.legend(fontsize=6, ncol=2)
    return _finish(plt, fig, stem, title)


def embedding_figure(records, stem, dataset, title=""):
    """One panel per model: the classes' 2-D points and their Gaussian KDE contours."""
    from scipy.stats import gaussian_kde

    plt = _pyplot()
    recs = _embedding_rows(as_frame(records), dataset)
    if not recs:
        raise ValueError(f"no embedding records of {dataset}")
    fig, axes = _panels(plt, len(recs), width=3.2, height=3.0)
    for ax, r in zip(axes, recs, strict=True):
        Z, labels = np.vstack(list(r["embedding"])).astype(float), np.asarray(r["labels"])
        lo, hi = Z.min(axis=0), Z.max(axis=0)
        pad = 0.1 * (hi - lo + 1e-12)
        gx, gy = np.meshgrid(np.linspace(lo[0] - pad[0], hi[0] + pad[0], 80),
                             np.linspace(lo[1] - pad[1], hi[1] + pad[1], 80))
        for c, color in zip(sorted(set(labels)), ("tab:blue", "tab:red", "tab:green", "tab:orange", "tab:purple",
                                                  "tab:brown", "tab:pink", "tab:gray"), strict=False):
            P = Z[labels == c]
            ax.scatter(P[:, 0], P[:, 1], s=4, color=color, alpha=0.6, label=c)
            try:
                density = gaussian_kde(P.T)(np.vstack([gx.ravel(), gy.ravel()])).reshape(gx.shape)
                ax.contour(gx, gy, density, levels=4, colors=color, linewidths=0.7)
            except (np.linalg.LinAlgError, ValueError):
                pass  # a class on a line has no 2-D density: its points alone are drawn
        ax.set_title(r["model"], fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    axes[0].legend(fontsize=6, markerscale=2)
    return _finish(plt, fig, stem, title or f"{dataset}: 2-D projections")


def _benchmark_diagrams(dirs, records, unfinished, selection, out):
    """The critical-difference diagram and the signed-rank posteriors of each benchmark of the results
    (``_document.benchmark_parts``: what ``tables`` and ``report`` draw of it), as ``<benchmark>_cd.svg`` and
    ``.pdf``, ``<benchmark>_posterior.svg`` and ``.pdf``."""
    from ._compare import write_cd
    from ._document import benchmark_parts
    from ._records import split_by_kind

    written = []
    for part in benchmark_parts(dirs, split_by_kind(records), unfinished, selection):
        comparison = part.section.comparison
        if comparison is not None:
            written += write_cd(comparison.diagram, Path(out) / f"{comparison.stem}_cd")
            written += write_cd(comparison.posterior, Path(out) / f"{comparison.stem}_posterior")
    return written


def _embedding_rows(df, dataset):
    if not len(df) or "embedding" not in df or "kind" not in df:
        return []
    sub = df[(df["kind"] == "embedding") & (df["dataset"] == dataset) & (df["status"] == "ok")]
    return sub.to_dict("records")


#: Which results folders each figure file of an output folder was drawn from.
FIGURES_MANIFEST = "figures-manifest.json"


def build_figures(dirs, out, selection="best-of-grid", figures=None, loaded=None, tables_built=None, force=False,
                  diagrams=True):
    """Draw ``figures`` (names; default: each registered figure the records can draw, and the critical-difference
    diagram of each benchmark of the results, ``<benchmark>_cd.svg`` and ``.pdf`` as ``tables`` writes them,
    unless not ``diagrams``) into ``out``.

    ``loaded``: ``Records(dirs).read()`` if the caller has it (the report); ``tables_built``: {table id: table}
    built from it with ``selection`` (what a scatter figure draws). Drawn in a staging folder and moved into
    place (``_outputs.publish``): a PNG or SVG of the same name that this command did not draw from these
    results is not replaced unless ``force``, and a symbolic link is replaced, never written through.
    """
    import os

    from ._outputs import publish_built

    sources = [os.path.normpath(str(d)) for d in dirs]
    return publish_built(lambda staging: _build_figures(dirs, staging, selection, figures, loaded, tables_built,
                                                        diagrams), out, FIGURES_MANIFEST, sources, force,
                         "eemrepro figures")


def _build_figures(dirs, out, selection, figures, loaded, tables_built, diagrams=True):
    from ..experiments import get_metric
    from ._records import Records
    from ._spec import registered_figures, registered_tables
    from ._tables import build_table, table_applies

    specs = {f.name: f for f in registered_figures()}
    unknown = sorted(set(figures or ()) - set(specs))
    if unknown:
        raise ValueError(f"unknown figure(s) {unknown}; choose from {sorted(specs)}")
    records, prov = Records(dirs).read() if loaded is None else loaded
    unfinished = {tuple(c) for c in prov["unfinished"]}
    tables = {t.id: t for t in registered_tables()}
    tables_built = tables_built or {}
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
                tables_built[spec.id] if spec.id in tables_built else
                build_table(spec, records, selection, unfinished=unfinished), out / f.stem,
                title=f.title or f"{get_metric(spec.metric).title}: reproduced vs published",
                metric=spec.metric, label=label)
        elif f.drawer in ("histogram", "expected-max"):
            possible, why = bool(restart_values(records, f.model)), f"needs restarts records of {f.model}"
            fn = histogram_figure if f.drawer == "histogram" else expected_max_figure
            draw = lambda f=f, fn=fn: fn(records, out / f.stem, f.model, f.title)
        elif f.drawer == "embedding":
            possible = bool(_embedding_rows(records, f.dataset))
            why = f"needs embedding records of {f.dataset}"
            draw = lambda f=f: embedding_figure(records, out / f.stem, f.dataset, f.title)
        else:
            possible = len(records) and records.loc[records["model"] == f.model, "point"].nunique() >= f.min_points
            why = f"needs {f.model} at >= {f.min_points} values of {f.param}"
            draw = lambda f=f: sweep_figure(records, out / f.stem, f.model, f.param, f.metric)
        if possible:
            written += draw()
        elif figures:
            raise ValueError(f"cannot draw the {name} figure from {', '.join(map(str, dirs))}: {why}")
    if not figures and diagrams:
        written += _benchmark_diagrams(dirs, records, unfinished, selection, out)
    if not figures:
        # Embeddings of data sets no paper's figure shows (a user's own): one figure each, as the papers' are.
        shown = {f.dataset for f in specs.values() if f.drawer == "embedding"}
        stored = records.loc[records["kind"] == "embedding", "dataset"] if len(records) and "kind" in records else []
        for dataset in sorted(set(stored) - shown):
            if _embedding_rows(records, dataset):
                written += embedding_figure(records, out / f"embedding_{dataset}", dataset,
                                            f"{dataset}: the stored projections")
    if not written:
        raise ValueError(f"no figure can be drawn from {', '.join(map(str, dirs))}: no registered figure's records "
                         "are there (`eemrepro papers` lists the figures and what each needs), and a critical-"
                         "difference diagram needs three models with values on two data sets at least")
    return written
