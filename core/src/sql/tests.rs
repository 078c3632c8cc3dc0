//! Tests of `sql.rs`, apart so that file holds only what it is for.

use super::*;
use crate::generate::TextMix;
use rusqlite::{Connection, params_from_iter, types::ValueRef};

fn probe(strategy: Strategy, columns: usize, rows: usize, row_bytes: usize) -> ProbeRequest {
    ProbeRequest {
        probe_id: 7,
        strategy,
        columns,
        rows,
        row_bytes,
        seed: 99,
        rows_per_statement: None,
        json_payload_bytes: None,
        text: TextMix::HOSTILE,
        indexes: 0,
        debug_corrupt: None,
        debug_slow_percent: None,
    }
}

/// Runs a plan against real SQLite with D1's statement and variable limits applied.
pub(crate) fn execute(plan: &Plan) -> Connection {
    let db = Connection::open_in_memory().unwrap();
    db.set_limit(
        rusqlite::limits::Limit::SQLITE_LIMIT_VARIABLE_NUMBER,
        MAX_BOUND_PARAMETERS as i32,
    )
    .unwrap();
    db.set_limit(
        rusqlite::limits::Limit::SQLITE_LIMIT_SQL_LENGTH,
        MAX_STATEMENT_BYTES as i32,
    )
    .unwrap();
    db.set_limit(
        rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
        MAX_STRING_BYTES as i32,
    )
    .unwrap();
    for sql in &plan.setup {
        db.execute(sql, []).unwrap();
    }
    for s in &plan.inserts {
        let params = s.params.iter().map(|v| match v {
            Value::Integer(n) => rusqlite::types::Value::Integer(*n),
            Value::Text(t) => rusqlite::types::Value::Text(t.clone()),
        });
        db.execute(&s.sql, params_from_iter(params)).unwrap();
    }
    db
}

/// Reads the table back in insertion order and compares every value with the generator's.
fn assert_round_trip(probe: &ProbeRequest, db: &Connection) {
    let generator = RowGenerator::new(probe.columns, probe.row_bytes, probe.seed, probe.text);
    let mut stmt = db
        .prepare(&format!("SELECT * FROM {} ORDER BY rowid", probe.table()))
        .unwrap();
    let mut rows = stmt.query([]).unwrap();
    let mut i = 0u64;
    while let Some(row) = rows.next().unwrap() {
        let expected = generator.row(i);
        for (j, want) in expected.iter().enumerate() {
            match (want, row.get_ref(j).unwrap()) {
                (Value::Integer(n), ValueRef::Integer(got)) => assert_eq!(*n, got),
                (Value::Text(s), ValueRef::Text(got)) => {
                    assert_eq!(s.as_bytes(), got, "row {i} column {j} differs")
                }
                (want, got) => panic!("row {i} column {j}: wanted {want:?}, got {got:?}"),
            }
        }
        i += 1;
    }
    assert_eq!(i as usize, probe.rows);
}

#[test]
fn literal_escaping_round_trips_hostile_text_byte_for_byte() {
    for columns in [1, 3, 10, 64] {
        for row_bytes in [24, 200, 3_000] {
            let p = probe(Strategy::Literal, columns, 60, row_bytes);
            let plan = plan(&p);
            assert_round_trip(&p, &execute(&plan));
        }
    }
}

#[test]
fn literal_escaping_of_each_awkward_character() {
    for text in [
        "",
        "'",
        "''",
        "it's",
        "\\",
        "\\'",
        "a\nb",
        "\0",
        "x\0'y",
        "é日🦀",
        "--",
        "'; DROP TABLE t; --",
    ] {
        let mut sql = String::from("SELECT ");
        push_literal(&mut sql, &Value::Text(text.into()));
        let db = Connection::open_in_memory().unwrap();
        let got: String = db.query_row(&sql, [], |r| r.get(0)).unwrap();
        assert_eq!(got, text, "{sql}");
    }
}

#[test]
fn bound_values_travel_as_json_that_parses_back_to_the_same_values() {
    let generator = RowGenerator::new(7, 600, 3, TextMix::HOSTILE);
    let mut values: Vec<Value> = (0..40).flat_map(|i| generator.row(i)).collect();
    values
        .extend(["", "\"", "\\", "\u{1}\u{1f}\u{7f}", "é\0日\"🦀"].map(|s| Value::Text(s.into())));
    values.extend([i64::from(i32::MIN), -(1 << 53) + 1, (1 << 53) - 1, 0].map(Value::Integer));
    let statement = |params: &[Value]| Statement {
        sql: String::new(),
        params: params.to_vec(),
        rows: 1,
    };
    let statements = [
        statement(&values[..100]),
        statement(&[]),
        statement(&values[100..]),
    ];
    let parsed: Vec<Vec<serde_json::Value>> =
        serde_json::from_str(&values_json(&statements)).unwrap();
    assert_eq!(parsed.len(), 3);
    for (statement, parsed) in statements.iter().zip(&parsed) {
        assert_eq!(parsed.len(), statement.params.len());
        for (value, parsed) in statement.params.iter().zip(parsed) {
            match value {
                Value::Integer(n) => assert_eq!(parsed.as_i64(), Some(*n)),
                Value::Text(s) => assert_eq!(parsed.as_str(), Some(s.as_str())),
            }
        }
    }
    assert_eq!(values_json(&[]), "[]");
    assert_eq!(
        values_json(&[statement(&[
            Value::Integer(-3),
            Value::Text("a\"b\n".into())
        ])]),
        r#"[[-3,"a\"b\u000a"]]"#
    );
}

/// Hostile texts, each alone: what a JSON string encoder gets wrong.
const AWKWARD: [&str; 16] = [
    "",
    "\"",
    "\\",
    "\\\"",
    "\\u0000",
    "'",
    "\0",
    "a\0b\0",
    "\u{1}\u{8}\t\n\u{b}\u{c}\r\u{1f}",
    "\u{7f}",
    "é日🦀𝄞",
    "\u{2028}\u{2029}",
    "\u{feff}x",
    "]},[\"",
    "/</script>",
    "%_'; DROP TABLE t; --",
];

#[test]
fn json_strings_read_back_through_sqlite_byte_for_byte_and_as_text() {
    let db = Connection::open_in_memory().unwrap();
    for text in AWKWARD {
        let mut json = String::from("[");
        push_json_string(&mut json, text);
        json.push(']');
        let (valid, kind, got): (i64, String, Vec<u8>) = db
            .query_row(
                "SELECT json_valid(?1), typeof(?1->>0), CAST(?1->>0 AS BLOB)",
                [&json],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(valid, 1, "{json:?} is not JSON to SQLite");
        assert_eq!(kind, "text", "{json:?}");
        assert_eq!(got, text.as_bytes(), "{json:?} reads back other bytes");
        // The same text through json_each, as the json strategy reads it.
        let got: Vec<u8> = db
            .query_row(
                "SELECT CAST(value->>0 AS BLOB) FROM json_each(?)",
                [format!("[{json}]")],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(got, text.as_bytes(), "{json:?} through json_each");
    }
}

#[test]
fn json_integers_read_back_as_integers() {
    let db = Connection::open_in_memory().unwrap();
    for n in [0, -1, 1, i64::from(i32::MIN), -(1 << 53) + 1, (1 << 53) - 1] {
        let mut json = String::new();
        push_json_row(&mut json, &[Value::Integer(n)]);
        let (kind, got): (String, i64) = db
            .query_row("SELECT typeof(?1->>0), ?1->>0", [&json], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        assert_eq!((kind.as_str(), got), ("integer", n), "{json}");
    }
}

#[test]
fn json_round_trips_hostile_rows_with_their_types() {
    for columns in [1, 2, 3, 10, 64, 100] {
        for row_bytes in [300, 3_000] {
            let p = probe(Strategy::Json, columns, 70, row_bytes);
            let plan = plan(&p);
            assert_eq!(plan.inserts.len(), 1, "70 small rows fit one payload");
            assert_eq!(plan.inserts[0].params.len(), 1, "one parameter");
            assert_round_trip(&p, &execute(&plan));
        }
    }
}

#[test]
fn json_fills_payloads_up_to_the_documented_string_limit_and_no_further() {
    // 10 MB of 1,000-byte rows, hostile text: several payloads, each within 2,000,000 bytes
    // and within one row of it.
    let p = probe(Strategy::Json, 8, 10_000, 1_000);
    let plan = plan(&p);
    assert_eq!(plan.rows(), 10_000);
    assert!(plan.inserts.len() > 2, "{} payloads", plan.inserts.len());
    let biggest_row = 1_000 * 8;
    for (k, s) in plan.inserts.iter().enumerate() {
        let Value::Text(payload) = &s.params[0] else {
            panic!("a json payload is text")
        };
        assert!(payload.len() <= MAX_STRING_BYTES, "payload {k}");
        if k + 1 < plan.inserts.len() {
            assert!(
                payload.len() + biggest_row > MAX_STRING_BYTES,
                "payload {k} short"
            );
        }
        assert!(s.sql.len() < 1_000, "the SQL text stays small");
    }
    assert_round_trip(&p, &execute(&plan));
    // A lower cap and a fixed count are both honoured.
    let mut capped = p.clone();
    capped.json_payload_bytes = Some(100_000);
    for s in &super::plan(&capped).inserts {
        let Value::Text(payload) = &s.params[0] else {
            unreachable!()
        };
        assert!(payload.len() <= 100_000);
    }
    let mut fixed = probe(Strategy::Json, 4, 95, 50);
    fixed.rows_per_statement = Some(20);
    assert_eq!(
        super::plan(&fixed)
            .inserts
            .iter()
            .map(|s| s.rows)
            .collect::<Vec<_>>(),
        [20, 20, 20, 20, 15]
    );
}

#[test]
fn a_json_row_past_the_string_limit_is_planned_alone_and_sqlite_refuses_it() {
    let p = probe(Strategy::Json, 1, 2, 1_999_999);
    let plan = plan(&p);
    assert_eq!(plan.inserts.len(), 2);
    let db = Connection::open_in_memory().unwrap();
    db.set_limit(
        rusqlite::limits::Limit::SQLITE_LIMIT_LENGTH,
        MAX_STRING_BYTES as i32,
    )
    .unwrap();
    db.execute(&plan.setup[1], []).unwrap();
    let Value::Text(payload) = &plan.inserts[0].params[0] else {
        unreachable!()
    };
    let err = db
        .execute(&plan.inserts[0].sql, [payload])
        .unwrap_err()
        .to_string();
    assert!(err.contains("too big"), "{err}");
}

#[test]
fn the_wall_of_each_strategy_is_the_limit_its_first_row_meets() {
    let wall_of = |strategy, columns, row_bytes| {
        let mut p = probe(strategy, columns, 10, row_bytes);
        p.text = TextMix::default();
        wall(&p).map(|w| w.refusal)
    };
    for strategy in Strategy::ALL {
        assert_eq!(wall_of(strategy, 8, 1_000), None, "{strategy}");
        assert_eq!(
            wall_of(strategy, 4, 2_000_001),
            Some(RefusalKind::StringOrBlobTooBig),
            "{strategy}"
        );
    }
    // One literal row of 99,950 payload bytes and its SQL pass 100,000 bytes.
    for strategy in [Strategy::Literal, Strategy::Exec] {
        assert_eq!(
            wall_of(strategy, 4, 99_950),
            Some(RefusalKind::StatementTooLong)
        );
        assert_eq!(wall_of(strategy, 4, 99_000), None);
    }
    for strategy in [Strategy::Bound, Strategy::Json, Strategy::BatchedRows] {
        assert_eq!(wall_of(strategy, 4, 1_000_000), None, "{strategy}");
    }
    // A json row's text near 2,000,000 bytes: its quotes and brackets pass the string limit.
    assert_eq!(
        wall_of(Strategy::Json, 1, 1_999_999),
        Some(RefusalKind::StringOrBlobTooBig)
    );
    assert_eq!(wall_of(Strategy::Bound, 1, 1_999_999), None);
}

#[test]
fn batched_rows_write_one_row_per_statement_and_round_trip() {
    let p = probe(Strategy::BatchedRows, 7, 45, 300);
    let plan = plan(&p);
    assert_eq!(plan.inserts.len(), 45);
    assert_eq!(plan.rows_per_statement(), 1);
    assert_round_trip(&p, &execute(&plan));
}

#[test]
fn exec_statements_are_one_line_each_and_the_script_round_trips() {
    for columns in [1, 3, 10, 64] {
        let p = probe(Strategy::Exec, columns, 300, 1_000);
        let plan = plan(&p);
        assert!(plan.inserts.len() > 1);
        for s in &plan.inserts {
            assert!(
                !s.sql.contains('\n'),
                "an exec statement holds a line break"
            );
            assert!(s.sql.len() <= MAX_STATEMENT_BYTES);
            assert!(s.params.is_empty());
        }
        let script = exec_script(&plan.inserts);
        assert_eq!(script.lines().count(), plan.inserts.len());
        // As D1 runs it: line by line, in one transaction.
        let db = execute(&Plan {
            inserts: Vec::new(),
            ..plan.clone()
        });
        db.execute_batch("BEGIN").unwrap();
        for line in script.split('\n') {
            db.execute(line, []).unwrap();
        }
        db.execute_batch("COMMIT").unwrap();
        assert_round_trip(&p, &db);
        assert_eq!(rows_of_first(&plan.inserts, plan.inserts.len()), 300);
        assert_eq!(rows_of_first(&plan.inserts, 1), plan.inserts[0].rows);
    }
}

#[test]
fn bound_and_per_row_round_trip() {
    for strategy in [Strategy::Bound, Strategy::PerRow] {
        let p = probe(strategy, 7, 45, 300);
        assert_round_trip(&p, &execute(&plan(&p)));
    }
}

#[test]
fn bound_carries_floor_100_over_c_rows_and_never_more_than_100_parameters() {
    for columns in [1, 2, 3, 8, 33, 34, 50, 51, 64, 100] {
        let p = probe(Strategy::Bound, columns, 250, 100);
        let plan = plan(&p);
        assert_eq!(plan.rows_per_statement(), 100 / columns, "C={columns}");
        assert_eq!(plan.rows(), 250);
        assert_eq!(plan.inserts.len(), 250usize.div_ceil(100 / columns));
        for s in &plan.inserts {
            assert!(s.params.len() <= MAX_BOUND_PARAMETERS);
            assert_eq!(s.params.len(), s.rows * columns);
            assert_eq!(s.sql.matches('?').count(), s.params.len());
        }
    }
}

#[test]
fn literal_fills_statements_up_to_the_limit_and_no_further() {
    let p = probe(Strategy::Literal, 10, 3_000, 500);
    let plan = plan(&p);
    assert_eq!(plan.rows(), 3_000);
    assert!(plan.inserts.len() > 1);
    for (k, s) in plan.inserts.iter().enumerate() {
        assert!(s.sql.len() <= MAX_STATEMENT_BYTES);
        assert!(s.params.is_empty());
        if k + 1 < plan.inserts.len() {
            // Greedy: the next row would not have fitted (rows are all alike in size, give or
            // take escaping, so a full statement is within one row of the limit).
            assert!(
                s.sql.len() + 2 * 1_200 > MAX_STATEMENT_BYTES,
                "statement {k} is only {} bytes",
                s.sql.len()
            );
        }
    }
}

#[test]
fn a_literal_row_past_the_limit_is_still_planned_alone() {
    let p = probe(Strategy::Literal, 4, 3, 120_000);
    let plan = plan(&p);
    assert_eq!(plan.inserts.len(), 3);
    assert!(plan.max_statement_bytes() > MAX_STATEMENT_BYTES);
}

#[test]
fn override_sets_rows_per_statement() {
    let mut p = probe(Strategy::Bound, 10, 95, 50);
    p.rows_per_statement = Some(11);
    let bound = plan(&p);
    assert_eq!(bound.rows_per_statement(), 11);
    assert_eq!(bound.inserts.len(), 9);
    p.strategy = Strategy::Literal;
    p.rows_per_statement = Some(20);
    let literal = plan(&p);
    assert_eq!(
        literal.inserts.iter().map(|s| s.rows).collect::<Vec<_>>(),
        [20, 20, 20, 20, 15]
    );
}

#[test]
fn indexes_are_created_with_the_table_and_rows_still_round_trip() {
    let mut p = probe(Strategy::Literal, 5, 40, 100);
    p.indexes = 3;
    let plan = plan(&p);
    assert_eq!(
        &plan.setup[2..],
        [
            "CREATE INDEX t_7_i0 ON t_7 (c0)",
            "CREATE INDEX t_7_i1 ON t_7 (c1)",
            "CREATE INDEX t_7_i2 ON t_7 (c2)"
        ]
    );
    let db = execute(&plan);
    let indexes: i64 = db
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 't_7'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexes, 3);
    assert_round_trip(&p, &db);
    assert_eq!(plan.corrupt, None, "no corruption unless asked for");
}

#[test]
fn the_swap_corruptions_swap_exactly_the_values_they_name() {
    let text = |s: &Value| match s {
        Value::Text(s) => s.clone(),
        Value::Integer(_) => unreachable!("columns 0 and 1 are text"),
    };
    for (corruption, want) in [
        (Corruption::SwapRows, [[(1, 0), (0, 1)], [(0, 0), (1, 1)]]),
        (
            Corruption::SwapColumns,
            [[(0, 1), (0, 0)], [(1, 0), (1, 1)]],
        ),
    ] {
        let mut p = probe(Strategy::Bound, 4, 5, 100);
        p.debug_corrupt = Some(corruption);
        let plan = plan(&p);
        let db = execute(&plan);
        // Indexes on the swapped columns must not change what the UPDATE sees.
        db.execute_batch(&create_indexes(&p.table(), 2).join(";"))
            .unwrap();
        let changed = db.execute(plan.corrupt.as_deref().unwrap(), []).unwrap();
        assert_eq!(changed, corruption.rows_changed());
        let generator = RowGenerator::new(p.columns, p.row_bytes, p.seed, p.text);
        let rows: Vec<Vec<Value>> = (0..2).map(|i| generator.row(i)).collect();
        let mut stmt = db
            .prepare("SELECT c0, c1 FROM t_7 ORDER BY rowid LIMIT 2")
            .unwrap();
        let got: Vec<[String; 2]> = stmt
            .query_map([], |r| Ok([r.get(0)?, r.get(1)?]))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        // Row r, column c now holds generated row want[r][c].0, column want[r][c].1.
        for (r, row) in want.iter().enumerate() {
            for (c, &(from_row, from_column)) in row.iter().enumerate() {
                assert_eq!(
                    got[r][c],
                    text(&rows[from_row][from_column]),
                    "{corruption:?}: row {r} column {c}"
                );
            }
        }
        assert_ne!(rows[0][0], rows[1][0], "the swap changes something");
        assert_ne!(rows[0][0], rows[0][1], "the swap changes something");
    }
}

#[test]
fn create_table_types_follow_the_generator() {
    assert_eq!(
        create_table("t_1", 4),
        "CREATE TABLE t_1 (c0 TEXT, c1 TEXT, c2 INTEGER, c3 TEXT)"
    );
}
