"""The paper's tables, rebuilt from stored records (never by running a model).

Every builder returns a long-format DataFrame: one row per (data set, method)
cell with the reproduced value, the published one and their difference, plus
what a reader needs to judge it (selected grid point, folds, status).
"""

import json
from collections import defaultdict
from importlib import resources

import numpy as np
import pandas as pd
from scipy import stats

from ..experiments import select
from ..experiments._units import CORRELATION_MODEL

TIMEOUT_SECONDS = 600


def published(name):
    """A published table (``eem_table4_gmean`` ...) as shipped with the package."""
    path = resources.files("eemrepro.reports") / "published" / f"{name}.csv"
    with resources.as_file(path) as p:
        return pd.read_csv(p, keep_default_na=False, na_values=[""])


def _order(df, pub):
    """Rows in the published table's data set and method order."""
    ds = {d: i for i, d in enumerate(dict.fromkeys(pub["dataset"]))}
    ms = {m: i for i, m in enumerate(dict.fromkeys(pub["method"]))}
    df = df.assign(_d=df["dataset"].map(ds).fillna(len(ds)), _m=df["method"].map(ms).fillna(len(ms)))
    return df.sort_values(["_d", "_m", "dataset", "method"]).drop(columns=["_d", "_m"]).reset_index(drop=True)


def _grid_records(records):
    return [r for r in records if r["model"] != CORRELATION_MODEL]


def gmean_table(records, selection="best-of-grid", published_name="eem_table4_gmean", criterion=None,
                reference=None):
    """EEM Table 4 (or Table 6 with ``selection`` dcs-*): GMean in percent, mean +- std.

    ``reference``: records of another reproduction to compare with instead of
    the published table (its cells become the "published" columns).

    Returns
    -------
    DataFrame with columns dataset, method, status, gmean, gmean_std, published,
    published_std, delta, point, n_folds, repeats.
    """
    if reference is not None:
        ref = gmean_table(reference, selection)
        ref = ref[ref["status"] == "ok"]
        pub = pd.DataFrame({"dataset": ref["dataset"], "method": ref["method"],
                            "gmean_mean": ref["gmean"], "gmean_std": ref["gmean_std"]})
    else:
        pub = published(published_name)
    if criterion is not None:
        pub = pub[pub["criterion"] == criterion]
    grid = _grid_records(records)
    if selection.startswith("dcs-"):
        with_dcs = {r["dataset"] for r in grid if r.get("dcs_gaussian") is not None}
        grid = [r for r in grid if r["dataset"] in with_dcs]
    sel = select(grid, selection) if grid else pd.DataFrame()
    repeats = defaultdict(set)
    for r in grid:
        repeats[(r["dataset"], r["model"])].add(r["repeat"])
    rows = {}
    for _, s in sel.iterrows():
        ok = s.get("status") == "ok"
        rows[(s["dataset"], s["model"])] = {
            "dataset": s["dataset"], "method": s["model"], "status": s["status"],
            "gmean": 100 * s["gmean_mean"] if ok else np.nan,
            "gmean_std": 100 * s["gmean_std"] if ok else np.nan,
            "point": s["point"], "n_folds": s.get("n_folds"), "repeats": len(repeats[(s["dataset"], s["model"])]),
        }
    for _, p in pub.iterrows():
        key = (p["dataset"], p["method"])
        row = rows.setdefault(key, {"dataset": key[0], "method": key[1], "status": "missing",
                                    "gmean": np.nan, "gmean_std": np.nan, "point": None, "n_folds": 0, "repeats": 0})
        row["published"], row["published_std"] = p["gmean_mean"], p["gmean_std"]
    df = pd.DataFrame(list(rows.values()))
    for col in ("published", "published_std"):
        if col not in df:
            df[col] = np.nan
    df["delta"] = df["gmean"] - df["published"]
    return _order(df, pub)


def time_table(records, selection="best-of-grid"):
    """EEM Table 5: seconds of one training fit at the selected grid point.

    Uses standalone fit times (``protocol.standalone_timing``) where recorded,
    otherwise the unit's fit time (for a path unit that covers the whole grid,
    flagged in ``timing``). A cell whose every grid point timed out is ``> 600``.
    """
    pub = published("eem_table5_time_seconds")
    grid = _grid_records(records)
    sel = select(grid, selection) if grid else pd.DataFrame()
    frame = pd.DataFrame(grid)
    if not frame.empty:
        frame["point"] = [json.dumps(p, sort_keys=True) for p in frame["params"]]
    rows = {}
    for _, s in sel.iterrows():
        key = (s["dataset"], s["model"])
        row = {"dataset": key[0], "method": key[1], "status": s["status"], "seconds": np.nan,
               "timing": None, "point": s["point"]}
        if s["status"] == "timed-out":
            row["seconds"], row["timing"] = np.inf, "timed out"
        elif s["status"] == "ok":
            g = frame[(frame["dataset"] == key[0]) & (frame["model"] == key[1]) & (frame["point"] == s["point"])
                      & frame["inner"].isna() & (frame["status"] == "ok")]
            standalone = g["standalone_fit_seconds"].dropna() if "standalone_fit_seconds" in g else pd.Series([])
            if len(standalone):
                row["seconds"], row["timing"] = standalone.mean(), "standalone"
            else:
                path = g["path_size"].max() if len(g) else 1
                row["seconds"] = g["fit_seconds"].mean()
                row["timing"] = "path (whole grid)" if path and path > 1 else "standalone"
        rows[key] = row
    for _, p in pub.iterrows():
        key = (p["dataset"], p["method"])
        row = rows.setdefault(key, {"dataset": key[0], "method": key[1], "status": "missing",
                                    "seconds": np.nan, "timing": None, "point": None})
        row["published"] = np.inf if "more than" in str(p["note"]) else float(p["seconds"])
    df = pd.DataFrame(list(rows.values()))
    if "published" not in df:
        df["published"] = np.nan
    df = df[df["dataset"].isin(set(pub["dataset"]))]
    return _order(df, pub)


def correlation_table(records):
    """EEM Table 1: Spearman rho between D_CS and (m+ - m-)^2 / (S+ + S-), pooled over layers x betas.

    ``var_share`` is the median over the pairs of the variance term
    ln(((S+ + S-) / 2) / sqrt(S+ S-)) = D_CS - ratio as a share of D_CS: the part
    of D_CS that is not a function of the ratio (were it the same for every pair,
    rho would be exactly 1).
    """
    pub = published("eem_table1_dcs_spearman").rename(columns={"spearman": "published"})
    pooled = defaultdict(lambda: ([], []))
    layers = defaultdict(int)
    for r in records:
        if r["model"] != CORRELATION_MODEL or r["status"] != "ok":
            continue
        key = (r["dataset"], r["params"]["n_hidden"])
        pooled[key][0].extend(r["dcs"])
        pooled[key][1].extend(r["ratio"])
        layers[key] += 1
    rows = {}
    for (dataset, h), (dcs, ratio) in pooled.items():
        d, q = np.asarray(dcs, float), np.asarray(ratio, float)
        ok = np.isfinite(d) & np.isfinite(q)
        rho = stats.spearmanr(d[ok], q[ok]).statistic if ok.sum() > 2 else np.nan
        positive = ok & (d > 0)
        share = float(np.median((d[positive] - q[positive]) / d[positive])) if positive.any() else np.nan
        rows[(dataset, h)] = {"dataset": dataset, "h": h, "spearman": rho, "var_share": share,
                              "pairs": int(ok.sum()), "layers": layers[(dataset, h)]}
    for _, p in pub.iterrows():
        key = (p["dataset"], int(p["h"]))
        rows.setdefault(key, {"dataset": key[0], "h": key[1], "spearman": np.nan, "var_share": np.nan,
                              "pairs": 0, "layers": 0})
        rows[key]["published"] = p["published"]
    df = pd.DataFrame(list(rows.values()))
    if df.empty:
        return df
    df["delta"] = df["spearman"] - df["published"]
    order = {d: i for i, d in enumerate(dict.fromkeys(pub["dataset"]))}
    df["_d"] = df["dataset"].map(order).fillna(len(order))
    return df.sort_values(["_d", "h"]).drop(columns="_d").reset_index(drop=True)


# -- comparisons between methods -------------------------------------------------

PAIRS = [("WELMsig", "EEMsig"), ("WELMnsig", "EEMnsig"), ("WELMrbf", "EEMrbf"),
         ("LS-SVMrbf", "EEKMrbf"), ("SVMrbf", "EEKMrbf")]


def wins_draws_losses(table, value="gmean", decimals=1):
    """For each pair the paper compares: data sets where the second method wins/draws/loses.

    A draw is equal values at the paper's printed precision (one decimal).
    """
    wide = table.pivot_table(index="dataset", columns="method", values=value)
    rows = []
    for a, b in PAIRS:
        if a not in wide or b not in wide:
            continue
        both = wide[[a, b]].dropna().round(decimals)
        rows.append({"pair": f"{b} vs {a}", "wins": int((both[b] > both[a]).sum()),
                     "draws": int((both[b] == both[a]).sum()), "losses": int((both[b] < both[a]).sum()),
                     "datasets": len(both)})
    return pd.DataFrame(rows)


def ranks_and_tests(table, value="gmean", alpha=0.05):
    """Average rank per method (1 = best), Friedman test, Nemenyi CD and Wilcoxon tests of the pairs.

    Only data sets where every method has a value take part.
    """
    wide = table.pivot_table(index="dataset", columns="method", values=value).dropna()
    out = {"datasets": len(wide), "methods": list(wide.columns)}
    if len(wide) < 2 or wide.shape[1] < 2:
        return out
    ranks = wide.rank(axis=1, ascending=False)
    out["average_rank"] = ranks.mean().sort_values().to_dict()
    if wide.shape[1] >= 3:
        friedman = stats.friedmanchisquare(*[wide[c] for c in wide.columns])
        out["friedman_statistic"], out["friedman_p"] = float(friedman.statistic), float(friedman.pvalue)
        k, n = wide.shape[1], len(wide)
        q = stats.studentized_range.ppf(1 - alpha, k, np.inf) / np.sqrt(2)
        out["nemenyi_cd"] = float(q * np.sqrt(k * (k + 1) / (6 * n)))
    tests = []
    for a, b in PAIRS:
        if a in wide and b in wide:
            diff = wide[b] - wide[a]
            p = float(stats.wilcoxon(wide[b], wide[a]).pvalue) if np.any(diff != 0) else 1.0
            tests.append({"pair": f"{b} vs {a}", "median_difference": float(diff.median()), "wilcoxon_p": p})
    out["wilcoxon"] = tests
    return out
