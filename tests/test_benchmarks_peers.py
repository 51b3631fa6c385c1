"""benchmarks/peers.py: its quick mode prints one table (models x epsilons) and skips absent peers."""

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

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
    assert models == [label for label, _, _ in peers._references()] + private
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
