"""GreedyRL, paper 001's non-private greedy rule list (the baseline :class:`GreedyRuleListClassifier` fits)."""

from __future__ import annotations

import math

import numpy as np

from dpglass.models.rule_list.candidates import CandidateSet, SufficientStats
from dpglass.models.rule_list.impurity import side_errors, split_errors, split_gini
from dpglass.models.rule_list.rules import RuleListRelease

__all__ = ["fit_greedy_rule_list"]


def fit_greedy_rule_list(X, y, *, candidates: CandidateSet, max_length: int, min_support: float,
                         criterion: str = "gini", n_classes: int = 2) -> RuleListRelease:
    """Non-private greedy rule list (GreedyRL) on 0/1 data, ``y`` of class codes 0..``n_classes`` - 1.

    A candidate qualifies if it catches at least ``max(1, floor(min_support * n))``
    remaining records.  ``criterion="gini"`` (paper 001) picks the lowest
    weighted Gini impurity of the split, ties broken by the lower impurity of
    the caught side, then by candidate order.  ``criterion="errors"`` picks
    the fewest training errors of the list ended by the candidate (each side
    predicted by its majority class, as ``errors-pf`` scores), ties broken by
    the fewer errors on the caught side, then by candidate order.  Either
    stops when the best candidate does not improve on stopping.
    """
    stats = SufficientStats(X, y, candidates, n_classes)
    support = max(1, math.floor(min_support * sum(stats.remaining())))
    used = np.zeros(len(candidates), dtype=bool)
    out = RuleListRelease()
    for _ in range(max_length):
        N, C = stats.remaining_counts(), stats.class_counts()
        size = C.sum(axis=0)
        ok = ~used & (size >= support) & (size < N.sum())
        if not ok.any():
            out.stop_reason = "minimum support"
            break
        score, caught, stop = _greedy_scores(criterion, C, N)
        order = np.flatnonzero(ok)
        best = order[np.lexsort((order, caught[order], score[order]))[0]]
        if score[best] >= stop:
            out.stop_reason = "no improvement"
            break
        out.selected.append((int(best), tuple(float(c) for c in C[:, best])))
        stats.remove(best)
        used[best] = True
    out.default_counts = stats.remaining()
    return out


def _greedy_scores(criterion: str, C: np.ndarray, N: np.ndarray):
    """(score of each candidate, its caught side's score, the score of stopping): lower is better.

    ``C`` (K, candidates) are the caught records of each class, ``N`` (K,) the remaining ones.
    """
    left, nothing = N[:, None] - C, np.zeros_like(N)
    if criterion == "errors":
        return split_errors(C, left), side_errors(C), float(side_errors(N))
    return (np.round(split_gini(C, left), 12), np.round(split_gini(C, 0.0), 12),
            float(np.round(split_gini(N, nothing), 12)))
