"""PrivateGridSearch's release plan: one step, the best of K runs, from public parameters only.

The search releases one thing: the best run of random stopping (Liu and Talwar 2019; Papernot and Steinke
2022), i.e. its grid point, its model and its noisy validation score.  The plan is one
:class:`~dpglass.privacy.plan.PlannedRelease`:

* its **entry** is the whole selection (``private-selection(...)``): ``(2 + eta) * epsilon_run`` by
  Papernot-Steinke's Corollary 3 with ``delta = 0``, or the Rényi bound of their Theorem 2 calibrated to
  ``(epsilon, delta)`` (:mod:`dpglass.models.selection.rdp`); its guarantee is the weakest of the grid's
  candidates (:func:`grid_guarantee`: a public property of the grid, whichever runs happen);
* its **noise** is the selection mechanism (:class:`RandomStopping`): split the records, draw K from the law,
  run K times a candidate drawn uniformly from the grid (the data's side of a run, from ``exact``, trains it and
  counts its correct validation predictions), add discrete Laplace noise to each count, keep the best;
* its **domain**: the grid point is one of the grid's, the noisy score an integer (the model's own released
  values are checked by its family's file check).

The fit (:mod:`dpglass.models.selection.estimator`) spends through it and the file check
(:mod:`dpglass.models.selection.verify`) replays it from the file's ``selected_by``, its budget and its model's
parameters; neither imports the other.  The argument is in docs/privacy.md, "Private hyper-parameter selection".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from sklearn.base import clone

from dpglass.models.selection.candidates import check_candidates, resolved_eta, same_point
from dpglass.models.selection.law import expected_repetitions, sample_repetitions, selection_epsilon_factor
from dpglass.models.selection.rdp import calibrate_runs, candidate_budget
from dpglass.privacy.ledger import GUARANTEES, LedgerEntry
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.privacy.plan import PlannedRelease
from dpglass.privacy.rng import spawn
from dpglass.privacy.splits import coin_counts

__all__ = ["MECHANISM_PREFIX", "METHODS", "RELEASE", "RandomStopping", "SearchData", "SelectedRun", "SelectionPlan",
           "candidate_guarantee", "checked_grid", "grid_guarantee", "release_plan"]

RELEASE = "private selection: the best run's parameters, model and noisy validation score"
#: Every selection entry's mechanism starts so (the generic file check reads it).
MECHANISM_PREFIX = "private-selection("
METHODS = ("liu-talwar", "papernot-steinke")
#: The model file's fields holding the selection's own released values.
FIELDS = ("selected_by.best_params", "selected_by.noisy_correct_count")


# ------------------------------------------------------------- the guarantee
def candidate_guarantee(candidate) -> str:
    """What argument backs a candidate's releases, from its public parameters: ``"paper-claim"`` for the
    configurations whose ledger entries its family marks so, else ``"proven"``.

    Keyed by class name, as the file checks are (this module imports no estimator).  Each family decides
    which of its releases are a paper's claim; ``tests/test_selection_plan.py`` fits every such configuration
    and checks it against this function, and the search refuses a run whose ledger is weaker than its plan said.
    """
    name, p = type(candidate).__name__, candidate.get_params(deep=False)
    if name == "DPRuleListClassifier":  # smooth-sensitivity report-noisy-min, Algorithm 3's stop, paper scales
        claim = (p.get("mechanism") in ("smooth-laplace", "smooth-cauchy") or p.get("confidence") is not None
                 or (p.get("variant") == "paper" and p.get("mechanism") in ("global-laplace", "global-gaussian")))
    elif name == "SmoothBoostClassifier":  # DP-TopDown at Lemma 15's split sensitivity
        claim = p.get("variant") == "paper" and p.get("weak_learner") == "tree" and p.get("tree_learner") == "top-down"
    else:  # DP-Bag's data-dependent moments accountant (a search refuses it: it always spends delta)
        claim = name == "DPBaggingClassifier"
    return "paper-claim" if claim else "proven"


def grid_guarantee(estimator, candidates, run_budget: dict) -> str:
    """The weakest guarantee over the grid's candidates as the search runs them: any of them may run, so the
    selection's entry states it whatever K and the draws turn out to be (the runs' own would reveal them)."""
    kinds = {candidate_guarantee(clone(estimator).set_params(**p, **run_budget)) for p in candidates}
    return max(kinds, key=GUARANTEES.index)


# ------------------------------------------------------------- the mechanism
@dataclass
class SelectedRun:
    """What the selection mechanism returns: the released best run, and the curator-side record of all runs."""

    params: dict  # released: the best run's grid point
    noisy_correct_count: int  # released: its noisy count of correct validation predictions
    model: object  # released: its model (trained on the training part; checked by its family)
    index: int  # curator-side: the best run's position (a lower bound on K)
    run_params: list = field(default_factory=list)  # curator-side: every run's grid point (K of them)
    noisy: np.ndarray = None  # curator-side: every run's noisy count


@dataclass(frozen=True)
class SearchData:
    """The data's side of the selection (the step's ``exact``): the records as their pattern table, and
    ``runs(train, validation)``, which gives the data's side of one run on a split of the table:
    ``run(params, rng) -> (model, correct)`` trains the candidate at grid point ``params`` on ``train`` (through
    the candidate's own ledger and plan) and counts its correct predictions on ``validation``."""

    table: object
    runs: Callable


@dataclass(frozen=True)
class RandomStopping:
    """Random stopping (Liu-Talwar 2019; Papernot-Steinke 2022's ``D_{eta,gamma}``): the best of K runs.

    Called as a plan step's noise, ``(SearchData, rng) -> SelectedRun``.  It draws everything random from
    ``rng``'s three child streams: the split (each record to validation with probability
    ``validation_fraction``, drawn as Binomial(count, f) per table entry, :func:`~dpglass.privacy.splits.coin_counts`),
    K, then each run's grid point (uniform), training stream and score noise (discrete Laplace, sensitivity 1).
    Integer scores tie with positive probability: keeping the earlier run picks a uniformly random one of the
    tied runs (the runs are i.i.d.), i.e. the maximum under a random tie-breaking tag, which keeps the
    theorem's total order (docs/privacy.md).
    """

    candidates: tuple
    eta: float
    gamma: float
    validation_fraction: float
    scorer: DiscreteLaplaceMechanism

    def __call__(self, data: SearchData, rng) -> SelectedRun:
        split_rng, count_rng, runs_rng = spawn(rng, 3)
        table = data.table
        to_val = coin_counts(table.counts, self.validation_fraction, split_rng)
        run = data.runs(table.with_counts(table.counts - to_val), table.with_counts(to_val))
        k = sample_repetitions(self.eta, self.gamma, count_rng)
        run_params, noisy = [], np.empty(k)
        best, best_model = -1, None
        for i, run_rng in enumerate(spawn(runs_rng, k)):
            params = self.candidates[int(run_rng.integers(len(self.candidates)))]
            train_rng, noise_rng = spawn(run_rng, 2)
            model, correct = run(params, train_rng)
            noisy[i] = self.scorer.randomise(int(correct), noise_rng)
            run_params.append(params)
            if best < 0 or noisy[i] > noisy[best]:
                best, best_model = i, model
        return SelectedRun(dict(run_params[best]), int(noisy[best]), best_model, int(best), run_params, noisy)


@dataclass(frozen=True)
class SelectionDomain:
    """Where the selection's released values lie whatever the data: its grid point is one of the grid's (types
    included: JSON's ``3`` is not ``3.0``), its noisy score an integer.  A fit's :class:`SelectedRun` is checked
    whole; a file's fields one at a time (``selected_by.best_params``: a dict; ``noisy_correct_count``: a number).
    """

    candidates: tuple

    def problem(self, values) -> str | None:
        if isinstance(values, SelectedRun):
            return self.problem(values.params) or self.problem(values.noisy_correct_count)
        if isinstance(values, dict):
            if not any(same_point(values, c) for c in self.candidates):
                return f"holds {values!r}, not one of the {len(self.candidates)} points of the grid"
            return None
        if isinstance(values, bool) or not isinstance(values, (int, np.integer)):
            return f"holds {values!r}, not an integer"
        return None

    def __str__(self) -> str:
        return f"one of the {len(self.candidates)} grid points (selected_by.param_grid) and an integer score"


# ------------------------------------------------------------------ the plan
@dataclass(frozen=True)
class SelectionPlan:
    """The search's release plan (one step) and the public values it was built from."""

    steps: list
    run_epsilon: float  # each run's budget
    run_budget: dict  # what the search sets on every candidate (``candidate_budget``)
    candidates: list
    eta: float
    gamma: float
    expected_runs: float


def checked_grid(params: dict) -> tuple[list[dict], float]:
    """``(candidates, eta)``: the grid's points and the law's shape, every public check made (before the data)."""
    delta = params["delta"]
    eta = resolved_eta(params["method"], params["eta"], params["stopping_probability"], delta)
    return check_candidates(params["estimator"], params["param_grid"], delta), eta


def release_plan(params: dict, encoded_once: bool = False) -> SelectionPlan:
    """PrivateGridSearch's release plan from its parameters (``estimator``, ``param_grid``, ``epsilon``,
    ``delta``, ``method``, ``stopping_probability``, ``eta``, ``validation_fraction``): the fit spends through
    it and ``load_model`` replays it.  ``encoded_once``: the search runs on a DPPipeline's encoding, fitted once
    before it (the entry's note says so)."""
    candidates, eta = checked_grid(params)
    estimator, epsilon, delta = params["estimator"], float(params["epsilon"]), float(params["delta"])
    gamma, f = float(params["stopping_probability"]), float(params["validation_fraction"])
    factor = selection_epsilon_factor(eta)
    eps_run = epsilon / factor
    eps_total = factor * eps_run
    if delta > 0:
        eps_run, eps_total = calibrate_runs(estimator, candidates, epsilon, delta, eta, gamma,
                                            expected_repetitions(eta, gamma))
    budget = candidate_budget(estimator, eps_run, delta)
    scorer = DiscreteLaplaceMechanism(eps_run)
    entry = _selection_entry(params["method"], eta, gamma, (eps_total, delta), eps_run, scorer, len(candidates), f,
                             grid_guarantee(estimator, candidates, budget), encoded_once)
    step = PlannedRelease(entry, RandomStopping(tuple(candidates), eta, gamma, f, scorer),
                          SelectionDomain(tuple(candidates)), FIELDS)
    return SelectionPlan([step], eps_run, budget, candidates, eta, gamma, expected_repetitions(eta, gamma))


def _selection_entry(method, eta, gamma, total, eps_run, scorer, n_candidates, f, guarantee,
                     encoded_once) -> LedgerEntry:
    """The selection's one entry: the theorem, the law, the runs and the scorer, in words."""
    eps_total, delta = total
    method_name = (
        f"random stopping, geometric K (Liu-Talwar 2019), gamma={gamma:g}"
        if method == "liu-talwar"
        else f"random stopping, truncated negative binomial K (Papernot-Steinke 2022), eta={eta:g}, gamma={gamma:g}"
    )
    theorem = (
        f"Papernot-Steinke 2022 Theorem 2 (Rényi): best of K ~ D(eta={eta:g}, gamma={gamma:g}) runs, each "
        "bounded by the maximum over the grid of its releases' Rényi curves, converted at delta"
        if delta > 0 else
        f"Papernot-Steinke 2022 Corollary 3: best of K ~ D(eta={eta:g}, gamma={gamma:g}) runs of an "
        f"epsilon_run-DP mechanism is (2+eta)*epsilon_run-DP = {selection_epsilon_factor(eta):g} x {eps_run:.6g}"
        + (" (eta=1: Liu-Talwar 2019 random stopping, 3*epsilon_run)" if eta == 1 else "")
    )
    return LedgerEntry(
        release=RELEASE,
        mechanism=f"{MECHANISM_PREFIX}{method_name})",
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
               if encoded_once else "")
        ),
    )
