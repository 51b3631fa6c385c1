"""``dpglass reproduce rule-lists|boosting [--quick] [--out DIR]``: the paper reproductions from the command line."""

from __future__ import annotations

import argparse

__all__ = ["add_parser"]


def add_parser(subparsers) -> None:
    """Register ``reproduce`` (sub-commands ``rule-lists`` and ``boosting``) on the ``dpglass`` parser."""
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
    _add_run_options(r)
    r.set_defaults(handler=_cmd_rule_lists)

    b = sub.add_parser(
        "boosting",
        help="paper 002: DP smooth boosting (Table 2 curves, Tables 3-10, Figures 1-3)",
        description=(
            "Run the experiments of paper 002 (Section 5, Appendices A-C): accuracy vs epsilon of LazyBB with DP "
            "1-Rules and DP trees, DP logistic regression and two non-private references on Adult, Cod-RNA and "
            "Mushroom, with the paper's and with private hyper-parameter tuning; sparsity, chosen settings, the "
            "advantage per round, pure vs approximate DP. --quick is a smoke test (3 epsilons x 2 repetitions, "
            "tiny grids). Interrupted runs resume where they stopped."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    b.add_argument("--quick", action="store_true", help="small grids (3 epsilons x 2 repetitions), about a minute")
    b.add_argument("--out", default="results/boosting", help="output folder (figures, small CSVs, report.md)")
    b.add_argument("--raw-dir", default=None,
                   help="folder for the per-fit tables (default: results/boosting-raw for the full plan, "
                        "OUT/raw with --quick)")
    _add_run_options(b)
    b.set_defaults(handler=_cmd_boosting)


def _add_run_options(parser) -> None:
    """Options every reproduction takes: workers, seed, data home, resume, progress."""
    parser.add_argument("--jobs", type=int, default=2, help="worker processes")
    parser.add_argument("--seed", type=int, default=0, help="root seed of every split and noise stream")
    parser.add_argument("--data-home", default=None, help="data folder (default: $DPGLASS_DATA, else ~/.cache/dpglass)")
    parser.add_argument("--fresh", action="store_true", help="recompute everything instead of resuming")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def _run(reproduce, args, raw_dir) -> int:
    """Check the shared options and call a reproduction's ``reproduce``."""
    from dpglass.exceptions import InvalidParameterError

    if args.jobs < 1:
        raise InvalidParameterError(f"--jobs must be at least 1; got {args.jobs}.")
    reproduce(
        args.out, quick=args.quick, n_jobs=args.jobs, progress=not args.no_progress, fresh=args.fresh,
        raw_dir=raw_dir, data_home=args.data_home, base_seed=args.seed,
    )
    return 0


def _cmd_rule_lists(args) -> int:
    from dpglass.experiments.rule_lists import reproduce

    return _run(reproduce, args, args.raw_dir)


def _cmd_boosting(args) -> int:
    import os

    from dpglass.experiments.boosting import reproduce

    raw_dir = args.raw_dir
    if raw_dir is None:
        raw_dir = os.path.join(args.out, "raw") if args.quick else os.path.join("results", "boosting-raw")
    return _run(reproduce, args, raw_dir)
