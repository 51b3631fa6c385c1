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
Rule lists (``greedy-rule-list``, ``dp-rule-list``) take a fast path that gives
the same rows as fitting the estimators (``tests/test_experiments.py`` checks
it): the training set's distinct rows, Gram matrices and candidate counts are
built once per (dataset, seed) and shared by every method and epsilon through a
:class:`~dpglass.models._candidates.CountCache` (counts depend only on the set
of rules already chosen), and accuracies and the vulnerability are computed on
the distinct rows of the training and held-out data.  Units run in parallel
worker processes (joblib, ``n_jobs``), with one BLAS thread each.

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
import dataclasses
import json
import math
import os
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = [
    "DatasetSpec",
    "MethodSpec",
    "SweepConfig",
    "cell_seed",
    "split_indices",
    "run_sweep",
    "load_results",
    "summarise",
]

#: Memoised count sets per (dataset, seed, candidate set); ~2 * 8 bytes * candidates each.
MEMO_ENTRIES = 2048


# ------------------------------------------------------------------- specs
@dataclass(frozen=True)
class DatasetSpec:
    """A dataset of a sweep.

    Parameters
    ----------
    name : str
        Its label in the results (no commas or quotes).
    source : str or None
        A built-in dataset name (``dpglass datasets``) or the path of a CSV
        file of 0/1 feature columns; None means ``name``.
    target : str or None
        The label column of a CSV source (binary; the sorted labels map to 0/1).
    params : dict
        Estimator parameters for this dataset (e.g. ``max_card``,
        ``min_support``), passed to every method that accepts them; a method's
        own parameters take precedence.
    """

    name: str
    source: str | None = None
    target: str | None = None
    params: dict = field(default_factory=dict)

    def load(self, data_home=None):
        """``(X, y, feature_names)``: uint8 0/1 arrays and the column names."""
        source = self.source or self.name
        key = (source, self.target, None if data_home is None else str(data_home))
        if key not in _DATA:
            if source.lower().endswith(".csv") or os.sep in source:
                X, y, names = _load_csv(source, self.target)
            else:
                from dpglass.datasets import load_dataset

                frame, y = load_dataset(source, data_home=data_home)
                X, names = frame.to_numpy(dtype=np.uint8), [str(c) for c in frame.columns]
            _DATA[key] = (X, np.asarray(y, dtype=np.uint8), names)
        return _DATA[key]


@dataclass(frozen=True)
class MethodSpec:
    """A method of a sweep: a registered estimator with fixed parameters.

    Parameters
    ----------
    name : str
        Its label in the results (no commas or quotes).
    estimator : str
        A registry name (``dpglass models``), e.g. ``"dp-rule-list"``.
    params : dict
        Fixed parameters (``epsilon`` and ``random_state`` are set per cell).
    private : bool or None
        Whether the epsilon grid applies; None takes the registry's flag.  A
        non-private method gets one cell per (dataset, seed), with epsilon NaN.
    """

    name: str
    estimator: str
    params: dict = field(default_factory=dict)
    private: bool | None = None

    def is_private(self) -> bool:
        if self.private is not None:
            return bool(self.private)
        from dpglass.registry import get_spec

        return get_spec(self.estimator).private


@dataclass(frozen=True)
class SweepConfig:
    """What a sweep runs.

    Parameters
    ----------
    datasets : sequence of DatasetSpec
    methods : sequence of MethodSpec
    epsilons : sequence of float
    n_seeds : int
        Seeds ``0 .. n_seeds - 1``; each gives its own split and noise.
    test_size : float, default=0.3
        Held-out fraction (the paper's 70/30 split).
    holdout : {"test", "validation"}, default="test"
        ``"validation"`` scores on ``validation_size`` of the training part and
        never touches the test part (for choosing hyper-parameters).
    validation_size : float, default=0.25
    base_seed : int, default=0
        Root of the SeedSequence tree.
    """

    datasets: tuple
    methods: tuple
    epsilons: tuple
    n_seeds: int
    test_size: float = 0.3
    holdout: str = "test"
    validation_size: float = 0.25
    base_seed: int = 0

    def __post_init__(self):
        object.__setattr__(self, "datasets", tuple(self.datasets))
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "epsilons", tuple(float(e) for e in self.epsilons))
        for label, names in (("dataset", [d.name for d in self.datasets]), ("method", [m.name for m in self.methods])):
            if len(set(names)) != len(names):
                raise InvalidParameterError(f"Two {label}s of the sweep have the same name: {names}.")
            bad = [n for n in names if any(ch in n for ch in ',"\n\r')]
            if bad:
                raise InvalidParameterError(f"{label.capitalize()} names may not contain commas, quotes or newlines: {bad}.")
        if len(set(self.epsilons)) != len(self.epsilons) or not all(e > 0 and math.isfinite(e) for e in self.epsilons):
            raise InvalidParameterError("The epsilon grid must hold distinct finite values > 0.")
        if self.holdout not in ("test", "validation"):
            raise InvalidParameterError(f"holdout must be 'test' or 'validation'; got {self.holdout!r}.")
        if not (isinstance(self.n_seeds, int) and self.n_seeds >= 1):
            raise InvalidParameterError(f"n_seeds must be an int >= 1; got {self.n_seeds!r}.")

    @property
    def score_column(self) -> str:
        return f"{self.holdout}_accuracy"

    @property
    def columns(self) -> list[str]:
        return [
            "dataset", "method", "epsilon", "seed", "train_accuracy", self.score_column, "n_rules",
            "epsilon_spent", "delta_spent", "guarantee", "stop_reason", "vulnerability", "fit_seconds",
        ]

    def to_dict(self) -> dict:
        return json.loads(json.dumps(dataclasses.asdict(self), default=str))

    def cells(self):
        """Every cell as (dataset index, seed, method index, epsilon or None), in canonical order."""
        for d in range(len(self.datasets)):
            for m, method in enumerate(self.methods):
                for eps in (self.epsilons if method.is_private() else (None,)):
                    for seed in range(self.n_seeds):
                        yield d, seed, m, eps


# ----------------------------------------------------------------- seeding
def _h(text: str) -> int:
    return zlib.crc32(text.encode("utf-8"))


def _eps_key(eps) -> str:
    return "none" if eps is None or (isinstance(eps, float) and math.isnan(eps)) else repr(float(eps))


def cell_seed(base_seed: int, dataset: str, seed: int, method: str | None = None, epsilon=None):
    """The SeedSequence of a split (no method) or of a model (method, epsilon).

    Nodes of the SeedSequence tree rooted at ``base_seed`` are addressed by
    ``spawn_key``: ``(crc32(dataset), seed)`` for the split and
    ``(crc32(dataset), seed, crc32(method), crc32(repr(epsilon)))`` for a
    model, so a cell's streams depend only on its own coordinates.

    Examples
    --------
    >>> a = cell_seed(0, "german-rules", 3, "sm-Laplace", 10.0)
    >>> b = cell_seed(0, "german-rules", 3, "sm-Laplace", 10.0)
    >>> bool((a.generate_state(2) == b.generate_state(2)).all())
    True
    """
    key = (_h(dataset), int(seed))
    if method is not None:
        key += (_h(method), _h(_eps_key(epsilon)))
    return np.random.SeedSequence(int(base_seed), spawn_key=key)


def split_indices(n: int, seed_seq, test_size: float = 0.3, holdout: str = "test", validation_size: float = 0.25):
    """``(train, held_out)`` sorted row indices of a seeded split.

    A permutation drawn from ``seed_seq`` puts ``ceil(test_size * n)`` rows in
    the test part and the rest in the training part.  With
    ``holdout="validation"`` the held-out rows are the first
    ``ceil(validation_size * n_train)`` training rows of the permutation and
    the test part is not used at all.
    """
    perm = np.random.default_rng(seed_seq).permutation(n)
    n_test = math.ceil(test_size * n)
    test, train = perm[:n_test], perm[n_test:]
    if holdout == "validation":
        n_val = math.ceil(validation_size * len(train))
        train, test = train[n_val:], train[:n_val]
    return np.sort(train), np.sort(test)


# --------------------------------------------------------------- metrics
def _vulnerability_from_counts(groups: np.ndarray, in0, in1, out0, out1) -> float:
    """V of :func:`dpglass.audit.membership.distributional_overfitting` from weighted groups.

    ``groups[i]`` is the group of (distinct) row i, which stands for ``in0[i]``
    training records of label 0, ``in1[i]`` of label 1, and ``out0[i]``,
    ``out1[i]`` held-out ones.  The arithmetic follows that function step by
    step (same groups, same order of operations), so the result is the same
    float as on the expanded records.
    """
    n_groups = int(groups.max()) + 1 if groups.size else 1
    total = float(np.sum(in0) + np.sum(in1) + np.sum(out0) + np.sum(out1))
    weighted = 0
    for w_in, w_out in ((in0, out0), (in1, out1)):
        s_in, s_out = float(np.sum(w_in)), float(np.sum(w_out))
        prior = (s_in + s_out) / total
        if s_in == 0 or s_out == 0:
            continue
        c_in = np.bincount(groups, weights=w_in, minlength=n_groups)
        c_out = np.bincount(groups, weights=w_out, minlength=n_groups)
        present = (c_in + c_out) > 0
        tau = float(0.5 * np.abs(c_in[present] / s_in - c_out[present] / s_out).sum())
        weighted = weighted + prior * tau
    return float(0.5 + 0.5 * weighted)


def _vulnerability(group_in, y_in, group_out, y_out) -> float:
    """Paper 001's V (Section V-E) of per-record groups: dpglass.audit's definition."""
    try:
        from dpglass.audit.membership import distributional_overfitting
    except ImportError:  # pragma: no cover - the audit package ships with dpglass
        gi, go = np.asarray(group_in, dtype=np.int64), np.asarray(group_out, dtype=np.int64)
        yi, yo = np.asarray(y_in, dtype=np.float64), np.asarray(y_out, dtype=np.float64)
        zi, zo = np.zeros(len(gi)), np.zeros(len(go))
        return _vulnerability_from_counts(
            np.concatenate([gi, go]), np.concatenate([1.0 - yi, zo]), np.concatenate([yi, zo]),
            np.concatenate([zi, 1.0 - yo]), np.concatenate([zi, yo]),
        )
    return distributional_overfitting(group_in, y_in, group_out, y_out).vulnerability


# ------------------------------------------------------------- fitting
def _distinct_rows(X: np.ndarray):
    packed = np.packbits(X, axis=1) if X.shape[1] else np.zeros((X.shape[0], 1), np.uint8)
    keys = np.ascontiguousarray(packed).view(np.dtype((np.void, packed.shape[1])))[:, 0]
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return X[first], inverse.ravel()


class _RuleListFastPath:
    """Rule-list fits on one training set, sharing counts; metrics on distinct rows."""

    def __init__(self, X_tr, y_tr, X_ev, y_ev, names):
        self.X_tr, self.y_tr, self.names = X_tr, y_tr, names
        rows, inverse = _distinct_rows(np.vstack([X_tr, X_ev]))
        m, n_tr = rows.shape[0], len(y_tr)
        self.rows = rows
        self.in1 = np.bincount(inverse[:n_tr], weights=y_tr, minlength=m)
        self.in0 = np.bincount(inverse[:n_tr], minlength=m) - self.in1
        self.out1 = np.bincount(inverse[n_tr:], weights=y_ev, minlength=m)
        self.out0 = np.bincount(inverse[n_tr:], minlength=m) - self.out1
        self.n_tr, self.n_ev = float(n_tr), float(len(y_ev))
        self._problems = {}
        self._validated = set()
        self._scores = {}

    def _problem(self, est):
        from dpglass.models._candidates import CountCache, SufficientStats

        key = (est.max_card, est.allow_negations, repr(est.candidates))
        if key not in self._problems:
            cands = est._candidate_set(self.X_tr.shape[1], self.names)
            cache = CountCache(SufficientStats(self.X_tr, self.y_tr, cands), max_entries=MEMO_ENTRIES)
            self._problems[key] = (cands, cache, {})
        return self._problems[key]

    def _mask(self, problem, index):
        cands, _, masks = problem
        if index not in masks:
            mask = np.ones(self.rows.shape[0], dtype=bool)
            for feature, value in cands.conditions(index):
                mask &= self.rows[:, feature] == (1 if value else 0)
            masks[index] = mask
        return masks[index]

    def fit(self, est):
        """Fit as ``est.fit(X_tr, y_tr)`` would; return (release, problem, noisy, seconds)."""
        from dpglass.models._rule_selection import PURE_MECHANISMS
        from dpglass.models.rule_list import DPRuleListClassifier, fit_dp_rule_list, fit_greedy_rule_list
        from dpglass.privacy.rng import check_random_state

        # parameters other than epsilon (checked by SweepConfig) and the seed are
        # the same for every cell of a method: validate them once
        key = (type(est).__name__, repr(sorted((k, repr(v)) for k, v in vars(est).items()
                                               if k not in ("epsilon", "random_state"))))
        if key not in self._validated:
            est._validate_params()
            self._validated.add(key)
        problem = self._problem(est)
        cands, cache, _ = problem
        if isinstance(est, DPRuleListClassifier):
            rng = check_random_state(est.random_state)
            delta = est._resolve_delta(len(self.y_tr), est.delta)
            if est.mechanism not in PURE_MECHANISMS and delta == 0:
                raise InvalidParameterError(f"mechanism={est.mechanism!r} needs delta > 0.")
            start = time.perf_counter()
            release = fit_dp_rule_list(
                self.X_tr, self.y_tr, candidates=cands, epsilon=float(est.epsilon), delta=delta,
                mechanism=est.mechanism, max_length=est.max_length, min_support=est.min_support,
                confidence=est.confidence, gamma=4.0 if est.gamma is None else float(est.gamma),
                variant=est.variant, rng=rng, cache=cache,
            )
            return release, problem, True, time.perf_counter() - start
        start = time.perf_counter()
        release = fit_greedy_rule_list(
            self.X_tr, self.y_tr, candidates=cands, max_length=est.max_length, min_support=est.min_support
        )
        return release, problem, False, time.perf_counter() - start

    def evaluate(self, release, problem, noisy):
        """(train accuracy, held-out accuracy, vulnerability) of a release, as the fitted model scores."""
        n_rules = len(release.selected)
        which = np.full(self.rows.shape[0], n_rules, dtype=np.int64)
        preds = np.empty(n_rules + 1, dtype=np.int64)
        for i, (cand, (c0, c1)) in enumerate(release.selected):
            preds[i] = int(c1 >= c0 if noisy else c1 > c0)
        c0, c1 = release.default_counts
        preds[n_rules] = int(c1 >= c0 if noisy else c1 > c0)
        key = (id(problem[0]), tuple(c for c, _ in release.selected), preds.tobytes())
        if key not in self._scores:  # many cells (large epsilon) give the same list
            for i in range(n_rules - 1, -1, -1):
                which[self._mask(problem, release.selected[i][0])] = i
            pred = preds[which] == 1
            train = float(np.sum(np.where(pred, self.in1, self.in0))) / self.n_tr
            held = float(np.sum(np.where(pred, self.out1, self.out0))) / self.n_ev
            vul = _vulnerability_from_counts(which, self.in0, self.in1, self.out0, self.out1)
            self._scores[key] = (train, held, vul)
        return self._scores[key]


def _fast_eligible(est) -> bool:
    from dpglass.models.rule_list import DPRuleListClassifier, GreedyRuleListClassifier

    return type(est) in (DPRuleListClassifier, GreedyRuleListClassifier)


def _generic_fit(est, X_tr, y_tr, X_ev, y_ev, names):
    """Fit and score any registered estimator as a user would."""
    Xtr = pd.DataFrame(X_tr, columns=names)
    Xev = pd.DataFrame(X_ev, columns=names)
    start = time.perf_counter()
    est.fit(Xtr, y_tr)
    seconds = time.perf_counter() - start
    train = float(est.score(Xtr, y_tr))
    held = float(est.score(Xev, y_ev))
    vul = math.nan
    if hasattr(est, "_first_match"):
        vul = _vulnerability(est._first_match(Xtr.to_numpy()), y_tr, est._first_match(Xev.to_numpy()), y_ev)
    return est, seconds, train, held, vul


def _make_estimator(dataset: DatasetSpec, method: MethodSpec, eps, model_seed):
    """The estimator of a cell: dataset parameters it accepts, then the method's, epsilon, seed."""
    from dpglass.registry import get_spec

    spec = get_spec(method.estimator)
    if spec.name not in _ACCEPTED:
        _ACCEPTED[spec.name] = frozenset(spec.cls().get_params())
    accepted = _ACCEPTED[spec.name]
    params = {k: v for k, v in dataset.params.items() if k in accepted}
    params.update(method.params)
    if eps is not None:
        params["epsilon"] = float(eps)
    if "random_state" in accepted:
        params["random_state"] = model_seed
    return spec.make(**params)


def _run_unit(config: SweepConfig, d_index: int, seed: int, todo, fast: bool, data_home=None):
    """Fit the cells ``todo`` [(method index, epsilon or None)] of one (dataset, seed)."""
    from threadpoolctl import threadpool_limits

    dataset = config.datasets[d_index]
    X, y, names = dataset.load(data_home)
    tr, ev = split_indices(
        len(y), cell_seed(config.base_seed, dataset.name, seed), config.test_size, config.holdout,
        config.validation_size,
    )
    X_tr, y_tr, X_ev, y_ev = X[tr], y[tr], X[ev], y[ev]
    fast_path = None
    rows = []
    with threadpool_limits(1):
        for m_index, eps in todo:
            method = config.methods[m_index]
            row = {
                "dataset": dataset.name, "method": method.name, "epsilon": math.nan if eps is None else float(eps),
                "seed": seed, "train_accuracy": math.nan, config.score_column: math.nan, "n_rules": math.nan,
                "epsilon_spent": math.nan, "delta_spent": math.nan, "guarantee": "none", "stop_reason": "",
                "vulnerability": math.nan, "fit_seconds": math.nan,
            }
            try:
                est = _make_estimator(
                    dataset, method, eps, cell_seed(config.base_seed, dataset.name, seed, method.name, eps)
                )
                if fast and _fast_eligible(est):
                    if fast_path is None:
                        fast_path = _RuleListFastPath(X_tr, y_tr, X_ev, y_ev, names)
                    release, problem, noisy, seconds = fast_path.fit(est)
                    train, held, vul = fast_path.evaluate(release, problem, noisy)
                    ledger, n_rules, stop = release.ledger, len(release.selected), release.stop_reason
                else:
                    est, seconds, train, held, vul = _generic_fit(est, X_tr, y_tr, X_ev, y_ev, names)
                    ledger = getattr(est, "privacy_ledger_", None)
                    n_rules = len(est.rules_) if hasattr(est, "rules_") else math.nan
                    stop = getattr(est, "stop_reason_", "")
                row.update(train_accuracy=train, n_rules=n_rules, stop_reason=stop, vulnerability=vul, fit_seconds=seconds)
                row[config.score_column] = held
                if ledger is not None:
                    row["epsilon_spent"], row["delta_spent"] = ledger.total()
                    row["guarantee"] = ledger.guarantee
            except (InvalidParameterError, DataValidationError) as exc:
                row["stop_reason"] = f"error: {type(exc).__name__}: {exc}"
            rows.append(row)
    return rows


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
            done.add((rec[0], rec[1], _eps_key(float(rec[2])), int(rec[3])))
    return done


def load_results(path) -> pd.DataFrame:
    """Read a sweep table exactly (floats round-trip; strings stay strings)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for col in frame.columns:
        if col in ("dataset", "method", "guarantee", "stop_reason"):
            continue
        frame[col] = frame[col].map(float)
    if "seed" in frame:
        frame["seed"] = frame["seed"].astype(np.int64)
    return frame


def _canonical(frame: pd.DataFrame, config: SweepConfig) -> pd.DataFrame:
    d_pos = {d.name: i for i, d in enumerate(config.datasets)}
    m_pos = {m.name: i for i, m in enumerate(config.methods)}
    e_pos = {_eps_key(e): i for i, e in enumerate(config.epsilons)}
    order = pd.DataFrame({
        "d": frame["dataset"].map(d_pos), "m": frame["method"].map(m_pos),
        "e": [e_pos.get(_eps_key(e), -1) for e in frame["epsilon"]], "s": frame["seed"],
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
        key = (config.datasets[d].name, config.methods[m].name, _eps_key(eps), seed)
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
        Use the shared-count fast path for rule lists (same rows, faster).
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
            yield _run_unit(config, d, seed, cells, fast, data_home)
        return
    from joblib import Parallel, delayed

    tasks = (delayed(_run_unit)(config, d, seed, cells, fast, data_home) for d, seed, cells in units)
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


# ------------------------------------------------------------------ helpers
_DATA: dict = {}
_ACCEPTED: dict = {}


def _load_csv(path, target):
    if target is None:
        raise InvalidParameterError(f"A CSV dataset ({path}) needs a target column.")
    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise DataValidationError(f"Could not read {path} as CSV: {exc}") from exc
    if target not in frame.columns:
        raise DataValidationError(f"{path} has no column {target!r}.")
    from dpglass._validation import check_binary_y

    y, _ = check_binary_y(frame.pop(target).to_numpy())
    values = frame.to_numpy()
    if not np.isin(values, (0, 1)).all():
        raise DataValidationError(
            f"{path}: every feature column must be 0/1; binarize it first (dpglass.datasets.Binarizer)."
        )
    return values.astype(np.uint8), y, [str(c) for c in frame.columns]
