//! What a sweep run's page says first, taken from the run's results.csv by the code that writes
//! its summary.csv, summary.md and decision map, so the page cannot tell another story: which
//! strategy is fastest at each point (the decision map's paired ranking), where literal ÷ bound
//! lies wholly on one side of 1, the target ÷ bare SQLite over the points, and each point's
//! estimate with the sessions' values it was taken over. Pure: rows in, figures out.

use d1bench_core::Strategy;

use crate::base::TargetKind;
use crate::stats::{Summary, median};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::decision::{self, Cell};
use crate::studies::sweep::report::detectable;
use crate::studies::sweep::report::intervals::Basis;
use crate::studies::sweep::report::points::{Measure, Point, points, summary_rows};
use crate::studies::sweep::row::ProbeRow;

/// Which side of 1 an interval lies wholly on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Wholly below 1: the numerator is faster.
    Below,
    /// Wholly above 1: the denominator is faster.
    Above,
    /// The interval includes 1, or there is none: the run cannot tell.
    Neither,
}

impl Side {
    pub fn of(summary: &Summary) -> Side {
        match summary.ci {
            Some(ci) if ci.high < 1.0 => Side::Below,
            Some(ci) if ci.low > 1.0 => Side::Above,
            _ => Side::Neither,
        }
    }
}

/// The fastest strategy at one point of one series, or one cell of a grid.
#[derive(Debug, Clone)]
pub struct Answer {
    /// The series' label; empty when it has none.
    pub label: String,
    /// A grid's second coordinate; `None` along one axis.
    pub y: Option<f64>,
    pub cell: Cell,
}

/// One point's estimate and the values of the sessions it was taken over.
#[derive(Debug, Clone)]
pub struct SpreadRow {
    pub x: f64,
    /// As summary.csv has it: over two sessions or more the geometric mean of the sessions'
    /// values with its interval between sessions, within one session the median with its
    /// order-statistic interval; `None` where nothing succeeded.
    pub summary: Option<Summary>,
    /// Each session's value: the median of its repeats (of its paired ratios, for a ratio).
    pub sessions: Vec<f64>,
}

/// One figure of points: a strategy's time per 1,000 rows, or literal ÷ bound, along the axis.
#[derive(Debug, Clone)]
pub struct Spread {
    /// The series' label; empty when it has none.
    pub label: String,
    /// What the values are: `bound: ms per 1,000 rows`, `literal ÷ bound`.
    pub title: String,
    /// Drawn as a dashed line: 1 for a ratio.
    pub reference: Option<f64>,
    pub rows: Vec<SpreadRow>,
}

/// literal ÷ bound along the axis, one series: where its interval lies.
#[derive(Debug, Clone)]
pub struct LiteralToBound {
    pub label: String,
    pub rows: Vec<SpreadRow>,
}

impl LiteralToBound {
    /// The points whose interval lies on `side`, as the axis writes them.
    pub fn at(&self, side: Side, axis: Axis) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| r.summary.as_ref().map_or(Side::Neither, Side::of) == side)
            .map(|r| axis.format(r.x))
            .collect()
    }
}

/// What a sweep run's page says first.
#[derive(Debug, Clone)]
pub struct Findings {
    pub target: TargetKind,
    pub axis: Axis,
    /// A grid's second axis.
    pub y_axis: Option<Axis>,
    /// What the intervals are taken over.
    pub basis: Basis,
    /// The fastest strategy at each point (each cell of a grid).
    pub answers: Vec<Answer>,
    /// literal ÷ bound, by series (along one axis only).
    pub literal_to_bound: Vec<LiteralToBound>,
    /// The target ÷ the baseline (bare SQLite, or the Durable Object) on the inside clocks,
    /// each strategy's lowest and highest over the points (along one axis only, with a baseline).
    pub baseline: Vec<(Strategy, f64, f64)>,
    /// What the baseline ran on.
    pub baseline_target: Option<TargetKind>,
    /// Each strategy's points with their sessions, then literal ÷ bound's (along one axis only).
    pub spreads: Vec<Spread>,
    /// What a replicate of the run could detect, summary.md's table; empty within one session
    /// and for a grid.
    pub detectable: Vec<detectable::DetectableRow>,
}

/// The strategies of `target` among `points`, in the reports' order.
fn strategies(points: &[Point], target: TargetKind) -> Vec<Strategy> {
    Strategy::REPORT_ORDER
        .iter()
        .copied()
        .filter(|s| {
            points
                .iter()
                .any(|p| p.line.target == target && p.line.strategy == *s)
        })
        .collect()
}

/// The series' labels of `target` among `points`, sorted (the empty label first).
fn labels(points: &[Point], target: TargetKind) -> Vec<String> {
    let mut labels: Vec<String> = points
        .iter()
        .filter(|p| p.line.target == target)
        .map(|p| p.line.label.clone())
        .collect();
    labels.sort();
    labels.dedup();
    labels
}

/// The findings of a sweep run's `rows` (its default instrument's: see
/// `sweep::report::default_instrument`) on `target`.
pub fn findings(
    rows: &[ProbeRow],
    target: TargetKind,
    axis: Axis,
    y_axis: Option<Axis>,
) -> Findings {
    let basis = Basis::of(rows, target);
    if let Some(y_axis) = y_axis {
        let answers = decision::cells(rows, target, axis, y_axis)
            .into_iter()
            .map(|cell| Answer {
                label: String::new(),
                y: Some(cell.y),
                cell,
            })
            .collect();
        return Findings {
            target,
            axis,
            y_axis: Some(y_axis),
            basis,
            answers,
            literal_to_bound: Vec::new(),
            baseline: Vec::new(),
            baseline_target: None,
            spreads: Vec::new(),
            detectable: Vec::new(),
        };
    }
    let answers = decision::cells_along(rows, target, axis)
        .into_iter()
        .map(|(label, cell)| Answer {
            label,
            y: None,
            cell,
        })
        .collect();
    let all = points(rows, axis);
    let at = |label: &str, strategy: Strategy, on: TargetKind, x: f64| {
        all.iter().find(|p| {
            p.line.target == on && p.line.label == label && p.line.strategy == strategy && p.x == x
        })
    };
    let mut spreads = Vec::new();
    let mut literal_to_bound = Vec::new();
    let mut baseline: Vec<(Strategy, f64, f64)> = Vec::new();
    let base = TargetKind::baseline_among(all.iter().map(|p| p.line.target));
    for label in labels(&all, target) {
        for strategy in strategies(&all, target) {
            let line: Vec<&Point> = all
                .iter()
                .filter(|p| {
                    p.line.target == target && p.line.label == label && p.line.strategy == strategy
                })
                .collect();
            let rows = line
                .iter()
                .map(|p| SpreadRow {
                    x: p.x,
                    summary: p.summary(Measure::MsPer1000Rows),
                    sessions: p
                        .session_medians(Measure::MsPer1000Rows)
                        .into_values()
                        .collect(),
                })
                .collect();
            spreads.push(Spread {
                label: label.clone(),
                title: format!("{strategy}: ms per 1,000 rows"),
                reference: None,
                rows,
            });
            for point in &line {
                let Some(base) = base.filter(|&b| b != target) else {
                    continue;
                };
                let Some(theirs) = at(&label, strategy, base, point.x) else {
                    continue;
                };
                let Some(ratio) = point.independent_ratio(theirs) else {
                    continue;
                };
                match baseline.iter_mut().find(|(s, _, _)| *s == strategy) {
                    Some((_, low, high)) => {
                        *low = low.min(ratio.value);
                        *high = high.max(ratio.value);
                    }
                    None => baseline.push((strategy, ratio.value, ratio.value)),
                }
            }
        }
        let ratios: Vec<SpreadRow> = all
            .iter()
            .filter(|p| {
                p.line.target == target
                    && p.line.label == label
                    && p.line.strategy == Strategy::Literal
            })
            .filter_map(|literal| {
                let bound = at(&label, Strategy::Bound, target, literal.x)?;
                Some(SpreadRow {
                    x: literal.x,
                    summary: Some(literal.paired_ratio(bound)?),
                    sessions: literal
                        .paired_ratios_by_session(bound)
                        .values()
                        .filter_map(|v| median(v))
                        .collect(),
                })
            })
            .collect();
        if !ratios.is_empty() {
            spreads.push(Spread {
                label: label.clone(),
                title: "literal ÷ bound (paired by repeat)".to_owned(),
                reference: Some(1.0),
                rows: ratios.clone(),
            });
            literal_to_bound.push(LiteralToBound {
                label,
                rows: ratios,
            });
        }
    }
    Findings {
        target,
        axis,
        y_axis: None,
        basis,
        answers,
        literal_to_bound,
        baseline,
        baseline_target: base,
        spreads,
        detectable: detectable::rows(&summary_rows(rows, axis, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::report::points::summary_rows;
    use crate::studies::sweep::row::tests_support;

    /// A repeat of `strategy` at `columns` in `session`, `ms` per probe of 100 rows.
    fn row(strategy: Strategy, columns: usize, session: usize, repeat: usize, ms: f64) -> ProbeRow {
        let mut row = tests_support::row();
        row.strategy = strategy;
        row.columns = columns;
        row.session = session;
        row.repeat = repeat;
        row.outside_ms = ms;
        row.prepare_ms = Some(0.0);
        row
    }

    #[test]
    fn the_findings_are_the_figures_summary_csv_holds() {
        let mut rows = Vec::new();
        for session in 0..3 {
            for repeat in 0..3 {
                let noise = (session * 3 + repeat) as f64;
                rows.push(row(Strategy::Bound, 8, session, repeat, 10.0 + noise));
                rows.push(row(
                    Strategy::Literal,
                    8,
                    session,
                    repeat,
                    5.0 + noise / 10.0,
                ));
                rows.push(row(Strategy::Bound, 64, session, repeat, 30.0 + noise));
                // Faster in one session, slower in another: no side.
                let factor = [1.2, 0.8, 1.0][session];
                rows.push(row(
                    Strategy::Literal,
                    64,
                    session,
                    repeat,
                    (30.0 + noise) * factor,
                ));
            }
        }
        let target = rows[0].target;
        let found = findings(&rows, target, Axis::Columns, None);
        assert_eq!(found.basis, Basis::BetweenSessions(3));
        // literal ÷ bound: the summary's own ratio_to_bound, point by point.
        let summary = summary_rows(&rows, Axis::Columns, None);
        let ratio_rows: Vec<_> = summary
            .iter()
            .filter(|r| r.measure == "ratio_to_bound")
            .collect();
        let [ratios] = found.literal_to_bound.as_slice() else {
            panic!("{:?}", found.literal_to_bound);
        };
        assert_eq!(ratios.rows.len(), 2);
        for (ours, theirs) in ratios.rows.iter().zip(&ratio_rows) {
            let s = ours.summary.unwrap();
            assert_eq!(Some(s.median), theirs.median);
            assert_eq!(s.ci.map(|c| c.low), theirs.ci_low);
            assert_eq!(ours.sessions.len(), 3);
        }
        assert_eq!(ratios.at(Side::Below, Axis::Columns), ["8"]);
        assert_eq!(ratios.at(Side::Neither, Axis::Columns), ["64"]);
        // The fastest at 8 columns is literal, clearly; each strategy's spread has its
        // sessions' medians, whose geometric mean is the estimate.
        assert_eq!(found.answers[0].cell.fastest(), Some(Strategy::Literal));
        assert_eq!(found.answers[0].cell.answer(), "literal");
        let bound = &found.spreads[0];
        assert_eq!(bound.title, "bound: ms per 1,000 rows");
        let logs: f64 = bound.rows[0].sessions.iter().map(|v| v.ln()).sum::<f64>() / 3.0;
        let estimate = bound.rows[0].summary.unwrap().median;
        assert!((logs.exp() - estimate).abs() < 1e-9, "{estimate}");
        assert!(found.baseline.is_empty());
    }
}
