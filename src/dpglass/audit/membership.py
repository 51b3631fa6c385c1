"""Membership inference: distributional overfitting, threshold attacks, one-run canary audits.

Four tools that other parts of dpglass (experiments, model reports) reuse:

:func:`distributional_overfitting`
    The vulnerability ``V`` of paper 001 (Ly et al.), Section V-E, after
    Yaghini, Kulynych & Troncoso ("Disparate Vulnerability", 2019): for each
    label ``y``, ``tau(y) = 1/2 sum_r |P[r | y, M=1] - P[r | y, M=0]|`` (the
    total-variation distance between the distributions of "which rule caught
    the record" for training (M=1) and non-training (M=0) records of label
    ``y``), and ``V = 1/2 + 1/2 sum_y P[y] tau(y)``.  ``V = 0.5`` means the
    model's outputs look the same inside and outside the training set.
    :func:`model_vulnerability` computes it for a fitted rule list (the rule
    that catches each record) or any classifier (its predicted probability).
:func:`threshold_attack`
    A loss/confidence threshold attack (Yeom et al. 2018; evaluated at low FPR
    as Carlini et al. 2022 recommend): members are guessed when their score
    (e.g. :func:`loss_scores`, the log-likelihood of the true label) is at
    least a threshold; returns the ROC curve, its AUC and the TPR at given FPRs.
:func:`shadow_model_attack`
    The shadow-model attack of Shokri et al. (2017) with a random-forest
    attack model on what a black-box attacker sees of a record (the model's
    P(class 1) and the record's label), as ART's
    ``MembershipInferenceBlackBox`` does; :func:`attack_split` cuts the data
    into the target's members, its non-members and the shadow models' pool.
:func:`one_run_epsilon_lower_bound` and :func:`canary_audit`
    The one-run audit of Steinke, Nasr & Jagielski, "Privacy Auditing with
    One (1) Training Run" (NeurIPS 2023, arXiv:2305.08846): ``m`` canaries are
    included independently with probability 1/2, the model is trained once,
    the auditor guesses "in" for the ``k+`` highest scores and "out" for the
    ``k-`` lowest (abstaining on the rest), and the number of correct guesses
    is converted into an epsilon lower bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from scipy import optimize, special, stats

from dpglass.exceptions import InvalidParameterError
from dpglass.privacy.rng import check_random_state

__all__ = [
    "Vulnerability",
    "distributional_overfitting",
    "model_vulnerability",
    "AttackResult",
    "loss_scores",
    "threshold_attack",
    "one_run_p_value",
    "one_run_epsilon_lower_bound",
    "OneRunResult",
    "canary_audit",
    "canary_audit_estimator",
    "attack_split",
    "prediction_features",
    "shadow_model_attack",
]


# ----------------------------------------------------- distributional overfitting
@dataclass(frozen=True)
class Vulnerability:
    """``tau`` per label, the label prior used and ``V`` (paper 001, Sec. V-E)."""

    tau: dict
    prior: dict
    vulnerability: float


def distributional_overfitting(groups_in, y_in, groups_out, y_out, *, weights_in=None,
                               weights_out=None) -> Vulnerability:
    """Distributional-overfitting vulnerability ``V`` from group labels.

    Parameters
    ----------
    groups_in, groups_out : array-like
        For each training (``in``) and held-out (``out``) record, the model
        output the adversary sees: for a rule list the index of the rule that
        catches it (the paper's ``r``), for another model e.g. its predicted
        probability.
    y_in, y_out : array-like
        True labels.
    weights_in, weights_out : array-like or None
        How many records each entry stands for (e.g. the counts of the
        distinct rows of a dataset); None: one each.  Whole numbers give the
        same float as the expanded records (every sum is exact).

    Returns
    -------
    Vulnerability
        ``tau[y] = 1/2 sum_r |P[r|y, in] - P[r|y, out]|`` for every label
        present in both sets, ``prior[y]`` = the label's frequency over both
        sets, ``V = 1/2 + 1/2 sum_y prior[y] tau[y]``.

    Examples
    --------
    >>> v = distributional_overfitting([0, 0, 1, 1], [0, 1, 0, 1], [0, 0, 1, 1], [0, 1, 0, 1])
    >>> v.vulnerability
    0.5
    >>> distributional_overfitting([0, 0], [1, 1], [1, 1], [1, 1]).vulnerability
    1.0
    >>> distributional_overfitting([0, 1], [1, 1], [1], [1], weights_in=[3, 1], weights_out=[2]).vulnerability
    0.875
    """
    gi, go = np.asarray(groups_in), np.asarray(groups_out)
    yi, yo = np.asarray(y_in), np.asarray(y_out)
    wi = np.ones(len(gi)) if weights_in is None else np.asarray(weights_in, dtype=np.float64)
    wo = np.ones(len(go)) if weights_out is None else np.asarray(weights_out, dtype=np.float64)
    if not (gi.shape[0] == yi.shape[0] == wi.shape[0]) or not (go.shape[0] == yo.shape[0] == wo.shape[0]):
        raise InvalidParameterError("groups, labels and weights must have the same length.")
    _, codes = np.unique(np.concatenate([gi, go]), return_inverse=True)
    codes = codes.ravel()
    ci, co = codes[: len(gi)], codes[len(gi):]
    n_groups = int(codes.max()) + 1 if codes.size else 1
    total = float(np.sum(wi) + np.sum(wo))
    tau, prior = {}, {}
    for lab in np.unique(np.concatenate([yi, yo])):
        key = lab.item() if hasattr(lab, "item") else lab
        w_in, w_out = np.where(yi == lab, wi, 0.0), np.where(yo == lab, wo, 0.0)
        s_in, s_out = float(np.sum(w_in)), float(np.sum(w_out))
        prior[key] = (s_in + s_out) / total
        if s_in == 0 or s_out == 0:
            continue
        c_in = np.bincount(ci, weights=w_in, minlength=n_groups)
        c_out = np.bincount(co, weights=w_out, minlength=n_groups)
        present = (c_in + c_out) > 0
        tau[key] = float(0.5 * np.abs(c_in[present] / s_in - c_out[present] / s_out).sum())
    v = 0.5 + 0.5 * sum(prior[k] * t for k, t in tau.items())
    return Vulnerability(tau, prior, float(v))


def _rule_index(model, X) -> np.ndarray:
    X = np.asarray(X)
    which = np.full(X.shape[0], len(model.rules_), dtype=np.int64)
    for i in range(len(model.rules_) - 1, -1, -1):
        which[np.asarray(model.rules_[i].matches(X), dtype=bool)] = i
    return which


def model_vulnerability(model, X_in, y_in, X_out, y_out) -> Vulnerability:
    """:func:`distributional_overfitting` of a fitted model.

    For a rule list (a model with ``rules_``) the group of a record is the
    index of the first rule that catches it (the default rule last), as in
    paper 001; otherwise it is the model's predicted probability of class 1.
    """
    if hasattr(model, "rules_"):
        gi, go = _rule_index(model, X_in), _rule_index(model, X_out)
    else:
        gi = np.round(model.predict_proba(X_in)[:, 1], 12)
        go = np.round(model.predict_proba(X_out)[:, 1], 12)
    return distributional_overfitting(gi, y_in, go, y_out)


# --------------------------------------------------------- threshold attack
@dataclass(frozen=True)
class AttackResult:
    """ROC of a threshold attack: guess "member" when ``score >= threshold``."""

    fpr: np.ndarray
    tpr: np.ndarray
    thresholds: np.ndarray
    auc: float
    tpr_at_fpr: dict
    advantage: float  # max over thresholds of TPR - FPR


def loss_scores(model, X, y) -> np.ndarray:
    """Membership scores: the log-likelihood of the true label (higher: more likely a member).

    ``log P(y | x)`` from ``predict_proba``, clipped at ``1e-12``; the negative
    of the cross-entropy loss of Yeom et al. (2018).
    """
    proba = np.asarray(model.predict_proba(X))
    y = np.asarray(y)
    classes = list(getattr(model, "classes_", [0, 1]))
    idx = np.array([classes.index(v) for v in y])
    return np.log(np.clip(proba[np.arange(len(y)), idx], 1e-12, 1.0))


def threshold_attack(scores_in, scores_out, fprs: Sequence[float] = (0.001, 0.01, 0.1)) -> AttackResult:
    """ROC, AUC and TPR at the given FPRs of the attack ``score >= threshold``.

    ``tpr_at_fpr[f]`` is the largest TPR over thresholds whose FPR is at most
    ``f`` (no interpolation between thresholds: with discrete scores, such as
    a rule list's, interpolating would need randomised guessing).

    Examples
    --------
    >>> res = threshold_attack([3.0, 2.0, 1.0], [0.0, -1.0, 2.0], fprs=[0.0, 0.34])
    >>> res.tpr_at_fpr[0.0], round(res.tpr_at_fpr[0.34], 3), round(res.auc, 3)
    (0.333, 1.0, 0.833)
    """
    si, so = np.asarray(scores_in, float), np.asarray(scores_out, float)
    if si.size == 0 or so.size == 0:
        raise InvalidParameterError("threshold_attack needs at least one member and one non-member score.")
    thr = np.unique(np.concatenate([si, so]))[::-1]
    thr = np.concatenate([[np.inf], thr])
    si_s, so_s = np.sort(si), np.sort(so)
    tpr = 1.0 - np.searchsorted(si_s, thr, side="left") / si.size
    fpr = 1.0 - np.searchsorted(so_s, thr, side="left") / so.size
    auc = float(np.trapz(tpr, fpr)) if hasattr(np, "trapz") else float(np.trapezoid(tpr, fpr))
    at = {}
    for f in fprs:
        ok = fpr <= f + 1e-12
        at[f] = round(float(tpr[ok].max()), 3) if ok.any() else 0.0
    return AttackResult(fpr, tpr, thr, auc, at, float(np.max(tpr - fpr)))


# ------------------------------------------------------------ shadow models
def attack_split(n: int, rng):
    """``(members, non_members, shadow_pool)`` row indices: half the records for the target, half for shadows.

    One permutation drawn from ``rng``: its first half is the target's part,
    split in half into members (its training set) and non-members; its
    second half is the pool the shadow models train on.
    """
    perm = rng.permutation(n)
    half = n // 2
    target_part, shadow_pool = perm[:half], perm[half:]
    return target_part[: half // 2], target_part[half // 2 :], shadow_pool


def prediction_features(model, X, y) -> np.ndarray:
    """What a black-box attacker sees of a record: the model's P(class 1) and the record's label."""
    return np.column_stack([model.predict_proba(X)[:, 1], y])


def shadow_model_attack(make_model: Callable, X, y, members, non_members, shadow_pool, *, n_shadows: int, rng,
                        n_trees: int = 100, features: Callable = prediction_features):
    """Membership scores of a shadow-model attack (Shokri et al. 2017) on a target model.

    Each of ``n_shadows`` shadow models (``make_model("shadow <s>")``) trains
    on a random half of ``shadow_pool`` (drawn from ``rng``), labelling its
    training records in and the other half out; a random forest of
    ``n_trees`` trees (seeded from ``rng``) learns membership from
    ``features(model, X, y)``.  The target (``make_model("target")``) trains
    on ``members``.

    Returns
    -------
    scores_in, scores_out : ndarray
        The attack's P(member) for the target's members and non-members.
    """
    from sklearn.ensemble import RandomForestClassifier

    X, y = np.asarray(X), np.asarray(y)
    feats, member = [], []
    for s in range(n_shadows):
        p = rng.permutation(shadow_pool)
        s_in, s_out = p[: len(p) // 2], p[len(p) // 2 :]
        shadow = make_model(f"shadow {s}")
        shadow.fit(X[s_in], y[s_in])
        feats += [features(shadow, X[s_in], y[s_in]), features(shadow, X[s_out], y[s_out])]
        member += [np.ones(len(s_in)), np.zeros(len(s_out))]
    attack = RandomForestClassifier(n_estimators=n_trees, random_state=int(rng.integers(2**31 - 1)), n_jobs=1)
    attack.fit(np.vstack(feats), np.concatenate(member))
    target = make_model("target")
    target.fit(X[members], y[members])
    scores_in = attack.predict_proba(features(target, X[members], y[members]))[:, 1]
    scores_out = attack.predict_proba(features(target, X[non_members], y[non_members]))[:, 1]
    return scores_in, scores_out


# --------------------------------------------------------------- one run
def one_run_p_value(m: int, r: int, v: int, epsilon: float, delta: float = 0.0) -> float:
    """P-value of ``v`` correct guesses out of ``r`` under an ``(epsilon, delta)``-DP null.

    Steinke, Nasr & Jagielski (2023), Theorem 3.1: with ``m`` canaries
    included by independent fair coins and an auditor making ``r`` guesses,
    an ``(eps, delta)``-DP algorithm gives

        P[#correct >= v] <= f(v) + 2 m delta * max_{i = 1..v} (f(v - i) - f(v)) / i,

    where ``f(k) = P[Binomial(r, e**eps / (1 + e**eps)) >= k]``.  For
    ``delta = 0`` this is the binomial tail ``f(v)``: each guess is no better
    than randomised response at ``eps``.

    Examples
    --------
    >>> round(one_run_p_value(1000, 100, 73, 1.0), 3)   # mean of Bin(100, 0.731) is 73.1
    0.561
    """
    if not 0 <= v <= r <= m:
        raise InvalidParameterError(f"need 0 <= v <= r <= m; got m={m}, r={r}, v={v}.")
    q = float(special.expit(epsilon))
    tail = float(stats.binom.sf(v - 1, r, q))
    if delta == 0 or v == 0:
        return min(tail, 1.0)
    i = np.arange(1, v + 1)
    between = stats.binom.sf(v - i - 1, r, q) - tail  # P[v > W >= v - i]
    alpha = float(np.max(between / i))
    return min(tail + alpha * delta * 2 * m, 1.0)


def one_run_epsilon_lower_bound(m: int, r: int, v: int, delta: float = 0.0, confidence: float = 0.95) -> float:
    """The largest epsilon rejected at ``confidence`` by :func:`one_run_p_value` (0 if none).

    With probability at least ``confidence`` the algorithm is not
    ``(eps, delta)``-DP for any ``eps`` below the returned value.

    Examples
    --------
    >>> round(one_run_epsilon_lower_bound(1000, 1000, 731), 2)   # RR at eps=1, 1000 guesses
    0.88
    >>> one_run_epsilon_lower_bound(100, 100, 50)
    0.0
    """
    sig = 1.0 - confidence
    if one_run_p_value(m, r, v, 0.0, delta) > sig:
        return 0.0
    hi = 1.0
    while one_run_p_value(m, r, v, hi, delta) <= sig:
        hi *= 2.0
        if hi > 1e3:
            return math.inf
    return float(optimize.brentq(lambda e: one_run_p_value(m, r, v, e, delta) - sig, 0.0, hi, xtol=1e-6))


@dataclass(frozen=True)
class OneRunResult:
    """Result of a one-run canary audit."""

    epsilon_lower: float
    m: int
    guesses: int
    correct: int
    k_plus: int
    k_minus: int
    delta: float
    confidence: float
    claim: tuple | None = None
    scores: np.ndarray = field(default=None, repr=False)
    included: np.ndarray = field(default=None, repr=False)

    @property
    def violation(self) -> bool:
        return self.claim is not None and self.epsilon_lower > self.claim[0]


def canary_audit(train: Callable, X, y, X_canary, y_canary, score: Callable, *, k_plus=None, k_minus=None,
                 delta: float = 0.0, confidence: float = 0.95, claim=None, rng=None) -> OneRunResult:
    """One-run audit (Steinke, Nasr & Jagielski 2023) with given canaries.

    Each canary is added to ``(X, y)`` with probability 1/2 (independent fair
    coins), ``train(X_train, y_train)`` is called **once**, and
    ``score(model, X_canary, y_canary)`` ranks the canaries (higher: more
    likely included).  The ``k_plus`` highest are guessed in, the ``k_minus``
    lowest out (ties broken at random), the rest abstain; the correct guesses
    give the bound of :func:`one_run_epsilon_lower_bound`.  ``k_plus`` and
    ``k_minus`` must be fixed before the run (default: a fifth of the canaries
    each); choosing them after seeing the scores would need a correction.
    """
    rng = check_random_state(rng)
    Xc, yc = np.asarray(X_canary), np.asarray(y_canary)
    m = len(yc)
    k_plus = max(1, m // 5) if k_plus is None else int(k_plus)
    k_minus = max(1, m // 5) if k_minus is None else int(k_minus)
    if k_plus + k_minus > m:
        raise InvalidParameterError(f"k_plus + k_minus = {k_plus + k_minus} exceeds the {m} canaries.")
    included = rng.random(m) < 0.5
    X_tr = np.concatenate([np.asarray(X), Xc[included]])
    y_tr = np.concatenate([np.asarray(y), yc[included]])
    model = train(X_tr, y_tr)
    s = np.asarray(score(model, Xc, yc), dtype=float)
    order = np.lexsort((rng.random(m), -s))  # descending score, random tie-break
    guess = np.zeros(m, dtype=int)
    guess[order[:k_plus]] = 1
    guess[order[m - k_minus:]] = -1
    truth = np.where(included, 1, -1)
    r = int((guess != 0).sum())
    v = int((guess * truth == 1).sum())
    eps = one_run_epsilon_lower_bound(m, r, v, delta, confidence)
    return OneRunResult(eps, m, r, v, k_plus, k_minus, float(delta), float(confidence), claim, s, included)


def canary_audit_estimator(estimator, X, y, *, n_canaries: int = 200, k_plus=None, k_minus=None,
                           confidence: float = 0.95, rng=None) -> OneRunResult:
    """One-run audit of a dpglass estimator with random mislabelled canaries.

    Canaries are uniformly random 0/1 rows with uniformly random labels
    (outliers whose label only the canary itself supports); the score is the
    log-likelihood of the canary's label (:func:`loss_scores`).  The claim and
    delta are the estimator's (``delta=None``: its public default, 1e-8).
    """
    from sklearn.base import clone

    rng = check_random_state(rng)
    X = np.asarray(X)
    y = np.asarray(y)
    Xc = (rng.random((n_canaries, X.shape[1])) < 0.5).astype(X.dtype)
    yc = rng.integers(0, 2, n_canaries).astype(y.dtype)
    params = estimator.get_params(deep=False)
    fixed = {}
    delta = 0.0
    if "delta" in params:
        delta = params["delta"] if params["delta"] is not None else 1.0 / float(len(y) + n_canaries) ** 2
        fixed["delta"] = delta
    g_train = rng.spawn(1)[0]

    def train(Xt, yt):
        model = clone(estimator).set_params(**fixed)
        if "random_state" in params:
            model.set_params(random_state=g_train)
        return model.fit(Xt, yt)

    claim = (float(params["epsilon"]), float(delta)) if "epsilon" in params else None
    return canary_audit(train, X, y, Xc, yc, loss_scores, k_plus=k_plus, k_minus=k_minus, delta=delta,
                        confidence=confidence, claim=claim, rng=rng)
