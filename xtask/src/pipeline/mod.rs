//! The one pipeline every study goes through, whatever the target:
//!
//! study file → plan (probes or climbs, the command line's overrides applied) → install and build
//! what the targets need → a run directory and its `run.toml` → for each of the plan's sessions,
//! on the target and on the baseline in alternation ([`RunPlan::order`]), a fresh target:
//! started, every record measured, reconciled and appended to disk as it lands, closed on every
//! way out, the session settled (what it measured before it settled marked as warm-up), its time
//! recorded → `run.toml` says how it ended → every report derived from what is on disk
//! ([`crate::reports`]) and the run's page (`index.html`, [`crate::html::run_pages`]), whose
//! `file://` link is the run's last line, however it ended ([`finish`]).
//!
//! It knows no kind of study: each plans, measures, resumes and reports behind
//! [`crate::studies::kind::PlannedStudy`], found by [`crate::studies::load`].
//!
//! Bad input fails before anything starts; once records are measured, whatever happens, they stay
//! on disk and run.toml says how the run ended. A run killed outright is found by the next one
//! ([`crate::procs::reap_abandoned`]), which stops what it started and marks it abandoned; a run
//! that did not end is continued by [`resume`]; [`dry_run`] stops after the plan.

pub mod calls;
pub mod dry_run;
pub mod host_speed;
pub mod plan;
pub mod resume;

use crate::base::clock::ms_since;
use std::path::Path;
use std::time::Instant;

use anyhow::{Result, bail};
use xshell::Shell;

use crate::base::{PgWorker, TargetKind, WorkerKind};
use crate::flags;
use crate::paths::Paths;
use crate::records::host_speed::ReadingAt;
use crate::records::run_history::SessionTime;
use crate::records::run_record::{self, RunInfo, ToolVersions};
use crate::records::{RunDir, RunRecord, RunStatus, Totals};
use crate::studies::kind::Measuring;
pub use crate::studies::kind::RunPlan;
use crate::targets::{self, Start, Target, remote};
use crate::toolchain::Toolchain;
use crate::{html, procs, studies, toolchain};
use plan::with_orm_worker;
pub use plan::{FREE_PROFILE, free_profile_note, picks_free_profile, plan};

use calls::Clocked;

/// `cargo xtask run`.
pub fn run(flags: &flags::Run, sh: &Shell, paths: &Paths) -> Result<()> {
    let with_libraries = with_orm_worker(flags, paths)?;
    let flags = with_libraries.as_ref().unwrap_or(flags);
    if flags.dry_run {
        // Before reaping abandoned runs: a dry run changes nothing.
        return dry_run::print(flags, paths);
    }
    // A run found abandoned is marked so, and its page rewritten to say it.
    let mark = |run_dir: &Path, pid| {
        let marked = run_record::mark_abandoned(&run_dir.join("run.toml"), pid);
        let dir = RunDir::new(run_dir.to_owned());
        if let Some(record) = marked
            .then(|| RunRecord::read(&dir.run_toml()).ok())
            .flatten()
            && let Err(e) = html::run_pages::write(&dir, &record, &[], false)
        {
            eprintln!("the abandoned run's page could not be written: {e:#}");
        }
        marked
    };
    for found in procs::reap_abandoned(&paths.scratch(), mark)? {
        eprintln!("{found}");
    }
    if let Some(run_dir) = &flags.resume {
        return resume::resume(flags, run_dir, sh, paths);
    }
    if flags.shards.is_some() {
        return studies::workload::shard::shared::run(flags, sh, paths);
    }
    let plan = plan(flags, paths)?;
    if flags.profile.is_none() && plan.profile == FREE_PROFILE && flags.target.is_remote() {
        eprintln!("{}", free_profile_note());
    }
    // Remote flags and credentials are checked before anything is installed or built.
    let remote = remote_options(flags)?.map(|o| {
        o.replicated_if(plan.work.reads_in_sessions())
            .with_subrequests(plan.work.worker_subrequests())
    });
    let tools = tools(flags, plan.pg_worker(), sh, paths)?;

    let out = flags
        .out
        .clone()
        .unwrap_or_else(|| paths.reports().join(flags.experiment()));
    let run_dir = create_run_dir(&out, flags.target)?;
    let mut run = RunInfo {
        id: run_dir.id(),
        experiment: flags.experiment().to_owned(),
        kind: plan.work.kind().name(),
        profile: plan.profile.clone(),
        target: flags.target,
        x_axis: None,
        y_axis: None,
        baseline: plan.baseline,
        debug_corrupt: flags.debug_corrupt,
        isolate_heap: flags.isolate_heap.is_some(),
        isolate_heap_alternate: flags.isolate_heap == Some(crate::base::HeapSampling::Alternate),
        // Alternating, the JavaScript Worker the Rust Worker alternates with, when not the twin.
        // The Postgres Worker is none of `--worker`'s: its sources are recorded apart
        // (`versions.worker_pg_build`).
        worker: (flags.target.runs_the_worker()
            && !flags.target.is_postgres()
            && (!flags.two_workers() || flags.worker == WorkerKind::JsMinimal))
            .then_some(flags.worker),
        alternate_workers: flags.alternate_workers,
        paired_workers: flags.paired_workers,
        order_seed: None,
        precision: None,
        max_repeats: None,
        sessions: None,
        debug_slow_percent: flags.debug_slow,
        status: RunStatus::Running,
        started: crate::base::clock::utc_now().0,
        ended: None,
        error: None,
        pid: Some(std::process::id()),
        shard: flags.shard,
        clock_zero_unix_ms: None,
    };
    plan.work.record_in(&mut run);
    let record = RunRecord {
        run,
        studies: plan.files.clone(),
        git: run_record::git(sh),
        versions: versions(sh, paths, flags, plan.pg_worker()),
        machine: run_record::machine(),
        reconciliation: None,
        remote: None,
        baseline_remote: None,
        overrides: plan.overrides.clone(),
        planned: Some(plan.planned()),
        sessions: Vec::new(),
        resumed: Vec::new(),
        merged: None,
    };
    record.write(&run_dir.run_toml())?;
    eprintln!("run directory: {}", run_dir.path.display());
    if let Some(limit) = &record.machine.cpu_limit {
        eprintln!(
            "warning: this run is limited to {limit}: it measures that limit as much as the \
             machine, run.toml records it, and a replicate set will not take it beside runs \
             made without it"
        );
    }
    measure(
        flags,
        &plan,
        &run_dir,
        record,
        false,
        paths,
        &Tools {
            tools: tools.as_ref(),
            remote: remote.as_ref(),
        },
    )
}

/// The Worker's toolchain installed and the Worker built, for a target that runs it; the ORM
/// Worker's libraries too when it runs, and on the hyperdrive targets the Postgres Worker `pg`.
pub(crate) fn tools(
    flags: &flags::Run,
    pg: PgWorker,
    sh: &Shell,
    paths: &Paths,
) -> Result<Option<Toolchain>> {
    // A shard of `--shards` reaches the Worker its coordinator built and started.
    if !flags.target.runs_the_worker() || flags.join.is_some() {
        return Ok(None);
    }
    let tools = toolchain::ensure(sh, paths)?;
    crate::worker_build::ensure(sh, paths, &tools)?;
    if flags.target.is_postgres() || flags.baseline.is_postgres() {
        crate::worker_build::ensure_pg(sh, paths, &tools, pg)?;
    }
    if flags.javascript().runs_orms() {
        toolchain::ensure_orm_worker(sh, paths, &tools)?;
    }
    Ok(Some(tools))
}

/// What starting the run's targets takes beyond the paths.
pub struct Tools<'a> {
    pub tools: Option<&'a Toolchain>,
    pub remote: Option<&'a remote::Options>,
}

/// Measures the plan on the target and the baseline (what a resumed plan holds skipped),
/// records how the run ended, and writes every report.
fn measure(
    flags: &flags::Run,
    plan: &RunPlan,
    run_dir: &RunDir,
    mut record: RunRecord,
    resuming: bool,
    paths: &Paths,
    tools: &Tools,
) -> Result<()> {
    let _registration = procs::register_run(&paths.scratch(), &run_dir.path)?;
    // The attempt's monotonic clock: each probe records when it started on it. A shard notes
    // when it started on the wall clock, which lines its records up with the other shards'.
    let clock = Instant::now();
    if record.run.shard.is_some() {
        record.run.clock_zero_unix_ms = Some(crate::base::clock::unix_ms_now());
    }
    let warnings = match tools.remote {
        Some(options) => {
            let (billed, _) = plan.work.cost().billed_on(flags.target, plan.baseline);
            billed.warnings(options.plan)
        }
        None => Vec::new(),
    };
    // A shard of `--shards` joins the target its coordinator started.
    let join = match (&flags.join, flags.shard) {
        (Some(file), Some(shard)) => Some((targets::joined::Join::read(file)?, shard.index)),
        _ => None,
    };
    let start = Start {
        paths,
        tools: tools.tools,
        remote: tools.remote,
        warnings: &warnings,
        sample_heap: flags.isolate_heap,
        worker: flags.worker,
        pair_with: flags.paired_workers.then(|| flags.javascript()),
        join: join.as_ref().map(|(join, k)| (join, *k)),
        pg_worker: plan.pg_worker(),
    };
    // The host's speed before the first session, between sessions and after the last.
    take_reading(&mut record, run_dir, ReadingAt::Before)?;
    // Each session of the target and of the baseline (same probes, bare SQLite), alternating,
    // into the same results.csv.
    let mut announced = false;
    let order = plan.order(flags.target);
    let last = order.len().saturating_sub(1);
    let measured = order.into_iter().enumerate().try_fold(
        Totals::default(),
        |totals, (i, (session, target))| {
            if !plan.work.left_on(target, session) {
                // A resumed run whose records of this session are all on disk: nothing to
                // start; settled again, in case the attempt that measured it ended before.
                eprintln!(
                    "nothing is left to measure on {target}{}: its records are all on disk",
                    of_sessions(session, plan.work.sessions())
                );
                plan.work.settle(run_dir, target, session)?;
                return Ok(totals);
            }
            if target != flags.target && !announced {
                announced = true;
                eprintln!(
                    "the same probes on the baseline: {}",
                    match target {
                        TargetKind::Do | TargetKind::RemoteDo =>
                            "the Worker writing through a SQLite-backed Durable Object (not D1)",
                        TargetKind::Hyperdrive | TargetKind::RemoteHyperdrive =>
                            "the Postgres Worker writing through a Hyperdrive binding (not D1)",
                        _ => "bare SQLite in-process (not D1), D1's limits applied",
                    }
                );
            }
            let start = Start {
                worker: match flags.alternate_workers {
                    true => WorkerKind::of_session(session, flags.javascript()),
                    false => flags.worker,
                },
                ..start
            };
            let on = On {
                target,
                session,
                start: &start,
                clock,
            };
            let measured = measure_on(&on, plan, run_dir, &mut record)?;
            let at = if i == last {
                ReadingAt::After
            } else {
                ReadingAt::Between
            };
            take_reading(&mut record, run_dir, at)?;
            Ok::<_, anyhow::Error>(totals.merged(&measured))
        },
    );
    // A resumed run's totals are those of every record on disk.
    let measured = match measured {
        Ok(attempt) if resuming => whole_run_totals(plan, run_dir, &attempt),
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
    let totals = match measured {
        Ok(totals) => totals,
        Err(e) => {
            // The page says how the run ended and shows what it measured before.
            finish(run_dir, &record, flags.titles);
            return Err(e);
        }
    };

    let rendered = studies::render(run_dir, true, flags.titles)?;
    println!("reconciliation: {}", totals.line(plan.work.kind().unit()));
    let page = html::run_pages::write(run_dir, &record, &rendered.charts, flags.titles)?;
    println!("{}", html::run_pages::link(&page.path));
    if !totals.all_reconciled() {
        bail!(
            "the run is INVALID: what the target holds differs from what was sent (see \
             `reconcile_note` in {}); everything measured is kept",
            run_dir.results_csv().display()
        );
    }
    Ok(())
}

/// The reports and page of a run that did not end complete, from what it measured: its tables
/// shown, and its page's link printed last. A report that cannot be drawn from a partial run
/// leaves the page without its charts; a page that cannot be written is said, not raised, so
/// the run's own error is the one it ends with.
pub fn finish(run_dir: &RunDir, record: &RunRecord, titles: bool) {
    let charts = if html::run_pages::measured(run_dir) {
        match studies::render(run_dir, true, titles) {
            Ok(rendered) => rendered.charts,
            Err(e) => {
                eprintln!("the reports of what was measured could not be written: {e:#}");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    match html::run_pages::write(run_dir, record, &charts, titles) {
        Ok(page) => println!("{}", html::run_pages::link(&page.path)),
        Err(e) => eprintln!(
            "the run's page could not be written in {}: {e:#}",
            run_dir.path.display()
        ),
    }
}

/// Reads the host's speed ([`host_speed::read`]) into the record and writes run.toml at once.
fn take_reading(record: &mut RunRecord, run_dir: &RunDir, at: ReadingAt) -> Result<()> {
    let now = crate::records::run_history::unix_secs(&crate::base::clock::utc_now().0);
    let started = crate::records::run_history::unix_secs(&record.run.started);
    let run_s = match (now, started) {
        (Some(now), Some(started)) => now.saturating_sub(started) as f64,
        _ => 0.0,
    };
    record.machine.speed.push(host_speed::read(at, run_s)?);
    record.write(&run_dir.run_toml())
}

/// The totals of a resumed run: every record in results.csv, warm-ups included where the kind
/// records them (a sweep); otherwise the warm-ups of this attempt (an attempt that did not end
/// recorded no totals, so earlier warm-ups are not counted).
fn whole_run_totals(plan: &RunPlan, run_dir: &RunDir, attempt: &Totals) -> Result<Totals> {
    let mut totals = plan.work.recorded_totals(run_dir)?;
    if totals.warmups == 0 {
        totals.warmups = attempt.warmups;
        totals.warmups_reconciled = attempt.warmups_reconciled;
        totals.warmups_target_failed = attempt.warmups_target_failed;
    }
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
        baseline: (!flags.no_baseline).then_some(flags.baseline),
    };
    remote::Options::for_target(flags.target, &asked)
}

/// Where [`measure_on`] measures: which session on which target, how targets start, and the
/// attempt's clock (each probe records when it started on it).
struct On<'a> {
    target: TargetKind,
    session: usize,
    start: &'a Start<'a>,
    clock: Instant,
}

/// `, session 2 of 5` for a run of several sessions, nothing for a run of one.
fn of_sessions(session: usize, sessions: usize) -> String {
    if sessions > 1 {
        format!(", session {} of {sessions}", session + 1)
    } else {
        String::new()
    }
}

/// The run.toml table of `target`'s deployment: `[remote]` for the run's target, and
/// `[baseline_remote]` for a remote baseline beside it.
fn remote_of(record: &mut RunRecord, target: TargetKind) -> &mut Option<remote::RemoteRecord> {
    if target == record.run.target {
        &mut record.remote
    } else {
        &mut record.baseline_remote
    }
}

/// Starts a fresh target, measures the plan's session on it (what a resumed plan holds skipped),
/// closes it (on every path: the session's drop), settles the session (its records measured
/// before it settled marked as warm-up), and notes in run.toml what the session said of itself,
/// how long it took and what it discarded.
fn measure_on(on: &On, plan: &RunPlan, run_dir: &RunDir, record: &mut RunRecord) -> Result<Totals> {
    let target = on.target;
    if target.is_remote() {
        *remote_of(record, target) = on.start.remote.map(remote::RemoteRecord::pending);
        record.write(&run_dir.run_toml())?;
    }
    if plan.work.sessions() > 1 {
        eprintln!(
            "session {} of {} on {target}: a fresh target",
            on.session + 1,
            plan.work.sessions()
        );
    }
    let starting = Instant::now();
    let session = match targets::open(target, on.start) {
        Ok(session) => session,
        Err(e) => {
            if let Some(remote) = remote_of(record, target) {
                remote.teardown = format!("setup failed, what it created was deleted: {e:#}");
            }
            return Err(e);
        }
    };
    let start_ms = ms_since(starting);
    let mut session = Clocked::new(session);
    let described = session.describe();
    if target == record.run.target {
        record.versions.worker = described.worker.clone();
    }
    if target.is_remote() {
        *remote_of(record, target) = described.remote;
    }
    record.write(&run_dir.run_toml())?;
    let experiment = record.run.experiment.clone();
    let experiment = experiment.as_str();
    let measuring = Instant::now();
    let measured = plan.work.measure(
        &mut session,
        &Measuring {
            experiment,
            session: on.session,
            run_dir,
            clock: on.clock,
        },
    );
    let wall_ms = ms_since(measuring);
    let (calls, calls_ms) = (session.calls(), session.inside_ms());
    let stopping = Instant::now();
    let (described, closed) = session.into_inner().close();
    let stop_ms = ms_since(stopping);
    // Settled only once every record of the session is on disk.
    let settled = match &measured {
        Ok(_) => plan.work.settle(run_dir, target, on.session),
        Err(_) => Ok(None),
    };
    record.sessions.push(SessionTime {
        target,
        session: on.session,
        start_ms,
        wall_ms,
        calls_ms,
        calls,
        stop_ms,
        warmup_discarded: settled.as_ref().ok().copied().flatten(),
        worker: (!described.worker.is_empty()).then(|| described.worker.clone()),
    });
    if target.is_remote() {
        *remote_of(record, target) = described.remote;
    }
    record.write(&run_dir.run_toml())?;
    let discarded = settled?.unwrap_or(0);
    match (measured, closed) {
        (Ok(totals), Ok(())) => Ok(Totals {
            warmup_discarded: totals.warmup_discarded + discarded,
            ..totals
        }),
        (Err(e), Ok(())) => Err(e),
        (Ok(_), Err(t)) => Err(t.context(
            "everything was measured, but stopping the target and removing what it created failed",
        )),
        (Err(e), Err(t)) => Err(e.context(format!(
            "and stopping the target and removing what it created failed too: {t:#}"
        ))),
    }
}

/// `<out>/<UTC time>-<target>`, made unique if two runs start in the same second.
pub fn create_run_dir(out: &Path, target: TargetKind) -> Result<RunDir> {
    crate::records::create_unique_dir(out, target.name()).map(RunDir::new)
}

fn versions(sh: &Shell, paths: &Paths, flags: &flags::Run, pg: PgWorker) -> ToolVersions {
    let target = flags.target;
    let uses_js =
        target.runs_the_worker() && (flags.two_workers() || flags.worker != WorkerKind::Rust);
    let modules = paths.node_modules();
    let manifest = target
        .runs_the_worker()
        .then(|| {
            crate::worker_build::Manifest::read(&paths.root)
                .ok()
                .flatten()
        })
        .flatten();
    ToolVersions {
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
        // Read after `tools` made sure the committed build is today's sources'.
        worker_build: manifest.as_ref().map(|m| m.sources.clone()),
        worker_wasm: manifest.and_then(|m| m.files.get("index_bg.wasm").cloned()),
        worker_js_build: uses_js
            .then(|| crate::worker_build::js_sources_hash(&paths.root).ok())
            .flatten(),
        worker_orm_build: (target.runs_the_worker() && flags.javascript().runs_orms())
            .then(|| crate::worker_build::orm_sources_hash(&paths.root).ok())
            .flatten(),
        worker_pg_build: (target.is_postgres() || flags.baseline.is_postgres())
            .then(|| crate::worker_build::pg_sources_hash(&paths.root, pg).ok())
            .flatten(),
    }
}
