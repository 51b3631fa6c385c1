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
from fractions import Fraction

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models.boosting.hypotheses import (
    FeatureMatrix, by_level, class_codes, class_grams, class_sums, entry_predictions,
)

__all__ = ["BoostPart", "PartsMeasure", "bregman_projection", "level_measure", "level_weights_exact",
           "smooth_weighting"]


# ------------------------------------------------------------------ projection
def _project_exact(mu_tilde, target, counts) -> list:
    """The projection of ``mu_tilde`` (floats >= 0, multiplicities ``counts``) onto mass ``target``, exactly.

    Every input is a float or an integer, hence an exact rational; the result is ``min(1, c * mu_tilde)`` as
    :class:`~fractions.Fraction` values with the smallest ``c >= 1`` meeting the mass constraint, found exactly
    (the capped values are a prefix of the values sorted down; for each prefix ``c = (target - capped
    records) / (the rest's mass)``).  Entries 0 stay 0; an infeasible problem gives 1 on every positive entry.
    No rounding anywhere: Lemma S' (docs/privacy.md) holds for these values as it is stated.
    """
    w = [Fraction(float(v)) for v in mu_tilde]
    c = [Fraction(int(v)) if isinstance(v, (int, np.integer)) else Fraction(float(v)) for v in counts]
    target = Fraction(target)
    zero, one = Fraction(0), Fraction(1)
    pos = [i for i, v in enumerate(w) if v > 0]
    if not pos:
        return [zero] * len(w)
    capped = [min(one, v) if v > 0 else zero for v in w]
    if sum(c[i] * capped[i] for i in pos) >= target:  # constraint inactive: c = 1, just cap at 1
        return capped
    if sum(c[i] for i in pos) <= target:  # infeasible (or exactly all ones)
        return [one if v > 0 else zero for v in w]
    order = sorted(pos, key=lambda i: -w[i])  # stable: ties keep their order
    below, rest = zero, sum(c[i] * w[i] for i in order)  # records capped before position k; the others' mass
    factor = one
    for k, i in enumerate(order):
        factor = (target - below) / rest
        if factor * w[i] <= 1 and (k == 0 or factor * w[order[k - 1]] >= 1):
            break
        below, rest = below + c[i], rest - c[i] * w[i]
    return [min(one, factor * v) if v > 0 else zero for v in w]


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
    if not (isinstance(target, (numbers.Real, Fraction)) and target > 0 and math.isfinite(target)):
        raise InvalidParameterError(f"target must be a finite number > 0. Got {target!r} instead.")
    counts = np.ones(mu_tilde.size) if counts is None else np.asarray(counts, dtype=np.float64)
    if counts.shape != mu_tilde.shape or np.any(counts <= 0):
        raise InvalidParameterError("counts must be positive and have the shape of mu_tilde.")
    return np.array([float(v) for v in _project_exact(mu_tilde, target, counts)], dtype=np.float64)


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
    mu_levels = _as_floats(_level_weights(np.arange(-t, t + 1), counts, density, learning_rate, target))
    return np.take(np.roll(mu_levels, -t), margin, mode="wrap")  # mu_levels[margin + t], without its index copy


def _level_weights(levels: np.ndarray, counts: np.ndarray, density: float, learning_rate: float,
                   target) -> list:
    """The projected measure at each margin level, exactly (Fractions; ``counts`` records at each of ``levels``; 0
    where none): the public floats ``mu~ = exp(log kappa - lambda * level)``, projected by :func:`_project_exact`
    onto mass ``target`` (an exact ``kappa n``)."""
    present = np.flatnonzero(counts > 0)
    out = [Fraction(0)] * levels.size
    if target > 0 and present.size:
        mu_tilde = np.exp(math.log(density) - learning_rate * levels[present])
        for i, v in zip(present, _project_exact(mu_tilde, target, counts[present])):
            out[int(i)] = v
    return out


def _as_floats(values) -> np.ndarray:
    """The nearest float64 of each exact value (one rounding each)."""
    return np.array([float(v) for v in values], dtype=np.float64)


def level_measure(level_counts, t: int, *, density: float, learning_rate: float, target: float) -> np.ndarray:
    """:func:`smooth_weighting` by margin level: ``mu`` at the margins ``-t, -t + 2, .., t`` (after ``t`` rounds a
    margin has t's parity), given the records at each (``level_counts``, length ``t + 1``).  The same values as
    :func:`smooth_weighting` gives the records of those margins."""
    counts = np.asarray(level_counts, dtype=np.float64)
    return _as_floats(level_weights_exact(counts, t, density=density, learning_rate=learning_rate, target=target))


def level_weights_exact(level_counts, t: int, *, density: float, learning_rate: float, target) -> list:
    """:func:`level_measure` exactly: the projected measure at each level as Fractions (no rounding)."""
    counts = np.asarray(level_counts, dtype=np.float64)
    return _level_weights(np.arange(-t, t + 1, 2), counts, density, learning_rate, target)


# ----------------------------------------------------------------- the fit's parts
def _committee_codes(margin: np.ndarray, labels: np.ndarray, t: int, n_classes: int) -> np.ndarray:
    """Each entry's group: (margin level, class), level ``(margin + t) / 2`` in ``0..t``."""
    return ((margin + t) // 2) * n_classes + labels.astype(np.int64)


class BoostPart:
    """One part of the pattern table and what a LazyBB round asks of it (:mod:`dpglass.aggregates.parts`).

    A record's smooth weight is a function of its margin under the released committee, so each round's
    weighted sums are sums over (margin level, class) groups of the entries' **integer record counts**
    (:func:`~dpglass.models.boosting.hypotheses.class_sums` and the other statistics, with groups
    ``level * K + class``): exact integers, which add up over the parts whatever the cut, and which the
    client turns into masses with the projected measure of each level (:class:`PartsMeasure`).  The margins
    are a cache: extended by the hypotheses released since the last question, rebuilt from the committee
    when it is not an extension (a part recomputed after its worker died).  In memory there is one part.
    """

    def __init__(self, table, n_classes: int):
        self.F = FeatureMatrix(table)
        self.labels = np.asarray(table.labels)  # uint8 class codes, as the table holds them
        self.w = np.asarray(table.counts, dtype=np.float64)  # exact: counts are below 2**53
        self.K = int(n_classes)
        self._committee, self._margin = (), np.zeros(self.labels.shape[0], dtype=np.int64)

    def groups(self, committee: tuple) -> tuple[np.ndarray, int]:
        """``(codes, G)``: each entry's (margin level, class) group after ``committee``, of ``G = (t + 1) K``."""
        done = self._committee
        if committee[: len(done)] != done:
            done, self._margin = (), np.zeros(self.labels.shape[0], dtype=np.int64)
        for h in committee[len(done):]:
            # sigma(i) += +1 if h votes y_i else -1 (two classes: y_i * h(x_i))
            self._margin += 2 * (class_codes(entry_predictions(self.F, h), self.K) == self.labels).astype(np.int64) - 1
        self._committee = tuple(committee)
        t = len(committee)
        return _committee_codes(self._margin, self.labels, t, self.K), (t + 1) * self.K


def _boost_part(table, n_classes: int) -> BoostPart:
    return BoostPart(table, n_classes)


def _part_stat(part: BoostPart, stat, committee: tuple, *args):
    codes, G = part.groups(committee)
    return stat(part.F, codes, part.w, G, *args)


def _level_counts(F, codes, w, G):
    return np.bincount(codes, weights=w, minlength=G).astype(np.float64)


class PartsMeasure:
    """Round ``t + 1``'s smooth measure of a fit's parts: the weak learners' statistics, asked of the parts.

    ``ask(stat, *args)`` sums ``stat`` over the parts by (margin level, class) group -- exact integers --
    and contracts the levels with the projected measure of each level (:func:`level_measure`): the
    statistic of the measure by class, as :class:`~dpglass.models.boosting.hypotheses.EntryMeasure` gives
    it for weights given entry by entry.  The level measure comes from the records at each level, read
    from the round's first statistic when it counts every entry by group (``class_sums``,
    ``class_grams``: their first array), else asked of the parts first.  ``target`` is the projection's
    ``kappa n``: given, or (the first round, None) ``density`` times the records counted then (n is
    private: it is used only there, Lemma S').  The client holds the committee, the level counts and the
    statistics, never an entry.
    """

    def __init__(self, parts, committee: tuple, *, n_classes: int, n_features: int, density: float,
                 learning_rate: float, target=None):
        self.parts, self.committee = parts, tuple(committee)
        self.n_classes, self.n_features = int(n_classes), int(n_features)
        self.density, self.learning_rate, self.target = float(density), float(learning_rate), target
        self.mu = self.mu_exact = None

    def ask(self, stat, *args):
        sums = self._sums(stat, *args)
        return tuple(self._by_class(s) for s in sums) if isinstance(sums, tuple) else self._by_class(sums)

    def levels(self, stat, *args) -> tuple:
        """``(mu, sums)``: the exact measure of each margin level (Fractions) and ``stat`` summed over the parts
        by level, each array of shape ``(levels, K, ...)`` (exact integers): what an exact contraction reads."""
        sums = self._sums(stat, *args)
        return self.mu_exact, by_level(sums, len(self.mu_exact), self.n_classes)

    def _sums(self, stat, *args):
        sums = self.parts.sum(_part_stat, stat, self.committee, *args)
        if self.mu is None:
            totals = sums[0] if stat in _COUNTS_EVERY_ENTRY else self.parts.sum(_part_stat, _level_counts,
                                                                                  self.committee)
            self._weigh(np.asarray(totals, dtype=np.float64).reshape(-1, self.n_classes).sum(axis=1))
        return sums

    def _weigh(self, level_counts: np.ndarray) -> None:
        if self.target is None:  # kappa n, exactly (n: the records counted, an integer below 2**53)
            self.target = Fraction(self.density) * int(level_counts.sum())
        t = len(self.committee)
        self.mu_exact = level_weights_exact(level_counts, t, density=self.density,
                                            learning_rate=self.learning_rate, target=self.target)
        self.mu = _as_floats(self.mu_exact)

    def _by_class(self, counts: np.ndarray) -> np.ndarray:
        counts = np.asarray(counts, dtype=np.float64)
        by_level = counts.reshape((self.mu.size, self.n_classes) + counts.shape[1:])
        return np.tensordot(self.mu, by_level, axes=(0, 0))

    def predictions(self, h):
        return None  # the parts update their margins from the committee


#: Statistics whose first array is every entry's weight by group (what the level measure needs).
_COUNTS_EVERY_ENTRY = (class_sums, class_grams)
