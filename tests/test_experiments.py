"""Experiments (issue 5): shared counts, the resumable sweep engine, the paper-001 reproduction."""

import json
import math

import numpy as np
import pandas as pd
import pytest

from conftest import needs_shared_data
from dpglass.exceptions import InvalidParameterError
from dpglass_experiments import (
    DatasetSpec,
    MethodSpec,
    SweepConfig,
    cell_seed,
    load_results,
    run_sweep,
    split_indices,
)
from dpglass.models import DPRuleListClassifier
from dpglass.models.rule_list.candidates import CountCache, SufficientStats, build_candidates
from dpglass.models.rule_list.selection import MECHANISMS
from dpglass.models.rule_list.estimator import fit_dp_rule_list


# ------------------------------------------------------------ shared counts
def _release_key(release):
    return (release.selected, release.default_counts, release.stop_reason, release.ledger.to_dict())


def _fit(X, y, cands, rng_seed, cache=None, **kw):
    params = dict(epsilon=1.0, delta=1e-8, mechanism="certified-pf", max_length=4, min_support=0.01,
                  confidence=None, gamma=4.0, variant="corrected")
    params.update(kw)
    if params["mechanism"] == "errors-pf":  # no minimum support
        params["min_support"] = None
    return fit_dp_rule_list(X, y, candidates=cands, rng=np.random.default_rng(rng_seed), cache=cache, **params)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_cached_fits_are_bit_identical_to_uncached(mechanism, binary_data):
    X, y = binary_data
    cands = build_candidates(X.shape[1], 2, True)
    cache = CountCache(SufficientStats(X, y, cands), max_entries=64)
    settings = [dict(), dict(confidence=0.99, variant="paper"), dict(variant="paper")]
    if mechanism == "errors-pf":  # has neither confidence nor the paper's variant
        settings = [dict()]
    # one cache shared by an epsilon grid, several seeds and settings (as in a sweep)
    for eps in (0.3, 3.0, 30.0, 300.0):
        for seed in range(4):
            for extra in settings:
                kw = dict(mechanism=mechanism, epsilon=eps, **extra)
                plain = _fit(X, y, cands, seed, **kw)
                shared = _fit(X, y, cands, seed, cache=cache, **kw)
                assert _release_key(plain) == _release_key(shared)
    assert cache.hits > 0


def test_cached_fit_equals_the_estimator(binary_data):
    X, y = binary_data
    cands = build_candidates(X.shape[1], 2, True)
    cache = CountCache(SufficientStats(X, y, cands), max_entries=16)
    for seed in range(3):
        for mechanism in MECHANISMS:
            est = DPRuleListClassifier(epsilon=5.0, mechanism=mechanism, max_length=4,
                                       min_support=None if mechanism == "errors-pf" else 0.01,
                                       random_state=seed).fit(X, y)
            rel = _fit(X, y, cands, seed, cache=cache, mechanism=mechanism, epsilon=5.0)
            assert [c for c, _ in rel.selected] == [
                next(i for i in range(len(cands)) if cands.conditions(i) == tuple((c.feature, c.value) for c in r.conditions))
                for r in est.rules_
            ]
            assert [counts for _, counts in rel.selected] == [r.counts for r in est.rules_]
            assert {**rel.ledger.to_dict(), "replayable": True} == est.privacy_ledger_.to_dict()


def test_count_cache_depends_on_the_set_not_the_order(binary_data):
    X, y = binary_data
    cands = build_candidates(X.shape[1], 2, True)
    stats = SufficientStats(X, y, cands)
    cache = CountCache(stats, max_entries=8)
    rng = np.random.default_rng(0)
    for _ in range(30):
        removed = tuple(int(i) for i in rng.choice(len(cands), size=rng.integers(0, 4), replace=False))
        fresh = SufficientStats(X, y, cands)
        for i in reversed(removed):
            fresh.remove(i)
        n0, n1, c0, c1 = cache.counts(removed)
        assert (n0, n1) == fresh.remaining() == cache.remaining(removed)
        f0, f1 = fresh.caught_counts()
        assert np.array_equal(c0, f0) and np.array_equal(c1, f1)
    assert len(cache._memo) <= 8  # bounded
    # the base statistics are never modified
    assert stats.alive.all()


def test_copy_of_sufficient_stats_is_independent(binary_data):
    X, y = binary_data
    stats = SufficientStats(X, y, build_candidates(X.shape[1], 2, True))
    before = [a.copy() for a in stats.caught_counts()]
    other = stats.copy()
    other.remove(0)
    after = stats.caught_counts()
    assert all(np.array_equal(a, b) for a, b in zip(before, after))
    assert not np.array_equal(other.caught_counts()[1], after[1])


# ------------------------------------------------------------------ sweep
def _csv_dataset(tmp_path, binary_data):
    X, y = binary_data
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(X.shape[1])])
    frame["label"] = y
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return DatasetSpec("toy", source=str(path), target="label", params={"max_card": 2, "min_support": 0.05})


def _methods():
    return (
        MethodSpec("GreedyRL", "greedy-rule-list", {"max_length": 3}),
        MethodSpec("sm-Laplace", "dp-rule-list", {"max_length": 3, "mechanism": "smooth-laplace", "confidence": 0.99,
                                                  "variant": "paper"}),
        MethodSpec("gl-Laplace", "dp-rule-list", {"max_length": 3, "mechanism": "global-laplace"}),
        MethodSpec("default", "dp-rule-list", {"max_length": 3}),
    )


def _config(tmp_path, binary_data, n_seeds=3):
    data = _csv_dataset(tmp_path, binary_data)
    other = DatasetSpec("toy-card1", source=data.source, target="label", params={"max_card": 1, "min_support": 0.1})
    return SweepConfig((data, other), _methods(), (0.1, 1.0, 10.0), n_seeds)


def _same(a, b):
    cols = [c for c in a.columns if c != "fit_seconds"]
    pd.testing.assert_frame_equal(a[cols], b[cols], check_exact=True)


def test_sweep_fast_path_gives_the_estimators_rows(tmp_path, binary_data):
    config = _config(tmp_path, binary_data, n_seeds=2)
    fast = run_sweep(config, tmp_path / "fast.csv", n_jobs=1, progress=False)
    slow = run_sweep(config, tmp_path / "slow.csv", n_jobs=1, progress=False, fast=False)
    _same(fast, slow)
    assert len(fast) == 2 * 2 * (1 + 3 * 3)
    assert fast["epsilon"].isna().sum() == 2 * 2  # GreedyRL: one row per dataset and seed
    assert set(fast["guarantee"]) <= {"none", "proven", "paper-claim"}


def test_sweep_row_is_reproducible_from_its_cell_seed(tmp_path, binary_data):
    config = _config(tmp_path, binary_data, n_seeds=2)
    table = run_sweep(config, tmp_path / "t.csv", n_jobs=1, progress=False)
    row = table[(table["dataset"] == "toy") & (table["method"] == "gl-Laplace") & (table["epsilon"] == 1.0)
                & (table["seed"] == 1)].iloc[0]
    X, y, _ = config.datasets[0].load()
    tr, te = split_indices(len(y), cell_seed(0, "toy", 1))
    model = DPRuleListClassifier(epsilon=1.0, mechanism="global-laplace", max_length=3, max_card=2, min_support=0.05,
                                 random_state=cell_seed(0, "toy", 1, "gl-Laplace", 1.0)).fit(X[tr], y[tr])
    assert row["test_accuracy"] == model.score(X[te], y[te])
    assert row["train_accuracy"] == model.score(X[tr], y[tr])
    assert row["n_rules"] == len(model.rules_)
    assert (row["epsilon_spent"], row["delta_spent"]) == model.privacy_ledger_.total()


@pytest.mark.parametrize("stops", [[1], [7, 25], [40, 1, 2]])
def test_interrupted_sweep_resumes_to_the_same_table(tmp_path, binary_data, stops):
    config = _config(tmp_path, binary_data)
    full = run_sweep(config, tmp_path / "full.csv", n_jobs=1, progress=False)
    path = tmp_path / "resumed.csv"
    for k in stops:  # stop after k new rows each time (mid-unit), as a kill would
        assert run_sweep(config, path, n_jobs=1, progress=False, stop_after=k) is None
    resumed = run_sweep(config, path, n_jobs=1, progress=False)
    _same(full, resumed)
    _same(full, load_results(path))


def test_partial_last_line_is_discarded_on_resume(tmp_path, binary_data):
    config = _config(tmp_path, binary_data)
    full = run_sweep(config, tmp_path / "full.csv", n_jobs=1, progress=False)
    path = tmp_path / "killed.csv"
    run_sweep(config, path, n_jobs=1, progress=False, stop_after=13)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 17])  # kill -9 in the middle of a line
    _same(full, run_sweep(config, path, n_jobs=1, progress=False))


def test_parallel_sweep_equals_sequential(tmp_path, binary_data):
    config = _config(tmp_path, binary_data, n_seeds=2)
    one = run_sweep(config, tmp_path / "one.csv", n_jobs=1, progress=False)
    two = run_sweep(config, tmp_path / "two.csv", n_jobs=2, progress=False)
    _same(one, two)


def test_resume_refuses_a_different_configuration(tmp_path, binary_data):
    config = _config(tmp_path, binary_data, n_seeds=1)
    run_sweep(config, tmp_path / "t.csv", n_jobs=1, progress=False, stop_after=3)
    other = SweepConfig(config.datasets, config.methods, (0.5,), 1)
    with pytest.raises(InvalidParameterError, match="different sweep configuration"):
        run_sweep(other, tmp_path / "t.csv", n_jobs=1, progress=False)
    assert len(run_sweep(other, tmp_path / "t.csv", n_jobs=1, progress=False, resume=False)) == 2 * (1 + 3)
    meta = json.loads((tmp_path / "t.csv.config.json").read_text())
    assert meta["epsilons"] == [0.5]


def test_public_part_is_carved_from_the_training_part_and_shared(tmp_path, binary_data):
    from dpglass_experiments.seeding import dataset_split, public_split
    from dpglass.models import SubsampleAggregateClassifier

    data = _csv_dataset(tmp_path, binary_data)
    saa = {"n_teachers": 5, "noise_scale": 2.0, "delta": 1e-6}
    methods = (MethodSpec("SAA", "subsample-aggregate", saa, public_fraction=0.5),
               MethodSpec("SAA-2", "subsample-aggregate", saa, public_fraction=0.5))
    config = SweepConfig((data,), methods, (1.0, 4.0), 2)
    table = run_sweep(config, tmp_path / "p.csv", n_jobs=1, progress=False)
    assert len(table) == 2 * 2 * 2 and (table["guarantee"] == "proven").all()
    X, y, names = data.load()
    tr, te = dataset_split(config, data, 1, None)
    priv, pub = public_split(config, data, 1, len(tr), 0.5)
    assert len(pub) == math.ceil(0.5 * len(tr)) and not set(priv) & set(pub)
    model = SubsampleAggregateClassifier(epsilon=4.0, **saa, random_state=cell_seed(0, "toy", 1, "SAA", 4.0))
    model.fit(pd.DataFrame(X[tr][priv], columns=names), y[tr][priv],
              X_public=pd.DataFrame(X[tr][pub], columns=names))
    row = table[(table["method"] == "SAA") & (table["epsilon"] == 4.0) & (table["seed"] == 1)].iloc[0]
    assert row["test_accuracy"] == model.score(X[te], y[te])
    assert "public_fraction" not in json.dumps(_config(tmp_path, binary_data).to_dict())  # old sweeps resume
    with pytest.raises(InvalidParameterError, match="public_fraction"):
        MethodSpec("bad", "subsample-aggregate", public_fraction=1.0)


def test_validation_holdout_never_touches_the_test_rows():
    ss = cell_seed(0, "d", 0)
    tr, te = split_indices(1000, ss, 0.3)
    vtr, val = split_indices(1000, ss, 0.3, holdout="validation")
    assert len(te) == 300 and len(tr) == 700
    assert set(vtr) | set(val) == set(tr)
    assert not (set(val) & set(te))
    assert len(val) == 175


def test_config_rejects_bad_names_and_grids():
    m = MethodSpec("a,b", "dp-rule-list")
    with pytest.raises(InvalidParameterError, match="commas"):
        SweepConfig((DatasetSpec("d"),), (m,), (1.0,), 1)
    with pytest.raises(InvalidParameterError, match="distinct finite"):
        SweepConfig((DatasetSpec("d"),), (MethodSpec("m", "dp-rule-list"),), (1.0, 1.0), 1)


def test_cell_seeds_are_distinct_and_stable():
    keys = {tuple(cell_seed(0, d, s, m, e).generate_state(2)) for d in ("a", "b") for s in range(3)
            for m in ("x", "y") for e in (0.1, 1.0)}
    assert len(keys) == 2 * 3 * 2 * 2
    assert tuple(cell_seed(0, "a", 0).generate_state(2)) not in keys
    assert np.array_equal(cell_seed(5, "a", 1, "x", 1.0).generate_state(4), cell_seed(5, "a", 1, "x", 1.0).generate_state(4))


def test_weighted_vulnerability_equals_the_expanded_records_bit_for_bit():
    """The shared rule-list fit scores V on weighted distinct rows: the same float as on the records."""
    from dpglass.audit.membership import distributional_overfitting

    rng = np.random.default_rng(1)
    for _ in range(50):
        m, n_groups = int(rng.integers(1, 40)), int(rng.integers(1, 7))
        groups = rng.integers(0, n_groups, m)
        counts = [rng.integers(0, 5, m).astype(float) for _ in range(4)]  # in0, in1, out0, out1 per distinct row
        gi = np.concatenate([np.repeat(groups, counts[0].astype(int)), np.repeat(groups, counts[1].astype(int))])
        yi = np.concatenate([np.zeros(int(counts[0].sum())), np.ones(int(counts[1].sum()))])
        go = np.concatenate([np.repeat(groups, counts[2].astype(int)), np.repeat(groups, counts[3].astype(int))])
        yo = np.concatenate([np.zeros(int(counts[2].sum())), np.ones(int(counts[3].sum()))])
        if len(yi) == 0 or len(yo) == 0:
            continue
        expected = distributional_overfitting(gi, yi, go, yo).vulnerability
        two, labels = np.concatenate([groups, groups]), np.repeat([0, 1], m)
        weighted = distributional_overfitting(two, labels, two, labels, weights_in=np.concatenate(counts[:2]),
                                              weights_out=np.concatenate(counts[2:]))
        assert weighted.vulnerability == expected


# ------------------------------------------------------------ the layout
def _imports(path):
    """Modules a source file imports (module level and inside functions)."""
    import ast

    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


def test_experiments_import_no_circle():
    """No module of dpglass_experiments reaches itself through imports (function-level ones included)."""
    from pathlib import Path

    import dpglass_experiments as pkg

    root = Path(pkg.__file__).parent
    modules = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    graph = {m: {t for t in _imports(p) if t in modules and t != m} for m, p in modules.items()}

    def reaches(start):
        seen, todo = set(), list(graph[start])
        while todo:
            m = todo.pop()
            if m == start:
                return True
            if m not in seen:
                seen.add(m)
                todo.extend(graph[m])
        return False

    assert [m for m in modules if reaches(m)] == []


def test_the_sweep_engine_knows_no_model_family():
    """Fast paths come from one hook (dpglass_experiments.shared_fit); the engine's modules name no model."""
    from pathlib import Path

    import dpglass_experiments as pkg
    from dpglass.models import SmoothBoostClassifier
    from dpglass_experiments.shared_fit import RuleListFits, shared_fitter

    root = Path(pkg.__file__).parent
    for name in ("specs", "seeding", "cells", "sweep", "reproduction", "report"):
        models = {m for m in _imports(root / f"{name}.py") if m.startswith("dpglass.models")}
        assert models <= {"dpglass.models.selection.estimator", "dpglass.models.selection.estimator.PrivateGridSearch"}, (name, models)
    assert shared_fitter(DPRuleListClassifier(epsilon=1.0)) is RuleListFits
    assert shared_fitter(SmoothBoostClassifier(epsilon=1.0)) is None


def test_paper_001_numbers_are_a_table():
    from dpglass_experiments.rule_lists.plan import NUMBERS

    assert len(NUMBERS.rows("accuracy_se", source="Table I")) == 3 * 5 * 3
    v = NUMBERS.one("vulnerability", source="Table II", dataset="COMPAS", method="GreedyRL")
    assert (v.text, v.value, v.error, v.note) == ("0.507+", 0.507, 4e-6, "truncated above")
    assert NUMBERS.get("accuracy", source="Table II", dataset="German", method="sm-Laplace") == 0.683
    assert NUMBERS.get("I_7", source="Table III", method="gl-Laplace", epsilon=10) == 0.308
    assert np.isnan(NUMBERS.get("I_7", source="Table III", method="certified-pf", epsilon=10))
    with pytest.raises(KeyError):
        NUMBERS.one("accuracy", source="Table II", dataset="German")  # two methods


def test_every_reproduce_command_has_a_reproduction():
    import importlib

    from dpglass_experiments.cli import COMMANDS
    from dpglass_experiments.reproduction import Reproduction

    for command in COMMANDS:
        module = importlib.import_module(command.module)
        assert isinstance(module.REPRODUCTION, Reproduction) and module.reproduce == module.REPRODUCTION.reproduce


# ----------------------------------------------------------- reproduction
def test_noise_amplitude_table():
    from dpglass_experiments.rule_lists import noise_amplitude_table

    t = noise_amplitude_table()
    smooth = t[t["method"] == "sm-Laplace"].sort_values("n")
    glob = t[t["method"] == "gl-Laplace"]
    assert (np.diff(smooth["scale"]) <= 1e-15).all()  # decreases with n
    assert smooth["scale"].iloc[-1] < glob["scale"].iloc[0] / 1000


def test_reproduce_is_registered_on_the_cli(capsys):
    from dpglass.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["reproduce", "rule-lists", "--quick", "--out", "x"])
    assert args.quick and args.out == "x" and callable(args.handler)
    with pytest.raises(SystemExit):
        parser.parse_args(["reproduce", "rule-lists", "--help"])
    assert "--quick" in capsys.readouterr().out


@needs_shared_data
def test_quick_reproduction_smoke(tmp_path):
    """`dpglass reproduce rule-lists --quick` (the CI smoke test; under two minutes on 2 cores)."""
    import time

    from dpglass.cli import main

    start = time.perf_counter()
    assert main(["reproduce", "rule-lists", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    assert time.perf_counter() - start < 120
    for stem in ("fig1_noise_amplitude", "fig2_3_noisy_counts_vs_gini", "fig4_test_accuracy", "sec5d_hyperparameters_eps1",
                 "appC_mia_roc"):
        for ext in ("png", "svg", "csv"):
            assert (tmp_path / f"{stem}.{ext}").stat().st_size > 0
    for name in ("table1_standard_error.csv", "table2_vulnerability.csv", "table3_feature_intersection.csv",
                 "appC_mia_summary.csv", "timings.json"):
        assert (tmp_path / name).exists()
    report = (tmp_path / "report.md").read_text()
    for heading in ("Fig. 4", "Table I", "Table II", "Table III", "Section V-D", "Appendix C", "Speed"):
        assert heading in report
    fig4 = load_results(tmp_path / "raw" / "sweep_fig4.csv")
    assert len(fig4) == 3 * 5 * (1 + 6 * 5)
    assert fig4["test_accuracy"].notna().all()


@needs_shared_data  # reads compas-corels and adult-corels: skipped, not downloaded, without DPGLASS_DATA (issue 26)
def test_quick_accounting_reproduction(tmp_path):
    """`dpglass reproduce accounting --quick`: both accountants for every model, a figure per family, a report."""
    from dpglass.cli import main

    assert main(["reproduce", "accounting", "--quick", "--out", str(tmp_path), "--no-progress"]) == 0
    for stem in ("accuracy_rules", "accuracy_boosting"):
        assert (tmp_path / f"{stem}.png").stat().st_size > 0
    acc = pd.read_csv(tmp_path / "accuracy.csv")
    assert {m.rsplit(" / ", 1)[1] for m in acc["method"]} == {"basic", "auto"}
    assert acc["mean"].between(0, 1).all()
    assert "| dataset | model |" in (tmp_path / "report.md").read_text()


def test_sweep_fast_path_passes_count_noise(tmp_path, binary_data):
    """The shared-count fast path fits what the estimator fits, Gaussian class counts included."""
    data = _csv_dataset(tmp_path, binary_data)
    method = MethodSpec("gauss-counts", "dp-rule-list", {"mechanism": "exponential", "max_length": 3,
                                                         "delta": 1e-6, "count_noise": "gaussian"})
    config = SweepConfig((data,), (method,), (1.0,), 2)
    fast = run_sweep(config, tmp_path / "fast.csv", n_jobs=1, progress=False)
    slow = run_sweep(config, tmp_path / "slow.csv", n_jobs=1, progress=False, fast=False)
    _same(fast, slow)
