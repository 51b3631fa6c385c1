"""The Dask backend's faults: how a partition's data error and a lost worker reach the user.

On a cluster a partition's :class:`~dpglass.exceptions.DataValidationError`
is its task's *result* (:class:`_Invalid`), not an exception, so the worker
neither logs it nor retries it, and the client raises it once; the workers of
a ``distributed`` cluster keep the records of failed data checks out of their
logs (:func:`quiet_data_errors`).  Work lost with a worker becomes
:class:`DistributedFitError` once the scheduler's retries are spent: a fit
never returns a model built on part of the data.  An error names "a
partition", never its number (:func:`partition_label`; issue 26).
"""

from __future__ import annotations

import functools
import logging

from dpglass.exceptions import DataValidationError

__all__ = ["DistributedFitError", "gather_statistics", "partition_label", "quiet_data_errors", "raise_first_failure"]


class DistributedFitError(RuntimeError):
    """The cluster could not finish the reduction (workers lost beyond the retries).

    No model is returned: a fit never silently uses part of the data.
    """


def partition_label(index: int) -> str:
    """How an error names a partition: not by its number, nor "(of N)": with files written every k rows the
    number of partitions reveals n, and an index bounds it from below (docs/privacy.md, "What a Dask fit
    prints").  The column and the problem are named; the curator finds the file."""
    return "a partition"


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
            from dpglass.aggregates import dask_faults

            logging.getLogger(_WORKER_LOGGER).addFilter(dask_faults._DATA_ERROR_LOG_FILTER)  # once, if twice

        def teardown(self, worker):
            from dpglass.aggregates import dask_faults

            logging.getLogger(_WORKER_LOGGER).removeFilter(dask_faults._DATA_ERROR_LOG_FILTER)

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
