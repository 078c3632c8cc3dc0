//! The points of a run: result rows grouped by line (target, label, strategy) and by the
//! swept axis, each measure summarized with [`crate::stats`]. One grouping for `summary.csv`,
//! the summary tables and the charts.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use d1bench_core::{Outcome, Strategy};

use crate::flags::TargetKind;
use serde::Serialize;

use crate::records::ResultRow;
use crate::reports::stats::Summary;
use crate::studies::sweep::Axis;

/// A value measured for each probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// The outside clock, ms: the whole request, the target's preparation included.
    OutsideMs,
    /// The target's preparation (generating rows, building statements), ms.
    PrepareMs,
    /// The inside clock, ms.
    InsideMs,
    /// Within the inside clock, handing values to the D1 binding, ms.
    BindMs,
    /// D1's own clock, ms.
    D1Ms,
    /// Outside − inside − prepare, ms.
    OverheadMs,
    /// The outside clock without the target's preparation, per 1,000 rows written, ms: the
    /// authoritative time.
    MsPer1000Rows,
    /// Rows in the largest INSERT.
    RowsPerStatement,
}

impl Measure {
    /// The measures of `summary.csv`, in its order.
    pub const SUMMARIZED: [Measure; 7] = [
        Measure::OutsideMs,
        Measure::MsPer1000Rows,
        Measure::InsideMs,
        Measure::D1Ms,
        Measure::OverheadMs,
        Measure::PrepareMs,
        Measure::BindMs,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Measure::OutsideMs => "outside_ms",
            Measure::PrepareMs => "prepare_ms",
            Measure::InsideMs => "inside_ms",
            Measure::BindMs => "bind_ms",
            Measure::D1Ms => "d1_ms",
            Measure::OverheadMs => "overhead_ms",
            Measure::MsPer1000Rows => "ms_per_1000_rows",
            Measure::RowsPerStatement => "rows_per_statement",
        }
    }

    /// What `row` contributes: times only from probes that succeeded (a refusal's time is not a
    /// write time); rows per statement from refused probes too, since their plan is still
    /// meaningful. `None` when the row does not count.
    pub fn value(self, row: &ResultRow) -> Option<f64> {
        let ok = row.outcome == Outcome::Ok;
        let value = match self {
            Measure::OutsideMs if ok => row.outside_ms,
            Measure::PrepareMs if ok => row.prepare_ms?,
            Measure::InsideMs if ok => row.inside_ms,
            Measure::BindMs if ok => row.bind_ms?,
            Measure::D1Ms if ok => row.d1_ms?,
            Measure::OverheadMs if ok => row.overhead_ms?,
            // Rows from before `prepare_ms` existed count their preparation in.
            Measure::MsPer1000Rows if ok && row.rows > 0 => {
                (row.outside_ms - row.prepare_ms.unwrap_or_default()) * 1000.0 / row.rows as f64
            }
            Measure::RowsPerStatement if ok || row.outcome == Outcome::Refused => {
                row.rows_per_statement as f64
            }
            _ => return None,
        };
        value.is_finite().then_some(value)
    }
}

/// One line of a chart: a strategy on a target, in one labelled series or none.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Line {
    pub target: TargetKind,
    pub label: String,
    pub strategy: Strategy,
}

/// One point: a line at one value of the swept axis, with the rows (repeats) measured there.
#[derive(Debug, Clone)]
pub struct Point<'a> {
    pub line: Line,
    pub x: f64,
    pub rows: Vec<&'a ResultRow>,
}

impl Point<'_> {
    pub fn values(&self, measure: Measure) -> Vec<f64> {
        self.rows.iter().filter_map(|r| measure.value(r)).collect()
    }

    pub fn summary(&self, measure: Measure) -> Option<Summary> {
        Summary::of(&self.values(measure))
    }

    fn count(&self, outcome: Outcome) -> usize {
        self.rows.iter().filter(|r| r.outcome == outcome).count()
    }

    pub fn ok(&self) -> usize {
        self.count(Outcome::Ok)
    }

    pub fn refused(&self) -> usize {
        self.count(Outcome::Refused)
    }

    pub fn errors(&self) -> usize {
        self.count(Outcome::Error)
    }

    /// No repeat succeeded and at least one was refused: the strategy's wall.
    pub fn refused_only(&self) -> bool {
        self.ok() == 0 && self.refused() > 0
    }
}

/// `f64` ordered by `total_cmp`, for grouping by x.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderedX(f64);

impl Eq for OrderedX {}

impl PartialOrd for OrderedX {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedX {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The points of `rows` along `axis`, ordered by line, then x.
pub fn points(rows: &[ResultRow], axis: Axis) -> Vec<Point<'_>> {
    let mut grouped: BTreeMap<(Line, OrderedX), Vec<&ResultRow>> = BTreeMap::new();
    for row in rows {
        let line = Line {
            target: row.target,
            label: row.label.clone(),
            strategy: row.strategy,
        };
        grouped
            .entry((line, OrderedX(row.at(axis))))
            .or_default()
            .push(row);
    }
    grouped
        .into_iter()
        .map(|((line, OrderedX(x)), rows)| Point { line, x, rows })
        .collect()
}

/// One row of `summary.csv`: one measure of one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    pub target: TargetKind,
    /// The series' label; empty when it has none.
    pub label: String,
    pub strategy: Strategy,
    pub columns: usize,
    pub row_bytes: usize,
    pub rows: usize,
    pub escape_share: f64,
    pub non_ascii_share: f64,
    pub indexes: usize,
    /// Rows in the largest INSERT (the plan's, the same for every repeat).
    pub rows_per_statement: usize,
    /// Which value: `outside_ms`, `ms_per_1000_rows`, `inside_ms`, `d1_ms`, `overhead_ms`,
    /// `prepare_ms` or `bind_ms`.
    pub measure: &'static str,
    /// Repeats summarized: those that succeeded.
    pub n: usize,
    /// Repeats by outcome.
    pub ok: usize,
    pub refused: usize,
    pub errors: usize,
    /// Median, 95th percentile, min, max and the 95% bootstrap interval of the median; empty
    /// when no repeat succeeded.
    pub median: Option<f64>,
    pub p95: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// Last, as it came after the others: share of text values starting with a NUL.
    pub nul_share: f64,
}

/// The rows of `summary.csv`: every point, every summarized measure.
pub fn summary_rows(rows: &[ResultRow], axis: Axis) -> Vec<SummaryRow> {
    let mut out = Vec::new();
    for point in points(rows, axis) {
        let first = point.rows[0];
        for measure in Measure::SUMMARIZED {
            let summary = point.summary(measure);
            out.push(SummaryRow {
                target: point.line.target,
                label: point.line.label.clone(),
                strategy: point.line.strategy,
                columns: first.columns,
                row_bytes: first.row_bytes,
                rows: first.rows,
                escape_share: first.escape_share,
                non_ascii_share: first.non_ascii_share,
                indexes: first.indexes,
                rows_per_statement: first.rows_per_statement,
                measure: measure.name(),
                n: summary.map_or(0, |s| s.n),
                ok: point.ok(),
                refused: point.refused(),
                errors: point.errors(),
                median: summary.map(|s| s.median),
                p95: summary.map(|s| s.p95),
                min: summary.map(|s| s.min),
                max: summary.map(|s| s.max),
                ci_low: summary.map(|s| s.ci_low),
                ci_high: summary.map(|s| s.ci_high),
                nul_share: first.nul_share,
            });
        }
    }
    out
}

/// `summary.csv` as bytes.
pub fn summary_csv(rows: &[ResultRow], axis: Axis) -> Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in summary_rows(rows, axis) {
        writer
            .serialize(&row)
            .context("cannot serialize a summary row")?;
    }
    writer
        .into_inner()
        .context("cannot finish summary.csv in memory")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::probe_row::tests_support;

    fn row(target: &str, strategy: Strategy, columns: usize, outcome: &str, ms: f64) -> ResultRow {
        let target: TargetKind = serde_json::from_value(serde_json::json!(target)).unwrap();
        let outcome: Outcome = outcome.parse().unwrap();
        let mut row = tests_support::row();
        row.target = target;
        row.strategy = strategy;
        row.columns = columns;
        row.outcome = outcome;
        row.outside_ms = ms;
        row.inside_ms = ms / 2.0;
        row.overhead_ms = Some(ms / 2.0);
        row
    }

    #[test]
    fn points_group_by_target_label_strategy_and_x() {
        let mut labelled = row("local", Strategy::Bound, 8, "ok", 30.0);
        labelled.label = "all non-ASCII".into();
        let rows = vec![
            row("local", Strategy::Bound, 8, "ok", 10.0),
            row("local", Strategy::Bound, 8, "ok", 20.0),
            row("sqlite", Strategy::Bound, 8, "ok", 1.0),
            row("local", Strategy::Bound, 16, "refused", 2.0),
            labelled,
        ];
        let points = points(&rows, Axis::Columns);
        let keys: Vec<_> = points
            .iter()
            .map(|p| {
                (
                    p.line.target.name(),
                    p.line.label.as_str(),
                    p.x,
                    p.rows.len(),
                )
            })
            .collect();
        assert_eq!(
            keys,
            [
                ("local", "", 8.0, 2),
                ("local", "", 16.0, 1),
                ("local", "all non-ASCII", 8.0, 1),
                ("sqlite", "", 8.0, 1)
            ]
        );
        assert_eq!(points[0].summary(Measure::OutsideMs).unwrap().median, 15.0);
        assert!(points[1].refused_only());
        assert_eq!(points[1].summary(Measure::OutsideMs), None);
        assert_eq!(points[1].values(Measure::RowsPerStatement), [12.0]);
    }

    #[test]
    fn times_count_only_successes_and_d1_ms_only_where_there_is_a_d1() {
        let mut sqlite = row("sqlite", Strategy::Bound, 8, "ok", 4.0);
        sqlite.d1_ms = None;
        assert_eq!(Measure::D1Ms.value(&sqlite), None);
        assert_eq!(Measure::OutsideMs.value(&sqlite), Some(4.0));
        // 100 rows: per 1,000 rows is ten times the probe's time.
        assert_eq!(Measure::MsPer1000Rows.value(&sqlite), Some(40.0));
        let mut local = row("local", Strategy::Bound, 8, "ok", 4.0);
        assert_eq!(Measure::PrepareMs.value(&local), None);
        (local.prepare_ms, local.bind_ms) = (Some(1.5), Some(0.25));
        assert_eq!(Measure::OutsideMs.value(&local), Some(4.0));
        assert_eq!(Measure::PrepareMs.value(&local), Some(1.5));
        assert_eq!(Measure::BindMs.value(&local), Some(0.25));
        // The authoritative time leaves the target's preparation out.
        assert_eq!(Measure::MsPer1000Rows.value(&local), Some(25.0));
        let refused = row("local", Strategy::Literal, 8, "refused", 3.0);
        assert_eq!(Measure::OutsideMs.value(&refused), None);
        assert_eq!(Measure::RowsPerStatement.value(&refused), Some(12.0));
        let error = row("local", Strategy::Literal, 8, "error", 3.0);
        assert_eq!(Measure::RowsPerStatement.value(&error), None);
    }

    #[test]
    fn summary_csv_has_every_measure_of_every_point_and_empty_stats_for_refusals() {
        let rows = vec![
            row("local", Strategy::Bound, 8, "ok", 10.0),
            row("local", Strategy::Bound, 8, "ok", 30.0),
            row("local", Strategy::Bound, 8, "ok", 20.0),
            row("local", Strategy::Literal, 8, "refused", 1.0),
        ];
        let text = String::from_utf8(summary_csv(&rows, Axis::Columns).unwrap()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "target,label,strategy,columns,row_bytes,rows,escape_share,non_ascii_share,indexes,\
             rows_per_statement,measure,n,ok,refused,errors,median,p95,min,max,ci_low,ci_high,\
             nul_share"
        );
        assert_eq!(lines.len(), 1 + 2 * Measure::SUMMARIZED.len());
        assert!(
            lines[1].starts_with(
                "local,,bound,8,1000,100,0.0,0.0,0,12,outside_ms,3,3,0,0,20.0,29.0,10.0,30.0,"
            ),
            "{}",
            lines[1]
        );
        assert!(
            lines[2].contains(",ms_per_1000_rows,3,3,0,0,200.0,"),
            "{}",
            lines[2]
        );
        let literal = lines[1 + Measure::SUMMARIZED.len()];
        assert!(
            literal.ends_with("literal,8,1000,100,0.0,0.0,0,12,outside_ms,0,0,1,0,,,,,,,0.0"),
            "{literal}"
        );
    }
}
