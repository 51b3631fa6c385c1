"""Differentially private smooth boosting (LazyBB, paper 002).

:class:`SmoothBoostClassifier` is LazyBB (paper 002, Algorithm 1; Bun,
Carmosino and Sorrell 2020): start from the uniform measure of density
``kappa``; each round normalise the measure, call a differentially private weak
learner on it, add the hypothesis to the committee, reweight every record by
``kappa * exp(-lambda * margin)`` and Bregman-project back onto the measures of
density at least ``kappa`` (:func:`bregman_projection`).  The model is the
majority vote of the committee.

Weak learners (``dpglass.models._weak_learners``): DP 1-Rules (Algorithm 3,
exponential mechanism over all literals and the two constants) and trees:
by default (``tree_learner="joint"``) one exponential mechanism over every
complete tree of depth 1 or 2 with its leaf labels, on minus its weighted
error (the 1-Rule's utility and sensitivity, for a larger class); paper 002's
DP-TopDown (Algorithm 2) with ``tree_learner="top-down"``.

Privacy in one paragraph (the proof is in ``docs/privacy.md``, section "Smooth
boosting"): given the hypotheses released so far, the projected measure mu
(entries in [0, 1], total mass at least ``kappa n``) moves by at most 2 in l1,
and any mu-weighted error by at most 1, when one record is added or removed,
with n itself private (it is used only inside the projection).  The weak
learners work on the unnormalised measure, so every calibration is a constant
and nothing published depends on n.  Each round is ``epsilon_round``-DP given
the past, and the rounds compose: basically
(``epsilon_round = epsilon / n_rounds``, pure epsilon) or, when ``delta > 0``
and it gives more per round, by the advanced composition theorem of Dwork,
Rothblum and Vadhan (2010).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from collections import Counter
from dataclasses import dataclass

import numpy as np

from dpglass._validation import Interval
from dpglass.aggregates import pattern_table
from dpglass.exceptions import InvalidParameterError
from dpglass.models._base import DELTA_OR_NONE, EPSILON, CLASSES, RANDOM_STATE, BinaryClassifierBase
from dpglass.models._weak_learners import (
    JOINT_TREE_DEPTH, FeatureMatrix, Stump, Tree, dp_joint_tree, dp_one_rule, dp_top_down,
)
from dpglass.privacy.accounting import CHOICES as ACCOUNTANT_CHOICES, choose_accountant
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger, ledger_of
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism, count_fields
from dpglass.privacy.rng import check_random_state, is_replayable

__all__ = [
    "AUTO_ROUNDS",
    "SmoothBoostClassifier",
    "SmoothBoostRelease",
    "bregman_projection",
    "advanced_composition_epsilon",
    "per_round_epsilon",
    "round_budget",
    "resolved_rounds",
    "auto_rounds",
    "counts_records",
    "round_plan",
    "smooth_boost",
    "smooth_weighting",
]


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


# ----------------------------------------------------------------- composition
def advanced_composition_epsilon(epsilon_0: float, k: int, delta: float) -> float:
    """Advanced composition (Dwork, Rothblum, Vadhan 2010; Dwork & Roth 2014, Thm 3.20).

    ``k`` adaptively chosen ``epsilon_0``-DP mechanisms are together
    ``(eps, delta)``-DP with ``eps = sqrt(2 k ln(1/delta)) epsilon_0 + k epsilon_0 (e^epsilon_0 - 1)``.

    Examples
    --------
    >>> round(advanced_composition_epsilon(0.01, 100, 1e-5), 4)
    0.4899
    """
    return math.sqrt(2.0 * k * math.log(1.0 / delta)) * epsilon_0 + k * epsilon_0 * math.expm1(epsilon_0)


def per_round_epsilon(epsilon: float, delta: float, k: int) -> tuple[float, str]:
    """The largest per-round pure epsilon whose ``k``-fold composition fits ``(epsilon, delta)``.

    Returns ``(epsilon_0, composition)`` with ``composition`` ``"basic"``
    (``epsilon / k``, no delta spent) or ``"advanced"`` (bisection on
    :func:`advanced_composition_epsilon`, never above ``epsilon``).

    Examples
    --------
    >>> per_round_epsilon(1.0, 0.0, 10)
    (0.1, 'basic')
    >>> eps0, how = per_round_epsilon(1.0, 1e-5, 1000)
    >>> how, round(eps0, 5), advanced_composition_epsilon(eps0, 1000, 1e-5) <= 1.0
    ('advanced', 0.00633, True)
    """
    basic = epsilon / k
    if delta <= 0:
        return basic, "basic"
    lo, hi = 0.0, epsilon  # advanced(eps0) >= k*eps0^2 + ... is increasing; advanced(epsilon) > epsilon
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if advanced_composition_epsilon(mid, k, delta) <= epsilon:
            lo = mid
        else:
            hi = mid
    if lo > basic:
        return lo, "advanced"
    return basic, "basic"


def round_plan(weak_learner: str, tree_nodes: int, n_rounds: int, tree_learner: str = "joint"):
    """The ledger entries of a full run at per-round epsilon ``x``, with each release's curve.

    A stump, and a joint tree, is one exponential-mechanism selection (bounded
    range); a top-down tree of t splits is t of them at ``x / (2t)`` and the
    leaf labels (a Laplace vector: charged as pure) at ``x / 2``.
    """
    from dpglass.privacy.mechanisms import ExponentialMechanism

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
#: The ledger's name of that count.
COUNT_RELEASE = "number of records (n_rounds='auto')"


def counts_records(n_rounds, weak_learner: str, tree_learner: str, delta: float, accountant: str) -> bool:
    """Whether ``n_rounds="auto"`` resolves from a noisy count of the records (:func:`auto_rounds`).

    Only under basic composition: with a tight accountant the rounds' plan
    must be fixed before the data are touched (a plan chosen from a released
    count composes adaptively, which PLD and Rényi composition do not cover as
    used here), so ``"auto"`` keeps :data:`AUTO_ROUNDS` there.
    """
    learner = "stump" if weak_learner == "stump" else tree_learner
    return (n_rounds == "auto" and learner in AUTO_RECORDS_PER_ROUND
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
    learner = "stump" if weak_learner == "stump" else tree_learner
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
    return AUTO_ROUNDS["stump" if weak_learner == "stump" else tree_learner]


def _count_records(n: int, epsilon: float, rng) -> tuple[LedgerEntry, int]:
    """The ledger entry and the value of ``n + Z``, ``Z`` discrete Laplace of scale ``1 / (AUTO_COUNT_SHARE epsilon)``."""
    mech = DiscreteLaplaceMechanism(epsilon * AUTO_COUNT_SHARE)
    estimate = int(mech.randomise(int(n), rng))
    entry = LedgerEntry(
        release=COUNT_RELEASE, **count_fields(mech),
        note=f"a count has sensitivity 1 under add/remove; {AUTO_COUNT_SHARE:g} of epsilon; the rounds are "
             "auto_rounds(estimate, the rest of epsilon): post-processing; basic composition with the rounds")
    return entry, estimate


# ---------------------------------------------------------------- pure release
@dataclass(frozen=True)
class SmoothBoostRelease:
    """What :func:`smooth_boost` releases.

    Attributes
    ----------
    hypotheses : tuple of Stump or Tree
        The committee, in round order.
    ledger : PrivacyLedger
    round_epsilon : float
        Each round's (pure) budget.
    composition : str
        ``"basic"``, ``"advanced"``, ``"pld"`` or ``"rdp"`` (:func:`round_budget`).
    """

    hypotheses: tuple
    ledger: PrivacyLedger
    round_epsilon: float
    composition: str


def smooth_boost(
    X01,
    y01,
    *,
    epsilon: float,
    delta: float,
    weak_learner: str,
    n_rounds: int,
    learning_rate: float,
    density: float,
    tree_nodes: int,
    rng: np.random.Generator,
    variant: str = "corrected",
    accountant: str = "auto",
    tree_learner: str = "joint",
) -> SmoothBoostRelease:
    """LazyBB (paper 002, Algorithm 1) with a DP weak learner: the private computation.

    A pure function of the data, the parameters and ``rng``.  ``n = len(X01)``
    is private: it is used only inside the projection's mass target
    ``kappa n``, which the proof covers (docs/privacy.md, Lemma S').

    Parameters
    ----------
    X01 : ndarray of 0/1, shape (n, d), or a :class:`~dpglass.aggregates.PatternTable` (then y01 is ignored)
    y01 : ndarray of 0/1, shape (n,)
    epsilon, delta : float
        Total budget; ``delta > 0`` lets the rounds compose by ``accountant`` (Rényi, PLD, or advanced composition).
    weak_learner : {"stump", "tree"}
    n_rounds : int
        tau, the committee size.
    learning_rate : float
        lambda.
    density : float
        kappa.
    tree_nodes : int
        Internal nodes of each tree (``weak_learner="tree"``; 1 or 3 for
        ``tree_learner="joint"``: depth 1 or 2).
    rng : numpy.random.Generator
    variant : {"corrected", "paper"}
        ``"paper"``: paper 002's calibrations (stumps: Theorem 7's eta,
        proven but with half the utility; top-down trees: Lemma 15's split
        sensitivity, a paper-claim).
    tree_learner : {"joint", "top-down"}
        ``"joint"``: :func:`~dpglass.models._weak_learners.dp_joint_tree`;
        ``"top-down"``: paper 002's DP-TopDown
        (:func:`~dpglass.models._weak_learners.dp_top_down`).

    Returns
    -------
    SmoothBoostRelease
    """
    # the seam (dpglass.aggregates): records grouped by (row, label), whose smooth weight they share
    table = pattern_table(X01, y01)
    n = table.n_records
    target = density * n  # private: used only inside the projection (Lemma S')
    paper = variant == "paper"
    y01, counts = table.labels, table.counts.astype(np.float64)
    y_sign = 2 * y01.astype(np.int8) - 1
    F = FeatureMatrix(table)
    del table  # F keeps the packed rows; the int64 counts are not needed any more

    eps_round, composition = round_budget(epsilon, delta, n_rounds, weak_learner, tree_nodes, accountant,
                                          tree_learner)
    ledger = PrivacyLedger(epsilon=epsilon, delta=delta,
                           accountant=composition if composition in ("pld", "rdp") else "basic")
    margin = np.zeros(F.n_samples, dtype=np.int64)  # sigma_t(i) = y_i * sum_j h_j(x_i), in [-t, t]
    hypotheses = []
    round_entries = []
    for t in range(n_rounds):
        # mu of each entry's records times their number: the weak learners' sums run over entries
        p = None  # the last round's weights are not needed: free them first
        p = smooth_weighting(margin, t, density=density, learning_rate=learning_rate, target=target, counts=counts)
        p *= counts
        if weak_learner == "stump":
            h, entries, pred = dp_one_rule(F, y01, p, epsilon=eps_round, paper=paper, rng=rng)
        elif tree_learner == "joint":
            h, entries, pred = dp_joint_tree(F, y01, p, epsilon=eps_round, n_nodes=tree_nodes, rng=rng)
        else:
            h, entries, pred = dp_top_down(F, y01, p, epsilon=eps_round, n_nodes=tree_nodes, paper=paper, rng=rng)
        hypotheses.append(h)
        margin += y_sign * pred.astype(np.int64)
        for e in entries:
            e = dict(e)
            e["release"] = f"round {t + 1}: {e['release']}"
            round_entries.append(e)

    if composition in ("basic", "pld", "rdp"):
        how = {"basic": "basic composition", "pld": "PLD composition (dp-accounting)",
               "rdp": "Rényi composition (exponential mechanism as bounded range)"}[composition]
        for e in round_entries:
            e["note"] = (e.get("note", "") + f"; {how} over {_count(n_rounds, 'round')} of "
                         f"epsilon_round={eps_round:.6g}").lstrip("; ")
            ledger.spend(**e)
    else:
        total = advanced_composition_epsilon(eps_round, n_rounds, delta)
        kinds = Counter(e["mechanism"] for e in round_entries)
        ledger.spend(
            release=f"{n_rounds} boosting rounds ({weak_learner} weak learner)",
            mechanism="advanced-composition(" + ", ".join(f"{k} x{v}" for k, v in sorted(kinds.items())) + ")",
            epsilon=total,
            delta=delta,
            guarantee="paper-claim" if any(e.get("guarantee") == "paper-claim" for e in round_entries) else "proven",
            note=(
                f"advanced composition (Dwork-Rothblum-Vadhan 2010, Dwork-Roth Thm 3.20) of {n_rounds} "
                f"rounds, each a pure epsilon_round={eps_round:.6g}-DP weak learner (basic composition "
                f"inside a round: {round_entries[0]['mechanism']} with sensitivity "
                f"{round_entries[0]['sensitivity']:.6g} first); delta'={delta:g}; basic composition "
                f"would give epsilon_round={epsilon / n_rounds:.6g}"
            ),
        )
    return SmoothBoostRelease(tuple(hypotheses), ledger, eps_round, composition)


# ------------------------------------------------------------------- estimator
class SmoothBoostClassifier(BinaryClassifierBase):
    """Differentially private smooth boosting (LazyBB) of 1-Rules or small trees.

    Paper 002 (Asadi, Carmosino, Jahanara, Rafiey, Salamatian): Algorithm 1
    (LazyBB) with the weak learner DP-1R (Algorithm 3, ``weak_learner="stump"``)
    or a DP tree (``weak_learner="tree"``): by default one exponential
    mechanism over whole trees of depth 2 with their leaf labels
    (``tree_learner="joint"``), or the paper's DP-TopDown (Algorithm 2,
    ``tree_learner="top-down"``).  Binary features, binary target.  The model
    is a majority vote; with stumps it is a table of integer votes per feature
    (paper's Table 4, see :meth:`to_text`).

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget (> 0).
    delta : float or None, default=0.0
        ``0``: pure epsilon-DP (basic composition: ``epsilon / n_rounds`` per
        round).  ``> 0``: the rounds compose by ``accountant`` (tight by
        default).  ``None``: the public constant ``DEFAULT_DELTA`` (1e-8),
        never a function of n.
    weak_learner : {"stump", "tree"}, default="stump"
    n_rounds : int or "auto", default="auto"
        Number of rounds tau (committee size), >= 1.  ``"auto"`` with
        basic composition (delta = 0) and stumps or joint trees: a count of
        the records with noise, paid with 2% of epsilon
        (:data:`AUTO_COUNT_SHARE`), sets tau by :func:`auto_rounds` (odd, about
        one round per 400 (stumps) or 500 (trees) records x epsilon, at most 15
        or 5), stored as ``records_estimate_``; few records get few rounds.
        Otherwise :data:`AUTO_ROUNDS` (15 for stumps and top-down trees, 5 for
        joint trees, public constants).
    learning_rate : float, default=0.5
        lambda in (0, 1].
    density : float, default=0.35
        kappa in (0, 1): the measures stay kappa-dense, i.e. no record gets
        more than ``1/(kappa n)`` of the weight.
    tree_nodes : int, default=3
        Internal nodes per tree (``weak_learner="tree"`` only), >= 1; with
        ``tree_learner="joint"`` 1 or 3 (complete trees of depth 1 or 2).
    tree_learner : {"joint", "top-down"}, default="joint"
        (``weak_learner="tree"`` only.)  ``"joint"``: each round's tree, its
        split features and its leaf labels, is one draw of the exponential
        mechanism over every complete tree of the depth with every labelling,
        on minus its smooth-weighted error (sensitivity 1, as for a 1-Rule):
        the whole round budget goes to one selection.  ``"top-down"``: paper
        002's DP-TopDown (Algorithm 2): ``tree_nodes`` greedy splits by the
        exponential mechanism on the Gini bound's improvement (sensitivity 8;
        4 with ``variant="paper"``), each at ``epsilon_round / (2 tree_nodes)``,
        then Laplace leaf labels at ``epsilon_round / 2``; what the paper-002
        reproduction runs.  docs/privacy.md, "Smooth boosting".
    accountant : {"auto", "basic", "pld", "rdp"}, default="auto"
        How rounds compose when ``delta > 0`` (with ``delta = 0`` always
        basic): ``"basic"`` takes the better of basic and advanced
        composition (paper 002's Theorem 5); ``"pld"`` calibrates each round
        by the privacy loss distributions of the rounds (dp-accounting);
        ``"rdp"`` by Rényi composition, where the exponential mechanism
        counts as bounded range (epsilon**2/8-zCDP, Cesar & Rogers 2021);
        ``"auto"`` takes the one of those two that allows more
        (:func:`round_budget`; docs/privacy.md, "Accounting").
    variant : {"corrected", "paper"}, default="corrected"
        ``"paper"`` reproduces paper 002's calibrations: stumps at Theorem 7's
        eta (proven, but half the utility of the corrected calibration),
        top-down trees at Lemma 15's split sensitivity (not proven:
        ``paper-claim``; trees need ``tree_learner="top-down"``).
    classes : list of two labels or None, default=None
        The public label set ``[negative, positive]``.  None reads it from
        ``y``; then a ``y`` holding a single class is refused, and whether
        fit succeeds depends on the data: declare the labels for a release.
    random_state : None, int, SeedSequence or Generator, default=None
        See :mod:`dpglass.privacy.rng`.

    Attributes
    ----------
    estimators_ : tuple of Stump or Tree
        The committee, in round order.
    votes_ : ndarray of shape (n_features_in_,)
        (Stumps only.)  Net votes of each feature: times ``x_j`` was chosen
        minus times ``not x_j`` was; ``constant_votes_`` likewise for the
        constants ``+1`` minus ``-1``.
    n_features_used_ : int
        Features the model depends on (non-zero net votes for stumps; split
        features for trees).
    privacy_ledger_ : PrivacyLedger
    round_epsilon_ : float
        Each round's pure epsilon.
    composition_ : str
        ``"basic"`` or ``"advanced"``.
    delta_ : float
        The resolved delta.
    classes_, n_features_in_, feature_names_in_
        As in scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((2000, 6)) < 0.5).astype(int)
    >>> y = (X[:, 0] | X[:, 1]) & (1 - X[:, 2])
    >>> clf = SmoothBoostClassifier(epsilon=1.0, n_rounds=9, random_state=0).fit(X, y)
    >>> round(clf.privacy_ledger_.total()[0], 9)
    1.0
    >>> float(clf.score(X, y)) > 0.7
    True
    >>> print(clf.to_text().splitlines()[1])
    votes  feature
    """

    _private = True
    _distributed_fit = True  # fits on dask collections through dpglass.aggregates
    _parameter_constraints = {
        "epsilon": EPSILON,
        "delta": DELTA_OR_NONE,
        "weak_learner": [["stump", "tree"]],
        "n_rounds": [Interval(numbers.Integral, 1, None, closed="left"), ["auto"]],
        "learning_rate": [Interval(numbers.Real, 0, 1, closed="right")],
        "density": [Interval(numbers.Real, 0, 1, closed="neither")],
        "tree_nodes": [Interval(numbers.Integral, 1, None, closed="left")],
        "tree_learner": [["joint", "top-down"]],
        "variant": [["corrected", "paper"]],
        "accountant": [list(ACCOUNTANT_CHOICES)],
        "classes": CLASSES,
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=0.0,
        weak_learner="stump",
        n_rounds="auto",
        learning_rate=0.5,
        density=0.35,
        tree_nodes=3,
        tree_learner="joint",
        variant="corrected",
        accountant="auto",
        classes=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.weak_learner = weak_learner
        self.n_rounds = n_rounds
        self.learning_rate = learning_rate
        self.density = density
        self.tree_nodes = tree_nodes
        self.tree_learner = tree_learner
        self.variant = variant
        self.accountant = accountant
        self.classes = classes
        self.random_state = random_state

    def _release_plan(self) -> list:
        """The releases a full run would make (public parameters only): what private selection composes."""
        delta = self._resolve_delta(self.delta)
        if counts_records(self.n_rounds, self.weak_learner, self.tree_learner, delta, self.accountant):
            raise InvalidParameterError(
                "SmoothBoostClassifier(n_rounds='auto') with basic composition sets its rounds from a noisy count "
                "of the records, so its releases are not fixed in advance; give n_rounds an integer.")
        rounds = resolved_rounds(self.n_rounds, self.weak_learner, self.tree_learner)
        args = (rounds, self.weak_learner, int(self.tree_nodes))
        x, _ = round_budget(float(self.epsilon), delta, *args, self.accountant, self.tree_learner)
        return round_plan(self.weak_learner, int(self.tree_nodes), rounds, self.tree_learner)(x)

    def fit(self, X, y):
        """Fit the committee; every release is recorded in ``privacy_ledger_``.

        Parameters
        ----------
        X : array-like of 0/1, shape (n_samples, n_features)
        y : array-like of shape (n_samples,) with two classes

        Returns
        -------
        self
        """
        self._validate_params()
        self._check_tree_params()
        rng = check_random_state(self.random_state)
        X01, y01 = self._check_fit_data(X, y)
        delta = self._resolve_delta(self.delta)
        paper_trees = self.variant == "paper" and self.weak_learner == "tree"
        self._warn_about_guarantee(float(self.epsilon), "variant='paper' trees (Lemma 15's split sensitivity)"
                                   if paper_trees else None)
        epsilon, rounds, count_entry = float(self.epsilon), None, None
        if counts_records(self.n_rounds, self.weak_learner, self.tree_learner, delta, self.accountant):
            # n is private: the committee size comes from a noisy count of the records (AUTO_COUNT_SHARE of epsilon)
            count_entry, self.records_estimate_ = _count_records(X01.shape[0], epsilon, rng)
            epsilon -= count_entry.epsilon
            rounds = auto_rounds(self.records_estimate_, epsilon, self.weak_learner, self.tree_learner)
        else:
            self.records_estimate_ = None
            rounds = resolved_rounds(self.n_rounds, self.weak_learner, self.tree_learner)
        release = smooth_boost(
            X01,
            y01,
            epsilon=epsilon,
            delta=delta,
            weak_learner=self.weak_learner,
            n_rounds=rounds,
            learning_rate=float(self.learning_rate),
            density=float(self.density),
            tree_nodes=int(self.tree_nodes),
            rng=rng,
            variant=self.variant,
            accountant=self.accountant,
            tree_learner=self.tree_learner,
        )
        self.estimators_ = release.hypotheses
        if count_entry is not None:  # the whole fit: the count, then the rounds, against the full budget
            release = dataclasses.replace(release, ledger=ledger_of(
                (count_entry, *release.ledger.entries), epsilon=float(self.epsilon), delta=release.ledger.delta,
                accountant=release.ledger.accountant))
        self.privacy_ledger_ = release.ledger
        self.privacy_ledger_.replayable = is_replayable(rng)
        self.round_epsilon_ = release.round_epsilon
        self.composition_ = release.composition
        self.delta_ = delta
        self._set_summaries()
        return self

    def _check_tree_params(self):
        """Joint trees are complete trees of depth 1 or 2, and have no paper-002 calibration."""
        if self.weak_learner != "tree" or self.tree_learner != "joint":
            return
        if self.tree_nodes not in JOINT_TREE_DEPTH:
            raise InvalidParameterError(
                f"The 'tree_nodes' parameter of SmoothBoostClassifier must be one of {sorted(JOINT_TREE_DEPTH)} "
                f"with tree_learner='joint' (complete trees of depth 1 or 2). Got {self.tree_nodes!r} instead; "
                "tree_learner='top-down' grows any number of nodes."
            )
        if self.variant == "paper":
            raise InvalidParameterError(
                "The 'variant' parameter of SmoothBoostClassifier: variant='paper' calibrates paper 002's "
                "DP-TopDown; with weak_learner='tree' it needs tree_learner='top-down' (got 'joint')."
            )

    def _set_summaries(self):
        """``votes_``, ``constant_votes_`` (stumps) and ``n_features_used_`` from ``estimators_``."""
        d = self.n_features_in_
        if self.weak_learner == "stump":
            votes = np.zeros(d, dtype=np.int64)
            const = 0
            for h in self.estimators_:
                if h.feature < 0:
                    const += h.sign
                else:
                    votes[h.feature] += h.sign
            self.votes_ = votes
            self.constant_votes_ = int(const)
            self.n_features_used_ = int(np.count_nonzero(votes))
        else:
            used = set()
            for h in self.estimators_:
                used |= h.features_used()
            self.n_features_used_ = len(used)

    # ------------------------------------------------------------- prediction
    def _vote_sum(self, X01):
        if self.weak_learner == "stump" and hasattr(self, "votes_"):
            v = self.votes_.astype(np.float64)
            return 2.0 * (X01 @ v) - v.sum() + self.constant_votes_
        total = np.zeros(X01.shape[0], dtype=np.float64)
        for h in self.estimators_:
            total += h.predict(X01)
        return total

    def decision_function(self, X):
        """Normalised vote margin ``(1/tau) sum_t h_t(x)`` in ``[-1, 1]``; > 0 favours ``classes_[1]``."""
        X01 = self._check_predict_data(X)
        return self._vote_sum(X01) / len(self.estimators_)

    def predict_proba(self, X):
        """Vote fractions ``(1 -/+ margin) / 2``: the share of the committee voting each class.

        Not calibrated probabilities.  A tie (even committee) predicts
        ``classes_[0]``.
        """
        m = self.decision_function(X)
        p1 = (1.0 + m) / 2.0
        return np.column_stack([1.0 - p1, p1])

    # --------------------------------------------------------------- printout
    def to_text(self) -> str:
        """The model as a votes table (paper 002, Table 4), with feature names.

        Stumps: one row per feature with non-zero net votes; ``votes > 0``
        means "feature is 1" votes for ``classes_[1]`` that many times (and
        "feature is 0" against it).  Trees: identical trees are merged and
        listed with their vote counts.
        """
        names = self.feature_names()
        classes = self.classes_
        eps, delta = self.privacy_ledger_.total()
        head = (
            f"SmoothBoostClassifier (LazyBB, {self.weak_learner}s): {_count(len(self.estimators_), 'round')}, "
            f"({eps:.4g}, {delta:.3g})-DP [{self.composition_} composition]"
        )
        lines = [head]
        if self.weak_learner == "stump":
            lines.append("votes  feature")
            rows = [(int(v), names[j]) for j, v in enumerate(self.votes_) if v != 0]
            if self.constant_votes_:
                rows.append((self.constant_votes_, "(constant)"))
            rows.sort(key=lambda r: (-abs(r[0]), r[1]))
            width = max([5] + [len(f"{v:d}") for v, _ in rows])
            lines += [f"{v:>{width}d}  {name}" for v, name in rows]
            lines.append(
                f"score = sum over rows of votes * (+1 if feature is 1 else -1) (constant: +1); "
                f"predict {classes[1]!s} if score > 0, else {classes[0]!s}"
            )
            lines.append("votes are net: the rounds on one feature add up, and rounds voting the other way "
                         "cancel (a feature whose votes cancel is not listed)")
        else:
            lines.append("votes  tree")
            counts = Counter(self.estimators_)
            for tree, c in sorted(counts.items(), key=lambda kv: -kv[1]):
                lines.append(f"{c:>5d}  {tree.describe(names, classes)}")
            lines.append(f"predict {classes[1]!s} if most trees say so, else {classes[0]!s}")
        return "\n".join(lines)

    # ------------------------------------------------------------ serialising
    def _state_to_dict(self) -> dict:
        if self.weak_learner == "stump":
            hyps = [[int(h.feature), int(h.sign)] for h in self.estimators_]
        else:
            hyps = [
                {"feature": list(h.feature), "left": list(h.left), "right": list(h.right), "value": list(h.value)}
                for h in self.estimators_
            ]
        return {
            "estimators": hyps,
            "round_epsilon": self.round_epsilon_,
            "records_estimate": self.records_estimate_,
            "composition": self.composition_,
            "delta": self.delta_,
        }

    def _state_from_dict(self, data: dict) -> None:
        if self.weak_learner == "stump":
            self.estimators_ = tuple(Stump(int(f), int(s)) for f, s in data["estimators"])
        else:
            self.estimators_ = tuple(
                Tree(tuple(t["feature"]), tuple(t["left"]), tuple(t["right"]), tuple(t["value"]))
                for t in data["estimators"]
            )
        self.round_epsilon_ = float(data["round_epsilon"])
        self.records_estimate_ = data.get("records_estimate")
        self.composition_ = data["composition"]
        self.delta_ = float(data["delta"])
        self._set_summaries()


def _count(n: int, noun: str) -> str:
    """``"1 round"``, ``"3 rounds"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
