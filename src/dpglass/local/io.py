"""Report files: an ``.npz`` of the reports and their public metadata, written and read in blocks.

Layout (a standard ``numpy.savez`` archive, readable with ``numpy.load``):

* ``values.npy``: ``(n, length)`` int32 (``"laplace"``) or uint8 bits (``"oue"``);
* ``half.npy``: ``(n,)`` int8, the public coin of each report;
* ``meta.npy``: a JSON string: randomizer, alpha, bandwidth, lower, upper,
  feature names, the label set (``classes``: the label reported as 0, then
  the one reported as 1, and so on; absent when the labels were codes), the
  number of labels ``n_classes`` (absent for two), report length, and the
  guarantee.

:class:`ReportWriter` streams blocks to a temporary file and copies it into the
archive at the end, so a large file never sits in memory at once;
:func:`iter_report_blocks` reads it back in blocks.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import zipfile

import numpy as np

from dpglass.exceptions import DataValidationError
from dpglass.local.randomizers import Reports

__all__ = ["ReportWriter", "save_reports", "load_reports", "read_metadata", "iter_report_blocks"]

_COPY = 1 << 22


def _npy_header(dtype, shape) -> bytes:
    import io

    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
                                               "fortran_order": False, "shape": tuple(shape)})
    return buf.getvalue()


class ReportWriter:
    """Write reports block by block into an ``.npz`` (see the module docstring)."""

    def __init__(self, path, metadata: dict, length: int, dtype):
        self.path = os.fspath(path)
        self.metadata = dict(metadata)
        self.length = int(length)
        self.dtype = np.dtype(dtype)
        self.rows = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="dpglass-reports-")
        self._values = open(os.path.join(self._tmp.name, "values.bin"), "wb")
        self._half = open(os.path.join(self._tmp.name, "half.bin"), "wb")

    def write(self, values: np.ndarray, half: np.ndarray) -> None:
        values = np.ascontiguousarray(values, dtype=self.dtype)
        if values.ndim != 2 or values.shape[1] != self.length or half.shape != (values.shape[0],):
            raise DataValidationError("report block of the wrong shape")
        self._values.write(values.tobytes())
        self._half.write(np.ascontiguousarray(half, dtype=np.int8).tobytes())
        self.rows += values.shape[0]

    def close(self) -> None:
        self._values.close()
        self._half.close()
        meta = {**self.metadata, "n_reports": self.rows, "report_length": self.length}
        tmp_out = self.path + ".part"
        with zipfile.ZipFile(tmp_out, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
            for name, raw, dtype, shape in (("values", "values.bin", self.dtype, (self.rows, self.length)),
                                            ("half", "half.bin", np.int8, (self.rows,))):
                with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                    member.write(_npy_header(dtype, shape))
                    with open(os.path.join(self._tmp.name, raw), "rb") as src:
                        shutil.copyfileobj(src, member, _COPY)
            text = np.array(json.dumps(meta))
            with zf.open("meta.npy", "w") as member:
                np.lib.format.write_array(member, text, allow_pickle=False)
        os.replace(tmp_out, self.path)
        self._tmp.cleanup()


def save_reports(reports: Reports, path, feature_names=None, classes=None) -> None:
    """Write a :class:`~dpglass.local.randomizers.Reports` to ``path`` (``.npz``).

    ``feature_names``: the features' names, in the order the devices used; ``classes``: the public
    label set, the label reported as 0 first (the classifier's ``classes_``), as many labels as the
    reports encode.
    """
    meta = {**reports.metadata(), "feature_names": None if feature_names is None else [str(c) for c in feature_names],
            "guarantee": f"each report is {reports.alpha:g}-LDP"}
    if classes is not None:
        from dpglass.local.labels import _declared_classes, _plain

        meta["classes"] = [_plain(c) for c in _declared_classes(classes)]
        if len(meta["classes"]) != int(reports.n_classes):
            raise DataValidationError(f"classes has {len(meta['classes'])} labels but the reports encode "
                                      f"{reports.n_classes}; pass the reports' labels, in their order.")
    w = ReportWriter(path, meta, reports.values.shape[1], reports.values.dtype)
    w.write(reports.values, reports.half)
    w.close()


def read_metadata(path) -> dict:
    """The public metadata of a report file."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return json.loads(str(z["meta"]))
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise DataValidationError(f"{path} is not a dpglass report file (.npz from `dpglass ldp randomize`): "
                                  f"{exc}") from None


def iter_report_blocks(path, block_rows: int = 65536):
    """Yield ``(values, half)`` blocks of a report file without loading it whole."""
    meta = read_metadata(path)
    with zipfile.ZipFile(path) as zf:
        with zf.open("values.npy") as fv, zf.open("half.npy") as fh:
            shapes = []
            for f in (fv, fh):
                version = np.lib.format.read_magic(f)
                reader = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                          else np.lib.format.read_array_header_2_0)
                shape, fortran, dtype = reader(f)
                if fortran:
                    raise DataValidationError(f"{path}: Fortran-ordered reports are not supported.")
                shapes.append((shape, dtype))
            (vshape, vdtype), (hshape, hdtype) = shapes
            if len(vshape) != 2 or hshape != (vshape[0],):
                raise DataValidationError(f"{path}: reports of shape {vshape} with {hshape} half flags.")
            n, m = vshape
            if meta.get("report_length") not in (None, m):
                raise DataValidationError(f"{path}: reports have {m} entries; the metadata says "
                                          f"{meta['report_length']}.")
            done = 0
            while done < n:
                k = min(block_rows, n - done)
                v = np.frombuffer(fv.read(k * m * vdtype.itemsize), dtype=vdtype).reshape(k, m)
                h = np.frombuffer(fh.read(k * hdtype.itemsize), dtype=hdtype)
                yield v, h
                done += k


def load_reports(path) -> Reports:
    """Read a whole report file into a :class:`~dpglass.local.randomizers.Reports`."""
    meta = read_metadata(path)
    with np.load(path, allow_pickle=False) as z:
        values, half = z["values"], z["half"]
    try:
        return Reports(meta["randomizer"], float(meta["alpha"]), float(meta["bandwidth"]),
                       np.asarray(meta["lower"], dtype=np.float64), np.asarray(meta["upper"], dtype=np.float64),
                       values, half, int(meta.get("n_classes", 2)))
    except KeyError as exc:
        raise DataValidationError(f"{path}: metadata lacks {exc}.") from None
