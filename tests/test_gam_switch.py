"""benchmarks/gam_switch.py (the measurement of dp-gam's count/gradient switch): forcing a branch changes only the
branch of an "auto" fit and restores the rule afterwards; the signals it records are the rule's inputs."""

import importlib.util
import sys
from pathlib import Path

import numpy as np

from dpglass.models import DPGAMClassifier
from dpglass.models.gam import sizes

SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "gam_switch.py"


def _load():
    spec = importlib.util.spec_from_file_location("benchmarks_gam_switch", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_forcing_a_branch_changes_only_the_branch_and_restores_the_rule():
    g = _load()
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.random(300) * 10, rng.integers(0, 3, 300)])
    y = (X[:, 0] > 5).astype(int)

    def fit():
        return DPGAMClassifier(epsilon=1.0, bounds=[(0, 10), None], categories=[None, 3], classes=[0, 1],
                               random_state=0).fit(X, y)

    rules = (sizes.rule, sizes.rule_v2)
    seen = {}
    for branch in ("counts2", "counts4", "gradients", "auto"):
        with g.forcing(branch):
            m = fit()
        seen[branch] = g.signals(m)["chosen"]
        assert (sizes.rule, sizes.rule_v2) == rules
        assert m.privacy_ledger_.total()[0] <= 1.0 and m.sizes_rule_ == sizes.RULE_VERSION
    assert seen["counts2"] == "counts2" and seen["counts4"] == "counts4" and seen["gradients"] == "gradients"
    sig = g.signals(fit())
    n_hat = sum(max(c, 0) for c in fit().class_counts_)
    assert sig["B"] == 16 + 3 and sig["numeric_bins"] == 16 and sig["n_hat"] == n_hat
    assert sig["t"] == n_hat * 1.0 / (19 * 2) and sig["s"] == n_hat * 1.0 / (2 * 2)
