//! The points of a sweep run: result rows grouped by line (target, label, strategy) and by the
//! swept axis, each measure summarized with [`crate::stats`]. One grouping for `summary.csv`,
//! the summary tables and the charts.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use d1bench_core::{Outcome, Strategy};

use crate::base::TargetKind;
use serde::Serialize;

use crate::stats::{CONFIDENCE, Interval, Ratio, Summary, median, ratio_of_medians, sessions};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

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
    pub fn value(self, row: &ProbeRow) -> Option<f64> {
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
    pub rows: Vec<&'a ProbeRow>,
}

impl Point<'_> {
    pub fn values(&self, measure: Measure) -> Vec<f64> {
        self.rows.iter().filter_map(|r| measure.value(r)).collect()
    }

    /// The point's values of `measure` that `keep` keeps, by the session they were measured in.
    fn by_session(
        &self,
        measure: Measure,
        keep: impl Fn(f64) -> bool,
    ) -> BTreeMap<usize, Vec<f64>> {
        let mut groups: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for row in &self.rows {
            if let Some(value) = measure.value(row).filter(|v| keep(*v)) {
                groups.entry(row.session).or_default().push(value);
            }
        }
        groups
    }

    /// The point's estimate of `measure`: within one session, the median of its repeats with
    /// their order-statistic interval; over several, the geometric mean of the sessions'
    /// medians with the interval over sessions (see [`stats::sessions::summary_by_session`]).
    pub fn summary(&self, measure: Measure) -> Option<Summary> {
        self.summary_of(measure, |_| true)
    }

    /// [`Point::summary`] of the values `keep` keeps (a chart on a log axis keeps the positive
    /// ones).
    pub fn summary_of(&self, measure: Measure, keep: impl Fn(f64) -> bool) -> Option<Summary> {
        let groups = self.by_session(measure, keep);
        sessions::summary_by_session(&groups.into_values().collect::<Vec<_>>())
    }

    /// Sessions with a row at this point.
    pub fn sessions(&self) -> usize {
        let mut sessions: Vec<usize> = self.rows.iter().map(|r| r.session).collect();
        sessions.sort_unstable();
        sessions.dedup();
        sessions.len()
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

    /// `self ÷ other` in ms per 1,000 rows, repeat by repeat, for two strategies at the same
    /// point of one target (they ran side by side in each repeat of each session): each pair's
    /// ratio where both succeeded; summarized within one session as the median of the ratios
    /// with its order-statistic interval, over several as the geometric mean of each session's
    /// median ratio with the interval over sessions.
    pub fn paired_ratio(&self, other: &Point) -> Option<Summary> {
        let by_session = self.paired_ratios_by_session(other);
        sessions::summary_by_session(&by_session.into_values().collect::<Vec<_>>())
    }

    /// Each session's median of the pairs' ratios `self ÷ other`, in session order: the values
    /// [`Point::paired_ratio`] is taken over between sessions.
    pub fn session_paired_ratios(&self, other: &Point) -> Vec<f64> {
        self.session_paired_ratios_by_session(other)
            .into_values()
            .collect()
    }

    /// [`Point::session_paired_ratios`] by the session each was measured in.
    pub fn session_paired_ratios_by_session(&self, other: &Point) -> BTreeMap<usize, f64> {
        self.paired_ratios_by_session(other)
            .into_iter()
            .filter_map(|(s, values)| Some((s, median(&values)?)))
            .collect()
    }

    /// The pairs' ratios `self ÷ other` of [`Point::paired_ratio`], by the session they were
    /// measured in.
    pub fn paired_ratios_by_session(&self, other: &Point) -> BTreeMap<usize, Vec<f64>> {
        let theirs: BTreeMap<(usize, usize), f64> = other
            .rows
            .iter()
            .filter_map(|r| Some(((r.session, r.repeat), Measure::MsPer1000Rows.value(r)?)))
            .collect();
        let mut by_session: BTreeMap<usize, Vec<f64>> = BTreeMap::new();
        for r in &self.rows {
            let Some(denominator) = theirs.get(&(r.session, r.repeat)).filter(|d| **d > 0.0) else {
                continue;
            };
            if let Some(value) = Measure::MsPer1000Rows.value(r) {
                by_session
                    .entry(r.session)
                    .or_default()
                    .push(value / denominator);
            }
        }
        by_session
    }

    /// `self ÷ other` for the same point on two targets (the inside clock, the writes alone on
    /// both sides). Over two or more sessions that both have: each session's ratio of the two
    /// medians (the target's session and the baseline's ran beside each other), their
    /// geometric mean and its interval over sessions. Within one session: the ratio of the
    /// medians, with the two medians' intervals divided.
    pub fn independent_ratio(&self, other: &Point) -> Option<Ratio> {
        let ratios = self.session_ratios(other);
        if ratios.len() >= 2 {
            let over = sessions::over_sessions(&ratios, CONFIDENCE)?;
            return Some(Ratio {
                value: over.center,
                n: (
                    self.values(Measure::InsideMs).len(),
                    other.values(Measure::InsideMs).len(),
                ),
                ci: over.interval,
            });
        }
        ratio_of_medians(
            &self.values(Measure::InsideMs),
            &other.values(Measure::InsideMs),
        )
    }

    /// Each session's ratio `self ÷ other` of the median inside clocks, in session order, for
    /// the sessions both have (the target's and the baseline's that ran beside each other).
    pub fn session_ratios(&self, other: &Point) -> Vec<f64> {
        self.session_ratios_by_session(other)
            .into_values()
            .collect()
    }

    /// [`Point::session_ratios`] by the session each was measured in.
    pub fn session_ratios_by_session(&self, other: &Point) -> BTreeMap<usize, f64> {
        let (ours, theirs) = (
            self.session_medians(Measure::InsideMs),
            other.session_medians(Measure::InsideMs),
        );
        ours.iter()
            .filter_map(|(s, top)| Some((*s, top / theirs.get(s).filter(|b| **b > 0.0)?)))
            .collect()
    }

    /// Each session's median of `measure`, by session: the values an estimate over sessions
    /// ([`Point::summary`]) is taken over.
    pub fn session_medians(&self, measure: Measure) -> BTreeMap<usize, f64> {
        self.by_session(measure, |_| true)
            .into_iter()
            .filter_map(|(s, values)| Some((s, median(&values)?)))
            .collect()
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

/// The strategies' points of `rows` along `axis`, ordered by line, then x; the rows a session
/// measured before it settled (`warmup_discarded`) are left out, and so are the libraries' rows
/// (an ORM run's: `report::orms`).
pub fn points(rows: &[ProbeRow], axis: Axis) -> Vec<Point<'_>> {
    let mut grouped: BTreeMap<(Line, OrderedX), Vec<&ProbeRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.counts() && r.orm.is_none()) {
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
    /// `prepare_ms` or `bind_ms`; or a ratio of ms per 1,000 rows: `ratio_to_bound` (this
    /// strategy ÷ bound at the same point, repeat by repeat) or `ratio_to_sqlite` (this target ÷
    /// the bare SQLite baseline).
    pub measure: &'static str,
    /// Values summarized: the repeats that succeeded (over every session); for `ratio_to_bound`
    /// the pairs of repeats where both succeeded; for `ratio_to_sqlite` this target's repeats.
    pub n: usize,
    /// Repeats by outcome.
    pub ok: usize,
    pub refused: usize,
    pub errors: usize,
    /// The estimate: within one session the median of the repeats (of the paired ratios; for
    /// `ratio_to_sqlite` the ratio of the medians); over several sessions the geometric mean
    /// of each session's median (of its paired ratios; of its ratio of medians to the
    /// baseline's session beside it). Empty when no repeat succeeded.
    pub median: Option<f64>,
    /// The 95th percentile; empty below 20 repeats, where it would be the max.
    pub p95: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    /// The estimate's confidence interval (see [`crate::stats`]); empty below 2 repeats in
    /// one session.
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    /// What the interval covers: 0.95 over sessions; within one session at least 0.95 from 6
    /// repeats on, less below (0.9375 at 5).
    pub ci_coverage: Option<f64>,
    /// How the interval was obtained: `between-sessions` (Student's t over the sessions'
    /// values, two sessions or more), or within one session `order-statistic` (of the median,
    /// or of the median of paired ratios) or `independent-ratio` (`ratio_to_sqlite`: a lower
    /// bound of coverage).
    pub ci_method: Option<&'static str>,
    /// For `ratio_to_sqlite`, the baseline's repeats (`ratio_to_bound`: the pairs again);
    /// empty for other measures.
    pub n_denominator: Option<usize>,
    /// The precision the profile asked for (a fraction of the median); empty for a fixed
    /// number of repeats.
    pub precision: Option<f64>,
    /// With a precision, whether this measure's interval got within it (the repeats were
    /// decided on `ms_per_1000_rows`); empty for ratios and without a precision.
    pub precision_reached: Option<bool>,
    /// Last, as it came after the others: share of text values starting with a NUL.
    pub nul_share: f64,
    /// Sessions the values came from (1: the interval, if any, is within one session).
    pub sessions: usize,
    /// Over sessions: the smallest change of this estimate (a factor, 1.20 = 20%) that a
    /// comparison with a replicate of the same design detects at 80% power judged alone at 5%,
    /// from the spread between this run's sessions; empty within one session.
    pub detectable: Option<f64>,
}

/// What a row of `summary.csv` summarizes: a measure's repeats, or a ratio.
struct Stat {
    n: usize,
    median: Option<f64>,
    p95: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    ci: Option<Interval>,
    n_denominator: Option<usize>,
    sessions: usize,
}

impl Stat {
    fn of(summary: Option<Summary>) -> Stat {
        Stat {
            n: summary.map_or(0, |s| s.n),
            median: summary.map(|s| s.median),
            p95: summary.and_then(|s| s.p95),
            min: summary.map(|s| s.min),
            max: summary.map(|s| s.max),
            ci: summary.and_then(|s| s.ci),
            n_denominator: None,
            sessions: summary.map_or(0, |s| s.sessions),
        }
    }

    fn paired(summary: Option<Summary>) -> Stat {
        Stat {
            n_denominator: Some(summary.map_or(0, |s| s.n)),
            ..Stat::of(summary)
        }
    }

    fn independent(ratio: Option<Ratio>, numerator: &Point, denominator: &Point) -> Stat {
        Stat {
            n: numerator.values(Measure::MsPer1000Rows).len(),
            median: ratio.map(|r| r.value),
            p95: None,
            min: None,
            max: None,
            ci: ratio.and_then(|r| r.ci),
            n_denominator: Some(denominator.values(Measure::MsPer1000Rows).len()),
            sessions: numerator.sessions().min(denominator.sessions()),
        }
    }
}

/// A point's key among the points of a run, for finding its pair.
type PointKey = (TargetKind, String, Strategy, u64);

fn key_of(point: &Point, target: TargetKind, strategy: Strategy) -> PointKey {
    (
        target,
        point.line.label.clone(),
        strategy,
        point.x.to_bits(),
    )
}

/// The rows of `summary.csv`: every point, every summarized measure, then its ratios: literal ÷
/// bound at the same point, and a target's ÷ the baseline's (bare SQLite's, `ratio_to_sqlite`,
/// or the Durable Object's, `ratio_to_do`: [`TargetKind::baseline_among`]). `precision`: what the
/// profile asked for, if anything.
pub fn summary_rows(rows: &[ProbeRow], axis: Axis, precision: Option<f64>) -> Vec<SummaryRow> {
    let points = points(rows, axis);
    let by_key: BTreeMap<PointKey, &Point> = points
        .iter()
        .map(|p| (key_of(p, p.line.target, p.line.strategy), p))
        .collect();
    let baseline = TargetKind::baseline_among(points.iter().map(|p| p.line.target));
    let mut out = Vec::new();
    for point in &points {
        let mut stats: Vec<(&'static str, Stat, Option<bool>)> = Measure::SUMMARIZED
            .iter()
            .map(|m| {
                let summary = point.summary(*m);
                let reached = precision.map(|p| summary.is_some_and(|s| s.within(p)));
                (m.name(), Stat::of(summary), reached)
            })
            .collect();
        let (target, strategy) = (point.line.target, point.line.strategy);
        if strategy == Strategy::Literal
            && let Some(bound) = by_key.get(&key_of(point, target, Strategy::Bound))
        {
            let ratio = Stat::paired(point.paired_ratio(bound));
            stats.push(("ratio_to_bound", ratio, None));
        }
        if let Some(base) = baseline.filter(|&b| b != target)
            && let Some(theirs) = by_key.get(&key_of(point, base, strategy))
        {
            let ratio = point.independent_ratio(theirs);
            let ratio = Stat::independent(ratio, point, theirs);
            stats.push((base.ratio_stat(), ratio, None));
        }
        let first = point.rows[0];
        for (measure, stat, precision_reached) in stats {
            let ci = stat.ci;
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
                measure,
                n: stat.n,
                ok: point.ok(),
                refused: point.refused(),
                errors: point.errors(),
                median: stat.median,
                p95: stat.p95,
                min: stat.min,
                max: stat.max,
                ci_low: ci.map(|ci| ci.low),
                ci_high: ci.map(|ci| ci.high),
                ci_coverage: ci.map(|ci| ci.coverage),
                ci_method: ci.map(|ci| ci.method.name()),
                n_denominator: stat.n_denominator,
                precision,
                precision_reached,
                nul_share: first.nul_share,
                sessions: stat.sessions,
                detectable: ci.and_then(|ci| {
                    crate::stats::power::detectable_from_interval(
                        stat.median?,
                        ci,
                        stat.sessions,
                        sessions::FALSE_DISCOVERY_RATE,
                    )
                }),
            });
        }
    }
    out
}

/// `summary.csv` as bytes.
pub fn summary_csv(rows: &[ProbeRow], axis: Axis, precision: Option<f64>) -> Result<Vec<u8>> {
    summary_csv_of(summary_rows(rows, axis, precision))
}

/// `summary.csv` of a grid: the rows of [`summary_rows`] along `axis`, one value of `y_axis`
/// after the other, so no point mixes two values of the grid's second axis.
pub fn grid_summary_csv(
    rows: &[ProbeRow],
    axis: Axis,
    y_axis: Axis,
    precision: Option<f64>,
) -> Result<Vec<u8>> {
    let mut ys: Vec<f64> = rows.iter().map(|r| r.at(y_axis)).collect();
    ys.sort_by(f64::total_cmp);
    ys.dedup();
    let mut out = Vec::new();
    for y in ys {
        let slice: Vec<ProbeRow> = rows.iter().filter(|r| r.at(y_axis) == y).cloned().collect();
        out.extend(summary_rows(&slice, axis, precision));
    }
    summary_csv_of(out)
}

fn summary_csv_of(summary: Vec<SummaryRow>) -> Result<Vec<u8>> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    for row in summary {
        writer
            .serialize(&row)
            .context("cannot serialize a summary row")?;
    }
    writer
        .into_inner()
        .context("cannot finish summary.csv in memory")
}

#[cfg(test)]
mod tests;
