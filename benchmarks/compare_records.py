"""Records of two or more stores compared on everything a fit made: every column but the timings and the run's
provenance (run id, host, worker, start and finish, package versions), exactly.

    python benchmarks/compare_records.py STORE_A STORE_B [STORE_C ...]   # each against the first
"""

import sys

from eemrepro import read_results
from eemrepro.experiments._audit import IGNORED

#: What differs between two runs of the same units by design (`eemrepro audit`'s: when, where, how long), and
#: the reader's own column naming the store.
ASIDE = IGNORED | {"store"}
KEY = ["dataset", "model", "point", "repeat", "fold"]


def frame(store):
    f = read_results(store)
    f = f[[c for c in f.columns if c not in ASIDE and not c.endswith("_seconds")]]
    f = f.astype({c: str for c in f.columns if str(f[c].dtype) == "category"})
    return f.sort_values(KEY).reset_index(drop=True)


first = frame(sys.argv[1])
for other in sys.argv[2:]:
    f = frame(other)
    same = list(f.columns) == list(first.columns) and first.equals(f)
    rows = -1 if first.shape != f.shape else int((first.ne(f) & ~(first.isna() & f.isna())).any(axis=1).sum())
    print(f"{sys.argv[1]} vs {other}: {len(first)} / {len(f)} records, {first.shape[1]} columns compared "
          f"(all but {', '.join(sorted(ASIDE))} and *_seconds): equal: {same}, rows differing: {rows}")
