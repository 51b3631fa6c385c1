"""Private hyper-parameter selection from private candidates.

:class:`PrivateGridSearch` tunes the hyper-parameters of a differentially
private dpglass estimator on the private data itself, and charges the tuning.
Paper 002 (Table 1, Tables 8-10) tunes tau, lambda and kappa by a non-private
grid search with cross-validation on the private data; the chosen values then
depend on the data without any guarantee.  Here the selection is itself
differentially private.

The algorithm is random stopping (Liu and Talwar, "Private selection from
private candidates", STOC 2019) in the generalised form of Papernot and
Steinke ("Hyperparameter tuning with Renyi differential privacy", ICLR 2022):

1. Draw the number of runs ``K`` from a data-independent law: geometric with
   stopping probability ``gamma`` (Liu-Talwar: after every run, stop with
   probability ``gamma``; ``E[K] = 1/gamma``), or more generally the truncated
   negative binomial ``D_{eta,gamma}`` of Papernot-Steinke (Definition 1;
   ``eta = 1`` is the geometric law, ``eta = 0`` the logarithmic one).
2. Each run is one ``epsilon_run``-DP mechanism ``Q``: draw a candidate
   uniformly from the grid, train it with ``epsilon=epsilon_run`` on the
   training part of a per-record random split, and score it on the disjoint
   validation part with a Laplace-noised count of correct predictions
   (sensitivity 1, scale ``1/epsilon_run``).  One record lies in exactly one
   part, so a run is ``epsilon_run``-DP by parallel composition.
3. Release only the best run (its parameters, its model and its noisy score).

**Theorem** (Papernot and Steinke 2022, Corollary 3; the case ``eta = 1`` is
Liu and Talwar 2019's random stopping): if ``Q`` is ``epsilon_run``-DP and
``K ~ D_{eta,gamma}`` with ``eta >= 0`` and ``gamma`` in ``(0, 1)``, releasing
the best of ``K`` independent runs is ``(2 + eta) * epsilon_run``-DP.  So the
geometric law costs ``3 epsilon_run`` whatever the expected number of runs.
The budget ``epsilon`` is therefore split as ``epsilon_run = epsilon / (2 +
eta)`` and the ledger holds one entry of ``(2 + eta) * epsilon_run``.  With
``delta > 0`` the selection is charged by their Rényi theorem instead
(Theorem 2; :mod:`dpglass.models.selection.rdp`).  The
argument and its assumptions are in ``docs/privacy.md`` (section "Private
hyper-parameter selection").
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import Interval
from dpglass.aggregates import is_distributed
from dpglass.exceptions import BudgetExceededError, DataValidationError, InvalidParameterError
from dpglass.models._base import EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.models.selection.law import (  # noqa: F401  (re-exported)
    expected_repetitions, repetition_pmf, sample_repetitions, selection_epsilon_factor,
)
from dpglass.models.selection.rdp import calibrate_runs, candidate_budget
from dpglass.privacy.ledger import RELATIVE_TOLERANCE, PrivacyLedger
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.rng import check_random_state, is_replayable, spawn
from dpglass.privacy.splits import coin_counts

__all__ = [
    "PrivateGridSearch",
    "expected_repetitions",
    "repetition_pmf",
    "sample_repetitions",
    "selection_epsilon_factor",
]

#: Parameters the search sets itself on every candidate (never in the grid).
_RESERVED = ("epsilon", "delta", "random_state")


# ------------------------------------------------------- the repetition law
class PrivateGridSearch(ClassifierBase):
    """Differentially private hyper-parameter selection by random stopping.

    Liu and Talwar (2019) random stopping, in Papernot and Steinke's (2022)
    generalised form: a random number ``K`` of runs, each training a
    candidate drawn uniformly from ``param_grid`` and scoring it with a noisy
    validation count; only the best run is released.  The whole selection is
    ``epsilon``-DP (pure), charged as one ledger entry.  See the module
    docstring and ``docs/privacy.md``.

    Parameters
    ----------
    estimator : dpglass estimator
        A pure epsilon-DP dpglass classifier with ``epsilon`` and
        ``random_state`` parameters and a ``privacy_ledger_`` (e.g.
        :class:`~dpglass.models.SmoothBoostClassifier`,
        :class:`~dpglass.models.DPLogisticRegression`, the default
        :class:`~dpglass.models.DPRuleListClassifier`).  The search sets
        ``epsilon`` (to ``run_epsilon_``), ``random_state`` and ``delta`` of
        every candidate (0, or the search's delta for candidates it composes
        by Rényi curves), so the candidate's own ``delta`` does not matter; a
        candidate that would spend delta under that budget (e.g.
        ``mechanism="certified-pf"`` in a search with ``delta=0``) is refused
        before any run.  A :class:`~dpglass.models.DPPipeline` is searched
        by encoding once (its encoder's shares of ``epsilon``, its entries)
        and selecting its model on the encoded table with the rest;
        ``best_estimator_`` is then a DPPipeline over that selection (the
        search sets the pipeline's ``epsilon``, ``delta`` and
        ``random_state``).
    param_grid : dict or list of dicts
        As :class:`sklearn.model_selection.ParameterGrid`: lists of values
        to try.  May not contain ``epsilon``, ``delta`` or ``random_state``.
        For a DPPipeline, the model's parameters as scikit-learn nests them
        (``{"model__max_length": [2, 3]}``).
    epsilon : float
        Total budget of the selection (> 0), required.
    delta : float in [0, 1), default=0.0
        0: the pure theorem (Papernot-Steinke Corollary 3), cost ``(2 + eta)
        * run_epsilon_``.  > 0: their Rényi theorem (Theorem 2): the run budget
        is calibrated so that the best of K runs is ``(epsilon, delta)``-DP,
        composing each run by the Rényi curves of its releases
        (:mod:`dpglass.models.selection.rdp`); candidates that declare a
        release plan (SmoothBoostClassifier, DPRuleListClassifier with a
        mechanism without its own delta) are run with this delta and the
        Rényi accountant, and get several times the per-release budget when
        they make many releases.
    method : {"liu-talwar", "papernot-steinke"}, default="liu-talwar"
        ``"liu-talwar"``: geometric number of runs (after each run stop with
        probability ``stopping_probability``), cost ``3 * run_epsilon_``.
        ``"papernot-steinke"``: truncated negative binomial ``D_{eta,gamma}``
        with ``gamma = stopping_probability``, cost ``(2 + eta) * run_epsilon_``.
    stopping_probability : float, default=0.1
        gamma, in ``(0, 1]`` for ``"liu-talwar"`` (expected runs ``1/gamma``)
        and in ``(0, 1)`` for ``"papernot-steinke"``.  A grid of m points
        needs a few times m runs for the best point to be tried with good
        probability: ``P[a given point is never tried]`` is
        ``E[(1 - 1/m)**K]``.
    eta : float or None, default=None
        Shape of the truncated negative binomial (``"papernot-steinke"``
        only, >= 0; ``None`` means 0, the logarithmic law, cost
        ``2 * run_epsilon_``).  Must be ``None`` or 1 for ``"liu-talwar"``.
    validation_fraction : float, default=0.2
        Each record independently goes to the validation part with this
        probability (one split, drawn once, shared by all runs), in (0, 1).
    scoring : {"accuracy"}, default="accuracy"
        The noisy count of correct validation predictions.
    random_state : None, int, SeedSequence or Generator, default=None
        Resolved once in ``fit``; the split, ``K`` and every run get
        independent child streams.

    Attributes
    ----------
    best_params_ : dict
        The selected grid point (released).
    best_estimator_ : estimator
        The selected run's model, trained on the training part with
        ``epsilon=run_epsilon_`` (released; **not** refit on all the data).
    best_score_ : int
        The selected run's noisy count of correct validation predictions
        (released, an integer).  It is not divided by the validation size:
        that would need n, which is private, and its float bits would give
        n away.
    privacy_ledger_ : PrivacyLedger
        One entry: the whole selection at ``(2 + eta) * run_epsilon_``.
    run_epsilon_ : float
        Each run's budget, ``epsilon / (2 + eta)``.
    eta_ : float
        The resolved shape (1 for ``"liu-talwar"``).
    expected_runs_ : float
        ``E[K]``.
    n_runs_ : int
        K, the number of runs made.  **Curator-side diagnostic, not covered
        by the guarantee**: the theorem protects the best run only while K
        stays secret; publishing K (or ``results_``) voids it.
    results_ : dict of arrays
        Every run (``"params"``, ``"noisy_correct"``, ``"noisy_accuracy"``,
        ``"selected"``).  **Curator-side diagnostic, not covered by the
        guarantee** (it holds K noisy scores; releasing them would need
        K-fold composition).
    best_index_ : int
        The selected run's position in ``results_``.  **Curator-side, not
        covered by the guarantee** (it bounds K from below).
    classes_, n_features_in_, feature_names_in_
        As in scikit-learn.

    Examples
    --------
    >>> import numpy as np
    >>> from dpglass.models import SmoothBoostClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = (rng.random((1000, 5)) < 0.5).astype(int)
    >>> y = X[:, 0] ^ (rng.random(1000) < 0.1)
    >>> search = PrivateGridSearch(
    ...     estimator=SmoothBoostClassifier(), param_grid={"n_rounds": [1, 3], "learning_rate": [0.25, 0.5]},
    ...     epsilon=3.0, stopping_probability=0.25, random_state=0).fit(X, y)
    >>> sorted(search.best_params_)
    ['learning_rate', 'n_rounds']
    >>> eps, delta = search.privacy_ledger_.total()
    >>> round(eps, 9), delta, len(search.privacy_ledger_)
    (3.0, 0.0, 1)
    >>> float(search.score(X, y)) > 0.8
    True
    """

    _private = True
    #: Searches on the pattern table: through Dask when the estimator fits on tables too.
    _distributed_fit = True

    _parameter_constraints = {
        "epsilon": EPSILON,
        "method": [["liu-talwar", "papernot-steinke"]],
        "stopping_probability": [Interval(numbers.Real, 0, 1, closed="right")],
        "eta": [Interval(numbers.Real, 0, None, closed="left"), None],
        "validation_fraction": [Interval(numbers.Real, 0, 1, closed="neither")],
        "scoring": [["accuracy"]],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        estimator=None,
        param_grid=None,
        *,
        epsilon=1.0,
        delta=0.0,
        method="liu-talwar",
        stopping_probability=0.1,
        eta=None,
        validation_fraction=0.2,
        scoring="accuracy",
        random_state=None,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.epsilon = epsilon
        self.delta = delta
        self.method = method
        self.stopping_probability = stopping_probability
        self.eta = eta
        self.validation_fraction = validation_fraction
        self.scoring = scoring
        self.random_state = random_state

    @property
    def classes(self):
        """The label set the estimator declares (its ``classes``), read by ``_check_fit_data``: public, so data
        of one class fits; None: the labels are read from y."""
        return _declared_classes(self.estimator)

    # ----------------------------------------------------------- validation
    def _fail(self, name, what, value):
        raise InvalidParameterError(
            f"The {name!r} parameter of {type(self).__name__} must be {what}. Got {value!r} instead."
        )

    def _check_selection_params(self) -> tuple[list[dict], float]:
        """Everything ``_validate_params`` cannot express; returns (candidates, eta)."""
        if not (isinstance(self.delta, numbers.Real) and not isinstance(self.delta, bool)
                and 0 <= self.delta < 1 and math.isfinite(self.delta)):
            self._fail("delta", "a float in [0, 1): 0 for the pure theorem (Papernot-Steinke 2022 Corollary 3), "
                       "> 0 for the Rényi one (their Theorem 2)", self.delta)
        if self.method == "liu-talwar":
            if self.eta is not None and self.eta != 1:
                self._fail("eta", "None (or 1) with method='liu-talwar', whose law is geometric "
                           "(use method='papernot-steinke' for another eta)", self.eta)
            eta = 1.0
        else:
            eta = 0.0 if self.eta is None else float(self.eta)
            if self.stopping_probability >= 1:
                self._fail("stopping_probability", "a float in the range (0, 1) with "
                           "method='papernot-steinke'", self.stopping_probability)

        est = self.estimator
        if not (isinstance(est, BaseEstimator) and hasattr(est, "fit") and hasattr(est, "predict")):
            self._fail("estimator", "a dpglass classifier (a scikit-learn estimator with fit and predict)", est)
        base = est.get_params(deep=False)
        if "epsilon" not in base or "random_state" not in base:
            self._fail(
                "estimator",
                "a differentially private dpglass estimator with 'epsilon' and 'random_state' parameters "
                "(e.g. SmoothBoostClassifier, DPLogisticRegression)",
                est,
            )

        grid = self.param_grid
        if not isinstance(grid, (dict, list, tuple)) or (isinstance(grid, (list, tuple)) and not grid):
            self._fail("param_grid", "a dict of lists of values, or a non-empty list of such dicts", grid)
        try:
            candidates = list(ParameterGrid(grid))
        except (TypeError, ValueError) as exc:
            raise InvalidParameterError(
                f"The 'param_grid' parameter of {type(self).__name__} is invalid: {exc}"
            ) from None
        reserved = sorted({k for p in candidates for k in p if k.rsplit("__", 1)[-1] in _RESERVED})
        if reserved:
            self._fail(
                "param_grid",
                "free of 'epsilon', 'delta' and 'random_state' (the search sets epsilon and random_state "
                f"of every candidate itself); found {reserved}",
                grid,
            )
        if self.delta > 0 and any("accountant" in p for p in candidates):
            self._fail("param_grid", "free of 'accountant' when delta > 0 (the search runs candidates with the "
                       "Rényi accountant it composes them by)", grid)
        if self.delta > 0 and isinstance(grid, (list, tuple)) and len({tuple(sorted(g)) for g in grid}) > 1:
            self._fail("param_grid", "one dict, or dicts over the same parameters, when delta > 0 (the Rényi "
                       "bound is recomputed from the grid and the selected model's parameters)", grid)
        for params in candidates:
            cand = clone(est)
            try:
                cand.set_params(**params)
            except ValueError as exc:
                raise InvalidParameterError(
                    f"The 'param_grid' parameter of {type(self).__name__} names a parameter "
                    f"{type(est).__name__} does not have: {exc}"
                ) from None
            if hasattr(cand, "_validate_params"):
                try:
                    cand._validate_params()
                except InvalidParameterError as exc:
                    raise InvalidParameterError(f"Grid point {params!r} is invalid: {exc}") from None
            self._check_candidate_delta(cand, params)
        return candidates, eta

    def _check_candidate_delta(self, cand, params: dict) -> None:
        """Refuse, before any run, a candidate that would spend delta under the budget the search gives it.

        The search sets every candidate's ``delta`` itself (``candidate_budget``: the search's delta for a
        candidate it composes by Rényi curves, else 0), so the candidate's own ``delta`` (``None`` included)
        does not matter; what does is whether the candidate, run with that delta, needs delta > 0.  Public
        parameters only: the model's own ``_needs_delta`` where it has one (rule lists: its delta plan), else
        Gaussian noise parameters, else a ``delta`` constraint that refuses 0 (DP-Bag's moments accountant).
        """
        run = clone(cand).set_params(**candidate_budget(cand, 1.0, float(self.delta)))
        if run.get_params(deep=False).get("delta", 0.0) != 0:
            return  # it runs with the search's delta > 0 and is composed by its curves (selection.rdp)
        name = type(cand).__name__
        point = f" at grid point {params!r}" if params else ""
        if hasattr(run, "_needs_delta"):
            needs = run._needs_delta()
        else:
            needs = any(run.get_params(deep=False).get(k) == "gaussian" for k in ("count_noise", "leaf_noise"))
            if not needs and hasattr(run, "_validate_params"):
                try:
                    run._validate_params()
                except InvalidParameterError:
                    needs = "its 'delta' cannot be 0"  # e.g. DPBaggingClassifier's moments accountant
        if not needs:
            return
        shown = {k: v for k, v in run.get_params(deep=False).items()
                 if k in ("mechanism", "count_noise", "leaf_noise", "confidence", "variant")
                 and v != type(cand)().get_params(deep=False).get(k)}
        what = f"{name}({', '.join(f'{k}={v!r}' for k, v in shown.items())})"
        if isinstance(needs, str):  # no delta makes it a candidate: not 0 (pure), and no Rényi curve for > 0
            raise InvalidParameterError(
                f"{name}{point} cannot be searched: {needs} (it always spends delta), and PrivateGridSearch "
                "composes its runs either as pure epsilon-DP (delta=0) or by the Rényi curves of their release "
                f"plans (delta > 0), which {name} does not declare. Fit it on its own budget instead.")
        if float(self.delta) == 0 and hasattr(run, "_release_plan"):  # a delta > 0 search would compose it
            raise InvalidParameterError(
                f"{what}{point} needs delta > 0; give the search a delta > 0 or choose a pure mechanism "
                "(PrivateGridSearch with delta=0 runs every candidate with delta=0: its selection theorem is for "
                "pure epsilon-DP runs).")
        raise InvalidParameterError(
            f"{what}{point} needs delta > 0, but it declares no release plan, so PrivateGridSearch runs it with "
            "delta=0 as a pure epsilon-DP candidate whatever the search's delta (a delta > 0 search composes "
            "only planned candidates by their Rényi curves); choose a pure configuration (Laplace noise) to "
            "search it.")

    # ------------------------------------------------------------------ fit
    def fit(self, X, y):
        """Run the private selection; the whole selection is one entry of ``privacy_ledger_``.

        Parameters
        ----------
        X : array-like or DataFrame of 0/1, shape (n_samples, n_features)
        y : array-like of shape (n_samples,) with two classes

        Returns
        -------
        self
        """
        self._validate_params()
        from dpglass.models.pipeline.estimator import DPPipeline

        if isinstance(self.estimator, DPPipeline):
            return self._fit_pipeline(X, y)
        candidates, eta = self._check_selection_params()
        rng = check_random_state(self.random_state)
        if is_distributed(X) and not getattr(self.estimator, "_distributed_fit", False):
            raise DataValidationError(
                f"PrivateGridSearch fits through Dask when its estimator does; {type(self.estimator).__name__} "
                "does not fit on dask collections yet. Call .compute() on X and y to search in memory."
            )
        # the data as its pattern table (in memory or through Dask: the same table, so the same search)
        table = self._fit_table(X, y)
        n = table.n_records

        gamma = float(self.stopping_probability)
        factor = selection_epsilon_factor(eta)
        eps_run = float(self.epsilon) / factor
        eps_total = factor * eps_run
        delta = float(self.delta)
        if delta > 0:
            eps_run, eps_total = calibrate_runs(self.estimator, candidates, float(self.epsilon), delta, eta, gamma,
                                                expected_repetitions(eta, gamma))
        budget = candidate_budget(self.estimator, eps_run, delta)
        f = float(self.validation_fraction)

        split_rng, count_rng, runs_rng = spawn(rng, 3)
        # each record independently goes to validation with probability f, drawn entry by entry: the c records
        # of an entry (same row, same label) send Binomial(c, f) of theirs, the same law (docs/privacy.md)
        to_val = coin_counts(table.counts, f, split_rng)
        train, validation = table.with_counts(table.counts - to_val), table.with_counts(to_val)
        k = sample_repetitions(eta, gamma, count_rng)
        scorer = DiscreteLaplaceMechanism(eps_run)
        expected_val = f * n

        run_params, noisy, guarantees, best, best_model = self._runs(
            candidates, budget, scorer, train, validation, spawn(runs_rng, k)
        )
        ledger = self._selection_ledger(eta, gamma, (eps_total, delta), eps_run, scorer, len(candidates), f,
                                        guarantees)

        self.best_params_ = dict(run_params[best])
        self.best_estimator_ = best_model
        self.best_index_ = int(best)
        self.best_score_ = int(noisy[best])
        self.privacy_ledger_ = ledger
        ledger.replayable = is_replayable(rng)
        self.run_epsilon_ = eps_run
        self.eta_ = eta
        self.expected_runs_ = expected_repetitions(eta, gamma)
        self.n_runs_ = int(k)
        selected = np.zeros(k, dtype=bool)
        selected[best] = True
        self.results_ = {
            "params": run_params,
            "noisy_correct": noisy,
            "noisy_accuracy": noisy / expected_val,
            "selected": selected,
        }
        return self

    def _fit_pipeline(self, X, y):
        """Search a :class:`~dpglass.models.DPPipeline`: encode once, select its model on the encoded table.

        The pipeline's encoder is fitted once, with its own shares of the search's epsilon and the entries
        DPPipeline writes (``_fit_encoding``: the same code as ``DPPipeline.fit``).  The selection then runs
        over the pipeline's model on the encoded table with what the shares leave (a search of its own, with
        this search's delta, method, law and split), and ``best_estimator_`` is a DPPipeline of that encoding
        and that selection: its ledger, the encoder's entries then ``model: private selection ...``, is this
        search's.  Encoding is a per-record map with released cut points, so every run is as private on the
        raw records as on the encoded ones, and the whole is sequential composition of the two parts.
        """
        pipe = self.estimator
        grid = self.param_grid
        grids = [grid] if isinstance(grid, dict) else list(grid) if isinstance(grid, (list, tuple)) else None
        if not grids or not all(isinstance(g, dict) for g in grids):
            self._fail("param_grid", "a dict of lists of values, or a non-empty list of such dicts", grid)
        outside = sorted({k for g in grids for k in g if not (isinstance(k, str) and k.startswith("model__"))})
        if outside:
            self._fail("param_grid", "names of the pipeline's model's parameters, as scikit-learn nests them "
                       f"('model__max_length'): the search encodes once, so {outside} cannot vary", grid)
        if not getattr(pipe.model, "_private", False):
            self._fail("estimator", "a DPPipeline over a differentially private dpglass model", pipe)
        base = clone(pipe).set_params(epsilon=float(self.epsilon), random_state=None)
        schema = base._schema()
        eps_model = base._budget(schema)[2]  # public: the shares of the schema's releases
        inner = PrivateGridSearch(
            pipe.model, [{k.removeprefix("model__"): v for k, v in g.items()} for g in grids],
            epsilon=eps_model, delta=self.delta, method=self.method, stopping_probability=self.stopping_probability,
            eta=self.eta, validation_fraction=self.validation_fraction, scoring=self.scoring)
        inner._validate_params()
        inner._check_selection_params()  # every grid point and candidate checked before the data is read
        rng = check_random_state(self.random_state)
        enc_rng, search_rng = spawn(rng, 2)
        encoded = base._fit_encoding(X, y, schema, enc_rng)
        inner.set_params(random_state=search_rng)
        inner._encoded_once = True
        inner.fit(encoded.X, encoded.y)
        # the selected pipeline: the encoding and the selection; its model parameter is the selected point
        selected = clone(pipe.model).set_params(**inner.best_params_)
        run_delta = inner.best_estimator_.get_params(deep=False).get("delta")
        best = clone(pipe).set_params(model=selected, epsilon=float(self.epsilon), random_state=None,
                                      delta=run_delta)
        best._set_fitted(schema, encoded, inner, is_replayable(rng))
        self.best_params_ = {f"model__{k}": v for k, v in inner.best_params_.items()}
        self.best_estimator_ = best
        self.best_index_, self.best_score_ = inner.best_index_, inner.best_score_
        self.privacy_ledger_ = best.privacy_ledger_
        self.run_epsilon_, self.eta_, self.expected_runs_ = inner.run_epsilon_, inner.eta_, inner.expected_runs_
        self.n_runs_ = inner.n_runs_
        self.results_ = {**inner.results_, "params": [{f"model__{k}": v for k, v in p.items()}
                                                       for p in inner.results_["params"]]}
        self.classes_, self.n_features_in_ = best.classes_, best.n_features_in_
        self.feature_names_in_ = best.feature_names_in_
        return self

    def _runs(self, candidates, budget, scorer, train, validation, run_rngs):
        """The K runs of the selection: each a random candidate trained on ``train``, scored noisily on ``validation``.

        ``train`` and ``validation`` are the two parts of the pattern table.  A
        candidate that learns from tables (``_distributed_fit``) fits on the
        training table; any other is given its records.  The score counts the
        validation records predicted right: the predictions on the distinct
        rows, weighted by their counts.

        Returns the runs' parameters, their noisy scores, the guarantees of
        their ledgers, and the index and model of the best run.
        """
        if not _learns_from_table(self.estimator):
            X_tr, y01_tr = train.records()
            train_data = (_frame(X_tr, train.columns), self.classes_[y01_tr])
        else:
            train_data = (train, None)
        val_rows = _frame(validation.unpack(), validation.columns)
        val_labels = self.classes_[validation.labels]
        k = len(run_rngs)
        run_params, noisy, guarantees = [], np.empty(k), set()
        best, best_model = -1, None
        for i, run_rng in enumerate(run_rngs):
            params = candidates[int(run_rng.integers(len(candidates)))]
            train_rng, noise_rng = spawn(run_rng, 2)
            model = clone(self.estimator).set_params(**params, **budget, random_state=train_rng)
            # the label set is the search's (public schema): a training part that
            # happens to hold one class must fit, not fail (its failure would leak)
            model._schema_classes = self.classes_
            model.fit(*train_data)
            self._check_run_ledger(model, budget)
            guarantees.add(model.privacy_ledger_.guarantee)
            correct = (int(validation.counts[model.predict(val_rows) == val_labels].sum())
                       if validation.n_entries else 0)
            noisy[i] = scorer.randomise(int(correct), noise_rng)
            run_params.append(params)
            # integer scores tie with positive probability: keeping the earlier
            # run picks a uniformly random one of the tied runs (the runs are
            # i.i.d.), i.e. the maximum under a random tie-breaking tag, which
            # keeps the theorem's total order (docs/privacy.md)
            if best < 0 or noisy[i] > noisy[best]:
                best, best_model = i, model
        return run_params, noisy, guarantees, best, best_model

    def _selection_ledger(self, eta, gamma, total, eps_run, scorer, n_candidates, f, guarantees) -> PrivacyLedger:
        """The search's ledger: the whole selection is one entry (the weakest guarantee of its runs)."""
        eps_total, delta = total
        guarantee = next((g for g in ("none", "paper-claim") if g in guarantees), "proven")
        method_name = (
            f"random stopping, geometric K (Liu-Talwar 2019), gamma={gamma:g}"
            if self.method == "liu-talwar"
            else f"random stopping, truncated negative binomial K (Papernot-Steinke 2022), eta={eta:g}, gamma={gamma:g}"
        )
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=delta)
        theorem = (
            f"Papernot-Steinke 2022 Theorem 2 (Rényi): best of K ~ D(eta={eta:g}, gamma={gamma:g}) runs, each "
            "bounded by the maximum over the grid of its releases' Rényi curves, converted at delta"
            if delta > 0 else
            f"Papernot-Steinke 2022 Corollary 3: best of K ~ D(eta={eta:g}, gamma={gamma:g}) runs of an "
            f"epsilon_run-DP mechanism is (2+eta)*epsilon_run-DP = {selection_epsilon_factor(eta):g} x {eps_run:.6g}"
            + (" (eta=1: Liu-Talwar 2019 random stopping, 3*epsilon_run)" if eta == 1 else "")
        )
        ledger.spend(
            release="private selection: the best run's parameters, model and noisy validation score",
            mechanism=f"private-selection({method_name})",
            epsilon=eps_total,
            delta=delta,
            sensitivity=1.0,
            scale=scorer.scale,
            guarantee=guarantee,
            note=(
                theorem
                + f"; E[K]={expected_repetitions(eta, gamma):.6g}. Each run: a candidate drawn uniformly from "
                f"the {n_candidates}-point grid, trained with epsilon_run on the training part of a "
                f"per-record Bernoulli split (validation_fraction={f:g}; drawn as Binomial(count, f) per "
                "pattern-table entry, the same law), scored by a Laplace count of correct "
                f"validation predictions (sensitivity 1, scale {scorer.scale:.6g}); parallel composition over "
                "the two parts. Not refit. Covers best_params_, best_estimator_, best_score_ only: n_runs_ "
                "and results_ are curator-side and not covered."
                + (" Every run trains on the same encoded table: the pipeline's encoding was fitted once, "
                   "before the selection, and its releases are the encoder's entries of this ledger."
                   if self.__dict__.get("_encoded_once") else "")
            ),
        )
        return ledger

    def _check_run_ledger(self, model, budget: dict) -> None:
        ledger = getattr(model, "privacy_ledger_", None)
        if not isinstance(ledger, PrivacyLedger):
            raise InvalidParameterError(
                f"{type(model).__name__} has no privacy_ledger_ after fit: PrivateGridSearch needs a "
                "differentially private dpglass estimator."
            )
        spent_eps, spent_delta = ledger.total()
        eps_run = budget["epsilon"]
        if spent_delta > budget.get("delta", 0.0) * (1.0 + RELATIVE_TOLERANCE):
            raise InvalidParameterError(
                f"A {type(model).__name__} candidate spent delta={spent_delta:g}, more than the search gives it; "
                "with delta=0 PrivateGridSearch needs pure epsilon-DP candidates (delta=0 and a pure mechanism)."
            )
        if spent_eps > eps_run * (1.0 + RELATIVE_TOLERANCE):
            raise BudgetExceededError(
                f"A {type(model).__name__} candidate spent epsilon={spent_eps:g} above its run budget "
                f"{eps_run:g}; the selection's guarantee would not hold."
            )

    # ------------------------------------------------------------ prediction
    def predict(self, X):
        """Predict with ``best_estimator_``."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def predict_proba(self, X):
        """``best_estimator_.predict_proba``."""
        check_is_fitted(self)
        return self.best_estimator_.predict_proba(X)

    def decision_function(self, X):
        """``best_estimator_.decision_function``."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    # --------------------------------------------------------------- printout
    def to_text(self) -> str:
        """The selection (released part only) followed by the selected model's printout."""
        check_is_fitted(self)
        if hasattr(self.best_estimator_, "encoding_"):  # a DPPipeline over the selection: it prints both
            return self.best_estimator_.to_text()
        eps, delta = self.privacy_ledger_.total()
        params = ", ".join(f"{k}={v!r}" for k, v in sorted(self.best_params_.items())) or "(no parameters)"
        lines = [
            f"PrivateGridSearch ({self.method}): ({eps:.4g}, {delta:.3g})-DP selection, "
            f"each run {self.run_epsilon_:.4g}-DP",
            f"selected: {params}; noisy count of correct validation predictions {self.best_score_}",
        ]
        text = self.best_estimator_.to_text() if hasattr(self.best_estimator_, "to_text") else str(self.best_estimator_)
        return "\n".join(lines + [text])

    # ------------------------------------------------------------ serialising
    def to_dict(self) -> dict:
        """The selected model's JSON, carrying the whole search's ledger.

        ``dpglass.models.load_model`` reads it back as the selected model; the
        ledger it carries covers the selection (every run), and the curator-side
        diagnostics (``n_runs_``, ``results_``, ``best_index_``) are left out.
        """
        check_is_fitted(self)
        if hasattr(self.best_estimator_, "encoding_"):  # a DPPipeline: its file carries the selection (_fit_pipeline)
            return self.best_estimator_.to_dict()
        data = self.best_estimator_.to_dict()
        data["privacy_ledger"] = self.privacy_ledger_.to_dict()
        data["selected_by"] = {
            "method": self.method,
            "best_params": self.best_params_,
            "noisy_correct_count": int(self.best_score_),
            "eta": float(self.eta_),
        }
        if float(self.delta) > 0:  # the Rényi theorem: the verifier recomputes the runs' curve from the grid
            data["selected_by"]["stopping_probability"] = float(self.stopping_probability)
            data["selected_by"]["param_grid"] = _grid_as_list(self.param_grid)
        return data


def _declared_classes(estimator):
    """The label set the estimator declares (its ``classes`` parameter), or None."""
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if "classes" not in params and hasattr(params.get("model"), "get_params"):  # a DPPipeline: its model's
        params = params["model"].get_params(deep=False)
    classes = params.get("classes")
    return None if classes is None else list(classes)


def _learns_from_table(estimator) -> bool:
    """Whether a candidate fits on the search's 0/1 pattern table (``ClassifierBase._check_fit_data``).

    Models that fit through Dask learn from that table, except DP-GBDT: it reads numeric columns and builds
    its own binned table (:mod:`dpglass.models.gbdt.binned`), so it is given the training part's records (its
    binned table of them is the same whatever their order).
    """
    from dpglass.models.gbdt.estimator import DPGradientBoostingClassifier

    return getattr(estimator, "_distributed_fit", False) and not isinstance(estimator, DPGradientBoostingClassifier)


def _frame(X01, columns):
    """Rows of a table's part as the candidates read them: with the feature names when the data had them."""
    if columns is None:
        return X01
    import pandas as pd

    return pd.DataFrame(X01, columns=columns)


def _grid_as_list(grid) -> list:
    """The grid as a JSON list of dicts of lists (ParameterGrid's own input form)."""
    grids = [grid] if isinstance(grid, dict) else list(grid)
    return [{k: list(v) for k, v in g.items()} for g in grids]
