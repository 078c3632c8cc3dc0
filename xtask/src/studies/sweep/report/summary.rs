//! What a sweep run says about itself: the key ratio tables (printed at the end of a run and put
//! in `summary.md`) and `summary.md` itself. Pure: it returns text, [`super::render_sweep`]
//! writes it.
//!
//! The lines about the run itself (each target's reconciliation, the machine's load) are in
//! [`run`]; the sections here share one table writer and one set of interval notes.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use d1bench_core::{Outcome, Strategy};

use super::intervals::Basis;
use super::points::{Measure, Point, points};
use super::{baseline, clocks};
use crate::base::TargetKind;
use crate::base::numbers::num;
use crate::records::{RunRecord, RunStatus};
use crate::reports::charts::Drawn;
use crate::reports::memory::{self, HeapPoint};
use crate::reports::provenance;
use crate::stats::{Interval, Method};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;
use clap::ValueEnum;

/// The order strategies are listed in, in every table.
const STRATEGIES: &[Strategy] = Strategy::REPORT_ORDER;

/// A table row's key: the series label, then x (ordered by `total_cmp`).
type RowKey = (String, u64);

/// The target's points of one measure keyed by (label, x) and strategy.
fn cells<'a>(
    rows: &'a [ProbeRow],
    axis: Axis,
    target: TargetKind,
) -> BTreeMap<RowKey, (f64, BTreeMap<Strategy, Point<'a>>)> {
    let mut table: BTreeMap<RowKey, (f64, BTreeMap<Strategy, Point<'a>>)> = BTreeMap::new();
    for point in points(rows, axis) {
        if point.line.target != target {
            continue;
        }
        // total_cmp order for non-negative x is the order of the bits.
        let key = (point.line.label.clone(), point.x.to_bits());
        table
            .entry(key)
            .or_insert_with(|| (point.x, BTreeMap::new()))
            .1
            .insert(point.line.strategy, point);
    }
    table
}

/// The strategies that appear among `rows` of `target`.
fn strategies_of(rows: &[ProbeRow], target: TargetKind) -> Vec<Strategy> {
    STRATEGIES
        .iter()
        .copied()
        .filter(|s| rows.iter().any(|r| r.target == target && r.strategy == *s))
        .collect()
}

/// The intervals of a table that cover less than 95%, for the note under it: each says what
/// it covers and at which n.
#[derive(Debug, Default)]
struct ShortIntervals(BTreeSet<String>);

impl ShortIntervals {
    /// `value (low–high) n=5`: the value, its interval marked `†` (and noted) when it covers
    /// less than 95%, and `n`, the values behind it; `at` says at which n, for the note.
    fn cell(&mut self, value: String, ci: Option<Interval>, at: String, n: &str) -> String {
        let Some(ci) = ci else {
            return format!("{value} {n}");
        };
        let mark = if ci.reaches_confidence() {
            ""
        } else {
            let bound = match ci.method {
                Method::OrderStatistic
                | Method::BetweenSessions
                | Method::BatchMeans
                | Method::BetweenRuns => "",
                Method::IndependentRatio => "at least ",
            };
            self.0
                .insert(format!("{bound}{:.1}% at {at}", ci.coverage * 100.0));
            "†"
        };
        format!("{value} ({}–{}){mark} {n}", num(ci.low), num(ci.high))
    }

    /// The note under a table, when any of its intervals covers less than 95%.
    fn note(&self) -> String {
        if self.0.is_empty() {
            return String::new();
        }
        let list: Vec<&str> = self.0.iter().map(String::as_str).collect();
        format!(
            "\n† The interval covers less than 95%, for want of repeats: {}.\n",
            list.join("; ")
        )
    }
}

/// A cell: the median with its interval, or why there is none.
fn time_cell(point: Option<&Point>, short: &mut ShortIntervals) -> String {
    let Some(point) = point else {
        return "–".to_owned();
    };
    match point.summary(Measure::MsPer1000Rows) {
        Some(s) => short.cell(
            num(s.median),
            s.ci,
            format!("n = {}", s.n),
            &n_of(s.n, point.rows.len()),
        ),
        None if point.refused_only() => {
            let kind = point
                .rows
                .iter()
                .find(|r| r.outcome == Outcome::Refused)
                .and_then(|r| r.refusal)
                .map_or(String::new(), |r| r.to_string());
            format!("refused ({kind})")
        }
        None => "error".to_owned(),
    }
}

/// `n=5`, the values a cell summarizes, or `n=3 of 5` when some repeats failed or were refused.
fn n_of(n: usize, repeats: usize) -> String {
    if n == repeats {
        format!("n={n}")
    } else {
        format!("n={n} of {repeats}")
    }
}

/// Literal ÷ bound at one point: the median of the per-repeat ratios, its interval and the
/// pairs behind it.
fn paired_cell(
    literal: Option<&Point>,
    bound: Option<&Point>,
    short: &mut ShortIntervals,
) -> String {
    match literal.zip(bound).and_then(|(l, b)| l.paired_ratio(b)) {
        Some(s) => short.cell(
            num(s.median),
            s.ci,
            format!("n = {} pairs", s.n),
            &format!("n={}", s.n),
        ),
        None => "–".to_owned(),
    }
}

/// A target ÷ its baseline at one point, on the inside clock: the ratio of the medians of
/// `inside_ms`, its interval and the repeats of each.
fn baseline_cell(
    ours: Option<&Point>,
    theirs: Option<&Point>,
    short: &mut ShortIntervals,
) -> String {
    let ratio = ours.zip(theirs).and_then(|(o, t)| o.independent_ratio(t));
    match ratio {
        Some(r) => short.cell(
            num(r.value),
            r.ci,
            format!("n = {} and {}", r.n.0, r.n.1),
            &format!("n={} vs {}", r.n.0, r.n.1),
        ),
        None => "–".to_owned(),
    }
}

/// The header cells of a table: the axis, the label when any series has one, then `columns`.
fn header(axis: Axis, labelled: bool, columns: &[String]) -> String {
    let mut cells = vec![axis.name().to_owned()];
    if labelled {
        cells.push("series".to_owned());
    }
    cells.extend(columns.iter().cloned());
    let mut out = format!("| {} |\n", cells.join(" | "));
    writeln!(out, "|{}", " --- |".repeat(cells.len())).unwrap();
    out
}

/// The key ratio table of `target`: median ms per 1,000 rows (outside clock less the target's
/// preparation) of each strategy at each point, and literal ÷ bound (paired by repeat), each
/// with its interval and n. Markdown.
pub fn ratio_table(rows: &[ProbeRow], axis: Axis, target: TargetKind) -> String {
    let strategies = strategies_of(rows, target);
    let table = cells(rows, axis, target);
    let labelled = table.keys().any(|(label, _)| !label.is_empty());
    let mut columns: Vec<String> = strategies
        .iter()
        .map(|s| format!("{s} ms/1k rows"))
        .collect();
    let both = strategies.contains(&Strategy::Bound) && strategies.contains(&Strategy::Literal);
    if both {
        columns.push("literal ÷ bound".to_owned());
    }
    let mut out = header(axis, labelled, &columns);
    let mut short = ShortIntervals::default();
    for ((label, _), (x, cells)) in &table {
        let mut line = vec![axis.format(*x)];
        if labelled {
            line.push(label.clone());
        }
        line.extend(
            strategies
                .iter()
                .map(|s| time_cell(cells.get(s), &mut short)),
        );
        if both {
            line.push(paired_cell(
                cells.get(&Strategy::Literal),
                cells.get(&Strategy::Bound),
                &mut short,
            ));
        }
        writeln!(out, "| {} |", line.join(" | ")).unwrap();
    }
    out.push_str(&short.note());
    out
}

/// With a profile's `precision`: at how many of `target`'s points (those with a time) the
/// median's 95% interval got within it, and which did not, with their n. Markdown, one
/// paragraph.
pub fn precision_line(
    rows: &[ProbeRow],
    axis: Axis,
    target: TargetKind,
    record: &RunRecord,
) -> String {
    let Some(precision) = record.run.precision else {
        return String::new();
    };
    let mut timed = 0;
    let mut missed = Vec::new();
    for point in points(rows, axis) {
        let Some(s) = point.summary(Measure::MsPer1000Rows) else {
            continue;
        };
        if point.line.target != target {
            continue;
        }
        timed += 1;
        if !s.within(precision) {
            let label = if point.line.label.is_empty() {
                String::new()
            } else {
                format!(" ({})", point.line.label)
            };
            missed.push(format!(
                "{}{label} at {} (n={})",
                point.line.strategy,
                axis.format(point.x),
                s.n
            ));
        }
    }
    let most = record
        .run
        .max_repeats
        .map(|m| format!(", up to {m} repeats"))
        .unwrap_or_default();
    let mut line = format!(
        "Precision asked: every point repeated until its median's 95% interval lay within \
         ±{}% of it{most}. Reached at {} of {timed} points of `{target}`",
        precision * 100.0,
        timed - missed.len()
    );
    if missed.is_empty() {
        line.push_str(".\n");
    } else {
        line.push_str(&format!("; not at {}.\n", missed.join(", ")));
    }
    line
}

/// `target` ÷ the baseline (bare SQLite, or the Durable Object), per strategy at each point, on the one clock both have
/// alike: the inside clock (the writes, values bound included; no HTTP, no preparation). The
/// ratio of the medians of `inside_ms`; `None` when the run has no baseline. Markdown.
pub fn baseline_table(rows: &[ProbeRow], axis: Axis, target: TargetKind) -> Option<String> {
    let base = TargetKind::baseline_among(rows.iter().map(|r| r.target))?;
    if target == base {
        return None;
    }
    let strategies = strategies_of(rows, target);
    let ours = cells(rows, axis, target);
    let baseline = cells(rows, axis, base);
    let labelled = ours.keys().any(|(label, _)| !label.is_empty());
    let columns: Vec<String> = strategies
        .iter()
        .map(|s| format!("{s}: {target} ÷ {base}"))
        .collect();
    let mut out = header(axis, labelled, &columns);
    let mut short = ShortIntervals::default();
    for (key, (x, cells)) in &ours {
        let mut line = vec![axis.format(*x)];
        if labelled {
            line.push(key.0.clone());
        }
        let theirs = baseline.get(key).map(|(_, c)| c);
        for s in &strategies {
            line.push(baseline_cell(
                cells.get(s),
                theirs.and_then(|c| c.get(s)),
                &mut short,
            ));
        }
        writeln!(out, "| {} |", line.join(" | ")).unwrap();
    }
    out.push_str(&short.note());
    Some(out)
}

/// `summary.md`: what was run and where, the reconciliation, the key tables, the charts with
/// their captions, the environment.
pub fn markdown(record: &RunRecord, rows: &[ProbeRow], charts: &[Drawn]) -> String {
    let run = &record.run;
    let axis = run.x_axis.unwrap_or(Axis::Columns);
    let target = run.target;
    let study = record.studies.first();
    let mut out = format!(
        "# {}: {}\n\n",
        run.experiment,
        study.map_or("", |s| s.description.as_str())
    );
    let status = if run.status == RunStatus::Complete {
        "complete".to_owned()
    } else {
        format!(
            "**{}**{}",
            run.status.name().to_uppercase(),
            run.error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        )
    };
    let baseline = run
        .baseline
        .as_ref()
        .map(|&b| {
            format!(
                ", with the same probes on {b} ({}, the baseline: not D1)",
                b.as_baseline()
            )
        })
        .unwrap_or_default();
    writeln!(
        out,
        "Run `{}`: profile `{}` of `{}` on the `{target}` target{baseline}; started {}, ended {}; status {status}.\n",
        run.id,
        run.profile,
        study.map_or("", |s| s.file.as_str()),
        run.started,
        run.ended.as_deref().unwrap_or("(not recorded)"),
    )
    .unwrap();
    if let Some(percent) = run.debug_slow_percent {
        writeln!(
            out,
            "**DEBUG RUN**: every probe's timed window was stretched by {percent}% on purpose by \
             a wait inside it (`--debug-slow {percent}`), a known slowdown for comparisons to \
             catch. Its times are not measurements to use.\n"
        )
        .unwrap();
    }
    if let Some(kind) = run.debug_corrupt.and_then(|k| k.to_possible_value()) {
        let kind = kind.get_name();
        writeln!(
            out,
            "**DEBUG RUN**: every probe's table was corrupted on purpose after its writes \
             (`--debug-corrupt {kind}`), to show that reconciliation catches it. Its times are \
             not measurements to use.\n"
        )
        .unwrap();
    }
    let order = run
        .order_seed
        .map(|seed| {
            let (sessions, seeds) = match run.sessions.unwrap_or(1) {
                1 => ("one session".to_owned(), ""),
                n => (
                    format!(
                        "{n} sessions, each a fresh target with its own warm-up rounds{}",
                        if run.baseline.is_some() {
                            ", the baseline's alternating with the target's"
                        } else {
                            ""
                        }
                    ),
                    " (each later session from a seed derived from it and its index)",
                ),
            };
            format!(
                " The probes ran in {sessions}, in rounds, one repeat of every point each, in an \
                 order shuffled with order seed {seed}{seeds}."
            )
        })
        .unwrap_or_default();
    writeln!(
        out,
        "Reproduce: `{}` at commit `{}`{}.{order}\n",
        provenance::command(record),
        record.git.commit,
        if record.git.dirty {
            " (the tree had uncommitted changes)"
        } else {
            ""
        }
    )
    .unwrap();
    out.push_str(&provenance::resumptions(record));

    out.push_str("## Reconciliation\n\n");
    out.push_str(
        "Every probe's rows were counted and checksummed by the target (in SQL by the Worker; \
         read back and summed in-process by bare SQLite, the same numbers), and compared with \
         the host's count and checksum of the rows the generator made.\n\n",
    );
    for line in reconciliation_lines(rows, record) {
        writeln!(out, "{line}").unwrap();
    }
    writeln!(
        out,
        "\n{}",
        super::intervals::warmup_paragraph(rows).trim_end()
    )
    .unwrap();
    let harness = super::harness::paragraph(rows);
    if !harness.is_empty() {
        writeln!(out, "\n{}", harness.trim_end()).unwrap();
    }
    let detectable = super::detectable::paragraph(&super::points::summary_rows(rows, axis, None));
    if !detectable.is_empty() {
        writeln!(out, "\n{}", detectable.trim_end()).unwrap();
    }

    let basis = Basis::of(rows, target);
    writeln!(
        out,
        "\n## Time per 1,000 rows on `{target}` (outside clock less the target's preparation, \
         {})\n",
        basis.heading()
    )
    .unwrap();
    out.push_str(&basis.times_paragraph());
    out.push_str(&ratio_table(rows, axis, target));
    let precision = precision_line(rows, axis, target, record);
    if !precision.is_empty() {
        writeln!(out, "\n{precision}").unwrap();
    }
    if let Some(table) = baseline_table(rows, axis, target) {
        let base = TargetKind::baseline_among(rows.iter().map(|r| r.target))
            .map_or("the baseline", TargetKind::prose);
        writeln!(
            out,
            "\n## `{target}` ÷ {base} (ratio of median inside clocks: the writes alone on \
             both sides)\n"
        )
        .unwrap();
        out.push_str(&basis.baseline_paragraph());
        out.push_str(&table);
        if let Some(judged) = baseline::judge(rows, axis, target) {
            write!(out, "\n{}", judged.paragraph()).unwrap();
        }
    }
    if let Some(table) = clocks::table(rows, axis, target) {
        writeln!(
            out,
            "\n## Where the time goes on `{target}` (median ms per probe)\n\n\
             outside: the runner's clock around the request; prepare: the target generating the \
             rows and building the statements, before its inside clock starts; inside: the \
             writes and reading D1's answers (bind: handing the values to the D1 binding; D1: \
             D1's own `meta.duration`); outside − inside − prepare: what the request adds \
             (HTTP, JSON, freeing what the probe built).\n"
        )
        .unwrap();
        out.push_str(&table);
    }
    out.push_str(&memory::section(
        &format!("The isolate's memory on `{target}`"),
        "strategy",
        axis.name(),
        &heap_points(rows, axis),
    ));
    out.push_str(&super::heap_cost::section(
        rows,
        record.run.isolate_heap_alternate,
    ));

    out.push('\n');
    out.push_str(&provenance::time_section(record));
    out.push_str("## Charts\n\n");
    for chart in charts {
        let file = |ext: &str| {
            chart
                .files
                .iter()
                .find(|f| f.extension().is_some_and(|e| e == ext))
                .and_then(|f| f.file_name())
                .map(|f| f.to_string_lossy().into_owned())
        };
        if let Some(png) = file("png") {
            writeln!(out, "![{}]({png})\n", chart.name).unwrap();
        }
        let vectors: Vec<String> = [("svg", "SVG"), ("pdf", "PDF")]
            .into_iter()
            .filter_map(|(ext, name)| Some(format!("[{name}]({})", file(ext)?)))
            .collect();
        let vectors = if vectors.is_empty() {
            String::new()
        } else {
            format!(" ({})", vectors.join(", "))
        };
        writeln!(out, "*{}*{vectors}\n", chart.caption).unwrap();
    }

    out.push_str("## Environment\n\n");
    let v = &record.versions;
    let m = &record.machine;
    for (what, value) in [
        ("d1bench", v.d1bench.as_str()),
        ("Worker", v.worker.as_str()),
        ("`worker` crate", v.worker_crate.as_str()),
        ("wrangler", v.wrangler.as_str()),
        ("workerd", v.workerd.as_str()),
        ("SQLite (baseline, bundled)", v.sqlite.as_str()),
        ("rustc", v.rustc.as_str()),
    ] {
        writeln!(out, "- {what}: {value}").unwrap();
    }
    writeln!(
        out,
        "- machine: {}, {}, {} ({} CPUs), {} GiB",
        m.os, m.arch, m.cpu, m.cpus, m.memory_gib
    )
    .unwrap();
    writeln!(out, "{}", load_line(m)).unwrap();
    out.push_str(
        "Files: `results.csv` (every probe, warm-ups excepted, with when it started, its \
         session, and whether it was discarded as warm-up), `summary.csv` (every point: its \
         estimate, min, max, p95 from 20 repeats on, the interval with its coverage, method \
         and sessions; literal ÷ bound and target ÷ sqlite with theirs), `run.toml` \
         (provenance, the order seed, sessions, totals).\n",
    );
    out
}

/// The isolate's largest peak at each point of each strategy (with its series' label, when it
/// has one), for the probes that have one: strategies in report order, then x.
fn heap_points(rows: &[ProbeRow], axis: Axis) -> Vec<HeapPoint> {
    let mut points: Vec<(String, usize, f64, u64)> = Vec::new();
    for row in rows {
        let Some(peak) = row.isolate_heap_peak_bytes else {
            continue;
        };
        let order = STRATEGIES
            .iter()
            .position(|s| *s == row.strategy)
            .unwrap_or(STRATEGIES.len());
        let (label, x) = (row.label.clone(), row.at(axis));
        match points
            .iter_mut()
            .find(|p| (p.0.as_str(), p.1, p.2) == (label.as_str(), order, x))
        {
            Some(point) => point.3 = point.3.max(peak),
            None => points.push((label, order, x, peak)),
        }
    }
    points.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)).then(a.2.total_cmp(&b.2)));
    points
        .into_iter()
        .map(|(label, order, at, peak_bytes)| HeapPoint {
            group: match (STRATEGIES.get(order), label.is_empty()) {
                (Some(s), true) => s.to_string(),
                (Some(s), false) => format!("{s} ({label})"),
                (None, _) => label,
            },
            at,
            peak_bytes,
        })
        .collect()
}

mod run;
use run::load_line;
pub use run::{reconciliation_lines, target_lines};

#[cfg(test)]
mod tests;
