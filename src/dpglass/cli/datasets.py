"""``dpglass datasets``: the built-in datasets, their shapes and where each is found."""

from __future__ import annotations

__all__ = ["add_parser", "run"]


def add_parser(subparsers) -> None:
    p = subparsers.add_parser("datasets", help="list the built-in datasets and where each is found")
    p.add_argument("--data-home", help="data folder (default: $DPGLASS_DATA, else ~/.cache/dpglass)")
    p.set_defaults(handler=run)


def run(args) -> int:
    from dpglass.datasets import list_datasets

    infos = list_datasets(data_home=args.data_home)
    width = max(len(i.name) for i in infos)
    for info in infos:
        print(f"{info.name.ljust(width)}  {info.n_samples:>6} x {info.n_features:<4} {info.status}")
        print(f"{''.ljust(width)}  {info.description}")
    return 0
