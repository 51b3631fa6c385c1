"""DP logistic regression's release plan: its public constants, the coefficients' calibration and the two
releases (the class counts, then the coefficients on their grid), from public parameters only.

K classes (issue 31): the model is multinomial (softmax) logistic regression whose K class scores are
``G F x + b``: ``F`` the ``K - 1`` free rows of ``p`` coefficients (the released values), ``G`` the public
K x (K - 1) centred basis of :func:`centred_basis` (orthonormal columns orthogonal to (1, ..., 1), scaled by
1/sqrt(2)) and ``b`` the offsets of the K noisy class counts.  For K = 2, ``G = (-1/2, 1/2)`` and the model is
exactly the binary one (``F`` is its coefficient vector).  A record's loss is ``||x||``-Lipschitz in ``F`` for
every K (:func:`record_lipschitz`), so the calibration is the binary one with ``(K - 1) p`` coefficients; the
class counts are one table of K counts.

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
    """``L_K``: a record moves the free rows' gradient by at most ``L_K ||x||`` (Frobenius norm).

    The gradient of ``-log softmax(G F x + b)_y`` in ``F`` is ``G^T (p - e_y) x^T``; ``p - e_y`` sums to 0,
    where ``G^T`` is ``1/sqrt(2)`` times an isometry, and ``||p - e_y||_2 < sqrt(2)`` on the open simplex, so
    ``L_K = 1`` for every K (sup, not attained; docs/privacy.md, "K classes").  For K >= 3 the float basis's
    rounding (each entry within 2 ulps: a norm ``<= (1 + 2 sqrt(K - 1) 2**-53) / sqrt(2)``) is covered by
    ``1 + 2**-40`` (K <= 255).  For K = 2 the basis is exact (+-1/2) and the model is the binary one: 1.
    """
    k = int(n_classes)
    if not 2 <= k <= 255:
        raise InvalidParameterError(f"A model learns 2 to 255 classes; got {k}.")
    return 1.0 if k == 2 else 1.0 + 2.0**-40


def centred_basis(n_classes: int) -> np.ndarray:
    """``G``, K x (K - 1): column m is ``(-1, ..., -1, m + 1, 0, ..., 0) / sqrt(2 (m + 1)(m + 2))`` (m + 1
    entries -1): the Helmert contrasts scaled by 1/sqrt(2).  Deterministic (``math.sqrt`` and one division, both
    correctly rounded).  For K = 2, ``[[-0.5], [0.5]]``.

    Examples
    --------
    >>> centred_basis(2).tolist()
    [[-0.5], [0.5]]
    >>> bool(np.allclose(centred_basis(4).T @ centred_basis(4), np.eye(3) / 2)), float(centred_basis(4).sum())
    (True, 0.0)
    """
    k = int(n_classes)
    G = np.zeros((k, k - 1))
    for m in range(k - 1):
        s = math.sqrt(2.0 * (m + 1) * (m + 2))
        G[: m + 1, m] = -1.0 / s
        G[m + 1, m] = (m + 1) / s
    return G


def class_rows(free) -> np.ndarray:
    """``G F``: the K class rows of the K - 1 free rows ``F`` (the class coefficients or intercepts, derived from
    the released values).  Computed with elementwise float operations in a fixed order, so the verifier
    recomputes the same bits on any machine (no BLAS reduction)."""
    F = np.asarray(free, dtype=np.float64)
    flat = F.ndim == 1
    F = F[:, None] if flat else F
    G = centred_basis(F.shape[0] + 1)
    W = np.zeros((G.shape[0], F.shape[1]))
    for m in range(F.shape[0]):
        W += G[:, m:m + 1] * F[m:m + 1, :]
    return W[:, 0] if flat else W


def coefficient_calibration(*, epsilon, alpha, data_norm, tol, n_coef,
                            n_classes: int = 2) -> tuple[float, OutputPerturbationCalibration]:
    """``(c, calibration)`` of the coefficient release, from public parameters only (fit and ``load_model``).

    ``c`` is the row-norm bound (``data_norm``, default ``sqrt(n_coef)``, ``n_coef`` = ``p``, the length of a
    row with its intercept 1); the solver minimises with regulariser weight ``alpha c^2`` to a certified
    gradient norm ``c tol``.  With K classes the release has ``(K - 1) p`` coefficients and a record moves the
    gradient by at most ``L_K c`` (:func:`record_lipschitz`, 1 up to the float basis's rounding):
    ``Delta_2 = (L_K c + 2 c tol) / (alpha c^2)``.
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
    the indices are the ``K - 1`` free rows ``F`` (the class scores are
    ``G F x``, :func:`centred_basis`), flattened row by row, each row its
    ``d`` coefficients then its intercept coordinate: the file's
    ``coef_grid`` and ``intercept_grid`` (its ``coef`` and ``intercept``, the
    class rows, are derived: :func:`class_rows`).
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
        sizes, fields = f"p={p}", ("coef", "intercept_grid")
    else:
        what = ("certified minimiser of sum -log softmax(G F x + offsets)_y + (alpha/2)||F||^2 over the K-1 free rows "
                "F (G the centred basis: Helmert contrasts / sqrt(2); no n; offsets public); l1 sensitivity S1 = "
                "floor(sqrt(P) Delta2/gamma + P), P = (K-1) p, with Delta2 = (L + 2 tol)/alpha, L = 1 + 2**-40 "
                "(||G'(p - e_y)|| < 1)")
        sizes, fields = f"K={k}, p={p}, P={cal.n_coef}", ("coef_grid", "intercept_grid")
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
                          fields)
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
                "offsets log((ck + 1/2)/(cmax + 1/2)), clipped at -8, are post-processing; basic composition with "
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
    return float(min(max(math.log(c1 / c0), -OFFSET_LIMIT), OFFSET_LIMIT))


def class_score_offsets(class_counts) -> list[float]:
    """K >= 3 classes: the offsets of the K class scores, ``log((ck + 1/2) / (cmax + 1/2))`` (negatives read as 0,
    ``cmax`` the largest), each clipped below at -OFFSET_LIMIT: the log-odds of each class against the most
    frequent one.  For two counts the difference ``b1 - b0`` is :func:`class_offset` (in exact arithmetic).

    Examples
    --------
    >>> [round(b, 4) for b in class_score_offsets([99, 299, -3])]
    [-1.102, 0.0, -6.3953]
    """
    cs = [max(int(c), 0) + 0.5 for c in class_counts]
    top = max(cs)
    return [float(max(math.log(ck / top), -OFFSET_LIMIT)) for ck in cs]
