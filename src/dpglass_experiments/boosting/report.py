"""``report.md`` of the boosting reproduction: our numbers beside paper 002's, with the differences explained."""

from __future__ import annotations

import math

import pandas as pd

from dpglass_experiments.boosting.discussion import (
    features_discussion,
    fig1_discussion,
    fig23_discussion,
    headline_discussion,
    int_or,
    hyper_discussion,
    table2_discussion,
)
from dpglass_experiments.boosting.plan import (
    APPENDIX_C,
    CITATION,
    DIFFERENCES,
    HEADLINE,
    MAPPING_NOTES,
    PAPER_COLUMNS,
    PAPER_DATASETS,
    PAPER_NAME,
    PAPER_SETTINGS,
    PRIVATE_SUFFIX,
    SETTINGS_TABLE,
    SOURCES,
    TITLE,
    grid_points,
    grid_text,
)
from dpglass_experiments.boosting.side_studies import (
    ENCODINGS,
    TEACHER_METHODS,
    bagging_section,
    encodings_section,
    mushroom_headline,
    mushroom_section,
)
from dpglass_experiments.report import Report, at_epsilon, error_line, pm, speed_rows

__all__ = ["write_report"]


def cell_pm(frame, dataset, method, eps) -> str:
    """``mean ± se`` of one (dataset, method, epsilon) of a summary; ``eps=None``: a non-private method."""
    part = frame[(frame["dataset"] == dataset) & (frame["method"] == method)]
    part = part[part["epsilon"].isna()] if eps is None else at_epsilon(part, eps)
    if not len(part):
        return pm(math.nan, math.nan)
    return pm(float(part["mean"].iloc[0]), float(part["se"].iloc[0]))


def _pick(acc):
    """The epsilons the report's tables show."""
    return [e for e in (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 1.0, 3.0, 5.0) if len(at_epsilon(acc, e))]


def _settings(eps, paper="Adult") -> str:
    k, lam, tau = PAPER_SETTINGS[paper][eps]
    return f"κ={k:g}, λ={lam:g}, τ={tau}"


def write_report(run, results: dict) -> None:
    """Write ``report.md`` from the results of the experiments (a dict of summaries)."""
    r = results
    plan, quick = run.plan, run.quick
    pick = _pick(r["acc"])
    w = Report()
    w.intro(TITLE, CITATION, "boosting", quick, "tiny grids", SOURCES)
    _headline(w, plan, r["acc"], r["fine"], r["curse"], r.get("encodings"), r.get("mushroom10"))
    _setup(w, plan, quick, r["datasets"], run.data_home)
    _table2(w, r["acc"], r["datasets"])
    if r.get("bagging") is not None:
        bagging_section(w, plan, r["bagging"], r["acc"], quick)
    _sparsity(w, r["features"])
    _table4(w, r["table4"])
    encodings_section(w, plan, r.get("encodings"), r["acc"])
    _tables8_10(w, plan, r["hyper"], r["fig3_choice"])
    _tuned_trees_lr(w, r["choices"], pick)
    mushroom_section(w, plan, r.get("mushroom10"))
    _fig1(w, r["fig1"])
    _fig23(w, plan, r["f23"], r["fig3_choice"], pick)
    _differences(w, plan)
    w.tight_accounting("boosting")
    _speed(w, plan, run.timings, r["main"], r.get("bagging"))
    w.write(run.out)


def _headline(w, plan, acc, fine, curse, enc=None, mushroom10=None) -> None:
    """The paper's headline numbers beside ours."""
    reps = plan.n_seeds
    w.heading("Headline")
    adult = PAPER_DATASETS["Adult"].name
    h_eps = HEADLINE.epsilon
    rows = [{"claim": f"LazyBB with DP-1R on Adult at ε = {h_eps:g} (Table 4, paper's settings {_settings(h_eps)})",
             "paper": f"{HEADLINE.value:.2f}", "ours": cell_pm(acc, adult, "LazyBB-stumps", h_eps),
             "ours, private tuning": cell_pm(acc, adult, "LazyBB-stumps" + PRIVATE_SUFFIX, h_eps)}]
    for paper, spec in PAPER_DATASETS.items():
        k, lam, tau = PAPER_SETTINGS[paper][1.0]
        what = "test" if spec.split == "canonical" else "CV"
        rows.append({"claim": f"{paper} {what} accuracy at ε = 1, paper's settings κ={k:g}, λ={lam:g}, τ={tau} "
                              "(Appendix C, Table 11)",
                     "paper": f"{APPENDIX_C[paper]:.2f}", "ours": cell_pm(acc, spec.name, "LazyBB-stumps", 1.0),
                     "ours, private tuning": cell_pm(acc, spec.name, "LazyBB-stumps" + PRIVATE_SUFFIX, 1.0)})
    for paper, spec in ENCODINGS.items():
        if enc is not None and len(at_epsilon(enc[enc["dataset"] == spec.name], 1.0)):
            rows.append({"claim": f"{paper} at ε = 1, paper's settings, the paper's encoding as we reconstruct it "
                                  f"(`{spec.name}`)", "paper": f"{APPENDIX_C[paper]:.2f}",
                         "ours": cell_pm(enc, spec.name, "LazyBB-stumps", 1.0), "ours, private tuning": "not run"})
    if fine is not None:
        rows.append({"claim": "Cod-RNA CV accuracy at ε = 1, paper's settings, our finer 72-column encoding",
                     "paper": f"{APPENDIX_C['Cod-RNA']:.2f}", "ours": cell_pm(fine, "cod-rna-fine", "LazyBB-stumps", 1.0),
                     "ours, private tuning": "not run"})
    w.table(rows)
    w(f"Mean ± standard error over {reps} repetitions (Adult: noise seeds on the canonical split; Cod-RNA and "
      f"Mushroom: the folds of one stratified 5-fold cross-validation{' (only the first ' + str(reps) + ')' if reps < 5 else ''}). "
      "\"Private tuning\": PrivateGridSearch (Liu-Talwar random stopping) chooses κ, λ, τ inside the same ε; "
      "the paper's settings were chosen by a non-private cross-validation that the paper ran on its data.")
    w()
    w(headline_discussion(acc, fine, curse, len(grid_points(plan.fig23_grid)), mushroom_headline(mushroom10)))
    w()


def _setup(w, plan, quick, datasets, data_home) -> None:
    """Datasets, grid, tuning, the methods' settings."""
    reps = plan.n_seeds
    w.heading("Setup")
    rows = []
    for paper, spec in PAPER_DATASETS.items():
        _, y, names = spec.load(data_home)
        rows.append({"paper dataset": paper, "dpglass dataset": f"`{spec.name}`",
                     "records": f"{len(y)}", "columns (ours / paper)": f"{len(names)} / {PAPER_COLUMNS[paper]}",
                     "evaluation": "canonical train/test split, test accuracy" if spec.split == "canonical"
                     else "stratified shuffled 5-fold CV", "note": MAPPING_NOTES[paper]})
    w.table(rows)
    w(f"* ε grid: {', '.join(f'{e:g}' for e in plan.epsilons)}; {reps} repetitions per cell "
      "(the paper: 5, Appendix A). Every split and noise stream comes from a SeedSequence addressed by "
      "(dataset, repetition, method, ε), so any cell can be recomputed alone (`dpglass_experiments.sweep`).")
    w("* **Nothing is tuned on a test split or fold.** LazyBB-stumps uses the paper's chosen settings "
      "(Tables 8-10) as constants. LazyBB-trees and DP-LR: the paper tuned them by grid search and CV but does "
      "not report the choices, so we tune them its way (non-private grid search) on a validation part (25%) "
      "carved out of each training part: per ε for Adult (pooling "
      f"{reps} validation splits of the training part), per ε and per fold for Cod-RNA and Mushroom. "
      "These choices are non-private, like the paper's (see `tuned_trees_lr.csv`).")
    g = plan.private_grids
    w("* **Private tuning** (the \"(private tuning)\" curves): `PrivateGridSearch` (Liu and Talwar 2019 random "
      "stopping: geometric number of runs, each run a candidate drawn uniformly from the grid, trained with "
      "ε/3 on 80% of the training part and scored by a Laplace-noised validation count on the other 20%; "
      "the best run is released, not refit; the whole selection is ε-DP). Grids: stumps "
      f"{grid_text(g['stump'])} ({len(grid_points(g['stump']))} points, the paper's Table 1 1-Rule grid"
      f"{'' if not quick else ', quick: reduced'}; stopping probability γ = {plan.private_gamma['stump']:g}, "
      f"E[runs] = {1 / plan.private_gamma['stump']:g}); trees {grid_text(g['tree'])} "
      f"({len(grid_points(g['tree']))} points, Table 1's TopDown grid; γ = {plan.private_gamma['tree']:g}); "
      f"DP-LR α ∈ {{{', '.join(f'{a:g}' for a in g['lr']['alpha'])}}} (γ = {plan.private_gamma['lr']:g}).")
    w("* DP-LR (`DPLogisticRegression`, output perturbation) scales rows by a public norm bound read off the "
      "column names (one 1 per one-hot group, every cut may be 1: √(groups + cuts + 1) = "
      + ", ".join(f"{PAPER_NAME[d.name]} {d.params['data_norm']:.3g}" for d in datasets)
      + "), free of privacy cost; α (L2) is tuned as said.")
    w("* LazyBB-trees: `tree_nodes` = 3 internal nodes (the paper does not state its t); splits calibrated to "
      "sensitivity 8ζ (docs/privacy.md: the paper's 4ζ does not hold), so our trees are noisier than the paper's.")
    w("* Non-private references: a single 1-Rule (the literal or constant of fewest training errors) and sklearn's "
      "`GradientBoostingClassifier` with " + (f"{plan.gbc_params}" if plan.gbc_params else "its defaults (100 trees of depth 3)")
      + ".")
    w()


def _table2(w, acc, datasets) -> None:
    """Table 2: accuracy at chosen epsilons (the paper's Table 2 is plots)."""
    w.heading("Table 2: accuracy vs ε")
    w.figure("Table 2", "table2_accuracy")
    w("The paper's Table 2 is six plots (low and high privacy regime per dataset) without numbers, so we give "
      "ours at chosen ε (every ε: `table2_accuracy.csv`). Adult: test accuracy; Cod-RNA, Mushroom: CV accuracy.")
    w()
    method_order = [m for m in acc["method"].unique()]
    pick = _pick(acc)
    for paper, spec in PAPER_DATASETS.items():
        rows = []
        for m in method_order:
            rec = {"method": m}
            part = acc[(acc["dataset"] == spec.name) & (acc["method"] == m)]
            if not len(part):  # DP-Bag and SAA run on Adult only
                continue
            if part["epsilon"].isna().all():
                v = cell_pm(acc, spec.name, m, None)
                for e in pick:
                    rec[f"ε={e:g}"] = v if e == pick[0] else "〃"
            else:
                for e in pick:
                    rec[f"ε={e:g}"] = cell_pm(acc, spec.name, m, e)
            rows.append(rec)
        w(f"**{paper}**")
        w()
        w.table(rows)
    w(table2_discussion(acc[~acc["method"].isin(TEACHER_METHODS)], datasets))
    w()


def _sparsity(w, features) -> None:
    """Tables 3 and 5-7: features used, beside the paper's."""
    w.heading("Tables 3 and 5-7: features used by LazyBB-stumps")
    w.figure("Tables 3, 5-7", "table3_5_7_features")
    for paper in PAPER_DATASETS:
        part = features[features["dataset"] == paper]
        rows = []
        for eps in sorted(part["epsilon"].unique()):
            a = part[(part["epsilon"] == eps) & (part["method"] == "LazyBB-stumps")]
            b = part[(part["epsilon"] == eps) & (part["method"] == "LazyBB-stumps" + PRIVATE_SUFFIX)]
            if not len(a):
                continue
            a = a.iloc[0]
            rows.append({
                "ε": f"{eps:g}", "ours: mean": f"{a.features_mean:.1f}", "std": f"{a.features_std:.3f}",
                "% of columns": f"{a.pct_features:.2f}%",
                "paper: mean": f"{a.paper_mean:g}" if not math.isnan(a.paper_mean) else "n/a",
                "paper std": f"{a.paper_std:.3f}" if not math.isnan(a.paper_std) else "n/a",
                "paper %": f"{a.paper_pct:.2f}%" if not math.isnan(a.paper_pct) else "n/a",
                "private tuning: mean": f"{b.iloc[0].features_mean:.1f}" if len(b) else "n/a",
            })
        n_cols = int(part["n_columns"].iloc[0])
        table_no = {"Adult": "Tables 3 and 5", "Cod-RNA": "Table 6", "Mushroom": "Table 7"}[paper]
        w(f"**{paper}** ({table_no}; our {n_cols} columns, the paper's {PAPER_COLUMNS[paper]})")
        w()
        w.table(rows)
    w(features_discussion(features))
    w()


def _table4(w, table4) -> None:
    """Table 4: one model, printed."""
    h_eps = HEADLINE.epsilon
    w.heading(f"Table 4: a {h_eps:g}-DP LazyBB-stumps model of Adult")
    w(f"The first repetition's model of the Table 2 sweep at ε = {h_eps:g} (paper's settings {_settings(h_eps)}), "
      "printed by `SmoothBoostClassifier.to_text()`:")
    w()
    w("```")
    w(table4)
    w("```")
    w()
    w("The paper's Table 4 model votes for `marital-status: Married-civ-spouse` (3), against `capital-gain = 0` "
      "(−2), for `Exec-managerial`, `Prof-specialty` and 13 ≤ education-num ≤ 14.5 (1 each), against age ≤ 17 "
      "(−1). Its columns are different cuts of the same attributes (our encoding has no `age ≤ 17` or "
      "`13 ≤ education-num ≤ 14.5`).")
    w()


def _tables8_10(w, plan, hyper, fig3_choice) -> None:
    """Tables 8-10: the paper's settings beside PrivateGridSearch's choices."""
    reps = plan.n_seeds
    w.heading("Tables 8-10: hyper-parameters")
    w("The paper chose (κ, λ, τ) per ε by a non-private grid search with CV over Table 1's grid; LazyBB-stumps "
      "uses those values here. PrivateGridSearch chooses inside the budget from the same grid; below, the median "
      f"of its {reps} choices (one per repetition or fold) and all of them (`table8_10_hyperparameters.csv`). "
      "The number of candidates each search tried (K) is recorded in the per-fit table for the curator only: "
      "the selection theorem needs K to stay secret, so it is not published here.")
    w()
    for paper in PAPER_DATASETS:
        part = hyper[hyper["dataset"] == paper]
        rows = []
        for rec in part.itertuples(index=False):
            if not rec.private_choices:
                continue
            rows.append({"ε": f"{rec.epsilon:g}",
                         "paper κ, λ, τ": f"{rec.paper_density:g}, {rec.paper_learning_rate:g}, {rec.paper_n_rounds}",
                         "private: median κ, λ, τ": f"{rec.private_density_median:g}, "
                                                    f"{rec.private_learning_rate_median:g}, "
                                                    f"{rec.private_n_rounds_median:g}",
                         "private τ chosen": rec.private_n_rounds_values})
        w(f"**{paper}** ({SETTINGS_TABLE[paper]})")
        w()
        w.table(rows)
    w(hyper_discussion(hyper, fig3_choice, plan))
    w()


def _tuned_trees_lr(w, choices, pick) -> None:
    """Our non-private tuning of the trees and DP-LR (the paper reports none)."""
    w("**Our non-private tuning of LazyBB-trees and DP-LR** (the paper reports no chosen values for them); "
      "most frequent choice per ε over datasets and folds (all: `tuned_trees_lr.csv`):")
    w()
    rows = []
    for fam in ("LazyBB-trees", "DP-LR"):
        part = choices[choices["family"] == fam]
        for paper, spec in PAPER_DATASETS.items():
            d = part[part["dataset"] == spec.name]
            rec = {"method": fam, "dataset": paper}
            for eps in pick:
                c = at_epsilon(d, eps)["chosen"]
                rec[f"ε={eps:g}"] = c.mode().iloc[0].replace("trees ", "").replace("DP-LR ", "") if len(c) else ""
            rows.append(rec)
    w.table(rows)


def _fig1(w, fig1) -> None:
    """Figure 1: advantage per round."""
    w.heading("Figure 1: advantage per round and margins at ε = 1 (Adult)")
    w.figure("Figure 1", "fig1_advantage")
    rows = []
    for rec in fig1.itertuples(index=False):
        rows.append({"setting": rec.setting, "runs": rec.runs,
                     "advantage, first 10 rounds": f"{rec.mean_advantage_first_10:.4f}",
                     "advantage, last 10 rounds": f"{rec.mean_advantage_last_10:.4f}",
                     "best 1-Rule's, last 10": f"{rec.mean_best_1rule_advantage_last_10:.4f}",
                     "first round < γ = 0.05": int_or(rec.first_round_below_gamma),
                     "first round ≤ 0": int_or(rec.first_round_at_or_below_0),
                     "train margin < 0": f"{rec.train_margin_negative:.3f}",
                     "test accuracy": f"{rec.test_accuracy:.4f}"})
    w.table(rows)
    w("Advantage of round t: 1/2 − err_{p_t}(h_t), the released 1-Rule's weighted error under the normalised "
      "κ-dense measure p_t it was chosen on (10-round moving average for the \"first round\" columns). "
      "**The model exposes no per-round information**, so the figure replays the measure from the fitted "
      "committee and the training data (`advantage_trace`): this reads the private data and is the curator's "
      "analysis for the figure, not a release. \"Best 1-Rule\" is the largest advantage any 1-Rule has under "
      "the same p_t (what a non-private weak learner would reach). Margins: y·Σ_t h_t(x)/τ, pooled over runs.")
    w()
    w(fig1_discussion(fig1))
    w()


def _fig23(w, plan, f23, fig3_choice, pick) -> None:
    """Figures 2-3: pure vs approximate DP."""
    w.heading("Figures 2-3: pure vs approximate DP (δ = 1e-5) on Adult")
    w.figure("Figures 2-3", "fig2_3_pure_vs_approx")
    adult = PAPER_DATASETS["Adult"].name
    rows = []
    for m in ("Fig. 2 δ=0", "Fig. 2 δ=1e-05", "Fig. 3 δ=0", "Fig. 3 δ=1e-05"):
        rec = {"curve": m}
        for e in pick:
            rec[f"ε={e:g}"] = cell_pm(f23, adult, m, e)
        rows.append(rec)
    w.table(rows)
    w("Figure 2: κ = 1/4, λ = 1/4, τ = 99 at every ε. Figure 3: per-ε settings chosen (non-privately, as the "
      f"paper did) on a validation part of Adult's training part ({plan.fig23_val_seeds} validation split"
      f"{'s' if plan.fig23_val_seeds > 1 else ''}) from the grid {grid_text(plan.fig23_grid)} "
      f"({len(grid_points(plan.fig23_grid))} points, a subset of Table 1's), separately for δ = 0 and δ = 1e-5; "
      "their choices are in `fig3_selected.csv`. With δ > 0, `SmoothBoostClassifier` uses advanced composition "
      "(Dwork-Rothblum-Vadhan) when it gives each round more budget than ε/τ.")
    w()
    w(fig23_discussion(f23, plan, fig3_choice))
    w()


def _differences(w, plan) -> None:
    """Where and why we differ from the paper (:data:`plan.DIFFERENCES`)."""
    w.heading("Where and why we differ from the paper")
    for i, text in enumerate(DIFFERENCES, 1):
        w(f"{i}. " + text.replace("{reps}", str(plan.n_seeds)))
    w()


def _speed(w, plan, timings, main, bagging=None) -> None:
    """Speed of every part, and the cells that failed."""
    w.heading("Speed")
    sweeps = (("tuning", "tuning of trees and DP-LR (validation)"), ("table2", "Table 2 sweep"),
              ("fig3_selection", "Figure 3 selection (validation)"), ("fig2_3", "Figures 2-3 sweep"),
              ("codrna_fine", "Cod-RNA finer encoding"), ("bagging", "DP-Bag and subsample-and-aggregate"),
              ("encodings", "paper encodings"), ("mushroom10", "Mushroom at Table 10"),
              ("mushroom_grid", "Mushroom grid (first 5 folds)"))
    rows = speed_rows(timings, sweeps, (("fig1", "Figure 1", plan.fig1_runs * 2),), fps_digits=1)
    total = sum(float(r["seconds"]) for r in rows)
    w(f"All parts, as run (seconds summed over resumed runs): {total / 60:.1f} min on {timings.get('n_jobs')} "
      f"worker processes; wall time of the last run of the command: {timings.get('total_seconds', 0) / 60:.1f} min. "
      "A \"fit\" of a private-tuning cell is a whole PrivateGridSearch (a geometric number of candidates).")
    w()
    w.table(rows)
    w(error_line(main if bagging is None else pd.concat([main, bagging["main"]], ignore_index=True)))
    w()
