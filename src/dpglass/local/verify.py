"""Verification of a saved :class:`~dpglass.local.LDPHistogramClassifier`: its released values.

Hooked into :data:`dpglass.models._verify.MODEL_CHECKS`.  The file holds the
integer sums of alpha-LDP reports and how many reports each half has
(``dpglass.local.classifier``); every one of them lies in a public domain
(issue 26): the counts are integers >= 0 adding up to ``n_reports``; the sums
of ``"laplace"`` reports (0/1 indicators plus discrete Laplace noise) are
integers; the sums of ``"oue"`` reports (bits, one half only) are integers in
``[0, report_counts[0]]`` with an empty second half.  A float there (JSON
``3.5`` read as the int64 3) was truncated on load instead of refused.  Each
half holds one sum per report entry: ``n_cubes`` for ``"laplace"`` (two
labels only: the slides' mechanism is binary), ``K n_fine`` for ``"oue"``
with ``K`` the file's labels, so a label set edited to another size is
refused here.  The grid's consistency with the parameters is checked when the
state is restored (``_state_from_dict``).
"""

from __future__ import annotations

from dpglass.models._file_checks import _fail as fail
from dpglass.models._file_checks import _is_count as is_count

__all__ = ["check_ldp"]


def check_ldp(data: dict, ctx) -> None:
    """Refuse report sums and counts outside their domain."""
    counts, sums, n = data.get("report_counts"), data.get("report_sums"), data.get("n_reports")
    if not (isinstance(counts, list) and len(counts) == 2 and all(is_count(c) and c >= 0 for c in counts)):
        fail("report_counts", f"is {counts!r}", "two numbers of reports (integers >= 0), one per half")
    if not (is_count(n) and n == sum(counts)):
        fail("n_reports", f"is {n!r}", f"the number of reports, report_counts[0] + report_counts[1] = {sum(counts)}")
    if not (isinstance(sums, list) and len(sums) == 2 and all(isinstance(half, list) for half in sums)):
        fail("report_sums", "is not two lists", "the sums of the reports of each half")
    bad = [v for half in sums for v in half if not is_count(v)]
    if bad:
        fail("report_sums", f"hold {bad[0]!r}", "integers (sums of integer reports)")
    _check_lengths(data, ctx.params["randomizer"], sums)
    if ctx.params["randomizer"] == "oue":
        if counts[1] != 0 or any(sums[1]):
            fail("report_sums", f"has a second half of {counts[1]} reports summing to {sum(sums[1])}",
                 "none ('oue' reports have no halves)")
        outside = [v for v in sums[0] if not 0 <= v <= counts[0]]
        if outside:
            fail("report_sums", f"hold {outside[0]!r}", f"sums of bits of {counts[0]} reports, in [0, {counts[0]}]")


def _report_length(data: dict, randomizer: str) -> int | None:
    """Entries of one report by the file's grid and labels (None if the grid is malformed: the restore refuses it)."""
    grid = data.get("grid")
    try:
        d, steps = len(grid["lower"]), grid["K"]
    except (TypeError, KeyError):
        return None
    if not (is_count(steps) and steps >= 1 and d >= 1):
        return None
    return (steps + 1) ** d if randomizer == "laplace" else len(data["classes"]) * steps ** d


def _check_lengths(data: dict, randomizer: str, sums: list) -> None:
    """Two labels for the binary 'laplace' reports; one sum per report entry in each half."""
    K = len(data["classes"])
    if randomizer == "laplace" and K != 2:
        fail("classes", f"holds {K} labels", "two: the 'laplace' randomizer (the slides' mechanism) is binary")
    length = _report_length(data, randomizer)
    if length is None:
        return
    lengths = {len(half) for half in sums}
    if randomizer == "oue" and len(lengths) == 1:  # every sum there, for another number of labels
        n_fine = length // K
        encoded, rest = divmod(lengths.pop(), n_fine)
        if rest == 0 and encoded >= 2 and encoded != K:
            fail("classes", f"holds {K} labels", f"the {encoded} labels the reports encode (report_sums has "
                 f"{encoded} x {n_fine} sums a half: one per (fine cell, label))")
    if any(len(half) != length for half in sums):
        steps = data["grid"]["K"]
        what = f"({steps} + 1)^d cubes" if randomizer == "laplace" else f"{K} labels x {steps}^d fine cells"
        fail("report_sums", f"has halves of {[len(h) for h in sums]} sums",
             f"{length} per half: one per report entry ({what} of the grid)")
