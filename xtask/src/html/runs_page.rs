//! The page over every run `cargo xtask report` was given, newest first: one row per run of
//! every kind with how it ended, where and at which commit it ran, what it found in a line (a
//! sweep's fastest strategy along its axis, a ladder's limits enforced, a workload's verdicts or
//! latencies), and links to its own page and files.

use std::path::{Path, PathBuf};

use maud::html;

use super::findings::Findings;
use crate::paths::relative;
use crate::records::RunRecord;

/// The page's file name in its directory; `runs.html` where that directory is itself a run,
/// whose own page is its `index.html`.
pub fn file_name(out_dir: &Path) -> &'static str {
    if out_dir.join("run.toml").is_file() {
        "runs.html"
    } else {
        "index.html"
    }
}

/// One run on the page.
#[derive(Debug, Clone)]
pub struct Entry {
    pub dir: PathBuf,
    pub record: RunRecord,
    /// The run's own page, when it has one.
    pub page: Option<PathBuf>,
    /// What it found, in a line: [`headline`] of a sweep's findings, a ladder's or a
    /// workload's headline (`crate::html::ladder_page::headline`,
    /// `crate::html::workload_page::headline`); none for a run that measured nothing.
    pub headline: Option<String>,
}

/// `entries` newest first (by when each run started, then by directory).
pub fn newest_first(entries: &mut [Entry]) {
    entries.sort_by(|a, b| {
        (b.record.run.started.as_str(), &b.dir).cmp(&(a.record.run.started.as_str(), &a.dir))
    });
}

/// The fastest strategy along the axis in one line, neighbouring points with the same answer
/// taken together: `json at 1–4 columns; literal or exec at 8; exec at 16–100`. A grid: how
/// many cells each answer takes.
pub fn headline(found: &Findings) -> String {
    let axis = found.axis;
    if found.y_axis.is_some() {
        let mut counts: Vec<(String, usize)> = Vec::new();
        for answer in &found.answers {
            let text = answer.cell.answer();
            match counts.iter_mut().find(|(t, _)| *t == text) {
                Some((_, n)) => *n += 1,
                None => counts.push((text, 1)),
            }
        }
        let parts: Vec<String> = counts
            .iter()
            .map(|(text, n)| format!("{text} in {n}"))
            .collect();
        return format!(
            "fastest, of {} cells: {}",
            found.answers.len(),
            parts.join("; ")
        );
    }
    let mut runs: Vec<(String, String, String, String)> = Vec::new();
    for answer in &found.answers {
        let text = answer.cell.answer();
        let x = axis.format(answer.cell.x);
        match runs.last_mut() {
            Some((label, t, _, last)) if *label == answer.label && *t == text => *last = x,
            _ => runs.push((answer.label.clone(), text, x.clone(), x)),
        }
    }
    let parts: Vec<String> = runs
        .iter()
        .map(|(label, text, first, last)| {
            let series = if label.is_empty() {
                String::new()
            } else {
                format!("{label}: ")
            };
            if first == last {
                format!("{series}{text} at {first}")
            } else {
                format!("{series}{text} at {first}–{last}")
            }
        })
        .collect();
    format!("fastest by {}: {}", axis.name(), parts.join("; "))
}

/// The page over `entries` (in the order given: [`newest_first`]), written in `out_dir` (its
/// links are relative to it).
pub fn page(entries: &[Entry], out_dir: &Path) -> String {
    let link = |path: &Path| super::href(&relative(out_dir, path));
    let body = html! {
        h1 { "d1bench runs" }
        p.meta {
            (entries.len()) " run(s), newest first. Compare ratios between strategies, not milliseconds between \
             targets. The same runs in markdown: " a href="index.md" { "index.md" } "."
        }
        div.wide {
            table {
                thead { tr {
                    th { "run" } th { "experiment" } th { "target" } th { "profile" }
                    th { "status" } th { "commit" } th { "what it found" } th { "files" }
                } }
                tbody {
                    @for e in entries {
                        @let r = &e.record.run;
                        tr {
                            td {
                                @match &e.page {
                                    Some(page) => a href=(link(page)) { code { (r.id) } },
                                    None => code { (r.id) },
                                }
                            }
                            td { (r.experiment) }
                            td {
                                (r.target)
                                @if let Some(remote) = &e.record.remote {
                                    ", " (remote.location_hint.as_deref().unwrap_or("no location hint"))
                                }
                            }
                            td { (r.profile) }
                            td { span class=(format!("badge {}", r.status.name())) { (r.status) } }
                            td { code { (e.record.git.commit.short(7)) } @if e.record.git.dirty { " (dirty)" } }
                            td {
                                @match (&e.headline, &r.error) {
                                    (Some(line), _) => (line),
                                    (None, Some(error)) => span.warn { (error) },
                                    (None, None) => "see its summary",
                                }
                            }
                            td {
                                @for (i, name) in ["summary.md", "results.csv", "run.toml"]
                                    .iter().filter(|n| e.dir.join(n).is_file()).enumerate() {
                                    @if i > 0 { " · " }
                                    a href=(link(&e.dir.join(name))) { (name) }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    super::page("d1bench runs", body)
}

#[cfg(test)]
mod tests {
    use d1bench_core::Strategy;

    use super::*;
    use crate::base::TargetKind;
    use crate::html::findings::Answer;
    use crate::stats::Summary;
    use crate::studies::sweep::Axis;
    use crate::studies::sweep::report::decision::Cell;
    use crate::studies::sweep::report::intervals::Basis;

    fn answer(x: f64, strategy: Strategy) -> Answer {
        Answer {
            label: String::new(),
            y: None,
            cell: Cell {
                x,
                y: 0.0,
                ranked: vec![(strategy, Summary::of(&[1.0]).unwrap())],
                margin: None,
                stopped: Vec::new(),
                evidence: Vec::new(),
                verdict: crate::studies::sweep::report::verdict::Verdict::Only(strategy),
            },
        }
    }

    #[test]
    fn the_headline_takes_neighbouring_points_with_one_answer_together() {
        let found = Findings {
            target: TargetKind::Local,
            axis: Axis::Columns,
            y_axis: None,
            basis: Basis::WithinOneSession,
            answers: vec![
                answer(1.0, Strategy::Json),
                answer(2.0, Strategy::Json),
                answer(8.0, Strategy::Bound),
                answer(16.0, Strategy::Exec),
                answer(100.0, Strategy::Exec),
            ],
            literal_to_bound: Vec::new(),
            baseline: Vec::new(),
            baseline_target: None,
            spreads: Vec::new(),
            detectable: Vec::new(),
        };
        assert_eq!(
            headline(&found),
            "fastest by columns: json at 1–2; bound at 8; exec at 16–100"
        );
        let grid = Findings {
            y_axis: Some(Axis::RowBytes),
            ..found
        };
        assert_eq!(
            headline(&grid),
            "fastest, of 5 cells: json in 2; bound in 1; exec in 2"
        );
    }

    #[test]
    fn the_runs_are_listed_newest_first() {
        let entry = |dir: &str, started: &str| {
            let mut record = crate::records::run_record::tests_support::record();
            record.run.started = started.into();
            Entry {
                dir: PathBuf::from(dir),
                record,
                page: None,
                headline: None,
            }
        };
        let mut entries = vec![
            entry("a", "2026-12-01T00:00:00Z"),
            entry("b", "2026-12-03T00:00:00Z"),
            entry("c", "2026-12-02T00:00:00Z"),
        ];
        newest_first(&mut entries);
        let dirs: Vec<&Path> = entries.iter().map(|e| e.dir.as_path()).collect();
        assert_eq!(dirs, [Path::new("b"), Path::new("c"), Path::new("a")]);
    }

    #[test]
    fn the_page_over_runs_is_runs_html_where_its_directory_is_a_run() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(file_name(dir.path()), "index.html");
        std::fs::write(dir.path().join("run.toml"), "").unwrap();
        assert_eq!(file_name(dir.path()), "runs.html");
    }
}
