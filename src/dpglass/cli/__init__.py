"""The ``dpglass`` command line.

``dpglass fit --dataset breast-cancer --epsilon 1`` trains a DP rule list on
70% of the embedded breast-cancer data, prints it, its accuracy on the held-out
30% and its privacy ledger.  ``dpglass --help`` lists the subcommands.

One module per command (``datasets``, ``models``, ``fit``, ``predict``,
``schema``, ``inspect``), each with ``add_parser`` and its handler;
:mod:`~dpglass.cli.app` builds the parser and runs a command
(:func:`main`, the console script); :mod:`~dpglass.cli.tables` reads a
practitioner's CSV; :mod:`~dpglass.cli.held_out` is the DP estimate of the
held-out accuracy that ``dpglass fit`` prints.
"""

from __future__ import annotations

from dpglass.cli.app import build_parser, main
from dpglass.cli.held_out import accuracy_estimate

__all__ = ["main", "build_parser", "accuracy_estimate"]
