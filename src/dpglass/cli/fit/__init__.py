"""``dpglass fit``: train a model, print it, its held-out accuracy and its ledger.

Two routes, chosen by :func:`~dpglass.cli.fit.through_dask.wants_dask`: a CSV
or a built-in dataset is fitted in memory (:func:`~dpglass.cli.fit.in_memory.fit_in_memory`,
with a held-out DP accuracy estimate); parquet files, or any ``--data`` with
``--scheduler``, through Dask (:func:`~dpglass.cli.fit.through_dask.fit_through_dask`).
Both build the model with the same helpers (:mod:`~dpglass.cli.fit.estimator`).
"""

from __future__ import annotations

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("fit", help="train a model, print it, its held-out accuracy and its ledger")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--dataset", help="a built-in dataset (see `dpglass datasets`); default breast-cancer")
    src.add_argument("--data", help="a CSV file: raw columns with --schema (or the inline options), else 0/1 "
                     "columns; or parquet files ('path/*.parquet', 0/1 columns) fitted through Dask")
    p.add_argument("--target", help="the target column of --data")
    p.add_argument("--schema", help="a schema file (JSON or TOML) describing the columns of --data")
    p.add_argument("--bounds", action="append", default=[], metavar="NAME=LO:HI",
                   help="inline schema: a numeric column and its public bounds (grid thresholds)")
    p.add_argument("--dp-quantiles", action="append", default=[], metavar="NAME",
                   help="inline schema: cut this --bounds column at DP quantiles (paid from epsilon)")
    p.add_argument("--categorical", action="append", default=[], metavar="NAME=A,B,...",
                   help="inline schema: a categorical column and its public categories")
    p.add_argument("--binary", action="append", default=[], metavar="NAME", help="inline schema: a 0/1 column")
    p.add_argument("--drop", action="append", default=[], metavar="NAME",
                   help="inline schema: a column the model must not read (e.g. an id)")
    p.add_argument("--data-home", help="data folder for --dataset")
    p.add_argument("--model", default=None,
                   help="a registered model (see `dpglass models`), or 'auto'; default: 'auto' for --data read "
                   "through --schema or the inline options (DPPipeline's rule, version 2: dp-gam when epsilon >= 1 "
                   "and about epsilon x records >= 1000, else dp-gam (dp-gbdt on 0/1 columns only) when epsilon x "
                   "records >= 100 per column, else dp-rule-list; dp-gbdt for dp-gam at --delta 0; one noisy count "
                   "of records paid from epsilon), else dp-rule-list")
    p.add_argument("--epsilon", type=float, help="privacy budget epsilon of private models (default: 1)")
    p.add_argument("--delta", type=float, help="privacy budget delta (default 1e-8 where used)")
    p.add_argument("--mechanism", help="rule-list selection mechanism (default errors-pf)")
    p.add_argument("--max-length", type=int, help="rule lists: maximum number of rules")
    p.add_argument("--min-support", type=float, help="rule lists: minimum support lambda")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="any other model parameter")
    p.add_argument("--test-size", type=float, default=None,
                   help="held-out fraction (default 0.3; 0 trains on all; not through Dask)")
    p.add_argument("--scheduler", help="fit --data through Dask: 'local' (a LocalCluster) or a scheduler address "
                   "tcp://host:port (default for parquet --data: local)")
    p.add_argument("--seed", type=int, default=None, help="seed for the split and the model (default: unpredictable)")
    p.add_argument("--classes", help="the class labels, comma-separated (two: negative first, e.g. '<=50K,>50K'; or K, e.g. "
                        "'Adelie,Chinstrap,Gentoo'): the public label set, in the order of predict_proba's columns")
    p.add_argument("--public", metavar="FILE",
                   help="a CSV of PUBLIC unlabelled records with the 0/1 columns of --data/--dataset (by name), for "
                   "models that label a public part (subsample-aggregate, dp-bag); its rows are not protected")
    p.add_argument("--exact-accuracy", action="store_true",
                   help="also print the exact held-out accuracy to stderr (NOT private: for the curator only)")
    p.add_argument("--out", help="write the fitted model here as JSON")
    p.set_defaults(handler=run)


def run(args) -> int:
    from dpglass.cli.fit.through_dask import wants_dask
    from dpglass.cli.tables import check_out_path

    check_out_path(args.out)  # before any training
    if wants_dask(args):  # parquet files or --scheduler: fit through Dask
        from dpglass.cli.fit.through_dask import fit_through_dask

        return fit_through_dask(args)
    from dpglass.cli.fit.in_memory import fit_in_memory

    return fit_in_memory(args)
