//! `cargo xtask run`: the pipeline from an experiment file to a run directory.
//!
//! load and validate the experiment → install tools, build the Worker → start the target →
//! send every probe (results.csv flushed after each) → stop the target → run.toml, charts,
//! summary. Bad input fails before anything starts; once probes run, whatever happens, what
//! was measured stays on disk and run.toml says how the run ended.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use d1bench_core::sql;
use indicatif::{ProgressBar, ProgressStyle};
use xshell::Shell;

use crate::client::WorkerClient;
use crate::experiment::{Experiment, PlannedProbe};
use crate::flags::{self, TargetKind};
use crate::local::LocalWorker;
use crate::paths::Paths;
use crate::provenance::{self, ExperimentInfo, RunInfo, RunRecord, Versions};
use crate::reconcile::{self, Totals};
use crate::report::{ResultRow, ResultsWriter, RunDir};
use crate::{plot, procs, remote, summary, toolchain};

/// Longest a single probe request may take before it is recorded as failed.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(300);

impl flags::Run {
    pub fn run(self, sh: &Shell, paths: &Paths) -> Result<()> {
        if crate::ladder_run::handles(paths, &self.experiment) {
            return self.run_ladders(sh, paths);
        }
        let experiment = Experiment::load(&paths.experiments(), &self.experiment)?;
        let (profile_name, profile) = experiment.profile(self.profile.as_deref())?;
        let probes = experiment.probes(profile);
        // Remote flags and credentials are checked before anything is installed or built.
        let remote = remote::Options::from_run_flags(&self)?;

        let tools = toolchain::ensure(sh, paths)?;
        tools.build_worker(sh, paths)?;

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
            versions: versions(sh, paths),
            machine: provenance::machine(),
            reconciliation: None,
            remote: None,
        };
        record.write(&run_dir.run_toml())?;
        eprintln!("run directory: {}", run_dir.path.display());

        let measured = measure_on_target(
            self.target,
            remote.as_ref(),
            paths,
            &tools,
            &experiment,
            &probes,
            &run_dir,
            &mut record,
        );
        record.run.ended = Some(provenance::utc_now().0);
        match &measured {
            Ok(totals) => {
                record.run.status = if totals.all_reconciled() {
                    "complete"
                } else {
                    "invalid"
                }
                .into();
                record.reconciliation = Some(totals.clone());
            }
            Err(e) => {
                record.run.status = if procs::interrupted() {
                    "interrupted"
                } else {
                    "failed"
                }
                .into();
                record.run.error = Some(format!("{e:#}"));
            }
        }
        record.write(&run_dir.run_toml())?;
        let totals = measured?;

        finish(&run_dir, &record)?;
        println!("{}", totals.line());
        if !totals.all_reconciled() {
            bail!(
                "the run is invalid: rows present differ from rows acknowledged (see `reconcile_note` in {})",
                run_dir.results_csv().display()
            );
        }
        Ok(())
    }
}

/// Starts the target, measures every probe, stops the target (on every path: drop).
#[allow(clippy::too_many_arguments)]
fn measure_on_target(
    target: TargetKind,
    remote: Option<&remote::Options>,
    paths: &Paths,
    tools: &toolchain::Toolchain,
    experiment: &Experiment,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
    record: &mut RunRecord,
) -> Result<Totals> {
    match target {
        TargetKind::Local => {
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
        TargetKind::Sqlite => bail!(
            "experiments run on the local target only for now; the sqlite target runs ladders"
        ),
        TargetKind::Remote => {
            let options = remote.context("a remote run's options are read before it starts")?;
            remote::measure(options, paths, tools, experiment, probes, run_dir, record)
        }
    }
}

/// Sends every probe in order, reconciles it, and appends it to results.csv.
pub fn measure(
    client: &WorkerClient,
    experiment: &str,
    target: &str,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
) -> Result<Totals> {
    measure_observing(client, experiment, target, probes, run_dir, &mut |_| {})
}

/// [`measure`], showing `observe` every result the Worker answers.
pub fn measure_observing(
    client: &WorkerClient,
    experiment: &str,
    target: &str,
    probes: &[PlannedProbe],
    run_dir: &RunDir,
    observe: &mut dyn FnMut(&d1bench_core::ProbeResult),
) -> Result<Totals> {
    let mut writer = ResultsWriter::create(&run_dir.results_csv())?;
    let progress = Progress::new(probes.len());
    let mut totals = Totals::default();
    for (done, planned) in probes.iter().enumerate() {
        if procs::interrupted() {
            progress.finish();
            bail!("interrupted after {done} of {} probes", probes.len());
        }
        let probe = &planned.request;
        let timed = client.probe(probe);
        if procs::interrupted() {
            // The target was stopped under this probe: its failure is the interrupt's, not D1's.
            continue;
        }
        let mut row = match &timed.result {
            Ok(result) => {
                observe(result);
                let mut row = ResultRow::measured(
                    experiment,
                    target,
                    planned.series,
                    planned.repeat,
                    probe,
                    result,
                    timed.outside_ms,
                );
                match reconcile::check(probe, &sql::plan(probe), result) {
                    Ok(()) => row.reconciled = true,
                    Err(note) => row.reconcile_note = note,
                }
                row
            }
            Err(error) => ResultRow::harness_failure(
                experiment,
                target,
                planned.series,
                planned.repeat,
                probe,
                timed.outside_ms,
                error.clone(),
            ),
        };
        row.error = row.error.replace('\n', " ");
        writer.append(&row)?;
        totals.add(&row);
        progress.probe_done(&row);
    }
    progress.finish();
    Ok(totals)
}

/// Charts and the printed summary, from what is on disk.
fn finish(run_dir: &RunDir, record: &RunRecord) -> Result<()> {
    let rows = crate::report::read_results(&run_dir.results_csv())?;
    let title = format!(
        "{} ({}, {})",
        record.run.experiment, record.run.target, record.run.profile
    );
    let charts = plot::render_run(run_dir, &rows, record.experiment.x_axis, &title)?;
    print!("{}", summary::table(&rows, record.experiment.x_axis));
    for chart in charts {
        println!("chart: {}", chart.display());
    }
    println!("results: {}", run_dir.results_csv().display());
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

pub(crate) fn versions(sh: &Shell, paths: &Paths) -> Versions {
    let modules = paths.node_modules();
    Versions {
        d1bench: env!("CARGO_PKG_VERSION").into(),
        worker: "not started".into(),
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
    done: std::cell::Cell<usize>,
}

impl Progress {
    fn new(total: usize) -> Self {
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
            done: std::cell::Cell::new(0),
        }
    }

    fn probe_done(&self, row: &ResultRow) {
        self.done.set(self.done.get() + 1);
        let line = format!(
            "{} C={} bytes={} rep {}: {} {:.1} ms{}",
            row.strategy,
            row.columns,
            row.row_bytes,
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
