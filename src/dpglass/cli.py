"""The ``dpglass`` command line.

``dpglass fit --dataset breast-cancer --epsilon 1`` trains a DP rule list on
70% of the embedded breast-cancer data, prints it, its accuracy on the held-out
30% and its privacy ledger.  ``dpglass --help`` lists the subcommands.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from dpglass.exceptions import (
    BudgetExceededError,
    DataValidationError,
    DatasetNotFoundError,
    InvalidParameterError,
    ModelFileError,
)

__all__ = ["main", "build_parser"]


def _parse_value(text: str):
    """``--param k=v`` values: JSON when it parses (numbers, true, null), else the string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpglass",
        description="Differentially private glass-box classifiers.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("datasets", help="list the built-in datasets and where each is found")
    p.add_argument("--data-home", help="data folder (default: $DPGLASS_DATA, else ~/.cache/dpglass)")

    sub.add_parser("models", help="list the registered models and their guarantees")

    p = sub.add_parser("fit", help="train a model, print it, its held-out accuracy and its ledger")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--dataset", help="a built-in dataset (see `dpglass datasets`); default breast-cancer")
    src.add_argument("--data", help="a CSV file of 0/1 feature columns and a target column")
    p.add_argument("--target", help="the target column of --data")
    p.add_argument("--data-home", help="data folder for --dataset")
    p.add_argument("--model", default="dp-rule-list", help="a registered model (see `dpglass models`)")
    p.add_argument("--epsilon", type=float, help="privacy budget epsilon (private models)")
    p.add_argument("--delta", type=float, help="privacy budget delta (default 1e-8 where used)")
    p.add_argument("--mechanism", help="rule-list selection mechanism (default certified-pf)")
    p.add_argument("--max-length", type=int, help="rule lists: maximum number of rules")
    p.add_argument("--min-support", type=float, help="rule lists: minimum support lambda")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="any other model parameter")
    p.add_argument("--test-size", type=float, default=0.3, help="held-out fraction (default 0.3; 0 trains on all)")
    p.add_argument("--seed", type=int, default=None, help="seed for the split and the model (default: unpredictable)")
    p.add_argument("--out", help="write the fitted model here as JSON")

    p = sub.add_parser("predict", help="predict with a saved model")
    p.add_argument("--model", required=True, help="model JSON written by `dpglass fit --out`")
    p.add_argument("--data", required=True, help="CSV with the model's feature columns")
    p.add_argument("--out", help="write predictions here (CSV); default: standard output")

    p = sub.add_parser("inspect", help="verify a saved model file; print its guarantee, budget and every release")
    p.add_argument("model", metavar="MODEL.json", help="model JSON written by `dpglass fit --out` or save()")

    for extra in _extra_commands():
        extra(sub)
    return parser


def _extra_commands():
    """Subcommands contributed by other modules (audit, reproduce), when present."""
    found = []
    for module, attr in (("dpglass.audit.cli", "add_parser"), ("dpglass.experiments.cli", "add_parser")):
        try:
            mod = __import__(module, fromlist=[attr])
        except ImportError:
            continue
        found.append(getattr(mod, attr))
    return found


def _read_csv(path, target=None):
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise DataValidationError(f"Could not read {path} as CSV: {exc}") from exc
    if target is None:
        return frame, None
    if target not in frame.columns:
        raise DataValidationError(
            f"{path} has no column {target!r}; its columns are: {', '.join(map(str, frame.columns))}."
        )
    return frame.drop(columns=[target]), frame[target].to_numpy()


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

    for spec in list_estimators():
        print(f"{spec.name:24s} {spec.guarantee}")
        print(f"{'':24s} {spec.description}")
    return 0


def _cmd_fit(args) -> int:
    from dpglass.privacy.rng import check_random_state, spawn
    from dpglass.registry import get_spec

    if args.data is not None:
        if args.target is None:
            raise InvalidParameterError("--data needs --target, the name of the label column.")
        X, y = _read_csv(args.data, args.target)
        source = args.data
    else:
        from dpglass.datasets import load_dataset

        source = args.dataset or "breast-cancer"
        X, y = load_dataset(source, data_home=args.data_home)

    spec = get_spec(args.model)
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
    accepted = spec.cls().get_params()
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise InvalidParameterError(
            f"Model {spec.name!r} has no parameter {', '.join(unknown)}; its parameters are: {', '.join(sorted(accepted))}."
        )
    # one generator for the run; the split and the model get independent children
    split_rng, model_rng = spawn(check_random_state(args.seed), 2)
    if "random_state" in accepted and "random_state" not in params:
        params["random_state"] = model_rng
    if not 0 <= args.test_size < 1:
        raise InvalidParameterError(f"--test-size must be in [0, 1); got {args.test_size}.")
    if args.test_size > 0:
        order = split_rng.permutation(len(y))
        test, train = order[: int(np.ceil(args.test_size * len(y)))], order[int(np.ceil(args.test_size * len(y))):]
        X_tr, X_te, y_tr, y_te = _rows(X, train), _rows(X, test), np.asarray(y)[train], np.asarray(y)[test]
    else:
        X_tr, X_te, y_tr, y_te = X, None, y, None

    model = spec.make(**params).fit(X_tr, y_tr)
    # the number of records is private: it is not printed
    print(f"{spec.name} on {source}: {X_tr.shape[1]} binary features\n")
    print(model)
    if X_te is not None:
        acc = float(np.mean(model.predict(X_te) == np.asarray(y_te)))
        print(f"\nheld-out accuracy: {acc:.4f} (exact, NOT private: for you, the curator, "
              "not for publication)")
    if hasattr(model, "privacy_ledger_"):
        print("\nprivacy ledger:")
        print(model.privacy_ledger_)
    if args.out:
        model.save(args.out)
        print(f"\nmodel written to {args.out}")
    return 0


def _cmd_predict(args) -> int:
    import pandas as pd

    from dpglass.models import load_model

    model = load_model(args.model)
    X, _ = _read_csv(args.data)
    pred = model.predict(X)
    frame = pd.DataFrame({"prediction": pred})
    if args.out:
        frame.to_csv(args.out, index=False)
    else:
        frame.to_csv(sys.stdout, index=False)
    return 0


def _cmd_inspect(args) -> int:
    from dpglass.models._verify import format_model_report, read_model_file

    data, cls, names = read_model_file(args.model)  # raises ModelFileError unless verified
    print(f"model file: {args.model}")
    print(format_model_report(data, cls, names))
    print("verified: yes")
    return 0


_COMMANDS = {
    "datasets": _cmd_datasets,
    "models": _cmd_models,
    "fit": _cmd_fit,
    "predict": _cmd_predict,
    "inspect": _cmd_inspect,
}


def main(argv=None) -> int:
    """Entry point of the ``dpglass`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = _COMMANDS.get(args.command) or getattr(args, "handler", None)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
