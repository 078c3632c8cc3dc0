//! The tests of `reconcile`.

use super::*;
use d1bench_core::sql::plan;
use d1bench_core::{RefusalKind, RowGenerator, Strategy, TextMix};

fn probe(strategy: Strategy) -> ProbeRequest {
    ProbeRequest {
        probe_id: 4,
        strategy,
        columns: 10,
        rows: 95,
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

/// What an honest Worker answers for a probe that succeeded.
fn honest(probe: &ProbeRequest, plan: &Plan) -> ProbeResult {
    ProbeResult {
        probe_id: probe.probe_id,
        strategy: probe.strategy,
        columns: probe.columns,
        row_bytes: probe.row_bytes,
        rows_expected: probe.rows,
        statements_planned: plan.inserts.len(),
        statements_sent: plan.inserts.len(),
        d1_calls: if probe.strategy == Strategy::PerRow {
            plan.inserts.len()
        } else {
            1
        },
        rows_per_statement: plan.rows_per_statement(),
        max_statement_bytes: plan.max_statement_bytes(),
        prepare_ms: Some(1.0),
        inside_ms: 1.0,
        handover_ms: None,
        bind_ms: Some(0.5),
        call_ms: None,
        read_ms: None,
        d1_ms: Some(1.0),
        outcome: Outcome::Ok,
        refusal: None,
        error: None,
    }
}

#[test]
fn an_honest_result_reconciles_for_every_strategy() {
    for strategy in Strategy::ALL {
        let p = probe(strategy);
        let plan = plan(&p);
        assert_eq!(
            check(&p, &PlanShape::of(&plan), &honest(&p, &plan), p.rows),
            Ok(())
        );
    }
}

#[test]
fn a_missing_row_is_caught() {
    let p = probe(Strategy::Bound);
    let plan = plan(&p);
    let result = honest(&p, &plan);
    let err = check(&p, &PlanShape::of(&plan), &result, 94).unwrap_err();
    assert!(
        err.contains("rows present: expected 95, the target reported 94"),
        "{err}"
    );
}

#[test]
fn fewer_rows_acknowledged_than_planned_is_caught_even_when_they_are_all_there() {
    for strategy in Strategy::ALL {
        let p = probe(strategy);
        let plan = plan(&p);
        let mut result = honest(&p, &plan);
        result.rows_expected = p.rows - 1;
        let err = check(&p, &PlanShape::of(&plan), &result, p.rows - 1).unwrap_err();
        assert_eq!(
            err,
            format!(
                "rows acknowledged: expected {}, the target reported {}",
                p.rows,
                p.rows - 1
            ),
            "{strategy}"
        );
    }
}

#[test]
fn a_plan_that_differs_from_the_hosts_is_caught() {
    let p = probe(Strategy::Bound);
    let plan = plan(&p);
    let mut result = honest(&p, &plan);
    result.rows_per_statement = 11;
    assert!(
        check(&p, &PlanShape::of(&plan), &result, 95)
            .unwrap_err()
            .contains("rows per statement: expected 10")
    );
}

#[test]
fn a_refused_batch_must_leave_nothing() {
    let p = probe(Strategy::Literal);
    let plan = plan(&p);
    let mut result = honest(&p, &plan);
    result.outcome = Outcome::Refused;
    result.refusal = Some(RefusalKind::StatementTooLong);
    result.rows_expected = 0;
    assert_eq!(check(&p, &PlanShape::of(&plan), &result, 0), Ok(()));
    assert!(
        check(&p, &PlanShape::of(&plan), &result, 3)
            .unwrap_err()
            .contains("rows present: expected 0")
    );
    result.rows_expected = 3;
    assert!(
        check(&p, &PlanShape::of(&plan), &result, 3)
            .unwrap_err()
            .contains("after a failed batch")
    );
}

/// What an honest target's verification answers: the checksum of the rows it holds.
fn verified(probe: &ProbeRequest, rows: usize) -> Result<VerifyResult, TargetError> {
    let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
    Ok(VerifyResult {
        probe_id: probe.probe_id,
        table_exists: true,
        rows_present: rows,
        checksum: Some(Checksum::expected(&generator, rows)),
        served_by: None,
    })
}

#[test]
fn content_reconciles_when_the_checksums_agree_and_names_the_difference_otherwise() {
    let p = probe(Strategy::Literal);
    let plan = plan(&p);
    let result = honest(&p, &plan);
    let check = ContentCheck::of(&p, rows_that_must_remain(&p, &result), &verified(&p, 95));
    assert!(check.equal(), "{:?}", check.problem());
    assert_eq!(check.expected.rows, 95);

    // One row short, or one value changed: both show in the checksum.
    let short = ContentCheck::of(&p, rows_that_must_remain(&p, &result), &verified(&p, 94));
    assert!(!short.equal());
    let mut changed = verified(&p, 95).unwrap();
    changed.checksum.as_mut().unwrap().hash_sum_1 += 1;
    let changed = ContentCheck::of(&p, rows_that_must_remain(&p, &result), &Ok(changed));
    let problem = changed.problem().unwrap();
    assert!(
        problem.starts_with("content checksum: expected 95:"),
        "{problem}"
    );

    let status = TargetError::ErrorStatus {
        request: "POST /verify".into(),
        status: "500 Internal Server Error".into(),
        body: "boom".into(),
    };
    let failed = ContentCheck::of(&p, 95, &Err(status));
    assert_eq!(
        failed.problem().unwrap(),
        "content checksum not computed: POST /verify answered 500 Internal Server Error: boom"
    );
    let mut other = verified(&p, 95).unwrap();
    other.probe_id = 99;
    assert!(!ContentCheck::of(&p, 95, &Ok(other)).equal());
}

#[test]
fn a_refused_batch_must_leave_an_empty_table() {
    let p = probe(Strategy::Bound);
    let plan = plan(&p);
    let mut result = honest(&p, &plan);
    result.outcome = Outcome::Refused;
    assert_eq!(rows_that_must_remain(&p, &result), 0);
    let rows = rows_that_must_remain(&p, &result);
    assert!(ContentCheck::of(&p, rows, &verified(&p, 0)).equal());
    // A batch that left a single row behind was not atomic.
    assert!(!ContentCheck::of(&p, rows, &verified(&p, 1)).equal());
    // A table that was never created holds nothing, which is right here.
    let mut no_table = verified(&p, 0).unwrap();
    no_table.table_exists = false;
    no_table.checksum = None;
    assert!(ContentCheck::of(&p, rows, &Ok(no_table)).equal());
}

#[test]
fn per_row_stopped_early_keeps_the_rows_before_the_failure() {
    let p = probe(Strategy::PerRow);
    let plan = plan(&p);
    let mut result = honest(&p, &plan);
    result.outcome = Outcome::Error;
    result.statements_sent = 41;
    result.d1_calls = 41;
    result.rows_expected = 40;
    assert_eq!(check(&p, &PlanShape::of(&plan), &result, 40), Ok(()));
    assert_eq!(rows_that_must_remain(&p, &result), 40);
    assert!(ContentCheck::of(&p, 40, &verified(&p, 40)).equal());
    result.rows_expected = 41;
    assert!(check(&p, &PlanShape::of(&plan), &result, 41).is_err());
}

#[test]
fn totals_state_rows_and_checksums_and_any_mismatch_makes_the_run_invalid() {
    let mut totals = Totals::default();
    let row = crate::studies::sweep::row::tests_support::row();
    totals.add(&row);
    totals.add_warmup(&row);
    assert!(totals.all_reconciled());
    assert_eq!(
        totals.line("probes"),
        "1 probes (0 refused, 0 errors; 1 warm-ups, not in the figures); 100 rows expected, 100 present, \
             checksums equal; every probe reconciled"
    );
    let mut corrupted = row.clone();
    corrupted.checksum_equal = false;
    corrupted.reconciled = false;
    totals.add(&corrupted);
    assert!(!totals.all_reconciled());
    assert!(
            totals.line("probes").ends_with(
                "checksums DIFFER for 1 of 2 probes; 1 of 2 probes did NOT reconcile: the run is INVALID"
            ),
            "{}",
            totals.line("probes")
        );
    let mut warm = Totals::default();
    warm.add_warmup(&corrupted);
    assert!(!warm.all_reconciled());
    assert!(
        warm.line("probes")
            .contains("1 of 1 warm-ups did NOT reconcile")
    );
    assert_eq!(totals.merged(&warm).warmups, 2);
}

#[test]
fn a_target_failure_is_counted_apart_and_does_not_make_the_run_invalid() {
    let mut totals = Totals::default();
    let ok = crate::studies::sweep::row::tests_support::row();
    totals.add(&ok);
    let mut lost = ok.clone();
    lost.target_failed = true;
    lost.reconciled = false;
    lost.outcome = Outcome::Error;
    lost.rows_expected = 0;
    lost.rows_present = 0;
    totals.add(&lost);
    assert!(totals.all_reconciled(), "{}", totals.line("probes"));
    assert_eq!(totals.target_failures, 1);
    assert!(
        totals.line("probes").contains("1 lost to target failures"),
        "{}",
        totals.line("probes")
    );
    // A warm-up the target gave no answer for is not recorded, so it is counted apart.
    let mut warm = Totals::default();
    warm.add_warmup(&ok);
    warm.add_warmup(&lost);
    let totals = totals.merged(&warm);
    assert!(totals.all_reconciled(), "{}", totals.line("probes"));
    assert_eq!(
        (totals.warmups, totals.warmups_target_failed),
        (2, 1),
        "{totals:?}"
    );
    assert!(
        totals
            .line("probes")
            .contains("; 2 warm-ups, not in the figures, 1 of them lost to target failures)"),
        "{}",
        totals.line("probes")
    );
}
