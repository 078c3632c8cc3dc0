//! The kinds of a point's own ratio (this strategy ÷ bound, this target ÷ its baseline), in which
//! the runner's speed cancels, and each kind's value per session of one run: what compare judges
//! between two runs and what a replicate set's variance between runs is read from.

use std::collections::BTreeMap;

use d1bench_core::Strategy;

use super::key::{PointKey, session_values};
use super::verdict::MIN_SESSIONS;
use crate::base::TargetKind;
use crate::stats::median;
use crate::studies::sweep::report::points::{Measure, Point};

/// Per session, the median of `point ÷ bound`'s ratios repeat by repeat.
fn vs_bound_by_session(point: &Point, bound: &Point) -> BTreeMap<usize, f64> {
    let theirs: BTreeMap<(usize, usize), f64> = bound
        .rows
        .iter()
        .filter_map(|r| Some(((r.session, r.repeat), Measure::MsPer1000Rows.value(r)?)))
        .collect();
    let mut ratios: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for row in &point.rows {
        let denominator = theirs.get(&(row.session, row.repeat)).filter(|d| **d > 0.0);
        if let (Some(d), Some(v)) = (denominator, Measure::MsPer1000Rows.value(row)) {
            ratios.entry(row.session).or_default().push(v / d);
        }
    }
    ratios
        .into_iter()
        .filter_map(|(s, r)| Some((s, median(&r)?)))
        .collect()
}

/// Per session, the point's median ÷ its baseline's in the session of the same number.
fn vs_baseline_by_session(point: &Point, baseline: &Point) -> BTreeMap<usize, f64> {
    let theirs = session_values(baseline);
    session_values(point)
        .into_iter()
        .filter_map(|(s, v)| {
            let d = theirs.get(&s).filter(|d| **d > 0.0)?;
            Some((s, v / d))
        })
        .collect()
}

/// The kind of own ratio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    VsBound,
    VsBaseline,
}

impl Kind {
    pub(super) const ALL: [Kind; 2] = [Kind::VsBound, Kind::VsBaseline];

    /// The point `key`'s ratio of this kind over the sessions of one run's `points`.
    pub(super) fn series(self, points: &[(PointKey, Point)], key: &PointKey) -> Option<Vec<f64>> {
        let find = |k: &PointKey| points.iter().find(|(p, _)| p == k).map(|(_, p)| p);
        let point = find(key)?;
        let by_session = match self {
            Kind::VsBound if key.strategy != Strategy::Bound => {
                let bound = find(&PointKey {
                    strategy: Strategy::Bound,
                    ..key.clone()
                })?;
                vs_bound_by_session(point, bound)
            }
            Kind::VsBaseline => {
                let base = TargetKind::baseline_among(points.iter().map(|(p, _)| p.target))
                    .filter(|&b| b != key.target)?;
                let baseline = find(&PointKey {
                    target: base,
                    ..key.clone()
                })?;
                vs_baseline_by_session(point, baseline)
            }
            _ => return None,
        };
        let values: Vec<f64> = by_session.into_values().collect();
        (values.len() >= MIN_SESSIONS).then_some(values)
    }
}
