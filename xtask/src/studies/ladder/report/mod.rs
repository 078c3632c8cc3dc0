//! A ladder run's reports, derived from its findings.csv: the limits parity table
//! (`parity.csv`, [`parity`]), `summary.md` ([`summary`]) and the param-ceiling chart
//! ([`chart`]).

pub mod chart;
pub mod parity;
pub mod summary;

use anyhow::{Context, Result};

use crate::records::csv;
use crate::records::{RunDir, RunRecord};
use crate::reports::{Rendered, chart_files, title};
use crate::studies::ladder::row::{ClimbFinding, RungRow};

/// A ladder run's records: its findings and its rungs (for what the isolate used at each), each
/// empty when its file is not there (a run without results.csv has no rungs).
pub fn read(run_dir: &RunDir) -> Result<(Vec<ClimbFinding>, Vec<RungRow>)> {
    let findings: Vec<ClimbFinding> = if run_dir.findings_csv().exists() {
        csv::read(&run_dir.findings_csv())?
    } else {
        Vec::new()
    };
    let rungs: Vec<RungRow> = if csv::exists(&run_dir.results_csv()) {
        csv::read(&run_dir.results_csv())?
    } else {
        Vec::new()
    };
    Ok((findings, rungs))
}

/// A ladder run's reports: parity.csv, the param-ceiling chart and summary.md, which lists it.
pub fn render_ladder(run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
    let (findings, rungs) = read(run_dir)?;
    let rows = parity::rows(&findings, &parity::Source::of(record));
    csv::write(&run_dir.parity_csv(), &rows)?;
    let title = title(record);
    let drawn = chart::param_ceiling(&run_dir.path, &findings, record.run.target, titles)?;
    std::fs::write(
        run_dir.summary_md(),
        summary::markdown(&title, record, &findings, &rungs, &rows, drawn.as_slice()),
    )
    .with_context(|| format!("cannot write {}", run_dir.summary_md().display()))?;
    let charts = drawn.into_iter().flat_map(chart_files).collect();
    Ok(Rendered {
        charts,
        tables: parity::markdown(&rows),
    })
}
