//! A sweep run's reports, derived from its results.csv: its points and summary.csv
//! ([`points`]), summary.md ([`summary`]) with its table of clocks ([`clocks`]), its charts
//! ([`chart`]), a grid run's decision map ([`decision`], judged by [`verdict`], written by
//! [`decision_table`], drawn by [`decision_map`]), what sampling
//! the isolate's heap cost ([`heap_cost`]), two sweep runs compared ([`compare`]), compare's A/A
//! test on one run ([`calibrate`]), a run's measures for continuous benchmarking ([`export`]);
//! what every interval of them is taken over ([`intervals`]); for a run both Workers measured,
//! the instrument's cost ([`instrument`]); a target ÷ its baseline judged at once, with its A/A
//! test ([`baseline`]); each session's value of those ratios, for estimates over replicate runs
//! ([`session_values`]); the libraries measured beside the strategies ([`orms`]), with their
//! figure ([`orms_chart`]).

pub mod baseline;
pub mod calibrate;
pub mod chart;
pub mod clocks;
pub mod compare;
pub mod decision;
pub mod decision_map;
pub mod decision_table;
pub mod detectable;
pub mod export;
pub mod harness;
pub mod heap_cost;
pub mod instrument;
pub mod intervals;
pub mod orms;
pub mod orms_chart;
pub mod points;
pub mod session_values;
pub mod summary;
pub mod verdict;

use anyhow::{Context, Result};

use crate::base::WorkerKind;
use crate::records::csv;
use crate::records::{RunDir, RunRecord};
use crate::reports::{Rendered, chart_files, provenance};
use crate::studies::sweep::Axis;
use crate::studies::sweep::row::ProbeRow;

/// A sweep run's reports (a grid's when it has a second axis): summary.csv, the charts and
/// summary.md; the tables for the terminal.
pub fn render_sweep(run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered> {
    let rows: Vec<ProbeRow> = csv::read(&run_dir.results_csv())?;
    let axis = record
        .run
        .x_axis
        .with_context(|| format!("{} names no x axis", run_dir.run_toml().display()))?;
    if let Some(y_axis) = record.run.y_axis {
        return render_grid(run_dir, record, &rows, axis, y_axis, titles);
    }
    let target = record.run.target;
    let all_rows = rows;
    // The libraries' probes (an ORM run's) have a section of their own; every other figure is
    // the strategies'.
    let rows: Vec<ProbeRow> = default_instrument(&all_rows)
        .into_iter()
        .filter(|r| r.orm.is_none())
        .collect();
    let summary_csv = points::summary_csv(&rows, axis, record.run.precision)?;
    std::fs::write(run_dir.summary_csv(), summary_csv)
        .with_context(|| format!("cannot write {}", run_dir.summary_csv().display()))?;
    let drawn = chart::render_run(run_dir, &rows, axis, target, titles)?;
    let mut md = summary::markdown(record, &rows, &drawn);
    let instrument = instrument::markdown(&all_rows, axis).map(|mut section| {
        let js: Vec<ProbeRow> = all_rows
            .iter()
            .filter(|r| r.worker.is_some_and(WorkerKind::takes_statements))
            .cloned()
            .collect();
        section.push_str(&format!(
            "\nThe tables and charts above are the Rust Worker's probes only; the JavaScript \
             Worker's probes are in results.csv (`worker = {}`) and in this section. Their \
             reconciliation:\n\n{}\n",
            instrument::javascript_of(&all_rows),
            summary::target_lines(&js).join("\n")
        ));
        section
    });
    if let Some(section) = &instrument {
        md.push('\n');
        md.push_str(section);
    }
    let libraries = orms::section(&all_rows, axis);
    let libraries_figure = orms_chart::render(run_dir, &all_rows, axis, titles)?;
    if let Some(section) = &libraries {
        md.push('\n');
        md.push_str(section);
    }
    if let Some(figure) = &libraries_figure {
        md.push_str(&format!(
            "\n![{}]({}.png)\n\n{}\n",
            figure.name, figure.name, figure.caption
        ));
    }
    std::fs::write(run_dir.summary_md(), md)
        .with_context(|| format!("cannot write {}", run_dir.summary_md().display()))?;
    let (labels, cells) = decision::cells_along(&rows, target, axis)
        .into_iter()
        .unzip();
    let maps = [decision_table::Map {
        target,
        cells,
        labels,
    }];
    let mut tables = lead(&maps, axis, None);
    // The libraries' section is the terminal's too: what each ORM sent is part of the answer.
    if let Some(section) = libraries {
        tables.push_str(&section);
    }
    Ok(Rendered {
        charts: (drawn.into_iter().chain(libraries_figure))
            .flat_map(chart_files)
            .collect(),
        tables,
    })
}

/// The rows every figure but the instrument section is taken from. A run both Workers measured
/// (`--alternate-workers`): the default instrument's, the Rust Worker's sessions, so that no
/// figure pools two instruments; any other run: all of them.
pub fn default_instrument(rows: &[ProbeRow]) -> Vec<ProbeRow> {
    let both_workers = rows.iter().any(|r| r.worker == Some(WorkerKind::Rust))
        && rows
            .iter()
            .any(|r| r.worker.is_some_and(WorkerKind::takes_statements));
    rows.iter()
        .filter(|r| !both_workers || !r.worker.is_some_and(WorkerKind::takes_statements))
        .cloned()
        .collect()
}

/// A grid run's reports: summary.csv, the decision map (`decision-map.csv` and its chart) and
/// a summary.md whose table is the answer: for these columns and bytes, use this strategy.
fn render_grid(
    run_dir: &RunDir,
    record: &RunRecord,
    rows: &[ProbeRow],
    axis: Axis,
    y_axis: Axis,
    titles: bool,
) -> Result<Rendered> {
    let target = record.run.target;
    let summary_csv = points::grid_summary_csv(rows, axis, y_axis, record.run.precision)?;
    std::fs::write(run_dir.summary_csv(), summary_csv)
        .with_context(|| format!("cannot write {}", run_dir.summary_csv().display()))?;
    let maps = decision_table::maps(rows, target, axis, y_axis);
    let map_csv = run_dir.path.join("decision-map.csv");
    std::fs::write(&map_csv, decision_table::csv(&maps, axis, y_axis)?)
        .with_context(|| format!("cannot write {}", map_csv.display()))?;
    let mut table = String::new();
    for map in &maps {
        if maps.len() > 1 {
            table.push_str(&format!("### On {}\n\n", map.target.prose()));
        }
        table.push_str(&decision_table::markdown_table(map, axis, y_axis));
        table.push('\n');
    }
    let drawn = decision_map::render(&run_dir.path, &maps, axis, y_axis, titles)?;
    let study = record.studies.first();
    let mut md = format!(
        "# {}: {}\n\nRun `{}` on `{target}`, profile `{}`; started {}, ended {}; status {}.\n\n\
         Reproduce: `{}`\n\n## Reconciliation\n\n{}\n\n## Which strategy to use\n\n\
         For each cell: the fastest strategy on `{target}` by the paired comparison (the one \
         whose paired repeats' ratios against the others have medians of 1 or more; its median \
         ms per 1,000 rows, outside clock less the target's preparation, with its \
         order-statistic interval), the runner-up, and the runner-up ÷ the fastest (the median \
         of their paired repeats' ratios, at least 1 by the ranking, with its interval), and \
         what the cell decides: the fastest when that interval excludes 1; `a = b, ±10%` when \
         two one-sided tests show the others within ±10% of the fastest; `a or b` when neither, \
         undecided, with the sessions a decision would need. A strategy a documented limit \
         stops at a cell is named with the limit. One map per target: the run's, then its \
         baseline's.\n\n{table}\n",
        record.run.experiment,
        study.map_or("", |s| s.description.as_str()),
        record.run.id,
        record.run.profile,
        record.run.started,
        record.run.ended.as_deref().unwrap_or("(not recorded)"),
        record.run.status.name(),
        provenance::command(record),
        summary::reconciliation_lines(rows, record).join("\n"),
    );
    for file in drawn
        .files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "png"))
    {
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        md.push_str(&format!("![{}]({name})\n\n{}\n", drawn.name, drawn.caption));
    }
    // Where the time went and the host's speed, as every kind's summary ends.
    md.push('\n');
    md.push_str(&provenance::time_section(record));
    std::fs::write(run_dir.summary_md(), md)
        .with_context(|| format!("cannot write {}", run_dir.summary_md().display()))?;
    Ok(Rendered {
        charts: chart_files(drawn).collect(),
        tables: lead(&maps, axis, Some(y_axis)),
    })
}

/// What the terminal shows first at the end of a sweep: per point (or cell) the fastest
/// strategy, or the set shown equivalent, with its margin; each map's count of decided cells.
/// The tables of clocks and times are in summary.md and the page.
fn lead(maps: &[decision_table::Map], axis: Axis, y_axis: Option<Axis>) -> String {
    let mut out = String::new();
    for map in maps {
        let (decided, all) = map.decided();
        let over = map
            .unit()
            .map_or(String::new(), |u| format!(", interval over {}", u.plural()));
        out.push_str(&format!(
            "the answer on {} (fastest; runner-up ÷ fastest{over}), {decided} of {all} \
             decided:\n{}",
            map.target.prose(),
            decision_table::lead(map, axis, y_axis)
        ));
    }
    out
}
