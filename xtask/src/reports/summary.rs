//! What a run says about itself: the key ratio tables (printed at the end of a run and put in
//! `summary.md`) and `summary.md` itself. Pure: it returns text, run.rs writes it.

use std::collections::BTreeMap;
use std::fmt::Write;

use d1bench_core::{Outcome, Strategy};

use crate::flags::TargetKind;
use crate::records::ResultRow;
use crate::records::Totals;
use crate::records::{RunRecord, RunStatus};
use crate::reports::charts::sweep::Drawn;
use crate::reports::clocks;
use crate::reports::points::{Measure, Point, points};
use crate::reports::stats::Summary;
use crate::studies::sweep::Axis;
use clap::ValueEnum;

/// The order strategies are listed in, in every table.
const STRATEGIES: [Strategy; 3] = [Strategy::Bound, Strategy::Literal, Strategy::PerRow];

/// A table row's key: the series label, then x (ordered by `total_cmp`).
type RowKey = (String, u64);

/// The target's points of one measure keyed by (label, x) and strategy.
fn cells<'a>(
    rows: &'a [ResultRow],
    axis: Axis,
    target: TargetKind,
) -> BTreeMap<RowKey, (f64, BTreeMap<Strategy, Point<'a>>)> {
    let mut table: BTreeMap<RowKey, (f64, BTreeMap<Strategy, Point<'a>>)> = BTreeMap::new();
    for point in points(rows, axis) {
        if point.line.target != target {
            continue;
        }
        // total_cmp order for non-negative x is the order of the bits.
        let key = (point.line.label.clone(), point.x.to_bits());
        table
            .entry(key)
            .or_insert_with(|| (point.x, BTreeMap::new()))
            .1
            .insert(point.line.strategy, point);
    }
    table
}

/// The strategies that appear among `rows` of `target`.
fn strategies_of(rows: &[ResultRow], target: TargetKind) -> Vec<Strategy> {
    STRATEGIES
        .into_iter()
        .filter(|s| rows.iter().any(|r| r.target == target && r.strategy == *s))
        .collect()
}

fn ms_per_1000(point: Option<&Point>) -> Option<Summary> {
    point.and_then(|p| p.summary(Measure::MsPer1000Rows))
}

/// A cell: the median with its interval, or why there is none.
fn time_cell(point: Option<&Point>) -> String {
    let Some(point) = point else {
        return "–".to_owned();
    };
    match point.summary(Measure::MsPer1000Rows) {
        Some(s) if s.n > 1 => format!("{} ({}–{})", num(s.median), num(s.ci_low), num(s.ci_high)),
        Some(s) => num(s.median),
        None if point.refused_only() => {
            let kind = point
                .rows
                .iter()
                .find(|r| r.outcome == Outcome::Refused)
                .and_then(|r| r.refusal)
                .map_or(String::new(), |r| r.to_string());
            format!("refused ({kind})")
        }
        None => "error".to_owned(),
    }
}

/// A time in ms with three significant figures.
pub fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn ratio(numerator: Option<Summary>, denominator: Option<Summary>) -> String {
    match (numerator, denominator) {
        (Some(n), Some(d)) if d.median > 0.0 => format!("{:.2}", n.median / d.median),
        _ => "–".to_owned(),
    }
}

/// The header cells of a table: the axis, the label when any series has one, then `columns`.
fn header(axis: Axis, labelled: bool, columns: &[String]) -> String {
    let mut cells = vec![axis.name().to_owned()];
    if labelled {
        cells.push("series".to_owned());
    }
    cells.extend(columns.iter().cloned());
    let mut out = format!("| {} |\n", cells.join(" | "));
    writeln!(out, "|{}", " --- |".repeat(cells.len())).unwrap();
    out
}

/// The key ratio table of `target`: median ms per 1,000 rows (outside clock less the target's
/// preparation) of each strategy at each point, with its 95% bootstrap interval, and literal ÷
/// bound. Markdown.
pub fn ratio_table(rows: &[ResultRow], axis: Axis, target: TargetKind) -> String {
    let strategies = strategies_of(rows, target);
    let table = cells(rows, axis, target);
    let labelled = table.keys().any(|(label, _)| !label.is_empty());
    let mut columns: Vec<String> = strategies
        .iter()
        .map(|s| format!("{s} ms/1k rows"))
        .collect();
    let both = strategies.contains(&Strategy::Bound) && strategies.contains(&Strategy::Literal);
    if both {
        columns.push("literal ÷ bound".to_owned());
    }
    let mut out = header(axis, labelled, &columns);
    for ((label, _), (x, cells)) in &table {
        let mut line = vec![axis.format(*x)];
        if labelled {
            line.push(label.clone());
        }
        line.extend(strategies.iter().map(|s| time_cell(cells.get(s))));
        if both {
            line.push(ratio(
                ms_per_1000(cells.get(&Strategy::Literal)),
                ms_per_1000(cells.get(&Strategy::Bound)),
            ));
        }
        writeln!(out, "| {} |", line.join(" | ")).unwrap();
    }
    out
}

/// `target` ÷ the bare SQLite baseline, per strategy at each point, on the one clock both have
/// alike: the inside clock (the writes, values bound included; no HTTP, no preparation). The
/// ratio of the medians of `inside_ms`; `None` when the run has no baseline. Markdown.
pub fn baseline_table(rows: &[ResultRow], axis: Axis, target: TargetKind) -> Option<String> {
    if target == TargetKind::Sqlite || !rows.iter().any(|r| r.target == TargetKind::Sqlite) {
        return None;
    }
    let strategies = strategies_of(rows, target);
    let ours = cells(rows, axis, target);
    let baseline = cells(rows, axis, TargetKind::Sqlite);
    let labelled = ours.keys().any(|(label, _)| !label.is_empty());
    let columns: Vec<String> = strategies
        .iter()
        .map(|s| format!("{s}: {target} ÷ sqlite"))
        .collect();
    let mut out = header(axis, labelled, &columns);
    for (key, (x, cells)) in &ours {
        let mut line = vec![axis.format(*x)];
        if labelled {
            line.push(key.0.clone());
        }
        let theirs = baseline.get(key).map(|(_, c)| c);
        let inside = |point: Option<&Point>| point.and_then(|p| p.summary(Measure::InsideMs));
        for s in &strategies {
            line.push(ratio(
                inside(cells.get(s)),
                inside(theirs.and_then(|c| c.get(s))),
            ));
        }
        writeln!(out, "| {} |", line.join(" | ")).unwrap();
    }
    Some(out)
}

/// The reconciliation totals of each target in `rows` (warm-ups are not in results.csv, so
/// they are taken from run.toml's totals).
fn reconciliation_lines(rows: &[ResultRow], record: &RunRecord) -> Vec<String> {
    let mut targets: Vec<TargetKind> = rows.iter().map(|r| r.target).collect();
    targets.sort();
    targets.dedup();
    let mut lines: Vec<String> = targets
        .into_iter()
        .map(|target| {
            let mut totals = Totals::default();
            rows.iter()
                .filter(|r| r.target == target)
                .for_each(|r| totals.add(r));
            let name = if target == TargetKind::Sqlite {
                "bare SQLite (baseline)".to_owned()
            } else {
                format!("`{target}`")
            };
            // Warm-ups are not in results.csv: run.toml counts them, for the run as a whole.
            format!("- {name}: {}", totals.line("probes"))
        })
        .collect();
    if let Some(all) = &record.reconciliation {
        lines.push(format!("- whole run (run.toml): {}", all.line("probes")));
    }
    lines
}

/// `summary.md`: what was run and where, the reconciliation, the key tables, the charts with
/// their captions, the environment.
pub fn markdown(record: &RunRecord, rows: &[ResultRow], charts: &[Drawn]) -> String {
    let run = &record.run;
    let axis = run.x_axis.unwrap_or(Axis::Columns);
    let target = run.target;
    let study = record.studies.first();
    let mut out = format!(
        "# {}: {}\n\n",
        run.experiment,
        study.map_or("", |s| s.description.as_str())
    );
    let status = if run.status == RunStatus::Complete {
        "complete".to_owned()
    } else {
        format!(
            "**{}**{}",
            run.status.name().to_uppercase(),
            run.error
                .as_ref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default()
        )
    };
    let baseline = run
        .baseline
        .as_ref()
        .map(|b| format!(", with the same probes on {b} (bare SQLite, the baseline: not D1)"))
        .unwrap_or_default();
    writeln!(
        out,
        "Run `{}`: profile `{}` of `{}` on the `{target}` target{baseline}; started {}, ended {}; status {status}.\n",
        run.id,
        run.profile,
        study.map_or("", |s| s.file.as_str()),
        run.started,
        run.ended.as_deref().unwrap_or("(not recorded)"),
    )
    .unwrap();
    if let Some(kind) = run.debug_corrupt.and_then(|k| k.to_possible_value()) {
        let kind = kind.get_name();
        writeln!(
            out,
            "**DEBUG RUN**: every probe's table was corrupted on purpose after its writes \
             (`--debug-corrupt {kind}`), to show that reconciliation catches it. Its times are \
             not measurements to use.\n"
        )
        .unwrap();
    }
    let mut command = format!(
        "cargo xtask run {} --profile {} --target {target}",
        run.experiment, run.profile
    );
    if run.baseline.is_none() && target != TargetKind::Sqlite {
        command.push_str(" --no-baseline");
    }
    if let Some(kind) = run.debug_corrupt.and_then(|k| k.to_possible_value()) {
        let kind = kind.get_name();
        command.push_str(&format!(" --debug-corrupt {kind}"));
    }
    writeln!(
        out,
        "Reproduce: `{command}` at commit `{}`{}.\n",
        record.git.commit,
        if record.git.dirty {
            " (the tree had uncommitted changes)"
        } else {
            ""
        }
    )
    .unwrap();

    out.push_str("## Reconciliation\n\n");
    out.push_str(
        "Every probe's rows were counted and checksummed in SQL by the target, and compared with \
         the host's count and checksum of the rows the generator made.\n\n",
    );
    for line in reconciliation_lines(rows, record) {
        writeln!(out, "{line}").unwrap();
    }

    writeln!(
        out,
        "\n## Median time per 1,000 rows on `{target}` (outside clock less the target's \
         preparation, 95% bootstrap interval)\n"
    )
    .unwrap();
    out.push_str(&ratio_table(rows, axis, target));
    if let Some(table) = baseline_table(rows, axis, target) {
        writeln!(
            out,
            "\n## `{target}` ÷ bare SQLite (ratio of median inside clocks: the writes alone on \
             both sides)\n"
        )
        .unwrap();
        out.push_str(&table);
    }
    if let Some(table) = clocks::table(rows, axis, target) {
        writeln!(
            out,
            "\n## Where the time goes on `{target}` (median ms per probe)\n\n\
             outside: the runner's clock around the request; prepare: the target generating the \
             rows and building the statements, before its inside clock starts; inside: the \
             writes and reading D1's answers (bind: handing the values to the D1 binding; D1: \
             D1's own `meta.duration`); outside − inside − prepare: what the request adds \
             (HTTP, JSON, freeing what the probe built).\n"
        )
        .unwrap();
        out.push_str(&table);
    }

    out.push_str("\n## Charts\n\n");
    for chart in charts {
        let file = |ext: &str| {
            chart
                .files
                .iter()
                .find(|f| f.extension().is_some_and(|e| e == ext))
                .and_then(|f| f.file_name())
                .map(|f| f.to_string_lossy().into_owned())
        };
        if let Some(png) = file("png") {
            writeln!(out, "![{}]({png})\n", chart.name).unwrap();
        }
        let svg = file("svg")
            .map(|f| format!(" ([SVG]({f}))"))
            .unwrap_or_default();
        writeln!(out, "*{}*{svg}\n", chart.caption).unwrap();
    }

    out.push_str("## Environment\n\n");
    let v = &record.versions;
    let m = &record.machine;
    for (what, value) in [
        ("d1bench", v.d1bench.as_str()),
        ("Worker", v.worker.as_str()),
        ("`worker` crate", v.worker_crate.as_str()),
        ("wrangler", v.wrangler.as_str()),
        ("workerd", v.workerd.as_str()),
        ("SQLite (baseline, bundled)", v.sqlite.as_str()),
        ("rustc", v.rustc.as_str()),
    ] {
        writeln!(out, "- {what}: {value}").unwrap();
    }
    writeln!(
        out,
        "- machine: {}, {}, {} ({} CPUs), {} GiB\n",
        m.os, m.arch, m.cpu, m.cpus, m.memory_gib
    )
    .unwrap();
    out.push_str(
        "Files: `results.csv` (every probe, warm-ups excepted), `summary.csv` (every point: \
         median, p95, min, max, 95% bootstrap interval of the median), `run.toml` (provenance and \
         totals).\n",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> TargetKind {
        serde_json::from_value(serde_json::json!(name)).unwrap()
    }

    fn row(
        target: &str,
        strategy: Strategy,
        columns: usize,
        outcome: &str,
        outside_ms: f64,
    ) -> ResultRow {
        let mut row = crate::records::probe_row::tests_support::row();
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
        let rows = [
            row("local", Strategy::Bound, 64, "ok", 50.0),
            row("local", Strategy::Bound, 64, "ok", 52.0),
            row("local", Strategy::Bound, 64, "ok", 90.0),
            row("local", Strategy::Literal, 64, "ok", 18.0),
            row("local", Strategy::Literal, 64, "ok", 19.0),
            row("local", Strategy::Literal, 64, "ok", 20.0),
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
        assert!(at_64[1].starts_with("520 ("), "{at_64:?}");
        assert!(at_64[2].starts_with("190 ("), "{at_64:?}");
        assert_eq!(at_64[3], "0.37");
        assert_eq!(
            cells_of(lines[3]),
            ["128", "10.0", "refused (too-many-variables)", "–"]
        );
    }

    #[test]
    fn the_baseline_table_divides_by_sqlite_at_the_same_point() {
        let rows = [
            row("local", Strategy::Bound, 8, "ok", 40.0),
            row("local", Strategy::Literal, 8, "ok", 10.0),
            row("sqlite", Strategy::Bound, 8, "ok", 4.0),
            row("sqlite", Strategy::Literal, 8, "ok", 5.0),
        ];
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
        assert_eq!(cells_of(lines[2]), ["8", "10.00", "2.00"]);
        // The inside clocks are divided, whatever the outside clock carried besides.
        let mut slow_outside = rows.clone();
        slow_outside[0].outside_ms = 4_000.0;
        assert_eq!(
            baseline_table(&slow_outside, Axis::Columns, kind("local")),
            Some(text)
        );
        assert_eq!(
            baseline_table(&rows[..2], Axis::Columns, kind("local")),
            None
        );
        assert_eq!(
            baseline_table(&rows[2..], Axis::Columns, kind("sqlite")),
            None
        );
        // The baseline's own lines never appear in the target's table.
        assert!(!ratio_table(&rows, Axis::Columns, kind("local")).contains("4.00"));
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
            ],
        }];
        let md = markdown(&record("complete", totals.clone()), &rows, &charts);
        for expected in [
            "# column-sweep: Bound vs literal",
            "profile `smoke` of `experiments/column-sweep.toml` on the `local` target, with the same probes on sqlite (bare SQLite, the baseline: not D1)",
            "status complete.",
            "Reproduce: `cargo xtask run column-sweep --profile smoke --target local` at commit `c0ffee`.",
            "- `local`: 2 probes (0 refused, 0 errors); 200 rows expected, 200 present, checksums equal; every probe reconciled",
            "- bare SQLite (baseline): 2 probes",
            "| 8 | 400 | 100 | 0.25 |",
            "| 8 | 10.00 | 2.00 |",
            "## `local` ÷ bare SQLite (ratio of median inside clocks: the writes alone on both sides)",
            "## Where the time goes on `local` (median ms per probe)",
            "| 8 | bound | 40.0 | – | 20.0 | – | 2.0 | 4.0 |",
            "![time-per-1000-rows-vs-columns](time-per-1000-rows-vs-columns.png)",
            "*Median time per 1,000 rows.* ([SVG](time-per-1000-rows-vs-columns.svg))",
            "- wrangler: 4.164.0",
            "- SQLite (baseline, bundled): 3.50.2",
        ] {
            assert!(md.contains(expected), "missing {expected:?} in:\n{md}");
        }
        assert!(!md.contains("INVALID"));

        let mut corrupted = record("invalid", totals);
        corrupted.run.debug_corrupt = Some(crate::flags::DebugCorruption::TextByte);
        let mut bad = rows.clone();
        bad[0].checksum_equal = false;
        bad[0].reconciled = false;
        let md = markdown(&corrupted, &bad, &charts);
        assert!(md.contains("status **INVALID**"), "{md}");
        assert!(md.contains("**DEBUG RUN**"), "{md}");
        assert!(md.contains("--debug-corrupt text-byte`"), "{md}");
        assert!(md.contains("checksums DIFFER for 1 of 2 probes"), "{md}");
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
        assert_eq!(cells_of(lines[2]), ["8", "", "100"]);
        assert_eq!(cells_of(lines[3]), ["8", "all non-ASCII", "200"]);
    }
}
