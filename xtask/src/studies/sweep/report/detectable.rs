//! What a sweep run could have detected, a paragraph of every summary.md: from the spread
//! between its sessions, the smallest change at one point (a factor) that comparing it with a
//! replicate of the same design catches with 80% power, judged alone and judged among all its
//! points as Benjamini–Hochberg judges a single change; for the times, strategy ÷ bound and
//! target ÷ bare SQLite. Each point's own figure is summary.csv's `detectable`.

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

/// One target's measure: "the time per 1,000 rows: 1.12 (…) alone, 1.30 (…) among its 56".
fn measure_line(rows: &[&SummaryRow], words: &str) -> Option<String> {
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
    let alone = spread(&mut alone)?;
    let among = spread(&mut among)?;
    Some(format!(
        "{words}, {alone} judged alone, {among} among its {m} points"
    ))
}

/// The paragraph, from summary.csv's rows; empty where no point has an interval over
/// sessions (a run of one session can say nothing of what another would measure).
pub fn paragraph(summary: &[SummaryRow]) -> String {
    let mut targets: Vec<TargetKind> = summary.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    let mut lines = Vec::new();
    for target in targets {
        let parts: Vec<String> = MEASURES
            .iter()
            .filter_map(|(measure, words)| {
                let rows: Vec<&SummaryRow> = summary
                    .iter()
                    .filter(|r| {
                        r.target == target
                            && r.measure == *measure
                            && r.ci_method == Some(Method::BetweenSessions.name())
                    })
                    .collect();
                measure_line(&rows, words)
            })
            .collect();
        if !parts.is_empty() {
            lines.push(format!("on `{target}`: {}", parts.join("; ")));
        }
    }
    if lines.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "**What this run could detect.** Compared with a replicate of the same design, a change \
         at one point (a factor: 1.20 is 20%) is caught with 80% power when it is at least, \
         from the spread between this run's sessions (median over the points, and range): ",
    );
    write!(out, "{}.", lines.join("; ")).unwrap();
    out.push_str(
        " Judged alone is one point tested at 5%; among its points is one change among all of \
         them as compare's Benjamini–Hochberg judges it (at 5% ÷ the number of points). A \
         smaller change can pass unseen between two such runs: \"no detectable change\" below \
         these sizes is not evidence of none. These count the spread between this run's \
         sessions only: two runs also differ by what varies from run to run, which one run \
         cannot see (`cargo xtask calibrate --between` measures it from a second, and compare \
         adds it to each point's figure), so a replicate needs at least these sizes. Each \
         point's own figure is summary.csv's `detectable` (judged alone).\n",
    );
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
        assert!(
            text.contains("on `sqlite`: the time per 1,000 rows, "),
            "{text}"
        );
        assert!(text.contains(" among its 25 points"), "{text}");
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
