"""``dpglass fit --data 'path/*.parquet' --target y --scheduler local|tcp://host:port``: fit through Dask.

The parquet files are read as one dask DataFrame; the model is fitted on it
through :mod:`dpglass.aggregates.dask_backend` (each partition reduces itself
to its pattern table on the cluster, a progress bar runs meanwhile) and
printed with its ledger like an in-memory fit.  The whole table is used for
training: a held-out split of partitioned data is not offered (fit in memory
for the DP accuracy estimate).
"""

from __future__ import annotations

import contextlib

from dpglass.exceptions import InvalidParameterError

__all__ = ["wants_dask", "cmd_fit"]


def wants_dask(args) -> bool:
    """``--scheduler`` given, or ``--data`` names parquet files."""
    data = args.data or ""
    return args.scheduler is not None or data.endswith((".parquet", ".parq", ".pq")) or data.endswith("/")


@contextlib.contextmanager
def _client(scheduler: str | None):
    from distributed import Client, LocalCluster

    if scheduler in (None, "local"):
        with LocalCluster(dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
            yield client
    elif scheduler.startswith(("tcp://", "tls://", "ucx://", "inproc://")):
        with Client(scheduler) as client:
            yield client
    else:
        raise InvalidParameterError(f"--scheduler takes 'local' or a scheduler address like tcp://host:8786; "
                                    f"got {scheduler!r}.")


def cmd_fit(args, *, make_params, build_model) -> int:
    """The Dask branch of ``dpglass fit`` (``make_params`` and ``build_model`` come from the CLI)."""
    try:
        import dask.dataframe as dd
        from dpglass.aggregates import dask_backend
    except ImportError:  # pragma: no cover - the extra is in dev
        raise InvalidParameterError('Fitting --data *.parquet through Dask needs: pip install "dpglass[dask]"') from None
    from dpglass.privacy.rng import check_random_state, spawn
    from dpglass.registry import get_spec

    if args.data is None:
        raise InvalidParameterError("--scheduler fits --data (parquet files, e.g. 'path/*.parquet') through Dask.")
    if args.target is None:
        raise InvalidParameterError("--data needs --target, the name of the label column.")
    if args.schema or args.bounds or args.categorical or args.binary or args.drop or args.dp_quantiles:
        raise InvalidParameterError("Through Dask, --data must hold 0/1 feature columns; --schema and the inline "
                                    "column options are for CSV files fitted in memory.")
    if args.test_size not in (None, 0):
        raise InvalidParameterError("--test-size is not available through Dask (the model trains on every "
                                    "record); drop it, or fit in memory.")
    spec = get_spec(args.model)
    if not getattr(spec.cls, "_distributed_fit", False):
        raise InvalidParameterError(f"Model {spec.name!r} does not fit through Dask yet; the rule lists and "
                                    "smooth boosting do.")
    params = make_params(spec, args)  # --classes included
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
    with _client(args.scheduler) as client:
        print(f"Dask scheduler {getattr(client.scheduler, 'address', args.scheduler)}: reducing "
              f"{X.npartitions} partitions")
        with dask_backend.progress_bar():
            model.fit(X, y)
    # the number of records is private: it is not printed
    print(f"\n{spec.name} on {args.data} (through Dask): {X.shape[1]} binary features\n")
    print(model)
    if hasattr(model, "privacy_ledger_"):
        ledger = model.privacy_ledger_
        eps, delta = ledger.total()
        print(f"\nprivacy ledger:\n{ledger}")
        print(f"\nbudget spent: epsilon={eps:.4g} of {ledger.epsilon:.4g} given, delta={delta:.3g} of {ledger.delta:.3g}")
    if args.out:
        model.save(args.out)
        print(f"\nmodel written to {args.out}")
    return 0
