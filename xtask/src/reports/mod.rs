//! Every report of a run, derived from what is on disk and nothing else: `summary.csv`, the
//! charts and `summary.md` of a sweep; `parity.csv`, `summary.md` and the param-ceiling chart of
//! a ladder run, both saying how the run was run ([`provenance`]); `index.md` over many runs
//! ([`index`]); two runs compared ([`compare`]). The
//! same code serves `cargo xtask run` at its end, `cargo xtask plot` and `cargo xtask report`,
//! so they cannot disagree.

pub mod charts;
pub mod claims;
pub mod clocks;
pub mod compare;
pub mod findings;
pub mod index;
pub mod ladder_summary;
pub mod load_stats;
pub mod parity;
pub mod points;
pub mod provenance;
pub mod quantiles;
pub mod stats;
pub mod summary;
pub mod workload;

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::records::csv;
use crate::records::{Finding, ResultRow, RunDir, RunRecord, StudyKind};

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

/// Writes every report of `run_dir` from its run.toml and record files; with `print`, shows the
/// key tables and where everything is. With `titles`, charts carry their titles (their captions
/// always do).
pub fn render(run_dir: &RunDir, print: bool, titles: bool) -> Result<Rendered> {
    let record = RunRecord::read(&run_dir.run_toml())?;
    let rendered = match record.run.kind {
        StudyKind::Sweep => render_sweep(run_dir, &record, titles)?,
        StudyKind::Ladder => render_ladder(run_dir, &record, titles)?,
        StudyKind::Workload => workload::render(run_dir, &record, titles)?,
    };
    if print {
        print!("{}", rendered.tables);
        for chart in &rendered.charts {
            println!("chart: {}", chart.path.display());
        }
        println!("results: {}", run_dir.results_csv().display());
        println!("summary: {}", run_dir.summary_md().display());
    }
    Ok(rendered)
}

/// The title of a run's summary: the experiment, target and profile by name.
pub fn title(record: &RunRecord) -> String {
    format!(
        "{} ({}, {})",
        record.run.experiment, record.run.target, record.run.profile
    )
}

fn render_sweep(run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
    let rows: Vec<ResultRow> = csv::read(&run_dir.results_csv())?;
    let axis = record
        .run
        .x_axis
        .with_context(|| format!("{} names no x axis", run_dir.run_toml().display()))?;
    let target = record.run.target;
    let summary_csv = points::summary_csv(&rows, axis, record.run.precision)?;
    std::fs::write(run_dir.summary_csv(), summary_csv)
        .with_context(|| format!("cannot write {}", run_dir.summary_csv().display()))?;
    let drawn = charts::sweep::render_run(run_dir, &rows, axis, target, titles)?;
    std::fs::write(
        run_dir.summary_md(),
        summary::markdown(record, &rows, &drawn),
    )
    .with_context(|| format!("cannot write {}", run_dir.summary_md().display()))?;
    let mut tables = format!(
        "median time per 1,000 rows on {target} (outside clock less preparation, 95% \
         interval):\n{}",
        summary::ratio_table(&rows, axis, target)
    );
    tables.push_str(&summary::precision_line(&rows, axis, target, record));
    if let Some(table) = summary::baseline_table(&rows, axis, target) {
        tables.push_str(&format!("{target} ÷ bare SQLite (inside clocks):\n{table}"));
    }
    if let Some(table) = clocks::table(&rows, axis, target) {
        tables.push_str(&format!(
            "median ms per probe on {target}, clock by clock:\n{table}"
        ));
    }
    Ok(Rendered {
        charts: drawn.into_iter().flat_map(chart_files).collect(),
        tables,
    })
}

/// Each file of a chart with the chart's caption.
fn chart_files(drawn: charts::Drawn) -> impl Iterator<Item = ChartFile> {
    let caption = drawn.caption;
    drawn.files.into_iter().map(move |path| ChartFile {
        path,
        caption: caption.clone(),
    })
}

fn render_ladder(run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
    let findings: Vec<Finding> = if run_dir.findings_csv().exists() {
        csv::read(&run_dir.findings_csv())?
    } else {
        Vec::new()
    };
    let rows = parity::rows(&findings);
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
