"""A differentially private generalised additive model on raw columns (numeric with public bounds, categorical
codes, 0/1; missing values in their own bin): one shape per column, learned by private cyclic boosting (dp-gam).

:class:`DPGAMClassifier` learns ``F_k(x) = b_k + sum_j s_j[bin_j(x_j), k]`` for the classes but the first
(``classes_[0]`` is the reference, score 0; two classes: the log-odds of ``classes_[1]``), as DP-EBM does
(Nori, Caruana et al. 2021, "Accuracy, Interpretability, and Differential Privacy via Explainable Boosting"):
``b`` from one noisy class-count table, then ``n_cycles`` passes over the features, each visit of feature ``j``
releasing the noisy per-bin sums (a 0/1 column: over ``x_j = 0`` and ``x_j = 1``) of the records' gradients and
Hessians of the softmax loss (exact discrete Gaussian noise on a public grid) and adding a damped Newton step to
``s_j``.
Feature groups (public: e.g. the raw column each 0/1 column encodes) say how the shapes are read: the printout
and :meth:`DPGAMClassifier.explain` are per group.  The privacy argument is in docs/privacy.md, "DP-GAM (dp-gam)".
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import InstanceOf, Interval
from dpglass.models._base import CLASSES, EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.models.gam.columns import (
    bin_X,
    binned_fit_table,
    check_fit_data,
    exact_class_counts,
    is_plain,
    resolve_columns,
)
from dpglass.models.gam.first import FIELD as FIRST_FIELD
from dpglass.models.gam.fit import class_probabilities, fit_gam
from dpglass.models.gam.plan import (
    ACCOUNTANTS,
    FIRST_SHARE,
    QUANTILE_SHARE,
    gam_plan,
)
from dpglass.models.gam.readout import (
    bin_labels,
    explain_frame,
    resolve_groups,
    shape_lines,
)
from dpglass.models.gam.sizes import RULE_VERSION, is_auto
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state, is_replayable

__all__ = ["DPGAMClassifier"]


class DPGAMClassifier(ClassifierBase):
    """Differentially private additive model (a shape per column), K >= 2 classes, (epsilon, delta)-DP.

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget (> 0).
    delta : float in (0, 1) or None, default=None
        ``None``: the library's public default (1e-8).  Never 0: the sums carry Gaussian noise (a search with
        ``delta=0``, :class:`~dpglass.models.PrivateGridSearch`'s pure mode, refuses dp-gam before any run).
    feature_groups : list of str or None, default=None
        One public group name per feature (e.g. the raw column a 0/1 column encodes, as
        :class:`~dpglass.models.DPPipeline` passes them); None: each feature is its own group.  Groups change
        how the model is read (printout, :meth:`explain`), not what it learns.
    bounds : list or None, default=None
        One entry per feature, dp-gbdt's meaning: ``None`` for a 0/1 column (2 bins) or a categorical one,
        ``(low, high)`` for a numeric column with public bounds (values outside are clipped).  None: every
        feature is 0/1 (or categorical).
    categories : list or None, default=None
        One entry per feature: ``None``, or an int ``m >= 2``: the column holds the integer codes ``0..m-1`` of a
        categorical column (one bin per code; its ``bounds`` entry is None; any other value is refused).
    missing : list of bool or None, default=None
        One flag per feature: True lets the column hold missing values (NaN), which get their own bin (the last);
        elsewhere NaN is refused.  None: no column may hold NaN.
    max_bins : int or "auto", default="auto"
        Bins per numeric column (2..255): ``max_bins - 1`` cut points (16: measured on Adult's training part,
        docs/privacy.md, DP-GAM, "Defaults").  ``"auto"``: picked from the released class counts (see
        ``n_cycles``).
    binning : {"uniform", "quantile"}, default="uniform"
        ``"uniform"``: the equal-width grid inside the bounds (free).  ``"quantile"``: DP quantiles at
        ``k / max_bins``, released first in the plan with ``quantile_share`` of epsilon (dp-gbdt's step).
    quantile_share : float, default=0.1
        Share of epsilon for the quantiles (``binning="quantile"``).
    first_cycle : {"gradients", "counts", "auto"}, default="auto"
        ``"counts"``: before the cycles, one release of the class counts in every bin of every feature (a
        record moves one cell per feature: l2 sensitivity sqrt(d)), from which each shape starts at its
        naive-Bayes log-likelihood ratio; the cycles then correct them.  ``"gradients"``: the shapes start at 0.
        ``"auto"``: picked from the released class counts (see ``n_cycles``).
    first_share : float, default=0.5
        Share of the plan's zCDP for the count-based first cycle (``first_cycle="counts"``; with ``count_share``
        below 1).
    n_cycles : int or "auto", default="auto"
        Passes over the features (each visit of a feature is two releases); 0: no visit (the initial scores,
        and with ``first_cycle="counts"`` the naive-Bayes shapes, are the model).  ``"auto"`` (here, in
        ``first_cycle`` or ``max_bins``): the class counts are released first at a fixed cost (``count_share``
        of the budget's zCDP; ``"auto"``: 1/(d + 1)) and a public rule of ``n_hat * epsilon`` per (bin, class)
        and per class (``n_hat`` the released total) picks the sizes: a private naive Bayes (count-based start,
        no cycles, 2 or 4 bins) on small tables, ``"gradients"``, 2 cycles and 16 bins on large ones; the rest
        of the plan is calibrated under RDP (:mod:`dpglass.models.gam.sizes`; docs/privacy.md, DP-GAM,
        "Defaults").  The file names the rule's version (``sizes_rule_``).
    learning_rate : float, default=1.0
        Shrinkage of each Newton step, in (0, 1].
    hessian_floor : float or "auto", default="auto"
        ``lambda`` in a step ``-G / (max(H, 0) + lambda)`` (> 0): bins of few records are shrunk towards 0
        instead of following their noise.  ``"auto"``: ``1.5 sqrt(n_cycles * n_features)`` standard deviations
        of a gradient sum's noise (a public function of the parameters: noise alone then moves a record's score
        by about 2/3, and a small table stays at its majority class); with "auto" sizes 0.75 of them (small
        tables take the naive-Bayes branch there).
    max_step : float, default=2.0
        Each step is clipped to +-this before shrinkage.
    hessian_share : float, default=0.1
        Share of each visit's zCDP for the Hessian sums (the rest: the gradient sums).
    count_share : float or "auto", default="auto"
        Share of the plan's zCDP for the class counts (the initial scores: on a small table, most of what it
        can learn).  ``"auto"``: 0.25, or with "auto" sizes 1/(d + 1).
    accountant : {"auto", "rdp", "pld"}, default="auto"
        How the releases compose (Gaussian curves): each visit's budget is the largest whose plan composes to
        ``(epsilon, delta)``; ``"auto"``: RDP, or PLD when it allows more, epsilon <= 5 and its noise in grid
        units is small (a public rule: PLD's compositions then take a fraction of a second).
    classes : list of K >= 2 labels or None, default=None
        The public label set in order (``classes_[0]`` is the reference class).  None: the sorted labels of y.
    random_state : None, int, SeedSequence or Generator, default=None

    Attributes
    ----------
    intercept_ : ndarray of shape (K - 1,)
        The initial scores of ``classes_[1:]`` (log-odds of the noisy class counts against ``classes_[0]``).
    shapes_ : list of n_features_in_ ndarrays of shape (n_bins_j, K - 1)
        ``shapes_[j][b, k]``: feature j's contribution in its bin ``b`` to the score of ``classes_[k + 1]`` (a 0/1
        column: ``b = x_j``; a categorical one: ``b`` the code; a numeric one: the number of edges below the
        clipped value; the missing bin last).
    edges_ : list of ndarray
        Each feature's cut points (0/1: [0.5]; categorical: the codes' midpoints; numeric: public or released).
    bounds_, categories_, missing_ : list
        The resolved column declarations, one entry per feature.
    class_counts_ : list of K ints
        The released noisy class counts.
    visit_sums_ : list of (ndarray, ndarray)
        Per visit (cycle by cycle, feature by feature) the released per-bin gradient and Hessian sums,
        (n_bins_j, K - 1) each: what the shapes are computed from.
    feature_groups_ : list of str
        Each feature's group.
    visit_epsilon_ : float
        Each visit is ``visit_epsilon_**2 / 2``-zCDP (the zCDP of a pure ``visit_epsilon_``-DP release).
    hessian_floor_ : float
    sizes_rule_ : int or None
        With "auto" sizes, the version of the rule that picked them (:data:`~dpglass.models.gam.sizes.RULE_VERSION`
        for a new fit; a file names it as ``sizes_rule``, absent for version 1); None otherwise.
    privacy_ledger_ : PrivacyLedger
    classes_, n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((5000, 4)) < 0.5).astype(int)
    >>> y = X[:, 0] | X[:, 1]
    >>> clf = DPGAMClassifier(epsilon=1.0, random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.7
    True
    >>> clf.privacy_ledger_.total()[0] <= 1.0
    True
    """

    _private = True
    _distributed_fit = True  # learns from the pattern table: in memory or reduced on a Dask cluster
    _worker_stats = True  # on Dask the 0/1 table stays on the workers; every sum is a statistic of its parts (gam.fit)
    _max_classes = 255  # the softmax loss learns any K the label code allows
    _parameter_constraints = {
        "epsilon": EPSILON,
        "delta": [Interval(numbers.Real, 0, 1, closed="neither"), None],  # Gaussian noise: never 0
        "feature_groups": [InstanceOf((list, tuple), "a list of group names, one per feature"), None],
        "bounds": [InstanceOf((list, tuple), "a list with one (low, high) or None per feature"), None],
        "categories": [InstanceOf((list, tuple), "a list with one int m >= 2 or None per feature"), None],
        "missing": [InstanceOf((list, tuple), "a list of one boolean per feature"), None],
        "max_bins": [Interval(numbers.Integral, 2, 255, closed="both"), ["auto"]],
        "binning": [["uniform", "quantile"]],
        "quantile_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "first_cycle": [["gradients", "counts", "auto"]],
        "first_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "n_cycles": [Interval(numbers.Integral, 0, None, closed="left"), ["auto"]],
        "learning_rate": [Interval(numbers.Real, 0, 1, closed="right")],
        "hessian_floor": [Interval(numbers.Real, 0, None, closed="neither"), ["auto"]],
        "max_step": [Interval(numbers.Real, 0, None, closed="neither")],
        "hessian_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "count_share": [Interval(numbers.Real, 0, 1, closed="neither"), ["auto"]],
        "accountant": [list(ACCOUNTANTS)],
        "classes": CLASSES,
        "random_state": RANDOM_STATE,
    }

    def __init__(self, *, epsilon=1.0, delta=None, feature_groups=None, bounds=None, categories=None, missing=None,
                 max_bins="auto", binning="uniform", quantile_share=QUANTILE_SHARE, first_cycle="auto",
                 first_share=FIRST_SHARE, n_cycles="auto", learning_rate=1.0,
                 hessian_floor="auto", max_step=2.0, hessian_share=0.1, count_share="auto", accountant="auto",
                 classes=None, random_state=None):
        self.epsilon = epsilon
        self.delta = delta
        self.feature_groups = feature_groups
        self.bounds = bounds
        self.categories = categories
        self.missing = missing
        self.max_bins = max_bins
        self.binning = binning
        self.quantile_share = quantile_share
        self.first_cycle = first_cycle
        self.first_share = first_share
        self.n_cycles = n_cycles
        self.learning_rate = learning_rate
        self.hessian_floor = hessian_floor
        self.max_step = max_step
        self.hessian_share = hessian_share
        self.count_share = count_share
        self.accountant = accountant
        self.classes = classes
        self.random_state = random_state

    def fit(self, X, y):
        """Fit the shapes; every release is recorded in ``privacy_ledger_``.

        ``X`` and ``y`` may be a dask DataFrame and Series (``pip install "dpglass[dask]"``): they are reduced
        to their pattern table on the cluster, and the model is the in-memory one for the same ``random_state``.

        Returns
        -------
        self
        """
        self._validate_params()
        rng = check_random_state(self.random_state)
        params = self.get_params(deep=False)
        if is_plain(params):  # every feature 0/1: the 0/1 pattern table, in memory or through Dask
            data = table = self._fit_table(X, y)
            resolve_columns(self, table.n_features)
            self.edges_ = [np.array([0.5])] * table.n_features
        else:
            if self.__dict__.get("_schema_classes") is None and self.classes is None:
                self._warn_undeclared_classes()
            # the binned table is built once the plan's edges (if any) are released
            table, data = None, check_fit_data(self, X, y)
        d, K = self.n_features_in_, len(self.classes_)
        self.feature_groups_ = resolve_groups(self.feature_groups, self.feature_names())
        delta = self._resolve_delta(self.delta)
        self._warn_about_guarantee(float(self.epsilon))
        plan = gam_plan(params, d, K)  # public parameters only
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=delta, accountant=plan.accountant).follow(plan.steps)
        if table is None and (plan.bins or not plan.pending):
            table = binned_fit_table(self, data, plan, ledger, rng)
        released = None
        if plan.pending:  # "auto" sizes: the class counts first, then the plan of the rule's branch
            released = ledger.release(plan.counts, exact_class_counts(self, data, table, plan), rng)
            plan = gam_plan(params, d, K, released)
            ledger.follow(plan.steps)
            if table is None:
                table = binned_fit_table(self, data, plan, ledger, rng)
        result = fit_gam(table, plan, ledger, rng, released)
        self.class_counts_ = [int(c) for c in result.class_counts]
        self.first_counts_ = None if result.first is None else [int(c) for c in result.first]
        self.visit_sums_ = result.visits
        self.intercept_, self.shapes_ = result.intercept, result.shapes
        self.visit_epsilon_, self.hessian_floor_, self.delta_ = plan.x, plan.hessian_floor, delta
        self.sizes_rule_ = RULE_VERSION if is_auto(params) else None
        self.privacy_ledger_ = ledger
        self.privacy_ledger_.replayable = is_replayable(rng)
        return self

    @property
    def accountant_(self) -> str:
        """The accountant used (the ledger's)."""
        return self.privacy_ledger_.accountant

    # ------------------------------------------------------------ prediction
    def _scores(self, X) -> np.ndarray:
        """``(n, K - 1)``: the intercepts plus each feature's contribution in its bin, feature by feature."""
        X01 = self._check_predict_data(X) if self._plain() else bin_X(self, X)
        F = np.tile(np.asarray(self.intercept_, dtype=np.float64), (X01.shape[0], 1))
        for j in range(X01.shape[1]):
            F += self.shapes_[j][X01[:, j]]
        return F

    def _plain(self) -> bool:
        check_is_fitted(self)
        return is_plain(self.get_params(deep=False))

    def decision_function(self, X):
        """Two classes: the log-odds of ``classes_[1]``.  K classes: ``(n, K)`` scores in ``classes_`` order
        (column 0, the reference class's, is 0).  Each is the sum of :meth:`explain`'s contributions."""
        F = self._scores(X)
        if F.shape[1] == 1:
            return F[:, 0]
        return np.concatenate([np.zeros((F.shape[0], 1)), F], axis=1)

    def predict_proba(self, X):
        """The softmax of the scores (two classes: the logistic function of the log-odds), ``classes_`` order."""
        return class_probabilities(self._scores(X))

    # -------------------------------------------------------------- reading
    def explain(self):
        """The shapes as a tidy DataFrame: columns ``group, feature, bin, value, class, contribution``, one row
        per feature, bin and scored class (``classes_[1:]``; the reference class's score is 0), plus the
        intercept rows (group and feature ``"(intercept)"``, bin and value missing).  ``bin`` is the bin's code
        (0/1 columns: the value; categorical: the code; the missing bin last) and ``value`` says it in the
        column's terms (``"0"``, ``"3"``, ``"(37.5, 42]"``, ``"missing"``).  A record's score for a class is its
        intercept plus the contributions in its features' bins."""
        check_is_fitted(self)
        return explain_frame(self.intercept_, self.shapes_, self.feature_names(), self.feature_groups_,
                             [str(c) for c in self.classes_], bin_labels(self))

    def to_text(self) -> str:
        """The shape functions, group by group, with feature names and class labels."""
        check_is_fitted(self)
        eps, delta = self.privacy_ledger_.total()
        labels = [str(c) for c in self.classes_]
        d, n_groups = len(self.feature_groups_), len(set(self.feature_groups_))
        plain = self._plain()
        at = "at its value (0 or 1)" if plain else "in its bin"
        T = len(self.visit_sums_) // max(d, 1)
        head = (f"DPGAMClassifier: additive model, one shape per feature ({d} features in {n_groups} groups), "
                f"{T} cycle{'' if T == 1 else 's'} of private Newton boosting, "
                f"({eps:.4g}, {delta:.3g})-DP [{self.privacy_ledger_.accountant}]")
        if len(labels) == 2:
            how = (f"score = intercept + each feature's contribution {at}; predict {labels[1]} if "
                   f"score > 0, else {labels[0]}")
        else:
            how = (f"score({labels[0]}) = 0 (the reference class); score(c) = intercept(c) + each feature's "
                   f"contribution {at}, for each other class c; predict the class of highest score "
                   "(probabilities: the softmax of the scores)")
        lines = shape_lines(self.intercept_, self.shapes_, self.feature_names(), self.feature_groups_, labels,
                            None if plain else bin_labels(self))
        return "\n".join([head, how, *lines])

    # ----------------------------------------------------------- serialising
    def _state_to_dict(self) -> dict:
        rows = lambda a: [[float(v) for v in row] for row in np.asarray(a)]  # noqa: E731
        edges = {} if self._plain() else {"edges": [[float(v) for v in e] for e in self.edges_]}
        first = {} if self.first_counts_ is None else {FIRST_FIELD: [int(c) for c in self.first_counts_]}
        return {
            **edges,
            **first,
            "class_counts": [int(c) for c in self.class_counts_],
            "visits": [{"gradient_sums": rows(G), "hessian_sums": rows(H)} for G, H in self.visit_sums_],
            "intercept": [float(v) for v in self.intercept_],
            "shapes": [rows(s) for s in self.shapes_],
            "visit_epsilon": float(self.visit_epsilon_),
            "hessian_floor": float(self.hessian_floor_),
            "delta": float(self.delta_),
            # "auto" sizes: the rule the fit applied, written from version 2 on (absent: version 1)
            **({} if getattr(self, "sizes_rule_", None) in (None, 1) else {"sizes_rule": int(self.sizes_rule_)}),
        }

    @classmethod
    def _params_from_dict(cls, params: dict) -> dict:
        for key in ("feature_groups", "classes", "categories", "missing"):
            if params.get(key) is not None:
                params = dict(params, **{key: list(params[key])})
        if params.get("bounds") is not None:
            params = dict(params, bounds=[None if b is None else tuple(b) for b in params["bounds"]])
        return params

    def _state_from_dict(self, data: dict) -> None:
        self.class_counts_ = [int(c) for c in data["class_counts"]]
        self.first_counts_ = [int(c) for c in data[FIRST_FIELD]] if FIRST_FIELD in data else None
        self.visit_sums_ = [(np.array(v["gradient_sums"], dtype=np.float64),
                             np.array(v["hessian_sums"], dtype=np.float64)) for v in data["visits"]]
        self.intercept_ = np.array(data["intercept"], dtype=np.float64)
        C = len(self.classes_) - 1
        self.shapes_ = [np.array(s, dtype=np.float64).reshape(-1, C) for s in data["shapes"]]
        resolve_columns(self, self.n_features_in_)
        d = self.n_features_in_
        self.edges_ = ([np.array(e, dtype=np.float64) for e in data["edges"]] if "edges" in data
                       else [np.array([0.5])] * d)
        self.visit_epsilon_ = float(data["visit_epsilon"])
        self.hessian_floor_ = float(data["hessian_floor"])
        self.delta_ = float(data["delta"])
        self.sizes_rule_ = data.get("sizes_rule", 1) if is_auto(self.get_params(deep=False)) else None
        self.feature_groups_ = resolve_groups(self.feature_groups, self.feature_names())
