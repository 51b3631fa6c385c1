"""The multiclass reproduction's datasets, made 0/1 by public cut points from documented ranges (for wine, the
documentation's ranges are the data's own published extremes: see below).

Every numeric feature ``j`` has a public range ``[lo_j, hi_j]``, chosen
**before looking at the data** from what is documented about it; its
``bins - 1`` cut points are dpglass's public grid of that range
(:func:`dpglass.schema.columns.grid_cut_points`: equally spaced, strictly
inside, the same as a schema's ``"grid"`` thresholds), and the 0/1 features
are the indicators ``x_j > c`` (a per-record map: a value outside the range
simply falls in an end bin).  The naive Bayes floor reads the same cut points
as bins (the number of cut points below the value).

* **wine** (scikit-learn's bundled copy of UCI's wine, 178 records, 13
  features, 3 cultivars): the ranges of the dataset's documentation (the
  minimum and maximum of its "Summary Statistics" table, UCI's and
  ``load_wine().DESCR``'s).  They are the data's own extremes, published
  with it; taking them as public is the issue's assumption ("features mapped
  to [0, 1] by their ranges"), stated as such in the report.
* **digits** (scikit-learn's bundled copy of UCI's optical digits, 1,797
  records, 64 pixels, 10 classes): every pixel is documented as an integer in
  0..16.
* **synthetic**: ``make_classification`` with K = 5 classes, 10^5 records, a
  public generator seed; each of its 10 features gets the range [-5, 5]
  (assumed from the generator's construction: class centroids at +-1 on the
  informative axes, N(0, 1) draws mixed by a matrix of entries in [-1, 1];
  the range is fixed from that description, not from the sample).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["DIGITS_RANGE", "SYNTHETIC", "SYNTHETIC_RANGE", "WINE_RANGES", "Dataset", "load"]

#: wine: the documentation's (min, max) of each feature, in load_wine's column order.
WINE_RANGES = (
    ("alcohol", 11.0, 14.8), ("malic_acid", 0.74, 5.80), ("ash", 1.36, 3.23), ("alcalinity_of_ash", 10.6, 30.0),
    ("magnesium", 70.0, 162.0), ("total_phenols", 0.98, 3.88), ("flavanoids", 0.34, 5.08),
    ("nonflavanoid_phenols", 0.13, 0.66), ("proanthocyanins", 0.41, 3.58), ("color_intensity", 1.3, 13.0),
    ("hue", 0.48, 1.71), ("od280/od315_of_diluted_wines", 1.27, 4.00), ("proline", 278.0, 1680.0),
)
#: digits: every pixel is an integer in 0..16 (the dataset's documentation).
DIGITS_RANGE = (0.0, 16.0)
#: synthetic: make_classification's parameters (public, including its seed) and the range assumed per feature.
SYNTHETIC = dict(n_samples=100_000, n_features=10, n_informative=6, n_redundant=0, n_classes=5,
                 n_clusters_per_class=1, class_sep=1.0, random_state=31)
SYNTHETIC_RANGE = (-5.0, 5.0)


@dataclass(frozen=True)
class Dataset:
    """One dataset: the numeric features, the labels and the public encoding."""

    name: str
    X: np.ndarray  # numeric features
    y: np.ndarray  # class codes 0..K-1
    names: tuple  # feature names
    ranges: tuple  # (lo, hi) per feature: public
    cuts: tuple  # public cut points per feature
    integer: bool = False

    @property
    def classes(self) -> list:
        return list(range(int(self.y.max()) + 1))

    def binary(self, X=None) -> np.ndarray:
        """The 0/1 features ``x_j > c`` for every public cut point ``c`` of feature ``j`` (uint8)."""
        X = self.X if X is None else X
        return np.concatenate([(X[:, [j]] > np.asarray(c)[None, :]) for j, c in enumerate(self.cuts)],
                              axis=1).astype(np.uint8)

    def binary_names(self) -> list:
        return [f"{n}>{c:g}" for n, cuts in zip(self.names, self.cuts) for c in cuts]

    def bins(self, X=None) -> np.ndarray:
        """Bin index of every value (the number of its feature's cut points below it), int64."""
        X = self.X if X is None else X
        return np.stack([(X[:, [j]] > np.asarray(c)[None, :]).sum(axis=1) for j, c in enumerate(self.cuts)], axis=1)

    def scaled(self, X=None) -> np.ndarray:
        """The numeric features mapped to [0, 1] by their public ranges (clipped): the references' numeric view."""
        X = self.X if X is None else X
        lo, hi = (np.array(v, float) for v in zip(*self.ranges))
        return np.clip((X - lo) / (hi - lo), 0.0, 1.0)


def _cut_points(names, ranges, n_bins: int, integer: bool) -> tuple:
    from dpglass.schema.columns import Column, grid_cut_points

    return tuple(grid_cut_points(Column(n, "numeric", bounds=(lo, hi), thresholds="grid", n_thresholds=n_bins - 1,
                                        integer=integer)) for n, (lo, hi) in zip(names, ranges))


def load(name: str, n_bins: int, n_records: int | None = None) -> Dataset:
    """A dataset with its public ``n_bins``-bin encoding; ``n_records``: its first records only (quick plans)."""
    from sklearn.datasets import load_digits, load_wine, make_classification

    integer = False
    if name == "wine":
        bunch = load_wine()
        X, y = bunch.data, bunch.target
        names = tuple(n for n, _, _ in WINE_RANGES)
        if tuple(bunch.feature_names) != names:
            raise RuntimeError(f"wine's columns are {bunch.feature_names}, not the documented {names}.")
        ranges = tuple((lo, hi) for _, lo, hi in WINE_RANGES)
    elif name == "digits":
        bunch = load_digits()
        X, y = bunch.data, bunch.target
        names = tuple(bunch.feature_names)
        ranges = (DIGITS_RANGE,) * X.shape[1]
        integer = True
    elif name == "synthetic":
        X, y = make_classification(**SYNTHETIC)
        names = tuple(f"x{j}" for j in range(X.shape[1]))
        ranges = (SYNTHETIC_RANGE,) * X.shape[1]
    else:
        raise ValueError(f"Unknown dataset {name!r}: 'wine', 'digits' or 'synthetic'.")
    if n_records is not None:
        X, y = X[:n_records], y[:n_records]
    return Dataset(name, np.asarray(X, float), np.asarray(y, np.int64), names, ranges,
                   _cut_points(names, ranges, n_bins, integer), integer)
