//! A library's probe reconciled: the rows it wrote counted and checksummed like any probe's, and
//! what it says it sent held against what D1 acknowledged. Its statements are its own, not the
//! host's plan, so there is no plan to hold them to; `base::orm::emits` models them, and a row
//! records where they differ (`unlike_model`) without making the data suspect.

use d1bench_core::{Outcome, ProbeRequest, ProbeResult};

use super::Mismatches;
use crate::base::orm::Sent;

/// The rows (the first ones of the generator, in order) that must be in the table after a
/// library's writes: all of them after success; after a failure, the rows D1 acknowledged (a
/// library that makes several calls leaves the ones before the failed call).
pub fn rows_that_must_remain(probe: &ProbeRequest, result: &ProbeResult) -> usize {
    match result.outcome {
        Outcome::Ok => probe.rows,
        Outcome::Refused | Outcome::Error => result.rows_expected,
    }
}

/// A library's answer checked against its probe and itself: the probe and its columns, every
/// row acknowledged after success, the rows present equal to those acknowledged, and the count
/// of what it sent equal to the result's statements, D1 calls and rows.
pub fn check(
    probe: &ProbeRequest,
    result: &ProbeResult,
    sent: &Sent,
    rows_present: usize,
) -> Result<(), String> {
    let mut m = Mismatches::default();
    m.expect(
        "probe_id",
        probe.probe_id as usize,
        result.probe_id as usize,
    );
    m.expect("columns", probe.columns, result.columns);
    if result.outcome == Outcome::Ok {
        m.expect("rows acknowledged", probe.rows, result.rows_expected);
    }
    m.expect("rows counted as sent", result.rows_expected, sent.rows);
    m.expect("statements sent", sent.statements, result.statements_sent);
    m.expect("D1 calls", sent.d1_calls(), result.d1_calls);
    m.expect("rows present", result.rows_expected, rows_present);
    m.into_result()
}

#[cfg(test)]
mod tests {
    use super::*;
    use d1bench_core::{Strategy, TextMix};

    fn probe() -> ProbeRequest {
        ProbeRequest {
            probe_id: 4,
            strategy: Strategy::BatchedRows,
            columns: 8,
            rows: 100,
            row_bytes: 100,
            seed: 1,
            rows_per_statement: None,
            json_payload_bytes: None,
            text: TextMix::default(),
            indexes: 0,
            debug_corrupt: None,
            debug_slow_percent: None,
        }
    }

    fn answer(rows: usize, outcome: Outcome) -> (ProbeResult, Sent) {
        let result = ProbeResult {
            probe_id: 4,
            strategy: Strategy::BatchedRows,
            columns: 8,
            row_bytes: 100,
            rows_expected: rows,
            statements_planned: 9,
            statements_sent: 9,
            d1_calls: 1,
            rows_per_statement: 12,
            max_statement_bytes: 0,
            prepare_ms: None,
            inside_ms: 1.0,
            handover_ms: None,
            bind_ms: None,
            call_ms: None,
            read_ms: None,
            d1_ms: None,
            outcome,
            refusal: None,
            error: None,
        };
        let sent = Sent {
            statements: 9,
            rows,
            rows_per_statement: 12,
            bound_values: 800,
            bound_per_statement: 96,
            calls: [("batch".to_owned(), 1)].into(),
            ..Sent::default()
        };
        (result, sent)
    }

    #[test]
    fn a_library_that_wrote_every_row_reconciles() {
        let (result, sent) = answer(100, Outcome::Ok);
        assert_eq!(check(&probe(), &result, &sent, 100), Ok(()));
        assert_eq!(rows_that_must_remain(&probe(), &result), 100);
    }

    #[test]
    fn missing_rows_and_a_count_that_disagrees_with_the_answer_do_not() {
        let (result, sent) = answer(100, Outcome::Ok);
        assert_eq!(
            check(&probe(), &result, &sent, 99),
            Err("rows present: expected 100, the target reported 99".into())
        );
        let (short, sent) = answer(96, Outcome::Ok);
        assert!(
            check(&probe(), &short, &sent, 96)
                .unwrap_err()
                .starts_with("rows acknowledged: expected 100")
        );
        let (result, mut miscounted) = answer(100, Outcome::Ok);
        miscounted.calls.insert("all".into(), 2);
        assert_eq!(
            check(&probe(), &result, &miscounted, 100),
            Err("D1 calls: expected 3, the target reported 1".into())
        );
    }

    #[test]
    fn after_a_failure_the_rows_acknowledged_must_remain() {
        let (result, sent) = answer(36, Outcome::Refused);
        assert_eq!(rows_that_must_remain(&probe(), &result), 36);
        assert_eq!(check(&probe(), &result, &sent, 36), Ok(()));
    }
}
