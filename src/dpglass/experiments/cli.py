"""``dpglass reproduce rule-lists [--quick] [--out DIR]``: the paper-001 reproduction from the command line."""

from __future__ import annotations

import argparse

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    """Register ``reproduce`` (with the sub-command ``rule-lists``) on the ``dpglass`` parser."""
    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a paper's experiments (figures, tables, report)",
        description="Reproduce a paper's experiments: figures (PNG, SVG, CSV), tables and a report.md.",
    )
    sub = p.add_subparsers(dest="experiment", metavar="EXPERIMENT")
    sub.required = True
    r = sub.add_parser(
        "rule-lists",
        help="paper 001: DP greedy rule lists (Figs. 1-4, Tables I-III, Section V-D, Appendix C)",
        description=(
            "Run the experiments of paper 001 (Section V, Appendix C) and write figures, tables and report.md. "
            "The full plan is the paper's grid (200 epsilons x 100 seeds x 3 datasets); --quick is a smoke test "
            "(5 epsilons x 5 seeds). Interrupted runs resume where they stopped."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    r.add_argument("--quick", action="store_true", help="small grid (5 epsilons x 5 seeds), under two minutes")
    r.add_argument("--out", default="results/rule-lists", help="output folder")
    r.add_argument("--raw-dir", default=None, help="folder for the per-fit tables (default: OUT/raw)")
    r.add_argument("--jobs", type=int, default=2, help="worker processes")
    r.add_argument("--seed", type=int, default=0, help="root seed of every split and noise stream")
    r.add_argument("--data-home", default=None, help="data folder (default: $DPGLASS_DATA, else ~/.cache/dpglass)")
    r.add_argument("--fresh", action="store_true", help="recompute everything instead of resuming")
    r.add_argument("--no-progress", action="store_true", help="no progress bars")
    r.set_defaults(handler=_cmd_rule_lists)


def _cmd_rule_lists(args) -> int:
    from dpglass.exceptions import InvalidParameterError
    from dpglass.experiments.rule_lists import reproduce

    if args.jobs < 1:
        raise InvalidParameterError(f"--jobs must be at least 1; got {args.jobs}.")
    reproduce(
        args.out, quick=args.quick, n_jobs=args.jobs, progress=not args.no_progress, fresh=args.fresh,
        raw_dir=args.raw_dir, data_home=args.data_home, base_seed=args.seed,
    )
    return 0
