"""Model files as a user meets them: which class a file names, reading and verifying it, and the report
``dpglass inspect`` prints.

Above the estimators (it finds a file's class through the registry, the table pipeline's and the local-DP
classifier's included); the checks themselves are :mod:`dpglass.models._verify`'s, which imports no estimator.
"""

from __future__ import annotations

import json

from dpglass.exceptions import ModelFileError
from dpglass.models._file_checks import ADVICE, _fmt
from dpglass.models._held_out import held_out_lines
from dpglass.models._verify import verify_model_dict
from dpglass.privacy.ledger import PrivacyLedger

__all__ = ["format_model_report", "model_class", "open_model_file", "read_model_file"]


def open_model_file(path) -> tuple:
    """``(data, cls)``: a model file's JSON and the class it names (not yet verified: ``cls.from_dict`` does)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ModelFileError(f"{path}: could not read a dpglass model file ({exc}).") from None
    model = data.get("model") if isinstance(data, dict) else None
    cls = model_class(model)
    if cls is None or not hasattr(cls, "from_dict"):
        from dpglass.registry import LOADABLE_ONLY

        raise ModelFileError(f"{path}: 'model' is {model!r}, not a dpglass model (the registry's models, "
                             f"{' and '.join(LOADABLE_ONLY)}). {ADVICE}")
    return data, cls


def read_model_file(path):
    """Read, identify and verify a model file: ``(data, cls, registry names)``.

    Raises
    ------
    ModelFileError
        If the file is unreadable, names no registered model, or fails
        :func:`verify_model_dict` (the message starts with the path).
    """
    from dpglass.registry import list_estimators

    data, cls = open_model_file(path)
    try:
        verify_model_dict(data, cls)
        cls.from_dict(data)
    except ModelFileError as exc:
        raise ModelFileError(f"{path}: {exc}") from None
    if data["model"] == "DPPipeline":  # a schema's encoder and a registered model: name the model
        inner = data["inner_model"]
        return data, cls, [f"encoder + {name}" for name in _registry_names(inner, list_estimators())]
    return data, cls, _registry_names(data, list_estimators())


def model_class(model):
    """The class a model file names, looked up in the registry (:func:`dpglass.registry.loadable_class`: its
    estimators and the classes only loaded, DPPipeline and the local-DP classifier); None if dpglass has no such
    model.  ``load_model`` and ``dpglass inspect`` both read files through it."""
    from dpglass.registry import loadable_class

    return loadable_class(model)


def _registry_names(data: dict, specs) -> list:
    """The registry names whose class and parameters the file's model has (else every name of its class)."""
    specs = [s for s in specs if s.cls.__name__ == data.get("model")]
    params = data.get("params", {})
    names = [s.name for s in specs if all(params.get(k) == v for k, v in s.params.items())]
    return names or [s.name for s in specs]


def format_model_report(data: dict, cls, registry_names=()) -> str:
    """What an auditor reads about a verified model file (``dpglass inspect``)."""
    names = f" (registry: {', '.join(registry_names)})" if registry_names else ""
    lines = [f"model: {cls.__name__}{names}",
             f"features: {data['n_features_in']}; classes: {', '.join(map(str, data['classes']))}"]
    raw = data.get("privacy_ledger")
    if raw is None:  # a local-DP model states its own guarantee (no central ledger)
        summary = getattr(cls, "_privacy_summary", None)
        lines.append(summary(data) if summary else "privacy: none (non-private model, no ledger)")
        return "\n".join(lines)
    ledger = PrivacyLedger.from_dict(raw)
    lines += [f"guarantee: {ledger.guarantee}",
              f"budget: epsilon={_fmt(ledger.epsilon)}, delta={_fmt(ledger.delta)}",
              f"composed by: {ledger.accountant} ("
              + ("epsilons and deltas add up" if ledger.accountant == "basic" else
                 "the entries' curves compose to the total below; their epsilons do not add up to it") + ")"]
    if "selected_by" in data:
        sel = data["selected_by"]
        lines.append(f"selected by: private selection ({sel['method']}), best_params={sel['best_params']}")
    lines.append(f"releases ({len(ledger)}):")
    lines += ["  " + row for row in _release_table(ledger)]
    eps, delta = ledger.total()
    lines.append(f"total (recomputed): epsilon={_fmt(eps)}, delta={_fmt(delta)} "
                 f"<= budget epsilon={_fmt(ledger.epsilon)}, delta={_fmt(ledger.delta)} "
                 f"(recorded total: epsilon={_fmt(raw['total']['epsilon'])}, delta={_fmt(raw['total']['delta'])})")
    flag = raw.get("replayable")
    replay = "unknown (file predates the flag)" if flag is None else ("yes" if flag else "no")
    lines.append(f"replayable noise: {replay}")
    if "held_out" in data:  # written by `dpglass fit --out`, verified with the file
        lines += held_out_lines(data["held_out"])
    return "\n".join(lines)


def _release_table(ledger: PrivacyLedger) -> list[str]:
    head = ("#", "release", "mechanism", "epsilon", "delta", "sensitivity", "scale", "guarantee", "records")
    rows = [head]
    for i, e in enumerate(ledger, 1):
        records = "all" if e.partition is None else f"{e.partition}: {e.part}"
        rows.append((str(i), e.release, e.mechanism, _fmt(e.epsilon), _fmt(e.delta), _fmt(e.sensitivity),
                     _fmt(e.scale), e.guarantee, records))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
