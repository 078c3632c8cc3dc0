//! `cargo xtask advise`: which strategy to write a table's rows with. From a column count and a
//! row size (or a `CREATE TABLE`, [`schema`]), it answers from the committed decision map (the
//! replicate set when there is one) through the map's own judgement
//! ([`crate::studies::sweep::report::verdict`]), so the README, the page, the terminal and the
//! advice cannot disagree; gives each strategy's rows per statement under D1's limits and the
//! limit that binds it ([`capacity`], from the core's planner); and with `--measure` runs that
//! one cell on a target there and then through the sweep pipeline, and answers from it; with
//! `--orm` also what a library's bulk insert sends for the shape and what to write instead
//! ([`orm`]).

pub mod capacity;
pub mod orm;
pub mod schema;

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use d1bench_core::Strategy;
use d1bench_core::sql::wall;
use xshell::Shell;

use crate::base::TargetKind;
use crate::flags;
use crate::paths::Paths;
use crate::records::replicates::{REPLICATES_DIR, ReplicateSet};
use crate::records::{RunDir, RunRecord, csv};
use crate::stats::decide::Unit;
use crate::studies::sweep::Axis;
use crate::studies::sweep::report::decision::{Cell, with_interval};
use crate::studies::sweep::report::decision_table::{self, Map};
use crate::studies::sweep::row::ProbeRow;
use capacity::{Binding, capacities};
use orm::{MapCell, OrmAsk};

/// Input no strategy can answer for: the command exits 2 with this message.
#[derive(Debug, Clone, PartialEq)]
pub struct BadInput(pub String);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BadInput {}

/// The committed replicate set of the decision map, answered from when present.
pub const REPLICATE_SET: &str = "decision-map";
/// The committed single run of the decision map.
pub const COMMITTED: &str = "docs/runs/decision-map";

/// The row shape asked about.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub columns: usize,
    pub row_bytes: usize,
    /// Where the columns came from: `--columns`, or `table users in schema.sql`.
    pub from: String,
}

impl flags::Advise {
    /// `cargo xtask advise`.
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        let shape = self.shape()?;
        check(&shape)?;
        let ask = self.orm_ask()?;
        let text = if self.measure {
            let target = self.target.unwrap_or(TargetKind::Sqlite);
            let (run_dir, maps) = measure(&shape, target, sh, paths)?;
            let source = format!("the run just measured, {}", run_dir.display());
            format!("\n{}", advice(&shape, &maps, target, &source, ask)?)
        } else {
            let (source, maps) = committed(&paths.root)?;
            let target = self.target.unwrap_or(maps[0].target);
            advice(&shape, &maps, target, &source, ask)?
        };
        print!("{text}");
        Ok(())
    }

    /// The library and rows of `--orm`, when given.
    pub fn orm_ask(&self) -> Result<Option<OrmAsk>, BadInput> {
        if self.orm.is_some() && self.rows == 0 {
            return Err(BadInput(
                "--rows 0: the library writes at least one row".into(),
            ));
        }
        Ok(self.orm.map(|orm| OrmAsk {
            orm,
            rows: self.rows,
        }))
    }

    /// The shape from the flags, or from the schema's table.
    pub fn shape(&self) -> Result<Shape, BadInput> {
        let columns = match (&self.schema, self.columns) {
            (Some(path), _) => {
                let table = schema::pick(path, self.table.as_deref())?;
                return Ok(Shape {
                    columns: table.columns.len(),
                    row_bytes: self.row_bytes,
                    from: format!(
                        "table `{}` of {} ({} columns)",
                        table.name,
                        table.file.display(),
                        table.columns.len()
                    ),
                });
            }
            (None, Some(columns)) => columns,
            (None, None) => {
                return Err(BadInput(
                    "give --columns N or --schema FILE (with --row-bytes B)".into(),
                ));
            }
        };
        Ok(Shape {
            columns,
            row_bytes: self.row_bytes,
            from: "--columns".into(),
        })
    }
}

/// Bad shapes, each named: no column, a row no strategy can write, a row too small for its
/// columns.
pub fn check(shape: &Shape) -> Result<(), BadInput> {
    if shape.columns == 0 {
        let from = match shape.from.as_str() {
            "--columns" => String::new(),
            table => format!(" ({table})"),
        };
        return Err(BadInput(format!(
            "--columns 0: a table has at least one column{from}"
        )));
    }
    if shape.row_bytes == 0 {
        return Err(BadInput(
            "--row-bytes 0: a row holds at least one byte".into(),
        ));
    }
    let walls: Vec<(Strategy, d1bench_core::sql::Wall)> = Strategy::ALL
        .iter()
        .filter_map(|&s| {
            Some((
                s,
                wall(&capacity::probe(s, shape.columns, shape.row_bytes, 1))?,
            ))
        })
        .collect();
    if walls.len() == Strategy::ALL.len() {
        let mut limits: Vec<String> = walls
            .iter()
            .map(|(_, w)| {
                format!(
                    "past D1's {} (one row needs {} {})",
                    w.limit, w.needed, w.unit
                )
            })
            .collect();
        limits.dedup();
        return Err(BadInput(format!(
            "nothing can write this row: {} columns × {} bytes is {}, whatever the strategy",
            shape.columns,
            shape.row_bytes,
            limits.join("; ")
        )));
    }
    let probe = capacity::probe(Strategy::Bound, shape.columns, shape.row_bytes, 1);
    probe.validate().map_err(|e| {
        let flag = match e.field {
            "row_bytes" => format!("--row-bytes {}", shape.row_bytes),
            _ => format!("--columns {}", shape.columns),
        };
        BadInput(format!("{flag}: {}", e.message))
    })
}

/// The committed map to answer from: the replicate set's when it holds runs, else the single
/// run's; with a line saying which.
fn committed(root: &Path) -> Result<(String, Vec<Map>)> {
    if let Some(set) = ReplicateSet::find(root, REPLICATE_SET)? {
        let first = &set.runs[0];
        let (x, y) = axes(&first.record, &first.dir)?;
        let runs: Vec<Vec<ProbeRow>> = set
            .runs
            .iter()
            .map(|r| csv::read(&r.dir.results_csv()))
            .collect::<Result<_>>()?;
        let maps =
            decision_table::maps_over_runs(&runs, &set.schedules(), first.record.run.target, x, y);
        let source = format!(
            "the committed replicate set {REPLICATES_DIR}/{REPLICATE_SET} ({} runs)",
            set.runs.len()
        );
        return Ok((source, maps));
    }
    let dir = RunDir::new(root.join(COMMITTED));
    let record = RunRecord::read(&dir.run_toml())?;
    let (x, y) = axes(&record, &dir)?;
    let rows: Vec<ProbeRow> = csv::read(&dir.results_csv())?;
    let maps = decision_table::maps(&rows, record.run.target, x, y);
    let source = format!("the committed run {COMMITTED} (run {})", record.run.id);
    Ok((source, maps))
}

/// A decision map's axes: columns across, row bytes down.
fn axes(record: &RunRecord, dir: &RunDir) -> Result<(Axis, Axis)> {
    match (record.run.x_axis, record.run.y_axis) {
        (Some(Axis::Columns), Some(Axis::RowBytes)) => Ok((Axis::Columns, Axis::RowBytes)),
        _ => bail!(
            "{} is not a map of columns × row bytes",
            dir.run_toml().display()
        ),
    }
}

/// The cell of `map` nearest the shape (by the ratio of columns and of row bytes, on log
/// scales), and whether the shape lies outside the measured grid.
fn nearest<'m>(map: &'m Map, shape: &Shape) -> Option<(&'m Cell, Placement)> {
    let distance = |c: &Cell| {
        (shape.columns as f64 / c.x).ln().powi(2) + (shape.row_bytes as f64 / c.y).ln().powi(2)
    };
    let cell = map
        .cells
        .iter()
        .min_by(|a, b| distance(a).total_cmp(&distance(b)))?;
    let range = |values: Vec<f64>| {
        values
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            })
    };
    let (x0, x1) = range(map.cells.iter().map(|c| c.x).collect());
    let (y0, y1) = range(map.cells.iter().map(|c| c.y).collect());
    let (c, b) = (shape.columns as f64, shape.row_bytes as f64);
    let placement = if cell.x == c && cell.y == b {
        Placement::Measured
    } else if c < x0 || c > x1 || b < y0 || b > y1 {
        Placement::Extrapolated
    } else {
        Placement::Interpolated
    };
    Some((cell, placement))
}

/// Where the shape lies against the map's grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Placement {
    Measured,
    Interpolated,
    Extrapolated,
}

/// The advice, as printed; with `ask`, what that library sends and what to write instead.
pub fn advice(
    shape: &Shape,
    maps: &[Map],
    target: TargetKind,
    source: &str,
    ask: Option<OrmAsk>,
) -> Result<String> {
    let Some(map) = maps.iter().find(|m| m.target == target) else {
        let have: Vec<String> = maps.iter().map(|m| m.target.to_string()).collect();
        return Err(BadInput(format!(
            "{source} has no map on `{target}`; it has: {}",
            have.join(", ")
        ))
        .into());
    };
    let (cell, placement) = nearest(map, shape).context("the map has no cell")?;
    let mut out = String::new();
    writeln!(
        out,
        "{} columns × {} bytes per row (columns from {}), on {}, from {source}:",
        shape.columns,
        shape.row_bytes,
        shape.from,
        target.prose()
    )?;
    let at = format!("{} columns × {} bytes", cell.x, cell.y);
    match placement {
        Placement::Measured => writeln!(out, "  a measured cell of the map")?,
        Placement::Interpolated => writeln!(
            out,
            "  not a measured cell: answered from the nearest, {at}, inside the grid"
        )?,
        Placement::Extrapolated => writeln!(
            out,
            "  outside the measured grid: extrapolated from the nearest cell, {at}"
        )?,
    }
    let caps = capacities(shape.columns, shape.row_bytes);
    let can = |s: Strategy| {
        caps.iter()
            .any(|c| c.strategy == s && !matches!(c.binding, Binding::Wall(_)))
    };
    writeln!(out, "use: {}", cell.answer())?;
    if let Some(fastest) = cell.fastest().filter(|s| !can(*s)) {
        writeln!(
            out,
            "  but {fastest} cannot write this row (below); of the others, take the next in the \
             cell's ranking that can: {}",
            cell.ranked
                .iter()
                .map(|(s, _)| *s)
                .find(|s| can(*s))
                .map_or("none measured".into(), |s| s.to_string())
        )?;
    }
    let unit = cell
        .evidence
        .first()
        .map_or(Unit::Repeats, |(_, e)| e.unit)
        .plural();
    match (cell.runner_up(), cell.margin) {
        (Some(runner_up), Some(margin)) => writeln!(
            out,
            "runner-up: {runner_up}, ×{} the fastest's time (95% interval over {unit}){}",
            with_interval(&margin, 2),
            cell.verdict.note()
        )?,
        _ => writeln!(out, "runner-up: none ran here beside it")?,
    }
    if let Some((_, fastest)) = cell.ranked.first() {
        writeln!(
            out,
            "  the fastest: {} ms per 1,000 rows at {at}",
            with_interval(fastest, 1)
        )?;
    }
    writeln!(
        out,
        "rows per statement under D1's limits at {} columns × {} bytes:",
        shape.columns, shape.row_bytes
    )?;
    for c in &caps {
        writeln!(
            out,
            "  {:<13}{:>7}  {}",
            c.strategy.to_string(),
            c.rows_per_statement,
            c.binding.text()
        )?;
    }
    if let Some(ask) = ask {
        let map = MapCell { cell, at, source };
        out.push_str(&orm::section(ask, shape.columns, &caps, &map)?);
    }
    Ok(out)
}

/// Runs the one cell on `target` through the sweep pipeline (sessions interleaved with the
/// baseline's where the target takes one) and gives its maps.
fn measure(
    shape: &Shape,
    target: TargetKind,
    sh: &Shell,
    paths: &Paths,
) -> Result<(PathBuf, Vec<Map>)> {
    let scratch = paths.scratch().join("advise");
    let experiments = scratch.join("experiments");
    std::fs::create_dir_all(&experiments)
        .with_context(|| format!("cannot create {}", experiments.display()))?;
    let name = format!("advise-{}x{}", shape.columns, shape.row_bytes);
    let file = experiments.join(format!("{name}.toml"));
    std::fs::write(&file, experiment(shape, target))
        .with_context(|| format!("cannot write {}", file.display()))?;
    let out = scratch.join("runs");
    let argv = [
        "xtask".to_owned(),
        "run".into(),
        name.clone(),
        "--target".into(),
        target.to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    let run = match <flags::Xtask as clap::Parser>::try_parse_from(argv)
        .context("cannot build the run's flags")?
        .task
    {
        flags::Task::Run(run) => run,
        other => bail!("not a run: {other:?}"),
    };
    let measuring = Paths::new(paths.root.clone()).with_experiments(experiments);
    crate::pipeline::run(&run, sh, &measuring)?;
    let run_dir = newest(&out)?;
    let record = RunRecord::read(&run_dir.run_toml())?;
    let rows: Vec<ProbeRow> = csv::read(&run_dir.results_csv())?;
    let maps = decision_table::maps(&rows, record.run.target, Axis::Columns, Axis::RowBytes);
    Ok((run_dir.path, maps))
}

/// The newest run directory under `dir` (ids start with their start time).
fn newest(dir: &Path) -> Result<RunDir> {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.join("run.toml").is_file())
        .collect();
    runs.sort();
    runs.pop()
        .map(RunDir::new)
        .with_context(|| format!("no run in {}", dir.display()))
}

/// The experiment file of one cell: every strategy that can write the row (per-row left out,
/// as in the decision map), about 2 MB per probe, over sessions.
pub fn experiment(shape: &Shape, target: TargetKind) -> String {
    let strategies: Vec<String> = capacities(shape.columns, shape.row_bytes)
        .into_iter()
        .filter(|c| c.strategy != Strategy::PerRow && !matches!(c.binding, Binding::Wall(_)))
        .map(|c| format!("\"{}\"", c.strategy))
        .collect();
    let rows = (2_000_000 / shape.row_bytes).clamp(5, 5_000);
    // Bare SQLite's sessions take a second or two; a Worker's start takes several, and the
    // baseline's sessions alternate with the target's.
    let sessions = if target == TargetKind::Sqlite { 20 } else { 5 };
    format!(
        "# Written by `cargo xtask advise --measure`: one cell of the decision map.\n\
         description = \"advise: {c} columns × {b} bytes per row, every strategy that can write it\"\n\
         x-axis = \"columns\"\n\
         default-profile = \"advise\"\n\n\
         [profile.advise]\n\
         sessions = {sessions}\n\
         repeats = 2\n\
         warmup = 1\n\
         seed = 1\n\n\
         [[profile.advise.series]]\n\
         strategies = [{}]\n\
         columns = [{c}]\n\
         row-bytes = [{b}]\n\
         rows = {rows}\n",
        strategies.join(", "),
        c = shape.columns,
        b = shape.row_bytes,
    )
}
