"""The papers' classifiers as scikit-learn estimators.

The five of the EEM paper are binary; the minority class is the positive one
(``pos_label_``). WELM, EEM and EEKM have ``fit_path`` over hidden-layer sizes,
LSSVM over C. ``LSSVMEnsemble`` and ``LSSVMEnsembleGCV`` (Hwang 2016) take any
number of classes. ``MELM`` (Czarnecki, Jozefowicz & Tabor 2015) and its
baselines ``ClassPCA``, ``TwoEllipsoidPCA``, ``PerClassPCA`` and ``GEM`` are
supervised 2-D projections (transformers); ``KDEClassifier`` is the density
classifier the MELM paper puts on them. ``SMM`` (support matrix machine) and
``ESMM`` (SMM weighted by ``entropy_fuzzy_membership``, Zhu 2017) read each
point as a matrix; ``FSVM``, ``BFSVM`` and ``MatMHKS`` are that paper's
baselines; ``EntropyFuzzySVM`` and ``EntropyFuzzyEEM`` give its memberships to the SVM and EEM.
"""

import importlib

#: Where each public name lives. The classes are imported when first asked for (PEP 562), so that what only plans
#: or reads (``status``, the reports, a config's check of a built-in estimator's name) imports no scikit-learn;
#: ``from eemrepro.models import EEM`` and ``eemrepro.models.EEM`` work as before.
_HOMES = {
    "EEKM": "_entropy", "EEM": "_entropy", "DegenerateProjectionWarning": "_entropy", "EntropyFuzzyEEM": "_entropy",
    "entropy_fuzzy_membership": "_fuzzy", "BFSVM": "_fuzzy_svm", "FSVM": "_fuzzy_svm",
    "EntropyFuzzySVM": "_fuzzy_svm", "KDEClassifier": "_kde_classifier", "estimator_class": "_lookup",
    "LSSVM": "_lssvm", "LSSVMEnsemble": "_lssvm_ensemble", "LSSVMEnsembleGCV": "_lssvm_ensemble",
    "MatMHKS": "_matmhks", "MELM": "_melm", "GEM": "_projections", "ClassPCA": "_projections",
    "PerClassPCA": "_projections", "TwoEllipsoidPCA": "_projections", "ESMM": "_smm", "SMM": "_smm", "SVM": "_svm",
    "WELM": "_welm",
}

def __getattr__(name):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # asked once
    return value


def __dir__():
    return sorted({*globals(), *__all__})


__all__ = ["WELM", "EEM", "EEKM", "LSSVM", "SVM", "LSSVMEnsemble", "LSSVMEnsembleGCV",
           "MELM", "ClassPCA", "TwoEllipsoidPCA", "PerClassPCA", "GEM", "KDEClassifier",
           "entropy_fuzzy_membership", "SMM", "ESMM", "FSVM", "BFSVM", "MatMHKS", "EntropyFuzzySVM", "EntropyFuzzyEEM",
           "DegenerateProjectionWarning", "estimator_class"]

#: The public names that are estimators (classes with ``fit``): what a config may name, known without importing
#: them (a test holds it equal to the classes' own answer).
ESTIMATORS = tuple(n for n in __all__ if n not in ("DegenerateProjectionWarning", "entropy_fuzzy_membership",
                                                  "estimator_class"))
