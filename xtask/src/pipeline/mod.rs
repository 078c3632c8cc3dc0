//! The one pipeline every study goes through, whatever the target:
//!
//! study file → plan (probes or climbs, the command line's overrides applied) → install and build
//! what the targets need → a run directory and its `run.toml` → for each target (and the
//! baseline), a session: started, every record measured, reconciled and appended to disk as it
//! lands, closed on every way out, its time recorded → `run.toml` says how it ended → every report
//! derived from what is on disk ([`crate::reports`]).
//!
//! At about 630 lines before its tests it is a little over the house limit: it is the one place
//! that spells the pipeline's order, and each kind of study's measuring already lives apart
//! (`sweep.rs`, `climb.rs`, `workload.rs`); the next addition should move the run-directory and
//! run.toml setup into a module of its own.
//!
//! Bad input fails before anything starts; once records are measured, whatever happens, they stay
//! on disk and run.toml says how the run ended. A run killed outright is found by the next one
//! ([`crate::procs::reap_abandoned`]), which stops what it started and marks it abandoned; a run
//! that did not end is continued by [`resume`]; [`dry_run`] stops after the plan.

pub mod calls;
pub mod climb;
pub mod dry_run;
pub mod exactly_once;
pub mod load;
pub mod progress;
pub mod resume;
pub mod retry;
pub mod sweep;
pub mod versions;
pub mod workload;

use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, anyhow, bail};
use d1bench_core::Corruption;
use xshell::Shell;

use crate::base::{DebugCorruption, TargetKind};
use crate::flags;
use crate::paths::Paths;
use crate::records::csv;
use crate::records::run_history::{Planned, SessionTime};
use crate::records::run_record::{self, RunInfo, StudyFile, Versions};
use crate::records::{ResultRow, RunDir, RunRecord, RunStatus, RungRow, StudyKind, Totals};
use crate::studies::Study;
use crate::studies::cost::Cost;
use crate::studies::ladder::Climb;
use crate::studies::overrides::Overrides;
use crate::studies::schedule::SweepPlan;
use crate::studies::sweep::{Axis, PlannedProbe};
use crate::studies::workload::WorkloadPlan;
use crate::targets::{self, Start, Target, remote};
use crate::toolchain::Toolchain;
use crate::{procs, reports, toolchain};

use calls::Clocked;
use climb::ClimbsDone;

/// What a run measures, planned before anything starts.
pub enum Work {
    Sweep(SweepPlan),
    Climbs(Vec<Climb>),
    Workload(WorkloadPlan),
}

impl Work {
    fn kind(&self) -> StudyKind {
        match self {
            Work::Sweep(_) => StudyKind::Sweep,
            Work::Climbs(_) => StudyKind::Ladder,
            Work::Workload(_) => StudyKind::Workload,
        }
    }

    /// What it costs on Cloudflare, warm-ups included.
    pub fn cost(&self) -> Cost {
        match self {
            Work::Sweep(plan) => Cost::of(&plan.probes()),
            Work::Climbs(climbs) => Cost::of_climbs(climbs),
            Work::Workload(plan) => plan.cost(),
        }
    }

    /// Whether any of its reads go through D1's Sessions API, the only reads a read replica
    /// may serve: a remote run then turns read replication on for its database.
    pub fn reads_in_sessions(&self) -> bool {
        match self {
            Work::Workload(plan) => plan.points.iter().any(|p| !p.session.is_none()),
            Work::Sweep(_) | Work::Climbs(_) => false,
        }
    }

    pub fn unit(&self) -> &'static str {
        match self {
            Work::Sweep(_) => "probes",
            Work::Climbs(_) => "rungs",
            Work::Workload(_) => "records",
        }
    }
}

/// Everything a run will do, planned from its study and flags before anything starts.
pub struct Plan {
    pub work: Work,
    /// The profile's name (for ladders, each ladder's, joined by `/` when they differ).
    pub profile: String,
    /// The study files read, with their SHA-256.
    pub files: Vec<StudyFile>,
    pub x_axis: Option<Axis>,
    /// A grid's second axis (the decision map's rows).
    pub y_axis: Option<Axis>,
    pub overrides: Overrides,
    /// The target the same probes run on after the target (bare SQLite), if any.
    pub baseline: Option<TargetKind>,
}

impl Plan {
    /// What the run sends over every target, warm-ups included: probes (rungs at most) and rows.
    pub fn planned(&self) -> Planned {
        let targets = 1 + usize::from(self.baseline.is_some());
        let (probes, rows) = match &self.work {
            Work::Sweep(plan) => {
                let probes = plan.probes();
                (probes.len(), probes.iter().map(|p| p.request.rows).sum())
            }
            // Ladder tables have no index: every row written is a row inserted.
            Work::Climbs(climbs) => {
                let cost = Cost::of_climbs(climbs);
                (cost.probes, cost.rows_written)
            }
            Work::Workload(plan) => (plan.requests(), plan.seeded_rows() as usize),
        };
        Planned {
            probes: targets * probes,
            rows: targets * rows,
        }
    }
}

/// What earlier attempts of a run recorded, which this one skips ([`resume`] reads it).
#[derive(Debug, Clone, Default)]
pub struct Done {
    /// The probes in results.csv: (target, probe id).
    pub probes: BTreeSet<(TargetKind, u64)>,
    /// The climbs in findings.csv, and the next free rung id.
    pub climbs: ClimbsDone,
    /// Whether the run is being resumed: its totals then come from what is on disk.
    pub resuming: bool,
}

impl Done {
    /// The probes of `probes` still to send on `target`: those results.csv does not hold, with
    /// the warm-ups of their points (a point whose measured probes are all recorded is skipped
    /// whole, warm-ups included).
    pub fn remaining(&self, probes: &[PlannedProbe], target: TargetKind) -> Vec<PlannedProbe> {
        let recorded = |p: &PlannedProbe| self.probes.contains(&(target, p.request.probe_id));
        let open: HashSet<String> = probes
            .iter()
            .filter(|p| !p.warmup && !recorded(p))
            .map(point_key)
            .collect();
        probes
            .iter()
            .filter(|p| {
                if p.warmup {
                    open.contains(&point_key(p))
                } else {
                    !recorded(p)
                }
            })
            .cloned()
            .collect()
    }
}

impl Done {
    /// The ids of the probes of `plan` not to send on `target`: the measured probes results.csv
    /// holds, and the warm-ups of the points whose measured probes are all recorded (what
    /// [`Done::remaining`] leaves out of [`SweepPlan::probes`]).
    pub fn skipped(&self, plan: &SweepPlan, target: TargetKind) -> HashSet<u64> {
        let probes = plan.probes();
        let remaining: HashSet<u64> = self
            .remaining(&probes, target)
            .iter()
            .map(|p| p.request.probe_id)
            .collect();
        probes
            .iter()
            .map(|p| p.request.probe_id)
            .filter(|id| !remaining.contains(id))
            .collect()
    }
}

/// What a probe shares with the other repeats and warm-ups of its point: its series, label and
/// parameters (its strategy included), without its id.
fn point_key(probe: &PlannedProbe) -> String {
    let request = d1bench_core::ProbeRequest {
        probe_id: 0,
        ..probe.request.clone()
    };
    format!("{}|{}|{request:?}", probe.series, probe.label)
}

/// `cargo xtask run`.
pub fn run(flags: &flags::Run, sh: &Shell, paths: &Paths) -> Result<()> {
    if flags.dry_run {
        // Before reaping abandoned runs: a dry run changes nothing.
        return dry_run::print(flags, paths);
    }
    let mark = |run_dir: &Path, pid| run_record::mark_abandoned(&run_dir.join("run.toml"), pid);
    for found in procs::reap_abandoned(&paths.scratch(), mark)? {
        eprintln!("{found}");
    }
    if let Some(run_dir) = &flags.resume {
        return resume::resume(flags, run_dir, sh, paths);
    }
    let plan = plan(flags, paths)?;
    // Remote flags and credentials are checked before anything is installed or built.
    let remote = remote_options(flags)?.map(|o| o.replicated_if(plan.work.reads_in_sessions()));
    let tools = tools(flags.target, sh, paths)?;

    let out = flags
        .out
        .clone()
        .unwrap_or_else(|| paths.reports().join(flags.experiment()));
    let run_dir = create_run_dir(&out, flags.target)?;
    let until = match &plan.work {
        Work::Sweep(sweep) => sweep.until,
        Work::Climbs(_) | Work::Workload(_) => None,
    };
    let record = RunRecord {
        run: RunInfo {
            id: run_dir.id(),
            experiment: flags.experiment().to_owned(),
            kind: plan.work.kind(),
            profile: plan.profile.clone(),
            target: flags.target,
            x_axis: plan.x_axis,
            y_axis: plan.y_axis,
            baseline: plan.baseline,
            debug_corrupt: flags.debug_corrupt,
            order_seed: match &plan.work {
                Work::Sweep(sweep) => Some(sweep.order_seed),
                Work::Workload(workload) => Some(workload.order_seed),
                Work::Climbs(_) => None,
            },
            precision: until.map(|u| u.precision),
            max_repeats: until.map(|u| u.max_repeats),
            status: RunStatus::Running,
            started: crate::base::clock::utc_now().0,
            ended: None,
            error: None,
            pid: Some(std::process::id()),
        },
        studies: plan.files.clone(),
        git: run_record::git(sh),
        versions: versions(sh, paths, flags.target),
        machine: run_record::machine(),
        reconciliation: None,
        remote: None,
        overrides: plan.overrides.clone(),
        planned: Some(plan.planned()),
        sessions: Vec::new(),
        resumed: Vec::new(),
    };
    record.write(&run_dir.run_toml())?;
    eprintln!("run directory: {}", run_dir.path.display());
    measure(
        flags,
        &plan,
        &run_dir,
        record,
        &Done::default(),
        paths,
        &Tools {
            tools: tools.as_ref(),
            remote: remote.as_ref(),
        },
    )
}

/// The Worker's toolchain installed and the Worker built, for a target that runs it.
fn tools(target: TargetKind, sh: &Shell, paths: &Paths) -> Result<Option<Toolchain>> {
    if !target.runs_the_worker() {
        return Ok(None);
    }
    let tools = toolchain::ensure(sh, paths)?;
    crate::worker_build::ensure(sh, paths, &tools)?;
    Ok(Some(tools))
}

/// What starting the run's targets takes beyond the paths.
pub struct Tools<'a> {
    pub tools: Option<&'a Toolchain>,
    pub remote: Option<&'a remote::Options>,
}

/// Measures the plan on the target and the baseline (what `done` holds skipped), records how the
/// run ended, and writes every report.
fn measure(
    flags: &flags::Run,
    plan: &Plan,
    run_dir: &RunDir,
    mut record: RunRecord,
    done: &Done,
    paths: &Paths,
    tools: &Tools,
) -> Result<()> {
    let _registration = procs::register_run(&paths.scratch(), &run_dir.path)?;
    // The attempt's monotonic clock: each probe records when it started on it.
    let clock = Instant::now();
    let warnings = match tools.remote {
        Some(options) => plan.work.cost().warnings(options.plan),
        None => Vec::new(),
    };
    let start = Start {
        paths,
        tools: tools.tools,
        remote: tools.remote,
        warnings: &warnings,
    };
    // The target, then the baseline (same probes, bare SQLite), into the same results.csv.
    let measured = std::iter::once(flags.target).chain(plan.baseline).try_fold(
        Totals::default(),
        |totals, target| {
            let left = match &plan.work {
                Work::Sweep(sweep) => done.skipped(sweep, target).len() < sweep.probes().len(),
                Work::Climbs(all) => all.len() > done.climbs.climbs.len(),
                Work::Workload(_) => true,
            };
            if !left {
                // A resumed run whose records on this target are all on disk: nothing to start.
                eprintln!("nothing is left to measure on {target}: its records are all on disk");
                return Ok(totals);
            }
            if target != flags.target {
                eprintln!(
                    "the same probes on the baseline: bare SQLite in-process (not D1), D1's limits applied"
                );
            }
            let measured = measure_on(
                target,
                &start,
                &plan.work,
                done,
                run_dir,
                &mut record,
                clock,
            )?;
            Ok::<_, anyhow::Error>(totals.merged(&measured))
        },
    );
    // A resumed run's totals are those of every record on disk.
    let measured = match measured {
        Ok(attempt) if done.resuming => whole_run_totals(plan.work.kind(), run_dir, &attempt),
        other => other,
    };
    record
        .run
        .end(measured.as_ref().map(Totals::all_reconciled));
    record.machine.load_at_end = run_record::load_average();
    if let Ok(totals) = &measured {
        record.reconciliation = Some(totals.clone());
    }
    record.write(&run_dir.run_toml())?;
    let totals = measured?;

    reports::render(run_dir, true, flags.titles)?;
    println!("reconciliation: {}", totals.line(plan.work.unit()));
    if !totals.all_reconciled() {
        bail!(
            "the run is INVALID: what the target holds differs from what was sent (see \
             `reconcile_note` in {}); everything measured is kept",
            run_dir.results_csv().display()
        );
    }
    Ok(())
}

/// The totals of a resumed run: every record in results.csv, and the warm-ups of this attempt
/// (an attempt that did not end recorded no totals, so earlier warm-ups are not counted).
fn whole_run_totals(kind: StudyKind, run_dir: &RunDir, attempt: &Totals) -> Result<Totals> {
    let mut totals = Totals::default();
    match kind {
        StudyKind::Sweep => csv::read::<ResultRow>(&run_dir.results_csv())?
            .iter()
            .for_each(|r| totals.add(r)),
        StudyKind::Ladder => csv::read::<RungRow>(&run_dir.results_csv())?
            .iter()
            .for_each(|r| totals.add(r)),
        StudyKind::Workload => bail!("a workload run cannot be resumed"),
    }
    totals.warmups = attempt.warmups;
    totals.warmups_reconciled = attempt.warmups_reconciled;
    Ok(totals)
}

/// `None` for a run on another target than remote (refusing remote-only flags); for a remote
/// run, its flags checked and the credentials read.
fn remote_options(flags: &flags::Run) -> Result<Option<remote::Options>> {
    let asked = remote::Asked {
        location: flags.location,
        plan: flags.plan,
        keep: flags.keep,
        tag: flags.tag.as_deref(),
    };
    remote::Options::for_target(flags.target, &asked)
}

/// The study's plan for the profile, target and overrides asked for; every refusal of the input
/// comes here, before anything starts.
pub fn plan(flags: &flags::Run, paths: &Paths) -> Result<Plan> {
    let study = Study::load(&paths.experiments(), flags.experiment())?;
    let overrides = Overrides {
        repeats: flags.repeats,
        warmup: flags.warmup,
        seed: flags.seed,
        only: flags.only.clone(),
    }
    .checked()?;
    let file_of = |name: &str, path: &Path, source: &str, description: &str| StudyFile {
        name: name.to_owned(),
        file: path
            .strip_prefix(&paths.root)
            .unwrap_or(path)
            .display()
            .to_string(),
        sha256: toolchain::hash_bytes(source.as_bytes()),
        description: description.to_owned(),
    };
    match &study {
        Study::Sweep(experiment) => {
            let (profile, spec) = experiment.profile(flags.profile.as_deref())?;
            let mut plan = overrides.plan(experiment, spec)?;
            if let Some(kind) = flags.debug_corrupt {
                corrupt_every_probe(&mut plan, kind)?;
            }
            let file = file_of(
                &experiment.name,
                &experiment.path,
                &experiment.source,
                &experiment.file.description,
            );
            let baseline = (flags.target.runs_the_worker() && !flags.no_baseline)
                .then_some(TargetKind::Sqlite);
            Ok(Plan {
                work: Work::Sweep(plan),
                profile: profile.to_owned(),
                files: vec![file],
                x_axis: Some(experiment.file.x_axis),
                y_axis: experiment.y_axis(),
                overrides,
                baseline,
            })
        }
        Study::Workload(w) => {
            let file = file_of(&w.name, &w.path, &w.source, &w.file.description);
            workload::plan(w, flags, overrides, file)
        }
        Study::Ladders(ladders) => {
            if flags.debug_corrupt.is_some() || flags.no_baseline {
                bail!(
                    "--debug-corrupt and --no-baseline apply to experiments, not to ladders (`{}` climbs ladders)",
                    flags.experiment()
                );
            }
            overrides.refuse_for_ladders(flags.experiment())?;
            let mut climbs = Vec::new();
            let mut profiles: Vec<String> = Vec::new();
            let mut files = Vec::new();
            for l in ladders {
                let kind = l.file.ladder;
                if flags.target == TargetKind::Sqlite && !kind.runs_on_sqlite() {
                    if flags.experiment() == crate::studies::LIMITS {
                        continue;
                    }
                    bail!(
                        "{kind} climbs a limit of the Workers runtime and D1's service, which in-process SQLite does not have; run it with --target local or remote"
                    );
                }
                let (profile, spec) = l.profile(flags.profile.as_deref())?;
                climbs.extend(l.climbs(spec));
                if !profiles.iter().any(|p| p == profile) {
                    profiles.push(profile.to_owned());
                }
                files.push(file_of(&l.name, &l.path, &l.source, &l.file.description));
            }
            Ok(Plan {
                work: Work::Climbs(climbs),
                profile: profiles.join("/"),
                files,
                x_axis: None,
                y_axis: None,
                overrides,
                baseline: None,
            })
        }
    }
}

/// Starts the target, measures the work on it (what `done` holds skipped), closes it (on every
/// path: the session's drop), and notes in run.toml what the session said of itself and how long
/// it took. `clock` started with the attempt: each probe records when it started on it.
fn measure_on(
    target: TargetKind,
    start: &Start,
    work: &Work,
    done: &Done,
    run_dir: &RunDir,
    record: &mut RunRecord,
    clock: Instant,
) -> Result<Totals> {
    if target == TargetKind::Remote {
        record.remote = start.remote.map(remote::RemoteRecord::pending);
        record.write(&run_dir.run_toml())?;
    }
    let starting = Instant::now();
    let session = match targets::open(target, start) {
        Ok(session) => session,
        Err(e) => {
            if let Some(remote) = &mut record.remote {
                remote.teardown = format!("setup failed, what it created was deleted: {e:#}");
            }
            return Err(e);
        }
    };
    let start_ms = ms_since(starting);
    let mut session = Clocked::new(session);
    let described = session.describe();
    if target == record.run.target {
        record.versions.worker = described.worker;
        record.remote = described.remote;
    }
    record.write(&run_dir.run_toml())?;
    let experiment = record.run.experiment.clone();
    let experiment = experiment.as_str();
    let measuring = Instant::now();
    let measured = match work {
        Work::Sweep(plan) => {
            let skip = done.skipped(plan, target);
            sweep::measure(&mut session, experiment, plan, &skip, run_dir, clock)
        }
        Work::Climbs(climbs) => climb::climb_all(&mut session, climbs, &done.climbs, run_dir),
        Work::Workload(plan) => workload::measure(&mut session, experiment, plan, run_dir, clock),
    };
    let wall_ms = ms_since(measuring);
    let (calls, calls_ms) = (session.calls(), session.inside_ms());
    let stopping = Instant::now();
    let (described, closed) = session.into_inner().close();
    record.sessions.push(SessionTime {
        target,
        start_ms,
        wall_ms,
        calls_ms,
        calls,
        stop_ms: ms_since(stopping),
    });
    if target == record.run.target {
        record.remote = described.remote;
    }
    record.write(&run_dir.run_toml())?;
    match (measured, closed) {
        (Ok(totals), Ok(())) => Ok(totals),
        (Err(e), Ok(())) => Err(e),
        (Ok(_), Err(t)) => Err(t.context(
            "everything was measured, but stopping the target and removing what it created failed",
        )),
        (Err(e), Err(t)) => Err(e.context(format!(
            "and stopping the target and removing what it created failed too: {t:#}"
        ))),
    }
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}

/// Sets `--debug-corrupt` on every probe, checking that each can take it.
fn corrupt_every_probe(plan: &mut SweepPlan, kind: DebugCorruption) -> Result<()> {
    let corruption = match kind {
        DebugCorruption::TextByte => Corruption::TextByte,
        DebugCorruption::Integer => Corruption::Integer,
        DebugCorruption::SwapRows => Corruption::SwapRows,
        DebugCorruption::SwapColumns => Corruption::SwapColumns,
    };
    eprintln!(
        "--debug-corrupt {}: every probe's table is changed after its writes; this run will be invalid",
        corruption.name()
    );
    for point in &mut plan.points {
        point.request.debug_corrupt = Some(corruption);
        for &strategy in &point.strategies {
            let probe = point.probe(strategy, 0);
            probe.validate().map_err(|e| {
                anyhow!(
                    "--debug-corrupt {} cannot apply to the {strategy} probes at columns {}, \
                     row-bytes {}, rows {}: {e}",
                    corruption.name(),
                    probe.columns,
                    probe.row_bytes,
                    probe.rows
                )
            })?;
        }
    }
    Ok(())
}

/// `<out>/<UTC time>-<target>`, made unique if two runs start in the same second.
pub fn create_run_dir(out: &Path, target: TargetKind) -> Result<RunDir> {
    let (_, compact) = crate::base::clock::utc_now();
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

fn versions(sh: &Shell, paths: &Paths, target: TargetKind) -> Versions {
    let modules = paths.node_modules();
    Versions {
        d1bench: env!("CARGO_PKG_VERSION").into(),
        worker: if target.runs_the_worker() {
            "not started"
        } else {
            "not used (sqlite target)"
        }
        .into(),
        sqlite: targets::sqlite::version(),
        worker_crate: toolchain::locked_version(&paths.root.join("Cargo.lock"), "worker")
            .unwrap_or_else(|_| "unknown".into()),
        wrangler: run_record::npm_package_version(&modules.join("wrangler/package.json")),
        workerd: run_record::npm_package_version(&modules.join("workerd/package.json")),
        rustc: xshell::cmd!(sh, "rustc --version")
            .quiet()
            .read()
            .unwrap_or_else(|_| "unknown".into()),
    }
}
