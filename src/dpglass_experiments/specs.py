"""What a sweep runs: datasets, methods and the grid (:class:`SweepConfig`)."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = ["DatasetSpec", "MethodSpec", "SweepConfig", "extra_column"]

_DATA: dict = {}
_N_TRAIN: dict = {}
_KFOLD = re.compile(r"kfold:([2-9]|[1-9][0-9]+)")


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
        :class:`~dpglass.models.selection.estimator.PrivateGridSearch` around the
        estimator, with these keyword arguments (``param_grid``,
        ``stopping_probability``, ...) and the cell's ``epsilon`` and seed:
        the selection's budget is inside epsilon.

    public_fraction : float, default=0.0
        For estimators that learn from a public, unlabelled part
        (``fit(X, y, X_public=...)``: ``subsample-aggregate``, ``dp-bag``):
        this fraction of each training part, drawn by the split's seed (the
        same rows for every method and epsilon of a (dataset, seed)), is
        passed as ``X_public`` without its labels, and the model is fitted on
        the rest.  The held-out part is untouched.

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
    public_fraction: float = 0.0

    def __post_init__(self):
        if not (isinstance(self.public_fraction, (int, float)) and 0 <= self.public_fraction < 1):
            raise InvalidParameterError(
                f"MethodSpec {self.name!r}: public_fraction must be in [0, 1); got {self.public_fraction!r}."
            )
        if self.public_fraction and self.tuning:
            raise InvalidParameterError(f"MethodSpec {self.name!r}: private tuning does not pass a public part.")

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
            *(extra_column(a) for a in self.extra_columns),
        ]

    def to_dict(self) -> dict:
        """The configuration as JSON data; fields at their defaults that older
        sweeps did not have are left out, so that those sweeps still resume."""
        data = json.loads(json.dumps(dataclasses.asdict(self), default=str))
        for d in data["datasets"]:
            if d.get("split") == "random":
                del d["split"]
        for m in data["methods"]:
            for key in ("cell_params", "tuning", "public_fraction"):
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


def extra_column(attribute: str) -> str:
    """The column of a fitted attribute recorded by :attr:`SweepConfig.extra_columns`: its name without ``_``."""
    return attribute.rstrip("_")


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
