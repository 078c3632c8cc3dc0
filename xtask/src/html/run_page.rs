//! A sweep run's `index.html`, from its own directory: the findings first ([`super::findings`]),
//! then the run's charts as inline SVG (the files its report drew), each point's sessions beside
//! its interval ([`super::dots`]), how the run was run (run.toml), and a link to every file of
//! the run directory.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use maud::{Markup, html};

use super::dots;
use super::findings::{Answer, Findings, Side, findings};
use crate::base::numbers::{num, thousands};
use crate::records::{RunDir, RunRecord, RunStatus, csv};
use crate::reports::host_speed::{self, HostShift, HostSpeed};
use crate::reports::{ChartFile, provenance};
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::decision;
use crate::studies::sweep::report::default_instrument;
use crate::studies::sweep::report::verdict;
use crate::studies::sweep::row::ProbeRow;

/// The file name of a run's page, in its directory.
pub const PAGE: &str = "index.html";

/// One file of a run directory, for its listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFile {
    /// Relative to the run directory.
    pub path: PathBuf,
    pub bytes: u64,
}

/// Every file under `dir` (in subdirectories too), sorted by path, but for what a report writes
/// over runs ([`super::REPORT_FILES`]) at its top.
pub fn run_files(dir: &Path) -> Result<Vec<RunFile>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<RunFile>) -> Result<()> {
        for entry in
            std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))?
        {
            let entry = entry.with_context(|| format!("cannot list {}", dir.display()))?;
            let path = entry.path();
            let meta = entry
                .metadata()
                .with_context(|| format!("cannot read {}", path.display()))?;
            let relative = path.strip_prefix(root).unwrap_or(&path).to_owned();
            if meta.is_dir() {
                walk(root, &path, out)?;
            } else if !(dir == root
                && super::REPORT_FILES
                    .iter()
                    .any(|name| relative.as_os_str() == *name))
            {
                out.push(RunFile {
                    path: relative,
                    bytes: meta.len(),
                });
            }
        }
        Ok(())
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files)?;
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(files)
}

/// Writes the page of the sweep run in `run_dir` as its `index.html`, after its report drew
/// `charts` (their captions go under them); returns the page's path and its findings.
pub fn write(
    run_dir: &RunDir,
    record: &RunRecord,
    charts: &[ChartFile],
) -> Result<(PathBuf, Findings)> {
    let rows: Vec<ProbeRow> = csv::read(&run_dir.results_csv())?;
    let rows = default_instrument(&rows);
    let axis = record
        .run
        .x_axis
        .with_context(|| format!("{} names no x axis", run_dir.run_toml().display()))?;
    let found = findings(&rows, record.run.target, axis, record.run.y_axis);
    let files = run_files(&run_dir.path)?;
    let svgs = chart_svgs(&run_dir.path, &files, charts, |_| true)?;
    let page = page(record, &found, &svgs, charts, &files);
    let path = run_dir.path.join(PAGE);
    super::write(&path, &page)?;
    Ok((path, found))
}

/// The text of each chart SVG among `files` of the run in `dir` that `wanted` takes (its path
/// in the directory), in the order the report drew them (`charts`, the main chart first), then
/// by name.
pub fn chart_svgs(
    dir: &Path,
    files: &[RunFile],
    charts: &[ChartFile],
    wanted: impl Fn(&Path) -> bool,
) -> Result<Vec<(PathBuf, String)>> {
    let mut svgs = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "svg") && wanted(&f.path))
    {
        let path = dir.join(&file.path);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        svgs.push((file.path.clone(), text));
    }
    let drawn = |path: &Path| {
        let stem = path.with_extension("");
        charts
            .iter()
            .position(|c| c.path.with_extension("").ends_with(&stem))
            .unwrap_or(usize::MAX)
    };
    svgs.sort_by_key(|(path, _)| drawn(path));
    Ok(svgs)
}

/// The page's title: the experiment, target and profile.
pub fn title(record: &RunRecord) -> String {
    format!(
        "{} · d1bench run {}",
        crate::reports::title(record),
        record.run.id
    )
}

/// The whole page of a run, from what its directory holds: its record, its findings, its
/// chart SVGs (path in the directory and text), the captions of the charts its report drew, and
/// its files.
pub fn page(
    record: &RunRecord,
    found: &Findings,
    svgs: &[(PathBuf, String)],
    captions: &[ChartFile],
    files: &[RunFile],
) -> String {
    let body = html! {
        (heading(record))
        nav {
            a href="#findings" { "Findings" }
            a href="#charts" { "Charts" }
            @if !found.spreads.is_empty() { a href="#sessions" { "Sessions" } }
            a href="#provenance" { "How it was run" }
            a href="#files" { "Files" }
        }
        (findings_section(record, found))
        (charts_section(svgs, captions, files))
        @if !found.spreads.is_empty() { (sessions_section(found)) }
        (provenance_section(record))
        (files_section(files))
    };
    super::page(&title(record), body)
}

/// What every run's page opens with: the experiment and its description, the run's id, target,
/// profile, times and status; for a run that did not end complete, what that means for the
/// page below.
pub fn heading(record: &RunRecord) -> Markup {
    let r = &record.run;
    let description = record
        .studies
        .first()
        .map_or(String::new(), |s| s.description.clone());
    html! {
        h1 { (r.experiment) @if !description.is_empty() { ": " (description) } }
        p.meta {
            "Run " code { (r.id) } " on " code { (r.target) } ", profile " code { (r.profile) }
            "; " (r.started) " to " (r.ended.as_deref().unwrap_or("(not ended)")) "; status "
            span class=(format!("badge {}", r.status.name())) { (r.status) }
        }
        @if let Some(said) = status_note(r.status) {
            div.findings #status {
                p.warn { strong { "Status: " (r.status) "." } " This run " (said) "." }
                @if let Some(error) = &r.error { p { "It said: " code { (error) } } }
                @if !record.resumed.is_empty() {
                    p { "It was resumed " (record.resumed.len()) " time(s)." }
                }
            }
        }
    }
}

/// What a page says of a run that did not end complete, above everything it shows.
pub fn status_note(status: RunStatus) -> Option<&'static str> {
    match status {
        RunStatus::Complete => None,
        RunStatus::Running => {
            Some("had not ended when this page was written: it shows what was measured by then")
        }
        RunStatus::Invalid => Some(
            "measured everything, and what the target held differed from what was sent for \
             some record (see reconcile_note in results.csv): its figures are not to be trusted",
        ),
        RunStatus::Failed => Some(
            "stopped on an error: this page shows what it measured before (`cargo xtask run \
             --resume` continues it)",
        ),
        RunStatus::Interrupted => Some(
            "was stopped (Ctrl-C or a termination signal) before it ended: this page shows \
             what it measured before (`cargo xtask run --resume` continues it)",
        ),
        RunStatus::Abandoned => Some(
            "died without a word (killed, or the machine lost) and a later run found it: this \
             page shows what it measured before (`cargo xtask run --resume` continues it)",
        ),
    }
}

/// `1, 2, 4 columns`, or `none`.
fn listed(points: &[String], axis: Axis) -> String {
    if points.is_empty() {
        "none".to_owned()
    } else {
        format!("{} {}", points.join(", "), axis.name())
    }
}

fn series_name(label: &str) -> String {
    if label.is_empty() {
        String::new()
    } else {
        format!(" (series “{label}”)")
    }
}

/// The findings: what the intervals are, literal ÷ bound's sides, the target ÷ bare SQLite, and
/// the fastest strategy at each point.
fn findings_section(record: &RunRecord, found: &Findings) -> Markup {
    let axis = found.axis;
    let target = found.target;
    let totals = record.reconciliation.clone().unwrap_or_default();
    html! {
        section #findings {
            h2 { "Findings" }
            p {
                "On " code { (target) } ", time per 1,000 rows on the outside clock less the \
                 target's preparation; each figure with its " (found.basis.heading())
                @if matches!(found.basis, crate::studies::sweep::report::intervals::Basis::WithinOneSession) {
                    " (it says nothing of the drift between sessions: another run may land outside it)"
                }
                ". " (thousands(totals.records)) " probes, " (thousands(totals.rows_expected))
                " rows expected and " (thousands(totals.rows_present)) " present. The same figures \
                 as " a href="summary.md" { "summary.md" } " and " a href="summary.csv" { "summary.csv" } "."
            }
            @if record.run.alternate_workers || record.run.paired_workers {
                p {
                    (if record.run.paired_workers {
                        "Both Workers measured this run, side by side in every session: every figure here is the \
                         Rust Worker's probes;"
                    } else {
                        "Both Workers measured this run, session by session: every figure here is the \
                         Rust Worker's sessions;"
                    }) " the JavaScript Worker's are in results.csv (" code { "worker = js" }
                    ") and in summary.md's instrument section."
                }
            }
            div.findings {
                ul {
                    @for ratios in &found.literal_to_bound {
                        li {
                            strong { "literal ÷ bound" (series_name(&ratios.label)) ": " }
                            "literal is faster (interval wholly below 1) at "
                            (listed(&ratios.at(Side::Below, axis), axis))
                            "; bound is faster (wholly above 1) at "
                            (listed(&ratios.at(Side::Above, axis), axis))
                            "; the run cannot tell them apart (the interval includes 1) at "
                            (listed(&ratios.at(Side::Neither, axis), axis)) "."
                        }
                        @if let Some(widest) = ratios.rows.last() {
                            @if let Some(s) = widest.summary {
                                li {
                                    strong { "At " (axis.format(widest.x)) " " (axis.name()) }
                                    (series_name(&ratios.label)) ": literal ÷ bound = "
                                    (super::ratio_with_interval(s.median, s.ci.map(|c| (c.low, c.high))))
                                    ", over " (widest.sessions.len()) " sessions."
                                }
                            }
                        }
                    }
                    @if !found.baseline.is_empty() {
                        li {
                            strong { (target) " ÷ " (found.baseline_target.map_or("the baseline", crate::base::TargetKind::prose)) }
                            " (the same statements in-process, inside clocks, the writes alone on \
                             both sides), over the points: "
                            @for (i, (strategy, low, high)) in found.baseline.iter().enumerate() {
                                @if i > 0 { ", " }
                                (strategy) " " (num(*low)) "× to " (num(*high)) "×"
                            }
                            "."
                        }
                    }
                    @let clear = found.answers.iter().filter(|a| a.cell.clear()).count();
                    li {
                        strong { "Fastest strategy" }
                        " (the paired comparison of repeats, as the decision map ranks them): \
                         decided at " (clear) " of " (found.answers.len())
                        @if found.y_axis.is_some() { " cells" } @else { " points" }
                        " (a winner whose interval excludes 1, or a set shown equivalent within \
                         ±10%, " (verdict::CORRECTION) "); the table below names both where it \
                         cannot."
                    }
                }
            }
            (detectable_table(found))
            (answers_table(found))
        }
    }
}

/// What a replicate of the run could detect: summary.md's table, a row per comparison; nothing
/// without one.
fn detectable_table(found: &Findings) -> Markup {
    use crate::studies::sweep::report::detectable::{CORRECTION, LEAD, NOTE};
    if found.detectable.is_empty() {
        return html! {};
    }
    html! {
        div #detectable {
            p { strong { "What this run could detect." } " " (LEAD) }
            table {
                thead { tr {
                    th { "comparison" } th.num { "judged alone (5%)" }
                    th.num { "among all points (" (CORRECTION) ")" }
                } }
                tbody {
                    @for r in &found.detectable {
                        tr {
                            td { code { (r.target) } ": " (r.comparison) " (" (r.points) " points)" }
                            td.num { (r.alone) }
                            td.num { (r.among) }
                        }
                    }
                }
            }
            p { (NOTE.replace('`', "")) }
        }
    }
}

/// The fastest strategy at each point: the table of a grid's summary.md, for one axis too.
fn answers_table(found: &Findings) -> Markup {
    let labelled = found.answers.iter().any(|a| !a.label.is_empty());
    html! {
        div.wide {
            table {
                thead {
                    tr {
                        th.num { (found.axis.name()) }
                        @if let Some(y) = found.y_axis { th.num { (y.name()) } }
                        @if labelled { th { "series" } }
                        th { "use" }
                        th.num { "ms per 1,000 rows (interval)" }
                        th { "runner-up" }
                        th.num { "runner-up ÷ fastest (interval)" }
                        th { "stopped by a limit" }
                    }
                }
                tbody {
                    @for answer in &found.answers { (answer_row(found, answer, labelled)) }
                }
            }
        }
    }
}

fn answer_row(found: &Findings, answer: &Answer, labelled: bool) -> Markup {
    let cell = &answer.cell;
    let stopped = decision::stopped_text(cell);
    html! {
        tr {
            td.num { (found.axis.format(cell.x)) }
            @if let (Some(axis), Some(y)) = (found.y_axis, answer.y) { td.num { (axis.format(y)) } }
            @if labelled { td { (answer.label) } }
            td { strong { (cell.answer()) } }
            td.num {
                @match cell.ranked.first() {
                    Some((_, s)) => (super::with_interval(s.median, s.ci.map(|c| (c.low, c.high)))),
                    None => "–",
                }
            }
            td { (cell.runner_up().map_or("–".to_owned(), |s| s.to_string())) }
            td.num {
                @match cell.margin {
                    Some(m) => {
                        (super::ratio_with_interval(m.median, m.ci.map(|c| (c.low, c.high))))
                        (cell.verdict.note())
                    }
                    None => "–",
                }
            }
            td { @if stopped.is_empty() { "–" } @else { (stopped) } }
        }
    }
}

/// Each chart SVG of the run, inline, with its caption and its other formats.
pub fn charts_section(
    svgs: &[(PathBuf, String)],
    captions: &[ChartFile],
    files: &[RunFile],
) -> Markup {
    html! {
        section #charts {
            h2 { "Charts" }
            @if svgs.is_empty() { p { "This run has no chart." } }
            @for (path, text) in svgs {
                @let stem = path.with_extension("");
                @let caption = captions.iter().find(|c| c.path.with_extension("").ends_with(&stem));
                figure.chart id=(format!("chart-{}", super::href(&stem))) {
                    @match super::inline_svg(text) {
                        Some(svg) => (svg),
                        None => p.warn { "This SVG holds more than a chart draws: open it as a file." },
                    }
                    figcaption {
                        @if let Some(c) = caption { (c.caption) " " }
                        @for (i, other) in files.iter().filter(|f| f.path.with_extension("") == stem).enumerate() {
                            @if i > 0 { " · " }
                            a href=(super::href(&other.path)) {
                                (other.path.extension().map_or(String::new(), |e| e.to_string_lossy().to_uppercase()))
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Each strategy's points with their sessions as dots, then literal ÷ bound's.
fn sessions_section(found: &Findings) -> Markup {
    html! {
        section #sessions {
            h2 { "Each point's sessions" }
            p {
                "Each row is a point: the diamond its estimate, the bar its interval, and each dot \
                 one session's value (the median of its repeats; of its paired ratios for literal \
                 ÷ bound). Over several sessions the estimate is the geometric mean of the dots and \
                 the interval Student's t on their logarithms; dots far apart are drift between \
                 sessions, which repeats within one session cannot show. Log scale."
            }
            @for spread in &found.spreads {
                h3 { (spread.title) (series_name(&spread.label)) }
                figure.spread { (dots::spread(spread, found.axis)) }
            }
        }
    }
}

/// How the run was run, from run.toml.
pub fn provenance_section(record: &RunRecord) -> Markup {
    let r = &record.run;
    let v = &record.versions;
    let m = &record.machine;
    let totals = record.reconciliation.clone().unwrap_or_default();
    let unit = crate::studies::kind_of(r.kind).unit();
    let load = |l: Option<f64>| l.map_or("not recorded".to_owned(), |l| format!("{l:.2}"));
    let above = m.loads_above_cpus();
    let reference = host_speed::reference_record(&crate::paths::project_root());
    html! {
        section #provenance {
            h2 { "How it was run" }
            dl.provenance {
                dt { "reproduce" } dd { code { (provenance::command(record)) } }
                dt { "commit" } dd {
                    code { (record.git.commit) }
                    @if record.git.dirty { " " span.warn { "(the tree differed from it)" } }
                }
                @for study in &record.studies {
                    dt { "study file" } dd { code { (study.file) } " (SHA-256 " code { (study.sha256) } ")" }
                }
                dt { "sessions" } dd {
                    (r.sessions.unwrap_or(1)) " on each target"
                    @if let Some(baseline) = r.baseline { ", the baseline " code { (baseline) } "'s alternating with the target's" }
                    @if let Some(seed) = r.order_seed { "; order seed " (seed) }
                }
                dt { "warm-up" } dd {
                    (thousands(totals.warmups)) " warm-up probes recorded and left out of every figure; "
                    (thousands(totals.warmup_discarded)) " measured probes discarded as warm-up \
                     (before their session settled)"
                }
                dt { "reconciliation" } dd { (totals.line(unit)) }
                dt { "versions" } dd {
                    "d1bench " (v.d1bench) ", worker " (v.worker) " (worker crate " (v.worker_crate)
                    "), wrangler " (v.wrangler) ", workerd " (v.workerd) ", SQLite " (v.sqlite) ", " (v.rustc)
                    @if let Some(build) = &v.worker_build { ", Worker build " code { (build) } }
                }
                dt { "machine" } dd {
                    (m.os) ", " (m.arch) ", " (m.cpu) ", " (m.cpus) " cores, " (format!("{:.1}", m.memory_gib)) " GiB"
                }
                @if let Some(limit) = &m.cpu_limit {
                    dt { "CPU limit" } dd.warn {
                        (limit) ": the run measured that limit as much as the machine; its times \
                         are not comparable with runs made without it"
                    }
                }
                @if let Some(speed) = HostSpeed::of(record) {
                    dt { "host speed" } dd {
                        (format!("{:.1} ms", speed.center_ms))
                        @if let Some(ci) = speed.interval { (format!(" ({:.1}–{:.1}, 95% over {} readings)", ci.low, ci.high, speed.readings)) }
                        (format!(", spread ±{:.1}% (sd of the readings' logs)", 100.0 * speed.spread))
                        @if let Some(shift) = reference.as_ref().filter(|r| r.run.id != record.run.id).and_then(|r| HostShift::between(r, record)) {
                            "; against the committed example run: " (shift.text())
                        }
                        (super::host::readings(record, reference.as_ref()))
                    }
                }
                dt { "load average" } dd {
                    "1-minute, " (load(m.load_at_start)) " at the start and " (load(m.load_at_end)) " at the end"
                    @if !above.is_empty() {
                        " " span.warn { "(above the " (m.cpus) " cores: other work shared the machine)" }
                    }
                }
                @if r.isolate_heap { dt { "heap sampling" } dd { "the isolate's heap was sampled during each measured request" } }
                @if let Some(percent) = r.debug_slow_percent {
                    dt { "debug" } dd.warn { "every timed window stretched by " (percent) "%: a test of the harness" }
                }
                @if r.debug_corrupt.is_some() {
                    dt { "debug" } dd.warn { "every probe's table corrupted on purpose: a test of the harness" }
                }
                @if let Some(error) = &r.error { dt { "error" } dd.warn { (error) } }
            }
            @if !record.sessions.is_empty() {
                h3 { "Sessions" }
                div.wide {
                    table {
                        thead { tr {
                            th { "target" } th.num { "session" } th.num { "start (s)" }
                            th.num { "measuring (s)" } th.num { "calls" } th.num { "discarded as warm-up" }
                        } }
                        tbody {
                            @for s in &record.sessions {
                                tr {
                                    td { (s.target) } td.num { (s.session) }
                                    td.num { (format!("{:.1}", s.start_ms / 1000.0)) }
                                    td.num { (format!("{:.1}", s.wall_ms / 1000.0)) }
                                    td.num { (s.calls) }
                                    td.num { (s.warmup_discarded.map_or("–".to_owned(), |d| d.to_string())) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A link to every file of the run.
pub fn files_section(files: &[RunFile]) -> Markup {
    html! {
        section #files {
            h2 { "Files" }
            table {
                thead { tr { th { "file" } th.num { "size" } } }
                tbody {
                    @for file in files {
                        tr {
                            td { a href=(super::href(&file.path)) { (super::href(&file.path)) } }
                            td.num { (super::size_text(file.bytes)) }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_lists_every_file_but_what_a_report_writes_over_runs() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["run.toml", "index.html", "index.md", "runs.html", "a.svg"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::fs::write(dir.path().join("sub/index.html"), "xy").unwrap();
        let files = run_files(dir.path()).unwrap();
        let names: Vec<String> = files.iter().map(|f| super::super::href(&f.path)).collect();
        assert_eq!(names, ["a.svg", "run.toml", "sub/index.html"]);
        assert_eq!(files[2].bytes, 2);
    }
}
