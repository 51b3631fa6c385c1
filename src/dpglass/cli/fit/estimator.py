"""The estimator ``dpglass fit`` trains, on either route (in memory, through Dask).

Its parameters from the command's options (:func:`model_params`), the model
built from them (:func:`build_model`: the registered estimator, or a
:class:`~dpglass.models.DPPipeline` around it for a raw table), its declared
public part (:func:`public_part`) and what is printed once it is fitted
(:func:`print_ledger_and_save`).
"""

from __future__ import annotations

from dpglass._parsing import parse_value
from dpglass.exceptions import DataValidationError, InvalidParameterError
from dpglass.registry import EstimatorSpec

__all__ = ["AUTO_SPEC", "BASELINE_HINT", "PIPELINE_PARAMS", "build_model", "fit_spec", "model_params",
           "print_ledger_and_save", "public_part"]

#: DPPipeline's own parameters, given with --param when the table is read through a schema.
PIPELINE_PARAMS = ("quantile_share", "clip_share")

#: How to fit a non-private baseline on a schema's encoding (tested in tests/test_cli.py).
BASELINE_HINT = """    import pandas as pd
    from dpglass.schema import fit_encoding, load_schema

    X = pd.read_csv("FILE.csv").drop(columns=["TARGET"])
    encoding, _, _ = fit_encoding(X, load_schema("SCHEMA.json"), quantile_epsilon=0, clip_epsilon=0, rng=None)
    X01 = pd.DataFrame(encoding.transform(X), columns=encoding.feature_names())"""


class AutoModel:
    """What ``dpglass fit`` knows of ``--model auto`` before the fit: the parameters it passes on (the model is
    chosen inside :class:`~dpglass.models.DPPipeline`, ``model="auto"``)."""

    def get_params(self, deep=True) -> dict:
        return {"epsilon": None, "delta": None, "classes": None}

    def fit(self, X, y):  # pragma: no cover - never fitted: a DPPipeline(model="auto") is
        raise NotImplementedError


#: ``--model auto``: DPPipeline(model="auto") over the table's schema (the default with a schema).
AUTO_SPEC = EstimatorSpec(
    name="auto", target="dpglass.cli.fit.estimator:AutoModel", private=True,
    guarantee="that of the model chosen", description="a model chosen by DPPipeline's documented rule from the "
    "schema, epsilon and one noisy count of records")


def fit_spec(args, schema):
    """The model ``dpglass fit`` trains: ``--model``, else ``auto`` for a raw table read through a schema (the
    rule of ``DPPipeline(model="auto")``), else ``dp-rule-list`` (the 0/1 tables and built-in datasets)."""
    from dpglass.registry import get_spec

    name = args.model or ("auto" if schema is not None else "dp-rule-list")
    if name != "auto":
        return get_spec(name)
    if schema is None:
        raise InvalidParameterError("--model auto chooses a model for a raw table read through a schema: give "
                                    "--data FILE.csv with --schema (or the inline column options), or name a model.")
    return AUTO_SPEC


def model_params(spec, args) -> dict:
    """The model's parameters from ``--epsilon``, ``--delta``, ..., ``--param`` and ``--classes``; unknown ones refused."""
    params = {}
    for name, value in (("epsilon", args.epsilon), ("delta", args.delta), ("mechanism", args.mechanism),
                        ("max_length", args.max_length), ("min_support", args.min_support)):
        if value is not None:
            params[name] = value
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep:
            raise InvalidParameterError(f"--param takes NAME=VALUE; got {item!r}.")
        params[name.replace("-", "_")] = parse_value(value)
    accepted = set(spec.cls().get_params())
    if args.schema or args.bounds or args.categorical or args.binary or args.drop or args.dp_quantiles:
        accepted |= set(PIPELINE_PARAMS)  # a raw table goes through DPPipeline, which takes its encoder's shares
    unknown = sorted(set(params) - accepted)
    if unknown:
        raise InvalidParameterError(
            f"Model {spec.name!r} has no parameter {', '.join(unknown)}; its parameters are: {', '.join(sorted(accepted))}."
        )
    if args.classes is not None:
        labels = [parse_value(v) for v in args.classes.split(",")]
        if len(labels) < 2 or len(set(labels)) != len(labels):
            raise InvalidParameterError(f"--classes takes two distinct labels or more, separated by commas (the "
                                        f"negative class first for two); got {args.classes!r}.")
        params["classes"] = labels
    return params


def build_model(spec, params, schema, rng):
    """The registered model with ``params`` (``rng`` its random state unless given); through a schema, a DPPipeline."""
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
    if spec is AUTO_SPEC:  # the pipeline chooses the model and gives it the label set
        return DPPipeline(schema=schema, model="auto", classes=params.pop("classes", None), **outer)
    return DPPipeline(schema=schema, model=spec.make(**params), **outer)


def public_part(args, X, spec, schema=None):
    """The records of ``--public``: with a schema, its raw columns (the pipeline encodes and checks them); else
    the training data's 0/1 columns, in its order."""
    import inspect

    from dpglass.cli.tables import categorical_columns, read_csv

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


def print_ledger_and_save(model, out) -> None:
    """After the fit: the privacy ledger and the budget spent (a private model), and the model file (``--out``)."""
    if hasattr(model, "privacy_ledger_"):
        ledger = model.privacy_ledger_
        eps, delta = ledger.total()
        print(f"\nprivacy ledger:\n{ledger}")
        print(f"\nbudget spent: epsilon={eps:.4g} of {ledger.epsilon:.4g} given, delta={delta:.3g} of {ledger.delta:.3g}")
    if out:
        model.save(out)
        print(f"\nmodel written to {out}")
