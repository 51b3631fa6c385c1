"""``dpglass fit`` in memory: a built-in dataset or a CSV, split by public coins, with a DP held-out estimate.

The records are read (a CSV through ``--schema``, the inline column options,
or as 0/1 columns), every one of them checked before anything is printed,
each held out by its own public coin (:func:`dpglass.privacy.splits.split_rows`),
the model fitted on the rest and printed with the DP estimate of its held-out
accuracy (:mod:`dpglass.cli.held_out`) and its ledger; ``--out`` writes that estimate into the file
(its ``held_out`` section).
"""

from __future__ import annotations

import numpy as np

from dpglass.cli.fit.estimator import build_model, fit_spec, model_params, print_ledger_and_save, public_part
from dpglass.cli.held_out import print_accuracy, save_with_held_out
from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = ["fit_in_memory"]


def fit_in_memory(args) -> int:
    """The in-memory route of ``dpglass fit`` (the output path is checked already)."""
    from dpglass.privacy.rng import check_random_state, spawn
    from dpglass.privacy.splits import split_rows

    if args.test_size is None:
        args.test_size = 0.3
    X, y, source, schema = _load_fit_data(args)
    spec = fit_spec(args, schema)
    params = model_params(spec, args)  # --classes included
    labels = np.unique(np.asarray(y))
    if labels.size == 0 and "classes" not in params:
        raise DataValidationError(f"{source} has no records, and without --classes the label set is read from "
                                  "them: declare it with --classes A,B,... (a private fit then runs on no records).")
    if "classes" not in params and args.data is not None and spec.private:
        # a user's file without --classes: said on every such run, whatever the data
        import warnings

        from dpglass.exceptions import UndeclaredClassesWarning

        warnings.warn("no --classes: the label set is read from the file and published in the model (which "
                      "classes occur in the private data). Declare it with --classes A,B,... unless it is "
                      "public.", UndeclaredClassesWarning, stacklevel=2)
    if "classes" not in params and "classes" in spec.cls().get_params() and labels.size >= 2:
        # the file's label set, read as public (docs/privacy.md, "The label set"), is the model's: the coin split
        # must not make the fit fail when its training part holds one class or none
        params["classes"] = [v.item() if hasattr(v, "item") else v for v in labels]
    if not 0 <= args.test_size < 1:
        raise InvalidParameterError(f"--test-size must be in [0, 1); got {args.test_size}.")
    # one generator for the run; the split and the model get independent children
    split_rng, model_rng = spawn(check_random_state(args.seed), 2)
    model = build_model(spec, params, schema, model_rng)
    _check_all_records(model, X, y, schema)  # held-out records too: nothing is printed before every record is valid
    if args.test_size > 0:  # each record held out by its own public coin (docs/privacy.md: never a fixed size)
        train, test = split_rows(len(y), args.test_size, split_rng)
        X_tr, X_te, y_tr, y_te = _rows(X, train), _rows(X, test), np.asarray(y)[train], np.asarray(y)[test]
    else:
        X_tr, X_te, y_tr, y_te = X, None, y, None
    if args.public:
        X_public = public_part(args, X, spec, schema)
        model.fit(X_tr, y_tr, X_public=X_public)
    else:
        model.fit(X_tr, y_tr)
    # the number of records is private: it is not printed
    what = f"{X_tr.shape[1]} raw columns through a schema" if schema is not None else f"{X_tr.shape[1]} binary features"
    name = f"auto ({model.model_choice_}, by DPPipeline's rule)" if spec.name == "auto" else spec.name
    print(f"{name} on {source}: {what}{_label_meaning(args, source)}\n")
    if args.public:
        print(f"public part: {len(X_public)} records of {args.public} (declared public: not protected)\n")
    elif hasattr(getattr(model, "model_", model), "n_public_"):
        print(f"public part: none given (--public), so {getattr(model, 'model_', model).n_public_} uniform random "
              "0/1 rows: fine for a test, useless for a model\n")
    print(model)
    held_out = None  # the file's held_out section: the DP estimate printed (a private model's only)
    if X_te is not None:
        held_out = print_accuracy(model, X_te, y_te, args.exact_accuracy, split_rng, args.test_size)
    print_ledger_and_save(model, None)
    if args.out:
        save_with_held_out(model, args.out, held_out)
        print(f"\nmodel written to {args.out}")
    return 0


def _rows(X, index):
    return X.iloc[index] if hasattr(X, "iloc") else np.asarray(X)[index]


def _text_columns(args, schema) -> list:
    """The columns a CSV is read with as text: the categorical ones of the schema or of ``--categorical``."""
    from dpglass.cli.tables import categorical_columns

    if schema is not None:
        return categorical_columns(schema)
    return [item.partition("=")[0] for item in (getattr(args, "categorical", None) or [])]


def _load_fit_data(args):
    """(X, y, source, schema or None)."""
    from dpglass.cli.tables import check_binary_columns, inline_schema, read_csv, split_target

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
    from dpglass._validation import check_labels
    from dpglass.schema.encoding import validate_table

    validate_table(X, schema)
    auto = isinstance(model.model, str)  # model="auto": the pipeline holds the label set
    check_labels(y, classes=model.classes if auto else model.model.get_params().get("classes"),
                 max_classes=model._max_classes, model="DPPipeline" if auto else type(model.model).__name__)
