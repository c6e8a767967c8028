"""The papers' classifiers as scikit-learn estimators.

The five of the EEM paper are binary; the minority class is the positive one
(``pos_label_``). WELM, EEM and EEKM have ``fit_path`` over hidden-layer sizes,
LSSVM over C. ``LSSVMEnsemble`` and ``LSSVMEnsembleGCV`` (Hwang 2016) take any
number of classes.
"""

from ._entropy import EEKM, EEM, DegenerateProjectionWarning
from ._lssvm import LSSVM
from ._lssvm_ensemble import LSSVMEnsemble, LSSVMEnsembleGCV
from ._svm import SVM
from ._welm import WELM

__all__ = ["WELM", "EEM", "EEKM", "LSSVM", "SVM", "LSSVMEnsemble", "LSSVMEnsembleGCV",
           "DegenerateProjectionWarning"]
