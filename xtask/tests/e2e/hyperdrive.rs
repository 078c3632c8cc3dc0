//! End to end, for real: the column sweep's smoke profile on the hyperdrive target (the Postgres
//! Worker under wrangler dev, writing through its Hyperdrive binding to a PostgreSQL cluster the
//! run starts for each session), every probe reconciled by count and checksum against
//! Postgres's own plan, and no server or cluster directory left afterwards; param-ceiling's
//! smoke climb on Postgres, through the ladder Worker's `/rung`, finding floor(65,535 / C); COPY
//! FROM STDIN, Postgres's own strategy, in the Postgres map's smoke profile; and what the target
//! refuses before anything starts.

use std::process::Command;

use crate::harness::Trial;
use crate::support::{XTASK, num, processes, project_root, read_csv, run_dir, run_toml};

pub fn tests() -> Vec<Trial> {
    tests!(hyperdrive:
        the_smoke_sweep_on_postgres_through_hyperdrive_reconciles_and_leaves_no_server,
        param_ceiling_on_postgres_finds_65535_parameters_and_leaves_no_server,
        copy_writes_every_row_in_one_stream_and_reconciles,
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

/// Neither a server nor a cluster directory of this run's is left. Its own, by the ports it
/// named: the other tests' servers may run beside it.
fn assert_nothing_left(stderr: &str) {
    let ports: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("started PostgreSQL "))
        .filter_map(|l| l.split_once("on 127.0.0.1:"))
        .filter_map(|(_, rest)| rest.split_once(' '))
        .map(|(port, _)| port)
        .collect();
    assert!(
        !ports.is_empty(),
        "the run names no server's port: {stderr}"
    );
    let root = project_root().join("target/d1bench/hyperdrive");
    for port in ports {
        let running: Vec<String> = our_servers()
            .into_iter()
            .filter(|s| s.contains(&format!("/hyperdrive/{port}/")))
            .collect();
        assert_eq!(
            running,
            Vec::<String>::new(),
            "the server on {port} still runs"
        );
        assert!(
            !root.join(port).exists(),
            "the cluster directory of {port} is left behind"
        );
    }
}

/// `cargo xtask run EXPERIMENT --profile smoke --target hyperdrive` (and `more`) into a new
/// folder, which must succeed: the folder and what the run said.
fn smoke_on_postgres(experiment: &str, more: &[&str]) -> (tempfile::TempDir, String) {
    let out = tempfile::tempdir().unwrap();
    let output = Command::new(XTASK)
        .args([
            "run",
            experiment,
            "--profile",
            "smoke",
            "--target",
            "hyperdrive",
        ])
        .args(more)
        .arg("--out")
        .arg(out.path())
        .current_dir(project_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the hyperdrive {experiment} run failed: {}\n{stderr}",
        output.status
    );
    (out, stderr)
}

pub fn the_smoke_sweep_on_postgres_through_hyperdrive_reconciles_and_leaves_no_server() {
    let (out, stderr) = smoke_on_postgres("column-sweep", &[]);
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
    let probes =
        xtask::worker_build::pg_sources_hash(&project_root(), xtask::base::PgWorker::Probes)
            .unwrap();
    assert_eq!(
        versions["worker_pg_build"].as_str(),
        Some(probes.as_str()),
        "run.toml records the probe Worker's sources"
    );
    assert!(
        versions["worker"]
            .as_str()
            .unwrap_or("")
            .contains("PostgreSQL"),
        "{versions:?}"
    );
    assert_nothing_left(&stderr);
}

/// The Postgres map's smoke profile, Postgres alone: COPY sends each probe's rows as one
/// `COPY ... FROM STDIN` in one call, Postgres reports every row copied, and the table holds them
/// (count and checksum against the host's), in the same shuffled rounds as the five others.
pub fn copy_writes_every_row_in_one_stream_and_reconciles() {
    let (out, stderr) = smoke_on_postgres("decision-map-postgres", &["--no-baseline"]);
    let dir = run_dir(out.path());
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("every probe reconciled"), "{summary}");
    let rows = read_csv(&dir.join("results.csv"));
    assert!(
        rows.iter().all(|r| r["target"] == "hyperdrive"),
        "no baseline"
    );
    let copies: Vec<_> = rows.iter().filter(|r| r["strategy"] == "copy").collect();
    // 2 columns × 2 row sizes, 3 repeats and a warm-up each.
    assert_eq!(copies.len(), 16, "{rows:?}");
    for row in &copies {
        assert_eq!(row["outcome"], "ok", "{row:?}");
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(num(row, "d1_calls"), 1, "{row:?}");
        assert_eq!(num(row, "statements"), 1, "{row:?}");
        assert_eq!(num(row, "rows_per_statement"), num(row, "rows"), "{row:?}");
    }
    let strategies: std::collections::BTreeSet<&str> =
        rows.iter().map(|r| r["strategy"].as_str()).collect();
    assert_eq!(strategies.len(), 6, "{strategies:?}");
    assert_nothing_left(&stderr);
}

/// param-ceiling's `postgres-smoke` profile (the one `--profile smoke` climbs on Postgres), for
/// real: 65,535 rows of one column and 655 of 100 bind, one more row is refused as too many
/// parameters, and every rung reconciles.
pub fn param_ceiling_on_postgres_finds_65535_parameters_and_leaves_no_server() {
    let (out, stderr) = smoke_on_postgres("param-ceiling", &[]);
    assert!(stderr.contains("stopped PostgreSQL"), "{stderr}");
    let dir = run_dir(out.path());
    // The ladder Worker climbed, not the probe Worker the committed Postgres sets measured.
    let ladders =
        xtask::worker_build::pg_sources_hash(&project_root(), xtask::base::PgWorker::Ladders)
            .unwrap();
    assert_eq!(
        run_toml(&dir)["versions"]["worker_pg_build"].as_str(),
        Some(ladders.as_str())
    );
    let rows = read_csv(&dir.join("results.csv"));
    assert_eq!(rows.len(), 8, "{rows:?}");
    for row in &rows {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["target_failed"], "false", "{row:?}");
    }
    let findings = read_csv(&dir.join("findings.csv"));
    let found: Vec<(&str, &str, &str, &str)> = findings
        .iter()
        .map(|f| {
            (
                f["columns"].as_str(),
                f["last_ok"].as_str(),
                f["first_failed"].as_str(),
                f["refusal"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("1", "65535", "65536", "too-many-variables"),
            ("100", "655", "656", "too-many-variables"),
        ]
    );
    let parity = read_csv(&dir.join("parity.csv"));
    assert!(
        parity[0]["found"].starts_with("65,535 parameters: the ceiling was floor(65,535/C)"),
        "{parity:?}"
    );
    let record = run_toml(&dir);
    assert_eq!(record["run"]["profile"].as_str(), Some("postgres-smoke"));
    assert_nothing_left(&stderr);
}

pub fn the_hyperdrive_target_refuses_what_it_cannot_run() {
    for (args, says) in [
        (
            &["read-path", "--target", "hyperdrive"][..],
            "the hyperdrive target runs sweeps and ladders only",
        ),
        (
            &["query-budget", "--target", "hyperdrive"][..],
            "query-budget climbs a limit of the Workers runtime and D1's service, which a \
             Postgres connection does not have",
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
        // COPY is Postgres's: on D1, or beside bare SQLite, it is refused where the file names it.
        (
            &["decision-map-postgres", "--target", "local"][..],
            "experiments/decision-map-postgres.toml:",
        ),
        (
            &["decision-map-postgres", "--target", "local"][..],
            "`copy` is Postgres's COPY FROM STDIN, which local does not have",
        ),
        (
            &["decision-map-postgres", "--target", "hyperdrive"][..],
            "which sqlite does not have: run it on `--target hyperdrive`",
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
    let output = Command::new(XTASK)
        .args(["run", "decision-map-postgres", "--profile", "smoke"])
        .args(["--target", "hyperdrive", "--no-baseline", "--dry-run"])
        .current_dir(project_root())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("copy          64 columns, 1,000 B rows: no COPY | all 100"),
        "{stdout}"
    );
}
