//! Every report of a run, derived from what is on disk and nothing else: `summary.csv`, the
//! charts and `summary.md` of a sweep; `parity.csv`, `summary.md` and the param-ceiling chart of
//! a ladder run, both saying how the run was run ([`provenance`]); `index.md` over many runs
//! ([`index`]); two runs compared ([`compare`]). The
//! same code serves `cargo xtask run` at its end, `cargo xtask plot` and `cargo xtask report`,
//! so they cannot disagree.

pub mod charts;
pub mod findings;
pub mod index;
pub mod numbers;
pub mod provenance;
pub mod readme;
pub mod workload_findings;

use std::path::PathBuf;

use crate::records::RunRecord;

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
