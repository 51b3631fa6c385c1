"""GreedyRL, paper 001's non-private greedy rule list (the baseline :class:`GreedyRuleListClassifier` fits)."""

from __future__ import annotations

import math

import numpy as np

from dpglass.models.rule_list.candidates import CandidateSet, SufficientStats
from dpglass.models.rule_list.rules import RuleListRelease
from dpglass.privacy.sensitivity import weighted_gini

__all__ = ["fit_greedy_rule_list"]


def fit_greedy_rule_list(X, y, *, candidates: CandidateSet, max_length: int, min_support: float,
                         criterion: str = "gini") -> RuleListRelease:
    """Non-private greedy rule list (GreedyRL) on 0/1 data.

    A candidate qualifies if it catches at least ``max(1, floor(min_support * n))``
    remaining records.  ``criterion="gini"`` (paper 001) picks the lowest
    weighted Gini impurity of the split, ties broken by the lower impurity of
    the caught side, then by candidate order.  ``criterion="errors"`` picks
    the fewest training errors of the list ended by the candidate (each side
    predicted by its majority, as ``errors-pf`` scores), ties broken by the
    fewer errors on the caught side, then by candidate order.  Either stops
    when the best candidate does not improve on stopping.
    """
    stats = SufficientStats(X, y, candidates)
    support = max(1, math.floor(min_support * sum(stats.remaining())))
    used = np.zeros(len(candidates), dtype=bool)
    out = RuleListRelease()
    for _ in range(max_length):
        n0, n1 = stats.remaining()
        c0, c1 = stats.caught_counts()
        ok = ~used & (c0 + c1 >= support) & (c0 + c1 < n0 + n1)
        if not ok.any():
            out.stop_reason = "minimum support"
            break
        score, caught, stop = _greedy_scores(criterion, c0, c1, n0, n1)
        order = np.flatnonzero(ok)
        best = order[np.lexsort((order, caught[order], score[order]))[0]]
        if score[best] >= stop:
            out.stop_reason = "no improvement"
            break
        out.selected.append((int(best), (float(c0[best]), float(c1[best]))))
        stats.remove(best)
        used[best] = True
    out.default_counts = stats.remaining()
    return out


def _greedy_scores(criterion: str, c0, c1, n0: float, n1: float):
    """(score of each candidate, its caught side's score, the score of stopping): lower is better."""
    if criterion == "errors":
        return np.minimum(c0, c1) + np.minimum(n0 - c0, n1 - c1), np.minimum(c0, c1), min(n0, n1)
    return (np.round(weighted_gini(c1, c0, n1 - c1, n0 - c0), 12), np.round(weighted_gini(c1, c0, 0, 0), 12),
            np.round(weighted_gini(n1, n0, 0, 0), 12))
