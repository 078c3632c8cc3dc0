//! Workload experiments end to end, through the xtask binary: bad command lines refused before
//! anything starts; the read-path smoke profile on in-process SQLite, reconciled, its reports
//! redrawn by `plot` from disk alone, and on local D1 with reads in D1 sessions
//! (`withSession`) recorded with their mode; the workload-mix smoke profile on local D1
//! (wrangler dev) with its SQLite baseline, and on `--target remote` through the stand-in wrangler, each
//! reconciled with every acknowledged write present exactly once; and the write-contention
//! smoke profile on local D1 with its baseline: every retry policy at every row rate, single
//! writes and batches at the same row rate, the writes reconciled exactly once, and the summary
//! saying the refusal shares are Cloudflare's only, with its refusal-share charts; and the
//! cache smoke profile on local D1 with wrangler dev's local KV: both TTLs with hits and
//! misses, every update the next version of its row, versions reconciled, refused on sqlite.
//!
//! Each run is a test of its own, with its own wrangler dev on a port of its own.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::harness::Trial;

use crate::support::{Row, project_root, read_csv, run_dir, run_toml, text, xtask};

/// Longest first (as measured), for `main.rs` to start the longest early.
pub fn tests() -> Vec<Trial> {
    tests!(workloads:
        write_contention_on_local_d1_retries_nothing_and_writes_exactly_once,
        the_cache_on_local_d1_hits_misses_and_is_never_staler_than_its_ttl,
        the_cache_through_the_remote_lifecycle_creates_and_deletes_its_namespace,
        the_read_path_on_local_d1_reads_in_sessions,
        the_workload_mix_runs_through_the_remote_lifecycle,
        the_read_path_on_sqlite_answers_every_read_and_plot_redraws_it,
        the_workload_mix_runs_on_local_d1_with_its_baseline,
        bad_command_lines_are_refused_before_anything_starts,
    )
}

/// The stand-in wrangler with fake credentials, logging its calls to `log`: the remote target's
/// lifecycle, served locally.
fn stand_in_env(log: &Path) -> Vec<(&'static str, String)> {
    vec![
        (
            "D1BENCH_WRANGLER",
            project_root()
                .join("xtask/tests/stand-in/wrangler")
                .display()
                .to_string(),
        ),
        ("STAND_IN_LOG", log.display().to_string()),
        ("CLOUDFLARE_API_TOKEN", "fake-api-token-0b1c2d3e4f5a".into()),
        ("CLOUDFLARE_ACCOUNT_ID", "stand-in-account".into()),
    ]
}

/// Runs `cargo xtask run <args> --out <out>`, asserts it succeeded, and returns its directory.
fn run(args: &[&str], out: &Path, env: &[(&'static str, String)]) -> PathBuf {
    let mut command = xtask(&[&["run"], args].concat());
    command.arg("--out").arg(out);
    for (key, value) in env {
        command.env(key, value);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{}", text(&output));
    run_dir(out)
}

/// What every workload run must leave: complete, every check reconciled (the final one last),
/// the requests of every point measured, latencies from the due time at least the service time.
fn check_run(dir: &Path, targets: &[&str]) -> Vec<Row> {
    let record = run_toml(dir);
    assert_eq!(
        record["run"]["status"].as_str(),
        Some("complete"),
        "{record}"
    );
    assert_eq!(record["run"]["kind"].as_str(), Some("workload"), "{record}");
    let checks = read_csv(&dir.join("checks.csv"));
    for target in targets {
        let mine: Vec<_> = checks.iter().filter(|c| c["target"] == *target).collect();
        assert!(mine.len() >= 2, "{target}: {checks:?}");
        assert!(mine.iter().all(|c| c["reconciled"] == "true"), "{mine:?}");
        assert_eq!(mine.last().unwrap()["when"], "final");
        assert_eq!(
            mine.last().unwrap()["checksum_expected"],
            mine.last().unwrap()["checksum_present"]
        );
    }
    let rows = read_csv(&dir.join("results.csv"));
    for target in targets {
        let measured: Vec<_> = rows
            .iter()
            .filter(|r| r["target"] == *target && r["phase"] == "measure")
            .collect();
        assert!(!measured.is_empty(), "{target}");
        for r in &measured {
            // SQLite's own single writer refuses a write that finds the lock held: busy, and
            // only that.
            if *target == "sqlite" && r["outcome"] == "refused" {
                assert_eq!(r["refusal"], "busy", "{r:?}");
                continue;
            }
            assert_eq!(r["outcome"], "ok", "{r:?}");
            let latency: f64 = r["latency_ms"].parse().unwrap();
            let service: f64 = r["service_ms"].parse().unwrap();
            assert!(latency + 1e-6 >= service, "{r:?}");
        }
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("## Latency"), "{summary}");
    assert!(summary.contains("every record reconciled"), "{summary}");
    rows
}

/// Bad command lines, refused before anything starts.
pub fn bad_command_lines_are_refused_before_anything_starts() {
    for (args, says) in [
        (
            &["run", "read-path", "--repeats", "3"][..],
            "apply to sweeps, not to workloads",
        ),
        (
            &["run", "read-path", "--profile", "nope"][..],
            "has no profile `nope`",
        ),
        (
            &["run", "read-path", "--debug-corrupt", "text-byte"][..],
            "--debug-corrupt applies to sweeps",
        ),
    ] {
        let output = xtask(args).output().unwrap();
        assert!(!output.status.success(), "{args:?}");
        assert!(text(&output).contains(says), "{args:?}: {}", text(&output));
    }
}

/// The read path on SQLite: every read under both indexes and both preparations, answered.
pub fn the_read_path_on_sqlite_answers_every_read_and_plot_redraws_it() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = run(
        &["read-path", "--target", "sqlite", "--profile", "smoke"],
        &scratch.path().join("sqlite"),
        &[],
    );
    let rows = check_run(&dir, &["sqlite"]);
    for op in ["point-read", "range-scan", "aggregate"] {
        for index in ["key", "covering"] {
            for preparation in ["reuse", "per-call"] {
                assert!(
                    rows.iter().any(|r| r["op"] == op
                        && r["index"] == index
                        && r["preparation"] == preparation
                        && r["phase"] == "measure"),
                    "{op} {index} {preparation}"
                );
            }
        }
    }
    // In-process SQLite has no Sessions API: its run is the plain binding's series only.
    assert!(
        rows.iter().all(|r| r["session"] == "none"),
        "sqlite ran a session"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("covering ÷ key index"), "{summary}");
    assert!(summary.contains("reused ÷ per-call statement"), "{summary}");
    // Every report is derived from disk: `plot` writes the same summary.csv again.
    let before = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    std::fs::remove_file(dir.join("summary.csv")).unwrap();
    let plot = xtask(&["plot"]).arg(&dir).output().unwrap();
    assert!(plot.status.success(), "{}", text(&plot));
    assert_eq!(
        std::fs::read_to_string(dir.join("summary.csv")).unwrap(),
        before
    );
}

/// The read path on local D1: each read also in a `first-unconstrained` session of its own
/// (withSession on wrangler dev's D1), answered, recorded with its mode and its bookmark.
pub fn the_read_path_on_local_d1_reads_in_sessions() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = run(
        &["read-path", "--profile", "smoke", "--no-baseline"],
        &scratch.path().join("read-path-local"),
        &[],
    );
    let rows = check_run(&dir, &["local"]);
    for op in ["point-read", "range-scan", "aggregate"] {
        let in_session: Vec<_> = rows
            .iter()
            .filter(|r| {
                r["op"] == op && r["phase"] == "measure" && r["session"] == "first-unconstrained"
            })
            .collect();
        assert!(
            !in_session.is_empty(),
            "{op}: no first-unconstrained request"
        );
        for r in &in_session {
            assert_eq!(r["preparation"], "per-call", "{r:?}");
            assert_ne!(r["rows_returned"], "0", "{r:?}");
            assert!(!r["d1_ms"].is_empty(), "{r:?}");
            assert!(
                ["true", "false"].contains(&r["session_bookmark"].as_str()),
                "{r:?}"
            );
        }
        assert!(
            rows.iter()
                .filter(|r| r["op"] == op && r["session"] == "none")
                .all(|r| r["session_bookmark"].is_empty()),
            "{op}: a bookmark without a session"
        );
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("per-call, session first-unconstrained"),
        "{summary}"
    );
    let summary_csv = read_csv(&dir.join("summary.csv"));
    assert!(
        summary_csv
            .iter()
            .any(|r| r["session"] == "first-unconstrained")
    );
}

/// The mix on local D1, with its baseline: writes acknowledged and present, D1's meta kept.
pub fn the_workload_mix_runs_on_local_d1_with_its_baseline() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = run(
        &["workload-mix", "--profile", "smoke"],
        &scratch.path().join("local"),
        &[],
    );
    let rows = check_run(&dir, &["local", "sqlite"]);
    let local: Vec<_> = rows.iter().filter(|r| r["target"] == "local").collect();
    assert!(
        local
            .iter()
            .any(|r| r["op"] == "batch-write" && r["changes"] == "10")
    );
    assert!(
        local
            .iter()
            .filter(|r| r["op"] == "range-scan")
            .all(|r| r["rows_returned"] == "50" && !r["rows_read"].is_empty()),
        "{local:?}"
    );
    assert!(local.iter().all(|r| !r["d1_ms"].is_empty()));
    // The CPU time of workerd serving the measured load is read from its process group: some,
    // locally; none on in-process SQLite, where nothing runs apart from the generator.
    let points = read_csv(&dir.join("points.csv"));
    let workerd = |target: &str| -> f64 {
        points
            .iter()
            .filter(|p| p["target"] == target)
            .map(|p| p["cpu_workerd_s"].parse::<f64>().unwrap())
            .sum()
    };
    assert!(workerd("local") > 0.0, "{points:?}");
    assert_eq!(workerd("sqlite"), 0.0, "{points:?}");
}

/// The same through the remote target's lifecycle, with the stand-in wrangler.
pub fn the_workload_mix_runs_through_the_remote_lifecycle() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = run(
        &[
            "workload-mix",
            "--profile",
            "smoke",
            "--target",
            "remote",
            "--plan",
            "paid",
            "--no-baseline",
        ],
        &scratch.path().join("remote"),
        &stand_in_env(&scratch.path().join("calls.log")),
    );
    check_run(&dir, &["remote"]);
    let record = run_toml(&dir);
    assert_eq!(
        record["remote"]["teardown"].as_str(),
        Some("deleted"),
        "{record}"
    );
}

/// Write contention on local D1, with its baseline: every policy at every row rate, the
/// batches at a tenth of the single writes' request rate, every write exactly once.
pub fn write_contention_on_local_d1_retries_nothing_and_writes_exactly_once() {
    let scratch = tempfile::tempdir().unwrap();
    let dir = run(
        &["write-contention", "--profile", "smoke"],
        &scratch.path().join("contention"),
        &[],
    );
    let rows = check_run(&dir, &["local", "sqlite"]);
    for target in ["local", "sqlite"] {
        // Single writes and batches of 10 share each point at the same row rate, under the
        // three policies: 400 rows/s is 200 single writes and 20 batches a second, 220 requests
        // a second in all, of which 1.5 s are measured.
        for (point, requests) in [("1", 33), ("2", 330)] {
            let measured: Vec<_> = rows
                .iter()
                .filter(|r| r["target"] == target && r["point"] == point && r["phase"] == "measure")
                .collect();
            assert_eq!(measured.len(), requests, "{target} point {point}");
            if point == "2" {
                for retry in ["none", "fixed", "exponential"] {
                    for op in ["write", "batch-write"] {
                        assert!(
                            measured
                                .iter()
                                .any(|r| r["retry"] == retry && r["op"] == op),
                            "{target}: no {op} under {retry}"
                        );
                    }
                }
            }
        }
    }
    // Nothing refuses locally: one attempt each, and the first attempts met no refusal.
    assert!(
        rows.iter()
            .filter(|r| r["target"] == "local")
            .all(|r| r["attempts"] == "1" && r["first_refusal"].is_empty()),
        "a local write was retried"
    );
    // On SQLite's single writer only the policies that retry send a write again.
    assert!(
        rows.iter()
            .filter(|r| r["target"] == "sqlite" && r["retry"] == "none")
            .all(|r| r["attempts"] == "1"),
        "a write without a retry policy was retried"
    );
    let checks = read_csv(&dir.join("checks.csv"));
    for target in ["local", "sqlite"] {
        let last = checks.iter().rfind(|c| c["target"] == target).unwrap();
        // Every acknowledged row, warm-ups included, is one the final check counted.
        let acknowledged: usize = rows
            .iter()
            .filter(|r| r["target"] == target && r["outcome"] == "ok")
            .map(|r| r["op_rows"].parse::<usize>().unwrap())
            .sum();
        assert!(acknowledged > 0);
        assert_eq!(
            last["writes_acknowledged"].parse::<usize>().unwrap(),
            acknowledged,
            "{last:?}"
        );
        assert_eq!(last["writes_missing"], "0", "{last:?}");
        assert_eq!(last["writes_duplicated"], "0", "{last:?}");
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("## Write contention and retries"),
        "{summary}"
    );
    assert!(summary.contains("Refusal shares come from runs with `--target remote` only"));
    assert!(
        summary.contains("The retry policies were not exercised on `local`"),
        "{summary}"
    );
    assert!(summary.contains("## Load against capacity"), "{summary}");
    // The refusal share against rate, one line per retry policy, for each write operation.
    for op in ["write", "batch-write"] {
        for ext in ["png", "svg", "pdf"] {
            let chart = dir.join(format!("refusals-vs-rate-{op}.{ext}"));
            assert!(chart.is_file(), "{}", chart.display());
        }
    }
}

/// The KV cache on local D1 (wrangler dev's local KV): no bare-SQLite baseline (SQLite has
/// no KV), and refused on the sqlite target before anything starts.
pub fn the_cache_on_local_d1_hits_misses_and_is_never_staler_than_its_ttl() {
    let scratch = tempfile::tempdir().unwrap();
    let refused = xtask(&["run", "cache", "--target", "sqlite", "--profile", "smoke"])
        .arg("--out")
        .arg(scratch.path().join("cache-sqlite"))
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(
        text(&refused).contains("experiments/cache.toml:")
            && text(&refused).contains("which target `sqlite` does not have"),
        "{}",
        text(&refused)
    );
    assert!(!scratch.path().join("cache-sqlite").exists());
    let dir = run(
        &["cache", "--profile", "smoke"],
        &scratch.path().join("cache"),
        &[],
    );
    let rows = check_run(&dir, &["local"]);
    assert!(rows.iter().all(|r| r["target"] == "local"));
    for ttl in ["0.5", "2.0"] {
        let reads: Vec<_> = rows
            .iter()
            .filter(|r| r["op"] == "cached-read" && r["ttl_s"] == ttl && r["phase"] == "measure")
            .collect();
        // 3 s at 60/s, 80% of them cached reads.
        assert!((110..=175).contains(&reads.len()), "{ttl}: {}", reads.len());
        let count = |c: &str| reads.iter().filter(|r| r["cache"] == c).count();
        assert_eq!(count("hit") + count("miss") + count("expired"), reads.len());
        // 20 rows read about 40 times a second: each TTL sees hits and misses.
        assert!(
            count("hit") > 0 && count("miss") + count("expired") > 0,
            "{ttl}"
        );
        assert!(reads.iter().all(|r| !r["version"].is_empty()
            && !r["sent_ms"].is_empty()
            && r["worker_colo"].is_empty()));
        // Local D1 says nowhere where it served, and miniflare's made-up colo is not recorded.
        assert!(reads.iter().all(|r| r["served_by_region"].is_empty()
            && r["served_by_colo"].is_empty()
            && r["worker_colo"].is_empty()));
        // A hit does not reach D1; a miss does.
        assert!(
            reads
                .iter()
                .all(|r| (r["cache"] == "hit") == r["d1_ms"].is_empty())
        );
    }
    // Each update wrote the next version of its row, and was acknowledged.
    let mut last: HashMap<String, u64> = HashMap::new();
    let mut updates: Vec<_> = rows.iter().filter(|r| r["op"] == "update").collect();
    assert!(updates.len() > 20);
    updates.sort_by(|a, b| {
        let at = |r: &Row| r["sent_ms"].parse::<f64>().unwrap();
        at(a).total_cmp(&at(b))
    });
    let mut versions: Vec<(String, u64)> = updates
        .iter()
        .map(|r| (r["key"].clone(), r["version"].parse().unwrap()))
        .collect();
    versions.sort();
    for (key, version) in versions {
        let before = last.insert(key, version).unwrap_or(0);
        assert_eq!(version, before + 1);
    }
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(summary.contains("## The cache: hit ratio, latency and staleness per TTL"));
    // A stale read was served from an entry cached after the D1 read that preceded the newer
    // update's acknowledgement, and entries answer only while younger than the TTL: no read is
    // stale by more than the TTL (local KV is consistent at once; a few ms of clock slack).
    for line in summary
        .lines()
        .filter(|l| l.starts_with("| local | ") && l.contains("· max "))
    {
        let ttl_ms: f64 = line.split(" | ").nth(1).unwrap().parse::<f64>().unwrap() * 1000.0;
        if let Some(max) = line.split("· max ").nth(1) {
            let max: f64 = max.split(' ').next().unwrap().parse().unwrap();
            assert!(
                max <= ttl_ms + 50.0,
                "stale by {max} ms at a TTL of {ttl_ms} ms: {line}"
            );
        }
    }
    for ttl in ["| local | 0.5 | 60 |", "| local | 2 | 60 |"] {
        assert!(summary.contains(ttl), "{ttl}: {summary}");
    }
    // The staleness chart has a point per TTL with stale reads: it is drawn exactly when the
    // run recorded one (whether local KV served any stale read depends on how the updates and
    // reads fell in time, which load moves).
    let stale_reads = summary
        .lines()
        .filter(|l| l.starts_with("| local | ") && l.contains("· max "))
        .count();
    for (chart, drawn) in [
        ("hit-ratio-vs-ttl", true),
        ("staleness-vs-ttl", stale_reads > 0),
    ] {
        for ext in ["png", "svg", "pdf"] {
            assert_eq!(
                dir.join(format!("{chart}.{ext}")).is_file(),
                drawn,
                "{chart}.{ext} with {stale_reads} TTLs that had stale reads"
            );
        }
    }
}

/// The cache through the remote target's lifecycle: the run creates its KV namespace, binds
/// it in the generated config (the stand-in serves it with wrangler dev's local KV), and
/// deletes it at the teardown, between the Worker and the database.
pub fn the_cache_through_the_remote_lifecycle_creates_and_deletes_its_namespace() {
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("cache-calls.log");
    let dir = run(
        &[
            "cache",
            "--profile",
            "smoke",
            "--target",
            "remote",
            "--plan",
            "paid",
        ],
        &scratch.path().join("cache-remote"),
        &stand_in_env(&log),
    );
    let rows = check_run(&dir, &["remote"]);
    assert!(
        rows.iter()
            .any(|r| r["op"] == "cached-read" && r["cache"] == "hit")
    );
    let calls: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.split(" | ").next().unwrap().to_owned())
        .collect();
    let name = run_toml(&dir)["remote"]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    let at = |call: String| calls.iter().position(|c| *c == call);
    let created = at(format!("kv namespace create {name}")).expect("no namespace created");
    let deleted = at(format!("kv namespace delete {name} --skip-confirmation"))
        .expect("the namespace was not deleted");
    let deployed = calls.iter().position(|c| c.starts_with("deploy ")).unwrap();
    let worker_deleted = at(format!("delete --name {name} --force")).unwrap();
    let database_deleted = at(format!("d1 delete {name} --skip-confirmation")).unwrap();
    assert!(
        created < deployed && worker_deleted < deleted && deleted < database_deleted,
        "{calls:?}"
    );
}
