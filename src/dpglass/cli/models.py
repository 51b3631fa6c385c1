"""``dpglass models``: the registered models, their guarantees, how many classes each learns, their parameters."""

from __future__ import annotations

import json

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("models", help="list the registered models and their guarantees")
    p.set_defaults(handler=run)


def run(args) -> int:
    import textwrap

    from dpglass.registry import list_estimators

    for spec in list_estimators():
        print(f"{spec.name:24s} {spec.guarantee}")
        print(f"{'':24s} {spec.description}")
        print(f"{'':24s} learns: {_classes(spec.cls._max_classes)}")
        defaults = spec.make().get_params(deep=False)  # the registry name's own settings included
        shown = ", ".join(f"{k}={_shown(v)}" for k, v in sorted(defaults.items()))
        print(textwrap.fill(f"parameters (--param NAME=VALUE): {shown}", width=120, initial_indent=" " * 25,
                            subsequent_indent=" " * 27))
    return 0


def _classes(most: int) -> str:
    """How many classes a model learns, from its class's ``_max_classes``.

    >>> _classes(2), _classes(255)
    ('two classes', 'K classes (up to 255)')
    """
    return "two classes" if most <= 2 else f"K classes (up to {most})"


def _shown(value) -> str:
    """A parameter's default as it is typed after --param NAME= (JSON where it has a JSON form).

    >>> _shown(0.5), _shown(None), _shown("errors-pf"), _shown(object).startswith("<class")
    ('0.5', 'null', '"errors-pf"', True)
    """
    try:
        return json.dumps(value)
    except TypeError:
        return repr(value)
