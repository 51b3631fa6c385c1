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
2. the reductions are cut into :data:`N_BUCKETS` key ranges and each range is
   merged on the cluster (exact integer sums, a tree of fan-in :data:`FAN_IN`),
   so no worker ever holds the whole table;
3. only the merged table comes back to the client, a range at a time, where
   the learner runs and draws its noise from the estimator's generator, once
   per release.

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

Install with ``pip install "dpglass[dask]"`` (``dask[dataframe]``,
``distributed``, ``pyarrow``).
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from dpglass.aggregates.table import hash_buckets, merge_counts, table_from_keys
from dpglass.aggregates.numpy_backend import reduce_block
from dpglass.aggregates.parts import DistributedTable, TableParts
from dpglass.exceptions import DataValidationError

__all__ = ["DistributedFitError", "FAN_IN", "fit_table", "map_partitions_named", "partition_results", "pattern_table",
           "quiet_data_errors", "reduce_partition"]

#: Reductions merged per task in the merge tree.
FAN_IN = 8
#: Key ranges merged separately on the cluster (a power of two up to 256).
N_BUCKETS = 16


class DistributedFitError(RuntimeError):
    """The cluster could not finish the reduction (workers lost beyond the retries).

    No model is returned: a fit never silently uses part of the data.
    """


def _require_dask():
    try:
        import dask  # noqa: F401
        import dask.dataframe  # noqa: F401
    except ImportError as exc:  # pragma: no cover - the extra is installed in dev
        raise ImportError('Fitting on dask collections needs the dask extra: pip install "dpglass[dask]"') from exc


def partition_label(index: int) -> str:
    """How an error names a partition: not by its number, nor "(of N)": with files written every k rows the
    number of partitions reveals n, and an index bounds it from below (docs/privacy.md, "What a Dask fit
    prints").  The column and the problem are named; the curator finds the file."""
    return "a partition"


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


class _Invalid:
    """A partition's :class:`DataValidationError`, returned by its task instead of raised.

    A task that raises is logged by its worker (with a traceback) and retried;
    a data error is expected and the same on every try, so the task returns
    it and the client raises it, once.
    """

    def __init__(self, message: str):
        self.message = message


def _returning_data_errors(fn, *args):
    """``fn(*args)``, or an :class:`_Invalid` if it raised a :class:`DataValidationError` (a task on a worker)."""
    try:
        return fn(*args)
    except DataValidationError as exc:
        return _Invalid(str(exc))


def _data_error(result):
    """The message of an :class:`_Invalid` result, else None (a small task: the reduction stays on its worker)."""
    return result.message if isinstance(result, _Invalid) else None


def _raise_first_data_error(messages) -> None:
    """Raise the data error of the first partition (by index) that has one."""
    for message in messages:
        if message is not None:
            raise DataValidationError(message)


def _lost(exc) -> bool:
    """Whether ``exc`` means the cluster lost work (a worker died, a connection closed)."""
    return type(exc).__name__ in ("KilledWorker", "CancelledError", "CommClosedError", "FutureCancelledError") \
        or isinstance(exc, (OSError, TimeoutError))


def raise_first_failure(parts, n_parts: int) -> None:
    """The error path of a reduction without a client: compute the delayed parts one by one and raise the first
    failure as its partition's error (:func:`_partition_error`)."""
    for i, part in enumerate(parts):
        try:
            part.compute()
        except Exception as inner:
            raise _partition_error(i, n_parts, inner) from inner


def _partition_error(index: int, n_parts: int, exc) -> Exception:
    """The error of partition ``index``: data errors name it, lost workers become DistributedFitError."""
    if isinstance(exc, DataValidationError):
        return exc
    if _lost(exc):
        return DistributedFitError(
            f"{partition_label(index)} could not be reduced: the worker running it was lost "
            f"({type(exc).__name__}). No model was fitted: rerun the fit (the result will be the same), "
            "or raise distributed's allowed-failures if workers are being lost."
        )
    if isinstance(exc, KeyError):
        return DataValidationError(f"{partition_label(index)}: a column is missing when it is read "
                                   f"({exc}); every file must have the feature and label columns.")
    return DataValidationError(f"{partition_label(index)} could not be read or checked: "
                               f"{type(exc).__name__}: {exc}")


def _client():
    """The current ``distributed`` client (its workers then keep data errors out of their logs), or None."""
    try:
        from distributed import default_client
        client = default_client()
    except (ImportError, ValueError):
        return None
    quiet_data_errors(client)
    return client


class _DataErrorLogFilter(logging.Filter):
    """Drops a worker's "Compute Failed" record of a task that failed on a data error.

    That is a :class:`DataValidationError` (a check in a map over the
    partitions, e.g. binning) or a ``KeyError`` in a task that reads parquet
    (a file without one of the columns, met when the partition is read).  The
    client raises either to the user once, naming the partition and the
    column; the worker's copies (one per try, with a traceback) would repeat
    it.  Any other failure is still logged.
    """

    def filter(self, record) -> bool:
        if not str(record.msg).startswith("Compute Failed"):
            return True
        names = tuple(f"{cls.__name__}(" for cls in _subclasses(DataValidationError))
        args = record.args if isinstance(record.args, tuple) else ()
        texts = [a for a in args if isinstance(a, str)]
        read = bool(args) and "read_parquet" in str(args[0])  # the task's key
        return not any(t.startswith(names) or (read and t.startswith("KeyError(")) for t in texts)


def _subclasses(cls) -> list:
    return [cls] + [s for sub in cls.__subclasses__() for s in _subclasses(sub)]


_DATA_ERROR_LOG_FILTER = _DataErrorLogFilter()
_WORKER_LOGGER = "distributed.worker"


@functools.cache
def _quiet_plugin_class():
    from distributed.diagnostics.plugin import WorkerPlugin

    class QuietDataErrors(WorkerPlugin):
        """Installs :class:`_DataErrorLogFilter` on every worker, present and future (restarted ones too)."""

        name = "dpglass-quiet-data-errors"
        idempotent = True

        # the class travels by value; the filter is looked up in the worker's own copy of this module
        def setup(self, worker):
            from dpglass.aggregates import dask_backend

            logging.getLogger(_WORKER_LOGGER).addFilter(dask_backend._DATA_ERROR_LOG_FILTER)  # once, if twice

        def teardown(self, worker):
            from dpglass.aggregates import dask_backend

            logging.getLogger(_WORKER_LOGGER).removeFilter(dask_backend._DATA_ERROR_LOG_FILTER)

    return QuietDataErrors


def quiet_data_errors(client) -> None:
    """Keep the data errors of dpglass tasks out of the logs of ``client``'s workers (once per client).

    A data error (a value other than 0/1, a label outside the classes, ...)
    reaches the user once, raised by the fit on the client; a worker would
    otherwise log every failed try of every partition with its traceback.
    Registers a worker plugin that filters only those records.
    """
    if getattr(client, "_dpglass_quiet_data_errors", False):
        return
    client.register_plugin(_quiet_plugin_class()())
    client._dpglass_quiet_data_errors = True


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


def _merge_tree(parts, submit):
    while len(parts) > 1:
        parts = [submit(merge_counts, *parts[i : i + FAN_IN]) for i in range(0, len(parts), FAN_IN)]
    return parts[0]


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


def split_buckets(pair, n_buckets: int = None):
    """A sorted ``(keys, counts)`` cut into ``n_buckets`` key ranges (by the top bits of the first byte)."""
    keys, counts = pair
    n_buckets = n_buckets or N_BUCKETS
    if keys.dtype == np.uint64:
        first = (keys >> np.uint64(56)).astype(np.uint8)  # big-endian keys: the packed row's first byte
    else:
        first = keys.view(np.uint8).reshape(keys.shape[0], -1)[:, 0] if keys.size else np.zeros(0, np.uint8)
    step = 256 // n_buckets
    cuts = np.searchsorted(first, np.arange(1, n_buckets) * step, side="left")
    edges = np.concatenate([[0], cuts, [keys.shape[0]]])
    return [(keys[a:b].copy(), counts[a:b].copy()) for a, b in zip(edges[:-1], edges[1:])]


def kept_parts(client) -> int:
    """Parts a kept table is cut into: at least :data:`N_BUCKETS`, and two a worker (a power of two, <= 256)."""
    workers = len(client.scheduler_info().get("workers", {})) or 1
    return int(min(256, max(N_BUCKETS, 1 << (2 * workers - 1).bit_length())))


def _bucket_roots(client, futures, retries: int, split=split_buckets, n_buckets: int = N_BUCKETS) -> list:
    """The futures of the ``n_buckets`` merged parts (sorted keys, counts), each merged by its own tree: key
    ranges (``split_buckets``), or parts by a hash of the key (``hash_buckets``)."""
    import operator

    submit = lambda fn, *a: client.submit(fn, *a, retries=retries, pure=True)  # noqa: E731
    cut = [submit(split, f, n_buckets) for f in futures]
    return [_merge_tree([submit(operator.getitem, s, b) for s in cut], submit) for b in range(n_buckets)]


def _bucket_table(pair, n_features: int):
    return table_from_keys(pair[0], pair[1], n_features)


def _kept_table(client, futures, retries: int, n_features: int, classes, columns) -> DistributedTable:
    """The merged table as pattern tables persisted on the workers (never gathered), cut by a hash of the key
    into :func:`kept_parts` parts (balanced whatever the rows' skew; each part sorted by key)."""
    roots = _bucket_roots(client, futures, retries, hash_buckets, kept_parts(client))
    parts = [client.submit(_bucket_table, r, n_features, retries=retries, pure=True) for r in roots]
    return DistributedTable(TableParts(parts, client, retries, gather_statistics), n_features, classes=classes,
                            columns=columns)


def gather_statistics(client, futures) -> list:
    """The results of the statistics ``futures`` (one a part), in order; lost workers raise
    :class:`DistributedFitError` (the persisted parts are recomputed from the files when a worker dies and the
    scheduler's allowed failures are not exhausted)."""
    from distributed import wait

    try:
        wait(futures)
        for f in futures:
            if f.status == "error":
                exc = f.exception()
                if _lost(exc):
                    raise DistributedFitError(
                        f"A statistic of the training data could not be computed: the worker holding its part was "
                        f"lost ({type(exc).__name__}). No model was fitted: rerun the fit (the result will be the "
                        "same), or raise distributed's allowed-failures if workers are being lost.") from exc
                raise exc
        return client.gather(futures)
    except DistributedFitError:
        raise
    except Exception as exc:
        if _lost(exc):
            raise DistributedFitError(f"The Dask cluster could not compute a statistic ({type(exc).__name__}). No "
                                      "model was fitted: rerun the fit.") from exc
        raise


def _merge_by_buckets(client, futures, retries: int):
    """Merge the partitions' reductions bucket by bucket on the cluster; fill the result on the client.

    The key space is cut into :data:`N_BUCKETS` ranges, each merged by its own
    tree, so no worker holds more than about one bucket of the final table,
    and the client receives the buckets one at a time, in key order, into
    arrays sized in advance: the same sorted keys and counts as one merge.
    """
    roots = _bucket_roots(client, futures, retries)
    sizes = client.gather([client.submit(_size, r, retries=retries, pure=True) for r in roots])
    first = roots[0].result()
    keys = np.empty(sum(sizes), dtype=first[0].dtype)
    counts = np.empty(sum(sizes), dtype=np.int64)
    at = 0
    for b, root in enumerate(roots):
        part_keys, part_counts = first if b == 0 else root.result()
        keys[at : at + sizes[b]], counts[at : at + sizes[b]] = part_keys, part_counts
        at += sizes[b]
        first = part_keys = part_counts = None
        roots[b] = None  # let the cluster free the bucket
    return keys, counts


def _size(pair) -> int:
    return int(pair[0].shape[0])


def _delayed_submit(fn, *args):
    import dask

    return dask.delayed(fn, pure=True)(*args)


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

