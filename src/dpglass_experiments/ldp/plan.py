"""Paper 004 (Berrett & Butucea, classification under LDP): the plans of ``dpglass reproduce ldp``.

The slides show one figure of results (accuracy vs alpha on scikit-learn's
synthetic data) without numbers, so there is no table of published values to
sit beside; the report compares with the theory instead (Theorem 3's exponent).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Plan", "FULL", "QUICK", "TITLE", "CITATION"]

TITLE = "Paper 004 reproduced: classification under local differential privacy (Berrett & Butucea)"
CITATION = ("Slides (A. Baumann, 2022) on Berrett & Butucea, *Classification under local differential privacy*, "
            "arXiv:1912.04629.")


@dataclass(frozen=True)
class Plan:
    calib_constants: dict
    calib_n: tuple
    calib_seeds: int
    alphas: tuple
    n_alpha: int
    n_test: int
    seeds: int
    rate_n: tuple
    rate_alphas: tuple
    adult_alphas: tuple
    target_n: tuple  # make_moons at alpha = 1: reports for the target check


FULL = Plan(
    calib_constants={"laplace": (1.0, 1.4, 2.0, 2.8, 4.0), "oue": (0.35, 0.5, 0.7, 1.0, 1.4, 2.0)},
    calib_n=(10_000, 100_000), calib_seeds=3,
    alphas=(0.5, 1.0, 2.0, 4.0, 8.0), n_alpha=200_000, n_test=20_000, seeds=3,
    rate_n=(3_000, 10_000, 30_000, 100_000, 300_000, 1_000_000), rate_alphas=(1.0, 4.0),
    adult_alphas=(0.5, 1.0, 2.0, 4.0, 8.0),
    target_n=(5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 400_000),
)

QUICK = Plan(
    calib_constants={"laplace": (2.8,), "oue": (1.4,)}, calib_n=(2_000,), calib_seeds=1,
    alphas=(1.0, 4.0), n_alpha=4_000, n_test=2_000, seeds=1,
    rate_n=(1_000, 4_000), rate_alphas=(1.0,), adult_alphas=(1.0,), target_n=(2_000, 8_000),
)
