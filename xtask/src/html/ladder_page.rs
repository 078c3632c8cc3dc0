//! A ladder run's `index.html` (`limits`, or one ladder), from its own directory: the parity
//! table first (each documented limit beside what this run found and whether its target
//! enforced it, and beside what the committed parity tables of the other targets say), then
//! per ladder the rungs it climbed with each outcome, its classified refusal and D1's error
//! text verbatim, and the isolate's heap where it was sampled; then the run's charts, how it
//! was run and its files, as a sweep's page shows them ([`super::run_page`]).

use std::path::PathBuf;

use anyhow::Result;
use d1bench_core::ladder::LadderKind;
use maud::{Markup, html};

use super::run_page::{self, RunFile};
use crate::base::TargetKind;
use crate::base::numbers::thousands;
use crate::paths::Paths;
use crate::records::{RunDir, RunRecord, csv};
use crate::reports::ChartFile;
use crate::studies::ladder::Role;
use crate::studies::ladder::report::parity::{self, ParityRow};
use crate::studies::ladder::row::RungRow;

/// The targets whose committed parity tables (`reports/parity-<target>.csv`) a page shows
/// beside the run's own, in the order of docs/limits.md.
const COMMITTED: [TargetKind; 5] = [
    TargetKind::Local,
    TargetKind::Sqlite,
    TargetKind::Do,
    TargetKind::Hyperdrive,
    TargetKind::Remote,
];

/// Another target's parity table, as committed.
pub struct Beside {
    pub target: TargetKind,
    /// The file it was read from, relative to the project.
    pub file: String,
    pub rows: Vec<ParityRow>,
}

/// The committed parity tables of the targets other than `target` (each one that exists).
pub fn committed_beside(paths: &Paths, target: TargetKind) -> Result<Vec<Beside>> {
    let mut out = Vec::new();
    for other in COMMITTED.into_iter().filter(|t| *t != target) {
        let name = parity::table_name(other);
        let path = parity::committed(paths, name);
        if path.is_file() {
            out.push(Beside {
                target: other,
                file: format!("reports/parity-{name}.csv"),
                rows: csv::read(&path)?,
            });
        }
    }
    Ok(out)
}

/// Writes the page of the ladder run in `run_dir` as its `index.html`, after its report drew
/// `charts`; returns the page's path and its headline.
pub fn write(
    run_dir: &RunDir,
    record: &RunRecord,
    charts: &[ChartFile],
) -> Result<(PathBuf, String)> {
    let (findings, rungs) = crate::studies::ladder::report::read(run_dir)?;
    let rows = parity::rows(&findings, &parity::Source::of(record));
    let beside = committed_beside(&Paths::new(crate::paths::project_root()), record.run.target)?;
    let files = run_page::run_files(&run_dir.path)?;
    let svgs = run_page::chart_svgs(&run_dir.path, &files, charts, |_| true)?;
    let html = page(record, &rows, &beside, &rungs, &svgs, charts, &files);
    let path = run_dir.path.join(run_page::PAGE);
    super::write(&path, &html)?;
    Ok((path, headline(&rows)))
}

/// The run in a line for the page over runs: how many limits its target enforced, and where.
pub fn headline(rows: &[ParityRow]) -> String {
    if rows.is_empty() {
        return "no climb finished".to_owned();
    }
    let enforced: Vec<String> = rows
        .iter()
        .filter(|r| {
            !matches!(
                r.enforced,
                parity::Enforced::No | parity::Enforced::StoppedBy(_)
            )
        })
        .map(|r| format!("{} at {}", r.ladder.name(), r.found))
        .collect();
    format!(
        "{} of {} limits enforced{}",
        enforced.len(),
        rows.len(),
        if enforced.is_empty() {
            String::new()
        } else {
            format!(": {}", enforced.join("; "))
        }
    )
}

/// The whole page of a ladder run.
pub fn page(
    record: &RunRecord,
    rows: &[ParityRow],
    beside: &[Beside],
    rungs: &[RungRow],
    svgs: &[(PathBuf, String)],
    captions: &[ChartFile],
    files: &[RunFile],
) -> String {
    let body = html! {
        (run_page::heading(record))
        nav {
            a href="#parity" { "Limits: documented and found" }
            a href="#rungs" { "Rungs" }
            a href="#charts" { "Charts" }
            a href="#provenance" { "How it was run" }
            a href="#files" { "Files" }
        }
        (parity_section(record, rows, beside))
        (rungs_section(rows, rungs))
        (run_page::charts_section(svgs, captions, files))
        (run_page::provenance_section(record))
        (run_page::files_section(files))
    };
    super::page(&run_page::title(record), body)
}

/// A committed table's cell for `ladder`: what it found, and whether it was enforced.
fn beside_cell(beside: &Beside, ladder: LadderKind) -> Markup {
    match beside.rows.iter().find(|r| r.ladder == ladder) {
        Some(r) => html! { (r.found) small { "enforced: " (r.enforced.to_string()) } },
        None => html! { "not measured" },
    }
}

/// The parity table: each limit climbed, documented against found here, the verdict and
/// refusal, D1's text, and the committed tables of the other targets beside.
fn parity_section(record: &RunRecord, rows: &[ParityRow], beside: &[Beside]) -> Markup {
    let target = record.run.target;
    html! {
        section #parity {
            h2 { "Limits: documented and found" }
            p {
                "Each limit a ladder climbed, as Cloudflare documents it, against the value this run \
                 found on " code { (target) } " and whether " code { (target) } " enforced it (its \
                 first refusal classified, and D1's error text verbatim). Beside it, what the \
                 committed parity tables of the other targets say"
                @if beside.is_empty() { " (none is committed)" }
                @else {
                    " ("
                    @for (i, b) in beside.iter().enumerate() {
                        @if i > 0 { ", " }
                        code { (b.file) }
                    }
                    ")"
                }
                ". The same table as " a href="parity.csv" { "parity.csv" } "."
            }
            @if rows.is_empty() {
                p.warn { "No climb finished: there is no limit to compare yet." }
            } @else {
                div.wide { table {
                    thead { tr {
                        th { "limit" } th { "documented" } th { "found on " (target) }
                        th { "enforced?" } th { "refusal" }
                        @for b in beside { th { (b.target) " (committed)" } }
                        th { "error text" }
                    } }
                    tbody {
                        @for r in rows {
                            tr {
                                td { (r.limit) } td { (r.documented) } td { strong { (r.found) } }
                                td { (r.enforced.to_string()) }
                                td { (r.refusal.map_or("–".to_owned(), |k| k.to_string())) }
                                @for b in beside { td { (beside_cell(b, r.ladder)) } }
                                td { @if r.error.is_empty() { "–" } @else { code { (r.error) } } }
                            }
                        }
                    }
                } }
            }
        }
    }
}

/// Per ladder, every rung sent in order: its climb, value, why it was sent, its outcome and
/// refusal, D1's text, and the isolate's heap.
fn rungs_section(rows: &[ParityRow], rungs: &[RungRow]) -> Markup {
    let mut ladders: Vec<LadderKind> = rungs.iter().map(|r| r.ladder).collect();
    ladders.dedup();
    let heap = rungs.iter().any(|r| r.isolate_heap_peak_bytes.is_some());
    html! {
        section #rungs {
            h2 { "Rungs" }
            @if ladders.is_empty() { p { "No rung is recorded." } }
            @for ladder in ladders {
                @let mine: Vec<&RungRow> = rungs.iter().filter(|r| r.ladder == ladder).collect();
                @let documented = rows.iter().find(|r| r.ladder == ladder).map(|r| r.documented.clone());
                h3 id=(format!("ladder-{}", ladder.name())) { (ladder.name()) " (" (ladder.unit()) ")" }
                p {
                    (mine.len()) " rungs"
                    @if let Some(d) = documented { "; documented: " (d) }
                    @if let Some(first) = mine.iter().find(|r| r.role != Role::Calibrate && r.failed()) {
                        "; first refused at " (thousands(first.value)) " " (first.unit)
                    }
                    "."
                }
                div.wide { table {
                    thead { tr {
                        th { "held" } th.num { "value" } th { "sent to" } th { "outcome" }
                        th { "refusal" } th.num { "outside ms" }
                        @if heap { th.num { "isolate heap peak" } }
                        th { "error text" }
                    } }
                    tbody {
                        @for r in &mine {
                            tr {
                                td { @if r.held.is_empty() { "–" } @else { (r.held) } }
                                td.num { (thousands(r.value)) }
                                td { (r.role.name()) }
                                td { (r.outcome.to_string()) }
                                td { (r.refusal.map_or("–".to_owned(), |k| k.to_string())) }
                                td.num { (format!("{:.1}", r.outside_ms)) }
                                @if heap {
                                    td.num { (r.isolate_heap_peak_bytes.map_or("–".to_owned(), super::size_text)) }
                                }
                                td { @if r.error.is_empty() { "–" } @else { code { (r.error) } } }
                            }
                        }
                    }
                } }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(ladder: LadderKind, found: &str, enforced: parity::Enforced) -> ParityRow {
        ParityRow {
            limit: ladder.name().into(),
            ladder,
            documented: "100".into(),
            found: found.into(),
            enforced,
            refusal: None,
            error: String::new(),
            run: String::new(),
            commit: None,
            versions: String::new(),
        }
    }

    #[test]
    fn the_headline_counts_the_limits_enforced() {
        assert_eq!(headline(&[]), "no climb finished");
        let rows = [
            row(
                LadderKind::Columns,
                "100 columns ok, 101 refused",
                parity::Enforced::Yes,
            ),
            row(LadderKind::ResultSize, "no refusal", parity::Enforced::No),
            row(
                LadderKind::RowSize,
                "8 ok",
                parity::Enforced::StoppedBy(None),
            ),
        ];
        assert_eq!(
            headline(&rows),
            "1 of 3 limits enforced: columns at 100 columns ok, 101 refused"
        );
    }

    #[test]
    fn the_parity_table_shows_the_committed_targets_beside_the_runs() {
        let record = crate::records::run_record::tests_support::record();
        let rows = [row(
            LadderKind::Columns,
            "100 columns ok",
            parity::Enforced::Yes,
        )];
        let beside = [Beside {
            target: TargetKind::Local,
            file: "reports/parity-local.csv".into(),
            rows: vec![row(LadderKind::Columns, "99 <b>", parity::Enforced::At(99))],
        }];
        let html = parity_section(&record, &rows, &beside).into_string();
        for text in [
            "found on sqlite",
            "local (committed)",
            "99 &lt;b&gt;<small>enforced: yes, at 99</small>",
            "<code>reports/parity-local.csv</code>",
        ] {
            assert!(html.contains(text), "{text}: {html}");
        }
    }
}
