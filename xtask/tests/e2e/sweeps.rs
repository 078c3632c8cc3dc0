//! End to end, for real: builds the Worker, starts wrangler dev (workerd + local D1), runs the
//! column sweep's smoke profile (with its bare-SQLite baseline) through the xtask binary and
//! checks what it left on disk; runs the row-size sweep's smoke profile and checks that literal
//! SQL hits its wall; runs with every probe's table corrupted on purpose three ways (a byte, a
//! value swapped between rows, two values swapped within a row) and checks that each run is
//! caught and marked invalid; then interrupts a run mid-way and checks that wrangler
//! stopped and the measured rows stayed. The ladders' runs are in `ladders.rs`.
//!
//! Each run is a test of its own: each starts its own wrangler dev on a port of its own, and the
//! interrupt check looks for survivors among the process groups of its own run only.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::harness::Trial;

use crate::support::{
    XTASK, live_members, measured, ms, num, processes, project_root, read_csv, run_dir, run_toml,
};

/// Longest first (as measured), for `main.rs` to start the longest early.
pub fn tests() -> Vec<Trial> {
    tests!(sweeps:
        hostile_text_reaches_local_d1_intact_through_every_escaping_strategy,
        row_size_smoke_reaches_literals_wall,
        smoke_run_reconciles_and_draws,
        js_worker_smoke_run_reconciles,
        alternate_workers_smoke_run_reports_the_instrument,
        the_minimal_js_worker_alternates_with_the_rust_worker_and_reconciles,
        decision_map_smoke_reconciles_and_answers_every_cell,
        a_table_corrupted_by_one_byte_is_caught_and_the_run_is_invalid,
        a_table_with_values_swapped_between_rows_is_caught_and_the_run_is_invalid,
        a_table_with_values_swapped_within_a_row_is_caught_and_the_run_is_invalid,
        interrupt_stops_wrangler_and_keeps_results,
    )
}

/// Process-group ids of the children `pid` has right now.
fn child_groups(pid: u32) -> Vec<i32> {
    processes()
        .into_iter()
        .filter(|p| p.ppid == pid as i32)
        .map(|p| p.pgid)
        .collect()
}

/// Runs `cargo xtask run <args> --out <out>`; its exit status.
fn xtask_run(args: &[&str], out: &Path) -> std::process::ExitStatus {
    Command::new(XTASK)
        .arg("run")
        .args(args)
        .arg("--out")
        .arg(out)
        .current_dir(project_root())
        .status()
        .unwrap()
}

/// Every PNG in `dir` is a real PNG with its SVG next to it; the PNGs' file names.
fn charts_are_drawn(dir: &Path) -> Vec<String> {
    let pngs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    assert!(!pngs.is_empty(), "no PNG chart in {}", dir.display());
    for png in &pngs {
        let bytes = std::fs::read(png).unwrap();
        assert!(
            bytes.len() > 1_000 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"),
            "{} is not a real PNG",
            png.display()
        );
        let svg = std::fs::read_to_string(png.with_extension("svg")).unwrap();
        assert!(svg.contains("<svg"), "{} has no SVG", png.display());
        let pdf = std::fs::read(png.with_extension("pdf")).unwrap();
        assert!(pdf.starts_with(b"%PDF-"), "{} has no PDF", png.display());
    }
    pngs.iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect()
}

pub fn a_table_corrupted_by_one_byte_is_caught_and_the_run_is_invalid() {
    a_corrupted_table_is_caught_and_the_run_is_invalid("text-byte");
}

pub fn a_table_with_values_swapped_between_rows_is_caught_and_the_run_is_invalid() {
    a_corrupted_table_is_caught_and_the_run_is_invalid("swap-rows");
}

pub fn a_table_with_values_swapped_within_a_row_is_caught_and_the_run_is_invalid() {
    a_corrupted_table_is_caught_and_the_run_is_invalid("swap-columns");
}

/// Hostile text (quotes, backslashes, line breaks, NUL, multi-byte) through every strategy that
/// escapes it its own way, on local D1: every row back, byte for byte by the checksum.
pub fn hostile_text_reaches_local_d1_intact_through_every_escaping_strategy() {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(&["escape-sweep", "--profile", "smoke"], out.path());
    assert!(
        status.success(),
        "the escape sweep's smoke run failed: {status}"
    );
    let all = measured(read_csv(&run_dir(out.path()).join("results.csv")));
    for strategy in ["bound", "literal", "json", "exec"] {
        for target in ["local", "sqlite"] {
            let mine: Vec<_> = all
                .iter()
                .filter(|r| r["strategy"] == strategy && r["target"] == target)
                .collect();
            assert_eq!(mine.len(), 7, "{strategy} on {target}: one probe per point");
            for row in mine {
                assert_eq!(row["outcome"], "ok", "{row:?}");
                assert_eq!(row["reconciled"], "true", "{row:?}");
                assert_eq!(num(row, "rows_present"), num(row, "rows"), "{row:?}");
                assert_eq!(row["checksum_equal"], "true", "{row:?}");
            }
        }
    }
    assert!(
        all.iter().any(|r| r["strategy"] == "json"
            && ms(r, "escape_share") == 1.0
            && ms(r, "nul_share") == 1.0),
        "no json probe with every value escaping and holding a NUL"
    );
}

/// The decision map's smoke profile on local D1: every probe reconciled by count and
/// checksum, then one answer per cell of the grid, literal and exec marked where one row is
/// past the statement limit, and the map drawn.
pub fn decision_map_smoke_reconciles_and_answers_every_cell() {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(&["decision-map", "--profile", "smoke"], out.path());
    assert!(
        status.success(),
        "the decision map's smoke run failed: {status}"
    );
    let dir = run_dir(out.path());
    let all = measured(read_csv(&dir.join("results.csv")));
    // 2 columns × (5 strategies at 1,000 bytes + 3 at 100,000) × 3 repeats, on both targets.
    assert_eq!(all.len(), 2 * 2 * (5 + 3) * 3, "{} probes", all.len());
    for row in &all {
        assert_eq!(row["outcome"], "ok", "{row:?}");
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(num(row, "rows_present"), num(row, "rows"), "{row:?}");
        assert_eq!(row["checksum_equal"], "true", "{row:?}");
    }
    let map = read_csv(&dir.join("decision-map.csv"));
    assert_eq!(
        map.len(),
        8,
        "one answer per cell, local's then bare SQLite's: {map:?}"
    );
    let targets: Vec<&str> = map.iter().map(|c| c["target"].as_str()).collect();
    assert_eq!(
        targets,
        ["local"; 4]
            .into_iter()
            .chain(["sqlite"; 4])
            .collect::<Vec<_>>()
    );
    for cell in map.iter().filter(|c| c["target"] == "local") {
        assert!(!cell["fastest"].is_empty(), "{cell:?}");
        // The pairs behind the margin: the repeats where both the fastest and the runner-up
        // succeeded on local, less those the warm-up rule discarded (it may cut up to half the
        // session's probes, never into its last round).
        let kept = |strategy: &str| -> Vec<String> {
            all.iter()
                .filter(|r| {
                    r["target"] == "local"
                        && r["strategy"] == strategy
                        && ms(r, "columns") == ms(cell, "x")
                        && ms(r, "row_bytes") == ms(cell, "y")
                        && r["warmup_discarded"] == "false"
                })
                .map(|r| r["repeat"].clone())
                .collect()
        };
        let (fastest, runner_up) = (kept(&cell["fastest"]), kept(&cell["runner_up"]));
        let pairs = fastest.iter().filter(|r| runner_up.contains(r)).count();
        assert!(pairs >= 1, "the last round is never discarded: {cell:?}");
        assert_eq!(cell["margin_n"], pairs.to_string(), "{cell:?}");
        let either = format!("{} or {}", cell["fastest"], cell["runner_up"]);
        if pairs == 1 {
            // One pair gives no interval: nothing is decided.
            assert_eq!(cell["margin_ci_low"], "", "{cell:?}");
            assert_eq!(
                (cell["verdict"].as_str(), &cell["answer"]),
                ("undecided", &either)
            );
        } else {
            assert!(
                !cell["margin_ci_low"].is_empty(),
                "{pairs} pairs give an interval: {cell:?}"
            );
            // The margin is the median of the paired ratios, at least 1 by the ranking; the
            // answer names both when its interval includes 1.
            let (low, margin, high) = (
                ms(cell, "margin_ci_low"),
                ms(cell, "margin"),
                ms(cell, "margin_ci_high"),
            );
            assert!(low > 0.0 && low <= margin && margin <= high, "{cell:?}");
            assert!(margin >= 1.0, "runner-up ÷ fastest below 1: {cell:?}");
            // The verdict: a winner only when the interval excludes 1; an equivalent set
            // names the fastest first; undecided names both.
            match cell["verdict"].as_str() {
                "winner" => {
                    assert!(low > 1.0, "{cell:?}");
                    assert_eq!(cell["answer"], cell["fastest"], "{cell:?}");
                }
                "equivalent" => assert!(
                    cell["answer"].starts_with(&format!("{} = ", cell["fastest"])),
                    "{cell:?}"
                ),
                "undecided" => assert_eq!(cell["answer"], either, "{cell:?}"),
                other => panic!("verdict {other}: {cell:?}"),
            }
        }
        let past_the_wall = ms(cell, "y") == 100_000.0;
        assert_eq!(
            cell["stopped"].contains("literal: cannot run, statement length")
                && cell["stopped"].contains("exec: cannot run, statement length"),
            past_the_wall,
            "{cell:?}"
        );
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("## Which strategy to use"), "{md}");
    assert!(md.contains("| 64 | 100000 | **"), "{md}");
    assert_eq!(charts_are_drawn(&dir), ["decision-map.png"]);
    assert_eq!(run_toml(&dir)["run"]["status"].as_str(), Some("complete"));
}

/// The column sweep's smoke profile ran every strategy.
fn every_strategy_ran(rows: &[&crate::support::Row]) {
    for strategy in [
        "bound",
        "literal",
        "per-row",
        "json",
        "batched-rows",
        "exec",
    ] {
        assert!(
            rows.iter().any(|r| r["strategy"] == strategy),
            "no {strategy} probe ran"
        );
    }
}

/// A probe of the column sweep's smoke profile on local D1, measured by `worker`: reconciled by
/// count and checksum, its clocks nested, the window's three parts adding up to it, the values'
/// handover timed before it, and its
/// statements as its strategy plans them.
fn assert_local_probe(row: &crate::support::Row, worker: &str) {
    assert_eq!(row["worker"], worker, "{row:?}");
    // The window's parts are read one after the other on the Worker's clock: they add up to
    // it exactly. The handover comes before it, on both Workers.
    assert!(ms(row, "handover_ms") >= 0.0, "{row:?}");
    let parts: f64 = ["bind_ms", "call_ms", "read_ms"]
        .iter()
        .map(|part| ms(row, part))
        .sum();
    assert_eq!(parts, ms(row, "inside_ms"), "{row:?}");
    assert_eq!(row["reconciled"], "true", "{row:?}");
    assert_eq!(
        num(row, "rows_present"),
        num(row, "rows_expected"),
        "{row:?}"
    );
    assert_eq!(num(row, "rows_expected"), num(row, "rows"), "{row:?}");
    // Content: the checksum D1 computed equals the host's, and counts the rows sent.
    assert_eq!(row["checksum_equal"], "true", "{row:?}");
    assert_eq!(row["checksum_present"], row["checksum_expected"], "{row:?}");
    assert!(
        row["checksum_present"].starts_with(&format!("{}:", row["rows"])),
        "{row:?}"
    );
    // The clocks nest: prepare, then inside (bind within it), all within outside; D1's
    // own clock is there, summed from its answers (the Worker's clock counts whole ms).
    let outside = ms(row, "outside_ms");
    let (prepare, inside, bind) = (
        ms(row, "prepare_ms"),
        ms(row, "inside_ms"),
        ms(row, "bind_ms"),
    );
    assert!(
        outside > 0.0 && outside >= prepare + inside,
        "outside {outside} ms < prepare {prepare} + inside {inside} ms"
    );
    assert!(prepare >= 0.0 && (0.0..=inside).contains(&bind), "{row:?}");
    assert!(ms(row, "d1_ms") >= 0.0, "{row:?}");
    assert!(
        (ms(row, "overhead_ms") - (outside - (prepare + inside))).abs() < 1e-6,
        "{row:?}"
    );
    let columns = num(row, "columns");
    match row["strategy"].as_str() {
        "bound" => {
            assert_eq!(
                num(row, "rows_per_statement"),
                (100 / columns).max(1),
                "{row:?}"
            );
            assert_eq!(num(row, "d1_calls"), 1);
        }
        "literal" => {
            assert!(num(row, "max_statement_bytes") <= 100_000, "{row:?}");
            assert_eq!(num(row, "d1_calls"), 1);
        }
        "per-row" => assert_eq!(num(row, "d1_calls"), num(row, "rows")),
        // 500 rows of 1,000 bytes fit one payload at every column count: one statement,
        // its SQL text small (the rows travel in its one parameter).
        "json" => {
            assert_eq!(num(row, "statements"), 1, "{row:?}");
            assert_eq!(num(row, "rows_per_statement"), num(row, "rows"));
            assert!(num(row, "max_statement_bytes") < 2_000, "{row:?}");
            assert_eq!(num(row, "d1_calls"), 1);
        }
        "batched-rows" => {
            assert_eq!(num(row, "statements"), num(row, "rows"), "{row:?}");
            assert_eq!(num(row, "rows_per_statement"), 1);
            assert_eq!(num(row, "d1_calls"), 1);
        }
        // The rows acknowledged come from the statements D1 says its exec ran.
        "exec" => {
            assert!(num(row, "max_statement_bytes") <= 100_000, "{row:?}");
            assert!(num(row, "statements") > 1, "{row:?}");
            assert_eq!(num(row, "d1_calls"), 1);
        }
        other => panic!("unexpected strategy {other}"),
    }
}

/// The column sweep's smoke profile measured by the JavaScript Worker (`--worker js`): the same
/// probes as the Rust Worker's, every one reconciled by count and checksum, the Worker recorded
/// in results.csv and run.toml; and `--worker js` refused where there is no JavaScript Worker.
pub fn js_worker_smoke_run_reconciles() {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(
        &["column-sweep", "--profile", "smoke", "--worker", "js"],
        out.path(),
    );
    assert!(
        status.success(),
        "the JavaScript Worker's smoke run failed: {status}"
    );
    let dir = run_dir(out.path());
    let all = read_csv(&dir.join("results.csv"));
    let (rows, baseline): (Vec<_>, Vec<_>) = all.iter().partition(|r| r["target"] == "local");
    assert_eq!(
        rows.len(),
        baseline.len(),
        "the baseline runs the same probes"
    );
    for row in &rows {
        assert_eq!(row["outcome"], "ok", "{row:?}");
        assert_local_probe(row, "js");
    }
    every_strategy_ran(&rows);
    let record = run_toml(&dir);
    assert_eq!(record["run"]["status"].as_str(), Some("complete"));
    assert_eq!(record["run"]["worker"].as_str(), Some("js"));
    assert!(
        record["versions"]["worker"]
            .as_str()
            .is_some_and(|v| v.starts_with("d1bench-worker-js ")),
        "{:?}",
        record["versions"]
    );
    for (args, says) in [
        (
            &["column-sweep", "--target", "sqlite"][..],
            "--worker js runs on the local target only",
        ),
        (&["query-budget"][..], "--worker js runs sweeps only"),
    ] {
        let output = Command::new(XTASK)
            .arg("run")
            .args(args)
            .args(["--worker", "js", "--dry-run"])
            .current_dir(project_root())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !output.status.success() && stderr.contains(says),
            "{args:?}: {stderr}"
        );
    }
}

/// A sweep whose sessions alternate between the two Workers (`--alternate-workers`, ABBA): each
/// session measured by the Worker its place says, every probe reconciled, each session's Worker
/// in run.toml, and summary.md's instrument section with Rust ÷ JavaScript per point, the
/// handover of each Worker and the JavaScript Worker's reconciliation; the other tables the
/// Rust Worker's alone.
pub fn alternate_workers_smoke_run_reports_the_instrument() {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(
        &[
            "column-sweep",
            "--profile",
            "smoke",
            "--alternate-workers",
            "--sessions",
            "4",
            "--no-baseline",
            "--only",
            "columns=8|64,strategy=bound|literal",
        ],
        out.path(),
    );
    assert!(
        status.success(),
        "the alternating smoke run failed: {status}"
    );
    let dir = run_dir(out.path());
    let rows = measured(read_csv(&dir.join("results.csv")));
    assert_eq!(rows.len(), 4 * 4, "4 points in each of 4 sessions");
    for row in &rows {
        let worker = match row["session"].as_str() {
            "0" | "3" => "rust",
            "1" | "2" => "js",
            other => panic!("session {other}"),
        };
        assert_local_probe(row, worker);
    }
    let record = run_toml(&dir);
    let sessions = record["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 4, "{sessions:?}");
    for session in sessions {
        let name = session["worker"].as_str().unwrap();
        let js = matches!(session["session"].as_integer(), Some(1 | 2));
        assert_eq!(name.starts_with("d1bench-worker-js "), js, "{session:?}");
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    let section = md
        .split("## The instrument: Rust Worker ÷ JavaScript Worker")
        .nth(1)
        .unwrap_or_else(|| panic!("no instrument section: {md}"));
    for point in ["| bound | 8 | 2, 2 |", "| literal | 64 | 2, 2 |"] {
        assert!(section.contains(point), "{point}: {section}");
    }
    assert!(
        section.contains("The tables and charts above are the Rust Worker's probes only")
            && section.contains("`local`: 8 probes"),
        "{section}"
    );
}

/// The minimal JavaScript Worker (`--worker js-minimal`) alternating with the Rust Worker: every
/// strategy written and reconciled by the same count and checksum, its window with no parts, the
/// Worker named in results.csv, run.toml and the instrument section, and the reproduce line
/// naming it.
pub fn the_minimal_js_worker_alternates_with_the_rust_worker_and_reconciles() {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(
        &[
            "column-sweep",
            "--profile",
            "smoke",
            "--alternate-workers",
            "--worker",
            "js-minimal",
            "--sessions",
            "4",
            "--no-baseline",
        ],
        out.path(),
    );
    assert!(
        status.success(),
        "the minimal Worker's run failed: {status}"
    );
    let dir = run_dir(out.path());
    let rows = read_csv(&dir.join("results.csv"));
    let (minimal, rust): (Vec<_>, Vec<_>) = rows.iter().partition(|r| r["worker"] == "js-minimal");
    assert_eq!(minimal.len(), rust.len(), "the same probes on both");
    every_strategy_ran(&minimal);
    for row in &rust {
        assert_local_probe(row, "rust");
    }
    for row in &minimal {
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["checksum_equal"], "true", "{row:?}");
        assert_eq!(num(row, "rows_present"), num(row, "rows"), "{row:?}");
        // Nothing but the writes in the window: no parts, and it holds within the outside clock.
        for part in ["bind_ms", "call_ms", "read_ms"] {
            assert_eq!(row[part], "", "{part}: {row:?}");
        }
        assert!(ms(row, "inside_ms") <= ms(row, "outside_ms"), "{row:?}");
        assert!(ms(row, "handover_ms") >= 0.0, "{row:?}");
    }
    let record = run_toml(&dir);
    assert_eq!(record["run"]["worker"].as_str(), Some("js-minimal"));
    for session in record["sessions"].as_array().unwrap() {
        let name = session["worker"].as_str().unwrap();
        let js = matches!(session["session"].as_integer(), Some(1 | 2));
        assert_eq!(
            name.starts_with("d1bench-worker-js-minimal "),
            js,
            "{session:?}"
        );
    }
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for says in [
        "the minimal one (`--worker js-minimal`",
        "`worker = js-minimal`",
        "--alternate-workers --worker js-minimal",
    ] {
        assert!(md.contains(says), "{says}: {md}");
    }
}

pub fn smoke_run_reconciles_and_draws() {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(
        &["column-sweep", "--profile", "smoke", "--isolate-heap"],
        out.path(),
    );
    assert!(status.success(), "the smoke run failed: {status}");
    let dir = run_dir(out.path());

    let all = measured(read_csv(&dir.join("results.csv")));
    let (rows, baseline): (Vec<_>, Vec<_>) = all.iter().partition(|r| r["target"] == "local");
    assert!(rows.len() >= 10, "only {} probes", rows.len());
    assert_eq!(
        baseline.len(),
        rows.len(),
        "the baseline runs the same probes"
    );
    for row in &baseline {
        assert_eq!(row["target"], "sqlite", "{row:?}");
        assert_eq!(row["outcome"], "ok", "{row:?}");
        assert_eq!(row["reconciled"], "true", "{row:?}");
        assert_eq!(row["checksum_equal"], "true", "{row:?}");
        assert_eq!(row["d1_ms"], "", "bare SQLite has no D1 clock: {row:?}");
        assert_eq!(row["bind_ms"], "", "nor a binding: {row:?}");
        assert_eq!(
            ms(row, "outside_ms"),
            ms(row, "prepare_ms") + ms(row, "inside_ms"),
            "no request around its clocks: {row:?}"
        );
        assert_eq!(ms(row, "overhead_ms"), 0.0, "{row:?}");
        assert_eq!(row["isolate_heap_peak_bytes"], "", "no isolate: {row:?}");
        assert_eq!(row["worker"], "", "no Worker: {row:?}");
    }
    for row in &rows {
        assert_eq!(row["outcome"], "ok", "{row:?}");
        // The isolate's heap, asked of wrangler dev's inspector while the writes ran
        // (`--isolate-heap`).
        assert!(
            num(row, "isolate_heap_peak_bytes") > 100_000,
            "an isolate holds more than that: {row:?}"
        );
        assert_local_probe(row, "rust");
    }
    every_strategy_ran(&rows);

    let record = run_toml(&dir);
    assert_eq!(record["run"]["status"].as_str(), Some("complete"));
    assert_eq!(record["run"]["baseline"].as_str(), Some("sqlite"));
    let totals = &record["reconciliation"];
    assert_eq!(totals["records"].as_integer(), Some(all.len() as i64));
    assert_eq!(
        totals["checksums_equal"].as_integer(),
        Some(all.len() as i64)
    );
    // The warm-up probes of each session, reconciled and recorded apart.
    let warmups = read_csv(&dir.join("results.csv")).len() - all.len();
    assert_eq!(
        warmups,
        2 * 2 * 2,
        "2 warm-up probes in each of 2 sessions on both targets"
    );
    assert_eq!(totals["warmups"].as_integer(), Some(warmups as i64));
    // Two sessions, each a fresh target, the baseline's alternating with local's (ABBA); one
    // measured round each, so the warm-up rule had nothing it may cut.
    assert_eq!(record["run"]["sessions"].as_integer(), Some(2));
    let order: Vec<(String, i64)> = record["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["target"].as_str().unwrap().to_owned(),
                s["session"].as_integer().unwrap(),
            )
        })
        .collect();
    let order: Vec<(&str, i64)> = order.iter().map(|(t, s)| (t.as_str(), *s)).collect();
    assert_eq!(
        order,
        [("local", 0), ("sqlite", 0), ("sqlite", 1), ("local", 1)]
    );
    for session in record["sessions"].as_array().unwrap() {
        assert_eq!(session["warmup_discarded"].as_integer(), Some(0));
    }
    for target in [&rows, &baseline] {
        let in_session = |s: &str| target.iter().filter(|r| r["session"] == s).count();
        assert_eq!(
            in_session("0"),
            target.len() / 2,
            "half the probes in session 0"
        );
        assert_eq!(in_session("1"), target.len() / 2);
        assert!(target.iter().all(|r| r["warmup_discarded"] == "false"));
    }
    assert_eq!(
        totals["warmups_reconciled"].as_integer(),
        Some(warmups as i64)
    );
    assert_eq!(
        record["versions"]["wrangler"]
            .as_str()
            .map(|v| v.starts_with("4.")),
        Some(true)
    );

    // summary.csv: every point of both targets, every summarized measure, with its statistics.
    let summary = read_csv(&dir.join("summary.csv"));
    for target in ["local", "sqlite"] {
        let outside: Vec<_> = summary
            .iter()
            .filter(|r| r["target"] == target && r["measure"] == "outside_ms")
            .collect();
        assert_eq!(
            outside.len(),
            rows.len() / 2,
            "{target}: one point per two probes, one repeat in each of two sessions"
        );
        for point in outside {
            assert_eq!(
                (point["n"].as_str(), point["sessions"].as_str()),
                ("2", "2")
            );
            // The geometric mean of the two sessions' values, with the interval between
            // sessions (t with 1 degree of freedom: wide, and honest about it).
            let (min, max, estimate) = (ms(point, "min"), ms(point, "max"), ms(point, "median"));
            assert!(
                (estimate - (min * max).sqrt()).abs() < 1e-6 * max,
                "{point:?}"
            );
            assert_eq!(point["ci_method"], "between-sessions", "{point:?}");
            assert_eq!(point["ci_coverage"], "0.95", "{point:?}");
            assert!(
                ms(point, "ci_low") <= min && max <= ms(point, "ci_high"),
                "{point:?}"
            );
            assert_eq!(
                point["p95"], "",
                "two repeats: no 95th percentile: {point:?}"
            );
        }
    }
    let ratios: Vec<_> = summary
        .iter()
        .filter(|r| r["measure"] == "ratio_to_sqlite" || r["measure"] == "ratio_to_bound")
        .collect();
    assert!(!ratios.is_empty());
    for ratio in ratios {
        assert_eq!(ratio["ci_method"], "between-sessions", "{ratio:?}");
    }
    assert!(summary.iter().any(|r| r["measure"] == "overhead_ms"));

    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    for expected in [
        "# column-sweep:",
        "status complete",
        "checksums equal; every probe reconciled",
        "literal ÷ bound",
        "local ÷ sqlite",
        "## Where the time goes on `local`",
        "## The isolate's memory on `local`",
        "## Environment",
        "(outside clock less the target's preparation, 95% interval over 2 sessions)",
        "its 95% confidence interval between sessions",
        "`local`: 4 warm-up probes, ",
        "The probes ran in 2 sessions, each a fresh target with its own warm-up rounds, the \
         baseline's alternating with the target's",
    ] {
        assert!(
            md.contains(expected),
            "summary.md lacks {expected:?}:\n{md}"
        );
    }
    let charts = charts_are_drawn(&dir);
    for chart in [
        "time-per-1000-rows-vs-columns.png",
        "rows-per-statement-vs-columns.png",
        "overhead-outside-minus-inside-ms-vs-columns.png",
    ] {
        assert!(
            charts.contains(&chart.to_owned()),
            "no {chart} in {charts:?}"
        );
        assert!(
            md.contains(&format!("]({chart})")),
            "summary.md lacks {chart}"
        );
    }
    assert!(
        md.contains("dashed grey lines: the same probes on bare SQLite (baseline)"),
        "no baseline line in the time chart"
    );
    for vector in ["svg", "pdf"] {
        let file = format!("time-per-1000-rows-vs-columns.{vector}");
        assert!(dir.join(&file).exists(), "no {file}");
        assert!(
            md.contains(&format!("]({file})")),
            "summary.md lacks {file}"
        );
    }
}

/// The row-size sweep's smoke profile: literal is refused once one row no longer fits in a
/// statement, and leaves nothing behind; bound writes every size.
pub fn row_size_smoke_reaches_literals_wall() {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(&["row-size-sweep", "--profile", "smoke"], out.path());
    assert!(status.success(), "the row-size smoke run failed: {status}");
    let dir = run_dir(out.path());
    let rows = read_csv(&dir.join("results.csv"));
    // Without --isolate-heap nothing samples the isolate, so no heap work is inside a timing.
    for row in &rows {
        assert_eq!(row["isolate_heap_peak_bytes"], "", "not asked for: {row:?}");
    }
    assert!(run_toml(&dir)["run"].get("isolate_heap").is_none());
    for target in ["local", "sqlite"] {
        let of = |strategy: &str| -> Vec<_> {
            let mut rows: Vec<_> = rows
                .iter()
                .filter(|r| r["target"] == target && r["strategy"] == strategy)
                .collect();
            rows.sort_by_key(|r| num(r, "row_bytes"));
            rows
        };
        for row in of("bound") {
            assert_eq!(row["outcome"], "ok", "bound is never refused: {row:?}");
        }
        let literal = of("literal");
        let refused: Vec<_> = literal
            .iter()
            .filter(|r| r["outcome"] == "refused")
            .collect();
        assert!(!refused.is_empty(), "{target}: literal never hit the wall");
        let wall = num(refused[0], "row_bytes");
        for row in &literal {
            let fits = num(row, "max_statement_bytes") <= 100_000;
            if num(row, "row_bytes") < wall {
                assert_eq!(row["outcome"], "ok", "{target}: below the wall: {row:?}");
                assert!(fits, "{row:?}");
            } else {
                assert_eq!(
                    row["outcome"], "refused",
                    "{target}: past the wall: {row:?}"
                );
                assert_eq!(row["refusal"], "statement-too-long", "{row:?}");
                assert!(!fits, "refused although the statement fits: {row:?}");
                assert_eq!(num(row, "rows_per_statement"), 1, "{row:?}");
                // Atomic: a refused batch leaves no row, and the checksum agrees.
                assert_eq!(num(row, "rows_present"), 0, "{row:?}");
                assert!(row["checksum_present"].starts_with("0:"), "{row:?}");
            }
            assert_eq!(row["checksum_equal"], "true", "{row:?}");
            assert_eq!(row["reconciled"], "true", "{row:?}");
        }
        assert!(
            (50_000..=120_000).contains(&wall),
            "{target}: the wall at {wall} bytes is not near the 100,000-byte statement limit"
        );
        // Literal carries fewer rows per statement as rows fatten.
        let per_statement: Vec<usize> = literal
            .iter()
            .map(|r| num(r, "rows_per_statement"))
            .collect();
        assert!(
            per_statement.windows(2).all(|w| w[0] >= w[1]) && per_statement[0] > 10,
            "{target}: {per_statement:?}"
        );
        // Exec runs literal's statements: the same wall, and (one transaction locally) a
        // refused script leaves no row.
        for (literal, exec) in literal.iter().zip(of("exec")) {
            assert_eq!(literal["row_bytes"], exec["row_bytes"]);
            assert_eq!(exec["outcome"], literal["outcome"], "{target}: {exec:?}");
            assert_eq!(exec["refusal"], literal["refusal"], "{target}: {exec:?}");
            assert_eq!(exec["reconciled"], "true", "{exec:?}");
            assert_eq!(exec["checksum_equal"], "true", "{exec:?}");
            if exec["outcome"] == "refused" {
                assert_eq!(num(exec, "rows_present"), 0, "{exec:?}");
            }
        }
        // The string limit is 20 times the statement limit: json and batched-rows pass it.
        for strategy in ["json", "batched-rows"] {
            let rows = of(strategy);
            assert_eq!(rows.len(), literal.len(), "{target} {strategy}");
            for row in rows {
                assert_eq!(row["outcome"], "ok", "{target}: {row:?}");
                assert_eq!(row["reconciled"], "true", "{row:?}");
                assert_eq!(row["checksum_equal"], "true", "{row:?}");
            }
        }
    }
    assert_eq!(run_toml(&dir)["run"]["status"].as_str(), Some("complete"));
    charts_are_drawn(&dir);
}

/// `--debug-corrupt <kind>` changes every probe's table in D1 after the writes (one byte of one
/// value, a value swapped between two rows, two values swapped within a row): the counts still
/// agree, the checksums must not, and the run must say so.
fn a_corrupted_table_is_caught_and_the_run_is_invalid(kind: &str) {
    let out = tempfile::tempdir().unwrap();
    let status = xtask_run(
        &[
            "index-sweep",
            "--profile",
            "smoke",
            "--no-baseline",
            "--debug-corrupt",
            kind,
        ],
        out.path(),
    );
    assert_eq!(
        status.code(),
        Some(1),
        "a run corrupted by {kind} must fail: {status}"
    );
    let dir = run_dir(out.path());
    let rows = read_csv(&dir.join("results.csv"));
    assert!(
        rows.len() >= 8,
        "the measured rows were lost: {}",
        rows.len()
    );
    for row in &rows {
        assert_eq!(row["target"], "local", "--no-baseline: {row:?}");
        assert_eq!(row["outcome"], "ok", "{row:?}");
        assert_eq!(
            num(row, "rows_present"),
            num(row, "rows"),
            "the count cannot see it: {row:?}"
        );
        assert_eq!(row["checksum_equal"], "false", "{row:?}");
        assert_ne!(row["checksum_present"], "", "{row:?}");
        assert_eq!(row["reconciled"], "false", "{row:?}");
        assert!(
            row["reconcile_note"].starts_with("content checksum: expected"),
            "{row:?}"
        );
    }
    let record = run_toml(&dir);
    assert_eq!(record["run"]["status"].as_str(), Some("invalid"));
    assert_eq!(record["run"]["debug_corrupt"].as_str(), Some(kind));
    assert_eq!(
        record["reconciliation"]["checksums_equal"].as_integer(),
        Some(0)
    );
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(md.contains("status **INVALID**"), "{md}");
    assert!(md.contains("checksums DIFFER"), "{md}");
    charts_are_drawn(&dir);
}

pub fn interrupt_stops_wrangler_and_keeps_results() {
    let out = tempfile::tempdir().unwrap();
    // The smoke profile's probes ten times over: 260 probes of tens of milliseconds, so it is
    // certainly still running when interrupted at its second row, which it reaches in seconds
    // (the full profile's first rows are 10 MB probes: minutes on a loaded machine).
    let mut xtask = Command::new(XTASK)
        .args([
            "run",
            "column-sweep",
            "--profile",
            "smoke",
            "--repeats",
            "10",
            "--no-baseline",
            "--out",
        ])
        .arg(out.path())
        .current_dir(project_root())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();

    // Wait until probes are being measured, and note wrangler's process group meanwhile.
    let deadline = Instant::now() + Duration::from_secs(300);
    let mut groups = Vec::new();
    let results = loop {
        assert!(
            Instant::now() < deadline,
            "no probe was measured within 5 minutes"
        );
        assert!(
            xtask.try_wait().unwrap().is_none(),
            "the run ended before it was interrupted"
        );
        // Children in the xtask's own group (git, rustc --version) are not wrangler: that group
        // is this test's, which outlives the interrupt.
        // SAFETY: getpgrp(2) only reads this process's group id.
        let own_group = unsafe { libc::getpgrp() };
        groups.extend(
            child_groups(xtask.id())
                .into_iter()
                .filter(|g| *g != xtask.id() as i32 && *g != own_group),
        );
        let csv = std::fs::read_dir(out.path())
            .ok()
            .and_then(|mut d| d.next())
            .map(|e| e.unwrap().path().join("results.csv"));
        if let Some(csv) =
            csv.filter(|c| std::fs::read_to_string(c).is_ok_and(|t| t.lines().count() >= 3))
        {
            break csv;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    groups.sort();
    groups.dedup();
    assert!(!groups.is_empty(), "never saw wrangler's process group");

    // SAFETY: kill(2) on our own child's pid: what Ctrl-C delivers.
    unsafe { libc::kill(xtask.id() as i32, libc::SIGINT) };
    let status = xtask.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "an interrupted run exits with 130"
    );
    for pgid in groups {
        let left = live_members(pgid);
        assert!(
            left.is_empty(),
            "processes of group {pgid} survived the interrupt: {left:?}"
        );
    }
    let rows = read_csv(&results);
    assert!(
        rows.len() >= 2,
        "the rows measured before the interrupt were lost"
    );
    assert!(
        rows.iter().all(|r| r["reconciled"] == "true"),
        "a probe cut by the interrupt was recorded"
    );
    let record = run_toml(results.parent().unwrap());
    assert_eq!(record["run"]["status"].as_str(), Some("interrupted"));
}
