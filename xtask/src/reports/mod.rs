//! What every kind's reports share, below the kinds: what they return ([`Rendered`], its
//! [`ChartFile`]s), a summary's title, what every summary says of how its run was run
//! ([`provenance`]) and of its host's speed ([`host_speed`]), how shares are written ([`numbers`]), the isolate's memory against its limit ([`memory`]), and what a chart written to disk is
//! ([`charts`]). Each kind renders its own run in its folder (`studies/<kind>/report/`); the
//! index over runs is `tasks/index.rs`, the README's generated sections `readme/`.

pub mod charts;
pub mod host_speed;
pub mod memory;
pub mod numbers;
pub mod provenance;

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
