"""The server side: a plug-in histogram classifier learned from LDP reports alone.

:class:`LDPHistogramClassifier` computes the slides' statistic (paper 004,
slide 11) for every cube centre ``x_j``::

    T(x_j) = (1/n_2) sum_{second half} Z_ij  -  (1/(2 n_1)) sum_{first half} Z_ij

(``n_1``, ``n_2``: the numbers of reports of each half; the slides have
``n_1 = n_2 = n``), whose expectation is ``E[1{X in cube_j} (eta(X) - 1/2)]``,
and predicts ``C(x0) = 1{T(x_{j*(x0)}) >= 0}`` with ``j*(x0)`` the nearest
centre.  With the ``"oue"`` randomizer the same expectation is estimated from
debiased unary-encoding counts: ``T(x_j) = (N1_j - N0_j) / (2 n)`` where
``N y_j`` sums the unbiased count estimates of the fine cells of cube ``j``
with label ``y``.

**K >= 3 labels** (``"oue"`` only: the slides' mechanism is binary): the
plug-in rule is the argmax over the labels of the debiased frequencies
``N k_j / n`` of cube ``j*(x0)`` (``statistic_`` is then ``(cubes, K)``); a
tie goes to the later label, as ``1{T >= 0}`` sends a tie to the second of
two, which is this rule for ``K = 2`` (``T = (N1 - N0) / (2 n)``).

The model keeps only integer sums of the reports and the public metadata, so
it is a post-processing of the reports: whatever the classifier, its file or
its predictions reveal, each person is protected by the alpha-LDP of their own
report.  There is no ledger of central-DP releases; the file states the
guarantee ``"alpha-LDP per report; classifier is post-processing"``.

``bandwidth="auto"``: :func:`auto_bandwidth`, ``h = c (n alpha^2)^(-1/(2d+2))``
(capped at 1), with ``c`` chosen per randomizer on a simulated distribution
(``dpglass_experiments.ldp``; never on an evaluation set).  It satisfies
Theorem 2's conditions (``h -> 0``, ``n alpha^2 h^(2d) -> infinity``) and is
the rate-optimal choice ``h ~ (n alpha^2)^(-1/(2 beta + 2d))`` of Theorem 3 for
Lipschitz ``eta`` (``beta = 1``).
"""

from __future__ import annotations

import json
import math
import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from dpglass._validation import InstanceOf, Interval, Options, validate_params
from dpglass.exceptions import DataValidationError, InvalidParameterError, ModelFileError
from dpglass.local.labels import _declared_classes, _plain
from dpglass.local.plug_in import HistogramClassifier, _GridClassifierMixin
from dpglass.local.randomizers import (
    DEFAULT_MAX_CELLS,
    RANDOMIZERS,
    Grid,
    Reports,
    check_bandwidth,
    check_bounds,
    check_n_classes,
    make_randomizer,
)
from dpglass.models._base import CLASSES
from dpglass.privacy.rng import check_random_state, spawn

__all__ = ["AUTO_BANDWIDTH_CONSTANT", "GUARANTEE", "LDPHistogramClassifier", "HistogramClassifier",
           "auto_bandwidth"]

#: ``c`` of the auto bandwidth, per randomizer (chosen on the simulated
#: distribution of ``dpglass_experiments.ldp.calibrate``, see docs/privacy.md).
AUTO_BANDWIDTH_CONSTANT = {"laplace": 2.8, "oue": 1.4}
GUARANTEE = "alpha-LDP per report; classifier is post-processing"


def auto_bandwidth(n: int, alpha: float, d: int, randomizer: str = "laplace") -> float:
    """``h = min(1, c (n alpha^2)^(-1/(2d+2)))``: data-independent (n, alpha, d are public in LDP).

    Examples
    --------
    >>> round(auto_bandwidth(200_000, 1.0, 2), 4) == round(AUTO_BANDWIDTH_CONSTANT["laplace"] * 200_000 ** (-1 / 6), 4)
    True
    """
    if n < 1:
        raise InvalidParameterError("bandwidth='auto' needs at least one report.")
    c = AUTO_BANDWIDTH_CONSTANT[randomizer]
    return float(min(1.0, c * (n * alpha**2) ** (-1.0 / (2 * d + 2))))


class _Stats:
    """Integer sums of reports, per half (``"laplace"``) or overall (``"oue"``)."""

    def __init__(self, length: int):
        self.sums = np.zeros((2, length), dtype=np.int64)
        self.counts = np.zeros(2, dtype=np.int64)

    def add(self, values: np.ndarray, half: np.ndarray) -> None:
        for k in (0, 1):
            rows = half == k
            if rows.any():
                self.sums[k] += values[rows].sum(axis=0, dtype=np.int64)
                self.counts[k] += int(rows.sum())


def _class_frequencies(grid: Grid, alpha: float, sums: np.ndarray, counts: np.ndarray, n_classes: int) -> np.ndarray:
    """``(cubes, K)``: the unbiased estimates of the number of reports of each (cube, label), from ``"oue"`` sums.

    Bit ``K c + k`` of a report is 1 with probability 1/2 if the record is in
    fine cell ``c`` with label ``k``, else ``q``: its column sum ``S`` has
    ``E[S] = N_ck / 2 + (n - N_ck) q``, so ``(S - n q) / (1/2 - q)`` is
    unbiased for ``N_ck``; a cube sums its ``2^d`` fine cells.
    """
    from dpglass.local.randomizers import oue_q_numerator
    from dpglass.privacy.samplers import GRID

    n = int(counts.sum())
    if n == 0:
        raise DataValidationError("No reports: nothing to fit.")
    q = oue_q_numerator(alpha) / GRID
    est = (sums.sum(axis=0) - n * q) / (0.5 - q)  # unbiased counts of each (fine cell, label)
    M = grid.cube_of_fine().astype(np.float64)
    K = int(n_classes)
    return np.column_stack([M @ est[k::K] for k in range(K)])


def _statistic(randomizer: str, grid: Grid, alpha: float, sums: np.ndarray, counts: np.ndarray,
               n_classes: int = 2) -> np.ndarray:
    """``T(x_j)`` for every cube centre (two labels), or the ``(cubes, K)`` label frequencies (``K >= 3``)."""
    if randomizer == "laplace":
        n1, n2 = int(counts[0]), int(counts[1])
        if n1 == 0 or n2 == 0:
            raise DataValidationError(
                f"The reports hold {n1} first-half and {n2} second-half reports; T needs both halves. "
                "Collect more reports."
            )
        return sums[1] / n2 - sums[0] / (2.0 * n1)
    N = _class_frequencies(grid, alpha, sums, counts, n_classes)
    n = int(counts.sum())
    if int(n_classes) == 2:
        return (N[:, 1] - N[:, 0]) / (2.0 * n)
    return N / float(n)


def _check_block(values, half, name: str, grid: Grid, expected: int) -> None:
    """Reports of the right shape, type and content for their randomizer and grid."""
    if values.ndim != 2 or values.shape[1] != expected or half.shape != (values.shape[0],):
        raise DataValidationError(
            f"Reports of the {name!r} randomizer with d={grid.d}, h={grid.h:g} have {expected} entries each "
            f"(and one half flag each); got values of shape {values.shape} and halves of shape {half.shape}."
        )
    if values.dtype.kind not in "iub":
        raise DataValidationError(f"Reports are integers; got dtype {values.dtype}.")
    if not np.isin(half, (0, 1)).all() or (name == "oue" and half.any()):
        raise DataValidationError("The half flags must be 0 or 1 (all 0 for 'oue' reports).")
    if name == "oue" and not np.isin(values, (0, 1)).all():
        raise DataValidationError("'oue' reports hold bits (0 or 1 only).")


class LDPHistogramClassifier(_GridClassifierMixin, ClassifierMixin, BaseEstimator):
    """Berrett & Butucea's plug-in classifier from alpha-LDP reports (paper 004).

    Parameters
    ----------
    alpha : float > 0
        Local privacy level of each report.
    bandwidth : float in (0, 1] or "auto"
        Grid step ``h`` in the box mapped to ``[0, 1]^d``; ``"auto"``:
        :func:`auto_bandwidth` from the number of records, alpha and d.
    bounds : (lower, upper)
        Public box of the features (required for ``fit``; ``fit_reports``
        takes it from the reports when None).
    randomizer : {"laplace", "oue"}
        ``"laplace"``: the slides' mechanism (two labels only); ``"oue"``: unary
        encoding of the record's cell and label (lower variance, same alpha; any
        number of labels up to 255).
    max_cells : int
        Refuse reports longer than this.
    random_state : None, int, SeedSequence or Generator
        Randomness of the simulated devices in :meth:`fit` (None: ChaCha20).
    classes : list of two or more labels or None
        The public label set, in order (two: negative first, e.g. ``["<=50K", ">50K"]``; reports say
        ``k`` for ``classes[k]``).  ``None``: :meth:`fit` reads it from ``y`` as the central models do
        (a ``y`` holding one class is then refused, which depends on the data: declare it);
        :meth:`fit_reports` takes the label set the report file states, else ``0..K-1`` (``K`` the
        file's ``n_classes``, 2 when it states none).  More than two labels need ``randomizer="oue"``.

    Attributes
    ----------
    statistic_ : ndarray
        ``T(x_j)`` for every cube centre (two labels), or ``(cubes, K)`` label frequencies.
    report_sums_, report_counts_ : ndarray
        Integer sums of the reports (per half for ``"laplace"``) and their numbers.
    classes_ : ndarray
        The labels (``predict`` returns them; ``predict_proba``'s columns are in this order).
    feature_names_in_ : ndarray
        The columns' names when fitted on a DataFrame (or reports that name them): ``predict`` then
        reads a DataFrame's columns by name, in any order.
    bandwidth_, grid_, n_features_in_

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(20_000, noise=0.2, random_state=0)
    >>> clf = LDPHistogramClassifier(alpha=4.0, bandwidth=0.2, bounds=([-1.5, -1], [2.5, 1.5]),
    ...                              randomizer="oue", random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.8
    True
    """

    _parameter_constraints = {
        "alpha": [Interval(numbers.Real, 0, 60, closed="right")],
        "bandwidth": [Interval(numbers.Real, 0, 1, closed="right"), Options(("auto",))],
        "bounds": [InstanceOf((list, tuple, np.ndarray), "a pair (lower, upper) of arrays"), InstanceOf(type(None))],
        "randomizer": [Options(tuple(RANDOMIZERS))],
        "max_cells": [Interval(numbers.Integral, 1, None, closed="left")],
        "random_state": [InstanceOf(type(None)), Interval(numbers.Integral, 0, None, closed="left"),
                         InstanceOf((np.random.SeedSequence, np.random.Generator), "a numpy SeedSequence or Generator")],
        "classes": [c if c is not None else InstanceOf(type(None)) for c in CLASSES],
    }

    def __init__(self, *, alpha=1.0, bandwidth="auto", bounds=None, randomizer="laplace",
                 max_cells=DEFAULT_MAX_CELLS, random_state=None, classes=None):
        self.alpha = alpha
        self.bandwidth = bandwidth
        self.bounds = bounds
        self.randomizer = randomizer
        self.max_cells = max_cells
        self.random_state = random_state
        self.classes = classes

    # ------------------------------------------------------------- fitting
    def _validate_params(self) -> None:
        validate_params(self.get_params(deep=False), self._parameter_constraints, type(self).__name__)
        _declared_classes(self.classes)

    def _max_labels(self) -> tuple[int, str]:
        if self.randomizer == "laplace":  # the slides' mechanism reports B or y B: two labels
            return 2, ("LDPHistogramClassifier with randomizer='laplace' (the slides' binary mechanism; "
                       "randomizer='oue' learns K labels)")
        return super()._max_labels()

    def fit(self, X, y):
        """Simulate every device (randomize each record), then :meth:`fit_reports` on the sums.

        A DataFrame's columns are remembered by name (``predict`` then reads them by name); ``y``
        holds the user's labels (``classes``; more than two need ``randomizer="oue"``).  Reports are made and summed in blocks; they are
        not kept.
        """
        self._validate_params()
        X = self._check_X(X, reset=True)
        y = self._set_classes(y, X.shape[0])
        lower, upper = check_bounds(self.bounds, X.shape[1])
        h = (auto_bandwidth(X.shape[0], self.alpha, X.shape[1], self.randomizer) if self.bandwidth == "auto"
             else check_bandwidth(self.bandwidth))
        rng = check_random_state(self.random_state)
        coin_rng, noise_rng = spawn(rng, 2)
        rnd = make_randomizer(self.randomizer, self.alpha, h, (lower, upper), max_cells=self.max_cells,
                              random_state=noise_rng, n_classes=len(self.classes_))
        half = rnd.draw_halves(X.shape[0], coin_rng)
        stats = _Stats(rnd.report_length)
        step = rnd._block_rows()
        for start in range(0, X.shape[0], step):
            sl = slice(start, min(X.shape[0], start + step))
            rep = rnd.randomize(X[sl], y[sl], half=half[sl], rng=noise_rng)
            stats.add(rep.values, rep.half)
        self._finish(rnd.grid, X.shape[1], stats.sums, stats.counts)
        return self

    def _check_metadata(self, meta: dict) -> tuple[Grid, str]:
        if meta["randomizer"] != self.randomizer:
            raise DataValidationError(
                f"The reports were made by the {meta['randomizer']!r} randomizer but randomizer="
                f"{self.randomizer!r}; set randomizer={meta['randomizer']!r}."
            )
        if not math.isclose(float(meta["alpha"]), float(self.alpha), rel_tol=0, abs_tol=0):
            raise DataValidationError(
                f"The reports were randomized at alpha={meta['alpha']:g} but alpha={self.alpha:g}; set alpha to "
                "the reports' value (it is public metadata)."
            )
        h = check_bandwidth(float(meta["bandwidth"]))
        if self.bandwidth != "auto" and float(self.bandwidth) != h:
            raise DataValidationError(
                f"The reports use bandwidth {h:g} but bandwidth={self.bandwidth!r}; the grid is fixed when the "
                "devices randomize. Use bandwidth='auto' or the reports' value."
            )
        lower, upper = check_bounds((meta["lower"], meta["upper"]))
        if self.bounds is not None:
            lo, hi = check_bounds(self.bounds, lower.size)
            if not (np.array_equal(lo, lower) and np.array_equal(hi, upper)):
                raise DataValidationError("The reports were made with other bounds than the 'bounds' parameter; "
                                          "pass bounds=None to use the reports' bounds.")
        return Grid(lower, upper, h), meta["randomizer"]

    def _report_classes(self, meta: dict) -> np.ndarray:
        """The label set: ``classes``, else the one the report file states, else the codes ``0..K-1`` of the
        reports (``K``: the metadata's ``n_classes``, 2 when it states none)."""
        declared = _declared_classes(self.classes)
        stated = meta.get("classes")
        try:
            K = check_n_classes(meta.get("n_classes", 2))
        except InvalidParameterError as exc:
            raise DataValidationError(f"The reports' metadata 'n_classes' is not a number of labels: {exc}") from None
        if stated is not None:
            try:
                stated = _declared_classes(stated)
            except InvalidParameterError as exc:
                raise DataValidationError(f"The reports' metadata 'classes' is not a label set: {exc}") from None
            if len(stated) != K:
                raise DataValidationError(f"The reports' metadata states {len(stated)} labels {stated.tolist()!r} "
                                          f"but reports of {K} labels (n_classes).")
        if declared is not None and stated is not None and \
                [_plain(c) for c in declared] != [_plain(c) for c in stated]:
            said = (f"say 1 for {_plain(stated[1])!r} and 0 for {_plain(stated[0])!r} (classes "
                    f"{[_plain(c) for c in stated]!r})" if K == 2 else
                    f"encode the labels {[_plain(c) for c in stated]!r} (codes 0..{K - 1}, in that order)")
            raise DataValidationError(f"The reports {said}, but classes={list(self.classes)!r}; pass classes=None "
                                      "to use the reports' label set.")
        if declared is not None and len(declared) != K:
            raise DataValidationError(f"The reports encode {K} labels but classes={list(self.classes)!r} has "
                                      f"{len(declared)}; declare the reports' {K} labels, in their order.")
        if declared is not None:
            return declared
        return stated if stated is not None else np.arange(K)

    def fit_reports(self, reports):
        """Fit from privatized reports alone.

        Parameters
        ----------
        reports : Reports, or the path of an ``.npz`` written by ``dpglass ldp randomize`` or
            :func:`dpglass.local.save_reports` (read in blocks).  A file's metadata may name the
            features (``predict`` then reads a DataFrame's columns by name) and the label set.
        """
        self._validate_params()
        if isinstance(reports, Reports):
            meta, blocks = reports.metadata(), [(np.asarray(reports.values), np.asarray(reports.half))]
        else:
            from dpglass.local.io import iter_report_blocks, read_metadata

            meta, blocks = read_metadata(reports), iter_report_blocks(reports)
        grid, name = self._check_metadata(meta)
        classes = self._report_classes(meta)
        expected = len(classes) * grid.n_fine if name == "oue" else grid.n_cubes
        stats = _Stats(expected)
        for values, half in blocks:
            _check_block(values, half, name, grid, expected)
            stats.add(values, half)
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        names = meta.get("feature_names")
        if names is not None and len(names) == grid.d:
            self.feature_names_in_ = np.asarray([str(c) for c in names], dtype=object)
        self.classes_ = classes
        self._finish(grid, grid.d, stats.sums, stats.counts)
        return self

    def _finish(self, grid: Grid, d: int, sums: np.ndarray, counts: np.ndarray) -> None:
        self.grid_ = grid
        self.bandwidth_ = grid.h
        self.n_features_in_ = int(d)
        self.report_sums_ = sums
        self.report_counts_ = counts
        self.statistic_ = _statistic(self.randomizer, grid, float(self.alpha), sums, counts, len(self.classes_))

    # ------------------------------------------------------------- printing
    def guarantee_text(self) -> str:
        """The model's guarantee in one line (what ``dpglass inspect`` and ``dpglass ldp fit`` print)."""
        check_is_fitted(self)
        return (f"guarantee: each of the {int(self.report_counts_.sum())} reports is {float(self.alpha):g}-LDP "
                f"({self.randomizer} randomizer); the classifier is a post-processing of the reports "
                "(no central-DP ledger)")

    @classmethod
    def _privacy_summary(cls, data: dict) -> str:
        """The privacy line ``dpglass inspect`` should print for a verified file of this model, which has no
        central-DP ledger (``format_model_report`` prints "privacy: none (non-private model, no ledger)" for
        every file without one, until it asks the class for this line)."""
        return (f"privacy: {data['guarantee']}: each of the {int(data['n_reports'])} reports is "
                f"{float(data['alpha_per_report']):g}-LDP ({data['params']['randomizer']} randomizer); "
                "no central-DP ledger")

    def to_text(self) -> str:
        return super().to_text() + "\n" + self.guarantee_text()

    # ----------------------------------------------------------------- JSON
    def _state_to_dict(self) -> dict:
        """What the file holds beside the common fields: public metadata and integer sums of the reports."""
        return {
            "guarantee": GUARANTEE,
            "alpha_per_report": float(self.alpha),
            "n_reports": int(self.report_counts_.sum()),
            "grid": self.grid_.to_dict(),
            "report_sums": self.report_sums_.tolist(),
            "report_counts": self.report_counts_.tolist(),
        }

    def _state_from_dict(self, data: dict) -> None:
        """Restore (and check) what :meth:`_state_to_dict` wrote on an instance built from the file's params.

        ``T`` is recomputed from the sums; anything inconsistent raises ModelFileError.
        """
        if data["guarantee"] != GUARANTEE:
            raise ModelFileError(f"'guarantee' is {data['guarantee']!r}; an {type(self).__name__} file states "
                                 f"{GUARANTEE!r}.")
        if self.random_state is not None:
            raise ModelFileError(f"'params.random_state' is {self.random_state!r}; a model file never holds the "
                                 "seed of its noise (null).")
        if float(data["alpha_per_report"]) != float(self.alpha):
            raise ModelFileError("'alpha_per_report' does not match the model's alpha.")
        if self.bounds is None:
            raise ModelFileError("'params.bounds' is null; the file states the grid's box.")
        lower, upper = check_bounds(tuple(self.bounds))
        g = data["grid"]
        grid = Grid(*check_bounds((g["lower"], g["upper"])), check_bandwidth(float(g["bandwidth"])))
        if (grid.K != int(g["K"]) or not np.array_equal(grid.lower, lower) or not np.array_equal(grid.upper, upper)
                or (self.bandwidth != "auto" and float(self.bandwidth) != grid.h)):
            raise ModelFileError("The grid does not match the model's bounds and bandwidth.")
        if grid.d != int(data["n_features_in"]):
            raise ModelFileError(f"'n_features_in' is {data['n_features_in']}; the grid has {grid.d} features.")
        sums = np.asarray(data["report_sums"])
        counts = np.asarray(data["report_counts"])
        if sums.dtype.kind not in "iu" or counts.dtype.kind not in "iu":
            raise ModelFileError("The report sums and counts are integers.")
        sums, counts = sums.astype(np.int64), counts.astype(np.int64)
        K = len(self.classes_)
        if self.randomizer == "laplace" and K != 2:
            raise ModelFileError(f"'classes' holds {K} labels; the 'laplace' randomizer is binary (two labels).")
        expected = K * grid.n_fine if self.randomizer == "oue" else grid.n_cubes
        if (sums.shape != (2, expected) or counts.shape != (2,) or (counts < 0).any()
                or int(counts.sum()) != int(data["n_reports"])):
            raise ModelFileError("The report sums do not match the grid (or the counts the number of reports).")
        if self.randomizer == "oue" and (counts[1] != 0 or sums[1].any() or (sums[0] < 0).any()
                                         or (sums[0] > counts[0]).any()):
            raise ModelFileError("'oue' reports are bits with no second half: each sum lies in [0, n_reports].")
        declared = _declared_classes(self.classes)
        if declared is not None and [_plain(c) for c in declared] != [_plain(c) for c in self.classes_]:
            raise ModelFileError(f"'classes' is {[_plain(c) for c in self.classes_]!r} but params.classes is "
                                 f"{list(self.classes)!r}.")
        self._finish(grid, grid.d, sums, counts)

    @classmethod
    def _params_from_dict(cls, params: dict) -> dict:
        """The file's params as constructor arguments (the box as a pair)."""
        params = dict(params)
        if isinstance(params.get("bounds"), list):
            params["bounds"] = tuple(params["bounds"])
        return params

    def to_dict(self) -> dict:
        """The model as JSON: the common fields of every dpglass model file, the public metadata and the
        integer sums of the reports (``T`` is recomputed on load).  The seed is never written."""
        check_is_fitted(self)
        params = self.get_params(deep=False)
        params["random_state"] = None
        params["bounds"] = [self.grid_.lower.tolist(), self.grid_.upper.tolist()]
        if params["classes"] is not None:
            params["classes"] = [_plain(c) for c in params["classes"]]
        return {
            "model": type(self).__name__,
            "params": params,
            "classes": [_plain(c) for c in self.classes_],
            "n_features_in": int(self.n_features_in_),
            "feature_names": self.feature_names(),
            "has_feature_names": hasattr(self, "feature_names_in_"),
            **self._state_to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict):
        """Rebuild a model written by :meth:`to_dict`, verified first as every dpglass model file is
        (``dpglass.models._verify``): an incomplete, inconsistent or edited file raises ModelFileError."""
        from dpglass.models._verify import verify_model_dict

        verify_model_dict(data, cls)
        try:
            model = cls(**cls._params_from_dict(data["params"]))
            model.classes_ = np.array(data["classes"])
            model._state_from_dict(data)
        except ModelFileError:
            raise
        except (KeyError, TypeError, ValueError, InvalidParameterError) as exc:
            raise ModelFileError(f"Incomplete or inconsistent {cls.__name__} file: {exc}") from None
        if data.get("has_feature_names"):
            model.feature_names_in_ = np.asarray(data["feature_names"], dtype=object)
        return model

    def save(self, path) -> None:
        """Write the model as JSON (``dpglass.models.load_model`` and ``dpglass inspect`` read it)."""
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=2)
