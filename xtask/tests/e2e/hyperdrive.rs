//! End to end, for real: the column sweep's smoke profile on the hyperdrive target (the Postgres
//! Worker under wrangler dev, writing through its Hyperdrive binding to a PostgreSQL cluster the
//! run starts for each session), every probe reconciled by count and checksum against
//! Postgres's own plan, and no server or cluster directory left afterwards; and what the target
//! refuses before anything starts.

use std::process::Command;

use crate::harness::Trial;
use crate::support::{XTASK, num, processes, project_root, read_csv, run_dir, run_toml};

pub fn tests() -> Vec<Trial> {
    tests!(hyperdrive:
        the_smoke_sweep_on_postgres_through_hyperdrive_reconciles_and_leaves_no_server,
        the_hyperdrive_target_refuses_what_it_cannot_run,
    )
}

/// The PostgreSQL servers this checkout's runs started and that still run.
fn our_servers() -> Vec<String> {
    let root = project_root().join("target/d1bench/hyperdrive");
    processes()
        .into_iter()
        .filter(|p| !p.zombie && p.command().contains(&*root.to_string_lossy()))
        .map(|p| p.command())
        .collect()
}

pub fn the_smoke_sweep_on_postgres_through_hyperdrive_reconciles_and_leaves_no_server() {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(XTASK)
        .args([
            "run",
            "column-sweep",
            "--profile",
            "smoke",
            "--target",
            "hyperdrive",
            "--out",
        ])
        .arg(out.path())
        .current_dir(project_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the hyperdrive smoke run failed: {}\n{stderr}",
        output.status
    );
    assert!(stderr.contains("started PostgreSQL"), "{stderr}");
    assert!(stderr.contains("stopped PostgreSQL"), "{stderr}");
    let dir = run_dir(out.path());
    let rows = read_csv(&dir.join("results.csv"));
    let (postgres, baseline): (Vec<_>, Vec<_>) =
        rows.iter().partition(|r| r["target"] == "hyperdrive");
    assert!(!postgres.is_empty() && baseline.iter().all(|r| r["target"] == "sqlite"));
    for row in &rows {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["target_failed"], "false", "{row:?}");
    }
    for row in &postgres {
        assert_eq!(row["outcome"], "ok", "{row:?}");
        assert!(row["d1_ms"].is_empty(), "Postgres has no D1 clock: {row:?}");
        match row["strategy"].as_str() {
            "per-row" => assert_eq!(num(row, "d1_calls"), num(row, "statements"), "{row:?}"),
            // 500 rows of up to 100 columns fit one statement under each of Postgres's limits.
            _ => {
                assert_eq!(num(row, "d1_calls"), 1, "{row:?}");
                if row["strategy"] != "batched-rows" {
                    assert_eq!(num(row, "statements"), 1, "{row:?}");
                }
            }
        }
    }
    let record = run_toml(&dir);
    assert_eq!(record["run"]["target"].as_str(), Some("hyperdrive"));
    let versions = record["versions"].as_table().unwrap();
    assert_eq!(
        versions["worker_pg_build"].as_str().map(str::len),
        Some(64),
        "run.toml records the Postgres Worker's sources"
    );
    assert!(
        versions["worker"]
            .as_str()
            .unwrap_or("")
            .contains("PostgreSQL"),
        "{versions:?}"
    );
    assert_eq!(our_servers(), Vec::<String>::new(), "a server still runs");
    let left = std::fs::read_dir(project_root().join("target/d1bench/hyperdrive"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(left, 0, "a cluster's directory is left behind");
}

pub fn the_hyperdrive_target_refuses_what_it_cannot_run() {
    for (args, says) in [
        (
            &["read-path", "--target", "hyperdrive"][..],
            "the hyperdrive target runs sweeps only",
        ),
        (
            &["query-budget", "--target", "hyperdrive"][..],
            "the hyperdrive target runs sweeps only",
        ),
        (
            &["column-sweep", "--target", "hyperdrive", "--worker", "js"][..],
            "--worker js runs on the local target only",
        ),
        (
            &[
                "column-sweep",
                "--target",
                "remote",
                "--baseline",
                "hyperdrive",
            ][..],
            "--baseline hyperdrive does not go with --target remote",
        ),
    ] {
        let output = Command::new(XTASK)
            .arg("run")
            .args(args)
            .arg("--dry-run")
            .current_dir(project_root())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(says),
            "{args:?}: {stderr}"
        );
    }
    // A server of the user's with a malformed string is refused before anything starts, its
    // password never shown.
    let output = Command::new(XTASK)
        .args(["run", "column-sweep", "--target", "hyperdrive", "--dry-run"])
        .env(
            "D1BENCH_HYPERDRIVE_URL",
            "postgresql://me:s3cret@localhost/",
        )
        .current_dir(project_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "D1BENCH_HYPERDRIVE_URL is not a Postgres connection string: its database is empty"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("s3cret"), "{stderr}");
    // The dry run says which limit sets each strategy's statements on each engine.
    let output = Command::new(XTASK)
        .args([
            "run",
            "column-sweep",
            "--profile",
            "smoke",
            "--target",
            "hyperdrive",
            "--dry-run",
        ])
        .current_dir(project_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(
        stdout
            .contains("bound        100 columns, 1,000 B rows: 1 (100 bound parameters) | all 500"),
        "{stdout}"
    );
}
