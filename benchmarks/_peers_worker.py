"""Fit the peers of ``benchmarks/peers.py`` in their own environment; write their accuracies as JSON.

Run by ``peers.py`` with the peers' interpreter (a venv with diffprivlib,
InterpretML and the scikit-learn they support; see ``peers.py``), never
imported by dpglass.  Usage::

    PEER_PYTHON _peers_worker.py SPLITS.npz RESULT.json

``SPLITS.npz`` holds ``epsilons``, ``seeds`` and, for each repetition ``r``,
``X_train_r``, ``y_train_r``, ``X_test_r``, ``y_test_r``: features already
mapped to [0, 1] by their **public** bounds (a per-record map), so every peer
is given the bounds [0, 1] per column and none reads a bound off the data
(diffprivlib's ``PrivacyLeakWarning`` is turned into an error to make sure).
Every peer runs with its library's defaults otherwise.  A peer whose library
does not import is listed under ``"skipped"`` with the reason.  ``delta``
(default 1e-8) is the δ of DP-EBM's second row.  Where ``R_train_r`` and
``R_test_r`` are given (Adult's raw columns: numeric ones in [0, 1] by their
public bounds, categorical ones as codes of their public lists) and
``raw_types`` their DP-EBM feature types, DP-EBM also runs on them at that δ
(its "raw" row).  ``peers`` (optional) lists the names of the peers to run (default: every one).  Each peer
reports accuracy, AUC and its fit time.  All of a dataset's fits run in this one process.
"""

from __future__ import annotations

import json
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np


def _diffprivlib(name):
    from diffprivlib import models
    from diffprivlib.utils import PrivacyLeakWarning

    warnings.simplefilter("error", PrivacyLeakWarning)

    def make(epsilon, seed, p):
        bounds = (np.zeros(p), np.ones(p))
        if name == "LogisticRegression":  # rows lie in [0, 1]^p: norm <= sqrt(p), dpglass's DP-LR default too
            return models.LogisticRegression(epsilon=epsilon, data_norm=float(np.sqrt(p)), random_state=seed)
        return getattr(models, name)(epsilon=epsilon, bounds=bounds, classes=[0, 1], random_state=seed)

    return make


def _dp_ebm(delta=None, types=None):
    from interpret.privacy import DPExplainableBoostingClassifier

    # A fixed random_state makes interpret warn that the noise is deterministic: wanted here (seeded repetitions).
    warnings.filterwarnings("ignore", message="Privacy violation: using a fixed random_state")

    def make(epsilon, seed, p):
        chosen = {} if delta is None else {"delta": delta}
        kinds = list(types) if types is not None else ["continuous"] * p
        return DPExplainableBoostingClassifier(
            epsilon=epsilon, feature_types=kinds, **chosen,
            privacy_bounds={j: (0.0, 1.0) for j in range(p) if kinds[j] == "continuous"}, random_state=seed)

    return make


def _privatree():
    from privatree.privatree import PrivaTreeClassifier

    def make(epsilon, seed, p):
        return PrivaTreeClassifier(epsilon=epsilon, feature_range=[(0.0, 1.0)] * p, random_state=seed)

    return make


#: name -> (builder of make(epsilon, seed, p), a note on its guarantee or "")
PEERS = {
    "diffprivlib LogisticRegression": (lambda: _diffprivlib("LogisticRegression"), ""),
    "diffprivlib DecisionTreeClassifier": (lambda: _diffprivlib("DecisionTreeClassifier"), ""),
    "diffprivlib RandomForestClassifier": (lambda: _diffprivlib("RandomForestClassifier"), ""),
    "InterpretML DP-EBM": (_dp_ebm, ""),
    # dpglass's delta: the same (epsilon, delta) as dpglass's models, so the row compares equal guarantees
    "InterpretML DP-EBM at dpglass's δ": (lambda: _dp_ebm(DELTA[0]), ""),
    "PrivaTree": (_privatree, "ε-DP if the number of training records n is public (its budget split reads the exact n)"),
}


#: The δ of DP-EBM's second (and raw-column) row: the file's ``delta``, set by main.
DELTA = [1e-8]
#: The raw-column row, run where the file holds raw columns.
RAW_PEER = "InterpretML DP-EBM, raw columns"


def versions() -> dict:
    found = {"python": platform.python_version()}
    for module in ("numpy", "sklearn", "diffprivlib", "interpret"):
        try:
            found[module] = __import__(module).__version__
        except Exception:  # noqa: BLE001 - a missing peer is reported, not fatal
            pass
    try:
        from privatree import privatree  # a folder without __init__.py: name the module for its path

        commit = Path(privatree.__file__).resolve().parent.parent / "COMMIT"
        found["privatree"] = commit.read_text().strip()[:12] if commit.exists() else "unversioned checkout"
    except Exception:  # noqa: BLE001
        pass
    return found


def _auc(model, X, y) -> float:
    from sklearn.metrics import roc_auc_score

    proba = model.predict_proba(X)
    if proba.shape[1] == 2:
        return float(roc_auc_score(y, proba[:, 1]))
    return float(roc_auc_score(y, proba, multi_class="ovr", labels=list(model.classes_)))


def run_peer(make, data, epsilons, seeds, view="X"):
    """Accuracies and AUCs ``{str(epsilon): [one per repetition]}``, the δ each fit declared, and the seconds
    spent fitting (``view="R"``: the raw columns)."""
    acc, auc, delta, seconds = {}, {}, 0.0, 0.0
    for eps in epsilons:
        acc[repr(float(eps))], auc[repr(float(eps))] = [], []
        for r, seed in enumerate(seeds):
            X, y = data[f"{view}_train_{r}"], data[f"y_train_{r}"]
            start = time.perf_counter()
            model = make(float(eps), int(seed), X.shape[1]).fit(X, y)
            seconds += time.perf_counter() - start
            delta = max(delta, float(getattr(model, "delta", 0.0) or 0.0))
            Xte, yte = data[f"{view}_test_{r}"], data[f"y_test_{r}"]
            acc[repr(float(eps))].append(float(model.score(Xte, yte)))
            auc[repr(float(eps))].append(_auc(model, Xte, yte))
    return acc, auc, delta, seconds


def main(argv=None):
    splits, out = (argv or sys.argv[1:])[:2]
    data = dict(np.load(splits))
    epsilons, seeds = data["epsilons"], data["seeds"]
    DELTA[0] = float(data["delta"]) if "delta" in data else 1e-8
    peers = dict(PEERS)
    if "raw_types" in data:
        types = [str(t) for t in data["raw_types"]]
        peers[RAW_PEER] = (lambda: _dp_ebm(DELTA[0], types), "")
    if "peers" in data:
        chosen = [str(p) for p in data["peers"]]
        peers = {name: peers[name] for name in chosen if name in peers}
    result = {"versions": versions(), "results": {}, "skipped": {}}
    for name, (builder, note) in peers.items():
        try:
            make = builder()
        except ImportError as exc:
            result["skipped"][name] = f"not importable: {exc}"
            continue
        try:
            acc, auc, delta, seconds = run_peer(make, data, epsilons, seeds, "R" if name == RAW_PEER else "X")
        except Exception as exc:  # noqa: BLE001 - one broken peer must not hide the others
            result["skipped"][name] = f"failed: {type(exc).__name__}: {exc}"
            continue
        result["results"][name] = {"accuracy": acc, "auc": auc, "delta": delta, "note": note,
                                   "seconds": round(seconds, 1), "raw": name == RAW_PEER}
    Path(out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
