"""Exceptions and warnings raised by dpglass.

Every error a user can trigger is one of these typed classes, so callers can
catch precisely what they expect.  Messages say what is wrong *and* what to do.
"""

__all__ = [
    "UnprovenGuaranteeWarning",
    "WeakGuaranteeWarning",
    "BudgetExceededError",
    "DataValidationError",
    "DatasetNotFoundError",
    "InvalidParameterError",
    "ModelFileError",
    "NotFittedError",
    "PrivacyLeakWarning",
    "UndeclaredClassesWarning",
]

from sklearn.exceptions import NotFittedError  # public sklearn API, re-exported


class PrivacyLeakWarning(UserWarning):
    """Something derived from private data is used without privacy budget.

    Raised, for example, when a :class:`~dpglass.datasets.Binarizer` computes
    quantiles of the training data without spending budget on them, or when a
    user supplies a hyper-parameter that the library cannot verify to be
    data-independent.  The released model then carries no end-to-end
    differential-privacy guarantee for that part of the pipeline.
    """


class UndeclaredClassesWarning(UserWarning):
    """A private model fits without a declared label set (``classes=None``, no ``--classes``).

    The labels are then read from y and published in the model (its ``classes``
    and the shapes that follow from K): which classes occur in the private data,
    so one record of a rare class is revealed with certainty.  Declare the label
    set to close it.  Raised on every such fit, whatever the data (the warning
    depends on the parameters only); it is the label set's analogue of
    :class:`PrivacyLeakWarning`, kept apart so that a script that declares its
    labels elsewhere can filter it alone.
    """


class InvalidParameterError(ValueError, TypeError):
    """A public parameter has a value or type outside its declared constraints.

    Inherits from both ``ValueError`` and ``TypeError`` (as scikit-learn's own
    ``InvalidParameterError`` does) so generic ``except`` clauses keep working.
    """


class DataValidationError(ValueError):
    """The data passed to ``fit``/``predict`` cannot be used as given.

    Examples: non-binary features for a model on binary features, missing
    values, a single class, an empty array, an unreadable CSV file.
    """


class ModelFileError(DataValidationError):
    """A model file is incomplete or inconsistent.

    Raised when a saved model (the JSON written by ``save``/``to_dict``) lacks
    a key, holds a value of the wrong type or out of range, or carries a
    privacy ledger that does not match the model's parameters (an emptied,
    lowered or edited ledger, a budget or guarantee changed by hand).  Such a
    file is refused rather than trusted: re-save the model with dpglass and do
    not edit model files by hand.  A :class:`DataValidationError`, so code
    that already catches unreadable model files keeps working.
    """


class BudgetExceededError(RuntimeError):
    """A release would spend more privacy budget than the ledger allows."""


class DatasetNotFoundError(FileNotFoundError):
    """A dataset file is neither in the data home nor downloadable here."""


class UnprovenGuaranteeWarning(UserWarning):
    """The model is fitted with a mechanism whose guarantee is a paper's claim, not a proof.

    Its ledger marks those releases ``paper-claim`` (docs/privacy.md says why);
    the warning repeats it at fit time so nobody publishes such a model by
    accident.  Use the default (proven) mechanism for a release.
    """


class WeakGuaranteeWarning(UserWarning):
    """The requested epsilon is so large that the guarantee means little (above 10)."""
