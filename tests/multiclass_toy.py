"""A tiny test-only multiclass DP estimator (never part of dpglass's API).

:class:`ToyNaiveBayes` stands for "a family that learns K classes" in
``tests/test_multiclass.py`` while the real families are being made
multiclass: it lets the cross-cutting paths (the CLI's ``--classes A,B,C``,
:class:`~dpglass.models.DPPipeline`, :class:`~dpglass.models.PrivateGridSearch`,
the registry-driven tests) run on K = 3 before any family lands.

The model is a naive Bayes on 0/1 features: one release, the table of class
counts and of per-class counts of each feature at 1 (K x (d + 1) integers),
with discrete Laplace noise.  Adding or removing one record moves its class's
count and at most ``d`` of its class's feature counts by one: l1 sensitivity
``d + 1``.  It spends through a release plan like the library's families.
"""

from __future__ import annotations

import numbers

import numpy as np

from dpglass._validation import Interval
from dpglass.models._base import CLASSES, EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.privacy.ledger import LedgerEntry, PrivacyLedger
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.plan import Integers, PlannedRelease
from dpglass.privacy.rng import check_random_state
from dpglass.registry import EstimatorSpec

__all__ = ["TOY_SPEC", "ToyNaiveBayes"]


def toy_plan(epsilon: float, n_features: int) -> list:
    mech = DiscreteLaplaceMechanism(float(epsilon), sensitivity=n_features + 1)
    entry = LedgerEntry("class x feature counts", "discrete laplace", epsilon=float(epsilon),
                        sensitivity=float(n_features + 1), scale=mech.scale, curve=mech.curve)
    return [PlannedRelease(entry, mech.randomise, Integers(), ("counts",))]


class ToyNaiveBayes(ClassifierBase):
    """Test-only DP naive Bayes on 0/1 features, K classes (see the module)."""

    _private = True
    _max_classes = 255
    _parameter_constraints = {
        "epsilon": EPSILON,
        "smoothing": [Interval(numbers.Real, 0, None, closed="neither")],
        "classes": CLASSES,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, epsilon=1.0, smoothing=1.0, classes=None, random_state=None):
        self.epsilon = epsilon
        self.smoothing = smoothing
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y):
        self._validate_params()
        X01, y01 = self._check_fit_data(X, y)
        K, d = len(self.classes_), X01.shape[1]
        exact = np.zeros((K, d + 1), dtype=np.int64)
        for k in range(K):
            rows = X01[y01 == k]
            exact[k, 0] = rows.shape[0]
            exact[k, 1:] = rows.sum(axis=0)
        plan = toy_plan(self.epsilon, d)
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=0.0).follow(plan)
        noisy = ledger.release(plan[0], exact, check_random_state(self.random_state))
        self.counts_ = np.asarray(noisy, dtype=np.int64)
        self.privacy_ledger_ = ledger
        return self

    def _log_tables(self):
        a = float(self.smoothing)
        size = np.maximum(self.counts_[:, 0], 0).astype(float)
        ones = np.clip(self.counts_[:, 1:], 0, size[:, None]).astype(float)
        p1 = (ones + a) / (size[:, None] + 2 * a)
        prior = (size + a) / (size.sum() + a * len(size))
        return np.log(prior), np.log(p1), np.log1p(-p1)

    def predict_proba(self, X):
        X01 = self._check_predict_data(X).astype(float)
        prior, l1, l0 = self._log_tables()
        score = prior[None, :] + X01 @ l1.T + (1 - X01) @ l0.T
        score -= score.max(axis=1, keepdims=True)
        p = np.exp(score)
        return p / p.sum(axis=1, keepdims=True)

    def to_text(self) -> str:
        lines = [f"ToyNaiveBayes over {len(self.classes_)} classes (test-only)"]
        for k, label in enumerate(self.classes_):
            lines.append(f"  class {label}: noisy count {int(self.counts_[k, 0])}")
        return "\n".join(lines)

    def _state_to_dict(self) -> dict:
        return {"counts": self.counts_.tolist()}

    def _state_from_dict(self, data: dict) -> None:
        self.counts_ = np.asarray(data["counts"], dtype=np.int64)


#: A registry entry for the toy (tests monkeypatch it into ``dpglass.registry.REGISTRY``).
TOY_SPEC = EstimatorSpec(
    name="toy-multiclass-nb",
    target="multiclass_toy:ToyNaiveBayes",
    private=True,
    guarantee="pure epsilon-DP (test-only toy)",
    description="Test-only DP naive Bayes over K classes (tests/multiclass_toy.py).",
    test_params={"epsilon": 1.0},
)
