//! The workload summary's tests: the read-path claims judged by their intervals (arms apart
//! and interleaved), the control, and the generator told from a saturated target.

use super::super::claims::{Clock, Comparison, Design, Verdict};
use super::*;
use crate::studies::workload::report::load_stats::stats;
use d1bench_core::{Outcome, RefusalKind};

fn row(point: usize, index: IndexKind, seq: u64, latency_ms: f64) -> OpRow {
    OpRow {
        target: TargetKind::Sqlite,
        point,
        index,
        op: Operation::Aggregate,
        seq,
        scheduled_ms: seq as f64 * 10.0,
        latency_ms,
        service_ms: latency_ms,
        inside_ms: Some(latency_ms),
        ..crate::studies::workload::row::tests_support::row()
    }
}

/// Covering at 0.6 of key, with noise: the −40% claim holds; at 0.95 of it, it does not.
#[test]
fn the_covering_index_claim_is_judged_by_its_interval() {
    let mut rng = fastrand::Rng::with_seed(3);
    for (factor, holds) in [(0.6, true), (0.95, false)] {
        let mut rows = Vec::new();
        for seq in 0..2000 {
            let base = 10.0 + rng.f64();
            rows.push(row(1, IndexKind::Key, seq, base));
            rows.push(row(
                2,
                IndexKind::Covering,
                seq,
                factor * (10.0 + rng.f64()),
            ));
        }
        let stats = stats(&rows);
        assert_eq!(stats.len(), 2);
        let answers = answers(&stats);
        let median = answers.iter().find(|a| a.q == 0.5).unwrap();
        assert!((median.ratio - factor).abs() < 0.05, "{}", median.ratio);
        assert_eq!(median.design, Design::Apart);
        assert_eq!(
            matches!(median.verdict(), Verdict::Holds | Verdict::HoldsLarger),
            holds,
            "{}",
            median.verdict()
        );
    }
}

/// Arms interleaved in one point under a drift that doubles latency through the point:
/// compared block by block, the control stays at 1 and the covering index's 0.6 holds,
/// each with a batch-means interval.
#[test]
fn interleaved_arms_are_compared_over_time_blocks() {
    let mut rng = fastrand::Rng::with_seed(9);
    let mut rows = Vec::new();
    for seq in 0..4000u64 {
        let drift = 1.0 + seq as f64 / 4000.0;
        let index = if rng.bool() {
            IndexKind::Key
        } else {
            IndexKind::Covering
        };
        for op in [Operation::PointRead, Operation::Aggregate] {
            let factor = match (op, index) {
                (Operation::Aggregate, IndexKind::Covering) => 0.6,
                _ => 1.0,
            };
            rows.push(OpRow {
                op,
                point: if op == Operation::PointRead { 1 } else { 2 },
                ..row(1, index, seq, factor * drift * (10.0 + rng.f64()))
            });
        }
    }
    let answers = answers(&stats(&rows));
    let p50 = |what: Comparison| {
        answers
            .iter()
            .find(|a| a.what == what && a.q == 0.5 && a.clock == Clock::Latency)
            .unwrap()
    };
    let control = p50(Comparison::IndexControl);
    assert_eq!(control.design, Design::Interleaved);
    assert_eq!(control.ci.unwrap().method, crate::stats::Method::BatchMeans);
    assert_eq!(
        control.verdict(),
        Verdict::ControlHolds,
        "{}",
        control.ratio
    );
    // No difference, and a narrow interval: shown equivalent to 1, which the finding says.
    assert_eq!(
        control.equivalence,
        Some(crate::stats::power::Equivalence::WithinFive),
        "{:?}",
        control.ci
    );
    assert!(
        control
            .finding()
            .ends_with("equivalent to 1 within ±5% (two one-sided tests)"),
        "{}",
        control.finding()
    );
    let covering = p50(Comparison::CoveringIndex);
    assert_eq!(covering.finding(), covering.verdict().to_string());
    assert!((covering.ratio - 0.6).abs() < 0.02, "{}", covering.ratio);
    assert!(
        matches!(covering.verdict(), Verdict::Holds | Verdict::HoldsLarger),
        "{}",
        covering.verdict()
    );
}

/// On a point read neither index is used: covering ÷ key is the control, expected 1, and a
/// ratio away from it is called drift, never a claim that holds.
#[test]
fn covering_against_key_on_a_point_read_is_the_control() {
    let mut rng = fastrand::Rng::with_seed(5);
    for (factor, verdict) in [(1.0, Verdict::ControlHolds), (0.8, Verdict::ControlFaster)] {
        let mut rows = Vec::new();
        for seq in 0..2000 {
            for (point, index, f) in [(1, IndexKind::Key, 1.0), (2, IndexKind::Covering, factor)] {
                rows.push(OpRow {
                    op: Operation::PointRead,
                    ..row(point, index, seq, f * (10.0 + rng.f64()))
                });
            }
        }
        let answers = answers(&stats(&rows));
        let median = answers.iter().find(|a| a.q == 0.5).unwrap();
        assert_eq!(
            median.what,
            crate::studies::workload::report::claims::Comparison::IndexControl
        );
        assert_eq!(median.verdict(), verdict, "{}", median.verdict());
        let table = crate::studies::workload::report::claims::answers_table(&answers);
        assert!(table.contains("| 1 (control) |"), "{table}");
    }
}

/// The generator's own lateness makes it behind; lag that is all waiting for a free
/// thread (no lateness) is the target holding every thread: saturation, not the generator.
#[test]
fn a_late_generator_is_told_from_a_saturated_target_and_refusals_are_counted_by_class() {
    let mut rows: Vec<OpRow> = (0..200).map(|s| row(1, IndexKind::Key, s, 5.0)).collect();
    for r in rows.iter_mut().skip(190) {
        r.lag_ms = 40.0;
        r.late_ms = Some(40.0);
        r.outcome = Outcome::Refused;
        r.refusal = Some(RefusalKind::Overloaded);
    }
    let stats = stats(&rows);
    assert!(stats[0].behind);
    assert!(!stats[0].load.is_saturated(), "{:?}", stats[0].load);
    assert_eq!(stats[0].ok, 190);
    assert_eq!(stats[0].refused, [(RefusalKind::Overloaded, 10)]);
    let mut rows: Vec<OpRow> = (0..200).map(|s| row(1, IndexKind::Key, s, 5.0)).collect();
    assert!(!stats_of(&rows).behind);
    rows[150].lag_ms = 40.0;
    let waited = stats_of(&rows);
    assert!(!waited.behind);
    assert_eq!(
        waited.load.saturated,
        [super::super::saturation::Saturation::InFlightCap]
    );
}

fn stats_of(rows: &[OpRow]) -> OpStats {
    stats(rows).remove(0)
}
