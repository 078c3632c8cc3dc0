//! The Postgres plan's shape against its limits; the SQL itself is run against a real server by
//! the xtask's cluster tests (`targets/hyperdrive/cluster.rs`).

use d1bench_core::{Strategy, TextMix, Value};

use super::*;
use crate::testing::probe;

#[test]
fn bound_statements_number_their_parameters_up_to_postgres_limit() {
    let plan = plan(&probe(Strategy::Bound, 3, 5));
    assert_eq!(
        plan.inserts.len(),
        1,
        "5 rows of 3 columns fit one statement"
    );
    let statement = &plan.inserts[0];
    assert_eq!(statement.rows, 5);
    assert_eq!(statement.params.len(), 15);
    assert!(
        statement
            .sql
            .starts_with("INSERT INTO t_7 (c0,c1,c2) VALUES ($1,$2,$3),($4,$5,$6)")
    );
    assert!(statement.sql.ends_with("($13,$14,$15)"));

    // 100 columns: 655 rows a statement, where D1 takes one.
    let plan = super::plan(&probe(Strategy::Bound, 100, 1_000));
    assert_eq!(plan.rows_per_statement(), 655);
    assert_eq!(plan.inserts.len(), 2);
    assert!(
        plan.inserts
            .iter()
            .all(|s| s.params.len() <= crate::limits::MAX_BOUND_PARAMETERS)
    );
}

#[test]
fn per_row_and_batched_rows_write_one_row_a_statement() {
    for strategy in [Strategy::PerRow, Strategy::BatchedRows] {
        let plan = plan(&probe(strategy, 4, 3));
        assert_eq!(plan.inserts.len(), 3);
        assert!(
            plan.inserts
                .iter()
                .all(|s| s.rows == 1 && s.sql.ends_with("($1,$2,$3,$4)"))
        );
    }
}

#[test]
fn literal_and_exec_put_every_row_in_one_statement_below_a_gigabyte() {
    for strategy in [Strategy::Literal, Strategy::Exec] {
        let plan = plan(&probe(strategy, 8, 500));
        assert_eq!(plan.inserts.len(), 1);
        assert_eq!(plan.rows_per_statement(), 500);
        assert!(plan.inserts[0].params.is_empty());
    }
    let mut fixed = probe(Strategy::Exec, 2, 5);
    fixed.rows_per_statement = Some(2);
    let plan = plan(&fixed);
    assert_eq!(
        plan.inserts.iter().map(|s| s.rows).collect::<Vec<_>>(),
        [2, 2, 1]
    );
    let script = exec_script(&plan.inserts);
    assert_eq!(script.matches(";\n").count(), 2);
}

#[test]
fn json_binds_the_cores_payload_and_casts_integers() {
    let plan = plan(&probe(Strategy::Json, 3, 4));
    assert_eq!(plan.inserts.len(), 1);
    let statement = &plan.inserts[0];
    assert_eq!(
        statement.sql,
        "INSERT INTO t_7 (c0,c1,c2) SELECT e->>0,e->>1,(e->>2)::bigint \
         FROM json_array_elements($1::text::json) AS e"
    );
    match &statement.params[..] {
        [Value::Text(payload)] => assert!(payload.starts_with("[[\"") && payload.ends_with("]]")),
        other => panic!("one payload, not {other:?}"),
    }
}

#[test]
fn literals_quote_like_standard_strings_and_name_a_nul() {
    let mut out = String::new();
    push_literal(&mut out, &Value::Text("it's a \\ path".into()));
    assert_eq!(out, "'it''s a \\ path'");
    out.clear();
    push_literal(&mut out, &Value::Text("a\0b".into()));
    assert_eq!(out, "convert_from('\\x610062'::bytea, 'UTF8')");
    out.clear();
    push_literal(&mut out, &Value::Integer(-42));
    assert_eq!(out, "-42");
}

#[test]
fn the_table_has_bigint_integers_and_the_verification_reads_pg_tables() {
    assert_eq!(
        create_table("t_1", 4),
        "CREATE TABLE t_1 (c0 text, c1 text, c2 bigint, c3 text)"
    );
    let v = verification(&probe(Strategy::Bound, 3, 1));
    assert!(v.exists.contains("tablename = 't_7'"), "{}", v.exists);
    assert_eq!(v.teardown, "DROP TABLE IF EXISTS t_7");
}

#[test]
fn copy_sends_every_row_in_one_text_format_stream() {
    let planned = plan(&probe(Strategy::Copy, 3, 4));
    assert_eq!(planned.inserts.len(), 1);
    let copy = &planned.inserts[0];
    assert_eq!(copy.sql, "COPY t_7 (c0,c1,c2) FROM STDIN");
    assert_eq!(copy.rows, 4);
    let [Value::Text(data)] = copy.params.as_slice() else {
        panic!("{:?}", copy.params)
    };
    let lines: Vec<&str> = data.split_terminator('\n').collect();
    assert_eq!(lines.len(), 4, "{data:?}");
    // Each line is its row's fields, tab-separated, in the generator's order.
    let generator = d1bench_core::RowGenerator::new(3, 100, 1, TextMix::default());
    for (i, line) in lines.iter().enumerate() {
        let mut expected = String::new();
        for (j, value) in generator.row(i as u64).iter().enumerate() {
            if j > 0 {
                expected.push('\t');
            }
            push_copy_field(&mut expected, value);
        }
        assert_eq!(*line, expected);
    }
    // A fixed size splits it, as every other strategy's statements split.
    let mut fixed = probe(Strategy::Copy, 3, 5);
    fixed.rows_per_statement = Some(2);
    let rows: Vec<usize> = plan(&fixed).inserts.iter().map(|s| s.rows).collect();
    assert_eq!(rows, [2, 2, 1]);
    assert!(
        binding_limit(Strategy::Copy, 100)
            .unwrap()
            .contains("COPY data stream")
    );
}

#[test]
fn copy_fields_escape_what_would_end_or_change_a_field() {
    let mut out = String::new();
    push_copy_field(&mut out, &Value::Text("a\\b\tc\nd\re\0f".into()));
    assert_eq!(out, r"a\\b\tc\nd\re\0f");
    out.clear();
    push_copy_field(&mut out, &Value::Integer(-9_007_199_254_740_991));
    assert_eq!(out, "-9007199254740991");
    out.clear();
    push_copy_field(&mut out, &Value::Text(String::new()));
    assert_eq!(
        out, "",
        "an empty text is an empty field (NULL would be \\N)"
    );
}
