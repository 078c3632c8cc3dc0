//! A run's `index.html` whatever its kind, the one call `cargo xtask run` (at its end, complete,
//! failed or interrupted, and after `--resume`), the next run finding one abandoned, and
//! `cargo xtask report` make: a sweep's page ([`super::run_page`]), a ladder's
//! ([`super::ladder_page`]) or a workload's ([`super::workload_page`]), and for a run that
//! measured nothing the page that says so, with how it was run and its files.

use std::path::PathBuf;

use anyhow::Result;
use maud::html;

use super::findings::Findings;
use super::runs_page;
use super::{ladder_page, run_page, workload_page};
use crate::records::{RunDir, RunRecord, StudyKind};
use crate::reports::ChartFile;

/// A run's page as written: where it is, and what the page over runs says of the run.
#[derive(Debug, Clone)]
pub struct Written {
    pub path: PathBuf,
    /// The run in a line ([`runs_page::Entry::headline`]).
    pub headline: Option<String>,
    /// A sweep's findings.
    pub findings: Option<Findings>,
}

/// Whether `run_dir` holds records to show: a results.csv (or its gzipped copy) with content.
pub fn measured(run_dir: &RunDir) -> bool {
    let csv = run_dir.results_csv();
    let empty = std::fs::metadata(&csv).is_ok_and(|m| m.len() == 0);
    crate::records::csv::exists(&csv) && !empty
}

/// Writes the page of the run in `run_dir` as its `index.html`, after its report drew `charts`
/// (none when it could not render); `titles` as the run's charts were drawn.
pub fn write(
    run_dir: &RunDir,
    record: &RunRecord,
    charts: &[ChartFile],
    titles: bool,
) -> Result<Written> {
    if !measured(run_dir) {
        return write_unmeasured(run_dir, record);
    }
    Ok(match record.run.kind {
        StudyKind::Sweep => {
            let (path, found) = run_page::write(run_dir, record, charts)?;
            Written {
                path,
                headline: Some(runs_page::headline(&found)),
                findings: Some(found),
            }
        }
        StudyKind::Ladder => {
            let (path, headline) = ladder_page::write(run_dir, record, charts)?;
            Written {
                path,
                headline: Some(headline),
                findings: None,
            }
        }
        StudyKind::Workload => {
            let (path, headline) = workload_page::write(run_dir, record, charts, titles)?;
            Written {
                path,
                headline: Some(headline),
                findings: None,
            }
        }
    })
}

/// The page of a run with no record: its status and error, how it was run, its files.
fn write_unmeasured(run_dir: &RunDir, record: &RunRecord) -> Result<Written> {
    let files = run_page::run_files(&run_dir.path)?;
    let body = html! {
        (run_page::heading(record))
        section #nothing {
            h2 { "Nothing measured" }
            p { "The run ended before it recorded anything: there is no results.csv to show." }
        }
        (run_page::provenance_section(record))
        (run_page::files_section(&files))
    };
    let path = run_dir.path.join(run_page::PAGE);
    super::write(&path, &super::page(&run_page::title(record), body))?;
    Ok(Written {
        path,
        headline: None,
        findings: None,
    })
}

/// The page's path as the run's last line prints it: a `file://` link a terminal can open.
pub fn link(path: &std::path::Path) -> String {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_owned());
    let text = absolute.to_string_lossy();
    let mut out = String::from("file://");
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' | b'+' => {
                out.push(byte as char)
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_link_is_a_file_url_with_what_a_url_cannot_hold_escaped() {
        assert_eq!(
            link(std::path::Path::new("/tmp/a b/index.html")),
            "file:///tmp/a%20b/index.html"
        );
        assert!(link(std::path::Path::new("x/index.html")).starts_with("file:///"));
    }

    #[test]
    fn a_run_that_recorded_nothing_gets_a_page_that_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let run_dir = RunDir::new(dir.path().to_owned());
        let mut record = crate::records::run_record::tests_support::record();
        record.run.status = crate::records::RunStatus::Interrupted;
        record.run.error = Some("interrupted while seeding".into());
        record.write(&run_dir.run_toml()).unwrap();
        let written = write(&run_dir, &record, &[], false).unwrap();
        let html = std::fs::read_to_string(&written.path).unwrap();
        for text in [
            "Status: interrupted.",
            "This run was stopped",
            "interrupted while seeding",
            "Nothing measured",
            "href=\"run.toml\"",
        ] {
            assert!(html.contains(text), "{text}: {html}");
        }
    }
}
