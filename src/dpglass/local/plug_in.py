"""The plug-in rule of the histogram classifiers (paper 004): a label per grid cell, and what the private and
the non-private classifiers share (input checks, prediction, printing).

Two labels: the slides' ``C(x) = 1{T(x_{j*(x)}) >= 0}``.  ``K >= 3`` labels: the argmax of the label
frequencies of the nearest centre's cube, a tie to the later label (so that two labels give ``1{T >= 0}``
again).  Nothing here sees a record: the rule is a post-processing of the statistic.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from dpglass._validation import check_labels
from dpglass.exceptions import DataValidationError
from dpglass.local.labels import MAX_LABELS, _declared_classes, _plain
from dpglass.local.randomizers import Grid, check_bandwidth, check_bounds, check_features

__all__ = ["HistogramClassifier"]

#: The symbols of the labels on a printed two-feature map (``K >= 3``).
_SYMBOLS = "0123456789abcdefghijklmnopqrstuvwxyz"


def _cube_labels(statistic: np.ndarray) -> np.ndarray:
    """The label code of every cube: ``1{T >= 0}`` for two labels, else the argmax of the frequencies (a tie to
    the later label, which is ``1{T >= 0}`` for two)."""
    if statistic.ndim == 1:
        return (statistic >= 0).astype(np.int64)
    K = statistic.shape[1]
    return (K - 1 - np.argmax(statistic[:, ::-1], axis=1)).astype(np.int64)


class _GridClassifierMixin:
    """Input checks, prediction, printing shared by the private and the non-private histogram classifiers.

    Columns are matched by name as the central models match them (scikit-learn's ``feature_names_in_``
    and ``n_features_in_``, set by ``validate_data``), except that a DataFrame with the fitted columns in
    another order is reordered rather than refused; ``classes_`` are the user's labels, two or more
    (:func:`dpglass._validation.check_labels`, as the central models read them).  ``statistic_`` is ``T``
    (cubes,) for two labels, the label frequencies (cubes, K) for more; :func:`_cube_labels` is the rule.
    """

    #: The most labels a fit learns (the file check reads it too); the slides' "laplace" mechanism: 2 (see
    #: ``LDPHistogramClassifier._max_labels``; its file check refuses a "laplace" file of more labels).
    _max_classes = MAX_LABELS

    def _check_X(self, X, *, reset: bool) -> np.ndarray:
        """``X`` as a finite float array, its columns in the fitted order (``reset``: at fit, remember them)."""
        if not reset:
            check_is_fitted(self)
            X = self._columns_by_name(X)
            if not hasattr(X, "columns") and np.ndim(X) == 1 and np.size(X) == self.n_features_in_:
                X = np.asarray(X)[None, :]  # one record
        names = None if reset or hasattr(X, "columns") or not hasattr(self, "feature_names_in_") \
            else [str(c) for c in self.feature_names_in_]
        arr = check_features(X, None if reset else self.n_features_in_, names=names)
        try:  # feature names and their number: the central models' checks (a warning for an unnamed array)
            validate_data(self, X if hasattr(X, "columns") else arr, reset=reset, skip_check_array=True)
        except (TypeError, ValueError) as exc:
            raise DataValidationError(str(exc)) from None
        return arr

    def _columns_by_name(self, X):
        """A DataFrame's columns in the fitted order; a missing or an unknown column is refused by name."""
        if not (hasattr(X, "columns") and hasattr(self, "feature_names_in_")):
            return X
        names = [str(c) for c in self.feature_names_in_]
        given = [str(c) for c in X.columns]
        missing = [c for c in names if c not in given]
        extra = [c for c in given if c not in names]
        if missing or extra:
            parts = ([f"lacks the model's column(s) {missing!r}"] if missing else []) + \
                ([f"has column(s) {extra!r} that are not model features"] if extra else [])
            raise DataValidationError(f"X {' and '.join(parts)}; the model reads the columns {names!r} (by name, "
                                      "in any order): pass exactly those.")
        if len(set(given)) != len(given):
            dup = sorted({c for c in given if given.count(c) > 1})
            raise DataValidationError(f"X has the column(s) {dup!r} more than once.")
        if given == names:
            return X
        return X.iloc[:, [given.index(c) for c in names]]

    def _set_classes(self, y, n: int) -> np.ndarray:
        """``classes_`` from ``classes`` (declared) or from ``y`` as the central models read them; y as codes
        0..K-1 (int8 for two labels, int16 for more)."""
        max_labels, who = self._max_labels()
        codes, classes = check_labels(y, classes=_declared_classes(self.classes), max_classes=max_labels, model=who)
        if codes.shape[0] != n:
            raise DataValidationError(f"X has {n} rows but y has {codes.shape[0]} labels; they must match.")
        self.classes_ = classes
        return codes.astype(np.int8 if len(classes) == 2 else np.int16)

    def _max_labels(self) -> tuple[int, str]:
        """The most labels this model learns, and its name for the error when y has more."""
        return self._max_classes, type(self).__name__

    def _nearest_cubes(self, X) -> np.ndarray:
        X = self._check_X(X, reset=False)
        return self.grid_.nearest(self.grid_.unit(X))

    def decision_function(self, X):
        """``T(x_{j*(x)})`` for two labels (class ``classes_[1]`` where it is >= 0); for ``K >= 3`` the ``K``
        label frequencies of the cube ``j*(x)``."""
        return self.statistic_[self._nearest_cubes(X)]

    def predict(self, X):
        """The user's labels: the label of the nearest centre's cube (``classes_[1]`` where ``T >= 0`` for two)."""
        return self.classes_[_cube_labels(self.statistic_)[self._nearest_cubes(X)]]

    def predict_proba(self, X):
        """Hard probabilities (0 or 1), columns in ``classes_`` order: the plug-in classifier gives a label."""
        labels = _cube_labels(self.statistic_)[self._nearest_cubes(X)]
        if len(self.classes_) == 2:
            c = labels.astype(np.float64)
            return np.column_stack([1.0 - c, c])
        return (labels[:, None] == np.arange(len(self.classes_))[None, :]).astype(np.float64)

    def feature_names(self) -> list[str]:
        if hasattr(self, "feature_names_in_"):
            return [str(c) for c in self.feature_names_in_]
        return [f"x{i}" for i in range(self.n_features_in_)]

    def to_text(self) -> str:
        if len(self.classes_) > 2:
            return self._labels_text()
        g = self.grid_
        names = self.feature_names()
        neg, pos = (str(_plain(c)) for c in self.classes_)
        head = (f"{type(self).__name__}: grid step h={g.h:.4g} in the box "
                + ", ".join(f"{nm} in [{lo:g}, {hi:g}]" for nm, lo, hi in zip(names, g.lower, g.upper))
                + f"; {g.n_cubes} cells; predict {pos} where T >= 0, else {neg}")
        if g.d != 2:
            share = float((self.statistic_ >= 0).mean())
            return head + f"\n{share:.0%} of the cells predict {pos}"
        grid = (self.statistic_ >= 0).reshape(g.K + 1, g.K + 1)  # [j1, j0]
        rows = [f"{names[1]} ^   (1: {pos}, .: {neg})"]
        for j1 in range(g.K, -1, -1):
            rows.append("  " + "".join("1" if grid[j1, j0] else "." for j0 in range(g.K + 1)))
        rows.append(f"  -> {names[0]}")
        return head + "\n" + "\n".join(rows)

    def _labels_text(self) -> str:
        """``K >= 3``: the box, then a map of the cells' labels (d = 2) or each label's share of the cells."""
        g = self.grid_
        names = self.feature_names()
        labels = [str(_plain(c)) for c in self.classes_]
        cells = _cube_labels(self.statistic_)
        head = (f"{type(self).__name__}: grid step h={g.h:.4g} in the box "
                + ", ".join(f"{nm} in [{lo:g}, {hi:g}]" for nm, lo, hi in zip(names, g.lower, g.upper))
                + f"; {g.n_cubes} cells; predict the label of largest estimated frequency in the cell of the "
                f"nearest centre ({len(labels)} labels)")
        if g.d != 2 or len(labels) > len(_SYMBOLS):
            shares = np.bincount(cells, minlength=len(labels)) / cells.size
            return head + "\n" + "\n".join(f"{share:.0%} of the cells predict {lab}"
                                            for lab, share in zip(labels, shares))
        grid = cells.reshape(g.K + 1, g.K + 1)  # [j1, j0]
        legend = ", ".join(f"{_SYMBOLS[k]}: {lab}" for k, lab in enumerate(labels))
        rows = [f"{names[1]} ^   ({legend})"]
        for j1 in range(g.K, -1, -1):
            rows.append("  " + "".join(_SYMBOLS[grid[j1, j0]] for j0 in range(g.K + 1)))
        rows.append(f"  -> {names[0]}")
        return head + "\n" + "\n".join(rows)

    def __str__(self) -> str:
        try:
            check_is_fitted(self)
        except Exception:
            return repr(self)
        return self.to_text()



class HistogramClassifier(_GridClassifierMixin, ClassifierMixin, BaseEstimator):
    """The non-private reference: the same plug-in rule with exact indicators (no noise, no halves).

    ``T(x_j) = (1/n) sum_i 1{X_i in cube_j} (Y_i - 1/2)``, ``Y_i = 1`` for ``classes_[1]``; for ``K >= 3``
    labels the frequencies ``(1/n) sum_i 1{X_i in cube_j, Y_i = k}``.  Not private.
    """

    def __init__(self, *, bandwidth=0.1, bounds=None, classes=None):
        self.bandwidth = bandwidth
        self.bounds = bounds
        self.classes = classes

    def fit(self, X, y):
        X = self._check_X(X, reset=True)
        y = self._set_classes(y, X.shape[0])
        lower, upper = check_bounds(self.bounds, X.shape[1])
        grid = Grid(lower, upper, check_bandwidth(self.bandwidth))
        flat, valid = grid.cube_members(grid.unit(X))
        K = len(self.classes_)
        if K == 2:
            w = np.broadcast_to((y.astype(np.float64) - 0.5)[:, None], flat.shape)
            self.statistic_ = np.bincount(flat[valid], weights=w[valid], minlength=grid.n_cubes) / X.shape[0]
        else:
            self.statistic_ = np.column_stack([
                np.bincount(flat[valid & (y == k)[:, None]], minlength=grid.n_cubes) for k in range(K)]) / X.shape[0]
        self.grid_ = grid
        self.n_features_in_ = X.shape[1]
        return self
