"""The Dask backend's reading: each partition checked and reduced where it is, and small per-partition results.

:func:`reduce_partition` checks one partition (the columns are there, the
values are 0/1, the labels are in the class set: a
:class:`~dpglass.exceptions.DataValidationError` naming the partition and the
column otherwise) and reduces it to its sorted distinct (row, label) keys with
integer counts (:func:`dpglass.aggregates.numpy_backend.reduce_block`, the
function the in-memory backend runs on the whole array).
:func:`partition_results` and :func:`map_partitions_named` run any function
over the partitions with the same error naming (the label pass, a pipeline's
encoding statistics).
"""

from __future__ import annotations

import numpy as np

from dpglass.aggregates.dask_faults import (
    DistributedFitError, _client, _data_error, _lost, _partition_error, _raise_first_data_error, _returning_data_errors,
    partition_label, raise_first_failure,
)
from dpglass.aggregates.numpy_backend import reduce_block
from dpglass.exceptions import DataValidationError

__all__ = ["map_partitions_named", "partition_results", "reduce_partition"]


def _require_dask():
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the extra is installed in dev
        raise ImportError('Fitting on dask collections needs the dask extra: pip install "dpglass[dask]"') from exc


def reduce_partition(X_part, y_part, index: int, n_parts: int, columns: list, classes: list):
    """Check one partition and reduce it to ``(keys, counts)``.

    Raises
    ------
    DataValidationError
        A column is missing, a value is not 0/1 (or missing), a label is not
        in ``classes``, or X and y have different lengths in this partition;
        the message names the partition and the column.
    """
    where = partition_label(index)
    missing = [c for c in columns if c not in X_part.columns]
    if missing:
        raise DataValidationError(f"{where}: column {missing[0]!r} is missing (X has {len(columns)} feature "
                                  f"columns; this partition has {list(X_part.columns)!r}).")
    if len(X_part) != len(y_part):
        raise DataValidationError(f"{where}: X and y have different numbers of rows; the partitions of X "
                                  "and y must line up (take both from one DataFrame).")
    X = np.empty((len(X_part), len(columns)), dtype=np.uint8)
    for j, c in enumerate(columns):
        v = X_part[c].to_numpy()
        if v.dtype == bool:
            X[:, j] = v
            continue
        if v.dtype == object or v.dtype.kind not in "biuf":
            try:
                v = v.astype(np.float64)
            except (TypeError, ValueError):
                raise DataValidationError(f"{where}: column {c!r} is not numeric 0/1 "
                                          f"(dtype {X_part[c].dtype}).") from None
        ok = (v == 0) | (v == 1)
        if not ok.all():
            bad = v[~ok][0]
            bad = bad.item() if hasattr(bad, "item") else bad
            what = "missing values" if bad != bad else f"the value {bad!r}"
            raise DataValidationError(
                f"{where}: column {c!r} has {what}; dpglass works on binary features (0/1). Binarize the "
                "data first (dpglass.datasets.Binarizer with public thresholds)."
            )
        X[:, j] = v
    y = y_part.to_numpy()
    if len(y) and y.dtype.kind == "f" and np.isnan(y).any():
        raise DataValidationError(f"{where}: y has missing labels (NaN); drop or label those records first.")
    inside = np.isin(y, np.asarray(classes, dtype=object) if y.dtype == object else np.asarray(classes))
    if not inside.all():
        bad = y[~inside][0]
        bad = bad.item() if hasattr(bad, "item") else bad
        raise DataValidationError(f"{where}: y has the label {bad!r}, outside classes="
                                  f"{[c.item() if hasattr(c, 'item') else c for c in classes]!r}.")
    codes = np.zeros(len(y), dtype=np.uint8)  # each label's index in classes (for two: 1 is classes[1])
    for k, label in enumerate(classes):
        codes[y == label] = k
    return reduce_block(X, codes, len(columns))


_LABEL = "__dpglass_label__"


def _reduce_joined(part, index: int, n_parts: int, columns: list, classes: list):
    return reduce_partition(part.drop(columns=[_LABEL]), part[_LABEL], index, n_parts, columns, classes)


def _classes(y, classes):
    from dpglass._validation import check_labels

    if classes is not None:
        return list(np.asarray(classes))
    import pandas as pd

    # a second pass over the labels only; declare classes= to skip it (a file without the label column is
    # a data error naming its partition, as in the reduction)
    found = partition_results(y, pd.unique)
    uniq = pd.unique(np.concatenate([np.asarray(u) for u in found])) if found else np.array([])
    if uniq.size == 0:
        raise DataValidationError("y is empty: fit needs at least one labelled record.")
    return list(check_labels(uniq)[1])  # the model's own limit is checked when it adopts the table


def _on_partition(part, index: int, n_parts: int, fn, args):
    try:
        return fn(part, *args)
    except DataValidationError as exc:
        raise DataValidationError(f"{partition_label(index)}: {exc}") from None


def map_partitions_named(frame, fn, *args, meta):
    """``frame.map_partitions(fn, *args)`` whose data errors name the partition (``meta`` as dask's)."""
    n = frame.npartitions

    def named(part, *a, partition_info=None):
        index = partition_info["number"] if partition_info else -1
        return _on_partition(part, index, n, fn, a)

    return frame.map_partitions(named, *args, meta=meta, partition_info=True)


def partition_results(frame, fn, *args, retries: int = 2) -> list:
    """``[fn(partition, *args) for each partition of the dask frame]``, computed on the cluster, brought back.

    For small per-partition statistics (counts) that the client sums.  A
    :class:`~dpglass.exceptions.DataValidationError` raised by ``fn`` names
    its partition; lost workers raise :class:`DistributedFitError`.
    """
    _require_dask()
    import dask

    n = frame.npartitions
    client = _client()
    try:
        if client is None:
            parts = [dask.delayed(_on_partition, pure=True)(part, i, n, fn, args)
                     for i, part in enumerate(frame.to_delayed())]
            try:
                return list(dask.compute(*parts))
            except (DataValidationError, MemoryError):
                raise
            except Exception:
                raise_first_failure(parts, n)
                raise
        from distributed import wait

        on_partition = dask.delayed(_returning_data_errors, pure=True)
        futures = client.compute([on_partition(_on_partition, part, i, n, fn, args)
                                  for i, part in enumerate(frame.to_delayed())], retries=retries)
        wait(futures)
        for i, f in enumerate(futures):
            if f.status == "error":
                exc = f.exception()
                raise _partition_error(i, n, exc) from exc
        results = client.gather(futures)
        _raise_first_data_error([_data_error(r) for r in results])
        return results
    except DataValidationError:
        raise
    except Exception as exc:
        if _lost(exc):
            raise DistributedFitError(f"The Dask cluster could not read the partitions ({type(exc).__name__}: "
                                      f"{exc}). No model was fitted: rerun the fit.") from exc
        raise
