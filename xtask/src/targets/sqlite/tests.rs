//! The tests of `sqlite`.

use d1bench_core::limits::MAX_STATEMENT_BYTES;

use super::*;
use crate::records::reconcile::{self, ContentCheck};
use d1bench_core::ladder::{CallMode, Held, LadderKind};
use d1bench_core::{Corruption, TextMix};
use d1bench_core::{Outcome, RefusalKind};

fn probe(strategy: Strategy, columns: usize, rows: usize, row_bytes: usize) -> ProbeRequest {
    ProbeRequest {
        probe_id: 11,
        strategy,
        columns,
        rows,
        row_bytes,
        seed: 2,
        rows_per_statement: None,
        json_payload_bytes: None,
        text: TextMix::HOSTILE,
        indexes: 1,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

/// Runs a probe on the sqlite target and reconciles it as a run does.
fn run(target: &mut SqliteSession, p: &ProbeRequest) -> (ProbeResult, usize, ContentCheck) {
    assert_eq!(target.setup(p).unwrap().error, None);
    let timed = target.probe(p);
    let result = timed.result.unwrap();
    let prepare_ms = result
        .prepare_ms
        .expect("the sqlite target times its preparation");
    assert_eq!(timed.outside_ms, prepare_ms + result.inside_ms);
    assert_eq!(
        (result.bind_ms, result.d1_ms),
        (None, None),
        "no binding, no D1"
    );
    let verified = target.verify(p);
    let present = verified.as_ref().unwrap().rows_present;
    let plan_check = reconcile::check(
        p,
        &reconcile::PlanShape::of(&sql::plan(p)),
        &result,
        present,
    );
    assert_eq!(plan_check, Ok(()), "{result:?}");
    let rows = reconcile::rows_that_must_remain(p, &result);
    let content = ContentCheck::of(p, rows, &verified);
    (result, present, content)
}

#[test]
fn every_strategy_writes_what_the_generator_makes() {
    let mut target = SqliteSession::open().unwrap();
    for strategy in Strategy::ALL {
        let p = probe(strategy, 7, 120, 300);
        let (result, present, content) = run(&mut target, &p);
        assert_eq!(result.outcome, Outcome::Ok);
        assert_eq!(present, 120);
        assert!(content.equal(), "{strategy}: {:?}", content.problem());
    }
    // Every probe dropped its table.
    let tables: i64 = target
        .db
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert_eq!(tables, 0);
}

#[test]
fn a_literal_row_over_the_statement_limit_is_refused_and_leaves_nothing() {
    let mut target = SqliteSession::open().unwrap();
    let mut p = probe(Strategy::Literal, 4, 3, 120_000);
    p.text = TextMix::default();
    let (result, present, content) = run(&mut target, &p);
    assert_eq!(result.outcome, Outcome::Refused, "{result:?}");
    assert_eq!(result.refusal, Some(RefusalKind::StatementTooLong));
    assert_eq!((result.rows_expected, present), (0, 0));
    assert!(content.equal(), "{:?}", content.problem());
    assert_eq!(content.expected, Checksum::default());
    // Bound writes the same rows without trouble.
    p.strategy = Strategy::Bound;
    let (result, _, content) = run(&mut target, &p);
    assert_eq!(result.outcome, Outcome::Ok);
    assert!(content.equal());
}

#[test]
fn a_deliberately_corrupted_row_is_caught() {
    let mut target = SqliteSession::open().unwrap();
    for corruption in Corruption::ALL {
        for strategy in Strategy::ALL {
            let mut p = probe(strategy, 5, 40, 200);
            p.debug_corrupt = Some(corruption);
            let (_, present, content) = run(&mut target, &p);
            // The counts agree: only the content shows the corruption.
            assert_eq!(present, 40);
            let problem = content.problem().expect("the corruption went unnoticed");
            assert!(
                problem.starts_with("content checksum: expected 40:"),
                "{problem}"
            );
        }
    }
}

#[test]
fn the_limits_refuse_as_d1_documents() {
    let db = open_d1_like().unwrap();
    let hundred = vec!["?"; 100].join(",");
    db.prepare(&format!("SELECT {hundred}")).unwrap();
    let err = db
        .prepare(&format!("SELECT {hundred},?"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("too many SQL variables"), "{err}");
    let long = format!("SELECT '{}'", "x".repeat(MAX_STATEMENT_BYTES));
    let err = db.prepare(&long).unwrap_err().to_string();
    assert!(err.contains("too big") || err.contains("too long"), "{err}");
    let columns: Vec<String> = (0..101).map(|j| format!("c{j}")).collect();
    let err = db
        .execute(&format!("CREATE TABLE t ({})", columns.join(",")), [])
        .unwrap_err()
        .to_string();
    assert!(err.contains("too many columns"), "{err}");
}

#[test]
fn a_table_the_limits_refuse_is_a_refusal_at_setup_and_verifies_as_absent() {
    let mut target = SqliteSession::open().unwrap();
    let p = probe(Strategy::Bound, 101, 1, 1000);
    let setup = target.setup(&p).unwrap();
    let error = setup.error.expect("101 columns are refused");
    assert_eq!(RefusalKind::classify(&error), RefusalKind::TooManyColumns);
    let verified = target.verify(&p).unwrap();
    assert!(!verified.table_exists);
    assert_eq!(verified.checksum, None);
}

#[test]
fn a_refused_statement_in_a_batch_rolls_the_whole_batch_back() {
    let mut target = SqliteSession::open().unwrap();
    let rung = RungRequest {
        rung_id: 3,
        ladder: LadderKind::BatchAccounting,
        value: 4,
        held: Held {
            mode: Some(CallMode::Batches),
            batches: Some(2),
            ..Held::default()
        },
    };
    target.rung_prepare(&rung).unwrap();
    // Make the second batch's last statement fail: a value the column cannot take.
    target
        .db
        .execute_batch(
            "CREATE TRIGGER no_three BEFORE INSERT ON r_3 WHEN NEW.c0 = 3 \
                 BEGIN SELECT RAISE(ABORT, 'three refused'); END",
        )
        .unwrap();
    let result = target.rung_climb(&rung).result.unwrap();
    assert_eq!(result.calls_completed, 1);
    assert_eq!(result.rows_acknowledged, 2);
    assert_eq!(result.outcome, Outcome::Error);
    let finish = target.rung_finish(&rung).unwrap();
    assert_eq!(finish.rows_present, 2, "the failed batch left rows behind");
    assert!(finish.table_exists);
}

#[test]
fn a_refused_create_table_is_data() {
    let mut target = SqliteSession::open().unwrap();
    let rung = RungRequest {
        rung_id: 4,
        ladder: LadderKind::Columns,
        value: 101,
        held: Held::default(),
    };
    assert_eq!(target.rung_prepare(&rung).unwrap().error, None);
    let result = target.rung_climb(&rung).result.unwrap();
    assert_eq!(result.refusal, Some(RefusalKind::TooManyColumns));
    assert_eq!(result.calls_completed, 0);
    let finish = target.rung_finish(&rung).unwrap();
    assert!(!finish.table_exists);
    assert_eq!(finish.error, None);
}
