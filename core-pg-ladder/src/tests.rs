//! Tests of the Postgres rung plans and their validation: the SQL each ladder sends, exact
//! sizes, and Postgres's bounds where they differ from D1's.

use d1bench_core::ladder::{Call, Held, LadderKind, RungRequest, TextKind};

use super::*;

fn rung(ladder: LadderKind, value: usize, held: Held) -> RungRequest {
    RungRequest {
        rung_id: 7,
        ladder,
        value,
        held,
    }
}

fn one(plan: &RungPlan) -> &Statement {
    match plan.calls.as_slice() {
        [Call::One(s)] => s,
        other => panic!("expected one statement, got {other:?}"),
    }
}

#[test]
fn param_ceiling_binds_numbered_parameters_past_d1s_caps() {
    let held = Held {
        columns: Some(3),
        ..Held::default()
    };
    let r = rung(LadderKind::ParamCeiling, 2, held);
    validate(&r).unwrap();
    let plan = plan(&r);
    assert_eq!(
        plan.prepare,
        vec!["CREATE TABLE r_7 (c0 text, c1 text, c2 bigint)"]
    );
    let s = one(&plan);
    assert_eq!(
        s.sql,
        "INSERT INTO r_7 (c0,c1,c2) VALUES ($1,$2,$3),($4,$5,$6)"
    );
    assert_eq!(s.params.len(), 6);
    assert_eq!(s.rows, 2);
    // 65,536 rows of one column: past SQLite's 32,766 a rung, inside Postgres's.
    let at_one = Held {
        columns: Some(1),
        ..Held::default()
    };
    let r = rung(LadderKind::ParamCeiling, 65_536, at_one);
    validate(&r).unwrap();
    assert!(r.validate().is_err(), "the core's D1 cap refuses it");
    assert!(one(&plan_of(&r)).sql.ends_with(",($65536)"));
    // 1,600 columns is Postgres's table limit, not D1's 100.
    let wide = Held {
        columns: Some(1_600),
        ..Held::default()
    };
    validate(&rung(LadderKind::ParamCeiling, 10, wide)).unwrap();
    let too_wide = Held {
        columns: Some(1_601),
        ..Held::default()
    };
    assert_eq!(
        validate(&rung(LadderKind::ParamCeiling, 1, too_wide))
            .unwrap_err()
            .field,
        "held.columns"
    );
    let e = validate(&rung(LadderKind::ParamCeiling, 1_000, wide)).unwrap_err();
    assert_eq!(e.field, "value");
    assert!(e.to_string().contains("at most 262144"), "{e}");
    // The core's rules on held fields still hold.
    assert_eq!(
        validate(&rung(LadderKind::ParamCeiling, 1, Held::default()))
            .unwrap_err()
            .field,
        "held.columns"
    );
}

fn plan_of(r: &RungRequest) -> RungPlan {
    plan(r)
}

#[test]
fn sized_rungs_are_exactly_their_bytes() {
    for text in [TextKind::Ascii, TextKind::Multibyte] {
        let held = Held {
            text: Some(text),
            ..Held::default()
        };
        let p = plan(&rung(LadderKind::StatementLength, 100_001, held));
        assert_eq!(one(&p).sql.len(), 100_001);
        let p = plan(&rung(LadderKind::LikePattern, 51, held));
        let sql = &one(&p).sql;
        assert!(sql.ends_with("%')::int)"), "{sql}");
        let pattern = sql.rsplit_once(" LIKE '").unwrap().1;
        assert_eq!(pattern.len() - ")::int)".len() - 1, 51, "{sql}");
    }
    let p = plan(&rung(LadderKind::RowSize, 5, Held::default()));
    assert_eq!(one(&p).sql, "INSERT INTO r_7 (c0) VALUES ($1)");
    assert_eq!(one(&p).params, vec![Value::Text("xxxxx".into())]);
    let p = plan(&rung(LadderKind::JsonPayload, 250_000, Held::default()));
    match &one(&p).params[..] {
        [Value::Text(json)] => assert_eq!(json.len(), 250_000),
        other => panic!("{other:?}"),
    }
    assert_eq!(one(&p).rows, 3);
    assert!(one(&p).sql.contains("json_array_elements($1"));
}

#[test]
fn columns_function_args_and_result_size_use_postgres_sql() {
    let p = plan(&rung(LadderKind::Columns, 3, Held::default()));
    assert!(p.prepare.is_empty());
    let sql: Vec<&str> = p
        .calls
        .iter()
        .flat_map(|c| c.statements())
        .map(|s| s.sql.as_str())
        .collect();
    assert_eq!(
        sql,
        [
            "CREATE TABLE r_7 (c0 text, c1 text, c2 bigint)",
            "INSERT INTO r_7 VALUES ('x','x',2)"
        ]
    );
    let p = plan(&rung(LadderKind::FunctionArgs, 3, Held::default()));
    assert_eq!(
        one(&p).sql,
        "INSERT INTO r_7 (c0) VALUES (num_nonnulls(1, 2, 3))"
    );
    let p = plan(&rung(LadderKind::ResultSize, 2_500_000, Held::default()));
    match p.calls.as_slice() {
        [Call::Read(read)] => {
            assert_eq!((read.rows, read.bytes), (3, 2_500_000));
            assert!(read.statement.sql.contains("ELSE 500000 END"));
            assert!(read.statement.sql.contains("generate_series(1, 3)"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        p.exists,
        "SELECT COUNT(*) AS n FROM pg_tables WHERE tablename = 'r_7'"
    );
}

#[test]
fn the_runtimes_ladders_are_not_climbed_on_postgres() {
    for kind in LadderKind::ALL {
        let expected = !matches!(
            kind,
            LadderKind::QueryBudget
                | LadderKind::BatchAccounting
                | LadderKind::BatchCeiling
                | LadderKind::QueryDuration
                | LadderKind::ConcurrentCalls
        );
        assert_eq!(runs_on_postgres(kind), expected, "{kind}");
    }
    let e = validate(&rung(LadderKind::QueryBudget, 10, Held::default())).unwrap_err();
    assert_eq!(e.field, "ladder");
    assert!(
        plan(&rung(LadderKind::QueryBudget, 10, Held::default()))
            .calls
            .is_empty()
    );
}
