//! Every report of a run, derived from what is on disk and nothing else: `summary.csv`, the
//! charts and `summary.md` of a sweep; `parity.csv`, `summary.md` and the param-ceiling chart of
//! a ladder run, both saying how the run was run ([`provenance`]); `index.md` over many runs
//! ([`index`]); two runs compared ([`compare`]). The
//! same code serves `cargo xtask run` at its end, `cargo xtask plot` and `cargo xtask report`,
//! so they cannot disagree.

pub mod cache;
pub mod charts;
pub mod claims;
pub mod contention;
pub mod findings;
pub mod index;
pub mod ladder_summary;
pub mod load_stats;
pub mod numbers;
pub mod parity;
pub mod placement;
pub mod provenance;
pub mod readme;
pub mod staleness;
pub mod workload;
pub mod workload_findings;

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::records::csv;
use crate::records::{Finding, RunDir, RunRecord};

/// A chart file and the line saying what it shows.
#[derive(Debug, Clone)]
pub struct ChartFile {
    pub path: PathBuf,
    pub caption: String,
}

/// What rendering a run wrote.
#[derive(Debug, Default)]
pub struct Rendered {
    /// Chart files (PNG and SVG).
    pub charts: Vec<ChartFile>,
    /// Tables for the terminal.
    pub tables: String,
}

/// The title of a run's summary: the experiment, target and profile by name.
pub fn title(record: &RunRecord) -> String {
    format!(
        "{} ({}, {})",
        record.run.experiment, record.run.target, record.run.profile
    )
}

/// Each file of a chart with the chart's caption.
pub fn chart_files(drawn: charts::Drawn) -> impl Iterator<Item = ChartFile> {
    let caption = drawn.caption;
    drawn.files.into_iter().map(move |path| ChartFile {
        path,
        caption: caption.clone(),
    })
}

/// A ladder run's reports: parity.csv, summary.md and the param-ceiling chart.
pub fn render_ladder(run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
    let findings: Vec<Finding> = if run_dir.findings_csv().exists() {
        csv::read(&run_dir.findings_csv())?
    } else {
        Vec::new()
    };
    let rows = parity::rows(&findings, &parity::Source::of(record));
    csv::write(&run_dir.parity_csv(), &rows)?;
    let title = title(record);
    std::fs::write(
        run_dir.summary_md(),
        ladder_summary::markdown(&title, record, &findings, &rows),
    )
    .with_context(|| format!("cannot write {}", run_dir.summary_md().display()))?;
    let charts =
        charts::ladder::param_ceiling(&run_dir.path, &findings, record.run.target, titles)?
            .into_iter()
            .flat_map(chart_files)
            .collect();
    Ok(Rendered {
        charts,
        tables: parity::markdown(&rows),
    })
}
