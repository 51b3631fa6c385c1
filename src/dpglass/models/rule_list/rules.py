"""Typed rules and rule lists, printed as people read them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Condition", "Rule", "format_rule_list", "majority"]


def majority(counts, noisy: bool) -> int:
    """The class a rule predicts from its counts: the largest count.

    A tie goes to the later class in a DP list (its noisy counts; for two
    classes: class 1 unless c0 > c1) and to the earlier class in a
    non-private list (class 0 unless c1 > c0), as the binary lists always
    did.  Public post-processing of the counts; the file verifier recomputes
    it.
    """
    best = 0
    for k in range(1, len(counts)):
        if counts[k] > counts[best] or (noisy and counts[k] == counts[best]):
            best = k
    return best


@dataclass(frozen=True)
class Condition:
    """``feature_name = 1`` (``value=True``) or its negation (``value=False``)."""

    feature: int
    name: str
    value: bool = True

    def __str__(self) -> str:
        return self.name if self.value else f"not {self.name}"

    def holds(self, X: np.ndarray) -> np.ndarray:
        return X[:, self.feature] == (1 if self.value else 0)


@dataclass(frozen=True)
class Rule:
    """A conjunction of conditions predicting one class.

    ``counts`` are the counts of each class (in ``classes_`` order: K values)
    among the records the rule caught: exact for non-private models, noisy
    (discrete Laplace) for DP models, as ``noisy`` says.  ``prediction`` is
    the index into ``classes_`` (:func:`majority` of the counts).  An empty
    ``conditions`` tuple is the default rule.
    """

    conditions: tuple[Condition, ...]
    prediction: int
    counts: tuple[float, ...]
    noisy: bool = False

    def matches(self, X: np.ndarray) -> np.ndarray:
        mask = np.ones(X.shape[0], dtype=bool)
        for cond in self.conditions:
            mask &= cond.holds(X)
        return mask

    def proba(self) -> list[float]:
        """P(each class) from the counts clipped at 0; uniform when they are all <= 0.

        Classes 1..K-1 get their share of the clipped total and class 0 the
        rest (for two classes: ``[1 - p1, p1]``), so that a row sums to 1.
        Where the largest share is tied (equal counts, or all <= 0), the
        classes tied with the rule's prediction are lowered by the smallest
        float step so that the argmax of the probabilities (ties to the first
        class) is the class the rule predicts and the printout names.  Only
        ties move: the clipping keeps the counts' order, so any other class
        is below the prediction by at least 1/total.
        """
        clipped = [max(float(c), 0.0) for c in self.counts]
        total = sum(clipped)
        if total <= 0:
            rest = [1.0 / len(clipped)] * (len(clipped) - 1)
        else:
            rest = [c / total for c in clipped[1:]]
        p = [max(1.0 - sum(rest), 0.0), *rest]
        top = p[self.prediction]
        below = math.nextafter(top, 0.0)
        return [v if k == self.prediction else min(v, below if k < self.prediction else top)
                for k, v in enumerate(p)]

    def describe(self, classes) -> tuple[str, str]:
        label = classes[self.prediction] if classes is not None else self.prediction
        word = "noisy counts" if self.noisy else "counts"
        names = classes if classes is not None else range(len(self.counts))
        # noisy counts are integers (discrete Laplace)
        return f"{label}", f"({word} {', '.join(f'{k}: {v:.0f}' for k, v in zip(names, self.counts))})"

    def to_dict(self) -> dict:
        return {
            "conditions": [{"feature": c.feature, "name": c.name, "value": c.value} for c in self.conditions],
            "prediction": int(self.prediction),
            "counts": [float(c) for c in self.counts],
            "noisy": bool(self.noisy),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Rule":
        conds = tuple(Condition(int(c["feature"]), str(c["name"]), bool(c["value"])) for c in d["conditions"])
        return cls(conds, int(d["prediction"]), tuple(float(c) for c in d["counts"]), bool(d["noisy"]))


def format_rule_list(rules, default_rule, classes) -> str:
    """The list in paper 001's style: ``if A and not B then 1   (counts ...)``."""
    lines = []
    for i, rule in enumerate(rules):
        label, counts = rule.describe(classes)
        cond = " and ".join(str(c) for c in rule.conditions)
        lines.append((f"{'if' if i == 0 else 'else if'} {cond} then {label}", counts))
    label, counts = default_rule.describe(classes)
    lines.append((f"else {label}", counts))
    width = max(len(l) for l, _ in lines)
    return "\n".join(f"{l.ljust(width)}   {c}" for l, c in lines)


@dataclass
class RuleListRelease:
    """What a rule-list learner outputs: candidate indices, counts, ledger."""

    selected: list = field(default_factory=list)  # (candidate index, (c_0, ..., c_{K-1}))
    default_counts: tuple = (0.0, 0.0)
    stop_reason: str = "max_length"
    ledger: object = None  # the PrivacyLedger of every release
    remaining_counts: list | None = None  # the Gini mechanisms' released remaining counts, step by step
