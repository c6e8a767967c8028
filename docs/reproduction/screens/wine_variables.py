"""Screen for Hwang (2016) Table 4.1's wine, which the paper says has 12 variables (UCI's has 13).

Naive Bayes has no hyperparameter, so its error depends only on the data and the splits:
drop each variable in turn and compare the error over the config's 100 splits with the
paper's 0.0450 (0.0033). Run from the repository root:

    python docs/reproduction/screens/wine_variables.py
"""

import numpy as np
from sklearn.naive_bayes import GaussianNB

from eemrepro.datasets import load_dataset
from eemrepro.experiments import load_config, make_splitter


def main():
    config = load_config("configs/lssvm_ensemble.yaml")
    X, y, _ = load_dataset("wine")
    splitter = make_splitter(config.protocol, "wine")
    splits = [splitter.split_at(y, r, 0) for r in range(config.protocol.repeats)]

    def error(columns):
        e = [np.mean(GaussianNB().fit(X[tr][:, columns], y[tr]).predict(X[te][:, columns]) != y[te])
             for tr, te in splits]
        return np.mean(e), np.std(e, ddof=1) / np.sqrt(len(e))

    print("variables | Naive Bayes error (standard error) | paper 0.0450 (0.0033)")
    print("all 13 | %.4f (%.4f)" % error(list(range(X.shape[1]))))
    for j in range(X.shape[1]):
        print("without %d | %.4f (%.4f)" % ((j + 1,) + error([c for c in range(X.shape[1]) if c != j])))


if __name__ == "__main__":
    main()
