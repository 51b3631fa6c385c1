"""Scale: fitting on 10^6 .. 5*10^7 rows x 50 binary features, in memory and through Dask (issue 15).

Generates seeded synthetic data with a planted rule list as parquet files
(never committed; ``--data-dir``, default a temporary folder kept between
runs), then, for each size:

* in memory (a fresh process per model): the parquet files read into one
  uint8 matrix, then ``DPRuleListClassifier``, ``SmoothBoostClassifier``
  (stumps, or joint trees of 3 nodes), ``DPGradientBoostingClassifier``, ``DPLogisticRegression`` or
  ``SubsampleAggregateClassifier`` (100 teachers) or ``DPGAMClassifier`` at epsilon = 1 (their
  defaults otherwise): fit time, fit CPU time per row (the machine is shared:
  CPU time is what compares sizes), and peak memory = the input plus the
  growth of the process's peak RSS during the fit, as a multiple of the
  input's size as uint8 (n x 50 bytes);
* through Dask (a fresh process): a LocalCluster of 2 worker processes (1
  thread each) fits the same models from ``dd.read_parquet``: fit time, the
  client's peak RSS (it also runs the scheduler) and each worker's peak RSS;
  with the model checked equal to the in-memory one when both ran; each
  model's in-memory and Dask fits run back to back (the machine's load
  swings: the ratio is taken between neighbouring runs, the 1-minute load
  average beside it), and ``--parts 16,auto`` times the Dask fit with each
  count of kept parts (a measurement hook: the count never changes the model);
* the rules recovered at epsilon = 1: how many of the 3 planted rules the DP
  rule list's rules are;
* the passes over the data of each Dask fit: one over the files (read, bin,
  reduce, merge: the table, left on the workers) plus one over the persisted
  table per statistic the learner asks of its parts
  (:mod:`dpglass.aggregates.parts`; 0 for a model that gathers the table to
  the client), and the Dask / in-memory time ratio.

Planted model (public): features ``f00..f49`` independent Bernoulli(p_j),
p_j cycling through 0.2, 0.3, 0.4, 0.5; the label is 1 if ``f00 and f01``,
else 1 if ``f02 and not f03``, else 1 if ``f04 and f05``, else 0, flipped
with probability 0.05.  Nearly every row is distinct (50 bits), which is the
worst case for the pattern table.

Run (from the repository root)::

    PYTHONPATH=src python benchmarks/scale.py --rows 1e6 1e7          # what the README table shows
    PYTHONPATH=src python benchmarks/scale.py --rows 5e7 --no-memory  # Dask only above --max-memory-rows
    PYTHONPATH=src python benchmarks/scale.py --rows 1e7 --models dp-gbdt --parts 16,auto  # kept parts: before/after
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

D = 50
FEATURES = [f"f{j:02d}" for j in range(D)]
PLANTED = [((0, True), (1, True)), ((2, True), (3, False)), ((4, True), (5, True))]
FILE_ROWS = 1_000_000


# ---------------------------------------------------------------- generation
def _block(n: int, seed: np.random.SeedSequence):
    rng = np.random.default_rng(seed)
    p = np.array([0.2, 0.3, 0.4, 0.5])[np.arange(D) % 4]
    X = (rng.random((n, D), dtype=np.float32) < p).astype(np.uint8)
    y = np.zeros(n, dtype=np.uint8)
    undecided = np.ones(n, dtype=bool)
    for rule in PLANTED:
        caught = undecided.copy()
        for j, v in rule:
            caught &= X[:, j] == int(v)
        y[caught] = 1
        undecided &= ~caught
    y ^= (rng.random(n) < 0.05).astype(np.uint8)
    return X, y


def generate(n: int, root: Path, seed: int = 0) -> Path:
    """Write ``n`` rows as parquet files of at most 10^6 rows (at least 4 files); reuse a finished folder."""
    import pandas as pd

    folder = root / f"rows{n}-seed{seed}"
    if (folder / "DONE").exists():
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    per = min(FILE_ROWS, -(-n // 4))
    sizes = [min(per, n - s) for s in range(0, n, per)]
    for i, (size, child) in enumerate(zip(sizes, np.random.SeedSequence(seed).spawn(len(sizes)))):
        X, y = _block(size, child)
        frame = pd.DataFrame(X, columns=FEATURES)
        frame["y"] = y
        frame.to_parquet(folder / f"part-{i:05d}.parquet", index=False)
    (folder / "DONE").write_text(str(n))
    return folder


# ------------------------------------------------------------------- models
def _models():
    from dpglass.models import (
        DPGAMClassifier,
        DPGradientBoostingClassifier,
        DPLogisticRegression,
        DPRuleListClassifier,
        SmoothBoostClassifier,
        SubsampleAggregateClassifier,
    )

    return {
        # certified-pf: the default when the README's scale table was measured (now errors-pf)
        "rule list": lambda: DPRuleListClassifier(epsilon=1.0, mechanism="certified-pf", classes=[0, 1],
                                                  random_state=0),
        "stumps": lambda: SmoothBoostClassifier(epsilon=1.0, classes=[0, 1], random_state=0),
        # joint trees of 3 internal nodes (the default tree learner)
        "trees": lambda: SmoothBoostClassifier(epsilon=1.0, weak_learner="tree", classes=[0, 1], random_state=0),
        "dp-gbdt": lambda: DPGradientBoostingClassifier(epsilon=1.0, classes=[0, 1], random_state=0),
        "dp-lr": lambda: DPLogisticRegression(epsilon=1.0, classes=[0, 1], random_state=0),
        # 100 teachers, the student labelled on 1,000 uniform public rows (no public part given)
        "teachers": lambda: SubsampleAggregateClassifier(epsilon=1.0, classes=[0, 1], random_state=0),
        "dp-gam": lambda: DPGAMClassifier(epsilon=1.0, classes=[0, 1], random_state=0),
    }


def _comparable(model_dict: dict) -> str:
    """The model as JSON with the in-memory fit's default names (x0, ...) in place of f00, ... (Dask reads names)."""
    data = dict(model_dict)
    data.pop("feature_names", None)
    data.pop("has_feature_names", None)
    text = json.dumps(data, sort_keys=True)
    for j in reversed(range(D)):
        text = text.replace(f'"f{j:02d}"', f'"x{j}"').replace(f'"not f{j:02d}"', f'"not x{j}"')
    return text


def _recovered(model) -> int:
    found = {tuple(sorted((c.feature, bool(c.value)) for c in r.conditions)) for r in model.rules_}
    return sum(tuple(sorted(rule)) in found for rule in PLANTED)


# ---------------------------------------------------------------- children
def run_memory(folder: str, models: list[str]) -> dict:
    """One model (``models[0]``) in this fresh process: fit time and peak RSS growth during the fit."""
    import pyarrow.parquet as pq

    files = sorted(Path(folder).glob("*.parquet"))
    n = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    X = np.empty((n, D), dtype=np.uint8)
    y = np.empty(n, dtype=np.uint8)
    at = 0
    for f in files:
        t = pq.read_table(f)
        k = t.num_rows
        for j, name in enumerate(FEATURES):
            X[at : at + k, j] = t.column(name).to_numpy()
        y[at : at + k] = t.column("y").to_numpy()
        at += k
        del t
    name = models[0]
    model = _models()[name]()
    rss_before = _rss()  # X and y are resident
    start, cpu = time.perf_counter(), time.process_time()
    model.fit(X, y)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = _peak()
    # peak while fitting, minus what the process held before it besides the data, over the data
    out = {"rows": n, "input_bytes": X.nbytes, "maxrss_bytes": peak,
           name: {"seconds": seconds, "cpu_seconds": cpu, "peak_x_input": (peak - rss_before + X.nbytes) / X.nbytes,
                  "model": model.to_dict()}}
    if name == "rule list":
        out[name]["recovered"] = _recovered(model)
    return out


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak() -> int:
    """This process's peak RSS (VmHWM: reset by exec). ru_maxrss is not: a child forked from a process that had
    grown (the parent that wrote the data, the client that starts the workers) reports the parent's peak."""
    import resource

    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _worker_maxrss():
    return _peak()


def _count_statistics():
    """Count the statistics a fit asks of the table's parts (each one pass over the persisted parts)."""
    from dpglass.aggregates.parts import TableParts

    calls = {"n": 0}
    results = TableParts.results

    def counted(self, fn, *args):
        calls["n"] += self.client is not None
        return results(self, fn, *args)

    TableParts.results = counted
    return calls


def _set_kept_parts(parts: str) -> None:
    """Measurement only: a kept table cut into ``parts`` parts (``"auto"``: the library's choice), patched where
    the kept table is built (its count never changes the model: the sums are exact)."""
    if parts == "auto":
        return
    from dpglass.aggregates import dask_backend

    module = sys.modules[dask_backend._kept_table.__module__]
    module.kept_parts = lambda client: int(parts)


def run_dask(folder: str, models: list[str], parts: str = "auto") -> dict:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    _set_kept_parts(parts)
    calls = _count_statistics()
    out = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit=0,
                      dashboard_address=None, silence_logs=40) as cluster, Client(cluster) as client:
        # warm the workers' imports and parquet reader (the first fit would pay for them)
        client.run(lambda: [__import__(m) for m in ("dpglass.aggregates.dask_backend", "pyarrow.parquet")])
        dd.read_parquet(str(Path(folder) / "*.parquet"))["y"].sum().compute()
        for name in models:
            frame = dd.read_parquet(str(Path(folder) / "*.parquet"))
            model = _models()[name]()
            before = _peak()  # cluster, scheduler, imports
            start, calls["n"] = time.perf_counter(), 0
            model.fit(frame[FEATURES], frame["y"])
            out[name] = {"seconds": time.perf_counter() - start, "model": model.to_dict(),
                         "statistics": calls["n"], "client_maxrss_before_fit_bytes": before}
            if name == "rule list":
                out[name]["recovered"] = _recovered(model)
        out["workers_maxrss_bytes"] = sorted(client.run(_worker_maxrss).values())
        out["partitions"] = frame.npartitions
    out["client_maxrss_bytes"] = _peak()
    return out


def _child(mode: str, folder: Path, models: list[str], parts: str = "auto") -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    res = subprocess.run([sys.executable, __file__, "--child", mode, str(folder), ",".join(models), parts],
                         capture_output=True, text=True, env=env)
    if res.returncode != 0:
        return {"error": res.stderr.strip().splitlines()[-1] if res.stderr.strip() else f"exit {res.returncode}"}
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------- main
def _gb(b) -> str:
    return f"{b / 2**30:.2f}"


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return fh.read().split()[0]


def _row(n: int, name: str, parts: str, m: dict, dsk: dict, load: str) -> list:
    d = dsk.get(name, {})
    same = "" if not (m and d) else ("yes" if _comparable(m["model"]) == _comparable(d["model"]) else "NO")
    return [
        f"{n:.0e}".replace("+0", ""), name, parts if d else "-",
        f"{m['seconds']:.1f}" if m else "-",
        f"{m['cpu_seconds'] / n * 1e9:.0f}" if m else "-",
        f"{m['peak_x_input']:.2f}x" if m else "-",
        f"{d['seconds']:.1f}" if d else dsk.get("error", "-"),
        f"{d['seconds'] / m['seconds']:.2f}" if (m and d) else "-",
        f"1 + {d['statistics']}" if d and "statistics" in d else "-",
        _gb(dsk["client_maxrss_bytes"]) if d else "-",
        " / ".join(_gb(b) for b in dsk["workers_maxrss_bytes"]) if d else "-",
        same,
        str(d.get("recovered", m.get("recovered", ""))) + ("/3" if name == "rule list" else ""),
        load,
    ]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", nargs="+", default=["1e6", "1e7"], help="sizes (default 1e6 1e7)")
    ap.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "dpglass-scale"))
    ap.add_argument("--models", default="rule list,stumps,trees,dp-gbdt,dp-lr,teachers,dp-gam",
                    help="comma-separated: 'rule list', 'stumps', 'trees', 'dp-gbdt', 'dp-lr', 'teachers', 'dp-gam'")
    ap.add_argument("--parts", default="auto",
                    help="comma-separated kept part counts to time the Dask fits with, e.g. '16,auto' "
                         "(default 'auto': the library's choice, two a worker)")
    ap.add_argument("--max-memory-rows", type=float, default=2e7, help="skip the in-memory fit above this")
    ap.add_argument("--no-memory", action="store_true", help="skip every in-memory fit")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        mode, folder, models, parts = args.child
        out = run_memory(folder, models.split(",")) if mode == "memory" else run_dask(folder, models.split(","), parts)
        print(json.dumps(out))
        return 0

    models = [m.strip() for m in args.models.split(",")]
    rows = []
    for size in args.rows:
        n = int(float(size))
        t = time.perf_counter()
        folder = generate(n, Path(args.data_dir))
        print(f"# {n:.0e} rows: data in {folder} ({time.perf_counter() - t:.0f} s)", file=sys.stderr)
        for name in models:  # each model's fits back to back, one process each (its peak RSS is that fit's)
            mem = {}
            if not (args.no_memory or n > args.max_memory_rows):
                load = _load()
                mem = _child("memory", folder, [name])
                print(f"#   in memory, {name} (load {load}): "
                      f"{json.dumps({k: v for k, v in mem.items() if k not in models})}", file=sys.stderr)
            for parts in args.parts.split(","):
                load = _load() if not mem else load
                dsk = _child("dask", folder, [name], parts)
                print(f"#   dask, parts {parts}: {json.dumps({k: v for k, v in dsk.items() if k not in models})}",
                      file=sys.stderr)
                rows.append(_row(n, name, parts, mem.get(name, {}), dsk, f"{load}-{_load()}"))
                print(f"#   {rows[-1]}", file=sys.stderr, flush=True)
    head = ["rows", "model", "kept parts", "in-memory fit (s)", "in-memory CPU per row (ns)", "in-memory peak / input",
            "Dask fit (s)", "Dask / in memory", "passes over the data (files + persisted table)",
            "Dask client peak (GiB)", "Dask workers peak (GiB)", "same model", "planted rules recovered (eps=1)",
            "load (1 min, before-after)"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        print("| " + " | ".join(r) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
