"""The weak-learner assumption of smooth boosting, replayed from a fitted model (paper 002, Figure 1).

Smooth boosting needs every round's weak hypothesis to have an advantage over
random guessing under the measure it was chosen on.  A fitted
:class:`~dpglass.models.SmoothBoostClassifier` exposes no per-round
information; :func:`advantage_trace` replays the measures from the committee
and the training data.  It reads the private training data: it is the
curator's analysis (e.g. for a figure), not a release.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["advantage_trace"]


def advantage_trace(model, X01, y01, X_test=None, y_test=None):
    """Per round, the advantage of LazyBB's hypothesis on the measure it was chosen on.

    Replays the smooth weighting of :func:`dpglass.models.boosting.estimator.smooth_weighting`
    from the fitted committee and the training data: for round t, ``p_t`` is
    the normalised kappa-dense measure, ``advantage[t] = 1/2 - err_{p_t}(h_t)``
    and ``best[t] = 1/2 - min_h err_{p_t}(h)`` over every 1-Rule (what a
    non-private weak learner would have reached).  This reads the private
    training data: it is the curator's analysis for Figure 1, not a release
    (the model exposes no per-round information).

    Returns
    -------
    advantage, best : ndarray of shape (tau,)
    train_margin : ndarray of shape (n,)
        Normalised margins ``y_i sum_t h_t(x_i) / tau`` in [-1, 1].
    test_margin : ndarray or None
    """
    from dpglass.models.boosting.weak_learners import FeatureMatrix, literal_errors
    from dpglass.models.boosting.estimator import smooth_weighting

    X01 = np.asarray(X01, dtype=np.uint8)
    y01 = np.asarray(y01, dtype=np.uint8)
    F = FeatureMatrix(X01)
    n = len(y01)
    target = float(model.density) * n
    y_sign = 2 * y01.astype(np.int64) - 1
    margin = np.zeros(n, dtype=np.int64)
    tau = len(model.estimators_)
    adv, best = np.empty(tau), np.empty(tau)
    for t, h in enumerate(model.estimators_):
        p = smooth_weighting(margin, t, density=float(model.density), learning_rate=float(model.learning_rate),
                             target=target)
        p = p / p.sum()
        pred = h.predict(X01).astype(np.int64)
        adv[t] = 0.5 - float(p[pred != y_sign].sum())
        if model.weak_learner == "stump":
            best[t] = 0.5 - float(literal_errors(F, y01, p).min())
        else:
            best[t] = math.nan
        margin += y_sign * pred
    test_margin = None
    if X_test is not None:
        Xt = np.asarray(X_test, dtype=np.uint8)
        votes = sum(h.predict(Xt).astype(np.int64) for h in model.estimators_)
        test_margin = (2 * np.asarray(y_test, dtype=np.int64) - 1) * votes / tau
    return adv, best, margin / tau, test_margin
