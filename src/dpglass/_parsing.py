"""Values typed on the command line, read the same way by every ``dpglass`` command.

A base module (it imports nothing of dpglass): the CLI package
(:mod:`dpglass.cli`) and the ``dpglass ldp`` command (:mod:`dpglass.local.cli`)
both read ``--classes`` labels and ``--param`` values with it, so that a label
typed as ``1`` means the number 1 in both.
"""

from __future__ import annotations

import json

__all__ = ["parse_value"]


def parse_value(text: str):
    """``--param k=v`` values and ``--classes`` labels: JSON when it parses (numbers, true, null), else the string.

    >>> parse_value("1"), parse_value("0.5"), parse_value("true"), parse_value("null"), parse_value(">50K")
    (1, 0.5, True, None, '>50K')
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
