"""``dpglass ldp randomize`` and ``dpglass ldp fit``: local DP from the command line.

``randomize`` is what every device would send: it reads the CSV in row blocks
(``pandas.read_csv(chunksize=...)``), privatizes each record on its own and
streams the reports into an ``.npz`` with their public metadata.  ``fit``
learns the classifier from a report file alone; ``dpglass predict --model``
then uses it like any dpglass model.
"""

from __future__ import annotations

import numpy as np

from dpglass.exceptions import DataValidationError, InvalidParameterError

__all__ = ["add_parser"]


def _parse_bounds(items) -> tuple[list[str], list[float], list[float]]:
    names, lo, hi = [], [], []
    for item in items:
        name, sep, rng = item.rpartition("=")
        a, colon, b = rng.partition(":")
        try:
            if not sep or not colon or not name:
                raise ValueError
            lo.append(float(a))
            hi.append(float(b))
        except ValueError:
            raise InvalidParameterError(f"--bounds takes NAME=LO:HI (e.g. age=17:90); got {item!r}.") from None
        names.append(name)
    if not names:
        raise InvalidParameterError("--bounds is required: one NAME=LO:HI per feature, public values chosen "
                                    "without looking at the data (values outside are clipped).")
    return names, lo, hi


def add_parser(subparsers) -> None:
    """Register ``ldp`` (``randomize``, ``fit``) on the ``dpglass`` parser."""
    p = subparsers.add_parser("ldp", help="local DP: randomize records on-device, fit a classifier from the reports",
                              description="Local differential privacy (paper 004, Berrett & Butucea): each record "
                                          "is privatized alone (alpha-LDP per report); the classifier is learned from "
                                          "the reports only.")
    sub = p.add_subparsers(dest="ldp_command", metavar="STEP")
    sub.required = True
    r = sub.add_parser("randomize", help="privatize every record of a CSV (what each device would send)")
    r.add_argument("--data", required=True, help="CSV file, read in row blocks")
    r.add_argument("--target", required=True, help="label column (0/1, or use --positive)")
    r.add_argument("--positive", default=None, help="the label value that means 1 (others mean 0)")
    r.add_argument("--bounds", action="append", default=[], metavar="NAME=LO:HI",
                   help="a feature column and its public bounds (repeat, in order); values outside are clipped")
    r.add_argument("--alpha", type=float, required=True, help="local privacy level of each report")
    r.add_argument("--bandwidth", default="auto", help="grid step h in (0, 1] of the unit box, or 'auto' "
                                                       "(from the number of rows, public in LDP)")
    r.add_argument("--randomizer", default="laplace", choices=("laplace", "oue"),
                   help="laplace: the slides' mechanism; oue: unary encoding (lower variance)")
    r.add_argument("--max-cells", type=int, default=None, help="refuse reports longer than this (default 65536)")
    r.add_argument("--block-rows", type=int, default=50_000, help="rows read at once")
    r.add_argument("--seed", type=int, default=None, help="seed (replayable noise: never for release)")
    r.add_argument("--out", required=True, help="report file (.npz)")
    r.set_defaults(handler=_cmd_randomize)
    f = sub.add_parser("fit", help="fit the LDP histogram classifier from a report file")
    f.add_argument("--reports", required=True, help=".npz written by `dpglass ldp randomize`")
    f.add_argument("--out", help="write the model here as JSON (for `dpglass predict`)")
    f.set_defaults(handler=_cmd_fit)


def _labels(series, positive) -> np.ndarray:
    if positive is not None:
        return (series.astype(str).str.strip() == str(positive)).to_numpy(np.int8)
    from dpglass.local.randomizers import check_labels

    return check_labels(series.to_numpy(), len(series))


def _cmd_randomize(args) -> int:
    import pandas as pd

    from dpglass.local.classifier import auto_bandwidth
    from dpglass.local.io import ReportWriter
    from dpglass.local.randomizers import DEFAULT_MAX_CELLS, make_randomizer
    from dpglass.privacy.rng import check_random_state, spawn

    names, lo, hi = _parse_bounds(args.bounds)
    if args.block_rows < 1:
        raise InvalidParameterError(f"--block-rows must be at least 1; got {args.block_rows}.")
    try:
        header = pd.read_csv(args.data, nrows=0).columns
    except (OSError, ValueError) as exc:
        raise DataValidationError(f"Could not read {args.data}: {exc}") from None
    missing = [c for c in [*names, args.target] if c not in header]
    if missing:
        raise DataValidationError(f"{args.data} has no column(s) {missing!r}.")
    if args.bandwidth == "auto":
        n = sum(len(b) for b in pd.read_csv(args.data, usecols=[args.target], chunksize=args.block_rows))
        h = auto_bandwidth(n, args.alpha, len(names), args.randomizer)
    else:
        try:
            h = float(args.bandwidth)
        except ValueError:
            raise InvalidParameterError(f"--bandwidth must be a number in (0, 1] or 'auto'; got {args.bandwidth!r}.") \
                from None
    coin_rng, noise_rng = spawn(check_random_state(args.seed), 2)
    rnd = make_randomizer(args.randomizer, args.alpha, h, (lo, hi),
                          max_cells=args.max_cells or DEFAULT_MAX_CELLS, random_state=noise_rng)
    meta = {"randomizer": rnd.name, "alpha": rnd.alpha, "bandwidth": rnd.bandwidth, "lower": lo, "upper": hi,
            "feature_names": names, "guarantee": f"each report is {rnd.alpha:g}-LDP"}
    writer = ReportWriter(args.out, meta, rnd.report_length, rnd.dtype)
    for block in pd.read_csv(args.data, usecols=[*names, args.target], chunksize=args.block_rows):
        X = block[names].to_numpy(dtype=np.float64)
        y = _labels(block[args.target], args.positive)
        half = rnd.draw_halves(len(block), coin_rng)
        rep = rnd.randomize(X, y, half=half, rng=noise_rng)
        writer.write(rep.values, rep.half)
    writer.close()
    print(f"{writer.rows} reports ({rnd.name}, alpha={rnd.alpha:g} each, h={rnd.bandwidth:.4g}, "
          f"{rnd.report_length} entries per report) written to {args.out}")
    return 0


def _cmd_fit(args) -> int:
    from dpglass.local.classifier import LDPHistogramClassifier
    from dpglass.local.io import read_metadata

    meta = read_metadata(args.reports)
    model = LDPHistogramClassifier(alpha=meta["alpha"], bandwidth="auto", randomizer=meta["randomizer"])
    model.fit_reports(args.reports)
    print(model)
    print(f"\nguarantee: each of the {int(model.report_counts_.sum())} reports is {model.alpha:g}-LDP; "
          "the classifier is a post-processing of the reports")
    if args.out:
        model.save(args.out)
        print(f"model written to {args.out}")
    return 0
