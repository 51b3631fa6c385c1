"""DP logistic regression's release plan: its public constants, the coefficients' calibration and the two
releases (the class counts, then the coefficients on their grid), from public parameters only.

Low in the family: the estimator (:mod:`dpglass.models.logistic.estimator`) spends through it and its file check
(:mod:`dpglass.models.logistic.verify`) replays it, neither importing the other.
"""

from __future__ import annotations

import math

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism, count_fields
from dpglass.privacy.objective_perturbation import (
    OutputPerturbationCalibration, output_perturbation_calibration, release_on_grid,
)
from dpglass.privacy.plan import GridMultiples, Integers, PlannedRelease

#: ``alpha="auto"`` (the default) is ``AUTO_ALPHA / epsilon``: chosen on simulated data only
#: (``benchmarks/logistic_alpha.py``; docs/privacy.md, "Choice of the default").
AUTO_ALPHA = 30.0
#: The former fixed default, kept for the tests' pure-function checks.
DEFAULT_ALPHA = 10.0
#: Share of epsilon spent on the noisy class counts whose log-odds offset every margin (fit_intercept=True).
CLASS_COUNT_SHARE = 0.1
#: The offset's clip, in log-odds (a public constant).
OFFSET_LIMIT = 8.0
#: Default certified gradient-norm tolerance (in the scaled-row coordinates).
DEFAULT_TOL = 1e-4
#: The coefficients' ledger mechanism.
MECHANISM = "output-perturbation (discrete laplace)"


def default_data_norm(n_coef: int) -> float:
    """``sqrt(n_coef)`` rounded up: the largest norm of a 0/1 row (with the intercept's 1)."""
    return math.nextafter(math.sqrt(n_coef), math.inf)


def resolved_alpha(alpha, epsilon) -> float:
    """``alpha``, with ``"auto"`` resolved to ``AUTO_ALPHA / epsilon`` (parameters only; fit and ``load_model``)."""
    return AUTO_ALPHA / float(epsilon) if alpha == "auto" else float(alpha)


def coefficient_calibration(*, epsilon, alpha, data_norm, tol, n_coef) -> tuple[float, OutputPerturbationCalibration]:
    """``(c, calibration)`` of the coefficient release, from public parameters only (fit and ``load_model``).

    ``c`` is the row-norm bound (``data_norm``, default ``sqrt(n_coef)``); the
    solver minimises with regulariser weight ``alpha c^2`` to a certified
    gradient norm ``c tol``.
    """
    c = default_data_norm(n_coef) if data_norm is None else float(data_norm)
    return c, output_perturbation_calibration(epsilon=float(epsilon), regularization=float(alpha) * c * c,
                                              row_norm=c, n_coef=n_coef, tol=c * float(tol))


def coefficient_step(*, epsilon, alpha, fit_intercept, data_norm, tol, n_features):
    """``(step, c, calibration)``: the coefficient release of the plan, from public parameters only.

    Discrete Laplace noise in grid units on the certified minimiser's grid
    indices (:func:`~dpglass.privacy.objective_perturbation.release_on_grid`);
    the released values are multiples of the grid step.
    """
    p = int(n_features) + int(bool(fit_intercept))
    if p == 0:
        raise InvalidParameterError("There is nothing to fit: no features and no intercept.")
    c, cal = coefficient_calibration(epsilon=epsilon, alpha=alpha, data_norm=data_norm, tol=tol, n_coef=p)
    entry = LedgerEntry(
        release="logistic regression coefficients and intercept",
        mechanism=MECHANISM,
        epsilon=float(epsilon),
        sensitivity=float(cal.l1_sensitivity),
        scale=cal.scale,
        guarantee="proven",
        note=(
            "discrete Laplace mechanism (Ghosh, Roughgarden & Sundararajan 2009) on the grid indices of the "
            "certified minimiser of sum loss(y (f.x + offset)) + (alpha/2)||f||^2 (no n; offset public); l1 sensitivity "
            "S1 = floor(sqrt(p) Delta2/gamma + p) with Delta2 = (1 + 2 tol)/alpha by strong convexity "
            f"(docs/privacy.md, DP logistic regression); alpha={float(alpha):g}, data_norm={c:.17g}, "
            f"tol={float(tol):g}, p={p}, grid step gamma=2**{int(math.log2(cal.grid_step))}"
        ),
    )
    step = PlannedRelease(entry, lambda k, rng: release_on_grid(k, cal, rng), GridMultiples(cal.grid_step),
                          ("coef", "intercept_grid"))
    return step, c, cal


def class_count_step(epsilon: float) -> PlannedRelease:
    """The class counts of the plan (``fit_intercept=True``): discrete Laplace, sensitivity 1 (a record is in
    one cell), integers."""
    mech = DiscreteLaplaceMechanism(epsilon)
    entry = LedgerEntry(
        release="class counts (the intercept's offset)", **count_fields(mech),
        note="one record changes one of the two counts by 1 (add/remove): geometric mechanism; the offset "
             "log((c1 + 1/2)/(c0 + 1/2)), clipped, is post-processing; basic composition with the coefficients")
    return PlannedRelease(entry, lambda v, rng: [int(x) for x in mech.randomise(np.asarray(v), rng)], Integers(),
                          ("class_counts",))


def release_plan(params: dict, n_features: int) -> list[PlannedRelease]:
    """DPLogisticRegression's releases, in order, from its public parameters: the fit spends through them and
    ``load_model`` replays them (docs/privacy.md, DP logistic regression)."""
    eps, fit_intercept, steps = float(params["epsilon"]), bool(params["fit_intercept"]), []
    if fit_intercept:
        steps.append(class_count_step(eps * CLASS_COUNT_SHARE))
        eps -= steps[0].entry.epsilon
    step, _, _ = coefficient_step(epsilon=eps, alpha=resolved_alpha(params["alpha"], params["epsilon"]),
                                  fit_intercept=fit_intercept, data_norm=params["data_norm"], tol=float(params["tol"]),
                                  n_features=n_features)
    return steps + [step]


def class_offset(class_counts) -> float:
    """``log((c1 + 1/2) / (c0 + 1/2))`` of released class counts (negatives read as 0), clipped to +-OFFSET_LIMIT.

    Examples
    --------
    >>> class_offset([0, 0]), round(class_offset([299, 99]), 4), class_offset([-5, 10**9])
    (0.0, -1.102, 8.0)
    """
    c0, c1 = (max(int(c), 0) + 0.5 for c in class_counts)
    return float(min(max(math.log(c1 / c0), -OFFSET_LIMIT), OFFSET_LIMIT))
