"""Differentially private gradient boosted trees on 0/1 and numeric features.

:class:`DPGradientBoostingClassifier` boosts complete binary trees for the
log-loss: the binary one (one tree a round), or for K >= 3 classes the softmax
(multinomial deviance) with one tree per class in every round.  Numeric columns come with public ``bounds`` and are cut at
``max_bins - 1`` public points (an equal-width grid inside the bounds) or at
DP quantiles paid from the budget; 0/1 columns (``bounds`` entry None) are cut
at 0.5.  Two learners:

``variant="newton"`` (default)
    Trees one after another on all records.  Each level's splits are chosen
    by the exponential mechanism over (feature, cut) with utility
    ``|G_left| + |G_right|`` (sums of gradients ``p - y``, sensitivity 1), or
    at random (``split="random"``, data-independent: the whole budget goes to
    the leaves).  Leaf values are Newton steps ``-G~ / (H~ + lambda)`` from
    noisy per-leaf gradient and Hessian sums (exact discrete Laplace on a
    public grid), shrunk by ``learning_rate``.
``variant="dpboost"``
    DPBoost (Li, Wu, Wen, He, AAAI 2020): ensembles of ``trees_per_ensemble``
    trees, each tree on its own disjoint subset of the records
    (``subset_selection="random"``: a public random partition;
    ``"gradient"``: a per-record pre-selection by gradient from the records
    not yet used), splits by the exponential mechanism on the gain (unit
    Hessians, sensitivity ``3 g*^2``), geometric leaf clipping, Laplace leaf
    noise.

Both compose their releases by ``accountant``: with ``delta > 0`` the default
``"auto"`` calibrates the whole run under PLD and under RDP (where the
split selections count as bounded-range, ``eps^2/8``-zCDP) and keeps the one
that lets each tree spend more; ``delta = 0`` is basic composition.

Both learn from the binned pattern table (:mod:`dpglass.models.gbdt.binned`:
the distinct bin-code rows and labels with their record counts), built in
memory or, for a dask DataFrame and Series, on a Dask cluster: the same
table, so the same model for the same ``random_state``.

The privacy argument is in docs/privacy.md, section "DP gradient boosted trees".
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils.validation import check_is_fitted, validate_data

from dpglass._validation import Interval
from dpglass.aggregates.parts import TableParts
from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.models._base import (
    CLASSES,
    DELTA_OR_NONE,
    EPSILON,
    RANDOM_STATE,
    ClassifierBase,
)
from dpglass.models._binning import fit_edges, memory_grid_counts
from dpglass.models.gbdt.binned import DaskData, binned_rows
from dpglass.models.gbdt.budget import Public, budget, gbdt_plan, resolved_sizes
from dpglass.models.gbdt.fit import Binned, class_probabilities, fit_dpboost, fit_newton
from dpglass.models.gbdt.trees import (
    BinnedTree,
    apply_bins,
    check_feature_bounds,
    check_tree_arrays,
    leaf_index,
)
from dpglass.privacy.accounting import CHOICES as ACCOUNTANT_CHOICES
from dpglass.privacy.ledger import PrivacyLedger
from dpglass.privacy.rng import check_random_state, is_replayable

__all__ = ["DPGradientBoostingClassifier"]


class DPGradientBoostingClassifier(ClassifierBase):
    """Differentially private gradient boosted trees (log-loss, K >= 2 classes), numeric features with public bounds.

    Two classes: one tree a round on the binary log-loss (the score of
    ``classes_[1]``; that of ``classes_[0]`` is 0).  K >= 3 classes: the
    softmax loss on one score per class; each round fits K trees, tree k to
    the gradients ``p_k - 1[y = k]`` and Hessians ``p_k (1 - p_k)``, and
    releases each level's splits, the leaf gradient sums and the leaf Hessian
    sums of the K trees together, at the joint sensitivity of one record's K
    terms (l1 at most 2 and ``1 - 1/K``: docs/privacy.md, "K classes").

    Parameters
    ----------
    epsilon : float, default=1.0
        Total privacy budget (> 0).
    delta : float or None, default=None
        ``None``: 1e-8 (a public constant; n is private).  ``0``: pure
        epsilon-DP (basic composition).  Used by the tight accountants only.
    variant : {"newton", "dpboost"}, default="newton"
    n_estimators : int or "auto", default="auto"
        Number of trees (>= 1).  ``"auto"``: a public function of epsilon,
        ``clip(round(50 epsilon), 10, 50)`` (``variant="newton"``; 50 for
        DPBoost), chosen on held-out training data (docs/results/gbdt).
    max_depth : int, default=1
        Depth of every (complete) tree (>= 1).
    learning_rate : float or "auto", default="auto"
        Shrinkage in (0, 1].  ``"auto"``: ``min(1, 25 / n_estimators)``
        (``variant="newton"``; 0.1 for DPBoost).
    bounds : list or None, default=None
        One entry per feature: a public ``(low, high)`` for a numeric column
        (values outside are clipped to it, silently: whether any value lies
        outside is a fact about the data), or None for a 0/1 column.  ``None``: every column is 0/1.  A numeric column without
        bounds is refused with a message that says what to pass.
    max_bins : int, default=32
        Bins per numeric column (2..256): ``max_bins - 1`` cut points.
    binning : {"uniform", "quantile"}, default="uniform"
        ``"uniform"``: the equal-width grid inside the bounds (free).
        ``"quantile"``: DP quantiles (:func:`dpglass.privacy.quantile.dp_quantile`)
        at ``k / max_bins``, paid with ``quantile_share`` of epsilon.
    quantile_share : float, default=0.1
        Share of epsilon for the quantiles (``binning="quantile"``).
    split : {"exponential", "random"}, default="exponential"
        ``variant="newton"``: how splits are chosen.
    split_share : float, default=0.3
        ``variant="newton"``, ``split="exponential"``: share of each tree's
        budget for its splits (the rest for the leaves).
    hessian_share : float, default=0.3
        ``variant="newton"``: share of the leaves' budget for the Hessian sums.
    reg_lambda : float or None, default=None
        L2 regularisation lambda of the leaf values (> 0).  ``None``:
        ``variant="newton"``: four times the noise scale of the leaf gradient
        sums (a public function of the parameters: leaves of few records are
        shrunk towards 0 instead of following their noise;
        ``benchmarks/gbdt_lambda.py``), and for the trees up to eight times it
        where the intercept's noisy Hessian sums say a leaf holds few records
        against that noise (:func:`~dpglass.models.gbdt.budget.tree_lambda`:
        post-processing, free); ``"dpboost"``: 0.1.
    max_leaf_value : float, default=2.0
        ``variant="newton"``: leaf steps are clipped to +-this before shrinkage.
    trees_per_ensemble : int, default=10
        ``variant="dpboost"``: trees per ensemble (on disjoint records).
    subset_selection : {"random", "gradient"}, default="random"
        ``variant="dpboost"``: how each tree's records are chosen.
    gradient_clip : float, default=1.0
        ``variant="dpboost"``: g*, gradients are clipped to [-g*, g*].
    leaf_noise : {"laplace", "gaussian"}, default="laplace"
        ``variant="newton"``: noise of the leaf gradient and Hessian sums.
        ``"gaussian"``: exact discrete Gaussian of the same zCDP as the
        Laplace release (half its variance), for ``delta > 0`` with a tight
        accountant only.
    accountant : {"auto", "basic", "pld", "rdp"}, default="auto"
        How the releases compose (:mod:`dpglass.privacy.accounting`): each
        tree's budget (DPBoost: each ensemble's) is the largest whose whole
        run composes to ``(epsilon, delta)``.  ``"auto"``: whichever of
        ``"pld"`` and ``"rdp"`` allows more (ties: ``"pld"``); with
        ``delta = 0`` every choice is ``"basic"`` (``epsilon`` divided evenly).
        The ledger records the accountant used.
    classes : list of K >= 2 labels or None, default=None
        The public label set, in order.  None: the sorted labels of ``y``
        (treated as public schema).
    random_state : None, int, SeedSequence or Generator, default=None

    Attributes
    ----------
    estimators_ : list of BinnedTree
        Round by round; in a round, one tree per class in ``classes_`` order
        (two classes: one tree a round, for ``classes_[1]``).
    init_score_ : float or ndarray of shape (K,)
        The intercept (two classes), or the intercept of every class.
    edges_ : list of ndarray
        The cut points of every feature (0/1 columns: ``[0.5]``).
    privacy_ledger_ : PrivacyLedger
    reg_lambda_ : float
        The trees' lambda (``reg_lambda``, or the default's; the intercept's is the plan's).
    intercept_hessian_ : list of float or None
        The intercept's released Hessian sums when the trees' lambda was raised from them, else None.
    tree_epsilon_ : float
        ``newton``: each round's budget (two classes: each tree's); ``dpboost``: each ensemble's.
    accountant_ : str
        The accountant used (``"basic"``, ``"pld"`` or ``"rdp"``).
    classes_, n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([rng.uniform(0, 10, 4000), rng.random(4000) < 0.5])
    >>> y = ((X[:, 0] > 5) ^ (rng.random(4000) < 0.1)).astype(int)
    >>> clf = DPGradientBoostingClassifier(epsilon=1.0, bounds=[(0, 10), None], n_estimators=10,
    ...                                    random_state=0).fit(X, y)
    >>> float(clf.score(X, y)) > 0.8
    True
    >>> clf.privacy_ledger_.total()[0] <= 1.0
    True
    """

    _private = True
    _max_classes = 255  # the softmax loss learns any K the label code allows (one byte)
    _distributed_fit = True  # dask DataFrames: binned and reduced on the cluster (dpglass.models.gbdt.binned)
    _parameter_constraints = {
        "epsilon": EPSILON,
        "delta": DELTA_OR_NONE,
        "variant": [["newton", "dpboost"]],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left"), ["auto"]],
        "max_depth": [Interval(numbers.Integral, 1, 8, closed="both")],
        "learning_rate": [Interval(numbers.Real, 0, 1, closed="right"), ["auto"]],
        "bounds": [list, tuple, None],
        "max_bins": [Interval(numbers.Integral, 2, 256, closed="both")],
        "binning": [["uniform", "quantile"]],
        "quantile_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "split": [["exponential", "random"]],
        "split_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "hessian_share": [Interval(numbers.Real, 0, 1, closed="neither")],
        "reg_lambda": [Interval(numbers.Real, 0, None, closed="neither"), None],
        "max_leaf_value": [Interval(numbers.Real, 0, None, closed="neither")],
        "trees_per_ensemble": [Interval(numbers.Integral, 1, None, closed="left")],
        "subset_selection": [["random", "gradient"]],
        "gradient_clip": [Interval(numbers.Real, 0, None, closed="neither")],
        "leaf_noise": [["laplace", "gaussian"]],
        "accountant": [list(ACCOUNTANT_CHOICES)],
        "classes": CLASSES,
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self, *, epsilon=1.0, delta=None, variant="newton", n_estimators="auto", max_depth=1, learning_rate="auto",
        bounds=None, max_bins=32, binning="uniform", quantile_share=0.1, split="exponential", split_share=0.3,
        hessian_share=0.3, reg_lambda=None, max_leaf_value=2.0, trees_per_ensemble=10,
        subset_selection="random", gradient_clip=1.0, leaf_noise="laplace", accountant="auto", classes=None,
        random_state=None,
    ):
        self.epsilon = epsilon
        self.delta = delta
        self.variant = variant
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.learning_rate = learning_rate
        self.bounds = bounds
        self.max_bins = max_bins
        self.binning = binning
        self.quantile_share = quantile_share
        self.split = split
        self.split_share = split_share
        self.hessian_share = hessian_share
        self.reg_lambda = reg_lambda
        self.max_leaf_value = max_leaf_value
        self.trees_per_ensemble = trees_per_ensemble
        self.subset_selection = subset_selection
        self.gradient_clip = gradient_clip
        self.leaf_noise = leaf_noise
        self.accountant = accountant
        self.classes = classes
        self.random_state = random_state

    def _validate_params(self) -> None:
        # "bounds" is a list of pairs / None: checked by check_feature_bounds once d is known
        saved = self._parameter_constraints
        type(self)._parameter_constraints = {k: v for k, v in saved.items() if k != "bounds"}
        try:
            super()._validate_params()
        finally:
            type(self)._parameter_constraints = saved
        if self.bounds is not None and not isinstance(self.bounds, (list, tuple)):
            raise InvalidParameterError(
                f"The 'bounds' parameter of {type(self).__name__} must be a list with one (low, high) or None "
                f"per feature, or None. Got {self.bounds!r} instead.")

    # ------------------------------------------------------------------ data
    def _check_X(self, X, reset: bool, allow_empty: bool = False) -> np.ndarray:
        import scipy.sparse

        if scipy.sparse.issparse(X):
            raise DataValidationError(f"{type(self).__name__} takes a dense array or DataFrame, not a sparse matrix.")
        try:
            # numeric dtypes are kept (no float copy of a uint8 or int array): binning converts a chunk at a time
            X = validate_data(self, X, reset=reset, dtype="numeric", ensure_all_finite="allow-nan",
                              ensure_min_samples=0 if allow_empty else 1)
        except DataValidationError:
            raise
        except ValueError as exc:
            raise DataValidationError(str(exc)) from exc
        return X

    def _check_fit(self, X, y):
        from dpglass._validation import check_labels

        declared = self.__dict__.get("_schema_classes")
        if declared is None:
            declared = self.classes
        # with a public label set a private fit takes zero records: whether fit succeeds must not depend on n
        Xf = self._check_X(X, reset=True, allow_empty=declared is not None)
        y01, classes = check_labels(y, classes=declared, max_classes=self._max_classes, model=type(self).__name__)
        if y01.shape[0] != Xf.shape[0]:
            raise DataValidationError(f"X has {Xf.shape[0]} rows but y has {y01.shape[0]} labels; they must match.")
        self.classes_ = classes
        return Xf, y01

    def _bins(self, Xf) -> np.ndarray:
        B = apply_bins(Xf, self.bounds_, self.edges_, type(self).__name__)
        return B

    def _resolved_sizes(self) -> tuple[int, float]:
        """``(n_estimators, learning_rate)`` with "auto" resolved (public functions of the parameters)."""
        return resolved_sizes(self.get_params(deep=False))

    # ------------------------------------------------------------------- fit
    def fit(self, X, y):
        """Fit the trees; every release is recorded in ``privacy_ledger_``.

        ``X`` and ``y`` may be a dask DataFrame of numeric columns and a dask
        Series of labels (``pip install "dpglass[dask]"``): the partitions are
        binned and reduced to the binned pattern table on the cluster
        (:mod:`dpglass.models.gbdt.binned`), and the model is the one the same
        data in memory gives with the same ``random_state``.

        Returns
        -------
        self
        """
        self._validate_params()
        rng = check_random_state(self.random_state)
        from dpglass.aggregates import is_distributed

        if self.__dict__.get("_schema_classes") is None and self.classes is None:
            self._warn_undeclared_classes()

        if is_distributed(X) or is_distributed(y):
            data = DaskData.check(self, X, y)
            d = len(data.columns)
        else:
            data = self._check_fit(X, y)
            d = data[0].shape[1]
        self.bounds_ = check_feature_bounds(self.bounds, d, type(self).__name__)
        delta = self._resolve_delta(self.delta)
        eps = float(self.epsilon)
        self._warn_about_guarantee(eps)
        K = len(self.classes_)  # the public label set
        self._check_leaf_noise(delta, K)
        self.n_estimators_, self.learning_rate_ = self._resolved_sizes()
        plan = gbdt_plan(self.get_params(deep=False), d, K)  # public parameters only
        # every release goes through the plan: its budget is checked before the first draw
        ledger = PrivacyLedger(epsilon=eps, delta=delta, accountant=plan.accountant).follow(plan.steps)
        self._fit_edges(data, plan, ledger, rng)
        self.reg_lambda_, self.intercept_hessian_ = plan.reg_lambda, None
        if self.variant == "newton":  # asks the table's parts for sums: on Dask they stay on the workers
            n_cuts = np.array([e.size for e in self.edges_], dtype=np.int64)
            parts = (data.parts(self, n_cuts) if isinstance(data, DaskData)
                     else TableParts.local(binned_rows(*data, self._bins, n_cuts)))  # linear: no sort
            result = fit_newton(parts, plan, ledger, rng, max_leaf=float(self.max_leaf_value), n_cuts=n_cuts)
            if result.tree_lambda != plan.reg_lambda:  # the trees' lambda rule fired: the file says from what
                self.reg_lambda_ = result.tree_lambda
                self.intercept_hessian_ = [float(v) for v in result.intercept_hessian]
        else:  # DPBoost draws per-entry subsets on the client: it reads the gathered table
            result = fit_dpboost(self._binned_table(data), plan, ledger, rng)
        self.estimators_ = result.trees
        self.init_score_ = float(result.init_score[0]) if K == 2 else np.asarray(result.init_score, dtype=np.float64)
        self.tree_epsilon_ = plan.x
        self.delta_ = delta
        self.privacy_ledger_ = ledger
        self.privacy_ledger_.replayable = is_replayable(rng)
        return self

    @property
    def accountant_(self) -> str:
        """The accountant used (the ledger's)."""
        return self.privacy_ledger_.accountant

    def _check_leaf_noise(self, delta: float, n_classes: int = 2) -> None:
        if self.leaf_noise == "gaussian" and (self.variant != "newton" or delta <= 0 or self.accountant == "basic"):
            raise InvalidParameterError(
                "leaf_noise='gaussian' is for variant='newton' with delta > 0 and accountant 'auto', 'pld' or "
                f"'rdp' (Gaussian releases compose by their curves); got variant={self.variant!r}, delta={delta!r}, "
                f"accountant={self.accountant!r}. Use leaf_noise='laplace' otherwise.")
        if self.leaf_noise == "gaussian" and n_classes > 2:
            raise InvalidParameterError(
                f"leaf_noise='gaussian' is for two classes; with {n_classes} classes a record moves {n_classes} "
                "coordinates of a round's leaf sums, and the discrete Gaussian's curve in the ledger is that of one "
                "coordinate. Use leaf_noise='laplace'.")

    def _budget(self, delta: float) -> tuple[float, str]:
        """``(each round's epsilon (DPBoost: each ensemble's), accountant used)``, from public parameters only."""
        params = dict(self.get_params(deep=False), delta=delta, bounds=self.bounds_)
        return budget(Public.of(params, len(self.bounds_), len(self.classes_)))

    def _binned_table(self, data) -> Binned:
        """The binned pattern table of the training data (:mod:`dpglass.models.gbdt.binned`), in memory or on Dask."""
        from dpglass.models.gbdt.binned import BitLayout, binned_table

        n_cuts = np.array([e.size for e in self.edges_], dtype=np.int64)
        if isinstance(data, DaskData):
            table = data.table(self)
        else:
            Xf, y01 = data
            table = binned_table(Xf, y01, self._bins, BitLayout(n_cuts))
        return Binned(table.bins, n_cuts, table.labels, table.counts)

    def _fit_edges(self, data, plan, ledger, rng) -> None:
        """Cut points of every feature: public ones, or the plan's DP quantiles of each numeric column
        (:func:`dpglass.models._binning.fit_edges`, shared with dp-gam)."""
        numeric = list(plan.public.numeric)

        def grid_source():
            from dpglass.privacy.quantile import GRID_CELLS

            if isinstance(data, DaskData):  # the grid counts of every numeric column, summed on the cluster
                return data.grid_counts(self, numeric, GRID_CELLS)
            return memory_grid_counts(data[0], self.bounds_, numeric, type(self).__name__)

        self.edges_ = fit_edges(self.bounds_, int(self.max_bins), plan.bins, numeric, grid_source, ledger, rng)

    # ------------------------------------------------------------ prediction
    def _scores(self, X) -> np.ndarray:
        """``(n, C)``: the boosted scores of the classes with trees, all K or for two classes ``classes_[1]``
        (intercept plus their trees' leaf values)."""
        check_is_fitted(self)
        B = self._bins(self._check_X(X, reset=False))
        init = np.atleast_1d(np.asarray(self.init_score_, dtype=np.float64))
        C = init.size
        F = np.empty((B.shape[0], C))
        F[:] = init
        for i, tree in enumerate(self.estimators_):
            F[:, i % C] += tree.value[leaf_index(B, tree.feature, tree.cut, tree.depth)]
        return F

    def decision_function(self, X):
        """Two classes: the boosted log-odds, the sum of the trees' leaf values.  K classes: ``(n, K)`` scores,
        column k that of ``classes_[k]``."""
        F = self._scores(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict_proba(self, X):
        """Probabilities of the classes, columns in ``classes_`` order: the softmax of the scores (two classes:
        the logistic function of the log-odds)."""
        return class_probabilities(self._scores(X))

    # -------------------------------------------------------------- printout
    def _condition(self, names, j, c) -> tuple[str, str]:
        if self.bounds_[j] is None:
            return f"{names[j]} = 0", f"{names[j]} = 1"
        t = self.edges_[j][c]
        return f"{names[j]} <= {t:.6g}", f"{names[j]} > {t:.6g}"

    def _tree_lines(self, tree: BinnedTree, names) -> list[str]:
        lines = []

        def walk(node, indent):
            pad = "  " * indent
            if node >= tree.feature.size:
                return
            left, right = 2 * node + 1, 2 * node + 2
            yes, no = self._condition(names, int(tree.feature[node]), int(tree.cut[node]))
            for cond, child in ((yes, left), (no, right)):
                if child >= tree.feature.size:
                    lines.append(f"{pad}if {cond}: {tree.value[child - tree.feature.size]:+.4f}")
                else:
                    lines.append(f"{pad}if {cond}:")
                    walk(child, indent + 1)

        walk(0, 1)
        return lines

    def to_text(self, max_trees: int | None = None) -> str:
        """Every tree as nested ifs with feature names, thresholds and leaf values (scores added); with K classes
        each tree names the class whose score it adds to."""
        names = self.feature_names()
        eps, delta = self.privacy_ledger_.total()
        n = len(self.estimators_)
        head = (f"DPGradientBoostingClassifier ({self.variant}): {n} tree{'' if n == 1 else 's'} of depth "
                f"{self.max_depth}, ({eps:.4g}, {delta:.3g})-DP [{self.privacy_ledger_.accountant}]")
        labels = [str(c) for c in self.classes_]
        C = np.size(self.init_score_)
        if C == 1:
            lines = [head, f"score = {self.init_score_:+.4f} + one leaf value per tree; predict {labels[1]} if "
                           f"score > 0, else {labels[0]}"]
        else:
            lines = [head, f"score(c) = intercept(c) + one leaf value per tree of c, for each class c ({C} trees a "
                           "round); predict the class of highest score (probabilities: the softmax of the scores)"]
            lines += [f"intercept({label}) = {v:+.4f}" for label, v in zip(labels, self.init_score_)]
        trees = self.estimators_ if max_trees is None else self.estimators_[:max_trees]
        for i, tree in enumerate(trees, 1):
            lines.append(f"tree {i}:" if C == 1 else f"tree {i}, round {(i - 1) // C + 1}, adds to score({labels[(i - 1) % C]}):")
            lines += self._tree_lines(tree, names)
        if len(trees) < len(self.estimators_):
            lines.append(f"... {len(self.estimators_) - len(trees)} more trees")
        return "\n".join(lines)

    # ----------------------------------------------------------- serialising
    def _state_to_dict(self) -> dict:
        return {
            "bounds_resolved": [None if b is None else [b[0], b[1]] for b in self.bounds_],
            "edges": [[float(v) for v in e] for e in self.edges_],
            "trees": [{"feature": [int(v) for v in t.feature], "cut": [int(v) for v in t.cut],
                       "value": [float(v) for v in t.value]} for t in self.estimators_],
            "init_score": float(self.init_score_) if np.ndim(self.init_score_) == 0
            else [float(v) for v in self.init_score_],
            "tree_epsilon": float(self.tree_epsilon_),
            "reg_lambda": float(self.reg_lambda_),
            "delta": float(self.delta_),
            **({} if self.__dict__.get("intercept_hessian_") is None
               else {"intercept_hessian": list(self.intercept_hessian_)}),
        }

    @classmethod
    def _params_from_dict(cls, params: dict) -> dict:
        if params.get("bounds") is not None:
            params = dict(params, bounds=[None if b is None else tuple(b) for b in params["bounds"]])
        if params.get("classes") is not None:
            params = dict(params, classes=list(params["classes"]))
        return params

    def _state_from_dict(self, data: dict) -> None:
        self.bounds_ = [None if b is None else (float(b[0]), float(b[1])) for b in data["bounds_resolved"]]
        self.edges_ = [np.array(e, dtype=np.float64) for e in data["edges"]]
        n_cuts = np.array([e.size for e in self.edges_])
        trees = []
        for i, t in enumerate(data["trees"]):
            check_tree_arrays(t["feature"], t["cut"], t["value"], n_cuts, f"trees[{i}]")
            trees.append(BinnedTree(np.array(t["feature"], dtype=np.int64), np.array(t["cut"], dtype=np.int64),
                                    np.array(t["value"], dtype=np.float64)))
        self.estimators_ = trees
        self.n_estimators_, self.learning_rate_ = self._resolved_sizes()
        init = data["init_score"]
        self.init_score_ = float(init) if not isinstance(init, list) else np.array(init, dtype=np.float64)
        self.tree_epsilon_ = float(data["tree_epsilon"])
        self.reg_lambda_ = float(data["reg_lambda"])
        self.delta_ = float(data["delta"])
        hess = data.get("intercept_hessian")
        self.intercept_hessian_ = None if hess is None else [float(v) for v in hess]
