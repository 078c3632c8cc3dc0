//! The ladders' kinds, rungs, plans and tallies, and the planned SQL run on real SQLite.

use super::*;
use crate::generate::Value;

fn rung(ladder: LadderKind, value: usize) -> RungRequest {
    RungRequest {
        rung_id: 7,
        ladder,
        value,
        held: Held::default(),
    }
}

fn with(mut r: RungRequest, f: impl FnOnce(&mut Held)) -> RungRequest {
    f(&mut r.held);
    r
}

#[test]
fn every_ladder_name_parses_back_and_serializes_the_same() {
    for kind in LadderKind::ALL {
        assert_eq!(kind.name().parse::<LadderKind>().unwrap(), kind);
        assert_eq!(
            serde_json::to_string(&kind).unwrap(),
            format!("\"{}\"", kind.name())
        );
    }
    let err = "query-budgets".parse::<LadderKind>().unwrap_err();
    assert!(err.contains("query-budget, batch-accounting"), "{err}");
}

#[test]
fn query_budget_is_k_separate_one_row_calls() {
    let plan = plan(&rung(LadderKind::QueryBudget, 1001));
    assert_eq!(plan.calls.len(), 1001);
    assert!(plan.calls.iter().all(|c| matches!(c, Call::One(_))));
    assert_eq!(plan.rows(), 1001);
    assert_eq!(plan.completed(1000), (1000, 1000));
    assert_eq!(plan.prepare, ["CREATE TABLE r_7 (c0 INTEGER)"]);
}

#[test]
fn batch_accounting_modes_split_the_same_statements() {
    let base = rung(LadderKind::BatchAccounting, 2000);
    let one = plan(&with(base.clone(), |h| h.mode = Some(CallMode::OneAtATime)));
    assert_eq!(one.calls.len(), 2000);
    let batch = plan(&with(base.clone(), |h| h.mode = Some(CallMode::OneBatch)));
    assert_eq!(batch.calls.len(), 1);
    let split = plan(&with(base, |h| {
        h.mode = Some(CallMode::Batches);
        h.batches = Some(3)
    }));
    let sizes: Vec<usize> = split.calls.iter().map(|c| c.statements().len()).collect();
    assert_eq!(sizes, [667, 667, 666]);
    for p in [&one, &batch, &split] {
        assert_eq!(p.statements(), 2000);
        assert_eq!(p.rows(), 2000);
    }
    // A failed second batch leaves the first batch's rows only.
    assert_eq!(split.completed(1), (667, 667));
}

#[test]
fn param_ceiling_binds_rows_times_columns() {
    let r = with(rung(LadderKind::ParamCeiling, 34), |h| h.columns = Some(3));
    let plan = plan(&r);
    let Call::One(s) = &plan.calls[0] else {
        panic!("one statement")
    };
    assert_eq!(s.params.len(), 102);
    assert_eq!(s.sql.matches('?').count(), 102);
    assert_eq!(s.rows, 34);
    assert_eq!(
        plan.prepare,
        ["CREATE TABLE r_7 (c0 TEXT, c1 TEXT, c2 INTEGER)"]
    );
}

#[test]
fn statement_length_is_exact_in_bytes_for_both_texts() {
    for text in [TextKind::Ascii, TextKind::Multibyte] {
        for bytes in [100, 99_999, 100_000, 100_001] {
            let r = with(rung(LadderKind::StatementLength, bytes), |h| {
                h.text = Some(text)
            });
            r.validate().unwrap();
            let plan = plan(&r);
            assert_eq!(plan.max_statement_bytes(), bytes, "{text:?}");
            if text == TextKind::Multibyte {
                let overhead = plan.prepare.len() + "INSERT INTO r_7 (c0) VALUES ('')".len();
                assert!(
                    plan.max_statement_chars() <= bytes / 3 + overhead,
                    "{bytes}"
                );
            } else {
                assert_eq!(plan.max_statement_chars(), bytes);
            }
        }
    }
    let err = rung(LadderKind::StatementLength, 10)
        .validate()
        .unwrap_err();
    assert_eq!(err.field, "value");
}

#[test]
fn like_pattern_is_exact_in_bytes() {
    for text in [TextKind::Ascii, TextKind::Multibyte] {
        let r = with(rung(LadderKind::LikePattern, 51), |h| h.text = Some(text));
        let plan = plan(&r);
        let sql = &plan.calls[0].statements()[0].sql;
        let pattern = sql.split('\'').nth(3).unwrap();
        assert_eq!(pattern.len(), 51, "{sql}");
        assert!(pattern.ends_with('%'));
    }
}

#[test]
fn json_payload_is_one_json_each_insert_of_exactly_n_bytes() {
    for bytes in [
        6, 7, 100_000, 100_001, 1_999_999, 2_000_000, 2_000_001, 8_388_641,
    ] {
        let r = rung(LadderKind::JsonPayload, bytes);
        r.validate().unwrap();
        let plan = plan(&r);
        assert_eq!(plan.prepare, ["CREATE TABLE r_7 (c0 TEXT)"]);
        let [Call::One(s)] = plan.calls.as_slice() else {
            panic!("one statement: {:?}", plan.calls.len())
        };
        assert_eq!(
            s.sql,
            "INSERT INTO r_7 (c0) SELECT value->>0 FROM json_each(?)"
        );
        let [Value::Text(json)] = s.params.as_slice() else {
            panic!("one bound text")
        };
        assert_eq!(json.len(), bytes);
        let parsed: Vec<Vec<String>> = serde_json::from_str(json).unwrap();
        assert_eq!(parsed.len(), s.rows, "{bytes}");
        assert_eq!(s.rows, bytes.div_ceil(JSON_PAYLOAD_ROW_BYTES).max(1));
        assert!(parsed.iter().all(|row| row.len() == 1
            && row[0].len() <= JSON_PAYLOAD_ROW_BYTES
            && row[0].bytes().all(|b| b == b'x')));
    }
    assert_eq!(json_payload(6), r#"[[""]]"#);
    assert_eq!(json_payload(8), r#"[["xx"]]"#);
    let err = rung(LadderKind::JsonPayload, 5).validate().unwrap_err();
    assert_eq!(err.field, "value");
    assert!(err.message.contains("json-payload takes 6 to"), "{err}");
    let err = with(rung(LadderKind::JsonPayload, 100), |h| {
        h.text = Some(TextKind::Ascii)
    })
    .validate()
    .unwrap_err();
    assert_eq!(err.field, "held.text");
}

#[test]
fn columns_measures_the_create_table_itself() {
    let plan = plan(&rung(LadderKind::Columns, 101));
    assert!(plan.prepare.is_empty());
    assert_eq!(plan.calls.len(), 2);
    assert!(
        plan.calls[0].statements()[0]
            .sql
            .starts_with("CREATE TABLE r_7 (c0 TEXT")
    );
    assert_eq!(plan.rows(), 1);
}

#[test]
fn bad_rungs_name_their_field() {
    let cases = [
        (rung(LadderKind::QueryBudget, 0), "value"),
        (rung(LadderKind::FunctionArgs, 1), "value"),
        (rung(LadderKind::ParamCeiling, 5), "held.columns"),
        (
            with(rung(LadderKind::ParamCeiling, 5), |h| h.columns = Some(101)),
            "held.columns",
        ),
        (
            with(rung(LadderKind::ParamCeiling, 20_000), |h| {
                h.columns = Some(100)
            }),
            "value",
        ),
        (
            with(rung(LadderKind::QueryBudget, 5), |h| h.columns = Some(3)),
            "held.columns",
        ),
        (rung(LadderKind::BatchAccounting, 5), "held.mode"),
        (
            with(rung(LadderKind::BatchAccounting, 5), |h| {
                h.mode = Some(CallMode::Batches)
            }),
            "held.batches",
        ),
        (
            with(rung(LadderKind::BatchAccounting, 5), |h| {
                h.mode = Some(CallMode::Batches);
                h.batches = Some(6)
            }),
            "held.batches",
        ),
        (rung(LadderKind::QueryDuration, 5), "held.steps-per-ms"),
        (rung(LadderKind::RowSize, 64 * 1024 * 1024 + 1), "value"),
    ];
    for (r, field) in cases {
        assert_eq!(r.validate().unwrap_err().field, field, "{r:?}");
    }
}

#[test]
fn unknown_json_fields_are_rejected() {
    let err = serde_json::from_str::<RungCall>(
        r#"{"step":"climb","rung":{"rung_id":1,"ladder":"columns","value":3,"sql":"DROP TABLE x"}}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown field `sql`"), "{err}");
}

#[test]
fn a_tally_acknowledges_only_completed_calls() {
    let r = with(rung(LadderKind::BatchAccounting, 10), |h| {
        h.mode = Some(CallMode::Batches);
        h.batches = Some(2)
    });
    let plan = plan(&r);
    let mut tally = Tally::default();
    tally.succeeded(1.5);
    tally.failed("D1_ERROR: Too many API requests by single Worker invocation.".into());
    let result = tally.into_result(7, &plan, 3.0);
    assert_eq!(result.calls_completed, 1);
    assert_eq!(result.statements_completed, 5);
    assert_eq!(result.rows_acknowledged, 5);
    assert_eq!(result.outcome, Outcome::Refused);
    assert_eq!(result.refusal, Some(RefusalKind::QueryBudget));
    let (outcome, kind) = classify(Some("D1_ERROR: no such table: t_9: SQLITE_ERROR"));
    assert_eq!((outcome, kind), (Outcome::Error, Some(RefusalKind::Other)));
    // A lost connection is one of D1's documented refusals (D1 says retry), no longer an error.
    let (outcome, kind) = classify(Some("Network connection lost."));
    assert_eq!(
        (outcome, kind),
        (Outcome::Refused, Some(RefusalKind::NetworkLost))
    );
}

#[test]
fn time_ladders_expect_d1s_clock_and_other_stops_are_told_apart() {
    for ladder in [LadderKind::BatchCeiling, LadderKind::QueryDuration] {
        assert_eq!(ladder.expected_refusal(), Some(RefusalKind::QueryTimeout));
    }
    let refused = |text: &str| classify(Some(text));
    assert_eq!(
        refused(
            "D1_ERROR: D1 DB storage operation exceeded timeout which caused object to be reset."
        ),
        (Outcome::Refused, Some(RefusalKind::QueryTimeout))
    );
    assert_eq!(
        refused("Worker exceeded CPU time limit."),
        (Outcome::Refused, Some(RefusalKind::CpuTimeLimit))
    );
    assert_eq!(
        refused("D1_ERROR: D1 DB is overloaded. Too many requests queued."),
        (Outcome::Refused, Some(RefusalKind::Overloaded))
    );
}

/// The planned SQL runs on real SQLite and refuses where SQLite's limits say.
#[test]
fn plans_run_on_sqlite_and_refuse_at_the_limits() {
    use rusqlite::limits::Limit;
    let db = rusqlite::Connection::open_in_memory().unwrap();
    for (limit, value) in [
        (Limit::SQLITE_LIMIT_VARIABLE_NUMBER, 100),
        (Limit::SQLITE_LIMIT_SQL_LENGTH, 100_000),
        (Limit::SQLITE_LIMIT_COLUMN, 100),
        (Limit::SQLITE_LIMIT_FUNCTION_ARG, 32),
        (Limit::SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 50),
        (Limit::SQLITE_LIMIT_LENGTH, 2_000_000),
    ] {
        db.set_limit(limit, value).unwrap();
    }
    let run = |r: &RungRequest| -> Result<usize, String> {
        let plan = plan(r);
        for sql in &plan.prepare {
            db.execute(sql, []).unwrap();
        }
        let mut outcome = Ok(());
        'calls: for call in &plan.calls {
            for s in call.statements() {
                let params = s.params.iter().map(|v| match v {
                    Value::Integer(n) => rusqlite::types::Value::Integer(*n),
                    Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
                });
                if let Err(e) = db.execute(&s.sql, rusqlite::params_from_iter(params)) {
                    outcome = Err(e.to_string());
                    break 'calls;
                }
            }
        }
        let exists: usize = db.query_row(&plan.exists, [], |row| row.get(0)).unwrap();
        let rows = if exists == 1 {
            db.query_row(&plan.count, [], |row| row.get(0)).unwrap()
        } else {
            0
        };
        db.execute(&plan.teardown, []).unwrap();
        outcome.map(|()| rows)
    };
    let c8 = |rows| {
        with(rung(LadderKind::ParamCeiling, rows), |h| {
            h.columns = Some(8)
        })
    };
    assert_eq!(run(&c8(12)), Ok(12));
    assert!(run(&c8(13)).unwrap_err().contains("too many SQL variables"));
    let length = |bytes| {
        with(rung(LadderKind::StatementLength, bytes), |h| {
            h.text = Some(TextKind::Multibyte)
        })
    };
    assert_eq!(run(&length(100_000)), Ok(1));
    let err = run(&length(100_001)).unwrap_err();
    assert!(err.contains("too big") || err.contains("too long"), "{err}");
    assert_eq!(run(&rung(LadderKind::Columns, 100)), Ok(1));
    let err = run(&rung(LadderKind::Columns, 101)).unwrap_err();
    assert!(err.contains("too many columns"), "{err}");
    assert_eq!(run(&rung(LadderKind::FunctionArgs, 32)), Ok(1));
    assert!(
        run(&rung(LadderKind::FunctionArgs, 33))
            .unwrap_err()
            .contains("too many arguments on function max")
    );
    assert_eq!(run(&rung(LadderKind::LikePattern, 50)), Ok(1));
    assert!(
        run(&rung(LadderKind::LikePattern, 51))
            .unwrap_err()
            .contains("LIKE or GLOB pattern too complex")
    );
    // The payload is the string the limit counts: 2,000,000 bytes of JSON bind and unpack
    // into their 20 rows, one byte more is refused at the bind.
    assert_eq!(run(&rung(LadderKind::JsonPayload, 2_000_000)), Ok(20));
    let err = run(&rung(LadderKind::JsonPayload, 2_000_001)).unwrap_err();
    assert!(err.contains("too big"), "{err}");
    let duration = with(rung(LadderKind::QueryDuration, 2), |h| {
        h.steps_per_ms = Some(50)
    });
    assert_eq!(run(&duration), Ok(1));
    let query: i64 = db
        .query_row(
            &plan(&duration).calls[0].statements()[0]
                .sql
                .replace("INSERT INTO r_7 (c0) ", ""),
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(query, 100);
    // A result-size read answers exactly its bytes, in rows under the row limit.
    for bytes in [1, 999_999, 1_000_000, 1_000_001, 2_500_000] {
        let p = plan(&rung(LadderKind::ResultSize, bytes));
        let Call::Read(read) = &p.calls[0] else {
            panic!("result-size reads")
        };
        let mut stmt = db.prepare(&read.statement.sql).unwrap();
        let lengths: Vec<usize> = stmt
            .query_map([], |row| {
                row.get::<_, String>(RESULT_COLUMN).map(|t| t.len())
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(lengths.len(), read.rows, "{bytes}");
        assert_eq!(lengths.iter().sum::<usize>(), bytes, "{bytes}");
        assert!(lengths.iter().all(|&l| l <= RESULT_ROW_BYTES), "{bytes}");
    }
}

#[test]
fn result_size_plans_one_read_of_exactly_n_bytes_that_writes_nothing() {
    let p = plan(&rung(LadderKind::ResultSize, 52_428_800));
    assert_eq!(p.dispatch, Dispatch::InOrder);
    let [Call::Read(read)] = p.calls.as_slice() else {
        panic!("{:?}", p.calls)
    };
    assert_eq!((read.rows, read.bytes), (53, 52_428_800));
    assert!(
        read.statement.sql.contains("THEN 1000000 ELSE 428800 END"),
        "{}",
        read.statement.sql
    );
    assert_eq!(p.rows(), 0);
    assert_eq!(p.rows_read(), 53);
    assert!(p.reads());
    assert_eq!(p.result_bytes(1), 52_428_800);
    assert_eq!(p.result_bytes(0), 0);
    // The statement stays short whatever the result: it is never what a limit refuses.
    assert!(p.max_statement_bytes() < 200);
    assert_eq!(
        rung(LadderKind::ResultSize, 128 * 1024 * 1024).validate(),
        Ok(())
    );
    assert_eq!(
        rung(LadderKind::ResultSize, 128 * 1024 * 1024 + 1)
            .validate()
            .unwrap_err()
            .field,
        "value"
    );
}

#[test]
fn concurrent_calls_are_n_one_row_calls_sent_all_at_once() {
    let p = plan(&rung(LadderKind::ConcurrentCalls, 7));
    assert_eq!(p.dispatch, Dispatch::AllAtOnce);
    assert_eq!(p.calls.len(), 7);
    assert!(
        p.calls
            .iter()
            .all(|c| matches!(c, Call::One(s) if s.rows == 1))
    );
    assert!(!p.reads());
    // Any 5 of the 7 completing acknowledge 5 rows.
    assert_eq!(p.completed(5), (5, 5));
    // Every other ladder sends its calls in order.
    assert_eq!(
        plan(&rung(LadderKind::QueryBudget, 7)).dispatch,
        Dispatch::InOrder
    );
    assert!(!LadderKind::ConcurrentCalls.runs_on_sqlite());
    assert!(LadderKind::ResultSize.runs_on_sqlite());
    assert_eq!(
        rung(LadderKind::ConcurrentCalls, 1_001)
            .validate()
            .unwrap_err()
            .field,
        "value"
    );
}

#[test]
fn all_at_once_a_tally_counts_every_success_and_keeps_the_first_failure() {
    let p = plan(&rung(LadderKind::ConcurrentCalls, 4));
    let mut tally = Tally::default();
    tally.succeeded(0.5);
    tally.failed("D1_ERROR: first".into());
    tally.succeeded(0.5);
    tally.failed("D1_ERROR: second".into());
    let result = tally.into_result(7, &p, 2.0);
    assert_eq!(result.calls_completed, 2);
    assert_eq!(result.rows_acknowledged, 2);
    assert_eq!(result.error.as_deref(), Some("D1_ERROR: first"));
    assert_eq!(result.result_bytes, None);
    let read = plan(&rung(LadderKind::ResultSize, 10));
    let mut tally = Tally::default();
    tally.succeeded(0.0);
    tally.returned(10);
    assert_eq!(tally.into_result(7, &read, 1.0).result_bytes, Some(10));
}
