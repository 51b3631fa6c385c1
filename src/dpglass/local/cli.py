"""``dpglass ldp randomize`` and ``dpglass ldp fit``: local DP from the command line.

``randomize`` is what every device would send: it reads the CSV in row blocks
(``pandas.read_csv(chunksize=...)``), privatizes each record on its own and
streams the reports into an ``.npz`` with their public metadata (the feature
columns by name, and the public label set: ``--classes NEG,POS`` (or
``--classes A,B,C`` for K labels, with ``--randomizer oue``: the slides'
mechanism is binary), or ``--positive POS`` for "POS or other").  ``fit`` learns the classifier from a
report file alone; ``dpglass predict --model`` then uses it like any dpglass
model: columns by name, predictions in the file's labels.
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
    r.add_argument("--target", required=True, help="label column (0/1, or declare its labels with --classes)")
    r.add_argument("--classes", default=None, metavar="A,B[,C...]",
                   help="the class labels in order, negative first for two (e.g. '<=50K,>50K'; "
                        "'Adelie,Chinstrap,Gentoo' for three, with --randomizer oue): the public label set; "
                        "a label outside it is refused")
    r.add_argument("--positive", default=None,
                   help="the label value that means 1; every other label is the class 'other'")
    r.add_argument("--bounds", action="append", default=[], metavar="NAME=LO:HI",
                   help="a feature column and its public bounds (repeat, in order); values outside are clipped")
    r.add_argument("--alpha", type=float, required=True, help="local privacy level of each report")
    r.add_argument("--bandwidth", default="auto", help="grid step h in (0, 1] of the unit box, or 'auto' "
                                                       "(from the number of rows, public in LDP)")
    r.add_argument("--randomizer", default="laplace", choices=("laplace", "oue"),
                   help="laplace: the slides' mechanism (two labels); oue: unary encoding (lower variance, "
                        "any number of labels)")
    r.add_argument("--max-cells", type=int, default=None, help="refuse reports longer than this (default 65536)")
    r.add_argument("--block-rows", type=int, default=50_000, help="rows read at once")
    r.add_argument("--seed", type=int, default=None, help="seed (replayable noise: never for release)")
    r.add_argument("--out", required=True, help="report file (.npz)")
    r.set_defaults(handler=_cmd_randomize)
    f = sub.add_parser("fit", help="fit the LDP histogram classifier from a report file")
    f.add_argument("--reports", required=True, help=".npz written by `dpglass ldp randomize`")
    f.add_argument("--out", help="write the model here as JSON (for `dpglass predict`)")
    f.set_defaults(handler=_cmd_fit)


#: The negative class's name with ``--positive`` (every label but the positive one).
OTHER = "other"


def _label_set(args) -> list | None:
    """The public label set from ``--classes`` or ``--positive`` (None: the labels are 0/1)."""
    if args.classes is not None and args.positive is not None:
        raise InvalidParameterError("Pass --classes NEG,POS or --positive POS, not both.")
    if args.classes is not None:
        from dpglass._parsing import parse_value
        from dpglass.local.classifier import _declared_classes

        labels = [parse_value(v) for v in args.classes.split(",")]
        try:
            _declared_classes(labels)
        except InvalidParameterError:
            raise InvalidParameterError(f"--classes takes two or more distinct labels (strings or numbers) separated "
                                        f"by commas, in order; got {args.classes!r}.") from None
        return labels
    if args.positive is not None:
        return [OTHER if str(args.positive) != OTHER else f"not {OTHER}", str(args.positive)]
    return None


def _labels(series, args, classes) -> np.ndarray:
    """The labels of one block as codes (k: ``classes[k]``; 0/1 for two); a missing label is refused."""
    from dpglass._validation import check_labels as check_declared
    from dpglass.local.labels import MAX_LABELS
    from dpglass.local.randomizers import check_labels

    if series.isna().any():
        raise DataValidationError(f"The target column {args.target!r} has missing labels; drop or label those "
                                  "records first.")
    if args.positive is not None:
        return (series.astype(str).str.strip() == str(args.positive)).to_numpy(np.int8)
    if classes is not None:
        codes = check_declared(series.to_numpy(), classes=classes, max_classes=MAX_LABELS)[0]
        return codes.astype(np.int8 if len(classes) == 2 else np.int16)
    try:
        return check_labels(series.to_numpy(), len(series))
    except DataValidationError as exc:
        raise DataValidationError(f"{exc} Or declare the labels of {args.target!r}: --classes NEG,POS "
                                  "(negative first; --classes A,B,C for more, with --randomizer oue), or "
                                  "--positive POS.") from None


def _cmd_randomize(args) -> int:
    import pandas as pd

    from dpglass.local.classifier import auto_bandwidth
    from dpglass.local.io import ReportWriter
    from dpglass.local.randomizers import DEFAULT_MAX_CELLS, check_features, make_randomizer
    from dpglass.privacy.rng import check_random_state, spawn

    names, lo, hi = _parse_bounds(args.bounds)
    classes = _label_set(args)
    if args.block_rows < 1:
        raise InvalidParameterError(f"--block-rows must be at least 1; got {args.block_rows}.")
    try:
        header = pd.read_csv(args.data, nrows=0).columns
    except (OSError, ValueError) as exc:
        raise DataValidationError(f"Could not read {args.data}: {exc}") from None
    missing = [c for c in [*names, args.target] if c not in header]
    if missing:
        raise DataValidationError(f"{args.data} has no column(s) {missing!r}.")
    if len(set(names)) != len(names) or args.target in names:
        raise InvalidParameterError("--bounds names each feature column once, and not the --target column.")
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
                          max_cells=args.max_cells or DEFAULT_MAX_CELLS, random_state=noise_rng,
                          n_classes=2 if classes is None else len(classes))
    meta = {"randomizer": rnd.name, "alpha": rnd.alpha, "bandwidth": rnd.bandwidth, "lower": lo, "upper": hi,
            "feature_names": names, "guarantee": f"each report is {rnd.alpha:g}-LDP"}
    if classes is not None:
        meta["classes"] = classes
    if rnd.n_classes != 2:  # binary report files are as they were
        meta["n_classes"] = rnd.n_classes
    writer = ReportWriter(args.out, meta, rnd.report_length, rnd.dtype)
    for block in pd.read_csv(args.data, usecols=[*names, args.target], chunksize=args.block_rows):
        X = check_features(block[names])  # by name; a missing or text value is refused with its column
        y = _labels(block[args.target], args, classes)
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
    print(model)  # ends with the guarantee: each report is alpha-LDP, the classifier a post-processing
    if args.out:
        model.save(args.out)
        print(f"model written to {args.out}")
    return 0
