"""Differentially private logistic regression by output perturbation on a public grid.

:class:`DPLogisticRegression` minimises the *unnormalised* regularised logistic
loss ``sum_i log(1 + exp(-y_i f.x_i)) + (alpha/2)||f||^2`` (no number of records
anywhere: under add/remove neighbours ``n`` is private), certifies the solver's
accuracy, rounds the solution to a public power-of-two grid and adds exact
discrete Laplace noise in grid units (:mod:`dpglass.privacy.objective_perturbation`).
Rows (with the constant 1 for the intercept) are scaled by a public bound
``data_norm`` and rows above it are shrunk (a per-record map, no privacy cost).
With K >= 3 declared classes the loss is the softmax cross-entropy of the
class scores ``G F x + offsets`` over K - 1 free rows ``F`` (``G`` the centred
basis of :mod:`~dpglass.models.logistic.plan`; :mod:`~dpglass.models.logistic.softmax`),
of which two classes are the binary case.
The argument is in ``docs/privacy.md`` (section "DP logistic regression").
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, softmax

from dpglass._validation import Interval
from dpglass.aggregates.parts import class_counts, table_parts
from dpglass.exceptions import InvalidParameterError
from dpglass.models._base import EPSILON, CLASSES, RANDOM_STATE, ClassifierBase
from dpglass.models.logistic.plan import (  # noqa: F401  (re-exported: the family's plan and constants)
    AUTO_ALPHA, CLASS_COUNT_SHARE, DEFAULT_ALPHA, DEFAULT_TOL, MECHANISM, OFFSET_LIMIT, class_count_step, class_offset,
    class_rows, class_score_offsets, coefficient_calibration, coefficient_step, default_data_norm, release_plan, resolved_alpha,
)
from dpglass.models.logistic.solver import SoftmaxRows, SolverNotCertifiedError, minimise
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.objective_perturbation import (
    snap_to_grid,
)
from dpglass.privacy.rng import check_random_state, is_replayable

__all__ = [
    "AUTO_ALPHA",
    "CLASS_COUNT_SHARE",
    "DEFAULT_ALPHA",
    "DPLogisticRegression",
    "DPLogisticRelease",
    "MECHANISM",
    "SolverNotCertifiedError",
    "class_offset",
    "coefficient_calibration",
    "dp_logistic_regression",
    "release_plan",
    "resolved_alpha",
]


@dataclass(frozen=True)
class DPLogisticRelease:
    """What :func:`dp_logistic_regression` releases (coefficients in the original feature scale).

    Every field is a multiple of ``grid_step`` or a public constant; none is a
    function of the data except through the noise.
    """

    coef: np.ndarray
    intercept: float
    ledger: PrivacyLedger
    grid_step: float


def dp_logistic_regression(
    X01, y01, *, epsilon: float, alpha: float, fit_intercept: bool, data_norm, tol: float, rng, offset: float = 0.0
) -> DPLogisticRelease:
    """Epsilon-DP logistic regression: output perturbation on a public grid (the private computation).

    1. Rows ``x_i`` (0/1 features, then 1 for the intercept) with ``||x_i|| <= c``
       (``c = data_norm``, default ``sqrt(p)``; larger rows shrunk).
    2. ``beta~`` with certified ``||grad F(beta~)|| <= c*tol`` for
       ``F(beta) = sum_i log(1 + exp(-y_i beta.x_i)) + (alpha c^2 / 2)||beta||^2``
       (the objective ``sum loss + (alpha/2)||f||^2`` on the scaled rows
       ``x_i/c``, with ``f = c beta``).  The sum over records is computed as
       the sum over the data's :class:`~dpglass.aggregates.PatternTable`
       (distinct rows and labels, weighted by their counts): the same
       function, and the same numbers whether the table was built in memory
       or on a Dask cluster.
    3. ``k = round(beta~/gamma)``; release ``gamma (k + Z)``, ``Z`` discrete
       Laplace of scale ``S_1/epsilon``
       (:func:`~dpglass.privacy.objective_perturbation.output_perturbation_calibration`).

    ``X01`` is a 0/1 array (then ``y01`` its 0/1 labels) or a
    :class:`~dpglass.aggregates.PatternTable` (``y01`` ignored).  ``y01``
    may hold one class only and ``X01`` may have no rows: the sum over an
    empty set is 0 and ``beta~ = 0``.

    ``offset`` (public: a released value or 0) is added to every margin,
    ``loss(y_i (f.x_i + offset))``: each record's loss is still convex and
    ``||x_i||``-Lipschitz in ``f``, so the sensitivity is unchanged; the
    returned intercept does not include it.

    Returns
    -------
    DPLogisticRelease
    """
    from dpglass.aggregates import PatternTable, pattern_table

    if not isinstance(X01, PatternTable):
        X01 = np.asarray(X01)
        if X01.ndim != 2:
            raise InvalidParameterError(f"X01 must be a 2-d array; got shape {X01.shape}.")
        y01 = np.asarray(y01).reshape(-1)
        if y01.shape[0] != X01.shape[0]:
            raise InvalidParameterError(f"X01 has {X01.shape[0]} rows but y01 has {y01.shape[0]} labels.")
        X01 = pattern_table(X01, y01.astype(np.uint8))
    table = X01
    if table.labels.size and int(table.labels.max()) > 1:
        raise InvalidParameterError("dp_logistic_regression takes 0/1 labels (two classes); for K classes fit "
                                    "DPLogisticRegression with classes=[...].")
    step, c, cal = coefficient_step(epsilon=epsilon, alpha=alpha, fit_intercept=fit_intercept, data_norm=data_norm,
                                    tol=tol, n_features=table.n_features)
    ledger = PrivacyLedger(epsilon=float(epsilon), delta=0.0).follow([step])
    theta = ledger.release(step, grid_minimiser(table, fit_intercept, c, cal, alpha, tol, offset), rng)
    d = table.n_features
    coef = theta[:d].copy()
    intercept = float(theta[d]) if fit_intercept else 0.0
    return DPLogisticRelease(coef, intercept, ledger, cal.grid_step)


def grid_minimiser(table, fit_intercept: bool, c: float, cal, alpha, tol, offset=0.0, n_classes: int = 2) -> np.ndarray:
    """The grid indices ``round(beta~ / gamma)`` of the certified minimiser (the exact values the coefficient
    release perturbs): ``||grad F(beta~)|| <= c tol`` with regulariser weight ``alpha c^2``.

    One solver for every K (:class:`~dpglass.models.logistic.solver.SoftmaxRows`): the softmax loss over the
    K - 1 free rows, indices flattened row by row; ``offset`` the K class offsets, or for two classes one number,
    the binary margin's offset (the softmax's K = 2 case with offsets (0, offset))."""
    mu, tol_beta = float(alpha) * c * c, c * float(tol)  # what the calibration assumed of the solver
    # the per-record map, a block of distinct rows at a time
    rows = SoftmaxRows.from_table(table, int(n_classes), bool(fit_intercept), c)
    offset = float(offset) if int(n_classes) == 2 else np.asarray(offset, dtype=np.float64)
    return snap_to_grid(minimise(rows, mu, tol_beta, offset=offset), cal.grid_step)


class LogisticScores:
    """Predictions of a fitted logistic model, for ClassifierBase subclasses: two classes with ``coef_`` of
    shape (d,) and a number ``intercept_`` (the log-odds of ``classes_[1]``), or K classes with ``coef_`` of
    shape (K, d) and ``intercept_`` of shape (K,) (a score per class, in ``classes_`` order: softmax)."""

    def decision_function(self, X):
        """The log-odds ``X @ coef_ + intercept_`` (two classes), or the K class scores ``X @ coef_.T + intercept_``."""
        X01 = self._check_predict_data(X)
        if np.ndim(self.coef_) == 2:
            return X01 @ self.coef_.T + self.intercept_
        return X01 @ self.coef_ + self.intercept_

    def predict_proba(self, X):
        """Logistic probabilities of the two classes, or the softmax of the K class scores (``classes_`` order)."""
        scores = self.decision_function(X)  # checks the model is fitted
        if np.ndim(self.coef_) == 2:
            return softmax(scores, axis=1)
        p1 = expit(scores)
        return np.column_stack([1.0 - p1, p1])

    def _feature_order(self, top: int | None = None) -> np.ndarray:
        """Features by their largest coefficient magnitude (over the classes), largest first."""
        size = np.abs(self.coef_) if np.ndim(self.coef_) == 1 else np.abs(self.coef_).max(axis=0)
        return np.argsort(-size, kind="stable")[: top if top is not None else None]

    def _coefficient_table(self, names, order) -> list[str]:
        """The printout's coefficient lines (features in ``order``), the intercept and how to read them."""
        if np.ndim(self.coef_) == 2:
            return self._class_coefficient_table(names, order)
        width = max(len(f"{c:+.3f}") for c in np.append(self.coef_, self.intercept_))
        lines = ["coef  feature"] + [f"{self.coef_[j]:>+{width}.3f}  {names[j]}" for j in order]
        lines.append(f"{self.intercept_:>+{width}.3f}  (intercept)")
        lines.append(f"predict {self.classes_[1]!s} if the sum of the coefficients of the features that are 1, "
                     f"plus the intercept, is > 0, else {self.classes_[0]!s}")
        return lines

    def _class_coefficient_table(self, names, order) -> list[str]:
        """K classes: one column of coefficients per class (headed by its label), the intercepts, how to read."""
        labels = [str(c) for c in self.classes_]
        cells = [f"{v:+.3f}" for v in np.append(self.coef_.ravel(), self.intercept_)]
        widths = [max(len(label), max(len(c) for c in cells)) for label in labels]
        row = lambda values, name: "  ".join(  # noqa: E731
            f"{v:>+{w}.3f}" for v, w in zip(values, widths)) + f"  {name}"
        lines = ["coefficients per class (a column per class)",
                 "  ".join(f"{label:>{w}}" for label, w in zip(labels, widths)) + "  feature"]
        lines += [row(self.coef_[:, j], names[j]) for j in order]
        lines.append(row(self.intercept_, "(intercept)"))
        lines.append("predict the class with the largest score: the sum of its coefficients of the features that "
                     "are 1, plus its intercept")
        return lines


class DPLogisticRegression(LogisticScores, ClassifierBase):
    """Epsilon-DP logistic regression: output perturbation with exact discrete Laplace noise.

    Minimises ``sum_i log(1 + exp(-y_i f.x_i)) + (alpha/2)||f||^2`` over rows
    scaled to norm at most 1 by the public ``data_norm`` (no ``n`` in the
    objective), certifies the solver's accuracy, rounds the coefficients to a
    public power-of-two grid and adds discrete Laplace noise in grid units.
    Pure epsilon-DP for add/remove neighbours at every ``n`` (including 0);
    the released coefficients are exact multiples of ``grid_step_``.

    With K >= 3 classes it is multinomial (softmax) logistic regression: the
    class scores are ``G F x + b``, ``F`` the K - 1 released free rows
    (``coef_grid_``, ``intercept_grid_``), ``G`` a public centred basis (a
    feature's class coefficients ``coef_ = G F`` sum to 0) and ``b`` the
    log-odds of the K noisy class counts against the largest; a record moves
    the minimiser by the same bound as for two classes (docs/privacy.md, "K
    classes").  Two classes are exactly the binary model.

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget (> 0); pure epsilon-DP.
    alpha : float or "auto", default="auto"
        L2 weight on the *unnormalised* loss sum (> 0), on the scaled rows.
        Public.  The coefficient noise has Laplace scale about ``1/(alpha eps)``
        (original feature scale, default ``data_norm``); larger ``alpha`` means
        less noise and more shrinkage towards the class balance.  ``"auto"``:
        ``30 / epsilon`` (:data:`AUTO_ALPHA`, chosen on simulated data).
    fit_intercept : bool, default=True
        Release the class counts with noise (10% of epsilon,
        :data:`CLASS_COUNT_SHARE`) and add their log-odds to every margin, and
        append a constant feature 1 (regularised like the others): a model
        with little signal shrinks towards the majority class, not towards a
        coin flip.
    data_norm : float or None, default=None
        Public bound on the Euclidean norm of a row (with the intercept
        feature).  ``None``: ``sqrt(n_features + fit_intercept)``, the largest
        norm a 0/1 row can have.  Rows above it are shrunk to it.
    tol : float, default=1e-4
        Certified bound on the solver's gradient norm (scaled coordinates); the
        sensitivity is ``(1 + 2 tol)/alpha``.
    classes : list of labels or None, default=None
        The public label set: ``[negative, positive]``, or K labels (up to
        255) in the order of ``predict_proba``'s columns.  None reads it from
        ``y`` (sorted); then the label set, and whether fit succeeds (a ``y``
        of one class is refused), depend on the data: declare the labels for
        a release.
    random_state : None, int, SeedSequence or Generator, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,), or (K, n_features_in_) for K >= 3 classes
        Two classes: the log-odds coefficients of ``classes_[1]``.  K classes:
        a row of class coefficients per class, in ``classes_`` order (``G``
        times ``coef_grid_``).
    intercept_ : float, or ndarray of shape (K,)
        The offset plus the released intercept coordinate (K classes: the
        class rows of ``intercept_grid_`` plus the offsets).
    coef_grid_, intercept_grid_ : the released free rows and intercept coordinates (``intercept_grid_`` only, a
        number, for two classes; shapes (K - 1, n_features_in_) and (K - 1,) for K classes)
    class_counts_ : list of K ints or None
        The released noisy class counts (``fit_intercept=True``).
    grid_step_ : float
        The public grid (a power of two) the coefficients lie on.
    privacy_ledger_ : PrivacyLedger
        The class counts (``fit_intercept=True``), then
        ``output-perturbation (discrete laplace)``.
    n_features_used_ : int
        Features with a non-zero coefficient.
    classes_, n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((5000, 4)) < 0.5).astype(int)
    >>> y = X[:, 0] | X[:, 1]
    >>> clf = DPLogisticRegression(epsilon=1.0, random_state=0).fit(X, y)
    >>> clf.privacy_ledger_.total()
    (1.0, 0.0)
    >>> float(clf.score(X, y)) > 0.7
    True
    >>> bool(np.all(clf.coef_ / clf.grid_step_ == np.round(clf.coef_ / clf.grid_step_)))
    True
    """

    _private = True
    _distributed_fit = True  # learns from the pattern table: fits on dask collections through dpglass.aggregates
    _worker_stats = True  # on Dask the table stays on the workers: the solver's exact sums are taken there
    _max_classes = 255  # multinomial (softmax) for K >= 3 classes; the binary model is its K = 2 case
    _parameter_constraints = {
        "epsilon": EPSILON,
        "alpha": [Interval(numbers.Real, 0, None, closed="neither"), ["auto"]],
        "fit_intercept": [[True, False]],
        "data_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "classes": CLASSES,
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self, *, epsilon=1.0, alpha="auto", fit_intercept=True, data_norm=None, tol=DEFAULT_TOL,
        classes=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.data_norm = data_norm
        self.tol = tol
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the coefficients; the release is recorded in ``privacy_ledger_``.

        Returns
        -------
        self
        """
        self._validate_params()
        rng = check_random_state(self.random_state)
        table = self._fit_table(X, y)  # in memory or through Dask: the same table
        k, d = len(self.classes_), table.n_features  # the declared (public) label set and schema
        plan = release_plan(self.get_params(deep=False), d, k)
        ledger = PrivacyLedger(epsilon=float(self.epsilon)).follow(plan)
        offset, self.class_counts_ = (0.0 if k == 2 else np.zeros(k)), None
        if self.fit_intercept:  # one table of K counts: a record is in one cell
            counts = [int(v) for v in table_parts(table).sum(class_counts, k)]
            self.class_counts_ = ledger.release(plan[0], counts, rng)
            offset = class_offset(self.class_counts_) if k == 2 else np.array(class_score_offsets(self.class_counts_))
        step = plan[-1]
        _, c, cal = coefficient_step(epsilon=step.entry.epsilon, alpha=self._alpha(), fit_intercept=self.fit_intercept,
                                     data_norm=self.data_norm, tol=self.tol, n_features=d, n_classes=k)
        theta = ledger.release(step, grid_minimiser(table, self.fit_intercept, c, cal, self._alpha(), self.tol,
                                                    offset, k), rng)
        self._warn_about_guarantee(float(self.epsilon))
        if k == 2:
            self.coef_ = theta[:d].copy()
            self.intercept_grid_ = float(theta[d]) if self.fit_intercept else 0.0
            self.intercept_ = self.intercept_grid_ + offset
        else:  # the K - 1 released free rows, and the K class rows they give (post-processing)
            free = theta.reshape(k - 1, -1)
            self.coef_grid_ = free[:, :d].copy()
            self.intercept_grid_ = free[:, d].copy() if self.fit_intercept else np.zeros(k - 1)
            self.coef_ = class_rows(self.coef_grid_)
            self.intercept_ = class_rows(self.intercept_grid_) + offset
        self.grid_step_ = step.domain.step
        self.privacy_ledger_ = ledger
        self.privacy_ledger_.replayable = is_replayable(rng)
        self.n_features_used_ = self._features_used()
        return self

    def _features_used(self) -> int:
        used = self.coef_ if np.ndim(self.coef_) == 1 else np.any(self.coef_ != 0, axis=0)
        return int(np.count_nonzero(used))

    def _alpha(self) -> float:
        return resolved_alpha(self.alpha, self.epsilon)

    def to_text(self, top: int | None = None) -> str:
        """Coefficient table (largest magnitude first), with feature names."""
        names = self.feature_names()
        order = self._feature_order(top)
        eps, _ = self.privacy_ledger_.total()
        lines = [f"DPLogisticRegression (output perturbation, discrete Laplace): {eps:.4g}-DP"]
        if np.ndim(self.coef_) == 2:
            lines[0] += f", multinomial over {len(self.classes_)} classes"
            note = ("(a feature's coefficients sum to 0 over the classes; the intercepts hold the log-odds of the noisy "
                    "class counts against the most frequent class)")
            return "\n".join(lines + self._coefficient_table(names, order) + [note])
        return "\n".join(lines + self._coefficient_table(names, order))

    # ------------------------------------------------------------ serialising
    def _state_to_dict(self) -> dict:
        # floats that are multiples of a power of two: JSON (repr) round trips them exactly
        # the intercept is the released grid coordinate plus the offset of the released class counts
        # K classes: the released free rows (coef_grid, intercept_grid) and the class rows they give (coef,
        # intercept: a row per class in classes order)
        if np.ndim(self.coef_) == 2:
            return {
                "coef": [[float(v) for v in row] for row in self.coef_],
                "intercept": [float(v) for v in self.intercept_],
                "coef_grid": [[float(v) for v in row] for row in self.coef_grid_],
                "intercept_grid": [float(v) for v in self.intercept_grid_],
                "class_counts": self.class_counts_,
                "grid_step": float(self.grid_step_),
            }
        return {
            "coef": [float(c) for c in self.coef_],
            "intercept": float(self.intercept_),
            "intercept_grid": float(self.intercept_grid_),
            "class_counts": self.class_counts_,
            "grid_step": float(self.grid_step_),
        }

    def _state_from_dict(self, data: dict) -> None:
        self.coef_ = np.array(data["coef"], dtype=np.float64)
        if self.coef_.ndim == 2:
            self.intercept_ = np.array(data["intercept"], dtype=np.float64)
            self.coef_grid_ = np.array(data["coef_grid"], dtype=np.float64)
            self.intercept_grid_ = np.array(data["intercept_grid"], dtype=np.float64)
        else:
            self.intercept_ = float(data["intercept"])
            # files written before the class-count offset have neither field
            self.intercept_grid_ = float(data.get("intercept_grid", self.intercept_))
        self.class_counts_ = data.get("class_counts")
        # files written before the grid release carry no grid step
        self.grid_step_ = float(data["grid_step"]) if "grid_step" in data else None
        self.n_features_used_ = self._features_used()
