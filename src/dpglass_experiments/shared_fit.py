"""Shared fits: the many fits of one model family on one training set share their work.

A sweep (:mod:`dpglass_experiments`) fits every method and epsilon of a grid
on the same training set.  :func:`shared_fitter` is the hook through which a
model family offers to share the work of those fits: it returns a class that
is built once per (training set, held-out set) and whose ``fit_score(est)``
fits and scores one estimator exactly as ``est.fit`` and ``est.score`` would
(same release, same floats), or None for a family that has no such path (it
is then fitted as a user would fit it).  The engine knows nothing else about
the family.

Rule lists (:class:`RuleListFits`): the training set's distinct rows, Gram
matrices and candidate counts are built once and shared by every method and
epsilon through a :class:`~dpglass.models.rule_list.candidates.CountCache` (counts
depend only on the set of rules already chosen); accuracies and the
vulnerability are computed on the distinct rows of the training and held-out
data.  ``tests/test_experiments.py`` checks the rows against fitted estimators.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpglass.exceptions import InvalidParameterError

__all__ = ["CellFit", "RuleListFits", "shared_fitter", "MEMO_ENTRIES"]

#: Memoised count sets per (training set, candidate set); ~2 * 8 bytes * candidates each.
MEMO_ENTRIES = 2048


@dataclass(frozen=True)
class CellFit:
    """What a shared fit reports for one estimator (the sweep's columns)."""

    ledger: Any  # PrivacyLedger, or None for a non-private model
    n_rules: float
    stop_reason: str
    train_accuracy: float
    held_out_accuracy: float
    vulnerability: float
    seconds: float  # wall-clock time of the fit itself


def shared_fitter(estimator):
    """The class that fits ``estimator``'s family with shared work, or None.

    The class is built as ``cls(X_train, y_train, X_held_out, y_held_out,
    feature_names)`` (0/1 arrays) and fits with ``fit_score(estimator) ->
    CellFit``.
    """
    from dpglass.models.rule_list.estimator import DPRuleListClassifier, GreedyRuleListClassifier

    if type(estimator) in (DPRuleListClassifier, GreedyRuleListClassifier):
        return RuleListFits
    return None


def _distinct_rows(X: np.ndarray):
    packed = np.packbits(X, axis=1) if X.shape[1] else np.zeros((X.shape[0], 1), np.uint8)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1])))[:, 0]
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return X[first], inverse.ravel()


def _class_counts(inverse, y, m: int, k: int) -> np.ndarray:
    """(m, K) float counts of each class code among the records of each distinct row."""
    y = np.asarray(y, dtype=np.int64)
    return np.column_stack([np.bincount(inverse[y == c], minlength=m).astype(np.float64) for c in range(k)])


class RuleListFits:
    """Rule-list fits on one training set, sharing counts; metrics on distinct rows.

    ``y_tr`` and ``y_ev`` are class codes 0..K-1 (two classes: 0/1); K is the largest code seen plus one, and an
    estimator fits with its declared classes' count (or, undeclared, the training codes' count, as ``fit``)."""

    def __init__(self, X_tr, y_tr, X_ev, y_ev, names):
        self.X_tr, self.y_tr, self.names = X_tr, y_tr, names
        rows, inverse = _distinct_rows(np.vstack([X_tr, X_ev]))
        m, n_tr = rows.shape[0], len(y_tr)
        codes = np.concatenate([np.asarray(y_tr), np.asarray(y_ev)]).astype(np.int64)
        self.k = max(2, int(codes.max()) + 1 if codes.size else 2)
        self.rows = rows
        self.inc = _class_counts(inverse[:n_tr], y_tr, m, self.k)  # training records of each class per row
        self.outc = _class_counts(inverse[n_tr:], y_ev, m, self.k)
        self.n_tr, self.n_ev = float(n_tr), float(len(y_ev))
        # each distinct row K times (label 0, then label 1, ...), weighted by its record counts
        self._labels = np.repeat(np.arange(self.k), m)
        self._w_in = self.inc.T.reshape(-1)
        self._w_out = self.outc.T.reshape(-1)
        self._problems = {}
        self._validated = set()
        self._scores = {}

    def fit_score(self, est) -> CellFit:
        """Fit and score ``est`` as ``est.fit(X_tr, y_tr)`` and ``est.score`` would."""
        release, problem, noisy, seconds = self.fit(est)
        train, held, vul = self.evaluate(release, problem, noisy)
        return CellFit(release.ledger, len(release.selected), release.stop_reason, train, held, vul, seconds)

    def _problem(self, est):
        from dpglass.models.rule_list.candidates import CountCache, SufficientStats

        k = self._n_classes(est)
        key = (est.max_card, est.allow_negations, repr(est.candidates), k)
        if key not in self._problems:
            cands = est._candidate_set(self.X_tr.shape[1], self.names)
            cache = CountCache(SufficientStats(self.X_tr, self.y_tr, cands, n_classes=k), max_entries=MEMO_ENTRIES)
            self._problems[key] = (cands, cache, {})
        return self._problems[key]

    def _n_classes(self, est) -> int:
        """K of ``est``'s fit: its declared classes, else the distinct training codes (at least 2), as ``fit``."""
        if getattr(est, "classes", None) is not None:
            return len(est.classes)
        return max(2, int(np.unique(self.y_tr).size))

    def _mask(self, problem, index):
        cands, _, masks = problem
        if index not in masks:
            mask = np.ones(self.rows.shape[0], dtype=bool)
            for feature, value in cands.conditions(index):
                mask &= self.rows[:, feature] == (1 if value else 0)
            masks[index] = mask
        return masks[index]

    def fit(self, est):
        """Fit as ``est.fit(X_tr, y_tr)`` would; return (release, problem, noisy, seconds)."""
        from dpglass.models.rule_list.selection import PURE_MECHANISMS
        from dpglass.models.rule_list.estimator import DPRuleListClassifier, fit_dp_rule_list, fit_greedy_rule_list
        from dpglass.privacy.rng import check_random_state, is_replayable

        # parameters other than epsilon (checked by SweepConfig) and the seed are
        # the same for every cell of a method: validate them once
        key = (type(est).__name__, repr(sorted((k, repr(v)) for k, v in vars(est).items()
                                               if k not in ("epsilon", "random_state"))))
        if key not in self._validated:
            est._validate_params()
            self._validated.add(key)
        problem = self._problem(est)
        cands, cache, _ = problem
        if isinstance(est, DPRuleListClassifier):
            rng = check_random_state(est.random_state)
            delta = est._resolve_delta(est.delta)
            if est.mechanism not in PURE_MECHANISMS and delta == 0:
                raise InvalidParameterError(f"mechanism={est.mechanism!r} needs delta > 0.")
            start = time.perf_counter()
            release = fit_dp_rule_list(
                self.X_tr, self.y_tr, candidates=cands, epsilon=float(est.epsilon), delta=delta,
                mechanism=est.mechanism, max_length=est.max_length, min_support=est.min_support,
                confidence=est.confidence, gamma=4.0 if est.gamma is None else float(est.gamma),
                variant=est.variant, rng=rng, cache=cache, accountant=est.accountant, count_noise=est.count_noise,
                n_classes=self._n_classes(est),
            )
            release.ledger.replayable = is_replayable(rng)
            return release, problem, True, time.perf_counter() - start
        start = time.perf_counter()
        release = fit_greedy_rule_list(
            self.X_tr, self.y_tr, candidates=cands, max_length=est.max_length, min_support=est.min_support,
            criterion=est.criterion, n_classes=self._n_classes(est),
        )
        return release, problem, False, time.perf_counter() - start

    def evaluate(self, release, problem, noisy):
        """(train accuracy, held-out accuracy, vulnerability) of a release, as the fitted model scores."""
        from dpglass.audit.membership import distributional_overfitting
        from dpglass.models.rule_list.rules import majority

        n_rules = len(release.selected)
        which = np.full(self.rows.shape[0], n_rules, dtype=np.int64)
        preds = np.empty(n_rules + 1, dtype=np.int64)
        for i, (cand, counts) in enumerate(release.selected):
            preds[i] = majority(counts, noisy)  # the rule's class: as the fitted model predicts
        preds[n_rules] = majority(release.default_counts, noisy)
        key = (id(problem[0]), tuple(c for c, _ in release.selected), preds.tobytes())
        if key not in self._scores:  # many cells (large epsilon) give the same list
            for i in range(n_rules - 1, -1, -1):
                which[self._mask(problem, release.selected[i][0])] = i
            pred, rows = preds[which], np.arange(self.rows.shape[0])
            train = float(np.sum(self.inc[rows, pred])) / self.n_tr
            held = float(np.sum(self.outc[rows, pred])) / self.n_ev
            groups = np.tile(which, self.k)
            vul = distributional_overfitting(groups, self._labels, groups, self._labels, weights_in=self._w_in,
                                             weights_out=self._w_out).vulnerability
            self._scores[key] = (train, held, vul)
        return self._scores[key]
