"""The correlation table: Spearman's rho between D_CS and (m+ - m-)^2 / (S+ + S-) per (data set, h) (the D_CS
correlation kind's), beside the published rho."""

import json

import numpy as np
import pandas as pd
from scipy import stats

from ...store._segments import as_frame
from .._cells import _of_kind
from .._render import _fmt, _signed, fits_note, printed
from ._base import VERDICTS, TableShape, register_shape


def correlation_table(records, spec, layout="full"):
    """The D_CS correlation kind's table: Spearman rho between D_CS and (m+ - m-)^2 / (S+ + S-),
    pooled over layers x betas, per (data set, h).

    ``var_share`` is the median over the pairs of the variance term
    ln(((S+ + S-) / 2) / sqrt(S+ S-)) = D_CS - ratio as a share of D_CS: the part
    of D_CS that is not a function of the ratio (were it the same for every pair,
    rho would be exactly 1).
    """
    return correlation_frame(correlation_rows(records, spec), spec, layout)


def correlation_rows(records, spec):
    """{(data set, h): row} of a correlation table from ``records``, each from its own records alone."""
    rows = {}
    ok = _of_kind(as_frame(records), spec.kind)
    ok = ok[ok["status"] == "ok"] if len(ok) else ok
    if len(ok):
        h = [json.loads(p)["n_hidden"] for p in ok["point"]]
        for (dataset, n_hidden), g in ok.assign(_h=h).groupby(["dataset", "_h"], sort=False):
            d = np.concatenate([np.asarray(v, float) for v in g["dcs"]]) if len(g) else np.array([])
            q = np.concatenate([np.asarray(v, float) for v in g["ratio"]]) if len(g) else np.array([])
            finite = np.isfinite(d) & np.isfinite(q)
            rho = stats.spearmanr(d[finite], q[finite]).statistic if finite.sum() > 2 else np.nan
            positive = finite & (d > 0)
            share = float(np.median((d[positive] - q[positive]) / d[positive])) if positive.any() else np.nan
            rows[(dataset, n_hidden)] = {"dataset": dataset, "h": n_hidden, "spearman": rho, "var_share": share,
                                         "pairs": int(finite.sum()), "layers": len(g)}
    return rows


def correlation_frame(rows, spec, layout="full"):
    """A correlation table (``correlation_table``'s frame) of its rows (``correlation_rows``)."""
    pub = spec.published_frame()
    if pub is not None:
        pub = pub.rename(columns={spec.published_value or "spearman": "published"})
    rows = dict(rows)
    for _, p in pub.iterrows() if pub is not None else ():
        key = (p["dataset"], int(p["h"]))
        if layout == "run" and key not in rows:
            continue
        rows[key] = dict(rows.get(key) or {"dataset": key[0], "h": key[1], "spearman": np.nan, "var_share": np.nan,
                                           "pairs": 0, "layers": 0})
        rows[key]["published"] = p["published"]
    df = pd.DataFrame(list(rows.values()))
    if df.empty:
        return df
    if "published" not in df:
        df["published"] = np.nan
    df["delta"] = df["spearman"] - df["published"]
    order = {d: i for i, d in enumerate(dict.fromkeys(pub["dataset"]))} if pub is not None else {}
    df["_d"] = df["dataset"].map(order).fillna(len(order))
    return df.sort_values(["_d", "dataset", "h"]).drop(columns="_d").reset_index(drop=True)



class CorrelationShape(TableShape):
    """Spearman's rho per (data set, h) (``correlation_table``): every data set of its kind's records, not only
    the published ones; a cell ran here where a layer was stored."""

    name = "correlation"
    keys = ("dataset", "h")
    own_datasets = False

    def value_column(self, spec):
        return "spearman"

    def greater_is_better(self, spec):
        return True

    def digits(self, spec):
        return 3

    def required_column(self, spec):
        return spec.requires_criterion

    def rows(self, records, table, unfinished=(), per_fold=None):
        return correlation_rows(records, table.spec), {}

    def frame(self, rows, extra, table, layout="full"):
        return correlation_frame(rows, table.spec, layout)

    def published_methods(self, spec):
        return set()  # its columns are values of h, not models

    def ran_here(self, df):
        return df["layers"] > 0

    def columns(self, table, limit):
        columns = [("dataset", "data set", None), ("h", "h", None), ("spearman", "rho", lambda v: _fmt(v, 3)),
                   ("published", "paper", lambda v: _fmt(v, 3)), ("delta", "delta", lambda v: _signed(v, 3)),
                   ("var_share", "var. share", lambda v: _fmt(v, 3)), ("layers", "layers", None),
                   ("pairs", "pairs", None)]
        return columns, ("dataset", "h", lambda r: f"{_fmt(r['spearman'], 3)} ({_signed(r['delta'], 3)})")

    def in_run_table(self, spec, select_metric):
        return True

    def cell_key(self, row):
        return {"h": int(row["h"])}

    def checked_cells(self, table, df):
        for (_, r), ran in zip(df.iterrows(), self.ran_here(df), strict=True):
            yield self.cell_key(r), r["spearman"], r.get("published"), None, bool(ran)

    def claim_view(self, df, table, claim):
        """The cells of h >= ``claim.min_h`` with a rho (of ``claim.datasets`` where it names some)."""
        t = df[(df["h"] >= claim.min_h) & df["spearman"].notna()]
        return t[t["dataset"].isin(claim.datasets)] if claim.datasets else t

    def size(self, df):
        return f"{int(df['layers'].max())} layers per cell"

    def site_section(self, table, df, verdicts, records, per_fold, limit, judged=True, matrix=None):
        rows, details, classes, cell = [], [], [], printed(self.columns(table, limit)[0])
        for _, r in df.iterrows():
            key = (table.id, r["dataset"], self.cell_label(self.cell_key(r)))
            verdict, reason = verdicts.get(key, ("not compared", "not checked"))
            rows.append({"data set": r["dataset"], "h": int(r["h"]), "rho": cell["spearman"](r),
                         "paper": cell["published"](r), "delta": cell["delta"](r),
                         "layers": int(r["layers"]), "pairs": int(r["pairs"]), "verdict": verdict})
            classes.append(["", "", VERDICTS[verdict], "", VERDICTS[verdict], "", "", VERDICTS[verdict]])
            details.append({"cell": f"{r['dataset']} / {int(r['h'])}", "verdict": verdict, "reason": reason,
                            "fits": fits_note(r)})
        display = pd.DataFrame(rows)
        return {"display": display, "classes": pd.DataFrame(classes, columns=display.columns), "tips": None,
                "details": details, "wide": None}


register_shape(CorrelationShape())
