//! What a kind of study is to the pipeline: a [`Kind`] registered once in [`super::KINDS`],
//! whose [`Study`] (its file, loaded and checked) plans a [`PlannedStudy`] that the pipeline
//! prices, prints, measures on each target's session, resumes and reports without knowing which
//! kind it is. Each kind implements these in its own folder (`sweep/`, `ladder/`, `workload/`).

use std::any::Any;
use std::path::Path;
use std::time::Instant;

use anyhow::Result;
use d1bench_core::Corruption;

use super::cost::Cost;
use super::overrides::Overrides;
use crate::base::{PgWorker, TargetKind, WorkerKind};
use crate::records::run_history::Planned;
use crate::records::run_record::{RunInfo, StudyFile};
use crate::records::{RunDir, RunRecord, StudyKind, Totals};
use crate::reports::Rendered;
use crate::targets::Session;

/// One kind of study: which files are its, how they load, and how its runs are reported.
pub trait Kind: Sync {
    /// What run.toml records as the run's `kind`.
    fn name(&self) -> StudyKind;
    /// What its records are called in a reconciliation line (`probes`, `rungs`, `records`).
    fn unit(&self) -> &'static str;
    /// Whether `name` in `dir` is a study of this kind; [`super::KINDS`] asks each kind in
    /// turn, the last (sweeps) taking every file the others did not.
    fn claims(&self, dir: &Path, name: &str) -> bool;
    /// Loads and checks `name` from `dir`.
    fn load(&self, dir: &Path, name: &str) -> Result<Box<dyn Study>>;
    /// Writes every report of a run of this kind from what it left on disk.
    fn render(&self, run_dir: &RunDir, record: &RunRecord, titles: bool) -> Result<Rendered>;
    /// Whether the run `run` recorded was run with `--no-baseline` (its plan made again asks so).
    fn ran_without_baseline(&self, run: &RunInfo) -> bool {
        let _ = run;
        false
    }
}

/// A study file (or files) of some kind, loaded and checked.
pub trait Study {
    /// Its line in `cargo xtask list`: what it is, and its profiles.
    fn listing(&self) -> String;
    /// The profile `profile` names (or the default) and what it costs on Cloudflare: how
    /// `cargo xtask matrix` prices a job.
    fn priced(&self, profile: Option<&str>) -> Result<(String, Cost)>;
    /// What a run asked for by `ask` does; every refusal of the input comes here.
    fn plan(&self, ask: Ask) -> Result<RunPlan>;
    /// Whether its probes include libraries (ORMs), which only the ORM Worker runs.
    fn measures_libraries(&self) -> bool {
        false
    }
}

/// What a run asks of a study: the command line, read into what the studies need.
pub struct Ask<'a> {
    /// The name the run was given (an experiment, a ladder, or `limits`).
    pub experiment: &'a str,
    pub profile: Option<&'a str>,
    pub target: TargetKind,
    pub no_baseline: bool,
    /// `--baseline`: what the baseline's sessions run on, when the run has one.
    pub baseline: TargetKind,
    /// `--debug-corrupt`: every probe's table changed after its writes.
    pub debug_corrupt: Option<Corruption>,
    pub overrides: Overrides,
    /// `--debug-slow`: every probe's timed window stretched by this percentage, in the target.
    pub debug_slow_percent: Option<u32>,
    /// The project's root: study files are recorded relative to it.
    pub root: &'a Path,
    /// The Worker that runs every session on a target that runs one (`--worker`); `None` when
    /// none does, or when sessions alternate Workers (`--alternate-workers`).
    pub worker: Option<WorkerKind>,
    /// `--paired-workers`: the JavaScript Worker every session runs beside the Rust Worker.
    pub paired_workers: Option<WorkerKind>,
    /// `--shard K/N`: the share of the load this process offers (workloads only).
    pub shard: Option<crate::records::shard::Shard>,
    /// `--dry-run`: the plan is printed, not run, so what a run would refuse (a rate one
    /// process cannot offer) is said in its lines instead.
    pub dry_run: bool,
}

/// Everything a run will do, planned from its study and flags before anything starts.
pub struct RunPlan {
    pub work: Box<dyn PlannedStudy>,
    /// The profile's name (for ladders, each ladder's, joined by `/` when they differ).
    pub profile: String,
    /// The study files read, with their SHA-256.
    pub files: Vec<StudyFile>,
    pub overrides: Overrides,
    /// The target the same work runs on after the target (bare SQLite), if any.
    pub baseline: Option<TargetKind>,
}

impl RunPlan {
    /// The run's targets: `target`, then the baseline.
    pub fn targets(&self, target: TargetKind) -> Vec<TargetKind> {
        std::iter::once(target).chain(self.baseline).collect()
    }

    /// The sessions in the order they are measured, each as (session, target): the target's
    /// sessions and the baseline's alternate in ABBA order (session 0: the target, then the
    /// baseline; session 1: the baseline, then the target; ...), so that both meet the same
    /// drift of the machine, and each session of one lies beside the same session of the other.
    pub fn order(&self, target: TargetKind) -> Vec<(usize, TargetKind)> {
        let targets = self.targets(target);
        (0..self.work.sessions())
            .flat_map(|session| {
                let mut these = targets.clone();
                if session % 2 == 1 {
                    these.reverse();
                }
                these.into_iter().map(move |t| (session, t))
            })
            .collect()
    }

    /// Which Postgres Worker the hyperdrive targets start for this work: the ladders' for a
    /// ladder, the probes' otherwise.
    pub fn pg_worker(&self) -> PgWorker {
        PgWorker::for_ladders(self.work.kind().name() == StudyKind::Ladder)
    }

    /// What the run sends over every target, warm-ups included: probes (rungs at most) and rows.
    pub fn planned(&self) -> Planned {
        let targets = 1 + usize::from(self.baseline.is_some());
        let (probes, rows) = self.work.sent();
        Planned {
            probes: targets * probes,
            rows: targets * rows,
        }
    }
}

/// What a resumption skips and leaves, over every target (run.toml records it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Skipped {
    /// What is counted: `probes`, `climbs`, `requests`.
    pub unit: &'static str,
    pub skipped: usize,
    pub warmups_skipped: usize,
    pub remaining: usize,
}

/// Where and since when a session measures.
pub struct Measuring<'a> {
    pub experiment: &'a str,
    /// Which of the plan's sessions, from 0.
    pub session: usize,
    pub run_dir: &'a RunDir,
    /// Started with the attempt: each record notes when it started on it.
    pub clock: Instant,
}

/// A study's plan: what the pipeline needs of it, whatever its kind.
/// It is `Any` so that tests can look inside a plan of a known kind.
pub trait PlannedStudy: Any {
    fn kind(&self) -> &'static dyn Kind;
    /// How many sessions the plan takes on each target: each a fresh target, measured in turn
    /// (see [`RunPlan::order`]).
    fn sessions(&self) -> usize {
        1
    }
    /// What it costs on Cloudflare, warm-ups included.
    fn cost(&self) -> Cost;
    /// What one target is sent: probes (or rungs at most, or requests) and rows, warm-ups
    /// included.
    fn sent(&self) -> (usize, usize);
    /// Whether any of its reads go through D1's Sessions API, the only reads a read replica
    /// may serve: a remote run then turns read replication on for its database.
    fn reads_in_sessions(&self) -> bool {
        false
    }
    /// The Worker's `limits.subrequests` a remote run deploys it with, when the plan sets it
    /// (a query-budget profile, to see whether it moves D1's budget).
    fn worker_subrequests(&self) -> Option<u32> {
        None
    }
    /// Writes into run.toml's `[run]` what this kind records of its plan (axes, order seed,
    /// precision).
    fn record_in(&self, run: &mut RunInfo) {
        let _ = run;
    }
    /// The dry run's lines on what it does on `target`, and on the baseline when there is one.
    fn dry_run(&self, out: &mut String, target: TargetKind, baseline: Option<TargetKind>);
    /// This plan's work weighed by the time each of its points took in the earlier run whose
    /// results.csv is `earlier`, over `targets`; `None` when the kind cannot tell or the earlier
    /// run lacks a point of it.
    fn weight(&self, earlier: &Path, targets: &[TargetKind]) -> Option<f64> {
        let _ = (earlier, targets);
        None
    }
    /// Reads what earlier attempts of the run in `run_dir` recorded on `targets`, each record
    /// checked against this plan, so that measuring skips it; refuses a run that cannot be
    /// resumed.
    fn resume(&mut self, run_dir: &RunDir, profile: &str, targets: &[TargetKind]) -> Result<()>;
    /// What [`PlannedStudy::resume`] skips and leaves over `targets`.
    fn resumption(&self, targets: &[TargetKind]) -> Skipped;
    /// Whether anything is left to measure in session `session` on `target`.
    fn left_on(&self, target: TargetKind, session: usize) -> bool {
        let _ = (target, session);
        true
    }
    /// Measures what is left of session `at.session` on the session's target, appending every
    /// record to the run's files as it lands; the totals of what it recorded.
    fn measure(&self, session: &mut dyn Session, at: &Measuring) -> Result<Totals>;
    /// After session `session` on `target` has all its records on disk: marks the records it
    /// measured before it settled (see `sweep::settle`), and says how many; `None` for a kind
    /// that keeps every record.
    fn settle(
        &self,
        run_dir: &RunDir,
        target: TargetKind,
        session: usize,
    ) -> Result<Option<usize>> {
        let _ = (run_dir, target, session);
        Ok(None)
    }
    /// The totals of every record a resumed run holds on disk.
    fn recorded_totals(&self, run_dir: &RunDir) -> Result<Totals>;
}

/// What run.toml records of a study file read: its name, its path from the project's `root`,
/// its SHA-256 and its description.
pub fn study_file(
    root: &Path,
    name: &str,
    path: &Path,
    source: &str,
    description: &str,
) -> StudyFile {
    StudyFile {
        name: name.to_owned(),
        file: path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string(),
        sha256: crate::toolchain::hash_bytes(source.as_bytes()),
        description: description.to_owned(),
    }
}
