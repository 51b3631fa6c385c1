"""``report.md`` of the rule-list reproduction: our numbers beside paper 001's, with the differences explained."""

from __future__ import annotations

import math

import pandas as pd

from dpglass_experiments.report import Report, at_epsilon, error_line, pm, sci, speed_rows
from dpglass_experiments.rule_lists.benchmark_section import write_section
from dpglass_experiments.rule_lists.plan import (
    CITATION,
    DIFFERENCES,
    MAPPING_NOTES,
    METHOD_NOTES,
    NUMBERS,
    PAPER_DATASETS,
    PAPER_NAME,
    SOURCES,
    TITLE,
    paper_methods,
)

__all__ = ["write_report"]


def write_report(run, results: dict) -> None:
    """Write ``report.md`` from the results of the experiments (a dict of summaries)."""
    r = results
    plan, quick = run.plan, run.quick
    w = Report()
    w.intro(TITLE, CITATION, "rule-lists", quick, "few seeds", SOURCES)
    _setup(w, plan, quick, r["acc"], r["alternatives"])
    _differences(w)
    _fig4(w, plan, r["acc"])
    _table1(w, plan, r["table1"])
    _table2(w, r["table2"])
    _fig23(w, r["f23"])
    _table3(w, r["table3"])
    _sec5d(w, plan, r["hyper"])
    _appendix_c(w, plan, r["mia"])
    write_section(w, run.out)  # issue 12, from benchmarks/rule_list_accuracy.py's CSVs when present
    w.tight_accounting("rules")
    _speed(w, quick, run.timings, plan, r["main"])
    w.write(run.out)


def _setup(w, plan, quick, acc, alternatives) -> None:
    """Splits, grid, the datasets standing for the paper's, the other files measured, the methods."""
    n_seeds = plan.n_seeds
    w.heading("Setup")
    w(f"* Splits: 70/30 train/test, one seeded split per seed ({n_seeds} seeds), the same split for every method "
      "and ε of a seed; noise streams from a SeedSequence per (dataset, method, ε, seed).")
    w(f"* ε grid: {len(plan.epsilons)} values in [{min(plan.epsilons):g}, {max(plan.epsilons):g}]"
      + (" (the paper's 200 log-spaced values plus 0.1, 1 and 10, where Tables I-III report)" if not quick else "")
      + "; K = 5; C = 0.99 (Algorithm 3) for sm-*; δ = 10⁻⁸, dpglass's public default (the paper uses 1/n², which would publish n).")
    w("* Nothing is tuned on the test split: hyper-parameters are the paper's; Section V-D uses a validation split "
      "cut from the training part.")
    w()
    rows = []
    greedy = acc[acc["method"] == "GreedyRL"]
    for paper, spec in PAPER_DATASETS.items():
        g = greedy[greedy["dataset"] == spec.name]
        pap = NUMBERS.get("accuracy", source="Table II", dataset=paper, method="GreedyRL")
        rows.append({"paper dataset": paper, "dpglass dataset": f"`{spec.name}`",
                     "max_card": spec.params["max_card"], "λ": spec.params["min_support"],
                     "GreedyRL test acc. (ours)": pm(float(g["mean"].iloc[0]), float(g["se"].iloc[0])),
                     "paper": f"{pap:.3f}", "why this file": MAPPING_NOTES[paper]})
    w.table(rows)
    if alternatives is not None and len(alternatives):
        w("Other files we measured for the same role (GreedyRL and sm-Laplace at ε = 10, same seeds; "
          "reported for transparency, not used to tune anything):")
        w()
        w.table(alternatives)
    w("Methods (`dpglass.models.DPRuleListClassifier` parameters; K = `max_length` = 5):")
    w()
    meth = []
    for m in paper_methods():
        p = {k: v for k, v in m.params.items() if k != "max_length"}
        meth.append({"method": m.name, "parameters": ", ".join(f"{k}={v!r}" for k, v in p.items()) or "(defaults)",
                     "note": METHOD_NOTES[m.name]})
    w.table(meth)


def _differences(w) -> None:
    """Where and why we differ from the paper (:data:`plan.DIFFERENCES`)."""
    w.heading("Where and why we differ from the paper")
    for i, text in enumerate(DIFFERENCES, 1):
        w(f"{i}. {text}")
    w()


def _fig4(w, plan, acc) -> None:
    """Fig. 4: test accuracy vs epsilon, and the paper's statements about it."""
    n_seeds = plan.n_seeds
    w.heading("Fig. 4: test accuracy vs ε")
    w.figure("Fig. 4", "fig4_test_accuracy")
    w(f"Mean ± standard error over {n_seeds} seeds (numbers for every ε: `fig4_test_accuracy.csv`).")
    w()
    pick = [e for e in (0.01, 0.1, 1.0, 10.0, 100.0) if len(at_epsilon(acc, e))]
    rows = []
    for paper, spec in PAPER_DATASETS.items():
        for m in paper_methods():
            part = acc[(acc["dataset"] == spec.name) & (acc["method"] == m.name)]
            rec = {"dataset": paper, "method": m.name}
            for e in pick:
                r = part if m.name == "GreedyRL" else at_epsilon(part, e)
                rec[f"ε={e:g}"] = pm(float(r["mean"].iloc[0]), float(r["se"].iloc[0])) if len(r) else "n/a"
            rows.append(rec)
    w.table(rows)
    w("Against the paper's statements:")
    w()
    adult = PAPER_DATASETS["Adult"].name
    a1 = at_epsilon(acc[(acc["dataset"] == adult) & (acc["method"] == "sm-Laplace")], 1.0)
    ga = acc[(acc["dataset"] == adult) & (acc["method"] == "GreedyRL")]
    paper_sm = NUMBERS.get("accuracy", source="Section V-C", dataset="Adult", method="sm-Laplace", epsilon=1.0)
    paper_greedy = NUMBERS.get("accuracy", source="Section V-C", dataset="Adult", method="GreedyRL")
    if len(a1):
        w(f"* Adult at ε = 1: sm-Laplace {pm(float(a1['mean'].iloc[0]), float(a1['se'].iloc[0]))} vs GreedyRL "
          f"{pm(float(ga['mean'].iloc[0]), float(ga['se'].iloc[0]))} "
          f"(paper: {paper_sm:.3f} vs {paper_greedy:.3f}, a loss under 0.005). "
          f"Our loss: {float(ga['mean'].iloc[0]) - float(a1['mean'].iloc[0]):.4f}.")
    _rankings(w, acc)
    w("  The paper: \"the sm-Laplace mechanism consistently and largely outperforms all other approaches\" and "
      "\"for ε ≥ 0.1 the mechanisms based on smooth sensitivity either match or outperform\" the global ones.")
    gl_gap = []
    for paper, spec in PAPER_DATASETS.items():
        g = float(acc[(acc["dataset"] == spec.name) & (acc["method"] == "GreedyRL")]["mean"].iloc[0])
        for m in ("gl-Laplace", "gl-Gaussian", "sm-Laplace"):
            r = at_epsilon(acc[(acc["dataset"] == spec.name) & (acc["method"] == m)], max(plan.epsilons))
            if len(r):
                gl_gap.append(f"{paper} {m} {g - float(r['mean'].iloc[0]):+.3f}")
    w(f"* Gap to GreedyRL at ε = {max(plan.epsilons):g} (GreedyRL minus method): " + "; ".join(gl_gap)
      + ". The paper: global-sensitivity mechanisms converge only around ε ≈ 10³, smooth ones steeply.")
    w()


def _rankings(w, acc) -> None:
    """The five DP mechanisms ranked at epsilon = 1 and 10, with where sm-Laplace stands."""
    for e in (1.0, 10.0):
        best = []
        for paper, spec in PAPER_DATASETS.items():
            part = at_epsilon(acc[(acc["dataset"] == spec.name) & acc["method"].isin(
                ["sm-Laplace", "sm-Cauchy", "gl-Laplace", "gl-Gaussian", "gl-Exponential"])], e)
            if len(part):
                top = part.sort_values("mean", ascending=False)
                sm = top[top["method"] == "sm-Laplace"].iloc[0]
                lead = top.iloc[0]
                tie = abs(lead["mean"] - sm["mean"]) <= 2 * math.hypot(lead["se"], sm["se"])
                where = "first" if lead["method"] == "sm-Laplace" else (
                    f"tied with the best ({lead['method']}) within 2 se" if tie else f"behind {lead['method']}")
                best.append(f"{paper}: {', '.join(top['method'].tolist())} (sm-Laplace {where})")
        if best:
            w(f"* Ranking of the five DP mechanisms at ε = {e:g}, best first — {'; '.join(best)}.")


def _table1(w, plan, table1) -> None:
    """Table I: standard errors beside the paper's."""
    n_seeds = plan.n_seeds
    w.heading("Table I: standard error of the mean test accuracy")
    t1 = table1.copy()
    t1["ours"] = t1["se_ours"].map(sci)
    t1["paper"] = t1["se_paper"].map(sci)
    wide = t1.pivot_table(index=["method", "epsilon"], columns="dataset", values=["ours", "paper"], aggfunc="first",
                          sort=False)
    rows = []
    for (method, eps), r in wide.iterrows():
        rec = {"method": method, "ε": f"{eps:g}"}
        for d in ("German", "COMPAS", "Adult"):
            rec[d] = f"{r[('ours', d)]} (paper {r[('paper', d)]})"
        rows.append(rec)
    w.table(rows)
    ratio = (table1["se_ours"] / table1["se_paper"]).dropna()
    w(f"Our standard errors ({n_seeds} seeds; the paper's used 100) are within a factor of 2 of the paper's in "
      f"{(ratio.between(0.5, 2)).mean():.0%} of the {len(ratio)} cells (ratio ours/paper: median "
      f"{ratio.median():.2f}, range {ratio.min():.2f}-{ratio.max():.2f}). They shrink with ε and with the dataset "
      "size as the paper describes; they measure the spread of accuracy over splits and noise, so they follow "
      "the accuracy curves, which differ where our mechanisms or data differ (Adult).")
    w()


def _table2(w, table2) -> None:
    """Table II: vulnerability and accuracy at epsilon = 10 beside the paper's."""
    w.heading("Table II: vulnerability and test accuracy at ε = 10")
    rows = []
    for rec in table2.itertuples(index=False):
        paper_acc = "" if not isinstance(rec.paper_accuracy, float) or math.isnan(rec.paper_accuracy) else \
            f"{rec.paper_accuracy:.3f} ± {rec.paper_accuracy_pm:.0e}"
        paper_v = f"{rec.paper_vulnerability} ± {rec.paper_vulnerability_pm:.0e}" if rec.paper_vulnerability else ""
        gap = "" if not paper_acc else f"{(rec.accuracy - rec.paper_accuracy) / rec.accuracy_se:+.1f}"
        rows.append({
            "dataset": rec.dataset, "method": rec.method,
            "vulnerability (ours ± se)": pm(rec.vulnerability, rec.vulnerability_se, 4),
            "ours var": f"{rec.vulnerability_var:.0e}", "paper": paper_v,
            "accuracy (ours ± se)": pm(rec.accuracy, rec.accuracy_se, 3), "ours var ": f"{rec.accuracy_var:.0e}",
            "paper ": paper_acc, "(ours − paper)/se": gap,
        })
    w.table(rows)
    w("V = 1/2 + 1/2 Σ_y P[y] τ(y), τ(y) = 1/2 Σ_r |P[r | y, train] − P[r | y, test]| over the rules r of the "
      "list (default rule included), P[y] over train and test together; computed for every fit of the sweep "
      "(`vulnerability` column) with the definition of `dpglass.audit.membership.distributional_overfitting`.")
    w()
    w(_table2_discussion(table2))
    w()


def _fig23(w, f23) -> None:
    """Figs. 2-3: noisy counts vs noisy Gini."""
    w.heading("Figs. 2-3: noisy counts vs noisy Gini (global sensitivity), training accuracy")
    w.figure("Figs. 2-3", "fig2_3_noisy_counts_vs_gini")
    rows = []
    for paper, spec in PAPER_DATASETS.items():
        part = f23[f23["dataset"] == spec.name]
        g = part[part["method"] == "GreedyRL"]
        rec = {"dataset": paper, "GreedyRL": pm(float(g["mean"].iloc[0]), float(g["se"].iloc[0]))}
        sub = part[part["method"] != "GreedyRL"].dropna(subset=["epsilon"])
        small = sub[(sub["epsilon"] >= 0.1) & (sub["epsilon"] <= 20)]
        piv = small.pivot_table(index="epsilon", columns="method", values="mean")
        if {"gl-Laplace", "noisy-counts"} <= set(piv.columns):
            rec["ε in [0.1, 20]: noisy Gini ≥ noisy counts"] = f"{(piv['gl-Laplace'] >= piv['noisy-counts']).mean():.0%} of grid points"
        for m in ("gl-Laplace", "noisy-counts"):
            r = sub[sub["method"] == m].sort_values("epsilon")
            close = r[r["mean"] >= float(g["mean"].iloc[0]) - 0.005]
            rec[f"{m}: first ε within 0.005 of GreedyRL"] = f"{close['epsilon'].iloc[0]:.3g}" if len(close) else "not reached"
        rows.append(rec)
    w.table(rows)
    w("The paper: noisy Gini beats noisy counts for ε in [0.1, 20], both converge to GreedyRL for large ε, noisy "
      "Gini more slowly at very large ε; and noisy counts \"remains interesting ... when the mined ruleset is "
      "pre-processed beforehand to a small cardinality (e.g. less than a hundred)\", since its budget is split "
      "over the rules. Noisy counts here uses the paper's split over 2m tables (`variant=\"paper\"`), m = "
      "candidates + 1: m = 99 on German and 49 on Adult (single literals), 1459 on COMPAS (pairs). Noisy Gini wins "
      "clearly only on COMPAS, the large rule set, which is the paper's own caveat at work: our German and Adult "
      "rule sets are small.")
    w()


def _table3(w, table3) -> None:
    """Table III: feature-intersection ratios beside the paper's."""
    w.heading("Table III: feature-intersection ratio I_7 on Adult (permutation importance)")
    rows = []
    for rec in table3.itertuples(index=False):
        rows.append({"ε": f"{rec.epsilon:g}", "method": rec.method,
                     "positive importance only": pm(rec.I_k, rec.I_k_se),
                     "zero ties at random": pm(rec.I_k_ties_random, rec.I_k_ties_random_se),
                     "zero ties by column": pm(rec.I_k_ties_by_column, rec.I_k_ties_by_column_se),
                     "paper": f"{rec.paper_I_k:.3f} ± {rec.paper_pm:g}", "seeds": rec.n_seeds})
    w.table(rows)
    w("Reference: GreedyRL on the same split; the DP models are the Fig. 4 sweep's own fits (same seeds). "
      "Permutation importance: mean accuracy drop on the test split when one column is permuted, 5 repeats; a "
      "feature a rule list does not use has importance exactly 0. With single-literal rules on `adult-corels`, "
      "GreedyRL's lists have about 2-3 features of positive importance, so a top-7 is mostly ties and I_7 depends "
      "on how ties are broken, which the paper does not say: counting only positive importances bounds I_7 by "
      "the number of such features over 7; breaking ties by column order makes both models share the same "
      "zero-importance columns.")
    order = []
    for col, label in (("I_k", "positive only"), ("I_k_ties_random", "random ties"), ("I_k_ties_by_column", "column ties")):
        for eps in sorted(table3["epsilon"].unique()):
            part = table3[table3["epsilon"] == eps].set_index("method")[col]
            if {"sm-Laplace", "gl-Laplace"} <= set(part.index):
                order.append(f"{label}, ε={eps:g}: {'yes' if part['sm-Laplace'] > part['gl-Laplace'] else 'no'}")
    w()
    w("sm-Laplace keeps more of GreedyRL's features than gl-Laplace (the paper's finding)? " + "; ".join(order) + ".")
    w()


def _sec5d(w, plan, hyper) -> None:
    """Section V-D: K and lambda on a validation split."""
    w.heading("Section V-D: K and λ (validation accuracy)")
    for eps in plan.hyper_epsilons:
        w(f"![Section V-D, ε = {eps:g}](sec5d_hyperparameters_eps{eps:g}.png)")
        w()
    rows = []
    for eps in plan.hyper_epsilons:
        hyp = hyper[hyper["epsilon"] == eps]
        for paper, spec in PAPER_DATASETS.items():
            for fam, part in hyp[hyp["dataset"] == spec.name].groupby("family", sort=False):
                k = part[part["knob"] == "K"].sort_values("value")
                lam = part[part["knob"] == "lambda"].sort_values("value")
                kb = k.loc[k["mean"].idxmax()]
                lb = lam.loc[lam["mean"].idxmax()]
                k7 = k[k["value"] == k["value"].max()]
                at5 = k[k["value"] == 5]
                rows.append({"ε": f"{eps:g}", "dataset": paper, "method": fam,
                             "best K (acc.)": f"{kb['value']:g} ({kb['mean']:.3f})",
                             "acc. at K=5": f"{float(at5['mean'].iloc[0]):.3f}" if len(at5) else "n/a",
                             f"rules at K={k['value'].max():g}": f"{float(k7['mean_rules'].iloc[0]):.2f}",
                             "best λ (acc.)": f"{lb['value']:g} ({lb['mean']:.3f})",
                             "paper's λ": f"{spec.params['min_support']:g}"})
    w.table(rows)
    best_k = {}
    for eps in plan.hyper_epsilons:
        hyp = hyper[(hyper["epsilon"] == eps) & (hyper["knob"] == "K") & (hyper["family"] != "GreedyRL")]
        best_k[eps] = hyp.loc[hyp.groupby(["dataset", "family"])["mean"].idxmax(), "value"].mean()
    w("The paper: K = 5 was best on average (the ε is not stated); with K = 7 the minimum support usually stops "
      "the list earlier; the smooth-sensitivity methods beat the global ones for every K. Measured on a validation "
      "split (25% of the training part; the test part is not used). ε is split over 2K + 1 releases (3K + 1 for the "
      "paper's variant), so a longer list costs accuracy per rule; mean best K of the DP methods: "
      + ", ".join(f"{v:.1f} at ε = {e:g}" for e, v in best_k.items()) + ".")
    w()


def _appendix_c(w, plan, mia) -> None:
    """Appendix C: the shadow-model attack."""
    w.heading("Appendix C: membership inference (shadow models, random-forest attack)")
    w.figure("Appendix C", "appC_mia_roc")
    rows = []
    for rec in mia.itertuples(index=False):
        rows.append({"dataset": PAPER_NAME.get(rec.dataset, rec.dataset), "model": rec.method, "AUC": f"{rec.auc:.3f}",
                     "TPR at FPR 0.1%": f"{rec.tpr_at_fpr_0_1pct:.4f}", "TPR at FPR 1%": f"{rec.tpr_at_fpr_1pct:.4f}",
                     "members / non-members": f"{rec.members} / {rec.non_members}"})
    w.table(rows)
    w(f"Each of {plan.mia_repeats} repetitions splits the data in half: the target model trains on half of the "
      f"first half (members; the other half are non-members) and {plan.mia_shadows} shadow models of the same "
      "algorithm train on random halves of the second half, labelling their training records in and the rest "
      "out. The attack (a random forest, 100 trees) sees a record's P(y=1) under the model and its label, as "
      "ART's MembershipInferenceBlackBox does; scores are pooled over repetitions. A rule list of ≤ 6 rules gives "
      "≤ 6 distinct outputs per label, so the ROC has few steps. The paper reports ROC curves only "
      "(\"rule lists are already resilient to MIAs\", slightly higher TPR at low FPR on German).")
    w()


def _speed(w, quick, timings, plan, main) -> None:
    """Speed of every part, and the cells that failed."""
    w.heading("Speed")
    sweeps = [("fig4", "Fig. 4 / Tables I-II sweep"), ("fig2_3", "Figs. 2-3 sweep"),
              ("alternatives", "alternative files")]
    sweeps += [(f"sec5d_eps{e:g}", f"Section V-D sweep, ε = {e:g}") for e in plan.hyper_epsilons]
    rows = speed_rows(timings, sweeps, (("table3", "Table III", ""), ("mia", "Appendix C", "")), fps_digits=0)
    total = sum(float(r["seconds"]) for r in rows)
    main_t = timings.get("fig4")
    if main_t and main_t.get("fits_per_second") and not quick:
        fps = main_t["fits_per_second"]
        w(f"The Fig. 4 sweep fitted {main_t['computed_fits']:,} rule lists in {main_t['seconds'] / 60:.1f} min: "
          f"**{fps:.0f} fits/s** with {','.join(map(str, main_t.get('n_jobs', [])))} worker processes on this "
          f"machine (2 cores shared with other jobs), i.e. **{360_000 / fps / 60:.1f} min for the paper's "
          "360,000-fit grid**. Each unit of work (one dataset and seed: every method and ε) shares the training "
          "set's distinct rows, Gram matrices and candidate counts across ε and methods "
          "(`dpglass.models.rule_list.candidates.CountCache`); `benchmarks/bench_rule_lists.py --sweep` compares it with "
          "fitting the estimators one by one.")
        w()
    w(f"All parts, as run (seconds summed over resumed runs): {total / 60:.1f} min.")
    w()
    w.table(rows)
    w(error_line(main))
    w()


def _table2_discussion(table2: pd.DataFrame) -> str:
    """How far our Table II is from the paper's, and why."""
    def paper(quantity, d, m):
        return NUMBERS.get(quantity, source="Table II", dataset=d, method=m)

    lines = []
    for rec in table2.itertuples(index=False):
        if not isinstance(rec.paper_accuracy, float) or math.isnan(rec.paper_accuracy):
            continue
        z = (rec.accuracy - rec.paper_accuracy) / rec.accuracy_se
        verdict = "within one standard error" if abs(z) <= 1 else (
            "within two standard errors" if abs(z) <= 2 else "outside two standard errors")
        lines.append(f"* {rec.dataset} {rec.method}: {rec.accuracy:.3f} vs {rec.paper_accuracy:.3f}, {verdict} "
                     f"({z:+.1f} se).")
    lines.append("")
    t = table2.set_index(["dataset", "method"])
    higher = [d for d in ("COMPAS", "German", "Adult")
              if t.loc[(d, "GreedyRL"), "vulnerability"] > t.loc[(d, "sm-Laplace"), "vulnerability"]]
    gaps = {d: t.loc[(d, "GreedyRL"), "accuracy"] - t.loc[(d, "sm-Laplace"), "accuracy"] for d in ("COMPAS", "German", "Adult")}
    paper_gaps = {d: paper("accuracy", d, "GreedyRL") - paper("accuracy", d, "sm-Laplace") for d in ("German", "Adult")}
    lines.append(
        "Why the gaps: **COMPAS** reproduces. **German** uses the paper's own file, but our GreedyRL is "
        f"{t.loc[('German', 'GreedyRL'), 'accuracy'] - paper('accuracy', 'German', 'GreedyRL'):+.3f} above the paper's and sm-Laplace "
        f"{t.loc[('German', 'sm-Laplace'), 'accuracy'] - paper('accuracy', 'German', 'sm-Laplace'):+.3f}: the loss of sm-Laplace against GreedyRL is "
        f"{gaps['German']:.3f} here and {paper_gaps['German']:.3f} in the paper, so most of the offset is in the non-private baseline, "
        "i.e. in GreedyRL itself (its tie-breaking and stopping rules are not specified in the paper) or in the "
        "splits (the paper does not say whether they were stratified), not in the DP mechanism. With 1000 records, "
        "a 30% test set of 300 gives a per-seed accuracy sd of about 0.025, so 100 seeds resolve ±0.0025. "
        "**Adult** uses a different file (24 attributes instead of the paper's 47 rules), which bounds GreedyRL "
        f"at {t.loc[('Adult', 'GreedyRL'), 'accuracy']:.3f}; the loss of sm-Laplace is {gaps['Adult']:.3f} "
        f"(the paper's: {paper_gaps['Adult']:.3f}). sm-Laplace also runs with ε_node = 10/16 instead of the paper's 10/14.")
    lines.append("")
    lines.append(
        f"Vulnerability: GreedyRL's is higher than sm-Laplace's on {', '.join(higher) if higher else 'no dataset'} "
        "(the paper: non-DP models are consistently slightly more vulnerable, most on German). Ours minus the "
        "paper's: " + ", ".join(
            f"{d} {m} {t.loc[(d, m), 'vulnerability'] - paper('vulnerability', d, m):+.4f}"
            for d in ("COMPAS", "German", "Adult") for m in ("GreedyRL", "sm-Laplace")) + ". V is a plug-in "
        "estimate from finite train and test sets, biased upwards by sampling noise (|p_in − p_out| > 0 even for "
        "identical distributions), by an amount that depends on how the sets and the rule frequencies are "
        "counted, which the paper does not detail.")
    return "\n".join(lines)
