"""benchmarks/peers.py: its quick mode prints one table (models x epsilons) and skips absent peers."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import shared_data_available

from dpglass.registry import list_estimators

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load_peers():
    spec = importlib.util.spec_from_file_location("benchmarks_peers", BENCHMARKS / "peers.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _table_rows(text):
    lines = [line for line in text.splitlines() if line.startswith("|")]
    cells = [[c.strip() for c in line.strip("|").split("|")] for line in lines]
    return cells[0], cells[2:]  # header, body (cells[1] is the separator)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    peers = _load_peers()
    out = tmp_path_factory.mktemp("peers") / "table.md"
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("DPGLASS_PEER_PYTHON", raising=False)
        text = peers.main(["--datasets", "breast-cancer", "--quick", "--out", str(out)])
    return peers, text, out


def test_quick_mode_prints_one_row_per_model_and_one_column_per_epsilon(quick_run):
    peers, text, out = quick_run
    header, body = _table_rows(text)
    assert header[-4:] == ["ε = 0.1", "ε = 0.4", "ε = 1", "ε = 5"]
    models = [row[1] for row in body]
    private = [s.name for s in list_estimators(private=True) if not peers.needs_public_part(s)]
    schema_route = [f"{name} (DPPipeline, schema route)" for name in peers.SCHEMA_ROUTE]  # breast-cancer's raw table
    assert models == [label for label, _, _ in peers._references()] + private + schema_route
    for row in body:
        assert len(row) == len(header)
        # one repetition: accuracy · AUC, plain numbers, never "failed"
        values = [float(v) for cell in row[-4:] for v in cell.split(" · ")]
        assert len(values) == 8 and all(0.0 <= v <= 1.0 for v in values), row
    assert "peers skipped" in text
    assert "Command: `python benchmarks/peers.py --datasets breast-cancer --quick" in text
    assert out.read_text().strip() == text.strip()


def test_majority_row_is_the_test_share_of_the_training_majority(quick_run):
    peers, text, _ = quick_run
    split = peers.load_splits("breast-cancer", 1, quick=True)[0]
    majority = int(np.mean(split.y_train) >= 0.5)
    expected = f"{np.mean(split.y_test == majority):.3f}"
    _, body = _table_rows(text)
    assert [row for row in body if row[1] == "majority class"][0][-4:] == [f"{expected} · 0.500"] * 4


def test_private_rows_state_the_privacy_their_ledgers_report(quick_run):
    _, text, _ = quick_run
    _, body = _table_rows(text)
    privacy = {row[1]: row[3] for row in body}
    assert privacy["smooth-boost-stumps"] == "ε-DP"  # delta=0 by default
    assert privacy["dp-rule-list"] == "ε-DP"  # errors-pf, the default mechanism, is pure
    assert privacy["sklearn HistGradientBoosting"] == "non-private"


def test_worker_reports_every_peer_as_run_or_skipped(tmp_path):
    """The worker's contract, run with this interpreter (peers absent here are reported as skipped)."""
    rng = np.random.default_rng(0)
    X = rng.random((200, 3))
    y = (X[:, 0] > 0.5).astype(np.uint8)
    np.savez(tmp_path / "splits.npz", epsilons=np.array([1.0, 5.0]), seeds=np.arange(1),
             X_train_0=X[:150], y_train_0=y[:150], X_test_0=X[150:], y_test_0=y[150:])
    subprocess.run([sys.executable, str(BENCHMARKS / "_peers_worker.py"), str(tmp_path / "splits.npz"),
                    str(tmp_path / "out.json")], check=True, capture_output=True, timeout=600)
    result = json.loads((tmp_path / "out.json").read_text())
    assert set(result) == {"versions", "results", "skipped"}
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from _peers_worker import PEERS
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert set(result["results"]) | set(result["skipped"]) == set(PEERS)
    for res in result["results"].values():
        assert set(res["accuracy"]) == set(res["auc"]) == {"1.0", "5.0"}
        assert all(len(v) == 1 and 0.0 <= v[0] <= 1.0 for v in res["accuracy"].values())


def test_options_select_models_references_and_peers():
    peers = _load_peers()
    args = peers.parse_args(["--models", "dp-gam", "--references", "majority", "--peers", "dp-ebm", "--reps", "20",
                             "--adult-reps", "5"])
    assert args.models == ["dp-gam"] and args.references == ["majority"] and (args.reps, args.adult_reps) == (20, 5)
    assert args.peers == list(peers.EBM_ROWS)  # the alias: DP-EBM's two rows at dpglass's delta
    assert peers.parse_args(["--references", "none"]).references == []
    assert peers.parse_args([]).adult_reps == 5 and peers.parse_args([]).peer_cache == peers.PEER_CACHE
    with pytest.raises(SystemExit):
        peers.parse_args(["--models", "dp-gams"])  # not a registry name


def test_reference_and_model_filters_keep_only_the_named_rows():
    peers = _load_peers()
    splits = peers.load_splits("breast-cancer", 1, quick=True)
    rows = peers.reference_rows("breast-cancer", splits, [1.0], only=["majority"])
    assert [r.model for r in rows] == ["majority class"]
    assert peers.reference_rows("breast-cancer", splits, [1.0], only=[]) == []


def test_peer_results_are_cached_by_their_inputs(tmp_path):
    """A second run on the same inputs reads the cache (no interpreter is started); other inputs miss it."""
    peers = _load_peers()
    split = peers.load_splits("breast-cancer", 1, quick=True)
    arrays = peers._peer_arrays(split, [1.0], 1e-6, list(peers.EBM_ROWS))
    assert [str(p) for p in arrays["peers"]] == list(peers.EBM_ROWS) and "R_train_0" in arrays  # raw table too
    key = peers.cache_key(arrays, sys.executable)
    assert key == peers.cache_key(dict(arrays), sys.executable)
    assert key != peers.cache_key({**arrays, "delta": np.asarray(1e-8)}, sys.executable)
    stored = {"versions": {}, "skipped": {}, "results": {"InterpretML DP-EBM, raw columns": {
        "accuracy": {"1.0": [0.9]}, "auc": {"1.0": [0.95]}, "delta": 1e-6, "note": "", "seconds": 1.0, "raw": True}}}
    (tmp_path / f"breast-cancer-{key}.json").write_text(json.dumps(stored))
    notes = []
    rows, _ = peers.peer_rows("breast-cancer", split, [1.0], sys.executable, notes, 1e-6, list(peers.EBM_ROWS),
                              str(tmp_path))
    assert [(r.model, r.accuracy, r.auc) for r in rows] == [("InterpretML DP-EBM, raw columns", {1.0: [0.9]},
                                                             {1.0: [0.95]})]
    assert any("read from" in n for n in notes)


def test_comparison_table_takes_dpebms_better_input_per_cell_and_metric():
    peers = _load_peers()
    Row = peers.Row

    def row(model, acc, auc):
        return Row("toy", model, "", accuracy={1.0: acc}, auc={1.0: auc})

    rows = [row("majority class", [0.6, 0.6], [0.5, 0.5]), row("dp-gam", [0.7, 0.7], [0.7, 0.7]),
            row("dp-gam (DPPipeline, schema route)", [0.8, 0.82], [0.9, 0.9]),
            row("InterpretML DP-EBM at dpglass's δ", [0.85, 0.85], [0.85, 0.85]),
            row("InterpretML DP-EBM, raw columns", [0.75, 0.75], [0.95, 0.95])]
    lines = peers.comparison_table(rows, [1.0]).splitlines()
    # paired differences: acc (0.8 - 0.85, 0.82 - 0.85) = (-0.05, -0.03), se = sd / sqrt(2) = 0.01
    assert lines[2] == ("| toy | 1 | 0.600 | 0.810 · 0.900 (schema) | 0.850 (0/1) | 0.950 (raw) | -0.040 ± 0.010 "
                        "| -0.050 ± 0.000 |")
    assert peers.comparison_table(rows[:3], [1.0]) == ""  # no DP-EBM row: no table
    assert "| 0.700 · 0.700 (0/1) |" in peers.comparison_table(rows, [1.0], ("dp-gam",))  # dp-gam's own input


SHARED = pytest.mark.skipif(not shared_data_available(), reason="DPGLASS_DATA is not set to the shared data folder")


@pytest.mark.parametrize("name", [pytest.param("compas", marks=SHARED), pytest.param("german", marks=SHARED),
                                  "breast-cancer", pytest.param("mushroom", marks=SHARED)])
def test_raw_tables_hold_the_loaders_records_and_fit_their_schemas(name):
    """Same labels in the same order as the built-in loader (checked inside raw_table); every column is in the
    schema and passes its checks."""
    from dpglass.schema.encoding import validate_table

    peers = _load_peers()
    frame, y, schema = peers.raw_table(name)
    assert [c.name for c in schema.features] == list(frame.columns) and len(frame) == len(y)
    validate_table(frame, schema)


@SHARED
@pytest.mark.parametrize("name", ["compas", "german"])
def test_cut_codes_count_the_built_in_encodings_thresholds(name):
    """A numeric column's code is how many of the built-in 0/1 encoding's ``col>t`` columns are 1 (the schema lists
    the loader's cut points), a categorical one's is the index of its one 1 among ``col=c``."""
    from dpglass.datasets import load_dataset

    peers = _load_peers()
    frame, _, schema = peers.raw_table(name)
    codes, counts = peers.cut_codes(frame, schema)
    X01, _ = load_dataset(name)
    for j, col in enumerate(schema.features):
        if col.kind == "numeric":
            above = X01[[c for c in X01.columns if c.startswith(f"{col.name}>")]].to_numpy()
            assert counts[j] == above.shape[1] + 1 and np.array_equal(codes[:, j], above.sum(axis=1)), col.name
        else:
            assert counts[j] == len(col.categories) and codes[:, j].max() < counts[j]
    assert peers.parse_args(["--cut-codes"]).cut_codes and peers.lists_cut_points(schema)
