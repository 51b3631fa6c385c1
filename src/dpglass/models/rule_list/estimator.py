"""Greedy rule lists: the non-private GreedyRL and its DP version (paper 001).

A rule list is ``if r1 then q1 else if r2 then q2 ... else q0``.  Both learners
grow it greedily: at each step, among the candidate conjunctions not used yet,
pick the one whose split of the remaining records (caught / not caught) has the
lowest weighted Gini impurity (paper 001) or, with the errors criterion, the
fewest training errors if the list ended there; stop at ``max_length`` rules,
when too few records remain, or when no rule improves on leaving the records
unsplit.

The DP learner's default, ``mechanism="errors-pf"``, selects on training
errors (:mod:`dpglass.models.rule_list.errors`; issue 12: the Gini criterion
stays near the majority class on Adult's 117 columns).  Its other mechanisms
are Algorithm 1 of Ly, Ferry,
Huguet, Gambs and Aïvodji, "Smooth Sensitivity for Learning
Differentially-Private yet Accurate Rule Lists" (2024), with the corrections
listed in ``docs/privacy.md``: the corrected local sensitivity of the Gini
impurity, the class counts released for the selected rules only and as one
table at the end (2K + 1 releases; ``variant="paper"`` releases them rule by
rule as the paper does, 3K + 1 releases where the paper counts 3K - 1), and
a minimum-support stop whose failure probability is part of delta.  The private computation is the pure
function :func:`fit_dp_rule_list`; the estimator is a thin wrapper.

Both learn K >= 2 classes: every count is a table over the K classes, a rule
predicts the class of its largest count, and the sensitivities are those of
two classes (docs/privacy.md, "K classes").
"""

from __future__ import annotations

import numbers

import numpy as np

from dpglass._validation import InstanceOf, Interval
from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.models._base import DELTA_OR_NONE, EPSILON, CLASSES, RANDOM_STATE, ClassifierBase
from dpglass.models.rule_list.candidates import CandidateSet, CountCache, build_candidates
from dpglass.models.rule_list.errors import check_errors_params, fit_errors_rule_list
from dpglass.models.rule_list.gini_plan import (  # noqa: F401  (re-exported: the family's budget, used by experiments and tests)
    AUTO_MARGIN, COUNT_NOISES, DEFAULT_RELEASE, PAPER_MIN_SUPPORT, DeltaPlan, GiniListConfig, class_count_mechanism,
    delta_plan, one_count_table, resolve_min_support, rule_list_budget, rule_list_plan,
)
from dpglass.models.rule_list.gini import fit_gini_rule_list
from dpglass.models.rule_list.greedy import fit_greedy_rule_list
from dpglass.models.rule_list.selection import MECHANISMS, PURE_MECHANISMS
from dpglass.models.rule_list.rules import Condition, Rule, RuleListRelease, format_rule_list, majority  # noqa: F401
from dpglass.privacy.accounting import CHOICES as ACCOUNTANT_CHOICES
from dpglass.privacy.ledger import LedgerEntry
from dpglass.privacy.rng import check_random_state, is_replayable

__all__ = [
    "GreedyRuleListClassifier",
    "DPRuleListClassifier",
    "RuleListRelease",
    "fit_dp_rule_list",
    "fit_greedy_rule_list",
]

_COMMON_CONSTRAINTS = {
    "max_length": [Interval(numbers.Integral, 1, None, closed="left")],
    "max_card": [Interval(numbers.Integral, 1, None, closed="left")],
    "allow_negations": [InstanceOf(bool)],
    "min_support": [Interval(numbers.Real, 0, 1, closed="left")],
    "candidates": [InstanceOf((list, tuple)), None],
}


# --------------------------------------------------------------------- learners


def fit_dp_rule_list(
    X,
    y,
    *,
    candidates: CandidateSet,
    epsilon: float,
    delta: float,
    mechanism: str,
    max_length: int,
    min_support: float,
    confidence: float | None,
    gamma: float,
    variant: str,
    rng: np.random.Generator,
    cache: CountCache | None = None,
    accountant: str = "auto",
    count_noise: str = "laplace",
    n_classes: int = 2,
) -> RuleListRelease:
    """DP greedy rule list: Algorithm 1 of paper 001, corrected (``mechanism="errors-pf"``: see below).

    ``y`` holds class codes 0..``n_classes`` - 1 (K = ``n_classes``, public:
    the declared label set); every class count is a table over the K classes.

    ``mechanism="errors-pf"`` runs :func:`~dpglass.models.rule_list.errors.fit_errors_rule_list`
    instead (no remaining counts, one release of every cell's class counts;
    ``min_support`` must be None or 0, ``confidence`` None, ``variant``
    "corrected", ``count_noise`` "laplace"; ``gamma`` and ``accountant`` are
    ignored).  The rest of this docstring is about the Gini mechanisms.

    Releases: up to ``K = max_length`` steps, each a noisy remaining count
    and a selection; then the class counts of every selected rule's caught
    records and of the default rule's, as one table (a record lies in one
    cell of the released list, so the table has l1 and l2 sensitivity 1):
    ``2K + 1`` releases of ``epsilon / (2K + 1)`` each (sequential
    composition), and a list that stops early gives its table all the budget
    it left (a basic-composition filter, docs/privacy.md).  With
    ``variant="paper"`` the counts are released as paper 001's Algorithm 1
    does, each selected rule's pair at its step and the default rule's last:
    ``3K + 1`` releases, and an early stop leaves budget unspent.  Delta is
    split evenly over the steps' selections and minimum-support
    certifications that use it.  Counts are integers (discrete Laplace).
    The number of records is private: the minimum support is
    ``Lambda = max(1, floor(min_support * n_hat_1))`` with ``n_hat_1`` the
    first released count, never the true n.

    ``accountant="pld"``, ``"rdp"`` or ``"auto"`` (with delta > 0) composes
    the releases tightly instead (:mod:`dpglass.privacy.accounting`): half
    of delta goes to the selections and certifications, and each release
    gets the largest common epsilon whose composition stays within
    ``(epsilon, delta)`` (:func:`rule_list_budget`); an early stop then
    leaves budget unspent.  ``count_noise="gaussian"``
    (delta > 0, tight accountant) releases the class counts with discrete
    Gaussian noise of the same zCDP cost as a discrete Laplace release at that
    epsilon (:func:`class_count_mechanism`); the remaining counts, which the
    minimum-support certification reads, stay discrete Laplace.

    ``cache`` (optional) is a :class:`CountCache` built on the statistics of
    this same ``(X, y)`` and ``candidates``; runs that share it (an epsilon
    grid on one training set) share the exact counts.  The output for a given
    ``rng`` is the same with or without it.

    Returns
    -------
    RuleListRelease
        The selected candidates with their noisy counts, the default rule's
        noisy counts, why it stopped, and the ledger of every release.
    """
    if mechanism == "errors-pf":  # its own releases: no remaining counts, one table of class counts
        check_errors_params(min_support=min_support, confidence=confidence, variant=variant, count_noise=count_noise)
        return fit_errors_rule_list(X, y, candidates=candidates, epsilon=epsilon, delta=delta,
                                    max_length=max_length, rng=rng, cache=cache, n_classes=n_classes)
    cfg = GiniListConfig(epsilon=float(epsilon), delta=float(delta), K=int(max_length), mechanism=mechanism,
                         min_support=resolve_min_support(mechanism, min_support), confidence=confidence,
                         gamma=float(gamma), variant=variant, accountant=accountant, count_noise=count_noise,
                         n_classes=int(n_classes))
    return fit_gini_rule_list(X, y, candidates=candidates, cfg=cfg, rng=rng, cache=cache)


# ------------------------------------------------------------------- estimators
class _RuleListBase(ClassifierBase):
    """Fitted-model behaviour shared by the rule-list classifiers."""

    _noisy = False
    _distributed_fit = True  # fits on dask collections through dpglass.aggregates
    _max_classes = 255  # K classes: every count is a table over the K classes (one key byte a label)

    def _candidate_set(self, n_features: int, names: list[str]) -> CandidateSet:
        if self.candidates is None:
            return build_candidates(n_features, self.max_card, self.allow_negations)
        return build_candidates(n_features, self.max_card, self.allow_negations, _resolve_rules(self.candidates, names))

    def _store(self, release: RuleListRelease, candidates: CandidateSet) -> None:
        names = self.feature_names()
        self.rules_ = []
        for cand, counts in release.selected:
            conds = tuple(Condition(f, names[f], v) for f, v in candidates.conditions(cand))
            self.rules_.append(Rule(conds, majority(counts, self._noisy), tuple(counts), self._noisy))
        counts = tuple(release.default_counts)
        self.default_rule_ = Rule((), majority(counts, self._noisy), counts, self._noisy)
        self.stop_reason_ = release.stop_reason

    def _first_match(self, X):
        which = np.full(X.shape[0], len(self.rules_), dtype=np.int64)
        for i in range(len(self.rules_) - 1, -1, -1):
            which[self.rules_[i].matches(X)] = i
        return which

    def predict_proba(self, X):
        """P(each class), columns in ``classes_`` order, from the counts of the first rule each row satisfies.

        For DP models the counts are the released noisy counts, clipped at 0 (:meth:`Rule.proba`).
        """
        X = self._check_predict_data(X)
        rules = self.rules_ + [self.default_rule_]
        return np.array([r.proba() for r in rules]).reshape(len(rules), -1)[self._first_match(X)]

    def predict(self, X):
        """The prediction of the first rule each row satisfies."""
        X = self._check_predict_data(X)
        rules = self.rules_ + [self.default_rule_]
        pred = np.array([r.prediction for r in rules])[self._first_match(X)]
        return self.classes_[pred]

    def to_text(self) -> str:
        """The list in paper 001's style, with feature names and counts."""
        classes = [c.item() if hasattr(c, "item") else c for c in self.classes_]
        return format_rule_list(self.rules_, self.default_rule_, classes)

    # ---------------------------------------------------------- serialising
    def _state_to_dict(self) -> dict:
        return {
            "rules": [r.to_dict() for r in self.rules_],
            "default_rule": self.default_rule_.to_dict(),
            "stop_reason": self.stop_reason_,
        }

    def _state_from_dict(self, data: dict) -> None:
        self.rules_ = [Rule.from_dict(r) for r in data["rules"]]
        self.default_rule_ = Rule.from_dict(data["default_rule"])
        self.stop_reason_ = data.get("stop_reason", "")

    @classmethod
    def _params_from_dict(cls, params: dict) -> dict:
        if params.get("candidates") is not None:  # JSON turned (feature, value) tuples into lists
            params["candidates"] = [[tuple(l) if isinstance(l, list) else l for l in r] for r in params["candidates"]]
        return params


class GreedyRuleListClassifier(_RuleListBase):
    """Greedy Gini rule list (GreedyRL): the non-private baseline of paper 001.

    Parameters
    ----------
    max_length : int, default=5
        Maximum number of rules K (the default rule not counted).
    max_card : int, default=2
        Maximum number of literals per rule.
    allow_negations : bool, default=True
        Whether literals may test ``x = 0``.
    min_support : float in [0, 1), default=0.01
        A rule must catch at least ``max(1, floor(min_support * n))`` of the
        remaining training records.
    criterion : {"gini", "errors"}, default="gini"
        ``"gini"``: paper 001's weighted Gini impurity of the split.
        ``"errors"``: the training errors of the list if it ended with the
        rule, what :class:`DPRuleListClassifier`'s default ``errors-pf``
        selects on; much better where a pure remainder tempts Gini into a
        mixed first rule (Adult's 117 columns: 0.842 against 0.771).
    candidates : list of rules or None
        A fixed candidate list; each rule a list of literals, a literal being
        ``(feature, value)`` (feature index or name; value True for ``x = 1``)
        or a string ``"name"`` / ``"not name"``.

    Attributes
    ----------
    rules_ : list of Rule
    default_rule_ : Rule
    stop_reason_ : str

    Examples
    --------
    >>> from dpglass.models import GreedyRuleListClassifier
    >>> X = [[1, 0], [1, 1], [0, 1], [0, 0]] * 5
    >>> y = [1, 1, 0, 0] * 5
    >>> print(GreedyRuleListClassifier(max_length=1).fit(X, y))
    if x0 then 1   (counts 0: 0, 1: 10)
    else 0         (counts 0: 10, 1: 0)
    """

    _parameter_constraints = {**_COMMON_CONSTRAINTS, "criterion": [["gini", "errors"]]}

    def __init__(self, *, max_length=5, max_card=2, allow_negations=True, min_support=0.01, criterion="gini",
                 candidates=None):
        self.max_length = max_length
        self.max_card = max_card
        self.allow_negations = allow_negations
        self.min_support = min_support
        self.criterion = criterion
        self.candidates = candidates

    def fit(self, X, y):
        """Grow the rule list on 0/1 features ``X`` and labels ``y`` of two or more classes."""
        self._validate_params()
        X, y = self._check_fit_data(X, y)
        candidates = self._candidate_set(X.shape[1], self.feature_names())
        release = fit_greedy_rule_list(
            X, y, candidates=candidates, max_length=self.max_length, min_support=self.min_support,
            criterion=self.criterion, n_classes=len(self.classes_),
        )
        self._store(release, candidates)
        return self


class DPRuleListClassifier(_RuleListBase):
    """Differentially private greedy rule list.

    The default, ``mechanism="errors-pf"``, selects each rule by
    permute-and-flip on the training errors the list would make if it ended
    with that rule (or stops), then releases the class counts of every rule
    and of the default rule at once with all the budget the selections left;
    it is pure epsilon-DP.  The other mechanisms are paper 001's Algorithm 1,
    corrected, on the Gini impurity: each step releases a noisy count of the
    remaining records (Laplace), stops if it is below the minimum support plus
    a margin, and selects a rule with the chosen ``mechanism``; then the
    noisy class counts of every rule and of the default rule are released as
    one table (Laplace), which gives the predictions and the counts printed
    with them.  ``epsilon`` is split evenly over the ``2 * max_length + 1``
    releases, and a list that stops early gives the table what it left
    (basic accounting).  See ``docs/privacy.md``.

    With K > 2 classes every class count is a table over the K classes (the
    releases and their guarantees are those of two classes), each rule
    predicts the class of its largest noisy count, and the printout names
    the labels (``then Gentoo``, ``noisy counts Gentoo: ..., Adelie: ...``).

    Parameters
    ----------
    epsilon : float > 0, default=1.0
    delta : float in [0, 1) or None, default=None
        None means ``dpglass.privacy.accounting.DEFAULT_DELTA`` (1e-8), a public
        constant: the number of training records n is private, so the
        default cannot be 1/n**2.  Pass a smaller delta for tables of more
        than a million records.  Pure mechanisms (``errors-pf``, ``local-pf``, ``smooth-cauchy``,
        ``global-laplace``, ``exponential``, ``noisy-counts``) spend none of
        it, except ``smooth-cauchy`` with ``variant="paper"``, whose
        minimum-support certification is charged to delta.
    mechanism : str, default="errors-pf"
        How the next rule is selected:

        - ``"errors-pf"`` (default, proven pure epsilon): permute-and-flip on
          the training errors, sensitivity 1 and monotone; "no rule" gets a
          public bonus ``ln(options) / epsilon_sel`` so the list stops unless
          a rule beats the noise.  ``(1 - 0.2) * epsilon / max_length`` per
          selection; the class counts of the whole list get the rest (at
          least ``0.2 * epsilon``, more when the list stops early).  No
          minimum support, ``confidence``, ``variant="paper"`` or Gaussian
          counts; it composes basically whatever ``accountant``.  On Adult's
          117 columns at epsilon = 1: 0.840 test accuracy, where the Gini
          mechanisms reach 0.771.
        - ``"certified-pf"`` (paper 001's criterion, proven (epsilon, delta);
          the default before issue 12): permute-
          and-flip on the Gini impurity with the local sensitivity at a lower
          bound on the remaining count certified by the released noisy count.
        - ``"smooth-laplace"``, ``"smooth-cauchy"``: paper 001's sm-Laplace /
          sm-Cauchy (smooth sensitivity of the Gini impurity).  The paper counts
          the noisy minimum over all candidates as one release; dpglass could
          not prove that, so their ledger entries are marked ``paper-claim``.
        - ``"global-laplace"``, ``"global-gaussian"``, ``"exponential"``,
          ``"noisy-counts"``: the paper's global-sensitivity baselines, each
          calibrated so that its guarantee is proven.
    max_length, max_card, allow_negations, candidates
        As in :class:`GreedyRuleListClassifier`.  Candidates are never filtered
        by their support on the training data (that would leak).
    min_support : float in [0, 1) or None, default=None
        None means 0.05 for the Gini mechanisms and none for ``errors-pf``
        (which refuses any other value).
        lambda: stop when the noisy remaining count falls below
        ``Lambda = max(1, floor(lambda * n_hat))`` plus a margin, where
        ``n_hat`` is the first released (noisy) count of the records.  The margin is
        ``ln(1/delta_T) / epsilon_node + 1`` for mechanisms whose sensitivity
        relies on at least Lambda records (its failure probability delta_T is
        charged to delta) and 0 for the others.
    confidence : float in (0.5, 1) or None, default=None
        Reproduce paper 001's Algorithm 3 threshold instead.  This is a
        **heuristic**: the stop then fails with probability up to
        ``1 - confidence`` per step, which is not charged to delta, and the
        ledger marks the selections ``paper-claim``.
    gamma : float > 1 or None, default=None
        Tail exponent of ``smooth-cauchy`` noise h(z) ∝ 1/(1+|z|^gamma); None
        means 4.
    count_noise : {"laplace", "gaussian"}, default="laplace"
        The noise on the released class counts (every rule's and the
        default rule's).  ``"gaussian"``: exact discrete Gaussian noise of the same
        zCDP cost as the Laplace release it replaces, which composes better
        under the tight accountants; needs delta > 0 and ``accountant`` other
        than ``"basic"``.  The remaining counts stay discrete Laplace.
    accountant : {"auto", "basic", "pld", "rdp"}, default="auto"
        How the releases compose: ``"basic"`` sums epsilons (epsilon / (2K + 1)
        each, the unused rest to the class counts; the only one when
        delta = 0); ``"pld"`` (privacy loss
        distributions) and ``"rdp"`` (Rényi; the exponential mechanism as
        bounded range) give each release the largest epsilon whose
        composition stays within ``(epsilon, delta)``; ``"auto"`` takes the
        one of those two that allows more, from the parameters alone, or
        ``"basic"`` when neither allows 0.1% more than the basic split
        (:func:`rule_list_budget`; docs/privacy.md, "Accounting").  The
        ledger records the accountant used.
    variant : {"corrected", "paper"}, default="corrected"
        ``"paper"`` reproduces the paper's formulas where they differ (its
        local sensitivity g(n), noisy-Gini scales); entries become
        ``paper-claim``; each rule's class counts are released at its step,
        as the paper does (3K + 1 releases, the paper's 3K - 1 corrected).
    classes : list of labels or None, default=None
        The public label set: two or more labels (``[negative, positive]``
        for two), in the order of ``predict_proba``'s columns and of each
        rule's counts.  None reads it from ``y``; then a ``y`` holding a
        single class is refused, and whether fit succeeds (and which classes
        the model knows) depends on the data: declare the labels for a
        release.
    random_state : None, int, SeedSequence or Generator
        None draws fresh OS entropy.

    Attributes
    ----------
    rules_, default_rule_, stop_reason_
        As in :class:`GreedyRuleListClassifier`; counts are noisy.
    privacy_ledger_ : PrivacyLedger
        Every release, with its budget.

    Examples
    --------
    >>> from dpglass.datasets import load_dataset
    >>> from dpglass.models import DPRuleListClassifier
    >>> X, y = load_dataset("breast-cancer")
    >>> model = DPRuleListClassifier(epsilon=1.0, random_state=0).fit(X, y)
    >>> eps, delta = model.privacy_ledger_.total()
    >>> eps <= 1.0
    True
    """

    _noisy = True
    _private = True
    _worker_stats = True  # on Dask its candidates' counts are summed on the workers (rule_list.candidates.PartCounts)
    _parameter_constraints = {
        **_COMMON_CONSTRAINTS,
        "min_support": [*_COMMON_CONSTRAINTS["min_support"], None],
        "epsilon": EPSILON,
        "delta": DELTA_OR_NONE,
        "mechanism": [list(MECHANISMS)],
        "confidence": [Interval(numbers.Real, 0.5, 1, closed="neither"), None],
        "gamma": [Interval(numbers.Real, 1, None, closed="neither"), None],
        "variant": [["corrected", "paper"]],
        "accountant": [list(ACCOUNTANT_CHOICES)],
        "count_noise": [list(COUNT_NOISES)],
        "classes": CLASSES,
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        *,
        epsilon=1.0,
        delta=None,
        mechanism="errors-pf",
        max_length=5,
        max_card=2,
        allow_negations=True,
        min_support=None,
        confidence=None,
        gamma=None,
        variant="corrected",
        candidates=None,
        accountant="auto",
        count_noise="laplace",
        classes=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.mechanism = mechanism
        self.max_length = max_length
        self.max_card = max_card
        self.allow_negations = allow_negations
        self.min_support = min_support
        self.confidence = confidence
        self.gamma = gamma
        self.variant = variant
        self.candidates = candidates
        self.accountant = accountant
        self.count_noise = count_noise
        self.classes = classes
        self.random_state = random_state

    def _needs_delta(self) -> bool:
        """Whether a fit with these parameters spends delta (public parameters only; PrivateGridSearch asks it
        before any run): an (epsilon, delta) mechanism or a charged certification (:func:`delta_plan`), or
        Gaussian class counts."""
        return delta_plan(self.mechanism, self.confidence, self.variant).spends_delta or self.count_noise == "gaussian"

    def _release_plan(self) -> list:
        """The releases a full run would make (public parameters only): what private selection composes."""
        if self.mechanism == "errors-pf":  # a run is one pure epsilon-DP mechanism, however long the list
            return [LedgerEntry("errors-pf rule list", "pure", epsilon=float(self.epsilon))]
        delta = self._resolve_delta(self.delta)
        plan = delta_plan(self.mechanism, self.confidence, self.variant)
        K = int(self.max_length)
        table = one_count_table(self.variant)
        x, part, accountant = rule_list_budget(float(self.epsilon), delta, K, plan, self.accountant, self.mechanism,
                                               self.count_noise, table=table)
        if table and accountant == "basic":
            raise InvalidParameterError(
                "Under basic accounting a rule list's table of class counts takes whatever budget the steps left "
                "(a privacy filter), so no fixed list of releases describes its run; a Rényi composition of it "
                "needs accountant='rdp' or 'pld' (PrivateGridSearch sets 'rdp' on its candidates).")
        return rule_list_plan(K, plan, self.mechanism, self.count_noise, delta, part, table=table)(x)

    def fit(self, X, y):
        """Train on 0/1 features ``X`` and labels ``y`` of two or more classes with DP."""
        self._validate_params()
        rng = check_random_state(self.random_state)
        X, y = self._check_fit_data(X, y)
        delta = self._resolve_delta(self.delta)
        if delta_plan(self.mechanism, self.confidence, self.variant).spends_delta and delta == 0:
            raise InvalidParameterError(
                f"mechanism={self.mechanism!r} (variant={self.variant!r}) is (epsilon, delta)-DP and needs "
                "delta > 0; got delta=0. Pass delta=None (1e-8) or a small positive delta, or choose a "
                f"pure mechanism ({', '.join(PURE_MECHANISMS)})."
            )
        if self.gamma is not None and self.mechanism != "smooth-cauchy":
            raise InvalidParameterError(
                f"gamma is the tail exponent of smooth-cauchy noise; mechanism={self.mechanism!r} does "
                "not use it. Leave gamma=None."
            )
        unproven = None
        if self.mechanism in ("smooth-laplace", "smooth-cauchy"):
            unproven = f"mechanism={self.mechanism!r} (report-noisy-min over smooth-sensitivity noise)"
        elif self.confidence is not None:
            unproven = "confidence= (paper 001's Algorithm 3 stop, not charged to delta)"
        elif self.variant == "paper":
            unproven = "variant='paper' (paper 001's formulas)"
        self._warn_about_guarantee(float(self.epsilon), unproven)
        candidates = self._candidate_set(X.shape[1], self.feature_names())
        release = fit_dp_rule_list(
            X, y, candidates=candidates, epsilon=float(self.epsilon), delta=delta, mechanism=self.mechanism,
            max_length=self.max_length, min_support=self.min_support, confidence=self.confidence,
            gamma=4.0 if self.gamma is None else float(self.gamma), variant=self.variant, rng=rng,
            accountant=self.accountant, count_noise=self.count_noise, n_classes=len(self.classes_),
        )
        self._store(release, candidates)
        # the Gini mechanisms' noisy remaining counts: released values that select the plan's branches (the stop,
        # certified-pf's sensitivity), kept so that the file verifier can replay the plan
        rc = release.remaining_counts
        self.remaining_counts_ = None if rc is None else [int(v) for v in rc]
        self.privacy_ledger_ = release.ledger
        self.privacy_ledger_.replayable = is_replayable(rng)
        return self

    def _state_to_dict(self) -> dict:
        state = super()._state_to_dict()
        if getattr(self, "remaining_counts_", None) is not None:
            state["remaining_counts"] = list(self.remaining_counts_)
        return state

    def _state_from_dict(self, data: dict) -> None:
        super()._state_from_dict(data)
        self.remaining_counts_ = data.get("remaining_counts")


def _resolve_rules(rules, names: list[str]):
    """Turn user literals (index/name, value) or "name"/"not name" into (index, value).

    Raises InvalidParameterError on an empty rule or a malformed literal.
    """
    index = {n: i for i, n in enumerate(names)}
    out = []
    for i, rule in enumerate(rules):
        literals = [rule] if isinstance(rule, str) else list(rule)
        if not literals:
            raise InvalidParameterError(f"Candidate rule {i} is empty; a rule needs at least one literal.")
        lits = []
        for lit in literals:
            if isinstance(lit, str):
                value = not lit.startswith("not ")
                feature = index.get(lit if value else lit[4:])
            elif isinstance(lit, (tuple, list)) and len(lit) == 2:
                feature, value = lit
                if not isinstance(value, (bool, np.bool_)):
                    raise InvalidParameterError(
                        f"Candidate literal {lit!r}: the value must be True (x = 1) or False (x = 0)."
                    )
                if isinstance(feature, str):
                    feature = index.get(feature)
                elif not isinstance(feature, (numbers.Integral, np.integer)) or isinstance(feature, bool):
                    raise InvalidParameterError(
                        f"Candidate literal {lit!r}: the feature must be a column index (int) or name (str)."
                    )
            else:
                raise InvalidParameterError(
                    f"Candidate literal {lit!r} must be a string ('name' or 'not name') or a pair "
                    "(feature, value)."
                )
            if feature is None:
                raise DataValidationError(f"Candidate literal {lit!r} names no feature of X.")
            lits.append((int(feature), bool(value)))
        out.append(lits)
    return out
