//! `cargo xtask run`: the pipeline from an experiment file to a run directory.
//!
//! load and validate the experiment → install tools, build the Worker → start the target →
//! send every probe, verify and reconcile it (results.csv flushed after each) → stop the target
//! → the same probes on the bare-SQLite baseline → run.toml, summary.csv, charts, summary.md.
//! Bad input fails before anything starts; once probes run, whatever happens, what was
//! measured stays on disk and run.toml says how the run ended.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::ValueEnum;
use d1bench_core::{Corruption, sql};
use indicatif::{ProgressBar, ProgressStyle};
use xshell::Shell;

use crate::experiment::{Experiment, PlannedProbe};
use crate::flags::{self, DebugCorruption, TargetKind};
use crate::local::LocalWorker;
use crate::paths::Paths;
use crate::provenance::{self, ExperimentInfo, RunInfo, RunRecord, Versions};
use crate::reconcile::{self, ContentCheck, Totals};
use crate::report::{ResultRow, ResultsWriter, RunDir};
use crate::sqlite::SqliteTarget;
use crate::target::ProbeTarget;
use crate::{plot, points, procs, remote, sqlite, summary, toolchain};

/// Longest a single probe request may take before it is recorded as failed.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(300);

impl flags::Run {
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        if crate::ladder_run::handles(paths, &self.experiment) {
            return self.run_ladders(sh, paths);
        }
        let experiment = Experiment::load(&paths.experiments(), &self.experiment)?;
        let (profile_name, profile) = experiment.profile(self.profile.as_deref())?;
        let mut probes = experiment.probes(profile);
        if let Some(kind) = self.debug_corrupt {
            corrupt_every_probe(&mut probes, kind)?;
        }
        let baseline =
            (self.target != TargetKind::Sqlite && !self.no_baseline).then_some(TargetKind::Sqlite);
        // Remote flags and credentials are checked before anything is installed or built.
        let remote = remote::Options::from_run_flags(&self)?;

        let tools = match self.target {
            TargetKind::Local | TargetKind::Remote => {
                let tools = toolchain::ensure(sh, paths)?;
                tools.build_worker(sh, paths)?;
                Some(tools)
            }
            TargetKind::Sqlite => None,
        };

        let out = self
            .out
            .clone()
            .unwrap_or_else(|| paths.reports().join(&experiment.name));
        let run_dir = create_run_dir(&out, self.target)?;
        let (started, _) = provenance::utc_now();
        let mut record = RunRecord {
            run: RunInfo {
                id: run_dir
                    .path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                experiment: experiment.name.clone(),
                profile: profile_name.to_owned(),
                target: self.target.name().to_owned(),
                baseline: baseline.map(|b| b.name().to_owned()),
                debug_corrupt: self
                    .debug_corrupt
                    .and_then(|k| k.to_possible_value())
                    .map(|v| v.get_name().to_owned()),
                status: "running".into(),
                started,
                ended: None,
                error: None,
            },
            experiment: ExperimentInfo {
                file: experiment
                    .path
                    .strip_prefix(&paths.root)
                    .unwrap_or(&experiment.path)
                    .display()
                    .to_string(),
                sha256: toolchain::hash_bytes(experiment.source.as_bytes()),
                description: experiment.file.description.clone(),
                x_axis: experiment.file.x_axis,
            },
            git: provenance::git(sh),
            versions: versions(sh, paths, self.target),
            machine: provenance::machine(),
            reconciliation: None,
            remote: None,
        };
        record.write(&run_dir.run_toml())?;
        eprintln!("run directory: {}", run_dir.path.display());

        // The run directory is new: results.csv starts with the target's first row, and the
        // baseline appends its rows after the target's.
        let measured = (|| {
            let mut totals = measure_on_target(
                self.target,
                remote.as_ref(),
                paths,
                tools.as_ref(),
                &experiment,
                &probes,
                &run_dir,
                &mut record,
            )?;
            if let Some(baseline) = baseline {
                eprintln!(
                    "the same probes on the baseline: bare SQLite in-process (not D1), D1's limits applied"
                );
                let on_baseline = measure_on_target(
                    baseline,
                    None,
                    paths,
                    tools.as_ref(),
                    &experiment,
                    &probes,
                    &run_dir,
                    &mut record,
                )?;
                totals = totals.merged(&on_baseline);
            }
            Ok::<_, anyhow::Error>(totals)
        })();
        record
            .run
            .end(measured.as_ref().map(Totals::all_reconciled));
        if let Ok(totals) = &measured {
            record.reconciliation = Some(totals.clone());
        }
        record.write(&run_dir.run_toml())?;
        let totals = measured?;

        finish(&run_dir, &record)?;
        println!("reconciliation: {}", totals.line());
        if !totals.all_reconciled() {
            bail!(
                "the run is INVALID: the rows present or their content differ from what was sent \
                 (see `reconcile_note` in {}); everything measured is kept",
                run_dir.results_csv().display()
            );
        }
        Ok(())
    }
}

/// Sets `--debug-corrupt` on every probe, checking that each can take it.
fn corrupt_every_probe(probes: &mut [PlannedProbe], kind: DebugCorruption) -> Result<()> {
    let corruption = match kind {
        DebugCorruption::TextByte => Corruption::TextByte,
        DebugCorruption::Integer => Corruption::Integer,
    };
    eprintln!(
        "--debug-corrupt {}: one row of every probe's table is changed after its writes; this run will be invalid",
        corruption.name()
    );
    for planned in probes {
        planned.request.debug_corrupt = Some(corruption);
        planned.request.validate().map_err(|e| {
            anyhow!(
                "--debug-corrupt {} cannot apply to probe {}: {e}",
                corruption.name(),
                planned.request.probe_id
            )
        })?;
    }
    Ok(())
}

/// Starts the target, measures every probe, stops the target (on every path: drop).
#[allow(clippy::too_many_arguments)]
fn measure_on_target(
    target: TargetKind,
    remote: Option<&remote::Options>,
    paths: &Paths,
    tools: Option<&toolchain::Toolchain>,
    experiment: &Experiment,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
    record: &mut RunRecord,
) -> Result<Totals> {
    match target {
        TargetKind::Local => {
            let tools = tools.context("the local target needs the Worker's toolchain")?;
            eprintln!("starting wrangler dev (workerd with a local D1)");
            let worker = LocalWorker::start(paths, tools, PROBE_TIMEOUT)?;
            record.versions.worker = format!("{} {}", worker.health.name, worker.health.version);
            record.write(&run_dir.run_toml())?;
            let totals = measure(
                &worker.client,
                &experiment.name,
                target.name(),
                probes,
                run_dir,
            );
            worker.stop();
            totals
        }
        TargetKind::Sqlite => {
            let db = SqliteTarget::open()?;
            measure(&db, &experiment.name, target.name(), probes, run_dir)
        }
        TargetKind::Remote => {
            let options = remote.context("a remote run's options are read before it starts")?;
            let tools = tools.context("the remote target needs the Worker's toolchain")?;
            remote::measure(options, paths, tools, experiment, probes, run_dir, record)
        }
    }
}

/// Sends every probe in order, verifies and reconciles it, and appends the measured ones to
/// the run's results.csv (warm-ups are reconciled, not recorded).
pub fn measure(
    target: &dyn ProbeTarget,
    experiment: &str,
    target_name: &str,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
) -> Result<Totals> {
    measure_observing(
        target,
        experiment,
        target_name,
        probes,
        run_dir,
        &mut |_| {},
    )
}

/// [`measure`], showing `observe` every result the target answers.
pub fn measure_observing(
    target: &dyn ProbeTarget,
    experiment: &str,
    target_name: &str,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
    observe: &mut dyn FnMut(&d1bench_core::ProbeResult),
) -> Result<Totals> {
    let mut writer = ResultsWriter::open(&run_dir.results_csv())?;
    let progress = Progress::new(probes.len(), target_name);
    let mut totals = Totals::default();
    for (done, planned) in probes.iter().enumerate() {
        if procs::interrupted() {
            progress.finish();
            bail!("interrupted after {done} of {} probes", probes.len());
        }
        let mut row = measure_one(target, experiment, target_name, planned, observe);
        if procs::interrupted() {
            // The target was stopped under this probe: its failure is the interrupt's, not D1's.
            continue;
        }
        row.error = row.error.replace('\n', " ");
        if planned.warmup {
            totals.add_warmup(row.reconciled);
            if !row.reconciled {
                progress.warn(&format!(
                    "warm-up probe {} did NOT reconcile: {}",
                    row.probe_id, row.reconcile_note
                ));
            }
        } else {
            writer.append(&row)?;
            totals.add(&row);
        }
        progress.probe_done(&row, planned.warmup);
    }
    progress.finish();
    Ok(totals)
}

/// One probe: performed, verified, reconciled against the host's plan and checksum.
fn measure_one(
    target: &dyn ProbeTarget,
    experiment: &str,
    target_name: &str,
    planned: &PlannedProbe,
    observe: &mut dyn FnMut(&d1bench_core::ProbeResult),
) -> ResultRow {
    let probe = &planned.request;
    let timed = target.probe(probe);
    let mut row = match &timed.result {
        Ok(result) => {
            observe(result);
            let mut row = ResultRow::measured(
                experiment,
                target_name,
                planned.series,
                planned.repeat,
                probe,
                result,
                timed.outside_ms,
            );
            if !target.has_d1_clock() {
                row.d1_ms = None;
            }
            let content = ContentCheck::of(probe, result, target.verify(probe));
            row.checksum_expected = content.expected.to_string();
            row.checksum_present = content
                .present
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default();
            row.checksum_equal = content.equal();
            let problems: Vec<String> = reconcile::check(probe, &sql::plan(probe), result)
                .err()
                .into_iter()
                .chain(content.problem())
                .collect();
            row.reconciled = problems.is_empty();
            row.reconcile_note = problems.join("; ");
            row
        }
        Err(error) => ResultRow::harness_failure(
            experiment,
            target_name,
            planned.series,
            planned.repeat,
            probe,
            timed.outside_ms,
            error.clone(),
        ),
    };
    row.label = planned.label.clone();
    row
}

/// Everything written from results.csv and run.toml: summary.csv, the charts, summary.md; and
/// the summary printed.
fn finish(run_dir: &RunDir, record: &RunRecord) -> Result<()> {
    let rows = crate::report::read_results(&run_dir.results_csv())?;
    let axis = record.experiment.x_axis;
    let target = record.run.target.as_str();
    let csv = points::summary_csv(&rows, axis)?;
    std::fs::write(run_dir.summary_csv(), csv)
        .with_context(|| format!("cannot write {}", run_dir.summary_csv().display()))?;
    let title = format!(
        "{} ({}, {})",
        record.run.experiment, record.run.target, record.run.profile
    );
    let charts = plot::render_run(run_dir, &rows, axis, &title, target)?;
    std::fs::write(
        run_dir.summary_md(),
        summary::markdown(record, &rows, &charts),
    )
    .with_context(|| format!("cannot write {}", run_dir.summary_md().display()))?;

    println!("median time per 1,000 rows on {target} (outside clock, 95% interval):");
    print!("{}", summary::ratio_table(&rows, axis, target));
    if let Some(table) = summary::baseline_table(&rows, axis, target) {
        println!("{target} ÷ bare SQLite:");
        print!("{table}");
    }
    for chart in &charts {
        for file in &chart.files {
            println!("chart: {}", file.display());
        }
    }
    println!("results: {}", run_dir.results_csv().display());
    println!("summary: {}", run_dir.summary_md().display());
    Ok(())
}

/// `cargo xtask plot <run-dir>`: charts again from results.csv and run.toml.
impl flags::Plot {
    pub fn run(self) -> Result<()> {
        let run_dir = RunDir::new(self.run_dir);
        let record = RunRecord::read(&run_dir.run_toml())?;
        finish(&run_dir, &record)
    }
}

/// `<out>/<UTC time>-<target>`, made unique if two runs start in the same second.
pub(crate) fn create_run_dir(out: &std::path::Path, target: TargetKind) -> Result<RunDir> {
    let (_, compact) = provenance::utc_now();
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    for attempt in 1.. {
        let name = if attempt == 1 {
            format!("{compact}-{}", target.name())
        } else {
            format!("{compact}-{}-{attempt}", target.name())
        };
        let path: PathBuf = out.join(name);
        match std::fs::create_dir(&path) {
            Ok(()) => return Ok(RunDir::new(path)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", path.display())),
        }
    }
    unreachable!("some attempt number is free")
}

pub(crate) fn versions(sh: &Shell, paths: &Paths, target: TargetKind) -> Versions {
    let modules = paths.node_modules();
    Versions {
        d1bench: env!("CARGO_PKG_VERSION").into(),
        worker: match target {
            TargetKind::Local | TargetKind::Remote => "not started",
            TargetKind::Sqlite => "not used (sqlite target)",
        }
        .into(),
        sqlite: sqlite::version(),
        worker_crate: toolchain::locked_version(&paths.root.join("Cargo.lock"), "worker")
            .unwrap_or_else(|_| "unknown".into()),
        wrangler: provenance::npm_package_version(&modules.join("wrangler/package.json")),
        workerd: provenance::npm_package_version(&modules.join("workerd/package.json")),
        rustc: xshell::cmd!(sh, "rustc --version")
            .quiet()
            .read()
            .unwrap_or_else(|_| "unknown".into()),
    }
}

/// A progress bar on a terminal, one plain line per probe elsewhere (CI logs).
struct Progress {
    bar: Option<ProgressBar>,
    total: usize,
    target: String,
    done: std::cell::Cell<usize>,
}

impl Progress {
    fn new(total: usize, target: &str) -> Self {
        let bar = std::io::stderr().is_terminal().then(|| {
            let bar = ProgressBar::new(total as u64);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} probes, {elapsed} elapsed, ~{eta} left  {msg}",
                )
                .expect("the template is valid"),
            );
            bar
        });
        Progress {
            bar,
            total,
            target: target.to_owned(),
            done: std::cell::Cell::new(0),
        }
    }

    fn warn(&self, message: &str) {
        match &self.bar {
            Some(bar) => bar.println(format!("warning: {message}")),
            None => eprintln!("warning: {message}"),
        }
    }

    fn probe_done(&self, row: &ResultRow, warmup: bool) {
        self.done.set(self.done.get() + 1);
        let line = format!(
            "{} {}{} C={} bytes={} esc={} idx={} {} {}: {} {:.1} ms{}",
            self.target,
            row.strategy,
            if row.label.is_empty() {
                String::new()
            } else {
                format!(" ({})", row.label)
            },
            row.columns,
            row.row_bytes,
            row.escape_share,
            row.indexes,
            if warmup { "warm-up" } else { "rep" },
            row.repeat,
            if row.refusal.is_empty() {
                row.outcome.clone()
            } else {
                format!("{} ({})", row.outcome, row.refusal)
            },
            row.outside_ms,
            if row.reconciled {
                ""
            } else {
                "  NOT RECONCILED"
            }
        );
        match &self.bar {
            Some(bar) => {
                bar.set_message(line);
                bar.inc(1);
            }
            None => eprintln!("[{}/{}] {line}", self.done.get(), self.total),
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
