//! The tests of `row`.

use super::*;
use crate::records::csv::{Appender, read};
use d1bench_core::TextMix;

fn probe() -> ProbeRequest {
    ProbeRequest {
        probe_id: 3,
        strategy: Strategy::Literal,
        columns: 4,
        rows: 10,
        row_bytes: 50,
        seed: 1,
        rows_per_statement: None,
        json_payload_bytes: None,
        text: TextMix::default(),
        indexes: 0,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

fn result() -> ProbeResult {
    ProbeResult {
        probe_id: 3,
        strategy: Strategy::Literal,
        columns: 4,
        row_bytes: 50,
        rows_expected: 0,
        statements_planned: 1,
        statements_sent: 1,
        d1_calls: 1,
        rows_per_statement: 10,
        max_statement_bytes: 700,
        prepare_ms: Some(1.25),
        inside_ms: 2.0,
        handover_ms: Some(0.25),
        bind_ms: Some(0.5),
        call_ms: Some(1.0),
        read_ms: Some(0.25),
        d1_ms: Some(0.5),
        outcome: Outcome::Refused,
        refusal: Some(RefusalKind::StatementTooLong),
        error: Some("D1_ERROR: statement too long: SQLITE_TOOBIG, \"quoted\"\nsecond line".into()),
    }
}

#[test]
fn rows_read_back_equal_with_their_enums() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let mut writer = Appender::open(&path).unwrap();
    let first = ProbeRow::measured(
        "column-sweep",
        TargetKind::Local,
        0,
        0,
        &probe(),
        &result(),
        7.5,
    );
    assert!(!first.error.contains('\n'));
    assert!(
        !first.target_failed,
        "a measured row is an answer of the target"
    );
    writer.append(&first).unwrap();
    let js = ProbeRow {
        worker: Some(WorkerKind::Js),
        ..first.clone()
    };
    writer.append(&js).unwrap();
    let second = ProbeRow::target_failure(
        "column-sweep",
        TargetKind::Local,
        0,
        1,
        &probe(),
        3.0,
        "HTTP 500",
    );
    writer.append(&second).unwrap();
    let sent = Sent {
        statements: 42,
        rows: 500,
        rows_per_statement: 12,
        bound_values: 4000,
        bound_per_statement: 96,
        calls: [("all".to_owned(), 42)].into(),
        ..Sent::default()
    };
    let orm = ProbeRow {
        worker: Some(WorkerKind::JsOrm),
        outcome: Outcome::Ok,
        ..first.clone()
    }
    .sent_by(
        OrmWrite {
            orm: Orm::Kysely,
            idiom: Idiom::Documented,
        },
        &sent,
    );
    assert!(
        orm.unlike_model.contains("kysely is modelled to send"),
        "{}",
        orm.unlike_model
    );
    writer.append(&orm).unwrap();
    assert_eq!(
        read::<ProbeRow>(&path).unwrap(),
        vec![first, js, second, orm]
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(",0.25,1.0,0.25,js,false,,,,,,,\n"), "{text}");
    assert!(text.contains(",js-orm,false,,,kysely,96,all 42,"), "{text}");
    assert!(text.ends_with(",documented\n"), "{text}");
    assert!(text.contains(",refused,statement-too-long,"), "{text}");
}

#[test]
fn header_starts_with_the_documented_columns() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.csv");
    let row = ProbeRow::measured("e", TargetKind::Local, 0, 0, &probe(), &result(), 1.0);
    Appender::open(&path).unwrap().append(&row).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let header = text.lines().next().unwrap();
    assert_eq!(
        header,
        "experiment,target,strategy,columns,row_bytes,rows,rows_per_statement,statements,d1_calls,repeat,\
             outcome,refusal,rows_expected,rows_present,inside_ms,outside_ms,d1_ms,error,\
             probe_id,series,seed,statements_sent,max_statement_bytes,reconciled,reconcile_note,\
             label,escape_share,non_ascii_share,indexes,overhead_ms,\
             checksum_expected,checksum_present,checksum_equal,target_failed,started_ms,calls_ms,\
             prepare_ms,bind_ms,nul_share,isolate_heap_peak_bytes,session,warmup_discarded,\
             handover_ms,call_ms,read_ms,worker,warmup,setup_ms,verify_ms,\
             orm,bound_per_statement,d1_call_kinds,unlike_model,idiom"
    );
}

#[test]
fn overhead_is_outside_minus_inside_minus_prepare_and_absent_without_a_result() {
    let row = ProbeRow::measured("e", TargetKind::Local, 0, 0, &probe(), &result(), 7.5);
    assert_eq!(row.overhead_ms, Some(4.25));
    assert_eq!(
        (row.prepare_ms, row.bind_ms, row.d1_ms),
        (Some(1.25), Some(0.5), Some(0.5))
    );
    let mut silent = result();
    (silent.prepare_ms, silent.d1_ms) = (None, None);
    let row = ProbeRow::measured("e", TargetKind::Local, 0, 0, &probe(), &silent, 7.5);
    assert_eq!((row.overhead_ms, row.d1_ms), (Some(5.5), None));
    // The sqlite target's outside clock is its preparation and writes, summed: nothing
    // else, exactly (0.1 + 0.2 is not 0.3 in floating point, so the order matters).
    let mut sqlite = result();
    (sqlite.prepare_ms, sqlite.inside_ms) = (Some(0.1), 0.2);
    let row = ProbeRow::measured("e", TargetKind::Sqlite, 0, 0, &probe(), &sqlite, 0.1 + 0.2);
    assert_eq!(row.overhead_ms, Some(0.0));
    let failed = ProbeRow::target_failure("e", TargetKind::Local, 0, 0, &probe(), 7.5, "HTTP 500");
    assert_eq!(failed.overhead_ms, None);
    assert_eq!(failed.d1_ms, None);
    assert!(failed.target_failed);
}

#[test]
fn a_refused_setup_is_a_classified_refusal_not_a_target_failure() {
    let row = ProbeRow::refused_at_setup(
        "e",
        TargetKind::Local,
        0,
        0,
        &probe(),
        "D1_ERROR: too many columns on t_3: SQLITE_ERROR",
    );
    assert_eq!(row.outcome, Outcome::Refused);
    assert_eq!(row.refusal, Some(RefusalKind::TooManyColumns));
    assert!(!row.target_failed);
}

#[test]
fn a_results_csv_of_the_earlier_columns_still_reads() {
    // The first rows of the example run's results.csv as committed before the newer columns.
    let path =
        crate::paths::project_root().join("xtask/tests/golden/results-before-new-columns.csv");
    let rows = read::<ProbeRow>(&path).unwrap();
    assert_eq!(rows.len(), 7);
    assert!(rows.iter().all(|r| !r.target_failed));
    // Written before probes recorded when they started.
    assert!(rows.iter().all(|r| r.started_ms.is_none()));
    // Written before the Worker reported its preparation and binding: read as absent.
    assert!(
        rows.iter()
            .all(|r| r.prepare_ms.is_none() && r.bind_ms.is_none())
    );
    assert!(rows.iter().all(|r| r.nul_share == 0.0));
    assert!(rows.iter().all(|r| r.isolate_heap_peak_bytes.is_none()));
}
