"""Objective perturbation (Chaudhuri, Monteleoni and Sarwate 2011, Algorithm 2).

Two pure functions: :func:`objective_perturbation_calibration` (the privacy
parameters of the perturbed objective) and :func:`sample_objective_noise` (the
noise vector ``b`` with density proportional to ``exp(-beta ||b||)``).  The
solver lives with the model (:mod:`dpglass.models.logistic`); the argument is in
``docs/privacy.md`` (section "Smooth boosting", DP logistic regression).

The private estimator is ``argmin_f (1/n) sum_i loss(y_i f.x_i) + (Lambda/2)||f||^2
+ (1/n) b.f + (Delta/2)||f||^2`` with every ``||x_i|| <= 1``, a loss with
``|loss'| <= 1`` and ``0 <= loss'' <= c``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpglass._validation import Interval, validate_params

__all__ = ["objective_perturbation_calibration", "sample_objective_noise"]

_POS = [Interval(numbers.Real, 0, None, closed="neither")]


def objective_perturbation_calibration(epsilon: float, n: int, regularization: float, c: float = 0.25):
    """Steps 1-2 of CMS 2011 Algorithm 2.

    Parameters
    ----------
    epsilon : float
        The privacy budget epsilon_p (> 0).
    n : int
        Number of records (public).
    regularization : float
        Lambda, the weight of ``(1/2)||f||^2`` in the averaged objective (> 0).
    c : float, default=0.25
        Bound on the loss's second derivative (1/4 for the logistic loss).

    Returns
    -------
    epsilon_noise : float
        epsilon' of the noise: ``b`` has density proportional to
        ``exp(-epsilon' ||b|| / 2)``.
    extra_regularization : float
        Delta, added to Lambda when ``epsilon'`` would not be positive.

    Examples
    --------
    >>> eps_b, extra = objective_perturbation_calibration(1.0, 10_000, 0.01)
    >>> round(eps_b, 6), extra
    (0.995006, 0.0)
    >>> eps_b, extra = objective_perturbation_calibration(0.01, 100, 0.001)
    >>> eps_b, round(extra, 4)
    (0.005, 0.9978)
    """
    validate_params(
        {"epsilon": epsilon, "n": n, "regularization": regularization, "c": c},
        {"epsilon": _POS, "n": _POS, "regularization": _POS, "c": _POS},
        "objective_perturbation_calibration",
    )
    ratio = c / (n * regularization)
    eps_prime = epsilon - math.log1p(2.0 * ratio + ratio * ratio)
    if eps_prime > 0:
        return eps_prime, 0.0
    extra = c / (n * math.expm1(epsilon / 4.0)) - regularization
    return epsilon / 2.0, max(extra, 0.0)


def sample_objective_noise(dim: int, epsilon_noise: float, rng: np.random.Generator) -> np.ndarray:
    """Draw ``b`` in R^dim with density proportional to ``exp(-epsilon_noise * ||b|| / 2)``.

    The norm is Gamma(shape=dim, scale=2/epsilon_noise) and the direction
    uniform on the sphere (CMS 2011, Algorithm 2, step 3).

    Examples
    --------
    >>> b = sample_objective_noise(3, 1.0, np.random.default_rng(0))
    >>> b.shape
    (3,)
    """
    validate_params(
        {"dim": dim, "epsilon_noise": epsilon_noise},
        {"dim": [Interval(numbers.Integral, 1, None, closed="left")], "epsilon_noise": _POS},
        "sample_objective_noise",
    )
    if not isinstance(rng, np.random.Generator):
        raise TypeError("rng must be a numpy.random.Generator (see dpglass.privacy.rng).")
    norm = rng.gamma(shape=float(dim), scale=2.0 / float(epsilon_noise))
    direction = rng.standard_normal(int(dim))
    length = float(np.linalg.norm(direction))
    while length == 0.0:  # probability zero; keep the draw exact anyway
        direction = rng.standard_normal(int(dim))
        length = float(np.linalg.norm(direction))
    return norm * direction / length
