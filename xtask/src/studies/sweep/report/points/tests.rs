//! The tests of `points`.

use super::*;
use crate::studies::sweep::row::tests_support;

fn row(target: &str, strategy: Strategy, columns: usize, outcome: &str, ms: f64) -> ProbeRow {
    let target: TargetKind = serde_json::from_value(serde_json::json!(target)).unwrap();
    let outcome: Outcome = outcome.parse().unwrap();
    let mut row = tests_support::row();
    row.target = target;
    row.strategy = strategy;
    row.columns = columns;
    row.outcome = outcome;
    row.outside_ms = ms;
    row.inside_ms = ms / 2.0;
    row.overhead_ms = Some(ms / 2.0);
    row
}

#[test]
fn points_group_by_target_label_strategy_and_x() {
    let mut labelled = row("local", Strategy::Bound, 8, "ok", 30.0);
    labelled.label = "all non-ASCII".into();
    let rows = vec![
        row("local", Strategy::Bound, 8, "ok", 10.0),
        row("local", Strategy::Bound, 8, "ok", 20.0),
        row("sqlite", Strategy::Bound, 8, "ok", 1.0),
        row("local", Strategy::Bound, 16, "refused", 2.0),
        labelled,
    ];
    let points = points(&rows, Axis::Columns);
    let keys: Vec<_> = points
        .iter()
        .map(|p| {
            (
                p.line.target.name(),
                p.line.label.as_str(),
                p.x,
                p.rows.len(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("local", "", 8.0, 2),
            ("local", "", 16.0, 1),
            ("local", "all non-ASCII", 8.0, 1),
            ("sqlite", "", 8.0, 1)
        ]
    );
    assert_eq!(points[0].summary(Measure::OutsideMs).unwrap().median, 15.0);
    assert!(points[1].refused_only());
    assert_eq!(points[1].summary(Measure::OutsideMs), None);
    assert_eq!(points[1].values(Measure::RowsPerStatement), [12.0]);
}

#[test]
fn times_count_only_successes_and_d1_ms_only_where_there_is_a_d1() {
    let mut sqlite = row("sqlite", Strategy::Bound, 8, "ok", 4.0);
    sqlite.d1_ms = None;
    assert_eq!(Measure::D1Ms.value(&sqlite), None);
    assert_eq!(Measure::OutsideMs.value(&sqlite), Some(4.0));
    // 100 rows: per 1,000 rows is ten times the probe's time.
    assert_eq!(Measure::MsPer1000Rows.value(&sqlite), Some(40.0));
    let mut local = row("local", Strategy::Bound, 8, "ok", 4.0);
    assert_eq!(Measure::PrepareMs.value(&local), None);
    (local.prepare_ms, local.bind_ms) = (Some(1.5), Some(0.25));
    assert_eq!(Measure::OutsideMs.value(&local), Some(4.0));
    assert_eq!(Measure::PrepareMs.value(&local), Some(1.5));
    assert_eq!(Measure::BindMs.value(&local), Some(0.25));
    // The authoritative time leaves the target's preparation out.
    assert_eq!(Measure::MsPer1000Rows.value(&local), Some(25.0));
    let refused = row("local", Strategy::Literal, 8, "refused", 3.0);
    assert_eq!(Measure::OutsideMs.value(&refused), None);
    assert_eq!(Measure::RowsPerStatement.value(&refused), Some(12.0));
    let error = row("local", Strategy::Literal, 8, "error", 3.0);
    assert_eq!(Measure::RowsPerStatement.value(&error), None);
}

#[test]
fn summary_csv_has_every_measure_of_every_point_and_empty_stats_for_refusals() {
    let rows = vec![
        row("local", Strategy::Bound, 8, "ok", 10.0),
        row("local", Strategy::Bound, 8, "ok", 30.0),
        row("local", Strategy::Bound, 8, "ok", 20.0),
        row("local", Strategy::Literal, 8, "refused", 1.0),
    ];
    let text = String::from_utf8(summary_csv(&rows, Axis::Columns, None).unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "target,label,strategy,columns,row_bytes,rows,escape_share,non_ascii_share,indexes,\
             rows_per_statement,measure,n,ok,refused,errors,median,p95,min,max,ci_low,ci_high,\
             ci_coverage,ci_method,n_denominator,precision,precision_reached,nul_share,sessions,\
             detectable"
    );
    // Every measure of both points, and literal ÷ bound: no pair, as literal was refused.
    assert_eq!(lines.len(), 1 + 2 * Measure::SUMMARIZED.len() + 1);
    let ratio = lines[1 + 2 * Measure::SUMMARIZED.len()];
    assert!(
        ratio.ends_with(",ratio_to_bound,0,0,1,0,,,,,,,,,0,,,0.0,0,"),
        "{ratio}"
    );
    // Three repeats: no p95, and the interval is [min, max], covering 75%.
    assert_eq!(
        lines[1],
        "local,,bound,8,1000,100,0.0,0.0,0,12,outside_ms,3,3,0,0,20.0,,10.0,30.0,10.0,30.0,\
             0.75,order-statistic,,,,0.0,1,"
    );
    assert!(
        lines[2].contains(",ms_per_1000_rows,3,3,0,0,200.0,"),
        "{}",
        lines[2]
    );
    let literal = lines[1 + Measure::SUMMARIZED.len()];
    assert!(
        literal.ends_with("literal,8,1000,100,0.0,0.0,0,12,outside_ms,0,0,1,0,,,,,,,,,,,,0.0,0,"),
        "{literal}"
    );
}

fn at(target: &str, strategy: Strategy, repeat: usize, ms: f64) -> ProbeRow {
    ProbeRow {
        repeat,
        ..row(target, strategy, 8, "ok", ms)
    }
}

fn ratio_rows(rows: &[ProbeRow]) -> Vec<SummaryRow> {
    summary_rows(rows, Axis::Columns, None)
        .into_iter()
        .filter(|r| r.measure.starts_with("ratio_"))
        .collect()
}

#[test]
fn literal_over_bound_pairs_the_repeats_that_ran_side_by_side() {
    // Repeat 1 of bound failed: only repeats 0, 2 and 3 pair up, and each pair's own ratio
    // counts (the median of 10/20, 30/60, 40/50), not the ratio of the medians.
    let mut failed = at("local", Strategy::Bound, 1, 1.0);
    failed.outcome = Outcome::Error;
    let rows = [
        at("local", Strategy::Bound, 0, 20.0),
        failed,
        at("local", Strategy::Bound, 2, 60.0),
        at("local", Strategy::Bound, 3, 50.0),
        at("local", Strategy::Literal, 0, 10.0),
        at("local", Strategy::Literal, 1, 99.0),
        at("local", Strategy::Literal, 2, 30.0),
        at("local", Strategy::Literal, 3, 40.0),
    ];
    let ratios = ratio_rows(&rows);
    assert_eq!(ratios.len(), 1, "{ratios:?}");
    let r = &ratios[0];
    assert_eq!(
        (r.measure, r.strategy),
        ("ratio_to_bound", Strategy::Literal)
    );
    assert_eq!((r.n, r.n_denominator, r.ok), (3, Some(3), 4));
    assert_eq!((r.median, r.min, r.max), (Some(0.5), Some(0.5), Some(0.8)));
    assert_eq!(
        (r.ci_low, r.ci_high, r.ci_coverage, r.ci_method),
        (Some(0.5), Some(0.8), Some(0.75), Some("order-statistic"))
    );
}

#[test]
fn a_target_over_its_baseline_divides_the_medians_and_their_intervals() {
    let mut rows: Vec<ProbeRow> = (0..5)
        .map(|r| at("local", Strategy::Bound, r, 100.0 + r as f64))
        .collect();
    rows.extend((0..6).map(|r| at("sqlite", Strategy::Bound, r, 10.0 + r as f64)));
    let ratios = ratio_rows(&rows);
    assert_eq!(ratios.len(), 1, "{ratios:?}");
    let r = &ratios[0];
    assert_eq!(
        (r.measure, r.target),
        ("ratio_to_sqlite", TargetKind::Local)
    );
    assert_eq!((r.n, r.n_denominator), (5, Some(6)));
    // Medians 1020 and 125 (ms per 1,000 rows); both intervals [min, max] at √95%.
    assert_eq!(r.median, Some(1020.0 / 125.0));
    assert_eq!((r.min, r.max, r.p95), (None, None, None));
    assert_eq!(
        (r.ci_low, r.ci_high),
        (Some(1000.0 / 150.0), Some(1040.0 / 100.0))
    );
    assert_eq!(r.ci_coverage, Some(0.9375 * 0.96875));
    assert_eq!(r.ci_method, Some("independent-ratio"));
}

#[test]
fn with_a_precision_each_measure_says_whether_its_interval_got_there() {
    // Six repeats: ms per 1,000 rows 1000 to 1050, within ±5% of the median 1025 but not
    // ±1%; a refused point reaches nothing.
    let mut rows: Vec<ProbeRow> = (0..6)
        .map(|r| at("local", Strategy::Bound, r, 100.0 + r as f64))
        .collect();
    rows.push(row("local", Strategy::Literal, 8, "refused", 1.0));
    let reached = |precision| -> Vec<(&'static str, Strategy, Option<bool>)> {
        summary_rows(&rows, Axis::Columns, precision)
            .into_iter()
            .filter(|r| r.measure == "ms_per_1000_rows" || r.measure == "ratio_to_bound")
            .map(|r| (r.measure, r.strategy, r.precision_reached))
            .collect()
    };
    use Strategy::{Bound, Literal};
    assert_eq!(
        reached(Some(0.05)),
        [
            ("ms_per_1000_rows", Bound, Some(true)),
            ("ms_per_1000_rows", Literal, Some(false)),
            ("ratio_to_bound", Literal, None),
        ]
    );
    assert_eq!(reached(Some(0.01))[0].2, Some(false));
    assert_eq!(reached(None)[0].2, None);
    let csv = summary_rows(&rows, Axis::Columns, Some(0.05));
    assert!(csv.iter().all(|r| r.precision == Some(0.05)));
}

fn in_session(
    target: &str,
    strategy: Strategy,
    session: usize,
    repeat: usize,
    ms: f64,
) -> ProbeRow {
    ProbeRow {
        session,
        ..at(target, strategy, repeat, ms)
    }
}

#[test]
fn over_sessions_every_interval_is_between_sessions_and_discarded_rows_are_left_out() {
    use crate::stats::sessions::over_sessions;
    // Three sessions of two repeats: bound 100 ms per probe times the session's level,
    // literal half of bound; the baseline a tenth of local, session by session.
    let level = [1.0, 1.2, 0.9];
    let mut rows = Vec::new();
    for (s, l) in level.iter().enumerate() {
        for repeat in 0..2 {
            let noise = 1.0 + 0.01 * repeat as f64;
            rows.push(in_session(
                "local",
                Strategy::Bound,
                s,
                repeat,
                100.0 * l * noise,
            ));
            rows.push(in_session(
                "local",
                Strategy::Literal,
                s,
                repeat,
                50.0 * l * noise,
            ));
            rows.push(in_session(
                "sqlite",
                Strategy::Bound,
                s,
                repeat,
                10.0 * l * noise,
            ));
        }
    }
    // A discarded row that would move every figure if it counted.
    rows.push(ProbeRow {
        warmup_discarded: true,
        ..in_session("local", Strategy::Bound, 0, 2, 10_000.0)
    });
    let summary = summary_rows(&rows, Axis::Columns, None);
    let get = |measure: &str, strategy: Strategy, target: TargetKind| {
        summary
            .iter()
            .find(|r| r.measure == measure && r.strategy == strategy && r.target == target)
            .unwrap()
    };
    let ms = get("ms_per_1000_rows", Strategy::Bound, TargetKind::Local);
    assert_eq!(
        (ms.n, ms.sessions, ms.ci_method),
        (6, 3, Some("between-sessions"))
    );
    let medians: Vec<f64> = level.iter().map(|l| 1000.0 * l * 1.005).collect();
    let over = over_sessions(&medians, 0.95).unwrap();
    assert!((ms.median.unwrap() - over.center).abs() < 1e-9, "{ms:?}");
    assert!((ms.ci_low.unwrap() - over.interval.unwrap().low).abs() < 1e-9);
    assert_eq!(
        ms.max,
        Some(1000.0 * 1.2 * 1.01),
        "the discarded row is not the max"
    );
    // literal ÷ bound: 0.5 in every pair of every session, so no spread at all.
    let ratio = get("ratio_to_bound", Strategy::Literal, TargetKind::Local);
    assert!((ratio.median.unwrap() - 0.5).abs() < 1e-12);
    assert_eq!(
        (ratio.sessions, ratio.ci_method),
        (3, Some("between-sessions"))
    );
    assert!((ratio.ci_high.unwrap() - 0.5).abs() < 1e-9);
    // local ÷ sqlite: 10 in every session beside its baseline's, whatever the level.
    let baseline = get("ratio_to_sqlite", Strategy::Bound, TargetKind::Local);
    assert!(
        (baseline.median.unwrap() - 10.0).abs() < 1e-9,
        "{baseline:?}"
    );
    assert!((baseline.ci_low.unwrap() - 10.0).abs() < 1e-9);
    assert_eq!(
        (baseline.sessions, baseline.ci_method),
        (3, Some("between-sessions"))
    );
}
