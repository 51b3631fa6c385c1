"""Differentially private selection: exponential mechanism, permute-and-flip, report noisy max.

Each selector releases one index.  Sampling is exact: only uniform integers
and integer comparisons (:mod:`dpglass.privacy.samplers`), so floating-point
artefacts cannot change which index comes out beyond the 2**-40 rounding of
the exponents that the rate pays for (docs/privacy.md, "Floating point").

Examples
--------
>>> import numpy as np
>>> ExponentialMechanism(1.0, 1.0).probabilities([0.0, 0.0]).tolist()
[0.5, 0.5]
>>> PermuteAndFlip(1.0, 1.0).select([0.0, 5.0], np.random.default_rng(0)) in (0, 1)
True
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from dpglass._validation import Options
from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.mechanisms._common import (
    _BOOL, _POSITIVE, GRID_SLACK, _Mechanism, _check_rng, _check_scores,
)
from dpglass.privacy.samplers import discrete_laplace, exponential_mechanism, permute_and_flip

__all__ = ["ExponentialMechanism", "PermuteAndFlip", "ReportNoisyMax"]

#: Largest candidate set for which :meth:`PermuteAndFlip.probabilities` runs
#: (its cost is quadratic in the number of candidates).
_MAX_EXACT_PF = 10_000


class _Selector(_Mechanism):
    _parameter_constraints = {"epsilon": _POSITIVE, "sensitivity": _POSITIVE, "monotonic": _BOOL}

    def __init__(self, epsilon, sensitivity, monotonic=False):
        self._set_params(epsilon=epsilon, sensitivity=sensitivity, monotonic=monotonic)
        _check_epsilon_above_slack(self.epsilon, type(self).__name__)

    @property
    def _rate(self) -> float:
        # (epsilon - slack) / (2 sensitivity), or / sensitivity for monotone
        # utilities; the slack pays for rounding exponents to the 2**-40 grid
        return (self.epsilon - GRID_SLACK) / ((1.0 if self.monotonic else 2.0) * self.sensitivity)


class ExponentialMechanism(_Selector):
    """Exponential mechanism: select index ``r`` with probability ∝ ``exp(eps u_r / (2 sens))``.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float
        Bound on ``|u_r(D) - u_r(D')|`` for every candidate ``r`` and neighbours
        ``D, D'`` (finite, > 0).
    monotonic : bool, default=False
        If every utility moves in the same direction between any two
        neighbours, the factor 2 can be dropped: probability ∝ ``exp(eps u / sens)``.

    Notes
    -----
    **Releases** one index.  **Guarantee**: pure ``(epsilon, 0)``-DP under the
    sensitivity (and, if set, monotonicity) assumption; the candidate set must
    not depend on the data.  Sampling is exact
    (:func:`dpglass.privacy.samplers.exponential_mechanism`: rejection with
    exactly sampled ``Bernoulli(exp(-x))`` coins, uniform integers only), with
    the exponents rounded up to multiples of 2**-40; the rate reserves 2**-39
    of epsilon for that rounding (docs/privacy.md, "Floating point").
    **Reference**: McSherry & Talwar, "Mechanism design via differential
    privacy", FOCS 2007; Dwork & Roth (2014), Thm 3.10.

    Examples
    --------
    >>> em = ExponentialMechanism(epsilon=2 * np.log(3), sensitivity=1.0)
    >>> em.probabilities([0.0, 1.0]).round(6).tolist()
    [0.25, 0.75]
    """

    @property
    def curve(self) -> dict:
        """epsilon-bounded range (Durfee & Rogers 2019): every log-ratio of output probabilities moves
        by at most ``rate * 2 sens`` (``rate * sens`` if monotonic) plus the grid rounding, i.e. epsilon."""
        return {"kind": "bounded-range", "epsilon": self.epsilon}

    def probabilities(self, utilities) -> np.ndarray:
        """The exact selection probabilities (stable softmax)."""
        u = _check_scores(utilities, f"{type(self).__name__}.probabilities", "utilities")
        return special.softmax(self._rate * u)

    def select(self, utilities, rng) -> int:
        """Draw one index, exactly."""
        owner = f"{type(self).__name__}.select"
        _check_rng(rng, owner)
        u = _check_scores(utilities, owner, "utilities")
        return int(exponential_mechanism(u, self._rate, rng))


class PermuteAndFlip(_Selector):
    """Permute-and-flip: pure-DP selection, never worse than the exponential mechanism.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float
        Bound on ``|u_r(D) - u_r(D')|`` for every candidate (finite, > 0).
    monotonic : bool, default=False
        Monotone utilities allow ``eps / sens`` in place of ``eps / (2 sens)``.

    Attributes
    ----------
    scale : float
        Exponential noise scale ``2 sens / eps`` (``sens / eps`` if monotonic).

    Notes
    -----
    **Releases** one index.  **Guarantee**: pure ``(epsilon, 0)``-DP under the
    sensitivity (and monotonicity) assumption, for a data-independent
    candidate set.  McKenna & Sheldon ("Permute-and-flip: a new mechanism for
    differentially private selection", NeurIPS 2020) visit the candidates in a
    random order and accept ``r`` with probability
    ``exp(eps (u_r - max u) / (2 sens))``.  We draw from the identical output
    distribution as report-noisy-max with exponential noise of scale
    ``2 sens / eps`` (Ding, Kifer et al., "The permute-and-flip mechanism is
    identical to report-noisy-max with exponential noise", 2021).  Sampling
    is McKenna & Sheldon's own algorithm with exactly sampled coins
    (:func:`dpglass.privacy.samplers.permute_and_flip`); exponents are rounded
    up to multiples of 2**-40 and the rate reserves 2**-39 of epsilon for it.

    Examples
    --------
    >>> pf = PermuteAndFlip(epsilon=1.0, sensitivity=1.0)
    >>> round(pf.scale, 9)
    2.0
    >>> pf.probabilities([0.0, 0.0]).round(12).tolist()
    [0.5, 0.5]
    """

    @property
    def scale(self) -> float:
        """The exponential noise scale ``1 / rate``."""
        return 1.0 / self._rate

    def select(self, utilities, rng) -> int:
        """Draw one index, exactly (random order, accept with ``exp(rate (u - max u))``)."""
        owner = f"{type(self).__name__}.select"
        _check_rng(rng, owner)
        u = _check_scores(utilities, owner, "utilities")
        return int(permute_and_flip(u, self._rate, rng))

    def probabilities(self, utilities) -> np.ndarray:
        """The exact selection probabilities (at most 10,000 candidates; cost O(n**2)).

        With ``c_i = exp(rate (u_i - max u))``,
        ``P(r) = c_r * integral_0^1 prod_{i != r} (1 - c_i t) dt``; the integrand is a
        polynomial of degree ``n - 1``, integrated exactly by Gauss-Legendre
        quadrature with ``ceil(n/2)`` nodes (positive terms only: no cancellation).
        """
        owner = f"{type(self).__name__}.probabilities"
        u = _check_scores(utilities, owner, "utilities")
        n = u.size
        if n > _MAX_EXACT_PF:
            raise InvalidParameterError(
                f"The 'utilities' parameter of {owner} must be an array of at most {_MAX_EXACT_PF} "
                f"candidates (the exact computation costs O(n**2)). Got {n} candidates instead."
            )
        c = np.exp(self._rate * (u - u.max()))
        nodes, weights = special.roots_legendre(max(1, (n + 1) // 2))
        t, w = (nodes + 1.0) / 2.0, weights / 2.0  # map [-1, 1] to [0, 1]
        probs = np.zeros(n)
        for start in range(0, t.size, 256):  # chunks of nodes keep memory O(256 n)
            log_factors = np.log1p(-np.outer(c, t[start:start + 256]))  # shape (n, chunk)
            log_all = log_factors.sum(axis=0)
            probs += np.exp(log_all - log_factors) @ w[start:start + 256]
        probs *= c
        return probs / probs.sum()  # removes rounding only: the exact sum is 1


class ReportNoisyMax(_Mechanism):
    """Report noisy max with discrete Laplace or exponential noise, sampled exactly.

    Parameters
    ----------
    epsilon : float
        Finite, > 0.
    sensitivity : float
        Bound on ``|s_r(D) - s_r(D')|`` for every candidate (finite, > 0).
    noise : {"laplace", "exponential"}, default="laplace"
    monotonic : bool, default=False
        Monotone scores (e.g. counts) allow scale ``sens / eps``; otherwise the
        scale is ``2 sens / eps``.

    Attributes
    ----------
    scale : float
        The nominal scale (``2 sens / eps`` or ``sens / eps``).

    Notes
    -----
    **Releases** only the index of the noisy maximum (never the noisy values).
    **Guarantee**: pure ``(epsilon, 0)``-DP.  ``noise="laplace"``: the scores
    are rounded to a public grid ``g = 2**(floor(log2(sens/eps)) - 16)``, integer
    discrete Laplace noise of scale ``m (sens/g + 1) / eps`` (grid units;
    ``m = 2``, or 1 if monotone) is added and the first maximum wins.  Proof
    (Dwork & Roth 2014, Claim 3.9, for integers): fix the other noises; ``i``
    wins iff its noise is at least an integer threshold that moves by at most
    ``m (sens/g + 1)`` between neighbours, and the discrete Laplace survival
    function changes by at most ``e**(eps k / (m(sens/g+1)))`` under a shift
    of ``k``.  ``noise="exponential"`` is permute-and-flip (Ding, Kifer et
    al. 2021), sampled by :class:`PermuteAndFlip`.

    Examples
    --------
    >>> ReportNoisyMax(1.0, 1.0).scale, ReportNoisyMax(1.0, 1.0, monotonic=True).scale
    (2.0, 1.0)
    """

    _parameter_constraints = {
        "epsilon": _POSITIVE,
        "sensitivity": _POSITIVE,
        "noise": [Options(("laplace", "exponential"))],
        "monotonic": _BOOL,
    }

    def __init__(self, epsilon, sensitivity, noise="laplace", monotonic=False):
        self._set_params(epsilon=epsilon, sensitivity=sensitivity, noise=noise, monotonic=monotonic)
        _check_epsilon_above_slack(self.epsilon, type(self).__name__)

    @property
    def scale(self) -> float:
        """``2 sens / eps``, or ``sens / eps`` for monotone scores."""
        return (1.0 if self.monotonic else 2.0) * self.sensitivity / self.epsilon

    def select(self, scores, rng) -> int:
        """Draw one index (one block of noise)."""
        owner = f"{type(self).__name__}.select"
        _check_rng(rng, owner)
        s = _check_scores(scores, owner, "scores")
        if self.noise == "exponential":
            return PermuteAndFlip(self.epsilon, self.sensitivity, self.monotonic).select(s, rng)
        g = 2.0 ** (math.floor(math.log2(self.sensitivity / self.epsilon)) - 16)
        units = np.rint(s / g)
        factor = 1.0 if self.monotonic else 2.0
        noise = discrete_laplace(factor * (self.sensitivity / g + 1.0) / self.epsilon, s.size, rng)
        return int(np.argmax(units.astype(np.int64) + noise))


def _check_epsilon_above_slack(epsilon, owner):
    if not epsilon > 2 * GRID_SLACK:
        raise InvalidParameterError(
            f"The 'epsilon' parameter of {owner} must be above {2 * GRID_SLACK:.3g} (exact sampling "
            f"reserves {GRID_SLACK:.3g} of it). Got {epsilon!r} instead."
        )
