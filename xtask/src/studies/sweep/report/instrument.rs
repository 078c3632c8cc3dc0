//! The instrument's cost, from a sweep run whose sessions were measured by both Workers: per
//! point, the Rust Worker's inside clock ÷ the JavaScript Worker's, with its interval over
//! sessions, whether the instrument moves a finding (literal ÷ bound at a column count), and
//! what each Worker spends making the values JavaScript values before its window
//! (`handover_ms`, the instrument's own cost that no window holds).
//!
//! The unit is the session (a fresh `wrangler dev` and database, the unit that varies between
//! runs): each session's value at a point is the median of its repeats' `inside_ms` (records
//! marked as warm-up left out), and the two Workers' sessions are compared by Welch's t on the
//! logs ([`sessions::change_between`]), so the interval carries the drift between sessions. The
//! verdicts of all points at once are held to a false discovery rate with Benjamini–Hochberg
//! ([`sessions::benjamini_hochberg`]).

use std::collections::BTreeMap;

use d1bench_core::{Outcome, Strategy};

use crate::base::numbers::num;
use crate::base::{TargetKind, WorkerKind};
use crate::stats::halves::{self, HalvesTest};
use crate::stats::power::Equivalence;
use crate::stats::sessions::{self, Change, FALSE_DISCOVERY_RATE};
use crate::stats::{CONFIDENCE, median};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// One point of the sweep, as the two Workers measured it.
#[derive(Debug, Clone, PartialEq)]
pub struct InstrumentPoint {
    pub strategy: Strategy,
    pub label: String,
    /// The point's value on the sweep's axis.
    pub x: f64,
    /// Sessions that measured it, per Worker.
    pub rust_sessions: usize,
    pub js_sessions: usize,
    /// Rust ÷ JavaScript on the inside clock, with its interval and p-value; `None` without two
    /// sessions of each.
    pub ratio: Option<Change>,
    /// Whether the ratio differs from 1 at the run's false discovery rate, over every point.
    pub differs: bool,
    /// Whether two one-sided tests show it equivalent to 1 within ±5% or ±10%: the claim "the
    /// instrument costs nothing here" needs this, not the absence of `differs`.
    pub equivalence: Option<Equivalence>,
    /// Median `handover_ms` (before the window) of each Worker's probes at the point.
    pub rust_handover_ms: Option<f64>,
    pub js_handover_ms: Option<f64>,
}

/// How much slower than the JavaScript Worker the Rust Worker may be on the inside clock for
/// the instrument to count as not moving a figure: a point whose interval for Rust ÷ JS stays
/// above this is named in summary.md.
pub const TOLERANCE: f64 = 1.05;

impl InstrumentPoint {
    /// Whether the interval shows the Rust Worker more than [`TOLERANCE`] slower; `false`
    /// without an interval.
    pub fn beyond_tolerance(&self) -> bool {
        self.ratio
            .as_ref()
            .is_some_and(|c| c.interval.low > TOLERANCE)
    }
}

/// Each Worker's session values (median `inside_ms` of the session's repeats) per point.
type Sessions = BTreeMap<WorkerKind, BTreeMap<usize, Vec<f64>>>;

/// The probes that count: the local target's, measured by a Worker, done, and not warm-up.
fn counted(row: &ProbeRow) -> Option<WorkerKind> {
    let worker = row.worker?;
    (row.target == TargetKind::Local
        && row.outcome == Outcome::Ok
        && !row.target_failed
        && row.counts())
    .then_some(worker)
}

/// Median `handover_ms` of each Worker's counted probes at each point.
fn handovers(rows: &[ProbeRow], axis: Axis) -> BTreeMap<(Strategy, String, u64, WorkerKind), f64> {
    let mut all: BTreeMap<(Strategy, String, u64, WorkerKind), Vec<f64>> = BTreeMap::new();
    for row in rows {
        let (Some(worker), Some(ms)) = (counted(row), row.handover_ms) else {
            continue;
        };
        all.entry((
            row.strategy,
            row.label.clone(),
            row.at(axis).to_bits(),
            worker,
        ))
        .or_default()
        .push(ms);
    }
    all.into_iter()
        .filter_map(|(key, values)| Some((key, median(&values)?)))
        .collect()
}

fn by_point(rows: &[ProbeRow], axis: Axis) -> BTreeMap<(Strategy, String, u64), Sessions> {
    let mut points: BTreeMap<(Strategy, String, u64), Sessions> = BTreeMap::new();
    for row in rows {
        let Some(worker) = counted(row) else { continue };
        points
            .entry((row.strategy, row.label.clone(), row.at(axis).to_bits()))
            .or_default()
            .entry(worker)
            .or_default()
            .entry(row.session)
            .or_default()
            .push(row.inside_ms);
    }
    points
}

fn session_values(sessions: &Sessions, worker: WorkerKind) -> Vec<f64> {
    sessions
        .get(&worker)
        .map(|s| s.values().filter_map(|v| median(v)).collect())
        .unwrap_or_default()
}

/// The JavaScript Worker the run's Rust Worker was measured against: the first among its rows
/// (a run alternates the Rust Worker with one), the twin when there is none.
pub fn javascript_of(rows: &[ProbeRow]) -> WorkerKind {
    rows.iter()
        .filter_map(|r| r.worker)
        .find(|w| w.takes_statements())
        .unwrap_or(WorkerKind::Js)
}

/// One point both Workers measured: each Worker's session values (the median `inside_ms` of
/// each session's counted repeats), in session order.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerSessions {
    pub strategy: Strategy,
    pub label: String,
    /// The point's value on the sweep's axis.
    pub x: f64,
    pub rust: Vec<f64>,
    /// The JavaScript Worker's ([`javascript_of`]).
    pub js: Vec<f64>,
    /// Rust ÷ JavaScript within each session that ran both Workers side by side
    /// (`--paired-workers`), by session; empty when sessions alternated Workers.
    pub paired: BTreeMap<usize, f64>,
}

impl WorkerSessions {
    /// Rust ÷ JavaScript at `level`: over the sessions' paired ratios when the Workers shared
    /// sessions ([`sessions::change_paired`]), else the two Workers' sessions by Welch's t.
    pub fn change(&self, level: f64) -> Option<Change> {
        match self.paired.is_empty() {
            false => sessions::change_paired(&self.paired_values(), level),
            true => sessions::change_between(&self.js, &self.rust, level),
        }
    }

    /// The paired ratios in session order.
    pub fn paired_values(&self) -> Vec<f64> {
        self.paired.values().copied().collect()
    }
}

/// Rust ÷ JavaScript within each session both Workers measured: the ratio of their medians, by
/// session.
fn paired_ratios(sessions: &Sessions, js_worker: WorkerKind) -> BTreeMap<usize, f64> {
    let (Some(rust), Some(js)) = (sessions.get(&WorkerKind::Rust), sessions.get(&js_worker)) else {
        return BTreeMap::new();
    };
    rust.iter()
        .filter_map(|(session, r)| Some((*session, median(r)? / median(js.get(session)?)?)))
        .collect()
}

/// Every point both Workers measured, with each Worker's session values: what Rust ÷
/// JavaScript is taken over, here and over replicate runs.
pub fn worker_sessions(rows: &[ProbeRow], axis: Axis) -> Vec<WorkerSessions> {
    let js_worker = javascript_of(rows);
    by_point(rows, axis)
        .into_iter()
        .filter(|(_, sessions)| sessions.len() == 2)
        .map(|((strategy, label, x), sessions)| WorkerSessions {
            strategy,
            label,
            x: f64::from_bits(x),
            rust: session_values(&sessions, WorkerKind::Rust),
            js: session_values(&sessions, js_worker),
            paired: paired_ratios(&sessions, js_worker),
        })
        .collect()
}

/// Every point both Workers measured, Rust ÷ JavaScript with its interval over sessions;
/// empty for a run measured by one Worker.
pub fn points(rows: &[ProbeRow], axis: Axis) -> Vec<InstrumentPoint> {
    let js_worker = javascript_of(rows);
    let handovers = handovers(rows, axis);
    let mut points: Vec<InstrumentPoint> = worker_sessions(rows, axis)
        .into_iter()
        .map(|w| {
            let ratio = w.change(CONFIDENCE);
            let equivalence = w
                .change(1.0 - 2.0 * FALSE_DISCOVERY_RATE)
                .map(|c| Equivalence::of_interval(c.interval));
            let WorkerSessions {
                strategy,
                label,
                x,
                rust,
                js,
                ..
            } = w;
            {
                let handover = |worker| {
                    handovers
                        .get(&(strategy, label.clone(), x.to_bits(), worker))
                        .copied()
                };
                InstrumentPoint {
                    rust_handover_ms: handover(WorkerKind::Rust),
                    js_handover_ms: handover(js_worker),
                    strategy,
                    label,
                    x,
                    rust_sessions: rust.len(),
                    js_sessions: js.len(),
                    ratio,
                    differs: false,
                    equivalence,
                }
            }
        })
        .collect();
    let p_values: Vec<Option<f64>> = points
        .iter()
        .map(|p| p.ratio.as_ref().map(|c| c.p_value))
        .collect();
    for (point, differs) in points.iter_mut().zip(sessions::benjamini_hochberg(
        &p_values,
        FALSE_DISCOVERY_RATE,
    )) {
        point.differs = differs;
    }
    points
}

/// The comparison's A/A test: one Worker's sessions split into two halves balanced in time,
/// each point judged as Rust ÷ JavaScript is (Welch's t on the logs, Benjamini–Hochberg at the
/// run's false discovery rate), by [`halves::halves_test`].
pub fn a_a(rows: &[ProbeRow], axis: Axis, worker: WorkerKind) -> HalvesTest {
    let points: Vec<Vec<f64>> = by_point(rows, axis)
        .values()
        .filter_map(|sessions| sessions.get(&worker))
        .map(|mine| mine.values().filter_map(|values| median(values)).collect())
        .collect();
    halves::halves_test(&points)
}

/// The paired comparison's A/A test: each point's per-session Rust ÷ JavaScript ratios split
/// into two halves balanced in time and judged against each other ([`halves::halves_test`]): a
/// ratio that drifts between sessions more than its interval allows shows here.
pub fn a_a_paired(sessions: &[WorkerSessions]) -> HalvesTest {
    let points: Vec<Vec<f64>> = sessions
        .iter()
        .filter(|w| !w.paired.is_empty())
        .map(|w| w.paired_values())
        .collect();
    halves::halves_test(&points)
}

/// What an A/A test called: "3 of 65{unit} (judged alone at 5%, …; about … by chance; it could
/// only have caught about … at one point among them)".
fn called(test: &HalvesTest, unit: &str) -> String {
    format!(
        "{} of {}{unit} (judged alone at 5%, {}; about {} by chance; it could only have caught \
         about {} at one point among them)",
        test.called,
        test.judged,
        test.alone,
        test.alone_by_chance(),
        test.detectable.map_or("–".to_owned(), num),
    )
}

/// literal ÷ bound at each value of the axis, on the inside clock (geometric means over
/// sessions), with each Worker: where the two Workers disagree on which is faster, the
/// instrument moves that finding. One line per value of the axis both strategies have.
pub fn moved_findings(rows: &[ProbeRow], axis: Axis) -> Vec<String> {
    let js_worker = javascript_of(rows);
    let by = by_point(rows, axis);
    let center = |strategy: Strategy, x: u64, worker: WorkerKind| {
        let sessions = by.get(&(strategy, String::new(), x))?;
        sessions::over_sessions(&session_values(sessions, worker), CONFIDENCE).map(|o| o.center)
    };
    let xs: Vec<u64> = by
        .keys()
        .filter(|(s, label, _)| *s == Strategy::Bound && label.is_empty())
        .map(|(_, _, x)| *x)
        .collect();
    xs.into_iter()
        .filter_map(|x| {
            let ratio = |worker| {
                Some(center(Strategy::Literal, x, worker)? / center(Strategy::Bound, x, worker)?)
            };
            let (rust, js) = (ratio(WorkerKind::Rust)?, ratio(js_worker)?);
            let moved = (rust < 1.0) != (js < 1.0);
            Some(format!(
                "{} = {}: literal ÷ bound {rust:.2} with the Rust Worker, {js:.2} with the \
                 JavaScript Worker{}",
                axis.name(),
                f64::from_bits(x),
                if moved {
                    ": the instrument moves this finding (the faster strategy differs)"
                } else {
                    ""
                }
            ))
        })
        .collect()
}

/// summary.md's section on the instrument, for a run both Workers measured; `None` otherwise.
pub fn markdown(rows: &[ProbeRow], axis: Axis) -> Option<String> {
    let points = points(rows, axis);
    if points.is_empty() {
        return None;
    }
    let sessions = worker_sessions(rows, axis);
    let paired = sessions.iter().any(|w| !w.paired.is_empty());
    let level = CONFIDENCE * 100.0;
    let how = match paired {
        true => format!(
            "both Workers side by side in every session (`--paired-workers`: each probe sent to \
             both back to back, in a shuffled order), the geometric mean over sessions of each \
             session's ratio (the medians of its repeats), its {level:.0}% interval by the t over \
             the sessions' ratios on the logs, so the drift between sessions, which moves both \
             Workers alike, is not in it"
        ),
        false => format!(
            "the ratio of their geometric means over sessions (each session's value the median \
             of its repeats; sessions alternate Workers), its {level:.0}% interval by Welch's t \
             on the logs"
        ),
    };
    let mut md = format!(
        "## The instrument: Rust Worker ÷ JavaScript Worker\n\nPer point, the Rust Worker's \
         inside clock ÷ the JavaScript Worker's: {how}, and `differs` where it excludes 1 with every point's verdict \
         held to a {:.0}% false discovery rate (Benjamini–Hochberg); `equivalent` where two \
         one-sided tests at 5% each (the 90% interval) put it within ±5% or ±10% of 1, the only \
         evidence that the instrument costs nothing there. Both windows open with \
         the values JavaScript values; making them so comes before the window on both \
         Workers (`handover_ms`: the Rust Worker's values handed over from its memory, the \
         JavaScript Worker's `JSON.parse` of its request), its median per Worker in the last \
         column: the instrument's own cost, which no window holds.\n\n\
         | strategy | {} | sessions (Rust, JS) | Rust ÷ JS | interval | differs | equivalent | handover ms (Rust, JS) |\n\
         | --- | --- | --- | --- | --- | --- | --- | --- |\n",
        FALSE_DISCOVERY_RATE * 100.0,
        axis.name()
    );
    if javascript_of(rows) == WorkerKind::JsMinimal {
        let table = md.find("\n\n| strategy").unwrap_or(md.len());
        md.insert_str(
            table,
            " The JavaScript Worker here is the minimal one (`--worker js-minimal`, \
             worker-js/src/minimal.js): nothing but the writes in its window, so Rust ÷ JS is the \
             Rust Worker against the least a JavaScript Worker can do, and its `handover_ms` is \
             the same `JSON.parse` as the twin's.",
        );
    }
    for p in &points {
        let (ratio, interval) = match &p.ratio {
            Some(c) => (
                format!("{:.2}", c.ratio),
                format!("{:.2}–{:.2}", c.interval.low, c.interval.high),
            ),
            None => ("–".into(), "needs two sessions of each".into()),
        };
        md.push_str(&format!(
            "| {}{} | {} | {}, {} | {ratio} | {interval} | {} | {} | {}, {} |\n",
            p.strategy,
            if p.label.is_empty() {
                String::new()
            } else {
                format!(" ({})", p.label)
            },
            p.x,
            p.rust_sessions,
            p.js_sessions,
            if p.differs { "yes" } else { "no" },
            p.equivalence.map_or("–", Equivalence::text),
            ms_or_dash(p.rust_handover_ms),
            ms_or_dash(p.js_handover_ms),
        ));
    }
    let beyond: Vec<String> = points
        .iter()
        .filter(|p| p.beyond_tolerance())
        .map(|p| format!("{} at {} = {}", p.strategy, axis.name(), p.x))
        .collect();
    let with_interval = points.iter().filter(|p| p.ratio.is_some()).count();
    let (five, ten, not_shown) = equivalence_counts(&points);
    md.push_str(&format!(
        "\nEquivalent (two one-sided tests) within ±5% at {five} of {with_interval} points, within \
         ±10% (not ±5%) at {ten}, shown at neither margin at {not_shown}: there this run cannot \
         tell a 10% cost of the instrument from none.\n"
    ));
    if !beyond.is_empty() {
        md.push_str(&format!(
            "\nThe interval stays above {TOLERANCE:.2} at {} of {with_interval} points ({}): \
             there the Rust Worker is measurably more than {:.0}% slower, and the figures of \
             those points carry that much of the instrument.\n",
            beyond.len(),
            beyond.join(", "),
            (TOLERANCE - 1.0) * 100.0
        ));
    }
    if paired {
        let test = a_a_paired(&sessions);
        if test.judged > 0 {
            md.push_str(&format!(
                "\nThe comparison's A/A test: the sessions' Rust ÷ JavaScript ratios split into \
                 two halves balanced in time (of each four sessions, the first and last against \
                 the middle two) and judged against each other as above; points called \
                 different: {}.\n",
                called(&test, "")
            ));
        }
    } else {
        let a_a_line = |worker: WorkerKind, name: &str| {
            let test = a_a(rows, axis, worker);
            (test.judged > 0)
                .then(|| format!("the {name} Worker's sessions, {}", called(&test, " points")))
        };
        let tests: Vec<String> = [
            a_a_line(WorkerKind::Rust, "Rust"),
            a_a_line(javascript_of(rows), "JavaScript"),
        ]
        .into_iter()
        .flatten()
        .collect();
        if !tests.is_empty() {
            md.push_str(&format!(
                "\nThe comparison's A/A test: each Worker's own sessions split into two halves \
                 balanced in time (of each four sessions, the first and last against the middle \
                 two) and judged the same way; points called different: {}.\n",
                tests.join("; ")
            ));
        }
    }
    let findings = moved_findings(rows, axis);
    if !findings.is_empty() {
        md.push_str("\nWhere the instrument moves a finding:\n\n");
        for line in findings {
            md.push_str(&format!("- {line}\n"));
        }
    }
    Some(md)
}

/// How many of `points` are equivalent within ±5%, within ±10% only, and at neither margin.
pub fn equivalence_counts(points: &[InstrumentPoint]) -> (usize, usize, usize) {
    let count = |e: Equivalence| points.iter().filter(|p| p.equivalence == Some(e)).count();
    (
        count(Equivalence::WithinFive),
        count(Equivalence::WithinTen),
        count(Equivalence::NotShown),
    )
}

fn ms_or_dash(ms: Option<f64>) -> String {
    ms.map_or_else(|| "–".into(), |ms| format!("{ms:.0}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::row::tests_support::row;

    /// Rows of one point: `sessions` sessions per Worker, each of three repeats around
    /// `rust_ms` or `js_ms` with a session effect.
    fn rows_of(strategy: Strategy, columns: usize, rust_ms: f64, js_ms: f64) -> Vec<ProbeRow> {
        let mut rows = Vec::new();
        for session in 0..4 {
            let worker = if session % 4 == 0 || session % 4 == 3 {
                WorkerKind::Rust
            } else {
                WorkerKind::Js
            };
            let base = if worker == WorkerKind::Rust {
                rust_ms
            } else {
                js_ms
            };
            let drift = [1.0, 1.03, 0.98, 1.01][session];
            for repeat in 0..3 {
                rows.push(ProbeRow {
                    strategy,
                    columns,
                    worker: Some(worker),
                    session,
                    repeat,
                    outcome: Outcome::Ok,
                    target_failed: false,
                    inside_ms: base * drift * (1.0 + 0.01 * repeat as f64),
                    handover_ms: Some(if worker == WorkerKind::Rust { 7.0 } else { 3.0 }),
                    ..row()
                });
            }
        }
        rows
    }

    #[test]
    fn against_the_minimal_javascript_worker_the_ratio_is_taken_and_the_worker_named() {
        let mut rows = rows_of(Strategy::Bound, 8, 200.0, 100.0);
        for row in rows.iter_mut().filter(|r| r.worker == Some(WorkerKind::Js)) {
            row.worker = Some(WorkerKind::JsMinimal);
        }
        assert_eq!(javascript_of(&rows), WorkerKind::JsMinimal);
        let points = points(&rows, Axis::Columns);
        assert_eq!((points.len(), points[0].js_sessions), (1, 2));
        assert!((points[0].ratio.as_ref().unwrap().ratio - 2.0).abs() < 0.1);
        let md = markdown(&rows, Axis::Columns).unwrap();
        assert!(
            md.contains("the minimal one (`--worker js-minimal`"),
            "{md}"
        );
        // Against the twin, no such sentence.
        let twin = rows_of(Strategy::Bound, 8, 200.0, 100.0);
        assert_eq!(javascript_of(&twin), WorkerKind::Js);
        assert!(!markdown(&twin, Axis::Columns).unwrap().contains("minimal"));
    }

    #[test]
    fn a_ratio_far_from_one_differs_and_one_at_one_does_not() {
        let mut rows = rows_of(Strategy::Bound, 8, 200.0, 100.0);
        rows.extend(rows_of(Strategy::Literal, 8, 100.0, 100.0));
        let points = points(&rows, Axis::Columns);
        assert_eq!(points.len(), 2);
        let bound = &points[0];
        assert_eq!(
            (bound.strategy, bound.rust_sessions, bound.js_sessions),
            (Strategy::Bound, 2, 2)
        );
        let change = bound.ratio.as_ref().unwrap();
        assert!((change.ratio - 2.0).abs() < 0.1, "{change:?}");
        assert!(change.interval.low > 1.0 && bound.differs, "{change:?}");
        let literal = points[1].ratio.as_ref().unwrap();
        assert!(literal.interval.low < 1.0 && literal.interval.high > 1.0);
        assert!(!points[1].differs);
        // Twice as slow is beyond the tolerance, and named; equal is not.
        assert!(bound.beyond_tolerance() && !points[1].beyond_tolerance());
        let md = markdown(&rows, Axis::Columns).unwrap();
        assert!(
            md.contains("The interval stays above 1.05 at 1 of 2 points (bound at columns = 8)"),
            "{md}"
        );
    }

    #[test]
    fn warmups_other_targets_and_one_worker_runs_are_left_out() {
        let mut rows = rows_of(Strategy::Bound, 8, 200.0, 100.0);
        for row in rows.iter_mut().filter(|r| r.session == 1) {
            row.warmup_discarded = true;
        }
        rows.push(ProbeRow {
            target: TargetKind::Sqlite,
            worker: None,
            ..row()
        });
        let points = points(&rows, Axis::Columns);
        assert_eq!((points[0].rust_sessions, points[0].js_sessions), (2, 1));
        assert_eq!(
            points[0].ratio, None,
            "one JavaScript session gives no interval"
        );
        let one_worker: Vec<ProbeRow> = rows
            .into_iter()
            .filter(|r| r.worker == Some(WorkerKind::Rust))
            .collect();
        assert!(super::points(&one_worker, Axis::Columns).is_empty());
        assert_eq!(markdown(&one_worker, Axis::Columns), None);
    }

    #[test]
    fn the_a_a_test_splits_each_workers_sessions_in_balanced_halves() {
        // Eight sessions, four per Worker (ABBA): each Worker's halves are equal but for the
        // session drift, so nothing differs; a Worker with one session per half gives nothing
        // to judge.
        let mut rows = Vec::new();
        for session in 0..8 {
            let worker = WorkerKind::of_session(session, WorkerKind::Js);
            for repeat in 0..3 {
                rows.push(ProbeRow {
                    strategy: Strategy::Bound,
                    columns: 8,
                    worker: Some(worker),
                    session,
                    repeat,
                    outcome: Outcome::Ok,
                    target_failed: false,
                    inside_ms: 100.0 * [1.0, 1.02, 0.99, 1.01, 0.98, 1.03, 1.0, 0.97][session],
                    ..row()
                });
            }
        }
        let judged = |test: HalvesTest| (test.called, test.judged);
        assert_eq!(judged(a_a(&rows, Axis::Columns, WorkerKind::Rust)), (0, 1));
        assert_eq!(judged(a_a(&rows, Axis::Columns, WorkerKind::Js)), (0, 1));
        let md = markdown(&rows, Axis::Columns).unwrap();
        assert!(
            md.contains("points called different: the Rust Worker's sessions, 0 of 1 points"),
            "{md}"
        );
        let four = rows_of(Strategy::Bound, 8, 100.0, 100.0);
        assert_eq!(judged(a_a(&four, Axis::Columns, WorkerKind::Rust)), (0, 0));
    }

    #[test]
    fn a_finding_the_instrument_flips_is_named() {
        // Literal beats bound with the Rust Worker (90 ÷ 100) but not with the JavaScript one
        // (120 ÷ 100): the instrument moves that finding.
        let mut rows = rows_of(Strategy::Bound, 64, 100.0, 100.0);
        rows.extend(rows_of(Strategy::Literal, 64, 90.0, 120.0));
        let lines = moved_findings(&rows, Axis::Columns);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("the instrument moves this finding"),
            "{lines:?}"
        );
        let md = markdown(&rows, Axis::Columns).unwrap();
        assert!(md.contains("| literal | 64 | 2, 2 |"), "{md}");
        assert!(md.contains(" | 7, 3 |"), "the handover medians: {md}");
        assert!(
            md.contains("Equivalent (two one-sided tests) within ±5% at "),
            "{md}"
        );
    }
}
