"""Would a DP-EBM-like DP-GBDT be a better default? (issue 12; validation parts only, no test split)

On COMPAS at epsilon = 0.4 and 1, InterpretML's DP-EBM is 0.003-0.005 ahead
of ``dp-gbdt`` (README, peers table over 20 splits).  DP-EBM is a cyclic
additive model: every round updates each column from one Gaussian release
and pays nothing to choose a column.  This script measures the nearest
``dp-gbdt`` settings on the validation parts of every small shipped dataset,
COMPAS and Adult (numeric, public bounds): ``split_indices(...,
holdout="validation")`` fits on three quarters of a 70% training part
(Adult: of its canonical training split) and scores on the last quarter.

Run::

    DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/gbdt_variants.py
"""

from __future__ import annotations

import time
import warnings

from gbdt_lambda import parse_args, validation_rows  # noqa: E402  (benchmarks/ is on sys.path when run as a script)

# the datasets and epsilons of benchmarks/gbdt_lambda.py
VARIANTS = {
    "default": {},
    "100 trees": {"n_estimators": 100},
    "Gaussian leaves, 100 trees": {"n_estimators": 100, "leaf_noise": "gaussian"},
    "random splits (free)": {"split": "random"},
    "random splits, Gaussian leaves, 100 trees": {"split": "random", "n_estimators": 100, "leaf_noise": "gaussian"},
}


def main(argv=None) -> None:
    args = parse_args(__doc__.splitlines()[0], argv)
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    print("| dataset | n_fit | ε | " + " | ".join(VARIANTS) + " |")
    print("|---|---|---|" + "---|" * len(VARIANTS))
    for row in validation_rows(args.datasets, args.seeds, lambda eps, bounds, d: list(VARIANTS.values())):
        print(row, flush=True)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
