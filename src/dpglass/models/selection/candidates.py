"""What a private selection may search, from public parameters only: the grid's points, the law's shape, and the
candidates that fit the budget the search gives them.

Low in the family: :class:`~dpglass.models.selection.estimator.PrivateGridSearch` runs these checks before it reads
the data, and its file check (:mod:`dpglass.models.selection.verify`) runs them again on the file's grid and
parameters, neither importing the other.
"""

from __future__ import annotations

import json
import math
import numbers

from sklearn.base import BaseEstimator, clone
from sklearn.model_selection import ParameterGrid

from dpglass.exceptions import InvalidParameterError
from dpglass.models.selection.rdp import candidate_budget, is_planned, unplanned_gam

__all__ = ["check_candidates", "declared_classes", "grid_as_list", "resolved_eta", "same_point"]

#: Parameters the search sets itself on every candidate (never in the grid).
RESERVED = ("epsilon", "delta", "random_state")


def _fail(name, what, value):
    raise InvalidParameterError(f"The {name!r} parameter of PrivateGridSearch must be {what}. Got {value!r} instead.")


def resolved_eta(method: str, eta, stopping_probability, delta) -> float:
    """The law's shape ``eta`` (1 for ``"liu-talwar"``), after the checks ``_validate_params`` cannot express."""
    if not (isinstance(delta, numbers.Real) and not isinstance(delta, bool) and 0 <= delta < 1
            and math.isfinite(delta)):
        _fail("delta", "a float in [0, 1): 0 for the pure theorem (Papernot-Steinke 2022 Corollary 3), "
              "> 0 for the Rényi one (their Theorem 2)", delta)
    if method == "liu-talwar":
        if eta is not None and eta != 1:
            _fail("eta", "None (or 1) with method='liu-talwar', whose law is geometric "
                  "(use method='papernot-steinke' for another eta)", eta)
        return 1.0
    if stopping_probability >= 1:
        _fail("stopping_probability", "a float in the range (0, 1) with method='papernot-steinke'",
              stopping_probability)
    return 0.0 if eta is None else float(eta)


def check_candidates(est, grid, delta: float) -> list[dict]:
    """The grid's points, each checked as a candidate of ``est`` run with the budget the search gives it.

    Refuses, before any run, an estimator that is not a DP dpglass classifier, a grid naming a reserved or
    unknown parameter, an invalid grid point, and a candidate that would spend delta under the search's budget.
    """
    if not (isinstance(est, BaseEstimator) and hasattr(est, "fit") and hasattr(est, "predict")):
        _fail("estimator", "a dpglass classifier (a scikit-learn estimator with fit and predict)", est)
    base = est.get_params(deep=False)
    if "epsilon" not in base or "random_state" not in base:
        _fail(
            "estimator",
            "a differentially private dpglass estimator with 'epsilon' and 'random_state' parameters "
            "(e.g. SmoothBoostClassifier, DPLogisticRegression)",
            est,
        )
    if not isinstance(grid, (dict, list, tuple)) or (isinstance(grid, (list, tuple)) and not grid):
        _fail("param_grid", "a dict of lists of values, or a non-empty list of such dicts", grid)
    try:
        candidates = list(ParameterGrid(grid))
    except (TypeError, ValueError) as exc:
        raise InvalidParameterError(f"The 'param_grid' parameter of PrivateGridSearch is invalid: {exc}") from None
    reserved = sorted({k for p in candidates for k in p if k.rsplit("__", 1)[-1] in RESERVED})
    if reserved:
        _fail(
            "param_grid",
            "free of 'epsilon', 'delta' and 'random_state' (the search sets epsilon and random_state "
            f"of every candidate itself); found {reserved}",
            grid,
        )
    if delta > 0 and any("accountant" in p for p in candidates):
        _fail("param_grid", "free of 'accountant' when delta > 0 (the search runs candidates with the "
              "Rényi accountant it composes them by)", grid)
    if delta > 0 and isinstance(grid, (list, tuple)) and len({tuple(sorted(g)) for g in grid}) > 1:
        _fail("param_grid", "one dict, or dicts over the same parameters, when delta > 0 (the Rényi "
              "bound is recomputed from the grid and the selected model's parameters)", grid)
    for params in candidates:
        cand = clone(est)
        try:
            cand.set_params(**params)
        except ValueError as exc:
            raise InvalidParameterError(
                f"The 'param_grid' parameter of PrivateGridSearch names a parameter "
                f"{type(est).__name__} does not have: {exc}"
            ) from None
        if hasattr(cand, "_validate_params"):
            try:
                cand._validate_params()
            except InvalidParameterError as exc:
                raise InvalidParameterError(f"Grid point {params!r} is invalid: {exc}") from None
        _check_candidate_delta(cand, params, delta)
    return candidates


def _check_candidate_delta(cand, params: dict, delta: float) -> None:
    """Refuse, before any run, a candidate that would spend delta under the budget the search gives it.

    The search sets every candidate's ``delta`` itself (``candidate_budget``: the search's delta for a
    candidate it composes by Rényi curves, else 0), so the candidate's own ``delta`` (``None`` included)
    does not matter; what does is whether the candidate, run with that delta, needs delta > 0.  Public
    parameters only: the model's own ``_needs_delta`` where it has one (rule lists: its delta plan), else
    Gaussian noise parameters, else a ``delta`` constraint that refuses 0 (DP-Bag's moments accountant).
    """
    run = clone(cand).set_params(**candidate_budget(cand, 1.0, float(delta)))
    if run.get_params(deep=False).get("delta", 0.0) != 0:
        return  # it runs with the search's delta > 0 and is composed by its curves (selection.rdp)
    name = type(cand).__name__
    point = f" at grid point {params!r}" if params else ""
    why = unplanned_gam(run)
    if why:  # Gaussian sums always spend delta: searched only by their Rényi curves
        raise InvalidParameterError(f"{name}{point} cannot be searched: {why}.")
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
    if isinstance(needs, str) and not is_planned(run):  # no delta makes it a candidate: not 0 (pure), and no Rényi curve for > 0
        raise InvalidParameterError(
            f"{name}{point} cannot be searched: {needs} (it always spends delta), and PrivateGridSearch "
            "composes its runs either as pure epsilon-DP (delta=0) or by the Rényi curves of their release "
            f"plans (delta > 0), which {name} does not declare. Fit it on its own budget instead.")
    if float(delta) == 0 and is_planned(run):  # a delta > 0 search would compose it
        raise InvalidParameterError(
            f"{what}{point} needs delta > 0; give the search a delta > 0 or choose a pure mechanism "
            "(PrivateGridSearch with delta=0 runs every candidate with delta=0: its selection theorem is for "
            "pure epsilon-DP runs).")
    raise InvalidParameterError(
        f"{what}{point} needs delta > 0, but it declares no release plan, so PrivateGridSearch runs it with "
        "delta=0 as a pure epsilon-DP candidate whatever the search's delta (a delta > 0 search composes "
        "only planned candidates by their Rényi curves); choose a pure configuration (Laplace noise) to "
        "search it.")


def declared_classes(estimator):
    """The label set the estimator declares (its ``classes`` parameter, or a DPPipeline's model's), or None."""
    params = estimator.get_params(deep=False) if hasattr(estimator, "get_params") else {}
    if "classes" not in params and hasattr(params.get("model"), "get_params"):  # a DPPipeline: its model's
        params = params["model"].get_params(deep=False)
    classes = params.get("classes")
    return None if classes is None else list(classes)


def grid_as_list(grid) -> list:
    """The grid as a JSON list of dicts of lists (ParameterGrid's own input form)."""
    grids = [grid] if isinstance(grid, dict) else list(grid)
    return [{k: list(v) for k, v in g.items()} for g in grids]


def same_point(a, b) -> bool:
    """Two grid points (or values in them) are the same, types included: ``3`` is not ``3.0`` nor ``True``."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_point(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_point(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    try:
        return bool(a == b)
    except (TypeError, ValueError):  # e.g. arrays: compare their JSON text
        return json.dumps(a, default=repr) == json.dumps(b, default=repr)
