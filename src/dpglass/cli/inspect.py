"""``dpglass inspect MODEL.json``: verify a saved model file, print its guarantee, budget and every release."""

from __future__ import annotations

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("inspect", help="verify a saved model file; print its guarantee, budget and every release")
    p.add_argument("model", metavar="MODEL.json", help="model JSON written by `dpglass fit --out` or save()")
    p.set_defaults(handler=run)


def run(args) -> int:
    from dpglass.models._files import format_model_report, read_model_file

    data, cls, names = read_model_file(args.model)  # raises ModelFileError unless verified
    print(f"model file: {args.model}")
    print(format_model_report(data, cls, names))
    print("verified: yes (the file is consistent with its parameters and within its budget; a file cannot show "
          "that its noise was drawn as it states: that rests on who fitted it)")
    print("\nthe model, as released:")
    print(cls.from_dict(data))
    return 0
