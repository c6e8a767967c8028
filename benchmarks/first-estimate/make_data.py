"""Write the three CSVs of issue 67's user case (400, 300 and 550 rows, imbalanced), from a fixed seed.

Run as ``python benchmarks/first-estimate/make_data.py``: the files it writes are committed beside it,
so the benchmark needs neither this script nor the network.
"""

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import make_classification

HERE = Path(__file__).resolve().parent
#: (file, rows, features, share of the positive class): three clinics' files of different sizes.
FILES = (("clinic-a.csv", 400, 10, 0.20), ("clinic-b.csv", 300, 8, 0.15), ("clinic-c.csv", 550, 12, 0.25))


def write(seed=0):
    for i, (name, n, d, share) in enumerate(FILES):
        X, y = make_classification(n_samples=n, n_features=d, n_informative=d // 2, n_redundant=2,
                                   weights=[1 - share], flip_y=0.03, class_sep=1.0, random_state=seed + i)
        frame = pd.DataFrame(np.round(X, 4), columns=[f"x{j + 1}" for j in range(d)])
        frame["diagnosis"] = np.where(y == 1, "malignant", "benign")
        frame.to_csv(HERE / name, index=False)


if __name__ == "__main__":
    write()
