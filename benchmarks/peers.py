"""Accuracy of dpglass's private models beside non-private references and DP peers, same splits, one table.

Run from the repository root::

    DPGLASS_DATA=../shared/data PYTHONPATH=src python benchmarks/peers.py \\
        [--peer-python /work/peers-venv/bin/python] [--reps 5] [--out table.md] [--quick]

Rows are models, columns are ε ∈ {0.1, 0.4, 1, 5}; a cell is the test
accuracy then the test AUC (for K classes, one-vs-rest macro AUC), each mean
± sd over the repetitions, as ``0.849 ± 0.002 · 0.902 ± 0.001``.

* **Splits.** Adult: UCI's canonical train/test files, the same in every
  repetition (repetitions redraw the models' noise; ``--adult-reps`` of them,
  default ``--reps``).  Other datasets (compas by default): a stratified
  70/30 split drawn with seed ``r`` in repetition ``r``.  Every model of a
  repetition sees the same records.
* **dpglass.** Every private estimator of the registry (``--models``: only
  those), built by its registered name (``spec.make``) with its defaults,
  ``epsilon`` and ``random_state=r``.  A model that takes public ``bounds``
  (dp-gbdt, dp-gam) gets the numeric columns with the public bounds of
  ``dpglass_experiments.gbdt.data`` where the dataset has them (Adult); the
  others get the built-in 0/1 encoding.  The δ column is read from the fitted
  models' ledgers.  ``--delta`` sets δ on every dpglass model that takes one
  and on DP-EBM's second and raw-column rows (default: each model's own,
  DP-EBM's at dpglass's 10⁻⁸).
* **The schema route** (Adult, COMPAS, German, breast-cancer, Mushroom: the
  raw tables and public schemas of ``benchmarks/_peers_tables.py``, the same
  records in the same order as the built-in loaders): ``DPPipeline`` on the
  raw columns, with dp-gbdt and dp-gam inside: the route ``dpglass fit
  --schema`` takes.  The fit time of dp-gam's pipeline and of DP-EBM on the
  raw columns is summed over the same fits of one run and their ratio
  printed.
* **References** (non-private, do not depend on ε; ``--references``: only
  some): majority class, the registry's GreedyRL rule list (0/1 input), and
  scikit-learn's depth-4 DecisionTree, LogisticRegression (``max_iter=1000``)
  and HistGradientBoosting with their defaults, on the numeric columns mapped
  to [0, 1] by the public bounds.
* **Peers** (diffprivlib, InterpretML's DP-EBM, PrivaTree; ``--peers``: only
  some, ``dp-ebm`` for DP-EBM's two rows at dpglass's δ) pin an older
  scikit-learn than dpglass, so they run in their own environment:
  ``--peer-python`` (or ``$DPGLASS_PEER_PYTHON``) names its interpreter, and
  ``benchmarks/_peers_worker.py`` fits them there, all of a dataset's fits in
  one process, on the same splits (passed as a temporary .npz, the
  [0, 1]-mapped numeric columns) with their defaults and the public bounds
  [0, 1]; DP-EBM runs twice, at its default δ = 1e-5 and at dpglass's 1e-8
  (equal guarantees; ``--delta`` for another), and where the dataset has a raw
  table a third time on its raw columns (numeric ones mapped to [0, 1] by the
  public bounds, categorical ones as codes of the public category lists,
  ``nominal`` to DP-EBM), at the second row's δ.  The worker's result is kept
  in ``--peer-cache`` (default ``/tmp/dpglass-peers-cache``), keyed by a
  digest of its inputs, its source and the interpreter, so a rerun of
  dpglass's side does not refit the peers.  Without an interpreter the peers
  are skipped, and the output says so.  To make the environment::

      python -m venv /work/peers-venv
      /work/peers-venv/bin/pip install -r benchmarks/peers-requirements.txt

  PrivaTree is not on PyPI: put a checkout of its repository (the folder
  holding ``privatree/``) on that environment's path to include it.
* **dp-gam against DP-EBM** (issue 28): where both are in the run, a second
  table puts dp-gam (its schema route where the dataset has one, else its 0/1
  row) beside DP-EBM's better input per cell and metric (which one is named),
  with the differences.  Picking DP-EBM's better input on the test parts
  favours DP-EBM; dp-gam's route is fixed in advance.

``--quick`` is a smoke test: 1 repetition, the registry's small
``test_params``, at most 2000 training and 2000 test records.  Nothing is
tuned: there is no validation split to tune on, and no setting depends on the
test records.  The script prints the table, the command and the versions;
``--out`` also writes them to a file.  It asserts nothing about accuracy or time.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this folder is not a package: _peers_tables
from _peers_tables import (
    EBM_ROWS,
    GAM_ROWS,
    comparison_table,
    cut_codes,
    lists_cut_points,
    raw_table,
)

EPSILONS = (0.1, 0.4, 1.0, 5.0)
DATASETS = ("adult", "compas")
QUICK_ROWS = 2000
WORKER = Path(__file__).resolve().with_name("_peers_worker.py")
#: Fits run on one BLAS/OpenMP thread, here and in the worker: nothing is timed, and on a busy shared
#: machine OpenMP's spinning threads made HistGradientBoosting 15x slower (breast-cancer: 15 s vs 1 s).
PEER_TIMEOUT = 3600  # seconds for one dataset's peers (Adult, 5 repetitions: about 5 minutes)
PEER_CACHE = "/tmp/dpglass-peers-cache"
ONE_THREAD = {k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}


@dataclass
class Split:
    """One repetition's train/test records in the two views every model is given."""

    x01_train: object  # DataFrame of 0/1 columns (the built-in encoding)
    x01_test: object
    xnum_train: np.ndarray  # numeric columns where the dataset has them, else the 0/1 columns
    xnum_test: np.ndarray
    bounds: list  # public bounds of xnum's columns; None: a 0/1 column
    y_train: np.ndarray
    y_test: np.ndarray
    raw_train: object = None  # Adult: the raw columns (a DataFrame) read through ``schema``; else None
    raw_test: object = None
    schema: object = None

    def scaled(self, part: str) -> np.ndarray:
        """``xnum`` mapped to [0, 1] by the public bounds (clipped): a per-record map."""
        X = self.xnum_train if part == "train" else self.xnum_test
        lo = np.array([0.0 if b is None else b[0] for b in self.bounds])
        hi = np.array([1.0 if b is None else b[1] for b in self.bounds])
        return np.clip((np.asarray(X, dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0)

    def coded(self, part: str) -> tuple[np.ndarray, list]:
        """The raw columns for DP-EBM: numeric ones mapped to [0, 1] by the schema's public bounds (clipped),
        categorical ones as codes of the schema's public list (a missing or unlisted value: the next code), and
        their DP-EBM feature types; a per-record map."""
        from dpglass.schema.columns import category_key

        frame = self.raw_train if part == "train" else self.raw_test
        cols, types = [], []
        for col in self.schema.features:
            if col.kind == "numeric":
                lo, hi = col.bounds
                cols.append(np.clip((frame[col.name].to_numpy(dtype=np.float64) - lo) / (hi - lo), 0.0, 1.0))
                types.append("continuous")
            else:
                index = {category_key(c): i for i, c in enumerate(col.categories)}
                cols.append(np.array([index.get(category_key(v), len(index)) for v in frame[col.name]], float))
                types.append("nominal")
        return np.stack(cols, axis=1), types


@dataclass
class Row:
    dataset: str
    model: str
    input: str
    privacy: str = ""
    accuracy: dict = field(default_factory=dict)  # epsilon -> list of accuracies
    auc: dict = field(default_factory=dict)  # epsilon -> list of AUCs
    seconds: float = 0.0  # fit time summed over the row's fits (the schema route and DP-EBM's raw row)
    error: str = ""


def _subsample(n: int, seed: int) -> np.ndarray:
    return np.sort(np.random.default_rng(seed).permutation(n)[:QUICK_ROWS])


def load_splits(name: str, reps: int, quick: bool) -> list[Split]:
    """The ``reps`` splits of dataset ``name`` (Adult: the canonical one, ``reps`` times); where
    ``_peers_tables`` has the dataset's raw table, each split carries its raw columns and public schema too."""
    from sklearn.model_selection import train_test_split

    from dpglass.datasets import load_dataset

    if name == "adult":
        from dpglass_experiments.gbdt.data import load_numeric

        parts = {}
        for part in ("train", "test"):
            X01, y = load_dataset("adult", split=part)
            Xnum, y_num, bounds = load_numeric("adult", part)
            raw, y_raw, schema = raw_table("adult", part)
            assert np.array_equal(y, y_num) and np.array_equal(y, y_raw), "the Adult views disagree on the labels"
            keep = _subsample(len(y), 0) if quick else slice(None)
            parts[part] = (X01.iloc[keep], Xnum.to_numpy()[keep], np.asarray(y)[keep], raw.iloc[keep])
        (a, b, c, g), (d, e, f, h) = parts["train"], parts["test"]
        return [Split(a, d, b, e, bounds, c, f, g, h, schema) for _ in range(reps)]
    X01, y = load_dataset(name)
    y = np.asarray(y)
    raw, _, schema = raw_table(name) or (None, None, None)  # labels checked equal to the loader's
    splits = []
    for r in range(reps):
        train, test = train_test_split(np.arange(len(y)), test_size=0.3, stratify=y, random_state=r)
        if quick:
            train, test = train[:QUICK_ROWS], test[:QUICK_ROWS]
        Xnum = X01.to_numpy(dtype=np.float64)
        splits.append(Split(X01.iloc[train], X01.iloc[test], Xnum[train], Xnum[test], [None] * X01.shape[1],
                            y[train], y[test], *((raw.iloc[train], raw.iloc[test], schema) if raw is not None
                                                 else ())))
    return splits


def auc_score(model, X, y) -> float:
    """Test AUC from the model's probabilities (K classes: one-vs-rest macro average)."""
    from sklearn.metrics import roc_auc_score

    proba = model.predict_proba(X)
    if proba.shape[1] == 2:
        return float(roc_auc_score(y, proba[:, 1]))
    return float(roc_auc_score(y, proba, multi_class="ovr", labels=list(model.classes_)))


def privacy_label(delta) -> str:
    """What the fits' ledgers (or the peer's parameters) say: ``ε-DP`` when δ = 0."""
    if delta is None:
        return "?"
    return "ε-DP" if delta == 0 else f"(ε, δ = {delta:g})-DP"


def _fit_score(make, split: Split, view: str) -> tuple[float, float, object, float]:
    """``(test accuracy, test AUC, the fitted model, fit seconds)``."""
    if view == "0/1":
        Xtr, Xte = split.x01_train, split.x01_test
    elif view == "numeric":
        Xtr, Xte = split.xnum_train, split.xnum_test
    elif view == "raw":
        Xtr, Xte = split.raw_train, split.raw_test
    elif view == "codes":
        Xtr, Xte = cut_codes(split.raw_train, split.schema)[0], cut_codes(split.raw_test, split.schema)[0]
    else:
        Xtr, Xte = split.scaled("train"), split.scaled("test")
    start = time.perf_counter()
    model = make().fit(Xtr, split.y_train)
    seconds = time.perf_counter() - start
    return float(model.score(Xte, split.y_test)), auc_score(model, Xte, split.y_test), model, seconds


def _view_name(view: str, split: Split) -> str:
    numeric = any(b is not None for b in split.bounds)
    if view == "0/1":
        return "0/1"
    if view in ("raw", "codes"):
        return f"{len(split.schema.features)} raw columns, schema" + (" cut points as codes" if view == "codes" else "")
    if not numeric:
        return "0/1"
    return "numeric, public bounds" if view == "numeric" else "numeric → [0, 1] by public bounds"


def needs_public_part(spec) -> bool:
    """Whether a registered model also learns from a public, unlabelled part (``fit(X, y, X_public=...)``).

    Those (subsample-and-aggregate, DP-Bag) are not in this table: with no
    public part they would label uniform random rows; `dpglass reproduce
    boosting` runs them with half of Adult's training part declared public.
    """
    import inspect

    return "X_public" in inspect.signature(spec.cls.fit).parameters


#: The models fitted through the schema route (DPPipeline on the raw columns) where a dataset has them.
SCHEMA_ROUTE = ("dp-gbdt", "dp-gam")


def dpglass_rows(dataset: str, splits: list[Split], epsilons, quick: bool, delta=None, models=None,
                 codes=False) -> list[Row]:
    """One row per private estimator of the registry (``models``: only those names), then, where the dataset has
    a raw table, the schema route's rows; ``codes``: also dp-gam on the schema's listed cut points (below)."""
    from dpglass.registry import get_spec, list_estimators

    rows = []
    for spec in list_estimators(private=True):
        if needs_public_part(spec) or (models is not None and spec.name not in models):
            continue  # learns from a declared public part too: compared in `dpglass reproduce boosting`
        takes_bounds = "bounds" in spec.cls().get_params()
        view = "numeric" if takes_bounds else "0/1"
        extra = {"bounds": splits[0].bounds} if takes_bounds else {}
        rows.append(_dpglass_row(dataset, spec, spec.name, view, splits, epsilons, quick, delta, extra))
    if splits[0].schema is not None:
        for name in (n for n in SCHEMA_ROUTE if models is None or n in models):
            rows.append(_dpglass_row(dataset, get_spec(name), f"{name} (DPPipeline, schema route)", "raw", splits,
                                     epsilons, quick, delta, {}))
        if codes and lists_cut_points(splits[0].schema):  # what the numbers route would give if it used them
            counts = cut_codes(splits[0].raw_train.iloc[:1], splits[0].schema)[1]
            rows.append(_dpglass_row(dataset, get_spec("dp-gam"), CODES_ROW, "codes", splits, epsilons, quick, delta,
                                     {"categories": counts, "classes": [0, 1]}))
    return rows


#: dp-gam on the raw columns as codes of the schema's listed cut points (``--cut-codes``).
CODES_ROW = "dp-gam (schema's cut points as codes)"


def _dpglass_row(dataset, spec, label, view, splits, epsilons, quick, delta, extra) -> Row:
    """One dpglass model over every ε and repetition; ``view="raw"``: inside a DPPipeline with the split's schema."""
    from dpglass.models import DPPipeline

    params = {k: v for k, v in spec.test_params.items() if k != "epsilon"} if quick else {}
    if delta is not None and "delta" in spec.cls().get_params():
        params["delta"] = delta
    row = Row(dataset, label, _view_name(view, splits[0]))
    deltas, start = set(), time.perf_counter()

    def make(eps, r):
        if view != "raw":
            return spec.make(**params, **extra, epsilon=eps, random_state=r)
        return DPPipeline(schema=splits[0].schema, model=spec.make(**params), epsilon=eps, delta=params.get("delta"),
                          random_state=r)

    try:
        for eps in epsilons:
            row.accuracy[eps], row.auc[eps] = [], []
            for r, split in enumerate(splits):
                acc, auc, model, seconds = _fit_score(lambda: make(eps, r), split, view)
                row.accuracy[eps].append(acc)
                row.auc[eps].append(auc)
                row.seconds += seconds
                deltas.add(float(model.privacy_ledger_.total()[1]))
    except Exception as exc:  # noqa: BLE001 - a broken model gets a row saying so; the others still run
        row.error = f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    row.privacy = privacy_label(max(deltas, default=None))
    print(f"  {dataset} {label}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return row


def _references():
    from sklearn.dummy import DummyClassifier
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.tree import DecisionTreeClassifier

    from dpglass.registry import make_estimator

    return [  # (label, view, make(seed))
        ("majority class", "0/1", lambda r: DummyClassifier(strategy="most_frequent")),
        ("greedy-rule-list (GreedyRL)", "0/1", lambda r: make_estimator("greedy-rule-list")),
        ("sklearn DecisionTree, depth 4", "scaled", lambda r: DecisionTreeClassifier(max_depth=4, random_state=r)),
        ("sklearn LogisticRegression", "scaled", lambda r: LogisticRegression(max_iter=1000)),
        ("sklearn HistGradientBoosting", "scaled", lambda r: HistGradientBoostingClassifier(random_state=r)),
    ]


def reference_rows(dataset: str, splits: list[Split], epsilons, only=None) -> list[Row]:
    """Non-private references (``only``: those whose label starts with one of these words): fitted once per
    repetition, the same value under every ε."""
    rows = []
    for label, view, make in _references():
        if only is not None and not any(label.startswith(word) for word in only):
            continue
        row, start = Row(dataset, label, _view_name(view, splits[0]), "non-private"), time.perf_counter()
        try:
            fits = [_fit_score(lambda: make(r), split, view) for r, split in enumerate(splits)]
            row.accuracy = {eps: [f[0] for f in fits] for eps in epsilons}
            row.auc = {eps: [f[1] for f in fits] for eps in epsilons}
        except Exception as exc:  # noqa: BLE001
            row.error = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
        rows.append(row)
        print(f"  {dataset} {label}: {time.perf_counter() - start:.1f} s", file=sys.stderr, flush=True)
    return rows


def peer_python(argument: str | None) -> str | None:
    """The peers' interpreter: ``--peer-python``, else ``$DPGLASS_PEER_PYTHON``, else None (peers skipped)."""
    return argument or os.environ.get("DPGLASS_PEER_PYTHON") or None


def _peer_arrays(splits: list[Split], epsilons, delta, peers) -> dict:
    """What the worker reads: the splits (features mapped to [0, 1] by public bounds), ε, δ and the peers."""
    arrays = {"epsilons": np.asarray(epsilons, dtype=float), "seeds": np.arange(len(splits)),
              "delta": np.asarray(1e-8 if delta is None else delta, dtype=float)}
    if peers:
        arrays["peers"] = np.array(list(peers))
    for r, split in enumerate(splits):
        arrays.update({f"X_train_{r}": split.scaled("train"), f"y_train_{r}": split.y_train,
                       f"X_test_{r}": split.scaled("test"), f"y_test_{r}": split.y_test})
        if split.schema is not None:  # the raw columns, for DP-EBM's raw-column row
            (Rtr, types), (Rte, _) = split.coded("train"), split.coded("test")
            arrays.update({f"R_train_{r}": Rtr, f"R_test_{r}": Rte, "raw_types": np.array(types)})
    return arrays


def cache_key(arrays: dict, python: str) -> str:
    """A digest of everything the worker's results depend on: its inputs, its source and the interpreter."""
    import hashlib

    digest = hashlib.sha256(WORKER.read_bytes())
    digest.update(str(Path(python).resolve()).encode())
    for key in sorted(arrays):
        value = np.ascontiguousarray(arrays[key])
        digest.update(f"{key}:{value.dtype.str}:{value.shape}".encode())
        digest.update(value.tobytes())
    return digest.hexdigest()[:20]


def _run_worker(dataset: str, arrays: dict, python: str, notes: list, cache) -> dict | None:
    """The worker's result on these arrays: read from ``cache`` (a folder) when an earlier run fitted the same
    inputs with the same worker, else fitted in one subprocess (and cached)."""
    cached = Path(cache) / f"{dataset}-{cache_key(arrays, python)}.json" if cache else None
    if cached is not None and cached.exists():
        notes.append(f"{dataset}: the peers' results were read from {cached} (fitted earlier on the same splits, "
                     "ε, δ and worker)")
        return json.loads(cached.read_text())
    with tempfile.TemporaryDirectory(prefix="dpglass-peers-") as tmp:
        np.savez(Path(tmp) / "splits.npz", **arrays)
        out = Path(tmp) / "result.json"
        try:
            done = subprocess.run([python, str(WORKER), str(Path(tmp) / "splits.npz"), str(out)],
                                  capture_output=True, text=True, env={**os.environ, **ONE_THREAD},
                                  timeout=PEER_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            notes.append(f"{dataset}: the peers' worker did not run ({type(exc).__name__}: {exc})")
            return None
        if done.returncode != 0 or not out.exists():
            notes.append(f"{dataset}: the peers' worker failed (exit {done.returncode}): "
                         f"{done.stderr.strip().splitlines()[-1:] or ''}")
            print(done.stderr, file=sys.stderr)
            return None
        text = out.read_text()
    if cached is not None:
        cached.parent.mkdir(parents=True, exist_ok=True)
        cached.write_text(text)
    return json.loads(text)


def peer_rows(dataset: str, splits: list[Split], epsilons, python: str, notes: list,
              delta=None, peers=None, cache=None) -> tuple[list[Row], dict]:
    """Run the worker in the peers' environment on these splits (``peers``: only those; ``cache``: a folder of
    earlier results); its rows and the versions it reports."""
    result = _run_worker(dataset, _peer_arrays(splits, epsilons, delta, peers), python, notes, cache)
    if result is None:
        return [], {}
    for name, reason in result["skipped"].items():
        notes.append(f"{dataset}: peer {name} skipped ({reason})")
    rows = []
    for name, res in result["results"].items():
        print(f"  {dataset} {name}: {res['seconds']} s (peers' environment)", file=sys.stderr, flush=True)
        if res["note"]:
            notes.append(f"{name}: {res['note']}")
        view = f"{len(splits[0].schema.features)} raw columns → [0, 1] / codes" if res.get("raw") else \
            _view_name("scaled", splits[0])
        row = Row(dataset, name, view, privacy_label(res["delta"]), seconds=float(res["seconds"]))
        row.accuracy = {eps: res["accuracy"][repr(float(eps))] for eps in epsilons}
        row.auc = {eps: res.get("auc", {}).get(repr(float(eps)), []) for eps in epsilons}
        rows.append(row)
    return rows, result["versions"]


def _cell(values, aucs=None) -> str:
    """Accuracy, then AUC, each mean ± sd (one repetition: the value): ``0.849 ± 0.002 · 0.902 ± 0.001``."""
    if not values:
        return "–"
    return f"{_mean_sd(values)} · {_mean_sd(aucs)}" if aucs else _mean_sd(values)


def _mean_sd(values) -> str:
    return f"{values[0]:.3f}" if len(values) == 1 else f"{np.mean(values):.3f} ± {np.std(values, ddof=1):.3f}"


def format_table(rows: list[Row], epsilons) -> str:
    """Markdown: one row per (dataset, model), one column per ε."""
    head = ["dataset", "model", "input", "privacy"] + [f"ε = {eps:g}" for eps in epsilons]  # accuracy · AUC
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        cells = [_cell(row.accuracy.get(eps), row.auc.get(eps)) for eps in epsilons]
        if row.error:
            cells = [f"failed: {row.error}"[:60]] + ["–"] * (len(epsilons) - 1)
        lines.append("| " + " | ".join([row.dataset, row.model, row.input, row.privacy] + cells) + " |")
    return "\n".join(lines)


def time_ratio(dataset: str, rows: list[Row]) -> list[str]:
    """The fit time of dp-gam's schema route over that of DP-EBM on the raw columns, summed over the same fits
    (every ε and repetition) of this run; nothing when either row is missing."""
    gam = next((r for r in rows if r.dataset == dataset and r.model.startswith("dp-gam (DPPipeline")
                and not r.error), None)
    ebm = next((r for r in rows if r.dataset == dataset and r.model.endswith("raw columns")), None)
    if gam is None or ebm is None or ebm.seconds <= 0:
        return []
    return [f"{dataset}: fit time in this run, dp-gam through the schema route {gam.seconds:.1f} s, DP-EBM on the "
            f"raw columns {ebm.seconds:.1f} s (same fits): ratio dp-gam / DP-EBM = {gam.seconds / ebm.seconds:.2f}"]


def _versions(peer_versions: dict) -> str:
    import sklearn

    import dpglass

    try:
        where = Path(dpglass.__file__).parent  # the dpglass that ran (PYTHONPATH may point at another checkout)
        commit = subprocess.run(["git", "-C", str(where), "describe", "--always", "--dirty"],
                                capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        commit = ""
    ours = (f"dpglass {dpglass.__version__}{f' ({commit})' if commit else ''}, python {platform.python_version()}, "
            f"numpy {np.__version__}, scikit-learn {sklearn.__version__}")
    if not peer_versions:
        return ours
    theirs = ", ".join(f"{k} {v}" for k, v in peer_versions.items())
    return f"{ours}; peers' environment: {theirs}"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS),
                        help="built-in dataset names (default: adult compas)")
    parser.add_argument("--epsilons", nargs="+", type=float, default=list(EPSILONS))
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 5; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="smoke test: 1 repetition, small models, ≤ 2000 rows")
    parser.add_argument("--peer-python", default=None,
                        help="interpreter of the peers' environment (default: $DPGLASS_PEER_PYTHON; none: skip peers)")
    parser.add_argument("--delta", type=float, default=None,
                        help="delta of every dpglass model that takes one and of DP-EBM's second row (default: "
                        "each model's own; DP-EBM's second row at dpglass's 1e-8)")
    parser.add_argument("--adult-reps", type=int, default=None,
                        help="repetitions on Adult's canonical split (they redraw the noise; default: --reps)")
    parser.add_argument("--models", nargs="+", default=None,
                        help="only these dpglass models (registry names; default: every private one)")
    parser.add_argument("--references", nargs="+", default=None,
                        help="only the non-private references whose label starts with one of these words "
                        "(e.g. majority; 'none': no reference; default: all)")
    parser.add_argument("--peers", nargs="+", default=None,
                        help="only these peers (the worker's names; dp-ebm: DP-EBM's two rows at dpglass's δ, "
                        "on the 0/1 or one-hot columns and on the raw ones)")
    parser.add_argument("--peer-cache", default=PEER_CACHE,
                        help=f"folder of the peers' results, reused when the splits, ε, δ, peers and worker are the "
                        f"same (default {PEER_CACHE}; '' to refit)")
    parser.add_argument("--cut-codes", action="store_true",
                        help="also dp-gam on the raw columns as codes of the schema's listed cut points, where every "
                        "numeric column lists them (COMPAS, German)")
    parser.add_argument("--out", default=None, help="also write the table, command and versions to this file")
    args = parser.parse_args(argv)
    if args.reps is None:
        args.reps = 1 if args.quick else 5
    if args.adult_reps is None:
        args.adult_reps = args.reps
    if min(args.reps, args.adult_reps) < 1:
        parser.error("--reps and --adult-reps must be at least 1")
    if args.peers:  # "dp-ebm": DP-EBM's two rows at the δ of dpglass's models (0/1 or one-hot, raw columns)
        args.peers = [p for name in args.peers for p in (list(EBM_ROWS) if name.lower() == "dp-ebm" else [name])]
    if args.references == ["none"]:
        args.references = []
    from dpglass.registry import list_estimators

    unknown = sorted(set(args.models or ()) - {s.name for s in list_estimators(private=True)})
    if unknown:
        parser.error(f"--models: no private dpglass model named {', '.join(unknown)}")
    return args


def main(argv=None) -> str:
    import warnings

    import sklearn.ensemble  # noqa: F401 - loads the OpenMP runtime, so that threadpool_limits finds it
    from threadpoolctl import threadpool_limits

    from dpglass.exceptions import UndeclaredClassesWarning

    args = parse_args(argv)
    with threadpool_limits(limits=1), warnings.catch_warnings():  # see ONE_THREAD
        warnings.simplefilter("ignore", UndeclaredClassesWarning)  # the labels 0/1 of these datasets are public
        return _run(args, argv)


def _run(args, argv) -> str:
    start = time.perf_counter()
    python = peer_python(args.peer_python)
    notes = [] if python else ["peers skipped: no peers' interpreter (--peer-python or $DPGLASS_PEER_PYTHON)"]
    rows, peer_versions = [], {}
    for name in args.datasets:
        splits = load_splits(name, args.adult_reps if name == "adult" else args.reps, args.quick)
        rows += reference_rows(name, splits, args.epsilons, args.references)
        rows += dpglass_rows(name, splits, args.epsilons, args.quick, args.delta, args.models, args.cut_codes)
        if python:
            found, peer_versions = peer_rows(name, splits, args.epsilons, python, notes, args.delta, args.peers,
                                             args.peer_cache)
            rows += found
        notes += time_ratio(name, rows)
    command = "python benchmarks/peers.py " + shlex.join(sys.argv[1:] if argv is None else argv)
    reps = f"{args.reps}" if args.adult_reps == args.reps else f"{args.adult_reps} (Adult) or {args.reps}"
    comparison = comparison_table(rows, args.epsilons)
    if comparison and any(r.model == GAM_ROWS[0] for r in rows):  # the schema route's; then dp-gam's own input
        comparison += "\n\n" + comparison_table(rows, args.epsilons, GAM_ROWS[1:])
    if comparison and any(r.model == CODES_ROW for r in rows):
        comparison += "\n\n" + comparison_table(rows, args.epsilons, (CODES_ROW,))
    text = "\n".join([
        format_table(rows, args.epsilons), "",
        (f"Test accuracy · test AUC, each mean ± sd over {reps} repetition(s)"
         f"{' (quick mode)' if args.quick else ''}."),
        *(["", comparison] if comparison else []), "",
        f"Command: `{command.strip()}`",
        f"Versions: {_versions(peer_versions)}",
        f"Wall time: {time.perf_counter() - start:.0f} s",
        *dict.fromkeys(notes),
    ])
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")
    return text


if __name__ == "__main__":
    main()
