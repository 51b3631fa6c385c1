"""LazyBB's smooth measure: the KL (Bregman) projection onto the kappa-dense measures (paper 002, Algorithm 1).

:func:`smooth_weighting` is the measure LazyBB gives the weak learner each
round: ``kappa * exp(-lambda * margin)`` projected by :func:`bregman_projection`
onto the measures of total mass at least ``kappa n``, computed exactly on the
distinct margins.  n is private: it enters only the projection's target
(docs/privacy.md, "Smooth boosting", Lemma S').
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = ["bregman_projection", "smooth_weighting"]


# ------------------------------------------------------------------ projection
def _project_log(log_w: np.ndarray, target: float, counts: np.ndarray) -> np.ndarray:
    """Projection of ``exp(log_w)`` (values with multiplicities ``counts``) in log space."""
    m = log_w.size
    finite = np.isfinite(log_w)
    out = np.zeros(m, dtype=np.float64)
    if not finite.any():
        return out
    capped_at_one = np.minimum(log_w, 0.0)
    slack_mass = float(np.sum(counts[finite] * np.exp(capped_at_one[finite])))
    if slack_mass >= target:  # constraint inactive: c = 1, just cap at 1
        out[finite] = np.exp(capped_at_one[finite])
        return out
    if float(counts[finite].sum()) <= target:  # infeasible (or exactly all ones)
        out[finite] = 1.0
        return out
    idx = np.flatnonzero(finite)
    order = idx[np.argsort(-log_w[idx], kind="stable")]
    v = log_w[order]
    c = counts[order].astype(np.float64)
    k_max = v.size
    # capping the first k values (k = 0..k_max-1): c_k = (target - K_k) / S_k
    K = np.concatenate([[0.0], np.cumsum(c)[:-1]])  # records capped before position k
    # suffix log-sums log S_k = logsumexp(v[k:] + log c[k:])
    terms = v + np.log(c)
    log_S = np.logaddexp.accumulate(terms[::-1])[::-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_c = np.log(np.maximum(target - K, 0.0)) - log_S
    prev_ok = np.ones(k_max, dtype=bool)
    prev_ok[1:] = log_c[1:] + v[:-1] >= 0.0  # the capped values stay capped
    this_ok = log_c + v <= 0.0  # the uncapped values stay below 1
    valid = prev_ok & this_ok & (target - K > 0)
    k = int(np.argmax(valid)) if valid.any() else int(np.argmin(np.abs(log_c + v)))
    lc = max(float(log_c[k]), 0.0)
    out[finite] = np.exp(np.minimum(log_w[finite] + lc, 0.0))
    return out


def bregman_projection(mu_tilde, target: float, counts=None) -> np.ndarray:
    """KL (Bregman) projection onto the measures of total mass at least ``target``.

    Solves ``argmin_mu KL(mu || mu_tilde)`` over ``{mu : 0 <= mu_i <= 1,
    sum_i counts_i mu_i >= target}``, with the generalised KL divergence of
    measures ``sum mu log(mu / mu_tilde) - mu + mu_tilde``.  By the KKT
    conditions the solution is ``min(1, c * mu_tilde)`` with the smallest
    ``c >= 1`` meeting the mass constraint; ``c`` is found exactly by sorting
    the values (with ``target = kappa * n`` this is the projection onto the
    kappa-dense measures of paper 002).

    Parameters
    ----------
    mu_tilde : array-like of non-negative floats
        The measure to project (entries 0 stay 0).
    target : float
        Required total mass (``kappa * n``), > 0.
    counts : array-like of positive ints, optional
        Multiplicity of each entry (LazyBB projects one value per distinct
        margin).  Default: all ones.

    Returns
    -------
    numpy.ndarray
        The projected measure (same shape as ``mu_tilde``).  If even
        ``mu = 1`` on every positive entry has mass below ``target`` the
        problem is infeasible and that all-ones measure is returned (it never
        happens in LazyBB, whose ``target = kappa n < n``).

    Examples
    --------
    >>> bregman_projection([0.1, 0.1, 0.4, 2.0], target=2.0).round(6).tolist()
    [0.166667, 0.166667, 0.666667, 1.0]
    >>> bregman_projection([0.5, 0.9, 3.0], target=1.0).tolist()  # already dense: only capped
    [0.5, 0.9, 1.0]
    """
    mu_tilde = np.asarray(mu_tilde, dtype=np.float64)
    if mu_tilde.ndim != 1 or np.any(~np.isfinite(mu_tilde)) or np.any(mu_tilde < 0):
        raise InvalidParameterError("mu_tilde must be a 1-d array of finite non-negative numbers.")
    if not (isinstance(target, numbers.Real) and target > 0 and math.isfinite(target)):
        raise InvalidParameterError(f"target must be a finite number > 0. Got {target!r} instead.")
    counts = np.ones(mu_tilde.size) if counts is None else np.asarray(counts, dtype=np.float64)
    if counts.shape != mu_tilde.shape or np.any(counts <= 0):
        raise InvalidParameterError("counts must be positive and have the shape of mu_tilde.")
    with np.errstate(divide="ignore"):
        log_w = np.log(mu_tilde)
    return _project_log(log_w, float(target), counts)


def smooth_weighting(margin, t: int, *, density: float, learning_rate: float, target: float,
                     counts=None) -> np.ndarray:
    """The kappa-dense measure LazyBB gives the weak learner in round ``t + 1``.

    ``mu~(i) = kappa * exp(-lambda * margin[i])`` projected by
    :func:`bregman_projection` onto the measures of mass at least ``target``
    (``kappa * n``).  Not normalised: the weak learners' utilities are
    mu-weighted sums, whose sensitivity is a constant (docs/privacy.md); the
    paper's normalised weighting is this divided by its mass.  The measure
    takes one value per distinct margin (at most ``2t + 1`` after ``t``
    rounds), so the projection runs on those values with their counts.

    Parameters
    ----------
    margin : ndarray of int
        ``sigma_t(i) = y_i * sum_j h_j(x_i)``, in ``[-t, t]``.
    t : int
        Rounds done so far.
    counts : ndarray of int, optional
        Records behind each entry of ``margin`` (the pattern table's counts);
        default one each.

    Returns
    -------
    numpy.ndarray
        ``mu``, entries in [0, 1], total at least ``target`` when feasible.

    Examples
    --------
    >>> smooth_weighting(np.array([0, 0, 0, 0]), 0, density=0.5, learning_rate=0.5, target=2.0).tolist()
    [0.5, 0.5, 0.5, 0.5]
    """
    margin = np.asarray(margin, dtype=np.int64)
    counts = np.bincount(margin + t, weights=counts, minlength=2 * t + 1).astype(np.float64)
    present = counts > 0
    levels = np.arange(-t, t + 1)
    log_w = math.log(density) - learning_rate * levels[present]
    mu_levels = np.zeros(levels.size)
    if target > 0:
        mu_levels[present] = _project_log(log_w, float(target), counts[present])
    return np.take(np.roll(mu_levels, -t), margin, mode="wrap")  # mu_levels[margin + t], without its index copy
