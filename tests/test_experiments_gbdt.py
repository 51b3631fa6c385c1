"""`dpglass reproduce gbdt --quick` runs end to end and writes its report (needs the shared data)."""

import csv

from conftest import needs_shared_data

from dpglass.experiments.gbdt import reproduce
from dpglass.experiments.gbdt.plan import Plan


@needs_shared_data
def test_reproduce_gbdt_tiny_plan(tmp_path):
    plan = Plan((1.0,), adult_reps=1, codrna_folds=1, codrna_reps=1, adult_subsample=1500, codrna=False)
    reproduce(tmp_path, plan=plan, progress=False)
    assert len(list(csv.DictReader(open(tmp_path / "results.csv")))) == 5
    assert (tmp_path / "timings.json").exists()
    report = (tmp_path / "report.md").read_text()
    assert "Targets" in report and "S-BDT" in report and "HistGradientBoosting" in report
    rows = list(csv.DictReader(open(tmp_path / "results.csv")))
    assert all(float(r["epsilon_spent"]) <= 1.0 * (1 + 1e-9) for r in rows)
    assert (tmp_path / "accuracy.png").exists()
