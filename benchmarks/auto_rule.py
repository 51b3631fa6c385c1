"""The measurements behind ``DPPipeline(model="auto")``'s rule: its candidates on validation parts (no assertions).

For every dataset of ``dpglass datasets`` (never downloaded: present under
``DPGLASS_DATA`` or bundled) this fits each candidate model the way ``model="auto"``
fits it: in a :class:`~dpglass.models.DPPipeline` with the table's public schema, at
``(1 - AUTO_SHARE) * epsilon`` (what the selector's noisy count leaves), the registry
defaults, the label set declared.  The tables:

* the five with a raw table and a public schema in ``benchmarks/_peers_tables.py``
  (Adult, COMPAS, German, breast-cancer, Mushroom; Adult its ``train`` part), through the
  schema route: ``<name> (raw)``;
* every dataset as the 0/1 table :func:`dpglass.datasets.load_dataset` gives, each column
  declared ``binary`` in its schema: ``<name> (0/1)``.

Scores are on the **validation** part of each training part
(``split_indices(..., holdout="validation")``: the first quarter of the 70% training
rows; the test part is never read): 10 splits, 3 for tables above 20,000 records.  For
each split and epsilon the selector's count is drawn as ``auto_plan`` draws it (discrete
Laplace at ``AUTO_SHARE * epsilon`` on the number of training records) and every rule
version of ``models.pipeline.auto`` picks a candidate from it and the public facts; the
row gives each candidate's mean accuracy, the majority class's, and the accuracy of each
rule's pick (the same splits' candidate fits: what ``auto`` would fit, up to its own
random draws).

Run (about 10 minutes on 2 shared cores)::

    DPGLASS_DATA=../shared/data python benchmarks/auto_rule.py --out /tmp/auto_rule.json
    DPGLASS_DATA=../shared/data python benchmarks/auto_rule.py --load /tmp/auto_rule.json --compact 2

``--load`` reports an earlier run's results under the rules as they are now (no fitting); ``--compact 2`` adds
docs/privacy.md's table: one row per table, rule version 2's picks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from dpglass.datasets import list_datasets, load_dataset
from dpglass.models import DPPipeline
from dpglass.models.pipeline.auto import AUTO_SHARE, RULES, choose_model
from dpglass.privacy.mechanisms import DiscreteLaplaceMechanism
from dpglass.registry import get_spec
from dpglass.schema import Schema, binary
from dpglass_experiments.seeding import split_indices

CANDIDATES = ("dp-gbdt", "dp-gam", "dp-rule-list")
EPSILONS = (0.1, 0.4, 1.0, 5.0)
LARGE = 20_000


def tables(names=None):
    """``(label, frame, y, schema)`` of every table measured, raw tables first."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from _peers_tables import RAW_TABLES, raw_table  # a sibling script, not a package

    infos = {info.name: info for info in list_datasets(download=False)}
    wanted = [n for n in infos if names is None or n in names]
    for name in RAW_TABLES:
        if name in wanted and not infos[name].status.startswith("missing"):
            frame, y, schema = raw_table(name, "train" if name == "adult" else None)
            yield f"{name} (raw)", frame, np.asarray(y), schema
    for name in wanted:
        if infos[name].status.startswith("missing"):
            print(f"<!-- {name}: {infos[name].status} -->", flush=True)
            continue
        X, y = load_dataset(name)
        X.columns = [str(c) for c in X.columns]
        yield f"{name} (0/1)", X, np.asarray(y), Schema([binary(c) for c in X.columns], target="y")


def measure(label, frame, y, schema, epsilons, seeds, large_seeds, models) -> dict:
    """Per epsilon and split: each model's validation accuracy, the majority class's, and the released count."""
    classes = sorted(set(y.tolist()))
    splits = [split_indices(len(y), seed, holdout="validation")
              for seed in range(large_seeds if len(y) > LARGE else seeds)]
    out = {"table": label, "schema": schema.to_dict(), "classes": classes, "cells": []}
    for eps in epsilons:
        for seed, (tr, va) in enumerate(splits):
            values, counts = np.unique(y[tr], return_counts=True)
            cell = {"epsilon": eps, "seed": seed, "n_train": len(tr),
                    "majority": float(np.mean(y[va] == values[np.argmax(counts)])),
                    "records_noisy": DiscreteLaplaceMechanism(eps * AUTO_SHARE).randomise(
                        len(tr), np.random.default_rng([seed, 28])), "accuracy": {}, "seconds": {}}
            for name in models:
                start = time.perf_counter()
                fitted = DPPipeline(schema=schema, model=get_spec(name).make(), epsilon=eps * (1 - AUTO_SHARE),
                                    random_state=seed, classes=classes).fit(frame.iloc[tr], y[tr])
                cell["accuracy"][name] = float(fitted.score(frame.iloc[va], y[va]))
                cell["seconds"][name] = time.perf_counter() - start
            out["cells"].append(cell)
    return out


def report(results, models) -> None:
    """One markdown row per (table, epsilon): mean accuracies, the majority class, each rule's pick and its mean
    accuracy; then, per rule, the cells where it is below the best candidate or below the majority class."""
    rules = sorted(RULES)
    head = " | ".join(models)
    print(f"| table | ε | majority | {head} | " + " | ".join(f"rule {v}" for v in rules) + " |")
    print("|---|---|---|" + "---|" * (len(models) + len(rules)))
    regret = {v: [] for v in rules}
    for res in results:
        schema = Schema.from_dict(res["schema"])
        for eps in sorted({c["epsilon"] for c in res["cells"]}):
            cells = [c for c in res["cells"] if c["epsilon"] == eps]
            means = {m: np.mean([c["accuracy"][m] for c in cells]) for m in models}
            maj = np.mean([c["majority"] for c in cells])
            best = max(means.values())
            picks = []
            for v in rules:
                chosen = [choose_model(schema, eps, None, c["records_noisy"], rule=v) for c in cells]
                acc = np.mean([c["accuracy"][m] for c, m in zip(cells, chosen)])
                names = "/".join(sorted(set(chosen), key=chosen.index)).replace("dp-", "")
                flag = " **below the majority**" if acc < maj - 1e-9 else ""
                picks.append(f"{acc:.3f} ({names}){flag}")
                diff = [c["accuracy"][m] - c["majority"] for c, m in zip(cells, chosen)]
                se = float(np.std(diff, ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else float("nan")
                regret[v].append((float(best - acc), f"{np.mean(diff):+.4f} ± {se:.4f}", res["table"], eps))
            row = " | ".join(("**%.3f**" if means[m] == best else "%.3f") % means[m] for m in models)
            print(f"| {res['table']} | {eps:g} | {maj:.3f} | {row} | " + " | ".join(picks) + " |")
    for v in rules:
        r = regret[v]
        below = [f"{t} at {e:g} ({b})" for _, b, t, e in r if e >= 1 and b.startswith("-")]
        print(f"\nrule {v}: mean shortfall from the best candidate {np.mean([a for a, *_ in r]):.4f} over "
              f"{len(r)} cells; within 0.005 of the best in {sum(a < 0.005 for a, *_ in r)}; worst "
              f"{max(r)[0]:.3f} ({max(r)[2]} at {max(r)[3]:g}); below the majority class at ε >= 1 (mean paired "
              f"difference ± se): {', '.join(below) or 'none'}")


def compact(results, rule) -> None:
    """One markdown row per table, one cell per epsilon: the mean accuracy of rule ``rule``'s picks and what it
    picked, then, where it is 0.005 or more below the best candidate, the best's accuracy and name."""
    short = lambda m: m.removeprefix("dp-").replace("rule-list", "rules")  # noqa: E731
    epsilons = sorted({c["epsilon"] for r in results for c in r["cells"]})
    print("| table (majority class) | " + " | ".join(f"ε = {e:g}" for e in epsilons) + " |")
    print("|---|" + "---|" * len(epsilons))
    for res in results:
        schema, cells = Schema.from_dict(res["schema"]), res["cells"]
        row = []
        for eps in epsilons:
            part = [c for c in cells if c["epsilon"] == eps]
            chosen = [choose_model(schema, eps, None, c["records_noisy"], rule=rule) for c in part]
            acc = np.mean([c["accuracy"][m] for c, m in zip(part, chosen)])
            means = {m: np.mean([c["accuracy"][m] for c in part]) for m in part[0]["accuracy"]}
            best = max(means, key=means.get)
            names = "/".join(short(m) for m in sorted(set(chosen), key=chosen.index))
            row.append(f"{acc:.3f} {names}" + ("" if means[best] - acc < 0.005 else
                                                 f" (best {means[best]:.3f} {short(best)})"))
        maj = np.mean([c["majority"] for c in cells])
        print(f"| {res['table']} ({maj:.3f}) | " + " | ".join(row) + " |")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="*", default=None, help="default: every dataset that loads")
    parser.add_argument("--models", nargs="*", default=list(CANDIDATES))
    parser.add_argument("--epsilons", nargs="*", type=float, default=list(EPSILONS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--large-seeds", type=int, default=3)
    parser.add_argument("--out", help="write the per-split results to this JSON file")
    parser.add_argument("--load", help="report the results of an earlier --out under the rules as they are now")
    parser.add_argument("--compact", type=int, metavar="RULE", help="also one row per table: that rule's picks")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    if args.load:
        with open(args.load, encoding="utf-8") as fh:
            results = json.load(fh)
    else:
        results = []
        for label, frame, y, schema in tables(args.datasets):
            start = time.perf_counter()
            results.append(measure(label, frame, y, schema, args.epsilons, args.seeds, args.large_seeds,
                                   args.models))
            print(f"<!-- {label}: {time.perf_counter() - start:.0f} s -->", flush=True)
            if args.out:
                with open(args.out, "w", encoding="utf-8") as fh:
                    json.dump(results, fh)
    report(results, [m for m in args.models if all(m in c["accuracy"] for r in results for c in r["cells"])])
    if args.compact:
        print()
        compact(results, args.compact)


if __name__ == "__main__":
    main()
