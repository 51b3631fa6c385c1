"""Whole-artifact checks: what a user publishes must not be a function of the data alone.

Neighbouring datasets differ by one record, so the number of records is
private, and so is anything computed from the data without noise.  A field of
a published artifact (the saved JSON, the printout, the CLI's output) that
takes the same value for every seed on a dataset D is a deterministic
function of D; if it takes another constant value on D minus one record, it
tells the two apart with certainty: epsilon = infinity for that artifact, no
matter what the mechanisms inside prove.

:func:`deterministic_leaks` runs that comparison.  It is a necessary check,
not a proof: a field that varies with the seed can still leak (that is what
the learner audit, :mod:`dpglass.audit.learners`, measures).

Examples
--------
>>> a = [{"n": 10, "noisy": 3}, {"n": 10, "noisy": 5}]
>>> b = [{"n": 9, "noisy": 4}, {"n": 9, "noisy": 2}]
>>> deterministic_leaks(a, b)
[('n', 10, 9)]
"""

from __future__ import annotations

import json
import math
import numbers

__all__ = ["artifact_fields", "deterministic_leaks", "model_artifact", "neighbour_artifact_check", "non_grid_numbers"]


def artifact_fields(obj, prefix: str = "") -> dict:
    """Flatten nested dicts and lists to ``{"a.b[2].c": leaf}``.

    Examples
    --------
    >>> artifact_fields({"a": [1, {"b": "x"}]})
    {'a[0]': 1, 'a[1].b': 'x'}
    """
    out = {}
    if isinstance(obj, dict):
        for key, value in obj.items():
            out.update(artifact_fields(value, f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(obj, (list, tuple)):
        for i, value in enumerate(obj):
            out.update(artifact_fields(value, f"{prefix}[{i}]"))
    else:
        out[prefix] = obj
    return out


def model_artifact(model) -> dict:
    """Everything a fitted model lets its owner publish: its JSON and its printout, line by line."""
    data = json.loads(json.dumps(model.to_dict()))
    return {"json": data, "text": str(model).splitlines()}


def _constant_fields(artifacts: list) -> dict:
    flat = [artifact_fields(a) for a in artifacts]
    keys = set(flat[0])
    for f in flat[1:]:
        keys &= set(f)
    # a field missing on some runs varies with the noise (e.g. a rule that is not always found)
    return {k: flat[0][k] for k in keys if all(_same(f[k], flat[0][k]) for f in flat[1:])}


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def deterministic_leaks(side_a: list, side_b: list) -> list:
    """Fields constant across all artifacts of each side whose constants differ.

    Parameters
    ----------
    side_a, side_b : list of JSON-like artifacts
        Artifacts of many seeds on D and on its neighbour D'.

    Returns
    -------
    list of (field, value on D, value on D')
        Empty when no field is a deterministic function that tells D from D'.
        A field constant on one side and absent on the other counts too.
    """
    const_a, const_b = _constant_fields(side_a), _constant_fields(side_b)
    present_a = set().union(*(artifact_fields(a) for a in side_a))
    present_b = set().union(*(artifact_fields(b) for b in side_b))
    leaks = []
    for key in sorted(set(const_a) | set(const_b)):
        if key in const_a and key in const_b:
            if not _same(const_a[key], const_b[key]):
                leaks.append((key, const_a[key], const_b[key]))
        elif key in const_a and key not in present_b:
            leaks.append((key, const_a[key], "<absent>"))
        elif key in const_b and key not in present_a:
            leaks.append((key, "<absent>", const_b[key]))
    return leaks


def non_grid_numbers(artifact, fields: tuple = ("counts",), grid: float = 1.0) -> list:
    """Numeric leaves whose path contains one of ``fields`` and that are not multiples of ``grid``.

    The floating-point test: released noisy values must lie on a public grid
    (integers for counts), so that their low bits carry nothing (Mironov 2012).

    Examples
    --------
    >>> non_grid_numbers({"rules": [{"counts": [3, 4.5]}]})
    [('rules[0].counts[1]', 4.5)]
    """
    bad = []
    for key, value in artifact_fields(artifact).items():
        if not any(f in key for f in fields) or isinstance(value, bool) or not isinstance(value, numbers.Real):
            continue
        if not math.isfinite(value) or value / grid != round(value / grid):
            bad.append((key, value))
    return bad


def neighbour_artifact_check(make, X, y, *, drop: int = 0, seeds=range(10)) -> list:
    """:func:`deterministic_leaks` of ``make(seed).fit`` on ``(X, y)`` and on it without row ``drop``.

    ``make(seed)`` returns an unfitted estimator.  Returns the leaks (empty
    when none): run it on data the model's own tests do not use.
    """
    import numpy as np

    keep = np.arange(len(y)) != drop
    X2 = X.iloc[keep] if hasattr(X, "iloc") else np.asarray(X)[keep]
    y2 = y.iloc[keep] if hasattr(y, "iloc") else np.asarray(y)[keep]
    side_a = [model_artifact(make(s).fit(X, y)) for s in seeds]
    side_b = [model_artifact(make(s).fit(X2, y2)) for s in seeds]
    return deterministic_leaks(side_a, side_b)
