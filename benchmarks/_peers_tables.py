"""Raw tables and public schemas of the datasets ``benchmarks/peers.py`` compares on, and its dp-gam/DP-EBM table.

A benchmark helper, not part of dpglass.

dpglass's loaders (:func:`dpglass.datasets.load_dataset`) return 0/1 encodings; they have no public raw-table
loader.  For the comparison of issue 28 (dp-gam's schema route, DP-EBM on raw columns) this module reads the
same raw files the loaders read, in the same row order (the labels are checked equal to the loader's), and
declares each table's public schema **before looking at the data**:

* **adult**: the bounds of ``dpglass_experiments.gbdt.data`` and UCI's documented category lists (``"?"`` listed
  where UCI has unknowns, anything unlisted sets no indicator), ``fnlwgt`` (a sampling weight) ignored.
* **compas**: ProPublica's columns the built-in encoding reads.  Bounds are round numbers from what a column
  means, not from the file: age in [18, 100] (adult defendants), prior offences in [0, 50], each juvenile count in
  [0, 25]; sex, race and charge degree on the loader's category lists; the numeric columns list the built-in
  encoding's documented cut points (0/1 models cut there; since 78486df the pipeline hands them to dp-gam
  as the code of each value's interval).
* **german**: UCI Statlog's 20 attributes; categorical ones on the code book's codes (``values_maps.json``),
  numeric ones with round bounds: duration in [1, 72] months (six years), credit amount in [0, 20000] DM (the
  loader's largest cut 10000, doubled), age in [18, 90] (Adult's top-code), and the small ordinal codes on their
  documented ranges (installment rate, residence years and existing credits 1..4, people liable 1..2); cut
  points as for compas.
* **breast-cancer**: the 30 features with the documented Min/Max of the dataset's description (the table the
  built-in encoding's cut points come from).
* **mushroom**: the 22 attributes on UCI's documented codes (``stalk-root`` lists its ``"?"``).

Values outside the bounds are clipped by the models (a per-record map).  COMPAS's ages and counts and German's
small ordinal codes are declared ``integer`` (whole numbers); the other numeric columns are not.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from dpglass.datasets import _loaders as L
from dpglass.datasets import get_data_home, load_dataset
from dpglass.models.pipeline.route import with_cut_codes
from dpglass.schema import Encoding, Schema, categorical, ignore, numeric

#: The datasets with a raw table here.
RAW_TABLES = ("adult", "compas", "german", "breast-cancer", "mushroom")

_COMPAS_BOUNDS = {"age": (18, 100), "priors_count": (0, 50), "juv_fel_count": (0, 25), "juv_misd_count": (0, 25),
                  "juv_other_count": (0, 25)}
_COMPAS_COLUMNS = ("sex", "race", "age", "priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count",
                   "c_charge_degree")
_GERMAN_BOUNDS = {"duration_months": (1, 72), "credit_amount": (0, 20000), "installment_rate": (1, 4),
                  "present_residence": (1, 4), "age": (18, 90), "existing_credits": (1, 4), "people_liable": (1, 2)}
_SMALL_CODES = ("installment_rate", "present_residence", "existing_credits", "people_liable")


def raw_table(name: str, part=None):
    """``(frame, y, schema)``: the raw columns of dataset ``name`` (``part``: Adult's "train"/"test"), its labels
    and its public schema; None when there is no raw table for it."""
    if name not in RAW_TABLES:
        return None
    frame, y, schema = _READERS[name](part)
    _, y_loader = load_dataset(name, split=part) if name == "adult" else load_dataset(name)
    assert np.array_equal(y, np.asarray(y_loader)), f"{name}: the raw table's labels differ from the loader's"
    return frame, y, schema


def _adult(part):
    from dpglass_experiments.gbdt.data import ADULT_BOUNDS

    frame = L._read_adult(get_data_home(None) / L._ADULT_FILES[part], L._ADULT_FILES[part], part)
    y = (frame["income"].str.rstrip(".") == ">50K").to_numpy().astype(np.uint8)
    cols = [ignore(c) if c == "fnlwgt" else numeric(c, *ADULT_BOUNDS[c]) if c in ADULT_BOUNDS
            else categorical(c, L._ADULT_CATEGORIES[c], missing="none") for c in L._ADULT_COLUMNS if c != "income"]
    return frame.drop(columns=["income"]), y, Schema(cols, target="income")


def _compas(part):
    frame = pd.read_csv(get_data_home(None) / L._COMPAS_FILE, engine="c")
    frame = frame.assign(c_charge_degree=frame["c_charge_degree"].map({"F": "Felony", "M": "Misdemeanor"}))
    cols = [numeric(c, *_COMPAS_BOUNDS[c], integer=True, thresholds=_whole(L._COMPAS_THRESHOLDS[c]))
            if c in _COMPAS_BOUNDS
            else categorical(c, L._COMPAS_CATEGORIES[c]) for c in _COMPAS_COLUMNS]
    y = frame["two_year_recid"].to_numpy().astype(np.uint8)
    return frame[list(_COMPAS_COLUMNS)].reset_index(drop=True), y, Schema(cols, target="two_year_recid")


def _german(part):
    home = get_data_home(None)
    with open(home / L._GERMAN_MAPS, encoding="utf-8") as fh:
        maps = json.load(fh)
    frame = pd.read_csv(home / L._GERMAN_FILE, sep=" ", header=None, engine="c")
    frame.columns = list(L._GERMAN_COLUMNS) + ["credit"]
    cols = [_german_numeric(c) if c in _GERMAN_BOUNDS
            else categorical(c, list(maps[c])) for c in L._GERMAN_COLUMNS]
    y = (frame["credit"] == 1).to_numpy().astype(np.uint8)
    return frame[list(L._GERMAN_COLUMNS)], y, Schema(cols, target="credit")


def _german_numeric(c):
    lo, hi = _GERMAN_BOUNDS[c]
    if c in _SMALL_CODES:
        return numeric(c, lo, hi, integer=True, thresholds=_whole(L._GERMAN_THRESHOLDS[c]))
    return numeric(c, lo, hi, thresholds=list(L._GERMAN_THRESHOLDS[c]))


def _whole(cuts) -> list:
    """The loader's cut points ``x > t`` of a whole-number column, half-way to the next whole number (the same
    split of whole numbers, strictly inside bounds that start at a cut)."""
    return [t + 0.5 for t in cuts]


def _breast_cancer(part):
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer(as_frame=True)
    cols = [numeric(name, lo, hi) for name, lo, hi, _ in L._BREAST_CANCER_CUTS]
    y = (1 - bunch.target.to_numpy()).astype(np.uint8)
    return bunch.data.reset_index(drop=True), y, Schema(cols, target="malignant")


def _mushroom(part):
    names = ["class"] + [name for name, _ in L._MUSHROOM_SCHEMA]
    frame = pd.read_csv(get_data_home(None) / L._MUSHROOM_FILE, header=None, names=names, dtype=str, engine="c",
                        keep_default_na=False)
    cols = [categorical(name, list(codes)) for name, codes in L._MUSHROOM_SCHEMA]
    y = (frame["class"] == "p").to_numpy().astype(np.uint8)
    return frame[names[1:]], y, Schema(cols, target="class")


def lists_cut_points(schema) -> bool:
    """Whether every numeric column of ``schema`` lists its cut points (then :func:`cut_codes` applies)."""
    return all(isinstance(c.thresholds, tuple) for c in schema.features if c.kind == "numeric")


def cut_codes(frame, schema) -> tuple[np.ndarray, list]:
    """The raw columns as codes, and the number of codes of each: what ``DPPipeline`` hands dp-gam on its
    cut-codes route (the library's :class:`~dpglass.models.pipeline.route.CutCodeEncoding`, not a copy of it): a
    numeric column listing its cut points as the number of them it is above (``x > t``, the 0/1 encoding's test),
    a categorical one as its index in the public list (one more code for a missing value where the column
    declares ``missing="none"``).  A per-record map of public cut points and categories (what dp-gam's
    ``categories`` parameter reads)."""
    encoding = with_cut_codes(Encoding(schema, tuple(() for _ in schema.features), numbers=True, codes=True,
                                       missing_bins=True))
    return encoding.transform(frame), encoding.column_categories()


#: The comparison of issue 28: dp-gam (its schema route where the dataset has one, else its 0/1 row) against
#: DP-EBM at the same δ (the better of its one-hot/0-1 and raw-column rows per cell and metric).
GAM_ROWS = ("dp-gam (DPPipeline, schema route)", "dp-gam")
EBM_ROWS = {"InterpretML DP-EBM at dpglass's δ": "0/1", "InterpretML DP-EBM, raw columns": "raw"}


def comparison_table(rows, epsilons, gam_rows=GAM_ROWS) -> str:
    """dp-gam (the first of ``gam_rows`` a dataset has) against DP-EBM's better input per (dataset, ε): means,
    which input, and dp-gam minus DP-EBM (± the standard error of the paired differences); empty when no dataset
    has both."""
    head = ("| dataset | ε | majority | dp-gam (route) | DP-EBM best acc (input) | DP-EBM best AUC (input) "
            "| Δ acc (± se) | Δ AUC (± se) |")
    lines = [head, "|" + "---|" * 8]
    for dataset in dict.fromkeys(r.dataset for r in rows):
        mine = {r.model: r for r in rows if r.dataset == dataset and not r.error}
        gam = next((mine[m] for m in gam_rows if m in mine), None)
        ebms = [(mine[m], tag) for m, tag in EBM_ROWS.items() if m in mine]
        if gam is None or not ebms:
            continue
        route = "cut codes" if "codes" in gam.model else "schema" if "schema" in gam.model else \
            "one-hot" if dataset == "adult" else "0/1"
        for eps in epsilons:
            majority = f"{np.mean(mine['majority class'].accuracy[eps]):.3f}" if "majority class" in mine else "–"
            acc, acc_tag, acc_row = max((np.mean(r.accuracy[eps]), tag, r) for r, tag in ebms)
            auc, auc_tag, auc_row = max((np.mean(r.auc[eps]), tag, r) for r, tag in ebms)
            g_acc, g_auc = np.mean(gam.accuracy[eps]), np.mean(gam.auc[eps])
            lines.append(f"| {dataset} | {eps:g} | {majority} | {g_acc:.3f} · {g_auc:.3f} ({route}) | "
                         f"{acc:.3f} ({acc_tag}) | {auc:.3f} ({auc_tag}) | "
                         f"{_paired(gam.accuracy[eps], acc_row.accuracy[eps])} | {_paired(gam.auc[eps], auc_row.auc[eps])} |")
    return "\n".join(lines) if len(lines) > 2 else ""


def _paired(ours, theirs) -> str:
    """The mean difference, ± its standard error over the paired repetitions (same split, same seed) when
    there are several."""
    diff = np.asarray(ours, dtype=float) - np.asarray(theirs, dtype=float)
    if len(diff) < 2:
        return f"{diff.mean():+.3f}"
    return f"{diff.mean():+.3f} ± {diff.std(ddof=1) / np.sqrt(len(diff)):.3f}"


_READERS = {"adult": _adult, "compas": _compas, "german": _german, "breast-cancer": _breast_cancer,
            "mushroom": _mushroom}
