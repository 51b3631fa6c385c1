"""``dpglass export MODEL.json --to sql|python``: a verified model's decision as one SQL SELECT or a Python
module (:mod:`dpglass.export`)."""

from __future__ import annotations

import sys

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "export", help="write a verified model's decision as one SQL SELECT or a dependency-free Python function",
        description="Verify a model file, then write its decision: SQL (one standard SELECT that SQLite and "
                    "PostgreSQL run over a table with the model's columns: each row with its scores and "
                    "prediction) or Python (a module with predict(row) and score(row), standard library only). "
                    "Rule lists, smooth boosting, dp-gbdt, dp-gam and DP logistic regression, alone or in a "
                    "DPPipeline (then the schema's raw columns); others are refused with the reason. Exporting "
                    "reads no data and spends no budget.")
    p.add_argument("model", metavar="MODEL.json", help="model JSON written by `dpglass fit --out` or save()")
    p.add_argument("--to", required=True, choices=("sql", "python"), help="the language to write")
    p.add_argument("--table", default="data", help="SQL: the table to read (default: data)")
    p.add_argument("--out", help="write here; default: standard output")
    p.set_defaults(handler=run)


def run(args) -> int:
    from dpglass.cli.tables import check_out_path
    from dpglass.export import export_file

    check_out_path(args.out)
    text = export_file(args.model, args.to, table=args.table)  # verifies the file first (ModelFileError)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0
