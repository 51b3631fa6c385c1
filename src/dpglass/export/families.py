"""Each exportable family's decision as :mod:`dpglass.export.ir` expressions, read from its released state.

Post-processing of a verified model only: nothing here reads data.  Each function mirrors its family's
``decision_function`` / ``predict_proba`` / ``predict`` term for term, in the same order (the tests compare them
bit for bit on every row), and says where a tie goes:

- rule lists: the first rule that holds (``Rule.prediction``); scores are the rule's ``predict_proba`` row;
- smooth boosting: the vote margins of ``decision_function``; two classes ``classes_[1]`` iff the vote sum is
  > 0 (``predict_proba``'s ``(1 + m) / 2`` against ``1 - (1 + m) / 2`` is exact there), K classes the first
  class of most votes;
- DP-GBDT (trees on bins: clipped numbers against edges, 0/1 columns) and dp-gam (a shape per column read at
  the column's bin: clipped numbers against edges, category codes, 0/1, the missing bin), DP logistic
  regression: the scores of ``decision_function``; two classes ``classes_[1]`` iff
  the log-odds reach the smallest double at which ``predict_proba``'s ``expit`` beats ``1 - expit``
  (:func:`expit_threshold`), K classes the first class of largest score (see :data:`SOFTMAX_NOTE`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.special import expit

from dpglass.export.inputs import plain_inputs, schema_inputs
from dpglass.export.ir import (
    Above,
    Argmax,
    Bit,
    Const,
    Decision,
    Missing,
    Not,
    NotExportableError,
    Op,
    Rules,
    Threshold,
    Truth,
    case,
    conjunction,
    negate,
    total,
)

__all__ = ["EXPORTABLE", "NOT_EXPORTABLE", "SOFTMAX_NOTE", "decision_of", "expit_threshold"]

#: Why a class is not exported (by class name).
_TEACHERS = ("its released model is a logistic student fitted to noisy teacher votes, whose coefficients are free "
             "floats (not on a power-of-two grid), so an export could not promise predict's sums to the last bit; "
             "this export covers rule lists, smooth boosting, dp-gbdt, dp-gam and DP logistic regression")
NOT_EXPORTABLE = {
    "SubsampleAggregateClassifier": f"a teacher ensemble (subsample-and-aggregate): {_TEACHERS}",
    "DPBaggingClassifier": f"a teacher ensemble (DP-Bag): {_TEACHERS}",
    "LDPHistogramClassifier": "a local-DP histogram classifier: its decision is a plug-in rule over noisy "
                              "per-cell frequencies of a grid, not one of the glass-box forms this export writes",
}

#: K-class softmax models: the export's argmax of scores and predict's argmax of probabilities.
SOFTMAX_NOTE = ("predict takes the first class of largest softmax probability; the export takes the first class of "
                "largest score, the same class unless two scores are within about 1e-15 of each other (then the "
                "softmax may round them to one probability)")


@functools.lru_cache(maxsize=1)
def expit_threshold() -> float:
    """The smallest double ``s`` at which ``predict_proba``'s two-class rule picks ``classes_[1]``: ``expit(s) >
    1 - expit(s)`` (``expit(0) = 0.5`` is a tie, which goes to ``classes_[0]``).  Found by bisection over the
    doubles in ``(0, 1]``, ordered by their bits, with the same ``scipy.special.expit`` as the models."""
    def picks_one(s: float) -> bool:
        p1 = float(expit(np.float64(s)))
        return p1 > 1.0 - p1

    lo, hi = 0, int(np.float64(1.0).view(np.int64))  # picks_one(lo) false, picks_one(hi) true
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if picks_one(float(np.int64(mid).view(np.float64))):
            hi = mid
        else:
            lo = mid
    t = float(np.int64(hi).view(np.float64))
    assert picks_one(t) and not picks_one(math.nextafter(t, 0.0)) and not picks_one(-t)
    return t


def _labels(model) -> tuple:
    return tuple(c.item() if hasattr(c, "item") else c for c in model.classes_)


def _names(n: int, prefix: str = "score") -> tuple:
    return (prefix,) if n == 1 else tuple(f"{prefix}_{k}" for k in range(n))


def _literal(feature: int, value: bool):
    return Bit(int(feature)) if value else Not(Bit(int(feature)))


# ----------------------------------------------------------------------------------------------- rule lists
def rule_list_decision(model) -> Decision:
    rules = list(model.rules_)
    conds = [conjunction(_literal(c.feature, c.value) for c in r.conditions) for r in rules]
    probas = [r.proba() for r in rules] + [model.default_rule_.proba()]
    K = len(model.classes_)
    scores = []
    for k in range(K):
        expr = Const(float(probas[-1][k]))
        for cond, p in zip(reversed(conds), reversed(probas[:-1])):
            expr = case(cond, Const(float(p[k])), expr)
        scores.append(expr)
    pred = Rules(tuple((c, int(r.prediction)) for c, r in zip(conds, rules)), int(model.default_rule_.prediction))
    return Decision(type(model).__name__, _labels(model), _names(K, "proba"), tuple(scores), pred,
                    "predict_proba: the class shares of the first rule's counts (clipped at 0)")


# ---------------------------------------------------------------------------------------------- boosting
def _boost_tree(tree, leaf, node: int = 0):
    """A 0/1 tree of smooth boosting: ``leaf(value)`` at its leaves (``x[f] == 1`` goes right)."""
    f = tree.feature[node]
    if f < 0:
        return leaf(tree.value[node])
    return case(Bit(int(f)), _boost_tree(tree, leaf, tree.right[node]), _boost_tree(tree, leaf, tree.left[node]))


def _hypothesis(h, leaf):
    """One weak hypothesis as an expression: ``leaf(label)`` where it votes ``label`` (a +/-1 sign, or a
    class code for K > 2)."""
    if hasattr(h, "left"):
        return _boost_tree(h, leaf)
    if hasattr(h, "sign"):  # two classes: sign where x = 1, -sign where x = 0
        return leaf(int(h.sign)) if h.feature < 0 else case(Bit(int(h.feature)), leaf(int(h.sign)),
                                                               leaf(-int(h.sign)))
    return leaf(int(h.hi)) if h.feature < 0 else case(Bit(int(h.feature)), leaf(int(h.hi)), leaf(int(h.lo)))


def boosting_decision(model) -> Decision:
    T = float(len(model.estimators_))
    K = len(model.classes_)
    name = type(model).__name__
    if K == 2:  # decision_function = (sum of +/-1 votes) / T; predict classes_[1] iff the sum is > 0
        votes = [_hypothesis(h, lambda v: Const(float(v))) for h in model.estimators_]
        score = Op("/", total(votes[0], votes[1:]), Const(T))
        return Decision(name, _labels(model), ("score",), (score,), Threshold(0, 0.0, strict=True),
                        "decision_function: the vote margin in [-1, 1] (> 0 favours the second class)")
    scores = []
    for k in range(K):  # 2 * votes_k / T - 1, votes counted tree by tree
        votes = [_hypothesis(h, lambda v, k=k: Const(1.0 if v == k else 0.0)) for h in model.estimators_]
        scores.append(Op("-", Op("/", Op("*", Const(2.0), total(votes[0], votes[1:])), Const(T)), Const(1.0)))
    return Decision(name, _labels(model), _names(K), tuple(scores), Argmax(tuple(range(K))),
                    "decision_function: each class's vote share minus the share voting for another class")


# ---------------------------------------------------------------------------------------- log-odds models
def _log_odds_decision(model, scores, first_zero: bool, meaning: str, notes=()) -> Decision:
    """Two classes (one score): a threshold at :func:`expit_threshold`; K classes: argmax (ties first)."""
    labels = _labels(model)
    if len(scores) == 1:
        t = expit_threshold()
        why = (f"predicts {labels[1]} when score >= {t!r}, the smallest log-odds at which predict_proba's "
               f"expit(score) > 1 - expit(score): below it the two probabilities tie, and a tie goes to {labels[0]}")
        return Decision(type(model).__name__, labels, ("score",), tuple(scores), Threshold(0, t), meaning,
                        (*notes, why))
    if first_zero:
        scores = [Const(0.0), *scores]
    return Decision(type(model).__name__, labels, _names(len(scores)), tuple(scores),
                    Argmax(tuple(range(len(scores)))), meaning, (*notes, SOFTMAX_NOTE))


def clipped_above(j: int, t: float, bounds) -> object:
    """``clip(x_j, lo, hi) > t`` (a bounded numeric column as DP-GBDT and dp-gam bin it): always true below the
    lower bound, never at or above the upper one, else ``x_j > t``."""
    lo, hi = float(bounds[0]), float(bounds[1])
    if t < lo:
        return Truth(True)
    if t >= hi:
        return Truth(False)
    return Above(j, float(t))


def _gbdt_right(model, j: int, cut: int):
    """``bin > cut`` for feature j (``apply_bins``: a 0/1 column's bin is its value; a numeric column's bin is
    the number of edges below its value clipped to the bounds, so ``bin > cut`` iff ``clip(x) > edge[cut]``)."""
    bounds = model.bounds_[j]
    if bounds is None:
        return Bit(j) if cut == 0 else Truth(False)
    return clipped_above(j, float(model.edges_[j][cut]), bounds)


def _gbdt_tree(model, tree, node: int = 0):
    m = tree.feature.size
    if node >= m:
        return Const(float(tree.value[node - m]))
    right = _gbdt_right(model, int(tree.feature[node]), int(tree.cut[node]))
    return case(right, _gbdt_tree(model, tree, 2 * node + 2), _gbdt_tree(model, tree, 2 * node + 1))


def gbdt_decision(model) -> Decision:
    init = np.atleast_1d(np.asarray(model.init_score_, dtype=np.float64))
    C = init.size
    trees = [_gbdt_tree(model, t) for t in model.estimators_]
    scores = [total(Const(float(init[c])), trees[c::C]) for c in range(C)]
    return _log_odds_decision(model, scores, False, "decision_function: the boosted log-odds of the second class"
                              if C == 1 else "decision_function: each class's boosted score (softmax: predict_proba)")


def _columns(model) -> tuple:
    """``(bounds, categories, missing)`` of a model's own columns, one entry per feature (None, None, False: a
    0/1 column; models without these attributes read 0/1 columns)."""
    d = int(model.n_features_in_)
    return (list(getattr(model, "bounds_", None) or [None] * d),
            list(getattr(model, "categories_", None) or [None] * d),
            list(getattr(model, "missing_", None) or [False] * d))


def _gam_term(model, j: int, k: int):
    """Feature j's contribution to score k: its shape at the feature's bin (``apply_bins``: the number of edges
    below the value, clipped to the bounds for a numeric column; the missing bin last)."""
    bounds, categories, missing = (c[j] for c in _columns(model))
    shape = np.asarray(model.shapes_[j], dtype=np.float64).reshape(-1, len(model.classes_) - 1)[:, k]
    edges = [float(e) for e in getattr(model, "edges_", [[0.5]] * (j + 1))[j]]
    if bounds is not None:
        above = [clipped_above(j, e, bounds) for e in edges]
    elif categories is not None:
        above = [Above(j, e) for e in edges]  # a code's bin is the code
    else:
        above = [Bit(j)]  # a 0/1 column: its bin is its value
    term = Const(float(shape[len(above)]))
    for b in range(len(above) - 1, -1, -1):  # bin b when no edge from b on is below the value
        term = case(negate(above[b]), Const(float(shape[b])), term)
    return case(Missing(j), Const(float(shape[len(edges) + 1])), term) if missing else term


def gam_decision(model) -> Decision:
    intercept = np.atleast_1d(np.asarray(model.intercept_, dtype=np.float64))
    scores = []
    for k in range(intercept.size):  # intercept, then each feature's contribution in its bin, feature by feature
        terms = [_gam_term(model, j, k) for j in range(int(model.n_features_in_))]
        scores.append(total(Const(float(intercept[k])), terms))
    return _log_odds_decision(model, scores, True, "decision_function: the log-odds of the second class"
                              if len(scores) == 1 else "decision_function: each class's score (the first class's "
                              "is 0; softmax: predict_proba)")


def _exact_sums(coef, step) -> bool:
    """Whether every sum of coefficients is exact in any order: multiples of a power-of-two grid step, with
    total magnitude under 2^52 steps."""
    if step is None or not step > 0 or math.frexp(step)[0] != 0.5:
        return False
    units = np.asarray(coef, dtype=np.float64) / step
    return bool(np.all(units == np.round(units)) and np.abs(units).sum(axis=-1).max() < 2.0**52)


def logistic_decision(model) -> Decision:
    coef = np.atleast_2d(np.asarray(model.coef_, dtype=np.float64))
    intercept = np.atleast_1d(np.asarray(model.intercept_, dtype=np.float64))
    scores = []
    for k in range(coef.shape[0]):  # the features' coefficients where they are 1, then the intercept
        terms = [case(Bit(j), Const(float(c)), Const(0.0)) for j, c in enumerate(coef[k]) if c != 0.0]
        scores.append(Op("+", total(terms[0], terms[1:]) if terms else Const(0.0), Const(float(intercept[k]))))
    notes = () if _exact_sums(coef, getattr(model, "grid_step_", None)) else (
        ("the coefficients are not on a power-of-two grid: the export adds them in feature order, which may "
         "differ from predict's sum in the last bits"),)
    meaning = ("decision_function: the log-odds of the second class" if len(scores) == 1
               else "decision_function: each class's score (softmax: predict_proba)")
    return _log_odds_decision(model, scores, False, meaning, notes)


#: The exported decision of each class, by class name.
EXPORTABLE = {
    "GreedyRuleListClassifier": rule_list_decision,
    "DPRuleListClassifier": rule_list_decision,
    "SmoothBoostClassifier": boosting_decision,
    "DPGradientBoostingClassifier": gbdt_decision,
    "DPGAMClassifier": gam_decision,
    "DPLogisticRegression": logistic_decision,
}


def decision_of(model):
    """``(Decision, Inputs)`` of a fitted model: a DPPipeline's model over its schema's raw columns, a
    PrivateGridSearch's selected model, or a model on its own feature columns.

    Raises :class:`NotExportableError` with the reason for a model this export does not write.
    """
    name = type(model).__name__
    if name == "PrivateGridSearch":
        return decision_of(model.best_estimator_)
    if name == "DPPipeline":
        decision, _ = decision_of(model.model_)
        return decision, schema_inputs(model.encoding_)
    if name not in EXPORTABLE:
        why = NOT_EXPORTABLE.get(name, "not a model this export knows")
        raise NotExportableError(f"{name} cannot be exported to SQL or Python: {why}. Exportable: "
                                 f"{', '.join(sorted(EXPORTABLE))}, and any of them inside a DPPipeline.")
    return EXPORTABLE[name](model), plain_inputs(model.feature_names(), *_columns(model))
