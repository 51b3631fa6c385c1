"""``dpglass reproduce <experiment> [--quick] [--out DIR]``: the paper reproductions from the command line.

Each reproduction is one :class:`Command` of :data:`COMMANDS` (its name, its
module, its help texts); the module provides ``reproduce(out, *, quick,
n_jobs, progress, fresh, raw_dir, data_home, base_seed)``.  Modules are
imported only when their command runs, so ``dpglass --help`` stays fast and
every other ``dpglass`` command imports none of the extra's packages.

The reproductions need the ``experiments`` extra (:data:`EXTRA_PACKAGES`);
without it ``dpglass reproduce ...`` says, in one line, how to install it,
before anything runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

__all__ = ["COMMANDS", "Command", "EXTRA_PACKAGES", "INSTALL", "add_parser", "missing_packages"]

#: The packages of the ``experiments`` extra (pyproject.toml) that the reproductions import.
EXTRA_PACKAGES = ("matplotlib", "tqdm", "joblib")
INSTALL = 'pip install "dpglass[experiments]"'


@dataclass(frozen=True)
class Command:
    """One ``dpglass reproduce`` sub-command."""

    name: str
    module: str  # provides reproduce(out, *, quick, ...)
    help: str
    description: str
    quick_help: str
    out: str  # default output folder
    raw_help: str = "folder for the per-fit tables (default: OUT/raw)"
    full_raw: str | None = None  # default per-fit folder of the full plan (None: OUT/raw)


COMMANDS = (
    Command(
        name="rule-lists",
        module="dpglass_experiments.rule_lists",
        help="paper 001: DP greedy rule lists (Figs. 1-4, Tables I-III, Section V-D, Appendix C)",
        description=(
            "Run the experiments of paper 001 (Section V, Appendix C) and write figures, tables and report.md. "
            "The full plan is the paper's grid (200 epsilons x 100 seeds x 3 datasets); --quick is a smoke test "
            "(5 epsilons x 5 seeds). Interrupted runs resume where they stopped."
        ),
        quick_help="small grid (5 epsilons x 5 seeds), under two minutes",
        out="results/rule-lists",
    ),
    Command(
        name="boosting",
        module="dpglass_experiments.boosting",
        help="paper 002: DP smooth boosting (Table 2 curves, Tables 3-10, Figures 1-3)",
        description=(
            "Run the experiments of paper 002 (Section 5, Appendices A-C): accuracy vs epsilon of LazyBB with DP "
            "1-Rules and DP trees, DP logistic regression and two non-private references on Adult, Cod-RNA and "
            "Mushroom, with the paper's and with private hyper-parameter tuning; sparsity, chosen settings, the "
            "advantage per round, pure vs approximate DP. --quick is a smoke test (3 epsilons x 2 repetitions, "
            "tiny grids). Interrupted runs resume where they stopped."
        ),
        quick_help="small grids (3 epsilons x 2 repetitions), about a minute",
        out="results/boosting",
        raw_help="folder for the per-fit tables (default: results/boosting-raw for the full plan, OUT/raw with --quick)",
        full_raw=os.path.join("results", "boosting-raw"),
    ),
    Command(
        name="accounting",
        module="dpglass_experiments.accounting",
        help="basic vs tight (PLD/RDP) accounting: accuracy of each model at the same (epsilon, delta)",
        description=(
            "Fit the rule lists and LazyBB (stumps, trees) on COMPAS and Adult at delta = 1e-6 with the basic and "
            "the tight accountant, and write accuracy.csv, figures and report.md. --quick is a smoke test."
        ),
        quick_help="2 epsilons x 2 seeds, small models, under a minute",
        out="results/accounting",
    ),
    Command(
        name="ldp",
        module="dpglass_experiments.ldp",
        help="paper 004: local-DP histogram classification (accuracy vs alpha, excess risk vs n, Adult)",
        description=(
            "Run the experiments of paper 004 (Berrett & Butucea, slides): accuracy vs alpha on make_moons and "
            "make_classification, the make_moons target at alpha = 1, excess risk vs n against Theorem 3, the "
            "auto bandwidth's calibration, Adult against central DP. --quick is a smoke test (tiny n)."
        ),
        quick_help="tiny sample sizes, about twenty seconds",
        out="results/ldp",
    ),
    Command(
        name="gbdt",
        module="dpglass_experiments.gbdt",
        help="issue 13: DP gradient boosted trees vs DPBoost, LazyBB, DP-LR (Adult numeric, cod-rna)",
        description=(
            "Test accuracy vs epsilon of DPGradientBoostingClassifier (default and DPBoost with random and "
            "gradient subsets), SmoothBoost and DP-LR, with non-private references, on Adult (canonical split, "
            "numeric columns with public bounds, 10 noise seeds) and cod-rna (10 repetitions of 5-fold CV); report.md "
            "beside the published numbers. --quick is a smoke test (2 epsilons, 2 seeds, 4000 Adult records, two "
            "cod-rna folds). Interrupted runs resume where they stopped."
        ),
        quick_help="2 epsilons x 2 seeds on a subsample, about a minute",
        out="results/gbdt",
        raw_help="folder for the per-fit table (default: results/gbdt-raw for the full plan, OUT/raw with --quick)",
        full_raw=os.path.join("results", "gbdt-raw"),
    ),
    Command(
        name="multiclass",
        module="dpglass_experiments.multiclass",
        help="issue 31: every dpglass model that learns K classes on wine, digits and a K = 5 synthetic task",
        description=(
            "Test accuracy vs epsilon (0.1, 0.4, 1, 4) of every registered model that learns K classes (read from "
            "the registry at run time), a private naive Bayes floor and non-private references (multinomial "
            "logistic regression, a depth-4 tree, GreedyRL, HistGradientBoosting) on scikit-learn's wine and "
            "digits and a 10^5-record make_classification with 5 classes, 10 stratified 70/30 splits each; "
            "features made 0/1 by public cut points of documented ranges. --quick is a smoke test (2 epsilons, "
            "2 splits, small models, 3000 synthetic records). Interrupted runs resume where they stopped."
        ),
        quick_help="2 epsilons x 2 splits, small models, about a minute",
        out="results/multiclass",
    ),
)


class _DefaultsFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Show a default once: not for None, not when the help text already states it."""

    def _get_help_string(self, action):
        if action.default is None or "default" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def add_parser(subparsers) -> None:
    """Register ``reproduce`` (one sub-command per entry of :data:`COMMANDS`) on the ``dpglass`` parser."""
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a paper's experiments (figures, tables, report)",
        description="Reproduce a paper's experiments: figures (PNG, SVG, CSV), tables and a report.md. "
        f"Needs the experiments extra: {INSTALL}.",
    )
    sub = p.add_subparsers(dest="experiment", metavar="EXPERIMENT")
    sub.required = True
    for command in COMMANDS:
        r = sub.add_parser(command.name, help=command.help, description=command.description,
                           formatter_class=_DefaultsFormatter)
        r.add_argument("--quick", action="store_true", help=command.quick_help)
        r.add_argument("--out", default=command.out, help="output folder (figures, small CSVs, report.md)")
        r.add_argument("--raw-dir", default=None, help=command.raw_help)
        _add_run_options(r)
        r.set_defaults(handler=_handler(command))


def _add_run_options(parser) -> None:
    """Options every reproduction takes: workers, seed, data home, resume, progress."""
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--seed", type=int, default=0, help="root seed of every split and noise stream")
    parser.add_argument("--data-home", default=None, help="data folder (default: $DPGLASS_DATA, else ~/.cache/dpglass)")
    parser.add_argument("--fresh", action="store_true", help="recompute everything instead of resuming")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def missing_packages() -> list:
    """The packages of :data:`EXTRA_PACKAGES` that cannot be imported (none when the extra is installed)."""
    import importlib.util

    missing = []
    for name in EXTRA_PACKAGES:
        if name in sys.modules:  # imported already, or blocked (None)
            if sys.modules[name] is None:
                missing.append(name)
        elif importlib.util.find_spec(name) is None:
            missing.append(name)
    return missing


def _handler(command: Command):
    def run(args) -> int:
        """Check the extra and the shared options, and call the reproduction's ``reproduce``."""
        import importlib

        from dpglass.exceptions import InvalidParameterError

        missing = missing_packages()
        if missing:  # before any fit: the figures would fail only after the sweeps
            print(f"dpglass reproduce: error: the reproductions need {', '.join(missing)} (not installed): {INSTALL}",
                  file=sys.stderr)
            return 2
        if args.jobs < 1:
            raise InvalidParameterError(f"--jobs must be at least 1; got {args.jobs}.")
        raw_dir = args.raw_dir
        if raw_dir is None and command.full_raw is not None and not args.quick:
            raw_dir = command.full_raw
        elif raw_dir is None:
            raw_dir = os.path.join(args.out, "raw")
        importlib.import_module(command.module).reproduce(
            args.out, quick=args.quick, n_jobs=args.jobs, progress=not args.no_progress, fresh=args.fresh,
            raw_dir=raw_dir, data_home=args.data_home, base_seed=args.seed,
        )
        return 0

    run.__name__ = f"reproduce_{command.name.replace('-', '_')}"
    return run
