"""Declared parameter constraints and input checks, one message format.

Estimators declare ``_parameter_constraints`` as data (a dict from parameter
name to a list of accepted constraints, as in scikit-learn) and call
:func:`validate_params` once at the top of ``fit``.  Messages follow one
format: ``The 'NAME' parameter of OWNER must be WHAT. Got VALUE instead.``

Data checks (:func:`check_binary_X`, :func:`check_binary_y`) raise
:class:`~dpglass.exceptions.DataValidationError`.  They necessarily look at the
data (a non-0/1 entry, a missing value, a single class): they are raised to the
curator who calls ``fit``, before anything is released, and never become part of
a released model.
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import validate_data

from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = [
    "Interval",
    "Options",
    "InstanceOf",
    "validate_params",
    "check_binary_X",
    "check_binary_y",
    "check_labels",
]


@dataclass(frozen=True)
class Interval:
    """A real or integer interval; ``None`` bounds are infinite.

    ``closed`` is one of ``"both"``, ``"left"``, ``"right"``, ``"neither"``.
    """

    kind: type
    left: float | None
    right: float | None
    closed: str = "both"

    def accepts(self, value) -> bool:
        if isinstance(value, bool):
            return False
        if self.kind is numbers.Integral:
            if not isinstance(value, numbers.Integral):
                return False
        elif not isinstance(value, numbers.Real):
            return False
        if isinstance(value, numbers.Real) and not math.isfinite(value) and not (
            self.left is None and self.right is None
        ):
            # +inf only passes an interval unbounded on that side
            if value == math.inf and self.right is None:
                return self.left is None or value > self.left
            return False
        lo_ok = self.left is None or (value >= self.left if self.closed in ("both", "left") else value > self.left)
        hi_ok = self.right is None or (value <= self.right if self.closed in ("both", "right") else value < self.right)
        return bool(lo_ok and hi_ok)

    def __str__(self) -> str:
        kind = "an int" if self.kind is numbers.Integral else "a float"
        lb = "[" if self.closed in ("both", "left") and self.left is not None else "("
        rb = "]" if self.closed in ("both", "right") and self.right is not None else ")"
        lo = "-inf" if self.left is None else f"{self.left:g}"
        hi = "inf" if self.right is None else f"{self.right:g}"
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


@dataclass(frozen=True)
class Options:
    """One of a fixed set of values (compared with ``==``)."""

    values: tuple

    def accepts(self, value) -> bool:
        return any(value is v or (type(value) is type(v) and value == v) for v in self.values)

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


@dataclass(frozen=True)
class InstanceOf:
    """An instance of a type (``None`` is written as ``InstanceOf(type(None))``)."""

    kind: type | tuple
    name: str = ""

    def accepts(self, value) -> bool:
        return isinstance(value, self.kind) and not (isinstance(value, bool) and self.kind is not bool)

    def __str__(self) -> str:
        if self.name:
            return self.name
        if self.kind is type(None):
            return "None"
        kind = self.kind if isinstance(self.kind, tuple) else (self.kind,)
        return "an instance of " + " or ".join(k.__name__ for k in kind)


def validate_params(params: dict, constraints: dict, owner: str) -> None:
    """Check every parameter in ``constraints`` against its accepted constraints.

    Raises
    ------
    InvalidParameterError
        ``The 'NAME' parameter of OWNER must be WHAT. Got VALUE instead.``

    Examples
    --------
    >>> validate_params({"epsilon": -1.0}, {"epsilon": [Interval(numbers.Real, 0, None, "neither")]}, "f")
    Traceback (most recent call last):
    ...
    dpglass.exceptions.InvalidParameterError: The 'epsilon' parameter of f must be a float in the range (0, inf). Got -1.0 instead.
    """
    for name, accepted in constraints.items():
        if name not in params:
            continue
        value = params[name]
        if any(c.accepts(value) for c in accepted):
            continue
        what = " or ".join(str(c) for c in accepted)
        raise InvalidParameterError(f"The {name!r} parameter of {owner} must be {what}. Got {value!r} instead.")


def check_binary_X(estimator, X, *, reset: bool, allow_empty: bool = False):
    """Validate a 0/1 feature matrix with scikit-learn's ``validate_data``.

    ``allow_empty``: zero rows are accepted (a private fit with a declared
    label set: n is private, so fitting must not fail on n = 0; docs/privacy.md,
    "Errors and warnings").

    Sets ``n_features_in_`` (and ``feature_names_in_`` for DataFrames with
    string column names) when ``reset`` is true; checks them otherwise.

    Returns
    -------
    numpy.ndarray of uint8, shape (n_samples, n_features)
    """
    import scipy.sparse

    if scipy.sparse.issparse(X):
        raise DataValidationError(
            f"{type(estimator).__name__} takes a dense 0/1 array or DataFrame, not a sparse matrix: call "
            "X.toarray() (0/1 data as uint8 is about as small as its sparse form)."
        )
    text = _first_text_column(X)
    if text is not None:
        name, value = text
        raise DataValidationError(
            f"{type(estimator).__name__} works on 0/1 features, but column {name!r} of X holds text (e.g. "
            f"{value!r}). Describe the raw table in a public schema (`dpglass schema --data FILE` writes a "
            "template; then `dpglass fit --schema`, or dpglass.models.DPPipeline in Python), or binarize it first."
        )
    try:
        X = validate_data(estimator, X, reset=reset, dtype="numeric", ensure_min_samples=0 if allow_empty else 1)
    except DataValidationError:
        raise
    except ValueError as exc:  # a DataValidationError is a ValueError: sklearn's checks still match
        raise DataValidationError(str(exc)) from exc
    if X.dtype == bool:
        return X.astype(np.uint8)
    for s in range(0, X.shape[0], 1 << 16):  # by blocks: no bool copies of the whole matrix
        block = X[s : s + (1 << 16)]
        binary = (block == 0) | (block == 1)
        if not binary.all():
            bad = int(np.argwhere(~binary.all(axis=0))[0, 0])
            names = getattr(estimator, "feature_names_in_", None)
            where = f"column {bad}" if names is None or len(names) <= bad else f"column {str(names[bad])!r}"
            raise DataValidationError(
                f"{type(estimator).__name__} works on binary features, but {where} of X has values "
                "other than 0 and 1. Binarize the data first with dpglass.datasets.Binarizer, using "
                "public thresholds or thresholds chosen with differential privacy."
            )
    return X.astype(np.uint8, copy=False)  # uint8 input is used as it is


def _first_text_column(X):
    """``(name, value)`` of a DataFrame's first column holding text, else None."""
    import pandas as pd

    if not isinstance(X, pd.DataFrame):
        return None
    for name in X.columns:
        col = X[name]
        if pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        for v in col:
            if isinstance(v, str):
                try:
                    float(v)
                except ValueError:
                    return name, v
    return None


#: Most classes a model learns: a label is one byte of a pattern table's key (dpglass.aggregates.table).
MAX_CLASSES = 255


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def check_labels(y, classes=None, *, max_classes=MAX_CLASSES, model=None):
    """Encode a target of K >= 2 classes as codes 0..K-1 (the index of each label in ``classes``).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    classes : array-like of K >= 2 distinct labels, or None
        The labels, in order (code k is ``classes[k]``).  ``None`` takes the sorted distinct labels of
        ``y``: the label *set* is treated as part of the public schema.
    max_classes : int
        The most classes the model learns (2 for a binary-only model).
    model : str or None
        The model's name, for the error when ``y`` has more classes than it learns.

    Returns
    -------
    codes : numpy.ndarray of uint8
    classes : numpy.ndarray of length K
    """
    if y is None:
        raise DataValidationError(
            "This classifier requires y to be passed, but the target y is None. Pass the labels."
        )
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            "A column-vector y was passed when a 1d array was expected; "
            f"y of shape {y.shape} is used as y.ravel(). Pass a 1d array to silence this warning.",
            DataConversionWarning,
            stacklevel=3,
        )
        y = y.ravel()
    if y.ndim != 1:
        raise DataValidationError(f"y should be a 1d array; got shape {y.shape}.")
    if classes is not None:
        labels = _declared_labels(classes)
    elif y.size == 0:
        raise DataValidationError("y is empty: fit needs at least one labelled record, or the declared "
                                  "classes (classes=[A, B, ...], --classes A,B,...).")
    else:
        labels = None
    if y.size and ((y.dtype.kind == "f" and np.isnan(y).any()) or (y.dtype == object and _any_missing(y))):
        raise DataValidationError("y has missing labels (NaN or None); drop or label those records first.")
    if y.size:
        try:
            kind = type_of_target(y)
        except ValueError as exc:
            raise DataValidationError(f"y is not a usable label array: {exc}") from exc
        if kind not in ("binary", "multiclass"):
            raise DataValidationError(
                f"Unknown label type: {kind!r}. dpglass classifiers need y with class labels "
                "(e.g. 0/1, or strings such as 'Adelie', 'Gentoo')."
            )
    if labels is None:
        labels = np.unique(y)
        if labels.size == 1:
            raise DataValidationError(
                f"y has only one class ({_plain(labels[0])!r}); a classifier needs two. "
                "Check the target column, or declare the label set (classes=[A, B, ...], --classes A,B,...)."
            )
    if labels.size > max_classes:
        shown = [_plain(v) for v in labels[:8]] + (["..."] if labels.size > 8 else [])
        who = model or "this model"
        if max_classes == 2:  # scikit-learn's words for a binary-only classifier (check_classifier_not_supporting_multiclass)
            raise DataValidationError(
                f"Only binary classification is supported by {who}: y has {labels.size} classes {shown!r}. "
                "Recode the target into two classes, or choose a model that learns K classes "
                "(`dpglass models` lists them).")
        raise DataValidationError(f"{who[0].upper() + who[1:]} learns {max_classes} classes at most, and y has {labels.size}: {shown!r}. "
                                  "Merge some classes first.")
    codes = np.zeros(y.shape[0], dtype=np.uint8)
    inside = np.zeros(y.shape[0], dtype=bool)
    for k, label in enumerate(labels):
        hit = y == label
        codes[hit] = k
        inside |= hit
    if not inside.all():
        outside = list(dict.fromkeys(_plain(v) for v in y[~inside]))[:5]
        raise DataValidationError(
            f"y has label(s) {outside!r} outside the declared classes {[_plain(v) for v in labels]!r}: recode "
            "them, or declare the right classes (classes=[A, B, ...], --classes A,B,...)."
        )
    return codes, labels


def _declared_labels(classes) -> np.ndarray:
    labels = np.asarray(classes)
    if labels.ndim != 1 or labels.size < 2:
        raise DataValidationError(f"classes must hold two labels or more; got {list(np.atleast_1d(labels))!r}.")
    if labels.size > MAX_CLASSES:
        raise DataValidationError(f"classes holds {labels.size} labels; dpglass learns {MAX_CLASSES} at most.")
    if len({_plain(v) for v in labels}) != labels.size:
        raise DataValidationError(f"classes holds a label twice: {[_plain(v) for v in labels]!r}.")
    return labels


def check_binary_y(y, classes=None, *, model=None):
    """:func:`check_labels` for a model that learns two classes: codes 0/1 (1 is ``classes[1]``)."""
    return check_labels(y, classes, max_classes=2, model=model)


def _any_missing(y) -> bool:
    """Whether an object label array holds a missing value (None or NaN)."""
    import pandas as pd

    return bool(pd.isna(y).any())
