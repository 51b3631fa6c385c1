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

The search spends only through its release plan
(:func:`dpglass.models.selection.plan.release_plan`, one step: the whole
selection, whose mechanism draws the split, K, the runs' grid points and their
score noise); :mod:`dpglass.models.selection.candidates` checks the grid and its
candidates before the data is read, and ``load_model`` replays the plan
(:mod:`dpglass.models.selection.verify`).
"""

from __future__ import annotations

import numbers
from functools import partial

import numpy as np
from sklearn.base import clone
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import Interval, check_labels
from dpglass.aggregates import is_distributed
from dpglass.exceptions import BudgetExceededError, DataValidationError, InvalidParameterError
from dpglass.models._base import EPSILON, RANDOM_STATE, ClassifierBase
from dpglass.models.pipeline.route import model_inputs, model_route
from dpglass.models.selection.candidates import _fail, declared_classes, grid_as_list
from dpglass.models.selection.law import (  # noqa: F401  (re-exported)
    expected_repetitions, repetition_pmf, sample_repetitions, selection_epsilon_factor,
)
from dpglass.models.selection.plan import SearchData, checked_grid, release_plan
from dpglass.models.selection.records import (
    RecordTable, check_numeric_X, dask_record_table, reads_numbers, record_table,
)
from dpglass.privacy.ledger import GUARANTEES, RELATIVE_TOLERANCE, PrivacyLedger
from dpglass.privacy.rng import check_random_state, is_replayable, spawn
from dpglass.schema import Encoding

__all__ = [
    "PrivateGridSearch",
    "expected_repetitions",
    "repetition_pmf",
    "sample_repetitions",
    "selection_epsilon_factor",
]

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
        by encoding once, on the route the pipeline takes for its model's
        class (numbers for dp-gbdt and dp-gam, codes for dp-gam, 0/1
        otherwise; its encoder's shares of ``epsilon``, its entries), and
        selecting its model on the encoded table with the rest; ``model="auto"``
        is refused (its class is chosen from a noisy count);
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
        Every run (``"params"``, ``"noisy_correct"``, ``"selected"``).
        **Curator-side diagnostic, not covered by the guarantee** (it holds K
        noisy scores; releasing them would need K-fold composition).  No
        accuracy is derived from them: dividing by the validation part's size
        would put the private n beside ``best_score_`` in the clear.
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
    def _max_classes(self) -> int:
        """The search learns the classes its estimator learns (scikit-learn's ``multi_class`` tag follows)."""
        return getattr(self.estimator, "_max_classes", 2)

    @property
    def classes(self):
        """The label set the estimator declares (its ``classes``), read by ``_check_fit_data``: public, so data
        of one class fits; None: the labels are read from y."""
        return declared_classes(self.estimator)

    def _selection_params(self) -> dict:
        """The parameters the release plan is built from (public)."""
        return {k: getattr(self, k) for k in ("estimator", "param_grid", "epsilon", "delta", "method",
                                              "stopping_probability", "eta", "validation_fraction")}

    def _check_selection_params(self) -> tuple[list[dict], float]:
        """Everything ``_validate_params`` cannot express (:func:`~dpglass.models.selection.plan.checked_grid`);
        returns (candidates, eta)."""
        return checked_grid(self._selection_params())

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
        # the plan, from public parameters only: every grid point checked, the run budget calibrated, the entry
        plan = release_plan(self._selection_params(), encoded_once=bool(self.__dict__.get("_encoded_once")))
        rng = check_random_state(self.random_state)
        if is_distributed(X) and not getattr(self.estimator, "_distributed_fit", False):
            raise DataValidationError(
                f"PrivateGridSearch fits through Dask when its estimator does; {type(self.estimator).__name__} "
                "does not fit on dask collections yet. Call .compute() on X and y to search in memory."
            )
        # the data as its pattern table (in memory or through Dask: the same table, so the same search), or as
        # its table of records for a candidate that reads numbers (public parameters decide which)
        table = self._fit_records(X, y) if reads_numbers(self.estimator) else self._fit_table(X, y)
        # the whole selection is the plan's one step (the split, K, the runs): the budget is checked before it draws
        ledger = PrivacyLedger(epsilon=float(self.epsilon), delta=float(self.delta)).follow(plan.steps)
        (step,) = plan.steps
        selected = ledger.release(step, SearchData(table, partial(self._runs, plan, step.entry.guarantee)), rng)
        ledger.replayable = is_replayable(rng)

        self.best_params_ = selected.params
        self.best_estimator_ = selected.model
        self.best_index_ = selected.index
        self.best_score_ = selected.noisy_correct_count
        self.privacy_ledger_ = ledger
        self.run_epsilon_ = plan.run_epsilon
        self.eta_ = plan.eta
        self.expected_runs_ = plan.expected_runs
        k = len(selected.run_params)
        self.n_runs_ = k
        chosen = np.zeros(k, dtype=bool)
        chosen[selected.index] = True
        self.results_ = {
            "params": selected.run_params,
            "noisy_correct": selected.noisy,
            "selected": chosen,
        }
        return self

    def _fit_pipeline(self, X, y):
        """Search a :class:`~dpglass.models.DPPipeline`: encode once, select its model on the encoded table.

        The pipeline's encoder is fitted once, on the pipeline's route for its model's class
        (:func:`~dpglass.models.pipeline.route.model_route`), with its own shares of the search's epsilon and the
        entries DPPipeline writes (``_fit_encoding``: the same code as ``DPPipeline.fit``); every candidate gets
        the inputs the pipeline would set (:func:`_routed_model`).  The selection then runs
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
            _fail("param_grid", "a dict of lists of values, or a non-empty list of such dicts", grid)
        outside = sorted({k for g in grids for k in g if not (isinstance(k, str) and k.startswith("model__"))})
        if outside:
            _fail("param_grid", "names of the pipeline's model's parameters, as scikit-learn nests them "
                       f"('model__max_length'): the search encodes once, so {outside} cannot vary", grid)
        if isinstance(pipe.model, str):
            _fail("estimator", "a DPPipeline over one model class: model='auto' chooses the class from a noisy "
                  "count of records, so its grid would not name one model's parameters; pass the model the "
                  "search tunes (e.g. model=DPGradientBoostingClassifier() or DPGAMClassifier())", pipe)
        if not getattr(pipe.model, "_private", False):
            _fail("estimator", "a DPPipeline over a differentially private dpglass model", pipe)
        base = clone(pipe).set_params(epsilon=float(self.epsilon), random_state=None)
        schema = base._schema()
        route = model_route(type(pipe.model))  # the pipeline's route for its model's class (public)
        eps_model = base._budget(schema, route["numbers"])[2]  # public: the shares of the schema's releases
        model, inputs = _routed_model(pipe.model, schema, route)
        inner = PrivateGridSearch(
            model, [{k.removeprefix("model__"): v for k, v in g.items()} for g in grids],
            epsilon=eps_model, delta=self.delta, method=self.method, stopping_probability=self.stopping_probability,
            eta=self.eta, validation_fraction=self.validation_fraction, scoring=self.scoring)
        inner._validate_params()
        inner._check_selection_params()  # every grid point and candidate checked before the data is read
        rng = check_random_state(self.random_state)
        enc_rng, search_rng = spawn(rng, 2)
        encoded = base._fit_encoding(X, y, schema, enc_rng, **route)
        if inputs is not None and model_inputs(pipe.model, encoded.encoding) != inputs:  # pragma: no cover
            raise RuntimeError("The encoding's model inputs differ from the schema's (the route is public).")
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

    def _fit_records(self, X, y) -> RecordTable:
        """The records as a :class:`~dpglass.models.selection.records.RecordTable`, for a candidate that reads
        numbers (:func:`~dpglass.models.selection.records.reads_numbers`): numeric columns (NaN allowed, a
        missing bin's), labels checked against the declared label set (then zero records fit)."""
        declared = self.classes
        if declared is None:
            self._warn_undeclared_classes()
        if is_distributed(X) or is_distributed(y):
            return dask_record_table(self, X, y, declared)
        X = check_numeric_X(self, X, allow_empty=declared is not None)
        codes, classes = check_labels(y, classes=declared, max_classes=self._max_classes,
                                      model=type(self.estimator).__name__)
        if codes.shape[0] != X.shape[0]:
            raise DataValidationError(f"X has {X.shape[0]} rows but y has {codes.shape[0]} labels; they must match.")
        self.classes_ = classes
        columns = list(self.feature_names_in_) if hasattr(self, "feature_names_in_") else None
        return record_table(X, codes, classes=list(classes), columns=columns)

    def _runs(self, plan, guarantee: str, train, validation):
        """The data's side of one run on a split (:class:`~dpglass.models.selection.plan.SearchData`):
        ``(params, rng) -> (model, correct)``, the candidate at grid point ``params`` trained on ``train`` with
        the run budget, and its count of correct predictions on ``validation``.

        ``train`` and ``validation`` are the two parts of the pattern table.  A candidate that learns from
        tables (``_distributed_fit``) fits on the training table; any other is given its records.  The count is
        the predictions on the distinct rows, weighted by their counts.
        """
        if isinstance(train, RecordTable) or not _learns_from_table(self.estimator):
            X_tr, y01_tr = train.records()
            train_data = (_frame(X_tr, train.columns), self.classes_[y01_tr])
        else:
            train_data = (train, None)
        val_rows = _frame(validation.unpack(), validation.columns)
        val_labels = self.classes_[validation.labels]

        def run(params, train_rng):
            model = clone(self.estimator).set_params(**params, **plan.run_budget, random_state=train_rng)
            # the label set is the search's (public schema): a training part that
            # happens to hold one class must fit, not fail (its failure would leak)
            model._schema_classes = self.classes_
            model.fit(*train_data)
            self._check_run_ledger(model, plan.run_budget, guarantee)
            correct = (int(validation.counts[model.predict(val_rows) == val_labels].sum())
                       if validation.n_entries else 0)
            return model, correct

        return run

    def _check_run_ledger(self, model, budget: dict, guarantee: str = "none") -> None:
        """A run spent within the budget the search gave it, with a guarantee no weaker than the plan states."""
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
        if GUARANTEES.index(ledger.guarantee) > GUARANTEES.index(guarantee):  # public parameters decide both
            raise RuntimeError(  # pragma: no cover - selection.plan.candidate_guarantee out of step with a family
                f"A {type(model).__name__} run's ledger is {ledger.guarantee!r}, weaker than the {guarantee!r} "
                "the selection's plan states for its grid (selection.plan.candidate_guarantee).")

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
        # the selection's released values, and the public parameters its file check rebuilds the plan from
        data["selected_by"] = {
            "method": self.method,
            "best_params": self.best_params_,
            "noisy_correct_count": int(self.best_score_),
            "eta": float(self.eta_),
            "stopping_probability": float(self.stopping_probability),
            "param_grid": grid_as_list(self.param_grid),
            "validation_fraction": float(self.validation_fraction),
        }
        if self.__dict__.get("_encoded_once"):  # a DPPipeline's selection: its entry's note says so
            data["selected_by"]["encoded_once"] = True
        return data


def _routed_model(model, schema, route: dict):
    """``(the search's estimator, its inputs)``: a DPPipeline's model with the parameters the pipeline sets so
    that it reads its route's columns (bounds, categories, missing bins, groups: public functions of the schema,
    :func:`~dpglass.models.pipeline.route.model_inputs`), or the model as it is (and None) on the 0/1 route,
    whose cut points may be released by the encoder."""
    if not route["numbers"]:
        return model, None
    public = Encoding(schema, tuple(() for _ in schema.features), **route)  # numbers: no cut point is made
    inputs = model_inputs(model, public)
    return clone(model).set_params(**inputs), inputs


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
