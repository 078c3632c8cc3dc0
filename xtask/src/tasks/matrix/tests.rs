//! The tests of `matrix`.

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
