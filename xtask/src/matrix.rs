//! `cargo xtask matrix`: the experiments workflow's job matrix, built from `experiments/` (one
//! job per experiment × target × location), with what each job costs on a Cloudflare account.
//!
//! The cost is computed from the probes themselves: one Worker request per probe, the rows its
//! INSERTs write, the rows its closing `COUNT(*)` reads, and the D1 queries its invocation makes
//! (a batch, the INSERT calls, a batch). Quotas are Cloudflare's published ones.

use std::fmt::Write;
use std::path::Path;

use anyhow::{Result, bail};
use d1bench_core::Strategy;
use serde::Serialize;

use crate::experiment::{self, Experiment, PlannedProbe};
use crate::flags::{self, Location, MatrixFormat, Plan};
use crate::paths::Paths;
use crate::remote::queries_per_invocation;
use crate::summary::thousands;

/// Workers Free: requests a day (Workers pricing).
pub const FREE_REQUESTS_PER_DAY: usize = 100_000;
/// D1 on Workers Free: rows read a day (D1 pricing).
pub const FREE_ROWS_READ_PER_DAY: usize = 5_000_000;
/// D1 on Workers Free: rows written a day (D1 pricing).
pub const FREE_ROWS_WRITTEN_PER_DAY: usize = 100_000;
/// Workers Paid: requests included a month, then $0.30 per million.
pub const PAID_REQUESTS_PER_MONTH: usize = 10_000_000;
/// D1 on Workers Paid: rows read included a month, then $0.001 per million.
pub const PAID_ROWS_READ_PER_MONTH: usize = 25_000_000_000;
/// D1 on Workers Paid: rows written included a month, then $1.00 per million.
pub const PAID_ROWS_WRITTEN_PER_MONTH: usize = 50_000_000;

/// What running a list of probes costs, at most.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Cost {
    pub probes: usize,
    /// HTTP requests to the Worker: two per probe (`/probe`, then `/verify`) and one health
    /// check.
    pub worker_requests: usize,
    /// Rows the INSERTs write when every probe succeeds (DDL adds a few per probe).
    pub rows_written: usize,
    /// Rows read checking each probe: its `COUNT(*)` and its content checksum each scan the
    /// rows it wrote.
    pub rows_read: usize,
    /// Most D1 queries one probe's invocation makes.
    pub max_queries_per_invocation: usize,
    /// Probes making more queries in one invocation than the Free plan allows (50).
    pub probes_over_free_budget: usize,
    /// Probes making more queries in one invocation than the Paid plan allows (1,000).
    pub probes_over_paid_budget: usize,
}

/// D1 queries the Worker makes for `probe` in its invocation: a batch creating the table, the
/// INSERT calls (one per row for per-row, one batch otherwise), a count. (The checksum and the
/// drop come in the next invocation, `/verify`: one batch.)
fn queries(probe: &PlannedProbe) -> usize {
    let inserts = match probe.request.strategy {
        Strategy::PerRow => probe.request.rows,
        Strategy::Bound | Strategy::Literal => 1,
    };
    inserts + 2
}

impl Cost {
    pub fn of(probes: &[PlannedProbe]) -> Cost {
        let over = |budget: usize| probes.iter().filter(|p| queries(p) > budget).count();
        Cost {
            probes: probes.len(),
            worker_requests: 2 * probes.len() + 1,
            rows_written: probes.iter().map(|p| p.request.rows).sum(),
            rows_read: 2 * probes.iter().map(|p| p.request.rows).sum::<usize>(),
            max_queries_per_invocation: probes.iter().map(queries).max().unwrap_or(0),
            probes_over_free_budget: over(queries_per_invocation(Plan::Free)),
            probes_over_paid_budget: over(queries_per_invocation(Plan::Paid)),
        }
    }

    /// What a person should know before running this on an account with `plan`.
    pub fn warnings(&self, plan: Plan) -> Vec<String> {
        let mut warnings = Vec::new();
        let over = match plan {
            Plan::Free => self.probes_over_free_budget,
            Plan::Paid => self.probes_over_paid_budget,
        };
        if over > 0 {
            warnings.push(format!(
                "{over} probe(s) make more than the {} plan's {} D1 queries per invocation: \
                 production refuses them (that refusal is what they measure)",
                plan.name(),
                queries_per_invocation(plan)
            ));
        }
        if plan == Plan::Free {
            for (what, used, quota) in [
                ("rows written", self.rows_written, FREE_ROWS_WRITTEN_PER_DAY),
                ("rows read", self.rows_read, FREE_ROWS_READ_PER_DAY),
                (
                    "Worker requests",
                    self.worker_requests,
                    FREE_REQUESTS_PER_DAY,
                ),
            ] {
                if used > quota {
                    warnings.push(format!(
                        "up to {} {what}: more than the Free plan's {} a day, so D1 or Workers \
                         start refusing part-way (try --profile smoke, or --plan paid on a Paid account)",
                        thousands(used),
                        thousands(quota)
                    ));
                }
            }
        }
        warnings
    }
}

/// One job of the workflow's matrix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Job {
    /// `<experiment>-<target>[-<location>]`: the job's and its artifact's name.
    pub name: String,
    pub experiment: String,
    pub target: String,
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
        experiment::names(dir)?
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
    for name in names {
        let experiment = Experiment::load(dir, &name)?;
        let (profile, spec) = experiment.profile(flags.profile.as_deref())?;
        let cost = Cost::of(&experiment.probes(spec));
        let job = |target: &str, location: Option<Location>| Job {
            name: match location {
                Some(l) => format!("{name}-{target}-{}", l.name()),
                None => format!("{name}-{target}"),
            },
            experiment: name.clone(),
            target: target.to_owned(),
            location: location.map(|l| l.name().to_owned()).unwrap_or_default(),
            profile: profile.to_owned(),
            plan: flags.plan.name().to_owned(),
            cost,
        };
        if local {
            jobs.push(job("local", None));
        }
        if remote {
            for &location in &locations {
                jobs.push(job("remote", Some(location)));
            }
        }
    }
    Ok(jobs)
}

/// (local, remote) from `local`, `remote` or `both`.
fn targets(given: &[String]) -> Result<(bool, bool)> {
    let (mut local, mut remote) = (false, false);
    for target in given.iter().map(|t| t.trim()) {
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
pub fn to_table(jobs: &[Job], plan: Plan) -> String {
    let width = jobs.iter().map(|j| j.name.len()).max().unwrap_or(0).max(3);
    let mut out = format!(
        "{:width$}  {:>7}  {:>9}  {:>13}  {:>13}  {:>19}\n",
        "job", "probes", "requests", "rows written", "rows read", "queries/invocation"
    );
    for job in jobs {
        let c = &job.cost;
        writeln!(
            out,
            "{:width$}  {:>7}  {:>9}  {:>13}  {:>13}  {:>19}",
            job.name,
            thousands(c.probes),
            thousands(c.worker_requests),
            thousands(c.rows_written),
            thousands(c.rows_read),
            thousands(c.max_queries_per_invocation)
        )
        .unwrap();
    }
    let remote: Vec<&Job> = jobs.iter().filter(|j| j.target == "remote").collect();
    if !remote.is_empty() {
        let sum = |f: fn(&Cost) -> usize| remote.iter().map(|j| f(&j.cost)).sum::<usize>();
        writeln!(
            out,
            "\nremote jobs together: {} Worker requests, up to {} rows written and {} rows read",
            thousands(sum(|c| c.worker_requests)),
            thousands(sum(|c| c.rows_written)),
            thousands(sum(|c| c.rows_read))
        )
        .unwrap();
        let total = Cost {
            worker_requests: sum(|c| c.worker_requests),
            rows_written: sum(|c| c.rows_written),
            rows_read: sum(|c| c.rows_read),
            probes_over_free_budget: sum(|c| c.probes_over_free_budget),
            probes_over_paid_budget: sum(|c| c.probes_over_paid_budget),
            ..Cost::default()
        };
        for warning in total.warnings(plan) {
            writeln!(out, "warning: {warning}").unwrap();
        }
    }
    match plan {
        Plan::Free => writeln!(
            out,
            "Free plan: {} Worker requests, {} D1 rows read and {} D1 rows written a day; 50 D1 queries per invocation",
            thousands(FREE_REQUESTS_PER_DAY),
            thousands(FREE_ROWS_READ_PER_DAY),
            thousands(FREE_ROWS_WRITTEN_PER_DAY)
        ),
        Plan::Paid => writeln!(
            out,
            "Paid plan: {} Worker requests, {} D1 rows read and {} D1 rows written included a month; 1,000 D1 queries per invocation",
            thousands(PAID_REQUESTS_PER_MONTH),
            thousands(PAID_ROWS_READ_PER_MONTH),
            thousands(PAID_ROWS_WRITTEN_PER_MONTH)
        ),
    }
    .unwrap();
    out
}

impl flags::Matrix {
    pub fn run(self, paths: &Paths) -> Result<()> {
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

    #[test]
    fn costs_follow_from_the_probes() {
        let dir = experiments();
        let jobs = jobs(dir.path(), &matrix(&["--experiments", "wide"])).unwrap();
        let cost = jobs[0].cost;
        // 2 columns × 2 repeats × 2 strategies of 1,000 rows, then 2 repeats of 60 per-row.
        assert_eq!(cost.probes, 10);
        assert_eq!(
            cost.worker_requests, 21,
            "probe and verify, and a health check"
        );
        assert_eq!(cost.rows_written, 8 * 1000 + 2 * 60);
        assert_eq!(
            cost.rows_read,
            2 * cost.rows_written,
            "the count and the checksum"
        );
        // per-row: 60 INSERT calls and two batches.
        assert_eq!(cost.max_queries_per_invocation, 62);
        assert_eq!(cost.probes_over_free_budget, 2);
        assert_eq!(cost.probes_over_paid_budget, 0);
        let warnings = cost.warnings(Plan::Free);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("2 probe(s) make more than the free plan's 50"));
        assert!(cost.warnings(Plan::Paid).is_empty());
        let big = Cost {
            rows_written: 1_200_000,
            ..cost
        };
        assert!(big.warnings(Plan::Free).iter().any(|w| {
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
        let e = err(&["--profile", "quick"]);
        assert!(e.contains("no profile `quick`"), "{e}");
    }

    #[test]
    fn the_table_states_the_plan_quotas() {
        let dir = experiments();
        let jobs = jobs(dir.path(), &matrix(&["--targets", "remote"])).unwrap();
        let table = to_table(&jobs, Plan::Free);
        assert!(table.contains("wide-remote-weur"), "{table}");
        assert!(table.contains("100,000 D1 rows written a day"), "{table}");
        assert!(table.contains("warning: 2 probe(s)"), "{table}");
    }

    /// The README's cost table is what this module computes for the column sweep.
    #[test]
    fn the_readme_cost_table_matches_the_experiment_file() {
        let root = crate::paths::project_root();
        let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
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
                "README.md's cost table lacks `{row}`: update it from `cargo xtask matrix --format table`"
            );
        }
    }

    #[test]
    fn the_shipped_experiments_make_a_matrix() {
        let dir = crate::paths::project_root().join("experiments");
        let jobs = jobs(&dir, &matrix(&["--targets", "both", "--profile", "smoke"])).unwrap();
        assert_eq!(jobs.len(), 2 * experiment::names(&dir).unwrap().len());
        assert!(jobs.iter().all(|j| j.cost.probes > 0));
    }
}
