"""The law of the number of runs of a private selection (Liu and Talwar 2019; Papernot and Steinke 2022): its
pmf, mean and sampler, and the selection's epsilon factor.  Public parameters only; low in the models package
(the selection and its file check both read it).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy.special import gammaln

from dpglass.exceptions import InvalidParameterError

__all__ = ["expected_repetitions", "repetition_pmf", "sample_repetitions", "selection_epsilon_factor"]


def _check_law(eta: float, gamma: float) -> None:
    if not (isinstance(eta, numbers.Real) and math.isfinite(eta) and eta >= 0):
        raise InvalidParameterError(f"eta must be a finite number >= 0. Got {eta!r} instead.")
    if not (isinstance(gamma, numbers.Real) and 0 < gamma <= 1):
        raise InvalidParameterError(f"gamma must be a number in (0, 1]. Got {gamma!r} instead.")
    if gamma == 1 and eta != 1:
        raise InvalidParameterError(
            "gamma = 1 is only defined for the geometric law (eta = 1, a single run); "
            f"the truncated negative binomial needs gamma < 1. Got eta={eta!r}."
        )


def repetition_pmf(k, eta: float, gamma: float) -> np.ndarray:
    """``P[K = k]`` under the truncated negative binomial ``D_{eta,gamma}``.

    Papernot and Steinke (2022), Definition 1: for ``k = 1, 2, ...``,
    ``P[K = k] = (1 - gamma)**k / (gamma**-eta - 1) * prod_{l=0}^{k-1} (l + eta)/(l + 1)``
    when ``eta > 0``, and the logarithmic law
    ``P[K = k] = (1 - gamma)**k / (k * log(1/gamma))`` when ``eta = 0``.
    ``eta = 1`` is the geometric law ``gamma (1 - gamma)**(k - 1)`` of Liu and
    Talwar's random stopping.

    Examples
    --------
    >>> repetition_pmf([1, 2, 3], 1.0, 0.5).tolist()
    [0.5, 0.25, 0.125]
    >>> round(float(repetition_pmf(np.arange(1, 400), 0.0, 0.2).sum()), 12)
    1.0
    """
    _check_law(eta, gamma)
    k = np.asarray(k, dtype=np.float64)
    if np.any(k < 1) or np.any(k != np.floor(k)):
        raise InvalidParameterError("k must hold integers >= 1.")
    if gamma == 1:
        return (k == 1).astype(np.float64)
    if eta == 1:
        return gamma * (1.0 - gamma) ** (k - 1)
    log_q = math.log1p(-gamma)
    if eta == 0:
        return np.exp(k * log_q - np.log(k) - math.log(-math.log(gamma)))
    # log prod_{l<k} (l + eta)/(l + 1) = lgamma(k + eta) - lgamma(eta) - lgamma(k + 1)
    log_norm = math.log(math.expm1(-eta * math.log(gamma)))  # log(gamma**-eta - 1)
    return np.exp(k * log_q + gammaln(k + eta) - gammaln(eta) - gammaln(k + 1) - log_norm)


def expected_repetitions(eta: float, gamma: float) -> float:
    """``E[K]`` for ``K ~ D_{eta,gamma}``.

    ``1/gamma`` for the geometric law (``eta = 1``);
    ``(1 - gamma) / (gamma log(1/gamma))`` for ``eta = 0``;
    ``eta (1 - gamma) / (gamma (1 - gamma**eta))`` otherwise.

    Examples
    --------
    >>> expected_repetitions(1.0, 0.1)
    10.0
    >>> round(expected_repetitions(0.0, 0.1), 4)
    3.9087
    """
    _check_law(eta, gamma)
    if eta == 1:
        return 1.0 / gamma
    if eta == 0:
        return (1.0 - gamma) / (gamma * -math.log(gamma))
    return eta * (1.0 - gamma) / (gamma * -math.expm1(eta * math.log(gamma)))


def sample_repetitions(eta: float, gamma: float, rng: np.random.Generator) -> int:
    """Draw ``K ~ D_{eta,gamma}`` (a data-independent draw).

    ``eta = 1``: :meth:`numpy.random.Generator.geometric` (trials up to the
    first success, i.e. "after each run stop with probability gamma").
    ``eta = 0``: :meth:`~numpy.random.Generator.logseries` with ``p = 1 - gamma``.
    Otherwise a negative binomial draw (failures before the ``eta``-th success,
    success probability ``gamma``) conditioned on being positive, by rejection.

    Examples
    --------
    >>> k = [sample_repetitions(0.5, 0.2, np.random.default_rng(s)) for s in range(5)]
    >>> all(isinstance(v, int) and v >= 1 for v in k)
    True
    """
    _check_law(eta, gamma)
    if eta == 1:
        return int(rng.geometric(gamma))
    if eta == 0:
        return int(rng.logseries(1.0 - gamma))
    while True:
        k = int(rng.negative_binomial(eta, gamma))
        if k > 0:
            return k


def selection_epsilon_factor(eta: float) -> float:
    """The privacy factor ``2 + eta`` of Papernot and Steinke (2022), Corollary 3.

    Best-of-``K`` with ``K ~ D_{eta,gamma}`` over ``epsilon_run``-DP runs is
    ``(2 + eta) * epsilon_run``-DP; ``eta = 1`` (geometric) gives Liu and
    Talwar's ``3 epsilon_run``.

    Examples
    --------
    >>> selection_epsilon_factor(1.0)
    3.0
    """
    if not (isinstance(eta, numbers.Real) and math.isfinite(eta) and eta >= 0):
        raise InvalidParameterError(f"eta must be a finite number >= 0. Got {eta!r} instead.")
    return 2.0 + float(eta)


# ------------------------------------------------------------- the search
