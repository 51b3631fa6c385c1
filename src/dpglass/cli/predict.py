"""``dpglass predict --model M.json --data FILE.csv``: predictions of a saved model, as CSV."""

from __future__ import annotations

import sys

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("predict", help="predict with a saved model")
    p.add_argument("--model", required=True, help="model JSON written by `dpglass fit --out`")
    p.add_argument("--data", required=True, help="CSV with the model's columns, by name, in any order")
    p.add_argument("--target", help="a label column to ignore (a schema model knows its own)")
    p.add_argument("--id", help="a column to copy to the output beside each prediction")
    p.add_argument("--proba", action="store_true", help="also write the probability of each class")
    p.add_argument("--out", help="write predictions here (CSV); default: standard output")
    p.set_defaults(handler=run)


def run(args) -> int:
    import pandas as pd

    from dpglass.cli.tables import categorical_columns, check_out_path, prediction_frame, read_csv
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
