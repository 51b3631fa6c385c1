"""Turn numeric and categorical columns into named 0/1 columns.

dpglass models work on binary features.  :class:`Binarizer` produces them from
a table, in one of three ways, which differ in what they reveal about the data:

* ``method="given"``: the thresholds (and the categories of categorical
  columns) are supplied by the user.  If they are public, nothing about the
  data is released.
* ``method="dp-quantiles"``: the thresholds are quantiles of each numeric
  column, chosen with the exponential mechanism (Smith 2011) within public
  bounds; the cost is recorded in ``privacy_ledger_``.
* ``method="quantiles"``: the thresholds are the exact quantiles of the data.
  This is **not** private and emits a
  :class:`~dpglass.exceptions.PrivacyLeakWarning`.

The exponential-mechanism quantile is the pure function :func:`dp_quantile`.
The argument for its guarantee is in ``docs/privacy.md`` (section "Binarizer").
"""

from __future__ import annotations

import functools
import math
import numbers
import warnings

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import InstanceOf, Interval, Options, validate_params
from dpglass.exceptions import DataValidationError, InvalidParameterError, PrivacyLeakWarning
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger
from dpglass.privacy.plan import PlannedRelease, Points, Unrestricted
from dpglass.privacy.quantile import check_bounds as _check_bounds
from dpglass.privacy.quantile import dp_quantile, quantile_grid
from dpglass.privacy.rng import check_random_state

__all__ = ["Binarizer", "dp_quantile"]

_MECHANISM = "exponential-quantile"


# --------------------------------------------------------------------------- DP quantile
# --------------------------------------------------------------------------- helpers
def _format_value(t) -> str:
    """Shortest readable text for a threshold: ``25``, ``0.11``, else ``repr``."""
    t = float(t)
    if t.is_integer() and abs(t) < 1e15:
        return str(int(t))
    short = f"{t:.6g}"
    return short if float(short) == t else repr(t)


def _round_release(t: float) -> float:
    """Round a released threshold to 6 significant digits (post-processing)."""
    return float(f"{t:.6g}")


def _dp_quantile_noise(values, rng, *, q, epsilon, bounds) -> float:
    return dp_quantile(values, q, epsilon, bounds, rng)


def _exact_quantile(values, rng, *, q) -> float:
    return float(np.quantile(values, q))


def _observed_values(column, rng) -> list:
    return sorted(pd.unique(column).tolist(), key=lambda v: (str(type(v)), str(v)))


def _is_numeric(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)


def _as_frame(X):
    """Wrap X as a DataFrame; return (frame, keys, names, is_frame)."""
    if isinstance(X, pd.DataFrame):
        keys = list(X.columns)
        return X, keys, [str(k) for k in keys], True
    if isinstance(X, pd.Series):
        raise DataValidationError("Binarizer needs a 2d table; got a Series. Pass series.to_frame() instead.")
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise DataValidationError(
            f"Binarizer needs a 2d array or DataFrame; got an array of shape {arr.shape}. "
            "Reshape a single feature with X.reshape(-1, 1)."
        )
    frame = pd.DataFrame(arr)
    if arr.dtype == object:
        # per column, by the *type* of its entries (schema), never by whether
        # their values happen to parse: numbers -> numeric, strings -> categorical
        for j in frame.columns:
            present = frame[j][frame[j].notna()]
            is_num = present.map(lambda v: isinstance(v, (numbers.Real, np.bool_)) and not isinstance(v, str))
            if is_num.all():
                frame[j] = pd.to_numeric(frame[j])
            elif is_num.any():
                raise DataValidationError(
                    f"Column {j} of X mixes numbers and strings; give each column one type "
                    "(numbers for thresholds, strings for categories), or pass a DataFrame with dtypes."
                )
    keys = list(range(arr.shape[1]))
    return frame, keys, [f"x{j}" for j in keys], False


def _check_no_missing(frame: pd.DataFrame, names) -> None:
    missing = frame.isna().to_numpy().any(axis=0)
    if missing.any():
        bad = [names[j] for j in np.flatnonzero(missing)]
        raise DataValidationError(
            f"X has missing values (NaN/None) in column(s) {bad}. Binarizer needs complete data: "
            "impute first (e.g. sklearn.impute.SimpleImputer with a public fill value) or drop those rows."
        )


# --------------------------------------------------------------------------- Binarizer
def _output_layout(keys, names, kinds, thresholds_, categories_):
    """Output column names ``col>t`` / ``col=v`` and their layout; refuses duplicates."""
    out_names, layout = [], []
    for j in range(len(keys)):
        if kinds[j] == "num":
            for t in thresholds_[j]:
                out_names.append(f"{names[j]}>{_format_value(t)}")
                layout.append((j, "num", t))
        else:
            for v in categories_[j]:
                out_names.append(f"{names[j]}={v}")
                layout.append((j, "cat", v))
    dupes = sorted({n for n in out_names if out_names.count(n) > 1}) if len(set(out_names)) < len(out_names) else []
    if dupes:
        raise DataValidationError(
            f"Binarizer would produce duplicate output column names {dupes!r}. Rename the input "
            "columns or categories so that every 'column>threshold' and 'column=value' is unique."
        )

    return out_names, layout


class Binarizer(TransformerMixin, BaseEstimator):
    """Encode numeric and categorical columns as named 0/1 columns.

    A numeric column ``c`` with thresholds ``t1 < t2 < ...`` becomes the columns
    ``"c>t1"``, ``"c>t2"``, ... (strictly greater).  A categorical column ``c``
    (object, string or category dtype, or any column listed in ``categories``)
    becomes ``"c=v"`` for each of its categories ``v`` (compared with ``==``;
    a value outside the categories gives 0 in every ``"c=v"`` column).
    Column names are the DataFrame's column labels, or ``x0, x1, ...`` for
    arrays.

    Parameters
    ----------
    thresholds : dict or None
        ``{column: [t1, t2, ...]}``: fixed thresholds.  Keys are DataFrame
        column labels, or integer positions for arrays.  With
        ``method="given"`` every numeric column needs an entry; with the other
        methods, columns listed here keep the given thresholds and the others
        get data-derived ones.
    method : {"given", "dp-quantiles", "quantiles"}
        How thresholds missing from ``thresholds`` are found.  ``"given"``:
        none may be missing.  ``"dp-quantiles"``: the ``k/(n_thresholds+1)``
        quantiles, ``k = 1..n_thresholds``, of each remaining numeric column,
        each released with :func:`dp_quantile` within ``bounds``.
        ``"quantiles"``: the exact quantiles (not private: emits
        :class:`~dpglass.exceptions.PrivacyLeakWarning`).
    n_thresholds : int >= 1
        Number of data-derived thresholds per numeric column.
    epsilon : float > 0 or None
        Privacy budget of ``method="dp-quantiles"``, split evenly over all the
        (column, quantile) releases.  Ignored by the other methods.
    bounds : dict or None
        ``{column: (lo, hi)}``: public bounds for every numeric column whose
        thresholds ``method="dp-quantiles"`` derives.  **Values outside the
        bounds are clipped to them** before the quantile is computed (the
        clipping is part of the mechanism; how many values were clipped is not
        released or reported).  The bounds must not be computed from the data.
    categories : dict or None
        ``{column: [v1, v2, ...]}``: the categories to one-hot encode.  A
        categorical column absent from this dict is encoded with the values
        found in the data, which reveals them: that emits a
        :class:`~dpglass.exceptions.PrivacyLeakWarning`.
    random_state : None, int, numpy.random.SeedSequence or numpy.random.Generator
        Randomness of ``method="dp-quantiles"``.

    Attributes
    ----------
    thresholds_ : dict
        ``{column: numpy.ndarray}`` sorted distinct thresholds of each numeric column.
    categories_ : dict
        ``{column: list}`` categories of each categorical column.
    privacy_ledger_ : dpglass.privacy.ledger.PrivacyLedger
        One entry per released threshold for ``"dp-quantiles"`` (mechanism
        ``"exponential-quantile"``, budget ``epsilon``); entries with
        guarantee ``"none"`` for everything derived from the data without
        privacy (``"quantiles"``, categories read from the data); empty when
        everything was given.
    n_features_in_ : int
    feature_names_in_ : numpy.ndarray
        Only when ``X`` was a DataFrame with string column labels.

    Notes
    -----
    ``transform`` returns a DataFrame of ``uint8`` (same index) when given a
    DataFrame, else a ``uint8`` ndarray.  NaN in ``X`` raises
    :class:`~dpglass.exceptions.DataValidationError`: impute first.
    DP thresholds are rounded to 6 significant digits after release
    (post-processing); two thresholds of a column that coincide are merged.

    Examples
    --------
    >>> import pandas as pd
    >>> X = pd.DataFrame({"age": [23, 41, 67], "sex": ["Male", "Female", "Male"]})
    >>> b = Binarizer(thresholds={"age": [30, 60]}, categories={"sex": ["Female", "Male"]})
    >>> b.fit_transform(X)
       age>30  age>60  sex=Female  sex=Male
    0       0       0           0         1
    1       1       0           1         0
    2       1       1           0         1

    With differential privacy, on public bounds:

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"income": rng.normal(50, 10, size=2000)})
    >>> b = Binarizer(method="dp-quantiles", n_thresholds=1, epsilon=1.0,
    ...               bounds={"income": (0, 100)}, random_state=0).fit(X)
    >>> bool(48 < b.thresholds_["income"][0] < 52)
    True
    >>> b.privacy_ledger_.total()
    (1.0, 0.0)
    """

    _parameter_constraints = {
        "thresholds": [InstanceOf(dict, "a dict {column: list of thresholds}"), InstanceOf(type(None))],
        "method": [Options(("given", "dp-quantiles", "quantiles"))],
        "n_thresholds": [Interval(numbers.Integral, 1, None)],
        "epsilon": [Interval(numbers.Real, 0, None, "neither"), InstanceOf(type(None))],
        "bounds": [InstanceOf(dict, "a dict {column: (lo, hi)}"), InstanceOf(type(None))],
        "categories": [InstanceOf(dict, "a dict {column: list of categories}"), InstanceOf(type(None))],
    }

    def __init__(
        self,
        *,
        thresholds=None,
        method="given",
        n_thresholds=3,
        epsilon=None,
        bounds=None,
        categories=None,
        random_state=None,
    ):
        self.thresholds = thresholds
        self.method = method
        self.n_thresholds = n_thresholds
        self.epsilon = epsilon
        self.bounds = bounds
        self.categories = categories
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        tags.requires_fit = True
        return tags

    # ------------------------------------------------------------ validation
    def _validate_params(self) -> None:
        owner = "Binarizer"
        validate_params(self.get_params(deep=False), self._parameter_constraints, owner)
        check_random_state(self.random_state)  # type check only; draws nothing
        if self.epsilon is not None and not math.isfinite(self.epsilon):
            raise InvalidParameterError(
                f"The 'epsilon' parameter of {owner} must be a finite float in the range (0, inf). "
                f"Got {self.epsilon!r} instead. For exact (non-private) quantiles use method='quantiles'."
            )
        if self.method == "dp-quantiles" and self.epsilon is None:
            raise InvalidParameterError(
                "The 'epsilon' parameter of Binarizer must be a float in the range (0, inf) when "
                "method='dp-quantiles'. Got None instead. Give the privacy budget for the thresholds, "
                "e.g. Binarizer(method='dp-quantiles', epsilon=0.5, bounds={...})."
            )

    def _resolve_keys(self, mapping, keys, param: str, is_frame: bool) -> dict:
        """Map user keys of ``mapping`` to positions; refuse unknown keys."""
        if not mapping:
            return {}
        where = {k: j for j, k in enumerate(keys)}
        unknown = [k for k in mapping if k not in where]
        if unknown:
            hint = f"the columns of X are {keys!r}" if is_frame else f"X has {len(keys)} columns (keys are positions 0..{len(keys) - 1})"
            raise InvalidParameterError(
                f"The {param!r} parameter of Binarizer names column(s) {unknown!r} that are not in X; {hint}."
            )
        return {where[k]: v for k, v in mapping.items()}

    # ------------------------------------------------------------ fit
    def fit(self, X, y=None):
        """Choose the thresholds and categories.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        y : ignored

        Returns
        -------
        self
        """
        self._validate_params()
        frame, keys, names, is_frame = _as_frame(X)
        if frame.shape[0] == 0:
            raise DataValidationError("X has no rows; Binarizer.fit needs at least one record.")
        _check_no_missing(frame, names)

        given = self._resolve_keys(self.thresholds, keys, "thresholds", is_frame)
        cats = self._resolve_keys(self.categories, keys, "categories", is_frame)
        bounds = self._resolve_keys(self.bounds, keys, "bounds", is_frame)
        both = sorted(set(given) & set(cats))
        if both:
            raise InvalidParameterError(
                f"Column(s) {[keys[j] for j in both]!r} are in both 'thresholds' and 'categories'; "
                "give each column either thresholds (numeric cut points) or categories (one-hot), not both."
            )

        kinds = {}
        for j in range(len(keys)):
            if j in cats:
                kinds[j] = "cat"
            elif _is_numeric(frame.iloc[:, j]):
                kinds[j] = "num"
            else:
                kinds[j] = "cat"
                if j in given:
                    raise InvalidParameterError(
                        f"The 'thresholds' parameter of Binarizer gives thresholds for column {keys[j]!r}, "
                        f"which is categorical (dtype {frame.iloc[:, j].dtype}). List its values in "
                        "'categories' instead, or convert it to numbers first."
                    )
        derive = [j for j in range(len(keys)) if kinds[j] == "num" and j not in given]
        if self.method == "given" and derive:
            raise InvalidParameterError(
                f"Binarizer(method='given') has no thresholds for numeric column(s) "
                f"{[keys[j] for j in derive]!r}. Add them to 'thresholds', drop the columns, or use "
                "method='dp-quantiles' with public bounds."
            )
        if self.method == "dp-quantiles":
            no_bounds = [keys[j] for j in derive if j not in bounds]
            if no_bounds:
                raise InvalidParameterError(
                    f"Binarizer(method='dp-quantiles') needs public bounds for column(s) {no_bounds!r}: "
                    "pass bounds={column: (lo, hi)} chosen without looking at the data "
                    "(e.g. from the variable's documented range)."
                )
            checked = {j: _check_bounds(bounds[j], "Binarizer", f"bounds[{keys[j]!r}]") for j in derive}

        ledger = PrivacyLedger(epsilon=self.epsilon if self.method == "dp-quantiles" else None)
        thresholds_ = {}
        for j, values in given.items():
            thresholds_[j] = self._check_given_thresholds(keys[j], values)

        # every release through one plan: the thresholds' quantiles, then the categories read off the data
        from_data = [j for j in range(len(keys)) if kinds[j] == "cat" and j not in cats]
        plan = self._threshold_plan(derive, checked if self.method == "dp-quantiles" else {}, names)
        plan += [PlannedRelease(LedgerEntry(f"categories of column {names[j]!r}", "observed-values", epsilon=0.0,
                                            guarantee="none", note="non-private: the set of values present in the data"),
                                _observed_values, Unrestricted()) for j in from_data]
        steps = iter(plan)
        ledger.follow(plan)
        self._derive_thresholds(frame, derive, names, ledger, steps, thresholds_)
        categories_ = self._fit_categories(frame, keys, names, kinds, cats, ledger, steps)
        out_names, layout = _output_layout(keys, names, kinds, thresholds_, categories_)

        self.n_features_in_ = len(keys)
        if is_frame and all(isinstance(k, str) for k in keys):
            self.feature_names_in_ = np.asarray(keys, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self._keys = keys
        self._names = names
        self._fitted_on_frame = is_frame
        self._kinds = kinds
        self._layout = layout
        self.thresholds_ = {keys[j]: t for j, t in sorted(thresholds_.items())}
        self.categories_ = {keys[j]: c for j, c in sorted(categories_.items())}
        self.feature_names_out_ = np.asarray(out_names, dtype=object)
        self.privacy_ledger_ = ledger
        return self

    def _derive_thresholds(self, frame, derive, names, ledger, steps, thresholds_) -> None:
        """Thresholds of the numeric columns without given ones: DP quantiles, or exact ones (warns)."""
        qs = np.arange(1, self.n_thresholds + 1) / (self.n_thresholds + 1)
        if not derive:
            return
        if self.method != "dp-quantiles":  # method == "quantiles"
            warnings.warn(
                f"Binarizer(method='quantiles') computes thresholds from the data of column(s) "
                f"{[names[j] for j in derive]!r} without differential privacy; models trained on the "
                "output carry no end-to-end privacy guarantee. Use method='dp-quantiles' with public "
                "bounds, or fixed public thresholds.",
                PrivacyLeakWarning,
                stacklevel=2,
            )
        rng = check_random_state(self.random_state) if self.method == "dp-quantiles" else None
        for j in derive:
            col = frame.iloc[:, j].to_numpy(dtype=float)
            released = [_round_release(ledger.release(next(steps), col, rng)) for _ in qs]
            thresholds_[j] = np.unique(np.asarray(released, dtype=float))

    def _threshold_plan(self, derive, checked, names) -> list:
        """The thresholds' releases, column by column and quantile by quantile: DP quantiles (points of the
        public grid of the bounds) or, with ``method="quantiles"``, the exact ones, recorded as not private."""
        steps, qs = [], np.arange(1, self.n_thresholds + 1) / (self.n_thresholds + 1)
        eps_each = self.epsilon / max(len(derive) * len(qs), 1) if self.method == "dp-quantiles" else 0.0
        for j in derive:
            for q in qs:
                release = f"threshold of column {names[j]!r}: quantile {q:.4g}"
                if self.method != "dp-quantiles":
                    entry = LedgerEntry(release, "empirical-quantile", epsilon=0.0, guarantee="none",
                                        note="non-private: the exact quantile of the data; no differential-privacy "
                                             "guarantee")
                    steps.append(PlannedRelease(entry, functools.partial(_exact_quantile, q=q), Unrestricted()))
                    continue
                lo, hi = checked[j]
                entry = LedgerEntry(release, _MECHANISM, epsilon=eps_each, sensitivity=1.0, note=(
                    f"exponential mechanism (Smith 2011) on utility -|#{{x < t}} - q n|, values clipped "
                    f"to the public bounds [{lo:g}, {hi:g}]; budget {self.epsilon:g} split evenly over "
                    f"{len(derive) * len(qs)} releases"))
                grid = Points(tuple(float(t) for t in quantile_grid(lo, hi)))
                steps.append(PlannedRelease(entry, functools.partial(_dp_quantile_noise, q=q, epsilon=eps_each,
                                                                     bounds=(lo, hi)), grid))
        return steps

    def _fit_categories(self, frame, keys, names, kinds, cats, ledger, steps) -> dict:
        """Categories of the categorical columns: given, or read off the data (warns, ledger 'none')."""
        categories_ = {}
        from_data = []
        for j in range(len(keys)):
            if kinds[j] != "cat":
                continue
            if j in cats:
                categories_[j] = self._check_categories(keys[j], cats[j])
            else:
                from_data.append(j)
                categories_[j] = ledger.release(next(steps), frame.iloc[:, j], None)
        if from_data:
            warnings.warn(
                f"Binarizer one-hot encodes column(s) {[names[j] for j in from_data]!r} with the values "
                "found in the data, which reveals them (e.g. a rare category). Pass "
                "categories={column: [values]} from the public schema instead.",
                PrivacyLeakWarning,
                stacklevel=2,
            )

        return categories_

    @staticmethod
    def _check_given_thresholds(key, values) -> np.ndarray:
        try:
            arr = np.asarray(values, dtype=float).ravel()
        except (TypeError, ValueError):
            arr = None
        if arr is None or arr.size == 0 or np.isnan(arr).any() or isinstance(values, (str, bytes)):
            raise InvalidParameterError(
                f"The 'thresholds' parameter of Binarizer must map each column to a non-empty list of "
                f"numbers. Got {values!r} for column {key!r} instead."
            )
        return np.unique(arr)

    @staticmethod
    def _check_categories(key, values) -> list:
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise InvalidParameterError(
                f"The 'categories' parameter of Binarizer must map each column to a list of values. "
                f"Got {values!r} for column {key!r} instead."
            )
        values = list(values)
        if not values or any(pd.isna(v) for v in values) or not pd.Index(values, dtype=object).is_unique:
            raise InvalidParameterError(
                f"The 'categories' parameter of Binarizer must map each column to a non-empty list of "
                f"distinct, non-missing values. Got {values!r} for column {key!r} instead."
            )
        return values

    # ------------------------------------------------------------ transform
    def transform(self, X):
        """Encode X with the fitted thresholds and categories.

        Parameters
        ----------
        X : pandas.DataFrame or array-like of shape (n_samples, n_features_in_)

        Returns
        -------
        pandas.DataFrame or numpy.ndarray of uint8, shape (n_samples, n_features_out)
        """
        check_is_fitted(self, "thresholds_")
        frame, keys, names, is_frame = _as_frame(X)
        if is_frame and self._fitted_on_frame:
            absent = [k for k in self._keys if k not in frame.columns]
            if absent:
                raise DataValidationError(
                    f"X lacks the column(s) {absent!r} that Binarizer was fitted on; pass the same columns."
                )
            frame = frame.loc[:, self._keys]
        elif frame.shape[1] != self.n_features_in_:
            raise DataValidationError(
                f"X has {frame.shape[1]} columns, but Binarizer was fitted on {self.n_features_in_}."
            )
        _check_no_missing(frame, self._names)
        out = np.zeros((frame.shape[0], len(self._layout)), dtype=np.uint8)
        numeric_cache, cat_cache = {}, {}
        for c, (j, kind, value) in enumerate(self._layout):
            if kind == "num":
                if j not in numeric_cache:
                    try:
                        numeric_cache[j] = frame.iloc[:, j].to_numpy(dtype=float)
                    except (TypeError, ValueError) as exc:
                        raise DataValidationError(
                            f"Column {self._names[j]!r} was numeric at fit time but has non-numeric values now."
                        ) from exc
                out[:, c] = numeric_cache[j] > value
            else:
                if j not in cat_cache:
                    cats = self.categories_[self._keys[j]]
                    index = pd.Index(cats, dtype=object)  # unique: checked at fit; unknown values give -1
                    cat_cache[j] = (index.get_indexer(frame.iloc[:, j].to_numpy(dtype=object)), cats)
                codes, cats = cat_cache[j]
                out[:, c] = codes == cats.index(value)
        if is_frame:
            return pd.DataFrame(out, columns=list(self.feature_names_out_), index=frame.index)
        return out

    def get_feature_names_out(self, input_features=None):
        """Output column names, ``"col>t"`` and ``"col=value"``.

        Parameters
        ----------
        input_features : array-like of str or None
            Must equal ``feature_names_in_`` (or have ``n_features_in_``
            entries, which then replace ``x0, x1, ...``).

        Returns
        -------
        numpy.ndarray of str
        """
        check_is_fitted(self, "thresholds_")
        if input_features is None:
            return self.feature_names_out_.copy()
        input_features = [str(f) for f in input_features]
        if hasattr(self, "feature_names_in_") and list(input_features) != list(self.feature_names_in_):
            raise InvalidParameterError("input_features is not equal to feature_names_in_.")
        if len(input_features) != self.n_features_in_:
            raise InvalidParameterError(
                f"input_features should have length {self.n_features_in_}, got {len(input_features)}."
            )
        out = []
        for j, kind, value in self._layout:
            op = ">" if kind == "num" else "="
            text = _format_value(value) if kind == "num" else str(value)
            out.append(f"{input_features[j]}{op}{text}")
        return np.asarray(out, dtype=object)
