"""The ``dpglass`` command line.

``dpglass fit --dataset breast-cancer --epsilon 1`` trains a DP rule list on
70% of the embedded breast-cancer data, prints it, its accuracy on the held-out
30% and its privacy ledger.  ``dpglass --help`` lists the subcommands.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

import numpy as np

from dpglass._parsing import parse_value as _parse_value
from dpglass.exceptions import (
    BudgetExceededError,
    DataValidationError,
    DatasetNotFoundError,
    InvalidParameterError,
    ModelFileError,
)

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    from dpglass import __version__

    parser = argparse.ArgumentParser(
        prog="dpglass",
        description="Differentially private glass-box classifiers.",
    )
    parser.add_argument("--version", action="version", version=f"dpglass {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("datasets", help="list the built-in datasets and where each is found")
    p.add_argument("--data-home", help="data folder (default: $DPGLASS_DATA, else ~/.cache/dpglass)")

    sub.add_parser("models", help="list the registered models and their guarantees")

    p = sub.add_parser("fit", help="train a model, print it, its held-out accuracy and its ledger")
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
    p.add_argument("--model", default="dp-rule-list", help="a registered model (see `dpglass models`)")
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
    p.add_argument("--classes", help="the two class labels, negative first (e.g. '<=50K,>50K'): the public label set")
    p.add_argument("--public", metavar="FILE",
                   help="a CSV of PUBLIC unlabelled records with the 0/1 columns of --data/--dataset (by name), for "
                   "models that label a public part (subsample-aggregate, dp-bag); its rows are not protected")
    p.add_argument("--exact-accuracy", action="store_true",
                   help="also print the exact held-out accuracy to stderr (NOT private: for the curator only)")
    p.add_argument("--out", help="write the fitted model here as JSON")

    p = sub.add_parser("predict", help="predict with a saved model")
    p.add_argument("--model", required=True, help="model JSON written by `dpglass fit --out`")
    p.add_argument("--data", required=True, help="CSV with the model's columns, by name, in any order")
    p.add_argument("--target", help="a label column to ignore (a schema model knows its own)")
    p.add_argument("--id", help="a column to copy to the output beside each prediction")
    p.add_argument("--proba", action="store_true", help="also write the probability of each class")
    p.add_argument("--out", help="write predictions here (CSV); default: standard output")

    p = sub.add_parser("schema", help="write a schema template for a CSV: names and kinds, bounds left to fill")
    p.add_argument("--data", required=True, help="the CSV file")
    p.add_argument("--target", help="the label column")
    p.add_argument("--out", help="write the template here (JSON); default: standard output")
    p.add_argument("--fill-bounds-from-data", action="store_true",
                   help="fill bounds and categories from the data: NOT private (warns)")

    p = sub.add_parser("inspect", help="verify a saved model file; print its guarantee, budget and every release")
    p.add_argument("model", metavar="MODEL.json", help="model JSON written by `dpglass fit --out` or save()")

    for extra in _extra_commands():
        extra(sub)
    return parser


def _extra_commands():
    """Subcommands contributed by other modules (audit, reproduce), when present."""
    found = []
    for module, attr in (("dpglass.audit.cli", "add_parser"), ("dpglass_experiments.cli", "add_parser"),
                         ("dpglass.local.cli", "add_parser")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ImportError:
            continue
        found.append(getattr(mod, attr))
    return found


def _rows(X, index):
    return X.iloc[index] if hasattr(X, "iloc") else np.asarray(X)[index]


def _cmd_datasets(args) -> int:
    from dpglass.datasets import list_datasets

    infos = list_datasets(data_home=args.data_home)
    width = max(len(i.name) for i in infos)
    for info in infos:
        print(f"{info.name.ljust(width)}  {info.n_samples:>6} x {info.n_features:<4} {info.status}")
        print(f"{''.ljust(width)}  {info.description}")
    return 0


def _cmd_models(args) -> int:
    from dpglass.registry import list_estimators

    import textwrap

    for spec in list_estimators():
        print(f"{spec.name:24s} {spec.guarantee}")
        print(f"{'':24s} {spec.description}")
        defaults = spec.make().get_params(deep=False)  # the registry name's own settings included
        shown = ", ".join(f"{k}={_shown(v)}" for k, v in sorted(defaults.items()))
        print(textwrap.fill(f"parameters (--param NAME=VALUE): {shown}", width=120, initial_indent=" " * 25,
                            subsequent_indent=" " * 27))
    return 0


def _shown(value) -> str:
    """A parameter's default as it is typed after --param NAME= (JSON where it has a JSON form)."""
    try:
        return json.dumps(value)
    except TypeError:
        return repr(value)


#: DPPipeline's own parameters, given with --param when the table is read through a schema.
PIPELINE_PARAMS = ("quantile_share", "clip_share")


def _model_params(spec, args) -> dict:
    params = {}
    for name, value in (("epsilon", args.epsilon), ("delta", args.delta), ("mechanism", args.mechanism),
                        ("max_length", args.max_length), ("min_support", args.min_support)):
        if value is not None:
            params[name] = value
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep:
            raise InvalidParameterError(f"--param takes NAME=VALUE; got {item!r}.")
        params[name.replace("-", "_")] = _parse_value(value)
    accepted = set(spec.cls().get_params())
    if args.schema or args.bounds or args.categorical or args.binary or args.drop or args.dp_quantiles:
        accepted |= set(PIPELINE_PARAMS)  # a raw table goes through DPPipeline, which takes its encoder's shares
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise InvalidParameterError(
            f"Model {spec.name!r} has no parameter {', '.join(unknown)}; its parameters are: {', '.join(sorted(accepted))}."
        )
    if args.classes is not None:
        labels = [_parse_value(v) for v in args.classes.split(",")]
        if len(labels) != 2:
            raise InvalidParameterError(f"--classes takes two labels separated by a comma; got {args.classes!r}.")
        params["classes"] = labels
    return params


def _text_columns(args, schema) -> list:
    """The columns a CSV is read with as text: the categorical ones of the schema or of ``--categorical``."""
    from dpglass._cli_tables import categorical_columns

    if schema is not None:
        return categorical_columns(schema)
    return [item.partition("=")[0] for item in (getattr(args, "categorical", None) or [])]


def _load_fit_data(args):
    """(X, y, source, schema or None)."""
    from dpglass._cli_tables import check_binary_columns, inline_schema, read_csv, split_target

    inline = args.bounds or args.categorical or args.binary or args.drop or args.dp_quantiles
    if args.data is None:
        if args.schema or inline:
            raise InvalidParameterError("--schema and the inline column options describe --data; pass --data FILE.")
        from dpglass.datasets import load_dataset

        source = args.dataset or "breast-cancer"
        X, y = load_dataset(source, data_home=args.data_home)
        return X, y, source, None
    if args.target is None:
        raise InvalidParameterError("--data needs --target, the name of the label column.")
    if args.schema and inline:
        raise InvalidParameterError("Give the columns either in --schema FILE or with the inline options, not both.")
    schema = None
    if args.schema:
        from dpglass.schema import load_schema

        schema = load_schema(args.schema)
    frame = read_csv(args.data, text_columns=_text_columns(args, schema))
    X, y = split_target(frame, args.target, args.data)
    if schema is not None:
        return X, y, args.data, schema
    if inline:
        return X, y, args.data, inline_schema(frame, args.target, bounds=args.bounds, categorical=args.categorical,
                                              binary=args.binary, drop=args.drop, quantiles=args.dp_quantiles)
    check_binary_columns(X, args.data, args.target)
    return X, y, args.data, None


def _cmd_fit(args) -> int:
    from dpglass._cli_tables import check_out_path
    from dpglass.privacy.rng import check_random_state, spawn
    from dpglass.privacy.splits import split_rows
    from dpglass.registry import get_spec

    check_out_path(args.out)  # before any training
    from dpglass import _cli_dask

    if _cli_dask.wants_dask(args):  # parquet files or --scheduler: fit through Dask
        return _cli_dask.cmd_fit(args, make_params=_model_params, build_model=_build_model, public_part=_public_part)
    if args.test_size is None:
        args.test_size = 0.3
    X, y, source, schema = _load_fit_data(args)
    spec = get_spec(args.model)
    params = _model_params(spec, args)  # --classes included
    labels = np.unique(np.asarray(y))
    if labels.size == 0 and "classes" not in params:
        raise DataValidationError(f"{source} has no records, and without --classes the label set is read from "
                                  "them: declare it with --classes NEG,POS (a private fit then runs on no records).")
    if "classes" not in params and "classes" in spec.cls().get_params() and labels.size == 2:
        # the file's label set, read as public (docs/privacy.md, "The label set"), is the model's: the coin split
        # must not make the fit fail when its training part holds one class or none
        params["classes"] = [v.item() if hasattr(v, "item") else v for v in labels]
    if not 0 <= args.test_size < 1:
        raise InvalidParameterError(f"--test-size must be in [0, 1); got {args.test_size}.")
    # one generator for the run; the split and the model get independent children
    split_rng, model_rng = spawn(check_random_state(args.seed), 2)
    model = _build_model(spec, params, schema, model_rng)
    _check_all_records(model, X, y, schema)  # held-out records too: nothing is printed before every record is valid
    if args.test_size > 0:  # each record held out by its own public coin (docs/privacy.md: never a fixed size)
        train, test = split_rows(len(y), args.test_size, split_rng)
        X_tr, X_te, y_tr, y_te = _rows(X, train), _rows(X, test), np.asarray(y)[train], np.asarray(y)[test]
    else:
        X_tr, X_te, y_tr, y_te = X, None, y, None
    if args.public:
        X_public = _public_part(args, X, spec, schema)
        model.fit(X_tr, y_tr, X_public=X_public)
    else:
        model.fit(X_tr, y_tr)
    # the number of records is private: it is not printed
    what = f"{X_tr.shape[1]} raw columns through a schema" if schema is not None else f"{X_tr.shape[1]} binary features"
    print(f"{spec.name} on {source}: {what}{_label_meaning(args, source)}\n")
    if args.public:
        print(f"public part: {len(X_public)} records of {args.public} (declared public: not protected)\n")
    elif hasattr(getattr(model, "model_", model), "n_public_"):
        print(f"public part: none given (--public), so {getattr(model, 'model_', model).n_public_} uniform random "
              "0/1 rows: fine for a test, useless for a model\n")
    print(model)
    if X_te is not None:
        _print_accuracy(model, X_te, y_te, args.exact_accuracy, split_rng)
    if hasattr(model, "privacy_ledger_"):
        ledger = model.privacy_ledger_
        eps, delta = ledger.total()
        print("\nprivacy ledger:")
        print(ledger)
        print(f"\nbudget spent: epsilon={eps:.4g} of {ledger.epsilon:.4g} given, delta={delta:.3g} of {ledger.delta:.3g}")
    if args.out:
        model.save(args.out)
        print(f"\nmodel written to {args.out}")
    return 0


def _label_meaning(args, source) -> str:
    """For a built-in dataset, what its label 1 means (from its description), so a printed "then 1" reads."""
    if args.data is not None:
        return ""
    import re

    from dpglass.datasets import list_datasets

    info = next((d for d in list_datasets() if d.name == source), None)
    found = re.search(r"y = 1: ([^.]+)\.", info.description) if info is not None else None
    return f" (label 1: {found.group(1)})" if found else ""


def _check_all_records(model, X, y, schema) -> None:
    """Check every record, held-out ones included, as the fit checks its training part (docs/privacy.md,
    "Errors and warnings": input validation reaches the curator before any release)."""
    from sklearn.base import clone

    if schema is None:
        clone(model)._check_fit_data(X, y)
        return
    from dpglass._validation import check_binary_y
    from dpglass.schema.encoding import validate_table

    validate_table(X, schema)
    check_binary_y(y, classes=model.model.get_params().get("classes"))


def _public_part(args, X, spec, schema=None):
    """The records of ``--public``: with a schema, its raw columns (the pipeline encodes and checks them); else
    the training data's 0/1 columns, in its order."""
    import inspect

    from dpglass._cli_tables import categorical_columns, read_csv

    if "X_public" not in inspect.signature(spec.cls.fit).parameters:
        raise InvalidParameterError(f"--public: model {spec.name!r} does not learn from a public part.")
    frame = read_csv(args.public, text_columns=categorical_columns(schema))
    if args.target is not None and args.target in frame.columns:
        frame = frame.drop(columns=[args.target])  # a public file may carry labels: they are not read
    names = [str(c) for c in X.columns] if hasattr(X, "columns") else None
    if schema is not None:
        return frame  # raw columns: the pipeline encodes them with the schema's cut points (and checks them)
    if names is None or set(map(str, frame.columns)) != set(names):
        raise DataValidationError(f"{args.public} must have exactly the feature columns of the training data "
                                  f"({', '.join(names or [])}), by name.")
    frame.columns = [str(c) for c in frame.columns]
    return frame[names]


def _print_accuracy(model, X_te, y_te, exact: bool, rng) -> None:
    """A DP estimate of the held-out accuracy (stdout); the exact one only on request, on stderr.

    The held-out part is disjoint from the training part (a split by public
    coins), so two discrete-Laplace counts on it at epsilon/2 each keep the
    whole run within epsilon by parallel composition (docs/privacy.md, CLI).
    """
    correct = int(np.sum(model.predict(X_te) == np.asarray(y_te))) if len(y_te) else 0  # the coins may hold none out
    ledger = getattr(model, "privacy_ledger_", None)
    if ledger is None:
        print(f"\nheld-out accuracy: {correct / max(len(y_te), 1):.4f} of {len(y_te)} records (non-private model)")
        return
    from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism

    eps = float(ledger.epsilon)
    mech = DiscreteLaplaceMechanism(eps / 2)
    noisy_correct, noisy_size = (int(v) for v in mech.randomise(np.array([correct, len(y_te)]), rng))
    print("\n" + accuracy_estimate(noisy_correct, noisy_size, mech.tail_bound(HELD_OUT_ALPHA / 2)))
    print(f"(noisy counts of the correct predictions and of the held-out records, discrete Laplace at "
          f"epsilon={eps / 2:.4g} each, on records disjoint from the training part: parallel composition keeps the "
          "run within the budget)")
    if exact:
        exact_text = f"{correct / len(y_te):.4f}" if len(y_te) else "none (no record held out)"
        print(f"held-out accuracy (exact, NOT private, curator only): {exact_text}", file=sys.stderr)


HELD_OUT_ALPHA = 0.05  # the interval covers both counts' noise with probability >= 95% (a union bound)


def accuracy_estimate(noisy_correct: int, noisy_size: int, k: int) -> str:
    """The held-out accuracy line from its two noisy counts, each within ``k`` of its true value w.p. >= 1 - alpha/2.

    On that event the exact accuracy lies in ``[(c - k) / (s + k), (c + k) / (s - k)]``
    (intersected with [0, 1]); when ``s - k < 1`` the size may be 0 and nothing
    is estimated.  The interval covers the noise only, not the sampling of the
    held-out records.  Post-processing of the two counts.

    >>> print(accuracy_estimate(80, 100, 3))
    held-out accuracy (DP estimate): 0.800, 95% interval 0.748 to 0.856 (noise only) = 80 / 100 (noisy counts)
    >>> print(accuracy_estimate(103, 100, 3).split(" = ")[0])
    held-out accuracy (DP estimate): 1.030, 95% interval 0.971 to 1.000 (noise only; the noisy ratio lies outside [0, 1])
    >>> print(accuracy_estimate(154, 121, 3))  # doctest: +ELLIPSIS
    held-out accuracy: no estimate: the noisy counts 154 correct of 121 are farther from any possible pair than ...
    >>> print(accuracy_estimate(5, 2, 3))
    held-out accuracy: too few held-out records to estimate (noisy counts 5 correct of 2, each give or take 3 at 95%)
    """
    c, s = int(noisy_correct), int(noisy_size)
    if s - k < 1:
        return (f"held-out accuracy: too few held-out records to estimate (noisy counts {c} correct of {s}, each "
                f"give or take {k} at {1 - HELD_OUT_ALPHA:.0%})")
    ratio, lo, hi = c / s, (c - k) / (s + k), (c + k) / (s - k)
    if hi < 0.0 or lo > 1.0:
        return (f"held-out accuracy: no estimate: the noisy counts {c} correct of {s} are farther from any possible "
                f"pair than their noise's {1 - HELD_OUT_ALPHA:.0%} bound ({k} each); a rare draw, or a tiny held-out part")
    note = "noise only" if 0.0 <= ratio <= 1.0 else "noise only; the noisy ratio lies outside [0, 1]"
    return (f"held-out accuracy (DP estimate): {ratio:.3f}, {1 - HELD_OUT_ALPHA:.0%} interval {max(lo, 0.0):.3f} to "
            f"{min(hi, 1.0):.3f} ({note}) = {c} / {s} (noisy counts)")


#: How to fit a non-private baseline on a schema's encoding (tested in tests/test_cli.py).
BASELINE_HINT = """    import pandas as pd
    from dpglass.schema import fit_encoding, load_schema

    X = pd.read_csv("FILE.csv").drop(columns=["TARGET"])
    encoding, _, _ = fit_encoding(X, load_schema("SCHEMA.json"), quantile_epsilon=0, clip_epsilon=0, rng=None)
    X01 = pd.DataFrame(encoding.transform(X), columns=encoding.feature_names())"""


def _build_model(spec, params, schema, rng):
    accepted = spec.cls().get_params()
    if schema is None:
        if "random_state" in accepted and "random_state" not in params:
            params["random_state"] = rng
        return spec.make(**params)
    if not spec.private:
        raise InvalidParameterError(
            f"--schema fits a private model through DPPipeline; {spec.name!r} is not private. For a non-private "
            "baseline, binarize the table in Python with the same schema (a schema without dp-quantiles: its cut "
            "points are public) and fit the model on that:\n" + BASELINE_HINT)
    from dpglass.models import DPPipeline

    outer = {k: params.pop(k) for k in ("epsilon", "delta", *PIPELINE_PARAMS) if k in params}
    outer["random_state"] = params.pop("random_state", rng)
    return DPPipeline(schema=schema, model=spec.make(**params), **outer)


def _cmd_predict(args) -> int:
    import pandas as pd

    from dpglass._cli_tables import categorical_columns, check_out_path, prediction_frame, read_csv
    from dpglass.models import load_model

    check_out_path(args.out)
    model = load_model(args.model)
    schema = model.encoding_.schema if hasattr(model, "encoding_") else None
    frame = read_csv(args.data, text_columns=categorical_columns(schema))
    X, ids = prediction_frame(model, frame, target=args.target, id_column=args.id)
    out = {} if ids is None else {args.id: ids.to_numpy()}
    out["prediction"] = model.predict(X)
    if args.proba:
        proba = model.predict_proba(X)
        for j, c in enumerate(model.classes_):
            out[f"p({c})"] = proba[:, j]
    frame = pd.DataFrame(out)
    if args.out:
        frame.to_csv(args.out, index=False)
    else:
        frame.to_csv(sys.stdout, index=False)
    return 0


def _cmd_schema(args) -> int:
    from dpglass._cli_tables import check_out_path, read_csv
    from dpglass.schema import schema_template

    check_out_path(args.out)
    frame = read_csv(args.data)
    if args.target is not None and args.target not in frame.columns:
        raise DataValidationError(f"{args.data} has no column {args.target!r}.")
    if args.target is not None and frame[args.target].nunique() > 2:
        # said before the user fills in the schema (curator-side, like the template itself)
        print(f"dpglass schema: note: the target {args.target!r} has more than two labels, and every dpglass model "
              "is binary today: recode it into two classes (e.g. one label against the others) before fitting, "
              "and declare them with --classes NEG,POS.", file=sys.stderr)
    text = json.dumps(schema_template(frame, args.target, fill_bounds_from_data=args.fill_bounds_from_data),
                      indent=2)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
        print(f"schema template written to {args.out}: fill in every null bound and empty category list "
              "with public values before fitting")
    else:
        print(text)
    return 0


def _cmd_inspect(args) -> int:
    from dpglass.models._verify import format_model_report, read_model_file

    data, cls, names = read_model_file(args.model)  # raises ModelFileError unless verified
    print(f"model file: {args.model}")
    print(format_model_report(data, cls, names))
    print("verified: yes (the file is consistent with its parameters and within its budget; a file cannot show "
          "that its noise was drawn as it states: that rests on who fitted it)")
    print("\nthe model, as released:")
    print(cls.from_dict(data))
    return 0


_COMMANDS = {
    "datasets": _cmd_datasets,
    "models": _cmd_models,
    "fit": _cmd_fit,
    "predict": _cmd_predict,
    "inspect": _cmd_inspect,
    "schema": _cmd_schema,
}


def _format_warning(message, category, filename, lineno, line=None) -> str:
    """Warnings as the command's own lines (not the Python source line that raised them)."""
    return f"dpglass: {category.__name__}: {message}\n"


def main(argv=None) -> int:
    """Entry point of the ``dpglass`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = _COMMANDS.get(args.command) or getattr(args, "handler", None)
    shown = warnings.formatwarning
    warnings.formatwarning = _format_warning  # for this command only (main may run inside a Python session)
    try:
        return handler(args)
    except (
        InvalidParameterError,
        DataValidationError,
        DatasetNotFoundError,
        BudgetExceededError,
        ModelFileError,
    ) as exc:
        print(f"dpglass {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped early (`dpglass predict ... | head`): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit: let that flush go nowhere
        return 1
    finally:
        warnings.formatwarning = shown


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
