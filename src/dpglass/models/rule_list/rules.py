"""Typed rules and rule lists, printed as people read them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Condition", "Rule", "format_rule_list"]


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

    ``counts`` are (count of class 0, count of class 1) among the records the
    rule caught: exact for non-private models, noisy (Laplace) for DP models,
    as ``noisy`` says.  ``prediction`` is the index into ``classes_``.
    An empty ``conditions`` tuple is the default rule.
    """

    conditions: tuple[Condition, ...]
    prediction: int
    counts: tuple[float, float]
    noisy: bool = False

    def matches(self, X: np.ndarray) -> np.ndarray:
        mask = np.ones(X.shape[0], dtype=bool)
        for cond in self.conditions:
            mask &= cond.holds(X)
        return mask

    def proba(self) -> float:
        """P(class 1) from the (clipped) counts; 0.5 when both are <= 0."""
        c0, c1 = max(self.counts[0], 0.0), max(self.counts[1], 0.0)
        return 0.5 if c0 + c1 <= 0 else c1 / (c0 + c1)

    def describe(self, classes) -> tuple[str, str]:
        label = classes[self.prediction] if classes is not None else self.prediction
        word = "noisy counts" if self.noisy else "counts"
        c0, c1 = self.counts
        fmt = lambda v: f"{v:.0f}"  # noqa: E731  (noisy counts are integers: discrete Laplace)
        head = classes[0] if classes is not None else 0
        tail = classes[1] if classes is not None else 1
        return f"{label}", f"({word} {head}: {fmt(c0)}, {tail}: {fmt(c1)})"

    def to_dict(self) -> dict:
        return {
            "conditions": [{"feature": c.feature, "name": c.name, "value": c.value} for c in self.conditions],
            "prediction": int(self.prediction),
            "counts": [float(self.counts[0]), float(self.counts[1])],
            "noisy": bool(self.noisy),
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Rule":
        conds = tuple(Condition(int(c["feature"]), str(c["name"]), bool(c["value"])) for c in d["conditions"])
        return cls(conds, int(d["prediction"]), (float(d["counts"][0]), float(d["counts"][1])), bool(d["noisy"]))


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

    selected: list = field(default_factory=list)  # (candidate index, (c0, c1))
    default_counts: tuple = (0.0, 0.0)
    stop_reason: str = "max_length"
    ledger: object = None  # the PrivacyLedger of every release
    remaining_counts: list | None = None  # the Gini mechanisms' released remaining counts, step by step
