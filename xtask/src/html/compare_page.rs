//! `compare.html`, beside compare.md: the two runs, how many points got slower, faster or stayed
//! as they were at a glance, then each point's b ÷ a with its interval drawn against its
//! threshold ([`super::dots::strip`]), from the [`Comparison`] that compare.md and compare.json
//! are written from.

use std::path::{Path, PathBuf};

use anyhow::Result;
use maud::{Markup, html};

use super::dots::{StripScale, strip};
use crate::base::numbers::num;
use crate::paths::relative;
use crate::studies::sweep::report::compare::judge::{shown_interval, tally};
use crate::studies::sweep::report::compare::{
    Basis, CalibrationKind, ComparedPoint, Comparison, Gate, Reading, RunRef, ThresholdChoice,
    Verdict, sd_per_target,
};

/// The file name of the page, beside compare.md.
pub const PAGE: &str = "compare.html";

/// What a verdict says at a glance: `slower`, `faster`, `unchanged`, or `undecided` where the
/// comparison could not judge.
pub fn glance(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Slower | Verdict::NoLongerSucceeds => "slower",
        Verdict::Faster => "faster",
        Verdict::WithinThreshold | Verdict::NoDetectableChange | Verdict::IntervalTooWide => {
            "unchanged"
        }
        Verdict::TooFewRepeats | Verdict::NoTimeInA | Verdict::CannotTell => "undecided",
    }
}

/// Writes `compare.html` in `out` (where compare.md is); returns its path.
pub fn write(c: &Comparison, out: &Path) -> Result<PathBuf> {
    let path = out.join(PAGE);
    super::write(&path, &page(c, out))?;
    Ok(path)
}

/// A run's line: its directory linked (to its page where it has one), id, target, commit.
fn run_line(which: &str, run: &RunRef, out: &Path) -> Markup {
    let page = run.dir.join(super::run_page::PAGE);
    let target = if page.is_file() {
        Some(super::href(&relative(out, &page)))
    } else if run.dir.join("summary.md").is_file() {
        Some(super::href(&relative(out, &run.dir.join("summary.md"))))
    } else {
        None
    };
    html! {
        li {
            strong { (which) } ": "
            @match target {
                Some(href) => a href=(href) { code { (run.id) } },
                None => code { (run.id) },
            }
            " on " (run.target) ", profile " (run.profile) ", commit " code { (run.commit.short(12)) }
            @if run.dirty { " (dirty)" }
            ", " (run.status)
        }
    }
}

/// A side's time, and under it what it was taken over: `33.3`, `n=8, 5 sessions`; or why
/// there is none.
fn side_cell(side: &crate::studies::sweep::report::compare::judge::Side) -> Markup {
    let (value, over) = match side.ms_per_1000_rows {
        Some(ms) if side.sessions >= 2 => {
            (num(ms), format!("n={}, {} sessions", side.n, side.sessions))
        }
        Some(ms) => (num(ms), format!("n={}", side.n)),
        None => (
            "–".to_owned(),
            format!("{} refused, {} errors", side.refused, side.errors),
        ),
    };
    html! { (value) small { (over) } }
}

/// What the exit status was judged on, and how many points fail it.
fn gate(c: &Comparison) -> Markup {
    let on = match (c.gate, c.gated_on()) {
        (Gate::Ratios, Gate::Ratios) => {
            "each run's own ratios (strategy ÷ bound, target ÷ bare SQLite), which the runner's \
             speed cannot move; a time that moved alone is the machine"
        }
        (Gate::Ratios, Gate::Time) => {
            "the times: no point had an own ratio to judge over two sessions in both runs"
        }
        (Gate::Time, _) => "the times (--gate time), which a slower machine moves too",
    };
    html! {
        p #gate {
            strong { "Exit status" } " judged on " (on) ": " (c.regressions()) " point(s) fail it"
            @if c.slower_in_time_only() > 0 {
                "; " (c.slower_in_time_only()) " more are slower in time alone, not failed"
            }
            ". The detectable column is the smallest change each point catches with 80% power, \
             judged alone / among all points; a point that could not have seen the change asked \
             about is undecided (cannot tell at this precision)."
        }
    }
}

/// How the points were judged, in a paragraph.
fn method(c: &Comparison) -> Markup {
    let threshold = match &c.threshold {
        ThresholdChoice::Given { percent } => format!("{percent}% for every point (--threshold)"),
        ThresholdChoice::Calibrated {
            file,
            kind: CalibrationKind::BetweenRuns,
            between_runs_sd,
            ..
        } => format!(
            "each point's noise floor as calibrated between two runs in {} (it holds the \
             variance between runs{})",
            file.display(),
            if between_runs_sd.is_empty() {
                String::new()
            } else {
                format!(
                    ", σ {}, which each point's detectable includes",
                    sd_per_target(between_runs_sd)
                )
            }
        ),
        ThresholdChoice::Calibrated { file, .. } => format!(
            "each point's noise floor as calibrated within one run in {} (halves of its \
             sessions: it sees none of the variance between runs)",
            file.display()
        ),
        ThresholdChoice::NoiseFloor => {
            "each point's own noise floor (no calibration was found)".to_owned()
        }
    };
    html! {
        p {
            "b ÷ a of the time per 1,000 rows (outside clock less the target's preparation) at \
             each point both runs measured. "
            (c.on(Basis::BetweenSessions)) " points judged over sessions (Welch's t on the \
             logarithms of the sessions' values, "
            (format!("{:.0}", c.confidence * 100.0)) "% intervals, Benjamini–Hochberg at a false \
             discovery rate of " (format!("{:.0}", c.false_discovery_rate * 100.0)) "%), "
            (c.on(Basis::WithinOneSession)) " within one session (which cannot include the \
             variance between runs). Threshold: " (threshold) ". The grey band is the threshold \
             either side of 1; a point counts as slower or faster only when it is a discovery \
             beyond it. The whole method is in "
            a href="compare.md" { "compare.md" } "; every figure in " a href="compare.json" { "compare.json" } "."
        }
    }
}

/// The page.
pub fn page(c: &Comparison, out: &Path) -> String {
    let counts = |which: &str| {
        c.points
            .iter()
            .filter(|p| glance(p.verdict) == which)
            .count()
    };
    let values = c.points.iter().flat_map(|p| {
        let interval = shown_interval(p);
        p.ratio
            .into_iter()
            .chain(interval.into_iter().flat_map(|(l, h)| [l, h]))
            .chain(
                p.threshold
                    .into_iter()
                    .flat_map(|t| [t.factor, 1.0 / t.factor]),
            )
    });
    let scale = StripScale::over(values);
    let labelled = c.points.iter().any(|p| !p.key.label.is_empty());
    let relative = c
        .points
        .iter()
        .any(|p| p.relative.reading != Reading::NotJudged);
    let body = html! {
        h1 { "compare: " (c.experiment) }
        ul {
            (run_line("a", &c.a, out))
            (run_line("b", &c.b, out))
        }
        div.tally #glance {
            @for which in ["slower", "faster", "unchanged", "undecided"] {
                span { span class=(format!("badge {which}")) { (counts(which)) } " " (which) }
            }
            span { "of " (c.points.len()) " points" }
        }
        p {
            @for (i, (verdict, n)) in tally(&c.points).into_iter().enumerate() {
                @if i > 0 { ", " }
                (n) " " (verdict.text())
            }
            "."
        }
        (method(c))
        (gate(c))
        @for note in &c.notes { p.warn { strong { "Note: " } (note) "." } }
        div.wide {
            table #points {
                thead { tr {
                    th { "target" } th { "strategy" }
                    @if labelled { th { "series" } }
                    th.num { (c.x_axis.name()) }
                    th.num { "a ms/1k rows" } th.num { "b ms/1k rows" }
                    th { "b ÷ a against the threshold" }
                    th.num { "b ÷ a (interval)" } th.num { "threshold" } th.num { "detectable" }
                    th { "verdict" }
                    @if relative { th { "which changed" } }
                } }
                tbody {
                    @for p in &c.points { (point_row(c, p, scale, labelled, relative)) }
                }
            }
        }
        @for (which, keys) in [("a", &c.only_in_a), ("b", &c.only_in_b)] {
            @if !keys.is_empty() {
                h2 { "Only in run " (which) ", not compared" }
                ul { @for key in keys { li { (key.describe()) } } }
            }
        }
    };
    super::page(&format!("compare: {} · d1bench", c.experiment), body)
}

fn point_row(
    c: &Comparison,
    p: &ComparedPoint,
    scale: StripScale,
    labelled: bool,
    relative: bool,
) -> Markup {
    let class = glance(p.verdict);
    let interval = shown_interval(p);
    let threshold = p
        .threshold
        .filter(|_| p.basis != Basis::NoRatio)
        .map(|t| t.factor);
    html! {
        tr class=(class) {
            td { (p.key.target) } td { (p.key.strategy) }
            @if labelled { td { (p.key.label) } }
            td.num { (c.x_axis.format(p.x)) }
            td.num { (side_cell(&p.a)) } td.num { (side_cell(&p.b)) }
            td.strip { (strip(scale, p.ratio, interval, threshold, class)) }
            td.num {
                @match p.ratio {
                    Some(r) => (super::ratio_with_interval(r, interval)),
                    None => "–",
                }
            }
            td.num {
                @match (threshold, p.threshold) {
                    (Some(t), Some(source)) => { (format!("{t:.2}")) small { (source.source.text()) } },
                    _ => "–",
                }
            }
            td.num {
                @match p.detectable {
                    Some(d) => { (format!("{:.2}", d.alone)) small { (format!("{:.2} among", d.among)) } },
                    None => "–",
                }
            }
            td {
                span class=(format!("badge {class}")) { (class) }
                small {
                    (p.verdict.text())
                    @if let (Basis::BetweenSessions, Some(pv)) = (p.basis, p.p_value) { (format!(" (p={pv:.3})")) }
                }
            }
            @if relative { td { (p.relative.reading.text()) } }
        }
    }
}
