"""The release plan of :class:`~dpglass.models.gbdt.estimator.DPGradientBoostingClassifier`, from public inputs only.

:func:`gbdt_plan` (and :func:`release_plan`, its recorded steps) lists every
release of a fit, in order, each a :class:`~dpglass.privacy.plan.PlannedRelease`
built by :mod:`dpglass.models.gbdt.releases` (entry, noise, public domain):

* ``binning="quantile"``: one step per numeric column, its ``max_bins - 1``
  DP quantiles (``quantile_share`` of epsilon, split evenly);
* ``variant="newton"``: the intercept's leaf gradient and Hessian sums, then
  per round its split levels (``split="exponential"``; random splits release
  nothing) and its leaf gradient and Hessian sums, each round spending ``x``;
* ``variant="dpboost"``: per ensemble (spending ``x``) one step per split
  level and one for the leaf values; the ensemble's rounds hold disjoint
  records, so each step's ``parts`` are the same release on the other rounds
  (one entry for all: docs/privacy.md, "Data-dependent subsets under the
  tight accountants").

A round is one tree for two classes; for K >= 3 classes it is K trees on the
same records, one per class (:func:`~dpglass.models.gbdt.releases.scored_classes`),
and each of its steps releases all K trees' values at the joint sensitivity of
one record's K terms (:func:`~dpglass.models.gbdt.releases.class_term_caps`;
docs/privacy.md, "K classes").

No release selects a branch of the plan: it depends on the parameters and
``n_features`` only.  The fit spends only through it
(:meth:`~dpglass.privacy.ledger.PrivacyLedger.release`) and the file verifier
replays it (:func:`~dpglass.privacy.plan.check_against_plan`).

:func:`budget` finds ``x``: ``"basic"`` (and any accountant when delta = 0)
divides what the bins leave evenly; ``"pld"`` / ``"rdp"`` calibrate the plan's
own entries to ``(epsilon, delta)`` (:func:`dpglass.privacy.accounting.calibrate`,
relative tolerance :data:`TOL`); ``"auto"`` keeps whichever of the two lets
``x`` be larger (ties: ``"pld"``), as :func:`~dpglass.privacy.accounting.choose_accountant`
does, but runs PLD compositions only when PLD can win, and bisects from the
RDP result.  ``x`` is never below the basic split (``"auto"`` then reports
``"basic"``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from dpglass.privacy.accounting import DEFAULT_DELTA
from dpglass.models._binning import BinnedColumns
from dpglass.models.gbdt.releases import (
    QUANTUM, Candidates, class_term_caps, dpboost_gain_sensitivity, dpboost_leaf_clip, leaf_sum_steps,
    leaf_value_step, quantile_step, scored_classes, split_step,
)
from dpglass.models.gbdt.trees import check_feature_bounds
from dpglass.privacy.accounting import CHOICES, calibrate, compose
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.mechanisms import ExponentialMechanism
from dpglass.privacy.mechanisms._common import GRID_SLACK

__all__ = ["GbdtPlan", "LAMBDA_MAX_NOISE_SCALES", "LAMBDA_NOISE_SCALES", "LEAF_STEP_PRIOR", "Public", "TOL", "TreeSteps", "budget", "gbdt_plan", "leaf_delta",
           "leaf_epsilons", "leaf_gradient_scale", "release_plan", "resolved_lambda", "resolved_sizes",
           "split_field", "tree_lambda"]

#: Relative tolerance of the calibration (always on the safe side).
TOL = 1e-2
OWNER = "DPGradientBoostingClassifier"


def leaf_delta(leaf_noise: str, delta: float, n_trees: int) -> float:
    """The delta each Gaussian leaf release states its pair at: a quarter of delta over the 2(T + 1) releases.

    Only the basic view reads it; the tight accountants compose the curves (0: Laplace leaves).
    """
    return delta / (8 * (n_trees + 1)) if leaf_noise == "gaussian" else 0.0


def resolved_sizes(params: dict) -> tuple[int, float]:
    """``(n_estimators, learning_rate)`` with "auto" resolved (public functions of the parameters)."""
    dpboost = params["variant"] == "dpboost"
    if params["n_estimators"] == "auto":
        T = 50 if dpboost else int(min(50, max(10, round(50 * float(params["epsilon"])))))
    else:
        T = int(params["n_estimators"])
    if params["learning_rate"] == "auto":
        lr = 0.1 if dpboost else min(1.0, 25.0 / T)
    else:
        lr = float(params["learning_rate"])
    return T, lr


@dataclass(frozen=True)
class Public(BinnedColumns):
    """The resolved public inputs of a plan (hashable: the calibration is cached on them)."""

    variant: str
    epsilon: float
    delta: float
    accountant: str
    n_trees: int
    depth: int
    learning_rate: float
    bounds: tuple
    max_bins: int
    binning: str
    quantile_share: float
    split: str = "exponential"
    split_share: float = 0.3
    hessian_share: float = 0.3
    reg_lambda: float | None = None
    trees_per_ensemble: int = 10
    subset_selection: str = "random"
    gradient_clip: float = 1.0
    leaf_noise: str = "laplace"
    n_classes: int = 2

    @classmethod
    def of(cls, params: dict, n_features: int, n_classes: int = 2) -> "Public":
        """From a model's parameters (``get_params``, or a file's) and the number of classes: "auto", None delta
        and bounds resolved."""
        T, lr = resolved_sizes(params)
        delta = DEFAULT_DELTA if params["delta"] is None else float(params["delta"])
        lam = params["reg_lambda"]
        return cls(
            params["variant"], float(params["epsilon"]), delta, params["accountant"], T, int(params["max_depth"]),
            lr, tuple(check_feature_bounds(params["bounds"], int(n_features), OWNER)), int(params["max_bins"]),
            params["binning"], float(params["quantile_share"]), params["split"], float(params["split_share"]),
            float(params["hessian_share"]), None if lam is None else float(lam), int(params["trees_per_ensemble"]),
            params["subset_selection"], float(params["gradient_clip"]), params["leaf_noise"], int(n_classes))

    @property
    def per_round(self) -> int:
        """Trees a round fits: one per class (one for two classes)."""
        return len(scored_classes(self.n_classes))

    @property
    def n_ensembles(self) -> int:
        return -(-self.n_trees // self.trees_per_ensemble)

    def candidates(self) -> Candidates:
        """Every (feature, cut): a 0/1 column has one cut, a numeric column ``max_bins - 1``."""
        return Candidates(tuple((j, c) for j, b in enumerate(self.bounds)
                                for c in range(1 if b is None else self.max_bins - 1)))


class TreeSteps(NamedTuple):
    """One round's steps (one tree for two classes, K for K >= 3): its split levels (none: random splits) and its
    leaves (newton: gradient and Hessian sums; DPBoost: leaf values).  A DPBoost round after the first of its
    ensemble holds its ensemble's parts."""

    splits: tuple
    leaves: tuple


@dataclass(frozen=True)
class GbdtPlan:
    """A fit's plan: ``x`` (each round's epsilon; DPBoost: each ensemble's), the accountant, the resolved delta
    and lambda, and the steps: ``bins`` (one per column of ``numeric``), ``intercept`` (newton), ``trees`` (one
    :class:`TreeSteps` per round); ``steps``: the recorded ones, in ledger order."""

    x: float
    accountant: str
    delta: float
    reg_lambda: float
    public: Public
    bins: tuple
    intercept: tuple
    trees: tuple
    steps: tuple

    def tree_lambda(self, intercept_hessian) -> float:
        """The lambda of the trees' leaves once the intercept's noisy Hessian sums are released
        (:func:`tree_lambda`: post-processing of released values)."""
        return tree_lambda(self, intercept_hessian)


def gbdt_plan(params: dict, n_features: int, n_classes: int = 2) -> GbdtPlan:
    """The plan of a fit with these parameters on ``n_features`` columns and ``n_classes`` classes (raises what
    the parameters do)."""
    pub = Public.of(params, n_features, n_classes)
    x, accountant = budget(pub)
    lam = resolved_lambda(pub.variant, pub.reg_lambda, x, pub.split, pub.split_share, pub.hessian_share)
    if pub.variant == "newton" and pub.per_round == 1:
        how = f"{accountant} composition over {pub.n_trees} trees of epsilon_tree={x:.6g}"
    elif pub.variant == "newton":
        how = f"{accountant} composition over {pub.n_trees} rounds of epsilon_round={x:.6g}"
    else:
        how = f"{accountant} composition over {pub.n_ensembles} ensembles of epsilon_ensemble={x:.6g}"
    bins = _bin_steps(pub)
    intercept, trees, steps = _tree_steps(pub, x, lam, how, pub.candidates())
    return GbdtPlan(x, accountant, pub.delta, lam, pub, bins, intercept, trees, bins + steps)


def release_plan(params: dict, n_features: int, n_classes: int = 2) -> list:
    """DPGradientBoostingClassifier's recorded releases, in order, from its public parameters: the fit spends
    through them and ``load_model`` replays them (docs/privacy.md, DP gradient boosted trees)."""
    return list(gbdt_plan(params, n_features, n_classes).steps)


def _bin_steps(pub: Public) -> tuple:
    if not pub.quantiles:
        return ()
    nb, numeric = pub.max_bins, pub.numeric
    each = pub.epsilon * pub.quantile_share / (len(numeric) * (nb - 1))
    return tuple(quantile_step(j, pub.bounds[j], nb, each) for j in numeric)


def _tree_steps(pub: Public, x: float, lam: float, how: str, candidates) -> tuple[tuple, tuple, tuple]:
    """``(intercept, trees, recorded steps)`` when each tree (DPBoost: each ensemble) spends ``x``."""
    if pub.variant == "newton":
        return _newton_steps(pub, x, how, candidates)
    return _dpboost_steps(pub, x, lam, how, candidates)


def _newton_steps(pub: Public, x: float, how: str, candidates) -> tuple[tuple, tuple, tuple]:
    D, hs, ld, C = pub.depth, pub.hessian_share, leaf_delta(pub.leaf_noise, pub.delta, pub.n_trees), pub.per_round
    g_cap, h_cap = class_term_caps(pub.n_classes)
    dg, dh = g_cap * QUANTUM, h_cap * QUANTUM  # exact: 1 and 1/4 for two classes
    g_note, h_note, s_note = _newton_notes(pub.n_classes, how)
    # the intercept: one leaf (per class tree) holding every record, released like a round's leaves
    intercept = (leaf_sum_steps(x * (1 - hs), dg, ld, C)("intercept: leaf gradient sums", g_note),
                 leaf_sum_steps(x * hs, dh, ld, C)("intercept: leaf Hessian sums", h_note))
    eps_g, eps_h = leaf_epsilons(x, pub.split, pub.split_share, hs)
    gradient, hessian = leaf_sum_steps(eps_g, dg, ld, C), leaf_sum_steps(eps_h, dh, ld, C)
    eps_level = x * pub.split_share / D
    # the C trees' selections are one exponential mechanism on the product (sensitivity dg); each rounds its
    # exponents, so the mechanism reserves the slack of C selections (one of them its own)
    mech = ExponentialMechanism(eps_level - (C - 1) * GRID_SLACK, dg) if pub.split == "exponential" else None
    trees, steps = [], list(intercept)
    for t in range(1, pub.n_trees + 1):
        name = f"tree {t}" if C == 1 else f"round {t}"
        splits = () if mech is None else tuple(split_step(LedgerEntry(
            release=f"{name}: level {lev + 1} splits", mechanism="exponential", epsilon=eps_level,
            sensitivity=dg, guarantee="proven", curve={"kind": "bounded-range", "epsilon": eps_level},
            note=s_note), mech, candidates, tuple(split_field((t - 1) * C + k, lev) for k in range(C)))
            for lev in range(D))
        tree = TreeSteps(splits, (gradient(f"{name}: leaf gradient sums", g_note),
                                  hessian(f"{name}: leaf Hessian sums", h_note)))
        trees.append(tree)
        steps += [*tree.splits, *tree.leaves]
    return intercept, tuple(trees), tuple(steps)


def _newton_notes(n_classes: int, how: str) -> tuple[str, str, str]:
    """The notes of a newton plan's gradient sums, Hessian sums and split levels."""
    if n_classes == 2:
        return (f"gradients p - y in [-1, 1]; one record in one leaf; {how}",
                f"Hessians p(1 - p) in [0, 1/4]; one record in one leaf; {how}",
                "one (feature, cut) per node, utility |G_left|+|G_right|; the level's nodes hold disjoint records "
                f"(parallel); {how}")
    K = n_classes
    return (f"gradients p_k - 1[y = k] of the {K} classes, each in [-1, 1], l1 = 2(1 - p_y) <= 2 per record; "
            f"one record in one leaf of each class's tree; {how}",
            f"Hessians p_k(1 - p_k) in [0, 1/4], l1 <= 1 - 1/{K} per record; one record in one leaf of each "
            f"class's tree; {how}",
            f"one (feature, cut) per node of each of the round's {K} class trees, utility |G_left|+|G_right| of "
            "the tree's class; a level's nodes hold disjoint records in each tree; one record moves class k's "
            f"utilities by <= |g_k|, l1 <= 2: one exponential mechanism on the product, sensitivity 2; {how}")


def split_field(tree: int, level: int) -> str:
    """The name of a tree level's (feature, cut) pairs in the verifier's view of a file (no dot: one key)."""
    return f"trees[{tree}] splits at level {level + 1}"


def _dpboost_steps(pub: Public, x: float, lam: float, how: str, candidates) -> tuple[tuple, tuple, tuple]:
    """Per ensemble: a step per split level and one for the leaf values, each with its other rounds as parts."""
    D, K, gstar, lr, C = pub.depth, pub.trees_per_ensemble, pub.gradient_clip, pub.learning_rate, pub.per_round
    leaf_eps = x / 2
    eps_level = x / (2 * D)
    mech = ExponentialMechanism(eps_level - (C - 1) * GRID_SLACK, dpboost_gain_sensitivity(gstar, pub.n_classes))
    curve = {"kind": "bounded-range", "epsilon": eps_level}
    why = ("a public random partition (parallel composition)" if pub.subset_selection == "random" else
           "per-record gradient pre-selection of unused records (docs/privacy.md: a record reaches one tree)")
    gain = ("XGBoost gain with unit Hessians, sensitivity 3 g*^2 plus float margin" if C == 1 else
            f"XGBoost gain with unit Hessians of each of the round's {C} class trees, joint sensitivity "
            "(2 l1/g* + C) g*^2 plus float margin")
    leaves = ("V = -sum g/(m + lambda), tree k of the ensemble clipped to +-g*(1-eta)^k, sensitivity "
              "min(g*/(1+lambda), 2 g*(1-eta)^k)" if C == 1 else
              f"V = -sum g_c/(m + lambda) of each of the round's {C} class trees, round k of the ensemble clipped "
              f"to +-g*(1-eta)^k, sensitivity {C} min(g*/(1+lambda), 2 g*(1-eta)^k) (the trees' sum)")
    rounds = "trees" if C == 1 else "rounds"
    trees, steps = [], []
    for e in range(pub.n_ensembles):
        first, n_k = e * K, min(K, pub.n_trees - e * K)
        levels = []  # per level: the first round's step, the ensemble's other rounds as its parts
        for lev in range(D):
            entry = LedgerEntry(
                release=f"ensemble {e + 1}: level {lev + 1} splits of every tree", mechanism="exponential",
                epsilon=eps_level, sensitivity=mech.sensitivity, guarantee="proven", curve=curve,
                note=f"{gain} (g*={gstar:g}); {rounds} on {why}; {how}")
            fields = [tuple(split_field((first + k) * C + c, lev) for c in range(C)) for k in range(n_k)]
            others = tuple(split_step(entry, mech, candidates, fields[k]) for k in range(1, n_k))
            levels.append(split_step(entry, mech, candidates, fields[0], others))
        entry = LedgerEntry(
            release=f"ensemble {e + 1}: leaf values of every tree", mechanism="laplace", epsilon=leaf_eps,
            sensitivity=C * (gstar / (1.0 + lam)), guarantee="proven",
            note=f"{leaves} (eta={lr:g}, lambda={lam:g}); {rounds} on {why}; {how}")
        # round k's leaves are clipped to g*(1 - eta)^k: their own sensitivity, hence their own noise and grid
        leaf = leaf_value_step(entry, leaf_eps, C * dpboost_leaf_clip(gstar, lam, lr, 0)[1], tuple(
            leaf_value_step(entry, leaf_eps, C * dpboost_leaf_clip(gstar, lam, lr, k)[1]) for k in range(1, n_k)))
        trees.append(TreeSteps(tuple(levels), (leaf,)))
        trees += [TreeSteps(tuple(level.parts[k - 1] for level in levels), (leaf.parts[k - 1],))
                  for k in range(1, n_k)]
        steps += [*levels, leaf]
    return (), tuple(trees), tuple(steps)


def _pld_from(plan, epsilon: float, delta: float, x0: float) -> float:
    """The largest ``x >= x0`` (to a relative :data:`TOL`) whose plan composes to ``<= epsilon`` under PLD.

    ``x0`` must fit.  The bracket starts at ``[x0, 1.25 x0]`` and grows while
    its top fits: a handful of PLD compositions where a bisection from the
    basic split needs about twice as many.
    """
    def fits(x):
        return compose(plan(x), "pld", delta)[0] <= epsilon

    lo, hi = x0, min(epsilon, 1.25 * x0)
    while fits(hi):
        if hi >= epsilon:
            return epsilon
        lo, hi = hi, min(epsilon, 1.25 * hi)
    while hi / lo > 1 + TOL:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _choose(plan, epsilon: float, delta: float, accountant: str, x_basic: float) -> tuple[float, str]:
    """``(x, accountant)``; never below the basic split ``x_basic`` (``"auto"`` then says ``"basic"``).

    ``x_basic = 0``: no basic floor (Gaussian leaves, whose stated pairs do not add up to epsilon).
    """
    if accountant != "auto":
        return max(calibrate(plan, epsilon, delta, accountant, tol=TOL), x_basic), accountant
    x_rdp = calibrate(plan, epsilon, delta, "rdp", tol=TOL)
    best = (x_rdp, "rdp")
    start = max(x_rdp, x_basic)
    if compose(plan(start), "pld", delta)[0] <= epsilon:  # else PLD's calibration ends below x_rdp
        x_pld = _pld_from(plan, epsilon, delta, start)
        if x_pld >= x_rdp:
            best = (x_pld, "pld")
    return best if best[0] > x_basic else (x_basic, "basic")


@functools.lru_cache(maxsize=256)
def budget(pub: Public) -> tuple[float, str]:
    """``(x, accountant used)``: each tree's budget (newton; DPBoost: each ensemble's), for the plan's entries.

    The DP-quantile bins (``binning="quantile"``) are spent first.
    ``leaf_noise="gaussian"`` (newton) needs delta > 0 and a tight accountant.
    Raises ValueError for an unknown accountant or Gaussian leaves without them.
    """
    if pub.accountant not in CHOICES:
        raise ValueError(f"accountant must be one of {CHOICES}; got {pub.accountant!r}.")
    newton = pub.variant == "newton"
    bins_epsilon = pub.epsilon * pub.quantile_share if pub.quantiles else 0.0
    x_basic = (pub.epsilon - bins_epsilon) / ((pub.n_trees + 1) if newton else pub.n_ensembles)
    gaussian = newton and pub.leaf_noise == "gaussian"
    if gaussian and pub.n_classes > 2:
        raise ValueError(f"Gaussian leaves are for two classes; with {pub.n_classes} a record moves "
                         f"{pub.per_round} coordinates of a round's leaf sums. Use leaf_noise='laplace'.")
    if pub.accountant == "basic" or pub.delta <= 0:
        if gaussian:
            raise ValueError("Gaussian leaves need delta > 0 and accountant 'auto', 'pld' or 'rdp'.")
        return x_basic, "basic"
    prefix, candidates = [s.entry for s in _bin_steps(pub)], pub.candidates()

    def plan(x):  # the entries of the plan when each tree (ensemble) spends x (their notes do not compose)
        lam = resolved_lambda(pub.variant, pub.reg_lambda, x, pub.split, pub.split_share, pub.hessian_share)
        return prefix + [s.entry for s in _tree_steps(pub, x, lam, "", candidates)[2]]

    return _choose(plan, pub.epsilon, pub.delta, pub.accountant, 0.0 if gaussian else x_basic)


#: The newton default lambda in units of the leaf gradient-sum noise scale: a leaf of few records is shrunk
#: towards 0 instead of following its noise.  Chosen on validation parts of the shipped datasets' training
#: parts (``benchmarks/gbdt_lambda.py``: the best mean over epsilon >= 0.4, within 0.003 of the majority class
#: at epsilon >= 1 where the old 1.17 fell 0.034 below it); a public constant.
LAMBDA_NOISE_SCALES = 4.0


def leaf_epsilons(x: float, split: str, split_share: float, hessian_share: float) -> tuple[float, float]:
    """``(gradient sums' epsilon, Hessian sums' epsilon)`` of a newton tree spending ``x``.

    ``split="exponential"`` keeps ``split_share`` of ``x`` for the splits; the
    leaves' rest is cut by ``hessian_share``.  Fit, plan and verifier read it here.
    """
    leaves = x * (1.0 - (float(split_share) if split == "exponential" else 0.0))
    return leaves * (1 - float(hessian_share)), leaves * float(hessian_share)


def leaf_gradient_scale(x: float, split: str, split_share: float, hessian_share: float) -> float:
    """The Laplace scale ``b_g`` of a newton tree's leaf gradient sums when the tree spends ``x`` (sensitivity 1).

    The Gaussian leaves (``leaf_noise="gaussian"``) have the same zCDP, a variance of ``b_g**2``.
    """
    return 1.0 / leaf_epsilons(x, split, split_share, hessian_share)[0]


def resolved_lambda(variant: str, reg_lambda, x: float, split: str, split_share: float,
                    hessian_share: float) -> float:
    """The L2 weight a fit uses: ``reg_lambda``, else 0.1 (DPBoost) or :data:`LAMBDA_NOISE_SCALES` times the
    leaf gradient-sum noise scale of a newton tree spending ``x`` (a function of the parameters only;
    ``load_model`` recomputes it)."""
    if reg_lambda is not None:
        return float(reg_lambda)
    if variant == "dpboost":
        return 0.1
    return LAMBDA_NOISE_SCALES * leaf_gradient_scale(x, split, split_share, hessian_share)


#: ``reg_lambda=None`` (newton): the prior standard deviation of a tree leaf's Newton step in :func:`tree_lambda`
#: (a Gaussian prior N(0, s^2) on the step; the posterior mean of a leaf's step from its noisy gradient sum is
#: ``-G~ / (H + v / (s^2 H))``, ``v`` the noise variance).  With :data:`LAMBDA_MAX_NOISE_SCALES`, chosen on
#: validation parts of the shipped datasets' training parts (``benchmarks/defaults_vs_majority.py --holdout
#: validation``; the test parts were not read); public constants.
LEAF_STEP_PRIOR = 1.0 / 3.0
#: The trees' lambda of :func:`tree_lambda` is at most this many leaf gradient-sum noise scales.
LAMBDA_MAX_NOISE_SCALES = 8.0


def tree_lambda(plan: GbdtPlan, intercept_hessian) -> float:
    """The L2 weight of the trees' leaves (newton, ``reg_lambda=None``), from the intercept's noisy Hessian sums.

    At scores 0 the intercept's Hessian sum of a class is its records times
    ``p (1 - p)`` (``n / 4`` for two classes): its noisy value, divided by the
    ``2**max_depth`` leaves, is a public estimate ``H`` of a leaf's Hessian sum.
    The posterior mean of a leaf's step under the prior N(0, s^2)
    (:data:`LEAF_STEP_PRIOR`) has lambda ``v / (s^2 H)``, ``v`` the variance of
    a leaf gradient sum's noise (the plan's: ``2 scale^2`` for Laplace,
    ``scale^2`` for the discrete Gaussian).  The trees take it between the
    plan's lambda (:data:`LAMBDA_NOISE_SCALES` noise scales) and
    ``min(LAMBDA_MAX_NOISE_SCALES, LAMBDA_NOISE_SCALES / learning_rate)`` of
    them: on tables whose leaves hold many records against the noise it is the
    plan's lambda itself (the same float), on small ones up to twice it with
    the auto learning rate 0.5 (epsilon >= 1, 50 trees), and never more than
    the plan's with learning rate 1 (epsilon <= 0.5: 10 to 25 trees carry the
    signal, and shrinking them cost breast-cancer 0.035 on validation parts).  A function of released values and parameters
    only (post-processing); the intercept keeps the plan's lambda.  An explicit
    ``reg_lambda`` and DPBoost: the plan's lambda.
    """
    pub = plan.public
    if pub.variant != "newton" or pub.reg_lambda is not None or not plan.trees:
        return plan.reg_lambda
    entry = plan.trees[0].leaves[0].entry
    v = (2.0 if entry.mechanism.startswith("discrete laplace") else 1.0) * float(entry.scale) ** 2
    leaf_h = float(np.mean(np.maximum(np.asarray(intercept_hessian, dtype=np.float64), 0.0))) / 2**pub.depth
    bayes = v / (LEAF_STEP_PRIOR**2 * leaf_h) if leaf_h > 0 else math.inf
    b = leaf_gradient_scale(plan.x, pub.split, pub.split_share, pub.hessian_share)
    cap = min(LAMBDA_MAX_NOISE_SCALES, LAMBDA_NOISE_SCALES / pub.learning_rate) * b
    if bayes <= plan.reg_lambda or cap <= plan.reg_lambda:
        return plan.reg_lambda
    return float(min(bayes, cap))
