//! The plan step of the pipeline: the command line read into a study's plan (the profile, the
//! overrides checked, the Free plan's profile picked by itself on a remote run, the ORM Worker
//! for a study with libraries), every refusal of the input made here before anything starts.

use anyhow::{Result, bail};
use d1bench_core::Corruption;

use crate::base::{DebugCorruption, TargetKind, WorkerKind};
use crate::flags;
use crate::paths::Paths;
use crate::records::run_record::StudyKind;
use crate::records::shard::ShardRefusal;
use crate::studies;
use crate::studies::kind::{Ask, RunPlan};
use crate::studies::overrides::Overrides;

/// `--worker js` for a study whose probes include libraries: the JavaScript Worker that bundles
/// them (`js-orm`, worker-orm/: the same strategies' code as worker-js/ beside the libraries),
/// said on stderr and recorded in run.toml as the Worker that ran. `None` when nothing changes.
pub(super) fn with_orm_worker(flags: &flags::Run, paths: &Paths) -> Result<Option<flags::Run>> {
    if flags.worker != WorkerKind::Js || flags.two_workers() || flags.resume.is_some() {
        return Ok(None);
    }
    let study = studies::load(&paths.experiments(), flags.experiment())?;
    if !study.measures_libraries() {
        return Ok(None);
    }
    eprintln!(
        "{} measures libraries (`orms`): `--worker js` runs as `--worker js-orm`, the \
         JavaScript Worker with the libraries bundled beside the same strategies",
        flags.experiment()
    );
    Ok(Some(flags::Run {
        worker: WorkerKind::JsOrm,
        ..flags.clone()
    }))
}

/// The study's plan for the profile, target and overrides asked for; every refusal of the input
/// comes here, before anything starts.
pub fn plan(flags: &flags::Run, paths: &Paths) -> Result<RunPlan> {
    let study = studies::load(&paths.experiments(), flags.experiment())?;
    // The overrides given, checked: each in its range, `--only` well formed.
    let overrides = Overrides {
        repeats: flags.repeats,
        warmup: flags.warmup,
        seed: flags.seed,
        order_seed: flags.order_seed,
        sessions: flags.sessions,
        only: flags.only.clone(),
    };
    overrides.check()?;
    let profile = flags.profile.as_deref().or_else(|| {
        picks_free_profile(flags, |name| study.priced(Some(name)).is_ok()).then_some(FREE_PROFILE)
    });
    let plan = study.plan(Ask {
        experiment: flags.experiment(),
        profile,
        target: flags.target,
        no_baseline: flags.no_baseline,
        baseline: flags.baseline,
        debug_corrupt: flags.debug_corrupt.map(corruption),
        debug_slow_percent: flags.debug_slow,
        overrides,
        root: &paths.root,
        worker: (flags.target.runs_the_worker() && !flags.two_workers()).then_some(flags.worker),
        paired_workers: flags.paired_workers.then(|| flags.javascript()),
        shard: flags.shard,
        dry_run: flags.dry_run,
    })?;
    if let Some(of) = flags.shards {
        if plan.work.kind().name() != StudyKind::Workload {
            return Err(not_a_rate(&format!("--shards {of}"), flags, &plan).into());
        }
        if !matches!(flags.target, TargetKind::Sqlite | TargetKind::Local) {
            return Err(ShardRefusal(format!(
                "--shards {of} shares one target between processes on this machine: --target \
                 sqlite or local, not {} (on Cloudflare, run each shard with --shard K/N and \
                 merge them)",
                flags.target
            ))
            .into());
        }
    }
    if let Some(shard) = flags.shard
        && plan.work.kind().name() != StudyKind::Workload
    {
        return Err(not_a_rate(&format!("--shard {shard}"), flags, &plan).into());
    }
    if flags.alternate_workers && plan.work.sessions() < 4 {
        bail!(
            "--alternate-workers needs 4 sessions or more (2 for each Worker, in ABBA order), \
             and this plan has {}: give the profile `sessions = 4` or more, or --sessions",
            plan.work.sessions()
        );
    }
    if flags.paired_workers && plan.work.sessions() < 2 {
        bail!(
            "--paired-workers needs 2 sessions or more (its interval is taken over the \
             sessions' ratios), and this plan has {}: give the profile `sessions = 2` or more, \
             or --sessions",
            plan.work.sessions()
        );
    }
    let on_postgres =
        flags.target.is_postgres() || plan.baseline.is_some_and(TargetKind::is_postgres);
    if on_postgres
        && !matches!(
            plan.work.kind().name(),
            StudyKind::Sweep | StudyKind::Ladder
        )
    {
        bail!(
            "the hyperdrive target runs sweeps and ladders only: `{}` is a {:?} study, and the \
             Postgres Worker answers only /setup, /probe, /verify and /rung",
            flags.experiment(),
            plan.work.kind().name()
        );
    }
    if on_postgres {
        // A server of the user's is checked before anything is installed or started.
        crate::targets::hyperdrive::connection::given_server()?;
    }
    if flags.worker.takes_statements() || flags.two_workers() {
        if plan.baseline.is_some_and(TargetKind::through_do) {
            bail!(
                "--worker js and --alternate-workers do not go with --baseline do: the \
                 JavaScript Worker has no Durable Object"
            );
        }
        if flags.target != TargetKind::Local {
            bail!(
                "--worker js runs on the local target only, not --target {}: the JavaScript \
                 Worker is not deployed to Cloudflare, and sqlite runs no Worker",
                flags.target
            );
        }
        if plan.work.kind().name() != StudyKind::Sweep {
            bail!(
                "--worker js runs sweeps only: `{}` is a {:?} study, and the JavaScript Worker \
                 answers only the sweeps' /setup, /probe and /verify",
                flags.experiment(),
                plan.work.kind().name()
            );
        }
    }
    Ok(plan)
}

/// `--shard` or `--shards` (as `flag` says) on a study that is not a workload.
fn not_a_rate(flag: &str, flags: &flags::Run, plan: &RunPlan) -> ShardRefusal {
    ShardRefusal(format!(
        "{flag} splits a workload's open-loop load between processes: `{}` is a {} study, \
         whose probes are timed one at a time and are not a rate to share",
        flags.experiment(),
        match plan.work.kind().name() {
            StudyKind::Ladder => "ladder",
            _ => "sweep",
        }
    ))
}

/// The profile a study sizes to fit the Free plan's daily quotas.
pub const FREE_PROFILE: &str = "free";

/// Whether a run takes the study's `free` profile by itself: on `--target remote` with the Free
/// plan (`--plan free`, or no `--plan`), no `--profile` given, and a study that has one.
pub fn picks_free_profile(flags: &flags::Run, has_profile: impl Fn(&str) -> bool) -> bool {
    flags.target.is_remote()
        && flags.plan.unwrap_or(crate::base::AccountPlan::Free) == crate::base::AccountPlan::Free
        && flags.profile.is_none()
        && has_profile(FREE_PROFILE)
}

/// What a run says when it took the `free` profile by itself.
pub fn free_profile_note() -> String {
    format!(
        "profile `{FREE_PROFILE}` taken by itself: the Free plan, no --profile, and this study \
         has a `{FREE_PROFILE}` profile sized for the Free plan (give --profile to run another)"
    )
}

/// The change `--debug-corrupt` asks for.
fn corruption(kind: DebugCorruption) -> Corruption {
    match kind {
        DebugCorruption::TextByte => Corruption::TextByte,
        DebugCorruption::Integer => Corruption::Integer,
        DebugCorruption::SwapRows => Corruption::SwapRows,
        DebugCorruption::SwapColumns => Corruption::SwapColumns,
    }
}
