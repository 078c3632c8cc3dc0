//! What a sweep run could have detected, a short table in every summary.md and on its page: from
//! the spread between its sessions, the smallest change at one point (a factor) that comparing
//! it with a replicate of the same design catches with 80% power, a row per comparison (the
//! times, strategy ÷ bound, target ÷ baseline), judged alone and judged among all its points as
//! Benjamini–Hochberg judges a single change. Each point's own figure is summary.csv's
//! `detectable`.

use std::fmt::Write as _;

use super::points::SummaryRow;
use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::stats::power::detectable_from_interval;
use crate::stats::sessions::FALSE_DISCOVERY_RATE;
use crate::stats::{Interval, Method, median};

/// The measures the paragraph reads, with the words it names them by.
const MEASURES: [(&str, &str); 4] = [
    ("ms_per_1000_rows", "the time per 1,000 rows"),
    ("ratio_to_bound", "literal ÷ bound"),
    ("ratio_to_sqlite", "÷ bare SQLite"),
    ("ratio_to_do", "÷ the Durable Object"),
];

/// "1.25 (1.10–1.90)": the median and range of `factors`.
fn spread(factors: &mut [f64]) -> Option<String> {
    factors.sort_by(f64::total_cmp);
    let m = median(factors)?;
    Some(format!(
        "{} ({}–{})",
        num(m),
        num(factors[0]),
        num(factors[factors.len() - 1])
    ))
}

/// One row of the table: a comparison on a target, what a replicate catches there.
#[derive(Debug, Clone, PartialEq)]
pub struct DetectableRow {
    pub target: TargetKind,
    /// What is compared, in the words of [`MEASURES`] ("literal ÷ bound").
    pub comparison: &'static str,
    /// Judged alone, one point tested at 5%: the median over the points and the range.
    pub alone: String,
    /// Judged among all the comparison's points as Benjamini–Hochberg judges one change among
    /// them (at 5% ÷ the number of points): the median and range.
    pub among: String,
    /// The comparison's points with an interval over sessions.
    pub points: usize,
}

/// What the table is, before it: its title and what its figures are.
pub const LEAD: &str = "Compared with a replicate of the same design, a change at one point (a \
     factor: 1.20 is 20%) is caught with 80% power when it is at least, from the spread between \
     this run's sessions (median over the points, and range):";

/// The correction the column "among all points" names.
pub const CORRECTION: &str = "Benjamini–Hochberg, 5% ÷ points";

/// What the table leaves out, after it.
pub const NOTE: &str = "A smaller change can pass unseen between two such runs: \"no detectable \
     change\" below these sizes is not evidence of none. These count the spread between this \
     run's sessions only: two runs also differ by what varies from run to run, which one run \
     cannot see (`cargo xtask calibrate --between` measures it from a second run or a replicate \
     set, and compare adds it to each point's figure), so a replicate needs at least these \
     sizes. Each point's own figure is summary.csv's `detectable` (judged alone).";

/// One target's comparison, from its points' rows; `None` without a figure.
fn row(
    target: TargetKind,
    rows: &[&SummaryRow],
    comparison: &'static str,
) -> Option<DetectableRow> {
    let m = rows.len();
    let mut alone: Vec<f64> = rows.iter().filter_map(|r| r.detectable).collect();
    let mut among: Vec<f64> = rows
        .iter()
        .filter_map(|r| {
            let ci = Interval {
                low: r.ci_low?,
                high: r.ci_high?,
                coverage: r.ci_coverage?,
                method: Method::BetweenSessions,
            };
            detectable_from_interval(r.median?, ci, r.sessions, FALSE_DISCOVERY_RATE / m as f64)
        })
        .collect();
    Some(DetectableRow {
        target,
        comparison,
        alone: spread(&mut alone)?,
        among: spread(&mut among)?,
        points: m,
    })
}

/// The table's rows, from summary.csv's rows: per target, each comparison with an interval
/// over sessions; empty where none has one (a run of one session can say nothing of what
/// another would measure).
pub fn rows(summary: &[SummaryRow]) -> Vec<DetectableRow> {
    let mut targets: Vec<TargetKind> = summary.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    let mut out = Vec::new();
    for target in targets {
        for (measure, words) in MEASURES {
            let of: Vec<&SummaryRow> = summary
                .iter()
                .filter(|r| {
                    r.target == target
                        && r.measure == measure
                        && r.ci_method == Some(Method::BetweenSessions.name())
                })
                .collect();
            out.extend(row(target, &of, words));
        }
    }
    out
}

/// The section of summary.md: [`LEAD`], the table, [`NOTE`]; empty without a row.
pub fn paragraph(summary: &[SummaryRow]) -> String {
    let rows = rows(summary);
    if rows.is_empty() {
        return String::new();
    }
    let mut out = format!("**What this run could detect.** {LEAD}\n\n");
    writeln!(
        out,
        "| comparison | judged alone (5%) | among all points ({CORRECTION}) |\n| --- | --- | --- |"
    )
    .unwrap();
    for r in &rows {
        writeln!(
            out,
            "| `{}`: {} ({} points) | {} | {} |",
            r.target, r.comparison, r.points, r.alone, r.among
        )
        .unwrap();
    }
    writeln!(out, "\n{NOTE}").unwrap();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::Axis;
    use crate::studies::sweep::report::compare::synthetic::Shape;
    use crate::studies::sweep::report::points::summary_rows;

    #[test]
    fn a_run_of_sessions_states_what_a_replicate_would_catch_and_one_session_says_nothing() {
        let mut rng = fastrand::Rng::with_seed(2);
        let eight = Shape::sqlite(8).run(&mut rng, |_| 1.0);
        let summary = summary_rows(&eight, Axis::Columns, None);
        let text = paragraph(&summary);
        assert!(
            text.starts_with("**What this run could detect.**"),
            "{text}"
        );
        // A table: a row per comparison, judged alone and among all points, the correction
        // named.
        assert!(
            text.contains(
                "| comparison | judged alone (5%) | among all points (Benjamini–Hochberg, 5% ÷ \
                 points) |"
            ),
            "{text}"
        );
        assert!(
            text.contains("| `sqlite`: the time per 1,000 rows (25 points) | "),
            "{text}"
        );
        let table = rows(&summary);
        assert!(table.len() >= 2, "{table:?}");
        assert!(table.iter().all(|r| r.points > 0));
        // It says what it leaves out: the variance between runs.
        assert!(text.contains("which one run cannot see"), "{text}");
        // Each point's own figure, larger judged among the points than alone.
        let times: Vec<&SummaryRow> = summary
            .iter()
            .filter(|r| r.measure == "ms_per_1000_rows")
            .collect();
        assert_eq!(times.len(), 25);
        assert!(times.iter().all(|r| r.detectable.is_some_and(|d| d > 1.0)));
        let one = Shape::sqlite(1).run(&mut rng, |_| 1.0);
        assert_eq!(paragraph(&summary_rows(&one, Axis::Columns, None)), "");
    }
}
