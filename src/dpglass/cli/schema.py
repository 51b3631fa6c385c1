"""``dpglass schema --data FILE.csv``: a schema template for a CSV, names and kinds, the bounds left to fill."""

from __future__ import annotations

import json
import sys

from dpglass.exceptions import DataValidationError

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("schema", help="write a schema template for a CSV: names and kinds, bounds left to fill")
    p.add_argument("--data", required=True, help="the CSV file")
    p.add_argument("--target", help="the label column")
    p.add_argument("--out", help="write the template here (JSON); default: standard output")
    p.add_argument("--fill-bounds-from-data", action="store_true",
                   help="fill bounds and categories from the data: NOT private (warns)")
    p.set_defaults(handler=run)


def run(args) -> int:
    from dpglass.cli.tables import check_out_path, read_csv
    from dpglass.schema import schema_template

    check_out_path(args.out)
    frame = read_csv(args.data)
    if args.target is not None and args.target not in frame.columns:
        raise DataValidationError(f"{args.data} has no column {args.target!r}.")
    if args.target is not None and frame[args.target].nunique() > 2:
        # said before the user fills in the schema (curator-side, like the template itself)
        print(f"dpglass schema: note: the target {args.target!r} has more than two labels: fit a model that learns "
              "K classes (`dpglass models` says which do), and declare the label set with --classes A,B,C (its "
              "order is that of predict_proba's columns).", file=sys.stderr)
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
