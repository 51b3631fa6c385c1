"""A reference floor, not a library model: a private naive Bayes over the public bins (issue 31's "30 lines").

One release: the table ``T`` of class counts and of per-class counts of each
feature's bins, ``T[k, 0] = #{y = k}`` and ``T[k, 1 + offset_j + b] =
#{y = k, x_j in bin b}``, with discrete Gaussian noise of scale ``sigma`` on
every cell (dpglass's exact sampler, :class:`~dpglass.privacy.mechanisms.DiscreteGaussianMechanism`).

**Sensitivity.** Adding or removing one record changes its class's count and
exactly one bin count of each of the ``d`` features, each by one: ``d + 1``
cells, l2 sensitivity ``sqrt(d + 1)``.  **Guarantee.** The discrete Gaussian
of scale ``sigma`` on a query of l2 sensitivity ``s`` is ``s^2 / (2 sigma^2)``-zCDP
(Canonne, Kamath & Steinke 2020, Thm 14); ``sigma`` is the smallest (on a
relative grid of 1e-4) whose Renyi conversion at ``delta``
(:func:`~dpglass.privacy.mechanisms.gaussian.zcdp_epsilon`) is at most
``epsilon``, so the table is ``(epsilon, delta)``-DP and the classifier, a
function of it alone, too (post-processing).  The label set, the features'
ranges and the cut points are public.  The prediction is the argmax of
``log prior_k + sum_j log p_k(bin of x_j)`` with the noisy counts clipped at 0
and add-one smoothing.
"""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["DELTA", "calibrated_sigma", "fit_predict"]

DELTA = 1e-6  # the delta for this floor


@functools.lru_cache(maxsize=256)
def calibrated_sigma(epsilon: float, d: int, delta: float = DELTA) -> float:
    """The smallest noise scale (relative grid 1e-4) making the (d + 1)-cell table (epsilon, delta)-DP."""
    from dpglass.privacy.mechanisms.gaussian import zcdp_epsilon

    sens = math.sqrt(d + 1)
    lo, hi = 1e-3, 1e6
    while hi / lo > 1 + 1e-4:  # zcdp_epsilon decreases in sigma
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if zcdp_epsilon(mid, sens, delta) > epsilon else (lo, mid)
    return hi


def _table(bins_train, y, n_bins, K) -> np.ndarray:
    n, d = bins_train.shape
    table = np.zeros((K, 1 + d * n_bins), dtype=np.int64)
    np.add.at(table, (y, 0), 1)
    cols = 1 + np.arange(d)[None, :] * n_bins + bins_train  # one cell per feature
    np.add.at(table, (np.repeat(y, d), cols.ravel()), 1)
    return table


def fit_predict(bins_train, y_train, bins_test, n_bins: int, K: int, epsilon: float | None, rng) -> np.ndarray:
    """Predicted classes of ``bins_test``; ``epsilon=None`` is the same model without noise (its counterpart)."""
    from dpglass.privacy.mechanisms import DiscreteGaussianMechanism

    d = bins_train.shape[1]
    table = _table(bins_train, y_train, n_bins, K)
    if epsilon is not None:
        sigma = calibrated_sigma(float(epsilon), d)
        table = DiscreteGaussianMechanism(sigma, DELTA).randomise(table, rng)
    counts = np.maximum(table, 0).astype(float)
    log_prior = np.log(counts[:, 0] + 1.0)
    cells = counts[:, 1:].reshape(K, d, n_bins) + 1.0
    log_p = np.log(cells / cells.sum(axis=2, keepdims=True))  # (K, d, bins)
    score = log_prior[None, :] + sum(log_p[:, j, bins_test[:, j]].T for j in range(d))
    return np.argmax(score, axis=1)
