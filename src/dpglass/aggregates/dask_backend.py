"""Dask backend of the aggregation seam: the pattern table of a partitioned dataset.

``fit(X, y)`` with a dask DataFrame of 0/1 features and a dask Series of
labels (e.g. both from one ``dd.read_parquet``) builds the
:class:`~dpglass.aggregates.PatternTable` here:

1. every partition checks itself (the columns are there, the values are 0/1,
   the labels are in the class set: a :class:`~dpglass.exceptions.DataValidationError`
   naming the partition and the column otherwise) and reduces itself to its
   sorted distinct (row, label) keys with integer counts
   (:func:`dpglass.aggregates.numpy_backend.reduce_block`, the function the
   in-memory backend runs on the whole array); on a cluster a partition's
   data error is its task's *result*, not an exception, so the worker neither
   logs it nor retries it, and the client raises it once;
2. the reductions are cut into parts of the key space and each part is
   merged on the cluster (exact integer sums, a tree of fan-in :data:`FAN_IN`),
   so no worker ever holds the whole table;
3. for a learner that asks for statistics (``keep=True``) the merged parts
   stay on the workers (:mod:`dpglass.aggregates.parts`); otherwise only the
   merged table comes back to the client, a key range at a time.  The learner
   runs on the client and draws its noise from the estimator's generator,
   once per release.

Because the keys are sorted and the counts are integers, the table does not
depend on how the records are partitioned, so the model equals the
in-memory one for the same ``random_state``.

Faults: tasks are pure and keyed by their inputs.  A worker that dies is
replaced and its tasks rerun (``distributed``'s ``allowed-failures``), a task
that raises an unexpected error is retried ``retries`` times; a rerun returns
the same reduction, so a fit that finishes returns the same model.  A fit that
cannot finish raises :class:`DistributedFitError`; it never returns a model
built on part of the data.

What is shown: nothing here prints, and no message states the number of
partitions or of records (both depend on n; issue 26).  A data error names
the partition that holds the bad value and the column; the workers of a
``distributed`` cluster do not log data errors (:func:`quiet_data_errors`),
so the user reads the one message the client raises.

This module holds the two entry points (:func:`pattern_table`, :func:`fit_table`);
step 1 and the per-partition maps are :mod:`~dpglass.aggregates.dask_read`'s,
steps 2-3 :mod:`~dpglass.aggregates.dask_merge`'s, and the errors and faults
:mod:`~dpglass.aggregates.dask_faults`'s (their names are also importable from
here).

Install with ``pip install "dpglass[dask]"`` (``dask[dataframe]``,
``distributed``, ``pyarrow``).
"""

from __future__ import annotations

# the backend's names, as the learners' Dask paths (gbdt's binned table, the pipeline, the selection) call them
from dpglass.aggregates.dask_faults import (  # noqa: F401
    DistributedFitError, _client, _data_error, _lost, _partition_error, _raise_first_data_error, _returning_data_errors,
    partition_label, quiet_data_errors, raise_first_failure,
)
from dpglass.aggregates.dask_merge import FAN_IN, _delayed_submit, _kept_table, _merge_by_buckets, _merge_tree
from dpglass.aggregates.dask_read import (  # noqa: F401
    _LABEL, _classes, _reduce_joined, _require_dask, map_partitions_named, partition_results, reduce_partition,
)
from dpglass.aggregates.table import table_from_keys
from dpglass.exceptions import DataValidationError

__all__ = ["DistributedFitError", "FAN_IN", "fit_table", "map_partitions_named", "partition_results", "pattern_table",
           "quiet_data_errors", "reduce_partition"]


def pattern_table(X, y, *, classes=None, retries: int = 2, keep: bool = False):
    """The :class:`~dpglass.aggregates.PatternTable` of a dask DataFrame ``X`` and dask Series ``y``.

    Parameters
    ----------
    X : dask.dataframe.DataFrame of 0/1 (or bool) columns
    y : dask.dataframe.Series with two labels, partitioned as ``X``
    classes : list of two labels or None
        ``[negative, positive]``; None reads the sorted distinct labels of ``y``.
    retries : int
        Retries of a task that raised (worker deaths are rerun by the scheduler).

    keep : bool
        With a ``distributed`` client, return a
        :class:`~dpglass.aggregates.parts.DistributedTable`: the merged key
        ranges stay on the workers as persisted parts, for a learner that asks
        them for statistics (:mod:`dpglass.aggregates.parts`); nothing is
        gathered.

    Uses the current ``distributed`` client if there is one, dask's default
    scheduler otherwise.  The table's ``classes`` attribute holds the labels.
    """
    _require_dask()
    import dask

    if not hasattr(X, "columns"):
        raise DataValidationError("X must be a dask DataFrame (one column per feature), not a dask "
                                  f"{type(X).__name__}.")
    if not hasattr(y, "to_delayed") or getattr(y, "ndim", 1) != 1:
        raise DataValidationError("y must be a dask Series partitioned as X (e.g. df['y'] of the same DataFrame).")
    if X.npartitions != y.npartitions:
        raise DataValidationError("X and y have different numbers of partitions; take both from one DataFrame so "
                                  "that their partitions line up.")
    columns = list(X.columns)
    if _LABEL in columns:
        raise DataValidationError(f"X has a column named {_LABEL!r}, which dpglass reserves; rename it.")
    client = _client()  # first: the label pass of _classes runs on it too
    classes = _classes(y, classes)
    # one collection, so that the optimiser partitions features and labels alike
    try:
        both = X.assign(**{_LABEL: y})
    except Exception as exc:
        raise DataValidationError(f"X and y are not aligned ({exc}); take both from one DataFrame.") from exc
    n = both.npartitions
    delayed = both.to_delayed()
    try:
        if client is None:
            reduce = dask.delayed(_reduce_joined, pure=True)
            parts = [reduce(part, i, n, columns, classes) for i, part in enumerate(delayed)]
            try:
                keys, counts = dask.compute(_merge_tree(parts, _delayed_submit))[0]
            except (DataValidationError, MemoryError):
                raise
            except Exception:
                raise_first_failure(parts, n)
                raise
        else:
            from distributed import wait

            reduce = dask.delayed(_returning_data_errors, pure=True)
            parts = [reduce(_reduce_joined, part, i, n, columns, classes) for i, part in enumerate(delayed)]
            futures = client.compute(parts, retries=retries)
            wait(futures)
            for i, f in enumerate(futures):
                if f.status == "error":
                    exc = f.exception()
                    raise _partition_error(i, n, exc) from exc
            _raise_first_data_error(client.gather(client.map(_data_error, futures, pure=True, retries=retries)))
            if keep:
                return _kept_table(client, futures, retries, len(columns), classes, columns)
            keys, counts = _merge_by_buckets(client, futures, retries)
    except DataValidationError:
        raise
    except Exception as exc:
        if _lost(exc):
            raise DistributedFitError(
                f"The Dask cluster could not reduce the partitions ({type(exc).__name__}). No model "
                "was fitted: rerun the fit (the result will be the same), or raise distributed's "
                "allowed-failures / retries if workers are being lost."
            ) from exc
        raise
    table = table_from_keys(keys, counts, len(columns))
    table.classes, table.columns = list(classes), columns
    return table


def fit_table(estimator, X, y, *, classes=None, **kwargs):
    """Validate dask ``X``, ``y`` for ``estimator.fit`` and reduce them; set ``n_features_in_``, names, ``classes_``.

    Returns the :class:`~dpglass.aggregates.PatternTable` the learner fits on.
    """
    if not getattr(estimator, "_distributed_fit", False):
        raise DataValidationError(
            f"{type(estimator).__name__} does not fit on dask collections yet. Call .compute() on X and y to "
            "fit in memory."
        )
    if y is None:
        raise DataValidationError("This classifier requires y to be passed, but the target y is None.")
    from dpglass.aggregates.table import adopt_table, is_distributed

    if not (is_distributed(X) and is_distributed(y)):
        raise DataValidationError("X and y must both be dask collections (or both in memory).")
    # a learner that asks for statistics (_worker_stats) gets the table's parts, left on the workers
    keep = bool(getattr(estimator, "_worker_stats", False))
    return adopt_table(estimator, pattern_table(X, y, classes=classes, keep=keep, **kwargs), classes)
