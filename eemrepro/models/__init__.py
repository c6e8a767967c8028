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

from ._entropy import EEKM, EEM, DegenerateProjectionWarning, EntropyFuzzyEEM
from ._fuzzy import entropy_fuzzy_membership
from ._fuzzy_svm import BFSVM, FSVM, EntropyFuzzySVM
from ._kde_classifier import KDEClassifier
from ._lookup import estimator_class
from ._lssvm import LSSVM
from ._lssvm_ensemble import LSSVMEnsemble, LSSVMEnsembleGCV
from ._matmhks import MatMHKS
from ._melm import MELM
from ._projections import GEM, ClassPCA, PerClassPCA, TwoEllipsoidPCA
from ._smm import ESMM, SMM
from ._svm import SVM
from ._welm import WELM

__all__ = ["WELM", "EEM", "EEKM", "LSSVM", "SVM", "LSSVMEnsemble", "LSSVMEnsembleGCV",
           "MELM", "ClassPCA", "TwoEllipsoidPCA", "PerClassPCA", "GEM", "KDEClassifier",
           "entropy_fuzzy_membership", "SMM", "ESMM", "FSVM", "BFSVM", "MatMHKS", "EntropyFuzzySVM", "EntropyFuzzyEEM",
           "DegenerateProjectionWarning", "estimator_class"]
