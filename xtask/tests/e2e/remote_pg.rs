//! End to end through the stand-ins: D1 on Cloudflare beside Postgres through a Hyperdrive
//! configuration the run creates (`--target remote --baseline remote-hyperdrive`). The stand-in
//! API keeps the configuration; the stand-in wrangler deploys the real Postgres Worker under
//! wrangler dev with its binding connected to the server the configuration names, a real
//! PostgreSQL cluster this test starts as the user's server. Every session's configuration is
//! created with its cache off and deleted, the server's password reaches no command line, log or
//! record, and a run without a server is refused before anything starts. A ladder on
//! `remote-hyperdrive` deploys the ladder Worker and climbs through it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Trial;
use crate::stand_in_api::{ApiStandIn, Behaviour};
use crate::support::{XTASK, files_under, processes, project_root, read_csv, run_dir, run_toml};

pub fn tests() -> Vec<Trial> {
    tests!(remote_pg:
        d1_beside_postgres_through_hyperdrive_on_cloudflare_runs_through_the_stand_ins,
        param_ceiling_on_remote_hyperdrive_deploys_the_ladder_worker_through_the_stand_ins,
        remote_hyperdrive_without_a_server_is_refused_before_anything_starts,
        a_failed_deploy_deletes_the_configuration_it_created,
        an_interrupt_during_deploy_deletes_the_configuration,
    )
}

/// The xtask on the stand-ins with fake credentials, the API at `api`.
fn xtask(args: &[&str], log: &Path, api: &str) -> Command {
    let mut command = Command::new(XTASK);
    command
        .args(args)
        .current_dir(project_root())
        .env(
            "D1BENCH_WRANGLER",
            project_root().join("xtask/tests/stand-in/wrangler"),
        )
        .env("D1BENCH_CLOUDFLARE_API", api)
        .env("STAND_IN_LOG", log)
        .env("CLOUDFLARE_API_TOKEN", crate::remote::FAKE_API_TOKEN)
        .env("CLOUDFLARE_ACCOUNT_ID", "stand-in-account")
        .env_remove("D1BENCH_HYPERDRIVE_URL")
        .stdin(Stdio::null());
    command
}

/// A run through the stand-ins with a real PostgreSQL cluster of its own (under
/// `target/<scratch>`) as the user's server, the cluster stopped after it: what the checks read.
struct ClusterRun {
    /// Holds the configurations' folder, the stand-ins' log and the run's output: bind it (as
    /// `_dir`, not `..`), or they are gone before they are read.
    _dir: tempfile::TempDir,
    api: ApiStandIn,
    configs: PathBuf,
    log: PathBuf,
    run_dir: PathBuf,
    server: String,
    stderr: String,
}

/// `cargo xtask ARGS --out <dir>` on the stand-ins against a fresh cluster, which must succeed.
fn run_on_a_cluster(scratch: &str, args: &[&str]) -> ClusterRun {
    let paths = xtask::paths::Paths::new(project_root().join("target").join(scratch));
    let mut cluster =
        xtask::targets::hyperdrive::cluster::Cluster::start(&paths).expect("a PostgreSQL cluster");
    let server = cluster.connection_string();
    let dir = tempfile::tempdir().unwrap();
    let configs = dir.path().join("hyperdrive");
    let api = ApiStandIn::start_with(Behaviour {
        hyperdrive_dir: Some(configs.clone()),
        ..Behaviour::default()
    });
    let log = dir.path().join("calls.log");
    let out = dir.path().join("out");
    let output = xtask(args, &log, &api.base)
        .arg("--out")
        .arg(&out)
        .env("STAND_IN_HYPERDRIVE_DIR", &configs)
        .env("D1BENCH_HYPERDRIVE_URL", &server)
        .output()
        .unwrap();
    let stopped = cluster.stop();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "{stderr}");
    stopped.unwrap();
    ClusterRun {
        run_dir: run_dir(&out),
        _dir: dir,
        api,
        configs,
        log,
        server,
        stderr,
    }
}

/// The processes still running whose command line names the run `name`.
fn left_running(name: &str) -> Vec<String> {
    processes()
        .into_iter()
        .filter(|p| !p.zombie && p.command().contains(name))
        .map(|p| p.command())
        .collect()
}

pub fn d1_beside_postgres_through_hyperdrive_on_cloudflare_runs_through_the_stand_ins() {
    // The user's server: a cluster of its own, apart from the hyperdrive target's (whose test
    // checks that none of those is left running).
    let ClusterRun {
        api,
        configs,
        log,
        run_dir,
        server,
        stderr,
        _dir,
    } = run_on_a_cluster(
        "e2e-remote-pg",
        &[
            "run",
            "column-sweep",
            "--target",
            "remote",
            "--plan",
            "paid",
            "--baseline",
            "remote-hyperdrive",
            "--profile",
            "smoke",
            "--tag",
            "pgtest",
        ],
    );
    let password = server
        .split_once("://")
        .and_then(|(_, rest)| rest.split_once('@'))
        .and_then(|(credentials, _)| credentials.split_once(':'))
        .map(|(_, password)| password.to_owned())
        .unwrap();

    let rows = read_csv(&run_dir.join("results.csv"));
    let count = |target: &str| rows.iter().filter(|r| r["target"] == target).count();
    assert!(count("remote") > 0, "{rows:?}");
    assert_eq!(
        count("remote"),
        count("remote-hyperdrive"),
        "the same probes on both"
    );
    for row in &rows {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["target_failed"], "false", "{row:?}");
    }
    let record = run_toml(&run_dir);
    assert_eq!(
        record["run"]["baseline"].as_str(),
        Some("remote-hyperdrive")
    );
    let baseline = &record["baseline_remote"];
    assert_eq!(baseline["teardown"].as_str(), Some("deleted"), "{record}");
    let said = baseline["hyperdrive"].as_str().unwrap_or_default();
    assert!(said.ends_with("query cache off"), "{record}");
    assert!(said.contains(":***@127.0.0.1:"), "{record}");
    assert!(
        record["versions"]["worker_pg_build"].as_str().is_some(),
        "{record}"
    );
    let summary = read_csv(&run_dir.join("summary.csv"));
    assert!(
        summary
            .iter()
            .any(|r| r["target"] == "remote" && r["measure"] == "ratio_to_remote_hyperdrive"),
        "D1 ÷ Postgres per point in summary.csv"
    );

    // One configuration a Postgres session, created with the cache off and deleted after it.
    let sessions = record["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["target"].as_str() == Some("remote-hyperdrive"))
        .count();
    let requests = api.requests();
    let of = |method: &str| {
        requests
            .iter()
            .filter(|r| r.starts_with(&format!("{method} ")) && r.contains("/hyperdrive/configs"))
            .count()
    };
    assert!(sessions >= 1);
    assert_eq!(of("POST"), sessions, "{requests:?}");
    assert_eq!(of("DELETE"), sessions, "{requests:?}");
    assert!(configurations_left(&configs).is_empty());

    // The password went in the API's request body only: on no wrangler command line, in no
    // log, transcript, record or report.
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(calls.contains("deploy --config"), "{calls}");
    assert!(!calls.contains(&password), "{calls}");
    assert!(
        !stderr.contains(&password),
        "the runner's output shows the password"
    );
    let name = record["remote"]["name"].as_str().unwrap().to_owned();
    let scratch = project_root().join("target/d1bench/remote").join(&name);
    for (file, text) in files_under(&run_dir)
        .into_iter()
        .chain(files_under(&scratch))
    {
        assert!(
            !text.contains(&password),
            "{} holds the password",
            file.display()
        );
    }
    let running = left_running(&name);
    assert!(running.is_empty(), "left running: {running:?}");
}

/// A ladder on Cloudflare's Hyperdrive deploys the ladder Worker (`worker-pg-ladder/`), not the
/// probe Worker, which has no `/rung`: param-ceiling's smoke climb finds floor(65,535 / C) at 1
/// and 100 columns through a configuration the run creates and deletes.
pub fn param_ceiling_on_remote_hyperdrive_deploys_the_ladder_worker_through_the_stand_ins() {
    // `_dir` holds the run's folder until the checks are done.
    let ClusterRun {
        configs,
        run_dir,
        _dir,
        ..
    } = run_on_a_cluster(
        "e2e-remote-pg-ladder",
        &[
            "run",
            "param-ceiling",
            "--target",
            "remote-hyperdrive",
            "--profile",
            "smoke",
            "--tag",
            "pgladder",
        ],
    );
    let record = run_toml(&run_dir);
    let ladders =
        xtask::worker_build::pg_sources_hash(&project_root(), xtask::base::PgWorker::Ladders)
            .unwrap();
    assert_eq!(
        record["versions"]["worker_pg_build"].as_str(),
        Some(ladders.as_str()),
        "{record}"
    );
    assert_eq!(
        record["remote"]["teardown"].as_str(),
        Some("deleted"),
        "{record}"
    );
    let findings = read_csv(&run_dir.join("findings.csv"));
    let found: Vec<(&str, &str)> = findings
        .iter()
        .map(|f| (f["columns"].as_str(), f["last_ok"].as_str()))
        .collect();
    assert_eq!(found, [("1", "65535"), ("100", "655")], "{findings:?}");
    assert!(configurations_left(&configs).is_empty());
    let name = record["remote"]["name"].as_str().unwrap().to_owned();
    let running = left_running(&name);
    assert!(running.is_empty(), "left running: {running:?}");
}

pub fn remote_hyperdrive_without_a_server_is_refused_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    for args in [
        &[
            "run",
            "column-sweep",
            "--target",
            "remote-hyperdrive",
            "--profile",
            "smoke",
        ][..],
        &[
            "run",
            "column-sweep",
            "--target",
            "remote",
            "--baseline",
            "remote-hyperdrive",
            "--profile",
            "smoke",
        ][..],
    ] {
        let output = xtask(args, &log, "http://127.0.0.1:9/client/v4")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("remote-hyperdrive needs D1BENCH_HYPERDRIVE_URL"),
            "{args:?}: {stderr}"
        );
    }
    let output = xtask(
        &[
            "run",
            "column-sweep",
            "--target",
            "remote-hyperdrive",
            "--profile",
            "smoke",
        ],
        &log,
        "http://127.0.0.1:9/client/v4",
    )
    .env("D1BENCH_HYPERDRIVE_URL", "postgresql://me@db.example/app")
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("has no password"), "{stderr}");
    assert!(
        !log.exists(),
        "wrangler was called: {:?}",
        std::fs::read_to_string(&log)
    );
}

/// A smoke run on `remote-hyperdrive` alone against a server that is never reached (the faults
/// come before it is), through a stand-in API keeping configurations in `dir/hyperdrive`: the
/// API, the configurations' directory, the stand-in's log, and the command (`fault` set on it).
fn faulted_session(dir: &Path, fault: (&str, &str)) -> (ApiStandIn, PathBuf, PathBuf, Command) {
    let configs = dir.join("hyperdrive");
    let api = ApiStandIn::start_with(Behaviour {
        hyperdrive_dir: Some(configs.clone()),
        ..Behaviour::default()
    });
    let log = dir.join("calls.log");
    let args = [
        "run",
        "column-sweep",
        "--target",
        "remote-hyperdrive",
        "--profile",
        "smoke",
        "--no-baseline",
        "--out",
    ];
    let mut command = xtask(&args, &log, &api.base);
    command
        .arg(dir.join("out"))
        .env("STAND_IN_HYPERDRIVE_DIR", &configs)
        .env(fault.0, fault.1)
        .env("D1BENCH_HYPERDRIVE_URL", PASSWORDED);
    (api, configs, log, command)
}

/// The server a faulted session names; its password must show nowhere.
const PASSWORDED: &str = "postgresql://me:s3cret-pw@127.0.0.1:9/app";

/// The configurations left in the stand-in API's directory.
fn configurations_left(configs: &Path) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(configs)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default()
}

pub fn a_failed_deploy_deletes_the_configuration_it_created() {
    let dir = tempfile::tempdir().unwrap();
    let (api, configs, log, mut command) = faulted_session(dir.path(), ("STAND_IN_FAIL", "deploy"));
    let output = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stand-in failure injected at deploy"),
        "{stderr}"
    );
    // Created, then deleted after the Worker (whose deletion finds none deployed).
    assert_eq!(hyperdrive_calls(&api), ["POST", "DELETE"]);
    assert!(configurations_left(&configs).is_empty());
    assert!(!stderr.contains("s3cret-pw"), "{stderr}");
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(!calls.contains("s3cret-pw"), "{calls}");
}

/// The methods of the stand-in API's Hyperdrive calls, in order.
fn hyperdrive_calls(api: &ApiStandIn) -> Vec<String> {
    api.requests()
        .iter()
        .filter(|r| r.contains("/hyperdrive/configs"))
        .map(|r| r.split_whitespace().next().unwrap().to_owned())
        .collect()
}

pub fn an_interrupt_during_deploy_deletes_the_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let (api, configs, log, mut command) = faulted_session(dir.path(), ("STAND_IN_HANG", "deploy"));
    let mut child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until the deploy is under way (the first run may install and build for minutes).
    let deadline = Instant::now() + Duration::from_secs(900);
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("deploy --config")) {
        assert!(Instant::now() < deadline, "the deploy never started");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(hyperdrive_calls(&api), ["POST"]);
    // SAFETY: kill(2) on our own child: what Ctrl-C delivers.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "an interrupted run exits with 130"
    );
    assert_eq!(hyperdrive_calls(&api), ["POST", "DELETE"]);
    assert!(configurations_left(&configs).is_empty());
    let calls = std::fs::read_to_string(&log).unwrap();
    assert!(
        calls
            .lines()
            .last()
            .unwrap()
            .starts_with("delete --name d1bench-run-"),
        "{calls}"
    );
    let record = run_toml(&run_dir(&dir.path().join("out")));
    assert_eq!(record["run"]["status"].as_str(), Some("interrupted"));
}
