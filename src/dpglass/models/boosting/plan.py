"""The release plan of :class:`~dpglass.models.boosting.estimator.SmoothBoostClassifier` (LazyBB), from public inputs only.

The budget (public parameters only):

* each round's pure epsilon and how the rounds compose
  (:func:`round_budget`): basic or advanced composition
  (:func:`per_round_epsilon`), or the largest round epsilon whose PLD or
  Rényi composition fits ``(epsilon, delta)``;
* the committee size (:func:`resolved_rounds`, or, with ``n_rounds="auto"``
  under basic composition, :func:`auto_rounds` of a noisy count of the
  records: :func:`counts_records`).

The plan (:func:`boost_plan`; :func:`release_plan` its recorded steps, in
ledger order), each step a :class:`~dpglass.privacy.plan.PlannedRelease`:

* the count of the records when it is made (discrete Laplace, an integer),
  then the rounds, built from the released count: a plan that stops after
  the count is rebuilt from it (a data-dependent branch);
* per round: a stump, or a joint tree (one exponential-mechanism choice among
  the public candidates: :class:`~dpglass.privacy.plan.Product` of the
  features and signs or leaf labels), or a DP-TopDown tree (each split a
  choice of (leaf position, feature), then the ±1 leaf labels from Laplace
  noise on the leaf margins).

Under basic, PLD or Rényi composition every release is a step with its own
entry.  Under advanced composition the ledger holds one entry for all the
rounds (a composition result): the plan is one step, round 1's first
release, whose parts are every other release of every round, in round order;
the step's entry is checked against the budget before round 1 draws, and the
parts record nothing (docs/privacy.md, "Smooth boosting").

Nothing here depends on the data: the verifier
(:mod:`dpglass.models.boosting.verify`) rebuilds the same plan from a file's
parameters, ``n_features_in`` and ``records_estimate``.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections import Counter
from dataclasses import dataclass

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models.boosting.composition import advanced_composition_epsilon, per_round_epsilon
from dpglass.models.boosting.exact_utilities import ROUNDING_EPSILON, as_exact
from dpglass.models.boosting.weak_learners import (
    JOINT_MAX_LABELLINGS, JOINT_TREE_DEPTH, PAPER_SPLIT_SENSITIVITY_FACTOR, PAPER_STUMP_SENSITIVITY_FACTOR, SPLIT_SENSITIVITY_FACTOR,
    STUMP_SENSITIVITY_FACTOR, TREE_ERROR_SENSITIVITY, _stage_epsilon, _stump_of, leaf_margin_sensitivity, n_stumps,
    leaf_labellings, sample_joint_tree, vote_labels,
)
from dpglass.privacy.accounting import DEFAULT_DELTA, choose_accountant
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import (
    DiscreteLaplaceMechanism, ExponentialMechanism, LaplaceMechanism, count_fields,
)
from dpglass.privacy.plan import Integers, PlannedRelease, Points, Product

__all__ = [
    "BOOST_RULE", "SHORT_COMMITTEE_MIN_ROUNDS", "SHORT_COMMITTEE_RATE", "learning_rate_scale",
    "AUTO_COUNT_SHARE", "AUTO_RECORDS_PER_ROUND", "AUTO_ROUNDS", "BoostPlan", "COUNT_RELEASE", "ClassStumps",
    "advanced_composition_epsilon", "auto_rounds", "boost_plan", "counts_records", "labels_field", "learner_of",
    "per_round_epsilon", "release_plan", "resolved_rounds", "round_budget", "round_field", "round_plan",
    "round_steps",
    "split_field",
]


def round_plan(weak_learner: str, tree_nodes: int, n_rounds: int, tree_learner: str = "joint"):
    """The privacy maps of a full run at per-round epsilon ``x``: what the tight accountants calibrate.

    A stump, and a joint tree, is one exponential-mechanism selection (bounded
    range); a top-down tree of t splits is t of them at ``x / (2t)`` and the
    leaf labels (a Laplace vector: charged as pure) at ``x / 2``.  The entries
    carry the curves and epsilons of :func:`boost_plan`'s round steps (names
    and notes aside), which ``tests/test_release_plan_boosting.py`` checks.
    """

    def plan(x):
        if weak_learner == "stump" or tree_learner == "joint":
            one = [LedgerEntry("stump", "exponential", epsilon=x, curve=ExponentialMechanism(x, 1.0).curve)]
        else:
            s = x / (2 * tree_nodes)
            one = [LedgerEntry("split", "exponential", epsilon=s, curve=ExponentialMechanism(s, 1.0).curve)] * tree_nodes
            one.append(LedgerEntry("leaves", "laplace", epsilon=x / 2))
        return one * n_rounds

    return plan


@functools.lru_cache(maxsize=256)
def round_budget(epsilon: float, delta: float, n_rounds: int, weak_learner: str, tree_nodes: int,
                 accountant: str, tree_learner: str = "joint") -> tuple[float, str]:
    """``(epsilon per round, composition)`` for the accountant asked for (public parameters only).

    ``"basic"``: the better of basic and advanced composition
    (:func:`per_round_epsilon`); ``"pld"`` / ``"rdp"``: the largest round
    epsilon whose tight composition of the whole run fits ``(epsilon,
    delta)``; ``"auto"``: ``"basic"`` when delta = 0, else whichever of
    ``"pld"`` and ``"rdp"`` allows more.

    Examples
    --------
    >>> eps0, how = round_budget(1.0, 1e-5, 100, "stump", 1, "auto")
    >>> how, eps0 > per_round_epsilon(1.0, 1e-5, 100)[0] > 1.0 / 100
    ('rdp', True)
    """
    if accountant == "basic" or delta <= 0:
        return per_round_epsilon(epsilon, delta, n_rounds)
    return choose_accountant(round_plan(weak_learner, tree_nodes, n_rounds, tree_learner), epsilon, delta, accountant)


# ---------------------------------------------------------------- committee size
#: ``n_rounds="auto"``: 15 for stumps and top-down trees (the former default), 5 for joint trees, whose
#: larger candidate set needs more budget per round (chosen on a held-out quarter of Adult's training
#: part, never its test part: docs/results/boosting/trees_accuracy.md).  Public constants.
AUTO_ROUNDS = {"stump": 15, "top-down": 15, "joint": 5}
#: ``n_rounds="auto"`` under basic composition (delta = 0, the default), stumps and joint trees: this share
#: of epsilon buys a discrete-Laplace count of the records, and the rounds follow from it
#: (:func:`auto_rounds`).  n is private, and the right committee size grows with n * epsilon: 15 rounds
#: vote noise on German's 700 records at epsilon = 1 (below the majority class), one round wastes Adult.
AUTO_COUNT_SHARE = 0.02
#: Records x epsilon per round for :func:`auto_rounds`, chosen on validation parts of the shipped datasets'
#: training parts (``benchmarks/boosting_rounds.py``; the test parts were not read).  Public constants.
AUTO_RECORDS_PER_ROUND = {"stump": 400.0, "joint": 500.0}
#: ``n_rounds="auto"`` from a count that leaves one round (stumps or joint trees): its exponential mechanism draws
#: with a base measure putting this mass on the K constants (stumps: the constant stumps; joint trees: the tree
#: on features 0 with every leaf labelled c), shared evenly, and the rest on every candidate evenly: a public
#: prior, so the mechanism's privacy is the uniform one's (docs/privacy.md, "Smooth boosting", "One round").
#: Chosen on validation parts of German, german-rules and breast-cancer (``benchmarks/defaults_vs_majority.py
#: --holdout validation``); a public constant.
SINGLE_ROUND_CONSTANTS_PRIOR = 0.75
#: ``n_rounds="auto"`` stumps from a count that gives a committee of 5 to 13 rounds (n-hat epsilon from about 2,000 to
#: 6,000): the rounds reweight at this times ``learning_rate`` (issue 28: on German at epsilon = 5 the full rate
#: moved the measure onto the records a few noisy stumps got wrong, and the committee fell below the majority class).
#: Chosen on validation parts (``benchmarks/defaults_vs_majority.py --holdout validation``); public constants, and
#: the rule a function of the released count and the parameters only.
SHORT_COMMITTEE_RATE = 0.5
#: The shortest committee :data:`SHORT_COMMITTEE_RATE` applies to (3 stumps of breast-cancer at epsilon = 5 lost
#: 0.011 with it on validation parts).
SHORT_COMMITTEE_MIN_ROUNDS = 5
#: The version of the committee rules a file records as ``rule`` when :data:`SHORT_COMMITTEE_RATE` applied (absent:
#: rule 1, the full rate everywhere, which every file written before it follows).
BOOST_RULE = 2
#: The ledger's name of that count.
COUNT_RELEASE = "number of records (n_rounds='auto')"


def learner_of(weak_learner: str, tree_learner: str) -> str:
    """``"stump"``, ``"joint"`` or ``"top-down"``: the weak learner a fit runs."""
    return "stump" if weak_learner == "stump" else tree_learner


def counts_records(n_rounds, weak_learner: str, tree_learner: str, delta: float, accountant: str) -> bool:
    """Whether ``n_rounds="auto"`` resolves from a noisy count of the records (:func:`auto_rounds`).

    Only under basic composition: with a tight accountant the rounds' plan
    must be fixed before the data are touched (a plan chosen from a released
    count composes adaptively, which PLD and Rényi composition do not cover as
    used here), so ``"auto"`` keeps :data:`AUTO_ROUNDS` there.
    """
    return (n_rounds == "auto" and learner_of(weak_learner, tree_learner) in AUTO_RECORDS_PER_ROUND
            and (delta <= 0 or accountant == "basic"))


def auto_rounds(records_estimate: int, epsilon: float, weak_learner: str, tree_learner: str = "joint") -> int:
    """Rounds for a noisy record count: ``records_estimate * epsilon / AUTO_RECORDS_PER_ROUND``, odd, in [1, cap].

    ``epsilon`` is what the rounds share (the budget left after the count);
    the cap is :data:`AUTO_ROUNDS`; odd, so that the committee's vote never
    ties.  A function of released values and parameters only.

    Examples
    --------
    >>> auto_rounds(700, 0.98, "stump"), auto_rounds(5000, 0.98, "stump"), auto_rounds(30000, 0.98, "stump")
    (1, 11, 15)
    >>> auto_rounds(-3, 1.0, "tree"), auto_rounds(2000, 0.98, "tree"), auto_rounds(10**6, 1.0, "tree")
    (1, 3, 5)
    """
    learner = learner_of(weak_learner, tree_learner)
    value = float(records_estimate) * float(epsilon) / AUTO_RECORDS_PER_ROUND[learner]
    tau = int(min(max(value, 1.0), AUTO_ROUNDS[learner]))
    return tau if tau % 2 else tau - 1


def resolved_rounds(n_rounds, weak_learner: str, tree_learner: str = "joint") -> int:
    """``n_rounds`` with ``"auto"`` resolved by :data:`AUTO_ROUNDS` (parameters only, never the data).

    Examples
    --------
    >>> resolved_rounds("auto", "stump"), resolved_rounds("auto", "tree"), resolved_rounds(9, "tree")
    (15, 5, 9)
    """
    if n_rounds != "auto":
        return int(n_rounds)
    return AUTO_ROUNDS[learner_of(weak_learner, tree_learner)]


# ------------------------------------------------------------------ the plan
@dataclass(frozen=True)
class BoostPlan:
    """A fit's plan.

    ``count``: the records count's step (``n_rounds="auto"`` under basic
    composition), else None.  Until the count is released (``records_estimate``
    not given) the plan stops after it: ``n_rounds``, ``round_epsilon`` and
    ``composition`` are None and ``rounds`` is empty.  ``rounds``: per round,
    its releases in order (each a recorded step, or, under advanced
    composition, the one recorded step and its parts).  ``steps``: the
    recorded ones, in ledger order.  ``accountant``: the ledger's.
    ``n_classes``: K, the classes the hypotheses vote for (the label set is
    public: it changes the candidates, never the budget).
    """

    learner: str
    delta: float
    accountant: str
    count: PlannedRelease | None
    n_rounds: int | None
    round_epsilon: float | None
    composition: str | None
    rounds: tuple
    steps: tuple
    n_classes: int = 2
    learning_rate_scale: float = 1.0


def learning_rate_scale(counted: bool, learner: str, n_rounds: int) -> float:
    """:data:`SHORT_COMMITTEE_RATE` for a committee of stumps that a released count made short (from
    :data:`SHORT_COMMITTEE_MIN_ROUNDS` rounds to fewer than the cap), else 1.  Public: the plan's rounds and the
    parameters.

    Examples
    --------
    >>> learning_rate_scale(True, "stump", 5), learning_rate_scale(True, "stump", 15), learning_rate_scale(False, "stump", 5)
    (0.5, 1.0, 1.0)
    """
    short = counted and learner == "stump" and SHORT_COMMITTEE_MIN_ROUNDS <= int(n_rounds) < AUTO_ROUNDS["stump"]
    return SHORT_COMMITTEE_RATE if short else 1.0


def resolved_delta(params: dict) -> float:
    """The delta a fit uses: ``params["delta"]``, or the public default for None (never a function of n)."""
    return DEFAULT_DELTA if params["delta"] is None else float(params["delta"])


def boost_plan(params: dict, n_features: int, records_estimate: int | None = None, n_classes: int = 2) -> BoostPlan:
    """The plan of a fit with these parameters on ``n_features`` columns and ``n_classes`` classes (and, when the
    committee size comes from a noisy count, the released count: without it the plan stops after the count)."""
    learner = learner_of(params["weak_learner"], params["tree_learner"])
    if learner == "joint" and params["tree_nodes"] not in JOINT_TREE_DEPTH:
        raise InvalidParameterError(f"joint trees have 1 or 3 internal nodes, not {params['tree_nodes']!r}")
    if learner == "joint":
        _check_labellings(JOINT_TREE_DEPTH[params["tree_nodes"]], int(n_classes))
    delta, acct, epsilon = resolved_delta(params), params["accountant"], float(params["epsilon"])
    count = None
    if counts_records(params["n_rounds"], params["weak_learner"], params["tree_learner"], delta, acct):
        count = _count_step(epsilon)
        if records_estimate is None:
            return BoostPlan(learner, delta, "basic", count, None, None, None, (), (count,), int(n_classes))
        epsilon -= count.entry.epsilon  # the rounds share what the count left
        n_rounds = auto_rounds(records_estimate, epsilon, params["weak_learner"], params["tree_learner"])
    else:
        n_rounds = resolved_rounds(params["n_rounds"], params["weak_learner"], params["tree_learner"])
    x, composition = round_budget(epsilon, delta, n_rounds, params["weak_learner"], int(params["tree_nodes"]), acct,
                                  params["tree_learner"])
    make = _ROUND_STEPS[learner]
    rounds = [make(t, int(n_features), x, int(params["tree_nodes"]), params["variant"] == "paper", int(n_classes))
              for t in range(n_rounds)]
    if count is not None and n_rounds == 1:  # the committee is one stump or one joint tree
        rounds = [make(0, int(n_features), x, int(params["tree_nodes"]), params["variant"] == "paper",
                       int(n_classes), SINGLE_ROUND_CONSTANTS_PRIOR)]
    if composition == "advanced":
        rounds = _composed(rounds, params["weak_learner"], x, epsilon, delta)
        recorded = (rounds[0][0],)
    else:
        rounds = _noted(rounds, composition, x)
        recorded = tuple(s for steps in rounds for s in steps)
    accountant = composition if composition in ("pld", "rdp") else "basic"
    return BoostPlan(learner, delta, accountant, count, n_rounds, x, composition, tuple(rounds),
                     (() if count is None else (count,)) + recorded, int(n_classes),
                     learning_rate_scale(count is not None, learner, n_rounds))


def _check_labellings(depth: int, n_classes: int) -> None:
    """The joint learner draws among the K**(2**depth) labellings of a tree's leaves: at most JOINT_MAX_LABELLINGS
    (public: the depth and the label set)."""
    leaves = 2**depth
    if n_classes**leaves > JOINT_MAX_LABELLINGS:
        raise InvalidParameterError(
            f"SmoothBoostClassifier's joint trees of depth {depth} label each of their {leaves} leaves with one of "
            f"{n_classes} classes: {n_classes}**{leaves} labellings, more than the {JOINT_MAX_LABELLINGS} they draw "
            "among (at most 32 classes at depth 2). Use tree_nodes=1, tree_learner='top-down' or "
            "weak_learner='stump'.")


def release_plan(params: dict, n_features: int, records_estimate: int | None = None, n_classes: int = 2) -> list:
    """SmoothBoostClassifier's recorded releases, in order, from its public parameters and label set (and the
    released count of records, where the committee size comes from one): the fit spends through them and
    ``load_model`` replays them (docs/privacy.md, "Smooth boosting")."""
    return list(boost_plan(params, n_features, records_estimate, n_classes).steps)


def round_field(t: int) -> str:
    """The file's hypothesis of round ``t + 1`` (a stump's [feature, sign], a joint tree)."""
    return f"estimators[{t}]"


def split_field(t: int, s: int) -> str:
    """Split ``s + 1`` of round ``t + 1``'s top-down tree in the verifier's view of a file (no dot: one key)."""
    return f"estimators[{t}] split {s + 1}"


def labels_field(t: int) -> str:
    """The leaf labels of round ``t + 1``'s top-down tree in the verifier's view, in the fit's leaf order."""
    return f"estimators[{t}] leaf labels"


# ------------------------------------------------------------------ the steps
def _count_step(epsilon: float) -> PlannedRelease:
    """``n + Z``, ``Z`` discrete Laplace of scale ``1 / (AUTO_COUNT_SHARE epsilon)``: an integer."""
    mech = DiscreteLaplaceMechanism(epsilon * AUTO_COUNT_SHARE)
    entry = LedgerEntry(
        release=COUNT_RELEASE, **count_fields(mech),
        note=f"a count has sensitivity 1 under add/remove; {AUTO_COUNT_SHARE:g} of epsilon; the rounds are "
             "auto_rounds(estimate, the rest of epsilon): post-processing; basic composition with the rounds")
    return PlannedRelease(entry, functools.partial(_noisy_count, mech), Integers(), ("records_estimate",))


def _noisy_count(mech, n, rng) -> int:
    return int(mech.randomise(int(n), rng))


@dataclass(frozen=True)
class ClassStumps:
    """The public stumps of K > 2 classes: ``(feature, hi, lo)`` with ``hi != lo`` class codes, or a constant
    ``(-1, c, c)`` (the ``d K (K - 1) + K`` candidates of DP-1R).  Two classes use :class:`Product`."""

    n_features: int
    n_classes: int

    def problem(self, values) -> str | None:
        for v in values:
            if not self._contains(v):
                return f"holds {v!r}, not one of the {self}"
        return None

    def _contains(self, v) -> bool:
        try:
            t = tuple(v)
        except TypeError:
            return False
        if len(t) != 3 or not all(isinstance(c, (int, np.integer)) and not isinstance(c, bool) for c in t):
            return False
        f, hi, lo = (int(c) for c in t)
        classes = range(self.n_classes)
        return hi in classes and lo in classes and ((f == -1 and hi == lo) or (0 <= f < self.n_features and hi != lo))

    def __str__(self) -> str:
        return (f"{n_stumps(self.n_features, self.n_classes)} public stumps (feature, class where it is 1, another "
                "where it is 0; or -1 and a constant class twice)")


def _stump_steps(t: int, d: int, x: float, tree_nodes: int, paper: bool, n_classes: int = 2,
                 constants_prior: float | None = None) -> tuple:
    """DP-1R: one exponential-mechanism choice among the 2d + 2 signed literals and constants (d K (K - 1) + K
    stumps of K classes); with ``constants_prior`` w, under the base measure giving the K constants w (the
    feature stumps 1 - w), each evenly (:func:`_prior_offsets`)."""
    sensitivity = PAPER_STUMP_SENSITIVITY_FACTOR if paper else STUMP_SENSITIVITY_FACTOR
    mech = ExponentialMechanism(x, sensitivity)
    select = ExponentialMechanism(x - ROUNDING_EPSILON, sensitivity)  # pays the utilities' one rounding
    n = n_stumps(d, n_classes)
    what = (f"{n} literals and constants" if n_classes == 2 else
            f"{n} stumps of {n_classes} classes (a feature, the class it votes for where it is 1 and another where "
            "it is 0; or a constant class)")
    if constants_prior is not None:
        what += (f", under a public base measure: {constants_prior:g} on the {n_classes} constants, "
                 f"{1 - constants_prior:g} on the rest, each evenly (one round)")
    entry = LedgerEntry(
        release=f"round {t + 1}: stump", mechanism="exponential", epsilon=x, sensitivity=sensitivity,
        curve=mech.curve,
        note=(f"DP-1R over {what}; utility -mu-weighted error under a "
              f"kappa-dense measure, sensitivity {sensitivity:g}"
              + (" (paper 002's calibration, Thm 7)" if paper else " (proven, n private)")))
    domain = (Product((tuple(range(-1, d)), (-1, 1)), "public stumps (feature or -1 for a constant, sign)")
              if n_classes == 2 else ClassStumps(d, n_classes))
    noise = (functools.partial(_stump_noise, select, d, n_classes) if constants_prior is None else
             functools.partial(_prior_stump_noise, select, d, n_classes, _prior_offsets(select, n, n_classes,
                                                                                       constants_prior)))
    return (PlannedRelease(entry, noise, domain, (round_field(t),)),)


def _stump_noise(mech, d: int, n_classes: int, utilities, rng) -> list:
    """One draw on the utilities (exact, or floats taken exactly), centred, floored and rounded once
    (:meth:`~dpglass.models.boosting.exact_utilities.ExactUtilities.centred`)."""
    return [_stump_of(int(mech.select(as_exact(utilities).centred(mech._rate), rng)), d, n_classes).released]


def _prior_offsets(mech, n: int, n_classes: int, w: float) -> np.ndarray:
    """``log(n pi_h) / rate`` for the base measure ``pi`` of :func:`_stump_steps` (constants last): selecting with
    probability ``pi_h exp(rate u_h) / Z`` is selecting on ``u_h`` plus these public offsets."""
    prior = np.full(n, (1.0 - w) / (n - n_classes))
    prior[n - n_classes:] = w / n_classes
    return np.log(prior * n) / mech._rate


def _prior_stump_noise(mech, d: int, n_classes: int, offsets, utilities, rng) -> list:
    """As :func:`_stump_noise` on the utilities plus the base measure's public offsets (added exactly)."""
    u = as_exact(utilities).plus(offsets).centred(mech._rate)
    return [_stump_of(int(mech.select(u, rng)), d, n_classes).released]


def _joint_steps(t: int, d: int, x: float, tree_nodes: int, paper: bool, n_classes: int = 2,
                 constants_prior: float | None = None) -> tuple:
    """A whole complete tree, its split features and leaf labels, by one exponential mechanism (a chain); with
    ``constants_prior`` under a base measure favouring the constant trees (:func:`_prior_joint_noise`)."""
    depth = JOINT_TREE_DEPTH[tree_nodes]
    labelling = "every leaf labelling" if n_classes == 2 else f"every labelling of its leaves by {n_classes} classes"
    if constants_prior is not None:
        labelling += (f", under a public base measure: {constants_prior:g} more on the {n_classes} trees on "
                      "features 0 with one label on every leaf, shared evenly, the rest evenly (one round; two "
                      "more stages in the chain)")
    entry = LedgerEntry(
        release=f"round {t + 1}: tree (splits and leaf labels)", mechanism="exponential", epsilon=x,
        sensitivity=TREE_ERROR_SENSITIVITY, curve=ExponentialMechanism(x, TREE_ERROR_SENSITIVITY).curve,
        note=(f"one exponential mechanism over every complete depth-{depth} tree on the schema's features with "
              f"{labelling}; utility -mu-weighted error (sensitivity 1, n private), sampled exactly as a "
              f"chain of {depth + 1} exponential mechanisms at one rate"))
    internal = 2**depth - 1
    domain = Product((tuple(range(d)),) * internal + (vote_labels(n_classes),) * (internal + 1),
                     f"public depth-{depth} trees (split features, then leaf labels)")
    if constants_prior is None:
        stage = ExponentialMechanism(_stage_epsilon(x, depth), TREE_ERROR_SENSITIVITY)
        return (PlannedRelease(entry, functools.partial(_joint_noise, stage, depth), domain, (round_field(t),)),)
    # the longest path of the chain has depth + 2 stages (the group, then the tree's depth + 1): its slack
    stage = ExponentialMechanism(_stage_epsilon(x, depth + 1), TREE_ERROR_SENSITIVITY)
    noise = functools.partial(_prior_joint_noise, stage, depth, d, int(n_classes), float(constants_prior))
    return (PlannedRelease(entry, noise, domain, (round_field(t),)),)


def _joint_noise(stage, depth: int, utilities, rng) -> list:
    """``utilities(depth, rate)``: the whole-tree utilities at the chain's rate; the chain draws one tree."""
    features, labels = sample_joint_tree(stage, utilities(depth, stage._rate), rng)
    return [(*features, *labels)]


def _prior_joint_noise(stage, depth: int, d: int, n_classes: int, w: float, utilities, rng) -> list:
    """The whole-tree mechanism under the base measure ``pi = w/K`` on each constant tree ``c`` (features 0, every
    leaf c) plus ``(1 - w)/N`` on each of the N trees, sampled exactly as a chain: first the group (the constant
    trees, weight ``(w/K) sum_c exp(r U'_c)``; every tree, ``((1 - w)/N) sum_h exp(r U'(h))``, the chain's own
    partition function), then the class c or the usual chain.  Each stage's utility is a log-sum-exp over
    sensitivity-1 utilities divided by the rate, plus public constants (docs/privacy.md, "One round")."""
    ut = utilities(depth, stage._rate)
    r, classes = stage._rate, vote_labels(n_classes)
    labellings = leaf_labellings(n_classes)
    same = [labellings.index((c, c)) for c in classes]  # a branch with both leaves c
    if depth == 1:
        constant = np.array([ut._floored(ut.UB[0, i]) for i in same])
    else:  # the left branch's (c, c) plus the right branch's: minus the mass of the other classes, floored
        constant = np.array([ut._floored(ut.UB0[0, 0, i] + ut.UB1[0, 0, i]) for i in same])
    n_trees = d ** (2**depth - 1) * n_classes ** (2**depth)
    group = np.array([(_log_sum_exp(r * constant) + math.log(w / n_classes)) / r,
                      (_log_sum_exp(r * ut.root()) + math.log((1.0 - w) / n_trees)) / r])
    if int(stage.select(group, rng)) == 0:
        c = classes[int(stage.select(constant, rng))]
        return [(0,) * (2**depth - 1) + (c,) * 2**depth]
    features, labels = sample_joint_tree(stage, ut, rng)
    return [(*features, *labels)]


def _log_sum_exp(v: np.ndarray) -> float:
    top = float(np.max(v))
    return top + math.log(float(np.sum(np.exp(v - top))))


def _top_down_steps(t: int, d: int, x: float, tree_nodes: int, paper: bool, n_classes: int = 2) -> tuple:
    """DP-TopDown: ``tree_nodes`` (leaf position, feature) choices at ``x / (2 tree_nodes)`` each, then the leaf
    labels at ``x / 2`` (from the leaf margins plus Laplace noise: their signs for two classes)."""
    eps_split = x / (2.0 * tree_nodes)
    sensitivity = PAPER_SPLIT_SENSITIVITY_FACTOR if paper else SPLIT_SENSITIVITY_FACTOR
    select = ExponentialMechanism(eps_split, sensitivity)
    features = tuple(range(d))
    bound = "sum_l w_l 4q_l(1-q_l)" if n_classes == 2 else "sum_l 2 w_l (1 - sum_k q_lk^2)"
    steps = []
    for s in range(tree_nodes):
        entry = LedgerEntry(
            release=f"round {t + 1}: tree split (leaf, feature)", mechanism="exponential", epsilon=eps_split,
            sensitivity=sensitivity, guarantee="paper-claim" if paper else "proven", curve=select.curve,
            note=(f"DP-TopDown split {s + 1}/{tree_nodes} among {(s + 1) * d} (leaf, feature) pairs; "
                  f"utility: improvement of the Gini bound {bound}"))
        domain = Product((tuple(range(s + 1)), features), f"public (leaf position, feature) pairs of split {s + 1}")
        steps.append(PlannedRelease(entry, functools.partial(_split_noise, select, d), domain, (split_field(t, s),)))
    n_leaves = tree_nodes + 1
    width = n_classes - 1  # margins per leaf
    laplace = LaplaceMechanism(x / 2.0, leaf_margin_sensitivity(n_classes))
    how = (f"sign of each of the {n_leaves} leaf margins a_l - b_l plus Laplace noise on a public "
           "grid; the vector of margins has l1 sensitivity 2" if n_classes == 2 else
           f"each of the {n_leaves} leaves gets the class k of the largest of its {width} margins a_lk - a_l0 plus "
           "Laplace noise on a public grid (class 0 when none is positive); the vector of margins has l1 "
           f"sensitivity {leaf_margin_sensitivity(n_classes):g}")
    entry = LedgerEntry(
        release=f"round {t + 1}: tree leaf labels", mechanism="laplace", epsilon=x / 2.0,
        sensitivity=leaf_margin_sensitivity(n_classes), scale=laplace.scale_for(n_leaves * width), note=how)
    steps.append(PlannedRelease(entry, functools.partial(_label_noise, laplace, n_leaves, n_classes),
                                Points(vote_labels(n_classes)), (labels_field(t),)))
    return tuple(steps)


def _split_noise(select, d: int, utilities, rng) -> list:
    index = int(select.select(utilities, rng))
    return [(index // d, index % d)]


def _label_noise(laplace, n_leaves: int, n_classes: int, margins, rng) -> list:
    """One Laplace draw per leaf margin (the vector has l1 sensitivity 2 (K - 1)); each leaf's label is the class
    of its largest noisy margin, class 0 when none is positive (two classes: the sign of its one margin)."""
    width = n_classes - 1
    if len(margins) != n_leaves * width:  # a fit that asks for other releases than its plan's
        raise RuntimeError(f"The plan labels {n_leaves} leaves of {n_classes} classes; got {len(margins)} margins.")
    noisy = np.atleast_1d(np.asarray(laplace.randomise(margins, rng), dtype=np.float64)).reshape(n_leaves, width)
    labels = vote_labels(n_classes)
    out = []
    for row in noisy:
        best, top = 0, 0.0
        for k, v in enumerate(row, start=1):
            if v > top:
                best, top = k, v
        out.append(labels[best])
    return out


_ROUND_STEPS = {"stump": _stump_steps, "joint": _joint_steps, "top-down": _top_down_steps}


def round_steps(learner: str, n_features: int, epsilon: float, tree_nodes: int = 3, paper: bool = False,
                t: int = 0, n_classes: int = 2) -> tuple:
    """The steps of round ``t + 1`` of ``learner`` ("stump", "joint", "top-down") at round epsilon ``epsilon``,
    before the rounds' composition is noted: a weak learner run outside a fit (tests, research code) releases
    through them with ``release=lambda step, exact: step.noise(exact, rng)``."""
    return _ROUND_STEPS[learner](t, int(n_features), float(epsilon), int(tree_nodes), paper, int(n_classes))


def _noted(rounds: list, composition: str, x: float) -> list:
    """Basic, PLD or Rényi composition: every release its own entry, its note saying how the rounds compose."""
    how = {"basic": "basic composition", "pld": "PLD composition (dp-accounting)",
           "rdp": "Rényi composition (exponential mechanism as bounded range)"}[composition]
    n = len(rounds)
    tail = f"; {how} over {n} round{'' if n == 1 else 's'} of epsilon_round={x:.6g}"

    def noted(s):
        return dataclasses.replace(s, entry=dataclasses.replace(s.entry, note=(s.entry.note + tail).lstrip("; ")))

    return [tuple(noted(s) for s in steps) for steps in rounds]


def _composed(rounds: list, weak_learner: str, x: float, epsilon: float, delta: float) -> list:
    """Advanced composition: one entry for every round (a composition result).  Round 1's first release is the
    recorded step; every other release of every round is one of its parts, with that entry."""
    flat = [s for steps in rounds for s in steps]
    n, first = len(rounds), flat[0].entry
    kinds = Counter(s.entry.mechanism for s in flat)
    entry = LedgerEntry(
        release=f"{n} boosting rounds ({weak_learner} weak learner)",
        mechanism="advanced-composition(" + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())) + ")",
        epsilon=advanced_composition_epsilon(x, n, delta), delta=delta,
        guarantee="paper-claim" if any(s.entry.guarantee == "paper-claim" for s in flat) else "proven",
        note=(f"advanced composition (Dwork-Rothblum-Vadhan 2010, Dwork-Roth Thm 3.20) of {n} "
              f"rounds, each a pure epsilon_round={x:.6g}-DP weak learner (basic composition "
              f"inside a round: {first.mechanism} with sensitivity {first.sensitivity:.6g} first); "
              f"delta'={delta:g}; basic composition would give epsilon_round={epsilon / n:.6g}"))
    parts = tuple(PlannedRelease(entry, s.noise, s.domain, s.fields) for s in flat[1:])
    head = PlannedRelease(entry, flat[0].noise, flat[0].domain, flat[0].fields, parts)
    out, i = [], 0
    for steps in rounds:
        out.append(tuple(head if i + k == 0 else parts[i + k - 1] for k in range(len(steps))))
        i += len(steps)
    return out
