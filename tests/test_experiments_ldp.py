"""``dpglass reproduce ldp --quick`` (paper 004) runs end to end and writes its report."""

import json

import pandas as pd

from conftest import needs_shared_data
from dpglass.cli import main
from dpglass_experiments.ldp.analyses import MINIMAX_EXPONENT, excess_risk, fitted_slopes, sim_sample
from dpglass.local import HistogramClassifier


@needs_shared_data
def test_reproduce_ldp_quick(tmp_path):
    out = tmp_path / "ldp"
    assert main(["reproduce", "ldp", "--quick", "--out", str(out), "--no-progress"]) == 0
    for stem in ("calibration", "accuracy_vs_alpha", "target_moons", "excess_risk_vs_n"):
        for ext in ("png", "svg", "csv"):
            assert (out / f"{stem}.{ext}").exists(), stem
    report = (out / "report.md").read_text()
    assert "Theorem 3" in report and "Adult" in report
    adult = pd.read_csv(out / "adult.csv")
    assert {"LDP laplace", "LDP oue", "central DP-LR"} <= set(adult["method"])
    assert json.loads((out / "timings.json").read_text())["plan"] == "quick"


def test_minimax_exponent_and_slopes():
    assert abs(MINIMAX_EXPONENT - 1 / 3) < 1e-12  # beta = gamma = 1, d = 2
    frame = pd.DataFrame({"method": "oue", "alpha": 1.0, "n": [10, 100, 1000], "excess_risk": [1.0, 0.1, 0.01]})
    assert abs(fitted_slopes(frame)["fitted_slope"].iloc[0] + 1.0) < 1e-9


def test_excess_risk_of_the_simulated_law_shrinks_without_noise():
    import numpy as np

    X, y = sim_sample(50_000, np.random.default_rng(0))
    big = excess_risk(HistogramClassifier(bandwidth=0.4, bounds=([0, 0], [1, 1])).fit(X, y))
    small = excess_risk(HistogramClassifier(bandwidth=0.05, bounds=([0, 0], [1, 1])).fit(X, y))
    assert 0 <= small < big
