"""Benchmark datasets as 0/1 features, and the :class:`Binarizer` that makes them.

* :func:`load_dataset` returns ``(X, y)``: a DataFrame of uint8 0/1 columns
  named by what they test (``"priors_count>3"``, ``"sex=Male"``) and a uint8
  0/1 label.  Built-in encodings use fixed, data-independent thresholds
  (``docs/datasets.md``).
* :func:`list_datasets` says which datasets exist and where their files are.
* :func:`get_data_home` resolves the data directory: the argument, else
  ``$DPGLASS_DATA``, else ``~/.cache/dpglass``.
* :class:`Binarizer` encodes your own data, with given thresholds or with
  differentially private quantiles (:func:`dp_quantile`).
"""

from dpglass.datasets._home import get_data_home
from dpglass.datasets._loaders import DatasetInfo, list_datasets, load_dataset
from dpglass.datasets.binarizer import Binarizer, dp_quantile

__all__ = ["Binarizer", "DatasetInfo", "dp_quantile", "get_data_home", "list_datasets", "load_dataset"]
