"""``dpglass card MODEL.json --out card.html``: the model card, one self-contained HTML page for a reviewer.

The file is verified first (an edited file is refused, like ``dpglass inspect``); the page holds nothing that is
not in it (:mod:`dpglass.models.readout.card`).
"""

from __future__ import annotations

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("card", help="verify a saved model file and write its model card (one HTML page)")
    p.add_argument("model", metavar="MODEL.json", help="model JSON written by `dpglass fit --out` or save()")
    p.add_argument("--out", required=True, metavar="CARD.html", help="where to write the card (self-contained HTML)")
    p.set_defaults(handler=run)


def run(args) -> int:
    from dpglass.models.readout.card import card_of_file

    html = card_of_file(args.model)  # raises ModelFileError unless the file verifies
    try:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(html)
    except OSError as exc:
        from dpglass.exceptions import InvalidParameterError

        raise InvalidParameterError(f"--out {args.out}: could not write the card ({exc.strerror}).") from None
    print(f"model card written to {args.out} (verified: {args.model})")
    return 0
