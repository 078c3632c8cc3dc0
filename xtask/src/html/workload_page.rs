//! A workload run's `index.html` (`read-path`, `write-contention`, `cache`, `workload-mix`),
//! from its own directory: the verdicts first (the write-up's claims with their equivalence
//! tests, and the retry policies compared), then per point its latency percentile plot with the
//! arms overlaid ([`crate::studies::workload::report::percentile_chart`], drawn here as PNG, SVG
//! and PDF beside the run's other charts) and a table of each arm's p50, p95 and p99 with their
//! intervals, offered against achieved rate, refusals, retries and whether the point saturated;
//! then capacity, the cache and the rest of summary.md's sections, the run's other charts, how it
//! was run and its files, as a sweep's page shows them ([`super::run_page`]).

use std::path::{Path, PathBuf};

use anyhow::Result;
use maud::{Markup, html};

use super::markdown::to_html;
use super::run_page::{self, RunFile};
use crate::base::numbers::num;
use crate::records::{RunDir, RunRecord, csv};
use crate::reports::ChartFile;
use crate::reports::charts::Drawn;
use crate::stats::CONFIDENCE;
use crate::studies::workload::report::load_stats::{OpStats, stats_capped};
use crate::studies::workload::report::percentile_chart::{self, arm_labels, by_point};
use crate::studies::workload::report::{
    cache, capacity, claims, contention, paths, placement, summary,
};
use crate::studies::workload::row::{OpRow, PointRow};

/// The percentiles each arm's table shows.
const SHOWN: [f64; 3] = [0.5, 0.95, 0.99];

/// A workload run's records, as its reports read them.
struct Records {
    rows: Vec<OpRow>,
    points: Vec<PointRow>,
}

impl Records {
    fn read(run_dir: &RunDir) -> Result<Records> {
        let rows = if csv::exists(&run_dir.results_csv()) {
            csv::read(&run_dir.results_csv())?
        } else {
            Vec::new()
        };
        let points = if run_dir.points_csv().exists() {
            csv::read(&run_dir.points_csv())?
        } else {
            Vec::new()
        };
        Ok(Records { rows, points })
    }
}

/// Writes the page of the workload run in `run_dir` as its `index.html`, after its report drew
/// `charts`; draws each point's percentile plot first. Returns the page's path and its headline.
pub fn write(
    run_dir: &RunDir,
    record: &RunRecord,
    charts: &[ChartFile],
    titles: bool,
) -> Result<(PathBuf, String)> {
    let records = Records::read(run_dir)?;
    let stats = stats_capped(
        &records.rows,
        records.points.first().map(|p| p.max_in_flight),
    );
    let plots = percentile_chart::render(&run_dir.path, &stats, titles)?;
    let files = run_page::run_files(&run_dir.path)?;
    let plotted = |path: &Path| {
        let stem = path.with_extension("");
        plots.iter().any(|d| stem.as_os_str() == d.name.as_str())
    };
    let plot_svgs = run_page::chart_svgs(&run_dir.path, &files, &[], plotted)?;
    let other_svgs = run_page::chart_svgs(&run_dir.path, &files, charts, |p| !plotted(p))?;
    let html = page(
        record,
        &records,
        &stats,
        &Figures {
            plots: &plots,
            plot_svgs: &plot_svgs,
            other_svgs: &other_svgs,
            captions: charts,
        },
        &files,
    );
    let path = run_dir.path.join(run_page::PAGE);
    super::write(&path, &html)?;
    Ok((path, headline(&stats)))
}

/// The run in a line for the page over runs: its claims' verdicts when it tested any, else its
/// points and the range of their p50 latencies, and how many saturated.
pub fn headline(stats: &[OpStats]) -> String {
    let answers = claims::answers(stats);
    if !answers.is_empty() {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for a in &answers {
            let verdict = a.verdict().to_string();
            let short = verdict.split([':', '(', ';']).next().unwrap_or("").trim();
            match counts.iter_mut().find(|(v, _)| v == short) {
                Some((_, n)) => *n += 1,
                None => counts.push((short.to_owned(), 1)),
            }
        }
        let parts: Vec<String> = counts.iter().map(|(v, n)| format!("{n} {v}")).collect();
        return format!("{} comparisons: {}", answers.len(), parts.join("; "));
    }
    let points = by_point(stats);
    if points.is_empty() {
        return "no request measured".to_owned();
    }
    let p50s: Vec<f64> = stats
        .iter()
        .filter_map(|s| s.latencies.percentile(0.5, CONFIDENCE).map(|p| p.ms))
        .collect();
    let saturated = points
        .iter()
        .filter(|(_, _, arms)| arms.iter().any(|s| s.load.is_saturated()))
        .count();
    let (lo, hi) = p50s.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), v| {
        (lo.min(*v), hi.max(*v))
    });
    format!(
        "{} points; p50 {}–{} ms; {saturated} saturated",
        points.len(),
        num(lo),
        num(hi)
    )
}

/// The figures of a workload page: the percentile plots (as drawn, and their SVGs) and the
/// run's other charts with the captions its report gave them.
struct Figures<'a> {
    plots: &'a [Drawn],
    plot_svgs: &'a [(PathBuf, String)],
    other_svgs: &'a [(PathBuf, String)],
    captions: &'a [ChartFile],
}

/// The whole page of a workload run.
fn page(
    record: &RunRecord,
    records: &Records,
    stats: &[OpStats],
    figures: &Figures,
    files: &[RunFile],
) -> String {
    let more = [
        capacity::section(stats, &records.points),
        cache::section(&cache::stats(&records.rows)),
        paths::section(&records.rows),
        placement::section(&placement::placements(&records.rows)),
    ]
    .concat();
    let body = html! {
        (run_page::heading(record))
        nav {
            a href="#verdicts" { "Verdicts" }
            a href="#points" { "Latency per point" }
            @if !more.trim().is_empty() { a href="#capacity" { "Capacity, cache, placement" } }
            a href="#charts" { "Charts" }
            a href="#provenance" { "How it was run" }
            a href="#files" { "Files" }
        }
        (verdicts_section(record, stats))
        (points_section(stats, figures, files))
        @if !more.trim().is_empty() {
            section #capacity {
                h2 { "Capacity, cache and placement" }
                (to_html(&more))
            }
        }
        (run_page::charts_section(figures.other_svgs, figures.captions, files))
        (run_page::provenance_section(record))
        (run_page::files_section(files))
    };
    super::page(&run_page::title(record), body)
}

/// The verdicts: the claims' (with their equivalence tests) and the retry policies'; what the
/// run says of itself where it tested none.
fn verdicts_section(record: &RunRecord, stats: &[OpStats]) -> Markup {
    let claims = summary::claims_section(stats);
    let policies = contention::section(stats);
    let totals = record.reconciliation.clone().unwrap_or_default();
    html! {
        section #verdicts {
            h2 { "Verdicts" }
            p {
                "On " code { (record.run.target) } ", every latency from when its request was due \
                 on the open-loop timetable. " (totals.line("records")) ". The same figures as "
                a href="summary.md" { "summary.md" } " and " a href="summary.csv" { "summary.csv" } "."
            }
            @if claims.trim().is_empty() && policies.trim().is_empty() {
                p { "This workload tests no claim and compares no retry policy: its figures follow, point by point." }
            }
            div.findings { (to_html(&claims)) (to_html(&policies)) }
        }
    }
}

/// `12.3 (11.9–12.8)`: a percentile of `s` with its interval, or `–`.
fn percentile_text(s: &OpStats, q: f64) -> String {
    match s.latencies.percentile(q, CONFIDENCE) {
        Some(p) => super::with_interval(p.ms, p.ci.map(|c| (c.low, c.high))),
        None => "–".to_owned(),
    }
}

/// Each point: its percentile plot, then each arm's figures.
fn points_section(stats: &[OpStats], figures: &Figures, files: &[RunFile]) -> Markup {
    let points = by_point(stats);
    html! {
        section #points {
            h2 { "Latency per point" }
            p {
                "Per point, each arm's latency at every percentile its requests can show, spread as \
                 HdrHistogram spreads them (log scale of 1 ÷ (1 − q), so p99 and p99.9 get room), on \
                 a log latency axis; below it, p50, p95 and p99 in ms with their 95% \
                 order-statistic intervals (which assume independent requests: under queueing they \
                 are narrower than they should be; the verdicts' intervals are over time blocks), \
                 the rate offered and achieved, what was refused, the attempts per request, and \
                 whether the point saturated the target."
            }
            @if points.is_empty() { p { "No request was measured." } }
            @for (target, point, arms) in &points {
                @let name = percentile_chart::name(*target, *point);
                @let plot = figures.plots.iter().find(|d| d.name == name);
                @let svg = figures.plot_svgs.iter().find(|(p, _)| p.with_extension("").as_os_str() == name.as_str());
                h3 id=(format!("point-{}-{point}", target.name())) {
                    "Point " (point) " on " (target) ", "
                    (num(arms.iter().map(|s| s.offered_per_s).sum())) " requests/s scheduled"
                }
                @if let (Some(plot), Some((_, text))) = (plot, svg) {
                    figure.chart id=(format!("chart-{name}")) {
                        @match super::inline_svg(text) {
                            Some(svg) => (svg),
                            None => p.warn { "This SVG holds more than a chart draws: open it as a file." },
                        }
                        figcaption {
                            (plot.caption) " "
                            @for (i, other) in files.iter().filter(|f| f.path.with_extension("").as_os_str() == name.as_str()).enumerate() {
                                @if i > 0 { " · " }
                                a href=(super::href(&other.path)) {
                                    (other.path.extension().map_or(String::new(), |e| e.to_string_lossy().to_uppercase()))
                                }
                            }
                        }
                    }
                }
                (arms_table(arms))
            }
        }
    }
}

/// One row per arm of a point.
fn arms_table(arms: &[&OpStats]) -> Markup {
    let labels = arm_labels(arms);
    html! {
        div.wide { table {
            thead { tr {
                th { "arm" } th.num { "requests" } th.num { "ok" }
                @for q in SHOWN { th.num { "p" (num(q * 100.0)) " ms" } }
                th.num { "offered /s" } th.num { "achieved /s" } th.num { "achieved ÷ offered" }
                th { "refused" } th.num { "errors" } th.num { "unanswered" }
                th.num { "attempts (mean, most)" } th { "load" }
            } }
            tbody {
                @for (s, label) in arms.iter().zip(&labels) {
                    tr {
                        td { (label) }
                        td.num { (s.n) } td.num { (s.ok) }
                        @for q in SHOWN { td.num { (percentile_text(s, q)) } }
                        td.num { (num(s.offered_per_s)) }
                        td.num { (num(s.achieved_per_s)) }
                        td.num {
                            @if s.offered_per_s > 0.0 { (format!("{:.2}", s.achieved_per_s / s.offered_per_s)) } @else { "–" }
                        }
                        td {
                            @if s.refused.is_empty() { "none" }
                            @for (i, (kind, n)) in s.refused.iter().enumerate() {
                                @if i > 0 { ", " }
                                (n) " " (kind.to_string())
                            }
                        }
                        td.num { (s.errors) } td.num { (s.target_failed) }
                        td.num { (format!("{:.2}", s.attempts_mean)) ", " (s.attempts_max) }
                        td { (s.load.describe()) }
                    }
                }
            }
        } }
    }
}
