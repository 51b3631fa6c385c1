"""The search's table of records for candidates that read numbers (a ``bounds`` or ``categories`` given).

:class:`~dpglass.models.PrivateGridSearch` splits its data once, per record, and trains every run on the training
part.  For 0/1 candidates the data is their :class:`~dpglass.aggregates.PatternTable` (bit-packed rows); a
candidate that bins numbers itself (dp-gbdt, dp-gam with ``bounds`` or ``categories`` set: a DPPipeline's route,
:func:`~dpglass.models.pipeline.route.model_route`) reads numeric columns, which do not pack into bits.  Its data
is a :class:`RecordTable`: the distinct (row, label) pairs of the records with their counts, sorted by their
bytes, so that the split (one Binomial(count, f) draw per entry, the per-record Bernoulli law) and every run are
the same whatever order the records come in.  Which table a search uses is a function of its estimator's public
parameters (:func:`reads_numbers`), never of the data.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from dpglass.exceptions import DataValidationError
from dpglass.models.pipeline.route import model_route

__all__ = ["RecordTable", "check_numeric_X", "dask_record_table", "reads_numbers", "record_table"]


def reads_numbers(estimator) -> bool:
    """Whether the search hands ``estimator`` its records as numbers: its class takes numbers
    (:func:`~dpglass.models.pipeline.route.model_route`) and its ``bounds`` or ``categories`` name at least one
    numeric or code column (public parameters: a DPPipeline sets them from the schema).  Otherwise the search reads
    0/1 data, as always (a ``bounds`` of only None is 0/1 columns)."""
    if not model_route(type(estimator))["numbers"]:
        return False
    params = estimator.get_params(deep=False)
    return any(v is not None for k in ("bounds", "categories") for v in (params.get(k) or ()))


def check_numeric_X(search, X, *, allow_empty: bool) -> np.ndarray:
    """``X`` as a float array of numeric columns (NaN allowed: a missing bin's), the search's
    ``n_features_in_`` and ``feature_names_in_`` set; a typed error in the user's terms otherwise."""
    try:
        return validate_data(search, X, reset=True, dtype=np.float64, ensure_all_finite="allow-nan",
                             ensure_min_samples=0 if allow_empty else 1)
    except DataValidationError:
        raise
    except ValueError as exc:
        raise DataValidationError(f"PrivateGridSearch over {type(search.estimator).__name__} with bounds or "
                                  f"categories reads numeric columns: {exc}") from exc


class RecordTable:
    """Distinct (row, label) pairs of numeric records with their counts: the interface of a
    :class:`~dpglass.aggregates.PatternTable` that the search's split and runs use."""

    def __init__(self, rows, labels, counts, *, classes=None, columns=None):
        self.rows = np.asarray(rows, dtype=np.float64)
        self.labels = np.asarray(labels, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)
        self.classes = None if classes is None else list(classes)
        self.columns = None if columns is None else list(columns)

    @property
    def n_entries(self) -> int:
        return int(self.rows.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.rows.shape[1])

    @property
    def n_records(self) -> int:
        return int(self.counts.sum())

    def with_counts(self, counts) -> RecordTable:
        """The table of the same entries with new ``counts`` (entries whose count is 0 are dropped)."""
        counts = np.asarray(counts, dtype=np.int64)
        keep = np.flatnonzero(counts)
        return RecordTable(self.rows[keep], self.labels[keep], counts[keep], classes=self.classes,
                           columns=self.columns)

    def unpack(self) -> np.ndarray:
        """The distinct rows, one per entry."""
        return self.rows

    def records(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y codes)``: one row per record, entry by entry in the table's order (the counts expanded)."""
        index = np.repeat(np.arange(self.n_entries), self.counts)
        return self.rows[index], self.labels[index]


def record_table(X, y_codes, counts=None, *, classes=None, columns=None) -> RecordTable:
    """The :class:`RecordTable` of numeric rows ``X`` (NaN allowed) and class codes ``y_codes`` (with ``counts``
    per row, 1 each by default): equal rows with equal labels merged, entries sorted by the bytes of the row
    then the label (``-0.0`` read as ``0.0``), so the table does not depend on the records' order."""
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0)  # -0.0 + 0.0 is 0.0: one key per value
    n, d = X.shape
    y_codes = np.asarray(y_codes, dtype=np.int64)
    counts = np.ones(n, dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    if n == 0:
        return RecordTable(np.zeros((0, d)), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
                           classes=classes, columns=columns)
    width = 8 * d + 2
    buf = np.empty((n, width), dtype=np.uint8)
    buf[:, : 8 * d] = X.view(np.uint8).reshape(n, 8 * d)
    buf[:, 8 * d] = y_codes >> 8
    buf[:, 8 * d + 1] = y_codes & 0xFF
    keys = np.ascontiguousarray(buf).view(np.dtype((np.void, width)))[:, 0]
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    new = np.ones(n, dtype=bool)
    new[1:] = keys[1:] != keys[:-1]
    starts = np.flatnonzero(new)
    merged = np.add.reduceat(counts[order], starts)
    first = order[starts]
    return RecordTable(X[first], y_codes[first], merged, classes=classes, columns=columns)


def dask_record_table(search, X, y, declared) -> RecordTable:
    """The :class:`RecordTable` of a dask DataFrame ``X`` and dask Series ``y`` (partitioned alike): each
    partition reduced to its table on the cluster, the tables merged on the client into the in-memory one (the
    same entries, so the same search as on the same records in memory)."""
    from dpglass.aggregates import dask_backend

    if not (hasattr(X, "columns") and hasattr(y, "to_delayed")):
        raise DataValidationError("Through Dask, PrivateGridSearch reads X as a dask DataFrame and y as a dask "
                                  "Series partitioned like it (take both from one DataFrame).")
    columns = [str(c) for c in X.columns]
    classes = dask_backend._classes(y, declared)
    parts = dask_backend.partition_results(X.assign(**{dask_backend._LABEL: y}), _partition_table, columns,
                                           classes)
    rows = np.concatenate([p.rows for p in parts]) if parts else np.zeros((0, len(columns)))
    codes = np.concatenate([p.labels for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    counts = np.concatenate([p.counts for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    if counts.sum() == 0 and declared is None:
        raise DataValidationError("y is empty: fit needs at least one labelled record.")
    search.classes_ = np.asarray(classes)
    search.n_features_in_ = len(columns)
    search.feature_names_in_ = np.asarray(columns, dtype=object)
    return record_table(rows, codes, counts, classes=list(classes), columns=columns)


def _partition_table(part, columns: list, classes: list) -> RecordTable:
    """One partition's :class:`RecordTable` (its labels read as codes of the declared or found classes)."""
    from dpglass.aggregates import dask_backend

    labels = part[dask_backend._LABEL].to_numpy()
    index = {c: k for k, c in enumerate(classes)}
    try:
        codes = np.array([index[v] for v in labels], dtype=np.int64)
    except KeyError as exc:
        raise DataValidationError(f"y holds the label {exc.args[0]!r}, not one of the classes {classes!r}.") from None
    try:
        rows = part[columns].to_numpy(dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataValidationError(f"PrivateGridSearch reads numeric columns: {exc}") from None
    return record_table(rows, codes)
