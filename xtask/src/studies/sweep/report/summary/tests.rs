//! Tests of `summary.rs`, apart so that file holds only what it is for.

use super::*;
use crate::records::Totals;

#[test]
fn the_load_line_says_when_other_work_shared_the_machine() {
    let mut m = crate::records::run_record::machine();
    (m.cpus, m.cpu_limit) = (2, None);
    (m.load_at_start, m.load_at_end) = (Some(0.4), Some(1.9));
    assert!(load_line(&m).ends_with("0.40 at the start, 1.90 at the end: at most the CPU count\n"));
    m.load_at_end = Some(4.03);
    assert!(load_line(&m).contains("4.03 at the end: above the CPU count"));
    (m.load_at_start, m.load_at_end) = (None, None);
    assert!(load_line(&m).ends_with("not recorded at the end\n"));
    m.cpu_limit = Some(crate::records::cpu_limit::CpuLimit {
        cgroup: "/slow".into(),
        quota_cpus: Some(0.6),
        idle: true,
    });
    assert!(load_line(&m).contains(
        "- **CPU limit: a quota of 0.60 CPU and the idle scheduling class (cgroup /slow)**: the \
         run measured that limit"
    ));
}

fn kind(name: &str) -> TargetKind {
    serde_json::from_value(serde_json::json!(name)).unwrap()
}

fn row(
    target: &str,
    strategy: Strategy,
    columns: usize,
    outcome: &str,
    outside_ms: f64,
) -> ProbeRow {
    let mut row = crate::studies::sweep::row::tests_support::row();
    row.target = kind(target);
    row.strategy = strategy;
    row.columns = columns;
    row.outcome = outcome.parse().unwrap();
    row.outside_ms = outside_ms;
    row.inside_ms = outside_ms / 2.0;
    if outcome == "refused" {
        row.refusal = Some(d1bench_core::RefusalKind::TooManyVariables);
    }
    row
}

fn cells_of(line: &str) -> Vec<&str> {
    line.trim_matches('|').split(" | ").map(str::trim).collect()
}

#[test]
fn medians_intervals_ratios_and_refusals() {
    let repeat = |repeat: usize, row: ProbeRow| ProbeRow { repeat, ..row };
    let rows = [
        repeat(0, row("local", Strategy::Bound, 64, "ok", 50.0)),
        repeat(1, row("local", Strategy::Bound, 64, "ok", 52.0)),
        repeat(2, row("local", Strategy::Bound, 64, "ok", 90.0)),
        repeat(0, row("local", Strategy::Literal, 64, "ok", 18.0)),
        repeat(1, row("local", Strategy::Literal, 64, "ok", 19.0)),
        repeat(2, row("local", Strategy::Literal, 64, "ok", 20.0)),
        row("local", Strategy::Literal, 128, "refused", 3.0),
        row("local", Strategy::Bound, 128, "ok", 1.0),
    ];
    let text = ratio_table(&rows, Axis::Columns, kind("local"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        cells_of(lines[0]),
        [
            "columns",
            "bound ms/1k rows",
            "literal ms/1k rows",
            "literal ÷ bound"
        ]
    );
    // 100 rows per probe: ms per 1,000 rows is ten times the probe's time.
    let at_64 = cells_of(lines[2]);
    assert_eq!(at_64[0], "64");
    // Three repeats: [min, max], marked as covering less than 95%, and the note says how
    // much it does cover.
    assert_eq!(at_64[1], "520 (500–900)† n=3");
    assert_eq!(at_64[2], "190 (180–200)† n=3");
    assert!(
        text.contains(
            "† The interval covers less than 95%, for want of repeats: 75.0% at n = 3; \
             75.0% at n = 3 pairs."
        ),
        "{text}"
    );
    // Literal ÷ bound repeat by repeat: 0.36, 0.365, 0.22: their median, and [min, max].
    assert_eq!(at_64[3], "0.36 (0.22–0.37)† n=3");
    assert_eq!(
        cells_of(lines[3]),
        ["128", "10.0 n=1", "refused (too-many-variables)", "–"]
    );
}

#[test]
fn from_six_repeats_the_interval_is_95_percent_and_unmarked() {
    let rows: Vec<ProbeRow> = [50.0, 51.0, 52.0, 53.0, 54.0, 90.0]
        .into_iter()
        .map(|ms| row("local", Strategy::Bound, 8, "ok", ms))
        .collect();
    let text = ratio_table(&rows, Axis::Columns, kind("local"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(cells_of(lines[2]), ["8", "525 (500–900) n=6"]);
    assert!(!text.contains('†'), "{text}");
    // A failed repeat is not summarized, and the cell says so.
    let mut failed = rows.clone();
    failed.push(row("local", Strategy::Bound, 8, "error", 1.0));
    let text = ratio_table(&failed, Axis::Columns, kind("local"));
    assert!(text.contains("| 8 | 525 (500–900) n=6 of 7 |"), "{text}");
}

#[test]
fn the_baseline_table_divides_by_sqlite_at_the_same_point() {
    let repeats = |target, ms: &[f64]| -> Vec<ProbeRow> {
        let rows = ms.iter().enumerate();
        rows.map(|(repeat, &ms)| ProbeRow {
            repeat,
            ..row(target, Strategy::Bound, 8, "ok", ms)
        })
        .collect()
    };
    let mut rows = vec![
        row("local", Strategy::Literal, 8, "ok", 10.0),
        row("sqlite", Strategy::Literal, 8, "ok", 5.0),
    ];
    rows.extend(repeats("local", &[40.0, 41.0, 42.0, 43.0, 44.0]));
    rows.extend(repeats("sqlite", &[4.0, 4.1, 4.2, 4.3, 4.4, 4.5]));
    let text = baseline_table(&rows, Axis::Columns, kind("local")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        cells_of(lines[0]),
        [
            "columns",
            "bound: local ÷ sqlite",
            "literal: local ÷ sqlite"
        ]
    );
    // Bound: medians 420 and 42.5 ms per 1,000 rows; the interval divides [400, 440] by
    // [40, 45], covering at least 93.75% × 96.875%.
    assert_eq!(
        cells_of(lines[2]),
        ["8", "9.88 (8.89–11.0)† n=5 vs 6", "2.00 n=1 vs 1"]
    );
    // The inside clocks are divided, whatever the outside clock carried besides.
    let mut slow_outside = rows.clone();
    slow_outside[0].outside_ms = 4_000.0;
    assert_eq!(
        baseline_table(&slow_outside, Axis::Columns, kind("local")),
        Some(text.clone())
    );
    assert_eq!(
        cells_of(lines[2]),
        ["8", "9.88 (8.89–11.0)† n=5 vs 6", "2.00 n=1 vs 1"]
    );
    assert!(
        text.contains("for want of repeats: at least 90.8% at n = 5 and 6."),
        "{text}"
    );
    let local: Vec<ProbeRow> = rows
        .iter()
        .filter(|r| r.target == kind("local"))
        .cloned()
        .collect();
    assert_eq!(baseline_table(&local, Axis::Columns, kind("local")), None);
    assert_eq!(baseline_table(&rows, Axis::Columns, kind("sqlite")), None);
    // The baseline's own lines never appear in the target's table.
    assert!(!ratio_table(&rows, Axis::Columns, kind("local")).contains("42.5"));
}

fn record(status: &str, totals: Totals) -> RunRecord {
    let text = format!(
        r#"
[run]
id = "20261130T000000Z-local"
experiment = "column-sweep"
profile = "smoke"
target = "local"
baseline = "sqlite"
status = "{status}"
started = "2026-11-30T00:00:00Z"
ended = "2026-11-30T00:01:00Z"
[experiment]
file = "experiments/column-sweep.toml"
sha256 = "ab"
description = "Bound vs literal"
x_axis = "columns"
[git]
commit = "c0ffee"
dirty = false
[versions]
d1bench = "0.1.0"
worker = "d1bench-worker 0.1.0"
worker_crate = "0.8.7"
wrangler = "4.164.0"
workerd = "1.20261117.1"
sqlite = "3.50.2"
rustc = "rustc 1.95.0"
[machine]
os = "Debian"
arch = "x86_64"
cpu = "AMD EPYC"
cpus = 2
memory_gib = 23.5
"#
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("run.toml"), &text).unwrap();
    let mut record = RunRecord::read(&dir.path().join("run.toml")).unwrap();
    record.reconciliation = Some(totals);
    record
}

#[test]
fn summary_md_says_what_ran_where_how_it_reconciled_and_shows_every_chart() {
    let rows = [
        row("local", Strategy::Bound, 8, "ok", 40.0),
        row("local", Strategy::Literal, 8, "ok", 10.0),
        row("sqlite", Strategy::Bound, 8, "ok", 4.0),
        row("sqlite", Strategy::Literal, 8, "ok", 5.0),
    ];
    let mut totals = Totals::default();
    rows.iter().for_each(|r| totals.add(r));
    let charts = [Drawn {
        name: "time-per-1000-rows-vs-columns".into(),
        caption: "Median time per 1,000 rows.".into(),
        files: vec![
            "/r/time-per-1000-rows-vs-columns.png".into(),
            "/r/time-per-1000-rows-vs-columns.svg".into(),
            "/r/time-per-1000-rows-vs-columns.pdf".into(),
        ],
    }];
    let mut complete = record("complete", totals.clone());
    complete.run.order_seed = Some(7);
    let md = markdown(&complete, &rows, &charts);
    for expected in [
        "# column-sweep: Bound vs literal",
        "profile `smoke` of `experiments/column-sweep.toml` on the `local` target, with the same probes on sqlite (bare SQLite, the baseline: not D1)",
        "status complete.",
        "Reproduce: `cargo xtask run column-sweep --profile smoke --target local` at commit `c0ffee`. The probes ran in one session, in rounds, one repeat of every point each, in an order shuffled with order seed 7.",
        "- `local`: 2 probes (0 refused, 0 errors); 200 rows expected, 200 present, checksums equal; every probe reconciled",
        "- bare SQLite (baseline): 2 probes",
        "| 8 | 400 n=1 | 100 n=1 | 0.25 n=1 |",
        "| 8 | 10.0 n=1 vs 1 | 2.00 n=1 vs 1 |",
        "## `local` ÷ bare SQLite (ratio of median inside clocks: the writes alone on both sides)",
        "## Where the time goes on `local` (median ms per probe)",
        "| 8 | bound | 1 | 40.0 | – | 20.0 | – | 2.0 | 4.0 |",
        "## Time per 1,000 rows on `local` (outside clock less the target's preparation, interval within one session)",
        "confidence interval **within one session**",
        "`local`: no warm-up probe recorded; the first 5 measured probes of each session, against their points over every session, 1.00× (1 session); `sqlite`: no warm-up probe recorded",
        "![time-per-1000-rows-vs-columns](time-per-1000-rows-vs-columns.png)",
        "*Median time per 1,000 rows.* ([SVG](time-per-1000-rows-vs-columns.svg), [PDF](time-per-1000-rows-vs-columns.pdf))",
        "- wrangler: 4.164.0",
        "- SQLite (baseline, bundled): 3.50.2",
    ] {
        assert!(md.contains(expected), "missing {expected:?} in:\n{md}");
    }
    assert!(!md.contains("INVALID"));

    let mut corrupted = record("invalid", totals);
    corrupted.run.debug_corrupt = Some(crate::base::DebugCorruption::TextByte);
    let mut bad = rows.clone();
    bad[0].checksum_equal = false;
    bad[0].reconciled = false;
    let md = markdown(&corrupted, &bad, &charts);
    assert!(md.contains("status **INVALID**"), "{md}");
    assert!(md.contains("**DEBUG RUN**"), "{md}");
    assert!(md.contains("--debug-corrupt text-byte`"), "{md}");
    assert!(md.contains("checksums DIFFER for 1 of 2 probes"), "{md}");
    let mut slowed = record("complete", Totals::default());
    slowed.run.debug_slow_percent = Some(20);
    let md = markdown(&slowed, &rows, &charts);
    assert!(
        md.contains("**DEBUG RUN**: every probe's timed window was stretched by 20%"),
        "{md}"
    );
    assert!(md.contains("--target local --debug-slow 20`"), "{md}");
}

#[test]
fn labelled_series_get_a_column_of_their_own() {
    let mut labelled = row("local", Strategy::Bound, 8, "ok", 20.0);
    labelled.label = "all non-ASCII".into();
    let rows = [row("local", Strategy::Bound, 8, "ok", 10.0), labelled];
    let text = ratio_table(&rows, Axis::Columns, kind("local"));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        cells_of(lines[0]),
        ["columns", "series", "bound ms/1k rows"]
    );
    assert_eq!(cells_of(lines[2]), ["8", "", "100 n=1"]);
    assert_eq!(cells_of(lines[3]), ["8", "all non-ASCII", "200 n=1"]);
}

#[test]
fn with_a_precision_the_summary_says_where_it_was_reached() {
    let repeats = |strategy, columns, ms: &[f64]| -> Vec<ProbeRow> {
        let rows = ms.iter().enumerate();
        rows.map(|(repeat, &ms)| ProbeRow {
            repeat,
            ..row("local", strategy, columns, "ok", ms)
        })
        .collect()
    };
    let mut rows = repeats(
        Strategy::Bound,
        8,
        &[100.0, 101.0, 99.0, 100.0, 102.0, 98.0],
    );
    rows.extend(repeats(
        Strategy::Literal,
        8,
        &[50.0, 80.0, 20.0, 50.0, 51.0, 49.0, 60.0],
    ));
    rows.push(row("local", Strategy::Literal, 64, "refused", 1.0));
    let mut record = record("complete", Totals::default());
    assert_eq!(
        precision_line(&rows, Axis::Columns, kind("local"), &record),
        ""
    );
    record.run.precision = Some(0.05);
    record.run.max_repeats = Some(7);
    let line = precision_line(&rows, Axis::Columns, kind("local"), &record);
    assert_eq!(
        line,
        "Precision asked: every point repeated until its median's 95% interval lay within \
         ±5% of it, up to 7 repeats. Reached at 1 of 2 points of `local`; not at literal at \
         8 (n=7).\n"
    );
    assert!(markdown(&record, &rows, &[]).contains(&line));
}

/// The repeats an experiment file may ask for fit what the summary's intervals are computed
/// from, and the fewest it may ask for with a precision are the fewest a 95% interval needs.
#[test]
fn experiment_files_ask_for_no_more_repeats_than_an_interval_takes() {
    use crate::stats::CONFIDENCE;
    use crate::stats::order::{MAX_N, order_statistic_coverage};
    use crate::studies::sweep::{FEWEST_REPEATS_FOR_95, MAX_REPEATS};
    const { assert!(MAX_REPEATS <= MAX_N) };
    let n = FEWEST_REPEATS_FOR_95;
    assert!(order_statistic_coverage(n, 1) >= CONFIDENCE);
    assert!(order_statistic_coverage(n - 1, 1) < CONFIDENCE);
}
