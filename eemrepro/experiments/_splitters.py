"""Splitters: how a data set is cut into training and test parts, repeat by repeat.

Each has scikit-learn's ``BaseCrossValidator`` shape (``split(X, y, groups)``
yields (train, test) index arrays, ``get_n_splits()``), plus ``split_at(y,
repeat, fold)`` for one split on its own: a unit of work runs one split, and
the same (repeat, fold) must give the same indices in every process and for
every model on a data set. The seed of repeat r is derived from (seed, salt,
r), the salt being the data set's id, so a split does not depend on the number
of repeats or on which other data sets a config lists.

>>> import numpy as np
>>> y = np.array([0] * 6 + [1] * 4)
>>> s = StratifiedKFoldSplitter(n_splits=2, n_repeats=3, random_state=0, salt="toy")
>>> s.get_n_splits(), sum(len(test) for _, test in s.split(np.zeros((10, 1)), y))
(6, 30)
"""

import hashlib

import numpy as np


def derive_seed(*parts):
    """A 31-bit seed from the sha256 of the parts' text (benchopt's ``get_seed`` idea)."""
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


class _RepeatedSplitter:
    """``n_repeats`` independent draws of ``n_folds`` (train, test) pairs each."""

    n_folds = 1

    def __init__(self, n_repeats=1, random_state=0, salt=""):
        self.n_repeats = n_repeats
        self.random_state = random_state
        self.salt = salt

    def get_n_splits(self, X=None, y=None, groups=None):
        return self.n_repeats * self.n_folds

    def split(self, X, y=None, groups=None):
        y = np.asarray(y) if y is not None else np.zeros(len(X))
        for repeat in range(self.n_repeats):
            for fold in range(self.n_folds):
                yield self.split_at(y, repeat, fold)

    def _seed(self, repeat):
        return derive_seed(self.random_state, self.salt, "split", repeat)

    def split_at(self, y, repeat, fold):
        raise NotImplementedError

    def identity(self):
        """What makes two splitters cut the same way (part of a record's identity)."""
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.identity()})"


class StratifiedKFoldSplitter(_RepeatedSplitter):
    """Repeated stratified k-fold: every point is tested once per repeat."""

    def __init__(self, n_splits=10, n_repeats=1, random_state=0, salt=""):
        super().__init__(n_repeats, random_state, salt)
        self.n_splits = n_splits
        self.n_folds = n_splits

    def split_at(self, y, repeat, fold):
        from sklearn.model_selection import StratifiedKFold  # the splits are drawn by the units, not by a plan

        skf = StratifiedKFold(n_splits=self.n_splits, shuffle=True, random_state=self._seed(repeat))
        return list(skf.split(np.zeros(len(y)), y))[fold]

    def identity(self):
        return {"splitter": "stratified-kfold", "folds": self.n_splits, "seed": self.random_state}


class StratifiedTrainTestSplitter(_RepeatedSplitter):
    """Repeated stratified holdout: a ``train_size`` (count or fraction) training part, the rest tested."""

    def __init__(self, train_size=0.5, n_repeats=1, random_state=0, salt=""):
        super().__init__(n_repeats, random_state, salt)
        self.train_size = train_size

    def split_at(self, y, repeat, fold):
        if fold != 0:
            raise IndexError(f"a train/test splitter has one split per repeat, not fold {fold}")
        from sklearn.model_selection import StratifiedShuffleSplit

        sss = StratifiedShuffleSplit(n_splits=1, train_size=self.train_size, random_state=self._seed(repeat))
        return next(sss.split(np.zeros(len(y)), y))

    def identity(self):
        return {"splitter": "train-test", "train_size": self.train_size, "seed": self.random_state}


class WholeDataSplitter(_RepeatedSplitter):
    """No split: every repeat trains and evaluates on the whole data set."""

    def split_at(self, y, repeat, fold):
        idx = np.arange(len(y))
        return idx, idx

    def identity(self):
        return {"splitter": "whole", "seed": self.random_state}


SPLITTERS = ("stratified-kfold", "train-test", "whole")


def make_splitter(protocol, dataset):
    """The outer splitter a protocol names, salted by the data set id."""
    common = {"n_repeats": protocol.repeats, "random_state": protocol.seed, "salt": dataset}
    if protocol.splitter == "stratified-kfold":
        return StratifiedKFoldSplitter(n_splits=protocol.folds, **common)
    if protocol.splitter == "train-test":
        size = protocol.train_size
        return StratifiedTrainTestSplitter(train_size=size[dataset] if isinstance(size, dict) else size, **common)
    if protocol.splitter == "whole":
        return WholeDataSplitter(**common)
    raise ValueError(f"splitter must be one of {list(SPLITTERS)}, got {protocol.splitter!r}")


def split_positions(protocol, dataset):
    """Every (repeat, outer fold, inner fold or None) a unit runs on, in a fixed order."""
    inners = [None] + (list(range(protocol.inner_folds)) if protocol.selection == "nested" else [])
    n_folds = make_splitter(protocol, dataset).n_folds
    return [(r, f, i) for r in range(protocol.repeats) for f in range(n_folds) for i in inners]


def inner_split(y_train, inner_folds, seed, dataset, repeat, fold, inner):
    """(train, validation) positions within an outer training part (nested selection)."""
    import warnings

    from sklearn.model_selection import StratifiedKFold

    skf = StratifiedKFold(n_splits=inner_folds, shuffle=True,
                          random_state=derive_seed(seed, dataset, "inner", repeat, fold))
    with warnings.catch_warnings():  # said once, before the run, in its words (``_config.inner_folds_notes``)
        warnings.filterwarnings("ignore", message="The least populated class in y has only", category=UserWarning)
        return list(skf.split(np.zeros(len(y_train)), y_train))[inner]
