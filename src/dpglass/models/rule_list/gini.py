"""Paper 001's DP rule list (the Gini mechanisms), spent release by release through its plan.

The learner walks the plan (:class:`~dpglass.models.rule_list.gini_plan.GiniWalk`): before each
release it asks the plan which step comes next (a function of the public
parameters and of the values released so far), follows the plan with the
ledger and releases through :meth:`~dpglass.privacy.ledger.PrivacyLedger.release`.
What the steps are and why they are private: docs/privacy.md, "DP greedy
rule lists".
"""

from __future__ import annotations

import numpy as np

from dpglass.models.rule_list.candidates import CandidateSet, CountCache, PartCounts
from dpglass.models.rule_list.gini_plan import GiniListConfig, GiniWalk
from dpglass.models.rule_list.selection import select_next_rule
from dpglass.models.rule_list.rules import RuleListRelease
from dpglass.privacy.ledger import PrivacyLedger

__all__ = ["fit_gini_rule_list"]


def fit_gini_rule_list(X, y, *, candidates: CandidateSet, cfg: GiniListConfig, rng: np.random.Generator,
                       cache: CountCache | None = None) -> RuleListRelease:
    """The Gini rule list of ``cfg``; returns a :class:`RuleListRelease` with its remaining counts and ledger.

    ``cache`` (optional) is a :class:`CountCache` of this ``(X, y)`` and
    ``candidates``; the output for a given ``rng`` is the same without it.
    """
    ledger = PrivacyLedger(epsilon=cfg.epsilon, delta=cfg.delta, accountant=cfg.budget[2])
    if cache is None:
        cache = PartCounts(X, y, candidates, cfg.n_classes)  # on the parts, where they live
    removed: list[int] = []
    cells: list = []  # the exact records of each class each selected rule catches
    used = np.zeros(len(candidates), dtype=bool)
    out = RuleListRelease(ledger=ledger)
    out.remaining_counts, caught = [], None
    walk = GiniWalk(cfg, len(candidates))
    while walk.next != "done":
        step, kind = walk.steps[-1], walk.next
        ledger.follow(walk.steps)
        if kind == "count":
            value = ledger.release(step, int(sum(cache.remaining(tuple(removed)))), rng)
            out.remaining_counts.append(value)
        elif kind == "select":
            cand, caught = select_next_rule(cache, removed, used, out.remaining_counts[-1], rng, ledger, step)
            value = cand is not None
            if value:
                cells.append(caught)
        elif kind == "rule counts":  # variant="paper": each rule's counts when it is selected
            noisy = ledger.release(step, caught, rng)
            out.selected.append((removed[-1], tuple(float(v) for v in noisy)))
            value = None
        else:
            value = _release_final(out, step, ledger, cells, removed, cache, cfg.table, rng)
        walk.advance(value)
    out.stop_reason = walk.stop
    return out


def _release_final(out: RuleListRelease, step, ledger, cells: list, removed: list, cache, table: bool, rng):
    """The final class counts: every cell's as one table, or (``variant="paper"``) the default rule's pair."""
    cells = [*cells, cache.remaining(tuple(removed))]
    if not table:
        noisy = ledger.release(step, cells[-1], rng)
        out.default_counts = tuple(float(v) for v in noisy)
        return None
    noisy = ledger.release(step, cells, rng)
    out.selected = [(cand, tuple(noisy[i])) for i, cand in enumerate(removed)]
    out.default_counts = tuple(noisy[-1])
    return None
