//! `cargo xtask run --dry-run`: a run's plan, printed, and nothing else. The probes by line (a
//! strategy and series label) with their points, or the climbs and rungs by ladder; the wall
//! time estimated from the newest complete run of the same experiment, profile and target on
//! this machine, scaled by the time each point took in it (or by rows, or probes); and for remote
//! runs the Worker requests and the D1
//! rows written (index entries included) and read against the plan's quotas. Nothing is
//! installed, started or written, no abandoned run is reaped, and no credential is read.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use super::RunPlan;
use crate::base::numbers::thousands;
use crate::flags;
use crate::paths::Paths;
use crate::records::run_history::unix_secs;
use crate::records::run_record::{self, Machine};
use crate::records::{RunRecord, RunStatus};
use crate::studies::cost::{self, Cost};
use crate::targets::remote::lifecycle;

/// Prints what `flags` would run; every refusal of the input comes as for a run.
pub fn print(flags: &flags::Run, paths: &Paths) -> Result<()> {
    // `--shards N` is planned as each of its processes plans it: shard 1 of N.
    let as_shard = flags.shards.map(|of| flags::Run {
        shard: Some(crate::records::shard::Shard { index: 1, of }),
        ..flags.clone()
    });
    let plan = super::plan(as_shard.as_ref().unwrap_or(flags), paths)?;
    let account = if flags.target.is_remote() {
        // The flags a remote run checks, but not its credentials.
        if let Some(tag) = &flags.tag {
            lifecycle::check_tag(tag)?;
        }
        Some(flags.plan.unwrap_or(crate::base::AccountPlan::Free))
    } else {
        // Refuses remote-only flags; reads nothing for other targets.
        super::remote_options(flags)?;
        None
    };
    let out = flags
        .out
        .clone()
        .unwrap_or_else(|| paths.reports().join(flags.experiment()));
    let estimate = estimate(&out, flags, &plan, &run_record::machine(), paths);
    print!("{}", describe(flags, &plan, &estimate, account));
    Ok(())
}

/// The dry run's text.
fn describe(
    flags: &flags::Run,
    plan: &RunPlan,
    estimate: &str,
    account: Option<crate::base::AccountPlan>,
) -> String {
    let mut out = format!(
        "dry run of `{}`, profile `{}`, on {}: nothing is installed, started or written\n",
        flags.experiment(),
        plan.profile,
        flags.target
    );
    if flags.profile.is_none() && plan.profile == super::FREE_PROFILE && account.is_some() {
        writeln!(out, "{}", super::free_profile_note()).unwrap();
    }
    if !plan.overrides.is_empty() {
        writeln!(out, "overrides:{}", plan.overrides.command_line()).unwrap();
    }
    if let Some(of) = flags.shards {
        writeln!(
            out,
            "--shards {of}: {of} processes on this machine load one {} target together, each \
             offering the rate ÷ {of} (the shard lines at the end are one of them); this process \
             starts, seeds and checks it, and merges their runs itself; no baseline",
            flags.target
        )
        .unwrap();
    }
    plan.work.dry_run(&mut out, flags.target, plan.baseline);
    writeln!(out, "estimated wall time: {estimate}").unwrap();
    if let Some(account) = account {
        let (billed, durable) = plan.work.cost().billed_on(flags.target, plan.baseline);
        cloudflare_lines(&mut out, &billed, durable.as_ref(), account);
        if plan.work.reads_in_sessions() {
            writeln!(
                out,
                "  read replication: turned on (`auto`) for the run's database through the \
                 Cloudflare API, since reads run in D1 sessions"
            )
            .unwrap();
        }
        if let Some(n) = plan.work.worker_subrequests() {
            writeln!(
                out,
                "  the Worker's limits.subrequests: {} (set in its wrangler configuration)",
                thousands(n as usize)
            )
            .unwrap();
        }
    }
    out
}

/// What the run costs on Cloudflare against `plan`'s quotas, with the warnings a run would give.
/// `cost` is D1's part, `durable` what a Durable Object's storage bills.
fn cloudflare_lines(
    out: &mut String,
    cost: &Cost,
    durable: Option<&Cost>,
    plan: crate::base::AccountPlan,
) {
    // The quota of one resource on `plan`: a day's on Free, a month's included on Paid.
    let quota = |free_per_day: usize, paid_per_month: usize| match plan {
        crate::base::AccountPlan::Free => format!("Free: {} a day", thousands(free_per_day)),
        crate::base::AccountPlan::Paid => {
            format!("Paid: {} a month included", thousands(paid_per_month))
        }
    };
    writeln!(
        out,
        "on Cloudflare, plan {} (no credentials were read):",
        plan.name()
    )
    .unwrap();
    let mut rows = vec![
        (
            "Worker requests",
            cost.worker_requests,
            quota(cost::FREE_REQUESTS_PER_DAY, cost::PAID_REQUESTS_PER_MONTH),
        ),
        (
            "D1 rows written (each index entry a row)",
            cost.rows_written,
            quota(
                cost::FREE_ROWS_WRITTEN_PER_DAY,
                cost::PAID_ROWS_WRITTEN_PER_MONTH,
            ),
        ),
        (
            "D1 rows read",
            cost.rows_read,
            quota(cost::FREE_ROWS_READ_PER_DAY, cost::PAID_ROWS_READ_PER_MONTH),
        ),
    ];
    if let Some(durable) = durable {
        if cost.rows_written == 0 && cost.rows_read == 0 {
            rows.retain(|(what, _, _)| !what.starts_with("D1 rows"));
        }
        let billing = "its own storage, not D1's quota".to_owned();
        rows.push((
            "Durable Object rows written",
            durable.rows_written,
            billing.clone(),
        ));
        rows.push(("Durable Object rows read", durable.rows_read, billing));
    }
    if cost.kv_reads > 0 {
        rows.push((
            "Workers KV reads",
            cost.kv_reads,
            quota(cost::FREE_KV_READS_PER_DAY, cost::PAID_KV_READS_PER_MONTH),
        ));
        rows.push((
            "Workers KV writes (every miss one)",
            cost.kv_writes,
            quota(cost::FREE_KV_WRITES_PER_DAY, cost::PAID_KV_WRITES_PER_MONTH),
        ));
    }
    let through_do_only = durable.is_some() && cost.rows_written == 0 && cost.rows_read == 0;
    for (what, used, quota) in rows {
        writeln!(out, "  {what:41} {:>13}  ({quota})", thousands(used)).unwrap();
    }
    if through_do_only {
        writeln!(
            out,
            "  no D1 queries: the Durable Object's SQL calls are not D1's, and no query budget \
             per invocation applies to them"
        )
        .unwrap();
    } else {
        query_budget_line(out, cost, plan);
    }
    for warning in cost.warnings(plan) {
        writeln!(out, "warning: {warning}").unwrap();
    }
}

/// The most D1 queries one invocation of the run makes, against the plan's budget.
fn query_budget_line(out: &mut String, cost: &Cost, plan: crate::base::AccountPlan) {
    writeln!(
        out,
        "  most D1 queries in one invocation: {} ({} allows {} by D1's limits page, {} by the \
         Workers changelog of 2026-02-11)",
        thousands(cost.max_queries_per_invocation),
        plan.name(),
        thousands(cost::queries_per_invocation(plan)),
        thousands(cost::subrequests_per_invocation(plan))
    )
    .unwrap();
}

/// The newest complete run under `out` of the same experiment, profile, target and baseline on
/// this machine (same CPU model and count), never resumed nor corrupted on purpose; its wall
/// time in seconds.
fn earlier_run(
    out: &Path,
    flags: &flags::Run,
    plan: &RunPlan,
    machine: &Machine,
) -> Option<(PathBuf, RunRecord, u64)> {
    let mut found: Option<(PathBuf, RunRecord, u64)> = None;
    for entry in std::fs::read_dir(out).ok()?.flatten() {
        let dir = entry.path();
        let Ok(record) = RunRecord::read(&dir.join("run.toml")) else {
            continue;
        };
        let run = &record.run;
        let comparable = run.status == RunStatus::Complete
            && run.experiment == flags.experiment()
            && run.profile == plan.profile
            && run.target == flags.target
            && run.baseline == plan.baseline
            && run.debug_corrupt.is_none()
            && record.resumed.is_empty()
            && record.machine.cpu == machine.cpu
            && record.machine.cpus == machine.cpus;
        let wall = run
            .ended
            .as_deref()
            .and_then(unix_secs)
            .zip(unix_secs(&run.started))
            .and_then(|(ended, started)| ended.checked_sub(started));
        let (true, Some(wall)) = (comparable, wall) else {
            continue;
        };
        if found
            .as_ref()
            .is_none_or(|(_, newest, _)| newest.run.started < record.run.started)
        {
            found = Some((dir, record, wall));
        }
    }
    found
}

/// The estimated wall time, or why there is none: the earlier run's wall time scaled by each
/// point's time in its results.csv when its plan can be made again (same experiment file) and
/// holds every point of this one; else by rows (or probes, for a record without rows).
fn estimate(
    out: &Path,
    flags: &flags::Run,
    plan: &RunPlan,
    machine: &Machine,
    paths: &Paths,
) -> String {
    let Some((dir, record, wall)) = earlier_run(out, flags, plan, machine) else {
        return format!(
            "no earlier run to estimate from (none complete of `{}`, profile `{}`, on {} with \
             this baseline on this machine in {})",
            flags.experiment(),
            plan.profile,
            flags.target,
            out.display()
        );
    };
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if let Some(share) = share_of_points(&dir, &record, flags, plan, paths) {
        return format!(
            "about {}, from run {name} ({}; scaled by the time each point took in it: this plan \
             is {:.1}% of that run's)",
            duration(wall as f64 * share),
            duration(wall as f64),
            100.0 * share
        );
    }
    let now = plan.planned();
    let (basis, then_n, now_n) = match (record.planned, &record.reconciliation) {
        (Some(then), _) if then.rows > 0 && now.rows > 0 => ("rows", then.rows, now.rows),
        (Some(then), _) => ("probes", then.probes, now.probes),
        (None, Some(totals)) => ("probes", totals.records + totals.warmups, now.probes),
        (None, None) => ("probes", 0, now.probes),
    };
    if then_n == 0 {
        return format!("no earlier run to estimate from ({name} records no count to scale by)");
    }
    let secs = wall as f64 * now_n as f64 / then_n as f64;
    format!(
        "about {}, from run {name} ({} for {} {basis}, scaled to {} {basis})",
        duration(secs),
        duration(wall as f64),
        thousands(then_n),
        thousands(now_n)
    )
}

/// This plan's share of the earlier run's work, each probe weighed by the mean time its point
/// took there (inside the target's calls, or on the outside clock in older results); `None` when the earlier plan cannot be made again or lacks a
/// point of this one.
fn share_of_points(
    dir: &Path,
    record: &RunRecord,
    flags: &flags::Run,
    plan: &RunPlan,
    paths: &Paths,
) -> Option<f64> {
    let toml = dir.join("run.toml");
    let then_flags = super::resume::flags_of(record, flags, &toml).ok()?;
    let then_plan = super::plan(&then_flags, paths).ok()?;
    super::resume::check_files(record, &then_plan, &toml).ok()?;
    let results = dir.join("results.csv");
    let now = plan.work.weight(&results, &plan.targets(flags.target))?;
    let then = then_plan
        .work
        .weight(&results, &then_plan.targets(flags.target))?;
    (then > 0.0).then(|| now / then)
}

/// `42 s`, `3 min 5 s`, `2 h 4 min`.
fn duration(secs: f64) -> String {
    let s = secs.round() as u64;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s / 60 % 60),
    }
}

#[cfg(test)]
mod tests;
