"""Records of two stores compared byte for byte on what a fit made (timings, run, worker and host aside)."""
import sys

from eemrepro import read_results

KEEP = ["dataset", "model", "point", "repeat", "fold", "status", "auc", "bac", "error", "gmean", "n_test",
        "n_train", "seed", "identity_sha", "data_sha256", "fit_threads"]
frames = []
for d in sys.argv[1:]:
    f = read_results(d)
    f = f[[c for c in KEEP if c in f]].astype({c: str for c in ("dataset", "model", "point", "status",
                                                                "identity_sha", "data_sha256") if c in f})
    frames.append(f.sort_values(["dataset", "model", "point", "repeat", "fold"]).reset_index(drop=True))
a = frames[0]
for d, b in zip(sys.argv[2:], frames[1:], strict=True):
    same = a.shape == b.shape and a.equals(b)
    diff = 0 if same else int((a.ne(b) & ~(a.isna() & b.isna())).any(axis=1).sum()) if a.shape == b.shape else -1
    print(f"{sys.argv[1]} vs {d}: {len(a)} / {len(b)} records, equal byte for byte: {same}, rows differing: {diff}")
