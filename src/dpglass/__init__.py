"""dpglass: differentially private glass-box classifiers.

Interpretable models (rule lists, votes of stumps, small tree ensembles) trained
with a stated, checkable (epsilon, delta)-differential-privacy guarantee.  Every
fitted model exposes ``privacy_ledger_``: the list of everything it released
about its training data, with the budget each release spent.
"""

from dpglass.exceptions import (
    BudgetExceededError,
    DataValidationError,
    DatasetNotFoundError,
    InvalidParameterError,
    PrivacyLeakWarning,
)
from dpglass.privacy.ledger import PrivacyLedger

__version__ = "0.1.0.dev0"

__all__ = [
    "BudgetExceededError",
    "DataValidationError",
    "DatasetNotFoundError",
    "InvalidParameterError",
    "PrivacyLeakWarning",
    "PrivacyLedger",
    "__version__",
]
