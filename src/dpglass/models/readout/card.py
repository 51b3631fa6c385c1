"""The model card: one self-contained HTML page for a reviewer who must approve a model (``dpglass card``,
``model.card()``).

Built from a verified model file only: the file is verified first (an edited file is refused), and every number on
the card is read from it or computed from the model it describes (the readouts of
:mod:`dpglass.models.readout.explain`, post-processing).  Inline CSS and SVG: no script, no network, no external
resource; readable on a phone (it reflows) and in print.
"""

from __future__ import annotations

import json
import math
import re
from html import escape

from dpglass.models._files import _registry_names, model_class, read_model_file
from dpglass.models._held_out import accuracy_estimate, held_out_bound
from dpglass.models._verify import verify_model_dict
from dpglass.models.readout.cardmodel import model_section
from dpglass.privacy.ledger import PrivacyLedger

__all__ = ["card_of_file", "model_card", "render_card"]

VERIFIED = ("the file is consistent with its parameters and within its budget, and every released value it holds "
            "lies in its public domain; a file cannot show that its noise was drawn as it states: that rests on who "
            "fitted it")

CSS = """
:root { color-scheme: light; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1a1a1a; margin: 0;
       background: #fff; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.5rem; margin: .3rem 0; } h2 { font-size: 1.2rem; margin: 1.6rem 0 .5rem;
     border-bottom: 2px solid #ddd; padding-bottom: .2rem; }
.verdict { border-left: 6px solid #2a7d2a; background: #eef7ee; padding: .6rem .8rem; margin: .8rem 0; }
.warn { border-left: 6px solid #c0001a; background: #fdecee; padding: .6rem .8rem; margin: .8rem 0; }
.red, .paper-claim, .none { color: #c0001a; font-weight: 600; }
.key { font-size: 1.15rem; }
.note { color: #555; font-size: .9rem; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: .9rem; margin: .4rem 0; }
th, td { border-bottom: 1px solid #e3e3e3; padding: .25rem .5rem; text-align: left; vertical-align: top; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.panels { display: flex; flex-wrap: wrap; gap: .5rem; }
.panel { flex: 1 1 17rem; max-width: 22rem; }
svg.chart { display: block; max-width: 100%; height: auto; }
.budget svg.chart, .shapes > svg.chart, .shapes > p + svg.chart, .importance svg.chart { max-width: 36rem; }
pre { white-space: pre-wrap; font-size: .8rem; background: #f6f6f6; padding: .5rem; }
details summary { cursor: pointer; color: #1f5fa8; }
@media print { .panel, svg.chart { break-inside: avoid; } h2 { break-after: avoid; }
               main { max-width: none; } }
"""


def model_card(model, path=None) -> str:
    """The card of a fitted model, built from its file (``model.to_dict()``, verified first like any file)."""
    data = json.loads(json.dumps(model.to_dict()))  # exactly what save() writes
    cls = model_class(data.get("model")) or type(model)  # a private selection writes its selected model's file
    verify_model_dict(data, cls)
    from dpglass.registry import list_estimators

    inner = data.get("inner_model", data)
    names = _registry_names(inner, list_estimators())
    if data.get("model") == "DPPipeline":
        names = [f"encoder + {n}" for n in names]
    html = render_card(data, cls.from_dict(data), names, "model.card()")
    if path is not None:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(html)
    return html


def card_of_file(path) -> str:
    """The card of a model file: read and verified (:func:`~dpglass.models._files.read_model_file` raises
    ModelFileError on an edited file), then rendered."""
    data, cls, names = read_model_file(path)
    return render_card(data, cls.from_dict(data), names, str(path).replace("\\", "/").rsplit("/", 1)[-1])


def render_card(data: dict, model, names, source: str) -> str:
    """The HTML page of a verified file ``data`` and the model loaded from it."""
    from dpglass.models.readout.explain import family_of

    family_of(getattr(model, "best_estimator_", model))  # a model the readouts do not know is refused up front
    title = f"{data['model']}" + (f" ({', '.join(names)})" if names else "")
    ledger = PrivacyLedger.from_dict(data["privacy_ledger"]) if "privacy_ledger" in data else None
    parts = [f"<h1>Model card: {escape(title)}</h1>",
             f'<p class="note">From the model file <b>{escape(source)}</b>. Classes: '
             f"{escape(', '.join(map(str, data['classes'])))}. Input columns: {data['n_features_in']}.</p>",
             f'<div class="verdict"><b>Verified.</b> {escape(VERIFIED)}. Everything on this card is read from '
             "that file, or computed from the model it holds without any data.</div>",
             _guarantee_section(data, ledger),
             model_section(model),
             _budget_section(ledger),
             _schema_section(data),
             _held_out_section(data)]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>Model card: {escape(title)}</title><style>{CSS}</style></head>\n<body><main>\n"
            + "\n".join(p for p in parts if p) + "\n</main></body></html>\n")


def _num(v) -> str:
    return "0" if v == 0 else f"{v:.4g}"


def _guarantee_section(data: dict, ledger) -> str:
    if ledger is None:
        return ('<h2>Privacy guarantee</h2><div class="warn"><b class="red">None.</b> This is a non-private model '
                "(its file holds no privacy ledger): it may reveal its training records. Do not publish it as "
                "private.</div>")
    eps, delta = ledger.total()
    kind = ledger.guarantee
    plus = (f", plus a probability of at most &delta; = {_num(delta)} that this bound fails" if delta > 0
            else " (&delta; = 0: pure differential privacy)")
    items = [f'<p class="key">(&epsilon; = <b>{_num(eps)}</b>, &delta; = <b>{_num(delta)}</b>)-differential privacy'
             f' &mdash; <span class="{escape(kind)}">{escape(kind)}</span>; budget &epsilon; = '
             f"{_num(ledger.epsilon) if ledger.epsilon is not None else 'none'}, &delta; = {_num(ledger.delta)}.</p>",
             "<p><b>What it means for one person.</b> Two datasets are <i>neighbours</i> when they differ by one "
             "person's record, added or removed. Whatever this model shows (its file, its predictions, this card) "
             "is almost as likely whichever of two neighbouring datasets it was trained on: the probability of any "
             f"outcome changes by a factor of at most e<sup>&epsilon;</sup> = {math.exp(eps):.3g}{plus}. So it "
             "reveals little about any one person, including whether they were in the training data.</p>",
             "<p><b>The number of training records is private too</b>: it is not in the file, and the counts shown "
             "are noisy.</p>",
             f"<p><b>Accountant:</b> {escape(ledger.accountant)} "
             + ("(the releases' epsilons and deltas add up; parallel parts count once)." if ledger.accountant == "basic"
                else "(the releases' privacy curves compose to the total above, which is less than the sum of their "
                     "epsilons).") + "</p>"]
    if kind != "proven":
        items.append(f'<div class="warn"><b class="red">{escape(kind)}</b>: some releases (in red below) rest on '
                     "a paper's accounting that dpglass could not prove. Do not publish this model as differentially "
                     "private.</div>")
    if ledger.replayable:
        items.append('<div class="warn"><b class="red">REPLAYABLE</b> noise: it came from a seeded generator, so '
                     "whoever knows the seed can subtract it. For research, not for release.</div>")
    elif ledger.replayable is False:
        items.append("<p><b>Noise:</b> cryptographic (ChaCha20 keyed from the operating system); not replayable.</p>")
    else:
        items.append("<p><b>Noise:</b> the file does not record whether it was seeded.</p>")
    if "selected_by" in data:
        sel = data["selected_by"]
        items.append(f"<p><b>Selected by</b> a private selection ({escape(str(sel.get('method')))}), best parameters "
                     f"{escape(json.dumps(sel.get('best_params')))}; its cost is in the ledger.</p>")
    return "<h2>Privacy guarantee</h2>" + "".join(items)


def _release_groups(ledger) -> list:
    """The ledger's releases for the budget chart: parallel parts of one partition count once (their largest),
    then releases that differ only by their numbers (round 3, rule 2) are one group.  ``[(name, epsilon, count,
    weak)]`` in order of first release."""
    collapsed, seen = [], {}
    for e in ledger:
        if e.partition is None:
            collapsed.append((e.release, e.epsilon, e.guarantee))
            continue
        if e.partition in seen:
            i = seen[e.partition]
            name, eps, g = collapsed[i]
            collapsed[i] = (name, max(eps, e.epsilon), g if g != "proven" else e.guarantee)
        else:
            seen[e.partition] = len(collapsed)
            collapsed.append((e.partition, e.epsilon, e.guarantee))
    groups: dict = {}
    for name, eps, g in collapsed:
        key = re.sub(r"\d+", "#", name)
        total, count, weak = groups.get(key, (0.0, 0, False))
        groups[key] = (total + eps, count + 1, weak or g != "proven")
    return [(k, v[0], v[1], v[2]) for k, v in groups.items()]


def _budget_section(ledger) -> str:
    from dpglass.models.readout.svg import BUDGET_COLOURS, hbar_chart

    if ledger is None:
        return ""
    groups = _release_groups(ledger)
    total = sum(g[1] for g in groups)
    drawn = [g for g in groups if g[1] > 0]
    rows = [(f"{name}" + (f" (\u00d7{count})" if count > 1 else ""), 100.0 * eps / total,
             BUDGET_COLOURS["weak" if weak else "proven"], f"{name}: epsilon {eps:.4g} in {count} release(s)")
            for name, eps, count, weak in drawn] if total > 0 else []
    chart = hbar_chart(rows, "the privacy budget: each release's share of epsilon") if rows else ""
    how = ("share of the total epsilon" if ledger.accountant == "basic" else
           f"share of the sum of the releases' epsilons (the {escape(ledger.accountant)} accountant composes them to "
           "less than that sum)")
    skipped = len(groups) - len(drawn)
    head = ("<h2>Privacy budget</h2>"
            f"<p>Each bar is one kind of release and its {how}, in percent; numbered releases (rounds, rules, "
            "trees) are summed, parallel parts of one partition count once. Red: a paper-claim or non-private "
            "release." + (f" {skipped} release kind(s) at &epsilon; = 0 are not drawn." if skipped else "") + "</p>")
    return head + f'<div class="budget">{chart}</div>' + _ledger_table(ledger)


def _ledger_table(ledger) -> str:
    rows = []
    for i, e in enumerate(ledger, 1):
        cls = "" if e.guarantee == "proven" else f' class="{escape(e.guarantee)}"'
        records = "all" if e.partition is None else f"{e.partition}: {e.part}"
        rows.append(f"<tr{cls}><td class=num>{i}</td><td>{escape(e.release)}</td><td>{escape(e.mechanism)}</td>"
                    f"<td class=num>{_num(e.epsilon)}</td><td class=num>{_num(e.delta)}</td>"
                    f"<td>{escape(e.guarantee)}</td><td>{escape(records)}</td></tr>")
    eps, delta = ledger.total()
    return (f"<details><summary>All {len(ledger)} releases of the ledger</summary><div class=scroll><table>"
            "<tr><th class=num>#</th><th>release</th><th>mechanism</th><th class=num>&epsilon;</th>"
            "<th class=num>&delta;</th><th>guarantee</th><th>records</th></tr>" + "".join(rows)
            + f"</table></div><p>Total (recomputed by the {escape(ledger.accountant)} accountant): &epsilon; = "
            f"{_num(eps)}, &delta; = {_num(delta)}.</p></details>")


def _schema_section(data: dict) -> str:
    enc = data.get("encoding")
    if not enc:
        return ""
    schema = enc.get("schema", {})
    cuts = iter(enc.get("cuts", []))
    rows = []
    for col in schema.get("columns", []):
        kind = col.get("kind", "")
        if kind == "ignore":
            rows.append(f"<tr><td>{escape(col['name'])}</td><td>ignored</td><td></td><td></td><td></td></tr>")
            continue
        c = next(cuts, [])
        domain = (f"bounds {col.get('bounds')}" if kind == "numeric" else
                  ", ".join(map(str, col.get("categories", []))) if kind == "categorical" else "0 / 1")
        cut_text = ", ".join(_num(float(t)) for t in c) if kind == "numeric" else ""
        listed = enc.get("cut_codes") and kind == "numeric" and isinstance(col.get("thresholds"), list)
        if listed:  # the cut-codes route: the model reads the code of the interval between the listed cut points
            cut_text = ", ".join(_num(float(t)) for t in col["thresholds"]) + " (the model reads the interval)"
        elif kind == "numeric" and not c:
            cut_text = "none: the model reads the number (its own bins above)"
        missing = {"none": "its own code" if listed else "sets none of its indicators"}.get(
            col.get("missing", "error"), "refused (an error)")
        rows.append(f"<tr><td>{escape(col['name'])}</td><td>{escape(kind)}</td><td>{escape(domain)}</td>"
                    f"<td>{escape(cut_text)}</td><td>{escape(missing)}</td></tr>")
    noisy = data.get("clipped_records_noisy")
    clip = "" if noisy is None else f"<p>Noisy count of training records with clipped values: {escape(str(noisy))}.</p>"
    return ("<h2>Schema</h2><p>The public description of the table the model reads"
            + (f" (target <b>{escape(str(schema.get('target')))}</b>)" if schema.get("target") else "")
            + ".</p><div class=scroll><table><tr><th>column</th><th>kind</th><th>values</th><th>cut points</th>"
            "<th>a missing value</th></tr>" + "".join(rows) + "</table></div>" + clip)


def _held_out_section(data: dict) -> str:
    """The DP held-out accuracy ``dpglass fit --out`` wrote (its verified ``held_out`` section); none otherwise."""
    sec = data.get("held_out")
    if sec is None:
        return ""
    k = held_out_bound(2 * sec["epsilon_each"])
    line = accuracy_estimate(sec["noisy_correct"], sec["noisy_records"], k)
    return ("<h2>Held-out accuracy</h2>"
            f'<p class="key">{escape(line)}.</p>'
            "<p>Measured by <code>dpglass fit</code> when it made this file, on records it did not train on: each "
            f"record was held out by its own public coin (probability {_num(sec['test_size'])}), whatever the data. "
            f"It is estimated from two noisy counts, of the correct predictions ({sec['noisy_correct']}) and of the "
            f"held-out records ({sec['noisy_records']}), each with discrete Laplace noise at &epsilon; = "
            f"{_num(sec['epsilon_each'])}; the interval holds both counts' noise with probability at least "
            f"{1 - sec['alpha']:.0%} (each count within {k}). It covers the noise only, not the luck of which "
            "records were held out; the exact accuracy and the number of held-out records are not published.</p>"
            "<p><b>It costs no privacy beyond the budget above</b>, by parallel composition: the held-out records "
            "and the training records are disjoint, so adding or removing one person's record changes either the "
            "model's releases or these two counts, never both. The counts spend &epsilon; = "
            f"{_num(2 * sec['epsilon_each'])} (pure) on the held-out records, the model at most its budget on the "
            "training records, so the whole run, this file included, is within the budget.</p>")
