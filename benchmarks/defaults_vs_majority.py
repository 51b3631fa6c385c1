"""Registry defaults against the majority class on every dataset of ``dpglass datasets`` (one run; no assertions).

Issues 12 and 28 ask for data-independent defaults never worse than the
constant predictor at epsilon >= 1 on the shipped datasets.  This prints, per
dataset, model and epsilon, the mean test accuracy +- its standard deviation
over seeded 70/30 splits (``split_indices``) beside the mean accuracy of the
majority class of each training part on its test part, and their paired difference
(mean ± its standard error over the splits).  Every model of the
registry at ``make(epsilon=...)`` (its default delta), except the two that
also learn from a public part (subsample-aggregate, DP-Bag: without one they
label uniform random rows); the CLI's default for ``--dataset`` is
dp-rule-list, in the table.  ``--auto`` adds ``DPPipeline(model="auto")`` (what
``dpglass fit --schema`` fits) on the raw tables of
``benchmarks/_peers_tables.py`` with their public schemas (Adult: its
``train`` part), on the same kind of splits.

``--holdout validation`` scores on the validation part of each training part
(``split_indices(..., holdout="validation")``: the first quarter of the
training rows; the test part is not read): the part to choose defaults on.

Run (everything with ``--auto``: about 6 minutes on 2 shared cores; a subset with the options)::

    DPGLASS_DATA=../shared/data python benchmarks/defaults_vs_majority.py
    DPGLASS_DATA=../shared/data python benchmarks/defaults_vs_majority.py --datasets german \
        --models dp-gam --epsilons 1 --seeds 10 --holdout validation

Tables of more than 20,000 records get ``--large-seeds`` splits (3).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from dpglass.datasets import list_datasets, load_dataset
from dpglass.models import DPPipeline
from dpglass.registry import REGISTRY, get_spec
from dpglass_experiments.seeding import split_indices

#: Registered models that also learn from a public part (not fitted here; see the module docstring).
PUBLIC_PART = ("subsample-aggregate", "dp-bag")
EPSILONS = (1.0, 5.0)
LARGE = 20_000


def models() -> list[str]:
    """Every registered model but the public-part ones, in the registry's order."""
    return [name for name in REGISTRY if name not in PUBLIC_PART]


def majority(y_train, y_test) -> float:
    """The test accuracy of the training part's most frequent label."""
    values, counts = np.unique(y_train, return_counts=True)
    return float(np.mean(y_test == values[np.argmax(counts)]))


def run_dataset(name: str, names, epsilons, seeds: int, holdout: str) -> list[tuple]:
    """One row per (model, epsilon): ``(dataset, model, epsilon, accuracies, majorities, seconds)``, one accuracy
    and one majority-class accuracy per split (a non-private model: its one fit, under each epsilon)."""
    X, y = (np.asarray(a) for a in load_dataset(name))
    splits = [split_indices(len(y), seed, holdout=holdout) for seed in range(seeds)]
    maj = [majority(y[tr], y[te]) for tr, te in splits]
    rows = []
    for model in names:
        for eps in epsilons:
            accs, start = [], time.perf_counter()
            for seed, (tr, te) in enumerate(splits):
                spec = get_spec(model)
                params = {"epsilon": eps, "random_state": seed} if spec.private else {}
                fitted = spec.make(**params).fit(X[tr], y[tr])
                accs.append(fitted.score(X[te], y[te]))
            rows.append((name, model, eps, accs, maj, time.perf_counter() - start))
            print_row(rows[-1])
    return rows


def run_auto(epsilons, seeds: int, large_seeds: int, holdout: str) -> list[tuple]:
    """``DPPipeline(model="auto")`` (what ``dpglass fit --schema`` fits) on the raw tables of ``benchmarks/
    _peers_tables.py`` (public schemas declared there; Adult: its ``train`` part), the same kind of splits."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        from _peers_tables import (  # a sibling script, not a package
            RAW_TABLES,
            raw_table,
        )
    except ImportError as exc:
        print(f"| (raw tables) | auto: not measured ({exc}) | | | | | |", flush=True)
        return []
    rows = []
    for name in RAW_TABLES:
        frame, y, schema = raw_table(name, "train" if name == "adult" else None)
        splits = [split_indices(len(y), seed, holdout=holdout)
                  for seed in range(large_seeds if len(y) > LARGE else seeds)]
        maj = [majority(y[tr], y[te]) for tr, te in splits]
        for eps in epsilons:
            accs, chosen, start = [], set(), time.perf_counter()
            for seed, (tr, te) in enumerate(splits):
                fitted = DPPipeline(schema=schema, model="auto", epsilon=eps, random_state=seed,
                                    classes=sorted(set(y.tolist()))).fit(frame.iloc[tr], y[tr])
                accs.append(fitted.score(frame.iloc[te], y[te]))
                chosen.add(fitted.model_choice_)
            rows.append((f"{name} (raw, schema)", f"auto → {' / '.join(sorted(chosen))}", eps, accs, maj,
                         time.perf_counter() - start))
            print_row(rows[-1])
    return rows


def print_row(row) -> None:
    """The row in markdown: accuracy mean +- sd over the splits, the majority class's mean, and the mean paired
    difference +- its standard error (sd of the per-split differences / sqrt(splits)); **below** when the mean
    difference is negative."""
    name, model, eps, accs, majs, seconds = row
    diff = np.asarray(accs) - np.asarray(majs)
    se = float(np.std(diff, ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else float("nan")
    flag = " **below**" if diff.mean() < 0 else ""
    print(f"| {name} | {model} | {eps:g} | {np.mean(accs):.3f} ± {np.std(accs):.3f} | {np.mean(majs):.3f} | "
          f"{diff.mean():+.4f} ± {se:.4f}{flag} | {seconds:.0f} |", flush=True)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=None, help="default: every dataset that loads")
    parser.add_argument("--models", nargs="*", default=None, help="default: every registered model (but two)")
    parser.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--large-seeds", type=int, default=3)
    parser.add_argument("--holdout", choices=("test", "validation"), default="test")
    parser.add_argument("--auto", action="store_true", help="also DPPipeline(model='auto') on the raw tables")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    names = args.models or models()
    print(f"holdout: {args.holdout} parts\n\n| dataset | model | ε | accuracy (mean ± sd) | majority class | "
          "difference ± se | s |\n|---|---|---|---|---|---|---|", flush=True)
    infos = {info.name: info for info in list_datasets(download=False)}
    for name in args.datasets if args.datasets is not None else list(infos):
        if infos[name].status.startswith("missing"):  # never downloads: present under DPGLASS_DATA or bundled
            print(f"| {name} | ({infos[name].status}) | | | | | |", flush=True)
            continue
        seeds = args.large_seeds if infos[name].n_samples > LARGE else args.seeds
        run_dataset(name, names, args.epsilons, seeds, args.holdout)
    if args.auto:
        run_auto(args.epsilons, args.seeds, args.large_seeds, args.holdout)


if __name__ == "__main__":
    main()
