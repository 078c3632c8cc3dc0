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
mod tests {
    use super::*;
    use clap::Parser;

    /// Two experiments whose costs are easy to work out by hand.
    fn experiments() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("wide.toml"),
            r#"
description = "d"
x-axis = "columns"
[profile.full]
repeats = 2
[[profile.full.series]]
strategies = ["bound", "literal"]
columns = [1, 8]
row-bytes = [100]
rows = 1000
[[profile.full.series]]
strategies = ["per-row"]
columns = [4]
row-bytes = [100]
rows = 60
[profile.smoke]
repeats = 1
[[profile.smoke.series]]
strategies = ["bound"]
columns = [1]
row-bytes = [100]
rows = 10
"#,
        )
        .unwrap();
        std::fs::write(
            dir.path().join("narrow.toml"),
            r#"
description = "d"
x-axis = "row-bytes"
default-profile = "smoke"
[profile.smoke]
repeats = 1
[[profile.smoke.series]]
strategies = ["per-row"]
columns = [1]
row-bytes = [10, 20]
rows = 5
"#,
        )
        .unwrap();
        dir
    }

    fn matrix(args: &[&str]) -> flags::Matrix {
        let mut argv = vec!["xtask", "matrix"];
        argv.extend_from_slice(args);
        match flags::Xtask::try_parse_from(argv).unwrap().task {
            flags::Task::Matrix(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn local_jobs_run_the_local_profile_where_the_experiment_has_it() {
        let dir = experiments();
        let jobs = jobs(
            dir.path(),
            &matrix(&[
                "--targets",
                "both",
                "--profile",
                "smoke",
                "--local-profile",
                "full",
            ]),
        )
        .unwrap();
        let profiles: Vec<(&str, &str)> = jobs
            .iter()
            .map(|j| (j.name.as_str(), j.profile.as_str()))
            .collect();
        // narrow has no `full`: its local job runs smoke, as remote jobs always do here.
        assert_eq!(
            profiles,
            [
                ("narrow-local", "smoke"),
                ("narrow-remote-weur", "smoke"),
                ("wide-local", "full"),
                ("wide-remote-weur", "smoke")
            ]
        );
        // Priced as what each runs: the local full job writes more rows than its remote smoke.
        assert!(jobs[2].cost.rows_written > jobs[3].cost.rows_written);
        // A profile no experiment has is a typo, named.
        let err = super::jobs(dir.path(), &matrix(&["--local-profile", "weeky"]))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("--local-profile weeky: no experiment selected has"),
            "{err}"
        );
    }

    #[test]
    fn one_job_per_experiment_target_and_location() {
        let dir = experiments();
        let jobs = jobs(
            dir.path(),
            &matrix(&["--targets", "both", "--locations", "weur,enam,weur"]),
        )
        .unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "narrow-local",
                "narrow-remote-weur",
                "narrow-remote-enam",
                "wide-local",
                "wide-remote-weur",
                "wide-remote-enam"
            ]
        );
        assert_eq!(jobs[0].location, "");
        assert_eq!(jobs[2].location, "enam");
        // Each experiment's own default profile when none is given.
        assert_eq!(jobs[0].profile, "smoke");
        assert_eq!(jobs[3].profile, "full");
    }

    /// `both` is the local jobs and the remote jobs, each once: exactly what `local` and
    /// `remote` give apart, which is how the workflow builds its two matrices.
    #[test]
    fn both_is_local_and_remote_once_each() {
        let dir = experiments();
        let select = |targets: &str| {
            jobs(
                dir.path(),
                &matrix(&["--targets", targets, "--locations", "weur,enam"]),
            )
            .unwrap()
        };
        let (both, local, remote) = (select("both"), select("local"), select("remote"));
        assert!(
            local.iter().all(|j| j.target == TargetKind::Local),
            "{local:?}"
        );
        assert!(
            remote.iter().all(|j| j.target == TargetKind::Remote),
            "{remote:?}"
        );
        assert_eq!(local.len(), 2, "one local job per experiment");
        assert_eq!(
            remote.len(),
            4,
            "one remote job per experiment and location"
        );
        let mut names: Vec<&str> = both.iter().map(|j| j.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), both.len(), "a job twice in {names:?}");
        let mut apart: Vec<&Job> = local.iter().chain(&remote).collect();
        apart.sort_by(|a, b| a.name.cmp(&b.name));
        let mut together: Vec<&Job> = both.iter().collect();
        together.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(together, apart);
        // `local,remote` is the same selection spelled out.
        assert_eq!(select("local,remote"), both);
    }

    #[test]
    fn costs_follow_from_the_probes() {
        let dir = experiments();
        let jobs = jobs(dir.path(), &matrix(&["--experiments", "wide"])).unwrap();
        let cost = jobs[0].cost;
        // 2 columns × 2 repeats × 2 strategies of 1,000 rows, then 2 repeats of 60 per-row.
        assert_eq!(cost.probes, 10);
        assert_eq!(
            cost.worker_requests, 31,
            "setup, probe and verify, each its own invocation, and a health check"
        );
        assert_eq!(cost.rows_written, 8 * 1000 + 2 * 60);
        // 100-byte rows have codes of one step of the checksum's weights: the count reads each
        // row once, the checksum 4 + 1 times and 2 rows of its own per probe.
        assert_eq!(
            cost.rows_read,
            6 * cost.rows_written + 2 * cost.probes,
            "the count and the checksum"
        );
        // per-row: 60 INSERT calls; creating and counting have invocations of their own.
        assert_eq!(cost.max_queries_per_invocation, 60);
        assert_eq!(cost.probes_over_free_budget, 2);
        assert_eq!(cost.probes_over_paid_budget, 0);
        let warnings = cost.warnings(AccountPlan::Free);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("2 probe(s) make more than the free plan's 50"));
        assert!(cost.warnings(AccountPlan::Paid).is_empty());
        let big = Cost {
            rows_written: 1_200_000,
            ..cost
        };
        assert!(big.warnings(AccountPlan::Free).iter().any(|w| {
            w.starts_with("up to 1,200,000 rows written: more than the Free plan's 100,000 a day")
        }));
    }

    #[test]
    fn json_is_one_line_with_the_fields_the_workflow_reads() {
        let dir = experiments();
        let jobs = jobs(
            dir.path(),
            &matrix(&[
                "--experiments",
                "narrow",
                "--targets",
                "remote",
                "--profile",
                "smoke",
            ]),
        )
        .unwrap();
        let json = to_json(&jobs);
        assert!(!json.contains('\n'));
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let job = &value["include"][0];
        for (key, expected) in [
            ("name", "narrow-remote-weur"),
            ("experiment", "narrow"),
            ("target", "remote"),
            ("location", "weur"),
            ("profile", "smoke"),
            ("plan", "free"),
        ] {
            assert_eq!(job[key], expected, "{key} in {json}");
        }
        assert_eq!(job["rows_written"], 10);
    }

    #[test]
    fn bad_selections_are_named() {
        let dir = experiments();
        let err = |args: &[&str]| format!("{:#}", jobs(dir.path(), &matrix(args)).unwrap_err());
        let e = err(&["--experiments", "wide,tall"]);
        assert!(
            e.contains("no experiment named `tall`") && e.contains("narrow, wide"),
            "{e}"
        );
        let e = err(&["--targets", "cloud"]);
        assert!(
            e.contains("unknown target `cloud`; expected local, remote or both"),
            "{e}"
        );
        // What the workflow used to pass: its own `--targets` after the input's.
        for args in [
            &["--targets", "both", "--targets", "local"][..],
            &["--targets", "remote,both"],
        ] {
            let e = err(args);
            assert!(
                e.contains("`both` already means local and remote; give it alone"),
                "{e}"
            );
        }
        let e = err(&["--profile", "quick"]);
        assert!(e.contains("no profile `quick`"), "{e}");
    }

    #[test]
    fn the_table_states_the_plan_quotas() {
        let dir = experiments();
        let jobs = jobs(dir.path(), &matrix(&["--targets", "remote"])).unwrap();
        let table = to_table(&jobs, AccountPlan::Free);
        assert!(table.contains("wide-remote-weur"), "{table}");
        assert!(table.contains("100,000 D1 rows written a day"), "{table}");
        assert!(table.contains("warning: 2 probe(s)"), "{table}");
    }

    /// docs/cloudflare.md's cost table is what this module computes for the column sweep.
    #[test]
    fn the_readme_cost_table_matches_the_experiment_file() {
        let root = crate::paths::project_root();
        let readme = std::fs::read_to_string(root.join("docs/cloudflare.md")).unwrap();
        for profile in ["smoke", "full"] {
            let jobs = jobs(
                &root.join("experiments"),
                &matrix(&["--experiments", "column-sweep", "--profile", profile]),
            )
            .unwrap();
            let c = jobs[0].cost;
            let row = format!(
                "| `{profile}` | {} | {} | {} | {} | {} |",
                thousands(c.probes),
                thousands(c.worker_requests),
                thousands(c.rows_written),
                thousands(c.rows_read),
                thousands(c.max_queries_per_invocation)
            );
            assert!(
                readme.contains(&row),
                "docs/cloudflare.md's cost table lacks `{row}`: update it from `cargo xtask matrix --format table`"
            );
        }
    }

    /// The cache's KV operations are priced, and more than Free's daily writes is a warning.
    #[test]
    fn the_cache_counts_its_kv_operations_against_the_plan() {
        let dir = crate::paths::project_root().join("experiments");
        let cost = |profile: &str| {
            jobs(
                &dir,
                &matrix(&[
                    "--experiments",
                    "cache",
                    "--targets",
                    "remote",
                    "--profile",
                    profile,
                ]),
            )
            .unwrap()[0]
                .cost
        };
        let (smoke, full) = (cost("smoke"), cost("full"));
        assert!(smoke.kv_reads > 0 && smoke.kv_reads < full.kv_reads);
        assert_eq!(full.kv_writes, full.kv_reads);
        let warnings = full.warnings(AccountPlan::Free);
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("Workers KV writes: more than the Free plan's 1,000 a day")),
            "{warnings:?}"
        );
        assert!(full.warnings(AccountPlan::Paid).is_empty());
        // Nothing else touches KV.
        let sweep = jobs(&dir, &matrix(&["--experiments", "column-sweep"])).unwrap();
        assert_eq!((sweep[0].cost.kv_reads, sweep[0].cost.kv_writes), (0, 0));
    }

    #[test]
    fn the_shipped_experiments_make_a_matrix() {
        let dir = crate::paths::project_root().join("experiments");
        let jobs = jobs(&dir, &matrix(&["--targets", "both", "--profile", "smoke"])).unwrap();
        let workloads = studies::names(&dir, StudyKind::Workload).unwrap();
        assert_eq!(
            jobs.len(),
            2 * (studies::names(&dir, StudyKind::Sweep).unwrap().len() + 1 + workloads.len())
        );
        assert!(jobs.iter().all(|j| j.cost.probes > 0));
        // `all` is every workload too, each priced, the cache's KV operations included.
        for name in ["read-path", "write-contention", "workload-mix", "cache"] {
            assert!(workloads.iter().any(|w| w == name), "{workloads:?}");
            let job = jobs
                .iter()
                .find(|j| j.experiment == name && j.target == TargetKind::Remote)
                .unwrap_or_else(|| panic!("no remote {name} job"));
            assert!(
                job.cost.worker_requests > 0 && job.cost.rows_written > 0,
                "{job:?}"
            );
            assert_eq!(job.cost.kv_reads > 0, name == "cache", "{job:?}");
        }
    }

    /// Every workload's `free` profile, all of them run on one day, fits the Free plan's daily
    /// quotas (Worker requests, D1 rows read and written, KV reads and writes); each is larger
    /// than its smoke profile, and the full profiles together do not fit.
    #[test]
    fn the_workloads_free_profiles_together_fit_the_free_plans_day() {
        let dir = crate::paths::project_root().join("experiments");
        let workloads = studies::names(&dir, StudyKind::Workload).unwrap().join(",");
        let priced = |profile: &str| {
            jobs(
                &dir,
                &matrix(&[
                    "--experiments",
                    &workloads,
                    "--targets",
                    "remote",
                    "--profile",
                    profile,
                ]),
            )
            .unwrap()
        };
        let (free, smoke) = (priced("free"), priced("smoke"));
        let sum = |jobs: &[Job], f: fn(&Cost) -> usize| jobs.iter().map(|j| f(&j.cost)).sum();
        let total = |jobs: &[Job]| Cost {
            worker_requests: sum(jobs, |c| c.worker_requests),
            rows_written: sum(jobs, |c| c.rows_written),
            rows_read: sum(jobs, |c| c.rows_read),
            kv_reads: sum(jobs, |c| c.kv_reads),
            kv_writes: sum(jobs, |c| c.kv_writes),
            ..Cost::default()
        };
        let together = total(&free);
        assert!(
            together.warnings(AccountPlan::Free).is_empty(),
            "{together:?}: {:?}",
            together.warnings(AccountPlan::Free)
        );
        assert!(together.worker_requests <= FREE_REQUESTS_PER_DAY);
        assert!(together.rows_written <= FREE_ROWS_WRITTEN_PER_DAY);
        assert!(together.rows_read <= FREE_ROWS_READ_PER_DAY);
        assert!(together.kv_writes <= FREE_KV_WRITES_PER_DAY && together.kv_writes > 0);
        for (f, s) in free.iter().zip(&smoke) {
            assert!(
                f.cost.probes > s.cost.probes,
                "{} free vs smoke",
                f.experiment
            );
        }
        let full = total(&priced("full"));
        assert!(!full.warnings(AccountPlan::Free).is_empty(), "{full:?}");
        // The weekly schedule's smoke profiles fit too.
        assert!(total(&smoke).warnings(AccountPlan::Free).is_empty());
    }
}
