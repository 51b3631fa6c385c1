"""What every reproduction shares: its run (folders, plan, sweeps, timings) and its entry point.

A reproduction declares a :class:`Reproduction`: its two plans (the paper's
full grid and a quick smoke test), a function that runs its experiments on a
:class:`Run` (sweeps, figures, tables) and returns what its report needs, and
the function that writes ``report.md`` from that.  :meth:`Reproduction.reproduce`
does the rest the same way for every paper: folders, the per-fit tables under
``raw/`` (resumable), ``timings.json``, the report and the closing line.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from dpglass_experiments.specs import SweepConfig
from dpglass_experiments.sweep import timed_sweep

__all__ = ["Reproduction", "Run", "dataset_labels"]


def dataset_labels(paper_datasets: dict) -> tuple[dict, dict]:
    """Figure panels and paper names of the datasets standing for a paper's: ``{name: "Adult (adult)"}``, ``{name: "Adult"}``."""
    panels = {spec.name: f"{paper} ({spec.name})" for paper, spec in paper_datasets.items()}
    names = {spec.name: paper for paper, spec in paper_datasets.items()}
    return panels, names


@dataclass
class Run:
    """One run of a reproduction: where it writes, what it runs, how long each part took."""

    out: Path
    raw: Path
    plan: Any
    quick: bool
    n_jobs: int = 2
    progress: bool = True
    fresh: bool = False
    data_home: Any = None
    base_seed: int = 0
    log: Callable = print
    timings: dict = field(default_factory=dict)

    def config(self, datasets, methods, epsilons, n_seeds, **kw) -> SweepConfig:
        """A :class:`SweepConfig` rooted at this run's seed."""
        return SweepConfig(datasets, methods, epsilons, n_seeds, base_seed=self.base_seed, **kw)

    def sweep(self, config: SweepConfig, table: str, key: str, description: str):
        """Run (or resume) ``config`` into ``raw/<table>``; its fits and seconds go to ``timings[key]``."""
        return timed_sweep(config, self.raw / table, self.timings, key, description=description, n_jobs=self.n_jobs,
                           progress=self.progress, resume=not self.fresh, data_home=self.data_home)

    @contextmanager
    def timed(self, key: str):
        """Time a part that is not a sweep: ``timings[key] = {"seconds": ..., **what the block adds}``."""
        extra: dict = {}
        start = time.perf_counter()
        yield extra
        self.timings[key] = {"seconds": round(time.perf_counter() - start, 2), **extra}


@dataclass(frozen=True)
class Reproduction:
    """A paper's reproduction: its plans, its experiments and its report.

    Parameters
    ----------
    full, quick : plan
        The paper's sizes and a smoke test's (any object; the experiments read it).
    experiments : callable ``(Run) -> results``
        Runs every experiment, writes figures and tables into ``run.out``.
    report : callable ``(Run, results) -> None``
        Writes ``report.md`` into ``run.out``.
    """

    full: Any = field(repr=False)
    quick: Any = field(repr=False)
    experiments: Callable
    report: Callable

    def reproduce(self, out, *, quick=False, n_jobs=2, progress=True, fresh=False, raw_dir=None, data_home=None,
                  base_seed=0, plan=None, log=print) -> dict:
        """Run every experiment and write figures, tables and ``report.md`` into ``out``.

        Parameters
        ----------
        out : path
            Output folder (created).
        quick : bool
            Use the quick plan (a smoke test) instead of the full one.
        n_jobs : int
            Worker processes.
        fresh : bool
            Recompute the per-fit tables instead of resuming an earlier run.
        raw_dir : path or None
            Where the per-fit tables go (default ``out/raw``).
        plan : plan or None
            Overrides the plan chosen by ``quick``.

        Returns
        -------
        dict
            The timings of each part.
        """
        out = Path(out)
        raw = Path(raw_dir) if raw_dir is not None else out / "raw"
        out.mkdir(parents=True, exist_ok=True)
        raw.mkdir(parents=True, exist_ok=True)
        run = Run(out, raw, plan or (self.quick if quick else self.full), quick, n_jobs, progress, fresh, data_home,
                  base_seed, log, {"plan": "quick" if quick else "full", "n_jobs": n_jobs})
        start = time.perf_counter()
        results = self.experiments(run)
        run.timings["total_seconds"] = round(time.perf_counter() - start, 2)
        (out / "timings.json").write_text(json.dumps(run.timings, indent=1))
        self.report(run, results)
        log(f"done in {run.timings['total_seconds']:.0f} s; report: {out / 'report.md'}")
        return run.timings
