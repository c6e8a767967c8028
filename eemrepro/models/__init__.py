"""The five classifiers of the EEM paper as scikit-learn estimators.

All are binary; the minority class is the positive one (``pos_label_``).
WELM, EEM and EEKM have ``fit_path`` over hidden-layer sizes, LSSVM over C.
"""

from ._entropy import EEKM, EEM, DegenerateProjectionWarning
from ._lssvm import LSSVM
from ._svm import SVM
from ._welm import WELM

__all__ = ["WELM", "EEM", "EEKM", "LSSVM", "SVM", "DegenerateProjectionWarning"]
