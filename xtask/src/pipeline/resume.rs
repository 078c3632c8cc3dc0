//! `cargo xtask run --resume <run-dir>`: continues a run that did not end (interrupted, failed or
//! abandoned) in its own directory. The run's plan is made again from its run.toml (experiment,
//! profile, target, baseline, overrides); the probes results.csv holds (by target and probe id)
//! are skipped, with the warm-ups of points whose probes are all recorded; ladder climbs with a
//! finding in findings.csv are skipped, the others climbed again; everything new is appended to
//! the same files, and run.toml says when the run was resumed and what was skipped.
//!
//! Refused, before anything starts: a run that ended (complete or invalid) or still runs, and a
//! run whose experiment file (SHA-256) or code (git commit; uncommitted changes count as
//! different code) is not what it ran with, since the probes added would not be the plan's.

use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;
use xshell::Shell;

use super::{RunPlan, Tools};
use crate::base::{HeapSampling, Location, TargetKind};
use crate::flags;
use crate::paths::Paths;
use crate::records::run_history::Resumption;
use crate::records::run_record::{self, Commit, GitInfo};
use crate::records::{RunDir, RunRecord, RunStatus};
use crate::studies::kind::Skipped;
use crate::{procs, studies};

/// Resumes the run in `dir`; `given` may add only what --resume allows (`--keep`, `--tag`).
pub fn resume(given: &flags::Run, dir: &Path, sh: &Shell, paths: &Paths) -> Result<()> {
    let run_dir = RunDir::new(dir.to_owned());
    let toml = run_dir.run_toml();
    let mut record = RunRecord::read(&toml)
        .with_context(|| format!("cannot resume {}: no run record to resume", dir.display()))?;
    check_status(&record, &toml, procs::process_alive)?;
    let flags = flags_of(&record, given, &toml)?;
    let mut plan = super::plan(&flags, paths)
        .with_context(|| format!("cannot make the plan of {} again", toml.display()))?;
    check_files(&record, &plan, &toml)?;
    check_code(&record.git, &run_record::git(sh), &toml)?;
    let targets = plan.targets(flags.target);
    plan.work.resume(&run_dir, &plan.profile, &targets)?;
    let remote = super::remote_options(&flags)?.map(|o| {
        o.replicated_if(plan.work.reads_in_sessions())
            .with_subrequests(plan.work.worker_subrequests())
    });
    let tools = super::tools(&flags, plan.pg_worker(), sh, paths)?;

    let resumption = resumption(&record, &plan, flags.target);
    eprintln!(
        "resuming {}: {} {} already recorded are skipped{}; {} to go",
        dir.display(),
        resumption.skipped,
        resumption.unit,
        if resumption.warmups_skipped > 0 {
            format!(
                " (with {} warm-ups of their points)",
                resumption.warmups_skipped
            )
        } else {
            String::new()
        },
        resumption.remaining
    );
    record.resumed.push(resumption);
    record.run.status = RunStatus::Running;
    record.run.ended = None;
    record.run.error = None;
    record.run.pid = Some(std::process::id());
    record.write(&toml)?;
    super::measure(
        &flags,
        &plan,
        &run_dir,
        record,
        true,
        paths,
        &Tools {
            tools: tools.as_ref(),
            remote: remote.as_ref(),
        },
    )
}

/// Refuses a run that ended, or whose process still runs.
fn check_status(record: &RunRecord, toml: &Path, alive: impl Fn(u32) -> bool) -> Result<()> {
    let path = toml.display();
    match record.run.status {
        RunStatus::Interrupted | RunStatus::Failed | RunStatus::Abandoned => Ok(()),
        RunStatus::Complete => bail!("{path}: the run is complete: there is nothing to resume"),
        RunStatus::Invalid => bail!(
            "{path}: the run ended invalid (a record did not reconcile): resuming would add to \
             data that is not to be trusted; start a new run"
        ),
        RunStatus::Running => match record.run.pid {
            Some(pid) if alive(pid) => bail!(
                "{path}: the run is still running (process {pid}): resume it once that process \
                 has ended"
            ),
            // Its process is gone without a word: the run was abandoned.
            _ => Ok(()),
        },
    }
}

/// The flags the run ran with, from its record, with `--keep` and `--tag` as given now.
pub(super) fn flags_of(record: &RunRecord, given: &flags::Run, toml: &Path) -> Result<flags::Run> {
    let run = &record.run;
    let remote = record.remote.as_ref();
    let location = match remote.and_then(|r| r.location_hint.as_deref()) {
        Some(hint) => Some(
            Location::from_str(hint, false)
                .map_err(|e| anyhow::anyhow!("{}: [remote] location_hint: {e}", toml.display()))?,
        ),
        None => None,
    };
    let plan = match remote.map(|r| r.plan.as_str()) {
        Some(plan) => Some(
            crate::base::AccountPlan::from_str(plan, false)
                .map_err(|e| anyhow::anyhow!("{}: [remote] plan: {e}", toml.display()))?,
        ),
        None => None,
    };
    let overrides = &record.overrides;
    Ok(flags::Run {
        experiment: Some(run.experiment.clone()),
        target: run.target,
        // Ladders that ran different profiles (`full/smoke`) each ran their default.
        profile: (!run.profile.contains('/')).then(|| run.profile.clone()),
        out: None,
        no_baseline: studies::kind_of(run.kind).ran_without_baseline(run),
        baseline: run.baseline.unwrap_or(TargetKind::Sqlite),
        debug_corrupt: run.debug_corrupt,
        debug_slow: run.debug_slow_percent,
        isolate_heap: run.isolate_heap.then_some(if run.isolate_heap_alternate {
            HeapSampling::Alternate
        } else {
            HeapSampling::Every
        }),
        worker: run.worker.unwrap_or_default(),
        alternate_workers: run.alternate_workers,
        paired_workers: run.paired_workers,
        location,
        plan,
        keep: given.keep,
        tag: given.tag.clone(),
        titles: given.titles,
        repeats: overrides.repeats,
        warmup: overrides.warmup,
        seed: overrides.seed,
        order_seed: overrides.order_seed,
        sessions: overrides.sessions,
        only: overrides.only.clone(),
        shard: run.shard,
        shards: None,
        join: None,
        dry_run: false,
        resume: None,
    })
}

/// Refuses a run whose study files are not those it ran, byte for byte.
pub(super) fn check_files(record: &RunRecord, plan: &RunPlan, toml: &Path) -> Result<()> {
    for file in &plan.files {
        let Some(then) = record.studies.iter().find(|s| s.name == file.name) else {
            bail!(
                "{}: the run did not read {} ({}): its plan cannot be made again",
                toml.display(),
                file.file,
                file.name
            );
        };
        if then.sha256 != file.sha256 {
            bail!(
                "{}: {} changed since the run (SHA-256 {} in run.toml, {} now): the probes left \
                 would not be those of the run's plan; restore the file or start a new run",
                toml.display(),
                file.file,
                then.sha256,
                file.sha256
            );
        }
    }
    if let Some(gone) = record
        .studies
        .iter()
        .find(|s| !plan.files.iter().any(|f| f.name == s.name))
    {
        bail!(
            "{}: the run read {} ({}), which the plan made again does not: its plan cannot be \
             made again",
            toml.display(),
            gone.file,
            gone.name
        );
    }
    Ok(())
}

/// Refuses when the code is not the run's: another commit, or uncommitted changes then or now.
fn check_code(then: &GitInfo, now: &GitInfo, toml: &Path) -> Result<()> {
    let path = toml.display();
    if then.commit == Commit::Unknown || now.commit == Commit::Unknown {
        bail!(
            "{path}: cannot tell whether the code is the run's: git gives no commit (the run's: \
             {}, now: {})",
            then.commit,
            now.commit
        );
    }
    if then.dirty {
        bail!(
            "{path}: the run was made from a tree with uncommitted changes, whose code cannot be \
             told apart from other changes: start a new run"
        );
    }
    if then.commit != now.commit {
        bail!(
            "{path}: the run was made at commit {}, the tree is at {}: the probes left would be \
             measured by other code; check out {} to resume, or start a new run",
            then.commit,
            now.commit,
            then.commit
        );
    }
    if now.dirty {
        bail!(
            "{path}: the tree has uncommitted changes, so its code is not the run's (commit {}): \
             commit or stash them to resume",
            then.commit
        );
    }
    Ok(())
}

/// What run.toml says of this resumption: what was skipped and what is left, over every target.
fn resumption(record: &RunRecord, plan: &RunPlan, target: TargetKind) -> Resumption {
    let Skipped {
        unit,
        skipped,
        warmups_skipped,
        remaining,
    } = plan.work.resumption(&plan.targets(target));
    Resumption {
        at: crate::base::clock::utc_now().0,
        was: record.run.status,
        error: record.run.error.clone(),
        unit: unit.to_owned(),
        skipped,
        warmups_skipped,
        remaining,
    }
}

#[cfg(test)]
mod tests;
