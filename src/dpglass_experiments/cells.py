"""Fitting the cells of a sweep: one unit of work is every missing cell of one (dataset, seed).

:func:`cell_estimator` builds a cell's estimator (dataset, method and cell
parameters, epsilon, seed); :func:`run_unit` fits the cells of a unit on the
unit's split and returns one row per cell.  A model family may offer a shared
fit through :func:`dpglass_experiments.shared_fit.shared_fitter` (e.g. rule lists
share the training set's counts across the epsilon grid); it is used when it
exists, and every other estimator is fitted and scored as a user would.
"""

from __future__ import annotations

import json
import math
import numbers
import time

import numpy as np
import pandas as pd

from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass_experiments.seeding import cell_key, cell_seed, dataset_split, public_split
from dpglass_experiments.specs import extra_column

__all__ = ["cell_estimator", "estimator_class", "run_unit"]

_ACCEPTED: dict = {}


def estimator_class(name: str):
    """The class of a registry name or of a ``"module:Class"`` import path."""
    if ":" in name:
        import importlib

        module, _, attr = name.partition(":")
        return getattr(importlib.import_module(module), attr)
    from dpglass.registry import get_spec

    return get_spec(name).cls


def cell_estimator(dataset, method, eps, model_seed, seed: int | None = None):
    """The estimator of a cell: dataset parameters it accepts, then the method's, the cell's, epsilon, seed.

    With ``method.tuning`` the estimator is wrapped in
    :class:`~dpglass.models.selection.estimator.PrivateGridSearch`, which gets the
    epsilon and the seed (and sets those of every candidate itself).
    """
    cls = estimator_class(method.estimator)
    if method.estimator not in _ACCEPTED:
        _ACCEPTED[method.estimator] = frozenset(cls().get_params())
    accepted = _ACCEPTED[method.estimator]
    params = {k: v for k, v in dataset.params.items() if k in accepted}
    if ":" not in method.estimator:  # a registry name builds what it says (e.g. trees)
        from dpglass.registry import get_spec

        params.update(get_spec(method.estimator).params)
    params.update(method.params)
    if method.cell_params:
        params.update(method.cell_params.get(cell_key(dataset.name, eps), {}))
        if seed is not None:
            params.update(method.cell_params.get(cell_key(dataset.name, eps, seed), {}))
    if ":" in method.estimator and "random_state" in accepted and model_seed is not None:
        model_seed = int(model_seed.generate_state(1)[0])  # foreign estimators want an int
    if method.tuning:
        from dpglass.models.selection.estimator import PrivateGridSearch

        if eps is None:
            raise InvalidParameterError(f"Method {method.name!r}: private tuning needs an epsilon grid.")
        return PrivateGridSearch(estimator=cls(**params), epsilon=float(eps), random_state=model_seed, **method.tuning)
    if eps is not None:
        params["epsilon"] = float(eps)
    if "random_state" in accepted:
        params["random_state"] = model_seed
    return cls(**params)


def _extra_value(est, attribute: str):
    """A fitted attribute of ``est`` (or of its ``best_estimator_``) as a CSV cell."""
    for obj in (est, getattr(est, "best_estimator_", None)):
        if obj is not None and hasattr(obj, attribute):
            value = getattr(obj, attribute)
            if isinstance(value, dict):
                return json.dumps(value, sort_keys=True, default=str)
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, (numbers.Number, np.number)):
                return float(value)
            return str(value)
    return math.nan


def _vulnerability(est, X_tr, y_tr, X_ev, y_ev) -> float:
    """Paper 001's V (Section V-E) of a model with rules (the rule that catches each record), else NaN."""
    if not hasattr(est, "_first_match"):
        return math.nan
    from dpglass.audit.membership import distributional_overfitting

    return distributional_overfitting(est._first_match(X_tr), y_tr, est._first_match(X_ev), y_ev).vulnerability


def _fit_as_a_user(est, X_tr, y_tr, X_ev, y_ev, names, X_public=None):
    """Fit and score any estimator as a user would (with its public part, if it has one)."""
    from dpglass_experiments.shared_fit import CellFit

    Xtr = pd.DataFrame(X_tr, columns=names)
    Xev = pd.DataFrame(X_ev, columns=names)
    start = time.perf_counter()
    if X_public is None:
        est.fit(Xtr, y_tr)
    else:
        est.fit(Xtr, y_tr, X_public=pd.DataFrame(X_public, columns=names))
    seconds = time.perf_counter() - start
    train = float(est.score(Xtr, y_tr))
    held = float(est.score(Xev, y_ev))
    vul = _vulnerability(est, Xtr.to_numpy(), y_tr, Xev.to_numpy(), y_ev)
    n_rules = len(est.rules_) if hasattr(est, "rules_") else math.nan
    return CellFit(getattr(est, "privacy_ledger_", None), n_rules, getattr(est, "stop_reason_", ""), train, held, vul,
                   seconds)


def _empty_row(config, dataset, method, eps, seed) -> dict:
    return {
        "dataset": dataset.name, "method": method.name, "epsilon": math.nan if eps is None else float(eps),
        "seed": seed, "train_accuracy": math.nan, config.score_column: math.nan, "n_rules": math.nan,
        "epsilon_spent": math.nan, "delta_spent": math.nan, "guarantee": "none", "stop_reason": "",
        "vulnerability": math.nan, "fit_seconds": math.nan,
        **{extra_column(a): math.nan for a in config.extra_columns},
    }


def run_unit(config, d_index: int, seed: int, todo, fast: bool, data_home=None) -> list[dict]:
    """Fit the cells ``todo`` [(method index, epsilon or None)] of one (dataset, seed); one row per cell.

    ``fast``: use the model family's shared fit where it has one (same rows).
    A cell whose fit raises a parameter or data error gets a row with NaN
    metrics and the error as its ``stop_reason``.
    """
    from threadpoolctl import threadpool_limits

    from dpglass_experiments.shared_fit import shared_fitter

    dataset = config.datasets[d_index]
    X, y, names = dataset.load(data_home)
    tr, ev = dataset_split(config, dataset, seed, data_home)
    X_tr, y_tr, X_ev, y_ev = X[tr], y[tr], X[ev], y[ev]
    fitters, rows = {}, []
    with threadpool_limits(1):
        for m_index, eps in todo:
            method = config.methods[m_index]
            row = _empty_row(config, dataset, method, eps, seed)
            try:
                est = cell_estimator(
                    dataset, method, eps, cell_seed(config.base_seed, dataset.name, seed, method.name, eps), seed
                )
                cls = shared_fitter(est) if fast and not method.public_fraction else None
                if cls is not None:
                    if cls not in fitters:
                        fitters[cls] = cls(X_tr, y_tr, X_ev, y_ev, names)
                    fit = fitters[cls].fit_score(est)
                else:
                    if method.public_fraction:
                        priv, pub = public_split(config, dataset, seed, len(y_tr), method.public_fraction)
                        fit = _fit_as_a_user(est, X_tr[priv], y_tr[priv], X_ev, y_ev, names, X_public=X_tr[pub])
                    else:
                        fit = _fit_as_a_user(est, X_tr, y_tr, X_ev, y_ev, names)
                    for a in config.extra_columns:
                        row[extra_column(a)] = _extra_value(est, a)
                row.update(train_accuracy=fit.train_accuracy, n_rules=fit.n_rules, stop_reason=fit.stop_reason,
                           vulnerability=fit.vulnerability, fit_seconds=fit.seconds)
                row[config.score_column] = fit.held_out_accuracy
                if fit.ledger is not None:
                    row["epsilon_spent"], row["delta_spent"] = fit.ledger.total()
                    row["guarantee"] = fit.ledger.guarantee
            except (InvalidParameterError, DataValidationError) as exc:
                row["stop_reason"] = f"error: {type(exc).__name__}: {exc}"
            rows.append(row)
    return rows
