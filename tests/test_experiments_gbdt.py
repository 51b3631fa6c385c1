"""`dpglass reproduce gbdt` on a tiny plan: report, per-cell seeds, resuming, data_home (needs the shared data)."""

import csv
import os

from conftest import needs_shared_data

from dpglass_experiments.gbdt import reproduce
from dpglass_experiments.gbdt.plan import METHODS, Plan

TINY = Plan((1.0,), adult_seeds=1, codrna_seeds=0, adult_subsample=1500)


def _rows(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@needs_shared_data
def test_reproduce_gbdt_tiny_plan(tmp_path, monkeypatch):
    data_home = os.environ["DPGLASS_DATA"]
    monkeypatch.setenv("DPGLASS_DATA", str(tmp_path / "nowhere"))  # only the data_home argument finds the data
    reproduce(tmp_path / "a", plan=TINY, progress=False, data_home=data_home, base_seed=7)
    rows = _rows(tmp_path / "a" / "results.csv")
    assert len(rows) == len(METHODS)
    assert all(float(r["epsilon_spent"]) <= 1.0 * (1 + 1e-9) for r in rows)
    assert (tmp_path / "a" / "timings.json").exists() and (tmp_path / "a" / "accuracy.png").exists()
    report = (tmp_path / "a" / "report.md").read_text()
    assert "Targets" in report and "S-BDT" in report and "HistGradientBoosting" in report
    # a rerun resumes from raw/fits.csv: nothing is refitted, the rows are the same
    reproduce(tmp_path / "a", plan=TINY, progress=False, data_home=data_home, base_seed=7)
    assert _rows(tmp_path / "a" / "results.csv") == rows
    assert len(_rows(tmp_path / "a" / "raw" / "fits.csv")) == len(METHODS)
    # every fit is seeded by its cell: a fresh run with the same base seed gives the same numbers
    reproduce(tmp_path / "b", plan=TINY, progress=False, data_home=data_home, base_seed=7, fresh=True)
    fresh = _rows(tmp_path / "b" / "results.csv")
    assert [(r["method"], r["accuracy"]) for r in fresh] == [(r["method"], r["accuracy"]) for r in rows]
