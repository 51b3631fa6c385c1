"""Built-in datasets: one loader each, all returning 0/1 features and a 0/1 label.

Every binarization here uses **fixed, data-independent** thresholds and
category lists, written below with where they come from.  None is computed
from the data when the loader runs, so using a built-in dataset's columns
spends no privacy budget on the encoding (the encoding may of course be
informed by public documentation of the dataset).  See ``docs/datasets.md``.

Parsed datasets are cached per process (``functools.lru_cache`` keyed by the
dataset name, the resolved data home and the split); every call returns fresh
copies.  A file changed on disk after its first load is not re-read.
"""

from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from dpglass._validation import InstanceOf, Options, validate_params
from dpglass.datasets._home import REMOTE_FILES, fetch_file, get_data_home, missing_files
from dpglass.datasets.binarizer import Binarizer
from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = ["DatasetInfo", "load_dataset", "list_datasets"]


@dataclass(frozen=True)
class DatasetInfo:
    """What :func:`list_datasets` says about one dataset.

    Attributes
    ----------
    name : str
        The name to pass to :func:`load_dataset`.
    description : str
        Source, label meaning (``y = 1``) and encoding, in one sentence or two.
    n_samples, n_features : int
        Shape of ``X`` for ``split=None``.
    files : tuple of str
        Paths relative to the data home (empty for bundled datasets).
    status : str
        ``"bundled"``, ``"data home <path>"`` when every file is there, else
        ``"missing: would download from <url>, ..."`` (``download=True``) or
        ``"missing: put <file> at <path>; ..."`` (``download=False``).
    """

    name: str
    description: str
    n_samples: int
    n_features: int
    files: tuple
    status: str


# ============================================================================
# Readers
# ============================================================================
def _check_shape(frame_or_array, expected, relpath):
    if tuple(frame_or_array.shape) != tuple(expected):
        raise DataValidationError(
            f"{relpath} has shape {tuple(frame_or_array.shape)}, not the documented {tuple(expected)}: it is "
            f"not the expected file. Replace it with the file whose sha256 is {REMOTE_FILES[relpath].sha256} "
            "(see docs/datasets.md)."
        )


def _read_binary_csv(path: Path, relpath: str, shape) -> tuple[pd.DataFrame, np.ndarray]:
    """A 0/1 CSV with a header whose last column is the label."""
    frame = pd.read_csv(path, dtype=np.uint8, engine="c")
    _check_shape(frame, shape, relpath)
    values = frame.to_numpy()
    if values.max() > 1:
        raise DataValidationError(f"{relpath} has entries other than 0 and 1; it is not the expected file.")
    columns = [str(c) for c in frame.columns]
    X = pd.DataFrame(values[:, :-1], columns=columns[:-1])
    return X, values[:, -1].astype(np.uint8)


def _check_values(frame: pd.DataFrame, categories: dict, relpath: str) -> None:
    for col, allowed in categories.items():
        bad = set(frame[col].unique()) - set(allowed)
        if bad:
            raise DataValidationError(
                f"{relpath} has value(s) {sorted(map(str, bad))!r} in column {col!r} that the documented "
                f"schema does not list ({list(allowed)!r}); it is not the expected file."
            )


def _encode(frame: pd.DataFrame, thresholds: dict, categories: dict, relpath: str) -> pd.DataFrame:
    """Fixed-schema encoding with :class:`Binarizer` (given thresholds and categories)."""
    _check_values(frame, categories, relpath)
    encoded = Binarizer(thresholds=thresholds, categories=categories).fit_transform(frame)
    return encoded.reset_index(drop=True)


# ============================================================================
# breast-cancer (bundled with scikit-learn)
# ============================================================================
#: Two cut points per feature, from the Min/Max table of the dataset's
#: documentation (scikit-learn's ``load_breast_cancer().DESCR``, which copies
#: UCI's wdbc.names summary): ``lo + (hi - lo)/4`` and ``lo + (hi - lo)/2``,
#: rounded to 2 significant digits.  Written here as literals; nothing is
#: computed from the 569 records.  (name, documented min, documented max, cuts)
_BREAST_CANCER_CUTS = (
    ("mean radius", 6.981, 28.11, (12.0, 18.0)),
    ("mean texture", 9.71, 39.28, (17.0, 24.0)),
    ("mean perimeter", 43.79, 188.5, (80.0, 120.0)),
    ("mean area", 143.5, 2501.0, (730.0, 1300.0)),
    ("mean smoothness", 0.053, 0.163, (0.081, 0.11)),
    ("mean compactness", 0.019, 0.345, (0.1, 0.18)),
    ("mean concavity", 0.0, 0.427, (0.11, 0.21)),
    ("mean concave points", 0.0, 0.201, (0.05, 0.1)),
    ("mean symmetry", 0.106, 0.304, (0.16, 0.21)),
    ("mean fractal dimension", 0.05, 0.097, (0.062, 0.074)),
    ("radius error", 0.112, 2.873, (0.8, 1.5)),
    ("texture error", 0.36, 4.885, (1.5, 2.6)),
    ("perimeter error", 0.757, 21.98, (6.1, 11.0)),
    ("area error", 6.802, 542.2, (140.0, 270.0)),
    ("smoothness error", 0.002, 0.031, (0.0092, 0.017)),
    ("compactness error", 0.002, 0.135, (0.035, 0.069)),
    ("concavity error", 0.0, 0.396, (0.099, 0.2)),
    ("concave points error", 0.0, 0.053, (0.013, 0.026)),
    ("symmetry error", 0.008, 0.079, (0.026, 0.044)),
    ("fractal dimension error", 0.001, 0.03, (0.0083, 0.015)),
    ("worst radius", 7.93, 36.04, (15.0, 22.0)),
    ("worst texture", 12.02, 49.54, (21.0, 31.0)),
    ("worst perimeter", 50.41, 251.2, (100.0, 150.0)),
    ("worst area", 185.2, 4254.0, (1200.0, 2200.0)),
    ("worst smoothness", 0.071, 0.223, (0.11, 0.15)),
    ("worst compactness", 0.027, 1.058, (0.28, 0.54)),
    ("worst concavity", 0.0, 1.252, (0.31, 0.63)),
    ("worst concave points", 0.0, 0.291, (0.073, 0.15)),
    ("worst symmetry", 0.156, 0.664, (0.28, 0.41)),
    ("worst fractal dimension", 0.055, 0.208, (0.093, 0.13)),
)


def _load_breast_cancer(paths, split):
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    frame = bunch.data
    expected = [name for name, *_ in _BREAST_CANCER_CUTS]
    if list(frame.columns) != expected:
        raise DataValidationError(
            "scikit-learn's load_breast_cancer has columns that dpglass does not know; "
            f"expected {expected!r}. Please report this with your scikit-learn version."
        )
    thresholds = {name: list(cuts) for name, _, _, cuts in _BREAST_CANCER_CUTS}
    X = _encode(frame, thresholds, {}, "sklearn load_breast_cancer")
    # scikit-learn: 0 = malignant, 1 = benign.  dpglass: y = 1 means malignant.
    y = (1 - bunch.target.to_numpy()).astype(np.uint8)
    return X, y


# ============================================================================
# binarized files, used as published
# ============================================================================
def _binary_file_loader(relpath, shape):
    def load(paths, split):
        return _read_binary_csv(paths[relpath], relpath, shape)

    return load


# ============================================================================
# adult (UCI raw)
# ============================================================================
_ADULT_COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week", "native-country", "income",
)  # fmt: skip

#: Categories: exactly the value lists of UCI's adult.names, in its order, plus
#: "?" (UCI's code for an unknown value) for the three attributes that have
#: unknowns.  "?" is kept as a category of its own ("workclass=?"): whether a
#: value is missing is itself informative and imputing it would need a model.
_ADULT_CATEGORIES = {
    "workclass": ["Private", "Self-emp-not-inc", "Self-emp-inc", "Federal-gov", "Local-gov", "State-gov",
                  "Without-pay", "Never-worked", "?"],
    "education": ["Bachelors", "Some-college", "11th", "HS-grad", "Prof-school", "Assoc-acdm", "Assoc-voc", "9th",
                  "7th-8th", "12th", "Masters", "1st-4th", "10th", "Doctorate", "5th-6th", "Preschool"],
    "marital-status": ["Married-civ-spouse", "Divorced", "Never-married", "Separated", "Widowed",
                       "Married-spouse-absent", "Married-AF-spouse"],
    "occupation": ["Tech-support", "Craft-repair", "Other-service", "Sales", "Exec-managerial", "Prof-specialty",
                   "Handlers-cleaners", "Machine-op-inspct", "Adm-clerical", "Farming-fishing", "Transport-moving",
                   "Priv-house-serv", "Protective-serv", "Armed-Forces", "?"],
    "relationship": ["Wife", "Own-child", "Husband", "Not-in-family", "Other-relative", "Unmarried"],
    "race": ["White", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other", "Black"],
    "sex": ["Female", "Male"],
    "native-country": ["United-States", "Cambodia", "England", "Puerto-Rico", "Canada", "Germany",
                       "Outlying-US(Guam-USVI-etc)", "India", "Japan", "Greece", "South", "China", "Cuba", "Iran",
                       "Honduras", "Philippines", "Italy", "Poland", "Jamaica", "Vietnam", "Mexico", "Portugal",
                       "Ireland", "France", "Dominican-Republic", "Laos", "Ecuador", "Taiwan", "Haiti", "Columbia",
                       "Hungary", "Guatemala", "Nicaragua", "Scotland", "Thailand", "Yugoslavia", "El-Salvador",
                       "Trinadad&Tobago", "Peru", "Hong", "Holand-Netherlands", "?"],
}  # fmt: skip

#: Numeric cut points ("x>t" is strictly greater), fixed round numbers:
#: * age: decade boundaries 25..65 (65: US retirement age);
#: * education-num: the ordinal code of the education level (9 = HS-grad,
#:   13 = Bachelors, 14 = Masters in UCI's coding): >8 = at least HS-grad,
#:   >12 = at least Bachelors, >13 = a graduate degree;
#: * capital-gain, capital-loss: any (>0) and a large amount (round numbers);
#: * hours-per-week: >20 (more than half time), >40 (over the standard
#:   40-hour week), >50.
#: fnlwgt is dropped: it is the Census sampling weight of the record (how many
#: people it stands for), not an attribute of the person.
_ADULT_THRESHOLDS = {
    "age": [25, 35, 45, 55, 65],
    "education-num": [8, 12, 13],
    "capital-gain": [0, 5000],
    "capital-loss": [0, 2000],
    "hours-per-week": [20, 40, 50],
}
_ADULT_FILES = {"train": "raw/adult/adult.data", "test": "raw/adult/adult.test"}
_ADULT_ROWS = {"train": 32561, "test": 16281}


def _read_adult(path: Path, relpath: str, part: str) -> pd.DataFrame:
    frame = pd.read_csv(
        path,
        header=None,
        names=list(_ADULT_COLUMNS),
        skipinitialspace=True,
        skiprows=1 if part == "test" else 0,  # adult.test starts with "|1x3 Cross validator"
        dtype={c: str for c in _ADULT_COLUMNS if c in _ADULT_CATEGORIES or c == "income"},
        engine="c",
    )
    _check_shape(frame, (_ADULT_ROWS[part], len(_ADULT_COLUMNS)), relpath)
    return frame


def _load_adult(paths, split):
    parts = ["train", "test"] if split is None else [split]
    frame = pd.concat(
        [_read_adult(paths[_ADULT_FILES[p]], _ADULT_FILES[p], p) for p in parts], ignore_index=True
    )
    income = frame["income"].str.rstrip(".")  # adult.test labels end with "."
    if not income.isin(["<=50K", ">50K"]).all():
        raise DataValidationError("The Adult files have income labels other than '<=50K' and '>50K'.")
    y = (income == ">50K").to_numpy().astype(np.uint8)
    features = frame.drop(columns=["fnlwgt", "income"])
    X = _encode(features, _ADULT_THRESHOLDS, _ADULT_CATEGORIES, "raw/adult")
    return X, y


# ============================================================================
# compas (ProPublica raw)
# ============================================================================
#: Categories as coded in ProPublica's file; c_charge_degree F/M is renamed.
_COMPAS_CATEGORIES = {
    "sex": ["Male", "Female"],
    "race": ["African-American", "Asian", "Caucasian", "Hispanic", "Native American", "Other"],
    "c_charge_degree": ["Felony", "Misdemeanor"],
}
#: Cut points: age > 24 and > 45 reproduce ProPublica's own age_cat boundaries
#: ("Less than 25", "Greater than 45"); 20, 30, 35, 60 are round ages in
#: between and beyond.  Counts of prior and juvenile offences: any (>0), and
#: for priors the round counts 1, 3, 5, 10.
_COMPAS_THRESHOLDS = {
    "age": [20, 24, 30, 35, 45, 60],
    "priors_count": [0, 1, 3, 5, 10],
    "juv_fel_count": [0],
    "juv_misd_count": [0],
    "juv_other_count": [0],
}
_COMPAS_FILE = "raw/compas/compas-scores-two-years.csv"


def _load_compas(paths, split):
    frame = pd.read_csv(paths[_COMPAS_FILE], engine="c")
    # The header repeats decile_score and priors_count; pandas renames the
    # second copies to "decile_score.1" and "priors_count.1".
    _check_shape(frame, (7214, 53), _COMPAS_FILE)
    if not (frame["priors_count"] == frame["priors_count.1"]).all():
        raise DataValidationError(f"{_COMPAS_FILE}: the two priors_count columns differ; not the expected file.")
    frame = frame.assign(c_charge_degree=frame["c_charge_degree"].map({"F": "Felony", "M": "Misdemeanor"}))
    if frame["c_charge_degree"].isna().any():
        raise DataValidationError(f"{_COMPAS_FILE}: c_charge_degree has values other than F and M.")
    columns = ["sex", "race", "age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count",
               "c_charge_degree"]  # fmt: skip
    X = _encode(frame[columns], _COMPAS_THRESHOLDS, _COMPAS_CATEGORIES, _COMPAS_FILE)
    y = frame["two_year_recid"].to_numpy().astype(np.uint8)
    return X, y


# ============================================================================
# german (UCI Statlog raw)
# ============================================================================
_GERMAN_FILE = "raw/german/german.data"
_GERMAN_MAPS = "raw/german/values_maps.json"
#: Attribute names in file order (UCI german.doc, attributes 1..20); the
#: categorical ones are the keys of values_maps.json.
_GERMAN_COLUMNS = (
    "status", "duration_months", "credit_history", "purpose", "credit_amount", "savings", "present_employment",
    "installment_rate", "status_sex", "other_debtors", "present_residence", "property", "age",
    "installment_plans", "housing", "existing_credits", "job", "people_liable", "telephone", "foreign_worker",
)  # fmt: skip
#: Cut points, fixed round numbers:
#: * duration_months: 1, 2 and 3 years; credit_amount (DM): 1000, 2000, 5000, 10000;
#: * installment_rate (% of disposable income), present_residence (years),
#:   existing_credits, people_liable: small ordinal codes 1..4 (1..2 for
#:   people_liable), cut between every pair of codes;
#: * age: the decade boundaries also used for Adult, 60 instead of 55/65.
_GERMAN_THRESHOLDS = {
    "duration_months": [12, 24, 36],
    "credit_amount": [1000, 2000, 5000, 10000],
    "installment_rate": [1, 2, 3],
    "present_residence": [1, 2, 3],
    "age": [25, 35, 45, 60],
    "existing_credits": [1, 2, 3],
    "people_liable": [1],
}


def _german_text(value) -> str:
    if value is True:
        return "yes"
    if value is False:
        return "no"
    text = " ".join(str(value).split())
    return text.replace(".. ", "... ").replace("....", "...") if text.startswith("..") else text


def _load_german(paths, split):
    with open(paths[_GERMAN_MAPS], encoding="utf-8") as fh:
        maps = json.load(fh)
    frame = pd.read_csv(paths[_GERMAN_FILE], sep=" ", header=None, engine="c")
    _check_shape(frame, (1000, 21), _GERMAN_FILE)
    frame.columns = list(_GERMAN_COLUMNS) + ["credit"]
    categories = {}
    for col in _GERMAN_COLUMNS:
        if col in _GERMAN_THRESHOLDS:
            continue
        if col not in maps:
            raise DataValidationError(f"{_GERMAN_MAPS} has no code book for {col!r}; it is not the expected file.")
        codes = {code: _german_text(text) for code, text in maps[col].items()}
        _check_values(frame[[col]], {col: list(codes)}, _GERMAN_FILE)
        frame[col] = frame[col].map(codes)
        categories[col] = list(dict.fromkeys(codes.values()))
    label = frame["credit"]
    if not label.isin([1, 2]).all():
        raise DataValidationError(f"{_GERMAN_FILE}: the label column has values other than 1 (good) and 2 (bad).")
    y = (label == 1).to_numpy().astype(np.uint8)  # y = 1: good credit
    X = _encode(frame[list(_GERMAN_COLUMNS)], _GERMAN_THRESHOLDS, categories, _GERMAN_FILE)
    return X, y


# ============================================================================
# mushroom (UCI raw)
# ============================================================================
_MUSHROOM_FILE = "raw/mushroom/agaricus-lepiota.data"
#: UCI agaricus-lepiota.names, "Attribute Information": every attribute with
#: its documented codes and their meaning, in file order after the class.
#: Columns are named with the meaning ("odor=foul"); all documented values
#: get a column, so a few are constant 0 in this file (e.g. veil-type=universal).
_MUSHROOM_SCHEMA = (
    ("cap-shape", {"b": "bell", "c": "conical", "x": "convex", "f": "flat", "k": "knobbed", "s": "sunken"}),
    ("cap-surface", {"f": "fibrous", "g": "grooves", "y": "scaly", "s": "smooth"}),
    ("cap-color", {"n": "brown", "b": "buff", "c": "cinnamon", "g": "gray", "r": "green", "p": "pink",
                   "u": "purple", "e": "red", "w": "white", "y": "yellow"}),
    ("bruises", {"t": "yes", "f": "no"}),
    ("odor", {"a": "almond", "l": "anise", "c": "creosote", "y": "fishy", "f": "foul", "m": "musty",
              "n": "none", "p": "pungent", "s": "spicy"}),
    ("gill-attachment", {"a": "attached", "d": "descending", "f": "free", "n": "notched"}),
    ("gill-spacing", {"c": "close", "w": "crowded", "d": "distant"}),
    ("gill-size", {"b": "broad", "n": "narrow"}),
    ("gill-color", {"k": "black", "n": "brown", "b": "buff", "h": "chocolate", "g": "gray", "r": "green",
                    "o": "orange", "p": "pink", "u": "purple", "e": "red", "w": "white", "y": "yellow"}),
    ("stalk-shape", {"e": "enlarging", "t": "tapering"}),
    ("stalk-root", {"b": "bulbous", "c": "club", "u": "cup", "e": "equal", "z": "rhizomorphs", "r": "rooted",
                    "?": "?"}),
    ("stalk-surface-above-ring", {"f": "fibrous", "y": "scaly", "k": "silky", "s": "smooth"}),
    ("stalk-surface-below-ring", {"f": "fibrous", "y": "scaly", "k": "silky", "s": "smooth"}),
    ("stalk-color-above-ring", {"n": "brown", "b": "buff", "c": "cinnamon", "g": "gray", "o": "orange",
                                "p": "pink", "e": "red", "w": "white", "y": "yellow"}),
    ("stalk-color-below-ring", {"n": "brown", "b": "buff", "c": "cinnamon", "g": "gray", "o": "orange",
                                "p": "pink", "e": "red", "w": "white", "y": "yellow"}),
    ("veil-type", {"p": "partial", "u": "universal"}),
    ("veil-color", {"n": "brown", "o": "orange", "w": "white", "y": "yellow"}),
    ("ring-number", {"n": "none", "o": "one", "t": "two"}),
    ("ring-type", {"c": "cobwebby", "e": "evanescent", "f": "flaring", "l": "large", "n": "none", "p": "pendant",
                   "s": "sheathing", "z": "zone"}),
    ("spore-print-color", {"k": "black", "n": "brown", "b": "buff", "h": "chocolate", "r": "green", "o": "orange",
                           "u": "purple", "w": "white", "y": "yellow"}),
    ("population", {"a": "abundant", "c": "clustered", "n": "numerous", "s": "scattered", "v": "several",
                    "y": "solitary"}),
    ("habitat", {"g": "grasses", "l": "leaves", "m": "meadows", "p": "paths", "u": "urban", "w": "waste",
                 "d": "woods"}),
)  # fmt: skip


def _load_mushroom(paths, split):
    names = ["class"] + [name for name, _ in _MUSHROOM_SCHEMA]
    frame = pd.read_csv(paths[_MUSHROOM_FILE], header=None, names=names, dtype=str, engine="c",
                        keep_default_na=False)  # fmt: skip
    _check_shape(frame, (8124, 23), _MUSHROOM_FILE)
    _check_values(frame, {"class": ["e", "p"], **{n: list(c) for n, c in _MUSHROOM_SCHEMA}}, _MUSHROOM_FILE)
    for name, codes in _MUSHROOM_SCHEMA:
        frame[name] = frame[name].map(codes)
    categories = {name: list(codes.values()) for name, codes in _MUSHROOM_SCHEMA}
    y = (frame["class"] == "p").to_numpy().astype(np.uint8)  # y = 1: poisonous
    X = _encode(frame[names[1:]], {}, categories, _MUSHROOM_FILE)
    return X, y


# ============================================================================
# cod-rna (LIBSVM)
# ============================================================================
_CODRNA_FILE = "raw/cod-rna/cod-rna"
#: cod-rna's 8 features (Uzilov, Keegan & Mathews 2006, via LIBSVM) are, as we
#: read that paper: f1 the Dynalign free-energy change of the sequence pair,
#: f2 the sequence length, f3..f5 and f6..f8 the A, U, C frequencies of the
#: two sequences.  They are not documented with ranges, so the cuts are a
#: fixed grid of round numbers chosen once by the dpglass developers over the
#: range of the published file (f1 in [-1868, 0], f2 in [67, 133]); for the
#: frequencies, 0.25 is uniform base composition and 0.2 / 0.3 either side.
#: They are not quantiles and are not recomputed from the data.
_CODRNA_THRESHOLDS = {
    "f1": [-1500, -1000, -500],
    "f2": [80, 100, 120],
    **{f"f{k}": [0.2, 0.25, 0.3] for k in range(3, 9)},
}


def _read_codrna(paths):
    """The checked raw cod-rna file: its eight features as a frame and y (1: label +1)."""
    from sklearn.datasets import load_svmlight_file

    X_sparse, labels = load_svmlight_file(str(paths[_CODRNA_FILE]), n_features=8)
    dense = X_sparse.toarray()
    _check_shape(dense, (59535, 8), _CODRNA_FILE)
    if not np.isin(labels, [-1, 1]).all():
        raise DataValidationError(f"{_CODRNA_FILE} has labels other than -1 and +1; it is not the expected file.")
    return pd.DataFrame(dense, columns=[f"f{k}" for k in range(1, 9)]), (labels > 0).astype(np.uint8)


def _load_codrna(paths, split):
    frame, y = _read_codrna(paths)
    return _encode(frame, _CODRNA_THRESHOLDS, {}, _CODRNA_FILE), y


# ============================================================================
# paper 002's encodings: one-hot bins of equal width over public ranges
# ============================================================================
#: Paper 002 (Section 5) one-hot codes Adult into 162 columns and Cod-RNA into
#: 80, "dataset-oblivious", without giving the bins.  The counts pin them down:
#: Adult's 8 categoricals one-hot on UCI's value lists plus "?" make 102
#: columns, leaving 60 = 6 numerics x 10 bins; Cod-RNA's 8 features x 10 bins
#: make 80.  The paper's Table 4 model prints "13 <= education-num <= 14.5",
#: which is bin 9 of 10 equal-width bins over education-num's range [1, 16].
#: So every numeric becomes 10 one-hot bins of equal width over a fixed range:
#: ``[lo + (hi - lo) j/10, lo + (hi - lo) (j+1)/10)`` (the last bin closed);
#: a value below ``lo`` or above ``hi`` falls in the first or last bin.
PAPER_BINS = 10


def _bin_edges(lo: float, hi: float, n_bins: int = PAPER_BINS) -> np.ndarray:
    return np.array([lo + (hi - lo) * j / n_bins for j in range(n_bins + 1)], dtype=np.float64)


def _bin_label(name: str, edges: np.ndarray, j: int) -> str:
    from dpglass.datasets.binarizer import _format_value

    right = "]" if j == len(edges) - 2 else ")"
    return f"{name}=[{_format_value(round(edges[j], 6))},{_format_value(round(edges[j + 1], 6))}{right}"


def equal_width_onehot(frame: pd.DataFrame, ranges: dict, n_bins: int = PAPER_BINS) -> pd.DataFrame:
    """One-hot bins of equal width over each column's fixed range ``ranges[col] = (lo, hi)``.

    Column ``"age=[17,25.3)"`` is 1 when ``17 <= age < 25.3``; exactly one bin
    of each column is 1 (values outside ``[lo, hi]`` go to the first or last
    bin).  The ranges are public constants, so the encoding costs no budget.

    Examples
    --------
    >>> out = equal_width_onehot(pd.DataFrame({"x": [0.0, 0.5, 1.0, 7.0]}), {"x": (0, 1)}, n_bins=2)
    >>> list(out.columns), out.to_numpy().tolist()
    (['x=[0,0.5)', 'x=[0.5,1]'], [[1, 0], [0, 1], [0, 1], [0, 1]])
    """
    cols = {}
    for name, (lo, hi) in ranges.items():
        edges = _bin_edges(float(lo), float(hi), n_bins)
        values = frame[name].to_numpy(dtype=np.float64)
        index = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, n_bins - 1)
        for j in range(n_bins):
            cols[_bin_label(name, edges, j)] = (index == j).astype(np.uint8)
    return pd.DataFrame(cols, index=frame.index)


#: Adult's numeric ranges.  age, education-num, capital-gain, capital-loss and
#: hours-per-week: the domain-knowledge bounds that the IBM differential privacy
#: library (diffprivlib, which paper 002 used) publishes for Adult, "chosen
#: independently of the data": (17, 100), (1, 16), (0, 100000), (0, 4500),
#: (1, 100) (notebooks/naive_bayes.ipynb of IBM/differential-privacy-library).
#: They agree with adult.names (extraction rule AAGE>16, HRSWK>0) and with
#: education-num being the code of UCI's 16 education levels.  fnlwgt has no
#: documented range (adult.names: a survey weight, "AFNLWGT>1"); its upper end
#: 1,500,000 is a round number chosen by the dpglass developers above every
#: value of the published files -- the one data-informed choice of this
#: encoding, on a column that describes the sample, not the person.
ADULT_162_RANGES = {
    "age": (17, 100),
    "fnlwgt": (0, 1_500_000),
    "education-num": (1, 16),
    "capital-gain": (0, 100_000),
    "capital-loss": (0, 4500),
    "hours-per-week": (1, 100),
}


def _load_adult_162(paths, split):
    parts = ["train", "test"] if split is None else [split]
    frame = pd.concat(
        [_read_adult(paths[_ADULT_FILES[p]], _ADULT_FILES[p], p) for p in parts], ignore_index=True
    )
    income = frame["income"].str.rstrip(".")
    if not income.isin(["<=50K", ">50K"]).all():
        raise DataValidationError("The Adult files have income labels other than '<=50K' and '>50K'.")
    _check_values(frame, _ADULT_CATEGORIES, "raw/adult")
    cats = Binarizer(thresholds={}, categories=_ADULT_CATEGORIES).fit_transform(frame[list(_ADULT_CATEGORIES)])
    bins = equal_width_onehot(frame, ADULT_162_RANGES)
    columns = []  # file order: each attribute's columns where the attribute stands
    for col in _ADULT_COLUMNS[:-1]:
        source = bins if col in ADULT_162_RANGES else cats
        columns += [c for c in source.columns if c.split("=", 1)[0] == col]
    X = pd.concat([cats.reset_index(drop=True), bins.reset_index(drop=True)], axis=1)[columns]
    return X, (income == ">50K").to_numpy().astype(np.uint8)


#: Cod-RNA's ranges.  f3..f8 are base frequencies: their natural range [0, 1].
#: f1 (the Dynalign free-energy change, <= 0 by construction) and f2 (the
#: sequence length) have no documented range; [-2000, 0] and [60, 140] are
#: round numbers chosen by the dpglass developers around the published file's
#: ranges (-1868..0 and 67..133), as the built-in cod-rna cuts are.
CODRNA_80_RANGES = {"f1": (-2000, 0), "f2": (60, 140), **{f"f{k}": (0, 1) for k in range(3, 9)}}


def _load_codrna_80(paths, split):
    frame, y = _read_codrna(paths)
    return equal_width_onehot(frame, CODRNA_80_RANGES), y


# ============================================================================
# Registry
# ============================================================================
@dataclass(frozen=True)
class _Spec:
    name: str
    description: str
    n_samples: int
    n_features: int
    files: tuple
    load: Callable


_SPECS = {
    s.name: s
    for s in (
        _Spec(
            "breast-cancer",
            "UCI Breast Cancer Wisconsin (Diagnostic), bundled with scikit-learn. y = 1: malignant. "
            "30 features, each cut at 2 fixed thresholds from the documented Min/Max table.",
            569, 60, (), _load_breast_cancer,
        ),
        _Spec(
            "compas-corels",
            "COMPAS binarized as in CORELS / GreedyRL / DP-greedy (binarized/compas/compas.csv). "
            "y = 1: Recidivate-Within-Two-Years.",
            7214, 27, ("binarized/compas/compas.csv",),
            _binary_file_loader("binarized/compas/compas.csv", (7214, 28)),
        ),
        _Spec(
            "compas-rules",
            "COMPAS pre-mined rules of fairCORELSV2 (compas_rules_full_single.csv), the paper's COMPAS. "
            "y = 1: two_year_recid.",
            6150, 18, ("binarized/compas/compas_rules_full_single.csv",),
            _binary_file_loader("binarized/compas/compas_rules_full_single.csv", (6150, 19)),
        ),
        _Spec(
            "german-rules",
            "German Credit pre-mined rules of fairCORELSV2 (german_credit_rules_full_single.csv), the paper's "
            "German Credit. y = 1: credit_rating good.",
            1000, 49, ("binarized/german_credit/german_credit_rules_full_single.csv",),
            _binary_file_loader("binarized/german_credit/german_credit_rules_full_single.csv", (1000, 50)),
        ),
        _Spec(
            "adult-corels",
            "Adult binarized as loaded by GreedyRL / DP-greedy (binarized/adult/adult.csv). y = 1: income >50K.",
            48842, 24, ("binarized/adult/adult.csv",),
            _binary_file_loader("binarized/adult/adult.csv", (48842, 25)),
        ),
        _Spec(
            "adult",
            "UCI Adult, adult.data + adult.test (split='train'/'test' for one of them). y = 1: income >50K. "
            "Categoricals one-hot on the documented values ('?' kept as a category), fnlwgt dropped, "
            "numeric columns cut at fixed round numbers.",
            48842, 117, ("raw/adult/adult.data", "raw/adult/adult.test"), _load_adult,
        ),
        _Spec(
            "compas",
            "ProPublica COMPAS (compas-scores-two-years.csv, all 7214 rows). y = 1: two_year_recid. "
            "sex, race, charge degree one-hot; age, priors and juvenile counts cut at fixed round numbers.",
            7214, 24, (_COMPAS_FILE,), _load_compas,
        ),
        _Spec(
            "german",
            "UCI Statlog German Credit (german.data, names from values_maps.json). y = 1: good credit. "
            "Categoricals one-hot on the code book; numeric columns cut at fixed round numbers.",
            1000, 77, (_GERMAN_FILE, _GERMAN_MAPS), _load_german,
        ),
        _Spec(
            "mushroom",
            "UCI Mushroom (agaricus-lepiota.data). y = 1: poisonous. All 22 attributes one-hot on the "
            "documented values ('stalk-root=?' is the missing value).",
            8124, 126, (_MUSHROOM_FILE,), _load_mushroom,
        ),
        _Spec(
            "cod-rna",
            "LIBSVM cod-rna training split (Uzilov et al. 2006). y = 1: label +1 (non-coding RNA). "
            "8 real features, each cut at 3 fixed thresholds.",
            59535, 24, (_CODRNA_FILE,), _load_codrna,
        ),
        _Spec(
            "adult-162",
            "UCI Adult as paper 002 encodes it (162 columns): the 8 categoricals one-hot with '?', each of the "
            "6 numerics (fnlwgt included) in 10 one-hot bins of equal width over a fixed public range. "
            "y = 1: income >50K. split='train'/'test' as for 'adult'.",
            48842, 162, ("raw/adult/adult.data", "raw/adult/adult.test"), _load_adult_162,
        ),
        _Spec(
            "cod-rna-80",
            "LIBSVM cod-rna as paper 002 encodes it (80 columns): each of the 8 real features in 10 one-hot "
            "bins of equal width over a fixed range. y = 1: label +1.",
            59535, 80, (_CODRNA_FILE,), _load_codrna_80,
        ),
    )
}  # fmt: skip

_NAMES = tuple(_SPECS)
#: The datasets with a canonical train/test split (UCI Adult's two files).
_SPLIT_DATASETS = ("adult", "adult-162")


def _files_for(spec: _Spec, split) -> tuple:
    if spec.name in _SPLIT_DATASETS and split is not None:
        return (_ADULT_FILES[split],)
    return spec.files


@functools.lru_cache(maxsize=None)
def _load_cached(name: str, home: str, split) -> tuple[pd.DataFrame, np.ndarray]:
    spec = _SPECS[name]
    paths = {rel: Path(home) / rel for rel in _files_for(spec, split)}
    X, y = spec.load(paths, split)
    X.columns = [str(c) for c in X.columns]
    if not X.columns.is_unique:  # pragma: no cover - guarded by the schemas above
        raise DataValidationError(f"Dataset {name!r} has duplicate column names.")
    return X, np.ascontiguousarray(y, dtype=np.uint8)


def load_dataset(name, data_home=None, *, download=True, split=None):
    """Load a built-in dataset as 0/1 features and a 0/1 label.

    Parameters
    ----------
    name : str
        One of ``"breast-cancer"``, ``"compas-corels"``, ``"compas-rules"``,
        ``"german-rules"``, ``"adult-corels"``, ``"adult"``, ``"compas"``,
        ``"german"``, ``"mushroom"``, ``"cod-rna"``, and paper 002's
        encodings ``"adult-162"``, ``"cod-rna-80"`` (see :func:`list_datasets`
        and ``docs/datasets.md``).
    data_home : str, os.PathLike or None
        Where the files are (see :func:`get_data_home`): this argument, else
        ``$DPGLASS_DATA``, else ``~/.cache/dpglass``.  Same layout as the
        project's ``shared/data`` (``raw/...``, ``binarized/...``).
    download : bool, default True
        Download a missing file from its public source into ``data_home``
        (its SHA-256 is checked).  With ``False`` a missing file raises.
    split : {None, "train", "test"}
        Only for ``"adult"`` and ``"adult-162"``: the canonical UCI training rows (adult.data,
        32561) or test rows (adult.test, 16281); ``None`` gives both (48842).

    Returns
    -------
    X : pandas.DataFrame of uint8, shape (n_samples, n_features)
        0/1 columns with unique names saying what they test (``"age>25"``,
        ``"sex=Male"``), no missing values.
    y : numpy.ndarray of uint8, shape (n_samples,)
        The 0/1 label; which class is 1 is in the dataset's description.

    Raises
    ------
    DatasetNotFoundError
        A file is missing and cannot be downloaded (the message names the
        file, the path to put it at and its URL).
    InvalidParameterError
        Unknown name, or ``split`` for a dataset other than ``"adult"`` / ``"adult-162"``.

    Examples
    --------
    >>> X, y = load_dataset("breast-cancer")
    >>> X.shape, y.mean().round(3)
    ((569, 60), np.float64(0.373))
    >>> list(X.columns[:2])
    ['mean radius>12', 'mean radius>18']
    """
    validate_params(
        {"name": name, "download": download, "split": split, "data_home": data_home},
        {
            "name": [Options(_NAMES)],
            "download": [InstanceOf(bool)],
            "split": [Options((None, "train", "test"))],
            "data_home": [InstanceOf((str, os.PathLike), "a str or os.PathLike"), InstanceOf(type(None))],
        },
        "load_dataset",
    )
    if split is not None and name not in _SPLIT_DATASETS:
        raise InvalidParameterError(
            f"The 'split' parameter of load_dataset is only available for 'adult' and 'adult-162' (UCI's "
            f"train/test files). Got split={split!r} for {name!r}; leave split=None."
        )
    home = get_data_home(data_home)
    for rel in _files_for(_SPECS[name], split):
        fetch_file(rel, home, download=download, dataset=name)
    X, y = _load_cached(name, str(home.resolve()), split)
    return X.copy(), y.copy()


def list_datasets(data_home=None, *, download=True) -> list[DatasetInfo]:
    """Describe every built-in dataset and where its files are.

    Parameters
    ----------
    data_home : str, os.PathLike or None
        See :func:`get_data_home`.
    download : bool, default True
        Only changes how a missing file is reported: ``"missing: would
        download from <url>"`` or ``"missing: put <file> at <path>"``.

    Returns
    -------
    list of DatasetInfo

    Examples
    --------
    >>> info = {d.name: d for d in list_datasets()}
    >>> info["breast-cancer"].status, info["breast-cancer"].n_features
    ('bundled', 60)
    """
    home = get_data_home(data_home)
    out = []
    for spec in _SPECS.values():
        if not spec.files:
            status = "bundled"
        else:
            missing = missing_files(spec.files, home)
            if not missing:
                status = f"data home {home}"
            elif download:
                status = "missing: would download from " + ", ".join(REMOTE_FILES[m].url for m in missing)
            else:
                status = "missing: " + "; ".join(f"put {m} at {home / m}" for m in missing)
        out.append(
            DatasetInfo(
                name=spec.name,
                description=spec.description,
                n_samples=spec.n_samples,
                n_features=spec.n_features,
                files=tuple(spec.files),
                status=status,
            )
        )
    return out
