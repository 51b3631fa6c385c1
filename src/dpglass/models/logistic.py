"""Differentially private logistic regression by objective perturbation.

:class:`DPLogisticRegression` is Chaudhuri, Monteleoni and Sarwate (2011),
Algorithm 2 ("ERM with objective perturbation") for the logistic loss, the
DP-LR baseline of paper 002.  Rows are scaled to norm at most 1 by a public
bound (``data_norm``); a row whose norm exceeds it is shrunk to it (a
per-record operation, no privacy cost).  The argument is in ``docs/privacy.md``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, log_expit

from dpglass._validation import Interval
from dpglass.models._base import EPSILON, RANDOM_STATE, BinaryClassifierBase
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.objective_perturbation import objective_perturbation_calibration, sample_objective_noise
from dpglass.privacy.rng import check_random_state

__all__ = ["DPLogisticRegression", "DPLogisticRelease", "dp_logistic_regression"]

#: Bound on the logistic loss's second derivative.
LOGISTIC_CURVATURE = 0.25


@dataclass(frozen=True)
class DPLogisticRelease:
    """What :func:`dp_logistic_regression` releases (coefficients in the original feature scale)."""

    coef: np.ndarray
    intercept: float
    ledger: PrivacyLedger
    gradient_norm: float
    regularization: float


def _augment(X01, fit_intercept: bool, data_norm: float) -> np.ndarray:
    X = np.asarray(X01, dtype=np.float64)
    if fit_intercept:
        X = np.column_stack([X, np.ones(X.shape[0])])
    norms = np.linalg.norm(X, axis=1)
    shrink = np.where(norms > data_norm, data_norm / np.where(norms > 0, norms, 1.0), 1.0)
    return X * (shrink / data_norm)[:, None]


def dp_logistic_regression(
    X01, y01, *, epsilon: float, alpha: float, fit_intercept: bool, data_norm, tol: float, rng, max_iter: int = 100
) -> DPLogisticRelease:
    """CMS 2011 Algorithm 2 for the logistic loss: the private computation.

    Minimises ``(1/n) sum log(1 + exp(-y_i f.x_i)) + ((alpha + Delta)/2)||f||^2
    + (1/n) b.f`` over the scaled rows ``x_i`` (norm <= 1), with ``b`` from
    :func:`~dpglass.privacy.objective_perturbation.sample_objective_noise` and
    ``Delta`` from
    :func:`~dpglass.privacy.objective_perturbation.objective_perturbation_calibration`.
    ``n = len(X01)`` is public.

    Returns
    -------
    DPLogisticRelease
    """
    X01 = np.asarray(X01)
    n, d = X01.shape
    norm = math.sqrt(d + int(fit_intercept)) if data_norm is None else float(data_norm)
    Z = _augment(X01, fit_intercept, norm)
    ys = 2.0 * np.asarray(y01, dtype=np.float64) - 1.0
    eps_noise, extra = objective_perturbation_calibration(epsilon, n, alpha, LOGISTIC_CURVATURE)
    b = sample_objective_noise(Z.shape[1], eps_noise, rng)
    reg = alpha + extra
    YZ = Z * ys[:, None]

    def objective(f):
        return -float(np.mean(log_expit(YZ @ f))) + 0.5 * reg * float(f @ f) + float(b @ f) / n

    def gradient(f):
        return -(YZ.T @ expit(-(YZ @ f))) / n + reg * f + b / n

    # damped Newton (Armijo backtracking): the objective is reg-strongly convex and smooth, so
    # this converges globally and quadratically near the minimiser
    f = np.zeros(Z.shape[1])
    eye = np.eye(Z.shape[1])
    value, grad = objective(f), gradient(f)
    for _ in range(max_iter):
        if float(np.linalg.norm(grad)) <= tol:
            break
        s = expit(YZ @ f)
        H = (Z.T * (s * (1.0 - s) / n)) @ Z + reg * eye
        step = np.linalg.solve(H, grad)
        decrement = float(grad @ step)
        t = 1.0
        while True:
            candidate = f - t * step
            new_value = objective(candidate)
            if new_value <= value - 0.25 * t * decrement or t < 1e-10:
                break
            t *= 0.5
        f, value = candidate, new_value
        grad = gradient(f)
    gnorm = float(np.linalg.norm(grad))

    ledger = PrivacyLedger(epsilon=epsilon, delta=0.0)
    ledger.spend(
        release="logistic regression coefficients",
        mechanism="objective-perturbation",
        epsilon=epsilon,
        sensitivity=1.0,
        scale=2.0 / eps_noise,
        note=(
            f"CMS 2011 Algorithm 2: b ~ exp(-eps'||b||/2) with eps'={eps_noise:.6g}, Lambda={alpha:g}, "
            f"Delta={extra:.6g}, c=1/4, rows scaled by public norm bound {norm:.6g}; guarantee for the exact "
            f"minimiser (solved to a gradient norm below the solver tolerance)"
        ),
    )
    coef = f[:d] / norm
    intercept = float(f[d] / norm) if fit_intercept else 0.0
    return DPLogisticRelease(coef, intercept, ledger, gnorm, reg)


class DPLogisticRegression(BinaryClassifierBase):
    """Epsilon-DP logistic regression by objective perturbation (CMS 2011, Algorithm 2).

    Parameters
    ----------
    epsilon : float, default=1.0
        Privacy budget (> 0); pure epsilon-DP.
    alpha : float, default=1e-3
        L2 regularisation Lambda of the averaged objective
        ``(1/n) sum loss + (Lambda/2)||f||^2`` (> 0), on the scaled rows.
    fit_intercept : bool, default=True
        Append a constant feature 1 (regularised like the others).
    data_norm : float or None, default=None
        Public bound on the Euclidean norm of a row (with the intercept
        feature).  ``None``: ``sqrt(n_features + fit_intercept)``, the largest
        norm a 0/1 row can have.  A smaller bound (for one-hot data, the
        square root of the number of original attributes, plus one) gives
        less relative noise; rows above it are shrunk to it.
    tol : float, default=1e-10
        Gradient-norm tolerance of the solver (the guarantee assumes the exact
        minimiser).
    random_state : None, int, SeedSequence or Generator, default=None

    Attributes
    ----------
    coef_ : ndarray of shape (n_features_in_,)
    intercept_ : float
    privacy_ledger_ : PrivacyLedger
    n_features_used_ : int
        Features with a non-zero coefficient (all of them, in practice).
    optimality_ : float
        Gradient norm of the perturbed objective at the solution. Curator-side
        only: an exact statistic of the private data, so it is not written by
        ``to_dict``/``save`` and must not be published.
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
    """

    _private = True
    _parameter_constraints = {
        "epsilon": EPSILON,
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "fit_intercept": [[True, False]],
        "data_norm": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "tol": [Interval(numbers.Real, 0, None, closed="neither")],
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, epsilon=1.0, alpha=1e-3, fit_intercept=True, data_norm=None, tol=1e-10, random_state=None):
        self.epsilon = epsilon
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.data_norm = data_norm
        self.tol = tol
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the coefficients; the release is recorded in ``privacy_ledger_``.

        Returns
        -------
        self
        """
        self._validate_params()
        rng = check_random_state(self.random_state)
        X01, y01 = self._check_fit_data(X, y)
        release = dp_logistic_regression(
            X01,
            y01,
            epsilon=float(self.epsilon),
            alpha=float(self.alpha),
            fit_intercept=bool(self.fit_intercept),
            data_norm=self.data_norm,
            tol=float(self.tol),
            rng=rng,
        )
        self.coef_ = release.coef
        self.intercept_ = release.intercept
        self.privacy_ledger_ = release.ledger
        self.optimality_ = release.gradient_norm
        self.n_features_used_ = int(np.count_nonzero(self.coef_))
        return self

    def decision_function(self, X):
        """The log-odds ``X @ coef_ + intercept_``."""
        X01 = self._check_predict_data(X)
        return X01 @ self.coef_ + self.intercept_

    def predict_proba(self, X):
        """Logistic probabilities of the two classes."""
        p1 = expit(self.decision_function(X))
        return np.column_stack([1.0 - p1, p1])

    def to_text(self, top: int | None = None) -> str:
        """Coefficient table (largest magnitude first), with feature names."""
        names = self.feature_names()
        order = np.argsort(-np.abs(self.coef_), kind="stable")
        if top is not None:
            order = order[:top]
        eps, _ = self.privacy_ledger_.total()
        lines = [f"DPLogisticRegression (objective perturbation): {eps:.4g}-DP", "coef  feature"]
        width = max(len(f"{c:+.3f}") for c in np.append(self.coef_, self.intercept_))
        lines += [f"{self.coef_[j]:>+{width}.3f}  {names[j]}" for j in order]
        lines.append(f"{self.intercept_:>+{width}.3f}  (intercept)")
        lines.append(f"predict {self.classes_[1]!s} if the sum of the coefficients of the features that are 1, "
                     f"plus the intercept, is > 0, else {self.classes_[0]!s}")
        return "\n".join(lines)

    # ------------------------------------------------------------ serialising
    def _state_to_dict(self) -> dict:
        return {
            "coef": [float(c) for c in self.coef_],
            "intercept": float(self.intercept_),
        }

    def _state_from_dict(self, data: dict) -> None:
        self.coef_ = np.array(data["coef"], dtype=np.float64)
        self.intercept_ = float(data["intercept"])
        self.n_features_used_ = int(np.count_nonzero(self.coef_))
