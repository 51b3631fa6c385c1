"""DPLogisticRegression's model-file checks: shapes, the release plan replayed, the intercept recomputed.

Two classes: ``coef`` holds d numbers and ``intercept``/``intercept_grid`` are numbers (the binary model).
K >= 3 classes (multinomial): ``coef`` holds K rows of d numbers and ``intercept``/``intercept_grid`` K numbers,
in ``classes`` order; the first class is the reference, whose row and intercepts are exactly 0 (public
constants, not releases), and ``class_counts`` holds K counts.
"""

from __future__ import annotations

import numpy as np

from dpglass.exceptions import InvalidParameterError
from dpglass.models._file_checks import (
    COUNT_MECHANISM, _Context, _fail,
    _is_count, _is_num, _need_num,
)


def _check_logistic(data: dict, ctx: _Context) -> None:
    """The file's state against the parameters, the schema (its K labels, d features) and the replayed plan."""
    k = len(data["classes"])  # the top-level check has refused anything but distinct labels
    _check_declared_classes(data, ctx)
    if k == 2:
        _check_binary_state(data, ctx)
    else:
        _check_class_state(data, ctx, k)
    from dpglass.models.logistic.plan import release_plan
    from dpglass.privacy.plan import check_against_plan, check_domains

    try:
        plan = release_plan(ctx.params, ctx.d, k)
    except (InvalidParameterError, TypeError, ValueError) as err:
        _fail("params", f"give no release plan ({err})", "the parameters of a fit that ran")
    if ctx.ledger is not None:  # its own fit: the ledger is the plan (a selection's file: its selection's entry)
        check_against_plan(ctx.entries, plan, data, _fail)
        if ctx.ledger.accountant != "basic" or ctx.ledger.delta != 0.0:  # what the fit writes: pure, summed
            _fail("privacy_ledger", f"has accountant {ctx.ledger.accountant!r} and delta {ctx.ledger.delta!r}",
                  "'basic' and 0 (the coefficients and counts are pure epsilon-DP)")
    else:  # the released values still lie in the plan's domains
        check_domains(plan, data, _fail)
    if data.get("grid_step") != plan[-1].domain.step:
        _fail("grid_step", f"is {data.get('grid_step')!r}", f"{plan[-1].domain.step!r}, the plan's grid")


def _check_declared_classes(data: dict, ctx: _Context) -> None:
    """A declared label set is the file's ``classes``, in its order (the coefficients' rows and predict_proba's
    columns follow it)."""
    declared = ctx.params.get("classes")
    if declared is None:
        return
    want = [str(v) for v in np.asarray(declared).tolist()]
    if not isinstance(declared, list) or [str(v) for v in np.asarray(data["classes"]).tolist()] != want:
        _fail("classes", f"is {data['classes']!r}", f"params.classes = {declared!r}, in that order")


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
    """K >= 3 classes: K rows of d coefficients and K intercepts, the reference's exactly 0; the intercepts are
    the grid coordinates plus the offsets of the K released counts (recomputed)."""
    from dpglass.models.logistic.plan import class_offsets

    coef = data.get("coef")
    if not (isinstance(coef, list) and len(coef) == k):
        _fail("coef", "is missing" if coef is None else f"is {_short(coef)}",
              f"{k} rows (one per class) of {ctx.d} coefficients")
    for i, row in enumerate(coef):
        if not (isinstance(row, list) and len(row) == ctx.d and all(_is_num(v) for v in row)):
            _fail(f"coef[{i}]", f"is {_short(row)}", f"{ctx.d} finite numbers (n_features_in)")
    vectors = {}
    for key in ("intercept", "intercept_grid"):
        value = data.get(key)
        if not (isinstance(value, list) and len(value) == k and all(_is_num(v) for v in value)):
            _fail(key, "is missing" if value is None else f"is {_short(value)}", f"{k} finite numbers (one per class)")
        vectors[key] = value
    for field, value in (("coef[0]", coef[0]), ("intercept[0]", vectors["intercept"][0]),
                         ("intercept_grid[0]", vectors["intercept_grid"][0])):
        if np.any(np.asarray(value) != 0.0):
            _fail(field, f"is {_short(value)}", f"0: {data['classes'][0]!r} is the reference class")
    counts = data.get("class_counts", "missing")
    if not ctx.params.get("fit_intercept", True):
        if counts is not None:
            _fail("class_counts", f"is {counts!r}", "null with fit_intercept=false")
        for key, value in vectors.items():
            if any(v != 0.0 for v in value):
                _fail(key, f"is {_short(value)}", "0 for every class with no class counts (fit_intercept=false)")
        return
    if not (isinstance(counts, list) and len(counts) == k and all(_is_count(c) for c in counts)):
        _fail("class_counts", f"is {_short(counts)}", f"the {k} released noisy class counts (integers)")
    want = [0.0] + [g + b for g, b in zip(vectors["intercept_grid"][1:], class_offsets(counts))]
    if vectors["intercept"] != want:
        _fail("intercept", f"is {_short(vectors['intercept'])}",
              f"intercept_grid + the offsets of class_counts = {want!r}")


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
