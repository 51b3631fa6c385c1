"""A resumable sweep engine: datasets x methods x epsilon grid x seeds -> one tidy table.

A sweep is described by a :class:`SweepConfig`: datasets (built-in names or
CSV files), methods (a registered estimator with fixed parameters), an epsilon
grid and a number of seeds.  :func:`run_sweep` fits every cell and appends one
CSV row per (dataset, method, epsilon, seed) cell as soon as the cell's unit of
work (all cells of one dataset and seed) is done.

Reproducibility and resume
--------------------------
* Every random choice comes from a :class:`numpy.random.SeedSequence` addressed
  by the cell (:func:`cell_seed`): the train/test split of (dataset, seed) from
  the node ``(dataset, seed)`` of the tree rooted at ``base_seed``, and the
  model's noise from its child ``(method, epsilon)``.  Names and epsilon values
  (not positions in a list) address the nodes, so a cell gives the same row
  whatever else the sweep contains and in whatever order cells are run.
* Rows are appended and flushed per unit; a killed sweep (even ``kill -9``)
  loses at most the units in flight and a partial last line, which the next
  run discards.  The next run with the same configuration computes only the
  missing cells, then rewrites the table in canonical order.  The final table
  is identical to an uninterrupted run's in every column except
  ``fit_seconds`` (wall-clock time).
* A second file ``<table>.config.json`` holds the configuration; resuming
  with a different one is refused.

Speed
-----
A model family may share work across the cells of a unit (every method and
epsilon of one dataset and seed) through the hook
:func:`dpglass_experiments.shared_fit.shared_fitter`; the rows are the same as
fitting the estimators (rule lists share their counts across the epsilon grid;
``tests/test_experiments.py`` checks it).  Units run in parallel worker
processes (joblib, ``n_jobs``), with one BLAS thread each.

Where the pieces are
--------------------
:mod:`~dpglass_experiments.specs` (what a sweep runs),
:mod:`~dpglass_experiments.seeding` (seeds and splits),
:mod:`~dpglass_experiments.cells` (fitting one unit), this module (the table:
resume, canonical order, parallel units, progress, summaries).

Columns
-------
``dataset, method, epsilon`` (NaN for non-private methods), ``seed``,
``train_accuracy``, ``test_accuracy`` (``validation_accuracy`` when
``holdout="validation"``), ``n_rules``, ``epsilon_spent``, ``delta_spent``
(the ledger total; NaN for non-private methods), ``guarantee`` (the weakest
ledger entry: ``proven``, ``paper-claim`` or ``none``), ``stop_reason``
(``error: ...`` if the fit raised an error, with NaN metrics),
``vulnerability`` (paper 001's distributional-overfitting vulnerability V,
:func:`dpglass.audit.membership.distributional_overfitting`, of the rule that
catches each record; NaN for models without rules), ``fit_seconds``.
"""

from __future__ import annotations

import csv
import json
import math
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpglass.exceptions import InvalidParameterError
from dpglass_experiments.cells import run_unit
from dpglass_experiments.seeding import eps_key
from dpglass_experiments.specs import SweepConfig

__all__ = ["run_sweep", "load_results", "summarise", "timed_sweep"]


# ------------------------------------------------------------------ files
def _format(value) -> str:
    if isinstance(value, (float, np.floating)):
        return repr(float(value))
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    return str(value)


def _scan(path: Path, columns: list[str]) -> set:
    """Keys of the complete rows of ``path``; cut a partial last line off the file."""
    with open(path, "rb") as fh:
        data = fh.read()
    if not data.endswith(b"\n"):
        cut = data.rfind(b"\n") + 1
        with open(path, "r+b") as fh:
            fh.truncate(cut)
        data = data[:cut]
    lines = data.decode("utf-8").splitlines()
    if not lines:
        return set()
    header = next(csv.reader([lines[0]]))
    if header != columns:
        raise InvalidParameterError(f"{path} has columns {header}, not the sweep's {columns}.")
    done = set()
    for rec in csv.reader(lines[1:]):
        if len(rec) == len(columns):
            done.add((rec[0], rec[1], eps_key(float(rec[2])), int(rec[3])))
    return done


def load_results(path) -> pd.DataFrame:
    """Read a sweep table exactly (floats round-trip; strings stay strings)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in frame.columns:
        if col in ("dataset", "method", "guarantee", "stop_reason"):
            continue
        try:
            frame[col] = frame[col].map(float)
        except ValueError:  # an extra column of text (e.g. JSON of chosen parameters); "nan" is missing
            frame[col] = frame[col].map(lambda v: math.nan if v == "nan" else v)
    if "seed" in frame:
        frame["seed"] = frame["seed"].astype(np.int64)
    return frame


def _canonical(frame: pd.DataFrame, config: SweepConfig) -> pd.DataFrame:
    d_pos = {d.name: i for i, d in enumerate(config.datasets)}
    m_pos = {m.name: i for i, m in enumerate(config.methods)}
    e_pos = {eps_key(e): i for i, e in enumerate(config.epsilons)}
    order = pd.DataFrame({
        "d": frame["dataset"].map(d_pos), "m": frame["method"].map(m_pos),
        "e": [e_pos.get(eps_key(e), -1) for e in frame["epsilon"]], "s": frame["seed"],
    })
    frame = frame.loc[order.sort_values(["d", "m", "e", "s"], kind="stable").index]
    frame = frame.drop_duplicates(subset=["dataset", "method", "epsilon", "seed"], keep="first")
    return frame.reset_index(drop=True)


def _write_csv(frame: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(list(frame.columns))
        for rec in frame.itertuples(index=False):
            writer.writerow([_format(v) for v in rec])
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _units(config: SweepConfig, done: set):
    """(dataset index, seed, [(method index, eps)]) for every unit with missing cells."""
    todo = {}
    for d, seed, m, eps in config.cells():
        key = (config.datasets[d].name, config.methods[m].name, eps_key(eps), seed)
        if key not in done:
            todo.setdefault((d, seed), []).append((m, eps))
    # seeds outermost so that every dataset progresses together (a steady ETA)
    return [(d, s, cells) for (d, s), cells in sorted(todo.items(), key=lambda kv: (kv[0][1], kv[0][0]))]


def run_sweep(
    config: SweepConfig,
    path,
    *,
    n_jobs: int = 2,
    progress: bool = True,
    resume: bool = True,
    fast: bool = True,
    stop_after: int | None = None,
    data_home=None,
    description: str | None = None,
):
    """Run (or resume) a sweep and return its table.

    Parameters
    ----------
    config : SweepConfig
    path : str or Path
        The CSV table; ``<path>.config.json`` stores the configuration.
    n_jobs : int, default=2
        Worker processes (units of one dataset and seed run in parallel).
    progress : bool, default=True
        Show a progress bar with an ETA (tqdm, on stderr).
    resume : bool, default=True
        Keep the rows already in ``path`` and compute only the missing cells
        (the configuration must be the same).  False starts afresh.
    fast : bool, default=True
        Use a model family's shared fit where it has one (same rows, faster;
        rule lists share their counts across the epsilon grid).
        False fits every estimator as a user would (for benchmarks).
    stop_after : int or None
        Stop after writing this many new rows, leaving the table unfinished,
        as an interruption would (for tests); returns None then.
    data_home : path or None
        Where built-in datasets are found.

    Returns
    -------
    pandas.DataFrame or None
        The table in canonical order (dataset, method, epsilon, seed as in the
        configuration), or None if stopped by ``stop_after``.
    """
    from tqdm.auto import tqdm

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = path.with_name(path.name + ".config.json")
    columns = config.columns
    wanted = config.to_dict()
    done: set = set()
    if resume and path.exists():
        if meta.exists() and json.loads(meta.read_text()) != wanted:
            raise InvalidParameterError(
                f"{path} was written by a different sweep configuration ({meta}); pass resume=False "
                "(or --fresh) to start again, or use another output path."
            )
        done = _scan(path, columns)
    elif path.exists():
        path.unlink()
    meta.write_text(json.dumps(wanted, indent=1))

    units = _units(config, done)
    total = sum(len(c) for _, _, c in units)
    written = 0
    new_file = not path.exists() or path.stat().st_size == 0
    if units:
        with open(path, "a", newline="", encoding="utf-8") as fh, tqdm(
            total=total, unit="fit", disable=not progress, desc=description or path.stem, smoothing=0.05
        ) as bar:
            writer = csv.writer(fh, lineterminator="\n")
            if new_file:
                writer.writerow(columns)
            for rows in _execute(config, units, n_jobs, fast, data_home):
                if stop_after is not None:
                    rows = rows[: max(stop_after - written, 0)]
                for row in rows:
                    writer.writerow([_format(row[c]) for c in columns])
                fh.flush()
                os.fsync(fh.fileno())
                written += len(rows)
                bar.update(len(rows))
                if stop_after is not None and written >= stop_after:
                    return None
    frame = _canonical(load_results(path), config)
    _write_csv(frame, path)
    return frame


def _execute(config, units, n_jobs, fast, data_home):
    if n_jobs == 1 or len(units) == 1:
        for d, seed, cells in units:
            yield run_unit(config, d, seed, cells, fast, data_home)
        return
    from joblib import Parallel, delayed

    tasks = (delayed(run_unit)(config, d, seed, cells, fast, data_home) for d, seed, cells in units)
    try:
        parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered", batch_size=1)
    except ValueError:  # joblib < 1.4
        parallel = Parallel(n_jobs=n_jobs, return_as="generator", batch_size=1)
    yield from parallel(tasks)


# --------------------------------------------------------------- summaries
def summarise(frame: pd.DataFrame, value: str, by=("dataset", "method", "epsilon")) -> pd.DataFrame:
    """Mean, standard error of the mean (sd / sqrt(n), ddof=1), variance and n of ``value`` per group."""
    g = frame.groupby(list(by), sort=False, dropna=False)[value]
    out = g.agg(mean="mean", sd="std", n="count").reset_index()
    out["se"] = out["sd"] / np.sqrt(out["n"])
    out["var"] = out["sd"] ** 2
    return out[[*by, "mean", "se", "var", "n"]]


def timed_sweep(config, path, timings, key, **kw):
    """Run a sweep; accumulate its fits and seconds over resumed runs in ``<path>.timing.json``."""
    resume = kw.get("resume", True)
    log_path = path.with_name(path.name + ".timing.json")
    before = len(_scan(path, config.columns)) if path.exists() and resume else 0
    past = json.loads(log_path.read_text()) if resume and before and log_path.exists() else {}
    start = time.perf_counter()
    frame = run_sweep(config, path, **kw)
    seconds = time.perf_counter() - start
    computed = len(frame) - before
    total = {"computed_fits": past.get("computed_fits", 0) + computed,
             "seconds": round(past.get("seconds", 0.0) + (seconds if computed else 0.0), 2),
             "runs": past.get("runs", 0) + (1 if computed else 0),
             "n_jobs": sorted(set(past.get("n_jobs", [])) | ({kw.get("n_jobs", 2)} if computed else set()))}
    log_path.write_text(json.dumps(total))
    fps = total["computed_fits"] / total["seconds"] if total["seconds"] > 0 else None
    timings[key] = dict(total, rows=len(frame), fits_per_second=round(fps, 1) if fps else None)
    return frame
