//! The README's statement of the instrument's cost, generated from the committed two-Worker
//! sweep (`docs/runs/two-workers`, sessions alternating between the Rust and the JavaScript
//! Worker): Rust ÷ JavaScript on the inside clock over its points, where the interval does not
//! reach the tolerance, literal ÷ bound with each Worker, and each Worker's handover before
//! its window; a test fails when the README and the run disagree.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use d1bench_core::Strategy;

use crate::base::WorkerKind;
use crate::records::{RunRecord, csv};
use crate::stats::median;
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::instrument::{self, InstrumentPoint, TOLERANCE};
use crate::studies::sweep::row::ProbeRow;

/// The committed two-Worker run, relative to the project's root.
pub const TWO_WORKERS: &str = "docs/runs/two-workers";

/// The point of `strategy` at `columns`, if the run has it.
pub(super) fn at(
    points: &[InstrumentPoint],
    strategy: Strategy,
    columns: f64,
) -> Option<&InstrumentPoint> {
    points
        .iter()
        .find(|p| p.strategy == strategy && p.x == columns && p.label.is_empty())
}

/// The section, from the run under `root`.
pub fn section(root: &Path) -> Result<String> {
    let dir = root.join(TWO_WORKERS);
    let record = RunRecord::read(&dir.join("run.toml"))
        .with_context(|| format!("{TWO_WORKERS} is not a run d1bench can read"))?;
    let rows: Vec<ProbeRow> = csv::read(&dir.join("results.csv"))
        .with_context(|| format!("{TWO_WORKERS}/results.csv cannot be read"))?;
    let points = instrument::points(&rows, Axis::Columns);
    let with: Vec<&InstrumentPoint> = points.iter().filter(|p| p.ratio.is_some()).collect();
    let ratios: Vec<f64> = with
        .iter()
        .filter_map(|p| p.ratio.as_ref().map(|c| c.ratio))
        .collect();
    let lowest = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = ratios.iter().copied().fold(0.0, f64::max);
    let beyond: Vec<String> = with
        .iter()
        .filter(|p| p.beyond_tolerance())
        .map(|p| format!("{} at {} columns", p.strategy, p.x))
        .collect();
    let differs = with.iter().filter(|p| p.differs).count();
    let sessions = with
        .first()
        .map_or((0, 0), |p| (p.rust_sessions, p.js_sessions));
    let mut out = format!(
        "These figures come from the Rust Worker (`worker/`), as it was at each run's commit. How much that matters was measured \
         against a plain JavaScript Worker (`worker-js/`, the same statements and window) in one \
         run whose sessions alternate between the two ([`{TWO_WORKERS}/`]({TWO_WORKERS}/): run \
         `{}`, commit `{}`, {} and {} sessions, the column sweep's full profile). Rust ÷ \
         JavaScript on the inside clock, per point over sessions (95%, Welch's t on the logs, \
         Benjamini–Hochberg at 5% over the {} points): {lowest:.2} to {highest:.2}, median {:.2}; \
         {differs} of {} differ from 1; ",
        record.run.id,
        record.git.commit.short(7),
        sessions.0,
        sessions.1,
        with.len(),
        median(&ratios).unwrap_or(f64::NAN),
        with.len(),
    );
    let (five, ten, not_shown) = instrument::equivalence_counts(&points);
    write!(
        out,
        "equivalent to 1 by two one-sided tests (the 90% interval) within ±5% at {five}, within \
         ±10% (not ±5%) at {ten}, and at neither at {not_shown}, where the run cannot tell a 10% \
         cost from none ([per point]({TWO_WORKERS}/summary.md#the-instrument-rust-worker--javascript-worker))."
    )
    .unwrap();
    if !beyond.is_empty() {
        write!(
            out,
            " The interval stays above {TOLERANCE:.2} at {} of {} points ({}): there the figures \
             carry that much of the instrument.",
            beyond.len(),
            with.len(),
            beyond.join(", ")
        )
        .unwrap();
    }
    let rust = instrument::a_a(&rows, Axis::Columns, WorkerKind::Rust);
    let js = instrument::a_a(&rows, Axis::Columns, WorkerKind::Js);
    write!(
        out,
        " Its A/A test (each Worker's sessions in halves) calls {} of {} points for Rust, {} of {} \
         for JavaScript (alone at 5%: {} and {}, ~{} by chance).",
        rust.called,
        rust.judged,
        js.called,
        js.judged,
        rust.alone,
        js.alone,
        rust.alone_by_chance(),
    )
    .unwrap();
    let ratio = |strategy, columns| {
        at(&points, strategy, columns)
            .and_then(|p| p.ratio.as_ref())
            .map_or_else(
                || "-".to_owned(),
                |c| {
                    format!(
                        "{:.2} ({:.2}–{:.2})",
                        c.ratio, c.interval.low, c.interval.high
                    )
                },
            )
    };
    out.push_str("\n\n| columns | bound: Rust ÷ JS | literal: Rust ÷ JS |\n| --- | --- | --- |\n");
    for columns in [1.0, 8.0, 64.0, 100.0] {
        writeln!(
            out,
            "| {columns} | {} | {} |",
            ratio(Strategy::Bound, columns),
            ratio(Strategy::Literal, columns)
        )
        .unwrap();
    }
    let moved = instrument::moved_findings(&rows, Axis::Columns);
    let flips: Vec<&String> = moved
        .iter()
        .filter(|l| l.contains("the instrument moves this finding"))
        .collect();
    let flipped: Vec<String> = flips
        .iter()
        .map(|l| l.split(": the instrument").next().unwrap_or(l).to_owned())
        .collect();
    writeln!(
        out,
        "\nliteral ÷ bound changes sides between the Workers at {} of {} column counts{}. {} \
         Reproduce: `cargo xtask reproduce --only two-workers` ({:.0} min here).",
        flips.len(),
        moved.len(),
        if flipped.is_empty() {
            String::new()
        } else {
            format!(" ({})", flipped.join("; "))
        },
        handover(&points),
        crate::readme::run_minutes(&record).unwrap_or(f64::NAN),
    )
    .unwrap();
    Ok(out)
}

/// What each Worker spends before its window at 100 columns, bound, from a run's points.
pub(super) fn handover(points: &[InstrumentPoint]) -> String {
    let ms = |of: fn(&InstrumentPoint) -> Option<f64>| {
        at(points, Strategy::Bound, 100.0)
            .and_then(of)
            .map_or_else(|| "-".into(), |ms| format!("{ms:.0}"))
    };
    format!(
        "Before its window each Worker makes the values JavaScript values (`handover_ms`, the \
         instrument's own cost, outside both windows): at 100 columns, bound, {} ms for the Rust \
         Worker and {} ms for the JavaScript Worker's parse of its request (medians).",
        ms(|p| p.rust_handover_ms),
        ms(|p| p.js_handover_ms),
    )
}
