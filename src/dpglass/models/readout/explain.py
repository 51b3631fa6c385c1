"""``model.explain()`` for every family: the fitted model as a tidy DataFrame, computed from the released model
alone (post-processing: no record is read, so the readout carries the model's guarantee and costs no budget).

The frame's ``attrs["kind"]`` says how to read it:

- ``"rules"`` (rule lists): one row per rule in order, the default rule last: ``position``, ``condition``,
  ``prediction``, ``noisy`` (whether the counts are the released noisy counts) and one ``count <label>`` column
  per class.
- ``"shapes"`` (additive models: stumps, depth-1 DP-GBDT, dp-gam, and every additive model inside a
  DPPipeline): one row per (column, value, scored class): ``group``, ``feature``, ``bin``, ``value``, ``class``,
  ``contribution``, plus the intercept rows (``"(intercept)"``).  A record's score is the intercept plus its
  columns' contributions (dp-gam keeps its own ``explain()``; the others are centred per column).
- ``"coefficients"`` (logistic models, the teacher ensembles' student): ``feature``, ``class``,
  ``coefficient``, the intercept as feature ``"(intercept)"``.
- ``"trees"`` (smooth-boosted trees, DP-GBDT deeper than 1): per (column, value, scored class) the
  ``partial_dependence`` (the mean score with the column set to the value, over the uniform distribution on the
  public domain of the other columns) and the column's ``importance`` (the largest range of its partial
  dependence over the classes).

Two classes score ``classes_[1]`` (one score); K classes score each class.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpglass.exceptions import InvalidParameterError
from dpglass.models.pipeline.route import cut_coded, interval_labels
from dpglass.models.readout.domain import ENUMERATE_LIMIT, SAMPLE_SIZE, domain_of, model_scores, pipeline_domain

__all__ = ["explain_model", "family_of", "POST_PROCESSING"]

POST_PROCESSING = ("computed from the released model alone over the public domain (post-processing: it reads no "
                   "record and spends no budget)")


def family_of(model) -> str:
    """How a fitted model reads: ``"rules"``, ``"shapes"``, ``"gam"``, ``"coefficients"``, ``"trees"`` or
    ``"pipeline"`` (from its class and public parameters; no estimator is imported)."""
    name = type(model).__name__
    if name == "DPPipeline":
        return "pipeline"
    if hasattr(model, "rules_") and hasattr(model, "default_rule_"):
        return "rules"
    if name == "DPGAMClassifier":
        return "gam"
    if hasattr(model, "coef_") and hasattr(model, "intercept_"):
        return "coefficients"
    if name == "SmoothBoostClassifier":
        return "shapes" if model.weak_learner == "stump" else "trees"
    if name == "DPGradientBoostingClassifier":
        return "shapes" if int(model.max_depth) == 1 else "trees"
    raise InvalidParameterError(f"{name} has no readout (explain, plot, card): dpglass reads the registry's "
                                "models and DPPipeline.")


def _labels(model) -> list:
    return [c.item() if hasattr(c, "item") else c for c in model.classes_]


def _framed(frame: pd.DataFrame, kind: str, note: str) -> pd.DataFrame:
    frame.attrs["kind"] = kind
    frame.attrs["note"] = note
    return frame


def explain_model(model) -> pd.DataFrame:
    """The tidy readout of a fitted model (see the module's docstring for its columns)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(model)
    if hasattr(model, "best_estimator_"):  # a private selection: its readout is the selected model's
        return explain_model(model.best_estimator_)
    family = family_of(model)
    if family == "pipeline":
        return _pipeline_frame(model)
    if family == "rules":
        return rules_frame(model)
    if family == "gam":
        return _gam_frame(model)
    if family == "coefficients":
        return coefficients_frame(model)
    if family == "shapes":
        return shapes_frame(model, domain_of(model))
    return trees_frame(model, domain_of(model))


def rules_frame(model) -> pd.DataFrame:
    """One row per rule, the default rule last: its condition, the class it predicts and its (noisy) counts."""
    labels = _labels(model)
    rows = []
    for i, rule in enumerate(list(model.rules_) + [model.default_rule_], 1):
        cond = " and ".join(str(c) for c in rule.conditions) or "otherwise (default rule)"
        row = {"position": i, "condition": cond, "prediction": labels[rule.prediction], "noisy": bool(rule.noisy)}
        row.update({f"count {label}": float(v) for label, v in zip(labels, rule.counts)})
        rows.append(row)
    return _framed(pd.DataFrame(rows), "rules", "the rules as released: the first rule a record meets predicts")


def coefficients_frame(model) -> pd.DataFrame:
    """The released coefficients and intercept of each scored class."""
    labels = _labels(model)
    coef, intercept = np.atleast_2d(model.coef_), np.atleast_1d(model.intercept_)
    classes = labels[1:] if coef.shape[0] == 1 else labels
    names = model.feature_names()
    rows = []
    for k, label in enumerate(classes):
        rows += [(n, label, float(coef[k, j])) for j, n in enumerate(names)]
        rows.append(("(intercept)", label, float(intercept[k])))
    return _framed(pd.DataFrame(rows, columns=["feature", "class", "coefficient"]), "coefficients",
                   "the released coefficients: a record's score is the intercept plus the coefficients of its "
                   "features that are 1")


def _gam_frame(model) -> pd.DataFrame:
    frame = model.explain()  # dp-gam's own readout (models/gam/readout.py)
    if "value" not in frame:
        frame.insert(3, "value", frame["bin"])
    frame["value"] = ["" if pd.isna(v) else str(v) for v in frame["value"]]
    return _framed(frame, "shapes", "the released shape functions (dp-gam's explain())")


def shapes_frame(model, domain) -> pd.DataFrame:
    """An additive model's contribution of each column at each of its values, centred per column (mean 0 over
    the column's values), and the intercept: evaluated on the public domain (post-processing)."""
    base = domain.base()
    X, where = [base], []
    for ci, col in enumerate(domain.columns):
        for v in range(len(col.labels)):
            x = base.copy()
            x[list(col.features)] = col.blocks[v]
            X.append(x)
            where.append((ci, v))
    S, scored = model_scores(model, np.array(X))
    deltas = S[1:] - S[0]
    intercept = S[0].copy()
    recs = []
    for ci, col in enumerate(domain.columns):
        at = [i for i, (c, _) in enumerate(where) if c == ci]
        mean = deltas[at].mean(axis=0)
        intercept += mean
        for i in at:
            v = where[i][1]
            recs += [(col.name, col.name, v, col.labels[v], label, float(deltas[i, k] - mean[k]))
                     for k, label in enumerate(scored)]
    recs = [("(intercept)", "(intercept)", pd.NA, "", label, float(intercept[k])) for k, label in enumerate(scored)] + recs
    frame = pd.DataFrame(recs, columns=["group", "feature", "bin", "value", "class", "contribution"])
    frame["bin"] = frame["bin"].astype("Int64")
    return _framed(frame, "shapes", "each column's contribution to the score, " + POST_PROCESSING)


def trees_frame(model, domain) -> pd.DataFrame:
    """Per column and value, the partial dependence of each scored class's score, and the column's importance,
    over the uniform distribution on the public domain (every point, or a fixed public sample of it)."""
    P = domain.points()
    recs = []
    for col in domain.columns:
        means = []
        for v in range(len(col.labels)):
            X = P.copy()
            X[:, list(col.features)] = col.blocks[v]
            S, scored = model_scores(model, X)
            means.append(S.mean(axis=0))
        means = np.array(means)
        importance = float(np.max(means.max(axis=0) - means.min(axis=0)))
        recs += [(col.name, col.name, v, col.labels[v], label, float(means[v, k]), importance)
                 for v in range(len(col.labels)) for k, label in enumerate(scored)]
    frame = pd.DataFrame(recs, columns=["group", "feature", "bin", "value", "class", "partial_dependence",
                                        "importance"])
    how = "every point" if domain.size() <= ENUMERATE_LIMIT else f"a fixed sample of {SAMPLE_SIZE} points"
    return _framed(frame, "trees", f"partial dependence over the uniform distribution on the public domain ({how}), "
                   + POST_PROCESSING)


def _pipeline_frame(model) -> pd.DataFrame:
    """A DPPipeline in its raw columns' terms: its rules as printed (conditions name raw columns), or its model's
    contribution / partial dependence per raw column over the schema's values (intervals between the public cut
    points, categories)."""
    inner = model.model_
    inner = getattr(inner, "best_estimator_", inner)  # a searched pipeline: the selected model's readout
    family = family_of(inner)
    enc = model.encoding_
    if family == "rules":
        frame = rules_frame(inner)
    elif family == "gam" and (getattr(enc, "numbers", False) or getattr(enc, "codes", False)):
        frame = _category_names(_gam_frame(inner), enc)  # dp-gam reads numbers and codes: shapes per raw column
    elif family == "trees":
        frame = trees_frame(inner, pipeline_domain(enc, inner))
    else:  # every other family is additive in its inputs, hence in the raw columns
        frame = shapes_frame(inner, pipeline_domain(enc, inner))
    frame.attrs["model"] = type(inner).__name__
    return frame


def _category_names(frame: pd.DataFrame, enc) -> pd.DataFrame:
    """A categorical column read as codes (the pipeline's codes route: a category's index in the schema's list,
    the extra last code for a missing or unlisted value) shown by its categories' names; a numeric column listing its
    cut points read as the code of its interval (the cut-codes route) shown by its interval ("(0.5, 1.5]")."""
    cats = {c.name: [str(v) for v in c.categories] for c in enc.schema.features if c.kind == "categorical"}
    cats.update({c.name: interval_labels(c) for c in enc.schema.features if cut_coded(enc, c)})
    values = []
    for g, b, v in zip(frame["group"], frame["bin"], frame["value"]):
        if g in cats and not pd.isna(b) and v == str(int(b)):
            v = cats[g][int(b)] if int(b) < len(cats[g]) else "missing / other"
        values.append(v)
    frame["value"] = values
    return frame
