"""The public domain a readout evaluates a fitted model on: its columns, each column's values, and the 0/1 (or
binned) inputs that stand for each value.

Everything here is public: the feature names and the model's own parameters (DP-GBDT's bounds and released cut
points), or a DPPipeline's schema and cut points.  A readout computed by evaluating the model on these points is
post-processing of the released model: it reads no record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = ["Domain", "domain_of", "model_scores"]

#: Above this many points, a partial dependence averages over a fixed sample of the domain (seeded by a public
#: constant, so the readout is a function of the model alone).
ENUMERATE_LIMIT = 4096
SAMPLE_SIZE = 1024
SAMPLE_SEED = 20261127


@dataclass(frozen=True)
class Column:
    """One column of the domain: its name, its values' labels and, for each value, the model inputs it sets."""

    name: str
    features: tuple  # the model's input indices this column sets
    labels: tuple  # one label per value ("0", "1"; "<= 37", "(37, 52]"; "=Exec-managerial")
    blocks: np.ndarray  # (n values, len(features)): the inputs of each value
    kind: str = "binary"  # "binary", "numeric" (ordered bins) or "categorical"


@dataclass(frozen=True)
class Domain:
    columns: tuple
    n_inputs: int
    input_names: tuple

    def base(self) -> np.ndarray:
        """One point: every column at its first value."""
        x = np.zeros(self.n_inputs, dtype=np.float64)
        for col in self.columns:
            x[list(col.features)] = col.blocks[0]
        return x

    def size(self) -> float:
        return float(np.prod([len(c.labels) for c in self.columns], dtype=np.float64))

    def points(self) -> np.ndarray:
        """Every point of the domain (when it is small), else a fixed public sample of it (uniform per column)."""
        if self.size() <= ENUMERATE_LIMIT:
            idx = np.array(np.meshgrid(*[np.arange(len(c.labels)) for c in self.columns], indexing="ij"))
            idx = idx.reshape(len(self.columns), -1).T
        else:
            rng = np.random.default_rng(SAMPLE_SEED)
            idx = np.column_stack([rng.integers(0, len(c.labels), SAMPLE_SIZE) for c in self.columns])
        X = np.zeros((idx.shape[0], self.n_inputs), dtype=np.float64)
        for j, col in enumerate(self.columns):
            X[:, list(col.features)] = col.blocks[idx[:, j]]
        return X


def _binary_column(name: str, j: int) -> Column:
    return Column(name, (j,), ("0", "1"), np.array([[0.0], [1.0]]))


def _gbdt_column(name: str, j: int, bounds, edges) -> Column:
    """A DP-GBDT numeric feature: one value per bin between its released cut points (``x <= edge`` goes left)."""
    if bounds is None:
        return _binary_column(name, j)
    lo, hi = float(bounds[0]), float(bounds[1])
    edges = [float(e) for e in edges]
    if not edges:
        return Column(name, (j,), (f"[{lo:.6g}, {hi:.6g}]",), np.array([[lo]]), "numeric")
    labels, values = [f"<= {edges[0]:.4g}"], [edges[0]]
    for b in edges[1:]:  # the bin (a, b] by its upper edge: bins are many, read left to right
        labels.append(f"<= {b:.4g}")
        values.append(b)
    if hi > edges[-1]:
        labels.append(f"> {edges[-1]:.4g}")
        values.append(hi)
    return Column(name, (j,), tuple(labels), np.array(values, dtype=np.float64)[:, None], "numeric")


def domain_of(model) -> Domain:
    """The public domain of a fitted model's inputs: one column per feature (DP-GBDT: its bins)."""
    names = model.feature_names()
    bounds = getattr(model, "bounds_", None)
    if bounds is not None and hasattr(model, "edges_"):
        cols = [_gbdt_column(n, j, bounds[j], model.edges_[j]) for j, n in enumerate(names)]
    else:
        cols = [_binary_column(n, j) for j, n in enumerate(names)]
    return Domain(tuple(cols), len(names), tuple(names))


def _segments(col, cuts) -> tuple:
    """A schema column's values as (labels, blocks over its encoded 0/1 columns, kind)."""
    if col.kind == "numeric":
        cuts = list(cuts)
        if not cuts:
            return ("any",), np.zeros((1, 0)), "numeric"
        labels = [f"<= {cuts[0]:.6g}"] + [f"({a:.6g}, {b:.6g}]" for a, b in zip(cuts, cuts[1:])]
        labels.append(f"> {cuts[-1]:.6g}")
        blocks = np.tril(np.ones((len(cuts) + 1, len(cuts))), k=-1)  # value s is above the first s cut points
        return tuple(labels), blocks, "numeric"
    if col.kind == "categorical":
        labels = [str(c) for c in col.categories]
        blocks = np.eye(len(labels))
        if col.missing == "none":  # a missing or unlisted value sets none of the indicators
            labels.append("missing / other")
            blocks = np.vstack([blocks, np.zeros((1, len(col.categories)))])
        return tuple(labels), blocks, "categorical"
    return ("0", "1"), np.array([[0.0], [1.0]]), "binary"


def pipeline_domain(encoding, inner) -> Domain:
    """A DPPipeline's inner model's domain in the raw columns' terms: one column per schema feature column, one
    value per interval between its public cut points, per category, or 0/1.  A column the model reads itself (its
    number or code, one input named after the column) keeps the model's own values (DP-GBDT: its bins)."""
    names = tuple(encoding.feature_names())
    own = domain_of(inner).columns
    cols, start = [], 0
    for col, cuts in zip(encoding.schema.features, encoding.cuts):
        if start < len(names) and names[start] == col.name and own[start].kind == "numeric":
            cols.append(Column(col.name, (start,), own[start].labels, own[start].blocks, col.kind))
            start += 1
            continue
        labels, blocks, kind = _segments(col, cuts)
        width = blocks.shape[1]
        cols.append(Column(col.name, tuple(range(start, start + width)), labels, blocks, kind))
        start += width
    if start != len(names):  # pragma: no cover - the encoding's own column layout
        raise RuntimeError("the encoding's columns do not follow its schema's feature columns")
    return Domain(tuple(cols), len(names), names)


def model_scores(model, X: np.ndarray) -> tuple[np.ndarray, list]:
    """The model's scores on inputs ``X``: ``(n, C)`` and the label of each column (two classes: one score, for
    ``classes_[1]``; K: one per class).  ``decision_function`` where the model has one, else its probabilities."""
    names = model.feature_names()
    frame = pd.DataFrame(X, columns=names) if hasattr(model, "feature_names_in_") else X
    if not any(b is not None for b in (getattr(model, "bounds_", None) or [])):
        frame = frame.astype(np.uint8) if isinstance(frame, pd.DataFrame) else X.astype(np.uint8)
    labels = [c.item() if hasattr(c, "item") else c for c in model.classes_]
    if hasattr(model, "decision_function"):
        S = np.asarray(model.decision_function(frame), dtype=np.float64)
        if S.ndim == 1:
            return S[:, None], labels[1:]
        return S, labels
    return np.asarray(model.predict_proba(frame), dtype=np.float64), labels
