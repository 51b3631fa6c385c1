"""Output perturbation for L2-regularised ERM, released on a public grid.

(The module keeps its historical name.  It used to hold Chaudhuri, Monteleoni
and Sarwate's 2011 *objective* perturbation, whose calibration uses the number
of records ``n``; under add/remove neighbours ``n`` is private and an audit
measured epsilon >= 4.4 at a claimed 1.  That code was removed: see
``docs/privacy.md``, section "DP logistic regression".)

The mechanism, for a minimiser ``beta`` of
``F_D(beta) = sum_{i in D} loss(y_i beta.x_i) + (mu/2)||beta||^2`` with
``|loss'| <= 1`` and every ``||x_i|| <= R`` (no ``n`` anywhere):

1. **Sensitivity.**  For add/remove neighbours ``||beta_D - beta_D'||_2 <= R/mu``
   (``mu``-strong convexity); a solver point ``beta~`` whose gradient norm is
   certified ``<= tol`` is within ``tol/mu`` of the minimiser, so
   ``Delta_2 = (R + 2 tol)/mu`` (:func:`output_perturbation_calibration`).
2. **Grid.**  ``k = round(beta~ / gamma)`` coordinate-wise, ``gamma`` a power
   of two; ``||k_D - k_D'||_1 <= sqrt(p) Delta_2 / gamma + p``; ``S_1`` is the
   floor of that (an integer bound on an integer quantity).
3. **Noise.**  ``k + Z`` with ``Z`` i.i.d. discrete Laplace of scale
   ``>= S_1/epsilon`` (:func:`dpglass.privacy.samplers.discrete_laplace`):
   pure epsilon-DP.  The release is ``gamma (k + Z)``, exact in float64.

Everything here is a function of public parameters only (epsilon, mu, R, tol,
p); nothing depends on the data.

Examples
--------
>>> cal = output_perturbation_calibration(epsilon=1.0, regularization=4.0, row_norm=2.0, n_coef=4, tol=1e-4)
>>> cal.grid_step == 2.0**-9, cal.l1_sensitivity, cal.scale
(True, 516, 516.0)
>>> k = snap_to_grid(np.array([0.1, -0.25, 0.0, 3.0]), cal.grid_step)
>>> k.tolist()
[51, -128, 0, 1536]
>>> out = release_on_grid(k, cal, np.random.default_rng(0))
>>> bool(np.all(out / cal.grid_step == np.round(out / cal.grid_step)))
True
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpglass._validation import Interval, validate_params
from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.samplers import discrete_laplace

__all__ = [
    "GRID_TARGET",
    "K_LIMIT",
    "OutputPerturbationCalibration",
    "output_perturbation_calibration",
    "release_on_grid",
    "snap_to_grid",
]

#: The rounding term ``p`` of ``S_1`` is at most this fraction of ``sqrt(p) Delta_2 / gamma``.
GRID_TARGET = 0.01
#: Grid indices are clipped to ``[-K_LIMIT, K_LIMIT]`` (a coordinate-wise
#: projection: it never increases ``|k_D - k_D'|``) so that ``k + Z`` is exact.
K_LIMIT = 2**52
#: The discrete Laplace sampler accepts scales below this.
_SCALE_LIMIT = 2.0**22
# upward safety factor for the float evaluation of the bounds (each is a few
# roundings of relative size 2**-53; 1e-12 covers them many times over)
_UP = 1.0 + 1e-12

_POS = [Interval(numbers.Real, 0, None, closed="neither")]


@dataclass(frozen=True)
class OutputPerturbationCalibration:
    """The public constants of one release (all data-independent).

    Attributes
    ----------
    epsilon : float
    l2_sensitivity : float
        ``Delta_2 = (R + 2 tol)/mu``, rounded up.
    grid_step : float
        ``gamma``, a power of two.
    l1_sensitivity : int
        ``S_1 = floor(sqrt(p) Delta_2 / gamma + p)`` (computed rounded up first).
    scale : float
        Discrete Laplace scale, ``>= S_1 / epsilon`` exactly.
    n_coef : int
        ``p``.
    """

    epsilon: float
    l2_sensitivity: float
    grid_step: float
    l1_sensitivity: int
    scale: float
    n_coef: int


def _l1_bound(n_coef: int, l2: float, gamma: float) -> int:
    return int(math.floor((math.sqrt(n_coef) * l2 / gamma + n_coef) * _UP))


def _scale_up(numerator: int, epsilon: float) -> float:
    """The smallest double ``>= numerator / epsilon`` (exact rational comparison)."""
    exact = Fraction(numerator) / Fraction(epsilon)
    s = float(exact)
    if Fraction(s) < exact:
        s = math.nextafter(s, math.inf)
    return s


def output_perturbation_calibration(
    *, epsilon: float, regularization: float, row_norm: float, n_coef: int, tol: float
) -> OutputPerturbationCalibration:
    """Sensitivities, grid and noise scale of the release (public parameters only).

    Parameters
    ----------
    epsilon : float
        Privacy budget (> 0).
    regularization : float
        ``mu``: the objective is ``sum_i loss + (mu/2)||beta||^2`` (> 0).
    row_norm : float
        ``R``: a bound on every row's Euclidean norm (> 0).
    n_coef : int
        ``p``, the number of coefficients (>= 1).
    tol : float
        Certified bound on the gradient norm of the objective at the solver's
        point (>= 0).

    Returns
    -------
    OutputPerturbationCalibration

    Raises
    ------
    InvalidParameterError
        If the noise scale would exceed what the exact sampler supports even
        on the coarsest grid (``p / epsilon >= 2**22``).
    """
    validate_params(
        {"epsilon": epsilon, "regularization": regularization, "row_norm": row_norm, "n_coef": n_coef, "tol": tol},
        {
            "epsilon": _POS,
            "regularization": _POS,
            "row_norm": _POS,
            "n_coef": [Interval(numbers.Integral, 1, None, closed="left")],
            "tol": [Interval(numbers.Real, 0, None, closed="left")],
        },
        "output_perturbation_calibration",
    )
    epsilon, mu, R, p, tol = float(epsilon), float(regularization), float(row_norm), int(n_coef), float(tol)
    l2 = (R + 2.0 * tol) / mu * _UP
    if not math.isfinite(l2):
        raise InvalidParameterError(f"The sensitivity (R + 2 tol)/mu = {l2!r} is not finite; use a larger mu.")
    # the largest power of two gamma with p * gamma <= GRID_TARGET * sqrt(p) * Delta_2
    _, e = math.frexp(GRID_TARGET * l2 / math.sqrt(p))
    gamma = math.ldexp(1.0, e - 1)
    s1 = _l1_bound(p, l2, gamma)
    scale = _scale_up(s1, epsilon)
    while scale >= _SCALE_LIMIT:  # tiny epsilon: a coarser (still public) grid
        if s1 <= p + 1:
            raise InvalidParameterError(
                f"epsilon={epsilon:g} is too small for {p} coefficients: the noise scale would exceed "
                f"2**22 grid steps even on the coarsest grid. Use a larger epsilon."
            )
        gamma *= 2.0
        s1 = _l1_bound(p, l2, gamma)
        scale = _scale_up(s1, epsilon)
    return OutputPerturbationCalibration(epsilon, l2, gamma, s1, scale, p)


def snap_to_grid(beta, grid_step: float) -> np.ndarray:
    """``clip(round(beta / gamma), -K_LIMIT, K_LIMIT)`` as int64, exactly.

    ``gamma`` is a power of two, so ``beta / gamma`` is exact in float64 and
    ``rint`` is exact; the clipping is a coordinate-wise projection (it never
    increases ``|k_D - k_D'|``).
    """
    beta = np.asarray(beta, dtype=np.float64)
    if not np.isfinite(beta).all():
        raise InvalidParameterError("snap_to_grid needs finite coefficients.")
    mant, _ = math.frexp(float(grid_step))
    if not (grid_step > 0 and mant == 0.5):
        raise InvalidParameterError(f"The grid step must be a power of two; got {grid_step!r}.")
    k = np.clip(np.rint(beta / grid_step), -float(K_LIMIT), float(K_LIMIT))
    return k.astype(np.int64)


def release_on_grid(k, calibration: OutputPerturbationCalibration, rng: np.random.Generator) -> np.ndarray:
    """``gamma * (k + Z)``, ``Z`` i.i.d. discrete Laplace of scale ``calibration.scale``.

    The sum ``k + Z`` is computed in Python integers (exact); the float
    ``gamma * (k + Z)`` is a deterministic function of it (exact whenever
    ``|k + Z| < 2**53``), so its bits carry nothing beyond the noisy integer.
    """
    k = np.asarray(k, dtype=np.int64)
    if k.shape != (calibration.n_coef,):
        raise InvalidParameterError(f"Expected {calibration.n_coef} grid indices; got shape {k.shape}.")
    z = discrete_laplace(calibration.scale, calibration.n_coef, rng)
    noisy = [int(a) + int(b) for a, b in zip(k.tolist(), z.tolist())]
    return np.array([float(q) * calibration.grid_step for q in noisy], dtype=np.float64)
