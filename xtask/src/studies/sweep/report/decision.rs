//! The decision map of a grid run: for each cell (x and y of the grid), the fastest strategy on
//! the run's target by the paired comparison of repeats, its margin over the runner-up (their
//! paired ratio with its interval, from [`super::points`], at least 1 by construction), and the strategies that were refused there or could not run by
//! construction, each with the limit that stopped it; and what the cell decides
//! ([`super::verdict`]), over the sessions of one run or over a replicate set's runs
//! ([`cells_over_runs`]). One computation for the table, the CSV, the chart and the advice.

use d1bench_core::sql::Wall;
use d1bench_core::{ProbeRequest, RefusalKind, Strategy, TextMix};

use super::intervals::Basis;
use super::points::{Measure, Point, points};
use super::verdict::{self, Judged, RUN_STRIDE, Verdict};
use crate::base::TargetKind;
use crate::stats::Summary;
use crate::stats::decide::Evidence;
use crate::stats::runs::Schedules;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// Why a strategy has no time at a cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stopped {
    /// Every repeat was refused, for this reason.
    Refused(RefusalKind),
    /// The experiment left it out here: a documented limit of the target's engine refuses even
    /// one row.
    ByConstruction(Wall),
    /// The experiment left it out here though no documented limit of the target's engine stops
    /// it (a grid kept alike across engines: `experiments/decision-map-postgres.toml`).
    LeftOut,
}

impl Stopped {
    /// The limit, in a few words.
    pub fn limit(&self) -> &'static str {
        let kind = match self {
            Stopped::Refused(kind) => *kind,
            Stopped::ByConstruction(wall) => wall.refusal,
            Stopped::LeftOut => return "not in the grid",
        };
        match kind {
            RefusalKind::StatementTooLong => "statement length",
            RefusalKind::TooManyVariables => "bound parameters",
            RefusalKind::StringOrBlobTooBig => "string size",
            RefusalKind::TooManyColumns => "columns",
            RefusalKind::QueryBudget => "query budget",
            RefusalKind::QueryTimeout | RefusalKind::CpuTimeLimit => "time",
            _ => "other",
        }
    }
}

/// One cell of the map.
#[derive(Debug, Clone)]
pub struct Cell {
    pub x: f64,
    pub y: f64,
    /// Strategies that succeeded in every repeat, fastest first by the paired comparison
    /// ([`rank`]), with their ms per 1,000 rows.
    pub ranked: Vec<(Strategy, Summary)>,
    /// The runner-up ÷ the fastest, repeat by repeat: at least 1 by the ranking's
    /// construction; `None` with fewer than two ranked or no repeat in common.
    pub margin: Option<Summary>,
    /// Strategies with no time here, and why.
    pub stopped: Vec<(Strategy, Stopped)>,
    /// Each other ranked strategy ÷ the fastest, in ranked order (the runner-up first), with
    /// the tests of it.
    pub evidence: Vec<(Strategy, Evidence)>,
    /// What the cell decides, judged with the map's other cells ([`verdict::judge`]).
    pub verdict: Verdict,
}

impl Cell {
    pub fn fastest(&self) -> Option<Strategy> {
        self.ranked.first().map(|(s, _)| *s)
    }

    pub fn runner_up(&self) -> Option<Strategy> {
        self.ranked.get(1).map(|(s, _)| *s)
    }

    /// Whether the cell decides: a winner, the only strategy, or an equivalent set.
    pub fn clear(&self) -> bool {
        self.verdict.decides()
    }

    /// The answer in words ([`Verdict::text`]): `json`, `literal = exec, ±10%`, `json or exec`.
    pub fn answer(&self) -> String {
        self.verdict.text()
    }
}

/// The cells of a replicate set (each run's rows), judged over runs: sessions renumbered apart
/// ([`RUN_STRIDE`]), ranked by the paired comparison over every run, each margin's interval t
/// over the runs.
pub fn cells_over_runs(
    runs: &[Vec<ProbeRow>],
    schedules: &Schedules,
    target: TargetKind,
    x_axis: Axis,
    y_axis: Axis,
) -> Vec<Cell> {
    let rows: Vec<ProbeRow> = runs
        .iter()
        .enumerate()
        .flat_map(|(r, rows)| {
            rows.iter().map(move |row| ProbeRow {
                session: r * RUN_STRIDE + row.session,
                ..row.clone()
            })
        })
        .collect();
    cells_scheduled(&rows, schedules, target, x_axis, y_axis)
}

/// What the intervals of the map are taken over: between sessions when any margin's is.
pub fn basis(cells: &[Cell]) -> Basis {
    match cells
        .iter()
        .filter_map(|c| c.margin.map(|m| m.sessions))
        .max()
    {
        Some(n) if n >= 2 => Basis::BetweenSessions(n),
        _ => Basis::WithinOneSession,
    }
}

/// The cells of `rows` on `target`, over `x_axis` × `y_axis`, ordered by y then x. Every
/// strategy the run measured anywhere is accounted for in every cell: ranked, refused, left
/// out by construction (the target's engine's wall at the cell's parameters,
/// [`TargetKind::wall`]), or left out of the grid.
pub fn cells(rows: &[ProbeRow], target: TargetKind, x_axis: Axis, y_axis: Axis) -> Vec<Cell> {
    cells_scheduled(rows, &Schedules::default(), target, x_axis, y_axis)
}

/// [`cells`] of the runs of a replicate set ([`cells_over_runs`]'s sessions), with which of them
/// replayed one schedule.
fn cells_scheduled(
    rows: &[ProbeRow],
    schedules: &Schedules,
    target: TargetKind,
    x_axis: Axis,
    y_axis: Axis,
) -> Vec<Cell> {
    let mine: Vec<ProbeRow> = rows
        .iter()
        .filter(|r| r.target == target)
        .cloned()
        .collect();
    let mut strategies: Vec<Strategy> = mine.iter().map(|r| r.strategy).collect();
    strategies.sort();
    strategies.dedup();
    let mut ys: Vec<f64> = mine.iter().map(|r| r.at(y_axis)).collect();
    ys.sort_by(f64::total_cmp);
    ys.dedup();
    let mut out = Vec::new();
    for y in ys {
        let slice: Vec<ProbeRow> = mine.iter().filter(|r| r.at(y_axis) == y).cloned().collect();
        let slice_points = points(&slice, x_axis);
        let mut xs: Vec<f64> = slice_points.iter().map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        for x in xs {
            let here: Vec<&Point> = slice_points.iter().filter(|p| p.x == x).collect();
            out.push(cell(
                x,
                y,
                &here,
                &strategies,
                schedules,
                target,
                Absent::LeftOut,
            ));
        }
    }
    judge(&mut out);
    out
}

/// Every cell's verdict, judged with the map's other cells ([`verdict::judge`]).
fn judge(cells: &mut [Cell]) {
    let judged: Vec<Judged> = cells
        .iter()
        .map(|c| Judged {
            fastest: c.fastest(),
            runner_up: c.runner_up(),
            margin_excludes_one: c
                .margin
                .and_then(|m| m.ci)
                .is_some_and(|ci| ci.low > 1.0 || ci.high < 1.0),
            evidence: &c.evidence,
        })
        .collect();
    let verdicts = verdict::judge(&judged);
    for (cell, verdict) in cells.iter_mut().zip(verdicts) {
        cell.verdict = verdict;
    }
}

/// The cells of a sweep along one axis on `target`: one series (label) after the other, each
/// ordered by x, ranked as a grid's cells are. A sweep has no second axis: each cell's `y` is 0.
pub fn cells_along(rows: &[ProbeRow], target: TargetKind, axis: Axis) -> Vec<(String, Cell)> {
    let mine: Vec<ProbeRow> = rows
        .iter()
        .filter(|r| r.target == target)
        .cloned()
        .collect();
    let mut strategies: Vec<Strategy> = mine.iter().map(|r| r.strategy).collect();
    strategies.sort();
    strategies.dedup();
    let mut labels: Vec<String> = mine.iter().map(|r| r.label.clone()).collect();
    labels.sort();
    labels.dedup();
    let mut out = Vec::new();
    for label in labels {
        let slice: Vec<ProbeRow> = mine.iter().filter(|r| r.label == label).cloned().collect();
        let slice_points = points(&slice, axis);
        let mut xs: Vec<f64> = slice_points.iter().map(|p| p.x).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        for x in xs {
            let here: Vec<&Point> = slice_points.iter().filter(|p| p.x == x).collect();
            out.push((
                label.clone(),
                cell(
                    x,
                    0.0,
                    &here,
                    &strategies,
                    &Schedules::default(),
                    target,
                    Absent::Unsaid,
                ),
            ));
        }
    }
    let mut cells: Vec<Cell> = out.iter().map(|(_, c)| c.clone()).collect();
    judge(&mut cells);
    out.into_iter()
        .zip(cells)
        .map(|((label, _), cell)| (label, cell))
        .collect()
}

/// What a cell says of a strategy measured elsewhere but not here, when no limit of the target's
/// engine stops it there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Absent {
    /// A grid's cell: [`Stopped::LeftOut`], so every cell accounts for every strategy.
    LeftOut,
    /// A sweep's point: nothing. A sweep's series are curves of their own, each with the
    /// strategies it names, and a point is compared within its series.
    Unsaid,
}

fn cell(
    x: f64,
    y: f64,
    here: &[&Point],
    strategies: &[Strategy],
    schedules: &Schedules,
    target: TargetKind,
    absent: Absent,
) -> Cell {
    let mut ranked: Vec<(Strategy, Summary, &Point)> = Vec::new();
    let mut stopped = Vec::new();
    for point in here {
        let strategy = point.line.strategy;
        if point.ok() > 0 && point.refused() == 0 && point.errors() == 0 {
            if let Some(summary) = point.summary(Measure::MsPer1000Rows) {
                ranked.push((strategy, summary, point));
            }
        } else if point.refused() > 0 {
            let kind = point
                .rows
                .iter()
                .find_map(|r| r.refusal)
                .unwrap_or(RefusalKind::Other);
            stopped.push((strategy, Stopped::Refused(kind)));
        }
    }
    let (ranked, mut margin) = rank(ranked);
    let evidence: Vec<(Strategy, Option<Evidence>)> = match ranked.first() {
        Some((_, _, fastest)) => ranked[1..]
            .iter()
            .map(|(s, _, p)| {
                let ratios = p.paired_ratios_by_session(fastest);
                (*s, verdict::evidence(&ratios, schedules))
            })
            .collect(),
        None => Vec::new(),
    };
    // The runner-up's evidence comes first, or there is none to judge by.
    let evidence: Vec<(Strategy, Evidence)> = match evidence.first() {
        Some((_, None)) | None => Vec::new(),
        Some(_) => evidence
            .into_iter()
            .filter_map(|(s, e)| Some((s, e?)))
            .collect(),
    };
    // Over runs the margin is the estimate over runs, the one the verdict reads.
    if let (Some(m), Some((_, e))) = (margin.as_mut(), evidence.first())
        && e.unit == crate::stats::decide::Unit::Runs
    {
        m.median = e.center;
        m.ci = e.ci95;
    }
    // The strategies measured elsewhere but not here: what stops them on this target's engine,
    // by construction, or nothing (the experiment left them out).
    if let Some(sample) = here.first().map(|p| p.rows[0]) {
        for &strategy in strategies {
            if here.iter().any(|p| p.line.strategy == strategy) {
                continue;
            }
            let probe = ProbeRequest {
                probe_id: 0,
                strategy,
                columns: sample.columns,
                rows: 1,
                row_bytes: sample.row_bytes,
                seed: sample.seed,
                rows_per_statement: None,
                json_payload_bytes: None,
                text: TextMix {
                    escape_share: sample.escape_share,
                    nul_share: sample.nul_share,
                    non_ascii_share: sample.non_ascii_share,
                },
                indexes: sample.indexes,
                debug_corrupt: None,
                debug_slow_percent: None,
            };
            match (target.wall(&probe), absent) {
                (Some(wall), _) => stopped.push((strategy, Stopped::ByConstruction(wall))),
                (None, Absent::LeftOut) => stopped.push((strategy, Stopped::LeftOut)),
                (None, Absent::Unsaid) => {}
            }
        }
    }
    stopped.sort_by_key(|(s, _)| Strategy::REPORT_ORDER.iter().position(|o| o == s));
    Cell {
        x,
        y,
        ranked: ranked.into_iter().map(|(s, m, _)| (s, m)).collect(),
        margin,
        stopped,
        evidence,
        verdict: Verdict::NothingRan,
    }
}

/// Ranks the strategies of a cell by the paired comparison, and gives the margin of the first
/// over the second: the runner-up ÷ the fastest, the median of their paired repeats' ratios.
///
/// A strategy *holds* against another when the median of the other's paired ratios to it is at
/// least 1. The ranking counts, for each strategy, the others it holds against (the most first,
/// then the lower median time); so a strategy that holds against every other comes first. The
/// first two are then put in the order their own paired comparison gives, so the margin is at
/// least 1 by construction: when the median of a's ratios to b is below 1, the median of b's to
/// a is above 1 (the same pairs inverted; for an even count the mean of two reciprocals is at
/// least the reciprocal of their mean). Without pairs (no common repeat), median time decides.
fn rank<'p>(
    mut ranked: Vec<(Strategy, Summary, &'p Point<'p>)>,
) -> (Vec<(Strategy, Summary, &'p Point<'p>)>, Option<Summary>) {
    let holds = |a: &Point, b: &Point| b.paired_ratio(a).is_some_and(|r| r.median >= 1.0);
    let wins: Vec<usize> = ranked
        .iter()
        .map(|(_, _, a)| {
            ranked
                .iter()
                .filter(|(_, _, b)| !std::ptr::eq(*a, *b) && holds(a, b))
                .count()
        })
        .collect();
    let mut order: Vec<usize> = (0..ranked.len()).collect();
    order.sort_by(|&i, &j| {
        wins[j]
            .cmp(&wins[i])
            .then(ranked[i].1.median.total_cmp(&ranked[j].1.median))
    });
    let mut slots: Vec<Option<_>> = ranked.drain(..).map(Some).collect();
    let mut ranked: Vec<_> = order.iter().filter_map(|&i| slots[i].take()).collect();
    let margin = match ranked.as_mut_slice() {
        [first, second, ..] => match second.2.paired_ratio(first.2) {
            Some(m) if m.median < 1.0 => {
                std::mem::swap(first, second);
                second.2.paired_ratio(first.2)
            }
            m => m,
        },
        _ => None,
    };
    (ranked, margin)
}

/// `1.82 (1.51–2.04)`, or the median alone without an interval.
pub fn with_interval(summary: &Summary, decimals: usize) -> String {
    match summary.ci {
        Some(ci) => format!(
            "{:.d$} ({:.d$}–{:.d$})",
            summary.median,
            ci.low,
            ci.high,
            d = decimals
        ),
        None => format!("{:.d$}", summary.median, d = decimals),
    }
}

/// What stops the strategies of a cell: `literal, exec: statement length (by construction)`.
pub fn stopped_text(cell: &Cell) -> String {
    let mut parts: Vec<String> = Vec::new();
    for (strategy, stopped) in &cell.stopped {
        let how = match stopped {
            Stopped::Refused(_) => "refused, ",
            Stopped::ByConstruction(_) => "cannot run, ",
            Stopped::LeftOut => "",
        };
        parts.push(format!("{strategy}: {how}{}", stopped.limit()));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::studies::sweep::row::tests_support;
    use d1bench_core::Outcome;

    fn row(
        strategy: Strategy,
        columns: usize,
        row_bytes: usize,
        repeat: usize,
        ms: f64,
    ) -> ProbeRow {
        ProbeRow {
            target: TargetKind::Local,
            strategy,
            columns,
            row_bytes,
            rows: 1_000,
            repeat,
            outcome: Outcome::Ok,
            outside_ms: ms,
            prepare_ms: Some(0.0),
            ..tests_support::row()
        }
    }

    #[test]
    fn each_cell_names_its_fastest_its_margin_and_what_stopped_the_others() {
        let mut rows = Vec::new();
        for repeat in 0..5 {
            let jitter = repeat as f64;
            // At 8 columns of 1,000 bytes json is clearly fastest; at 8 columns of 200,000
            // bytes literal and exec cannot run and bound and json are within noise.
            rows.push(row(Strategy::Json, 8, 1_000, repeat, 10.0 + jitter));
            rows.push(row(Strategy::Literal, 8, 1_000, repeat, 20.0 + jitter));
            rows.push(row(Strategy::Exec, 8, 1_000, repeat, 30.0 + jitter));
            rows.push(row(Strategy::Bound, 8, 200_000, repeat, 50.0 + jitter));
            rows.push(row(
                Strategy::Json,
                8,
                200_000,
                repeat,
                49.5 + (4.0 - jitter),
            ));
        }
        let mut refused = row(Strategy::Literal, 16, 1_000, 0, 1.0);
        refused.outcome = Outcome::Refused;
        refused.refusal = Some(RefusalKind::StatementTooLong);
        rows.push(refused);
        rows.push(row(Strategy::Json, 16, 1_000, 0, 5.0));
        let cells = cells(&rows, TargetKind::Local, Axis::Columns, Axis::RowBytes);
        assert_eq!(cells.len(), 3);
        let at = |x: f64, y: f64| cells.iter().find(|c| c.x == x && c.y == y).unwrap();

        let small = at(8.0, 1_000.0);
        assert_eq!(small.fastest(), Some(Strategy::Json));
        assert_eq!(small.runner_up(), Some(Strategy::Literal));
        let margin = small.margin.unwrap();
        assert!(margin.median > 1.5 && small.clear(), "{margin:?}");
        assert_eq!(small.answer(), "json");
        // bound ran only at 200,000-byte rows: left out of this cell, no limit stopping it.
        assert_eq!(small.stopped, [(Strategy::Bound, Stopped::LeftOut)]);

        let fat = at(8.0, 200_000.0);
        // The interval includes 1, and two one-sided tests show the two within ±10%.
        assert_eq!(fat.answer(), "json = bound, ±10%");
        assert!(
            matches!(fat.verdict, Verdict::Equivalent { .. }),
            "{:?}",
            fat.verdict
        );
        let stopped: Vec<Strategy> = fat.stopped.iter().map(|(s, _)| *s).collect();
        assert_eq!(stopped, [Strategy::Literal, Strategy::Exec]);
        assert!(fat.stopped.iter().all(|(_, s)| matches!(
            s,
            Stopped::ByConstruction(w) if w.refusal == RefusalKind::StatementTooLong
        )));

        let wall = at(16.0, 1_000.0);
        assert_eq!(wall.answer(), "json");
        assert_eq!(
            wall.stopped,
            [
                (Strategy::Bound, Stopped::LeftOut),
                (
                    Strategy::Literal,
                    Stopped::Refused(RefusalKind::StatementTooLong)
                ),
                (Strategy::Exec, Stopped::LeftOut)
            ]
        );
        let map = super::super::decision_table::Map {
            target: TargetKind::Local,
            cells: cells.clone(),
            labels: Vec::new(),
        };
        let table =
            super::super::decision_table::markdown_table(&map, Axis::Columns, Axis::RowBytes);
        assert!(table.contains("| 8 | 1000 | **json** |"), "{table}");
        assert!(table.contains(": equivalent ±10%"), "{table}");
        assert!(
            table.contains(
                "literal: cannot run, statement length; exec: cannot run, statement length"
            ),
            "{table}"
        );
        let csv = String::from_utf8(
            super::super::decision_table::csv(&[map], Axis::Columns, Axis::RowBytes).unwrap(),
        )
        .unwrap();
        assert_eq!(csv.lines().count(), 4, "{csv}");
    }

    /// A strategy absent from a cell is named with the wall of the run's own engine: at
    /// 100,000-byte rows literal and exec are past D1's statement length, but not past
    /// Postgres's 1 GiB, so on a Postgres run they were left out of the grid, not stopped.
    #[test]
    fn a_missing_strategy_is_named_by_the_wall_of_the_targets_own_engine() {
        let mut rows = Vec::new();
        for repeat in 0..3 {
            for (strategy, row_bytes) in [
                (Strategy::Literal, 1_000),
                (Strategy::Exec, 1_000),
                (Strategy::Bound, 1_000),
                (Strategy::Bound, 100_000),
            ] {
                rows.push(row(strategy, 8, row_bytes, repeat, 10.0 + repeat as f64));
            }
        }
        let on = |target: TargetKind| {
            let rows: Vec<ProbeRow> = rows
                .iter()
                .map(|r| ProbeRow {
                    target,
                    ..r.clone()
                })
                .collect();
            let cells = cells(&rows, target, Axis::Columns, Axis::RowBytes);
            let fat = cells.iter().find(|c| c.y == 100_000.0).unwrap().clone();
            (stopped_text(&fat), fat.stopped)
        };
        let (d1, stopped) = on(TargetKind::Local);
        assert_eq!(
            d1,
            "literal: cannot run, statement length; exec: cannot run, statement length"
        );
        assert!(
            stopped
                .iter()
                .all(|(_, s)| matches!(s, Stopped::ByConstruction(_)))
        );
        let (pg, stopped) = on(TargetKind::Hyperdrive);
        assert_eq!(pg, "literal: not in the grid; exec: not in the grid");
        assert_eq!(
            stopped,
            [
                (Strategy::Literal, Stopped::LeftOut),
                (Strategy::Exec, Stopped::LeftOut)
            ]
        );
    }

    /// bound has the lower median time (3 against 3.5), but in four repeats of five it ran
    /// slower than literal beside it: ranked by median time, the margin "literal ÷ bound" read
    /// 0.90. Ranked by the paired comparison, literal is the fastest and the margin is 1.11.
    #[test]
    fn the_fastest_is_chosen_by_the_paired_comparison_so_the_margin_is_at_least_one() {
        let bound = [1.0, 2.0, 3.0, 4.0, 5.0];
        let literal = [0.9, 1.8, 3.5, 3.6, 4.5];
        let mut rows = Vec::new();
        for (repeat, (b, l)) in bound.iter().zip(literal).enumerate() {
            rows.push(row(Strategy::Bound, 8, 1_000, repeat, *b));
            rows.push(row(Strategy::Literal, 8, 1_000, repeat, l));
            rows.push(row(Strategy::Exec, 8, 1_000, repeat, 10.0 * b));
        }
        let cells = cells(&rows, TargetKind::Local, Axis::Columns, Axis::RowBytes);
        let cell = &cells[0];
        assert_eq!(cell.fastest(), Some(Strategy::Literal), "{:?}", cell.ranked);
        assert_eq!(cell.runner_up(), Some(Strategy::Bound));
        let ranked: Vec<Strategy> = cell.ranked.iter().map(|(s, _)| *s).collect();
        assert_eq!(ranked, [Strategy::Literal, Strategy::Bound, Strategy::Exec]);
        let margin = cell.margin.unwrap();
        assert!((margin.median - 1.0 / 0.9).abs() < 1e-9, "{margin:?}");
    }

    /// Whatever the repeats, the margin a cell reports is at least 1: random times for three
    /// strategies, with ties and cycles among them, odd and even repeat counts.
    #[test]
    fn the_margin_is_never_below_one() {
        let mut state: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 1_000) as f64 / 100.0 + 1.0
        };
        for case in 0..300 {
            let repeats = 2 + case % 6;
            let mut rows = Vec::new();
            for repeat in 0..repeats {
                for strategy in [Strategy::Bound, Strategy::Literal, Strategy::Json] {
                    rows.push(row(strategy, 8, 1_000, repeat, next()));
                }
            }
            let cells = cells(&rows, TargetKind::Local, Axis::Columns, Axis::RowBytes);
            let margin = cells[0].margin.unwrap();
            assert!(margin.median >= 1.0, "case {case}: {margin:?}");
        }
    }
}
