//! The decision maps of a run or a replicate set, one per target (the run's beside its
//! baseline's), and the map as text: summary.md's table of what each cell decides, the terminal's
//! lead (the answer first) and `decision-map.csv`.

use std::fmt::Write;

use anyhow::{Context, Result};
use d1bench_core::Strategy;
use serde::Serialize;

use super::decision::{Cell, basis, stopped_text, with_interval};
use super::intervals::Basis;
use super::verdict::CORRECTION;
use crate::base::TargetKind;
use crate::stats::decide::Unit;
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// One target's map: its cells, judged together.
#[derive(Debug, Clone)]
pub struct Map {
    pub target: TargetKind,
    pub cells: Vec<Cell>,
    /// The series label of each cell along one axis (empty for a grid's cells).
    pub labels: Vec<String>,
}

impl Map {
    /// How many cells decide (a winner, the only one, an equivalent set), of how many.
    pub fn decided(&self) -> (usize, usize) {
        let n = self.cells.iter().filter(|c| c.verdict.decides()).count();
        (n, self.cells.len())
    }

    /// What a unit of the intervals is: runs in a replicate set, else sessions or repeats.
    pub fn unit(&self) -> Option<Unit> {
        self.cells
            .iter()
            .find_map(|c| c.evidence.first().map(|(_, e)| e.unit))
    }
}

/// The margin with its interval and the verdict's note: `1.24 (1.10–1.39)`,
/// `1.02 (0.98–1.06): equivalent ±10%`.
pub fn margin_text(cell: &Cell) -> String {
    cell.margin.map_or("-".into(), |m| {
        format!("{}{}", with_interval(&m, 2), cell.verdict.note())
    })
}

/// The summary table of one map: for C columns and B bytes, use X.
pub fn markdown_table(map: &Map, x_axis: Axis, y_axis: Axis) -> String {
    let mut out = format!(
        "| {} | {} | use | ms per 1,000 rows (interval) | runner-up | runner-up ÷ fastest (interval) | stopped by a limit |\n| --- | --- | --- | --- | --- | --- | --- |\n",
        x_axis.name(),
        y_axis.name()
    );
    for cell in &map.cells {
        let fastest = cell.ranked.first();
        writeln!(
            out,
            "| {} | {} | **{}** | {} | {} | {} | {} |",
            x_axis.format(cell.x),
            y_axis.format(cell.y),
            cell.answer(),
            fastest.map_or("-".into(), |(_, s)| with_interval(s, 1)),
            cell.runner_up().map_or("-".into(), |s| s.to_string()),
            margin_text(cell),
            match stopped_text(cell) {
                text if text.is_empty() => "-".to_owned(),
                text => text,
            }
        )
        .unwrap();
    }
    let (decided, all) = map.decided();
    writeln!(
        out,
        "\n{decided} of {all} cells decide: a winner whose interval excludes 1, or strategies \
         shown equivalent to the fastest within ±10% by two one-sided tests (the 90% interval \
         within 1/1.10–1.10); the others are undecided, with the {} a decision would need at \
         the spread seen (80% power). Corrected over the cells: {CORRECTION}.",
        map.unit().unwrap_or(Unit::Sessions).plural()
    )
    .unwrap();
    out.push_str(&intervals_line(&map.cells));
    out
}

/// What the intervals are taken over, in one line.
fn intervals_line(cells: &[Cell]) -> String {
    if cells.iter().any(|c| {
        c.evidence
            .first()
            .is_some_and(|(_, e)| e.unit == Unit::Runs)
    }) {
        let runs = cells
            .iter()
            .filter_map(|c| c.evidence.first().map(|(_, e)| e.units))
            .max()
            .unwrap_or(0);
        return format!(
            "\nIntervals: between runs ({runs} replicate runs, sessions nested in each): Student's \
             t at 95% on the logarithms of each run's value (the geometric mean of its sessions' \
             median paired ratios).\n"
        );
    }
    let mut coverages: Vec<(usize, f64)> = cells
        .iter()
        .flat_map(|c| {
            c.ranked
                .first()
                .map(|(_, s)| s)
                .into_iter()
                .chain(c.margin.as_ref())
        })
        .filter_map(|s| s.ci.map(|ci| (s.n, ci.coverage)))
        .collect();
    coverages.sort_by_key(|c| c.0);
    coverages.dedup_by_key(|c| c.0);
    match basis(cells) {
        Basis::BetweenSessions(sessions) => format!(
            "\nIntervals: between sessions ({sessions} sessions, each a fresh target): Student's \
             t at 95% on the logarithms of each session's value (the fastest's median; the \
             median of the session's paired ratios).\n"
        ),
        _ if !coverages.is_empty() => {
            let each: Vec<String> = coverages
                .iter()
                .map(|(n, c)| format!("{:.2}% at n={n}", c * 100.0))
                .collect();
            format!(
                "\nIntervals: the median's order-statistic interval within one session, covering \
                 {} (95% needs 6 or more repeats); another session may land outside it. The \
                 tests of one session take its repeats as the units.\n",
                each.join(", ")
            )
        }
        _ => String::new(),
    }
}

/// The answer first, one line per cell: `8 columns × 1000 bytes: json, ×1.24 (1.10–1.39) over
/// bound`.
pub fn lead(map: &Map, x_axis: Axis, y_axis: Option<Axis>) -> String {
    let mut out = String::new();
    for (i, cell) in map.cells.iter().enumerate() {
        let series = match map.labels.get(i) {
            Some(label) if !label.is_empty() => format!("{label}, "),
            _ => String::new(),
        };
        let at = match y_axis {
            Some(y) => format!(
                "{} {} × {} {}",
                x_axis.format(cell.x),
                x_axis.name(),
                y.format(cell.y),
                y.name()
            ),
            None => format!("{} {}", x_axis.format(cell.x), x_axis.name()),
        };
        let margin = match (cell.runner_up(), cell.margin) {
            (Some(r), Some(m)) => format!(
                ", runner-up {r} ×{}{}",
                with_interval(&m, 2),
                cell.verdict.note()
            ),
            _ => String::new(),
        };
        writeln!(out, "  {series}{at}: {}{margin}", cell.answer()).unwrap();
    }
    out
}

/// One row of `decision-map.csv`.
#[derive(Debug, Serialize)]
struct CsvRow {
    /// The target this map is of: the run's, or its baseline's.
    target: TargetKind,
    x_axis: &'static str,
    x: f64,
    y_axis: &'static str,
    y: f64,
    /// The answer: `json`, `literal = exec, ±10%`, or `a or b` when undecided.
    answer: String,
    /// `winner`, `only`, `equivalent`, `undecided` or `nothing-ran`.
    verdict: &'static str,
    fastest: Option<Strategy>,
    /// Median ms per 1,000 rows of the fastest, with its interval.
    fastest_ms_per_1000_rows: Option<f64>,
    fastest_ci_low: Option<f64>,
    fastest_ci_high: Option<f64>,
    runner_up: Option<Strategy>,
    /// Runner-up ÷ fastest, with its interval.
    margin: Option<f64>,
    margin_ci_low: Option<f64>,
    margin_ci_high: Option<f64>,
    margin_ci_coverage: Option<f64>,
    margin_n: Option<usize>,
    /// The p-value of "the runner-up is as fast", before the correction.
    p_differ: Option<f64>,
    /// The p-value of the runner-up's equivalence within ±10% (two one-sided tests).
    p_equivalent: Option<f64>,
    /// Undecided: the sessions (or runs) a decision would need.
    needed: Option<usize>,
    /// What `needed` and the tests count: `repeats`, `sessions` or `runs`.
    unit: Option<&'static str>,
    /// Strategies stopped by a limit here, and which.
    stopped: String,
    /// Sessions behind the margin: from 2 on its interval is between sessions, with 1 within
    /// that session.
    sessions: Option<usize>,
}

/// `decision-map.csv` as bytes: every map's cells, the run's target first.
pub fn csv(maps: &[Map], x_axis: Axis, y_axis: Axis) -> Result<Vec<u8>> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    for map in maps {
        for cell in &map.cells {
            let fastest = cell.ranked.first();
            let margin_ci = cell.margin.and_then(|m| m.ci);
            let evidence = cell.evidence.first().map(|(_, e)| e);
            writer
                .serialize(CsvRow {
                    target: map.target,
                    x_axis: x_axis.name(),
                    x: cell.x,
                    y_axis: y_axis.name(),
                    y: cell.y,
                    answer: cell.answer(),
                    verdict: cell.verdict.kind(),
                    fastest: cell.fastest(),
                    fastest_ms_per_1000_rows: fastest.map(|(_, s)| s.median),
                    fastest_ci_low: fastest.and_then(|(_, s)| s.ci).map(|ci| ci.low),
                    fastest_ci_high: fastest.and_then(|(_, s)| s.ci).map(|ci| ci.high),
                    runner_up: cell.runner_up(),
                    margin: cell.margin.map(|m| m.median),
                    margin_ci_low: margin_ci.map(|ci| ci.low),
                    margin_ci_high: margin_ci.map(|ci| ci.high),
                    margin_ci_coverage: margin_ci.map(|ci| ci.coverage),
                    margin_n: cell.margin.map(|m| m.n),
                    p_differ: evidence.and_then(|e| e.p_differ),
                    p_equivalent: evidence.and_then(|e| e.p_equivalent),
                    needed: cell.verdict.needed().map(|(n, _)| n),
                    unit: evidence.map(|e| e.unit.plural()),
                    stopped: stopped_text(cell),
                    sessions: cell.margin.map(|m| m.sessions),
                })
                .context("cannot serialize a decision-map row")?;
        }
    }
    writer
        .into_inner()
        .context("cannot finish decision-map.csv in memory")
}

/// The maps of one run: its target's, then its baseline's when it measured one, each judged
/// over the run's sessions.
pub fn maps(rows: &[ProbeRow], target: TargetKind, x_axis: Axis, y_axis: Axis) -> Vec<Map> {
    targets(rows.iter().map(|r| r.target), target)
        .into_iter()
        .map(|t| Map {
            target: t,
            cells: super::decision::cells(rows, t, x_axis, y_axis),
            labels: Vec::new(),
        })
        .collect()
}

/// The maps of a replicate set (each run's rows), judged over its runs.
pub fn maps_over_runs(
    runs: &[Vec<ProbeRow>],
    schedules: &crate::stats::runs::Schedules,
    target: TargetKind,
    x_axis: Axis,
    y_axis: Axis,
) -> Vec<Map> {
    targets(runs.iter().flatten().map(|r| r.target), target)
        .into_iter()
        .map(|t| Map {
            target: t,
            cells: super::decision::cells_over_runs(runs, schedules, t, x_axis, y_axis),
            labels: Vec::new(),
        })
        .collect()
}

/// `target`, then the baseline measured beside it, if any.
fn targets(measured: impl Iterator<Item = TargetKind>, target: TargetKind) -> Vec<TargetKind> {
    let measured: Vec<TargetKind> = measured.collect();
    let mut out = vec![target];
    out.extend(TargetKind::baseline_among(measured.iter().copied()).filter(|b| *b != target));
    out
}
