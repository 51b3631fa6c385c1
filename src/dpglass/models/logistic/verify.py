"""DPLogisticRegression's model-file checks: shapes, the release plan replayed, the intercept recomputed.

Two classes: ``coef`` holds d numbers and ``intercept``/``intercept_grid`` are numbers (the binary model).
K >= 3 classes (multinomial): the released free rows ``coef_grid`` (K - 1 rows of d numbers) and
``intercept_grid`` (K - 1 numbers), ``class_counts`` (K counts), and the class rows they give, ``coef`` (K rows,
in ``classes`` order) and ``intercept`` (K numbers), recomputed here bit for bit (``plan.class_rows``).
"""

from __future__ import annotations

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models._file_checks import (
    COUNT_MECHANISM, _Context, _fail,
    _is_count, _is_num, _need_num, _replay_plan,
)


def _check_logistic(data: dict, ctx: _Context) -> None:
    """The file's state against the parameters, the schema (its K labels, d features) and the replayed plan."""
    k = len(data["classes"])  # the top-level check has refused anything but distinct labels
    if k == 2:
        _check_binary_state(data, ctx)
    else:
        _check_class_state(data, ctx, k)
    from dpglass.models.logistic.plan import release_plan

    try:
        plan = release_plan(ctx.params, ctx.d, k)
    except (InvalidParameterError, TypeError, ValueError) as err:
        _fail("params", f"give no release plan ({err})", "the parameters of a fit that ran")
    _replay_plan(ctx, plan, data)  # its own fit: the ledger is the plan (a selection's file: its values' domains)
    if ctx.ledger is not None and (ctx.ledger.accountant != "basic" or ctx.ledger.delta != 0.0):
        # what the fit writes: pure, summed
        _fail("privacy_ledger", f"has accountant {ctx.ledger.accountant!r} and delta {ctx.ledger.delta!r}",
              "'basic' and 0 (the coefficients and counts are pure epsilon-DP)")
    if data.get("grid_step") != plan[-1].domain.step:
        _fail("grid_step", f"is {data.get('grid_step')!r}", f"{plan[-1].domain.step!r}, the plan's grid")


def _check_binary_state(data: dict, ctx: _Context) -> None:
    """Shape and finiteness of whatever coefficient fields the file holds (names read defensively)."""
    coef_keys = [k for k in data if "coef" in k.lower()]
    vectors = [k for k in coef_keys if isinstance(data[k], list)]
    if not vectors:
        _fail("coef", "is missing", f"the {ctx.d} coefficients of the model")
    for key in coef_keys:
        value = data[key]
        if isinstance(value, list):
            if len(value) != ctx.d or not all(_is_num(v) for v in value):
                _fail(key, f"has {len(value)} entries", f"{ctx.d} finite numbers (n_features_in)")
        elif not _is_num(value):
            _fail(key, f"is {value!r}", "a finite number")
    for key in (k for k in data if "intercept" in k.lower()):
        value = data[key]
        values = value if isinstance(value, list) else [value]
        if not all(_is_num(v) for v in values):
            _fail(key, f"is {value!r}", "a finite number")
    if not ctx.params.get("fit_intercept", True) and (data.get("intercept") != 0.0 or any(
            e.get("mechanism") == COUNT_MECHANISM for e in ctx.entries)):
        _fail("intercept", f"is {data.get('intercept')!r}", "0 with no class counts (fit_intercept=false)")
    if "class_counts" in data:
        _check_logistic_offset(data, ctx)
    elif ("intercept_grid" in data or ctx.params.get("alpha") == "auto"
          or any(e.get("mechanism") == COUNT_MECHANISM for e in ctx.entries)):  # only files from before the offset lack it
        _fail("class_counts", "is missing", "the released class counts (every file since the class-count offset)")


def _check_logistic_offset(data: dict, ctx: _Context) -> None:
    """DPLogisticRegression: the intercept is the grid coordinate plus the log-odds of the released class counts
    (derived values: recomputed from the releases)."""
    from dpglass.models.logistic.plan import class_offset

    counts, p = data["class_counts"], ctx.params
    if not p.get("fit_intercept", True):
        if counts is not None:
            _fail("class_counts", f"is {counts!r}", "null with fit_intercept=false")
        return
    if not (isinstance(counts, list) and len(counts) == 2 and all(_is_count(c) for c in counts)):
        _fail("class_counts", f"is {counts!r}", "the two released noisy class counts (integers)")
    grid = _need_num(data, "intercept_grid", "intercept_grid")
    if data.get("intercept") != grid + class_offset(counts):
        _fail("intercept", f"is {data.get('intercept')!r}",
              f"intercept_grid + the offset of class_counts = {grid + class_offset(counts)!r}")


def _check_class_state(data: dict, ctx: _Context, k: int) -> None:
    """K >= 3 classes: the released free rows and intercept coordinates (K - 1), the K class counts, and the class
    rows and intercepts they give (derived: recomputed exactly from the releases)."""
    from dpglass.models.logistic.plan import class_rows, class_score_offsets

    shapes = {"coef_grid": (k - 1, ctx.d), "coef": (k, ctx.d), "intercept_grid": (k - 1,), "intercept": (k,)}
    values = {key: _numbers(data, key, shape) for key, shape in shapes.items()}
    counts = data.get("class_counts", "missing")
    if not ctx.params.get("fit_intercept", True):
        if counts is not None:
            _fail("class_counts", f"is {_short(counts)}", "null with fit_intercept=false")
        if np.any(values["intercept_grid"] != 0.0):
            _fail("intercept_grid", f"is {_short(data['intercept_grid'])}", "0 for every row with fit_intercept=false")
        offsets = np.zeros(k)
    else:
        if not (isinstance(counts, list) and len(counts) == k and all(_is_count(c) for c in counts)):
            _fail("class_counts", f"is {_short(counts)}", f"the {k} released noisy class counts (integers)")
        offsets = np.array(class_score_offsets(counts))
    derived = {"coef": class_rows(values["coef_grid"]),
               "intercept": class_rows(values["intercept_grid"]) + offsets}
    for key, want in derived.items():
        if not np.array_equal(values[key], want):
            _fail(key, f"is {_short(data[key])}", f"the class rows of the released {key}_grid"
                  + (" plus the offsets of class_counts" if key == "intercept" else "") + f" = {_short(want.tolist())}")


def _numbers(data: dict, key: str, shape: tuple) -> np.ndarray:
    """``data[key]`` as an array of ``shape`` (lists of finite numbers), or refused naming the field."""
    value = data.get(key)
    rows = value if len(shape) == 2 else [value]
    want = f"{shape[0]} rows of {shape[1]} finite numbers" if len(shape) == 2 else f"{shape[0]} finite numbers"
    if not (isinstance(value, list) and len(value) == shape[0]):
        _fail(key, "is missing" if value is None else f"is {_short(value)}", want)
    for i, row in enumerate(rows):
        if not (isinstance(row, list) and len(row) == shape[-1] and all(_is_num(v) for v in row)):
            _fail(f"{key}[{i}]" if len(shape) == 2 else key, f"is {_short(row)}", want)
    return np.array(value, dtype=np.float64).reshape(shape)


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
