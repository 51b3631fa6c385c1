"""``dpglass fit --data 'path/*.parquet' --target y --scheduler local|tcp://host:port``: the Dask route of fit.

The parquet files are read as one dask DataFrame; the model is fitted on it
through :mod:`dpglass.aggregates.dask_backend` (each partition reduces itself
to its pattern table on the cluster) and printed with its ledger like an
in-memory fit.  The feature columns are 0/1; for ``dp-gbdt`` they may also be numeric, each named with its public
``--bounds NAME=LO:HI`` (the model's ``bounds``; unnamed columns are 0/1),
binned on the workers (:mod:`dpglass.models.gbdt.binned`).  The whole table is used for
training: a held-out split of partitioned data is not offered (fit in memory
for the DP accuracy estimate).

Nothing printed depends on how the records are split into files or
partitions (issue 26): their number grows with the number of records, which
is private, so no partition count, task count or fraction done is shown; on a
terminal the only progress is the elapsed time, erased when the fit ends.  A
data error is one line, the client's (the workers do not log it).
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
import time
import warnings

from dpglass.cli.fit.estimator import build_model, model_params, print_ledger_and_save, public_part
from dpglass.exceptions import InvalidParameterError

__all__ = ["wants_dask", "fit_through_dask"]


def wants_dask(args) -> bool:
    """``--scheduler`` given, or ``--data`` names parquet files."""
    data = args.data or ""
    return args.scheduler is not None or data.endswith((".parquet", ".parq", ".pq")) or data.endswith("/")


@contextlib.contextmanager
def _client(scheduler: str | None):
    from distributed import Client, LocalCluster

    if scheduler in (None, "local"):
        # the scheduler's HTTP server on a free port: on 8787, a second fit (or any server there) got a warning
        with LocalCluster(dashboard_address=None, scheduler_kwargs={"dashboard_address": ":0"},
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield client
    elif scheduler.startswith(("tcp://", "tls://", "ucx://", "inproc://")):
        with _distributed_logs_at(logging.ERROR), Client(scheduler) as client:
            yield client
    else:
        raise InvalidParameterError(f"--scheduler takes 'local' or a scheduler address like tcp://host:8786; "
                                    f"got {scheduler!r}.")


@contextlib.contextmanager
def _distributed_logs_at(level: int):
    """This process's ``distributed`` log handlers print only ``level`` and above (as LocalCluster's silence_logs).

    The client's warnings can count keys or bytes of the data ("Couldn't gather 3 keys").
    """
    handlers = [h for h in logging.getLogger("distributed").handlers if isinstance(h, logging.StreamHandler)]
    saved = [h.level for h in handlers]
    for h in handlers:
        h.setLevel(max(h.level, level))
    try:
        yield
    finally:
        for h, old in zip(handlers, saved):
            h.setLevel(old)


@contextlib.contextmanager
def _elapsed(what: str, stream=None, interval: float = 1.0):
    """On a terminal, ``what: 12 s`` rewritten every ``interval`` while the block runs, erased at its end.

    The clock is the only progress shown: a count of partitions or tasks, or a
    fraction done (1/7, 2/7, ...), would tell the number of partitions, which
    grows with the number of records.  Nothing is written to a file or a pipe.
    """
    stream = sys.stderr if stream is None else stream
    if not getattr(stream, "isatty", lambda: False)():
        yield
        return
    start, stop = time.monotonic(), threading.Event()

    def tick():
        while not stop.wait(interval):
            stream.write(f"\r{what}: {time.monotonic() - start:.0f} s")
            stream.flush()

    ticker = threading.Thread(target=tick, daemon=True)
    ticker.start()
    try:
        yield
    finally:
        stop.set()
        ticker.join()
        stream.write("\r\x1b[2K")  # erase the line
        stream.flush()


def fit_through_dask(args) -> int:
    """The Dask route of ``dpglass fit`` (the output path is checked already)."""
    try:
        import dask.dataframe as dd
        import distributed  # noqa: F401 - the cluster's client
    except ImportError:  # pragma: no cover - the extra is in dev
        raise InvalidParameterError('Fitting --data *.parquet through Dask needs: pip install "dpglass[dask]"') from None
    from dpglass.privacy.rng import check_random_state, spawn

    spec, numeric = _checked_spec(args)
    params = model_params(spec, args)  # --classes included
    if args.bounds and "bounds" in params:
        raise InvalidParameterError("Give the bounds either with --bounds NAME=LO:HI or with --param bounds=..., "
                                    "not both.")
    _, model_rng = spawn(check_random_state(args.seed), 2)  # the same child as an in-memory fit
    model = build_model(spec, params, None, model_rng)
    try:
        frame = dd.read_parquet(args.data)
    except (OSError, ValueError) as exc:
        raise InvalidParameterError(f"Cannot read --data {args.data!r} as parquet: {exc}") from exc
    if args.target not in frame.columns:
        raise InvalidParameterError(f"--target {args.target!r} is not a column of {args.data!r}; its columns are "
                                    f"{', '.join(map(str, frame.columns))}.")
    X, y = frame.drop(columns=[args.target]), frame[args.target]
    if numeric and "bounds" not in params:
        model.set_params(bounds=_bounds(args.bounds, args.binary, [str(c) for c in X.columns], args.data))
    # the declared public part (a small CSV, read on the client): the teacher ensembles label it
    extra = {"X_public": public_part(args, X, spec)} if args.public else {}
    with _client(args.scheduler) as client:
        # not the number of partitions: it grows with the number of records, which is private
        print(f"Dask scheduler {getattr(client.scheduler, 'address', args.scheduler)}: fitting on the cluster",
              flush=True)
        with _elapsed("fitting through Dask"), warnings.catch_warnings():
            # distributed's warning gives the graph's size, which grows with the number of partitions
            warnings.filterwarnings("ignore", message="Sending large graph", category=UserWarning)
            model.fit(X, y, **extra)
    # the number of records is private: it is not printed
    bounded = sum(b is not None for b in getattr(model, "bounds_", None) or [])
    what = f"{bounded} numeric with public bounds, {X.shape[1] - bounded} 0/1" if bounded else "binary"
    print(f"\n{spec.name} on {args.data} (through Dask): {X.shape[1]} {what} features\n")
    if args.public:
        print(f"public part: {len(extra['X_public'])} records of {args.public} (declared public: not protected)\n")
    print(model)
    print_ledger_and_save(model, args.out)
    return 0


def _checked_spec(args):
    """The registered model of ``--model`` and whether it reads numeric columns, once the options are known to
    suit a fit through Dask."""
    from dpglass.registry import get_spec

    if args.data is None:
        raise InvalidParameterError("--scheduler fits --data (parquet files, e.g. 'path/*.parquet') through Dask.")
    if args.target is None:
        raise InvalidParameterError("--data needs --target, the name of the label column.")
    if args.test_size not in (None, 0):
        raise InvalidParameterError("--test-size is not available through Dask (the model trains on every "
                                    "record); drop it, or fit in memory.")
    if args.model == "auto":
        raise InvalidParameterError("--model auto chooses a model for a raw table read through a schema, in memory "
                                    "(a CSV with --schema); through Dask, name the model.")
    spec = get_spec(args.model or "dp-rule-list")
    if not getattr(spec.cls, "_distributed_fit", False):
        from dpglass.registry import list_estimators

        able = [s.name for s in list_estimators() if getattr(s.cls, "_distributed_fit", False)]
        raise InvalidParameterError(f"Model {spec.name!r} does not fit through Dask yet; these do: "
                                    f"{', '.join(able)}.")
    numeric = "bounds" in spec.cls().get_params()  # dp-gbdt: numeric columns with public bounds
    if args.schema or args.categorical or args.drop or args.dp_quantiles or (
            (args.bounds or args.binary) and not numeric):
        raise InvalidParameterError(
            "Through Dask, --data must hold 0/1 feature columns (dp-gbdt: also numeric columns, each with "
            "--bounds NAME=LO:HI; for DP quantile bins pass --param binning=quantile); --schema, --categorical, "
            "--drop and --dp-quantiles are for CSV files fitted in memory.")
    return spec, numeric


def _bounds(items, binary, columns: list, source: str) -> list:
    """dp-gbdt's ``bounds`` from ``--bounds NAME=LO:HI`` (one per numeric column; the others are 0/1)."""
    from dpglass.cli.tables import _pairs

    bounds = {}
    for name, text in _pairs(items, "--bounds").items():
        lo, _, hi = text.partition(":")
        try:
            bounds[name] = (float(lo), float(hi))
        except ValueError:
            raise InvalidParameterError(f"--bounds {name}={text}: give LO:HI, two numbers (e.g. age=17:90).") from None
    unknown = [n for n in list(bounds) + list(binary) if n not in columns]
    if unknown:
        raise InvalidParameterError(f"--bounds/--binary name column(s) {unknown!r} that {source} does not have; "
                                    f"its feature columns are {', '.join(columns)}.")
    both = [n for n in binary if n in bounds]
    if both:
        raise InvalidParameterError(f"Column(s) {both!r} are given both --bounds and --binary; a column is one or "
                                    "the other.")
    return [bounds.get(c) for c in columns]
