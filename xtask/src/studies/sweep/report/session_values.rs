//! Each session's value of a run's ratios, point by point: the values the run's own figures are
//! taken over (summary.csv's `ratio_to_bound` and `ratio_to_<baseline>`, the instrument's Rust ÷
//! JavaScript), given out so that an estimate over replicate runs (`stats::runs`) takes each
//! run's sessions from the same code as that run's own figure.

use std::collections::BTreeMap;

use d1bench_core::Strategy;

use super::instrument::{self, WorkerSessions};
use super::points::{Point, points};
use crate::base::TargetKind;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// Where a ratio was taken: a strategy on a target, in a labelled series or none, at a value
/// of the swept axis.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub struct RatioPoint {
    pub target: TargetKind,
    pub label: String,
    pub strategy: Strategy,
    /// The point's value on the sweep's axis.
    pub x: f64,
}

impl RatioPoint {
    fn of(point: &Point) -> RatioPoint {
        RatioPoint {
            target: point.line.target,
            label: point.line.label.clone(),
            strategy: point.line.strategy,
            x: point.x,
        }
    }
}

/// A ratio's values at one point, one per session, by session (the session's index in its run:
/// an estimate over runs that replayed one schedule pairs the runs' sessions by it).
pub type SessionValues = Vec<(RatioPoint, BTreeMap<usize, f64>)>;

/// literal ÷ bound on every target, each session's value the median of its paired repeats'
/// ratios of ms per 1,000 rows ([`Point::session_paired_ratios`], what `ratio_to_bound` is the
/// geometric mean of).
pub fn literal_to_bound(rows: &[ProbeRow], axis: Axis) -> SessionValues {
    let all = points(rows, axis);
    let bound: BTreeMap<_, &Point> = all
        .iter()
        .filter(|p| p.line.strategy == Strategy::Bound)
        .map(|p| ((p.line.target, p.line.label.clone(), p.x.to_bits()), p))
        .collect();
    all.iter()
        .filter(|p| p.line.strategy == Strategy::Literal)
        .filter_map(|p| {
            let b = bound.get(&(p.line.target, p.line.label.clone(), p.x.to_bits()))?;
            Some((RatioPoint::of(p), p.session_paired_ratios_by_session(b)))
        })
        .collect()
}

/// Every target ÷ the run's baseline (bare SQLite's, the Durable Object's), each session's value
/// the ratio of the two median inside clocks of the sessions that ran beside each other
/// ([`Point::session_ratios`], what `ratio_to_<baseline>` and `baseline::judge` are taken over);
/// empty without a baseline.
pub fn to_baseline(rows: &[ProbeRow], axis: Axis) -> (Option<TargetKind>, SessionValues) {
    let all = points(rows, axis);
    let Some(base) = TargetKind::baseline_among(all.iter().map(|p| p.line.target)) else {
        return (None, Vec::new());
    };
    let theirs: BTreeMap<_, &Point> = all
        .iter()
        .filter(|p| p.line.target == base)
        .map(|p| ((p.line.label.clone(), p.line.strategy, p.x.to_bits()), p))
        .collect();
    let values = all
        .iter()
        .filter(|p| p.line.target != base)
        .filter_map(|p| {
            let other = theirs.get(&(p.line.label.clone(), p.line.strategy, p.x.to_bits()))?;
            Some((RatioPoint::of(p), p.session_ratios_by_session(other)))
        })
        .collect();
    (Some(base), values)
}

/// Rust ÷ JavaScript: each point's two Workers' session values (the median inside clock of
/// each session's repeats, [`instrument::worker_sessions`], what the run's own comparison is
/// taken over), with the ratios within sessions of a run whose Workers shared them; empty for a
/// run one Worker measured.
pub fn rust_to_javascript(rows: &[ProbeRow], axis: Axis) -> Vec<(RatioPoint, WorkerSessions)> {
    instrument::worker_sessions(rows, axis)
        .into_iter()
        .map(|w| {
            let at = RatioPoint {
                target: TargetKind::Local,
                label: w.label.clone(),
                strategy: w.strategy,
                x: w.x,
            };
            (at, w)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::project_root;
    use crate::records::csv;
    use crate::stats::CONFIDENCE;
    use crate::stats::sessions::over_sessions;
    use crate::studies::sweep::report::points::summary_rows;

    /// The run's own figures are the geometric means of these values, point by point.
    #[test]
    fn the_sessions_values_give_back_the_runs_own_ratios() {
        let dir = project_root().join("docs/example-run");
        let rows: Vec<ProbeRow> = csv::read(&dir.join("results.csv")).unwrap();
        let summary = summary_rows(&rows, Axis::Columns, None);
        let own = |measure: &str, at: &RatioPoint| {
            summary
                .iter()
                .find(|r| {
                    r.measure == measure
                        && r.target == at.target
                        && r.strategy == at.strategy
                        && r.label == at.label
                        && r.columns as f64 == at.x
                })
                .and_then(|r| r.median)
                .unwrap()
        };
        let ratios = literal_to_bound(&rows, Axis::Columns);
        assert!(ratios.len() >= 12, "{}", ratios.len());
        for (at, values) in &ratios {
            let values: Vec<f64> = values.values().copied().collect();
            let center = over_sessions(&values, CONFIDENCE).unwrap().center;
            assert!((center - own("ratio_to_bound", at)).abs() < 1e-9, "{at:?}");
        }
        let (base, ratios) = to_baseline(&rows, Axis::Columns);
        assert_eq!(base, Some(TargetKind::Sqlite));
        assert!(!ratios.is_empty());
        for (at, values) in &ratios {
            let values: Vec<f64> = values.values().copied().collect();
            let center = over_sessions(&values, CONFIDENCE).unwrap().center;
            assert!((center - own("ratio_to_sqlite", at)).abs() < 1e-9, "{at:?}");
        }
        assert!(rust_to_javascript(&rows, Axis::Columns).is_empty());
    }

    #[test]
    fn the_two_workers_sessions_give_back_the_instruments_ratios() {
        let dir = project_root().join(crate::readme::instrument::TWO_WORKERS);
        let rows: Vec<ProbeRow> = csv::read(&dir.join("results.csv")).unwrap();
        let own = instrument::points(&rows, Axis::Columns);
        let values = rust_to_javascript(&rows, Axis::Columns);
        assert_eq!(values.len(), own.len());
        for ((at, w), p) in values.iter().zip(&own) {
            assert_eq!((at.strategy, at.x), (p.strategy, p.x));
            assert!(w.paired.is_empty(), "its sessions alternated Workers");
            let change = crate::stats::sessions::change_between(&w.js, &w.rust, CONFIDENCE);
            assert_eq!(change, p.ratio);
        }
    }
}
