//! `cargo xtask matrix`: the experiments workflow's job matrix, built from `experiments/` (one
//! job per experiment × target × location), with what each job costs on a Cloudflare account.
//!
//! Each job's cost comes from [`crate::studies::cost`]: sweeps, ladders (`limits` runs them
//! all) and workloads (the cache's KV operations included) alike. Every workload has a `free`
//! profile, and those profiles together fit the Free plan's daily quotas. With `--shards N`,
//! each workload job split into N shard jobs ([`shards`]).

pub mod shards;

use std::fmt::Write;
use std::path::Path;

use anyhow::{Result, bail};
use serde::Serialize;

use crate::base::numbers::thousands;
use crate::base::{AccountPlan, Location, TargetKind};
use crate::flags::{self, MatrixFormat};
use crate::paths::Paths;
use crate::records::StudyKind;
use crate::studies;
use crate::studies::cost::{
    Cost, FREE_KV_READS_PER_DAY, FREE_KV_WRITES_PER_DAY, FREE_REQUESTS_PER_DAY,
    FREE_ROWS_READ_PER_DAY, FREE_ROWS_WRITTEN_PER_DAY, PAID_KV_READS_PER_MONTH,
    PAID_KV_WRITES_PER_MONTH, PAID_REQUESTS_PER_MONTH, PAID_ROWS_READ_PER_MONTH,
    PAID_ROWS_WRITTEN_PER_MONTH,
};

/// One job of the workflow's matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Job {
    /// `<experiment>-<target>[-<location>]`: the job's and its artifact's name.
    pub name: String,
    pub experiment: String,
    pub target: TargetKind,
    /// The location hint of a remote job; empty for a local one.
    pub location: String,
    pub profile: String,
    /// The account's plan (remote jobs pass it to `--plan`).
    pub plan: String,
    #[serde(flatten)]
    pub cost: Cost,
}

/// The jobs `flags` asks for, from the experiment files in `dir`.
pub fn jobs(dir: &Path, flags: &flags::Matrix) -> Result<Vec<Job>> {
    let names = if flags.experiments.iter().any(|e| e.trim() == "all") {
        // Every sweep, every ladder at once as `limits` (which writes the parity table), and
        // every workload.
        let mut names = studies::names(dir, StudyKind::Sweep)?;
        if !studies::ladder::names(dir)?.is_empty() {
            names.push(studies::LIMITS.to_owned());
        }
        names.extend(studies::names(dir, StudyKind::Workload)?);
        names
    } else {
        let mut names: Vec<String> = Vec::new();
        for name in flags.experiments.iter().map(|e| e.trim()) {
            if !name.is_empty() && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        names
    };
    if names.is_empty() {
        bail!("no experiment selected: give --experiments NAME[,NAME...] or all");
    }
    let (local, remote) = targets(&flags.targets)?;
    let mut locations: Vec<Location> = Vec::new();
    for location in &flags.locations {
        if !locations.contains(location) {
            locations.push(*location);
        }
    }
    let mut jobs = Vec::new();
    // Whether any experiment has `--local-profile`: none is a typo, not a fallback.
    let mut local_profile_found = false;
    for name in names {
        let study = studies::load(dir, &name)?;
        let (profile, cost) = study.priced(flags.profile.as_deref())?;
        // `--local-profile`: local jobs run it where the experiment has it (no account's
        // quota to fit), the others what `--profile` says.
        let priced_local = flags
            .local_profile
            .as_deref()
            .and_then(|p| study.priced(Some(p)).ok());
        local_profile_found |= priced_local.is_some();
        let (local_profile, local_cost) = priced_local.unwrap_or_else(|| (profile.clone(), cost));
        let job = |target: TargetKind, location: Option<Location>| {
            let (profile, cost) = match target {
                TargetKind::Remote => (&profile, cost),
                _ => (&local_profile, local_cost),
            };
            Job {
                name: match location {
                    Some(l) => format!("{name}-{target}-{}", l.name()),
                    None => format!("{name}-{target}"),
                },
                experiment: name.clone(),
                target,
                location: location.map(|l| l.name().to_owned()).unwrap_or_default(),
                profile: profile.clone(),
                plan: flags.plan.name().to_owned(),
                cost,
            }
        };
        if local {
            jobs.push(job(TargetKind::Local, None));
        }
        if remote {
            for &location in &locations {
                jobs.push(job(TargetKind::Remote, Some(location)));
            }
        }
    }
    if let Some(wanted) = flags
        .local_profile
        .as_deref()
        .filter(|_| !local_profile_found)
    {
        bail!(
            "--local-profile {wanted}: no experiment selected has a profile of that name (their \
             files under {} say which they have)",
            dir.display()
        );
    }
    Ok(jobs)
}

/// (local, remote) from `local`, `remote` or `both`.
///
/// `both` must come alone: next to another value it can only be a caller that meant one target
/// and appended its own `--targets` (the experiments workflow once did, and every job landed in
/// both of its matrices).
fn targets(given: &[String]) -> Result<(bool, bool)> {
    let given: Vec<&str> = given.iter().map(|t| t.trim()).collect();
    if given.contains(&"both") && given.len() > 1 {
        bail!(
            "--targets {}: `both` already means local and remote; give it alone",
            given.join(",")
        );
    }
    let (mut local, mut remote) = (false, false);
    for target in given {
        match target {
            "local" => local = true,
            "remote" => remote = true,
            "both" => (local, remote) = (true, true),
            other => bail!("unknown target `{other}`; expected local, remote or both"),
        }
    }
    if !local && !remote {
        bail!("no target selected: give --targets local, remote or both");
    }
    Ok((local, remote))
}

/// `{"include":[...]}` on one line, as `strategy.matrix` takes it through `fromJSON`.
pub fn to_json(jobs: &[Job]) -> String {
    serde_json::json!({ "include": jobs }).to_string()
}

/// The jobs as a table, with the plan's quotas and what to look out for.
pub fn to_table(jobs: &[Job], plan: AccountPlan) -> String {
    let width = jobs.iter().map(|j| j.name.len()).max().unwrap_or(0).max(3);
    let mut out = format!(
        "{:width$}  {:>7}  {:>9}  {:>13}  {:>13}  {:>19}  {:>9}  {:>9}\n",
        "job",
        "probes",
        "requests",
        "rows written",
        "rows read",
        "queries/invocation",
        "KV reads",
        "KV writes"
    );
    for job in jobs {
        let c = &job.cost;
        writeln!(
            out,
            "{:width$}  {:>7}  {:>9}  {:>13}  {:>13}  {:>19}  {:>9}  {:>9}",
            job.name,
            thousands(c.probes),
            thousands(c.worker_requests),
            thousands(c.rows_written),
            thousands(c.rows_read),
            thousands(c.max_queries_per_invocation),
            thousands(c.kv_reads),
            thousands(c.kv_writes)
        )
        .unwrap();
    }
    let remote: Vec<&Job> = jobs
        .iter()
        .filter(|j| j.target == TargetKind::Remote)
        .collect();
    if !remote.is_empty() {
        let sum = |f: fn(&Cost) -> usize| remote.iter().map(|j| f(&j.cost)).sum::<usize>();
        writeln!(
            out,
            "\nremote jobs together: {} Worker requests, up to {} rows written and {} rows read, \
             {} KV reads and up to {} KV writes",
            thousands(sum(|c| c.worker_requests)),
            thousands(sum(|c| c.rows_written)),
            thousands(sum(|c| c.rows_read)),
            thousands(sum(|c| c.kv_reads)),
            thousands(sum(|c| c.kv_writes))
        )
        .unwrap();
        let total = Cost {
            worker_requests: sum(|c| c.worker_requests),
            rows_written: sum(|c| c.rows_written),
            rows_read: sum(|c| c.rows_read),
            kv_reads: sum(|c| c.kv_reads),
            kv_writes: sum(|c| c.kv_writes),
            probes_over_free_budget: sum(|c| c.probes_over_free_budget),
            probes_over_paid_budget: sum(|c| c.probes_over_paid_budget),
            ..Cost::default()
        };
        for warning in total.warnings(plan) {
            writeln!(out, "warning: {warning}").unwrap();
        }
    }
    match plan {
        AccountPlan::Free => writeln!(
            out,
            "Free plan: {} Worker requests, {} D1 rows read and {} D1 rows written a day; 50 D1 queries per invocation; {} KV reads and {} KV writes a day",
            thousands(FREE_REQUESTS_PER_DAY),
            thousands(FREE_ROWS_READ_PER_DAY),
            thousands(FREE_ROWS_WRITTEN_PER_DAY),
            thousands(FREE_KV_READS_PER_DAY),
            thousands(FREE_KV_WRITES_PER_DAY)
        ),
        AccountPlan::Paid => writeln!(
            out,
            "Paid plan: {} Worker requests, {} D1 rows read and {} D1 rows written included a month; 1,000 D1 queries per invocation; {} KV reads and {} KV writes included a month",
            thousands(PAID_REQUESTS_PER_MONTH),
            thousands(PAID_ROWS_READ_PER_MONTH),
            thousands(PAID_ROWS_WRITTEN_PER_MONTH),
            thousands(PAID_KV_READS_PER_MONTH),
            thousands(PAID_KV_WRITES_PER_MONTH)
        ),
    }
    .unwrap();
    out
}

impl flags::Matrix {
    pub fn run(self, paths: &Paths) -> Result<()> {
        if let Some(n) = self.shards {
            let jobs = shards::jobs(&paths.experiments(), &self, n)?;
            match self.format {
                MatrixFormat::Json => {
                    println!("{}", serde_json::json!({ "include": jobs }))
                }
                MatrixFormat::Table => {
                    let whole: Vec<Job> = jobs.into_iter().map(|j| j.job).collect();
                    print!("{}", to_table(&whole, self.plan));
                }
            }
            return Ok(());
        }
        let jobs = jobs(&paths.experiments(), &self)?;
        match self.format {
            MatrixFormat::Json => println!("{}", to_json(&jobs)),
            MatrixFormat::Table => print!("{}", to_table(&jobs, self.plan)),
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
