//! A compared point across runs: what must be equal for two runs' points to be compared
//! ([`PointKey`]), the rows that count, and a point's values per session.

use std::collections::BTreeMap;

use d1bench_core::Strategy;
use serde::{Deserialize, Serialize};

use crate::base::TargetKind;
use crate::stats::median;
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::points::{Measure, Point, points};
use crate::studies::sweep::row::ProbeRow;

/// Everything that must be equal for two runs' points to be compared.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointKey {
    pub target: TargetKind,
    /// The series' label; empty when it has none.
    pub label: String,
    pub strategy: Strategy,
    pub columns: usize,
    pub row_bytes: usize,
    /// Rows each probe wrote.
    pub rows: usize,
    pub escape_share: f64,
    pub non_ascii_share: f64,
    pub indexes: usize,
    pub nul_share: f64,
}

impl PointKey {
    pub fn of(point: &Point) -> Self {
        let first = point.rows[0];
        PointKey {
            target: point.line.target,
            label: point.line.label.clone(),
            strategy: point.line.strategy,
            columns: first.columns,
            row_bytes: first.row_bytes,
            rows: first.rows,
            escape_share: first.escape_share,
            non_ascii_share: first.non_ascii_share,
            indexes: first.indexes,
            nul_share: first.nul_share,
        }
    }

    /// Every parameter, for the lists of points only one run has.
    pub fn describe(&self) -> String {
        let series = if self.label.is_empty() {
            String::new()
        } else {
            format!(" (series \"{}\")", self.label)
        };
        format!(
            "{} {}{series}: columns {}, row-bytes {}, rows {}, escape-share {}, nul-share {}, \
             non-ascii-share {}, indexes {}",
            self.target,
            self.strategy,
            self.columns,
            self.row_bytes,
            self.rows,
            self.escape_share,
            self.nul_share,
            self.non_ascii_share,
            self.indexes
        )
    }
}

/// The rows that count: every measured row but those the run marked as warm-up discarded
/// (before its session's times settled).
pub fn measured(rows: &[ProbeRow]) -> Vec<ProbeRow> {
    rows.iter().filter(|r| r.counts()).cloned().collect()
}

/// Each session's value at the point: the median of its repeats' ms per 1,000 rows.
pub fn session_values(point: &Point) -> BTreeMap<usize, f64> {
    session_values_of(point, Measure::MsPer1000Rows)
}

/// Each session's value of `measure` at the point: the median of its repeats'.
pub fn session_values_of(point: &Point, measure: Measure) -> BTreeMap<usize, f64> {
    let mut by_session: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
    for row in &point.rows {
        if let Some(v) = measure.value(row) {
            by_session.entry(row.session).or_default().push(v);
        }
    }
    by_session
        .into_iter()
        .filter_map(|(s, v)| Some((s, median(&v)?)))
        .collect()
}

/// The points of `rows` along `axis`, each with its key.
pub fn keyed(rows: &[ProbeRow], axis: Axis) -> Vec<(PointKey, Point<'_>)> {
    points(rows, axis)
        .into_iter()
        .map(|p| (PointKey::of(&p), p))
        .collect()
}
