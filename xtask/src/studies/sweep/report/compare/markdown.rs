//! `compare.md`: the runs, the method (over sessions with its multiplicity correction, or within
//! one session, and where the thresholds came from), the table with each run's own ratios beside
//! the times, the tallies and the points not compared.

use std::fmt::Write;

use super::judge::{Basis, ComparedPoint, shown_interval, tally};
use super::relative::{Reading, RelativeChange};
use super::verdict::{DEFAULT_QUESTION_PERCENT, Detectable, ThresholdSource, Verdict};
use super::{CalibrationKind, Comparison, Gate, RunRef, ThresholdChoice};
use crate::base::numbers::num;

fn run_line(which: &str, run: &RunRef) -> String {
    format!(
        "- {which}: `{}` (run {}, {}, profile {}, commit `{}`{}, {})\n",
        run.dir.display(),
        run.id,
        run.target,
        run.profile,
        run.commit.short(12),
        if run.dirty { " dirty" } else { "" },
        run.status
    )
}

/// The paragraph on the points judged over sessions.
fn over_sessions(c: &Comparison) -> String {
    let threshold = match &c.threshold {
        ThresholdChoice::Given { percent } => format!(
            "{percent}% for every point (`--threshold`): `slower` above {}, `faster` below {}",
            ratio(1.0 + percent / 100.0),
            ratio(1.0 / (1.0 + percent / 100.0))
        ),
        ThresholdChoice::Calibrated {
            file,
            kind: CalibrationKind::BetweenRuns,
            moves,
            ..
        } => format!(
            "each point's noise floor as calibrated between runs in `{}` (`cargo xtask calibrate \
             --between`: two complete runs of this design compared as these are, with nothing \
             changed; each point's floor is its own interval's half-width widened by the \
             variance between runs that calibration measured), or the pair's own noise floor \
             where the calibration lacks the point{}",
            file.display(),
            match moves {
                Some((largest, most)) => format!(
                    ". Between runs, a point moved by up to {} with nothing changed ({} of \
                     them within {})",
                    percent(*largest),
                    "95%",
                    percent(*most)
                ),
                None => String::new(),
            }
        ),
        ThresholdChoice::Calibrated { file, .. } => format!(
            "each point's noise floor as calibrated in `{}` (`cargo xtask calibrate`: the \
             smallest change two interleaved halves of one run could tell apart; within one run, \
             so it sees none of the variance between runs), or the pair's own noise floor where \
             the calibration lacks the point",
            file.display()
        ),
        ThresholdChoice::NoiseFloor => "each point's own noise floor (the half-width of its \
             interval, as a factor), which every discovery passes, so the verdict is the \
             discovery alone: no calibration of this experiment, profile and target was found \
             under reports/ (`cargo xtask calibrate` makes one) and no `--threshold` was given"
            .to_owned(),
    };
    format!(
        "**Over sessions** ({} points): each session's value at a point is the median of its \
         repeats; b ÷ a is the ratio of the two runs' geometric means over sessions, with its \
         {:.0}% interval and p-value from Welch's t on the logarithms of the sessions' values, so \
         both include the variance between sessions, and so between runs. The verdicts are held \
         to a false discovery rate of {:.0}% by Benjamini–Hochberg over these points (of the \
         points called changed, at most that share are expected to be false alarms; with no \
         change at all, that is the chance of any alarm): a point is `slower` or `faster` only \
         when it is a discovery and b ÷ a lies beyond its threshold (`changed, within the \
         threshold` otherwise). Threshold: {threshold}. A verdict over sessions needs {} \
         sessions with a time in each run.\n",
        c.on(Basis::BetweenSessions),
        c.confidence * 100.0,
        c.false_discovery_rate * 100.0,
        c.min_sessions
    )
}

/// The paragraph on the points judged within one session.
fn within_one_session(c: &Comparison) -> String {
    format!(
        "**Within one session** ({} points): a run has a single session there, so the verdict \
         cannot include the variance between runs. It falls back to the rule compare had before \
         sessions: each run's median with its order-statistic interval at the square root of \
         {:.0}%, divided (a lower bound of its coverage in `compare.json`); `slower` when the \
         whole interval is above the threshold, `faster` when it is below its inverse; no \
         multiplicity correction. Threshold: {}. A verdict needs {} successful repeats in each \
         run. Two runs of one commit judged this way called 8 of 26 points slower: run two \
         sessions or more (`--sessions`) for verdicts to rely on.\n",
        c.on(Basis::WithinOneSession),
        c.confidence * 100.0,
        match &c.threshold {
            ThresholdChoice::Given { percent } => format!("{percent}% (`--threshold`)"),
            ThresholdChoice::Calibrated { file, .. } => format!(
                "each point's calibrated noise floor (`{}`), else 5%",
                file.display()
            ),
            ThresholdChoice::NoiseFloor => "5% (no calibration found)".to_owned(),
        },
        c.min_repeats
    )
}

/// A factor as the percentage it moves by: 1.083 → "8.3%".
fn percent(factor: f64) -> String {
    format!("{:.1}%", (factor - 1.0) * 100.0)
}

/// A ratio to two decimals.
fn ratio(r: f64) -> String {
    format!("{r:.2}")
}

fn side_cell(p: &ComparedPoint, side: &super::Side) -> String {
    match side.ms_per_1000_rows {
        Some(ms) if side.sessions >= 2 => {
            format!("{} (n={}, {} sessions)", num(ms), side.n, side.sessions)
        }
        Some(ms) => format!("{} (n={})", num(ms), side.n),
        None if p.basis == Basis::NoRatio || side.n == 0 => {
            format!("– ({} refused, {} errors)", side.refused, side.errors)
        }
        None => "–".into(),
    }
}

fn ratio_cell(p: &ComparedPoint) -> String {
    match (p.ratio, shown_interval(p)) {
        (Some(r), Some((lo, hi))) => format!("{} ({}–{})", ratio(r), ratio(lo), ratio(hi)),
        (Some(r), None) => ratio(r),
        _ => "–".into(),
    }
}

fn threshold_cell(p: &ComparedPoint) -> String {
    match p.threshold {
        Some(t) if p.basis != Basis::NoRatio => {
            let source = match t.source {
                ThresholdSource::Given => String::new(),
                other => format!(" {}", other.text()),
            };
            format!("{}{source}", ratio(t.factor))
        }
        _ => "–".into(),
    }
}

/// The verdict, its p-value over sessions, and its basis when the table mixes both.
fn verdict_cell(p: &ComparedPoint, mixed: bool) -> String {
    let text = p.verdict.text();
    match (p.basis, p.p_value) {
        (Basis::BetweenSessions, Some(pv)) => format!("{text} (p={pv:.3})"),
        (Basis::WithinOneSession, _) if mixed => format!("{text} (one session)"),
        _ => text,
    }
}

fn relative_cell(r: Option<RelativeChange>) -> String {
    match r {
        Some(r) => format!(
            "{} → {}: {} (detects {})",
            ratio(r.a),
            ratio(r.b),
            match r.verdict {
                Verdict::NoDetectableChange | Verdict::IntervalTooWide => "unchanged".to_owned(),
                other => other.text(),
            },
            ratio(r.detectable.among)
        ),
        None => "–".into(),
    }
}

fn detectable_cell(d: Option<Detectable>) -> String {
    match d {
        Some(d) => format!("{} / {}", ratio(d.alone), ratio(d.among)),
        None => "–".into(),
    }
}

/// The median and range of `factors` (finite ones), as "1.25 (1.10–1.90)".
fn spread(factors: &[f64]) -> Option<String> {
    let mut f: Vec<f64> = factors.iter().copied().filter(|x| x.is_finite()).collect();
    f.sort_by(f64::total_cmp);
    let median = crate::stats::median(&f)?;
    Some(format!(
        "{} ({}–{})",
        ratio(median),
        ratio(f[0]),
        ratio(f[f.len() - 1])
    ))
}

/// The paragraph on what the comparison could have detected, where it judged over sessions.
fn detectable(c: &Comparison) -> String {
    let times: Vec<Detectable> = c.points.iter().filter_map(|p| p.detectable).collect();
    let vs_bound: Vec<Detectable> = c
        .points
        .iter()
        .filter_map(|p| p.relative.vs_bound.map(|r| r.detectable))
        .collect();
    let vs_baseline: Vec<Detectable> = c
        .points
        .iter()
        .filter_map(|p| p.relative.vs_baseline.map(|r| r.detectable))
        .collect();
    let Some(alone) = spread(&times.iter().map(|d| d.alone).collect::<Vec<_>>()) else {
        return String::new();
    };
    let among = spread(&times.iter().map(|d| d.among).collect::<Vec<_>>()).unwrap_or_default();
    let variance = match &c.threshold {
        ThresholdChoice::Calibrated {
            between_runs_sd, ..
        } if !between_runs_sd.is_empty() => format!(
            "from each point's own variance between sessions and, for the times, the variance \
             between runs its calibration measured, se² + 2σ² (σ {})",
            super::sd_per_target(between_runs_sd)
        ),
        _ => "from each point's own variance between sessions".to_owned(),
    };
    let mut out = format!(
        "**What these runs could detect** (80% power, {variance}; the table's `detectable` \
         column, alone / among): the time at one point, judged alone at 5%, {alone} (median \
         over {} points, and range); judged among them as Benjamini–Hochberg judges a single \
         change (at 5% ÷ {}), {among}.",
        times.len(),
        times.len()
    );
    for (name, d) in [
        ("strategy ÷ bound", &vs_bound),
        ("target ÷ bare SQLite", &vs_baseline),
    ] {
        if let Some(among) = spread(&d.iter().map(|d| d.among).collect::<Vec<_>>()) {
            write!(out, " Each point's {name}, among the {}: {among}.", d.len()).unwrap();
        }
    }
    let question = match c.threshold {
        ThresholdChoice::Given { percent } => format!("{percent}% (`--threshold`)"),
        _ => format!("{DEFAULT_QUESTION_PERCENT}% (`--threshold` sets it)"),
    };
    writeln!(
        out,
        " A change smaller than these can pass unseen; a point that saw none and could not have \
         seen a change of {question} among them says `cannot tell at this precision`, not `no \
         detectable change`."
    )
    .unwrap();
    out
}

/// The paragraph on the own ratios, when some were judged.
const OWN_RATIOS: &str = "**Own ratios**, where the runner's speed cancels: each run's strategy ÷ bound at the \
         point (paired repeat by repeat within each session) and target ÷ bare SQLite (session \
         by session), a's → b's, each kind judged like the times over sessions (Welch's t, \
         Benjamini–Hochberg over the points, then the threshold: `--threshold` when given, \
         else its own noise floor). The last column says which changed: the time alone is the \
         machine (its speed or load), not what is measured.\n\n";

/// The sentence on the own ratios, when none could be judged.
const NO_OWN_RATIOS: &str = "**Own ratios** (strategy ÷ bound, target ÷ bare SQLite, where the \
     runner's speed cancels) are judged over sessions only: no point has two sessions or more of \
     them in both runs.\n\n";

/// The paragraph on what the exit status judged.
fn gate(c: &Comparison) -> String {
    let judged = match (c.gate, c.gated_on()) {
        (Gate::Ratios, Gate::Ratios) => "each run's own ratios (`--gate ratios`, the default): a \
             point fails when its strategy ÷ bound or its target ÷ bare SQLite got slower, or when \
             it no longer succeeds. A time that moved while the point's own ratios held is the \
             runner's speed, reported and not failed; so is a time at a point with no own ratio \
             (bound on bare SQLite). A slowdown that moves every strategy and the baseline alike \
             cannot be told from a slower machine this way: `--gate time` judges the times, for \
             two runs on one quiet machine"
            .to_owned(),
        (Gate::Ratios, Gate::Time) => "the times: the ratio gate (the default) was asked for, \
             but no point has an own ratio judged over two sessions or more in both runs, so the \
             times are gated instead; they move with the runner's speed"
            .to_owned(),
        (Gate::Time, _) => "the times (`--gate time`): a point fails when its time got slower \
             or it no longer succeeds, so a slower or busier machine fails it too"
            .to_owned(),
    };
    format!(
        "**Exit status** judged {judged}. {} point(s) fail it{}.\n",
        c.regressions(),
        match c.slower_in_time_only() {
            0 => String::new(),
            n => format!("; {n} more are slower in time alone, not failed"),
        }
    )
}

/// `compare.md`.
pub fn markdown(c: &Comparison) -> String {
    let mut out = format!("# compare: {}\n\n", c.experiment);
    out.push_str(&run_line("a", &c.a));
    out.push_str(&run_line("b", &c.b));
    out.push_str(
        "\nb ÷ a of the time per 1,000 rows on the outside clock less the target's preparation, \
         at each point both runs measured (same target, series, strategy and parameters).\n\n",
    );
    if c.on(Basis::BetweenSessions) > 0 || c.on(Basis::WithinOneSession) == 0 {
        writeln!(out, "{}", over_sessions(c)).unwrap();
    }
    if c.on(Basis::WithinOneSession) > 0 {
        writeln!(out, "{}", within_one_session(c)).unwrap();
    }
    let relative = c
        .points
        .iter()
        .any(|p| p.relative.reading != Reading::NotJudged);
    let mixed = c.on(Basis::BetweenSessions) > 0 && c.on(Basis::WithinOneSession) > 0;
    out.push_str(if relative { OWN_RATIOS } else { NO_OWN_RATIOS });
    writeln!(out, "{}", gate(c)).unwrap();
    let detectable_paragraph = detectable(c);
    if !detectable_paragraph.is_empty() {
        writeln!(out, "{detectable_paragraph}").unwrap();
    }
    for note in &c.notes {
        writeln!(out, "**Note:** {note}.\n").unwrap();
    }
    let labelled = c.points.iter().any(|p| !p.key.label.is_empty());
    let mut header = vec!["target", "strategy"];
    if labelled {
        header.push("series");
    }
    header.extend([
        c.x_axis.name(),
        "a ms/1k rows",
        "b ms/1k rows",
        "b ÷ a (95% interval)",
        "threshold",
        "detectable",
        "verdict",
    ]);
    if relative {
        header.extend(["÷ bound", "÷ sqlite", "which changed"]);
    }
    writeln!(out, "| {} |", header.join(" | ")).unwrap();
    writeln!(out, "|{}", " --- |".repeat(header.len())).unwrap();
    for p in &c.points {
        let mut cells = vec![p.key.target.to_string(), p.key.strategy.to_string()];
        if labelled {
            cells.push(p.key.label.clone());
        }
        cells.extend([
            c.x_axis.format(p.x),
            side_cell(p, &p.a),
            side_cell(p, &p.b),
            ratio_cell(p),
            threshold_cell(p),
            detectable_cell(p.detectable),
            verdict_cell(p, mixed),
        ]);
        if relative {
            cells.extend([
                relative_cell(p.relative.vs_bound),
                relative_cell(p.relative.vs_baseline),
                p.relative.reading.text().to_owned(),
            ]);
        }
        writeln!(out, "| {} |", cells.join(" | ")).unwrap();
    }
    let tally: Vec<String> = tally(&c.points)
        .into_iter()
        .map(|(v, n)| format!("{n} {}", v.text()))
        .collect();
    writeln!(
        out,
        "\n{} points compared: {}.",
        c.points.len(),
        if tally.is_empty() {
            "none".to_owned()
        } else {
            tally.join(", ")
        }
    )
    .unwrap();
    let reading = |r: Reading| c.points.iter().filter(|p| p.relative.reading == r).count();
    if relative {
        writeln!(
            out,
            "Time and own ratio both changed at {}, the time alone (the machine) at {}, an own \
             ratio alone at {}, neither at {} points.",
            reading(Reading::Measured),
            reading(Reading::Machine),
            reading(Reading::RatioOnly),
            reading(Reading::Unchanged)
        )
        .unwrap();
    }
    for (which, keys) in [("a", &c.only_in_a), ("b", &c.only_in_b)] {
        if !keys.is_empty() {
            writeln!(out, "\nOnly in run {which}, not compared:\n").unwrap();
            for key in keys {
                writeln!(out, "- {}", key.describe()).unwrap();
            }
        }
    }
    out
}
