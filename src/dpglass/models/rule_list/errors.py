"""The ``errors-pf`` DP rule list: greedy on training errors, counts released once.

Why (issue 12, docs/results/rule-lists/report.md, "Adult's 117 columns"): a
rule list predicts the records a rule catches once and for all, and refines
only the rest.  Paper 001's criterion, the weighted Gini impurity of the
split, values the purity of both sides alike, so on Adult's 117 columns its
first rule catches a half-positive group (married with at least a high-school
education) because that leaves the rest pure; the list then predicts the
majority class for almost everyone (test accuracy 0.771, the majority's
0.764).  Scoring a candidate by the training errors the list would make if it
ended with that rule (caught and remaining records each predicted by their
majority) picks rules whose caught side is worth predicting.

The learner (docs/privacy.md, "errors-pf"):

1. K = ``max_length`` selections, each permute-and-flip with budget
   ``epsilon_sel = (1 - COUNT_SHARE) * epsilon / K`` over the unused
   candidates and "no rule" (:class:`~dpglass.models.rule_list.selection.ErrorsPF`:
   monotone utilities of sensitivity 1, a public stop bonus).  "No rule"
   ends the list.
2. One release of the class counts of every cell of the final list (each
   rule's caught records and the default rule's), discrete Laplace with
   all the budget left: ``epsilon - (selections made) * epsilon_sel``, at
   least ``COUNT_SHARE * epsilon``.  A record lies in exactly one cell, so
   the whole table has l1 sensitivity 1.  A list that stops early spends
   its unused selections on these counts: the ledger always totals epsilon.

No remaining counts are released and no minimum support is used, so the
learner is pure epsilon-DP and needs no delta.  It composes by basic
composition whatever ``accountant`` says (the unused budget moves to the
counts, which is proven for basic composition; a tight accountant gains
nothing on K + 1 pure releases at the default delta), and releases its
counts with discrete Laplace noise only.
"""

from __future__ import annotations

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models.rule_list.candidates import CandidateSet, CountCache, PartCounts
from dpglass.models.rule_list.selection import Certification, ErrorsPF, select_next_rule
from dpglass.models.rule_list.rules import RuleListRelease
from dpglass.privacy.accounting import compose
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.plan import Integers, PlannedRelease

__all__ = ["COUNT_SHARE", "COUNTS_RELEASE", "errors_list_budget", "errors_plan", "check_errors_params",
           "fit_errors_rule_list"]

#: The share of epsilon planned for the class counts (the selections share the rest).
#: Chosen on validation splits cut from the training parts (report, "Adult's 117 columns").
COUNT_SHARE = 0.2
#: The ledger's name for the one release of every cell's class counts.
COUNTS_RELEASE = "class counts of every rule and of the default rule"


def errors_list_budget(epsilon: float, K: int, count_share: float = COUNT_SHARE) -> float:
    """The budget of each selection, ``(1 - count_share) * epsilon / K`` (public parameters only)."""
    return (1.0 - count_share) * epsilon / K


def check_errors_params(*, min_support, confidence, variant: str, count_noise: str) -> None:
    """Refuse the options of the Gini mechanisms that ``errors-pf`` does not have (public parameters only)."""
    if min_support not in (None, 0, 0.0):
        raise InvalidParameterError(
            f"mechanism='errors-pf' has no minimum support (got min_support={min_support!r}): a rule is "
            "added only when it removes more training errors than the selection's noise could fake "
            "(docs/privacy.md, 'errors-pf'). Leave min_support=None, or choose a Gini mechanism such as "
            "mechanism='certified-pf'.")
    if confidence is not None or variant != "corrected":
        raise InvalidParameterError(
            "confidence= and variant='paper' reproduce paper 001's Gini mechanisms; mechanism='errors-pf' "
            f"has neither (got confidence={confidence!r}, variant={variant!r}).")
    if count_noise != "laplace":
        raise InvalidParameterError(
            f"mechanism='errors-pf' releases its class counts with discrete Laplace noise (got "
            f"count_noise={count_noise!r}): it composes basically, where Gaussian noise has no advantage.")


def errors_plan(epsilon: float, K: int, n_selections: int, n_rules: int, count_share: float = COUNT_SHARE,
                bonus: float = 1.0, n_classes: int = 2) -> list[PlannedRelease]:
    """The ``errors-pf`` list's releases: ``n_selections`` selections, then one table of the counts of each of
    the ``n_classes`` classes in each of the ``n_rules + 1`` cells with all that is left (public parameters,
    and the stop: released values).

    The fit follows it with ``n_selections = K`` while it selects, then again
    with the selections it made; the file verifier replays it from the file's
    ledger length and rules.
    """
    eps_sel = errors_list_budget(epsilon, K, count_share)
    selector = ErrorsPF(epsilon=eps_sel, delta=0.0, certification=Certification(), bonus=bonus, n_classes=n_classes)
    steps = [PlannedRelease(LedgerEntry(f"rule {j}: selection", **selector.entry()), selector.choose, Integers())
             for j in range(1, n_selections + 1)]
    eps_counts = epsilon - compose([s.entry for s in steps], "basic", 0.0)[0]  # all that is left (a filter)
    mech = DiscreteLaplaceMechanism(eps_counts)
    counts = LedgerEntry(COUNTS_RELEASE, "discrete laplace", epsilon=eps_counts, sensitivity=1.0, scale=mech.scale,
                         curve=mech.curve,
                         note=f"{n_rules + 1} cells x {n_classes} classes; a record lies in one cell of the released "
                              "list (l1 sensitivity 1); all the budget the selections left")
    table = PlannedRelease(counts, lambda cells, rng: mech.randomise(np.array(cells, dtype=np.int64), rng)
                           .astype(np.float64), Integers(), ("rules[*].counts", "default_rule.counts"))
    return steps + [table]


def fit_errors_rule_list(X, y, *, candidates: CandidateSet, epsilon: float, delta: float, max_length: int,
                         rng: np.random.Generator, cache: CountCache | None = None,
                         count_share: float = COUNT_SHARE, bonus: float = 1.0, n_classes: int = 2):
    """The ``errors-pf`` rule list; returns a :class:`~dpglass.models.rule_list.estimator.RuleListRelease`.

    ``y`` holds class codes 0..``n_classes`` - 1.  ``cache`` is a
    :class:`CountCache` of this ``(X, y)``, ``candidates`` and ``n_classes``
    (optional; the output for a given ``rng`` is the same without it).
    ``count_share`` and ``bonus`` (the stop bonus's multiplier) are public
    settings for experiments; the estimator uses the defaults, which the
    model-file verifier expects.  Every release goes through
    :func:`errors_plan`.
    """
    K = max_length
    plan = errors_plan(epsilon, K, K, K, count_share, bonus, n_classes)
    ledger = PrivacyLedger(epsilon=epsilon, delta=delta, accountant="basic").follow(plan)
    if cache is None:
        cache = PartCounts(X, y, candidates, n_classes)  # on the parts, where they live
    removed: list[int] = []
    cells: list[tuple] = []  # the exact records of each class each rule catches
    used = np.zeros(len(candidates), dtype=bool)
    out = RuleListRelease(ledger=ledger)
    for step in range(1, K + 1):
        cand, caught = select_next_rule(cache, removed, used, float("nan"), rng, ledger, plan[step - 1])
        if cand is None:
            out.stop_reason = "no improvement"
            break
        cells.append(caught)
    cells.append(cache.remaining(tuple(removed)))
    plan = errors_plan(epsilon, K, len(ledger), len(removed), count_share, bonus, n_classes)  # the stop is released
    noisy = ledger.follow(plan).release(plan[-1], cells, rng)
    out.selected = [(cand, tuple(noisy[i])) for i, cand in enumerate(removed)]
    out.default_counts = tuple(noisy[-1])
    return out
