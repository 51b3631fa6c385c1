"""Verification of a file written by :class:`~dpglass.models.PrivateGridSearch`: the selected model, with the
selection's ledger and ``selected_by``.

The check rebuilds the search's release plan (:func:`~dpglass.models.selection.plan.release_plan`) from the
file's own public parameters: ``selected_by`` (method, eta, stopping probability, validation fraction, the grid,
whether a pipeline's encoding came first), the ledger's budget, and the selected model's parameters (the search's
estimator at one grid point).  Every grid point is checked as ``fit`` checks it before any run; the ledger must be
the plan's one entry exactly (:func:`~dpglass.privacy.plan.check_against_plan`: its epsilon is the theorem's, or
the Rényi bound calibrated again from the grid; its guarantee the grid's weakest); the released grid point must be
one of the grid's and the noisy score an integer; and the selected model must be that grid point run with the
budget the search gives every run.  The model's own released values are then checked by its family's file check
(without a ledger of its own).
"""

from __future__ import annotations

import math

from dpglass.exceptions import InvalidParameterError
from dpglass.models._file_checks import _Context, _fail, _is_num, _need
from dpglass.models.selection.candidates import same_point
from dpglass.models.selection.plan import METHODS, checked_grid, release_plan
from dpglass.privacy.plan import check_against_plan

__all__ = ["check_selection"]

#: What ``PrivateGridSearch.to_dict`` writes under ``selected_by`` (and ``encoded_once``, true, for a pipeline's).
KEYS = ("method", "best_params", "noisy_correct_count", "eta", "stopping_probability", "param_grid",
        "validation_fraction")


def check_selection(data: dict, ctx: _Context) -> None:
    """Refuse a selection file whose ledger, released values or selected model are not its plan's."""
    sel = _need(data, "selected_by", "selected_by", dict, "the selection's method and parameters")
    keys = set(KEYS) | ({"encoded_once"} if "encoded_once" in sel else set())
    if set(sel) != keys:
        odd = sorted(set(sel) ^ keys)[0]
        _fail(f"selected_by.{odd}", "is missing" if odd in keys else "is not a field dpglass writes",
              f"exactly {sorted(KEYS)} (and encoded_once: true for a DPPipeline's selection)")
    if sel.get("encoded_once", True) is not True:
        _fail("selected_by.encoded_once", f"is {sel['encoded_once']!r}", "true (a DPPipeline's selection) or absent")
    params = _search_params(sel, ctx)
    try:
        checked_grid(params)  # every grid point, as fit checks them before any run
    except (InvalidParameterError, TypeError, ValueError) as exc:
        _fail("selected_by.param_grid", f"is not a grid PrivateGridSearch runs on this model ({exc})",
              "the grid the selection drew from")
    try:
        plan = release_plan(params, encoded_once="encoded_once" in sel)
    except (InvalidParameterError, TypeError, ValueError, OverflowError) as exc:
        _fail("selected_by", f"does not give a selection that fits the budget ({exc})",
              "the parameters of a selection dpglass ran")
    raw = data["privacy_ledger"]
    if raw.get("accountant", "basic") != "basic":  # the selection's ledger holds its one entry, summed
        _fail("privacy_ledger.accountant", f"is {raw.get('accountant')!r}", "'basic' (a selection's ledger)")
    check_against_plan(raw["entries"], plan.steps, data, _fail)
    # the selected model is the released grid point, run with the budget the search gives every run
    for key, value in {**sel["best_params"], **plan.run_budget}.items():
        if key not in ctx.params or not same_point(ctx.params[key], value):
            _fail(f"params.{key}", f"is {ctx.params.get(key)!r}",
                  f"{value!r}, the selected grid point and the run budget the selection sets")


def _search_params(sel: dict, ctx: _Context) -> dict:
    """The search's parameters as the file states them, each in its range (the estimator: the selected model's
    class and parameters, which the search sets again at every grid point)."""
    method = _need(sel, "method", "selected_by.method", str, f"one of {METHODS}")
    if method not in METHODS:
        _fail("selected_by.method", f"is {method!r}", f"one of {METHODS}")
    _need(sel, "best_params", "selected_by.best_params", dict, "the selected grid point")
    _need(sel, "param_grid", "selected_by.param_grid", list, "the grid the selection drew from")
    eta, gamma, f = (sel[k] for k in ("eta", "stopping_probability", "validation_fraction"))
    if not (_is_num(eta) and eta >= 0) or (method == "liu-talwar" and eta != 1):
        _fail("selected_by.eta", f"is {eta!r}", "1 for liu-talwar, a number >= 0 for papernot-steinke")
    if not (_is_num(gamma) and 0 < gamma <= 1) or (method != "liu-talwar" and gamma == 1):
        _fail("selected_by.stopping_probability", f"is {gamma!r}", "in (0, 1] (1 only for liu-talwar)")
    if not (_is_num(f) and 0 < f < 1):
        _fail("selected_by.validation_fraction", f"is {f!r}", "in (0, 1)")
    if ctx.ledger is None or not math.isfinite(ctx.ledger.epsilon):
        _fail("privacy_ledger", "is missing", "the selection's ledger")
    estimator = ctx.cls(**ctx.cls._params_from_dict(dict(ctx.params)))
    return {"estimator": estimator, "param_grid": sel["param_grid"], "epsilon": ctx.ledger.epsilon,
            "delta": ctx.ledger.delta, "method": method, "stopping_probability": float(gamma), "eta": float(eta),
            "validation_fraction": float(f)}
