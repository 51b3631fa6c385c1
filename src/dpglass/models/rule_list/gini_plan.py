"""The Gini rule lists' release plan: budget, delta parts and the releases of a run, step by step.

Paper 001's mechanisms (every ``mechanism`` but ``errors-pf``, whose plan is
:func:`dpglass.models.rule_list.errors.errors_plan`) release, step by step, a
noisy remaining count and a selection (and, with ``variant="paper"``, the
selected rule's class counts), then the class counts of the final list.
Which release comes next depends on values released earlier: the first
remaining count fixes the minimum support, a remaining count below the
support and margin stops the list, a selection of "no rule" stops it, and
certified-pf's sensitivity reads the remaining count.  :func:`gini_steps`
is that automaton over the released values: the fit follows it release by
release, and the file verifier replays it from the file's parameters, its
remaining counts and its rules (docs/privacy.md, "Release plans").

Low in the rule-list family: it imports no estimator module.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models.rule_list.errors import COUNTS_RELEASE
from dpglass.models.rule_list.selection import SELECTORS, Certification, certification_margin
from dpglass.privacy.accounting import choose_accountant, compose
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import DiscreteGaussianMechanism, DiscreteLaplaceMechanism, count_fields
from dpglass.privacy.plan import Integers, PlannedRelease

__all__ = [
    "AUTO_MARGIN", "COUNT_NOISES", "DEFAULT_RELEASE", "DeltaPlan", "GiniListConfig", "PAPER_MIN_SUPPORT",
    "class_count_mechanism", "delta_plan", "GiniWalk", "gini_steps", "one_count_table", "resolve_min_support",
    "rule_list_budget", "rule_list_plan",
]

@dataclass(frozen=True)
class DeltaPlan:
    """Which parts of a DP rule list spend delta (see docs/privacy.md).

    ``selection``: the selection itself is (epsilon, delta)-DP.
    ``certification``: the minimum-support stop certifies the remaining count
    (certified-pf's sensitivity, or a smooth sensitivity taken over datasets of
    at least Lambda records); ``charged_certification``: its failure
    probability is charged to delta (not with the paper's ``confidence``).
    ``smooth_support``: the smooth sensitivity is restricted to >= Lambda.
    """

    selection: bool
    certification: bool
    charged_certification: bool
    smooth_support: bool

    @property
    def spends_delta(self) -> bool:
        return self.selection or self.charged_certification


def delta_plan(mechanism: str, confidence, variant: str) -> DeltaPlan:
    """The :class:`DeltaPlan` of a mechanism under the given options."""
    heuristic_stop = confidence is not None
    # smooth-cauchy keeps pure DP by taking its smooth sensitivity over all
    # dataset sizes, unless it reproduces the paper (minimum support Lambda).
    paper_cauchy = mechanism == "smooth-cauchy" and (heuristic_stop or variant == "paper")
    certification = mechanism in ("certified-pf", "smooth-laplace") or paper_cauchy
    return DeltaPlan(
        selection=mechanism in ("smooth-laplace", "global-gaussian"),
        certification=certification,
        charged_certification=certification and not heuristic_stop,
        smooth_support=mechanism == "smooth-laplace" or paper_cauchy,
    )


#: lambda of the Gini mechanisms when ``min_support=None`` (paper 001's, for COMPAS and Adult).
PAPER_MIN_SUPPORT = 0.05


def resolve_min_support(mechanism: str, min_support: float | None) -> float:
    """``min_support=None``: 0.05 for the Gini mechanisms, 0 for ``errors-pf`` (which has none)."""
    if min_support is not None:
        return float(min_support)
    return 0.0 if mechanism == "errors-pf" else PAPER_MIN_SUPPORT


#: The ledger's name for the default rule's counts when each rule's are released on its own (variant="paper").
DEFAULT_RELEASE = "default rule: class counts of remaining records"


def one_count_table(variant: str) -> bool:
    """Whether the class counts are released as one table at the end (every variant but the paper's)."""
    return variant != "paper"


#: How the class counts of each rule (and of the default rule) are released.
COUNT_NOISES = ("laplace", "gaussian")


def class_count_mechanism(count_noise: str, eps_node: float, delta: float, n_releases: int):
    """The mechanism releasing class counts (l1 = l2 sensitivity 1: a record moves one cell).

    ``"laplace"``: discrete Laplace at ``eps_node``.  ``"gaussian"``: the
    discrete Gaussian with ``sigma = 1 / eps_node``, i.e. the same
    ``eps_node**2 / 2``-zCDP as a pure ``eps_node``-DP release, its ledger
    pair stated at ``delta / (4 n_releases)`` (a quarter of delta over the
    class-count releases of a full run: one table, or K + 1 pairs with
    ``variant="paper"``; only for the basic view, the tight accountants read
    the curve).
    """
    if count_noise == "gaussian":
        return DiscreteGaussianMechanism(1.0 / eps_node, delta / (4 * n_releases))
    return DiscreteLaplaceMechanism(eps_node)


def _stop_margin(eps_node: float, delta_part: float, confidence, plan: DeltaPlan) -> float:
    """T of the minimum-support stop: paper 001's Algorithm 3 heuristic, the certification margin, or 0."""
    if confidence is not None:
        return math.floor(-(math.log(2) + math.log(1 - confidence)) / eps_node) + 1
    if plan.certification:
        return certification_margin(eps_node, delta_part)
    return 0.0


@functools.lru_cache(maxsize=256)
def rule_list_budget(epsilon: float, delta: float, K: int, plan: DeltaPlan, accountant: str, mechanism: str = "",
                     count_noise: str = "laplace", *, table: bool):
    """``(epsilon per release, delta per delta-spending part, accountant used)``.

    A full run is K remaining counts, K selections and the class counts:
    one table (``table=True``, :func:`one_count_table`) or K + 1 pairs
    (``variant="paper"``), so R = 2K + 1 or 3K + 1 releases.  ``"basic"``
    (and any accountant when delta = 0): epsilon / R each, delta split
    evenly over the parts; a run that stops early gives its table all that
    is left.  ``"pld"`` / ``"rdp"``: half of delta split over the parts, and
    the largest common per-release epsilon whose composition of a full run
    (discrete-Laplace counts, the selector's own curve and delta part) is
    within ``(epsilon, delta)``; a run that stops early spends less.
    ``"auto"``: whichever of the two allows more
    (:func:`dpglass.privacy.accounting.choose_accountant`), unless that is
    no more than :data:`AUTO_MARGIN` above the basic split: then basic (with
    discrete Laplace counts), which also spends an early stop's rest.  With
    ``count_noise="gaussian"`` the class counts are discrete Gaussian
    releases (:func:`class_count_mechanism`); that needs delta > 0 and a
    tight accountant.  Depends on public parameters only (cached: sweeps
    call it per fit).
    """
    n_parts = K * (int(plan.selection) + int(plan.charged_certification))
    if count_noise == "gaussian" and (accountant == "basic" or delta <= 0):
        raise InvalidParameterError(
            "count_noise='gaussian' composes by Rényi or privacy-loss-distribution accounting and needs "
            f"delta > 0 and accountant 'auto', 'pld' or 'rdp'; got delta={delta!r}, accountant={accountant!r}. "
            "Use count_noise='laplace' for pure or basic accounting.")
    basic = epsilon / ((2 if table else 3) * K + 1), (delta / n_parts if n_parts else 0.0), "basic"
    if accountant == "basic" or delta <= 0:
        return basic
    part = delta / (2 * n_parts) if n_parts else 0.0
    full_run = rule_list_plan(K, plan, mechanism, count_noise, delta, part, table=table)
    x, used = choose_accountant(full_run, epsilon, delta, accountant)
    if accountant == "auto" and count_noise == "laplace" and x <= basic[0] * (1 + AUTO_MARGIN):
        return basic  # the tight plan buys nothing, and basic gives an early stop's rest to the table
    return x, (part if used != "basic" else basic[1]), used


#: ``accountant="auto"`` keeps basic composition unless a tight accountant lets
#: each release spend more than this fraction above the basic split (the
#: calibration's own tolerance): basic also gives the table an early stop's rest.
AUTO_MARGIN = 1e-3


def rule_list_plan(K: int, plan: DeltaPlan, mechanism: str, count_noise: str, delta: float, part: float, *,
                   table: bool):
    """The ledger entries of a full run at per-release epsilon ``x`` (a function of ``x``).

    K remaining counts (discrete Laplace), K selections with the selector's
    own curve and ``part`` of delta per delta-spending part, and the class
    counts (:func:`class_count_mechanism`): one table, or K + 1 pairs.
    """
    sel_delta = part * (int(plan.selection) + int(plan.charged_certification))
    selector = SELECTORS.get(mechanism)
    n_counts = 1 if table else K + 1

    def full_run(x):
        count = LedgerEntry("rule: remaining count", "discrete laplace", epsilon=x,
                            curve=DiscreteLaplaceMechanism(x).curve)
        cls = class_count_mechanism(count_noise, x, delta, n_counts)
        counts = LedgerEntry("rule: class counts", "counts", epsilon=cls.epsilon, delta=cls.delta, curve=cls.curve)
        sel = LedgerEntry("rule: selection", "selection", epsilon=x, delta=sel_delta,
                          curve=selector.curve_for(x) if selector else None)
        return [count] * K + [sel] * K + [counts] * n_counts

    return full_run


@dataclass(frozen=True)
class GiniListConfig:
    """A Gini rule list's public parameters, resolved as the fit uses them (delta resolved, support fraction)."""

    epsilon: float
    delta: float
    K: int
    mechanism: str
    min_support: float
    confidence: float | None
    gamma: float
    variant: str
    accountant: str
    count_noise: str
    n_classes: int = 2  # K: the class-count tables' width, and local-pf's scale (the Gini impurity's range)

    @functools.cached_property
    def plan(self) -> DeltaPlan:
        return delta_plan(self.mechanism, self.confidence, self.variant)

    @functools.cached_property
    def table(self) -> bool:
        return one_count_table(self.variant)

    @functools.cached_property
    def budget(self) -> tuple:
        """``(epsilon per release, delta per delta-spending part, accountant)``: :func:`rule_list_budget`."""
        return rule_list_budget(self.epsilon, self.delta, self.K, self.plan, self.accountant, self.mechanism,
                                self.count_noise, table=self.table)

    @functools.cached_property
    def margin(self) -> float:
        eps_node, delta_part, _ = self.budget
        return _stop_margin(eps_node, delta_part, self.confidence, self.plan)

    @functools.cached_property
    def count_mech(self) -> DiscreteLaplaceMechanism:
        return DiscreteLaplaceMechanism(self.budget[0])

    @functools.cached_property
    def class_mech(self):
        return class_count_mechanism(self.count_noise, self.budget[0], self.delta, 1 if self.table else self.K + 1)

    def selector(self, first_count: float):
        """The selection mechanism, its minimum support ``Lambda`` fixed by the first released count."""
        eps_node, delta_part, _ = self.budget
        support = max(1, math.floor(self.min_support * max(first_count, 0.0)))
        cert = Certification(margin=self.margin, support=support if self.plan.smooth_support else 1,
                             delta=delta_part if self.plan.charged_certification else 0.0,
                             heuristic_confidence=self.confidence)
        return support, SELECTORS[self.mechanism](epsilon=eps_node, delta=delta_part, certification=cert,
                                                  gamma=self.gamma, variant=self.variant, n_classes=self.n_classes)


@dataclass
class _Walk:
    """Where the automaton stands after the released values it was given."""

    step: int = 1  # the rule step under way
    n_rules: int = 0
    support: int = 0
    selector: object = None
    n_hat: float = 0.0
    next: str = "count"  # count, select, rule counts, final, done
    stop: str = "max_length"


class GiniWalk:
    """The plan walked release by release: ``steps`` holds the steps of the values released so far and the
    step that comes next (``next`` names its kind; ``"done"`` once the final counts are out); ``advance``
    takes the next released value.  The fit walks it as it releases, the verifier on the file's values."""

    def __init__(self, cfg: GiniListConfig, n_candidates: int):
        self.cfg, self.n_candidates, self._walk = cfg, n_candidates, _Walk()
        self.steps = [_step(cfg, n_candidates, self._walk, [])]

    @property
    def next(self) -> str:
        return self._walk.next

    @property
    def stop(self) -> str:
        return self._walk.stop

    def advance(self, value) -> None:
        """Take the value the step ``steps[-1]`` released (see :func:`gini_steps`), and plan the next step."""
        if self._walk.next == "done":
            raise InvalidParameterError("A value was released after the final class counts.")
        _advance(self.cfg, self._walk, value)
        if self._walk.next != "done":
            self.steps.append(_step(self.cfg, self.n_candidates, self._walk, self.steps))


def gini_steps(cfg: GiniListConfig, n_candidates: int, released: list) -> tuple[list, str, str]:
    """``(steps, next, stop)``: the plan's steps for the values ``released`` so far and the step that comes next.

    ``released`` holds, in order, one value per release: a remaining count
    (its noisy value), a selection (True when it chose a rule, False for "no
    rule"), a rule's class counts or the final counts (None).  ``steps`` has
    one more step than ``released`` unless the list is over (``next ==
    "done"``); ``next`` names that step's kind and ``stop`` the stop reason.
    """
    walk = GiniWalk(cfg, n_candidates)
    for value in released:
        walk.advance(value)
    return walk.steps, walk.next, walk.stop


def _step(cfg: GiniListConfig, n_candidates: int, walk: _Walk, steps: list) -> PlannedRelease:
    s = walk.step
    if walk.next == "count":
        mech = cfg.count_mech
        return PlannedRelease(LedgerEntry(f"rule {s}: remaining count", **count_fields(mech)),
                              lambda v, rng: float(mech.randomise(int(v), rng)), Integers(), ("remaining_counts",))
    if walk.next == "select":
        entry = walk.selector.entry(n_candidates - walk.n_rules + 1, walk.n_hat)
        return PlannedRelease(LedgerEntry(f"rule {s}: selection", **entry), walk.selector.choose, Integers())
    mech = cfg.class_mech
    if walk.next == "rule counts":
        return PlannedRelease(LedgerEntry(f"rule {s}: class counts of caught records", **count_fields(mech)),
                              lambda v, rng: mech.randomise(np.array(v), rng), Integers(), ("rules[*].counts",))
    if not cfg.table:  # variant="paper": the default rule's pair last
        return PlannedRelease(LedgerEntry(DEFAULT_RELEASE, **count_fields(mech)),
                              lambda v, rng: mech.randomise(np.array(v), rng), Integers(), ("default_rule.counts",))
    rest = cfg.budget[2] == "basic"
    if rest:  # a basic-composition filter: the table takes all the steps left
        mech = DiscreteLaplaceMechanism(cfg.epsilon - compose([p.entry for p in steps], "basic", 0.0)[0])
    rest_note = "; all the budget the steps left" if rest else ""
    entry = LedgerEntry(COUNTS_RELEASE, **count_fields(mech),
                        note=f"{walk.n_rules + 1} cells x {cfg.n_classes} classes; a record lies in one cell of the "
                             f"released list (l1 and l2 sensitivity 1){rest_note}")
    return PlannedRelease(entry, lambda cells, rng: mech.randomise(np.array(cells, dtype=np.int64), rng)
                          .astype(np.float64), Integers(), ("rules[*].counts", "default_rule.counts"))


def _advance(cfg: GiniListConfig, walk: _Walk, value) -> None:
    """The automaton's move on one released value."""
    if walk.next == "count":
        walk.n_hat = float(value)
        if walk.step == 1:  # Lambda from the first noisy count (a noisy n): n itself is private
            walk.support, walk.selector = cfg.selector(walk.n_hat)
        if walk.n_hat < walk.support + cfg.margin:
            walk.next, walk.stop = "final", "minimum support"
        else:
            walk.next = "select"
    elif walk.next == "select":
        if not value:
            walk.next, walk.stop = "final", "no improvement"
            return
        walk.n_rules += 1
        if not cfg.table:
            walk.next = "rule counts"
        else:
            walk.step += 1
            walk.next = "count" if walk.step <= cfg.K else "final"
    elif walk.next == "rule counts":
        walk.step += 1
        walk.next = "count" if walk.step <= cfg.K else "final"
    else:  # the final counts
        walk.next = "done"

