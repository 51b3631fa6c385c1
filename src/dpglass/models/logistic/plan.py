"""DP logistic regression's release plan: its public constants, the coefficients' calibration and the two
releases (the class counts, then the coefficients on their grid), from public parameters only.

K classes (issue 31): the model is multinomial (softmax) logistic regression with the first class as the
reference (its coefficients are 0; ``K - 1`` free rows, each of ``p`` coefficients): for K = 2 that is exactly
the binary model.  A record's loss is ``LIPSCHITZ[K] ||x||``-Lipschitz in the free coefficients (1 for two
classes, sqrt(2) for more: :func:`record_lipschitz`), so the calibration is the binary one with that factor on
the row bound and ``(K - 1) p`` coefficients; the class counts are one table of K counts.

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


def record_lipschitz(n_classes: int) -> float:
    """``L_K``: a record's loss moves the free coefficients' gradient by at most ``L_K ||x||`` (Frobenius norm).

    The gradient of ``-log softmax(z)_y`` in the free rows ``1..K-1`` is ``(p - e_y)[1:] x^T``, and
    ``sup ||(p - e_y)[1:]||_2`` over the open simplex is 1 for K = 2 and sqrt(2) for K >= 3 (docs/privacy.md,
    "K classes").  Returned as a double at least that value (``math.sqrt`` is correctly rounded; one step up).
    """
    k = int(n_classes)
    if k < 2:
        raise InvalidParameterError(f"A classifier needs at least two classes; got {k}.")
    return 1.0 if k == 2 else math.nextafter(math.sqrt(2.0), math.inf)


def coefficient_calibration(*, epsilon, alpha, data_norm, tol, n_coef,
                            n_classes: int = 2) -> tuple[float, OutputPerturbationCalibration]:
    """``(c, calibration)`` of the coefficient release, from public parameters only (fit and ``load_model``).

    ``c`` is the row-norm bound (``data_norm``, default ``sqrt(n_coef)``, ``n_coef`` = ``p``, the length of a
    row with its intercept 1); the solver minimises with regulariser weight ``alpha c^2`` to a certified
    gradient norm ``c tol``.  With K classes the release has ``(K - 1) p`` coefficients and a record moves the
    gradient by at most ``L_K c`` (:func:`record_lipschitz`): ``Delta_2 = (L_K c + 2 c tol) / (alpha c^2)``.
    """
    c = default_data_norm(n_coef) if data_norm is None else float(data_norm)
    k = int(n_classes)
    # L_K c, rounded up for K >= 3 (the product's rounding, relative 2**-53, is below one step up); L_2 c = c
    bound = c if k == 2 else math.nextafter(record_lipschitz(k) * c, math.inf)
    return c, output_perturbation_calibration(epsilon=float(epsilon), regularization=float(alpha) * c * c,
                                              row_norm=bound, n_coef=(k - 1) * int(n_coef), tol=c * float(tol))


def coefficient_step(*, epsilon, alpha, fit_intercept, data_norm, tol, n_features, n_classes: int = 2):
    """``(step, c, calibration)``: the coefficient release of the plan, from public parameters only.

    Discrete Laplace noise in grid units on the certified minimiser's grid
    indices (:func:`~dpglass.privacy.objective_perturbation.release_on_grid`);
    the released values are multiples of the grid step.  With K >= 3 classes
    the indices are the ``K - 1`` free rows (classes 1..K-1 against class 0),
    flattened row by row, each row its ``d`` coefficients then its intercept.
    """
    p = int(n_features) + int(bool(fit_intercept))
    if p == 0:
        raise InvalidParameterError("There is nothing to fit: no features and no intercept.")
    k = int(n_classes)
    c, cal = coefficient_calibration(epsilon=epsilon, alpha=alpha, data_norm=data_norm, tol=tol, n_coef=p,
                                     n_classes=k)
    if k == 2:
        what = ("certified minimiser of sum loss(y (f.x + offset)) + (alpha/2)||f||^2 (no n; offset public); l1 "
                "sensitivity S1 = floor(sqrt(p) Delta2/gamma + p) with Delta2 = (1 + 2 tol)/alpha")
        sizes = f"p={p}"
    else:
        what = ("certified minimiser of sum -log softmax(F x + offset)_y + (alpha/2)||F||^2 over the K-1 free rows "
                "F (class 0 the reference, its row 0; no n; offset public); l1 sensitivity S1 = floor(sqrt(P) "
                "Delta2/gamma + P), P = (K-1) p, with Delta2 = (sqrt(2) + 2 tol)/alpha")
        sizes = f"K={k}, p={p}, P={cal.n_coef}"
    entry = LedgerEntry(
        release="logistic regression coefficients and intercept",
        mechanism=MECHANISM,
        epsilon=float(epsilon),
        sensitivity=float(cal.l1_sensitivity),
        scale=cal.scale,
        guarantee="proven",
        note=(
            f"discrete Laplace mechanism (Ghosh, Roughgarden & Sundararajan 2009) on the grid indices of the {what} "
            "by strong convexity "
            f"(docs/privacy.md, DP logistic regression); alpha={float(alpha):g}, data_norm={c:.17g}, "
            f"tol={float(tol):g}, {sizes}, grid step gamma=2**{int(math.log2(cal.grid_step))}"
        ),
    )
    step = PlannedRelease(entry, lambda idx, rng: release_on_grid(idx, cal, rng), GridMultiples(cal.grid_step),
                          ("coef", "intercept_grid"))
    return step, c, cal


def class_count_step(epsilon: float, n_classes: int = 2) -> PlannedRelease:
    """The class counts of the plan (``fit_intercept=True``): one table of K counts, discrete Laplace,
    sensitivity 1 (a record is in one cell), integers."""
    mech = DiscreteLaplaceMechanism(epsilon)
    if int(n_classes) == 2:
        note = ("one record changes one of the two counts by 1 (add/remove): geometric mechanism; the offset "
                "log((c1 + 1/2)/(c0 + 1/2)), clipped, is post-processing; basic composition with the coefficients")
    else:
        note = (f"one record changes one of the {int(n_classes)} counts by 1 (add/remove): geometric mechanism; the "
                "offsets log((ck + 1/2)/(c0 + 1/2)), k >= 1, clipped, are post-processing; basic composition with "
                "the coefficients")
    entry = LedgerEntry(release="class counts (the intercept's offset)", **count_fields(mech), note=note)
    return PlannedRelease(entry, lambda v, rng: [int(x) for x in mech.randomise(np.asarray(v), rng)], Integers(),
                          ("class_counts",))


def release_plan(params: dict, n_features: int, n_classes: int = 2) -> list[PlannedRelease]:
    """DPLogisticRegression's releases, in order, from its public parameters and schema (``n_features``, the
    number of declared classes): the fit spends through them and ``load_model`` replays them (docs/privacy.md,
    DP logistic regression)."""
    eps, fit_intercept, steps = float(params["epsilon"]), bool(params["fit_intercept"]), []
    if fit_intercept:
        steps.append(class_count_step(eps * CLASS_COUNT_SHARE, n_classes))
        eps -= steps[0].entry.epsilon
    step, _, _ = coefficient_step(epsilon=eps, alpha=resolved_alpha(params["alpha"], params["epsilon"]),
                                  fit_intercept=fit_intercept, data_norm=params["data_norm"], tol=float(params["tol"]),
                                  n_features=n_features, n_classes=n_classes)
    return steps + [step]


def class_offset(class_counts) -> float:
    """``log((c1 + 1/2) / (c0 + 1/2))`` of released class counts (negatives read as 0), clipped to +-OFFSET_LIMIT.

    Examples
    --------
    >>> class_offset([0, 0]), round(class_offset([299, 99]), 4), class_offset([-5, 10**9])
    (0.0, -1.102, 8.0)
    """
    c0, c1 = (max(int(c), 0) + 0.5 for c in class_counts)
    return _clipped_log_ratio(c1, c0)


def class_offsets(class_counts) -> list[float]:
    """The K - 1 offsets ``log((ck + 1/2) / (c0 + 1/2))``, k = 1..K-1, of K released class counts (negatives
    read as 0), each clipped to +-OFFSET_LIMIT: the log-odds of each class against the reference class 0.
    For two counts, ``[class_offset(counts)]``.

    Examples
    --------
    >>> [round(b, 4) for b in class_offsets([99, 299, -3])]
    [1.102, -5.2933]
    """
    cs = [max(int(c), 0) + 0.5 for c in class_counts]
    return [_clipped_log_ratio(ck, cs[0]) for ck in cs[1:]]


def _clipped_log_ratio(ck: float, c0: float) -> float:
    return float(min(max(math.log(ck / c0), -OFFSET_LIMIT), OFFSET_LIMIT))
