"""Local differential privacy: each person privatizes their own record (paper 004, Berrett & Butucea).

Nobody is trusted with raw data.  A device runs a randomizer on its one
record and sends the report; the analyst learns a classifier from the reports
alone (post-processing: each person is protected by the alpha-LDP of their
own report, whatever is done with the reports afterwards).

* :class:`HistogramRandomizer` -- the slides' mechanism (noisy cube indicators);
* :class:`UnaryRandomizer` -- optimized unary encoding of the (cell, label), lower variance;
* :class:`LDPHistogramClassifier` -- the plug-in classifier ``1{T_n(x) >= 0}``
  (``fit_reports`` from reports, ``fit`` simulates the devices);
* :class:`HistogramClassifier` -- the non-private reference with the same grid;
* :func:`save_reports` / :func:`load_reports` -- report files (``dpglass ldp``).

Proofs: ``docs/privacy.md``, section "Local differential privacy (dpglass.local)".
"""

from dpglass.local.classifier import (
    AUTO_BANDWIDTH_CONSTANT,
    GUARANTEE,
    HistogramClassifier,
    LDPHistogramClassifier,
    auto_bandwidth,
)
from dpglass.local.io import iter_report_blocks, load_reports, read_metadata, save_reports
from dpglass.local.randomizers import (
    DEFAULT_MAX_CELLS,
    Grid,
    HistogramRandomizer,
    Reports,
    UnaryRandomizer,
    make_randomizer,
)

__all__ = [
    "AUTO_BANDWIDTH_CONSTANT",
    "DEFAULT_MAX_CELLS",
    "GUARANTEE",
    "Grid",
    "HistogramClassifier",
    "HistogramRandomizer",
    "LDPHistogramClassifier",
    "Reports",
    "UnaryRandomizer",
    "auto_bandwidth",
    "iter_report_blocks",
    "load_reports",
    "make_randomizer",
    "read_metadata",
    "save_reports",
]
