"""Which features a model relies on: permutation importance and top-k feature sets.

Paper 001 (Table III) compares the features a DP rule list relies on with
those of its non-private reference through the intersection of their top-k
permutation importances.  These are the curator's analyses of fitted models
on labelled data, not releases.
"""

from __future__ import annotations

import numpy as np

__all__ = ["permutation_importance", "top_features", "used_features"]


def used_features(model) -> set:
    """The columns a fitted rule list tests (any condition of any rule)."""
    return {c.feature for r in model.rules_ for c in r.conditions}


def permutation_importance(model, X, y, rng, n_repeats=5, columns=None) -> np.ndarray:
    """Mean drop of accuracy when one column is permuted (Breiman 2001), one value per column.

    Only ``columns`` are permuted (default: :func:`used_features` of a rule
    list, else every column), in increasing order, ``n_repeats`` permutations
    of the records each, drawn from ``rng``; every other column gets 0 (a
    column the model does not read cannot change its predictions).
    """
    base = float(np.mean(model.predict(X) == y))
    imp = np.zeros(X.shape[1])
    if columns is None:
        columns = used_features(model) if hasattr(model, "rules_") else range(X.shape[1])
    for j in sorted(columns):
        drops = []
        for _ in range(n_repeats):
            Xp = X.copy()
            Xp[:, j] = X[rng.permutation(len(y)), j]
            drops.append(base - float(np.mean(model.predict(Xp) == y)))
        imp[j] = np.mean(drops)
    return imp


def top_features(imp, k, ties="positive", rng=None) -> set:
    """The k features of largest importance.

    ``ties``: ``"positive"`` keeps only features of positive importance (the
    top-k may be shorter); ``"random"`` breaks ties (zero importances) at
    random with ``rng``; ``"column"`` by column order.

    Examples
    --------
    >>> import numpy as np
    >>> sorted(top_features(np.array([0.0, 0.3, 0.1, 0.0]), 3))
    [1, 2]
    >>> sorted(top_features(np.array([0.0, 0.3, 0.1, 0.0]), 3, ties="column"))
    [0, 1, 2]
    """
    if ties == "random":
        order = np.lexsort((rng.random(len(imp)), -imp))
    else:
        order = np.argsort(-imp, kind="stable")
    if ties == "positive":
        order = order[imp[order] > 0]
    return set(order[:k].tolist())
