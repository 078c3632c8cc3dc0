//! End to end, for real: climbs every ladder's smoke profile (`run limits`) on wrangler dev and
//! on bare SQLite through the xtask binary, and checks the limits each found and the parity
//! table they write.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::harness::Trial;

use crate::support::{Row, XTASK, num, project_root, read_csv, run_dir, run_toml};

/// Longest first (as measured), for `main.rs` to start the longest early.
pub fn tests() -> Vec<Trial> {
    tests!(ladders:
        ladders_find_the_local_limits_and_write_the_parity_table,
        sqlite_ladders_find_d1s_documented_limits,
        a_durable_objects_ladders_find_sqlites_limits_and_no_query_budget,
    )
}

/// `run limits --profile smoke` on `target`; the run directory and its findings.
fn run_limits(target: &str) -> (tempfile::TempDir, PathBuf, Vec<Row>) {
    let out = tempfile::tempdir().unwrap();
    let status = Command::new(XTASK)
        .args([
            "run",
            "limits",
            "--profile",
            "smoke",
            "--target",
            target,
            "--isolate-heap",
            "--out",
        ])
        .arg(out.path())
        .current_dir(project_root())
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the {target} limits run failed: {status}");
    let dir = run_dir(out.path());
    for row in read_csv(&dir.join("results.csv")) {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["rows_present"], row["rows_acknowledged"], "{row:?}");
        // The isolate's heap, asked of wrangler dev's inspector while every climb ran
        // (`--isolate-heap`; a rung refused at its prepare step never climbed); nothing to ask of
        // bare SQLite.
        let heap = &row["isolate_heap_peak_bytes"];
        let runs_the_worker = target == "local" || target == "do";
        if runs_the_worker && row["failed_step"] != "prepare" {
            let bytes: u64 = heap
                .parse()
                .unwrap_or_else(|_| panic!("no heap peak: {row:?}"));
            assert!(bytes > 100_000, "an isolate holds more than that: {row:?}");
        } else if !runs_the_worker {
            assert_eq!(heap, "", "{row:?}");
        }
    }
    let record = run_toml(&dir);
    assert_eq!(record["run"]["status"].as_str(), Some("complete"));
    let findings = read_csv(&dir.join("findings.csv"));
    (out, dir, findings)
}

/// The findings of `ladder` (one per climb).
fn of<'a>(findings: &'a [Row], ladder: &str) -> Vec<&'a Row> {
    let mine: Vec<&Row> = findings.iter().filter(|f| f["ladder"] == ladder).collect();
    assert!(!mine.is_empty(), "no {ladder} finding");
    mine
}

/// The limits SQLite itself enforces, found exactly where D1 documents them, on both targets.
fn assert_sqlite_limits(findings: &[Row], target: &str) {
    for f in of(findings, "param-ceiling") {
        let columns = num(f, "columns");
        assert_eq!(num(f, "last_ok"), 100 / columns, "{target} {f:?}");
        assert_eq!(num(f, "first_failed"), 100 / columns + 1, "{target} {f:?}");
        assert_eq!(f["refusal"], "too-many-variables", "{f:?}");
        assert!(f["error"].contains("too many SQL variables"), "{f:?}");
        assert_eq!(f["confirmed"], "true", "{f:?}");
    }
    for (ladder, last_ok, refusal) in [
        ("statement-length", 100_000, "statement-too-long"),
        ("columns", 100, "too-many-columns"),
        ("like-pattern", 50, "like-pattern-too-complex"),
    ] {
        for f in of(findings, ladder) {
            assert_eq!(num(f, "last_ok"), last_ok, "{target} {f:?}");
            assert_eq!(num(f, "first_failed"), last_ok + 1, "{target} {f:?}");
            assert_eq!(f["refusal"], refusal, "{target} {f:?}");
        }
    }
}

/// The same ladders through the Worker's SQLite-backed Durable Object: SQLite's limits where D1
/// documents them, with the object's own error texts (no `D1_ERROR` prefix), and no budget on
/// the calls one invocation makes.
pub fn a_durable_objects_ladders_find_sqlites_limits_and_no_query_budget() {
    let (_out, _dir, findings) = run_limits("do");
    assert_sqlite_limits(&findings, "do");
    for f in findings.iter().filter(|f| !f["error"].is_empty()) {
        assert!(!f["error"].contains("D1_ERROR"), "{f:?}");
    }
    for f in of(&findings, "query-budget") {
        assert_eq!(f["first_failed"], "", "{f:?}");
    }
}

pub fn ladders_find_the_local_limits_and_write_the_parity_table() {
    let (_out, dir, findings) = run_limits("local");
    assert_sqlite_limits(&findings, "local");
    // The limits of the Workers runtime are not enforced by wrangler dev: every rung ran, and
    // every row D1 acknowledged was there afterwards (checked above).
    for ladder in [
        "query-budget",
        "batch-accounting",
        "batch-ceiling",
        "query-duration",
    ] {
        for f in of(&findings, ladder) {
            assert_eq!(f["first_failed"], "", "{f:?}");
            assert_eq!(f["last_ok"], f["max_tried"], "{f:?}");
        }
    }
    // Local D1 takes a JSON payload past the documented 2,000,000 bytes (its wall is about
    // 8 MiB) and refuses 16 MiB as a string too big.
    for f in of(&findings, "json-payload") {
        assert_eq!(num(f, "last_ok"), 2_000_001, "{f:?}");
        assert_eq!(num(f, "first_failed"), 16_777_216, "{f:?}");
        assert_eq!(f["refusal"], "string-or-blob-too-big", "{f:?}");
    }
    let parity = read_csv(&dir.join("parity.csv"));
    assert_eq!(
        parity.len(),
        d1bench_core::ladder::LadderKind::ALL.len(),
        "one parity row per ladder"
    );
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        summary.contains("| bound parameters per statement | 100 |"),
        "{summary}"
    );
    assert!(
        summary.contains("## batch-ceiling: the isolate's memory")
            && summary.contains("| - | 5,000 |"),
        "{summary}"
    );
    let png = std::fs::read(dir.join("param-ceiling.png")).unwrap();
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"));
}

pub fn sqlite_ladders_find_d1s_documented_limits() {
    let (_out, dir, findings) = run_limits("sqlite");
    assert_sqlite_limits(&findings, "sqlite");
    let ladders: Vec<String> = read_csv(&dir.join("parity.csv"))
        .into_iter()
        .map(|r| r["ladder"].clone())
        .collect();
    assert!(!ladders.contains(&"query-budget".to_owned()), "{ladders:?}");
    let summary = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(!summary.contains("the isolate's memory"), "{summary}");
    for f in of(&findings, "function-args") {
        assert_eq!(num(f, "last_ok"), 32, "{f:?}");
    }
    // The documented string limit, applied to SQLite, refuses the payload at the bind.
    for f in of(&findings, "json-payload") {
        assert_eq!(num(f, "last_ok"), 2_000_000, "{f:?}");
        assert_eq!(num(f, "first_failed"), 2_000_001, "{f:?}");
        assert_eq!(f["refusal"], "string-or-blob-too-big", "{f:?}");
        assert_eq!(f["confirmed"], "true", "{f:?}");
    }
}
