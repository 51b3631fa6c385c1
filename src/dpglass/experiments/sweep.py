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
import numbers
import os
import re
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
    "cell_key",
    "cell_seed",
    "dataset_split",
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
    split : str, default="random"
        How a seed splits the records (:func:`dataset_split`):

        * ``"random"``: a seeded ``test_size`` permutation split per seed (the
          rule-list experiments);
        * ``"canonical"``: the built-in dataset's own train/test split
          (``load_dataset(source, split="train")`` and ``"test"``), the same for
          every seed (seeds then vary only the model's noise);
        * ``"kfold:K"``: stratified, shuffled K-fold cross-validation; seed ``s``
          is fold ``s % K`` of partition ``s // K`` (``n_seeds = K`` is one
          K-fold cross-validation).
    """

    name: str
    source: str | None = None
    target: str | None = None
    params: dict = field(default_factory=dict)
    split: str = "random"

    def __post_init__(self):
        if self.split not in ("random", "canonical") and not _KFOLD.fullmatch(self.split or ""):
            raise InvalidParameterError(
                f"DatasetSpec {self.name!r}: split must be 'random', 'canonical' or 'kfold:K' (K >= 2); "
                f"got {self.split!r}."
            )

    @property
    def n_folds(self) -> int | None:
        """K of a ``"kfold:K"`` split, else None."""
        m = _KFOLD.fullmatch(self.split)
        return int(m.group(1)) if m else None

    def load(self, data_home=None):
        """``(X, y, feature_names)``: uint8 0/1 arrays and the column names.

        With ``split="canonical"`` the training rows come first, then the test
        rows (:meth:`n_train` of them are training rows).
        """
        source = self.source or self.name
        key = (source, self.target, None if data_home is None else str(data_home), self.split == "canonical")
        if key not in _DATA:
            if source.lower().endswith(".csv") or os.sep in source:
                if self.split == "canonical":
                    raise InvalidParameterError(f"A CSV dataset ({source}) has no canonical split.")
                X, y, names = _load_csv(source, self.target)
            else:
                from dpglass.datasets import load_dataset

                if self.split == "canonical":
                    parts = [load_dataset(source, split=part, data_home=data_home) for part in ("train", "test")]
                    if list(parts[0][0].columns) != list(parts[1][0].columns):
                        raise DataValidationError(f"{source}: the train and test parts have different columns.")
                    _N_TRAIN[key] = len(parts[0][1])
                    frame = pd.concat([p[0] for p in parts], ignore_index=True)
                    y = np.concatenate([np.asarray(p[1]) for p in parts])
                else:
                    frame, y = load_dataset(source, data_home=data_home)
                X, names = frame.to_numpy(dtype=np.uint8), [str(c) for c in frame.columns]
            _DATA[key] = (X, np.asarray(y, dtype=np.uint8), names)
        return _DATA[key]

    def n_train(self, data_home=None) -> int:
        """Training rows of a ``"canonical"`` split (the first rows of :meth:`load`)."""
        if self.split != "canonical":
            raise InvalidParameterError(f"DatasetSpec {self.name!r} has no canonical split.")
        self.load(data_home)
        source = self.source or self.name
        return _N_TRAIN[(source, self.target, None if data_home is None else str(data_home), True)]


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
        Whether the epsilon grid applies; None takes the registry's flag (and
        False for an import path).  A non-private method gets one cell per
        (dataset, seed), with epsilon NaN.
    cell_params : dict
        Parameters of particular cells, on top of ``params``: keys
        ``"<dataset>|<epsilon>"`` or ``"<dataset>|<epsilon>|<seed>"`` (epsilon
        as ``repr(float(epsilon))``, see :func:`cell_key`; the more specific
        key wins).  For settings chosen per dataset and epsilon (a paper's
        tables) or per cross-validation fold.
    tuning : dict
        If not empty, the cell fits
        :class:`~dpglass.models.selection.PrivateGridSearch` around the
        estimator, with these keyword arguments (``param_grid``,
        ``stopping_probability``, ...) and the cell's ``epsilon`` and seed:
        the selection's budget is inside epsilon.

    ``estimator`` may also be an import path ``"module:Class"`` (e.g.
    ``"sklearn.ensemble:GradientBoostingClassifier"``) for a reference that is
    not in the registry; an integer seed drawn from the cell's SeedSequence is
    passed as its ``random_state``.
    """

    name: str
    estimator: str
    params: dict = field(default_factory=dict)
    private: bool | None = None
    cell_params: dict = field(default_factory=dict)
    tuning: dict = field(default_factory=dict)

    def is_private(self) -> bool:
        if self.private is not None:
            return bool(self.private)
        if ":" in self.estimator:
            return False
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
    extra_columns : tuple of str, default=()
        Fitted attributes recorded as extra columns after ``fit_seconds``
        (column name: the attribute without its trailing ``_``), read from the
        estimator or else from its ``best_estimator_``; dicts are written as
        JSON, a missing attribute as NaN.  E.g. ``("n_features_used_",
        "best_params_")``.
    """

    datasets: tuple
    methods: tuple
    epsilons: tuple
    n_seeds: int
    test_size: float = 0.3
    holdout: str = "test"
    validation_size: float = 0.25
    base_seed: int = 0
    extra_columns: tuple = ()

    def __post_init__(self):
        object.__setattr__(self, "datasets", tuple(self.datasets))
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "epsilons", tuple(float(e) for e in self.epsilons))
        object.__setattr__(self, "extra_columns", tuple(self.extra_columns))
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
            *(_extra_name(a) for a in self.extra_columns),
        ]

    def to_dict(self) -> dict:
        """The configuration as JSON data; fields at their defaults that older
        sweeps did not have are left out, so that those sweeps still resume."""
        data = json.loads(json.dumps(dataclasses.asdict(self), default=str))
        for d in data["datasets"]:
            if d.get("split") == "random":
                del d["split"]
        for m in data["methods"]:
            for key in ("cell_params", "tuning"):
                if not m.get(key):
                    m.pop(key, None)
        if not data.get("extra_columns"):
            data.pop("extra_columns", None)
        return data

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


def cell_key(dataset: str, epsilon, seed: int | None = None) -> str:
    """The key of :attr:`MethodSpec.cell_params` for a (dataset, epsilon[, seed]) cell.

    Examples
    --------
    >>> cell_key("adult", 0.05), cell_key("mushroom", 1, 3)
    ('adult|0.05', 'mushroom|1.0|3')
    """
    key = f"{dataset}|{_eps_key(epsilon)}"
    return key if seed is None else f"{key}|{int(seed)}"


def dataset_split(config: SweepConfig, dataset: DatasetSpec, seed: int, data_home=None):
    """``(train, held_out)`` sorted row indices of ``dataset.load()`` for a seed.

    ``dataset.split`` says how (see :class:`DatasetSpec`): ``"random"`` is
    :func:`split_indices` (unchanged); ``"canonical"`` is the dataset's own
    train/test split; ``"kfold:K"`` is fold ``seed % K`` of a stratified,
    shuffled K-fold partition seeded by ``(dataset, seed // K)``.  With
    ``config.holdout == "validation"``, the held-out rows of the last two are
    ``ceil(validation_size * n_train)`` training rows drawn by the seed's
    permutation, and the test rows are not used at all.
    """
    if dataset.split == "random":
        X, y, _ = dataset.load(data_home)
        return split_indices(
            len(y), cell_seed(config.base_seed, dataset.name, seed), config.test_size, config.holdout,
            config.validation_size,
        )
    X, y, _ = dataset.load(data_home)
    if dataset.split == "canonical":
        n_tr = dataset.n_train(data_home)
        train, test = np.arange(n_tr), np.arange(n_tr, len(y))
    else:
        from sklearn.model_selection import StratifiedKFold

        k = dataset.n_folds
        repeat, fold = divmod(int(seed), k)
        partition = np.random.SeedSequence(int(config.base_seed), spawn_key=(_h(dataset.name), repeat, _h("kfold")))
        folds = StratifiedKFold(n_splits=k, shuffle=True, random_state=int(partition.generate_state(1)[0]))
        train, test = list(folds.split(np.zeros(len(y)), y))[fold]
    if config.holdout == "validation":
        perm = np.random.default_rng(cell_seed(config.base_seed, dataset.name, seed)).permutation(len(train))
        n_val = math.ceil(config.validation_size * len(train))
        train, test = train[perm[n_val:]], train[perm[:n_val]]
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
        from dpglass.privacy.rng import check_random_state, is_replayable

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
            delta = est._resolve_delta(est.delta)
            if est.mechanism not in PURE_MECHANISMS and delta == 0:
                raise InvalidParameterError(f"mechanism={est.mechanism!r} needs delta > 0.")
            start = time.perf_counter()
            release = fit_dp_rule_list(
                self.X_tr, self.y_tr, candidates=cands, epsilon=float(est.epsilon), delta=delta,
                mechanism=est.mechanism, max_length=est.max_length, min_support=est.min_support,
                confidence=est.confidence, gamma=4.0 if est.gamma is None else float(est.gamma),
                variant=est.variant, rng=rng, cache=cache,
            )
            release.ledger.replayable = is_replayable(rng)
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


def _estimator_class(name: str):
    """The class of a registry name or of a ``"module:Class"`` import path."""
    if ":" in name:
        import importlib

        module, _, attr = name.partition(":")
        return getattr(importlib.import_module(module), attr)
    from dpglass.registry import get_spec

    return get_spec(name).cls


def _make_estimator(dataset: DatasetSpec, method: MethodSpec, eps, model_seed, seed: int | None = None):
    """The estimator of a cell: dataset parameters it accepts, then the method's, the cell's, epsilon, seed.

    With ``method.tuning`` the estimator is wrapped in
    :class:`~dpglass.models.selection.PrivateGridSearch`, which gets the
    epsilon and the seed (and sets those of every candidate itself).
    """
    cls = _estimator_class(method.estimator)
    if method.estimator not in _ACCEPTED:
        _ACCEPTED[method.estimator] = frozenset(cls().get_params())
    accepted = _ACCEPTED[method.estimator]
    params = {k: v for k, v in dataset.params.items() if k in accepted}
    params.update(method.params)
    if method.cell_params:
        params.update(method.cell_params.get(cell_key(dataset.name, eps), {}))
        if seed is not None:
            params.update(method.cell_params.get(cell_key(dataset.name, eps, seed), {}))
    if ":" in method.estimator and "random_state" in accepted and model_seed is not None:
        model_seed = int(model_seed.generate_state(1)[0])  # foreign estimators want an int
    if method.tuning:
        from dpglass.models.selection import PrivateGridSearch

        if eps is None:
            raise InvalidParameterError(f"Method {method.name!r}: private tuning needs an epsilon grid.")
        return PrivateGridSearch(estimator=cls(**params), epsilon=float(eps), random_state=model_seed, **method.tuning)
    if eps is not None:
        params["epsilon"] = float(eps)
    if "random_state" in accepted:
        params["random_state"] = model_seed
    return cls(**params)


def _extra_name(attribute: str) -> str:
    return attribute.rstrip("_")


def _extra_value(est, attribute: str):
    """A fitted attribute of ``est`` (or of its ``best_estimator_``) as a CSV cell."""
    for obj in (est, getattr(est, "best_estimator_", None)):
        if obj is not None and hasattr(obj, attribute):
            value = getattr(obj, attribute)
            if isinstance(value, dict):
                return json.dumps(value, sort_keys=True, default=str)
            if isinstance(value, (bool, np.bool_)):
                return bool(value)
            if isinstance(value, (numbers.Number, np.number)):
                return float(value)
            return str(value)
    return math.nan


def _run_unit(config: SweepConfig, d_index: int, seed: int, todo, fast: bool, data_home=None):
    """Fit the cells ``todo`` [(method index, epsilon or None)] of one (dataset, seed)."""
    from threadpoolctl import threadpool_limits

    dataset = config.datasets[d_index]
    X, y, names = dataset.load(data_home)
    tr, ev = dataset_split(config, dataset, seed, data_home)
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
                **{_extra_name(a): math.nan for a in config.extra_columns},
            }
            try:
                est = _make_estimator(
                    dataset, method, eps, cell_seed(config.base_seed, dataset.name, seed, method.name, eps), seed
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
                    for a in config.extra_columns:
                        row[_extra_name(a)] = _extra_value(est, a)
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
_N_TRAIN: dict = {}
_ACCEPTED: dict = {}
_KFOLD = re.compile(r"kfold:([2-9]|[1-9][0-9]+)")


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
