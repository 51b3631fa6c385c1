"""The ``dpglass`` parser and entry point: one subcommand per module, errors as one line.

Each command module of this package (:mod:`~dpglass.cli.datasets`,
:mod:`~dpglass.cli.models`, :mod:`~dpglass.cli.fit`, :mod:`~dpglass.cli.predict`,
:mod:`~dpglass.cli.schema`, :mod:`~dpglass.cli.inspect`) has ``add_parser(subparsers)``,
which registers the command with its ``handler``; so do the commands other packages
contribute: ``dpglass audit`` (:mod:`dpglass.audit.cli`), ``dpglass reproduce``
(:mod:`dpglass_experiments.cli`, when the experiments are installed) and ``dpglass ldp``
(:mod:`dpglass.local.cli`).  :func:`main` runs the handler and turns dpglass's typed
errors into one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from dpglass.cli import datasets, fit, inspect, models, predict, schema
from dpglass.cli import card, export
from dpglass.exceptions import (
    BudgetExceededError,
    DataValidationError,
    DatasetNotFoundError,
    InvalidParameterError,
    ModelFileError,
)

__all__ = ["main", "build_parser"]

#: The library's own commands, in the order ``dpglass --help`` lists them.
COMMANDS = (datasets, models, fit, predict, schema, inspect, export, card)


def build_parser() -> argparse.ArgumentParser:
    from dpglass import __version__

    parser = argparse.ArgumentParser(
        prog="dpglass",
        description="Differentially private glass-box classifiers.",
    )
    parser.add_argument("--version", action="version", version=f"dpglass {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.add_parser(sub)
    for extra in _extra_commands():
        extra(sub)
    return parser


def _extra_commands():
    """Subcommands contributed by other packages: audit, reproduce (when the experiments are installed), ldp.

    The experiments are found by name: no module of dpglass imports them (they are an optional extra).
    """
    import importlib

    from dpglass.audit.cli import add_parser as audit
    from dpglass.local.cli import add_parser as ldp

    try:
        reproduce = importlib.import_module("dpglass_experiments.cli").add_parser
    except ImportError:
        return [audit, ldp]
    return [audit, reproduce, ldp]


def _format_warning(message, category, filename, lineno, line=None) -> str:
    """Warnings as the command's own lines (not the Python source line that raised them)."""
    return f"dpglass: {category.__name__}: {message}\n"


def main(argv=None) -> int:
    """Entry point of the ``dpglass`` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    shown = warnings.formatwarning
    warnings.formatwarning = _format_warning  # for this command only (main may run inside a Python session)
    try:
        return args.handler(args)
    except (
        InvalidParameterError,
        DataValidationError,
        DatasetNotFoundError,
        BudgetExceededError,
        ModelFileError,
    ) as exc:
        print(f"dpglass {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader stopped early (`dpglass predict ... | head`): not an error of ours
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python flushes stdout at exit: let that flush go nowhere
        return 1
    finally:
        warnings.formatwarning = shown
