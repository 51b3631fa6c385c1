"""Differentially private smooth boosting (LazyBB, paper 002).

:class:`SmoothBoostClassifier` is LazyBB (paper 002, Algorithm 1; Bun,
Carmosino and Sorrell 2020): start from the uniform measure of density
``kappa``; each round normalise the measure, call a differentially private weak
learner on it, add the hypothesis to the committee, reweight every record by
``kappa * exp(-lambda * margin)`` and Bregman-project back onto the measures of
density at least ``kappa`` (:func:`bregman_projection`).  The model is the
plurality vote of the committee: each hypothesis votes for one of the K >= 2
classes (for two classes, the majority vote of +1/-1 hypotheses).

Weak learners (``dpglass.models.boosting.weak_learners``): DP 1-Rules (Algorithm 3,
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

import functools
import numbers
from collections import Counter
from dataclasses import dataclass

import numpy as np

from dpglass._validation import Interval
from dpglass.aggregates.parts import table_parts
from dpglass.exceptions import InvalidParameterError
from dpglass.models._base import CLASSES, DELTA_OR_NONE, EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.models.boosting.plan import (
    BOOST_RULE, AUTO_COUNT_SHARE, AUTO_RECORDS_PER_ROUND, AUTO_ROUNDS, COUNT_RELEASE, BoostPlan, advanced_composition_epsilon,
    auto_rounds, boost_plan, counts_records, per_round_epsilon, resolved_rounds, round_budget, round_plan,
)
from dpglass.models.boosting.smooth_measure import PartsMeasure, _boost_part, bregman_projection, smooth_weighting
from dpglass.models.boosting.weak_learners import (
    JOINT_TREE_DEPTH, Tree, class_codes, dp_joint_tree, dp_one_rule, dp_top_down, stump_from,
)
from dpglass.privacy.accounting import CHOICES as ACCOUNTANT_CHOICES
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state, is_replayable

__all__ = [
    "AUTO_COUNT_SHARE",
    "AUTO_RECORDS_PER_ROUND",
    "AUTO_ROUNDS",
    "COUNT_RELEASE",
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
    plan: BoostPlan,
    ledger: PrivacyLedger,
    learning_rate: float,
    density: float,
    rng: np.random.Generator,
) -> SmoothBoostRelease:
    """LazyBB (paper 002, Algorithm 1) with a DP weak learner: the private computation.

    A pure function of the data, the parameters and ``rng``.  ``n = len(X01)``
    is private: it is used only inside the projection's mass target
    ``kappa n``, which the proof covers (docs/privacy.md, Lemma S').

    Parameters
    ----------
    X01 : ndarray of 0/1, shape (n, d), a :class:`~dpglass.aggregates.PatternTable` or a Dask fit's
        :class:`~dpglass.aggregates.parts.DistributedTable` (then y01 is ignored: its parts are asked for
        each round's counts where they are)
    y01 : ndarray of class codes 0..K-1 (0/1 for two classes), shape (n,)
    plan : BoostPlan
        The fit's release plan (:func:`~dpglass.models.boosting.plan.boost_plan`,
        with the committee size resolved): each round's steps, in order,
        and the number of classes K the hypotheses vote for.
    ledger : PrivacyLedger
        Following ``plan``: every release of every round goes through
        :meth:`~dpglass.privacy.ledger.PrivacyLedger.release` as the round
        makes it (the budget checked before the draw).
    learning_rate : float
        lambda.
    density : float
        kappa.
    rng : numpy.random.Generator

    Returns
    -------
    SmoothBoostRelease
    """
    # the seam (dpglass.aggregates.parts): records grouped by (row, label), whose smooth weight they share; each
    # part of the table (the one local table, or the workers' on Dask) keeps its entries' margins, and a round
    # asks it for integer counts by (margin level, class): the client holds the committee and the statistics
    K = plan.n_classes
    parts = table_parts(X01, y01)
    n_features = int(X01.n_features) if hasattr(X01, "n_features") else int(np.shape(X01)[1])
    parts = parts.map(_boost_part, K)
    learner = {"stump": dp_one_rule, "joint": dp_joint_tree, "top-down": dp_top_down}[plan.learner]
    release = functools.partial(_release, ledger, rng)
    hypotheses, target = [], None  # target = kappa n: private, used only inside the projection (Lemma S')
    for t, steps in enumerate(plan.rounds):
        measure = PartsMeasure(parts, tuple(hypotheses), n_classes=K, n_features=n_features, density=density,
                               learning_rate=learning_rate, target=target)
        h, _ = learner(measure, steps=steps, release=release, n_classes=K)
        hypotheses.append(h)
        target = measure.target  # set by the first round from its counts
    return SmoothBoostRelease(tuple(hypotheses), ledger, plan.round_epsilon, plan.composition)


def _release(ledger: PrivacyLedger, rng, step, exact):
    return ledger.release(step, exact, rng)


# ------------------------------------------------------------------- estimator
class SmoothBoostClassifier(ClassifierBase):
    """Differentially private smooth boosting (LazyBB) of 1-Rules or small trees.

    Paper 002 (Asadi, Carmosino, Jahanara, Rafiey, Salamatian): Algorithm 1
    (LazyBB) with the weak learner DP-1R (Algorithm 3, ``weak_learner="stump"``)
    or a DP tree (``weak_learner="tree"``): by default one exponential
    mechanism over whole trees of depth 2 with their leaf labels
    (``tree_learner="joint"``), or the paper's DP-TopDown (Algorithm 2,
    ``tree_learner="top-down"``).  Binary features; a target of K >= 2
    classes.  Each hypothesis votes for one class (a stump: the class where
    its feature is 1 and another where it is 0, or a constant class; a tree:
    one class per leaf) and the model is the plurality vote of its committee
    (for two classes, the majority vote: with stumps a table of integer votes
    per feature, paper's Table 4, see :meth:`to_text`).  K classes are one
    committee under one budget, with the binary learners' candidates and
    utilities taken over K classes (docs/privacy.md, "Smooth boosting",
    "K classes").

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
        lambda in (0, 1].  A committee of 5 to 13 stumps sized by the noisy
        count (``n_rounds="auto"``) reweights at half of it
        (:data:`~dpglass.models.boosting.plan.SHORT_COMMITTEE_RATE`; the file
        records ``rule`` 2).
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
    classes : list of K >= 2 labels or None, default=None
        The public label set (two classes: ``[negative, positive]``).  None
        reads it from ``y``; then a ``y`` holding a single class is refused,
        and whether fit succeeds depends on the data: declare the labels for
        a release.
    random_state : None, int, SeedSequence or Generator, default=None
        See :mod:`dpglass.privacy.rng`.

    Attributes
    ----------
    estimators_ : tuple of Stump, ClassStump or Tree
        The committee, in round order.
    votes_ : ndarray of shape (n_features_in_,)
        (Stumps of two classes only.)  Net votes of each feature: times
        ``x_j`` was chosen minus times ``not x_j`` was; ``constant_votes_``
        likewise for the constants ``+1`` minus ``-1``.
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
    rule_ : int or None
        2 where the short-committee rate applied (see ``learning_rate``),
        else None.
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
    _worker_stats = True  # on Dask each round's counts by margin level are summed on the workers (smooth_measure)
    _max_classes = 255  # K-valued votes: one committee, plurality vote (docs/privacy.md, "K classes")
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
        """Fit the committee; every release goes through the release plan and is recorded in ``privacy_ledger_``.

        Parameters
        ----------
        X : array-like of 0/1, shape (n_samples, n_features)
        y : array-like of shape (n_samples,) with K >= 2 classes (those of ``classes`` when declared)

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
        params = self.get_params(deep=False)
        K = len(self.classes_)  # public: the declared label set (or y's, which fit then depends on)
        plan = boost_plan(params, self.n_features_in_, n_classes=K)
        # the whole plan is checked against the budget here, before anything is drawn
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=delta, accountant=plan.accountant).follow(plan.steps)
        self.records_estimate_ = None
        if plan.count is not None:
            # n is private: the committee size comes from a noisy count of the records (AUTO_COUNT_SHARE of
            # epsilon); the plan stops after it and is rebuilt from the released count
            self.records_estimate_ = ledger.release(plan.count, X01.shape[0], rng)
            plan = boost_plan(params, self.n_features_in_, self.records_estimate_, K)
            ledger.follow(plan.steps)
        # a short counted committee of stumps reweights at a smaller rate (plan.SHORT_COMMITTEE_RATE; file: rule 2)
        self.rule_ = BOOST_RULE if plan.learning_rate_scale != 1.0 else None
        release = smooth_boost(X01, y01, plan=plan, ledger=ledger,
                               learning_rate=float(self.learning_rate) * plan.learning_rate_scale,
                               density=float(self.density), rng=rng)
        self.estimators_ = release.hypotheses
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
        """``votes_``, ``constant_votes_`` (stumps of two classes) and ``n_features_used_`` from ``estimators_``."""
        d = self.n_features_in_
        for stale in ("votes_", "constant_votes_"):  # a refit with other classes must not keep them
            self.__dict__.pop(stale, None)
        if self.weak_learner == "stump" and len(self.classes_) == 2:
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
        elif self.weak_learner == "stump":
            self.n_features_used_ = len({h.feature for h in self.estimators_ if h.feature >= 0})
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

    def _class_votes(self, X01) -> np.ndarray:
        """``(n, K)`` votes: how many hypotheses vote for each class at each row."""
        K = len(self.classes_)
        votes = np.zeros((X01.shape[0], K), dtype=np.float64)
        rows = np.arange(X01.shape[0])
        for h in self.estimators_:
            votes[rows, class_codes(h.predict(X01), K)] += 1.0
        return votes

    def decision_function(self, X):
        """Vote margins in ``[-1, 1]``.

        Two classes: ``(1/tau) sum_t h_t(x)``, shape (n,); > 0 favours
        ``classes_[1]``.  K > 2: shape (n, K), for each class the share of the
        committee voting for it minus the share voting for another class.
        """
        X01 = self._check_predict_data(X)
        if len(self.classes_) == 2:
            return self._vote_sum(X01) / len(self.estimators_)
        return 2.0 * self._class_votes(X01) / len(self.estimators_) - 1.0

    def predict_proba(self, X):
        """Vote shares: the share of the committee voting for each class, columns in ``classes_`` order.

        Post-processing of the released committee, not calibrated
        probabilities (two classes: ``(1 -/+ margin) / 2``).  A tie predicts
        the first of the tied classes.
        """
        X01 = self._check_predict_data(X)
        if len(self.classes_) == 2:
            p1 = (1.0 + self._vote_sum(X01) / len(self.estimators_)) / 2.0
            return np.column_stack([1.0 - p1, p1])
        return self._class_votes(X01) / len(self.estimators_)

    # --------------------------------------------------------------- printout
    def to_text(self) -> str:
        """The model as a votes table (paper 002, Table 4), with feature names and the classes' labels.

        Stumps of two classes: one row per feature with non-zero net votes;
        ``votes > 0`` means "feature is 1" votes for ``classes_[1]`` that many
        times (and "feature is 0" against it).  Stumps of K > 2 classes and
        trees: identical hypotheses are merged and listed with their vote
        counts, each naming the classes it votes for.
        """
        names = self.feature_names()
        classes = self.classes_
        eps, delta = self.privacy_ledger_.total()
        head = (
            f"SmoothBoostClassifier (LazyBB, {self.weak_learner}s): {_count(len(self.estimators_), 'round')}, "
            f"({eps:.4g}, {delta:.3g})-DP [{self.composition_} composition]"
        )
        lines = [head]
        if self.weak_learner == "stump" and len(classes) == 2:
            lines += self._net_votes_table(names, classes)
            return "\n".join(lines)
        lines.append("votes  " + ("stump" if self.weak_learner == "stump" else "tree"))
        counts = Counter(self.estimators_)
        for h, c in sorted(counts.items(), key=lambda kv: -kv[1]):
            lines.append(f"{c:>5d}  {h.describe(names, classes)}")
        if len(classes) == 2:
            lines.append(f"predict {classes[1]!s} if most trees say so, else {classes[0]!s}")
        else:
            what = "stump" if self.weak_learner == "stump" else "tree"
            lines.append(f"each {what} votes for one class; predict the class with the most votes (a tie goes to "
                         f"the first of {', '.join(map(str, classes))})")
        return "\n".join(lines)

    def _net_votes_table(self, names, classes) -> list:
        lines = ["votes  feature"]
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
        return lines

    # ------------------------------------------------------------ serialising
    def _state_to_dict(self) -> dict:
        if self.weak_learner == "stump":
            hyps = [list(h.released) for h in self.estimators_]  # [feature, sign], or [feature, hi, lo] for K > 2
        else:
            hyps = [
                {"feature": list(h.feature), "left": list(h.left), "right": list(h.right), "value": list(h.value)}
                for h in self.estimators_
            ]
        state = {
            "estimators": hyps,
            "round_epsilon": self.round_epsilon_,
            "records_estimate": self.records_estimate_,
            "composition": self.composition_,
            "delta": self.delta_,
        }
        if getattr(self, "rule_", None) is not None:  # only where the rule changed the fit: other files unchanged
            state["rule"] = self.rule_
        return state

    def _state_from_dict(self, data: dict) -> None:
        if self.weak_learner == "stump":
            self.estimators_ = tuple(stump_from(h) for h in data["estimators"])
        else:
            self.estimators_ = tuple(
                Tree(tuple(t["feature"]), tuple(t["left"]), tuple(t["right"]), tuple(t["value"]))
                for t in data["estimators"]
            )
        self.round_epsilon_ = float(data["round_epsilon"])
        self.records_estimate_ = data.get("records_estimate")
        self.composition_ = data["composition"]
        self.delta_ = float(data["delta"])
        self.rule_ = data.get("rule")  # checked by the verifier: absent (rule 1, or not applied) or BOOST_RULE
        self._set_summaries()


def _count(n: int, noun: str) -> str:
    """``"1 round"``, ``"3 rounds"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
